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
#: evaluate's options that fit the SVM as train does by default (C by the inner F1: LinearSVM.trained_defaults).
AS_TRAINED = ("--svm-c-by", "f1")
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
    scored = run_filterkit(
        "evaluate", "-q", "--test", test_path, "--predictions", written, *FAST, *AS_TRAINED, train_path, *CHAIN
    )
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
    in_processes = tmp_path / "jobs.json"
    options = ("-q", "-o", in_processes, *FAST, "--folds", "3", "--jobs", "2", "--compare", REUTERS, *chains)
    assert run_filterkit("train", *options).status == 0
    assert in_processes.read_bytes() == model.read_bytes()
    candidates = json.loads(model.read_text())["classifier"]["candidates"]
    evaluated = run_filterkit(
        "evaluate", "-q", "--json", "--folds", "3", *FAST, *AS_TRAINED, "--compare", REUTERS, *chains
    )
    assert evaluated.status == 0, evaluated.stderr
    results = json.loads(evaluated.stdout)["results"]
    assert [c["score"] for c in candidates] == [r["micro_f1"] for r in results]
    assert [c["macro_f1"] for c in candidates] == [r["macro_f1"] for r in results]
    best = max(range(2), key=lambda k: (candidates[k]["score"], -k))
    assert json.loads(model.read_text())["classifier"]["chain"] == chains[best]
    assert f"filterkit: kept micro_f1 {candidates[best]['score']:.4f}" in trained.stderr


def test_with_no_chain_labels_get_the_candidates_that_shape_each_word_once(run_filterkit, tmp_path):
    model = tmp_path / "m.json"
    assert run_filterkit("train", "-q", "-o", model, *FAST, REUTERS).status == 0
    words = "words --counts --lowercase --stopwords weka"
    explicit = tmp_path / "explicit.json"
    chain = f"{words} shape --multiclass max bns l2"
    assert run_filterkit("train", "-q", "-o", explicit, *FAST, REUTERS, *chain.split()).status == 0
    section, kept = json.loads(model.read_text()), json.loads(explicit.read_text())
    assert section["classifier"]["candidates"][0]["chain"] == chain == section["classifier"]["chain"]
    assert section["stages"] == kept["stages"] and section["classifier"]["features"] == kept["classifier"]["features"]
    counted = run_filterkit("-q", REUTERS, *words.split())
    assert section["classifier"]["features"] == counted.stdout.count(b"@attribute") - 2  # not the labels


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
        (lambda c: c["per_label"][0].update(note=1), "label 'grain' has an unknown key \"note\""),
        (
            lambda c: c["per_label"][1]["state"].update(cost_labels=["0", "1"], cost_matrix=[[0, 1], [1, 0]]),
            "a label's classifier holds a cost matrix, which training on label sets never fits",
        ),
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


def reuters_json_lines(tmp_path, with_labels: bool = True) -> Path:
    """The Reuters labels file as JSON Lines: a text and (``with_labels``) the array of its labels."""
    import arff

    rows = arff.loads(REUTERS.read_text(encoding="utf-8"))["data"]
    path = tmp_path / ("labelled.jsonl" if with_labels else "texts.jsonl")
    lines = []
    for grain, corn, text in rows:
        record = {"Text": text}
        if with_labels:
            record["labels"] = [label for label, held in (("corn", corn), ("grain", grain)) if held == "1"]
        lines.append(json.dumps(record) + "\n")
    path.write_text("".join(lines), encoding="utf-8")
    return path


def test_a_model_of_json_lines_labels_predicts_rows_with_or_without_their_labels(run_filterkit, tmp_path):
    labelled, texts = reuters_json_lines(tmp_path), reuters_json_lines(tmp_path, with_labels=False)
    model = tmp_path / "model.json"
    trained = run_filterkit("train", "-q", "-o", model, *FAST, "--labels-column", "labels", labelled, *CHAIN)
    assert trained.status == 0, trained.stderr
    from_labelled, from_texts = (run_filterkit("predict", model, path) for path in (labelled, texts))
    assert from_labelled.status == 0 and from_texts.status == 0, from_labelled.stderr + from_texts.stderr
    assert from_labelled.stdout == from_texts.stdout
    predicted = label_sets([row["labels"] for row in rows_of(from_texts.stdout)])
    assert len(predicted) == 244 and {"corn", "grain"} in predicted
    as_csv = tmp_path / "texts.csv"
    with as_csv.open("w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(
            [["Text"], *([json.loads(line)["Text"]] for line in texts.read_text().splitlines())]
        )
    assert run_filterkit("predict", model, as_csv).stdout == from_texts.stdout  # a CSV without the labels column
    unknown = tmp_path / "unknown.jsonl"
    unknown.write_text('{"Text": "wheat", "labels": []}\n{"Text": "oats", "labels": ["oats"]}\n')
    refused = run_filterkit("predict", "-o", tmp_path / "out.csv", model, unknown)
    assert refused.status == 1 and refused.stderr.count("\n") == 1
    assert refused.stderr.startswith(f"filterkit: error: {unknown}:2: the label 'oats' is not one of the model's")
    assert not (tmp_path / "out.csv").exists()


