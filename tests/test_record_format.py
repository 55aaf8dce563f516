"""The record-format bases of the plugin API (issue 73, item 1): a format that writes only its records
(``RecordFormat.records``) or its Arrow batches (``ArrowFormat``'s four methods) is scanned, typed, matched to
a model's header and read in chunks by the base, its errors naming the file and the line."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from filterkit.errors import ArffError, FilterkitError
from filterkit.formats import FormatOptions
from filterkit.plugin import NOMINAL, NUMERIC, STRING, Attribute, RecordFormat, Schema


class KeyValueFormat(RecordFormat):
    """Lines of ``key=value`` pairs separated by tabs; ``labels=a|b`` a row's labels; a line without ``=`` in a
    pair is an error naming it."""

    def records(self, stream, name):
        for number, line in enumerate(stream, 1):
            text = line.decode("utf-8").rstrip("\n")
            if not text:
                continue
            record: dict[str, object] = {}
            for pair in text.split("\t"):
                key, equals, value = pair.partition("=")
                if not equals:
                    raise FilterkitError(f"{pair!r} is no key=value pair", name, number)
                record[key] = value.split("|") if key == "labels" else float(value) if key == "size" else value
            yield number, record


LINES = (
    "size=1.5\tcolour=red\tnote=a long remark with words\n"
    "\n"
    "size=2\tcolour=blue\tnote=another remark made here\n"
    "colour=red\tnote=the third one, without a size\n"
)
#: The same rows, the last with the labels x and y.
LABELLED = LINES.replace("without a size\n", "without a size\tlabels=x|y\n")


def _scanned(path: Path, known: Schema | None = None, **options):
    reader = KeyValueFormat()
    layout = reader.scan(lambda: path.open("rb"), str(path), FormatOptions(None, **options), known)
    with path.open("rb") as stream:
        chunks = list(reader.chunks(stream, str(path), layout, 2))
    return layout, chunks


def test_a_format_of_records_alone_is_typed_and_read_in_chunks(tmp_path):
    path = tmp_path / "rows.kv"
    path.write_text(LINES)
    layout, chunks = _scanned(path)
    kinds = [(attribute.name, attribute.kind) for attribute in layout.schema.attributes]
    assert kinds == [("size", NUMERIC), ("colour", NOMINAL), ("note", STRING)]
    assert layout.schema.attributes[1].labels == ("red", "blue")
    assert layout.rows == 3
    values = np.vstack([chunk.dense_values() for chunk in chunks])
    np.testing.assert_array_equal(values[:, :2], [[1.5, 0], [2, 1], [np.nan, 0]])
    assert [text for chunk in chunks for text in chunk.text[2]] == [
        "a long remark with words",
        "another remark made here",
        "the third one, without a size",
    ]


def test_a_field_of_labels_becomes_the_label_attributes_first(tmp_path):
    path = tmp_path / "rows.kv"
    path.write_text(LABELLED)
    layout, chunks = _scanned(path, labels_column="labels")
    assert [attribute.name for attribute in layout.schema.attributes][:2] == ["x", "y"]
    values = np.vstack([chunk.dense_values() for chunk in chunks])
    np.testing.assert_array_equal(values[:, :2], [[0, 0], [0, 0], [1, 1]])


def test_a_model_header_is_matched_by_field_name_and_a_label_it_lacks_names_the_line(tmp_path):
    path = tmp_path / "rows.kv"
    path.write_text(LINES)
    known = Schema("train", (Attribute("colour", NOMINAL, labels=("red",)), Attribute("size", NUMERIC)))
    with pytest.raises(FilterkitError, match="the field 'note' is not an attribute of the training data"):
        _scanned(path, known)
    path.write_text("size=1\tcolour=red\nsize=2\tcolour=blue\n")
    with pytest.raises(ArffError, match="not one of the training labels of 'colour'") as refused:
        _scanned(path, known)
    assert refused.value.line == 2


def test_the_format_s_own_error_names_its_line_and_an_empty_input_is_refused(tmp_path):
    path = tmp_path / "rows.kv"
    path.write_text("size=1\n\nsize\n")
    with pytest.raises(FilterkitError, match="'size' is no key=value pair") as refused:
        _scanned(path)
    assert refused.value.line == 3
    path.write_text("\n")
    with pytest.raises(ArffError, match="no record with a field: nothing to read"):
        _scanned(path)


@pytest.mark.skipif(importlib.util.find_spec("pyarrow") is None, reason="pyarrow is not installed")
def test_an_arrow_format_of_batches_alone_reads_as_parquet_reads_the_same_table(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from filterkit.formats.parquet import ParquetFormat
    from filterkit.plugin import ArrowFormat

    class ArrowStreamFormat(ArrowFormat):
        """Arrow's IPC stream format, its batches read whole."""

        def arrow_file(self, stream, name):
            return pa.ipc.open_stream(stream.read()).read_all()

        def arrow_schema(self, opened):
            return opened.schema

        def arrow_rows(self, opened):
            return opened.num_rows

        def arrow_batches(self, opened, name, rows, columns):
            return opened.select(list(columns)).to_batches(max_chunksize=rows)

    table = pa.table(
        {
            "size": [1.5, 2.0, None],
            "colour": pa.array(["red", "blue", "red"]).dictionary_encode(),
            "note": ["a long remark with words", "another remark made here", "the third one"],
        }
    )
    with pa.ipc.new_stream(tmp_path / "t.arrows", table.schema) as writer:
        writer.write_table(table)
    pq.write_table(table, tmp_path / "t.parquet")
    read = []
    for reader, path in ((ArrowStreamFormat(), tmp_path / "t.arrows"), (ParquetFormat(), tmp_path / "t.parquet")):
        layout = reader.scan(lambda path=path: path.open("rb"), "t", FormatOptions(None), None)
        with path.open("rb") as stream:
            chunks = list(reader.chunks(stream, "t", layout, 2))
        read.append((layout.schema, np.vstack([chunk.dense_values() for chunk in chunks])))
    (arrow_schema, arrow_values), (parquet_schema, parquet_values) = read
    assert arrow_schema == parquet_schema
    np.testing.assert_array_equal(arrow_values, parquet_values)
