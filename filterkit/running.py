"""One run of a chain from an input to an output: Weka's ``Filter.useFilter``, made streaming.

:func:`run` opens the input through an engine (:class:`LocalEngine`, or
:class:`filterkit.distributed.DaskEngine`), fits the chain unless it comes fitted, writes the
output headed by the provenance lines and saves the model before the output is published; the
chain command, ``apply`` and both engines share it, so the bytes do not depend on the engine.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import functools
import os
import shlex
import stat
import sys
from typing import BinaryIO, Callable, ContextManager, Iterator, Protocol, Sequence, TextIO, cast

from filterkit.arff.tokens import one_line
from filterkit.arff.writer import EXACT, NumberFormat
from filterkit.background import write_behind
from filterkit.contract import declared
from filterkit.errors import FilterkitError, folder_given
from filterkit.formats import ARFF, FormatOptions, format_of, registered, relation_of, row_writer
from filterkit.labels import meka_label_count, meka_layout, taken_columns, with_meka_label_count
from filterkit.outputs import OutputFile, staged_output
from filterkit.ownership import stopping_signals_recorded
from filterkit.progress import Progress
from filterkit.runner import Chain
from filterkit.schema import Schema
from filterkit.sources import FileSource, KeptChunks, ScannedSource, StreamSource
from filterkit.text import shown
from filterkit.version import __version__

#: The first word of the text of every provenance comment filterkit writes.
PROVENANCE_WORD = "filterkit"


@dataclasses.dataclass(frozen=True)
class OutputForm:
    """How an output is written: format, row form (None: as the input), numbers and format options."""

    format: str = ARFF
    sparse: bool | None = None
    numbers: NumberFormat = EXACT
    options: FormatOptions = FormatOptions()


@dataclasses.dataclass(frozen=True)
class OutputTarget:
    """Where :func:`run` writes: the one output ``file`` (None: standard output), or, on an engine that
    cuts its input into partitions, one output per partition into the folder ``each_into``."""

    file: OutputFile | None = None
    each_into: str | None = None


class Engine(Protocol):
    """What :func:`run` asks of an engine."""

    def opened(self, chain: Chain, input_path: str) -> ContextManager:
        """The input as this engine's source (with ``schema`` and ``header_comments``)."""

    def check_target(self, source, target: OutputTarget) -> None:
        """Refuse, before any pass, a ``target`` this engine cannot write the source's output to."""

    def fit(self, chain: Chain, source) -> None:
        """Fit ``chain`` on the source's rows."""

    def write(
        self,
        chain: Chain,
        source,
        target: OutputTarget,
        form: OutputForm,
        comments: list[str],
        before_publish: Callable[[], None] | None,
    ) -> None:
        """Write the fitted chain's output of the source's rows to ``target``, published only whole and
        only once ``before_publish()`` (if any) has returned."""


@dataclasses.dataclass
class LocalEngine:
    """Fits and writes in this process, one chunk at a time (:class:`filterkit.runner.Chain`)."""

    chunk_rows: int
    input_format: str | None = None
    options: FormatOptions = FormatOptions()
    progress: Progress = dataclasses.field(default_factory=Progress)
    #: The chain fitted last and what its last pass kept, until :meth:`write` reads it back.
    _kept: tuple[Chain, KeptChunks] | None = dataclasses.field(default=None, init=False, repr=False)

    def opened(self, chain: Chain, input_path: str) -> ContextManager:
        """The input as a source (:func:`open_source`); for a fitted chain, with its training header."""
        fitted = chain.output_schema is not None
        known = chain.input_schema if fitted else None
        needs_passes = not fitted and any(declared(stage, "learns") for stage in chain.stages)
        return open_source(input_path, self.chunk_rows, needs_passes, self.input_format, self.options, known)

    def check_target(self, source, target: OutputTarget) -> None:
        """One output only: a run in this process does not cut its input into partitions."""
        if target.each_into is not None:
            raise FilterkitError("an output per partition (--output-dir) needs --engine dask")

    def fit(self, chain: Chain, source) -> None:
        """Fit ``chain``, one pass over the source per stage that learns; what the last pass keeps
        (:meth:`Chain.fit`'s ``keep``) is read back by :meth:`write` instead of the source."""
        kept = KeptChunks(source.size)
        try:
            chain.fit(source, self.progress, keep=kept)
        except BaseException:
            kept.close()
            raise
        self._kept = (chain, kept)

    def write(
        self,
        chain: Chain,
        source,
        target: OutputTarget,
        form: OutputForm,
        comments: list[str],
        before_publish: Callable[[], None] | None,
    ) -> None:
        """Write the chain's output of every row to the target's one file, formatting behind the transform."""
        assert chain.output_schema is not None  # fitted
        schema, order = meka_layout(chain.output_schema, chain.label_names)
        with output_stream(target.file, before_publish) as stream:
            writer = row_writer(
                form.format, stream, schema, form.sparse, comments, chain.class_name, form.options, form.numbers
            )
            (fitted, kept), self._kept = self._kept or (chain, KeptChunks()), None
            with contextlib.closing(kept):
                from_source = kept.stage_position is None or fitted is not chain
                chunks = chain.transform(source.chunks()) if from_source else chain.transform_kept(kept)
                if order is not None:
                    chunks = (taken_columns(chunk, order) for chunk in chunks)
                with self.progress.step("writing", source if from_source else kept) as meter:
                    write_behind(chunks, meter.counting(writer.write))


