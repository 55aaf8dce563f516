"""Scaling over the whole double range: no overflow or underflow on the way where the
true result is a double — minmax on subnormal and huge ranges (against Weka's
Normalize where Weka has an answer), l2/l1 on rows of 1e-200 and 1e200, the scorers'
range scaling and the shaper's interpolation between subnormal or huge knots."""

from __future__ import annotations

import numpy as np
import pytest

from chain_helpers import needs_weka, read_bytes, weka_normalize
from filterkit.arff.reader import read_arff

# tiny: 0 .. 8 steps of the smallest subnormal; subnormal: 1e-310 .. 5e-310; normal: 1 .. 4
SUBNORMAL_RANGES = """@relation ranges
@attribute tiny numeric
@attribute subnormal numeric
@attribute normal numeric
@attribute class {n,p}
@data
0,1e-310,1,n
5e-324,2e-310,2,p
1e-323,3e-310,3,n
4e-323,5e-310,4,p
"""
SUBNORMAL_EXPECTED = [[0, 0, 0], [0.125, 0.25, 1 / 3], [0.25, 0.5, 2 / 3], [1, 1, 1]]

# a range wider than the largest double: max − min overflows
HUGE_RANGE = """@relation huge
@attribute huge numeric
@attribute class {n,p}
@data
-1.5e308,n
0,p
1.5e308,n
1e308,p
"""


def run(run_filterkit, tmp_path, text, *chain, options=()):
    path = tmp_path / "in.arff"
    path.write_text(text)
    result = run_filterkit(*options, path, *chain)
    assert result.status == 0, result.stderr
    assert "Warning" not in result.stderr
    return read_bytes(result.stdout)[1].dense_values()


def test_minmax_maps_a_subnormal_range_onto_zero_to_one(run_filterkit, tmp_path):
    values = run(run_filterkit, tmp_path, SUBNORMAL_RANGES, "minmax")
    np.testing.assert_array_equal(values[:, :3], np.array(SUBNORMAL_EXPECTED))


@needs_weka
def test_minmax_on_subnormal_ranges_agrees_with_weka_normalize(run_filterkit, tmp_path):
    source = tmp_path / "ranges.arff"
    source.write_text(SUBNORMAL_RANGES)
    weka_out = tmp_path / "weka.arff"
    weka_normalize(source, weka_out)
    ours = run(run_filterkit, tmp_path, SUBNORMAL_RANGES, "minmax")
    np.testing.assert_allclose(ours, read_arff(weka_out)[1].dense_values(), rtol=0, atol=1e-6)


def test_minmax_maps_a_range_wider_than_the_largest_double(run_filterkit, tmp_path):
    # Weka's Normalize stops here ("A NaN value was generated")
    values = run(run_filterkit, tmp_path, HUGE_RANGE, "minmax")
    np.testing.assert_array_equal(values[:, 0], [0, 0.5, 1, 2.5 / 3])


ROWS = """@relation rows
@attribute a numeric
@attribute b numeric
@attribute class {n,p}
@data
3e-200,4e-200,n
3e200,4e200,p
3,4,n
5e-324,0,p
1e308,1e308,n
"""


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize(
    "stage, expected",
    [
        ("l2", [[0.6, 0.8], [0.6, 0.8], [0.6, 0.8], [1, 0], [2**-0.5, 2**-0.5]]),
        ("l1", [[3 / 7, 4 / 7]] * 3 + [[1, 0], [0.5, 0.5]]),
    ],
)
def test_row_norms_over_the_whole_double_range(run_filterkit, tmp_path, stage, expected, sparse):
    values = run(run_filterkit, tmp_path, ROWS, stage, options=["--sparse"] if sparse else [])
    np.testing.assert_allclose(values[:, :2], expected, rtol=1e-15, atol=0)
    # rows the plain arithmetic handles keep its exact bits
    assert values[2, :2].tolist() == ([0.6, 0.8] if stage == "l2" else [3 / 7, 4 / 7])


@pytest.mark.parametrize("zero_preserve", ["--zero-preserve", "--no-zero-preserve"])
def test_scorer_scales_subnormal_and_huge_ranges_to_their_score(run_filterkit, tmp_path, zero_preserve):
    text = SUBNORMAL_RANGES.replace("@attribute normal numeric", "@attribute normal numeric\n@attribute huge numeric")
    text = text.replace(",n\n", ",X,n\n").replace(",p\n", ",X,p\n")
    for huge in ["-1.5e308", "0", "1.5e308", "1e308"]:
        text = text.replace(",X,", f",{huge},", 1)
    values = run(run_filterkit, tmp_path, text, "bns", zero_preserve)
    scores = run(run_filterkit, tmp_path, text, "bns", "--no-zero-preserve")
    assert np.isfinite(values).all()
    width = scores[:, :4].max(axis=0) - scores[:, :4].min(axis=0)
    assert (width > 0).all()
    # each feature's training range is as wide as its score, whatever the magnitude of its values
    np.testing.assert_allclose(values[:, :4].max(axis=0) - values[:, :4].min(axis=0), width, rtol=1e-15)


def test_shaper_interpolates_between_subnormal_knots(run_filterkit, tmp_path):
    train = """@relation knots
@attribute tiny numeric
@attribute huge numeric
@attribute class {n,p}
@data
5e-324,-1.5e308,n
1.5e-323,1.5e308,p
"""
    model = tmp_path / "m.json"
    path = tmp_path / "train.arff"
    path.write_text(train)
    assert run_filterkit("--save-model", model, path, "shape", "--neighbors", "0", "--no-zero-preserve").status == 0
    test = tmp_path / "test.arff"
    test.write_text(train.split("@data")[0] + "@data\n1e-323,1e308,n\n")
    applied = run_filterkit("apply", model, test)
    assert applied.status == 0, applied.stderr
    values = read_bytes(applied.stdout)[1].dense_values()
    # halfway between knots at p̃ = 1/3 and 2/3; 1e308 is 5/6 of the way from −1.5e308 to 1.5e308
    np.testing.assert_allclose(values[0, :2], [0.5, 1 / 3 + (1 / 3) * (2.5 / 3)], rtol=1e-12)
