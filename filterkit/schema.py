"""The in-memory model of ARFF data: a schema of attributes and chunks of rows.

A chunk holds its rows as one float64 matrix (``scipy.sparse`` CSR for sparse
input, a dense ``numpy`` array otherwise):

* numeric attributes hold their value;
* nominal attributes hold the label's position in the declaration (0 = first label);
* date attributes hold milliseconds since 1970-01-01T00:00:00 UTC, as Weka does;
* string and relational attributes hold 0, their text lives in a side column;
* a missing value is NaN everywhere.

Instance weights, when a file has any, are a side array of one float per row.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import cast

import numpy as np
import scipy.sparse as sp

from filterkit.errors import FilterkitError

NUMERIC = "numeric"
NOMINAL = "nominal"
STRING = "string"
DATE = "date"
RELATIONAL = "relational"

#: Kinds whose per-row value lives in a side column of text.
TEXT_KINDS = (STRING, RELATIONAL)


@dataclass(frozen=True)
class Attribute:
    """One declared ARFF attribute.

    ``declared_type`` keeps the keyword a numeric attribute was declared with
    (``numeric``, ``real`` or ``integer``) so an untouched attribute is written
    back as it came.  ``members`` are the attributes of a relational attribute.
    """

    name: str
    kind: str
    labels: tuple[str, ...] = ()
    date_format: str | None = None
    declared_type: str = ""
    members: tuple["Attribute", ...] = ()

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
        return [i for i, a in enumerate(self.attributes) if a.kind in TEXT_KINDS]

    def first_difference(self, other: "Schema") -> str | None:
        """Describe the first attribute that differs from ``other``, or None.

        Names, kinds, labels and formats are compared; the relation name is not.
        """
        for position, (mine, theirs) in enumerate(zip(self.attributes, other.attributes), 1):
            if not mine.same_declaration(theirs):
                return f"attribute {position} differs: expected {describe(mine)}, found {describe(theirs)}"
        if len(self.attributes) != len(other.attributes):
            return f"expected {len(self.attributes)} attributes, found {len(other.attributes)}"
        return None


def describe(attribute: Attribute) -> str:
    """A short human description such as ``'play' {yes,no}``."""
    if attribute.kind == NOMINAL:
        return f"'{attribute.name}' {{{','.join(attribute.labels)}}}"
    if attribute.kind == DATE:
        return f"'{attribute.name}' date \"{attribute.date_format}\""
    return f"'{attribute.name}' {attribute.kind}"


@dataclass
class Chunk:
    """A block of rows: the value matrix, text side columns and weights."""

    values: np.ndarray | sp.csr_matrix
    text: dict[int, list] = field(default_factory=dict)
    weights: np.ndarray | None = None

    @property
    def n_rows(self) -> int:
        return self.values.shape[0]

    @property
    def is_sparse(self) -> bool:
        return sp.issparse(self.values)

    def column(self, index: int) -> np.ndarray:
        """One column of the value matrix as a dense float vector (see :func:`column_of`)."""
        return column_of(self.values, index)

    def dense_values(self) -> np.ndarray:
        """The value matrix as a dense array (a copy for sparse chunks)."""
        return cast(sp.csr_matrix, self.values).toarray() if self.is_sparse else self.values


def concatenate(chunks: list[Chunk], n_attributes: int, text_columns=()) -> Chunk:
    """Join chunks row-wise into one chunk (sparse if the first one is)."""
    if not chunks:
        return Chunk(np.zeros((0, n_attributes)), {c: [] for c in text_columns})
    if chunks[0].is_sparse:
        values = sp.vstack([c.values for c in chunks], format="csr")
    else:
        values = np.vstack([c.dense_values() for c in chunks])
    text = {c: [v for chunk in chunks for v in chunk.text[c]] for c in chunks[0].text}
    if any(c.weights is not None for c in chunks):
        weights = np.concatenate([c.weights if c.weights is not None else np.ones(c.n_rows) for c in chunks])
    else:
        weights = None
    return Chunk(values, text, weights)


def column_of(values, index: int) -> np.ndarray:
    """Column ``index`` of a dense array or a sparse matrix, as a dense float vector; a CSR
    matrix's stored entries are looked up directly, without slicing the matrix."""
    if not sp.issparse(values):
        return np.asarray(values[:, index], dtype=float)
    matrix = cast(sp.csr_matrix, values).tocsr()
    column = np.zeros(matrix.shape[0])
    entries = np.flatnonzero(matrix.indices == index)
    rows = np.searchsorted(matrix.indptr, entries, side="right") - 1
    column[rows] = matrix.data[entries]
    return column


_RANGE_ITEM = re.compile(r"^(first|last|\d+)(?:-(first|last|\d+))?$")


def weka_range(text: str, n_attributes: int, flag: str) -> tuple[np.ndarray, set[int]]:
    """The 0-based positions a Weka attribute range names (``first-3,5,last``: 1-based, inclusive,
    comma-separated), sorted, and the positions named as single items (not inside a span);
    FilterkitError naming the option ``flag`` when the range is malformed or out of 1…n."""
    chosen: set[int] = set()
    single: set[int] = set()
    for item in text.replace(" ", "").split(","):
        match = _RANGE_ITEM.match(item.lower())
        if not match:
            raise FilterkitError(f"option {flag}: {text!r} is not a range like first-3,5,last")
        bounds = [1 if b == "first" else n_attributes if b == "last" else int(b) for b in match.groups() if b]
        low, high = bounds[0], bounds[-1]
        if not 1 <= low <= high <= n_attributes:
            raise FilterkitError(f"option {flag}: {item!r} is not within 1-{n_attributes}")
        chosen.update(range(low - 1, high))
        if len(bounds) == 1:
            single.add(low - 1)
    return np.array(sorted(chosen), dtype=np.int64), single
