"""Training a text classifier you can ship (issue 49): :func:`train` fits a chain and a classifier exactly as
``evaluate --test --svm-c-by f1 --svm-c-search early`` does (the same C search, seed and rows; the flat search
calibrates on its own out-of-fold values instead) and saves both in one model file, JSON and arrays, never code
(:mod:`filterkit.trained` serves it).

Given several candidate chains, :func:`train` keeps the one of the best cross-validated score on the
training file (the AUC of the task, the macro one-vs-rest AUC of every class, micro-F1 on labels), and
records every candidate's.  Candidates are scored by nested cross-validation (each fold's SVM picks its C by its own
inner cross-validation), or with ``search="flat"`` by one cross-validation over chain and C together
(:func:`flat_candidate_scores`); ``search="auto"``, the default, is flat for several candidates on more than two
classes, nested otherwise (:func:`resolved_search`).  A label set is one implementation beside a class: binary
relevance, the chain fitted once for every label and a classifier per label, as ``evaluate --test`` scores it
(:func:`train_labels`).
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np

from filterkit import evaluation
from filterkit.arff.tokens import one_line
from filterkit.costs import refuse_unfitting_costs
from filterkit.errors import FilterkitError
from filterkit.evaluation import MULTICLASS_TASK, ChainSpec, CheckedClassifier, Dataset, Settings
from filterkit.flat_search import candidate_warnings, flat_candidate_scores
from filterkit.formats import FormatOptions
from filterkit.lent_workers import lending
from filterkit.option_files import sent_files
from filterkit.plugins import Registry, load_plugins
from filterkit.reports import Evaluation
from filterkit.schema import STRING, Schema
from filterkit.sources import MemorySource
from filterkit.stage import task_choices
from filterkit.tasks import LABEL_SET, Task, choose_tasks, refuse_row_filters, task_of
from filterkit.thresholds import cut_label_set, refuse_scope_constant, refuse_scope_outside
from filterkit.trained import LabelSetModel, TrainedModel

#: Folds of the cross-validation that scores each candidate chain on the training file.
CANDIDATE_FOLDS = 5

#: How :func:`train` scores the candidates and picks the SVM's C: ``nested`` (every fold's SVM picks C by its own
#: inner cross-validation), ``flat`` (:func:`flat_candidate_scores`: one cross-validation for chain and C), or
#: ``auto`` (:func:`resolved_search`: flat for several candidates with ``multiclass`` on more than two classes present,
#: else nested).
SEARCHES = ("auto", "nested", "flat")

#: How ``words`` reads documents in the default candidates: the README's (Weka's tokens and stop words, its 1,000
#: words a class), and every word as a run of letters (nearer TfidfVectorizer's tokens), its count as is or as
#: ln(1 + count).
README_WORDS = ("words", {"counts": True, "lowercase": True, "stopwords": "weka"})
EVERY_WORD = ("words", {"counts": True, "lowercase": True, "words_to_keep": 1_000_000, "tokenizer": "alphabetic"})
EVERY_WORD_LOG_TF = ("words", {**EVERY_WORD[1], "log_tf": True})
EVERY_WORD_PAIR_LOG_TF = ("words", {**EVERY_WORD_LOG_TF[1], "ngrams": "1-2"})
SMOOTHED_IDF = ("idf", {"presence": True, "multiply": True, "smooth": True})

#: The candidate chains ``train`` compares when none is given, on data that holds text: the KDD'09 chain, tf·BNS
#: on either words, and log tf·idf (scikit-learn's smoothed idf) on every word; the corpora and the inner
#: cross-validation that chose them are docs/RESULTS.md §10.1, §10.2 and §10.9.
TEXT_CANDIDATES: tuple[tuple[tuple[str, dict], ...], ...] = (
    (README_WORDS, ("shape", {}), ("bns", {}), ("l2", {})),
    (README_WORDS, ("bns", {"multiply": True}), ("l2", {})),
    (EVERY_WORD, ("bns", {"multiply": True}), ("l2", {})),
    (EVERY_WORD_LOG_TF, SMOOTHED_IDF, ("l2", {})),
)
#: The candidates of ``--search flat``, which can afford a chain of words and word pairs (its C reaches 100, where
#: each of the nested search's 25 fits a C costs most): log tf·idf of pairs in place of tf·BNS on the README's words,
#: GridSearchCV's four representations' shape (docs/RESULTS.md §10.10).
FLAT_TEXT_CANDIDATES = (
    *TEXT_CANDIDATES[:1],
    *TEXT_CANDIDATES[2:],
    (EVERY_WORD_PAIR_LOG_TF, SMOOTHED_IDF, ("l2", {})),
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


def default_candidates(
    schema: Schema, registry: Registry, several_classes: bool = False, search: str = "nested"
) -> list[ChainSpec]:
    """:data:`TEXT_CANDIDATES` (:data:`FLAT_TEXT_CANDIDATES` for the ``flat`` ``search``) when ``schema`` holds
    text, else :data:`COUNT_CANDIDATES`, named as typed; with ``several_classes`` (a task of more than two classes,
    or of labels) ``shape`` as :data:`SHAPE_ONCE` says."""
    from filterkit.running import describe_chain

    reads_text = any(attribute.kind == STRING for attribute in schema.attributes)
    chains = []
    text_candidates = FLAT_TEXT_CANDIDATES if search == "flat" else TEXT_CANDIDATES
    for stages in text_candidates if reads_text else COUNT_CANDIDATES:
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
    search: str = "auto",
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
    it), then the kept chain's, fitted on every row.  ``search`` (:data:`SEARCHES`; ``auto`` as
    :func:`resolved_search` says) says how the candidates are scored and C picked; ``flat`` (a class's task and the
    svm only) scores a single chain too, for its C, a candidate's folds at a time in up to ``jobs`` processes.
    With ``engine="dask"`` the candidates' fits are tasks on the Dask cluster at ``scheduler`` (None: a local one of
    ``workers`` processes, one per core when None) instead, with the same model; the kept chain's final fit, on
    every row, is made here either way."""
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
            data_task = task_of(opened.schema, settings, name)
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
        rows = dataset.data.n_rows
        dataset = evaluation.known_class_rows(dataset)
        _note_left_out(warn, rows - dataset.data.n_rows, "class")
        task = trained_task(dataset, settings, name)
        refuse_unfitting_costs(settings.classifier, settings.classifier_params, dataset.labels, settings.multiclass)
        several = task == MULTICLASS_TASK and present_classes(dataset) > 2
        search = resolved_search(search, chains, several, classifier_class)
        refuse_inner_folds_of_flat(search, settings.classifier_params)
        if chains is None:
            chains = default_candidates(dataset.schema, registry, several, search)
        lent = _lent_workers(jobs, engine, dataset.data.n_rows, _first_pool_fits(chains, search, candidate_folds))
        candidates: list[dict] = []
        searched: dict = {}
        held_out = None
        placed = (jobs, engine, (scheduler, workers), plugins_dir)
        if search == "flat":
            candidates, out_of_fold = flat_candidate_scores(
                dataset, chains, task, settings, registry, name, candidate_folds, placed, (progress, warn)
            )
            chosen = best_candidate(chains, candidates)
            kept = candidates[chains.index(chosen)]
            held_out = (out_of_fold[chains.index(chosen)], candidate_folds, kept["score"], kept["f1"])
            grid = CheckedClassifier(registry, settings.classifier, settings.classifier_params).classifier.params[
                "c_values"
            ]
            picked = c_value_text(grid, kept["C"])
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
            model = _fitted_model(registry, dataset, chosen, task, settings, recorded, candidates, (searched, held_out))
        if warn is not None:
            for text in model.chain.warnings:
                warn(one_line(text))
        progress.finish()
        return model


