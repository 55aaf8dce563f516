"""The file formats filterkit reads and writes, chosen by file name or by ``--from``/``--to``.

ARFF (:mod:`filterkit.arff`) is the default.  The others (svmlight/LibSVM, CSV with a header row, JSON
Lines, Parquet, a folder per class) are read in a scan for their header, then streaming passes of chunks;
the record formats type their columns in one shared step (:mod:`filterkit.formats.records`).  A name
ending in ``.gz`` is named by what comes before it (``out.svm.gz`` is svmlight, gzip-compressed).

A format is a module with its reader (and writer, if any) and one entry in :data:`FORMATS`, which
declares its names, suffixes and options: ``--from``, ``--to``, their help and the reading options
of every command come from the table.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, BinaryIO, Callable, Iterator, Protocol, Sequence

from filterkit.errors import FilterkitError
from filterkit.schema import Chunk, Schema
from filterkit.stage import Option

if TYPE_CHECKING:
    from filterkit.arff.writer import NumberFormat

ARFF = "arff"
SVMLIGHT = "svmlight"
CSV = "csv"
JSON_LINES = "jsonl"
PARQUET = "parquet"
FOLDERS = "folders"

#: The options of the typing step (:mod:`filterkit.formats.records`), which every record format reads with.
RECORD_OPTIONS = (
    Option(
        "text", str, None, "Columns (comma-separated names) to read as text: string attributes (Weka's CSVLoader -S)."
    ),
    Option("nominal", str, None, "Columns (comma-separated names) to read as nominal (Weka's CSVLoader -N)."),
    Option("numeric", str, None, "Columns (comma-separated names) to read as numbers, whatever the rules decide."),
)

#: The column of each row's labels (multi-label data), read and written by CSV and JSON Lines (docs/multilabel.md).
LABELS_COLUMN = Option(
    "labels_column",
    str,
    None,
    "The column (CSV) or field (JSON Lines) holding each row's labels: read as MEKA's label attributes "
    "{0,1}, first (-C k); written back from them.",
)
#: What joins a CSV row's labels in its labels column.
LABEL_SEPARATOR = Option(
    "label_separator", str, "|", "What separates the labels in a CSV labels column (--labels-column) [default: |]."
)

#: svmlight's index base, read and written.
ZERO_BASED = Option(
    "zero_based",
    bool,
    None,
    "svmlight indices count from 0 / from 1, read and written (default: read as scikit-learn's "
    "zero_based='auto', written from 1).",
    off_flag="--one-based",
)

#: svmlight's rows of label sets (multi-label), read.
MULTILABEL = Option(
    "multilabel",
    bool,
    None,
    "Read svmlight rows as label sets, l1,l2 (load_svmlight_file's multilabel=True) / as one label each "
    "(default: label sets when a row has several labels or none).",
    off_flag="--single-label",
)


@dataclass(frozen=True)
class Format:
    """A file format: its ``--from``/``--to`` names, its suffixes, its reader (a :class:`ScannedFormat`
    class of ``module``; None: ARFF's) and writer (a :class:`RowWriter` class made with the arguments of
    :func:`row_writer` named by ``writer_arguments``; None: not written), imported when used, and the
    options it reads (and writes) with.
    """

    names: tuple[str, ...]
    suffixes: tuple[str, ...]
    module: str
    reader: str | None
    writer: str | None
    writer_arguments: tuple[str, ...] = ()
    options: tuple[Option, ...] = ()
    #: what to install when the module needs a package filterkit does not require
    extra: str | None = None
    #: a folder, not a file
    reads_folder: bool = False


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
        (ZERO_BASED, MULTILABEL),
    ),
    CSV: Format(
        (CSV,),
        (".csv",),
        "filterkit.formats.csv",
        "CsvFormat",
        "CsvWriter",
        ("stream", "schema", "numbers", "options"),
        (*RECORD_OPTIONS, LABELS_COLUMN, LABEL_SEPARATOR),
    ),
    JSON_LINES: Format(
        (JSON_LINES, "ndjson", "jsonlines"),
        (".jsonl", ".ndjson"),
        "filterkit.formats.jsonl",
        "JsonLinesFormat",
        "JsonLinesWriter",
        ("stream", "schema", "options", "numbers"),
        (*RECORD_OPTIONS, LABELS_COLUMN),
    ),
    PARQUET: Format(
        (PARQUET,),
        (".parquet", ".pq"),
        "filterkit.formats.parquet",
        "ParquetFormat",
        None,
        (),
        RECORD_OPTIONS,
        "parquet",
    ),
    FOLDERS: Format((FOLDERS,), (), "filterkit.formats.folders", "FoldersFormat", None, reads_folder=True),
}

#: The options a format writes with too (the others it reads with only).
WRITTEN_OPTIONS = frozenset({LABELS_COLUMN.name, LABEL_SEPARATOR.name, ZERO_BASED.name})
#: The names ``--from`` and ``--to`` take, and the format each one means.
FORMAT_NAMES = {name: key for key, form in FORMATS.items() for name in form.names}
#: The names ``--to`` takes: the formats filterkit writes.
WRITTEN_FORMAT_NAMES = {name: key for name, key in FORMAT_NAMES.items() if FORMATS[key].writer is not None}
#: Every format's options, by name (formats may share one, as the record formats share their typing).
FORMAT_OPTIONS = {option.name: option for form in FORMATS.values() for option in form.options}


class FormatOptions:
    """The formats' options given (each declared in :data:`FORMATS`), an option not given being its
    declared default; ``class_spec`` is the chain's ``-c``, which the record formats' class rule reads."""

    def __init__(self, class_spec: str | None = None, **values):
        unknown = set(values) - set(FORMAT_OPTIONS)
        if unknown:
            raise TypeError(f"unknown format options {sorted(unknown)}")
        self.class_spec = class_spec
        self.given = {name: value for name, value in values.items() if value is not None}

    def __getattr__(self, name: str):
        if name in FORMAT_OPTIONS:
            return self.given.get(name, FORMAT_OPTIONS[name].default)
        raise AttributeError(name)

    def __eq__(self, other) -> bool:
        return isinstance(other, FormatOptions) and (self.class_spec, self.given) == (other.class_spec, other.given)

    def __hash__(self) -> int:
        return hash((self.class_spec, tuple(sorted(self.given.items()))))

    def recorded(self, options: dict[str, object]) -> "FormatOptions":
        """These options, those not given taken from ``options`` (what a model's training data was read
        with); an error for a given one that contradicts it."""
        for name, value in options.items():
            given = self.given.get(name)
            if given is not None and given != value:
                raise FilterkitError(
                    f"{option_words(name, given)} contradicts the model: its training data was read with "
                    f"{option_words(name, value)}"
                )
        return self.replaced(**options)

    def replaced(self, **values) -> "FormatOptions":
        """These options with ``values`` given instead."""
        return FormatOptions(self.class_spec, **{**self.given, **values})

    @classmethod
    def of_params(cls, params: dict, class_spec: str | None = None) -> "FormatOptions":
        """The options a command's parsed ``params`` give (each format option under its name)."""
        return cls(class_spec, **{name: params.get(name) for name in FORMAT_OPTIONS})


