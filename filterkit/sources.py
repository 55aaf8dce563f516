"""Where a chain's rows come from: the sources :class:`filterkit.runner.Chain` fits on.

A source has a ``schema``, ``chunks()`` (the rows afresh, one call per pass) and ``close()``, and
for progress ``size`` and ``position()`` (the bytes a pass reads and has read; None: unknown).
A file (:class:`FileSource`) is re-read for each pass; a stream (:class:`StreamSource`) is spooled
once into an unlinked temporary file of numpy arrays; rows in memory (:class:`MemorySource`) are
served as they are.  svmlight and CSV (:class:`ScannedSource`) are scanned once for their header,
then read once per pass (a stream of them first copied into such a temporary file).  A pass over a
file is read one chunk ahead by a background thread (:func:`filterkit.background.read_ahead`).
"""

from __future__ import annotations

import collections
import contextlib
import functools
import gzip
import io
import json
import os
import stat
import zlib
from typing import IO, Generator, Iterator, cast

import numpy as np

from filterkit.arff.reader import DEFAULT_CHUNK_ROWS
from filterkit.arff.reader import open_source as open_stream
from filterkit.background import read_ahead
from filterkit.errors import ArffError, FilterkitError
from filterkit.formats import ARFF, FormatOptions, Layout, scanned_format
from filterkit.progress import active
from filterkit.schema import Chunk, Schema

#: What a saved model records of rows held in memory (:class:`MemorySource`): read as the default format, no options.
ARFF_READING: tuple[str, dict] = (ARFF, {})


class FileSource:
    """A file of a format that ``streams`` (ARFF), read afresh by its format's reader each pass (its header,
    read first, checked against the first by digest)."""

    def __init__(self, path: str, chunk_rows: int = DEFAULT_CHUNK_ROWS, format_name: str = ARFF):
        self.path = path
        self.chunk_rows = chunk_rows
        self.format = scanned_format(format_name)
        #: the format and the reading options a saved model records
        self.reading: tuple[str, dict] = (format_name, {})
        self.layout = self.format.scan(self._opened, path, FormatOptions(), None)
        self.schema = self.layout.schema
        self.header_comments = self.layout.header_comments
        #: the file's bytes (compressed ones for a gzip file), which every pass reads
        self.size: int | None = os.path.getsize(path)
        #: the rows, once a pass has read them all
        self.rows: int | None = None
        self._position = 0

    def _opened(self) -> IO[bytes]:
        """The file from its beginning."""
        return open(self.path, "rb")

    def chunks(self) -> Iterator[Chunk]:
        """The rows of the file, chunk by chunk, read afresh by :func:`read_ahead`."""
        self._position = 0
        ends: collections.deque[int] = collections.deque()
        return self._handed_over(read_ahead(functools.partial(self._read, ends)), ends)

    def _read(self, ends: collections.deque[int]) -> Iterator[Chunk]:
        """The chunks, in the reading thread; where each one ends in the file goes into ``ends``."""
        with open(self.path, "rb") as stream:
            for chunk in self.format.chunks(stream, self.path, self.layout, self.chunk_rows):
                ends.append(stream.tell())
                yield chunk

    def _handed_over(self, chunks: Iterator[Chunk], ends: collections.deque[int]) -> Iterator[Chunk]:
        """The chunks, in the caller's thread, :meth:`position` following the one handed over."""
        rows = 0
        try:
            for chunk in chunks:
                self._position = ends.popleft()
                rows += chunk.n_rows
                yield chunk
        finally:
            cast(Generator, chunks).close()
        self.rows = rows

    def position(self) -> int | None:
        """The bytes of the file read up to the end of the chunk last handed over (within a MiB)."""
        return self._position

    def close(self) -> None:
        """Nothing to release."""


