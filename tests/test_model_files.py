"""Malformed and hostile model files (issue 23): each is one clean error, never a traceback,
a hang or a huge allocation.

``apply`` reads only the arrays the JSON refers to, checks each one's declared size
before decoding or decompressing it, and checks every value it loads: the JSON's types,
each stage's options (by the option's own conversion), and the arrays' kinds, sizes and
finiteness.  A malformed file gives exactly ``FILE: not a filterkit model (why)``.
The arrays are checked in both formats: embedded in the JSON (format 2) and in the
``.npz`` beside a model saved by filterkit 0.2 (format 1, ``tests/data/models``).
"""

from __future__ import annotations

import base64
import io
import json
import shutil
import zipfile

import numpy as np
import pytest

from chain_helpers import REAL, TESTS
from filterkit.model import arrays_path

IRIS = REAL / "iris.arff"

#: The same chain as the ``model`` fixture, saved by filterkit 0.2 (format 1, with an .npz).
OLD_MODEL = TESTS / "data" / "models" / "iris-minmax-select-l2.json"


@pytest.fixture
def model(run_filterkit, tmp_path):
    """A model of 'minmax select --metric ig --top 2 l2' on iris: arrays and integer options."""
    path = tmp_path / "m.json"
    result = run_filterkit("--save-model", path, IRIS, "minmax", "select", "--metric", "ig", "--top", "2", "l2")
    assert result.status == 0, result.stderr
    return path


@pytest.fixture
def old_model(tmp_path):
    """A copy of :data:`OLD_MODEL` and its .npz, to spoil."""
    for source in (OLD_MODEL, arrays_path(OLD_MODEL)):
        shutil.copy(source, tmp_path / source.name)
    return tmp_path / OLD_MODEL.name


def apply(run_filterkit, model):
    return run_filterkit("apply", model, IRIS)


def assert_not_a_model(result, path, reason: str) -> None:
    assert result.status == 1, result.stderr
    assert result.stdout == b""
    assert result.stderr == f"filterkit: error: {path}: not a filterkit model ({reason})\n"


def edit_json(model, change) -> None:
    document = json.loads(model.read_text())
    change(document)
    model.write_text(json.dumps(document))


def embedded(model, position: int, key: str) -> dict:
    """The JSON of an array embedded in a format 2 model."""
    return json.loads(model.read_text())["stages"][position]["state"][key]["array"]


def embed(model, position: int, key: str, array: dict) -> None:
    edit_json(model, lambda document: document["stages"][position]["state"][key].update(array=array))


def base64_of(values: np.ndarray) -> str:
    return base64.b64encode(values.astype("<f8").tobytes()).decode("ascii")


def stored_arrays(model) -> dict[str, np.ndarray]:
    with np.load(arrays_path(model)) as stored:
        return {key: stored[key] for key in stored.files}


def npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, array)
    return buffer.getvalue()


def test_the_fixture_models_apply_alike(run_filterkit, model, old_model):
    new, old = apply(run_filterkit, model), apply(run_filterkit, old_model)
    assert new.status == old.status == 0, new.stderr + old.stderr
    assert new.stdout.split(b"\n", 1)[1] == old.stdout.split(b"\n", 1)[1]


def test_an_embedded_array_larger_than_the_bound_is_refused_before_it_is_decoded(run_filterkit, model):
    embed(model, 0, "minimum", {"dtype": "<f8", "shape": [10_000_000], "base64": "AAAA"})
    allowed = 8 * 1024 * 6  # 1024 values for each of 5 attributes + 1
    assert_not_a_model(
        apply(run_filterkit, model),
        model,
        f"array '0.minimum' would take 80000000 bytes, more than the {allowed} allowed",
    )


def test_an_embedded_array_holding_nan_is_refused(run_filterkit, model):
    embed(model, 0, "factor", {"dtype": "<f8", "shape": [4], "base64": base64_of(np.array([1, np.nan, 1, 1]))})
    assert_not_a_model(apply(run_filterkit, model), model, "array '0.factor' holds a value that is not a finite number")


