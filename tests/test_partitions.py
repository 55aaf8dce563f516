"""An ARFF input as the Dask engine's partitions (filterkit.partitions): one file's data section cut
at line ends into byte ranges, each read on its own, its errors naming the file's own line."""

from __future__ import annotations

import gzip
import re

import pytest

from filterkit import partitions
from filterkit.arff import read_arff
from filterkit.errors import FilterkitError
from filterkit.partitions import count_line_ends, cut_at_line_ends, file_plan
from filterkit.schema import concatenate

HEADER = b"@relation r\n@attribute x numeric\n@attribute c {a,b}\n"
ROWS = b"".join(b"%d,%s\n" % (i, b"ab"[i % 2 : i % 2 + 1]) for i in range(40))


def write(tmp_path, data: bytes, name: str = "in.arff"):
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def rows_of(plan, chunk_rows: int = 4):
    """Every partition's rows, read apart, in order."""
    return [chunk for p in plan.partitions for chunk in p.chunks(plan.schema, chunk_rows, plan.sparse_rows)]


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_rows_begin_right_after_the_data_keyword_so_a_row_on_that_line_is_read(tmp_path, newline):
    header = b"% made by hand\n" + HEADER.replace(b"@attribute c", b"\n  @attribute c")
    data = (header + b" @DATA 7,a\n8,b\n9,a\n").replace(b"\n", newline)
    plan = file_plan(write(tmp_path, data), "in.arff", count=2)
    assert [a.name for a in plan.schema.attributes] == ["x", "c"]
    assert plan.partitions[0].start == len(header.replace(b"\n", newline)) + len(b" @DATA")
    assert (plan.sparse_rows, plan.header_comments) == (False, ("made by hand",))
    assert concatenate(rows_of(plan), 2).values[:, 0].tolist() == [7.0, 8.0, 9.0]


def test_a_gzip_file_is_one_partition(tmp_path):
    path = write(tmp_path, gzip.compress(HEADER + b"@data\n1,a\n"), "in.arff.gz")
    plan = file_plan(path, "in.arff.gz", count=3)
    assert [p.start for p in plan.partitions] == [None] and len(plan.schema.attributes) == 2
    assert rows_of(plan)[0].values.tolist() == [[1.0, 0.0]]


@pytest.mark.parametrize("count", [1, 2, 3, 7, 100])
def test_the_ranges_cover_the_rows_in_order_and_each_begins_a_line(tmp_path, count):
    path = write(tmp_path, HEADER + b"@data\n" + ROWS)
    start, size = len(HEADER + b"@data"), len(HEADER + b"@data\n" + ROWS)
    ranges = cut_at_line_ends(path, start, size, count)
    data = open(path, "rb").read()
    assert ranges[0][0] == start and ranges[-1][1] == size
    assert all(end == next_start for (_, end), (next_start, _) in zip(ranges, ranges[1:]))
    assert all(end > begin for begin, end in ranges)
    assert all(data[begin - 1 : begin] == b"\n" for begin, _ in ranges[1:])
    plan = file_plan(path, path, "in.arff", count=count)
    assert len(ranges) <= count and [(p.start, p.end) for p in plan.partitions] == ranges
    names = ["in.arff"] if count == 1 else [f"part-{number:05d}.arff" for number in range(len(ranges))]
    assert [p.output_name for p in plan.partitions] == names


def test_no_rows_give_one_empty_range(tmp_path):
    path = write(tmp_path, HEADER + b"@data")
    plan = file_plan(path, "in.arff", count=4)
    assert [(p.start, p.end) for p in plan.partitions] == [(len(HEADER) + 5, len(HEADER) + 5)]
    assert (rows_of(plan), plan.sparse_rows) == ([], None)


def test_the_ranges_read_apart_give_the_whole_files_rows(tmp_path):
    path = write(tmp_path, HEADER + b"@data\n" + ROWS)
    plan = file_plan(path, "in.arff", count=3)
    _, whole = read_arff(path)
    assert len(plan.partitions) == 3
    assert (concatenate(rows_of(plan), 2).values == whole.values).all()


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_line_ends_are_counted_as_the_reader_counts_lines_even_split_between_blocks(tmp_path, monkeypatch, newline):
    monkeypatch.setattr(partitions, "_BLOCK_BYTES", 3)
    data = (HEADER + b"@data\n" + ROWS).replace(b"\n", newline) + b"\r\n\n\r"
    path = write(tmp_path, data)
    assert count_line_ends(path, len(data)) == len(re.findall(rb"\r\n|\r|\n", data))


@pytest.mark.parametrize("newline", [b"\n", b"\r\n"])
def test_an_error_in_a_later_range_names_the_files_own_line(tmp_path, newline):
    rows = ROWS.split(b"\n")
    rows[30] = b"30,z"
    path = write(tmp_path, (HEADER + b"@data\n" + b"\n".join(rows)).replace(b"\n", newline))
    plan = file_plan(path, "in.arff", count=2)
    with pytest.raises(FilterkitError) as error:
        list(plan.partitions[1].chunks(plan.schema, 4, None))
    assert (error.value.path, error.value.line) == ("in.arff", HEADER.count(b"\n") + 1 + 31)


def test_a_header_line_longer_than_the_limit_is_an_error_at_its_line(monkeypatch, tmp_path):
    monkeypatch.setenv("FILTERKIT_MAX_LINE_BYTES", str(1 << 20))
    too_long = tmp_path / "long.arff"
    too_long.write_bytes(b"@relation r\n@attribute x numeric" + b" " * (2 << 20) + b"\n@data\n1\n")
    with pytest.raises(FilterkitError, match=r"long\.arff:2: a line longer than 1,048,576 bytes"):
        file_plan(str(too_long), str(too_long), count=2)
