"""Nothing is written that filterkit refuses to read back, header included (issue 47, item 4).

A written line can be longer than the line it came from: the writer escapes a quoted ``%`` as ``\\%``,
an ``@attribute`` line of ``words`` is longer than the word in its document, and svmlight writes
``INDEX:VALUE`` where ARFF wrote ``VALUE,``.  The writers refuse such a line (one error line, exit 1,
no output file) under the reader's bounds, set small here through ``FILTERKIT_MAX_*`` so the files
stay tiny; whatever they do write reads back under the same bounds.
"""

from __future__ import annotations

import pytest

from filterkit.arff import read_arff
from filterkit.formats import FormatOptions, scanned_format

#: The line bound of these tests: the provenance line (48 bytes) and the inputs' lines fit.
LINE_BYTES = 100


def refused(result, output, *words: str) -> None:
    assert "Traceback" not in result.stderr, result.stderr
    assert result.status == 1 and result.stdout == b"", result.stderr
    assert result.stderr.startswith("filterkit: error: ") and result.stderr.count("\n") == 1, result.stderr
    assert all(word in result.stderr for word in words), result.stderr
    assert not output.exists()


@pytest.fixture
def bounded(monkeypatch):
    monkeypatch.setenv("FILTERKIT_MAX_LINE_BYTES", str(LINE_BYTES))


@pytest.fixture
def percents(tmp_path):
    """A string of 96 ``%``: a 98-byte line read, a 194-byte line written."""
    path = tmp_path / "percents.arff"
    path.write_text("@relation p\n@attribute s string\n@data\n'" + "%" * 96 + "'\n'ab'\n")
    return path


def test_an_identity_rewrite_refuses_a_row_its_escapes_make_too_long(run_filterkit, bounded, percents, tmp_path):
    output = tmp_path / "out.arff"
    refused(
        run_filterkit("-o", output, percents), output, "row 1 of the output", "194 bytes", "FILTERKIT_MAX_LINE_BYTES"
    )
    percents.write_text("@relation p\n@attribute s string\n@data\n'" + "%" * 48 + "'\n'ab'\n")  # 98 bytes written
    assert run_filterkit("-o", output, percents).status == 0
    _, rows = read_arff(output)
    assert rows.text[0] == ["%" * 48, "ab"]


def test_words_refuses_an_attribute_line_longer_than_its_word(run_filterkit, bounded, tmp_path):
    data = tmp_path / "docs.arff"
    data.write_text("@relation d\n@attribute s string\n@attribute c {a,b}\n@data\n'" + "w" * 90 + "',a\n'ab',b\n")
    output = tmp_path / "out.arff"
    refused(run_filterkit("-o", output, data, "words"), output, "header line 5 of the output", "'@attribute www")
    data.write_text("@relation d\n@attribute s string\n@attribute c {a,b}\n@data\n'" + "w" * 70 + "',a\n'ab',b\n")
    assert run_filterkit("-o", output, data, "words").status == 0  # its line: 89 bytes
    schema, _ = read_arff(output)
    assert [a.name for a in schema.attributes] == ["c", "w" * 70, "ab"]


def test_a_header_longer_than_the_header_bound_is_refused(run_filterkit, monkeypatch, tmp_path):
    data = tmp_path / "wide.arff"
    data.write_text(
        "@relation w\n" + "".join(f"@attribute x{k} numeric\n" for k in range(10)) + "@data\n" + "1," * 9 + "1\n"
    )
    size = len(data.read_bytes()) - len("1,") * 10
    monkeypatch.setenv("FILTERKIT_MAX_HEADER_BYTES", str(size + 10))  # the input's header fits; with provenance, not
    output = tmp_path / "out.arff"
    refused(run_filterkit("-o", output, data), output, "bytes of header", "FILTERKIT_MAX_HEADER_BYTES")
    monkeypatch.setenv("FILTERKIT_MAX_HEADER_BYTES", str(size + 100))
    assert run_filterkit("-o", output, data).status == 0
    assert len(read_arff(output)[0]) == 10


def test_svmlight_refuses_a_row_longer_than_its_dense_arff_row(run_filterkit, bounded, tmp_path):
    data = tmp_path / "wide.arff"
    header = "@relation w\n" + "".join(f"@attribute x{k} numeric\n" for k in range(40)) + "@attribute c {a,b}\n@data\n"
    data.write_text(header + "1," * 40 + "a\n" + "0," * 40 + "b\n")  # 82 bytes a row; svmlight: 192
    output = tmp_path / "out.svm"
    refused(run_filterkit("-o", output, data), output, "row 1 of the output", "'0 1:1 2:1")
    data.write_text(header + "1," * 20 + "0," * 20 + "a\n" + "0," * 40 + "b\n")
    assert run_filterkit("-o", output, data).status == 0
    assert read_back(output, "svmlight") == (21, 2)


def test_csv_refuses_a_header_row_longer_than_the_line_bound(run_filterkit, bounded, tmp_path):
    data = tmp_path / "names.arff"
    data.write_text(
        "@relation n\n" + "".join(f"@attribute name{k} numeric\n" for k in range(20)) + "@data\n" + "1," * 19 + "1\n"
    )
    output = tmp_path / "out.csv"
    refused(run_filterkit("-o", output, data), output, "header line 1 of the output", "'name0,name1")
    assert run_filterkit("-o", output, data, "remove", "--range", "11-last").status == 0
    assert read_back(output, "csv") == (11, 1)  # name0 to name9 and the class, name19


