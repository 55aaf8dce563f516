"""Every registered stage that keeps its rows as a scikit-learn transformer (docs/sklearn.md).

``transformer_for(name)`` makes, from the plugin registry, a transformer class whose parameters are the
stage's options (``stage_NAME`` for one named like a method) and ``positive``; each is importable under
its stage class's name and its derived name (``meanscale`` → ``MeanscaleTransformer``), made on first
use.  X's columns become attributes, y a nominal class after them (its labels a pandas Categorical's
categories in their order, as an ARFF header declares them, else the sorted distinct ``str(y)``) when the stage
learns from a class or y holds class labels; a label matrix Y (n × labels of 0 and 1) becomes label attributes
``{0,1}`` after them, MEKA's ``-C -k``; ``sample_weight`` gives the rows' instance weights, as an ARFF file's
``{w}`` does (docs/sklearn.md).  Fitted state lives in ``stage_``; pickling keeps only its plain-array state,
options and schema, as a model file does.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import itertools
import re
from collections.abc import Callable
from dataclasses import replace
from typing import ClassVar

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_array, check_is_fitted, column_or_1d, validate_data

from filterkit.contract import declared
from filterkit.errors import FilterkitError
from filterkit.labels import (
    LABEL_VALUES,
    with_meka_label_count,
)
from filterkit.plugins import Registry, load_plugins
from filterkit.runner import Chain
from filterkit.schema import (
    NOMINAL,
    NUMERIC,
    TEXT_KINDS,
    Attribute,
    Chunk,
    Schema,
    range_within,
    shown_labels,
)
from filterkit.sklearn_inputs import (
    as_targets,
    categories_of,
    column_attribute,
    holds_text,
    is_label_matrix,
    is_missing,
    known_targets,
    label_values,
    refuse_unlabelled_values,
    stored_once,
    table_values,
    with_targets,
    x_columns,
)
from filterkit.sklearn_loading import Loaded as Loaded
from filterkit.sklearn_loading import load as load
from filterkit.sklearn_loading import load_arff as load_arff
from filterkit.sources import MemorySource, kept_for_rows
from filterkit.stage import DECLARED_ACCEPTS, Accepts, Option, Stage
from filterkit.updating import saved_statistics, updated_chain

#: The metric a ``ScoreScaler()`` scores by, the one of the headline pipeline ``shape bns l2``.
DEFAULT_METRIC = "bns"

_RELATION = "filterkit.sklearn"

_LABEL_NAMES_HELP = (
    "The names of the labels of a label matrix Y (n × labels of 0 and 1), in its column order, as label= names "
    "them and NAME@LABEL spells them; None: a DataFrame Y's columns, else '0', '1', …"
)

_POSITIVE_HELP = (
    "The positive class label, compared with str(y); None: filterkit's rule (the minority class of a two-class y; "
    "on more classes the stage's multi-class form, as its summary says)."
)


@functools.cache
def _registry() -> Registry:
    return load_plugins()


class FilterkitTransformer(TransformerMixin, BaseEstimator):
    """A filterkit stage as a scikit-learn transformer: the base of every adapter, whose subclass
    names its stage (``stage_name``) and the parameters of its options (``stage_parameters``)."""

    #: The parameter of this class that gives each stage option, by option name.
    stage_parameters: ClassVar[dict[str, str]] = {}
    stage_name: ClassVar[str] = ""

    def _stage_name(self) -> str:
        return self.stage_name

    def _new_stage(self, columns: int | None = None) -> Stage:
        """The stage of this transformer's parameters; with the number of X's ``columns``, a range's ``last`` is
        X's last column, not the class that y adds after them (a default range, ``first-last``, is left as it is:
        the stages that default to it pass the class by)."""
        params = {option: getattr(self, parameter) for option, parameter in self.stage_parameters.items()}
        if columns is not None:
            for option in _registry().stage(self._stage_name()).options:
                given = params.get(option.name)
                if option.attribute_range and isinstance(given, str) and given != option.default:
                    params[option.name] = range_within(params[option.name], columns, option.flag)
        return _registry().make_stage(self._stage_name(), params)

    def _learns_from_y(self) -> bool:
        """True when the stage needs a class (:class:`~filterkit.stage.Accepts`); False for invalid parameters
        (``fit`` says why)."""
        return _needs_a_class(self._new_stage, unmade=False)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.allow_nan = True
        accepts = _accepts(self._new_stage) or Accepts()  # one stage made: scikit-learn asks thrice a transform
        tags.target_tags.required = accepts.nominal_class or accepts.two_classes  # as _learns_from_y
        tags.input_tags.positive_only = accepts.non_negative
        # a stage that reads text takes documents, not a numeric matrix (as CountVectorizer's tags say)
        tags.input_tags.string, tags.input_tags.two_d_array = accepts.text, not accepts.text
        return tags

    def fit(self, X, y=None, sample_weight=None):
        """Fit the stage on X, and on y as the class when the stage learns from one or y holds class labels;
        a label matrix Y (n × labels of 0 and 1, dense or sparse) is several labels a row, each learned from
        as the command line learns from MEKA's labels (ignored by a stage that learns from no class).
        ``sample_weight`` (one number ≥ 0 a row; None: each row weighs 1) is the rows' instance weights, which
        the stage uses as it uses an ARFF file's on the command line."""
        self._fit(X, y, sample_weight)
        return self

    def fit_transform(self, X, y=None, sample_weight=None):
        """``fit(X, y, sample_weight).transform(X)``, the same values, X's made of what the fit's pass kept where its
        stage keeps one: ``WordVector`` cuts the documents into words once, not again for the transform."""
        chain, kept = self._fit(X, y, sample_weight, keeping=True)
        with contextlib.closing(kept):
            if kept.stage_position is None:
                return self.transform(X)
            return self._as_output(self._failing_as_value_error(lambda: next(iter(chain.transform_kept(kept)))), X)

    def __sklearn_is_fitted__(self) -> bool:
        """Fitted once a fit kept its stage: a fit refused after X was validated leaves none."""
        return hasattr(self, "stage_")

    def _fit(self, X, y, sample_weight, keeping: bool = False):
        """:meth:`fit`: the chain fitted, and (``keeping``) what its pass kept (None: not asked); a fit that fails
        leaves the estimator unfitted, not its last fit beside this one's X."""
        self.__dict__.pop("stage_", None)
        required = self._learns_from_y()
        categories = categories_of(y)
        y = as_targets(y)
        matrix = required and is_label_matrix(y)
        supervised = required or (
            y is not None and not is_label_matrix(y) and type_of_target(known_targets(y)) in ("binary", "multiclass")
        )
        one_class = supervised and not matrix
        columns, documents = x_columns(X, False)
        if documents:
            _refuse_missing_documents(type(self).__name__, columns)
        if columns is None:
            X, y = validate_data(self, X, y, **_X_CHECKS) if one_class else (validate_data(self, X, **_X_CHECKS), y)
            X = stored_once(X)
            attributes = [Attribute(name, NUMERIC, declared_type="numeric") for name in self._input_names(X.shape[1])]
            text: dict[int, list] = {}
        else:
            validate_data(self, X, y if one_class else "no_validation", skip_check_array=True)
            attributes = [
                column_attribute(name, column) for name, column in zip(self._input_names(len(columns)), columns)
            ]
            X, text = table_values(attributes, columns)
        labels, targets = (
            self._class_labels(column_or_1d(y, warn=True), required, categories) if one_class else ((), None)
        )
        names: tuple[str, ...] = ()
        if matrix:
            names, targets = self._label_matrix(y, X.shape[0], [attribute.name for attribute in attributes])
        schema = _schema(attributes, labels, names)
        stage = self._failing_as_value_error(lambda: self._new_stage(len(attributes)))
        chain = Chain([stage], class_spec="last" if labels else None, positive=self._positive_label())
        chain.kept_statistics = {}
        rows = Chunk(with_targets(X, targets, len(schema) - len(attributes)), text, _row_weights(sample_weight, X))
        kept = kept_for_rows(rows) if keeping else None
        try:
            self._fit_chain(chain, MemorySource(schema, rows), kept)
            self._refuse_no_feature(chain.stages[0], schema.attributes[len(attributes) :], rows.shape[0])
            self.input_schema_ = schema
            self.class_labels_ = labels
            self.label_names_ = names
            self._keep_fitted(chain)
        except BaseException:
            if kept is not None:
                kept.close()
            raise
        return chain, kept

    def _fit_chain(self, chain: Chain, rows: MemorySource, kept) -> None:
        """``chain``'s one stage fitted on ``rows``, its pass kept in ``kept`` (None: nothing kept); ValueError for a
        stage that passes text through unread."""
        self._failing_as_value_error(lambda: chain.fit(rows, keep=kept))
        stage = chain.stages[0]
        unread = [a.name for a in stage.output_schema().attributes if a.kind in TEXT_KINDS]
        if unread:
            raise ValueError(
                f"{type(self).__name__}: stage '{stage.name}' passes the text of {', '.join(map(repr, unread))} "
                "through unread, and a transformer's output is numbers: turn it into words first (WordVector)"
            )

    def _label_matrix(
        self, Y, n_rows: int, feature_names: list[str], unnamed: tuple[str, ...] = ()
    ) -> tuple[tuple[str, ...], np.ndarray | sp.csr_matrix]:
        """The label matrix Y's label names (``label_names``, else a DataFrame's columns, else ``unnamed`` or
        ``0`` …) and its values as float64 (NaN: not known), sparse if it is; ValueError naming what does not
        fit X."""
        where = type(self).__name__
        frame_names = [str(name) for name in Y.columns] if hasattr(Y, "columns") else None
        values = label_values(Y, where)
        if values.shape[0] != n_rows:
            raise ValueError(
                f"{where}: Y has {values.shape[0]} rows and X {n_rows}: a label matrix has one row per row of X"
            )
        if self._positive_label() is not None:
            raise ValueError(
                f"{where}: positive={self.positive!r} names a class of a one-column y; in a label matrix Y each "
                "label's 1 is its positive class (label= learns from one label)"
            )
        names = self._label_names(frame_names, unnamed, values.shape[1])
        repeated = sorted(name for name in set(names) if names.count(name) > 1)
        clash = sorted(set(names) & set(feature_names))
        if "" in names or repeated or clash:
            why = "is empty" if "" in names else "names two labels" if repeated else "names a column of X too"
            shown = "''" if "" in names else repr((repeated or clash)[0])
            raise ValueError(f"{where}: the label name {shown} {why}: give label_names=[...] with distinct new names")
        refuse_unlabelled_values(values, names, where)
        return tuple(names), values

    def _label_names(self, frame_names: list[str] | None, unnamed: tuple[str, ...], columns: int) -> list[str]:
        """The names of a label matrix's ``columns``: ``label_names``, else a DataFrame's columns, else ``unnamed``
        (the first fit's) or ``0`` …; ValueError where those given, or the first fit's, are not as many."""
        given = getattr(self, "label_names", None)
        if given is not None:
            names, named_by = [str(name) for name in given], "label_names gives"
        else:
            names, named_by = frame_names or list(unnamed), "" if frame_names else "the first fit had"
        if names and len(names) != columns:
            raise ValueError(f"{type(self).__name__}: Y has {columns} columns where {named_by} {len(names)}")
        return names or [str(j) for j in range(columns)]

    def _takes_more_rows(self) -> bool:
        """False once fitted where the stage learns but could not keep its statistics (``auto``, ``select``
        by ``svm``): then the transformer has no ``partial_fit``."""
        # learns read last: a plugin's fault it raises is partial_fit's error, not scikit-learn's AttributeError
        return not hasattr(self, "stage_") or self.statistics_ is not None or not declared(self.stage_, "learns")

    @available_if(_takes_more_rows)
    def partial_fit(self, X, y=None, sample_weight=None):
        """Fit on more rows: the stage as one ``fit`` on the rows of every call so far (and their ``sample_weight``)
        gives it, to the bit (the statistics kept by the last call merged with these rows': :mod:`filterkit.updating`).
        The first call is ``fit``; the later ones take X's columns and y's labels as it had them."""
        if not hasattr(self, "stage_"):
            return self.fit(X, y, sample_weight)
        X, text = self._fitted_rows(X)
        if not declared(self.stage_, "learns"):
            return self
        targets = self._fitted_codes(y) if self.class_labels_ else None
        if getattr(self, "label_names_", ()):
            targets = self._fitted_label_matrix(y, X.shape[0])
        schema = self.input_schema_
        old = Chain([self.stage_], class_spec=None, positive=self._positive_label())
        old.input_schema, old.class_name = schema, schema.attributes[-1].name if self.class_labels_ else None
        old.label_names = tuple(getattr(self, "label_names_", ()))
        rows = Chunk(with_targets(X, targets, self._n_targets()), text, _row_weights(sample_weight, X))
        updated = self._failing_as_value_error(
            updated_chain, old, [self.statistics_], MemorySource(schema, rows), _registry()
        )
        self._refuse_no_feature(updated.stages[0], schema.attributes[len(self._fitted_feature_names()) :], 0)
        self._keep_fitted(updated)
        return self

    def _refuse_no_feature(self, stage: Stage, targets, n_samples: int) -> None:
        """ValueError, before the estimator keeps anything of the fit, where the fitted ``stage`` leaves X no column
        but the ``targets`` (as scikit-learn's VarianceThreshold refuses to): zero columns are no feature set
        (``n_samples``: the rows fitted)."""
        output = stage.output_schema()
        if not len(_without(output, targets) if targets else output.attributes):
            one = " (X holds one sample)" if n_samples == 1 else ""
            raise ValueError(f"{type(self).__name__}: stage '{stage.name}' leaves X no feature{one}")

    def _keep_fitted(self, chain: Chain) -> None:
        """Keep the fitted stage of ``chain``, the statistics it was fitted from (None where the stage cannot
        save them: then partial_fit says so) and its scores."""
        stage = self.stage_ = chain.stages[0]
        self.statistics_ = None
        if chain.kept_statistics:
            try:
                self.statistics_ = saved_statistics(stage, chain.kept_statistics[0])
            except FilterkitError:
                pass
        feature_scores = getattr(stage, "feature_scores", None)
        if callable(feature_scores):
            scored = feature_scores()
            self.scores_ = np.array([scored.get(name, np.nan) for name in self._fitted_feature_names()])
        self._fitted_transform()  # here, not in transform: a transform leaves the estimator as it was

    def _fitted_label_matrix(self, Y, n_rows: int):
        """Y's values as :meth:`_label_matrix` reads them, for the labels of the first fit (ValueError for others)."""
        if Y is None or not is_label_matrix(as_targets(Y)):
            raise ValueError(
                f"{type(self).__name__} was fitted with a label matrix Y of {len(self.label_names_)} labels: "
                "partial_fit needs one too"
            )
        names, values = self._label_matrix(as_targets(Y), n_rows, self._fitted_feature_names(), self.label_names_)
        if names != self.label_names_:
            raise ValueError(
                f"{type(self).__name__}: Y's labels {shown_labels(names)} are not those of the first fit "
                f"{shown_labels(self.label_names_)}"
            )
        return values

    def _n_targets(self) -> int:
        """How many attributes after X's hold y: the class (one) or the labels of a label matrix (none: 0)."""
        labels = getattr(self, "label_names_", ())  # none in a transformer pickled before label matrices
        return len(labels) if labels else int(bool(self.class_labels_))

    def _fitted_codes(self, y) -> np.ndarray:
        """y's codes among the labels of the first fit (NaN where missing); ValueError for a label it lacked."""
        if y is None:
            raise ValueError(f"{type(self).__name__} was fitted with y: partial_fit needs y too")
        y = column_or_1d(as_targets(y), warn=True)
        present = [not is_missing(value) for value in y]
        text = [str(value) for value in known_targets(y)]  # spelled as the fit spells them (_class_labels)
        unseen = sorted(set(text) - set(self.class_labels_))
        if unseen:
            raise ValueError(
                f"{type(self).__name__}: y holds the label {unseen[0]!r}, which the first fit did not have "
                f"(its labels: {shown_labels(self.class_labels_)}): fit on all the rows"
            )
        codes = np.full(len(y), np.nan)
        codes[present] = _positions(self.class_labels_, text)
        return codes

    def _class_labels(
        self, y, required: bool, categories: tuple[str, ...] | None
    ) -> tuple[tuple[str, ...], np.ndarray]:
        """The class labels and y's codes (NaN where missing): the labels are ``categories`` (a pandas Categorical
        y's, in their order, those no row has included, as an ARFF header declares its labels), else the sorted
        distinct ``str(y)``."""
        known = known_targets(y)
        check_classification_targets(known)
        text = np.array([str(value) for value in known], dtype=object)
        present = tuple(np.unique(text).tolist())
        labels = present if categories is None else categories
        if len(set(labels)) < len(labels):
            raise ValueError(f"{type(self).__name__}: y's categories {shown_labels(labels)} repeat a label as str(y)")
        positive = self._positive_label()
        if positive is not None and positive not in labels:
            raise ValueError(
                f"{type(self).__name__}: positive={self.positive!r} is not one of y's labels "
                f"{shown_labels(labels)} (compared as str(y))"
            )
        if required and len(present) < 2:
            raise ValueError(
                f"{type(self).__name__}: y holds {len(present)} class{'' if len(present) == 1 else 'es'} "
                f"{shown_labels(present)}; stage '{self._stage_name()}' learns from at least two"
            )
        codes = np.full(len(y), np.nan)
        codes[[not is_missing(value) for value in y]] = _positions(labels, text)
        return labels, codes

    def _positive_label(self) -> str | None:
        positive = getattr(self, "positive", None)
        return None if positive is None else str(positive)

    def _input_names(self, n_features: int) -> list[str]:
        """The names of X's columns: the DataFrame's, else x0 … x{n-1}."""
        if hasattr(self, "feature_names_in_"):
            return [str(name) for name in self.feature_names_in_]
        return [f"x{i}" for i in range(n_features)]

    def _fitted_feature_names(self) -> list[str]:
        attributes = self.input_schema_.attributes
        return [attribute.name for attribute in attributes[: len(attributes) - self._n_targets()]]

    def _failing_as_value_error(self, function, *args):
        try:
            return function(*args)
        except FilterkitError as error:
            raise ValueError(f"{type(self).__name__}: {self._python_spelling(str(error))}") from error

    def _python_spelling(self, message: str) -> str:
        """``message`` with flags spelled as parameters (``--top 5`` → ``top=5``)."""
        parameter_of = {**self.stage_parameters, "positive": "positive"}
        flags = {option.name for option in _registry().stage(self._stage_name()).options if option.kind is bool}

        def spelled(match: re.Match) -> str:
            negated, name, space = match.group(1), match.group(2).replace("-", "_"), match.group(3) or ""
            parameter = parameter_of.get(name)
            if parameter is None:
                return match.group(0)
            if name in flags:
                return f"{parameter}={not negated}{space}"
            return f"{parameter}=False{space}" if negated else f"{parameter}="

        message = re.sub(r"option --()([a-z][a-z0-9-]*)(): ", spelled, message)
        return re.sub(r"--(no-)?([a-z][a-z0-9-]*)(\s(?=[^\s(-]))?", spelled, message)

    def transform(self, X):
        """X with the fitted stage applied: sparse stays sparse, dense stays dense."""
        check_is_fitted(self)
        chain = self._fitted_transform()[0]
        X, text = self._fitted_rows(X)
        rows = Chunk(with_targets(X, None, self._n_targets()), text)
        return self._as_output(self._failing_as_value_error(lambda: next(iter(chain.transform([rows])))), X)

    def _as_output(self, transformed: Chunk, X):
        """``transformed``'s values without the class or labels, sparse as X's array type is (a sparse array, else a
        sparse matrix) where they are sparse, else a dense array of float64."""
        values = transformed.values
        kept = self._fitted_transform()[2]
        if kept is not None:
            values = values[:, kept]
        if sp.issparse(values):
            return sp.csr_array(values) if isinstance(X, sp.sparray) else sp.csr_matrix(values)
        return np.asarray(values, dtype=np.float64)

    def _fitted_rows(self, X) -> tuple:
        """X's values and text read as the fitted attributes; ValueError where X does not fit them."""
        _, by_columns, _ = self._fitted_transform()
        columns, documents = x_columns(X, by_columns)
        if columns is None and by_columns:  # sparse X: numbers only
            raise ValueError(
                f"{type(self).__name__} was fitted on columns of text or categories, which a sparse X cannot hold: "
                "give X as fit was given it (a frame, or an array of its values)"
            )
        if columns is None:
            return stored_once(validate_data(self, X, reset=False, **_X_CHECKS)), {}
        attributes = self.input_schema_.attributes[: len(self._fitted_feature_names())]
        if not documents:  # documents have no feature names or count to check
            validate_data(self, X, reset=False, skip_check_array=True)
        if len(columns) != len(attributes):
            raise ValueError(f"X has {len(columns)} columns, but {type(self).__name__} was fitted on {len(attributes)}")
        return table_values(attributes, columns)

    def _fitted_transform(self) -> tuple[Chain, bool, np.ndarray | None]:
        """What :meth:`transform` needs that the fitted ``stage_`` fixes, made once per fitted stage by
        :meth:`fit`, :meth:`partial_fit` and unpickling (one document's transform paid 3 of its 5 ms for
        it): the chain that runs it (its plan made once), whether X is read column by column (an input
        attribute is not numeric) and the output columns kept (all but the class; None: all)."""
        made = self.__dict__.get("_transform_made")
        if made is None or made[0] is not self.stage_:
            attributes = self.input_schema_.attributes[: len(self._fitted_feature_names())]
            by_columns = any(attribute.kind != NUMERIC for attribute in attributes)
            targets = self.input_schema_.attributes[len(attributes) :]
            kept = _without(self.stage_.output_schema(), targets) if targets else None
            made = self._transform_made = (self.stage_, (Chain([self.stage_]), by_columns, kept))
        return made[1]

    def _keeps_a_subset_of_its_features(self) -> bool:
        """True when the fitted (or unfitted) stage's output features are some of its input features, in order."""
        if not hasattr(self, "stage_"):
            return True
        inputs = self._fitted_feature_names()
        outputs = [str(name) for name in self.get_feature_names_out()]
        positions = [inputs.index(name) for name in outputs if name in inputs]
        return len(positions) == len(outputs) and positions == sorted(positions)

    @available_if(_keeps_a_subset_of_its_features)
    def get_support(self, indices: bool = False):
        """Which input features the fitted stage keeps: a boolean mask, or with ``indices=True`` positions."""
        kept = set(str(name) for name in self.get_feature_names_out())
        mask = np.array([name in kept for name in self._fitted_feature_names()], dtype=bool)
        return np.flatnonzero(mask) if indices else mask

    def get_feature_names_out(self, input_features=None):
        """The output attributes' names: kept names, or the stage's new ones (``w>=2``)."""
        check_is_fitted(self)
        names = self._fitted_feature_names()
        if input_features is not None:
            given = [str(name) for name in input_features]
            if len(given) != len(names):
                raise ValueError(
                    f"input_features should have length equal to number of features ({len(names)}), got {len(given)}"
                )
            if hasattr(self, "feature_names_in_") and given != names:
                raise ValueError("input_features is not equal to feature_names_in_")
            names = given
        if names == self._fitted_feature_names():
            stage, schema = self.stage_, self.input_schema_
        else:
            attributes = [replace(a, name=name) for a, name in zip(self.input_schema_.attributes, names)]
            schema = _schema(attributes, self.class_labels_, self.label_names_)
            stage = _restored(_saved(self.stage_), schema, bool(self.class_labels_))
        output = stage.output_schema()
        targets = schema.attributes[len(names) :]
        keep = _without(output, targets) if targets else range(len(output))
        return np.array([output.attributes[i].name for i in keep], dtype=object)

    def __getstate__(self):
        state = dict(super().__getstate__())
        state.pop("_transform_made", None)
        if "stage_" in state:
            state["stage_"] = _saved(state["stage_"])
        return state

    def __setstate__(self, state):
        state = dict(state)
        saved = state.pop("stage_", None)
        super().__setstate__(state)
        options = {option.name: option for option in _registry().stage(self._stage_name()).options}
        for option, parameter in self.stage_parameters.items():  # one the pickle predates: as its models were
            if not hasattr(self, parameter) and option in options:
                setattr(self, parameter, options[option].value_before_it_existed)
        signature = inspect.signature(type(self).__init__).parameters
        for parameter in self._get_param_names():  # an adapter's own (label_names): its default
            if not hasattr(self, parameter):
                setattr(self, parameter, signature[parameter].default)
        if saved is not None:
            self.stage_ = _restored(saved, self.input_schema_, bool(self.class_labels_))
            self._fitted_transform()


