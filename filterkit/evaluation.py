"""The papers' evaluation protocol (KDD'09 §4; docs/algorithms.md §8 states it): :func:`evaluate`.

Seeded stratified k-fold cross-validation, the folds drawn once for every chain and task; a fresh chain per
fold, task and training fraction is fitted on the training rows only and applied to the test rows.  The
fold records become the result document (:func:`result_document`), which :mod:`filterkit.reports` renders.
The data and settings decide the task once (:func:`filterkit.tasks.task_of`): a class's tasks are fitted
here, a label set's by :mod:`filterkit.evaluation_targets`, and the fits of either run in one loop
(:func:`run_fits`: here, in processes or on Dask).
"""

from __future__ import annotations

import contextlib
import functools
import os
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from filterkit.arff.reader import DEFAULT_CHUNK_ROWS
from filterkit.classifying import CheckedClassifier, fit_warnings, fitted_features, refuse_featureless_chain
from filterkit.costs import cut_by_costs, cut_task_by_costs, refuse_unfitting_costs, total_cost
from filterkit.errors import FilterkitError
from filterkit.evaluation_targets import target_fits
from filterkit.exact import fraction_count
from filterkit.formats import FormatOptions
from filterkit.label_issues import FOLD_RECORD, LabelIssueFinder, fold_pulls
from filterkit.lent_workers import FORKED, WorkerPool, lending, portable, received, shipped
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
from filterkit.option_files import GIVEN_FILES, files_of, sent_files
from filterkit.reports import Evaluation
from filterkit.runner import Chain, class_hint, resolve_class
from filterkit.schema import NOMINAL, Chunk, Schema, check_positive, take_rows
from filterkit.sources import MemorySource, kept_for_rows
from filterkit.stage import feature_positions
from filterkit.tasks import (
    CHAIN_WARNINGS,
    LABEL_SET,
    ChainSpec,
    Fits,
    Settings,
    Task,
    choose_tasks,
    fold_of_row,
    read_rows,
    task_of,
)
from filterkit.thresholds import cut_label_set, refuse_scope_outside

#: The task name of a ``--multiclass`` evaluation (every class at once).
MULTICLASS_TASK = "(all classes)"


@dataclass(frozen=True)
class Dataset:
    """The rows every fit draws from (the training rows, then a test file's), schema and class position."""

    schema: Schema
    data: Chunk
    class_index: int
    #: each row's row in the input (from 1) where rows with a missing class were left out; None: row i is i + 1
    input_rows: np.ndarray | None = None

    @property
    def labels(self) -> tuple[str, ...]:
        """The class attribute's labels."""
        return self.schema.attributes[self.class_index].labels


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system tells it)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # no affinity on this system (macOS, Windows)
        return os.cpu_count() or 1


#: The training rows from which ``--jobs`` left out starts a worker per core: any number where they are forked (a
#: start of milliseconds, :data:`~filterkit.lent_workers.FORKED`); elsewhere 5,000, under which a worker's start
#: (about 2.5 s of CPU: Python, numpy, scikit-learn and the plugins, in each) costs more than its share of the fits
#: saves (Reuters grain's 1,554 rows: more CPU and no less wall time).
POOL_FROM_ROWS = 0 if FORKED else 5_000

#: The training rows from which the workers are lent to a single fit (its inner folds, its classes).  Below, its
#: pieces cost more CPU sent than made here: 40 labels' fits on 254 rows, each lent two forked workers, took 1.24×
#: the CPU (10.0 s against 8.1) for 0.82× the wall.
LEND_FROM_ROWS = 5_000


#: Where :func:`run_fits` fits when told nothing else: (jobs, engine, (scheduler, local workers), plugins folder).
HERE: tuple = (1, "local", (None, None), None)


def pool_size(jobs: int | None, rows: int) -> int:
    """The processes fits of ``rows`` training rows run in: ``jobs`` as given, or, left out (None), every core this
    process may use from :data:`POOL_FROM_ROWS` rows, else this process alone."""
    if jobs is not None:
        return jobs
    return usable_cores() if rows >= POOL_FROM_ROWS else 1


