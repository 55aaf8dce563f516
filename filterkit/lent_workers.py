"""The run's worker processes: the pool its fits run in, and the workers lent to a fit made in the parent.

:class:`WorkerPool` runs calls in ``--jobs N`` processes and gives their results in order.  On Linux they are
forked from this process when its first call is sent: they start in milliseconds with its imported modules and
the values it keeps for them (:func:`shipped`), sharing its memory until either writes it; elsewhere they are
joblib's, which start afresh (about a second of CPU each, importing scikit-learn) and read those values from a
file written once.  A command whose fits run in a pool still makes some fits alone in its own process
(``train``'s final fit on every row, ``evaluate --test``'s single fit); while it does, it lends the workers
(:func:`lending`), and a classifier maps the independent pieces of such a fit (the inner folds of its C search)
with :func:`each`.  The values are those of one process, in their order; only where they are computed changes.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import multiprocessing
import os
import pickle
import signal
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from filterkit.errors import FilterkitError
from filterkit.option_files import GIVEN_FILES, sent_files
from filterkit.ownership import STOPPING_SIGNALS, stopping_signals_recorded

#: Whether the worker processes are forked from this one: on Linux (elsewhere a fork may not be safe, or not be
#: there), from Python 3.10.5 (whose pool forks every worker at once: gh-90622).  A run sends its fits once it has
#: read its rows, when its reading threads have ended.
FORKED = sys.platform.startswith("linux") and sys.version_info >= (3, 10, 5)

#: Linux's prctl option that has the kernel signal a process when its parent ends (linux/prctl.h).
PR_SET_PDEATHSIG = 1

#: The values kept for forked workers (:func:`shipped`), by the path that names them.
_INHERITED: dict[str, Any] = {}

#: The prefix of the module names of a plugins folder's files (filterkit.plugins), which a worker process started
#: afresh cannot import by name: their functions run here.
PLUGINS_FOLDER_MODULES = "filterkit_local_plugin_"


class _Lent:
    """The workers lent within one :func:`lending` block: how many, the values sent to them in it (kept once, as
    :func:`shipped` keeps a value), and their pool, which the block's calls share while its workers hold every value
    those calls are sent (forked workers hold those kept before them)."""

    def __init__(self, jobs: int, folder: str, stack: contextlib.ExitStack):
        self.jobs, self.folder, self.stack = jobs, folder, stack
        self.sent: dict[int, tuple[Any, str]] = {}  # id → (the value, kept alive so its id stays its own; its path)
        self.pool: WorkerPool | None = None
        self.held: set[str] = set()  # the paths of the values the pool's workers were forked with

    def path_of(self, value) -> str:
        """The path naming ``value`` for the workers, kept the first time it is sent in this block."""
        if id(value) not in self.sent:
            path = os.path.join(self.folder, f"{len(self.sent)}.pickle")
            _keep(value, "a fit's rows", path)
            self.sent[id(value)] = (value, path)
        return self.sent[id(value)][1]

    def pool_holding(self, path: str, calls: int) -> "WorkerPool":
        """The block's pool for ``calls`` calls, of no more workers than the calls of the block's first: forked anew
        where they lack the value of ``path``, or are fewer than the jobs that more calls would take."""
        wanted = min(self.jobs, calls)
        if self.pool is not None and FORKED and (path not in self.held or wanted > self.pool.jobs):
            self.pool.__exit__(None, None, None)
            self.pool = None
        if self.pool is None:
            self.pool = self.stack.enter_context(WorkerPool(wanted))
            self.held = {kept for _, kept in self.sent.values()}
        return self.pool


#: The workers lent to the fit running in this process (None: none).
_LENT: contextvars.ContextVar[_Lent | None] = contextvars.ContextVar("filterkit_lent_workers", default=None)


@contextlib.contextmanager
def lending(jobs: int) -> Iterator[None]:
    """Within the block, :func:`each` spreads its calls over ``jobs`` worker processes (one or fewer: none)."""
    with contextlib.ExitStack() as stack:
        folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="filterkit-lent-")) if jobs >= 2 else ""
        workers = _Lent(jobs, folder, stack) if jobs >= 2 else None
        token = _LENT.set(workers)
        try:
            yield
        finally:
            _LENT.reset(token)
            for _, path in workers.sent.values() if workers else ():
                _INHERITED.pop(path, None)


@contextlib.contextmanager
def shipped(value, what: str) -> Iterator[str]:
    """A path naming ``value`` (``what``, in an error) for the worker processes of the block's pools, which
    :func:`received` turns back into it there: forked workers inherit it; others read the file, written once."""
    with tempfile.TemporaryDirectory(prefix="filterkit-sent-") as folder:
        path = os.path.join(folder, "value.pickle")
        _keep(value, what, path)
        try:
            yield path
        finally:
            _INHERITED.pop(path, None)


def _keep(value, what: str, path: str) -> None:
    """``value`` kept for the workers under ``path``: in memory for forked ones, else pickled to that file."""
    if FORKED:
        _INHERITED[path] = value
        return
    with kept_for_workers(what, path), open(path, "wb") as stream:
        pickle.dump(value, stream, protocol=pickle.HIGHEST_PROTOCOL)


def received(path: str):
    """In a worker process, the value :func:`shipped` (or a lent block) names by ``path``."""
    return _INHERITED[path] if path in _INHERITED else _read(path)


@functools.lru_cache(maxsize=2)
def _read(path: str):
    """The value pickled in the file ``path``, read once a worker process."""
    with open(path, "rb") as stream:
        return pickle.load(stream)


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
    can be imported by name there, else here.  ``shared`` (the fit's rows) is kept for the workers once a block
    (:meth:`_Lent.path_of`), each item sent with every call.  The values are the same either way; the first error
    in the items' order is raised."""
    workers = _LENT.get()
    module = getattr(getattr(function, "func", function), "__module__", "") or ""
    if workers is None or len(items) < 2 or module.startswith(PLUGINS_FOLDER_MODULES):
        return [function(shared, item) for item in items]
    path, files = workers.path_of(shared), GIVEN_FILES.get()
    calls = [(function, path, item, files) for item in items]
    outcomes = list(workers.pool_holding(path, len(calls)).results(_in_worker, calls))
    for _, error in outcomes:
        if error is not None:
            raise error
    return [value for value, _ in outcomes]


