"""Issue 72, item 6, for the commands beside the chain: ``evaluate``, ``train``, ``apply``, ``predict`` and
``update`` refuse a reading option their input's format does not take (``--labels-column`` for ARFF, ``--text``
for svmlight) as the chain and ``info`` do, a usage error naming the option and the format, instead of reading
the file without it."""

from __future__ import annotations

import pytest

from chain_helpers import REAL

IRIS = REAL / "iris.arff"

#: A model of the chain alone, one that keeps its statistics (update's) and one with a classifier (predict's).
CHAIN_MODEL = ("--save-model", "{model}", IRIS, "l2")
UPDATABLE_MODEL = ("--save-model", "{model}", "--updatable", IRIS, "minmax")
TRAINED_MODEL = ("train", "-q", "-o", "{model}", "--positive", "Iris-setosa", IRIS, "l2")


def saved(run_filterkit, tmp_path, arguments) -> str:
    model = str(tmp_path / "model.json")
    result = run_filterkit(*(model if argument == "{model}" else argument for argument in arguments))
    assert (result.status, result.stderr) == (0, "")
    return model


def test_evaluate_refuses_an_option_its_input_does_not_take(run_filterkit):
    result = run_filterkit("evaluate", "-q", "--positive", "Iris-setosa", "--text", "class", IRIS, "l2")
    assert (result.status, result.stdout) == (2, b"")
    assert "Error: --text class: arff input does not take it" in result.stderr


def test_train_refuses_an_option_its_input_does_not_take(run_filterkit, tmp_path):
    model = tmp_path / "model.json"
    result = run_filterkit(
        "train", "-q", "-o", model, "--positive", "Iris-setosa", "--labels-column", "class", IRIS, "l2"
    )
    assert (result.status, result.stdout, model.exists()) == (2, b"", False)
    assert "Error: --labels-column class: arff input does not take it" in result.stderr


@pytest.mark.parametrize(
    "command, model_arguments, extra",
    [
        ("apply", CHAIN_MODEL, ("-o", "{output}.arff")),
        ("predict", TRAINED_MODEL, ()),
        ("update", UPDATABLE_MODEL, ("-o", "{output}.json")),
    ],
)
def test_a_command_on_a_model_refuses_an_option_the_new_rows_format_does_not_take(
    command, model_arguments, extra, run_filterkit, tmp_path
):
    model = saved(run_filterkit, tmp_path, model_arguments)
    output = tmp_path / "out"
    given = [argument.format(output=output) for argument in extra]
    result = run_filterkit(command, "--nominal", "sepallength", *given, model, IRIS)
    assert (result.status, result.stdout) == (2, b"")
    written = " written as arff" if command == "apply" else ""
    assert f"Error: --nominal sepallength: arff input{written} does not take it" in result.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == ["model.json"]


def test_apply_takes_an_option_its_svmlight_output_writes_with(run_filterkit, tmp_path):
    model = saved(run_filterkit, tmp_path, CHAIN_MODEL)
    output = tmp_path / "out.svm"
    result = run_filterkit("apply", "--zero-based", "-o", output, model, IRIS)
    assert (result.status, result.stderr) == (0, "")
    first_row = next(line for line in output.read_bytes().split(b"\n") if not line.startswith(b"#"))
    assert first_row.split(b" ")[1].startswith(b"0:")
