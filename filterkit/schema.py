"""The in-memory model of ARFF data: a schema of attributes and chunks of rows.

A chunk holds its rows as one float64 matrix (CSR for sparse input, a dense array otherwise, or
CSR arrays whose matrix is built only when asked for): a numeric attribute holds its value, a
nominal one its label's position, a date milliseconds since 1970 UTC (as Weka), a string or
relational one 0 (its text in a side column); missing is NaN.  Weights are a side array.
"""

from __future__ import annotations

import gc
import re
import shlex
import sys
from dataclasses import dataclass, replace
from functools import wraps
from itertools import chain, pairwise
from typing import Any, Iterator, NamedTuple

import numpy as np

from filterkit.errors import FilterkitError
from filterkit.limits import VARIABLES, Limits
from filterkit.text import shown

#: The kind (``Attribute.kind``) of a numeric attribute (``numeric``, ``real`` or ``integer``).
NUMERIC = "numeric"
#: The kind of a nominal attribute: its values are the codes 0 … len(labels) − 1 of its ``labels``.
NOMINAL = "nominal"
#: The kind of a string attribute: its values are in a text side column of the chunk (``Chunk.text``).
STRING = "string"
#: The kind of a date attribute: its values are milliseconds since the epoch, as Weka stores them.
DATE = "date"
#: The kind of a relational attribute (Weka's multi-instance bags): its values are in a text side column.
RELATIONAL = "relational"

#: Kinds whose per-row value lives in a side column of text.
TEXT_KINDS = (STRING, RELATIONAL)


def collector_paused(function):
    """``function`` run with Python's cyclic garbage collector held off (as it was before, after).  For what
    makes an object per attribute or word: the collections that their numbers set off each traverse every
    object alive (a third of the layout of 150,000 words, a quarter of reading a header of 130,000
    attributes); the objects hold no cycle, and a cycle made meanwhile is collected by the next collection
    after."""

    @wraps(function)
    def paused(*arguments, **keywords):
        enabled = gc.isenabled()
        gc.disable()
        try:
            return function(*arguments, **keywords)
        finally:
            if enabled:
                gc.enable()

    return paused


@dataclass(frozen=True)
class Attribute:
    """One declared ARFF attribute; ``declared_type`` keeps a numeric one's keyword (``numeric``,
    ``real``, ``integer``) to write it back as it came, ``members`` a relational one's attributes."""

    name: str
    kind: str
    labels: tuple[str, ...] = ()
    date_format: str | None = None
    declared_type: str = ""
    members: tuple["Attribute", ...] = ()

    @classmethod
    def numerics(cls, names: list[str], declared_types: list[str]) -> list["Attribute"]:
        """``Attribute(name, NUMERIC, declared_type=declared_type)`` for each name and its declared type, made in
        bulk by the compiled reader (150,000 in 19 ms and 15 MiB, against 37 ms and 24 MiB by a
        Python loop of ``object.__new__``, tests/oracles.py's ``numeric_attributes``),
        without the frozen constructor's ``object.__setattr__`` per field and holding only the fields that differ
        from the class's defaults."""
        from filterkit import kernels  # here: the compiled modules import this one

        return kernels.speedups.numeric_attributes(cls, names, declared_types, NUMERIC)

    @property
    def is_plain_numeric(self) -> bool:
        """Numeric with no labels, date format or members (as :meth:`numerics` makes them)."""
        return self.kind == NUMERIC and self.date_format is None and not self.labels and not self.members

    @property
    def is_numeric(self) -> bool:
        """True for numeric, real and integer attributes."""
        return self.kind == NUMERIC

    def as_numeric(self) -> "Attribute":
        """This attribute re-declared as plain ``numeric`` (for changed values)."""
        return Attribute(self.name, NUMERIC, declared_type="numeric")

    def same_declaration(self, other: "Attribute") -> bool:
        """True when names, kinds, labels, date formats and members agree."""
        return (
            self.name == other.name
            and self.kind == other.kind
            and self.labels == other.labels
            and self.date_format == other.date_format
            and len(self.members) == len(other.members)
            and all(a.same_declaration(b) for a, b in zip(self.members, other.members))
        )


