"""CSV as RFC 4180 writes it: filterkit's CSV read back by Python's csv module, pandas and
filterkit itself; one grammar whatever ``--chunk-rows``; an output name that says another format."""

from __future__ import annotations

import io
import random
from pathlib import Path

import numpy as np
import pytest

import filterkit
from filterkit import kernels
from filterkit.arff import read_arff
from filterkit.testing import run_filterkit

IRIS = Path(filterkit.__file__).parent / "data" / "iris.arff"

#: Chunk sizes that put a chunk boundary at every row, at every other row and nowhere.
CHUNK_ROWS = ("1", "2", "3", "10000")


def _filterkit(*args, stdin: bytes = b"") -> bytes:
    result = run_filterkit(*args, stdin=stdin)
    assert result.status == 0, result.stderr
    return result.stdout


def _read_csv(data: bytes, *args: str, chunk_rows: str = "10000") -> bytes:
    return _filterkit("-", "--from", "csv", "--chunk-rows", chunk_rows, *args, stdin=data)


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(b'a,b\nx\0,1\n"y",2\nx,3\n', id="nul-in-a-plain-chunk"),
        pytest.param(b"a,b\nx\0,1\ny,2\nx,3\n\0,4\n", id="nul-in-every-chunk"),
    ],
)
def test_the_same_bytes_whatever_the_chunk_rows(data):
    outputs = {chunk_rows: _read_csv(data, chunk_rows=chunk_rows) for chunk_rows in CHUNK_ROWS}
    assert len(set(outputs.values())) == 1, outputs


@pytest.mark.slow
def test_random_files_give_the_same_bytes_whatever_the_chunk_rows():
    """100 seeded files of two columns whose cells hold commas, both quotes, line ends, NULs,
    blanks, numbers and BOMs: the same exit status, output and error at every chunk size."""
    pieces = [b",", b'"', b"'", b"\n", b"\r", b"\0", b" ", b"?", b"1", b"2.5", b"e", b"a", b"\\", b"\xef\xbb\xbf"]
    chooser = random.Random(37)
    for _ in range(100):
        cells = [
            b"".join(chooser.choices(pieces, k=chooser.choice([0, 1, 1, 2, 3])))
            for _ in range(2 * chooser.randint(1, 8))
        ]
        rows = [b"a,b"] + [cells[at] + b"," + cells[at + 1] for at in range(0, len(cells), 2)]
        data = b"".join(row + chooser.choice([b"\n", b"\r\n", b"\r"]) for row in rows)
        runs = {
            size: run_filterkit("-", "--from", "csv", "--chunk-rows", size, "--to", "csv", stdin=data)
            for size in CHUNK_ROWS
        }
        assert len({(run.status, run.stdout, run.stderr) for run in runs.values()}) == 1, (data, runs)


@pytest.mark.parametrize(
    "data, labels",
    [
        (b'a,b\nx\0,1\n"y",2\nx,3\n', ("x\0", "y", "x")),
        (b"a,b\nx\0,1\ny,2\nx,3\n\0,4\n", ("x\0", "y", "x", "\0")),
    ],
)
def test_a_nul_is_part_of_a_value_on_every_path(data, labels):
    """As the ARFF reader reads it: ``x\\0`` is a label of its own, not ``x``, and ``\\0`` is no missing value."""
    for chunk_rows in CHUNK_ROWS:
        schema, chunk = read_arff(io.BytesIO(_read_csv(data, chunk_rows=chunk_rows)))
        assert schema.attributes[0].labels == labels
        np.testing.assert_array_equal(chunk.dense_values()[:, 0], range(len(labels)))


#: Each row's texts as written: None is a missing value, "?" and "" are text.
ROWS = [
    ["Smith, John", "a,b", "1.5", "2020-01-02 03:04"],
    ["?", "?", None, None],
    ["", "", "-2", "2020-01-02 03:04"],
    [None, " ", "3", "2021-12-31 23:59"],
    ['say "hi"', "two\nlines", "4", None],
    ["'quoted'", " 'x", "5", "2020-01-02 03:04"],
    ["back\\slash, x", "C:\\dir\\", "6", "2020-01-02 03:04"],
    ["line\n\nbreaks,\n", '"', "7", "2020-01-02 03:04"],
]
HEADER = ["name, first", "kind", "n", "when"]


