"""A wide header read and written in bulk (issue 20, start-up): a run of plain
``@attribute NAME numeric`` lines is taken by one match, and the declarations are written
from one list.  Both give exactly what the line-by-line code gives: the same Schema, comments,
header digest and line count, the same error on the same line, the same header text."""

from __future__ import annotations

import io
import random
import re
from functools import partial

import pytest

from arff_helpers import DATA
from filterkit.arff import header, reader
from filterkit.arff.header import HeaderParser, _attribute_lines, format_header, numeric_declarations
from filterkit.arff.reader import ArffReader
from filterkit.arff.tokens import quote, quote_all
from filterkit.errors import ArffError
from filterkit.limits import Limits
from filterkit.schema import DATE, NOMINAL, NUMERIC, RELATIONAL, STRING, Attribute, Schema
from oracles import numeric_attributes

_NEVER_RUN = re.compile(rb"(?!)")


def read_header(data: bytes, limits: Limits | None = None):
    """Everything a reader knows after the header of ``data``, or the error it raised."""
    try:
        with ArffReader(io.BytesIO(data), name="f", limits=limits) as source:
            return ("ok", source.schema, source.header_comments, source.header)
    except ArffError as error:
        return ("error", str(error))


def both_ways(data: bytes, monkeypatch, limits: Limits | None = None):
    """The header read in bulk (the default), and line by line by the tokenizer alone."""
    bulk = read_header(data, limits)
    with monkeypatch.context() as patched:
        patched.setattr(header, "_PLAIN_RUN", _NEVER_RUN)
        tokenized = read_header(data, limits)
    return bulk, tokenized


def fixture_files() -> list:
    return [pytest.param(path.read_bytes(), id=str(path.relative_to(DATA))) for path in sorted(DATA.glob("**/*.arff"))]


@pytest.mark.parametrize("data", fixture_files())
def test_every_fixture_reads_the_same_in_bulk_and_tokenized(data, monkeypatch):
    bulk, tokenized = both_ways(data, monkeypatch)
    assert bulk == tokenized


def test_a_wide_header_is_read_in_a_few_calls_and_gives_the_declared_attributes(monkeypatch):
    """A check that the comparisons compare something: 3,000 plain lines are not fed one at
    a time (the first of a block read later may be), and give every name and declared type."""
    lines = [f"@attribute w{i} {('numeric', 'REAL', 'integer')[i % 3]}" for i in range(3000)]
    data = ("@relation r\n" + "\n".join(lines) + "\n@attribute c {a,b}\n@data\n1,a\n").encode()
    fed = []
    original = HeaderParser.feed
    monkeypatch.setattr(HeaderParser, "feed", lambda self, line: fed.append(line) or original(self, line))
    with ArffReader(io.BytesIO(data)) as source:
        schema = source.schema
        assert source.header.lines == 3003
    # the rest of the plain lines (one may start a block read later) are not fed one at a time
    others = [line for line in fed if not line.startswith("@attribute w")]
    assert others == ["@relation r", "@attribute c {a,b}", "@data"]
    assert len(fed) <= 5
    assert [(a.name, a.kind, a.declared_type) for a in schema.attributes[:4]] == [
        ("w0", NUMERIC, "numeric"),
        ("w1", NUMERIC, "real"),
        ("w2", NUMERIC, "integer"),
        ("w3", NUMERIC, "numeric"),
    ]
    assert len(schema.attributes) == 3001 and schema.attributes[-1].labels == ("a", "b")


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        ("@attribute w3 numeric", "f:{line}: attribute 'w3' is declared twice"),
        ("@attribute w\xe9 numeric", None),
        ("@attribute x numerik", "f:{line}: attribute 'x': unknown type 'numerik' (expected numeric, real, "),
    ],
)
def test_an_error_inside_a_long_run_names_its_line(broken, message, monkeypatch):
    lines = [f"@attribute w{i} numeric" for i in range(500)]
    lines[300] = broken
    text = "@relation r\n" + "\n".join(lines) + "\n@data\n"
    data = text.encode("latin-1" if message is None else "utf-8")
    bulk, tokenized = both_ways(data, monkeypatch)
    assert bulk == tokenized
    expected = "f:302: not UTF-8 text (invalid continuation byte at byte 13)" if message is None else message
    assert bulk[0] == "error" and bulk[1].startswith(expected.format(line=302))