def evaluate(
    source,
    chains: list[ChainSpec],
    settings: Settings = Settings(),
    registry=None,
    *,
    name: str | None = None,
    plugins_dir=None,
    jobs: int | None = 1,
    progress=None,
    test=None,
    test_name: str | None = None,
    engine: str = "local",
    scheduler: str | None = None,
    workers: int | None = None,
    input_format: str | None = None,
    reading: FormatOptions | None = None,
    label_issues: LabelIssueFinder | None = None,
    check_task: Callable[[Task], None] = lambda task: None,
) -> Evaluation:
    """Cross-validate ``chains`` on ``source`` (a path, or a source called ``name``) under ``settings``, in up to
    ``jobs`` processes (None: :func:`pool_size` chooses) or on Dask (``engine="dask"``, at ``scheduler``, or on a
    local cluster of ``workers`` processes, one per core when None), with the plugins of ``registry`` (by default
    those found with ``plugins_dir``). Rows with a missing class are left out. Given ``test`` (a path, or a source
    called ``test_name``), each chain is fitted on all of ``source`` and scored once on ``test``'s rows. A path is
    read in ``input_format`` (None: by its name) with the ``reading`` options; a test file that is not ARFF is read
    with the training data's header, as ``apply`` reads new rows. Multi-label data (MEKA's ``-C`` in the relation
    name, or Mulan's XML ``settings.labels_file``) is evaluated by binary relevance
    (:mod:`filterkit.evaluation_targets`). Given ``label_issues``, each fold also records its rows' probabilities,
    from which it finds the rows whose label they contradict (:mod:`filterkit.label_issues`); ``check_task`` is
    given the data's task before any row is read."""
    from filterkit.plugins import load_plugins
    from filterkit.progress import Progress
    from filterkit.tasks import refuse_row_filters

    reading = FormatOptions(settings.class_spec) if reading is None else reading
    with contextlib.ExitStack() as stack:
        source, name = stack.enter_context(opened_input(source, name, "<data>", input_format, reading))
        test, test_name = stack.enter_context(opened_input(test, test_name, "<test>", None, reading, source.schema))
        task = task_of(source.schema, settings, name)
        check_task(task)
        registry = load_plugins(plugins_dir) if registry is None else registry
        refuse_row_filters(chains, registry)
        stack.enter_context(sent_files(option_files(registry, chains, settings)))
        progress = Progress() if progress is None else progress
        fits_of = target_fits if task.kind == LABEL_SET else class_fits
        fits = fits_of(task, (source, name, test, test_name), chains, settings, progress)
        if label_issues is not None:
            fits = label_issues.scoring(task, fits)
        step = "cross-validating" if test is None else "scoring the test file"
        placed = (jobs, engine, (scheduler, workers), plugins_dir)
        results = run_fits(registry, fits, chains, settings, placed, progress, step)
        if label_issues is not None:
            label_issues.collect(fits, results)
        progress.finish()
        return fits.evaluation(results)