_X_CHECKS = {"accept_sparse": "csr", "dtype": np.float64, "ensure_all_finite": "allow-nan"}


def _positions(labels: tuple[str, ...], text: list[str] | np.ndarray) -> np.ndarray:
    """Where each of ``text`` (labels among ``labels``) stands in ``labels``, which need not be sorted."""
    spelled = np.array(labels, dtype=object)
    order = np.argsort(spelled)
    return order[np.searchsorted(spelled, np.array(text, dtype=object), sorter=order)]


def _row_weights(sample_weight, X) -> np.ndarray | None:
    """``sample_weight`` as the rows' instance weights (float64, one per row of X, finite and ≥ 0), None when not
    given (each row weighs 1); ValueError for another count, a negative weight or all zero, as scikit-learn's."""
    if sample_weight is None:
        return None
    weights = np.asarray(sample_weight, dtype=np.float64)
    weights = check_array(
        np.full(X.shape[0], weights) if weights.ndim == 0 else weights, ensure_2d=False, input_name="sample_weight"
    )
    if weights.shape != (X.shape[0],):
        raise ValueError(f"sample_weight.shape == {weights.shape}, expected ({X.shape[0]},)")
    if np.any(weights < 0):
        raise ValueError("sample_weight holds a negative weight")
    if not np.any(weights):
        raise ValueError("sample_weight: every weight is zero (at least one row must weigh above 0)")
    return weights


