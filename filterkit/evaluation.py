"""The papers' evaluation protocol (KDD'09 §4; docs/algorithms.md §8 states it): :func:`evaluate`.

Seeded stratified k-fold cross-validation, the folds drawn once for every chain and task; a fresh chain per
fold, task and training fraction is fitted on the training rows only and applied to the test rows.  The
fold records become the result document (:func:`result_document`), which :mod:`filterkit.reports` renders.
"""

from __future__ import annotations

import collections
import contextlib
import functools
import math
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from filterkit import reports
from filterkit.arff.reader import DEFAULT_CHUNK_ROWS
from filterkit.classifier import CLASSIFIER_DECLARATIONS
from filterkit.contract import called, declaration_problem
from filterkit.documents import as_json
from filterkit.errors import FilterkitError
from filterkit.formats import FormatOptions
from filterkit.measures import (
    MULTICLASS_MEASURES,
    PER_CLASS_MEASURES,
    breakeven,
    class_records,
    contingency,
    macro_average,
    macro_spread,
    mcnemar,
    measures,
    micro_average,
    multiclass_measures,
    paired_comparison,
    summarize,
    summarize_multiclass,
)
from filterkit.metrics import minority_class
from filterkit.runner import Chain, class_hint, resolve_class
from filterkit.schema import NOMINAL, NUMERIC, Chunk, Schema, check_positive, concatenate, take_rows
from filterkit.sources import MemorySource
from filterkit.stage import feature_positions, task_choices

#: The task name of a ``--multiclass`` evaluation (every class at once).
MULTICLASS_TASK = "(all classes)"


@dataclass
class ChainSpec:
    """One chain to evaluate: its text, its stages' (name, params) and, in a sweep, the option's value."""

    text: str
    stages: list[tuple[str, dict]]
    sweep: dict = field(default_factory=dict)


@dataclass
class Settings:
    """Everything one evaluation run depends on: ``evaluate``'s options (``sweep`` is only recorded)."""

    folds: int = 10
    seed: int = 1
    train_fractions: tuple[float, ...] = (1.0,)
    classifier: str = "svm"
    classifier_params: dict = field(default_factory=dict)
    repeats: int = 1
    multiclass: bool = False
    class_spec: str = "last"
    positive: str | None = None
    each_class: bool = False
    min_positives: int = 50
    stats: bool = False
    sweep: str | None = None
    #: Multi-label data (:mod:`filterkit.evaluation_labels`): Mulan's XML naming the labels, the threshold
    #: (``decision`` or ``pcut``) and whether the chain is fitted once per label (with its ``--label``).
    labels_file: str | None = None
    threshold: str = "decision"
    chain_per_label: bool = False


@dataclass
class Evaluation:
    """What :func:`evaluate` returns: the document ``evaluate --json`` prints and its renderings; with a
    test file, also per (chain, task, fraction) its test rows (from 1), truth, scores and decisions."""

    document: dict
    predictions: list[dict] = field(default_factory=list)

    def table(self, per_task: bool = False) -> str:
        """The text table ``evaluate`` prints (``per_task``: also a row per task)."""
        return reports.table(self.document, per_task)

    def json(self) -> str:
        """The JSON text ``evaluate --json`` prints."""
        return as_json(self.document)

    def html(self, per_task: bool = False) -> str:
        """The self-contained HTML page ``evaluate --report`` writes (needs matplotlib)."""
        return reports.html_page(self.document, per_task)

    def predictions_csv(self) -> str:
        """The scored test rows as CSV (``evaluate --predictions``): chain, task, train, row, truth, score, decision."""
        return reports.predictions_csv(self.predictions)


@dataclass(frozen=True)
class Dataset:
    """The rows every fit draws from (the training rows, then a test file's), schema and class position."""

    schema: Schema
    data: Chunk
    class_index: int

    @property
    def labels(self) -> tuple[str, ...]:
        """The class attribute's labels."""
        return self.schema.attributes[self.class_index].labels