@pytest.mark.parametrize(
    ("limits", "expected"),
    [
        (Limits(attributes=250), "f:252: more than 250 attributes: refused"),
        (Limits(header_bytes=4000), "f:172: the header is longer than 4,000 bytes: refused"),
        (Limits(line_bytes=12), "f:2: a line longer than 12 bytes"),
    ],
)
def test_a_limit_reached_inside_a_run_names_its_line(limits, expected, monkeypatch):
    data = ("@relation r\n" + "".join(f"@attribute w{i} numeric\n" for i in range(500)) + "@data\n").encode()
    bulk, tokenized = both_ways(data, monkeypatch, limits)
    assert bulk == tokenized
    assert bulk[0] == "error" and bulk[1].startswith(expected)


#: Lines the generator picks from: plain numeric lines (most), lines that look plain but are
#: not, relational blocks, comments, errors; and names, some odd.
_NAMES = ["a", "b", "w1", "@data", "@end", "é", "x\x0by", "a-b", "?", "1e5", "K", "r"]
_LINES = [
    "@attribute {n} numeric",
    "@attribute {n} REAL",
    "@Attribute\t{n}\tinteger\t",
    "  @attribute {n} numeric  ",
    "@attribute {n} numeric,",
    "@attribute '{n}' numeric",
    "@attribute {n} numeric % a comment",
    "@attribute {n} numeric extra",
    "@attribute {n} nümeric",
    "@attribute {n} {{x,y}}",
    "@attribute {n} string",
    "@attribute {n}",
    "@attribute {n} relational",
    "@end {n}",
    "% a comment",
    "",
]


def generated_header(generator: random.Random) -> bytes:
    lines = ["% made"] if generator.random() < 0.2 else []
    if generator.random() < 0.95:
        lines.append("@relation r")
    for _ in range(generator.randint(0, 40)):
        shape = generator.choice(_LINES[:4] * 6 + _LINES)
        name = generator.choice(_NAMES) if generator.random() < 0.3 else f"w{generator.randrange(60)}"
        lines.append(shape.format(n=name))
    if generator.random() < 0.95:
        lines.append("@data" + (" 1,2" if generator.random() < 0.1 else ""))
    lines.append("{0 1}")
    end = generator.choice(["\n", "\r\n", "\r"])
    data = (end.join(lines) + end).encode("utf-8")
    if generator.random() < 0.05:
        position = generator.randrange(len(data))
        data = data[:position] + b"\xff" + data[position:]
    return data


@pytest.mark.parametrize("seed", range(12))
def test_generated_headers_read_the_same_both_ways(seed, monkeypatch):
    generator = random.Random(seed)
    for _ in range(60):
        data = generated_header(generator)
        limits = None
        if generator.random() < 0.3:
            limits = Limits(attributes=generator.choice([3, 10, 1000]), header_bytes=generator.choice([200, 1 << 20]))
        with monkeypatch.context() as patched:
            # blocks of a few lines: runs are cut by block ends, as in a header longer than a block
            patched.setattr(reader, "_BLOCK_BYTES", generator.choice([7, 64, 1 << 20]))
            bulk, tokenized = both_ways(data, monkeypatch, limits)
        assert bulk == tokenized, data


def reference_header(schema: Schema, comments=()) -> str:
    """The header as filterkit 0.3.0 wrote it: one declaration at a time."""
    lines = [f"% {comment}" for comment in comments] + [f"@relation {quote(schema.relation)}", ""]
    for attribute in schema.attributes:
        lines.extend(_attribute_lines(attribute))
    return "\n".join([*lines, "", "@data"]) + "\n"


@pytest.mark.parametrize("data", fixture_files())
def test_every_fixture_schema_is_written_as_before(data):
    try:
        with ArffReader(io.BytesIO(data)) as source:
            schema, comments = source.schema, source.header_comments
    except ArffError:
        return
    assert format_header(schema, comments) == reference_header(schema, comments).encode()


_ODD_NAMES = ["w", "?", "", "a b", "a\nb", "é", "it's", "x%", "a,b", "{", "\t", "??", "a\\b", "\x01"]


