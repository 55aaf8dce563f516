"""The reviewer's statistics of ``filterkit evaluate`` (issue 21, item 2): repeats, paired tests
(Wilcoxon over tasks, Nadeau & Bengio's corrected resampled t-test over folds), micro-averages
and the precision–recall break-even point."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from chain_helpers import REAL
from filterkit.evaluation import repeat_seed
from filterkit.measures import breakeven, corrected_resampled_t_test, micro_average, paired_comparison, wilcoxon_p

IRIS = REAL / "iris.arff"
ECOLI = REAL / "ecoli.arff"
FAST_SVM = ("--svm-c-values", "1", "--svm-inner-folds", "2")


def evaluate_json(run_filterkit, *arguments) -> dict:
    result = run_filterkit("evaluate", "-q", "--json", *FAST_SVM, *arguments)
    assert result.status == 0, result.stderr
    return json.loads(result.stdout)


def test_breakeven_is_the_precision_of_the_top_p_rows():
    truth = np.array([1, 0, 1, 0, 0], bool)
    # Two positives: the two best rows hold one of them.
    assert breakeven(truth, np.array([0.9, 0.8, 0.7, 0.6, 0.1])) == 0.5
    assert breakeven(truth, np.array([0.9, 0.1, 0.8, 0.6, 0.2])) == 1.0
    assert math.isnan(breakeven(np.zeros(3, bool), np.arange(3.0)))


def test_breakeven_shares_the_places_of_rows_tied_at_the_cut_whatever_their_order():
    # Two positives; 0.9 (a positive) is in, and one place is left for the two rows tied at 0.5, one of
    # them positive: 1 + ½ of the places' hits = 1.5 of 2.
    truth = np.array([1, 1, 0, 0], bool)
    scores = np.array([0.9, 0.5, 0.5, 0.1])
    assert breakeven(truth, scores) == 0.75
    order = np.array([3, 2, 1, 0])
    assert breakeven(truth[order], scores[order]) == 0.75


def test_corrected_resampled_t_test_by_hand():
    # Nadeau & Bengio (2003), as Bouckaert & Frank (2004) write it:
    # t = mean(d) / sqrt((1/J + n_test/n_train) · s²).  d = 0.02, 0.04, 0, 0.06: mean 0.03,
    # s² = (0.0001 + 0.0001 + 0.0009 + 0.0009) / 3, and 10-fold CV has n_test/n_train = 1/9.
    from scipy.stats import t as student

    result = corrected_resampled_t_test([0.02, 0.04, 0.0, 0.06], 1 / 9)
    expected_t = 0.03 / math.sqrt((1 / 4 + 1 / 9) * (0.002 / 3))
    assert result["t"] == pytest.approx(expected_t, rel=1e-12)
    assert expected_t == pytest.approx(1.93352, abs=1e-5)
    assert result["df"] == 3
    assert result["p"] == pytest.approx(2 * student.sf(expected_t, 3), rel=1e-12)
    # The uncorrected t-test would claim far more: the correction widens the variance by (1/J + 1/9) / (1/J).
    naive = 0.03 / math.sqrt(0.002 / 3 / 4)
    assert result["t"] < naive
    # An undefined fold is left out; no spread at all is t = 0 (p = 1) or ±∞ (p = 0).
    assert corrected_resampled_t_test([0.02, math.nan, 0.04], 0.5)["folds"] == 2
    assert corrected_resampled_t_test([0.0, 0.0, 0.0], 0.5)["p"] == 1.0
    assert corrected_resampled_t_test([0.1, 0.1, 0.1], 0.5)["p"] == 0.0


def test_wilcoxon_p_is_scipys_and_handles_the_degenerate_cases():
    from scipy.stats import wilcoxon

    values, baseline = [0.81, 0.70, 0.93, 0.55, 0.62, 0.77], [0.80, 0.72, 0.90, 0.50, 0.61, 0.70]
    assert wilcoxon_p(values, baseline) == wilcoxon(values, baseline).pvalue
    assert wilcoxon_p([0.5, 0.6], [0.5, 0.6]) == 1.0
    assert wilcoxon_p([0.5], [0.4]) is None
    assert (
        wilcoxon_p([0.5, math.nan, 0.7, 0.9], [0.4, 0.2, 0.6, 0.1]) == wilcoxon([0.5, 0.7, 0.9], [0.4, 0.6, 0.1]).pvalue
    )


def record(f1, counts=None, auc=0.5):
    """One fold's measures; without ``counts`` its F1 is taken as given (a fold mean), not pooled."""
    values = {m: 0.0 for m in ("accuracy", "precision", "recall", "specificity", "precision_at_20", "breakeven")}
    return {**values, "f1": f1, "auc": auc, **({"counts": counts} if counts is not None else {})}