class _Spooling:
    """A source that may copy its input into a temporary spool file, unlinked as soon as it is open, so
    nothing is left behind however the process ends (where it cannot be, :meth:`close` removes it)."""

    _spool: IO[bytes] | None = None
    _spool_path: str | None = None
    #: how the temporary file's name begins (seen only where a file cannot be unlinked while open)
    spool_prefix = "filterkit-spool-"

    def _open_spool(self, suffix: str = "") -> IO[bytes]:
        """A new, empty spool file (the caller makes it this source's ``_spool`` when it is ready)."""
        import tempfile  # here: a one-pass run never spools, and tempfile is 5 ms of a start

        handle, path = tempfile.mkstemp(prefix=self.spool_prefix, suffix=suffix)
        spool = os.fdopen(handle, "w+b")
        try:
            os.unlink(path)
        except OSError:
            self._spool_path = path
        return spool

    @contextlib.contextmanager
    def _filling(self, spool: IO[bytes], name: str) -> Iterator[None]:
        """Around the copy of ``name`` into ``spool``: on any error, close both the spool and this source,
        and an OSError becomes the error that the spool could not be written."""
        try:
            yield
        except BaseException as error:
            with contextlib.suppress(OSError):  # its last buffered bytes cannot be written either
                spool.close()
            self.close()
            if not isinstance(error, OSError):
                raise
            import tempfile  # imported by _open_spool

            raise FilterkitError(
                f"cannot spool {name} into the temporary folder {tempfile.gettempdir()} "
                f"({error.strerror or f'{error}: is the disk full?'}): free space there, "
                "or set TMPDIR to a folder with room for the data"
            ) from None

    def close(self) -> None:
        """Close (and so delete) the spool file, if any; bytes still buffered that the temporary folder cannot take
        are dropped with it (a write that failed has been reported, or made a pass give up keeping)."""
        for kept in (getattr(self, "_kept", None), getattr(getattr(self, "format", None), "kept", None)):
            if kept is not None:
                with contextlib.suppress(OSError):
                    kept.close()
        if self._spool is not None:
            with contextlib.suppress(OSError):
                self._spool.close()  # closes the file even when its last write fails
        if self._spool_path is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._spool_path)
        self._spool, self._spool_path = None, None


#: The bytes a fit's pass may keep for the pass after it (:class:`KeptChunks`), per byte of input as read (compressed,
#: for a gzip file; the spool's, for standard input): ``words`` keeps 0.5 (Debian ×10, one-line documents) and 0.3
#: (Reuters ×50), 1.2 with bigrams; a sparse chunk of counts 0.3 to 0.4 (grain); wider n-grams, whose rows hold many
#: more entries than the output keeps, read the input again rather than fill the temporary folder.  While a pass reads
#: one pass's chunks it fills the next one's file: twice the bound at most.  An input of unknown size (a folder of
#: documents) has no bound but the temporary folder's room.
MOST_KEPT_PER_INPUT_BYTE = 4