@pytest.mark.parametrize("seed", range(10))
def test_generated_schemas_are_written_as_before(seed):
    generator = random.Random(seed)
    for _ in range(50):
        attributes = []
        for position in range(generator.randint(1, 30)):
            name = f"w{position}" if generator.random() < 0.8 else generator.choice(_ODD_NAMES) + str(position)
            if generator.random() < 0.02:
                name = generator.choice(_ODD_NAMES)
            kind = generator.choice([NUMERIC] * 6 + [NOMINAL, STRING, DATE, RELATIONAL])
            if kind == NUMERIC:
                attributes.append(Attribute(name, kind, declared_type=generator.choice(["", "numeric", "real"])))
            elif kind == NOMINAL:
                attributes.append(Attribute(name, kind, labels=("a", "b c")))
            elif kind == DATE:
                attributes.append(Attribute(name, kind, date_format="yyyy-MM-dd"))
            elif kind == RELATIONAL:
                attributes.append(Attribute(name, kind, members=(Attribute("m", NUMERIC), Attribute("s", STRING))))
            else:
                attributes.append(Attribute(name, kind))
        schema = Schema("r s", tuple(attributes))
        assert format_header(schema, ["c"]) == reference_header(schema, ["c"]).encode()


def test_numeric_declarations_quote_as_quote_does():
    """The compiled printer's lines of a numeric run are those of one ``quote`` per name: names bare, quoted,
    escaped, ``?``, empty, beyond ASCII and beyond the Basic Multilingual Plane."""
    pieces = ["w", "é", "’", " ", ",", "'", '"', "%", "\\", "\t", "\r", "\n", "\x00", "?", "{", "}", "\u2028", "\x7f"]
    generator = random.Random(3)
    assert numeric_declarations([], "numeric") == b""
    assert numeric_declarations(["a b", "x", "?", "", "it's 5%"], "real") == (
        b"@attribute 'a b' real\n@attribute x real\n@attribute '?' real\n@attribute '' real\n"
        b"@attribute 'it\\'s 5\\%' real\n"
    )
    for _ in range(2000):
        names = ["".join(generator.choices([*pieces, "\U0001d518"], k=generator.randint(0, 4))) for _ in range(6)]
        declared = generator.choice(["numeric", "real", "integer"])
        expected = "".join(f"@attribute {quote(name)} {declared}\n" for name in names).encode()
        assert numeric_declarations(names, declared) == expected


def test_a_name_that_is_not_utf8_is_refused_as_encoding_refuses_it():
    with pytest.raises(UnicodeEncodeError):
        numeric_declarations(["w", "a\udc80"], "numeric")


def test_quote_all_quotes_as_quote_does():
    assert quote_all(["a", "b"]) == ["a", "b"]
    assert quote_all(["a", "a\nb"]) == ["a", "'a\\nb'"]
    assert quote_all(["a", "?"]) == ["a", "'?'"]
    assert quote_all(["a", ""]) == ["a", "''"]
    assert quote_all([]) == []
    generator = random.Random(0)
    for _ in range(300):
        texts = [generator.choice(["w", "x1", *_ODD_NAMES]) for _ in range(generator.randint(0, 5))]
        assert quote_all(texts) == [quote(text) for text in texts]


