"""glibc's allocator tuned for chunked work, in this process and in Dask's local workers.

By default glibc gives large freed blocks back at once, so each chunk's arrays fault in again: at
grain ×100, 450,000 page faults and 1.3 s of system time per run, against 46,000 and 0.2 s with
blocks of up to 32 MiB kept for reuse (peak memory unchanged).  Dask's workers start with
``MALLOC_TRIM_THRESHOLD_=65536``, which cost each as many faults (4–5 s at grain ×100).
"""

from __future__ import annotations

import ctypes
import os

#: The allocator's settings: mmap blocks of 32 MiB and up only, and keep up to 1 GiB of freed
#: memory before trimming (glibc's ``mallopt`` parameter number, the variable that also sets it).
_KEPT_FREED_MEMORY = {
    "MALLOC_MMAP_THRESHOLD_": (-3, 32 << 20),
    "MALLOC_TRIM_THRESHOLD_": (-1, 1 << 30),
}


def user_tunes_allocator() -> bool:
    """Whether the environment sets glibc's allocator (a ``MALLOC_*_`` variable): then it is left alone."""
    return bool(_allocator_settings())


def keep_freed_memory() -> None:
    """Ask glibc's allocator, in this process, to keep freed blocks of up to 32 MiB for reuse (not
    where the C library has no ``mallopt``, nor where the user tunes the allocator)."""
    if not user_tunes_allocator():
        _set_allocator()


def keep_freed_memory_in_worker() -> None:
    """:func:`keep_freed_memory` in a Dask worker process, for a run (until :func:`give_back_freed_memory`): in place
    of the settings Dask's nanny starts its workers with (``MALLOC_TRIM_THRESHOLD_=65536``, which faulted each chunk's
    arrays in again: 2.7 of a hand-started worker's 6.6 s of CPU on grain ×300 ``shape bns l2``); a setting of other
    values, the user's, is left alone."""
    global _worker_keeps
    if _worker_keeps:
        return
    import dask

    dask_settings = {name: str(value) for name, value in dask.config.get(DASK_WORKER_ENVIRONMENT, {}).items()}
    if all(dask_settings.get(name) == value for name, value in _allocator_settings().items()):
        _set_allocator()
        _worker_keeps = True


def give_back_freed_memory() -> None:
    """Undo :func:`keep_freed_memory_in_worker` where it acted: glibc's thresholds as the worker's environment set
    them (else glibc's defaults), and the freed memory kept given back to the system, so that what Dask measures
    of a worker between runs is what the worker holds."""
    global _worker_keeps
    if not _worker_keeps:
        return
    _worker_keeps = False
    settings = _allocator_settings()
    try:
        library = ctypes.CDLL(None)
        for name, (parameter, _) in _KEPT_FREED_MEMORY.items():
            library.mallopt(parameter, int(settings.get(name, _GLIBC_DEFAULTS[name])))
        library.malloc_trim(0)
    except (OSError, AttributeError, TypeError, ValueError):
        return


#: Whether this (worker) process's allocator keeps freed memory for a run (:func:`keep_freed_memory_in_worker`).
_worker_keeps = False
#: glibc's own thresholds, where the environment sets none (its mmap threshold then adapts no more).
_GLIBC_DEFAULTS = {"MALLOC_MMAP_THRESHOLD_": 128 * 1024, "MALLOC_TRIM_THRESHOLD_": 128 * 1024}


#: Dask's setting of the environment its nanny starts worker processes with.
DASK_WORKER_ENVIRONMENT = "distributed.nanny.pre-spawn-environ"


def _allocator_settings() -> dict[str, str]:
    """The environment's settings of glibc's allocator (``MALLOC_*_`` variables)."""
    return {name: value for name, value in os.environ.items() if name.startswith("MALLOC_") and name.endswith("_")}


def _set_allocator() -> None:
    """glibc's allocator in this process set as :data:`_KEPT_FREED_MEMORY` says (where it has ``mallopt``)."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, TypeError):
        return
    for parameter, value in _KEPT_FREED_MEMORY.values():
        mallopt(parameter, value)


def worker_environment(dask_environment: dict) -> dict:
    """Dask's environment for the worker processes it spawns (``distributed.nanny.pre-spawn-environ``)
    with the allocator set as :func:`keep_freed_memory` sets this process's; unchanged where the
    user tunes the allocator, as the workers inherit that."""
    if user_tunes_allocator():
        return dict(dask_environment)
    return {**dask_environment, **{name: str(value) for name, (_, value) in _KEPT_FREED_MEMORY.items()}}
