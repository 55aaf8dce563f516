"""``select``: keep the best-ranked features (JMLR 2003; Brank et al.; docs/algorithms.md §5 is the
reference of the rules, the ranking, the ties, ``--per-class``'s turns and the SVM's sample).

Ranking comes from ``--metric NAME`` (any registered metric, scored on this stage's input; nominal
attributes are ranked too, unless ``--numeric-only``), ``--metric svm`` (|w| of a linear SVM trained
on a seeded sample of the training rows, Brank §3.1.1) or, without ``--metric``, the scores the
nearest preceding scorer recorded.  Exactly one of ``--top``, ``--fraction``, ``--min-score`` and
``--sparsity`` says how many.  Kept attributes keep their input order; the class, string, date and
relational attributes are always kept.  The SVM's sample is the one statistic here that grows with rows.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from filterkit.exact import fraction_count
from filterkit.labels import LABEL_OPTIONS, chosen_labels
from filterkit.metrics import (
    COMBINE_OPTION,
    JOINT,
    class_scores,
    combined,
    feature_scores,
    label_scores,
    per_label_scores,
    positive_unused,
    ranking_order,
    resolved_combine,
    target_classes,
)
from filterkit.plugin import (
    ATTRIBUTES,
    NOMINAL,
    NUMERIC,
    Accepts,
    Attribute,
    Chunk,
    FilterkitError,
    Option,
    StateArray,
    ValueCounts,
    feature_positions,
    hookimpl,
    invalid_state,
    nonzero_entries,
)
from filterkit.stage import refuse_unaccepted_input
from filterkit.stage_parts import AttributeSubset, features_of_kinds, label_layout
from filterkit.statistics import LabelSetStatistics, LabelStatistics, label_set_codes

RULES = ("top", "fraction", "min_score", "sparsity")
SVM = "svm"
#: The options only ``--metric svm`` reads, and those only a ``--metric`` reads (``--per-class`` and
#: ``--per-label`` without one are refused).
SVM_OPTIONS = ("sample", "C", "seed")
METRIC_OPTIONS = ("presence", "combine", "numeric_only")


def _counts_shape(counts) -> tuple | None:
    """What of ``select``'s class counts must match the stage's: their kind, features and classes (label sets:
    their number is the counts' own), label by label on multi-label data."""
    if counts is None:
        return None
    if isinstance(counts, LabelStatistics):
        return (LabelStatistics, tuple(_counts_shape(label) for label in counts.per_label))
    if isinstance(counts, LabelSetStatistics):
        return (LabelSetStatistics, type(counts.counts), counts.counts.n_features)
    return (type(counts), counts.n_features, counts.n_classes)


@dataclass
class SelectionStatistics:
    """What ``select`` learns in its pass: per-feature non-zero counts and the row
    count (for ``--sparsity``), class value histograms (for ``--metric``) and the
    sampled rows with their classes and instance weights (for ``--metric svm``)."""

    rows: int
    nonzero: np.ndarray
    counts: ValueCounts | LabelStatistics | LabelSetStatistics | None = None
    sample_rows: list = field(default_factory=list)
    sample_labels: list = field(default_factory=list)
    sample_weights: list = field(default_factory=list)

    def merge(self, other: "SelectionStatistics") -> "SelectionStatistics":
        """Statistics of both parts (the first part's sample comes first; both count values, or neither)."""
        return SelectionStatistics(
            self.rows + other.rows,
            self.nonzero + other.nonzero,
            None if self.counts is None or other.counts is None else self.counts.merge(other.counts),  # type: ignore[arg-type]  # both parts count alike
            self.sample_rows + other.sample_rows,
            self.sample_labels + other.sample_labels,
            self.sample_weights + other.sample_weights,
        )

    def of_features(self, positions: np.ndarray) -> "SelectionStatistics":
        """The statistics of the features at ``positions``, renumbered in that order; −1 for a feature that is
        0 in every row (``filterkit update``'s new word).  No sample: ``--metric svm`` keeps none to move."""
        nonzero = np.zeros(len(positions))
        held = positions >= 0
        nonzero[held] = self.nonzero[positions[held]]
        counts = None if self.counts is None else self.counts.of_features(positions)
        return SelectionStatistics(self.rows, nonzero, counts)


class Selector(AttributeSubset):
    """Keep the best-ranked numeric features by one rule; ``metrics`` is set by the plugin."""

    name = "select"
    examples = (
        {"metric": "ig", "top": 50},
        {"sparsity": 5.0, "metric": "bns", "presence": True},
        {"fraction": 0.1, "metric": "svm"},
        {"min_score": 0.0, "metric": "bns"},
    )
    summary = (
        "Keep the best-ranked features (numeric; nominal too with a --metric other than svm, which passes them "
        "through): --top K, --fraction F, "
        "--min-score X or --sparsity S."
    )
    metrics: dict = {}
    #: The features' ranking scores; the positions of the kept features.
    state_arrays = {"scores": StateArray(), "kept": StateArray(length=None, whole=True, high=ATTRIBUTES)}

    def check_params(self) -> None:
        given = [rule for rule in RULES if self.params[rule] is not None]
        if len(given) != 1:
            flags = ", ".join("--" + r.replace("_", "-") for r in RULES)
            found = f" (found {', '.join('--' + r.replace('_', '-') for r in given)})" if given else ""
            raise FilterkitError(f"stage 'select' needs exactly one of {flags}{found}")
        self.rule = given[0]
        self._check_bounds()
        metric = self.params["metric"]
        if metric == SVM and self.params["combine"] == JOINT:
            raise FilterkitError("select --metric svm: --combine joint is for ig and chi; use max, mean or min")
        if self.params["per_class"] and self.params["per_label"]:
            raise FilterkitError("select: --per-class is for a class, --per-label for multi-label data: give one")
        if self.params["per_class"] or self.params["per_label"]:
            turns = "--per-label" if self.params["per_label"] else "--per-class"
            if metric is None or metric == SVM:
                raise FilterkitError(f"select {turns} needs --metric NAME (a registered metric, not svm)")
            if self.params["combine"] == JOINT:
                raise FilterkitError("select --per-class ranks each class against the rest: not with --combine joint")

    def _check_bounds(self) -> None:
        """Refuse the values the options' declared bounds cannot: 0 for ``--fraction``, ``--C`` and ``--sample``."""
        fraction = self.params["fraction"]
        if fraction is not None and not 0 < fraction <= 1:
            raise FilterkitError(f"option --fraction: {fraction} is not in (0, 1]")
        if self.params["C"] <= 0:  # Option.convert has refused NaN and infinities
            raise FilterkitError(f"option --C: {self.params['C']} is not a positive number")
        if self.params["sample"] <= 0 and self.params["metric"] == SVM:  # read by svm alone (else a warning)
            raise FilterkitError(f"option --sample: {self.params['sample']} is not in (0, 1]")

    def needs_row_positions(self) -> bool:
        """With ``--metric svm``: the SVM's training sample draws one seeded number per row,
        by the row's position in the whole input."""
        return self.params["metric"] == SVM

    @property
    def accepts(self) -> Accepts:  # type: ignore[override]  # a class attribute in Stage; select's depends on --metric
        """Scoring by a metric learns from the classes, or from each label of multi-label data."""
        metric = self.params["metric"]
        return Accepts(nominal_class=metric is not None, labels=metric is not None)

    @property
    def learns(self) -> bool:  # type: ignore[override]  # a class attribute in Stage; select's depends on its options
        """A pass over the data is needed to score by a metric or to measure sparsity."""
        return self.params["metric"] is not None or self.rule == "sparsity"

    def select_features(self, schema, context) -> np.ndarray:
        """The numeric non-class attributes, and with ``--metric NAME`` (not svm) the nominal
        ones too, unless ``--numeric-only``."""
        metric = self.params["metric"]
        if metric is None or metric == SVM or self.params["numeric_only"]:
            return super().select_features(schema, context)
        return features_of_kinds(schema, context, (NUMERIC, NOMINAL))

    def prepare(self, schema, context) -> None:
        super().prepare(schema, context)
        self.scores: np.ndarray | None = None
        self.labels = label_layout(schema.attributes[i] for i in self.features)[0]
        metric = self.params["metric"]
        self.combine = self.params["combine"] or "max"
        self.positive_unused: list[str] = []
        self.label_positions: tuple[int, ...] = ()
        if metric is not None and context.class_index is None and context.labels:
            refuse_unaccepted_input(self, schema, context)
            if self.params["per_class"]:
                raise FilterkitError("select: multi-label data takes --per-label (round robin over the labels)")
            if self.params["label_powerset"] and (self.params["per_label"] or metric == SVM):
                raise FilterkitError(
                    "select --label-powerset scores a metric over the label sets: not with --per-label or svm"
                )
            self.label_positions = chosen_labels(self, schema, context.labels)
        elif metric is not None:
            refuse_unaccepted_input(self, schema, context)
            if self.params["per_label"]:
                raise FilterkitError("select --per-label needs multi-label data; a class takes --per-class")
            self.class_attribute = schema.attributes[context.class_index]
            if metric != SVM and not self.params["per_class"]:
                self.combine = resolved_combine(
                    self.metrics[metric], self.params["combine"], self.class_attribute, context.positive
                )
                if self.metrics[metric].joint is not None:
                    self.positive_unused = positive_unused(self.combine, self.class_attribute, context.positive)
        else:
            scorers = [stage for stage in context.previous if callable(getattr(stage, "feature_scores", None))]
            if not scorers:
                raise FilterkitError(
                    "stage 'select' has nothing to rank by: give --metric NAME (e.g. select --metric ig --top 100) "
                    "or put a scorer before it (e.g. ig --no-scale select --top 100)"
                )
            self.scorer = scorers[-1]
        if not self.learns:
            self._choose(self._recorded_scores(), None)

    def fit_warnings(self) -> list[str]:
        """The base warnings, :func:`positive_unused`'s for a k-class metric, and one naming the options given that
        this ``--metric`` (or none) does not read (warned, not refused: a saved model may hold them)."""
        metric = self.params["metric"]
        turns = self.params["per_class"] or self.params["per_label"]
        defaults = {option.name: option.default for option in self.options}
        ignored = []
        for unread, why in (
            (SVM_OPTIONS, metric != SVM and "only --metric svm reads"),
            (METRIC_OPTIONS, metric is None and "only a --metric reads"),
            (("presence", "numeric_only"), metric == SVM and "--metric svm does not read"),
            (("combine",), bool(turns) and "--per-class and --per-label (each ranking apart) do not read"),
        ):
            given = [f"--{name.replace('_', '-')}" for name in unread if why and self.params[name] != defaults[name]]
            if given:
                ignored.append(f"{', '.join(given)}: {why} {'them' if len(given) > 1 else 'it'}; ignored here")
        return super().fit_warnings() + self.positive_unused + ignored

    def _recorded_scores(self) -> np.ndarray:
        recorded = self.scorer.feature_scores()
        names = [self.input_schema.attributes[i].name for i in self.features]
        unscored = [name for name in names if name not in recorded]
        if unscored:
            raise FilterkitError(
                f"stage 'select': '{self.scorer.name}' recorded no score for {len(unscored)} feature(s), "
                f"e.g. '{unscored[0]}'; put select right after the scorer or use --metric"
            )
        return np.array([recorded[name] for name in names], dtype=np.float64)

    def new_statistics(self) -> SelectionStatistics:
        statistics = SelectionStatistics(0, np.zeros(len(self.features)))
        if self.label_positions and self.params["label_powerset"]:
            statistics.counts = LabelSetStatistics((), ValueCounts.empty(len(self.features), 0))
        elif self.label_positions:
            statistics.counts = LabelStatistics(
                [ValueCounts.empty(len(self.features), 2) for _ in self.label_positions]
            )
        elif self.params["metric"] not in (None, SVM):
            statistics.counts = ValueCounts.empty(len(self.features), len(self.class_attribute.labels))
        return statistics

    def accumulate(self, statistics: SelectionStatistics, chunk: Chunk) -> SelectionStatistics:
        _, columns, values = nonzero_entries(chunk)
        position = feature_positions(chunk.shape[1], self.features)
        counted = (position[columns] >= 0) & ~np.isnan(values)
        nonzero = np.bincount(position[columns[counted]], minlength=len(self.features)).astype(np.float64)
        part = SelectionStatistics(chunk.n_rows, nonzero)
        if isinstance(statistics.counts, LabelSetStatistics):
            sets, codes = label_set_codes(chunk, self.label_positions)
            part.counts = LabelSetStatistics(sets, ValueCounts.of_chunk(chunk, self.features, codes, len(sets)))
        elif self.label_positions:
            part.counts = LabelStatistics(
                [ValueCounts.of_chunk(chunk, self.features, label, 2) for label in self.label_positions]
            )
        elif statistics.counts is not None:
            part.counts = ValueCounts.of_chunk(
                chunk, self.features, self.context.class_index, len(self.class_attribute.labels)
            )
        if self.params["metric"] == SVM:
            self._sample(part, chunk, statistics.rows)
        return statistics.merge(part)

    def saved_statistics(self, statistics: SelectionStatistics) -> dict:
        if self.params["metric"] == SVM:
            raise FilterkitError(
                "stage 'select' with --metric svm keeps a sample of the rows, which a model does not hold: "
                "it cannot be updated"
            )
        counts = {} if statistics.counts is None else {"counts": statistics.counts}
        return {"rows": statistics.rows, "nonzero": statistics.nonzero, **counts}

    def loaded_statistics(self, saved: dict) -> SelectionStatistics:
        rows, nonzero, counts = saved["rows"], saved["nonzero"], saved.get("counts")
        if isinstance(rows, bool) or not isinstance(rows, int) or rows < 0:
            raise ValueError("'rows' is not a whole number")
        if not isinstance(nonzero, np.ndarray) or nonzero.dtype != np.float64 or nonzero.shape != (len(self.features),):
            raise ValueError("'nonzero' is not one float64 per feature")
        expected = self.new_statistics().counts
        shapes = [_counts_shape(c) for c in (counts, expected)]
        if shapes[0] != shapes[1]:
            raise ValueError("'counts' are not those the stage gathers")
        return SelectionStatistics(rows, nonzero, counts)

    def _sample(self, part: SelectionStatistics, chunk: Chunk, rows_before: int) -> None:
        """Keep the rows whose seeded uniform draw is below ``--sample`` (row ``i`` of
        the input always gets the i-th draw of the stream, whatever the chunking), with
        their instance weights; a row of weight 0 is left out, as it counts for nothing."""
        bits = np.random.PCG64(self.params["seed"])
        bits.advance(rows_before)
        generator = np.random.Generator(bits)
        weights = np.ones(chunk.n_rows) if chunk.weights is None else chunk.weights
        chosen = (generator.random(chunk.n_rows) < self.params["sample"]) & (weights > 0)
        if self.label_positions:  # each row's labels (NaN: missing), left out label by label when fitting
            classes = np.column_stack([chunk.column(position) for position in self.label_positions])
        else:
            assert self.context.class_index is not None  # prepare refused --metric without a class
            classes = chunk.column(self.context.class_index)
            chosen &= ~np.isnan(classes)
        import scipy.sparse as sp

        block = sp.csr_matrix(chunk.values[np.flatnonzero(chosen)][:, self.features])
        block.data = np.nan_to_num(block.data, nan=0.0)
        part.sample_rows = [block]
        part.sample_labels = [classes[chosen] if self.label_positions else classes[chosen].astype(np.int64)]
        part.sample_weights = [weights[chosen]]

    def finalize(self, statistics: SelectionStatistics) -> None:
        metric = self.params["metric"]
        order = None
        if metric is None:
            scores = self._recorded_scores()
        elif metric == SVM:
            scores = self._svm_scores(statistics)
        elif isinstance(statistics.counts, LabelSetStatistics):
            names = [self.input_schema.attributes[position].name for position in self.label_positions]
            label_sets = Attribute("label set", NOMINAL, statistics.counts.names(names))
            self.combine = resolved_combine(self.metrics[metric], self.params["combine"], label_sets, None)
            targets = target_classes(label_sets, statistics.counts.counts.class_totals, None)
            presence = self.params["presence"]
            scores = feature_scores(
                statistics.counts.counts, self.metrics[metric], targets, presence, self.combine, labels=self.labels
            )
        elif isinstance(statistics.counts, LabelStatistics):
            scores, order = self._label_ranking(statistics.counts)
        elif self.params["per_class"]:
            assert statistics.counts is not None  # new_statistics counts for a metric
            scores, order = self._per_class_ranking(statistics.counts)
        else:
            assert statistics.counts is not None  # new_statistics counts for a metric
            targets = target_classes(self.class_attribute, statistics.counts.class_totals, self.context.positive)
            scores = feature_scores(
                statistics.counts,
                self.metrics[metric],
                targets,
                self.params["presence"],
                self.combine,
                labels=self.labels,
            )
        density = statistics.nonzero / statistics.rows if statistics.rows else statistics.nonzero
        self._choose(scores, density, order)

    def _per_class_ranking(self, counts: ValueCounts) -> tuple[np.ndarray, np.ndarray]:
        """Each feature's best one-vs-rest score, and the features in the order of
        ``--per-class``'s turns (only those at ``--min-score`` or more, with that rule)."""
        classes = [int(c) for c in np.flatnonzero(counts.class_totals > 0)]
        per_class = list(
            class_scores(
                counts, self.metrics[self.params["metric"]], classes, self.params["presence"], None, self.labels
            )
        )
        if not per_class:
            return np.zeros(len(self.features)), np.arange(len(self.features))
        minimum = self.params["min_score"] if self.rule == "min_score" else -np.inf
        return np.max(per_class, axis=0), round_robin(per_class, minimum)

    def _label_ranking(self, counts: LabelStatistics) -> tuple[np.ndarray, np.ndarray | None]:
        """Multi-label data: the labels' scores combined by ``--combine`` (binary relevance), or with
        ``--per-label`` each feature's best and the order of Forman's round robin over the labels (ICML 2004)."""
        metric, presence = self.metrics[self.params["metric"]], self.params["presence"]
        if not self.params["per_label"]:
            combine = self.params["combine"] or "max"
            return label_scores(
                counts.per_label, metric, presence, combine, self.params["normalize"], None, self.labels
            ), None
        per_label = per_label_scores(counts.per_label, metric, presence, None, self.labels)
        minimum = self.params["min_score"] if self.rule == "min_score" else -np.inf
        return np.max(per_label, axis=0, initial=-np.inf) if per_label else np.zeros(0), round_robin(per_label, minimum)

    def _lacking(self, rows: str) -> FilterkitError:
        """The error of an svm whose sample has no ``rows``: a larger ``--sample`` may give them, unless the sample
        is every training row (then the training data has none)."""
        if self.params["sample"] < 1:
            return FilterkitError(f"select --metric svm: the sample has no {rows} (raise --sample)")
        return FilterkitError(f"select --metric svm: the training data has no {rows}")

    def _svm_scores(self, statistics: SelectionStatistics) -> np.ndarray:
        """|w_j| of a liblinear SVM on the sample, each row weighing its instance weight (Brank §3.1.1);
        per class one-vs-rest, combined by ``--combine``, when the target has more than two classes."""
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.svm import LinearSVC

        if len(self.features) == 0:
            return np.zeros(0)
        if not sum(block.shape[0] for block in statistics.sample_rows):
            raise self._lacking("rows of weight above 0")
        import scipy.sparse as sp

        matrix = sp.vstack(statistics.sample_rows, format="csr")
        labels = np.concatenate(statistics.sample_labels)
        row_weights = np.concatenate(statistics.sample_weights)
        if self.label_positions:  # binary relevance: each label's rows where it is known, its value 1 positive
            names = [self.input_schema.attributes[position].name for position in self.label_positions]
            tasks = [(f"label '{name}'", ~np.isnan(labels[:, j]), labels[:, j] == 1) for j, name in enumerate(names)]
        else:
            totals = np.bincount(labels, minlength=len(self.class_attribute.labels)).astype(np.float64)
            targets = target_classes(self.class_attribute, totals, self.context.positive)
            every_row = np.ones(len(labels), dtype=bool)
            tasks = [(f"class '{self.class_attribute.labels[t]}'", every_row, labels == t) for t in targets]
        weights = []
        for task, rows, positive in tasks:
            y = positive[rows].astype(np.int64)
            if not len(y) or y.min() == y.max():
                side = "in" if not len(y) or y.max() == 0 else "outside"
                raise self._lacking(f"rows of weight above 0 {side} {task}")
            model = LinearSVC(C=self.params["C"], dual=True, random_state=self.params["seed"], max_iter=10000)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)  # the ranking is what counts, not convergence
                if rows.all():
                    model.fit(matrix, y, sample_weight=row_weights)
                else:
                    model.fit(matrix[np.flatnonzero(rows)], y, sample_weight=row_weights[rows])
            weights.append(np.abs(model.coef_.ravel()))
        if self.label_positions and self.params["normalize"] != "none":
            scale = np.linalg.norm if self.params["normalize"] == "length" else np.max
            weights = [w / scale(w) if scale(w) > 0 else w for w in weights]
        return combined(weights, self.combine)

    def _choose(self, scores: np.ndarray, density: np.ndarray | None, order: np.ndarray | None = None) -> None:
        """Rank by score (ties by position; Weka's Ranker order with ``--combine joint``), or
        take ``order`` (``--per-class``'s turns), and keep what the rule allows."""
        self.scores = np.asarray(scores, dtype=np.float64)
        if order is None:
            order = ranking_order(self.scores, self.combine)
        count = len(order)
        if self.rule == "top":
            count = min(self.params["top"], count)
        elif self.rule == "fraction":
            count = min(fraction_count(self.params["fraction"], len(self.scores)), count)
        elif self.rule == "min_score":
            count = int(np.count_nonzero(self.scores[order] >= self.params["min_score"]))
        else:
            assert density is not None  # --sparsity is only chosen after the pass that measures it
            running = np.cumsum(density[order])
            over = np.flatnonzero(running > self.params["sparsity"] * (1 + 1e-12))
            count = int(over[0]) if len(over) else count
        self.kept = np.sort(self.features[order[:count]])
        self._set_columns()

    def _set_columns(self) -> None:
        self.columns = np.setdiff1d(np.arange(len(self.input_schema)), np.setdiff1d(self.features, self.kept))

    def load_state(self, state: dict) -> None:
        super().load_state(state)
        kept = np.sort(self.kept)
        if not np.all(np.isin(kept, self.features)) or len(np.unique(kept)) != len(kept):
            raise invalid_state(
                self,
                f"'kept' names attributes that are not among the input's {len(self.features)} features, or one twice",
            )
        # the turns of --per-class and --per-label, and the ranking of --label-powerset (by Weka's Ranker where
        # more than two label sets made the k-class metric joint), are not the scores' plain order
        chosen_otherwise = self.params["per_class"] or self.params["per_label"] or self.params["label_powerset"]
        if self.rule != "sparsity" and not chosen_otherwise:
            assert self.scores is not None  # a declared array of the state, loaded above
            self._choose(self.scores, None)
            if not np.array_equal(self.kept, kept) and not self._kept_by_the_float_fraction(kept):
                raise invalid_state(
                    self, f"the kept features are not the ones --{self.rule.replace('_', '-')} keeps by the scores"
                )
        self.kept = kept
        self._set_columns()

    def _kept_by_the_float_fraction(self, kept: np.ndarray) -> bool:
        """Whether ``kept`` is what ``--fraction`` kept before :func:`fraction_count` was exact (the ceiling of the
        float product, one more where it rounded past a whole number): a model saved then still applies as saved."""
        if self.rule != "fraction":
            return False
        assert self.scores is not None  # a declared array of the state, loaded before
        order = ranking_order(self.scores, self.combine)
        count = min(max(1, math.ceil(self.params["fraction"] * len(self.scores))), len(order))
        return np.array_equal(np.sort(self.features[order[:count]]), kept)

    def feature_scores(self) -> dict[str, float]:
        """The ranking scores of this stage's input features, for a following ``select``."""
        names = [self.input_schema.attributes[i].name for i in self.features]
        assert self.scores is not None  # fitted
        return dict(zip(names, self.scores.tolist()))


