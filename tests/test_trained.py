"""``filterkit train``, ``predict`` and ``explain``, and ``filterkit.load_model`` (issue 49 items 1-4, 6, 8):
a model scores a test file as ``evaluate --test`` does, explains each decision exactly, and answers from
Python as from the shell."""

from __future__ import annotations

import concurrent.futures
import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest
from test_evaluate_test_file import WEKA_EXAMPLES, split_file

import filterkit
import filterkit.sklearn
from chain_helpers import REAL
from filterkit.errors import FilterkitError

FAST = ("--svm-c-values", "0.1,1,10", "--svm-inner-folds", "3")
OH0 = REAL / "oh0.wc.arff"
GRAIN_SAMPLE = REAL / "reuters_grain_sample.arff"
WORDS = ("words", "--counts", "--lowercase", "--stopwords", "weka")


def rows_of(text: bytes | str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text if isinstance(text, str) else text.decode())))


def trained(run_filterkit, tmp_path, train_path, options: tuple, chain: tuple) -> Path:
    model = tmp_path / "model.json"
    result = run_filterkit("train", "-q", "-o", model, *FAST, *options, train_path, *chain)
    assert result.status == 0, result.stderr
    return model


def evaluate_predictions(run_filterkit, tmp_path, train_path, test_path, options, chain) -> dict[int, dict]:
    written = tmp_path / "evaluate.csv"
    result = run_filterkit(
        "evaluate", "-q", "--test", test_path, "--predictions", written, *FAST, *options, train_path, *chain
    )
    assert result.status == 0, result.stderr
    return {int(row["row"]): row for row in rows_of(written.read_text())}


@pytest.mark.parametrize(
    "options, chain",
    [
        (("--positive", "Ethics"), ("shape", "bns", "l2")),
        (("--positive", "Ethics"), ("bns", "--multiply", "l2")),
        (("--multiclass",), ("binarize", "l2")),
    ],
    ids=["shape-bns-l2", "tf-bns", "multiclass"],
)
def test_predict_scores_a_test_file_as_evaluate_test_does(run_filterkit, tmp_path, options, chain):
    train_path, test_path = split_file(tmp_path, OH0)
    model = trained(run_filterkit, tmp_path, train_path, options, chain)
    result = run_filterkit("predict", model, test_path)
    assert result.status == 0, result.stderr
    predicted = rows_of(result.stdout)
    scored = evaluate_predictions(run_filterkit, tmp_path, train_path, test_path, options, chain)
    assert [int(row["row"]) for row in predicted] == sorted(scored) == list(range(1, 336))
    for row in predicted:
        expected = scored[int(row["row"])]
        if "--multiclass" in options:
            assert row["label"] == expected["decision"]
            assert row[f"probability:{row['label']}"] == expected["score"]
        else:
            assert (row["label"] == "Ethics") == (expected["decision"] == "1")
            assert row["probability"] == expected["score"]


def test_a_model_of_documents_predicts_every_row_a_missing_class_too(run_filterkit, tmp_path):
    train_path, test_path = split_file(tmp_path, GRAIN_SAMPLE, missing_class_rows=(4,))
    model = trained(run_filterkit, tmp_path, train_path, ("--positive", "1"), (*WORDS, "shape", "bns", "l2"))
    predicted = rows_of(run_filterkit("predict", model, test_path).stdout)
    scored = evaluate_predictions(
        run_filterkit, tmp_path, train_path, test_path, ("--positive", "1"), (*WORDS, "shape", "bns", "l2")
    )
    assert len(predicted) == len(scored) + 1 == 20  # the row of a missing class is predicted, not scored
    assert 5 not in scored and predicted[4]["row"] == "5"
    assert [row["probability"] for row in predicted if int(row["row"]) in scored] == [
        scored[k]["score"] for k in sorted(scored)
    ]
    assert {row["label"] for row in predicted} == {"0", "1"}


