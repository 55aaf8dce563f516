"""``shape``: the zero-preserving local-probability feature shaper (Forman, Scholz
& Rajaram, KDD'09 §3.2, §3.3, §3.5; docs/algorithms.md §4).

Each feature is replaced by a smoothed estimate of P(positive | value):

1. zero bin (default): rows at 0 form their own bin, p̃(0) = (pos₀+1)/(n₀+2);
   non-zero values are estimated from non-zero rows only (``--no-zero-bin``: zeros are
   an ordinary value);
2. at each distinct training value v, a window of every row at v plus the n rows
   just below and just above in value order (``--neighbors``, 15 a side); where
   the window ends inside a group of tied values, the group counts fractionally
   (k of its m rows count k/m of its positives), so row order never matters;
   p̃(v) = (positives + 1) / (rows + 2);
3. between training values linear interpolation, beyond them the end value;
4. ``--transform prob`` (default) or ``logodds`` applied after interpolation;
5. zero-preserving (default): output T(p̃(x)) − T(p̃(0)), so 0 stays 0 and sparse
   stays sparse.

Missing stays missing.  A nominal attribute becomes numeric T(p̃(label)), the
Laplace-corrected positive fraction of its label (no zero shift); a label
unseen in training gets the attribute's overall fraction.  Statistics are
per-feature value histograms, so the cost follows distinct values, not rows.
"""

from __future__ import annotations

from typing import cast

import numpy as np
import scipy.sparse as sp

from filterkit.hookspecs import hookimpl
from filterkit.metrics import positive_code
from filterkit.saved_state import OPTIONS_KEY, fitted_options, invalid_state
from filterkit.schema import NOMINAL, Chunk
from filterkit.stage import FEATURES, Option, StateArray, with_stored_values
from filterkit.statistics import ClassValueCountsStage, ValueCounts


