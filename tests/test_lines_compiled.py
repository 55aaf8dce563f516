"""The compiled svmlight reader and writer, CSV row loop and cutter (filterkit/formats/_lines.c) and CSV writer against
the pure-Python ones they replaced, kept here as the oracle: the same rows, the same errors on the same lines, the
same bytes."""

from __future__ import annotations

import codecs
import io
import re

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from filterkit import kernels
from filterkit.arff.writer import EXACT, NumberFormat, format_numbers
from filterkit.errors import ArffError, FilterkitError
from filterkit.formats import FormatOptions
from filterkit.formats.csv_writer import CsvWriter
from filterkit.formats.lines import bounded_lines
from filterkit.formats.records import number_in
from filterkit.formats.svmlight import SvmlightFormat, SvmlightWriter, _refusal
from filterkit.limits import Limits
from filterkit.schema import DATE, NOMINAL, NUMERIC, STRING, Attribute, Chunk, Schema

_NUMBER = (
    rb"[+-]?+(?:(?:[0-9]++\.?+[0-9]*+|\.[0-9]++)(?:[eE][+-]?+[0-9]++)?+"
    rb"|[nN][aA][nN]|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?+)"
)
_ROW = re.compile(rb"[ \t]*+(" + _NUMBER + rb")((?:[ \t]++[0-9]{1,18}+:" + _NUMBER + rb")*+)[ \t]*+")


def oracle_read(data: bytes, limits: Limits = Limits()):
    """The rows as the Python reader read them, a line at a time: (labels, label texts, indptr,
    indices, values, line numbers, comments), or the ArffError's (line, message)."""
    labels, texts, counts, indices, values, numbers, comments = [], [], [0], [], [], [], []
    try:
        for number, line in bounded_lines(io.BytesIO(data), "f", limits):
            line = line.removeprefix(codecs.BOM_UTF8) if number == 1 else line
            text = line.split(b"#", 1)[0].strip()
            if not text:
                if not numbers and line.lstrip().startswith(b"#"):
                    comment = line.lstrip()[1:].decode("utf-8", "replace")
                    comments.append(comment[1:] if comment.startswith(" ") else comment)
                continue
            match = _ROW.fullmatch(text)
            if match is None:
                return number, _refusal(kernels.lines.NOT_A_ROW, number, text, 0, 0)
            if np.isnan(float(match.group(1))):
                return number, "a label is a number, not NaN"
            fields = match.group(2).replace(b":", b" ").split()
            row = [int(index) for index in fields[0::2]]
            for before, after in zip(row, row[1:]):
                if after <= before:
                    return number, (
                        f"index {after} after index {before}: the indices of a row must ascend strictly "
                        "(as load_svmlight_file requires)"
                    )
            labels.append(float(match.group(1)))
            texts.append(match.group(1))
            indices += row
            values += [float(value) for value in fields[1::2]]
            counts.append(len(row))
            numbers.append(number)
    except ArffError as error:
        return error.line, error.message
    return labels, texts, np.cumsum(counts).tolist(), indices, values, numbers, comments


def compiled_read(data: bytes, group_rows: int, limits: Limits = Limits()):
    """The same through SvmlightFormat's groups of ``group_rows`` rows."""
    comments: list[str] = []
    try:
        groups = list(SvmlightFormat(limits)._groups(io.BytesIO(data), "f", group_rows, comments))
    except ArffError as error:
        return error.line, error.message
    assert all(len(group.labels) <= group_rows for group in groups)
    labels, texts, indptr, indices, values, numbers = [], [], [0], [], [], []
    for group in groups:
        labels += group.labels.tolist()
        texts += group.label_texts
        indptr += (group.indptr[1:] + indptr[-1]).tolist()
        indices += group.indices.tolist()
        values += group.values.tolist()
        numbers += group.numbers
    return labels, texts, indptr, indices, values, numbers, comments


def _same(got, expected):
    """Equal, NaN equal to NaN and -0 apart from 0 (as repr tells them)."""
    assert repr(got) == repr(expected)


