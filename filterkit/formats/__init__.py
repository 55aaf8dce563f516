"""The file formats filterkit reads and writes, chosen by file name or by ``--from``/``--to``.

ARFF (:mod:`filterkit.arff`) is the default.  The others (svmlight/LibSVM, CSV with a header row, JSON
Lines, Parquet, a folder per class) are read in a scan for their header, then streaming passes of chunks;
the record formats type their columns in one shared step (:mod:`filterkit.formats.records`).  A name
ending in ``.gz`` is named by what comes before it (``out.svm.gz`` is svmlight, gzip-compressed).

A format is a plugin: a reader (and writer, if any) and a :class:`filterkit.plugins.Format` registered
by a ``register_formats`` hook, the built-in ones included (``filterkit_plugins.formats``), which declares
its names, suffixes and options: ``--from``, ``--to`` and the reading options of every command come from
the registry.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, BinaryIO, Callable, Iterator, Protocol, Sequence, TypeVar

from filterkit.errors import FilterkitError
from filterkit.schema import Chunk, Schema
from filterkit.stage import Option

#: The typing step's options (:mod:`filterkit.formats.records`; Weka CSVLoader's -S and -N): they decide the
#: attributes' types, which new rows for a model take from the model.
TYPING_OPTIONS = ("text", "nominal", "numeric")

if TYPE_CHECKING:
    from filterkit.arff.writer import NumberFormat
    from filterkit.plugins import Format, Registry

T = TypeVar("T")
#: What :func:`format_iterated` asks ``next`` to return at the end of a format's items.
_END: Any = object()

#: The format of a file no other format's name or suffix names, and of standard input.
ARFF = "arff"


def registered_formats() -> Registry:
    """The registry formats are looked up in (:func:`filterkit.plugins.registered_formats`)."""
    from filterkit.plugins import registered_formats as registry  # pluggy: not for the compiled ``_lines`` module

    return registry()


def registered(format_name: str) -> Format:
    """The registered format ``format_name`` (a name ``format_of`` gave)."""
    form = registered_formats().format(format_name)
    if form is None:
        raise FilterkitError(f"unknown format '{format_name}': choose one of {', '.join(format_names())}")
    return form


def format_names(written: bool = False) -> list[str]:
    """The names ``--from`` takes (``written``: ``--to``), each format's name then its aliases."""
    forms = [r.value for r in registered_formats().formats.values()]
    return [name for form in forms if form.writer is not None or not written for name in form.names]


def format_options() -> dict[str, Option]:
    """Every registered format's options, by name (formats may share one, as the record formats share their
    typing)."""
    forms = [r.value for r in registered_formats().formats.values()]
    return {option.name: option for form in forms for option in (*form.options, *form.written_options)}


