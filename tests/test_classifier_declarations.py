"""Issue 73, item 3: a classifier declares what it provides (``multiclass``, ``saveable``, ``has_weights``,
``has_probabilities``) and filterkit reads the declaration, never calling a method to see what it gives; a
classifier method that raises is one error line naming the plugin.  The outside plugin wraps scikit-learn's
LogisticRegression, whose ``predict_proba`` refuses zero rows: the zero-row probe of ``train`` and ``predict``
crashed on it with a traceback."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pytest

import filterkit
from chain_helpers import REAL
from filterkit.errors import FilterkitError

IRIS = REAL / "iris.arff"
OUTSIDE = Path(__file__).resolve().parent / "plugins_fixtures" / "outside_classifiers"
ORIGIN = f"(plugin 'logistic ({OUTSIDE / 'logistic.py'})', distribution 'plugins-dir {OUTSIDE}')"
TASK = ("--positive", "Iris-setosa")
ROWS = [{"sepallength": 5.1, "sepalwidth": 3.5, "petallength": 1.4, "petalwidth": 0.2}, {"petallength": 5.0}]


def trained(run_filterkit, tmp_path, classifier: str) -> Path:
    model = tmp_path / "model.json"
    result = run_filterkit(
        "train", "-q", "-o", model, "--classifier", classifier, *TASK, IRIS, "l2", plugins_dir=OUTSIDE
    )
    assert result.status == 0, result.stderr
    return model


def refused(run_filterkit, tmp_path, command: str, model: Path) -> str:
    """The one error line of ``command`` on ``model``, which writes no output."""
    written = tmp_path / "out.csv"
    result = run_filterkit(command, "-o", written, model, IRIS, plugins_dir=OUTSIDE)
    assert (result.status, written.exists()) == (1, False)
    assert result.stderr.startswith("filterkit: error: ") and result.stderr.count("\n") == 1
    return result.stderr


def test_a_logistic_regression_that_declares_probabilities_trains_predicts_and_evaluates(run_filterkit, tmp_path):
    model = trained(run_filterkit, tmp_path, "logistic")
    result = run_filterkit("predict", model, IRIS, plugins_dir=OUTSIDE)
    assert result.status == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout.decode())))
    assert list(rows[0]) == ["row", "label", "decision", "probability"] and len(rows) == 150
    decisions = np.array([float(row["decision"]) for row in rows])  # its scores: it declares no weights
    assert np.array([float(row["probability"]) for row in rows]) == pytest.approx(1 / (1 + np.exp(-decisions)))
    assert [row["label"] for row in rows] == ["Iris-setosa" if d > 0 else "not Iris-setosa" for d in decisions]
    loaded = filterkit.load_model(model, filterkit.plugins.load_plugins(OUTSIDE))
    assert loaded.predict_proba(ROWS)[:, 1] == pytest.approx(1 / (1 + np.exp(-loaded.decision_function(ROWS))))
    evaluated = run_filterkit("evaluate", "-q", "--classifier", "logistic", *TASK, IRIS, "l2", plugins_dir=OUTSIDE)
    assert evaluated.status == 0, evaluated.stderr
    assert refused(run_filterkit, tmp_path, "explain", model) == (
        "filterkit: error: classifier 'logistic' is not linear: its decisions cannot be explained\n"
    )


def test_probabilities_that_raise_are_one_error_line_naming_the_plugin(run_filterkit, tmp_path):
    model = trained(run_filterkit, tmp_path, "badproba")  # train asks for no probability
    failed = f"classifier 'badproba' {ORIGIN} failed during probabilities: RuntimeError: no probabilities today"
    assert refused(run_filterkit, tmp_path, "predict", model) == f"filterkit: error: {failed}\n"
    loaded = filterkit.load_model(model, filterkit.plugins.load_plugins(OUTSIDE))
    assert loaded.predict(ROWS) == ["Iris-setosa", "not Iris-setosa"]
    with pytest.raises(FilterkitError) as raised:
        loaded.predict_proba(ROWS)
    assert str(raised.value) == failed
    evaluated = run_filterkit("evaluate", "-q", "--classifier", "badproba", *TASK, IRIS, "l2", plugins_dir=OUTSIDE)
    assert evaluated.status == 0, evaluated.stderr
    assert "is not linear" in refused(run_filterkit, tmp_path, "explain", model)
