"""Cut points for discretizing numeric features, as Weka 3.6 finds them.

:func:`mdl_cut_points` is the supervised method of Fayyad & Irani, "Multi-Interval
Discretization of Continuous-Valued Attributes for Classification Learning" (IJCAI 1993),
in the form Weka 3.6.14's ``weka.filters.supervised.attribute.Discretize`` implements it:
recursive binary splits at the boundary of least class entropy, each accepted by the MDL
criterion (§3 of the paper).  It works on a feature's sorted distinct values and the class
counts at each, so the caller can gather them from mergeable statistics in one pass.
:func:`weka_decimal` prints a number as Weka's ``Utils.doubleToString(value, 6)`` does,
the form of the range labels (``(-inf-2.45]``) in Weka's output.
"""

from __future__ import annotations

import math
from decimal import Decimal

import numpy as np

_LN2 = math.log(2.0)


def _x_log_x(counts: np.ndarray) -> np.ndarray:
    """``c · ln c`` elementwise, 0 where ``c ≤ 0`` (Weka's ``ContingencyTables.lnFunc``)."""
    positive = counts > 0
    return np.where(positive, counts * np.log(np.where(positive, counts, 1.0)), 0.0)


def class_entropy(counts: np.ndarray) -> float:
    """Entropy in bits of one class distribution given as (weighted) counts; 0 when the
    counts sum to less than 1e-6, as Weka's ``ContingencyTables.entropy``."""
    negated, total = 0.0, 0.0
    for count in counts.tolist():
        negated -= count * math.log(count) if count > 0 else 0.0
        total += count
    if abs(total) < 1e-6:
        return 0.0
    return (negated + (total * math.log(total) if total > 0 else 0.0)) / (total * _LN2)


def _split_entropies(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Per candidate split (one row of ``left`` and ``right`` each), the class entropy in bits
    conditioned on the side, summed in the order of Weka's ``entropyConditionedOnRows`` (left's
    classes, left's total, right's classes, right's total) so ties resolve as Weka's do."""
    accumulated = np.zeros(left.shape[0])
    grand_total = np.zeros(left.shape[0])
    for side in (left, right):
        side_total = np.zeros(side.shape[0])
        for column in range(side.shape[1]):
            accumulated = accumulated + _x_log_x(side[:, column])
            side_total = side_total + side[:, column]
        accumulated = accumulated - _x_log_x(side_total)
        grand_total = grand_total + side_total
    empty = np.abs(grand_total) < 1e-6
    return np.where(empty, 0.0, -accumulated / np.where(empty, 1.0, grand_total * _LN2))


def _accepts_split(prior: np.ndarray, left: np.ndarray, right: np.ndarray, candidates: int, weight: float) -> bool:
    """Fayyad & Irani's MDL criterion (1993, §3.2): the split's information gain must exceed
    ``(log2(N − 1) + Δ) / N``, with Δ = log2(3^k − 2) − (k·Ent(S) − k₁·Ent(S₁) − k₂·Ent(S₂)),
    k the classes present in a set.  Weka puts its ``numCutPoints`` where the paper has N − 1
    and the summed weight where it has N."""
    prior_entropy = class_entropy(prior)
    gain = prior_entropy - float(_split_entropies(left[None, :], right[None, :])[0])
    classes, classes_left, classes_right = (int(np.count_nonzero(side > 0)) for side in (prior, left, right))
    delta = math.log(3.0**classes - 2.0) / _LN2 - (
        classes * prior_entropy - classes_right * class_entropy(right) - classes_left * class_entropy(left)
    )
    return gain > (math.log(candidates) / _LN2 + delta) / weight


def mdl_cut_points(
    values: np.ndarray,
    class_counts: np.ndarray,
    *,
    better_encoding: bool = False,
    row_counts: np.ndarray | None = None,
) -> np.ndarray:
    """The sorted cut points Weka 3.6's supervised ``Discretize`` finds for one feature
    (Fayyad & Irani 1993, the MDL stopping rule, as Weka implements it).

    ``values`` are the feature's sorted distinct non-missing values and ``class_counts``
    (len(values) × classes) the summed weight of each class's rows at each value.  A set is
    split at the boundary between two adjacent values whose split leaves the least class
    entropy (the first such boundary on ties), the cut placed at the midpoint of the two
    values, and each half is split again, while the MDL criterion accepts the split.  Weka's
    defaults: the criterion's "N − 1" is the number of rows in the set less one (the count
    of the set's rows, ``row_counts``; the summed weights when not given);
    ``better_encoding=True`` (Weka's ``-E``, which ``InfoGainAttributeEval`` and
    ``ChiSquaredAttributeEval`` use) takes the number of candidate boundaries instead.
    Kononenko's criterion (``-K``) is not offered.
    """
    values = np.asarray(values, dtype=np.float64)
    if len(values) < 2:  # no boundary to cut at (a constant feature, or no known value)
        return np.empty(0)
    class_counts = np.asarray(class_counts, dtype=np.float64).reshape(len(values), -1)
    rows = class_counts.sum(axis=1) if row_counts is None else np.asarray(row_counts, dtype=np.float64)
    rows_before = np.concatenate([[0.0], np.cumsum(rows)])
    cuts: list[float] = []
    pending = [(0, len(values))]
    while pending:
        first, stop = pending.pop()
        if rows_before[stop] - rows_before[first] < 2 or stop - first < 2:
            continue
        counts = class_counts[first:stop]
        left = np.cumsum(counts[:-1], axis=0)
        prior = counts.sum(axis=0)
        right = prior - left
        entropies = _split_entropies(left, right)
        best = int(np.argmin(entropies))
        if not class_entropy(prior) - entropies[best] > 0:
            continue
        candidates = stop - first - 1 if better_encoding else rows_before[stop] - rows_before[first] - 1
        if not _accepts_split(prior, left[best], right[best], candidates, float(prior.sum())):
            continue
        cuts.append((values[first + best] + values[first + best + 1]) / 2.0)
        pending.extend([(first, first + best + 1), (first + best + 1, stop)])
    return np.sort(np.array(cuts, dtype=np.float64))


def weka_decimal(value: float, decimals: int = 6) -> str:
    """``value`` as Weka's ``Utils.doubleToString(value, decimals)`` prints it: rounded half
    up (in magnitude) to ``decimals`` places, trailing zeros and a bare point dropped, "0"
    for anything that rounds to zero; Java's ``Double.toString`` past 2⁶³ / 10^decimals."""
    scaled = value * 10.0**decimals
    if not abs(scaled) < 9.223372036854776e18:
        return _java_double(value)
    digits = int(scaled + 0.5) if scaled > 0 else -int(abs(scaled) + 0.5)
    if digits == 0:
        return "0"
    sign, magnitude = ("-" if digits < 0 else ""), str(abs(digits)).rjust(decimals + 1, "0")
    whole, fraction = magnitude[:-decimals] if decimals else magnitude, magnitude[len(magnitude) - decimals :]
    fraction = fraction.rstrip("0") if decimals else ""
    return f"{sign}{whole}.{fraction}" if fraction else f"{sign}{whole}"


def _java_double(value: float) -> str:
    """``value`` as Java's ``Double.toString`` writes it: the shortest digits that read back
    as ``value``, in scientific form ``d.dddE±n`` outside [1e-3, 1e7)."""
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
