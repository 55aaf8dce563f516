"""Conversions between filterkit's (Schema, Chunk) and liac-arff's dict format.

liac-arff (``import arff``) holds a data set as a dict::

    {"relation": "weather",
     "description": "",
     "attributes": [("outlook", ["sunny", "rainy"]), ("temp", "REAL"), ("id", "STRING")],
     "data": [["sunny", 85.0, "a"], ["rainy", None, None]]}

It has no ``DATE`` or ``relational`` type and no instance weights (ArffError).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, cast

import numpy as np
import scipy.sparse as sp

from filterkit.arff.reader import parse_number
from filterkit.errors import ArffError
from filterkit.schema import DATE, NOMINAL, NUMERIC, RELATIONAL, STRING, Attribute, Chunk, Schema, shown_labels
from filterkit.text import shown

_LIAC_NUMERIC = {"NUMERIC": "numeric", "REAL": "real", "INTEGER": "integer"}


def to_liac(schema: Schema, chunk: Chunk) -> dict:
    """The liac-arff dict of ``schema`` and the rows of ``chunk``, each a dense list: numbers as floats
    (an ``INTEGER`` attribute's integral values as ints), labels, text, None for missing.  ArffError
    for a date or relational attribute and for weights other than 1 (liac-arff holds neither)."""
    types = [_liac_type(attribute) for attribute in schema.attributes]
    if chunk.weights is not None and np.any(chunk.weights != 1.0):
        raise ArffError("liac-arff has no instance weights: the data has weights other than 1")
    matrix = chunk.dense_values()
    columns = []
    for position, (attribute, kind) in enumerate(zip(schema.attributes, types)):
        cell = _liac_cell(attribute, kind, chunk.text.get(position))
        columns.append([None if v != v else cell(row, v) for row, v in enumerate(matrix[:, position].tolist())])
    data = [list(row) for row in zip(*columns)] if columns else [[] for _ in range(chunk.n_rows)]
    return {
        "relation": schema.relation,
        "description": "",
        "attributes": [
            (attribute.name, list(attribute.labels) if kind is None else kind)
            for attribute, kind in zip(schema.attributes, types)
        ],
        "data": data,
    }


def _liac_cell(attribute: Attribute, kind: str | None, side) -> Callable[[int, float], Any]:
    """How :func:`to_liac` shows a present value of ``attribute`` in a row."""
    if attribute.kind == NOMINAL:
        return lambda row, v: attribute.labels[int(v)]
    if attribute.kind == STRING:
        return lambda row, v: side[row]
    if kind == "INTEGER":
        return lambda row, v: int(v) if math.isfinite(v) and v == int(v) else v
    return lambda row, v: v


def _liac_type(attribute: Attribute) -> str | None:
    """liac-arff's type name for ``attribute`` (None for nominal)."""
    if attribute.kind == NUMERIC:
        return (attribute.declared_type or "numeric").upper()
    if attribute.kind == STRING:
        return "STRING"
    if attribute.kind == NOMINAL:
        return None
    if attribute.kind == DATE:
        raise ArffError(
            f"attribute '{attribute.name}' is a date: liac-arff has no DATE type "
            "(convert it to numeric or string first)"
        )
    if attribute.kind == RELATIONAL:
        raise ArffError(f"attribute '{attribute.name}' is relational: liac-arff has no relational type")
    raise ArffError(f"attribute '{attribute.name}' has a kind liac-arff cannot hold: {attribute.kind}")


def from_liac(obj: dict) -> tuple[Schema, Chunk]:
    """The schema and one chunk of all rows of a liac-arff dict.

    ``data`` may be dense rows (lists), sparse rows (dicts, ``arff.LOD``) or a ``(values, rows,
    columns)`` triple (``arff.COO``); the sparse forms give a CSR chunk, a string omitted from a
    sparse row reading as "".  ArffError naming the attribute and data row for an unknown type
    (``DATE`` included), an undeclared label, a value that is not a number, or a row's length.
    """
    if not isinstance(obj, dict) or "attributes" not in obj:
        raise ArffError("not a liac-arff dict: it needs 'relation', 'attributes' and 'data'")
    relation = "" if obj.get("relation") is None else obj["relation"]
    attributes = []
    seen = set()
    for position, declaration in enumerate(obj["attributes"], 1):
        attribute = _attribute_of(position, declaration)
        if attribute.name in seen:
            raise ArffError(f"attribute '{attribute.name}' is declared twice")
        seen.add(attribute.name)
        attributes.append(attribute)
    schema = Schema(str(relation), tuple(attributes))
    data = [] if obj.get("data") is None else obj["data"]
    if isinstance(data, tuple) and len(data) == 3:
        return schema, _from_coo(schema, data)
    rows = list(data)
    if rows and isinstance(rows[0], dict):
        return schema, _from_sparse_rows(schema, rows)
    return schema, _from_dense_rows(schema, rows)


def _attribute_of(position: int, declaration) -> Attribute:
    try:
        name, kind = declaration
    except (TypeError, ValueError):
        raise ArffError(f"attribute {position}: expected a (name, type) pair, found {declaration!r}") from None
    name = str(name)
    if isinstance(kind, (list, tuple)):
        labels = tuple(str(label) for label in kind)
        if len(set(labels)) != len(labels):
            raise ArffError(f"attribute '{name}': a label is declared twice")
        return Attribute(name, NOMINAL, labels=labels)
    if isinstance(kind, str):
        upper = kind.strip().upper()
        if upper in _LIAC_NUMERIC:
            return Attribute(name, NUMERIC, declared_type=_LIAC_NUMERIC[upper])
        if upper == "STRING":
            return Attribute(name, STRING)
        if upper.startswith("DATE"):
            raise ArffError(f"attribute '{name}': liac-arff has no DATE type (found {kind!r})")
    raise ArffError(
        f"attribute '{name}': unknown liac-arff type {kind!r} "
        "(expected NUMERIC, REAL, INTEGER, STRING or a list of labels)"
    )


class _Converter:
    """Turns liac-arff values into matrix values, column by column."""

    def __init__(self, schema: Schema):
        self.attributes = schema.attributes
        self.codes = [
            {label: float(code) for code, label in enumerate(a.labels)} if a.kind == NOMINAL else None
            for a in schema.attributes
        ]

    def value(self, column: int, value, row: int, texts: dict) -> float:
        """The matrix value of ``value`` in ``column``; text goes to ``texts[column][row]``."""
        attribute = self.attributes[column]
        if value is None:
            if attribute.kind == STRING:
                texts[column][row] = None
            return np.nan
        if attribute.kind == NOMINAL:
            code = cast(dict[str, float], self.codes[column]).get(str(value))  # a nominal column has codes
            if code is None:
                raise ArffError(
                    f"data row {row + 1}: value {shown(str(value))} is not a label of attribute "
                    f"{shown(attribute.name)} {shown_labels(attribute.labels)}"
                )
            return code
        if attribute.kind == STRING:
            texts[column][row] = str(value)
            return 0.0
        if isinstance(value, str):
            # text is read as an ARFF file's number is (Java's grammar: 'nan', 'inf' and
            # non-ASCII digits are not numbers)
            try:
                return parse_number(value, attribute.name)
            except ArffError as error:
                raise ArffError(f"data row {row + 1}: {error.message}") from None
        try:
            return float(value)
        except (TypeError, ValueError):
            raise ArffError(
                f"data row {row + 1}: value {value!r} of attribute '{attribute.name}' is not a number"
            ) from None


def _from_dense_rows(schema: Schema, rows: list) -> Chunk:
    n_columns = len(schema.attributes)
    converter = _Converter(schema)
    matrix = np.zeros((len(rows), n_columns))
    texts = {c: [None] * len(rows) for c in schema.text_columns()}
    for r, row in enumerate(rows):
        if not isinstance(row, (list, tuple, np.ndarray)) or len(row) != n_columns:
            found = f"{len(row)} values" if isinstance(row, (list, tuple, np.ndarray)) else repr(row)[:80]
            raise ArffError(f"data row {r + 1}: expected {n_columns} values, found {found}")
        for c, value in enumerate(row):
            matrix[r, c] = converter.value(c, value, r, texts)
    return Chunk(matrix, texts)


def _check_index(index, n_columns: int, row: int) -> int:
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or not 0 <= index < n_columns:
        raise ArffError(f"data row {row + 1}: attribute index {index!r} is not in 0 to {n_columns - 1}")
    return int(index)


def _from_sparse_rows(schema: Schema, rows: list) -> Chunk:
    n_columns = len(schema.attributes)
    converter = _Converter(schema)
    texts = {c: [""] * len(rows) for c in schema.text_columns()}
    indptr = [0]
    indices: list[int] = []
    values: list[float] = []
    for r, row in enumerate(rows):
        if not isinstance(row, dict):
            raise ArffError(f"data row {r + 1}: a dense row among sparse (dict) rows")
        for index in sorted(_check_index(i, n_columns, r) for i in row):
            indices.append(index)
            values.append(converter.value(index, row[index], r, texts))
        indptr.append(len(indices))
    arrays = (np.asarray(values, dtype=np.float64), np.asarray(indices, dtype=np.int64), np.asarray(indptr))
    matrix = sp.csr_matrix(arrays, shape=(len(rows), n_columns))
    matrix.eliminate_zeros()
    return Chunk(matrix, texts)


def _from_coo(schema: Schema, triple) -> Chunk:
    data, rows, columns = (list(part) for part in triple)
    if not len(data) == len(rows) == len(columns):
        raise ArffError("COO data: values, rows and columns differ in length")
    if rows and min(rows) < 0:
        raise ArffError(f"COO data: row index {min(rows)} is negative")
    sparse_rows: list[dict] = [{} for _ in range(max(rows) + 1 if rows else 0)]
    for value, row, column in zip(data, map(int, rows), columns):
        index = _check_index(column, len(schema.attributes), row)
        if index in sparse_rows[row]:
            raise ArffError(f"data row {row + 1}: attribute index {index} appears twice")
        sparse_rows[row][index] = value
    return _from_sparse_rows(schema, sparse_rows)
