"""Stored-values maps that break the contract around the chain's guards (a test fixture, never for
real use, from a hostile review): writing the rows' structure through the read-only views' base or by
making them writeable again, an output schema that moves the class attribute, and a map that changes
the class to a code no label has."""

import numpy as np

from filterkit.hookspecs import hookimpl
from filterkit.stage import Stage


class MapFixture(Stage):
    """A stage with a stored-values map, ``value_map(self, rows, data)``; its transform returns the chunk."""

    def value_map(self, rows, data):
        return data.copy()

    def stored_values_map(self):
        return self.value_map

    def transform(self, chunk):
        return chunk


class RenumberThroughBase(MapFixture):
    """Move the class's entries to column 1 by writing the writable array behind the read-only view."""

    name = "renumberthroughbase"
    summary = "Renumber the class's entries through the indices' base (test fixture)."

    def value_map(self, rows, data):
        indices = rows.indices.base
        indices[indices == self.context.class_index] = 1
        return data.copy()


class IndexPastTheEnd(MapFixture):
    """Make the read-only indices writeable again and point the last entry past the columns."""

    name = "indexpasttheend"
    summary = "Point an entry past the columns, indices made writeable (test fixture)."

    def value_map(self, rows, data):
        rows.indices.flags.writeable = True
        rows.indices[-1] = rows.shape[1] + 5
        return data.copy()


class SwapClass(MapFixture):
    """An identity map whose output schema swaps the class attribute with the next one."""

    name = "swapclass"
    summary = "Swap the class attribute with the next one in the schema only (test fixture)."

    def output_schema(self):
        attributes = list(self.input_schema.attributes)
        position = self.context.class_index
        attributes[position], attributes[position + 1] = attributes[position + 1], attributes[position]
        return self.input_schema.with_attributes(attributes)


class SwapClassDeclared(SwapClass):
    """The same, declaring that it changes the class (so moving it is allowed)."""

    name = "swapclassdeclared"
    summary = "Swap the class attribute with the next one, declared (test fixture)."
    changes_class = True


class ClassCode99(MapFixture):
    """A map declaring that it changes the class, which sets every stored class code to 99."""

    name = "classcode99"
    summary = "Set the stored class codes to 99, declared (test fixture)."
    changes_class = True

    def value_map(self, rows, data):
        return np.where(rows.indices == self.context.class_index, 99.0, data)


@hookimpl
def register_stages(register):
    for stage in (RenumberThroughBase, IndexPastTheEnd, SwapClass, SwapClassDeclared, ClassCode99):
        register(stage)
