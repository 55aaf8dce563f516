"""Mergeable value histograms (:class:`ValueCounts`), and the promise built on them:
row order and chunking never change a fitted value (issue 4, "What must be shown" 4)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from filterkit.arff.reader import read_arff
from filterkit.errors import FilterkitError
from filterkit.plugins import load_plugins
from filterkit.runner import Chain, resolve_class
from filterkit.schema import Chunk
from filterkit.sources import FileSource
from filterkit.statistics import ExactSums, ValueCounts
from oracles import entry_arrays

REAL = Path(__file__).parent / "data" / "real"
NAN = np.nan

# feature 0, feature 1, class (0 = n, 1 = p)
ROWS = np.array(
    [
        [2.0, 0.0, 1],
        [2.0, NAN, 1],
        [0.0, 5.0, 0],
        [-1.0, 5.0, 0],
        [2.0, 0.0, 0],
        [0.0, 1.0, NAN],  # missing class: skipped entirely
        [NAN, 0.0, 1],
    ]
)


def by_class(counts, sums: str) -> np.ndarray:
    """``[c, j]``: the rows of class c whose feature j is ``sums`` ("nonzero", "zero" or "missing")."""
    return np.array([getattr(counts, f"{sums}_sums")(c).to_float() for c in range(counts.n_classes)])


def stats(rows, weights=None, sparse=False) -> ValueCounts:
    values = sp.csr_matrix(rows) if sparse else np.asarray(rows)
    return ValueCounts.of_chunk(Chunk(values, {}, weights), np.array([0, 1]), 2, 2)


def test_counts_distinct_nonzero_values_per_class():
    counts = stats(ROWS)
    entries = set(zip(*(array.tolist() for array in entry_arrays(counts).values())))
    # feature 0: 2.0 twice in class 1, once in class 0; -1.0 once in class 0. feature 1: 5.0 twice in class 0.
    assert entries == {(0, 2.0, 1, 2.0), (0, 2.0, 0, 1.0), (0, -1.0, 0, 1.0), (1, 5.0, 0, 2.0)}
    np.testing.assert_array_equal(counts.class_totals, [3, 3])
    np.testing.assert_array_equal(by_class(counts, "missing"), [[0, 0], [1, 1]])


def test_zero_counts_follow_from_totals_missing_and_nonzero():
    counts = stats(ROWS)
    # class 1 has rows 0, 1, 6: feature 0 is 2, 2, missing → no zero; feature 1 is 0, missing, 0 → two zeros
    np.testing.assert_array_equal(by_class(counts, "nonzero"), [[2, 2], [2, 0]])
    np.testing.assert_array_equal(by_class(counts, "zero"), [[1, 1], [0, 2]])


def test_instance_weights_are_counted():
    counts = stats(ROWS, weights=np.array([0.5, 1, 1, 1, 2, 1, 3]))
    np.testing.assert_array_equal(counts.class_totals, [4, 4.5])
    np.testing.assert_array_equal(by_class(counts, "nonzero"), [[3, 2], [1.5, 0]])
    np.testing.assert_array_equal(by_class(counts, "missing"), [[0, 0], [3, 1]])


def test_sparse_and_dense_chunks_give_the_same_counts():
    assert_same_counts(stats(ROWS, sparse=True), stats(ROWS))


def test_histogram_lists_values_with_per_class_counts_and_optionally_zero():
    histogram = stats(ROWS).histogram(include_zero=True)
    assert list(zip(histogram.feature.tolist(), histogram.value.tolist())) == [
        (0, -1.0),
        (0, 0.0),
        (0, 2.0),
        (1, 0.0),
        (1, 5.0),
    ]
    np.testing.assert_array_equal(histogram.of_class(0), [1, 1, 1, 1, 2])
    np.testing.assert_array_equal(histogram.of_class(1), [0, 0, 2, 2, 0])
    np.testing.assert_array_equal(histogram.rows, [1, 1, 3, 3, 2])
    histogram = stats(ROWS).histogram(include_zero=False)
    assert list(zip(histogram.feature.tolist(), histogram.value.tolist())) == [(0, -1.0), (0, 2.0), (1, 5.0)]
    np.testing.assert_array_equal(histogram.of_class(1), [0, 2, 0])


def test_without_class_every_row_counts_as_class_zero():
    counts = ValueCounts.of_chunk(Chunk(ROWS[:, :2].copy()), np.array([0, 1]), None, 1)
    np.testing.assert_array_equal(counts.class_totals, [7])
    np.testing.assert_array_equal(by_class(counts, "nonzero"), [[4, 3]])


def test_size_follows_distinct_values_not_rows():
    rng = np.random.default_rng(0)
    rows = np.column_stack([rng.integers(0, 4, 5000), rng.integers(0, 2, 5000)]).astype(float)
    counts = ValueCounts.of_chunk(Chunk(rows), np.array([0]), 1, 2)
    assert len(counts.entries()[1]) == 3 * 2  # values 1, 2, 3 in each of two classes
    assert counts.class_totals.sum() == 5000


def test_merging_parts_equals_counting_the_whole_in_any_order():
    whole = stats(ROWS)
    for cut in range(len(ROWS) + 1):
        first, second = stats(ROWS[:cut]), stats(ROWS[cut:])
        assert_same_counts(first.merge(second), whole)
        assert_same_counts(second.merge(first), whole)
    assert_same_counts(stats(ROWS[::-1]), whole)
    assert_same_counts(ValueCounts.empty(2, 2).add(Chunk(ROWS), np.array([0, 1]), 2), whole)


def assert_same_counts(first: ValueCounts, second: ValueCounts) -> None:
    for name, array in entry_arrays(first).items():
        np.testing.assert_array_equal(array, entry_arrays(second)[name], err_msg=name)
    np.testing.assert_array_equal(first.class_totals, second.class_totals)
    np.testing.assert_array_equal(by_class(first, "missing"), by_class(second, "missing"))


# --- fitted state never depends on row order or chunking ---------------------------------------


class ChunkList:
    """A source whose rows are given chunks (an in-memory stand-in for FileSource)."""

    def __init__(self, schema, chunks):
        self.schema, self._chunks = schema, chunks

    def chunks(self):
        yield from self._chunks


def split(chunk: Chunk, size: int) -> list[Chunk]:
    return [
        Chunk(
            chunk.values[start : start + size],
            {c: v[start : start + size] for c, v in chunk.text.items()},
            None if chunk.weights is None else chunk.weights[start : start + size],
        )
        for start in range(0, chunk.n_rows, size)
    ]


def shuffled(chunk: Chunk, seed: int) -> Chunk:
    order = np.random.default_rng(seed).permutation(chunk.n_rows)
    return Chunk(
        chunk.values[order],
        {c: [v[i] for i in order] for c, v in chunk.text.items()},
        None if chunk.weights is None else chunk.weights[order],
    )


DATA = {  # file, class, --positive
    "oh0": ("oh0.wc.arff", "last", "Ethics"),
    "credit-g": ("credit-g.arff", "class", None),  # two classes: positive is the minority, 'bad'
}
STAGES = {
    "shape": ("shape", {}),
    "bns": ("bns", {}),
    "bns-presence": ("bns", {"presence": True}),
    "ig": ("ig", {}),
    "ig-presence": ("ig", {"presence": True}),
}


@pytest.fixture(scope="module")
def registry():
    return load_plugins()


@pytest.fixture(scope="module")
def whole_files():
    return {name: read_arff(str(REAL / path)) for name, (path, _, _) in DATA.items()}


def fitted_state(registry, stage_name, params, data, source) -> dict:
    _, class_spec, positive = DATA[data]
    stage = registry.make_stage(stage_name, params)
    Chain([stage], class_spec=class_spec, positive=positive).fit(source)
    return stage.state()


def fitted_apart(registry, stage_name, params, data, schema, first, second) -> dict:
    """Fit on two parts accumulated separately, then merged, as a parallel fit would."""
    _, class_spec, positive = DATA[data]
    stage = registry.make_stage(stage_name, params)
    chain = Chain([stage], class_spec=class_spec, positive=positive)
    chain.class_name = schema.attributes[resolve_class(schema, class_spec)].name
    chain.prepare_stage(0, schema)
    parts = []
    for chunks in (first, second):
        statistics = stage.new_statistics()
        for chunk in chunks:
            statistics = stage.accumulate(statistics, chunk)
        parts.append(statistics)
    stage.finalize(stage.merge(*parts))
    return stage.state()


def assert_same_state(first: dict, second: dict) -> None:
    assert first.keys() == second.keys()
    for key in first:
        np.testing.assert_array_equal(first[key], second[key], err_msg=key)


@pytest.mark.slow
@pytest.mark.parametrize("data", DATA)
@pytest.mark.parametrize("stage", STAGES)
def test_order_and_chunking_never_change_fitted_state(registry, whole_files, data, stage):
    stage_name, params = STAGES[stage]
    path = str(REAL / DATA[data][0])
    schema, rows = whole_files[data]
    reference = fitted_state(registry, stage_name, params, data, FileSource(path))
    assert any(np.size(v) for v in reference.values())

    sizes = (7, 1)
    for chunk_rows in sizes:
        assert_same_state(
            fitted_state(registry, stage_name, params, data, FileSource(path, chunk_rows=chunk_rows)), reference
        )
    mixed = shuffled(rows, seed=11)
    assert_same_state(fitted_state(registry, stage_name, params, data, ChunkList(schema, split(mixed, 97))), reference)
    half = rows.n_rows // 2
    assert_same_state(
        fitted_apart(registry, stage_name, params, data, schema, split(mixed, half)[:1], split(mixed, half)[1:]),
        reference,
    )
    assert_same_state(
        fitted_apart(registry, stage_name, params, data, schema, split(rows, 50)[10:], split(rows, 50)[:10]),
        reference,
    )


# (values drawn from, unit weights): ranked by a sort or, for integers, by subtraction;
# counted by weights or, for unit weights, by run lengths
COMPACTION_CASES = {
    "mixed values, weighted": ([0.5, 1, 2, 3, -1.5, 7e10, 1e-300], False),
    "mixed values, unit weights": ([0.5, 1, 2, 3, -1.5, 7e10, 1e-300], True),
    "integers, weighted": ([1, 2, 3, 5, 8, -13, 21], False),
    "integers, unit weights": ([1, 2, 3, 5, 8, -13, 21], True),
    "integers too far apart to subtract": ([1, 2, 3, 5, 8, -13, 2**40], True),
    "integers too large to subtract": ([1e17, 1e17 + 16, 1e17 + 32, 1e17 + 48, 1e17 + 64, 1e17 + 80, 1e17 + 96], True),
    "integers around 2**52": (
        [2.0**52 - 2, 2.0**52 - 1, 2.0**52, 2.0**52 + 2, 2.0**52 + 4, 2.0**52 + 6, 2.0**52 + 8],
        True,
    ),
    "infinities": ([-np.inf, 1, np.inf, 2.5], True),
}


@pytest.mark.parametrize("choices, unit_weights", COMPACTION_CASES.values(), ids=COMPACTION_CASES.keys())
def test_every_way_of_counting_a_chunk_equals_plain_python_sums(choices, unit_weights):
    generator = np.random.default_rng(0)
    n = 20_000
    feature = generator.integers(0, 300, n)
    value = generator.choice(np.array(choices, dtype=float), n)
    label = generator.integers(0, 3, n)
    weights = None if unit_weights else generator.random(n)
    rows = sp.csr_matrix((value, (np.arange(n), feature)), shape=(n, 301))
    rows = sp.hstack([rows[:, :300], sp.csr_matrix(label[:, None] + 0.0)]).tocsr()
    counts = ValueCounts.of_chunk(Chunk(rows, {}, weights), np.arange(300), 300, 3)
    expected = {}
    for j, v, c, w in zip(
        feature.tolist(), value.tolist(), label.tolist(), (weights if weights is not None else np.ones(n)).tolist()
    ):
        expected.setdefault((j, v, c), []).append(w)
    entries = entry_arrays(counts)
    keys = zip(entries["feature"].tolist(), entries["value"].tolist(), entries["label"].tolist())
    found = dict(zip(keys, entries["count"].tolist()))
    assert found == {key: math.fsum(ws) for key, ws in expected.items()}


WEIGHT_CASES = {
    "decimal fractions": [0.1, 0.3, 0.7, 1, 2.2],
    "tiny and huge": [1e-300, 3.5, 1e300, 5e-324, 0.1],
    "integers and zero": [0, 1, 2, 3],
}


@pytest.mark.slow
@pytest.mark.parametrize("choices", WEIGHT_CASES.values(), ids=WEIGHT_CASES.keys())
def test_weighted_counts_are_exact_sums_in_any_order_and_chunking(choices):
    generator = np.random.default_rng(3)
    n = 3000
    rows = np.column_stack(
        [generator.integers(0, 5, n), generator.integers(0, 3, n), generator.integers(0, 2, n)]
    ).astype(float)
    weights = generator.choice(np.array(choices), n)
    whole = ValueCounts.of_chunk(Chunk(rows, {}, weights), np.array([0, 1]), 2, 2)
    order = generator.permutation(n)
    pieces = ValueCounts.empty(2, 2)
    for start in range(0, n, 7):
        part = order[start : start + 7]
        pieces = pieces.add(Chunk(rows[part], {}, weights[part]), np.array([0, 1]), 2)
    assert_same_counts(pieces, whole)
    for j in range(2):
        for c in range(2):
            selected = (rows[:, 2] == c) & (rows[:, j] == 0)
            assert by_class(whole, "zero")[c, j] == math.fsum(weights[selected])
    assert whole.class_totals.tolist() == [math.fsum(weights[rows[:, 2] == c]) for c in range(2)]


def test_exact_sums_round_once_and_do_not_depend_on_grouping():
    weights = np.array([0.1] * 10 + [1e16, 1.0, -0.0])
    exact = ExactSums.of_weights(weights)
    assert exact.total().to_float()[0] == math.fsum(weights)
    halves = exact[:5].total().plus(exact[5:].total())
    assert halves.to_float()[0] == exact.total().to_float()[0]
    assert ExactSums.of_weights(np.array([3.0, 2.0**-1074, 2.0**1000])).to_float().tolist() == [
        3.0,
        2.0**-1074,
        2.0**1000,
    ]


def test_weights_that_cannot_be_counted_are_refused():
    for bad in (-1.0, np.nan, np.inf):
        with pytest.raises(FilterkitError, match="instance weight"):
            stats(ROWS, weights=np.array([1, 1, bad, 1, 1, 1, 1.0]))


WEIGHTED_MISSING = """@relation w
@attribute a numeric
@attribute b numeric
@attribute c numeric
@attribute class {n,p}
@data
{0 -2,1 3,3 p},{0.5}
{1 ?,2 4,3 n}
{0 5,3 p},{2}
{2 1,3 n},{0}
{0 ?,1 1,3 ?}
{3 p}
"""


@pytest.mark.parametrize("name", ["oh0.wc.arff", "credit-g.arff", "weighted"])
def test_presence_counts_agree_with_the_value_histogram(name, tmp_path):
    from filterkit.statistics import PresenceCounts

    if name == "weighted":
        path = tmp_path / "w.arff"
        path.write_text(WEIGHTED_MISSING)
    else:
        path = Path(__file__).parent / "data" / "real" / name
    schema, chunk = read_arff(path)
    class_index = len(schema) - 1
    features = np.array([i for i, a in enumerate(schema.attributes[:-1]) if a.is_numeric])
    n_classes = len(schema.attributes[class_index].labels)
    full = ValueCounts.empty(len(features), n_classes).add(chunk, features, class_index)
    light = PresenceCounts.empty(len(features), n_classes)
    for start in range(0, chunk.n_rows, 7):
        rows = np.arange(start, min(start + 7, chunk.n_rows))
        part = Chunk(chunk.values[rows], {}, None if chunk.weights is None else chunk.weights[rows])
        light = light.add(part, features, class_index)
    for sums in ("nonzero", "zero", "missing"):
        np.testing.assert_array_equal(by_class(light, sums), by_class(full, sums), err_msg=sums)
    np.testing.assert_array_equal(light.class_totals, full.class_totals)
    for mine, theirs in zip(light.training_range(), full.training_range()):
        np.testing.assert_array_equal(mine, theirs)
    if name == "weighted":
        np.testing.assert_array_equal(light.training_range()[0], [-2, 0, 0])
        np.testing.assert_array_equal(light.training_range()[1], [5, 3, 4])