def _needs_a_class(make_stage: Callable[[], Stage], unmade: bool) -> bool:
    """True when the stage ``make_stage()`` makes needs a nominal class (its ``accepts``); ``unmade`` when
    it cannot be made (invalid options)."""
    accepts = _accepts(make_stage)
    return unmade if accepts is None else accepts.nominal_class or accepts.two_classes


def _made(make_stage: Callable[[], Stage]) -> Stage | None:
    """The stage ``make_stage()`` makes, or None when it cannot be made (invalid options)."""
    try:
        return make_stage()
    except (FilterkitError, ValueError):
        return None


def _accepts(make_stage: Callable[[], Stage]) -> Accepts | None:
    """What the stage ``make_stage()`` makes accepts, None when it cannot be made; FilterkitError naming its
    plugin when its ``accepts`` raises or is no :class:`~filterkit.stage.Accepts`."""
    stage = _made(make_stage)
    return None if stage is None else declared(stage, "accepts", DECLARED_ACCEPTS)


def _drops_rows(stage_name: str) -> bool:
    """Whether the stage ``stage_name``, made with its default options, drops or adds rows (``filters_rows``;
    False when those cannot make it: ``keep``, ``select``); FilterkitError naming its plugin when its
    ``filters_rows`` raises or is no bool."""
    stage = _made(functools.partial(_registry().make_stage, stage_name, {}))
    return stage is not None and declared(stage, "filters_rows")


