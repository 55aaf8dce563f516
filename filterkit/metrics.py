"""Scoring features with a metric of the 2×2 counts (Forman, JMLR 2003).

A :class:`Metric` (a plugin: ``register_metrics``) is a vectorized function of ``(tp, fp, pos,
neg)``.  This module turns class statistics into one score per feature: by presence or at the best
threshold (KDD'09 §3.4); on more than two classes one-vs-rest combined by ``max`` or ``mean``, or
``joint``: the metric's k-class form over Weka 3.6's contingency tables.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Callable, cast

import numpy as np

from filterkit.contract import DECLARED_BOOL, Declared, declared_type, plugin_fault
from filterkit.discretization import mdl_cut_points_by_feature
from filterkit.errors import FilterkitError
from filterkit.schema import NOMINAL, Attribute, check_positive
from filterkit.stage import Option, Provenance, task_choices
from filterkit.statistics import ClassCounts, Histogram, ValueCounts, sums_through


@dataclass(frozen=True)
class Metric:
    """A feature-scoring metric: ``function(tp, fp, pos, neg)`` of float arrays (broadcast together).

    ``invert_negative``: a feature whose ``tpr < fpr`` is first inverted (JMLR 2003, note to Table 1);
    ``uses_counts=False`` (``rand``): scored once per feature, not at its best cut.
    """

    name: str
    function: Callable[..., np.ndarray]
    summary: str = ""
    invert_negative: bool = False
    uses_counts: bool = True
    #: The k-class form: scores of contingency tables (features × values × classes, missing merged), or None.
    joint: Callable[[np.ndarray], np.ndarray] | None = None
    #: True when the score does not depend on the class split (dfreq, rand): ``--combine joint`` is then its
    #: score against any one class.
    class_free: bool = False
    #: Options of the metric (its scorer stage offers them): their values follow the counts (or the tables) as
    #: further arguments of ``function`` and ``joint``, in this order; ``select`` and ``info`` use their defaults.
    options: tuple[Option, ...] = ()
    #: True when the score also depends on sums over every feature scored together (``nbr``'s norms):
    #: ``function`` then takes them as the keyword argument ``vocabulary``, a :class:`Vocabulary`.
    uses_vocabulary: bool = False
    #: Set by the plugin registry (the plugin, distribution and version it came from), for errors.
    provenance: Provenance | None = field(default=None, compare=False)


#: What the chain and the scorers read of a registered metric, and what each must be: a metric whose attribute
#: raises or is another thing is a problem of its plugin (:mod:`filterkit.plugins`).
METRIC_DECLARATIONS = {
    "function": Declared(callable, "a function"),
    "summary": declared_type(str, expected="a string"),
    "invert_negative": DECLARED_BOOL,
    "uses_counts": DECLARED_BOOL,
    "joint": Declared(lambda value: value is None or callable(value), "a function or None"),
    "class_free": DECLARED_BOOL,
    "options": Declared(
        lambda value: isinstance(value, tuple) and all(isinstance(option, Option) for option in value),
        "a tuple of filterkit.stage.Option",
    ),
    "uses_vocabulary": DECLARED_BOOL,
}


@dataclass(frozen=True)
class Vocabulary:
    """Sums over the ``size`` features scored together, for a metric that ``uses_vocabulary``:
    ``tp`` and ``fp`` are Σ tp and Σ fp of presence (the rows of the target class, and of the rest,
    where each feature is non-zero), exact sums of the merged statistics rounded once, so they
    do not depend on chunk size, merge order or engine."""

    size: int
    tp: float
    fp: float


def with_options(metric: Metric, values: list) -> Metric:
    """``metric`` with its options' values bound into ``function`` and ``joint``."""
    if not values:
        return metric
    joint = metric.joint
    return replace(
        metric,
        function=lambda *counts, **sums: metric.function(*counts, *values, **sums),
        joint=None if joint is None else lambda tables: joint(tables, *values),
    )


def with_vocabulary(metric: Metric, counts: ClassCounts, target: int) -> Metric:
    """``metric`` with the :class:`Vocabulary` of ``counts`` for class ``target`` bound into ``function``
    (unchanged when it does not use the vocabulary)."""
    if not metric.uses_vocabulary:
        return metric
    tp, fp = counts.vocabulary_sums(target)
    return replace(metric, function=partial(metric.function, vocabulary=Vocabulary(counts.n_features, tp, fp)))


