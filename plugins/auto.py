"""``auto``: a per-feature policy — each numeric feature gets the treatment its own training
rows support (KDD'09 §5's "automated policies"; docs/algorithms.md §14 is the reference).

A treatment maps a feature's value x to g(x): ``presence`` (1 where x ≠ 0), ``raw`` (x),
``shape`` (the LP shaper's p̃(x)), ``both`` (the default column and a shaped copy ``NAME@shape``
right after it) or ``drop``.  Every kept column is then scaled as the scorers scale, its training
range widened to the metric's score of g; a *sparse* feature (at least half its known rows 0)
keeps 0 at 0.  The choice is cross-fitted: each treatment's criterion is the AUC of g alone on
held-out inner folds, drawn by a hash of each row's own values.  Statistics are one value
histogram by class per inner fold (never rows), and they merge.  On a class of more than two labels
without ``--positive`` each class against the rest gets its own choice: every feature becomes a group of
columns ``NAME@LABEL`` per label, as ``shape``'s one-vs-rest copies.
"""

from __future__ import annotations

import functools
import sys
from typing import cast

import numpy as np
import scipy.sparse as sp

from filterkit.arff.tokens import one_line
from filterkit.metrics import feature_scores, positive_code
from filterkit.plugin import (
    NUMERIC,
    Accepts,
    Attribute,
    Chunk,
    FilterkitError,
    Metric,
    Option,
    Stage,
    StateArray,
    ValueCounts,
    feature_positions,
    hookimpl,
    invalid_state,
    nonzero_entries,
)
from filterkit.shaping import NEIGHBORS, Knots, first_unsorted_knot, fit_toward
from filterkit.stage import (
    range_scaling,
    refuse_infinite_ranges,
    refuse_unaccepted_input,
    scale_values,
    with_stored_values,
)
from filterkit.stage_parts import unique_schema

