"""The Dask engine's futures: their results in order, the error line of a task that failed for the cluster's sake
(a worker killed, data lost with one, the scheduler gone), and what a pass's tasks share, made a task's result."""

from __future__ import annotations

import concurrent.futures
from typing import Iterator

from filterkit.errors import FilterkitError


def shared_value(value):
    """``value`` itself, as a task's result: what a pass's tasks share (``DaskEngine._pass``).  Scattered data whose
    last copy is lost (a worker killed after Dask's memory manager dropped the other copies) cannot be made again,
    and Dask cancels every task that needs it; a task's result is computed again, and they wait for it."""
    return value


def results_in_order(futures: list, meter=None) -> Iterator:
    """The results of ``futures``, each waited for in turn, so that the first failure in that order
    is raised (as a local run would report it), not the first in time (see :func:`result_of`);
    ``meter`` shows how many have ended."""
    for number, future in enumerate(futures, 1):
        yield result_of(future)
        if meter is not None:
            meter.detail = f"{number}/{len(futures)} partitions"


def result_of(future):
    """The result of the task ``future``; its error if it failed, or a FilterkitError where its
    worker process died running it (Dask's ``KilledWorker``), where a worker died holding the last
    copy of data the run scattered (the dataset ``evaluate`` and ``train`` send), or where the
    scheduler went away and Dask cancelled the task."""
    from distributed import KilledWorker
    from distributed.comm.core import CommClosedError  # an OSError naming no file: not the output's write failing

    try:
        return future.result()
    except (concurrent.futures.CancelledError, CommClosedError) as error:
        raise cancelled_error(future, error) from None
    except KilledWorker as error:
        raise FilterkitError(f"a Dask worker process died running a task ({error})") from None


def cancelled_error(future, error: BaseException) -> FilterkitError:
    """The error line of a task Dask cancelled (``error``): the scheduler gone (Dask's reason, or the client no longer
    connected), else the reason Dask gives, the likeliest being a worker that died holding the last copy of data the
    run scattered (the rows ``evaluate`` and ``train`` send, a candidate's folds)."""
    reason = getattr(error, "reason", None)
    connected = getattr(getattr(future, "client", None), "status", None) == "running"
    if (
        reason == "scheduler-connection-lost"
        or not connected
        or not isinstance(error, concurrent.futures.CancelledError)
    ):
        return FilterkitError("the Dask scheduler went away during the run; its tasks were cancelled")
    return FilterkitError(
        f"Dask cancelled the run's tasks ({reason or 'no reason given'}): a worker may have died holding the last "
        "copy of data this run sent the cluster"
    )


def spread(client, shared) -> None:
    """Wait for the task ``shared`` and copy its result to every worker (tasks on one holder would be queued there,
    by data locality); a worker leaving meanwhile leaves the copies as they are (Dask's ``replicate`` then refuses:
    a task copies what it lacks), the scheduler leaving is its error line."""
    from distributed.comm.core import CommClosedError

    try:
        client.replicate([shared])
    except (ValueError, AssertionError):  # replicate's count of workers went stale: a worker left or paused
        pass
    except (concurrent.futures.CancelledError, CommClosedError) as error:
        raise cancelled_error(shared, error) from None