JOINT = "joint"
COMBINE_CHOICES = ("max", "mean", "min", JOINT)
#: The known-value rows below which Weka's evaluators do not spread missing values (``Utils.gr(sum, 0)``).
_WEKA_SMALL = 1e-6


def combine_option(metric: Metric | None = None) -> Option:
    """The ``--combine`` option of a scorer of ``metric`` (None: of ``select``, any metric)."""
    if metric is not None and metric.joint is None and not metric.class_free:
        detail = f"{metric.name} has no k-class form: its multi-class scores are one-vs-rest, combined by max or mean"
    elif metric is not None and metric.class_free:
        detail = f"{metric.name} needs no class split: every combination gives the same scores"
    else:
        detail = (
            "joint: the k-class IG or χ² over all classes at once, as Weka 3.6, or igm (ig, chi, igm; dfreq, idf "
            "and rand need no class split); the other metrics are one-vs-rest, combined by max or mean"
        )
    return Option(
        "combine",
        str,
        None,
        "Score a multi-class target: one-vs-rest combined by max, mean or min, or joint (default: joint for ig, "
        f"igm and chi on more than two classes without --positive, else max); multi-label data: each label's "
        f"scores combined so (joint is refused). {detail}.",
        choices=COMBINE_CHOICES,
        before_it_existed="max",
    )


#: How a multi-class target's scores become one per feature (select, info; each scorer has its own help).
COMBINE_OPTION = combine_option()


def resolved_combine(metric: Metric, combine: str | None, class_attribute: Attribute, positive: str | None) -> str:
    """``combine`` when given, else ``joint`` for a k-class metric on more than two labels without
    ``positive``, else ``max``."""
    if combine == JOINT and metric.joint is None and not metric.class_free:
        raise FilterkitError(
            f"--combine joint: metric '{metric.name}' has no k-class form (joint is for ig, chi and igm; "
            "dfreq and rand need no class split); use --combine max or mean (one-vs-rest)"
        )
    if combine is not None:
        return combine
    if metric.joint is not None and positive is None and len(class_attribute.labels) > 2:
        return JOINT
    return "max"


def positive_unused(combine: str, class_attribute: Attribute, positive: str | None) -> list[str]:
    """The warning for ``--combine joint`` given with ``--positive`` on more than two classes: the joint score is of
    every class at once, so the positive label changes nothing (refused, it would stop ``evaluate --each-class``)."""
    if combine != JOINT or positive is None or len(class_attribute.labels) <= 2:
        return []
    return [
        f"--combine joint scores all {len(class_attribute.labels)} classes at once: the positive class "
        "(--positive, or each of --each-class) does not change its scores; --combine max scores it against the rest"
    ]


def metric_scores(metric: Metric, tp, fp, pos, neg, alpha: float | None = None) -> np.ndarray:
    """The metric's scores for the counts, 0/0 scoring 0; ``alpha`` weights positive features
    (``tpr > fpr``) by α and negative ones by 1 − α (JMLR 2003, lesion study)."""
    tp, fp, pos, neg = (np.asarray(a, dtype=np.float64) for a in np.broadcast_arrays(tp, fp, pos, neg))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        tpr, fpr = tp / pos, fp / neg
        if metric.invert_negative:
            negative = tpr < fpr
            tp = np.where(negative, pos - tp, tp)
            fp = np.where(negative, neg - fp, fp)
        scores = _called(metric, metric.function, (tp, fp, pos, neg), tp.shape, f"counts of shape {tp.shape}")
        if alpha is not None:
            scores = scores * np.where(tpr > fpr, alpha, 1.0 - alpha)
    return np.nan_to_num(scores, nan=0.0, posinf=np.finfo(np.float64).max)


def _called(metric: Metric, function, args: tuple, shape: tuple, of: str, kind: str = "") -> np.ndarray:
    """``function(*args)`` as float64; FilterkitError naming the metric and its plugin when it raises or
    returns scores of another ``shape`` than one per count (per table: ``of``)."""
    origin = f" ({metric.provenance})" if metric.provenance is not None else ""
    try:
        scores = np.asarray(function(*args), dtype=np.float64)
    except BaseException as error:
        if not plugin_fault(error):
            raise
        message = f"metric '{metric.name}'{origin} failed: {type(error).__name__}: {error}"
        raise FilterkitError(message) from error
    if scores.shape != shape:
        raise FilterkitError(f"metric '{metric.name}'{origin} returned {kind}scores of shape {scores.shape} for {of}")
    return scores


