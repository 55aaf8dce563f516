"""The LP shaper (docs/algorithms.md §4; KDD'09 §3.2, §3.3, §3.5) against examples worked
by hand, and the headline pipeline ``shape bns l2`` on a real sparse text file.

Every hand example uses ``--neighbors 1`` and the data below; positive class ``p``.
"""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import numpy as np
import pytest

from chain_helpers import JAVA, JAVA_OPTIONS, WEKA_JAR, needs_weka, without_comments
from filterkit import cli
from filterkit.arff.reader import read_arff
from filterkit.plugins import load_plugins
from filterkit.runner import Chain
from filterkit.sources import FileSource

SAMPLES = Path(__file__).parent.parent / "arff_samples"
NAN = np.nan

HEADER = """@relation shaping
@attribute x numeric
@attribute color {red,green,blue}
@attribute class {n,p}
@data
"""
TRAIN = (
    HEADER
    + """1,red,p
2,red,n
2,red,p
2,green,n
3,?,p
5,green,n
0,?,p
0,?,n
0,?,n
0,?,n
?,?,p
"""
)
# x, non-zero rows in value order (positions 0..5):
#     1 p | 2 n, 2 p, 2 n | 3 p | 5 n         groups: v=1 [0,1) 1 pos; v=2 [1,4) 1 pos of 3; v=3 [4,5); v=5 [5,6)
# zero bin: 0 p, 0 n, 0 n, 0 n  →  p̃(0) = (1 + 1) / (4 + 2) = 1/3;  the row with x missing counts nowhere.
# --neighbors 1: every row at v plus 1 row below and 1 above.
#   v=1: rows [0, 2) = the 1 (p) + 1 of the three tied 2s, counted as 1/3 positive  → (4/3 + 1)/(2 + 2) = 7/12
#   v=2: rows [0, 5) = all three tied 2s (ties all included) + 1 below + 1 above      → (3 + 1)/(5 + 2)   = 4/7
#   v=3: rows [3, 6) = 1 of the 2s (1/3 positive) + the 3 (p) + the 5 (n)            → (4/3 + 1)/(3 + 2) = 7/15
#   v=5: rows [4, 6) = the 3 (p) + the 5 (n)                                         → (1 + 1)/(2 + 2)   = 1/2
# color (nominal, no window, no zero shift): red 2 p of 3 → 3/5; green 0 of 2 → 1/4;
#   overall 2 p of the 5 rows with a color → 3/7 (for blue, never seen in training).
P0, P1, P2, P3, P5 = 1 / 3, 7 / 12, 4 / 7, 7 / 15, 1 / 2
RED, GREEN, OVERALL = 3 / 5, 1 / 4, 3 / 7

TEST = (
    HEADER
    + """4,blue,?
2.5,red,?
10,green,?
0.5,?,?
-3,red,?
0,blue,?
?,green,?
"""
)
# x = 4 lies halfway between 3 and 5: p̃ = (7/15 + 1/2)/2 = 29/60;  2.5: (4/7 + 7/15)/2 = 109/210;
# 10 clamps to p̃(5); 0.5 and -3 are non-zero, interpolated among non-zero knots only: clamp to p̃(1).
P4, P25 = (P3 + P5) / 2, (P2 + P3) / 2


def logodds(p):
    return math.log(p / (1 - p))


@pytest.fixture
def data(tmp_path):
    (tmp_path / "train.arff").write_text(TRAIN)
    (tmp_path / "test.arff").write_text(TEST)
    return tmp_path


def shape(data, **params) -> tuple[np.ndarray, np.ndarray]:
    """The shaped training rows and test rows (columns x, color)."""
    stage = load_plugins().make_stage("shape", {"neighbors": 1, "missing": "keep", **params})
    chain = Chain([stage], positive="p").fit(FileSource(str(data / "train.arff")))
    train = np.vstack([c.dense_values() for c in chain.transform(FileSource(str(data / "train.arff")).chunks())])
    test = np.vstack([c.dense_values() for c in chain.transform(FileSource(str(data / "test.arff")).chunks())])
    return train[:, :2], test[:, :2]


def test_default_output_is_probability_minus_zero_bin_probability(data):
    train, test = shape(data)
    np.testing.assert_allclose(
        train[:, 0],
        [
            P1 - P0,  # 7/12 − 1/3 = 1/4
            P2 - P0,
            P2 - P0,  # 4/7 − 1/3 = 5/21
            P2 - P0,
            P3 - P0,  # 7/15 − 1/3 = 2/15
            P5 - P0,  # 1/2 − 1/3 = 1/6
            0,
            0,
            0,
            0,  # zero stays exactly zero
            NAN,  # missing passes through
        ],
        rtol=1e-14,
    )
    assert train[0, 0] == pytest.approx(1 / 4, rel=1e-14) and train[4, 0] == pytest.approx(2 / 15, rel=1e-14)
    np.testing.assert_array_equal(train[6:10, 0], 0.0)


