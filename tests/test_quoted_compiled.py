"""Rows with quoted strings on the compiled path (issue 41): ``tokenize_plain`` splits and unescapes
them as the tokenizer does, on many generated rows (quotes, escapes, non-UTF-8 bytes, ``?``, sparse
rows, rows that are errors), and the reader gives the same chunks, or the same error, either way."""

from __future__ import annotations

import io
import pickle
import random

import numpy as np
import pytest

from filterkit import kernels
from filterkit.arff import ArffReader, _speedups, tokens  # type: ignore[attr-defined]
from filterkit.errors import ArffError
from filterkit.schema import RawTexts

HEADER = (
    b"@relation r\n@attribute n numeric\n@attribute s string\n@attribute c {x,'y z','?'}\n@attribute t string\n@data\n"
)
#: pieces of a quoted body: plain text, every kind of escape, marks that are only text in quotes
PIECES = [
    b"a", b"word", b" ", b",", b"{", b"}", b"%", b"?", b"0x1", b"1.5", "é€𝄞".encode(), b"\t",
    b"\\n", b"\\t", b"\\r", b"\\b", b"\\f", b"\\a", b"\\v", b"\\\\", b"\\'", b'\\"', b"\\q", b"\\8",
    b"\\0", b"\\7", b"\\12", b"\\101", b"\\377", b"\\400", b"\\47x", b"\\1234", "\\é".encode(),
    b"'", b'"',
]  # fmt: skip


def body(rng: random.Random, quote: bytes) -> bytes:
    """A quoted string's body: random pieces, the other quote mark left bare, this one escaped."""
    text = b"".join(rng.choice(PIECES) for _ in range(rng.randrange(6)))
    return text.replace(b"\\" + quote, b"").replace(quote, b"\\" + quote)


def quoted(rng: random.Random) -> bytes:
    quote = rng.choice([b"'", b'"'])
    return quote + body(rng, quote) + quote


#: wrong values, one of which goes in some files: each is an error, or declined by the compiled path
WRONG = [b"'open", b"'\xff'", b"'a\\", b"z", b"'1' 2", b"% note", b"'?'", b"{1}"]


def value(rng: random.Random, column: int) -> bytes:
    """One value of ``column`` (numeric, string, nominal, string)."""
    roll = rng.random()
    if roll < 0.1:
        return b"?"
    if column == 0:
        return rng.choice([b"1", b"-2.5", b"'3'", b"' 4 '", b"1e3"])
    if column == 2:
        return rng.choice([b"x", b"'x'", b"'y z'", b'"y z"', b"'?'", b"'\\x'"])
    return quoted(rng) if roll < 0.9 else rng.choice([b"bare", b"caf\xc3\xa9", b"1.5"])


def row(rng: random.Random, sparse: bool) -> bytes:
    values = [value(rng, column) for column in range(4)]
    if sparse:
        kept = sorted(rng.sample(range(4), rng.randrange(5)))
        return b"{" + b",".join(b"%d %s" % (c, values[c]) for c in kept) + b"}"
    return rng.choice([b",", b", ", b"\t"]).join(values)


def rows(rng: random.Random) -> bytes:
    """Up to 40 rows, a tenth of the files sparse, a third with a wrong value in one row."""
    sparse = rng.random() < 0.1
    lines = [row(rng, sparse) for _ in range(rng.randrange(1, 40))]
    if rng.random() < 0.3:
        at = rng.randrange(len(lines))
        lines[at] = lines[at].replace(b"?", rng.choice(WRONG), 1) if b"?" in lines[at] else rng.choice(WRONG)
    return b"".join(line + b"\n" for line in lines)


def read(data: bytes, chunk_rows: int):
    """Every chunk's values and texts, or the error."""
    try:
        with ArffReader(io.BytesIO(HEADER + data), name="f", chunk_rows=chunk_rows) as source:
            return [(chunk.dense_values().tolist(), chunk.text) for chunk in source.chunks()]
    except ArffError as error:
        return str(error)


@pytest.mark.parametrize("seed", range(100))
def test_the_compiled_path_reads_quoted_rows_as_the_tokenizer(seed):
    rng = random.Random(seed)
    data = rows(rng)
    chunk_rows = rng.choice([1, 3, 1000])
    compiled = read(data, chunk_rows)
    with kernels.compiled(False, kernels.READING):
        expected = read(data, chunk_rows)
    assert repr(compiled) == repr(expected)


@pytest.mark.parametrize("seed", range(200))
def test_a_quoted_body_is_unescaped_as_the_tokenizer_unescapes_it(seed):
    rng = random.Random(seed)
    quote = rng.choice([b"'", b'"'])
    text = body(rng, quote)
    found = _speedups.tokenize_plain(b"1, " + quote + text + quote + b"\n2," + quote + quote, 2, 2)
    expected = [tokens.Token(tokens.WORD, "1")] + list(tokens.iter_tokens((quote + text + quote).decode()))
    assert _speedups.decode_texts(found[4], found[5]) == [t.text for t in expected if t.kind == tokens.QUOTED] + [""]
    assert list(found[3]) == [1, 2, 1, 2]
    assert np.frombuffer(found[0], np.float64).tolist() == [1.0, 0.0, 2.0, 0.0]