def positive_code(attribute: Attribute, class_totals: np.ndarray, positive: str | None) -> int:
    """The label code of the positive class: ``--positive``, else the minority class of a two-label
    class (KDD'09 §4), the second declared label on a tie."""
    if attribute.kind != NOMINAL:
        raise FilterkitError(f"the class attribute '{attribute.name}' is not nominal")
    if positive is not None:
        check_positive(positive, attribute)
        return attribute.labels.index(positive)
    if len(attribute.labels) != 2:
        raise FilterkitError(
            f"a two-class task needs one positive class, and the class '{attribute.name}' has "
            f"{len(attribute.labels)} labels: give {task_choices(len(attribute.labels))}"
        )
    return minority_class(class_totals)


def minority_class(class_totals) -> int:
    """The code of the minority class of two (KDD'09 §4), the second declared label on a tie."""
    return 0 if class_totals[0] < class_totals[1] else 1


def target_classes(attribute: Attribute, class_totals: np.ndarray, positive: str | None) -> list[int]:
    """The classes to score against: the positive one, else every class with rows (one-vs-rest)."""
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
    labels: np.ndarray | None = None,
) -> np.ndarray:
    """One score per feature: each target class vs the rest combined by max or mean, or ``joint``.
    ``labels``: each feature's number of nominal labels (0 numeric; None: all numeric)."""
    if combine == JOINT and metric.class_free:
        targets, combine = targets[:1], "max"
    if combine == JOINT:
        if alpha is not None:
            raise FilterkitError("--alpha weighs the features of one positive class: not with --combine joint")
        return joint_scores(counts, metric, presence, labels)
    if not targets:
        return np.zeros(counts.n_features)
    return combined(class_scores(counts, metric, targets, presence, alpha, labels), combine)


def combined(per_target: Iterable[np.ndarray], combine: str) -> np.ndarray:
    """One score per feature from each target's (class or label, at least one): their max, mean or min,
    taken a target at a time, so that one score per feature is held and not one per feature and target.
    The bits are those of numpy's max, sum or min over axis 0 of the stacked scores, which takes the
    targets in turn (a sum from 0.0, so that -0.0 becomes 0.0), except for a single feature: numpy reduces
    that column pairwise, so its few scores are stacked."""
    targets = iter(per_target)
    result = np.array(next(targets), dtype=np.float64)
    if len(result) == 1:
        stacked = np.vstack([result, *targets])
        result, n_targets = {"max": np.max, "min": np.min}.get(combine, np.sum)(stacked, axis=0), len(stacked)
    else:
        running, n_targets = {"max": np.maximum, "min": np.minimum}.get(combine, np.add), 1
        if combine == "mean":
            result += 0.0
        for scores in targets:
            running(result, scores, out=result)
            n_targets += 1
    return result / n_targets if combine == "mean" else result


def per_label_scores(
    per_label: list, metric: Metric, presence: bool, alpha: float | None = None, labels: np.ndarray | None = None
) -> list[np.ndarray]:
    """Each label's scores: its two-class counts scored for its value ``1`` (``labels``: as for
    :func:`feature_scores`, each feature's number of nominal labels)."""
    return [feature_scores(counts, metric, [1], presence, "max", alpha, labels) for counts in per_label]


def label_scores(
    per_label: list,
    metric: Metric,
    presence: bool,
    combine: str,
    normalize: str,
    alpha: float | None = None,
    labels: np.ndarray | None = None,
) -> np.ndarray:
    """Binary relevance (Spolaôr & Tsoumakas 2013; Mulan's ``BinaryRelevanceAttributeEvaluator``): each label's
    scores (:func:`per_label_scores`), normalized, then combined per feature."""
    if combine == JOINT:
        raise FilterkitError("--combine joint is a k-class form: multi-label data takes max, mean or min")
    scores = per_label_scores(per_label, metric, presence, alpha, labels)
    if normalize != "none":
        scales = [np.linalg.norm(s) if normalize == "length" else np.max(s, initial=0.0) for s in scores]
        scores = [s / scale if scale > 0 else s for s, scale in zip(scores, scales)]
    return combined(scores, combine)