class FormatOptions:
    """The formats' options given (each declared by a registered format), an option not given being its
    declared default; ``class_spec`` is the chain's ``-c``, which the record formats' class rule reads."""

    def __init__(self, class_spec: str | None = None, **values):
        self.class_spec = class_spec
        self.given = {name: value for name, value in values.items() if value is not None}
        if values:
            unknown = set(values) - set(format_options())
            if unknown:
                raise TypeError(f"unknown format options {sorted(unknown)}")

    def __getattr__(self, name: str):
        if name.startswith("_") or name in ("class_spec", "given"):
            raise AttributeError(name)
        if name in self.given:
            return self.given[name]
        if "_declared" not in self.__dict__:  # looked up once per instance
            self._declared = format_options()
        if name in self._declared:
            return self._declared[name].default
        raise AttributeError(name)

    def __eq__(self, other) -> bool:
        return isinstance(other, FormatOptions) and (self.class_spec, self.given) == (other.class_spec, other.given)

    def __hash__(self) -> int:
        return hash((self.class_spec, tuple(sorted(self.given.items()))))

    def untaken(self, read_as: str, written_as: str | None = None) -> str | None:
        """The first option given that neither the input's format ``read_as`` reads with nor the output's
        ``written_as`` (None: no output) writes with, or None."""
        taken = {option.name for option in registered(read_as).options}
        if written_as is not None:
            taken |= {option.name for option in registered(written_as).written_options}
        return next((name for name in self.given if name not in taken), None)

    def recorded(self, options: dict[str, object]) -> "FormatOptions":
        """These options, those not given taken from ``options`` (what a model's training data was read
        with); an error for a given one that contradicts it."""
        for name, value in options.items():
            self._refuse_contradiction(name, value)
        return self.replaced(**options)

    def refuse_retyping(self, options: dict[str, object], read_as: str) -> None:
        """An error for a typing option (``--text``, ``--nominal``, ``--numeric``) that the format ``read_as``
        takes, given with another value than ``options`` (a model's training data's reading) holds: new rows, in
        any format, take the model's attribute types."""
        taken = {option.name for option in registered(read_as).options}
        for name in taken.intersection(TYPING_OPTIONS):
            self._refuse_contradiction(name, options.get(name))

    def _refuse_contradiction(self, name: str, value: object) -> None:
        given = self.given.get(name)
        if given is not None and not _same_reading(name, given, value):
            reading = f"without {format_options()[name].flag}" if value is None else f"with {option_words(name, value)}"
            raise FilterkitError(
                f"{option_words(name, given)} contradicts the model: its training data was read {reading}"
            )

    def replaced(self, **values) -> "FormatOptions":
        """These options with ``values`` given instead."""
        return FormatOptions(self.class_spec, **{**self.given, **values})

    @classmethod
    def of_params(cls, params: dict, class_spec: str | None = None) -> "FormatOptions":
        """The options a command's parsed ``params`` give (each format option under its name)."""
        return cls(class_spec, **{name: params.get(name) for name in format_options()})


def _same_reading(name: str, given: object, value: object) -> bool:
    """Whether option ``name`` given as ``given`` reads as ``value`` does: a typing option's columns (cut at commas,
    as :func:`filterkit.formats.records.split_names` cuts them) in any order, another option's value alike."""
    if name in TYPING_OPTIONS and isinstance(given, str) and isinstance(value, str):
        return {part for part in given.split(",") if part} == {part for part in value.split(",") if part}
    return given == value


def option_words(name: str, value: object) -> str:
    """A format option as typed: ``--one-based``, ``--text body``."""
    option = format_options()[name]
    if option.kind is bool:
        return option.flag if value else option.off_flag or f"--no-{option.flag[2:]}"
    return f"{option.flag} {value}"


def named_format(path: str) -> str | None:
    """The format a path names by its extension, or the format that reads a folder for a folder of subfolders;
    None otherwise."""
    if extension_format(path) is not None or path == "-":
        return extension_format(path)
    folders = (r.value.name for r in registered_formats().formats.values() if r.value.reads_folder)
    return next(folders, None) if is_folder_of_classes(path) else None


def new_rows_reading(
    path: str, given: str | None, formats: FormatOptions, trained: tuple[str | None, dict]
) -> tuple[str | None, FormatOptions]:
    """How new rows at ``path`` are read for a model whose training data was read as ``trained`` (format,
    options): in ``given`` (--from), else their name's format, else the training data's; in the training
    data's format with its settled options (svmlight's index base), ``formats`` checked against them; a typing
    option other than the training data's refused in any format."""
    trained_format, trained_options = trained
    input_format = given or named_format(path) or trained_format
    read_as = format_of(path, input_format)
    formats.refuse_retyping(trained_options, read_as)
    return input_format, formats.recorded(trained_options) if read_as == (trained_format or ARFF) else formats


def format_of(path: str | None, given: str | None) -> str:
    """The format of ``path`` (None or ``-``: a standard stream): ``given``, else by extension, else a folder
    per class for a folder of subfolders, else ARFF."""
    if given is not None:
        return registered(given).name
    return ARFF if path is None else named_format(path) or ARFF


