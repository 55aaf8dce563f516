"""A pass after the first skips the header it read before a block at a time (reader.NumberedLines.skip):
the same lines, the same digest, and a changed header still refused at the line it ends on."""

from __future__ import annotations

import io

import pytest

from filterkit.arff import reader as reader_module
from filterkit.arff.reader import ArffReader
from filterkit.errors import ArffError


def wide_file(attributes: int, crlf: bool = False) -> bytes:
    lines = [
        "% a comment",
        "@relation wide",
        *[f"@attribute a{i} numeric" for i in range(attributes)],
        "@attribute class {x,y}",
        "@data",
        *[",".join(["1"] * attributes + ["x" if row % 2 else "y"]) for row in range(5)],
    ]
    return ("\r\n" if crlf else "\n").join(lines).encode() + b"\n"


def rows_of(reader: ArffReader) -> list:
    return [chunk.dense_values().tolist() for chunk in reader.chunks()]


@pytest.mark.parametrize("block_bytes", [7, 64, 1000, 1 << 20])
@pytest.mark.parametrize("crlf", [False, True])
def test_a_known_header_is_skipped_whatever_the_blocks(monkeypatch, block_bytes, crlf):
    data = wide_file(300, crlf)
    with ArffReader(io.BytesIO(data), "wide.arff") as first:
        known, expected = first.header, rows_of(first)
    monkeypatch.setattr(reader_module, "_BLOCK_BYTES", block_bytes)
    with ArffReader(io.BytesIO(data), "wide.arff", known_header=known) as again:
        assert again.header == known  # the same line count and digest
        assert rows_of(again) == expected
    assert len(expected[0]) == 5


@pytest.mark.parametrize("block_bytes", [7, 1 << 20])
def test_a_changed_header_is_refused_at_its_last_line(monkeypatch, block_bytes):
    data = wide_file(300)
    with ArffReader(io.BytesIO(data), "wide.arff") as first:
        known = first.header
    monkeypatch.setattr(reader_module, "_BLOCK_BYTES", block_bytes)
    changed = data.replace(b"@attribute a150 numeric", b"@attribute b150 numeric")
    with pytest.raises(ArffError, match=r"wide\.arff:304: the header \(lines 1-304\) changed"):
        ArffReader(io.BytesIO(changed), "wide.arff", known_header=known)
    shorter = b"% a comment\n@relation wide\n"  # its last line, as line by line (the end after it is no line)
    with pytest.raises(ArffError, match=r"wide\.arff:2: the header \(lines 1-304\) changed"):
        ArffReader(io.BytesIO(shorter), "wide.arff", known_header=known)


def test_the_column_lookups_are_made_once_for_a_known_header():
    data = wide_file(20)
    with ArffReader(io.BytesIO(data), "wide.arff") as first:
        known = first.header
    with ArffReader(io.BytesIO(data), "wide.arff", known_header=known) as again:
        assert again.header.columns is known.columns is not None
