"""Issue 73, item 3: a stage's core is small, and what only some stages do is a protocol each opts into by
inheriting it (``ValueMapped``, ``KeptPass``, ``Updatable``, ``Explainable`` in filterkit.stage), which the chain
tests with ``isinstance``.  A stage class written before the protocols, which defines a protocol's methods (or
sets ``keeps_fit_pass``) without naming it, is made its subclass, so it runs as it did."""

from __future__ import annotations

import numpy as np
import pytest

from filterkit.plugins import load_plugins
from filterkit.schema import Attribute, Chunk, Schema
from filterkit.stage import Context, Explainable, KeptPass, Stage, Updatable, ValueMapped

PROTOCOLS = (ValueMapped, KeptPass, Updatable, Explainable)

#: The protocols each built-in stage implements.
BUILT_IN = {
    "words": {KeptPass, Updatable, Explainable},
    "shape": {ValueMapped},
    "bns": {ValueMapped},
    "l2": {ValueMapped},
    "binarize": {ValueMapped},
    "minmax": {ValueMapped, Updatable},
    "replace-missing": {ValueMapped, Updatable},
    "remove-useless": {Updatable},
    "select": {Updatable},
    "discretize": set(),
    "ordinal": set(),
    "auto": set(),
    "fold": set(),
}


@pytest.mark.parametrize("name", sorted(BUILT_IN))
def test_each_built_in_stage_is_an_instance_of_the_protocols_it_implements(name):
    stage_class = load_plugins().stage(name)
    stage = stage_class(**stage_class.examples[0])
    assert {protocol for protocol in PROTOCOLS if isinstance(stage, protocol)} == BUILT_IN[name]


def test_the_core_holds_no_optional_method():
    moved = {"stored_values_map", "statistics_for", "accumulate_kept", "transform_kept", "keeps_fit_pass"}
    assert not moved & set(dir(Stage))


def schema() -> Schema:
    return Schema("r", [Attribute("a", "numeric"), Attribute("b", "numeric")])


class Doubled(Stage):
    """A stage of the plugin API before the protocols: a value map, and the transform it gave."""

    name = "doubled"

    def preserves_zeros(self) -> bool:
        return True

    def value_map(self):
        return lambda positions, values: values * 2


def test_a_stage_defining_a_value_map_without_naming_the_protocol_is_value_mapped():
    stage = Doubled()
    stage.prepare(schema(), Context())
    assert isinstance(stage, ValueMapped)
    assert stage.transform(Chunk(np.array([[1.0, 2.0]]))).values.tolist() == [[2.0, 4.0]]
    assert stage.stored_values_map() is not None and stage.statistics_for(stage) is None


def test_a_subclass_of_such_a_stage_is_value_mapped_by_inheritance():
    class Tripled(Doubled):
        def value_map(self):
            return lambda positions, values: values * 3

    assert Tripled.__bases__ == (Doubled,) and isinstance(Tripled(), ValueMapped)


def test_a_stage_setting_keeps_fit_pass_is_a_kept_pass():
    """docs/plugins.md documents ``keeps_fit_pass`` as a stage's declaration: it keeps working."""

    class Keeping(Stage):
        learns = keeps_fit_pass = True

        def accumulate_kept(self, statistics, chunk):
            return statistics, chunk

    assert isinstance(Keeping(), KeptPass) and Keeping.keeps_fit_pass


def test_a_stage_saving_or_explaining_its_counts_is_updatable_or_explainable():
    class Saving(Stage):
        def saved_statistics(self, statistics):
            return {}

    class Explaining(Stage):
        def explained_counts(self, chunk):
            return chunk

    assert isinstance(Saving(), Updatable) and not isinstance(Saving(), Explainable)
    assert isinstance(Explaining(), Explainable) and not isinstance(Explaining(), Updatable)


def test_a_stage_implementing_two_protocols_unnamed_is_both():
    class Both(Stage):
        def value_map(self):
            return None

        def explained_counts(self, chunk):
            return chunk

    assert isinstance(Both(), ValueMapped) and isinstance(Both(), Explainable)


def test_a_plain_stage_is_none_of_the_protocols():
    class Plain(Stage):
        def transform(self, chunk):
            return chunk

    assert not any(isinstance(Plain(), protocol) for protocol in PROTOCOLS)


def test_a_value_mapped_subclass_with_its_own_transform_has_neither_derived_map():
    class Overridden(Doubled):
        def transform(self, chunk):
            return chunk

    stage = Overridden()
    stage.prepare(schema(), Context())
    assert stage.stored_values_map() is None and stage.statistics_for(stage) is None
