"""Bounds on what one input may ask of memory (issue 23): line and header length, labels,
nesting, chunk bytes, and the environment variables that raise them.

Each bound is tested at a small value set through its environment variable, so the
tests stay fast; the defaults are checked against what README documents.
"""

from __future__ import annotations

import gzip
import io

import numpy as np
import pytest

from arff_helpers import REAL, assert_same_values, read_all
from filterkit.arff import ArffReader, read_arff
from filterkit.errors import ArffError
from filterkit.limits import Limits

HEADER = b"@relation r\n@attribute a numeric\n@attribute b {x,y}\n@data\n"


def read_error(data: bytes) -> ArffError:
    with pytest.raises(ArffError) as caught:
        read_arff(io.BytesIO(data), "f")
    return caught.value


class Zeros(io.RawIOBase):
    """``/dev/zero`` that ends after ``size`` bytes, counting what was read."""

    def __init__(self, size: int):
        self.left = size
        self.served = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        count = min(len(buffer), self.left)
        buffer[:count] = bytes(count)
        self.left -= count
        self.served += count
        return count


def test_defaults_are_the_documented_ones(monkeypatch):
    for variable in (
        "FILTERKIT_MAX_LINE_BYTES",
        "FILTERKIT_MAX_HEADER_BYTES",
        "FILTERKIT_MAX_ATTRIBUTES",
        "FILTERKIT_MAX_LABELS",
        "FILTERKIT_MAX_CHUNK_BYTES",
        "FILTERKIT_MAX_NESTING",
    ):
        monkeypatch.delenv(variable, raising=False)
    limits = Limits.from_environment()
    assert (limits.line_bytes, limits.header_bytes) == (64 << 20, 256 << 20)
    assert (limits.attributes, limits.labels, limits.nesting) == (1_000_000, 1_000_000, 100)
    assert limits.chunk_bytes == 1 << 20


def test_endless_zeros_are_refused_after_one_line_of_the_bound():
    # /dev/zero: one line that never ends.  It is refused once it passes 64 MiB,
    # not read to the end (here 256 MiB) nor held whole.
    zeros = Zeros(256 << 20)
    with pytest.raises(ArffError) as caught:
        ArffReader(io.BufferedReader(zeros), "/dev/zero")
    assert (caught.value.path, caught.value.line) == ("/dev/zero", 1)
    assert "a line longer than 67,108,864 bytes: refused (set FILTERKIT_MAX_LINE_BYTES" in caught.value.message
    assert zeros.served < (64 << 20) + (2 << 20)


def test_a_gzip_bomb_of_blanks_is_refused_with_its_line(monkeypatch):
    monkeypatch.setenv("FILTERKIT_MAX_LINE_BYTES", "100000")
    bomb = gzip.compress(HEADER + b"1,x\n" + b" " * 1_000_000)
    error = read_error(bomb)
    assert error.line == 6 and "a line longer than 100,000 bytes" in error.message


@pytest.mark.parametrize("where", ["header", "data", "last line"])
def test_a_line_over_the_bound_is_refused_and_one_at_the_bound_is_read(monkeypatch, where):
    monkeypatch.setenv("FILTERKIT_MAX_LINE_BYTES", "5000")
    padding = {
        "header": lambda n: b"%" + b"c" * (n - 1) + b"\n" + HEADER,
        "data": lambda n: HEADER + b"1," + b" " * (n - 3) + b"x\n2,y\n",
        "last line": lambda n: HEADER + b"1,x\n" + b"2,y" + b" " * (n - 3),
    }[where]
    line = {"header": 1, "data": 5, "last line": 6}[where]
    read_arff(io.BytesIO(padding(5000)), "f")
    error = read_error(padding(5001))
    assert error.line == line and "a line longer than 5,000 bytes" in error.message


def test_a_header_over_its_bound_is_refused_at_the_line_that_crosses_it(monkeypatch):
    monkeypatch.setenv("FILTERKIT_MAX_HEADER_BYTES", "300")
    attributes = b"".join(b"@attribute a%02d numeric\n" % i for i in range(20))  # 23 bytes each
    error = read_error(b"@relation r\n" + attributes + b"@data\n")
    assert error.line == 14  # 12 + 12 * 23 = 288 bytes after line 13, 311 after line 14
    assert "the header is longer than 300 bytes: refused (set FILTERKIT_MAX_HEADER_BYTES" in error.message


def test_labels_over_the_bound_are_refused_naming_the_attribute(monkeypatch):
    monkeypatch.setenv("FILTERKIT_MAX_LABELS", "3")
    schema, _ = read_arff(io.BytesIO(b"@relation r\n@attribute c {a,b,'c d'}\n@data\n"), "f")
    assert schema.attributes[0].labels == ("a", "b", "c d")
    error = read_error(b"@relation r\n@attribute c {a,b,c,d}\n@data\n")
    assert error.line == 2
    assert "attribute 'c': more than 3 labels: refused (set FILTERKIT_MAX_LABELS" in error.message