def _refuse_missing_documents(owner: str, columns: list | None) -> None:
    """ValueError where the documents X is (``columns``: one) are all missing (None): nothing to fit on."""
    if columns is not None and not holds_text(columns[0]):
        raise ValueError(f"{owner}: every document of X is missing (None): nothing to learn from")


def _schema(attributes: list[Attribute], labels: tuple[str, ...], label_names: tuple[str, ...] = ()) -> Schema:
    """The input attributes, then a nominal class when there are labels: ``y (the class)``, or
    ``y (the class) 1`` … when a feature has that name (no word of ``words`` can); or the label attributes
    ``{0,1}`` of a label matrix, named ``label_names``, last as MEKA's ``-C -k`` says."""
    if label_names:
        attributes = [*attributes, *(Attribute(name, NOMINAL, labels=LABEL_VALUES) for name in label_names)]
        return Schema(with_meka_label_count(_RELATION, -len(label_names)), tuple(attributes))
    if labels:
        taken = {attribute.name for attribute in attributes}
        names = ("y (the class)" + (f" {number}" if number else "") for number in itertools.count())
        name = next(name for name in names if name not in taken)
        attributes = [*attributes, Attribute(name, NOMINAL, labels=labels)]
    return Schema(_RELATION, tuple(attributes))


