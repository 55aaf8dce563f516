"""``--svm-threshold micro-macro`` (issue 77, item 1): Lin & Lin's micro+macro cuts of a label set's labels on the
out-of-fold scores of each label's SVM, the most frequent label first, each cut the best of every distinct score and
of no row at all; one label alone cut as ``f1``; the cuts saved in a label's classifier and applied by its predict."""

from __future__ import annotations

import csv
import importlib.util
import io
import json
import shutil
import sys
from fractions import Fraction
from pathlib import Path

import arff
import numpy as np
import pytest
from sklearn.metrics import f1_score

from filterkit.errors import FilterkitError
from filterkit.thresholds import (
    ColumnCut,
    cut_label_set,
    f1_cut,
    micro_macro_cuts,
    objective_cut,
    objective_scope,
    precision_at_recall_cut,
    threshold_objective,
)
from filterkit_plugins.classifiers import LinearSVM

REAL = Path(__file__).parent / "data" / "real"
SONAR = REAL / "sonar.arff"
LABELS = Path(__file__).parent / "data" / "multilabel" / "reuters-grain-corn.arff"


def brute_force_micro_macro(scores: list[np.ndarray], truth: np.ndarray) -> list[tuple[np.ndarray, Fraction]]:
    """Per label, the rows Lin & Lin's micro+macro rule predicts positive and that label's F1, tried one cut at a
    time in exact fractions: the labels the most frequent first (on equal counts, in order), each the cut (rows ≥
    a distinct score, or no row) of the largest micro-F1 of it and the labels before plus its F1 over its rank,
    the fewest rows on a tie."""
    order = sorted(range(truth.shape[1]), key=lambda j: -int(truth[:, j].sum()))
    totals = [0, 0, 0]
    chosen: list = [None] * truth.shape[1]
    for rank, j in enumerate(order, start=1):
        positives = truth[:, j]
        options = [np.zeros(len(positives), dtype=bool)] + [scores[j] >= s for s in np.unique(scores[j])[::-1]]
        best = None
        for predicted in options:
            tp = int((predicted & positives).sum())
            fp, fn = int((predicted & ~positives).sum()), int((~predicted & positives).sum())
            micro = Fraction(2 * (totals[0] + tp), 2 * (totals[0] + tp) + totals[1] + fp + totals[2] + fn)
            own = Fraction(2 * tp, 2 * tp + fp + fn)
            if best is None or micro + own / rank > best[0]:
                best = (micro + own / rank, predicted, own, (tp, fp, fn))
        assert best is not None
        chosen[j] = (best[1], best[2])
        totals = [total + count for total, count in zip(totals, best[3])]
    return chosen


def random_label_set(seed: int) -> tuple[list[np.ndarray], np.ndarray]:
    """Out-of-fold-like scores of three to five labels of 10–120 rows, frequent to rare, every label with a
    positive; on odd seeds rounded to one place, so that rows share scores."""
    generator = np.random.default_rng(seed)
    rows, labels = int(generator.integers(10, 120)), int(generator.integers(3, 6))
    truth = generator.random((rows, labels)) < generator.uniform(0.02, 0.5, size=labels)
    truth[generator.integers(rows, size=labels), np.arange(labels)] = True
    scores = [generator.normal(size=rows) + generator.uniform(0.2, 2.0) * truth[:, j] for j in range(labels)]
    return ([np.round(column, 1) for column in scores] if seed % 2 else scores), truth


@pytest.mark.parametrize("seed", range(40))
def test_each_cut_is_the_brute_force_optimum_of_micro_plus_macro_in_frequency_order(seed):
    scores, truth = random_label_set(seed)
    cuts = micro_macro_cuts(scores, truth)
    for j, (expected, own_f1) in enumerate(brute_force_micro_macro(scores, truth)):
        cut = cuts[j]
        assert isinstance(cut, ColumnCut)
        assert list(scores[j] >= cut.threshold) == list(expected)
        assert cut.f1 == pytest.approx(float(own_f1), abs=1e-12)
        assert cut.fell_back == (not expected.any())


def test_the_rule_is_not_the_f1_cut_on_every_label():
    differs = []
    for seed in range(40):
        scores, truth = random_label_set(seed)
        cuts = micro_macro_cuts(scores, truth)
        differs += [cut.threshold != f1_cut(scores[j], truth[:, j])[0] for j, cut in enumerate(cuts) if cut]
    assert any(differs) and not all(differs)