def class_fits(class_task: Task, inputs: tuple, chains: list[ChainSpec], settings: Settings, progress) -> Fits:
    """The fits of a class's task (``class_task``: :data:`~filterkit.tasks.BINARY`, a task per positive class
    chosen, or :data:`~filterkit.tasks.MULTICLASS`) on ``inputs`` (source, name, test source or None, test
    name): the rows read, the tasks chosen, the stratified folds drawn (or the test file's rows), per (chain,
    task, fold, fraction) one :func:`evaluate_fold`."""
    source, name, test, test_name = inputs
    progress.expect(2 if test is None else 3)
    dataset, training_rows = read_dataset(source, name, test, test_name, settings, progress)
    codes = dataset.data.column(dataset.class_index)
    known = np.flatnonzero(~np.isnan(codes))
    if len(known) < len(codes):
        dataset = Dataset(dataset.schema, take_rows(dataset.data, known), dataset.class_index, known + 1)
    in_test = known >= training_rows
    labels, known_codes = dataset.labels, codes[known].astype(np.int64)
    counts, test_counts = (np.bincount(known_codes[rows], minlength=len(labels)) for rows in (~in_test, in_test))
    tasks = _tasks(labels, counts, settings, name, cross_validated=test is None)
    refuse_unfitting_costs(settings.classifier, settings.classifier_params, labels, settings.multiclass)
    if test is not None:
        _check_training_file(labels, counts, test_counts, settings.multiclass, name, test_name)
    with progress.working("drawing the folds"):
        draws = _draws(class_task, known_codes, settings, in_test if test is not None else None)
    items = [
        (chain, task, fold, fraction, samples[fraction], test_rows)
        for task in tasks
        for fold, test_rows, samples in draws
        for chain in chains
        for fraction in settings.train_fractions
    ]
    extra = {
        "input": name,
        "class": dataset.schema.attributes[dataset.class_index].name,
        "class_counts": dict(zip(labels, counts.tolist())),
        "chains": [c.text for c in chains],
        "tasks": tasks,
        **({"sweep": settings.sweep} if settings.sweep is not None else {}),
        **({} if test is None else {"test": test_name, "test_rows": int(in_test.sum())}),
        **({} if test is None else {"test_class_counts": dict(zip(labels, test_counts.tolist()))}),
    }
    fold_of = fold_of_row([r for _, r, _ in draws[: settings.folds]], known, len(codes)) if test is None else None
    settings_json = settings_document(settings, int(np.sum(~in_test)), len(codes) - len(known), fold_of, extra)
    rows = known[in_test] - training_rows + 1

    def evaluation(results: list[dict]) -> Evaluation:
        grouped: dict[tuple, list] = {}
        for (chain, task, _, fraction, _, _), result in zip(items, results):
            grouped.setdefault((chain.text, task, fraction), []).append(result)
        ratios = {
            f: float(np.mean([len(test) / len(samples[f]) for _, test, samples in draws]))
            for f in settings.train_fractions
        }
        document = result_document(chains, tasks, settings, grouped, settings_json, ratios)
        predictions = [
            {"chain": c, "task": t, "train_fraction": f, "rows": rows, **records[0]}
            for (c, t, f), records in grouped.items()
            if test is not None
        ]
        return Evaluation(document, predictions)

    return Fits(
        dataset,
        evaluate_fold,
        [(chain, task, train, test_rows) for chain, task, _, _, train, test_rows in items],
        [f"task {task}, fold {fold + 1}, chain '{chain.text}'" for chain, task, fold, *_ in items],
        evaluation,
        dataset.data.n_rows,
    )


@contextlib.contextmanager
def opened_input(
    source, name: str | None, default: str, given_format: str | None, reading: FormatOptions, known_schema=None
):
    """``(source, name)``: a path (``-``: standard input) opened and named by it, read in ``given_format`` (None:
    by its name) with ``reading`` (and ``known_schema``'s header, when not ARFF), else the source as given."""
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
    data, training_rows = read_rows(source, name, test, test_name, settings, progress, class_index)
    return Dataset(schema, data, class_index), training_rows


def known_class_rows(dataset: Dataset) -> Dataset:
    """``dataset`` without its rows of a missing class (which no fit or score uses)."""
    codes = dataset.data.column(dataset.class_index)
    known = np.flatnonzero(~np.isnan(codes))
    return (
        dataset
        if len(known) == len(codes)
        else Dataset(dataset.schema, take_rows(dataset.data, known), dataset.class_index, known + 1)
    )


def _check_training_file(labels, counts, test_counts, multiclass: bool, name: str, test_name: str) -> None:
    """Refuse a test file with no row to score, and, with ``multiclass``, a training file without a row of a class
    the test file holds (a binary task's class :func:`~filterkit.tasks.choose_tasks` checks)."""
    if not test_counts.any():
        raise FilterkitError("the test file has no row with a class to score", test_name)
    for label in labels if multiclass else ():
        if counts[labels.index(label)] == 0 and test_counts[labels.index(label)]:
            raise FilterkitError(f"the training file has no row of class '{label}' to learn it from", name)


def _tasks(labels, counts: np.ndarray, settings: Settings, name: str, cross_validated: bool) -> list[str]:
    """The run's tasks (:func:`choose_tasks`, or the one of ``--multiclass``), ``counts`` checked against the folds."""
    if settings.multiclass and np.count_nonzero(counts) < 2:
        raise FilterkitError("--multiclass needs rows of at least two classes", name)
    tasks = (
        [MULTICLASS_TASK]
        if settings.multiclass
        else choose_tasks(labels, counts, settings.positive, name, settings.each_class, settings.min_positives)
    )
    refuse_scope_outside(settings.classifier_params, labels, labels if settings.multiclass else tasks, name)
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
    return seed if repeat == 0 else int(np.random.SeedSequence([seed, repeat]).generate_state(1)[0] >> 1)


