"""``filterkit evaluate --multiclass`` (issue 22): one task of all classes, the chain fitted
without a positive class, a multi-class classifier, accuracy, macro/micro F1 and each
class's one-vs-rest AUC and F1 on the folds of ``--each-class``."""

from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest
from scipy.stats import wilcoxon
from sklearn.metrics import accuracy_score, f1_score, roc_auc_score

from chain_helpers import OH0_SAMPLE, REAL
from filterkit.evaluation import MULTICLASS_TASK
from filterkit.measures import multiclass_measures
from filterkit.plugins import load_plugins
from filterkit.runner import Chain
from filterkit.schema import concatenate, take_rows
from filterkit.sources import FileSource, MemorySource
from filterkit_plugins.classifiers import LinearSVM

IRIS = REAL / "iris.arff"


def evaluate_json(run_filterkit, *arguments, plugins_dir=None) -> dict:
    result = run_filterkit("evaluate", "-q", "--json", "--multiclass", *arguments, plugins_dir=plugins_dir)
    assert result.status == 0, result.stderr
    return json.loads(result.stdout)


def separable_file(tmp_path, per_class=9):
    """Three classes, each with its own word: class k's rows hold a count of word k only."""
    rng = np.random.default_rng(3)
    lines = ["@relation three", "@attribute w0 numeric", "@attribute w1 numeric", "@attribute w2 numeric"]
    lines += ["@attribute class {a,b,c}", "@data"]
    for k, label in enumerate("abc"):
        for count in rng.integers(1, 4, per_class):
            values = [0, 0, 0]
            values[k] = int(count)
            lines.append(",".join(map(str, values)) + f",{label}")
    path = tmp_path / "three.arff"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("chain", ["", "binarize l2"])
def test_a_separable_three_class_set_is_classified_without_error(run_filterkit, tmp_path, chain):
    document = evaluate_json(
        run_filterkit, "--folds", "3", "--svm-c-values", "1", "--compare", separable_file(tmp_path), chain
    )
    (result,) = document["results"]
    assert result["task"] == MULTICLASS_TASK
    assert result["accuracy"] == result["macro_auc"] == result["macro_f1"] == result["micro_f1"] == 1.0
    assert result["per_class"].keys() == {"a", "b", "c"}
    assert all(values["auc"] == values["f1"] == 1.0 for values in result["per_class"].values())
    assert document["settings"]["multiclass"] is True


@pytest.mark.slow
def test_each_class_auc_and_f1_are_sklearns_on_the_same_decision_values(run_filterkit):
    grid = ("--svm-c-values", "0.1,10", "--svm-inner-folds", "3", "--svm-decision", "margin")
    document = evaluate_json(run_filterkit, "--folds", "3", *grid, "--compare", IRIS, "l2")
    (result,) = document["results"]
    fold_of_row = np.array(document["settings"]["fold_of_row"])
    schema = FileSource(str(IRIS)).schema
    data = concatenate(list(FileSource(str(IRIS)).chunks()), len(schema), schema.text_columns())
    classes = np.asarray(data.values[:, -1], dtype=np.int64)
    registry = load_plugins()
    for fold in range(3):
        train, test = np.flatnonzero(fold_of_row != fold), np.flatnonzero(fold_of_row == fold)
        chain = Chain([registry.make_stage("l2", {})], class_spec="last").fit(
            MemorySource(schema, take_rows(data, train))
        )
        train_rows, test_rows = (
            next(iter(chain.transform([take_rows(data, rows)]))).values[:, :4] for rows in (train, test)
        )
        classifier = LinearSVM(c_values="0.1,10", inner_folds=3, decision="margin").fit_multiclass(
            train_rows, classes[train], 3, 1
        )
        decisions = classifier.class_scores(test_rows)
        predicted = np.argmax(decisions, axis=1)
        truth = classes[test]
        for k, label in enumerate(schema.attributes[-1].labels):
            per_fold = result["per_class"][label]["per_fold"]
            assert per_fold["auc"][fold] == pytest.approx(roc_auc_score(truth == k, decisions[:, k]), abs=1e-12)
            assert per_fold["f1"][fold] == pytest.approx(f1_score(truth == k, predicted == k), abs=1e-12)
        assert result["per_fold"]["accuracy"][fold] == pytest.approx(accuracy_score(truth, predicted), abs=1e-12)
        assert result["per_fold"]["macro_f1"][fold] == pytest.approx(f1_score(truth, predicted, average="macro"))
        assert result["per_fold"]["micro_f1"][fold] == pytest.approx(f1_score(truth, predicted, average="micro"))
    assert result["accuracy"] < 1.0  # versicolor and virginica overlap: the values are not a trivial 1