def evaluate(
    source,
    chains: list[ChainSpec],
    settings: Settings = Settings(),
    registry=None,
    *,
    name: str | None = None,
    plugins_dir=None,
    jobs: int = 1,
    progress=None,
    test=None,
    test_name: str | None = None,
    engine: str = "local",
    scheduler: str | None = None,
    input_format: str | None = None,
    reading: FormatOptions | None = None,
) -> Evaluation:
    """Cross-validate ``chains`` on ``source`` (a path, or a source called ``name``) under ``settings``, in
    up to ``jobs`` processes or on Dask (``engine="dask"``, at ``scheduler``), with the plugins of
    ``registry`` (by default those found with ``plugins_dir``).  Rows with a missing class are left out.
    Given ``test`` (a path, or a source called ``test_name``), each chain is fitted on all of ``source``
    and scored once on ``test``'s rows.  A path is read in ``input_format`` (None: by its name) with the
    ``reading`` options; a test file that is not ARFF is read with the training data's header, as ``apply``
    reads new rows."""
    from filterkit.plugins import load_plugins
    from filterkit.progress import Progress

    reading = FormatOptions(settings.class_spec) if reading is None else reading
    with contextlib.ExitStack() as stack:
        source, name = stack.enter_context(opened_input(source, name, "<data>", input_format, reading))
        test, test_name = stack.enter_context(opened_input(test, test_name, "<test>", None, reading, source.schema))
        registry = load_plugins(plugins_dir) if registry is None else registry
        progress = Progress() if progress is None else progress
        progress.expect(2 if test is None else 3)
        dataset, training_rows = read_dataset(source, name, test, test_name, settings, progress)
        codes = dataset.data.column(dataset.class_index)
        known = np.flatnonzero(~np.isnan(codes))
        if len(known) < len(codes):
            dataset = Dataset(dataset.schema, take_rows(dataset.data, known), dataset.class_index)
        in_test = known >= training_rows
        labels, known_codes = dataset.labels, codes[known].astype(np.int64)
        counts, test_counts = (np.bincount(known_codes[rows], minlength=len(labels)) for rows in (~in_test, in_test))
        tasks = _tasks(labels, counts, settings, name, cross_validated=test is None)
        if test is not None:
            _check_training_file(labels, counts, test_counts, tasks, settings.multiclass, name, test_name)
        with progress.working("drawing the folds"):
            draws = _draws(known_codes, settings, in_test if test is not None else None)
        workers = (jobs, engine, scheduler, plugins_dir)
        grouped, ratios = _cross_validate(registry, dataset, chains, tasks, settings, workers, progress, draws)
        progress.finish()
        extra = {
            "input": name,
            "class": dataset.schema.attributes[dataset.class_index].name,
            "class_counts": dict(zip(labels, counts.tolist())),
            "chains": [c.text for c in chains],
            "tasks": tasks,
            **({"sweep": settings.sweep} if settings.sweep is not None else {}),
        }
        if test is not None:
            extra.update(
                test=test_name, test_rows=int(in_test.sum()), test_class_counts=dict(zip(labels, test_counts.tolist()))
            )
        fold_of_row = None if test is not None else _fold_of_row(draws, settings.folds, len(known))
        left_out = len(codes) - len(known)
        settings_json = settings_document(settings, int(np.sum(~in_test)), left_out, fold_of_row, extra)
        document = result_document(chains, tasks, settings, grouped, settings_json, ratios)
        rows = known[in_test] - training_rows + 1
        predictions = [
            {"chain": c, "task": t, "train_fraction": f, "rows": rows, **records[0]}
            for (c, t, f), records in grouped.items()
            if test is not None
        ]
        return Evaluation(document, predictions)


