"""A subclass that overrides ``transform`` is run by its own transform, even where its parent gives a
value map or a stored-values map: ``Stage.__init_subclass__`` drops what the parent derives from its
transform (the stored-values map, the next stage's statistics), so a third party's override of a
built-in stage is bypassed neither by the chain's fused step nor by the statistics handed on."""

from __future__ import annotations

import numpy as np
import pytest

from chain_helpers import REAL
from filterkit.arff import read_arff
from filterkit.plugins import load_plugins
from filterkit.runner import Chain
from filterkit.schema import Chunk
from filterkit.sources import MemorySource


def halving(registry, name: str):
    """A third party's stage: the built-in stage's class with a transform that halves its features' values."""
    parent = registry.stages[name].value

    class Halved(parent):
        def transform(self, chunk: Chunk) -> Chunk:
            done = super().transform(chunk)
            values = done.values.copy()
            values.data[np.isin(values.indices, self.features)] /= 2
            return Chunk(values, done.text, done.weights)

    return Halved


def test_an_overridden_transform_is_run_after_a_stage_with_a_map():
    registry = load_plugins()
    schema, chunk = read_arff(REAL / "grain_wc.arff")
    plain = Chain([registry.make_stage("bns", {}), registry.make_stage("l2", {})], class_spec="first")
    halved = Chain([registry.make_stage("bns", {}), halving(registry, "l2")()], class_spec="first")
    expected = next(plain.fit(MemorySource(schema, chunk)).transform(iter([chunk]))).values
    found = next(halved.fit(MemorySource(schema, chunk)).transform(iter([chunk]))).values
    assert expected.nnz > 1000 and chunk.is_sparse
    features = np.isin(expected.indices, halved.stages[1].features)
    assert 0 < features.sum() < expected.nnz  # the class column's entries are left as they are
    np.testing.assert_array_equal(found.indices, expected.indices)
    np.testing.assert_array_equal(found.data, np.where(features, expected.data / 2, expected.data))


@pytest.mark.slow
def test_an_overridden_transform_is_what_the_next_stage_fits_on():
    registry = load_plugins()
    schema, chunk = read_arff(REAL / "grain_wc.arff")
    chain = Chain([halving(registry, "bns")(), registry.make_stage("bns", {})], class_spec="first")
    first, second = chain.fit(MemorySource(schema, chunk)).stages
    assert first.stored_values_map() is None and first.statistics_for(second) is None
    output = first.transform(chunk).values.toarray()[:, second.features]
    assert output.max() > 0
    np.testing.assert_array_equal(second.maximum, output.max(axis=0))