def test_interpolation_between_and_clamping_beyond_training_values(data):
    _, test = shape(data)
    np.testing.assert_allclose(
        test[:, 0],
        [
            P4 - P0,  # 29/60 − 1/3 = 3/20
            P25 - P0,  # 109/210 − 1/3 = 13/70
            P5 - P0,  # clamped above: 1/6
            P1 - P0,  # 0.5: between 0 and 1, but zeros are their own bin: clamped to p̃(1), 1/4
            P1 - P0,  # clamped below: 1/4
            0.0,
            NAN,
        ],
        rtol=1e-14,
    )
    assert test[0, 0] == pytest.approx(3 / 20, rel=1e-14) and test[1, 0] == pytest.approx(13 / 70, rel=1e-14)


def test_infinite_values_clamp_to_the_end_values(data):
    (data / "test.arff").write_text(HEADER + "Infinity,red,?\n-Infinity,red,?\n")
    _, test = shape(data)
    np.testing.assert_allclose(test[:, 0], [P5 - P0, P1 - P0], rtol=1e-14)


def test_nominal_attribute_becomes_laplace_fraction_of_its_label(data):
    train, test = shape(data)
    np.testing.assert_allclose(train[:, 1], [RED, RED, RED, GREEN, NAN, GREEN, NAN, NAN, NAN, NAN, NAN], rtol=1e-14)
    # blue was never seen in training: the attribute's overall fraction; missing stays missing
    np.testing.assert_allclose(test[:, 1], [OVERALL, RED, GREEN, NAN, RED, OVERALL, GREEN], rtol=1e-14)


def test_shaped_attributes_are_declared_numeric(data):
    stage = load_plugins().make_stage("shape", {})
    chain = Chain([stage], positive="p").fit(FileSource(str(data / "train.arff")))
    assert [a.kind for a in chain.output_schema.attributes] == ["numeric", "numeric", "nominal"]


def test_logodds_transforms_after_interpolating(data):
    train, test = shape(data, transform="logodds")
    np.testing.assert_allclose(
        train[[0, 1, 4, 5], 0],
        [
            math.log(14 / 5),  # ln(7/5) − ln(1/2)
            math.log(8 / 3),  # ln(4/3) + ln 2
            math.log(7 / 4),  # ln(7/8) + ln 2
            math.log(2),  # ln 1 + ln 2
        ],
        rtol=1e-13,
    )
    # x = 4: interpolate p̃ first (29/60), then transform: ln(29/31) + ln 2 = ln(58/31)
    assert test[0, 0] == pytest.approx(math.log(58 / 31), rel=1e-13)
    assert test[0, 0] != pytest.approx((logodds(P3) + logodds(P5)) / 2 - logodds(P0))
    # nominal: log-odds of the fraction, no shift
    np.testing.assert_allclose(test[:3, 1], [math.log(3 / 4), math.log(3 / 2), math.log(1 / 3)], rtol=1e-13)
    assert train[6, 0] == 0.0


def test_no_zero_preserve_outputs_the_probability_itself(data):
    train, test = shape(data, zero_preserve=False)
    np.testing.assert_allclose(train[:, 0], [P1, P2, P2, P2, P3, P5, P0, P0, P0, P0, NAN], rtol=1e-14)
    np.testing.assert_allclose(test[:, 0], [P4, P25, P5, P1, P1, P0, NAN], rtol=1e-14)
    np.testing.assert_allclose(test[:3, 1], [OVERALL, RED, GREEN], rtol=1e-14)