def class_scores(
    counts: ClassCounts,
    metric: Metric,
    targets: list[int],
    presence: bool,
    alpha: float | None = None,
    labels: np.ndarray | None = None,
):
    """Per target class, in turn, the one-vs-rest score of every feature (a generator); the nominal
    features' tables hold the target's counts alone beside every class's totals, not a column per class."""
    numeric = np.ones(counts.n_features, dtype=bool) if labels is None else labels == 0
    thresholds = not presence and metric.uses_counts and numeric.any()  # value statistics where counts are used
    nominal = labels is not None and np.any(labels > 0) and metric.uses_counts  # rand: a draw per feature, as numbers
    histogram = cast(ValueCounts, counts).histogram(include_zero=True) if thresholds or nominal else None
    nominal_totals = [] if histogram is None else _nominal_totals(counts, labels, histogram)
    for target in targets:
        of_target = with_vocabulary(metric, counts, target)
        if histogram is None or not thresholds:
            scores = metric_scores(of_target, *counts.presence_table(target), alpha)
        else:
            scores = _threshold_scores(counts.n_features, histogram, of_target, target, alpha)
        if nominal_totals:
            assert histogram is not None  # made for the nominal features
            of_class, missing_of_class = histogram.of_class(target), counts.missing_sums(target).to_float()
            for totals in nominal_totals:
                scores[totals.positions] = _nominal_scores(of_target, totals, of_class, missing_of_class, alpha)
        yield scores


@dataclass(frozen=True)
class _NominalTotals:
    """A block of nominal features of as many labels (``positions``), their histogram ``entries`` at
    ``[row, value]`` of a table, and over every class with rows the rows of each value
    (``known[f, value]``) and the missing rows (``missing[f]``), summed as numpy sums a block's columns."""

    positions: np.ndarray
    entries: np.ndarray
    row: np.ndarray
    value: np.ndarray
    known: np.ndarray
    missing: np.ndarray


def _nominal_totals(counts: ClassCounts, labels: np.ndarray | None, histogram: Histogram) -> list[_NominalTotals]:
    """Each block of :func:`_nominal_groups` summed over the classes, its per-class tables let go."""
    blocks = []
    for positions, known, missing in _nominal_groups(counts, labels, histogram):
        span = slice(*np.searchsorted(histogram.feature, [positions[0], positions[-1] + 1]))
        entries = span.start + np.flatnonzero(np.isin(histogram.feature[span], positions))
        row, value = np.searchsorted(positions, histogram.feature[entries]), histogram.value[entries].astype(np.int64)
        blocks.append(_NominalTotals(positions, entries, row, value, known.sum(axis=2), missing.sum(axis=1)))
    return blocks


def _nominal_groups(counts: ClassCounts, labels: np.ndarray | None, histogram: Histogram | None = None):
    """The nominal features' ``(positions, known[f, value, k], missing[f, k])``, grouped by their number
    of labels and in blocks of at most :data:`_TABLE_CELLS` cells, ``k`` over the classes with rows (a
    class declared but never seen costs nothing), from ``histogram`` when it is made already (a sort of
    every value); a generator."""
    if labels is None or not np.any(labels > 0):
        return
    if histogram is None:
        histogram = cast(ValueCounts, counts).histogram(include_zero=True)
    classes = np.flatnonzero(counts.class_totals > 0)
    for n_labels in np.unique(labels[labels > 0]).tolist():
        for positions in _feature_blocks(np.flatnonzero(labels == n_labels), np.full(len(labels), n_labels), classes):
            entries, by_class = histogram.class_matrix(positions, classes)
            known = np.zeros((len(positions), n_labels, len(classes)))
            feature_row = np.searchsorted(positions, histogram.feature[entries])
            known[feature_row, histogram.value[entries].astype(np.int64)] = by_class
            yield positions, known, counts.class_columns(positions, classes)[2]


#: The most cells (features × values × classes) of class tables made at once: k-class scores are computed a
#: block of features at a time, so their memory follows the classes and the pairs that occur, not
#: features × classes.
_TABLE_CELLS = 1 << 18


def _feature_blocks(features: np.ndarray, sizes: np.ndarray, classes: np.ndarray) -> list[np.ndarray]:
    """``features`` cut into consecutive blocks of at most :data:`_TABLE_CELLS` cells (each feature's
    ``sizes[feature]`` values × the classes), one feature at least."""
    cells = np.cumsum(sizes[features] * max(len(classes), 1))
    blocks, start = [], 0
    while start < len(features):
        before = int(cells[start - 1]) if start else 0
        stop = max(start + 1, int(np.searchsorted(cells, before + _TABLE_CELLS, side="right")))
        blocks.append(features[start:stop])
        start = stop
    return blocks


