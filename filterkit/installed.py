"""The installed plugins' entry points, read (:func:`entry_points_of`) and remembered between runs of the console
script.

Finding them costs a run about 20 ms of CPU, most of it importing ``importlib.metadata`` (it imports
``email``, ``zipfile`` and ``csv``): an eighth of the start of ``filterkit in.arff l2``.  What it finds
depends on the distributions' metadata alone, so :func:`recall` gives back what :func:`remember` kept
while the :func:`fingerprint` of that metadata is the same: the ``sys.path`` entries; the metadata
folders ``importlib.metadata`` reads in each (``*.dist-info``, ``*.egg-info``, an egg's ``EGG-INFO``), in
the order the folder lists them; a checksum of each one's ``entry_points.txt`` and, where it has one, of
its ``METADATA`` and ``PKG-INFO``; each zip file's size, times and inode.  Where a meta-path finder other
than Python's path finder (or importlib_metadata's, which stands in for it) may find distributions, or an
entry of ``sys.path`` is not a string, nothing is remembered.  The file lives in the user's cache folder
(``$XDG_CACHE_HOME`` or ``~/.cache``, under ``filterkit``); one that is not a regular file of the user's,
or that cannot be read or written, is passed over.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import re
import stat
import sys
import zlib
from functools import reduce
from importlib.machinery import PathFinder
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from importlib import metadata

#: The folders on a ``sys.path`` folder that ``importlib.metadata`` takes for distributions' metadata.
METADATA_FOLDERS = (".dist-info", ".egg-info")
#: An entry point's value, as ``importlib.metadata.EntryPoint`` reads it.
OBJECT_REFERENCE = r"(?P<module>[\w.]+)\s*(:\s*(?P<attribute>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$"


def recall(groups: tuple[str, ...], mark: list) -> tuple[list[list[str]], list[str]] | None:
    """What :func:`remember` kept for ``groups`` under the fingerprint ``mark`` (entry points as [group, name,
    value, distribution, version], and the warnings their discovery gave), or None."""
    path = _cache_file(groups)
    if path is None:
        return None
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0))
        with open(descriptor, encoding="utf-8") as opened:
            if not _own_regular_file(os.fstat(descriptor)):
                return None
            kept = json.load(opened)
        entry_points, warnings = kept["entry_points"], kept["warnings"]
        if kept["fingerprint"] == mark and _strings(warnings) and all(_strings(p, 5) for p in entry_points):
            return entry_points, warnings
    except (OSError, ValueError, KeyError, TypeError, RecursionError):  # written again by the run that finds them
        pass
    return None


def remember(groups: tuple[str, ...], mark: list, entry_points: list[list[str]], warnings: list[str]) -> None:
    """Keep the entry points of ``groups``, found after the fingerprint ``mark`` was taken, for the next run's
    :func:`recall`, if the fingerprint is ``mark`` still: a distribution installed, removed or put back while
    they were found (``pip install --force-reinstall``) could leave a fingerprint that holds for what was not
    found.  Silently not where the cache folder cannot be written."""
    path = _cache_file(groups)
    if path is None or fingerprint() != mark:
        return
    import tempfile  # only for a run that found them afresh

    written = None
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        descriptor, written = tempfile.mkstemp(prefix="entry-points-", suffix=".tmp", dir=os.path.dirname(path))
        with open(descriptor, "w", encoding="utf-8") as opened:
            json.dump({"fingerprint": mark, "entry_points": entry_points, "warnings": warnings}, opened)
        os.replace(written, path)  # whole or not at all, for a run reading it meanwhile
    except (OSError, TypeError, ValueError):
        if written is not None:
            with contextlib.suppress(OSError):
                os.unlink(written)


def fingerprint() -> list | None:
    """What the distributions ``importlib.metadata`` finds depend on (the module's docstring says what);
    None where it may depend on more."""
    if not all(_finds_on_sys_path(finder) for finder in sys.meta_path if hasattr(finder, "find_distributions")):
        return None
    mark: list = [sys.executable]
    for entry in sys.path:
        if not isinstance(entry, str):
            return None
        folder = entry or "."
        try:
            with os.scandir(folder) as children:
                names = [child.name for child in children]
        except NotADirectoryError:
            mark.append([entry, _zip_stamp(folder)])
            continue
        except OSError:
            mark.append([entry, None])
            continue
        egg = os.path.basename(folder).lower().endswith(".egg")
        # in the folder's order: of two distributions of one name in it, importlib.metadata takes the one listed first
        found = [n for n in names if n.lower().endswith(METADATA_FOLDERS) or (egg and n.lower() == "egg-info")]
        mark.append([entry, [_metadata_stamps(os.path.join(folder, name)) for name in found]])
    return mark


def _finds_on_sys_path(finder) -> bool:
    """Whether a meta-path finder finds distributions as Python's path finder does: it is that finder, or
    importlib_metadata's (Dask imports it, and it then takes the place of Python's)."""
    kind = type(finder)
    return finder is PathFinder or (kind.__module__, kind.__qualname__) == ("importlib_metadata", "MetadataPathFinder")


def _metadata_stamps(path: str) -> list:
    """A metadata folder's name, a checksum of its entry_points.txt and, if it has one, of its METADATA and PKG-INFO
    (``importlib.metadata`` names the distribution and its version from the first it finds); a distribution without
    entry points has none to find."""
    entry_points = _checksum(os.path.join(path, "entry_points.txt"))
    if entry_points is None:
        return [os.path.basename(path), None]
    described = (_checksum(os.path.join(path, name)) for name in ("METADATA", "PKG-INFO"))
    return [os.path.basename(path), entry_points, *described]


def _checksum(path: str) -> int | None:
    """The CRC-32 of a file's bytes and their count in one number, or None if it cannot be read."""
    try:
        with open(path, "rb") as opened:
            content = opened.read()
    except OSError:
        return None
    return zlib.crc32(content) << 32 | len(content) & 0xFFFFFFFF