@pytest.mark.skipif(not (WEKA_EXAMPLES / "ReutersGrain-test.arff").exists(), reason="Debian's weka examples missing")
def test_on_wekas_reuters_grain_files_train_predict_and_explain_agree_with_evaluate(run_filterkit, tmp_path):
    train_path, test_path = WEKA_EXAMPLES / "ReutersGrain-train.arff", WEKA_EXAMPLES / "ReutersGrain-test.arff"
    chain = (*WORDS, "shape", "bns", "l2")
    model = trained(run_filterkit, tmp_path, train_path, (), chain)
    predicted = rows_of(run_filterkit("predict", model, test_path).stdout)
    scored = evaluate_predictions(run_filterkit, tmp_path, train_path, test_path, (), chain)
    assert [row["probability"] for row in predicted] == [scored[k + 1]["score"] for k in range(len(predicted))]
    explained = run_filterkit("explain", "--json", "--top", "0", model, test_path)
    assert explained.status == 0, explained.stderr
    for line, row in zip(explained.stdout.decode().splitlines(), predicted, strict=True):
        document = json.loads(line)
        assert document["decision"] == float(row["decision"])
        total = sum(word["contribution"] for word in document["words"]) + document["intercept"]
        assert abs(total - document["decision"]) <= 1e-9


def test_explain_splits_every_decision_into_the_words_contributions(run_filterkit, tmp_path):
    train_path, test_path = split_file(tmp_path, GRAIN_SAMPLE)
    model = trained(run_filterkit, tmp_path, train_path, ("--positive", "1"), (*WORDS, "shape", "bns", "l2"))
    result = run_filterkit("explain", "--json", "--top", "0", model, test_path)
    assert result.status == 0, result.stderr
    documents = [json.loads(line) for line in result.stdout.decode().splitlines()]
    decisions = [float(row["decision"]) for row in rows_of(run_filterkit("predict", model, test_path).stdout)]
    assert [d["decision"] for d in documents] == decisions
    for document in documents:
        assert document["stages"] == ["words", "shape", "bns", "l2"]
        total = sum(word["contribution"] for word in document["words"]) + document["intercept"]
        assert abs(total - document["decision"]) <= 1e-9
        for word in document["words"]:
            assert word["count"] == word["steps"][0] and word["count"] >= 1  # the count words made
            assert word["value"] == word["steps"][-1]
        sizes = [abs(word["contribution"]) for word in document["words"]]
        assert sizes == sorted(sizes, reverse=True)
    top = [
        json.loads(line)
        for line in run_filterkit("explain", "--json", "--top", "3", model, test_path).stdout.decode().splitlines()
    ]
    assert [d["words"] for d in top] == [d["words"][:3] for d in documents]
    for short, whole in zip(top, documents):
        assert short["other_words"] == len(whole["words"]) - 3 and whole["other_words"] == 0
        left_out = sum(word["contribution"] for word in whole["words"][3:])
        assert abs(short["other_contribution"] - left_out) <= 1e-12
    shown = run_filterkit("explain", "--top", "2", model, test_path).stdout.decode()
    first = documents[0]
    assert f"row 1: {first['label']} (decision {first['decision']:.6g}" in shown
    assert f"{first['words'][0]['word']}" in shown.split("\n\n")[0]


def test_a_multiclass_explanation_gives_each_class_its_words(run_filterkit, tmp_path):
    train_path, test_path = split_file(tmp_path, OH0, every=10)
    model = trained(run_filterkit, tmp_path, train_path, ("--multiclass",), ("binarize", "l2"))
    documents = [
        json.loads(line)
        for line in run_filterkit("explain", "--json", "--top", "0", model, test_path).stdout.decode().splitlines()
    ]
    predicted = rows_of(run_filterkit("predict", model, test_path).stdout)
    for document, row in zip(documents, predicted, strict=True):
        assert document["label"] == row["label"]
        assert len(document["classes"]) == 10
        for per_class in document["classes"]:
            assert per_class["decision"] == float(row[f"decision:{per_class['class']}"])
            total = sum(word["contribution"] for word in per_class["words"]) + per_class["intercept"]
            assert abs(total - per_class["decision"]) <= 1e-9


def test_the_python_api_answers_as_the_commands_do_and_from_many_threads(run_filterkit, tmp_path):
    train_path, test_path = split_file(tmp_path, GRAIN_SAMPLE)
    model_path = trained(run_filterkit, tmp_path, train_path, ("--positive", "1"), (*WORDS, "bns", "--multiply", "l2"))
    rows = rows_of(run_filterkit("predict", model_path, test_path).stdout)
    documents = [row[0] for row in filterkit.sklearn.load(test_path, as_frame=False)[0]]
    model = filterkit.load_model(model_path)
    assert model.predict(documents) == [row["label"] for row in rows]
    assert model.decision_function(documents).tolist() == [float(row["decision"]) for row in rows]
    assert model.predict_proba(documents).tolist() == [float(row["probability"]) for row in rows]
    assert model.transform(documents).shape == (len(documents), len(model.feature_names))
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        one_by_one = list(pool.map(lambda document: model.decision_function([document])[0], documents * 4))
    assert one_by_one == model.decision_function(documents).tolist() * 4
    explained = model.explain(documents[:1], top=0)[0]
    total = sum(word["contribution"] for word in explained["words"]) + explained["intercept"]
    assert abs(total - explained["decision"]) < 1e-9
    assert model.predict([{"Text": documents[0]}]) == model.predict(documents[:1])