def _without(schema: Schema, targets) -> np.ndarray:
    """The positions of ``schema``'s attributes other than those called as ``targets`` (attributes) are."""
    names = {attribute.name for attribute in targets}
    return np.flatnonzero([attribute.name not in names for attribute in schema.attributes])


def _saved(stage: Stage) -> dict:
    """What rebuilds a fitted stage: its name, options, positive class and plain-array state."""
    return {
        "name": stage.name,
        "params": dict(stage.params),
        "positive": stage.context.positive,
        "state": stage.state(),
    }


def _restored(saved: dict, schema: Schema, with_class: bool) -> Stage:
    """The stage :func:`_saved` describes, prepared for ``schema`` (its last attribute the class ``with_class``: a
    nominal X column may stand last where the fit had no y)."""
    class_name = schema.attributes[-1].name if with_class else None
    stages = [(saved["name"], saved["params"], saved["state"])]
    return Chain.rebuilt(_registry(), stages, schema, class_name, saved["positive"]).stages[0]


def _init_storing(signature: inspect.Signature):
    """An ``__init__`` with ``signature`` that stores each parameter as given (scikit-learn's rule)."""

    def __init__(self, *args, **kwargs):
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        for name, value in list(bound.arguments.items())[1:]:
            setattr(self, name, value)

    __init__.__signature__ = signature  # type: ignore[attr-defined]  # inspect.signature reads it from any function
    return __init__