def test_a_rare_label_whose_own_best_cut_adds_many_false_positives_predicts_none():
    # the frequent label: ten positives scored above ten negatives, cut exactly (micro-F1 1 so far)
    frequent = np.r_[np.ones(10, dtype=bool), np.zeros(10, dtype=bool)]
    frequent_scores = np.r_[np.linspace(2, 3, 10), np.linspace(-3, -2, 10)]
    # the rare label: its one positive below eight negatives; on its own F1 the best cut takes all nine rows
    rare = np.zeros(20, dtype=bool)
    rare[0] = True
    rare_scores = np.r_[0.0, np.linspace(1, 2, 8), np.full(11, -5.0)]
    truth = np.column_stack([frequent, rare])
    own_threshold, own_f1 = f1_cut(rare_scores, rare)
    assert own_f1 == pytest.approx(0.2) and (rare_scores >= own_threshold).sum() == 9
    first, second = micro_macro_cuts([frequent_scores, rare_scores], truth)
    assert first is not None and first.f1 == 1.0
    # micro-F1 + F1/2 at its own cut: 22/30 + 0.2/2 = 0.83; at no row: 20/21 + 0 = 0.95
    assert second is not None and second.fell_back and not (rare_scores >= second.threshold).any()
    assert second.f1 == 0.0


def test_one_label_alone_is_cut_as_f1_cuts_it():
    for seed in range(20):
        scores, truth = random_label_set(seed)
        for j in range(truth.shape[1]):
            (alone,) = micro_macro_cuts([scores[j]], truth[:, [j]])
            assert alone is not None and (alone.threshold, alone.f1) == f1_cut(scores[j], truth[:, j])


def test_labels_without_out_of_fold_scores_are_left_uncut_and_counted_nowhere():
    scores, truth = random_label_set(3)
    with_gap = micro_macro_cuts([scores[0], None, *scores[2:]], truth)
    without = micro_macro_cuts([scores[0], *scores[2:]], np.delete(truth, 1, axis=1))
    assert with_gap[1] is None
    assert [with_gap[0], *with_gap[2:]] == without


def sonar_labels() -> tuple[np.ndarray, np.ndarray]:
    """Sonar's features, each row divided by its L2 norm, and four labels of them: mine, two rarer ones (a mine
    whose first feature is above its median; a rock whose tenth is in the top eighth) and a tenth of the rows
    drawn at random, which the features cannot tell."""
    data = arff.loads(SONAR.read_text())["data"]
    features = np.array([row[:-1] for row in data], dtype=np.float64)
    features /= np.linalg.norm(features, axis=1, keepdims=True)
    mines = np.array([row[-1] == "Mine" for row in data])
    second = mines & (features[:, 0] > np.median(features[:, 0]))
    third = ~mines & (features[:, 9] > np.quantile(features[:, 9], 0.875))
    drawn = np.zeros(len(mines), dtype=bool)
    drawn[np.random.default_rng(5).choice(len(mines), len(mines) // 10, replace=False)] = True
    return features, np.column_stack([mines, second, third, drawn])


def test_a_binary_svm_under_micro_macro_keeps_f1_s_cut_and_its_out_of_fold_scores():
    features, truth = sonar_labels()
    mines = truth[:, 0].astype(np.int64)
    by_f1 = LinearSVM(c_values="1", inner_folds=4, threshold="f1").fit(features, mines, 3)
    by_rule = LinearSVM(c_values="1", inner_folds=4, threshold="micro-macro").fit(features, mines, 3)
    assert by_rule.describe()["threshold"] == by_f1.describe()["threshold"]
    assert by_f1.out_of_fold_scores is None
    kept = by_rule.out_of_fold_scores
    assert kept is not None and kept.shape == (len(mines),)
    assert f1_cut(kept, truth[:, 0])[0] == by_rule.describe()["threshold"]


def test_a_label_set_s_svms_are_cut_together_saved_and_applied_by_predict():
    features, truth = sonar_labels()
    svms = [
        LinearSVM(c_values="1", inner_folds=4, threshold="micro-macro").fit(features, column.astype(np.int64), 3)
        for column in truth.T
    ]
    own = [svm.describe()["threshold"] for svm in svms]
    constant = np.zeros(len(truth), dtype=bool)
    cut_label_set([*svms, None], np.column_stack([truth, constant]), ["a", "b", "c", "d", "e"])
    expected = micro_macro_cuts([svm.out_of_fold_scores for svm in svms], truth)
    for svm, cut, before in zip(svms, expected, own):
        assert cut is not None
        assert svm.describe()["threshold"] == cut.threshold and svm.describe()["threshold_f1"] == cut.f1
        loaded = LinearSVM(c_values="1", inner_folds=4, threshold="micro-macro")
        loaded.load_state(json.loads(json.dumps({k: _listed(v) for k, v in svm.state().items()})))
        assert np.array_equal(loaded.predict(features), loaded.score(features) >= cut.threshold)
        assert np.array_equal(loaded.predict(features), svm.predict(features))
        assert loaded.exported_rule()[1].tolist() == [cut.threshold]  # what an exported scorer applies
    assert [svm.describe()["threshold"] for svm in svms] != own  # the joint rule moved a label's cut here


def _listed(value):
    """A state's value as JSON holds it (arrays as lists)."""
    return value.tolist() if isinstance(value, np.ndarray) else value


def test_a_label_the_joint_cut_leaves_predicting_nothing_says_it_fell_back():
    features, truth = sonar_labels()
    svm = LinearSVM(c_values="1", inner_folds=4, threshold="micro-macro").fit(features, truth[:, 3].astype(np.int64), 3)
    assert svm.describe()["threshold_fell_back"] is False
    kept = svm.out_of_fold_scores
    assert kept is not None
    svm.cut_at(ColumnCut(float(np.nextafter(kept.max(), np.inf)), 0.0, True))
    described = svm.describe()
    assert described["threshold_fell_back"] is True and described["threshold_f1"] == 0.0
    assert not svm.predict(features[svm.score(features) <= kept.max()]).any()


def test_train_saves_the_micro_macro_cut_and_predict_applies_it(run_filterkit, tmp_path):
    model = tmp_path / "mines.json"
    argv = ["train", "-q", "-o", model, "--positive", "Mine", "--svm-c-values", "1"]
    assert run_filterkit(*argv, "--svm-threshold", "micro-macro", SONAR, "l2").status == 0
    saved = json.loads(model.read_text())["classifier"]
    threshold = saved["fitted"]["threshold"]
    assert saved["params"]["threshold"] == "micro-macro"
    result = run_filterkit("predict", model, SONAR)
    assert result.status == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout.decode())))
    probability = np.array([float(row["probability"]) for row in rows])
    assert [row["label"] == "Mine" for row in rows] == list(probability >= threshold)
    assert ((probability >= threshold) & (probability < 0.5)).any()  # rows the saved cut decides otherwise


