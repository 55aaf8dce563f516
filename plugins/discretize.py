"""``discretize``: Weka 3.6's ``Discretize`` filters, supervised and unsupervised (docs/algorithms.md
§11 is the reference).

By default Fayyad & Irani's MDL method (IJCAI 1993) as ``weka.filters.supervised.attribute.Discretize``
runs it (:func:`filterkit.discretization.mdl_cut_points_by_feature`); with ``--bins N`` the unsupervised
``Discretize -B N``: equal width, or equal summed weight with ``--equal-frequency``.  Each numeric
attribute in ``--attributes`` but the class becomes a nominal one with Weka's range labels
(``'(-inf-2.45]'``, …; ``'All'`` without a cut point), or with ``--binary`` one two-label attribute per
cut point; ±Infinity is cut as Weka cuts it.  The statistics are per feature and distinct value
(:class:`~filterkit.statistics.ValueCounts`), or each feature's range for equal width, so memory
follows the features' distinct values, not the rows.
"""

from __future__ import annotations

import numpy as np

from filterkit.discretization import mdl_cut_points_by_feature, midpoints, weka_decimal
from filterkit.exact import complex_keys
from filterkit.plugin import (
    DATE,
    NOMINAL,
    NUMERIC,
    Accepts,
    Attribute,
    Chunk,
    FilterkitError,
    Option,
    Stage,
    StateArray,
    ValueCounts,
    feature_positions,
    hookimpl,
    nonzero_entries,
)
from filterkit.schema import refuse_unreadable_output, weka_range
from filterkit.stage import refuse_unaccepted_input
from filterkit.stage_parts import check_runs, csr_of_runs, features_of_kinds, output_offsets, unique_schema
from filterkit.statistics import PresenceCounts
from filterkit.text import shown


def range_labels(cuts: np.ndarray, name: str) -> tuple[str, ...]:
    """Weka's labels for the bins between ``cuts`` of the attribute ``name``: ``'(-inf-a]'``, ``'(a-b]'``, …,
    ``'(z-inf)'``; ``'All'`` for no cut."""
    if not len(cuts):
        return ("'All'",)
    bounds = ["-inf", *(weka_decimal(float(cut)) for cut in cuts), "inf"]
    labels = tuple(
        f"'({low}-{high}{')' if high == 'inf' else ']'}'" for low, high in zip(bounds[:-1], bounds[1:], strict=True)
    )
    if len(set(labels)) != len(labels):
        alike = next(label for k, label in enumerate(labels) if label in labels[:k])
        raise FilterkitError(
            f"stage 'discretize': attribute {shown(name)} has two bins that print alike at 6 decimals (both {alike})"
        )
    return labels


def equal_width_cut_points(low: float, high: float, bins: int) -> np.ndarray:
    """Weka's equal-width cut points: ``low + i · (high − low) / bins`` for i = 1 … bins − 1;
    none for one bin or an empty range."""
    with np.errstate(over="ignore"):  # beyond the largest double, as in Weka: cut points at Infinity
        width = (high - low) / bins
        if bins <= 1 or not width > 0:
            return np.zeros(0)
        return low + width * np.arange(1, bins, dtype=np.float64)


def equal_frequency_cut_points(values: np.ndarray, weights: np.ndarray, bins: int) -> np.ndarray:
    """Weka 3.6's equal-frequency cut points over sorted distinct ``values`` with the summed
    weight of each: walking up the values, a cut is due once the weight since the last cut
    reaches the target (the remaining weight shared among the remaining bins); it goes at
    the midpoint after the current value, or after the previous boundary when that one was
    nearer the target; a pending boundary closes the last bin."""
    between = midpoints(values)
    remaining = float(weights.sum())
    target = remaining / bins
    cuts: list[float] = []
    since_cut, at_previous, previous = 0.0, 0.0, -1
    for k in range(len(values) - 1):
        if len(cuts) == bins - 1:
            break
        since_cut += weights[k]
        remaining -= weights[k]
        if since_cut < target:
            previous, at_previous = k, since_cut
            continue
        if target - at_previous < since_cut - target and previous != -1:
            cuts.append(between[previous])
            since_cut -= at_previous
            at_previous, previous = since_cut, k
        else:
            cuts.append(between[k])
            since_cut, at_previous, previous = 0.0, 0.0, -1
        target = (remaining + since_cut) / (bins - len(cuts))
    if len(cuts) < bins - 1 and previous != -1:
        cuts.append(between[previous])
    return np.array(cuts, dtype=np.float64)