def nested_subsamples(train: np.ndarray, codes: np.ndarray, fractions, seed: int) -> dict[float, np.ndarray]:
    """Per fraction f, ⌈f · n_c⌉ training rows of each class c, each sample inside the next larger one."""
    generator = np.random.default_rng(seed)
    orders = [generator.permutation(train[codes[train] == label]) for label in np.unique(codes[train])]
    return {
        fraction: np.sort(np.concatenate([order[: fraction_count(fraction, len(order))] for order in orders]))
        for fraction in fractions
    }


def evaluate_fold(
    registry, dataset: Dataset, chain: ChainSpec, task: str, train, test, settings: Settings, label_pulls: int = 0
) -> dict:
    """Fit ``chain`` on the ``train`` rows for ``task`` (or every class), apply it to the ``test`` rows,
    classify them and measure; given ``label_pulls``, also record the rows for ``--label-issues``
    (:func:`~filterkit.label_issues.fold_pulls`, that many words a row)."""
    multiclass = settings.multiclass
    output_class, prepared, fitted = fitted_chain(registry, dataset, chain, train, None if multiclass else task)
    if multiclass and output_class.labels != dataset.labels:
        raise FilterkitError(f"chain '{chain.text}' changes the class labels, which --multiclass cannot score")
    rows = prepared(train), prepared(test)
    call = CheckedClassifier(registry, settings.classifier, settings.classifier_params)
    numbers = np.asarray(test) + 1 if dataset.input_rows is None else dataset.input_rows[test]
    if multiclass:
        result, truth, scores, decisions = _classify_multiclass(call, dataset, *rows, settings, numbers)
    else:
        result, truth, scores, decisions = _classify_task(
            call, dataset.labels.index(task), task, *rows, settings, dataset.labels, numbers
        )
    result["classifier"] = call("describe")
    result["features"] = int(rows[0][0].shape[1])
    costs = getattr(call.classifier, "cost_matrix", None)
    if costs is not None:
        result["cost"] = total_cost(costs, truth, decisions)
    result.update(truth=truth, scores=scores, decisions=decisions)
    if label_pulls:
        result[FOLD_RECORD] = fold_pulls(call, fitted, rows[1][0], truth, label_pulls)
    warnings = [*fitted.warnings, *fit_warnings(result["classifier"])]
    if warnings:
        result[CHAIN_WARNINGS] = warnings
    return result


def _finite_scores(call, scores: np.ndarray, numbers: np.ndarray) -> np.ndarray:
    """The ``scores`` of the test rows numbered ``numbers`` (from 1, over the training rows, then a test file's),
    or FilterkitError naming the first row whose score is not a finite number (which no measure can rank) and the
    classifier that gave it (the row's values are finite: a score past a double's range, or the classifier's
    fault)."""
    per_row = scores.reshape(len(scores), -1)
    unbounded = ~np.isfinite(per_row).all(axis=1)
    if unbounded.any():
        row = int(np.argmax(unbounded))
        value = float(per_row[row][~np.isfinite(per_row[row])][0])
        raise FilterkitError(
            f"row {int(numbers[row])} (of the training rows, then the test file's): {call.origin} scored it "
            f"{value}, not a finite number: check the row's values (a score past a double's range), or the classifier"
        )
    return scores


def _classify_task(call, positive: int, task: str, train: tuple, test: tuple, settings: Settings, classes, numbers):
    """(measures, truth, scores, decisions) of a binary classifier fitted on the task ``positive``, tested on the
    rows numbered ``numbers``."""
    (train_features, train_codes), (test_features, test_codes) = train, test
    fit_task(call, positive, task, train_features, train_codes, settings, classes)
    test_truth = test_codes == positive
    rows = (len(test_truth),)
    scores = _finite_scores(call, call("score", test_features, shape=rows), numbers)
    decisions = call("predict", test_features, shape=rows).astype(bool)
    result: dict[str, Any] = dict(measures(test_truth, scores, decisions))
    result["breakeven"] = breakeven(test_truth, scores)
    result["counts"] = contingency(test_truth, decisions)
    return result, test_truth, scores, decisions