def _arff_text(text: str | None) -> str:
    if text is None:
        return "?"
    escaped = text.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n")
    return f"'{escaped}'"


def _arff() -> bytes:
    """ROWS as ARFF: a string, a nominal, a numeric and a date attribute."""
    labels = ",".join(dict.fromkeys(_arff_text(row[1]) for row in ROWS if row[1] is not None))
    lines = [
        "@relation people",
        "@attribute 'name, first' string",
        f"@attribute kind {{{labels}}}",
        "@attribute n numeric",
        "@attribute when date 'yyyy-MM-dd HH:mm'",
        "@data",
        *(
            ",".join(_arff_text(text) if column != 2 else text or "?" for column, text in enumerate(row))
            for row in ROWS
        ),
    ]
    return ("\n".join(lines) + "\n").encode("utf-8")


def test_python_csv_module_reads_every_value_back():
    """Missing is an empty cell; "?" and "" are quoted, so they are text wherever quotes are seen."""
    import csv

    written = _filterkit("-", "--to", "csv", stdin=_arff())
    assert written.splitlines()[:3] == [
        b'"name, first",kind,n,when',
        b'"Smith, John","a,b",1.5,2020-01-02 03:04',
        b'"?","?",,',
    ]
    rows = list(csv.reader(io.StringIO(written.decode("utf-8"), newline="")))
    assert rows == [HEADER] + [["" if text is None else text for text in row] for row in ROWS]


def test_pandas_reads_every_value_back():
    pandas = pytest.importorskip("pandas")
    written = _filterkit("-", "--to", "csv", stdin=_arff())
    exact = pandas.read_csv(io.BytesIO(written), dtype=str, keep_default_na=False)
    assert exact.columns.tolist() == HEADER
    assert exact.to_numpy().tolist() == [["" if text is None else text for text in row] for row in ROWS]
    default = pandas.read_csv(io.BytesIO(written))
    assert default["n"].tolist()[:3] == [1.5, pytest.approx(np.nan, nan_ok=True), -2.0]
    assert default["kind"].tolist()[1] == "?"  # the label ?, not a missing value
    assert default["name, first"].isna().tolist() == [text in (None, "") for text in (row[0] for row in ROWS)]


def test_filterkit_reads_every_value_back_whatever_the_chunk_rows():
    """Each text comes back as written, missing values missing: the two columns of mostly distinct
    values with white space as strings (the record formats' text rule), the dates as labels (CSV
    has no other types); CSV to CSV is the same bytes."""
    written = _filterkit("-", "--to", "csv", stdin=_arff())
    for chunk_rows in CHUNK_ROWS:
        assert _read_csv(written, "--to", "csv", chunk_rows=chunk_rows) == written
        schema, chunk = read_arff(io.BytesIO(_read_csv(written, chunk_rows=chunk_rows)))
        assert [a.name for a in schema.attributes] == HEADER
        assert [a.kind for a in schema.attributes] == ["string", "string", "numeric", "nominal"]
        values = chunk.dense_values()
        for number, (row, expected) in enumerate(zip(values.tolist(), ROWS, strict=True)):
            texts = [
                None
                if value != value
                else chunk.text[column][number]
                if a.kind == "string"
                else str(value)
                if a.is_numeric
                else a.labels[int(value)]
                for column, (value, a) in enumerate(zip(row, schema.attributes))
            ]
            assert texts == [
                text if column != 2 or text is None else str(float(text)) for column, text in enumerate(expected)
            ]


def test_a_missing_value_alone_on_its_row_is_a_question_mark():
    """In a file of one column an empty cell would be a blank line, which readers skip."""
    written = _filterkit("-", "--to", "csv", stdin=b"@relation r\n@attribute a {x,'?',''}\n@data\nx\n?\n'?'\n''\n")
    assert written == b'a\nx\n?\n"?"\n""\n'
    schema, chunk = read_arff(io.BytesIO(_read_csv(written)))
    assert schema.attributes[0].labels == ("x", "?", "")
    np.testing.assert_array_equal(chunk.dense_values()[:, 0], [0, np.nan, 1, 2])


