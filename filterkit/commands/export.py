"""``filterkit export MODEL --c OUT.c``: a trained model as one dependency-free C source file that scores documents
as ``predict`` does (:mod:`filterkit.export.c_source`, docs/serving.md)."""

from __future__ import annotations

import click

from filterkit.commands.context import registry_of
from filterkit.commands.files import check_distinct
from filterkit.errors import FilterkitError
from filterkit.outputs import checked_output, staged_output


@click.command(
    help="Write MODEL (a model of 'filterkit train') as one C source file with no dependency: decide() gives a "
    "document's decision values as 'filterkit predict' computes them, bit for bit, and its main scores one document "
    "a line of standard input (docs/serving.md). A chain the C scorer cannot compute exactly is refused, naming "
    "the stage."
)
@click.argument("model_path", metavar="MODEL.json")
@click.option("--c", "c_path", required=True, type=click.Path(dir_okay=False), help="Write the C source here.")
@click.pass_context
def export(ctx: click.Context, model_path: str, c_path: str) -> None:
    """Load the model as predict does, lower it to C and write the file all or nothing."""
    from filterkit.export.c_source import c_source
    from filterkit.trained import load_model

    output = checked_output(c_path)
    check_distinct([("the model", model_path), ("--c", c_path)])
    model = load_model(model_path, registry_of(ctx))
    try:
        source = c_source(model)
    except FilterkitError as error:
        raise FilterkitError(error.message, model_path) from None
    with staged_output(output) as staged:
        staged.stream.write(source.encode("utf-8"))
        staged.publish()
