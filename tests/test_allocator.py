"""glibc's allocator settings: this process's, and those of the workers of the local Dask cluster."""

import os

import pytest

from filterkit.allocator import user_tunes_allocator, worker_environment

DASK_DEFAULT = {"MALLOC_TRIM_THRESHOLD_": 65536, "OMP_NUM_THREADS": 1}


def test_workers_keep_freed_memory_as_a_local_run_does(monkeypatch):
    for name in [name for name in os.environ if name.startswith("MALLOC_")]:
        monkeypatch.delenv(name)
    assert not user_tunes_allocator()
    assert worker_environment(DASK_DEFAULT) == {
        "MALLOC_TRIM_THRESHOLD_": str(1 << 30),
        "MALLOC_MMAP_THRESHOLD_": str(32 << 20),
        "OMP_NUM_THREADS": 1,
    }


def test_a_user_s_allocator_settings_are_left_to_the_workers(monkeypatch):
    monkeypatch.setenv("MALLOC_ARENA_MAX_", "2")
    assert user_tunes_allocator()
    assert worker_environment(DASK_DEFAULT) == DASK_DEFAULT


@pytest.mark.slow
def test_the_engine_s_local_cluster_starts_its_workers_with_those_settings(monkeypatch):
    pytest.importorskip("dask.distributed", reason="Dask is not installed (pip install 'filterkit-arff[dask]')")
    from filterkit.distributed import DaskEngine

    for name in [name for name in os.environ if name.startswith("MALLOC_")]:
        monkeypatch.delenv(name)
    with DaskEngine.connect(None, None, 1000) as engine:
        settings = engine.client.run(lambda: os.environ.get("MALLOC_TRIM_THRESHOLD_"))
    assert sorted(settings.values()) == [str(1 << 30)] * 2
