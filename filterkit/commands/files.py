"""The commands' inputs and outputs: sources for IN.arff, checked outputs, standard streams."""

from __future__ import annotations

import contextlib
import gzip
import os
import stat
import sys

import click

from filterkit.errors import FilterkitError
from filterkit.formats import ARFF, FormatOptions, format_of
from filterkit.outputs import OutputFile, checked_output, staged_output
from filterkit.schema import Schema
from filterkit.sources import FileSource, ScannedSource, StreamSource


class ReportCommand(click.Command):
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


def checked_outputs(inputs: list[str], output: str | None, model_path: str | None) -> OutputFile | None:
    """Check, before any work, that every output can be written and that the inputs,
    ``-o`` and the model are distinct files; the ``-o`` target, if any."""
    output_file = None if output is None else checked_output(output)
    named = [("the input", path) for path in inputs if path != "-"]
    if output is not None:
        named.append(("-o", output))
    if model_path is not None:
        checked_output(model_path)
        named.append(("--save-model", model_path))
    check_distinct(named)
    return output_file


def check_distinct(named: list[tuple[str, str]]) -> None:
    """A usage error naming both when two of the (role, path) pairs are one file."""
    for position, (role, path) in enumerate(named):
        for other_role, other_path in named[position + 1 :]:
            if same_file(path, other_path):
                raise click.UsageError(f"{role} {path} and {other_role} {other_path} are the same file")


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


@contextlib.contextmanager
def open_source(
    path: str,
    chunk_rows: int,
    needs_passes: bool,
    given_format: str | None = None,
    options: FormatOptions = FormatOptions(),
    known_schema: Schema | None = None,
):
    """The input as a source, in the format ``given_format`` (``--from``) or its name's.

    An ARFF regular file is read once per pass; standard input and any other file
    that cannot be read twice (a FIFO, ``<(…)``, ``/dev/stdin``, a device) is read
    once, and spooled when the chain needs several passes.  svmlight and CSV are
    scanned for their header first, so a stream of them is always spooled
    (:class:`ScannedSource`); ``known_schema`` (a model's input header) gives
    their header instead of the scan.
    """
    format_name = format_of(path, given_format)
    if path == "-":
        if sys.stdin is None:
            raise FilterkitError("standard input is closed")
        stream, name, owned = sys.stdin.buffer, "<stdin>", False
    elif _is_regular_file(path):
        if format_name == ARFF:
            yield FileSource(path, chunk_rows)
        else:
            scanned = ScannedSource.of_file(path, format_name, chunk_rows, options, known_schema)
            try:
                yield scanned
            finally:
                scanned.close()
        return
    else:
        stream, name, owned = open(path, "rb"), path, True
    try:
        source: StreamSource | ScannedSource
        if format_name == ARFF:
            source = StreamSource(stream, name, chunk_rows)
            if needs_passes:
                source.spool()
        else:
            source = ScannedSource.of_stream(stream, name, format_name, chunk_rows, options, known_schema)
        try:
            yield source
        finally:
            source.close()
    finally:
        if owned:
            stream.close()


def _is_regular_file(path: str) -> bool:
    """Whether ``path`` is a regular file (which can be read again); True when it cannot
    be looked at, so that opening it gives the error."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return True


#: gzip's own default level: about 3x smaller than level 1 on ARFF text, at a fraction of level 9's time.
GZIP_LEVEL = 6


def is_gzip_name(path: str) -> bool:
    """Whether an output called ``path`` is written gzip-compressed (its name ends in ``.gz``)."""
    return path.lower().endswith(".gz")


@contextlib.contextmanager
def output_stream(output: OutputFile | None):
    """A binary stream to stdout, or to ``output``, published only when the block succeeds.

    An output whose name ends in ``.gz`` is written gzip-compressed, with no file name
    and a zero time in its header, so the same rows always give the same bytes.
    """
    if output is None:
        sys.stdout.flush()
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    with staged_output(output) as stage:
        compressed = None
        if is_gzip_name(output.path):
            compressed = gzip.GzipFile(filename="", mode="wb", fileobj=stage.stream, compresslevel=GZIP_LEVEL, mtime=0)
        try:
            yield stage.stream if compressed is None else compressed
            if compressed is not None:
                compressed.close()
            stage.publish()
        except OSError as error:
            if error.filename is not None:
                raise
            raise FilterkitError(f"cannot write {output.path}: {error.strerror or error}") from None
        finally:
            if compressed is not None and not compressed.closed:
                # Unpublished: end the stream so that it is not ended, noisily, once its file is gone.
                with contextlib.suppress(OSError, ValueError):
                    compressed.close()
