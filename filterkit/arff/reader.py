"""Streaming ARFF reader: a header, then chunks of at most ``chunk_rows`` rows.

The compiled module (``_speedups``) gathers the data rows a block at a time and parses a
group of rows without comments or weights in one pass without the GIL: sparse rows straight
into CSR arrays, dense rows tokenized, quoted values unescaped into a str each; Python touches
only tokens that need a lookup (nominal labels, strings, dates, ``?``).  Groups it declines are read
by the hand-written tokenizer, which also finds the line of any error (and reads every group with
:data:`filterkit.kernels.READING` off).
Memory is bounded by the chunk size (rows, and bytes of text), whatever the number
of rows; a line or a header longer than its bound is refused (filterkit.limits).
"""

from __future__ import annotations

import gzip
import io
import math
import os
import re
import unicodedata
import zlib
from collections import deque
from dataclasses import dataclass, field
from itertools import chain, compress
from typing import Any, BinaryIO, Iterator, cast

import numpy as np

try:  # hashlib's own blake2b, without hashlib, which loads OpenSSL too (3 ms of a run)
    from _blake2 import blake2b
except ImportError:  # a Python without CPython's private module
    from hashlib import blake2b

from filterkit import kernels
from filterkit.arff.dates import DateFormat
from filterkit.arff.header import HeaderParser
from filterkit.arff.limits import MOST_TABLED_LABELS
from filterkit.arff.tokens import CLOSE, OPEN, QUOTED, SEPARATORS, WORD, iter_tokens
from filterkit.errors import ArffError, folder_given
from filterkit.limits import VARIABLES, Limits
from filterkit.schema import (
    DATE,
    NOMINAL,
    NUMERIC,
    TEXT_KINDS,
    Chunk,
    RawTexts,
    Schema,
    collector_paused,
    concatenate,
    positions_by_key,
    shown_labels,
    without_zeros,
)
from filterkit.text import shown

DEFAULT_CHUNK_ROWS = 10_000
_BLOCK_BYTES = 1 << 20

#: Java's Double.valueOf, which Weka 3.6 reads numbers with: decimal or hexadecimal
#: (with a binary exponent), an optional float or double suffix, NaN and Infinity; ASCII only.
_JAVA_NUMBER = re.compile(
    r"[+-]?+(?:NaN|Infinity"
    r"|(?:(?:[0-9]++\.?+[0-9]*+|\.[0-9]++)(?:[eE][+-]?+[0-9]++)?+"
    r"|0[xX](?:[0-9a-fA-F]++\.?+[0-9a-fA-F]*+|\.[0-9a-fA-F]++)[pP][+-]?+[0-9]++)[fFdD]?+)"
)
#: What Java's String.trim removes (Double.valueOf trims): the characters up to the space.
JAVA_BLANKS = "".join(map(chr, range(33)))
#: A sparse index as Weka 3.6 reads it (Integer.parseInt): a sign and decimal digits,
#: any script's (str patterns' \d is Unicode's decimal digits, as Java's Character.isDigit).
_SPARSE_INDEX = re.compile(r"[+-]?+\d++")
#: A longer index (leading zeros aside) is beyond any attribute; int() is not asked.
_INDEX_DIGITS = 12


def open_source(source, name: str | None = None) -> tuple[BinaryIO, str]:
    """A binary stream for a path or stream, gunzipped when it starts with gzip's magic."""
    if isinstance(source, (str, os.PathLike)):
        if os.path.isdir(source):
            raise folder_given(os.fspath(source), "arff")
        stream: BinaryIO = open(source, "rb")
        label = name or os.fspath(source)
    else:
        stream = source
        label = name or getattr(source, "name", "<stream>")
    # a stream with peek() is used as it is (typing's BinaryIO declares no peek()), any other is buffered
    buffered: Any = stream if hasattr(stream, "peek") else io.BufferedReader(cast(io.RawIOBase, stream))
    if buffered.peek(2)[:2] == b"\x1f\x8b":
        buffered = gzip.GzipFile(fileobj=buffered, mode="rb")
    return buffered, str(label)


