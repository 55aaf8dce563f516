"""The MDL cut points of many features in one batch are each feature's own, to the bit.

:func:`filterkit.discretization.mdl_cut_points` (one feature) is checked against Weka 3.6 in
``test_mdl.py``; here the batch is checked against it on features cut from real sets and on
random ones with ties, weights and empty or one-value features between the others.
"""

from __future__ import annotations

import numpy as np
import pytest

from chain_helpers import REAL
from filterkit.arff import read_arff
from filterkit.discretization import _class_entropies, mdl_cut_points, mdl_cut_points_by_feature


def _one_at_a_time(values, counts, starts, **options) -> list[np.ndarray]:
    return [mdl_cut_points(values[a:b], counts[a:b], **options) for a, b in zip(starts[:-1], starts[1:], strict=True)]


def _features_of(name: str, class_position: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every attribute but the class of a real set as (distinct values, class counts, starts)."""
    schema, chunk = read_arff(str(REAL / name))
    table = chunk.values.toarray() if hasattr(chunk.values, "toarray") else np.asarray(chunk.values)
    labels = table[:, class_position].astype(int)
    n_classes = len(schema.attributes[class_position].labels)
    values, counts, starts = [], [], [0]
    for position in range(table.shape[1]):
        if position == class_position % table.shape[1]:
            continue
        distinct, where = np.unique(table[:, position], return_inverse=True)
        by_class = np.zeros((len(distinct), n_classes))
        np.add.at(by_class, (where.ravel(), labels), 1.0)
        values.append(distinct)
        counts.append(by_class)
        starts.append(starts[-1] + len(distinct))
    return np.concatenate(values), np.concatenate(counts), np.array(starts)


@pytest.mark.parametrize(("name", "class_position"), [("iris.arff", -1), ("wine.arff", 0), ("vehicle.arff", -1)])
@pytest.mark.parametrize("better_encoding", [False, True])
def test_a_batch_of_real_features_is_cut_as_each_feature_alone(name, class_position, better_encoding):
    values, counts, starts = _features_of(name, class_position)
    batch = mdl_cut_points_by_feature(values, counts, starts, better_encoding=better_encoding)
    alone = _one_at_a_time(values, counts, starts, better_encoding=better_encoding)
    assert [cuts.tobytes() for cuts in batch] == [cuts.tobytes() for cuts in alone]
    assert sum(len(cuts) for cuts in batch) > len(batch)  # several features are cut more than once


def test_iris_petal_cuts_are_the_hand_checked_ones():
    """Weka's supervised Discretize cuts iris' petal length at 2.45 and 4.75 (and 5.15 by the
    default encoding): the class-pure boundary first, then the versicolor/virginica one."""
    values, counts, starts = _features_of("iris.arff", -1)
    petal_length = mdl_cut_points_by_feature(values, counts, starts)[2]
    assert petal_length[:2].tolist() == [2.45, 4.75]


@pytest.mark.parametrize("seed", range(4))
def test_random_features_with_ties_and_weights_are_cut_as_each_alone(seed):
    rng = np.random.default_rng(seed)
    n_classes = int(rng.integers(2, 12))
    values, counts, rows, starts = [], [], [], [0]
    for _ in range(60):
        distinct = np.unique(rng.integers(0, 40, int(rng.choice([0, 1, 2, 5, 30, 200])))) / 3.0
        if seed % 2:
            by_class = rng.integers(0, 3, (len(distinct), n_classes)).astype(float)  # many ties
        else:
            by_class = rng.random((len(distinct), n_classes)) * (rng.random((len(distinct), n_classes)) < 0.3)
        values.append(distinct)
        counts.append(by_class)
        rows.append(by_class.sum(axis=1) + rng.integers(0, 2, len(distinct)))
        starts.append(starts[-1] + len(distinct))
    v, c, r, s = np.concatenate(values), np.concatenate(counts), np.concatenate(rows), np.array(starts)
    for options in ({}, {"better_encoding": True}, {"row_counts": r}):
        batch = mdl_cut_points_by_feature(v, c, s, **options)
        alone = [
            mdl_cut_points(
                v[a:b],
                c[a:b],
                better_encoding=options.get("better_encoding", False),
                row_counts=None if "row_counts" not in options else r[a:b],
            )
            for a, b in zip(s[:-1], s[1:], strict=True)
        ]
        assert len(batch) == 60
        assert [cuts.tobytes() for cuts in batch] == [cuts.tobytes() for cuts in alone]


def test_class_entropies_are_the_hand_computed_ones():
    def entropy(counts):
        return _class_entropies(np.array([counts]))[0]

    assert entropy([1.0, 1.0]) == 1.0
    assert entropy([2.0, 1.0, 1.0]) == pytest.approx(1.5, rel=1e-15)
    assert entropy([3.0, 0.0]) == 0.0
    assert entropy([1e-7, 1e-7]) == 0.0  # Weka's 1e-6 floor on the total


def test_no_values_or_one_value_has_no_cut():
    assert [len(c) for c in mdl_cut_points_by_feature(np.zeros(0), np.zeros((0, 2)), np.array([0, 0, 0]))] == [0, 0]
    one = mdl_cut_points_by_feature(np.array([1.0, 1.0]), np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([0, 1, 2]))
    assert [len(c) for c in one] == [0, 0]
