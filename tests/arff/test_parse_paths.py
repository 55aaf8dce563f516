"""One parse path per row form (issue 38): with the compiled module, plain sparse rows are
parsed by parse_sparse_rows and plain dense rows tokenized by tokenize_plain; a group either
declines goes straight to the tokenizer, and reads as the tokenizer alone reads it."""

from __future__ import annotations

import io
import subprocess
import sys
import tracemalloc

import arff as liac
import numpy as np
import pytest

from filterkit import kernels
from filterkit.arff import ArffReader, reader
from filterkit.arff.limits import MOST_TABLED_LABELS
from filterkit.arff.tokens import quote
from filterkit.errors import ArffError
from filterkit.schema import positions_by_key

HEADER = b"@relation r\n@attribute a numeric\n@attribute b numeric\n@attribute c {x,y}\n@data\n"
#: 70 digits: a number the compiled parsers leave to others (they copy at most 63 bytes)
LONG = b"1." + b"0" * 67 + b"1"


def paths_taken(data: bytes, monkeypatch) -> tuple[list, list[str]]:
    """The chunks' dense values and the parse functions called, in order."""
    called: list[str] = []
    for name in ("_parse_dense_plain", "_parse_sparse_plain", "_parse_row"):
        function = getattr(reader, name)
        monkeypatch.setattr(reader, name, lambda *a, _f=function, _n=name: called.append(_n) or _f(*a))
    with ArffReader(io.BytesIO(HEADER + data), name="f") as source:
        values = [chunk.dense_values().tolist() for chunk in source.chunks()]
    monkeypatch.undo()
    return values, called


def tokenizer_read(data: bytes) -> list:
    with kernels.compiled(False, kernels.READING), ArffReader(io.BytesIO(HEADER + data), name="f") as source:
        return [chunk.dense_values().tolist() for chunk in source.chunks()]


def test_a_sparse_group_the_compiled_parser_declines_goes_to_the_tokenizer(monkeypatch):
    data = b"{0 1,2 y}\n{0 " + LONG + b",1 2}\n"
    values, called = paths_taken(data, monkeypatch)
    assert called == ["_parse_sparse_plain", "_parse_row", "_parse_row"]
    assert values == [[[1.0, 0.0, 1.0], [1.0, 2.0, 0.0]]] == tokenizer_read(data)


def test_a_dense_group_the_compiled_tokenizer_declines_goes_to_the_tokenizer(monkeypatch):
    data = b"1,2,x\n" + LONG + b",3,y\n"
    values, called = paths_taken(data, monkeypatch)
    assert called == ["_parse_dense_plain", "_parse_row", "_parse_row"]
    assert values == [[[1.0, 2.0, 0.0], [float(LONG), 3.0, 1.0]]] == tokenizer_read(data)


def test_plain_groups_take_the_compiled_path_alone(monkeypatch):
    sparse, called_sparse = paths_taken(b"{0 1.5,2 y}\n{1 -2}\n", monkeypatch)
    dense, called_dense = paths_taken(b"1.5,0,y\n0,-2,x\n", monkeypatch)
    assert called_sparse == ["_parse_sparse_plain"] and called_dense == ["_parse_dense_plain"]
    assert np.array_equal(sparse, dense)


@pytest.mark.parametrize(
    ("data", "parser"),
    [
        (b"1,'2','y'\n' 3 ',4,\"x\"\n", "_parse_dense_plain"),
        (b"{0 1,1 '2',2 'y'}\n{0 ' 3 ',1 \"4\"}\n", "_parse_sparse_plain"),
    ],
)
def test_rows_with_quoted_values_take_the_compiled_path_alone(data, parser, monkeypatch):
    """Issue 41: quotes no longer send a group to the tokenizer."""
    values, called = paths_taken(data, monkeypatch)
    assert called == [parser]
    assert values == [[[1.0, 2.0, 1.0], [3.0, 4.0, 0.0]]] == tokenizer_read(data)


