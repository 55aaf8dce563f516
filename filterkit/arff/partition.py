"""An ARFF file's data section as byte ranges cut at line ends, each read on its own.

What lets several readers share one file (the Dask engine's partitions): where
the rows begin (:func:`locate_rows`, which finds the end of the header as the
reader's header parser does), the data section cut after line feeds so that no
row is ever cut (:func:`cut_at_line_ends`), and a reader of one range whose
errors name the file's own line (:func:`range_reader`, counting line ends as the
reader counts lines: LF, CRLF and CR each end one).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
from typing import Iterator

from filterkit.arff.header import HeaderParser
from filterkit.arff.reader import ArffReader, KnownHeader
from filterkit.errors import FilterkitError
from filterkit.schema import Schema

_BLOCK_BYTES = 1 << 20
_LINE_END = re.compile(rb"\r\n|\r|\n")


def locate_rows(path: str, label: str) -> tuple[Schema, int | None, int]:
    """A file's schema, the offset where its rows begin (None for a gzip-compressed file) and its size.

    The rows begin right after the ``@data`` keyword, so a row written on that
    line is read, and the first line read is the ``@data`` line.  ``label``
    names the file in errors.
    """
    with open(path, "rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        handle.seek(0)
        compressed = handle.read(2) == b"\x1f\x8b"
        handle.seek(0)
        found = None if compressed else _scan_header(handle)
    if found is None:  # the reader reads gzip, and reports a bad header with its line
        with ArffReader(path, label, 1) as reader:
            return reader.schema, None, size
    return found[0], found[1], size


def cut_at_line_ends(path: str, begin: int, end: int, count: int) -> list[tuple[int, int]]:
    """Bytes ``begin:end`` of a file as at most ``count`` non-empty ``(start, end)`` ranges,
    each cut right after a line feed, of about equal size, in order (one empty range if
    there are no bytes)."""
    cuts = [begin]
    with open(path, "rb") as handle:
        for number in range(1, count):
            nominal = begin + (end - begin) * number // count
            cuts.append(min(_next_line_start(handle, max(nominal, cuts[-1]), end), end))
    cuts.append(end)
    return [(start, stop) for start, stop in zip(cuts, cuts[1:]) if stop > start] or [(begin, end)]


@contextlib.contextmanager
def range_reader(path: str, label: str, start: int, end: int, schema: Schema, chunk_rows: int) -> Iterator[ArffReader]:
    """An :class:`ArffReader` of the rows in bytes ``start:end`` of a file whose header gave
    ``schema``; its errors name the file (as ``label``) and the file's own line."""
    try:
        with _RangeStream(path, start, end) as stream:
            yield ArffReader(io.BufferedReader(stream), label, chunk_rows, KnownHeader.rows_only(schema))
    except FilterkitError as error:
        if error.path != label or error.line is None:
            raise
        line = error.line + count_line_ends(path, 0, start)
        raise type(error)(error.message, error.path, line) from None


def count_line_ends(path: str, begin: int, end: int) -> int:
    """The line ends (LF, CRLF, CR) in bytes ``begin:end`` of a file, counted as the reader counts lines."""
    count, after_cr = 0, False
    with open(path, "rb") as handle:
        handle.seek(begin)
        left = end - begin
        while left > 0:
            block = handle.read(min(_BLOCK_BYTES, left))
            if not block:
                break
            left -= len(block)
            count += block.count(b"\n") + block.count(b"\r") - block.count(b"\r\n")
            if after_cr and block.startswith(b"\n"):
                count -= 1
            after_cr = block.endswith(b"\r")
    return count


class _RangeStream(io.RawIOBase):
    """Bytes ``start:end`` of a file, as a stream."""

    def __init__(self, path: str, start: int, end: int):
        self._file = open(path, "rb")
        self._file.seek(start)
        self._left = end - start

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        size = min(len(buffer), self._left)
        if size <= 0:
            return 0
        read = self._file.readinto(memoryview(buffer).cast("B")[:size])
        self._left -= read
        return read

    def close(self) -> None:
        self._file.close()
        super().close()


def _scan_header(handle) -> tuple[Schema, int] | None:
    """The schema and the offset after the ``@data`` keyword, as the reader's header parser
    finds them line by line; None if the header cannot be read."""
    parser = HeaderParser()
    offset = 0
    try:
        for line, length in _raw_lines(handle, parser.limits.line_bytes):
            rest = parser.feed(line.decode("utf-8"))
            if rest is not None:
                return parser.schema(), offset + len(line) - len(rest.encode("utf-8"))
            offset += length
    except (FilterkitError, UnicodeDecodeError):
        pass
    return None


def _raw_lines(handle, longest: int) -> Iterator[tuple[bytes, int]]:
    """Each line without its end, and its length in bytes with it; LF, CRLF and CR end lines, as for the
    reader.  Stops at a line longer than ``longest`` bytes (the reader then reports it, at its line)."""
    pending = b""
    while True:
        if len(pending) > longest:
            return
        block = handle.read(_BLOCK_BYTES)
        if not block:
            if pending:
                yield pending.rstrip(b"\r"), len(pending)
            return
        pending += block
        start = 0
        for match in _LINE_END.finditer(pending):
            if match.end() == len(pending) and match.group() == b"\r":
                break  # perhaps the first half of a CRLF split between blocks
            yield pending[start : match.start()], match.end() - start
            start = match.end()
        pending = pending[start:]


def _next_line_start(handle, position: int, size: int) -> int:
    """The first offset at or after ``position`` that follows a line feed (``size`` if none)."""
    handle.seek(position - 1)
    offset = position - 1
    while True:
        block = handle.read(_BLOCK_BYTES)
        if not block:
            return size
        found = block.find(b"\n")
        if found != -1:
            return offset + found + 1
        offset += len(block)
