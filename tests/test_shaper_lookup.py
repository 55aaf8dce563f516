"""The shaper's compiled kernel reads a column's shaped whole values from a table made once per fit
(plugins/shaper.py ``Shaper._lookup_tables``); the floats are the numpy path's, bit for bit.

The table holds, per numeric column, :meth:`Shaper._shape` of each whole value from the column's
first knot to its last; every other value (fractional, outside that range, 0, missing) is shaped
as before.  Each test runs the compiled and numpy paths on the same chunk and compares bits, and
one checks that the kernel reads the table at the right place (a table it ignored would pass
the comparisons).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from test_kernels import REAL, bits

from filterkit import kernels
from filterkit.arff import read_arff
from filterkit.plugins import load_plugins
from filterkit.runner import Chain
from filterkit.schema import Chunk
from filterkit.sources import MemorySource


def fitted_shaper(file: str, class_spec: str, **options):
    schema, chunk = read_arff(REAL / file)
    chain = Chain([load_plugins().make_stage("shape", options)], class_spec=class_spec)
    chain.fit(MemorySource(schema, chunk))
    return chain.stages[0], chunk


def shaped_both_ways(stage, chunk: Chunk) -> tuple[tuple, tuple]:
    """The shaped chunk's CSR arrays (row starts, columns, value bits) with the kernel, then by numpy."""
    results = []
    for compiled in (True, False):
        with kernels.compiled(compiled, kernels.ARRAYS):
            matrix = stage.transform(chunk).values
            results.append((matrix.indptr.tolist(), matrix.indices.tolist(), bits(matrix.data).tolist()))
    return results[0], results[1]


def probe_chunk(stage, n_columns: int) -> Chunk:
    """One row per probe value in every shaped column: whole values inside and outside each
    column's knots, fractions, negatives, huge values, 0, -0.0 and NaN."""
    probes = np.r_[np.arange(-3.0, 60.0), 0.5, 2.5, 1e-300, 2.0**52, 2.0**53 + 2, 1e300, -0.0, np.nan, np.inf]
    values = np.zeros((len(probes), n_columns))
    values[:, stage.features] = probes[:, None]
    return Chunk(sp.csr_matrix(values), {}, None)


@pytest.mark.parametrize(
    "file, class_spec, options",
    [
        pytest.param("grain_wc.arff", "first", {}, marks=pytest.mark.slow),
        ("oh0.wc.arff", "last", {"multiclass": "max"}),
        ("credit-g.arff", "last", {}),  # nominal attributes: shaped by label, not looked up
        pytest.param("grain_wc.arff", "first", {"zero_bin": False}, marks=pytest.mark.slow),
        ("vowel.arff", "last", {"neighbors": 3, "multiclass": "max"}),
    ],
)
def test_looked_up_values_are_the_numpy_paths_bit_for_bit(file, class_spec, options):
    stage, chunk = fitted_shaper(file, class_spec, **options)
    sparse = chunk if chunk.is_sparse else Chunk(sp.csr_matrix(chunk.values), {}, None)
    compiled, plain = shaped_both_ways(stage, sparse)
    assert compiled == plain
    compiled, plain = shaped_both_ways(stage, probe_chunk(stage, chunk.values.shape[1]))
    assert compiled == plain


def test_word_counts_get_a_table_sized_by_their_knots():
    stage, _ = fitted_shaper("grain_wc.arff", "first")
    start, low, high, lookup = stage._lookup_tables()
    assert (start >= 0).sum() > 0.9 * len(start)  # nearly every word's knots are whole counts
    assert len(lookup) <= 4 * len(stage.knot_value)
    assert stage._lookup_tables()[3] is lookup  # made once
    column = int(np.flatnonzero((start >= 0) & (high - low >= 3))[0])
    values = low[column] + np.arange(high[column] - low[column] + 1)
    expected = stage._shape(np.full(len(values), column), values)
    np.testing.assert_array_equal(bits(lookup[start[column] : start[column] + len(values)]), bits(expected))


def test_the_kernel_reads_each_whole_value_at_its_place_in_the_table():
    stage, chunk = fitted_shaper("grain_wc.arff", "first")
    tables = stage._compiled_tables()
    start, low, high = tables["table_start"], tables["table_low"], tables["table_high"]
    # a table whose entry for value v of column c is c + v / 1000: what comes back shows where it was read
    column = np.repeat(np.arange(len(start)), np.where(start >= 0, high - low + 1, 0).astype(np.int64))
    marked = column + (low[column] + np.arange(len(column)) - start[column]) / 1000
    tables["lookup"] = marked
    matrix = chunk.values.tocsr()
    position = np.full(matrix.shape[1], -1, dtype=np.int64)
    position[stage.features] = np.arange(len(stage.features))
    out = np.empty(matrix.nnz)
    assert kernels.shape_stored(indices=matrix.indices, data=matrix.data, position=position, out=out, **tables)
    shaped_column = position[matrix.indices]
    looked_up = (shaped_column >= 0) & (start[np.maximum(shaped_column, 0)] >= 0)
    looked_up &= (matrix.data >= low[np.maximum(shaped_column, 0)]) & (
        matrix.data <= high[np.maximum(shaped_column, 0)]
    )
    assert looked_up.sum() > 0.9 * matrix.nnz
    np.testing.assert_array_equal(out[looked_up], shaped_column[looked_up] + matrix.data[looked_up] / 1000)
