"""A label-set model whose one label has too few rows for Platt's sigmoid (``rare``: one row) lost every label's
probability: ``predict`` wrote no ``probability:L`` column, ``predict_proba`` refused, and ``explain`` showed each
label's margin beside the probability cut it is decided by ("decision -1.94, threshold 0.1454", the label held)
(found by a hostile review of the decision rules).  Each label now keeps its own probability, missing only where
it has no sigmoid."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pytest

import filterkit
from filterkit.testing import run_filterkit

LABEL_SETS = Path(__file__).parent / "data" / "multilabel" / "three-labels-synthetic.arff"


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    path = tmp_path_factory.mktemp("rare") / "model.json"
    trained = run_filterkit("train", "-q", "--jobs", "1", "-o", path, "--svm-threshold", "f1", LABEL_SETS, "words")
    assert trained.status == 0, trained.stderr
    return path


def test_predict_writes_each_label_s_probability_and_none_for_the_label_without_a_sigmoid(model):
    predicted = run_filterkit("predict", model, LABEL_SETS)
    assert predicted.status == 0, predicted.stderr
    rows = list(csv.DictReader(io.StringIO(predicted.stdout.decode())))
    assert {"probability:use::editing", "probability:b", "probability:rare"} <= set(rows[0])
    assert all(row["probability:rare"] == "" for row in rows)
    for label in ("use::editing", "b"):
        probabilities = np.array([float(row[f"probability:{label}"]) for row in rows])
        assert ((probabilities > 0) & (probabilities < 1)).all()
        decisions = np.array([float(row[f"decision:{label}"]) for row in rows])
        assert (np.diff(probabilities[np.argsort(decisions)]) >= 0).all()  # a sigmoid of the decision


def test_the_labels_predicted_are_those_whose_probability_reaches_its_cut(model):
    loaded = filterkit.load_model(model)
    thresholds = loaded.thresholds()
    documents = [line.rsplit(",", 1)[1].strip("'") for line in LABEL_SETS.read_text().split("@data\n")[1].splitlines()]
    probabilities = loaded.predict_proba(documents)
    assert probabilities.shape == (len(documents), 3) and np.isnan(probabilities[:, 2]).all()
    predicted = loaded.predict(documents)
    for j, label in enumerate(("use::editing", "b")):
        assert [label in labels for labels in predicted] == list(probabilities[:, j] >= thresholds[j])


def test_explain_shows_the_probability_each_threshold_is_compared_with(model):
    explained = run_filterkit("explain", model, LABEL_SETS, "--top", "1")
    assert explained.status == 0, explained.stderr
    lines = [
        line for line in explained.stdout.decode().splitlines() if line.lstrip().startswith(("why b", "why not b"))
    ]
    assert lines and all(", probability " in line and ", threshold " in line for line in lines)
