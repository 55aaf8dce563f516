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
import functools
import os
import pickle
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from filterkit.errors import FilterkitError
from filterkit.option_files import GIVEN_FILES, sent_files

#: The prefix of the module names of a plugins folder's files (filterkit.plugins), which a worker process started
#: afresh cannot import by name: their functions run here.
PLUGINS_FOLDER_MODULES = "filterkit_local_plugin_"


class _Lent:
    """The workers lent within one :func:`lending` block: how many, and the values sent to them in it (each pickled
    once into the block's folder, which every worker reads once)."""

    def __init__(self, jobs: int, folder: str):
        self.jobs, self.folder = jobs, folder
        self.sent: dict[int, tuple[Any, str]] = {}  # id → (the value, kept alive so its id stays its own; its file)

    def path_of(self, value) -> str:
        """The file holding ``value``, written the first time it is sent in this block."""
        if id(value) not in self.sent:
            path = os.path.join(self.folder, f"{len(self.sent)}.pickle")
            with kept_for_workers("a fit's rows", path), open(path, "wb") as stream:
                pickle.dump(value, stream, protocol=pickle.HIGHEST_PROTOCOL)
            self.sent[id(value)] = (value, path)
        return self.sent[id(value)][1]


#: The workers lent to the fit running in this process (None: none).
_LENT: contextvars.ContextVar[_Lent | None] = contextvars.ContextVar("filterkit_lent_workers", default=None)


@contextlib.contextmanager
def lending(jobs: int) -> Iterator[None]:
    """Within the block, :func:`each` spreads its calls over ``jobs`` worker processes (one or fewer: none)."""
    with contextlib.ExitStack() as stack:
        folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="filterkit-lent-")) if jobs >= 2 else ""
        token = _LENT.set(_Lent(jobs, folder) if jobs >= 2 else None)
        try:
            yield
        finally:
            _LENT.reset(token)


@contextlib.contextmanager
def kept_for_workers(what: str, path: str) -> Iterator[None]:
    """Around writing ``what`` to ``path`` (a file of a run's folder in the temporary folder) for worker processes:
    an OSError (a full disk) becomes a FilterkitError naming the temporary folder and ``TMPDIR``, as a spool that
    cannot be written does."""
    try:
        yield
    except OSError as error:
        raise FilterkitError(
            f"cannot keep {what} for the worker processes in the temporary folder "
            f"{os.path.dirname(os.path.dirname(path))} "
            f"({error.strerror or error}): free space there, set TMPDIR to a folder with room, or give --jobs 1"
        ) from None


def lent() -> int:
    """How many worker processes are lent to the fit running in this process (1: none)."""
    workers = _LENT.get()
    return 1 if workers is None else workers.jobs


def each(function: Callable, items: Sequence, shared: Any = None) -> list:
    """``[function(shared, item) for item in items]``: computed in the worker processes lent to this fit
    (:func:`lending`) where there are some and ``function`` (a module's function, or a ``functools.partial`` of one)
    can be imported by name there, else here.  ``shared`` (the fit's rows) goes to the workers once a block, each
    item with every call.  The values are the same either way; the first error in the items' order is raised."""
    workers = _LENT.get()
    module = getattr(getattr(function, "func", function), "__module__", "") or ""
    if workers is None or len(items) < 2 or module.startswith(PLUGINS_FOLDER_MODULES):
        return [function(shared, item) for item in items]
    from joblib import Parallel, delayed

    path, files = workers.path_of(shared), GIVEN_FILES.get()
    outcomes = Parallel(n_jobs=workers.jobs)(delayed(_in_worker)(function, path, item, files) for item in items)
    for _, error in outcomes:
        if error is not None:
            raise error
    return [value for value, _ in outcomes]


def _in_worker(function: Callable, path: str, item, files: dict | None) -> tuple:
    """(``function(shared, item)``, None) in a worker process, ``shared`` read from ``path`` (once a process), the
    files options name as the run read them, or (None, the error it raised as :func:`portable` makes it), which
    :func:`each` raises at the item's turn."""
    try:
        with sent_files(files):
            return function(_shared(path), item), None
    except Exception as error:
        return None, portable(error)


@functools.lru_cache(maxsize=2)
def _shared(path: str):
    """The value of :meth:`_Lent.path_of`'s file, read once a worker process."""
    with open(path, "rb") as stream:
        return pickle.load(stream)


def portable(error: Exception) -> Exception:
    """``error`` as a worker process can send it back: itself where it survives pickling, else a RuntimeError
    giving its type's name and its message (an exception whose arguments do not rebuild it had broken the pool); a
    FilterkitError of a plugin's own kind as a FilterkitError, so that the command still says it in one line."""
    try:
        pickle.loads(pickle.dumps(error))
    except Exception:
        if isinstance(error, FilterkitError):  # a plugin's own kind: its message, file and line kept
            return FilterkitError(error.message, error.path, error.line)
        return RuntimeError(f"{type(error).__name__}: {error}")
    return error


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


def _imported() -> None:
    """In a worker: import the modules a fit uses (the run's plugins are loaded by its first fit)."""
    import sklearn.model_selection  # noqa: F401
    import sklearn.svm  # noqa: F401

    import filterkit.classifying  # noqa: F401
    import filterkit.tasks  # noqa: F401
