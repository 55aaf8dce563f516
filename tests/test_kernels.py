"""The compiled kernels (filterkit/_kernels.c) and the numpy paths give identical results, bit for bit.

Each module that uses the kernels has a numpy path for what they decline (weights, missing
values, log-odds).  Every test here runs both — as the package runs, then with
``kernels.compiled(False, kernels.ARRAYS)`` sending everything to numpy — on real files and random data, and
compares the statistics' exact sums digit for digit, the transformed chunks' floats bit for
bit and the written ARFF byte for byte.  The kernels that decline nothing (a chunk's entries and column
ranges, the row normalizers' stored values) have no numpy path: each is checked against its oracle in
tests/oracles.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

import filterkit.exact as exact
import oracles
from chain_helpers import REAL
from filterkit import kernels
from filterkit.arff import ArffReader, read_arff
from filterkit.plugins import load_plugins
from filterkit.schema import Chunk
from filterkit.stage import Context
from filterkit.statistics import ExactSums, PresenceCounts, SortedSums, ValueCounts
from filterkit.testing import check_stage

# (file, class position as -c takes it)
REAL_FILES = [
    ("oh0.wc.arff", "last"),
    ("grain_wc.arff", "first"),
    ("credit-g.arff", "last"),
    ("vowel.arff", "last"),
    ("vehicle.arff", "last"),
    ("sonar.arff", "last"),
    ("wine.arff", "first"),
    ("glass.arff", "last"),
    ("ecoli.arff", "last"),
]


def bits(values: np.ndarray) -> np.ndarray:
    """The float64s' bit patterns (NaNs with their sign and payload, -0.0 apart from 0.0)."""
    return np.ascontiguousarray(values, dtype=np.float64).view(np.int64)


def chunks_of(name: str, chunk_rows: int) -> tuple:
    with ArffReader(REAL / name, chunk_rows=chunk_rows) as source:
        return source.schema, list(source.chunks())


def class_position(schema, where: str) -> int:
    return 0 if where == "first" else len(schema.attributes) - 1


def counted(counts_class, chunks, features, class_index, n_classes):
    """The statistics of every chunk."""
    counts = counts_class.empty(len(features), n_classes)
    for chunk in chunks:
        counts = counts.add(chunk, features, class_index)
    return counts


def assert_same_sums(first: ExactSums, second: ExactSums) -> None:
    assert first.lowest == second.lowest
    np.testing.assert_array_equal(first.digits, second.digits)


def assert_same_table(first: SortedSums, second: SortedSums) -> None:
    keys_a, sums_a = first.settled()
    keys_b, sums_b = second.settled()
    assert keys_a.dtype == keys_b.dtype
    np.testing.assert_array_equal(keys_a, keys_b)
    assert_same_sums(sums_a, sums_b)


def assert_same_counts(first, second) -> None:
    assert_same_sums(first.totals, second.totals)
    assert_same_table(first.missing_table, second.missing_table)
    assert_same_table(first.nonzero_table, second.nonzero_table)
    if isinstance(first, ValueCounts):
        assert_same_table(first.table, second.table)
    else:
        np.testing.assert_array_equal(bits(first.minimum), bits(second.minimum))
        np.testing.assert_array_equal(bits(first.maximum), bits(second.maximum))


@pytest.mark.slow
@pytest.mark.parametrize("counts_class", [ValueCounts, PresenceCounts])
@pytest.mark.parametrize("name, where", REAL_FILES)
def test_statistics_of_real_files_are_the_same_with_and_without_the_kernels(name, where, counts_class):
    schema, chunks = chunks_of(name, 97)
    class_index = class_position(schema, where)
    features = np.array([i for i, a in enumerate(schema.attributes) if a.is_numeric and i != class_index])
    n_classes = len(schema.attributes[class_index].labels)
    compiled = counted(counts_class, chunks, features, class_index, n_classes)
    with kernels.compiled(False, kernels.ARRAYS):
        plain = counted(counts_class, chunks, features, class_index, n_classes)
    assert_same_counts(compiled, plain)


