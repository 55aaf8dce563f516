"""Whether filterkit runs as its own program (the console script) or as a library in someone
else's process: process-wide settings (glibc's allocator, the forking of the local Dask
cluster's workers from the client, the threads of the BLAS library) are made only in a
process filterkit owns."""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

_claimed = False

#: The variables that set how many threads OpenBLAS (numpy's and scipy's BLAS) starts, in the
#: order it reads them: a user who sets any of them is obeyed.
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")

#: The signals that stop a run of the console script, as Ctrl-C does: Ctrl-C, ``kill``, and the
#: terminal hanging up (those this system has).
STOPPING_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


@contextlib.contextmanager
def stopping_signals_recorded() -> Iterator[list]:
    """Within the block, a stopping signal whose handler is a Python function is recorded, not met: the list
    yielded gets that handler (its arguments bound), for the caller to call once the run can stop.  In the main
    thread only, where Python runs handlers (elsewhere the block changes nothing)."""
    held: list = []
    if threading.current_thread() is not threading.main_thread():
        yield held
        return
    handlers: dict[int, Any] = {signum: signal.getsignal(signum) for signum in STOPPING_SIGNALS}
    for signum, handler in handlers.items():
        if callable(handler):
            signal.signal(signum, lambda number, frame: held.append(functools.partial(handlers[number], number, None)))
    try:
        yield held
    finally:
        for signum, handler in handlers.items():
            if callable(handler):  # only those replaced: one installed outside Python reads back as SIG_DFL
                signal.signal(signum, handler)


def claim_process() -> None:
    """Called by the console script: this process is filterkit's to tune."""
    global _claimed
    _claimed = True


def owns_process() -> bool:
    """Whether :func:`claim_process` was called in this process."""
    return _claimed


def limit_blas_threads() -> None:
    """Have OpenBLAS start one thread, not one a core, when numpy is imported after this call (in a
    process filterkit owns, unless the user sets its threads): its idle threads spin (7 % of the CPU
    of an identity rewrite), and nothing filterkit runs needs BLAS.  Child processes inherit it.
    """
    if owns_process() and "numpy" not in sys.modules and not any(name in os.environ for name in BLAS_THREAD_VARIABLES):
        os.environ["OPENBLAS_NUM_THREADS"] = "1"


def cache_own_bytecode(packages: tuple[str, ...] = ("filterkit", "filterkit_plugins")) -> int:
    """Write the bytecode of the modules of ``packages`` this process compiled from source because none was
    cached (``PYTHONDONTWRITEBYTECODE=1`` with an editable install: 0.07 s of CPU a run), as pip writes it for
    an installed package; the next run reads it.  Only where the flag stopped Python writing it, only for
    filterkit's own modules, and silently not where the folder is read-only.  Returns how many it wrote."""
    if not sys.dont_write_bytecode:
        return 0
    written = 0
    for name, module in list(sys.modules.items()):
        if name.partition(".")[0] not in packages:
            continue
        spec = getattr(module, "__spec__", None)
        source, cached = getattr(spec, "origin", None), getattr(spec, "cached", None)
        if not (source and cached and source.endswith(".py")):
            continue
        try:
            if _cached_is_current(source, cached):
                continue
        except OSError:
            continue
        import py_compile  # 1.6 ms of import (traceback with it), only for a run that has bytecode to write

        try:
            py_compile.compile(source, cfile=cached, doraise=True)
            written += 1
        except (OSError, py_compile.PyCompileError):
            continue
    return written


def _cached_is_current(source: str, cached: str) -> bool:
    """Whether ``cached`` holds this interpreter's bytecode of ``source`` as it is now, by the header Python
    checks (magic number, timestamp flags, the source's mtime and size)."""
    try:
        with open(cached, "rb") as opened:
            header = opened.read(16)
    except OSError:
        return False
    status = os.stat(source)
    return (
        len(header) == 16
        and header[:4] == importlib.util.MAGIC_NUMBER
        and header[4:8] == bytes(4)
        and int.from_bytes(header[8:12], "little") == int(status.st_mtime) & 0xFFFFFFFF
        and int.from_bytes(header[12:16], "little") == status.st_size & 0xFFFFFFFF
    )
