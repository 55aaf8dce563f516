"""No traceback ever reaches a user (issue 23).

Every bad input, option, model file and closed standard stream gives exit status
1 and exactly one ``filterkit: error:`` line (or click's usage error, exit 2) —
for the chain, ``apply``, ``info`` and ``evaluate``, in this process
(:func:`filterkit.cli.run`) and through the console script.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from chain_helpers import FILTERKIT, REAL, TESTS

IRIS = REAL / "iris.arff"
MALFORMED = sorted(p for p in (TESTS / "data" / "malformed").iterdir() if p.name != "index.tsv")


def assert_one_error_line(result) -> None:
    """Exit 1 with one ``filterkit: error:`` line and nothing else on stderr."""
    assert "Traceback" not in result.stderr, result.stderr
    assert result.status == 1, result.stderr
    assert re.fullmatch(r"filterkit: error: [^\n]+\n", result.stderr), result.stderr


def assert_usage_error(result) -> None:
    """Exit 2 with click's usage message (``Error: …``), no traceback."""
    assert "Traceback" not in result.stderr, result.stderr
    assert result.status == 2, result.stderr
    assert re.search(r"^Error: ", result.stderr, re.MULTILINE), result.stderr


@pytest.fixture(scope="module")
def iris_model(tmp_path_factory) -> Path:
    """A model of 'minmax l2' fitted on iris (it has arrays)."""
    from filterkit import cli

    path = tmp_path_factory.mktemp("model") / "m.json"
    assert cli.run(["-o", str(path.with_name("out.arff")), "--save-model", str(path), str(IRIS), "minmax", "l2"]) == 0
    return path


# ------------------------------------------------------------ malformed ARFF


@pytest.mark.slow
@pytest.mark.parametrize("path", MALFORMED, ids=[p.name for p in MALFORMED])
@pytest.mark.parametrize("command", ["chain", "fitted-chain", "apply", "info", "evaluate"])
def test_every_malformed_file_is_one_error_line(run_filterkit, monkeypatch, iris_model, path, command):
    # The bomb meets a 1 MiB line bound, not 64 MiB of blanks five times over: the default bound
    # and its message are test_malformed.py's (index.tsv).
    monkeypatch.setenv("FILTERKIT_MAX_LINE_BYTES", str(1 << 20))
    argv = {
        "chain": [path, "l2"],
        "fitted-chain": [path, "minmax", "l2"],
        "apply": ["apply", iris_model, path],
        "info": ["info", path],
        "evaluate": ["evaluate", "--each-class", "--folds", "2", path, "l2"],
    }[command]
    assert_one_error_line(run_filterkit(*argv))


# ------------------------------------------------------------ bad options


@pytest.mark.parametrize(
    "argv",
    [
        ["-c", "²", IRIS, "l2"],
        ["-c", "١", IRIS, "l2"],
        ["info", "-c", "²", IRIS],
        ["evaluate", "-c", "²", "--positive", "Iris-setosa", IRIS, "l2"],
        ["-o", "", IRIS, "l2"],
    ],
    ids=[
        "class-superscript-digit",
        "class-arabic-digit",
        "info-class",
        "evaluate-class",
        "empty-output-name",
    ],
)
def test_a_bad_option_value_is_one_error_line(run_filterkit, argv):
    assert_one_error_line(run_filterkit(*argv))


@pytest.mark.parametrize(
    "argv",
    [
        [IRIS, "select", "--metric", "ig", "--top", "inf"],
        [IRIS, "select", "--metric", "ig", "--fraction", "nan"],
        ["evaluate", "--positive", "Iris-setosa", "--seed", "-1", IRIS, "l2"],
        ["evaluate", "--positive", "Iris-setosa", "--seed", str(2**32), IRIS, "l2"],
        [IRIS, "fold", "--of", str(2**63)],
        [IRIS, "fold", "--seed", str(2**63)],
        [IRIS, "fold", "--seed", str(10**20), "--of", str(10**20)],
        ["evaluate", "--positive", "Iris-setosa", "--train-fraction", "nan", IRIS, "l2"],
        ["evaluate", "--positive", "Iris-setosa", "--train-fraction", "inf", IRIS, "l2"],
    ],
    ids=[
        "top-infinity",
        "fraction-nan",
        "seed-negative",
        "seed-too-large",
        "folds-beyond-long",
        "fold-seed-beyond-long",
        "both-beyond-long",
        "train-fraction-nan",
        "train-fraction-inf",
    ],
)
def test_a_bad_option_is_a_usage_error(run_filterkit, argv):
    result = run_filterkit(*argv)
    assert "failed during" not in result.stderr, result.stderr  # an internal error, not a refusal
    if result.status == 1:  # refused by the stage's own option check rather than click's
        assert_one_error_line(result)
    else:
        assert_usage_error(result)