def _lent_workers(jobs: int | None, engine: str, rows: int, fits: int | None) -> int:
    """The worker processes lent to the final fit (the kept chain's on every row) of a run on ``rows`` rows, on the
    local engine: ``--jobs``' pool (:func:`~filterkit.evaluation.pool_size`), or as many as the candidates' first
    pool of ``fits`` fits took (None: there was none), so that joblib's workers, where the pool is theirs, are
    reused as they are.  None are lent on fewer than :data:`~filterkit.evaluation.LEND_FROM_ROWS` rows, nor on Dask,
    where the candidates' fits are the cluster's and the final fit the client's."""
    if engine != "local" or rows < evaluation.LEND_FROM_ROWS:
        return 1
    pool = evaluation.pool_size(jobs, rows)
    return pool if fits is None else min(pool, fits)


def _first_pool_fits(chains: list[ChainSpec], search: str, folds: int) -> int | None:
    """How many fits the candidates' pool is sized by (every chain's folds: :func:`candidate_scores` sends them
    at once, :func:`flat_candidate_scores` too); None where one chain is searched
    nested (no pool before the final fit)."""
    return None if len(chains) == 1 and search != "flat" else len(chains) * folds


def _searchable_classifier(registry: Registry, chains: list[ChainSpec] | None, settings: Settings, search: str):
    """The classifier class of ``settings``, once ``chains`` (None: the default candidates), the classifier and the
    ``search`` are checked as :func:`train` takes them; a FilterkitError saying what cannot be trained."""
    refuse_row_filters(chains or [], registry)
    classifier_class = registry.classifier(settings.classifier)
    if search not in SEARCHES:
        raise FilterkitError(f"search {search!r} is none of {', '.join(SEARCHES)}")
    if search == "flat" and not searches_flat(classifier_class):
        raise FilterkitError(
            f"--search flat picks the svm's C: classifier '{settings.classifier}' has no C grid; use --search nested"
        )
    if not classifier_class.saveable:
        raise FilterkitError(
            f"classifier '{settings.classifier}' cannot be saved in a model (it does not declare saveable = True)"
        )
    return classifier_class


