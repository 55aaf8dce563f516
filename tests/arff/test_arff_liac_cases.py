"""liac-arff's header-line, data-row and value-conversion cases, judged by Weka 3.6.

Each case of tests/data/conformance/liac-arff/*.jsonl is parsed as a whole ARFF
document.  liac-arff's expectation ("expect": a value or "error") is used where
Weka 3.6.14 agrees; where Weka reads a document liac-arff rejects (or reads a
different value), we follow Weka and the value Weka read is written out below.
"""

from __future__ import annotations

import io
import json
import math

import pytest

from arff_helpers import CONFORMANCE
from filterkit.arff import read_arff
from filterkit.errors import ArffError
from filterkit.schema import NOMINAL, STRING

CASES = CONFORMANCE / "liac-arff"


def _load(name):
    return [json.loads(line) for line in (CASES / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def _read(document: str):
    return read_arff(io.BytesIO(document.encode("utf-8")), name="case")


def _weka_reads(case) -> bool:
    return case["observed"]["weka-3.6.14"].startswith("OK")


# --------------------------------------------------------------------------
# header lines (liac-arff's cases are single lines: we wrap each in a document)

HEADER_CASES = _load("header_line_cases.jsonl")


def _header_document(case) -> tuple[str, int]:
    """A document holding the case's line, and that line's number."""
    if case["kind"] == "relation":
        return case["line"] + "\n@attribute a numeric\n@data\n1\n", 1
    if case["kind"] == "attribute":
        return "@relation r\n" + case["line"] + "\n@data\n", 2
    return case["line"] + "\n@relation r\n@attribute a numeric\n@data\n1\n", 1


@pytest.mark.parametrize("case", HEADER_CASES, ids=lambda c: c["line"][:50])
def test_header_line_case(case):
    # Weka 3.6.14 agrees with liac-arff on every header case (checked by hand with
    # weka.core.Instances on the same documents).
    document, line = _header_document(case)
    if case["expect"] == "error":
        with pytest.raises(ArffError) as caught:
            _read(document)
        assert caught.value.line == line
        return
    schema, chunk = _read(document)
    if case["kind"] == "relation":
        assert schema.relation == case["name"]
    elif case["kind"] == "attribute":
        (attribute,) = schema.attributes
        assert attribute.name == case["name"]
        if isinstance(case.get("type"), list):
            assert attribute.kind == NOMINAL and list(attribute.labels) == case["type"]
        elif "type" in case:
            assert (attribute.declared_type or attribute.kind).upper() == case["type"]
    else:  # a comment line before @relation is skipped
        assert schema.relation == "r" and chunk.dense_values().tolist() == [[1.0]]


# --------------------------------------------------------------------------
# data rows of string attributes

DATA_CASES = _load("data_row_cases.jsonl")

# What Weka 3.6.14 read where liac-arff expects an error or another value
# (weka.core.Instances, values printed with Instance.stringValue).
WEKA_STRINGS = {
    # Java's StreamTokenizer has no \u escape: backslash-u is a plain 'u'.
    '"\\u123a"': ["u123a"],
    '"abc\\u123aabc"': ["abcu123aabc"],
    # A backslash before any other character stands for that character.
    " '\\x00' ": ["x00"],
    " '\\u1' ": ["u1"],
    " '\\uzzzz' ": ["uzzzz"],
    " '\\N' ": ["N"],
    " '\\T' ": ["T"],
}

# Documents Weka 3.6.14 reads and filterkit rejects, by decision: Weka's
# tokenizer ends an unterminated quote at the end of the line, and after the
# last value of a row Weka reads one more token and, unless it is '{', drops it
# without a word (" A B C " even becomes two rows, 'A' and 'C').  Following
# Weka would lose or invent values silently, so the reader refuses both and
# names the line.  The value is the one Weka read, kept as a record.
_QUOTE = "Weka ends an unterminated quote at the end of the line; filterkit rejects the row"
_EXTRA = "Weka silently drops one extra token after a complete row; filterkit rejects the row"
WEKA_READS_FILTERKIT_REJECTS = {
    " \\'A' ": (["\\"], _EXTRA),
    " \\'A ": (["\\"], _QUOTE),
    " 'A ": (["A "], _QUOTE),
    ' "A ': (["A "], _QUOTE),
    ' A" ': (["A"], _QUOTE),
    " A' ": (["A"], _QUOTE),
    " 'A\\' ": (["A' "], _QUOTE),
    ' "A\\" ': (['A" '], _QUOTE),
    " A B ": (["A"], _EXTRA),
    " 5 6 ": (["5"], _EXTRA),
    " '5' '6' ": (["5"], _EXTRA),
    " {0 A } 0": (["A"], _EXTRA),
    " {0 A }, 0": (["A"], _EXTRA),
    " 0}": (["0"], _EXTRA),
}


def _data_params():
    return [pytest.param(case, id=f"{number}:{case['data_line']!r}") for number, case in enumerate(DATA_CASES)]


def _expected_strings(case):
    line = case["data_line"]
    if line in WEKA_STRINGS:
        return [WEKA_STRINGS[line]]
    assert case["expect"] != "error", "Weka read this case: its value must be listed"
    return case["expect"]


@pytest.mark.parametrize("case", _data_params())
def test_data_row_case(case):
    if not _weka_reads(case) or case["data_line"] in WEKA_READS_FILTERKIT_REJECTS:
        with pytest.raises(ArffError) as caught:
            _read(case["arff"])
        assert caught.value.line == 7  # the data row (the document starts with a blank line)
        assert str(caught.value).startswith("case:7: ")
        return
    schema, chunk = _read(case["arff"])
    assert len(schema) == case["n_string_attributes"]
    rows = [[chunk.text[c][r] for c in range(len(schema))] for r in range(chunk.n_rows)]
    assert rows == _expected_strings(case)


def test_octal_escapes_read_as_weka_reads_them():
    # \0 .. \377 as in Java's StreamTokenizer: a third digit only after 0-3.
    document = "@relation r\n@attribute s string\n@data\n'\\a\\v'\n'\\377x'\n'\\477'\n'\\18'\n'\\0123'\n"
    _, chunk = _read(document)
    assert chunk.text[0] == ["\x07\x0b", "\xffx", "'7", "\x018", "\n3"]


# --------------------------------------------------------------------------
# single values of each type, dense and sparse

VALUE_CASES = _load("value_conversion_cases.jsonl")


def _value_id(case):
    return f"{case['attr_type']}:{case['value']!r}:{'sparse' if case['sparse'] else 'dense'}"


def _expected_value(case):
    if case["attr_type"] == "INTEGER" and case["value"] == '"45.13233322"':
        # liac-arff truncates a value of an INTEGER attribute to 45; Weka keeps
        # 45.13233322 (INTEGER is numeric to Weka), and so do we.
        return 45.13233322
    return case["expect"]


@pytest.mark.parametrize("case", VALUE_CASES, ids=_value_id)
def test_value_conversion_case(case):
    if not _weka_reads(case):
        # Includes the empty value, which liac-arff reads as missing and Weka rejects.
        with pytest.raises(ArffError) as caught:
            _read(case["arff"])
        assert caught.value.line == 6
        return
    assert case["expect"] != "error"
    schema, chunk = _read(case["arff"])
    attribute = schema.attributes[0]
    value = chunk.dense_values()[0, 0]
    if math.isnan(value):
        ours = None
    elif attribute.kind == NOMINAL:
        ours = attribute.labels[int(value)]
    elif attribute.kind == STRING:
        ours = chunk.text[0][0]
    else:
        ours = value
    assert ours == _expected_value(case)
    if "encoded_index" in case:
        assert value == case["encoded_index"]
    assert chunk.dense_values()[0, 1] == 0.0
