"""``evaluate --engine dask [--scheduler ADDRESS]`` (issue 40, item 4): every fit (task × fold × chain ×
fraction; the classifier's inner C grid inside it) is a task on a Dask cluster, with the numbers of
``--jobs 1``; a fault in a task is the run's one error line."""

from __future__ import annotations

import pytest

from chain_helpers import REAL

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("dask_distributed")]  # a Dask cluster

IRIS = REAL / "iris.arff"
RUN = ("evaluate", "-q", "--json", "--folds", "3", "--svm-c-values", "0.1,1", "--svm-inner-folds", "2")
RUN += ("--each-class", "--min-positives", "10", "--stats", "--repeats", "2", "--train-fraction", "0.5,1")
CHAINS = ("--compare", IRIS, "minmax", "bns l2")


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
