"""Scorer stages: one per registered metric (``bns``, ``ig``, ``chi``, …; KDD'09 §2.2, §3.4;
docs/algorithms.md §3 is the reference).

Each scores every numeric feature on the training data and by default rescales it so that the
width of its training range is the score (the options give the formulas; ``--multiply`` is Forman's
TF·BNS).  A metric's own options (``Metric.options``) are the scorer's too.
"""

from __future__ import annotations

import numpy as np

from filterkit.class_counts_stage import ClassValueCountsStage
from filterkit.export.steps import NotExportable, Scale, Unchanged
from filterkit.labels import LABEL_OPTIONS
from filterkit.metrics import (
    COMBINE_OPTION,
    combine_option,
    feature_scores,
    label_scores,
    positive_unused,
    resolved_combine,
    target_classes,
    with_options,
)
from filterkit.plugin import (
    NOMINAL,
    Attribute,
    FilterkitError,
    Metric,
    Option,
    StateArray,
    ValueCounts,
    ValueMapped,
    hookimpl,
    invalid_state,
)
from filterkit.stage import SCALING_EXPONENTS, range_scaling, refuse_infinite_ranges, scaling_map
from filterkit.statistics import (
    LabelSetStatistics,
    LabelStatistics,
    PresenceCounts,
    label_ranges,
)