def random_csr(rng, n_rows: int, n_columns: int, index_dtype) -> sp.csr_matrix:
    """Random CSR arrays: stored zeros and minus zeros, missing values, tiny, huge and infinite values, a column
    twice in a row and columns falling within one (not scipy's canonical form), empty rows."""
    counts = rng.integers(0, 8, size=n_rows) * (rng.random(n_rows) < 0.8)
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(index_dtype)
    indices = rng.integers(0, n_columns, size=int(indptr[-1])).astype(index_dtype)
    data = rng.integers(-3, 40, size=len(indices)) * rng.choice([1.0, 0.1, 1e-300, 1e300, -2.5], size=len(indices))
    data[rng.random(len(data)) < 0.05] = np.nan
    data[rng.random(len(data)) < 0.05] = -0.0
    data[rng.random(len(data)) < 0.02] = np.inf
    return sp.csr_matrix((data, indices, indptr), shape=(n_rows, n_columns))


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("seed", range(8))
def test_a_chunk_s_entries_are_the_oracle_s(seed, index_dtype):
    """``_kernels.sparse_entries`` (statistics' entries of a sparse chunk) against tests/oracles.py's numpy."""
    rng = np.random.default_rng(seed)
    n_rows, n_columns, n_classes = int(rng.integers(0, 60)), int(rng.integers(1, 12)), int(rng.integers(1, 4))
    matrix = random_csr(rng, n_rows, n_columns, index_dtype)
    features = np.sort(rng.choice(n_columns, size=int(rng.integers(0, n_columns + 1)), replace=False))
    position = np.full(n_columns, -1, dtype=np.int64)
    position[features] = np.arange(len(features))
    labels = rng.integers(-1, n_classes, size=n_rows).astype(np.int64)  # -1: a row whose class is missing
    n = int(matrix.indptr[-1])
    rows, columns, pairs = (np.empty(n, dtype=np.int64) for _ in range(3))
    values = np.empty(n)
    found = kernels.arrays.sparse_entries(
        indptr=matrix.indptr, indices=matrix.indices, data=matrix.data, position=position, labels=labels,
        n_classes=n_classes, rows=rows, columns=columns, pairs=pairs, values=values,
    )  # fmt: skip
    expected = oracles.sparse_entries(matrix.indptr, matrix.indices, matrix.data, position, labels, n_classes)
    for got, want in zip((rows[:found], columns[:found], pairs[:found]), expected[:3]):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(bits(values[:found]), bits(expected[3]))