@dataclass(frozen=True)
class KnownHeader:
    """A header read before: its schema, how many lines it took, a digest of those
    lines, and the data after ``@data`` on its own line (if any)."""

    schema: Schema
    lines: int
    digest: bytes
    first_data: tuple[int, bytes] | None
    #: the parsers' per-column lookups of ``schema`` (made once, read-only), when known
    columns: Any = field(default=None, compare=False, repr=False)

    @classmethod
    def rows_only(cls, schema: Schema) -> "KnownHeader":
        """For a stream of data rows alone (a part of a file whose header was read before)."""
        return cls(schema, 0, blake2b(digest_size=16).digest(), None)


class ArffReader:
    """Reads an ARFF file or binary stream: ``.schema`` at once, then :meth:`chunks`.

    ``source`` is a path (plain or gzip-compressed) or a binary stream such as
    ``sys.stdin.buffer``; ``name`` is what errors call it.  ``known_header`` (a
    previous reader's ``header``) skips parsing the header again on another pass
    over the same file: its lines are only compared, by digest, with the first read.
    """

    def __init__(
        self,
        source,
        name: str | None = None,
        chunk_rows: int = DEFAULT_CHUNK_ROWS,
        known_header: KnownHeader | None = None,
        limits: Limits | None = None,
    ):
        if chunk_rows < 1:
            raise ValueError("chunk_rows must be at least 1")
        self.limits = Limits.from_environment() if limits is None else limits
        self.stream, self.name = open_source(source, name)
        self._owns_stream = isinstance(source, (str, os.PathLike))
        self.chunk_rows = chunk_rows
        self._lines = NumberedLines(line_blocks(self.stream, self.limits.line_bytes), self.name, self.limits.line_bytes)
        self._first_data: tuple[int, bytes] | None = None
        self._header_digest = blake2b(digest_size=16)
        self._header_lines = 0
        #: the ``%`` comment lines before ``@relation`` (earlier runs' provenance among them)
        self.header_comments: tuple[str, ...] = ()
        self.schema = self._read_header() if known_header is None else self._skip_header(known_header)
        known_columns = None if known_header is None else known_header.columns
        self._columns = _ColumnInfo(self.schema) if known_columns is None else known_columns
        self.header = KnownHeader(
            self.schema, self._header_lines, self._header_digest.digest(), self._first_data, self._columns
        )

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        """Close the underlying file when the reader opened it."""
        if self._owns_stream:
            self.stream.close()

    @collector_paused
    def _read_header(self) -> Schema:
        parser = HeaderParser(self.limits)
        line_number = 0
        #: the last line of a run of plain lines that is read line by line (one of them is an error)
        one_by_one_until = 0
        for line_number, raw in self._lines:
            self._header_lines = line_number
            self._header_digest.update(raw + b"\n")
            line = self._decode(raw, line_number)
            try:
                rest = parser.feed(line)
            except ArffError as error:
                raise error.located(self.name, line_number) from None
            if rest is not None:
                if rest.strip(SEPARATORS):
                    self._first_data = (line_number, rest.encode("utf-8"))
                self.header_comments = tuple(parser.comments)
                return parser.schema()
            if line_number >= one_by_one_until:
                one_by_one_until = self._take_plain_run(parser)
        if parser.relation is None:
            raise ArffError("empty input: no @relation line", self.name, 1)
        raise ArffError("the header has no @data line (the file ends on this line)", self.name, max(line_number, 1))

    def _take_plain_run(self, parser: HeaderParser) -> int:
        """Take the run of plain ``@attribute NAME numeric`` lines that follows in the current
        block at once (a wide header is mostly such lines: grain's 13,027 words), as
        :meth:`HeaderParser.feed_plain_run` does; 0, or the number of the run's last line
        when the run must be read line by line instead, so that the line of its error
        (not UTF-8, too long, too many bytes or attributes, a name declared twice) is named.
        """
        lines = self._lines
        start = lines._at
        end = parser.plain_run_end(lines._block, start)
        if end == start:
            return 0
        run = lines._block[start:end]
        count = run.count(b"\n")
        try:
            taken = len(run) <= lines.line_bytes and parser.feed_plain_run(run.decode("utf-8"), len(run))
        except UnicodeDecodeError:
            taken = False
        if not taken:
            return lines.line_number + count
        self._header_digest.update(run)
        lines._at = end
        lines.line_number += count
        self._header_lines = lines.line_number
        return 0

    def _skip_header(self, known: KnownHeader) -> Schema:
        """The known header's schema, after checking that this stream starts with it."""
        self._lines.skip(known.lines, self._header_digest)
        line_number = self._lines.line_number
        self._header_lines = line_number
        if line_number != known.lines or self._header_digest.digest() != known.digest:
            raise ArffError(
                f"the header (lines 1-{known.lines}) changed since the file was first read",
                self.name,
                max(line_number, 1),
            )
        self._first_data = known.first_data
        return known.schema

    def _decode(self, raw: bytes, line_number: int) -> str:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ArffError(
                f"not UTF-8 text ({error.reason} at byte {error.start + 1})", self.name, line_number
            ) from None

    def chunks(self) -> Iterator[Chunk]:
        """Yield the data rows as chunks of at most ``chunk_rows`` rows, cut earlier
        once a chunk's rows hold ``limits.chunk_bytes`` bytes of text.

        Storage follows the first data row: CSR when it is sparse, dense otherwise.  The
        rows are gathered a block at a time (``gather_rows`` in ``_speedups.c``: stripped of separators, lines of
        separators alone and comments left out, as Weka skips them), not line by line.
        """
        for group in self._groups():
            yield self._parse_group(*group)

    def _groups(self) -> Iterator[tuple[bytes, np.ndarray, bool]]:
        """The groups of rows :meth:`chunks` parses: each group's rows joined by newlines,
        their line numbers (an array: a list of them, made and dropped, was 3 % of reading 600,000
        short documents), and whether the rows are stored sparse."""
        sparse: bool | None = None
        pieces: list[bytes] = []
        numbers: list[np.ndarray] = []
        rows = size = 0
        budget = self.limits.chunk_bytes
        line_bytes = self.limits.line_bytes
        lines = self._lines
        for block, at in self._data_blocks():
            while at < len(block):
                text, found, at, seen, too_long = kernels.speedups.gather_rows(
                    block, at, self.chunk_rows - rows, budget - size, line_bytes
                )
                if text:
                    if sparse is None:
                        sparse = text[0] == 123  # '{'
                    pieces.append(text)
                    numbers.append(np.frombuffer(found, np.int64) + (lines.line_number + 1))
                    rows += len(numbers[-1])
                    size += len(text) + 1
                lines.line_number += seen
                if too_long:
                    raise lines.too_long()
                if rows == self.chunk_rows or size >= budget:
                    assert sparse is not None  # set with the first row
                    yield b"\n".join(pieces), np.concatenate(numbers), sparse
                    pieces, numbers, rows, size = [], [], 0, 0
        if pieces:
            assert sparse is not None  # the first data line decided it
            yield b"\n".join(pieces), np.concatenate(numbers), sparse

    def _data_blocks(self) -> Iterator[tuple[bytes, int]]:
        """The blocks of the data rows with where their rows start: the text after
        ``@data`` on its own line (if any), the rest of the header's last block, the blocks after."""
        if self._first_data is not None:
            line_number, text = self._first_data
            self._lines.line_number = line_number - 1  # the one line read from it brings it back
            yield text + b"\n", 0
        yield from self._lines.blocks()

    def _parse_group(self, joined: bytes, numbers: np.ndarray, sparse: bool) -> Chunk:
        """The chunk of the rows ``joined`` (stripped lines joined by newlines), each row's
        line number in ``numbers``: plain rows in one pass by the compiled module, the others
        (quotes, comments, weights, errors), and every row with :data:`filterkit.kernels.READING` off, by
        the tokenizer."""
        try:
            if not kernels.use_compiled(kernels.READING):
                raise _NotPlain
            if sparse:
                return _parse_sparse_plain(joined, len(numbers), self._columns)
            return _parse_dense_plain(joined, len(numbers), self._columns)
        except _NotPlain:
            pass
        columns = self._columns
        rows = []
        for raw, line_number in zip(joined.split(b"\n"), numbers.tolist()):
            try:
                rows.append(_parse_row(self._decode(raw, line_number), columns))
            except ArffError as error:
                raise error.located(self.name, line_number) from None
        return _assemble(rows, columns, sparse)

    def read_all(self) -> Chunk:
        """Every row in one chunk (for small files and tests)."""
        return concatenate(list(self.chunks()), len(self.schema), self.schema.text_columns())


