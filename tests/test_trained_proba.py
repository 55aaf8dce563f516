"""``load_model(M).predict_proba`` answers as scikit-learn's classifiers do (issue 72 item 11a): a two-class
model gives one column per class, named by ``classes_``, the positive class last, so ``[:, 1]`` is its
probability; a multi-class model a column per class."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest
from test_trained import FAST, GRAIN_SAMPLE, OH0, WORDS, split_file

import filterkit
import filterkit.sklearn

IRIS = OH0.parent / "iris.arff"


@pytest.fixture(scope="module")
def grain(tmp_path_factory):
    """A two-class model of Reuters grain documents (positive '1'), its test documents and its predictions."""
    from filterkit.cli import run

    folder = tmp_path_factory.mktemp("grain")
    train_path, test_path = split_file(folder, GRAIN_SAMPLE)
    model = folder / "model.json"
    assert run(["train", "-q", "-o", str(model), *FAST, "--positive", "1", str(train_path), *WORDS, "l2"]) == 0
    documents = [row[0] for row in filterkit.sklearn.load(test_path, as_frame=False)[0]]
    return filterkit.load_model(model), documents, test_path, model


def test_a_two_class_model_s_probabilities_are_a_column_per_class_the_positive_last(grain, capsysbinary):
    from filterkit.cli import run

    model, documents, test_path, model_path = grain
    probabilities = model.predict_proba(documents)
    assert probabilities.shape == (len(documents), 2)
    assert model.classes_ == ("0", "1")
    capsysbinary.readouterr()
    assert run(["predict", str(model_path), str(test_path)]) == 0
    rows = list(csv.DictReader(io.StringIO(capsysbinary.readouterr().out.decode())))
    assert probabilities[:, 1].tolist() == [float(row["probability"]) for row in rows]
    by_decision = probabilities[np.argsort(model.decision_function(documents), kind="stable"), 1]
    assert (np.diff(by_decision) >= 0).all() and np.allclose(probabilities.sum(axis=1), 1)  # Platt's is monotone
    decided = np.asarray(model.classes_)[np.argmax(probabilities, axis=1)]
    assert decided.tolist() == model.predict(documents) == [row["label"] for row in rows]
    assert model.predict_proba([]).shape == (0, 2)


def test_a_one_vs_rest_model_names_the_rest_as_its_answers_do(run_filterkit, tmp_path):
    model_path = tmp_path / "model.json"
    result = run_filterkit("train", "-q", "-o", model_path, *FAST, "--positive", "Iris-setosa", IRIS, "l2")
    assert result.status == 0, result.stderr
    model = filterkit.load_model(model_path)
    assert model.classes_ == ("not Iris-setosa", "Iris-setosa")
    rows = [{"sepallength": 5.1, "sepalwidth": 3.5, "petallength": 1.4, "petalwidth": 0.2}]
    assert model.predict_proba(rows)[0, 1] > 0.5 and model.predict(rows) == ["Iris-setosa"]


def test_a_multi_class_model_s_probabilities_are_a_column_per_class(run_filterkit, tmp_path):
    model_path = tmp_path / "model.json"
    assert run_filterkit("train", "-q", "-o", model_path, *FAST, "--multiclass", IRIS, "l2").status == 0
    model = filterkit.load_model(model_path)
    rows = [{"sepallength": 5.1, "sepalwidth": 3.5, "petallength": 1.4, "petalwidth": 0.2}]
    assert model.classes_ == ("Iris-setosa", "Iris-versicolor", "Iris-virginica")
    probabilities = model.predict_proba(rows)
    assert probabilities.shape == (1, 3)
    assert model.classes_[int(np.argmax(probabilities[0]))] == model.predict(rows)[0] == "Iris-setosa"


def test_the_readme_s_model_decides_by_the_probability_not_the_margin_s_sign(run_filterkit, tmp_path):
    train_path, test_path, model = tmp_path / "train.arff", tmp_path / "test.arff", tmp_path / "ethics.model.json"
    assert run_filterkit("-o", train_path, OH0, "fold", "--fold", "1", "--of", "5", "--invert").status == 0
    assert run_filterkit("-o", test_path, OH0, "fold", "--fold", "1", "--of", "5").status == 0
    assert run_filterkit("train", "-q", "--positive", "Ethics", "-o", model, train_path).status == 0
    explained = run_filterkit("explain", "--top", "3", model, test_path).stdout.decode()
    assert "\nrow 2: Ethics (decision -0.329805, probability 0.9993)\n" in explained  # the README's
    rows = list(csv.DictReader(io.StringIO(run_filterkit("predict", model, test_path).stdout.decode())))
    probabilities = np.array([float(row["probability"]) for row in rows])
    assert [row["label"] == "Ethics" for row in rows] == (probabilities >= 0.5).tolist()
    assert max(float(row["decision"]) for row in rows) < 0  # every margin negative, Ethics rows too
    truth = filterkit.sklearn.load_arff(test_path)[1] == "Ethics"
    assert truth[probabilities > 0.99].all() and not truth[probabilities < 0.1].any()