class KeptChunks(_Spooling):
    """What a fitting pass keeps of each chunk, in an unlinked temporary file of numpy arrays (no pickle), made at
    the first chunk: the chunk its stage was given, or, for a :class:`~filterkit.stage.KeptPass` stage,
    the chunk in that stage's own form (:meth:`~filterkit.stage.KeptPass.accumulate_kept`) with the class column of the
    chunk it was given.  The passes after it, and the one writing the output, read it back instead of reading the
    input and running the stages before that one again (:meth:`filterkit.runner.Chain.fit`)."""

    spool_prefix = "filterkit-kept-"

    def __init__(self, input_size: int | None = None) -> None:
        #: the position in the chain of the stage whose chunks these are (None: none kept)
        self.stage_position: int | None = None
        #: whether the chunks are in their stage's own form (else: as the stage was given them)
        self.own_form = False
        #: the bytes of the input the chunks come from (None: unknown), which progress shows a pass reading back
        self.size = input_size
        #: the rows kept
        self.rows: int | None = None
        self._most_bytes = None if input_size is None else MOST_KEPT_PER_INPUT_BYTE * input_size
        self._end, self._given_up = 0, False

    def fresh(self) -> "KeptChunks":
        """An empty store for the next pass to fill, with this one's bound, while this one is read."""
        return KeptChunks(self.size)

    def adopt(self, other: "KeptChunks") -> None:
        """Hold the chunks ``other`` kept (a whole pass) in place of this one's, which are deleted."""
        assert other.stage_position is not None, "nothing kept"
        self.close()
        self._spool, self._spool_path, other._spool, other._spool_path = other._spool, other._spool_path, None, None
        self.stage_position, self.own_form, self.rows, self._end = (
            other.stage_position,
            other.own_form,
            other.rows,
            other._end,
        )

    def keep(self, stage_position: int, kept: Chunk, class_column: np.ndarray | None, own_form: bool) -> None:
        """Append one chunk and its input's class column (None: none to check), written through.  Where the
        temporary folder cannot take them (full, not writable, past a file size limit), or they outgrow the bound
        given, nothing is kept (:meth:`give_up`): the pass after reads what it would read without this."""
        if self._given_up:
            return
        try:
            if self._spool is None:
                self._spool, self.stage_position = self._open_spool(suffix=".chunks"), stage_position
                self.own_form = own_form
            _save_chunk(self._spool, kept, narrow=True, class_column=class_column)
            self._spool.flush()  # a full folder fails here, not when the file is closed or read back
            self._end, self.rows = self._spool.tell(), (self.rows or 0) + kept.n_rows
        except OSError:
            self._given_up = True
        if self._given_up or (self._most_bytes is not None and self._end > self._most_bytes):
            self.give_up()

    def give_up(self) -> None:
        """Keep nothing of this pass: what was kept is deleted, and :meth:`keep` keeps no more."""
        self.close()
        self._given_up, self.stage_position, self.rows = True, None, None

    def position(self) -> int | None:
        """How far a pass reading back has come, in the input's bytes."""
        if self._spool is None or self.size is None or not self._end:
            return None
        return self.size * self._spool.tell() // self._end

    def chunks(self) -> Iterator[tuple[Chunk, np.ndarray | None]]:
        """Each kept chunk with its input's class column, in the order kept."""
        spool = self._spool
        assert spool is not None, "no chunk was kept"
        spool.seek(0)
        while spool.tell() < self._end:
            yield _load_chunk(spool)


def kept_for_rows(chunk: Chunk) -> KeptChunks:
    """A store for a fit's passes over rows held in memory (a fold's), bounded as a file's is
    (:data:`MOST_KEPT_PER_INPUT_BYTE`) by what the rows take: their values' bytes and their texts' characters (a
    byte each: a text not in ASCII keeps less than a file of it would)."""
    values = chunk.values
    size = values.data.nbytes if chunk.is_sparse else values.nbytes
    return KeptChunks(size + sum(len(text) for texts in chunk.text.values() for text in texts if isinstance(text, str)))


class StreamSource(_Spooling):
    """A stream of a format that ``streams`` (ARFF) read once, as it comes; :meth:`spool` makes it re-readable."""

    def __init__(self, stream, name: str = "<stdin>", chunk_rows: int = DEFAULT_CHUNK_ROWS, format_name: str = ARFF):
        self._stream = _CountedStream(stream)
        self.name = name
        #: the format and the reading options a saved model records
        self.reading: tuple[str, dict] = (format_name, {})
        self.layout, self._chunks = scanned_format(format_name).streamed(
            cast(IO[bytes], self._stream), name, chunk_rows
        )
        self.schema = self.layout.schema
        self.header_comments = self.layout.header_comments
        #: the bytes a pass reads: the stream's when it is a regular file, the spool's once spooled
        self.size: int | None = self._stream.size
        #: the rows, once spooled
        self.rows: int | None = None

    def position(self) -> int | None:
        """The bytes read so far in the pass under way: of the spool when there is one, else of the stream."""
        if self._spool is None:
            return self._stream.count
        try:
            return self._spool.tell()
        except (ValueError, OSError):
            return self.size

    @property
    def rereads_chunks(self) -> bool:
        """Whether a pass after the first reads chunks already parsed (from the spool), not the input."""
        return self._spool is not None

    def spool(self) -> None:
        """Copy every chunk into a temporary binary file, so passes can repeat (a pass of its own)."""
        spool = self._open_spool(suffix=".chunks")
        progress = active()
        progress.expect(1)
        with self._filling(spool, self.name), progress.step(f"spooling {self.name}", self) as meter:
            rows = 0
            for chunk in meter.counted(self._chunks):
                _save_chunk(spool, chunk)
                rows += chunk.n_rows
            spool.flush()
        self._spool, self.size, self.rows = spool, spool.tell(), rows

    def chunks(self) -> Iterator[Chunk]:
        """The rows: from the spool if there is one, else straight from the stream (once)."""
        if self._spool is None:
            return self._chunks
        self._spool.seek(0)
        return _spooled_chunks(self._spool)