def is_folder_of_classes(path: str) -> bool:
    """Whether ``path`` is a folder per class: a folder that holds a subfolder not hidden (the folders reader
    leaves out ``.ipynb_checkpoints``) and no ARFF file (a folder of ARFF parts, which may hold other folders)."""
    try:
        with os.scandir(path) as scanned:
            entries = [(entry.name, entry.is_dir()) for entry in scanned]
    except OSError:
        return False
    parts = any(name.endswith((".arff", ".arff.gz")) for name, _ in entries)
    return not parts and any(is_dir and not name.startswith(".") for name, is_dir in entries)


def extension_format(path: str) -> str | None:
    """The format a file name's extension names (after any ``.gz``); None for another extension."""
    name = path.lower().removesuffix(".gz")
    forms = (r.value for r in registered_formats().formats.values())
    return next((form.name for form in forms if form.suffixes and name.endswith(form.suffixes)), None)


def relation_of(name: str, keep_extension: bool) -> str:
    """The relation name Weka's loaders give a file: its base name without ``.gz``, and without its
    extension unless ``keep_extension`` (LibSVMLoader keeps it, CSVLoader not); ``stdin`` for stdin.  Bytes
    of the name that are not UTF-8 are written ``\\xNN``: the relation is UTF-8 text."""
    if name.startswith("<"):
        return name.strip("<>")
    base = os.fsencode(name.replace("\\", "/").rsplit("/", 1)[-1]).decode("utf-8", "backslashreplace")
    if base.lower().endswith(".gz"):
        base = base[: -len(".gz")]
    if not keep_extension and "." in base.strip("."):
        base = base.rsplit(".", 1)[0]
    return base


#: The input from its beginning, as a binary stream (gunzipped), once per call.
Reopen = Callable[[], IO[bytes]]


class ScannedFormat(Protocol):
    """A format whose header comes from a scan of the whole input (svmlight, CSV): ``scan`` returns the
    layout, ``chunks`` reads the rows with it, a pass at a time."""

    def scan(self, opened: Reopen, name: str, options: FormatOptions, known_schema: Schema | None) -> "Layout": ...

    def scan_reads_rows(self, known_schema: Schema | None) -> bool: ...

    def chunks(self, stream: IO[bytes], name: str, layout: "Layout", chunk_rows: int) -> Iterator[Chunk]: ...


class StreamedFormat(ScannedFormat, Protocol):
    """The reader of a format whose header comes before its rows, as its Format declares by ``streams``
    (ARFF): a stream read once (standard input, a FIFO) is read as it comes, with no scan."""

    def streamed(self, stream: IO[bytes], name: str, chunk_rows: int) -> tuple["Layout", Iterator[Chunk]]: ...


@dataclass(frozen=True)
class Layout:
    """What a scan found: the schema, the comment lines before the first row, the format's reading
    ``details``, the rows it read (None when it read only a header line), and the reading options it
    settled (svmlight's index base), which a saved model records."""

    schema: Schema
    header_comments: tuple[str, ...]
    details: object
    rows: int | None
    settled: tuple[tuple[str, object], ...] = ()
    #: The attributes of a model's header the file lacks (read as missing in every row): a format that
    #: matches columns by name says which.
    absent: tuple[str, ...] = ()


class RowWriter(Protocol):
    """Writes chunks of rows in a format; made once per output, after the chain is fitted."""

    def write(self, chunk: Chunk) -> None: ...


def scanned_format(format_name: str) -> GuardedReader:
    """The reader of ``format_name``, each call into it guarded (:class:`GuardedReader`), and each chunk a
    third-party one reads checked (:class:`~filterkit.contract.ReadContract`; the built-in readers are tested)."""
    from filterkit.plugins import BUILT_IN_DISTRIBUTION

    form, origin = registered(format_name), format_origin(format_name)
    reader = format_called(origin, "import", imported, form, form.reader)
    third_party = registered_formats().formats[form.name].provenance.distribution != BUILT_IN_DISTRIBUTION
    return GuardedReader(origin, format_called(origin, "construction", reader), third_party)


