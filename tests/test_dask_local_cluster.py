"""The Dask engine's own parts (issue 38: a stock ``LocalCluster``, part files copied by the client):
parts copied in partition order as soon as the earlier ones are written, the first error in
partition order raised, a failed part's rows out before its error, a cluster's failures as one
error line, and Dask's warnings kept off the user's stderr."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from concurrent.futures import CancelledError
from types import SimpleNamespace

import pytest

from chain_helpers import FILTERKIT, REAL, STAGES_DIR
from filterkit import distributed as engine_module
from filterkit.distributed import DaskEngine
from filterkit.errors import FilterkitError
from filterkit.partitions import file_plan
from filterkit.plugins import load_plugins
from filterkit.runner import Chain
from filterkit.running import OutputForm

IRIS = REAL / "iris.arff"
OH0 = REAL / "oh0.wc.arff"


class Done:
    """A finished task."""

    status = "finished"

    def __init__(self, key: str):
        self.key = key

    def exception(self):
        return None

    def result(self):
        return self.key


class Failed(Done):
    """A task that failed with ``error``."""

    status = "error"

    def __init__(self, key: str, error: BaseException):
        super().__init__(key)
        self.error = error

    def exception(self):
        return self.error

    def result(self):
        raise self.error


class Meter:
    detail = ""


def test_a_pass_raises_the_first_error_in_partition_order_not_the_first_in_time():
    """The second partition fails first; the first, failing later, holds the earlier bad row: a
    local run reports that one, and so must the cluster, whatever the timing."""
    pytest.importorskip("dask.distributed", reason="Dask is not installed (pip install 'filterkit[dask]')")
    futures = [
        Done("fit-0"),
        Failed("fit-1", FilterkitError("bad row", "in.arff", 40)),
        Failed("fit-2", FilterkitError("bad row", "in.arff", 90)),
    ]
    meter = Meter()
    with pytest.raises(FilterkitError) as raised:
        list(engine_module.results_in_order(futures, meter))
    assert str(raised.value) == "in.arff:40: bad row"
    assert meter.detail == "1/3 partitions"
    assert list(engine_module.results_in_order(futures[:1])) == ["fit-0"]


@pytest.mark.parametrize("lost", ["cancelled", "cancelled-connected", "connection-lost", "closed", "killed"])
def test_a_task_the_cluster_lost_is_one_error(lost):
    distributed = pytest.importorskip(
        "dask.distributed", reason="Dask is not installed (pip install 'filterkit[dask]')"
    )
    from distributed.client import FutureCancelledError
    from distributed.comm.core import CommClosedError

    from filterkit.dask_futures import result_of

    error, message = {
        "cancelled": (  # the client no longer connected: it is marked so before Dask cancels its futures
            CancelledError("write-1"),
            "the Dask scheduler went away during the run; its tasks were cancelled$",
        ),
        "cancelled-connected": (  # the scheduler there: a worker took the last copy of scattered data with it
            FutureCancelledError("write-1", "lost dependencies"),
            r"Dask cancelled the run's tasks \(lost dependencies\): a worker may have died holding the last copy",
        ),
        "connection-lost": (
            FutureCancelledError("write-1", "scheduler-connection-lost"),
            "the Dask scheduler went away during the run; its tasks were cancelled$",
        ),
        "closed": (  # an OSError naming no file, which the output's staging would call a failed write
            CommClosedError("in <TCP (closed) ConnectionPool.gather local=tcp://a:1>: Stream is closed"),
            "the Dask scheduler went away during the run; its tasks were cancelled$",
        ),
        "killed": (
            distributed.KilledWorker("write-1", SimpleNamespace(address="tcp://a:1"), 0),
            r"a Dask worker process died running a task \(",
        ),
    }[lost]
    future = Failed("write-1", error)
    future.client = SimpleNamespace(status="running" if lost != "cancelled" else "connecting")
    with pytest.raises(FilterkitError, match=f"^{message}") as raised:
        result_of(future)
    assert raised.value.__suppress_context__


HEAD = b"@relation r\n@attribute a numeric\n@data\n"


@pytest.mark.parametrize("written", [HEAD + b"1\n2\n", HEAD[:5], None], ids=["rows", "header-cut", "no-part"])
def test_a_failed_later_part_gives_the_rows_it_wrote_then_its_error(tmp_path, written):
    """As a local run's rows before its error are out, so are a later partition's."""
    path = tmp_path / "00001-part.arff"
    if written is not None:
        path.write_bytes(written)
    stream = io.BytesIO(b"earlier parts\n")
    stream.seek(0, io.SEEK_END)
    with pytest.raises(FilterkitError, match="bad row"):
        engine_module._copy_part(str(path), Failed("write-1", FilterkitError("bad row")), HEAD, stream, False)
    copied = b"1\n2\n" if written == HEAD + b"1\n2\n" else b""
    assert stream.getvalue() == b"earlier parts\n" + copied
    assert not path.exists() or written == HEAD[:5]


@pytest.mark.parametrize("with_header", [True, False])
def test_a_finished_part_is_copied_and_removed(tmp_path, with_header):
    path = tmp_path / "00000-part.arff"
    rows = bytes(range(256)) * (3 << 12)  # more than one copy block
    path.write_bytes(HEAD + rows)
    stream = io.BytesIO()
    engine_module._copy_part(str(path), Done("write-0"), HEAD, stream, with_header)
    assert stream.getvalue() == (HEAD if with_header else b"") + rows and not path.exists()


def test_a_part_with_another_header_is_refused_naming_it(tmp_path):
    path = tmp_path / "00001-part.arff"
    path.write_bytes(HEAD.replace(b"numeric", b"real") + b"1\n")
    with pytest.raises(FilterkitError, match="another header than the first's") as raised:
        engine_module._copy_part(str(path), Done("write-1"), HEAD, io.BytesIO(), False)
    assert raised.value.path == str(path)


def test_a_scheduler_s_cluster_gets_two_partitions_per_worker_thread():
    """Workers of unequal speed balance the load over more partitions; a local cluster's are alike."""

    class Client:
        def nthreads(self):
            return {"tcp://a:1": 2, "tcp://b:1": 1}

    assert DaskEngine(Client(), None, 1000).default_partitions() == 6
    assert DaskEngine(Client(), None, 1000, local=True).default_partitions() == 3


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_a_full_disk_while_a_task_writes_its_part_names_the_folder():
    """The parts of a run to standard output go to the temporary folder, which a local run never
    needs: the error says where the room was missing and why it was needed."""
    plan = file_plan(str(IRIS), str(IRIS), count=2)
    chain = Chain([load_plugins().make_stage("l2", {})])
    chain.fit_with(plan.schema, lambda position, stage: None)
    recipe = DaskEngine(object(), None, 1000).recipe(chain, plan)
    with pytest.raises(FilterkitError) as raised:
        engine_module._write_partition(recipe, plan.partitions[1], 1, "/dev/full", OutputForm(), [])
    assert str(raised.value) == (
        "/dev: No space left on device writing the partitions' outputs: --engine dask needs room for the whole "
        "output in this folder (the system's temporary folder, TMPDIR, when the output is standard output)"
    )


