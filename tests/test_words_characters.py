"""``words --char-ngrams MIN-MAX`` (issue 51 item 2): character n-grams within word boundaries, the
vocabulary and counts of scikit-learn's ``CountVectorizer(analyzer="char_wb")``, by the compiled counter
(ASCII documents) and the Python tokenizer (the others) alike."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer

from filterkit import _words  # type: ignore[attr-defined]  # a C extension without stubs
from filterkit.arff import read_arff
from filterkit.arff.tokens import quote
from filterkit.errors import OptionError
from filterkit.schema import NOMINAL, STRING, Attribute, Chunk, Schema
from filterkit.stage import Context
from filterkit.testing import read_output, run_filterkit
from filterkit_plugins.words import WordVector

GRAIN = Path("/usr/share/doc/weka/examples/ReutersGrain-train.arff")

#: Documents whose words the ASCII and the Unicode rules of white space and lowercasing both cut: Python's
#: str.split white space (\v, \f, \x1c-\x1f; \x85, U+00A0, U+2003 in the non-ASCII ones), one-letter words,
#: punctuation kept inside words, letters whose lowercase is longer (İ) or depends on the word's end (Σ).
DOCUMENTS = [
    "Wheat and CORN, rice; wheat.",
    "a b  cc\tddd\n\x0beeee\x0cfffff\x1cg\x1d h\x1e\x1fi",
    "U.S. grain-exports rose 5.4 pct (to 1,234 mln)",
    "",
    "   ",
    "ΟΔΟΣ ΚΑΙ σας Σ",
    "İstanbul STRASSE Straße\u00a0café\u2003naïve\x85end",
    "emoji 😀😀 x😀y",
    "Ölpreise steigen, ölpreise fallen",
]


def arff_of(texts: list[str]) -> bytes:
    """An ARFF file of one string attribute holding ``texts`` and a two-label class."""
    rows = "".join(f"{quote(text)},{'ab'[k % 2]}\n" for k, text in enumerate(texts))
    return f"@relation docs\n@attribute text string\n@attribute class {{a,b}}\n@data\n{rows}".encode()


def words_and_vectorizer(texts: list[str], sizes: tuple[int, int], lowercase: bool, *options: str):
    """filterkit's and CountVectorizer's counts of every character n-gram of ``texts``, as two CSR
    matrices whose columns are the same n-grams in the same order, and those n-grams: sparse, since
    Reuters' n-grams as dense matrices took 5.6 GB (:func:`assert_same_counts` compares them)."""
    flags = ["--char-ngrams", f"{sizes[0]}-{sizes[1]}", "--counts", "--words-to-keep", "100000000", "--prefix", "#"]
    run = run_filterkit(
        "-q", *options, "-", "words", *flags, *(["--lowercase"] if lowercase else []), stdin=arff_of(texts)
    )
    assert run.status == 0, run.stderr
    schema, chunk = read_output(run.stdout)
    names = [attribute.name.removeprefix("#") for attribute in schema.attributes[1:]]  # "class" is an n-gram too
    assert schema.attributes[0].name == "class"
    vectorizer = CountVectorizer(analyzer="char_wb", ngram_range=sizes, lowercase=lowercase)
    expected = vectorizer.fit_transform(texts)
    assert sorted(names) == sorted(vectorizer.vocabulary_)
    columns = [vectorizer.vocabulary_[name] for name in names]
    ours = chunk.values if chunk.is_sparse else sp.csr_matrix(chunk.values)
    return sp.csr_matrix(ours[:, 1:]), sp.csr_matrix(expected[:, columns]), names


def assert_same_counts(ours, theirs) -> None:
    """The two count matrices hold the same value in every cell (0s included): no cell differs."""
    assert ours.shape == theirs.shape
    assert (ours != theirs).nnz == 0


@pytest.mark.parametrize("sizes", [(1, 1), (1, 3), (2, 5), (4, 6)])
@pytest.mark.parametrize("lowercase", [True, False])
def test_unicode_documents_give_count_vectorizer_s_char_wb_counts(sizes, lowercase):
    ours, theirs, names = words_and_vectorizer(DOCUMENTS, sizes, lowercase)
    assert_same_counts(ours, theirs)
    assert ("οδος " in names) == (lowercase and sizes[0] <= 5 <= sizes[1])  # ΟΔΟΣ's sigma lowercased as final
    assert not any(" " in name.strip() for name in names)  # spaces pad words: none inside an n-gram


