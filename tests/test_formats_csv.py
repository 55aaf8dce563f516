"""CSV input and output: Weka 3.6's CSVLoader is the oracle of the types and values."""

from __future__ import annotations

import io
import subprocess
from pathlib import Path

import numpy as np
import pytest

from chain_helpers import REAL, needs_weka, weka_java
from chain_helpers import UCI_SETS as UCI_CLASS_OPTIONS
from filterkit import kernels
from filterkit.arff import read_arff
from filterkit.formats import csv as csv_format
from filterkit.testing import run_filterkit

UCI_SETS = sorted(UCI_CLASS_OPTIONS)

#: One JVM: each line ``IN OUT`` is either ARFF → CSV by Weka's CSVSaver (OUT ends in .csv)
#: or CSV → ARFF by Weka's CSVLoader (OUT ends in .arff).
CONVERT_JAVA = """
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import weka.core.Instances;
import weka.core.converters.ArffSaver;
import weka.core.converters.CSVLoader;
import weka.core.converters.CSVSaver;
import weka.core.converters.ConverterUtils.DataSource;

public class Convert {
    public static void main(String[] args) throws Exception {
        for (String line : Files.readAllLines(Path.of(args[0]))) {
            String[] files = line.split("\\t");
            if (files[1].endsWith(".csv")) {
                CSVSaver saver = new CSVSaver();
                saver.setInstances(DataSource.read(files[0]));
                saver.setFile(new File(files[1]));
                saver.writeBatch();
            } else {
                CSVLoader loader = new CSVLoader();
                loader.setSource(new File(files[0]));
                ArffSaver saver = new ArffSaver();
                saver.setInstances(loader.getDataSet());
                saver.setFile(new File(files[1]));
                saver.writeBatch();
            }
        }
    }
}
"""


def _filterkit(*args, stdin: bytes = b"") -> bytes:
    result = run_filterkit(*args, stdin=stdin)
    assert result.status == 0, result.stderr
    return result.stdout


@pytest.fixture(scope="session")
def weka_files(tmp_path_factory) -> Path:
    """Per UCI set: Weka's CSV (``NAME.weka.csv``) and CSVLoader's reading of it
    (``NAME.weka.arff``); filterkit's CSV (``NAME.csv``) and CSVLoader's reading of it
    (``NAME.ours.arff``); all from one JVM."""
    folder = tmp_path_factory.mktemp("weka_csv")
    runs = []
    for name in UCI_SETS:
        (folder / f"{name}.csv").write_bytes(_filterkit(REAL / f"{name}.arff", "--to", "csv"))
        runs.append([str(REAL / f"{name}.arff"), str(folder / f"{name}.weka.csv")])
        runs.append([str(folder / f"{name}.weka.csv"), str(folder / f"{name}.weka.arff")])
        runs.append([str(folder / f"{name}.csv"), str(folder / f"{name}.ours.arff")])
    jobs = folder / "jobs.tsv"
    jobs.write_text("".join("\t".join(run) + "\n" for run in runs))
    subprocess.run([*weka_java(CONVERT_JAVA), str(jobs)], check=True, capture_output=True, timeout=600)
    return folder


def _assert_same(ours: tuple, theirs: tuple) -> None:
    """The same attribute declarations (names, kinds, labels in order) and values."""
    schema, chunk = ours
    weka_schema, weka_chunk = theirs
    for attribute, weka_attribute in zip(schema.attributes, weka_schema.attributes, strict=True):
        assert attribute.same_declaration(weka_attribute), (attribute, weka_attribute)
    np.testing.assert_array_equal(chunk.dense_values(), weka_chunk.dense_values())


@needs_weka
@pytest.mark.slow
@pytest.mark.parametrize("name", UCI_SETS)
def test_csv_is_typed_and_read_as_wekas_csv_loader_reads_it(weka_files, name):
    for csv, arff in [(f"{name}.weka.csv", f"{name}.weka.arff"), (f"{name}.csv", f"{name}.ours.arff")]:
        ours = read_arff(io.BytesIO(_filterkit(weka_files / csv)))
        theirs = read_arff(str(weka_files / arff))
        _assert_same(ours, theirs)


@pytest.mark.parametrize("name", UCI_SETS)
def test_round_trips_are_exact(tmp_path, name):
    first = tmp_path / "first.csv"
    _filterkit(REAL / f"{name}.arff", "-o", first)
    second = tmp_path / "second.csv"
    _filterkit(first, "-o", second)
    assert second.read_bytes() == first.read_bytes()
    schema, chunk = read_arff(str(REAL / f"{name}.arff"))
    read_schema, read_chunk = read_arff(io.BytesIO(_filterkit(first)))
    assert [a.name for a in read_schema.attributes] == [a.name for a in schema.attributes]
    numeric = [i for i, a in enumerate(schema.attributes) if a.is_numeric]
    np.testing.assert_array_equal(read_chunk.dense_values()[:, numeric], chunk.dense_values()[:, numeric])


