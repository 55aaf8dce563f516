"""The term-weighting metrics idf, rf, nbr, didf and igm (docs/algorithms.md §2.1), and bns with and without
--bns-half-document, against hand
computations on a six-row file whose words cover every count case: in every document (a), in no
positive document (b), in none (c), in positive documents only (d), in one of each (e)."""

from __future__ import annotations

import io
import json
import math
from statistics import NormalDist

import numpy as np
import pytest

from filterkit.arff import read_arff
from filterkit.plugins import load_plugins
from filterkit.testing import check_stage

WEIGHTS = ("idf", "rf", "nbr", "didf", "igm")
HEADER = "@relation six\n" + "".join(f"@attribute {w} numeric\n" for w in "abcde")
# Classes pos, pos, neg, neg, neg, neg: pos = 2, neg = 4. tp/fp: a 2/4, b 0/2, c 0/0, d 2/0, e 1/1.
ROWS = [(1, 0, 0, 2, 1), (3, 0, 0, 1, 0), (1, 1, 0, 0, 2), (2, 4, 0, 0, 0), (1, 0, 0, 0, 0), (5, 0, 0, 0, 0)]
LABELS = ["pos", "pos", "neg", "neg", "neg", "neg"]
DENSE = (
    HEADER
    + "@attribute class {pos,neg}\n@data\n"
    + "".join(",".join(map(str, row)) + f",{label}\n" for row, label in zip(ROWS, LABELS))
)
SPARSE = (
    HEADER
    + "@attribute class {pos,neg}\n@data\n"
    + "".join(
        "{" + ",".join([f"{j} {v}" for j, v in enumerate(row) if v] + [f"5 {label}"]) + "}\n"
        for row, label in zip(ROWS, LABELS)
    )
)
log2, ln = math.log2, math.log
z = NormalDist().inv_cdf  # the standard library's, not scipy's ndtri that bns uses
HAND = {
    ("idf",): [0.0, ln(3), 0.0, ln(3), ln(3)],
    # df: a 6, b 2, c 0, d 2, e 2 of N = 6 rows; smoothed as if a seventh row held every word.
    ("idf", "--smooth"): [1.0, ln(7 / 3) + 1, ln(7) + 1, ln(7 / 3) + 1, ln(7 / 3) + 1],
    ("rf",): [log2(2.5), 1.0, 1.0, 2.0, log2(3)],
    # nbr's norms: Σ tp = 5, Σ fp = 7 over the five words, so ‖p‖₁ = 5α + 5 and ‖q‖₁ = 5α + 7.
    ("nbr",): [ln(3 / 10 / (5 / 12)), ln(1 / 10 / (3 / 12)), ln(12 / 10), ln(3 / 10 / (1 / 12)), ln(12 / 10)],
    ("nbr", "--nb-alpha", "0.5"): [
        ln(2.5 / 7.5 / (4.5 / 9.5)),
        ln(0.5 / 7.5 / (2.5 / 9.5)),
        ln(9.5 / 7.5),
        ln(2.5 / 7.5 / (0.5 / 9.5)),
        ln(9.5 / 7.5),
    ],
    ("didf",): [0.0, 0.0, 0.0, 0.0, -1.0],
    ("didf", "--smooth"): [0.0, log2(9), 0.0, log2(1 / 17), log2(5 / 9)],
    ("igm",): [4.5, 8.0, 1.0, 8.0, 1 + 7 / 3],
    ("igm", "--igm-lambda", "2"): [2.0, 3.0, 1.0, 3.0, 1 + 2 / 3],
    # bns clips the rates at 0.0005; --bns-half-document at half a document: tpr at 0.5/2, fpr at 0.5/4.
    ("bns",): [0.0, -z(0.0005), 0.0, 2 * z(0.9995), -z(0.25)],
    ("bns", "--bns-half-document"): [z(0.875) - z(0.75), -z(0.25), 0.0, z(0.75) - z(0.125), -z(0.25)],
}


def output_values(result):
    assert result.status == 0, result.stderr
    return read_arff(io.BytesIO(result.stdout), "<output>")[1].dense_values()


@pytest.mark.parametrize("text", [DENSE, SPARSE], ids=["dense", "sparse"])
@pytest.mark.parametrize("stage", list(HAND), ids=" ".join)
def test_multiply_gives_each_count_times_its_hand_computed_weight(run_filterkit, tmp_path, text, stage):
    path = tmp_path / "six.arff"
    path.write_text(text)
    values = output_values(run_filterkit("--positive", "pos", path, *stage, "--presence", "--multiply"))
    np.testing.assert_allclose(values[:, :5], np.array(ROWS) * HAND[stage], rtol=1e-14, atol=1e-300)
    assert values[:, 5].tolist() == [0, 0, 1, 1, 1, 1]