def run(
    chain: Chain,
    input_path: str,
    engine: Engine,
    output: OutputFile | None = None,
    form: OutputForm = OutputForm(),
    command: str = "chain",
    save_model: Callable[[object], None] | None = None,
    on_fitted: Callable[[Chain], None] | None = None,
    output_dir: str | None = None,
) -> None:
    """Run ``chain`` over ``input_path`` on ``engine`` and write its output to ``output`` (None:
    standard output), published only whole; or, on the Dask engine, one output per partition
    into ``output_dir``.

    A chain that is not fitted is fitted first (warning of :attr:`Chain.warnings`; then
    ``on_fitted(chain)``); a fitted one checks the input against its training header and keeps
    the input's relation name.  ``save_model(source)`` runs once every row is written, before the
    output is published: a model that cannot be saved leaves no output.
    """
    fitted = chain.output_schema is not None
    target = OutputTarget(output, output_dir)
    with (
        printed_to_stderr() if output is None else contextlib.nullcontext(),
        engine.opened(chain, input_path) as source,
    ):
        engine.check_target(source, target)  # refused before any pass, not after the fit
        if fitted:
            check_new_rows(chain, source, "<stdin>" if input_path == "-" else input_path)
            chain = copy.copy(chain)  # the output is the input's rows: their relation name, not the training file's
            assert chain.output_schema is not None
            chain.output_schema = dataclasses.replace(chain.output_schema, relation=new_rows_relation(source, chain))
        else:
            chain.checked_class(source.schema, "<stdin>" if input_path == "-" else input_path)
            engine.fit(chain, source)
            for warning in chain.warnings:  # before the writing it warns of
                print(f"filterkit: warning: {one_line(warning)}", file=sys.stderr)
            if on_fitted is not None:
                on_fitted(chain)
        earlier = [text for text in source.header_comments if text.split(" ", 1)[0] == PROVENANCE_WORD]
        comments = provenance_comments(earlier, command, chain, form.sparse, form.numbers.options)
        save = None if save_model is None else functools.partial(save_model, source)
        engine.write(chain, source, target, form, comments, save)


def new_rows_relation(source, chain: Chain) -> str:
    """The relation name of the rows a fitted chain is applied to: an ARFF header's own; for a file read with
    the training header (CSV, JSON Lines, svmlight, Parquet, a folder), the name its format gives that file
    (Weka's loaders', as a chain run on it names it), with the training relation's MEKA label count."""
    if not isinstance(source, ScannedSource):
        return source.schema.relation
    assert chain.input_schema is not None  # fitted
    form = registered(source.format_name)
    reads_folder = form.reads_folder
    keep_extension = reads_folder or form.keeps_extension  # as LibSVMLoader and folders name them
    relation = relation_of(os.path.abspath(source.name) if reads_folder else source.name, keep_extension)
    labels = meka_label_count(chain.input_schema.relation)
    return relation if labels is None else with_meka_label_count(relation, labels)


def provenance_comments(
    earlier: Sequence[str], command: str, chain: Chain, sparse: bool | None, number_options: Sequence[str] = ()
) -> list[str]:
    """The header comments of an output: the input's provenance lines (``earlier``), then this run's:

        filterkit chain: -c first --positive Ethics --dense --digits 6 ig --presence select --top 7 l2 (filterkit 0.3.0)

    ``command`` is ``chain`` or ``apply MODEL``.  Only the options that decide the output's bytes
    are recorded (the class unless last, the positive label, the row form, ``number_options``),
    not paths, the chunk size, the engine or the plugin folder.
    """
    options = []
    if chain.class_spec not in (None, "last"):
        options += ["-c", shlex.quote(str(chain.class_spec))]
    if chain.positive is not None:
        options += ["--positive", shlex.quote(chain.positive)]
    if sparse is not None:
        options.append("--sparse" if sparse else "--dense")
    options += number_options
    words = [
        f"{PROVENANCE_WORD} {command}:",
        *options,
        describe_chain(chain.stages),
        f"({PROVENANCE_WORD} {__version__})",
    ]
    return [*earlier, " ".join(words)]


