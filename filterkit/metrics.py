"""Scoring features with a metric of the 2×2 counts (Forman, JMLR 2003).

A :class:`Metric` is a name and a vectorized function of ``(tp, fp, pos,
neg)``; the metrics themselves are plugins (``register_metrics``).  This
module turns fitted class statistics (:mod:`filterkit.statistics`) into one score
per feature: in presence mode (a row has the feature when its value is not
0) or best-threshold mode (every cut between consecutive distinct training
values, the best score wins; KDD'09 §3.4), for the positive class or, on a
target with more than two classes, one-vs-rest for every class combined by
``max`` or ``mean``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, cast

import numpy as np

from filterkit.errors import FilterkitError
from filterkit.schema import NOMINAL, Attribute
from filterkit.stage import Option, Provenance
from filterkit.statistics import ClassCounts, Histogram, ValueCounts


@dataclass(frozen=True)
class Metric:
    """A feature-scoring metric.

    ``function(tp, fp, pos, neg)`` takes float arrays (broadcast together) and
    returns the scores.  With ``invert_negative`` a feature whose ``tpr < fpr``
    is first inverted (``tp → pos − tp``, ``fp → neg − fp``), so the metric
    rewards negatively correlated features too (JMLR 2003, note to Table 1).
    A metric that ignores the counts (``uses_counts=False``, such as ``rand``) is
    scored once per feature: taking its best over cuts would favour features
    with many distinct values.
    """

    name: str
    function: Callable[..., np.ndarray]
    summary: str = ""
    invert_negative: bool = False
    uses_counts: bool = True
    #: Set by the plugin registry (the plugin, distribution and version it came from), for errors.
    provenance: Provenance | None = field(default=None, compare=False)


#: How a multi-class target's one-vs-rest scores become one per feature (scorers, select, info).
COMBINE_OPTION = Option(
    "combine", str, "max", "Combine one-vs-rest scores of a multi-class target by max or mean.", choices=("max", "mean")
)


def metric_scores(metric: Metric, tp, fp, pos, neg, alpha: float | None = None) -> np.ndarray:
    """The metric's scores for the given counts; undefined results (0/0) score 0.

    ``alpha`` weights positive features (``tpr > fpr``) by α and negative ones
    by 1 − α (JMLR 2003, lesion study).
    """
    tp, fp, pos, neg = (np.asarray(a, dtype=np.float64) for a in np.broadcast_arrays(tp, fp, pos, neg))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        tpr, fpr = tp / pos, fp / neg
        if metric.invert_negative:
            negative = tpr < fpr
            tp = np.where(negative, pos - tp, tp)
            fp = np.where(negative, neg - fp, fp)
        scores = _scores_of(metric, tp, fp, pos, neg)
        if alpha is not None:
            scores = scores * np.where(tpr > fpr, alpha, 1.0 - alpha)
    return np.nan_to_num(scores, nan=0.0, posinf=np.finfo(np.float64).max)


def _scores_of(metric: Metric, tp, fp, pos, neg) -> np.ndarray:
    """The metric's function on the counts; FilterkitError naming the metric and its plugin when it
    raises or returns other than one number per count."""
    origin = f" ({metric.provenance})" if metric.provenance is not None else ""
    try:
        scores = np.asarray(metric.function(tp, fp, pos, neg), dtype=np.float64)
    except Exception as error:
        raise FilterkitError(f"metric '{metric.name}'{origin} failed: {type(error).__name__}: {error}") from error
    if scores.shape != tp.shape:
        raise FilterkitError(
            f"metric '{metric.name}'{origin} returned scores of shape {scores.shape} for counts of shape {tp.shape}"
        )
    return scores


def positive_code(attribute: Attribute, class_totals: np.ndarray, positive: str | None) -> int:
    """The label code of the positive class.

    ``--positive`` when given; otherwise, on a two-label class, the minority class
    of the training rows (KDD'09 §4), the second declared label on a tie.
    """
    if attribute.kind != NOMINAL:
        raise FilterkitError(f"the class attribute '{attribute.name}' is not nominal")
    if positive is not None:
        if positive not in attribute.labels:
            raise FilterkitError(
                f"--positive {positive!r} is not a label of the class '{attribute.name}' "
                f"{{{','.join(attribute.labels)}}}"
            )
        return attribute.labels.index(positive)
    if len(attribute.labels) != 2:
        raise FilterkitError(
            f"the class '{attribute.name}' has {len(attribute.labels)} labels: say which is positive with --positive"
        )
    return 0 if class_totals[0] < class_totals[1] else 1


def target_classes(attribute: Attribute, class_totals: np.ndarray, positive: str | None) -> list[int]:
    """The classes to score against: the positive one on a two-label class or with
    ``--positive``, else every class that has training rows (one-vs-rest)."""
    if positive is not None or len(attribute.labels) == 2:
        return [positive_code(attribute, class_totals, positive)]
    if attribute.kind != NOMINAL:
        raise FilterkitError(f"the class attribute '{attribute.name}' is not nominal")
    return [c for c in range(len(attribute.labels)) if class_totals[c] > 0]


def feature_scores(
    counts: ClassCounts,
    metric: Metric,
    targets: list[int],
    presence: bool,
    combine: str = "max",
    alpha: float | None = None,
) -> np.ndarray:
    """One score per feature: each target class vs the rest, combined by max or mean.

    Only the target classes are visited, one at a time, so the cost follows the
    classes that occur and memory stays one score array per feature."""
    if presence or not metric.uses_counts:
        scores = (_presence_scores(counts, metric, c, alpha) for c in targets)
    else:
        histogram = cast(ValueCounts, counts).histogram(include_zero=True)  # value statistics where counts are used
        scores = (_threshold_scores(counts.n_features, histogram, metric, c, alpha) for c in targets)
    combined, n_targets = None, 0
    for per_class in scores:
        n_targets += 1
        if combined is None:
            combined = per_class.copy()
        elif combine == "max":
            combined = np.maximum(combined, per_class)
        else:
            combined = combined + per_class
    if combined is None:
        return np.zeros(counts.n_features)
    return combined if combine == "max" else combined / n_targets


def _presence_scores(counts: ClassCounts, metric: Metric, target: int, alpha) -> np.ndarray:
    tp, fp, pos, neg = counts.presence_table(target)
    return metric_scores(metric, tp, fp, pos, neg, alpha)


def _threshold_scores(n_features: int, histogram: Histogram, metric: Metric, target: int, alpha) -> np.ndarray:
    """Best score over every cut between consecutive distinct values ("has" = value > cut)."""
    feature = histogram.feature
    scores = np.zeros(n_features)
    if len(feature) == 0:
        return scores
    positives = histogram.of_class(target)
    negatives = histogram.rows - positives
    starts = np.flatnonzero(np.r_[True, feature[1:] != feature[:-1]])
    group = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(feature)]))
    pos_total = np.add.reduceat(positives, starts)[group]
    neg_total = np.add.reduceat(negatives, starts)[group]
    pos_upto = _grouped_cumsum(positives, starts, group)
    neg_upto = _grouped_cumsum(negatives, starts, group)
    is_cut = np.r_[feature[1:] == feature[:-1], False]
    tp = (pos_total - pos_upto)[is_cut]
    fp = (neg_total - neg_upto)[is_cut]
    cut_scores = metric_scores(metric, tp, fp, pos_total[is_cut], neg_total[is_cut], alpha)
    best = np.full(n_features, -np.inf)
    np.maximum.at(best, feature[is_cut], cut_scores)
    return np.where(np.isfinite(best), best, 0.0)


def _grouped_cumsum(values: np.ndarray, starts: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Inclusive running sums that restart at every group start."""
    running = np.cumsum(values)
    before = np.r_[0.0, running][starts]
    return running - before[group]
