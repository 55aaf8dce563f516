"""Training a text classifier you can ship (issue 49): :func:`train` fits a chain and a classifier exactly as
``evaluate --test --svm-c-by f1 --svm-c-search early`` does (the same C search, seed and rows) and saves both in one
model file, JSON and arrays, never code (:mod:`filterkit.trained` serves it).

Given several candidate chains, :func:`train` keeps the one of the best cross-validated score on the
training file (the AUC of the task, the macro one-vs-rest AUC of every class, micro-F1 on labels), and
records every candidate's.  Candidates are scored by nested cross-validation (each fold's SVM picks its C by its own
inner cross-validation), or with ``search="flat"`` by one cross-validation over chain and C together
(:func:`flat_candidate_scores`).  A label set is one implementation beside a class: binary relevance, the chain fitted
once for every label and a classifier per label, as ``evaluate --test`` scores it (:func:`train_labels`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import re
from typing import Any, Callable

import numpy as np

from filterkit import evaluation
from filterkit.arff.tokens import one_line
from filterkit.contract import declared
from filterkit.costs import refuse_unfitting_costs
from filterkit.errors import FilterkitError
from filterkit.evaluation import MULTICLASS_TASK, ChainSpec, CheckedClassifier, Dataset, Settings
from filterkit.formats import FormatOptions
from filterkit.lent_workers import lending, portable, start_workers
from filterkit.option_files import GIVEN_FILES, sent_files
from filterkit.plugins import Registry, load_plugins
from filterkit.reports import Evaluation
from filterkit.schema import STRING, Schema
from filterkit.sources import MemorySource
from filterkit.stage import task_choices
from filterkit.tasks import LABEL_SET, Task, task_of
from filterkit.thresholds import cut_label_set
from filterkit.trained import LabelSetModel, TrainedModel

#: Folds of the cross-validation that scores each candidate chain on the training file.
CANDIDATE_FOLDS = 5

#: How :func:`train` scores the candidates and picks the SVM's C: ``nested`` (every fold's SVM picks C by its own
#: inner cross-validation) or ``flat`` (:func:`flat_candidate_scores`: one cross-validation for chain and C).
SEARCHES = ("nested", "flat")

#: How ``words`` reads documents in the default candidates: the README's (Weka's tokens and stop words, its 1,000
#: words a class), and every word as a run of letters (nearer TfidfVectorizer's tokens), its count as is or as
#: ln(1 + count).
README_WORDS = ("words", {"counts": True, "lowercase": True, "stopwords": "weka"})
EVERY_WORD = ("words", {"counts": True, "lowercase": True, "words_to_keep": 1_000_000, "tokenizer": "alphabetic"})
EVERY_WORD_LOG_TF = ("words", {**EVERY_WORD[1], "log_tf": True})

#: The candidate chains ``train`` compares when none is given, on data that holds text: the KDD'09 chain, tf·BNS
#: on either words, and log tf·idf (scikit-learn's smoothed idf) on every word; the corpora and the inner
#: cross-validation that chose them are docs/RESULTS.md §10.1, §10.2 and §10.9.
TEXT_CANDIDATES: tuple[tuple[tuple[str, dict], ...], ...] = (
    (README_WORDS, ("shape", {}), ("bns", {}), ("l2", {})),
    (README_WORDS, ("bns", {"multiply": True}), ("l2", {})),
    (EVERY_WORD, ("bns", {"multiply": True}), ("l2", {})),
    (EVERY_WORD_LOG_TF, ("idf", {"presence": True, "multiply": True, "smooth": True}), ("l2", {})),
)
#: The candidates on data without text (word counts already): the same weightings, each once.
COUNT_CANDIDATES = tuple(
    chain[1:] for k, chain in enumerate(TEXT_CANDIDATES) if chain[1:] not in [c[1:] for c in TEXT_CANDIDATES[:k]]
)


#: ``shape``'s options in the default candidates where the classifier separates more than two classes, or labels:
#: each word shaped once, toward its most informative class.  One-vs-rest shaping writes a copy of every word per
#: class, and the SVM is fitted on that matrix for every class, inner fold and C (23 classes of docstrings: 197,202
#: features where there were 8,600, and no fold done in 600 CPU s); on docs/RESULTS.md's label sets (§11) and
#: Ohsumed's classes (§6) the copies scored level with ``--multiclass max``.
SHAPE_ONCE = {"multiclass": "max"}


def default_candidates(schema: Schema, registry: Registry, several_classes: bool = False) -> list[ChainSpec]:
    """:data:`TEXT_CANDIDATES` when ``schema`` holds text, else :data:`COUNT_CANDIDATES`, named as typed; with
    ``several_classes`` (a task of more than two classes, or of labels) ``shape`` as :data:`SHAPE_ONCE` says."""
    from filterkit.running import describe_chain

    reads_text = any(attribute.kind == STRING for attribute in schema.attributes)
    chains = []
    for stages in TEXT_CANDIDATES if reads_text else COUNT_CANDIDATES:
        if several_classes:
            stages = tuple(
                (name, {**params, **SHAPE_ONCE}) if name == "shape" else (name, params) for name, params in stages
            )
        text = describe_chain([registry.make_stage(name, params) for name, params in stages])
        chains.append(ChainSpec(text, [(name, dict(params)) for name, params in stages]))
    return chains


def train(
    source,
    chains: list[ChainSpec] | None = None,
    settings: Settings | None = None,
    registry: Registry | None = None,
    *,
    name: str | None = None,
    input_format: str | None = None,
    reading: FormatOptions | None = None,
    progress=None,
    candidate_folds: int = CANDIDATE_FOLDS,
    jobs: int | None = 1,
    plugins_dir=None,
    warn: Callable[[str], None] | None = None,
    search: str = "nested",
    engine: str = "local",
    scheduler: str | None = None,
    workers: int | None = None,
) -> "TrainedModel":
    """Fit the chain (the best of ``chains``, by default :func:`default_candidates`, by :func:`candidate_scores`
    when there are several) and the classifier of ``settings`` on ``source`` (a path read in ``input_format`` with
    ``reading``, or a source called ``name``), for the task ``evaluate`` would score: ``settings.positive`` against
    the rest, the minority of two classes, or every class (``settings.multiclass``). Rows with a missing class are
    left out. The candidates are scored in up to ``jobs`` processes (None: :func:`~filterkit.evaluation.pool_size`
    chooses; each with the plugins of ``plugins_dir``), with the same results, a fit at a time on ``progress``.
    ``warn`` is given each warning in the chain command's words: a candidate's once (of the first fold that gives
    it), then the kept chain's, fitted on every row.  ``search`` (:data:`SEARCHES`) says how the candidates are scored
    and C picked; ``flat`` (a class's task and the svm only) scores a single chain too, for its C, a candidate's
    folds at a time in up to ``jobs`` processes.  With ``engine="dask"`` the candidates' fits are tasks on the Dask
    cluster at ``scheduler`` (None: a local one of ``workers`` processes, one per core when None) instead, with the
    same model; the kept chain's final fit, on every row, is made here either way."""
    from filterkit.progress import Progress

    settings = Settings() if settings is None else settings
    registry = load_plugins() if registry is None else registry
    progress = Progress() if progress is None else progress
    classifier_class = _searchable_classifier(registry, chains, settings, search)
    params = {**classifier_class.trained_defaults, **settings.classifier_params}
    settings = dataclasses.replace(settings, classifier_params=params)
    reading = FormatOptions(settings.class_spec) if reading is None else reading
    with sent_files(evaluation.option_files(registry, chains or [], settings)):  # read once a run
        with evaluation.opened_input(source, name, "<data>", input_format, reading) as (opened, name):
            data_task = task_of(opened.schema, settings)
            if data_task.kind == LABEL_SET and search == "flat":
                raise FilterkitError(
                    "--search flat is made for a class's task (binary or --multiclass), not for labels"
                )
            if data_task.kind == LABEL_SET:
                return train_labels(
                    registry,
                    (opened, name),
                    data_task,
                    chains,
                    settings,
                    (progress, warn),
                    (candidate_folds, (jobs, engine, (scheduler, workers), plugins_dir)),
                )
            progress.expect(planned_steps(chains, search))
            dataset, _ = evaluation.read_dataset(opened, name, None, "", settings, progress)
            recorded = opened.reading
        dataset = evaluation.known_class_rows(dataset)
        task = trained_task(dataset, settings, name)
        refuse_unfitting_costs(settings.classifier, settings.classifier_params, dataset.labels, settings.multiclass)
        if chains is None:
            several = task == MULTICLASS_TASK and present_classes(dataset) > 2
            chains = default_candidates(dataset.schema, registry, several)
        lent = _local_workers(jobs, engine, dataset.data.n_rows, _first_pool_fits(chains, search, candidate_folds))
        start_workers(lent)  # after the checks: an early error need not wait for their start
        candidates = []
        searched: dict = {}
        placed = (jobs, engine, (scheduler, workers), plugins_dir)
        if search == "flat":
            candidates = flat_candidate_scores(
                dataset, chains, task, settings, registry, name, candidate_folds, placed, (progress, warn)
            )
            chosen = best_candidate(chains, candidates)
            grid = CheckedClassifier(registry, settings.classifier, settings.classifier_params).classifier.params[
                "c_values"
            ]
            picked = c_value_text(grid, candidates[chains.index(chosen)]["C"])
            params = {**settings.classifier_params, "c_values": picked}
            settings = dataclasses.replace(settings, classifier_params=params)
            searched = {"search": "flat", "search_c_values": grid}
        elif len(chains) > 1:
            candidates = candidate_scores(
                dataset, chains, settings, registry, name, candidate_folds, placed, (progress, warn)
            )
            chosen = best_candidate(chains, candidates)
        else:
            chosen = chains[0]
        fitting = f"fitting '{chosen.text}' and the classifier on all {dataset.data.n_rows:,} rows"
        with progress.working(fitting, True), lending(lent):
            model = _fitted_model(registry, dataset, chosen, task, settings, recorded, candidates, searched)
        if warn is not None:
            for text in model.chain.warnings:
                warn(one_line(text))
        progress.finish()
        return model


def _local_workers(jobs: int | None, engine: str, rows: int, fits: int | None) -> int:
    """The worker processes of a run on ``rows`` rows, started early and lent to the final fit (the kept chain's on
    every row): as many as the candidates' first pool of ``fits`` fits takes (None: there is none), so that every
    call keeps joblib's pool as it is; ``--jobs``' pool (:func:`~filterkit.evaluation.pool_size`) on the local engine
    from :data:`~filterkit.evaluation.POOL_FROM_ROWS` rows, none on fewer (the workers' start costs more than the
    fit's inner folds take), nor on Dask, where the candidates' fits are the cluster's and the final fit the client's.
    The candidates' own pool follows ``--jobs`` as given."""
    if engine != "local" or rows < evaluation.POOL_FROM_ROWS:
        return 1
    pool = evaluation.pool_size(jobs, rows)
    return pool if fits is None else min(pool, fits)


def _first_pool_fits(chains: list[ChainSpec], search: str, folds: int) -> int | None:
    """How many fits the candidates' first pool is given (:func:`candidate_scores`: every chain's folds;
    :func:`flat_candidate_scores`: a chain's folds); None where one chain is searched nested (no pool before the
    final fit)."""
    if search == "flat":
        return folds
    return None if len(chains) == 1 else len(chains) * folds


def _searchable_classifier(registry: Registry, chains: list[ChainSpec] | None, settings: Settings, search: str):
    """The classifier class of ``settings``, once ``chains`` (None: the default candidates), the classifier and the
    ``search`` are checked as :func:`train` takes them; a FilterkitError saying what cannot be trained."""
    for chain in chains or ():
        refuse_row_filters(chain, registry)
    classifier_class = registry.classifier(settings.classifier)
    if search not in SEARCHES:
        raise FilterkitError(f"search {search!r} is none of {', '.join(SEARCHES)}")
    if search == "flat" and not hasattr(classifier_class, "decisions_at"):
        raise FilterkitError(
            f"--search flat picks the svm's C: classifier '{settings.classifier}' has no C grid; use --search nested"
        )
    if not classifier_class.saveable:
        raise FilterkitError(
            f"classifier '{settings.classifier}' cannot be saved in a model (it does not declare saveable = True)"
        )
    return classifier_class


def planned_steps(chains: list[ChainSpec] | None, search: str = "nested") -> int:
    """The steps :func:`train` shows: reading the training rows, and scoring the candidates when there are
    several (``chains`` None: the default candidates, always several) or the search is ``flat``."""
    return 1 if chains is not None and len(chains) == 1 and search != "flat" else 2


def present_classes(dataset: Dataset) -> int:
    """How many of ``dataset``'s class labels its rows hold."""
    return int(np.count_nonzero(np.bincount(dataset.data.column(dataset.class_index).astype(np.int64))))


def trained_task(dataset: Dataset, settings: Settings, name: str) -> str:
    """The task a model of ``dataset`` answers for, as ``evaluate`` would score it: every class
    (``settings.multiclass``), ``settings.positive`` against the rest, or the minority of two classes;
    FilterkitError when the rows cannot teach it."""
    counts = np.bincount(
        dataset.data.column(dataset.class_index).astype(np.int64), minlength=len(dataset.labels)
    ).astype(np.int64)
    if settings.multiclass and np.count_nonzero(counts) < 2:
        raise FilterkitError("--multiclass needs rows of at least two classes", name)
    if not settings.multiclass and settings.positive is None and len(dataset.labels) > 2:
        choices = task_choices(len(dataset.labels), "train")
        raise FilterkitError(f"the class has {len(dataset.labels)} labels: choose the task with {choices}", name)
    task = (
        MULTICLASS_TASK
        if settings.multiclass
        else evaluation.choose_tasks(dataset.labels, counts, settings.positive, False, 1)[0]
    )
    if task != MULTICLASS_TASK and counts[dataset.labels.index(task)] in (0, counts.sum()):
        held = "no row" if counts[dataset.labels.index(task)] == 0 else "only rows"
        raise FilterkitError(f"the training file has {held} of class '{task}': nothing to tell it from", name)
    return task


def best_candidate(chains: list[ChainSpec], candidates: list[dict]) -> ChainSpec:
    """The chain of the best cross-validated score among ``candidates`` (one per chain), the first on a tie."""
    return chains[max(range(len(chains)), key=lambda k: (candidates[k]["score"], -k))]


def refuse_row_filters(chain: ChainSpec, registry: Registry) -> None:
    """FilterkitError, before any work, for a chain with a stage that keeps some rows only (``fold``): a model
    answers for every row it is given."""
    for name, params in chain.stages:
        if declared(registry.make_stage(name, params), "filters_rows"):
            raise FilterkitError(
                f"chain '{chain.text}': stage '{name}' keeps some rows only, and a model answers for every row it "
                "is given"
            )


def candidate_scores(
    dataset: Dataset,
    chains: list[ChainSpec],
    settings: Settings,
    registry: Registry,
    name: str,
    folds: int,
    workers: tuple = evaluation.HERE,
    shown: tuple = (None, None),
) -> list[dict]:
    """Each chain's cross-validated score on ``dataset`` (``folds`` stratified folds, as ``evaluate``):
    ``{"chain", "measure", "score", "f1"}``, the measure the task's AUC (the macro one-vs-rest AUC with
    ``--multiclass``), the F1 (macro-F1) beside it.  A chain is judged by how well its features rank the rows;
    the classifier's C and threshold, chosen on the same rows, make the decisions (docs/RESULTS.md §10.1: the F1
    of five folds picked, among chains within 0.01 of each other, the worse on the test files).  The folds are
    fitted where ``workers`` says (:func:`~filterkit.evaluation.run_fits`' jobs, engine, cluster and plugins
    folder), with the same results, and ``shown`` (a progress, a function given each warning) as
    :func:`scored_candidates` shows them."""
    result = scored_candidates(
        MemorySource(dataset.schema, dataset.data),
        chains,
        dataclasses.replace(settings, folds=folds, train_fractions=(1.0,), repeats=1, stats=False),
        registry,
        name,
        workers,
        shown,
    )
    measure, f1 = ("macro_auc", "macro_f1") if settings.multiclass else ("auc", "f1")
    by_chain = {entry["chain"]: entry for entry in result.document["results"]}
    return [
        {
            "chain": chain.text,
            "measure": measure,
            "score": by_chain[chain.text][measure],
            "f1": by_chain[chain.text][f1],
        }
        for chain in chains
    ]


def scored_candidates(
    source: MemorySource,
    chains: list[ChainSpec],
    settings: Settings,
    registry: Registry,
    name: str,
    workers: tuple,
    shown: tuple,
) -> Evaluation:
    """``evaluate``'s cross-validation of ``chains`` on ``source`` (one task, one training fraction, one
    repeat), fitted where ``workers`` says (:func:`~filterkit.evaluation.run_fits`' jobs, engine, cluster and
    plugins folder), shown as it goes: each fit counted on ``shown``'s progress (None: none) as candidate k of n,
    fold j of f, and each distinct warning of a candidate given once, naming it, to ``shown``'s function (None:
    none); the fits run fold by fold, every candidate in each."""
    from filterkit.evaluation_targets import target_fits
    from filterkit.progress import Progress

    progress, warn = shown
    progress = Progress() if progress is None else progress
    task = task_of(source.schema, settings)
    fits_of = target_fits if task.kind == LABEL_SET else evaluation.class_fits
    fits = fits_of(task, (source, name, None, None), chains, settings, Progress())  # reading memory: no step
    count = len(chains)
    fits.details = [
        f"candidate {k % count + 1} of {count}, fold {k // count % settings.folds + 1} of {settings.folds}"
        for k in range(len(fits.arguments))
    ]
    warned_of = candidate_warnings(chains, settings.folds, warn)

    def warned(position: int, texts: list[str]) -> None:
        warned_of(position % count, position // count % settings.folds, texts)

    label = f"scoring {count} candidate chains by {settings.folds}-fold cross-validation"
    results = evaluation.run_fits(
        registry, fits, chains, settings, workers, progress, label, uneven=True, warned=warned
    )
    return fits.evaluation(results)


def flat_candidate_scores(
    dataset: Dataset,
    chains: list[ChainSpec],
    task: str,
    settings: Settings,
    registry: Registry,
    name: str,
    folds: int,
    workers: tuple = evaluation.HERE,
    shown: tuple = (None, None),
) -> list[dict]:
    """Each chain's score and the svm's C by one cross-validation over both (``train --search flat``):
    ``{"chain", "measure", "score", "f1", "C"}``.  The folds are those :func:`candidate_scores` cuts (``folds``
    stratified folds of ``settings.seed``); in each the chain is fitted on the training rows (:func:`flat_fold`),
    and for each C of the svm's grid one SVM per class is fitted there, with no inner cross-validation, and scores
    the held-out rows (:func:`_flat_c_search`).  The score at the C picked is the task's AUC (the macro one-vs-rest
    AUC, ``--multiclass``) of each fold, averaged over the folds, as :func:`candidate_scores` measures it; the F1
    the out-of-fold F1 (macro-F1) at that C, as the svm's inner search measures it.  A chain's folds are fitted,
    and held in memory while its C is searched, where ``workers`` says (:class:`FoldRunner`), a fold to a process
    or task, with the same results; ``shown`` (a progress, a function given each warning) counts a step per
    (candidate, fold) and warns as :func:`scored_candidates`."""
    from filterkit.progress import Progress
    from filterkit.tasks import stratified_folds

    progress, warn = shown
    progress = Progress() if progress is None else progress
    labels = dataset.labels
    codes = dataset.data.column(dataset.class_index).astype(np.int64)
    counts = np.bincount(codes, minlength=len(labels))
    largest = int(np.argmax(counts))
    if folds > counts[largest]:
        raise FilterkitError(
            f"--folds {folds} is more than the {counts[largest]} rows of the largest class ('{labels[largest]}'): "
            "stratified folds need a class with a row in every fold",
            name,
        )
    cuts = [(np.sort(train), test) for train, test in stratified_folds(codes, folds, settings.seed)]
    warned = candidate_warnings(chains, folds, warn)
    label = f"scoring {len(chains)} candidate chains and the svm's C by one {folds}-fold cross-validation"
    candidates = []
    jobs = min(evaluation.pool_size(workers[0], dataset.data.n_rows), folds)
    with FoldRunner(registry, dataset, (jobs, *workers[1:]), (chains, settings, progress)) as runner:
        with progress.step(label, items=len(chains) * folds, unit="fits", uneven=True) as meter:
            for number, chain in enumerate(chains):
                held, truth, columns = [], np.zeros(len(codes), dtype=np.int64), []
                fitted_folds = runner.results(flat_fold, [(chain, task, train, test, folds) for train, test in cuts])
                for fold, fitted in enumerate(fitted_folds):
                    texts, train_features, train_classes, test_features, test_classes, columns = fitted
                    held.append((train_features, train_classes, test_features))
                    truth[cuts[fold][1]] = test_classes
                    warned(number, fold, texts)
                    meter.advance(detail=f"candidate {number + 1} of {len(chains)}, fold {fold + 1} of {folds}")
                svm = CheckedClassifier(registry, settings.classifier, settings.classifier_params)
                searched = (settings.classifier, settings.classifier_params, settings.seed)
                kept = runner.kept(held)
                chosen, decisions, f1 = _flat_c_search(runner, svm, searched, kept, cuts, truth, columns)
                candidates.append(
                    {
                        "chain": chain.text,
                        "measure": "macro_auc" if task == MULTICLASS_TASK else "auc",
                        "score": _fold_mean_auc(decisions, truth, cuts, columns),
                        "f1": f1,
                        "C": chosen,
                    }
                )
    return candidates


class FoldRunner:
    """Runs the flat search's calls (a function of the registry, the rows and its arguments) here, in a pool of
    processes that read the rows once each (as ``evaluate``'s workers do), or as tasks on a Dask cluster that is
    sent the rows once a worker: their results in their order, the first error in that order raised, as one
    process would raise it.  A call's arguments travel with it: in the pool a fold's feature matrices go to a
    worker again for every C (on two cores the pool cost the flat search more than it saved: 34 CPU s against 24
    on 8,000 Debian descriptions); on Dask they are sent to the cluster once a candidate (:meth:`kept`)."""

    def __init__(self, registry: Registry, dataset: Dataset, workers: tuple, checked: tuple):
        """Calls on ``dataset`` placed as ``workers`` says (processes, engine, cluster and plugins folder, as
        :func:`~filterkit.evaluation.run_fits` takes them), a Dask cluster's workers checked for the stages of
        ``checked``'s chains and its settings' classifier (its progress showing the cluster start)."""
        self.jobs, self.engine, self.cluster, self.plugins_dir = workers
        self.registry, self.dataset, self.checked = registry, dataset, checked
        self.stack = contextlib.ExitStack()
        self.shipped: Any = None
        self.client: Any = None
        #: the files the options name, as the run read them (:func:`~filterkit.evaluation.option_files`)
        self.files = GIVEN_FILES.get()

    def __enter__(self) -> "FoldRunner":
        if self.engine == "dask":
            chains, settings, progress = self.checked
            engine = self.stack.enter_context(
                evaluation.checked_dask_engine(
                    self.registry, self.plugins_dir, chains, settings, self.cluster, progress
                )
            )
            self.client, self.plugins_dir = engine.client, engine.plugins_dir
            (self.shipped,) = self.client.scatter([self.dataset], broadcast=True)
        elif self.jobs > 1:
            self.shipped = self.stack.enter_context(evaluation.shipped_dataset(self.dataset))
        return self

    def __exit__(self, *raised) -> None:
        self.stack.close()

    def kept(self, values: list) -> list:
        """``values`` as the calls take them: on Dask, sent to the cluster once (futures that its tasks resolve)."""
        return values if self.client is None else self.client.scatter(values)

    def results(self, function: Callable, calls: list[tuple]):
        """``function(registry, dataset, *arguments)`` of each of ``calls``' arguments, in their order."""
        if self.client is not None:
            from filterkit.distributed import results_in_order

            yield from results_in_order(
                [
                    self.client.submit(
                        _on_dask, self.plugins_dir, function, self.shipped, arguments, self.files, pure=False
                    )
                    for arguments in calls
                ]
            )
            return
        if self.jobs == 1:
            for arguments in calls:
                yield function(self.registry, self.dataset, *arguments)
            return
        from joblib import Parallel, delayed

        sent = Parallel(n_jobs=self.jobs, return_as="generator")(
            delayed(_in_worker)(self.plugins_dir, self.shipped, function, arguments, self.files) for arguments in calls
        )
        for result, error in sent:
            if error is not None:
                raise error
            yield result


def _in_worker(plugins_dir, shipped: str, function: Callable, arguments: tuple, files: dict | None) -> tuple:
    """(result, None) of ``function`` in a worker process, on the rows of the file ``shipped`` and the plugins of
    ``plugins_dir`` (each read once a process), the files its options name as the run read them, or (None, the
    error it raised)."""
    try:
        with sent_files(files):
            dataset = evaluation.worker_dataset(shipped)
            return function(evaluation.worker_registry(plugins_dir), dataset, *arguments), None
    except Exception as error:  # raised in the parent at the call's turn (FoldRunner.results)
        return None, portable(error)


def _on_dask(plugins_dir, function: Callable, dataset: Dataset, arguments: tuple, files: dict):
    """``function`` of ``arguments`` in a Dask task, on the rows sent to its worker and the plugins of
    ``plugins_dir`` (loaded once a worker process), the files its options name as the client read them."""
    with sent_files(files):
        return function(evaluation.worker_registry(plugins_dir), dataset, *arguments)


def flat_fold(registry: Registry, dataset: Dataset, chain: ChainSpec, task: str, train, test, folds: int) -> tuple:
    """``chain`` fitted on the ``train`` rows for ``task``, as ``evaluate`` fits it, and applied to the ``test``
    rows (one of ``folds`` folds): (the chain's warnings, the training features, their svm classes, the test
    features, the test rows' svm classes, the svm's columns).  The svm's classes are positions among the classes
    present (k classes; a column each) or 1 for the task's class and 0 for the rest (one column, 1)."""
    from filterkit.stage import feature_positions

    multiclass = task == MULTICLASS_TASK
    labels = dataset.labels
    present = np.flatnonzero(np.bincount(dataset.data.column(dataset.class_index).astype(np.int64)))
    columns = list(range(len(present))) if multiclass else [1]

    def svm_classes(chain_codes: np.ndarray) -> np.ndarray:
        if multiclass:
            return feature_positions(len(labels), present)[chain_codes.astype(np.int64)]
        return (chain_codes == labels.index(task)).astype(np.int64)

    output_class, prepared, fitted = evaluation.fitted_chain(
        registry, dataset, chain, train, None if multiclass else task
    )
    if multiclass and output_class.labels != labels:
        raise FilterkitError(f"chain '{chain.text}' changes the class labels, which --multiclass cannot score")
    (train_features, train_codes), (test_features, test_codes) = prepared(train), prepared(test)
    train_classes = svm_classes(train_codes)
    _refuse_lacking_fold(train_classes, columns, multiclass, [labels[k] for k in present], task, folds)
    return list(fitted.warnings), train_features, train_classes, test_features, svm_classes(test_codes), columns


def flat_fold_decisions(registry: Registry, dataset: Dataset, searched: tuple, C: float, fold: tuple, columns):
    """The decision values of a fold's test rows (``fold``: training features and classes, test features) of
    one SVM per class of ``columns`` at ``C``, fitted on its training rows (``searched``: the classifier, its
    options and seed)."""
    classifier, params, seed = searched
    return CheckedClassifier(registry, classifier, params)("decisions_at", C, seed, *fold[:2], columns, fold[2])


def _flat_c_search(
    runner: FoldRunner, svm: CheckedClassifier, searched: tuple, held: list, cuts: list, truth: np.ndarray, columns
) -> tuple:
    """(C, the out-of-fold decision values at C, their F1) of the svm ``svm``'s grid by its ``--svm-c-by`` and
    ``--svm-c-search`` on the folds ``held`` (per fold of ``cuts``: training features and classes, test features):
    at each C (ascending with ``early``, stopping where the svm's inner search stops) one SVM per class of
    ``columns`` fitted on each fold's training rows scores its test rows (:func:`flat_fold_decisions`, run by
    ``runner``); the C of the best F1 of those decision values (``--svm-c-by f1``: :meth:`LinearSVM.out_of_fold_f1`,
    ``truth`` their classes) or of the best mean AUC over the folds (auc), the smallest on a tie."""
    params, grid = svm.classifier.params, svm.classifier.grid
    early, by_f1 = params["c_search"] == "early", params["c_by"] == "f1"
    path: dict[float, np.ndarray] = {}
    inner: dict[float, float] = {}
    for C in sorted(grid) if early else grid:
        path[C] = np.zeros((len(truth), len(columns)))
        decided = runner.results(flat_fold_decisions, [(searched, C, fold, columns) for fold in held])
        for (_, test), decisions in zip(cuts, decided):
            path[C][test] = decisions
        inner[C] = (
            svm("out_of_fold_f1", path[C], truth, columns) if by_f1 else _fold_mean_auc(path[C], truth, cuts, columns)
        )
        if early and len(inner) > 1 and not inner[C] > max(score for c, score in inner.items() if c != C):
            break
    chosen = max(inner, key=lambda C: (inner[C], -C))
    f1 = inner[chosen] if by_f1 else svm("out_of_fold_f1", path[chosen], truth, columns)
    return chosen, path[chosen], float(f1)


def _fold_mean_auc(decisions: np.ndarray, truth: np.ndarray, cuts: list, columns) -> float:
    """The mean over the folds of ``cuts`` of the AUC of each test fold's ``decisions`` (k classes: the mean over
    the classes of ``columns`` of each one's against the rest), ``truth`` the rows' classes; a fold (or class)
    with one side only left out, as ``evaluate`` leaves it out."""
    from sklearn.metrics import roc_auc_score

    per_fold = []
    for _, test in cuts:
        aucs = [
            roc_auc_score(truth[test] == k, decisions[test, j]) if 0 < np.sum(truth[test] == k) < len(test) else np.nan
            for j, k in enumerate(columns)
        ]
        per_fold.append(np.nan if np.isnan(aucs).all() else float(np.nanmean(aucs)))
    defined = [value for value in per_fold if not np.isnan(value)]
    return float(np.mean(defined)) if defined else float("nan")


def _refuse_lacking_fold(
    classes: np.ndarray, columns, multiclass: bool, names: list[str], task: str, folds: int
) -> None:
    """FilterkitError, as ``evaluate`` words it, for a fold's training ``classes`` without a row of a class the svm
    learns (k classes), or with rows of one side only (a task)."""
    held = np.bincount(classes, minlength=max(columns) + 1)
    if multiclass and (held == 0).any():
        raise FilterkitError(
            f"--multiclass: a training fold holds no row of class '{names[int(np.argmin(held))]}'; "
            f"the class is too small for {folds} folds"
        )
    if not multiclass and (held[1] == 0 or held[0] == 0):
        missing = "no row of" if held[1] == 0 else "only rows of"
        raise FilterkitError(
            f"task '{task}': a training fold holds {missing} class '{task}' ({int(held[1])} of {len(classes)} "
            f"rows); the class is too small (or too large) for {folds} folds"
        )


def c_value_text(grid: str, C: float) -> str:
    """The text of ``C`` as the grid ``grid`` (``--svm-c-values``) writes it, so that the model's options are those
    typed: ``--svm-c-values`` that value alone fits the same model."""
    return next(text.strip() for text in grid.split(",") if float(text) == C)


def candidate_warnings(chains: list[ChainSpec], folds: int, warn) -> Callable[[int, int, list[str]], None]:
    """A function given a fit's candidate, fold and chain warnings that gives ``warn`` (None: nobody) each distinct
    warning of a candidate once (the same words in another fold's numbers being the same), naming it and the fold."""
    seen: set[tuple[int, str]] = set()

    def warned(candidate: int, fold: int, texts: list[str]) -> None:
        for text in texts:
            alike = (candidate, re.sub(r"[0-9][0-9,.]*", "#", text))  # the same warning in another fold's numbers
            if warn is not None and alike not in seen:
                seen.add(alike)
                chain = chains[candidate].text
                warn(f"candidate {candidate + 1} of {len(chains)} '{chain}', fold {fold + 1}: {one_line(text)}")

    return warned


def _fitted_model(
    registry: Registry,
    dataset: Dataset,
    chain: ChainSpec,
    task: str,
    settings: Settings,
    reading: tuple[str, dict],
    candidates: list[dict],
    searched: dict,
) -> "TrainedModel":
    """``chain`` and the classifier fitted on every row of ``dataset`` for ``task``, as a model, saying how the
    candidates were ``searched`` (nothing: nested)."""
    multiclass = task == MULTICLASS_TASK
    rows = np.arange(dataset.data.n_rows)
    output_class, prepared, fitted = evaluation.fitted_chain(
        registry, dataset, chain, rows, None if multiclass else task
    )
    if multiclass and output_class.labels != dataset.labels:
        raise FilterkitError(f"chain '{chain.text}' changes the class labels, which --multiclass cannot learn")
    features, codes = prepared(rows)
    call = CheckedClassifier(registry, settings.classifier, settings.classifier_params)
    if multiclass:
        classes = [dataset.labels[k] for k in evaluation.fit_classes(call, dataset, features, codes, settings)]
    else:
        evaluation.fit_task(call, dataset.labels.index(task), task, features, codes, settings, dataset.labels)
        classes = [task]
    task_name = "multiclass" if multiclass else "binary"
    section = {
        **section_head(registry, settings, call.classifier.params, task_name, classes, chain, features),
        "fitted": call("describe"),
        **searched,
        **({"candidates": candidates} if candidates else {}),
        "state": call("state"),
    }
    return TrainedModel(fitted, call, section, reading, registry)


def section_head(registry: Registry, settings: Settings, params: dict, task: str, classes, chain, features) -> dict:
    """What a model's classifier section says first, whatever its task: the classifier (its plugin and options,
    but those at a value it declares ``unrecorded_defaults``), the task and its classes, the seed, and the chain
    whose ``features`` (a matrix) it learnt from."""
    registered = registry.classifiers[settings.classifier]
    unrecorded = getattr(registered.value, "unrecorded_defaults", {})
    return {
        "name": settings.classifier,
        "plugin": registered.plugin,
        "distribution": registered.distribution,
        "params": {key: value for key, value in params.items() if key not in unrecorded or unrecorded[key] != value},
        "task": task,
        "classes": classes,
        "seed": settings.seed,
        "chain": chain.text,
        "features": int(features.shape[1]),
    }


def train_labels(
    registry: Registry, opened: tuple, task: Task, chains, settings: Settings, shown: tuple, scoring: tuple
) -> LabelSetModel:
    """:func:`train` on multi-label data (``task``: a label set, its labels' names and Mulan's XML, if any), by binary
    relevance as ``evaluate --test`` scores it: the chain fitted once for every label, a classifier per label
    (a label constant in the training rows predicted constant); several candidates are scored by
    cross-validated micro-F1 over iteratively stratified folds (``scoring``: the folds, and where they are fitted:
    :func:`~filterkit.evaluation.run_fits`' jobs, engine, cluster and plugins folder), shown as :func:`train`
    shows them (``shown``: its progress and warn)."""
    from filterkit import evaluation_targets

    progress, warn = shown
    source, name = opened
    candidate_folds, workers = scoring
    evaluation_targets.refuse_single_label_settings(settings)
    if settings.threshold != "decision" or settings.chain_per_label:
        option = "chain_per_label" if settings.chain_per_label else f"threshold={settings.threshold!r}"
        raise FilterkitError(f"{option}: a model decides each label by its own classifier, over one chain")
    progress.expect(planned_steps(chains))
    data, _ = evaluation.read_rows(source, name, None, "", settings, progress)
    dataset, _ = evaluation_targets.known_label_rows(source.schema, data, task.targets, task.named)
    if not len(dataset.truth):
        raise FilterkitError("the training data has no row whose labels are all known", name)
    chains = default_candidates(dataset.schema, registry, True) if chains is None else chains
    candidates = []
    if len(chains) > 1:
        result = scored_candidates(
            MemorySource(dataset.schema, dataset.data),
            chains,
            dataclasses.replace(settings, folds=candidate_folds),
            registry,
            name,
            workers,
            shown,
        )
        candidates = [
            {"chain": entry["chain"], "measure": "micro_f1", "score": entry["micro_f1"], "macro_f1": entry["macro_f1"]}
            for entry in result.document["results"]
        ]
        chosen = best_candidate(chains, candidates)
    else:
        chosen = chains[0]
    rows_text = f"{len(dataset.truth):,} rows"
    with progress.working(f"fitting '{chosen.text}' and a classifier per label on all {rows_text}", True):
        rows = np.arange(len(dataset.truth))
        fitted, left_out = evaluation_targets.fitted_label_chain(registry, dataset, chosen, chosen.stages, rows)
        assert fitted.output_schema is not None  # fitted
        features = evaluation.classifier_matrix(
            fitted.output_schema, next(iter(fitted.transform([dataset.data]))), left_out
        )
        per_label: list[dict] = []
        classifiers: list[CheckedClassifier | None] = []
        for column in dataset.truth.T:
            call = CheckedClassifier(registry, settings.classifier, settings.classifier_params)
            if column.all() or not column.any():
                per_label.append({"constant": bool(column.any())})
                classifiers.append(None)
                continue
            call("fit", features, column.astype(np.int64), settings.seed)
            per_label.append({})
            classifiers.append(call)
        cut_label_set([None if c is None else c.classifier for c in classifiers], dataset.truth, dataset.labels)
        per_label = [
            entry if call is None else {"fitted": call("describe"), "state": call("state")}
            for entry, call in zip(per_label, classifiers)
        ]
    if warn is not None:
        for text in fitted.warnings:
            warn(one_line(text))
    progress.finish()
    section = {
        **section_head(registry, settings, call.classifier.params, "labels", list(dataset.labels), chosen, features),
        **({"candidates": candidates} if candidates else {}),
        "per_label": per_label,
    }
    return LabelSetModel(fitted, classifiers, section, source.reading, registry)
