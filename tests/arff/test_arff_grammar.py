"""Weka 3.6's grammar for numbers, sparse indices, weights, dates and headers (issue 23).

Each case is a small document with what filterkit must make of it: the rows' values
(NaN for missing) and weights, or a refusal with a fragment of the message.  Every
case is read on every parse path (the compiled module, numpy, the tokenizer forced by a
quoted row in the same chunk, one row a chunk), which must agree.  Then Weka itself
reads every case (tests/arff/WekaProbe.java): it must accept what we accept with the
same values, and refuse what we refuse, except for the decisions listed in STRICTER,
where Weka reads a file filterkit refuses (each is checked to be so).
"""

from __future__ import annotations

import io
import math
import subprocess
from pathlib import Path

import numpy as np
import pytest

from chain_helpers import needs_weka, weka_java
from filterkit import kernels
from filterkit.arff import ArffReader
from filterkit.arff.dates import DateFormat
from filterkit.errors import ArffError

PROBE = Path(__file__).with_name("WekaProbe.java")
NAN = math.nan
INF = math.inf


def refused(fragment: str, line: int | None = None):
    """A refusal whose message holds ``fragment``, at ``line`` (by default the document's last)."""
    return ("refused", fragment, line)


def numeric(value: str) -> str:
    return f"@relation r\n@attribute a numeric\n@data\n{value}\n"


def sparse(index: str) -> str:
    return f"@relation r\n@attribute a numeric\n@attribute b numeric\n@data\n{{{index} 5}}\n"


def weighted(weight: str) -> str:
    return f"@relation r\n@attribute a numeric\n@data\n1,{{{weight}}}\n"


def date(pattern: str, value: str) -> str:
    return f"@relation r\n@attribute a date \"{pattern}\"\n@data\n'{value}'\n"


def millis(*fields) -> float:
    """Milliseconds since 1970 (UTC) of year, month, day[, hour, minute, second, ms]."""
    import datetime as dt

    year, month, day, hour, minute, second, ms = (*fields, 0, 0, 0, 0)[:7]
    moment = dt.datetime(year, month, day, hour, minute, second, tzinfo=dt.timezone.utc)
    return moment.timestamp() * 1000 + ms


def two_digit_year(digits: int) -> int:
    """Java's reading of a two-digit year: the century that puts it within 80 years before today."""
    import datetime as dt

    start = dt.date.today().year - 80
    year = start // 100 * 100 + digits
    return year + 100 if year < start else year


NOT_A_NUMBER = refused("is not a number")
NOT_AN_INDEX = refused("expected an attribute index in a sparse row")
BEYOND = refused("is beyond the 2 attributes")
BAD_WEIGHT = refused("is not a finite number of at least 0")
BAD_DATE = refused("does not match the format")

