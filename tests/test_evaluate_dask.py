"""``evaluate --engine dask [--scheduler ADDRESS]`` (issue 40, item 4): every fit (task × fold × chain ×
fraction; the classifier's inner C grid inside it) is a task on a Dask cluster, with the numbers of
``--jobs 1``; a fault in a task is the run's one error line.  Multi-label data (issue 76, item 3) runs there
too, a task per (fold, chain) as ``--jobs`` splits it, with the bytes of ``--jobs 1`` and ``--jobs 2``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import filterkit
from chain_helpers import REAL

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("dask_distributed")]  # a Dask cluster

IRIS = REAL / "iris.arff"
REUTERS = Path(__file__).parent / "data" / "multilabel" / "reuters-grain-corn.arff"
RUN = ("evaluate", "-q", "--json", "--folds", "3", "--svm-c-values", "0.1,1", "--svm-inner-folds", "2")
RUN += ("--each-class", "--min-positives", "10", "--stats", "--repeats", "2", "--train-fraction", "0.5,1")
CHAINS = ("--compare", IRIS, "minmax", "bns l2")
#: A short multi-label run: Reuters grain and corn (MEKA's -C), two chains, a small C grid.
LABELS_RUN = ("evaluate", "-q", "--json", "--folds", "3", "--svm-c-values", "0.1,1", "--svm-inner-folds", "2")
LABEL_CHAINS = ("--compare", REUTERS, "words --lowercase l2", "words --lowercase bns l2")


def test_evaluate_on_dask_prints_the_json_of_one_process(run_filterkit, dask_scheduler):
    here = run_filterkit(*RUN, "--jobs", "1", *CHAINS)
    assert here.status == 0, here.stderr
    on_dask = run_filterkit(*RUN, "--engine", "dask", "--scheduler", dask_scheduler, *CHAINS)
    assert on_dask.status == 0, on_dask.stderr
    assert on_dask.stdout == here.stdout
    assert b'"f1_fold_mean"' in here.stdout


def test_evaluate_on_a_local_dask_cluster_as_a_library_call():
    from filterkit.evaluation import ChainSpec, Settings, evaluate

    settings = Settings(folds=2, positive="Iris-versicolor", classifier_params={"c_values": "1", "inner_folds": 2})
    chains = [ChainSpec("minmax", [("minmax", {})])]
    assert evaluate(IRIS, chains, settings, engine="dask").json() == evaluate(IRIS, chains, settings).json()


def test_a_fault_in_a_task_is_the_one_error_line_of_a_local_run(run_filterkit, dask_scheduler, tmp_path):
    # Class c has 1 row: the training fold of its test fold holds none.
    rows = ["1,a", "2,a", "3,a", "4,b", "5,b", "6,b", "7,c"]
    path = tmp_path / "small.arff"
    path.write_text("@relation s\n@attribute x numeric\n@attribute c {a,b,c}\n@data\n" + "\n".join(rows) + "\n")
    arguments = ("evaluate", "-q", "--folds", "3", "--positive", "c", path, "minmax")
    here = run_filterkit(*arguments)
    on_dask = run_filterkit(*arguments[:2], "--engine", "dask", "--scheduler", dask_scheduler, *arguments[2:])
    assert here.status == on_dask.status == 1
    assert on_dask.stderr == here.stderr and on_dask.stderr.count("\n") == 1
    assert on_dask.stdout == b""


def test_engine_options_are_checked_before_any_work(run_filterkit):
    for extra, message in (
        (("--scheduler", "tcp://127.0.0.1:1"), b"--scheduler and --workers need --engine dask"),
        (("--workers", "2"), b"--scheduler and --workers need --engine dask"),
        (("--engine", "dask", "--scheduler", "tcp://127.0.0.1:1", "--workers", "2"), b"which --scheduler replaces"),
        (("--engine", "dask", "--jobs", "2"), b"--jobs and --engine dask"),
    ):
        result = run_filterkit("evaluate", "-q", *extra, IRIS, "minmax")
        assert result.status == 2 and message in result.stderr.encode()


def local_label_runs(run_filterkit, *options) -> bytes:
    """The JSON of the multi-label run with ``options`` in one process, checked to be that of two."""
    one = run_filterkit(*LABELS_RUN, *options, "--jobs", "1", *LABEL_CHAINS)
    assert one.status == 0, one.stderr
    assert run_filterkit(*LABELS_RUN, *options, "--jobs", "2", *LABEL_CHAINS).stdout == one.stdout
    return one.stdout


@pytest.mark.parametrize(
    "options",
    [(), ("--chain-per-label", "--threshold", "pcut"), ("--svm-threshold", "f1")],
    ids=["once", "per-label-pcut", "f1-cut"],
)
def test_multi_label_evaluate_on_a_scheduler_prints_the_json_of_one_and_two_processes(
    run_filterkit, dask_scheduler, options
):
    here = local_label_runs(run_filterkit, *options)
    on_dask = run_filterkit(*LABELS_RUN, *options, "--engine", "dask", "--scheduler", dask_scheduler, *LABEL_CHAINS)
    assert on_dask.status == 0, on_dask.stderr
    assert on_dask.stdout == here
    document = json.loads(here)
    assert [len(entry["per_label"]["corn"]["C"]) for entry in document["results"]] == [3, 3]
    assert document["settings"]["chain_fitted"] == ("per label" if "--chain-per-label" in options else "once")


def test_mulan_labels_on_local_clusters_of_one_and_three_workers(run_filterkit, tmp_path):
    mulan = tmp_path / "reuters.arff"
    mulan.write_text(REUTERS.read_text(encoding="utf-8").replace(": -C 2'", "'"), encoding="utf-8")
    xml = tmp_path / "reuters.xml"
    xml.write_text('<labels><label name="grain"/><label name="corn"/></labels>')
    run = (*LABELS_RUN, "--labels", xml)
    chains = ("--compare", mulan, *LABEL_CHAINS[2:])
    here = run_filterkit(*run, "--jobs", "1", *chains)
    assert here.status == 0, here.stderr
    for workers in ("1", "3"):
        on_dask = run_filterkit(*run, "--engine", "dask", "--workers", workers, *chains)
        assert on_dask.status == 0, on_dask.stderr
        assert on_dask.stdout == here.stdout, workers
    assert json.loads(here.stdout)["settings"]["labels"] == ["grain", "corn"]


def test_label_issues_of_a_label_set_on_dask_are_those_of_one_process(run_filterkit, dask_scheduler, tmp_path):
    found = {}
    for engine in (("--jobs", "1"), ("--engine", "dask", "--scheduler", dask_scheduler)):
        path = tmp_path / f"issues-{engine[0]}.csv"
        result = run_filterkit(*LABELS_RUN, *engine, "--label-issues", path, REUTERS, "words", "--lowercase", "l2")
        assert result.status == 0, result.stderr
        found[engine[0]] = (result.stdout, path.read_bytes())
    assert found["--engine"] == found["--jobs"]
    assert found["--jobs"][1].count(b"\n") > 1  # a header and rows


def test_workers_with_another_version_of_the_classifier_are_refused_before_any_fit(
    run_filterkit, dask_scheduler, newer_svm_here
):
    result = run_filterkit(*LABELS_RUN, "--engine", "dask", "--scheduler", dask_scheduler, *LABEL_CHAINS)
    version = re.escape(filterkit.__version__)
    assert result.status == 1 and result.stdout == b""
    assert re.fullmatch(
        rf"filterkit: error: Dask worker tcp://[0-9.]+:[0-9]+ has classifier 'svm' from plugin 'classifiers', "
        rf"distribution 'filterkit-arff {version}', the client from plugin 'classifiers', distribution "
        rf"'filterkit-arff {version}\.client'; install the same version everywhere\n",
        result.stderr,
    ), result.stderr


def test_tasks_read_the_files_options_name_as_the_client_read_them(
    run_filterkit, dask_scheduler, tmp_path, monkeypatch
):
    # The paths are relative to the client's folder, which is not the workers' (they started before the chdir):
    # a task that opened them on its worker's file system would not find them.
    monkeypatch.chdir(tmp_path)
    Path("costs.cost").write_text("% iris: a virginica taken for a versicolor costs 5\n3 3\n0 1 1\n1 0 1\n1 5 0\n")
    Path("stop.txt").write_text("the\nof\nand\nsaid\n")
    runs = [
        (
            "evaluate",
            "-q",
            "--json",
            "--folds",
            "3",
            "--multiclass",
            "--svm-c-values",
            "1",
            "--svm-costs",
            "costs.cost",
        ),
        ("evaluate", "-q", "--json", "--folds", "3", "--svm-c-values", "1", "--svm-inner-folds", "2"),
    ]
    chains = [(IRIS, "minmax"), (REUTERS, "words", "--lowercase", "--stopwords", "stop.txt", "l2")]
    found = []
    for run, chain in zip(runs, chains):
        here = run_filterkit(*run, *chain)
        assert here.status == 0, here.stderr
        on_dask = run_filterkit(*run, "--engine", "dask", "--scheduler", dask_scheduler, *chain)
        assert on_dask.status == 0, on_dask.stderr
        assert on_dask.stdout == here.stdout
        found.append(json.loads(here.stdout))
    costs = found[0]["results"][0]["costs"]
    assert costs["rows"] == 150 and costs["total"] == sum(costs["per_fold"]) > 0
