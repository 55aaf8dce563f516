"""Missing values in the shaper (issue 22, item 3; docs/algorithms.md §4.2): ``--missing bin``
(the default) gives a missing value its own bin, shaped like a value; ``--missing keep`` leaves
it missing (0.3's behaviour), and a model saved by 0.3 keeps it so.  Values worked by hand on a
tiny file (``--neighbors 1``, positive ``p``), then Weka's labor, vote and soybean.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from chain_helpers import read_bytes, without_comments
from filterkit import testing
from filterkit.plugins import load_plugins
from filterkit.testing import check_stage

SHAPER_DATA = Path(__file__).parent / "data" / "shaper"
LABOR, VOTE, SOYBEAN = (SHAPER_DATA / f"{name}.arff" for name in ("labor", "vote", "soybean"))

HEADER = """@relation missing
@attribute x numeric
@attribute color {red,green}
@attribute w numeric
@attribute class {n,p}
@data
"""
ROWS = """1,red,1,p
2,red,0,n
0,green,1,p
0,green,0,n
0,green,0,n
?,?,0,p
?,?,0,p
?,green,0,n
3,?,0,n
"""
# x: zero bin 0 p, 0 n, 0 n → 2/5; missing bin p, p, n → (2 + 1)/(3 + 2) = 3/5;
#    non-zero 1 p | 2 n | 3 n, --neighbors 1: v=1 [0, 2) → 2/4, v=2 [0, 3) → 2/5, v=3 [1, 3) → 1/4.
# color (nominal, no zero shift): red 1 p of 2 → 2/4; green 1 p of 4 → 2/6; missing p, p, n → 3/5.
# w: never missing in training; zero bin 2 p of 7 → 3/9; overall 4 p of 9 → 5/11 (a missing test value).
X_ZERO, X_MISSING, X_KNOTS = 2 / 5, 3 / 5, (1 / 2, 2 / 5, 1 / 4)
RED, GREEN, COLOR_MISSING = 1 / 2, 1 / 3, 3 / 5
W_ZERO, W_OVERALL = 1 / 3, 5 / 11


@pytest.fixture
def tiny(tmp_path):
    (tmp_path / "train.arff").write_text(HEADER + ROWS)
    (tmp_path / "test.arff").write_text(HEADER + "?,?,?,?\n2.5,green,0,?\n")
    return tmp_path


def shaped_rows(run_filterkit, data, *options):
    """The training and test rows through ``--positive p … shape --neighbors 1 OPTIONS`` (dense)."""
    model = data / "model.json"
    fitted = run_filterkit(
        "--positive", "p", "--save-model", model, data / "train.arff", "shape", "--neighbors", "1", *options
    )
    assert fitted.status == 0, fitted.stderr
    applied = run_filterkit("apply", model, data / "test.arff")
    assert applied.status == 0, applied.stderr
    return read_bytes(fitted.stdout)[1].dense_values(), read_bytes(applied.stdout)[1].dense_values()


def test_a_missing_value_is_shaped_from_its_own_bin(run_filterkit, tiny):
    train, test = shaped_rows(run_filterkit, tiny)
    expected_x = [X_KNOTS[0], X_KNOTS[1], X_ZERO, X_ZERO, X_ZERO, X_MISSING, X_MISSING, X_MISSING, X_KNOTS[2]]
    np.testing.assert_allclose(train[:, 0], [p - X_ZERO for p in expected_x], rtol=1e-14, atol=1e-16)
    assert train[5, 0] == pytest.approx(1 / 5, rel=1e-14)
    expected_color = [RED, RED, GREEN, GREEN, GREEN, COLOR_MISSING, COLOR_MISSING, GREEN, COLOR_MISSING]
    np.testing.assert_allclose(train[:, 1], expected_color, rtol=1e-14)
    # a test row missing everywhere: x and color from their bins, w (no missing training row) its overall p̃
    np.testing.assert_allclose(test[0, :3], [X_MISSING - X_ZERO, COLOR_MISSING, W_OVERALL - W_ZERO], rtol=1e-14)
    assert test[0, 2] == pytest.approx(4 / 33, rel=1e-14)


def test_logodds_and_no_zero_preserve_transform_the_missing_bin_like_a_value(run_filterkit, tiny):
    train, _ = shaped_rows(run_filterkit, tiny, "--transform", "logodds")
    assert train[5, 0] == pytest.approx(math.log(3 / 2) - math.log(2 / 3), rel=1e-14)
    assert train[5, 1] == pytest.approx(math.log(3 / 2), rel=1e-14)
    train, _ = shaped_rows(run_filterkit, tiny, "--no-zero-preserve")
    assert train[5, 0] == pytest.approx(X_MISSING, rel=1e-14) and train[0, 0] == pytest.approx(1 / 2, rel=1e-14)


def test_keep_leaves_missing_values_missing_and_every_other_value_as_bin_gives_it(run_filterkit, tiny):
    binned, binned_test = shaped_rows(run_filterkit, tiny)
    kept, kept_test = shaped_rows(run_filterkit, tiny, "--missing", "keep")
    source = read_bytes((tiny / "train.arff").read_bytes())[1].dense_values()
    missing = np.isnan(source)
    assert missing[:, :3].sum() == 6
    np.testing.assert_array_equal(np.isnan(kept), missing)
    np.testing.assert_array_equal(kept[~missing], binned[~missing])
    assert np.isnan(kept_test[0, :3]).all() and not np.isnan(binned_test[0, :3]).any()
    np.testing.assert_array_equal(kept_test[1], binned_test[1])


def test_a_missing_row_counts_by_its_weight(run_filterkit, tmp_path):
    (tmp_path / "weighted").mkdir()
    (tmp_path / "copied").mkdir()
    (tmp_path / "weighted" / "train.arff").write_text(HEADER + ROWS.replace("?,green,0,n", "?,green,0,n,{3}"))
    (tmp_path / "copied" / "train.arff").write_text(HEADER + ROWS + "?,green,0,n\n?,green,0,n\n")
    for folder in ("weighted", "copied"):
        (tmp_path / folder / "test.arff").write_text(HEADER + "?,?,?,?\n")
    _, weighted = shaped_rows(run_filterkit, tmp_path / "weighted")
    _, copied = shaped_rows(run_filterkit, tmp_path / "copied")
    # x's missing bin: p, p and n weighing 3 → 3/7; its zero bin is unchanged
    assert weighted[0, 0] == pytest.approx(3 / 7 - X_ZERO, rel=1e-14)
    np.testing.assert_array_equal(weighted, copied)


def test_a_missing_class_row_is_left_out_of_every_bin(run_filterkit, tiny):
    (tiny / "train.arff").write_text(HEADER + ROWS + "?,?,0,?\n0,red,?,?\n")
    train, _ = shaped_rows(run_filterkit, tiny)
    assert train[5, 0] == pytest.approx(X_MISSING - X_ZERO, rel=1e-14)
    assert train[9, 0] == pytest.approx(X_MISSING - X_ZERO, rel=1e-14)


def test_a_0_3_model_keeps_missing_values_missing_byte_for_byte(run_filterkit):
    applied = run_filterkit("apply", SHAPER_DATA / "labor-shape-0.3.json", LABOR)
    assert applied.status == 0, applied.stderr
    expected = (SHAPER_DATA / "labor-shape-0.3.out.arff").read_bytes()
    assert b"?" in expected.split(b"@data")[1]
    assert without_comments(applied.stdout) == without_comments(expected)
    # a fit today gives 0.3's values to their last bits: each feature's windows are now summed from its own rows
    # alone (0.3's running sums over every feature gave -0.0952380952380949 for -2/21), its missing values alike
    today = read_bytes(run_filterkit(LABOR, "shape", "--neighbors", "5", "--missing", "keep").stdout)[1].dense_values()
    then = read_bytes(expected)[1].dense_values()
    np.testing.assert_array_equal(np.isnan(today), np.isnan(then))
    np.testing.assert_allclose(today, then, rtol=1e-13, atol=1e-15)


def test_the_next_stage_counts_the_shaped_missing_values(run_filterkit, tmp_path):
    """shape hands bns its statistics without a pass only where that pass would count the same:
    with missing training values given a number it may not, so ``shape bns`` equals the two runs."""
    chained = run_filterkit(VOTE, "shape", "bns")
    assert chained.status == 0, chained.stderr
    (tmp_path / "shaped.arff").write_bytes(run_filterkit(VOTE, "shape").stdout)
    apart = run_filterkit(tmp_path / "shaped.arff", "bns")
    assert without_comments(chained.stdout) == without_comments(apart.stdout)


def test_vote_has_no_missing_value_left_and_keeps_its_known_values(run_filterkit):
    _, source = read_bytes(VOTE.read_bytes())
    binned = read_bytes(run_filterkit(VOTE, "shape").stdout)[1].dense_values()
    kept = read_bytes(run_filterkit(VOTE, "shape", "--missing", "keep").stdout)[1].dense_values()
    missing = np.isnan(source.dense_values())
    assert missing.sum() == 392
    assert not np.isnan(binned).any()
    np.testing.assert_array_equal(kept[~missing], binned[~missing])
    # a vote's missing bin: the republican fraction (the minority, positive) of its unknown votes
    votes = source.dense_values()
    republican = votes[:, -1] == 1
    unknown = np.isnan(votes[:, 0])
    assert binned[unknown, 0][0] == pytest.approx((republican[unknown].sum() + 1) / (unknown.sum() + 2), rel=1e-14)


@pytest.mark.slow
@pytest.mark.parametrize("data", [LABOR, VOTE, SOYBEAN])
@pytest.mark.parametrize("options", [[], ["--multiclass", "max", "--no-zero-bin"], ["--missing", "keep"]])
def test_the_chunk_size_does_not_change_a_byte(run_filterkit, data, options):
    whole = run_filterkit(data, "shape", *options)
    assert whole.status == 0, whole.stderr
    assert run_filterkit("--chunk-rows", "1", data, "shape", *options).stdout == whole.stdout
    assert run_filterkit("--chunk-rows", "13", data, "shape", *options).stdout == whole.stdout


@pytest.mark.slow
def test_soybean_one_vs_rest_bins_every_missing_value(run_filterkit):
    result = run_filterkit(SOYBEAN, "shape")
    assert result.status == 0, result.stderr
    schema, rows = read_bytes(result.stdout)
    assert len(schema.attributes) == 35 * 19 + 1
    assert not np.isnan(rows.dense_values()[:, :-1]).any()


@pytest.mark.slow
@pytest.mark.parametrize("missing", ["bin", "keep"])
def test_the_stage_contract_holds_on_files_with_missing_values(monkeypatch, missing):
    if missing == "bin":  # the default: test_contract.py checks it on the shipped files, which have no missing value
        monkeypatch.setattr(testing, "SHIPPED_DATA", ())
    shaper = load_plugins().stages["shape"].value
    accepted = check_stage(shaper, data=(LABOR, VOTE), missing=missing)
    assert {f"{LABOR} (sparse)", f"{VOTE} (dense)"} <= set(accepted)


@pytest.mark.slow
def test_dask_gives_the_local_bytes_with_missing_values(run_filterkit, tmp_path):
    distributed = pytest.importorskip("dask.distributed", reason="Dask is not installed")
    local = run_filterkit(VOTE, "shape", "bns", "l2")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster:
        result = run_filterkit(
            "--engine", "dask", "--scheduler", cluster.scheduler_address, "--partitions", "3",
            "-o", tmp_path / "out.arff", VOTE, "shape", "bns", "l2",
        )  # fmt: skip
    assert result.status == 0, result.stderr
    assert (tmp_path / "out.arff").read_bytes() == local.stdout


def test_a_feature_s_shaped_values_do_not_depend_on_another_feature_s_weights(run_filterkit, tmp_path):
    """KDD'09 §3.2: b's windows are its own rows'.  A row of weight 1e17 in feature a took b's windows' positions
    (every b came out 0.3333), and ordinary fractional weights moved b's last bits with the columns beside it."""
    rows = ["0,1,p,{0.3}", "0,2,n,{0.7}", "0,3,p,{0.1}", "0,4,n,{1.3}", "0,5,p,{0.7}", "0,5,n,{0.3}"]
    for first_row in ("5,0,n,{1e17}", "5,0,n,{0.1}", "7,0,p,{3.7}"):
        both, alone = tmp_path / "both.arff", tmp_path / "alone.arff"
        header = "@relation s\n@attribute a numeric\n@attribute b numeric\n@attribute cls {n,p}\n@data\n"
        both.write_text(header + "".join(f"{row}\n" for row in [first_row, *rows]))
        only_b = [first_row.split(",", 1)[1], *(row.split(",", 1)[1] for row in rows)]
        alone.write_text(header.replace("@attribute a numeric\n", "") + "".join(f"{row}\n" for row in only_b))
        with_a, without_a = (
            read_bytes(run_filterkit("--positive", "p", path, "shape", "--neighbors", "1").stdout)[1].dense_values()
            for path in (both, alone)
        )
        np.testing.assert_array_equal(with_a[1:, 1], without_a[1:, 0])
        assert len(set(with_a[1:, 1].tolist())) > 2
