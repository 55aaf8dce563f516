"""Output files: the rules every file filterkit writes follows, as ``>`` writes them.

:func:`checked_output` checks a target before any work and says how it will be written
(:class:`OutputFile`); :func:`staged_output` writes it and puts it in place only once complete.
"""

from __future__ import annotations

import contextlib
import errno
import gzip
import os
import stat
from dataclasses import dataclass
from typing import BinaryIO

from filterkit.errors import FilterkitError
from filterkit.ownership import stopping_signals_recorded

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; a file with other hard links is copied into unlocked
    fcntl = None  # type: ignore[assignment]


@dataclass(frozen=True)
class OutputFile:
    """An output target: ``path`` as given (errors name it), ``target`` the file the bytes go to (links
    resolved), and ``how``:

    - ``"replace"``: a new file, or a regular file with one link in a writable folder: written beside
      it and renamed onto it once complete (a new file gets 0666 & ~umask, an existing one keeps its
      mode and, where allowed, its owner);
    - ``"copy"``: a file that must stay the same file (other hard links, or a folder we may not write):
      completed in a temporary file, then copied in place under an exclusive lock;
    - ``"stream"``: a device, FIFO or other non-regular file, written directly.
    """

    path: str
    target: str
    how: str
    existing: os.stat_result | None

    @property
    def staging_folder(self) -> str:
        """Where this output's temporary file goes: beside the target when possible."""
        folder = os.path.dirname(self.target)
        if self.how == "replace" or os.access(folder, os.W_OK | os.X_OK):
            return folder
        import tempfile  # here: writing to stdout needs neither it nor shutil (5 ms of a start)

        return tempfile.gettempdir()


def checked_output(path: str | os.PathLike) -> OutputFile:
    """``path`` as an output target; FilterkitError naming it if it cannot be written."""
    path = os.fspath(path)
    if not path:
        raise FilterkitError("cannot write '': the file name is empty")
    if path == "-":
        raise FilterkitError("cannot write -: this output is a file, not standard output (./- names a file '-')")
    target = os.path.realpath(path)
    try:
        status = os.stat(target)
    except FileNotFoundError:
        status = None
    except OSError as error:
        raise FilterkitError(f"cannot write {path}: {error.strerror or error}") from None
    if status is None:  # /dev/stdout on a pipe: realpath names a "pipe:[N]" of /proc/PID/fd, which opening it reaches
        with contextlib.suppress(OSError):
            through = os.stat(path)
            if not stat.S_ISREG(through.st_mode) and not stat.S_ISDIR(through.st_mode):
                target, status = os.path.abspath(path), through
    folder = os.path.dirname(target)
    if status is None:
        if not os.path.isdir(folder):
            raise FilterkitError(f"cannot write {path}: no folder {folder}")
        if not os.access(folder, os.W_OK | os.X_OK):
            raise FilterkitError(f"cannot write {path}: the folder {folder} is not writable")
        return OutputFile(path, target, "replace", None)
    if stat.S_ISDIR(status.st_mode):
        raise FilterkitError(f"cannot write {path}: it is a folder")
    if not stat.S_ISREG(status.st_mode):
        if not os.access(target, os.W_OK):
            raise FilterkitError(f"cannot write {path}: permission denied")
        return OutputFile(path, target, "stream", status)
    try:
        os.close(os.open(target, os.O_WRONLY | os.O_NOCTTY))
    except OSError as error:
        raise FilterkitError(f"cannot write {path}: {error.strerror or error}") from None
    if status.st_nlink > 1 or not os.access(folder, os.W_OK | os.X_OK):
        return OutputFile(path, target, "copy", status)
    return OutputFile(path, target, "replace", status)


#: gzip's own default level: about 3x smaller than level 1 on ARFF text, at a fraction of level 9's time.
GZIP_LEVEL = 6


def is_compressed(output: OutputFile) -> bool:
    """Whether ``output`` is written gzip-compressed: its name ends with ``.gz`` (any case), as an input's does."""
    return output.path.lower().endswith(".gz")


