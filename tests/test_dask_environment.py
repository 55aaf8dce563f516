"""A chain run on a local Dask cluster from Python leaves the caller's environment as it was.

Dask's nanny sets its workers' variables (``OMP_NUM_THREADS=1``, ``PYTHONHASHSEED``, glibc's
allocator settings, ``__DASK_PARENT_PID``) in the process that starts the workers and leaves
them there; every process the caller started afterwards inherited them.
"""

from __future__ import annotations

import os

import pytest

from chain_helpers import REAL
from filterkit import cli

pytest.importorskip("distributed", reason="the Dask engine needs the dask extra")

pytestmark = pytest.mark.slow


def test_a_local_cluster_run_leaves_the_environment_as_it_was(tmp_path):
    before = dict(os.environ)
    status = cli.run(["--engine", "dask", "-o", str(tmp_path / "out.arff"), str(REAL / "iris.arff"), "l2"])
    assert status == 0
    changed = {name: (before.get(name), os.environ.get(name)) for name in set(before) | set(os.environ)}
    assert {name: values for name, values in changed.items() if values[0] != values[1]} == {}
    assert (tmp_path / "out.arff").read_bytes().count(b"\n") > 150