def _nominal_scores(
    metric: Metric, totals: _NominalTotals, of_class: np.ndarray, missing_of_class: np.ndarray, alpha
) -> np.ndarray:
    """One-vs-rest scores of a block of nominal features, the target's rows of each histogram entry in
    ``of_class`` and its missing rows of each feature in ``missing_of_class``: the k-class form, else each
    value's best presence score."""
    ours = np.zeros(totals.known.shape)
    ours[totals.row, totals.value] = of_class[totals.entries]
    others = totals.known - ours
    if metric.joint is not None:
        missing_ours = missing_of_class[totals.positions]
        missing_others = totals.missing - missing_ours
        tables = weka_tables(np.stack([ours, others], axis=2), np.stack([missing_ours, missing_others], axis=1))
        return _joint_of(metric, tables)
    pos, neg = ours.sum(axis=1), others.sum(axis=1)
    per_value = metric_scores(metric, ours, others, pos[:, None], neg[:, None], alpha)
    return per_value.max(axis=1) if per_value.shape[1] else np.zeros(len(ours))


def joint_scores(counts: ClassCounts, metric: Metric, presence: bool, labels: np.ndarray | None = None) -> np.ndarray:
    """The metric's k-class form per feature over every class with rows: of presence, of the MDL
    intervals (Weka's ``Discretize -E``), or of a nominal feature's values; the tables made a block of
    features at a time, from the (feature, class) pairs that occur."""
    scores = np.zeros(counts.n_features)
    classes = np.flatnonzero(counts.class_totals > 0)
    numeric = np.ones(counts.n_features, dtype=bool) if labels is None else labels == 0
    nominal = labels is not None and np.any(labels > 0)
    discretized = numeric.any() and not presence
    histogram = cast(ValueCounts, counts).histogram(include_zero=True) if discretized or nominal else None
    groups: Iterable = ()
    if numeric.any() and presence:
        groups = _presence_groups(counts, classes, np.flatnonzero(numeric))
    elif discretized:
        groups = _discretized_groups(
            cast(ValueCounts, counts), classes, np.flatnonzero(numeric), cast(Histogram, histogram)
        )
    for positions, known, missing in itertools.chain(groups, _nominal_groups(counts, labels, histogram)):
        scores[positions] = _joint_of(metric, weka_tables(known, missing))
    return scores


def _presence_groups(counts: ClassCounts, classes: np.ndarray, features: np.ndarray):
    """Each block of ``features``' ``(positions, known[f, value, k], missing[f, k])``, the values zero and
    non-zero; a generator."""
    for positions in _feature_blocks(features, np.full(counts.n_features, 2), classes):
        zero, nonzero, missing = counts.class_columns(positions, classes)
        yield positions, np.stack([zero, nonzero], axis=1), missing


def _discretized_groups(counts: ValueCounts, classes: np.ndarray, features: np.ndarray, histogram: Histogram):
    """Each numeric feature's class counts per MDL interval (from the ``histogram`` of ``counts``), by blocks of
    features and within a block grouped by the number of intervals; a generator."""
    sizes = np.bincount(histogram.feature, minlength=counts.n_features)
    for block in _feature_blocks(features, sizes, classes):
        entries, class_counts = histogram.class_matrix(block, classes)
        values = histogram.value[entries]
        starts = np.append(np.searchsorted(histogram.feature[entries], block), len(entries))
        all_cuts = mdl_cut_points_by_feature(values, class_counts, starts, better_encoding=True)
        missing = counts.class_columns(block, classes)[2]
        tables: dict[int, list] = {}
        for k, cuts in enumerate(all_cuts):
            span = slice(starts[k], starts[k + 1])
            interval = np.searchsorted(cuts, values[span], side="left")
            known = np.zeros((len(cuts) + 1, len(classes)))
            np.add.at(known, interval, class_counts[span])
            tables.setdefault(len(cuts) + 1, []).append((k, known))
        for entries_of in tables.values():
            rows = np.array([k for k, _ in entries_of])
            yield block[rows], np.stack([known for _, known in entries_of]), missing[rows]


