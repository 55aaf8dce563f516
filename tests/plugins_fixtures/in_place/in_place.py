"""Stages that change their input chunk in place (a test fixture, never for real use): the class
column, which the contract must catch although the stage's input is then its output too; a feature
column, which is allowed; and index arrays of a type the compiled parts do not read."""

import numpy as np

from filterkit.hookspecs import hookimpl
from filterkit.schema import Attribute, Chunk
from filterkit.stage import Stage


class DoubleInPlace(Stage):
    """Double every stored value of the chunk it is given, in place, and return that chunk."""

    name = "doubleinplace"
    summary = "Double the stored values in place (test fixture)."

    def transform(self, chunk):
        if chunk.is_sparse:
            chunk.csr().data[:] *= 2
        else:
            chunk.values[:] *= 2
        return chunk


class DoubleFeaturesInPlace(Stage):
    """Double the features of a dense chunk in place, the class column left as it is."""

    name = "doublefeaturesinplace"
    summary = "Double the features in place (test fixture)."

    def transform(self, chunk):
        features = [j for j in range(chunk.values.shape[1]) if j != self.context.class_index]
        chunk.values[:, features] *= 2
        return chunk


class MapOnly(Stage):
    """A stage run by its stored-values map ``value_map(self, rows, data)`` alone."""

    def value_map(self, rows, data):
        raise NotImplementedError

    def stored_values_map(self):
        return self.value_map

    def transform(self, chunk):
        raise AssertionError("run by its map")


class DoubleMapInPlace(MapOnly):
    """A stored-values map that doubles the values it is given in place."""

    name = "doublemapinplace"
    summary = "Double the stored values in place, as a stored-values map (test fixture)."

    def value_map(self, rows, data):
        data *= 2
        return data


class RenumberInPlace(MapOnly):
    """A stored-values map that writes to the rows' column indices it is given."""

    name = "renumberinplace"
    summary = "Write to the column indices, as a stored-values map (test fixture)."

    def value_map(self, rows, data):
        rows.indices[:] = 0
        return data


class ClassOneMap(MapOnly):
    """A stored-values map that declares it changes the class: every stored class code becomes 1."""

    name = "classonemap"
    summary = "Set the stored class codes to 1, as a stored-values map (test fixture)."
    changes_class = True

    def value_map(self, rows, data):
        changed = data.copy()
        changed[rows.indices == self.context.class_index] = 1.0
        return changed


class WidenedMap(MapOnly):
    """A stored-values map whose output schema declares one column more than its chunks hold."""

    name = "widenedmap"
    summary = "Declare an extra attribute, as a stored-values map (test fixture)."

    def value_map(self, rows, data):
        return data.copy()

    def output_schema(self):
        schema = self.input_schema
        return schema.with_attributes([*schema.attributes, *Attribute.numerics(["widened"], ["numeric"])])


class UnsignedIndices(Stage):
    """Return the rows with unsigned 64-bit index arrays."""

    name = "unsignedindices"
    summary = "Unsigned index arrays (test fixture)."

    def transform(self, chunk):
        rows = chunk.csr()
        return Chunk.from_csr(
            rows.data, rows.indices.astype(np.uint64), rows.indptr.astype(np.uint64), rows.shape, chunk.text
        )


class ListArrays(Stage):
    """Return the rows' CSR arrays as Python lists."""

    name = "listarrays"
    summary = "CSR arrays as lists (test fixture)."

    def transform(self, chunk):
        rows = chunk.csr()
        return Chunk.from_csr(rows.data.tolist(), rows.indices.tolist(), rows.indptr.tolist(), rows.shape, chunk.text)


@hookimpl
def register_stages(register):
    for stage in (
        DoubleInPlace,
        DoubleFeaturesInPlace,
        DoubleMapInPlace,
        RenumberInPlace,
        ClassOneMap,
        WidenedMap,
        UnsignedIndices,
        ListArrays,
    ):
        register(stage)
