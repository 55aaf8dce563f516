"""The Dask engine called as a library (``filterkit.cli.run`` or the API in another program): its
local cluster's workers are spawned, not forked from a fork server (which would stay in that
program with filterkit's imports and the workers' environment, serving the program's own
``multiprocessing``); the caller's environment is left as it was; and a cluster that cannot start
is one error line, not a traceback."""

from __future__ import annotations

import multiprocessing.forkserver
import os

import pytest

from chain_helpers import REAL
from filterkit import cli
from filterkit.distributed import DaskEngine

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("dask_distributed")]


def test_a_library_call_spawns_the_workers_from_this_process():
    with DaskEngine.connect(None, None, 1000) as engine:
        parents = engine.client.run(os.getppid)
    assert list(parents.values()) == [os.getpid()] * 2


def test_a_library_call_starts_no_fork_server_and_leaves_the_environment_as_it_was(tmp_path, monkeypatch):
    """Dask's nanny sets its workers' variables (``OMP_NUM_THREADS=1``, ``PYTHONHASHSEED``, glibc's
    allocator settings, ``__DASK_PARENT_PID``) in the process that starts them and leaves them there:
    every process the caller started afterwards inherited them."""
    started = []
    monkeypatch.setattr(multiprocessing.forkserver, "ensure_running", lambda: started.append("fork server"))
    before = dict(os.environ)
    status = cli.run(["--engine", "dask", "-o", str(tmp_path / "out.arff"), str(REAL / "iris.arff"), "l2"])
    assert status == 0 and (tmp_path / "out.arff").stat().st_size > 3000
    assert started == []
    changed = {name: (before.get(name), os.environ.get(name)) for name in set(before) | set(os.environ)}
    assert {name: values for name, values in changed.items() if values[0] != values[1]} == {}


def test_a_cluster_that_cannot_start_is_one_error_line(tmp_path, capsys):
    import dask

    with dask.config.set({"temporary-directory": "/proc/no-such-folder"}):
        status = cli.run(["--engine", "dask", "-o", str(tmp_path / "out.arff"), str(REAL / "iris.arff"), "l2"])
    error = capsys.readouterr().err
    assert status == 1
    assert error.startswith("filterkit: error: the local Dask cluster did not start (") and error.count("\n") == 1
    assert os.listdir(tmp_path) == []