def test_micro_average_pools_the_tasks_counts_over_tasks_and_folds():
    # Fold 1: task A tp 3 fp 1 fn 0, task B tp 1 fp 0 fn 3 → tp 4, fp 1, fn 3: precision 4/5, recall 4/7,
    # F1 2/3.
    # Fold 2: task A tp 2 fp 2 fn 2, task B tp 0 fp 0 fn 0 → precision 0.5, recall 0.5.
    # Both folds: tp 6, fp 3, fn 5 → precision 2/3, recall 6/11, F1 12/20.
    task_a = [record(0, (3, 1, 0, 6)), record(0, (2, 2, 2, 4))]
    task_b = [record(0, (1, 0, 3, 6)), record(0, (0, 0, 0, 10))]
    micro = micro_average([task_a, task_b])
    assert micro["precision"] == pytest.approx(2 / 3)
    assert micro["recall"] == pytest.approx(6 / 11)
    assert micro["f1"] == pytest.approx(0.6)
    assert micro["precision_fold_mean"] == pytest.approx((0.8 + 0.5) / 2)
    assert micro["recall_fold_mean"] == pytest.approx((4 / 7 + 0.5) / 2)
    assert micro["f1_fold_mean"] == pytest.approx((2 / 3 + 0.5) / 2)


def test_paired_comparison_over_tasks_and_over_folds_by_hand():
    from scipy.stats import wilcoxon

    # Three tasks, two folds.  F1 differences (chain − baseline) per task and fold:
    # t1: +0.1, +0.3; t2: −0.1, +0.1; t3: 0, 0 → task means +0.2, 0, 0; fold means +0 (0/3), +0.4/3.
    baseline = {t: [record(0.5), record(0.5)] for t in ("t1", "t2", "t3")}
    chain = {"t1": [record(0.6), record(0.8)], "t2": [record(0.4), record(0.6)], "t3": [record(0.5), record(0.5)]}
    f1 = paired_comparison(chain, baseline, 0.5)["f1"]
    assert f1["difference"] == pytest.approx(0.2 / 3)
    assert f1["over_tasks"] == {
        "wins": 1,
        "ties": 2,
        "losses": 0,
        "wilcoxon_p": wilcoxon([0.7, 0.5, 0.5], [0.5] * 3).pvalue,
    }
    fold_differences = [0.0, 0.4 / 3]
    assert f1["over_folds"]["corrected_t"] == corrected_resampled_t_test(fold_differences, 0.5)
    assert f1["over_folds"]["corrected_t"]["t"] == pytest.approx(
        np.mean(fold_differences) / math.sqrt((1 / 2 + 0.5) * np.var(fold_differences, ddof=1))
    )


def test_repeat_zero_is_the_seed_itself_and_the_others_differ():
    assert repeat_seed(7, 0) == 7
    seeds = {repeat_seed(7, r) for r in range(10)}
    assert len(seeds) == 10 and all(0 <= s < 2**31 for s in seeds)
    assert repeat_seed(7, 3) == repeat_seed(7, 3)


