"""``filterkit evaluate`` (docs/algorithms.md §8, §9; KDD'09 §4,
Anghelescu & Muchnik §2)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from chain_helpers import FIXTURE_PLUGINS, REAL
from filterkit.evaluation import nested_subsamples
from filterkit.measures import measures
from filterkit.tasks import choose_tasks, stratified_folds
from filterkit_plugins.classifiers import (
    AdaptiveSVM,
    LinearSVM,
    adaptive_c,
    adaptive_intercept,
    area_under_roc,
    platt_sigmoid,
)

LEAK = FIXTURE_PLUGINS / "leak"
OH0 = REAL / "oh0.wc.arff"
IRIS = REAL / "iris.arff"


def evaluate_json(run_filterkit, *arguments, plugins_dir=None) -> dict:
    result = run_filterkit("evaluate", "-q", "--json", *arguments, plugins_dir=plugins_dir)
    assert result.status == 0, result.stderr
    return json.loads(result.stdout)


def noise_file(tmp_path, rows=200, features=5, seed=0):
    """Features with no relation to the class: no honest classifier beats AUC 0.5 by much."""
    rng = np.random.default_rng(seed)
    values = rng.normal(size=(rows, features)).round(6)
    labels = np.where(rng.random(rows) < 0.4, "yes", "no")
    lines = ["@relation noise"] + [f"@attribute x{j} numeric" for j in range(features)]
    lines += ["@attribute class {no,yes}", "@data"]
    lines += [",".join(map(str, row)) + f",{label}" for row, label in zip(values, labels)]
    path = tmp_path / "noise.arff"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_no_leakage_a_stage_that_memorizes_rows_learns_nothing_about_test_folds(run_filterkit, tmp_path):
    from sklearn.metrics import roc_auc_score

    path = noise_file(tmp_path)
    # The probe works: fitted on all rows and applied to them, its first feature is the answer.
    leaked = run_filterkit("--positive", "yes", path, "memorize", plugins_dir=LEAK)
    from chain_helpers import read_bytes

    _, chunk = read_bytes(leaked.stdout)
    assert roc_auc_score(chunk.values[:, -1] == 1, chunk.values[:, 0]) == 1.0
    # Under evaluate every test row is new to the fitted chain.
    document = evaluate_json(run_filterkit, "--positive", "yes", "--folds", "5", path, "memorize", plugins_dir=LEAK)
    assert document["auc"] < 0.7
    assert document["accuracy"] < 0.75


@pytest.mark.slow
def test_compared_chains_see_identical_folds_and_match_their_single_runs(run_filterkit):
    compared = evaluate_json(run_filterkit, "--each-class", "--folds", "5", "--compare", IRIS, "minmax", "bns l2")
    alone = evaluate_json(run_filterkit, "--each-class", "--folds", "5", IRIS, "bns", "l2")
    assert compared["settings"]["fold_of_row"] == alone["settings"]["fold_of_row"]
    for mine in alone["results"]:
        theirs = next(r for r in compared["results"] if r["chain"] == "bns l2" and r["task"] == mine["task"])
        assert theirs["per_fold"] == mine["per_fold"]
    assert {r["chain"] for r in compared["macro"]} == {"minmax", "bns l2"}


def test_folds_are_stratified_seeded_and_partition_the_rows():
    codes = np.repeat([0, 1, 2], [50, 30, 7]).astype(float)
    folds = stratified_folds(codes, 5, seed=3)
    assert sorted(np.concatenate([test for _, test in folds]).tolist()) == list(range(len(codes)))
    for train, test in folds:
        assert not set(train) & set(test)
        counts = np.bincount(codes[test].astype(int), minlength=3)
        assert counts[0] == 10 and counts[1] == 6 and counts[2] in (1, 2)
    again = stratified_folds(codes, 5, seed=3)
    other = stratified_folds(codes, 5, seed=4)
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(folds, again))
    assert not all(np.array_equal(a[1], b[1]) for a, b in zip(folds, other))


def test_learning_curve_samples_are_nested_per_class_and_inside_the_training_fold():
    codes = np.repeat([0, 1], [80, 20]).astype(float)
    train = np.arange(0, 100, 2) + 0  # 40 of class 0, 10 of class 1
    samples = nested_subsamples(train, codes, (0.05, 0.2, 0.5, 1.0), seed=7)
    sizes = {f: np.bincount(codes[s].astype(int), minlength=2).tolist() for f, s in samples.items()}
    assert sizes == {0.05: [2, 1], 0.2: [8, 2], 0.5: [20, 5], 1.0: [40, 10]}
    fractions = sorted(samples)
    for smaller, larger in zip(fractions, fractions[1:]):
        assert set(samples[smaller]) <= set(samples[larger])
    assert set(samples[1.0]) == set(train)


@pytest.mark.slow
def test_learning_curve_runs_every_fraction_on_the_same_test_folds(run_filterkit):
    document = evaluate_json(run_filterkit, "--each-class", "--folds", "3", "--train-fraction", "0.2,1", IRIS, "minmax")
    fractions = sorted({r["train_fraction"] for r in document["results"]})
    assert fractions == [0.2, 1.0]
    small = [r for r in document["results"] if r["train_fraction"] == 0.2]
    assert len(small) == 3 and all(len(r["per_fold"]["auc"]) == 3 for r in small)


@pytest.mark.parametrize("task", [("--positive", "Iris-setosa"), (), ("--test", IRIS)])
def test_min_positives_without_each_class_is_a_usage_error_not_ignored(run_filterkit, task):
    """--min-positives picks --each-class's classes; alone (or on label sets, which refuse --each-class) it
    changed nothing, silently."""
    result = run_filterkit("evaluate", "-q", "--min-positives", "5", *task, IRIS, "l2")
    assert result.status == 2 and result.stdout == b""
    assert "--min-positives chooses the classes that --each-class evaluates" in result.stderr


def test_tasks_follow_the_papers_rules():
    labels = ("a", "b", "c")
    assert choose_tasks(labels, np.array([60, 50, 49]), None, None, True, 50) == ["a", "b"]
    assert choose_tasks(labels, np.array([60, 50, 49]), "c", None, False, 50) == ["c"]
    assert choose_tasks(("x", "y"), np.array([70, 30]), None, None, False, 50) == ["y"]
    assert choose_tasks(("x", "y"), np.array([40, 40]), None, None, False, 50) == ["y"]
    with pytest.raises(Exception, match=r"--positive LABEL \(that class against the rest\), --each-class"):
        choose_tasks(labels, np.array([60, 50, 49]), None, None, False, 50)
    with pytest.raises(Exception, match="fewer than --min-positives"):
        choose_tasks(("x", "y"), np.array([70, 30]), None, None, True, 50)


def test_measures_of_a_hand_worked_fold():
    truth = np.array([1, 1, 1, 0, 0, 0, 0, 0], dtype=bool)
    scores = np.array([0.9, 0.4, 0.2, 0.8, 0.3, 0.1, 0.05, 0.0])
    predicted = scores >= 0.35
    result = measures(truth, scores, predicted)
    # predicted positive: 0.9 (tp), 0.4 (tp), 0.8 (fp); tp 2, fp 1, fn 1, tn 4
    assert result["accuracy"] == 6 / 8
    assert result["precision"] == 2 / 3 and result["recall"] == 2 / 3
    assert result["f1"] == pytest.approx(2 / 3)
    assert result["specificity"] == 4 / 5
    # pairs (positive, negative) ranked right: 0.9 beats 5, 0.4 beats 4, 0.2 beats 3 → 12 of 15
    assert result["auc"] == pytest.approx(12 / 15)
    assert result["precision_at_20"] == 3 / 8
    assert math.isnan(measures(np.zeros(4, bool), np.arange(4.0), np.zeros(4, bool))["auc"])


@pytest.mark.slow
def test_auc_is_the_mean_of_the_fold_aucs_not_pooled(run_filterkit):
    document = evaluate_json(run_filterkit, "--positive", "Ethics", "--folds", "4", OH0, "binarize", "l2")
    assert document["auc"] == pytest.approx(np.mean(document["per_fold"]["auc"]))
    assert set(("accuracy", "auc", "f1", "precision", "recall", "specificity", "precision_at_20")) <= set(document)
    assert len(document["classifier"]) == 4 and all(f["C"] in (0.01, 0.1, 1, 10, 100) for f in document["classifier"])


def test_auc_and_platt_agree_with_scikit_learn():
    from sklearn.calibration import _sigmoid_calibration
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(5)
    decisions = rng.normal(size=400).round(1)  # rounded: ties
    targets = (decisions + rng.normal(size=400)) > 0.7
    assert area_under_roc(targets, decisions) == pytest.approx(roc_auc_score(targets, decisions))
    np.testing.assert_allclose(platt_sigmoid(decisions, targets), _sigmoid_calibration(decisions, targets), rtol=1e-6)


def test_svm_picks_the_c_with_the_best_inner_auc():
    rng = np.random.default_rng(2)
    features = rng.normal(size=(120, 4))
    targets = (features[:, 0] + 0.5 * rng.normal(size=120) > 0.3).astype(int)
    model = LinearSVM(c_values="0.001,1").fit(features, targets, seed=0)
    assert set(model.inner_auc) == {0.001, 1.0}
    assert model.chosen_C == max(model.inner_auc, key=model.inner_auc.get)
    probabilities = model.score(features)
    assert np.all((probabilities > 0) & (probabilities < 1))
    np.testing.assert_array_equal(model.predict(features), probabilities >= 0.5)


def _independent_out_of_fold_decisions(features, targets, C, seed, strata=None, folds=5):
    """liblinear's decision values of each row when its inner fold (stratified on ``strata``, by default the
    targets) is held out, computed apart from LinearSVM."""
    from sklearn.model_selection import StratifiedKFold
    from sklearn.svm import LinearSVC

    decisions = np.zeros(len(targets))
    strata = targets if strata is None else strata
    for train, test in StratifiedKFold(folds, shuffle=True, random_state=seed).split(features, strata):
        svm = LinearSVC(C=C, random_state=seed, max_iter=20000).fit(features[train], targets[train])
        decisions[test] = svm.decision_function(features[test])
    return decisions


def test_svm_can_pick_c_by_the_f1_of_its_out_of_fold_decisions():
    from sklearn.metrics import f1_score

    rng = np.random.default_rng(10)
    features = rng.normal(size=(200, 6))
    targets = (features[:, 0] + features[:, 1] + 1.2 * rng.normal(size=200) > 1.6).astype(int)  # rare positives
    margin = LinearSVM(c_values="0.001,0.1,10", c_by="f1", decision="margin").fit(features, targets, seed=3)
    expected = {
        C: f1_score(targets, _independent_out_of_fold_decisions(features, targets, C, 3) > 0, zero_division=0.0)
        for C in (0.001, 0.1, 10)
    }
    assert margin.inner_f1 == pytest.approx(expected, abs=1e-12)
    assert margin.chosen_C == max(expected, key=lambda C: (expected[C], -C)) == 10.0
    assert set(margin.describe()["inner_f1"]) == {"0.001", "0.1", "10.0"}
    by_auc = LinearSVM(c_values="0.001,0.1,10", decision="margin").fit(features, targets, seed=3)
    assert by_auc.inner_f1 == {} and "inner_f1" not in by_auc.describe()
    assert by_auc.chosen_C == max(by_auc.inner_auc, key=lambda C: (by_auc.inner_auc[C], -C)) == 0.1, "AUC differs"


def test_the_f1_that_picks_c_decides_as_the_platt_sigmoid_decides():
    from sklearn.metrics import f1_score

    rng = np.random.default_rng(7)
    features = rng.normal(size=(150, 4))
    targets = (features[:, 0] + rng.normal(size=150) > 1.0).astype(int)
    model = LinearSVM(c_values="0.01,1", c_by="f1").fit(features, targets, seed=0)
    for C in (0.01, 1.0):
        decisions = _independent_out_of_fold_decisions(features, targets, C, 0)
        A, B = platt_sigmoid(decisions, targets == 1)
        decided = 1.0 / (1.0 + np.exp(A * decisions + B)) >= 0.5
        assert model.inner_f1[C] == pytest.approx(f1_score(targets, decided), abs=1e-12)


def test_k_classes_pick_c_by_the_macro_f1_of_the_largest_probability():
    from sklearn.metrics import f1_score

    rng = np.random.default_rng(11)
    features = rng.normal(size=(180, 5))
    classes = np.argmax(features[:, :3] + 0.8 * rng.normal(size=(180, 3)), axis=1)
    model = LinearSVM(c_values="0.01,1", c_by="f1", decision="margin").fit_multiclass(features, classes, 3, seed=2)
    for C in (0.01, 1.0):
        columns = [
            _independent_out_of_fold_decisions(features, (classes == k).astype(int), C, 2, classes) for k in range(3)
        ]
        assert model.inner_f1[C] == pytest.approx(
            f1_score(classes, np.argmax(np.column_stack(columns), axis=1), average="macro"), abs=1e-12
        )
    assert "inner_macro_f1" in model.describe()


# aiSVM, worked by hand (docs/algorithms.md §9).


def test_adaptive_c_stops_at_the_first_recall_reaching_rho_max():
    recalls = iter([0.5, 0.7, 0.8, 0.9])
    assert adaptive_c(0.25, lambda C: next(recalls), rho_max=0.75, k_max=20) == (3, 0.75, [0.5, 0.7, 0.8])


def test_adaptive_c_steps_back_when_recall_is_perfect():
    recalls = iter([0.5, 1.0])
    assert adaptive_c(0.25, lambda C: next(recalls), 0.75, 20) == (1, 0.25, [0.5, 1.0])
    assert adaptive_c(0.25, lambda C: 1.0, 0.75, 20) == (1, 0.25, [1.0]), "k = 1 has nowhere to step back to"


def test_adaptive_c_gives_up_at_k_max_and_asks_for_the_right_cs():
    asked = []
    k, C, recalls = adaptive_c(0.5, lambda C: asked.append(C) or 0.1, 0.75, 4)
    assert (k, C) == (4, 2.0) and asked == [0.5, 1.0, 1.5, 2.0] and recalls == [0.1] * 4


def test_adaptive_intercept_maximizes_sensitivity_under_the_specificity_bound():
    # decision values: 10 negatives at 0..9, 4 positives at 5.5, 7.5, 8.5, 12.
    negatives = np.arange(10.0)
    positives = np.array([5.5, 7.5, 8.5, 12.0])
    decisions = np.r_[negatives, positives]
    targets = np.r_[np.zeros(10), np.ones(4)]
    # Specificity >= 0.85 allows at most 1 negative (of 10) above the cut: the lowest such cut lies
    # between 8 and 8.5 (8.25, with only 9 above it) and retrieves 8.5 and 12 → sensitivity 2/4; the next
    # cut up (8.75) loses 8.5, so 8.25 it is.  The cut 7.75 would let 8 and 9 through (specificity 0.8).
    assert adaptive_intercept(decisions, targets, 0.85) == 8.25
    # With a bound of 0.5 up to 5 negatives may be above: cut between 4 and 5 retrieves all 4 positives,
    # and the search stops there: the highest cut keeping every positive is between 5 and 5.5.
    assert adaptive_intercept(decisions, targets, 0.5) == 5.25
    assert adaptive_intercept(decisions, targets, 1.01) is None


def test_aisvm_end_to_end_on_one_feature_checked_by_hand():
    # One feature: negatives at 1..20, positives at 15..24 (overlapping classes).
    x = np.r_[np.arange(1, 21), np.arange(15, 25)].astype(float)
    targets = np.r_[np.zeros(20), np.ones(10)].astype(int)
    model = AdaptiveSVM().fit(x[:, None], targets, seed=0)
    # C1 = 1 / mean(|x|) = 1 / ((210 + 195) / 30) = 30 / 405.
    assert model.base_C == pytest.approx(30 / 405)
    assert model.chosen_C == pytest.approx(model.k * 30 / 405)
    assert model.recalls[-1] >= 0.75 or model.k == 20
    # w > 0, so the intercept is a cut on x: at most 3 of 20 negatives (specificity >= 0.85) may lie
    # above it; negatives 18, 19, 20 may, 17 may not → the cut lies between 17 and 18 on x, and of the
    # cuts retrieving positives 18..24 (7 of 10) the highest is between 17 and 18: x = 17.5.
    assert model.weights[0] > 0
    assert -model.intercept / model.weights[0] == pytest.approx(17.5)
    predicted = model.predict(x[:, None])
    assert predicted[targets == 1].mean() == 0.7
    assert (~predicted[targets == 0]).mean() == 0.85


def test_aisvm_runs_under_evaluate_with_its_options(run_filterkit):
    document = evaluate_json(
        run_filterkit,
        "--positive",
        "Ethics",
        "--folds",
        "3",
        "--classifier",
        "aisvm",
        "--aisvm-alpha-n",
        "0.9",
        OH0,
        "binarize",
        "l2",
    )
    assert document["settings"]["classifier_params"] == {"alpha_n": 0.9}
    assert all(f["k"] >= 1 and f["C"] == pytest.approx(f["k"] * f["C1"]) for f in document["classifier"])
    assert document["specificity"] >= 0.85


@pytest.mark.slow
def test_table_shows_one_row_per_chain(run_filterkit):
    result = run_filterkit("evaluate", "-q", "--each-class", "--folds", "3", "--compare", IRIS, "minmax", "", "l2")
    assert result.status == 0, result.stderr
    lines = result.stdout.decode().splitlines()
    assert "3 task(s)" in lines[0]
    assert lines[1].split()[:2] == ["chain", "train"]
    assert [line.split()[0] for line in lines[2:]] == ["minmax", "(none)", "l2"]
    assert all(len(line.split()) == 9 for line in lines[2:])


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["--compare", IRIS], "--compare needs at least one quoted chain"),
        ([IRIS, "minmax"], "--each-class (each class against the rest, in turn) or --multiclass (all 3 classes"),
        (["--each-class", IRIS, "nosuch"], "nosuch"),
        (
            ["--each-class", "--svm-c-values", "1", "--classifier", "aisvm", IRIS],
            "option(s) for another classifier than 'aisvm': --svm-c-values",
        ),
        (["--each-class", "--train-fraction", "0,1", IRIS], "(0, 1]"),
        (["--each-class", "--compare", IRIS, "minmax l2", "minmax  l2"], "twice"),
        (["--each-class", "--compare", IRIS, "l2 'x", ""], 'chain "l2 \'x": No closing quotation'),
        (["--positive", "nosuch", IRIS], "--positive 'nosuch' is not a label of the class 'class' {Iris-setosa,"),
    ],
)
def test_bad_evaluate_commands_are_clear_errors(run_filterkit, arguments, message):
    result = run_filterkit("evaluate", "-q", *arguments)
    assert result.status in (1, 2)
    assert message in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == b""


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["evaluate", "--each-class", IRIS, "nosuch"], "chain 'nosuch': No such command 'nosuch'."),
        (["evaluate", "--each-class", IRIS, "select", "--top", "abc"], "'abc' is not a valid integer range"),
        (["evaluate", "--each-class", IRIS, "l2", "--bogus"], "No such option '--bogus'"),
        (["evaluate", "--each-class", "--compare", IRIS, "l2 'x", "l2 "], "No closing quotation"),
        (["evaluate", "--each-class", "--sweep", "select.top", IRIS, "select"], "is not STAGE.OPTION=VALUE"),
        (["train", "--positive", "Iris-setosa", "-o", "{model}", IRIS, "nosuch"], "No such command 'nosuch'."),
        (["train", "--positive", "Iris-setosa", "-o", "{model}", "--compare", IRIS, "l2 'x", "l2 "], "No closing"),
        # one chain spelled two ways is one chain: it had been scored (and its row printed) twice
        (["evaluate", "--each-class", "--compare", IRIS, "l2 --", "l2 "], "given twice: 'l2 --' and 'l2'"),
        (
            ["evaluate", "--each-class", "--compare", IRIS, "discretize --bins 3", "discretize --bins=3 "],
            "given twice: 'discretize --bins 3' and 'discretize --bins=3'",
        ),
        (["evaluate", "--each-class", "--compare", IRIS, "minmax", "minmax --"], "given twice"),
    ],
)
def test_a_mistake_in_the_chain_words_of_evaluate_and_train_is_a_usage_error(
    run_filterkit, tmp_path, arguments, message
):
    # it was exit 1 ("filterkit: error: …") where the chain command gives 2 for the same words
    model = tmp_path / "m.json"
    result = run_filterkit(*[model if word == "{model}" else word for word in arguments])
    assert result.status == 2 and result.stdout == b"" and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("Error: ") and message in result.stderr, result.stderr
    assert not model.exists()


@pytest.mark.slow
def test_plot_without_matplotlib_says_how_to_install_it(run_filterkit, tmp_path):
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:
        result = run_filterkit(
            "evaluate", "-q", "--each-class", "--folds", "3", "--plot", tmp_path / "c.png", IRIS, "l2"
        )
        assert result.status == 1 and "pip install 'filterkit-arff[plot]'" in result.stderr
        assert not (tmp_path / "c.png").exists()
    else:
        result = run_filterkit(
            "evaluate",
            "-q",
            "--each-class",
            "--folds",
            "3",
            "--train-fraction",
            "0.5,1",
            "--plot",
            tmp_path / "c.png",
            IRIS,
            "l2",
        )
        assert result.status == 0 and (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_missing_classes_are_left_out_and_counted(run_filterkit, tmp_path):
    text = IRIS.read_text().splitlines()
    data_start = next(i for i, line in enumerate(text) if line.lower().startswith("@data")) + 1
    text[data_start] = text[data_start].rsplit(",", 1)[0] + ",?"
    path = tmp_path / "iris_missing.arff"
    path.write_text("\n".join(text) + "\n")
    result = run_filterkit("evaluate", "--each-class", "--folds", "3", "--json", "-q", path, "l2")
    assert "1 row(s) with a missing class are left out" in result.stderr
    document = json.loads(result.stdout)
    assert document["settings"]["rows"] == 149 and document["settings"]["rows_with_missing_class_left_out"] == 1


def test_a_class_too_small_for_the_folds_is_a_clear_error(run_filterkit, tmp_path):
    lines = ["@relation small", "@attribute x numeric", "@attribute class {p,q,e}", "@data"]
    lines += [f"{i},q" for i in range(59)] + ["100,p"]
    path = tmp_path / "small.arff"
    path.write_text("\n".join(lines) + "\n")
    result = run_filterkit("evaluate", "-q", "--folds", "5", "--positive", "p", path, "l2")
    assert result.status == 1 and "Traceback" not in result.stderr
    assert "task 'p': a training fold holds no row of class 'p'" in result.stderr
    # a class without a row is no matter of folds
    result = run_filterkit("evaluate", "-q", "--folds", "5", "--positive", "e", path, "l2")
    assert result.stderr == f"filterkit: error: {path}: the training file has no row of class 'e' to learn it from\n"


@pytest.mark.parametrize("task", [["--each-class"], ["--positive", "Iris-setosa"], ["--multiclass"]])
def test_more_folds_than_the_largest_class_has_rows_is_a_clear_error(run_filterkit, task):
    # Every class of iris has 50 rows: scikit-learn's stratified folds refused 60 with a traceback.  Weka
    # would run it, but most test folds would then lack each task's class (no AUC), so it is refused.
    result = run_filterkit("evaluate", "-q", "--folds", "60", *task, IRIS, "l2")
    assert result.status == 1 and result.stdout == b""
    assert result.stderr == (
        f"filterkit: error: {IRIS}: --folds 60 is more than the 50 rows of the largest class ('Iris-setosa'): "
        "stratified folds need a class with a row in every fold\n"
    )


@pytest.mark.parametrize(
    "arguments, message",
    [
        ([IRIS, "minmax l2"], "'minmax l2' is a whole chain in one argument: to compare chains give --compare"),
        ([IRIS, "minmax", "bns l2"], "'bns l2' is a whole chain in one argument: to compare chains give --compare"),
        (
            ["--compare", IRIS, "minmax", "bns", "l2"],
            "every chain is one unquoted word ('minmax', 'bns', 'l2'): quote each chain, as in "
            "--compare IN 'minmax bns l2'",
        ),
        (
            ["--each-class", "--positive", "Iris-setosa", IRIS, "l2"],
            "--positive Iris-setosa and --each-class both choose the tasks",
        ),
    ],
)
def test_chains_and_tasks_given_the_wrong_way_are_usage_errors_saying_the_fix(run_filterkit, arguments, message):
    result = run_filterkit("evaluate", "-q", *arguments)
    assert result.status == 2 and result.stdout == b""
    assert message in result.stderr and "Traceback" not in result.stderr


def test_the_library_refuses_a_positive_class_with_each_class():
    with pytest.raises(Exception, match="--positive b and --each-class both choose the tasks"):
        choose_tasks(("a", "b"), np.array([60, 60]), "b", None, True, 50)


def test_one_stage_chains_compare_when_one_holds_a_space(run_filterkit):
    arguments = ("--positive", "Iris-setosa", "--folds", "2", "--svm-c-values", "1", "--compare", IRIS)
    document = evaluate_json(run_filterkit, *arguments, "l2 ", "minmax")
    assert [r["chain"] for r in document["macro"]] == ["l2", "minmax"]


def _document(per_fold_auc: list, chain: str = "l2", task: str = "a") -> dict:
    """A one-chain, one-task evaluation document with the given per-fold AUCs (None: a one-class fold)."""
    defined = [v for v in per_fold_auc if v is not None]
    result = {"chain": chain, "task": task, "train_fraction": 1.0, "per_fold": {"auc": per_fold_auc}}
    result.update({m: 0.5 for m in ("accuracy", "f1", "precision", "recall", "specificity", "precision_at_20")})
    result["auc"] = float(np.mean(defined)) if defined else math.nan
    settings = {"folds": len(per_fold_auc), "seed": 1, "classifier": "svm", "rows": 40}
    return {**result, "settings": settings}


def test_a_mean_over_fewer_folds_than_run_is_marked_and_footnoted():
    from filterkit import reports

    lines = reports.table(_document([0.75, None, None, 0.25, 0.5])).splitlines()
    assert lines[2].split()[3] == "0.500*"
    assert lines[-1] == "  AUC of 'l2' (train 1): task a over 3 of 5 folds"
    assert lines[-3].startswith("* a mean over fewer folds than were run")
    whole = reports.table(_document([0.75, 0.25]))
    assert "*" not in whole and len(whole.splitlines()) == 3


def test_a_macro_average_notes_each_task_it_leaves_folds_of():
    from filterkit import reports

    one, other = _document([0.5, None], task="a"), _document([None, None], task="b")
    macro = {"chain": "l2", "train_fraction": 1.0, "tasks": 2, **{m: one[m] for m in LABELS_OF_TABLE}}
    document = {"settings": one["settings"], "results": [one, other], "macro": [macro]}
    text = reports.table(document)
    assert text.splitlines()[2].split()[3] == "0.500*"
    assert text.splitlines()[-1] == "  AUC of 'l2' (train 1): task a over 1 of 2 folds; task b over 0 of 2 folds"


LABELS_OF_TABLE = ("accuracy", "auc", "f1", "precision", "recall", "specificity", "precision_at_20")


def test_a_class_whose_multiclass_means_leave_out_folds_is_marked_and_footnoted():
    from filterkit import reports

    per_class = {
        "a": {"auc": 0.75, "f1": 0.5, "per_fold": {"auc": [0.75, None], "f1": [0.5, None]}},
        "b": {"auc": 0.5, "f1": 1.0, "per_fold": {"auc": [0.5, 0.5], "f1": [1.0, 1.0]}},
    }
    result = {"chain": "l2", "task": "(all classes)", "train_fraction": 1.0, "per_class": per_class}
    result.update({"accuracy": 0.9, "macro_auc": 0.6, "macro_f1": 0.7, "micro_f1": 0.9, "per_fold": {}})
    settings = {"folds": 2, "seed": 1, "classifier": "svm", "rows": 10, "multiclass": True}
    lines = reports.table({"settings": settings, "results": [result]}).splitlines()
    assert lines[5].split() == ["a", "0", "0.750*", "/", "0.500*"] and lines[6].split()[2] == "0.500"
    assert lines[-2:] == [
        "  AUC of 'l2' (train 1): class a over 1 of 2 folds",
        "  F1 of 'l2' (train 1): class a over 1 of 2 folds",
    ]


@pytest.mark.slow  # two evaluations
def test_a_chain_that_leaves_the_classifier_no_feature_is_refused_naming_it_and_its_output(run_filterkit, tmp_path):
    grain = REAL / "reuters_grain_sample.arff"
    result = run_filterkit("evaluate", grain, "l2")
    assert result.status == 1
    assert result.stderr == (
        "filterkit: error: the chain 'l2' leaves the classifier no numeric feature (its output: 1 string attribute "
        "and the class): the classifier reads numeric attributes and nominal ones (one-hot), not string or date "
        "ones: turn text into word vectors with words\n"
    )
    test = tmp_path / "test.arff"
    test.write_bytes(grain.read_bytes())
    held_out = run_filterkit("evaluate", "--test", test, grain, "remove", "--type", "string")
    assert held_out.status == 1
    assert "the chain 'remove --type string' leaves the classifier no numeric feature (its output: only the class)" in (
        held_out.stderr
    )
    assert (result.stdout, held_out.stdout) == (b"", b"")


def test_a_training_fraction_keeps_the_ceiling_of_its_decimal_share_of_each_class():
    """In floats 0.07 · 100 is 7.000000000000001: --train-fraction 0.07 kept 8 of a class's 100 rows, 0.28 kept 29."""
    codes = np.array([0] * 100 + [1] * 50 + [2] * 25)
    samples = nested_subsamples(np.arange(len(codes)), codes, (0.07, 0.14, 0.28, 1.0), seed=1)
    kept = {fraction: np.bincount(codes[rows]).tolist() for fraction, rows in samples.items()}
    assert kept == {0.07: [7, 4, 2], 0.14: [14, 7, 4], 0.28: [28, 14, 7], 1.0: [100, 50, 25]}


