"""``ordinal``: Esuli & Sebastiani's ordinal-to-binary encoding (ECIR'09 §2;
docs/algorithms.md §6).

Every numeric attribute whose training values are all non-negative integers
(word counts, say) is replaced, in place, by one 0/1 attribute ``NAME>=v`` per
distinct non-zero training value ``v₁ < … < vₙ``: 1 where the value is ≥ v.
A value of 0 sets none of them, so sparse data stays sparse; a test value
never seen in training sets every attribute whose threshold it reaches (2.5
sets ``>=1`` and ``>=2``); a missing value makes all of them missing.  An
attribute with no non-zero training value produces no attribute.  Other
attributes (negative or fractional values, the class, non-numeric ones) pass
through unchanged.

``--max-thresholds M`` keeps at most M thresholds for an attribute with more
than M distinct non-zero values: with the attribute's non-zero training values
sorted (each row once, by its instance weight), threshold i (i = 0 … M−1) is the
lower i/M quantile, the smallest value v whose cumulative weight exceeds
i/M of the total.  Threshold 0 is always the smallest value (presence), and
thresholds that coincide are kept once.  When the attribute's rows all weigh 0,
each distinct value counts once.
"""

from __future__ import annotations

from typing import cast

import numpy as np
import scipy.sparse as sp

from filterkit.errors import FilterkitError
from filterkit.hookspecs import hookimpl
from filterkit.saved_state import OPTIONS_KEY, fitted_options, invalid_state
from filterkit.schema import NUMERIC, Attribute, Chunk
from filterkit.stage import Option, Stage, StateArray
from filterkit.statistics import ValueCounts

#: Marks an attribute that passes through in ``threshold_counts``.
PASS_THROUGH = -1


class ThresholdEncoder(Stage):
    """Replace each non-negative integer attribute by cumulative 0/1 threshold attributes."""

    name = "ordinal"
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
    learns = True
    #: Per feature its number of thresholds (PASS_THROUGH: not encoded); the thresholds, feature by feature.
    state_arrays = {"threshold_counts": StateArray(whole=True, low=PASS_THROUGH), "thresholds": StateArray(length=None)}

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
        """Output positions: each input attribute's first output column and width."""
        schema = self.input_schema
        width = np.ones(len(schema), dtype=np.int64)
        encoded = self.threshold_counts != PASS_THROUGH
        width[self.features[encoded]] = self.threshold_counts[encoded]
        self.offsets = np.r_[0, np.cumsum(width)[:-1]]
        self.width = width
        self.encoded_columns = self.features[encoded]
        counts = self.threshold_counts[encoded]
        self.threshold_starts = np.r_[0, np.cumsum(counts)[:-1]] if len(counts) else np.zeros(0, np.int64)
        # One sorted key per threshold, (encoded feature, value), as a complex number:
        # numpy orders complex numbers lexicographically, so one searchsorted finds
        # every entry's number of thresholds reached.
        owner = np.repeat(np.arange(len(counts)), counts)
        self.threshold_keys = owner + 1j * self.thresholds
        attributes = []
        positions = {c: k for k, c in enumerate(self.encoded_columns.tolist())}
        for position, attribute in enumerate(schema.attributes):
            if position not in positions:
                attributes.append(attribute)
                continue
            k = positions[position]
            values = self.thresholds[self.threshold_starts[k] : self.threshold_starts[k] + counts[k]]
            attributes.extend(
                Attribute(f"{attribute.name}>={int(v)}", NUMERIC, declared_type="numeric") for v in values
            )
        names = [a.name for a in attributes]
        if len(set(names)) != len(names):
            seen: set[str] = set()
            for clash in names:
                if clash in seen:
                    break
                seen.add(clash)
            raise FilterkitError(f"stage 'ordinal': the encoded attribute name '{clash}' is already taken")
        self.encoded_schema = schema.with_attributes(attributes)

    def output_schema(self):
        return self.encoded_schema

    def transform(self, chunk: Chunk) -> Chunk:
        matrix = sp.csr_matrix(chunk.values) if not chunk.is_sparse else chunk.values
        entries = cast(sp.csr_matrix, matrix).tocoo()
        rows, columns, values = entries.row.astype(np.int64), entries.col.astype(np.int64), entries.data
        encoded_index = np.full(len(self.input_schema), -1, dtype=np.int64)
        encoded_index[self.encoded_columns] = np.arange(len(self.encoded_columns))
        which = encoded_index[columns]
        passing = which < 0
        out_rows = [rows[passing]]
        out_columns = [self.offsets[columns[passing]]]
        out_values = [values[passing]]

        rows, which, values = rows[~passing], which[~passing], values[~passing]
        missing = np.isnan(values)
        counts = self.threshold_counts[self.threshold_counts != PASS_THROUGH]
        reached = np.searchsorted(self.threshold_keys, which + 1j * np.where(missing, 0.0, values), side="right")
        reached = np.where(missing, counts[which], reached - self.threshold_starts[which])
        entry = np.repeat(np.arange(len(rows)), reached)
        within = np.arange(len(entry)) - np.repeat(np.cumsum(reached) - reached, reached)
        out_rows.append(rows[entry])
        out_columns.append(self.offsets[self.encoded_columns[which[entry]]] + within)
        out_values.append(np.where(missing[entry], np.nan, 1.0))

        shape = (chunk.n_rows, len(self.encoded_schema))
        data = (np.concatenate(out_values), (np.concatenate(out_rows), np.concatenate(out_columns)))
        encoded = sp.csr_matrix(data, shape=shape)
        encoded.sort_indices()
        text = {int(self.offsets[column]): rows for column, rows in chunk.text.items()}
        return Chunk(encoded if chunk.is_sparse else encoded.toarray(), text, chunk.weights)

    def state(self) -> dict:
        return {
            "thresholds": self.thresholds,
            "threshold_counts": self.threshold_counts,
            OPTIONS_KEY: fitted_options(self),
        }

    def load_state(self, state: dict) -> None:
        super().load_state(state)
        thresholds = self.thresholds
        encoded = self.threshold_counts[self.threshold_counts != PASS_THROUGH]
        if encoded.sum() != len(thresholds):
            raise invalid_state(
                self, f"{len(thresholds)} thresholds where 'threshold_counts' adds up to {encoded.sum()}"
            )
        limit = self.params["max_thresholds"]
        if limit is not None and np.any(encoded > limit):
            raise invalid_state(
                self, f"an attribute has {encoded.max()} thresholds, more than --max-thresholds {limit}"
            )
        if np.any((thresholds <= 0) | (thresholds != np.floor(thresholds)) | (thresholds >= 2.0**53)):
            raise invalid_state(self, "a threshold is not a positive whole number")
        owner = np.repeat(np.arange(len(encoded)), encoded)
        if np.any((owner[1:] == owner[:-1]) & (thresholds[1:] <= thresholds[:-1])):
            raise invalid_state(self, "an attribute's thresholds do not ascend")
        self._layout()


@hookimpl
def register_stages(register):
    """The ``ordinal`` stage."""
    register(ThresholdEncoder)