def test_micro_macro_with_multiclass_is_refused_in_one_line(run_filterkit):
    result = run_filterkit("evaluate", "--svm-threshold", "micro-macro", "--multiclass", REAL / "iris.arff", "l2")
    lines = result.stderr.strip().splitlines()
    assert result.status == 1 and len(lines) == 1 and "one class per row" in lines[0]
    assert "Traceback" not in result.stderr


@pytest.mark.nightly  # runs benchmarks/multilabel.py's thresholds table on a small corpus
@pytest.mark.skipif(shutil.which("filterkit") is None, reason="the table calls the filterkit console script")
def test_the_benchmark_s_thresholds_table_runs_every_rule_through_evaluate(tmp_path):
    benchmarks = Path(__file__).resolve().parent.parent / "benchmarks"
    sys.path.insert(0, str(benchmarks))  # multilabel.py imports corpora.py beside it
    spec = importlib.util.spec_from_file_location("multilabel", benchmarks / "multilabel.py")
    assert spec is not None and spec.loader is not None
    multilabel = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(multilabel)
    words = {"use::editing": "editor edit", "works-with::audio": "sound audio", "works-with::text": "text plain"}
    rows = []
    for n in range(150):
        tags = [label for bit, label in enumerate(words) if (n + 1) >> bit & 1 or n % 7 == bit]
        noise = f" package {n} word{n % 11} tool" + (" edit" if n % 5 == 0 else "")
        rows.append((" ".join(words[label].split()[n % 2] for label in tags) + noise, tags))
    (tmp_path / "data").mkdir()
    for part, kept in (("train", rows[:100]), ("test", rows[100:])):
        multilabel.write_meka(tmp_path / "data" / f"debtags-{part}.arff", sorted(words), kept)
    summary = multilabel.summarize_thresholds(tmp_path, multilabel.THRESHOLD_ROUTE)
    table = [line for line in summary.splitlines() if line.startswith("| ")]
    assert [line.split(" | ")[0] for line in table[1:]] == [f"| {rule}" for rule in multilabel.THRESHOLD_RULES]
    found = {rule: multilabel.run_threshold(tmp_path, multilabel.THRESHOLD_ROUTE, rule) for rule in ("f1", "margin")}
    assert all(len(entry["predicted"]) == 50 and entry["cpu"] > 0 for entry in found.values())
    # the margin's sign and f1's out-of-fold cut decide differently on this corpus: the rules are really run
    assert found["f1"]["predicted"] != found["margin"]["predicted"]


@pytest.mark.parametrize(
    ("rule", "objective", "scope"),
    [
        ("precision@recall=0.9", ("precision@recall", 0.9), None),
        ("precision@recall=0.9:Mine", ("precision@recall", 0.9), "Mine"),
        ("recall@precision=.5:works-with::text", ("recall@precision", 0.5), "works-with::text"),
        ("micro-macro", None, None),
    ],
)
def test_an_objective_may_name_the_label_it_is_for_and_the_label_may_hold_colons(rule, objective, scope):
    assert threshold_objective(rule) == objective
    assert objective_scope(rule) == scope


