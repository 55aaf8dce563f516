"""filterkit's built-in file formats, registered through the same hook as a third-party format: ARFF,
svmlight/LibSVM, CSV, JSON Lines, Parquet and a folder per class.  Each names its reader and writer as
``"module:Class"``, imported when first used, so registering them costs no import."""

from filterkit.plugin import Format, Option, hookimpl

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

FORMATS = (
    Format(
        "arff",
        "filterkit.formats.arff:ArffFormat",
        "filterkit.arff.writer:ArffWriter",
        suffixes=(".arff",),
        writer_arguments=("stream", "schema", "sparse", "comments", "numbers"),
        ranges="lines",
        streams=True,
    ),
    Format(
        "svmlight",
        "filterkit.formats.svmlight:SvmlightFormat",
        "filterkit.formats.svmlight:SvmlightWriter",
        aliases=("libsvm", "svm"),
        suffixes=(".svm", ".svmlight", ".libsvm"),
        writer_arguments=("stream", "schema", "comments", "class_name", "options", "numbers"),
        options=(ZERO_BASED, MULTILABEL),
        written_options=(ZERO_BASED,),
        keeps_extension=True,
    ),
    Format(
        "csv",
        "filterkit.formats.csv:CsvFormat",
        "filterkit.formats.csv_writer:CsvWriter",
        suffixes=(".csv",),
        writer_arguments=("stream", "schema", "numbers", "options"),
        options=(*RECORD_OPTIONS, LABELS_COLUMN, LABEL_SEPARATOR),
        written_options=(LABELS_COLUMN, LABEL_SEPARATOR),
        ranges="csv",
    ),
    Format(
        "jsonl",
        "filterkit.formats.jsonl:JsonLinesFormat",
        "filterkit.formats.jsonl:JsonLinesWriter",
        aliases=("ndjson", "jsonlines"),
        suffixes=(".jsonl", ".ndjson"),
        writer_arguments=("stream", "schema", "options", "numbers"),
        options=(*RECORD_OPTIONS, LABELS_COLUMN),
        written_options=(LABELS_COLUMN,),
        ranges="lines",
    ),
    Format(
        "parquet",
        "filterkit.formats.parquet:ParquetFormat",
        suffixes=(".parquet", ".pq"),
        options=RECORD_OPTIONS,
        extra="parquet",
    ),
    Format(
        "folders",
        "filterkit.formats.folders:FoldersFormat",
        reads_folder=True,
    ),
)


@hookimpl
def register_formats(register):
    """Register the built-in formats."""
    for form in FORMATS:
        register(form)