NUMBERS = [
    "0", "-0", "+1", "1", "01", "1.", ".5", "+.5", "-.5e3", "1e5", "1E-3", "2.5e+10", "1e400", "-1e-400",
    "4.9e-324", "0.1", "123456789012345", "1234567890123456", "12345678901234567890", "0.30000000000000004",
    "9007199254740993", "314.9824630889133194", "3875334047727647.7", "1.7976931348623157e308", "nan", "NaN",
    "-nan", "inf", "-INF", "Infinity", "+infinity", "1" * 30, "0." + "0" * 30 + "1",
]  # fmt: skip
NOT_NUMBERS = ["infinit", "1e", "1e+", ".", "+", "-", "0x1", "1_0", "١", "1.2.3", "e5", ""]
INDICES = ["007", "999999999999999999", "1234567890123456789", "-1", "x", "", "qid"]
#: Floats the writers treat apart (hypothesis's floats draw NaN too rarely to be sure of it).
SPECIAL_FLOATS = [0.0, -0.0, 1.0, 0.1, 2.5e-8, float("nan"), float("inf"), -float("inf"), 1e300]
GAPS = [" ", "\t", "  ", " \t ", "\x0b", "\x0c", ""]


def _mostly(draw, good: list, bad: list):
    """One of ``good``, or now and then one of ``bad``."""
    return draw(st.sampled_from(bad if draw(st.integers(0, 40)) == 0 else good))


@st.composite
def svmlight_text(draw) -> bytes:
    """A few lines, mostly rows, with the odd comment, blank, CRLF or bad token."""
    lines = []
    for _ in range(draw(st.integers(0, 8))):
        kind = _mostly(draw, ["row"] * 6 + ["comment", "blank"], ["odd"])
        if kind == "comment":
            lines.append(draw(st.sampled_from(["# a comment", "#", "  #  two blanks", "# ünïcode"])))
        elif kind == "blank":
            lines.append(draw(st.sampled_from(["", "   ", "\t"])))
        elif kind == "odd":
            lines.append(draw(st.sampled_from(["1,2 1:1", "1 qid:3 1:2", "1 1=2", "x", "1 1:", ":1", "1 :1"])))
        else:
            label = _mostly(draw, NUMBERS, NOT_NUMBERS)
            index = 0
            fields = [label]
            for _ in range(draw(st.integers(0, 6))):
                index += _mostly(draw, [1, 1, 2, 5], [0, -1])
                text = _mostly(draw, [str(max(index, 0))], INDICES)
                value = _mostly(draw, NUMBERS, NOT_NUMBERS)
                fields.append(_mostly(draw, GAPS[:4], GAPS[4:]) + f"{text}:{value}")
            line = draw(st.sampled_from(["", " ", "\t"])) + "".join(fields)
            line += draw(st.sampled_from(["", " ", " # after", "#x", "\t "]))
            lines.append(line)
    ends = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    text = ends.join(lines) + draw(st.sampled_from([ends, ""]))
    return draw(st.sampled_from([b"", b"\xef\xbb\xbf"])) + text.encode()


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(svmlight_text(), st.sampled_from([1, 2, 3, 10_000]))
def test_compiled_reader_reads_as_the_python_reader(data, group_rows):
    _same(compiled_read(data, group_rows), oracle_read(data))


@pytest.mark.parametrize(
    "line",
    [
        b"x 1:2", b"1,2 1:2", b"1 qid:3 1:2", b"1 1=2", b"1 1:two", b"1 -1:2", b"1 3:1 2:1", b"1 2:1 2:1",
        b"nan 1:1", b"nan 2:1 1:1", b"1 1:1_0", b"1 1:1\x0b2:1", b"1 1234567890123456789:1", b"1 1:1 :2",
        b"1 1:1e", b"infinit 1:1", b"1 1:inf 2:nan", b"\xff 1:1", b"1 1:\xc3\xa9", b"1  1:1\t2:2 ",
    ],
)  # fmt: skip
def test_every_grammar_case_reads_or_fails_as_the_python_reader(line):
    data = b"# c\n1 1:1\n\n" + line + b"\n2 2:2 # x\n"
    for group_rows in (1, 2, 10_000):
        _same(compiled_read(data, group_rows), oracle_read(data))


