"""The run's worker processes: started early, and lent to a fit made in the parent to spread its pieces of work.

A command whose fits run in ``--jobs N`` processes still makes some fits alone in its own process (``train``'s
final fit on every row, ``evaluate --test``'s single fit); while it does, it lends the workers
(:func:`lending`), and a classifier maps the independent pieces of such a fit (the inner folds of its C search)
with :func:`each`.  The values are those of one process, in their order; only where they are computed changes.
A command that will use workers starts them as soon as it knows how many (:func:`start_workers`), so that their
start overlaps its own work instead of following it.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Callable, Iterator, Sequence

from filterkit.option_files import GIVEN_FILES, sent_files

#: How many worker processes are lent to the fit running in this process (1: none).
LENT: contextvars.ContextVar[int] = contextvars.ContextVar("filterkit_lent_workers", default=1)

#: The prefix of the module names of a plugins folder's files (filterkit.plugins), which a worker process started
#: afresh cannot import by name: their functions run here.
PLUGINS_FOLDER_MODULES = "filterkit_local_plugin_"


@contextlib.contextmanager
def lending(jobs: int) -> Iterator[None]:
    """Within the block, :func:`each` spreads its calls over ``jobs`` worker processes (one or fewer: none)."""
    token = LENT.set(max(jobs, 1))
    try:
        yield
    finally:
        LENT.reset(token)


def each(function: Callable, items: Sequence) -> list:
    """``[function(item) for item in items]``: computed in the worker processes lent to this fit (:func:`lending`)
    where there are some and ``function`` (a module's function, or a ``functools.partial`` of one) can be imported by
    name there, else here.  The values are the same either way; the first error in the items' order is raised."""
    jobs = min(LENT.get(), len(items))
    module = getattr(getattr(function, "func", function), "__module__", "") or ""
    if jobs < 2 or module.startswith(PLUGINS_FOLDER_MODULES):
        return [function(item) for item in items]
    from joblib import Parallel, delayed

    files = GIVEN_FILES.get()
    outcomes = Parallel(n_jobs=jobs)(delayed(_in_worker)(function, item, files) for item in items)
    for _, error in outcomes:
        if error is not None:
            raise error
    return [value for value, _ in outcomes]


def _in_worker(function: Callable, item, files: dict | None) -> tuple:
    """(``function(item)``, None) in a worker process, the files options name as the run read them, or (None, the
    error it raised), which :func:`each` raises at the item's turn."""
    try:
        with sent_files(files):
            return function(item), None
    except Exception as error:
        return None, error


def start_workers(jobs: int) -> None:
    """Start ``jobs`` worker processes now (none for fewer than two), in the background, each importing what a fit
    imports: joblib's later calls with as many jobs reuse them, so their start (about a second of CPU each) overlaps
    the parent's own work (drawing the folds, importing scikit-learn) instead of following it."""
    if jobs >= 2:
        threading.Thread(target=_started, args=(jobs,), daemon=True, name="filterkit-start-workers").start()


def _started(jobs: int) -> None:
    """The body of :func:`start_workers`' thread; a failure is left to the run's own calls to meet and report."""
    from joblib import Parallel, delayed

    with contextlib.suppress(Exception):
        Parallel(n_jobs=jobs)(delayed(_imported)() for _ in range(jobs))


def _imported() -> int:
    """In a worker: import the modules a fit uses (the run's plugins are loaded by its first fit); its process id."""
    import os

    import sklearn.model_selection  # noqa: F401
    import sklearn.svm  # noqa: F401

    import filterkit.classifying  # noqa: F401
    import filterkit.tasks  # noqa: F401

    return os.getpid()