def option_words(name: str, value: object) -> str:
    """A format option as typed: ``--one-based``, ``--text body``."""
    option = FORMAT_OPTIONS[name]
    if option.kind is bool:
        return option.flag if value else option.off_flag or f"--no-{option.flag[2:]}"
    return f"{option.flag} {value}"


def named_format(path: str) -> str | None:
    """The format a path names by its extension, or folders for a folder of subfolders; None otherwise."""
    return extension_format(path) or (FOLDERS if path != "-" and is_folder_of_classes(path) else None)


def new_rows_reading(
    path: str, given: str | None, formats: FormatOptions, trained: tuple[str | None, dict]
) -> tuple[str | None, FormatOptions]:
    """How new rows at ``path`` are read for a model whose training data was read as ``trained`` (format,
    options): in ``given`` (--from), else their name's format, else the training data's; in the training
    data's format with its settled options (svmlight's index base), ``formats`` checked against them."""
    trained_format, trained_options = trained
    input_format = given or named_format(path) or trained_format
    same_format = format_of(path, input_format) == (trained_format or ARFF)
    return input_format, formats.recorded(trained_options) if same_format else formats


def format_of(path: str | None, given: str | None) -> str:
    """The format of ``path`` (None or ``-``: a standard stream): ``given``, else by extension, else a folder
    per class for a folder of subfolders, else ARFF."""
    if given is not None:
        try:
            return FORMAT_NAMES[given.lower()]
        except KeyError:
            names = ", ".join(FORMAT_NAMES)
            raise FilterkitError(f"unknown format '{given}': choose one of {names}") from None
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
    return next((key for key, form in FORMATS.items() if name.endswith(form.suffixes)), None)


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


def scanned_format(format_name: str) -> ScannedFormat:
    """The reader of a format other than ARFF."""
    form = FORMATS[format_name]
    if form.reader is None:
        raise ValueError(f"{format_name} is not a scanned format")
    return getattr(imported(format_name), form.reader)()


def imported(format_name: str):
    """The module of a format; an error naming the extra to install when it needs a missing package."""
    form = FORMATS[format_name]
    try:
        return importlib.import_module(form.module)
    except ImportError as error:
        if form.extra is None or error.name == form.module:
            raise
        raise FilterkitError(
            f"reading {format_name} needs {error.name}: pip install 'filterkit-arff[{form.extra}]'"
        ) from None


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
    if form.writer is None:
        raise FilterkitError(f"filterkit reads {format_name} but does not write it")
    writer = getattr(imported(format_name), form.writer)
    return writer(*(arguments[name] for name in form.writer_arguments))