@dataclass(frozen=True)
class Schema:
    """The relation name and its attributes, in declaration order."""

    relation: str
    attributes: tuple[Attribute, ...]

    def __len__(self) -> int:
        return len(self.attributes)

    def __reduce__(self):
        """Pickled compactly, a plain numeric attribute as its name and declared type (a Dask run sends
        the schema to every worker: 13,000 attributes took 0.6 MB and 0.07 s as objects, 0.3 MB and 0.03 s so;
        0.5 MB as objects since :meth:`numerics` keeps only the fields that differ from the defaults)."""
        compact = tuple((a.name, a.declared_type) if a.is_plain_numeric else a for a in self.attributes)
        return _unpickled_schema, (self.relation, compact)

    def index_of(self, name: str) -> int:
        """Position of the attribute called ``name``; KeyError if none."""
        for position, attribute in enumerate(self.attributes):
            if attribute.name == name:
                return position
        raise KeyError(name)

    def with_attributes(self, attributes) -> "Schema":
        """The same relation with other attributes."""
        return replace(self, attributes=tuple(attributes))

    def text_columns(self) -> list[int]:
        """Positions of the string and relational attributes."""
        return self.positions_of(*TEXT_KINDS).tolist()

    def kinds(self) -> np.ndarray:
        """Each attribute's kind, a read-only array of str made once per schema (a frozen dataclass keeps what
        it works out in its ``__dict__``): the readers', writers' and stages' questions of a wide header answered
        by numpy, not by a pass over 130,000 attributes each."""
        kinds = self.__dict__.get("_kinds")
        if kinds is None:
            kinds = np.array([a.kind for a in self.attributes], dtype=str)
            kinds.flags.writeable = False
            self.__dict__["_kinds"] = kinds
        return kinds

    def positions_of(self, *kinds: str) -> np.ndarray:
        """The positions of the attributes of ``kinds``, ascending (read-only): made once per schema and
        kinds: a one-document predict asks at every call (at 13,000 words, 2.5 of its 3.9 ms)."""
        made = self.__dict__.setdefault("_positions_of", {})
        positions = made.get(kinds)
        if positions is None:
            positions = np.flatnonzero(np.isin(self.kinds(), kinds)).astype(np.int64)
            positions.flags.writeable = False
            made[kinds] = positions
        return positions

    def first_difference(self, other: "Schema") -> str | None:
        """Describe the first attribute that differs from ``other`` (not the relation name), or None: in a
        bounded line, naming a label one holds and the other does not when only the labels differ."""
        for position, (mine, theirs) in enumerate(zip(self.attributes, other.attributes), 1):
            if not mine.same_declaration(theirs):
                difference = f"attribute {position} differs: expected {describe(mine)}, found {describe(theirs)}"
                if mine.kind == theirs.kind == NOMINAL and mine.labels != theirs.labels:
                    difference += f": {label_difference(mine.labels, theirs.labels)}"
                return difference
        if len(self.attributes) != len(other.attributes):
            return f"expected {len(self.attributes)} attributes, found {len(other.attributes)}"
        return None


def _unpickled_schema(relation: str, compact: tuple) -> Schema:
    """The schema :meth:`Schema.__reduce__` pickled: runs of plain numeric pairs made in bulk."""
    attributes: list[Attribute] = []
    names: list[str] = []
    declared_types: list[str] = []
    for item in compact:
        if isinstance(item, Attribute):
            attributes.extend(Attribute.numerics(names, declared_types))
            names, declared_types = [], []
            attributes.append(item)
        else:
            names.append(item[0])
            declared_types.append(item[1])
    attributes.extend(Attribute.numerics(names, declared_types))
    return Schema(relation, tuple(attributes))


#: The characters of a class's labels an error message shows (as the ARFF reader shows an attribute's).
SHOWN_LABEL_CHARACTERS = 200


def check_positive(positive: str | None, class_attribute: Attribute | None, path: str | None = None) -> None:
    """FilterkitError unless ``positive`` (``--positive``) is None or a label of the nominal
    ``class_attribute``: the message shows the class's labels and offers those differing only in case."""
    if positive is None or (class_attribute is not None and positive in class_attribute.labels):
        return
    if class_attribute is None or class_attribute.kind != NOMINAL:
        raise FilterkitError(f"--positive {positive!r} is not a label of the class", path)
    message = (
        f"--positive {positive!r} is not a label of the class '{class_attribute.name}' "
        f"{shown_labels(class_attribute.labels)}"
    )
    alike = [label for label in class_attribute.labels if label.casefold() == positive.casefold()]
    if alike:
        offered = " or ".join(f"--positive {shlex.quote(label)}" for label in alike)
        message += f": labels are case-sensitive; did you mean {offered}?"
    raise FilterkitError(message, path)


