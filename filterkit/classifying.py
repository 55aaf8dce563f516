"""What a classifier sees of a chain's output and how it is called, for ``evaluate`` and ``train`` alike:
:func:`classifier_matrix` (numeric attributes, nominal ones one-hot), :func:`refuse_featureless_chain` and
:class:`CheckedClassifier` (a classifier plugin's answers checked against the classifier contract)."""

from __future__ import annotations

import collections

import numpy as np
import scipy.sparse as sp

from filterkit.classifier import CLASSIFIER_DECLARATIONS
from filterkit.contract import STATE_MISFITS, PluginCrash, called, declaration_problem, plugin_fault
from filterkit.errors import FilterkitError
from filterkit.schema import NOMINAL, NUMERIC, Chunk, Schema
from filterkit.stage_parts import renumbered_columns


def refuse_featureless_chain(chain: str, schema: Schema, class_index: int) -> None:
    """FilterkitError unless the output ``schema`` of ``chain`` leaves the classifier a feature (a numeric
    attribute, or a nominal one's label, besides the class): naming what the output holds instead."""
    others = [a for i, a in enumerate(schema.attributes) if i != class_index]
    if any(a.is_numeric or a.kind == NOMINAL and a.labels for a in others):
        return
    kinds = collections.Counter(a.kind for a in others)
    held = ", ".join(f"{count:,} {kind}" for kind, count in sorted(kinds.items()))
    held = f"{held} attribute{'s' if len(others) > 1 else ''} and the class" if held else "only the class"
    raise FilterkitError(
        f"the chain '{chain}' leaves the classifier no numeric feature (its output: {held}): the classifier reads "
        "numeric attributes and nominal ones (one-hot), not string or date ones: turn text into word vectors "
        "with words"
    )


def classifier_matrix(schema: Schema, chunk: Chunk, class_index) -> sp.csr_matrix:
    """What a classifier sees: numeric attributes, nominal ones one-hot, others dropped, missing as 0
    (a ``schema`` :func:`refuse_featureless_chain` accepts); ``class_index`` may be several positions (labels)."""
    matrix = sp.csr_matrix(chunk.values)
    blocks = []
    new_index, n_numeric = _numeric_features(schema, class_index)
    if n_numeric:
        data, indices, indptr, shape = renumbered_columns(matrix, new_index, n_numeric)
        blocks.append(sp.csr_matrix((data, indices, indptr), shape=shape))
    for position in schema.positions_of(NOMINAL).tolist():
        attribute = schema.attributes[position]
        if not np.isin(position, class_index):
            codes = chunk.column(position)
            rows = np.flatnonzero(~np.isnan(codes))
            blocks.append(
                sp.csr_matrix(
                    (np.ones(len(rows)), (rows, codes[rows].astype(np.int64))),
                    shape=(chunk.n_rows, len(attribute.labels)),
                )
            )
    features = sp.hstack(blocks, format="csr")
    features.data[np.isnan(features.data)] = 0.0  # an infinite value stays one: its decision is refused, not DBL_MAX's
    features.eliminate_zeros()
    return features


#: The largest magnitude of a feature a classifier is given: liblinear's primal Newton solver squares squared norms,
#: so from about 1e77 (a double's largest to the power 1/4) its steps overflow and it runs without end, uninterruptible
#: (1e80 in one of iris's 150 rows); no meaningful feature comes near it.
LARGEST_FEATURE = 1e60


def fitted_features(
    schema: Schema,
    chunk: Chunk,
    class_index,
    rows: np.ndarray,
    input_rows: np.ndarray | None = None,
    fitted_on: bool = True,
) -> sp.csr_matrix:
    """:func:`classifier_matrix` of a classifier's training or test ``rows`` (their positions among the training
    rows, then a test file's, or among ``input_rows``: each kept row's number in the input, rows of a missing class
    left out); FilterkitError naming the first row holding a value that is not a finite number, which liblinear
    refuses, or (rows a classifier is ``fitted_on``, not rows it scores) past :data:`LARGEST_FEATURE`, on which it
    does not return."""
    features = classifier_matrix(schema, chunk, class_index)
    bound = LARGEST_FEATURE if fitted_on else np.inf
    unbounded = np.flatnonzero(~(np.abs(features.data) <= bound))
    if len(unbounded):
        row = np.asarray(rows)[int(np.searchsorted(features.indptr, unbounded[0], side="right")) - 1]
        number = int(row) + 1 if input_rows is None else int(input_rows[row])
        value = float(features.data[unbounded[0]])
        why = (
            f"the value {value:g}, past the {LARGEST_FEATURE:g} a linear SVM can be fitted on (liblinear's steps "
            "overflow, and it runs without end)"
            if np.isfinite(value)
            else "a value that is not a finite number (it passes a double's range)"
        )
        raise FilterkitError(
            f"row {number} (of the training rows, then the test file's): the chain writes it {why}: check the row's "
            "values, or scale them first"
        )
    return features


def _numeric_features(schema: Schema, class_index) -> tuple[np.ndarray, int]:
    """Per column of ``schema``, its number among the classifier's numeric features (−1: not one, the class or
    labels ``class_index`` left out) and how many there are: made once per schema and class, as
    :meth:`Schema.positions_of` is (a one-document predict of a 121,093-word model spent 0.5 of its 1.4 ms
    selecting the columns by a fancy index and ``np.isin``, both sorting every column's position)."""
    key = tuple(np.atleast_1d(class_index).tolist())
    made = schema.__dict__.setdefault("_numeric_features", {})
    found = made.get(key)
    if found is None:
        numeric = schema.positions_of(NUMERIC)
        numeric = numeric[~np.isin(numeric, class_index)]
        new_index = np.full(len(schema.attributes), -1, dtype=np.int64)
        new_index[numeric] = np.arange(len(numeric))
        new_index.flags.writeable = False
        found = made[key] = (new_index, len(numeric))
    return found