def test_line_bounds_and_first_rows_of_long_files_as_the_python_reader():
    limits = Limits(line_bytes=20, chunk_bytes=30)
    for data in (b"1 1:1\n# " + b"x" * 30 + b"\n", b"1 1:1\n" * 50 + b"2 " + b"1" * 40, b"# c\n" * 3 + b"1 1:1\n"):
        _same(compiled_read(data, 7, limits), oracle_read(data, limits))


@pytest.mark.slow
def test_rows_across_blocks_and_groups_as_the_python_reader():
    data = b"".join(b"%d 1:%d 3:0.%d\n" % (i % 3, i, i) for i in range(100_000))  # 1.5 MB: two blocks
    _same(compiled_read(data, 10_000), oracle_read(data))


def oracle_write(schema: Schema, chunk: Chunk, options: FormatOptions, numbers: NumberFormat) -> bytes:
    """The rows as the Python writer wrote them."""
    writer = SvmlightWriter(io.BytesIO(), schema, [], schema.attributes[-1].name, options, numbers)
    targets = chunk.column(writer.class_index)
    if writer.label_texts is None:
        labels = ["0" if text == "-0" else text for text in format_numbers(targets, numbers)]
    else:
        labels = [writer.label_texts[code] for code in targets.astype(np.int64).tolist()]
    matrix = sp.csr_matrix(chunk.values)
    matrix.sort_indices()
    rows = np.repeat(np.arange(matrix.shape[0]), np.diff(matrix.indptr))
    keep = (matrix.indices != writer.class_index) & (matrix.data != 0)
    texts = ["nan" if text == "?" else text for text in format_numbers(matrix.data[keep], numbers)]
    pairs = [f"{index}:{text}" for index, text in zip(writer.written_index[matrix.indices[keep]].tolist(), texts)]
    bounds = np.searchsorted(rows[keep], np.arange(matrix.shape[0] + 1)).tolist()
    lines = [" ".join([labels[r], *pairs[bounds[r] : bounds[r + 1]]]) + "\n" for r in range(matrix.shape[0])]
    return "".join(lines).encode()


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(
    st.integers(0, 6),
    st.lists(st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from(SPECIAL_FLOATS), max_size=60),
    st.sampled_from([EXACT, NumberFormat(3), NumberFormat(float32=True)]),
    st.booleans(),
    st.sampled_from([None, ("1", "-1"), ("a", "b"), ("1", "1.0")]),
)
def test_compiled_writer_writes_as_the_python_writer(n_features, values, numbers, zero_based, labels):
    n_rows = len(values) // (n_features + 1)
    matrix = np.array(values[: n_rows * (n_features + 1)]).reshape(n_rows, n_features + 1)
    if labels is None:
        matrix[:, -1] = np.where(np.isnan(matrix[:, -1]), 1.5, matrix[:, -1])
        target = Attribute("class", NUMERIC)
    else:
        matrix[:, -1] = np.arange(n_rows) % 2
        target = Attribute("class", NOMINAL, labels=labels)
    attributes = (*(Attribute(f"a{i}", NUMERIC) for i in range(n_features)), target)
    schema = Schema("r", attributes)
    options = FormatOptions(zero_based)
    for chunk in (Chunk(matrix), Chunk(sp.csr_matrix(matrix))):
        out = io.BytesIO()
        SvmlightWriter(out, schema, [], "class", options, numbers).write(chunk)
        assert out.getvalue() == oracle_write(schema, chunk, options, numbers)