#: The treatments, by the code the model file stores for each feature.
DROP, PRESENCE, RAW, SHAPE, BOTH = 0, 1, 2, 3, 4
TREATMENTS = ("drop", "presence", "raw", "shape", "both")
#: The name of a ``both`` feature's shaped copy: the feature's name and this.
COPY_SUFFIX = "@shape"
#: Every per-column array has as many entries as ``treatment``: one per feature, or per feature and class
#: label on more than two labels without ``--positive`` (feature-major: column f·k + c).
_PER_COLUMN = "treatment"
_EXPONENT = StateArray(length=_PER_COLUMN, whole=True, low=-4096, high=4096)

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _mixed(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finalizer: a well-spread 64-bit hash of each uint64 (wrapping arithmetic)."""
    x = x + _GOLDEN
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def inner_folds(chunk: Chunk, n_folds: int, seed: int) -> np.ndarray:
    """Each row's inner fold in [0, n_folds): a seeded hash of its non-zero values and their
    columns, summed over the row, so it depends on the row alone — not on its position,
    the chunk it came in or whether it was read dense or sparse.  Equal rows share a fold."""
    rows, columns, values = nonzero_entries(chunk)
    bits = np.where(np.isnan(values), np.nan, values).view(np.uint64)  # one NaN bit pattern
    with np.errstate(over="ignore"):
        entry = _mixed(_mixed(columns.astype(np.uint64) + np.uint64(seed) * _GOLDEN) ^ bits)
        row_sum = np.zeros(chunk.n_rows, dtype=np.uint64)
        np.add.at(row_sum, rows, entry)  # wrapping: the order of the sum does not matter
        return (_mixed(row_sum) >> np.uint64(11)).astype(np.int64) % n_folds


def auc_by_feature(
    feature: np.ndarray, score: np.ndarray, positives: np.ndarray, negatives: np.ndarray, n_features: int
) -> np.ndarray:
    """Per feature, the AUC of ``score`` over weighted (feature, score) entries: the chance a
    positive row scores above a negative one, ties counting half; 0.5 for a feature without
    both positive and negative weight, or with one score only (exactly: the running sums over
    the features before it would round it)."""
    order = np.lexsort((score, feature))
    feature, score, positives, negatives = feature[order], score[order], positives[order], negatives[order]
    if not len(feature):
        return np.full(n_features, 0.5)
    new = np.r_[True, (feature[1:] != feature[:-1]) | (score[1:] != score[:-1])]
    starts = np.flatnonzero(new)
    group_feature = feature[starts]
    group_positives = np.add.reduceat(positives, starts)
    group_negatives = np.add.reduceat(negatives, starts)
    total_positives = np.bincount(group_feature, weights=group_positives, minlength=n_features)
    total_negatives = np.bincount(group_feature, weights=group_negatives, minlength=n_features)
    both = (total_positives > 0) & (total_negatives > 0)
    # shares of the feature's positive and negative weight, so that tiny weights neither underflow to 0/0
    positive_share = group_positives / np.where(both, total_positives, 1.0)[group_feature]
    negative_share = group_negatives / np.where(both, total_negatives, 1.0)[group_feature]
    negatives_through = np.cumsum(negative_share)
    feature_start = np.flatnonzero(np.r_[True, group_feature[1:] != group_feature[:-1]])
    before_feature = np.repeat(
        np.r_[0.0, negatives_through[feature_start[1:] - 1]], np.diff(np.r_[feature_start, len(starts)])
    )
    negatives_below = negatives_through - negative_share - before_feature
    won = np.bincount(
        group_feature, weights=positive_share * (negatives_below + 0.5 * negative_share), minlength=n_features
    )
    scored = np.bincount(group_feature, minlength=n_features) > 1
    return np.where(both & scored, won, 0.5)


def chance_spread(positives: np.ndarray, negatives: np.ndarray) -> np.ndarray:
    """The standard error of the AUC of a score unrelated to the class, √((P + N + 1) / (12·P·N))
    (the Mann–Whitney U statistic's null variance), ∞ without both classes."""
    with np.errstate(over="ignore", under="ignore"):
        pairs = positives * negatives
        both = pairs > 0
        spread = (positives + negatives + 1) / (12 * np.where(both, pairs, 1.0))
    return np.where(both, np.sqrt(spread), np.inf)


class AutoStage(Stage):
    """Give each numeric feature the treatment its cross-fitted AUC supports, then scale it."""

    name = "auto"
    accepts = Accepts(nominal_class=True)
    summary = (
        "Per feature, choose presence, raw, shape, raw with a shaped copy, or drop by a cross-fitted AUC "
        "on the training rows, then scale by a metric (KDD'09 §5 future work). Multi-class: one-vs-rest, "
        "a column group NAME@LABEL per class."
    )
    widening_hint = "one column group NAME@LABEL per class label; --positive LABEL chooses for one class"
    learns = True
    metrics: dict = {}
    options = (
        Option("metric", str, "bns", "The metric whose score each kept feature's range is widened to."),
        Option("folds", int, 5, "Inner folds of the cross-fitted criterion.", minimum=2, maximum=100),
        Option("min_support", int, 10, "Positive and negative rows a feature needs to leave the default.", minimum=0),
        Option("min_gain", float, 0.01, "Cross-fitted AUC a treatment must gain over the default.", minimum=0.0),
        Option(
            "evidence",
            float,
            1.0,
            "A treatment must also gain this many standard errors of a chance AUC over the default.",
            minimum=0.0,
        ),
        Option("drop", bool, True, "Remove a supported feature whose every criterion is ≤ 0.5 (--no-drop keeps it)."),
        Option(
            "keep_raw",
            bool,
            True,
            "A dense feature that shapes keeps its raw column too, and shaped copies go beside the default "
            "(--no-keep-raw: neither; shaping replaces a column only where it gains).",
        ),
        Option(
            "shape_copy",
            str,
            "dense-unless-worse",
            "Which features get a shaped copy beside their default column: a dense one unless shaping is "
            "worse, any unless worse, or only where shaping gains.",
            choices=("dense-unless-worse", "unless-worse", "gain"),
        ),
        Option("seed", int, 1, "Seed of the inner folds' row hash.", minimum=0, maximum=2**32 - 1),
        Option("report", bool, False, "Print the treatment counts and the top features on stderr after fitting."),
    )
    #: Saved until the copies' scores were recomputed on load (their selection, not their values, is kept).
    retired_state = frozenset({"copy_scores"})
    state_arrays = {
        _PER_COLUMN: StateArray(length=None, whole=True, high=len(TREATMENTS)),
        "sparse": StateArray(length=_PER_COLUMN, whole=True, high=2),
        "criterion_presence": StateArray(length=_PER_COLUMN),
        "criterion_raw": StateArray(length=_PER_COLUMN),
        "criterion_shape": StateArray(length=_PER_COLUMN),
        "scores": StateArray(length=_PER_COLUMN),
        "offset": StateArray(length=_PER_COLUMN),
        "factor": StateArray(length=_PER_COLUMN),
        "inner_exponent": StateArray(length=_PER_COLUMN, whole=True, low=-4096, high=4096, default=0),
        "outer_exponent": StateArray(length=_PER_COLUMN, whole=True, low=-4096, high=4096, default=0),
        "copy_offset": StateArray(length=_PER_COLUMN),
        "copy_factor": StateArray(length=_PER_COLUMN),
        "copy_inner_exponent": _EXPONENT,
        "copy_outer_exponent": _EXPONENT,
        "zero_probability": StateArray(length=_PER_COLUMN, probability=True),
        "default_probability": StateArray(length=_PER_COLUMN, probability=True),
        "knot_feature": StateArray(length=None, whole=True, high=_PER_COLUMN),
        "knot_value": StateArray(length="knot_feature", finite=False),
        "knot_probability": StateArray(length="knot_feature", probability=True),
    }

    def check_params(self) -> None:
        if self.params["metric"] not in self.metrics:
            raise FilterkitError(
                f"auto --metric {self.params['metric']!r}: no such metric "
                f"(registered: {', '.join(sorted(self.metrics))})"
            )

    def prepare(self, schema, context) -> None:
        super().prepare(schema, context)
        refuse_unaccepted_input(self, schema, context)
        self.class_attribute = schema.attributes[context.class_index]
        labels = self.class_attribute.labels
        # more than two labels without --positive: each class against the rest (docs/algorithms.md §14),
        # fitted on the input with each feature repeated once per label
        self.every_class = context.positive is None and len(labels) > 2
        self.copies = len(labels) if self.every_class else 1
        is_feature = np.zeros(len(schema.attributes), dtype=bool)
        is_feature[self.features] = True
        self.repeated_source = np.repeat(np.arange(len(schema.attributes)), np.where(is_feature, self.copies, 1))
        self.repeated_features = np.flatnonzero(is_feature[self.repeated_source])

    def new_statistics(self) -> list[ValueCounts]:
        """One :class:`ValueCounts` per inner fold."""
        n_classes = len(self.class_attribute.labels)
        return [ValueCounts.empty(len(self.features), n_classes) for _ in range(self.params["folds"])]

    def merge(self, first: list[ValueCounts], second: list[ValueCounts]) -> list[ValueCounts]:
        """The counts of the rows of both, fold by fold."""
        return [mine.merge(theirs) for mine, theirs in zip(first, second)]

    def accumulate(self, statistics: list[ValueCounts], chunk: Chunk) -> list[ValueCounts]:
        fold = inner_folds(chunk, self.params["folds"], self.params["seed"])
        n_classes = len(self.class_attribute.labels)
        parts = []
        for k in range(self.params["folds"]):
            rows = np.flatnonzero(fold == k)
            part = Chunk(chunk.values[rows], {}, None if chunk.weights is None else chunk.weights[rows])
            parts.append(ValueCounts.of_chunk(part, self.features, self.context.class_index, n_classes))
        return self.merge(statistics, parts)

    def _knots(self, zero_bin: bool, counts: ValueCounts) -> Knots:
        """The LP shaper's estimates (``shape``'s defaults, missing kept) of this stage's features
        toward the positive class, fitted on ``counts``."""
        numeric = np.zeros(len(self.features), dtype=bool)
        fit = fit_toward(
            self.positive, counts.histogram(include_zero=True), counts, numeric, zero_bin, NEIGHBORS, False
        )
        arrays = (fit.knot_feature, fit.knot_value, fit.knot_probability, fit.zero_probability, fit.default_probability)
        return Knots(*arrays, numeric, zero_bin)

    def _shaped(self, sparse_knots: Knots, dense_knots: Knots, positions: np.ndarray, values: np.ndarray):
        """p̃ of each (feature position, value): the zero-bin estimates on sparse features."""
        shaped = dense_knots.at(positions, values)
        on_sparse = self.sparse[positions].astype(bool)
        if on_sparse.any():
            shaped[on_sparse] = sparse_knots.at(positions[on_sparse], values[on_sparse])
        return shaped

    def finalize(self, statistics: list[ValueCounts]) -> None:
        """Fit toward the positive class, or toward each class in turn, laying the classes' arrays
        side by side: column f·k + c is feature f against class c."""
        full = functools.reduce(ValueCounts.merge, statistics)
        low, high = full.training_range()
        refuse_infinite_ranges(self, low, high)
        if self.every_class:
            targets = list(range(self.copies))
        else:
            targets = [positive_code(self.class_attribute, full.class_totals, self.context.positive)]
        fits = [self._fit_toward(target, statistics, full) for target in targets]
        for key in self.state_arrays:
            if not key.startswith("knot_"):
                setattr(self, key, np.stack([fit[key] for fit in fits], axis=1).ravel())
        feature = np.concatenate([fit["knot_feature"] * self.copies + c for c, fit in enumerate(fits)])
        value, probability = (np.concatenate([fit[key] for fit in fits]) for key in ("knot_value", "knot_probability"))
        order = np.lexsort((value, feature))
        self.knot_feature, self.knot_value, self.knot_probability = feature[order], value[order], probability[order]
        self.knots = self._fitted_knots()
        self._layout()
        if self.params["report"]:
            for line in self.fit_summary():
                print(f"auto: {one_line(line)}", file=sys.stderr)  # a name from the file, escaped for a terminal

    def _fit_toward(self, positive: int, statistics: list[ValueCounts], full: ValueCounts) -> dict:
        """The state arrays of the policy for class ``positive`` against the rest, one entry per feature."""
        n = len(self.features)
        self.positive = positive
        histogram = full.histogram(include_zero=True)
        positives = histogram.of_class(self.positive)
        negatives = histogram.rows - positives
        zero = histogram.value == 0
        known_rows = np.bincount(histogram.feature, weights=histogram.rows, minlength=n)
        zero_rows = np.bincount(histogram.feature[zero], weights=histogram.rows[zero], minlength=n)
        self.sparse = ((known_rows > 0) & (2 * zero_rows >= known_rows)).astype(np.int64)
        carries = ~zero | ~self.sparse[histogram.feature].astype(bool)
        support = np.minimum(
            np.bincount(histogram.feature[carries], weights=positives[carries], minlength=n),
            np.bincount(histogram.feature[carries], weights=negatives[carries], minlength=n),
        )
        self.criterion_presence, self.criterion_raw, self.criterion_shape = self._cross_fitted(statistics)
        known_positives = np.bincount(histogram.feature, weights=positives, minlength=n)
        known_negatives = np.bincount(histogram.feature, weights=negatives, minlength=n)
        self._choose(support, chance_spread(known_positives, known_negatives))
        self._fit_outputs(full, histogram)
        return {key: getattr(self, key) for key in self.state_arrays}

    def _cross_fitted(self, folds: list[ValueCounts]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per feature, the held-out AUC of presence, raw and shape, each fitted (the
        direction; the shaper) on the other inner folds: the folds' AUCs averaged with
        weights positives × negatives (the pairs each fold ranks)."""
        n = len(self.features)
        n_folds = len(folds)
        aucs = np.full((3, n_folds, n), 0.5)
        fold_positives, fold_negatives = np.zeros((n_folds, n)), np.zeros((n_folds, n))
        for k, held in enumerate(folds):
            training = functools.reduce(ValueCounts.merge, [fold for j, fold in enumerate(folds) if j != k])
            trained = training.histogram(include_zero=True)
            trained_positives = trained.of_class(self.positive)
            trained_negatives = trained.rows - trained_positives
            presence_direction, raw_direction = (
                np.where(
                    auc_by_feature(trained.feature, score, trained_positives, trained_negatives, n) >= 0.5, 1.0, -1.0
                )
                for score in ((trained.value != 0).astype(float), trained.value)
            )
            sparse_knots, dense_knots = self._knots(True, training), self._knots(False, training)
            tested = held.histogram(include_zero=True)
            positives = tested.of_class(self.positive)
            negatives = tested.rows - positives
            fold_positives[k] = np.bincount(tested.feature, weights=positives, minlength=n)
            fold_negatives[k] = np.bincount(tested.feature, weights=negatives, minlength=n)
            scores = (
                presence_direction[tested.feature] * (tested.value != 0),
                raw_direction[tested.feature] * tested.value,
                self._shaped(sparse_knots, dense_knots, tested.feature, tested.value),
            )
            for t, score in enumerate(scores):
                aucs[t, k] = auc_by_feature(tested.feature, score, positives, negatives, n)
        # each fold weighs its share of the positive times its share of the negative weight (of the
        # pairs it ranks): shares, so that neither tiny nor huge weights underflow or overflow
        total_positives, total_negatives = fold_positives.sum(axis=0), fold_negatives.sum(axis=0)
        both = (total_positives > 0) & (total_negatives > 0)
        with np.errstate(under="ignore"):
            weight = (fold_positives / np.where(both, total_positives, 1.0)) * (
                fold_negatives / np.where(both, total_negatives, 1.0)
            )
        total_weight = weight.sum(axis=0)
        weighed = total_weight > 0
        criteria = np.where(weighed, (weight * aucs).sum(axis=1) / np.where(weighed, total_weight, 1.0), 0.5)
        return criteria[0], criteria[1], criteria[2]

    def _choose(self, support: np.ndarray, chance_spread: np.ndarray) -> None:
        """The policy: the default (presence if sparse, raw if dense) unless a supported
        alternative gains ``min_gain``; with ``keep_raw``, a shaped copy beside the default as
        ``shape_copy`` says, and shaping a dense feature (any, under ``unless-worse``) keeps its
        raw column (``both``); with ``drop``, no supported criterion above 0.5 drops the feature."""
        criteria = np.vstack([self.criterion_presence, self.criterion_raw, self.criterion_shape])
        sparse = self.sparse.astype(bool)
        default = np.where(sparse, PRESENCE, RAW)
        supported = support >= self.params["min_support"]
        default_criterion = criteria[default - PRESENCE, np.arange(len(default))]
        min_gain = np.maximum(self.params["min_gain"], self.params["evidence"] * chance_spread)
        # a default below chance counts as chance: beating a reversed feature shows no information
        clears = criteria >= np.maximum(default_criterion, 0.5) + min_gain
        # of the treatments that clear the gain, the simplest (presence, raw, shape) within min_gain of the best
        best = np.where(clears, criteria, -np.inf).max(axis=0)
        simplest = np.argmax(clears & (criteria >= best - min_gain), axis=0) + PRESENCE
        cleared = clears.any(axis=0) & supported
        treatment = np.where(cleared, simplest, default)
        copies = self.params["shape_copy"]
        if copies != "gain" and self.params["keep_raw"]:
            # a shaped copy beside the default column unless shaping is worse than it, or at chance (without
            # --keep-raw there is no beside: a shaped column replaces the default only where it clears the gain)
            no_worse = (self.criterion_shape >= default_criterion - min_gain) & (self.criterion_shape > 0.5)
            eligible = ~sparse if copies == "dense-unless-worse" else np.ones(len(sparse), dtype=bool)
            treatment[(treatment == default) & eligible & supported & no_worse] = SHAPE
        if self.params["keep_raw"]:
            treatment[(treatment == SHAPE) & (~sparse | (copies == "unless-worse"))] = BOTH
        if self.params["drop"]:
            treatment[supported & (criteria.max(axis=0) <= 0.5)] = DROP
        self.treatment = treatment.astype(np.int64)

    def _fit_outputs(self, full: ValueCounts, histogram) -> None:
        """The full-data knots (of the features that shape) and the scaling of each output
        column: the feature's own, and the shaped copy of a ``both`` feature."""
        sparse_knots, dense_knots = self._knots(True, full), self._knots(False, full)
        shapes = (self.treatment == SHAPE) | (self.treatment == BOTH)
        on_sparse = self.sparse.astype(bool)
        keep_sparse = shapes[sparse_knots.knot_feature] & on_sparse[sparse_knots.knot_feature]
        keep_dense = shapes[dense_knots.knot_feature] & ~on_sparse[dense_knots.knot_feature]
        feature, value, probability = (
            np.concatenate([getattr(sparse_knots, key)[keep_sparse], getattr(dense_knots, key)[keep_dense]])
            for key in ("knot_feature", "knot_value", "knot_probability")
        )
        order = np.lexsort((value, feature))
        self.knot_feature, self.knot_value, self.knot_probability = feature[order], value[order], probability[order]
        self.zero_probability = np.where(on_sparse, sparse_knots.at_zero(), dense_knots.at_zero())
        self.default_probability = sparse_knots.default_probability
        self.knots = self._fitted_knots()
        self.scores, self.offset, self.factor, self.inner_exponent, self.outer_exponent = self._scaling(
            full, histogram, self._kind(copy=False)
        )
        _, self.copy_offset, self.copy_factor, self.copy_inner_exponent, self.copy_outer_exponent = self._scaling(
            full, histogram, self._kind(copy=True)
        )

    def _scaling(self, full: ValueCounts, histogram, kind: np.ndarray):
        """Per feature, for the column whose treatment is ``kind``: the metric's score of the
        treated values (best threshold; presence for ``presence``; 0 for ``drop``), the
        offset (0 on a sparse feature, else the treated minimum), and :func:`range_scaling`'s
        factor and exponents widening the treated range to the score."""
        metric: Metric = self.metrics[self.params["metric"]]
        targets = [self.positive]
        n = len(self.features)
        scores = np.zeros(n)
        for code, presence in ((PRESENCE, True), (RAW, False)):
            if (kind == code).any():
                scores[kind == code] = feature_scores(full, metric, targets, presence)[kind == code]
        if (kind == SHAPE).any():
            # scores by a threshold depend only on the order of the values: g(x) − g(0) keeps g's order
            # and keeps 0 at 0, which is what ValueCounts.through needs
            zero_shift = self._treated(np.arange(n), np.zeros(n), kind)
            shaped = full.through(
                lambda positions, values: self._treated(positions, values, kind) - zero_shift[positions]
            )
            assert shaped is not None
            scores[kind == SHAPE] = feature_scores(shaped, metric, targets, False)[kind == SHAPE]
        treated = self._treated(histogram.feature, histogram.value, kind)
        low, high = np.full(n, np.inf), np.full(n, -np.inf)
        np.minimum.at(low, histogram.feature, treated)
        np.maximum.at(high, histogram.feature, treated)
        seen = low <= high
        low, high = np.where(seen, low, 0.0), np.where(seen, high, 0.0)
        factor, (inner, outer) = range_scaling(low, high, scores)
        return scores, np.where(self.sparse.astype(bool), 0.0, low), factor, inner, outer

    def _fitted_knots(self) -> Knots:
        """The knots of the features that shape, with the zero bin (p̃(0) of a dense feature is its
        estimate at 0)."""
        numeric = np.zeros(len(self.treatment), dtype=bool)
        arrays = (self.knot_feature, self.knot_value, self.knot_probability)
        return Knots(*arrays, self.zero_probability, self.default_probability, numeric, True)

    def _treated(self, positions: np.ndarray, values: np.ndarray, kind: np.ndarray) -> np.ndarray:
        """g of each (feature position, value) under the per-feature treatment ``kind``
        (presence, raw, shape; drop gives 0); NaN stays NaN."""
        treatment = kind[positions]
        treated = np.where(treatment == PRESENCE, (values != 0).astype(np.float64), values)
        shapes = (treatment == SHAPE) & ~np.isnan(values)
        if shapes.any():
            zero_shift = np.where(self.sparse.astype(bool), self.zero_probability, 0.0)[positions[shapes]]
            treated[shapes] = self.knots.at(positions[shapes], values[shapes]) - zero_shift
        treated[treatment == DROP] = 0.0
        return np.where(np.isnan(values), np.nan, treated)

    def _kind(self, copy: bool) -> np.ndarray:
        """Per feature the treatment of its own column, or with ``copy`` of its shaped copy (DROP: none)."""
        if copy:
            return np.where(self.treatment == BOTH, SHAPE, DROP)
        return np.where(self.treatment == BOTH, np.where(self.sparse.astype(bool), PRESENCE, RAW), self.treatment)

    def _output(self, positions: np.ndarray, values: np.ndarray, copy: bool = False) -> np.ndarray:
        """The output of each (feature position, value): g scaled to the metric's score; with
        ``copy``, the shaped copy of a ``both`` feature."""
        prefix = "copy_" if copy else ""
        factor, offset, inner, outer = (
            getattr(self, prefix + key) for key in ("factor", "offset", "inner_exponent", "outer_exponent")
        )
        return scale_values(
            self._treated(positions, values, self._kind(copy)),
            factor[positions],
            offset[positions],
            (inner[positions], outer[positions]),
        )

    def _layout(self) -> None:
        """Where the output columns come from: the kept columns of the repeated input, and after each
        ``both`` column its shaped copy.  Sets ``source`` (the repeated input column of each output
        column), ``is_copy``, ``destination`` (the output column of each kept repeated input column) and
        ``position_of`` (each repeated input column's position among the repeated features, −1 for none)."""
        n_attributes = len(self.repeated_source)
        kept = np.ones(n_attributes, dtype=bool)
        kept[self.repeated_features[self.treatment == DROP]] = False
        copied = np.zeros(n_attributes, dtype=bool)
        copied[self.repeated_features[self.treatment == BOTH]] = True
        source = np.repeat(np.arange(n_attributes), kept.astype(np.int64) + copied)
        is_copy = np.r_[False, source[1:] == source[:-1]] if len(source) else np.zeros(0, dtype=bool)
        destination = np.full(n_attributes, -1, dtype=np.int64)
        destination[source[~is_copy]] = np.flatnonzero(~is_copy)
        self.source, self.is_copy, self.destination = source, is_copy, destination
        self.position_of = feature_positions(n_attributes, self.repeated_features)

    def _repeated_attributes(self) -> list[Attribute]:
        """The attributes of the repeated input: on every class, each feature's copies ``NAME@LABEL``."""
        schema = super().output_schema()
        attributes = [schema.attributes[i] for i in self.repeated_source.tolist()]
        if self.every_class:
            labels = self.class_attribute.labels
            for j, column in enumerate(self.repeated_features.tolist()):
                name = f"{attributes[column].name}@{labels[j % self.copies]}"
                attributes[column] = Attribute(name, NUMERIC, declared_type="numeric")
        return attributes

    def output_schema(self):
        repeated = self._repeated_attributes()
        attributes = [
            Attribute(f"{repeated[i].name}{COPY_SUFFIX}", NUMERIC, declared_type="numeric") if copy else repeated[i]
            for i, copy in zip(self.source.tolist(), self.is_copy.tolist())
        ]
        return unique_schema(self, [attributes], "copy" if self.every_class else "shaped copy")

    def _zero_moving_columns(self) -> tuple[np.ndarray, np.ndarray]:
        """The output columns not 0 where their input is (a dense feature's own column with an
        offset, a dense feature's shaped copy), and the shaped copies of sparse features."""
        copy_columns = np.flatnonzero(self.is_copy)
        copy_of_sparse = self.sparse[self.position_of[self.source[copy_columns]]].astype(bool)
        moves_zero = (self.offset * self.factor != 0) & (self.treatment != DROP)
        filled = np.r_[self.destination[self.repeated_features[moves_zero]], copy_columns[~copy_of_sparse]]
        filled = filled.astype(np.int64)
        return filled, copy_columns[copy_of_sparse]

    def preserves_zeros(self) -> bool:
        """Once fitted: True when every output column keeps 0 at 0 (every kept feature sparse)."""
        return hasattr(self, "offset") and not len(self._zero_moving_columns()[0])

    def _repeated(self, chunk: Chunk) -> Chunk:
        """``chunk`` with each feature's column repeated once per class (itself when fitted for one class)."""
        if not self.every_class:
            return chunk
        first = np.searchsorted(self.repeated_source, np.arange(len(self.input_schema.attributes)))
        text = {int(first[column]): texts for column, texts in chunk.text.items()}
        return Chunk(chunk.values[:, self.repeated_source], text, chunk.weights)

    def transform(self, chunk: Chunk) -> Chunk:
        chunk = self._repeated(chunk)
        source = self.source
        text = {int(self.destination[column]): texts for column, texts in chunk.text.items()}
        if chunk.is_sparse:
            matrix = cast(sp.csr_matrix, chunk.values).tocsr()
            positions = self.position_of[matrix.indices]
            acted = positions >= 0
            data = matrix.data.copy()
            data[acted] = self._output(positions[acted], data[acted])
            output = with_stored_values(matrix, data)
            if len(source) != matrix.shape[1] or np.any(source != np.arange(len(source))):
                output = output[:, source]
            filled, sparse_copies = self._zero_moving_columns()
            if not len(filled) and not len(sparse_copies):
                return Chunk(output, text, chunk.weights)
            copied = data.copy()
            copied[acted] = self._output(positions[acted], matrix.data[acted], copy=True)
            copies = with_stored_values(matrix, np.where(acted, copied, 0.0))[:, source[sparse_copies]]
            untouched = np.setdiff1d(np.arange(len(source)), np.r_[filled, sparse_copies])
            dense_part = sp.csr_matrix(self._filled_columns(chunk, filled))
            columns = sp.hstack([output[:, untouched], dense_part, copies]).tocsr()
            order = np.argsort(np.r_[untouched, filled, sparse_copies], kind="stable")
            return Chunk(sp.csr_matrix(columns[:, order]), text, chunk.weights)
        output = chunk.values[:, source]
        acted = np.flatnonzero(self.position_of[source] >= 0)
        output[:, acted] = self._filled_columns(chunk, acted)
        return Chunk(output, text, chunk.weights)

    def _filled_columns(self, chunk: Chunk, columns: np.ndarray) -> np.ndarray:
        """The output ``columns`` (each a feature's or a shaped copy), computed densely."""
        inputs = self.source[columns]
        values = chunk.values
        block = cast(sp.csr_matrix, values)[:, inputs].toarray() if chunk.is_sparse else values[:, inputs]
        result = np.empty(block.shape)
        for copy in (False, True):
            chosen = self.is_copy[columns] == copy
            if chosen.any():
                result[:, chosen] = self._output(
                    np.broadcast_to(self.position_of[inputs[chosen]], (block.shape[0], chosen.sum())).ravel(),
                    block[:, chosen].ravel(),
                    copy=copy,
                ).reshape(block.shape[0], chosen.sum())
        return result

    def fit_summary(self) -> list[str]:
        """What fitting chose (``filterkit -v``): the count per treatment, then the ten features (on k
        classes: feature copies ``NAME@LABEL``) with the highest criterion of their treatment, with all
        three criteria and the metric's score."""
        repeated = self._repeated_attributes()
        names = [repeated[i].name for i in self.repeated_features]
        counted = np.bincount(self.treatment, minlength=len(TREATMENTS))
        parts = ", ".join(f"{name} {count}" for name, count in zip(TREATMENTS, counted) if count)
        classes = f" × {self.copies} classes" if self.every_class else ""
        lines = [f"{len(self.features)} features{classes}: {parts}"]
        criteria = np.vstack(
            [np.full(len(names), 0.5), self.criterion_presence, self.criterion_raw, self.criterion_shape]
        )
        chosen = criteria[np.minimum(self.treatment, SHAPE), np.arange(len(names))]  # both: its shaped copy's
        for j in np.lexsort((np.arange(len(names)), -chosen))[:10]:
            lines.append(
                f"  {names[j]}: {TREATMENTS[self.treatment[j]]} (cross-fitted AUC presence "
                f"{self.criterion_presence[j]:.3f}, raw {self.criterion_raw[j]:.3f}, shape "
                f"{self.criterion_shape[j]:.3f}; {self.params['metric']} {self.scores[j]:.3f})"
            )
        return lines

    def load_state(self, state: dict) -> None:
        super().load_state(state)
        if len(self.treatment) != len(self.features) * self.copies:
            raise invalid_state(
                self, f"'treatment' has {len(self.treatment)} entries, expected {len(self.features) * self.copies}"
            )
        if first_unsorted_knot(self.knot_feature, self.knot_value) is not None:
            raise invalid_state(self, "the knots are not sorted by feature and value")
        self.knots = self._fitted_knots()
        self._layout()


@hookimpl
def register_stages(register, metrics):
    """The ``auto`` per-feature policy stage, knowing the registered metrics."""
    register(type("AutoStage", (AutoStage,), {"metrics": dict(metrics)}))
