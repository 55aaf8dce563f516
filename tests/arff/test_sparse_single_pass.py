"""The compiled sparse reader's single pass (filterkit/arff/_speedups.c parse_sparse_rows: each
value scanned and parsed at once, zeros left out, marks found on the way) reads like the
tokenizer: the same CSR arrays, texts and errors, on values chosen to hit each branch."""

from __future__ import annotations

import io

import numpy as np
import pytest

from filterkit import kernels
from filterkit.arff import ArffReader, _speedups
from filterkit.errors import ArffError

speedups = _speedups

HEADER = b"@relation r\n@attribute a numeric\n@attribute b numeric\n@attribute c {x,y}\n@attribute d string\n@data\n"


def read(data: bytes, chunk_rows: int):
    try:
        with ArffReader(io.BytesIO(HEADER + data), name="f", chunk_rows=chunk_rows) as source:
            return [
                (c.values.data.tobytes(), c.values.indices.tolist(), c.values.indptr.tolist(), c.text)
                for c in source.chunks()
            ]
    except ArffError as error:
        return str(error)


ROWS = [
    b"{0 0,1 2}",
    b"{0 -0,1 0.0}",
    b"{0 +0,1 0e5}",
    b"{0 1e-400,1 -0.000}",
    b"{2 x,3 ''}",
    b"{2 y,3 hello}",
    b"{0 ?,2 ?}",
    b"{0 1.5,1 -2.25e3}",
    b"{0 12345678901234567890,1 0.1000000000000000055511151231257827}",
    b"{0 0x10,1 1}",
    b"{0 1,1 '2'}",
    b"{0 1%,1 2}",
    b"{1 3, 0 1}",
    b"{0 -,1 2}",
    b"{0 1.2.3}",
    b"{2 z}",
    b"{0 1}",
    b"{}",
    # the plain-digits shortcut's edges: 15 digits, 16, leading zeros, other endings
    b"{0 123456789012345,1 1234567890123456}",
    b"{0 000000000000000,1 0000000000000007}",
    b"{0 007,1 999999999999999}",
    b"{0 12 ,1 34\t}",
    b"{0 12e3,1 123456789012345.5}",
    b"{0 9007199254740993,1 5}",
]


@pytest.mark.parametrize("first", range(len(ROWS)))
@pytest.mark.parametrize("chunk_rows", [1, 3, 100])
def test_single_pass_reads_like_the_tokenizer(first, chunk_rows):
    data = b"\n".join(ROWS[first:] + ROWS[:first]) + b"\n"
    compiled = read(data, chunk_rows)
    with kernels.compiled(False, kernels.READING):
        assert compiled == read(data, chunk_rows)


def test_zeros_are_left_out_in_the_compiled_pass():
    """The module itself drops zero numbers (so the reader skips eliminate_zeros) and keeps
    a looked-up entry (a first label's code 0 is only known later) with its place."""
    found = speedups.parse_sparse_rows(b"{0 0,1 2,2 x}\n{0 -0.0,1 3}", 2, 3, b"\x00\x00\x01")
    indptr, indices, values, entries, rows, starts, ends = (
        np.frombuffer(raw, dtype) for raw, dtype in zip(found, (np.int64, np.int64, np.float64) + (np.int64,) * 4)
    )
    assert indptr.tolist() == [0, 2, 3]
    assert indices.tolist() == [1, 2, 1]
    assert values.tolist() == [2.0, 0.0, 3.0]
    assert (entries.tolist(), rows.tolist(), starts.tolist(), ends.tolist()) == ([1], [0], [11], [12])
    assert values.flags.writeable


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        (b"{0 '1'x}", False),
        (b"{0 1%}", False),
        (b"{0 0x1}", False),
        (b"{0 1.2.3}", None),
        (b"{1 1,0 1}", None),
    ],
)
def test_marks_and_oddities_are_declined(text, answer):
    assert speedups.parse_sparse_rows(text, 1, 3, b"\x00\x00\x00") is answer


def test_a_large_group_has_the_same_values_as_the_tokenizer():
    generator = np.random.default_rng(5)
    rows = []
    for _ in range(2000):
        columns = np.sort(generator.choice(2, size=generator.integers(0, 3), replace=False))
        values = generator.choice([0.0, -0.0, 1.0, 0.5, 1e-300, 123456.789, -3.25], size=len(columns))
        rows.append("{" + ",".join(f"{c} {v!r}" for c, v in zip(columns, values)) + "}")
    data = ("\n".join(rows) + "\n").encode()
    compiled = read(data, 700)
    with kernels.compiled(False, kernels.READING):
        assert compiled == read(data, 700)
