"""A text classifier you can ship (issue 49): :func:`load_model` gives the :class:`TrainedModel` of a model file
(:func:`filterkit.training.train` makes them), which predicts, scores, transforms and explains documents or rows,
in Python or as ``filterkit predict`` and ``explain``; a :class:`LabelSetModel` does so for label sets.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import cast

import numpy as np
import scipy.sparse as sp

from filterkit.classifying import classifier_matrix, feature_names
from filterkit.contract import PluginCrash
from filterkit.errors import FilterkitError
from filterkit.evaluation import CheckedClassifier
from filterkit.explaining import Tracer, listed_words
from filterkit.formats.records import label_codes
from filterkit.model import ModelFile, save_model
from filterkit.plugins import Registry, load_plugins
from filterkit.provenance import installed_as_saved
from filterkit.runner import Chain
from filterkit.schema import NOMINAL, NUMERIC, STRING, Chunk, Schema, shown_labels
from filterkit.stage import Explainable
from filterkit.tasks import rest_name
from filterkit.text import shown


def load_model(path, registry: Registry | None = None) -> "TrainedModel":
    """The trained model saved at ``path`` (by ``filterkit train`` or :meth:`TrainedModel.save`); FilterkitError
    naming the file when it is not one, or holds a fitted chain only (``--save-model``: no classifier)."""
    registry = load_plugins() if registry is None else registry
    saved = ModelFile(path)
    chain, section = saved.fitted(registry)
    if section is None:
        raise FilterkitError(
            "the model holds a fitted chain but no classifier (saved with --save-model): make one with "
            "filterkit train -o MODEL.json TRAIN CHAIN...",
            str(path),
        )
    installed_as_saved("classifier", section, registry.classifiers, path)
    try:
        return model_of(chain, section, saved.reading, registry)
    except PluginCrash:
        raise
    except (FilterkitError, KeyError, TypeError, ValueError) as error:
        raise FilterkitError(f"not a filterkit model (its classifier: {error})", str(path)) from None


def model_of(chain, section: dict, reading: tuple, registry: Registry) -> "TrainedModel":
    """The model of a fitted ``chain`` and a model file's classifier ``section`` (its arrays decoded), read as
    ``reading`` says: a :class:`LabelSetModel` for label sets, else a :class:`TrainedModel`."""
    if section["task"] == "labels":
        return LabelSetModel(chain, _label_classifiers(registry, section), section, reading, registry)
    call = CheckedClassifier(registry, section["name"], section["params"])
    call.load_state(section["state"])
    return TrainedModel(chain, call, section, reading, registry)


def _label_classifiers(registry: Registry, section: dict) -> list[CheckedClassifier | None]:
    """Each label's loaded classifier of a multi-label section (None for a label predicted constant)."""
    CheckedClassifier(registry, section["name"], section["params"])  # its options checked, whether a label needs it
    classifiers: list[CheckedClassifier | None] = []
    for entry in section["per_label"]:
        call = None
        if "state" in entry:
            call = CheckedClassifier(registry, section["name"], section["params"])
            call.load_state(entry["state"])
        classifiers.append(call)
    return classifiers


def _one_a_row(call: CheckedClassifier, method: str, features) -> np.ndarray:
    """A two-class classifier's answer of ``method`` for ``features``, one number a row (given as a column of them
    too), checked as the classifier contract says (:meth:`CheckedClassifier.per_row`, :func:`_probabilities`)."""
    given, rows = call(method, features), features.shape[0]
    values = call.per_row(given, (rows, 1) if np.ndim(given) == 2 else (rows,), method).reshape(rows)
    return _probabilities(call, values) if method == "probabilities" else values


def _probabilities(call: CheckedClassifier, values: np.ndarray) -> np.ndarray:
    """``values``, probabilities ``call`` gave, unless one is outside [0, 1] (a FilterkitError naming it)."""
    if ((values < 0) | (values > 1)).any():
        raise call.broken("probabilities returned a value outside [0, 1]")
    return values


def _probability_entry(probability: float) -> dict:
    """An explained decision's probability, none where its label has no sigmoid (NaN)."""
    return {} if math.isnan(probability) else {"probability": float(probability)}