def format_origin(format_name: str) -> str:
    """How an error names a format: ``format 'x' (plugin 'p', distribution 'd 1.0')``."""
    entry = registered_formats().formats[registered(format_name).name]
    return f"format '{entry.name}' ({entry.provenance})"


def format_called(origin: str, step: str, function: Callable[..., T], *args) -> T:
    """``function(*args)``, a call into a format's code, a crash of it (:func:`filterkit.contract.plugin_fault`)
    becoming a FilterkitError naming ``origin``.  Raised as they are: an OSError, the input's or output's (a file
    that cannot be read, a full disk, a closed pipe), not the format's; a MemoryError, the input's size; and a
    KeyboardInterrupt, which comes to a reader waiting for its input (a terminal, a FIFO) from the user."""
    from filterkit.contract import plugin_fault

    try:
        return function(*args)
    except (FilterkitError, OSError, MemoryError, KeyboardInterrupt):
        raise
    except BaseException as error:
        if not plugin_fault(error):
            raise
        raise FilterkitError(f"{origin} failed during {step}: {type(error).__name__}: {error}") from error


def format_iterated(origin: str, step: str, iterator: Iterator[T]) -> Iterator[T]:
    """The items of a format's ``iterator``, each one's making guarded as :func:`format_called` guards a call."""
    try:
        while (item := format_called(origin, step, next, iterator, _END)) is not _END:
            yield item
    finally:
        close = getattr(iterator, "close", None)
        if close is not None:
            format_called(origin, step, close)


class GuardedReader:
    """A format's reader (a :class:`ScannedFormat`, and a :class:`StreamedFormat` for a format that declares
    ``streams``) whose every call, and every chunk it reads, is guarded by :func:`format_called`: a reader that
    raises gives one error naming its format and plugin.  ``kept`` is the reader's own (the record formats'
    groups kept by a scan)."""

    def __init__(self, origin: str, reader, checked: bool = False):
        self.origin = origin
        self.reader = reader
        #: Whether each chunk read is checked against the layout's schema (a third-party reader's).
        self.checked = checked

    @property
    def kept(self):
        """What the reader's scan keeps for the passes after it (AttributeError: it keeps nothing)."""
        return self.reader.kept

    @kept.setter
    def kept(self, value) -> None:
        self.reader.kept = value

    def scan(self, opened: Reopen, name: str, options: FormatOptions, known_schema: Schema | None) -> Layout:
        """The reader's scan."""
        return self._laid_out(self._called("scan", "scan", opened, name, options, known_schema))

    def scan_reads_rows(self, known_schema: Schema | None) -> bool:
        """Whether the reader's scan reads the rows."""
        return self._called("scan", "scan_reads_rows", known_schema)

    def chunks(self, stream: IO[bytes], name: str, layout: Layout, chunk_rows: int) -> Iterator[Chunk]:
        """The reader's chunks of one pass."""
        chunks = self._called("reading", "chunks", stream, name, layout, chunk_rows)
        return self._read(layout, format_iterated(self.origin, "reading", chunks))

    def streamed(self, stream: IO[bytes], name: str, chunk_rows: int) -> tuple[Layout, Iterator[Chunk]]:
        """The header of a stream read as it comes, and its chunks to come."""
        streamed = self._called("reading", "streamed", stream, name, chunk_rows)
        if not (isinstance(streamed, tuple) and len(streamed) == 2):
            streamed = (streamed, None)  # refused as the layout it is not
        layout, chunks = self._laid_out(streamed[0]), streamed[1]
        return layout, self._read(layout, format_iterated(self.origin, "reading", chunks))

    def _called(self, step: str, method: str, *arguments):
        """The reader's ``method`` called with ``arguments``, guarded, its lack too (a plugin's reader without it)."""
        return format_called(self.origin, step, lambda: getattr(self.reader, method)(*arguments))

    def _laid_out(self, layout) -> Layout:
        """``layout`` as a scan gave it, checked where :attr:`checked` (:meth:`ReadContract.layout`)."""
        if not self.checked:
            return layout
        from filterkit.contract import ContractError, ReadContract

        if not isinstance(layout, Layout):
            found = "None" if layout is None else f"a {type(layout).__module__}.{type(layout).__qualname__}"
            raise ContractError(
                f"{self.origin} broke the format contract during scan: it returned {found}, expected a Layout"
            )
        ReadContract(self.origin, Schema("", ())).layout(layout.schema, layout.header_comments)
        return layout

    def _read(self, layout: Layout, chunks: Iterator[Chunk]) -> Iterator[Chunk]:
        """``chunks``, each checked against ``layout``'s schema where :attr:`checked`."""
        if not self.checked:
            return chunks
        from filterkit.contract import ReadContract

        contract = ReadContract(self.origin, layout.schema)
        return map(contract.read, chunks)

    def all_read(self, rows: int, layout: Layout) -> None:
        """Where :attr:`checked`, a ContractError naming the format when a pass over the whole input read other than
        the rows ``layout``'s scan counted (a reader dropping or repeating rows had been taken at its word)."""
        if self.checked:
            from filterkit.contract import ReadContract

            ReadContract(self.origin, layout.schema).all_read(rows, layout.rows)