@pytest.mark.slow
@pytest.mark.skipif(not GRAIN.exists(), reason=f"Weka's Reuters documents are not installed ({GRAIN})")
@pytest.mark.parametrize("sizes, lowercase", [((2, 5), True), ((1, 3), False)])
def test_reuters_documents_give_count_vectorizer_s_char_wb_counts(sizes, lowercase):
    _, chunk = read_arff(GRAIN)
    texts = [text or "" for text in chunk.text[0]]
    ours, theirs, names = words_and_vectorizer(texts, sizes, lowercase)
    assert_same_counts(ours, theirs)
    assert len(names) > 10_000 and ours.sum() > 1_000_000


@pytest.mark.parametrize("options", [{"lowercase": True}, {}])
def test_the_compiled_count_is_the_python_count_of_character_ngrams(options):
    # every document through the compiled counter (ASCII) and through tokens_of (the Python fallback)
    schema = Schema("docs", (Attribute("text", STRING), Attribute("class", NOMINAL, ("a", "b"))))
    stage = WordVector(char_ngrams="1-4", **options)
    stage.prepare(schema, Context(class_index=1))
    texts = [text for text in DOCUMENTS if text.isascii()] + ["Mixed CASE words, Of ASCII\x1ftext", "x"]
    chunk = Chunk(np.zeros((len(texts), 2)), {0: texts})
    vocabulary = _words.Vocabulary()
    indptr, ids, counts = stage.counted(chunk, vocabulary, True)
    words = vocabulary.words
    for row, text in enumerate(texts):
        compiled = {
            words[i]: n for i, n in zip(ids[indptr[row] : indptr[row + 1]], counts[indptr[row] : indptr[row + 1]])
        }
        in_python: dict[str, int] = {}
        for token in stage.tokens_of(text):
            in_python[token] = in_python.get(token, 0) + 1
        assert compiled == in_python, text


def test_character_ngrams_give_the_same_bytes_for_any_chunk_size():
    outputs = {
        rows: run_filterkit(
            "--chunk-rows", rows, "-", "words", "--char-ngrams", "2-4", "--lowercase", stdin=arff_of(DOCUMENTS * 20)
        ).stdout
        for rows in ("1", "7", "10000")
    }
    assert len(set(outputs.values())) == 1 and outputs["1"].count(b"\n") > 100


def test_a_saved_character_ngram_model_applies_as_it_was_fitted(tmp_path):
    model = tmp_path / "model.json"
    data = tmp_path / "docs.arff"
    data.write_bytes(arff_of(DOCUMENTS))
    fitted = run_filterkit("--save-model", model, data, "words", "--char-ngrams", "1-3", "--counts")
    assert fitted.status == 0, fitted.stderr
    applied = run_filterkit("apply", model, data)
    assert applied.status == 0, applied.stderr
    assert applied.stdout.split(b"@data")[1] == fitted.stdout.split(b"@data")[1]


@pytest.mark.parametrize(
    "options, named",
    [
        ({"ngrams": "1-2"}, "--ngrams"),
        ({"stopwords": "weka"}, "--stopwords"),
        ({"tokenizer": "alphabetic"}, "--tokenizer alphabetic"),
        ({"delimiters": " "}, "--delimiters"),
        ({"stemmer": "any", "ngrams": "1-1"}, "--ngrams or --stemmer"),
    ],
)
def test_character_ngrams_refuse_the_word_tokenizers_options(options, named):
    cut = "its words are the runs of non-whitespace, as scikit-learn's char_wb cuts them"
    with pytest.raises(OptionError, match=f"option --char-ngrams: {cut}, so it takes no {named}$"):
        WordVector(char_ngrams="2-4", **options)


def test_the_option_error_reaches_the_command_line_as_one_usage_line():
    run = run_filterkit("-", "words", "--char-ngrams", "2-4", "--ngrams", "1-2", stdin=arff_of(DOCUMENTS))
    assert run.status == 2 and run.stdout == b"" and "Traceback" not in run.stderr
    assert run.stderr.endswith("so it takes no --ngrams\n")


@pytest.mark.parametrize("given", ["0-2", "3-2", "1-21", "2", "a-b"])
def test_character_ngram_sizes_that_are_not_min_to_max_are_refused(given):
    with pytest.raises(OptionError, match=r"option --char-ngrams: .* is not MIN-MAX with 1 ≤ MIN ≤ MAX ≤ 20"):
        WordVector(char_ngrams=given)
