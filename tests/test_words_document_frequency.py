"""``words --min-df/--max-df`` (issue 51 item 4): words kept by their document frequency over the whole
training set, as scikit-learn's ``CountVectorizer(min_df, max_df)`` keeps them, whatever the chunk size."""

from __future__ import annotations

import random

import pytest
from sklearn.feature_extraction.text import CountVectorizer

from filterkit.testing import read_output, run_filterkit

WORDS = [f"w{k}" for k in range(40)]


def documents(n: int = 120, seed: int = 11) -> list[str]:
    """Documents of space-separated words of Zipf-like frequencies (w0 in most, w39 in few)."""
    generator = random.Random(seed)
    weights = [1 / (k + 1) for k in range(len(WORDS))]
    return [" ".join(generator.choices(WORDS, weights, k=generator.randint(1, 12))) for _ in range(n)]


def arff_of(texts: list[str]) -> bytes:
    rows = "".join(f"'{text}',{'ab'[k % 2]}\n" for k, text in enumerate(texts))
    return f"@relation docs\n@attribute text string\n@attribute class {{a,b}}\n@data\n{rows}".encode()


def kept_words(texts: list[str], *options: str, chunk_rows: str = "10000") -> set[str]:
    run = run_filterkit(
        "-q",
        "--chunk-rows",
        chunk_rows,
        "-",
        "words",
        "--words-to-keep",
        "100000",
        "--delimiters",
        " ",
        *options,
        stdin=arff_of(texts),
    )
    assert run.status == 0, run.stderr
    schema, _ = read_output(run.stdout)
    return {attribute.name for attribute in schema.attributes} - {"class"}


@pytest.mark.parametrize(
    "min_df, max_df",
    [("8", None), ("0.05", None), (None, "0.5"), (None, "30"), ("3", "0.8"), ("0.1", "1.0")],
)
def test_the_words_kept_are_count_vectorizer_s_vocabulary(min_df, max_df):
    texts = documents()
    options = [*(["--min-df", min_df] if min_df else []), *(["--max-df", max_df] if max_df else [])]
    vectorizer = CountVectorizer(
        token_pattern=r"[^ ]+",
        lowercase=False,
        min_df=1 if min_df is None else (float(min_df) if "." in min_df else int(min_df)),
        max_df=1.0 if max_df is None else (float(max_df) if "." in max_df else int(max_df)),
    )
    vectorizer.fit(texts)
    expected = set(vectorizer.vocabulary_)
    assert kept_words(texts, *options) == expected
    assert expected < set(WORDS)  # the bounds left words out


def test_the_bounds_count_the_whole_training_set_whatever_the_chunk_size():
    texts = documents()
    options = ["--min-df", "4", "--max-df", "0.6"]
    whole = kept_words(texts, *options)
    assert kept_words(texts, *options, chunk_rows="7") == whole
    assert kept_words(texts, *options, chunk_rows="1") == whole
    assert 0 < len(whole) < len(WORDS)


@pytest.mark.parametrize("value", ["-1", "1.5", "five", "1e-3", "."])
def test_a_bound_that_is_neither_a_count_nor_a_fraction_is_refused(value):
    run = run_filterkit("-q", "-", "words", "--min-df", value, stdin=arff_of(documents(4)))
    assert run.status in (1, 2)
    assert "--min-df" in run.stderr and "Traceback" not in run.stderr


@pytest.mark.slow
def test_the_bounds_are_the_whole_training_set_s_under_the_dask_engine(dask_scheduler, tmp_path):
    """Dask-ML prunes by document frequency per partition; filterkit merges the counts first."""
    source = tmp_path / "docs.arff"
    source.write_bytes(arff_of(documents()))
    options = ["words", "--delimiters", " ", "--counts", "--min-df", "4", "--max-df", "0.6"]
    local, dask = tmp_path / "local.arff", tmp_path / "dask.arff"
    assert run_filterkit("-q", "-o", local, source, *options).status == 0
    distributed = ["--engine", "dask", "--scheduler", dask_scheduler, "--partitions", "3"]
    assert run_filterkit(*distributed, "-q", "-o", dask, source, *options).status == 0
    assert dask.read_bytes() == local.read_bytes()
    assert 0 < local.read_text().count("@attribute w") < len(WORDS)


def test_bounds_that_leave_no_word_are_an_error_not_an_empty_output():
    run = run_filterkit("-q", "-", "words", "--min-df", "50", "--max-df", "10", stdin=arff_of(documents()))
    assert run.status == 1 and run.stdout == b""
    assert run.stderr.startswith(
        "filterkit: error: stage 'words': no word of the 120 training documents is in 50 to 10"
    )