# ------------------------------------------------------------ model files


#: A model saved by filterkit 0.2: its JSON, and its arrays in the .npz beside it.
TWO_FILE_MODEL = REAL.parent / "models" / "iris-minmax-select-l2.json"


def _copy_model(model: Path, folder: Path) -> Path:
    """``model`` copied into ``folder``, with its 0.2 ``.npz`` when it has one."""
    for source in (model, model.with_suffix(".npz")):
        if source.exists():
            (folder / source.name).write_bytes(source.read_bytes())
    return folder / model.name


@pytest.mark.parametrize(
    "json_bytes, npz_bytes",
    [
        (b"[" * 100_000 + b"]" * 100_000, None),
        (b'{"format_version": 1}\xff', None),
        (b"", None),
        (b'{"format_version": true}', None),
        (
            b'{"format_version": 1, "stages": [{"name": "select", "params": {"top": Infinity}, "state": {}}], '
            b'"input_schema": {"relation": "r", "attributes": []}}',
            None,
        ),
        (b'{"format_version": ' + b"1" * 5000 + b"}", None),
        (
            b'{"format_version": 2, "stages": [{"name": "l2", "params": {}, "state": {"x": {"array": '
            b'{"dtype": "<f8", "shape": [1000000000000000000000000000000, 0], "base64": ""}}}}], '
            b'"input_schema": {"relation": "r", "attributes": []}}',
            None,
        ),
        (None, b""),
        (None, b"PK\x03\x04"),
        (None, b"not a zip file"),
    ],
    ids=[
        "json-nested-deeply",
        "json-not-utf8",
        "json-empty",
        "json-version-true",
        "json-top-infinity",
        "json-5000-digits",
        "json-shape-10**30-by-0",
        "npz-empty",
        "npz-truncated",
        "npz-not-zip",
    ],
)
def test_a_malformed_model_is_one_error_line(run_filterkit, iris_model, tmp_path, json_bytes, npz_bytes):
    model = _copy_model(iris_model if npz_bytes is None else TWO_FILE_MODEL, tmp_path)
    if json_bytes is not None:
        model.write_bytes(json_bytes)
    if npz_bytes is not None:
        model.with_suffix(".npz").write_bytes(npz_bytes)
    result = run_filterkit("apply", model, IRIS)
    assert_one_error_line(result)
    assert "not a filterkit model" in result.stderr


