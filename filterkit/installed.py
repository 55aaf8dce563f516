"""The installed plugins' entry points, remembered between runs of the console script.

Finding them costs a run about 20 ms of CPU, most of it importing ``importlib.metadata`` (it imports
``email``, ``zipfile`` and ``csv``): an eighth of the start of ``filterkit in.arff l2``.  What it finds
depends on the distributions' metadata alone, so :func:`recall` gives back what :func:`remember` kept
while every folder on ``sys.path`` lists the same ``*.dist-info``, ``*.egg-info`` and ``*.egg`` entries,
with their ``entry_points.txt`` and ``METADATA`` (or ``PKG-INFO``) unchanged, and each zip file on it is
unchanged.  Else, or when a meta-path finder other than Python's path finder (or importlib_metadata's,
which stands in for it) may find distributions, it gives None and the run asks ``importlib.metadata``.
The file lives in the user's cache folder (``$XDG_CACHE_HOME`` or ``~/.cache``, under ``filterkit``); one
that cannot be read or written is passed over.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import sys
import zlib
from functools import reduce
from importlib.machinery import PathFinder

#: What ``importlib.metadata`` takes for a distribution on a ``sys.path`` folder (an egg's metadata is in EGG-INFO).
METADATA_FOLDERS = (".dist-info", ".egg-info", ".egg")
#: An entry point's value, as ``importlib.metadata.EntryPoint`` reads it.
OBJECT_REFERENCE = r"(?P<module>[\w.]+)\s*(:\s*(?P<attribute>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$"


def recall(groups: tuple[str, ...]) -> tuple[list[list[str]], list[str]] | None:
    """What :func:`remember` kept for ``groups`` (entry points as [group, name, value, distribution,
    version], and the warnings their discovery gave), or None when it may no longer hold."""
    mark = fingerprint()
    if mark is None:
        return None
    try:
        with open(_cache_file(groups), encoding="utf-8") as opened:
            kept = json.load(opened)
        entry_points, warnings = kept["entry_points"], kept["warnings"]
        if kept["fingerprint"] == mark and _strings(warnings) and all(_strings(p, 5) for p in entry_points):
            return entry_points, warnings
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return None


def _strings(value, length: int | None = None) -> bool:
    """Whether ``value`` is a list of strings (of ``length`` of them, if given)."""
    return isinstance(value, list) and all(isinstance(s, str) for s in value) and length in (None, len(value))


def remember(groups: tuple[str, ...], entry_points: list[list[str]], warnings: list[str]) -> None:
    """Keep the entry points of ``groups`` found now for the next run's :func:`recall`; silently not
    where the cache folder cannot be written."""
    mark = fingerprint()
    if mark is None:
        return
    path = _cache_file(groups)
    written = f"{path}.{os.getpid()}"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(written, "w", encoding="utf-8") as opened:
            json.dump({"fingerprint": mark, "entry_points": entry_points, "warnings": warnings}, opened)
        os.replace(written, path)  # whole or not at all, for a run reading it meanwhile
    except OSError:
        try:
            os.unlink(written)
        except OSError:
            pass


def fingerprint() -> list | None:
    """What the distributions ``importlib.metadata`` finds depend on: each ``sys.path`` entry with its
    metadata folders' names and their files' (mtime, size, inode), or a zip file's; None when a meta-path
    finder other than Python's path finder could find distributions too."""
    if not all(_finds_on_sys_path(finder) for finder in sys.meta_path if hasattr(finder, "find_distributions")):
        return None
    mark: list = [sys.executable]
    for entry in sys.path:
        folder = entry or "."
        try:
            with os.scandir(folder) as children:
                found = sorted(child.name for child in children if child.name.lower().endswith(METADATA_FOLDERS))
        except NotADirectoryError:
            mark.append([entry, _stamp(folder)])
            continue
        except OSError:
            mark.append([entry, None])
            continue
        mark.append([entry, [_distribution_stamps(os.path.join(folder, name)) for name in found]])
    return mark


def _finds_on_sys_path(finder) -> bool:
    """Whether a meta-path finder finds distributions as Python's path finder does: it is that finder, or
    importlib_metadata's (Dask imports it, and it then takes the place of Python's)."""
    kind = type(finder)
    return finder is PathFinder or (kind.__module__, kind.__qualname__) == ("importlib_metadata", "MetadataPathFinder")


def _distribution_stamps(path: str) -> list:
    """A metadata folder's (or egg's) name and stamps: its own, its entry_points.txt's, its METADATA's (PKG-INFO's)."""
    lowered = path.lower()
    inside = os.path.join(path, "EGG-INFO") if lowered.endswith(".egg") else path
    described = "METADATA" if lowered.endswith(".dist-info") else "PKG-INFO"
    stamps = (_stamp(path), _stamp(os.path.join(inside, "entry_points.txt")), _stamp(os.path.join(inside, described)))
    return [os.path.basename(path), *stamps]


def load_object(value: str) -> object:
    """The object an entry point's value names (``module``, ``module:attribute.attribute``, extras after),
    imported as ``importlib.metadata.EntryPoint.load`` imports it; ValueError for a value of another form."""
    match = re.match(OBJECT_REFERENCE, value)
    if match is None:
        raise ValueError(f"invalid object reference {value!r} (an entry point names module or module:attribute)")
    attributes = (match.group("attribute") or "").split(".")
    return reduce(getattr, filter(None, attributes), importlib.import_module(match.group("module")))


def _stamp(path: str) -> list[int] | None:
    try:
        status = os.stat(path)
    except OSError:
        return None
    return [status.st_mtime_ns, status.st_size, status.st_ino]


def _cache_file(groups: tuple[str, ...]) -> str:
    """The file of this interpreter and ``groups`` (a checksum of them in its name): one per environment,
    whatever the ``sys.path`` (which the fingerprint holds)."""
    folder = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(folder):  # unset, or relative: which the XDG specification says to pass over
        folder = os.path.join(os.path.expanduser("~"), ".cache")
    key = zlib.crc32(json.dumps([sys.executable, groups]).encode("utf-8"))
    return os.path.join(folder, "filterkit", f"entry-points-{key:08x}.json")
