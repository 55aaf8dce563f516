"""``svm --svm-costs FILE`` (issue 77, item 2; docs/algorithms.md §8.4.1): Weka's cost-file format, the cut and
per-class offsets of the least out-of-fold cost, evaluate's held-out Total and Average Cost, and a model that never
opens the file again."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import threading
import time
import types

import numpy as np
import pytest
from class_problems import class_problem

import filterkit
from chain_helpers import JAVA, JAVA_OPTIONS, REAL, WEKA_JAR, needs_weka
from filterkit.costs import cut_by_costs, loaded_costs, read_cost_matrix, refuse_unfitting_costs, total_cost
from filterkit.errors import FilterkitError
from filterkit.option_files import sent_files
from filterkit.thresholds import MARGIN_CUT, _best_offset, _LeastCost, cost_cut, cost_offsets

#: credit-g's classes in their order (good, bad): a bad customer taken for good costs five times the reverse
#: (the matrix of the Statlog German credit data's documentation).
CREDIT_COSTS = "% Statlog's German credit costs\n2 2\n0 1\n5 0\n"
#: iris (setosa, versicolor, virginica): asymmetric, every error priced.
IRIS_COSTS = "3 3\n0 1 5\n2 0 1\n10 3 0\n"
#: glass's seven labels (one of them, 'vehic wind non-float', has no row), written as Weka's files are: comments, a
#: blank line, a comment between rows, decimals and an exponent.
#: A binary text task (classes 0, 1) that export can write as C.
GRAIN = REAL / "reuters_grain_sample.arff"
GLASS_COSTS = (
    "% glass costs\n\n7 7\n0 1 2 3 4 5 6\n1 0 1 1 1 1 1\n% between rows\n2 2 0 2 2 2 2\n9 1 1 0 1 1 1\n"
    "1 1 7 1 0 1 1\n1 1 1 1 2.5e0 0 1\n1 0.5 1 1 1 1 0\n"
)


def _written(tmp_path, text: str, name: str = "costs.cost"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_weka_cost_file_is_read_row_by_actual_class(tmp_path):
    path = _written(tmp_path, "% rows: actual\r\n\r\n3 3\r\n0 1 5\r\n% between\r\n2 0 1.5\r\n10 3e-1 0\r\n")
    assert read_cost_matrix(str(path)).tolist() == [[0, 1, 5], [2, 0, 1.5], [10, 0.3, 0]]


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("", 1, "no 'ROWS COLUMNS' line"),
        ("% only a comment\n", 2, "no 'ROWS COLUMNS' line"),
        ("2 3\n0 1 2\n1 0 2\n", 1, "a 2×3 matrix is not square"),
        ("2\n0 1\n1 0\n", 1, "'2' is not 'ROWS COLUMNS'"),
        ("0 0\n", 1, "'0 0' is not 'ROWS COLUMNS'"),
        ("2 2\n0 1\n", 3, "1 rows of the 2 the matrix has"),
        ("2 2\n0 1 2\n1 0\n", 2, "3 costs in a row of a 2×2 matrix"),
        ("2 2\n0 1\n-1 0\n", 3, "'-1' is not a cost from 0 to 1e+12"),
        ("2 2\n0 1\nnan 0\n", 3, "'nan' is not a cost from 0 to 1e+12"),
        ("2 2\n0 1\n1e999 0\n", 3, "'1e999' is not a cost from 0 to 1e+12"),
        ("2 2\n0 1\n1.7e308 0\n", 3, "'1.7e308' is not a cost from 0 to 1e+12"),
        ("2 2\n0\u00a01\n1 0\n", 2, "1 costs in a row of a 2×2 matrix"),  # Java's blanks only, as Weka
        ("2 2\n0 1\n1 0\n1 1\n", 4, "a line after the 2 rows of the matrix"),
        ("[0 1; 5 0]\n", 1, "Matlab's one-line form is not read"),
        ("9" * 5000 + " " + "9" * 5000 + "\n", 1, "is not 'ROWS COLUMNS'"),
    ],
)
def test_a_bad_cost_file_is_one_error_naming_its_line(tmp_path, text, line, words):
    path = _written(tmp_path, text)
    with pytest.raises(FilterkitError) as raised:
        read_cost_matrix(str(path))
    assert (raised.value.path, raised.value.line) == (str(path), line)
    assert words in raised.value.message


def test_a_bad_cost_file_stops_evaluate_with_one_line_and_no_output(run_filterkit, tmp_path):
    path = _written(tmp_path, "2 2\n0 1\n-1 0\n")
    report = tmp_path / "report.html"
    result = run_filterkit("evaluate", "--svm-costs", path, "--report", report, REAL / "credit-g.arff", "minmax")
    assert result.status == 1 and not report.exists()
    assert result.stderr == f"filterkit: error: {path}:3: option --svm-costs: '-1' is not a cost from 0 to 1e+12\n"


def test_costs_beside_another_threshold_rule_are_a_usage_error(run_filterkit, tmp_path):
    path = _written(tmp_path, IRIS_COSTS)
    result = run_filterkit("evaluate", "--svm-costs", path, "--svm-threshold", "f1", REAL / "iris.arff", "minmax")
    assert result.status == 2
    assert result.stderr.splitlines()[-1] == (
        "Error: svm: --svm-costs chooses the cut by the cost matrix, and --svm-threshold f1 would choose it by "
        "another objective: give one of them"
    )


def test_a_task_of_one_class_against_several_is_refused(run_filterkit, tmp_path):
    path = _written(tmp_path, IRIS_COSTS)
    result = run_filterkit("evaluate", "--svm-costs", path, "--positive", "Iris-setosa", REAL / "iris.arff", "minmax")
    assert result.status == 1
    assert result.stderr == (
        "filterkit: error: option --svm-costs: a class of 3 labels, and a binary task decides one against the rest, "
        "which no row of the matrix prices: give --multiclass\n"
    )


def test_a_matrix_of_another_size_than_the_class_is_refused_naming_the_file(run_filterkit, tmp_path):
    path = _written(tmp_path, IRIS_COSTS)
    result = run_filterkit("evaluate", "--svm-costs", path, REAL / "credit-g.arff", "minmax")
    assert result.status == 1
    assert result.stderr == (
        f"filterkit: error: {path}: option --svm-costs: a 3×3 matrix, and the class has 2 labels (good, bad)\n"
    )


def test_a_matrix_that_does_not_fit_the_class_is_refused_before_any_fit_naming_the_file(tmp_path):
    path = str(_written(tmp_path, IRIS_COSTS))
    with pytest.raises(FilterkitError) as refused:
        refuse_unfitting_costs("svm", {"costs": path}, ["good", "bad"], multiclass=True)
    assert str(refused.value) == f"{path}: option --svm-costs: a 3×3 matrix, and the class has 2 labels (good, bad)"
    with pytest.raises(FilterkitError, match="^option --svm-costs: a class of 3 labels, and a binary task decides"):
        refuse_unfitting_costs("svm", {"costs": path}, ["a", "b", "c"], multiclass=False)
    refuse_unfitting_costs("svm", {"costs": path}, ["a", "b", "c"], multiclass=True)  # it fits
    refuse_unfitting_costs("svm", {"costs": None}, ["good", "bad"], multiclass=False)  # no matrix
    refuse_unfitting_costs("naive-bayes", {"costs": path}, ["good", "bad"], multiclass=False)  # not the svm's option


@pytest.mark.parametrize("command", ["evaluate", "train"])
def test_evaluate_and_train_refuse_an_unfitting_matrix_before_any_fit(monkeypatch, tmp_path, command):
    import filterkit_plugins.classifiers as classifiers
    from filterkit.evaluation import Settings, evaluate
    from filterkit.plugins import load_plugins
    from filterkit.training import train

    def no_fit(*arguments):
        raise AssertionError("the svm was fitted before the matrix was checked")

    monkeypatch.setattr(classifiers.LinearSVM, "fit", no_fit)
    path = str(_written(tmp_path, IRIS_COSTS))
    registry = load_plugins()
    settings = Settings(classifier_params={"costs": path})
    run = evaluate if command == "evaluate" else train
    with pytest.raises(FilterkitError, match="a 3×3 matrix, and the class has 2 labels"):
        run(str(REAL / "credit-g.arff"), [registry.parse_chain("minmax")], settings, registry)


def test_the_check_before_any_fit_reads_the_bytes_the_run_read(tmp_path):
    path = str(tmp_path / "gone.cost")  # no such file: the run read it before
    with sent_files({path: IRIS_COSTS.encode()}):
        refuse_unfitting_costs("svm", {"costs": path}, ["a", "b", "c"], multiclass=True)
        with pytest.raises(FilterkitError, match="a 3×3 matrix, and the class has 2 labels"):
            refuse_unfitting_costs("svm", {"costs": path}, ["good", "bad"], multiclass=True)


def test_label_sets_are_refused(run_filterkit, tmp_path):
    path = _written(tmp_path, CREDIT_COSTS)
    data = REAL.parent / "multilabel" / "three-labels-synthetic.arff"
    result = run_filterkit("evaluate", "--svm-costs", path, data, "words")
    assert result.status == 1
    assert "a cost matrix prices one class per row, and multi-label data has a set of labels" in result.stderr


def _brute_cost_cut(scores, positives, costs):
    """The least total cost over every threshold: each distinct score, and one above them all (no row positive)."""
    thresholds = [*np.unique(scores), np.inf]
    return min(total_cost(costs, positives, scores >= t) for t in thresholds)


@pytest.mark.parametrize("seed", range(10))
def test_the_binary_cut_is_the_least_cost_of_every_threshold(seed):
    generator = np.random.default_rng(seed)
    rows = int(generator.integers(3, 60))
    positives = generator.random(rows) < 0.4
    scores = np.round(generator.random(rows) + positives * 0.3, 1 if seed % 2 else 6)  # ties on odd seeds
    costs = np.round(generator.random((2, 2)) * 4, 1)
    cut, cost = cost_cut(scores, positives, costs)
    assert cost == pytest.approx(_brute_cost_cut(scores, positives, costs), abs=1e-9)
    assert total_cost(costs, positives, scores >= cut.threshold) == pytest.approx(cost, abs=1e-9)


def test_an_expensive_missed_positive_lowers_the_cut():
    generator = np.random.default_rng(3)
    positives = generator.random(200) < 0.3
    scores = generator.normal(size=200) + positives * 1.0
    even, _ = cost_cut(scores, positives, np.array([[0.0, 1.0], [1.0, 0.0]]))
    missed_dear, _ = cost_cut(scores, positives, np.array([[0.0, 1.0], [5.0, 0.0]]))
    false_alarm_dear, _ = cost_cut(scores, positives, np.array([[0.0, 5.0], [1.0, 0.0]]))
    assert missed_dear.threshold < even.threshold < false_alarm_dear.threshold
    assert np.sum(scores >= missed_dear.threshold) > np.sum(scores >= even.threshold)


def test_zero_one_costs_are_the_errors_and_the_cut_the_most_accurate():
    generator = np.random.default_rng(8)
    positives = generator.random(120) < 0.5
    scores = np.round(generator.normal(size=120) + positives, 2)
    cut, cost = cost_cut(scores, positives, 1 - np.eye(2))
    errors = [np.count_nonzero((scores >= t) != positives) for t in [*np.unique(scores), np.inf]]
    assert cost == min(errors) == np.count_nonzero((scores >= cut.threshold) != positives)


def test_where_every_positive_costs_more_than_it_saves_no_row_is_positive():
    scores, positives = np.array([0.9, 0.8, 0.1]), np.array([False, True, False])
    cut, cost = cost_cut(scores, positives, np.array([[0.0, 10.0], [1.0, 0.0]]))
    assert cut.fell_back and cost == 1.0 and not (scores >= cut.threshold).any()


@pytest.mark.parametrize("price", [0.0, 1.0, 3.5])
def test_a_matrix_pricing_every_decision_alike_keeps_the_fixed_cut_as_the_offsets_keep_the_largest_score(price):
    generator = np.random.default_rng(12)
    positives = generator.random(50) < 0.3
    margin = np.round(generator.normal(size=50) + positives, 1)
    margin[:3] = 0.0  # a margin of 0 is negative under the fixed cut
    alike = np.full((2, 2), price)
    for scores, plain, decided in ((margin, MARGIN_CUT, margin > 0), (margin / 4 + 0.5, 0.5, margin >= 0)):
        cut, cost = cost_cut(scores, positives, alike, plain)
        assert cut.threshold == plain and not cut.fell_back and cost == 50 * price
        assert np.array_equal(scores >= cut.threshold, decided)
        assert cut.f1 == pytest.approx(2 * np.sum(decided & positives) / (np.sum(decided) + np.sum(positives)))
    offsets, cost, _ = cost_offsets(np.column_stack([np.zeros(50), margin]), positives.astype(np.int64), alike)
    assert not offsets.any() and cost == 50 * price


@pytest.mark.parametrize("probabilities", [False, True])
def test_cut_by_costs_keeps_the_fixed_cut_of_the_scores_it_cuts_on_a_matrix_pricing_alike(probabilities):
    decided: list = []
    margin = np.array([-1.0, 0.0, 0.5, 2.0])
    classifier = types.SimpleNamespace(
        costs_read=np.ones((2, 2)),
        params={"costs": "alike.cost"},
        cost_scores=(1 / (1 + np.exp(-margin)) if probabilities else margin)[:, None],
        cost_classes=np.array([0, 1, 0, 1]),
        has_probabilities=probabilities,
        costs_decided=lambda *decision: decided.append(decision),
    )
    cut_by_costs(classifier, ["no", "yes"], [0, 1])
    [(labels, costs, (thresholds, f1, fell_back, cost))] = decided
    assert labels == ["no", "yes"] and thresholds.tolist() == [0.5 if probabilities else MARGIN_CUT]
    assert (classifier.cost_scores[:, 0] >= thresholds[0]).tolist() == [False, probabilities, True, True]
    assert not fell_back and cost == 4.0 and f1 == pytest.approx(0.8 if probabilities else 0.5)


def _class_problem(seed: int):
    """:func:`class_problems.class_problem` of 6 to 69 rows and 2 to 4 classes, and a cost matrix of any diagonal."""
    generator, classes, scores = class_problem(seed, rows=(6, 70), widths=(2, 5))
    width = scores.shape[1]
    costs = np.round(generator.random((width, width)) * 5, 1)
    np.fill_diagonal(costs, np.round(generator.random(width), 1))  # any diagonal
    return generator, classes, scores, costs


def _cost_at(scores, classes, costs, offsets) -> float:
    return total_cost(costs, classes, np.argmax(scores - offsets, axis=1))


@pytest.mark.parametrize("seed", range(12))
def test_each_class_offset_is_the_least_cost_of_every_offset_tried_one_by_one(seed):
    generator, classes, scores, costs = _class_problem(seed)
    width = scores.shape[1]
    offsets, k = generator.normal(size=width) * 0.1, int(generator.integers(width))
    objective = _LeastCost(classes, costs)
    reached = objective.of(np.argmax(scores - offsets, axis=1))
    offset, best = _best_offset(scores, classes, offsets, k, objective.truth, reached, objective)
    rivals = np.delete(scores - offsets, k, axis=1).max(axis=1)
    gaps = np.unique(np.round(scores[:, k] - rivals, 9))
    tried = [gaps[0] - 1, gaps[-1] + 1, *((gaps[1:] + gaps[:-1]) / 2)]
    brute = min(_cost_at(scores, classes, costs, np.where(np.arange(width) == k, t, offsets)) for t in tried)
    assert -best == pytest.approx(min(brute, -reached), abs=1e-9)
    assert _cost_at(scores, classes, costs, np.where(np.arange(width) == k, offset, offsets)) == pytest.approx(-best)


def _no_single_move_cheaper(scores, classes, costs, offsets) -> bool:
    """Whether no class's offset moved alone, to any place between or past the rows' gaps, lowers the cost."""
    width, at = scores.shape[1], _cost_at(scores, classes, costs, offsets)
    for k in range(width):
        rivals = np.delete(scores - offsets, k, axis=1).max(axis=1)
        gaps = np.unique(np.round(scores[:, k] - rivals, 9))
        for t in [gaps[0] - 1, gaps[-1] + 1, *((gaps[1:] + gaps[:-1]) / 2)]:
            if _cost_at(scores, classes, costs, np.where(np.arange(width) == k, t, offsets)) < at - 1e-9:
                return False
    return True


LEFT_SHORT = (  # 22 rows of 5 classes where three passes stopped at cost 32; class 0's offset alone at -0.15 costs 30
    [
        [0.012661, 0.329019, 0.486961, 0.133978, 0.037381],
        [0.439315, 0.059582, 0.256068, 0.181733, 0.063302],
        [0.019598, 0.109482, 0.284753, 0.148008, 0.438159],
        [0.162403, 0.062562, 0.223836, 0.436001, 0.115198],
        [0.083172, 0.605886, 0.07096, 0.030126, 0.209856],
        [0.201263, 0.343475, 0.344249, 0.068723, 0.042291],
        [0.588944, 0.019808, 0.312058, 0.02645, 0.05274],
        [0.043102, 0.265162, 0.117867, 0.434885, 0.138984],
        [0.461127, 0.132374, 0.195066, 0.16646, 0.044974],
        [0.318933, 0.022938, 0.034473, 0.554319, 0.069337],
        [0.053894, 0.452184, 0.395172, 0.024559, 0.074191],
        [0.650935, 0.015908, 0.013677, 0.271901, 0.047579],
        [0.059607, 0.125215, 0.545036, 0.197419, 0.072723],
        [0.197502, 0.20796, 0.149133, 0.097355, 0.34805],
        [0.305862, 0.03596, 0.109314, 0.207141, 0.341723],
        [0.102505, 0.12991, 0.266313, 0.319792, 0.181481],
        [0.031241, 0.235236, 0.349652, 0.089175, 0.294695],
        [0.437854, 0.250262, 0.217689, 0.063803, 0.030393],
        [0.058546, 0.073867, 0.404735, 0.247834, 0.215018],
        [0.103928, 0.47958, 0.199566, 0.097297, 0.11963],
        [0.152074, 0.280819, 0.310435, 0.041687, 0.214985],
        [0.017823, 0.009431, 0.53641, 0.253835, 0.1825],
    ],
    [0, 1, 2, 3, 4, 4, 0, 3, 0, 2, 3, 2, 3, 4, 0, 0, 3, 2, 4, 0, 4, 0],
    [[0, 3, 8, 2, 5], [9, 0, 0, 2, 9], [2, 9, 0, 0, 8], [0, 0, 6, 0, 0], [5, 3, 9, 7, 0]],
)


def test_the_cost_offsets_are_a_local_minimum_where_three_passes_stopped_short_of_one():
    """The docs promise offsets no single move makes cheaper; three passes of coordinate descent had stopped at
    cost 32 here (a review's case), where moving class 0's offset alone gave 30."""
    scores, classes, costs = (np.array(part, dtype=float) for part in LEFT_SHORT)
    classes = classes.astype(np.int64)
    offsets, cost, _ = cost_offsets(scores, classes, costs)
    assert cost == _cost_at(scores, classes, costs, offsets) <= 30
    assert _no_single_move_cheaper(scores, classes, costs, offsets)
    assert not _no_single_move_cheaper(scores, classes, costs, cost_offsets(scores, classes, costs, sweeps=3)[0])


@pytest.mark.parametrize("seed", range(40))
def test_no_single_offset_s_move_lowers_the_cost_the_offsets_reach(seed):
    _, classes, scores, costs = _class_problem(seed)
    offsets, cost, _ = cost_offsets(scores, classes, costs)
    assert _no_single_move_cheaper(scores, classes, costs, offsets)


@pytest.mark.parametrize("seed", range(12))
def test_the_offsets_cost_what_their_decisions_cost_and_no_more_than_none(seed):
    _, classes, scores, costs = _class_problem(seed)
    offsets, cost, macro_f1 = cost_offsets(scores, classes, costs)
    decided = np.argmax(scores - offsets, axis=1)
    assert cost == total_cost(costs, classes, decided)
    assert cost <= _cost_at(scores, classes, costs, np.zeros(scores.shape[1]))
    from sklearn.metrics import f1_score

    labels = range(scores.shape[1])
    assert macro_f1 == pytest.approx(f1_score(classes, decided, labels=labels, average="macro", zero_division=0.0))


def test_with_two_classes_the_offsets_reach_the_binary_cuts_least_cost():
    generator = np.random.default_rng(4)
    classes = (generator.random(80) < 0.4).astype(np.int64)
    margin = np.round(generator.normal(size=80) + classes, 2)
    costs = np.array([[0.0, 1.0], [4.0, 0.0]])
    _, best = cost_cut(margin, classes == 1, costs)
    _, cost, _ = cost_offsets(np.column_stack([np.zeros(80), margin]), classes, costs)
    assert cost == best


def test_zero_one_costs_give_the_offsets_of_the_fewest_errors():
    _, classes, scores, _ = _class_problem(6)
    width = scores.shape[1]
    offsets, cost, _ = cost_offsets(scores, classes, 1 - np.eye(width))
    errors = np.count_nonzero(np.argmax(scores - offsets, axis=1) != classes)
    assert cost == errors <= np.count_nonzero(np.argmax(scores, axis=1) != classes)
    for k in range(width):  # no one offset alone makes fewer errors
        gaps = np.unique(scores[:, k] - np.delete(scores - offsets, k, axis=1).max(axis=1))
        for t in [gaps[0] - 1, gaps[-1] + 1, *((gaps[1:] + gaps[:-1]) / 2)]:
            moved = np.where(np.arange(width) == k, t, offsets)
            assert np.count_nonzero(np.argmax(scores - moved, axis=1) != classes) >= errors


def test_an_expensive_error_moves_decisions_toward_the_cheap_one():
    _, classes, scores, _ = _class_problem(10)
    width = scores.shape[1]
    even = 1 - np.eye(width)
    dear = even.copy()
    dear[0, 1:] = 20.0  # taking a row of class 0 for another class is dear
    decided_even = np.argmax(scores - cost_offsets(scores, classes, even)[0], axis=1)
    decided_dear = np.argmax(scores - cost_offsets(scores, classes, dear)[0], axis=1)
    assert np.count_nonzero(decided_dear == 0) > np.count_nonzero(decided_even == 0)
    assert np.count_nonzero((classes == 0) & (decided_dear != 0)) < np.count_nonzero(
        (classes == 0) & (decided_even != 0)
    )


def _prediction_costs(predictions: str, labels: list[str], costs: np.ndarray, positive: str | None = None) -> float:
    """The total cost of evaluate's ``--predictions`` rows (a binary task's truth and decision 0/1, ``positive``
    the class of 1), recomputed from the CSV."""
    total = 0.0
    for row in csv.DictReader(io.StringIO(predictions)):
        if positive is None:
            actual, decided = labels.index(row["truth"]), labels.index(row["decision"])
        else:
            other = next(label for label in labels if label != positive)
            actual, decided = (labels.index(positive if row[key] == "1" else other) for key in ("truth", "decision"))
        total += costs[actual, decided]
    return total


@pytest.mark.parametrize("positive", [None, "bad", "good"])
def test_evaluate_reports_the_cost_of_its_held_out_decisions(run_filterkit, tmp_path, positive):
    """Multi-class (None) and each class of a binary task as the positive one: the matrix's rows and columns follow
    the labels, not the task."""
    multiclass = positive is None
    data = REAL / ("iris.arff" if multiclass else "credit-g.arff")
    test = tmp_path / "test.arff"
    test.write_bytes(data.read_bytes())
    path = _written(tmp_path, IRIS_COSTS if multiclass else CREDIT_COSTS)
    predictions = tmp_path / "predictions.csv"
    argv = ["--svm-c-values", "1", "--svm-costs", path, "--test", test, "--predictions", predictions]
    argv += ["--multiclass"] if multiclass else ["--positive", positive]
    result = run_filterkit("evaluate", "--json", *argv, data, "minmax")
    assert result.status == 0, result.stderr
    document = json.loads(result.stdout)
    entry = document["results"][0] if multiclass else document
    labels = ["Iris-setosa", "Iris-versicolor", "Iris-virginica"] if multiclass else ["good", "bad"]
    costs = read_cost_matrix(str(path))
    recomputed = _prediction_costs(predictions.read_text(), labels, costs, positive)
    rows = 150 if multiclass else 1000
    assert entry["costs"] == {"total": recomputed, "average": recomputed / rows, "rows": rows, "per_fold": [recomputed]}
    table = run_filterkit("evaluate", *argv, data, "minmax").stdout.decode()
    assert re.search(rf"minmax +1 +{recomputed:g} +{recomputed / rows:.4f} +{rows}\n", table), table


@pytest.mark.slow  # three 10-fold evaluations of credit-g and an HTML report
def test_the_cross_validated_cost_is_the_folds_summed_in_every_report(run_filterkit, tmp_path):
    path = _written(tmp_path, CREDIT_COSTS)
    argv = ("evaluate", "--json", "--svm-c-values", "1", REAL / "credit-g.arff", "minmax")
    costed = json.loads(run_filterkit(*argv[:2], "--svm-costs", path, *argv[2:]).stdout)
    plain = json.loads(run_filterkit(*argv).stdout)
    assert "costs" not in plain and costed["costs"]["rows"] == 1000 and len(costed["costs"]["per_fold"]) == 10
    total = sum(costed["costs"]["per_fold"])
    assert costed["costs"]["total"] == total and costed["costs"]["average"] == total / 1000
    # a bad customer taken for good is dear: the cut finds more of them than the fixed one
    assert costed["recall"] > plain["recall"]
    report = tmp_path / "report.html"
    assert run_filterkit("evaluate", "--svm-costs", path, "--report", report, *argv[2:]).status == 0
    cells = f"<tr><th>minmax</th><td>1</td><td>{total:.10g}</td><td>{total / 1000:.4f}</td><td>1000</td></tr>"
    assert cells in report.read_text()


@pytest.mark.parametrize("multiclass", [True, False])
def test_the_fits_recorded_cost_is_that_of_its_out_of_fold_decisions(tmp_path, multiclass):
    from filterkit.costs import cut_by_costs, cut_task_by_costs
    from filterkit_plugins.classifiers import LinearSVM

    generator = np.random.default_rng(2)
    classes = generator.integers(0, 3 if multiclass else 2, 150)
    features = generator.normal(size=(150, 4)) + np.eye(4)[classes] * 1.5
    path = str(_written(tmp_path, IRIS_COSTS if multiclass else CREDIT_COSTS))
    svm = LinearSVM(c_values="1", costs=path)
    if multiclass:
        svm.fit_multiclass(features, classes, 3, 1)
        cut_by_costs(svm, ["a", "b", "c"], [0, 1, 2])
        decided = np.argmax(svm.cost_scores - svm.thresholds, axis=1)
    else:
        svm.fit(features, classes, 1)
        cut_task_by_costs(svm, ["good", "bad"], 1)
        decided = (svm.cost_scores[:, 0] >= svm.thresholds[0]).astype(np.int64)
    costs = read_cost_matrix(path)
    assert svm.describe()["threshold_cost"] == total_cost(costs, classes, decided)
    fixed = np.argmax(svm.cost_scores, axis=1) if multiclass else (svm.cost_scores[:, 0] >= 0.5).astype(np.int64)
    assert total_cost(costs, classes, decided) < total_cost(costs, classes, fixed)


def _train(run_filterkit, tmp_path, costs: str, *argv):
    path = _written(tmp_path, costs, "model.cost")
    model = tmp_path / "model.json"
    result = run_filterkit("train", "-q", "-o", model, "--svm-c-values", "1", "--svm-costs", path, *argv)
    assert result.status == 0, result.stderr
    return model, path


def test_the_model_keeps_the_labels_and_matrix_and_its_out_of_fold_cost(run_filterkit, tmp_path):
    model, path = _train(run_filterkit, tmp_path, GLASS_COSTS, "--multiclass", REAL / "glass.arff", "minmax")
    section = json.loads(model.read_text())["classifier"]
    state, fitted = section["state"], section["fitted"]
    present = section["classes"]
    assert "vehic wind non-float" not in present and state["cost_labels"] == present
    glass = read_cost_matrix(str(path))
    every = ["build wind float", "build wind non-float", "vehic wind float", "vehic wind non-float"]
    every += ["containers", "tableware", "headlamps"]
    kept = [every.index(label) for label in present]
    loaded = filterkit.load_model(model)
    saved = loaded.classifier.classifier
    assert np.array_equal(saved.cost_matrix, glass[np.ix_(kept, kept)])
    assert len(fitted["thresholds"]) == len(present) and fitted["threshold_cost"] >= 0


def _watched_fifo(path):
    """A FIFO at ``path`` and a thread that writes to it once any reader opens it: whether it was opened."""
    os.mkfifo(path)
    opened = threading.Event()
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            try:
                descriptor = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # no reader yet
                time.sleep(0.01)
                continue
            opened.set()
            os.write(descriptor, b"2 2\n0 1\n1 0\n")
            os.close(descriptor)
            return

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return opened, stop


def test_a_bad_cost_file_leaves_no_model(run_filterkit, tmp_path):
    path = _written(tmp_path, "2 2\n0 x\n1 0\n")
    model = tmp_path / "model.json"
    result = run_filterkit("train", "-o", model, "--svm-costs", path, REAL / "credit-g.arff", "minmax")
    assert result.status == 1 and not model.exists()
    assert result.stderr == f"filterkit: error: {path}:2: option --svm-costs: 'x' is not a cost from 0 to 1e+12\n"


@pytest.mark.parametrize("command", ["predict", "explain", "export", "update"])
def test_a_loaded_model_never_opens_the_cost_file_even_a_fifo_at_its_path(run_filterkit, tmp_path, command):
    model, path = _train(run_filterkit, tmp_path, CREDIT_COSTS, GRAIN, "words", "l2")
    path.unlink()
    opened, stop = _watched_fifo(path)
    try:
        if command == "export":
            result = run_filterkit("export", "--c", tmp_path / "scorer.c", model)
        elif command == "update":
            result = run_filterkit("update", model, GRAIN, "-o", tmp_path / "updated.json")
        else:
            result = run_filterkit(command, model, GRAIN)
    finally:
        stop.set()
    assert not opened.is_set()
    if command == "update":  # refused as any model with a classifier is, not for the cost file
        assert result.status == 1 and "update does not merge" in result.stderr
    else:
        assert result.status == 0, result.stderr
    if command == "explain":  # the cut the cost matrix chose, as f1's is shown
        threshold = filterkit.load_model(model).classifier.classifier.thresholds[0]
        assert f", threshold {threshold:.3g})" in result.stdout.decode().splitlines()[0]


def test_a_model_predicts_after_its_cost_file_is_gone_as_it_did_before(run_filterkit, tmp_path):
    model, path = _train(run_filterkit, tmp_path, CREDIT_COSTS, REAL / "credit-g.arff", "minmax")
    before = run_filterkit("predict", model, REAL / "credit-g.arff").stdout
    path.unlink()
    after = run_filterkit("predict", model, REAL / "credit-g.arff")
    assert after.status == 0 and after.stdout == before
    saved = filterkit.load_model(model).classifier.classifier
    assert json.loads(model.read_text())["classifier"]["fitted"]["threshold"] == saved.thresholds[0]
    assert saved.cost_labels == ["good", "bad"] and saved.cost_matrix.tolist() == [[0, 1], [5, 0]]


def test_a_model_without_costs_saves_no_cost_key_and_loads_as_before(run_filterkit, tmp_path):
    model = tmp_path / "plain.json"
    assert run_filterkit("train", "-q", "-o", model, "--svm-c-values", "1", GRAIN, "words").status == 0
    section = json.loads(model.read_text())["classifier"]
    assert "costs" not in section["params"] and not {"cost_labels", "cost_matrix"} & set(section["state"])
    assert filterkit.load_model(model).classifier.classifier.cost_matrix is None


@pytest.mark.parametrize(
    ("state", "words"),
    [
        ({"cost_labels": ["a", "b"]}, "'cost_matrix' is not 2×2"),
        ({"cost_labels": ["a", "b"], "cost_matrix": [[0, 1], [-1, 0]]}, "'cost_matrix' is not 2×2 costs from 0"),
        ({"cost_labels": ["a"], "cost_matrix": [[0, 1], [1, 0]]}, "'cost_labels' is not a list of 2 labels"),
        ({"cost_matrix": [[0, 1], [1, 0]]}, "'cost_labels' is not a list of 2 labels"),
    ],
)
def test_a_saved_cost_matrix_that_does_not_fit_is_refused(state, words):
    with pytest.raises(FilterkitError, match=re.escape(words)):
        loaded_costs(state, 2)


def _weka(*argv: str) -> str:
    assert JAVA is not None and WEKA_JAR is not None
    completed = subprocess.run(
        [JAVA, *JAVA_OPTIONS, "-cp", str(WEKA_JAR), "weka.classifiers.rules.OneR", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return completed.stdout


@needs_weka
def test_the_cost_of_wekas_own_predictions_is_wekas_total_cost(tmp_path):
    """Weka 3.6's OneR on glass (seven labels, one without a row), scored on its training rows with ``-m``: Weka
    prints the matrix it read, its Total Cost and Average Cost, and (``-p 0``) each row's actual and predicted
    class; filterkit reads the same matrix from the same file and prices those predictions at Weka's Total Cost."""
    path = _written(tmp_path, GLASS_COSTS)
    data = str(REAL / "glass.arff")
    summary = _weka("-t", data, "-T", data, "-m", str(path), "-o")
    printed = summary.split("=== Evaluation Cost Matrix ===")[1].strip().split("\n\n")[0]
    wekas_matrix = [[float(cell) for cell in line.split()] for line in printed.splitlines()]
    costs = read_cost_matrix(str(path))
    assert costs.tolist() == wekas_matrix
    total = float(re.search(r"Total Cost\s+(\S+)", summary).group(1))
    average = float(re.search(r"Average Cost\s+(\S+)", summary).group(1))
    predictions = _weka("-t", data, "-T", data, "-m", str(path), "-p", "0")
    pairs = re.findall(r"^\s*\d+\s+(\d+):.*?\s(\d+):", predictions, re.MULTILINE)
    actual, decided = (np.array([int(pair[i]) - 1 for pair in pairs]) for i in (0, 1))
    assert len(pairs) == 214 and np.count_nonzero(actual != decided) > 50
    assert total_cost(costs, actual, decided) == total
    assert total_cost(costs, actual, decided) / len(pairs) == pytest.approx(average, abs=5e-5)