CASES = {
    # numbers: Java's Double.valueOf, which Weka reads every number with
    "number 1.0": (numeric("1.0"), [[1.0]]),
    "number +1": (numeric("+1"), [[1.0]]),
    "number 1.": (numeric("1."), [[1.0]]),
    "number +.5": (numeric("+.5"), [[0.5]]),
    "number 1d": (numeric("1d"), [[1.0]]),
    "number 1.5F": (numeric("1.5F"), [[1.5]]),
    "number 0.1f": (numeric("0.1f"), [[0.1]]),
    "number 1.5e3d": (numeric("1.5e3d"), [[1500.0]]),
    "number 1e+5f": (numeric("1e+5f"), [[100000.0]]),
    "number 0x1p4": (numeric("0x1p4"), [[16.0]]),
    "number 0X1.8P1": (numeric("0X1.8P1"), [[3.0]]),
    "number -0x.8p-1d": (numeric("-0x.8p-1d"), [[-0.25]]),
    "number 0x1p99999": (numeric("0x1p99999"), [[INF]]),
    "number NaN": (numeric("NaN"), [[NAN]]),
    "number +NaN": (numeric("+NaN"), [[NAN]]),
    "number Infinity": (numeric("Infinity"), [[INF]]),
    "number -Infinity": (numeric("-Infinity"), [[-INF]]),
    "number 1e400": (numeric("1e400"), [[INF]]),
    "number quoted": (numeric("'1.5'"), [[1.5]]),
    "number quoted, blanks": (numeric("' 1.5 '"), [[1.5]]),
    "number quoted, tab": (numeric("'1.5\\t'"), [[1.5]]),
    "number nan": (numeric("nan"), NOT_A_NUMBER),
    "number -nan": (numeric("-nan"), NOT_A_NUMBER),
    "number inf": (numeric("inf"), NOT_A_NUMBER),
    "number Inf": (numeric("Inf"), NOT_A_NUMBER),
    "number infinity": (numeric("infinity"), NOT_A_NUMBER),
    "number Arabic-Indic 3": (numeric("\u0663"), NOT_A_NUMBER),
    "number full-width 3": (numeric("\uff13"), NOT_A_NUMBER),
    "number NBSP before": (numeric("\u00a01"), NOT_A_NUMBER),
    "number NBSP after": (numeric("1\u00a0"), NOT_A_NUMBER),
    "number quoted NBSP": (numeric("'\u00a01'"), NOT_A_NUMBER),
    "number 0x10": (numeric("0x10"), NOT_A_NUMBER),
    "number 0x1p": (numeric("0x1p"), NOT_A_NUMBER),
    "number 1_0": (numeric("1_0"), NOT_A_NUMBER),
    "number 1e": (numeric("1e"), NOT_A_NUMBER),
    "number 1L": (numeric("1L"), NOT_A_NUMBER),
    "number quoted ?": (numeric("'?'"), NOT_A_NUMBER),
    # sparse indices: Integer.parseInt
    "index 1": (sparse("1"), [[0.0, 5.0]]),
    "index +1": (sparse("+1"), [[0.0, 5.0]]),
    "index -0": (sparse("-0"), [[5.0, 0.0]]),
    "index 01": (sparse("01"), [[0.0, 5.0]]),
    "index 5000 zeros then 1": (sparse("0" * 5000 + "1"), [[0.0, 5.0]]),
    "index full-width 1": (sparse("\uff11"), [[0.0, 5.0]]),
    "index quoted": (sparse("'1'"), [[0.0, 5.0]]),
    "index quoted, blank": (sparse("' 1'"), NOT_AN_INDEX),
    "index 1.0": (sparse("1.0"), NOT_AN_INDEX),
    "index 1e0": (sparse("1e0"), NOT_AN_INDEX),
    "index 1.5": (sparse("1.5"), NOT_AN_INDEX),
    "index 0x1": (sparse("0x1"), NOT_AN_INDEX),
    "index superscript 2": (sparse("\u00b2"), NOT_AN_INDEX),
    "index -1": (sparse("-1"), NOT_AN_INDEX),
    "index Arabic-Indic 3": (sparse("\u0663"), BEYOND),
    "index 2147483648": (sparse("2147483648"), BEYOND),
    "index of 5001 digits": (sparse("1" + "0" * 5000), BEYOND),
    # instance weights
    "weight 0": (weighted("0"), ([[1.0]], [0.0])),
    "weight -0": (weighted("-0"), ([[1.0]], [0.0])),
    "weight 0.5": (weighted("0.5"), ([[1.0]], [0.5])),
    "weight 2d": (weighted("2d"), ([[1.0]], [2.0])),
    "weight quoted": (weighted("'2'"), ([[1.0]], [2.0])),
    "weight -1": (weighted("-1"), BAD_WEIGHT),
    "weight NaN": (weighted("NaN"), BAD_WEIGHT),
    "weight Infinity": (weighted("Infinity"), BAD_WEIGHT),
    "weight 1e400": (weighted("1e400"), BAD_WEIGHT),
    "weight nan": (weighted("nan"), NOT_A_NUMBER),
    "weight ?": (weighted("?"), NOT_A_NUMBER),
    # dates: SimpleDateFormat, not lenient
    "date plain": (date("yyyy-MM-dd HH:mm:ss", "2020-01-01 23:59:59"), [[millis(2020, 1, 1, 23, 59, 59)]]),
    "date short fields": (date("yyyy-MM-dd HH:mm:ss", "2020-1-1 1:2:3"), [[millis(2020, 1, 1, 1, 2, 3)]]),
    "date Arabic-Indic year": (date("yyyy-MM-dd", "\u0662\u0660\u0662\u0660-01-01"), [[millis(2020, 1, 1)]]),
    "date superscript year": (date("yyyy-MM-dd", "\u00b2020-01-01"), BAD_DATE),
    "date hour 24": (date("yyyy-MM-dd HH:mm:ss", "2020-01-01 24:00:00"), BAD_DATE),
    "date hour 25": (date("yyyy-MM-dd HH:mm:ss", "2020-01-01 25:00:00"), BAD_DATE),
    "date minute 61": (date("yyyy-MM-dd HH:mm:ss", "2020-01-01 23:61:00"), BAD_DATE),
    "date second 60": (date("yyyy-MM-dd HH:mm:ss", "2020-01-01 23:59:60"), BAD_DATE),
    "date February 30": (date("yyyy-MM-dd", "2020-02-30"), BAD_DATE),
    "date signed year": (date("yyyy-MM-dd", "+2020-01-01"), BAD_DATE),
    "date ms 999": (date("yyyy-MM-dd HH:mm:ss.SSS", "2020-01-01 00:00:00.999"), [[millis(2020, 1, 1, 0, 0, 0, 999)]]),
    "date ms 1000": (date("yyyy-MM-dd HH:mm:ss.SSS", "2020-01-01 00:00:00.1000"), BAD_DATE),
    "date 13:00 PM": (date("yyyy-MM-dd hh:mm a", "2020-01-01 13:00 PM"), BAD_DATE),
    "date 00:00 AM": (date("yyyy-MM-dd hh:mm a", "2020-01-01 00:00 AM"), BAD_DATE),
    "date 12:00 AM": (date("yyyy-MM-dd hh:mm a", "2020-01-01 12:00 AM"), [[millis(2020, 1, 1)]]),
    "date 12:00 PM": (date("yyyy-MM-dd hh:mm a", "2020-01-01 12:00 PM"), [[millis(2020, 1, 1, 12)]]),
    "date 11:00 pm": (date("yyyy-MM-dd hh:mm a", "2020-01-01 11:00 pm"), [[millis(2020, 1, 1, 23)]]),
    "date k 24": (date("yyyy-MM-dd kk:mm", "2020-01-01 24:00"), [[millis(2020, 1, 1)]]),
    "date k 00": (date("yyyy-MM-dd kk:mm", "2020-01-01 00:00"), BAD_DATE),
    "date K 00 PM": (date("yyyy-MM-dd KK:mm a", "2020-01-01 00:00 PM"), [[millis(2020, 1, 1, 12)]]),
    "date K 12 PM": (date("yyyy-MM-dd KK:mm a", "2020-01-01 12:00 PM"), BAD_DATE),
    "date right weekday": (date("EEE, yyyy-MM-dd", "Wed, 2020-01-01"), [[millis(2020, 1, 1)]]),
    "date wrong weekday": (date("EEE, yyyy-MM-dd", "Mon, 2020-01-01"), BAD_DATE),
    "date zone +0100": (date("yyyy-MM-dd HH:mm Z", "2020-01-01 00:00 +0100"), [[millis(2020, 1, 1) - 3_600_000]]),
    "date zone +2400": (date("yyyy-MM-dd HH:mm Z", "2020-01-01 00:00 +2400"), BAD_DATE),
    "date zone +0160": (date("yyyy-MM-dd HH:mm Z", "2020-01-01 00:00 +0160"), BAD_DATE),
    "date year 10000": (date("yyyy-MM-dd", "10000-01-01"), BAD_DATE),
    # one y reads exactly two digits in the two-digit window, as yy does; other counts of digits are the year
    "date y, 99": (date("y-M-d", "99-1-1"), [[millis(1999, 1, 1)]]),
    "date y, 01": (date("y-M-d", "01-1-1"), [[millis(2001, 1, 1)]]),
    "date y, 1999": (date("y-M-d", "1999-1-1"), [[millis(1999, 1, 1)]]),
    "date d/M/y, 50": (date("d/M/y", "1/1/50"), [[millis(two_digit_year(50), 1, 1)]]),
    # '' is a quote mark, inside a quoted literal or outside one
    "date quote in a literal": (
        date("yyyy-MM-dd 'at' HH 'o''clock'", "2020-01-02 at 05 o\\'clock"),
        [[millis(2020, 1, 2, 5)]],
    ),
    "date quote in a literal, left out": (date("yyyy-MM-dd 'at' HH 'o''clock'", "2020-01-02 at 05 oclock"), BAD_DATE),
    "date quote outside a literal": (date("yyyy''MM", "2020\\'03"), [[millis(2020, 3, 1)]]),
    # headers
    "header without attributes": ("@relation r\n@data\n", refused("the header declares no attribute")),
    "header without attributes, rows": ("@relation r\n@data\n1\n", refused("the header declares no attribute", 2)),
    "header empty nominal": ("@relation r\n@attribute a {}\n@data\n?\n", [[NAN]]),
    "header extra after numeric": ("@relation r\n@attribute a numeric extra\n@data\n1\n", refused("unknown type", 2)),
    "header extra after date": ("@relation r\n@attribute a date 'yyyy' extra\n@data\n?\n", refused("unknown type", 2)),
    "header extra after string": ("@relation r\n@attribute a string extra\n@data\n?\n", refused("unknown type", 2)),
    "header date letter w": (
        "@relation r\n@attribute a date 'yyyy-ww'\n@data\n?\n",
        refused("'w' is not supported", 2),
    ),
    "header comma before type": ("@relation r\n@attribute a,numeric\n@data\n1\n", [[1.0]]),
    "header name differs in case": (
        "@relation r\n@attribute A numeric\n@attribute a numeric\n@data\n1,2\n",
        [[1.0, 2.0]],
    ),
    "header no relation name": ("@relation\n@attribute a numeric\n@data\n1\n", refused("@relation takes one name", 1)),
    "header label list not closed": ("@relation r\n@attribute a {x,y\n@data\nx\n", refused("has no closing", 2)),
}

