"""docs/summarize_results.py's paired tests, on hand-made results checked by hand and against scipy."""

import importlib.util
import json
import math
from pathlib import Path

import pytest
from scipy import stats

DOCS = Path(__file__).resolve().parent.parent / "docs"


@pytest.fixture(scope="module")
def summarize():
    spec = importlib.util.spec_from_file_location("summarize_results", DOCS / "summarize_results.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def result(data, task, per_fold, ratio=0.5, chain="c"):
    """One (chain, task) result as task_results builds it: the fold mean and the per-fold values."""
    defined = [v for v in per_fold if v is not None]
    return {
        "chain": chain,
        "task": task,
        "train_fraction": 1.0,
        "data": data,
        "ratio": ratio,
        "f1": sum(defined) / len(defined),
        "per_fold": {"f1": per_fold},
    }


def test_test_train_ratios_count_each_folds_rows(summarize):
    # folds of 2, 3 and 1 rows out of 6: test/train 2/4, 3/3, 1/5; half the training rows doubles each.
    settings = {"folds": 3, "fold_of_row": [0, 1, 1, 0, 1, 2], "train_fractions": [0.5, 1]}
    ratios = summarize.test_train_ratios(settings)
    assert ratios[1.0] == pytest.approx((0.5 + 1.0 + 0.2) / 3)
    assert ratios[0.5] == pytest.approx(2 * (0.5 + 1.0 + 0.2) / 3)


def test_paired_counts_wilcoxon_over_tasks_as_scipy(summarize):
    first_values = [0.9, 0.8, 0.75, 0.6, 0.5, 0.72]
    second_values = [0.85, 0.82, 0.7, 0.5, 0.5, 0.6]
    first = {("a", str(i)): result("a", str(i), [v, v]) for i, v in enumerate(first_values)}
    second = {("a", str(i)): result("a", str(i), [v, v]) for i, v in enumerate(second_values)}
    compared = summarize.paired(first, second, "f1")
    assert (compared["tasks"], compared["better"], compared["tied"], compared["worse"]) == (6, 4, 1, 1)
    assert compared["difference"] == pytest.approx((0.05 - 0.02 + 0.05 + 0.1 + 0 + 0.12) / 6)
    # the tied task is dropped (zero_method="wilcox"): ranks of |d| 0.02, 0.05, 0.05, 0.1, 0.12 are 1, 2.5, 2.5, 4, 5
    expected = stats.wilcoxon(first_values, second_values, zero_method="wilcox").pvalue
    assert compared["wilcoxon_p"] == pytest.approx(expected)
    assert stats.wilcoxon(first_values, second_values, zero_method="wilcox").statistic == 1.0


def test_paired_counts_tasks_where_the_corrected_t_test_is_significant(summarize):
    # task x: differences 0.1, 0.2, 0.3 at test/train 1/9: t = 0.2 / sqrt((1/3 + 1/9) · 0.01) = 3.0, df 2,
    # p = 0.0955 (not significant); task y: differences 0.30, 0.31, 0.29, 0.30, 0.30 (significant, better);
    # task z: the same, worse; task w: the second chain only (not paired).
    first = {
        ("s", "x"): result("s", "x", [0.6, 0.7, 0.8], ratio=1 / 9),
        ("s", "y"): result("s", "y", [0.8, 0.81, 0.79, 0.8, 0.8], ratio=0.25),
        ("t", "z"): result("t", "z", [0.2, 0.21, 0.19, 0.2, 0.2], ratio=0.25),
    }
    second = {
        ("s", "x"): result("s", "x", [0.5, 0.5, 0.5]),
        ("s", "y"): result("s", "y", [0.5] * 5),
        ("t", "z"): result("t", "z", [0.5] * 5),
        ("t", "w"): result("t", "w", [0.5] * 5),
    }
    t = 0.2 / math.sqrt((1 / 3 + 1 / 9) * 0.01)
    assert t == pytest.approx(3.0)
    assert 2 * stats.t.sf(t, 2) == pytest.approx(0.0955, abs=1e-4)
    compared = summarize.paired(first, second, "f1")
    assert compared["tasks"] == 3
    assert (compared["significant_better"], compared["significant_worse"]) == (1, 1)


def test_paired_leaves_out_undefined_folds_and_tasks(summarize):
    # an AUC-less fold (None) is left out of the task's t-test; a task whose mean is undefined, of Wilcoxon.
    first = {("s", "x"): result("s", "x", [0.9, None, 0.9, 0.9]), ("s", "y"): result("s", "y", [0.7, 0.7])}
    second = {("s", "x"): result("s", "x", [0.5, 0.5, 0.5, 0.5]), ("s", "y"): result("s", "y", [0.7, 0.7])}
    compared = summarize.paired(first, second, "f1")
    assert (compared["better"], compared["tied"], compared["worse"]) == (1, 1, 0)
    # x's three defined differences are all 0.4: t = +∞, p = 0
    assert compared["significant_better"] == 1


def test_summary_pairs_a_setting_with_its_baseline_by_data_set_and_task(summarize, tmp_path):
    def document(f1_by_fold):
        results = [
            {
                "chain": "binarize l2",
                "task": task,
                "train_fraction": 1,
                "f1": sum(values) / len(values),
                "per_fold": {"f1": values},
            }
            for task, values in f1_by_fold.items()
        ]
        settings = {"folds": 2, "fold_of_row": [0, 1, 0, 1], "train_fractions": [1]}
        return json.dumps({"settings": settings, "results": results})

    (tmp_path / "text-oh0.json").write_text(document({"A": [0.5, 0.6], "B": [0.4, 0.4]}))
    (tmp_path / "decision-text-margin-oh0.json").write_text(document({"A": [0.7, 0.8], "B": [0.5, 0.5]}))
    baseline = summarize.task_results(summarize.load(tmp_path, "text-*.json"), "text-")
    margin = summarize.task_results(summarize.load(tmp_path, "decision-text-margin-*.json"), "decision-text-margin-")
    assert {r["data"] for r in margin} == {"oh0"}
    assert margin[0]["ratio"] == pytest.approx(1.0)
    line = summarize.settings_line("margin vs platt-cv", margin, baseline, "binarize l2", "f1")
    assert line.startswith("- `binarize l2`, margin vs platt-cv (f1, 2 tasks): +0.1500; 2 better, 0 tied, 0 worse")