def read_arff(source, name: str | None = None) -> tuple[Schema, Chunk]:
    """Read a whole ARFF file: its schema and all rows in one chunk."""
    with ArffReader(source, name) as reader:
        return reader.schema, reader.read_all()


#: the kinds of token tokenize_plain finds; a quoted label it found in the label table (its code already among the
#: numbers) is a fourth, which nothing here looks at
_WORD, _NUMBER, _QUOTED = range(3)


class _NotPlain(Exception):
    """The fast path met something it leaves to the tokenizer."""


class _ColumnInfo:
    """Per-column lookups the parsers need, computed once per schema."""

    def __init__(self, schema: Schema):
        self.schema = schema
        self.count = len(schema.attributes)
        kinds = schema.kinds()
        self.kinds = kinds.tolist()
        self.needs_lookup = kinds != NUMERIC
        self.lookup_flags = self.needs_lookup.astype(np.uint8).tobytes()
        attributes = schema.attributes
        self.label_codes = {
            i: {label: float(code) for code, label in enumerate(attributes[i].labels)}
            for i in schema.positions_of(NOMINAL).tolist()
        }
        #: None where the header declares more labels than :data:`MOST_TABLED_LABELS`
        self.labels = (
            _label_table(self.label_codes) if sum(map(len, self.label_codes.values())) <= MOST_TABLED_LABELS else None
        )
        self.is_nominal = kinds == NOMINAL
        self.is_text = np.isin(kinds, TEXT_KINDS)
        dates = schema.positions_of(DATE).tolist()
        self.date_formats = {i: DateFormat(cast(str, attributes[i].date_format)) for i in dates}
        self.text_columns = schema.text_columns()

    def __reduce__(self):
        """Pickled as its schema (the compiled label table is made again from it)."""
        return _ColumnInfo, (self.schema,)

    def value(self, column: int, text: str, quoted: bool, texts: dict) -> float:
        """The matrix value of one token; text values are stored in ``texts``."""
        kind = self.kinds[column]
        if text == "?" and not quoted:
            return np.nan
        if kind == NUMERIC:
            return parse_number(text, self.schema.attributes[column].name)
        if kind == NOMINAL:
            code = self.label_codes[column].get(text)
            if code is None:
                attribute = self.schema.attributes[column]
                labels = shown_labels(attribute.labels)
                raise ArffError(f"value {shown(text)} is not a label of attribute {shown(attribute.name)} {labels}")
            return code
        if kind == DATE:
            return self.date_formats[column].parse(text)
        texts[column] = text
        return 0.0


