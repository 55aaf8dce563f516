"""A model file edited by hand where each field still has its type, but the fields no longer agree: labels or
attributes declared twice, classes that are not what training wrote, a JSON key given twice, a classifier state
whose parts its params never fit, strings and booleans where the state holds numbers.  Each was read and
predicted from with status 0; each is now one ``not a filterkit model`` line, status 1."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest

from chain_helpers import REAL
from filterkit.testing import run_filterkit as run_in_process

IRIS = REAL / "iris.arff"
CREDIT = REAL / "credit-g.arff"
THREE_LABELS = Path(__file__).parent / "data" / "multilabel" / "three-labels-synthetic.arff"
FAST = ("--svm-c-values", "0.1,1,10", "--svm-inner-folds", "3")
#: The models the tests edit: each its training file, train's options and the chain.
MODELS = {
    "setosa": (IRIS, ("--positive", "Iris-setosa"), ("l2",)),
    "margin": (IRIS, ("--positive", "Iris-versicolor", "--svm-decision", "margin"), ("l2",)),
    "f1": (IRIS, ("--positive", "Iris-versicolor", "--svm-threshold", "f1"), ("l2",)),
    "classes": (IRIS, ("--multiclass",), ("l2",)),
    "credit": (CREDIT, (), ("l2",)),
    "labels": (THREE_LABELS, ("--svm-threshold", "f1"), ("words", "l2")),
}

pytestmark = pytest.mark.slow  # six models trained, about two seconds of CPU


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    """Each model of :data:`MODELS`, trained once for the module."""
    folder = tmp_path_factory.mktemp("models")
    trained = {}
    for name, (data, options, chain) in MODELS.items():
        trained[name] = folder / f"{name}.json"
        result = run_in_process("train", "-q", "-o", trained[name], *FAST, *options, data, *chain)
        assert result.status == 0, result.stderr
    return trained


def embedded(values, dtype: str = "<f8") -> dict:
    """``values`` as a model file embeds an array."""
    array = np.ascontiguousarray(values, dtype=dtype)
    encoded = base64.b64encode(array.tobytes()).decode("ascii")
    return {"array": {"dtype": np.dtype(dtype).str, "shape": list(array.shape), "base64": encoded}}


def refusal(run_filterkit, tmp_path, name: str, text: str) -> str:
    """What ``predict`` says of the model ``text`` (an edit of the model ``name``), checked to be one
    ``not a filterkit model`` line, status 1 and no output."""
    edited = tmp_path / "edited.json"
    edited.write_text(text)
    predictions = tmp_path / "out.csv"
    result = run_filterkit("predict", "-o", predictions, edited, MODELS[name][0])
    assert result.status == 1, result.stderr
    assert "not a filterkit model" in result.stderr and str(edited) in result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert not predictions.exists()
    return result.stderr


def edited(models, name: str, edit) -> str:
    """The model ``name`` as JSON text, ``edit`` applied to its document."""
    document = json.loads(models[name].read_text())
    edit(document)
    return json.dumps(document)


def _set_label(attribute: dict, position: int, label: str) -> None:
    attribute["labels"][position] = label


@pytest.mark.parametrize(
    "name, attribute, position, label",
    [
        ("credit", 0, 1, "<0"),  # a nominal feature: '<0' scored by the weight of its second label
        ("classes", 4, 1, "Iris-setosa"),  # the class
    ],
)
def test_a_label_declared_twice_in_the_input_schema_is_not_a_model(
    run_filterkit, tmp_path, models, name, attribute, position, label
):
    text = edited(models, name, lambda d: _set_label(d["input_schema"]["attributes"][attribute], position, label))
    said = refusal(run_filterkit, tmp_path, name, text)
    assert f"input attribute {attribute + 1}: the label {label!r} is declared twice" in said


def test_an_attribute_declared_twice_in_the_input_schema_is_not_a_model(run_filterkit, tmp_path, models):
    text = edited(models, "classes", lambda d: d["input_schema"]["attributes"][1].update(name="sepallength"))
    said = refusal(run_filterkit, tmp_path, "classes", text)
    assert "input_schema: the attribute 'sepallength' is declared twice" in said


def test_a_binary_class_other_than_the_positive_label_is_not_a_model(run_filterkit, tmp_path, models):
    # read, the model answered Iris-virginica for every row it had learnt as Iris-setosa
    text = edited(models, "setosa", lambda d: d["classifier"].update(classes=["Iris-virginica"]))
    said = refusal(run_filterkit, tmp_path, "setosa", text)
    assert "the binary classifier's class 'Iris-virginica' is not the model's positive label 'Iris-setosa'" in said


def test_classes_out_of_the_class_labels_order_are_not_a_model(run_filterkit, tmp_path, models):
    # read, each SVM's rows were given another class's name
    classes = ["Iris-versicolor", "Iris-setosa", "Iris-virginica"]
    text = edited(models, "classes", lambda d: d["classifier"].update(classes=classes))
    said = refusal(run_filterkit, tmp_path, "classes", text)
    assert "the classifier's classes are not in the order of the class's labels" in said


def test_a_json_key_given_twice_is_not_a_model(run_filterkit, tmp_path, models):
    # json.loads keeps the last of two: the model read answered for another class than the one shown first
    text = models["setosa"].read_text().replace('"classes": [', '"classes": ["Iris-virginica"], "classes": [', 1)
    said = refusal(run_filterkit, tmp_path, "setosa", text)
    assert 'its JSON holds the key "classes" twice in one object' in said


def _state(document: dict) -> dict:
    return document["classifier"]["state"]


@pytest.mark.parametrize(
    "name, edit, message",
    [
        (
            "setosa",  # read, its cut moved from p ≥ 0.5 to the threshold given
            lambda d: _state(d).update(thresholds=embedded([0.9])),
            "svm: its state has 'thresholds', which a model trained with --svm-threshold fixed never holds",
        ),
        (
            "margin",  # read, it decided by Platt's p ≥ 0.5, not by the margin
            lambda d: _state(d).update(sigmoids=embedded([[-1.0, 0.0]])),
            "svm: its state has 'sigmoids', which a model trained with --svm-decision margin never holds",
        ),
        (
            "margin",
            lambda d: d["classifier"]["params"].update(decision="platt"),
            "svm: its state lacks 'sigmoids', which a model trained with --svm-decision platt always holds",
        ),
        (
            "f1",  # read, its cut, chosen on probabilities, was applied to margins
            lambda d: _state(d).pop("sigmoids"),
            "svm: its state has 'thresholds' but not 'sigmoids': a fit makes both, or neither where a class has one",
        ),
        (
            "f1",
            lambda d: _state(d).pop("thresholds"),
            "svm: its state has 'sigmoids' but not 'thresholds': a fit makes both, or neither where a class has one",
        ),
        (
            "f1",  # --svm-threshold fixed, left out of params as its default is
            lambda d: d["classifier"]["params"].pop("threshold"),
            "svm: its state has 'thresholds', which a model trained with --svm-threshold fixed never holds",
        ),
        (
            "labels",
            lambda d: d["classifier"]["per_label"][0].update(fitted="x"),
            "label 'use::editing': 'fitted' is a string, not an object",
        ),
    ],
)
def test_a_state_part_its_params_never_fit_is_not_a_model(run_filterkit, tmp_path, models, name, edit, message):
    said = refusal(run_filterkit, tmp_path, name, edited(models, name, edit))
    assert message in said


def test_a_label_of_one_row_keeps_a_model_without_sigmoids_or_thresholds(run_filterkit, tmp_path, models):
    # 'rare' is held by one row: no inner cross-validation, so platt-cv fits no sigmoid and f1 no cut for it
    rare = json.loads(models["labels"].read_text())["classifier"]["per_label"][2]["state"]
    assert "sigmoids" not in rare and "thresholds" not in rare
    result = run_filterkit("predict", "-o", tmp_path / "out.csv", models["labels"], THREE_LABELS)
    assert result.status == 0, result.stderr


@pytest.mark.parametrize(
    "name, key, value",
    [
        ("setosa", "intercepts", ["0.5"]),
        ("setosa", "intercepts", [True]),
        ("setosa", "intercepts", embedded([True], "|b1")),
        ("setosa", "sigmoids", [["-5.3", " -0.2 "]]),
        ("f1", "thresholds", [False]),
    ],
)
def test_a_string_or_boolean_where_the_state_holds_numbers_is_not_a_model(
    run_filterkit, tmp_path, models, name, key, value
):
    said = refusal(run_filterkit, tmp_path, name, edited(models, name, lambda d: _state(d).update({key: value})))
    assert f"svm: '{key}' is not an array of numbers" in said
