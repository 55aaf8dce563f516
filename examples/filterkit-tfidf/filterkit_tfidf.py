"""filterkit-tfidf: tf-idf weighting for filterkit chains, as a third-party plugin.

One module, one of each kind of thing a plugin can contribute:

* ``logtf``, a stateless stage: sublinear term frequency, ``x' = 1 + ln x`` where
  ``x > 0`` (Manning, Raghavan & Schütze, *Introduction to Information
  Retrieval*, 2008, §6.4.1); 0 stays 0, missing stays missing, and a negative
  value is an error (it cannot be a count).
* ``tfidf``, a fitted stage: every numeric feature (not the class) times its
  inverse document frequency on the training rows, the smoothed idf of
  scikit-learn's ``TfidfTransformer`` (``smooth_idf=True``)::

      x' = x · idf,   idf = ln((1 + N) / (1 + df)) + 1

  where ``N`` is the number of training rows and ``df`` the number of them in
  which the feature is present and not zero (IIR §6.2.1, with one added to N
  and df as if one extra row had every feature, and 1 added to the logarithm
  so a feature present in every row is kept, not zeroed).  ``--no-smooth``
  gives ``ln(N / df) + 1``; a feature no training row has then gets 0.  Zero
  stays zero, so sparse data stays sparse; missing stays missing.  Rows are
  counted, not weighted: instance weights do not change the idf.
* ``gss``, a metric: the GSS coefficient of Galavotti, Sebastiani & Simi,
  "Experiments on the Use of Feature Selection and Negative Evidence in
  Automated Text Categorization", ECDL 2000, §3:
  ``P(t, c)·P(¬t, ¬c) − P(t, ¬c)·P(¬t, c) = (tp·tn − fp·fn) / N²``.  Registering
  it is all it takes for filterkit to offer a ``gss`` scorer stage and
  ``select --metric gss``.
* ``rocchio``, a classifier for ``filterkit evaluate``: the nearest class
  centroid (IIR §14.2), a row is positive when it is closer to the centroid of
  the positive training rows than to that of the others.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import scipy.sparse as sp

from filterkit.plugin import (
    Chunk,
    Classifier,
    FilterkitError,
    Metric,
    Option,
    Stage,
    StateArray,
    ValueMapped,
    hookimpl,
)

Floats = npt.NDArray[np.float64]


class LogTf(ValueMapped):
    """Sublinear term frequency: 1 + ln x where x > 0; zero and missing stay as they are."""

    name = "logtf"
    summary = "Sublinear term frequency: x' = 1 + ln x where x > 0 (0 stays 0; a negative value is an error)."

    def value_map(self) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
        """1 + ln x where x > 0, the same for every feature (so ``positions`` goes unread)."""
        return lambda positions, values: _sublinear(values)


def _sublinear(values: np.ndarray) -> np.ndarray:
    """1 + ln x where x > 0; 0 and NaN unchanged; FilterkitError on a negative value."""
    if np.any(values < 0):
        raise FilterkitError(f"stage 'logtf': a term frequency cannot be negative (found {values[values < 0][0]:g})")
    positive = values > 0
    return np.where(positive, 1.0 + np.log(np.where(positive, values, 1.0)), values)


@dataclass(frozen=True)
class DocumentCounts:
    """What ``tfidf`` learns in its pass: the training rows, and per feature how many have it.

    Counts of two disjoint parts of the data add up to those of the whole, so
    partitions can be fitted apart and merged.
    """

    rows: int
    document_frequency: np.ndarray

    def merge(self, other: "DocumentCounts") -> "DocumentCounts":
        """The counts of both parts."""
        return DocumentCounts(self.rows + other.rows, self.document_frequency + other.document_frequency)


def inverse_document_frequency(document_frequency: np.ndarray, documents: int, smooth: bool = True) -> np.ndarray:
    """The idf of each feature from its document frequency ``df`` among ``documents`` rows.

    Smooth: ``ln((1 + N) / (1 + df)) + 1``; not smooth: ``ln(N / df) + 1``, and 0
    where ``df`` is 0.  Both are at least 1 wherever ``df ≤ N`` and ``df > 0``.
    """
    df = np.asarray(document_frequency, dtype=np.float64)
    if smooth:
        return np.log((1.0 + documents) / (1.0 + df)) + 1.0
    seen = df > 0
    return np.where(seen, np.log(documents / np.where(seen, df, 1.0)) + 1.0, 0.0)


class TfIdf(ValueMapped):
    """Multiply each numeric feature by its inverse document frequency on the training rows."""

    name = "tfidf"
    summary = "Multiply each numeric feature by its idf on the training rows: x·(ln((1+N)/(1+df)) + 1)."
    learns = True
    options = (
        Option("smooth", bool, True, "idf = ln((1+N)/(1+df)) + 1 (--no-smooth: ln(N/df) + 1, and 0 where df = 0)."),
    )
    state_arrays = {"document_frequency": StateArray(), "idf": StateArray()}

    def new_statistics(self) -> DocumentCounts:
        return DocumentCounts(0, np.zeros(len(self.features)))

    def accumulate(self, statistics: DocumentCounts, chunk: Chunk) -> DocumentCounts:
        block = chunk.values[:, self.features]
        if sp.issparse(block):
            block = block.tocsr()
            present = (block.data != 0) & ~np.isnan(block.data)
            frequency = np.bincount(block.indices[present], minlength=len(self.features)).astype(np.float64)
        else:
            frequency = np.count_nonzero((block != 0) & ~np.isnan(block), axis=0).astype(np.float64)
        return statistics.merge(DocumentCounts(chunk.n_rows, frequency))

    def finalize(self, statistics: DocumentCounts) -> None:
        self.documents = int(statistics.rows)
        self.document_frequency = statistics.document_frequency
        self.idf = inverse_document_frequency(self.document_frequency, self.documents, self.params["smooth"])

    def value_map(self) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
        """x · idf of the value's feature (0 stays 0, so sparse stays sparse)."""
        return lambda positions, values: values * self.idf[positions]

    def state(self) -> dict[str, Any]:
        return {"documents": self.documents, "document_frequency": self.document_frequency, "idf": self.idf}

    def load_state(self, state: dict[str, Any]) -> None:
        super().load_state(state)  # checks document_frequency and idf, and sets them
        self.documents = int(state["documents"])


