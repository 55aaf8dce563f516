"""``--engine dask`` checks its workers before fitting (issue 15): every worker must run the
client's filterkit version and have each stage of the chain from the same plugin, distribution
and version, or the run stops with an error naming the worker and what differs."""

from __future__ import annotations

import os
import re

import pytest

import filterkit
from chain_helpers import FIXTURE_PLUGINS, REAL, STAGES_DIR, InventoryClient
from filterkit import installed
from filterkit.distributed import DaskEngine, worker_inventory
from filterkit.errors import FilterkitError
from filterkit.plugins import load_plugins
from filterkit.runner import Chain


def chain_of(*names, plugins_dir=None) -> Chain:
    registry = load_plugins(plugins_dir)
    return Chain([registry.make_stage(name, {}) for name in names])


def engine_with(inventories: dict, plugins_dir=None) -> DaskEngine:
    return DaskEngine(InventoryClient(inventories), plugins_dir, 1000)


def test_workers_with_the_client_s_plugins_pass():
    here = worker_inventory(None)
    engine_with({"tcp://a:1": here, "tcp://b:2": here}).check_workers(chain_of("shape", "bns", "l2"))


def test_a_worker_lacking_a_plugin_stage_is_named():
    chain = chain_of("l2", "meanscale", plugins_dir=STAGES_DIR)
    full = worker_inventory(str(STAGES_DIR))
    lacking = {**worker_inventory(None), "plugins_digest": full["plugins_digest"]}
    with pytest.raises(FilterkitError) as raised:
        engine_with({"tcp://a:1": full, "tcp://b:2": lacking}, str(STAGES_DIR)).check_workers(chain)
    assert str(raised.value) == (
        "Dask worker tcp://b:2 has no stage 'meanscale' "
        f"(the client has it from plugin 'meanscale ({STAGES_DIR / 'meanscale.py'})', "
        f"distribution 'plugins-dir {STAGES_DIR}'); install the plugin on every worker"
    )


def test_a_worker_with_another_version_of_a_plugin_is_named():
    inventory = worker_inventory(None)
    older = {**inventory, "stages": {**inventory["stages"], "l2": ["normalizers", "filterkit", "0.0.9"]}}
    with pytest.raises(FilterkitError) as raised:
        engine_with({"tcp://a:1": inventory, "tcp://b:2": older}).check_workers(chain_of("shape", "l2"))
    assert str(raised.value) == (
        "Dask worker tcp://b:2 has stage 'l2' from plugin 'normalizers', distribution 'filterkit 0.0.9', "
        f"the client from plugin 'normalizers', distribution 'filterkit-arff {filterkit.__version__}'; "
        "install the same version everywhere"
    )


def test_a_worker_reading_other_plugin_files_is_named(tmp_path):
    """A worker that ran a --plugins-dir plugin as it was before an edit (or read another copy of the folder)
    passed, for its plugin's name and folder were the client's."""
    (tmp_path / "meanscale.py").write_bytes((STAGES_DIR / "meanscale.py").read_bytes())
    chain = chain_of("meanscale", plugins_dir=tmp_path)
    before = worker_inventory(str(tmp_path))
    engine_with({"tcp://a:1": before}, str(tmp_path)).check_workers(chain)
    (tmp_path / "meanscale.py").write_bytes((STAGES_DIR / "meanscale.py").read_bytes() + b"# edited\n")
    with pytest.raises(FilterkitError, match=r"^Dask worker tcp://a:1 reads other plugin files in --plugins-dir "):
        engine_with({"tcp://a:1": before}, str(tmp_path)).check_workers(chain)
    assert worker_inventory(str(tmp_path))["plugins_digest"] != before["plugins_digest"]  # read again


def test_a_worker_with_another_filterkit_is_named():
    other = {**worker_inventory(None), "filterkit": "0.0.1"}
    with pytest.raises(FilterkitError, match=r"^Dask worker tcp://a:1 runs filterkit 0\.0\.1, the client "):
        engine_with({"tcp://a:1": other}).check_workers(chain_of("l2"))


