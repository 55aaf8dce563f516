"""The reader gathers its data rows a block at a time (gather_rows in _speedups.c): the same
rows, line numbers, chunk boundaries and errors as reading line by line (oracles.gather_rows),
on blocks cut anywhere."""

from __future__ import annotations

import io
import random
import tracemalloc

import numpy as np
import pytest

import oracles
from filterkit.arff import ArffReader, _speedups, reader
from filterkit.errors import ArffError
from filterkit.limits import Limits

_LINES = [b"{0 1}", b"  {1 2.5}\t", b"", b"   ", b"% a comment", b"\x0b{0 3}\x0c", b"{}", b"{0 1,1 2}", b"%"]


@pytest.mark.parametrize("seed", range(10))
def test_compiled_gathering_is_the_python_gathering(seed):
    generator = random.Random(seed)
    for _ in range(200):
        lines = [generator.choice(_LINES) for _ in range(generator.randint(0, 12))]
        block = b"".join(line + b"\n" for line in lines)
        start = generator.choice([0] + [i + 1 for i, byte in enumerate(block) if byte == 10])
        rows, size, line_bytes = generator.randint(1, 5), generator.randint(1, 40), generator.choice([3, 6, 1000])
        compiled = _speedups.gather_rows(block, start, rows, size, line_bytes)
        assert compiled == oracles.gather_rows(block, start, rows, size, line_bytes), (block, start, rows, size)


def test_gathering_strips_skips_and_counts_lines():
    block = b"{0 1}\n\n% c\n  {1 2} \n{0 3}\n"
    text, lines, stop, seen, too_long = _speedups.gather_rows(block, 0, 2, 1000, 100)
    assert text == b"{0 1}\n{1 2}"
    assert np.frombuffer(lines, np.int64).tolist() == [0, 3]
    assert (stop, seen, too_long) == (block.index(b"{0 3}"), 4, False)
    text, lines, stop, seen, too_long = _speedups.gather_rows(block, 0, 10, 100, 4)
    assert (text, stop, seen, too_long) == (b"", 0, 0, True)


HEADER = b"@relation r\n@attribute a numeric\n@attribute b {x,y}\n@data"


def read(data: bytes, chunk_rows: int, limits: Limits | None = None):
    try:
        with ArffReader(io.BytesIO(data), name="f", chunk_rows=chunk_rows, limits=limits) as source:
            return [(c.values.toarray().tobytes(), c.n_rows) for c in source.chunks()]
    except ArffError as error:
        return str(error)


@pytest.mark.parametrize("chunk_rows", [1, 2, 7, 1000])
@pytest.mark.parametrize("block_bytes", [1, 5, 64, 1 << 20])
def test_chunks_and_errors_do_not_depend_on_the_blocks(chunk_rows, block_bytes, monkeypatch):
    """Rows split across blocks of any size, after text on the @data line; the bad value on
    line 9 is named by its line whatever the blocks."""
    data = HEADER + b" {0 5}\n{0 1,1 y}\n\n% c\n{1 x}\n  {0 2}\n{}\n{0 -1}\n{1 z}\n{0 4}\n"
    monkeypatch.setattr(reader, "_BLOCK_BYTES", block_bytes)
    assert read(data, chunk_rows) == "f:12: value 'z' is not a label of attribute 'b' {x,y}"
    chunks = read(data.replace(b"{1 z}", b"{1 y}"), chunk_rows)
    expected = [[5, 0], [1, 1], [0, 0], [2, 0], [0, 0], [-1, 0], [0, 1], [4, 0]]
    assert b"".join(values for values, _ in chunks) == np.array(expected, dtype=np.float64).tobytes()
    sizes = [rows for _, rows in chunks]
    assert sum(sizes) == 8 and all(rows <= chunk_rows for rows in sizes)


def test_a_long_data_line_is_refused_on_its_line():
    data = HEADER + b"\n{0 1}\n\n{0 " + b"1" * 50 + b"}\n{0 2}\n"
    assert (
        read(data, 10, Limits(line_bytes=40))
        == "f:7: a line longer than 40 bytes: refused (set FILTERKIT_MAX_LINE_BYTES to allow more)"
    )


class _ShortReads(io.RawIOBase):
    """A stream whose reads return at most a few bytes, as a pipe's may."""

    def __init__(self, data: bytes, generator: random.Random):
        self._data, self._at, self._generator = data, 0, generator

    def readable(self) -> bool:
        return True

    def read1(self, size: int = -1) -> bytes:
        taken = self._data[self._at : self._at + min(size, self._generator.choice([1, 2, 3, 7, 100]))]
        self._at += len(taken)
        return taken


@pytest.mark.parametrize("seed", range(6))
def test_blocks_are_whole_lines_with_every_line_end_made_lf_however_the_reads_fall(seed, monkeypatch):
    """Blocks end with LF, CRLF and CR become LF even when a read ends between them, and joined they are
    the stream's text, with an LF after its last line where it has no line end (and no empty line after the
    last line end, which errors at the end of the stream had been said to be on); a line longer than the bound is
    refused once gathered, whatever the block size."""
    generator = random.Random(seed)
    for _ in range(400):
        data = b"".join(
            generator.choice([b"a", b"bc", b"\n", b"\r", b"\r\n", b" "]) for _ in range(generator.randint(0, 40))
        )
        monkeypatch.setattr(reader, "_BLOCK_BYTES", generator.choice([1, 2, 3, 5, 8, 1 << 20]))
        longest = max(len(line) for line in data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n"))
        line_bytes = generator.choice([2, 4, 1000])
        try:
            blocks = list(reader.line_blocks(_ShortReads(data, generator), line_bytes))
        except reader._LineTooLong:
            assert longest > line_bytes
            continue
        assert all(block.endswith(b"\n") and b"\r" not in block for block in blocks)
        unified = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        assert b"".join(blocks) == (unified if unified.endswith(b"\n") or not data else unified + b"\n"), data


@pytest.mark.parametrize("block_bytes", range(1, 40))
def test_a_cr_then_a_crlf_is_two_line_ends_wherever_a_block_ends(block_bytes, monkeypatch):
    """CR CR LF is a line end and a CRLF: a block ending after the first CR once made it three (the one byte
    read after a CR was the second CR, and the LF began the next block), so errors named the line after."""
    monkeypatch.setattr(reader, "_BLOCK_BYTES", block_bytes)
    data = HEADER + b"\r\n{0 1}\r\r\n{1 z}\r\n"
    assert read(data, 10) == "f:7: value 'z' is not a label of attribute 'b' {x,y}"


@pytest.mark.parametrize("ending", [b"", b"\r\n", b"\r", b"\n"])
def test_a_long_line_is_held_once_while_its_block_is_used(ending):
    """A line of 8 MiB, last in the stream with or without a line end: while its block is in use, the blocks hold
    no second copy of it (the pieces it was gathered from, or its text before CR was made LF)."""
    stream = io.BytesIO(b"x" * (8 << 20) + ending)
    tracemalloc.start()
    try:
        blocks = reader.line_blocks(stream, 1 << 30)
        block = next(blocks)
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert block == b"x" * (8 << 20) + b"\n"
    assert held < 1.25 * len(block), held