def _spooled_chunks(spool: IO[bytes]) -> Iterator[Chunk]:
    """The chunks :func:`_save_chunk` wrote into ``spool``, from its position to its end."""
    with contextlib.suppress(EOFError):
        while True:
            yield _load_chunk(spool)[0]


def _save_chunk(spool, chunk: Chunk, narrow: bool = False, class_column: np.ndarray | None = None) -> None:
    """Append ``chunk`` (and the class column of the chunk it was made from, if given) to ``spool`` as one
    record (:func:`_write_record`); with ``narrow``, each array in fewer bytes where that loses nothing
    (:func:`_narrowed`)."""
    arrays = [np.asarray(array) for array in (chunk.csr()[:3] if chunk.is_sparse else (chunk.values,))]
    if chunk.weights is not None:
        arrays.append(np.asarray(chunk.weights))
    if class_column is not None:
        arrays.append(np.asarray(class_column))
    saved = [_narrowed(array) if narrow else array for array in arrays]
    meta = {
        "sparse": chunk.is_sparse,
        "shape": list(chunk.shape),
        "text": {str(k): v for k, v in chunk.text.items()},
        "weights": chunk.weights is not None,
        "class": class_column is not None,
        "narrowed": [
            array.dtype.str if narrower.dtype != array.dtype else None for narrower, array in zip(saved, arrays)
        ],
    }
    _write_record(spool, meta, saved)


def _write_record(spool, meta: dict, arrays: list[np.ndarray]) -> None:
    """Append ``meta`` and ``arrays`` (numbers, not objects: no pickle) to ``spool``: the JSON of ``meta`` with each
    array's type and shape, after its length in 8 bytes, then the arrays' bytes.  np.save's header per array, parsed
    back by ``ast.literal_eval``, cost 0.1 ms each: a third of a small chunk's time (:func:`_read_record`)."""
    arrays = [np.ascontiguousarray(array) for array in arrays]
    if any(array.dtype.hasobject for array in arrays):
        raise TypeError("a chunk of Python objects cannot be kept: kept chunks hold numbers (no pickle)")
    header = json.dumps({**meta, "arrays": [[array.dtype.str, array.shape] for array in arrays]}).encode("utf-8")
    spool.write(len(header).to_bytes(8, "little"))
    spool.write(header)
    for array in arrays:
        spool.write(array.data.cast("B") if array.size else b"")


def _read_record(spool) -> tuple[dict, list[np.ndarray]]:
    """The next record :func:`_write_record` appended to ``spool``, its arrays writable; EOFError at the end."""
    length = spool.read(8)
    if not length:
        raise EOFError
    meta = json.loads(_read_exactly(spool, np.empty(int.from_bytes(length, "little"), np.uint8)).tobytes())
    arrays = [_read_exactly(spool, np.empty(shape, dtype_name)) for dtype_name, shape in meta.pop("arrays")]
    return meta, arrays


def _read_exactly(spool, into: np.ndarray) -> np.ndarray:
    """``into`` filled from ``spool`` (an array of its own: not zeroed first, as a bytearray is, which was a fifth
    of reading a kept chunk back)."""
    if spool.readinto(into.data.cast("B") if into.size else bytearray()) != into.nbytes:
        raise OSError(f"{getattr(spool, 'name', 'a temporary file')} ends inside a chunk written to it")
    return into


