"""The SVM's C search made cheaper (issue 75): the inner F1 counted with numpy is scikit-learn's ``f1_score``, and
``train`` and ``evaluate`` of the full search write what filterkit 0.4.0.dev0 (commit e6c44fc, before the search was
reworked) wrote, with one process or two; the early search scores a C by fits stopped where LinearSVC stops them."""

from __future__ import annotations

import base64
import hashlib
import json

import numpy as np
import pytest
from sklearn.metrics import f1_score

from chain_helpers import REAL
from filterkit.measures import f1_scores

IRIS = REAL / "iris.arff"
#: sha256 of the stages and classifier sections of the model, and of evaluate's JSON without its input's path,
#: written by commit e6c44fc (before issue 75) for the commands of the tests below, on an Intel host.
IRIS_MODEL_DIGEST = "7883ee486d80602ca26538a99b991f41b9747d9d3461465a0dcec041c96724a8"
#: The same sections as an AMD host writes them: their floats differ from the Intel host's in the last digits
#: (``exp``; another AMD host with numpy 2.4.6 differs from both in one sigmoid's last bit), so where the digest
#: differs the model must match this to a relative 1e-9, its arrays' floats too.
IRIS_MODEL = REAL.parent / "models" / "iris-train-full-search.json"
IRIS_EVALUATION_DIGEST = "fb0c4990ac5fd690a0c9de6820b034cb57b359bbb4c65e608f6040a73bba5b9d"


def digest(document) -> str:
    return hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()


def assert_close(written, expected, path="") -> None:
    """``written`` has ``expected``'s structure and non-float values exactly, its floats (those of the model's
    arrays too) to a relative 1e-9."""
    if isinstance(expected, dict) and "base64" in expected and expected.get("dtype", "").startswith("<f"):
        assert sorted(written) == sorted(expected), path
        assert written["shape"] == expected["shape"] and written["dtype"] == expected["dtype"], path
        values, wanted = (
            np.frombuffer(base64.b64decode(array["base64"]), array["dtype"]) for array in (written, expected)
        )
        np.testing.assert_allclose(values, wanted, rtol=1e-9, atol=1e-300, err_msg=path)
    elif isinstance(expected, dict):
        assert sorted(written) == sorted(expected), path
        for key in expected:
            assert_close(written[key], expected[key], f"{path}/{key}")
    elif isinstance(expected, list):
        assert len(written) == len(expected), path
        for k, (value, wanted) in enumerate(zip(written, expected)):
            assert_close(value, wanted, f"{path}[{k}]")
    elif isinstance(expected, float):
        assert written == pytest.approx(expected, rel=1e-9, abs=1e-300), path
    else:
        assert written == expected, path


@pytest.mark.parametrize("seed", range(20))
def test_the_numpy_f1_is_scikit_learns_to_the_bit(seed):
    generator = np.random.default_rng(seed)
    rows, classes = int(generator.integers(1, 40)), int(generator.integers(2, 6))
    truth = generator.integers(0, classes, rows)
    decided = generator.integers(0, classes - 1, rows)  # the last class is never decided: its F1 may divide 0 by 0
    labels = list(range(classes + 1))  # and one label has no row at all
    per_label = f1_score(truth, decided, labels=labels, average=None, zero_division=0.0)
    assert f1_scores(truth, decided, labels) == list(per_label)
    expected = f1_score(truth, decided, labels=labels, average="macro", zero_division=0.0)
    assert float(np.mean(f1_scores(truth, decided, labels))) == expected
    binary_truth, binary_decided = truth == 0, decided == 0
    assert f1_scores(binary_truth, binary_decided, [True])[0] == f1_score(binary_truth, binary_decided, zero_division=0)