def test_two_training_fractions_that_round_alike_are_two_rows_of_the_table():
    """``%g`` wrote 0.1234561 and 0.1234562 both as 0.123456: two rows of a learning curve (and of --predictions)
    read as one fraction.  A fraction %g writes exactly keeps its short form (the bytes of every usual table)."""
    from filterkit.reports import fraction_text

    assert [fraction_text(f) for f in (0.1234561, 0.1234562)] == ["0.1234561", "0.1234562"]
    assert [fraction_text(f) for f in (1.0, 0.05, 0.2, 1e-05)] == ["1", "0.05", "0.2", "1e-05"]


@pytest.mark.slow
def test_a_learning_curve_of_fractions_that_round_alike_names_each(run_filterkit):
    document = evaluate_json(
        run_filterkit, "--each-class", "--folds", "3", "--train-fraction", "0.8888881,0.8888882", IRIS, "minmax"
    )
    assert sorted({r["train_fraction"] for r in document["results"]}) == [0.8888881, 0.8888882]
    table = run_filterkit(
        "evaluate", "-q", "--each-class", "--folds", "3", "--train-fraction", "0.8888881,0.8888882", IRIS, "minmax"
    )
    assert table.status == 0 and b"0.8888881" in table.stdout and b"0.8888882" in table.stdout
    # the fractions' text wider than the column had pushed their rows' measures right of the heads'
    head, *rows = table.stdout.decode().splitlines()[1:4]
    assert head.split()[:2] == ["chain", "train"] and [row.split()[1] for row in rows] == ["0.8888881", "0.8888882"]
    assert {len(head), *(len(row) for row in rows)} == {len(head)}


@pytest.mark.parametrize(
    "task, missing",
    [((), "Iris-virginica"), (("--positive", "Iris-virginica"), "Iris-virginica")],
    ids=["minority", "positive"],
)
def test_a_task_of_a_class_without_rows_is_refused_as_such(run_filterkit, tmp_path, task, missing):
    # the error blamed the folds ("a training fold holds no row …; too small for 3 folds"): the data has none
    text = (
        (REAL / "iris.arff")
        .read_text()
        .replace("{Iris-setosa,Iris-versicolor,Iris-virginica}", "{Iris-versicolor,Iris-virginica}")
    )
    path = tmp_path / "versicolor.arff"
    path.write_text(
        "\n".join(line for line in text.splitlines() if "setosa" not in line and not line.endswith(",Iris-virginica"))
    )
    result = run_filterkit("evaluate", "--folds", "3", *task, path, "minmax")
    assert result.status == 1 and result.stderr == (
        f"filterkit: error: {path}: the training file has no row of class '{missing}' to learn it from\n"
    )
    only = run_filterkit("evaluate", "--folds", "3", "--positive", "Iris-versicolor", path, "minmax")
    assert only.status == 1 and "has only rows of class 'Iris-versicolor': nothing to tell it from" in only.stderr
