"""The ``words`` stage's tokenizer exported as C (issue 78; filterkit/export/words.py and tokens.c) against the stage's
own ``counted`` for a transform: stages fitted on Reuters grain (and hostile Unicode) under each tokenizer setting,
compiled with the system's C compiler, count the corpus, random Unicode from every plane, the final sigma in its
contexts, whitespace only ``str.split`` knows, control characters, an empty and a 1 MB document and tokens longer than
any buffer as the stage counts them; bytes that are not UTF-8 are refused as decoding them refuses them; the tables are
``str.lower``'s and ``str.isspace``'s for every code point; and a vocabulary of quotes, backslashes, comment ends,
trigraphs, NUL, newlines and lone surrogates compiles and counts as the stage counts."""

from __future__ import annotations

import random
import re
import shutil
import struct
import subprocess
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
from test_words_unicode import ADVERSARIAL, documents

from filterkit.errors import FilterkitError
from filterkit.export.words import refusal, words_source
from filterkit.runner import Chain
from filterkit.schema import NOMINAL, STRING, Attribute, Chunk, Schema
from filterkit.sources import FileSource, MemorySource
from filterkit.word_tokens import NO_STOP_WORDS
from filterkit_plugins.words import WordVector

GRAIN = Path(__file__).parent.parent / "arff_samples" / "reuters_grain.csv"
COMPILER = shutil.which("gcc") or shutil.which("cc")
FLAGS = ["-std=c99", "-O2", "-Wall", "-Werror", "-ffp-contract=off"]
pytestmark = pytest.mark.skipif(COMPILER is None, reason="no C compiler (gcc or cc) on the PATH")

#: A test main: documents on stdin, each as its length (8 bytes, little-endian) then its bytes; per document a line
#: of words_count's result and its pairs as column:count.
COUNT_MAIN = r"""
#include <stdio.h>
int main(void) {
    size_t room = 1 << 16, n = 0, got;
    unsigned char *all = malloc(room);
    while (all != NULL && (got = fread(all + n, 1, room - n, stdin)) > 0)
        if ((n += got) == room)
            all = realloc(all, room *= 2);
    WordPair *pairs = NULL;
    size_t allocated = 0;
    for (size_t at = 0; all != NULL && at + 8 <= n;) {
        uint64_t length;
        memcpy(&length, all + at, 8);
        long found = words_count(all + at + 8, (size_t)length, &pairs, &allocated);
        at += 8 + length;
        printf("%ld", found);
        for (long k = 0; k < found; k++)
            printf(" %lld:%lld", (long long)pairs[k].column, (long long)pairs[k].count);
        putchar('\n');
    }
    free(pairs);
    free(all);
    return all == NULL;
}
"""

#: A test main printing, per code point past the surrogates' gaps, its lowercase (as str.lower gives one character
#: alone) and its whitespace flag; words_count is called once so that it is used.
TABLE_MAIN = r"""
#include <stdio.h>
int main(void) {
    unsigned char in[4], out[16];
    WordPair *pairs = NULL;
    size_t allocated = 0;
    if (words_count(in, 0, &pairs, &allocated) != 0)
        return 1;
    for (uint32_t point = 0; point < 0x110000; point++) {
        if (point >= 0xD800 && point < 0xE000)
            continue;
        size_t n = write_code_point(point, in), lowered = words_lower(in, n, out);
        printf("%d", (words_flags(point) & WORDS_SPACE) != 0);
        for (size_t k = 0; k < lowered; k += words_point_size(out[k]))
            printf(" %lx", (unsigned long)words_point_at(out + k));
        putchar('\n');
    }
    return 0;
}
"""

SCHEMA = Schema("docs", (Attribute("text", STRING), Attribute("class", NOMINAL, ("n", "y"))))
#: Keep every word a fit meets (unless a setting says otherwise), so that the vocabulary holds the rare ones.
EVERY_WORD = {"words_to_keep": 10**7}
#: The settings the exported tokenizer is held to, by a readable name.
SETTINGS = {
    "defaults": {},
    "keep-every-word": EVERY_WORD,
    "lowercase": {"lowercase": True, **EVERY_WORD},
    "alphabetic lowercase": {"tokenizer": "alphabetic", "lowercase": True, **EVERY_WORD},
    "lowercase stopwords=weka": {"lowercase": True, "stopwords": "weka", **EVERY_WORD},
    "delimiters=non-ascii lowercase": {
        "delimiters": " \\r\\n\\t.,;:'\"()?!é\u00a0—Σ\u2028😀",
        "lowercase": True,
        **EVERY_WORD,
    },
    "delimiters=none": {"delimiters": "", **EVERY_WORD},
    "ngrams=1-3 lowercase": {"ngrams": "1-3", "lowercase": True, **EVERY_WORD},
    "ngrams=2-2 delimiters=comma": {"ngrams": "2-2", "delimiters": ",", **EVERY_WORD},
    "char_ngrams=2-4 lowercase": {"char_ngrams": "2-4", "lowercase": True, **EVERY_WORD},
    "char_ngrams=1-3": {"char_ngrams": "1-3", **EVERY_WORD},
    "hash=10 lowercase stopwords=weka": {"hash": 10, "lowercase": True, "stopwords": "weka"},
    "hash=10 stopwords=weka": {"hash": 10, "stopwords": "weka"},
    "hash=8 ngrams=1-2": {"hash": 8, "ngrams": "1-2"},
    "hash=12 char_ngrams=2-4 lowercase": {"hash": 12, "char_ngrams": "2-4", "lowercase": True},
    "min_df=3 whole_corpus counts": {"min_df": "3", "whole_corpus": True, "counts": True, **EVERY_WORD},
}

