""":func:`filterkit.classifying.classifier_matrix` takes the numeric features by renumbering the stored entries with a
table made once per schema and class: the same CSR, entry for entry, as scipy's column selection it replaces."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from filterkit.classifying import classifier_matrix
from filterkit.schema import NOMINAL, NUMERIC, Attribute, Chunk, Schema


def schema_of(kinds: list[str]) -> Schema:
    attributes = [
        Attribute(f"a{k}", kind, labels=("x", "y") if kind == NOMINAL else ()) for k, kind in enumerate(kinds)
    ]
    return Schema("r", attributes)


@pytest.mark.parametrize("seed", range(40))
def test_the_numeric_features_are_scipy_s_columns_entry_for_entry(seed):
    generator = np.random.default_rng(seed)
    width = int(generator.integers(2, 40))
    kinds = [NOMINAL if generator.random() < 0.15 else NUMERIC for _ in range(width)]
    class_index = int(generator.integers(width))
    kinds[class_index] = NOMINAL
    schema = schema_of(kinds)
    values = sp.random(int(generator.integers(1, 20)), width, density=generator.random(), random_state=seed).tocsr()
    nominal = [k for k, kind in enumerate(kinds) if kind == NOMINAL]
    values = values.tolil()
    for k in nominal:
        values[:, k] = generator.integers(0, 2, (values.shape[0], 1))
    values = values.tocsr()
    values.data[generator.random(len(values.data)) < 0.1] = np.nan
    numeric = [k for k, kind in enumerate(kinds) if kind == NUMERIC and k != class_index]
    for _ in range(2):  # made, then read from the schema's table
        features = classifier_matrix(schema, Chunk(values), class_index)
        expected = values[:, numeric]
        expected.data = np.nan_to_num(expected.data, nan=0.0)
        expected.eliminate_zeros()
        got = features[:, : len(numeric)].tocsr()
        assert got.shape == expected.shape
        assert np.array_equal(got.indptr, expected.indptr) and np.array_equal(got.indices, expected.indices)
        assert got.data.tobytes() == expected.data.tobytes()
        assert features.shape[1] == len(numeric) + 2 * (len(nominal) - 1)
