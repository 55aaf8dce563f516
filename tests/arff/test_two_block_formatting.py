"""The writer formats a chunk's blocks two at a time, the first in a helper thread: the
text is the one written a block at a time (and by the Python path), in order, and an
error in the second block comes after the first block's rows are written."""

from __future__ import annotations

import io

import numpy as np
import pytest
import scipy.sparse as sp

from arff_helpers import REAL
from filterkit.arff import read_arff, writer
from filterkit.arff.writer import ArffWriter
from filterkit.errors import ArffError
from filterkit.schema import DATE, NUMERIC, Attribute, Chunk, Schema

pytestmark = pytest.mark.skipif(writer._speedups is None, reason="the optional C module is not built")


def written(schema, chunk, monkeypatch, block_entries: int, compiled: bool = True) -> bytes:
    with monkeypatch.context() as patched:
        patched.setattr(writer, "_SPARSE_BLOCK_ENTRIES", block_entries)
        if not compiled:
            patched.setattr(writer, "_speedups", None)
        stream = io.BytesIO()
        ArffWriter(stream, schema).write(chunk)
        return stream.getvalue()


@pytest.mark.parametrize("block_entries", [1000, 5000])
def test_blocks_in_pairs_write_the_text_of_one_block(block_entries, monkeypatch):
    schema, chunk = read_arff(REAL / "grain_wc.arff")
    matrix = chunk.values.copy()
    matrix.data = matrix.data / 3  # numbers with 16 or 17 digits, the printer's real work
    thirds = Chunk(matrix, chunk.text)
    whole = written(schema, thirds, monkeypatch, 1 << 30)
    assert written(schema, thirds, monkeypatch, block_entries) == whole
    assert written(schema, thirds, monkeypatch, block_entries, compiled=False) == whole


def test_an_error_in_the_second_block_comes_after_the_first_is_written(monkeypatch):
    schema = Schema("r", (Attribute("x", NUMERIC), Attribute("when", DATE, date_format="yyyy-MM-dd")))
    values = sp.csr_matrix(np.array([[1.0, 0.0], [3.0, 1e20]]))  # one block a row: a pair
    outputs = []
    for compiled in (True, False):
        with monkeypatch.context() as patched:
            patched.setattr(writer, "_SPARSE_BLOCK_ENTRIES", 1)
            if not compiled:
                patched.setattr(writer, "_speedups", None)
            stream = io.BytesIO()
            arff_writer = ArffWriter(stream, schema)
            with pytest.raises(ArffError, match="attribute 'when'"):
                arff_writer.write(Chunk(values, {}))
            outputs.append(stream.getvalue())
    assert outputs[0] == outputs[1]
    assert outputs[0].endswith(b"@data\n{0 1}\n")


class _FailingSecondFormat:
    """The compiled module, but its ``format_rows`` fails when it formats into ``buffer``, the
    writer's own buffer, which holds the second block of a pair (the first goes to the spare)."""

    def __init__(self, module):
        self.module, self.buffer, self.failed = module, None, False

    def __getattr__(self, name):
        return getattr(self.module, name)

    def format_rows(self, *arguments):
        if arguments[-1] is self.buffer:
            self.failed = True
            raise MemoryError("no room for the second block")
        return self.module.format_rows(*arguments)


def test_a_failure_formatting_the_second_block_comes_after_the_first_is_written(monkeypatch):
    schema = Schema("r", (Attribute("x", NUMERIC), Attribute("y", NUMERIC)))
    values = sp.csr_matrix(np.array([[1.0, 0.0], [3.0, 0.5]]))  # one block a row: a pair
    failing = _FailingSecondFormat(writer._speedups)
    monkeypatch.setattr(writer, "_SPARSE_BLOCK_ENTRIES", 1)
    monkeypatch.setattr(writer, "_speedups", failing)
    stream = io.BytesIO()
    arff_writer = ArffWriter(stream, schema)
    failing.buffer = arff_writer._formatted
    with pytest.raises(MemoryError, match="second block"):
        arff_writer.write(Chunk(values, {}))
    assert failing.failed
    assert stream.getvalue().endswith(b"@data\n{0 1}\n")
