"""``filterkit export MODEL --c OUT.c --onnx OUT.onnx``: a trained model as one dependency-free C source file
(:mod:`filterkit.export.c_source`) or an ONNX graph (:mod:`filterkit.export.onnx_graph`), each scoring documents as
``predict`` does (docs/serving.md)."""

from __future__ import annotations

import contextlib
import os

import click

from filterkit.commands.context import registry_of
from filterkit.commands.files import check_distinct
from filterkit.commands.options import OnceCommand
from filterkit.errors import FilterkitError
from filterkit.outputs import checked_output, staged_output


@click.command(
    cls=OnceCommand,
    help="Write MODEL (a model of 'filterkit train') as one C source file with no dependency (--c: decide() gives a "
    "document's decision values as 'filterkit predict' computes them, bit for bit, and its main scores one document "
    "a line of standard input), as an ONNX graph from the document's text to its decision values and label (--onnx: "
    "equal to predict's in ONNX Runtime; needs the onnx extra), or both (docs/serving.md). A chain that cannot be "
    "computed exactly is refused, naming the stage, and nothing is written.",
)
@click.argument("model_path", metavar="MODEL.json")
@click.option("--c", "c_path", type=click.Path(dir_okay=False), help="Write the C source here.")
@click.option("--onnx", "onnx_path", type=click.Path(dir_okay=False), help="Write the ONNX graph here.")
@click.pass_context
def export(ctx: click.Context, model_path: str, c_path: str | None, onnx_path: str | None) -> None:
    """Load the model as predict does, lower it to each form asked for and write each file all or nothing, once
    every form is made."""
    from filterkit.trained import load_model

    if c_path is None and onnx_path is None:
        raise click.UsageError("give --c OUT.c, --onnx OUT.onnx or both")
    targets = [(role, path) for role, path in (("--c", c_path), ("--onnx", onnx_path)) if path is not None]
    outputs = [checked_output(path) for _, path in targets]
    check_distinct([("the model", model_path), *targets])
    model = load_model(model_path, registry_of(ctx))
    contents = [_exported(model, model_path, role) for role, _ in targets]
    with contextlib.ExitStack() as stack:
        staged = [stack.enter_context(staged_output(output)) for output in outputs]
        for stage, output, content in zip(staged, outputs, contents):
            try:  # a full disk or device fails here, before any file is published
                stage.stream.write(content)
                stage.complete()
                if stage.temporary is not None:
                    os.fsync(stage.file.fileno())
            except OSError as error:
                raise FilterkitError(f"cannot write {output.path}: {error.strerror or error}") from None
        for stage in staged:
            stage.publish()


def _exported(model, model_path: str, role: str) -> bytes:
    """The bytes of ``model`` in the form ``role`` asks for; FilterkitError naming the model for a refusal."""
    if role == "--onnx":
        try:
            from filterkit.export.onnx_graph import onnx_model
        except ImportError:
            raise FilterkitError("--onnx needs the onnx package: pip install 'filterkit-arff[onnx]'") from None
        form = onnx_model
    else:
        from filterkit.export.c_source import answer_line_warning, c_source

        def form(model):
            warning = answer_line_warning(model)
            if warning is not None:
                click.echo(f"filterkit: warning: {warning}", err=True)
            return c_source(model).encode("utf-8")

    try:
        return form(model)
    except FilterkitError as error:
        raise FilterkitError(error.message, model_path) from None
