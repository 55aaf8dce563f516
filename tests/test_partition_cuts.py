"""The cuts of a CSV file for the Dask engine (:func:`filterkit.partitions.csv_cuts`, issue 76 item 1) are
those the line-by-line walk made before the cutting read whole rows at C speed: the walk is kept here as
the oracle, and thousands of seeded random files (quoted values holding line ends, commas and doubled
quotes, single-quoted values, quotes that open mid-value or follow a closing one, CRLF and CR line ends, a
BOM, blank lines, a header alone, lines past a small line bound) must get the same offsets from both."""

from __future__ import annotations

import codecs
import os
import random

import pytest

from filterkit import partitions
from filterkit.formats.csv import ends_quoted
from filterkit.limits import Limits
from filterkit.partitions import csv_cuts


def walked_cuts(path: str, count: int) -> tuple[int, list[tuple[int, int]]]:
    """The cuts as filterkit 0.x made them (the oracle): the file followed line by line up to the last cut."""
    size = os.path.getsize(path)
    longest = Limits.from_environment().line_bytes
    begin: int | None = None
    cuts: list[int] = []
    quoted = written = False
    offset = 0
    with open(path, "rb") as handle:
        while (begin is None or len(cuts) + 1 < count) and (line := handle.readline(longest)):
            offset += len(line)
            if not line.endswith(b"\n") and offset < size:
                break
            text = line.removeprefix(codecs.BOM_UTF8) if offset == len(line) else line
            followed = walked_line(text, quoted, written, begin is not None)
            if followed is None:
                return 0, [(0, size)]
            quoted, written = followed
            if quoted or not written:
                continue
            if begin is None:
                begin = offset
            elif offset < size and offset >= begin + (size - begin) * (len(cuts) + 1) // count:
                cuts.append(offset)
    if begin is None:
        return (0, [(0, size)]) if offset < size else (size, [(size, size)])
    edges = [begin, *cuts, size]
    return begin, [(start, end) for start, end in zip(edges, edges[1:]) if end > start] or [(begin, size)]


def walked_line(text: bytes, quoted: bool, written: bool, header_read: bool) -> tuple[bool, bool] | None:
    """The oracle's step: one line's pieces (split at CR) followed as the reader joins lines into rows."""
    for piece in text.removesuffix(b"\n").split(b"\r"):
        if not header_read and written and not quoted and piece.strip():
            return None
        if b'"' in piece:
            quoted = ends_quoted(piece, quoted)
        written = written or bool(piece.strip())
    return quoted, written


LINE_ENDS = [b"\n", b"\n", b"\n", b"\r\n", b"\r"]
VALUES = [
    lambda pick: str(pick.randint(-99, 10**6)).encode(),
    lambda pick: pick.choice([b"", b"?", b" ", b"\t", b"spam", b"don't", b'5" tall', b"a'b", b"x\\y"]),
    lambda pick: b'"' + pick.choice([b"", b"a,b", b'say ""hi""', b'""', b"?", b"it's"]) + b'"',
    lambda pick: b'"line one' + pick.choice(LINE_ENDS) + pick.choice([b"two, more", b'"" quoted', b""]) + b'"',
    lambda pick: pick.choice([b" ", b"\t", b""]) + b'"blank before"' + pick.choice([b"", b" ", b"tail", b'x"y']),
    lambda pick: b"'" + pick.choice([b"a,b", b'x,"y', b"o\\'k", b"", b'"']) + b"'" + pick.choice([b"", b" ", b"z"]),
    lambda pick: pick.choice([b'"never closed', b"'half", b'ab"cd', b'"a"b"c', b'""""', b'"""', b'"\r"', b"\\"]),
]


def random_row(pick: random.Random) -> bytes:
    """A row of one to six values, each of a random kind (weighted towards plain values)."""
    kinds = [0, 0, 1, 1, 2, 3, 4, 5] + ([6] if pick.random() < 0.3 else [])
    return b",".join(VALUES[pick.choice(kinds)](pick) for _ in range(pick.randint(1, 6)))


def random_csv(pick: random.Random) -> bytes:
    """A CSV file: maybe a BOM, blank lines, a header (maybe quoted over two lines), random rows, line
    ends and blank lines, and maybe one line far longer than the others; or a header alone."""
    start = pick.choice([b"", b"", codecs.BOM_UTF8, b"\n", b" \r\n"])
    header = pick.choice([b"id,text", b'"id","te\nxt"', b"a", b"'x,y',z", b'"open'])
    ending = pick.choice(LINE_ENDS)
    if pick.random() < 0.05:
        return start + header + pick.choice([b"", ending])
    rows = []
    for _ in range(pick.randint(0, 60)):
        rows.append(random_row(pick) if pick.random() < 0.9 else pick.choice([b"", b" ", b"\t"]))
        if pick.random() < 0.02:
            rows.append(b"9," + b"x" * pick.randint(40, 400))
    line_end = ending if pick.random() < 0.7 else None
    body = b"".join(row + (line_end or pick.choice(LINE_ENDS)) for row in rows)
    return start + header + ending + (body.removesuffix(line_end or b"") if pick.random() < 0.2 else body)


