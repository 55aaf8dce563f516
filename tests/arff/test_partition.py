"""A file's data section cut at line ends into byte ranges, each read on its own
(filterkit.arff.partition, what the Dask engine's partitions of one file are)."""

from __future__ import annotations

import gzip
import re

import pytest

from filterkit.arff import partition, read_arff
from filterkit.arff.partition import count_line_ends, cut_at_line_ends, locate_rows, range_reader
from filterkit.errors import FilterkitError
from filterkit.schema import concatenate

HEADER = b"@relation r\n@attribute x numeric\n@attribute c {a,b}\n"
ROWS = b"".join(b"%d,%s\n" % (i, b"ab"[i % 2 : i % 2 + 1]) for i in range(40))


def write(tmp_path, data: bytes, name: str = "in.arff"):
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def test_rows_begin_right_after_the_data_keyword_so_a_row_on_that_line_is_read(tmp_path):
    data = HEADER + b"@data 7,a\n8,b\n"
    path = write(tmp_path, data)
    schema, start, size = locate_rows(path, "in.arff")
    assert [a.name for a in schema.attributes] == ["x", "c"]
    assert (start, size) == (len(HEADER) + len(b"@data"), len(data))
    with range_reader(path, "in.arff", start, size, schema, 10) as reader:
        assert next(reader.chunks()).values[:, 0].tolist() == [7.0, 8.0]


def test_a_gzip_file_has_no_row_offset(tmp_path):
    path = write(tmp_path, gzip.compress(HEADER + b"@data\n1,a\n"), "in.arff.gz")
    schema, start, _ = locate_rows(path, "in.arff.gz")
    assert start is None and len(schema.attributes) == 2


@pytest.mark.parametrize("count", [1, 2, 3, 7, 100])
def test_the_ranges_cover_the_rows_in_order_and_each_begins_a_line(tmp_path, count):
    path = write(tmp_path, HEADER + b"@data\n" + ROWS)
    _, start, size = locate_rows(path, "in.arff")
    ranges = cut_at_line_ends(path, start, size, count)
    data = open(path, "rb").read()
    assert ranges[0][0] == start and ranges[-1][1] == size
    assert all(end == next_start for (_, end), (next_start, _) in zip(ranges, ranges[1:]))
    assert all(end > begin for begin, end in ranges)
    assert all(data[begin - 1 : begin] == b"\n" for begin, _ in ranges[1:])
    assert len(ranges) <= count


def test_no_rows_give_one_empty_range(tmp_path):
    path = write(tmp_path, HEADER + b"@data")
    _, start, size = locate_rows(path, "in.arff")
    assert cut_at_line_ends(path, start, size, 4) == [(start, size)] and start == size


def test_the_ranges_read_apart_give_the_whole_files_rows(tmp_path):
    path = write(tmp_path, HEADER + b"@data\n" + ROWS)
    schema, start, size = locate_rows(path, "in.arff")
    parts = []
    for begin, end in cut_at_line_ends(path, start, size, 3):
        with range_reader(path, "in.arff", begin, end, schema, 4) as reader:
            parts.extend(reader.chunks())
    _, whole = read_arff(path)
    assert (concatenate(parts, 2).values == whole.values).all()


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_line_ends_are_counted_as_the_reader_counts_lines_even_split_between_blocks(tmp_path, monkeypatch, newline):
    monkeypatch.setattr(partition, "_BLOCK_BYTES", 3)
    data = (HEADER + b"@data\n" + ROWS).replace(b"\n", newline) + b"\r\n\n\r"
    path = write(tmp_path, data)
    assert count_line_ends(path, 0, len(data)) == len(re.findall(rb"\r\n|\r|\n", data))


def test_an_error_in_a_later_range_names_the_files_own_line(tmp_path):
    rows = ROWS.split(b"\n")
    rows[30] = b"30,z"
    path = write(tmp_path, HEADER + b"@data\n" + b"\n".join(rows))
    schema, start, size = locate_rows(path, "in.arff")
    begin, end = cut_at_line_ends(path, start, size, 2)[1]
    with pytest.raises(FilterkitError) as error:
        with range_reader(path, "in.arff", begin, end, schema, 4) as reader:
            list(reader.chunks())
    assert (error.value.path, error.value.line) == ("in.arff", HEADER.count(b"\n") + 1 + 31)


class EndlessBlanks:
    """A file object of spaces that never end, counting what was read."""

    def __init__(self):
        self.read_bytes = 0

    def read(self, size: int) -> bytes:
        self.read_bytes += size
        return b" " * size


def test_the_header_scan_stops_at_a_line_longer_than_the_limit(monkeypatch, tmp_path):
    monkeypatch.setenv("FILTERKIT_MAX_LINE_BYTES", str(1 << 20))
    endless = EndlessBlanks()
    assert partition._scan_header(endless) is None
    assert endless.read_bytes <= (1 << 20) + 2 * partition._BLOCK_BYTES
    too_long = tmp_path / "long.arff"
    too_long.write_bytes(b"@relation r\n@attribute x numeric" + b" " * (2 << 20) + b"\n@data\n1\n")
    with pytest.raises(FilterkitError, match=r"long\.arff:2: a line longer than 1,048,576 bytes"):
        locate_rows(str(too_long), str(too_long))
