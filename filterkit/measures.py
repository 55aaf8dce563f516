"""An evaluation's measures (docs/algorithms.md §8): of a test fold, of a task over its folds, over the
tasks, and paired tests against a baseline.  A fold's record is what ``evaluation.evaluate_fold`` returns."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

MEASURES = ("accuracy", "auc", "f1", "precision", "recall", "specificity", "precision_at_20")

#: Measures of ``--stats`` beside MEASURES.
EXTRA_MEASURES = ("breakeven",)
#: The measures of contingency counts summed over folds (Forman & Scholz 2010) and, micro-averaged, tasks.
MICRO_MEASURES = ("f1", "precision", "recall")
#: The same measures as means of their per-fold values (the default before 0.4).
FOLD_MEANS = tuple(f"{measure}_fold_mean" for measure in MICRO_MEASURES)
#: The measures of one ``--multiclass`` fold over all classes.
MULTICLASS_MEASURES = ("accuracy", "macro_auc", "macro_f1", "micro_f1")
#: The ``--multiclass`` measures of counts summed over the folds.
POOLED_MULTICLASS = ("macro_f1", "micro_f1")
#: Each class's measures in a ``--multiclass`` fold.
PER_CLASS_MEASURES = ("auc", "f1")


def measures(truth: np.ndarray, scores: np.ndarray, predicted: np.ndarray) -> dict[str, float]:
    """The papers' measures of one test fold (AUC is NaN when the fold has one class only)."""
    from sklearn.metrics import roc_auc_score

    truth = np.asarray(truth, dtype=bool)
    tp, fp, fn, tn = contingency(truth, predicted)
    top = np.argsort(-np.asarray(scores), kind="stable")[:20]
    return {
        "accuracy": (tp + tn) / len(truth),
        "auc": float(roc_auc_score(truth, scores)) if 0 < truth.sum() < len(truth) else math.nan,
        **micro_measures(np.array([tp, fp, fn, tn])),
        "specificity": tn / (tn + fp) if tn + fp else 0.0,
        "precision_at_20": float(truth[top].mean()) if len(top) else 0.0,
    }


def f1_scores(truth: np.ndarray, decided: np.ndarray, labels: list) -> list[float]:
    """Each label's F1, 2·TP / (2·TP + FP + FN), 0 where it has no row in ``truth`` nor ``decided``: scikit-learn's
    ``f1_score(…, zero_division=0.0)`` to the bit, without its checks."""
    scores = []
    for label in labels:
        actual, predicted = truth == label, decided == label
        hits, positives = np.count_nonzero(actual & predicted), np.count_nonzero(actual) + np.count_nonzero(predicted)
        scores.append(2.0 * hits / positives if positives else 0.0)
    return scores


def area_under_roc(targets: np.ndarray, scores: np.ndarray) -> float:
    """AUC as the Mann-Whitney statistic (ties count one half); NaN with one class only."""
    from scipy.stats import rankdata

    targets = np.asarray(targets, dtype=bool)
    positives, negatives = targets.sum(), (~targets).sum()
    if not positives or not negatives:
        return float("nan")
    ranks = rankdata(scores)
    return float((ranks[targets].sum() - positives * (positives + 1) / 2) / (positives * negatives))


def contingency(truth: np.ndarray, predicted: np.ndarray) -> tuple[int, int, int, int]:
    """(true positives, false positives, false negatives, true negatives)."""
    cells = 2 * np.asarray(truth, dtype=bool).astype(np.int64) + np.asarray(predicted, dtype=bool)
    tn, fp, fn, tp = np.bincount(cells, minlength=4).tolist()
    return tp, fp, fn, tn


def breakeven(truth: np.ndarray, scores: np.ndarray) -> float:
    """The precision–recall break-even point: precision of the P top-scored rows, P the positives (rows
    tied at the P-th score share the places left); NaN without a positive."""
    truth = np.asarray(truth, dtype=bool)
    scores = np.asarray(scores, dtype=np.float64)
    positives = int(truth.sum())
    if not positives:
        return math.nan
    cut = np.sort(scores)[::-1][positives - 1]
    above, at = scores > cut, scores == cut
    places = positives - int(above.sum())
    hits = float(truth[above].sum()) + float(truth[at].sum()) * places / float(at.sum())
    return hits / positives