class Shaper(ClassValueCountsStage):
    """Replace each feature by its local probability of the positive class."""

    name = "shape"
    summary = "Shape each feature into its local positive-class probability (KDD'09 LP shaper)."
    options = (
        Option("zero_bin", bool, True, "Zeros form their own bin (--no-zero-bin for dense data)."),
        Option("neighbors", int, 15, "Rows taken on each side of a value.", minimum=0),
        Option("transform", str, "prob", "Output the probability or its log-odds.", choices=("prob", "logodds")),
        Option("zero_preserve", bool, True, "Shift so that 0 maps to 0 (--no-zero-preserve: output T(p) itself)."),
    )
    #: Per feature p̃(0) and p̃ over all its rows; the knots, sorted by (feature, value), with p̃ at each.
    state_arrays = {
        "zero_probability": StateArray(probability=True),
        "default_probability": StateArray(probability=True),
        "knot_feature": StateArray(length=None, whole=True, high=FEATURES),
        "knot_value": StateArray(length="knot_feature", finite=False),
        "knot_probability": StateArray(length="knot_feature", probability=True),
    }

    def select_features(self, schema, context):
        """Numeric and nominal attributes other than the class."""
        return np.array(
            [
                i
                for i, a in enumerate(schema.attributes)
                if (a.is_numeric or a.kind == NOMINAL) and i != context.class_index
            ],
            dtype=np.int64,
        )

    def prepare(self, schema, context) -> None:
        super().prepare(schema, context)
        self.nominal = np.array([schema.attributes[i].kind == NOMINAL for i in self.features], dtype=bool)

    def finalize(self, statistics: ValueCounts) -> None:
        self.training_counts = statistics
        positive = positive_code(self.class_attribute, statistics.class_totals, self.context.positive)
        histogram = statistics.histogram(include_zero=True)
        feature, value, rows = histogram.feature, histogram.value, histogram.rows
        positives = histogram.of_class(positive)
        n_features = len(self.features)
        totals = np.bincount(feature, weights=rows, minlength=n_features)
        total_positives = np.bincount(feature, weights=positives, minlength=n_features)
        self.default_probability = (total_positives + 1) / (totals + 2)

        nominal_entry = self.nominal[feature]
        zero_entry = (value == 0) & ~nominal_entry
        if self.params["zero_bin"]:
            in_window = ~nominal_entry & ~zero_entry
            zero_rows = np.bincount(feature[zero_entry], weights=rows[zero_entry], minlength=n_features)
            zero_positives = np.bincount(feature[zero_entry], weights=positives[zero_entry], minlength=n_features)
            self.zero_probability = (zero_positives + 1) / (zero_rows + 2)
        else:
            in_window = ~nominal_entry
        window_probability = _window_probabilities(
            feature[in_window], rows[in_window], positives[in_window], self.params["neighbors"]
        )
        nominal_probability = (positives[nominal_entry] + 1) / (rows[nominal_entry] + 2)
        self.knot_feature = np.concatenate([feature[in_window], feature[nominal_entry]])
        self.knot_value = np.concatenate([value[in_window], value[nominal_entry]])
        self.knot_probability = np.concatenate([window_probability, nominal_probability])
        order = np.lexsort((self.knot_value, self.knot_feature))
        self.knot_feature = self.knot_feature[order]
        self.knot_value = self.knot_value[order]
        self.knot_probability = self.knot_probability[order]
        self._index_knots()
        if not self.params["zero_bin"]:
            self.zero_probability = self._probabilities_at(np.arange(n_features), np.zeros(n_features))

    def _index_knots(self) -> None:
        """Tables for :meth:`_probabilities_at`, built once per fit or load.

        Each knot gets the slope to the next knot of its feature (NaN at a feature's
        last knot); each feature the probability below its first knot (its baseline
        without knots).  A query (feature, value) is ranked among the distinct knot
        values, so (feature, rank) is one integer; ``knot_below`` maps it to the
        feature's last knot at or below the value (−1 for none), as a table when
        features × distinct values is small, else by a search of the knots' keys.
        """
        n_features = len(self.features)
        self.knot_start = np.searchsorted(self.knot_feature, np.arange(n_features + 1))
        has_next = np.r_[self.knot_feature[1:] == self.knot_feature[:-1], False]
        self.knot_has_next = has_next
        following = np.minimum(np.arange(1, len(self.knot_value) + 1), max(len(self.knot_value) - 1, 0))
        with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
            step = self.knot_value[following] - self.knot_value
            slope = (self.knot_probability[following] - self.knot_probability) / step
        self.knot_slope = np.where(has_next, slope, np.nan)
        # a step that overflows or is subnormal makes the slope meaningless: such knots interpolate by
        # the fraction of the step, computed on values scaled by a power of two (see _interpolated)
        self.knot_scaled = has_next & (~np.isfinite(step) | (step < np.finfo(np.float64).tiny) | ~np.isfinite(slope))
        has_knots = self.knot_start[1:] > self.knot_start[:-1]
        baseline = self.zero_probability if self.params["zero_bin"] else self.default_probability
        first_knot = np.minimum(self.knot_start[:-1], max(len(self.knot_value) - 1, 0))
        self.first_probability = np.where(
            has_knots, self.knot_probability[first_knot] if len(self.knot_value) else 0.0, baseline
        )
        self.distinct_values = np.unique(self.knot_value)
        self.rank_stride = len(self.distinct_values) + 1
        self.knot_rank_key = self.knot_feature * self.rank_stride + np.searchsorted(
            self.distinct_values, self.knot_value, side="right"
        )
        if n_features * self.rank_stride <= _KNOT_TABLE_LIMIT:
            below = np.searchsorted(self.knot_rank_key, np.arange(n_features * self.rank_stride), side="right") - 1
            feature_start = np.repeat(self.knot_start[:-1], self.rank_stride)
            self.knot_table: np.ndarray | None = np.where(below >= feature_start, below, -1)
        else:
            self.knot_table = None

    def _knot_below(self, positions: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Per (feature position, value): the feature's last knot with value ≤ the value, or −1."""
        key = positions * self.rank_stride + np.searchsorted(self.distinct_values, values, side="right")
        if self.knot_table is not None:
            return self.knot_table[key]
        below = np.searchsorted(self.knot_rank_key, key, side="right") - 1
        return np.where(below >= self.knot_start[positions], below, -1)

    def _probabilities_at(self, positions: np.ndarray, values: np.ndarray) -> np.ndarray:
        """p̃ of each (feature position, value) pair, before the transform, all features at once.

        Numeric: linear interpolation between a feature's knots, clamped at its ends
        (``numpy.interp``'s arithmetic), the zero bin at 0; nominal: the label's own
        estimate, or the feature's overall one for a label without knots.
        """
        positions = np.asarray(positions, dtype=np.int64)
        values = np.asarray(values, dtype=np.float64)
        below = self._knot_below(positions, values)
        at_knot = below >= 0
        knot = np.where(at_knot, below, 0)
        if len(self.knot_value):
            shaped = self.knot_probability[knot]
            between = at_knot & (self.knot_value[knot] != values) & self.knot_has_next[knot]
            inside = knot[between]
            shaped[between] = self._interpolated(inside, values[between], shaped[between])
        else:
            shaped = np.zeros(len(values))
        outside = ~at_knot
        shaped[outside] = self.first_probability[positions[outside]]
        if self.params["zero_bin"]:
            zero = values == 0
            shaped[zero] = self.zero_probability[positions[zero]]
        nominal = self.nominal[positions]
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
        scaled = self.knot_scaled[knot]
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

    def _shape(self, positions: np.ndarray, values: np.ndarray) -> np.ndarray:
        """The output value of each (feature position, value) pair; NaN stays NaN."""
        transform = _TRANSFORMS[self.params["transform"]]
        missing = np.isnan(values)
        anything_missing = missing.any()
        shaped = transform(
            self._probabilities_at(positions, np.where(missing, 0.0, values) if anything_missing else values)
        )
        if self.params["zero_preserve"]:
            shaped = shaped - self._zero_shift()[positions]
        return np.where(missing, np.nan, shaped) if anything_missing else shaped

    def _zero_shift(self) -> np.ndarray:
        """Per feature, T(p̃(0)) (0 for nominal features): subtracted so that 0 maps to 0."""
        transform = _TRANSFORMS[self.params["transform"]]
        return np.where(self.nominal, 0.0, transform(self.zero_probability))

    def preserves_zeros(self) -> bool:
        """With --zero-preserve (the default) T(0) is subtracted, so 0 maps to 0."""
        return self.params["zero_preserve"]

    def value_map(self):
        """Shaping is elementwise: the next stage's value counts follow from this stage's."""
        return self._shape

    def transform(self, chunk: Chunk) -> Chunk:
        position_of = np.full(chunk.values.shape[1], -1, dtype=np.int64)
        position_of[self.features] = np.arange(len(self.features))
        keeps_zero = self.params["zero_preserve"] and not self.nominal.any()
        if chunk.is_sparse and keeps_zero:
            matrix = cast(sp.csr_matrix, chunk.values).tocsr()
            positions = position_of[matrix.indices]
            acted = positions >= 0
            data = matrix.data.copy()
            data[acted] = self._shape(positions[acted], data[acted])
            return Chunk(with_stored_values(matrix, data), chunk.text, chunk.weights)
        values = chunk.dense_values().copy()
        block = values[:, self.features]
        positions = np.broadcast_to(np.arange(len(self.features)), block.shape)
        values[:, self.features] = self._shape(positions.ravel(), block.ravel()).reshape(block.shape)
        return Chunk(sp.csr_matrix(values) if chunk.is_sparse else values, chunk.text, chunk.weights)

    def state(self) -> dict:
        return {
            "knot_feature": self.knot_feature,
            "knot_value": self.knot_value,
            "knot_probability": self.knot_probability,
            "zero_probability": self.zero_probability,
            "default_probability": self.default_probability,
            OPTIONS_KEY: fitted_options(self),
        }

    def load_state(self, state: dict) -> None:
        super().load_state(state)
        same_feature = self.knot_feature[1:] == self.knot_feature[:-1]
        unsorted = (self.knot_feature[1:] < self.knot_feature[:-1]) | (
            same_feature & (self.knot_value[1:] <= self.knot_value[:-1])
        )
        if unsorted.any():
            where = int(np.flatnonzero(unsorted)[0]) + 1
            raise invalid_state(self, f"the knots are not sorted by feature and value (knot {where})")
        nominal_knot = self.nominal[self.knot_feature]
        if nominal_knot.any():
            labels = np.array([len(self.input_schema.attributes[i].labels or ()) for i in self.features])
            codes = self.knot_value[nominal_knot]
            if np.any((codes != np.floor(codes)) | (codes < 0) | (codes >= labels[self.knot_feature[nominal_knot]])):
                raise invalid_state(self, "a nominal attribute's knot is not one of its label codes")
        self._index_knots()


def _window_probabilities(feature: np.ndarray, rows: np.ndarray, positives: np.ndarray, neighbors: int) -> np.ndarray:
    """Laplace-corrected positive fraction of each value's balanced window (KDD'09 §3.2).

    Groups are sorted by (feature, value).  The rows of each feature in value
    order define F(r), the positives among its first r rows, linear inside a
    tie group; a window [a, b) of row positions holds F(b) − F(a) positives.
    """
    if len(feature) == 0:
        return np.zeros(0)
    starts = np.flatnonzero(np.r_[True, feature[1:] != feature[:-1]])
    group = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(feature)]))
    cumulative_rows = np.r_[0.0, np.cumsum(rows)]
    cumulative_positives = np.r_[0.0, np.cumsum(positives)]
    offset = cumulative_rows[starts][group]
    feature_rows = np.add.reduceat(rows, starts)[group]
    end = cumulative_rows[1:] - offset
    begin = end - rows
    low = np.maximum(begin - neighbors, 0.0)
    high = np.minimum(end + neighbors, feature_rows)

    def positives_before(position):
        return np.interp(position + offset, cumulative_rows, cumulative_positives)

    window_rows = high - low
    window_positives = positives_before(high) - positives_before(low)
    return (window_positives + 1) / (window_rows + 2)


def _log_odds(p: np.ndarray) -> np.ndarray:
    return np.log(p) - np.log1p(-p)


_TRANSFORMS = {"prob": lambda p: p, "logodds": _log_odds}

# The largest features × distinct knot values for which a knot lookup table (8 bytes
# an entry) is kept; beyond it lookups search the knots' keys.
_KNOT_TABLE_LIMIT = 4_000_000


@hookimpl
def register_stages(register):
    """The LP shaper."""
    register(Shaper)