def fit_task(call, positive: int, task: str, features, codes: np.ndarray, settings: Settings, classes) -> None:
    """Fit the binary classifier (``call``: a :class:`CheckedClassifier`) on the task of class position
    ``positive`` (named ``task``, one of ``classes``) against the rest, from ``features`` and class ``codes``;
    an objective scoped to a class (``svm --svm-threshold NAME=VALUE:CLASS``) cut for ``task`` alone
    (:func:`~filterkit.thresholds.cut_label_set`), and ``svm --svm-costs`` cut by the matrix's labels
    (:func:`~filterkit.costs.cut_task_by_costs`)."""
    truth = codes == positive
    if truth.all() or not truth.any():
        missing = "no row of" if not truth.any() else "only rows of"
        raise FilterkitError(
            f"task '{task}': a training fold holds {missing} class '{task}' ({int(np.sum(truth))} of "
            f"{len(truth)} rows); the class is too small (or too large) for {settings.folds} folds"
        )
    call("fit", features, truth.astype(np.int64), settings.seed)
    cut_label_set([call.classifier], truth[:, None], [task], list(classes))
    cut_task_by_costs(call.classifier, list(classes), positive)


def fit_classes(call, dataset: Dataset, features, codes: np.ndarray, settings: Settings) -> np.ndarray:
    """Fit the k-class classifier on the classes present in ``dataset`` (whose positions it returns),
    from ``features`` and class ``codes``; ``svm --svm-costs`` cut by the matrix's rows and columns of those
    classes (:func:`~filterkit.costs.cut_by_costs`)."""
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
    cut_by_costs(call.classifier, list(labels), present.tolist())
    return present


def _classify_multiclass(call, dataset: Dataset, train: tuple, test: tuple, settings: Settings, numbers):
    """(measures, truth, scores, decisions) of a k-class classifier over the classes present in ``dataset``,
    tested on the rows numbered ``numbers``."""
    (train_features, train_codes), (test_features, test_codes) = train, test
    labels = dataset.labels
    present = fit_classes(call, dataset, train_features, train_codes, settings)
    test_classes = feature_positions(len(labels), present)[test_codes.astype(np.int64)]
    shape = (len(test_classes), len(present))
    scores = _finite_scores(call, call("class_scores", test_features, shape=shape), numbers)
    predicted = call("predict_class", test_features, shape=shape[:1])
    if not np.all(np.isin(predicted, np.arange(len(present)))):
        raise call.broken(f"predict_class returned a value that is not a class position 0 … {len(present) - 1}")
    predicted = predicted.astype(np.int64)
    result = multiclass_measures(test_classes, scores, predicted, [labels[i] for i in present])
    return result, test_classes, scores, predicted


