"""svmlight's layout across files and labels (issue 37, items 2 and 3).

The index base (zero- or one-based) belongs to the training data: a model records it and
``apply`` reads test rows with it, as scikit-learn's ``load_svmlight_files([train, test])``
reads both files with one base.  A label is a number written one way: two ways of writing one
number (``1``, ``1.0``, ``01``) are an error naming both, and whatever filterkit writes reads back
with each class its own.
"""

from __future__ import annotations

import io

import numpy as np
import pytest
from sklearn.datasets import load_svmlight_file

from filterkit.arff import read_arff
from filterkit.testing import run_filterkit


def _ok(*args, stdin: bytes | None = None) -> bytes:
    result = run_filterkit(*args) if stdin is None else run_filterkit(*args, stdin=stdin)
    assert result.status == 0, result.stderr
    return result.stdout


def _rows(data: bytes) -> list[bytes]:
    """svmlight lines without the comment lines (filterkit's provenance)."""
    return [line for line in data.splitlines() if not line.startswith(b"#")]


# ------------------------------------------------------------------ labels (item 3)


@pytest.mark.parametrize(
    "first, second",
    [(b"1", b"1.0"), (b"1", b"01"), (b"+1", b"1"), (b"-0", b"0"), (b"inf", b"1e400"), (b"0.5", b"5e-1")],
)
def test_one_number_written_two_ways_is_an_error_naming_both(tmp_path, first, second):
    """They were one class, silently: as numbers they are equal, as labels they may be two classes."""
    path, out = tmp_path / "two.svm", tmp_path / "out.arff"
    path.write_bytes(b"2 1:1\n" + first + b" 1:1\n# a comment\n" + first + b" 2:1\n" + second + b" 2:2\n")
    result = run_filterkit(path, "-o", out)
    shown_first, shown_second = first.decode(), second.decode()
    assert (result.status, result.stderr) == (
        1,
        f"filterkit: error: {path}:5: labels '{shown_first}' (line 2) and '{shown_second}' are one number "
        "written two ways: write each class's label one way\n",
    )
    assert not out.exists()


def test_test_rows_that_write_a_label_two_ways_are_an_error_too(tmp_path):
    train, test, model = tmp_path / "train.svm", tmp_path / "test.svm", tmp_path / "m.json"
    train.write_bytes(b"1 1:1\n2 2:1\n")
    _ok("--save-model", model, "-o", tmp_path / "train.out.arff", train, "l2")
    test.write_bytes(b"+1 1:1\n1 2:1\n")
    result = run_filterkit("apply", model, test)
    assert (result.status, result.stdout) == (1, b"")
    assert result.stderr.startswith(f"filterkit: error: {test}:2: labels '+1' (line 1) and '1' are one number")


def _arff_with_class(labels: tuple[str, ...]) -> bytes:
    """An ARFF file of one row per label of a nominal class."""
    declared = ",".join(f"'{label}'" for label in labels)
    rows = "".join(f"{position + 1},'{label}'\n" for position, label in enumerate(labels))
    return f"@relation r\n@attribute x numeric\n@attribute class {{{declared}}}\n@data\n{rows}".encode()


@pytest.mark.parametrize(
    "labels, written",
    [
        (("1", "1.0", "01"), [b"0", b"1", b"2"]),  # one number: their positions, as Weka's LibSVMSaver
        (("nan", "1"), [b"0", b"1"]),  # NaN: the reader refuses it as a label
        (("-0", "0"), [b"0", b"1"]),
        (("Infinity", "1e400"), [b"0", b"1"]),
        (("inf", "-Infinity", "1"), [b"inf", b"-Infinity", b"1"]),
        (("+1", "-1"), [b"+1", b"-1"]),
        (("01", "2.50"), [b"01", b"2.50"]),
        (("a", "1"), [b"0", b"1"]),
    ],
    ids=["one-number-three-ways", "nan", "minus-zero", "two-infinities", "infinities", "signs", "long-forms", "text"],
)
def test_each_nominal_class_written_reads_back_as_a_class_of_its_own(tmp_path, labels, written):
    """``1``, ``1.0`` and ``01`` were written as they are and read back as one class; ``nan`` was
    written and then refused by filterkit's own reader."""
    data, out = tmp_path / "in.arff", tmp_path / "out.svm"
    data.write_bytes(_arff_with_class(labels))
    _ok(data, "-o", out)
    assert [line.split()[0] for line in _rows(out.read_bytes())] == written
    schema, chunk = read_arff(io.BytesIO(_ok(out)))
    classes = chunk.dense_values()[:, -1]
    assert len(schema.attributes[-1].labels) == len(labels)
    assert len(set(classes.tolist())) == len(labels)  # one row per class, each read back as its own
    assert len(set(load_svmlight_file(str(out))[1].tolist())) == len(labels)


def test_a_numeric_class_reads_back_as_written_minus_zero_as_zero(tmp_path):
    """A numeric class's -0 was written ``-0`` beside ``0``: one number written two ways."""
    data, out = tmp_path / "in.arff", tmp_path / "out.svm"
    values = ["-0", "0", "1e300", "-Infinity", "Infinity", "2.5"]
    rows = "".join(f"1,{value}\n" for value in values)
    data.write_bytes(f"@relation r\n@attribute x numeric\n@attribute y numeric\n@data\n{rows}".encode())
    _ok(data, "-o", out, "--digits", "1")
    written = [b"0", b"0", b"1e+300", b"-Infinity", b"Infinity", b"2"]  # 2.5 to one digit: 2, half to even
    assert [line.split()[0] for line in _rows(out.read_bytes())] == written
    schema, chunk = read_arff(io.BytesIO(_ok(out)))
    assert schema.attributes[-1].labels == ("-Infinity", "0", "2", "1e+300", "Infinity")
    np.testing.assert_array_equal(chunk.dense_values()[:, -1], [1, 1, 3, 0, 4, 2])
