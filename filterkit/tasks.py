"""The task seam: what a run is asked (:class:`Settings`, :class:`ChainSpec`), what the data and settings make
to learn, decided once (:func:`task_of`, as scikit-learn's ``type_of_target``: a :class:`Task`, which draws
its folds), and what evaluating it needs of its implementation (:class:`Fits`: the rows, how one fold is
fitted and scored, the result document of them).

A class attribute makes a binary task (each positive class against the rest, one task per class chosen) or,
with ``multiclass``, one task of every class at once (:func:`filterkit.evaluation.class_fits`); multi-label
data, several two-valued target attributes a row (MEKA's ``-C``, or Mulan's XML), makes a label set
(:func:`filterkit.evaluation_targets.target_fits`).  Every task's fits run in one loop
(:func:`filterkit.evaluation.run_fits`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from filterkit.arff.tokens import one_line
from filterkit.errors import FilterkitError
from filterkit.labels import NamedLabels, label_names, mulan_labels, refuse_class_choice
from filterkit.metrics import minority_class
from filterkit.schema import Chunk, Schema, concatenate
from filterkit.stage import task_choices
from filterkit.thresholds import refuse_scope_outside

if TYPE_CHECKING:
    from filterkit.reports import Evaluation

BINARY = "binary"
MULTICLASS = "multi-class"
LABEL_SET = "label set"


@dataclass
class ChainSpec:
    """One chain to evaluate: its text, its stages' (name, params) and, in a sweep, the option's value."""

    text: str
    stages: list[tuple[str, dict]]
    sweep: dict = field(default_factory=dict)


#: The largest seed: numpy's legacy seeding takes 0 .. 2**32 - 1, and each fold adds its number.
MAX_SEED = 2**31 - 1


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
    #: Multi-label data (:mod:`filterkit.evaluation_targets`): Mulan's XML naming the labels, the threshold
    #: (``decision`` or ``pcut``) and whether the chain is fitted once per label (with its ``--label``).
    labels_file: str | None = None
    threshold: str = "decision"
    chain_per_label: bool = False

    def __post_init__(self) -> None:
        # what a model records and reads back: the Python API passed None (unseeded fits) into a model it refused
        if type(self.seed) is not int or not 0 <= self.seed <= MAX_SEED:
            raise FilterkitError(f"seed {self.seed!r} is not a whole number from 0 to {MAX_SEED}")


#: The key of a fold's record that carries its chain's warnings (:attr:`Chain.warnings`) from the fit, wherever
#: it ran, to :func:`filterkit.evaluation.run_fits`, which takes it out of the record.
CHAIN_WARNINGS = "chain_warnings"


@dataclass
class Fits:
    """The fits of one evaluation, before they run: ``score(registry, dataset, *arguments, settings)`` fits
    and scores one fold for each of ``arguments`` (its progress line: the ``details`` beside it), and
    ``evaluation`` makes the :class:`~filterkit.reports.Evaluation` of their results, in their order."""

    dataset: Any
    score: Callable[..., dict]
    arguments: list[tuple]
    details: list[str]
    evaluation: Callable[[list[dict]], Evaluation]
    #: the rows the fits learn from, by which a default ``--jobs`` sizes the pool (:func:`evaluation.pool_size`)
    rows: int

    def warner(self, warn: Callable[[str], None]) -> Callable[[int, list[str]], None]:
        """A function given a fit's position and its chain's warnings that gives ``warn`` each distinct one once
        per chain (:func:`distinct_warnings`), after the fit's detail."""
        shown = distinct_warnings(warn)
        return lambda position, texts: shown(self.arguments[position][0].text, self.details[position], texts)


def distinct_warnings(warn: Callable[[str], None] | None) -> Callable[[str, str, list[str]], None]:
    """A function given a fit's chain, where it ran (its chain, task and fold, in words) and its chain's warnings that
    gives ``warn`` (None: nobody) each once per chain, after where it was first met: the same words in another task
    or fold, or in another fold's numbers, are the same warning."""
    seen: set[tuple[str, str]] = set()

    def warned(chain: str, where: str, texts: list[str]) -> None:
        for text in texts:
            alike = (chain, re.sub(r"[0-9][0-9,.]*", "#", text))
            if warn is not None and alike not in seen:
                seen.add(alike)
                warn(f"{where}: {one_line(text)}")

    return warned


