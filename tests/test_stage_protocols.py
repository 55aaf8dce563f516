"""Issue 73, item 3: a stage's core is small, and what only some stages do is a protocol each opts into by
inheriting it (``ValueMapped``, ``KeptPass``, ``Updatable``, ``Explainable`` in filterkit.stage), which the chain
tests with ``isinstance``.  A stage class written before the protocols, which defines a protocol's methods (or
sets ``keeps_fit_pass``) without naming it, is made its subclass, so it runs as it did."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pytest
import scipy.sparse as sp

from filterkit.errors import FilterkitError
from filterkit.plugins import load_plugins
from filterkit.runner import Chain
from filterkit.schema import Attribute, Chunk, Schema
from filterkit.sources import MemorySource
from filterkit.stage import Context, Explainable, KeptPass, Stage, Updatable, ValueMapped
from filterkit.updating import loaded_statistics, saved_statistics

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


# Issue 73, item 3, the review of the adoption: what a class of the plugin API before the protocols (commit 11a30fe,
# where Stage itself held every protocol's methods) did, it does, whatever the layout of its bases.


def sparse_and_dense() -> tuple[Chunk, Chunk]:
    dense = np.array([[3.0, 0.0], [0.0, 2.0], [1.0, 4.0]])
    return Chunk(sp.csr_matrix(dense)), Chunk(dense)


def chain_output(stage: Stage, chunk: Chunk) -> np.ndarray:
    """What a chain of ``stage`` alone writes for ``chunk``, dense (a sparse chunk: by its stored-values map)."""
    chain = Chain([stage], class_spec=None).fit(MemorySource(schema(), chunk))
    values = next(chain.transform(iter([chunk]))).values
    return values.toarray() if sp.issparse(values) else values


class PlusOne(Stage):
    """A stage of the old plugin API with a transform of its own: one added to each value other than 0."""

    name = "plusone"

    def transform(self, chunk):
        values = chunk.dense_values().copy()
        values[values != 0] += 1
        return Chunk(sp.csr_matrix(values) if chunk.is_sparse else values)


def test_a_child_declaring_a_value_map_under_a_parents_transform_runs_the_parents_transform_sparse_or_dense():
    class PlusOneChild(PlusOne):
        def value_map(self):
            return lambda positions, values: values * 10

    for chunk in sparse_and_dense():
        assert chain_output(PlusOneChild(), chunk).tolist() == [[4.0, 0.0], [0.0, 3.0], [2.0, 5.0]]
    stage = PlusOneChild()
    stage.prepare(schema(), Context())
    assert stage.stored_values_map() is None and stage.statistics_for(stage) is None


class Doubling:
    """A mixin, no stage, holding a value map."""

    def value_map(self):
        return lambda positions, values: values * 2


def test_a_value_map_from_a_mixin_gives_the_stage_its_transform():
    class MixDouble(Doubling, Stage):
        name = "mixdouble"

    assert isinstance(MixDouble(), ValueMapped) and MixDouble.__bases__ == (Doubling, ValueMapped, Stage)
    for chunk in sparse_and_dense():
        assert chain_output(MixDouble(), chunk).tolist() == [[6.0, 0.0], [0.0, 4.0], [2.0, 8.0]]


class Warns:
    """A mixin whose method Stage's overrode when it came after Stage among a stage's bases."""

    def fit_warnings(self):
        return ["the mixin's warning"]


class Other:
    """A mixin with a base of its own."""


class WithOther(Other):
    """A mixin whose base another base may name too."""


class LegacyParent(Stage):
    def transform(self, chunk):
        return chunk


class LegacyParentWarns(Stage, Warns):
    pass


class LegacyParentOther(Stage, Other):
    pass


#: The bases of a stage class written before the protocols, in the layouts a plugin may give them.
LAYOUTS = {
    "stage": (Stage,),
    "stage, mixin": (Stage, Warns),
    "mixin, stage": (Warns, Stage),
    "stage, object": (Stage, object),
    "parent": (LegacyParent,),
    "parent, mixin": (LegacyParent, Warns),
    "mixin, parent": (Warns, LegacyParent),
    "parent with a mixin, mixin": (LegacyParentWarns, Other),
    "parent, mixin, parent naming its base": (LegacyParent, WithOther, LegacyParentOther),
    "parent, mixin, parent, its base": (LegacyParent, WithOther, LegacyParentWarns, Other),
    "parent, mixin with a base, stage": (LegacyParent, WithOther, Stage),
    "mixin with a base, stage, its base": (WithOther, Stage, Other),
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_an_adopted_stage_keeps_its_order_of_classes_with_the_protocols_where_stage_held_their_methods(layout):
    bases = LAYOUTS[layout]
    before = type("Before", bases, {})  # defines no protocol's method: as it was
    adopted = type("Adopted", bases, {"value_map": Doubling.value_map, "explained_counts": lambda self, chunk: chunk})
    assert not isinstance(before(), ValueMapped)
    mro = list(before.__mro__[1:])
    mro[mro.index(Stage) : mro.index(Stage)] = [ValueMapped, Explainable]
    assert adopted.__mro__[1:] == tuple(mro)
    assert adopted.fit_warnings is before.fit_warnings


def test_a_stage_listed_before_a_mixin_keeps_its_methods_over_the_mixins():
    class Ordered(Stage, Warns):
        def value_map(self):
            return lambda positions, values: values

    stage = Ordered()
    stage.prepare(schema(), Context())
    assert Ordered.__bases__ == (ValueMapped, Stage, Warns) and stage.fit_warnings() == []


def test_a_stage_naming_object_among_its_bases_is_adopted():
    """``__bases__`` set to ``(object, ValueMapped)`` raised TypeError ('object' deallocator differs from 'Stage')."""

    class Explicit(Stage, object):
        def value_map(self):
            return lambda positions, values: values + 1

    assert Explicit.__bases__ == (ValueMapped, Stage, object)
    assert chain_output(Explicit(), sparse_and_dense()[1]).tolist() == [[4.0, 1.0], [1.0, 3.0], [2.0, 5.0]]


class Counted(Stage):
    """A stage that learns the number of rows it is given (counted by the chain's passes)."""

    name = "counted"
    learns = True
    passes: ClassVar[list[int]] = []

    def new_statistics(self):
        return 0

    def accumulate(self, statistics, chunk):
        Counted.passes.append(chunk.n_rows)
        return statistics + chunk.n_rows

    def merge(self, first, second):
        return first + second

    def finalize(self, statistics):
        self.rows = statistics

    def transform(self, chunk):
        return chunk


def test_a_stage_deriving_the_next_ones_statistics_is_asked_for_them():
    class Deriving(Counted):
        def statistics_for(self, following):
            return self.rows

    Counted.passes.clear()
    chain = Chain([Deriving(), Counted()], class_spec=None).fit(MemorySource(schema(), sparse_and_dense()[1]))
    assert isinstance(chain.stages[0], ValueMapped) and chain.stages[1].rows == 3
    assert Counted.passes == [3] and chain.stages[0].stored_values_map() is None


def test_a_stage_keeping_a_form_of_its_own_without_saying_so_keeps_none():
    class Keeping(Counted):
        def accumulate_kept(self, statistics, chunk):
            return self.accumulate(statistics, chunk), chunk

    assert isinstance(Keeping(), KeptPass) and Keeping.keeps_fit_pass is False


def test_a_stage_saying_only_how_it_refits_cannot_save_or_load_its_statistics():
    class Refit(Counted):
        name = "refit"

        def values_after_refit(self, before, before_statistics):
            return []

    stage = Refit()
    stage.prepare(schema(), Context())
    with pytest.raises(FilterkitError, match="^stage 'refit' cannot save its statistics, so a model holding it cannot"):
        saved_statistics(stage, 3)
    with pytest.raises(FilterkitError, match="^stage 'refit' cannot load saved statistics$"):
        loaded_statistics(stage, {"rows": 3})