class GuardedWriter:
    """A format's :class:`RowWriter` whose writes are guarded by :func:`format_called`."""

    def __init__(self, origin: str, writer: RowWriter):
        self.origin = origin
        self.writer = writer

    def write(self, chunk: Chunk) -> None:
        """Write ``chunk`` with the format's writer (its lack of a ``write`` guarded too)."""
        format_called(self.origin, "writing", lambda: self.writer.write(chunk))


def imported(form: Format, reference: type | str):
    """A format's reader or writer class, ``"module:Class"`` imported; an error naming the extra to install
    when its module needs a missing package."""
    if not isinstance(reference, str):
        return reference
    module, _, name = reference.partition(":")
    try:
        return getattr(importlib.import_module(module), name)
    except ImportError as error:
        if form.extra is None or error.name == module:
            raise FilterkitError(f"format '{form.name}': cannot import {reference} ({error})") from None
        raise FilterkitError(
            f"reading {form.name} needs {error.name}: pip install 'filterkit-arff[{form.extra}]'"
        ) from None
    except AttributeError:
        raise FilterkitError(f"format '{form.name}': {module} has no {name} ({reference})") from None


def row_writer(
    format_name: str,
    stream: BinaryIO,
    schema: Schema,
    sparse: bool | None,
    comments: Sequence[str],
    class_name: str | None,
    options: FormatOptions,
    numbers: NumberFormat | None = None,
) -> RowWriter:
    """A writer of ``format_name`` for rows of ``schema`` (refusing, before writing anything, a schema
    the format cannot hold); ``class_name`` is the class attribute, ``numbers`` None: exact."""
    from filterkit.arff.writer import EXACT

    arguments = {
        "stream": stream,
        "schema": schema,
        "sparse": sparse,
        "comments": comments,
        "class_name": class_name,
        "options": options,
        "numbers": numbers or EXACT,
    }
    form = registered(format_name)
    if form.writer is None:
        raise FilterkitError(f"filterkit reads {format_name} but does not write it")
    origin = format_origin(format_name)
    unknown = [name for name in form.writer_arguments if name not in arguments]
    if unknown:
        raise FilterkitError(
            f"{origin}: its writer_arguments name {', '.join(map(repr, unknown))}, none of {', '.join(arguments)}"
        )
    writer = format_called(origin, "import", imported, form, form.writer)
    return GuardedWriter(
        origin, format_called(origin, "construction", writer, *(arguments[name] for name in form.writer_arguments))
    )
