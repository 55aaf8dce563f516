"""The chain's run: fit the stages on IN.arff and write their output, here or on Dask.
Imported by a chain run only (the chain's command line is :mod:`filterkit.commands`)."""

from __future__ import annotations

import contextlib
import os
from types import SimpleNamespace

import click

from filterkit.arff.tokens import one_line
from filterkit.commands.context import plugin_loader
from filterkit.commands.files import (
    check_format_options,
    check_stdout_open,
    checked_outputs,
    output_format_of,
    read_by,
    same_file,
)
from filterkit.commands.options import number_format, refuse_uncut_input
from filterkit.contract import declared
from filterkit.formats import ARFF, FormatOptions, format_of
from filterkit.labels import mulan_labels
from filterkit.plugins import Registry
from filterkit.progress import Progress, progress_mode
from filterkit.runner import Chain, guarded
from filterkit.running import LocalEngine, OutputForm, run


def run_chain(ctx: click.Context, steps: list, params: dict) -> None:
    """Fit the stages on IN.arff and write their output, here or on Dask (:func:`filterkit.running.run`)."""
    options = SimpleNamespace(**params)
    numbers = number_format(options.digits, options.float32)
    loader = plugin_loader(ctx)
    stages = [stage for stage in steps if stage is not None]  # the steps of ChainOptions return None
    labels = None if options.labels_file is None else mulan_labels(options.labels_file)
    chain = Chain(stages, class_spec=options.class_spec, positive=options.positive, labels=labels)
    output, output_dir, model_path = options.output, options.output_dir, options.model_path
    dask = options.engine == "dask"
    check_engine_options(options, dask)
    if dask:  # the partitions' module here: a local run needs none of it (5 ms of every run's start)
        from filterkit.partitions import checked_output_folder, partition_files

        check_dask_run(chain, options)
        output_dir = None if output_dir is None else checked_output_folder(output_dir)
    check_stdout_open(output or output_dir)
    inputs = partition_files(options.input_path) if dask else [options.input_path]
    read = read_by(stages, options.labels_file)
    output_file = checked_outputs([("the input", path) for path in inputs], output, model_path, read)
    formats = FormatOptions.of_params(params, options.class_spec)
    form = OutputForm(output_format_of(output, options.output_format), options.sparse, numbers, formats)
    check_format_options(formats, format_of(options.input_path, options.input_format), form.format)
    if options.updatable and not model_path:
        raise click.UsageError("--updatable keeps statistics in the model: give --save-model M.json too")
    if options.updatable:
        chain.kept_statistics = {}
    save = (lambda source: save_model(model_path, chain, loader.registry(), source)) if model_path else None
    progress = Progress(progress_mode(options.quiet, options.progress))
    # a stage that learns after one that learns may get its statistics from that one's pass
    may_skip = any(
        declared(first, "learns") and declared(second, "learns") for first, second in zip(stages, stages[1:])
    )
    progress.expect(chain.planned_passes() + 1, certain=not may_skip)

    def on_fitted(chain: Chain) -> None:
        progress.settle()
        if options.verbose:
            report_fitted(chain)

    with progress.activated(), contextlib.ExitStack() as stack:
        if dask:
            from filterkit.distributed import DaskEngine

            connecting = DaskEngine.connect(
                options.scheduler,
                loader.folder,
                options.chunk_rows,
                progress,
                options.partitions,
                options.input_format,
                formats,
                options.workers,
            )
            engine = stack.enter_context(connecting)
            engine.check_workers(chain)
        else:
            engine = LocalEngine(options.chunk_rows, options.input_format, formats, progress)
        run(chain, options.input_path, engine, output_file, form, "chain", save, on_fitted, output_dir)
    progress.finish()


def check_engine_options(options: SimpleNamespace, dask: bool) -> None:
    """Refuse the Dask engine's options without it, and --workers (the local cluster's) with --scheduler."""
    if not dask and (options.scheduler or options.workers or options.partitions or options.output_dir):
        raise click.UsageError("--scheduler, --workers, --partitions and --output-dir need --engine dask")
    if options.scheduler and options.workers:
        raise click.UsageError("--workers sizes the local cluster, which --scheduler replaces: give one")


def check_dask_run(chain: Chain, options: SimpleNamespace) -> None:
    """Refuse, before any cluster starts, what ``--engine dask`` cannot run as a local run would."""
    from filterkit.partitions import check_runnable

    if options.output and options.output_dir:
        raise click.UsageError("give -o FILE or --output-dir DIR, not both")
    if options.scheduler and not (options.output or options.output_dir):
        raise click.UsageError(
            "with --scheduler, give -o FILE or --output-dir DIR in a folder the workers share (they write the rows)"
        )
    refuse_uncut_input(options.input_path, options.input_format)
    if output_format_of(options.output, options.output_format) != ARFF:
        raise click.UsageError(
            "--engine dask writes ARFF only: convert its output afterwards (filterkit out.arff -o out.svm)"
        )
    if (
        options.output_dir
        and options.model_path
        and same_file(os.path.dirname(os.path.abspath(options.model_path)), options.output_dir)
    ):
        raise click.UsageError(
            f"--save-model {options.model_path} is inside --output-dir {options.output_dir}, whose files are "
            "the partitions' outputs: save the model elsewhere"
        )
    check_runnable(chain.stages, options.input_path)


def save_model(path: str, chain: Chain, registry: Registry, source) -> None:
    """Save ``chain``'s model to ``path`` (:func:`filterkit.model.save_model`, imported by the
    runs that save a model), with the format and options ``source`` was read with, and with
    ``--updatable`` the statistics it was fitted from."""
    from filterkit.model import save_model as save

    statistics = None
    if chain.kept_statistics is not None:
        from filterkit.updating import statistics_section

        statistics = statistics_section(chain)
    save(path, chain, registry, source.reading, statistics=statistics)


def report_fitted(chain: Chain) -> None:
    """``-v``: each fitted stage's own account of what it chose (its optional ``fit_summary()``
    lines), on stderr as ``filterkit: STAGE: LINE``."""
    for stage in chain.stages:
        summary = getattr(stage, "fit_summary", None)
        if summary is not None:
            for line in guarded(stage, "fit_summary", summary):
                click.echo(f"filterkit: {stage.name}: {one_line(line)}", err=True)