def oracle_csv(schema: Schema, chunk: Chunk, numbers: NumberFormat) -> bytes:
    """The rows as the Python CSV writer wrote them (a column of texts at a time)."""
    writer = CsvWriter(io.BytesIO(), schema, numbers)
    dense = chunk.values.toarray() if chunk.is_sparse else np.asarray(chunk.values)
    columns = []
    for column, attribute in enumerate(schema.attributes):
        if attribute.kind == NUMERIC:
            texts = format_numbers(dense[:, column], numbers)
            columns.append([writer._missing if v != v else t for v, t in zip(dense[:, column].tolist(), texts)])
        else:
            columns.append(writer._column_texts(column, dense[:, column], range(len(dense)), chunk))
    lines = [",".join(row) + "\n" for row in zip(*columns)] if columns else ["\n"] * dense.shape[0]
    return "".join(lines).encode()


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from([NUMERIC, NUMERIC, NOMINAL, STRING, DATE]), max_size=4),
    st.lists(st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from(SPECIAL_FLOATS), max_size=40),
    st.sampled_from([EXACT, NumberFormat(3), NumberFormat(float32=True)]),
)
def test_compiled_csv_writer_writes_as_the_python_writer(kinds, values, numbers):
    n_rows = len(values) // max(1, len(kinds)) if kinds else len(values) % 5
    matrix = np.array(values[: n_rows * len(kinds)]).reshape(n_rows, len(kinds))
    attributes, text = [], {}
    for column, kind in enumerate(kinds):
        if kind == NOMINAL:
            attributes.append(Attribute(f"n{column}", NOMINAL, labels=("a", "b,c", '"q"', "?")))
            matrix[:, column] = np.where(np.isnan(matrix[:, column]), np.nan, np.arange(n_rows) % 4)
        elif kind == DATE:
            attributes.append(Attribute(f"d{column}", DATE, date_format="yyyy-MM-dd"))
            matrix[:, column] = np.where(np.isnan(matrix[:, column]), np.nan, 86400000.0 * np.arange(n_rows))
        elif kind == STRING:
            attributes.append(Attribute(f"s{column}", STRING))
            matrix[:, column] = np.where(np.isnan(matrix[:, column]), np.nan, 0)
            text[column] = ["x, y", "", "é", "'q"][:1] * n_rows
        else:
            attributes.append(Attribute(f"x{column}", NUMERIC))
    schema = Schema("r", tuple(attributes))
    for chunk in (Chunk(matrix, text), Chunk(sp.csr_matrix(matrix), text)):
        out = io.BytesIO()
        CsvWriter(out, schema, numbers).write(chunk)
        assert out.getvalue().split(b"\n", 1)[1] == oracle_csv(schema, chunk, numbers)


