"""The SVM's C search made cheaper without changing a bit (issue 75): the inner F1 counted with numpy is
scikit-learn's ``f1_score``, and ``train`` and ``evaluate`` write what filterkit 0.4.0.dev0 (commit e6c44fc, before
the search was reworked) wrote, with one process or two."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
from sklearn.metrics import f1_score

from chain_helpers import REAL
from filterkit_plugins.classifiers import f1_scores

IRIS = REAL / "iris.arff"
#: sha256 of the stages and classifier sections of the model, and of evaluate's JSON without its input's path,
#: written by commit e6c44fc (before issue 75) for the commands of the tests below.
IRIS_MODEL_DIGEST = "7883ee486d80602ca26538a99b991f41b9747d9d3461465a0dcec041c96724a8"
IRIS_EVALUATION_DIGEST = "fb0c4990ac5fd690a0c9de6820b034cb57b359bbb4c65e608f6040a73bba5b9d"


def digest(document) -> str:
    return hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()


@pytest.mark.parametrize("seed", range(20))
def test_the_numpy_f1_is_scikit_learns_to_the_bit(seed):
    generator = np.random.default_rng(seed)
    rows, classes = int(generator.integers(1, 40)), int(generator.integers(2, 6))
    truth = generator.integers(0, classes, rows)
    decided = generator.integers(0, classes - 1, rows)  # the last class is never decided: its F1 may divide 0 by 0
    labels = list(range(classes + 1))  # and one label has no row at all
    per_label = f1_score(truth, decided, labels=labels, average=None, zero_division=0.0)
    assert f1_scores(truth, decided, labels) == list(per_label)
    expected = f1_score(truth, decided, labels=labels, average="macro", zero_division=0.0)
    assert float(np.mean(f1_scores(truth, decided, labels))) == expected
    binary_truth, binary_decided = truth == 0, decided == 0
    assert f1_scores(binary_truth, binary_decided, [True])[0] == f1_score(binary_truth, binary_decided, zero_division=0)


def test_the_f1_of_no_positive_row_nor_decision_is_zero():
    nothing = np.zeros(5, dtype=bool)
    assert f1_scores(nothing, nothing, [True]) == [0.0] == [f1_score(nothing, nothing, zero_division=0.0)]
    assert f1_scores(np.array([1, 1, 0]), np.array([1, 0, 0]), [0, 1]) == [2 / 3, 2 / 3]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_train_writes_the_model_it_wrote_before_the_search_was_reworked(run_filterkit, tmp_path, jobs):
    model = tmp_path / "model.json"
    argv = ("train", "-q", "--jobs", jobs, "-o", model, "--multiclass", "--compare", IRIS, "minmax", "minmax l2")
    result = run_filterkit(*argv)
    assert result.status == 0, result.stderr
    written = json.loads(model.read_text())
    assert written["classifier"]["fitted"]["C"] == 10.0
    assert digest({"stages": written["stages"], "classifier": written["classifier"]}) == IRIS_MODEL_DIGEST


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_evaluate_prints_the_json_it_printed_before_the_search_was_reworked(run_filterkit, jobs):
    argv = ("evaluate", "--json", "--jobs", jobs, "--multiclass", "--folds", "3", "--svm-c-by", "f1")
    result = run_filterkit(*argv, "--compare", IRIS, "minmax", "minmax l2")
    assert result.status == 0, result.stderr
    document = json.loads(result.stdout)
    document["settings"].pop("input")
    assert digest(document) == IRIS_EVALUATION_DIGEST
