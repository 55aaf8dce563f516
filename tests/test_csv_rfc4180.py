"""CSV as RFC 4180 writes it: filterkit's CSV read back by Python's csv module, pandas and
filterkit itself; one grammar whatever ``--chunk-rows``; an output name that says another format."""

from __future__ import annotations

import io

import numpy as np
import pytest

from filterkit.arff import read_arff
from filterkit.testing import run_filterkit

#: Chunk sizes that put a chunk boundary at every row, at every other row and nowhere.
CHUNK_ROWS = ("1", "2", "3", "10000")


def _filterkit(*args, stdin: bytes = b"") -> bytes:
    result = run_filterkit(*args, stdin=stdin)
    assert result.status == 0, result.stderr
    return result.stdout


def _read_csv(data: bytes, *args: str, chunk_rows: str = "10000") -> bytes:
    return _filterkit("-", "--from", "csv", "--chunk-rows", chunk_rows, *args, stdin=data)


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(b'a,b\nx\0,1\n"y",2\nx,3\n', id="nul-in-a-plain-chunk"),
        pytest.param(b"a,b\nx\0,1\ny,2\nx,3\n\0,4\n", id="nul-in-every-chunk"),
    ],
)
def test_the_same_bytes_whatever_the_chunk_rows(data):
    outputs = {chunk_rows: _read_csv(data, chunk_rows=chunk_rows) for chunk_rows in CHUNK_ROWS}
    assert len(set(outputs.values())) == 1, outputs


@pytest.mark.parametrize(
    "data, labels",
    [
        (b'a,b\nx\0,1\n"y",2\nx,3\n', ("x\0", "y", "x")),
        (b"a,b\nx\0,1\ny,2\nx,3\n\0,4\n", ("x\0", "y", "x", "\0")),
    ],
)
def test_a_nul_is_part_of_a_value_on_every_path(data, labels):
    """As the ARFF reader reads it: ``x\\0`` is a label of its own, not ``x``, and ``\\0`` is no missing value."""
    for chunk_rows in CHUNK_ROWS:
        schema, chunk = read_arff(io.BytesIO(_read_csv(data, chunk_rows=chunk_rows)))
        assert schema.attributes[0].labels == labels
        np.testing.assert_array_equal(chunk.dense_values()[:, 0], range(len(labels)))
