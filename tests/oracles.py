"""Short Python versions of what the compiled modules do, that the tests compare them with.

The compiled modules (filterkit/arff/_speedups.c, filterkit/_kernels.c) are the package's fast
paths; where the package has no Python path beside one (the Python paths ``filterkit.kernels.compiled``
switches to are the package's own, reached by real inputs), the tests check it against these: the
row printer (:func:`format_rows_in_python`, and every writer by :func:`printed_in_python`), the bulk
numeric attributes, a chunk's entries and column ranges, and the row normalizers' stored values.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator

import numpy as np
import pytest

from filterkit import kernels
from filterkit.arff import writer
from filterkit.arff.tokens import SEPARATORS
from filterkit.arff.writer import EXACT, NumberFormat, float32_decimal
from filterkit.schema import NUMERIC


def gather_rows(block: bytes, start: int, rows: int, size: int, line_bytes: int):
    """What ``_speedups.gather_rows`` gives: the data rows of ``block`` from byte ``start``, stripped of
    separators (lines of separators alone and ``%`` comments left out) until ``rows`` rows or ``size`` bytes,
    as ``(text, lines, stop, seen, too_long)``."""
    gathered: list[bytes] = []
    line_of: list[int] = []
    at, seen, held = start, 0, 0
    while at < len(block):
        end = block.index(b"\n", at)
        if end - at > line_bytes:
            return b"\n".join(gathered), np.array(line_of, np.int64).tobytes(), at, seen, True
        line = block[at:end].strip(SEPARATORS.encode("ascii"))
        at = end + 1
        seen += 1
        if not line or line[0] == 37:  # '%'
            continue
        gathered.append(line)
        line_of.append(seen - 1)
        held += len(line) + 1
        if len(gathered) == rows or held >= size:
            break
    return b"\n".join(gathered), np.array(line_of, np.int64).tobytes(), at, seen, False


def entry_arrays(counts) -> dict:
    """A ``ValueCounts``' entries (:meth:`~filterkit.statistics.ValueCounts.entries`) by name, the sums rounded."""
    feature, value, label, sums = counts.entries()
    return {"feature": feature, "value": value, "label": label, "count": sums.to_float()}


def java_order(word: str) -> bytes:
    """The sort key that orders strings as Java's ``String.compareTo`` (by UTF-16 code units), which the
    ``words`` vocabulary's compiled ``java_order`` sorts by."""
    return word.encode("utf-16-be", "surrogatepass")


def format_numbers_in_python(values, numbers: NumberFormat = EXACT) -> list[str]:
    """What the compiled printer writes (:func:`filterkit.arff.writer.format_numbers`), by Python's repr: each
    value rounded first as ``numbers`` asks (to the double of its N-digit decimal, or of ``float32_decimal`` of
    its nearest float32, where finite), then whole numbers below 2**53 as integers ("-0" for negative zero),
    NaN as ``?``, ±inf as ``Infinity``, the others as repr writes them."""
    texts = []
    for value in np.asarray(values, dtype=np.float64).tolist():
        with np.errstate(over="ignore"):
            narrow = float(np.float32(value))
        if numbers.float32 and math.isfinite(narrow):
            value = float32_decimal(narrow)
        elif numbers.digits and not numbers.exact and math.isfinite(value):
            rounded = float(f"{value:.{numbers.digits - 1}e}")
            value = rounded if math.isfinite(rounded) else value
        if value != value:
            texts.append("?")
        elif math.isinf(value):
            texts.append("Infinity" if value > 0 else "-Infinity")
        elif abs(value) < 2.0**53 and value == int(value):
            texts.append("-0" if value == 0 and math.copysign(1, value) < 0 else str(int(value)))
        else:
            texts.append(repr(value))
    return texts


def format_rows_in_python(
    indptr, columns, values, special, texts, sparse, digits=0, float32=False, into=None, weights=None
):
    """What ``_speedups.format_rows`` writes for entries flagged 0 (a number) or 1 (the next of ``texts``),
    by :func:`format_numbers_in_python`: the text, or its length once put in the bytearray ``into``."""
    special = np.asarray(special, dtype=bool)
    cells = np.empty(len(values), dtype=object)
    cells[~special] = format_numbers_in_python(values[~special], NumberFormat(digits or None, bool(float32)))
    cells[special] = texts[: int(special.sum())]
    if sparse:
        cells = [f"{column} {cell}" for column, cell in zip(columns.tolist(), cells.tolist())]
    bounds = indptr.tolist()
    rows = [",".join(cells[bounds[r] : bounds[r + 1]]) for r in range(len(bounds) - 1)]
    if sparse:
        rows = ["{" + row + "}" for row in rows]
    if weights is not None:
        rows = [
            row if w == 1.0 else f"{row} {{{format_numbers_in_python([w])[0]}}}"
            for row, w in zip(rows, weights.tolist())
        ]
    text = "".join(row + "\n" for row in rows).encode("utf-8")
    if into is None:
        return text
    into[: len(text)] = text
    return len(text)