@pytest.mark.parametrize("seed", range(8))
def test_column_ranges_are_the_oracle_s(seed):
    """``_kernels.column_ranges`` (a chunk's smallest and largest value per column) against tests/oracles.py's
    numpy: no value in some columns, minus zeros beside zeros, infinities.  Equal as numbers: of a 0 and a -0
    met in one column, the kernel keeps the first met and numpy's minimum.at may keep the other."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 20))
    columns = rng.integers(0, n, size=int(rng.integers(0, 200))).astype(np.int64)
    values = rng.integers(-3, 40, size=len(columns)) * rng.choice([1.0, 0.1, 1e-300, 1e300, -2.5], size=len(columns))
    odd = rng.random(len(values)) < 0.2
    values[odd] = rng.choice([0.0, -0.0, np.inf, -np.inf], size=int(odd.sum()))
    low, high = np.full(n, np.inf), np.full(n, -np.inf)
    kernels.arrays.column_ranges(columns, values, low, high)
    expected_low, expected_high = oracles.column_ranges(columns, values, n)
    np.testing.assert_array_equal(low, expected_low)
    np.testing.assert_array_equal(high, expected_high)


def random_sparse_chunk(rng, n_rows: int, n_columns: int, *, weighted: bool, integers: bool) -> Chunk:
    """Rows of a sparse chunk with missing values and missing classes (class in column 0, 3 labels)."""
    density = rng.uniform(0.05, 0.6)
    values = rng.integers(-3, 40, size=(n_rows, n_columns)).astype(np.float64)
    if not integers:
        values = values * rng.choice([1.0, 0.1, 1e-300, 1e300, -2.5], size=values.shape)
    values[rng.random(values.shape) > density] = 0.0
    values[rng.random(values.shape) < 0.02] = np.nan
    values[:, 0] = rng.integers(0, 3, size=n_rows)
    values[rng.random(n_rows) < 0.1, 0] = np.nan
    weights = rng.choice([0.0, 0.5, 1.0, 3.25, 1e-310, 7e12], size=n_rows) if weighted else None
    return Chunk(sp.csr_matrix(values), {}, weights)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("counts_class", [ValueCounts, PresenceCounts])
def test_statistics_of_random_sparse_chunks_are_the_same_with_and_without_the_kernels(seed, counts_class):
    rng = np.random.default_rng(seed)
    chunks = [
        random_sparse_chunk(rng, int(rng.integers(1, 60)), 9, weighted=seed % 2 == 1, integers=seed % 3 != 2)
        for _ in range(5)
    ]
    features = np.array([1, 2, 4, 5, 6, 8])
    compiled = counted(counts_class, chunks, features, 0, 3)
    with kernels.compiled(False, kernels.ARRAYS):
        plain = counted(counts_class, chunks, features, 0, 3)
    assert_same_counts(compiled, plain)


@pytest.mark.parametrize("span", [1, 7, 1000, 2**18, 2**18 + 1, 3 * 2**16 + 5, 2**22, 2**40, 2**62])
def test_sorted_counts_and_stable_order_equal_numpys(span):
    rng = np.random.default_rng(span % 1000)
    for n in (1, 2, 50, 20_000):
        keys = rng.integers(0, span, size=n, dtype=np.int64) + (span // 3)
        distinct, counts = np.unique(keys, return_counts=True)
        found = exact._compiled_counts(keys)
        if found is not None:  # keys spread too thinly are left to numpy's sort
            np.testing.assert_array_equal(found[0], distinct)
            np.testing.assert_array_equal(found[1], counts)
        np.testing.assert_array_equal(exact.stable_order(keys), np.argsort(keys, kind="stable"))


def test_sorted_counts_leaves_negative_keys_and_thin_spreads_to_numpy():
    assert exact._compiled_counts(np.array([3, -1, 3], dtype=np.int64)) is None
    assert exact._compiled_counts(np.array([0, 2**50], dtype=np.int64)) is None
    found = exact._compiled_counts(np.array([5, 2**17, 5, 0], dtype=np.int64))
    assert found is not None
    np.testing.assert_array_equal(found[0], [0, 5, 2**17])
    np.testing.assert_array_equal(found[1], [1, 2, 1])
    # a negative key: numpy's argsort, the same order
    keys = np.array([3, -1, 3, 0], dtype=np.int64)
    np.testing.assert_array_equal(exact.stable_order(keys), [1, 3, 0, 2])


def test_weighted_group_sums_are_the_same_with_and_without_the_kernels():
    rng = np.random.default_rng(5)
    groups = rng.integers(0, 300, size=5_000)
    weights = rng.choice([0.1, 1.0, 2.0**-1070, 1e300, 3.0], size=5_000)
    compiled = ExactSums.by_group(groups, weights, 300)
    with kernels.compiled(False, kernels.ARRAYS):
        plain = ExactSums.by_group(groups, weights, 300)
    assert_same_sums(compiled, plain)
    assert math.isclose(float(plain.total().to_float()[0]), float(np.sum(weights)), rel_tol=1e-12)


def outputs_both_ways(run_filterkit, *argv) -> bytes:
    """The written ARFF of ``filterkit ARGV`` with the kernels, asserted equal to the numpy paths'."""
    outputs = []
    for compiled in (True, False):
        with kernels.compiled(compiled, kernels.ARRAYS):
            result = run_filterkit(*argv)
            assert result.status == 0, result.stderr
            outputs.append(result.stdout)
    assert outputs[0] == outputs[1], f"the kernels changed the output of {argv}"
    return outputs[0]


CHAINS = [
    ["shape"],
    ["shape", "--no-zero-bin", "--neighbors", "3"],
    ["shape", "--missing", "keep"],
    ["shape", "bns", "l2"],
    ["shape", "--transform", "logodds", "l1"],
    ["ig", "--presence", "select", "--top", "20", "l2"],
    ["l2"],
    ["l1"],
]
# (file, options, the stages that make it sparse numbers)
SPARSE_FILES = [
    ("oh0.wc.arff", ["--positive", "Ethics"], []),
    ("grain_wc.arff", ["-c", "first"], []),
    ("reuters_grain_sample.arff", ["-c", "last"], ["words", "--counts", "--lowercase"]),
]