def test_attributes_over_the_bound_are_counted_inside_relational_ones_too(monkeypatch):
    monkeypatch.setenv("FILTERKIT_MAX_ATTRIBUTES", "3")
    error = read_error(
        b"@relation r\n@attribute bag relational\n@attribute a numeric\n@attribute b numeric\n"
        b"@attribute c numeric\n@end bag\n@data\n"
    )
    assert error.line == 5 and "more than 3 attributes: refused" in error.message


def test_deep_nesting_is_refused_with_a_clear_error():
    depth = 5000
    header = (
        b"@relation r\n"
        + b"".join(b"@attribute r%d relational\n" % i for i in range(depth))
        + b"@attribute a numeric\n"
        + b"".join(b"@end r%d\n" % i for i in reversed(range(depth)))
        + b"@data\n"
    )
    error = read_error(header)
    assert error.line == 102
    assert "attribute 'r100': relational attributes nested more than 100 deep" in error.message


def test_nesting_at_the_bound_is_read_and_written_back(run_filterkit, tmp_path):
    depth = 100
    text = (
        b"@relation r\n"
        + b"".join(b"@attribute r%d relational\n" % i for i in range(depth))
        + b"@attribute a numeric\n"
        + b"".join(b"@end r%d\n" % i for i in reversed(range(depth)))
        + b"@data\n"
    )
    path = tmp_path / "deep.arff"
    path.write_bytes(text)
    result = run_filterkit(path)
    assert result.status == 0, result.stderr
    assert read_arff(io.BytesIO(result.stdout))[0] == read_arff(path)[0]


@pytest.mark.slow
@pytest.mark.parametrize("value", ["abc", "0", "-5", "1.5", "", "1" * 40, "٣"])
@pytest.mark.parametrize(
    "variable", ["FILTERKIT_MAX_ATTRIBUTES", "FILTERKIT_MAX_LINE_BYTES", "FILTERKIT_MAX_CHUNK_BYTES"]
)
def test_an_environment_value_that_is_not_a_positive_integer_is_a_clear_error(
    run_filterkit, monkeypatch, variable, value
):
    monkeypatch.setenv(variable, value)
    result = run_filterkit(REAL / "iris.arff")
    assert result.status == 1
    assert result.stdout == b""
    limit = {
        "FILTERKIT_MAX_ATTRIBUTES": "attributes",
        "FILTERKIT_MAX_LINE_BYTES": "line_bytes",
        "FILTERKIT_MAX_CHUNK_BYTES": "chunk_bytes",
    }[variable]
    assert (
        result.stderr == f"filterkit: error: {variable} must be a positive integer (the default is "
        f"{getattr(Limits(), limit)}), not {value!r}\n"
    )


@pytest.mark.parametrize("name", ["oh0.wc.arff", "credit-g.arff", "iris.arff"])
def test_chunks_are_cut_by_bytes_as_well_as_rows_with_the_same_rows(monkeypatch, name):
    path = REAL / name
    schema, whole = read_all(path)
    monkeypatch.setenv("FILTERKIT_MAX_CHUNK_BYTES", "2000")
    with ArffReader(path) as reader:
        chunks = list(reader.chunks())
        header_lines = reader.header.lines
    assert len(chunks) > 1 and sum(c.n_rows for c in chunks) == whole.n_rows
    rows = [
        line
        for line in path.read_bytes().splitlines()[header_lines:]
        if line.strip() and not line.strip().startswith(b"%")
    ]
    position = 0
    for chunk in chunks:
        text = sum(len(line.strip()) + 1 for line in rows[position : position + chunk.n_rows])
        # a chunk ends at the first row that reaches the budget
        assert chunk.n_rows == 1 or text - len(rows[position + chunk.n_rows - 1].strip()) - 1 < 2000
        position += chunk.n_rows
    assert_same_values(np.vstack([c.dense_values() for c in chunks]), whole.dense_values())


@pytest.mark.slow
@pytest.mark.parametrize("chain", [[], ["l2"], ["bns", "l2"]])
def test_output_does_not_depend_on_the_chunk_byte_budget(run_filterkit, monkeypatch, chain):
    path = REAL / "oh0.wc.arff"
    expected = run_filterkit(path, *chain)
    monkeypatch.setenv("FILTERKIT_MAX_CHUNK_BYTES", "3000")
    cut = run_filterkit(path, *chain)
    assert expected.status == cut.status == 0, cut.stderr
    assert cut.stdout == expected.stdout


@pytest.mark.slow
@pytest.mark.parametrize(
    "document, line",
    [
        (b"\x7f" * 3_000_000, 1),  # (not NUL, which separates words, as in Weka: a line of NULs is blank)
        (b"@relation r\n@attribute a numeric\n@data\n" + b"x" * 3_000_000 + b"\n", 4),
        (
            b"@relation r\n@attribute "
            + b"n" * 3_000_000
            + b" numeric\n@attribute "
            + b"n" * 3_000_000
            + b" numeric\n@data\n",
            3,
        ),
        (b"@relation r\n@attribute a date '" + b"y" * 2_999_999 + b"q'\n@data\n'2020'\n", 2),
    ],
)
def test_an_error_message_shows_a_long_token_cut_short(document, line):
    # a message quotes the offending text, not megabytes of it
    error = read_error(document)
    assert error.line == line
    assert len(error.message) < 400 and "(3,000,000 characters)" in error.message
