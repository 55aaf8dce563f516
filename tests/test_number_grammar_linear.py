"""A number token of any length is read or refused in time linear in its length (issue 37, item 1).

The number patterns were matched with backtracking quantifiers: a value of 30,000 digits and an
``x`` took 52 s to refuse in ARFF (each split of the digit run between ``[0-9]+`` and ``[0-9]*``
was tried) and the same in CSV; a 20,000-digit svmlight label ran past a minute.  Each test here
reads one token of N digits ten times and one of 10·N digits once: the same number of characters,
so a linear parse takes about as long for both (less for the long one, which pays the fixed costs
once), and a quadratic one ten times as long.  CPU time, not wall time, and a generous bound.
"""

from __future__ import annotations

import io
import math
import time
import tracemalloc

import pytest

from filterkit.arff import reader
from filterkit.arff.dates import DateFormat
from filterkit.errors import FilterkitError
from filterkit.formats import FormatOptions, scanned_format

SHORT = 1_000
REPEATS = 10  # the short token is read this many times; the long one, REPEATS times as long, once


def cpu_seconds(read, data: bytes, times: int) -> float:
    """The least CPU time of three tries at reading ``data`` ``times`` times (an error is a result)."""
    best = math.inf
    for _ in range(3):
        start = time.process_time()
        for _ in range(times):
            try:
                read(data)
            except FilterkitError:
                pass
        best = min(best, time.process_time() - start)
    return best


def assert_linear(read, document) -> None:
    """Reading ``document(digits)`` takes time linear in the length of ``digits``."""
    short = cpu_seconds(read, document("1" * SHORT), REPEATS)
    long = cpu_seconds(read, document("1" * (SHORT * REPEATS)), 1)
    # generous: linear gives long <= short (fixed costs paid once), quadratic long ~ 10 x short
    assert long < 4 * short, f"{SHORT * REPEATS} digits: {long:.3f} s; {SHORT} digits {REPEATS} times: {short:.3f} s"


def read_arff(data: bytes) -> None:
    reader.read_arff(io.BytesIO(data), name="long")


def read_scanned(format_name: str):
    """A reader of ``format_name`` (csv, svmlight) that scans the bytes and reads every chunk."""

    def read(data: bytes) -> None:
        found = scanned_format(format_name)
        layout = found.scan(lambda: io.BytesIO(data), "long", FormatOptions(), None)
        for _ in found.chunks(io.BytesIO(data), "long", layout, 100):
            pass

    return read


#: Tokens around a run of digits: refused ones that end late (after the digits), and read ones.
TOKENS = {
    "digits-then-x": "{}x",
    "fraction-then-bare-exponent": "1.{}e",
    "exponent-then-x": "1e{}x",
    "hexadecimal-then-x": "0x{}x",
    "hexadecimal-without-exponent": "0x1.{}",
    "digits": "{}",
    "fraction-and-exponent": "1.{}e-{}",
    "hexadecimal": "0x1.{}p1d",
}

ARFF_ROWS = {
    "dense": "@attribute x numeric\n@attribute y numeric\n@data\n1,2\n{},1\n",
    "sparse": "@attribute x numeric\n@attribute y numeric\n@data\n{{0 1}}\n{{0 {}}}\n",
    "quoted": "@attribute x numeric\n@attribute y numeric\n@data\n1,2\n'{}',1\n",
    "weight": "@attribute x numeric\n@data\n1\n1,{{{}}}\n",
}


@pytest.mark.slow
@pytest.mark.parametrize("row", ARFF_ROWS)
@pytest.mark.parametrize("token", TOKENS)
def test_an_arff_number_of_any_length_is_read_or_refused_in_linear_time(row, token):
    template = "@relation r\n" + ARFF_ROWS[row]
    assert_linear(read_arff, lambda digits: template.format(TOKENS[token].format(digits, digits)).encode())


@pytest.mark.parametrize("token", TOKENS)
def test_a_csv_number_of_any_length_is_read_or_refused_in_linear_time(token):
    # CSV types a column by reading each value as a number: a refused one makes it nominal
    assert_linear(read_scanned("csv"), lambda digits: f"x,y\n1,2\n{TOKENS[token].format(digits, digits)},3\n".encode())