#: Files Weka 3.6 reads that filterkit refuses, on purpose (README, "## ARFF").
STRICTER = {
    "weight -1": "a negative weight",
    "weight NaN": "Weka reads {NaN} as the weight 1",
    "weight Infinity": "an infinite weight",
    "weight 1e400": "an infinite weight",
    "date year 10000": "years are 1 to 9999",
    "header extra after numeric": "text after a type is not ignored",
    "header extra after date": "text after a type is not ignored",
    "header extra after string": "text after a type is not ignored",
    "header date letter w": "date pattern letters beyond y M d H k K h m s S a E z Z X are refused",
}


@pytest.mark.parametrize(
    ("pattern", "text", "written"),
    [
        ("y-M-d", "99-1-1", "1999-1-1"),
        ("d/M/y", "1/1/05", "1/1/2005"),
        ("yy-M-d", "99-1-1", "99-1-1"),
        ("yyyy-MM-dd 'at' HH 'o''clock'", "2020-01-02 at 05 o'clock", "2020-01-02 at 05 o'clock"),
        ("yyyy''MM", "2020'03", "2020'03"),
    ],
)
def test_a_date_is_written_as_java_writes_it(pattern, text, written):
    # as Weka writes these (java -cp weka.jar weka.filters.AllFilter): the whole year for one y, the quote marks kept
    date_format = DateFormat(pattern)
    assert date_format.format(date_format.parse(text)) == written