def test_the_f1_of_no_positive_row_nor_decision_is_zero():
    nothing = np.zeros(5, dtype=bool)
    assert f1_scores(nothing, nothing, [True]) == [0.0] == [f1_score(nothing, nothing, zero_division=0.0)]
    assert f1_scores(np.array([1, 1, 0]), np.array([1, 0, 0]), [0, 1]) == [2 / 3, 2 / 3]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_train_writes_the_model_it_wrote_before_the_search_was_reworked(run_filterkit, tmp_path, jobs):
    model = tmp_path / "model.json"
    argv = ("train", "-q", "--jobs", jobs, "-o", model, "--search", "nested", "--multiclass", "--compare")
    argv += ("--svm-c-search", "full")
    argv += (IRIS, "minmax", "minmax l2")
    result = run_filterkit(*argv)
    assert result.status == 0, result.stderr
    written = json.loads(model.read_text())
    assert written["classifier"]["fitted"]["C"] == 10.0
    sections = {"stages": written["stages"], "classifier": written["classifier"]}
    if digest(sections) != IRIS_MODEL_DIGEST:
        assert_close(sections, json.loads(IRIS_MODEL.read_text()))


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_evaluate_prints_the_json_it_printed_before_the_search_was_reworked(run_filterkit, jobs):
    argv = ("evaluate", "--json", "--jobs", jobs, "--multiclass", "--folds", "3", "--svm-c-by", "f1")
    result = run_filterkit(*argv, "--compare", IRIS, "minmax", "minmax l2")
    assert result.status == 0, result.stderr
    document = json.loads(result.stdout)
    document["settings"].pop("input")
    assert digest(document) == IRIS_EVALUATION_DIGEST


OH0 = REAL / "oh0.wc.arff"


def fitted(run_filterkit, tmp_path, *argv) -> dict:
    model = tmp_path / "model.json"
    result = run_filterkit("train", "-q", "--jobs", "1", "-o", model, *argv)
    assert result.status == 0, result.stderr
    return json.loads(model.read_text())["classifier"]


@pytest.mark.parametrize(
    "c_by, chosen, scored",
    [
        ("f1", 1.0, [0.01, 0.1, 1.0, 10.0]),  # inner F1 .881 .896 .909 .905 (.909 at 100: the smaller C wins a tie)
        ("auc", 0.1, [0.01, 0.1, 1.0]),  # inner AUC .9906 .9942 .9924 .9890 .9882
    ],
)
def test_an_early_search_where_the_scores_rise_to_one_peak_picks_the_c_and_weights_of_the_full_one(
    run_filterkit, tmp_path, c_by, chosen, scored
):
    argv = ("--positive", "Ethics", "--svm-c-by", c_by, OH0, "l2")
    full = fitted(run_filterkit, tmp_path, "--svm-c-search", "full", *argv)
    early = fitted(run_filterkit, tmp_path, *argv)  # train's default
    assert full["fitted"]["C"] == early["fitted"]["C"] == chosen
    assert early["fitted"]["C_scored"] == scored and "C_scored" not in full["fitted"]
    assert list(early["fitted"]["inner_auc"]) == [str(C) for C in scored]
    assert early["state"] == full["state"]
    assert early["params"]["c_search"] == "early" and "c_search" not in full["params"]


def test_an_early_search_stops_at_a_dip_that_the_full_search_climbs_out_of(run_filterkit, tmp_path):
    # iris's inner macro-F1 by C: .947 at 0.01, .933 at 0.1, then .953, .960 and .960: the full search picks 10
    argv = ("--multiclass", IRIS, "minmax")
    full, early = (
        fitted(run_filterkit, tmp_path, "--svm-c-search", "full", *argv),
        fitted(run_filterkit, tmp_path, *argv),  # train's default
    )
    assert (full["fitted"]["C"], early["fitted"]["C"]) == (10.0, 0.01)
    assert early["fitted"]["C_scored"] == [0.01, 0.1]
    assert early["fitted"]["inner_macro_f1"] == {C: full["fitted"]["inner_macro_f1"][C] for C in ("0.01", "0.1")}