class CheckedClassifier:
    """A classifier made with ``params``: called with a method's name and arguments, it calls it, a failure or
    (given the ``shape`` expected) a malformed answer becoming a FilterkitError naming the classifier's plugin."""

    def __init__(self, registry, name: str, params: dict):
        registered = registry.classifiers[name]
        self.origin = f"classifier '{name}' ({registered.provenance})"
        self.classifier = called(self.origin, "construction", lambda: registered.value(**params))

    def __call__(self, method: str, *args, shape: tuple | None = None):
        value = called(self.origin, method, lambda: getattr(self.classifier, method)(*args))
        return value if shape is None else self.per_row(value, shape, method)

    def load_state(self, state) -> None:
        """The classifier given its saved ``state``: a state it cannot take (:data:`STATE_MISFITS`) is the model's
        fault, a FilterkitError; any other crash is its plugin's, a :class:`PluginCrash`, as a stage's is."""
        try:
            self.classifier.load_state(state)
        except FilterkitError:
            raise
        except STATE_MISFITS as error:
            raise FilterkitError(f"{self.origin} failed during load_state: {type(error).__name__}: {error}") from None
        except BaseException as error:
            if not plugin_fault(error):
                raise
            crash = f"{type(error).__name__}: {error}"
        else:
            return
        raise PluginCrash(f"{self.origin} failed while loading its saved state: {crash}")

    def provides(self, declaration: str) -> bool:
        """The classifier's ``declaration`` (``has_weights``…: :data:`CLASSIFIER_DECLARATIONS`), read of this
        instance; a FilterkitError naming its plugin when reading it raises or it is no bool."""
        problem = declaration_problem(self.classifier, {declaration: CLASSIFIER_DECLARATIONS[declaration]})
        if problem is not None:
            raise FilterkitError(f"{self.origin}: {problem}")
        return getattr(self.classifier, declaration)

    def per_row(self, values, shape: tuple, method: str) -> np.ndarray:
        """``values`` (what ``method`` returned) as one real number per test row (and per class, for a ``shape`` of
        two); a FilterkitError naming the classifier's plugin where they are not."""
        try:
            array = np.asarray(values, dtype=np.float64)
        except (TypeError, ValueError):
            array = np.array([np.nan])
        if array.shape != shape or np.isnan(array).any():
            what = "NaN" if array.shape == shape else f"values of shape {np.shape(values)}"
            expected = (
                f"{shape[0]} test rows (one number per row is expected)"
                if len(shape) == 1
                else f"{shape[0]} test rows and {shape[1]} classes (one number per row and class is expected)"
            )
            raise self.broken(f"{method} returned {what} for {expected}")
        if method == "predict" and not np.isin(array, (0.0, 1.0)).all():  # a score had been read as True
            other = array[~np.isin(array, (0.0, 1.0))].flat[0]
            raise self.broken(f"predict returned {other!r} where a decision (True or False) is expected")
        return array

    def broken(self, what: str) -> FilterkitError:
        """The error of an answer that breaks the classifier contract."""
        return FilterkitError(f"{self.origin} broke the classifier contract: {what}")


def feature_names(schema: Schema, left_out) -> list[str]:
    """The names of :func:`classifier_matrix`'s columns: each numeric attribute's, then ``NAME=LABEL`` per label
    of each nominal attribute, the class (or the labels, ``left_out`` positions) left out."""
    skipped = {int(position) for position in np.ravel(left_out)}
    attributes = [a for i, a in enumerate(schema.attributes) if i not in skipped]
    numeric = [a.name for a in attributes if a.is_numeric]
    return numeric + [f"{a.name}={label}" for a in attributes if a.kind == NOMINAL for label in a.labels]


#: What a fit without inner cross-validation (a class, or a label's side, of one training row) gave up.
NO_INNER_FOLDS = (
    "too few for inner folds: C is the grid's first, not searched, and no Platt sigmoid or threshold was fitted "
    "(the margin's sign decides)"
)


def without_inner_folds(described: object) -> bool:
    """Whether a fitted classifier's ``describe()`` says its fit had no inner cross-validation (``inner_folds`` below
    2: a class, or a label's side, of one training row)."""
    folds = described.get("inner_folds") if isinstance(described, dict) else None
    return isinstance(folds, int) and folds < 2


def fit_warnings(described: object) -> list[str]:
    """The warnings a fitted classifier's ``describe()`` calls for: a fit without inner folds."""
    return [f"a class has one training row, {NO_INNER_FOLDS}"] if without_inner_folds(described) else []


def labels_without_inner_folds(labels, described) -> list[str]:
    """The warning naming the labels whose fitted classifiers' ``describe()`` records (``described``, in the order of
    ``labels``) say they had no inner folds (one training row on one side), if any."""
    alone = [f"'{label}'" for label, fit in zip(labels, described) if without_inner_folds(fit)]
    return [f"label {', '.join(alone)}: one training row on one side, {NO_INNER_FOLDS}"] if alone else []
