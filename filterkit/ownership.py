"""Whether filterkit runs as its own program (the console script) or as a library in someone
else's process: process-wide settings (glibc's allocator, the fork server the local Dask
cluster's workers are forked from) are made only in a process filterkit owns."""

from __future__ import annotations

_claimed = False


def claim_process() -> None:
    """Called by the console script: this process is filterkit's to tune."""
    global _claimed
    _claimed = True


def owns_process() -> bool:
    """Whether :func:`claim_process` was called in this process."""
    return _claimed
