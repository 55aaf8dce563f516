"""Short Python versions of what the compiled modules do, that the tests compare them with.

The compiled modules (filterkit/arff/_speedups.c, filterkit/_kernels.c) are the only path the
package runs; where no other oracle exists (liac-arff, the reader's tokenizer, repr, plain
numpy), the tests check them against these.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

import filterkit_plugins.normalizers as normalizers
import filterkit_plugins.shaper as shaper
from filterkit import exact, statistics
from filterkit.arff import reader, writer
from filterkit.arff.writer import EXACT, NumberFormat, float32_decimal
from filterkit.stage import stored_in_features


def gather_rows(block: bytes, start: int, rows: int, size: int, line_bytes: int):
    """What ``_speedups.gather_rows`` gives: the stripped data rows of ``block`` from byte
    ``start`` (blank lines and ``%`` comments left out) until ``rows`` rows or ``size`` bytes,
    as ``(text, lines, stop, seen, too_long)``."""
    gathered: list[bytes] = []
    line_of: list[int] = []
    at, seen, held = start, 0, 0
    while at < len(block):
        end = block.index(b"\n", at)
        if end - at > line_bytes:
            return b"\n".join(gathered), np.array(line_of, np.int64).tobytes(), at, seen, True
        line = block[at:end].strip()
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


def _declined(*_arguments):
    raise reader._NotPlain


def tokenizer_only(monkeypatch) -> None:
    """Make the reader read every row with its tokenizer (the compiled parsers decline all)."""
    monkeypatch.setattr(reader, "_parse_sparse_plain", _declined)
    monkeypatch.setattr(reader, "_parse_dense_plain", _declined)


def format_numbers(values, numbers: NumberFormat = EXACT) -> list[str]:
    """What ``writer.format_numbers`` (the compiled printer) writes, by repr: each value rounded
    first as ``numbers`` asks (to the double of its N-digit decimal, or of float32_decimal of
    its nearest float32, where finite), then whole numbers below 2**53 as integers ("-0" for
    negative zero), NaN as ``?``, ±inf as ``Infinity``, the others as repr writes them."""
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


def format_rows(indptr, columns, values, special, texts, sparse, digits=0, float32=False, into=None, weights=None):
    """What ``_speedups.format_rows`` writes, by :func:`format_numbers`: the rows' entries
    (numbers, or where ``special`` is set the next of ``texts``), sparse ``{c v,c v}`` or dense
    ``v,v``, a weight that is not 1 as `` {w}``; the text, or its length once put in ``into``."""
    special = np.asarray(special, dtype=bool)
    cells = np.empty(len(values), dtype=object)
    cells[~special] = format_numbers(values[~special], NumberFormat(digits or None, bool(float32)))
    cells[special] = texts[: int(special.sum())]
    if sparse:
        cells = [f"{column} {cell}" for column, cell in zip(columns.tolist(), cells.tolist())]
    bounds = indptr.tolist()
    rows = [",".join(cells[bounds[r] : bounds[r + 1]]) for r in range(len(bounds) - 1)]
    if sparse:
        rows = ["{" + row + "}" for row in rows]
    if weights is not None:
        rows = [row if w == 1.0 else f"{row} {{{format_numbers([w])[0]}}}" for row, w in zip(rows, weights.tolist())]
    text = "".join(row + "\n" for row in rows).encode("utf-8")
    if into is None:
        return text
    into[: len(text)] = text
    return len(text)


def python_formatter(monkeypatch) -> None:
    """Make the ARFF writer format its rows with :func:`format_rows` instead of the compiled module."""
    monkeypatch.setattr(writer, "_speedups", SimpleNamespace(format_rows=format_rows))


def entry_arrays(counts) -> dict:
    """A ``ValueCounts``' entries (:meth:`~filterkit.statistics.ValueCounts.entries`) by name, the sums rounded."""
    feature, value, label, sums = counts.entries()
    return {"feature": feature, "value": value, "label": label, "count": sums.to_float()}


