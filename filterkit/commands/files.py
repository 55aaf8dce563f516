"""The commands' inputs and outputs: sources for IN.arff, checked outputs, standard streams."""

from __future__ import annotations

import os
import stat
import sys

import click

from filterkit.commands.options import OnceCommand
from filterkit.errors import FilterkitError
from filterkit.formats import (
    ARFF,
    FormatOptions,
    extension_format,
    format_of,
    option_words,
    registered,
    registered_formats,
)
from filterkit.option_files import named_paths
from filterkit.outputs import OutputFile, checked_output


class ReportCommand(OnceCommand):
    """A command that writes its report to standard output: refused before its
    arguments are parsed when standard output is closed."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Refuse a closed standard output, then parse as any command."""
        if sys.stdout is None:
            raise FilterkitError(f"standard output is closed: '{ctx.command_path}' writes there")
        return super().parse_args(ctx, args)


def check_stdout_open(output: str | None) -> None:
    """Without an output file, refuse a closed standard output before any work."""
    if output is None and sys.stdout is None:
        raise FilterkitError("standard output is closed: give -o FILE")


def checked_outputs(
    inputs: list[tuple[str, str]], output: str | None, model_path: str | None, option_files: tuple | list = ()
) -> OutputFile | None:
    """Check, before any work, that every output can be written and that the inputs (role, path),
    ``-o`` and the model are distinct files, and neither output one of the ``option_files`` (:func:`read_by`); the
    ``-o`` target, if any."""
    output_file = None if output is None else checked_output(output)
    named = [(role, path) for role, path in inputs if path != "-"]
    written = [(role, path) for role, path in (("-o", output), ("--save-model", model_path)) if path is not None]
    if model_path is not None:
        checked_output(model_path)
    check_distinct(named + written)
    check_apart(option_files, written)
    return output_file


def check_format_options(formats: FormatOptions, read_as: str, written_as: str | None = None) -> None:
    """A usage error for a format option given that neither ``read_as`` nor ``written_as`` takes
    (:meth:`FormatOptions.untaken`)."""
    name = formats.untaken(read_as, written_as)
    if name is not None:
        output = "" if written_as is None else f" written as {written_as}"
        raise click.UsageError(f"{option_words(name, formats.given[name])}: {read_as} input{output} does not take it")
    writes_labels = written_as is not None and any(
        option.name == "label_separator" for option in registered(written_as).written_options
    )
    if "label_separator" in formats.given and "labels_column" not in formats.given and not writes_labels:
        raise click.UsageError(
            f"{option_words('label_separator', formats.given['label_separator'])} splits the labels of "
            "--labels-column COLUMN, which is not given: give it (a CSV column of labels is told by it alone)"
        )


def output_format_of(path: str | None, given: str | None) -> str:
    """The format ``-o PATH`` is written in (:func:`format_of`); a usage error when ``--to``
    names another format than PATH's extension: the file would be read, by filterkit and
    by other tools, as what its name says (``-o out.arff --to csv``)."""
    named = None if path is None else extension_format(path)
    chosen = format_of(None, given) if given is not None else named or ARFF
    if named is not None and named != chosen:
        raise click.UsageError(
            f"-o {path} is named as {named}, but --to {given} writes {chosen}: rename it or drop --to"
        )
    if registered(chosen).writer is None:
        written = ", ".join(r.name for r in registered_formats().formats.values() if r.value.writer is not None)
        raise click.UsageError(f"filterkit reads {chosen} but does not write it (-o {path}): write {written}")
    return chosen


def check_distinct(named: list[tuple[str, str]]) -> None:
    """A usage error naming both when two of the (role, path) pairs are one file."""
    for position, (role, path) in enumerate(named):
        for other_role, other_path in named[position + 1 :]:
            if same_file(path, other_path):
                raise click.UsageError(f"{role} {path} and {other_role} {other_path} are the same file")


def check_apart(read: tuple | list, written: list[tuple[str, str]]) -> None:
    """A usage error naming both when an output of ``written`` is a file of ``read`` (role, path pairs): the files
    options read may be one file, or the input."""
    for role, path in written:
        for read_role, read_path in read:
            if same_file(path, read_path):
                raise click.UsageError(f"{read_role} {read_path} and {role} {path} are the same file")


def option_inputs(registry, chains, classifier: str, params: dict, labels_file: str | None) -> list[tuple[str, str]]:
    """(role, path) of the files the options of ``chains``' stages and of the ``classifier`` made with ``params``
    read (``words --stopwords FILE``, ``--svm-costs FILE``), and Mulan's ``--labels`` file: inputs of the command."""
    stages = [registry.make_stage(name, stage_params) for chain in chains or () for name, stage_params in chain.stages]
    return read_by(stages, labels_file) + named_paths(registry.classifier(classifier)(**params), f"--{classifier}-")


def read_by(stages, labels_file: str | None) -> list[tuple[str, str]]:
    """(role, path) of the files the options of ``stages`` read (``words --stopwords FILE``) and of Mulan's
    ``--labels`` file."""
    read = [pair for stage in stages for pair in named_paths(stage, f"{stage.name} --")]
    return read + ([] if labels_file is None else [("--labels", labels_file)])


def same_file(first: str, second: str) -> bool:
    """Whether two paths name one file: by device and inode where both exist, else by
    their absolute paths with links resolved.  Two character devices (``/dev/null``
    twice, a terminal) do not count: writing both is harmless."""
    try:
        first_status, second_status = os.stat(first), os.stat(second)
    except OSError:
        return os.path.normcase(os.path.realpath(first)) == os.path.normcase(os.path.realpath(second))
    if stat.S_ISCHR(first_status.st_mode) and stat.S_ISCHR(second_status.st_mode):
        return False
    return (first_status.st_dev, first_status.st_ino) == (second_status.st_dev, second_status.st_ino)