def _narrowed(array: np.ndarray) -> np.ndarray:
    """``array`` in fewer bytes where that loses nothing (:func:`_load_chunk` casts it back): int64 as uint16 or int32
    (a sparse row's indices, a word's number), float64 as uint8 or float32 (a word's count; a NaN's payload is not
    kept).  The chunks ``words`` keeps took 83 MB for Debian ×10's 33 MB at 16 bytes an entry; grain ×100's
    kept counts took 95 MB at 8 bytes an entry, 36 MB at 3 (0.02 s less CPU writing and reading them back)."""
    if array.dtype == np.int64:
        if not array.size:
            return array.astype(np.int32)
        low, high = array.min(), array.max()
        if low >= 0 and high < 2**16:
            return array.astype(np.uint16)
        if low >= -(2**31) and high < 2**31:
            return array.astype(np.int32)
        return array
    if array.dtype == np.float64:
        with np.errstate(invalid="ignore"):  # NaN and values past a byte's range are cast, then found unequal
            narrow = array.astype(np.uint8) if _whole_bytes(array.flat[:64]) else None
        if narrow is not None and (narrow == array).all() and not np.signbit(array).any():  # -0.0 would be 0.0
            return narrow
        # a value past float32's range is kept as it is; a signalling NaN comes back quiet, as its payload goes
        with np.errstate(over="ignore", invalid="ignore"):
            narrow = array.astype(np.float32)
        # one comparison pass; array_equal's NaN masks and copies (half of Debian ×10's narrowing) only if it fails
        if (narrow == array).all() or np.array_equal(narrow, array, equal_nan=True):
            return narrow
    return array


def _whole_bytes(values: np.ndarray) -> bool:
    """Whether every one of a few float64 ``values`` (the first 64 of an array) is a whole number from 0 to 255 and
    not -0.0: a cheap look before :func:`_narrowed` tries a byte for each of many (an array that passes it and
    fails later pays for both tries: 5.2 ms for 2M values, where float32 alone takes 2.8)."""
    return bool(((values >= 0) & (values <= 255) & (values == np.floor(values)) & ~np.signbit(values)).all())


def _load_chunk(spool) -> tuple[Chunk, np.ndarray | None]:
    """The next chunk :func:`_save_chunk` wrote, and its class column (None when none was given); EOFError at the
    end."""
    meta, arrays = _read_record(spool)
    arrays = [array if wider is None else array.astype(wider) for array, wider in zip(arrays, meta["narrowed"])]
    class_column = arrays.pop() if meta["class"] else None
    weights = arrays.pop() if meta["weights"] else None
    text = {int(k): v for k, v in meta["text"].items()}
    if meta["sparse"]:
        data, indices, indptr = arrays
        return Chunk.from_csr(data, indices, indptr, tuple(meta["shape"]), text, weights), class_column
    return Chunk(arrays[0], text, weights), class_column


class _CountedStream:
    """A binary stream that counts the bytes read from it; ``size``: what it holds if a regular file."""

    def __init__(self, stream):
        self._stream = stream if hasattr(stream, "peek") else io.BufferedReader(stream)
        self.name = getattr(stream, "name", "<stream>")
        self.count = 0
        self.size = _size_left(self._stream)

    def peek(self, size: int = 0) -> bytes:
        """The bytes ahead, not read."""
        return self._stream.peek(size)

    def read1(self, size: int = -1) -> bytes:
        """At most ``size`` bytes, with at most one read of the stream underneath."""
        data = self._stream.read1(size)
        self.count += len(data)
        return data

    def read(self, size: int = -1) -> bytes:
        """``size`` bytes, or up to the end."""
        data = self._stream.read(size)
        self.count += len(data)
        return data


def _size_left(stream) -> int | None:
    """The bytes from a stream's position to its end when it is a regular file, else None."""
    try:
        descriptor = stream.fileno()
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            return None
        return status.st_size - os.lseek(descriptor, 0, os.SEEK_CUR)
    except (AttributeError, ValueError, OSError):
        return None


