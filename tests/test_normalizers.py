"""The ``l2`` and ``l1`` row normalizers, ``minmax`` (docs/algorithms.md §7) and ``binarize``
(docs/algorithms.md §7), through the CLI and the Python API; ``minmax`` against Weka's Normalize."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from chain_helpers import REAL, needs_weka, read_bytes, weka_normalize, without_comments
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


@pytest.mark.slow
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
    assert normalizer.provenance.plugin == "normalizers"


@pytest.mark.parametrize("stage", ["l2", "l1"])
def test_dense_and_sparse_rows_are_normalized_to_the_same_bits(stage):
    """A row's norm sums its values in column order however the rows came: numpy's pairwise sum of a wide dense
    row rounded otherwise, so a dense and a sparse copy of oh0 gave other bits (and other predictions) on 205 rows."""
    registry = load_plugins()
    schema, chunk = read_arff(REAL / "oh0.wc.arff")
    class_index = len(schema) - 1
    rows = chunk.values.toarray()
    rows[:, :class_index] *= np.random.default_rng(5).uniform(0.1, 3.0, rows[:, :class_index].shape)
    rows[7, 3] = np.nan
    normalizer = registry.make_stage(stage, {})
    normalizer.prepare(schema, Context(class_index=class_index))
    dense = normalizer.transform(Chunk(rows.copy())).values
    sparse = normalizer.transform(Chunk(sp.csr_matrix(rows))).values.toarray()
    assert dense.tobytes() == sparse.tobytes()


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


# ---------------------------------------------------------------------------------------------
# binarize: presence, 1 where a numeric feature is non-zero (negative too), missing stays missing

PRESENCE_HEADER = """@relation presence
@attribute a integer
@attribute b real
@attribute note string
@attribute color {red,green}
@attribute score integer
@data
"""
# score (last) is the class: an integer class is left alone, as are the string and the nominal.
PRESENCE_DENSE = PRESENCE_HEADER + "3,-0.5,'x y',green,7\n0,0,'',red,0\n?,2,?,green,-3\n-4,?,z,?,?\n"
PRESENCE_SPARSE = (
    PRESENCE_HEADER + "{0 3,1 -0.5,2 'x y',3 green,4 7}\n{2 ''}\n{0 ?,1 2,2 ?,3 green,4 -3}\n{0 -4,1 ?,2 z,3 ?,4 ?}\n"
)
PRESENCE_EXPECTED = [[1, 1, 0, 1, 7], [0, 0, 0, 0, 0], [NAN, 1, NAN, 1, -3], [1, NAN, 0, NAN, NAN]]
PRESENCE_NOTES = {2: ["x y", "", None, "z"]}
# The same header, other rows, for a saved model.
PRESENCE_TEST = PRESENCE_HEADER + "0.001,-1e9,w,red,5\n?,0,'',green,0\n"
PRESENCE_TEST_EXPECTED = [[1, 1, 0, 0, 5], [NAN, 0, 0, 1, 0]]


@pytest.mark.parametrize("text", [PRESENCE_DENSE, PRESENCE_SPARSE], ids=["dense", "sparse"])
def test_binarize_marks_presence_and_leaves_other_attributes_alone(run_filterkit, tmp_path, text):
    path = tmp_path / "presence.arff"
    path.write_text(text)
    result = run_filterkit(path, "binarize")
    assert result.status == 0, result.stderr
    schema, chunk = read_bytes(result.stdout)
    np.testing.assert_array_equal(chunk.dense_values(), PRESENCE_EXPECTED)
    assert chunk.text == PRESENCE_NOTES
    source, _ = read_arff(path)
    assert [a.declared_type for a in schema.attributes[:2]] == ["numeric", "numeric"]
    assert schema.attributes[2:] == source.attributes[2:], (
        "string, nominal and the integer class keep their declarations"
    )
    assert chunk.is_sparse == (text is PRESENCE_SPARSE)


def test_binarize_sparse_stays_sparse_and_stores_no_zero(run_filterkit, tmp_path):
    path = tmp_path / "presence.arff"
    path.write_text(PRESENCE_SPARSE)
    result = run_filterkit(path, "binarize")
    rows = result.stdout.decode().split("@data\n")[1].splitlines()
    assert len(rows) == 4 and all(row.startswith("{") and row.endswith("}") for row in rows)
    _, chunk = read_bytes(result.stdout)
    matrix = chunk.values.tocsr()
    stored = [sorted(set(matrix[i].indices.tolist()) & {0, 1}) for i in range(4)]
    assert stored == [[0, 1], [], [0, 1], [0, 1]], "a zero feature is not stored, a missing one is"


def test_binarize_on_real_sparse_counts_is_presence(run_filterkit):
    schema, original = read_arff(REAL / "oh0.wc.arff")
    result = run_filterkit(REAL / "oh0.wc.arff", "binarize")
    assert result.status == 0, result.stderr
    _, binary = read_bytes(result.stdout)
    assert binary.is_sparse
    before, after = original.values.tocsr(), binary.values.tocsr()
    words = slice(0, len(schema) - 1)
    np.testing.assert_array_equal(after[:, words].toarray(), (before[:, words].toarray() != 0).astype(float))
    assert after[:, words].nnz == before[:, words].nnz, "presence stores exactly the non-zero counts"
    np.testing.assert_array_equal(after[:, -1].toarray(), before[:, -1].toarray())


@pytest.mark.parametrize("text", [PRESENCE_DENSE, PRESENCE_SPARSE], ids=["dense", "sparse"])
def test_binarize_saved_model_round_trip(run_filterkit, tmp_path, text):
    train, test, model = tmp_path / "train.arff", tmp_path / "test.arff", tmp_path / "m.json"
    train.write_text(text)
    test.write_text(PRESENCE_TEST)
    trained = run_filterkit("--save-model", model, train, "binarize")
    assert trained.status == 0, trained.stderr
    again = run_filterkit("apply", model, train)
    assert again.status == 0, again.stderr
    assert without_comments(again.stdout) == without_comments(trained.stdout)
    applied = run_filterkit("apply", model, test)
    assert applied.status == 0, applied.stderr
    _, chunk = read_bytes(applied.stdout)
    np.testing.assert_array_equal(chunk.dense_values(), PRESENCE_TEST_EXPECTED)
    assert chunk.text == {2: ["w", ""]}


# ---------------------------------------------------------------------------------------------
# minmax: (x − min) / (max − min) per attribute on the training range (Weka's Normalize)

RANGES_HEADER = """@relation ranges
@attribute a numeric
@attribute const integer
@attribute b real
@attribute color {red,green}
@attribute class {n,p}
@data
"""
# a: 2, 4, ?, 8  → min 2, max 8: (x − 2)/6;   const: 5 everywhere → 0;   b: −1, ?, 3, 1 → (x + 1)/4
RANGES_TRAIN = RANGES_HEADER + "2,5,-1,red,p\n4,5,?,green,n\n?,5,3,red,p\n8,5,1,?,n\n"
RANGES_EXPECTED = [[0, 0, 0, 0, 1], [1 / 3, 0, NAN, 1, 0], [NAN, 0, 1, 0, 1], [1, 0, 0.5, NAN, 0]]
# beyond the range on both sides (not clipped), a new value of the constant, all missing
RANGES_TEST = RANGES_HEADER + "11,7,-5,green,?\n-1,5,0,red,p\n?,?,?,?,?\n"
RANGES_TEST_EXPECTED = [[1.5, 0, -1, 1, NAN], [-0.5, 0, 0.25, 0, 1], [NAN] * 5]

# sparse counts: every feature's minimum is 0 (implicit zeros), so zeros stay zero and unstored
COUNTS_SPARSE = """@relation counts
@attribute w1 integer
@attribute w2 integer
@attribute w3 integer
@attribute class {n,p}
@data
{0 2,2 5}
{1 4,3 p}
{0 4,1 1,3 p}
{2 ?}
"""
# w1: 2 0 4 0 → /4;  w2: 0 4 1 0 → /4;  w3: 5 0 0 ? → /5
COUNTS_EXPECTED = [[0.5, 0, 1, 0], [0, 1, 0, 1], [1, 0.25, 0, 1], [0, 0, NAN, 0]]

# sparse with a negative value: b's implicit zeros become −min/(max − min) = 2/8
SIGNED_SPARSE = """@relation signed
@attribute w1 integer
@attribute b numeric
@attribute class {n,p}
@data
{0 2,1 -2}
{0 4,2 p}
{1 6}
{0 ?,1 ?}
"""
# w1: 2 4 0 ? → /4 (min 0);  b: −2 0 6 ? → (x + 2)/8
SIGNED_EXPECTED = [[0.5, 0, 0], [1, 0.25, 1], [0, 1, 0], [NAN, NAN, 0]]


def minmax(run_filterkit, tmp_path, text, *chain):
    path = tmp_path / "in.arff"
    path.write_text(text)
    result = run_filterkit(*chain, path, "minmax")
    assert result.status == 0, result.stderr
    return result


def test_minmax_hand_example_constant_attribute_and_missing(run_filterkit, tmp_path):
    result = minmax(run_filterkit, tmp_path, RANGES_TRAIN)
    schema, chunk = read_bytes(result.stdout)
    np.testing.assert_allclose(chunk.dense_values(), RANGES_EXPECTED, rtol=1e-15, atol=0)
    assert [a.declared_type for a in schema.attributes[:3]] == ["numeric"] * 3
    assert schema.attributes[3].labels == ("red", "green") and schema.attributes[4].labels == ("n", "p")


def test_minmax_leaves_a_numeric_class_alone(run_filterkit, tmp_path):
    # -c 2: the constant integer attribute is the class; it keeps its values and its 'integer'
    result = minmax(run_filterkit, tmp_path, RANGES_TRAIN, "-c", "2")
    schema, chunk = read_bytes(result.stdout)
    expected = np.array(RANGES_EXPECTED)
    expected[:, 1] = 5
    np.testing.assert_allclose(chunk.dense_values(), expected, rtol=1e-15, atol=0)
    assert schema.attributes[1].declared_type == "integer"


def test_minmax_test_values_outside_the_training_range_are_not_clipped(run_filterkit, tmp_path):
    train, test, model = tmp_path / "train.arff", tmp_path / "test.arff", tmp_path / "m.json"
    train.write_text(RANGES_TRAIN)
    test.write_text(RANGES_TEST)
    trained = run_filterkit("--save-model", model, train, "minmax")
    applied = run_filterkit("apply", model, test)
    assert trained.status == 0 and applied.status == 0, trained.stderr + applied.stderr
    _, chunk = read_bytes(applied.stdout)
    np.testing.assert_allclose(chunk.dense_values(), RANGES_TEST_EXPECTED, rtol=1e-15, atol=0)
    again = run_filterkit("apply", model, train)
    assert without_comments(again.stdout) == without_comments(trained.stdout)


def test_minmax_sparse_with_minimum_zero_stays_sparse_and_zeros_stay_zero(run_filterkit, tmp_path):
    result = minmax(run_filterkit, tmp_path, COUNTS_SPARSE)
    _, chunk = read_bytes(result.stdout)
    assert chunk.is_sparse
    np.testing.assert_allclose(chunk.dense_values(), COUNTS_EXPECTED, rtol=1e-15, atol=0)
    rows = result.stdout.decode().split("@data\n")[1].splitlines()
    assert rows == ["{0 0.5,2 1}", "{1 1,3 p}", "{0 1,1 0.25,3 p}", "{2 ?}"]


def test_minmax_sparse_column_with_negative_values_fills_its_zeros(run_filterkit, tmp_path):
    result = minmax(run_filterkit, tmp_path, SIGNED_SPARSE)
    _, chunk = read_bytes(result.stdout)
    np.testing.assert_allclose(chunk.dense_values(), SIGNED_EXPECTED, rtol=1e-15, atol=0)
    rows = result.stdout.decode().split("@data\n")[1].splitlines()
    assert all(row.startswith("{") for row in rows), "sparse input is written sparse, filled in or not"
    matrix = chunk.values.tocsr()
    assert matrix[0, 1] == 0 and matrix[1, 1] == 0.25 and matrix[2, 0] == 0


@pytest.mark.parametrize("text", [RANGES_TRAIN, COUNTS_SPARSE, SIGNED_SPARSE], ids=["dense", "counts", "signed"])
@pytest.mark.parametrize("rows", ["1", "3"])
def test_minmax_fitting_in_small_chunks_equals_fitting_at_once(run_filterkit, tmp_path, text, rows):
    whole = minmax(run_filterkit, tmp_path, text)
    chunked = minmax(run_filterkit, tmp_path, text, "--chunk-rows", rows)
    assert chunked.stdout == whole.stdout


@pytest.mark.slow
@pytest.mark.parametrize("name, chain", [("wine.arff", ("-c", "first")), ("oh0.wc.arff", ())])
def test_minmax_fitting_real_files_row_by_row_equals_fitting_at_once(run_filterkit, name, chain):
    whole = run_filterkit(*chain, REAL / name, "minmax")
    chunked = run_filterkit("-q", "--chunk-rows", "1", *chain, REAL / name, "minmax")
    assert whole.status == chunked.status == 0, whole.stderr + chunked.stderr
    assert chunked.stdout == whole.stdout


# ---------------------------------------------------------------------------------------------
# minmax against Weka 3.6's weka.filters.unsupervised.attribute.Normalize (6 printed decimals)


def with_missing_values(source: Path, target: Path, class_first: bool) -> None:
    """``source`` with '?' in a scattered fifth of its numeric non-class cells."""
    schema, _ = read_arff(source)
    class_index = 0 if class_first else len(schema) - 1
    numeric = [j for j, a in enumerate(schema.attributes) if a.is_numeric and j != class_index]
    lines = source.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().lower() == "@data") + 1
    row = 0
    for i in range(start, len(lines)):
        if not lines[i].strip() or lines[i].startswith("%"):
            continue
        cells = lines[i].split(",")
        assert len(cells) == len(schema), lines[i]
        for j in numeric:
            if (row * 7 + j * 3) % 5 == 0:
                cells[j] = "?"
        lines[i] = ",".join(cells)
        row += 1
    target.write_text("\n".join(lines) + "\n")


WEKA_CASES = {
    "iris": ("iris.arff", "last", False),
    "wine": ("wine.arff", "first", False),
    "credit-g": ("credit-g.arff", "last", False),
    "iris-missing": ("iris.arff", "last", True),
    "wine-missing": ("wine.arff", "first", True),
    "credit-g-missing": ("credit-g.arff", "last", True),
}


@needs_weka
@pytest.mark.parametrize("case", list(WEKA_CASES))
def test_minmax_agrees_with_weka_normalize(run_filterkit, tmp_path, case):
    name, class_position, missing = WEKA_CASES[case]
    source = REAL / name
    if missing:
        source = tmp_path / name
        with_missing_values(REAL / name, source, class_position == "first")
    weka_out = tmp_path / "weka.arff"
    weka_normalize(source, weka_out, class_position)
    ours = run_filterkit("-c", class_position, source, "minmax")
    assert ours.status == 0, ours.stderr
    weka_schema, weka_chunk = read_arff(weka_out)
    our_schema, our_chunk = read_bytes(ours.stdout)
    _, original = read_arff(source)
    assert [(a.name, a.kind) for a in our_schema.attributes] == [(a.name, a.kind) for a in weka_schema.attributes]
    expected, got, before = weka_chunk.dense_values(), our_chunk.dense_values(), original.dense_values()
    assert expected.shape == got.shape == before.shape
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
    assert (np.isnan(got) == np.isnan(before)).all(), "missing stays missing, nothing else becomes missing"
    if missing:
        assert np.isnan(before).sum() > len(before) // 2, "the injected missing values must be there"
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6, equal_nan=True)
    numeric = [j for j, a in enumerate(our_schema.attributes) if a.is_numeric]
    assert np.nanmin(got[:, numeric]) == 0 and np.nanmax(got[:, numeric]) == 1
    nominal = [j for j, a in enumerate(our_schema.attributes) if not a.is_numeric]
    np.testing.assert_array_equal(got[:, nominal], before[:, nominal])
