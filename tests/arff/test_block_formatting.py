"""The writer formats a chunk a block of rows at a time: the text is the one written
whole (and by oracles.format_rows_in_python), and an error in the second block comes after the first
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
from oracles import printed_in_python, printer


def written(schema, chunk, monkeypatch, block_entries: int, compiled: bool = True) -> bytes:
    with monkeypatch.context() as patched:
        patched.setattr(writer, "_SPARSE_BLOCK_ENTRIES", block_entries)
        with printer(compiled):
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
            with printer(compiled), pytest.raises(ArffError, match="attribute 'when'"):
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
    """The one compiled pass over a sparse chunk written as stored (writer._format_as_stored: format_rows by
    column) writes what numpy's canonical form gives, and hands a chunk that is not so to it."""
    schema = Schema("r", (Attribute("c", "nominal", ("a", "b")), Attribute("x", NUMERIC), Attribute("y", NUMERIC)))
    matrix = sp.csr_matrix((np.array(data), np.array(indices), np.array(indptr)), shape=(2, 3))
    chunk = Chunk(matrix, {})
    assert written(schema, chunk, monkeypatch, 1 << 30) == written(schema, chunk, monkeypatch, 1 << 30, False)


def by_column(indptr, columns, values, kinds, labels):
    """format_rows' one pass over a sparse chunk written as stored (the writer's common case)."""
    arrays = (np.array(indptr, np.int64), np.array(columns, np.int64), np.array(values, np.float64))
    kinds = np.array(kinds, np.uint8)
    return kernels.speedups.format_rows(*arrays, kinds, [], True, 0, False, None, None, labels, True)


def per_entry(indptr, columns, values, kinds, labels):
    """format_rows given each entry's flag, as the writer calls it for any other chunk."""
    arrays = (np.array(indptr, np.int64), np.array(columns, np.int64), np.array(values, np.float64))
    special = np.array(kinds, np.uint8)[arrays[1]]
    return kernels.speedups.format_rows(*arrays, special, [], True, 0, False, None, None, labels)


def labels_of(column_labels: dict[int, list[bytes]]):
    columns = [c for c, texts in column_labels.items() for _ in range(len(texts) + 1)]
    texts = [text for texts in column_labels.values() for text in (*texts, b"?")]
    return kernels.speedups.Labels(np.array(columns, np.int64), texts, np.zeros(len(texts)))


def test_by_column_writes_what_flags_by_entry_write():
    labels = labels_of({0: [b"no", b"yes"], 3: [b"a", b"'b c'", b"d"]})
    rows = ([0, 3, 3, 6], [0, 1, 3, 1, 2, 3], [1, 2.5, 2, -7, 1e300, np.nan], [2, 0, 0, 2])
    assert by_column(*rows, labels) == per_entry(*rows, labels) == b"{0 yes,1 2.5,3 d}\n{}\n{1 -7,2 1e+300,3 ?}\n"


@pytest.mark.parametrize(
    "columns, values",
    [
        ([0, 2, 1], [1.0, 2.0, 3.0]),  # columns falling within a row
        ([0, 0, 1], [1.0, 2.0, 3.0]),  # a column twice
        ([0, 1, 2], [1.0, 0.0, 3.0]),  # a stored zero
        ([0, 1, 2], [1.0, -0.0, 3.0]),  # a stored minus zero
        ([0, 1, 5], [1.0, 2.0, 3.0]),  # a column beyond the flags
        ([0, 1, 2], [0.0, 2.0, 3.0]),  # a label's code 0 stored
        ([0, 1, 2], [3.0, 2.0, 3.0]),  # no label's code: codes 0 and 1, and 2 (or NaN) for ?
        ([0, 1, 2], [-4.0, 2.0, 3.0]),  # from -3 to -1 count back
    ],
)
def test_by_column_declines_rows_not_as_stored(columns, values):
    labels = labels_of({0: [b"no", b"yes"]})
    assert by_column([0, 3], columns, values, [2, 0, 0], labels) is None


