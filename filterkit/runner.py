"""Running a chain of stages over chunk sources.

:class:`Chain` fits stage 1 on the input, stage 2 on stage 1's output, and so
on: one pass over the input for every fitted stage, each pass streaming
chunks through the stages already fitted, except where a fitted stage derives
the next one's statistics from its own (``shape bns``: one pass fits both).
Only statistics are held between chunks, so memory depends on the features,
not the rows.  A file input is
re-read for each pass; a stream (stdin, a FIFO, a device) is first spooled once
into a temporary binary file of numpy arrays (not re-parsed as text), unlinked as
soon as it is open so that nothing is left behind however the process ends.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import sys
import tempfile
import threading
from typing import Iterable, Iterator

import numpy as np
import scipy.sparse as sp

from filterkit.arff.reader import DEFAULT_CHUNK_ROWS, ArffReader
from filterkit.contract import OutputContract, stage_origin
from filterkit.errors import FilterkitError
from filterkit.schema import Chunk, Schema
from filterkit.stage import Context, Stage


class FileSource:
    """An ARFF file that can be read any number of times."""

    def __init__(self, path: str, chunk_rows: int = DEFAULT_CHUNK_ROWS):
        self.path = path
        self.chunk_rows = chunk_rows
        with ArffReader(path, chunk_rows=chunk_rows) as reader:
            self.schema = reader.schema
            self._header = reader.header

    def chunks(self) -> Iterator[Chunk]:
        """The rows of the file, chunk by chunk, read afresh (the header is parsed once);
        the next chunk is read while the caller works on this one (:func:`read_ahead`)."""
        return read_ahead(self._read)

    def _read(self) -> Iterator[Chunk]:
        with ArffReader(self.path, chunk_rows=self.chunk_rows, known_header=self._header) as reader:
            yield from reader.chunks()

    def close(self) -> None:
        """Nothing to release."""


def read_ahead(make_chunks, depth: int = 1) -> Iterator[Chunk]:
    """The chunks of the iterator ``make_chunks()``, produced by a background thread
    that keeps up to ``depth`` chunks ready, so reading (whose compiled parts and numpy
    work release the GIL) overlaps with the caller's work on the other core.

    Chunks arrive in order; an error of the reader is raised here, in the caller's
    thread, when its chunk is due.  When the caller stops early (an error, Ctrl-C,
    an abandoned generator), the thread stops after the chunk in hand and closes the
    reader; it holds at most ``depth`` + 1 chunks.
    """
    ready: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def hand_over(item) -> bool:
        while not stop.is_set():
            try:
                ready.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        chunks = None
        try:
            chunks = make_chunks()
            for chunk in chunks:
                if not hand_over((chunk, None)):
                    return
            hand_over((_END_OF_CHUNKS, None))
        except BaseException as error:  # re-raised in the caller's thread
            hand_over((None, error))
        finally:
            getattr(chunks, "close", lambda: None)()

    reader = threading.Thread(target=produce, name="filterkit-read-ahead", daemon=True)
    reader.start()
    finished = False
    try:
        while True:
            chunk, error = ready.get()
            if error is not None:
                finished = True
                raise error
            if chunk is _END_OF_CHUNKS:
                finished = True
                return
            yield chunk
    finally:
        stop.set()
        # stopped early (Ctrl-C, an abandoned generator): the thread ends after the chunk in
        # hand, but a read stalled on a pipe must not hold the caller up for long
        reader.join(None if finished else _STOP_WAIT)


_END_OF_CHUNKS = object()
_STOP_WAIT = 1.0  # seconds a stopped background thread is waited for


def write_behind(chunks: Iterable[Chunk], write, depth: int = 1) -> None:
    """``write(chunk)`` for every chunk, in order, in a background thread, while this
    thread produces the next chunk (the compiled formatter releases the GIL).

    An error of ``write`` (a full disk, a closed pipe) is raised here once noticed,
    and no later chunk is written.  When producing fails, the chunks produced before
    are still written, as they would be without the thread, and the thread is waited
    for before the error goes on.  Ctrl-C (and SIGTERM) stops the writing at once,
    without waiting.  At most ``depth`` + 1 chunks are held.
    """
    pending: queue.Queue = queue.Queue(maxsize=depth)
    failures: list[BaseException] = []

    def consume() -> None:
        while True:
            chunk = pending.get()
            if chunk is _END_OF_CHUNKS:
                return
            if failures:
                continue
            try:
                write(chunk)
            except BaseException as error:  # re-raised in the producing thread
                failures.append(error)

    writer = threading.Thread(target=consume, name="filterkit-write-behind", daemon=True)
    writer.start()
    try:
        for chunk in chunks:
            if failures:
                break
            pending.put(chunk)
    except KeyboardInterrupt:
        # not waited for: a write stalled on a full pipe must not hold up Ctrl-C, and the
        # caller discards the output; the thread writes nothing more and ends
        failures.append(KeyboardInterrupt())
        with contextlib.suppress(queue.Empty):
            while True:
                pending.get_nowait()
        pending.put_nowait(_END_OF_CHUNKS)
        raise
    except BaseException:
        pending.put(_END_OF_CHUNKS)
        writer.join()
        raise
    pending.put(_END_OF_CHUNKS)
    writer.join()
    if failures:
        raise failures[0]


class StreamSource:
    """An ARFF stream read once; :meth:`spool` makes it re-readable."""

    def __init__(self, stream, name: str = "<stdin>", chunk_rows: int = DEFAULT_CHUNK_ROWS):
        self.reader = ArffReader(stream, name=name, chunk_rows=chunk_rows)
        self.schema = self.reader.schema
        self._spool = None
        self._spool_path: str | None = None

    def spool(self) -> None:
        """Copy every chunk into a temporary binary file, so passes can repeat.

        The file is unlinked as soon as it is open (only the open handle keeps it),
        so nothing is left behind however the process ends, even by SIGKILL; where
        an open file cannot be unlinked (Windows), it is removed by :meth:`close`.
        """
        folder = tempfile.gettempdir()
        handle, path = tempfile.mkstemp(prefix="filterkit-spool-", suffix=".npy")
        self._spool = os.fdopen(handle, "w+b")
        try:
            os.unlink(path)
        except OSError:
            self._spool_path = path
        try:
            for chunk in self.reader.chunks():
                _save_chunk(self._spool, chunk)
            self._spool.flush()
        except OSError as error:
            self.close()
            raise FilterkitError(
                f"cannot spool {self.reader.name} into the temporary folder {folder} "
                f"({error.strerror or f'{error}: is the disk full?'}): free space there, "
                "or set TMPDIR to a folder with room for the data"
            ) from None

    def chunks(self) -> Iterator[Chunk]:
        """The rows: from the spool if there is one, else straight from the stream (once).

        Passes over the spool run one after another (each starts from its beginning).
        """
        if self._spool is None:
            yield from self.reader.chunks()
            return
        self._spool.seek(0)
        while True:
            try:
                chunk = _load_chunk(self._spool)
            except EOFError:
                return
            yield chunk

    def close(self) -> None:
        """Close (and so delete) the spool file."""
        if self._spool is not None:
            self._spool.close()
        if self._spool_path is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._spool_path)
        self._spool, self._spool_path = None, None


def _save_chunk(spool, chunk: Chunk) -> None:
    meta = {
        "sparse": chunk.is_sparse,
        "shape": list(chunk.values.shape),
        "text": {str(k): v for k, v in chunk.text.items()},
        "weights": chunk.weights is not None,
    }
    np.save(spool, np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8))
    if chunk.is_sparse:
        for array in (chunk.values.data, chunk.values.indices, chunk.values.indptr):
            np.save(spool, array)
    else:
        np.save(spool, chunk.values)
    if chunk.weights is not None:
        np.save(spool, chunk.weights)


def _load_chunk(spool) -> Chunk:
    header = np.load(spool, allow_pickle=False)
    meta = json.loads(header.tobytes().decode("utf-8"))
    if meta["sparse"]:
        data, indices, indptr = (np.load(spool, allow_pickle=False) for _ in range(3))
        values = sp.csr_matrix((data, indices, indptr), shape=tuple(meta["shape"]))
    else:
        values = np.load(spool, allow_pickle=False)
    weights = np.load(spool, allow_pickle=False) if meta["weights"] else None
    return Chunk(values, {int(k): v for k, v in meta["text"].items()}, weights)


def resolve_class(schema: Schema, spec: str | None) -> int | None:
    """The class attribute's position for ``-c``: last, first, a 1-based index or a name."""
    if not schema.attributes or spec is None:
        return None
    count = len(schema.attributes)
    if spec == "last":
        return count - 1
    if spec == "first":
        return 0
    if spec.isascii() and spec.isdigit():
        position = int(spec)
        if not 1 <= position <= count:
            raise FilterkitError(f"class index {position} is outside 1..{count}")
        return position - 1
    try:
        return schema.index_of(spec)
    except KeyError:
        raise FilterkitError(f"no attribute called '{spec}' to use as the class") from None


