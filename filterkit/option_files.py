"""The files options name (``Option(names_file=True)``: a stop-word list, a cost matrix), read once a run.

A command reads them before any fit (:func:`files_of`) and runs within :func:`sent_files`, so that every fit reads
those bytes through :func:`option_file`: in this process, in a worker process, or in a Dask task on another machine,
whose own file system is never looked at.  A pipe, or a file edited during the run, gives every fold the same bytes.
"""

from __future__ import annotations

import contextlib
import contextvars
import errno

#: The files options name as a run gives them (path as given → the bytes, or the OSError reading them gave),
#: read by :func:`option_file` instead of the file system when set.
GIVEN_FILES: contextvars.ContextVar[dict[str, bytes | OSError] | None] = contextvars.ContextVar(
    "filterkit_given_files", default=None
)

#: The most :func:`option_file` reads of a file (one byte more tells a larger file).
OPTION_FILE_BYTES = 64 << 20


def option_file(path: str) -> bytes:
    """The first :data:`OPTION_FILE_BYTES` + 1 bytes of the file an option names: as the run gives
    them (:data:`GIVEN_FILES`), else from the file system (OSError as ``open`` raises it)."""
    given = GIVEN_FILES.get()
    if given is None:
        with open(path, "rb") as stream:
            return stream.read(OPTION_FILE_BYTES + 1)
    read = given.get(path)
    if read is None:
        raise FileNotFoundError(errno.ENOENT, "not sent with the task (only the files its options name are)", path)
    if isinstance(read, OSError):
        raise read
    return read


def files_of(configured) -> dict[str, bytes | OSError]:
    """The files the options of ``configured`` (stages, a classifier) name (``Option.names_file``; not a value of
    its ``built_in``), read once: each one's bytes, or the OSError reading it gave, which a fit raises as a read of
    its own would."""
    files: dict[str, bytes | OSError] = {}
    for plugin in configured:
        for option in plugin.options:
            path = plugin.params.get(option.name)
            if option.names_file and isinstance(path, str) and path not in files and path not in option.built_in:
                try:
                    files[path] = option_file(path)
                except OSError as error:
                    files[path] = error
    return files


def named_paths(configured, spelled: str) -> list[tuple[str, str]]:
    """(the option as the command line spells it: ``spelled`` and its name, the path) of each file the options of
    ``configured`` (a stage or a classifier) name (``Option.names_file``, not a value of its ``built_in``): inputs,
    which no output of the command may be."""
    found = []
    for option in configured.options:
        path = configured.params.get(option.name)
        if option.names_file and isinstance(path, str) and path not in option.built_in:
            found.append((spelled + option.flag.removeprefix("--"), path))
    return found


@contextlib.contextmanager
def sent_files(files: dict[str, bytes | OSError] | None):
    """Within the block, :func:`option_file` reads ``files`` (path → bytes, or the OSError its read gave) and
    never the file system; None leaves the block as it is (a run that read none)."""
    if files is None:
        yield
        return
    token = GIVEN_FILES.set(files)
    try:
        yield
    finally:
        GIVEN_FILES.reset(token)
