"""svmlight/LibSVM input and output: scikit-learn's load_svmlight_file is the oracle."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_svmlight_file

from chain_helpers import REAL
from filterkit.arff import read_arff
from filterkit.testing import run_filterkit

#: A label not in its shortest form (+1, written one way: tests/test_svmlight_layout.py has
#: one number written two ways), comments, blank lines, explicit zeros, exponents, NaN and
#: infinity, an empty row: what load_svmlight_file reads.
TRICKY = b"""# a comment before the rows

+1 1:0.5 3:-2e3 10:1.0
-1 2:0 4:nan   # a trailing comment
+1 5:inf 7:.25
2
-1 1:1e-300 2:3 3:4 4:5
"""


def _filterkit(*args) -> bytes:
    result = run_filterkit(*args)
    assert result.status == 0, result.stderr
    return result.stdout


def _rows(data: bytes) -> bytes:
    """svmlight text without its comment lines (filterkit's provenance)."""
    return b"".join(line for line in data.splitlines(keepends=True) if not line.startswith(b"#"))


def _loaded(path: Path, **options):
    matrix, labels = load_svmlight_file(str(path), **options)
    return matrix.toarray(), labels


def _as_arff(path: Path, *options) -> tuple:
    """filterkit's reading of ``path``: the schema and every row (through its ARFF output)."""
    return read_arff(io.BytesIO(_filterkit(path, *options)))


@pytest.fixture
def tricky(tmp_path) -> Path:
    path = tmp_path / "tricky.svm"
    path.write_bytes(TRICKY)
    return path


def test_rows_read_as_load_svmlight_file_reads_them(tricky):
    schema, chunk = _as_arff(tricky)
    expected, labels = _loaded(tricky)
    values = chunk.dense_values()
    np.testing.assert_array_equal(values[:, :-1], expected)
    assert [a.name for a in schema.attributes] == [f"att_{i}" for i in range(1, 11)] + ["class"]
    assert schema.attributes[-1].labels == ("-1", "1", "2")
    assert schema.relation == "tricky.svm"
    label_values = np.array([float(label) for label in schema.attributes[-1].labels])
    np.testing.assert_array_equal(label_values[values[:, -1].astype(int)], labels)


def test_output_reads_back_in_scikit_learn_as_the_input(tricky, tmp_path):
    out = tmp_path / "out.svm"
    _filterkit(tricky, "-o", out)
    np.testing.assert_array_equal(_loaded(out)[0], _loaded(tricky)[0])
    np.testing.assert_array_equal(_loaded(out)[1], _loaded(tricky)[1])
    compressed = tmp_path / "out.svm.gz"
    _filterkit(tricky, "-o", compressed)
    assert gzip.decompress(compressed.read_bytes()) == out.read_bytes()
    np.testing.assert_array_equal(_loaded(compressed)[0], _loaded(tricky)[0])
    again = tmp_path / "again.svm"
    _filterkit(out, "-o", again)
    assert _rows(again.read_bytes()) == _rows(out.read_bytes())
    assert _rows(out.read_bytes()).startswith(b"1 1:0.5 3:-2000 10:1\n-1 4:nan\n1 5:Infinity 7:0.25\n2\n")


def test_zero_based_as_scikit_learns_auto_and_as_asked(tmp_path):
    zero = tmp_path / "zero.svm"
    zero.write_bytes(b"1 0:1 2:2\n2 1:3\n")
    schema, chunk = _as_arff(zero)
    np.testing.assert_array_equal(chunk.dense_values()[:, :-1], _loaded(zero, zero_based="auto")[0])
    assert len(schema.attributes) == 4
    out = tmp_path / "out.svm"
    _filterkit(zero, "-o", out)
    assert _rows(out.read_bytes()) == b"1 1:1 3:2\n2 2:3\n"
    _filterkit(zero, "--zero-based", "-o", out)
    assert _rows(out.read_bytes()) == b"1 0:1 2:2\n2 1:3\n"
    one = tmp_path / "one.svm"
    one.write_bytes(b"1 1:1 3:2\n")
    schema, chunk = _as_arff(one, "--zero-based")
    np.testing.assert_array_equal(chunk.dense_values()[:, :-1], _loaded(one, zero_based=True)[0])
    result = run_filterkit(zero, "--one-based")
    assert result.status == 1
    assert result.stderr == f"filterkit: error: {zero}:1: index 0 in a file read as one-based (--one-based)\n"


@pytest.mark.slow
def test_shape_bns_l2_end_to_end_agrees_with_scikit_learn(tmp_path):
    data = tmp_path / "oh0.svm"
    _filterkit(REAL / "oh0.wc.arff", "-o", data)
    words, labels = _loaded(data)
    schema, chunk = read_arff(str(REAL / "oh0.wc.arff"))
    np.testing.assert_array_equal(words, chunk.dense_values()[:, :-1])
    np.testing.assert_array_equal(labels, chunk.dense_values()[:, -1])
    out = tmp_path / "out.svm"
    _filterkit(data, "--positive", "4", "shape", "bns", "l2", "-o", out)
    shaped = _filterkit(REAL / "oh0.wc.arff", "--positive", "Ethics", "shape", "bns", "l2")
    expected = read_arff(io.BytesIO(shaped))[1].dense_values()
    values, out_labels = _loaded(out)
    np.testing.assert_array_equal(values, expected[:, :-1])
    np.testing.assert_array_equal(out_labels, labels)


def test_same_output_whatever_the_chunks_and_from_a_pipe(tricky):
    whole = _filterkit(tricky, "l2", "--to", "svmlight")
    assert _filterkit(tricky, "--chunk-rows", "1", "l2", "--to", "svmlight") == whole
    piped = run_filterkit("--from", "svmlight", "-", "l2", "--to", "svmlight", stdin=gzip.compress(TRICKY, mtime=0))
    assert piped.status == 0, piped.stderr
    assert piped.stdout == whole


def test_a_model_applies_to_test_rows_with_fewer_features(tmp_path):
    train, test = tmp_path / "train.svm", tmp_path / "test.svm"
    train.write_bytes(b"1 1:1 3:2\n2 2:3\n")
    test.write_bytes(b"2 1:4\n")
    model = tmp_path / "m.json"
    _filterkit("--save-model", model, train, "l2", "-o", tmp_path / "train.out.svm")
    out = tmp_path / "test.out.svm"
    _filterkit("apply", model, test, "-o", out)
    assert _rows(out.read_bytes()) == b"2 1:1\n"
    test.write_bytes(b"2 1:4\n3 2:1\n")
    result = run_filterkit("apply", model, test)
    assert result.status == 1
    assert result.stderr == f"filterkit: error: {test}:2: label 3 is not one of the training labels\n"
    test.write_bytes(b"2 4:4\n")
    result = run_filterkit("apply", model, test)
    assert result.stderr == f"filterkit: error: {test}:1: index 4 is outside the 3 features (indices 1 to 3)\n"


@pytest.mark.parametrize(
    "line, message",
    [
        (b"x 1:2", "the label 'x' is not a number"),
        (
            b"1 qid:3 1:2",
            "qid (ranking data) is not supported: remove the qid:N fields to read the rows for classification",
        ),
        (b"1 1=2", "expected INDEX:VALUE, found '1=2'"),
        (b"1 1:two", "the value 'two' of index 1 is not a number"),
        (b"1 -1:2", "the index '-1' is not a whole number of at most 18 digits"),
        (
            b"1 3:1 2:1",
            "index 2 after index 3: the indices of a row must ascend strictly (as load_svmlight_file requires)",
        ),
        (
            b"1 2:1 2:1",
            "index 2 after index 2: the indices of a row must ascend strictly (as load_svmlight_file requires)",
        ),
        (b"nan 1:1", "a label is a number, not NaN"),
        (b"1 1:1_0", "the value '1_0' of index 1 is not a number"),
    ],
)
def test_malformed_rows_name_their_line(tmp_path, line, message):
    path = tmp_path / "bad.svm"
    path.write_bytes(b"1 1:1\n\n# comment\n" + line + b"\n2 2:2\n")
    out = tmp_path / "out.svm"
    result = run_filterkit(path, "l2", "-o", out)
    assert (result.status, result.stderr) == (1, f"filterkit: error: {path}:4: {message}\n")
    assert not out.exists()


def test_what_svmlight_cannot_hold_is_refused_before_any_output(tmp_path):
    out = tmp_path / "out.svm"
    result = run_filterkit(REAL / "credit-g.arff", "-o", out)
    assert result.status == 1
    assert result.stderr == (
        "filterkit: error: svmlight output holds numbers only: attribute 'checking_status' is nominal\n"
    )
    assert not out.exists()
    result = run_filterkit(REAL / "iris.arff", "--to", "svm")
    assert result.status == 0
    assert result.stdout.split(b"\n")[1] == b"0 1:5.1 2:3.5 3:1.4 4:0.2"


def test_the_dask_engine_refuses_svmlight(tricky):
    result = run_filterkit(tricky, "--engine", "dask", "l2")
    assert result.status == 2
    assert (
        "--engine dask reads arff, csv and jsonl only (the formats installed that it cuts into partitions)"
        in result.stderr
    )


def test_errors_on_stdin_and_in_damaged_gzip_name_their_place(tmp_path):
    result = run_filterkit("--from", "svmlight", "-", stdin=b"1 1:1\n1 2:x\n")
    assert (result.status, result.stderr) == (
        1,
        "filterkit: error: <stdin>:2: the value 'x' of index 2 is not a number\n",
    )
    damaged = tmp_path / "damaged.svm.gz"
    damaged.write_bytes(gzip.compress(TRICKY * 100, mtime=0)[:-30])
    result = run_filterkit(damaged, "l2")
    assert result.status == 1
    assert result.stderr.startswith(f"filterkit: error: {damaged}:")
    assert "damaged gzip data" in result.stderr


@pytest.mark.parametrize("text", [b"", b"# only a comment\n"], ids=["empty", "comment only"])
def test_a_file_without_rows_is_an_error_as_an_empty_arff_or_csv_file_is(tmp_path, text):
    path = tmp_path / "empty.svm"
    path.write_bytes(text)
    result = run_filterkit(str(path), "bns")
    assert result.status == 1
    assert result.stderr == f"filterkit: error: {path}:1: empty input: no rows, so no labels or features to declare\n"


def test_the_first_bad_line_is_named_whatever_is_wrong_with_the_later_ones(tmp_path):
    # the Python reader named the first line with a syntax error of each 10,000 rows before a
    # NaN label or descending indices earlier in them: here line 4, not line 2
    path = tmp_path / "mixed.svm"
    path.write_bytes(b"1 1:1\nnan 1:1\n1 3:1 2:1\nx 1:1\n")
    for rows in ("1", "1000"):
        result = run_filterkit("--chunk-rows", rows, path, "l2")
        assert (result.status, result.stderr) == (1, f"filterkit: error: {path}:2: a label is a number, not NaN\n")


@pytest.mark.parametrize("separator", ["\x0b", "\x0c"], ids=["vertical-tab", "form-feed"])
def test_a_field_separator_other_than_space_or_tab_is_refused_naming_the_line(run_filterkit, tmp_path, separator):
    """docs/command-line.md: scikit-learn splits fields at any ASCII white space; filterkit at spaces and tabs, and
    says so, naming the line, where a row split otherwise would be read another way."""
    path = tmp_path / "in.svm"
    path.write_text(f"1 1:1\n0{separator}2:1\n")
    result = run_filterkit(path)
    assert result.status == 1 and result.stderr == f"filterkit: error: {path}:2: not an svmlight row\n"
    path.write_text(f"1 1:1{separator}\n0\t2:1\n")  # at a line's end, white space
    assert run_filterkit(path).status == 0