def test_multiclass_measures_agree_with_sklearn_on_random_scores():
    rng = np.random.default_rng(7)
    truth = rng.integers(0, 4, 80)
    scores = rng.normal(size=(80, 4)) + np.eye(4)[truth] * 0.8
    predicted = rng.integers(0, 4, 80)
    measured = multiclass_measures(truth, scores, predicted, ["p", "q", "r", "s"])
    aucs = np.array([roc_auc_score(truth == k, scores[:, k]) for k in range(4)])
    np.testing.assert_allclose([measured["per_class"][c]["auc"] for c in "pqrs"], aucs, rtol=1e-12)
    np.testing.assert_allclose(
        [measured["per_class"][c]["f1"] for c in "pqrs"], f1_score(truth, predicted, average=None), rtol=1e-12
    )
    assert measured["macro_auc"] == pytest.approx(aucs.mean(), rel=1e-12)
    assert measured["macro_f1"] == pytest.approx(f1_score(truth, predicted, average="macro"), rel=1e-12)
    assert measured["micro_f1"] == pytest.approx(f1_score(truth, predicted, average="micro"), rel=1e-12)
    assert measured["accuracy"] == pytest.approx(accuracy_score(truth, predicted), rel=1e-12)


def test_a_class_neither_in_the_fold_nor_predicted_is_left_out_of_the_macro_f1_as_sklearn_does():
    truth = np.array([0, 0, 1, 1, 0, 1])  # class 'r' (2) has no row in this test fold
    predicted = np.array([0, 1, 1, 1, 0, 0])  # and is never predicted
    scores = np.random.default_rng(3).normal(size=(6, 3))
    measured = multiclass_measures(truth, scores, predicted, ["p", "q", "r"])
    assert np.isnan(measured["per_class"]["r"]["f1"]) and np.isnan(measured["per_class"]["r"]["auc"])
    assert measured["macro_f1"] == pytest.approx(f1_score(truth, predicted, average="macro"), rel=1e-12)
    assert measured["macro_f1"] == pytest.approx((2 / 3 + 2 / 3) / 2, rel=1e-12)
    named = multiclass_measures(truth, scores, np.array([0, 1, 1, 2, 0, 0]), ["p", "q", "r"])
    assert named["per_class"]["r"]["f1"] == 0.0  # predicted but absent: a real 0 that counts


@pytest.mark.slow
def test_chains_are_fitted_with_the_k_labels_and_no_positive(run_filterkit):
    fast = ("--folds", "2", "--svm-c-values", "1", "--svm-inner-folds", "2")
    document = evaluate_json(
        run_filterkit, *fast, "--compare", REAL / "oh0.wc.arff", "binarize l2", "ig --combine joint select --top 5 l2"
    )
    binary, selected = document["results"]
    assert selected["features"] == [5, 5]  # joint IG over the 10 classes, no --positive needed
    assert min(binary["features"]) > 2000
    assert len(binary["per_class"]) == 10
    assert 0.8 < binary["macro_auc"] <= 1 and 0.5 < binary["accuracy"] <= 1