SVMLIGHT_TOKENS = {
    "digits-then-x": "{}x",
    "fraction-then-bare-exponent": "1.{}e",
    "exponent-then-x": "1e{}x",
    "digits": "{}",
    "fraction-and-exponent": "1.{}e-{}",
}


@pytest.mark.parametrize("where", ["label", "value", "value-after-pairs"])
@pytest.mark.parametrize("token", SVMLIGHT_TOKENS)
def test_an_svmlight_number_of_any_length_is_read_or_refused_in_linear_time(where, token):
    row = {"label": "{} 1:2\n", "value": "1 1:{}\n", "value-after-pairs": "1 1:1 2:2 3:3 4:{} 5:5\n"}[where]

    def document(digits: str) -> bytes:
        return ("1 1:1\n" + row.format(SVMLIGHT_TOKENS[token].format(digits, digits))).encode()

    assert_linear(read_scanned("svmlight"), document)


class _Sliced(str):
    """A value that counts the characters its slices (and indexed characters) copy."""

    copied = 0

    def __getitem__(self, key):
        part = str.__getitem__(self, key)
        _Sliced.copied += len(part)
        return part


@pytest.mark.parametrize("field, word", [("MMM", "Jan"), ("EEEE", "Monday"), ("z", "GMT+01:00")])
def test_a_date_of_many_fields_is_read_in_linear_time(field, word):
    # each month, weekday or zone field copied the rest of the value: quadratic in the fields
    fields = 3 * SHORT
    value = _Sliced(" ".join([word] * fields))
    _Sliced.copied = 0
    try:
        DateFormat(" ".join([field] * fields)).parse(value)
    except FilterkitError:  # 1970-01-01 is no Monday: refused after every field is read
        pass
    assert _Sliced.copied <= 4 * len(value), _Sliced.copied  # the rest at each field: fields × len(value) / 2


def traced_peak(read, data: bytes) -> int:
    """The peak of the memory Python and numpy allocate while ``read(data)`` runs (after a read
    of all but its last line, which imports what the reader imports lazily)."""
    read(data[: data.rindex(b"\n", 0, -1) + 1])
    tracemalloc.start()
    try:
        read(data)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("where", ["label", "value"])
def test_one_long_svmlight_number_costs_memory_for_its_length_not_for_every_row(where):
    # the rows were parsed as a byte-string array, every cell padded to the longest: 2,000 rows
    # before one 100 kB number took 200 MB
    long = "1" * 100_000
    row = {"label": f"{long} 1:2\n", "value": f"1 1:{long}\n"}[where]
    assert traced_peak(read_scanned("svmlight"), ("1 1:1\n" * 2_000 + row).encode()) < 20 * len(long)


def test_one_long_csv_value_costs_memory_for_its_length_not_for_every_cell_of_its_group():
    # the plain rows were one byte-string table, every cell padded to the longest: 1,000 rows
    # before one 50 kB number took 150 MB
    long = "1" * 50_000
    document = "x,y,z\n" + "1,2,3\n" * 1_000 + f"{long},2,3\n"
    assert traced_peak(read_scanned("csv"), document.encode()) < 20 * len(long)


def test_a_long_number_reads_as_weka_reads_it_and_a_long_non_number_names_its_line():
    # Double.valueOf: 10,000 ones overflow to Infinity; a long fraction rounds correctly
    ones = "1" * 10_000
    _, chunk = reader.read_arff(io.BytesIO(f"@relation r\n@attribute x numeric\n@data\n{ones}\n0.{ones}\n".encode()))
    assert chunk.values[:, 0].tolist() == [math.inf, 0.1111111111111111]
    with pytest.raises(FilterkitError) as caught:
        reader.read_arff(io.BytesIO(f"@relation r\n@attribute x numeric\n@data\n1\n{ones}x\n".encode()), name="f")
    assert caught.value.line == 5
    assert "(10,001 characters) of attribute 'x' is not a number" in str(caught.value)
