"""svmlight's layout across files and labels (issue 37, items 2 and 3).

The index base (zero- or one-based) belongs to the training data: a model records it and
``apply`` reads test rows with it, as scikit-learn's ``load_svmlight_files([train, test])``
reads both files with one base.  A label is a number written one way: two ways of writing one
number (``1``, ``1.0``, ``01``) are an error naming both, and whatever filterkit writes reads back
with each class its own.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_svmlight_file, load_svmlight_files

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


# ------------------------------------------------------------------ the index base (item 2)


def _dense(arff: bytes) -> np.ndarray:
    return read_arff(io.BytesIO(arff))[1].dense_values()


def _trained(tmp_path, train: bytes, *options) -> Path:
    """A model of the identity chain fitted on ``train`` (svmlight)."""
    (tmp_path / "train.svm").write_bytes(train)
    model = tmp_path / "m.json"
    _ok("--save-model", model, "-o", tmp_path / "train.arff", *options, tmp_path / "train.svm")
    return model


@pytest.mark.parametrize(
    "train, test",
    [
        (b"1 0:1 2:2\n2 1:3 4:1\n", b"1 1:5 2:6\n2 4:7\n1 3:1\n"),  # zero-based; the test file has no index 0
        (b"1 0:1 2:2\n2 1:3 4:1\n", b"1 0:5 2:6\n"),
        (b"1 1:1 2:2\n2 1:3 4:1\n", b"1 1:5 2:6\n2 4:7\n"),
    ],
    ids=["zero-based, test without 0", "zero-based", "one-based"],
)
def test_test_rows_are_read_from_the_training_index_base_as_load_svmlight_files_reads_both(tmp_path, train, test):
    """A zero-based training file and a test file without index 0: the test rows were read
    one-based, every feature one column to the left, silently."""
    model = _trained(tmp_path, train)
    (tmp_path / "test.svm").write_bytes(test)
    x_train, y_train, x_test, y_test = load_svmlight_files([str(tmp_path / "train.svm"), str(tmp_path / "test.svm")])
    trained = _dense((tmp_path / "train.arff").read_bytes())
    np.testing.assert_array_equal(trained[:, :-1], x_train.toarray())
    applied = _ok("apply", model, tmp_path / "test.svm")
    np.testing.assert_array_equal(_dense(applied)[:, :-1], x_test.toarray())
    labels = np.array([float(label) for label in read_arff(io.BytesIO(applied))[0].attributes[-1].labels])
    np.testing.assert_array_equal(labels[_dense(applied)[:, -1].astype(int)], y_test)
    assert _ok("apply", "--chunk-rows", "1", model, tmp_path / "test.svm") == applied


def test_index_0_under_a_one_based_model_is_an_error_naming_its_line(tmp_path):
    model = _trained(tmp_path, b"1 1:1 2:2\n2 3:1\n")
    test, out = tmp_path / "test.svm", tmp_path / "out.svm"
    test.write_bytes(b"1 1:5\n# a comment\n2 0:1 2:1\n")
    result = run_filterkit("apply", model, test, "-o", out)
    assert (result.status, result.stderr) == (
        1,
        f"filterkit: error: {test}:3: index 0 in a file read as one-based (as the model's training data, "
        "or --one-based)\n",
    )
    assert not out.exists()


def test_a_base_option_that_contradicts_the_model_is_an_error_and_one_that_agrees_is_not(tmp_path):
    model = _trained(tmp_path, b"1 0:1 2:2\n2 1:3\n")
    test = tmp_path / "test.svm"
    test.write_bytes(b"1 1:5\n")
    result = run_filterkit("apply", "--one-based", model, test)
    assert (result.status, result.stderr) == (
        1,
        "filterkit: error: --one-based contradicts the model: its training data was read with --zero-based\n",
    )
    assert _rows(_ok("apply", "--zero-based", model, test, "--to", "svmlight")) == [b"1 1:5"]
    assert _rows(_ok("apply", model, test, "--to", "svmlight")) == [b"1 2:5"]  # written one-based, as asked


def test_a_model_records_the_format_and_the_base_its_training_data_was_read_with(tmp_path):
    zero = json.loads(_trained(tmp_path, b"1 0:1\n2 1:1\n").read_text())
    assert zero["input"] == {"format": "svmlight", "options": {"zero_based": True}}
    one = json.loads(_trained(tmp_path, b"1 1:1\n2 2:1\n").read_text())
    assert one["input"] == {"format": "svmlight", "options": {"zero_based": False}}
    (tmp_path / "in.arff").write_bytes(_arff_with_class(("a", "b")))
    _ok("--save-model", tmp_path / "a.json", "-o", tmp_path / "a.arff", tmp_path / "in.arff")
    assert json.loads((tmp_path / "a.json").read_text())["input"] == {"format": "arff", "options": {}}


def test_a_model_of_0_4_that_records_the_base_alone_still_reads_test_rows_from_it(tmp_path):
    model = _trained(tmp_path, b"1 0:1 2:2\n2 1:3\n")
    document = json.loads(model.read_text())
    del document["input"]
    document["svmlight_first_index"] = 0
    model.write_text(json.dumps(document, indent=1) + "\n")
    test = tmp_path / "test.svm"
    test.write_bytes(b"1 1:5\n")
    assert _rows(_ok("apply", model, test, "--to", "svmlight")) == [b"1 2:5"]


def test_a_model_saved_before_the_base_was_recorded_reads_test_rows_as_before(tmp_path):
    """Models of 0.2 to 0.4 do not say: a test file's own indices decide, as they did."""
    model = _trained(tmp_path, b"1 0:1 2:2\n2 1:3 3:1\n")
    document = json.loads(model.read_text())
    del document["input"]
    model.write_text(json.dumps(document, indent=1) + "\n")
    test = tmp_path / "test.svm"
    test.write_bytes(b"1 1:5 2:6\n2 3:7\n")
    assert _rows(_ok("apply", model, test, "--to", "svmlight")) == [b"1 1:5 2:6", b"2 3:7"]
    test.write_bytes(b"1 0:5 2:6\n")
    assert _rows(_ok("apply", model, test, "--to", "svmlight")) == [b"1 1:5 3:6"]