def read_case(document: str, path: str):
    """What filterkit makes of ``document`` on one parse path: ('ok', rows, weights) or ('refused', line, message)."""
    chunk_rows = 1 if path == "one row a chunk" else 10_000
    try:
        with (
            kernels.compiled(path != "tokenizer", kernels.READING),
            ArffReader(io.BytesIO(document.encode("utf-8")), "case", chunk_rows) as source,
        ):
            chunks = list(source.chunks())
    except ArffError as error:
        return "refused", error.line, error.message
    rows = [row for chunk in chunks for row in chunk.dense_values().tolist()]
    weights = [
        w for chunk in chunks for w in (chunk.weights.tolist() if chunk.weights is not None else [1.0] * chunk.n_rows)
    ]
    return "ok", rows, weights


def assert_expected(name: str, found) -> None:
    document, expected = CASES[name]
    if isinstance(expected, tuple) and expected[0] == "refused":
        assert found[0] == "refused", f"{name}: read as {found}"
        assert expected[1] in found[2], found
        assert found[1] == (expected[2] or document.count("\n")), found
        return
    rows, weights = expected if isinstance(expected, tuple) else (expected, [1.0] * len(expected))
    assert found[0] == "ok", f"{name}: {found}"
    np.testing.assert_array_equal(np.array(found[1]), np.array(rows))
    assert found[2] == weights