@pytest.mark.slow
@pytest.mark.parametrize("chain", CHAINS, ids=" ".join)
@pytest.mark.parametrize("name, options, making", SPARSE_FILES)
def test_chains_on_real_sparse_files_write_the_same_bytes_with_and_without_the_kernels(
    run_filterkit, name, options, making, chain
):
    written = outputs_both_ways(run_filterkit, *options, "--chunk-rows", "13", REAL / name, *making, *chain)
    assert written.count(b"\n{") >= 60


def random_sparse_arff(seed: int, colours: tuple[str, ...] = ("green", "blue", "?")) -> str:
    """A sparse ARFF file with numeric and nominal attributes, missing values (and classes),
    explicit zeros, negative, tiny and huge values and infinities in some of them; the
    nominal attribute's stored values are drawn from ``colours``."""
    rng = np.random.default_rng(seed)
    n_numeric = int(rng.integers(2, 12))
    lines = ["@relation random", "@attribute class {neg,pos,other}"]
    lines += [f"@attribute n{i} numeric" for i in range(n_numeric)]
    lines += ["@attribute colour {red,green,blue}", "@data"]
    extreme = seed % 3 == 0
    pool = [1, 2, 3, 4, 7, 0.5, -1, -2.25, 0, 13, 1e-3]
    if extreme:
        pool += [1e-200, 1e300, -1e300, float("inf"), 5e-324]
    for _ in range(int(rng.integers(20, 300))):
        entries = []
        label = rng.choice(["neg", "pos", "pos", "other", "?"] if seed % 2 else ["neg", "pos"])
        if label != "neg":
            entries.append(f"0 {label}")
        for i in range(n_numeric):
            if rng.random() < 0.35:
                value = "?" if rng.random() < 0.05 else repr(float(rng.choice(pool)))
                entries.append(f"{i + 1} {value.replace('inf', 'Infinity')}")
        if rng.random() < 0.5:
            entries.append(f"{n_numeric + 1} {rng.choice(colours)}")
        lines.append("{" + ",".join(entries) + "}")
    return "\n".join(lines) + "\n"


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(12))
def test_chains_on_random_sparse_files_write_the_same_bytes_with_and_without_the_kernels(run_filterkit, tmp_path, seed):
    path = tmp_path / "random.arff"
    path.write_text(random_sparse_arff(seed))
    for chain in (["shape"], ["shape", "--missing", "keep", "--no-zero-bin"], ["shape", "l2"], ["l1"], ["l2"]):
        outputs_both_ways(run_filterkit, "-c", "first", "--positive", "pos", "--chunk-rows", "7", path, *chain)


def fitted(stage_name: str, text: str, tmp_path, **options):
    """The stage fitted on the ARFF ``text`` (class first, positive class ``pos``), and its schema."""
    path = tmp_path / "training.arff"
    path.write_text(text)
    schema, chunk = read_arff(path)
    stage = load_plugins().make_stage(stage_name, options)
    stage.prepare(schema, Context(class_index=0, positive="pos"))
    if stage.learns:
        stage.finalize(stage.accumulate(stage.new_statistics(), chunk))
    return schema, stage


def unseen_values(rng, schema, n_rows: int) -> sp.csr_matrix:
    """A sparse matrix of values a fitted stage has not seen: between and beyond the training
    values, zeros, missing values and every label code of the nominal attribute (last)."""
    n_columns = len(schema.attributes)
    values = rng.choice(
        [-40.0, -2.25, -1.0, -0.5, 0.0, 0.25, 1.0, 1.5, 3.0, 5.5, 12.0, 99.0, np.nan], (n_rows, n_columns)
    )
    values[:, 1:-1] += np.where(
        rng.random((n_rows, n_columns - 2)) < 0.3, rng.uniform(-1, 1, (n_rows, n_columns - 2)), 0
    )
    values[:, -1] = rng.choice([0.0, 1.0, 2.0, np.nan], n_rows)
    values[rng.random(values.shape) < 0.4] = 0.0
    return sp.csr_matrix(values)


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize(
    "options",
    [{}, {"zero_bin": False}, {"missing": "keep"}, {"neighbors": 0}, {"zero_bin": False, "missing": "keep"}],
    ids=["default", "no-zero-bin", "missing-keep", "no-neighbors", "both"],
)
def test_shaping_unseen_values_is_the_same_with_and_without_the_kernels(tmp_path, seed, options):
    # blue is never seen in training: its estimate is the attribute's overall one
    schema, stage = fitted("shape", random_sparse_arff(seed + 1, ("green", "?")), tmp_path, **options)
    matrix = unseen_values(np.random.default_rng(seed), schema, 200)
    position_of = np.full(matrix.shape[1], -1, dtype=np.int64)
    position_of[stage.features] = np.arange(len(stage.features))
    compiled_used = stage._compiled_tables() is not None
    compiled = stage._shaped_stored(matrix, position_of)
    with kernels.compiled(False, kernels.ARRAYS):
        plain = stage._shaped_stored(matrix, position_of)
    np.testing.assert_array_equal(bits(compiled), bits(plain))
    if (seed + 1) % 3:  # the extreme files may need the scaled interpolation, which only numpy does
        assert compiled_used