def micro_measures(counts: np.ndarray) -> dict[str, float]:
    """F1, precision and recall of summed (tp, fp, fn, tn) counts."""
    tp, fp, fn = float(counts[0]), float(counts[1]), float(counts[2])
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"f1": f1, "precision": precision, "recall": recall}


def multiclass_measures(truth: np.ndarray, scores: np.ndarray, predicted: np.ndarray, labels: list[str]) -> dict:
    """The measures of one ``--multiclass`` test fold: accuracy, macro and micro F1 and per class
    (column k of ``scores`` is ``labels[k]``) its AUC, F1 (NaN with no test row or prediction) and counts."""
    per_class: dict[str, dict[str, Any]] = {}
    for position, label in enumerate(labels):
        actual, named = truth == position, predicted == position
        measured = measures(actual, scores[:, position], named)
        per_class[label] = {**{m: measured[m] for m in PER_CLASS_MEASURES}, "counts": contingency(actual, named)}
        if not actual.any() and not named.any():
            per_class[label]["f1"] = math.nan
    counts = np.sum([values["counts"] for values in per_class.values()], axis=0)
    return {
        "accuracy": float(np.mean(truth == predicted)),
        "macro_auc": _nanmean([values["auc"] for values in per_class.values()]),
        "macro_f1": _nanmean([values["f1"] for values in per_class.values()]),
        "micro_f1": micro_measures(counts)["f1"],
        "per_class": per_class,
    }


def _nanmean(values) -> float:
    """numpy's mean of the defined (not NaN) values; NaN, without a warning, when none is."""
    values = np.asarray(values, dtype=np.float64)
    return float(np.nanmean(values)) if np.any(~np.isnan(values)) else math.nan


def _mean(values) -> float:
    """The mean of the defined values (NaN if none), which can round otherwise than :func:`_nanmean`."""
    values = np.asarray(values, dtype=np.float64)
    defined = values[~np.isnan(values)]
    return float(defined.mean()) if len(defined) else math.nan


def _std(values) -> float:
    values = np.asarray(values, dtype=np.float64)
    defined = values[~np.isnan(values)]
    return float(defined.std(ddof=1)) if len(defined) > 1 else 0.0


def task_value(records: list[dict], measure: str) -> float:
    """A task's value of ``measure`` over its folds: F1, precision and recall (and ``--multiclass``'s F1s) of
    summed counts, another measure its mean over the folds."""
    if measure in MICRO_MEASURES and "counts" in records[0]:
        return _summed(records)[measure]
    if measure in POOLED_MULTICLASS and "per_class" in records[0]:
        per_class = [class_records(records, label) for label in records[0]["per_class"]]
        if measure == "micro_f1":
            return micro_measures(np.sum([r["counts"] for rows in per_class for r in rows], axis=0))["f1"]
        return _nanmean([task_value(rows, "f1") for rows in per_class])
    return fold_means(records, measure)


def pooled_measures(records: list[dict]) -> dict[str, float]:
    """F1, precision and recall of the counts summed over the folds (Forman & Scholz 2010, §3), and their
    :data:`FOLD_MEANS`."""
    return {**_summed(records), **{f"{m}_fold_mean": fold_means(records, m) for m in MICRO_MEASURES}}


def _summed(records: list[dict]) -> dict[str, float]:
    """F1, precision and recall of the counts summed over ``records``; NaN where no fold has an F1."""
    if all(math.isnan(r["f1"]) for r in records):
        return dict.fromkeys(MICRO_MEASURES, math.nan)
    return micro_measures(np.sum([r["counts"] for r in records], axis=0))


def fold_means(records: list[dict], measure: str) -> float:
    """The mean of ``measure`` over the folds where it is defined (NaN if none)."""
    return _mean([r[measure] for r in records])


def class_records(records: list[dict], label: str) -> list[dict]:
    """One class's measures of each ``--multiclass`` fold, as records of their own."""
    return [r["per_class"][label] for r in records]