def test_a_line_end_inside_a_quoted_value_is_read_as_lf():
    """As every line end filterkit reads: CR and CRLF inside a value become LF."""
    schema, _ = read_arff(io.BytesIO(_read_csv(b'a,b\r\n"x\r\ny",1\r\n"p\rq",2\r\n', "--nominal", "a")))
    assert schema.attributes[0].labels == ("x\ny", "p\nq")


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(b'a,b\n"x\n\ny,z",1\nw,2\n"1\n",3\n', id="quoted-line-ends"),
        pytest.param(b'a,b\n"x\ny","1\n2"\n"p","q"\n', id="two-quoted-values-on-one-line"),
        pytest.param(b"\xef\xbb\xbfa,b\r1,x\r\r2,y\r", id="bom-and-cr"),
        pytest.param(b'a,b\r\n1,x\r\n\r\n2,"y"\r\n', id="crlf"),
    ],
)
def test_rows_spanning_lines_give_the_same_bytes_whatever_the_chunk_rows(data):
    outputs = {_read_csv(data, "--to", "csv", chunk_rows=chunk_rows) for chunk_rows in CHUNK_ROWS}
    assert len(outputs) == 1, outputs


def test_a_row_spanning_lines_counts_as_one_row_and_later_lines_keep_their_numbers():
    result = run_filterkit("-", "--from", "csv", stdin=b'a,b\n"x\ny",1\nz,2,3\n')
    assert (result.status, result.stderr) == (
        1,
        "filterkit: error: <stdin>:4: 3 values; the header row names 2 columns\n",
    )
    schema, chunk = read_arff(io.BytesIO(_read_csv(b'a,b\n"x\ny",1\nz,2\n', "--nominal", "a")))
    assert schema.attributes[0].labels == ("x\ny", "z")
    assert chunk.n_rows == 2


