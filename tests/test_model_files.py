"""Malformed and hostile model files (issue 23): each is one clean error, never a traceback,
a hang or a huge allocation.

``apply`` reads only the arrays the JSON refers to, checks each one's declared size
before decompressing it, and checks every value it loads: the JSON's types, each
stage's options (by the option's own conversion), and the arrays' kinds, sizes and
finiteness.  A malformed file gives exactly ``FILE: not a filterkit model (why)``.
"""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest

from chain_helpers import REAL
from filterkit.model import arrays_path

IRIS = REAL / "iris.arff"


@pytest.fixture
def model(run_filterkit, tmp_path):
    """A model of 'minmax select --metric ig --top 2 l2' on iris: arrays and integer options."""
    path = tmp_path / "m.json"
    result = run_filterkit("--save-model", path, IRIS, "minmax", "select", "--metric", "ig", "--top", "2", "l2")
    assert result.status == 0, result.stderr
    return path


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


def stored_arrays(model) -> dict[str, np.ndarray]:
    with np.load(arrays_path(model)) as stored:
        return {key: stored[key] for key in stored.files}


def npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, array)
    return buffer.getvalue()


def test_the_fixture_model_applies(run_filterkit, model):
    assert apply(run_filterkit, model).status == 0


def test_an_unreferenced_array_is_never_read(run_filterkit, model):
    """An extra member declaring 4 GiB of values (and holding none) is ignored."""
    huge_header = io.BytesIO()
    np.lib.format.write_array_header_1_0(huge_header, {"descr": "<f8", "fortran_order": False, "shape": (1 << 29,)})
    with zipfile.ZipFile(arrays_path(model), "a") as archive:
        archive.writestr("extra.npy", huge_header.getvalue(), compress_type=zipfile.ZIP_DEFLATED)
    result = apply(run_filterkit, model)
    assert result.status == 0, result.stderr


def test_a_referenced_array_that_would_inflate_beyond_the_bound_is_refused_unread(run_filterkit, model):
    arrays = stored_arrays(model)
    arrays["0.minimum"] = np.zeros(10_000_000)  # 80 MB of zeros, deflated to ~80 kB
    with zipfile.ZipFile(arrays_path(model), "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for key, array in arrays.items():
            archive.writestr(f"{key}.npy", npy_bytes(array))
    with zipfile.ZipFile(arrays_path(model)) as archive:
        deflated = archive.getinfo("0.minimum.npy").compress_size
    result = apply(run_filterkit, model)
    allowed = max(deflated, 8 * 1024 * 6)  # its bytes in the file, or 1024 values for each of 5 attributes + 1
    assert_not_a_model(
        result, arrays_path(model), f"array '0.minimum' would take 80000128 bytes, more than the {allowed} allowed"
    )


def test_an_array_holding_nan_is_refused(run_filterkit, model):
    arrays = stored_arrays(model)
    arrays["0.factor"][1] = np.nan
    np.savez(arrays_path(model), **arrays)
    assert_not_a_model(
        apply(run_filterkit, model), arrays_path(model), "array '0.factor' holds a value that is not a finite number"
    )


def test_an_array_of_text_is_refused(run_filterkit, model):
    arrays = stored_arrays(model)
    arrays["0.factor"] = np.array(["a", "b", "c", "d"])
    np.savez(arrays_path(model), **arrays)
    assert_not_a_model(apply(run_filterkit, model), arrays_path(model), "array '0.factor' holds <U1, not numbers")


def test_a_referenced_array_that_is_missing_is_named(run_filterkit, model):
    arrays = stored_arrays(model)
    del arrays["0.factor"]
    np.savez(arrays_path(model), **arrays)
    assert_not_a_model(apply(run_filterkit, model), arrays_path(model), "no array '0.factor'")


@pytest.mark.parametrize(
    "content", [b"", b"PK\x03\x04 truncated", b"not a zip at all\n"], ids=["empty", "truncated", "not-zip"]
)
def test_an_unreadable_npz_is_not_a_model(run_filterkit, model, content):
    arrays_path(model).write_bytes(content)
    result = apply(run_filterkit, model)
    assert result.status == 1
    assert result.stderr.startswith(
        f"filterkit: error: {arrays_path(model)}: not a filterkit model (not a readable .npz: "
    )
    assert result.stderr.count("\n") == 1


def test_a_truncated_npz_is_not_a_model(run_filterkit, model):
    data = arrays_path(model).read_bytes()
    arrays_path(model).write_bytes(data[: len(data) // 2])
    result = apply(run_filterkit, model)
    assert result.status == 1
    assert result.stderr.startswith(f"filterkit: error: {arrays_path(model)}: not a filterkit model (")
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
        (lambda d: d.update(positive=["a"]), "'positive' is a list, not a string or null"),
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
