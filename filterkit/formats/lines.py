"""Numbered, bounded lines of a text input, and groups of them as chunks, shared by the
svmlight and CSV readers (the ARFF reader's line reading, with the same bounds)."""

from __future__ import annotations

from typing import IO, BinaryIO, Iterator, cast

from filterkit.arff.limits import Limits
from filterkit.arff.reader import _blocks, _Lines
from filterkit.errors import ArffError

#: The UTF-8 byte-order mark that Excel's "CSV UTF-8" and some Windows tools put before the first line.
UTF8_BOM = b"\xef\xbb\xbf"


def numbered_lines(stream: IO[bytes], name: str, limits: Limits) -> Iterator[tuple[int, bytes]]:
    """Each line of ``stream`` with its 1-based number, its end removed (LF, CRLF or CR), and a
    byte-order mark before the first line left out; a line longer than ``limits.line_bytes`` and
    damaged gzip data are errors naming the line."""
    lines = _Lines(_blocks(cast(BinaryIO, stream), limits.line_bytes), name, limits.line_bytes)
    for number, line in lines:
        yield number, line[len(UTF8_BOM) :] if number == 1 and line.startswith(UTF8_BOM) else line


def line_groups(
    lines: Iterator[tuple[int, bytes]], chunk_rows: int, limits: Limits
) -> Iterator[tuple[list[bytes], list[int]]]:
    """The lines as ``(lines, numbers)`` groups of at most ``chunk_rows`` lines or ``chunk_bytes`` bytes."""
    group: list[bytes] = []
    numbers: list[int] = []
    held = 0
    for number, line in lines:
        group.append(line)
        numbers.append(number)
        held += len(line) + 1
        if len(group) == chunk_rows or held >= limits.chunk_bytes:
            yield group, numbers
            group, numbers, held = [], [], 0
    if group:
        yield group, numbers


def decoded(raw: bytes, name: str, number: int) -> str:
    """A line as text; an error naming the line when it is not UTF-8."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ArffError(f"not UTF-8 text ({error.reason} at byte {error.start + 1})", name, number) from None