def round_robin(per_class: list[np.ndarray], minimum: float = -np.inf) -> np.ndarray:
    """Feature positions in turns over the classes' rankings (each by score, ties by position):
    the first class's best, the second's, …, each skipping features already taken; a class
    whose best remaining feature scores below ``minimum`` takes no more turns."""
    n = len(per_class[0])
    rankings = [np.argsort(-scores, kind="stable") for scores in per_class]
    taken = np.zeros(n, dtype=bool)
    cursor = [0] * len(rankings)
    order: list[int] = []
    active = True
    while active:
        active = False
        for turn, ranking in enumerate(rankings):
            position = cursor[turn]
            while position < n and taken[ranking[position]]:
                position += 1
            if position < n and per_class[turn][ranking[position]] >= minimum:
                taken[ranking[position]] = True
                order.append(int(ranking[position]))
                position += 1
                active = True
            cursor[turn] = position
    return np.array(order, dtype=np.int64)


def selector_for(metrics: dict) -> type[Selector]:
    """The ``select`` stage class, knowing the registered metrics."""
    options = (
        Option("top", int, None, "Keep the K best-ranked features.", minimum=1),
        Option("fraction", float, None, "Keep ⌈F·n⌉ of the n features ranked (at least 1), in (0, 1]."),
        Option("min_score", float, None, "Keep the features scoring at least X."),
        Option(
            "sparsity",
            float,
            None,
            "Keep the best-ranked features while the average non-zeros per training row stays ≤ S (Brank).",
            minimum=0.0,
        ),
        Option(
            "metric",
            str,
            None,
            "Rank by this metric (or svm: |w| of a linear SVM); default: the scores of the preceding scorer.",
            choices=tuple(sorted(metrics)) + (SVM,),
        ),
        Option("presence", bool, False, "With --metric: score presence (value ≠ 0) instead of the best threshold."),
        COMBINE_OPTION,
        Option(
            "numeric_only",
            bool,
            False,
            "With --metric: rank and select the numeric attributes only, keeping every nominal one.",
            before_it_existed=True,
        ),
        Option(
            "per_class",
            bool,
            False,
            "With --metric: take each class's one-vs-rest ranking in turns (classes in declared order; "
            "a class's ties to the earlier attribute), skipping features already taken.",
        ),
        Option(
            "per_label",
            bool,
            False,
            "With --metric on multi-label data: take each label's ranking in turns (Forman's round robin; labels in "
            "declared order), skipping features already taken.",
        ),
        *LABEL_OPTIONS,
        Option(
            "sample",
            float,
            1.0,
            "With --metric svm: the fraction of training rows the SVM is trained on, in (0, 1].",
            maximum=1.0,
        ),
        Option("C", float, 1.0, "With --metric svm: the SVM's C, > 0."),
        Option(
            "seed", int, 0, "With --metric svm: seed of the row sample and of liblinear.", minimum=0, maximum=2**32 - 1
        ),
    )
    return type("Selector", (Selector,), {"metrics": dict(metrics), "options": options})


@hookimpl
def register_stages(register, metrics):
    """The ``select`` stage."""
    register(selector_for(metrics))
