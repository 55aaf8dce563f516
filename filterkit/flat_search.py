"""``train --search flat``: each candidate chain and the svm's C scored by one cross-validation over both, as
scikit-learn's ``GridSearchCV`` searches (docs/algorithms.md §8.4, docs/RESULTS.md §10.5, §10.10): a chain fitted
once a fold, the SVM at each C of its grid on each fold's training rows, no inner cross-validation."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Generator, Iterator
from typing import Any, Callable

import numpy as np

from filterkit import evaluation
from filterkit.errors import FilterkitError
from filterkit.evaluation import MULTICLASS_TASK, ChainSpec, CheckedClassifier, Dataset, Settings
from filterkit.lent_workers import WorkerPool, kept_for_workers, portable, received, shipped
from filterkit.linear_svm import FIT_ITERATIONS, SEARCH_ITERATIONS, stopped_fits, with_refits
from filterkit.option_files import GIVEN_FILES, sent_files
from filterkit.plugins import Registry
from filterkit.tasks import distinct_warnings


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
) -> tuple[list[dict], list[np.ndarray]]:
    """Each chain's score and the svm's C by one cross-validation over both (``train --search flat``):
    ``{"chain", "measure", "score", "f1", "C"}``, and its out-of-fold decision values at that C (rows × the svm's
    columns).  The folds are those :func:`candidate_scores` cuts (``folds``
    stratified folds of ``settings.seed``); in each the chain is fitted on the training rows (:func:`flat_fold`),
    and for each C of the svm's grid one SVM per class is fitted there, with no inner cross-validation, and scores
    the held-out rows (:func:`_flat_c_search`).  The score at the C picked is the task's AUC (the macro one-vs-rest
    AUC, ``--multiclass``) of each fold, averaged over the folds, as :func:`candidate_scores` measures it; the F1
    the out-of-fold F1 (macro-F1) at that C, as the svm's inner search measures it.  The chains' folds are
    fitted, and their matrices kept while a chain's C is searched, where ``workers`` says (:class:`FoldRunner`:
    here, in a pool's files, on a Dask cluster), with the same results; ``shown`` (a progress, a function given
    each warning) counts a step per (candidate, fold) and warns as :func:`scored_candidates`."""
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
    candidates, out_of_fold = [], []
    jobs = min(evaluation.pool_size(workers[0], dataset.data.n_rows), len(chains) * folds)
    with FoldRunner(registry, dataset, (jobs, *workers[1:]), (chains, settings, progress)) as runner:
        with progress.step(label, items=len(chains) * folds, unit="fits", uneven=True) as meter:
            fitted_folds = runner.fitted_folds(chains, task, cuts, meter)
            for number, chain in enumerate(chains):
                held, truth = [], np.zeros(len(codes), dtype=np.int64)
                for fold, (texts, kept_fold, test_classes, columns) in enumerate(fitted_folds[number]):
                    held.append(kept_fold)
                    truth[cuts[fold][1]] = test_classes
                    warned(number, fold, texts)
                svm = CheckedClassifier(registry, settings.classifier, settings.classifier_params)
                searched = (settings.classifier, settings.classifier_params, settings.seed)
                kept = runner.kept(held)
                chosen, decisions, f1, stopped = _flat_c_search(runner, svm, searched, kept, cuts, truth, columns)
                candidates.append(
                    {
                        "chain": chain.text,
                        "measure": "macro_auc" if task == MULTICLASS_TASK else "auc",
                        "score": _fold_mean_auc(decisions, truth, cuts, columns),
                        "f1": f1,
                        "C": chosen,
                        **({"C_scored_by_stopped_fits": stopped} if stopped else {}),
                    }
                )
                out_of_fold.append(decisions)
                runner.drop(kept)
    return candidates, out_of_fold


class FoldRunner:
    """Runs the flat search's calls (a function of the registry, the rows and its arguments) here, in a pool of
    processes that hold the rows (as ``evaluate``'s workers do), or as tasks on a Dask cluster that is
    sent the rows once a worker: their results in their order, the first error in that order raised, as one
    process would raise it.  A fold's feature matrices are made once a candidate and kept where its C's calls
    find them (:meth:`fitted_folds`): here alone; in the pool, by the worker that fits the fold, in a file of
    the run's folder that the other calls map (joblib's format: sent with every call, 30 MB of a fold of
    Debian's word pairs cost 0.19 s of each C's two-core wall); on Dask, sent to the cluster once (:meth:`kept`)."""

    def __init__(self, registry: Registry, dataset: Dataset, workers: tuple, checked: tuple):
        """Calls on ``dataset`` placed as ``workers`` says (processes, engine, cluster and plugins folder, as
        :func:`~filterkit.evaluation.run_fits` takes them), a Dask cluster's workers checked for the stages of
        ``checked``'s chains and its settings' classifier (its progress showing the cluster start)."""
        self.jobs, self.engine, self.cluster, self.plugins_dir = workers
        self.registry, self.dataset, self.checked = registry, dataset, checked
        self.stack = contextlib.ExitStack()
        self.shipped: Any = None
        self.pool: Any = None
        self.client: Any = None
        self.folder = ""  # the pool's fold files (:meth:`fitted_folds`)
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
            self.shipped = self.stack.enter_context(shipped(self.dataset, "the rows"))
            self.folder = self.stack.enter_context(tempfile.TemporaryDirectory(prefix="filterkit-folds-"))
            self.pool = self.stack.enter_context(WorkerPool(self.jobs))  # ended first: its workers write the folder
        return self

    def __exit__(self, *raised) -> None:
        self.stack.__exit__(*raised)  # left by an error or an interrupt: the pool's workers are ended at once

    def column_parts(self, columns: int, least: int) -> list[list[int]]:
        """The svm's ``columns`` (positions) cut into parts of ``least`` columns or more (where there are that
        many), each part of each fold a call of its own, in the pool: five folds on two processes kept one idle a
        third of each C's time, and a part of several columns waits for its slowest (k classes; a class's fit does
        not depend on the others', so the values are the same).  Two at a candidate's first C, so that each call
        is one of several classes (``decisions_at`` refuses what k classes cannot take), one after it.  One part
        on Dask, or alone."""
        count = columns if self.client is None and self.jobs > 1 else 1
        return [
            [int(j) for j in part] for part in np.array_split(np.arange(columns), max(1, min(count, columns // least)))
        ]

    def fitted_folds(self, chains: list[ChainSpec], task: str, cuts: list, meter) -> list:
        """Each chain of ``chains`` fitted on each fold of ``cuts`` (:func:`flat_fold`): per chain, its folds' (the
        chain's warnings, the fold's matrices as the C search's calls take them, the test rows' svm classes, the
        svm's columns) in order, a fold's error raised at its turn; ``meter`` advanced a step per fold taken.
        Here and on Dask a chain's folds are fitted at its turn.  The pool is sent every chain's folds at the first
        chain's turn, in the chains' order, each chain's taken as it comes: a chain's C search is queued behind the
        folds still to fit, so no worker waits for the slowest fold of a group (on the man pages one had waited
        two seconds of thirty; the first chain's folds still come first, so an error there is met as soon as in one
        process), each fold's matrices in a file of the run's folder, its path in their place (:func:`kept_fold`),
        so that what this process holds does not grow."""
        folds = len(cuts)
        calls = [[(chain, task, train, test, folds) for train, test in cuts] for chain in chains]
        pooled: list[Generator] = []

        def outcomes(number: int) -> Iterator:
            if not self.folder:
                yield from self.results(flat_fold, calls[number])
                return
            if not pooled:
                every = [
                    (*calls[n][fold], os.path.join(self.folder, f"{n}-{fold}.joblib"))
                    for n in range(len(chains))
                    for fold in range(folds)
                ]
                pooled.append(self.outcomes(kept_fold, every))
                self.stack.callback(pooled[0].close)  # left early (an error): its calls not yet made are dropped
            for _ in range(folds):
                yield next(pooled[0])

        def fitted(number: int) -> Iterator[tuple]:
            for fold, outcome in enumerate(outcomes(number)):
                meter.advance(detail=f"candidate {number + 1} of {len(chains)}, fold {fold + 1} of {folds}")
                if isinstance(outcome, Exception):
                    raise outcome
                yield outcome

        return [fitted(number) for number in range(len(chains))]

    def drop(self, held: list) -> None:
        """The pool's fold files of ``held`` removed (a candidate's C is chosen)."""
        for path in held if self.folder else ():
            os.remove(path)

    def kept(self, values: list) -> list:
        """``values`` as the calls take them: on Dask, sent to the cluster once (futures that its tasks resolve)."""
        return values if self.client is None else self.client.scatter(values)

    def results(self, function: Callable, calls: list[tuple]):
        """``function(registry, dataset, *arguments)`` of each of ``calls``' arguments, in their order."""
        if self.client is not None:
            from filterkit.dask_futures import results_in_order

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
        for outcome in self.outcomes(function, calls):
            if isinstance(outcome, Exception):
                raise outcome
            yield outcome

    def outcomes(self, function: Callable, calls: list[tuple]) -> Generator:
        """:meth:`results` in the pool, each call's error in its result's place."""
        sent = [(self.plugins_dir, self.shipped, function, arguments, self.files) for arguments in calls]
        for result, error in self.pool.results(_in_worker, sent):
            yield result if error is None else error


