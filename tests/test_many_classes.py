"""Issue 72: k-class scoring costs the (feature, class) pairs that occur, not features × classes."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from filterkit import metrics
from filterkit.metrics import feature_scores, target_classes
from filterkit.plugins import load_plugins
from filterkit.schema import NOMINAL, Attribute, Chunk
from filterkit.statistics import PresenceCounts, ValueCounts


def one_class_a_row(n_rows: int) -> tuple[Chunk, int]:
    """A sparse chunk of ``n_rows`` word-count rows, each its own class: a few of 50 common words and two
    of ``n_rows`` rare ones, so the features grow with the rows (the class is the last column)."""
    generator = np.random.default_rng(3)
    n_features = 50 + n_rows
    rows = np.repeat(np.arange(n_rows), 6)
    columns = np.concatenate(
        [generator.integers(0, 50, (n_rows, 4)), 50 + generator.integers(0, n_rows, (n_rows, 2))], axis=1
    ).ravel()
    words = sp.csr_matrix((generator.integers(1, 4, len(rows)).astype(float), (rows, columns)), (n_rows, n_features))
    words.sum_duplicates()
    labels = sp.csr_matrix(np.arange(n_rows, dtype=float)[:, None])
    return Chunk(sp.hstack([words, labels], format="csr")), n_features


def joint_peak(n_rows: int, presence: bool) -> int:
    """The tracemalloc peak of ``ig``'s k-class scores of :func:`one_class_a_row`'s statistics."""
    chunk, n_features = one_class_a_row(n_rows)
    empty = PresenceCounts.empty if presence else ValueCounts.empty
    counts = empty(n_features, n_rows).add(chunk, np.arange(n_features), n_features)
    labels = Attribute("class", NOMINAL, labels=tuple(f"c{k}" for k in range(n_rows)))
    metric = load_plugins().metrics["ig"].value
    targets = target_classes(labels, counts.class_totals, None)
    tracemalloc.start()
    try:
        feature_scores(counts, metric, targets, presence, "joint")
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.slow
@pytest.mark.parametrize("presence", [True, False], ids=["presence", "mdl"])
def test_joint_scores_memory_grows_with_the_pairs_not_features_times_classes(presence):
    """Doubling the rows (each its own class) doubles the pairs that occur and quadruples features ×
    classes: the tables, made a block of features at a time, grow with the former (before: 3.9x, 234 MB then
    907 MB for ig's best threshold, 84 MB then 329 MB for presence; after: 20 MB then 22 MB, 28 MB twice)."""
    small, large = joint_peak(1_200, presence), joint_peak(2_400, presence)
    assert large < 2.5 * small


def scores_in_blocks(counts, metric_name: str, presence: bool, labels) -> np.ndarray:
    metric = load_plugins().metrics[metric_name].value
    return feature_scores(counts, metric, list(range(counts.n_classes)), presence, "joint", labels=labels)


@pytest.mark.parametrize("metric_name", ["ig", "chi", "igm"])
def test_joint_scores_are_the_same_bits_whatever_the_block_of_features(monkeypatch, metric_name):
    """Weighted rows, missing values, numeric and nominal features: a block of one feature at a time
    gives the bits of one block for all."""
    generator = np.random.default_rng(8)
    classes = generator.integers(0, 7, 400)
    numeric = classes[:, None] // 2 + generator.integers(0, 2, (400, 6))
    values = np.column_stack([numeric, generator.integers(0, 3, (400, 2)), classes]).astype(np.float64)
    values[generator.random((400, 9)) < 0.05] = np.nan
    values[:, 8] = np.nan_to_num(values[:, 8], nan=1.0)
    chunk = Chunk(values, weights=generator.random(400) * 3)
    labels = np.array([0, 0, 0, 0, 0, 0, 3, 3])
    for presence in (True, False):
        counts = ValueCounts.empty(8, 7).add(chunk, np.arange(8), 8)
        whole = scores_in_blocks(counts, metric_name, presence, labels)
        monkeypatch.setattr(metrics, "_TABLE_CELLS", 1)
        counts = ValueCounts.empty(8, 7).add(chunk, np.arange(8), 8)
        one_by_one = scores_in_blocks(counts, metric_name, presence, labels)
        monkeypatch.undo()
        assert whole.view(np.int64).tolist() == one_by_one.view(np.int64).tolist()
        assert np.all(whole[:6] > 0)