def test_an_early_search_walks_the_grid_from_its_smallest_c_whatever_its_order(run_filterkit, tmp_path):
    argv = ("--positive", "Ethics", "--svm-c-by", "auc", "--svm-c-search", "early", OH0, "l2")
    shuffled = fitted(run_filterkit, tmp_path, "--svm-c-values", "10,0.01,1,100,0.1", *argv)
    assert shuffled["fitted"]["C_scored"] == [0.01, 0.1, 1.0] and shuffled["fitted"]["C"] == 0.1


def test_evaluate_searches_c_early_when_told(run_filterkit):
    argv = ("evaluate", "--json", "--jobs", "1", "--multiclass", "--folds", "3", "--svm-c-search", "early")
    result = run_filterkit(*argv, IRIS, "minmax")
    assert result.status == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["settings"]["classifier_params"] == {"c_search": "early"}
    grid = [0.01, 0.1, 1.0, 10.0, 100.0]
    for fold in document["results"][0]["classifier"]:
        scored, scores = fold["C_scored"], list(fold["inner_macro_auc"].values())
        assert scored == grid[: len(scored)] and len(scores) == len(scored)
        stopped = len(scored) < len(grid)
        climbed = scores[:-1] if stopped else scores
        assert all(later > earlier for earlier, later in zip(climbed, climbed[1:])), fold
        assert not stopped or scores[-1] <= climbed[-1], fold
        assert fold["C"] == scored[scores.index(max(scores))]
    assert [len(fold["C_scored"]) for fold in document["results"][0]["classifier"]] == [4, 5, 2]


