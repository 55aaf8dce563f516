"""The reader parses two large groups of rows side by side (reader._parsed_side_by_side): the
chunks, and the first error in file order, are what parsing one group at a time gives."""

from __future__ import annotations

import io
import threading

import numpy as np
import pytest

from filterkit.arff import reader as reader_module
from filterkit.arff.reader import ArffReader
from filterkit.errors import ArffError

LARGE = b"x" * reader_module._SIDE_BY_SIDE_BYTES
SMALL = b"x"


def parse(text: bytes, label: str):
    """A stand-in parse: the label, and the thread it ran in; 'bad' labels fail."""
    if label.startswith("bad"):
        raise ValueError(label)
    return label, threading.current_thread().name


def groups(*labels, fail_after=None):
    """Groups as the reader gathers them: (text, label); gathering fails after ``fail_after`` groups."""
    for count, label in enumerate(labels):
        if count == fail_after:
            raise ArffError("gathering failed")
        yield (SMALL if label.startswith("small") else LARGE), label


def test_chunks_come_in_order_and_large_pairs_use_a_helper_thread():
    labels = ["a", "b", "small1", "c", "small2", "small3", "d", "e", "f"]
    results = list(reader_module._parsed_side_by_side(parse, groups(*labels)))
    assert [label for label, _ in results] == labels
    threads = dict(results)
    # a and b are a pair: a in the helper; c pairs with small2 (the first of a pair is large)
    assert threads["a"] == "filterkit-parse" and threads["b"] != "filterkit-parse"
    assert threads["c"] == "filterkit-parse" and threads["small2"] != "filterkit-parse"
    assert threads["small1"] != "filterkit-parse" and threads["small3"] != "filterkit-parse"
    assert threads["d"] == "filterkit-parse" and threads["f"] != "filterkit-parse"  # f alone at the end


def test_an_error_gathering_the_second_group_comes_after_the_first_chunk():
    produced = reader_module._parsed_side_by_side(parse, groups("a", "b", "c", fail_after=1))
    assert next(produced)[0] == "a"
    with pytest.raises(ArffError, match="gathering failed"):
        next(produced)


def test_the_first_groups_error_comes_before_the_second_groups():
    produced = reader_module._parsed_side_by_side(parse, groups("bad first", "bad second"))
    with pytest.raises(ValueError, match="bad first"):
        next(produced)


def test_an_error_parsing_the_second_group_comes_after_the_first_chunk():
    produced = reader_module._parsed_side_by_side(parse, groups("a", "bad second", "c"))
    assert next(produced)[0] == "a"
    with pytest.raises(ValueError, match="bad second"):
        next(produced)


def sparse_file(rows: int, bad_rows=()) -> bytes:
    """A sparse ARFF file of ``rows`` rows of 40 entries (about 300 bytes each); a row in
    ``bad_rows`` has a value that is no number."""
    lines = ["@relation side", *[f"@attribute a{i} numeric" for i in range(200)], "@data"]
    rng = np.random.default_rng(7)
    for row in range(rows):
        columns = np.sort(rng.choice(200, 40, replace=False))
        values = rng.integers(1, 1000, 40)
        entries = [f"{c} {v}" for c, v in zip(columns.tolist(), values.tolist())]
        if row in bad_rows:
            entries[3] = f"{columns[3]} oops"
        lines.append("{" + ",".join(entries) + "}")
    return ("\n".join(lines) + "\n").encode()


def read_in_groups(data: bytes, side_by_side: bool, monkeypatch):
    monkeypatch.setattr(reader_module, "_SIDE_BY_SIDE_BYTES", 1 << 14 if side_by_side else 1 << 62)
    with ArffReader(io.BytesIO(data), "side.arff", chunk_rows=200) as reader:
        return [
            (chunk.csr().indptr.copy(), chunk.csr().indices.copy(), chunk.csr().data.copy())
            for chunk in reader.chunks()
        ]


def test_a_real_file_reads_the_same_chunks_either_way(monkeypatch):
    data = sparse_file(2_000)
    together = read_in_groups(data, True, monkeypatch)
    alone = read_in_groups(data, False, monkeypatch)
    assert len(together) == len(alone) == 10
    for (indptr, indices, values), (indptr_alone, indices_alone, values_alone) in zip(together, alone):
        assert np.array_equal(indptr, indptr_alone)
        assert np.array_equal(indices, indices_alone)
        assert np.array_equal(values, values_alone)


@pytest.mark.parametrize("bad_rows", [(450, 650), (650, 450), (250,), (1999,)])
def test_a_real_files_first_bad_row_is_the_one_named(monkeypatch, bad_rows):
    """Rows 450 and 650 fall in the two groups of one pair (200 rows a group); the error named is the
    first bad row's in the file, as reading one group at a time names it."""
    data = sparse_file(2_000, bad_rows)
    first_line = 1 + 200 + 1 + 1 + min(bad_rows)  # @relation, the attributes, @data, then the rows
    for side_by_side in (True, False):
        with pytest.raises(ArffError) as raised:
            read_in_groups(data, side_by_side, monkeypatch)
        assert f"side.arff:{first_line}:" in str(raised.value)
        assert "oops" in str(raised.value)
