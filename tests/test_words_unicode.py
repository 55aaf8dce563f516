"""The compiled count of ``words`` (``filterkit/_words.c``) on any Unicode against the Python oracle (issue 74,
item 1): random and adversarial documents from every plane — combining marks, case mappings that change a text's
length or depend on its context (İ, ẞ, the final sigma), whitespace that only ``str.split`` knows, lone surrogates —
under every tokenizer setting ``count`` takes and a stemmer, as Python strings and as the ARFF reader's bytes,
fitted and transformed, on one thread and on two; every character with a case property lowercased; and bytes that
are not UTF-8 refused as decoding them refuses them."""

from __future__ import annotations

import random
import sys
import unicodedata
from collections import Counter
from functools import cache

import numpy as np
import pytest
from sklearn.utils import murmurhash3_32
from test_words_compiled import (
    MANY_WORDS,
    assert_counts_as_python,
    chunk_of,
    counted_in_python,
    in_number_order,
    raw_of,
    stage_for,
)

from filterkit import _words  # type: ignore[attr-defined]  # a C extension without stubs
from filterkit.schema import Chunk, RawTexts
from filterkit_plugins.words import HALF_CHUNK_ROWS, WordVector

#: Rows enough that a chunk's halves are counted on two threads, and not an even split.
ROWS = 2 * HALF_CHUNK_ROWS + 31

#: Ranges of code points drawn from: the Basic Multilingual Plane beyond ASCII (surrogates apart), emoji, the
#: Supplementary Multilingual Plane, CJK extension B (plane 2), tags (plane 14), private use (planes 15 and 16).
CODE_POINT_RANGES = [
    (0x80, 0xD7FF),
    (0xE000, 0xFFFF),
    (0x1F300, 0x1FAFF),
    (0x10000, 0x1FFFF),
    (0x20000, 0x2A6DF),
    (0xE0000, 0xE007F),
    (0xF0000, 0xFFFFF),
    (0x100000, 0x10FFFF),
]
#: Letters whose lowercase is not one code point of the same UTF-8 length, or depends on their neighbours,
#: or that only one script's rules map: İ (two code points), ẞ, the Kelvin and Ohm signs, Ⱥ (two bytes to three),
#: Σ, titlecase ǅ, Cherokee, Georgian Mtavruli, Deseret, Adlam.
CASED = list("İIıiẞßΣσςǅǄǆ\u212a\u2126\u212bȺȾⱯⱢ\u13a0\u13f5\u13f8\uab70\uabbf\u1c90\u1cbf\U00010400\U00010428")
CASED += ["\U0001e900", "\U0001e921", "\U0001e922", "A", "z", "Ω"]
#: Characters the final sigma's context skips (case-ignorable): apostrophes, the soft hyphen, '.', ':', the middle
#: dot, U+0345 (also cased), joiners, the byte-order mark, a combining grapheme joiner.
CASE_IGNORABLE = ["'", "\u00ad", "\u2019", ".", ":", "\u00b7", "\u0345", "\u200d", "\u200c", "\ufeff", "\u034f"]
#: Whitespace ``str.split`` cuts at (the char n-grams' words) beyond ASCII's, and two characters it does not.
SPACES = ["\u00a0", "\u0085", "\u1680", *map(chr, range(0x2000, 0x200B)), "\u2028", "\u2029", "\u202f", "\u205f"]
SPACES += ["\u3000", "\x1c", "\x1d", "\x1e", "\x1f", "\x0b", "\x0c", "\u180e", "\u200b"]
CONTROLS = ["\x00", "\x01", "\x7f", "\x80", "\x9f", "\x1b"]
ASCII = list("abcXYZ019 -_") + list(" \r\n\t.,;:'\"()?!") + ["\\", "the", "The", "and", "k"]
#: Whole words: the stop words of :data:`STOP_WORD_LINES` in other cases, and the accented word of a mostly ASCII
#: document.
WORDS = ["café", "naïve", "Straße", "STRAẞE", "straße", "ΚΑΙ", "καί", "ΚΑΊ", "İstanbul", "İSTANBUL", "i\u0307stanbul"]
WORDS += [
    "ΟΔΟΣ",
    "ΣΑΣ",
    "σας",
    "ǅemal",
    "😀",
    "👩\u200d💻",
    "🇩🇪",
    "e\u0301",
    "\u212aelvin",
    "ꭰꭱ",
    "\U00010400\U00010428",
]
#: A stop word file: not ASCII, lowercased by ``read_stopwords`` (İstanbul becomes i̇stanbul, the Kelvin sign k),
#: after a byte-order mark, with a comment and blank lines.
STOP_WORD_LINES = ["\ufeffStraße", "# not a word", "ΚΑΊ", "", "İstanbul", "σας", "😀", "\u212a", "the", "ǅemal"]
STOP_WORD_FILE = "<the stop word file>"