def parse_number(text: str, attribute: str = "") -> float:
    """A number as Java's ``Double.valueOf`` (and so Weka 3.6) reads it: decimal or
    hexadecimal (``0x1.8p1``), an optional ``f``/``d`` suffix, ``NaN`` (missing) and
    ``Infinity``; ASCII digits only, blanks around a quoted value ignored."""
    core = text.strip(JAVA_BLANKS)
    if _JAVA_NUMBER.fullmatch(core) is None:
        where = f" of attribute {shown(attribute)}" if attribute else ""
        raise ArffError(f"value {shown(text)}{where} is not a number")
    if core[-1] in "fFdD":
        core = core[:-1]
    if "x" not in core and "X" not in core:
        return float(core)
    try:
        return float.fromhex(core)
    except OverflowError:
        return -math.inf if core[0] == "-" else math.inf


def parse_sparse_index(text: str, count: int) -> int:
    """The attribute index of a sparse entry, as Weka 3.6 reads it (Integer.parseInt:
    an optional sign and decimal digits); ArffError unless it is one of ``count``."""
    if _SPARSE_INDEX.fullmatch(text) is None:
        raise ArffError(f"expected an attribute index in a sparse row, found {shown(text)}")
    digits = text.lstrip("+-")
    if not digits.isascii():
        digits = "".join(str(unicodedata.decimal(digit)) for digit in digits)
    digits = digits.lstrip("0") or "0"
    if text[0] == "-" and digits != "0":
        raise ArffError(f"expected an attribute index in a sparse row, found {shown(text)}")
    if len(digits) > _INDEX_DIGITS or int(digits) >= count:
        index_text = text if len(text) <= 60 else shown(text)
        raise ArffError(f"sparse index {index_text} is beyond the {count} attributes (0 to {count - 1})")
    return int(digits)


