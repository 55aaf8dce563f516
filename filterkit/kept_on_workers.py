"""What a Dask worker keeps of a partition between the passes of one run (:mod:`filterkit.distributed`): the
chunks a fitting pass's task kept (:class:`filterkit.sources.KeptChunks`, an unlinked temporary file of arrays),
which the next pass's task for that partition reads back when it runs on the same worker, instead of reading and
parsing the partition and running the stages before again: a local run's passes do the same (``Chain.fit`` with
``keep``).  A task on another worker finds nothing here and reads the partition, with the same result."""

from __future__ import annotations

import os
import threading

from filterkit.allocator import give_back_freed_memory, keep_freed_memory_in_worker
from filterkit.partitions import Partition, RecordPartition
from filterkit.sources import KeptChunks

_kept: dict[tuple[str, int], KeptChunks] = {}
#: the runs forgotten lately (their ends), so that what a task of theirs still running leaves is closed at once
_forgotten: dict[str, None] = {}
#: how many forgotten runs are remembered
_REMEMBERED = 1024
#: the runs whose tasks have had this worker's allocator keep freed memory, not yet forgotten
_tuning: set[str] = set()
_lock = threading.Lock()


def start(run: str | None) -> None:
    """A task of the run ``run`` begins here: the allocator keeps freed memory for the run
    (:func:`filterkit.allocator.keep_freed_memory_in_worker`), unless the run was forgotten already."""
    with _lock:
        if run is not None and run in _forgotten:
            return
        if run is not None:
            _tuning.add(run)
        keep_freed_memory_in_worker()


def fresh(partition: Partition | RecordPartition) -> KeptChunks:
    """An empty store for a pass over ``partition``, bound by the bytes it reads (the whole file's for a gzip file)
    as a local run's is by the input's."""
    if isinstance(partition, Partition) and partition.start is not None:
        return KeptChunks(partition.end - partition.start)
    try:
        return KeptChunks(os.path.getsize(partition.path))
    except OSError:
        return KeptChunks()


def take(run: str | None, partition: int) -> KeptChunks | None:
    """The chunks this worker holds of ``partition`` in the run ``run`` (theirs now: close them), or None."""
    with _lock:
        return None if run is None else _kept.pop((run, partition), None)


def leave(run: str | None, partition: int, kept: KeptChunks) -> None:
    """Hold ``kept`` (a whole pass over ``partition`` of the run ``run``) for the run's next pass; closed at once
    when there is no run to hold it for or it kept nothing."""
    with _lock:
        if run is None or kept.stage_position is None or run in _forgotten:
            replaced: KeptChunks | None = kept
        else:
            replaced = _kept.pop((run, partition), None)
            _kept[(run, partition)] = kept
    if replaced is not None:
        replaced.close()


def forget(run: str) -> int:
    """Close (delete) every partition's chunks held for the run ``run``, and any a task of it leaves later; give back
    the freed memory the runs' tasks had the allocator keep once no other run's tasks count on it
    (:func:`filterkit.allocator.give_back_freed_memory`); how many partitions' chunks there were."""
    with _lock:
        _forgotten[run] = None
        while len(_forgotten) > _REMEMBERED:
            del _forgotten[next(iter(_forgotten))]
        held = [key for key in _kept if key[0] == run]
        closing = [_kept.pop(key) for key in held]
        _tuning.discard(run)
        if not _tuning:  # no other run's tasks count on it
            give_back_freed_memory()
    for kept in closing:
        kept.close()
    return len(closing)