def _zip_stamp(path: str) -> list[int] | None:
    """A zip file's times, size and inode: its status change time too, which a copy keeping the others cannot set."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return [status.st_mtime_ns, status.st_ctime_ns, status.st_size, status.st_ino]


def load_object(value: str) -> object:
    """The object an entry point's value names (``module``, ``module:attribute.attribute``, extras after),
    imported as ``importlib.metadata.EntryPoint.load`` imports it; ValueError for a value of another form."""
    match = re.match(OBJECT_REFERENCE, value)
    if match is None:
        raise ValueError(f"invalid object reference {value!r} (an entry point names module or module:attribute)")
    attributes = (match.group("attribute") or "").split(".")
    return reduce(getattr, filter(None, attributes), importlib.import_module(match.group("module")))


def _strings(value, length: int | None = None) -> bool:
    """Whether ``value`` is a list of strings (of ``length`` of them, if given)."""
    return isinstance(value, list) and all(isinstance(s, str) for s in value) and length in (None, len(value))


def _own_regular_file(status: os.stat_result) -> bool:
    """Whether a file is a regular one, owned by this user where files have owners."""
    return stat.S_ISREG(status.st_mode) and (not hasattr(os, "getuid") or status.st_uid == os.getuid())


def _cache_file(groups: tuple[str, ...]) -> str | None:
    """The file of this interpreter and ``groups`` (a checksum of them in its name): one per environment,
    whatever the ``sys.path`` (which the fingerprint holds); None without an absolute cache folder (no home)."""
    folder = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(folder):  # unset, or relative: which the XDG specification says to pass over
        folder = os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(folder):  # no HOME and no home in the password database: "~" as it was
        return None
    key = zlib.crc32(json.dumps([sys.executable, groups]).encode("utf-8"))
    return os.path.join(folder, "filterkit", f"entry-points-{key:08x}.json")


def read_entry_points(groups: tuple[str, ...]) -> tuple[list[metadata.EntryPoint], list[str]]:
    """The installed entry points of ``groups``, as ``importlib.metadata.entry_points`` finds them, and a warning
    for each distribution whose ``entry_points.txt`` cannot be read (its entry points left out)."""
    from importlib import metadata  # 17 ms of import: only for a run that does not recall them

    found: list[metadata.EntryPoint] = []
    warnings: list[str] = []
    distributions: dict[str, metadata.Distribution] = {}
    for distribution in metadata.distributions():  # the first of each name on sys.path, as entry_points
        distributions.setdefault(distribution._normalized_name, distribution)  # type: ignore[attr-defined]
    for distribution in distributions.values():
        try:
            found.extend(point for point in distribution.entry_points if point.group in groups)
        except Exception as error:
            warnings.append(
                f"distribution {distribution.metadata['Name']}: its entry_points.txt cannot be read "
                f"({type(error).__name__}: {error}); its plugins are left out"
            )
    return found, warnings


class EntryPoint(NamedTuple):
    """An installed entry point with its distribution's name and version."""

    group: str
    name: str
    value: str
    distribution: str
    version: str

    def load(self) -> Any:
        """The object the entry point names, imported."""
        return load_object(self.value)


def entry_points_of(groups: tuple[str, ...], remembered: bool) -> tuple[list[EntryPoint], list[str]]:
    """The entry points of ``groups`` and the warnings their discovery gave; with ``remembered``, those the last run
    found while the installed distributions are the same (importing ``importlib.metadata`` and reading the
    metadata took 20 ms of every run)."""
    mark = fingerprint() if remembered else None
    recalled = recall(groups, mark) if mark is not None else None
    if recalled is not None:
        return [EntryPoint(*point) for point in recalled[0]], recalled[1]
    found, warnings = read_entry_points(groups)
    named: dict[int, tuple[str, str]] = {}
    for point in found:  # each distribution's METADATA parsed once (twelve entry points read it 24 times: 10 ms)
        if id(point.dist) not in named:
            named[id(point.dist)] = _name_and_version(point.dist)
    points = [EntryPoint(p.group, p.name, p.value, *named[id(p.dist)]) for p in found]
    if mark is not None:
        remember(groups, mark, [list(point) for point in points], warnings)
    return points, warnings


def _name_and_version(distribution) -> tuple[str, str]:
    """A distribution's name and version; "?" for an entry point without one."""
    if distribution is None:
        return ("?", "")
    metadata = distribution.metadata  # read and parsed anew by each of .name and .version
    return (metadata["Name"], metadata["Version"])