def parse_weight(text: str) -> float:
    """An instance weight: a number, finite and not negative (stricter than Weka 3.6,
    which keeps ``{-1}`` and ``{Infinity}`` and turns ``{NaN}`` into 1)."""
    try:
        weight = parse_number(text)
    except ArffError:
        raise ArffError(f"instance weight {shown(text)} is not a number") from None
    if not (math.isfinite(weight) and weight >= 0):
        raise ArffError(f"instance weight {shown(text)} is not a finite number of at least 0")
    return weight


class _ReadFailure(Exception):
    """The bytes could not be read (a damaged gzip stream, say); the caller adds the line."""


class _LineTooLong(Exception):
    """A line longer than the bound; the caller adds the line."""


def line_blocks(stream: BinaryIO, line_bytes: int) -> Iterator[bytes]:
    """Blocks of whole lines with LF, CRLF and CR line ends all turned into LF.

    Reads with ``read1`` where the stream has it (one system call at a time, so a
    signal is acted on at once); a line longer than a block is gathered in pieces
    and joined once, so long lines cost linear time, and refused (_LineTooLong, for
    the caller to locate) once it holds more than ``line_bytes`` bytes.
    """
    read = getattr(stream, "read1", stream.read)
    pieces: list[bytes] = []  # a line begun and not ended: no line end is among them
    gathered = 0
    after_return = False  # the last block ended with CR, whose CRLF's LF may come next
    while True:
        data = _read(read, _BLOCK_BYTES)
        if not data:
            # the last line, when it has no line end (not the nothing after a last line end, which is no line: the
            # end of a file that ends with one was numbered a line after its last), ended; joined into what is
            # yielded alone, so it is not held twice
            if any(pieces):
                pieces.append(b"\n")
                last = b"".join(pieces)
                pieces.clear()
                yield last
            return
        if after_return and data.startswith(b"\n"):  # that LF: its line end was the CR's
            data, after_return = data[1:], False
            if not data:
                continue
        returns = b"\r" in data
        after_return = data.endswith(b"\r")
        cut = max(data.rfind(b"\n"), data.rfind(b"\r")) if returns else data.rfind(b"\n")
        if cut == -1:
            gathered += len(data)
            if gathered > line_bytes:
                raise _LineTooLong
            pieces.append(data)
            continue
        gathered = len(data) - cut - 1
        if cut + 1 == len(data) and not any(pieces):
            block = data  # as read: no copy
        else:  # one copy (a slice then a join were two: grain ×100 in blocks took 54 ms of CPU, now 45)
            with memoryview(data) as view:
                block = b"".join([*pieces, view[: cut + 1]])
        pieces = [data[cut + 1 :]]
        if returns:  # rebound, so the block as read is not held beside the one yielded
            block = block.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        yield block


def _read(read, size: int) -> bytes:
    try:
        return read(size)
    except (EOFError, zlib.error, gzip.BadGzipFile) as error:
        raise _ReadFailure(f"damaged gzip data ({error})") from None


