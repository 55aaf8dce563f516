"""The ``l2`` and ``l1`` row normalizers (REFERENCE.md, Normalizers), through the CLI and the Python API."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from chain_helpers import REAL, read_bytes
from filterkit.arff import read_arff
from filterkit.plugins import load_plugins
from filterkit.schema import Chunk
from filterkit.stage import Context

ORDERS = {"l2": 2, "l1": 1}

TINY_HEADER = """@relation tiny
@attribute a integer
@attribute b real
@attribute c numeric
@attribute label {x,y}
@attribute score integer
@data
"""
# A row with a negative value, an all-zero row, a row with one missing value, an all-missing row.
TINY_DENSE = TINY_HEADER + "3,-4,0,x,7\n0,0,0,y,8\n?,4,3,x,9\n?,?,?,y,10\n"
TINY_SPARSE = TINY_HEADER + "{0 3,1 -4,4 7}\n{3 y,4 8}\n{0 ?,1 4,2 3,4 9}\n{0 ?,1 ?,2 ?,3 y,4 10}\n"
NAN = math.nan
TINY_EXPECTED = {
    "l2": [[0.6, -0.8, 0, 0, 7], [0, 0, 0, 1, 8], [NAN, 0.8, 0.6, 0, 9], [NAN, NAN, NAN, 1, 10]],
    "l1": [[3 / 7, -4 / 7, 0, 0, 7], [0, 0, 0, 1, 8], [NAN, 4 / 7, 3 / 7, 0, 9], [NAN, NAN, NAN, 1, 10]],
}


def row_norms(values: np.ndarray, order: int) -> np.ndarray:
    """Each row's norm of the given order, missing values left out."""
    return np.nansum(np.abs(values) ** order, axis=1) ** (1 / order)


@pytest.mark.parametrize("stage", ["l2", "l1"])
@pytest.mark.parametrize("text", [TINY_DENSE, TINY_SPARSE], ids=["dense", "sparse"])
def test_zero_row_stays_zero_and_missing_stays_missing(run_filterkit, tmp_path, stage, text):
    path = tmp_path / "tiny.arff"
    path.write_text(text)
    result = run_filterkit(path, stage)
    assert result.status == 0, result.stderr
    _, chunk = read_bytes(result.stdout)
    np.testing.assert_allclose(chunk.dense_values(), TINY_EXPECTED[stage], rtol=1e-15, atol=0)
    zero_row = result.stdout.decode().split("@data\n")[1].splitlines()[1]
    assert "?" not in zero_row, "unlike Weka's Normalize, an all-zero row must not become missing"


@pytest.mark.parametrize("text", [TINY_DENSE, TINY_SPARSE], ids=["dense", "sparse"])
def test_changed_attributes_are_declared_numeric_and_the_class_keeps_its_type(run_filterkit, tmp_path, text):
    path = tmp_path / "tiny.arff"
    path.write_text(text)
    result = run_filterkit(path, "l2")
    header = result.stdout.decode().split("@data")[0]
    assert "@attribute a numeric" in header
    assert "@attribute b numeric" in header
    assert "@attribute score integer" in header, "the class (last attribute) is untouched, so it keeps 'integer'"
    assert "@attribute label {x,y}" in header


@pytest.mark.parametrize("stage", ["l2", "l1"])
@pytest.mark.parametrize("name", ["iris.arff", "oh0.wc.arff"])
def test_every_row_of_real_data_has_norm_one_and_keeps_its_direction(run_filterkit, stage, name):
    schema, original = read_arff(REAL / name)
    result = run_filterkit(REAL / name, stage)
    assert result.status == 0, result.stderr
    out_schema, normalized = read_bytes(result.stdout)
    assert normalized.is_sparse == original.is_sparse, "sparse input must stay sparse"
    before, after = original.dense_values(), normalized.dense_values()
    features = [i for i, a in enumerate(schema.attributes[:-1]) if a.is_numeric]
    norms = row_norms(before[:, features], ORDERS[stage])
    assert (norms > 0).all()
    np.testing.assert_allclose(row_norms(after[:, features], ORDERS[stage]), 1.0, rtol=1e-12)
    np.testing.assert_allclose(after[:, features] * norms[:, None], before[:, features], rtol=1e-12)
    np.testing.assert_array_equal(after[:, -1], before[:, -1])
    assert [a.declared_type for a in out_schema.attributes[:-1]] == ["numeric"] * (len(schema) - 1)
    assert out_schema.attributes[-1] == schema.attributes[-1]


def test_sparse_output_is_written_as_sparse_rows(run_filterkit):
    result = run_filterkit(REAL / "oh0.wc.arff", "l2")
    rows = result.stdout.decode().split("@data\n")[1].splitlines()
    assert rows and all(row.startswith("{") and row.endswith("}") for row in rows)
    assert "integer" not in result.stdout.decode().split("@data")[0].lower()


@pytest.mark.parametrize("stage", ["l2", "l1"])
def test_python_api_transform_is_pure_and_ignores_the_class(stage):
    registry = load_plugins()
    schema, chunk = read_arff(REAL / "wine.arff")
    original = chunk.values.copy()
    normalizer = registry.make_stage(stage, {})
    normalizer.prepare(schema, Context(class_index=schema.index_of("Proline")))
    out = normalizer.transform(chunk)
    np.testing.assert_array_equal(chunk.values, original)
    np.testing.assert_array_equal(out.values[:, [0, 13]], original[:, [0, 13]])
    np.testing.assert_allclose(row_norms(out.values[:, 1:13], ORDERS[stage]), 1.0, rtol=1e-12)
    assert normalizer.plugin_name == "normalizers"


def test_python_api_sparse_chunk_with_an_all_zero_row():
    registry = load_plugins()
    schema, chunk = read_arff(REAL / "oh0.wc.arff")
    class_index = len(schema) - 1
    rows = chunk.values[:3].toarray()
    rows[1, :class_index] = 0.0
    normalizer = registry.make_stage("l2", {})
    normalizer.prepare(schema, Context(class_index=class_index))
    out = normalizer.transform(Chunk(sp.csr_matrix(rows)))
    assert out.is_sparse
    values = out.values.toarray()
    assert not np.isnan(values).any()
    np.testing.assert_array_equal(values[1], rows[1])
    np.testing.assert_allclose(np.linalg.norm(values[[0, 2], :class_index], axis=1), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(values[:, class_index], rows[:, class_index])