def test_a_first_name_starting_with_a_byte_order_mark_reads_back_as_itself(tmp_path):
    """A reader takes a byte-order mark off a file's first bytes: written bare, the name '\ufeffid' came back 'id'."""
    source = tmp_path / "bom.arff"
    source.write_text("@relation b\n@attribute '\ufeffid' numeric\n@attribute c {a,b}\n@data\n1,a\n2,b\n")
    written = tmp_path / "bom.csv"
    _filterkit(source, "-o", written)
    assert written.read_bytes().startswith('"\ufeffid",c\n'.encode())
    schema, _ = read_arff(io.BytesIO(_filterkit(written)))
    assert [a.name for a in schema.attributes] == ["\ufeffid", "c"]


def test_types_missing_values_and_quotes(tmp_path):
    """As Weka 3.6's CSVLoader reads this file (checked by hand): a quoted number is a number,
    NaN and an empty value are missing, blanks are kept in labels (``--nominal``: three distinct
    values of three, one with white space inside, would be text by the text rule)."""
    path = tmp_path / "mixed.csv"
    path.write_bytes(b"a,'b c',n,d\n1, x,2.5,1e3\n\n2,y,?,NaN\n,'z, w',4,\" 3 \"\n")
    schema, chunk = read_arff(io.BytesIO(_filterkit(path, "--nominal", "b c")))
    assert schema.relation == "mixed"
    assert [(a.name, a.kind, a.labels) for a in schema.attributes] == [
        ("a", "numeric", ()),
        ("b c", "nominal", (" x", "y", "z, w")),
        ("n", "numeric", ()),
        ("d", "numeric", ()),
    ]
    np.testing.assert_array_equal(chunk.dense_values(), [[1, 0, 2.5, 1000], [2, 1, np.nan, np.nan], [np.nan, 2, 4, 3]])


#: Cells of blanks Java's ``trim`` keeps (U+00A0, U+3000) are values; those it strips (up to the space) are
#: missing (issue 47, item 5: ``str.strip`` made the first two missing too).
UNICODE_BLANKS = "n,text\n1,x\n2,\u00a0\n3,\u3000\n4,\n5, \x0b\n6,\u00a0y\u3000\n"


def test_a_cell_of_unicode_blanks_is_a_value_as_in_the_arff_reader(tmp_path):
    path = tmp_path / "written" / "blanks.csv"
    path.parent.mkdir()
    path.write_text(UNICODE_BLANKS, encoding="utf-8")
    written = _filterkit(path)
    # quoted in the ARFF rows (liac-arff and scipy split on them), which its reader keeps as labels
    assert b"\n2,'\xc2\xa0'\n3,'\xe3\x80\x80'\n" in written
    schema, chunk = read_arff(io.BytesIO(written))
    assert schema.attributes[1].labels == ("x", "\u00a0", "\u3000", "\u00a0y\u3000")
    np.testing.assert_array_equal(chunk.dense_values()[:, 1], [0, 1, 2, np.nan, np.nan, 3])
    # CSV written from them holds them bare too, and reads back as itself
    again = tmp_path / "blanks.csv"
    _filterkit(path, "-o", again)
    assert again.read_text(encoding="utf-8").splitlines()[1:4] == ["1,x", "2,\u00a0", "3,\u3000"]
    assert _filterkit(again) == written


@needs_weka
@pytest.mark.slow
def test_a_cell_of_unicode_blanks_is_read_as_wekas_csv_loader_reads_it(tmp_path):
    path = tmp_path / "blanks.csv"
    path.write_text(UNICODE_BLANKS, encoding="utf-8")
    jobs = tmp_path / "jobs.tsv"
    jobs.write_text(f"{path}\t{tmp_path / 'blanks.weka.arff'}\n")
    subprocess.run([*weka_java(CONVERT_JAVA), str(jobs)], check=True, capture_output=True, timeout=600)
    _assert_same(read_arff(io.BytesIO(_filterkit(path))), read_arff(str(tmp_path / "blanks.weka.arff")))