@contextlib.contextmanager
def opened_input(
    source, name: str | None, default: str, given_format: str | None, reading: FormatOptions, known_schema=None
):
    """``(source, name)``: a path (``-``: standard input) opened and named by it, read in ``given_format``
    (None: by its name) with ``reading`` (and ``known_schema``'s header, when not ARFF), else the source as
    given."""
    if isinstance(source, (str, os.PathLike)):
        from filterkit.running import open_source

        path = os.fspath(source)
        with open_source(path, DEFAULT_CHUNK_ROWS, False, given_format, reading, known_schema) as opened:
            yield opened, os.fspath(source) if name is None else name
    else:
        yield source, default if name is None else name


def read_dataset(source, name: str, test, test_name: str, settings: Settings, progress) -> tuple[Dataset, int]:
    """The rows of ``source`` and then of ``test`` (if any), and the number of ``source``'s rows."""
    schema = source.schema
    class_index = resolve_class(schema, settings.class_spec)
    if class_index is None or schema.attributes[class_index].kind != NOMINAL:
        raise FilterkitError(
            "the classifier needs a nominal class attribute (-c)" + class_hint(schema, class_index), name
        )
    check_positive(settings.positive, schema.attributes[class_index], name)
    data, training_rows = read_rows(source, name, test, test_name, settings, progress)
    return Dataset(schema, data, class_index), training_rows


def read_rows(source, name: str, test, test_name: str, settings: Settings, progress) -> tuple[Chunk, int]:
    """The rows of ``source`` and then of ``test`` (if any; its header checked), and the number of ``source``'s."""
    schema = source.schema

    def read(source, name: str) -> Chunk:
        with progress.step(f"reading {name}", source) as meter:
            return concatenate(list(meter.counted(source.chunks())), len(schema), schema.text_columns())

    data = read(source, name)
    training_rows = data.n_rows
    if test is not None:
        difference = schema.first_difference(test.schema)
        if difference is not None:
            raise FilterkitError(f"header differs from the training data: {difference}", test_name)
        if settings.repeats > 1:
            raise FilterkitError("a test file is scored once: --repeats needs cross-validation", test_name)
        data = concatenate([data, read(test, test_name)], len(schema), schema.text_columns())
    return data, training_rows


def known_class_rows(dataset: Dataset) -> Dataset:
    """``dataset`` without its rows of a missing class (which no fit or score uses)."""
    codes = dataset.data.column(dataset.class_index)
    known = np.flatnonzero(~np.isnan(codes))
    return (
        dataset
        if len(known) == len(codes)
        else Dataset(dataset.schema, take_rows(dataset.data, known), dataset.class_index)
    )


def _check_training_file(labels, counts, test_counts, tasks, multiclass: bool, name: str, test_name: str) -> None:
    """Refuse a test file with no row to score, and a training file that cannot learn what is scored."""
    if not test_counts.any():
        raise FilterkitError("the test file has no row with a class to score", test_name)
    for label in labels if multiclass else tasks:
        rows = int(counts[labels.index(label)])
        if rows == 0 and (test_counts[labels.index(label)] or not multiclass):
            raise FilterkitError(f"the training file has no row of class '{label}' to learn it from", name)
        if rows == counts.sum() and not multiclass:
            raise FilterkitError(f"the training file has only rows of class '{label}': nothing to tell it from", name)


def _tasks(labels, counts: np.ndarray, settings: Settings, name: str, cross_validated: bool) -> list[str]:
    """The run's tasks (:func:`choose_tasks`, or the one of ``--multiclass``), ``counts`` checked against the folds."""
    if settings.multiclass and np.count_nonzero(counts) < 2:
        raise FilterkitError("--multiclass needs rows of at least two classes", name)
    tasks = (
        [MULTICLASS_TASK]
        if settings.multiclass
        else choose_tasks(labels, counts, settings.positive, settings.each_class, settings.min_positives)
    )
    largest = int(np.argmax(counts))
    if cross_validated and settings.folds > counts[largest]:
        raise FilterkitError(
            f"--folds {settings.folds} is more than the {counts[largest]} rows of the largest class "
            f"('{labels[largest]}'): stratified folds need a class with a row in every fold",
            name,
        )
    return tasks