def console_script(*argv, **environment) -> subprocess.CompletedProcess:
    if FILTERKIT is None:
        pytest.skip("the filterkit console script is not installed (pip install -e .)")
    pytest.importorskip("dask.distributed", reason="Dask is not installed (pip install 'filterkit-arff[dask]')")
    env = {**os.environ, **environment}
    return subprocess.run([FILTERKIT, *map(str, argv)], capture_output=True, timeout=120, env=env)


@pytest.mark.slow
def test_a_local_cluster_gives_the_local_run_s_bytes_and_nothing_on_stderr():
    """Not even Dask's warning of a large graph, made to fire on every task here."""
    local = console_script("-c", "first", OH0, "minmax", "l2")
    dask = console_script(
        "--engine", "dask", "--partitions", "5", "-c", "first", OH0, "minmax", "l2",
        DASK_DISTRIBUTED__ADMIN__LARGE_GRAPH_WARNING_THRESHOLD="1B",
    )  # fmt: skip
    assert (dask.returncode, dask.stderr) == (0, b"")
    assert local.returncode == 0 and dask.stdout == local.stdout


@pytest.mark.slow
def test_progress_moves_within_a_partition(tmp_path):
    """One partition: the rows its tasks report as Dask events are counted as they are read."""
    result = console_script(
        "--engine", "dask", "--partitions", "1", "--progress", "--chunk-rows", "100", "-o", tmp_path / "o.arff",
        OH0, "minmax", "l2",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stderr.decode().splitlines()
    assert [line for line in lines if "fitting minmax" in line][-1].startswith(
        "filterkit: pass 1/2: fitting minmax: 1,003 rows"
    )
    assert any(line.startswith("filterkit: pass 2/2: writing: 100% of") or "1,003 rows" in line for line in lines)


@pytest.mark.slow
def test_a_worker_error_on_a_local_cluster_is_one_line_and_no_output(tmp_path):
    out = tmp_path / "out.arff"
    argv = ["--plugins-dir", STAGES_DIR, "-o", out, IRIS, "explode", "--during", "transform"]
    result = console_script("--engine", "dask", *argv)
    assert result.returncode == 1
    assert result.stderr.decode().count("\n") == 1
    assert result.stderr.startswith(b"filterkit: error: ") and b"failed during transform" in result.stderr
    assert os.listdir(tmp_path) == []


_HELD = """
import os, signal, sys
from filterkit import cli
from filterkit.ownership import claim_process
from filterkit.distributed import _held_while_starting
claim_process()
signal.signal(signal.SIGINT, cli._terminate)
with _held_while_starting() as held:
    os.write(2, b"lost\\n")  # a worker started now inherits this standard error
    os.kill(os.getpid(), signal.SIGINT)
    print("still starting", len(held), flush=True)
os.write(2, b"kept\\n")
try:
    held[0]()
except KeyboardInterrupt:
    print("interrupted once started", flush=True)
"""


def test_a_stopping_signal_while_the_local_cluster_starts_waits_for_it_and_its_workers_write_nothing():
    """Review of issue 38: Ctrl-C while Dask's LocalCluster started printed 30–100 lines (each worker's
    traceback, Dask's half-started cluster at exit); now the signal ends the run once the cluster can
    be stopped, and what is started meanwhile has no standard error of its own."""
    finished = subprocess.run([sys.executable, "-c", _HELD], capture_output=True, text=True, timeout=60)
    assert (finished.stdout, finished.stderr) == ("still starting 1\ninterrupted once started\n", "kept\n")


@pytest.mark.slow
def test_output_dir_targets_are_refused_before_any_pass(tmp_path):
    (tmp_path / "out" / "part-00000.arff").mkdir(parents=True)
    result = console_script("--engine", "dask", "--progress", "--output-dir", tmp_path / "out", OH0, "ig", "l2")
    assert result.returncode == 1
    assert b"it is a folder" in result.stderr and b"pass 1" not in result.stderr


def test_a_model_inside_the_output_dir_is_refused(run_filterkit, tmp_path):
    """It would be overwritten by a partition's output of the same name, silently."""
    pytest.importorskip("dask.distributed", reason="Dask is not installed (pip install 'filterkit-arff[dask]')")
    out = tmp_path / "out"
    out.mkdir()
    argv = ["--engine", "dask", "--save-model", out / "part-00001.arff", "--output-dir", out, OH0, "ig", "l2"]
    result = run_filterkit(*argv)
    assert result.status == 2 and "is inside --output-dir" in result.stderr
    assert os.listdir(out) == []


def test_the_local_cluster_has_a_worker_per_core_this_process_may_use():
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert engine_module.machine_cores() == cores >= 1


@pytest.mark.slow
def test_the_local_cluster_is_sized_by_the_machine_or_by_workers(monkeypatch):
    """Without --workers the cluster has one worker process per core (here made 1, so that the test starts one
    small cluster); with it, that many."""
    pytest.importorskip("dask.distributed", reason="Dask is not installed (pip install 'filterkit-arff[dask]')")
    monkeypatch.setattr(engine_module, "machine_cores", lambda: 1)
    with DaskEngine.connect(None, None, 0) as engine:
        assert len(engine.client.scheduler_info()["workers"]) == 1


@pytest.mark.slow
def test_workers_sets_the_local_cluster_and_the_output_is_the_local_run_s():
    local = console_script("-c", "first", OH0, "minmax", "l2")
    dask = console_script("--engine", "dask", "--workers", "1", "--progress", "-c", "first", OH0, "minmax", "l2")
    assert local.returncode == dask.returncode == 0, dask.stderr
    assert dask.stdout == local.stdout
    started = [line for line in dask.stderr.decode().splitlines() if "local Dask cluster" in line]
    assert not started or started[0].startswith("filterkit: starting a local Dask cluster of 1 worker process:")