def _linear_form(call: CheckedClassifier) -> tuple[np.ndarray, np.ndarray]:
    """The classifier's ``linear()`` as two arrays of numbers; a FilterkitError naming its plugin for another answer."""
    answer = call("linear")
    try:
        weights, intercepts = answer
        return np.asarray(weights, dtype=np.float64), np.asarray(intercepts, dtype=np.float64)
    except (TypeError, ValueError):
        raise call.broken("linear returned no pair of arrays of numbers (weights, intercepts)") from None


def saved_thresholds(call: CheckedClassifier, columns: int) -> list[float | None]:
    """Per column of a loaded classifier, the cut its ``predict`` (``predict_class``: the offset) applies where
    fitting chose one, read of its state as :meth:`LinearSVM.load_state` keeps it (``thresholds``, one per column:
    ``svm --svm-threshold f1|fbr``), else None; a FilterkitError naming its plugin for another shape."""
    state = call("state")
    saved = state.get("thresholds") if isinstance(state, Mapping) else None
    if saved is None:
        return [None] * columns
    try:
        values = np.ravel(np.asarray(saved, dtype=np.float64))
    except (TypeError, ValueError):
        raise call.broken("state's thresholds are not numbers") from None
    if len(values) != columns:
        raise call.broken(f"state's thresholds are {len(values)} numbers, not one per column ({columns})")
    return [float(value) for value in values]


