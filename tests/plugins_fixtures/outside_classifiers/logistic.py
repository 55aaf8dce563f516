"""Classifiers of an outside plugin wrapping scikit-learn's LogisticRegression: ``logistic`` declares
probabilities and a model file but no weights to explain (issue 73); ``badproba`` declares probabilities
that raise when asked for."""

import numpy as np
from sklearn.linear_model import LogisticRegression

from filterkit.plugin import Classifier, hookimpl


class Logistic(Classifier):
    """scikit-learn's LogisticRegression: its decision function, its predict_proba."""

    name = "logistic"
    saveable = True
    has_probabilities = True

    def fit(self, features, targets, seed):
        self.model = LogisticRegression(random_state=seed).fit(features, targets)
        return self

    def score(self, features):
        return self.model.decision_function(features)

    def predict(self, features):
        return self.model.predict(features) == 1

    def probabilities(self, features):
        return self.model.predict_proba(features)[:, 1]

    def state(self):
        return {"coef": self.model.coef_, "intercept": self.model.intercept_}

    def load_state(self, state):
        self.model = LogisticRegression()
        self.model.coef_ = np.asarray(state["coef"], dtype=np.float64)
        self.model.intercept_ = np.asarray(state["intercept"], dtype=np.float64)
        self.model.classes_ = np.array([0, 1])
        self.model.n_features_in_ = self.model.coef_.shape[1]


class BadProba(Logistic):
    """Logistic, but its probabilities raise."""

    name = "badproba"

    def probabilities(self, features):
        raise RuntimeError("no probabilities today")


@hookimpl
def register_classifiers(register):
    register(Logistic)
    register(BadProba)