class Chain:
    """Stages applied in order; fitted from a source, then applied to chunks."""

    def __init__(self, stages: list[Stage], class_spec: str | None = "last", positive: str | None = None):
        self.stages = list(stages)
        self.class_spec = class_spec
        self.positive = positive
        self.input_schema: Schema | None = None
        self.output_schema: Schema | None = None
        self.class_name: str | None = None

    def prepare_stage(self, position: int, schema: Schema) -> None:
        """Show stage ``position`` its input schema and context."""
        class_index = None
        if self.class_name is not None:
            try:
                class_index = schema.index_of(self.class_name)
            except KeyError:
                class_index = None
        context = Context(class_index, self.positive, tuple(self.stages[:position]))
        stage = self.stages[position]
        guarded(stage, "prepare", stage.prepare, schema, context)

    def fit(self, source, progress=None) -> "Chain":
        """Fit every stage in turn on the output of the stages before it."""

        def statistics_of(position: int, stage: Stage):
            statistics = guarded(stage, "fit", stage.new_statistics)
            chunks = self._through(source.chunks(), self.stages[:position])
            for chunk in _counted(chunks, progress, f"fitting {stage.name}"):
                statistics = guarded(stage, "fit", stage.accumulate, statistics, chunk)
            return statistics

        return self.fit_with(source.schema, statistics_of)

    def fit_with(self, schema: Schema, statistics_of) -> "Chain":
        """Fit every stage in turn; ``statistics_of(position, stage)`` returns a fitted
        stage's statistics of all training rows (one pass, local or on a cluster)."""
        self.input_schema = schema
        class_index = resolve_class(schema, self.class_spec)
        self.class_name = None if class_index is None else schema.attributes[class_index].name
        for position, stage in enumerate(self.stages):
            self.prepare_stage(position, schema)
            if stage.fitted:
                statistics = self._derived_statistics(position, stage)
                if statistics is None:
                    statistics = statistics_of(position, stage)
                guarded(stage, "fit", stage.finalize, statistics)
            schema = guarded(stage, "fit", OutputContract.of, stage, "fit").schema
        self.output_schema = schema
        return self

    def _derived_statistics(self, position: int, stage: Stage):
        """``stage``'s statistics from the fitted stage just before it, when that stage
        can derive them (:meth:`Stage.statistics_for`): one pass over the data fewer."""
        if position == 0 or not self.stages[position - 1].fitted:
            return None
        previous = self.stages[position - 1]
        return guarded(previous, "fit", previous.statistics_for, stage)

    def transform(self, chunks: Iterable[Chunk]) -> Iterator[Chunk]:
        """Apply every (fitted) stage to each chunk."""
        return self._through(chunks, self.stages)

    def check_input(self, schema: Schema, name: str) -> None:
        """Refuse data whose header differs from the training header."""
        difference = self.input_schema.first_difference(schema)
        if difference is not None:
            raise FilterkitError(f"header differs from the training data: {difference}", name)

    @staticmethod
    def _through(chunks: Iterable[Chunk], stages: list[Stage]) -> Iterator[Chunk]:
        """Each chunk through ``stages`` (fitted), every stage's result checked against
        the stage contract (:mod:`filterkit.contract`) before the next stage sees it."""
        contracts = [guarded(stage, "transform", OutputContract.of, stage) for stage in stages]
        for chunk in chunks:
            for stage, contract in zip(stages, contracts):
                chunk = contract.check(chunk, guarded(stage, "transform", stage.transform, chunk))
            yield chunk


def guarded(stage: Stage, step: str, function, *args):
    """Call a stage's method; a crash becomes an error naming the stage."""
    try:
        return function(*args)
    except FilterkitError:
        raise
    except Exception as error:
        raise FilterkitError(f"{stage_origin(stage)} failed during {step}: {type(error).__name__}: {error}") from error


def _counted(chunks: Iterable[Chunk], progress, label: str) -> Iterator[Chunk]:
    rows = 0
    for chunk in chunks:
        rows += chunk.n_rows
        if progress is not None:
            progress(label, rows)
        yield chunk


def terminal_progress(label: str, rows: int) -> None:
    """Progress on stderr, one updating line."""
    sys.stderr.write(f"\rfilterkit: {label}: {rows:,} rows")
    sys.stderr.flush()
