"""The compiled kernels (filterkit/_kernels.c) and the numpy paths give identical results, bit for bit.

The extension is optional (built when pip finds a C compiler); without it each module that
uses it does the same work with numpy.  Every test here runs both paths — the module's
``_kernels`` as built, then set to None — on real files and random data, and compares the
statistics' exact sums digit for digit, the transformed chunks' floats bit for bit and the
written ARFF byte for byte.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

import filterkit.statistics as statistics
from chain_helpers import REAL
from filterkit.arff import ArffReader
from filterkit.schema import Chunk
from filterkit.statistics import ExactSums, PresenceCounts, SortedSums, ValueCounts

kernels = statistics._kernels

needs_extension = pytest.mark.skipif(
    kernels is None, reason="the optional compiled kernels are not built (no C compiler at install)"
)

# (file, class position as -c takes it)
REAL_FILES = [
    ("oh0.wc.arff", "last"),
    ("grain_wc.arff", "first"),
    ("reuters_grain_sample.arff", "first"),
    ("credit-g.arff", "last"),
    ("vowel.arff", "last"),
    ("vehicle.arff", "last"),
    ("sonar.arff", "last"),
    ("wine.arff", "first"),
    ("glass.arff", "last"),
    ("ecoli.arff", "last"),
]


def bits(values: np.ndarray) -> np.ndarray:
    """The float64s' bit patterns (NaNs with their sign and payload, -0.0 apart from 0.0)."""
    return np.ascontiguousarray(values, dtype=np.float64).view(np.int64)


def chunks_of(name: str, chunk_rows: int) -> tuple:
    with ArffReader(REAL / name, chunk_rows=chunk_rows) as source:
        return source.schema, list(source.chunks())


def class_position(schema, where: str) -> int:
    return 0 if where == "first" else len(schema.attributes) - 1


def counted(modules_kernels, counts_class, chunks, features, class_index, n_classes):
    """The statistics of every chunk, gathered with ``statistics._kernels`` set as given."""
    statistics._kernels = modules_kernels
    counts = counts_class.empty(len(features), n_classes)
    for chunk in chunks:
        counts = counts.add(chunk, features, class_index)
    return counts


def assert_same_sums(first: ExactSums, second: ExactSums) -> None:
    assert first.lowest == second.lowest
    np.testing.assert_array_equal(first.digits, second.digits)


def assert_same_table(first: SortedSums, second: SortedSums) -> None:
    keys_a, sums_a = first.settled()
    keys_b, sums_b = second.settled()
    assert keys_a.dtype == keys_b.dtype
    np.testing.assert_array_equal(keys_a, keys_b)
    assert_same_sums(sums_a, sums_b)


def assert_same_counts(first, second) -> None:
    assert_same_sums(first.totals, second.totals)
    assert_same_table(first.missing_table, second.missing_table)
    assert_same_table(first.nonzero_table, second.nonzero_table)
    if isinstance(first, ValueCounts):
        assert_same_table(first.table, second.table)
    else:
        np.testing.assert_array_equal(bits(first.minimum), bits(second.minimum))
        np.testing.assert_array_equal(bits(first.maximum), bits(second.maximum))


@needs_extension
@pytest.mark.slow
@pytest.mark.parametrize("counts_class", [ValueCounts, PresenceCounts])
@pytest.mark.parametrize("name, where", REAL_FILES)
def test_statistics_of_real_files_are_the_same_with_and_without_the_kernels(monkeypatch, name, where, counts_class):
    monkeypatch.setattr(statistics, "_kernels", kernels)
    schema, chunks = chunks_of(name, 97)
    class_index = class_position(schema, where)
    features = np.array([i for i, a in enumerate(schema.attributes) if a.is_numeric and i != class_index])
    n_classes = len(schema.attributes[class_index].labels)
    compiled = counted(kernels, counts_class, chunks, features, class_index, n_classes)
    plain = counted(None, counts_class, chunks, features, class_index, n_classes)
    assert_same_counts(compiled, plain)


