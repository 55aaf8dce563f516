"""``words --ngrams`` and ``--tokenizer alphabetic`` (Weka 3.6's NGramTokenizer and AlphabeticTokenizer).

Weka itself is the oracle in ``tests/test_words.py`` (Reuters grain and corn, and edge-case documents);
these are the quick checks of the same rules."""

from __future__ import annotations

import numpy as np
import pytest

from chain_helpers import REAL
from filterkit.errors import OptionError
from filterkit.runner import Chain
from filterkit.schema import NOMINAL, STRING, Attribute, Chunk, Schema
from filterkit.sources import MemorySource
from filterkit.testing import check_stage, read_output, run_filterkit
from filterkit.word_tokens import tokenizer, unescaped
from filterkit_plugins.words import WordVector

SAMPLE = REAL / "reuters_grain_sample.arff"
WEKA = unescaped(WordVector().params["delimiters"])


def _fitted(texts: list[tuple[str | None, str | None]], **options) -> WordVector:
    schema = Schema("d", (Attribute("a", STRING), Attribute("b", STRING), Attribute("class", NOMINAL, ("x", "y"))))
    chunk = Chunk(np.zeros((len(texts), 3)), {0: [t[0] for t in texts], 1: [t[1] for t in texts]}, None)
    chain = Chain([WordVector(**options)], class_spec="last")
    chain.fit(MemorySource(schema, chunk))
    return chain.stages[0]


def test_ngrams_are_the_runs_of_min_to_max_consecutive_words():
    grams = tokenizer(WEKA, (1, 2))
    assert sorted(grams("Wheat, corn (maize) up")) == sorted(
        ["Wheat", "corn", "maize", "up", "Wheat corn", "corn maize", "maize up"]
    )
    assert list(tokenizer(WEKA, (2, 3))("a b c")) == ["a b", "b c", "a b c"]
    assert list(tokenizer(WEKA, (3, 4))("too short")) == []


def test_ngrams_are_trimmed_as_java_trims_them():
    # words holding spaces (no space among the delimiters): NGramTokenizer trims each n-gram, ends only
    assert list(tokenizer(",", (1, 2))(" one two, three ,\x0bfour")) == [
        "one two", "three", "four", "one two  three", "three  \x0bfour",
    ]  # fmt: skip
    assert tokenizer(",")(" one, two") == [" one", " two"]  # the word tokenizer trims nothing


def test_the_alphabetic_tokenizer_keeps_runs_of_ascii_letters():
    assert tokenizer(WEKA, alphabetic=True)("café2go x_y Ünïcode 3D it's") == [
        "caf", "go", "x", "y", "n", "code", "D", "it", "s",
    ]  # fmt: skip
    assert list(tokenizer(WEKA, (2, 2), alphabetic=True)("a1b c")) == ["a b", "b c"]


def test_ngrams_stop_at_each_attributes_end():
    stage = _fitted([("a b", "c d"), ("e", None)], ngrams="1-2")
    assert stage.words == ["a", "a b", "b", "c", "c d", "d", "e"]


def test_stop_words_and_stemming_take_an_ngram_whole():
    stage = _fitted([("of the cats", "the")], ngrams="1-2", stopwords="weka")
    assert stage.words == ["cats", "of the", "the cats"]
    stage.stem = lambda word: word.removesuffix("s")
    assert [stage._stemmed(word) for word in ("the cats", "cats dogs")] == ["the cat", "cats dog"]


@pytest.mark.parametrize("given", ["2-1", "0-2", "1-11", "2", "a-b", "1-2-3"])
def test_ngrams_that_are_not_min_to_max_are_refused(given):
    with pytest.raises(OptionError, match=r"option --ngrams: .* is not MIN-MAX with 1 ≤ MIN ≤ MAX ≤ 10"):
        WordVector(ngrams=given)


def test_delimiters_with_the_alphabetic_tokenizer_are_refused():
    with pytest.raises(OptionError, match="option --delimiters: the alphabetic tokenizer has none"):
        WordVector(tokenizer="alphabetic", delimiters=",")
    assert WordVector(tokenizer="alphabetic").params["tokenizer"] == "alphabetic"


def test_ngrams_give_the_same_bytes_for_any_chunk_size():
    options = ["words", "--ngrams", "1-3", "--counts", "--lowercase"]
    whole = run_filterkit(SAMPLE, *options)
    assert whole.status == 0, whole.stderr
    assert run_filterkit("--chunk-rows", "7", SAMPLE, *options).stdout == whole.stdout
    schema, _ = read_output(whole.stdout)
    assert "a year ago" in [a.name for a in schema.attributes] and len(schema) > 2000


def test_the_ngram_vocabulary_stays_within_the_attribute_bound(monkeypatch):
    monkeypatch.setenv("FILTERKIT_MAX_ATTRIBUTES", "2000")
    assert run_filterkit(SAMPLE, "words", "--lowercase").status == 0
    result = run_filterkit(SAMPLE, "words", "--ngrams", "1-3")
    assert result.status == 1 and result.stderr.count("\n") == 1
    assert "more than 4,000 distinct words" in result.stderr and "a smaller --ngrams" in result.stderr


def test_a_saved_ngram_model_applies_as_it_was_fitted(tmp_path):
    model = tmp_path / "ngrams.json"
    options = ["words", "--ngrams", "2-2", "--tokenizer", "alphabetic", "--words-to-keep", "50"]
    trained = run_filterkit("--save-model", model, SAMPLE, *options)
    assert trained.status == 0, trained.stderr
    applied = run_filterkit("apply", model, SAMPLE)
    assert applied.stdout.split(b"\n", 1)[1] == trained.stdout.split(b"\n", 1)[1]
    assert b"@attribute 'the week' numeric" in applied.stdout


@pytest.mark.slow
def test_ngram_words_pass_the_stage_contract():
    assert "generated rows (dense)" in check_stage(WordVector, ngrams="1-2", tokenizer="alphabetic")
