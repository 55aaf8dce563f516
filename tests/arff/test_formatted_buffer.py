"""format_rows writes each chunk's text without copying it: into the bytes object it
returns, or into a bytearray the writer hands it again for every chunk."""

from __future__ import annotations

import io

import numpy as np
import pytest
import scipy.sparse as sp

from filterkit.arff import ArffReader, _speedups
from filterkit.arff.writer import ArffWriter


def sparse_rows(rows: int, seed: int):
    generator = np.random.default_rng(seed)
    lengths = generator.integers(0, 30, rows)
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    columns = np.concatenate([np.sort(generator.choice(1000, n, replace=False)) for n in lengths]).astype(np.int64)
    values = generator.normal(size=int(indptr[-1]))
    return indptr, columns, values, np.zeros(values.size, np.uint8)


def test_a_reused_bytearray_holds_the_same_text_as_the_bytes_returned():
    into = bytearray()
    sizes = []
    for rows, seed in [(500, 1), (20, 2), (900, 3)]:
        indptr, columns, values, special = sparse_rows(rows, seed)
        expected = _speedups.format_rows(indptr, columns, values, special, [], True)
        length = _speedups.format_rows(indptr, columns, values, special, [], True, 0, False, into)
        assert bytes(into[:length]) == expected
        assert expected.count(b"\n") == rows
        sizes.append(len(into))
    # grown for the first and the third chunk, kept (not shrunk) for the small second one
    assert sizes[0] == sizes[1] < sizes[2]


def test_the_bytearray_is_refused_while_a_view_of_it_is_alive_and_other_types_always():
    indptr, columns, values, special = sparse_rows(50, 4)
    into = bytearray()
    _speedups.format_rows(indptr, columns, values, special, [], True, 0, False, into)
    bigger = sparse_rows(5000, 5)
    with memoryview(into):  # a writer still writing the previous text: it cannot be resized under it
        with pytest.raises(BufferError):
            _speedups.format_rows(*bigger[:4], [], True, 0, False, into)
    with pytest.raises(TypeError, match="bytearray"):
        _speedups.format_rows(indptr, columns, values, special, [], True, 0, False, b"")


def test_binary_and_text_streams_get_the_same_text_chunk_after_chunk():
    with ArffReader("tests/data/real/oh0.wc.arff", chunk_rows=97) as source:
        schema, chunks = source.schema, list(source.chunks())
    binary, text = io.BytesIO(), io.StringIO()
    for stream in (binary, text):
        writer = ArffWriter(stream, schema)
        for chunk in chunks:
            writer.write(chunk)
    assert binary.getvalue().decode("utf-8") == text.getvalue()
    with ArffReader(io.BytesIO(binary.getvalue())) as written:
        again = list(written.chunks())
    original = sp.vstack([chunk.values for chunk in chunks]).tocsr()
    assert (sp.vstack([chunk.values for chunk in again]) != original).nnz == 0
    assert original.shape == (1003, 3183)


def test_row_bounds_that_go_back_are_refused_before_any_value_is_read():
    values = np.zeros(3)
    with pytest.raises(ValueError, match="row bounds must not decrease"):
        _speedups.format_rows(
            np.array([0, 200_000, 3], np.int64), np.zeros(3, np.int64), values, np.zeros(3, np.uint8), [], True
        )
