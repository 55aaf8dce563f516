"""The line reader the line-based formats share (CSV, JSON Lines; the ARFF reader's, with its bounds):
numbered, bounded lines, their groups for a chunk, and their text."""

from __future__ import annotations

import codecs
from typing import IO, BinaryIO, Iterator, cast

from filterkit.arff.reader import NumberedLines, line_blocks
from filterkit.errors import ArffError
from filterkit.limits import Limits


def bounded_lines(stream: IO[bytes], name: str, limits: Limits) -> NumberedLines:
    """The lines of ``stream`` (the ARFF reader's line reading, with its bounds): each with its 1-based number,
    its end removed (LF, CRLF or CR), or :meth:`NumberedLines.blocks` of whole lines after those read; a line longer
    than ``limits.line_bytes`` and damaged gzip data are errors naming the line.  A byte-order mark before the
    first line is the caller's to leave out."""
    return NumberedLines(line_blocks(cast(BinaryIO, stream), limits.line_bytes), name, limits.line_bytes)


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


def text_line_groups(
    stream: IO[bytes], name: str, limits: Limits, chunk_rows: int
) -> Iterator[tuple[list[bytes], list[int]]]:
    """The lines that are not blank as :func:`line_groups` groups them, a byte-order mark before the first
    left out, cut from whole :func:`bounded_lines` blocks (for a format of one record a line, whose lines
    are short and many)."""
    lines = bounded_lines(stream, name, limits)
    group: list[bytes] = []
    numbers: list[int] = []
    held = number = 0
    for block, at in lines.blocks():
        parts = block[at:].split(b"\n")
        parts.pop()  # a block ends with a line end
        if number == 0 and parts:
            parts[0] = parts[0].removeprefix(codecs.BOM_UTF8)
        if max(map(len, parts), default=0) > limits.line_bytes:
            lines.line_number = number + next(k for k, part in enumerate(parts) if len(part) > limits.line_bytes)
            raise lines.too_long()
        for part in parts:
            number += 1
            if part.strip():
                group.append(part)
                numbers.append(number)
                held += len(part) + 1
                if len(group) == chunk_rows or held >= limits.chunk_bytes:
                    yield group, numbers
                    group, numbers, held = [], [], 0
        lines.line_number = number
    if group:
        yield group, numbers


def decoded(raw: bytes, name: str, number: int) -> str:
    """A line as text; an error naming the line when it is not UTF-8."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ArffError(f"not UTF-8 text ({error.reason} at byte {error.start + 1})", name, number) from None