def normalized_by_the_oracle(stage, chunk: Chunk) -> Chunk:
    """The sparse ``chunk`` as the fitted ``l1`` or ``l2`` ``stage`` transforms it, its stored values normalized by
    tests/oracles.py's ``normalized_stored`` (not by the dense path, whose nansum adds pairwise)."""
    rows = chunk.csr()
    return chunk.with_stored(oracles.normalized_stored(rows, rows.data, stage.features, stage.order), rows)


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("stage_name", ["l2", "l1"])
def test_normalizing_random_rows_is_the_same_by_the_kernel_as_by_the_oracle(tmp_path, seed, stage_name):
    schema, stage = fitted(stage_name, random_sparse_arff(seed), tmp_path)
    matrix = unseen_values(np.random.default_rng(seed), schema, 300)
    chunk = Chunk(matrix, {}, None)
    compiled = stage.transform(chunk).values
    plain = normalized_by_the_oracle(stage, chunk).values
    np.testing.assert_array_equal(compiled.indptr, plain.indptr)
    np.testing.assert_array_equal(compiled.indices, plain.indices)
    np.testing.assert_array_equal(bits(compiled.data), bits(plain.data))


@pytest.mark.parametrize("stage_name", ["l2", "l1"])
def test_rows_whose_plain_norm_is_unsafe_are_rescaled_as_numpy_rescales_them(tmp_path, stage_name):
    schema, stage = fitted(stage_name, random_sparse_arff(4), tmp_path)
    width = len(schema.attributes)
    rows = [[1e300, 1e300], [1e-200, -3e-200], [np.inf, 5.0], [-np.inf, np.inf], [1e-320, np.nan], [2.0, 0.5]]
    values = np.zeros((len(rows), width))
    values[:, 1:3] = rows
    values[:, 0] = [1.0, 2.0, np.nan, 0.0, 1e300, 2.0]  # the class: not normalized, nor in the norm
    chunk = Chunk(sp.csr_matrix(values), {}, None)
    compiled = stage.transform(chunk).values.toarray()
    plain = normalized_by_the_oracle(stage, chunk).values.toarray()
    np.testing.assert_array_equal(bits(compiled), bits(plain))
    half = 0.5 if stage_name == "l1" else 1 / math.sqrt(2)
    np.testing.assert_array_equal(compiled[0, :3], [1.0, half, half])
    np.testing.assert_array_equal(compiled[2, 1:3], [1.0, 0.0])
    np.testing.assert_array_equal(compiled[3, 1:3], [-half, half])
    assert compiled[4, 1] == 1.0 and np.isnan(compiled[4, 2])


#: check_stage with the kernels is test_contract's run of shape, l2 and l1 (their defaults use
#: them): here the shaper's numpy path, and both paths of the option set test_contract does not run
#: (the row normalizers have no numpy path: their kernel is checked against tests/oracles.py above).
BOTH_PATHS = [
    pytest.param(True, "shape", {}, id="shape-numpy"),
    pytest.param(False, "shape", {"missing": "keep", "zero_bin": False}, id="shape-keep-no-zero-bin-compiled"),
    pytest.param(True, "shape", {"missing": "keep", "zero_bin": False}, id="shape-keep-no-zero-bin-numpy"),
]


@pytest.mark.slow
@pytest.mark.parametrize("general, name, options", BOTH_PATHS)
def test_both_paths_pass_check_stage(general, name, options):
    with kernels.compiled(not general, kernels.ARRAYS):
        assert check_stage(load_plugins().stage(name), **options)