def _adapter_class(
    class_name: str,
    options: tuple[Option, ...],
    with_positive: bool,
    leading: tuple[Option, ...],
    summary: str,
    namespace: dict,
) -> type:
    """A transformer class whose parameters are ``leading`` (positional), ``options`` (``stage_NAME`` if
    named like an attribute of :class:`FilterkitTransformer`), ``positive`` and ``label_names``, documented from
    their declarations."""
    taken = set(dir(FilterkitTransformer)) | {"positive", "label_names"} | {o.name for o in leading}
    renamed = {o.name: f"stage_{o.name}" if o.name in taken else o.name for o in options}
    documented = [(o.name, o) for o in leading] + [(renamed[o.name], o) for o in options]
    if with_positive:
        documented.append(("positive", Option("positive", str, None, _POSITIVE_HELP)))
        documented.append(("label_names", Option("label_names", list, None, _LABEL_NAMES_HELP)))
    positional, keyword = inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY
    parameters = [inspect.Parameter("self", positional)] + [
        inspect.Parameter(name, positional if k < len(leading) else keyword, default=option.default)
        for k, (name, option) in enumerate(documented)
    ]
    lines = [summary, "", "Parameters", "----------"]
    for name, option in documented:
        note = "" if name == option.name else f"The stage's option '{option.name}'. "
        lines += [f"{name} : {option.kind.__name__}, default={option.default!r}", f"    {note}{option.help}"]
    return type(
        class_name,
        (FilterkitTransformer,),
        {
            **namespace,
            "__init__": _init_storing(inspect.Signature(parameters)),
            "__doc__": "\n".join(lines),
            "__module__": __name__,
            "__qualname__": class_name,
            "stage_parameters": renamed,
        },
    )


