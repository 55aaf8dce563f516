"""A stage whose changed attributes are all declared plain ``numeric`` already hands on its input
schema itself (filterkit.stage.Stage.output_schema): on word counts (13,000 attributes) the chain's
stages, contracts and writer then share one schema instead of each making its own."""

from __future__ import annotations

from chain_helpers import REAL
from filterkit.arff import read_arff
from filterkit.plugins import load_plugins
from filterkit.runner import Chain
from filterkit.schema import NUMERIC
from filterkit.sources import MemorySource


def fitted_chain(file: str, class_spec: str, *names: str) -> Chain:
    schema, chunk = read_arff(REAL / file)
    registry = load_plugins()
    chain = Chain([registry.make_stage(name, {}) for name in names], class_spec=class_spec)
    return chain.fit(MemorySource(schema, chunk))


def test_word_counts_keep_their_schema_through_shape_bns_l2():
    chain = fitted_chain("grain_wc.arff", "first", "shape", "bns", "l2")
    assert all(stage.output_schema() is stage.input_schema for stage in chain.stages)
    assert chain.output_schema is chain.input_schema


def test_attributes_declared_real_are_declared_numeric_after_a_stage_changes_them():
    chain = fitted_chain("iris.arff", "last", "l2")
    before, after = chain.input_schema.attributes, chain.output_schema.attributes
    assert [a.declared_type.lower() for a in before] == ["real"] * 4 + [""]
    assert [(a.kind, a.declared_type) for a in after[:4]] == [(NUMERIC, "numeric")] * 4
    assert after[4] is before[4]  # the class, not acted on, is the same attribute
