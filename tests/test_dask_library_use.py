"""The Dask engine called as a library (``filterkit.cli.run`` or the API in another program): its
local cluster's workers are spawned, not forked from a fork server (which would stay in that
program with filterkit's imports and the workers' environment, serving the program's own
``multiprocessing``); and a cluster that cannot start is one error line, not a traceback."""

from __future__ import annotations

import multiprocessing.forkserver
import os

import pytest

from chain_helpers import REAL
from filterkit import cli
from filterkit.distributed import DaskEngine

pytest.importorskip("dask.distributed", reason="Dask is not installed (pip install 'filterkit[dask]')")

pytestmark = pytest.mark.slow


def test_a_library_call_spawns_the_workers_from_this_process():
    with DaskEngine.connect(None, None, 1000) as engine:
        parents = engine.client.run(os.getppid)
    assert list(parents.values()) == [os.getpid()] * 2


def test_a_library_call_starts_no_fork_server(tmp_path, monkeypatch):
    started = []
    monkeypatch.setattr(multiprocessing.forkserver, "ensure_running", lambda: started.append("fork server"))
    status = cli.run(["--engine", "dask", "-o", str(tmp_path / "out.arff"), str(REAL / "iris.arff"), "l2"])
    assert status == 0 and (tmp_path / "out.arff").stat().st_size > 3000
    assert started == []


def test_a_cluster_that_cannot_start_is_one_error_line(tmp_path, capsys):
    import dask

    with dask.config.set({"temporary-directory": "/proc/no-such-folder"}):
        status = cli.run(["--engine", "dask", "-o", str(tmp_path / "out.arff"), str(REAL / "iris.arff"), "l2"])
    error = capsys.readouterr().err
    assert status == 1
    assert error.startswith("filterkit: error: the local Dask cluster did not start (") and error.count("\n") == 1
    assert os.listdir(tmp_path) == []
