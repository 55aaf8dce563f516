"""The cuts that need every label at once reach ``evaluate`` and ``train`` (issue 77): ``--svm-threshold
precision@recall=R:LABEL`` cuts that label alone by its objective and every other as ``f1``; ``micro-macro`` cuts
the labels together; a LABEL that is not one of the data's is refused in one line.  Checked through the commands,
on Reuters' grain and corn labels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

REUTERS = Path(__file__).parent / "data" / "multilabel" / "reuters-grain-corn.arff"
IRIS = Path(__file__).parent / "data" / "real" / "iris.arff"
SYNTHETIC = Path(__file__).parent / "data" / "multilabel" / "three-labels-synthetic.arff"
CHAIN = ("words", "--counts", "--lowercase", "l2")
FAST = ("--folds", "3", "--svm-c-values", "0.1,1,10", "--svm-inner-folds", "3")


def per_label(run_filterkit, rule: str, data: Path = REUTERS) -> dict:
    chain = CHAIN if data == REUTERS else ("words", "--counts", "l2")
    result = run_filterkit("evaluate", "--json", *FAST, "--svm-threshold", rule, data, *chain)
    assert result.status == 0, result.stderr
    return json.loads(result.stdout)["results"][0]["per_label"]


def fitted_labels(run_filterkit, folder: Path, rule: str) -> list[dict]:
    path = folder / f"{rule.replace('@', '-').replace(':', '-')}.json"
    result = run_filterkit("train", "-q", "-o", path, *FAST, "--svm-threshold", rule, REUTERS, *CHAIN)
    assert result.status == 0, result.stderr
    return [entry["fitted"] for entry in json.loads(path.read_text())["classifier"]["per_label"]]


def test_an_objective_for_one_label_cuts_that_label_alone_in_evaluate(run_filterkit):
    f1 = per_label(run_filterkit, "f1")
    scoped = per_label(run_filterkit, "precision@recall=0.99:corn")
    assert scoped["grain"] == f1["grain"]  # cut as f1 cuts it
    assert scoped["corn"]["recall"] > f1["corn"]["recall"]
    assert scoped["corn"]["recall"] >= 0.9


def test_an_objective_for_one_label_is_saved_by_train_for_that_label_alone(run_filterkit, tmp_path):
    f1 = fitted_labels(run_filterkit, tmp_path, "f1")
    scoped = fitted_labels(run_filterkit, tmp_path, "precision@recall=0.99:corn")
    assert scoped[0]["threshold"] == f1[0]["threshold"]
    assert scoped[1]["threshold"] < f1[1]["threshold"]
    assert scoped[1]["threshold_recall"] >= 0.99  # reached on the out-of-fold rows


def test_micro_macro_cuts_the_most_frequent_label_first_at_its_f1_cut_and_moves_a_later_one(run_filterkit):
    """Lin & Lin's joint cut takes the labels most frequent first; the first one's objective is its micro-F1 plus
    its own F1, both its F1 alone: its cut in every fold is the f1 rule's.  A later label's objective counts the
    labels cut before it, and on these label sets moves its cut in a fold where f1's would not."""
    f1 = per_label(run_filterkit, "f1", SYNTHETIC)
    joint = per_label(run_filterkit, "micro-macro", SYNTHETIC)
    assert len(joint["use::editing"]["threshold"]) == 3  # one cut a fold
    assert joint["use::editing"]["threshold"] == f1["use::editing"]["threshold"]
    assert joint["b"]["threshold"] != f1["b"]["threshold"]
    assert joint["b"]["threshold"][1:] == f1["b"]["threshold"][1:]  # moved in the first fold alone


def test_train_saves_the_joint_cut_that_evaluate_test_makes(run_filterkit, tmp_path):
    model = tmp_path / "joint.json"
    options = ("--svm-c-values", "0.1,1,10", "--svm-inner-folds", "3", "--svm-threshold", "micro-macro")
    chain = (SYNTHETIC, "words", "--counts", "l2")
    assert run_filterkit("train", "-q", "-o", model, *options, *chain).status == 0
    per_label = json.loads(model.read_text())["classifier"]["per_label"]
    saved = [entry.get("fitted", {}).get("threshold") for entry in per_label]
    copy = tmp_path / "test.arff"
    copy.write_bytes(SYNTHETIC.read_bytes())
    tested = run_filterkit("evaluate", "--json", "--test", copy, *options, *chain)
    assert tested.status == 0, tested.stderr
    labels = json.loads(tested.stdout)["results"][0]["per_label"]
    assert saved[:2] == [*labels["use::editing"]["threshold"], *labels["b"]["threshold"]]  # one fit: one cut


@pytest.mark.parametrize("command", ["evaluate", "train"])
def test_an_objective_for_a_label_the_data_lacks_is_one_line(run_filterkit, tmp_path, command):
    output = ("-o", tmp_path / "model.json") if command == "train" else ()
    result = run_filterkit(command, *output, *FAST, "--svm-threshold", "precision@recall=0.99:wheat", REUTERS, *CHAIN)
    assert (result.status, result.stdout) == (1, b"")
    assert result.stderr == (
        f"filterkit: error: {REUTERS}: svm: --svm-threshold precision@recall=0.99:wheat: 'wheat' is not a label of "
        "the data (grain, corn)\n"
    )
    assert not (tmp_path / "model.json").exists()


@pytest.mark.parametrize("command", ["evaluate", "train"])
@pytest.mark.parametrize("task", [("--positive", "Iris-setosa"), ("--multiclass",)])
def test_an_objective_for_a_class_the_data_lacks_names_the_file_before_any_fit(run_filterkit, tmp_path, command, task):
    """On a class (not label sets) it was said by the fit, naming no file, after the first folds' work."""
    output = ("-o", tmp_path / "model.json") if command == "train" else ()
    iris = IRIS
    result = run_filterkit(command, *output, *task, "--svm-threshold", "recall@precision=0.9:nolabel", iris, "l2")
    assert (result.status, result.stdout) == (1, b"")
    assert result.stderr == (
        f"filterkit: error: {iris}: svm: --svm-threshold recall@precision=0.9:nolabel: 'nolabel' is not a label of "
        "the data (Iris-setosa, Iris-versicolor, Iris-virginica)\n"
    )
    assert not (tmp_path / "model.json").exists()


@pytest.mark.parametrize("command", [("evaluate", "--folds", "3"), ("train", "-o", "model.json")])
def test_an_objective_scoped_to_a_class_no_task_is_refused_not_ignored(run_filterkit, tmp_path, command):
    """``--positive Iris-versicolor`` with an objective scoped to Iris-virginica cut nothing, and the run was
    ``--svm-threshold f1``'s, byte for byte, with nothing said."""
    options = ("--positive", "Iris-versicolor", "--svm-c-values", "0.1,1")
    scoped = ("--svm-threshold", "precision@recall=0.9:Iris-virginica")
    with_output = tuple(str(tmp_path / part) if part.endswith(".json") else part for part in command)
    result = run_filterkit(*with_output, *options, *scoped, IRIS, "minmax")
    assert result.status == 1
    assert result.stderr.endswith(
        "--svm-threshold precision@recall=0.9:Iris-virginica: class 'Iris-virginica' is none of this run's tasks "
        "(Iris-versicolor), so its cut would be made for nothing\n"
    )
    assert not (tmp_path / "model.json").exists()