#: Bytes that are not UTF-8 as Python's strict decoder takes it: a lone continuation byte, bytes no UTF-8 holds,
#: overlong forms, surrogates, code points past U+10FFFF, sequences cut short (at the end and before ASCII).
NOT_UTF8 = [
    b"\x80",
    b"abc \xbf def",
    b"\xff",
    b"\xfe\xff",
    b"\xc0\xaf",
    b"\xc1\xbf",
    b"\xe0\x80\xaf",
    b"\xe0\x9f\xbf",
    b"\xf0\x8f\xbf\xbf",
    b"\xed\xa0\x80",
    b"\xed\xbf\xbf",
    b"word \xed\xa0\xbd\xed\xb8\x80",
    b"\xf4\x90\x80\x80",
    b"\xf5\x80\x80\x80",
    b"\xf8\x88\x80\x80\x80",
    b"\xe2\x82",
    b"end \xf0\x9f\x98",
    b"\xe2\x82 a",
    b"\xc3",
    b"\xc3a",
]


def grain_texts() -> list[str]:
    """The documents of Reuters grain, as filterkit's CSV reader reads them."""
    source = FileSource(str(GRAIN), 200, "csv")
    return [text for chunk in source.chunks() for text in chunk.text[0]]


def fitted(texts: list[str], **options) -> WordVector:
    """A ``words`` stage fitted on ``texts`` (two classes, by turns)."""
    values = np.zeros((len(texts), 2))
    values[:, 1] = np.arange(len(texts)) % 2
    chain = Chain([WordVector(**options)], class_spec="last")
    chain.fit(MemorySource(SCHEMA, Chunk(values, {0: texts}, None)))
    return chain.stages[0]


def expected_rows(stage: WordVector, texts: list[str]) -> list[list[tuple[int, int]]]:
    """Per text, the stage's transform count: its (column, occurrences) pairs in ascending column."""
    stop_words = stage._fitted_stop_words() if stage.n_columns else NO_STOP_WORDS
    chunk = Chunk(np.zeros((len(texts), 2)), {0: texts}, None)
    indptr, ids, counts = (array.tolist() for array in stage.counted(chunk, stage.vocabulary, False, stop_words))
    return [list(zip(ids[start:end], counts[start:end])) for start, end in zip(indptr, indptr[1:])]