@pytest.mark.slow
def test_repeats_report_each_repeats_mean_and_their_spread(run_filterkit):
    once = evaluate_json(run_filterkit, "--folds", "3", "--positive", "Iris-versicolor", IRIS, "minmax")
    thrice = evaluate_json(
        run_filterkit, "--folds", "3", "--repeats", "3", "--positive", "Iris-versicolor", IRIS, "minmax"
    )
    assert thrice["settings"]["fold_seeds"][0] == 1 and len(set(thrice["settings"]["fold_seeds"])) == 3
    assert len(thrice["per_fold"]["f1"]) == 9
    spread = thrice["repeats"]["f1"]
    assert spread["per_repeat"][0] == pytest.approx(once["f1"])  # the first repeat is the one-repeat run
    assert spread["per_repeat"][1] != spread["per_repeat"][0]  # other folds
    assert spread["std"] == pytest.approx(np.std(spread["per_repeat"], ddof=1))
    assert thrice["f1_fold_mean"] == pytest.approx(np.mean(thrice["per_fold"]["f1"]))
    # 2·tp / (2·tp + fp + fn) of the counts summed over all repeats: between the repeats' own.
    assert min(spread["per_repeat"]) <= thrice["f1"] <= max(spread["per_repeat"])
    assert "repeats" not in once and "fold_seeds" not in once["settings"]  # one repeat: today's document


@pytest.mark.slow
def test_stats_on_every_ecoli_class_match_scipy_and_the_per_fold_values(run_filterkit):
    from scipy.stats import wilcoxon

    arguments = ("--folds", "3", "--each-class", "--min-positives", "20", "--stats", "--compare", ECOLI)
    document = evaluate_json(run_filterkit, *arguments, "minmax", "")
    tasks = document["settings"]["tasks"]
    assert len(tasks) == 5
    by_chain = {c: {r["task"]: r for r in document["results"] if r["chain"] == c} for c in ("minmax", "(none)")}
    (paired,) = document["paired"]
    assert (paired["chain"], paired["baseline"]) == ("(none)", "minmax")
    for measure in ("f1", "auc", "breakeven"):
        chain = [by_chain["(none)"][t][measure] for t in tasks]
        baseline = [by_chain["minmax"][t][measure] for t in tasks]
        result = paired["measures"][measure]
        assert result["over_tasks"]["wilcoxon_p"] == pytest.approx(wilcoxon(chain, baseline).pvalue, rel=1e-12)
        differences = np.subtract(chain, baseline)
        assert result["difference"] == pytest.approx(differences.mean())
        counts = result["over_tasks"]
        assert (counts["wins"], counts["ties"], counts["losses"]) == (
            int(np.sum(differences > 0)), int(np.sum(differences == 0)), int(np.sum(differences < 0)),
        )  # fmt: skip
        per_fold = np.mean(
            [
                np.subtract(by_chain["(none)"][t]["per_fold"][measure], by_chain["minmax"][t]["per_fold"][measure])
                for t in tasks
            ],
            axis=0,
        )
        rows = document["settings"]["rows"]
        sizes = np.bincount(document["settings"]["fold_of_row"])
        ratio = np.mean(sizes / (rows - sizes))
        assert result["over_folds"]["corrected_t"]["t"] == pytest.approx(
            per_fold.mean() / math.sqrt((1 / 3 + ratio) * per_fold.var(ddof=1))
        )
    for macro in document["macro"]:
        assert set(macro["micro"]) == {
            "f1",
            "precision",
            "recall",
            "f1_fold_mean",
            "precision_fold_mean",
            "recall_fold_mean",
        }
        assert 0 < macro["micro"]["f1"] <= 1
        assert macro["breakeven"] == pytest.approx(np.mean([by_chain[macro["chain"]][t]["breakeven"] for t in tasks]))
    table = run_filterkit("evaluate", "-q", *FAST_SVM, *arguments, "minmax", "")
    assert b"Wilcoxon p" in table.stdout and b"microF1" in table.stdout


@pytest.mark.slow
def test_without_the_new_options_the_document_is_todays(run_filterkit):
    document = evaluate_json(
        run_filterkit, "--folds", "3", "--each-class", "--min-positives", "20", "--compare", ECOLI, "minmax", ""
    )
    assert "paired" not in document
    assert all("micro" not in m and "breakeven" not in m and "std_over_repeats" not in m for m in document["macro"])
    assert all("breakeven" not in r and "repeats" not in r for r in document["results"])
