"""The console script has OpenBLAS start one thread (issue 20, start-up): its idle threads spin
on a chain run, which calls no BLAS.  A user's setting is obeyed, and a program that imports
filterkit as a library keeps its own."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from filterkit import ownership

#: ``filterkit.cli.main`` with ``run`` replaced by a report, on stderr, of the process's threads
#: and OPENBLAS_NUM_THREADS once main has imported the command tree (numpy with it).
PROBE = """
import os, sys
import filterkit.cli
def report(argv):
    print(len(os.listdir("/proc/self/task")), os.environ.get("OPENBLAS_NUM_THREADS"), file=sys.stderr)
    return 0
filterkit.cli.run = report
filterkit.cli.main(["in.arff"])
"""


def clear_blas_variables(monkeypatch) -> None:
    for variable in ownership.BLAS_THREAD_VARIABLES:
        monkeypatch.delenv(variable, raising=False)


@pytest.mark.parametrize("claimed", [True, False])
def test_one_blas_thread_only_in_a_process_filterkit_owns(monkeypatch, claimed):
    clear_blas_variables(monkeypatch)
    monkeypatch.setattr(ownership, "_claimed", claimed)
    monkeypatch.delitem(sys.modules, "numpy")  # as before numpy's import
    ownership.limit_blas_threads()
    assert os.environ.get("OPENBLAS_NUM_THREADS") == ("1" if claimed else None)


@pytest.mark.parametrize("variable", ownership.BLAS_THREAD_VARIABLES)
def test_a_users_thread_setting_is_obeyed(monkeypatch, variable):
    clear_blas_variables(monkeypatch)
    monkeypatch.setenv(variable, "3")
    monkeypatch.setattr(ownership, "_claimed", True)
    monkeypatch.delitem(sys.modules, "numpy")
    ownership.limit_blas_threads()
    assert {name: os.environ.get(name) for name in ownership.BLAS_THREAD_VARIABLES} == {
        name: "3" if name == variable else None for name in ownership.BLAS_THREAD_VARIABLES
    }


def test_nothing_is_set_once_numpy_is_imported(monkeypatch):
    clear_blas_variables(monkeypatch)
    monkeypatch.setattr(ownership, "_claimed", True)
    ownership.limit_blas_threads()  # numpy is imported in the test process: too late to matter
    assert "OPENBLAS_NUM_THREADS" not in os.environ


def threads_under_main(environment: dict) -> tuple[int, str]:
    completed = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, timeout=120, check=True, env=environment
    )
    threads, setting = completed.stderr.decode().split()
    return int(threads), setting


@pytest.mark.slow
@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc")
def test_the_console_script_starts_numpy_with_one_blas_thread():
    environment = {k: v for k, v in os.environ.items() if k not in ownership.BLAS_THREAD_VARIABLES}
    assert threads_under_main(environment) == (1, "1")
    assert threads_under_main({**environment, "OPENBLAS_NUM_THREADS": "2"}) == (2, "2")
