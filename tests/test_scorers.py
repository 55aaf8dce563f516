"""Scorer stages (docs/algorithms.md §3): each numeric feature's training range is
rescaled so that its width equals the feature's score.

The small data set below is worked by hand with ``acc2 = |tpr − fpr|`` (the simplest metric
to do on paper); the 0/1 test checks Forman's BNS scaling and the iris test the one-vs-rest
combination of a three-class target.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.stats import norm

from filterkit import cli
from filterkit.arff.reader import read_arff
from filterkit.plugins import load_plugins
from filterkit.runner import Chain
from filterkit.sources import FileSource

REAL = Path(__file__).parent / "data" / "real"
NAN = np.nan

HEADER = """@relation scaling
@attribute a numeric
@attribute b numeric
@attribute c numeric
@attribute class {n,p}
@data
"""
# pos = 3 (p), neg = 3 (n).
#   a: -1 n | 0 p, 0 n, 0 n | 2 p | 4 p          range [-1, 4], width 5
#      cuts  >-1: tpr 3/3, fpr 2/3 → 1/3;  >0: tpr 2/3, fpr 0 → 2/3;  >2: 1/3, 0 → 1/3.  Best 2/3.
#      presence (a ≠ 0): tpr 2/3, fpr 1/3 → 1/3.
#   b: 7 everywhere: constant, no cut, score 0, output 0.
#   c: row 2 missing → pos 2, neg 3 for c.  0 n, 0 n | 1 p | 2 n | 3 p      range [0, 3], width 3
#      cuts  >0: tpr 2/2, fpr 1/3 → 2/3;  >1: 1/2 − 1/3 = 1/6;  >2: 1/2 − 0 = 1/2.  Best 2/3.
#      presence: tpr 1, fpr 1/3 → 2/3.
TRAIN = (
    HEADER
    + """4,7,1,p
2,7,?,p
0,7,3,p
0,7,0,n
-1,7,0,n
0,7,2,n
"""
)
TRAIN_SPARSE = (
    HEADER
    + """{0 4,1 7,2 1,3 p}
{0 2,1 7,2 ?,3 p}
{1 7,2 3,3 p}
{1 7}
{0 -1,1 7}
{1 7,2 2}
"""
)
# beyond the training range on both sides, a value of b never seen, a missing c
TEST = (
    HEADER
    + """10,100,-3,?