def test_no_zero_bin_treats_zero_as_an_ordinary_value(data):
    # All rows in value order (positions 0..9): 0 ×4 (1 p) [0,4) | 1 p [4,5) | 2 ×3 (1 p) [5,8) | 3 p [8,9) | 5 n [9,10)
    #   v=0: rows [0, 5) = four 0s + the 1            → (2 + 1)/(5 + 2)               = 3/7
    #   v=1: rows [3, 6) = 1 of four 0s (1/4 p) + the 1 + 1 of three 2s (1/3 p)
    #                                                 → (1/4 + 1 + 1/3 + 1)/(3 + 2)  = 31/60
    #   v=2: rows [4, 9) = the 1, three 2s, the 3     → (3 + 1)/(5 + 2)               = 4/7
    #   v=3: rows [7,10) = 1 of the 2s (1/3 p), 3, 5  → (4/3 + 1)/(3 + 2)             = 7/15
    #   v=5: rows [8,10)                              → 2/4                           = 1/2
    # p̃(0) is the value at 0, 3/7; zero-preserving subtracts it.
    q0, q1 = 3 / 7, 31 / 60
    train, test = shape(data, zero_bin=False)
    np.testing.assert_allclose(train[:6, 0], [q1 - q0, P2 - q0, P2 - q0, P2 - q0, P3 - q0, P5 - q0], rtol=1e-13)
    assert train[0, 0] == pytest.approx(37 / 420, rel=1e-13)
    np.testing.assert_array_equal(train[6:10, 0], 0.0)
    # 0.5 now lies between the knots 0 and 1: (3/7 + 31/60)/2 − 3/7 = 37/840; -3 clamps to p̃(0) → 0
    np.testing.assert_allclose(test[[3, 4, 5], 0], [37 / 840, 0.0, 0.0], atol=1e-15)
    assert test[3, 0] == pytest.approx(37 / 840, rel=1e-13)


def test_wider_window_ends_further_inside_the_tie_group(data):
    # --neighbors 2 (zero bin on): v=1 takes rows [0, 3) = the 1 (p) + 2 of the three 2s (2/3 positive)
    #   → (5/3 + 1)/(3 + 2) = 8/15;  v=5 takes rows [3, 6) = 1 of the 2s (1/3), the 3 (p), the 5 → 7/15.
    #   v=2 takes rows [0, 6), everything: (3 + 1)/(6 + 2) = 1/2.
    train, _ = shape(data, neighbors=2, zero_preserve=False)
    np.testing.assert_allclose(train[[0, 1, 5], 0], [8 / 15, 1 / 2, 7 / 15], rtol=1e-14)


def test_zero_neighbors_uses_only_the_tied_rows(data):
    # each value alone: v=1 → 2/3, v=2 → (1 + 1)/(3 + 2) = 2/5, v=3 → 2/3, v=5 → 1/3
    train, _ = shape(data, neighbors=0, zero_preserve=False)
    np.testing.assert_allclose(train[[0, 1, 4, 5], 0], [2 / 3, 2 / 5, 2 / 3, 1 / 3], rtol=1e-14)


def test_row_order_does_not_matter(data, tmp_path):
    lines = TRAIN.splitlines()
    body = lines[len(HEADER.splitlines()) :]
    (tmp_path / "reversed").mkdir()
    (tmp_path / "reversed" / "train.arff").write_text(HEADER + "\n".join(reversed(body)) + "\n")
    (tmp_path / "reversed" / "test.arff").write_text(TEST)
    _, forward = shape(data)
    _, backward = shape(tmp_path / "reversed")
    np.testing.assert_array_equal(forward, backward)


def brute_force_probability(values: np.ndarray, positive: np.ndarray, v: float, neighbors: int) -> float:
    """p̃(v) by walking the value-sorted rows one by one (docs/algorithms.md §4, step 2)."""
    order = np.argsort(values, kind="stable")
    values, positive = values[order], positive[order]
    begin, end = np.searchsorted(values, v, "left"), np.searchsorted(values, v, "right")
    low, high = max(begin - neighbors, 0), min(end + neighbors, len(values))
    total = 0.0
    for group in np.unique(values):  # each tie group contributes the fraction of its rows inside the window
        rows = np.flatnonzero(values == group)
        inside = len(set(range(low, high)) & set(rows.tolist()))
        total += inside / len(rows) * positive[rows].sum()
    return (total + 1) / (high - low + 2)