def with_wide_indices(matrix: sp.csr_matrix) -> sp.csr_matrix:
    """The same matrix with int64 row starts and column indices (scipy's choice for large ones)."""
    wide = sp.csr_matrix(matrix.shape)
    wide.data, wide.indices, wide.indptr = matrix.data, matrix.indices.astype(np.int64), matrix.indptr.astype(np.int64)
    return wide


@pytest.mark.parametrize("seed", range(3))
def test_the_kernels_read_int64_and_int32_index_arrays_alike(tmp_path, seed):
    schema, stage = fitted("shape", random_sparse_arff(seed + 1), tmp_path)
    _, normalizer = fitted("l2", random_sparse_arff(seed + 1), tmp_path)
    rng = np.random.default_rng(seed)
    values = unseen_values(rng, schema, 100).toarray()
    values[:, 0] = rng.choice([0.0, 1.0, 2.0, np.nan], len(values))  # class codes
    narrow = sp.csr_matrix(values)
    wide = with_wide_indices(narrow)
    assert narrow.indices.dtype == np.int32 and wide.indices.dtype == np.int64
    for transformer in (stage, normalizer):
        first, second = (transformer.transform(Chunk(m, {}, None)).values for m in (narrow, wide))
        np.testing.assert_array_equal(bits(first.data), bits(second.data))
        np.testing.assert_array_equal(first.indices, second.indices)
    features = np.arange(1, len(schema.attributes))
    counts = [ValueCounts.of_chunk(Chunk(m, {}, None), features, 0, 3) for m in (narrow, wide)]
    assert_same_counts(*counts)


def ndtri_probes() -> np.ndarray:
    """Probabilities for the inverse normal: a dense grid of (0, 1), each region's edges and their
    neighbours, the tails down to the subnormals, bns's clipped range, random bit patterns of [0, 1]
    and what lies outside it."""
    rng = np.random.default_rng(0)
    edges = np.array([np.exp(-2), 1 - np.exp(-2), np.exp(-32), 1 - np.exp(-32), 0.5, 0.0005, 0.9995, 0.0, 1.0])
    neighbours = np.concatenate([np.nextafter(edges, -np.inf), np.nextafter(edges, np.inf)])
    bns_rates = np.clip(rng.integers(0, 2000, 20_000) / rng.integers(1, 2000, 20_000), 0.0005, 0.9995)
    return np.concatenate(
        [
            np.linspace(0.0, 1.0, 1_000_001),
            edges,
            neighbours,
            np.exp(-rng.random(100_000) * 745),  # the lower tail, down to the smallest subnormal
            1 - np.exp(-rng.random(100_000) * 37),  # the upper tail, up to 1 - 2⁻⁵³
            rng.random(100_000) * 1e-308,  # subnormals and the smallest normals
            np.array([5e-324, 2.2250738585072014e-308, np.nextafter(1.0, 0.0)]),
            0.5 + (rng.random(10_000) - 0.5) * 1e-6,
            bns_rates,
            rng.integers(0, 0x3FF0000000000000, 100_000).view(np.float64),
            np.array([np.nan, -np.nan, -0.0, -1e-300, -1.0, 1.0 + 2**-52, 2.0, np.inf, -np.inf]),
        ]
    )


def test_ndtri_equals_scipys_bit_for_bit():
    from scipy.special import ndtri

    probabilities = ndtri_probes()
    quantiles = np.empty_like(probabilities)
    kernels.ndtri(probabilities, quantiles)
    np.testing.assert_array_equal(bits(quantiles), bits(ndtri(probabilities)))


def test_ndtri_refuses_outputs_of_another_length():
    with pytest.raises(ValueError, match="differ in length"):
        kernels.ndtri(np.zeros(3), np.zeros(2))


@pytest.mark.parametrize(
    "probabilities",
    [0.3, np.float64(1e-5), np.array(0.9995), np.linspace(0, 1, 12).reshape(3, 4), np.linspace(0, 1, 24)[::3]],
)
def test_bns_inverse_normal_has_the_ufuncs_shapes_and_bits(probabilities):
    from scipy.special import ndtri

    from filterkit_plugins.metrics import _inverse_normal

    ours, scipys = _inverse_normal(probabilities), ndtri(probabilities)
    assert type(ours) is type(scipys) and np.shape(ours) == np.shape(scipys)
    np.testing.assert_array_equal(bits(ours), bits(scipys))