@pytest.mark.parametrize(
    "base64_text, reason",
    [
        (base64_of(np.ones(3)), "array '0.factor' declares 32 bytes of values but holds 32 base64 characters"),
        ("*" * 44, "array '0.factor' is not base64: Only base64 data is allowed"),
        ("A" * 42 + "==", "array '0.factor' declares 32 bytes of values but holds 31"),
    ],
    ids=["too-short", "not-base64", "padded-short"],
)
def test_embedded_bytes_that_disagree_with_the_shape_are_refused(run_filterkit, model, base64_text, reason):
    embed(model, 0, "factor", {"dtype": "<f8", "shape": [4], "base64": base64_text})
    result = apply(run_filterkit, model)
    assert result.status == 1
    assert result.stderr.startswith(f"filterkit: error: {model}: not a filterkit model ({reason}")
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize(
    "array",
    [
        {"dtype": "|O", "shape": [4], "base64": ""},
        {"dtype": "<U1", "shape": [4], "base64": ""},
        {"dtype": ">f8", "shape": [4], "base64": ""},
        {"dtype": "<f8", "shape": [-4], "base64": ""},
        {"dtype": "<f8", "shape": [True], "base64": ""},
        {"dtype": "<f8", "shape": 4, "base64": ""},
        {"dtype": "<f8", "shape": [4]},
        {"dtype": "<f8", "shape": [4], "base64": "", "pickle": True},
        "0.factor",
    ],
    ids=[
        "object",
        "text",
        "big-endian",
        "negative-shape",
        "shape-bool",
        "shape-number",
        "no-base64",
        "extra",
        "npz-name",
    ],
)
def test_an_embedded_array_that_is_not_plain_numbers_is_refused(run_filterkit, model, array):
    embed(model, 0, "factor", array)
    reference = json.dumps({"array": array})[:80]
    assert_not_a_model(
        apply(run_filterkit, model), model, f"stage 1: state 'factor' refers to an array badly: {reference}"
    )


def test_an_unreferenced_npz_array_is_never_read(run_filterkit, old_model):
    """An extra member declaring 4 GiB of values (and holding none) is ignored."""
    huge_header = io.BytesIO()
    np.lib.format.write_array_header_1_0(huge_header, {"descr": "<f8", "fortran_order": False, "shape": (1 << 29,)})
    with zipfile.ZipFile(arrays_path(old_model), "a") as archive:
        archive.writestr("extra.npy", huge_header.getvalue(), compress_type=zipfile.ZIP_DEFLATED)
    result = apply(run_filterkit, old_model)
    assert result.status == 0, result.stderr


