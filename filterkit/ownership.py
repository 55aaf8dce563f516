"""Whether filterkit runs as its own program (the console script) or as a library in someone
else's process: process-wide settings (glibc's allocator, the forking of the local Dask
cluster's workers from the client, the threads of the BLAS library) are made only in a
process filterkit owns."""

from __future__ import annotations

import os
import signal
import sys

_claimed = False

#: The variables that set how many threads OpenBLAS (numpy's and scipy's BLAS) starts, in the
#: order it reads them: a user who sets any of them is obeyed.
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")

#: The signals that stop a run of the console script, as Ctrl-C does: Ctrl-C, ``kill``, and the
#: terminal hanging up (those this system has).
STOPPING_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


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
