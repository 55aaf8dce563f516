"""Where a chain's rows come from: the sources :class:`filterkit.runner.Chain` fits on.

A source has a ``schema``, ``chunks()`` (the rows, chunk by chunk, afresh on
every call, one call per pass) and ``close()``.  A file input
(:class:`FileSource`) is re-read for each pass; a stream (stdin, a FIFO, a
device: :class:`StreamSource`) is first spooled once into a temporary binary
file of numpy arrays (not re-parsed as text), unlinked as soon as it is open so
that nothing is left behind however the process ends; rows already in memory
(:class:`MemorySource`: evaluation's folds, the scikit-learn adapters) are
served as they are.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from typing import IO, Iterator, cast

import numpy as np
import scipy.sparse as sp

from filterkit.arff.reader import DEFAULT_CHUNK_ROWS, ArffReader
from filterkit.background import read_ahead
from filterkit.errors import FilterkitError
from filterkit.schema import Chunk, Schema


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


class StreamSource:
    """An ARFF stream read once; :meth:`spool` makes it re-readable."""

    def __init__(self, stream, name: str = "<stdin>", chunk_rows: int = DEFAULT_CHUNK_ROWS):
        self.reader = ArffReader(stream, name=name, chunk_rows=chunk_rows)
        self.schema = self.reader.schema
        self._spool: IO[bytes] | None = None
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
        matrix = cast(sp.csr_matrix, chunk.values)
        for array in (matrix.data, matrix.indices, matrix.indptr):
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


class MemorySource:
    """Rows held in memory, served as one chunk, as many times as a chain needs."""

    def __init__(self, schema: Schema, chunk: Chunk):
        self.schema = schema
        self.chunk = chunk

    def chunks(self) -> Iterator[Chunk]:
        """The rows, as one chunk."""
        yield self.chunk

    def close(self) -> None:
        """Nothing to release."""
