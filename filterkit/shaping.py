"""The local-probability shaping fit that ``shape`` and ``auto`` share (Forman, Scholz & Rajaram,
KDD'09 §3.2, §3.3, §3.5; docs/algorithms.md §4): each feature's knots toward a class, and p̃ between them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from filterkit.statistics import ValueCounts, sums_through

#: ``shape --neighbors``' default: rows taken on each side of a value.
NEIGHBORS = 15

# The largest features × distinct knot values for which a knot lookup table (8 bytes
# an entry) is kept; beyond it lookups search the knots' keys.
_KNOT_TABLE_LIMIT = 4_000_000


@dataclass(eq=False)
class Knots:
    """p̃ of each (column, value) from fitted knots, sorted by (column, value), each with its p̃
    (KDD'09 §3.2–3.3; docs/algorithms.md §4): the shaping that ``shape`` and ``auto`` share.

    Its tables are built once, from the knots: each knot gets the slope to the next knot of its
    column (NaN at a column's last knot); each column the probability below its first knot (its
    baseline without knots).  A query (column, value) is ranked among the distinct knot values, so
    (column, rank) is one integer; ``knot_table`` maps it to the column's last knot at or below the
    value (−1 for none) when columns × distinct values is small, else a search of the knots' keys does.
    """

    knot_feature: np.ndarray
    knot_value: np.ndarray
    knot_probability: np.ndarray
    zero_probability: np.ndarray
    default_probability: np.ndarray
    column_nominal: np.ndarray
    zero_bin: bool

    def __post_init__(self) -> None:
        n_columns = len(self.column_nominal)
        self.start = np.searchsorted(self.knot_feature, np.arange(n_columns + 1))
        self.knot_has_next = has_next = np.r_[self.knot_feature[1:] == self.knot_feature[:-1], False]
        following = np.minimum(np.arange(1, len(self.knot_value) + 1), max(len(self.knot_value) - 1, 0))
        with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
            step = self.knot_value[following] - self.knot_value
            slope = (self.knot_probability[following] - self.knot_probability) / step
        self.knot_slope = np.where(has_next, slope, np.nan)
        # a step that overflows or is subnormal makes the slope meaningless: such knots interpolate by
        # the fraction of the step, computed on values scaled by a power of two (see _interpolated)
        self.scaled = has_next & (~np.isfinite(step) | (step < np.finfo(np.float64).tiny) | ~np.isfinite(slope))
        has_knots = self.start[1:] > self.start[:-1]
        baseline = self.zero_probability if self.zero_bin else self.default_probability
        first_knot = np.minimum(self.start[:-1], max(len(self.knot_value) - 1, 0))
        self.first_probability = np.where(
            has_knots, self.knot_probability[first_knot] if len(self.knot_value) else 0.0, baseline
        )
        self.distinct_values = np.unique(self.knot_value)
        self.rank_stride = len(self.distinct_values) + 1
        self.knot_rank_key = self.knot_feature * self.rank_stride + np.searchsorted(
            self.distinct_values, self.knot_value, side="right"
        )
        if n_columns * self.rank_stride <= _KNOT_TABLE_LIMIT:
            below = np.searchsorted(self.knot_rank_key, np.arange(n_columns * self.rank_stride), side="right") - 1
            feature_start = np.repeat(self.start[:-1], self.rank_stride)
            self.knot_table: np.ndarray | None = np.where(below >= feature_start, below, -1)
        else:
            self.knot_table = None

    def at_zero(self) -> np.ndarray:
        """p̃(0) of each column: the zero bin's, or without it the knots' estimate at 0."""
        n_columns = len(self.column_nominal)
        return self.zero_probability if self.zero_bin else self.at(np.arange(n_columns), np.zeros(n_columns))

    def _below(self, positions: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Per (column, value): the column's last knot with value ≤ the value, or −1."""
        key = positions * self.rank_stride + np.searchsorted(self.distinct_values, values, side="right")
        if self.knot_table is not None:
            return self.knot_table[key]
        below = np.searchsorted(self.knot_rank_key, key, side="right") - 1
        return np.where(below >= self.start[positions], below, -1)

    def at(self, positions: np.ndarray, values: np.ndarray) -> np.ndarray:
        """p̃ of each (column, value) pair, before the transform, all columns at once.

        Numeric: linear interpolation between a feature's knots, clamped at its ends
        (``numpy.interp``'s arithmetic), the zero bin at 0; nominal: the label's own
        estimate, or the feature's overall one for a label without knots.
        """
        positions = np.asarray(positions, dtype=np.int64)
        values = np.asarray(values, dtype=np.float64)
        below = self._below(positions, values)
        at_knot = below >= 0
        knot = np.where(at_knot, below, 0)
        if len(self.knot_value):
            shaped = self.knot_probability[knot]
            between = at_knot & (self.knot_value[knot] != values) & self.knot_has_next[knot]
            shaped[between] = self._interpolated(knot[between], values[between], shaped[between])
        else:
            shaped = np.zeros(len(values))
        outside = ~at_knot
        shaped[outside] = self.first_probability[positions[outside]]
        if self.zero_bin:
            zero = values == 0
            shaped[zero] = self.zero_probability[positions[zero]]
        nominal = self.column_nominal[positions]
        if nominal.any():
            exact = at_knot & (self.knot_value[knot] == values) if len(self.knot_value) else at_knot
            label_probability = np.where(
                exact, self.knot_probability[knot] if len(self.knot_value) else 0.0, self.default_probability[positions]
            )
            shaped = np.where(nominal, label_probability, shaped)
        return shaped

    def _interpolated(self, knot: np.ndarray, values: np.ndarray, at_knot: np.ndarray) -> np.ndarray:
        """p̃ at values between ``knot`` and the next knot of its feature: ``slope · (v − v_k) + p_k``,
        or, where the step between the knots overflows or is subnormal, ``p_k + Δp · (v − v_k) / Δv``
        on the values scaled so that the larger knot's magnitude is near 1 (exact scaling)."""
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            result = self.knot_slope[knot] * (values - self.knot_value[knot]) + at_knot
        scaled = self.scaled[knot]
        if scaled.any():
            k, v = knot[scaled], values[scaled]
            low, high = self.knot_value[k], self.knot_value[k + 1]
            magnitude = np.maximum(np.abs(low), np.abs(high))
            shift = np.where(np.isfinite(magnitude), -np.frexp(magnitude)[1], 0)
            with np.errstate(invalid="ignore", over="ignore"):
                fraction = (np.ldexp(v, shift) - np.ldexp(low, shift)) / (np.ldexp(high, shift) - np.ldexp(low, shift))
            # between −∞ and +∞ the fraction is undefined: the lower knot's estimate
            fraction = np.where(np.isnan(fraction), 0.0, fraction)
            result[scaled] = at_knot[scaled] + (self.knot_probability[k + 1] - self.knot_probability[k]) * fraction
        return result


def first_unsorted_knot(knot_feature: np.ndarray, knot_value: np.ndarray) -> int | None:
    """The first knot not after the one before it in (column, value) order, or None when they are sorted."""
    same_feature = knot_feature[1:] == knot_feature[:-1]
    unsorted = (knot_feature[1:] < knot_feature[:-1]) | (same_feature & (knot_value[1:] <= knot_value[:-1]))
    return int(np.flatnonzero(unsorted)[0]) + 1 if unsorted.any() else None


@dataclass(frozen=True)
class _Fit:
    """Every feature shaped toward class ``target``: per feature p̃(0), p̃ over all its present rows,
    p̃(missing) and the information gain of the shaped feature (:func:`_information_gain`); its knots."""

    target: int
    zero_probability: np.ndarray
    default_probability: np.ndarray
    missing_probability: np.ndarray
    knot_feature: np.ndarray
    knot_value: np.ndarray
    knot_probability: np.ndarray
    information: np.ndarray


def fit_toward(
    target: int,
    histogram,
    statistics: ValueCounts,
    nominal: np.ndarray,
    zero_bin: bool,
    neighbors: int,
    missing_bin: bool,
) -> _Fit:
    """Every feature shaped toward class ``target`` (KDD'09 §3.2, §3.5; the missing bin,
    docs/algorithms.md §4.2) from its value ``histogram`` and ``statistics``: its estimates and knots.
    ``nominal`` marks the nominal features; ``zero_bin``, ``neighbors`` and ``missing_bin`` are
    ``shape``'s options."""
    feature, value, rows = histogram.feature, histogram.value, histogram.rows
    positives = histogram.of_class(target)
    n_features = len(nominal)
    totals = np.bincount(feature, weights=rows, minlength=n_features)
    total_positives = np.bincount(feature, weights=positives, minlength=n_features)
    default_probability = (total_positives + 1) / (totals + 2)

    nominal_entry = nominal[feature]
    zero_entry = (value == 0) & ~nominal_entry
    if zero_bin:
        in_window = ~nominal_entry & ~zero_entry
        zero_rows = np.bincount(feature[zero_entry], weights=rows[zero_entry], minlength=n_features)
        zero_positives = np.bincount(feature[zero_entry], weights=positives[zero_entry], minlength=n_features)
        zero_probability = (zero_positives + 1) / (zero_rows + 2)
    else:
        in_window = ~nominal_entry
        zero_probability = np.full(n_features, 0.5)
    window_probability = _window_probabilities(feature[in_window], rows[in_window], positives[in_window], neighbors)
    nominal_probability = (positives[nominal_entry] + 1) / (rows[nominal_entry] + 2)
    # the estimate each training row gets: its knot's, or the zero bin's
    entry_probability = np.empty(len(feature))
    entry_probability[in_window] = window_probability
    entry_probability[nominal_entry] = nominal_probability
    entry_probability[zero_entry & ~in_window] = zero_probability[feature[zero_entry & ~in_window]]
    missing_rows = statistics.missing_sums(None).to_float()
    missing_positives = np.minimum(np.maximum(statistics.missing_sums(target).to_float(), 0.0), missing_rows)
    if missing_bin:
        # without missing training rows a missing value says nothing: the feature's overall p̃
        missing_probability = np.where(
            missing_rows > 0, (missing_positives + 1) / (missing_rows + 2), default_probability
        )
        binned = np.flatnonzero(missing_rows > 0)
    else:
        missing_probability = default_probability
        binned = np.zeros(0, dtype=np.int64)
    # the training rows' estimates, the missing bin's rows included, for the information gain
    information = _information_gain(
        np.concatenate([feature, binned]),
        np.concatenate([rows, missing_rows[binned]]),
        np.concatenate([positives, missing_positives[binned]]),
        np.concatenate([entry_probability, missing_probability[binned]]),
        n_features,
    )
    return _Fit(
        target,
        zero_probability,
        default_probability,
        missing_probability,
        np.concatenate([feature[in_window], feature[nominal_entry]]),
        np.concatenate([value[in_window], value[nominal_entry]]),
        np.concatenate([window_probability, nominal_probability]),
        information,
    )


def _information_gain(
    feature: np.ndarray, rows: np.ndarray, positives: np.ndarray, probability: np.ndarray, n_features: int
) -> np.ndarray:
    """Per feature, what its shaped value tells of the class (docs/algorithms.md §4.1): the
    log-likelihood, in bits per training row, of the class-vs-rest labels under the
    estimates p̃ the training rows get, less that under the feature's overall estimate
    (positives + 1)/(rows + 2); 0 for a feature without rows.  ``probability`` is each
    (feature, value) entry's p̃, ``rows`` and ``positives`` its weights."""
    negatives = rows - positives
    with np.errstate(divide="ignore", invalid="ignore"):  # p̃ of 0 or 1 (weights past 1e16) where no row disagrees
        log_likelihoods = np.where(positives > 0, positives * np.log2(probability), 0.0) + np.where(
            negatives > 0, negatives * np.log2(1 - probability), 0.0
        )
    likelihood = np.bincount(feature, weights=log_likelihoods, minlength=n_features)
    total = np.bincount(feature, weights=rows, minlength=n_features)
    total_positives = np.bincount(feature, weights=positives, minlength=n_features)
    overall = (total_positives + 1) / (total + 2)
    baseline = total_positives * np.log2(overall) + (total - total_positives) * np.log2(1 - overall)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total > 0, (likelihood - baseline) / total, 0.0)