def test_csv_bounds_a_row_whole_as_its_reader_does(run_filterkit, bounded, tmp_path):
    """A value of quotes and line ends was written as a row of short lines, longer in all than the bound, which the
    CSV reader (which bounds a row whole, its quoted line ends included) then refused: the writer measured lines."""
    data = tmp_path / "quotes.arff"
    header = "@relation q\n@attribute t string\n@data\n'a\\nb'\n"  # row 1: two lines in CSV
    data.write_text(header + "'" + ('"' * 40 + "\\n") * 2 + "'\n")  # 86 bytes; in CSV 164, its lines 81 at most
    output = tmp_path / "out.csv"
    refused(run_filterkit("-o", output, data), output, "row 2 of the output", "164 bytes", "FILTERKIT_MAX_LINE_BYTES")
    data.write_text(header + "'" + ('"' * 20 + "\\n") * 2 + "'\n")  # in CSV 84 bytes
    assert run_filterkit("-o", output, data).status == 0
    assert read_back(output, "csv") == (1, 2)
    read = run_filterkit(output, "--text", "t", "-o", tmp_path / "back.arff")
    assert read.status == 0, read.stderr
    assert read_arff(tmp_path / "back.arff")[1].text[0] == ["a\nb", ('"' * 20 + "\n") * 2]


def test_json_lines_refuses_a_line_longer_than_the_line_bound(run_filterkit, bounded, tmp_path):
    """Lines of long field names and short values were written past the bound, which the reader then refused: the
    JSON Lines writer checked no line."""
    data = tmp_path / "names.arff"
    names = [f"{'n' * 28}{k}" for k in range(1, 5)]  # a line of 4 fields: 137 bytes
    data.write_text(
        "@relation n\n" + "".join(f"@attribute {name} numeric\n" for name in names) + "@data\n1,2,3,4\n5,6,7,8\n"
    )
    output = tmp_path / "out.jsonl"
    refused(run_filterkit("-o", output, data), output, "row 1 of the output", "137 bytes", "FILTERKIT_MAX_LINE_BYTES")
    data.write_text(
        "@relation n\n" + "".join(f"@attribute {name} numeric\n" for name in names[:2]) + "@data\n1,2\n3,4\n"
    )
    assert run_filterkit("-o", output, data).status == 0  # 2 fields: 69 bytes
    assert read_back(output, "jsonl") == (2, 2)


def read_back(path, format_name: str) -> tuple[int, int]:
    """The attributes and rows filterkit's reader of ``format_name`` finds in ``path`` (under the same bounds)."""
    layout = scanned_format(format_name).scan(lambda: open(path, "rb"), str(path), FormatOptions(), None)
    return len(layout.schema), layout.rows


def test_csv_of_as_many_columns_as_the_attribute_bound_reads_back(run_filterkit, monkeypatch, tmp_path):
    """The CSV reader refused N columns as "more than N" (the ARFF reader takes N attributes)."""
    data = tmp_path / "two.arff"
    data.write_text("@relation t\n@attribute x numeric\n@attribute c {a,b}\n@data\n1,a\n2,b\n")
    output = tmp_path / "two.csv"
    monkeypatch.setenv("FILTERKIT_MAX_ATTRIBUTES", "2")
    assert run_filterkit("-o", output, data).status == 0
    assert read_back(output, "csv") == (2, 2)
    output.write_text("x,y,c\n1,2,a\n")
    result = run_filterkit(output)
    assert result.status == 1 and "more than 2 columns" in result.stderr, result.stderr


LINE_SEPARATORS = ("\x85", "\u2028", "\u2029")


def test_a_text_holding_a_line_separator_of_unicode_is_written_quoted_and_liac_arff_reads_it(run_filterkit, tmp_path):
    """U+0085, U+2028 and U+2029 were written bare: liac-arff (whose patterns' \\s takes them) failed on the file."""
    import json

    import arff

    from filterkit.arff import _speedups, tokens  # type: ignore[attr-defined]

    texts = [f"a{mark}b" for mark in LINE_SEPARATORS]
    names = [f"n{mark}" for mark in LINE_SEPARATORS]
    rows = [
        {**dict(zip(names, texts[k:] + texts[:k])), "s": f"x y{mark}z w {k}"} for k, mark in enumerate(LINE_SEPARATORS)
    ]
    source = tmp_path / "u.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    written = tmp_path / "u.arff"
    result = run_filterkit("-o", written, "--nominal", ",".join(names), source)
    assert result.status == 0, result.stderr
    loaded = arff.load(written.open(encoding="utf-8"))
    assert [name for name, _ in loaded["attributes"]] == [*names, "s"]
    assert loaded["data"] == [[*(row[name] for name in names), row["s"]] for row in rows]
    declared = _speedups.numeric_declarations(names, "numeric").decode()
    assert declared == "".join(f"@attribute {tokens.quote(name)} numeric\n" for name in names)
    assert all(tokens.quote(name).startswith("'") for name in names)
