"""A fitted stage hands the next one its statistics without a pass over the data
(``ValueMapped.statistics_for``): ``shape bns`` fits both stages from one pass.

The derived statistics must be exactly those a pass would gather, so every chain here
runs twice through ``filterkit.cli.run`` — as shipped, and with derivation switched
off (every fitted stage makes its own pass) — and the outputs must be byte-identical,
while the number of passes over the input shows which way each chain went.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from chain_helpers import REAL
from filterkit import cli
from filterkit.runner import Chain
from filterkit.schema import Chunk
from filterkit.sources import FileSource, KeptChunks
from filterkit.statistics import PresenceCounts, ValueCounts
from oracles import entry_arrays


def first_rows(source, target, count: int, weights=None) -> None:
    """The header and the first ``count`` data rows of ``source``, with instance weights
    appended to the rows when given (cycled)."""
    lines = source.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().lower() == "@data") + 1
    rows = [line for line in lines[start:] if line.strip() and not line.startswith("%")][:count]
    if weights is not None:
        rows = [f"{row},{{{weights[i % len(weights)]}}}" for i, row in enumerate(rows)]
    target.write_text("\n".join(lines[:start] + rows) + "\n")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """Small real inputs: oh0 word counts (sparse), the same with dyadic weights (zero
    included), the same with decimal weights (0.1: exact only because filterkit sums exactly),
    iris and credit-g (dense)."""
    folder = tmp_path_factory.mktemp("derived")
    first_rows(REAL / "oh0.wc.arff", folder / "oh0.arff", 300)
    first_rows(REAL / "oh0.wc.arff", folder / "oh0_weighted.arff", 300, weights=["0.5", "2", "0", "1", "0.25", "3"])
    first_rows(REAL / "oh0.wc.arff", folder / "oh0_decimal_weights.arff", 300, weights=["0.1", "0.3", "1", "0.7"])
    first_rows(REAL / "credit-g.arff", folder / "credit-g.arff", 300)
    return {
        "oh0": (folder / "oh0.arff", ["--positive", "Ethics"]),
        "oh0_weighted": (folder / "oh0_weighted.arff", ["--positive", "Ethics"]),
        "oh0_decimal_weights": (folder / "oh0_decimal_weights.arff", ["--positive", "Ethics"]),
        "iris": (REAL / "iris.arff", ["--positive", "Iris-versicolor"]),
        "credit-g": (folder / "credit-g.arff", []),
    }


def run_counting_passes(monkeypatch, tmp_path, argv, derive: bool) -> tuple[bytes, int]:
    """The output of ``filterkit argv`` and how many passes read the input or the chunks a pass before kept."""
    passes = []

    def counting(read):
        def counted(self):
            passes.append(self)
            return read(self)

        return counted

    with monkeypatch.context() as patch:
        patch.setattr(FileSource, "chunks", counting(FileSource.chunks))
        patch.setattr(KeptChunks, "chunks", counting(KeptChunks.chunks))
        if not derive:
            patch.setattr(Chain, "_derived_statistics", lambda self, position, stage, progress: None)
        output = tmp_path / f"out-{derive}.arff"
        assert cli.run(["-o", str(output)] + argv) == 0
    assert isinstance(passes[0], FileSource) and all(isinstance(read, KeptChunks) for read in passes[1:])
    return output.read_bytes(), len(passes)


# (data set, chain, passes over the input with derivation and without: fitting passes + the output pass)
CASES = [
    ("oh0", ["shape", "bns", "l2"], 2, 3),
    ("oh0", ["shape", "--transform", "logodds", "bns", "--no-zero-preserve", "l1"], 2, 3),
    ("oh0", ["shape", "--neighbors", "3", "ig", "--presence"], 2, 3),
    ("oh0", ["shape", "chi", "--presence", "--no-scale", "select", "--top", "40"], 2, 3),
    ("oh0", ["bns", "chi", "ig"], 2, 4),
    ("oh0", ["bns", "--no-zero-preserve", "odds", "--combine", "mean"], 2, 3),
    ("oh0", ["shape", "--no-zero-bin", "bns"], 2, 3),
    ("oh0_weighted", ["shape", "bns", "l2"], 2, 3),
    ("oh0_weighted", ["bns", "--no-scale", "ig", "--presence"], 2, 3),
    # weights like 0.1 are summed exactly, so counts the map merges equal a pass's to the bit
    ("oh0_decimal_weights", ["shape", "bns", "l2"], 2, 3),
    ("oh0_decimal_weights", ["shape", "ig", "--presence", "l1"], 2, 3),
    ("iris", ["shape", "bns", "l2"], 2, 3),
    # no derivation: the shaper moves zeros, a presence scorer keeps no value counts,
    # select and ordinal gather statistics of their own, nominal attributes shape 0 to a label's estimate
    ("oh0", ["shape", "--no-zero-preserve", "bns"], 3, 3),
    ("oh0", ["ig", "--presence", "chi"], 3, 3),
    ("oh0", ["shape", "select", "--metric", "ig", "--top", "30"], 3, 3),
    ("oh0", ["shape", "ordinal", "--max-thresholds", "2"], 3, 3),
    ("iris", ["bns", "--no-zero-preserve", "chi"], 3, 3),
    ("credit-g", ["shape", "bns"], 3, 3),
]


@pytest.mark.slow
@pytest.mark.parametrize(
    "name, chain, derived_passes, plain_passes", CASES, ids=[f"{c[0]}:{' '.join(c[1])}" for c in CASES]
)
def test_derived_statistics_give_the_output_of_a_pass(
    data, monkeypatch, tmp_path, name, chain, derived_passes, plain_passes
):
    path, options = data[name]
    argv = options + [str(path)] + chain
    derived = run_counting_passes(monkeypatch, tmp_path, argv, derive=True)
    plain = run_counting_passes(monkeypatch, tmp_path, argv, derive=False)
    assert derived[0] == plain[0]
    assert (derived[1], plain[1]) == (derived_passes, plain_passes)


def value_counts_of(rows, n_classes: int = 2, weights=None) -> ValueCounts:
    """The value counts of dense rows whose last column is the class code."""
    values = np.array(rows, dtype=float)
    chunk = Chunk(sp.csr_matrix(values), {}, None if weights is None else np.array(weights, dtype=float))
    features = np.arange(values.shape[1] - 1)
    return ValueCounts.empty(len(features), n_classes).add(chunk, features, values.shape[1] - 1)


def missing_by_class(counts) -> list:
    """``[c][j]``: the rows of class c where feature j is missing."""
    return [counts.missing_sums(c).to_float().tolist() for c in range(counts.n_classes)]


def test_through_merges_values_sends_zeros_out_and_nan_to_missing():
    rows = [[1, 5, 0], [2, 5, 1], [3, 0, 1], [0, 7, 0], [2, 7, 0]]
    counts = value_counts_of(rows)

    def value_map(positions, values):
        # feature 0: 1 and 2 both become 10, 3 becomes 0; feature 1: 7 becomes NaN
        return np.where(
            positions == 0,
            np.select([values == 3, values > 0], [0.0, 10.0], 0.0),
            np.where(values == 7, np.nan, values),
        )

    mapped = counts.through(value_map)
    expected = value_counts_of([[10, 5, 0], [10, 5, 1], [0, 0, 1], [0, np.nan, 0], [10, np.nan, 0]])
    for field, array in entry_arrays(mapped).items():
        np.testing.assert_array_equal(array, entry_arrays(expected)[field], err_msg=field)
    np.testing.assert_array_equal(mapped.class_totals, expected.class_totals)
    assert missing_by_class(mapped) == missing_by_class(expected) == [[0, 2], [0, 0]]


def test_through_refuses_a_map_that_moves_zero():
    counts = value_counts_of([[1, 0], [0, 1]])
    assert counts.through(lambda positions, values: values + 1) is None


def test_through_refuses_a_map_that_gives_a_missing_value_a_number():
    counts = value_counts_of([[1, 0], [np.nan, 1]])
    assert counts.through(lambda positions, values: np.where(np.isnan(values), 5.0, values)) is None
    assert counts.through(lambda positions, values: values * 2).entries()[1].tolist() == [2.0]


def test_presence_counts_of_value_counts_equal_those_of_a_pass():
    rows = [[1, 0, 0.5, 0], [2, 3, 0, 1], [0, -4, np.nan, 1], [5, 0, 0.25, 0], [0, 0, 0, 1]]
    weights = [1, 0.5, 2, 0, 1]
    values = np.array(rows, dtype=float)
    chunk = Chunk(sp.csr_matrix(values), {}, np.array(weights, dtype=float))
    features = np.arange(3)
    passed = PresenceCounts.empty(3, 2).add(chunk, features, 3)
    derived = PresenceCounts.of_value_counts(value_counts_of(rows, weights=weights))
    for field in ("class_totals", "minimum", "maximum"):
        np.testing.assert_array_equal(getattr(derived, field), getattr(passed, field), err_msg=field)
    for c in range(2):
        np.testing.assert_array_equal(derived.nonzero_sums(c).to_float(), passed.nonzero_sums(c).to_float())
        np.testing.assert_array_equal(derived.missing_sums(c).to_float(), passed.missing_sums(c).to_float())


def test_of_features_renumbers_in_the_order_given():
    counts = value_counts_of([[1, 2, 3, 0], [4, 0, 6, 1], [np.nan, 2, 0, 1]])
    picked = counts.of_features(np.array([2, 0]))
    expected = value_counts_of([[3, 1, 0], [6, 4, 1], [0, np.nan, 1]])
    assert picked.n_features == expected.n_features
    for field, array in entry_arrays(picked).items():
        np.testing.assert_array_equal(array, entry_arrays(expected)[field], err_msg=field)
    assert missing_by_class(picked) == missing_by_class(expected) == [[0, 0], [0, 1]]