class StagedOutput:
    """An output being written: ``stream`` takes the bytes, :meth:`publish` puts them in place.  For a ``.gz``
    name (:func:`is_compressed`) ``stream`` compresses them into ``file``, with no file name or time in the gzip
    header (the same bytes each run); else it is ``file``."""

    def __init__(self, output: OutputFile):
        self.output = output
        self.temporary: str | None = None
        #: An output written in place, opened and locked (:meth:`claim`).
        self.claimed: BinaryIO | None = None
        if output.how == "stream":
            self.file = open(output.target, "wb")
        else:
            import tempfile  # as in staging_folder

            handle, self.temporary = tempfile.mkstemp(
                prefix=f".{os.path.basename(output.target)}.", suffix=".tmp", dir=output.staging_folder
            )
            self.file = os.fdopen(handle, "wb")
        self.stream: BinaryIO | gzip.GzipFile = self.file
        if is_compressed(output):
            self.stream = gzip.GzipFile(filename="", mode="wb", fileobj=self.file, compresslevel=GZIP_LEVEL, mtime=0)

    def complete(self) -> None:
        """End the compressed stream (its trailer), if any, then flush the file and sync it to disk: a full disk
        fails here, before the output (or a model saved with it) is published."""
        if self.stream is not self.file:
            self.stream.close()
        self.file.flush()
        with contextlib.suppress(OSError) if self.temporary is None else contextlib.nullcontext():
            os.fsync(self.file.fileno())  # a pipe or terminal (written directly) cannot be synced

    def claim(self) -> None:
        """For an output written in place (``"copy"``): open it and take its lock now, a wait that a stopping signal
        still stops, before a caller holds the signals over publishing it with a model."""
        if self.output.how == "copy" and self.claimed is None:
            self.claimed = _locked(self.output.target)

    def publish(self) -> None:
        """Complete the output (:meth:`complete`) and put it in place (rename, or copy into the file)."""
        self.complete()
        self.file.close()
        if self.temporary is not None:
            publish_file(self.output, self.temporary, self.claimed)
            self.temporary = None

    def discard(self) -> None:
        """Close the stream and remove the temporary file, if still there (a compressed stream ended first, so that
        it is not ended, noisily, once its file is gone)."""
        with contextlib.suppress(OSError, ValueError):
            self.stream.close()
        with contextlib.suppress(OSError):
            self.file.close()
        if self.claimed is not None:
            with contextlib.suppress(OSError):
                self.claimed.close()
        if self.temporary is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.temporary)
            self.temporary = None


@contextlib.contextmanager
def staged_output(output: OutputFile):
    """A :class:`StagedOutput` for ``output``; unless published, its temporary file is removed.  A
    write that fails without naming a file (a full disk, ``/dev/full``), or naming a temporary file of
    ``output``'s (whose random name the user never gave), is an error naming ``output``."""
    try:
        stage = StagedOutput(output)
    except OSError as error:
        raise FilterkitError(f"cannot write {output.path}: {error.strerror or error}") from None
    try:
        yield stage
    except OSError as error:
        if error.filename is not None and not _is_temporary_of(error.filename, output):
            raise
        raise FilterkitError(f"cannot write {output.path}: {error.strerror or error}") from None
    finally:
        stage.discard()


def _is_temporary_of(filename, output: OutputFile) -> bool:
    """Whether ``filename`` is one of the temporary files made for ``output`` (:class:`StagedOutput`,
    :func:`publish_file`)."""
    name = os.path.basename(os.fsdecode(filename))
    return name.startswith(f".{os.path.basename(output.target)}.") and name.endswith(".tmp")


