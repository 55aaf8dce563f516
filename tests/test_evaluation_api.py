"""``filterkit.evaluation.evaluate`` (issue 38, item 4): the command's evaluation as one call from Python,
rendered as the table, the JSON and the HTML report with the command's very bytes; and ``--jobs`` starts
no more worker processes than there are fits (issue 37, item 13)."""

from __future__ import annotations

import importlib.util
import io

import pytest

from chain_helpers import REAL, read_bytes
from filterkit import reports
from filterkit.evaluation import ChainSpec, Evaluation, Settings, evaluate
from filterkit.sources import MemorySource

IRIS = REAL / "iris.arff"
COMMAND = ("--folds", "3", "--svm-c-values", "1", "--svm-inner-folds", "2", "--each-class", "--min-positives", "10")
COMMAND += ("--stats", "--train-fraction", "0.5,1")
SETTINGS = dict(folds=3, train_fractions=(0.5, 1.0), each_class=True, min_positives=10, stats=True)
SETTINGS.update(classifier_params={"c_values": "1", "inner_folds": 2})
CHAINS = [ChainSpec("minmax", [("minmax", {})]), ChainSpec("bns l2", [("bns", {}), ("l2", {})])]


@pytest.mark.slow
def test_an_evaluation_from_python_renders_as_the_command_prints_and_writes(run_filterkit, tmp_path):
    result = evaluate(IRIS, CHAINS, Settings(**SETTINGS), name=str(IRIS))
    assert isinstance(result, Evaluation) and len(result.document["results"]) == 2 * 3 * 2
    assert result.document["settings"]["input"] == str(IRIS)
    as_json = run_filterkit("evaluate", "-q", "--json", *COMMAND, "--compare", IRIS, "minmax", "bns l2")
    assert as_json.status == 0, as_json.stderr
    assert result.json() + "\n" == as_json.stdout.decode()
    page = tmp_path / "r.html"
    arguments = ("evaluate", "-q", *COMMAND, "--per-task", "--compare", IRIS, "minmax", "bns l2")
    if importlib.util.find_spec("matplotlib") is not None:
        arguments = (*arguments[:2], "--report", page, *arguments[2:])
    as_table = run_filterkit(*arguments)
    assert as_table.status == 0, as_table.stderr
    assert result.table(per_task=True) == as_table.stdout.decode()
    assert "bns l2 [Iris-virginica]" in result.table(per_task=True)
    if importlib.util.find_spec("matplotlib") is not None:
        assert result.html(per_task=True) == page.read_text(encoding="utf-8")


def test_a_source_in_memory_is_evaluated_like_its_file():
    schema, data = read_bytes(IRIS.read_bytes())
    settings = Settings(folds=2, positive="Iris-versicolor", classifier_params={"c_values": "1", "inner_folds": 2})
    from_memory = evaluate(MemorySource(schema, data), CHAINS[:1], settings, name="rows")
    unnamed = evaluate(MemorySource(schema, data), CHAINS[:1], settings)
    assert unnamed.document["settings"]["input"] == "<data>"
    from_file = evaluate(IRIS, CHAINS[:1], settings)
    assert from_memory.document["settings"]["input"] == "rows"
    assert from_file.document["settings"]["input"] == str(IRIS)
    assert from_memory.document["per_fold"] == from_file.document["per_fold"]
    assert from_memory.table().splitlines()[2].split()[0] == "minmax"
    assert reports.table(from_memory.document) == from_memory.table()


@pytest.mark.parametrize("folds, jobs, processes", [(2, 8, [2]), (3, 2, [2]), (2, 1, [])])
def test_jobs_are_capped_at_the_number_of_fits(monkeypatch, folds, jobs, processes):
    from filterkit.lent_workers import WorkerPool

    asked = []

    def results(pool, function, calls):  # the processes asked for recorded; the fits run here
        asked.append(pool.jobs)
        return (function(*call) for call in calls)

    monkeypatch.setattr(WorkerPool, "results", results)
    settings = Settings(folds=folds, positive="Iris-setosa", classifier_params={"c_values": "1", "inner_folds": 2})
    result = evaluate(IRIS, CHAINS[:1], settings, jobs=jobs)
    assert asked == processes
    assert len(result.document["per_fold"]["auc"]) == folds


@pytest.mark.slow
def test_worker_processes_give_the_same_document_as_this_process():
    settings = Settings(
        folds=2, each_class=True, min_positives=10, classifier_params={"c_values": "1", "inner_folds": 2}
    )
    alone = evaluate(IRIS, CHAINS, settings)
    assert evaluate(IRIS, CHAINS, settings, jobs=2).json() == alone.json()


def test_a_path_is_opened_as_the_command_opens_it_standard_input_included(monkeypatch):
    settings = Settings(folds=2, positive="Iris-versicolor", classifier_params={"c_values": "1", "inner_folds": 2})
    from_file = evaluate(IRIS, CHAINS[:1], settings)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(IRIS.read_bytes())))
    from_stdin = evaluate("-", CHAINS[:1], settings)
    assert from_stdin.document["settings"]["input"] == "-"
    assert from_stdin.document["per_fold"] == from_file.document["per_fold"]