def _in_worker(plugins_dir, shipped: str, function: Callable, arguments: tuple, files: dict | None) -> tuple:
    """(result, None) of ``function`` in a worker process, on the rows of the file ``shipped`` and the plugins of
    ``plugins_dir`` (each read once a process), the files its options name as the run read them, or (None, the
    error it raised)."""
    try:
        with sent_files(files):
            return function(evaluation.worker_registry(plugins_dir), received(shipped), *arguments), None
    except Exception as error:  # raised in the parent at the call's turn (FoldRunner.results)
        return None, portable(error)


def _on_dask(plugins_dir, function: Callable, dataset: Dataset, arguments: tuple, files: dict):
    """``function`` of ``arguments`` in a Dask task, on the rows sent to its worker and the plugins of
    ``plugins_dir`` (loaded once a worker process), the files its options name as the client read them."""
    with sent_files(files):
        return function(evaluation.worker_registry(plugins_dir), dataset, *arguments)


def kept_fold(registry: Registry, dataset: Dataset, chain: ChainSpec, task: str, train, test, folds: int, path: str):
    """:func:`flat_fold`, its fold's matrices written to ``path`` (joblib's format, its arrays mapped by the calls
    that read it: :func:`flat_fold_decisions`) and its path in their place."""
    import joblib

    texts, matrices, test_classes, columns = flat_fold(registry, dataset, chain, task, train, test, folds)
    with kept_for_workers("a fold's features", path):
        joblib.dump(matrices, path)
    return texts, path, test_classes, columns