def test_stdin_and_chunk_sizes_give_the_same_rows(tmp_path):
    data = (REAL / "iris.arff").read_bytes()
    csv = _filterkit("-", "--to", "csv", stdin=data)
    whole = _filterkit("--from", "csv", "-", "l2", "--to", "csv", stdin=csv)
    assert _filterkit("--from", "csv", "-", "--chunk-rows", "7", "l2", "--to", "csv", stdin=csv) == whole
    path = tmp_path / "iris.csv.gz"
    _filterkit(REAL / "iris.arff", "-o", path)
    assert _filterkit(path, "--chunk-rows", "1", "l2", "--to", "csv") == whole


def test_a_model_applies_to_csv_rows_with_the_training_labels_its_columns_matched_by_name(tmp_path):
    train, test = tmp_path / "train.csv", tmp_path / "test.csv"
    train.write_bytes(b"x,class\n1,a\n2,b\n")
    test.write_bytes(b"x,class\n4,b\n")
    model = tmp_path / "m.json"
    _filterkit("--save-model", model, train, "minmax", "-o", tmp_path / "out.csv")
    assert _filterkit("apply", model, test, "--to", "csv") == b"x,class\n3,b\n"
    test.write_bytes(b"x,class\n4,c\n")
    result = run_filterkit("apply", model, test)
    assert result.stderr == f"filterkit: error: {test}:2: value 'c' is not one of the training labels of 'class'\n"
    test.write_bytes(b"y,class\n4,b\n")
    result = run_filterkit("apply", model, test)
    assert result.stderr == (
        f"filterkit: error: {test}: the column 'y' is not an attribute of the training data ('x', 'class')\n"
    )
    # columns are matched by name, as JSON Lines' fields: in another order, or without the class (missing)
    test.write_bytes(b"class,x\nb,4\n")
    assert _filterkit("apply", model, test, "--to", "csv") == b"x,class\n3,b\n"
    test.write_bytes(b"x\n4\n")
    assert _filterkit("apply", model, test, "--to", "csv") == b"x,class\n3,\n"


@pytest.mark.parametrize(
    "text, line, message",
    [
        (b"a,b\n1,2\n3\n", 3, "1 values; the header row names 2 columns"),
        (b"a,b\n1,2\n3,4,5\n", 3, "3 values; the header row names 2 columns"),
        # an empty value among plain ones: the values are not shifted into the columns before them
        (b"a,b,c\n1,,2,3\n4,5,6\n", 2, "4 values; the header row names 3 columns"),
        (b"a,b\n3,4\n,1,2\n", 3, "3 values; the header row names 2 columns"),
        (b'a,b\n1,"2\n', 2, "value 2: a quote that does not end the value (or never closes)"),
        (b"a,a\n1,2\n", 1, "the column name 'a' appears twice"),
        (b"a,b\n1,\xff\n", 2, "not UTF-8 text (invalid start byte at byte 3)"),
        (b"\n\n", 1, "empty input: no header row of column names"),
    ],
)
def test_malformed_files_name_their_line(tmp_path, text, line, message):
    path = tmp_path / "bad.csv"
    path.write_bytes(text)
    out = tmp_path / "out.arff"
    result = run_filterkit(path, "-o", out)
    assert (result.status, result.stderr) == (1, f"filterkit: error: {path}:{line}: {message}\n")
    assert not out.exists()


def test_the_dask_engine_refuses_csv(tmp_path):
    result = run_filterkit(REAL / "iris.arff", "--engine", "dask", "-o", tmp_path / "out.csv")
    assert result.status == 2
    assert "--engine dask writes ARFF only" in result.stderr


def test_number_like_text_is_a_label_whatever_the_chunks(tmp_path):
    """Dates and ranges hold only a number's characters but are no numbers (Double.valueOf
    refuses them); plain rows are read by the compiled tokenizer, the others one by one, alike."""
    path = tmp_path / "dates.csv"
    path.write_bytes(b"a,b,c\n1,2020-01-02,1e\n-2.5e-3,1-2,?\nNaN, 3 ,\n")
    whole = _filterkit(path)
    assert _filterkit(path, "--chunk-rows", "1") == whole
    schema, chunk = read_arff(io.BytesIO(whole))
    assert [(a.kind, a.labels) for a in schema.attributes] == [
        ("numeric", ()),
        ("nominal", ("2020-01-02", "1-2", " 3 ")),
        ("nominal", ("1e",)),
    ]
    np.testing.assert_array_equal(chunk.dense_values(), [[1, 0, 0], [-0.0025, 1, np.nan], [np.nan, 2, np.nan]])