def _window_probabilities(feature: np.ndarray, rows: np.ndarray, positives: np.ndarray, neighbors: int) -> np.ndarray:
    """Laplace-corrected positive fraction of each value's balanced window (KDD'09 §3.2).

    Groups are sorted by (feature, value).  The rows of each feature in value
    order define F(r), the positives among its first r rows, linear inside a
    tie group; a window [a, b) of row positions holds F(b) − F(a) positives.
    Each feature's positions and F are summed from its own entries alone
    (:func:`sums_through`), so its windows do not depend on other features.
    """
    if len(feature) == 0:
        return np.zeros(0)
    first = np.r_[True, feature[1:] != feature[:-1]]
    end, positives_through = sums_through(rows, feature), sums_through(positives, feature)
    begin = np.where(first, 0.0, np.r_[0.0, end[:-1]])
    positives_before_entry = np.where(first, 0.0, np.r_[0.0, positives_through[:-1]])
    feature_rows = end[np.r_[first[1:], True]][np.cumsum(first) - 1]  # each feature's last end, per entry
    low = np.maximum(begin - neighbors, 0.0)
    high = np.minimum(end + neighbors, feature_rows)

    # each entry's (feature, end) as one number numpy orders as the pair: complex numbers sort by their real part,
    # then their imaginary part, each exactly (no offset of one feature's positions by another's)
    ends = feature + 1j * end

    def positives_before(position):
        """F(position) of each entry's feature, as ``np.interp``: inside the first entry whose end reaches it."""
        entry = np.searchsorted(ends, feature + 1j * position, side="left")
        with np.errstate(divide="ignore", invalid="ignore"):  # an entry of weight 0 is never inside
            inside = positives[entry] / rows[entry] * (position - begin[entry]) + positives_before_entry[entry]
        at_end = np.where(position > begin[entry], inside, positives_before_entry[entry])
        return np.where(position >= end[entry], positives_through[entry], at_end)

    window_rows = high - low
    window_positives = positives_before(high) - positives_before(low)
    # weights near 1e19 and past it round F(high) − F(low) past the Laplace terms: a probability is kept in [0, 1]
    return np.clip((window_positives + 1) / (window_rows + 2), 0.0, 1.0)
