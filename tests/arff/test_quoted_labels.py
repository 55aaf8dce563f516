"""Quoted nominal labels at a bare label's cost (issue 74, item 3): the compiled scanners (filterkit/arff/_speedups.c
tokenize_plain and parse_sparse_rows) look each quoted value of a nominal column up in the reader's label table
(labels.c labels_find_quoted) as they unescape it, instead of leaving it to Python.  Whatever way a label is written
(bare, in either quotes, with any escape Weka's StreamTokenizer reads), the chunk is the one the tokenizer reads, and
what was refused is refused with the same message naming the file and line."""

from __future__ import annotations

import io
import random

import numpy as np
import pytest

from filterkit import kernels
from filterkit.arff import ArffReader, reader
from filterkit.arff.tokens import quote
from filterkit.errors import ArffError

speedups = kernels.speedups

#: Labels that need quotes (white space, separators, a comment mark, braces, quotes, a backslash, controls, the
#: missing value's mark, nothing at all), some that look like numbers, and some that need none.
LABELS = [
    "admin",
    "comp.os",
    "a b",
    "x,y",
    "50%",
    "{brace}",
    "it's",
    'say "hi"',
    "back\\slash",
    "tab\there",
    "line\nend",
    "café",
    "1",
    "0.5",
    "?",
    "",
    "ünï code ✓",
]
HEADER = (
    "@relation r\n@attribute text string\n@attribute n numeric\n"
    f"@attribute class {{{','.join(map(quote, LABELS))}}}\n@data\n"
).encode()
#: Escapes Java's StreamTokenizer reads for a character (tokens.unescape): after a backslash, these letters stand for
#: others, and octal digits for a code; any other character stands for itself.
LETTER_ESCAPES = {"\n": "n", "\t": "t", "\r": "r", "\b": "b", "\f": "f", "\a": "a", "\v": "v"}


def spelled(label: str, chosen: random.Random) -> str:
    """``label`` written quoted, each character as it is where it can be, or escaped in one of the ways Weka reads,
    in single or double quotes, chosen at random."""
    mark = chosen.choice("'\"")
    written = []
    for character in label:
        ways = []
        if character not in (mark, "\\", "\n", "\r"):
            ways.append(character)
        if ord(character) < 256:
            ways.append("\\" + format(ord(character), "o").zfill(3))  # three digits: a digit after it is not taken in
        if character in LETTER_ESCAPES:
            ways.append("\\" + LETTER_ESCAPES[character])
        elif not ("0" <= character <= "7" or character in "ntrbfav\n\r"):
            ways.append("\\" + character)
        written.append(chosen.choice(ways))
    return mark + "".join(written) + mark


def read(data: bytes, chunk_rows: int = 10_000, compiled: bool = True):
    """Each chunk's values (their repr, so that NaN equals NaN), texts and CSR layout (for a sparse chunk), or the
    error's text."""
    try:
        with (
            kernels.compiled(compiled, kernels.READING),
            ArffReader(io.BytesIO(HEADER + data), name="f.arff", chunk_rows=chunk_rows) as source,
        ):
            chunks = list(source.chunks())
    except ArffError as error:
        return str(error)
    return [
        (
            repr(chunk.dense_values().tolist()),
            chunk.text,
            (chunk.values.indices.tolist(), chunk.values.indptr.tolist()) if hasattr(chunk.values, "indptr") else None,
        )
        for chunk in chunks
    ]


def codes(data: bytes) -> list[float]:
    """The class column's values of the rows ``data``."""
    with ArffReader(io.BytesIO(HEADER + data), name="f.arff") as source:
        return [value for chunk in source.chunks() for value in chunk.dense_values()[:, 2].tolist()]