def resolved_search(search: str, chains: list[ChainSpec] | None, several: bool, classifier_class) -> str:
    """The search ``auto`` stands for (any other ``search`` as given): ``flat`` where several candidates (``chains``
    None: the default ones) are scored on ``several`` classes (more than two) and ``classifier_class``
    :func:`searches_flat`, else ``nested``.  On the nine tasks of docs/RESULTS.md §10.10 flat scored +0.005 on both
    ten-class tasks and up to 0.034 lower on binary ones; one chain keeps ``evaluate --test``'s fit."""
    if search != "auto":
        return search
    searched = chains is None or len(chains) > 1
    return "flat" if searched and several and searches_flat(classifier_class) else "nested"


def refuse_inner_folds_of_flat(search: str, classifier_params: dict) -> None:
    """FilterkitError for ``--svm-inner-folds`` given to the flat search, which scores each C on the candidates'
    folds and has no inner ones (the model recorded the folds given, unused)."""
    if search == "flat" and classifier_params.get("inner_folds") is not None:
        raise FilterkitError(
            f"--svm-inner-folds {classifier_params['inner_folds']}: the flat search (--search flat, and auto's on "
            "more than two classes) scores each C on the candidates' folds (--folds), with no inner ones: leave it "
            "out, or give --search nested"
        )


def searches_flat(classifier_class) -> bool:
    """Whether ``classifier_class`` can be searched flat: it scores a C fitted on a fold's rows (``decisions_at``),
    the F1 of out-of-fold values (``out_of_fold_f1``) and fits on the search's own (``take_out_of_fold``)."""
    return all(hasattr(classifier_class, name) for name in ("decisions_at", "out_of_fold_f1", "take_out_of_fold"))


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
    task = MULTICLASS_TASK if settings.multiclass else choose_tasks(dataset.labels, counts, settings.positive, name)[0]
    tasks = list(dataset.labels) if task == MULTICLASS_TASK else [task]
    refuse_scope_outside(settings.classifier_params, dataset.labels, tasks, name)
    return task


def best_candidate(chains: list[ChainSpec], candidates: list[dict]) -> ChainSpec:
    """The chain of the best cross-validated score among ``candidates`` (one per chain), the first on a tie."""
    return chains[max(range(len(chains)), key=lambda k: (candidates[k]["score"], -k))]


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
    task = task_of(source.schema, settings, name)
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


def c_value_text(grid: str, C: float) -> str:
    """The text of ``C`` as the grid ``grid`` (``--svm-c-values``) writes it, so that the model's options are those
    typed: ``--svm-c-values`` that value alone fits the same model."""
    return next(text.strip() for text in grid.split(",") if float(text) == C)


def _fitted_model(
    registry: Registry,
    dataset: Dataset,
    chain: ChainSpec,
    task: str,
    settings: Settings,
    reading: tuple[str, dict],
    candidates: list[dict],
    search: tuple[dict, tuple | None],
) -> "TrainedModel":
    """``chain`` and the classifier fitted on every row of ``dataset`` for ``task``, as a model, saying how the
    candidates were searched (``search``: what the model records of it, nothing when nested; and the flat
    search's out-of-fold values of ``chain`` at its C, their folds, AUC and F1, which the svm's fit takes for its
    sigmoid and cuts in place of an inner cross-validation, or None)."""
    searched, held_out = search
    multiclass = task == MULTICLASS_TASK
    rows = np.arange(dataset.data.n_rows)
    output_class, prepared, fitted = evaluation.fitted_chain(
        registry, dataset, chain, rows, None if multiclass else task
    )
    if multiclass and output_class.labels != dataset.labels:
        raise FilterkitError(f"chain '{chain.text}' changes the class labels, which --multiclass cannot learn")
    features, codes = prepared(rows)
    call = CheckedClassifier(registry, settings.classifier, settings.classifier_params)
    if held_out is not None:
        call("take_out_of_fold", *held_out)
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
    _note_left_out(warn, data.n_rows - len(dataset.truth), "label")
    if not len(dataset.truth):
        raise FilterkitError("the training data has no row whose labels are all known", name)
    refuse_scope_constant(settings.classifier_params, task.targets, dataset.truth, name)
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
        fitted, left_out, features = evaluation_targets.fitted_label_chain(
            registry, dataset, chosen, chosen.stages, rows
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


def _note_left_out(warn: Callable[[str], None] | None, rows: int, missing: str) -> None:
    """Say that ``rows`` rows of a missing class (or label) are left out of the fit, as ``evaluate`` says it."""
    if rows and warn is not None:
        warn(f"{rows} row(s) with a missing {missing} are left out of the training")
