"""Scorer stages: one per registered metric (``bns``, ``ig``, ``chi``, …).

Each computes every numeric feature's score on the training data and, by
default, rescales the feature so the width of its training range equals the
score (KDD'09 §2.2, §3.4; REFERENCE.md "Scorer stages"):

* zero-preserving (default): ``x' = x · s / (max − min)`` — 0 stays 0, sparse stays sparse;
* ``--no-zero-preserve``: ``x' = (x − min) · s / (max − min)`` — the paper's range ``[0, s]``.

A feature constant on the training data becomes 0; test values are not
clipped; missing stays missing.  ``--no-scale`` leaves values unchanged and only
records the scores for a following ``select``.  Scores use the best threshold
by default, or presence (value ≠ 0) with ``--presence``.
"""

from __future__ import annotations

import numpy as np

from filterkit.errors import FilterkitError
from filterkit.hookspecs import hookimpl
from filterkit.metrics import Metric, feature_scores, target_classes
from filterkit.schema import Chunk
from filterkit.stage import Option, scale_features
from filterkit.statistics import ClassValueCountsStage, PresenceCounts, ValueCounts


class ScorerStage(ClassValueCountsStage):
    """Scale (or just score) numeric features by a metric; subclasses fix the metric."""

    metric: Metric
    options = (
        Option("presence", bool, False, "Score presence (value ≠ 0) instead of the best threshold."),
        Option("scale", bool, True, "Rescale each feature's training range to its score (--no-scale: only record scores)."),
        Option("zero_preserve", bool, True, "x·s/(max−min), keeping zeros (--no-zero-preserve: (x−min)·s/(max−min))."),
        Option("combine", str, "max", "Combine one-vs-rest scores of a multi-class target by max or mean.", choices=("max", "mean")),
        Option("alpha", float, None, "Weight positive features by α and negative ones by 1−α (JMLR 2003 lesion study).", minimum=0.0, maximum=1.0),
    )

    def new_statistics(self):
        """Presence scores need only non-zero counts by class (and each feature's range)."""
        if self.params["presence"] and self.metric.uses_counts:
            return PresenceCounts.empty(len(self.features), len(self.class_attribute.labels))
        return super().new_statistics()

    def finalize(self, statistics: ValueCounts | PresenceCounts) -> None:
        self.training_counts = statistics
        targets = target_classes(self.class_attribute, statistics.class_totals, self.context.positive)
        self.scores = feature_scores(
            statistics, self.metric, targets, self.params["presence"], self.params["combine"], self.params["alpha"]
        )
        self.minimum, self.maximum = statistics.training_range()
        width = self.maximum - self.minimum
        self.factor = np.where(width > 0, self.scores / np.where(width > 0, width, 1.0), 0.0)

    def output_schema(self):
        if not self.params["scale"]:
            return self.input_schema
        return super().output_schema()

    def preserves_zeros(self) -> bool:
        """x·s/(max−min) keeps 0 at 0; --no-zero-preserve shifts it (when scaling)."""
        return self.params["zero_preserve"] or not self.params["scale"]

    def value_map(self):
        """Scaling is elementwise (the arithmetic of :func:`scale_features`)."""
        if not self.params["scale"]:
            return lambda positions, values: values
        if self.params["zero_preserve"]:
            return lambda positions, values: values * self.factor[positions]
        return lambda positions, values: (values - self.minimum[positions]) * self.factor[positions]

    def transform(self, chunk: Chunk) -> Chunk:
        if not self.params["scale"]:
            return chunk
        return scale_features(chunk, self.features, self.factor, None if self.params["zero_preserve"] else self.minimum)

    def state(self) -> dict:
        return {"scores": self.scores, "minimum": self.minimum, "maximum": self.maximum, "factor": self.factor}

    def load_state(self, state: dict) -> None:
        for key in ("scores", "minimum", "maximum", "factor"):
            array = np.asarray(state[key], dtype=np.float64)
            if array.shape != (len(self.features),):
                raise FilterkitError(f"stage '{self.name}': saved {key} has shape {array.shape}, expected ({len(self.features)},)")
            setattr(self, key, array)

    def feature_scores(self) -> dict[str, float]:
        """Each scored feature's name and score, for a following ``select``."""
        names = [self.input_schema.attributes[i].name for i in self.features]
        return dict(zip(names, self.scores.tolist()))


def scorer_for(metric: Metric) -> type[ScorerStage]:
    """A scorer stage class for ``metric``, named after it."""
    summary = f"Scale each numeric feature's range to its {metric.name} score. {metric.summary}"
    return type(f"{metric.name.title()}Scorer", (ScorerStage,), {"name": metric.name, "metric": metric, "summary": summary})


@hookimpl
def register_stages(register, metrics):
    """One scorer stage per registered metric, a plugin's metrics included."""
    for metric in metrics.values():
        register(scorer_for(metric))