def test_the_python_api_refuses_what_it_cannot_read(run_filterkit, tmp_path):
    train_path, _ = split_file(tmp_path, GRAIN_SAMPLE)
    model = filterkit.load_model(
        trained(run_filterkit, tmp_path, train_path, ("--positive", "1"), (*WORDS, "bns", "--multiply", "l2"))
    )
    with pytest.raises(TypeError, match="not one"):
        model.predict("one document")
    with pytest.raises(FilterkitError, match="'title' is not an attribute of the training data"):
        model.predict([{"title": "x"}])
    with pytest.raises(FilterkitError, match="'class-att': '7' is not a value it held in training"):
        model.predict([{"Text": "wheat", "class-att": "7"}])


def test_compare_keeps_the_candidate_of_the_best_cross_validated_f1(run_filterkit, tmp_path):
    chains = ("binarize l2", "shape bns l2")
    model_path = trained(run_filterkit, tmp_path, OH0, ("--positive", "Ethics", "--compare"), chains)
    section = json.loads(model_path.read_text())["classifier"]
    result = run_filterkit(
        "evaluate", "-q", "--json", "--folds", "5", *FAST, "--positive", "Ethics", "--compare", OH0, *chains
    )
    by_chain = {entry["chain"]: entry["f1"] for entry in json.loads(result.stdout)["results"]}
    assert [(c["chain"], c["score"]) for c in section["candidates"]] == [(c, by_chain[c]) for c in chains]
    assert section["chain"] == max(chains, key=lambda chain: by_chain[chain])
    kept = json.loads(model_path.read_text())["stages"]
    assert [stage["name"] for stage in kept] == section["chain"].split()


def test_with_no_chain_train_compares_the_default_candidates(run_filterkit, tmp_path):
    model_path = trained(run_filterkit, tmp_path, GRAIN_SAMPLE, ("--positive", "1"), ())
    candidates = json.loads(model_path.read_text())["classifier"]["candidates"]
    words = "words --counts --lowercase --stopwords weka"
    assert [c["chain"] for c in candidates] == [
        f"{words} shape bns l2",
        f"{words} bns --multiply l2",
        f"{words} idf --multiply l2",
    ]
    assert all(0 <= c["score"] <= 1 for c in candidates)


def test_a_chain_without_a_classifier_is_not_a_model_to_predict_with(run_filterkit, tmp_path):
    chain_model = tmp_path / "chain.json"
    saved = run_filterkit("--save-model", chain_model, "-o", tmp_path / "out.arff", OH0, "--positive", "Ethics", "bns")
    assert saved.status == 0
    result = run_filterkit("predict", chain_model, OH0)
    assert result.status == 1
    assert "no classifier (saved with --save-model): make one with filterkit train" in result.stderr
    assert "Traceback" not in result.stderr


def test_rows_of_another_header_are_refused_naming_the_first_difference(run_filterkit, tmp_path):
    train_path, _ = split_file(tmp_path, GRAIN_SAMPLE)
    model = trained(run_filterkit, tmp_path, train_path, ("--positive", "1"), (*WORDS, "l2"))
    for command in ("predict", "explain"):
        result = run_filterkit(command, "-o", tmp_path / "out.csv", model, OH0)
        assert result.status == 1
        assert "header differs from the training data: attribute 1 differs" in result.stderr
        assert result.stderr.count("\n") == 1
        assert not (tmp_path / "out.csv").exists()


def test_a_model_of_a_newer_major_version_is_refused(run_filterkit, tmp_path):
    train_path, _ = split_file(tmp_path, GRAIN_SAMPLE)
    model = trained(run_filterkit, tmp_path, train_path, ("--positive", "1"), (*WORDS, "l2"))
    document = json.loads(model.read_text())
    assert document["filterkit_version"] == filterkit.__version__
    major = int(filterkit.__version__.split(".")[0]) + 1
    model.write_text(json.dumps({**document, "filterkit_version": f"{major}.0.0"}))
    result = run_filterkit("predict", model, train_path)
    assert result.status == 1
    assert f"written by filterkit '{major}.0.0', a newer major version than this filterkit" in result.stderr