def conflicting_rows(seed: int = 0, rows: int = 200, columns: int = 12):
    """Rows of a few columns each, a quarter of the classes flipped: no line separates them, so liblinear's dual
    solver at C = 100 takes 7,000 to 15,000 iterations (more columns than rows: LinearSVC picks the dual)."""
    import scipy.sparse as sp

    generator = np.random.default_rng(seed)
    positions, values = generator.integers(0, columns, size=(rows, 3)), generator.random((rows, 3))
    features = sp.csr_matrix(
        (values.ravel(), positions.ravel(), np.arange(0, 3 * rows + 1, 3)), shape=(rows, rows + 50)
    )
    features.sum_duplicates()
    return features, ((positions[:, 0] < columns // 2) ^ (generator.random(rows) < 0.25)).astype(np.int64)


def out_of_fold_values(features, targets, C: float, iterations: int) -> tuple[np.ndarray, list]:
    """The out-of-fold decision values of LinearSVC at ``C`` stopped at ``iterations`` on the svm's two inner
    folds (seed 1), and the folds' test rows."""
    import warnings

    from sklearn.model_selection import StratifiedKFold
    from sklearn.svm import LinearSVC

    held_out, tests = np.zeros(len(targets)), []
    folds = StratifiedKFold(2, shuffle=True, random_state=1).split(np.zeros(len(targets)), targets)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for train, test in folds:
            model = LinearSVC(C=C, dual="auto", random_state=1, max_iter=iterations).fit(
                features[train], targets[train]
            )
            held_out[test] = model.decision_function(features[test])
            tests.append(test)
    return held_out, tests


def converged_weights(features, targets, C: float) -> np.ndarray:
    import warnings

    from sklearn.svm import LinearSVC

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return LinearSVC(C=C, dual="auto", random_state=1, max_iter=20_000).fit(features, targets).coef_[0]


def test_an_early_search_scores_a_c_by_stopped_fits_and_calibrates_the_model_on_converged_ones():
    from filterkit.measures import area_under_roc
    from filterkit.thresholds import platt_sigmoid
    from filterkit_plugins.classifiers import LinearSVM

    features, targets = conflicting_rows()
    svm = LinearSVM(c_values="10,100", inner_folds=2, c_search="early").fit(features, targets, seed=1)
    stopped, tests = out_of_fold_values(features, targets, 100, 1_000)
    converged, _ = out_of_fold_values(features, targets, 100, 20_000)
    stopped_auc = float(np.mean([area_under_roc(targets[test] == 1, stopped[test]) for test in tests]))
    converged_auc = float(np.mean([area_under_roc(targets[test] == 1, converged[test]) for test in tests]))
    assert svm.inner_auc[100.0] == stopped_auc != converged_auc  # the C scored by fits stopped at 1,000
    assert svm.chosen_C == 100.0 and svm.describe()["C_scored_by_stopped_fits"] == [100.0]
    assert tuple(svm.sigmoids[0]) == platt_sigmoid(converged, targets == 1) != platt_sigmoid(stopped, targets == 1)
    assert np.array_equal(svm.weights[0], converged_weights(features, targets, 100))


def test_one_c_is_no_search_so_early_fits_as_full_does():
    from filterkit_plugins.classifiers import LinearSVM

    features, targets = conflicting_rows()
    early = LinearSVM(c_values="100", inner_folds=2, c_search="early").fit(features, targets, seed=1)
    full = LinearSVM(c_values="100", inner_folds=2).fit(features, targets, seed=1)
    assert np.array_equal(early.sigmoids, full.sigmoids) and np.array_equal(early.weights, full.weights)
    assert early.inner_auc == full.inner_auc and "C_scored_by_stopped_fits" not in early.describe()


@pytest.mark.parametrize("cut", [{"threshold": "f1"}, {"decision": "margin", "threshold": "fbr"}])
def test_where_the_early_search_picks_a_c_its_model_and_cut_are_the_full_searchs_at_that_c(cut):
    from filterkit_plugins.classifiers import LinearSVM

    features, targets = conflicting_rows()
    early = LinearSVM(c_values="10,100", inner_folds=2, c_search="early", **cut).fit(features, targets, seed=1)
    at_that_c = LinearSVM(c_values="100", inner_folds=2, **cut).fit(features, targets, seed=1)
    assert early.chosen_C == 100.0 and early.stopped_C == (100.0,)
    assert np.array_equal(early.thresholds, at_that_c.thresholds) and early.threshold_f1 == at_that_c.threshold_f1
    assert np.array_equal(early.weights, at_that_c.weights)


def test_on_k_classes_only_the_stopped_inner_fits_are_made_again_and_the_model_is_the_one_c_search_s(monkeypatch):
    """A separable class beside two conflicting ones: at the chosen C its inner fits converge within 1,000
    iterations and are kept, the others are fitted again; the sigmoids and weights are those of a search of that
    C alone, whose every inner fit runs to convergence."""
    import scipy.sparse as sp
    from sklearn.svm import LinearSVC

    from filterkit_plugins.classifiers import LinearSVM

    conflicting, targets = conflicting_rows()
    width = conflicting.shape[1]
    own = sp.csr_matrix((np.ones(60), (np.arange(60), np.full(60, width - 1))), shape=(60, width))
    features, classes = sp.vstack([conflicting, own]).tocsr(), np.concatenate([targets, np.full(60, 2)])
    made = []
    fit = LinearSVC.fit
    monkeypatch.setattr(LinearSVC, "fit", lambda model, *data: made.append(model.max_iter) or fit(model, *data))
    early = LinearSVM(c_values="10,20", inner_folds=2, c_search="early", c_by="f1").fit_multiclass(
        features, classes, 3, 1
    )
    inner_fits_again = made.count(20_000) - 3  # beside the final fit's three
    at_that_c = LinearSVM(c_values="20", inner_folds=2, c_by="f1").fit_multiclass(features, classes, 3, 1)
    assert early.chosen_C == 20.0 and early.stopped_C == (20.0,)
    assert 0 < inner_fits_again < 2 * 3  # some of the 2 folds × 3 classes stopped, not all
    assert np.array_equal(early.sigmoids, at_that_c.sigmoids) and np.array_equal(early.weights, at_that_c.weights)
