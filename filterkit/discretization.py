"""Cut points for discretizing numeric features, as Weka 3.6 finds them.

:func:`mdl_cut_points` is Fayyad & Irani's supervised method ("Multi-Interval Discretization of
Continuous-Valued Attributes for Classification Learning", IJCAI 1993, §3) as Weka 3.6.14's
``supervised.attribute.Discretize`` implements it, on a feature's sorted distinct values and
their class counts; :func:`mdl_cut_points_by_feature` runs it on many features in one batch.
:func:`weka_decimal` prints a number as Weka's ``Utils.doubleToString`` does.
"""

from __future__ import annotations

import math
from decimal import Decimal

import numpy as np

_LN2 = math.log(2.0)
#: Up to this many spans, :func:`_running_sums` sums each alone (cheaper than padding them).
_FEW_SPANS = 8


def _x_log_x(counts: np.ndarray) -> np.ndarray:
    """``c · ln c`` elementwise, 0 where ``c ≤ 0`` (Weka's ``ContingencyTables.lnFunc``)."""
    positive = counts > 0
    return np.where(positive, counts * np.log(np.where(positive, counts, 1.0)), 0.0)


#: Whole counts below this take their logarithm from a table (:func:`_ln`).
_TABLED_COUNTS = 1 << 16
#: ``math.log(k)`` at ``k - 1``, for k = 1, 2, …: grown by doubling as larger counts come, up to ``_TABLED_COUNTS``.
_log_table = np.zeros(0)


def _ln(values: np.ndarray) -> np.ndarray:
    """``math.log`` of each value that is positive or NaN, 0 for the others (the scalar logarithm rounds
    as the one-feature sums did).  Class counts are mostly small whole numbers: those are read from a table
    of ``math.log`` of each, and only the other values take a call each (a Python call per value had cost a
    tenth of `words … ig` on 58 classes)."""
    global _log_table
    defined = ~(values <= 0)
    logs = np.zeros(values.shape)
    given = values[defined]
    whole = (given == np.floor(given)) & (given <= _TABLED_COUNTS)
    found = np.empty(len(given))
    if whole.any():
        counts = given[whole].astype(np.int64)
        largest, table = int(counts.max()), _log_table  # this call's table, whatever another thread sets
        if largest > len(table):
            size = min(_TABLED_COUNTS, 1 << (largest - 1).bit_length())
            table = _log_table = np.fromiter(map(math.log, range(1, size + 1)), dtype=np.float64, count=size)
        found[whole] = table[counts - 1]
    rest = given[~whole]
    found[~whole] = np.fromiter(map(math.log, rest.tolist()), dtype=np.float64, count=len(rest))
    logs[defined] = found
    return logs


def _class_entropies(counts: np.ndarray) -> np.ndarray:
    """The entropy in bits of each row's class distribution, as Weka's ``ContingencyTables.entropy``,
    summed class by class in Weka's order."""
    terms = np.where(counts > 0, counts * _ln(counts), 0.0)
    negated = -np.cumsum(terms, axis=1)[:, -1]  # (0 − t₀) − t₁ … is −(t₀ + t₁ …) to the bit
    total = np.cumsum(counts, axis=1)[:, -1]
    entropy = (negated + np.where(total > 0, total * _ln(total), 0.0)) / np.where(
        np.abs(total) < 1e-6, 1.0, total * _LN2
    )
    return np.where(np.abs(total) < 1e-6, 0.0, entropy)