def test_quoted_labels_read_as_the_codes_of_their_labels():
    rows = b"".join(f"'doc {k}',{k},{quote(label)}\n".encode() for k, label in enumerate(LABELS))
    assert codes(rows) == [float(k) for k in range(len(LABELS))]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_labels_written_any_way_read_as_the_tokenizer_reads_them(seed, sparse):
    chosen = random.Random(seed)
    rows = []
    for k in range(300):
        label = chosen.choice(LABELS)
        text = chosen.choice(["'a doc'", "'caf\\351 \\'x\\''", "bare", "?", "''"])
        written = spelled(label, chosen) if chosen.random() < 0.8 or label in ("", "?") else quote(label)
        if sparse:
            rows.append(f"{{0 {text},1 {k % 3},2 {written}}}")
        else:
            rows.append(f"{text},{k % 3},{written}")
    data = "\n".join(rows).encode() + b"\n"
    for chunk_rows in (1, 7, 10_000):
        found = read(data, chunk_rows)
        assert found == read(data, chunk_rows, compiled=False)
        assert not isinstance(found, str)


def test_a_quoted_label_costs_no_string_and_leaves_the_texts_as_bytes():
    data = b"'one',1,'a b'\n'two \\'2\\'',2,\"comp.os\"\n'three',3,admin\n"
    with ArffReader(io.BytesIO(HEADER + data), name="f.arff") as source:
        chunk = next(source.chunks())
    assert chunk.raw_text(0) is not None
    assert chunk.dense_values()[:, 2].tolist() == [2.0, 1.0, 0.0]
    assert chunk.text == {0: ["one", "two '2'", "three"]}


@pytest.mark.parametrize(
    "row",
    [b"'doc',1,'comp.os'", b"'doc',1,comp.os", b"{0 'doc',1 1,2 'comp.os'}", b"{0 'doc',1 1,2 comp.os}"],
    ids=["dense quoted", "dense bare", "sparse quoted", "sparse bare"],
)
def test_a_label_is_the_same_code_quoted_or_not(row):
    assert codes(row + b"\n") == [1.0]


def test_a_quoted_question_mark_is_a_label_where_one_is_declared_and_a_bare_one_is_missing():
    assert repr(codes(b"'d',1,'?'\n'd',1,?\n'd',1,\"?\"\n")) == repr([14.0, float("nan"), 14.0])


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (b"'d',1,'a b'\n'd',2,'a  b'\n", "f.arff:7: value 'a  b' is not a label of attribute 'class' "),
        (b"'d',1,admin\n'd',2,'Admin'\n", "f.arff:7: value 'Admin' is not a label of attribute 'class' "),
        (b"{0 'd',2 'comp.os'}\n{0 'd',2 'comp'}\n", "f.arff:7: value 'comp' is not a label of attribute 'class' "),
        (b"'d','a b','a b'\n", "f.arff:6: value 'a b' of attribute 'n' is not a number"),
    ],
    ids=["dense, a space more", "dense, another case", "sparse", "a label in a numeric column"],
)
def test_a_quoted_value_that_is_no_label_is_refused_as_the_tokenizer_refuses_it(rows, message):
    found = read(rows)
    assert isinstance(found, str) and found.startswith(message)
    assert found == read(rows, compiled=False)


def test_a_quoted_question_mark_is_refused_where_no_label_is_one(tmp_path):
    header = b"@relation r\n@attribute class {a,b}\n@data\n"
    with pytest.raises(ArffError) as raised, ArffReader(io.BytesIO(header + b"a\n'?'\n"), name="g.arff") as source:
        list(source.chunks())
    assert str(raised.value) == "g.arff:5: value '?' is not a label of attribute 'class' {a,b}"


def test_a_sparse_quoted_first_label_is_no_entry_as_a_zero_is_none():
    """(Nor is a text: its value is 0.)"""
    data = b"{0 'd',2 'admin'}\n{0 'e',1 2,2 'comp.os'}\n{2 \"admin\"}\n"
    found = read(data)
    assert found == read(data, compiled=False)
    ((values, _, (indices, indptr)),) = found
    assert (indices, indptr) == ([1, 2], [0, 0, 2, 2])
    assert values == repr([[0.0, 0.0, 0.0], [0.0, 2.0, 1.0], [0.0, 0.0, 0.0]])