def publish_file(output: OutputFile, temporary: str, claimed: BinaryIO | None = None) -> None:
    """Put the complete file ``temporary`` in place of ``output`` (see :class:`OutputFile`), consuming it; an
    output written in place into ``claimed`` where given (:meth:`StagedOutput.claim`), which it closes."""
    import shutil  # as tempfile in OutputFile.staging_folder
    import tempfile

    try:
        if output.how == "replace":
            _set_mode_and_owner(temporary, output.existing)
            try:
                os.replace(temporary, output.target)
                return
            except OSError as error:
                if error.errno != errno.EXDEV:
                    raise
            handle, beside = tempfile.mkstemp(
                prefix=f".{os.path.basename(output.target)}.", suffix=".tmp", dir=os.path.dirname(output.target)
            )
            try:
                with os.fdopen(handle, "wb") as copy, open(temporary, "rb") as complete:
                    shutil.copyfileobj(complete, copy)
                    copy.flush()
                    os.fsync(copy.fileno())
                _set_mode_and_owner(beside, output.existing)
                os.replace(beside, output.target)
            except BaseException:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(beside)
                raise
            return
        # In place, under an exclusive lock taken before writing (a stopping signal stops its wait): two runs
        # copying into one hard-linked file take turns, so the last complete run's bytes are the file's, whole.
        with claimed or _locked(output.target) as into, open(temporary, "rb") as complete:
            # a stopping signal waits for the copy's end: met in its middle, it had left old bytes after new ones
            with stopping_signals_recorded() as stopped:
                _reserve(into.fileno(), os.fstat(complete.fileno()).st_size)
                shutil.copyfileobj(complete, into)
                into.truncate()
                into.flush()
                os.fsync(into.fileno())
        if stopped:
            stopped[0]()
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)


def _locked(target: str) -> BinaryIO:
    """``target`` opened to be written over in place, under an exclusive lock; opened to read too where allowed:
    glibc's posix_fallocate, where the file system has no fallocate, reads the file."""
    readable = os.O_RDWR if os.access(target, os.R_OK) else os.O_WRONLY
    into = open(os.open(target, readable | os.O_NOCTTY), "wb")
    if fcntl is not None:
        try:
            fcntl.flock(into.fileno(), fcntl.LOCK_EX)
        except BaseException:
            into.close()
            raise
    return into


def _reserve(handle: int, size: int) -> None:
    """The blocks of ``size`` bytes given to the open file ``handle`` before its bytes are written over, so that
    a disk too full for them fails here, the file as it was (it had been emptied first, then written in part:
    a hard-linked output lost its old bytes on a full disk).  Where the file system cannot reserve (no
    fallocate), the write goes on as before."""
    if size == 0 or not hasattr(os, "posix_fallocate"):
        return
    before = os.fstat(handle).st_size
    try:
        os.posix_fallocate(handle, 0, size)
    except OSError as error:
        if error.errno in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENODEV, errno.ESPIPE, errno.EBADF):
            return  # EBADF: glibc's emulation reading a file opened to write only
        os.ftruncate(handle, before)  # a reservation past the old end, made in part: the old length again
        raise


def _set_mode_and_owner(path: str, existing: os.stat_result | None) -> None:
    """An existing file's mode (and owner where allowed) on ``path``; else 0666 & ~umask."""
    if existing is None:
        os.chmod(path, 0o666 & ~_umask())
        return
    with contextlib.suppress(PermissionError):
        os.chown(path, existing.st_uid, existing.st_gid)
    os.chmod(path, stat.S_IMODE(existing.st_mode))


def _umask() -> int:
    """The process's umask, read without changing it where Linux tells it."""
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def append_rest(source, stream) -> None:
    """The rest of the open binary file ``source`` appended to the binary ``stream``: by the kernel
    (``copy_file_range``: no copy through this process, a fifth of a Dask client's CPU writing its parts into
    one file) where both are plain files, else through a buffer (a pipe, a compressed stream)."""
    import io
    import shutil

    copied, start = 0, source.tell()
    if type(stream) in (io.BufferedWriter, io.BufferedRandom) and hasattr(os, "copy_file_range"):
        with contextlib.suppress(OSError):
            if stat.S_ISREG(os.fstat(stream.fileno()).st_mode):
                stream.flush()
                try:
                    while step := os.copy_file_range(source.fileno(), stream.fileno(), 1 << 30, start + copied):
                        copied += step
                finally:  # the buffered stream's own record of its place, moved past what the kernel wrote
                    stream.seek(os.lseek(stream.fileno(), 0, os.SEEK_CUR))
    source.seek(start + copied)
    shutil.copyfileobj(source, stream, 1 << 20)