def _split_entropies(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Per candidate split (one row of ``left`` and ``right`` each), the class entropy in bits
    conditioned on the side, summed in the order of Weka's ``entropyConditionedOnRows`` (left's
    classes, left's total, right's classes, right's total) so ties resolve as Weka's do."""
    left_total, right_total = np.cumsum(left, axis=1)[:, -1], np.cumsum(right, axis=1)[:, -1]
    terms = np.concatenate(
        [_x_log_x(left), -_x_log_x(left_total)[:, None], _x_log_x(right), -_x_log_x(right_total)[:, None]], axis=1
    )
    accumulated = np.cumsum(terms, axis=1)[:, -1]
    grand_total = left_total + right_total
    empty = np.abs(grand_total) < 1e-6
    return np.where(empty, 0.0, -accumulated / np.where(empty, 1.0, grand_total * _LN2))


def _log2_of_choices(k: int) -> float:
    """log2(3^k − 2) as Weka computes it: Infinity once 3^k passes the largest double (k ≥ 647), NaN for k = 0."""
    if not k:
        return math.nan
    try:
        return math.log(3.0**k - 2.0) / _LN2
    except OverflowError:
        return math.inf


def _accepts_splits(
    prior: np.ndarray,
    left: np.ndarray,
    right: np.ndarray,
    prior_entropy: np.ndarray,
    gain: np.ndarray,
    candidates: np.ndarray,
) -> np.ndarray:
    """Fayyad & Irani's MDL criterion (1993, §3.2) for each set's best split: the gain must exceed
    ``(log2(N − 1) + Δ) / N``, Δ = log2(3^k − 2) − (k·Ent(S) − k₁·Ent(S₁) − k₂·Ent(S₂)), with Weka's
    ``numCutPoints`` (``candidates``) for N − 1 and the summed weight for N."""
    classes, classes_left, classes_right = ((side > 0).sum(axis=1) for side in (prior, left, right))
    log2_of_choices = np.array([_log2_of_choices(k) for k in range(int(classes.max(initial=0)) + 1)])
    delta = log2_of_choices[classes] - (
        classes * prior_entropy - classes_right * _class_entropies(right) - classes_left * _class_entropies(left)
    )
    return gain > (_ln(candidates.astype(np.float64)) / _LN2 + delta) / prior.sum(axis=1)


def _running_sums(data: np.ndarray, first: np.ndarray, stop: np.ndarray) -> np.ndarray:
    """The running sums within each of the disjoint spans ``[first_s, stop_s)`` (elsewhere 0), in order:
    one ``cumsum`` per span, spans of similar length at once (padded with zeros)."""
    running = np.zeros_like(data)
    if len(first) <= _FEW_SPANS:
        for span_first, span_stop in zip(first.tolist(), stop.tolist(), strict=True):
            running[span_first:span_stop] = np.cumsum(data[span_first:span_stop], axis=0)
        return running
    lengths = stop - first
    _, exponent = np.frexp(lengths)
    for size_class in np.unique(exponent).tolist():
        chosen = exponent == size_class
        offsets = np.arange(int(lengths[chosen].max()))
        inside = offsets[None, :] < lengths[chosen, None]
        positions = first[chosen, None] + offsets[None, :]
        block = np.where(
            inside.reshape(inside.shape + (1,) * (data.ndim - 1)), data[np.where(inside, positions, 0)], 0.0
        )
        running[positions[inside]] = np.cumsum(block, axis=1)[inside]
    return running


def midpoints(values: np.ndarray) -> np.ndarray:
    """The midpoint of each two neighbouring ``values``, as Weka computes it: infinite where the
    sum passes the largest double or one of them is infinite, NaN between −∞ and ∞."""
    with np.errstate(over="ignore", invalid="ignore"):
        return (values[:-1] + values[1:]) / 2.0


def mdl_cut_points(
    values: np.ndarray,
    class_counts: np.ndarray,
    *,
    better_encoding: bool = False,
    row_counts: np.ndarray | None = None,
) -> np.ndarray:
    """The sorted cut points Weka 3.6's supervised ``Discretize`` finds for one feature.

    ``values`` are the sorted distinct non-missing values, ``class_counts`` (values × classes) each
    class's summed weight at each.  A set is split at the midpoint of the boundary leaving the
    least class entropy (the first on ties), recursively, while the MDL criterion accepts it; its
    "N − 1" is the set's rows (``row_counts``, else the summed weights) less one, or with
    ``better_encoding`` (Weka's ``-E``, as its evaluators use) the candidate boundaries.
    """
    starts = np.array([0, len(values)])
    return mdl_cut_points_by_feature(
        values, class_counts, starts, better_encoding=better_encoding, row_counts=row_counts
    )[0]


def mdl_cut_points_by_feature(
    values: np.ndarray,
    class_counts: np.ndarray,
    starts: np.ndarray,
    *,
    better_encoding: bool = False,
    row_counts: np.ndarray | None = None,
) -> list[np.ndarray]:
    """:func:`mdl_cut_points` of many features at once, feature ``f``'s values being
    ``values[starts[f]:starts[f + 1]]``: each round splits every pending set together, each sum
    in the one-feature order, so the cut points are the one-feature method's to the bit."""
    values = np.asarray(values, dtype=np.float64)
    starts = np.asarray(starts, dtype=np.int64)
    if len(values) < 2 or not np.size(class_counts):  # no boundary to cut at, or no class to separate
        return [np.zeros(0) for _ in range(len(starts) - 1)]
    class_counts = np.ascontiguousarray(class_counts, dtype=np.float64).reshape(len(values), -1)
    rows = class_counts.sum(axis=1) if row_counts is None else np.asarray(row_counts, dtype=np.float64)
    feature_of = np.repeat(np.arange(len(starts) - 1), np.diff(starts))
    feature_first = starts[:-1][feature_of]
    rows_through = _running_sums(rows, starts[:-1], starts[1:])
    between = midpoints(values)
    found_feature, found_cut = [np.zeros(0, dtype=np.int64)], [np.zeros(0)]
    first, stop = starts[:-1], starts[1:]
    while len(first):
        first, stop = first[stop - first >= 2], stop[stop - first >= 2]
        weight_of_rows = rows_through[stop - 1] - np.where(first > feature_first[first], rows_through[first - 1], 0.0)
        heavy = ~(weight_of_rows < 2)
        first, stop, weight_of_rows = first[heavy], stop[heavy], weight_of_rows[heavy]
        if not len(first):
            break
        running = _running_sums(class_counts, first, stop)
        prior = running[stop - 1]
        boundaries = stop - first - 1
        offsets = np.concatenate([[0], np.cumsum(boundaries)[:-1]])
        of_set = np.repeat(np.arange(len(first)), boundaries)
        position = first[of_set] + np.arange(len(of_set)) - offsets[of_set]
        left = running[position]
        entropies = _split_entropies(left, prior[of_set] - left)
        least = np.minimum.reduceat(entropies, offsets)[of_set]
        is_least = (entropies == least) | (np.isnan(entropies) & np.isnan(least))
        best = np.minimum.reduceat(np.where(is_least, np.arange(len(position)), len(position)), offsets)
        prior_entropy = _class_entropies(prior)
        gain = prior_entropy - entropies[best]
        accepted = gain > 0
        best_left = left[best[accepted]]
        candidates = boundaries if better_encoding else weight_of_rows - 1
        accepted[accepted] = _accepts_splits(
            prior[accepted],
            best_left,
            prior[accepted] - best_left,
            prior_entropy[accepted],
            gain[accepted],
            candidates[accepted],
        )
        cut_at = position[best[accepted]]
        found_feature.append(feature_of[cut_at])
        found_cut.append(between[cut_at])
        first, stop = np.concatenate([first[accepted], cut_at + 1]), np.concatenate([cut_at + 1, stop[accepted]])
    features, cuts = np.concatenate(found_feature), np.concatenate(found_cut)
    order = np.lexsort((cuts, features))
    bounds = np.searchsorted(features[order], np.arange(len(starts)))
    return np.split(cuts[order], bounds[1:-1])


def weka_decimal(value: float, decimals: int = 6) -> str:
    """``value`` as Weka's ``Utils.doubleToString(value, decimals)`` prints it: rounded half up in
    magnitude, trailing zeros dropped; Java's ``Double.toString`` past 2⁶³ / 10^decimals."""
    scaled = value * 10.0**decimals
    if not abs(scaled) < 9.223372036854776e18:
        return _java_double(value)
    digits = int(scaled + 0.5) if scaled > 0 else -int(abs(scaled) + 0.5)
    if digits == 0:
        return "0"
    sign, magnitude = ("-" if digits < 0 else ""), str(abs(digits)).rjust(decimals + 1, "0")
    whole, fraction = magnitude[: len(magnitude) - decimals], magnitude[len(magnitude) - decimals :].rstrip("0")
    return f"{sign}{whole}.{fraction}" if fraction else f"{sign}{whole}"


def _java_double(value: float) -> str:
    """``value`` as Java's ``Double.toString`` writes it."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0 or 1e-3 <= abs(value) < 1e7:
        return repr(value)
    sign, digit_tuple, exponent = Decimal(repr(value)).normalize().as_tuple()
    digits = "".join(map(str, digit_tuple))
    power = len(digits) + int(exponent) - 1
    return f"{'-' if sign else ''}{digits[0]}.{digits[1:] or '0'}E{power}"
