"""``filterkit apply MODEL.json IN.arff``: a saved chain applied to new data."""

from __future__ import annotations

import dataclasses
import os
import shlex

import click

from filterkit.background import write_behind
from filterkit.commands.chain import input_provenance, provenance_comments
from filterkit.commands.context import registry_of
from filterkit.commands.files import (
    check_distinct,
    check_stdout_open,
    open_source,
    output_stream,
)
from filterkit.commands.options import (
    chunk_rows_option,
    digits_option,
    float32_option,
    input_format_option,
    number_format,
    output_format_option,
    output_option,
    quiet_option,
    row_form_option,
    zero_based_option,
)
from filterkit.formats import ARFF, SVMLIGHT, FormatOptions, format_of, row_writer
from filterkit.formats.svmlight import reading_options
from filterkit.model import arrays_path, read_model
from filterkit.outputs import checked_output
from filterkit.progress import Progress, progress_mode, progress_option


@click.command(
    help="Apply a model saved with --save-model to IN.arff (or -) and write ARFF "
    "(or svmlight or CSV: by the file names, or --from/--to)."
)
@click.argument("model_path", metavar="MODEL.json")
@click.argument("input_path", metavar="IN.arff")
@output_option
@row_form_option
@input_format_option
@output_format_option
@zero_based_option
@digits_option
@float32_option
@chunk_rows_option
@quiet_option
@progress_option
@click.pass_context
def apply(
    ctx: click.Context,
    model_path: str,
    input_path: str,
    output: str | None,
    sparse: bool | None,
    input_format: str | None,
    output_format: str | None,
    zero_based: bool | None,
    digits: int | None,
    float32: bool,
    chunk_rows: int,
    quiet: bool,
    progress: bool,
) -> None:
    """Check the files, load the model and write its output for every row of IN.arff."""
    registry = registry_of(ctx)
    numbers = number_format(digits, float32)
    check_stdout_open(output)
    output_file = None if output is None else checked_output(output)
    named = [("the model", model_path)]
    if os.fspath(arrays_path(model_path)) != model_path:
        named.append(("the model's arrays", os.fspath(arrays_path(model_path))))
    if input_path != "-":
        named.append(("the input", input_path))
    if output is not None:
        named.append(("-o", output))
    check_distinct(named)
    chain, first_index = read_model(model_path, registry)
    reporter = Progress(progress_mode(quiet, progress))
    reporter.expect(1)
    options = FormatOptions(zero_based)
    # svmlight and CSV rows are read with the training header: its features, labels and types
    known_schema = None if format_of(input_path, input_format) == ARFF else chain.input_schema
    # svmlight test rows are read from the training data's index base (the output is written as asked)
    reading = reading_options(options, first_index) if format_of(input_path, input_format) == SVMLIGHT else options
    opened = open_source(input_path, chunk_rows, False, input_format, reading, known_schema)
    with reporter.activated(), opened as source:
        chain.check_input(source.schema, "<stdin>" if input_path == "-" else input_path)
        command = f"apply {shlex.quote(os.path.basename(model_path))}"
        comments = provenance_comments(input_provenance(source), command, chain, sparse, numbers.options)
        assert chain.output_schema is not None  # a loaded model is fitted
        # The output is the input's rows: it keeps the input's relation name, not the training file's.
        output_schema = dataclasses.replace(chain.output_schema, relation=source.schema.relation)
        with output_stream(output_file) as stream:
            writer = row_writer(
                format_of(output, output_format),
                stream,
                output_schema,
                sparse,
                comments,
                chain.class_name,
                options,
                numbers,
            )
            with reporter.step("writing", source) as meter:
                write_behind(chain.transform(source.chunks()), meter.counting(writer.write))
    reporter.finish()
