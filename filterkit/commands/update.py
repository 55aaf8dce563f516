"""``filterkit update MODEL.json MORE.arff -o NEW.json``: a model saved ``--updatable`` fitted again with
more rows, without the old ones (:mod:`filterkit.updating`)."""

from __future__ import annotations

import os
import shlex
from types import SimpleNamespace

import click

from filterkit.commands.context import registry_of
from filterkit.commands.files import check_format_options, checked_outputs
from filterkit.commands.options import (
    OnceCommand,
    chunk_rows_option,
    format_option_decorators,
    input_format_option,
    progress_option,
    quiet_option,
)
from filterkit.errors import FilterkitError
from filterkit.formats import FormatOptions, format_of, new_rows_reading
from filterkit.model import ModelFile, save_model
from filterkit.progress import Progress, progress_mode
from filterkit.running import check_new_rows, open_source
from filterkit.updating import (
    refuse_statistics_unlike_states,
    section_statistics,
    statistics_section,
    updated_chain,
)


@click.command(
    cls=OnceCommand,
    help="Fit a model saved with --save-model M.json --updatable again on its rows and those of MORE.arff (or -), "
    "without the old rows: the model a fit on all the rows gives, byte for byte, where the chain allows it "
    "(docs/command-line.md, 'Updating a model'). A classifier is not merged: train it again (filterkit train).",
)
@click.argument("model_path", metavar="MODEL.json")
@click.argument("input_path", metavar="MORE.arff")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="Write the updated model here.")
@input_format_option
@format_option_decorators
@chunk_rows_option
@quiet_option
@progress_option
@click.pass_context
def update(ctx: click.Context, model_path: str, input_path: str, output: str, **params) -> None:
    """Check the files, merge MORE.arff's rows into the model's statistics and save the refitted chain."""
    registry = registry_of(ctx)
    options = SimpleNamespace(**params)
    checked_outputs([("the model", model_path), ("the input", input_path)], output, None)
    saved = ModelFile(model_path)
    chain, classifier = saved.fitted(registry)
    if classifier is not None:
        raise FilterkitError(
            "the model holds a classifier, which update does not merge: update a model of the chain alone, "
            "then train the classifier again on all the rows (filterkit train)",
            model_path,
        )
    trained_format, trained_options = saved.reading
    section = saved.statistics
    if section is None:
        command = f"filterkit --save-model {shlex.quote(os.path.basename(model_path))} --updatable IN.arff STAGES..."
        raise FilterkitError(
            f"the model holds no statistics to add rows to: save it with --updatable ({command})", model_path
        )
    try:
        statistics = section_statistics(section, chain)
        refuse_statistics_unlike_states(chain, statistics, registry)
    except FilterkitError as error:
        raise FilterkitError(error.message, model_path) from None
    # the rows are read as the training data was, as apply reads them
    formats = FormatOptions.of_params(params)
    input_format, reading = new_rows_reading(input_path, options.input_format, formats, saved.reading)
    check_format_options(formats, format_of(input_path, input_format))
    reporter = Progress(progress_mode(options.quiet, options.progress))
    reporter.expect(chain.planned_passes())
    with (
        reporter.activated(),
        open_source(input_path, options.chunk_rows, True, input_format, reading, chain.input_schema) as source,
    ):
        name = "<stdin>" if input_path == "-" else input_path
        check_new_rows(chain, source, name)
        updated = updated_chain(chain, statistics, source, registry, reporter, name, model_path)
    recorded = None if trained_format is None else (trained_format, trained_options)
    save_model(output, updated, registry, recorded, statistics=statistics_section(updated))
    reporter.finish()