@pytest.mark.parametrize("neighbors", [0, 2, 5])
def test_many_features_with_ties_match_a_row_by_row_window(tmp_path, neighbors):
    rng = np.random.default_rng(neighbors)
    n = 70
    labels = rng.integers(0, 2, n)
    columns = np.column_stack(
        [
            rng.integers(0, 4, n) + labels,  # few values, big tie groups
            np.where(rng.random(n) < 0.5, 0, rng.integers(-3, 9, n)),  # many zeros, negative values
            np.where(rng.random(n) < 0.15, np.nan, rng.integers(1, 30, n)),  # missing values, no zeros
        ]
    ).astype(float)
    lines = [
        "@relation fuzz",
        "@attribute f0 numeric",
        "@attribute f1 numeric",
        "@attribute f2 numeric",
        "@attribute class {n,p}",
        "@data",
    ]
    lines += [
        ",".join("?" if np.isnan(x) else str(int(x)) for x in row) + "," + "np"[y] for row, y in zip(columns, labels)
    ]
    (tmp_path / "fuzz.arff").write_text("\n".join(lines) + "\n")
    stage = load_plugins().make_stage("shape", {"neighbors": neighbors, "zero_preserve": False, "missing": "keep"})
    chain = Chain([stage], positive="p").fit(FileSource(str(tmp_path / "fuzz.arff")))
    shaped = next(chain.transform(FileSource(str(tmp_path / "fuzz.arff")).chunks())).dense_values()
    for j in range(3):
        x = columns[:, j]
        present, zero = ~np.isnan(x), x == 0
        nonzero = present & ~zero
        zero_probability = (labels[zero].sum() + 1) / (zero.sum() + 2)
        expected = [
            np.nan
            if np.isnan(v)
            else zero_probability
            if v == 0
            else brute_force_probability(x[nonzero], labels[nonzero], v, neighbors)
            for v in x
        ]
        np.testing.assert_allclose(shaped[:, j], expected, rtol=1e-13, err_msg=f"feature {j}")


def test_multiclass_target_without_positive_is_shaped_one_vs_rest(capsys):
    status = cli.run([str(SAMPLES / "iris.arff"), "shape"])
    out, err = capsys.readouterr()
    assert status == 0, err
    declared = [line.split()[1] for line in out.splitlines() if line.lower().startswith("@attribute")]
    labels = ["Iris-setosa", "Iris-versicolor", "Iris-virginica"]
    features = ["sepallength", "sepalwidth", "petallength", "petalwidth"]
    assert declared == [f"{feature}@{label}" for feature in features for label in labels] + ["class"]


# --- the headline pipeline on a sparse text sample ------------------------------------------

OH0 = SAMPLES / "oh0.wc.arff"
POSITIVE = "Ethics"


@pytest.fixture(scope="module")
def headline(tmp_path_factory):
    """``filterkit --positive Ethics --save-model m.json oh0.wc.arff shape bns l2``, then ``apply``."""
    where = tmp_path_factory.mktemp("headline")
    model, trained, applied = where / "m.json", where / "train.out.arff", where / "apply.out.arff"
    assert (
        cli.run(
            ["--positive", POSITIVE, "--save-model", str(model), "-o", str(trained), str(OH0), "shape", "bns", "l2"]
        )
        == 0
    )
    assert cli.run(["apply", str(model), str(OH0), "-o", str(applied)]) == 0
    return trained, applied


def feature_block(path):
    schema, chunk = read_arff(str(path))
    assert chunk.is_sparse
    class_index = len(schema.attributes) - 1
    return chunk.values.tocsr()[:, :class_index], chunk.values.tocsr()[:, class_index].toarray().ravel()


@pytest.mark.slow
def test_headline_never_turns_a_zero_into_a_non_zero(headline):
    before, classes_in = feature_block(OH0)
    after, classes_out = feature_block(headline[0])
    assert before.shape == after.shape == (1003, 3182)
    created = (after != 0).astype(int) - (before != 0).astype(int)
    assert created.max() <= 0, "a zero of the input became non-zero"
    assert after.nnz <= before.nnz
    assert after.nnz > 0.9 * before.nnz  # and it did not just wipe the data
    np.testing.assert_array_equal(classes_out, classes_in)


def test_headline_rows_have_unit_length(headline):
    after, _ = feature_block(headline[0])
    lengths = np.sqrt(np.asarray(after.multiply(after).sum(axis=1)).ravel())
    non_empty = np.diff(after.indptr) > 0
    assert non_empty.sum() >= 1000
    np.testing.assert_allclose(lengths[non_empty], 1.0, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(lengths[~non_empty], 0.0)


def test_headline_saved_model_reproduces_training_output_exactly(headline):
    trained, applied = (p.read_bytes() for p in headline)

    assert len(trained) > 100_000
    assert without_comments(applied) == without_comments(trained)


@needs_weka
def test_weka_reads_the_headline_output(headline):
    # weka.core.Instances exits 0 even when it fails to parse: judge by its output
    completed = subprocess.run(
        [JAVA, *JAVA_OPTIONS, "-cp", str(WEKA_JAR), "weka.core.Instances", str(headline[0])],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert completed.returncode == 0
    assert "Exception" not in completed.stdout + completed.stderr
    summary = dict(line.split(":", 1) for line in completed.stdout.splitlines()[:3])
    assert int(summary["Num Instances"]) == 1003
    assert int(summary["Num Attributes"]) == 3183
