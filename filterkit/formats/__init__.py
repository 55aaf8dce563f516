"""The file formats filterkit reads and writes, chosen by file name or by ``--from``/``--to``.

ARFF (:mod:`filterkit.arff`) is the default.  svmlight/LibSVM and CSV with a header row are read
in a scan for their header, then streaming passes of chunks.  A name ending in ``.gz`` is named
by what comes before it (``out.svm.gz`` is svmlight, gzip-compressed).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, BinaryIO, Callable, Iterator, Protocol, Sequence

from filterkit.errors import FilterkitError
from filterkit.schema import Chunk, Schema

if TYPE_CHECKING:
    from filterkit.arff.writer import NumberFormat

ARFF = "arff"
SVMLIGHT = "svmlight"
CSV = "csv"


@dataclass(frozen=True)
class Format:
    """A file format: its ``--from``/``--to`` names, its suffixes, and its reader (a
    :class:`ScannedFormat` class of ``module``; None: ARFF's) and writer (a :class:`RowWriter` class
    made with the arguments of :func:`row_writer` named by ``writer_arguments``), imported when used.
    """

    names: tuple[str, ...]
    suffixes: tuple[str, ...]
    module: str
    reader: str | None
    writer: str
    writer_arguments: tuple[str, ...]


#: Every format, by its name; a new one is a module with its reader and writer, and a line here.
FORMATS = {
    ARFF: Format(
        (ARFF,),
        (".arff",),
        "filterkit.arff.writer",
        None,
        "ArffWriter",
        ("stream", "schema", "sparse", "comments", "numbers"),
    ),
    SVMLIGHT: Format(
        (SVMLIGHT, "libsvm", "svm"),
        (".svm", ".svmlight", ".libsvm"),
        "filterkit.formats.svmlight",
        "SvmlightFormat",
        "SvmlightWriter",
        ("stream", "schema", "comments", "class_name", "options", "numbers"),
    ),
    CSV: Format((CSV,), (".csv",), "filterkit.formats.csv", "CsvFormat", "CsvWriter", ("stream", "schema", "numbers")),
}

#: The names ``--from`` and ``--to`` take, and the format each one means.
FORMAT_NAMES = {name: key for key, form in FORMATS.items() for name in form.names}


@dataclass(frozen=True)
class FormatOptions:
    """The options of the formats other than ARFF: ``zero_based``, whether svmlight indices count from 0
    (None: read as scikit-learn's ``zero_based="auto"`` decides, written one-based)."""

    zero_based: bool | None = None


def format_of(path: str | None, given: str | None) -> str:
    """The format of ``path`` (None or ``-``: a standard stream): ``given``, else by extension, else ARFF."""
    if given is not None:
        try:
            return FORMAT_NAMES[given.lower()]
        except KeyError:
            names = ", ".join(FORMAT_NAMES)
            raise FilterkitError(f"unknown format '{given}': choose one of {names}") from None
    return ARFF if path is None else extension_format(path) or ARFF


def extension_format(path: str) -> str | None:
    """The format a file name's extension names (after any ``.gz``); None for another extension."""
    name = path.lower().removesuffix(".gz")
    return next((key for key, form in FORMATS.items() if name.endswith(form.suffixes)), None)


def relation_of(name: str, keep_extension: bool) -> str:
    """The relation name Weka's loaders give a file: its base name without ``.gz``, and without its
    extension unless ``keep_extension`` (LibSVMLoader keeps it, CSVLoader not); ``stdin`` for stdin."""
    if name.startswith("<"):
        return name.strip("<>")
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
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


@dataclass(frozen=True)
class Layout:
    """What a scan found: the schema, the comment lines before the first row, the format's reading
    ``details``, and the rows it read (None when it read only a header line)."""

    schema: Schema
    header_comments: tuple[str, ...]
    details: object
    rows: int | None


class RowWriter(Protocol):
    """Writes chunks of rows in a format; made once per output, after the chain is fitted."""

    def write(self, chunk: Chunk) -> None: ...


def scanned_format(format_name: str) -> ScannedFormat:
    """The reader of a format other than ARFF."""
    form = FORMATS[format_name]
    if form.reader is None:
        raise ValueError(f"{format_name} is not a scanned format")
    return getattr(importlib.import_module(form.module), form.reader)()


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
    form = FORMATS[format_name]
    writer = getattr(importlib.import_module(form.module), form.writer)
    return writer(*(arguments[name] for name in form.writer_arguments))
