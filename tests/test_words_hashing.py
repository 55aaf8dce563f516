"""``words --hash BITS`` (issue 51 item 3): 2**BITS columns, a token's column HashingVectorizer's
(MurmurHash3 x86 32-bit, seed 0), each named by its most frequent training token, the same under any
chunk size and engine."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.utils import murmurhash3_32
from test_words_characters import DOCUMENTS, arff_of

from filterkit.arff import read_arff
from filterkit.errors import OptionError
from filterkit.testing import read_output, run_filterkit
from filterkit.word_tokens import WEKA_STOPWORDS
from filterkit_plugins.words import WordVector

GRAIN = Path("/usr/share/doc/weka/examples/ReutersGrain-train.arff")
#: Weka's WordTokenizer delimiters as a token pattern: the same words as ``words``' default.
WEKA_WORDS = "[^" + re.escape(" \r\n\t.,;:'\"()?!") + "]+"


def hashed(texts: list[str], bits: int, *options: str) -> tuple[list[str], np.ndarray, str]:
    """The word attributes' names and values of ``words --hash BITS --counts`` on ``texts``, and its stderr."""
    run = run_filterkit("-", "words", "--hash", str(bits), "--counts", *options, stdin=arff_of(texts))
    assert run.status == 0, run.stderr
    schema, chunk = read_output(run.stdout)
    assert schema.attributes[0].name == "class" and len(schema.attributes) == 1 + 2**bits
    return [attribute.name for attribute in schema.attributes[1:]], chunk.dense_values()[:, 1:], run.stderr


def column_of(token: str, bits: int) -> int:
    """HashingVectorizer's column of ``token`` (its ``_hashing_fast``: |h| mod n of the signed hash)."""
    return abs(murmurhash3_32(token, seed=0)) % 2**bits


@pytest.mark.parametrize("bits, sizes", [(6, (1, 3)), (10, (2, 5))])
def test_unicode_character_ngrams_hash_into_hashing_vectorizer_s_columns(bits, sizes):
    # the ASCII documents through the compiled counter, the others through the Python tokenizer
    _, ours, _ = hashed(DOCUMENTS, bits, "--char-ngrams", f"{sizes[0]}-{sizes[1]}", "--lowercase")
    vectorizer = HashingVectorizer(
        analyzer="char_wb", ngram_range=sizes, alternate_sign=False, norm=None, n_features=2**bits
    )
    np.testing.assert_array_equal(ours, vectorizer.transform(DOCUMENTS).toarray())


def test_words_without_stop_words_hash_into_hashing_vectorizer_s_columns():
    texts = [*DOCUMENTS, "The cat and THE dog", "a b c d e f g h"]
    _, ours, _ = hashed(texts, 7, "--delimiters", " ", "--lowercase", "--stopwords", "weka")
    vectorizer = HashingVectorizer(
        token_pattern="[^ ]+", stop_words=sorted(WEKA_STOPWORDS), alternate_sign=False, norm=None, n_features=2**7
    )
    np.testing.assert_array_equal(ours, vectorizer.transform(texts).toarray())
    assert ours.sum() > 20


@pytest.mark.slow
@pytest.mark.skipif(not GRAIN.exists(), reason=f"Weka's Reuters documents are not installed ({GRAIN})")
@pytest.mark.parametrize(
    "options, vectorizer",
    [
        (["--lowercase"], dict(token_pattern=WEKA_WORDS, lowercase=True)),
        (["--ngrams", "1-2"], dict(token_pattern=WEKA_WORDS, lowercase=False, ngram_range=(1, 2))),
        (["--char-ngrams", "2-4"], dict(analyzer="char_wb", ngram_range=(2, 4), lowercase=False)),
    ],
)
def test_reuters_documents_hash_into_hashing_vectorizer_s_columns(options, vectorizer):
    _, chunk = read_arff(GRAIN)
    texts = [text or "" for text in chunk.text[0]]
    names, ours, _ = hashed(texts, 12, "--prefix", "~", *options)  # no token renamed for the class's name
    theirs = HashingVectorizer(alternate_sign=False, norm=None, n_features=2**12, **vectorizer).transform(texts)
    np.testing.assert_array_equal(ours, theirs.toarray())
    assert ours.sum() > 100_000
    assert all(column_of(name[1:], 12) == k or name[1:] == f"#{k}" for k, name in enumerate(names))