def class_name_for(stage_name: str) -> str:
    """A stage's transformer class name: its stage class's name when unique, else :func:`derived_class_name`."""
    own = _registry().stages[stage_name].value.__name__
    own_names = [registered.value.__name__ for registered in _registry().stages.values()]
    if own_names.count(own) == 1 and own.isidentifier():
        return own
    return derived_class_name(stage_name)


def derived_class_name(stage_name: str) -> str:
    """The name every stage's transformer also has: ``meanscale`` → ``MeanscaleTransformer``."""
    words = [word for word in re.split(r"[^0-9A-Za-z]+", stage_name) if word]
    name = "".join(word[:1].upper() + word[1:] for word in words) + "Transformer"
    return name if name[:1].isalpha() else "Stage" + name


@functools.cache
def transformer_for(stage_name: str) -> type[FilterkitTransformer]:
    """The scikit-learn transformer class of the registered stage ``stage_name``; ValueError for an
    unknown stage and for one that drops or adds rows (``fold``)."""
    try:
        registered = _registry().stages[stage_name]
    except KeyError:
        raise ValueError(
            f"no stage called {stage_name!r} (installed: {', '.join(sorted(_registry().stages))})"
        ) from None
    stage_class = registered.value
    if _drops_rows(stage_name):
        raise ValueError(
            f"stage '{stage_name}' drops or adds rows, which a scikit-learn transformer may not do "
            "(X and y must keep their rows in a Pipeline): use it on the command line"
        )
    summary = (
        f"{stage_class.summary}\n\nThe filterkit stage '{stage_name}' (plugin '{registered.plugin}', "
        f"{registered.distribution}) as a scikit-learn transformer."
    )
    return _adapter_class(
        class_name_for(stage_name),
        stage_class.options,
        _needs_a_class(functools.partial(_registry().make_stage, stage_name, {}), unmade=True),  # its defaults' needs
        (),
        summary,
        {"stage_name": stage_name},
    )


