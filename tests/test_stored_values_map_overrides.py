"""A subclass that overrides ``transform`` is run by its own transform, even where its parent gives a
stored-values map (filterkit.runner._stored_values_map): the inherited map describes the parent's
transform, so a third party's override of a built-in stage is never bypassed by the chain's fused step."""

from __future__ import annotations

import numpy as np

from chain_helpers import REAL
from filterkit.arff import read_arff
from filterkit.plugins import load_plugins
from filterkit.runner import Chain
from filterkit.schema import Chunk
from filterkit.sources import MemorySource


def halved_l2(registry):
    """A third party's stage: the built-in l2's class with a transform that halves its features' values."""
    parent = registry.stages["l2"].value

    class HalvedL2(parent):
        def transform(self, chunk: Chunk) -> Chunk:
            normalized = super().transform(chunk)
            values = normalized.values.copy()
            values.data[np.isin(values.indices, self.features)] /= 2
            return Chunk(values, normalized.text, normalized.weights)

    return HalvedL2


def test_an_overridden_transform_is_run_after_a_stage_with_a_map():
    registry = load_plugins()
    schema, chunk = read_arff(REAL / "grain_wc.arff")
    plain = Chain([registry.make_stage("bns", {}), registry.make_stage("l2", {})], class_spec="first")
    halved = Chain([registry.make_stage("bns", {}), halved_l2(registry)()], class_spec="first")
    expected = next(plain.fit(MemorySource(schema, chunk)).transform(iter([chunk]))).values
    found = next(halved.fit(MemorySource(schema, chunk)).transform(iter([chunk]))).values
    assert expected.nnz > 1000 and chunk.is_sparse
    features = np.isin(expected.indices, halved.stages[1].features)
    assert 0 < features.sum() < expected.nnz  # the class column's entries are left as they are
    np.testing.assert_array_equal(found.indices, expected.indices)
    np.testing.assert_array_equal(found.data, np.where(features, expected.data / 2, expected.data))