@pytest.mark.parametrize("chunk_rows", [1, 2, 10])
@pytest.mark.parametrize("row", [b"3,\xffx,x", b"{0 3,2 \xffx}", b"3,4,z", b"{2 z}"])
def test_a_bad_token_in_a_plain_group_is_named_as_the_tokenizer_names_it(row, chunk_rows):
    """Whether a quoted row shares the bad row's group (chunk_rows) does not change the error."""
    before = b"{0 1,2 'x'}\n{0 2}\n" if row.startswith(b"{") else b"1,2,'x'\n1,2,x\n"
    with pytest.raises(ArffError) as raised:
        with ArffReader(io.BytesIO(HEADER + before + row + b"\n"), name="f", chunk_rows=chunk_rows) as source:
            list(source.chunks())
    expected = "not UTF-8 text (invalid start byte at byte" if b"\xff" in row else "value 'z' is not a label"
    assert str(raised.value).startswith(f"f:8: {expected}")


def test_labels_looked_up_at_once_read_as_the_tokenizer_reads_them():
    """Labels that share a prefix, hold a NUL (quoted: outside quotes it separates, as in Weka) or non-ASCII
    bytes, are longer than a word or than a cache line, in two columns that hold the same labels in other
    orders; ``?``; and a row whose token is no label, which the tokenizer then names."""
    labels = ["a", "ab", "a\x00", "ééééé", "abcdefgh", "abcdefghi", "l" * 70, "?x"]
    header = (
        "@relation r\n@attribute s string\n"
        f"@attribute c {{{','.join(map(quote, labels))}}}\n"
        f"@attribute d {{{','.join(map(quote, reversed(labels)))}}}\n@data\n"
    )
    pairs = zip([*labels, "?"], ["?", *labels])
    pairs = (
        (first if first == "?" else quote(first), second if second == "?" else quote(second)) for first, second in pairs
    )
    rows = "".join(f"'t {k}',{first},{second}\n" for k, (first, second) in enumerate(pairs))
    data = (header + rows).encode("utf-8")
    with ArffReader(io.BytesIO(data), name="f") as source:
        compiled = [(chunk.dense_values().tolist(), chunk.text) for chunk in source.chunks()]
    with kernels.compiled(False, kernels.READING), ArffReader(io.BytesIO(data), name="f") as source:
        assert repr(compiled) == repr([(chunk.dense_values().tolist(), chunk.text) for chunk in source.chunks()])
    values = np.array(compiled[0][0])
    assert values[:8, 1].tolist() == list(range(8)) and np.isnan(values[8, 1])
    assert values[1:, 2].tolist() == list(range(7, -1, -1)) and np.isnan(values[0, 2])
    with pytest.raises(ArffError, match="^f:15: value 'abc' is not a label of attribute 'd'"):
        with ArffReader(io.BytesIO(data + b"'t',a,abc\n"), name="f") as source:
            list(source.chunks())


def test_many_labels_are_each_found_by_their_bytes():
    """5,000 labels in two columns, in other orders, and a label longer than a cache line: each token's own
    code, None for a token that is no label of its column."""
    labels = [f"l{k}" for k in range(5000)] + ["x" * 100]
    found = reader._label_table({3: {label: float(code) for code, label in enumerate(labels)}, 7: {"l1": 0.0}})

    def codes(tokens: list[str], columns: list[int]):
        ends = np.cumsum([len(token) + 1 for token in tokens]) - 1
        starts = ends - [len(token) for token in tokens]
        found_codes = found.codes(" ".join(tokens).encode(), np.array(columns, np.int64), starts, ends)
        return None if found_codes is None else np.frombuffer(found_codes, np.float64).tolist()

    assert codes(labels[::-1], [3] * len(labels)) == list(range(len(labels) - 1, -1, -1))
    assert codes(["l1", "?", "l1", "?"], [7, 7, 3, 3])[::2] == [0.0, 1.0]
    assert np.isnan(codes(["?"], [7])).all()
    for absent, column in (("l5000", 3), ("l1 ", 3), ("l2", 7), ("x" * 99, 3), ("l1", 5)):
        assert codes(["l1", absent], [3, column]) is None