def _printing_in_python(
    indptr, columns, values, special, texts, sparse, digits=0, float32=False, into=None, weights=None, labels=None,
    by_column=False,
):  # fmt: skip
    """``_speedups.format_rows`` as :func:`printed_in_python` puts it: the one pass by column declined (None), so
    a writer makes each entry's text; every other call by :func:`format_rows_in_python`."""
    if by_column:
        return None
    assert not (np.asarray(special) == 2).any(), "a writer made within printed_in_python makes labels texts"
    return format_rows_in_python(indptr, columns, values, special, texts, sparse, digits, float32, into, weights)


@contextlib.contextmanager
def printed_in_python() -> Iterator[None]:
    """Within the block, every writer (ARFF, CSV, svmlight, ``format_numbers``) prints its rows by
    :func:`format_rows_in_python`: each label a text made in Python, as past ``MOST_TABLED_LABELS`` labels,
    and the compiled printer replaced by that oracle (the library has no Python printer to switch to)."""
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(writer, "MOST_TABLED_LABELS", -1)
        patched.setattr(kernels.speedups, "format_rows", _printing_in_python)
        yield


def printer(compiled: bool) -> contextlib.AbstractContextManager:
    """Within the block, every writer prints by the compiled printer (as always) or, not ``compiled``, by
    :func:`printed_in_python`."""
    return contextlib.nullcontext() if compiled else printed_in_python()


def numeric_attributes(cls, names: list[str], declared_types: list[str]) -> list:
    """What ``_speedups.numeric_attributes`` makes for :meth:`filterkit.schema.Attribute.numerics`: instances of
    ``cls`` made without the constructor, holding only the fields that differ from the class's defaults."""
    made = []
    for name, declared_type in zip(names, declared_types, strict=True):
        attribute = object.__new__(cls)
        attribute.__dict__.update(name=name, kind=NUMERIC, declared_type=declared_type)
        made.append(attribute)
    return made


def sparse_entries(indptr, indices, data, position, labels, n_classes: int):
    """What ``_kernels.sparse_entries`` finds in CSR arrays: ``(rows, columns, pairs, values)`` of each stored
    entry whose column has a ``position`` (not −1), whose value is not 0 and whose row's label is not −1, its
    column given by its position and its pair numbered ``column * n_classes + label``."""
    rows = np.repeat(np.arange(len(indptr) - 1, dtype=np.int64), np.diff(indptr))
    columns, values = position[indices], np.asarray(data, dtype=np.float64)
    keep = (columns >= 0) & (values != 0) & (labels[rows] >= 0)
    rows, columns, values = rows[keep], columns[keep], values[keep]
    return rows, columns, columns * n_classes + labels[rows], values


def column_ranges(columns, values, n: int):
    """What ``_kernels.column_ranges`` gives: per column of ``n``, the smallest and largest of the entries'
    values (±inf for none)."""
    low, high = np.full(n, np.inf), np.full(n, -np.inf)
    np.minimum.at(low, columns, values)
    np.maximum.at(high, columns, values)
    return low, high


#: A row's largest power |x|^p below this leaves too few bits (or none) above the subnormal range.
_SMALLEST_SAFE_POWER = 2.0**-968


def normalized_stored(matrix, stored, features, order: int) -> np.ndarray:
    """What the ``l1`` (``order`` 1) or ``l2`` (2) normalizer's ``_kernels.normalize_stored`` makes of the stored
    values ``stored`` of the CSR ``matrix``: each row's ``features`` divided by the row's norm, the powers
    added in stored order by bincount, and a row whose plain norm is unsafe scaled by a power of two near its
    largest value (or, holding an infinity, set to its limit: ±1 there, 0 elsewhere) and normed again."""
    acted_column = np.zeros(matrix.shape[1], dtype=bool)
    acted_column[features] = True
    acted_entry = acted_column[matrix.indices]
    magnitudes = np.where(acted_entry & ~np.isnan(stored), np.abs(stored), 0.0)
    rows = np.repeat(np.arange(matrix.shape[0]), np.diff(matrix.indptr))

    def norms_of(values):
        with np.errstate(over="ignore", under="ignore"):
            return np.bincount(rows, weights=values**order, minlength=matrix.shape[0]) ** (1.0 / order)

    norms = norms_of(magnitudes)
    maxima = np.zeros(matrix.shape[0])
    np.maximum.at(maxima, rows, magnitudes)
    with np.errstate(over="ignore", under="ignore"):
        unsafe = (maxima > 0) & (~np.isfinite(norms) | (maxima**order < _SMALLEST_SAFE_POWER))
    data = stored
    if unsafe.any():
        shift = np.where(unsafe & np.isfinite(maxima), -np.frexp(maxima)[1], 0)
        with np.errstate(over="ignore"):
            scaled = np.ldexp(data, shift[rows])
        limit = np.where(np.isinf(scaled), np.sign(scaled), np.where(np.isnan(scaled), np.nan, 0.0))
        data = np.where(acted_entry, np.where(np.isinf(maxima)[rows], limit, scaled), data)
        norms = np.where(unsafe, norms_of(np.where(acted_entry & ~np.isnan(stored), np.abs(data), 0.0)), norms)
    return np.where(acted_entry, data / np.where(norms > 0, norms, 1.0)[rows], data)
