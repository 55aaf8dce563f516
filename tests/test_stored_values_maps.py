"""Consecutive stages that map a sparse chunk's stored values run as one step
(filterkit.stage.ValueMapped.stored_values_map, filterkit.runner.Chain._through): the chunks are the
ones the stages' own transforms give, bit for bit, and the step keeps the stage contract."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from chain_helpers import REAL
from filterkit.arff import read_arff
from filterkit.contract import ContractError
from filterkit.plugins import load_plugins
from filterkit.runner import Chain, _steps
from filterkit.schema import Attribute, Chunk, Schema
from filterkit.sources import MemorySource
from filterkit.stage import ValueMapped


def fitted(file: str, class_spec: str, stages: list[tuple[str, dict]]) -> tuple[Chain, Chunk]:
    """The chain of ``stages`` (name, options) fitted on ``file``."""
    schema, chunk = read_arff(REAL / file)
    registry = load_plugins()
    chain = Chain([registry.make_stage(name, options) for name, options in stages], class_spec=class_spec)
    return chain.fit(MemorySource(schema, chunk)), chunk


def csr_arrays(chunk: Chunk) -> tuple:
    matrix = chunk.values
    return matrix.indptr.tolist(), matrix.indices.tolist(), matrix.data.view(np.int64).tolist()


def both_ways(monkeypatch, chain: Chain, chunks: list[Chunk]) -> tuple[list, list]:
    together = [csr_arrays(chunk) for chunk in chain.transform(iter(chunks))]
    monkeypatch.setattr(ValueMapped, "stored_values_map", lambda self: None)
    for stage in chain.stages:
        monkeypatch.setattr(stage, "stored_values_map", lambda: None, raising=False)
    apart = [csr_arrays(chunk) for chunk in chain.transform(iter(chunks))]
    return together, apart


CHAINS = [
    ("grain_wc.arff", "first", [("shape", {}), ("bns", {}), ("l2", {})]),
    ("grain_wc.arff", "first", [("bns", {"multiply": True}), ("l1", {})]),
    ("grain_wc.arff", "first", [("minmax", {}), ("binarize", {}), ("bns", {"presence": True}), ("l2", {})]),
    ("oh0.wc.arff", "last", [("shape", {"multiclass": "max"}), ("ig", {"scale": False}), ("l2", {})]),
    ("oh0.wc.arff", "last", [("shape", {"zero_bin": False, "multiclass": "max"}), ("chi", {}), ("l2", {})]),
]


@pytest.mark.slow
@pytest.mark.parametrize("file, class_spec, words", CHAINS)
def test_stages_mapped_together_give_the_chunks_of_their_own_transforms(monkeypatch, file, class_spec, words):
    chain, chunk = fitted(file, class_spec, words)
    maps = [stage.stored_values_map() for stage in chain.stages]
    assert sum(value_map is not None for value_map in maps) >= 2  # the step is taken
    matrix = chunk.values.tocsr()
    chunks = [Chunk(matrix[start : start + 97], {}, None) for start in range(0, matrix.shape[0], 97)]
    together, apart = both_ways(monkeypatch, chain, chunks)
    assert together == apart


def test_zeros_nans_and_infinities_left_by_one_map_are_what_the_next_stage_would_see():
    # bns gives a feature constant in training a factor 0: its values become 0 before l2
    rows = np.array([[0, 1, 3, 0], [1, 1, 0, 2], [0, 1, 5, np.nan], [1, 1, 1e300, np.inf]] * 3)
    schema = Schema(
        "t", (Attribute("c", "nominal", ("0", "1")),) + tuple(Attribute(f"a{i}", "numeric") for i in range(3))
    )
    registry = load_plugins()
    chain = Chain([registry.make_stage("bns", {}), registry.make_stage("l2", {})], class_spec="first")
    chunk = Chunk(sp.csr_matrix(rows), {}, None)
    chain.fit(MemorySource(schema, Chunk(sp.csr_matrix(rows[:3]), {}, None)))  # a0 constant, a2 finite
    assert all(stage.stored_values_map() is not None for stage in chain.stages)
    together = chain.transform(iter([chunk]))
    apart = chain.stages[1].transform(chain.stages[0].transform(chunk))
    assert csr_arrays(next(together)) == csr_arrays(apart)


def test_runs_of_maps_become_one_step_each():
    assert _steps([None, print, print, None, print, None, print, print, print], [False] * 9, [False] * 9) == [
        (0, 1),
        (1, 3),
        (3, 4),
        (4, 5),
        (5, 6),
        (6, 9),
    ]


def test_a_map_that_changes_the_class_ends_its_step():
    """Its result is checked against its own contract, which checks the class's labels (a later
    map's does not: the class is not its to change)."""
    assert _steps([print, print, print, print], [False, True, False, False], [False] * 4) == [(0, 2), (2, 4)]


def test_a_map_of_a_stage_that_accepts_no_negative_value_starts_its_step():
    """Its input is then a chunk the chain can check (:func:`filterkit.stage.refuse_negative_values`)."""
    assert _steps([print, print, print, print], [False] * 4, [False, False, True, False]) == [(0, 2), (2, 4)]


def test_a_map_that_returns_the_wrong_length_breaks_the_contract(monkeypatch):
    chain, chunk = fitted("oh0.wc.arff", "last", [("l2", {}), ("l1", {})])
    monkeypatch.setattr(chain.stages[1], "stored_values_map", lambda: lambda matrix, data: data[:-1], raising=False)
    with pytest.raises(ContractError, match="stage 'l1'.*stored-values map returned float64 values of shape"):
        list(chain.transform(iter([Chunk(chunk.values.tocsr()[:20], {}, None)])))