def _in_worker(function: Callable, path: str, item, files: dict | None) -> tuple:
    """(``function(shared, item)``, None) in a worker process, ``shared`` the value ``path`` names there
    (:func:`received`), the files options name as the run read them, or (None, the error it raised as
    :func:`portable` makes it), which :func:`each` raises at the item's turn."""
    try:
        with sent_files(files):
            return function(received(path), item), None
    except Exception as error:
        return None, portable(error)


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


class WorkerPool:
    """``jobs`` worker processes for the block's calls (:meth:`results`): forked at the first call (:data:`FORKED`),
    so that they hold what was kept for them (:func:`shipped`) before it, and ended with the block (at once where
    it is left by an error or an interrupt) or with the thread that made that call; else joblib's, which its later
    calls with as many jobs reuse."""

    def __init__(self, jobs: int):
        self.jobs = jobs
        self.executor: Any = None

    def __enter__(self) -> "WorkerPool":
        return self

    def __exit__(self, raised, *_) -> None:
        if self.executor is not None:
            if raised is not None:  # the running calls are not waited for
                for process in (getattr(self.executor, "_processes", None) or {}).values():
                    process.kill()
            self.executor.shutdown(wait=True, cancel_futures=True)
            self.executor = None

    def results(self, function: Callable, calls: Sequence[tuple]) -> Iterator:
        """``function(*call)`` of each of ``calls``, in their order; the calls not yet started are dropped where the
        generator is closed before its end.  A worker that ends before its call (killed; out of memory), or a result
        that cannot cross to this process, is a FilterkitError saying so."""
        if not FORKED:
            yield from _joblib_results(self.jobs, function, calls)
            return
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        futures = []
        try:
            if self.executor is None:
                _import_fitting()  # here, once: the parent's final fit needs them too
                context = multiprocessing.get_context("fork")
                self.executor = ProcessPoolExecutor(
                    self.jobs, mp_context=context, initializer=_forked, initargs=(os.getpid(),)
                )
            with _stopping_signals_held():
                futures = [self.executor.submit(function, *call) for call in calls]
            for future in futures:
                yield _sent_back(future)
        except BrokenProcessPool as broken:
            if broken.__cause__ is not None:  # a result that reached this process and could not be read
                raise FilterkitError(
                    f"a worker process's result could not be read here ({_last_line(broken.__cause__)}): "
                    "a plugin's value that pickle cannot make again? give --jobs 1"
                ) from None
            raise FilterkitError(
                "a worker process ended before its work did (killed, or out of memory?): give fewer --jobs"
            ) from None
        finally:
            for future in futures:
                future.cancel()