def _over_folds(records: list[dict], measure_names) -> dict[str, Any]:
    """Per measure, its mean over the folds where it is defined, its spread and its per-fold values."""
    summary: dict[str, Any] = {}
    for measure in measure_names:
        values = [r[measure] for r in records]
        summary[measure] = _mean(values)
        summary.setdefault("std", {})[measure] = _std(values)
        summary.setdefault("per_fold", {})[measure] = [None if math.isnan(v) else float(v) for v in values]
    return summary


def _with_repeats(summary: dict, records: list[dict], repeats: int, measure_names) -> dict:
    """``summary`` with, over several repeats, per measure each repeat's value (:func:`task_value`) and their
    mean and standard deviation, and each fold's classifier and number of features."""
    if repeats > 1:
        folds = len(records) // repeats
        summary["repeats"] = {}
        for measure in measure_names:
            per_repeat = [task_value(records[r * folds : (r + 1) * folds], measure) for r in range(repeats)]
            summary["repeats"][measure] = {"mean": _mean(per_repeat), "std": _std(per_repeat), "per_repeat": per_repeat}
    summary["classifier"] = [r["classifier"] for r in records]
    summary["features"] = [r["features"] for r in records]
    return summary


def summarize(records: list[dict], repeats: int = 1, extra: bool = False) -> dict:
    """Means, spreads and per-fold values of each measure over the folds of one (chain, task, fraction),
    with :func:`pooled_measures`; ``extra`` adds the break-even point."""
    summary = _over_folds(records, MEASURES + (EXTRA_MEASURES if extra else ()))
    summary.update(pooled_measures(records))
    summary["folds_without_auc"] = int(sum(math.isnan(r["auc"]) for r in records))
    return _with_repeats(summary, records, repeats, MEASURES + EXTRA_MEASURES)


def summarize_multiclass(records: list[dict], repeats: int = 1) -> dict:
    """:func:`summarize` for ``--multiclass`` folds, with each class's AUC and F1."""
    summary = _over_folds(records, MULTICLASS_MEASURES)
    for measure in POOLED_MULTICLASS:
        summary[f"{measure}_fold_mean"], summary[measure] = summary[measure], task_value(records, measure)
    summary["per_class"] = {}
    for label in records[0]["per_class"]:
        rows = class_records(records, label)
        summary["per_class"][label] = {
            **{measure: task_value(rows, measure) for measure in PER_CLASS_MEASURES},
            "f1_fold_mean": fold_means(rows, "f1"),
            "per_fold": {
                measure: [None if math.isnan(r[measure]) else r[measure] for r in rows]
                for measure in PER_CLASS_MEASURES
            },
        }
    return _with_repeats(summary, records, repeats, MULTICLASS_MEASURES)


def macro_average(summaries: list[dict], extra: bool = False) -> dict:
    """The mean over tasks of each measure's task value and of :data:`FOLD_MEANS` (macro-averaging)."""
    measure_names = MEASURES + FOLD_MEANS + (EXTRA_MEASURES if extra else ())
    return {measure: _nanmean([s[measure] for s in summaries]) for measure in measure_names}


def macro_spread(summaries: list[dict], repeats: int) -> dict:
    """Per measure, the standard deviation across repeats of each repeat's macro average."""
    return {
        measure: _std([_mean([s["repeats"][measure]["per_repeat"][r] for s in summaries]) for r in range(repeats)])
        for measure in MEASURES + EXTRA_MEASURES
    }


def micro_average(per_task_records: list[list[dict]]) -> dict[str, float]:
    """Micro-averaged F1, precision and recall: the tasks' counts summed per fold, then :func:`pooled_measures`."""
    summed = [
        np.sum([records[fold]["counts"] for records in per_task_records], axis=0)
        for fold in range(len(per_task_records[0]))
    ]
    return pooled_measures([{"counts": counts, **micro_measures(counts)} for counts in summed])


