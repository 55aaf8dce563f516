"""``filterkit apply MODEL.json IN.arff``: a saved chain applied to new data."""

from __future__ import annotations

import contextlib
import os
import shlex
from types import SimpleNamespace

import click

from filterkit.commands.context import registry_of
from filterkit.commands.files import check_format_options, check_stdout_open, checked_outputs, output_format_of
from filterkit.commands.options import (
    OnceCommand,
    number_format,
    output_option,
    reading_and_writing_options,
)
from filterkit.commands.predict import EngineOptions, engine_options
from filterkit.formats import ARFF, FormatOptions, format_of, new_rows_reading
from filterkit.model import ModelFile, arrays_path
from filterkit.progress import Progress, progress_mode
from filterkit.running import Engine, LocalEngine, OutputForm, run


@click.command(
    cls=OnceCommand,
    help="Apply a model saved with --save-model to IN.arff (or -) and write ARFF "
    "(or svmlight, CSV or JSON Lines: by the file names, or --from/--to).",
)
@click.argument("model_path", metavar="MODEL.json")
@click.argument("input_path", metavar="IN.arff")
@output_option
@reading_and_writing_options
@engine_options("Apply in this process, or over partitions on a Dask cluster, with the same bytes")
@click.pass_context
def apply(ctx: click.Context, model_path: str, input_path: str, output: str | None, **params) -> None:
    """Check the files, load the model and write its output for every row of IN.arff, here or on Dask."""
    registry = registry_of(ctx)
    engine = EngineOptions.of_params(params)
    options = SimpleNamespace(**params)
    numbers = number_format(options.digits, options.float32)
    check_stdout_open(output)
    written_format = output_format_of(output, options.output_format)
    engine.check(input_path, options.input_format, output)
    if engine.dask and written_format != ARFF:
        raise click.UsageError(
            "--engine dask writes ARFF only: convert its output afterwards (filterkit out.arff -o out.svm)"
        )
    arrays = os.fspath(arrays_path(model_path))
    inputs = [("the model", model_path), *([("the model's arrays", arrays)] if arrays != model_path else [])]
    read = [input_path]
    if engine.dask:  # the partitions' module here: a local run needs none of it
        from filterkit.partitions import check_runnable, partition_files

        read = partition_files(input_path)
    output_file = checked_outputs([*inputs, *(("the input", path) for path in read)], output, None)
    saved = ModelFile(model_path)
    chain, _ = saved.fitted(registry)
    if engine.dask:
        check_runnable(chain.stages, input_path)
    trained = saved.reading
    reporter = Progress(progress_mode(options.quiet, options.progress))
    reporter.expect(1)
    formats = FormatOptions.of_params(params)
    input_format, reading = new_rows_reading(input_path, options.input_format, formats, trained)
    check_format_options(formats, format_of(input_path, input_format), written_format)
    form = OutputForm(written_format, options.sparse, numbers, formats)
    command = f"apply {shlex.quote(os.path.basename(model_path))}"
    with reporter.activated(), contextlib.ExitStack() as stack:
        if engine.dask:
            connecting = engine.connected(ctx, chain, options.chunk_rows, input_format, reading, reporter)
            on: Engine = stack.enter_context(connecting)
        else:
            on = LocalEngine(options.chunk_rows, input_format, reading, reporter)
        run(chain, input_path, on, output_file, form, command)
    reporter.finish()