def repeat_seed(seed: int, repeat: int) -> int:
    """The seed of repeat ``repeat``'s fold draw: ``seed`` for the first, then one derived from both."""
    if repeat == 0:
        return seed
    return int(np.random.SeedSequence([seed, repeat]).generate_state(1)[0] >> 1)


def choose_tasks(
    labels: tuple[str, ...], counts: np.ndarray, positive: str | None, each_class: bool, min_positives: int
) -> list[str]:
    """The positive labels of the class-vs-rest tasks: ``positive`` (a label: :func:`read_dataset` checks it); with
    ``each_class`` every class with at least ``min_positives`` rows (of two classes the minority, as KDD'09); else
    two classes' minority."""
    if positive is not None:
        if each_class:
            raise FilterkitError(f"--positive {positive} and --each-class both choose the tasks: give one")
        return [positive]
    if len(labels) == 2:
        minority = minority_class(counts)
        if each_class and counts[minority] < min_positives:
            raise FilterkitError(
                f"the minority class '{labels[minority]}' has {int(counts[minority])} rows, "
                f"fewer than --min-positives {min_positives}"
            )
        return [labels[minority]]
    if not each_class:
        raise FilterkitError(
            f"the class has {len(labels)} labels: choose the task with {task_choices(len(labels), 'evaluate')}"
        )
    tasks = [label for label, count in zip(labels, counts) if count >= min_positives]
    if not tasks:
        raise FilterkitError(
            f"no class has at least --min-positives {min_positives} rows (largest: {int(counts.max())})"
        )
    return tasks