def paired_comparison(
    records: dict[str, list[dict]],
    baseline: dict[str, list[dict]],
    test_train_ratio: float,
    measure_names=MEASURES + EXTRA_MEASURES,
) -> dict:
    """Each measure of a chain against a baseline on the same folds, per task ``records[task]``: over tasks
    the mean difference, win/tie/loss and Wilcoxon's p; over folds (each the mean over tasks of the
    differences) win/tie/loss and the corrected resampled t-test (``test_train_ratio``: test/training rows)."""
    tasks = list(baseline)
    result = {}
    for measure in measure_names:
        chain_means = [task_value(records[task], measure) for task in tasks]
        baseline_means = [task_value(baseline[task], measure) for task in tasks]
        per_fold = np.array(
            [[r[measure] - b[measure] for r, b in zip(records[task], baseline[task])] for task in tasks],
            dtype=np.float64,
        )
        defined = ~np.isnan(per_fold)
        fold_differences = np.where(
            defined.any(axis=0), np.nansum(per_fold, axis=0) / np.maximum(defined.sum(axis=0), 1), np.nan
        )
        task_differences = np.array(chain_means) - np.array(baseline_means)
        result[measure] = {
            "difference": _nanmean(task_differences),
            "over_tasks": {**win_tie_loss(task_differences), "wilcoxon_p": wilcoxon_p(chain_means, baseline_means)},
            "over_folds": {
                **win_tie_loss(fold_differences),
                "corrected_t": corrected_resampled_t_test(fold_differences, test_train_ratio),
            },
        }
    return result


def win_tie_loss(differences) -> dict[str, int]:
    """How many differences are > 0, exactly 0, < 0 (undefined ones not counted)."""
    values = np.asarray(differences, dtype=np.float64)
    values = values[~np.isnan(values)]
    return {"wins": int(np.sum(values > 0)), "ties": int(np.sum(values == 0)), "losses": int(np.sum(values < 0))}


def wilcoxon_p(values, baseline) -> float | None:
    """The two-sided p of the Wilcoxon signed-rank test of the defined pairs (None with fewer than two;
    1.0 when every difference is zero)."""
    from scipy.stats import wilcoxon

    values, baseline = np.asarray(values, dtype=np.float64), np.asarray(baseline, dtype=np.float64)
    defined = ~(np.isnan(values) | np.isnan(baseline))
    values, baseline = values[defined], baseline[defined]
    if len(values) < 2:
        return None
    if np.all(values == baseline):
        return 1.0
    return float(wilcoxon(values, baseline).pvalue)


def corrected_resampled_t_test(differences, test_train_ratio: float) -> dict:
    """Nadeau & Bengio's corrected resampled t-test of the defined per-fold differences d:
    t = mean(d) / sqrt((1/J + n_test/n_train) · s²), J − 1 degrees of freedom, p two-sided."""
    from scipy.stats import t as student

    values = np.asarray(differences, dtype=np.float64)
    values = values[~np.isnan(values)]
    if len(values) < 2:
        return {"t": None, "p": None, "df": None, "folds": len(values)}
    mean, variance = float(values.mean()), float(values.var(ddof=1))
    if np.ptp(values) == 0:  # equal differences: their variance is 0, not a rounding error of the mean
        statistic = 0.0 if mean == 0 else math.copysign(math.inf, mean)
    else:
        statistic = mean / math.sqrt((1 / len(values) + test_train_ratio) * variance)
    p = 1.0 if statistic == 0 else float(2 * student.sf(abs(statistic), len(values) - 1))
    return {"t": statistic, "p": p, "df": len(values) - 1, "folds": len(values)}


def mcnemar(truth: np.ndarray, decisions: np.ndarray, baseline: np.ndarray) -> dict:
    """McNemar's exact test of two classifiers' decisions on the same rows (Dietterich 1998, §3.1)."""
    from scipy.stats import binomtest

    right, baseline_right = decisions == truth, baseline == truth
    chain_only, baseline_only = int(np.sum(right & ~baseline_right)), int(np.sum(~right & baseline_right))
    differing = chain_only + baseline_only
    p = float(binomtest(chain_only, differing).pvalue) if differing else 1.0
    return {"only_chain_right": chain_only, "only_baseline_right": baseline_only, "p": p}
