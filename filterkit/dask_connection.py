"""How a client of the Dask engine (:mod:`filterkit.distributed`) reaches a scheduler, and what it compares with
its workers: a client connected within a deadline (an address that is none, or a listener that never answers, is
one error), the ``--plugins-dir`` files every process reads, a plugin's provenance as the workers load it, and why a
chain could not be sent to them."""

from __future__ import annotations

import hashlib
import os
import threading
from typing import Any, Callable

from filterkit.contract import stage_origin
from filterkit.errors import FilterkitError
from filterkit.stage import Provenance


def scheduler_client(distributed, scheduler: str):
    """A client of the scheduler at ``scheduler``, connected within twice Dask's connect timeout (Dask's client waited
    for good on a listener that never answered its handshake); FilterkitError naming an address that is none
    (``foo``, ``http://…``), or where nothing answers as a scheduler (another service's bytes)."""
    import dask

    deadline = 2 * dask.utils.parse_timedelta(dask.config.get("distributed.comm.timeouts.connect"), default="s")
    made: dict[str, Any] = {}

    def connect() -> None:
        try:
            made["client"] = distributed.Client(scheduler)
        except Exception as error:  # any: a bad address, or bytes that are not Dask's protocol
            made["error"] = error

    if not scheduler.strip():
        raise FilterkitError("--scheduler is empty: give the scheduler's address (tcp://HOST:8786)")
    thread = threading.Thread(target=connect, name="filterkit-dask-connect", daemon=True)
    thread.start()
    thread.join(deadline)
    if thread.is_alive() or "client" not in made:
        why = f"nothing answered as one within {deadline:g} s" if thread.is_alive() else made.get("error")
        why = f"{type(why).__name__}: {why}" if isinstance(why, Exception) else why
        raise FilterkitError(f"no Dask scheduler with workers at {scheduler} ({why})")
    return made["client"]


def absolute_provenance(provenance: Provenance | None) -> Provenance | None:
    """``provenance`` with a ``--plugins-dir`` folder given relative to the client's directory made absolute, as
    the workers load it (the same plugin read as another)."""
    prefix = "plugins-dir "
    if provenance is None or not provenance.distribution.startswith(prefix):
        return provenance
    folder = provenance.distribution[len(prefix) :]
    stem = provenance.plugin.split(" (", 1)[0]
    absolute = os.path.abspath(folder)
    return Provenance(f"{stem} ({os.path.join(absolute, stem + '.py')})", prefix + absolute, provenance.version)


def plugin_files(plugins_dir: str | None, read: Callable[[str], Any]) -> tuple:
    """``read(path)`` of each ``--plugins-dir`` plugin file, by name (none without the folder)."""
    if plugins_dir is None or not os.path.isdir(plugins_dir):
        return ()
    names = sorted(name for name in os.listdir(plugins_dir) if name.endswith(".py"))
    return tuple((name, read(os.path.join(plugins_dir, name))) for name in names)


def plugin_digest(plugins_dir: str | None) -> str:
    """The SHA-256 of the ``--plugins-dir`` plugin files as this process reads them."""

    def contents(path: str) -> bytes:
        with open(path, "rb") as handle:
            return handle.read()

    return hashlib.sha256(repr(plugin_files(plugins_dir, contents)).encode()).hexdigest()


def unsendable(chain, error: Exception) -> str:
    """Why ``chain``'s recipe could not be sent to the workers: the first fitted stage whose state pickle cannot take
    (a local run keeps it in its process), else Dask's ``error``."""
    from distributed.protocol import pickle as dask_pickle

    for stage in chain.stages:
        try:
            state = stage.state()
        except Exception:
            continue  # not fitted yet
        try:
            dask_pickle.dumps(state)
        except Exception as unpickled:
            return (
                f"{stage_origin(stage)}: its fitted state cannot be sent to the Dask workers "
                f"({type(unpickled).__name__}: {unpickled}): run it with --engine local"
            )
    return f"the chain cannot be sent to the Dask workers ({type(error).__name__}: {error})"