@pytest.mark.parametrize("name", WEIGHTS)
def test_select_and_info_rank_by_the_weight_with_its_default_options(run_filterkit, tmp_path, name):
    path = tmp_path / "six.arff"
    path.write_text(DENSE)
    scores = HAND[(name,)]
    best = max(range(5), key=lambda j: (scores[j], -j))
    result = run_filterkit("--positive", "pos", path, "select", "--metric", name, "--presence", "--top", "1")
    assert result.status == 0, result.stderr
    assert read_arff(io.BytesIO(result.stdout), "<out>")[0].attributes[0].name == "abcde"[best]
    info = run_filterkit("info", "--metric", name, "--positive", "pos", "--presence", "--json", path)
    assert info.status == 0, info.stderr
    ranked = {f["name"]: f["score"] for f in json.loads(info.stdout)["ranking"]["features"]}
    np.testing.assert_allclose([ranked[w] for w in "abcde"], scores, rtol=1e-14)


def test_chunk_size_does_not_change_the_bytes(run_filterkit, tmp_path):
    path = tmp_path / "six.arff"
    path.write_text(SPARSE)
    for stage in HAND:
        whole = run_filterkit("--positive", "pos", path, *stage, "--multiply")
        assert whole.status == 0, whole.stderr
        one_row_chunks = run_filterkit("--chunk-rows", "1", "--positive", "pos", path, *stage, "--multiply")
        assert one_row_chunks.stdout == whole.stdout


# Wang & Manning's worked setting, small: 4 documents of binarized words x, y, z, α = 1. Positive documents
# (x y) and (x): p = 1 + (2, 1, 0) = (3, 2, 1), ‖p‖₁ = 6; negative (y z) and (x z): q = 1 + (1, 1, 2) =
# (2, 2, 3), ‖q‖₁ = 7. r = ln((p/‖p‖₁) / (q/‖q‖₁)) = (ln(7/4), ln(7/6), ln(7/18)); without the norms it
# would be (ln(3/2), 0, ln(1/3)).
PAPER_ROWS = [(1, 1, 0), (1, 0, 0), (0, 1, 1), (1, 0, 1)]
PAPER_R = [ln(7 / 4), ln(7 / 6), ln(7 / 18)]


@pytest.mark.parametrize("mode", [("--presence",), ()], ids=["presence", "threshold"])
def test_nbr_is_wang_and_mannings_log_count_ratio_with_its_norms(run_filterkit, tmp_path, mode):
    path = tmp_path / "paper.arff"
    rows = "".join(f"{x},{y},{z},{label}\n" for (x, y, z), label in zip(PAPER_ROWS, ["pos", "pos", "neg", "neg"]))
    header = "@relation paper\n" + "".join(f"@attribute {w} numeric\n" for w in "xyz")
    path.write_text(header + "@attribute class {pos,neg}\n@data\n" + rows)
    values = output_values(run_filterkit("--positive", "pos", path, "nbr", *mode, "--multiply"))
    np.testing.assert_allclose(values[:, :3], np.array(PAPER_ROWS) * PAPER_R, rtol=1e-15)


@pytest.mark.parametrize("options, coefficient", [((), 7.0), (("--igm-lambda", "2"), 2.0)])
def test_igm_scores_all_classes_at_once_on_a_three_class_target(run_filterkit, tmp_path, options, coefficient):
    # x is in A:2 B:1 C:0 → f = (2, 1, 0), igm = 2 / (2·1 + 1·2) = 0.5; y in B:1 C:1 → 1 / (1 + 2).
    rows = ["1,0,A", "2,0,A", "1,1,B", "0,0,B", "0,3,C", "0,0,C"]
    path = tmp_path / "three.arff"
    path.write_text("@relation t\n@attribute x numeric\n@attribute y numeric\n@attribute class {A,B,C}\n@data\n")
    path.write_text(path.read_text() + "\n".join(rows) + "\n")
    values = output_values(run_filterkit(path, "igm", "--presence", "--multiply", *options))
    expected = np.array([[1, 0], [2, 0], [1, 1], [0, 0], [0, 3], [0, 0]]) * (1 + coefficient * np.array([0.5, 1 / 3]))
    np.testing.assert_allclose(values[:, :2], expected, rtol=1e-15)


@pytest.mark.slow
@pytest.mark.parametrize(
    "stage",
    [
        ("nbr", "--nb-alpha", "0.5"),
        ("didf", "--smooth"),
        ("idf", "--smooth"),
        ("igm", "--igm-lambda", "2"),
        ("bns", "--bns-half-document"),
    ],
)
def test_the_stages_with_metric_options_keep_the_stage_contract(stage):
    options = {stage[1].lstrip("-").replace("-", "_"): True if len(stage) == 2 else float(stage[2])}
    assert len(check_stage(load_plugins().stage(stage[0]), multiply=True, **options)) >= 2


def test_smoothed_idf_is_scikit_learns_tfidf_transformer_default(run_filterkit, tmp_path):
    from sklearn.feature_extraction.text import TfidfTransformer

    path = tmp_path / "six.arff"
    path.write_text(SPARSE)
    values = output_values(run_filterkit(path, "idf", "--presence", "--multiply", "--smooth"))
    expected = TfidfTransformer(norm=None).fit_transform(np.array(ROWS)).toarray()
    np.testing.assert_allclose(values[:, :5], expected, rtol=1e-14)