def test_quote_all_quotes_a_few_names_among_many_as_quote_does():
    """Many names, a few of them quoted (a word holding ``%`` or ``{``, an empty one, ``?``): found by one scan."""
    generator = random.Random(2)
    odd = ["100%", "a{b", "", "?", "x y", "it's", "\\", "\t", "\x1f", "#1"]
    for _ in range(300):
        names = [f"w{k}" for k in range(generator.randint(1, 200))]
        for at in generator.sample(range(len(names)), generator.randint(0, max(1, len(names) // 7))):
            names[at] = generator.choice(odd)
        assert quote_all(names) == [quote(name) for name in names]


def test_quote_all_quotes_documents_as_quote_does():
    """Texts most of which are quoted (documents), some bare, some escaped, ``?`` and empty among them."""
    assert quote_all(["a b", "c", "it's 5%", "?", "", "x\\y\tz", "d"]) == [
        "'a b'",
        "c",
        "'it\\'s 5\\%'",
        "'?'",
        "''",
        "'x\\\\y\\tz'",
        "d",
    ]
    generator = random.Random(1)
    pieces = ["w", "é", "’", " ", ",", "'", '"', "%", "\\", "\t", "\r", "\x00", "?", "{", "\u2028"]
    for _ in range(1000):
        texts = ["".join(generator.choices(pieces, k=generator.randint(0, 4))) for _ in range(generator.randint(0, 6))]
        assert quote_all(texts) == [quote(text) for text in texts]


@pytest.mark.parametrize(
    "make", [Attribute.numerics, partial(numeric_attributes, Attribute)], ids=["compiled", "oracle"]
)
def test_numeric_attributes_in_bulk_are_the_constructor_s(make):
    """Attribute.numerics (the compiled maker), and its oracle, make what the frozen constructor makes: equal,
    hashing alike, every field as declared or defaulted, still frozen; and refuse what the constructor's typing
    would not hold."""
    names = ["a", "b c", "ωmega", "\U0001f600", ""]
    declared = ["numeric", "real", "integer", "numeric", "REAL".lower()]
    made = make(names, declared)
    assert made == [Attribute(name, NUMERIC, declared_type=kind) for name, kind in zip(names, declared)]
    assert [hash(a) for a in made] == [hash(Attribute(n, NUMERIC, declared_type=k)) for n, k in zip(names, declared)]
    assert all(a.is_plain_numeric and a.labels == () and a.members == () and a.date_format is None for a in made)
    with pytest.raises(AttributeError):
        made[0].name = "changed"  # type: ignore[misc]
    assert make([], []) == []
    with pytest.raises(ValueError):
        make(["a", "b"], ["numeric"])


def test_numeric_attributes_in_bulk_hold_the_oracle_s_fields_only():
    """The compiled maker holds, as its oracle, only the fields that differ from the class's defaults."""
    names, declared = ["a", "b c", "ωmega", ""], ["numeric", "real", "integer", "numeric"]
    oracle = numeric_attributes(Attribute, names, declared)
    assert [vars(a) for a in Attribute.numerics(names, declared)] == [vars(a) for a in oracle]


def test_numeric_attributes_in_bulk_survive_a_setter_that_empties_the_lists():
    """The compiled maker holds the names and declared types it was given: a subclass whose data descriptor empties
    the lists as each field is set still gets one attribute per name given (once, this read past the list)."""
    names, declared = [f"w{k}" for k in range(1000)], ["numeric"] * 1000

    class Emptying:
        def __set_name__(self, owner, name):
            self.name = name

        def __get__(self, instance, owner=None):
            return instance.__dict__[self.name] if instance is not None else self

        def __set__(self, instance, value):
            names.clear()
            declared.clear()
            instance.__dict__[self.name] = value

    class Watched(Attribute):
        kind = Emptying()  # type: ignore[assignment]

    made = Watched.numerics(names, declared)
    assert [attribute.name for attribute in made] == [f"w{k}" for k in range(1000)]
    assert all(attribute.kind == NUMERIC for attribute in made)


#: Every character beyond ASCII that ``str.isspace`` holds, and characters beside them whose UTF-8 bytes differ in
#: the last byte alone (U+200B, U+2027, U+2030, U+205E, U+3001, U+00A1, U+1681).
UNICODE_SPACES = "\x85\xa0\u1680\u2000\u2005\u200a\u2028\u2029\u202f\u205f\u3000"
SPACE_NEIGHBOURS = "\u200b\u2027\u2030\u205e\u3001\xa1\u1681"


def test_every_white_space_character_is_quoted_by_both_printers_and_its_neighbours_are_not():
    """A name holding U+00A0 (common in real text) was written bare: liac-arff and scipy split the declaration there
    (BadAttributeType).  ``quote``, ``quote_all`` and the compiled printer quote every character ``str.isspace``
    holds, and write bare the characters beside them."""
    assert {character for character in map(chr, range(0x80, 0x3001)) if character.isspace()} == set(UNICODE_SPACES) | {
        chr(code) for code in range(0x2000, 0x200B)
    }
    for space in UNICODE_SPACES + "".join(map(chr, range(0x2000, 0x200B))):
        assert quote(f"a{space}b") == f"'a{space}b'"
        assert numeric_declarations([f"a{space}b", space], "numeric") == (
            f"@attribute 'a{space}b' numeric\n@attribute '{space}' numeric\n".encode()
        )
    for neighbour in SPACE_NEIGHBOURS:
        assert quote(f"a{neighbour}") == f"a{neighbour}"
        assert numeric_declarations([f"a{neighbour}"], "numeric") == f"@attribute a{neighbour} numeric\n".encode()
    assert quote_all(["a", "b\xa0c"]) == ["a", "'b\xa0c'"]