@pytest.mark.parametrize(
    "data, rows, per_row",
    [
        (b"'a", 1, 1),
        (b"'a\\", 1, 1),
        (b"1 'a\\\n'", 1, 2),
        (b"{0 'a'}", 1, 1),
        (b"'a' {1}", 1, 2),
        (b"'a' % note", 1, 1),
        (b"'\xff'", 1, 1),
        (b"0x1 'a'", 1, 2),
        (b"1,'a'\n2", 2, 2),  # a row short of a value
        (b"1,'a'\n2,'b',3", 2, 2),  # a row with one too many
        (b"1,'a',3\n2", 2, 2),  # as many values in all, not per row
        (b"1,'a'\n2,'b'", 1, 2),  # a row more than said
        (b"1,'a'", 2, 2),  # a row fewer
    ],
)
def test_what_only_the_tokenizer_reads_is_declined(data, rows, per_row):
    assert _speedups.tokenize_plain(data, rows, per_row) is False


def test_rows_of_the_values_said_are_split_in_one_pass():
    found = _speedups.tokenize_plain(b"1,'a b'\n2.5 , x", 2, 2)
    assert np.frombuffer(found[0], np.float64).tolist() == [1.0, 0.0, 2.5, 0.0]
    assert np.frombuffer(found[1], np.int64).tolist() == [0, 2, 8, 14]  # where each value starts
    assert list(found[3]) == [1, 2, 1, 0]  # number, quoted, number, word
    assert found[4] == b"a b" and np.frombuffer(found[5], np.int64).tolist() == [3]
    with pytest.raises(ValueError):
        _speedups.tokenize_plain(b"1", 0, 1)


def test_rows_too_short_for_their_values_are_declined_before_arrays_are_made():
    # 2 · 10**10 values would be some 660 GB of arrays: declined by the text's length alone, not a MemoryError
    assert _speedups.tokenize_plain(b"1\n1", 2, 10**10) is False


def test_a_wide_file_of_short_rows_is_an_error_naming_its_line(tmp_path):
    path = tmp_path / "wide.arff"
    declared = "".join(f"@attribute a{i} numeric\n" for i in range(20_000))
    path.write_text(f"@relation w\n{declared}@data\n" + "1\n" * 3)
    with open(path, "rb") as stream, pytest.raises(ArffError, match="expected 20000 values, found 1") as raised:
        list(ArffReader(stream, name=str(path)).chunks())
    assert raised.value.line == 20_003


DOCUMENTS = b"@relation d\n@attribute text string\n@attribute class {a,'b c'}\n@data\n"


@pytest.mark.parametrize(
    "rows, as_bytes",
    [
        (b"'first doc',a\n'caf\xc3\xa9 \\'x\\'',a\n'',a\n", True),
        (b"'first doc',a\nbare,a\n", False),  # a text not quoted: looked up, so strings
        (b"'first doc',a\n?,a\n", False),  # a missing text
        (b"'first doc','b c'\n'second',a\n", True),  # a quoted label: found in the label table, the texts stay bytes
    ],
    ids=["quoted texts", "a bare text", "a missing text", "a quoted label"],
)
def test_a_column_of_quoted_texts_is_kept_as_bytes_and_read_as_its_strings(rows, as_bytes):
    with ArffReader(io.BytesIO(DOCUMENTS + rows), name="f") as source:
        chunk = next(source.chunks())
    assert (chunk.raw_text(0) is not None) is as_bytes
    with kernels.compiled(False, kernels.READING), ArffReader(io.BytesIO(DOCUMENTS + rows), name="f") as source:
        expected = next(source.chunks())
    assert chunk.text == expected.text and chunk.raw_text(0) is None
    assert repr(chunk.dense_values().tolist()) == repr(expected.dense_values().tolist())


def test_the_readers_bytes_survive_what_may_happen_to_a_chunk(monkeypatch):
    with ArffReader(io.BytesIO(DOCUMENTS + b"'one',a\n'two \\'2\\'',a\n"), name="f") as source:
        chunk = next(source.chunks())
    assert chunk.text_lengths() == {0: 2} and chunk.raw_text(0) is not None  # counted without making strings
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(chunk, protocol)).text == {0: ["one", "two '2'"]}

    def interrupted(self):
        raise KeyboardInterrupt

    with monkeypatch.context() as patched:
        patched.setattr(RawTexts, "strings", interrupted)
        with pytest.raises(KeyboardInterrupt):
            chunk.text
    assert chunk.raw_text(0) is not None and chunk.text == {0: ["one", "two '2'"]}


def test_decode_texts_takes_int64_ends_alone():
    assert _speedups.decode_texts(b"abcd", np.array([1, 4], np.int64)) == ["a", "bcd"]
    with pytest.raises(ValueError, match="not int64"):
        _speedups.decode_texts(b"abcd", np.array([1, 0], np.int32))
