"""The papers' classifier settings of ``filterkit evaluate`` (issue 21, item 1): the SVM's loss, a free
intercept, the decision rule, class weights, and the two readings of aiSVM's Algorithm 1."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp

from chain_helpers import REAL
from filterkit_plugins.classifiers import AdaptiveSVM, LinearSVM, adaptive_c, platt_sigmoid

IRIS = REAL / "iris.arff"

# Two columns: x₁ separates the classes at 1; x₂ is the constant 10, which a penalized offset b borrows.
SEPARABLE = sp.csr_matrix(np.array([[0.0, 10.0]] * 3 + [[2.0, 10.0]] * 3))
SEPARABLE_TARGETS = np.array([0, 0, 0, 1, 1, 1])


def fitted_svm(features=SEPARABLE, targets=SEPARABLE_TARGETS, **params) -> LinearSVM:
    return LinearSVM(**params).fit(features, targets, 1)


def margins(svm: LinearSVM, features) -> np.ndarray:
    """The fitted SVM's decision values w·x + b (its linear form, which train saves)."""
    weights, intercepts = svm.linear()
    return np.asarray(features @ weights[0]).ravel() + intercepts[0]


def weights_and_offset(svm: LinearSVM) -> tuple[np.ndarray, float]:
    """(w, b) read back from the fitted SVM's decision values at 0, e₁ and e₂."""
    probes = sp.csr_matrix(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]))
    at_zero, at_first, at_second = margins(svm, probes)
    return np.array([at_first - at_zero, at_second - at_zero]), float(at_zero)


def test_free_intercept_of_the_hinge_svm_is_the_hard_margin_one_checked_by_hand():
    # Hard margin (C large): the margins x₁ = 0 and x₁ = 2 give w = (1, 0), b = −1 exactly.
    svm = fitted_svm(c_values="1000", loss="hinge", intercept="free")
    weights, offset = weights_and_offset(svm)
    assert weights == pytest.approx([1.0, 0.0], abs=1e-6)
    assert offset == pytest.approx(-1.0, abs=1e-6)
    assert svm.describe()["b"] == pytest.approx(-1.0, abs=1e-6)


def test_free_intercept_of_the_squared_hinge_svm_checked_by_hand():
    # By symmetry w = (v, 0) and b = −v; ½v² + C·6·(1 − v)² is least at v = 12C / (1 + 12C): 12/13 at C = 1.
    weights, offset = weights_and_offset(fitted_svm(c_values="1", intercept="free"))
    assert weights == pytest.approx([12 / 13, 0.0], abs=1e-6)
    assert offset == pytest.approx(-12 / 13, abs=1e-6)


def test_regularized_intercept_is_liblinears_which_borrows_b_from_the_constant_column():
    # Penalizing b as a weight: min v² + w₂² + b² with 10·w₂ + b = −1 gives b = −1/101, w₂ = −10/101.
    weights, offset = weights_and_offset(fitted_svm(c_values="1000", loss="hinge"))
    assert offset == pytest.approx(-1 / 101, abs=2e-3)
    assert weights[1] == pytest.approx(-10 / 101, abs=2e-3)


def iris_task():
    from sklearn.datasets import load_iris

    features, labels = load_iris(return_X_y=True)
    return sp.csr_matrix(features), (labels == 1).astype(np.int64)


def test_margin_decision_is_the_sign_of_liblinears_decision_function():
    from sklearn.svm import LinearSVC

    features, targets = iris_task()
    svm = fitted_svm(features, targets, decision="margin")
    reference = LinearSVC(C=svm.chosen_C, random_state=1, max_iter=20000).fit(features, targets)
    assert np.array_equal(svm.predict(features), reference.decision_function(features) > 0)
    assert np.allclose(svm.score(features), reference.decision_function(features))
    # Iris' versicolor is not linearly separable: the margin and Platt's 0.5 disagree on some rows.
    assert not np.array_equal(svm.predict(features), fitted_svm(features, targets).predict(features))


def test_platt_on_the_training_rows_fits_the_sigmoid_to_the_final_svms_own_decision_values():
    features, targets = iris_task()
    svm = fitted_svm(features, targets, decision="platt")
    slope, offset = platt_sigmoid(margins(svm, features), targets)
    assert tuple(svm.sigmoids[0]) == (slope, offset)
    expected = 1 / (1 + np.exp(slope * margins(svm, features) + offset))
    assert np.allclose(svm.score(features), expected)
    assert not np.array_equal(svm.sigmoids, fitted_svm(features, targets).sigmoids)  # not the inner-CV sigmoid