def weka_tables(known: np.ndarray, missing: np.ndarray) -> np.ndarray:
    """Weka 3.6's evaluators' contingency tables from ``known[f, value, class]`` and ``missing[f, class]``:
    missing rows spread over the values by their known rows, or, where those weigh at most 1e-6, a
    last value row.  Sums run in Weka's order, for Weka's bits."""
    n, n_values, n_classes = known.shape
    row_sums = sum((known[:, :, column] for column in range(n_classes)), np.zeros((n, n_values)))
    total = sum((row_sums[:, value] for value in range(n_values)), np.zeros(n))
    spread = total > _WEKA_SMALL
    share = row_sums / np.where(spread, total, 1.0)[:, None]
    tables = np.zeros((n, n_values + 1, n_classes))
    np.multiply(share[:, :, None], missing[:, None, :], out=tables[:, :n_values])
    tables[:, :n_values] += known
    tables[~spread, :n_values], tables[~spread, n_values] = known[~spread], missing[~spread]
    return tables


def _joint_of(metric: Metric, tables: np.ndarray) -> np.ndarray:
    scores = _called(metric, metric.joint, (tables,), tables.shape[:1], f"{tables.shape[0]} tables", "k-class ")
    return np.nan_to_num(scores, nan=0.0, posinf=np.finfo(np.float64).max)


def ranking_order(scores: np.ndarray, combine: str) -> np.ndarray:
    """Feature positions best score first: Weka 3.6's ``Ranker`` order with ``--combine joint``
    (:func:`weka_ranking`), else ties by position (``select`` and ``info --metric`` rank so)."""
    return weka_ranking(scores) if combine == JOINT else np.argsort(-scores, kind="stable")


def weka_ranking(scores: np.ndarray) -> np.ndarray:
    """Positions of ``scores`` best first, ties as Weka 3.6's ``Ranker`` orders them (``Utils.sort``'s
    unstable median-of-three quicksort, read backwards)."""
    merits = np.where(np.isnan(scores), np.finfo(np.float64).max, scores).tolist()
    index = list(range(len(merits)))

    def swap_if_greater(left: int, right: int) -> None:
        if merits[index[left]] > merits[index[right]]:
            index[left], index[right] = index[right], index[left]

    pending = [(0, len(merits) - 1)]
    while pending:
        left, right = pending.pop()
        span = right - left
        if span <= 0:
            continue
        if span == 1:
            swap_if_greater(left, right)
            continue
        if span == 2:
            swap_if_greater(left, left + 1)
            swap_if_greater(left, right)
            swap_if_greater(left + 1, right)
            continue
        middle = (left + right) // 2
        swap_if_greater(left, middle)
        swap_if_greater(left, right)
        swap_if_greater(middle, right)
        index[middle], index[right - 1] = index[right - 1], index[middle]
        pivot = merits[index[right - 1]]
        low, high = left, right - 1
        while True:
            low += 1
            while merits[index[low]] < pivot:
                low += 1
            high -= 1
            while merits[index[high]] > pivot:
                high -= 1
            if low >= high:
                break
            index[low], index[high] = index[high], index[low]
        index[low], index[right - 1] = index[right - 1], index[low]
        pending.append((low + 1, right))
        pending.append((left, low - 1))
    return np.array(index[::-1], dtype=np.int64)


def _threshold_scores(n_features: int, histogram: Histogram, metric: Metric, target: int, alpha) -> np.ndarray:
    """Best score over every cut between consecutive distinct values ("has" = value > cut)."""
    feature = histogram.feature
    if len(feature) == 0:
        return np.zeros(n_features)
    positives = histogram.of_class(target)
    negatives = histogram.rows - positives
    starts = np.flatnonzero(np.r_[True, feature[1:] != feature[:-1]])
    group = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, len(feature)]))
    pos_total = np.add.reduceat(positives, starts)[group]
    neg_total = np.add.reduceat(negatives, starts)[group]
    is_cut = np.r_[feature[1:] == feature[:-1], False]
    tp, fp = _sums_after(positives, feature)[is_cut], _sums_after(negatives, feature)[is_cut]
    cut_scores = metric_scores(metric, tp, fp, pos_total[is_cut], neg_total[is_cut], alpha)
    best = np.full(n_features, -np.inf)
    np.maximum.at(best, feature[is_cut], cut_scores)
    return np.where(np.isfinite(best), best, 0.0)


def _sums_after(values: np.ndarray, feature: np.ndarray) -> np.ndarray:
    """Each entry's sum of the ``values`` after it of its feature (``feature`` sorted, :func:`sums_through` of the
    entries reversed): a feature's last entries are summed alone, so no positive after a cut is exactly 0."""
    through = sums_through(values[::-1], feature[::-1])[::-1]  # each entry's value and those after it
    return np.r_[np.where(feature[1:] == feature[:-1], through[1:], 0.0), 0.0]
