"""The writer formats a chunk a block of rows at a time: the text is the one written
whole (and by writer.format_rows_in_python), and an error in the second block comes after the first
block's rows are written."""

from __future__ import annotations

import io

import numpy as np
import pytest
import scipy.sparse as sp

from arff_helpers import REAL
from filterkit import kernels
from filterkit.arff import read_arff, writer
from filterkit.arff.writer import ArffWriter
from filterkit.errors import ArffError
from filterkit.schema import DATE, NUMERIC, Attribute, Chunk, Schema


def written(schema, chunk, monkeypatch, block_entries: int, compiled: bool = True) -> bytes:
    with monkeypatch.context() as patched:
        patched.setattr(writer, "_SPARSE_BLOCK_ENTRIES", block_entries)
        with kernels.compiled(compiled, kernels.PRINTING):
            stream = io.BytesIO()
            ArffWriter(stream, schema).write(chunk)
            return stream.getvalue()


@pytest.mark.slow
@pytest.mark.parametrize("block_entries", [1000, 5000])
def test_blocks_write_the_text_of_one_block(block_entries, monkeypatch):
    schema, chunk = read_arff(REAL / "grain_wc.arff")
    matrix = chunk.values.copy()
    matrix.data = matrix.data / 3  # numbers with 16 or 17 digits, the printer's real work
    thirds = Chunk(matrix, chunk.text)
    whole = written(schema, thirds, monkeypatch, 1 << 30)
    assert written(schema, thirds, monkeypatch, block_entries) == whole
    assert written(schema, thirds, monkeypatch, block_entries, compiled=False) == whole


def test_an_error_in_the_second_block_comes_after_the_first_is_written(monkeypatch):
    schema = Schema("r", (Attribute("x", NUMERIC), Attribute("when", DATE, date_format="yyyy-MM-dd")))
    values = sp.csr_matrix(np.array([[1.0, 0.0], [3.0, 1e20]]))  # one block a row
    outputs = []
    for compiled in (True, False):
        with monkeypatch.context() as patched:
            patched.setattr(writer, "_SPARSE_BLOCK_ENTRIES", 1)
            stream = io.BytesIO()
            arff_writer = ArffWriter(stream, schema)
            with kernels.compiled(compiled, kernels.PRINTING), pytest.raises(ArffError, match="attribute 'when'"):
                arff_writer.write(Chunk(values, {}))
            outputs.append(stream.getvalue())
    assert outputs[0] == outputs[1]
    assert outputs[0].endswith(b"@data\n{0 1}\n")


@pytest.mark.parametrize(
    "data, indices, indptr",
    [
        ([1.0, 2.5, 3.0], [0, 2, 1], [0, 2, 3]),  # as stored: the compiled pass flags the label column
        ([1.0, 0.0, 3.0], [0, 1, 2], [0, 3, 3]),  # a stored zero
        ([1.0, -0.0, 3.0], [0, 1, 2], [0, 2, 3]),  # a stored minus zero
        ([1.0, float("nan"), 3.0], [0, 1, 2], [0, 3, 3]),  # NaN is a value, not a zero
        ([1.0, 2.0, 1.0], [2, 1, 0], [0, 3, 3]),  # columns falling within a row
        ([1.0, 2.0, 3.0], [1, 1, 2], [0, 3, 3]),  # a column twice
        ([], [], [0, 0, 0]),
    ],
)
def test_a_chunk_written_as_stored_or_made_so(data, indices, indptr, monkeypatch):
    """The one compiled pass over a sparse chunk written as stored (writer._entries: plain_sparse_entries)
    writes what numpy's canonical form gives, and hands a chunk that is not so to it."""
    schema = Schema("r", (Attribute("c", "nominal", ("a", "b")), Attribute("x", NUMERIC), Attribute("y", NUMERIC)))
    matrix = sp.csr_matrix((np.array(data), np.array(indices), np.array(indptr)), shape=(2, 3))
    chunk = Chunk(matrix, {})
    assert written(schema, chunk, monkeypatch, 1 << 30) == written(schema, chunk, monkeypatch, 1 << 30, False)