def compiled(source: str, main: str, folder: Path) -> Path:
    """``source`` and a test ``main`` compiled as one file with the flags the exporter's users compile with."""
    path, binary = folder / "words.c", folder / "words"
    path.write_text(source + main, encoding="utf-8")
    made = subprocess.run([COMPILER, *FLAGS, "-o", str(binary), str(path)], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr[-3000:]
    return binary


def counted_in_c(binary: Path, documents: list[bytes]) -> list[int | list[tuple[int, int]]]:
    """Per document, the compiled ``words_count``'s pairs, or its negative result."""
    given = b"".join(struct.pack("<Q", len(document)) + document for document in documents)
    ran = subprocess.run([str(binary)], input=given, capture_output=True, check=True)
    rows: list[int | list[tuple[int, int]]] = []
    for line in ran.stdout.decode().splitlines():
        result, *pairs = line.split(" ")
        if int(result) < 0:
            rows.append(int(result))
            continue
        rows.append([(int(column), int(count)) for column, count in (pair.split(":") for pair in pairs)])
        assert len(rows[-1]) == int(result)
    assert len(rows) == len(documents)
    return rows


def hostile_documents() -> list[str]:
    """Unicode documents made with fixed seeds (tests/test_words_unicode.py's), the sigmas of the issue, every plane,
    emoji, typographic quotes, Unicode spaces, control characters, an empty document, a 1 MB one and tokens longer
    than any buffer."""
    generator = random.Random(78)
    made = [text for text in documents(120, 7801) + documents(60, 7802) if text is not None]
    made += [text for text in ADVERSARIAL if text is not None]
    made += ["ΟΔΟΣ", "ΣΑ Σ", "Σ", "ΑΣ", "ΑΣ.", "'Σ'", "ΟΔΟΣ ΚΑΙ", "ẞ STRAẞE", "İ", "İİ istanbul"]
    made += ["\u201cquoted\u201d \u2018single\u2019 \u00abguillemets\u00bb", "a\u00a0b\u2003c\u3000d\u2009e"]
    made += ["😀 👩\u200d💻 🇩🇪 \U0010fffd \U000f0000 \U00020000", "\x00\x01\x02\x1b[0m\x7f \x0b\x0c\x1c"]
    words = "wheat corn THE the Price. ΣΑΣ İstanbul café 😀".split()
    made.append(" ".join(generator.choice(words) for _ in range(200_000))[: 1 << 20])  # over 1 MB of UTF-8
    made += ["ΑΣ" * 200_000 + "Σ", "x" * 300_000, "é" * 100_001, "word " + "İ" * 50_000 + " end", ""]
    return made


@pytest.fixture(scope="module")
def corpus() -> list[str]:
    return grain_texts()


@pytest.fixture(scope="module")
def hostile() -> list[str]:
    return hostile_documents()


@pytest.mark.parametrize("options", list(SETTINGS.values()), ids=list(SETTINGS))
def test_the_exported_tokenizer_counts_as_the_stage(options, corpus, hostile, tmp_path):
    stage = fitted(corpus + hostile[:60], **options)
    assert refusal(stage) is None
    binary = compiled(words_source(stage), COUNT_MAIN, tmp_path)
    texts = corpus + hostile
    expected = expected_rows(stage, texts)
    found = counted_in_c(binary, [text.encode() for text in texts])
    mismatched = [k for k, (mine, theirs) in enumerate(zip(found, expected)) if mine != theirs]
    assert not mismatched, (texts[mismatched[0]][:200], found[mismatched[0]], expected[mismatched[0]])
    assert sum(map(bool, expected)) > 50  # the documents hold words of the vocabulary


def test_bytes_that_are_not_utf8_are_refused_as_decoding_refuses_them(corpus, tmp_path):
    stage = fitted(corpus[:50], lowercase=True)
    binary = compiled(words_source(stage), COUNT_MAIN, tmp_path)
    for document in NOT_UTF8:
        with pytest.raises(UnicodeDecodeError):
            document.decode("utf-8")
    found = counted_in_c(binary, [*NOT_UTF8, "ok wheat".encode(), "\U0010ffff".encode()])
    assert found[: len(NOT_UTF8)] == [-1] * len(NOT_UTF8)
    assert found[len(NOT_UTF8) :] == expected_rows(stage, ["ok wheat", "\U0010ffff"])


def test_the_tables_are_the_interpreters_lowercase_and_whitespace(corpus, tmp_path):
    stage = fitted(corpus[:20], lowercase=True)
    binary = compiled(words_source(stage), TABLE_MAIN, tmp_path)
    lines = subprocess.run([str(binary)], capture_output=True, check=True, text=True).stdout.splitlines()
    points = [point for point in range(0x110000) if not 0xD800 <= point < 0xE000]
    assert len(lines) == len(points)
    wrong = [
        point
        for point, line in zip(points, lines)
        if line != " ".join([str(int(chr(point).isspace())), *(f"{ord(c):x}" for c in chr(point).lower())])
    ]
    # the capital sigma alone is σ, as str.lower gives it without a cased letter before it
    assert not wrong, [(hex(point), lines[points.index(point)]) for point in wrong[:5]]


#: What a line of the data before tokens.c may be: an include, a setting, an array's start or end, numbers.
DATA_LINE = re.compile(
    r"#include <\w+\.h>|#define WORDS_\w+ (\d+u?|U?INT64_C\(\d+\))|static const (unsigned char|u?int\d+_t) WORDS_\w+"
    r"\[\d+\] = \{|-?\d+(,-?\d+)*,?|\};|"
)
#: Words that would break out of a C string or comment, or that no UTF-8 holds.
HOSTILE_WORDS = ['"', "'", "\\", '\\"', "*/", "/*", "??/", "??=", "a\x00b", "\x00", "new\nline", "cr\rlf", "}; x();"]
HOSTILE_WORDS += ["#define", "%s%n", "\u2028", "\ufeff", "end\\"]


def test_a_vocabulary_of_code_breaking_words_compiles_and_counts_as_the_stage(tmp_path):
    stage = fitted(HOSTILE_WORDS * 2, delimiters="", **EVERY_WORD)
    assert sorted(stage.words) == sorted(HOSTILE_WORDS)
    stage.words = [*stage.words, "\ud800", "a\udcffb", "\ud83d\ude00"]  # lone surrogates, as a model's JSON may hold
    stage._vocabulary = None
    source = words_source(stage)
    shared = resources.files("filterkit").joinpath("ascii_bytes.h").read_text(encoding="utf-8")
    template = shared + resources.files("filterkit.export").joinpath("tokens.c").read_text(encoding="utf-8")
    assert source.endswith(template)
    data = source[: -len(template)].splitlines()
    assert data[0].startswith("/*") and data[1].endswith("*/")  # the comment the exporter writes
    assert [line for line in data[2:] if not DATA_LINE.fullmatch(line)] == []
    binary = compiled(source, COUNT_MAIN, tmp_path)
    texts = [*HOSTILE_WORDS, "\U0001f600", "ab", "", "other"]
    found = counted_in_c(binary, [text.encode() for text in texts])
    assert found == expected_rows(stage, texts)
    assert found[: len(HOSTILE_WORDS)] == [[(stage.words.index(word), 1)] for word in HOSTILE_WORDS]


def test_every_name_defined_is_the_tokenizers_and_every_table_constant(corpus):
    source = words_source(fitted(corpus[:20], hash=6, stopwords="weka", lowercase=True))
    functions = re.findall(r"^(\w+)\(", source, re.MULTILINE)
    tables = re.findall(r"^static const [\w ]+? (\w+)\[", source, re.MULTILINE)
    types = re.findall(r"^} (\w+);", source, re.MULTILINE)
    settings = re.findall(r"^#define (\w+)", source, re.MULTILINE)
    assert "words_count" in functions and "WORDS_VOCABULARY_SLOTS" in tables and "WORDS_STOP_SLOTS" in tables
    # besides WordPair, the names of ascii_bytes.h, which the compiled modules share with the scorer
    shared = {"WordPair", "all_ascii", "valid_utf8", "write_code_point", "murmur3_32", "FILTERKIT_ASCII_BYTES_H"}
    named = [name for name in functions + tables + types + settings if name not in shared]
    assert [name for name in named if not name.lower().startswith("words_")] == []
    # no static data but constant tables: nothing a call shares with another to write
    assert re.findall(r"^static (?!const )\w+ \w+ *[=\[;]", source, re.MULTILINE) == []
    assert re.findall(r"^ +static ", source, re.MULTILINE) == []


def test_what_cannot_be_exported_is_refused_in_one_line(corpus):
    stage = fitted(corpus[:20])
    stage.stem = str.lower  # a stemmer is Python code
    assert "stemmer" in refusal(stage)
    stage = fitted(corpus[:20])
    stage.features = np.array([0, 2])
    assert "converts 2 text attributes" in refusal(stage)
    with pytest.raises(FilterkitError, match="converts 2 text attributes"):
        words_source(stage)
    stage = fitted(corpus[:20], hash=6)
    stage.stop_words = None
    assert "stop words" in refusal(stage)
    stage = fitted(corpus[:20], ngrams="1-2")
    stage.settings = (stage.settings[0], False, False, 3, 2)
    assert "n-grams of 3 to 2" in refusal(stage)


@pytest.mark.nightly
@pytest.mark.parametrize(
    "name",
    [
        "lowercase",
        "delimiters=non-ascii lowercase",
        "ngrams=1-3 lowercase",
        "char_ngrams=2-4 lowercase",
        "hash=10 stopwords=weka",
        "hash=8 ngrams=1-2",
    ],
)
def test_the_tokenizer_is_clean_under_the_sanitizers_and_every_warning(name, corpus, hostile, tmp_path):
    stage = fitted(corpus + hostile[:60], **SETTINGS[name])
    path, binary = tmp_path / "words.c", tmp_path / "words"
    path.write_text(words_source(stage) + COUNT_MAIN, encoding="utf-8")
    strict = ["-std=c99", "-O1", "-g", "-Wall", "-Wextra", "-pedantic", "-Werror", "-fno-sanitize-recover=all"]
    made = subprocess.run(
        [COMPILER, *strict, "-fsanitize=address,undefined", "-o", str(binary), str(path)],
        capture_output=True,
        text=True,
    )
    assert made.returncode == 0, made.stderr[-3000:]
    texts = corpus + hostile
    assert counted_in_c(binary, [text.encode() for text in texts] + NOT_UTF8) == expected_rows(stage, texts) + [
        -1
    ] * len(NOT_UTF8)
