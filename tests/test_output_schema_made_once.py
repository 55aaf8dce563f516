"""Stages that learn class value counts make their output schema once per input schema
(filterkit.class_counts_stage.ClassValueCountsStage.output_schema): the chain asks for it several
times, and at 13,000 attributes each making cost about 40 ms."""

from __future__ import annotations

from chain_helpers import REAL
from filterkit.arff import read_arff
from filterkit.plugins import load_plugins
from filterkit.schema import NUMERIC
from filterkit.stage import Context, Stage


def prepared(name: str, file: str, **options):
    schema, _ = read_arff(REAL / file)
    stage = load_plugins().make_stage(name, options)
    stage.prepare(schema, Context(class_index=len(schema.attributes) - 1))
    return schema, stage


def test_the_output_schema_is_made_once_and_is_the_stage_s_own():
    _, stage = prepared("bns", "credit-g.arff")
    first = stage.output_schema()
    assert stage.output_schema() is first
    assert first == Stage.output_schema(stage)
    changed = [a for a in first.attributes if a.kind == NUMERIC and a.declared_type == "numeric"]
    assert len(changed) == 7  # credit-g's seven numeric attributes, re-declared numeric


def test_a_new_input_schema_gets_its_own_output_schema():
    _, stage = prepared("shape", "credit-g.arff", multiclass="max")
    credit = stage.output_schema()
    vowel, _ = read_arff(REAL / "vowel.arff")
    stage.prepare(vowel, Context(class_index=len(vowel.attributes) - 1))
    again = stage.output_schema()
    assert again is not credit
    assert [a.name for a in again.attributes] == [a.name for a in vowel.attributes]
    assert again == Stage.output_schema(stage)