def gss_coefficient(tp: Floats, fp: Floats, pos: Floats, neg: Floats) -> Floats:
    """gss: (tp·tn − fp·fn) / N² (Galavotti, Sebastiani & Simi, ECDL 2000)."""
    return (tp * (neg - fp) - fp * (pos - tp)) / (pos + neg) ** 2


GSS = Metric("gss", gss_coefficient, "GSS coefficient (Galavotti et al. 2000): (tp·tn − fp·fn) / N².")


class Rocchio(Classifier):
    """The nearest class centroid (IIR §14.2): positive when closer to the positive rows' mean."""

    name = "rocchio"
    summary = "Nearest class centroid (Rocchio, IIR §14.2): positive when closer to the positive rows' mean."

    def fit(self, features: Any, targets: np.ndarray, seed: int) -> "Rocchio":
        targets = np.asarray(targets, dtype=bool)
        if targets.all() or not targets.any():
            raise FilterkitError("rocchio: the training rows need both positive and negative examples")
        positive = np.asarray(features[np.flatnonzero(targets)].mean(axis=0)).ravel()
        negative = np.asarray(features[np.flatnonzero(~targets)].mean(axis=0)).ravel()
        # ‖x − p‖² < ‖x − n‖²  ⇔  x·(p − n) > (‖p‖² − ‖n‖²) / 2: a hyperplane, like a linear SVM's.
        self.weights = positive - negative
        self.threshold = float(positive @ positive - negative @ negative) / 2
        return self

    def score(self, features: Any) -> np.ndarray:
        return np.asarray(features @ self.weights).ravel() - self.threshold

    def predict(self, features: Any) -> np.ndarray:
        return self.score(features) > 0

    def describe(self) -> dict[str, float]:
        return {"threshold": self.threshold}

    # For `filterkit train` and `predict`: the model file holds the hyperplane (saveable), and its weights
    # (has_weights) give predict's decision values and explain's contribution of each feature.
    saveable = True
    has_weights = True

    def state(self) -> dict[str, Any]:
        return {"weights": self.weights, "threshold": self.threshold}

    def load_state(self, state: dict[str, Any]) -> None:
        weights = np.asarray(state["weights"], dtype=np.float64)
        threshold = float(state["threshold"])
        if weights.ndim != 1 or not np.isfinite(weights).all() or not np.isfinite(threshold):
            raise FilterkitError("rocchio: the model's weights and threshold must be finite numbers")
        self.weights, self.threshold = weights, threshold

    def linear(self) -> tuple[np.ndarray, np.ndarray]:
        return self.weights.reshape(1, -1), np.array([-self.threshold])


@hookimpl
def register_stages(register: Callable[[type[Stage]], None]) -> None:
    """The ``logtf`` and ``tfidf`` stages."""
    register(LogTf)
    register(TfIdf)


@hookimpl
def register_metrics(register: Callable[[Metric], None]) -> None:
    """The ``gss`` metric (filterkit makes its scorer stage and offers it to ``select --metric``)."""
    register(GSS)


@hookimpl
def register_classifiers(register: Callable[[type[Classifier]], None]) -> None:
    """The ``rocchio`` classifier."""
    register(Rocchio)
