"""A file an option reads (``--svm-costs``, ``words --stopwords``, ``--labels``) is an input: ``evaluate``'s
``--label-issues``, ``--predictions`` or ``--report`` and ``train``'s ``-o`` naming it overwrote it with status 0,
the cost matrix lost (found by a hostile review of the decision rules); it is now a usage error naming both, as
the data file is, and the file is left as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from filterkit.testing import run_filterkit

IRIS = Path(__file__).parent.parent / "arff_samples" / "iris.arff"
COSTS = "3 3\n0 1 1\n5 0 1\n5 1 0\n"


@pytest.mark.parametrize(
    "output, task, costs_text",
    [
        ("--label-issues", ("--multiclass",), COSTS),
        ("--report", ("--positive", "Iris-setosa"), "2 2\n0 1\n3 0\n"),
        ("--plot", ("--positive", "Iris-setosa"), "2 2\n0 1\n3 0\n"),
    ],
)
def test_evaluate_refuses_an_output_that_is_the_cost_matrix(tmp_path, output, task, costs_text):
    costs = tmp_path / ("iris.png" if output == "--plot" else "iris.cost")
    costs.write_text(costs_text)
    options = ("--jobs", "1", "--folds", "3", *task, "--svm-costs", costs)
    refused = run_filterkit("evaluate", *options, output, costs, IRIS, "minmax")
    assert refused.status == 2 and costs.read_text() == costs_text
    assert f"--svm-costs {costs} and {output} {costs} are the same file" in refused.stderr


def test_train_refuses_a_model_file_that_is_the_cost_matrix(tmp_path):
    costs = tmp_path / "iris.cost"
    costs.write_text(COSTS)
    refused = run_filterkit("train", "--jobs", "1", "-o", costs, "--multiclass", "--svm-costs", costs, IRIS, "minmax")
    assert refused.status == 2 and costs.read_text() == COSTS
    assert f"--svm-costs {costs} and -o {costs} are the same file" in refused.stderr


def test_a_stop_word_list_is_an_input_too(tmp_path):
    rows, test, stopwords = tmp_path / "docs.csv", tmp_path / "test.csv", tmp_path / "stop.txt"
    rows.write_text("text,class\n" + "".join(f"word{i} other{i % 3},{'ab'[i % 2]}\n" for i in range(12)))
    test.write_text(rows.read_text())
    stopwords.write_text("other0\n")
    chain = ("words", "--stopwords", stopwords, "l2")
    options = ("--jobs", "1", "--positive", "a", "--text", "text")
    refused = run_filterkit("evaluate", *options, "--predictions", stopwords, "--test", test, rows, *chain)
    assert refused.status == 2 and stopwords.read_text() == "other0\n"
    assert f"words --stopwords {stopwords} and --predictions {stopwords} are the same file" in refused.stderr


@pytest.mark.parametrize("output", ["-o", "--save-model"])
def test_the_chain_command_refuses_an_output_that_is_a_stop_word_list(tmp_path, output):
    rows, stopwords = tmp_path / "docs.csv", tmp_path / "stop.txt"
    rows.write_text("text,class\nab cd,a\nef gh,b\n")
    stopwords.write_text("cd\n")
    other = ("-o", tmp_path / "out.arff") if output == "--save-model" else ()
    refused = run_filterkit(rows, "--text", "text", *other, output, stopwords, "words", "--stopwords", stopwords)
    assert refused.status == 2 and stopwords.read_text() == "cd\n"
    assert f"words --stopwords {stopwords} and {output} {stopwords} are the same file" in refused.stderr