PATHS = ["compiled", "tokenizer", "one row a chunk"]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("name", list(CASES))
def test_every_parse_path_reads_or_refuses_as_weka_does(name, path):
    assert_expected(name, read_case(CASES[name][0], path))


# --------------------------------------------------------------------------
# Weka itself


def _weka_values(text: str) -> list[float]:
    return [NAN if value == "?" else float(value) for value in text.split(",")]


@pytest.fixture(scope="module")
def weka_readings(tmp_path_factory):
    """Weka's reading of every case: name -> ('ok', rows, weights) or ('refused', message)."""
    folder = tmp_path_factory.mktemp("weka-grammar")
    files = {}
    for position, (name, (document, _)) in enumerate(CASES.items()):
        path = folder / f"case{position}.arff"
        path.write_text(document, encoding="utf-8")
        files[str(path)] = name
    completed = subprocess.run(
        [*weka_java(PROBE, "-Duser.timezone=UTC"), *files],
        capture_output=True,
        text=True,
        timeout=600,
        encoding="utf-8",
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    readings = {}
    for line in completed.stdout.splitlines():
        path, result = line.split("\t", 1)
        if result.startswith("ERR "):
            readings[files[path]] = ("refused", result[4:])
            continue
        rows = [row.strip().rsplit(" w=", 1) for row in result[2:].split("|")[1:]]
        readings[files[path]] = ("ok", [_weka_values(values) for values, _ in rows], [float(w) for _, w in rows])
    assert len(readings) == len(CASES)
    return readings


@needs_weka
@pytest.mark.parametrize("name", list(CASES))
def test_weka_reads_each_case_as_we_do(name, weka_readings):
    weka = weka_readings[name]
    if name in STRICTER:
        assert weka[0] == "ok", f"Weka now refuses {name!r}: {weka}"
        return
    document, expected = CASES[name]
    if isinstance(expected, tuple) and expected[0] == "refused":
        assert weka[0] == "refused", f"Weka reads {name!r} as {weka}"
        return
    assert weka[0] == "ok", f"Weka refuses {name!r}: {weka[1]}"
    rows, weights = expected if isinstance(expected, tuple) else (expected, [1.0] * len(expected))
    np.testing.assert_array_equal(np.array(weka[1]), np.array(rows))
    assert weka[2] == weights