def _scorer_of_metric(self) -> str:
    """``ScoreScaler``'s stage: the scorer of the metric named by its ``metric``."""
    if self.metric not in _registry().metrics or self.metric not in _registry().stages:
        known = ", ".join(sorted(set(_registry().metrics) & set(_registry().stages)))
        raise ValueError(f"ScoreScaler: no scorer for metric {self.metric!r} (installed: {known})")
    return self.metric


@functools.cache
def _score_scaler() -> type[FilterkitTransformer]:
    """``ScoreScaler``, with the options every scorer shares: the default metric's scorer's, less that
    metric's own (``bns_half_document`` is no option of ``ig``'s scorer)."""
    own = set(_registry().metric(DEFAULT_METRIC).options)
    options = tuple(option for option in _registry().stage(DEFAULT_METRIC).options if option not in own)
    metric = Option("metric", str, DEFAULT_METRIC, "The metric to score by (any registered metric: bns, ig, chi, ...).")
    summary = (
        "Scale each numeric feature's training range to its score by a metric "
        "(the filterkit scorer stage of that metric; KDD'09 §2.2, §3.4)."
    )
    return _adapter_class("ScoreScaler", options, True, (metric,), summary, {"_stage_name": _scorer_of_metric})


def _stages_by_class_name() -> dict[str, str]:
    """Each stage's name by its transformer's class names (names two stages would share left out)."""
    names: dict[str, list[str]] = {}
    for stage_name in _transformable_stages():
        for class_name in dict.fromkeys((class_name_for(stage_name), derived_class_name(stage_name))):
            names.setdefault(class_name, []).append(stage_name)
    return {class_name: stages[0] for class_name, stages in names.items() if len(stages) == 1}


def _transformable_stages() -> list[str]:
    """The stages that have a transformer: those that keep their rows, one whose ``filters_rows`` is broken left
    out (:func:`transformer_for` names its plugin's fault)."""
    return [name for name in _registry().stages if not _drops_rows_or_is_broken(name)]


def _drops_rows_or_is_broken(stage_name: str) -> bool:
    try:
        return _drops_rows(stage_name)
    except FilterkitError:
        return True


def _exported_names() -> list[str]:
    """What ``from filterkit.sklearn import *`` gives: the adapters, ``transformer_for`` and ``load_arff``."""
    adapters = {class_name_for(stage_name) for stage_name in _transformable_stages()}
    return ["FilterkitTransformer", "ScoreScaler", "load_arff", "transformer_for", *sorted(adapters)]


def __getattr__(name: str):
    """``ScoreScaler``, each stage's transformer by its class name (made on first use), and ``__all__``."""
    if name == "__all__":
        return _exported_names()
    if name.startswith("_"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name == "ScoreScaler":
        return _score_scaler()
    stage_name = _stages_by_class_name().get(name)
    if stage_name is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r} (see transformer_for)")
    return transformer_for(stage_name)


def __dir__() -> list[str]:
    return sorted(set(_exported_names()) | set(_stages_by_class_name()) | {"class_name_for", "derived_class_name"})
