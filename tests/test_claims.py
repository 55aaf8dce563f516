"""What the README says filterkit equals, or how its output fares in Weka, checked against Weka itself;
and the error that a misplaced class gives, which says the -c that fixes it."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from chain_helpers import REAL, needs_weka, read_bytes, run_weka_filters, run_weka_jobs
from filterkit.arff import read_arff

GRAIN = REAL / "grain_wc.arff"  # class-att first
WEKA_EXAMPLES = Path("/usr/share/doc/weka/examples")


def _columns(arff: bytes) -> dict[str, np.ndarray]:
    """Each attribute's column, by name."""
    schema, chunk = read_bytes(arff)
    values = chunk.dense_values()
    return {attribute.name: values[:, i] for i, attribute in enumerate(schema.attributes)}


@needs_weka
def test_unscaled_ig_selection_is_wekas_attribute_selection_and_scaled_ig_is_not(run_filterkit, tmp_path):
    """README: `ig --no-scale select` and `select --metric ig` give what Weka's AttributeSelection gives;
    `ig select` rescales every kept word."""
    weka = tmp_path / "weka.arff"
    run_weka_filters(
        tmp_path,
        [
            [
                "weka.filters.supervised.attribute.AttributeSelection",
                "-E",
                "weka.attributeSelection.InfoGainAttributeEval -B",
                "-S",
                "weka.attributeSelection.Ranker -N 100",
                "-c",
                "first",
                "-i",
                str(GRAIN),
                "-o",
                str(weka),
            ]
        ],
    )
    expected = _columns(weka.read_bytes())
    assert len(expected) == 101
    for chain in (["ig", "--presence", "--no-scale", "select"], ["select", "--metric", "ig", "--presence"]):
        ours = _columns(run_filterkit("-c", "first", GRAIN, *chain, "--top", 100).stdout)
        assert ours.keys() == expected.keys()
        for name, column in expected.items():
            np.testing.assert_array_equal(ours[name], column, err_msg=name)
    scaled = _columns(run_filterkit("-c", "first", GRAIN, "ig", "--presence", "select", "--top", 100).stdout)
    assert scaled.keys() == expected.keys()
    for name in set(expected) - {"class-att"}:
        assert not np.array_equal(scaled[name], expected[name]), name


def _grain_f1(weka_output: str) -> float:
    """SMO's test F-measure of class 1 (grain), from what the classifier's command line prints with -i."""
    test_part = weka_output.split("=== Error on test data ===")[1]
    row = re.search(r"^\s+(?:[\d.?]+\s+){4}([\d.?]+)\s+[\d.?]+\s+1\s*$", test_part, re.M)
    assert row is not None, test_part
    return float(row.group(1))


@needs_weka
@pytest.mark.slow
def test_wekas_smo_needs_no_normalization_to_keep_the_bns_scaling(run_filterkit, tmp_path):
    """README, Weka interop: SMO -N 2 on `words … shape bns l2` of Reuters grain: F1 0.973; SMO's own
    normalization (its default) undoes the scaling: 0.899."""
    train, test = WEKA_EXAMPLES / "ReutersGrain-train.arff", WEKA_EXAMPLES / "ReutersGrain-test.arff"
    if not train.is_file() or not test.is_file():
        pytest.skip(f"{train} is not installed (Debian's weka package ships it)")
    model, train_out, test_out = tmp_path / "m.json", tmp_path / "train.arff", tmp_path / "test.arff"
    chain = ["words", "--counts", "--lowercase", "--stopwords", "weka", "shape", "bns", "l2"]
    assert run_filterkit("-q", "--save-model", model, "-o", train_out, train, *chain).status == 0
    assert run_filterkit("-q", "apply", model, test, "-o", test_out).status == 0
    assert read_arff(train_out)[0].attributes[0].name == "class-att"
    runs = run_weka_jobs(
        tmp_path,
        [
            ["evaluate", "weka.classifiers.functions.SMO", *normalization, "-t", train_out, "-T", test_out]
            + ["-c", "first", "-i"]
            for normalization in (["-N", "2"], [])
        ],
    )
    assert all(run.ok for run in runs), [run.output[-2000:] for run in runs]
    assert [_grain_f1(run.output) for run in runs] == [0.973, 0.899]


ARTICLES = b"""@relation words
@attribute class-att {0,1}
@attribute grain numeric
@attribute wheat numeric
@data
{0 1,1 2}
{1 1}
{2 3}
"""


def test_a_class_that_is_not_nominal_says_which_c_names_the_nominal_one(run_filterkit, tmp_path):
    """After `words` the class comes first; the default -c last is a word: the error says -c first."""
    source, output = tmp_path / "words.arff", tmp_path / "out.arff"
    source.write_bytes(ARTICLES)
    result = run_filterkit("-o", output, source, "ig")
    assert (result.status, result.stdout) == (1, b"")
    assert result.stderr == (
        "filterkit: error: stage 'ig' needs a nominal class attribute (-c); "
        "the class (-c last) is 'wheat', numeric: give -c first for 'class-att'\n"
    )
    assert not output.exists()
    result = run_filterkit("-c", "2", source, "bns", "shape")
    assert result.stderr.endswith("the class (-c 2) is 'grain', numeric: give -c first for 'class-att'\n")
    result = run_filterkit("--positive", "1", source, "shape")
    assert result.stderr == (
        f"filterkit: error: {source}: --positive '1' is not a label of the class; "
        "the class (-c last) is 'wheat', numeric: give -c first for 'class-att'\n"
    )
    assert run_filterkit("-c", "first", source, "ig").status == 0