-5,7,?,p
"""
)

TRAIN_A = np.array([4, 2, 0, 0, -1, 0.0])
TRAIN_C = np.array([1, NAN, 3, 0, 0, 2.0])


def filterkit(*argv) -> int:
    return cli.run([str(a) for a in argv])


def values_of(path) -> np.ndarray:
    return read_arff(str(path))[1].dense_values()


@pytest.fixture
def files(tmp_path):
    for name, text in (("train.arff", TRAIN), ("sparse.arff", TRAIN_SPARSE), ("test.arff", TEST)):
        (tmp_path / name).write_text(text)
    return tmp_path


def run_acc2(files, *options, train="train.arff") -> np.ndarray:
    out = files / "out.arff"
    assert filterkit("--positive", "p", "-o", out, files / train, "acc2", *options) == 0
    return values_of(out)


def test_zero_preserving_scaling_multiplies_by_score_over_width(files):
    out = run_acc2(files)
    np.testing.assert_allclose(out[:, 0], TRAIN_A * (2 / 3) / 5, rtol=1e-14)  # 4 → 8/15, -1 → -2/15, 0 → 0
    np.testing.assert_array_equal(out[:, 1], 0.0)  # constant b
    np.testing.assert_allclose(out[:, 2], TRAIN_C * (2 / 3) / 3, rtol=1e-14)  # missing stays missing
    assert np.isnan(out[1, 2])
    np.testing.assert_array_equal(out[:, 3], [1, 1, 1, 0, 0, 0])  # the class is untouched


def test_no_zero_preserve_maps_the_training_range_to_zero_to_score(files):
    out = run_acc2(files, "--no-zero-preserve")
    np.testing.assert_allclose(out[:, 0], (TRAIN_A + 1) * (2 / 3) / 5, rtol=1e-14)  # 4 → 2/3, -1 → 0, 0 → 2/15
    assert out[:, 0].min() == 0.0 and out[:, 0].max() == pytest.approx(2 / 3, rel=1e-14)
    np.testing.assert_array_equal(out[:, 1], 0.0)
    np.testing.assert_allclose(out[:, 2], TRAIN_C * (2 / 3) / 3, rtol=1e-14)  # min 0: same as zero-preserving


@pytest.mark.parametrize("options", [(), ("--no-zero-preserve",)])
def test_sparse_input_is_scaled_like_dense_input(files, options):
    np.testing.assert_array_equal(run_acc2(files, *options, train="sparse.arff"), run_acc2(files, *options))


def test_presence_scores_value_not_zero(files):
    out = run_acc2(files, "--presence")
    np.testing.assert_allclose(out[:, 0], TRAIN_A * (1 / 3) / 5, rtol=1e-14)
    np.testing.assert_allclose(out[:, 2], TRAIN_C * (2 / 3) / 3, rtol=1e-14)


@pytest.mark.parametrize(
    ("options", "expected_a"),
    [
        ((), [10 * (2 / 3) / 5, -5 * (2 / 3) / 5]),  # 4/3 and -2/3
        (("--no-zero-preserve",), [(10 + 1) * (2 / 3) / 5, (-5 + 1) * (2 / 3) / 5]),  # 22/15 and -8/15
    ],
)
def test_saved_model_scales_test_values_beyond_the_training_range_without_clipping(files, options, expected_a):
    model, out = files / "m.json", files / "test.out.arff"
    assert (
        filterkit(
            "--positive",
            "p",
            "--save-model",
            model,
            "-o",
            files / "train.out.arff",
            files / "train.arff",
            "acc2",
            *options,
        )
        == 0
    )
    assert cli.run(["apply", str(model), str(files / "test.arff"), "-o", str(out)]) == 0
    test = values_of(out)
    np.testing.assert_allclose(test[:, 0], expected_a, rtol=1e-14)
    np.testing.assert_array_equal(test[:, 1], [0.0, 0.0])  # constant in training: 0 even for 100
    assert test[0, 2] == pytest.approx(-3 * (2 / 3) / 3, rel=1e-14)
    assert np.isnan(test[1, 2])


def test_no_scale_leaves_values_and_header_unchanged_and_records_scores(files):
    out = files / "out.arff"
    assert filterkit("--positive", "p", "-o", out, files / "train.arff", "acc2", "--no-scale") == 0
    schema_in, rows_in = read_arff(str(files / "train.arff"))
    schema_out, rows_out = read_arff(str(out))
    assert schema_out.attributes == schema_in.attributes
    np.testing.assert_array_equal(rows_out.dense_values(), rows_in.dense_values())

    stage = load_plugins().make_stage("acc2", {"scale": False})
    Chain([stage], positive="p").fit(FileSource(str(files / "train.arff")))
    scores = stage.feature_scores()
    assert scores == pytest.approx({"a": 2 / 3, "b": 0.0, "c": 2 / 3}, rel=1e-14)


def test_best_threshold_finds_an_interior_cut_presence_misses(tmp_path):
    # x: 1 n, 2 n | 3 p, 4 p, 5 n, 6 p.  pos = neg = 3.
    # cuts >1: 1 − 2/3 = 1/3;  >2: 1 − 1/3 = 2/3;  >3: 2/3 − 1/3 = 1/3;  >4: 1/3 − 1/3 = 0;  >5: 1/3 − 0 = 1/3.
    # Best: the cut between 2 and 3, acc2 = 2/3.  Presence (every x ≠ 0): tpr = fpr = 1 → 0.
    path = tmp_path / "cut.arff"
    path.write_text(
        "@relation cut\n@attribute x numeric\n@attribute class {n,p}\n@data\n1,n\n2,n\n3,p\n4,p\n5,n\n6,p\n"
    )
    registry = load_plugins()
    best, presence = registry.make_stage("acc2", {}), registry.make_stage("acc2", {"presence": True})
    for stage in (best, presence):
        Chain([stage], positive="p").fit(FileSource(str(path)))
    assert best.scores[0] == pytest.approx(2 / 3, rel=1e-14)
    assert presence.scores[0] == 0.0
    assert best.factor[0] == pytest.approx((2 / 3) / 5, rel=1e-14)  # range [1, 6]


def test_zero_one_features_are_scaled_by_their_bns_score(tmp_path):
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 2, 60)
    bits = (rng.random((60, 4)) < np.array([0.2, 0.5, 0.7, 0.1]) + 0.2 * labels[:, None]).astype(int)
    bits[:, 3] = 0  # an all-zero column: constant, becomes (stays) 0
    path = tmp_path / "bits.arff"
    lines = ["@relation bits"] + [f"@attribute w{j} numeric" for j in range(4)] + ["@attribute class {n,p}", "@data"]
    lines += [",".join(map(str, row)) + "," + "np"[label] for row, label in zip(bits, labels)]
    path.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.arff"
    assert filterkit("--positive", "p", "-o", out, path, "bns") == 0

    pos, neg = np.sum(labels == 1), np.sum(labels == 0)
    clip = lambda rate: np.clip(rate, 0.0005, 0.9995)  # noqa: E731
    tpr = clip(bits[labels == 1].sum(axis=0) / pos)
    fpr = clip(bits[labels == 0].sum(axis=0) / neg)
    bns = np.abs(norm.ppf(tpr) - norm.ppf(fpr))
    bns[3] = 0.0
    assert np.all(bns[:3] > 0.1)
    np.testing.assert_allclose(values_of(out)[:, :4], bits * bns, rtol=1e-12, atol=0)


def test_alpha_weights_positive_and_negative_features(tmp_path):
    # w0 is present in 3 of 4 positives and 1 of 4 negatives (positive feature); w1 the reverse.
    path = tmp_path / "alpha.arff"
    path.write_text(
        "@relation alpha\n@attribute w0 numeric\n@attribute w1 numeric\n@attribute class {n,p}\n@data\n"
        "1,0,p\n1,0,p\n1,1,p\n0,0,p\n1,1,n\n0,1,n\n0,1,n\n0,0,n\n"
    )
    registry = load_plugins()
    plain, weighted = registry.make_stage("bns", {}), registry.make_stage("bns", {"alpha": 0.8})
    for stage in (plain, weighted):
        Chain([stage], positive="p").fit(FileSource(str(path)))
    bns = norm.ppf(0.75) - norm.ppf(0.25)
    np.testing.assert_allclose(plain.scores, [bns, bns], rtol=1e-12)
    np.testing.assert_allclose(weighted.scores, [0.8 * bns, 0.2 * bns], rtol=1e-12)


@pytest.mark.parametrize("combine", ["max", "mean"])
def test_multiclass_scores_combine_one_vs_rest_scores(tmp_path, combine):
    iris = REAL / "iris.arff"
    registry = load_plugins()
    schema, rows = read_arff(str(iris))
    labels = schema.attributes[-1].labels
    per_class = []
    for label in labels:
        stage = registry.make_stage("ig", {"scale": False})
        Chain([stage], positive=label).fit(FileSource(str(iris)))
        per_class.append(stage.scores)
    per_class = np.array(per_class)
    assert not np.allclose(per_class[0], per_class[1])  # the classes really differ
    combined = per_class.max(axis=0) if combine == "max" else per_class.mean(axis=0)

    out = tmp_path / "out.arff"
    assert filterkit("-o", out, iris, "ig", "--combine", combine) == 0
    x = rows.dense_values()[:, :4]
    expected = x * combined / (x.max(axis=0) - x.min(axis=0))
    np.testing.assert_allclose(values_of(out)[:, :4], expected, rtol=1e-13)


def test_iris_one_vs_rest_max_by_hand_for_petal_length():
    # petal length separates setosa perfectly: a cut between 1.9 and 3.0 puts 50 setosa below and
    # 100 others above, IG = H(1/3, 2/3) = log2(3) − 2/3 bits — no class can do better on any cut.
    registry = load_plugins()
    stage = registry.make_stage("ig", {"scale": False, "combine": "max"})
    Chain([stage]).fit(FileSource(str(REAL / "iris.arff")))
    assert stage.feature_scores()["petallength"] == pytest.approx(np.log2(3) - 2 / 3, rel=1e-12)


@pytest.mark.parametrize("stage", [("ig",), ("bns",), ("bns", "--multiply"), ("chi", "--presence")])
def test_a_negative_value_of_a_feature_scored_zero_is_written_0_as_its_sparse_twin_writes_it(
    run_filterkit, tmp_path, stage
):
    # x · 0 of a negative x is -0.0: the dense file wrote -0 where its sparse twin (which stores no zero) wrote 0
    header = "@relation nz\n@attribute a numeric\n@attribute b numeric\n@attribute c {x,y}\n@data\n"
    (tmp_path / "dense.arff").write_text(header + "-2,1,x\n0,-3,y\n-2,1,y\n0,-3,x\n")
    (tmp_path / "sparse.arff").write_text(header + "{0 -2,1 1}\n{1 -3,2 y}\n{0 -2,1 1,2 y}\n{1 -3}\n")
    outputs = [run_filterkit("--dense", tmp_path / name, *stage) for name in ("dense.arff", "sparse.arff")]
    assert [result.status for result in outputs] == [0, 0]
    rows = [result.stdout.split(b"@data\n")[1] for result in outputs]
    assert rows[0] == rows[1] and b"-0" not in rows[0]
    assert rows[0].startswith(b"0,") and rows[0].count(b"\n") == 4


def test_auto_writes_0_not_minus_0_where_a_feature_s_factor_is_0(run_filterkit, tmp_path):
    # rows of weight 0 leave every score 0: (x − offset) · 0 of an x below the offset was -0
    path = tmp_path / "w0.arff"
    path.write_text(
        "@relation w0\n@attribute a numeric\n@attribute b numeric\n@attribute c {x,y}\n@data\n"
        "1,0,x,{0}\n2,1,x,{0}\n3,0,y,{0}\n4,1,y,{0}\n"
    )
    result = run_filterkit(path, "auto")
    assert result.status == 0 and b"-0" not in result.stdout.split(b"@data\n")[1]