def test_by_column_refuses_flags_it_cannot_take():
    labels = labels_of({0: [b"no", b"yes"]})
    with pytest.raises(ValueError, match="special flags are 0 or 2"):
        by_column([0, 1], [1], [1.0], [0, 1], labels)
    with pytest.raises(ValueError, match="a column without labels"):
        by_column([0, 1], [1], [1.0], [0, 2], labels)
    with pytest.raises(ValueError, match="inconsistent arrays"):  # by column, rows are sparse and take no texts
        kernels.speedups.format_rows(
            np.array([0, 1], np.int64), np.array([1], np.int64), np.ones(1), np.zeros(2, np.uint8),
            ["x"], True, 0, False, None, None, labels, True,
        )  # fmt: skip


def test_by_column_declines_labels_whose_room_would_pass_the_entries():
    """Each label column of a row may take the longest label: by column declines where that room would pass the
    entries' own (48 bytes each), and the per-entry path writes the chunk."""
    long_label = b"x" * 49
    labels = labels_of({0: [b"no", long_label]})
    assert by_column([0, 1], [0], [1.0], [2, 0], labels) is None
    assert per_entry([0, 1], [0], [1.0], [2, 0], labels) == b"{0 " + long_label + b"}\n"
    assert by_column([0, 1], [0], [1.0], [2, 0], labels_of({0: [b"no", b"x" * 48]})) == b"{0 " + b"x" * 48 + b"}\n"
    # a row of three entries has room for one label of up to 144 bytes
    assert by_column([0, 3], [0, 1, 2], [1.0, 2.0, 3.0], [2, 0, 0], labels) == b"{0 " + long_label + b",1 2,2 3}\n"


def test_a_row_not_as_stored_is_summed_before_its_label_is_read():
    """A label column stored twice in a row, whose first value is no label's code: numpy's canonical form sums
    the two into a code, the compiled printer on or off (a hostile review of aedcc0c found the one pass refusing
    the first); a value that is still no code is named by the per-entry path, and by the Python printer, which
    raised numpy's IndexError."""
    schema = Schema("r", (Attribute("c", "nominal", ("no", "yes")), Attribute("x", NUMERIC)))
    outputs = []
    for compiled in (True, False):
        with printer(compiled):
            stream = io.BytesIO()
            summed = sp.csr_matrix((np.array([3.0, -2.0, 5.0]), np.array([0, 0, 1]), np.array([0, 3])), shape=(1, 2))
            ArffWriter(stream, schema).write(Chunk(summed, {}))
            outputs.append(stream.getvalue())
    for code in (7.0, -4.0, np.inf):
        bad = sp.csr_matrix((np.array([code, 5.0]), np.array([0, 1]), np.array([0, 2])), shape=(1, 2))
        with pytest.raises(ValueError, match="a value of column 0 is no label's code"):
            ArffWriter(io.BytesIO(), schema).write(Chunk(bad, {}))
        with printed_in_python(), pytest.raises(ValueError, match="'c' is no label's code"):
            ArffWriter(io.BytesIO(), schema).write(Chunk(bad, {}))
    assert outputs[0] == outputs[1] and outputs[0].endswith(b"@data\n{0 yes,1 5}\n")


@pytest.mark.parametrize("label", ["yes", "y" * 60])
def test_a_chunk_not_as_stored_then_one_as_stored(label, monkeypatch):
    """The writer tries the one pass on each chunk until one is not as stored (a stored zero here), then makes
    every chunk so in numpy: the text is the Python printer's either way, a long label's too."""
    schema = Schema("r", (Attribute("c", "nominal", ("no", label)), Attribute("x", NUMERIC), Attribute("y", NUMERIC)))
    chunks = [
        Chunk(sp.csr_matrix((np.array(data), np.array(indices), np.array([0, len(data)])), shape=(1, 3)), {})
        for data, indices in [([1.0, 2.0], [0, 2]), ([1.0, 0.0, 3.0], [0, 1, 2]), ([1.0, 0.5], [0, 1])]
    ]
    outputs = []
    for compiled in (True, False):
        with printer(compiled):
            stream = io.BytesIO()
            arff_writer = ArffWriter(stream, schema)
            for chunk in chunks:
                arff_writer.write(chunk)
            outputs.append(stream.getvalue())
    assert outputs[0] == outputs[1]
    assert outputs[0].endswith(f"@data\n{{0 {label},2 2}}\n{{0 {label},2 3}}\n{{0 {label},1 0.5}}\n".encode())
