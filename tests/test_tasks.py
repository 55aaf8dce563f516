"""The task seam (issue 73, item 4): the data and settings decide the task once (``filterkit.tasks.task_of``),
the task draws its folds, and every task's evaluation is one ``Evaluation`` whose renderings read its document."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from chain_helpers import REAL
from filterkit import reports
from filterkit.arff.reader import read_arff
from filterkit.errors import FilterkitError
from filterkit.evaluation import ChainSpec, Evaluation, Settings, evaluate
from filterkit.tasks import BINARY, LABEL_SET, MULTICLASS, iterative_stratification, stratified_folds, task_of

REUTERS = Path(__file__).parent / "data" / "multilabel" / "reuters-grain-corn.arff"


def test_a_class_makes_a_binary_task_or_with_multiclass_one_of_every_class():
    schema, _ = read_arff(str(REAL / "iris.arff"))
    assert task_of(schema, Settings()).kind == BINARY
    assert task_of(schema, Settings(multiclass=True)).kind == MULTICLASS


def test_meka_s_relation_makes_a_label_set_of_its_target_attributes():
    schema, _ = read_arff(str(REUTERS))
    task = task_of(schema, Settings())
    assert (task.kind, task.targets, task.named) == (LABEL_SET, ("grain", "corn"), None)


def test_a_label_set_option_on_a_class_is_refused_when_the_task_is_decided():
    schema, _ = read_arff(str(REAL / "iris.arff"))
    with pytest.raises(FilterkitError, match="--threshold pcut needs multi-label data"):
        task_of(schema, Settings(threshold="pcut"))


def test_a_task_draws_stratified_folds_of_a_class_and_iterative_ones_of_a_label_set():
    codes = np.repeat([0, 1, 2], [30, 20, 10])
    drawn = task_of(read_arff(str(REAL / "iris.arff"))[0], Settings()).folds(codes, 5, 3)
    for (train, test), (expected_train, expected_test) in zip(drawn, stratified_folds(codes, 5, 3)):
        np.testing.assert_array_equal(train, expected_train)
        np.testing.assert_array_equal(test, expected_test)
    schema, chunk = read_arff(str(REUTERS))
    truth = np.column_stack([chunk.column(schema.index_of(label)) == 1 for label in ("grain", "corn")])
    fold_of_row = iterative_stratification(truth, 5, 7)
    for fold, (train, test) in enumerate(task_of(schema, Settings()).folds(truth, 5, 7)):
        np.testing.assert_array_equal(test, np.flatnonzero(fold_of_row == fold))
        np.testing.assert_array_equal(train, np.flatnonzero(fold_of_row != fold))


def test_one_evaluate_and_one_evaluation_serve_a_label_set_and_its_document_read_back_renders_the_same():
    chains = [ChainSpec("words l2", [("words", {}), ("l2", {})])]
    result = evaluate(str(REUTERS), chains, Settings(folds=3))
    assert type(result) is Evaluation and result.document["settings"]["labels"] == ["grain", "corn"]
    read_back = json.loads(result.json())
    assert reports.table(read_back) == result.table()