COUNTS = [1, 2, 3, 4, 7, 16, 1000, 2**63]


@pytest.mark.parametrize("seed", range(12))
def test_the_cuts_of_random_csv_files_are_the_line_walks(tmp_path, monkeypatch, seed):
    pick = random.Random(seed)
    path = tmp_path / "random.csv"
    for _ in range(250):
        bound = pick.choice([None, None, 24, 64, 200])
        monkeypatch.setattr(partitions, "_FIRST_LOOK_BACK", pick.choice([1, 16, 1 << 16]))
        if bound is None:
            monkeypatch.delenv("FILTERKIT_MAX_LINE_BYTES", raising=False)
        else:
            monkeypatch.setenv("FILTERKIT_MAX_LINE_BYTES", str(bound))
        data = random_csv(pick)
        path.write_bytes(data)
        for count in pick.sample(COUNTS, 3):
            assert csv_cuts(str(path), count) == walked_cuts(str(path), count), (data, count, bound)


@pytest.mark.parametrize("seed", range(6))
def test_the_cuts_of_random_bytes_of_csv_punctuation_are_the_line_walks(tmp_path, monkeypatch, seed):
    """Bytes drawn from what the grammar turns on, so that every odd sequence of quotes, backslashes,
    blanks and line ends meets both readings."""
    pick = random.Random(1000 + seed)
    path = tmp_path / "soup.csv"
    alphabet = b'"""\'\',,,\n\n\n\r \t\\ab'
    for _ in range(400):
        monkeypatch.setenv("FILTERKIT_MAX_LINE_BYTES", str(pick.choice([8, 30, 1 << 20])))
        monkeypatch.setattr(partitions, "_FIRST_LOOK_BACK", pick.choice([1, 16, 1 << 16]))
        data = b"h,i\n" + bytes(pick.choice(alphabet) for _ in range(pick.randint(0, 300)))
        path.write_bytes(data)
        for count in (2, 5, 2**63):
            assert csv_cuts(str(path), count) == walked_cuts(str(path), count), (data, count)


def test_the_random_files_reach_what_they_are_meant_to(tmp_path):
    """The generator makes files where quoted line ends, CR line ends and the line bound change the cuts:
    a cut a row falls elsewhere than after each line feed, and some files are one range from the start."""
    pick = random.Random(7)
    path = tmp_path / "random.csv"
    cut_inside_lines = one_range = 0
    for _ in range(300):
        data = random_csv(pick)
        path.write_bytes(data)
        begin, ranges = csv_cuts(str(path), 2**63)
        line_ends = {index + 1 for index, byte in enumerate(data) if byte == ord("\n")}
        cut_inside_lines += len(ranges) > 1 and {start for start, _ in ranges[1:]} < line_ends - {len(data)}
        one_range += (begin, ranges) == (0, [(0, len(data))])
    assert cut_inside_lines > 20 and one_range > 5


def test_the_first_cut_past_a_quoted_value_spanning_the_share_is_after_it(tmp_path):
    rows = [b"1,plain", b'2,"a long value\n' + b"with line feeds\n" * 50 + b'ending here"', b"3,last"]
    path = tmp_path / "spanning.csv"
    path.write_bytes(b"id,text\n" + b"\n".join(rows) + b"\n")
    begin = len(b"id,text\n")
    second_row_end = begin + len(rows[0]) + 1 + len(rows[1]) + 1
    assert csv_cuts(str(path), 2) == (begin, [(begin, second_row_end), (second_row_end, path.stat().st_size)])


def test_a_line_at_the_bound_stops_the_cutting_before_it_one_under_does_not(tmp_path, monkeypatch):
    path = tmp_path / "long.csv"
    path.write_bytes(b"a,b\n" + b"1,2\n" * 10 + b"3," + b"x" * 14 + b"\n" + b"4,5\n" * 10)  # 16 bytes at 44
    monkeypatch.setenv("FILTERKIT_MAX_LINE_BYTES", "16")
    assert csv_cuts(str(path), 4) == (4, [(4, 28), (28, 101)])  # the cut at 61 lies past the line
    monkeypatch.setenv("FILTERKIT_MAX_LINE_BYTES", "17")
    assert csv_cuts(str(path), 4) == (4, [(4, 28), (28, 61), (61, 77), (77, 101)])