def test_the_label_table_is_left_out_past_its_bound_and_costs_a_token_nothing_but_its_code():
    """A header of more than MOST_TABLED_LABELS labels gets no table (its tokens are looked up by value()); a
    table's lookup holds only the codes it gives.  (Its hash is _words.c's keyed SipHash, keyed_hash.h: the
    crafted-words test of tests/test_words_hostile.py covers the key.)"""
    many = {0: {f"l{k}": float(k) for k in range(MOST_TABLED_LABELS + 1)}}
    header = "@relation r\n@attribute c {" + ",".join(many[0]) + "}\n@data\nl5\nl7\n"
    with ArffReader(io.BytesIO(header.encode()), name="f") as source:
        assert source._columns.labels is None
        assert [chunk.dense_values()[:, 0].tolist() for chunk in source.chunks()] == [[5.0, 7.0]]
    found = reader._label_table({0: {"a": 0.0, "W" * 64: 1.0}})
    tokens = b" ".join([b"a"] * 100_000)
    starts = np.arange(0, len(tokens), 2)
    columns, ends = np.zeros(len(starts), np.int64), starts + 1
    tracemalloc.start()
    codes = found.codes(tokens, columns, starts, ends)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert np.frombuffer(codes, np.float64).tolist() == [0.0] * len(starts)
    assert peak < 9 * len(starts)  # the codes' 8 bytes a token (numpy's hashing took 107 bytes a token)


def test_a_plain_question_mark_is_missing_where_a_label_is_the_question_mark():
    data = b"@relation r\n@attribute s string\n@attribute c {'?',a}\n@data\n'x',?\n'y','?'\n'z',a\n"
    with ArffReader(io.BytesIO(data), name="f") as source:
        compiled = [chunk.dense_values().tolist() for chunk in source.chunks()]
    with kernels.compiled(False, kernels.READING), ArffReader(io.BytesIO(data), name="f") as source:
        assert repr(compiled) == repr([chunk.dense_values().tolist() for chunk in source.chunks()])
    assert repr(compiled) == "[[[0.0, nan], [0.0, 0.0], [0.0, 1.0]]]"


def test_positions_by_key_groups_each_key_once_in_ascending_order():
    keys = np.array([7, 2, 7, 0, 2, 7], dtype=np.int64)
    assert [(key, at.tolist()) for key, at in positions_by_key(keys)] == [(0, [3]), (2, [1, 4]), (7, [0, 2, 5])]
    assert list(positions_by_key(np.zeros(0, dtype=np.int64))) == []


def test_a_wide_file_of_texts_and_labels_reads_and_writes_as_liac_arff_reads_it(tmp_path):
    """600 string and nominal columns (each was found by a scan of every token: quadratic in the columns)."""
    n_columns, n_rows = 300, 6
    header = "".join(f"@attribute s{k} string\n@attribute c{k} {{x,y,'z z'}}\n" for k in range(n_columns))
    rows = [
        ",".join(
            f"'t{k}.{r}',{'?' if (k + r) % 7 == 0 else ['x', 'y', quote('z z')][(k + r) % 3]}" for k in range(n_columns)
        )
        for r in range(n_rows)
    ]
    path = tmp_path / "wide.arff"
    path.write_text(f"@relation wide\n{header}@data\n" + "\n".join(rows) + "\n")
    expected = liac.load(path.read_text())["data"]
    with ArffReader(io.BytesIO(path.read_bytes()), name="wide.arff") as source:
        (chunk,) = list(source.chunks())
    labels = ["x", "y", "z z"]
    for k in range(n_columns):
        assert chunk.text[2 * k] == [row[2 * k] for row in expected]
        codes = chunk.dense_values()[:, 2 * k + 1]
        assert [None if code != code else labels[int(code)] for code in codes] == [row[2 * k + 1] for row in expected]
    written = tmp_path / "out.arff"
    subprocess.run([sys.executable, "-m", "filterkit", "-q", path, "-o", written], check=True)
    assert liac.load(written.read_text())["data"] == expected