def test_an_npz_array_that_would_inflate_beyond_the_bound_is_refused_unread(run_filterkit, old_model):
    arrays = stored_arrays(old_model)
    arrays["0.minimum"] = np.zeros(10_000_000)  # 80 MB of zeros, deflated to ~80 kB
    with zipfile.ZipFile(arrays_path(old_model), "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for key, array in arrays.items():
            archive.writestr(f"{key}.npy", npy_bytes(array))
    with zipfile.ZipFile(arrays_path(old_model)) as archive:
        deflated = archive.getinfo("0.minimum.npy").compress_size
    result = apply(run_filterkit, old_model)
    allowed = max(deflated, 8 * 1024 * 6)  # its bytes in the file, or 1024 values for each of 5 attributes + 1
    assert_not_a_model(
        result, arrays_path(old_model), f"array '0.minimum' would take 80000128 bytes, more than the {allowed} allowed"
    )


def test_an_npz_array_holding_nan_is_refused(run_filterkit, old_model):
    arrays = stored_arrays(old_model)
    arrays["0.factor"][1] = np.nan
    np.savez(arrays_path(old_model), **arrays)
    assert_not_a_model(
        apply(run_filterkit, old_model),
        arrays_path(old_model),
        "array '0.factor' holds a value that is not a finite number",
    )


def test_an_npz_array_of_text_is_refused(run_filterkit, old_model):
    arrays = stored_arrays(old_model)
    arrays["0.factor"] = np.array(["a", "b", "c", "d"])
    np.savez(arrays_path(old_model), **arrays)
    assert_not_a_model(
        apply(run_filterkit, old_model), arrays_path(old_model), "array '0.factor' holds <U1, not numbers"
    )


def test_an_npz_array_that_is_missing_is_named(run_filterkit, old_model):
    arrays = stored_arrays(old_model)
    del arrays["0.factor"]
    np.savez(arrays_path(old_model), **arrays)
    assert_not_a_model(apply(run_filterkit, old_model), arrays_path(old_model), "no array '0.factor'")


@pytest.mark.parametrize(
    "content", [b"", b"PK\x03\x04 truncated", b"not a zip at all\n"], ids=["empty", "truncated", "not-zip"]
)
def test_an_unreadable_npz_is_not_a_model(run_filterkit, old_model, content):
    arrays_path(old_model).write_bytes(content)
    result = apply(run_filterkit, old_model)
    assert result.status == 1
    assert result.stderr.startswith(
        f"filterkit: error: {arrays_path(old_model)}: not a filterkit model (not a readable .npz: "
    )
    assert result.stderr.count("\n") == 1


def test_a_truncated_npz_is_not_a_model(run_filterkit, old_model):
    data = arrays_path(old_model).read_bytes()
    arrays_path(old_model).write_bytes(data[: len(data) // 2])
    result = apply(run_filterkit, old_model)
    assert result.status == 1
    assert result.stderr.startswith(f"filterkit: error: {arrays_path(old_model)}: not a filterkit model (")
    assert "Traceback" not in result.stderr and result.stderr.count("\n") == 1


@pytest.mark.parametrize(
    "text, reason",
    [
        ("[" * 100_000 + "]" * 100_000, "its JSON is nested too deeply"),
        ('{"format_version": 1, "x": "\\ud800"}'.encode() + b"\xff", "not UTF-8 text: invalid start byte at byte 37"),
        ('{"format_version": true, "stages": []}', "format_version is true, not an integer"),
        ('{"format_version": 1.0, "stages": []}', "format_version is 1.0, not an integer"),
        ("[1]", "no format_version"),
    ],
    ids=["deeply-nested", "not-utf8", "version-true", "version-float", "a-list"],
)
def test_a_json_that_is_not_a_model(run_filterkit, model, text, reason):
    (model.write_bytes if isinstance(text, bytes) else model.write_text)(text)
    assert_not_a_model(apply(run_filterkit, model), model, reason)


@pytest.mark.slow
@pytest.mark.parametrize(
    "change, reason",
    [
        (
            lambda d: d["stages"][1]["params"].update(top=float("inf")),
            "stage 2 'select': option --top: inf is not an integer",
        ),
        (lambda d: d["stages"][1]["params"].update(top=2.5), "stage 2 'select': option --top: 2.5 is not an integer"),
        (lambda d: d["stages"][1]["params"].update(top=True), "stage 2 'select': option --top: True is not an integer"),
        (lambda d: d["stages"][1]["params"].update(metric=7), "stage 2 'select': option --metric: 7 is not a string"),
        (
            lambda d: d["stages"][1]["params"].update(presence="maybe"),
            "stage 2 'select': option --presence: 'maybe' is not a boolean",
        ),
        (
            lambda d: d["stages"][1]["params"].update(fraction=float("nan")),
            "stage 2 'select': option --fraction: nan is not a finite number",
        ),
        (lambda d: d["stages"].append(5), "stage 4 is a number, not an object"),
        (lambda d: d["stages"][0].update(state=[]), "stage 1: 'state' is a list, not an object"),
        (
            lambda d: d["stages"][0]["state"].update(factor={"array": 3}),
            "stage 1: state 'factor' refers to an array badly: {\"array\": 3}",
        ),
        (
            lambda d: d["input_schema"]["attributes"][0].update(name=1),
            "input attribute 1: 'name' is a number, not a string",
        ),
        (
            lambda d: d["input_schema"]["attributes"][4].update(labels=[1, 2]),
            "input attribute 5: 'labels' is not a list of strings",
        ),
        (
            lambda d: d["input_schema"]["attributes"][0].update(kind="complex"),
            "input attribute 1: unknown kind 'complex'",
        ),
        (lambda d: d.update(positive=["a"]), "the model: 'positive' is a list, not a string or null"),
    ],
    ids=[
        "top-infinity",
        "top-fraction",
        "top-true",
        "metric-number",
        "presence-text",
        "fraction-nan",
        "stage-number",
        "state-list",
        "array-reference-number",
        "attribute-name-number",
        "labels-numbers",
        "unknown-kind",
        "positive-list",
    ],
)
def test_wrong_types_anywhere_are_not_a_model(run_filterkit, model, change, reason):
    edit_json(model, change)
    assert_not_a_model(apply(run_filterkit, model), model, reason)


@pytest.mark.parametrize(
    "change, reason",
    [
        (lambda d: d.update(extra=1), 'the model has an unknown key "extra"'),
        (lambda d: d["stages"][1].update(note="x"), 'stage 2 has an unknown key "note"'),
        (
            lambda d: d["stages"][0]["state"].update(extra=[1.0]),
            "stage 1 'minmax': its saved state has an unknown entry 'extra'",
        ),
        (
            lambda d: d["stages"][1]["state"]["fitted_options"].update(tops=3),
            "stage 2 'select': the model's saved state is invalid: 'fitted_options' records 'tops', which is no "
            "option of the stage",
        ),
        (lambda d: d.update(filterkit_version=9), "'filterkit_version' is 9, not a version such as "),
        (lambda d: d.update(filterkit_version="v9.0.0"), "'filterkit_version' is \"v9.0.0\", not a version such as "),
        (lambda d: d.update(filterkit_version=["9"]), "'filterkit_version' is [\"9\"], not a version such as "),
    ],
    ids=["top-level", "stage", "stage-state", "fitted-options", "version-number", "version-text", "version-list"],
)
def test_what_nothing_would_read_is_not_a_model(run_filterkit, model, change, reason):
    # each was ignored: a typo or an edit a user believes in, without effect
    edit_json(model, change)
    result = apply(run_filterkit, model)
    assert result.status == 1 and result.stdout == b""
    assert result.stderr.startswith(f"filterkit: error: {model}: not a filterkit model ({reason}")


# Issue 37, item 12: every field of a model that becomes a size, an index or an int.


@pytest.mark.parametrize("where", ["format_version", "top"])
def test_a_number_beyond_pythons_digit_limit_is_not_a_model(run_filterkit, model, where):
    """json.loads raises ValueError (not JSONDecodeError) on a whole number of more than 4,300 digits."""
    text = model.read_text()
    old = '"format_version": 2' if where == "format_version" else '"top": 2'
    model.write_text(text.replace(old, old[:-1] + "1" * 5000, 1))
    assert_not_a_model(apply(run_filterkit, model), model, "its JSON holds a whole number of too many digits")


@pytest.mark.parametrize(
    "shape, reason",
    [
        ([10**30, 0], f"array '0.minimum' has a length of {10**30}, more than the 6144 values allowed"),
        ([2**63, 0], f"array '0.minimum' has a length of {2**63}, more than the 6144 values allowed"),
        ([1] * 33, "array '0.minimum' has 33 dimensions, more than 32"),
    ],
    ids=["10**30-by-0", "2**63-by-0", "33-dimensions"],
)
def test_an_embedded_shape_numpy_cannot_make_is_not_a_model(run_filterkit, model, shape, reason):
    """An empty array of a huge length passed the size bound (its size is 0) and numpy's reshape raised."""
    embed(model, 0, "minimum", {"dtype": "<f8", "shape": shape, "base64": ""})
    assert_not_a_model(apply(run_filterkit, model), model, reason)


def test_an_npz_shape_numpy_cannot_make_is_named(run_filterkit, old_model):
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False, "shape": (10**30, 0)})
    arrays = stored_arrays(old_model)
    with zipfile.ZipFile(arrays_path(old_model), "w") as archive:
        for key, array in arrays.items():
            archive.writestr(f"{key}.npy", header.getvalue() if key == "0.minimum" else npy_bytes(array))
    assert_not_a_model(
        apply(run_filterkit, old_model),
        arrays_path(old_model),
        "array '0.minimum' has a length of 1000000000000000000000000000000, more than the 6144 values allowed",
    )


@pytest.mark.parametrize(
    "change, reason",
    [
        (lambda d: d.update(positive="Iris-nosuch"), "the positive label 'Iris-nosuch' is not a label of the class"),
        (
            lambda d: d.update({"class": "sepallength", "positive": "Iris-setosa"}),
            "the positive label 'Iris-setosa' is not a label of the class",
        ),
        (
            lambda d: d.update({"class": None, "positive": "Iris-setosa"}),
            "the positive label 'Iris-setosa' is not a label of the class",
        ),
        (lambda d: d.update({"class": "nosuch"}), "the class 'nosuch' is not an input attribute"),
    ],
    ids=["unknown-label", "numeric-class", "no-class", "unknown-class"],
)
def test_a_class_or_positive_label_the_input_lacks_is_not_a_model(run_filterkit, tmp_path, change, reason):
    """Such a model was applied, and its positive label (or class) recorded in the output's provenance."""
    model = tmp_path / "m.json"
    assert run_filterkit("--save-model", model, "--positive", "Iris-setosa", IRIS, "minmax").status == 0
    edit_json(model, change)
    assert_not_a_model(apply(run_filterkit, model), model, reason)


def test_a_positive_label_the_class_lacks_is_refused_when_fitting(run_filterkit, tmp_path):
    """It was recorded in the provenance and the model when no stage of the chain used it."""
    model, out = tmp_path / "m.json", tmp_path / "out.arff"
    result = run_filterkit("--save-model", model, "-o", out, "--positive", "Iris-nosuch", IRIS, "minmax")
    assert (result.status, result.stderr) == (
        1,
        f"filterkit: error: {IRIS}: --positive 'Iris-nosuch' is not a label of the class 'class' "
        "{Iris-setosa,Iris-versicolor,Iris-virginica}\n",
    )
    assert not model.exists() and not out.exists()