def shown_labels(labels: tuple[str, ...]) -> str:
    """Labels for a message, ``{a,b,c}``: cut after :data:`SHOWN_LABEL_CHARACTERS` characters, then
    ``…} (N labels)`` (a nominal attribute of documents has megabytes of labels)."""
    listed = "{" + ",".join(labels) + "}"
    if len(listed) > SHOWN_LABEL_CHARACTERS:
        listed = f"{listed[:SHOWN_LABEL_CHARACTERS]}…}} ({len(labels):,} labels)"
    return listed


def shown_name(text: str, most: int = 60) -> str:
    """A name or label quoted for a message, its middle cut out when longer than ``most`` characters."""
    return shown(text, most)


def label_difference(expected: tuple[str, ...], found: tuple[str, ...]) -> str:
    """What differs between two attributes' labels, bounded: a label only one holds, else the first
    position where their order differs."""
    expected_set, found_set = set(expected), set(found)
    missing = next((label for label in expected if label not in found_set), None)
    new = next((label for label in found if label not in expected_set), None)
    parts = [] if missing is None else [f"label {shown_name(missing)} is missing"]
    parts += [] if new is None else [f"label {shown_name(new)} is new"]
    order = next((k for k, (a, b) in enumerate(zip(expected, found)) if a != b), None)
    if not parts and order is not None:
        parts = [f"the same labels in another order (label {order + 1} is {shown_name(found[order])})"]
    counts = f" ({len(expected):,} labels expected, {len(found):,} found)" if len(expected) != len(found) else ""
    return ", ".join(parts) + counts if parts else counts.strip(" ()")


def describe(attribute: Attribute) -> str:
    """A short human description such as ``'play' {yes,no}``, bounded (:func:`shown_labels`)."""
    name = shown_name(attribute.name)
    if attribute.kind == NOMINAL:
        return f"{name} {shown_labels(attribute.labels)}"
    if attribute.kind == DATE:
        return f'{name} date "{attribute.date_format}"'
    return f"{name} {attribute.kind}"


class CsrArrays(NamedTuple):
    """A sparse chunk's rows as CSR arrays (read-only; named as a ``csr_matrix``'s)."""

    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray
    shape: tuple[int, int]


def rows_of_entries(indptr: np.ndarray, entries: np.ndarray) -> np.ndarray:
    """The row of each of ``entries`` (positions among a CSR matrix's stored values)."""
    return np.searchsorted(indptr, entries, side="right") - 1