class TrainedModel:
    """A fitted chain and classifier: :meth:`predict`, :meth:`decision_function`, :meth:`predict_proba`,
    :meth:`transform` and :meth:`explain` take a list of documents (strings, for a model whose input has one
    text attribute besides the class) or of rows (mappings of attribute names to values; one left out is
    missing).  Nothing is changed by a call, so threads may share one model."""

    #: Whether each row has a set of labels (:class:`LabelSetModel`), not one.
    label_sets = False

    def __init__(self, chain: Chain, classifier: CheckedClassifier, section: dict, reading: tuple, registry: Registry):
        assert chain.class_name is not None
        self.class_name: str | None = chain.class_name
        self._read_section(chain, section, reading, registry, (chain.class_name,))
        self.classifier = classifier
        self.multiclass = section["task"] == "multiclass"
        self.linear = _linear_form(classifier) if classifier.provides("has_weights") else None
        self._check_fit(section)
        #: Whether the classifier gives calibrated probabilities (:meth:`predict_proba`).
        self.calibrated = classifier.provides("has_probabilities")

    def _read_section(self, chain: Chain, section: dict, reading: tuple, registry: Registry, targets) -> None:
        """What every model keeps of its fitted ``chain`` and classifier ``section``; ``targets``: the
        attributes it answers for (the class, or the labels), which are never features."""
        assert chain.input_schema is not None and chain.output_schema is not None
        self.chain, self.section = chain, section
        self.input_schema: Schema = chain.input_schema
        self.output_schema: Schema = chain.output_schema
        self.reading, self.registry = reading, registry
        #: The classifier's columns: the positive label, each class of a multi-class model, or each label.
        self.classes: tuple[str, ...] = tuple(section["classes"])
        #: The input attributes the model answers for: the class, or each label of multi-label data.
        self.targets: tuple[str, ...] = tuple(targets)
        self.left_out = [self.output_schema.index_of(name) for name in self.targets]
        self.feature_names = feature_names(self.output_schema, self.left_out)
        #: The input's schema and each stage's output schema, with each attribute's position by name (explain).
        self.stage_schemas = [
            (schema, {a.name: i for i, a in enumerate(schema.attributes)})
            for schema in (self.input_schema, *(stage.output_schema() for stage in chain.stages))
        ]
        #: Each nominal label's column of the classifier, by its name (``NAME=LABEL``): its attribute and label.
        self.one_hot = {
            f"{a.name}={label}": (a.name, label)
            for position, a in enumerate(self.output_schema.attributes)
            if a.kind == NOMINAL and position not in self.left_out
            for label in a.labels
        }
        if len(self.feature_names) != section["features"]:
            raise FilterkitError(
                f"the classifier was fitted on {section['features']} features, the chain makes "
                f"{len(self.feature_names)}"
            )
        self._input_attributes = {a.name: a for a in self.input_schema.attributes}
        self._codes = label_codes(self.input_schema.attributes)
        self._text = [a.name for a in self.input_schema.attributes if a.kind == STRING and a.name not in self.targets]

    def _check_fit(self, section: dict) -> None:
        """FilterkitError unless the classifier answers for the section's task: one column (binary) or one a
        class (k ≥ 2, a classifier that learns k classes), its linear form one weight a feature, a cost matrix
        (``--svm-costs``) of its :attr:`classes_`."""
        columns = len(self.classes)
        learns_k_classes = self.classifier.provides("multiclass")
        if self.multiclass and (columns < 2 or not learns_k_classes):
            raise FilterkitError(
                f"a multi-class task of {columns} class(es) for classifier '{section['name']}', which "
                + ("learns k classes" if learns_k_classes else "is binary")
            )
        if not self.multiclass and columns != 1:
            raise FilterkitError(f"a binary task names {columns} classes, not its positive class alone")
        if len(set(self.classes)) != columns:
            raise FilterkitError("a class is named twice")
        if self.linear is not None and self.linear[0].shape != (columns, len(self.feature_names)):
            raise FilterkitError(
                f"weights of shape {self.linear[0].shape}, not one row per class ({columns}) of one weight per "
                f"feature the chain makes ({len(self.feature_names)})"
            )
        priced = getattr(self.classifier.classifier, "cost_labels", None)  # the labels of a cost matrix's rows
        if priced is not None and tuple(priced) != self.classes_:
            raise FilterkitError(
                f"the cost matrix prices the labels {shown_labels(tuple(priced))}, not the model's "
                f"{shown_labels(self.classes_)}"
            )

    @property
    def labels(self) -> tuple[str, ...]:
        """What :meth:`predict` answers: each class of a multi-class model; the positive label and its
        negative (the other label of a two-label class, else ``not LABEL``: :func:`~filterkit.tasks.rest_name`)."""
        if self.multiclass:
            return self.classes
        positive = self.classes[0]
        class_labels = self.input_schema.attributes[self.input_schema.index_of(self.targets[0])].labels
        return positive, rest_name(class_labels, positive)

    @property
    def classes_(self) -> tuple[str, ...]:
        """The labels of :meth:`predict_proba`'s columns, as scikit-learn's classifiers name them: each class
        (each label) of a multi-class (multi-label) model; a two-class model's negative, then its positive, so
        ``[:, 1]`` is the positive class's probability, which rises with :meth:`decision_function`."""
        return self.labels if self.multiclass or self.label_sets else self.labels[::-1]

    def save(self, path) -> None:
        """Write the model to ``path`` (one JSON file, arrays included), all or nothing."""
        save_model(path, self.chain, self.registry, self.reading, self.section)

    def rows(self, documents) -> Chunk:
        """``documents`` as a chunk of the training header (:class:`TrainedModel` says what they may be; a
        pandas DataFrame is its rows); FilterkitError naming the first value an attribute cannot hold."""
        rows = self._mappings(documents)
        values = np.full((len(rows), len(self.input_schema.attributes)), np.nan)
        text: dict[int, list] = {}
        for position, attribute in enumerate(self.input_schema.attributes):
            cells = [row.get(attribute.name) for row in rows]
            present = [k for k, cell in enumerate(cells) if not _is_missing(cell)]
            if attribute.kind == STRING:
                text[position] = [None] * len(rows)
            for k in present:
                values[k, position] = self._value(attribute, position, cells[k])
                if attribute.kind == STRING:
                    text[position][k] = str(cells[k])
        return Chunk(values, text)

    def _mappings(self, documents) -> list[Mapping]:
        """``documents`` as rows, each a mapping of input attribute names to values (a document is the value
        of the input's one text attribute); TypeError or FilterkitError for what is neither."""
        if isinstance(documents, (str, bytes, Mapping)):
            raise TypeError("give a list of documents or rows, not one (wrap it in a list)")
        if hasattr(documents, "to_dict") and hasattr(documents, "columns"):
            documents = documents.to_dict("records")
        rows = list(documents)
        if rows and isinstance(rows[0], str):
            other = next((number for number, row in enumerate(rows, 1) if not isinstance(row, str)), None)
            if other is not None:
                raise TypeError(
                    f"row {other} is {type(rows[other - 1]).__name__}, not a document (a string) as row 1 is: "
                    "give every row as a document, or every row as a mapping of attribute names to values"
                )
            if len(self._text) != 1:
                held = f"{len(self._text)} text attributes" if self._text else "no text attribute"
                raise FilterkitError(
                    f"the model's input has {held}: give rows as mappings of attribute names to values"
                )
            rows = [{self._text[0]: row} for row in rows]
        for number, row in enumerate(rows, 1):
            if not isinstance(row, Mapping):
                raise TypeError(
                    f"row {number} is {type(row).__name__}: a row is a mapping of attribute names to values "
                    "(or, where every row is one, a document)"
                )
            unknown = [name for name in row if name not in self._input_attributes]
            if unknown:
                raise FilterkitError(f"{shown(str(unknown[0]))} is not an attribute of the training data")
        return rows

    def _value(self, attribute, position: int, cell) -> float:
        """One present value of a row given in Python as a chunk holds it."""
        kind = attribute.kind
        if kind == STRING and isinstance(cell, str):
            return 0.0
        if kind == NUMERIC and not isinstance(cell, bool):
            number = _as_number(cell)
            if number is not None:
                return number
        if kind == NOMINAL and isinstance(cell, (str, int, np.integer)) and not isinstance(cell, bool):
            code = cast(dict, self._codes[position]).get(str(cell))
            if code is not None:
                return float(code)
            raise FilterkitError(
                f"{shown(attribute.name)}: {shown(str(cell))} is not one of its training labels "
                f"({shown_labels(attribute.labels)})"
            )
        expected = {STRING: "a str", NUMERIC: "a number", NOMINAL: "a label"}.get(kind)
        if expected is None:
            raise FilterkitError(
                f"{shown(attribute.name)} is a {kind} attribute, which rows given in Python cannot hold: give "
                "them in a file (filterkit predict)"
            )
        raise FilterkitError(f"{shown(attribute.name)}: {shown(str(cell))} is not {expected}")

    def features(self, chunk: Chunk) -> sp.csr_matrix:
        """The classifier's features of a chunk of the training header: the chain's output, as the
        classifier reads it (:func:`filterkit.classifying.classifier_matrix`)."""
        transformed = next(iter(self.chain.transform([chunk])))
        return classifier_matrix(self.output_schema, transformed, self.left_out)

    def transform(self, documents) -> sp.csr_matrix:
        """The classifier's features of ``documents`` (columns named by :attr:`feature_names`)."""
        return self.features(self.rows(documents))

    def decision_function(self, documents) -> np.ndarray:
        """Each document's decision value w·x + b (one per class of a multi-class model); FilterkitError
        naming the first document whose value is not a finite number (:meth:`check_decisions`)."""
        return self.check_decisions(self.decisions(self.transform(documents)))

    def predict_proba(self, documents) -> np.ndarray:
        """Each document's Platt probability of each class of :attr:`classes_` (a two-class model's: 1 - p of
        the negative, p of the positive), documents × classes as scikit-learn's ``predict_proba``."""
        probabilities = self.probabilities(self.transform(documents))
        if probabilities is None:
            raise FilterkitError("the model's classifier gives no probabilities (it was trained without a sigmoid)")
        if self.multiclass or self.label_sets:
            return probabilities
        return np.column_stack([1 - probabilities, probabilities])

    def predict(self, documents) -> list[str]:
        """Each document's predicted label (:attr:`labels`)."""
        return [self.labels[k] for k in self.predicted(self.transform(documents))]

    def explain(self, documents, top: int = 10) -> list[dict]:
        """Per document, what moved its decision (:meth:`explain_chunk`)."""
        if type(top) is not int or top < 0:
            raise ValueError(f"top is {top!r}: the count of words to list, 0 for every one")
        return self.explain_chunk(self.rows(documents), top)

    def check_decisions(self, decisions: np.ndarray, first_row: int = 1, source: str | None = None) -> np.ndarray:
        """``decisions`` (:meth:`decisions`, rows numbered from ``first_row``), or FilterkitError naming the
        first row with one that is not a finite number, and ``source`` (the input's name) where given: a value
        past a double's range (a linear model's weights times the row's values: a hand-edited model, or values
        far from those it was trained on).  Written, ``inf`` would be no decision value at all."""
        values = np.asarray(decisions)
        failed = np.flatnonzero(self._unbounded(values[:, None] if values.ndim == 1 else values))
        if failed.size:
            raise FilterkitError(
                f"row {first_row + int(failed[0])}: its decision value is not a finite number (it passes a double's "
                "range): check the model file and the row's values",
                source,
            )
        return decisions

    def _unbounded(self, decisions: np.ndarray) -> np.ndarray:
        """Per row of a rows × columns array of decision values, whether one is not a finite number."""
        return ~np.isfinite(decisions).all(axis=1)

    def decisions(self, features) -> np.ndarray:
        """Decision values of classifier features: w·x + b of a linear classifier, else its scores."""
        if self.linear is None:
            return self.scores(features)
        weights, intercepts = self.linear
        decisions = np.asarray(features @ weights.T) + intercepts
        return decisions if self.multiclass else decisions[:, 0]

    def scores(self, features) -> np.ndarray:
        """What ``evaluate`` ranks and measures by: the positive class's score, or each class's."""
        rows = features.shape[0]
        if self.multiclass:
            return self.classifier("class_scores", features, shape=(rows, len(self.classes)))
        return self.classifier("score", features, shape=(rows,))

    def probabilities(self, features) -> np.ndarray | None:
        """The classifier's calibrated probabilities (None without them), as :meth:`decisions` is shaped."""
        if not self.calibrated:
            return None
        if not self.multiclass:
            return _one_a_row(self.classifier, "probabilities", features)
        shape = (features.shape[0], len(self.classes))
        return _probabilities(self.classifier, self.classifier("probabilities", features, shape=shape))

    def predicted(self, features) -> np.ndarray:
        """Each row's position in :attr:`labels`: the class (multi-class), or 0 positive and 1 negative."""
        rows = (features.shape[0],)
        if self.multiclass:
            positions = self.classifier("predict_class", features, shape=rows)
            if not np.isin(positions, np.arange(len(self.labels))).all():  # as evaluate refuses it
                last = len(self.labels) - 1
                raise self.classifier.broken(f"predict_class returned a value that is not a class position 0 … {last}")
            return positions.astype(np.int64)
        return np.where(self.classifier("predict", features, shape=rows).astype(bool), 0, 1)

    def answer(self, predicted) -> dict:
        """One row's answer from its :meth:`predicted` entry: ``{"label": …}``."""
        return {"label": self.labels[predicted]}

    def explained_columns(self) -> range | list[int]:
        """The classifier's columns :meth:`explain_chunk` explains: every one."""
        return range(len(self.classes))

    def thresholds(self) -> list[float | None]:
        """Per column, the threshold its score (probability, or decision value without one) is compared with
        (multi-class: the offset subtracted from it before the largest is taken) where fitting chose one, else
        None: what the loaded classifier applies (:func:`saved_thresholds`)."""
        return saved_thresholds(self.classifier, len(self.classes))

    def explain_chunk(self, chunk: Chunk, top: int = 10, first_row: int = 1, source: str | None = None) -> list[dict]:
        """Per row of ``chunk``, the features that moved its decision most (``top`` of them by the size of
        their contribution, 0: every one the row has): each ``word`` (feature), its ``count`` (its value where
        its name first appears along the chain: the input's, or after the stage that made it, which for
        ``words`` is the word's count before ``--log-tf`` and ``--idf``; a copy that ``shape`` or ``auto`` makes,
        ``NAME@LABEL``, is traced to ``NAME`` before that stage, so its count is its word's; 1 for a nominal
        label's column), its value after every stage (``steps``), its final ``value`` and ``contribution`` =
        value × weight.  The contributions of every feature and the ``intercept`` sum to the ``decision`` (per
        class of a multi-class model); those left out are summed in ``other_contribution`` (``other_words`` of
        them).  Where fitting chose a cut (:meth:`thresholds`), the ``threshold`` the score is compared with, or
        per class of a multi-class model the ``offset`` subtracted from its score before the largest is taken.
        Rows are numbered from ``first_row``; one whose decision, or the sum of the contributions left out, is not
        a finite number is an error naming it (and ``source``, the input's name: :meth:`check_decisions`)."""
        if self.linear is None:
            raise FilterkitError(
                f"classifier '{self.section['name']}' is not linear: its decisions cannot be explained"
            )
        outputs = [chunk, *self.chain.each_stage(chunk)]
        counts = [
            None,
            *(
                stage.explained_counts(before) if isinstance(stage, Explainable) else None
                for stage, before in zip(self.chain.stages, outputs)
            ),
        ]
        features = classifier_matrix(self.output_schema, outputs[-1], self.left_out)
        weights, intercepts = self.linear
        decisions = self.check_decisions(np.asarray(features @ weights.T) + intercepts, first_row, source)
        calibrated = self.probabilities(features)
        probabilities = None if calibrated is None else np.reshape(calibrated, decisions.shape)
        predicted = self.predicted(features)
        thresholds = self.thresholds()
        cut = "offset" if self.multiclass else "threshold"
        tracer = Tracer(outputs, counts, self.stage_schemas, self.one_hot)
        stages = [stage.name for stage in self.chain.stages]
        explained = []
        for row in range(chunk.n_rows):
            start, end = features.indptr[row], features.indptr[row + 1]
            columns, values = features.indices[start:end], features.data[start:end]
            per_class = []
            for k in self.explained_columns():
                contributions = values * weights[k, columns]
                try:
                    listed = listed_words(self.feature_names, tracer, row, (columns, values, contributions), top)
                except OverflowError:  # math.fsum of the words left out, where the decision itself stayed in range
                    raise FilterkitError(
                        f"row {first_row + row}: the contributions of the words left out add up past a double's "
                        "range: check the model file and the row's values (or list every word: top 0)",
                        source,
                    ) from None
                per_class.append(
                    {
                        "class": self.classes[k],
                        "decision": float(decisions[row, k]),
                        "intercept": float(intercepts[k]),
                        **({} if probabilities is None else _probability_entry(probabilities[row, k])),
                        **({} if thresholds[k] is None else {cut: thresholds[k]}),
                        **listed,
                    }
                )
            document = {"row": first_row + row, **self.answer(predicted[row]), "stages": stages}
            if self.multiclass or self.label_sets:
                explained.append({**document, "classes": per_class})
            else:
                explained.append({**document, **{key: value for key, value in per_class[0].items() if key != "class"}})
        return explained