def test_plain_rows_read_by_the_compiled_tokenizer_as_line_by_line(tmp_path):
    """The words a numeric column may hold (Java's NaN, Infinity, suffixes, ?) and labels that look like
    numbers give, through the compiled tokenizer, the values the line-by-line reading gives."""
    rows = ["1,x,?,7", "NaN,1,2.5,8", "Infinity,2.0,-Infinity,9", "1f,x,+3,10", ".5,1,1e3,-0", "?,?,2d,8"]
    path = tmp_path / "words.csv"
    path.write_text("a,b,c,d\n" + "\n".join(rows) + "\n")
    assert csv_format._plain_group([row.encode() for row in rows], 4) is not None  # not read line by line
    tokenized = _filterkit(path)
    with kernels.compiled(False, kernels.READING):
        assert csv_format._plain_group([row.encode() for row in rows], 4) is None
        assert _filterkit(path) == tokenized
    schema, chunk = read_arff(io.BytesIO(tokenized))
    assert [(a.kind, a.labels) for a in schema.attributes] == [
        ("numeric", ()),
        ("nominal", ("x", "1", "2.0")),
        ("numeric", ()),
        ("numeric", ()),
    ]
    np.testing.assert_array_equal(
        chunk.dense_values(),
        [
            [1, 0, np.nan, 7],
            [np.nan, 1, 2.5, 8],
            [np.inf, 2, -np.inf, 9],
            [1, 0, 3, 10],
            [0.5, 1, 1000, 0],
            [np.nan, np.nan, 2, 8],
        ],
    )


def test_a_byte_order_mark_before_the_header_is_not_part_of_the_first_name(tmp_path):
    path = tmp_path / "excel.csv"
    path.write_bytes(b"\xef\xbb\xbfa,b\r\n1,x\r\n2,y\r\n")
    schema, chunk = read_arff(io.BytesIO(_filterkit("-c", "a", str(path))))
    assert [attribute.name for attribute in schema.attributes] == ["a", "b"]
    assert chunk.values[:, 0].tolist() == [1.0, 2.0]


def test_a_doubled_quote_inside_double_quotes_is_one_quote_and_a_backslash_is_itself(tmp_path):
    """RFC 4180 inside double quotes (as Python's csv module reads them); ARFF's escapes inside single ones."""
    path = tmp_path / "quotes.csv"
    path.write_text('a,b\n1,"he said ""hi"""\n2,""""\n3,""\n4,"C:\\new\\"\n5,\'x\\\'y\\n\'\n')
    schema, chunk = read_arff(io.BytesIO(_filterkit(str(path), "--nominal", "b")))
    labels = schema.attributes[1].labels
    assert [labels[int(code)] for code in chunk.values[:, 1]] == ['he said "hi"', '"', "", "C:\\new\\", "x'y\n"]


def test_a_value_that_starts_with_a_single_quote_it_does_not_close_is_text_as_written(tmp_path):
    """As pandas and Python's csv module write and read a document such as ``'Twas the night``: only a value
    quoted whole (``'a, b'``) is ARFF's single-quoted value (issue 52: documents written by pandas)."""
    import csv

    rows = [["'Twas the night before, and all", "x"], ["'2", "y"], ["'2'x", "y"], ["it's 'quoted' inside", "x"]]
    data = io.StringIO()
    csv.writer(data, lineterminator="\n").writerows([["t", "c"], *rows])
    path = tmp_path / "apostrophes.csv"
    path.write_text(data.getvalue())
    schema, chunk = read_arff(io.BytesIO(_filterkit(path, "--text", "t")))
    assert chunk.text[0] == [text for text, _ in rows]
    path.write_text("t,c\n'a, b',x\n")
    schema, chunk = read_arff(io.BytesIO(_filterkit(path, "--text", "t")))
    assert chunk.text[0] == ["a, b"]


def test_a_column_of_numbers_that_holds_words_after_the_first_groups_is_typed_by_all_its_values(tmp_path):
    """The scan observes a group of plain numbers by their count alone; a column that holds words in a later
    group is observed again value by value, so its numbers count among its distinct values (here: mostly
    distinct, so text), as with the compiled reading off."""
    path = tmp_path / "late_words.csv"
    rows = [f"{k},{k % 3}" for k in range(12_000)] + [f"word {k},{k % 3}" for k in range(30)]
    path.write_text("a,b\n" + "\n".join(rows) + "\n")
    compiled = _filterkit(path)
    with kernels.compiled(False, kernels.READING):
        assert _filterkit(path) == compiled
    schema, chunk = read_arff(io.BytesIO(compiled))
    assert [attribute.kind for attribute in schema.attributes] == ["string", "nominal"]
    assert chunk.text[0][11_999:12_001] == ["11999", "word 0"]