class NumberedLines:
    """The numbered lines of a stream's blocks (see :func:`line_blocks`): one at a time for
    the header (and the CSV and svmlight readers), then :meth:`blocks`, the rest of the current
    block and every block after it whole, for the data rows (whose reader keeps
    :attr:`line_number` up to date); a line too long and damaged gzip data are errors naming the line."""

    def __init__(self, blocks: Iterator[bytes], name: str, line_bytes: int):
        self._blocks = blocks
        self.name = name
        self.line_bytes = line_bytes
        self._block = b""
        self._at = 0
        #: the number of the last line read
        self.line_number = 0

    def __iter__(self) -> "NumberedLines":
        return self

    def __next__(self) -> tuple[int, bytes]:
        while self._at >= len(self._block):
            self._block, self._at = self._next_block(), 0
        end = self._block.index(b"\n", self._at)
        if end - self._at > self.line_bytes:
            raise self.too_long()
        line = self._block[self._at : end]
        self._at = end + 1
        self.line_number += 1
        return self.line_number, line

    def skip(self, count: int, digest) -> None:
        """Pass over the next ``count`` lines (fewer at the end of the stream), feeding each with
        its newline to ``digest``, a block at a time: the lines of a header read before, whose
        digest tells whether they changed (so their lengths are not checked again)."""
        while count:
            while self._at >= len(self._block):
                try:
                    self._block, self._at = self._next_block(), 0
                except StopIteration:
                    return
            lines_left = self._block.count(b"\n", self._at)  # a block ends with a whole line
            if lines_left <= count:
                end, taken = len(self._block), lines_left
            else:
                run = re.compile(rb"(?:[^\n]*+\n){%d}" % count).match(self._block, self._at)
                assert run is not None  # the block holds more than count lines
                end, taken = run.end(), count
            with memoryview(self._block) as block:
                digest.update(block[self._at : end])
            self._at = end
            self.line_number += taken
            count -= taken

    def blocks(self) -> Iterator[tuple[bytes, int]]:
        """Each block still to read, with where its first unread line starts."""
        block, at = self._block, self._at
        self._block, self._at = b"", 0
        while True:
            if at < len(block):
                yield block, at
            try:
                block, at = self._next_block(), 0
            except StopIteration:
                return

    def _next_block(self) -> bytes:
        try:
            return next(self._blocks)
        except _ReadFailure as failure:
            raise ArffError(str(failure), self.name, self.line_number + 1) from None
        except _LineTooLong:
            raise self.too_long() from None

    def too_long(self) -> ArffError:
        """The error for the line after :attr:`line_number`, longer than the bound."""
        return ArffError(
            f"a line longer than {self.line_bytes:,} bytes: refused (set {VARIABLES['line_bytes']} to allow more)",
            self.name,
            self.line_number + 1,
        )


def _look_up(targets, column_of, row_of, starts, ends, joined, values, columns: _ColumnInfo, texts) -> None:
    """Set ``values[targets]`` from the tokens ``joined[starts[k]:ends[k]]`` (labels, dates,
    strings, ``?``); _NotPlain for a token that is not one (the tokenizer then names its line).

    Plain tokens of nominal columns (a class label on every row) are looked up all at once
    first, by the compiled table (:func:`_label_table`); when one of them is not found, every
    token goes through :meth:`_ColumnInfo.value`.
    """
    table, nominal = columns.labels, columns.is_nominal[column_of]
    if table is not None and nominal.all():  # a class label a row, the common case: no gather
        codes = table.codes(joined, column_of, starts, ends)
        if codes is not None:
            values[targets] = np.frombuffer(codes, np.float64)
            return
    elif table is not None and nominal.any():
        picked = np.flatnonzero(nominal)
        codes = table.codes(joined, column_of[picked], starts[picked], ends[picked])
        if codes is not None:
            values[targets[picked]] = np.frombuffer(codes, np.float64)
            rest = np.flatnonzero(~nominal)
            targets, column_of, row_of, starts, ends = (a[rest] for a in (targets, column_of, row_of, starts, ends))
    try:
        tokens = [joined[start:end].decode("utf-8") for start, end in zip(starts.tolist(), ends.tolist())]
    except UnicodeDecodeError:
        raise _NotPlain from None
    _set_values(targets, column_of, row_of, tokens, False, values, columns, texts)


def _label_table(label_codes: dict[int, dict[str, float]]):
    """The nominal columns' labels as the compiled reader looks a group's tokens up (``_speedups.Labels``, a
    table keyed by each process's random hash key, so that labels cannot be made to collide offline): each
    label's code, and NaN for an unquoted ``?``, as :meth:`_ColumnInfo.value` gives them.  (A dict lookup a
    token was two fifths of reading 600,000 documents with a class each; numpy's hashing of the tokens, which
    came next, 60 of the 190 ms left: 14 here.)"""
    tables = [{**codes, "?": np.nan} for codes in label_codes.values()]
    columns = np.repeat(np.array(list(label_codes), np.int64), list(map(len, tables)))
    labels = [label.encode("utf-8") for table in tables for label in table]
    values = np.fromiter(chain.from_iterable(table.values() for table in tables), np.float64, len(labels))
    return kernels.speedups.Labels(columns, labels, values)