def test_a_column_is_named_by_its_most_frequent_token_and_a_tie_by_java_s_order():
    tokens = [f"t{k}" for k in range(40)]
    by_column: dict[int, list[str]] = {}
    for token in tokens:
        by_column.setdefault(column_of(token, 2), []).append(token)
    column, sharing = max(by_column.items(), key=lambda item: len(item[1]))
    assert len(sharing) >= 4
    favourite, tied = sharing[2], sorted(sharing[:2])
    texts = [" ".join(tokens), f"{favourite} {favourite}", " ".join(tied)]
    names, ours, stderr = hashed(texts, 2, "--delimiters", " ")
    assert names[column] == favourite
    texts[1] = favourite  # now three tokens occur twice: the first of them in Java's order names the column
    names, _, _ = hashed(texts, 2, "--delimiters", " ")
    assert names[column] == min(tied[0], favourite)
    assert ours[0, column] == len(sharing) and ours[2, column] == 2
    assert f"--hash 2: {len(tokens) - len(by_column)} of the 40 distinct training tokens fall into a column" in stderr


def test_columns_no_training_token_falls_into_are_named_by_their_number():
    assert column_of("b", 4) != 3  # so that the token "#3" is in another column than 3
    names, ours, stderr = hashed(["b #3", "b"], 4, "--delimiters", " ")
    named = {column_of("b", 4): "b", column_of("#3", 4): "#3"}
    assert names == [named.get(k, f"#{k}" if k != 3 else "#3_1") for k in range(16)]
    assert ours[:, column_of("b", 4)].tolist() == [1, 1] and stderr == ""


def test_the_model_holds_a_name_per_used_column_and_its_stop_words_and_applies_as_it_was_fitted(tmp_path):
    model, data, stopwords = tmp_path / "model.json", tmp_path / "docs.arff", tmp_path / "stop.txt"
    data.write_bytes(arff_of(DOCUMENTS))
    stopwords.write_text("and\nThe\n")
    options = ["words", "--hash", "5", "--lowercase", "--stopwords", stopwords]
    fitted = run_filterkit("--save-model", model, data, *options)
    assert fitted.status == 0, fitted.stderr
    state = next(stage["state"] for stage in json.loads(model.read_text())["stages"] if "columns" in stage["state"])
    assert len(state["words"]) == len(state["columns"]) < 2**5 and state["collisions"] > 0
    tokens = {token.lower() for document in DOCUMENTS for token in re.findall(WEKA_WORDS, document)}
    assert len(state["words"]) + state["collisions"] == len(tokens - {"and", "the"})
    assert state["stopwords"] == ["and", "the"]
    stopwords.unlink()  # the transform leaves them out from the model's list
    applied = run_filterkit("apply", model, data)
    assert applied.status == 0, applied.stderr
    assert applied.stdout.split(b"@data")[1] == fitted.stdout.split(b"@data")[1]


def test_hashing_gives_the_same_bytes_for_any_chunk_size():
    texts = DOCUMENTS * 20
    outputs = {
        rows: run_filterkit("--chunk-rows", rows, "-", "words", "--hash", "6", stdin=arff_of(texts)).stdout
        for rows in ("1", "7", "10000")
    }
    assert len(set(outputs.values())) == 1 and outputs["1"].count(b"\n") > 100


@pytest.mark.slow
def test_hashing_gives_the_same_bytes_under_the_dask_engine(dask_scheduler, tmp_path):
    source = tmp_path / "docs.arff"
    source.write_bytes(arff_of(DOCUMENTS * 20))
    options = ["words", "--hash", "8", "--counts", "--char-ngrams", "1-3"]
    local, dask = tmp_path / "local.arff", tmp_path / "dask.arff"
    assert run_filterkit("-q", "-o", local, source, *options).status == 0
    distributed = ["--engine", "dask", "--scheduler", dask_scheduler, "--partitions", "3"]
    assert run_filterkit(*distributed, "-q", "-o", dask, source, *options).status == 0
    assert dask.read_bytes() == local.read_bytes()


@pytest.mark.parametrize(
    "options, named",
    [
        ({"words_to_keep": 10}, "--words-to-keep"),
        ({"idf": True}, "--idf"),
        ({"min_df": "2", "whole_corpus": True}, "--whole-corpus or --min-df"),
    ],
)
def test_hashing_refuses_the_options_that_prune_or_weigh_words(options, named):
    with pytest.raises(OptionError, match=f"option --hash: every one of its columns is written .* takes no {named}$"):
        WordVector(hash=8, **options)