#: Every tokenizer setting ``count`` takes, by a readable name.
NAMED_OPTIONS = {
    "defaults": {},
    "lowercase": {"lowercase": True},
    "lowercase stopwords=weka": {"lowercase": True, "stopwords": "weka"},
    "stopwords=file": {"stopwords": STOP_WORD_FILE},
    "lowercase stopwords=file": {"lowercase": True, "stopwords": STOP_WORD_FILE},
    "ngrams=1-2 lowercase": {"ngrams": "1-2", "lowercase": True},
    "ngrams=2-3 stopwords=file": {"ngrams": "2-3", "stopwords": STOP_WORD_FILE},
    "alphabetic lowercase ngrams=1-3": {"tokenizer": "alphabetic", "lowercase": True, "ngrams": "1-3"},
    "delimiters=none lowercase": {"delimiters": "", "lowercase": True},
    "delimiters=none ngrams=1-2": {"delimiters": "", "ngrams": "1-2"},
    "delimiters=accent-dot-emoji": {"delimiters": " é·😀\u00a0\\t", "ngrams": "1-2", "lowercase": True},
    "delimiters=mark-sigma-separator": {"delimiters": "\u0301Σ\u2028,", "lowercase": True},
    "delimiters=accent-nbsp ngrams=1-3": {"delimiters": "é\u00a0", "ngrams": "1-3", "lowercase": True},
    "char_ngrams=1-3": {"char_ngrams": "1-3"},
    "char_ngrams=2-5 lowercase": {"char_ngrams": "2-5", "lowercase": True},
    "hash=8": {"hash": 8},
    "hash=8 lowercase stopwords=file": {"hash": 8, "lowercase": True, "stopwords": STOP_WORD_FILE},
    "hash=8 char_ngrams=2-4 lowercase": {"hash": 8, "char_ngrams": "2-4", "lowercase": True},
}
#: Each with its own seed for its documents.
OPTION_SETS = [pytest.param(options, seed, id=name) for seed, (name, options) in enumerate(NAMED_OPTIONS.items())]

#: Documents each option set meets besides the random ones: the final sigma in its contexts, the cases whose
#: lowercase is longer or shorter, every plane's last character, marks with nothing to combine with.
ADVERSARIAL = [
    "",
    None,
    "ΟΔΟΣ.ΚΑΙ ΣΑΣ Σ ΑΣ'Σ ΑΣ\u0345 ΑΣ\u00ad ΑΣ\u2019Α Α.Σ Α:Σ.Α 'Σ' ΑΣΑ ΑΣ\U0001e900",
    "İİ İ i\u0307 İSTANBUL İstanbul ẞ STRAẞE Straße \u212aelvin \u2126 Ⱥ",
    "ǅ ǆ Ǆ ǅemal \u13a0\u13a1 \uab70 \u1c90\u1c91 \U00010400\U00010428 \U0001e900\U0001e922",
    "\U0010ffff \U000e0001\U000e0041 \U000f0000 \U00100000 \U00020000 \uffff \ufffe \ufdd0",
    "\u0301 a\u0301\u20d0 \u0345 e\u0301\u0302\u0303",
    "\ufeffword x\u00a0y\u3000z a\u2028b\u2029c d\u0085e f\u1680g h\u180ei j\u200bk \x1cl\x1fm",
    "the The THE a ΚΑΊ καί Καί σας ΣΑΣ 😀 \u212a k K ǅemal ǄEMAL",
    "\x00\x01 \x7f\x80\x9f \x1b[0m",
]
#: Lone surrogates a Python string may hold (no UTF-8 bytes do): a pair written apart is two characters, not one.
SURROGATES = ["\ud83d\ude00 \ud83d\ude00", "a\udcffb Ä\ud800 \udcff\udcfe", "\udbff\udfff \ud800\ud800.\udfff"]