def sparse_entries(matrix, position, labels, n_classes):
    """What ``_kernels.sparse_entries`` gives (``statistics._compiled_entries``): the non-zero
    stored entries of the feature columns (``position`` ≥ 0) in rows of a known class
    (``labels`` ≥ 0), as ``(rows, columns, pairs, values)``, pairs ``column · n_classes + label``."""
    rows = np.repeat(np.arange(matrix.shape[0], dtype=np.int64), np.diff(matrix.indptr))
    columns, values = position[matrix.indices], np.asarray(matrix.data)
    keep = (columns >= 0) & (values != 0) & (labels[rows] >= 0)
    rows, columns, values = rows[keep], columns[keep], values[keep]
    return rows, columns, columns * n_classes + labels[rows], values


def column_ranges(columns, values, n):
    """What ``_kernels.column_ranges`` gives: per column of ``n``, its entries' least and greatest value."""
    low, high = np.full(n, np.inf), np.full(n, -np.inf)
    np.minimum.at(low, columns, values)
    np.maximum.at(high, columns, values)
    return low, high


def normalized_stored(stage, matrix, stored):
    """What ``_kernels.normalize_stored`` gives (``RowNormalizer._normalized_stored``), by numpy:
    the stored values with each row's features divided by its L1 or L2 norm, the powers added in
    stored order by bincount, and a row whose plain norm is unsafe scaled by a power of two near
    its largest value (or, holding an infinity, set to its limit) and normed again."""
    acted_entry = stored_in_features(matrix, stage.features)
    magnitudes = np.where(acted_entry & ~np.isnan(stored), np.abs(stored), 0.0)
    rows = np.repeat(np.arange(matrix.shape[0]), np.diff(matrix.indptr))

    def norms_of(values):
        with np.errstate(over="ignore", under="ignore"):
            return np.bincount(rows, weights=values**stage.order, minlength=matrix.shape[0]) ** (1.0 / stage.order)

    norms = norms_of(magnitudes)
    maxima = np.zeros(matrix.shape[0])
    np.maximum.at(maxima, rows, magnitudes)
    unsafe = stage._unsafe(norms, maxima)
    data = stored
    if unsafe.any():
        shift = np.where(unsafe & np.isfinite(maxima), -np.frexp(maxima)[1], 0)
        with np.errstate(over="ignore"):
            scaled = np.ldexp(data, shift[rows])
        data = np.where(acted_entry, normalizers._limit_of_infinite_rows(scaled, np.isinf(maxima)[rows]), data)
        norms = np.where(unsafe, norms_of(np.where(acted_entry & ~np.isnan(stored), np.abs(data), 0.0)), norms)
    return np.where(acted_entry, data / np.where(norms > 0, norms, 1.0)[rows], data)


def general_paths(monkeypatch) -> None:
    """Make the statistics, exact sums, shaper and row normalizers take their numpy paths (the
    ones for what the kernels decline), with the kernels' per-chunk entries and ranges found by
    :func:`sparse_entries` and :func:`column_ranges`."""
    monkeypatch.setattr(statistics, "_compiled_entries", sparse_entries)
    monkeypatch.setattr(statistics, "column_ranges", column_ranges)
    monkeypatch.setattr(statistics.ValueCounts, "_compiled_of_chunk", classmethod(lambda *_: None))
    monkeypatch.setattr(statistics.PresenceCounts, "_compiled_of_chunk", lambda *_: None)
    monkeypatch.setattr(exact, "_compiled_counts", lambda _: None)
    monkeypatch.setattr(exact, "_compiled_merge", lambda *_: None)
    for module in (exact, statistics):
        monkeypatch.setattr(module, "stable_order", lambda keys: np.argsort(keys, kind="stable"))
    monkeypatch.setattr(shaper.Shaper, "_compiled_tables", lambda _: None)
    monkeypatch.setattr(normalizers.RowNormalizer, "_normalized_stored", normalized_stored)