def _parse_sparse_plain(joined: bytes, n_rows: int, columns: _ColumnInfo) -> Chunk:
    """Plain sparse rows parsed by the compiled module straight into CSR arrays (quoted labels found there in
    the label table, bare labels, strings, dates and ``?`` looked up here); _NotPlain where it declines the group.

    The module leaves out the numbers that are zero; only looked-up values can still be
    zero (a first label), so only a group where one is has its zeros eliminated here.
    """
    found = kernels.speedups.parse_sparse_rows(joined, n_rows, columns.count, columns.lookup_flags, columns.labels)
    if not found:
        raise _NotPlain
    *arrays, strings = found
    indptr, indices, values, entries, rows, starts, ends, quoted = (
        np.frombuffer(raw, dtype) for raw, dtype in zip(arrays, (np.int64, np.int64, np.float64) + (np.int64,) * 5)
    )
    texts = {c: [""] * n_rows for c in columns.text_columns}
    at = np.flatnonzero(quoted == 0)
    _look_up(entries[at], indices[entries[at]], rows[at], starts[at], ends[at], joined, values, columns, texts)
    at = np.flatnonzero(quoted)
    _set_values(entries[at], indices[entries[at]], rows[at], strings, True, values, columns, texts)
    if len(entries) and not values[entries].all():
        values, indices, indptr = without_zeros(values, indices, indptr)
    return Chunk.from_csr(values, indices, indptr, (n_rows, columns.count), texts)


def _parse_dense_plain(joined: bytes, n_rows: int, columns: _ColumnInfo) -> Chunk:
    """Plain dense rows tokenized at once by the compiled module (a word that is not a number
    parsed as 0, its text looked up here; quoted texts unescaped there, and a quoted label found there in the label
    table, at a bare label's cost); _NotPlain where it declines."""
    found = kernels.speedups.tokenize_plain(joined, n_rows, columns.count, columns.labels)
    if not found:
        raise _NotPlain
    numbers, *arrays, quoted_bytes, quoted_ends = found
    starts, ends, kinds = (np.frombuffer(raw, dtype) for raw, dtype in zip(arrays, (np.int64, np.int64, np.uint8)))
    numbers = np.frombuffer(numbers, np.float64)  # writable: looked-up values are filled in
    texts = {c: [None] * n_rows for c in columns.text_columns}
    looked_up = (kinds == _WORD) | ((kinds == _NUMBER) & np.tile(columns.needs_lookup, n_rows))
    at = np.flatnonzero(looked_up)
    row_of, column_of = np.divmod(at, columns.count)
    _look_up(at, column_of, row_of, starts[at], ends[at], joined, numbers, columns, texts)
    at = np.flatnonzero(kinds == _QUOTED)
    strings: RawTexts | list = RawTexts(quoted_bytes, np.frombuffer(quoted_ends, np.int64)) if len(at) else []
    row_of, column_of = np.divmod(at, columns.count)
    _set_values(at, column_of, row_of, strings, True, numbers, columns, texts)
    return Chunk(numbers.reshape(n_rows, columns.count), texts)


def _set_values(targets, column_of, row_of, tokens, quoted: bool, values, columns: _ColumnInfo, texts) -> None:
    """Set ``values[targets]`` from the texts ``tokens`` (quoted ones unescaped by the compiled module: a list of
    str, or its bytes as RawTexts), as the tokenizer's rows would; _NotPlain for one that is not a value (the
    tokenizer names its line).

    A quoted token of a text column is its text, its value 0 (:meth:`_ColumnInfo.value`'s last case): those
    are stored without a call each (documents: 77,700 calls were a quarter of reading Reuters grain ×50)."""
    if quoted and len(targets):
        is_text = columns.is_text[column_of]
        text_at = np.flatnonzero(is_text)
        one_a_row = len(texts) == 1 and len(text_at) == len(next(iter(texts.values())))  # of one text column
        if one_a_row and len(text_at) == len(tokens):  # and nothing else quoted: the texts kept as they came
            texts[next(iter(texts))] = tokens
            values[targets] = 0.0
            return
        if isinstance(tokens, RawTexts):
            tokens = tokens.strings()
        if one_a_row:
            # its texts as the list they came in: an array of them, indexed, took a sixth of reading 600,000 documents
            texts[next(iter(texts))] = list(compress(tokens, is_text))
        else:
            held = np.array(tokens, dtype=object)
            for column, at in positions_by_key(column_of[text_at]):  # each column's texts stored by one C loop
                mine = text_at[at]
                if len(mine) == len(texts[column]):  # one a row (a row has a column once), in order
                    texts[column] = held[mine].tolist()
                else:
                    deque(map(texts[column].__setitem__, row_of[mine].tolist(), held[mine].tolist()), 0)
        values[targets[is_text]] = 0.0
        other = ~is_text
        targets, column_of, row_of, tokens = (
            targets[other],
            column_of[other],
            row_of[other],
            list(compress(tokens, other)),
        )
    for target, column, row, text in zip(targets.tolist(), column_of.tolist(), row_of.tolist(), tokens):
        stored: dict = {}
        try:
            values[target] = columns.value(column, text, quoted, stored)
        except ArffError:
            raise _NotPlain from None
        if column in texts:
            texts[column][row] = stored.get(column)