def stop_word_file(tmp_path) -> str:
    """:data:`STOP_WORD_LINES` written as a file, its path."""
    path = tmp_path / "stopwords.txt"
    path.write_text("\n".join(STOP_WORD_LINES), encoding="utf-8")
    return str(path)


def unicode_stage(options: dict, tmp_path) -> WordVector:
    """``stage_for(**options)``, :data:`STOP_WORD_FILE` made a real file."""
    given = {key: stop_word_file(tmp_path) if value == STOP_WORD_FILE else value for key, value in options.items()}
    return stage_for(**given)


def random_code_point(generator: random.Random) -> str:
    """A code point of one of :data:`CODE_POINT_RANGES`, each range as likely as another."""
    first, last = generator.choice(CODE_POINT_RANGES)
    return chr(generator.randint(first, last))


def sigma_in_context(generator: random.Random) -> str:
    """A capital sigma between runs of cased letters (or none) and case-ignorable characters (or none)."""
    around = [
        "".join(generator.choices(CASED, k=generator.randrange(3))),
        "".join(generator.choices(CASE_IGNORABLE, k=generator.randrange(3))),
    ]
    after = [
        "".join(generator.choices(CASE_IGNORABLE, k=generator.randrange(3))),
        "".join(generator.choices(CASED, k=generator.randrange(3))),
    ]
    return "".join(around) + "Σ" * generator.randint(1, 2) + "".join(after)


def piece(generator: random.Random, surrogates: bool) -> str:
    """One piece of a random document: a character of one of the lists above, a code point of any plane, a
    combining mark, a whole word, a sigma in its context, or (with ``surrogates``) a lone surrogate."""
    kind = generator.randrange(11 if surrogates else 10)
    if kind == 0:
        return random_code_point(generator)
    if kind == 1:
        return chr(generator.choice([generator.randint(0x300, 0x36F), generator.randint(0x20D0, 0x20F0)]))
    if kind == 2:
        return sigma_in_context(generator)
    if kind == 3:
        return generator.choice(WORDS)
    if kind == 10:
        return chr(generator.randint(0xD800, 0xDFFF))
    return generator.choice([CASED, CASE_IGNORABLE, SPACES, CONTROLS, ASCII, ASCII][kind - 4])