@dataclass(frozen=True)
class Task:
    """What a data set and the settings make to learn: its ``kind`` (:data:`BINARY`, :data:`MULTICLASS` or
    :data:`LABEL_SET`) and, of a label set, its target attributes' names (``targets``) and Mulan's XML
    naming them (``named``, if given)."""

    kind: str
    targets: tuple[str, ...] = ()
    named: NamedLabels | None = None

    def folds(self, truth: np.ndarray, folds: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """(training rows, test rows) of each of ``folds`` seeded folds of the rows of ``truth``: a class's
        codes, stratified (:func:`stratified_folds`), or a label set's rows × targets, by iterative
        stratification (:func:`iterative_stratification`), so that a rare label reaches every fold."""
        if self.kind != LABEL_SET:
            return stratified_folds(truth, folds, seed)
        fold_of = iterative_stratification(truth, folds, seed)
        return [(np.flatnonzero(fold_of != fold), np.flatnonzero(fold_of == fold)) for fold in range(folds)]


def task_of(schema: Schema, settings: Settings, name: str | None = None) -> Task:
    """The task of data of ``schema`` under ``settings``: a label set when it has target attributes (MEKA's
    ``-C`` in the relation name, or Mulan's XML ``settings.labels_file``), else a class's, binary or (with
    ``settings.multiclass``) multi-class; FilterkitError for a label-set option on data of a class, or ``-c`` on
    label sets, or an objective scoped to none of the labels (naming the data's ``name``)."""
    named = None if settings.labels_file is None else mulan_labels(settings.labels_file)
    targets = label_names(schema, named)
    if targets:
        refuse_class_choice(settings.class_spec, name)
        refuse_scope_outside(settings.classifier_params, list(targets), list(targets), name)
        return Task(LABEL_SET, targets, named)
    if settings.threshold != "decision" or settings.chain_per_label:
        option = "--chain-per-label" if settings.chain_per_label else f"--threshold {settings.threshold}"
        raise FilterkitError(f"{option} needs multi-label data (MEKA's -C in the relation name, or --labels FILE.xml)")
    return Task(MULTICLASS if settings.multiclass else BINARY)


def read_rows(
    source, name: str, test, test_name: str, settings: Settings, progress, class_index: int | None = None
) -> tuple[Chunk, int]:
    """The rows of ``source`` and then of ``test`` (if any; its header checked), and the number of ``source``'s;
    FilterkitError where ``source`` has no row, or none with a known class at ``class_index`` (the rows of a
    missing class are left out later, and the error then spoke of folds or classes)."""
    schema = source.schema

    def read(source, name: str) -> Chunk:
        with progress.step(f"reading {name}", source) as meter:
            return concatenate(list(meter.counted(source.chunks())), len(schema), schema.text_columns())

    data = read(source, name)
    training_rows = data.n_rows
    if not training_rows:
        raise FilterkitError("the training data has no rows: nothing to learn from", name)
    if class_index is not None and np.isnan(data.column(class_index)).all():
        raise FilterkitError(
            f"every one of the {training_rows:,} training rows has a missing class ('?'): nothing to learn from", name
        )
    if test is not None:
        difference = schema.first_difference(test.schema)
        if difference is not None:
            raise FilterkitError(f"header differs from the training data: {difference}", test_name)
        if settings.repeats > 1:
            raise FilterkitError("a test file is scored once: --repeats needs cross-validation", test_name)
        data = concatenate([data, read(test, test_name)], len(schema), schema.text_columns())
    return data, training_rows


def refuse_row_filters(chains: list[ChainSpec], registry) -> None:
    """FilterkitError, before any work, for a chain with a stage that keeps some rows only (``fold``): a model
    answers for every row it is given, and ``evaluate`` scores every test row (the stage kept some of them, and
    the scores no longer met their rows)."""
    from filterkit.contract import declared

    for chain, (name, params) in ((chain, stage) for chain in chains for stage in chain.stages):
        if declared(registry.make_stage(name, params), "filters_rows"):
            raise FilterkitError(
                f"chain '{chain.text}': stage '{name}' keeps some rows only, and a model answers for every row it "
                "is given"
            )


def rest_name(labels: Sequence[str], task: str) -> str:
    """The name of a one-against-the-rest task's other side: the other class of two, else ``not TASK``, in brackets
    as often as it takes to name no class (a class may be called ``not TASK``)."""
    others = [label for label in labels if label != task]
    if len(others) == 1:
        return others[0]
    name = f"not {task}"
    while name in others:
        name = f"({name})"
    return name


def stratified_folds(codes: np.ndarray, folds: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """(training rows, test rows) of each stratified fold (scikit-learn's, silent about a small class)."""
    import warnings

    from sklearn.model_selection import StratifiedKFold

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return list(StratifiedKFold(folds, shuffle=True, random_state=seed).split(np.zeros(len(codes)), codes))


def iterative_stratification(truth: np.ndarray, folds: int, seed: int) -> np.ndarray:
    """Each row's fold (0 … ``folds`` − 1) by Sechidis, Tsoumakas & Vlahavas's iterative stratification
    (ECML PKDD 2011, Algorithm 1) of the rows × labels ``truth``: the label with the fewest rows still to
    place goes first, each of its rows to the fold that most lacks that label's positives (then the fold
    that most lacks rows, then one of those at random); rows without a label go last, to the folds that
    most lack rows.  ``seed`` orders the rows and breaks the ties."""
    generator = np.random.default_rng(seed)
    order = generator.permutation(len(truth))
    ordered = np.asarray(truth, dtype=bool)[order]
    # Each fold's wants, times ``folds`` to stay integers: a label's positives (or the rows) minus folds · placed.
    label_wants = np.tile(ordered.sum(axis=0).astype(np.int64), (folds, 1))
    row_wants = np.full(folds, len(ordered), dtype=np.int64)
    remaining = ordered.sum(axis=0).astype(np.int64)
    fold_of = np.full(len(ordered), -1, dtype=np.int64)

    def place(row: int, wants: np.ndarray) -> None:
        tied = np.flatnonzero(wants == wants.max())
        tied = tied[row_wants[tied] == row_wants[tied].max()]
        fold = int(tied[0] if len(tied) == 1 else generator.choice(tied))
        fold_of[row] = fold
        label_wants[fold] -= folds * ordered[row]
        row_wants[fold] -= folds
        remaining[:] -= ordered[row]

    while remaining.any():
        fewest = np.flatnonzero(remaining == remaining[remaining > 0].min())
        label = int(fewest[0] if len(fewest) == 1 else generator.choice(fewest))
        for row in np.flatnonzero(ordered[:, label] & (fold_of < 0)).tolist():
            place(row, label_wants[:, label])
    for row in np.flatnonzero(fold_of < 0).tolist():
        place(row, row_wants)
    fold_of_row = np.empty_like(fold_of)
    fold_of_row[order] = fold_of
    return fold_of_row


def fold_of_row(test_rows: list[np.ndarray], kept: np.ndarray, rows: int) -> list[int | None]:
    """Each of the file's ``rows`` rows' fold, so that entry n is the file's data row n + 1: the position in
    ``test_rows`` (each fold's test rows, positions among the ``kept`` rows) of the one testing it; None for a
    row left out (not among ``kept``, the file positions of the rows with a known class or label set)."""
    fold_of: list[int | None] = [None] * rows
    for fold, tested in enumerate(test_rows):
        for position in kept[tested].tolist():
            fold_of[position] = fold
    return fold_of


def choose_tasks(
    labels: tuple[str, ...],
    counts: np.ndarray,
    positive: str | None,
    name: str | None,
    each_class: bool = False,
    min_positives: int = 1,
) -> list[str]:
    """The positive labels of the class-vs-rest tasks: ``positive`` (a label: :func:`read_dataset` checks it); with
    ``each_class`` every class with at least ``min_positives`` rows (of two classes the minority, as KDD'09); else
    two classes' minority.  A task whose class has no row, or every row, of ``counts`` is refused naming the file
    ``name``: no fold can learn it (the folds' own error had blamed their number)."""
    if positive is not None and each_class:
        raise FilterkitError(f"--positive {positive} and --each-class both choose the tasks: give one")
    if positive is None and len(labels) > 2 and not each_class:
        raise FilterkitError(
            f"the class has {len(labels)} labels: choose the task with {task_choices(len(labels), 'evaluate')}"
        )
    if positive is not None:
        tasks = [positive]
    elif len(labels) == 2:
        minority = minority_class(counts)
        if each_class and counts[minority] < min_positives:
            raise FilterkitError(
                f"the minority class '{labels[minority]}' has {int(counts[minority])} rows, "
                f"fewer than --min-positives {min_positives}"
            )
        tasks = [labels[minority]]
    else:
        tasks = [label for label, count in zip(labels, counts) if count >= min_positives]
    if not tasks:
        raise FilterkitError(
            f"no class has at least --min-positives {min_positives} rows (largest: {int(counts.max())})"
        )
    for task in tasks:
        rows = int(counts[labels.index(task)])
        if rows == 0:
            raise FilterkitError(f"the training file has no row of class '{task}' to learn it from", name)
        if rows == counts.sum():
            raise FilterkitError(f"the training file has only rows of class '{task}': nothing to tell it from", name)
    return tasks