def test_a_model_of_svmlight_label_sets_predicts_svmlight_rows(run_filterkit, tmp_path):
    rows = tmp_path / "reuters.svm"
    written = run_filterkit("--to", "svmlight", "-o", rows, REUTERS, "words", "--lowercase", "l2")
    assert written.status == 0, written.stderr
    lines = [line for line in rows.read_bytes().splitlines() if not line.startswith(b"#")]
    assert sum(line.startswith(b"0,1 ") for line in lines) == 44  # label sets by position: the 44 of both labels
    model = tmp_path / "model.json"
    assert run_filterkit("train", "-q", "-o", model, *FAST, rows, "bns", "l2").status == 0
    unlabelled = tmp_path / "unlabelled.svm"
    unlabelled.write_bytes(
        b"".join((line if b":" in line.split(b" ")[0] else line.split(b" ", 1)[1]) + b"\n" for line in lines)
    )
    with_sets, without = (run_filterkit("predict", model, path) for path in (rows, unlabelled))
    assert with_sets.status == 0 and without.status == 0, with_sets.stderr + without.stderr
    assert with_sets.stdout == without.stdout
    assert len(rows_of(without.stdout)) == 244


def test_explain_with_no_label_of_a_classifier_writes_each_row_s_labels(run_filterkit, tmp_path):
    lines = REUTERS.read_text(encoding="utf-8").split("\n")
    start = lines.index("@data") + 1
    both = [line for line in lines[start:] if line.startswith("1,1,")]
    train_path = tmp_path / "both.arff"
    train_path.write_text("\n".join(lines[:start] + both) + "\n", encoding="utf-8")
    model = tmp_path / "model.json"
    assert run_filterkit("train", "-q", "-o", model, *FAST, train_path, "words", "--lowercase", "l2").status == 0
    explained = run_filterkit("explain", model, REUTERS)
    assert explained.status == 0, explained.stderr
    assert explained.stdout.decode().split("\n\n")[0] == "row 1: labels grain, corn"
    probabilities = filterkit.load_model(model).predict_proba(["corn"])
    assert probabilities.shape == (1, 2) and np.isnan(probabilities).all()


def test_too_few_rows_for_the_candidates_folds_is_one_error(run_filterkit, tmp_path):
    lines = REUTERS.read_text(encoding="utf-8").split("\n")
    start = lines.index("@data") + 1
    one = tmp_path / "one.arff"
    one.write_text("\n".join(lines[: start + 1]) + "\n", encoding="utf-8")
    result = run_filterkit("train", "-o", tmp_path / "m.json", one)
    assert result.status == 1 and result.stderr == f"filterkit: error: {one}: --folds 5 is more than the 1 rows\n"


def test_evaluate_s_label_options_are_refused_by_the_python_api():
    with pytest.raises(FilterkitError, match="a model decides each label by its own classifier"):
        filterkit.train(REUTERS, ["words --lowercase l2"], threshold="pcut")


def test_apply_reads_a_json_lines_column_of_labels_with_a_model(run_filterkit, tmp_path):
    labelled = reuters_json_lines(tmp_path)
    model, fitted = tmp_path / "chain.json", tmp_path / "fitted.arff"
    chain = ("words", "--lowercase", "bns", "l2")
    saved = run_filterkit("--save-model", model, "--labels-column", "labels", "-o", fitted, labelled, *chain)
    assert saved.status == 0, saved.stderr
    applied = run_filterkit("apply", model, labelled)
    assert applied.status == 0, applied.stderr
    body = lambda text: [line for line in text.splitlines() if not line.startswith(b"%")]  # noqa: E731
    assert body(applied.stdout) == body(fitted.read_bytes())
    assert b"@relation 'labelled: -C 2'" in fitted.read_bytes()


def test_a_label_of_one_training_row_is_warned_of_as_a_class_of_one_row_is(run_filterkit, tmp_path):
    """The label 'rare' holds one row: its fit has no inner folds (C the grid's first, no sigmoid, no cut: the margin
    decides, whatever --svm-threshold says), which the binary train warns of and the label set's said nothing of."""
    synthetic = REUTERS.parent / "three-labels-synthetic.arff"
    model = tmp_path / "m.json"
    result = run_filterkit(
        "train", "-o", model, "--svm-c-values", "0.1,1", "--svm-threshold", "f1", synthetic, "words", "l2"
    )
    assert result.status == 0, result.stderr
    warned = [line for line in result.stderr.splitlines() if "warning" in line]
    assert warned == [
        "filterkit: warning: label 'rare': one training row on one side, too few for inner folds: C is the grid's "
        "first, not searched, and no Platt sigmoid or threshold was fitted (the margin's sign decides)"
    ]
    fitted = [entry.get("fitted", {}) for entry in json.loads(model.read_text())["classifier"]["per_label"]]
    assert [record.get("inner_folds") for record in fitted] == [5, 5, 1] and fitted[2]["C"] == 0.1