def documents(n: int, seed: int, surrogates: bool = False) -> list[str | None]:
    """``n`` random documents, then :data:`ADVERSARIAL`: by turns pieces of any kind (one in ten long), ASCII words
    with one word that is not ASCII (the common case), sigmas in their contexts, ASCII only, and code points of every
    plane between spaces; with ``surrogates``, lone surrogates among the pieces and :data:`SURROGATES`."""
    generator = random.Random(seed)
    made: list[str | None] = []
    for k in range(n):
        kind, length = k % 5, generator.randrange(300 if k % 10 == 0 else 40)
        if kind == 0:
            made.append("".join(piece(generator, surrogates) for _ in range(length)))
        elif kind == 1:
            words = [generator.choice(["wheat", "Corn", "the", "RICE", "a", "price"]) for _ in range(length // 4 + 1)]
            words.insert(generator.randrange(len(words) + 1), generator.choice(WORDS))
            made.append(" ".join(words) + generator.choice(["", ".", " ", "!"]))
        elif kind == 2:
            made.append(generator.choice(SPACES + [" ", "."]).join(sigma_in_context(generator) for _ in range(3)))
        elif kind == 3:
            made.append("".join(generator.choices(ASCII, k=length)))
        else:
            made.append(" ".join(random_code_point(generator) * generator.randint(1, 3) for _ in range(length // 3)))
    return made + ADVERSARIAL + (SURROGATES if surrogates else [])


def column_of(token: str, n_columns: int) -> int:
    """HashingVectorizer's column of ``token`` (|MurmurHash3| mod n) on its UTF-8 bytes, surrogates as
    ``surrogatepass`` writes them."""
    return abs(murmurhash3_32(token.encode("utf-8", "surrogatepass"), seed=0)) % n_columns


def hashed_in_python(stage: WordVector, chunk: Chunk, stopwords: frozenset[str]) -> list[list[int]]:
    """The oracle of a ``--hash`` transform's ``stage.counted``: per row, the columns its tokens hash into,
    ascending, and their occurrences."""
    indptr, pairs = [0], []
    for texts in zip(*(chunk.text[int(position)] for position in stage.features)):
        counted = Counter(
            column_of(token, stage.n_columns)
            for text in texts
            if text is not None
            for token in stage.tokens_of(text, stopwords)
        )
        pairs += sorted(counted.items())
        indptr.append(len(pairs))
    return [indptr, [pair[0] for pair in pairs], [pair[1] for pair in pairs]]


def assert_counted_as_python_counts(stage: WordVector, counted_chunk: Chunk, oracle_chunk: Chunk) -> None:
    """``stage.counted`` on ``counted_chunk`` is the Python oracle's on ``oracle_chunk`` (the same documents): a fit's
    rows and words in the order met, a transform's rows over a third of them (or, with ``--hash``, its columns)."""
    stop_words = stage._given_stop_words()
    compiled, words = _words.Vocabulary(), []
    fitted = in_number_order(stage.counted(counted_chunk, compiled, True, stop_words))
    assert fitted == counted_in_python(stage, oracle_chunk, words, True, stop_words.words)
    assert compiled.words == words and len(words) > 50
    if stage.n_columns:  # the transform's tokens hash into columns; stop words are left out as the fit's were
        found = stage.counted(counted_chunk, compiled, False, stop_words)
        assert [a.tolist() for a in found] == hashed_in_python(stage, oracle_chunk, stop_words.words)
    else:
        kept = words[::3]
        found = stage.counted(counted_chunk, _words.Vocabulary(kept), False)
        assert [a.tolist() for a in found] == counted_in_python(stage, oracle_chunk, list(kept), False)


@pytest.mark.parametrize("options, seed", OPTION_SETS)
def test_strings_of_any_unicode_count_as_python_counts_them(options, seed, tmp_path):
    """Python strings, lone surrogates among them (a token holding one is numbered by its ``surrogatepass`` bytes)."""
    stage = unicode_stage(options, tmp_path)
    texts = documents(ROWS, seed=seed, surrogates=True)
    chunk = chunk_of(list(reversed(texts)), texts)
    assert_counted_as_python_counts(stage, chunk, chunk)


@pytest.mark.parametrize("options, seed", OPTION_SETS)
def test_the_readers_bytes_of_any_unicode_count_as_python_counts_their_strings(options, seed, tmp_path):
    stage = unicode_stage(options, tmp_path)
    titles, texts = ([text or "" for text in documents(ROWS, seed + offset)] for offset in (100, 200))
    as_bytes = Chunk(np.zeros((len(texts), 3)), {0: raw_of(titles), 1: raw_of(texts)})
    assert_counted_as_python_counts(stage, as_bytes, chunk_of(titles, texts))
    assert as_bytes.raw_text(0) is not None and as_bytes.raw_text(1) is not None  # counted from the bytes


@pytest.mark.parametrize("name", ["lowercase", "lowercase stopwords=file", "ngrams=1-2 lowercase"])
def test_a_vocabulary_past_the_caches_counts_unicode_as_python_counts_it(name, tmp_path):
    """Tokens looked up in batches (a vocabulary of more than 2**16 words) number and count as one at a time, when
    lowercasing makes them longer than their text (Ⱥ is two bytes, ⱥ three; İ two, i̇ three) in long documents."""
    stage = unicode_stage(NAMED_OPTIONS[name], tmp_path)
    growing = [f"Ⱥ{k}İ{'Ⱥ' * (k % 7)}" for k in range(0, 14_000, 7)]
    texts = documents(ROWS, seed=9, surrogates=True) + [
        " ".join(growing),
        " ".join(MANY_WORDS[k].upper() + "ΣΣ" for k in range(0, 70_000, 13)),
        "\u00a0".join(reversed(growing)) + " W5 İİ",
    ]
    chunk = chunk_of(list(reversed(texts)), texts)
    assert_counts_as_python(stage, chunk, MANY_WORDS, 2_000, lambda words: words[:-7])


def stem_of(word: str) -> str:
    """A stemmer for the tests: a word's first four characters, uppercased when its length is odd (ß becomes SS,
    ǆ Ǆ; the stop word test lowercases the stem again)."""
    return word[:4].upper() if len(word) % 2 else word[:4]


@pytest.mark.parametrize(
    "name",
    ["lowercase stopwords=file", "ngrams=2-3 stopwords=file", "delimiters=accent-dot-emoji", "hash=8"],
)
def test_a_stemmer_stems_the_compiled_tokens_as_python_stems_them(name, tmp_path):
    """A stemmer is called per token the compiled count cut and lowercased; on strings and on the reader's bytes."""
    stage = unicode_stage(NAMED_OPTIONS[name], tmp_path)
    stage.stem = stem_of
    texts = documents(ROWS, seed=300, surrogates=True)
    chunk = chunk_of(list(reversed(texts)), texts)
    assert_counted_as_python_counts(stage, chunk, chunk)
    plain = [text or "" for text in documents(ROWS, seed=301)]
    as_bytes = Chunk(np.zeros((len(plain), 3)), {0: raw_of(plain), 1: raw_of(plain[::-1])})
    assert_counted_as_python_counts(stage, as_bytes, chunk_of(plain, plain[::-1]))


@cache
def case_candidates() -> list[str]:
    """Every character past ASCII but the letters without case (Lo), private use, unassigned code points and
    surrogates: those whose lowercase, casedness or case-ignorability ``str.lower`` reads, and the whitespace."""
    return [chr(c) for c in range(0x80, 0x110000) if unicodedata.category(chr(c)) not in ("Lo", "Co", "Cn", "Cs")]


@pytest.mark.parametrize(
    "options",
    [{"delimiters": " ", "lowercase": True}, {"char_ngrams": "1-2", "lowercase": True}],
    ids=["delimiters=space lowercase", "char_ngrams=1-2 lowercase"],
)
def test_every_character_with_a_case_property_is_lowercased_as_python_lowercases_it(options):
    """Each candidate alone, between a cased letter and a capital sigma, after one (the sigma is final unless it
    is cased), and before one: its own lowercase and whether it is cased or case-ignorable, all of them."""
    texts = [
        " ".join(f"{c} Α{c}Σ ΑΣ{c} {c}Σ{c}" for c in case_candidates()[start : start + 100])
        for start in range(0, len(case_candidates()), 100)
    ]
    assert len(texts) >= 2 * HALF_CHUNK_ROWS
    stage = stage_for(**options)
    chunk = chunk_of([None] * len(texts), texts)
    compiled, words = _words.Vocabulary(), []
    counted = in_number_order(stage.counted(chunk, compiled, True))
    assert counted == counted_in_python(stage, chunk, words, True) and compiled.words == words


@pytest.mark.parametrize(
    "options, text, tokens",
    [
        ({"lowercase": True}, "ΟΔΟΣ.ΚΑΙ ΣΑΣ", ["οδος", "και", "σας"]),
        ({"lowercase": True}, "İstanbul ẞ \u212a\u2126", ["i\u0307stanbul", "ß", "kω"]),
        ({"delimiters": "", "lowercase": True}, "ΑΣ ΑΣ\u00ad Σ", ["ας ας\u00ad σ"]),
        ({"delimiters": "", "ngrams": "1-2"}, "\x01 a\u00a0b \x1f", ["a\u00a0b"]),
        ({"lowercase": True, "stopwords": STOP_WORD_FILE}, "STRASSE STRAẞE İSTANBUL i\u0307stanbul K", ["strasse"]),
        ({"tokenizer": "alphabetic", "lowercase": True}, "Ünïcode K\u212aX", ["n", "code", "k", "x"]),
        ({"delimiters": " é\u0301"}, "cafés cafe\u0301s", ["caf", "s", "cafe"]),
        ({"delimiters": " \u0307", "lowercase": True}, "İx i\u0307y", ["i\u0307x", "i", "y"]),
        ({"delimiters": "é", "ngrams": "1-2"}, " a é\x01b ", ["a", "b", "a  \x01b"]),
        (
            {"char_ngrams": "1-2", "lowercase": True},
            "Aß\u00a0İ",
            [" ", "a", "ß", " a", "aß", "ß ", "i", "\u0307", " i", "i\u0307", "\u0307 "],
        ),
        ({"char_ngrams": "3-3"}, "😀\u2003\U0010ffffé", [" 😀 ", " \U0010ffffé", "\U0010ffffé "]),
        ({}, "a\ud800b \udfff", ["a\ud800b", "\udfff"]),
    ],
    ids=[
        "final sigma",
        "longer and shorter lowercase",
        "final sigma across the whole text",
        "java trim of an undelimited text",
        "stop words lowercased",
        "alphabetic leaves letters beyond ASCII out",
        "delimiters beyond ASCII",
        "cut before lowercasing makes a delimiter",
        "java trim of ngrams holding spaces",
        "char ngrams of a lowercase longer than its text",
        "char ngrams beyond the plane",
        "lone surrogates",
    ],
)
def test_a_fit_on_tricky_text_numbers_the_tokens_java_and_scikit_learn_make(options, text, tokens, tmp_path):
    """The words, in the order met, that Weka's Java (toLowerCase(Locale.ROOT), StringTokenizer, trim) and
    scikit-learn's ``char_wb`` make of one document."""
    stage = unicode_stage(options, tmp_path)
    vocabulary = _words.Vocabulary()
    indptr, ids, counts = stage.counted(chunk_of([None], [text]), vocabulary, True, stage._given_stop_words())
    assert vocabulary.words == tokens and sorted(ids.tolist()) == list(range(len(tokens)))
    assert list(dict.fromkeys(stage.tokens_of(text, stage._given_stop_words().words))) == tokens


#: Bytes the ARFF reader cannot hold as a text: surrogates written as UTF-8, bytes that begin nothing, truncated and
#: overlong sequences, a code point beyond U+10FFFF.
NOT_UTF8 = [
    pytest.param(b"\xed\xa0\x80", id="surrogate"),
    pytest.param(b"caf\xed\xbf\xbf", id="low surrogate after ascii"),
    pytest.param(b"\xff", id="ff"),
    pytest.param(b"a b \x80", id="lone continuation"),
    pytest.param(b"word \xe2\x82", id="truncated at the end"),
    pytest.param(b"\xe2\x82 x", id="truncated before a space"),
    pytest.param(b"\xf0\x9f\x98", id="truncated emoji"),
    pytest.param(b"\xc0\xaf", id="overlong slash"),
    pytest.param(b"\xe0\x80\xaf", id="overlong three bytes"),
    pytest.param(b"ok \xf4\x90\x80\x80", id="beyond u+10ffff"),
    pytest.param("é ".encode() + b"\xc3", id="truncated after valid"),
]
DECODING_OPTION_SETS = [
    pytest.param({}, id="defaults"),
    pytest.param({"lowercase": True, "ngrams": "1-2"}, id="lowercase ngrams=1-2"),
    pytest.param({"char_ngrams": "2-4"}, id="char_ngrams=2-4"),
    pytest.param({"hash": 8}, id="hash=8"),
]


def raw_of_bytes(documents: list[bytes]) -> RawTexts:
    """``raw_of``'s column for documents given as bytes, whatever they hold."""
    return RawTexts(b"".join(documents), np.cumsum([len(document) for document in documents], dtype=np.int64))


@pytest.mark.parametrize("options", DECODING_OPTION_SETS)
@pytest.mark.parametrize("document", NOT_UTF8)
def test_bytes_that_are_not_utf8_raise_what_decoding_them_raises(options, document):
    """What decoding the one document's bytes (``bytes.decode``) raises, with its bytes and positions: in a short
    chunk, at the end of a chunk's second half, and where both halves hold one (the first half's comes first)."""
    stage = stage_for(**options)
    with pytest.raises(UnicodeDecodeError) as expected:
        document.decode("utf-8")
    plain = "wheat CORN café"[: 1 + len(document) % 15].encode()
    for texts in ([plain, document], [plain] * (ROWS - 1) + [document], [plain, document] + [plain] * ROWS + [b"\xff"]):
        chunk = Chunk(np.zeros((len(texts), 3)), {0: raw_of_bytes([b""] * len(texts)), 1: raw_of_bytes(texts)})
        for add in (True, False):
            with pytest.raises(UnicodeDecodeError) as raised:
                stage.counted(chunk, _words.Vocabulary(["wheat", "café"]), add, stage._given_stop_words())
            assert raised.value.args == expected.value.args and str(raised.value) == str(expected.value)


@pytest.mark.skipif(sys.version_info >= (3, 13), reason="Python 3.13 made the case tables the C path uses internal")
@pytest.mark.parametrize(
    "name",
    [
        "defaults",
        "lowercase stopwords=file",
        "ngrams=1-2 lowercase",
        "char_ngrams=2-5 lowercase",
        "hash=8 lowercase stopwords=file",
    ],
)
def test_documents_that_are_not_ascii_are_counted_without_the_python_tokenizer(name, tmp_path):
    """Accented, Greek and emoji documents, as strings and as the reader's bytes, are cut in C (issue 74, item 1)."""
    stage = unicode_stage(NAMED_OPTIONS[name], tmp_path)
    asked = []
    tokens_of = stage.tokens_of
    stage.tokens_of = lambda text, stopwords: asked.append(text) or tokens_of(text, stopwords)
    texts = ["Plain ASCII text", "un café crème", "Straße naïve ΟΔΟΣ", "emoji 😀 here"] * HALF_CHUNK_ROWS
    chunk = chunk_of([None] * len(texts), texts)
    stop_words = stage._given_stop_words()
    compiled, words = _words.Vocabulary(), []
    counted = in_number_order(stage.counted(chunk, compiled, True, stop_words))
    as_bytes = Chunk(chunk.values, {0: raw_of([""] * len(texts)), 1: raw_of(texts)})
    from_bytes = in_number_order(stage.counted(as_bytes, _words.Vocabulary(), True, stop_words))
    assert asked == []
    stage.tokens_of = tokens_of
    assert counted == from_bytes == counted_in_python(stage, chunk, words, True, stop_words.words)
    assert compiled.words == words


def test_words_holding_unicode_spaces_read_back_in_liac_arff_with_their_names(run_filterkit, tmp_path):
    """``words`` splits on ASCII delimiters (Weka's), so a word may hold U+00A0 or U+3000: its declaration is quoted,
    and liac-arff (the interop format) reads the names filterkit wrote (it failed: BadAttributeType)."""
    import arff as liac

    path = tmp_path / "spaces.arff"
    path.write_text("@relation t\n@attribute text string\n@attribute class {a,b}\n@data\n'caf\xa0noir x\u3000y',a\n")
    result = run_filterkit(path, "words")
    assert result.status == 0, result.stderr
    names = [name for name, _ in liac.loads(result.stdout.decode("utf-8"))["attributes"]]
    assert names == ["class", "caf\xa0noir", "x\u3000y"]


def test_the_python_api_counts_words_holding_lone_surrogates():
    """docs/algorithms.md §12 orders such words (only the Python API can give them); their fit failed while sizing
    the output's names (a strict UTF-8 encoding: UnicodeEncodeError)."""
    from filterkit.sklearn import WordVector

    vectorizer = WordVector(counts=True)
    counts = vectorizer.fit_transform(["b\ud800 c c", "d a\ud83d\ude00"], ["p", "q"]).toarray()
    names = list(vectorizer.get_feature_names_out())
    assert sorted(names) == sorted(["b\ud800", "c", "d", "a\ud83d\ude00"])
    assert counts[0, names.index("c")] == 2 and counts[1, names.index("a\ud83d\ude00")] == 1
