"""``train --engine dask [--scheduler ADDRESS | --workers N]`` (issue 76, item 3): the model selection's fits (a
candidate's fold, its inner C search inside it; with ``--search flat`` a candidate's fold and each C's SVMs on it)
are tasks on a Dask cluster, the kept chain's final fit is made on the client, and the model file is the bytes of
``--engine local``'s: binary, multi-class and a label set, the default candidates and a user's chains."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from chain_helpers import REAL
from filterkit.evaluation import ChainSpec, Settings
from filterkit.plugins import load_plugins

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("dask_distributed")]  # a Dask cluster

IRIS = REAL / "iris.arff"
GRAIN_SAMPLE = REAL / "reuters_grain_sample.arff"
REUTERS = Path(__file__).parent / "data" / "multilabel" / "reuters-grain-corn.arff"
FAST = ("--folds", "3", "--svm-c-values", "0.1,1,10")
#: Inner folds, which the nested search has and the flat one (--search flat, auto's on k classes) refuses.
INNER = ("--svm-inner-folds", "3")
USER_CHAINS = ("--compare", "words --lowercase l2", "words --lowercase bns l2")


def models(run_filterkit, folder: Path, engines: dict, options: tuple, data: Path, chains: tuple) -> dict:
    """Each engine's (name: its options) model file of ``train`` with ``options`` on ``data`` and ``chains`` (the
    candidates: ``--compare`` and chains, or none), as bytes."""
    written = {}
    for engine, placed in engines.items():
        path = folder / f"{engine}.json"
        inner = () if "flat" in options or options == ("--multiclass",) else INNER
        arguments = (*FAST, *inner, *options, *placed, *chains[:1], data, *chains[1:])
        result = run_filterkit("train", "-q", "-o", path, *arguments)
        assert result.status == 0, (engine, result.stderr)
        written[engine] = path.read_bytes()
    return written


def on_scheduler(address: str) -> tuple:
    """The options of a run on the scheduler at ``address``."""
    return ("--engine", "dask", "--scheduler", address)


@pytest.mark.parametrize(
    "options, data, chains, measure",
    [
        (("--positive", "1"), GRAIN_SAMPLE, (), "auc"),
        (("--positive", "1"), GRAIN_SAMPLE, USER_CHAINS, "auc"),
        (("--search", "nested", "--multiclass"), IRIS, (), "macro_auc"),
        ((), REUTERS, USER_CHAINS, "micro_f1"),
        (("--search", "flat", "--positive", "1"), GRAIN_SAMPLE, USER_CHAINS, "auc"),
        (("--multiclass",), IRIS, (), "macro_auc"),
    ],
    ids=["binary-default", "binary-chains", "multiclass-nested", "labels-chains", "flat-binary", "multiclass-default"],
)
def test_a_model_selected_on_a_scheduler_is_the_local_engine_s_file(
    run_filterkit, dask_scheduler, tmp_path, options, data, chains, measure
):
    engines = {"local": ("--jobs", "1"), "dask": on_scheduler(dask_scheduler)}
    written = models(run_filterkit, tmp_path, engines, options, data, chains)
    assert written["dask"] == written["local"]
    candidates = json.loads(written["local"])["classifier"]["candidates"]
    assert len(candidates) == (len(chains) - 1 if chains else {"auc": 4, "macro_auc": 3}[measure])
    assert {candidate["measure"] for candidate in candidates} == {measure}
    searched_flat = "flat" in options or options == ("--multiclass",)  # --search auto: flat on k classes
    assert ("C" in candidates[0]) == searched_flat


def test_local_clusters_of_one_and_three_workers_train_the_model_of_two_processes(run_filterkit, tmp_path):
    engines = {
        "two-processes": ("--jobs", "2"),
        "one-worker": ("--engine", "dask", "--workers", "1"),
        "three-workers": ("--engine", "dask", "--workers", "3"),
    }
    written = models(run_filterkit, tmp_path, engines, ("--search", "nested", "--multiclass"), IRIS, ())
    assert written["one-worker"] == written["three-workers"] == written["two-processes"]
    flat = models(run_filterkit, tmp_path, engines, ("--search", "flat", "--positive", "1"), GRAIN_SAMPLE, USER_CHAINS)
    assert flat["three-workers"] == flat["two-processes"]


def test_one_chain_and_the_nested_search_start_no_cluster(run_filterkit, tmp_path):
    model = tmp_path / "m.json"
    # No scheduler listens here: the one chain is fitted on the client, with nothing to score.
    result = run_filterkit(
        "train", "-q", "-o", model, *FAST, *INNER, *on_scheduler("tcp://127.0.0.1:1"), "--multiclass", IRIS, "l2"
    )
    assert result.status == 0, result.stderr
    assert json.loads(model.read_text())["classifier"]["chain"] == "l2"


@pytest.mark.parametrize("search", ["nested", "flat"])
def test_a_fault_in_a_task_is_the_one_error_line_of_a_local_run_and_writes_no_model(
    run_filterkit, dask_scheduler, tmp_path, search
):
    # Class c has 1 row: the training fold of its test fold holds none.
    rows = ["1,a", "2,a", "3,a", "4,b", "5,b", "6,b", "7,c"]
    path = tmp_path / "small.arff"
    path.write_text("@relation s\n@attribute x numeric\n@attribute c {a,b,c}\n@data\n" + "\n".join(rows) + "\n")
    model = tmp_path / "m.json"
    arguments = (
        "-o",
        model,
        "--folds",
        "3",
        "--search",
        search,
        "--positive",
        "c",
        "--compare",
        path,
        "minmax l2",
        "l2 minmax",
    )
    here = run_filterkit("train", "-q", *arguments)
    on_dask = run_filterkit("train", "-q", *on_scheduler(dask_scheduler), *arguments)
    assert here.status == on_dask.status == 1
    assert on_dask.stderr == here.stderr and on_dask.stderr.count("\n") == 1
    assert "a training fold holds no row of class 'c'" in on_dask.stderr
    assert not model.exists()


def test_a_library_call_on_dask_trains_the_local_model(tmp_path):
    from filterkit.training import train

    registry = load_plugins()
    settings = Settings(multiclass=True, classifier_params={"c_values": "0.1,1"})  # flat: no inner folds
    chains = [ChainSpec("l2", [("l2", {})]), ChainSpec("minmax", [("minmax", {})])]
    saved = []
    for engine in ("local", "dask"):
        model = train(str(IRIS), chains, settings, registry, candidate_folds=3, engine=engine, workers=2)
        model.save(str(tmp_path / f"{engine}.json"))
        saved.append((tmp_path / f"{engine}.json").read_bytes())
    assert saved[0] == saved[1]


def test_the_public_train_reaches_the_engine_and_the_flat_search(tmp_path):
    import filterkit

    options = {"multiclass": True, "classifier_params": {"c_values": "0.1,1"}}  # flat: no inner folds
    saved = {}
    for name, placed in {"local": {}, "dask": {"engine": "dask", "workers": 2}, "jobs": {"jobs": 2}}.items():
        filterkit.train(str(IRIS), ["l2", "minmax"], **placed, **options).save(str(tmp_path / f"{name}.json"))
        saved[name] = (tmp_path / f"{name}.json").read_bytes()
    assert saved["local"] == saved["dask"] == saved["jobs"]
    flat = filterkit.train(str(IRIS), ["l2", "minmax"], search="flat", **options)
    flat.save(str(tmp_path / "flat.json"))
    assert json.loads((tmp_path / "flat.json").read_text())["classifier"]["search"] == "flat"


@pytest.mark.parametrize(
    "extra, message",
    [
        (("--scheduler", "tcp://127.0.0.1:1"), "--scheduler and --workers need --engine dask"),
        (("--workers", "2"), "--scheduler and --workers need --engine dask"),
        (("--engine", "dask", "--scheduler", "tcp://127.0.0.1:1", "--workers", "2"), "which --scheduler replaces"),
        (("--engine", "dask", "--jobs", "2"), "--jobs and --engine dask both say where the fits run: give one"),
    ],
)
def test_engine_options_that_do_not_fit_are_usage_errors_before_any_work(run_filterkit, tmp_path, extra, message):
    model = tmp_path / "m.json"
    result = run_filterkit("train", "-q", "-o", model, *extra, "--multiclass", IRIS, "l2")
    assert result.status == 2 and message in result.stderr
    assert not model.exists()


@pytest.mark.parametrize(
    "placed, message",
    [
        ({"engine": "dsak"}, "engine must be 'local' or 'dask', not 'dsak'"),
        ({"workers": 2}, "scheduler and workers need engine='dask'"),
        ({"engine": "dask", "scheduler": "tcp://127.0.0.1:1", "workers": 2}, "give scheduler or workers, not both"),
        ({"jobs": 0}, "jobs and workers count processes: 1 or more"),
        ({"engine": "dask", "workers": 0}, "jobs and workers count processes: 1 or more"),
    ],
)
def test_the_public_train_refuses_placements_the_command_refuses(placed, message):
    import filterkit

    with pytest.raises(ValueError, match=f"^{re.escape(message)}"):
        filterkit.train(str(IRIS), ["l2"], multiclass=True, **placed)


def test_selection_tasks_read_the_client_s_option_files(run_filterkit, dask_scheduler, tmp_path, monkeypatch):
    # Relative to the client's folder, not the workers' (started before the chdir): a task that opened the stop
    # words on its worker's file system would not find them.
    monkeypatch.chdir(tmp_path)
    Path("stop.txt").write_text("the\nof\nand\nsaid\n")
    chains = ("--compare", "words --lowercase --stopwords stop.txt l2", "words --stopwords stop.txt bns l2")
    engines = {"local": ("--jobs", "1"), "dask": on_scheduler(dask_scheduler)}
    written = models(run_filterkit, tmp_path, engines, ("--positive", "1"), GRAIN_SAMPLE, chains)
    assert written["dask"] == written["local"]
    assert '"stopwords"' in written["local"].decode()