@pytest.mark.parametrize("scheduler, runs", [("none", "has no filterkit"), ("0.0.1", "runs filterkit 0.0.1")])
def test_a_scheduler_without_the_client_s_filterkit_is_refused_before_any_task(scheduler, runs):
    """Dask's scheduler unpickles each task: one without filterkit (or another version) had failed the first with
    a traceback ("Error during deserialization of the task graph")."""
    here = worker_inventory(None)
    engine = DaskEngine(InventoryClient({"tcp://a:1": here}, scheduler), None, 1000)
    with pytest.raises(FilterkitError) as raised:
        engine.check_workers(chain_of("l2"))
    assert str(raised.value) == (
        f"the Dask scheduler {runs}, the client {filterkit.__version__}; it reads every task, so install the "
        "client's version there too"
    )


@pytest.fixture(scope="module")
def cluster():
    """A LocalCluster of one worker process."""
    distributed_module = pytest.importorskip(
        "dask.distributed", reason="Dask is not installed (pip install 'filterkit-arff[dask]')"
    )
    with distributed_module.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0"
    ) as local:
        yield local


@pytest.fixture
def iris_on_cluster(run_filterkit, cluster, tmp_path):
    """Run ``filterkit --engine dask -o TMP/out.arff iris.arff CHAIN…`` on the module's cluster."""

    def invoke(*chain, plugins_dir=None):
        return run_filterkit(
            "--engine",
            "dask",
            "--scheduler",
            cluster.scheduler_address,
            "-o",
            tmp_path / "out.arff",
            REAL / "iris.arff",
            *chain,
            plugins_dir=plugins_dir,
        )

    return invoke


@pytest.mark.slow
def test_a_real_cluster_is_checked_before_fitting(iris_on_cluster, monkeypatch, tmp_path, cluster):
    real_name_and_version = installed._name_and_version

    def patched(distribution):
        name, version = real_name_and_version(distribution)
        return name, version + ".client"

    monkeypatch.setattr(installed, "_name_and_version", patched)
    result = iris_on_cluster("minmax")
    worker = next(iter(cluster.workers.values())).worker_address
    assert (result.status, result.stdout) == (1, b"")
    assert result.stderr == (
        f"filterkit: error: Dask worker {worker} has stage 'minmax' from plugin 'normalizers', distribution "
        f"'filterkit-arff {filterkit.__version__}', the client from plugin 'normalizers', distribution "
        f"'filterkit-arff {filterkit.__version__}.client'; install the same version everywhere\n"
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_a_stage_breaking_the_contract_on_a_worker_is_named_as_locally(iris_on_cluster, tmp_path):
    breakers = FIXTURE_PLUGINS / "contract_breakers"
    result = iris_on_cluster("minmax", "droprow", plugins_dir=breakers)
    assert (result.status, result.stdout) == (1, b"")
    prefix = (
        "filterkit: error: stage 'droprow' "
        f"(plugin 'filterkit_contract_breakers ({breakers / 'filterkit_contract_breakers.py'})', "
        f"distribution 'plugins-dir {breakers}') broke the stage contract during transform: "
    )
    assert result.stderr.startswith(prefix)
    # a partition's chunk: iris' 150 rows are cut into byte ranges, one per task
    rows = re.fullmatch(
        r"it was given (\d+) rows and returned (\d+) \(a stage that drops or adds rows declares "
        r"filters_rows = True\)\n",
        result.stderr[len(prefix) :],
    )
    assert rows is not None and int(rows[1]) - 1 == int(rows[2]) and 0 < int(rows[1]) < 150
    assert list(tmp_path.iterdir()) == []


def test_a_fifo_cannot_be_partitioned(run_filterkit, tmp_path):
    fifo = tmp_path / "rows.arff"
    os.mkfifo(fifo)
    result = run_filterkit("--engine", "dask", "-o", tmp_path / "out.arff", fifo, "l2")
    assert (result.status, result.stdout) == (1, b"")
    assert result.stderr == (
        f"filterkit: error: --engine dask reads files its workers can open again; {fifo} is not a regular file "
        "(a FIFO or device can be read once only: use --engine local)\n"
    )
