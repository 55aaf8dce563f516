"""The classifier protocol of ``filterkit evaluate`` (plugins: ``register_classifiers``).

A classifier is a binary learner: it is fitted on a sparse or dense matrix of
numeric features and 0/1 targets (1 = the task's positive class), then gives
each test row a ``score`` (higher means more likely positive, used for AUC and
precision@20) and a hard decision (``predict``).  Its options are declared
like a stage's, so ``evaluate`` offers them on the command line as
``--NAME-OPTION``.
"""

from __future__ import annotations

import numpy as np

from filterkit.stage import Configurable


class Classifier(Configurable):
    """Base class of ``evaluate``'s classifiers."""

    def fit(self, features, targets: np.ndarray, seed: int) -> "Classifier":
        """Learn from ``features`` (rows × columns) and 0/1 ``targets``; ``seed`` fixes any randomness."""
        raise NotImplementedError

    def score(self, features) -> np.ndarray:
        """One real score per row; higher means more likely positive."""
        raise NotImplementedError

    def predict(self, features) -> np.ndarray:
        """The hard decision per row: True for the positive class."""
        raise NotImplementedError

    def describe(self) -> dict:
        """What fitting chose (a C, an intercept…), for the evaluation report."""
        return {}