class LabelSetModel(TrainedModel):
    """A fitted chain and a classifier per label (binary relevance) of multi-label data: :meth:`predict` gives
    each document's list of labels, :meth:`decision_function` and :meth:`predict_proba` a column per label
    (NaN for a label held by every training row or by none, which has no classifier and is predicted as it
    was held); :meth:`explain` explains each label that has a classifier."""

    label_sets = True

    def __init__(self, chain: Chain, classifiers: list, section: dict, reading: tuple, registry: Registry):
        self.class_name = None
        self._read_section(chain, section, reading, registry, chain.label_names)
        self.multiclass = False
        self.classifiers = classifiers
        #: Per label, whether it is predicted for every row (True), for none (False), or by its classifier (None).
        self.constants = [entry.get("constant") for entry in section["per_label"]]
        fitted = [classifier for classifier in classifiers if classifier is not None]
        if any(getattr(c.classifier, "cost_labels", None) is not None for c in fitted):
            raise FilterkitError("a label's classifier holds a cost matrix, which training on label sets never fits")
        self.linear = self._stacked_linear() if all(c.provides("has_weights") for c in fitted) else None
        #: Per label, whether its classifier gives probabilities (a label too rare for Platt's sigmoid does not).
        self.label_calibrated = [c is not None and c.provides("has_probabilities") for c in classifiers]
        self.calibrated = any(self.label_calibrated) or not fitted  # every label constant: NaN probabilities

    def _stacked_linear(self) -> tuple[np.ndarray, np.ndarray]:
        """Each label's (weights, intercept) as one row of a linear form (zeros for a constant label);
        FilterkitError for weights that do not fit the chain."""
        width = len(self.feature_names)
        weights, intercepts = np.zeros((len(self.classes), width)), np.zeros(len(self.classes))
        for j, classifier in enumerate(self.classifiers):
            if classifier is None:
                continue
            label_weights, label_intercepts = _linear_form(classifier)
            if np.shape(label_weights) != (1, width) or np.shape(label_intercepts) != (1,):
                raise FilterkitError(
                    f"label {shown(self.classes[j])}: weights of shape {np.shape(label_weights)}, not one row of "
                    f"one weight per feature the chain makes ({width})"
                )
            weights[j], intercepts[j] = label_weights[0], label_intercepts[0]
        return weights, intercepts

    @property
    def labels(self) -> tuple[str, ...]:
        """The labels a row's answer is made of."""
        return self.classes

    def answer(self, predicted) -> dict:
        """One row's answer from its :meth:`predicted` row: ``{"labels": [the labels predicted]}``."""
        return {"labels": [self.classes[j] for j in np.flatnonzero(predicted)]}

    def predict(self, documents) -> list[list[str]]:  # type: ignore[override]
        """Each document's predicted labels, in the model's label order."""
        return [self.answer(row)["labels"] for row in self.predicted(self.transform(documents))]

    def _per_label(self, method: str, features) -> np.ndarray:
        """Each label's answer of its classifier's ``method`` (a row × label array, NaN for a constant label)."""
        rows = features.shape[0]
        return np.column_stack(
            [np.full(rows, np.nan) if call is None else _one_a_row(call, method, features) for call in self.classifiers]
        )

    def decisions(self, features) -> np.ndarray:
        """Each label's decision value (w·x + b of a linear classifier, else its score; NaN: constant)."""
        if self.linear is None:
            return self.scores(features)
        weights, intercepts = self.linear
        decisions = np.asarray(features @ weights.T) + intercepts
        decisions[:, [constant is not None for constant in self.constants]] = np.nan
        return decisions

    def _unbounded(self, decisions: np.ndarray) -> np.ndarray:
        """Per row, whether a decision value of a label that has a classifier is not a finite number (a constant
        label's is NaN)."""
        return ~np.isfinite(decisions[:, [constant is None for constant in self.constants]]).all(axis=1)

    def scores(self, features) -> np.ndarray:
        """Each label's score by its classifier (NaN for a constant label)."""
        return self._per_label("score", features)

    def probabilities(self, features) -> np.ndarray | None:
        """Each label's calibrated probability (NaN for a constant label or one without a sigmoid); None where no
        label has one."""
        if not self.calibrated:
            return None
        rows = features.shape[0]
        return np.column_stack(
            [
                _one_a_row(call, "probabilities", features) if calibrated else np.full(rows, np.nan)
                for call, calibrated in zip(self.classifiers, self.label_calibrated)
            ]
        )

    def predicted(self, features) -> np.ndarray:
        """Each row's labels, rows × labels (bool): each classifier's decision, or the label's constant."""
        predicted = np.zeros((features.shape[0], len(self.classes)), dtype=bool)
        for j, (classifier, constant) in enumerate(zip(self.classifiers, self.constants)):
            predicted[:, j] = (
                constant
                if classifier is None
                else classifier("predict", features, shape=predicted.shape[:1]).astype(bool)
            )
        return predicted

    def explained_columns(self) -> list[int]:
        """The labels that have a classifier (a constant label's decision depends on no word)."""
        return [j for j, classifier in enumerate(self.classifiers) if classifier is not None]

    def thresholds(self) -> list[float | None]:
        """Per label, the threshold its loaded classifier compares its score with where fitting chose one
        (:func:`saved_thresholds`), else None (a constant label too)."""
        return [None if call is None else saved_thresholds(call, 1)[0] for call in self.classifiers]


def _as_number(value) -> float | None:
    """A row's value read as a number (None when it is not one)."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _is_missing(cell) -> bool:
    """Whether a value given in Python is missing: None, or a float NaN (a pandas gap)."""
    return cell is None or isinstance(cell, float) and math.isnan(cell)
