"""Streaming ARFF writer.

Numbers are written in the shortest form that reads back to the same float64
(integers without a decimal point), or rounded as a :class:`NumberFormat` asks
(``--digits N``, ``--float32``); NaN is ``?``; labels, strings and names are
quoted where needed.  Sparse chunks are written as sparse rows unless dense
output is asked for, and the other way round; a sparse chunk written dense is
written a block of rows at a time, so its dense form never exists whole.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from itertools import compress
from typing import TYPE_CHECKING, BinaryIO, Iterable, Iterator, TextIO, cast

import numpy as np

from filterkit import kernels
from filterkit.arff.dates import DateFormat
from filterkit.arff.header import format_header
from filterkit.arff.limits import MOST_TABLED_LABELS
from filterkit.arff.tokens import quote, quote_all
from filterkit.errors import ArffError
from filterkit.limits import VARIABLES, Limits
from filterkit.schema import (
    DATE,
    NOMINAL,
    NUMERIC,
    RELATIONAL,
    Chunk,
    CsrArrays,
    Schema,
    positions_by_key,
    rows_of_entries,
)
from filterkit.text import shown

if TYPE_CHECKING:  # annotations only: numpy.typing is 0.5 ms of every start
    import numpy.typing as npt

#: A sparse chunk written as dense rows is written in blocks of about this many cells
#: (8 MiB of float64), not densified whole (10,000 rows x 13,000 words would be 1 GB).
_DENSE_BLOCK_CELLS = 1 << 20
#: Sparse rows are written in blocks of about this many entries, so that a write holds one
#: block's entry arrays and text (~80 bytes an entry, several times the chunk's own size),
#: not a whole chunk's.
_SPARSE_BLOCK_ENTRIES = 1 << 16


@dataclass(frozen=True)
class NumberFormat:
    """How numbers are written: exact by default (the shortest text that reads back to
    the same float64), or rounded (docs/algorithms.md §15).

    ``digits`` N (1 to 17): the value correctly rounded to N significant digits (half
    to even on an exact tie), written as the exact form writes that decimal's double;
    a value whose rounding would leave the double range is written exactly.
    ``float32``: the shortest decimal that reads back (to nearest) as the value's
    nearest float32, written the same way; a finite value beyond float32's range is
    written exactly.  ``--digits 17`` writes what the exact form writes.
    """

    digits: int | None = None
    float32: bool = False

    def __post_init__(self):
        if self.digits is not None and not 1 <= self.digits <= 17:
            raise ValueError(f"digits must be from 1 to 17, not {self.digits}")
        if self.digits is not None and self.float32:
            raise ValueError("digits and float32 exclude each other")

    @property
    def exact(self) -> bool:
        """Whether numbers are written exactly (``--digits 17`` is exact too)."""
        return not self.float32 and self.digits in (None, 17)

    @property
    def options(self) -> list[str]:
        """The command-line words that ask for this format: none for an exact one (``--digits
        17`` included, which writes the same bytes as no option)."""
        if self.exact:
            return []
        return ["--float32"] if self.float32 else ["--digits", str(self.digits)]


#: The default: every number written exactly.
EXACT = NumberFormat()

#: The largest finite float32.
_FLOAT32_MAX = float(np.finfo(np.float32).max)


def format_numbers(values: npt.ArrayLike, numbers: NumberFormat = EXACT) -> list[str]:
    """Shortest round-trip text of each float (rounded first as ``numbers`` asks), integers
    without a decimal point; NaN as ``?``; ±inf as Java's ``Infinity`` (the compiled printer's)."""
    values = np.ascontiguousarray(values, dtype=np.float64).ravel()
    if not len(values):
        return []
    bounds, none = np.array([0, len(values)], dtype=np.int64), np.zeros(0, dtype=np.int64)
    text = format_rows(
        bounds, none, values, np.zeros(len(values), np.uint8), [], False, numbers.digits or 0, numbers.float32
    )
    return text[:-1].decode("ascii").split(",")


def format_rows(
    indptr, columns, values, special, texts, sparse, digits=0, float32=False, into=None, weights=None, labels=None
):
    """The rows' entries as text (every writer's), by the compiled printer (``_speedups.format_rows``): numbers as
    :func:`format_numbers` writes them, where ``special`` is 1 the next of ``texts``, where it is 2 the entry's
    code's label in ``labels``; sparse ``{c v,c v}`` or dense ``v,v``; a weight that is not 1 as `` {w}``.  The
    text, or its length once put in the bytearray ``into``."""
    return kernels.speedups.format_rows(
        indptr, columns, values, special, texts, sparse, digits, float32, into, weights, labels
    )


def float32_decimal(value: float) -> float:
    """The double of the shortest decimal that reads back (rounded to the nearest float32)
    as the float32 ``value`` (held as a double): of two such decimals the nearer, the
    even one on an exact tie.  The compiled writer calls it where it cannot be sure."""
    from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, Context, Decimal, localcontext  # --float32 only

    magnitude = abs(value)
    if magnitude == 0 or magnitude > _FLOAT32_MAX:
        return value
    narrow = np.float32(magnitude)
    below = float(np.nextafter(narrow, np.float32(0)))
    with np.errstate(over="ignore"):  # the largest float32's upper neighbour is inf
        above = float(np.nextafter(narrow, np.float32(np.inf)))
    with localcontext() as context:
        context.prec = 200  # exact for every float32 and every midpoint between two
        exact = Decimal(magnitude)
        low = (Decimal(below) + exact) / 2
        # above the largest float32, the next one would be as far as the one below
        high = (Decimal(above) + exact) / 2 if np.isfinite(above) else exact + (exact - Decimal(below)) / 2
        inclusive = int(narrow.view(np.uint32)) % 2 == 0
        for digits in range(1, 10):
            for rounding in (ROUND_HALF_EVEN, ROUND_FLOOR, ROUND_CEILING):
                candidate = Context(prec=digits, rounding=rounding).plus(exact)
                if (low <= candidate <= high) if inclusive else (low < candidate < high):
                    return math.copysign(float(candidate), value)
    return value  # not reached: 9 digits always read back


class ArffWriter:
    """Writes a header, then chunks of rows, to a text stream or, as UTF-8, to a
    binary one (which spares the compiled formatter's bytes a decode and re-encode).

    ``sparse``: True or False forces the row form; None writes each chunk as it
    is stored (CSR chunks as sparse rows).  ``comments`` become ``%`` lines
    before ``@relation``.  ``numbers`` says how numeric values are written (instance
    weights are always written exactly).
    """

    #: how a label, string or date is quoted, and a missing value written, in a row
    _quote = staticmethod(quote)
    #: how a column's strings are quoted (as :attr:`_quote` quotes each; all at once where it can)
    _quote_all = staticmethod(quote_all)
    _missing = "?"
    #: whether the reader bounds records whose quoted values hold line ends, not lines (CSV; see
    #: :func:`refuse_long_lines`)
    _quoted_records = False

    def __init__(
        self,
        stream: TextIO | BinaryIO,
        schema: Schema,
        sparse: bool | None = None,
        comments=(),
        numbers: NumberFormat = EXACT,
    ):
        self.stream = stream
        self.numbers = numbers
        self._binary = isinstance(stream, (io.BufferedIOBase, io.RawIOBase))
        self.schema = schema
        self.sparse = sparse
        attributes, kinds = schema.attributes, schema.kinds()
        #: the texts of each nominal or date column's values (a numeric one's are its missing values)
        self._formatters = {
            i: _value_formatter(attributes[i], self._quote, self._missing)
            for i in schema.positions_of(NOMINAL, DATE).tolist()
        }
        self._text_columns = set(schema.text_columns())
        #: the nominal columns' labels as written, for the compiled printer (None past MOST_TABLED_LABELS)
        self._labels = _written_labels(schema, self._quote, self._missing)
        #: each column's entries' ``special`` flag for format_rows: 0 a number, 2 a nominal value (its label
        #: written by the compiled printer), 1 a text made here
        self._entry_kinds = np.ones(len(kinds), np.uint8)
        self._entry_kinds[kinds == NUMERIC] = 0
        if self._labels is not None:
            self._entry_kinds[kinds == NOMINAL] = 2
        #: whether a sparse chunk is tried as stored, each row checked as the compiled printer writes it (no
        #: text made here; left off after a chunk that is not, so no other chunk is formatted twice)
        self._try_as_stored = not (self._entry_kinds == 1).any() and self._missing == "?"
        #: where the compiled formatter writes each chunk's text, reused from chunk to chunk
        self._formatted = bytearray()
        #: the bounds of the reader, which every line written must keep (its header too)
        self._limits = Limits.from_environment()
        self._rows_written = 0
        header = self._header(list(comments))
        refuse_long_lines(header, self._limits.line_bytes, 1, "header line", self._quoted_records)
        self._emit(header)

    def _header(self, comments: list[str]) -> bytes:
        """The header as UTF-8, refused (ArffError) where the reader would refuse it: more bytes,
        attributes or labels in one attribute than its :class:`Limits` allow."""
        header = format_header(self.schema, comments)
        attributes = self.schema.attributes
        relational = [attributes[i] for i in self.schema.positions_of(RELATIONAL).tolist()]
        declared = len(attributes) + sum(_declared(attribute.members) for attribute in relational)
        most_labels = max((len(attributes[i].labels) for i in self.schema.positions_of(NOMINAL).tolist()), default=0)
        for count, bound, what in (
            (len(header), "header_bytes", "bytes of header"),
            (declared, "attributes", "attributes"),
            (most_labels, "labels", "labels in one attribute"),
        ):
            if count > getattr(self._limits, bound):
                raise ArffError(
                    f"the output would hold {count:,} {what}, more than the {getattr(self._limits, bound):,} "
                    f"filterkit reads back (set {VARIABLES[bound]} to allow more)"
                )
        return header

    def _emit(self, text: bytes | memoryview) -> None:
        if self._binary:
            cast(BinaryIO, self.stream).write(text)
        else:
            cast(TextIO, self.stream).write(str(text, "utf-8"))

    def write(self, chunk: Chunk) -> None:
        """Append the rows of ``chunk``; ArffError for a value the format cannot hold (a
        weight that is NaN, infinite or negative; a date outside the years 1 to 9999)."""
        sparse = chunk.is_sparse if self.sparse is None else self.sparse
        if chunk.weights is not None and not (np.isfinite(chunk.weights) & (chunk.weights >= 0)).all():
            bad = chunk.weights[~(np.isfinite(chunk.weights) & (chunk.weights >= 0))][0]
            raise ArffError(f"an instance weight of {bad!r} cannot be written (weights are finite and at least 0)")
        for start, stop in _row_blocks(chunk, sparse):
            self._write_rows(chunk if stop - start == chunk.n_rows else chunk.rows(start, stop), sparse)

    def _write_rows(self, chunk: Chunk, sparse: bool) -> None:
        digits = 0 if self.numbers.digits is None else self.numbers.digits
        weights = None if chunk.weights is None else np.ascontiguousarray(chunk.weights, np.float64)
        length = self._format_as_stored(chunk, sparse, digits, weights)
        if length is None:
            indptr, columns, values, special, texts = self._entries(chunk, sparse)
            arguments = (indptr, columns, values, special.view(np.uint8), texts, sparse, digits, self.numbers.float32)
            length = format_rows(*arguments, self._formatted, weights, self._labels)
        with memoryview(self._formatted) as formatted, formatted[:length] as text:
            refuse_long_lines(text, self._limits.line_bytes, self._rows_written + 1, "row", self._quoted_records)
            self._emit(text)
        self._rows_written += chunk.n_rows

    def _format_as_stored(self, chunk: Chunk, sparse: bool, digits: int, weights) -> int | None:
        """The length of the text of a sparse chunk written as it is stored, the common case, formatted into
        :attr:`_formatted` in the compiled printer's one pass (each row checked there, each entry's kind taken
        from its column's, each label found), where a pass flagged each entry, numpy looked for texts and two more
        passes counted the flags and found the labels; None where that is not how the chunk is written: its rows
        are then made so (:meth:`_entries`)."""
        if not (self._try_as_stored and sparse and chunk.is_sparse):
            return None
        stored = chunk.csr()
        indptr, columns, values = (
            np.ascontiguousarray(array, dtype)
            for array, dtype in ((stored.indptr, np.int64), (stored.indices, np.int64), (stored.data, np.float64))
        )
        length = kernels.speedups.format_rows(
            indptr, columns, values, self._entry_kinds, [], True, digits, self.numbers.float32,
            self._formatted, weights, self._labels, True,
        )  # fmt: skip
        self._try_as_stored = length is not None
        return length

    def _entries(self, chunk: Chunk, sparse: bool):
        """Each row's entries: ``(indptr, columns, values, special, texts)``.

        Row r holds entries ``indptr[r]:indptr[r+1]``; an entry is a number to
        format, or, where ``special`` is set, the next of ``texts`` (labels,
        strings and dates, already quoted).
        """
        if sparse:
            indptr, columns, values = _sparse_entries(chunk, self._text_columns)
        else:
            matrix = chunk.dense_values()
            n_columns = matrix.shape[1]
            values = np.ascontiguousarray(matrix, dtype=np.float64).ravel()
            columns = np.tile(np.arange(n_columns, dtype=np.int64), chunk.n_rows)
            indptr = np.arange(chunk.n_rows + 1, dtype=np.int64) * n_columns
        return self._with_texts(chunk, indptr, columns, values, self._entry_kinds[columns])

    def _with_texts(self, chunk: Chunk, indptr, columns, values, special):
        """:meth:`_entries`' result, given each entry's ``special`` flag from :attr:`_entry_kinds` (a writable
        uint8 array: a missing value written as another text than ? is made a text)."""
        if self._missing != "?":  # the compiled printer writes a missing number as ?: another missing text is made here
            special[np.isnan(values)] = 1
        special_entries = np.flatnonzero(special == 1)
        texts = np.empty(len(special_entries), dtype=object)
        if len(special_entries):
            rows_of = rows_of_entries(indptr, special_entries)
            special_columns = columns[special_entries]
            for column, at in positions_by_key(special_columns):
                texts[at] = self._column_texts(column, values[special_entries[at]], rows_of[at].tolist(), chunk)
        # (the arrays themselves where they already have the formatter's types and layout: nothing writes to them)
        return (
            indptr,
            np.ascontiguousarray(columns, np.int64),
            np.ascontiguousarray(values, np.float64),
            special,
            texts.tolist(),
        )

    def _column_texts(self, column: int, values: np.ndarray, rows: list[int], chunk: Chunk) -> list[str]:
        if column in self._text_columns:
            side = chunk.text[column]
            missing = np.isnan(values)
            if not missing.any():
                return self._quote_all([side[row] or "" for row in rows])
            texts = np.full(len(values), self._missing, dtype=object)
            texts[~missing] = self._quote_all([side[row] or "" for row in compress(rows, ~missing)])
            return texts.tolist()
        formatter = self._formatters.get(column)
        return [self._missing] * len(values) if formatter is None else formatter(values)


def _written_labels(schema: Schema, quote, missing: str):
    """Each nominal column's labels as written (quoted by ``quote``), in the order of their codes, then its
    ``missing`` value, for the compiled printer (``_speedups.Labels``): the texts the Python printer indexes
    (:func:`_value_formatter`).  None past :data:`MOST_TABLED_LABELS` labels in all, where Python writes them."""
    nominal = [(i, schema.attributes[i].labels) for i in schema.positions_of(NOMINAL).tolist()]
    if sum(len(labels) for _, labels in nominal) > MOST_TABLED_LABELS:
        return None
    columns = np.array([i for i, labels in nominal for _ in range(len(labels) + 1)], np.int64)
    written = [text.encode("utf-8") for _, labels in nominal for text in (*map(quote, labels), missing)]
    return kernels.speedups.Labels(columns, written, np.zeros(len(written)))


def _declared(attributes) -> int:
    """The attributes a header declares, as the reader counts them (a relational one's members too)."""
    return len(attributes) + sum(_declared(attribute.members) for attribute in attributes if attribute.members)


def refuse_long_lines(text: bytes | memoryview, line_bytes: int, first: int, what: str, quoted: bool = False) -> None:
    """ArffError, before ``text`` (lines each ended by LF) is written, when one of its lines is longer than
    ``line_bytes``, the reader's bound: ``what`` and ``first``, the number of its first line, name it.  Only
    a text longer than the bound is looked into (the default bound is 64 MiB, a block of rows ~1 MiB).

    ``quoted``: ``text`` is CSV records, which the CSV reader bounds whole, line ends in double-quoted values
    included: an LF ends a record only where an even number of ``"`` stand before it (every ``"`` the CSV writer
    writes opens or closes a quoted value or is doubled in one)."""
    if len(text) <= line_bytes:
        return
    data = np.frombuffer(text, np.uint8)
    ends = np.flatnonzero(data == ord("\n"))
    if quoted:
        quotes = np.flatnonzero(data == ord('"'))
        ends = ends[np.searchsorted(quotes, ends) % 2 == 0]
    lengths = np.diff(ends, prepend=-1) - 1
    longest = int(np.argmax(lengths))
    if lengths[longest] > line_bytes:
        start = int(ends[longest] - lengths[longest])
        line = bytes(text[start : start + 40]).decode("utf-8", "replace")
        held = "a row" if quoted else "a line"
        raise ArffError(
            f"{what} {first + longest:,} of the output ({shown(line + '…')}) would be {int(lengths[longest]):,} "
            f"bytes long, more than the {line_bytes:,} {held} filterkit reads back may hold "
            f"(set {VARIABLES['line_bytes']} to allow more)"
        )


def _row_blocks(chunk: Chunk, sparse: bool) -> Iterator[tuple[int, int]]:
    """The rows of ``chunk`` as ``(start, stop)`` blocks, each written on its own: a
    sparse chunk's of at most about :data:`_SPARSE_BLOCK_ENTRIES` stored values as
    sparse rows or :data:`_DENSE_BLOCK_CELLS` cells as dense rows (a row is never
    split); a dense chunk, whose cells are already held, whole."""
    if not chunk.is_sparse:
        yield 0, chunk.n_rows
        return
    if sparse:
        ends_of_rows, block = chunk.csr().indptr, _SPARSE_BLOCK_ENTRIES
    else:
        ends_of_rows, block = np.arange(chunk.n_rows + 1), _DENSE_BLOCK_CELLS // max(1, chunk.shape[1])
    start = 0
    while start < chunk.n_rows:
        stop = int(np.searchsorted(ends_of_rows, ends_of_rows[start] + block, side="right")) - 1
        stop = min(max(stop, start + 1), chunk.n_rows)
        yield start, stop
        start = stop


def _sparse_entries(chunk: Chunk, text_columns) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where each row's entries start (int64, one more than the rows), and the column
    and value of every entry a sparse row must show, in row order.

    These are the non-zero values (NaN included) and every present string,
    the empty one included: a string cell holds 0 in the matrix, and Weka 3.6
    reads an omitted string as its placeholder '*WEKA*DUMMY*STRING*FOR*STRING*ATTRIBUTES*',
    not as "".
    """
    text_rows = [(r, c) for c in text_columns for r, t in enumerate(chunk.text[c]) if t is not None]
    if chunk.is_sparse:
        matrix = chunk.csr()
        if not _canonical(matrix):
            canonical = chunk.values.tocsr(copy=True)
            canonical.sum_duplicates()
            matrix = CsrArrays(canonical.data, canonical.indices, canonical.indptr, canonical.shape)
        keep = matrix.data != 0
        if keep.all() and not text_rows:
            return (
                np.ascontiguousarray(matrix.indptr, np.int64),
                np.ascontiguousarray(matrix.indices, np.int64),
                matrix.data,
            )
        rows = np.repeat(np.arange(chunk.n_rows, dtype=np.int64), np.diff(matrix.indptr))[keep]
        columns, values = np.asarray(matrix.indices, dtype=np.int64)[keep], np.asarray(matrix.data)[keep]
    else:
        rows, columns = (np.asarray(found, dtype=np.int64) for found in np.nonzero(chunk.values))
        values = chunk.values[rows, columns]
    if text_rows:
        extra_rows, extra_columns = np.array(text_rows, dtype=np.int64).T
        rows, columns = np.concatenate([rows, extra_rows]), np.concatenate([columns, extra_columns])
        values = np.concatenate([values, np.zeros(len(extra_rows))])
        order = np.lexsort((columns, rows))
        rows, columns, values = rows[order], columns[order], values[order]
    return np.searchsorted(rows, np.arange(chunk.n_rows + 1)).astype(np.int64), columns, values


def _canonical(rows: CsrArrays) -> bool:
    """Whether each row's column indices rise strictly (sorted, no duplicates), as a sparse row
    is written; only a chunk that a stage made by hand can break this."""
    indices = np.asarray(rows.indices)
    rising = indices[1:] > indices[:-1]
    row_starts = np.asarray(rows.indptr)[1:-1]
    rising[row_starts[(row_starts > 0) & (row_starts < len(indices))] - 1] = True
    return bool(rising.all())


def _value_formatter(attribute, quote, missing: str):
    """The texts of a nominal or date column's values, quoted by ``quote``, ``missing`` for NaN."""
    if attribute.kind == NOMINAL:
        labels = np.array([quote(label) for label in attribute.labels] + [missing], dtype=object)

        def nominal(values: np.ndarray) -> list[str]:
            bad = ~(np.isnan(values) | ((values > -len(labels) - 1) & (values < len(labels))))
            if bad.any():  # as the compiled printer refuses it (numpy raised an IndexError, with a warning for inf)
                raise ValueError(f"a value of attribute {shown(attribute.name)} is no label's code: {values[bad][0]!r}")
            codes = np.where(np.isnan(values), len(labels) - 1, values).astype(np.int64)
            return labels[codes].tolist()

        return nominal
    date_format = DateFormat(attribute.date_format)

    def date(values: np.ndarray) -> list[str]:
        try:
            return [missing if v != v else quote(date_format.format(v)) for v in values.tolist()]
        except ArffError as error:
            raise ArffError(f"attribute {shown(attribute.name)}: {error.message}") from None

    return date


def write_arff(
    stream: TextIO | BinaryIO,
    schema: Schema,
    chunks: Iterable[Chunk],
    sparse: bool | None = None,
    comments=(),
    numbers: NumberFormat = EXACT,
) -> None:
    """Write a whole ARFF document: header and every chunk."""
    writer = ArffWriter(stream, schema, sparse, comments, numbers)
    for chunk in chunks:
        writer.write(chunk)
