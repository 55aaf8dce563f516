"""The classifier protocol of ``filterkit evaluate`` (plugins: ``register_classifiers``).

A classifier is a binary learner: fitted on numeric features and 0/1 targets, it gives each test row a
score (for AUC and precision@20) and a decision.  Its options are declared like a stage's, and offered on
the command line as ``--NAME-OPTION``.

What it provides beyond that it declares, and filterkit reads the declaration, never trying a method to see:
``multiclass`` (it learns k classes at once, ``evaluate --multiclass``), ``saveable`` (``filterkit train``
saves its :meth:`Classifier.state`, numbers, strings and numpy arrays: a model file never holds code),
``has_weights`` (:meth:`Classifier.linear` gives the weights ``predict`` writes decision values by and
``explain`` splits into each feature's contribution) and ``has_probabilities`` (:meth:`Classifier.probabilities`).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from filterkit.contract import DECLARED_BOOL, Declared
from filterkit.stage import Configurable


class Classifier(Configurable):
    """Base class of ``evaluate``'s classifiers."""

    #: True when the classifier implements the k-class methods (``evaluate --multiclass``).
    multiclass: ClassVar[bool] = False
    #: True when :meth:`state` and :meth:`load_state` save and load it (``filterkit train``).
    saveable: ClassVar[bool] = False
    #: True when :meth:`linear` gives its weights (``predict``'s decision values, ``explain``).
    has_weights: ClassVar[bool] = False
    #: True when :meth:`probabilities` gives calibrated probabilities; read of the fitted classifier, so one
    #: whose options or fit decide it sets it in ``fit`` and ``load_state``.
    has_probabilities: bool = False
    #: Option values ``filterkit train`` gives it where the user gives none, when they differ from
    #: ``evaluate``'s: a shipped model is judged by its decisions, ``evaluate`` follows the papers' protocol.
    trained_defaults: ClassVar[dict] = {}

    def fit(self, features, targets: np.ndarray, seed: int) -> "Classifier":
        """Learn from ``features`` (rows × columns) and 0/1 ``targets``; ``seed`` fixes any randomness."""
        raise NotImplementedError

    def score(self, features) -> np.ndarray:
        """One real score per row; higher means more likely positive."""
        raise NotImplementedError

    def predict(self, features) -> np.ndarray:
        """The hard decision per row: True for the positive class."""
        raise NotImplementedError

    def fit_multiclass(self, features, classes: np.ndarray, n_classes: int, seed: int) -> "Classifier":
        """Learn from ``features`` and class positions ``classes`` in 0 … ``n_classes`` − 1
        (each present in the training rows); ``seed`` fixes any randomness."""
        raise NotImplementedError

    def class_scores(self, features) -> np.ndarray:
        """One real score per row and class (rows × ``n_classes``): higher means that class
        is likelier; each column is ranked on its own, for the class's one-vs-rest AUC."""
        raise NotImplementedError

    def predict_class(self, features) -> np.ndarray:
        """The predicted class position per row (0 … ``n_classes`` − 1)."""
        raise NotImplementedError

    def describe(self) -> dict:
        """What fitting chose (a C, an intercept…), for the evaluation report."""
        return {}

    def state(self) -> dict:
        """What scoring needs after fitting, as numbers, strings, lists and numpy arrays, given ``saveable``
        (``train`` saves it)."""
        raise NotImplementedError

    def load_state(self, state: dict) -> None:
        """Become the fitted classifier whose :meth:`state` was ``state`` (``predict`` loads it)."""
        raise NotImplementedError

    def linear(self) -> tuple[np.ndarray, np.ndarray]:
        """(weights, intercepts), given ``has_weights``: the decision value of column j (the positive class, or
        class j of k) is features · weights[j] + intercepts[j]."""
        raise NotImplementedError

    def probabilities(self, features) -> np.ndarray:
        """Each row's calibrated probability per column (as :meth:`linear`'s), given ``has_probabilities``."""
        raise NotImplementedError


#: What ``evaluate``, ``train`` and ``predict`` read of a registered classifier class besides its methods, and
#: what each must be: a classifier whose attribute raises or is another thing is a problem of its plugin.
CLASSIFIER_DECLARATIONS = {
    "multiclass": DECLARED_BOOL,
    "saveable": DECLARED_BOOL,
    "has_weights": DECLARED_BOOL,
    "has_probabilities": DECLARED_BOOL,
    "trained_defaults": Declared(
        lambda value: isinstance(value, dict) and all(isinstance(key, str) for key in value),
        "a dict of option names to values",
    ),
}