class ScorerStage(ClassValueCountsStage, ValueMapped):
    """Scale (or just score) numeric features by a metric; subclasses fix the metric."""

    metric: Metric
    examples = ({}, {"presence": True}, {"zero_preserve": False, "combine": "mean"})
    options = (
        Option("presence", bool, False, "Score presence (value ≠ 0) instead of the best threshold."),
        Option(
            "scale", bool, True, "Rescale each feature's training range to its score (--no-scale: only record scores)."
        ),
        Option("zero_preserve", bool, True, "x·s/(max−min), keeping zeros (--no-zero-preserve: (x−min)·s/(max−min))."),
        Option(
            "multiply",
            bool,
            False,
            "Multiply each value by its feature's score, x·s, instead of rescaling the range (TF·BNS on counts; "
            "with --no-zero-preserve: (x−min)·s).",
        ),
        COMBINE_OPTION,
        Option(
            "alpha",
            float,
            None,
            "Weight positive features by α and negative ones by 1−α (JMLR 2003 lesion study).",
            minimum=0.0,
            maximum=1.0,
        ),
        *LABEL_OPTIONS,
    )
    state_arrays = {
        "scores": StateArray(),
        "minimum": StateArray(finite=False),
        "maximum": StateArray(finite=False),
        "factor": StateArray(),
        **SCALING_EXPONENTS,
    }

    def check_params(self) -> None:
        if self.params["multiply"] and not self.params["scale"]:
            raise FilterkitError(
                f"stage '{self.name}': --multiply and --no-scale contradict each other "
                "(--no-scale leaves the values unchanged)"
            )

    def prepare(self, schema, context) -> None:
        super().prepare(schema, context)
        combine = self.params["combine"]
        if combine is None and self.params["alpha"] is not None:
            combine = "max"  # α weighs one positive class's features: one-vs-rest
        self.combine = resolved_combine(self.metric, combine, self.class_attribute, context.positive)

    def fit_warnings(self) -> list[str]:
        """The base warnings, and :func:`positive_unused`'s for a k-class metric."""
        unused = positive_unused(self.combine, self.class_attribute, self.context.positive) if self.metric.joint else []
        return super().fit_warnings() + unused

    def class_statistics(self, n_classes: int | None = None):
        """Presence scores need only non-zero counts by class (and each feature's range)."""
        if self.params["presence"] and self.metric.uses_counts:
            return PresenceCounts.empty(
                len(self.features), len(self.class_attribute.labels) if n_classes is None else n_classes
            )
        return super().class_statistics(n_classes)

    def finalize(self, statistics: ValueCounts | PresenceCounts | LabelStatistics | LabelSetStatistics) -> None:
        metric = with_options(self.metric, [self.params[option.name] for option in self.metric.options])
        presence, alpha = self.params["presence"], self.params["alpha"]
        if isinstance(statistics, LabelSetStatistics):
            names = [self.input_schema.attributes[position].name for position in self.label_positions]
            label_sets = Attribute("label set", NOMINAL, statistics.names(names))
            self.combine = resolved_combine(self.metric, self.params["combine"], label_sets, None)
            targets = target_classes(label_sets, statistics.counts.class_totals, None)
            scores = feature_scores(statistics.counts, metric, targets, presence, self.combine, alpha)
            ranges = statistics.counts.training_range()
        elif isinstance(statistics, LabelStatistics):
            scores = label_scores(statistics.per_label, metric, presence, self.combine, self.params["normalize"], alpha)
            ranges = label_ranges(statistics)
        else:
            self.training_counts = statistics
            targets = target_classes(self.class_attribute, statistics.class_totals, self.context.positive)
            scores = feature_scores(statistics, metric, targets, presence, self.combine, alpha)
            ranges = statistics.training_range()
        self.scores, (self.minimum, self.maximum) = scores, ranges
        if self.params["scale"]:
            refuse_infinite_ranges(self, self.minimum, self.maximum)
        self.factor, (self.inner_exponent, self.outer_exponent) = self.scaling()

    def scaling(self):
        """``(factor, (inner, outer))`` for :func:`scale_features`: the scores themselves with
        ``--multiply``, else each training range mapped onto a width of its score."""
        if self.params["multiply"]:
            no_exponents = np.zeros(len(self.scores), dtype=np.int64)
            return self.scores.copy(), (no_exponents, no_exponents.copy())
        return range_scaling(self.minimum, self.maximum, self.scores)

    def output_schema(self):
        if not self.params["scale"]:
            return self.input_schema
        return super().output_schema()

    def preserves_zeros(self) -> bool:
        """x·s/(max−min) keeps 0 at 0; --no-zero-preserve shifts it (when scaling)."""
        return self.params["zero_preserve"] or not self.params["scale"]

    def value_map(self):
        """The scaling (--no-scale: the values as they are)."""
        if not self.params["scale"]:
            return lambda positions, values: values
        offset = np.zeros(len(self.features)) if self.params["zero_preserve"] else self.minimum
        return scaling_map(self.factor, offset, self.inner_exponent, self.outer_exponent)

    def exported_step(self) -> Scale | Unchanged:
        """The stage in an exported scorer (:mod:`filterkit.export`): each feature times its factor (through powers
        of two where a range is beyond the safe doubles); refused where the scaling shifts zeros
        (--no-zero-preserve)."""
        if not self.params["scale"]:
            return Unchanged()
        if not self.params["zero_preserve"]:
            raise NotExportable("--no-zero-preserve gives every feature a value in every document")
        exponents = (self.inner_exponent, self.outer_exponent)
        return Scale(self.features, self.factor, exponents if any(e.any() for e in exponents) else None)

    def load_state(self, state: dict) -> None:
        super().load_state(state)
        if np.any(self.minimum > self.maximum):
            raise invalid_state(self, "a feature's minimum is above its maximum")
        if "inner_exponent" in state:
            factor, exponents = self.scaling()
            saved_exponents = (self.inner_exponent, self.outer_exponent)
            if not (np.array_equal(factor, self.factor) and all(map(np.array_equal, exponents, saved_exponents))):
                raise invalid_state(self, "'factor' does not follow from the scores and the training ranges")

    def feature_scores(self) -> dict[str, float]:
        """Each scored feature's name and score, for a following ``select``."""
        names = [self.input_schema.attributes[i].name for i in self.features]
        return dict(zip(names, self.scores.tolist()))


def scorer_for(metric: Metric) -> type[ScorerStage]:
    """A scorer stage class for ``metric``, named after it."""
    summary = f"Scale each numeric feature's range to its {metric.name} score. {metric.summary}"
    if metric.joint is None and not metric.class_free:
        summary += " Multi-class: one-vs-rest (no k-class form)."
    options = tuple(combine_option(metric) if option is COMBINE_OPTION else option for option in ScorerStage.options)
    options += metric.options
    return type(
        f"{metric.name.title()}Scorer",
        (ScorerStage,),
        {"name": metric.name, "metric": metric, "summary": summary, "options": options},
    )


@hookimpl
def register_stages(register, metrics):
    """One scorer stage per registered metric, a plugin's metrics included."""
    for metric in metrics.values():
        register(scorer_for(metric))