def distinct(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)`` (sorted, one NaN kept) without what its first call costs: an import of
    ``numpy.ma`` (10 ms of CPU, a tenth of numpy's own import) in a run that needed nothing of it."""
    ordered = np.sort(values, axis=None)
    keep = np.empty(len(ordered), dtype=bool)
    keep[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    if ordered.dtype.kind in "fc" and len(ordered) and ordered[-1] != ordered[-1]:  # the NaNs, sorted last
        keep[int(np.argmax(ordered != ordered)) + 1 :] = False
    return ordered[keep]


def positions_by_key(keys: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
    """Each distinct whole-number key, ascending, with the positions holding it (ascending): one sort, where a
    scan of every position per key is quadratic in the keys (10,000 columns of a wide file: 2 s of 2.1)."""
    order = np.argsort(keys, kind="stable")
    bounds = np.flatnonzero(np.diff(keys[order], prepend=-1, append=-1)).tolist()
    return ((int(keys[order[start]]), order[start:end]) for start, end in pairwise(bounds))


def is_sparse_matrix(value: Any) -> bool:
    """Whether ``value`` is a ``scipy.sparse`` matrix or array (without importing scipy)."""
    module = sys.modules.get("scipy.sparse")
    return module is not None and bool(module.issparse(value))


class RawTexts:
    """A text column as the ARFF reader found it: each row's text as UTF-8 bytes, one after another (``data``), and
    where each ends there (``ends``, int64).  ``words`` cuts the documents from these bytes; :attr:`Chunk.text`
    makes their strings for any other use (600,000 short documents made and dropped as strings were 6 % of
    ``words --counts`` on them)."""

    def __init__(self, data: bytes, ends: np.ndarray):
        self.data, self.ends = data, ends
        self._starts: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.ends)

    def rows(self, start: int, end: int) -> tuple[bytes, np.ndarray, np.ndarray]:
        """Rows ``start`` to ``end`` as ``count_words`` takes them: the bytes, and where each row starts and ends."""
        if self._starts is None:
            self._starts = np.concatenate(([0], self.ends[:-1])) if len(self.ends) else self.ends.copy()
            self._starts.flags.writeable = False
        return self.data, self._starts[start:end], self.ends[start:end]

    def strings(self) -> list[str]:
        """Each row's text, as str."""
        from filterkit import kernels

        return kernels.speedups.decode_texts(self.data, self.ends)


class Chunk:
    """A block of rows: ``values`` (a 2-D float64 array or a CSR matrix), text side columns and weights;
    :meth:`from_csr` makes one of CSR arrays whose matrix is built on first access."""

    def __init__(self, values: Any = None, text: dict[int, Any] | None = None, weights: np.ndarray | None = None):
        self._values = values
        self._csr: CsrArrays | None = None
        self._text: dict = {} if text is None else text
        self._raw = any(isinstance(texts, RawTexts) for texts in self._text.values())
        self.weights = weights

    @property
    def text(self) -> dict[int, list]:
        """Per text column, each row's text (a str, or None where missing); a column the reader left as bytes
        (:class:`RawTexts`) is made strings on first access."""
        if self._raw:  # the strings made first, then put in place: an interrupted conversion leaves the bytes
            made = {k: texts.strings() if isinstance(texts, RawTexts) else texts for k, texts in self._text.items()}
            self._text = made
            self._raw = False
        return self._text

    @text.setter
    def text(self, text: dict[int, Any]) -> None:
        self._text = text
        self._raw = any(isinstance(texts, RawTexts) for texts in text.values())

    def text_lengths(self) -> dict[int, int]:
        """Each text column's number of values (its rows), without making strings of the reader's bytes."""
        return {column: len(texts) for column, texts in self._text.items()}

    def text_column(self, column: int) -> list | None:
        """Column ``column``'s texts as :attr:`text` holds them (made strings here, that column alone, if the reader
        left them as bytes); None for a column without texts."""
        texts = self._text.get(column)
        if isinstance(texts, RawTexts):
            texts = self._text[column] = texts.strings()
            self._raw = any(isinstance(others, RawTexts) for others in self._text.values())
        return texts

    def raw_text(self, column: int) -> RawTexts | None:
        """Column ``column``'s texts as the reader's bytes, if they were not made strings yet."""
        texts = self._text.get(column) if self._raw else None
        return texts if isinstance(texts, RawTexts) else None

    @classmethod
    def from_csr(
        cls,
        data: np.ndarray,
        indices: np.ndarray,
        indptr: np.ndarray,
        shape: tuple[int, int],
        text: dict[int, list] | None = None,
        weights: np.ndarray | None = None,
    ) -> "Chunk":
        """A sparse chunk of the CSR arrays ``data``, ``indices`` and ``indptr`` (kept, not copied)."""
        chunk = cls(None, text, weights)
        chunk._csr = CsrArrays(data, indices, indptr, (int(shape[0]), int(shape[1])))
        return chunk

    @property
    def values(self) -> Any:
        """The value matrix: a 2-D array or a CSR matrix (built once for a chunk of CSR arrays)."""
        if self._values is None and self._csr is not None:
            import scipy.sparse as sp

            self._values = sp.csr_matrix(self._csr[:3], shape=self._csr.shape, copy=False)
        return self._values

    @values.setter
    def values(self, values: Any) -> None:
        self._values, self._csr = values, None

    @property
    def has_matrix(self) -> bool:
        """False for a chunk made from CSR arrays whose matrix was not built yet."""
        return self._values is not None

    @property
    def shape(self) -> tuple[int, int]:
        """Rows and columns, without building a matrix."""
        return self._csr.shape if self._values is None and self._csr is not None else tuple(self._values.shape)

    @property
    def n_rows(self) -> int:
        return self.shape[0]

    @property
    def is_sparse(self) -> bool:
        return self._values is None and self._csr is not None or is_sparse_matrix(self._values)

    def csr(self) -> CsrArrays:
        """A sparse chunk's CSR arrays, without building a matrix (a CSR matrix's own arrays)."""
        if self._values is None and self._csr is not None:
            return self._csr
        if not is_sparse_matrix(self._values):
            raise TypeError("csr() needs a sparse chunk")
        matrix = self._values.tocsr()  # itself when it is CSR already
        return CsrArrays(matrix.data, matrix.indices, matrix.indptr, (int(matrix.shape[0]), int(matrix.shape[1])))

    def rows(self, start: int, stop: int) -> "Chunk":
        """Rows ``start:stop`` (an array chunk's slice of its arrays, without building a matrix)."""
        weights = None if self.weights is None else self.weights[start:stop]
        text = {c: texts[start:stop] for c, texts in self.text.items()}
        if self._values is not None:
            return Chunk(self._values[start:stop], text, weights)
        arrays = self.csr()
        first, last = int(arrays.indptr[start]), int(arrays.indptr[stop])
        return Chunk.from_csr(
            arrays.data[first:last],
            arrays.indices[first:last],
            arrays.indptr[start : stop + 1] - first,
            (stop - start, arrays.shape[1]),
            text,
            weights,
        )

    def with_stored(self, data: np.ndarray, rows: CsrArrays | None = None) -> "Chunk":
        """This sparse chunk with new stored values ``data`` on ``rows`` (default its own), zeros dropped."""
        rows = self.csr() if rows is None else rows
        return Chunk.from_csr(*without_zeros(data, rows.indices, rows.indptr), rows.shape, self.text, self.weights)

    def column(self, index: int) -> np.ndarray:
        """One column of the value matrix as a dense float vector (see :func:`column_of`)."""
        return column_of(self.csr() if self.is_sparse else self.values, index)

    def dense_values(self) -> np.ndarray:
        """The value matrix as a dense array (a copy for sparse chunks)."""
        if not self.is_sparse:
            return self.values
        if self._values is not None:
            return self._values.toarray()
        arrays = self.csr()
        dense = np.zeros(arrays.shape)
        rows = np.repeat(np.arange(arrays.shape[0]), np.diff(arrays.indptr))
        np.add.at(dense, (rows, arrays.indices), arrays.data)
        return dense


def without_zeros(
    data: np.ndarray, indices: np.ndarray, indptr: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSR arrays with the stored zeros left out (as scipy's ``eliminate_zeros``)."""
    if data.all():
        return data, indices, indptr
    keep = data != 0
    kept = np.zeros(len(data) + 1, dtype=np.int64)
    np.cumsum(keep, out=kept[1:])
    return data[keep], indices[keep], kept[indptr]


def take_rows(chunk: Chunk, rows: np.ndarray) -> Chunk:
    """The given rows of a chunk, in the given order (evaluate's folds, the ``fold`` stage)."""
    values = chunk.values[rows]
    text = {column: [strings[i] for i in rows] for column, strings in chunk.text.items()}
    weights = None if chunk.weights is None else chunk.weights[rows]
    return Chunk(values.tocsr() if chunk.is_sparse else values, text, weights)


def concatenate(chunks: list[Chunk], n_attributes: int, text_columns=()) -> Chunk:
    """Join chunks row-wise into one chunk (sparse if the first one is)."""
    if not chunks:
        return Chunk(np.zeros((0, n_attributes)), {c: [] for c in text_columns})
    text = {c: list(chain.from_iterable(chunk.text[c] for chunk in chunks)) for c in chunks[0].text}
    weights = None
    if any(c.weights is not None for c in chunks):
        weights = np.concatenate([c.weights if c.weights is not None else np.ones(c.n_rows) for c in chunks])
    if chunks[0].is_sparse:
        return _stacked(chunks, text, weights)
    return Chunk(np.vstack([c.dense_values() for c in chunks]), text, weights)


def _stacked(chunks: list[Chunk], text: dict[int, list], weights: np.ndarray | None) -> Chunk:
    """Sparse chunks (a dense one among them taken as sparse) joined row-wise, as an array chunk."""
    parts = [c.csr() if c.is_sparse else _dense_as_csr(c.dense_values()) for c in chunks]
    starts = np.cumsum([0] + [len(p.data) for p in parts])
    indptr = np.concatenate([np.zeros(1, dtype=np.int64)] + [p.indptr[1:] + s for p, s in zip(parts, starts)])
    return Chunk.from_csr(
        np.concatenate([p.data for p in parts]).astype(np.float64, copy=False),
        np.concatenate([p.indices for p in parts]).astype(np.int64, copy=False),
        indptr.astype(np.int64, copy=False),
        (sum(p.shape[0] for p in parts), parts[0].shape[1]),
        text,
        weights,
    )


def _dense_as_csr(values: np.ndarray) -> CsrArrays:
    """A dense matrix's non-zero entries (NaN included) as CSR arrays, in row order."""
    rows, columns = np.nonzero(values)
    indptr = np.searchsorted(rows, np.arange(values.shape[0] + 1)).astype(np.int64)
    return CsrArrays(values[rows, columns].astype(np.float64), columns.astype(np.int64), indptr, values.shape)


def column_of(values, index: int) -> np.ndarray:
    """Column ``index`` of a dense array or of :class:`CsrArrays`, as a dense float vector."""
    if not isinstance(values, CsrArrays):
        return np.asarray(values[:, index], dtype=float)
    column = np.zeros(values.shape[0])
    entries = np.flatnonzero(values.indices == index)
    column[rows_of_entries(values.indptr, entries)] = values.data[entries]
    return column


_RANGE_ITEM = re.compile(r"^(first|last|\d+)(?:-(first|last|\d+))?$")


def weka_range(text: str, n_attributes: int, flag: str) -> tuple[np.ndarray, set[int]]:
    """The sorted 0-based positions a Weka attribute range names (``first-3,5,last``; a span either way round, as
    Weka's ``Range``), and those named as single items; FilterkitError naming the option ``flag`` when malformed or
    out of 1…n."""
    chosen: set[int] = set()
    single: set[int] = set()
    for item in text.replace(" ", "").split(","):
        match = _RANGE_ITEM.match(item.lower())
        if not match:
            raise FilterkitError(f"option {flag}: {text!r} is not a range like first-3,5,last")
        bounds = [1 if b == "first" else n_attributes if b == "last" else int(b) for b in match.groups() if b]
        low, high = min(bounds), max(bounds)  # Weka's Range reads 3-1 as 1-3, and last-first as first-last
        if not 1 <= low <= high <= n_attributes:
            raise FilterkitError(f"option {flag}: {item!r} is not within 1-{n_attributes}")
        chosen.update(range(low - 1, high))
        if len(bounds) == 1:
            single.add(low - 1)
    return np.array(sorted(chosen), dtype=np.int64), single


def range_within(text: str, columns: int, flag: str) -> str:
    """The Weka range ``text`` with its ``last`` the ``columns``-th attribute: what it names among a table's columns
    when the class (or labels) come after them, unseen (scikit-learn's y); FilterkitError naming the option ``flag``
    where it names a column past them (the class's place), as :func:`weka_range` refuses it without them."""
    within = _LAST.sub(str(columns), text)
    weka_range(within, columns, flag)
    return within


_LAST = re.compile(r"(?<![a-z])last(?![a-z])", re.IGNORECASE)


#: The fewest bytes an attribute's declaration line takes besides its name (``@attribute N {a}`` and its end).
_LEAST_DECLARATION_BYTES = 16


def refuse_unreadable_output(stage: str, attributes: int, labels: int, name_bytes: int, remedy: str) -> None:
    """FilterkitError when ``stage`` would write more attributes, labels in one attribute or header bytes
    than a reader accepts (:class:`~filterkit.limits.Limits`); ``remedy`` says which option makes fewer."""
    limits = Limits.from_environment()
    header = name_bytes + _LEAST_DECLARATION_BYTES * attributes
    for count, what, whose in (
        (attributes, "attributes", ""),
        (labels, "labels", " in one attribute"),
        (header, "header_bytes", " of header at least"),
    ):
        if count > getattr(limits, what):
            raise FilterkitError(
                f"stage '{stage}' would write {count:,} {what.replace('header_', '')}{whose}, more than the "
                f"{getattr(limits, what):,} filterkit reads back (set {VARIABLES[what]} to allow more): {remedy}"
            )