def test_hinge_loss_and_balanced_weights_are_liblinears():
    from sklearn.svm import LinearSVC

    features, targets = iris_task()
    svm = fitted_svm(features, targets, c_values="1", loss="hinge", class_weight="balanced", decision="margin")
    reference = LinearSVC(C=1, loss="hinge", class_weight="balanced", random_state=1, max_iter=20000)
    reference.fit(features, targets)
    assert np.allclose(svm.score(features), reference.decision_function(features))
    unweighted = fitted_svm(features, targets, c_values="1", loss="hinge", decision="margin")
    assert svm.predict(features).sum() > unweighted.predict(features).sum()  # the minority costs twice as much


def test_balanced_weights_with_a_free_intercept_double_the_minoritys_cost():
    # Positives 1 of 3 rows: weights 3/2 (positive) and 3/4 (negatives) times C.
    features = sp.csr_matrix(np.array([[0.0], [0.0], [2.0]]))
    targets = np.array([0, 0, 1])
    # w = v, b = −v by symmetry; ½v² + C·(2·¾ + 1·3/2)·(1 − v)² = ½v² + 3C(1 − v)² is least at v = 6C / (1 + 6C).
    svm = fitted_svm(features, targets, c_values="1", intercept="free", class_weight="balanced")
    assert margins(svm, sp.csr_matrix([[0.0], [1.0]])) == pytest.approx([-6 / 7, 0.0], abs=1e-6)


def test_the_two_readings_of_aisvm_algorithm_1():
    recalls = iter([0.5, 0.7, 0.8])
    assert adaptive_c(0.25, lambda C: next(recalls), 0.75, 20, "algorithm")[:2] == (3, 0.75)
    recalls = iter([0.5, 0.7, 0.8])
    assert adaptive_c(0.25, lambda C: next(recalls), 0.75, 20, "prose")[:2] == (2, 0.5)  # ρ₂ = 0.7 < ρ_max
    recalls = iter([0.9])
    assert adaptive_c(0.25, lambda C: next(recalls), 0.75, 20, "prose")[:2] == (1, 0.25)  # k = 1 stays
    recalls = iter([0.5, 0.6])
    assert adaptive_c(0.25, lambda C: next(recalls), 0.75, 2, "prose")[:2] == (2, 0.5)  # k_max, never reached


def test_aisvm_prose_reading_keeps_the_training_recall_below_rho_max():
    features, targets = iris_task()
    # Versicolor's training recalls at C₁, 2C₁, … are 0, 0.02, 0.14, 0.32, …: ρ_max = 0.3 is reached at k = 4.
    algorithm = AdaptiveSVM(rho_max=0.3).fit(features, targets, 1)
    prose = AdaptiveSVM(rho_max=0.3, reading="prose").fit(features, targets, 1)
    assert algorithm.recalls == prose.recalls == pytest.approx([0.0, 0.02, 0.14, 0.32])
    assert (algorithm.k, prose.k) == (4, 3)
    assert prose.chosen_C == pytest.approx(3 * prose.base_C)


@pytest.mark.slow
def test_the_settings_run_under_evaluate_and_the_defaults_are_todays(run_filterkit):
    def evaluate(*options):
        result = run_filterkit("evaluate", "-q", "--json", "--folds", "3", "--positive", "Iris-versicolor", *options)
        assert result.status == 0, result.stderr
        return json.loads(result.stdout)

    default = evaluate(IRIS, "minmax")
    spelled_out = evaluate(
        "--svm-loss", "squared-hinge", "--svm-intercept", "regularized", "--svm-decision", "platt-cv",
        "--svm-class-weight", "none", IRIS, "minmax",
    )  # fmt: skip
    assert spelled_out["settings"].pop("classifier_params") == {
        "loss": "squared-hinge", "intercept": "regularized", "decision": "platt-cv", "class_weight": "none",
    }  # fmt: skip
    assert default["settings"].pop("classifier_params") == {}
    assert spelled_out == default
    margin = evaluate("--svm-decision", "margin", "--svm-intercept", "free", "--svm-loss", "hinge", IRIS, "minmax")
    assert margin["auc"] > 0.6 and margin["f1"] != default["f1"]
    bad = run_filterkit("evaluate", "--svm-decision", "sign", IRIS, "minmax")
    assert bad.status != 0 and "traceback" not in bad.stderr.lower()