def _parse_row(line: str, columns: _ColumnInfo):
    """One data row by the tokenizer: ``(columns, values, texts, weight)``."""
    tokens = list(iter_tokens(line))
    texts: dict = {}
    if tokens and tokens[0].kind == OPEN:
        cols, values, position = _sparse_pairs(tokens, columns, texts)
    else:
        position = next((i for i, t in enumerate(tokens) if t.kind == OPEN), len(tokens))
        if any(t.kind == CLOSE for t in tokens[:position]):
            raise ArffError("unexpected '}' in a dense row")
        if position != columns.count:
            raise ArffError(f"expected {columns.count} values, found {position}")
        cols = list(range(columns.count))
        values = [columns.value(c, t.text, t.kind == QUOTED, texts) for c, t in zip(cols, tokens)]
    weight = None
    rest = tokens[position:]
    if rest and rest[0].kind == OPEN:
        if len(rest) < 3 or rest[1].kind not in (WORD, QUOTED) or rest[2].kind != CLOSE:
            raise ArffError("a weight must be written {number} at the end of the row")
        weight = parse_weight(rest[1].text)
        rest = rest[3:]
    if rest:
        raise ArffError(f"unexpected {shown(rest[0].text)} after the end of the row")
    return cols, values, texts, weight


def _sparse_pairs(tokens, columns: _ColumnInfo, texts: dict):
    cols: list[int] = []
    values: list[float] = []
    position = 1
    while True:
        if position >= len(tokens):
            raise ArffError("sparse row has no closing '}'")
        token = tokens[position]
        if token.kind == CLOSE:
            return cols, values, position + 1
        if token.kind not in (WORD, QUOTED):
            raise ArffError(f"expected an attribute index in a sparse row, found {shown(token.text)}")
        index = parse_sparse_index(token.text, columns.count)
        if cols and index <= cols[-1]:
            raise ArffError(f"sparse indices must ascend: {index} after {cols[-1]}")
        if position + 1 >= len(tokens) or tokens[position + 1].kind not in (WORD, QUOTED):
            raise ArffError(f"sparse index {index} has no value")
        value_token = tokens[position + 1]
        cols.append(index)
        values.append(columns.value(index, value_token.text, value_token.kind == QUOTED, texts))
        position += 2


def _assemble(rows, columns: _ColumnInfo, sparse: bool) -> Chunk:
    """A chunk from rows read by the tokenizer."""
    n_rows = len(rows)
    weights = None
    if any(r[3] is not None for r in rows):
        weights = np.array([1.0 if r[3] is None else r[3] for r in rows])
    texts = {column: [r[2].get(column) if column in r[0] else "" for r in rows] for column in columns.text_columns}
    if sparse:
        counts = [len(r[0]) for r in rows]
        indptr = np.zeros(n_rows + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        indices = np.fromiter((c for r in rows for c in r[0]), dtype=np.int64, count=indptr[-1])
        data = np.fromiter((v for r in rows for v in r[1]), dtype=np.float64, count=indptr[-1])
        data, indices, indptr = without_zeros(data, indices, indptr)
        return Chunk.from_csr(data, indices, indptr, (n_rows, columns.count), texts, weights)
    matrix = np.zeros((n_rows, columns.count))
    for position, (cols, values, _, _) in enumerate(rows):
        matrix[position, cols] = values
    return Chunk(matrix, texts, weights)
