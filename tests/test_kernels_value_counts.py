"""The compiled value and presence counts and run merges (filterkit/_kernels.c ``value_counts``,
``presence_counts``, ``merge_counts`` and ``merge_integer_counts``) give the numpy path's
statistics digit for digit.

``ValueCounts.of_chunk`` counts a sparse chunk of unit weights and whole-number values in one
compiled pass, ``PresenceCounts.add`` a sparse chunk of unit weights without missing values,
and ``_merged_runs`` merges runs of counts in one compiled loop; everything else goes to numpy.
Each test compares both paths, and checks that the compiled one was taken where it should be
(a kernel that always declined would pass the comparisons).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from test_kernels import assert_same_counts, assert_same_sums, chunks_of, class_position

import filterkit.exact as exact
from filterkit import kernels
from filterkit.schema import Chunk
from filterkit.statistics import ExactSums, PresenceCounts, ValueCounts


def both_ways(kind, chunks, features, class_index, n_classes):
    """``(compiled, plain)``: the statistics ``kind`` (ValueCounts, PresenceCounts) of ``chunks``
    gathered as the package does, then by the numpy paths alone, their tables settled."""
    results = []
    for compiled in (True, False):
        with kernels.compiled(compiled, kernels.ARRAYS):
            counts = kind.empty(len(features), n_classes)
            for chunk in chunks:
                counts = counts.add(chunk, features, class_index)
            if kind is ValueCounts:
                counts.table.settled()
                counts.missing_table.settled()
            results.append(counts)
    return results


def word_counts(rng, n_rows: int, n_columns: int, low: int = 1, high: int = 40) -> Chunk:
    """A sparse chunk of whole numbers, class (3 labels, some missing) in column 0."""
    values = rng.integers(low, high, size=(n_rows, n_columns)).astype(np.float64)
    values[rng.random(values.shape) > rng.uniform(0.05, 0.5)] = 0.0
    values[:, 0] = rng.integers(0, 3, size=n_rows)
    values[rng.random(n_rows) < 0.1, 0] = np.nan
    return Chunk(sp.csr_matrix(values), {}, None)


def test_a_small_chunk_is_counted_as_by_hand():
    # class in column 0 (labels 0, 1), features at columns 1 and 2; row 3's class is missing
    rows = np.array([[0, 2, 0], [1, 2, 5], [1, 2, 0], [np.nan, 9, 9], [0, 0, 5]], dtype=np.float64)
    chunk = Chunk(sp.csr_matrix(rows), {}, None)
    counts = ValueCounts._compiled_of_chunk(chunk, np.array([1, 2]), 0, 2)
    assert counts is not None
    keys, sums = counts.table.settled()
    # keys (feature · 2 + class) + i·value: feature 0 has 2 in one class-0 row and two class-1 rows,
    # feature 1 has 5 in one row of each class
    np.testing.assert_array_equal(keys, [0 + 2j, 1 + 2j, 2 + 5j, 3 + 5j])
    np.testing.assert_array_equal(sums.to_float(), [1, 2, 1, 1])
    np.testing.assert_array_equal(counts.class_totals, [2, 2])


@pytest.mark.parametrize("seed", range(5))
def test_whole_number_chunks_are_counted_by_the_kernel_as_by_numpy(seed):
    rng = np.random.default_rng(seed)
    low, high = [(1, 40), (-5, 6), (-(2**10), 2**10), (2**51, 2**51 + 90), (1, 2)][seed]
    chunks = [word_counts(rng, int(rng.integers(1, 80)), 12, low, high) for _ in range(7)]
    features = np.array([1, 2, 3, 5, 8, 9, 11])
    assert all(ValueCounts._compiled_of_chunk(chunk, features, 0, 3) is not None for chunk in chunks)
    compiled, plain = both_ways(ValueCounts, chunks, features, 0, 3)
    assert_same_counts(compiled, plain)


@pytest.mark.parametrize(
    "changed",
    [
        lambda values: values.__setitem__((0, 1), np.nan),  # a missing value: the missing table
        lambda values: values.__setitem__((0, 1), 2.5),  # not a whole number
        lambda values: values.__setitem__((0, 1), 2.0**52),  # beyond the exact integers
        lambda values: values.__setitem__((0, 1), np.inf),
        lambda values: values.__setitem__((0, 1), 2.0**21),  # values spanning 2**20 or more
    ],
)
def test_chunks_the_kernel_declines_go_to_numpy_with_the_same_result(changed):
    rng = np.random.default_rng(11)
    dense = word_counts(rng, 30, 6).dense_values()
    dense[0, 1] = 1.0
    changed(dense)
    chunk = Chunk(sp.csr_matrix(dense), {}, None)
    features = np.array([1, 2, 3, 4, 5])
    assert ValueCounts._compiled_of_chunk(chunk, features, 0, 3) is None
    compiled, plain = both_ways(ValueCounts, [chunk, word_counts(rng, 20, 6)], features, 0, 3)
    assert_same_counts(compiled, plain)


@pytest.mark.slow
@pytest.mark.parametrize("name, where, chunk_rows", [("oh0.wc.arff", "last", 61), ("grain_wc.arff", "first", 1000)])
def test_real_word_counts_are_counted_by_the_kernel_as_by_numpy(name, where, chunk_rows):
    # (smaller grain chunks spread their keys too thinly for the tally: numpy sorts them)
    schema, chunks = chunks_of(name, chunk_rows)
    class_index = class_position(schema, where)
    features = np.array([i for i, a in enumerate(schema.attributes) if a.is_numeric and i != class_index])
    n_classes = len(schema.attributes[class_index].labels)
    assert ValueCounts._compiled_of_chunk(chunks[0], features, class_index, n_classes) is not None
    compiled, plain = both_ways(ValueCounts, chunks, features, class_index, n_classes)
    assert_same_counts(compiled, plain)


def random_run(rng, n: int, scale: int) -> tuple[np.ndarray, ExactSums]:
    """A run of distinct complex keys, ascending, with counts below 2**32 (one digit)."""
    real = rng.integers(0, 40, size=n).astype(np.float64)
    keys = np.unique(exact.complex_keys(real, rng.choice([-np.inf, -3.5, 0.25, 1.0, 7.0, np.inf], size=n)))
    return keys, ExactSums.of_counts(rng.integers(1, scale, size=len(keys)))


def merged_both_ways(first, second):
    """``exact._merged_runs`` of two runs by the kernel (which must take them) and by numpy."""
    assert exact._compiled_merge(first, second) is not None
    results = []
    for compiled in (True, False):
        with kernels.compiled(compiled, kernels.ARRAYS):
            results.append(exact._merged_runs(first, second))
    return results


@pytest.mark.parametrize("seed", range(6))
def test_merged_runs_of_counts_are_the_same_with_and_without_the_kernel(seed):
    rng = np.random.default_rng(seed)
    scale = 2**32 - 1 if seed % 2 else 50  # sums that carry into a second digit, or not
    first = random_run(rng, int(rng.integers(0, 200)), scale)
    second = random_run(rng, int(rng.integers(1, 200)), scale)
    (keys_a, sums_a), (keys_b, sums_b) = merged_both_ways(first, second)
    np.testing.assert_array_equal(keys_a.view(np.int64), keys_b.view(np.int64))
    assert_same_sums(sums_a, sums_b)


def test_merged_runs_add_the_counts_of_shared_keys():
    first = (np.array([1 + 1j, 1 + 2j, 3 + 0j]), ExactSums.of_counts(np.array([4, 2**32 - 1, 1])))
    second = (np.array([1 + 2j, 2 - 1j]), ExactSums.of_counts(np.array([3, 7])))
    keys, sums = exact._merged_runs(first, second)
    np.testing.assert_array_equal(keys, [1 + 1j, 1 + 2j, 2 - 1j, 3 + 0j])
    np.testing.assert_array_equal(sums.to_float(), [4, 2**32 + 2, 7, 1])


def test_runs_the_merge_kernel_leaves_to_numpy():
    counted = (np.array([1 + 1j]), ExactSums.of_counts(np.array([1])))
    with_nan = (np.array([complex(1, np.nan)]), ExactSums.of_counts(np.array([1])))
    weighted = (np.array([1 + 1j]), ExactSums.of_weights(np.array([0.1])))
    integer_keys = (np.array([3]), ExactSums.of_counts(np.array([1])))
    assert exact._compiled_merge(counted, with_nan) is None
    assert exact._compiled_merge(counted, weighted) is None
    assert exact._compiled_merge(counted, integer_keys) is None
    keys, sums = exact._merged_runs(counted, weighted)
    np.testing.assert_array_equal(keys, [1 + 1j])
    assert sums.to_float()[0] == 1.1


@pytest.mark.parametrize("span", [5, 2**18 - 3, 2**18 + 7, 40 * 2**16 + 3])
def test_sorted_counts_emit_every_key_of_a_sparse_tally(span):
    # few keys spread over a table many times their number: the emit reads the bitmap's words
    rng = np.random.default_rng(span % 97)
    keys = np.r_[rng.integers(0, span, size=5_000), 0, span - 1].astype(np.int64)
    distinct, counts = np.unique(keys, return_counts=True)
    found = exact._compiled_counts(keys)
    assert found is not None
    np.testing.assert_array_equal(found[0], distinct)
    np.testing.assert_array_equal(found[1], counts)


def test_a_small_chunk_s_presence_is_counted_as_by_hand():
    rows = np.array([[0, 2, 0], [1, -2.5, 5], [1, 7, 0], [np.nan, 9, 9], [0, 0, 1e300]], dtype=np.float64)
    counts = PresenceCounts.empty(2, 2)._compiled_of_chunk(Chunk(sp.csr_matrix(rows), {}, None), np.array([1, 2]), 0)
    assert counts is not None
    keys, sums = counts.nonzero_table.settled()
    np.testing.assert_array_equal(keys, [0, 1, 2, 3])  # feature · 2 + class
    np.testing.assert_array_equal(sums.to_float(), [1, 2, 1, 1])
    np.testing.assert_array_equal(counts.minimum, [-2.5, 5])
    np.testing.assert_array_equal(counts.maximum, [7, 1e300])


@pytest.mark.parametrize("seed", range(4))
def test_presence_counts_are_the_same_with_and_without_the_kernels(seed):
    rng = np.random.default_rng(seed)
    chunks = [word_counts(rng, int(rng.integers(1, 80)), 12, -3, 9) for _ in range(6)]
    for chunk in chunks[::2]:
        chunk.values.data[chunk.values.data == 5] = [-0.5, 1e-310, np.inf][seed % 3]
    features = np.array([1, 2, 3, 5, 8, 9, 11])
    assert all(PresenceCounts.empty(7, 3)._compiled_of_chunk(chunk, features, 0) is not None for chunk in chunks)
    compiled, plain = both_ways(PresenceCounts, chunks, features, 0, 3)
    assert_same_counts(compiled, plain)


def test_a_missing_value_leaves_the_presence_counts_to_numpy():
    rng = np.random.default_rng(3)
    chunk = word_counts(rng, 30, 6)
    chunk.values.data[3] = np.nan
    features = np.array([1, 2, 3, 4, 5])
    assert PresenceCounts.empty(5, 3)._compiled_of_chunk(chunk, features, 0) is None
    compiled, plain = both_ways(PresenceCounts, [chunk, word_counts(rng, 20, 6)], features, 0, 3)
    assert_same_counts(compiled, plain)


@pytest.mark.parametrize("seed", range(4))
def test_merged_runs_of_integer_keys_are_the_same_with_and_without_the_kernel(seed):
    rng = np.random.default_rng(seed)
    scale = 2**32 - 1 if seed % 2 else 50

    def run():
        keys = np.unique(rng.integers(0, 300, size=int(rng.integers(0, 150))))
        return keys, ExactSums.of_counts(rng.integers(1, scale, size=len(keys)))

    first, second = run(), run()
    (keys_a, sums_a), (keys_b, sums_b) = merged_both_ways(first, second)
    np.testing.assert_array_equal(keys_a, keys_b)
    assert_same_sums(sums_a, sums_b)