def random_sparse_chunk(rng, n_rows: int, n_columns: int, *, weighted: bool, integers: bool) -> Chunk:
    """Rows of a sparse chunk with missing values and missing classes (class in column 0, 3 labels)."""
    density = rng.uniform(0.05, 0.6)
    values = rng.integers(-3, 40, size=(n_rows, n_columns)).astype(np.float64)
    if not integers:
        values = values * rng.choice([1.0, 0.1, 1e-300, 1e300, -2.5], size=values.shape)
    values[rng.random(values.shape) > density] = 0.0
    values[rng.random(values.shape) < 0.02] = np.nan
    values[:, 0] = rng.integers(0, 3, size=n_rows)
    values[rng.random(n_rows) < 0.1, 0] = np.nan
    weights = rng.choice([0.0, 0.5, 1.0, 3.25, 1e-310, 7e12], size=n_rows) if weighted else None
    return Chunk(sp.csr_matrix(values), {}, weights)


@needs_extension
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("counts_class", [ValueCounts, PresenceCounts])
def test_statistics_of_random_sparse_chunks_are_the_same_with_and_without_the_kernels(monkeypatch, seed, counts_class):
    monkeypatch.setattr(statistics, "_kernels", kernels)
    rng = np.random.default_rng(seed)
    chunks = [
        random_sparse_chunk(rng, int(rng.integers(1, 60)), 9, weighted=seed % 2 == 1, integers=seed % 3 != 2)
        for _ in range(5)
    ]
    features = np.array([1, 2, 4, 5, 6, 8])
    compiled = counted(kernels, counts_class, chunks, features, 0, 3)
    plain = counted(None, counts_class, chunks, features, 0, 3)
    assert_same_counts(compiled, plain)


@needs_extension
@pytest.mark.parametrize("span", [1, 7, 1000, 2**18, 2**18 + 1, 3 * 2**16 + 5, 2**22, 2**40, 2**62])
def test_sorted_counts_and_stable_order_equal_numpys(span):
    rng = np.random.default_rng(span % 1000)
    for n in (1, 2, 50, 20_000):
        keys = rng.integers(0, span, size=n, dtype=np.int64) + (span // 3)
        distinct, counts = np.unique(keys, return_counts=True)
        found = statistics._compiled_counts(keys)
        if found is not None:  # keys spread too thinly are left to numpy's sort
            np.testing.assert_array_equal(found[0], distinct)
            np.testing.assert_array_equal(found[1], counts)
        np.testing.assert_array_equal(statistics.stable_order(keys), np.argsort(keys, kind="stable"))


@needs_extension
def test_sorted_counts_leaves_negative_keys_and_thin_spreads_to_numpy():
    assert statistics._compiled_counts(np.array([3, -1, 3], dtype=np.int64)) is None
    assert statistics._compiled_counts(np.array([0, 2**50], dtype=np.int64)) is None
    found = statistics._compiled_counts(np.array([5, 2**17, 5, 0], dtype=np.int64))
    assert found is not None
    np.testing.assert_array_equal(found[0], [0, 5, 2**17])
    np.testing.assert_array_equal(found[1], [1, 2, 1])
    # a negative key: numpy's argsort, the same order
    keys = np.array([3, -1, 3, 0], dtype=np.int64)
    np.testing.assert_array_equal(statistics.stable_order(keys), [1, 3, 0, 2])


@needs_extension
def test_weighted_group_sums_are_the_same_with_and_without_the_kernels(monkeypatch):
    rng = np.random.default_rng(5)
    groups = rng.integers(0, 300, size=5_000)
    weights = rng.choice([0.1, 1.0, 2.0**-1070, 1e300, 3.0], size=5_000)
    monkeypatch.setattr(statistics, "_kernels", kernels)
    compiled = ExactSums.by_group(groups, weights, 300)
    monkeypatch.setattr(statistics, "_kernels", None)
    plain = ExactSums.by_group(groups, weights, 300)
    assert_same_sums(compiled, plain)
    assert math.isclose(float(plain.total().to_float()[0]), float(np.sum(weights)), rel_tol=1e-12)