@pytest.mark.parametrize("value", [2, -1, True, 1.0, "0"])
def test_a_base_other_than_0_or_1_is_not_a_model(tmp_path, value):
    model = _trained(tmp_path, b"1 0:1\n2 1:1\n")
    document = json.loads(model.read_text())
    del document["input"]
    document["svmlight_first_index"] = value
    model.write_text(json.dumps(document))
    (tmp_path / "test.svm").write_bytes(b"1 1:1\n")
    result = run_filterkit("apply", model, tmp_path / "test.svm")
    assert (result.status, result.stdout) == (1, b"")
    assert result.stderr == (
        f"filterkit: error: {model}: not a filterkit model ('svmlight_first_index' is {json.dumps(value)}, "
        "not 0, 1 or null)\n"
    )


def _arff_model(tmp_path, labels: str) -> Path:
    """A model fitted on ARFF rows of one feature and a class declared ``{labels}``."""
    rows = "".join(f"{position},{label}\n" for position, label in enumerate(labels.split(","), 1) if label)
    data, model = tmp_path / "train.arff", tmp_path / "m.json"
    data.write_text(f"@relation r\n@attribute att_1 numeric\n@attribute class {{{labels}}}\n@data\n{rows or '1,?'}\n")
    _ok("--save-model", model, "-o", tmp_path / "train.out.arff", data)
    return model


def test_test_labels_match_a_model_whose_labels_are_not_in_increasing_order(tmp_path):
    """An ARFF-trained model's class {2,1}: label 1 was 'not one of the training labels'."""
    test = tmp_path / "test.svm"
    test.write_bytes(b"1 1:1\n2 1:2\n")
    assert _dense(_ok("apply", _arff_model(tmp_path, "2,1"), test)).tolist() == [[1, 1], [2, 0]]


@pytest.mark.parametrize(
    "labels, message",
    [
        ("1,1.0", "the model's class labels {1,1.0} hold one number written two ways"),
        ("", "the model was not trained on svmlight data"),
    ],
    ids=["one-number-two-ways", "no-labels"],
)
def test_a_model_whose_labels_svmlight_cannot_tell_apart_is_refused(tmp_path, labels, message):
    """A class {} gave an IndexError; {1,1.0} read every 1 as the first of them."""
    test = tmp_path / "test.svm"
    test.write_bytes(b"1 1:1\n")
    result = run_filterkit("apply", _arff_model(tmp_path, labels), test)
    assert (result.status, result.stdout) == (1, b"")
    assert result.stderr.startswith(f"filterkit: error: {test}: {message}")  # the file it cannot read
