"""``train``, ``predict`` and ``explain`` on multi-label data (issue 50 with issue 49): a classifier per label,
fitted as ``evaluate --test`` fits it, so the predicted label sets are evaluate's; from Python as from the shell;
each label's decision split exactly into its words; the model file checked like any other."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest
from test_evaluate_test_file import split_file

import filterkit
from filterkit.errors import FilterkitError

REUTERS = Path(__file__).parent / "data" / "multilabel" / "reuters-grain-corn.arff"
FAST = ("--svm-c-values", "0.1,1,10", "--svm-inner-folds", "3")
CHAIN = ("words", "--lowercase", "bns", "l2")


def rows_of(text: bytes) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text.decode())))


def label_sets(column: list[str]) -> list[set[str]]:
    return [set(text.split("|")) - {""} for text in column]


def documents_of(arff_path: Path) -> list[str]:
    """The text of each row of a MEKA file of two labels and a text (as liac-arff reads it)."""
    import arff

    return [row[2] for row in arff.loads(arff_path.read_text(encoding="utf-8"))["data"]]


@pytest.fixture(scope="module")
def reuters_model(tmp_path_factory):
    """The Reuters labels file split in three (every third row a test row), a model trained on the rest."""
    from filterkit import cli

    folder = tmp_path_factory.mktemp("labels")
    train_path, test_path = split_file(folder, REUTERS)
    model = folder / "model.json"
    assert cli.run(["train", "-q", "-o", str(model), *FAST, str(train_path), *CHAIN]) == 0
    return train_path, test_path, model


def test_predict_gives_the_label_sets_evaluate_test_scores(run_filterkit, tmp_path, reuters_model):
    train_path, test_path, model = reuters_model
    result = run_filterkit("predict", model, test_path)
    assert result.status == 0, result.stderr
    predicted = rows_of(result.stdout)
    assert list(predicted[0]) == [
        "row",
        "labels",
        "decision:grain",
        "decision:corn",
        "probability:grain",
        "probability:corn",
    ]
    written = tmp_path / "evaluate.csv"
    scored = run_filterkit("evaluate", "-q", "--test", test_path, "--predictions", written, *FAST, train_path, *CHAIN)
    assert scored.status == 0, scored.stderr
    expected = rows_of(written.read_bytes())
    assert len(predicted) == len(expected) == 82
    assert label_sets([row["labels"] for row in predicted]) == label_sets([row["predicted"] for row in expected])
    assert any(len(labels) == 2 for labels in label_sets([row["labels"] for row in predicted]))
    for row in predicted:  # the decision is Platt's probability >= 0.5, label by label
        for label in ("grain", "corn"):
            assert (label in row["labels"].split("|")) == (float(row[f"probability:{label}"]) >= 0.5)


def test_the_python_api_predicts_documents_as_the_shell_does(run_filterkit, reuters_model):
    _, test_path, model = reuters_model
    loaded = filterkit.load_model(model)
    documents = documents_of(test_path)
    shell = rows_of(run_filterkit("predict", model, test_path).stdout)
    assert [set(labels) for labels in loaded.predict(documents)] == label_sets([row["labels"] for row in shell])
    decisions = loaded.decision_function(documents)
    assert decisions.shape == (82, 2)
    assert decisions[:, 1].tolist() == [float(row["decision:corn"]) for row in shell]
    assert loaded.predict_proba(documents)[:, 0].tolist() == [float(row["probability:grain"]) for row in shell]


def test_unlabelled_json_lines_documents_are_predicted_as_the_arff_rows(run_filterkit, tmp_path, reuters_model):
    _, test_path, model = reuters_model
    documents = tmp_path / "new.jsonl"
    documents.write_text("".join(json.dumps({"Text": text}) + "\n" for text in documents_of(test_path)))
    from_json = run_filterkit("predict", model, documents)
    assert from_json.status == 0, from_json.stderr
    assert "lacks" not in from_json.stderr  # the labels are what is predicted, not an attribute it lacks
    assert from_json.stdout == run_filterkit("predict", model, test_path).stdout


def test_explain_splits_each_label_s_decision_into_its_words(run_filterkit, reuters_model):
    _, test_path, model = reuters_model
    result = run_filterkit("explain", "--json", "--top", "0", model, test_path)
    assert result.status == 0, result.stderr
    predicted = rows_of(run_filterkit("predict", model, test_path).stdout)
    explained = [json.loads(line) for line in result.stdout.decode().splitlines()]
    for document, row in zip(explained, predicted, strict=True):
        assert set(document["labels"]) == set(row["labels"].split("|")) - {""}
        assert [entry["class"] for entry in document["classes"]] == ["grain", "corn"]
        for entry in document["classes"]:
            assert entry["decision"] == float(row[f"decision:{entry['class']}"])
            total = sum(word["contribution"] for word in entry["words"]) + entry["intercept"]
            assert abs(total - entry["decision"]) <= 1e-9
    text = run_filterkit("explain", "--top", "2", model, test_path).stdout.decode()
    both = next(k for k, row in enumerate(predicted) if row["labels"] == "grain|corn")
    block = text.split("\n\n")[both]
    assert block.startswith(f"row {both + 1}: labels grain, corn\n")
    assert "  why grain (decision" in block and "  why corn (decision" in block


def test_a_label_no_training_row_holds_is_predicted_never_and_has_no_decision(run_filterkit, tmp_path):
    lines = REUTERS.read_text(encoding="utf-8").split("\n")
    start = lines.index("@data") + 1
    kept = [line for line in lines[start:] if line and not line.startswith("0,1,") and not line.startswith("1,1,")]
    train_path = tmp_path / "no-corn.arff"
    train_path.write_text("\n".join(lines[:start] + kept) + "\n", encoding="utf-8")
    model = tmp_path / "model.json"
    assert run_filterkit("train", "-q", "-o", model, *FAST, train_path, *CHAIN).status == 0
    section = json.loads(model.read_text())["classifier"]
    assert section["task"] == "labels" and section["per_label"][1] == {"constant": False}
    predicted = rows_of(run_filterkit("predict", model, REUTERS).stdout)
    assert all("corn" not in row["labels"] for row in predicted)
    assert {row["decision:corn"] for row in predicted} == {""}
    assert any(row["labels"] == "grain" for row in predicted)
    loaded = filterkit.load_model(model)
    assert np.isnan(loaded.decision_function(["wheat and corn"])[0, 1])
    explained = json.loads(run_filterkit("explain", "--json", model, REUTERS).stdout.decode().splitlines()[0])
    assert [entry["class"] for entry in explained["classes"]] == ["grain"]


def test_candidates_are_scored_by_cross_validated_micro_f1_as_evaluate_scores_them(run_filterkit, tmp_path):
    chains = ("words --lowercase l2", "words --lowercase bns l2")
    model = tmp_path / "model.json"
    trained = run_filterkit("train", "-o", model, *FAST, "--folds", "3", "--compare", REUTERS, *chains)
    assert trained.status == 0, trained.stderr
    candidates = json.loads(model.read_text())["classifier"]["candidates"]
    evaluated = run_filterkit("evaluate", "-q", "--json", "--folds", "3", *FAST, "--compare", REUTERS, *chains)
    assert evaluated.status == 0, evaluated.stderr
    results = json.loads(evaluated.stdout)["results"]
    assert [c["score"] for c in candidates] == [r["micro_f1"] for r in results]
    assert [c["macro_f1"] for c in candidates] == [r["macro_f1"] for r in results]
    best = max(range(2), key=lambda k: (candidates[k]["score"], -k))
    assert json.loads(model.read_text())["classifier"]["chain"] == chains[best]
    assert f"filterkit: kept micro_f1 {candidates[best]['score']:.4f}" in trained.stderr


def test_a_task_option_on_multi_label_data_is_one_error(run_filterkit, tmp_path):
    result = run_filterkit("train", "-o", tmp_path / "m.json", "--positive", "grain", REUTERS, *CHAIN)
    assert result.status == 1 and result.stderr.count("\n") == 1
    assert "--positive: multi-label data is learned by binary relevance" in result.stderr
    assert not (tmp_path / "m.json").exists()


@pytest.mark.parametrize(
    "edit, reason",
    [
        (lambda c: c.pop("per_label"), "'per_label' is not a list of one entry a label"),
        (lambda c: c["per_label"].pop(), "'per_label' is not a list of one entry a label"),
        (lambda c: c["per_label"][0].update(constant=True), "label 'grain': not an object holding either"),
        (lambda c: c["per_label"][1].update(state=None), "label 'corn': 'state' is"),
        (lambda c: c.update(classes=["corn", "grain"]), "labels are not the label attributes"),
        (lambda c: c["per_label"][0]["state"].pop("weights"), "its classifier"),
    ],
)
def test_a_tampered_label_section_is_not_a_model(tmp_path, reuters_model, edit, reason):
    document = json.loads(reuters_model[2].read_text())
    edit(document["classifier"])
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(document))
    with pytest.raises(FilterkitError, match="not a filterkit model") as raised:
        filterkit.load_model(tampered)
    assert reason in str(raised.value)