def test_a_truncated_model_npz_is_one_error_line(run_filterkit, tmp_path):
    model = _copy_model(TWO_FILE_MODEL, tmp_path)
    arrays = model.with_suffix(".npz").read_bytes()
    for cut in (10, len(arrays) // 3, len(arrays) - 5):
        model.with_suffix(".npz").write_bytes(arrays[:cut])
        assert_one_error_line(run_filterkit("apply", model, IRIS))


def test_a_truncated_model_is_one_error_line(run_filterkit, iris_model, tmp_path):
    model = _copy_model(iris_model, tmp_path)
    document = model.read_bytes()
    for cut in (10, len(document) // 3, len(document) - 5):
        model.write_bytes(document[:cut])
        result = run_filterkit("apply", model, IRIS)
        assert_one_error_line(result)
        assert "not a filterkit model" in result.stderr


@pytest.mark.slow
def test_a_model_with_every_value_replaced_by_a_wrong_type_is_one_error_line(run_filterkit, iris_model, tmp_path):
    """Each JSON value of the model, one at a time, replaced by a list, null, true, Infinity and a string."""
    model = _copy_model(iris_model, tmp_path)
    original = json.loads(iris_model.read_text())

    def places(value, path=()):
        yield path
        if isinstance(value, dict):
            for key, item in value.items():
                yield from places(item, (*path, key))
        elif isinstance(value, list):
            for index, item in enumerate(value[:3]):
                yield from places(item, (*path, index))

    def replaced(value, path, new):
        if not path:
            return new
        copy = value.copy()
        copy[path[0]] = replaced(value[path[0]], path[1:], new)
        return copy

    checked = 0
    for path in list(places(original))[1:]:
        if path and path[-1] == "filterkit_version":
            continue
        for new in ([], None, True, float("inf"), "x"):
            model.write_text(json.dumps(replaced(original, path, new)))
            result = run_filterkit("apply", model, IRIS)
            assert "Traceback" not in result.stderr
            if result.status != 0:
                assert_one_error_line(result)
            checked += 1
    assert checked > 100


# ------------------------------------------------------------ closed standard streams (real processes)


def shell(command: str, cwd) -> subprocess.CompletedProcess:
    completed = subprocess.run(
        f'filterkit() {{ "{FILTERKIT}" "$@"; }}\n{command}',
        shell=True,
        executable="/bin/bash",
        capture_output=True,
        cwd=cwd,
        timeout=120,
    )
    completed.status = completed.returncode
    completed.stderr = completed.stderr.decode("utf-8", "replace")
    return completed


needs_script = pytest.mark.skipif(FILTERKIT is None, reason="the filterkit console script is not installed")


@pytest.mark.slow
@needs_script
@pytest.mark.parametrize(
    "command, message",
    [
        ("filterkit {iris} l2 >&-", "standard output is closed: give -o FILE"),
        ("filterkit {iris} minmax l2 >&-", "standard output is closed: give -o FILE"),
        ("filterkit apply m.json {iris} >&-", "standard output is closed: give -o FILE"),
        ("filterkit info {iris} >&-", "standard output is closed: 'filterkit info' writes there"),
        ("filterkit plugins >&-", "standard output is closed: 'filterkit plugins' writes there"),
        (
            "filterkit evaluate --positive Iris-setosa {iris} l2 >&-",
            "standard output is closed: 'filterkit evaluate' writes there",
        ),
        ("filterkit - l2 <&-", "standard input is closed"),
        ("filterkit - minmax l2 <&-", "standard input is closed"),
        ("filterkit apply m.json - <&-", "standard input is closed"),
        ("filterkit info - <&-", "standard input is closed"),
        ("filterkit evaluate --positive Iris-setosa - l2 <&-", "standard input is closed"),
    ],
    ids=[
        "chain-stdout",
        "fitted-chain-stdout",
        "apply-stdout",
        "info-stdout",
        "plugins-stdout",
        "evaluate-stdout",
        "chain-stdin",
        "fitted-chain-stdin",
        "apply-stdin",
        "info-stdin",
        "evaluate-stdin",
    ],
)
def test_a_closed_standard_stream_is_one_error_line(iris_model, command, message):
    completed = shell(command.format(iris=IRIS), iris_model.parent)
    assert_one_error_line(completed)
    assert completed.stderr == f"filterkit: error: {message}\n"


@pytest.mark.slow
@needs_script
@pytest.mark.parametrize(
    "command",
    [
        "filterkit {iris} l2",
        "filterkit info {iris}",
        "filterkit plugins",
        "filterkit apply m.json {iris}",
    ],
)
def test_a_reader_that_stops_early_ends_filterkit_quietly(iris_model, command):
    completed = shell(command.format(iris=IRIS) + " | head -c 1 > /dev/null; exit ${PIPESTATUS[0]}", iris_model.parent)
    assert completed.returncode == 0, completed.stderr
    assert completed.stderr == ""


@pytest.mark.slow
@needs_script
@pytest.mark.parametrize("argv", [["-c", "²", IRIS, "l2"], ["apply", "missing.json", IRIS]])
def test_the_console_script_prints_one_error_line(iris_model, argv):
    completed = subprocess.run([FILTERKIT, *map(str, argv)], capture_output=True, cwd=iris_model.parent, timeout=60)
    completed.status = completed.returncode
    completed.stderr = completed.stderr.decode()
    assert_one_error_line(completed)