@pytest.mark.parametrize(
    "arguments, message",
    [
        (("--positive", "Ethics", "--multiclass"), "--positive Ethics and --multiclass both choose the task"),
        (("--classifier", "aisvm", "--multiclass"), "classifier 'aisvm' is binary"),
        (("--compare",), "every chain is one unquoted word ('l2', 'minmax'): quote each chain"),
    ],
)
def test_train_refuses_contradictory_options_before_any_work(run_filterkit, tmp_path, arguments, message):
    result = run_filterkit("train", "-o", tmp_path / "m.json", *arguments, OH0, "l2", "minmax")
    assert result.status == 2
    assert message in result.stderr
    assert not (tmp_path / "m.json").exists()


def test_train_on_k_classes_without_a_task_says_how_to_choose_one(run_filterkit, tmp_path):
    result = run_filterkit("train", "-o", tmp_path / "m.json", OH0, "l2")
    assert result.status == 1
    assert result.stderr.endswith(
        "the class has 10 labels: choose the task with --positive LABEL (that class against the rest) or "
        "--multiclass (all 10 classes at once)\n"
    )
    assert not (tmp_path / "m.json").exists()


def test_a_classifier_that_holds_no_state_cannot_be_trained_into_a_model(tmp_path):
    from filterkit.classifier import Classifier
    from filterkit.evaluation import Settings
    from filterkit.plugins import load_plugins
    from filterkit.trained import train

    registry = load_plugins()

    class Stateless(Classifier):
        name = "stateless"

    registry.classifiers["stateless"] = type(registry.classifiers["svm"])(
        "stateless", Stateless, registry.classifiers["svm"].plugin, registry.classifiers["svm"].distribution
    )
    with pytest.raises(FilterkitError, match="classifier 'stateless' cannot be saved in a model"):
        train(OH0, None, Settings(classifier="stateless", positive="Ethics"), registry)


def test_aisvm_models_predict_as_evaluate_scores(run_filterkit, tmp_path):
    train_path, test_path = split_file(tmp_path, OH0)
    model = tmp_path / "m.json"
    arguments = ("--classifier", "aisvm", "--positive", "Ethics")
    assert run_filterkit("train", "-q", "-o", model, *arguments, train_path, "bns", "l2").status == 0
    predicted = rows_of(run_filterkit("predict", model, test_path).stdout)
    assert list(predicted[0]) == ["row", "label", "decision"]  # no sigmoid, no probability
    written = tmp_path / "e.csv"
    run_filterkit("evaluate", "-q", "--test", test_path, "--predictions", written, *arguments, train_path, "bns", "l2")
    scored = rows_of(written.read_text())
    assert [row["decision"] for row in predicted] == [row["score"] for row in scored]
    assert [row["label"] == "Ethics" for row in predicted] == [row["decision"] == "1" for row in scored]
    assert np.isfinite([float(row["decision"]) for row in predicted]).all()


MODELS = Path(__file__).parent / "data" / "models"


@pytest.mark.parametrize(
    "command, recorded",
    [
        (("predict",), "trained-grain.predictions.csv"),
        (("explain", "--json", "--top", "3"), "trained-grain.explain.jsonl"),
    ],
)
def test_a_model_of_the_first_release_with_train_answers_as_it_did(run_filterkit, command, recorded):
    result = run_filterkit(*command, MODELS / "trained-grain.json", GRAIN_SAMPLE)
    assert result.status == 0, result.stderr
    assert result.stdout == (MODELS / recorded).read_bytes()


def test_documents_without_their_class_column_are_predicted(run_filterkit, tmp_path):
    train_path, test_path = split_file(tmp_path, GRAIN_SAMPLE)
    model = trained(run_filterkit, tmp_path, train_path, ("--positive", "1"), (*WORDS, "bns", "--multiply", "l2"))
    documents = [row[0] for row in filterkit.sklearn.load(test_path, as_frame=False)[0]]
    unlabelled = tmp_path / "unlabelled.csv"
    with unlabelled.open("w", newline="") as handle:
        csv.writer(handle).writerows([["Text"], *([document] for document in documents)])
    result = run_filterkit("predict", model, unlabelled)
    assert result.status == 0, result.stderr
    assert rows_of(result.stdout) == rows_of(run_filterkit("predict", model, test_path).stdout)
    lines = "".join(json.dumps({"Text": document}) + "\n" for document in documents).encode()
    from_stdin = run_filterkit("predict", "--from", "jsonl", model, "-", stdin=lines)
    assert from_stdin.stdout == result.stdout
