"""One parse path per row form (issue 38): with the compiled module, plain sparse rows are
parsed by parse_sparse_rows and plain dense rows tokenized by tokenize_plain; a group either
declines goes straight to the tokenizer, and reads as the tokenizer alone reads it."""

from __future__ import annotations

import io

import numpy as np

from filterkit.arff import ArffReader, reader
from oracles import tokenizer_only

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


def tokenizer_read(data: bytes, monkeypatch) -> list:
    tokenizer_only(monkeypatch)
    with ArffReader(io.BytesIO(HEADER + data), name="f") as source:
        values = [chunk.dense_values().tolist() for chunk in source.chunks()]
    monkeypatch.undo()
    return values


def test_a_sparse_group_the_compiled_parser_declines_goes_to_the_tokenizer(monkeypatch):
    data = b"{0 1,2 y}\n{0 " + LONG + b",1 2}\n"
    values, called = paths_taken(data, monkeypatch)
    assert called == ["_parse_sparse_plain", "_parse_row", "_parse_row"]
    assert values == [[[1.0, 0.0, 1.0], [1.0, 2.0, 0.0]]] == tokenizer_read(data, monkeypatch)


def test_a_dense_group_the_compiled_tokenizer_declines_goes_to_the_tokenizer(monkeypatch):
    data = b"1,2,x\n" + LONG + b",3,y\n"
    values, called = paths_taken(data, monkeypatch)
    assert called == ["_parse_dense_plain", "_parse_row", "_parse_row"]
    assert values == [[[1.0, 2.0, 0.0], [float(LONG), 3.0, 1.0]]] == tokenizer_read(data, monkeypatch)


def test_plain_groups_take_the_compiled_path_alone(monkeypatch):
    sparse, called_sparse = paths_taken(b"{0 1.5,2 y}\n{1 -2}\n", monkeypatch)
    dense, called_dense = paths_taken(b"1.5,0,y\n0,-2,x\n", monkeypatch)
    assert called_sparse == ["_parse_sparse_plain"] and called_dense == ["_parse_dense_plain"]
    assert np.array_equal(sparse, dense)