class MemorySource:
    """Rows held in memory, served as one chunk, as many times as a chain needs."""

    size = None
    #: a pass reads the rows already parsed: a fit keeps no copy of them, only a stage's own form of them (``words``')
    rereads_chunks = True
    header_comments: tuple[str, ...] = ()
    reading = ARFF_READING

    def __init__(self, schema: Schema, chunk: Chunk):
        self.schema = schema
        self.chunk = chunk
        self.rows = chunk.n_rows

    def position(self) -> int | None:
        """Unknown: the rows are in memory."""
        return None

    def chunks(self) -> Iterator[Chunk]:
        """The rows, as one chunk."""
        yield self.chunk

    def close(self) -> None:
        """Nothing to release."""


#: Bytes copied at a time when a stream of a scanned format is spooled.
_COPY_BYTES = 1 << 20


class ScannedSource(_Spooling):
    """An input whose header comes from a scan of the rows (svmlight, CSV), made by :meth:`of_file` or
    :meth:`of_stream`; ``known_schema`` (a model's training header) gives the header instead, features
    and labels the training data did not have then being errors naming their line."""

    def __init__(self, reopen, name: str, format_name: str, chunk_rows: int, options: FormatOptions, known_schema):
        self._reopen = reopen
        self.name = name
        self.chunk_rows = chunk_rows
        self.format_name = format_name
        self.format = scanned_format(format_name)
        self._current: IO[bytes] | None = None
        #: the bytes a pass reads (compressed ones for a gzip file)
        self.size: int | None = None
        #: the rows, once a pass has read them all
        self.rows: int | None = None
        self._options, self._known_schema = options, known_schema
        self.layout: Layout | None = None
        self.schema: Schema | None = None
        self.header_comments: tuple[str, ...] = ()

    @classmethod
    def of_file(
        cls, path: str, format_name: str, chunk_rows: int, options: FormatOptions, known_schema=None, keep=False
    ):
        """A regular file (plain or gzip-compressed), read once per pass; or a folder, which its format
        reads by ``name`` (its passes are then handed an empty stream)."""

        def reopen() -> IO[bytes]:
            if os.path.isdir(path):
                return io.BytesIO()
            stream = open(path, "rb")
            if stream.peek(2)[:2] != b"\x1f\x8b":
                return stream
            stream.close()
            return cast(IO[bytes], gzip.GzipFile(path, "rb"))

        source = cls(reopen, path, format_name, chunk_rows, options, known_schema)
        source.size = None if os.path.isdir(path) else os.path.getsize(path)
        active().expect(source.scan_passes())
        source.scan(keep)
        return source

    @classmethod
    def of_stream(
        cls, stream, name: str, format_name: str, chunk_rows: int, options: FormatOptions, known_schema=None, keep=False
    ):
        """A stream read once (stdin, a FIFO), gunzipped, copied into an unlinked temporary file."""
        source = cls(None, name, format_name, chunk_rows, options, known_schema)
        active().expect(1 + source.scan_passes())
        source._copy(stream)
        try:
            source.scan(keep)
        except BaseException:
            source.close()
            raise
        return source

    def _copy(self, stream) -> None:
        """Spool ``stream`` (a pass of its own, reported to progress)."""
        spool = self._spool = self._open_spool()
        input_stream, _ = open_stream(_CountedStream(stream), self.name)
        self._current = spool
        with self._filling(spool, self.name), active().step(f"spooling {self.name}", self, unit=""):
            for data in iter(functools.partial(_read_checked, input_stream, self.name), b""):
                spool.write(data)
            spool.flush()
        self.size = spool.tell()

        def reopen() -> IO[bytes]:
            copy = os.fdopen(os.dup(spool.fileno()), "rb")
            copy.seek(0)
            return copy

        self._reopen = reopen

    def _opened(self) -> IO[bytes]:
        """The input from its beginning; :meth:`position` follows it."""
        assert self._reopen is not None  # set when made, or once spooled
        stream: IO[bytes] = self._reopen()
        self._current = stream
        return stream

    @property
    def reading(self) -> tuple[str, dict]:
        """The format and the reading options the input was read with (those given, and those the scan
        settled), which a saved model records so that ``apply`` reads new data the same way."""
        assert self.layout is not None  # scanned when made
        return self.format_name, {**self._options.given, **dict(self.layout.settled)}

    def scan_passes(self) -> int:
        """The passes :meth:`scan` takes: one, or none when it reads the header row alone."""
        return 1 if self.format.scan_reads_rows(self._known_schema) else 0

    def scan(self, keep: bool = False) -> None:
        """Read the header from the rows (a pass), or from the header row alone given a model's header;
        ``keep``: the passes to come are several, so keep what the scan read for them when the format can
        (its ``kept``, :class:`filterkit.formats.records.KeptGroups`), else the first pass's chunks."""
        if keep and hasattr(self.format, "kept"):
            from filterkit.formats.records import KeptGroups  # here: only the record formats' scans need it

            self.format.kept = KeptGroups()
        if self.scan_passes():
            with active().step(f"scanning {self.name} for its header", self) as meter:
                self.layout = self.format.scan(self._opened, self.name, self._options, self._known_schema)
                meter.advance(self.layout.rows or 0)
            self.rows = self.layout.rows
        else:
            self.layout = self.format.scan(self._opened, self.name, self._options, self._known_schema)
        self.schema = self.layout.schema
        self.header_comments = self.layout.header_comments
        if keep and getattr(self.format, "kept", None) is None:
            self.keep_chunks()

    def keep_chunks(self) -> None:
        """Keep the chunks of the first whole pass in an unlinked temporary file of numpy arrays, for the
        passes after it to read instead of the input (a chain that learns reads its input twice at least):
        for the formats that keep nothing of their scan (svmlight, Parquet, a folder per class, whose every
        pass would parse the file or open each document again)."""
        import tempfile  # here, as in _open_spool

        self._kept = tempfile.TemporaryFile(prefix="filterkit-spool-")
        self._kept_whole = False

    _kept: IO[bytes] | None = None
    _kept_whole = False

    @property
    def rereads_chunks(self) -> bool:
        """Whether a pass after the first reads chunks already parsed (:meth:`keep_chunks`), not the input."""
        return self._kept is not None

    def chunks(self) -> Iterator[Chunk]:
        """The rows, chunk by chunk: read afresh, or from the chunks kept by a whole pass before."""
        assert self.layout is not None  # scanned when made
        kept = self._kept
        if kept is not None and self._kept_whole:
            kept.seek(0)
            self._current = kept
            yield from _spooled_chunks(kept)
            return
        if kept is not None:
            kept.seek(0)
            kept.truncate()
        rows = 0
        chunks = read_ahead(self._read)
        try:
            for chunk in chunks:
                rows += chunk.n_rows
                if kept is not None:
                    with self._filling(kept, self.name):
                        _save_chunk(kept, chunk)
                yield chunk
        finally:
            cast(Generator, chunks).close()
        self.format.all_read(rows, self.layout)
        self.rows = rows
        if kept is not None:
            with self._filling(kept, self.name):
                kept.flush()
            self._kept_whole, self.size = True, kept.tell()

    def _read(self) -> Iterator[Chunk]:
        """The chunks of a pass over the input, in the reading thread of :func:`read_ahead` (its compiled
        parts release the GIL, so the reading of the next chunk overlaps the chain's work on this one)."""
        assert self.layout is not None  # scanned when made
        with self._opened() as stream:
            yield from self.format.chunks(stream, self.name, self.layout, self.chunk_rows)

    def position(self) -> int | None:
        """The bytes of the input read so far in the pass under way (within a MiB and a chunk)."""
        stream = self._current
        raw = getattr(stream, "fileobj", stream)
        try:
            return None if raw is None else raw.tell()
        except (ValueError, OSError):
            return self.size


def _read_checked(stream, name: str) -> bytes:
    """The next block of a stream being spooled; damaged gzip data is an error naming the input."""
    try:
        return stream.read(_COPY_BYTES)
    except (EOFError, zlib.error, gzip.BadGzipFile) as error:
        raise ArffError(f"damaged gzip data ({error})", name) from None
