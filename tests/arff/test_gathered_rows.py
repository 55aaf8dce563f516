"""The reader gathers its data rows a block at a time (gather_rows in _speedups.c): the same
rows, line numbers, chunk boundaries and errors as reading line by line (oracles.gather_rows),
on blocks cut anywhere."""

from __future__ import annotations

import io
import random

import numpy as np
import pytest

import oracles
from filterkit.arff import ArffReader, _speedups, reader
from filterkit.arff.limits import Limits
from filterkit.errors import ArffError

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