def test_an_unclosed_double_quote_names_the_line_it_opens_on(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_bytes(b'a,b\n1,x\n2,"y\n3,z\n')
    out = tmp_path / "out.arff"
    result = run_filterkit(path, "-o", out)
    assert (result.status, result.stderr) == (
        1,
        f"filterkit: error: {path}:3: value 2: a quote that does not end the value (or never closes)\n",
    )
    assert not out.exists()


def test_a_quoted_value_spanning_lines_is_bounded_as_a_line_is(monkeypatch):
    monkeypatch.setenv("FILTERKIT_MAX_LINE_BYTES", "100")
    result = run_filterkit("-", "--from", "csv", stdin=b'a,b\n1,"' + b"0123456789\n" * 20 + b'"\n')
    assert (result.status, result.stderr) == (
        1,
        "filterkit: error: <stdin>:2: a row longer than 100 bytes: refused "
        "(set FILTERKIT_MAX_LINE_BYTES to allow more)\n",
    )


def _quoted_across_blocks() -> bytes:
    """A CSV file of a little more than the reader's 1 MiB blocks whose rows hold double-quoted values with
    line ends, doubled quotes and commas, one of them across the first block's end, and single-quoted ones."""
    rows = [b"id,text,n"]
    size = 0
    k = 0
    while size < (1 << 20) + 50_000:
        text = b'"line %d\nsaid ""hi"", then\r\nmore"' % k if k % 3 else b"'w %d, x'" % k
        row = b"%d,%s,%d.5" % (k, text, k % 7)
        rows.append(row)
        size += len(row) + 2
        k += 1
    return b"\r\n".join(rows) + b"\r\n"


def test_quoted_values_across_blocks_and_chunks_read_as_the_line_by_line_reading_reads_them(tmp_path):
    """The same bytes at every chunk size, with the compiled reading and without it, where quoted values with
    line ends and quotes cross the reader's blocks and the chunks' ends; CRLF inside a value is LF."""
    path = tmp_path / "long.csv"
    path.write_bytes(_quoted_across_blocks())
    expected = _filterkit(path, "--text", "text", "--to", "csv")
    with kernels.compiled(False, kernels.READING):
        assert _filterkit(path, "--text", "text", "--to", "csv") == expected
    for chunk_rows in ("1", "7", "1000"):
        assert _filterkit(path, "--text", "text", "--to", "csv", "--chunk-rows", chunk_rows) == expected
    _, chunk = read_arff(io.BytesIO(_filterkit(path, "--text", "text")))
    assert chunk.text[1][:2] == ["w 0, x", 'line 1\nsaid "hi", then\nmore']


@pytest.mark.parametrize("chunk_rows", CHUNK_ROWS)
def test_a_value_that_is_no_number_in_a_numeric_column_names_its_line(chunk_rows):
    """Lines after a value with line ends keep their numbers; the error is the line-by-line reading's."""
    data = b'a,b\r\n"x\r\ny",1\r\n"p",2e3\r\n\r\nq,0x1p3\r\nr,1f\r\ns, 4 \r\nt,4,\r\n'
    expected = "filterkit: error: <stdin>:9: 3 values; the header row names 2 columns\n"
    assert run_filterkit("-", "--from", "csv", "--chunk-rows", chunk_rows, stdin=data).stderr == expected
    data = data.replace(b",\r\n", b"\r\n").replace(b"r,1f", b"r,1 f")
    for compiled in (True, False):
        with kernels.compiled(compiled, kernels.READING):
            result = run_filterkit(
                "-", "--from", "csv", "--nominal", "a", "--numeric", "b", "--chunk-rows", chunk_rows, stdin=data
            )
        assert (result.status, result.stderr) == (
            1,
            "filterkit: error: <stdin>:7: value '1 f' of 'b' is not a number\n",
        )


def test_numbers_in_every_form_java_reads_give_the_same_values_compiled_or_not():
    """Plain decimals are read by the compiled cutter; hexadecimal, suffixes, NaN, Infinity, blanks around and
    quoted numbers by Python: the same values either way, at every chunk size."""
    data = b'a,b\n1,x\n"2.50",y\n 3 ,z\n0x1p3,x\n1e400,y\n-0,z\nNaN,x\n-Infinity,y\n2d,z\n.5e-3,x\n?,y\n,z\n'
    outputs = set()
    for compiled in (True, False):
        with kernels.compiled(compiled, kernels.READING):
            outputs |= {_read_csv(data, chunk_rows=chunk_rows) for chunk_rows in CHUNK_ROWS}
    assert len(outputs) == 1
    _, chunk = read_arff(io.BytesIO(outputs.pop()))
    np.testing.assert_array_equal(
        chunk.dense_values()[:, 0], [1, 2.5, 3, 8, np.inf, -0.0, np.nan, -np.inf, 2, 0.0005, np.nan, np.nan]
    )


#: The format each output name says (None: no format, so --to decides).
NAMED = {".arff": "arff", ".svm": "svmlight", ".svmlight": "svmlight", ".libsvm": "svmlight", ".csv": "csv"}
NAMED |= {".csv.gz": "csv", ".SVM.gz": "svmlight", ".txt": None}
TO = {"arff": "arff", "svmlight": "svmlight", "libsvm": "svmlight", "svm": "svmlight", "csv": "csv"}


@pytest.mark.parametrize("suffix", NAMED)
@pytest.mark.parametrize("to", TO)
def test_an_output_named_as_another_format_is_a_usage_error(tmp_path, suffix, to):
    """``-o out.arff --to csv`` would leave CSV that every reader takes for ARFF: refused before any work."""
    out = tmp_path / f"out{suffix}"
    result = run_filterkit(IRIS, "-o", out, "--to", to)
    if NAMED[suffix] in (None, TO[to]):
        assert (result.status, result.stderr) == (0, "")
        assert out.exists()
    else:
        message = f"Error: -o {out} is named as {NAMED[suffix]}, but --to {to} writes {TO[to]}: rename it or drop --to"
        assert (result.status, result.stderr.splitlines()[-1]) == (2, message)
        assert not out.exists()


def test_apply_and_the_dask_engine_refuse_an_output_named_as_another_format(tmp_path):
    model = tmp_path / "m.json"
    _filterkit("--save-model", model, IRIS, "minmax", "-o", tmp_path / "train.arff")
    for args in (["apply", model, IRIS], [IRIS, "--engine", "dask"]):
        out = tmp_path / "out.csv"
        result = run_filterkit(*args, "-o", out, "--to", "arff")
        assert result.status == 2
        assert (
            result.stderr.splitlines()[-1]
            == f"Error: -o {out} is named as csv, but --to arff writes arff: rename it or drop --to"
        )
        assert not out.exists()