def describe_chain(stages) -> str:
    """The chain as it would be typed: each stage with the options that differ from their defaults."""
    return " ".join(shlex.quote(word) for stage in stages for word in stage.command_words()) or "(identity)"


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

    A format that ``streams`` (ARFF) reads a regular file once per pass and a stream (stdin, a FIFO, a
    device) once, spooled when the chain needs several passes; its header is its own.  The others are
    scanned for their header first (:class:`ScannedSource`), unless ``known_schema`` (a model's input
    header) gives it.
    """
    format_name = format_of(path, given_format)
    form = registered(format_name)
    with contextlib.ExitStack() as stack:
        source: FileSource | StreamSource | ScannedSource
        if form.reads_folder:
            if path == "-":
                raise FilterkitError(f"{format_name} reads a folder, not standard input")
            stream, name = None, path
        elif path == "-":
            if sys.stdin is None:
                raise FilterkitError("standard input is closed")
            stream, name = sys.stdin.buffer, "<stdin>"
        elif _is_regular_file(path):
            stream, name = None, path
        elif os.path.isdir(path):
            raise folder_given(path, format_name)
        else:
            stream, name = stack.enter_context(open(path, "rb")), path
        if stream is None and form.streams:
            source = FileSource(path, chunk_rows, format_name)
        elif form.streams:
            source = StreamSource(stream, name, chunk_rows, format_name)
            if needs_passes:
                source.spool()
        else:
            source = (
                ScannedSource.of_file(path, format_name, chunk_rows, options, known_schema, needs_passes)
                if stream is None
                else ScannedSource.of_stream(stream, name, format_name, chunk_rows, options, known_schema, needs_passes)
            )
        with contextlib.closing(source):
            yield source


def _is_regular_file(path: str) -> bool:
    """Whether ``path`` is a regular file; True when it cannot be looked at, so that opening it gives the error."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return True


class _PrintedToStderr:
    """Standard output while rows are written to it: standard error to whatever writes to it (``print()``,
    ``click.echo``, ``sys.stdout.write``, its ``buffer``), as while plugins load; the rows go to ``rows``, standard
    output's bytes (a stage's line among them had broken the ARFF)."""

    def __init__(self, rows: BinaryIO) -> None:
        self.rows = rows

    def __getattr__(self, name: str):
        return getattr(sys.stderr, name)


@contextlib.contextmanager
def printed_to_stderr() -> Iterator[BinaryIO]:
    """Within: what is written to standard output goes to standard error; yields standard output's bytes, for rows."""
    if isinstance(sys.stdout, _PrintedToStderr):
        yield sys.stdout.rows
        return
    sys.stdout.flush()
    with contextlib.redirect_stdout(cast(TextIO, _PrintedToStderr(sys.stdout.buffer))):
        yield cast(_PrintedToStderr, sys.stdout).rows


@contextlib.contextmanager
def output_stream(output: OutputFile | None, before_publish: Callable[[], None] | None = None):
    """A binary stream to stdout (what is printed meanwhile going to stderr), or to ``output``, published only when
    the block succeeds and then ``before_publish()`` (if any: saving the model) returns; a ``.gz`` name is written
    gzip-compressed with no file name or time in its header (the same bytes each run)."""
    if output is None:
        with printed_to_stderr() as rows:
            yield rows
            if before_publish is not None:
                before_publish()
            rows.flush()
        return
    with staged_output(output) as stage:
        yield stage.stream
        stage.complete()  # its last bytes on disk: a full disk fails before the model is saved
        stage.claim()  # a file written in place: its lock waited for while a stopping signal still stops the run
        with stopping_signals_recorded() as stopped:  # a signal between the two had left the model without its output
            if before_publish is not None:
                before_publish()
            stage.publish()
        if stopped:
            stopped[0]()


def check_new_rows(chain: Chain, source, name: str) -> None:
    """Check the header of new rows (``source``: read here, or a Dask plan of partitions) against the fitted
    ``chain``'s training header: an error when the file (``name``) holds none of the attributes the chain reads (all
    but the class or labels), and a note naming those it lacks (its format's layout's ``absent``: CSV, JSON Lines and
    Parquet read the rows by the training header, and leave an absent attribute missing in every row)."""
    chain.check_input(source.schema, name)
    layout = getattr(source, "layout", None)
    if layout is None and getattr(source, "partitions", None):  # a Dask plan: its parts share the first's layout
        layout = getattr(source.partitions[0], "layout", None)
    assert chain.input_schema is not None, "the chain is fitted"
    targets = {chain.class_name, *chain.label_names}
    read = [attribute.name for attribute in chain.input_schema.attributes if attribute.name not in targets]
    absent = set(getattr(layout, "absent", ()))
    if read and absent >= set(read):
        raise FilterkitError(f"the file holds none of the attributes the model reads ({shown_names(read)})", name)
    lacking = [attribute for attribute in read if attribute in absent]
    if lacking:
        sys.stderr.write(f"filterkit: note: {name} lacks {shown_names(lacking)}: missing in every row\n")


def shown_names(names: list[str]) -> str:
    """Attribute names for a message: the first ten, quoted, and how many more."""
    more = f" and {len(names) - 10} more" if len(names) > 10 else ""
    return ", ".join(shown(name) for name in names[:10]) + more