def test_a_class_too_small_for_the_folds_is_a_clear_error(run_filterkit):
    result = run_filterkit("evaluate", "-q", "--multiclass", "--folds", "3", OH0_SAMPLE, "binarize", "l2")
    assert result.status == 1 and result.stdout == b"" and "Traceback" not in result.stderr
    assert "a training fold holds no row of class" in result.stderr and "too small for 3 folds" in result.stderr


@pytest.mark.slow
def test_the_folds_are_those_of_each_class(run_filterkit):
    fast = ("--folds", "4", "--svm-c-values", "1")
    multiclass = evaluate_json(run_filterkit, *fast, IRIS, "l2")
    each_class = run_filterkit("evaluate", "-q", "--json", *fast, "--each-class", IRIS, "l2")
    assert multiclass["settings"]["fold_of_row"] == json.loads(each_class.stdout)["settings"]["fold_of_row"]


@pytest.mark.slow
def test_stats_compare_each_class_by_wilcoxon_over_classes(run_filterkit):
    document = evaluate_json(
        run_filterkit, "--folds", "3", "--svm-c-values", "1", "--stats", "--compare", IRIS, "minmax", "bns l2"
    )
    (paired,) = document["paired"]
    first, second = document["results"]
    labels = list(first["per_class"])
    aucs = [[result["per_class"][label]["auc"] for label in labels] for result in (second, first)]
    over_classes = paired["per_class"]["auc"]["over_classes"]
    differences = np.subtract(*aucs)
    assert over_classes["wins"] == int(np.sum(differences > 0)) and over_classes["losses"] == int(
        np.sum(differences < 0)
    )
    if np.any(differences):
        assert over_classes["wilcoxon_p"] == pytest.approx(wilcoxon(aucs[0], aucs[1]).pvalue)
    accuracy = paired["measures"]["accuracy"]
    assert accuracy["difference"] == pytest.approx(second["accuracy"] - first["accuracy"])
    assert set(accuracy["over_folds"]) >= {"wins", "ties", "losses", "corrected_t"}


@pytest.mark.slow
def test_repeats_sweep_and_train_fraction_work(run_filterkit):
    document = evaluate_json(
        run_filterkit,
        "--folds",
        "3",
        "--svm-c-values",
        "1",
        "--repeats",
        "2",
        "--train-fraction",
        "0.5,1",
        "--sweep",
        "select.top=1,4",
        IRIS,
        "select",
        "--metric",
        "ig",
    )
    results = document["results"]
    assert [(r["sweep"]["select.top"], r["train_fraction"]) for r in results] == [(1, 0.5), (1, 1), (4, 0.5), (4, 1)]
    for result in results:
        assert len(result["per_fold"]["accuracy"]) == 6
        spread = result["repeats"]["accuracy"]
        assert spread["mean"] == pytest.approx(np.mean(spread["per_repeat"]))
    assert results[3]["features"] == [4] * 6 and results[1]["features"] == [1] * 6


@pytest.mark.slow
def test_the_table_shows_each_class_under_each_chain(run_filterkit):
    result = run_filterkit(
        "evaluate", "-q", "--multiclass", "--folds", "3", "--svm-c-values", "1", "--compare", IRIS, "l2 ", "minmax"
    )
    assert result.status == 0, result.stderr
    lines = result.stdout.decode().splitlines()
    assert "multi-class: 3 classes at once" in lines[0]
    assert lines[1].split() == ["chain", "train", "acc", "macroAUC", "macroF1", "microF1"]
    setosa = next(line for line in lines if line.startswith("Iris-setosa"))
    assert setosa.split()[1] == "50" and setosa.count("/") == 2


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (("--classifier", "aisvm"), "classifier 'aisvm' is binary and cannot learn k classes at once"),
        (("--positive", "Iris-setosa"), "--multiclass cannot be combined with --positive"),
        (("--each-class", "--min-positives", "3"), "cannot be combined with --each-class, --min-positives"),
        (("--per-task",), "cannot be combined with --per-task"),
        (("--report", "r.html"), "cannot be combined with --report"),
    ],
)
def test_what_multiclass_cannot_do_is_refused(run_filterkit, tmp_path, monkeypatch, options, message):
    monkeypatch.chdir(tmp_path)
    result = run_filterkit("evaluate", "-q", "--multiclass", *options, IRIS, "l2")
    # options that cannot go together: a usage error, as click's own option checks are
    assert result.status == 2 and result.stdout == b""
    assert result.stderr.startswith("Usage: filterkit evaluate") and "\nError: " in result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "r.html").exists()