def fitted_chain(registry, dataset: Dataset, chain: ChainSpec, train, positive=None):
    """``chain`` fitted on the ``train`` rows: its output's class attribute, what it makes of some rows
    (their classifier features and class codes), and the fitted :class:`Chain`.  The fit keeps its passes
    (:meth:`Chain.fit` with ``keep``) and the first call, given ``train`` itself, makes its features of the chunks
    the last pass kept: a fold's documents are cut into words once, not again by each later pass and again for the
    features.  What was kept is closed at the first call, or at an error."""
    stages = [registry.make_stage(name, params) for name, params in chain.stages]
    rows = take_rows(dataset.data, train)
    kept = kept_for_rows(rows)
    try:
        fitted = Chain(stages, class_spec=str(dataset.class_index + 1), positive=positive).fit(
            MemorySource(dataset.schema, rows), keep=kept
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
    except BaseException:
        kept.close()
        raise

    def prepared(rows):
        try:
            reading = rows is train and kept.stage_position is not None
            chunks = fitted.transform_kept(kept) if reading else fitted.transform([take_rows(dataset.data, rows)])
            transformed = next(iter(chunks))
        finally:
            kept.give_up()
        features = fitted_features(output_schema, transformed, output_class, rows, dataset.input_rows, rows is train)
        return features, transformed.column(output_class)

    return output_schema.attributes[output_class], prepared, fitted


def _draws(task: Task, codes: np.ndarray, settings: Settings, in_test: np.ndarray | None) -> list[tuple]:
    """(fold, test rows, per training fraction its training rows) of each fold of each repeat (``task``'s
    folds of the class ``codes``); with ``in_test`` (a test file's rows) one draw testing those rows."""
    fractions = settings.train_fractions
    if in_test is not None:
        training = np.flatnonzero(~in_test)
        return [(0, np.flatnonzero(in_test), nested_subsamples(training, codes, fractions, settings.seed))]
    return [
        (fold, test, nested_subsamples(train, codes, fractions, repeat_seed(settings.seed, repeat) + fold))
        for repeat in range(settings.repeats)
        for fold, (train, test) in enumerate(task.folds(codes, settings.folds, repeat_seed(settings.seed, repeat)))
    ]


def run_fits(
    registry,
    fits: Fits,
    chains,
    settings: Settings,
    workers: tuple,
    progress,
    step: str,
    *,
    uneven: bool = False,
    warned: Callable[[int, list[str]], None] | None = None,
) -> list[dict]:
    """The results of ``fits``, in their order, fitted here, in ``workers`` (jobs, engine, the Dask cluster: its
    scheduler and the local one's workers, plugins folder) processes or on Dask, the same for every task; ``step``
    names the fitting on ``progress`` (``uneven``: its time left is an estimate, see
    :meth:`~filterkit.progress.Progress.step`).  Each fit's chain warnings are taken out of its result and handed,
    with its position, to ``warned`` (None: each distinct one warned on ``progress``, :meth:`.Fits.warner`)."""
    warned = fits.warner(progress.warning) if warned is None else warned
    jobs, engine, cluster, plugins_dir = workers
    jobs, count = pool_size(jobs, fits.rows), len(fits.arguments)
    with contextlib.ExitStack() as stack:
        if engine == "dask":
            results = stack.enter_context(
                _dask_results(registry, plugins_dir, fits, chains, settings, cluster, progress)
            )
        elif min(jobs, count) == 1:
            lent = jobs if fits.rows >= LEND_FROM_ROWS else 1  # fewer rows: sending the pieces costs more
            stack.enter_context(lending(lent))  # a single fit: the pool's workers take its classifier's inner folds
            results = (fits.score(registry, fits.dataset, *arguments, settings) for arguments in fits.arguments)
        else:
            rows = stack.enter_context(shipped(fits.dataset, "the rows"))
            pool = stack.enter_context(WorkerPool(min(jobs, count)))
            results = _pooled_results(pool, plugins_dir, fits, rows, settings)
        meter = stack.enter_context(progress.step(step, items=count, unit="fits", uneven=uneven))
        scored = []
        for position, (detail, result) in enumerate(zip(fits.details, results)):
            texts = result.pop(CHAIN_WARNINGS, None)
            if texts:
                warned(position, texts)
            scored.append(result)
            meter.advance(detail=detail)
    return scored


def _pooled_results(pool, plugins_dir, fits: Fits, shipped: str, settings: Settings):
    """The results of ``fits`` in their order, fitted in the worker processes of ``pool``, which hold the rows
    ``shipped`` names; the fits of the most training rows are sent first, so that a long one does not
    start last.  A fit's error is raised when its turn comes, so the first fit to fail in their order is the
    one reported, as in one process."""
    sizes = [len(arguments[-2]) for arguments in fits.arguments]  # a fit's arguments end (training rows, test rows)
    order = sorted(range(len(sizes)), key=lambda position: -sizes[position])  # stable: the given order on a tie
    files = GIVEN_FILES.get()
    sent = pool.results(
        score_shipped,
        [(plugins_dir, fits.score, shipped, fits.arguments[position], settings, files) for position in order],
    )
    incoming = zip(order, sent)
    arrived: dict[int, tuple] = {}
    for position in range(len(order)):
        while position not in arrived:
            fit, outcome = next(incoming)
            arrived[fit] = outcome
        result, error = arrived.pop(position)
        if error is not None:
            raise error
        yield result


def score_shipped(plugins_dir, score, shipped: str, arguments: tuple, settings: Settings, files=None) -> tuple:
    """(result, None) of :func:`score_in_worker` on the rows ``shipped`` names
    (:func:`~filterkit.lent_workers.shipped`), or (None, the error it raised)."""
    try:
        return score_in_worker(plugins_dir, score, received(shipped), arguments, settings, files), None
    except Exception as error:  # raised in the parent at the fit's turn (_pooled_results)
        return None, portable(error)


@functools.lru_cache(maxsize=4)
def worker_registry(plugins_dir):
    """The plugins a worker process loads once (from ``plugins_dir``) for every fit it is sent."""
    from filterkit.plugins import load_plugins

    return load_plugins(plugins_dir)


def score_in_worker(plugins_dir, score, dataset, arguments: tuple, settings: Settings, files=None) -> dict:
    """``score`` (a :class:`~filterkit.tasks.Fits`' fold) of one fit's ``arguments``, in a worker process, the files
    its options name read as the run read them (``files``: :func:`option_files`)."""
    with sent_files(files):
        return score(worker_registry(plugins_dir), dataset, *arguments, settings)


def option_files(registry, chains, settings: Settings) -> dict[str, bytes | OSError]:
    """The files the options of ``chains``' stages and of ``settings``' classifier name (a ``--stopwords`` list, an
    ``--svm-costs`` matrix), read once, before any fit (:mod:`filterkit.option_files`)."""
    stages = [registry.make_stage(name, params) for chain in chains for name, params in chain.stages]
    classifier = CheckedClassifier(registry, settings.classifier, settings.classifier_params).classifier
    return files_of([*stages, classifier])


@contextlib.contextmanager
def _dask_results(registry, plugins_dir, fits: Fits, chains, settings: Settings, cluster: tuple, progress):
    """The results of ``fits`` as tasks on the Dask cluster at ``cluster``'s scheduler (None: a local one of its
    workers), in their order; the rows are sent to every worker once."""
    from filterkit.dask_futures import results_in_order

    files = GIVEN_FILES.get()
    with checked_dask_engine(registry, plugins_dir, chains, settings, cluster, progress) as engine:
        client = engine.client
        (shared,) = client.scatter([fits.dataset], broadcast=True)
        yield results_in_order(
            [
                client.submit(
                    score_in_worker, engine.plugins_dir, fits.score, shared, arguments, settings, files, pure=False
                )
                for arguments in fits.arguments
            ]
        )


@contextlib.contextmanager
def checked_dask_engine(registry, plugins_dir, chains, settings: Settings, cluster: tuple, progress):
    """A :class:`~filterkit.distributed.DaskEngine` on ``cluster``'s scheduler (None: a local cluster of its
    workers) whose workers, on a scheduler, have every stage of ``chains`` and ``settings``' classifier as this
    process has them (:meth:`~filterkit.distributed.DaskEngine.check_workers`), for fits sent as tasks."""
    from filterkit.distributed import DaskEngine

    scheduler, workers = cluster
    classifier = registry.classifiers[settings.classifier]
    with DaskEngine.connect(scheduler, plugins_dir, 0, progress, workers=workers) as engine:
        for chain in chains:
            stages = [registry.make_stage(name, params) for name, params in chain.stages]
            engine.check_workers(Chain(stages), classifier)
        yield engine


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
    settings: Settings, rows_used: int, left_out: int, fold_of_row: list[int | None] | None, extra: dict
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
        **({"fold_of_row": fold_of_row} if fold_of_row is not None else {}),
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
    if all("cost" in record for record in records):
        summary["costs"] = held_out_costs(records)
    return {
        "chain": chain.text,
        "task": task,
        "train_fraction": fraction,
        **({"sweep": chain.sweep} if chain.sweep else {}),
        **summary,
    }


def held_out_costs(records: list[dict]) -> dict:
    """``svm --svm-costs``: the cost of the held-out decisions of the fold ``records``, as Weka's Evaluation reports
    it given ``-m COSTFILE``: the "Total Cost" over every fold (of every repeat), the "Average Cost" (total / rows
    scored), the rows, and each fold's total."""
    per_fold = [record["cost"] for record in records]
    rows = sum(len(record["truth"]) for record in records)
    return {"total": float(sum(per_fold)), "average": float(sum(per_fold)) / rows, "rows": rows, "per_fold": per_fold}


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