def flat_fold(registry: Registry, dataset: Dataset, chain: ChainSpec, task: str, train, test, folds: int) -> tuple:
    """``chain`` fitted on the ``train`` rows for ``task``, as ``evaluate`` fits it, and applied to the ``test``
    rows (one of ``folds`` folds): (the chain's warnings, (the training features, their svm classes, the test
    features), the test rows' svm classes, the svm's columns).  The svm's classes are positions among the classes
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
    return list(fitted.warnings), (train_features, train_classes, test_features), svm_classes(test_codes), columns


def flat_fold_decisions(
    registry: Registry, dataset: Dataset, searched: tuple, C: float, fold: tuple, columns, iterations: int
) -> tuple[np.ndarray, np.ndarray]:
    """The decision values of a fold's test rows (``fold``: training features and classes, test features, or the
    path of :func:`kept_fold`'s file of them) of one SVM per class of ``columns`` at ``C``, fitted on its training
    rows (``searched``: the classifier, its options and seed; liblinear at most ``iterations``), and which of those
    fits liblinear stopped (a flag each)."""
    import joblib

    fold = joblib.load(fold, mmap_mode="r") if isinstance(fold, str) else fold
    classifier, params, seed = searched
    call = CheckedClassifier(registry, classifier, params)
    return call("decisions_at", C, seed, *fold[:2], columns, fold[2], iterations)


def _flat_c_search(
    runner: FoldRunner, svm: CheckedClassifier, searched: tuple, held: list, cuts: list, truth: np.ndarray, columns
) -> tuple:
    """(C, the out-of-fold decision values at C, their F1, the C values scored by stopped fits) of the svm ``svm``'s
    grid by its ``--svm-c-by`` and ``--svm-c-search`` on the folds ``held`` (per fold of ``cuts``: training features
    and classes, test features): at each C (ascending with ``early``, stopping where the svm's inner search stops)
    one SVM per class of ``columns`` fitted on each fold's training rows scores its test rows
    (:func:`flat_fold_decisions`, run by ``runner``); the C of the best F1 of those decision values (``--svm-c-by
    f1``: :meth:`LinearSVM.out_of_fold_f1`, ``truth`` their classes) or of the best mean AUC over the folds (auc),
    the smallest on a tie.  An early search of several C stops liblinear at :data:`SEARCH_ITERATIONS`, as the
    nested search's inner fits (docs/algorithms.md §8.4); where it stopped a fit at the chosen C, those fits are
    made again to convergence (the others converged: :func:`~filterkit.linear_svm.stopped_fits`), whose values
    score the candidate and fit the kept model's sigmoid and cuts."""
    params, grid = svm.classifier.params, svm.classifier.grid
    early, by_f1 = params["c_search"] == "early", params["c_by"] == "f1"
    iterations = SEARCH_ITERATIONS if early and len(set(grid)) > 1 else FIT_ITERATIONS
    path: dict[float, np.ndarray] = {}
    flags: dict[float, list] = {}
    inner: dict[float, float] = {}
    stopped: list[float] = []

    def scored(C: float, most: int) -> bool:
        parts = runner.column_parts(len(columns), 1 if path else 2)  # the first C's calls pass the refusal
        path[C], flags[C] = np.zeros((len(truth), len(columns))), [np.zeros(len(columns), dtype=bool) for _ in cuts]
        calls = [(searched, C, fold, [columns[j] for j in part], most) for fold in held for part in parts]
        decided = iter(runner.results(flat_fold_decisions, calls))
        for fold, (_, test) in enumerate(cuts):
            for part, (decisions, part_stopped) in zip(parts, decided):
                path[C][np.ix_(test, part)] = decisions
                flags[C][fold][part] = part_stopped
        return any(np.any(fold_flags) for fold_flags in flags[C])

    for C in sorted(grid) if early else grid:
        if scored(C, iterations) and iterations < FIT_ITERATIONS and C not in stopped:
            stopped.append(C)
        inner[C] = (
            svm("out_of_fold_f1", path[C], truth, columns) if by_f1 else _fold_mean_auc(path[C], truth, cuts, columns)
        )
        if early and len(inner) > 1 and not inner[C] > max(score for c, score in inner.items() if c != C):
            break
    chosen = max(inner, key=lambda C: (inner[C], -C))
    if chosen in stopped:
        path[chosen] = _converged(runner, (searched, chosen), held, cuts, columns, (path[chosen], flags[chosen]))
    f1 = inner[chosen] if by_f1 and chosen not in stopped else svm("out_of_fold_f1", path[chosen], truth, columns)
    return chosen, path[chosen], float(f1), stopped


def _converged(runner: FoldRunner, fitted_at: tuple, held: list, cuts: list, columns, scored: tuple) -> np.ndarray:
    """The out-of-fold values ``scored`` (the values at a C and its fits' stopped flags) with the fits liblinear
    stopped made again to convergence (``fitted_at``: the classifier and seed, and the C), a call per class of each
    fold in the pool (:meth:`FoldRunner.column_parts`)."""
    (searched, C), (values, flags) = fitted_at, scored
    refits = [
        (fold, [positions[j] for j in part])
        for fold, positions in stopped_fits(flags)
        for part in runner.column_parts(len(positions), 1)
    ]
    again = [(searched, C, held[fold], [columns[j] for j in positions], FIT_ITERATIONS) for fold, positions in refits]
    fitted = [fold_values for fold_values, _ in runner.results(flat_fold_decisions, again)]
    return with_refits(values, cuts, refits, fitted)


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


def candidate_warnings(chains: list[ChainSpec], folds: int, warn) -> Callable[[int, int, list[str]], None]:
    """A function given a fit's candidate, fold and chain warnings that gives ``warn`` (None: nobody) each distinct
    warning of a candidate once (:func:`~filterkit.tasks.distinct_warnings`), naming it and the fold."""
    shown = distinct_warnings(warn)

    def warned(candidate: int, fold: int, texts: list[str]) -> None:
        chain = chains[candidate].text
        shown(chain, f"candidate {candidate + 1} of {len(chains)} '{chain}', fold {fold + 1}", texts)

    return warned
