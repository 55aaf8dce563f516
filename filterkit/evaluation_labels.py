"""The old name of :mod:`filterkit.evaluation_targets`, kept only for :mod:`filterkit.trained` until it uses
:func:`filterkit.tasks.task_of` and :func:`filterkit.evaluation.evaluate`; delete it with that change."""

from __future__ import annotations

from filterkit.evaluation import ChainSpec, Evaluation, Settings, evaluate
from filterkit.evaluation_targets import fitted_label_chain, known_label_rows, refuse_single_label_settings
from filterkit.labels import NamedLabels
from filterkit.schema import Schema
from filterkit.tasks import LABEL_SET, task_of

__all__ = ["evaluate_labels", "fitted_label_chain", "known_label_rows", "labelled_data", "refuse_single_label_settings"]


def labelled_data(schema: Schema, settings: Settings) -> tuple[tuple[str, ...], NamedLabels | None] | None:
    """The label names and Mulan's XML labels of multi-label data (:func:`filterkit.tasks.task_of`), else None."""
    task = task_of(schema, settings)
    return (task.targets, task.named) if task.kind == LABEL_SET else None


def evaluate_labels(
    registry, inputs: tuple, labelled: tuple, chains: list[ChainSpec], settings: Settings, progress, workers: tuple
) -> Evaluation:
    """:func:`filterkit.evaluation.evaluate` of the multi-label ``inputs`` (source, name, test, test name) in
    ``workers`` (jobs, plugins folder); ``labelled`` is what ``settings`` make of the source's header."""
    source, name, test, test_name = inputs
    jobs, plugins_dir = workers
    return evaluate(
        source,
        chains,
        settings,
        registry,
        name=name,
        test=test,
        test_name=test_name,
        progress=progress,
        jobs=jobs,
        plugins_dir=plugins_dir,
    )