def test_a_few_rows_of_every_kind_are_written_as_the_python_writer_wrote_them():
    matrix = np.array([[0.5, np.nan, 1.0], [-0.0, np.inf, -1.0], [0.0, 0.0, -0.0], [1e-300, -np.inf, 2.5]])
    numeric = Schema("r", (Attribute("a", NUMERIC), Attribute("b", NUMERIC), Attribute("class", NUMERIC)))
    nominal = Schema("r", (*numeric.attributes[:2], Attribute("class", NOMINAL, labels=("x", "1", "2"))))
    for schema, chunk in ((numeric, Chunk(matrix)), (nominal, Chunk(np.abs(np.nan_to_num(matrix)) % 3 // 1))):
        for numbers in (EXACT, NumberFormat(2)):
            out = io.BytesIO()
            SvmlightWriter(out, schema, [], "class", FormatOptions(), numbers).write(chunk)
            assert out.getvalue() == oracle_write(schema, chunk, FormatOptions(), numbers)


def test_parse_svmlight_names_its_results_and_its_error_codes():
    parsed = kernels.lines.parse_svmlight(b"# c\n1 1:2.5\n2 3:1 2:1\n", 0, 10, 1 << 20, 1 << 20)
    assert parsed["error"] == {
        "what": kernels.lines.DESCENDING,
        "line": 3,
        "text": b"2 3:1 2:1",
        "before": 3,
        "after": 2,
    }
    assert (parsed["stop"], parsed["lines"], parsed["first"], parsed["held"], parsed["too_long"]) == (
        22,
        3,
        4,
        8,
        False,
    )
    assert parsed["label_texts"] == [b"1"]
    assert np.frombuffer(parsed["values"]).tolist() == [2.5]
    assert np.frombuffer(parsed["line_of"], np.int64).tolist() == [1]
    codes = {kernels.lines.NOT_A_ROW, kernels.lines.NAN_LABEL, kernels.lines.DESCENDING}
    assert len(codes) == 3 and 0 not in codes


#: Numbers at the edges of the fast parser's exact case (arff/numbers.h): 15 and 16 significant digits,
#: leading zeros that are not significant, powers of ten of 22 and 23, more digits than a uint64 holds.
EDGE_NUMBERS = [
    "123456789012345",
    "1234567890123456",
    "0.123456789012345",
    "000000000000000000000123.5",
    "0.0000000000000000000001",
    "0.00000000000000000000001",
    "9007199254740993",
    "123456789012345678901234567890.5",
    "18446744073709551617",
    "-0.0",
    "+.5",
    "5.",
    "-00.000",
]


def test_numbers_at_the_edges_of_the_exact_case_read_as_float_reads_them():
    row = b"1 " + b" ".join(b"%d:%s" % (i + 1, number.encode()) for i, number in enumerate(EDGE_NUMBERS)) + b"\n"
    parsed = kernels.lines.parse_svmlight(row, 0, 10, 1 << 20, 1 << 20)
    assert parsed["error"] is None
    expected = np.array([float(number) for number in EDGE_NUMBERS])
    assert parsed["values"] == expected.tobytes()


def test_the_compiled_cutter_reads_every_row_as_the_python_reader_does():
    """``csv_cut`` (filterkit/formats/_lines.c) against ``_fields`` on rows made of the pieces where the two
    could part: quotes of both kinds, doubled quotes, blanks around quoted values, missing and quoted missing
    values, line ends inside quotes, a value left open, another number of values, bytes that are not UTF-8.
    A row the compiled cutter declines is read by ``_fields`` (and a bad one is its error), so every row must
    give the Python reader's values (and numbers) or be declined."""
    import random

    from filterkit.formats import csv as csv_format

    pieces = [
        b"a",
        b"b c",
        b"",
        b"?",
        b" ? ",
        b'"q"',
        b'"q,r"',
        b'"a""b"',
        b' "s" ',
        b'""',
        b'"?"',
        b"'t'",
        b"'Twas",
        b'x"y',
        b'"open',
        b'"z"w',
        b"\t",
        b"\xc3\xa9",
        b"\xff",
        b'"l\nm"',
        b"1.5",
        b"\\",
        b",",
        b'"""',
    ]
    generator = random.Random(7)
    rows = [b",".join(generator.choice(pieces) for _ in range(generator.randint(1, 4))) for _ in range(4000)]
    for width in (1, 2, 3, 4):
        declined = 0
        for row in rows:
            cut = csv_format._plain_group([row], width)
            if cut is None:
                declined += 1
                continue
            fields = csv_format._fields(row.decode("utf-8"))
            assert len(fields) == width, row
            expected = [None if csv_format.reads_missing(text, quoted) else text for text, quoted in fields]
            assert [cut.texts(column)[0] for column in range(width)] == expected, row
            numbers = [dict(cut.distinct(column)[0]).get(text) for column, text in enumerate(expected)]
            assert numbers == [None if text is None else number_in(text) for text in expected], row
        assert declined < len(rows)


def _rows_and_numbers(data: bytes, chunk_rows: int) -> list:
    """The groups of numbered rows the CSV reader finds in ``data``, or the error it names."""
    from filterkit.formats.csv import _row_groups

    try:
        return [(list(rows), numbers) for rows, numbers in _row_groups(io.BytesIO(data), "f", Limits(), chunk_rows)]
    except ArffError as error:
        return [str(error)]


def test_the_compiled_row_loop_finds_the_rows_the_line_by_line_reading_finds():
    """``csv_gather`` against the rows gathered a line at a time (the reading with the compiled parts off), on
    1,000 seeded files of pieces where the two could part: quotes of both kinds (one left open, one closed
    after a line end), escapes, CR and CRLF, blank and white-space rows, a byte-order mark."""
    pieces = [b",", b'"', b"'", b"\n", b"\r\n", b"\r", b" ", b"\t", b"\\", b"a", b"1", b'""', b"\xef\xbb\xbf", b"\x0b"]
    import random

    chooser = random.Random(51)
    for _ in range(1000):
        data = b"".join(chooser.choices(pieces, k=chooser.randint(0, 30)))
        for chunk_rows in (1, 2, 10000):
            compiled = _rows_and_numbers(data, chunk_rows)
            with kernels.compiled(False, kernels.READING):
                assert compiled == _rows_and_numbers(data, chunk_rows), (data, chunk_rows)


@pytest.mark.parametrize(
    "text",
    [b"{0 1,3}\n", b"{0 1,3 4", b"{0 1", b"no space\n", b"{0 1,3 ?", b"{0 1}", b"{0 1}\n{0 2,5"],
)
def test_svmlight_text_refuses_a_row_not_of_the_writer_s_form_without_reading_past_it(text):
    with pytest.raises(ValueError, match="svmlight_text: a row is not"):
        kernels.lines.svmlight_text(text)


def test_svmlight_text_still_turns_the_writer_s_rows_into_svmlight():
    assert kernels.lines.svmlight_text(b"{0 1,3 4,7 ?}\n{0 0}\n") == b"1 3:4 7:nan\n0\n"


def _ends(*ends: int) -> bytes:
    return np.array(ends, dtype=np.int64).tobytes()


def test_rows_too_short_for_their_values_are_declined_before_arrays_are_made():
    """Each row of ``width`` values holds ``width - 1`` commas at least: a group shorter than its values is
    declined at its first row, not given 25 bytes a value first (2 · 10**10 values: a MemoryError before)."""
    assert kernels.lines.csv_cut(b"1\n1", _ends(1, 3), 10**10, b" ")[0] == 0
    declined, numbers, kinds, *_ = kernels.lines.csv_cut(b",\n,", _ends(1, 3), 2, b" ")  # the shortest rows
    assert declined == -1 and len(kinds) == 4


def test_the_compiled_cutter_takes_the_gatherer_s_rows_and_never_finds_row_ends_of_its_own():
    """A row csv_gather joined from two lines (a double quote opened its value) is one row to csv_cut, its line
    end a byte of its values: here three values, declined for _fields to name; before, the cutter re-found rows
    at the line end and read the two halves as two rows."""
    row = b"1,'x,\"y'\nlost words here\""
    assert kernels.lines.csv_cut(row, _ends(len(row)), 2, b" ")[0] == 0
    declined, _, kinds, starts, ends = kernels.lines.csv_cut(b"a\nb,c", _ends(1, 5), 2, b" ")
    assert declined == 0  # the first row holds one value, not two
    with pytest.raises(ValueError, match="rows' ends that ascend"):
        kernels.lines.csv_cut(b"a,b\nc,d", _ends(3, 2), 2, b" ")
    with pytest.raises(ValueError, match="rows' ends that ascend"):
        kernels.lines.csv_cut(b"a,b", _ends(9), 2, b" ")


def _csv_read(data: bytes, chunk_rows: int) -> list:
    """What the CSV reader makes of ``data``: each chunk's values (as text, NaN kept apart) and texts, and the
    header it typed; or the error it names with its line."""
    import tempfile

    from chain_helpers import installed_plugins_once
    from filterkit.plugins import running_registry
    from filterkit.running import open_source

    # the installed formats found once, as a command-line run finds them once: outside a run each lookup
    # searched the entry points afresh (four an opening, 20 ms), 290 s of CPU over the 18,000 openings
    with tempfile.NamedTemporaryFile(suffix=".csv") as handle, running_registry(installed_plugins_once):
        handle.write(data)
        handle.flush()
        try:
            with open_source(handle.name, chunk_rows, needs_passes=False) as source:
                names = [(a.name, a.kind, a.labels) for a in source.schema.attributes]
                chunks = [(np.asarray(chunk.values.todense() if sp.issparse(chunk.values) else chunk.values).tobytes(),
                           sorted(chunk.text.items())) for chunk in source.chunks()]  # fmt: skip
                return [names, *chunks]
        except FilterkitError as error:
            return [error.line, str(error).split(": ", 1)[-1]]


def test_a_single_quoted_value_that_holds_a_comma_and_a_double_quote_keeps_every_row():
    """issue 72's case: rows after a single-quoted value holding ``,"`` were read as fragments of one row and
    lost, exit 0; a file of such rows is read whole, and one whose later row leaves a quote open is an error on
    its line, the same with the compiled reading on or off and at any group size."""
    good = b"id,t\n2,b\n1,'x,\"y'\n3,'a,\"b' \n4,c\n"
    lost = b"id,t\n2,b\n1,'x,\"y'\nlost words here\"\n"
    for chunk_rows in (1, 2, 10_000):
        read = _csv_read(good, chunk_rows)
        assert len(read) - 1 == (4 if chunk_rows == 1 else 2 if chunk_rows == 2 else 1), read
        assert read[0][1] == ("t", "nominal", ("b", 'x,"y', 'a,"b', "c"))
        assert _csv_read(lost, chunk_rows) == [4, "1 values; the header row names 2 columns"]
        with kernels.compiled(False, kernels.READING):
            assert _csv_read(good, chunk_rows) == read
            assert _csv_read(lost, chunk_rows) == [4, "1 values; the header row names 2 columns"]


@pytest.mark.parametrize("count", [150, pytest.param(3000, marks=pytest.mark.slow)])
def test_the_compiled_csv_reading_reads_every_file_as_the_python_reading(count):
    """csv_gather and csv_cut against the reading with the compiled parts off, end to end, on ``count`` seeded files
    of pieces where they could part: quotes of both kinds around commas, line ends and each other, a value left
    open, blank lines, numbers; at one row a group, two, and the whole file (rows joined from several lines at
    a group's start, middle and end).  The same header, chunks and values, or the same error on the same line.
    The short run is in the quick loop, so the sanitized build runs it too (tests/test_sanitizers.py)."""
    import random

    pieces = [
        b",",
        b'"',
        b"'",
        b"\n",
        b"\n",
        b" ",
        b"a",
        b"1",
        b"2.5",
        b'""',
        b"'x,\"y'",
        b"\\",
        b'"p\nq"',
        b"?",
        b"z,",
    ]
    chooser = random.Random(72)
    files = 0
    for _ in range(count):
        width = chooser.randint(1, 3)
        header = b",".join(b"c%d" % k for k in range(width)) + b"\n"
        data = header + b"".join(chooser.choices(pieces, k=chooser.randint(1, 24))) + b"\n"
        for chunk_rows in (1, 2, 10_000):
            compiled = _csv_read(data, chunk_rows)
            with kernels.compiled(False, kernels.READING):
                assert compiled == _csv_read(data, chunk_rows), (data, chunk_rows)
        files += isinstance(compiled[0], list)
    assert 0.03 * count < files < 0.97 * count  # files that read and files that fail, both many


def test_a_wide_csv_file_of_short_rows_is_an_error_naming_its_line(tmp_path):
    from filterkit.running import open_source

    path = tmp_path / "wide.csv"
    path.write_text(",".join(f"a{i}" for i in range(20_000)) + "\n" + "1\n" * 3)
    with pytest.raises(FilterkitError, match="1 values; the header row names 20000 columns") as raised:
        with open_source(str(path), 1000, needs_passes=False) as source:
            list(source.chunks())
    assert raised.value.line == 2
