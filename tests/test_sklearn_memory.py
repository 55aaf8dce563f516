"""The adapters hold their input as references to its strings (issue 47, item 10): a list of documents
or labels made a numpy unicode array would hold every one at the longest one's width, 4 bytes a
character (7 GiB for 42,631 short documents, 2 GiB for 5,000 and one of 100,000 characters)."""

from __future__ import annotations

import random
import sys
import tracemalloc
from collections import Counter

import numpy as np
import pytest
import scipy.sparse as sp

from filterkit.sklearn import Shaper, WordVector

VOCABULARY = ["grain", "wheat", "maize", "tonnes", "export", "café", "price", "crop"]


def short_documents_and_a_long_one() -> list[str]:
    """2,000 documents of 8 words, then one of 100,000 characters."""
    rng = random.Random(47)
    documents = [" ".join(rng.choices(VOCABULARY, k=8)) for _ in range(2000)]
    long = " ".join(rng.choices(VOCABULARY, k=20000))[:100000].rsplit(" ", 1)[0]
    return [*documents, long]


def size_of(strings: list[str]) -> int:
    return sum(sys.getsizeof(text) for text in strings)


def peak_bytes(function, *args):
    """``function(*args)`` and the most memory Python and numpy held at once while it ran."""
    tracemalloc.start()
    try:
        result = function(*args)
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def hand_counts(documents: list[str], names: list[str]) -> np.ndarray:
    column = {name: j for j, name in enumerate(names)}
    counts = np.zeros((len(documents), len(names)))
    for i, document in enumerate(documents):
        for word, count in Counter(document.split(" ")).items():
            counts[i, column[word]] = count
    return counts


@pytest.mark.parametrize("form", [list, tuple, lambda documents: np.array(documents, dtype=object)])
def test_documents_with_one_long_one_cost_a_small_multiple_of_their_size(form):
    documents = short_documents_and_a_long_one()
    given = form(documents)
    vector, fitting = peak_bytes(WordVector(counts=True).fit, given)
    counts, transforming = peak_bytes(vector.transform, given)
    assert max(fitting, transforming) < 10 * size_of(documents)  # a unicode array: 800 MB, 4,000 times
    names = vector.get_feature_names_out().tolist()
    assert sorted(names) == sorted(VOCABULARY)
    assert sp.issparse(counts)
    np.testing.assert_array_equal(counts.toarray(), hand_counts(documents, names))
    assert counts[-1].sum() == len(documents[-1].split(" "))


def test_a_long_label_in_y_costs_a_small_multiple_of_its_size():
    documents = short_documents_and_a_long_one()[:-1] + ["grain price"]
    long_label = "L" * 100000
    y = ["grain"] * 1000 + ["other"] * 1000 + [long_label]
    vector, fitting = peak_bytes(WordVector().fit, documents, y)
    assert fitting < 10 * size_of(documents + y)  # unicode arrays of y: 3.2 GB
    assert vector.class_labels_ == (long_label, "grain", "other")
    X = sp.csr_matrix(WordVector().fit_transform(documents))
    shaper, shaping = peak_bytes(Shaper(positive="grain").fit, X, y)
    assert shaping < 10 * size_of(documents + y)
    assert shaper.class_labels_ == (long_label, "grain", "other")