class Discretizer(Stage):
    """Numeric attributes to nominal bins, as Weka 3.6's Discretize filters (MDL by default)."""

    name = "discretize"
    summary = "Discretize numeric attributes into nominal bins as Weka's Discretize (Fayyad & Irani's MDL by default)."
    options = (
        Option(
            "bins",
            int,
            None,
            "Unsupervised: N bins of equal width (Weka's unsupervised Discretize -B N); default: supervised MDL.",
            minimum=1,
        ),
        Option("equal_frequency", bool, False, "With --bins: bins of equal summed weight (Weka's -F)."),
        Option("binary", bool, False, "One two-label attribute NAME_j per cut point: below it, above it (Weka's -D)."),
        Option(
            "attributes",
            str,
            "first-last",
            "Attributes to discretize, 1-based (Weka's -R); numeric ones only.",
            attribute_range=True,
        ),
    )
    widening_hint = "one attribute per cut point; without --binary each attribute stays one (nominal)"
    learns = True
    #: Per feature its number of cut points; the cut points, feature by feature.
    state_arrays = {"cut_counts": StateArray(whole=True, low=0), "cut_points": StateArray(length=None, finite=False)}

    def check_params(self) -> None:
        if self.params["equal_frequency"] and self.params["bins"] is None:
            raise FilterkitError("discretize --equal-frequency needs --bins N")

    @property
    def supervised(self) -> bool:
        """True for the MDL method (no ``--bins``)."""
        return self.params["bins"] is None

    @property
    def accepts(self) -> Accepts:  # type: ignore[override]  # a class attribute in Stage; discretize's depends on --bins
        """The MDL method learns from the classes."""
        return Accepts(nominal_class=self.supervised, without_class="or --bins N")

    def select_features(self, schema, context) -> np.ndarray:
        """The numeric and date attributes (dates by their milliseconds since 1970, as Weka's ``isNumeric``)."""
        numeric = features_of_kinds(schema, context, (NUMERIC, DATE))
        return numeric[np.isin(numeric, weka_range(self.params["attributes"], len(schema), "--attributes")[0])]

    def prepare(self, schema, context) -> None:
        super().prepare(schema, context)
        refuse_unaccepted_input(self, schema, context)
        self.n_classes = len(schema.attributes[context.class_index].labels) if self.supervised else 1

    def new_statistics(self) -> ValueCounts | PresenceCounts:
        if self.params["bins"] is not None and not self.params["equal_frequency"]:
            return PresenceCounts.empty(len(self.features), 1)
        return ValueCounts.empty(len(self.features), self.n_classes)

    def accumulate(self, statistics, chunk: Chunk):
        class_index = self.context.class_index if self.supervised else None
        return statistics.add(chunk, self.features, class_index)

    def finalize(self, statistics) -> None:
        if isinstance(statistics, PresenceCounts):
            cuts = self._equal_width_cuts(statistics)
        else:
            cuts = self._histogram_cuts(statistics)
        self.cut_counts = np.array([len(c) for c in cuts], dtype=np.int64)
        self.cut_points = np.concatenate(cuts) if cuts else np.zeros(0)
        self._layout()

    def _equal_width_cuts(self, statistics: PresenceCounts) -> list[np.ndarray]:
        low, high = statistics.training_range()
        present = statistics.present_sums(None).to_float() > 0
        bins = self.params["bins"]
        for j in np.flatnonzero(present & ~(np.isfinite(low) & np.isfinite(high))):
            raise self._unbinnable(int(j), "has an infinite training value, so its range has no equal-width bins")
        cut = int((present & (high > low)).sum())  # the features given bins − 1 cut points
        if self.params["binary"]:
            refuse_unreadable_output(
                self.name, len(self.input_schema) + cut * max(bins - 2, 0), 2, 0, self._fewer_cuts()
            )
        else:
            refuse_unreadable_output(self.name, 0, bins if cut else 1, 0, self._fewer_cuts())
        return [
            equal_width_cut_points(low[j], high[j], bins) if present[j] else np.zeros(0)
            for j in range(len(self.features))
        ]

    def _fewer_cuts(self) -> str:
        """What makes fewer cut points: fewer --bins, or for MDL, no --binary."""
        return "make fewer bins with --bins N" if self.params["bins"] is not None else "leave out --binary"

    def _unbinnable(self, j: int, why: str) -> FilterkitError:
        """The error for feature ``j``, which cannot be cut into bins."""
        return FilterkitError(
            f"stage 'discretize': attribute '{self.input_schema.attributes[self.features[j]].name}' {why}"
        )

    def _histogram_cuts(self, statistics: ValueCounts) -> list[np.ndarray]:
        histogram = statistics.histogram(include_zero=True)
        # Weka sorts a missing value as the largest double, below ∞, and cuts only the values
        # before the first missing one: a feature with a missing value has its ∞ rows left out
        has_missing = statistics.missing_sums(None).to_float() > 0
        kept = ~((histogram.value == np.inf) & has_missing[histogram.feature])
        feature, value, rows = histogram.feature[kept], histogram.value[kept], histogram.rows[kept]
        starts = np.searchsorted(feature, np.arange(len(self.features) + 1))
        for j in range(len(self.features)):
            with np.errstate(over="ignore"):
                total = rows[starts[j] : starts[j + 1]].sum()
            if not np.isfinite(total):
                raise self._unbinnable(j, "has rows whose weights sum beyond the largest double")
        if self.supervised:  # classes without rows left out: their all-zero columns change no sum, no cut point
            present = np.flatnonzero(statistics.class_totals > 0).tolist()
            by_class = np.column_stack([histogram.of_class(c)[kept] for c in present] or [np.zeros(int(kept.sum()))])
            return mdl_cut_points_by_feature(value, by_class, starts)
        return [
            equal_frequency_cut_points(value[span], rows[span], self.params["bins"])
            for span in (slice(starts[j], starts[j + 1]) for j in range(len(self.features)))
        ]

    def _layout(self) -> None:
        """The output attributes, each input attribute's first output column, and the cut points' keys."""
        binary = self.params["binary"]
        self.cut_starts = np.cumsum(self.cut_counts) - self.cut_counts
        width = np.ones(len(self.input_schema), dtype=np.int64)
        if binary:
            width[self.features] = np.maximum(self.cut_counts, 1)
        most_labels = 2 if binary else int(self.cut_counts.max(initial=0)) + 1
        self.offsets = output_offsets(self, width, most_labels, self._fewer_cuts())
        groups = [[attribute] for attribute in self.input_schema.attributes]
        written = 0  # the labels' bytes so far: refused as they pass the header bound, not once all are made
        for position, cuts in zip(self.features.tolist(), np.split(self.cut_points, self.cut_starts[1:])):
            name = groups[position][0].name
            if binary and len(cuts):
                groups[position] = [
                    Attribute(f"{name}_{j + 1}", NOMINAL, range_labels(cuts[j : j + 1], name)) for j in range(len(cuts))
                ]
            else:
                groups[position] = [Attribute(name, NOMINAL, range_labels(cuts, name))]
            written += sum(len(label) + 1 for attribute in groups[position] for label in attribute.labels)
            refuse_unreadable_output(self.name, 0, 0, written, self._fewer_cuts())
        self.discretized_schema = unique_schema(self, groups, "attribute")
        # one sorted key per cut point, (feature, cut) as a complex number, so one
        # searchsorted counts the cut points below every value
        owner = np.repeat(np.arange(len(self.features)), self.cut_counts)
        undefined = np.isnan(self.cut_points)  # between −∞ and ∞, its attribute's only cut point
        self.cut_keys = complex_keys(owner, np.where(undefined, 0.0, self.cut_points))
        self.undefined_cut = np.zeros(len(self.features), dtype=bool)
        self.undefined_cut[owner[undefined]] = True
        self.zero_codes = self._codes(np.arange(len(self.features)), np.zeros(len(self.features)))

    def _codes(self, which: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Per value of feature ``which``: the number of its cut points below it (its bin); as in
        Weka, no value is at most a NaN cut point, so every value falls above it."""
        below = np.searchsorted(
            self.cut_keys, complex_keys(which, np.where(np.isnan(values), 0.0, values)), side="left"
        )
        return np.where(self.undefined_cut[which], 1, below - self.cut_starts[which])

    def preserves_zeros(self) -> bool:
        """A 0 stays 0 where it falls in the first bin: every cut point ≥ 0 (so on word counts)."""
        return not hasattr(self, "zero_codes") or not self.zero_codes.any()

    def output_schema(self):
        return self.discretized_schema

    def transform(self, chunk: Chunk) -> Chunk:
        rows, columns, values = nonzero_entries(chunk)
        feature_index = feature_positions(len(self.input_schema), self.features)
        which = feature_index[columns]
        passing = which < 0
        passed = rows[passing], self.offsets[columns[passing]], values[passing]
        rows, which, values = rows[~passing], which[~passing], values[~passing]
        filled = np.flatnonzero(self.zero_codes)
        if len(filled):
            # features whose 0 is not in the first bin: their unstored zeros are written too
            filled_position = feature_positions(len(self.features), filled)
            in_filled = filled_position[which] >= 0
            stored = np.zeros((chunk.n_rows, len(filled)), dtype=bool)
            stored[rows[in_filled], filled_position[which[in_filled]]] = True
            zero_rows, zero_which = np.nonzero(~stored)
            rows = np.concatenate([rows, zero_rows])
            which = np.concatenate([which, filled[zero_which]])
            values = np.concatenate([values, np.zeros(len(zero_rows))])
        missing = np.isnan(values)
        codes = self._codes(which, values)
        if self.params["binary"]:
            # 1 for each cut point below the value; a missing value makes each attribute missing
            lengths = np.where(missing, np.maximum(self.cut_counts[which], 1), codes)
            binned = np.where(missing, np.nan, 1.0)
        else:
            lengths, binned = np.ones(len(rows), dtype=np.int64), np.where(missing, np.nan, codes.astype(np.float64))
        result = csr_of_runs(
            np.concatenate([passed[0], rows]),
            np.concatenate([passed[1], self.offsets[self.features[which]]]),
            np.concatenate([np.ones(len(passed[0]), dtype=np.int64), lengths]),
            np.concatenate([passed[2], binned]),
            (chunk.n_rows, len(self.discretized_schema)),
        )
        result.eliminate_zeros()
        text = {int(self.offsets[column]): texts for column, texts in chunk.text.items()}
        return Chunk(result if chunk.is_sparse else result.toarray(), text, chunk.weights)

    def state(self) -> dict:
        for k in np.flatnonzero(self.undefined_cut):
            raise self._unbinnable(
                int(k), "has a cut point between -Infinity and Infinity, NaN, which a model cannot hold"
            )
        return super().state()

    def load_state(self, state: dict) -> None:
        super().load_state(state)
        check_runs(self, self.cut_points, self.cut_counts, "cut points", "cut_counts")
        self._layout()


@hookimpl
def register_stages(register):
    """The ``discretize`` stage."""
    register(Discretizer)