@pytest.mark.parametrize(
    ("rule", "refusal"),
    [
        ("precision@recall=0.9:", "name a label after ':', as in precision@recall=0.9:LABEL"),
        ("recall@precision=x:Mine", "the precision must be a number above 0 and at most 1"),
    ],
)
def test_a_bad_scoped_objective_is_refused_in_one_line(rule, refusal):
    with pytest.raises(FilterkitError) as refused:
        LinearSVM(threshold=rule)
    assert refusal in refused.value.message and "\n" not in refused.value.message


def test_the_objective_cut_s_f1_is_the_f1_of_its_decisions():
    for seed in range(10):
        scores, truth = random_label_set(seed)
        for name, floor in (("precision@recall", 0.8), ("recall@precision", 0.6)):
            cut = objective_cut(scores[0], truth[:, 0], name, floor)
            decided = scores[0] >= cut.threshold
            assert cut.f1 == pytest.approx(f1_score(truth[:, 0], decided, zero_division=0.0), abs=1e-12)


def fitted_label_svms(rule: str) -> tuple[np.ndarray, np.ndarray, list[LinearSVM]]:
    """sonar_labels()'s features and labels, and an svm per label fitted under ``rule``."""
    features, truth = sonar_labels()
    return (
        features,
        truth,
        [
            LinearSVM(c_values="1", inner_folds=4, threshold=rule).fit(features, column.astype(np.int64), 3)
            for column in truth.T
        ],
    )


def test_a_scoped_objective_moves_its_label_s_cut_and_the_others_keep_f1_s():
    features, truth, svms = fitted_label_svms("precision@recall=0.9:second")
    own = [svm.describe() for svm in svms]
    for svm, column, described in zip(svms, truth.T, own):
        assert svm.out_of_fold_scores is not None
        assert described["threshold"] == f1_cut(svm.out_of_fold_scores, column)[0]
        assert "threshold_precision" not in described  # the objective is not this label's yet
    cut_label_set(svms, truth, ["mine", "second", "third", "drawn"])
    moved = svms[1].describe()
    expected = precision_at_recall_cut(svms[1].out_of_fold_scores, truth[:, 1], 0.9)
    assert (moved["threshold"], moved["threshold_precision"], moved["threshold_recall"]) == expected
    assert moved["threshold_recall"] >= 0.9 and moved["threshold"] != own[1]["threshold"]
    assert np.array_equal(svms[1].predict(features), svms[1].score(features) >= expected[0])
    assert [svm.describe() for j, svm in enumerate(svms) if j != 1] == [own[j] for j in (0, 2, 3)]


def test_a_scoped_objective_naming_no_label_of_the_data_is_refused_in_one_line_naming_it():
    _, truth, svms = fitted_label_svms("recall@precision=0.8:use::editing")
    with pytest.raises(FilterkitError) as refused:
        cut_label_set(svms, truth, ["mine", "second", "third", "drawn"])
    assert refused.value.message == (
        "svm: --svm-threshold recall@precision=0.8:use::editing: 'use::editing' is not a label of the data "
        "(mine, second, third, drawn)"
    )


def test_a_binary_task_s_scope_is_its_positive_class_and_another_class_keeps_f1():
    features, truth = sonar_labels()
    mines = truth[:, 0]
    for scope, moved in (("Mine", True), ("Rock", False)):
        svm = LinearSVM(c_values="1", inner_folds=4, threshold=f"precision@recall=0.95:{scope}")
        svm.fit(features, mines.astype(np.int64), 3)
        by_f1 = svm.describe()["threshold"]
        cut_label_set([svm], mines[:, None], ["Mine"], ["Mine", "Rock"])
        expected = precision_at_recall_cut(svm.out_of_fold_scores, mines, 0.95)[0] if moved else by_f1
        assert svm.describe()["threshold"] == expected
    with pytest.raises(FilterkitError, match="'Metal' is not a label of the data \\(Mine, Rock\\)"):
        cut_label_set([LinearSVM(threshold="precision@recall=0.9:Metal")], mines[:, None], ["Mine"], ["Mine", "Rock"])


@pytest.mark.parametrize(
    "rule, said", [("micro-macro", "threshold decision (svm's cut: micro-macro),"), ("fixed", "threshold decision,")]
)
def test_the_label_set_table_names_the_svm_s_cut_under_its_decision(run_filterkit, rule, said):
    """The header said "threshold decision" (Platt's 0.5, by --threshold's help) where micro-macro cuts decided."""
    result = run_filterkit(
        "evaluate", "--folds", "2", "--svm-c-values", "1", "--svm-threshold", rule, LABELS, "words", "l2"
    )
    assert result.status == 0, result.stderr
    assert said in result.stdout.decode().splitlines()[0]
