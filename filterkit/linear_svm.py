"""The linear SVMs the ``svm`` and ``aisvm`` classifiers fit (docs/algorithms.md §8.4, §9): liblinear's through
scikit-learn's ``LinearSVC``, at most so many iterations, and one whose offset b is left out of the penalty."""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp

#: liblinear's iterations in a model's fit (to convergence wherever the grid's C allows), and in ``--svm-c-search
#: early``'s inner fits that score a C of several: LinearSVC's own default, as GridSearchCV scores a C.
FIT_ITERATIONS, SEARCH_ITERATIONS = 20_000, 1_000


def linear_svm(
    C: float,
    seed: int,
    loss: str = "squared_hinge",
    intercept: str = "regularized",
    class_weight=None,
    iterations: int = FIT_ITERATIONS,
):
    """liblinear's SVM (at most ``iterations``), or with ``intercept="free"`` one whose offset b is left out of the
    penalty (solved to convergence)."""
    if intercept == "free":
        return FreeInterceptSVM(C, loss, class_weight)
    from sklearn.svm import LinearSVC

    return LinearSVC(
        C=C,
        loss=loss,
        dual=True if loss == "hinge" else "auto",
        random_state=seed,
        max_iter=iterations,
        class_weight=class_weight,
    )


def stopped_fits(stopped: list) -> list[tuple[int, list[int]]]:
    """(fold, column positions) of each fold whose flags (``stopped``: a fold's flag per column, set where liblinear
    stopped that fit at a search's iterations) name a stopped fit: the fits to make again to convergence.  A fit that
    converged within the limit is the fit of any larger one, bit for bit (liblinear's seeded walk is the same until
    it converges), so only the stopped ones are made again (docs/algorithms.md §8.4)."""
    return [(fold, [int(j) for j in np.flatnonzero(flags)]) for fold, flags in enumerate(stopped) if np.any(flags)]


def with_refits(values: np.ndarray, rows: list, refits: list, fitted: list) -> np.ndarray:
    """``values`` (rows × columns: out-of-fold decision values) with the fits of ``refits`` (:func:`stopped_fits`)
    put in: ``fitted``, each one's values at its fold's test rows (``rows``: each fold's training and test rows)."""
    values = values.copy()
    for (fold, positions), fold_values in zip(refits, fitted):
        values[np.ix_(rows[fold][1], positions)] = fold_values
    return values


class FreeInterceptSVM:
    """A linear SVM minimizing ½‖w‖² + C·Σ loss(y·(w·x + b)) with b not penalized.

    liblinear penalizes b as one more weight (its ``intercept_scaling`` only
    shrinks that penalty, and a scaling large enough to remove it stops its
    solver from converging).  The hinge loss is solved exactly by libsvm's
    dual with the constraint Σ αᵢyᵢ = 0 (a linear kernel); the squared hinge,
    which is smooth, by a trust-region Newton method (generalized Hessian,
    as liblinear's own primal solver) on (w, b).
    """

    def __init__(self, C: float, loss: str, class_weight=None):
        self.C, self.loss, self.class_weight = C, loss, class_weight

    def fit(self, features, targets):
        """Learn w (``coef_``) and the unpenalized b (``intercept_``)."""
        targets = np.asarray(targets, dtype=np.int64)
        if self.loss == "hinge":
            from sklearn.svm import SVC

            model = SVC(kernel="linear", C=self.C, class_weight=self.class_weight).fit(features, targets)
            weights = model.dual_coef_ @ model.support_vectors_
            self.coef_ = np.asarray(weights.toarray() if sp.issparse(weights) else weights).reshape(1, -1)
            self.intercept_ = np.asarray(model.intercept_, dtype=np.float64)
        else:
            self.coef_, self.intercept_ = _squared_hinge_free_intercept(features, targets, self.C, self.class_weight)
        return self

    def decision_function(self, features):
        """w·x + b per row."""
        return np.asarray(features @ self.coef_.ravel()).ravel() + self.intercept_[0]


def _squared_hinge_free_intercept(features, targets, C: float, class_weight) -> tuple[np.ndarray, np.ndarray]:
    """(w, b) minimizing ½‖w‖² + C·Σ sᵢ·max(0, 1 − yᵢ(w·xᵢ + b))² (trust-region Newton; b free)."""
    from scipy.optimize import minimize

    signs = np.where(targets == 1, 1.0, -1.0)
    costs = np.full(len(targets), float(C))
    if class_weight == "balanced":
        counts = np.bincount(targets, minlength=2).astype(np.float64)
        costs *= len(targets) / (2.0 * counts[targets])
    columns = features.shape[1]

    def objective(point):
        weights, offset = point[:columns], point[columns]
        slack = np.maximum(0.0, 1.0 - signs * (np.asarray(features @ weights).ravel() + offset))
        value = 0.5 * float(weights @ weights) + float(np.sum(costs * slack * slack))
        pull = -2.0 * costs * slack * signs
        return value, np.append(weights + np.asarray(features.T @ pull).ravel(), pull.sum())

    def curvature(point, direction):
        slack = 1.0 - signs * (np.asarray(features @ point[:columns]).ravel() + point[columns])
        active = np.where(slack > 0, 2.0 * costs, 0.0)
        along = active * (np.asarray(features @ direction[:columns]).ravel() + direction[columns])
        return np.append(direction[:columns] + np.asarray(features.T @ along).ravel(), along.sum())

    # liblinear's (w, b) with b penalized, the same loss: a near start
    start = fit_quietly(linear_svm(C, 0, class_weight=class_weight), features, targets)
    solution = minimize(
        objective,
        np.append(np.asarray(start.coef_).ravel(), start.intercept_[0]),
        jac=True,
        hessp=curvature,
        method="trust-ncg",
        options={"maxiter": 1000, "gtol": 1e-8},
    )
    return solution.x[:columns].reshape(1, -1), np.array([solution.x[columns]])


def fit_quietly(model, features, targets):
    """liblinear's non-convergence warning is not printed per fold (an early search names the C values whose inner
    fits it stopped: ``C_scored_by_stopped_fits``)."""
    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(features, targets)
