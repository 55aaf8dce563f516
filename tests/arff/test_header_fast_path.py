"""The header's fast path (a run of plain ``@attribute NAME numeric`` lines matched at once,
without the tokenizer) reads every header exactly as the tokenizer does: the same Schema, the
same comments, the same error on the same line.  Each header is read twice, the second time with
the fast path switched off (its pattern made to match nothing)."""

from __future__ import annotations

import io
import random
import re

import pytest

from arff_helpers import CONFORMANCE, DATA, REAL_FILES, conformance_files
from filterkit.arff import header
from filterkit.arff.reader import ArffReader
from filterkit.errors import ArffError
from filterkit.limits import Limits

_NEVER = re.compile(rb"(?!)")


def read_header(data: bytes, limits: Limits | None = None):
    """``("ok", schema, comments)`` or ``("error", message)`` for the header of ``data``."""
    try:
        with ArffReader(io.BytesIO(data), name="f", limits=limits) as source:
            return ("ok", source.schema, source.header_comments)
    except ArffError as error:
        return ("error", str(error))


def both_ways(data: bytes, monkeypatch, limits: Limits | None = None):
    fast = read_header(data, limits)
    with monkeypatch.context() as patched:
        patched.setattr(header, "_PLAIN_RUN", _NEVER)
        slow = read_header(data, limits)
    return fast, slow


def all_files() -> list:
    files = [pytest.param(path.read_bytes(), id=f"real/{path.name}") for path in REAL_FILES]
    files += [pytest.param((CONFORMANCE / name).read_bytes(), id=name) for name in conformance_files()]
    files += [
        pytest.param(path.read_bytes(), id=str(path.relative_to(DATA)))
        for folder in ("malformed", "weka", "shaper")
        for path in sorted((DATA / folder).glob("**/*.arff"))
    ]
    return files


@pytest.mark.parametrize("data", all_files())
def test_every_test_file_has_the_same_header_both_ways(data, monkeypatch):
    fast, slow = both_ways(data, monkeypatch)
    assert fast == slow


def test_the_fast_path_takes_the_plain_lines(monkeypatch):
    """A check that the comparison above compares something: the plain lines really skip
    the tokenizer (which is made to fail here), and give the declared types."""
    data = b"@relation r\n@attribute a numeric\n@ATTRIBUTE\tb  REAL \n @attribute c Integer\n@data\n"

    def no_tokenizer(line):
        raise AssertionError(f"tokenized: {line!r}")
        yield

    monkeypatch.setattr(header, "iter_tokens", no_tokenizer)
    with pytest.raises(AssertionError, match="@relation"):
        read_header(data)
    parser = header.HeaderParser()
    parser.relation = "r"
    run = data[len(b"@relation r\n") : -len(b"@data\n")]
    assert parser.plain_run_end(run, 0) == len(run) and parser.feed_plain_run(run.decode(), len(run))
    assert [(a.name, a.kind, a.declared_type) for a in parser.stack[0][1]] == [
        ("a", "numeric", "numeric"),
        ("b", "numeric", "real"),
        ("c", "numeric", "integer"),
    ]


#: Header lines the generator picks from: plain numeric lines, lines that look plain but are
#: not (commas, quotes, comments, other white space, odd types), and lines that are errors.
_NAMES = ["a", "b", "w1", "@data", "@end", "é", "x\x0by", "a-b", "?", "1e5", "K"]
_LINE_SHAPES = [
    "@attribute {n} numeric",
    "@attribute {n} REAL",
    "@Attribute\t{n}\tinteger\t",
    "  @attribute {n} numeric  ",
    "@attribute {n} numeric,",
    "@attribute {n},numeric",
    "@attribute '{n}' numeric",
    "@attribute {n} numeric % a comment",
    "@attribute {n} numeric extra",
    "@attribute {n} \u212aumeric",
    "@attribute {n} nümeric",
    "@attribute {n} string",
    "@attribute {n} {{x,y}}",
    "@attribute {n}",
    "@attribute {n} numeric\x0c",
    "@attribute {n} date",
    "% a comment",
    "",
    "@attribute {n} relational",
    "@end {n}",
]


def generated_header(generator: random.Random) -> bytes:
    lines = []
    if generator.random() < 0.9:
        lines.append("@relation r")
    for _ in range(generator.randint(0, 8)):
        shape = generator.choice(_LINE_SHAPES[:4] * 4 + _LINE_SHAPES)
        lines.append(shape.format(n=generator.choice(_NAMES)))
    if generator.random() < 0.9:
        lines.append("@data")
    lines.append("{0 1}" if generator.random() < 0.5 else "")
    return ("\n".join(lines) + "\n").encode("utf-8")


@pytest.mark.parametrize("seed", range(20))
def test_generated_headers_read_the_same_both_ways(seed, monkeypatch):
    generator = random.Random(seed)
    for _ in range(100):
        data = generated_header(generator)
        limits = Limits(attributes=generator.choice([2, 3, 1000])) if generator.random() < 0.3 else None
        fast, slow = both_ways(data, monkeypatch, limits)
        assert fast == slow, data


def test_errors_name_the_same_line(monkeypatch):
    data = b"@relation r\n@attribute a numeric\n@attribute b real\n@attribute a integer\n@data\n"
    fast, slow = both_ways(data, monkeypatch)
    assert fast == slow == ("error", "f:4: attribute 'a' is declared twice")
    data = b"@attribute a numeric\n@relation r\n@data\n"
    fast, slow = both_ways(data, monkeypatch)
    assert fast == slow == ("error", "f:1: expected @relation before anything else, found '@attribute'")
    data = b"@relation r\n@attribute a numeric\n@attribute b numeric\n@attribute c numeric\n@data\n"
    fast, slow = both_ways(data, monkeypatch, Limits(attributes=2))
    assert fast == slow
    assert fast[0] == "error" and fast[1].startswith("f:4: more than 2 attributes: refused")
