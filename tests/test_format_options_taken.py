"""Issue 72, item 6: a reading or writing option given where neither the input's format nor the output's takes
it (``--labels-column`` for ARFF or svmlight, ``--text`` for a folder per class, ``--zero-based`` for CSV) is a
usage error naming the option and the formats, not accepted and ignored.  Parquet takes no labels column:
``--labels-column`` there used to read the column as one nominal class."""

from __future__ import annotations

import pytest

from chain_helpers import REAL

IRIS = REAL / "iris.arff"

ROWS = b"a,b,class\n1,2,x\n3,4,y\n"
SVMLIGHT_ROWS = b"1 1:2 2:3\n0 1:1\n"


def written(tmp_path, name: str, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    "option, value, input_name, data, formats",
    [
        ("--labels-column", "class", None, None, "arff"),
        ("--label-separator", ";", None, None, "arff"),
        ("--text", "a", None, None, "arff"),
        ("--nominal", "a", None, None, "arff"),
        ("--numeric", "a", None, None, "arff"),
        ("--zero-based", None, None, None, "arff"),
        ("--single-label", None, None, None, "arff"),
        ("--labels-column", "class", "in.svm", SVMLIGHT_ROWS, "svmlight"),
        ("--text", "a", "in.svm", SVMLIGHT_ROWS, "svmlight"),
        ("--zero-based", None, "in.csv", ROWS, "csv"),
        ("--label-separator", ";", "in.jsonl", b'{"a": 1, "class": "x"}\n', "jsonl"),
    ],
)
def test_an_option_the_formats_do_not_take_is_a_usage_error(
    option, value, input_name, data, formats, tmp_path, run_filterkit
):
    source = IRIS if input_name is None else written(tmp_path, input_name, data)
    given = [option] if value is None else [option, value]
    result = run_filterkit(*given, source, "l2")
    assert (result.status, result.stdout) == (2, b"")
    assert f"Error: {' '.join(given)}: {formats} input written as arff does not take it" in result.stderr


def test_a_folder_per_class_takes_no_reading_option(tmp_path, run_filterkit):
    for label in ("x", "y"):
        (tmp_path / "docs" / label).mkdir(parents=True)
        (tmp_path / "docs" / label / "1.txt").write_text("some words")
    result = run_filterkit("--text", "text", tmp_path / "docs", "words")
    assert result.status == 2
    assert "Error: --text text: folders input written as arff does not take it" in result.stderr


def test_an_option_the_output_format_writes_with_is_taken(tmp_path, run_filterkit):
    output = tmp_path / "out.svm"
    assert run_filterkit("--zero-based", "-o", output, IRIS, "l2").status == 0
    first_row = next(line for line in output.read_bytes().split(b"\n") if not line.startswith(b"#"))
    assert first_row.split(b" ")[1].startswith(b"0:")


def test_info_refuses_an_option_its_input_does_not_take(run_filterkit):
    result = run_filterkit("info", "--labels-column", "class", IRIS)
    assert result.status == 2
    assert "Error: --labels-column class: arff input does not take it" in result.stderr


def test_parquet_refuses_a_labels_column(tmp_path, run_filterkit):
    pyarrow = pytest.importorskip("pyarrow")
    import pyarrow.parquet as parquet

    path = tmp_path / "in.parquet"
    parquet.write_table(pyarrow.table({"a": [1.0, 2.0], "tags": ["x|y", "y"]}), path)
    result = run_filterkit("--labels-column", "tags", path, "l2")
    assert (result.status, result.stdout) == (2, b"")
    assert "Error: --labels-column tags: parquet input written as arff does not take it" in result.stderr