def stratified_folds(codes: np.ndarray, folds: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """(training rows, test rows) of each stratified fold (scikit-learn's, silent about a small class)."""
    import warnings

    from sklearn.model_selection import StratifiedKFold

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return list(StratifiedKFold(folds, shuffle=True, random_state=seed).split(np.zeros(len(codes)), codes))


def nested_subsamples(train: np.ndarray, codes: np.ndarray, fractions, seed: int) -> dict[float, np.ndarray]:
    """Per fraction f, ⌈f · n_c⌉ training rows of each class c, each sample inside the next larger one."""
    generator = np.random.default_rng(seed)
    orders = [generator.permutation(train[codes[train] == label]) for label in np.unique(codes[train])]
    return {
        fraction: np.sort(np.concatenate([order[: max(1, math.ceil(fraction * len(order)))] for order in orders]))
        for fraction in fractions
    }


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
    numeric = schema.positions_of(NUMERIC)
    numeric = numeric[~np.isin(numeric, class_index)]
    if len(numeric):
        blocks.append(matrix[:, numeric])
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
    features.data = np.nan_to_num(features.data, nan=0.0)
    features.eliminate_zeros()
    return features


def evaluate_fold(registry, dataset: Dataset, chain: ChainSpec, task: str, train, test, settings: Settings) -> dict:
    """Fit ``chain`` on the ``train`` rows for ``task`` (or every class), apply it to the ``test`` rows,
    classify them and measure."""
    multiclass = settings.multiclass
    output_class, prepared, _ = fitted_chain(registry, dataset, chain, train, None if multiclass else task)
    if multiclass and output_class.labels != dataset.labels:
        raise FilterkitError(f"chain '{chain.text}' changes the class labels, which --multiclass cannot score")
    rows = prepared(train), prepared(test)
    call = CheckedClassifier(registry, settings.classifier, settings.classifier_params)
    if multiclass:
        result, truth, scores, decisions = _classify_multiclass(call, dataset, *rows, settings)
    else:
        result, truth, scores, decisions = _classify_task(call, dataset.labels.index(task), task, *rows, settings)
    result["classifier"] = call("describe")
    result["features"] = int(rows[0][0].shape[1])
    result.update(truth=truth, scores=scores, decisions=decisions)
    return result


def _classify_task(call, positive: int, task: str, train: tuple, test: tuple, settings: Settings):
    """(measures, truth, scores, decisions) of a binary classifier fitted on the task ``positive``."""
    (train_features, train_codes), (test_features, test_codes) = train, test
    fit_task(call, positive, task, train_features, train_codes, settings)
    test_truth = test_codes == positive
    rows = (len(test_truth),)
    scores = call("score", test_features, shape=rows)
    decisions = call("predict", test_features, shape=rows).astype(bool)
    result: dict[str, Any] = dict(measures(test_truth, scores, decisions))
    result["breakeven"] = breakeven(test_truth, scores)
    result["counts"] = contingency(test_truth, decisions)
    return result, test_truth, scores, decisions


def fit_task(call, positive: int, task: str, features, codes: np.ndarray, settings: Settings) -> None:
    """Fit the binary classifier (``call``: a :class:`CheckedClassifier`) on the task of class position
    ``positive`` (named ``task``) against the rest, from ``features`` and class ``codes``."""
    truth = codes == positive
    if truth.all() or not truth.any():
        missing = "no row of" if not truth.any() else "only rows of"
        raise FilterkitError(
            f"task '{task}': a training fold holds {missing} class '{task}' ({int(np.sum(truth))} of "
            f"{len(truth)} rows); the class is too small (or too large) for {settings.folds} folds"
        )
    call("fit", features, truth.astype(np.int64), settings.seed)


def fit_classes(call, dataset: Dataset, features, codes: np.ndarray, settings: Settings) -> np.ndarray:
    """Fit the k-class classifier on the classes present in ``dataset`` (whose positions it returns),
    from ``features`` and class ``codes``."""
    labels = dataset.labels
    present = np.flatnonzero(
        np.bincount(dataset.data.column(dataset.class_index).astype(np.int64), minlength=len(labels))
    )
    classes = feature_positions(len(labels), present)[codes.astype(np.int64)]
    missing = np.flatnonzero(np.bincount(classes, minlength=len(present)) == 0)
    if len(missing):
        raise FilterkitError(
            f"--multiclass: a training fold holds no row of class '{labels[present[missing[0]]]}'; "
            f"the class is too small for {settings.folds} folds"
        )
    call("fit_multiclass", features, classes, len(present), settings.seed)
    return present


def _classify_multiclass(call, dataset: Dataset, train: tuple, test: tuple, settings: Settings):
    """(measures, truth, scores, decisions) of a k-class classifier over the classes present in ``dataset``."""
    (train_features, train_codes), (test_features, test_codes) = train, test
    labels = dataset.labels
    present = fit_classes(call, dataset, train_features, train_codes, settings)
    test_classes = feature_positions(len(labels), present)[test_codes.astype(np.int64)]
    shape = (len(test_classes), len(present))
    scores = call("class_scores", test_features, shape=shape)
    predicted = call("predict_class", test_features, shape=shape[:1])
    if not np.all(np.isin(predicted, np.arange(len(present)))):
        raise call.broken(f"predict_class returned a value that is not a class position 0 … {len(present) - 1}")
    predicted = predicted.astype(np.int64)
    result = multiclass_measures(test_classes, scores, predicted, [labels[i] for i in present])
    return result, test_classes, scores, predicted


class CheckedClassifier:
    """A classifier made with ``params``: called with a method's name and arguments, it calls it, a failure or
    (given the ``shape`` expected) a malformed answer becoming a FilterkitError naming the classifier's plugin."""

    def __init__(self, registry, name: str, params: dict):
        registered = registry.classifiers[name]
        self.origin = f"classifier '{name}' ({registered.provenance})"
        self.classifier = called(self.origin, "construction", lambda: registered.value(**params))

    def __call__(self, method: str, *args, shape: tuple | None = None):
        value = called(self.origin, method, lambda: getattr(self.classifier, method)(*args))
        return value if shape is None else self._per_row(value, shape, method)

    def provides(self, declaration: str) -> bool:
        """The classifier's ``declaration`` (``has_weights``…: :data:`CLASSIFIER_DECLARATIONS`), read of this
        instance; a FilterkitError naming its plugin when reading it raises or it is no bool."""
        problem = declaration_problem(self.classifier, {declaration: CLASSIFIER_DECLARATIONS[declaration]})
        if problem is not None:
            raise FilterkitError(f"{self.origin}: {problem}")
        return getattr(self.classifier, declaration)

    def _per_row(self, values, shape: tuple, method: str) -> np.ndarray:
        """``values`` as one real number per test row (and per class, for a ``shape`` of two)."""
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
        return array

    def broken(self, what: str) -> FilterkitError:
        """The error of an answer that breaks the classifier contract."""
        return FilterkitError(f"{self.origin} broke the classifier contract: {what}")


def fitted_chain(registry, dataset: Dataset, chain: ChainSpec, train, positive=None):
    """``chain`` fitted on the ``train`` rows: its output's class attribute, what it makes of some rows
    (their classifier features and class codes), and the fitted :class:`Chain`."""
    stages = [registry.make_stage(name, params) for name, params in chain.stages]
    fitted = Chain(stages, class_spec=str(dataset.class_index + 1), positive=positive).fit(
        MemorySource(dataset.schema, take_rows(dataset.data, train))
    )
    assert fitted.output_schema is not None and fitted.class_name is not None  # fitted, with the class given
    output_schema = fitted.output_schema
    if all(attribute.name != fitted.class_name for attribute in output_schema.attributes):
        raise FilterkitError(
            f"the chain '{chain.text}' removes the class attribute '{fitted.class_name}', which the classifier "
            "learns from"
        )
    output_class = output_schema.index_of(fitted.class_name)
    refuse_featureless_chain(chain.text, output_schema, output_class)

    def prepared(rows):
        transformed = next(iter(fitted.transform([take_rows(dataset.data, rows)])))
        return classifier_matrix(output_schema, transformed, output_class), transformed.column(output_class)

    return output_schema.attributes[output_class], prepared, fitted


def _draws(codes: np.ndarray, settings: Settings, in_test: np.ndarray | None) -> list[tuple]:
    """(fold, test rows, per training fraction its training rows) of each fold of each repeat; with
    ``in_test`` (a test file's rows) one draw testing those rows."""
    fractions = settings.train_fractions
    if in_test is not None:
        training = np.flatnonzero(~in_test)
        return [(0, np.flatnonzero(in_test), nested_subsamples(training, codes, fractions, settings.seed))]
    return [
        (fold, test, nested_subsamples(train, codes, fractions, repeat_seed(settings.seed, repeat) + fold))
        for repeat in range(settings.repeats)
        for fold, (train, test) in enumerate(
            stratified_folds(codes, settings.folds, repeat_seed(settings.seed, repeat))
        )
    ]


def _fold_of_row(draws: list[tuple], folds: int, rows: int) -> np.ndarray:
    fold_of_row = np.zeros(rows, dtype=np.int64)
    for fold, test, _ in draws[:folds]:
        fold_of_row[test] = fold
    return fold_of_row


def _cross_validate(registry, dataset: Dataset, chains, tasks, settings: Settings, workers: tuple, progress, draws):
    """Every (chain, task, fraction)'s fold results over ``draws``, and per fraction the mean ratio of test
    to training rows; ``workers`` is (jobs, engine, scheduler, plugins_dir)."""
    fractions = settings.train_fractions
    items = [
        (chain, task, fold, fraction, samples[fraction], test)
        for task in tasks
        for fold, test, samples in draws
        for chain in chains
        for fraction in fractions
    ]
    fits = [(chain, task, train, test) for chain, task, _, _, train, test in items]
    jobs, engine, scheduler, plugins_dir = workers
    grouped: dict[tuple, list] = {}
    step = "cross-validating" if len(draws) > 1 else "scoring the test file"  # folds: at least two draws
    with contextlib.ExitStack() as stack:
        if engine == "dask":
            results = stack.enter_context(
                _dask_results(registry, plugins_dir, dataset, chains, fits, settings, scheduler, progress)
            )
        elif min(jobs, len(fits)) == 1:
            results = (evaluate_fold(registry, dataset, *fit, settings) for fit in fits)
        else:
            from joblib import Parallel, delayed

            results = Parallel(n_jobs=min(jobs, len(fits)), return_as="generator")(
                delayed(_evaluate_in_worker)(plugins_dir, dataset, *fit, settings) for fit in fits
            )
        meter = stack.enter_context(progress.step(step, items=len(items), unit="fits"))
        for (chain, task, fold, fraction, _, _), result in zip(items, results):
            grouped.setdefault((chain.text, task, fraction), []).append(result)
            meter.advance(detail=f"task {task}, fold {fold + 1}, chain '{chain.text}'")
    ratios = {f: float(np.mean([len(test) / len(samples[f]) for _, test, samples in draws])) for f in fractions}
    return grouped, ratios


@functools.lru_cache(maxsize=4)
def _worker_registry(plugins_dir):
    from filterkit.plugins import load_plugins

    return load_plugins(plugins_dir)


def _evaluate_in_worker(plugins_dir, dataset: Dataset, chain, task, train, test, settings: Settings):
    return evaluate_fold(_worker_registry(plugins_dir), dataset, chain, task, train, test, settings)


@contextlib.contextmanager
def _dask_results(registry, plugins_dir, dataset: Dataset, chains, fits, settings: Settings, scheduler, progress):
    """The results of ``fits`` (:func:`evaluate_fold`'s arguments) as tasks on the Dask cluster at
    ``scheduler`` (None: a local one), in their order; the rows are sent to every worker once."""
    from filterkit.distributed import DaskEngine, results_in_order

    with DaskEngine.connect(scheduler, plugins_dir, 0, progress) as engine:
        for chain in chains:
            engine.check_workers(Chain([registry.make_stage(name, params) for name, params in chain.stages]))
        client = engine.client
        (shared,) = client.scatter([dataset], broadcast=True)
        yield results_in_order(
            [client.submit(_evaluate_in_worker, engine.plugins_dir, shared, *fit, settings, pure=False) for fit in fits]
        )


def result_document(chains, tasks, settings: Settings, grouped: dict, settings_json: dict, ratios: dict) -> dict:
    """The JSON document of an evaluation (:class:`Evaluation`) from each (chain text,
    task, fraction)'s fold records ``grouped``, under ``settings_json`` (:func:`settings_document`):
    flat for one chain, task and fraction (unless ``--multiclass``); else the results and, but with
    ``--multiclass``, each chain's macro averages (:func:`_macro_entry`); with ``settings.stats``, paired
    tests of every chain against the first (:func:`_paired`; ``ratios``: per fraction, test rows / training
    rows, for the corrected t-test)."""
    multiclass, fractions = settings.multiclass, settings.train_fractions
    results = [
        _result(chain, task, fraction, grouped[(chain.text, task, fraction)], settings)
        for chain in chains
        for task in tasks
        for fraction in fractions
    ]
    if len(results) == 1 and not multiclass:
        return {**results[0], "settings": settings_json}
    document = {"settings": settings_json, "results": results}
    if not multiclass:
        document["macro"] = [
            _macro_entry(chain, fraction, tasks, settings, grouped, results)
            for chain in chains
            for fraction in fractions
        ]
    if settings.stats and len(chains) > 1:
        held_out = "test" in settings_json
        document["paired"] = [
            _paired(chain.text, chains[0].text, fraction, grouped, ratios[fraction], tasks, multiclass, held_out)
            for chain in chains[1:]
            for fraction in fractions
        ]
    return document


def _paired(
    chain: str, baseline: str, fraction: float, grouped: dict, ratio: float, tasks, multiclass: bool, held_out: bool
) -> dict:
    """``chain`` against ``baseline`` on the same folds: each measure over tasks and over folds (with
    ``--multiclass``, overall and per class).  Scored on a test file (``held_out``: one draw, so no test
    over folds), also per task McNemar's test of ``chain``'s decisions against ``baseline``'s on its rows."""
    records, baseline_records = (
        {task: grouped[(name, task, fraction)] for task in tasks} for name in (chain, baseline)
    )
    paired = {"chain": chain, "baseline": baseline, "train_fraction": fraction}
    if multiclass:
        paired.update(_multiclass_paired(records[MULTICLASS_TASK], baseline_records[MULTICLASS_TASK], ratio))
    else:
        paired["measures"] = paired_comparison(records, baseline_records, ratio)
    if held_out:
        paired["mcnemar"] = {
            task: mcnemar(ours[0]["truth"], ours[0]["decisions"], baseline_records[task][0]["decisions"])
            for task, ours in records.items()
        }
    return paired


def settings_document(
    settings: Settings, rows_used: int, left_out: int, fold_of_row: np.ndarray | None, extra: dict
) -> dict:
    """The ``settings`` of the JSON document: the protocol, the (training) rows used, each row's fold
    (None: scored on a test file, no folds) and ``extra``; with several repeats each repeat's fold seed."""
    document = {
        **({"folds": settings.folds} if fold_of_row is not None else {}),
        "seed": settings.seed,
        "train_fractions": list(settings.train_fractions),
        "classifier": settings.classifier,
        "classifier_params": settings.classifier_params,
        **({"multiclass": True} if settings.multiclass else {}),
        "rows": rows_used,
        "rows_with_missing_class_left_out": left_out,
        **({"fold_of_row": fold_of_row.tolist()} if fold_of_row is not None else {}),
        **extra,
    }
    if settings.repeats > 1:
        document["repeats"] = settings.repeats
        document["fold_seeds"] = [repeat_seed(settings.seed, r) for r in range(settings.repeats)]
    return document


def _result(chain, task: str, fraction: float, records: list[dict], settings: Settings) -> dict:
    """One result of the document: its chain, task, training fraction, swept values and its records' summary."""
    if settings.multiclass:
        summary = summarize_multiclass(records, settings.repeats)
    else:
        summary = summarize(records, settings.repeats, settings.stats)
    return {
        "chain": chain.text,
        "task": task,
        "train_fraction": fraction,
        **({"sweep": chain.sweep} if chain.sweep else {}),
        **summary,
    }


def _macro_entry(chain, fraction: float, tasks, settings: Settings, grouped: dict, results: list[dict]) -> dict:
    """One chain's macro averages over the tasks at one fraction; over several repeats their spread, with
    ``settings.stats`` over several tasks the micro-averages."""
    per_task = [r for r in results if r["chain"] == chain.text and r["train_fraction"] == fraction]
    entry = {
        "chain": chain.text,
        "train_fraction": fraction,
        **({"sweep": chain.sweep} if chain.sweep else {}),
        "tasks": len(per_task),
        **macro_average(per_task, settings.stats),
    }
    if settings.repeats > 1:
        entry["std_over_repeats"] = macro_spread(per_task, settings.repeats)
    if settings.stats and len(tasks) > 1:
        entry["micro"] = micro_average([grouped[(chain.text, task, fraction)] for task in tasks])
    return entry


def _multiclass_paired(records: list[dict], baseline_records: list[dict], ratio: float) -> dict:
    """``--multiclass --stats``: a chain's fold ``records`` against the baseline's, overall and per class."""
    overall = paired_comparison({"": records}, {"": baseline_records}, ratio, MULTICLASS_MEASURES)
    labels = list(records[0]["per_class"])
    per_class = paired_comparison(
        {label: class_records(records, label) for label in labels},
        {label: class_records(baseline_records, label) for label in labels},
        ratio,
        PER_CLASS_MEASURES,
    )
    return {
        "measures": {
            measure: {"difference": paired["difference"], "over_folds": paired["over_folds"]}
            for measure, paired in overall.items()
        },
        "per_class": {
            measure: {
                "difference": paired["difference"],
                "over_classes": paired["over_tasks"],
                "over_folds": paired["over_folds"],
            }
            for measure, paired in per_class.items()
        },
    }