def _sent_back(future):
    """The result of a pool's call: the calls' own errors are values (:func:`portable`), so an error here, but for a
    broken pool, is the result's pickling in the worker, a FilterkitError saying so."""
    from concurrent.futures.process import BrokenProcessPool

    try:
        return future.result()
    except BrokenProcessPool:
        raise
    except Exception as error:
        raise FilterkitError(
            f"a worker process's result could not be sent here ({type(error).__name__}: {error}): "
            "a plugin's value that pickle cannot take? give --jobs 1"
        ) from None


@contextlib.contextmanager
def _stopping_signals_held() -> Iterator[None]:
    """Within the block (the workers forked), a stopping signal is held until its end, then met as it would have
    been.  This thread blocks them, so that a worker forked with one pending meets it with its own handling
    (:func:`_forked`); they are recorded, not raised, where another thread takes one (a reading thread does not
    block them, and Python runs the handler here): raised inside the forking, ``KeyboardInterrupt`` was lost."""
    with stopping_signals_recorded() as met:
        held = signal.pthread_sigmask(signal.SIG_BLOCK, STOPPING_SIGNALS)
        try:
            yield
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
    if met:
        met[0]()


def _last_line(cause: BaseException) -> str:
    """The last line of a worker's traceback as ``concurrent.futures`` gives it (the error itself)."""
    lines = [line for line in str(cause).splitlines() if line.strip(" '")]
    return lines[-1].strip() if lines else type(cause).__name__


def _joblib_results(jobs: int, function: Callable, calls: Sequence[tuple]) -> Iterator:
    """:meth:`WorkerPool.results` in joblib's workers; left before its end (an error), its other calls are still
    made, so that joblib neither warns of unused results nor stops its workers."""
    from joblib import Parallel, delayed

    sent = Parallel(n_jobs=jobs, return_as="generator")(delayed(function)(*call) for call in calls)
    finished = False
    try:
        for result in sent:  # not ``yield from``: that would close joblib's generator before the loop below
            yield result
        finished = True
    finally:
        if not finished:
            for _ in sent:
                pass


def _forked(parent: int) -> None:
    """In a worker forked from ``parent``: Ctrl-C is the parent's to meet (it ends the workers); SIGTERM and SIGHUP
    end it unless the parent ignores them (``nohup``); it ends with the parent, killed or not (Linux's
    ``PR_SET_PDEATHSIG``), so that none is left holding memory."""
    import ctypes

    _LENT.set(None)  # a piece of a lent fit that maps pieces of its own makes them here
    for signum in STOPPING_SIGNALS:
        if signum == signal.SIGINT:
            signal.signal(signum, signal.SIG_IGN)
        elif signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPPING_SIGNALS)
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent ended before the line above
        os._exit(1)


def _import_fitting() -> None:
    """Import the modules a fit uses (scikit-learn's are 0.6 s of CPU), for the workers forked after it."""
    import sklearn.model_selection  # noqa: F401
    import sklearn.svm  # noqa: F401

    import filterkit.classifying  # noqa: F401
    import filterkit.tasks  # noqa: F401