PLUGIN = '''
import numpy as np

from filterkit.classifier import Classifier
from filterkit.hookspecs import hookimpl


class OldBinary(Classifier):
    """A classifier written before the multi-class contract: binary only."""

    name = "oldbinary"

    def fit(self, features, targets, seed):
        self.mean = float(np.mean(targets))
        return self

    def score(self, features):
        return np.full(features.shape[0], self.mean)

    def predict(self, features):
        return np.full(features.shape[0], self.mean >= 0.5)


class Centroid(Classifier):
    """Nearest class centroid; the score of a class is minus the squared distance to its centroid."""

    name = "centroid"
    multiclass = True

    def fit_multiclass(self, features, classes, n_classes, seed):
        dense = features.toarray()
        self.centroids = np.array([dense[classes == k].mean(axis=0) for k in range(n_classes)])
        return self

    def class_scores(self, features):
        dense = features.toarray()
        return -((dense[:, None, :] - self.centroids[None, :, :]) ** 2).sum(axis=2)

    def predict_class(self, features):
        return np.argmax(self.class_scores(features), axis=1)


class WrongShape(Centroid):
    """Scores one class only."""

    name = "wrongshape"

    def class_scores(self, features):
        return super().class_scores(features)[:, :1]


@hookimpl
def register_classifiers(register):
    register(OldBinary)
    register(Centroid)
    register(WrongShape)
'''


@pytest.fixture
def classifier_plugins(tmp_path):
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "multiclass_fixture.py").write_text(textwrap.dedent(PLUGIN))
    return folder


def test_a_third_party_binary_classifier_still_works_and_is_refused_by_name(run_filterkit, classifier_plugins):
    binary = run_filterkit(
        "evaluate",
        "-q",
        "--json",
        "--classifier",
        "oldbinary",
        "--positive",
        "Iris-setosa",
        IRIS,
        "l2",
        plugins_dir=classifier_plugins,
    )
    assert binary.status == 0, binary.stderr
    assert json.loads(binary.stdout)["auc"] == 0.5
    refused = run_filterkit(
        "evaluate", "-q", "--multiclass", "--classifier", "oldbinary", IRIS, "l2", plugins_dir=classifier_plugins
    )
    assert refused.status == 2 and "Error: classifier 'oldbinary' is binary" in refused.stderr


def test_a_third_party_multiclass_classifier_is_evaluated(run_filterkit, tmp_path, classifier_plugins):
    document = evaluate_json(
        run_filterkit,
        "--folds",
        "3",
        "--classifier",
        "centroid",
        "--compare",
        separable_file(tmp_path),
        "",
        plugins_dir=classifier_plugins,
    )
    (result,) = document["results"]
    assert result["accuracy"] == result["macro_auc"] == 1.0


def test_a_classifier_breaking_the_multiclass_contract_is_named(run_filterkit, tmp_path, classifier_plugins):
    result = run_filterkit(
        "evaluate",
        "-q",
        "--multiclass",
        "--folds",
        "3",
        "--classifier",
        "wrongshape",
        "--compare",
        separable_file(tmp_path),
        "",
        plugins_dir=classifier_plugins,
    )
    assert result.status == 1 and "Traceback" not in result.stderr
    assert "'wrongshape'" in result.stderr and "broke the classifier contract: class_scores returned" in result.stderr
