"""A Dask worker killed mid-run costs time, not bytes (issue 76): the scheduler runs its task again on a worker that
lives, which reads the partition where the dead worker kept what an earlier pass was given, and the output is the
local engine's; nothing is left beside it."""

from __future__ import annotations

import pytest

from chain_helpers import FIXTURE_PLUGINS, REAL

DYING = FIXTURE_PLUGINS / "dying"
GRAIN = REAL / "grain_wc.arff"

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("during", ["fit", "transform"])
def test_a_worker_killed_during_a_pass_gives_the_local_bytes(
    run_filterkit, dask_distributed, dask_scheduler, tmp_path, during
):
    marker = tmp_path / "died"
    chain = ["minmax", "dieonce", "--during", during, "--marker", marker, "bns", "l2"]
    marker.write_text("")  # made already for the local run, which so never dies
    local = run_filterkit("-c", "first", "-o", tmp_path / "local.arff", GRAIN, *chain, plugins_dir=DYING)
    assert (local.status, local.stderr) == (0, "")
    marker.unlink()
    with dask_distributed.Client(dask_scheduler) as client:  # the worker an earlier test killed is back
        client.wait_for_workers(2, timeout=120)
    output = tmp_path / "out" / "dask.arff"
    output.parent.mkdir()
    on_dask = run_filterkit(
        "--engine", "dask", "--scheduler", dask_scheduler, "--partitions", "4", "-c", "first", "-o", output,
        GRAIN, *chain, plugins_dir=DYING,
    )  # fmt: skip
    assert (on_dask.status, on_dask.stderr) == (0, "")
    assert marker.exists()  # a worker was killed
    assert output.read_bytes() == (tmp_path / "local.arff").read_bytes()
    assert sorted(path.name for path in output.parent.iterdir()) == ["dask.arff"]