def test_the_label_table_is_keyed_by_column():
    header = b"@relation r\n@attribute first {'a b',c}\n@attribute second {'d e',f}\n@data\n"
    data = b"'a b','d e'\n'c','f'\n"
    with ArffReader(io.BytesIO(header + data), name="g.arff") as source:
        assert next(source.chunks()).dense_values().tolist() == [[0.0, 0.0], [1.0, 1.0]]
    with pytest.raises(ArffError, match="^g.arff:5: value 'd e' is not a label of attribute 'first' {a b,c}$"):
        with ArffReader(io.BytesIO(header + b"'d e','a b'\n"), name="g.arff") as source:
            list(source.chunks())


@pytest.mark.parametrize(
    "data", [b"'d',1,'a b'\n'e',2,\"comp.os\"\n", b"{0 'f',2 'it\\'s'}\n"], ids=["dense", "sparse"]
)
def test_without_a_label_table_quoted_labels_are_looked_up_by_python(data, monkeypatch):
    monkeypatch.setattr(reader, "MOST_TABLED_LABELS", 3)
    with ArffReader(io.BytesIO(HEADER), name="f.arff") as source:
        assert source._columns.labels is None
    assert read(data) == read(data, compiled=False)
    assert codes(data) == ([2.0, 1.0] if data[0] != ord("{") else [6.0])


def table(columns: list[int], labels: list[bytes], values: list[float]):
    """The compiled label table of these labels."""
    return speedups.Labels(np.array(columns, np.int64), labels, np.array(values, np.float64))


def test_tokenize_plain_finds_a_quoted_label_in_the_table_as_it_scans():
    labels = table([1, 1, 1], [b"a b", b"c", b"?"], [0.0, 1.0, float("nan")])
    data = b"'x','a b'\n'y','c'\n'z','?'\n'w','d'"
    numbers, _, _, kinds, texts, ends = speedups.tokenize_plain(data, 4, 2, labels)
    assert list(kinds) == [2, 3, 2, 3, 2, 2, 2, 2]
    assert np.frombuffer(numbers, np.float64)[[1, 3]].tolist() == [0.0, 1.0]
    assert texts == b"xyz?wd" and np.frombuffer(ends, np.int64).tolist() == [1, 2, 3, 4, 5, 6]
    assert speedups.tokenize_plain(data, 4, 2)[3] == speedups.tokenize_plain(data, 4, 2, None)[3] == bytes([2] * 8)


def test_parse_sparse_rows_finds_a_quoted_label_in_the_table_as_it_scans():
    labels = table([1, 1], [b"a b", b"c"], [0.0, 1.0])
    data = b"{0 'x',1 'a b'}\n{1 'c'}\n{1 'd'}"
    indptr, indices, values, entries, rows, starts, ends, quoted, strings = speedups.parse_sparse_rows(
        data, 3, 2, b"\x01\x01", labels
    )
    assert np.frombuffer(indptr, np.int64).tolist() == [0, 1, 2, 3]
    assert np.frombuffer(indices, np.int64).tolist() == [0, 1, 1]
    assert np.frombuffer(values, np.float64).tolist() == [0.0, 1.0, 0.0]
    assert np.frombuffer(entries, np.int64).tolist() == [0, 2] and strings == ["x", "d"]


def test_the_scanners_take_a_label_table_or_none():
    with pytest.raises(TypeError, match="labels is a Labels table or None"):
        speedups.tokenize_plain(b"'a'", 1, 1, {})
    with pytest.raises(TypeError, match="labels is a Labels table or None"):
        speedups.parse_sparse_rows(b"{0 'a'}", 1, 1, b"\x01", {})