@pytest.mark.parametrize("edited", [[["0", "1"], ["3", "0"]], [[False, True], [True, False]]])
def test_a_saved_cost_matrix_of_strings_or_booleans_is_refused(run_filterkit, tmp_path, edited):
    """Strings and booleans in a model's cost_matrix loaded (numpy reads them as numbers), where the same in its
    thresholds are refused (found by a hostile review of the decision rules)."""
    model = tmp_path / "costs.json"
    costs = tmp_path / "m.cost"
    costs.write_text(IRIS_COSTS)
    argv = ("train", "-q", "--jobs", "1", "-o", model, "--multiclass", "--svm-costs", costs)
    assert run_filterkit(*argv, REAL / "iris.arff", "minmax").status == 0
    document = json.loads(model.read_text())
    document["classifier"]["state"]["cost_matrix"] = edited
    model.write_text(json.dumps(document))
    refused = run_filterkit("predict", model, REAL / "iris.arff")
    assert refused.status == 1 and "svm: 'cost_matrix' is not an array of numbers" in refused.stderr


def test_the_table_prints_the_total_cost_exactly_as_json_holds_it(run_filterkit, tmp_path):
    # %.10g wrote a total of 1e12 + 20 as 1e+12, beside an average of 10000000000.2 over 100 rows
    two = tmp_path / "two.arff"
    lines = (REAL / "iris.arff").read_text().replace("{Iris-setosa,", "{").splitlines()
    two.write_text("\n".join(line for line in lines if "setosa" not in line))
    costs = tmp_path / "big.cost"
    costs.write_text("2 2\n0 1e12\n5 0\n")
    argv = ("evaluate", "-q", "--folds", "3", "--svm-c-values", "0.1,1", "--svm-costs", costs)
    document = json.loads(run_filterkit(*argv, "--json", two, "minmax").stdout)
    total = document["costs"]["total"]
    assert total != float(f"{total:.10g}")  # a total %.10g rounds
    table = run_filterkit(*argv, two, "minmax").stdout.decode()
    line = table.split("Average Cost")[1].splitlines()[1]
    assert float(line.split()[2]) == total
    # a sum of costs in binary has noise in its last bit, which the table leaves out: 2.3, not 2.3000000000000003
    from filterkit.reports import table

    document["costs"]["total"] = 0.1 + 2.2  # one chain and task: the document is its result
    line = table(document).split("Average Cost")[1].splitlines()[1]
    assert line.split()[2] == "2.3"
