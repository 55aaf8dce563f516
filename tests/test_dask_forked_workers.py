"""The console script's local Dask cluster (issue 20, the Dask bar): one helper process, forked
from the client once it has imported Dask and the tasks' modules and read the input's header,
runs the scheduler and forks the two workers; no nanny watches them. A worker dying mid-task is one
error line and no output, and no process of a run outlives it."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from chain_helpers import FILTERKIT, REAL, TESTS, local_cluster_facts
from filterkit import distributed as engine_module
from filterkit.errors import FilterkitError

pytestmark = pytest.mark.slow

IRIS = REAL / "iris.arff"
OH0 = REAL / "oh0.wc.arff"
DYING_PLUGIN = TESTS / "data" / "dying_plugin"


class FailedTask:
    """A failed Dask future holding ``error``."""

    status = "error"

    def __init__(self, error: BaseException):
        self.error = error

    def exception(self):
        return self.error

    def result(self):
        raise self.error


def test_a_task_whose_worker_died_is_a_filterkit_error_naming_it():
    distributed = pytest.importorskip("distributed", reason="Dask is not installed (pip install 'filterkit[dask]')")
    killed = distributed.KilledWorker("_write_partition-1", SimpleNamespace(address="tcp://127.0.0.1:1"), 0)
    with pytest.raises(FilterkitError, match=r"^a Dask worker process died running a task \(.*_write_partition-1"):
        engine_module._raise_task_error(distributed, FailedTask(killed))


def test_a_task_s_own_error_is_raised_as_it_is():
    distributed = pytest.importorskip("distributed", reason="Dask is not installed (pip install 'filterkit[dask]')")
    with pytest.raises(ZeroDivisionError, match="boom"):
        engine_module._raise_task_error(distributed, FailedTask(ZeroDivisionError("boom")))


def processes_naming(marker: str) -> list[str]:
    """The processes whose command line contains ``marker`` (a forked worker keeps the client's)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in command:
            found.append(f"{pid}: {command}")
    return found


def console_script(*argv, temporary: Path | None = None) -> subprocess.CompletedProcess:
    """The console script run with ``argv`` (and ``temporary`` as its temporary folder)."""
    if FILTERKIT is None:
        pytest.skip("the filterkit console script is not installed (pip install -e .)")
    pytest.importorskip("dask.distributed", reason="Dask is not installed (pip install 'filterkit[dask]')")
    environment = None if temporary is None else {**os.environ, "TMPDIR": str(temporary)}
    return subprocess.run([FILTERKIT, *map(str, argv)], capture_output=True, timeout=120, env=environment)


def test_a_run_writes_the_local_bytes_and_leaves_no_process_nor_file_behind(tmp_path):
    out = tmp_path / "dask-out.arff"
    temporary = tmp_path / "temporary"
    temporary.mkdir()
    local = console_script(OH0, "shape", "bns", "l2")
    dask = console_script("--engine", "dask", "-o", out, OH0, "shape", "bns", "l2", temporary=temporary)
    assert (dask.returncode, dask.stderr, dask.stdout) == (0, b"", b"")
    assert local.returncode == 0 and out.read_bytes() == local.stdout
    assert processes_naming(str(out)) == []
    assert os.listdir(temporary) == []  # the parts, and Dask's scratch folders (the workers are killed)


def test_a_worker_dying_mid_task_is_one_error_line_no_output_and_no_process_left(tmp_path):
    out = tmp_path / "out" / "out.arff"
    out.parent.mkdir()
    temporary = tmp_path / "temporary"
    temporary.mkdir()
    argv = ["--engine", "dask", "--plugins-dir", DYING_PLUGIN, "-o", out, IRIS, "l2", "dying"]
    result = console_script(*argv, temporary=temporary)
    assert (result.returncode, result.stdout) == (1, b"")
    message = result.stderr.decode()
    assert message.startswith("filterkit: error: a Dask worker process died running a task (")
    assert message.count("\n") == 1 and "_write_partition" in message
    assert os.listdir(out.parent) == [] and os.listdir(temporary) == []
    assert processes_naming(str(out)) == []


def test_the_workers_are_forked_by_one_helper_the_client_started():
    """In the console script (a fresh interpreter that claims its process) the workers' parent is one
    helper process whose parent is the client and which runs the scheduler, and they run with the
    environment Dask gives workers."""
    facts = local_cluster_facts()
    assert len(facts["parents"]) == 2 and len(set(facts["parents"])) == 1
    assert facts["client"] not in facts["parents"]
    assert facts["scheduler"] == facts["parents"][0]
    assert facts["grandparents"] == [facts["client"]] * 2
    assert facts["omp_threads"] == ["1", "1"]
    assert facts["routes"] == [[], []]  # no HTTP handler imported nor served


def test_the_helper_leaves_ctrl_c_to_the_client_and_dies_of_sigterm_and_sighup():
    """A handler that raised in the helper could fire in its cleanup and carry the forked process
    past its os._exit into the client's code (a second error line, the scratch folder left): it dies
    instead, its workers with it (their lifeline), and the client removes the scratch folder."""
    assert local_cluster_facts()["helper_signals"] == ["SIG_IGN", "SIG_DFL", "SIG_DFL"]


def test_the_workers_are_forked_knowing_the_planned_schema():
    """The cluster starts once the input's header is read: each worker holds the schema, which the
    recipes then name instead of carrying it."""
    facts = local_cluster_facts()
    assert facts["planned"][:2] == ["sepallength", "sepalwidth"] and len(facts["planned"]) == 5
    assert facts["inherited"] == [facts["planned"]] * 2


def test_the_objects_of_dask_are_frozen_before_the_workers_are_forked():
    """The client freezes what it has imported, Dask included, before forking: no collection in a
    worker walks those objects (a worker's scatter of a wide schema took 0.17 s instead of 0.06 s)."""
    facts = local_cluster_facts()
    assert min(facts["frozen"]) > 30_000  # numpy, Dask and filterkit: about 60,000 objects (0 without the freeze)


class Scheduler:
    """A scheduler's table of workers whose statuses come from ``statuses``, one list per look."""

    def __init__(self, *statuses: list[str]):
        self.looks = iter(statuses)

    @property
    def workers(self) -> dict:
        names = next(self.looks)
        return {f"tcp://w{n}": SimpleNamespace(status=SimpleNamespace(name=name)) for n, name in enumerate(names)}


def joined(scheduler, count: int, timeout: float, ended: bool = False) -> None:
    """Run the helper's wait for ``count`` workers on ``scheduler``, in an event loop of its own."""

    async def wait():
        event = asyncio.Event()
        if ended:
            event.set()
        await engine_module._workers_joined(scheduler, count, timeout, event)

    asyncio.run(wait())


def test_the_wait_for_workers_ends_when_every_worker_is_running():
    scheduler = Scheduler([], ["init"], ["running", "init"], ["running", "running"], [])
    joined(scheduler, 2, timeout=60)
    assert next(scheduler.looks) == []  # returned at the fourth look, not later


def test_workers_that_do_not_join_in_time_say_how_many_did():
    scheduler = Scheduler(*([["running"]] * 1000))
    with pytest.raises(TimeoutError, match=r"^1 of 2 workers started in 0.02 s$"):
        joined(scheduler, 2, timeout=0.02)


def test_the_wait_ends_once_the_cluster_is_stopped():
    with pytest.raises(FilterkitError, match="stopped while it started"):
        joined(Scheduler(), 2, timeout=60, ended=True)


def cluster_reporting(line: bytes | None) -> engine_module.ForkedCluster:
    """A ForkedCluster whose helper (this process's own pid, never waited on) has written ``line``
    on its report pipe and closed it (None: closed without a word)."""
    report_read, report_write = os.pipe()
    if line is not None:
        os.write(report_write, line)
    os.close(report_write)
    return engine_module.ForkedCluster(os.getpid(), -1, report_read)


def test_the_client_connects_to_the_address_the_helper_reports():
    assert cluster_reporting(b"address tcp://127.0.0.1:4242\n").address(timeout=5) == "tcp://127.0.0.1:4242"


def test_the_helper_s_error_is_the_client_s():
    with pytest.raises(FilterkitError, match=r"^1 of 2 workers started in 60 s$"):
        cluster_reporting(b"error 1 of 2 workers started in 60 s\n").address(timeout=5)


def test_a_helper_that_ends_without_a_word_was_stopped():
    with pytest.raises(FilterkitError, match="stopped while it started"):
        cluster_reporting(None).address(timeout=5)


def test_a_helper_that_says_nothing_in_time_is_a_timeout():
    report_read, report_write = os.pipe()
    try:
        cluster = engine_module.ForkedCluster(os.getpid(), -1, report_read)
        with pytest.raises(TimeoutError, match="no word from the cluster's helper process in 0.05 s"):
            cluster.address(timeout=0.05)
    finally:
        os.close(report_write)


def test_no_worker_is_forked_while_another_thread_runs(monkeypatch):
    """A thread running in the client (a plugin's, say) could hold a lock that would stay locked in a
    forked worker: then Dask's nannies spawn the workers, as in a library call."""
    from filterkit import ownership

    monkeypatch.setattr(ownership, "_claimed", True)
    monkeypatch.setattr(engine_module.threading, "active_count", lambda: 1)
    assert engine_module._may_fork_workers()
    monkeypatch.setattr(engine_module.threading, "active_count", lambda: 2)
    assert not engine_module._may_fork_workers()
    monkeypatch.setattr(ownership, "_claimed", False)
    monkeypatch.setattr(engine_module.threading, "active_count", lambda: 1)
    assert not engine_module._may_fork_workers()


def test_an_error_while_the_cluster_starts_stops_it_and_leaves_no_process(tmp_path):
    """The chain fails in the client (oh0's first attribute is not a nominal class) while the
    workers may still be waiting for the scheduler's address."""
    out = tmp_path / "out.arff"
    result = console_script("--engine", "dask", "-c", "first", "-o", out, OH0, "shape", "bns", "l2")
    assert (result.returncode, result.stdout) == (1, b"")
    assert result.stderr == b"filterkit: error: stage 'shape' needs a nominal class attribute (-c)\n"
    assert os.listdir(tmp_path) == []
    assert processes_naming(str(out)) == []


def bad_iris(tmp_path: Path, line: int) -> Path:
    """iris.arff with a value that is not a number at ``line`` (1-based)."""
    lines = IRIS.read_text().splitlines(keepends=True)
    lines[line - 1] = "7.2,zz,6.1,2.5,Iris-virginica\n"
    path = tmp_path / "bad.arff"
    path.write_text("".join(lines))
    return path


@pytest.mark.parametrize("partitions", [2, 3])
def test_a_bad_row_in_a_later_partition_gives_the_local_run_s_rows_and_error(tmp_path, partitions):
    """Row by row (``--chunk-rows 1``) a local run writes every row before the bad one, then fails
    naming it; so does the cluster, whose later partition's rows before its error are copied out."""
    bad = bad_iris(tmp_path, 200)
    argv = ["--chunk-rows", "1", bad, "l2"]
    local = console_script(*argv)
    dask = console_script("--engine", "dask", "--partitions", partitions, *argv)
    assert local.returncode == dask.returncode == 1
    assert dask.stderr == local.stderr == f"filterkit: error: {bad}:200: ".encode() + local.stderr.split(b":200: ")[1]
    assert dask.stdout == local.stdout and local.stdout.split(b"\n@data\n")[1].count(b"\n") == 200 - 73


def started_big_run(tmp_path: Path) -> tuple[subprocess.Popen, Path, Path]:
    """``filterkit --engine dask`` started on oh0's rows 40 times (its own process group, TMPDIR a
    fresh folder), once its tasks are writing; the process, the input and the temporary folder."""
    if FILTERKIT is None:
        pytest.skip("the filterkit console script is not installed (pip install -e .)")
    pytest.importorskip("dask.distributed", reason="Dask is not installed (pip install 'filterkit[dask]')")
    temporary = tmp_path / "temporary"
    temporary.mkdir()
    big = tmp_path / "big.arff"
    header, _, rows = OH0.read_bytes().partition(b"@data\n")
    big.write_bytes(header + b"@data\n" + rows * 40)
    process = subprocess.Popen(
        [FILTERKIT, "--engine", "dask", big, "l2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "TMPDIR": str(temporary)},
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while not list(temporary.glob(".filterkit-parts-*/00001-*")):  # the cluster runs the tasks
        if process.poll() is not None or time.monotonic() > deadline:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            pytest.fail("the run never wrote its second part")
        time.sleep(0.01)
    return process, big, temporary


def ended(process: subprocess.Popen) -> bytes:
    """The run's standard error once it ended (killed, with its group, after 20 s)."""
    try:
        return process.communicate(timeout=20)[1]
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def test_sigterm_to_the_process_group_ends_the_run_and_its_cluster_leaving_nothing(tmp_path):
    """As a service manager or ``kill -- -PGID`` sends it: the client, the helper and the workers all
    get it; the helper ends its workers and removes its scratch folder, the client its parts."""
    process, big, temporary = started_big_run(tmp_path)
    os.killpg(process.pid, signal.SIGTERM)
    stderr = ended(process)
    assert (process.returncode, stderr) == (130, b"filterkit: error: interrupted\n")
    assert os.listdir(temporary) == []
    assert processes_naming(str(big)) == []


@pytest.mark.parametrize("sent", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_helper_killed_mid_run_is_one_error_line_and_takes_its_workers_and_folder_with_it(tmp_path, sent):
    """SIGKILL leaves the helper no cleanup: its workers see their lifeline end and exit, the client
    removes the scratch folder, and says the scheduler went away (no Dask log, no misleading header,
    no 30 s of Dask trying to cancel the tasks on a scheduler gone); SIGTERM ends them itself."""
    process, big, temporary = started_big_run(tmp_path)
    helper = int(Path(f"/proc/{process.pid}/task/{process.pid}/children").read_text().split()[0])
    os.kill(helper, sent)
    stderr = ended(process)
    assert (process.returncode, stderr) == (
        1,
        b"filterkit: error: the Dask scheduler went away during the run; its tasks were cancelled\n",
    )
    assert os.listdir(temporary) == []
    assert processes_naming(str(big)) == []


def test_a_run_beside_another_cluster_s_dashboard_says_nothing(tmp_path):
    """Port 8787 (Dask's dashboard, a notebook's cluster say) taken: the helper's scheduler serves on a
    free port of this machine only, instead of warning on standard error that it moved."""
    import socket

    with socket.socket() as taken:
        try:
            taken.bind(("", 8787))
            taken.listen()
        except OSError:
            pass  # held by another process already: the same condition
        dask = console_script("--engine", "dask", IRIS, "l2")
    local = console_script(IRIS, "l2")
    assert (dask.returncode, dask.stderr) == (0, b"")
    assert dask.stdout == local.stdout


def test_a_stop_interrupted_by_a_signal_is_finished_by_the_next_one(tmp_path):
    """A signal can interrupt the first stop while it waits for the helper (its control pipe already
    closed): the second, as the run unwinds, still waits and removes the scratch folder."""
    scratch = tmp_path / "filterkit-dask-x"
    (scratch / "dask-scratch-space").mkdir(parents=True)
    helper = os.fork()
    if helper == 0:  # pragma: no cover - the stand-in helper
        os._exit(0)
    cluster = engine_module.ForkedCluster(helper, -1, -1, str(scratch))
    cluster.stopped = True  # the first stop closed the control pipe, then was interrupted
    cluster.stop()
    assert not scratch.exists()
    with pytest.raises(ChildProcessError):
        os.waitpid(helper, 0)  # reaped by the stop
