"""``ordinal``: Esuli & Sebastiani's ordinal-to-binary encoding (ECIR'09 §2; docs/algorithms.md §6
is the reference).

Every numeric attribute whose training values are all non-negative integers is replaced, in place,
by one 0/1 attribute ``NAME>=v`` per distinct non-zero training value v (``--max-thresholds M``: at
most M, at weighted quantiles), 1 where the value is ≥ v: 0 sets none, so sparse stays sparse.
Other attributes pass through unchanged.
"""

from __future__ import annotations

import numpy as np

from filterkit.exact import complex_keys
from filterkit.plugin import (
    NUMERIC,
    Attribute,
    Chunk,
    Option,
    Stage,
    StateArray,
    ValueCounts,
    feature_positions,
    hookimpl,
    invalid_state,
    nonzero_entries,
)
from filterkit.stage_parts import check_runs, csr_of_runs, output_offsets, unique_schema

#: Marks an attribute that passes through in ``threshold_counts``.
PASS_THROUGH = -1


class ThresholdEncoder(Stage):
    """Replace each non-negative integer attribute by cumulative 0/1 threshold attributes."""

    name = "ordinal"
    examples = ({"max_thresholds": 3}, {})
    summary = "Encode each non-negative integer attribute as 0/1 attributes NAME>=v (Esuli & Sebastiani)."
    options = (
        Option(
            "max_thresholds",
            int,
            None,
            "Keep at most M thresholds per attribute, at evenly spaced quantiles.",
            minimum=1,
        ),
    )
    widening_hint = "one attribute per distinct value; --max-thresholds M keeps at most M"
    learns = True
    #: Per feature its number of thresholds (PASS_THROUGH: not encoded); the thresholds, feature by feature.
    state_arrays = {"thresholds": StateArray(length=None), "threshold_counts": StateArray(whole=True, low=PASS_THROUGH)}

    def new_statistics(self) -> ValueCounts:
        return ValueCounts.empty(len(self.features), 1)

    def accumulate(self, statistics: ValueCounts, chunk: Chunk) -> ValueCounts:
        return statistics.merge(ValueCounts.of_chunk(chunk, self.features, None, 1))

    def finalize(self, statistics: ValueCounts) -> None:
        histogram = statistics.histogram(include_zero=False)
        feature, value, weight = histogram.feature, histogram.value, histogram.rows
        n_features = len(self.features)
        encodable = np.ones(n_features, dtype=bool)
        invalid = (value < 0) | (value != np.floor(value)) | ~np.isfinite(value)
        encodable[feature[invalid]] = False
        thresholds, threshold_counts = [], np.full(n_features, PASS_THROUGH, dtype=np.int64)
        starts = np.searchsorted(feature, np.arange(n_features + 1))
        for j in np.flatnonzero(encodable):
            chosen = self._thresholds(value[starts[j] : starts[j + 1]], weight[starts[j] : starts[j + 1]])
            thresholds.append(chosen)
            threshold_counts[j] = len(chosen)
        self.thresholds = np.concatenate(thresholds) if thresholds else np.zeros(0)
        self.threshold_counts = threshold_counts
        self._layout()

    def _thresholds(self, values: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """All distinct non-zero values, or M of them at lower quantiles i/M."""
        limit = self.params["max_thresholds"]
        if limit is None or len(values) <= limit:
            return values
        if not np.any(weights > 0):
            weights = np.ones(len(values))
        with np.errstate(over="ignore"):
            cumulative = np.cumsum(weights)
        if not np.isfinite(cumulative[-1]):
            cumulative = np.cumsum(np.ldexp(weights, -np.frexp(weights.max())[1]))
        targets = np.arange(limit) / limit * cumulative[-1]
        chosen = np.minimum(np.searchsorted(cumulative, targets, side="right"), len(values) - 1)
        return np.unique(values[chosen])

    def _layout(self) -> None:
        """Each input attribute's first output column, the thresholds' search keys and the output schema."""
        encoded = self.threshold_counts != PASS_THROUGH
        self.encoded_columns = self.features[encoded]
        self.encoded_counts = counts = self.threshold_counts[encoded]
        width = np.ones(len(self.input_schema), dtype=np.int64)
        width[self.encoded_columns] = counts
        self.offsets = output_offsets(self, width, 0, "keep fewer thresholds with --max-thresholds M")
        self.threshold_starts = np.cumsum(counts) - counts
        # one sorted key per threshold, (encoded feature, value), as a complex number: numpy orders complex
        # numbers lexicographically, so one searchsorted finds every entry's number of thresholds reached
        self.threshold_keys = complex_keys(np.repeat(np.arange(len(counts)), counts), self.thresholds)
        groups = [[attribute] for attribute in self.input_schema.attributes]
        for position, values in zip(
            self.encoded_columns.tolist(), np.split(self.thresholds, self.threshold_starts[1:])
        ):
            name = groups[position][0].name
            groups[position] = [Attribute(f"{name}>={int(v)}", NUMERIC, declared_type="numeric") for v in values]
        self.encoded_schema = unique_schema(self, groups, "encoded attribute")

    def output_schema(self):
        return self.encoded_schema

    def transform(self, chunk: Chunk) -> Chunk:
        rows, columns, values = nonzero_entries(chunk)
        encoded_index = feature_positions(len(self.input_schema), self.encoded_columns)
        which = encoded_index[columns]
        encoded = which >= 0
        which, missing = which[encoded], np.isnan(values[encoded])
        reached = np.searchsorted(
            self.threshold_keys, complex_keys(which, np.where(missing, 0.0, values[encoded])), side="right"
        )
        # an encoded value sets its reached thresholds to 1; a missing one makes all of them missing
        lengths = np.ones(len(rows), dtype=np.int64)
        lengths[encoded] = np.where(missing, self.encoded_counts[which], reached - self.threshold_starts[which])
        values[encoded] = np.where(missing, np.nan, 1.0)
        shape = (chunk.n_rows, len(self.encoded_schema))
        result = csr_of_runs(rows, self.offsets[columns], lengths, values, shape)
        text = {int(self.offsets[column]): rows for column, rows in chunk.text.items()}
        return Chunk(result if chunk.is_sparse else result.toarray(), text, chunk.weights)

    def load_state(self, state: dict) -> None:
        super().load_state(state)
        thresholds = self.thresholds
        encoded = self.threshold_counts[self.threshold_counts != PASS_THROUGH]
        check_runs(self, thresholds, encoded, "thresholds", "threshold_counts")
        limit = self.params["max_thresholds"]
        if limit is not None and np.any(encoded > limit):
            raise invalid_state(
                self, f"an attribute has {encoded.max()} thresholds, more than --max-thresholds {limit}"
            )
        # a double of 2**53 or more is always whole: a count that large is encoded (its name is the exact integer)
        if np.any((thresholds <= 0) | (thresholds != np.floor(thresholds))):
            raise invalid_state(self, "a threshold is not a positive whole number")
        self._layout()


@hookimpl
def register_stages(register):
    """The ``ordinal`` stage."""
    register(ThresholdEncoder)
