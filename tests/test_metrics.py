"""The twelve JMLR 2003 metrics (docs/algorithms.md §2) and per-feature scoring.

The reference table is docs/algorithms.md §2's, computed independently of this code; the
other expected values are worked out here from the formulas, one line each.
The Weka test compares ``ig --presence`` and ``chi --presence`` on 13,027 real
words with Weka 3.6's own InfoGainAttributeEval / ChiSquaredAttributeEval
(``-B``, binarized numeric attributes), saved in ``weka_scores_grain_wc.tsv``.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import norm

from filterkit.errors import FilterkitError
from filterkit.metrics import Metric, feature_scores, metric_scores, positive_code, target_classes
from filterkit.plugins import load_plugins
from filterkit.runner import Chain
from filterkit.schema import Attribute, Chunk
from filterkit.sources import FileSource
from filterkit.statistics import ValueCounts

REAL = Path(__file__).parent / "data" / "real"
TWELVE = ("acc", "acc2", "bns", "chi", "dfreq", "f1", "ig", "oddn", "odds", "pow", "pr", "rand")
ASYMMETRIC = ("acc", "f1", "oddn", "odds", "pow", "pr")

# tp, fp, pos, neg | bns, ig, chi, odds, f1, pow — docs/algorithms.md §2's reference values, verbatim.
REFERENCE_TABLE = [
    ((50, 5, 100, 900), (2.53918, 0.162616, 423.334, 179, 0.645161, 0.941279)),
    ((10, 10, 100, 900), (1.00500, 0.0152760, 36.2812, 9.88889, 0.166667, 0.355175)),
    ((0, 30, 100, 900), (1.45661, 0.00463379, 3.43643, 3.44828, 0.186916, 4.11523e-08)),
    ((100, 0, 100, 900), (6.58105, 0.468996, 1000, 90000, 1, 1)),
    ((1, 0, 20, 980), (1.64567, 0.00567982, 49.0490, 51.5789, 0.0952381, 0.226219)),
    ((300, 200, 500, 500), (0.506694, 0.0290494, 40, 2.25, 0.6, 0.06752)),
    ((7, 93, 40, 960), (0.364976, 0.00158481, 2.60417, 1.97752, 0.1, 0.218631)),
]
TABLE_COLUMNS = ("bns", "ig", "chi", "odds", "f1", "pow")


@pytest.fixture(scope="module")
def metrics():
    registry = load_plugins()
    return {name: registered.value for name, registered in registry.metrics.items()}


def score(metric, tp, fp, pos, neg, **kwargs) -> float:
    return float(metric_scores(metric, tp, fp, pos, neg, **kwargs))


def test_all_twelve_metrics_are_registered(metrics):
    assert set(TWELVE) <= set(metrics)


def test_exactly_the_asymmetric_metrics_invert_negative_features(metrics):
    inverting = {name for name in TWELVE if metrics[name].invert_negative}
    assert inverting == set(ASYMMETRIC)


@pytest.mark.parametrize("column", TABLE_COLUMNS)
@pytest.mark.parametrize(("counts", "expected"), REFERENCE_TABLE, ids=[str(c) for c, _ in REFERENCE_TABLE])
def test_metric_reproduces_reference_table(metrics, column, counts, expected):
    assert score(metrics[column], *counts) == pytest.approx(expected[TABLE_COLUMNS.index(column)], rel=1e-5)


@pytest.mark.parametrize("column", TABLE_COLUMNS)
def test_metric_is_vectorized_over_all_table_rows_at_once(metrics, column):
    tp, fp, pos, neg = (np.array(c, dtype=float) for c in zip(*(counts for counts, _ in REFERENCE_TABLE)))
    expected = [row[TABLE_COLUMNS.index(column)] for _, row in REFERENCE_TABLE]
    np.testing.assert_allclose(metric_scores(metrics[column], tp, fp, pos, neg), expected, rtol=1e-5)


# Hand computations from the formulas (docs/algorithms.md §2), for the metrics the table leaves out.
# Each case: (tp, fp, pos, neg) and the expected acc, acc2, dfreq, oddn, pr.
HAND = [
    # positive feature: tpr = 0.5, fpr = 5/900
    (
        (50, 5, 100, 900),
        {"acc": 50 - 5, "acc2": 0.5 - 5 / 900, "dfreq": 55, "oddn": 0.5 * (1 - 5 / 900), "pr": 0.5 / (5 / 900)},
    ),
    # fp = 0: pr's fpr becomes 1e-8; tpr = 1/20
    ((1, 0, 20, 980), {"acc": 1, "acc2": 1 / 20, "dfreq": 1, "oddn": 1 / 20, "pr": (1 / 20) / 1e-8}),
    # negative feature (tpr 0 < fpr 30/900): the asymmetric ones see tp' = 100, fp' = 870
    (
        (0, 30, 100, 900),
        {"acc": 100 - 870, "acc2": 30 / 900, "dfreq": 30, "oddn": 1.0 * (1 - 870 / 900), "pr": 1.0 / (870 / 900)},
    ),
    # balanced classes, tpr 0.6 > fpr 0.4
    ((300, 200, 500, 500), {"acc": 100, "acc2": 0.2, "dfreq": 500, "oddn": 0.6 * 0.6, "pr": 1.5}),
    # positive although acc is negative: tpr 7/40 = 0.175 > fpr 93/960 ≈ 0.097, so no inversion
    (
        (7, 93, 40, 960),
        {
            "acc": 7 - 93,
            "acc2": 7 / 40 - 93 / 960,
            "dfreq": 100,
            "oddn": (7 / 40) * (1 - 93 / 960),
            "pr": (7 / 40) / (93 / 960),
        },
    ),
    # negative: tpr 2/40 = 0.05 < fpr 93/960; acc2 is |tpr − fpr| without inversion,
    # the asymmetric ones see tp' = 38, fp' = 867
    (
        (2, 93, 40, 960),
        {
            "acc": 38 - 867,
            "acc2": 93 / 960 - 2 / 40,
            "dfreq": 95,
            "oddn": (38 / 40) * (1 - 867 / 960),
            "pr": (38 / 40) / (867 / 960),
        },
    ),
]


@pytest.mark.parametrize("name", ["acc", "acc2", "dfreq", "oddn", "pr"])
@pytest.mark.parametrize(("counts", "expected"), HAND, ids=[str(c) for c, _ in HAND])
def test_metric_matches_hand_computed_value(metrics, name, counts, expected):
    assert score(metrics[name], *counts) == pytest.approx(expected[name], rel=1e-12)


def test_bns_clips_rates_to_half_a_per_mille(metrics):
    # tpr = 1 → 0.9995, fpr = 0 → 0.0005: |F⁻¹(0.9995) − F⁻¹(0.0005)| = 2·3.29053
    assert score(metrics["bns"], 20, 0, 20, 980) == pytest.approx(2 * norm.ppf(0.9995), rel=1e-12)
    # tpr = 0.3, fpr = 0.1: no clipping
    assert score(metrics["bns"], 3, 10, 10, 100) == pytest.approx(norm.ppf(0.3) - norm.ppf(0.1), rel=1e-12)


def test_odds_replaces_a_zero_count_in_the_denominator_only(metrics):
    # fp = 0: numerator tpr·(1 − 0) = 0.3; denominator (7/10)·(1/100)
    assert score(metrics["odds"], 3, 0, 10, 100) == pytest.approx(0.3 / (0.7 * 0.01), rel=1e-12)
    # fn = 0: numerator 1·(1 − 0.1); denominator (1/10)·0.1
    assert score(metrics["odds"], 10, 10, 10, 100) == pytest.approx(0.9 / (0.1 * 0.1), rel=1e-12)


@pytest.mark.parametrize("name", ASYMMETRIC)
@pytest.mark.parametrize("counts", [(0, 30, 100, 900), (2, 93, 40, 960), (1, 9, 10, 10)])
def test_asymmetric_metric_scores_a_negative_feature_as_its_inversion(metrics, name, counts):
    tp, fp, pos, neg = counts
    assert tp / pos < fp / neg
    inverted = score(metrics[name], pos - tp, neg - fp, pos, neg)
    assert score(metrics[name], *counts) == inverted
    # and the inversion changes the result: without it the score would differ
    assert metrics[name].function(*(np.float64(c) for c in counts)) != pytest.approx(inverted)


@pytest.mark.parametrize("name", ["bns", "chi", "ig", "acc2"])
def test_symmetric_metric_gives_complement_feature_the_same_score(metrics, name):
    # naturally symmetric: (tp, fp) and (pos − tp, neg − fp) score alike, no inversion needed
    assert score(metrics[name], 2, 93, 40, 960) == pytest.approx(score(metrics[name], 38, 867, 40, 960), rel=1e-12)


def test_bns_alpha_weights_positive_and_negative_features(metrics):
    bns = metrics["bns"]
    positive, negative = score(bns, 50, 5, 100, 900), score(bns, 0, 30, 100, 900)
    assert score(bns, 50, 5, 100, 900, alpha=0.8) == pytest.approx(0.8 * positive, rel=1e-12)
    assert score(bns, 0, 30, 100, 900, alpha=0.8) == pytest.approx(0.2 * negative, rel=1e-12)


def test_rand_is_deterministic_and_differs_between_features(metrics):
    tp = np.arange(50.0)
    first = metric_scores(metrics["rand"], tp, tp, 100, 100)
    second = metric_scores(metrics["rand"], tp, tp, 100, 100)
    np.testing.assert_array_equal(first, second)
    assert first.shape == (50,)
    assert np.all((first >= 0) & (first < 1))
    assert len(np.unique(first)) == 50


def test_undefined_score_is_zero_not_nan(metrics):
    # no positive rows where the feature is present: tpr = 0/0
    for name in TWELVE:
        assert np.isfinite(score(metrics[name], 0, 3, 0, 10))
    assert score(metrics["acc2"], 0, 3, 0, 10) == 0.0


# --- feature_scores: presence and best threshold from value histograms ------------------------


def counts_of(values, labels, n_classes=2) -> ValueCounts:
    """Statistics of a dense (rows × features) matrix with class codes ``labels``."""
    matrix = np.column_stack([np.asarray(values, dtype=float), np.asarray(labels, dtype=float)])
    features = np.arange(matrix.shape[1] - 1)
    return ValueCounts.of_chunk(Chunk(matrix), features, matrix.shape[1] - 1, n_classes)


def brute_force_best(values, labels, positive, metric) -> float:
    """Best score over every cut between consecutive distinct values, one cut at a time."""
    values, labels = np.asarray(values, dtype=float), np.asarray(labels)
    known = ~np.isnan(values)
    values, labels = values[known], labels[known]
    pos, neg = np.sum(labels == positive), np.sum(labels != positive)
    distinct = np.unique(values)
    best = -math.inf
    for cut in distinct[:-1]:
        has = values > cut
        best = max(
            best, score(metric, np.sum(has & (labels == positive)), np.sum(has & (labels != positive)), pos, neg)
        )
    return best if distinct.size > 1 else 0.0


def test_presence_counts_nonzero_values_and_skips_missing(metrics):
    # feature 0: nonzero in rows 0,1 (positive) and 3 (negative); feature 1 is missing in row 0
    values = [[1, np.nan], [2, 0], [0, 5], [-1, 0], [0, 3]]
    labels = [1, 1, 1, 0, 0]
    scores = feature_scores(counts_of(values, labels), metrics["acc2"], [1], presence=True)
    # feature 0: tpr 2/3, fpr 1/2; feature 1 (row 0 left out): pos 2 → tpr 1/2, fpr 1/2
    np.testing.assert_allclose(scores, [2 / 3 - 1 / 2, 0.0], rtol=0, atol=1e-15)


def test_best_threshold_picks_the_best_cut(metrics):
    # values by class (p = 1): -1 n, 0 p, 0 n, 0 n, 2 p, 4 p
    # cuts: >-1: tpr 1, fpr 2/3 → 1/3; >0: tpr 2/3, fpr 0 → 2/3; >2: tpr 1/3 → 1/3.  Best 2/3.
    values = [[4], [2], [0], [0], [-1], [0]]
    labels = [1, 1, 1, 0, 0, 0]
    scores = feature_scores(counts_of(values, labels), metrics["acc2"], [1], presence=False)
    assert scores[0] == pytest.approx(2 / 3, rel=1e-12)


@pytest.mark.parametrize("name", ["bns", "ig", "chi", "odds", "pow", "f1"])
def test_best_threshold_equals_brute_force_search(metrics, name):
    rng = np.random.default_rng(7)
    labels = rng.integers(0, 2, 80)
    values = np.column_stack(
        [
            rng.integers(0, 6, 80) + labels,  # integer counts, many ties
            rng.normal(labels, 1.0),  # continuous
            np.where(rng.random(80) < 0.2, np.nan, rng.integers(0, 3, 80)),  # with missing values
            np.full(80, 3.0),  # constant: no cut, scores 0
        ]
    )
    scores = feature_scores(counts_of(values, labels), metrics[name], [1], presence=False)
    expected = [brute_force_best(values[:, j], labels, 1, metrics[name]) for j in range(values.shape[1])]
    np.testing.assert_allclose(scores, expected, rtol=1e-12)
    assert scores[3] == 0.0


def test_one_vs_rest_combines_per_class_scores_by_max_or_mean(metrics):
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 3, 60)
    values = np.column_stack([labels * rng.random(60), rng.integers(0, 2, 60), (labels == 2).astype(float)])
    counts = counts_of(values, labels, n_classes=3)
    per_class = np.vstack([feature_scores(counts, metrics["ig"], [c], presence=True) for c in range(3)])
    np.testing.assert_array_equal(feature_scores(counts, metrics["ig"], [0, 1, 2], True, "max"), per_class.max(axis=0))
    np.testing.assert_allclose(
        feature_scores(counts, metrics["ig"], [0, 1, 2], True, "mean"), per_class.mean(axis=0), rtol=1e-15
    )


def test_a_vocabulary_metric_gets_each_target_s_sums_over_every_feature_merged_exactly():
    # weights 0.1 and 0.2 make the sums inexact in floating point if added in another order than exactly
    seen = []

    def record(tp, fp, pos, neg, *, vocabulary):
        seen.append(vocabulary)
        return tp * 0.0

    metric = Metric("vocab", record, uses_vocabulary=True)
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 3, 40)
    values = rng.integers(0, 3, (40, 4)) * (rng.random((40, 4)) < 0.5)
    weights = rng.choice([0.1, 0.2, 0.7], 40)
    matrix = np.column_stack([values, labels]).astype(float)
    whole = ValueCounts.of_chunk(Chunk(matrix, weights=weights), np.arange(4), 4, 3)
    parts = [ValueCounts.of_chunk(Chunk(matrix[i::3], weights=weights[i::3]), np.arange(4), 4, 3) for i in range(3)]
    merged = parts[2].merge(parts[0]).merge(parts[1])
    for counts in (whole, merged):
        feature_scores(counts, metric, [0, 1, 2], presence=True, combine="mean")
    assert seen[:3] == seen[3:]  # the same bits from one chunk as from three merged in another order
    held = (values != 0) * weights[:, None]
    for target, vocabulary in enumerate(seen[:3]):
        assert vocabulary.size == 4
        assert vocabulary.tp == pytest.approx(math.fsum(held[labels == target].ravel()), rel=1e-15)
        assert vocabulary.fp == pytest.approx(math.fsum(held[labels != target].ravel()), rel=1e-15)


# --- the positive class and the target classes ------------------------------------------------


def test_positive_class_defaults_to_the_minority():
    two = Attribute("class", "nominal", labels=("good", "bad"))
    assert positive_code(two, np.array([700.0, 300.0]), None) == 1
    assert positive_code(two, np.array([300.0, 700.0]), None) == 0


def test_positive_class_tie_is_the_second_declared_label():
    two = Attribute("class", "nominal", labels=("a", "b"))
    assert positive_code(two, np.array([5.0, 5.0]), None) == 1


def test_positive_option_names_the_label_and_rejects_unknown_ones():
    two = Attribute("class", "nominal", labels=("good", "bad"))
    assert positive_code(two, np.array([300.0, 700.0]), "bad") == 1
    with pytest.raises(FilterkitError, match="'worse' is not a label"):
        positive_code(two, np.array([1.0, 1.0]), "worse")


def test_multiclass_targets_every_class_with_rows_unless_positive_given():
    three = Attribute("class", "nominal", labels=("a", "b", "c"))
    assert target_classes(three, np.array([4.0, 0.0, 2.0]), None) == [0, 2]
    assert target_classes(three, np.array([4.0, 0.0, 2.0]), "c") == [2]
    with pytest.raises(FilterkitError, match="--positive"):
        positive_code(three, np.array([4.0, 1.0, 2.0]), None)


# --- agreement with Weka 3.6 on real text ----------------------------------------------------


def weka_grain_scores() -> dict[str, dict[str, float]]:
    with open(REAL / "weka_scores_grain_wc.tsv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    return {row["name"]: {"ig": float(row["ig_binarized"]), "chi": float(row["chi2_binarized"])} for row in rows}


@pytest.mark.slow
@pytest.mark.parametrize("name", ["ig", "chi"])
def test_presence_score_equals_weka_on_every_grain_word(name):
    """Weka's `_binarized` columns (attribute evaluators with -B) against `NAME --presence --no-scale`."""
    registry = load_plugins()
    stage = registry.make_stage(name, {"presence": True, "scale": False})
    Chain([stage], class_spec="first", positive="1").fit(FileSource(str(REAL / "grain_wc.arff")))
    ours = stage.feature_scores()
    weka = weka_grain_scores()
    assert len(weka) == 13027
    assert set(ours) == set(weka)
    names = sorted(weka)
    mine = np.array([ours[n] for n in names])
    theirs = np.array([weka[n][name] for n in names])
    tolerance = np.maximum(1e-12, 1e-9 * np.abs(theirs))
    off = np.flatnonzero(np.abs(mine - theirs) > tolerance)
    assert off.size == 0, [(names[i], mine[i], theirs[i]) for i in off[:5]]
    assert np.count_nonzero(theirs) > 13000  # a real comparison, not zeros against zeros


def test_rand_is_scored_once_per_feature_not_per_cut(metrics):
    # A feature with many distinct values has many cuts; the best of many random
    # draws would favour it. rand ignores the counts, so threshold mode scores it
    # exactly as presence mode does: one draw per feature.
    values = np.array([[0, 1], [1, 1], [2, 1], [3, 0], [4, 0], [5, 1], [6, 0], [7, 0]], dtype=float)
    labels = np.array([1, 0, 1, 0, 1, 0, 1, 0], dtype=float)
    counts = counts_of(values, labels)
    by_threshold = feature_scores(counts, metrics["rand"], [1], presence=False)
    by_presence = feature_scores(counts, metrics["rand"], [1], presence=True)
    np.testing.assert_array_equal(by_threshold, by_presence)


WEIGHTS = [0.3, 0.3, 0.7, 0.3, 0.1, 0.7]


def weighted_counts_of(values, labels, weights) -> ValueCounts:
    """Statistics of a dense (rows × features) matrix with class codes ``labels`` and instance ``weights``."""
    matrix = np.column_stack([np.asarray(values, dtype=float), np.asarray(labels, dtype=float)])
    features = np.arange(matrix.shape[1] - 1)
    chunk = Chunk(matrix, weights=np.asarray(weights, dtype=float))
    return ValueCounts.of_chunk(chunk, features, matrix.shape[1] - 1, 2)


@pytest.mark.parametrize("name", ["pr", "odds", "bns", "ig", "acc2"])
def test_a_feature_s_best_cut_is_summed_from_its_own_weights_alone(metrics, name):
    """Fractional weights: no negative after b's cuts is fp 0 exactly (pr and odds test fp == 0: the rounding of a
    running total over every feature gave 1.6e15 for 3e7), and a weight of 1e17 on another feature's row leaves b's
    sums as they are."""
    b, labels = [0, 0, 0, 1, 2, 2], [0, 0, 1, 1, 1, 1]
    alone = feature_scores(weighted_counts_of(np.column_stack([b]), labels, WEIGHTS), metrics[name], [1], False)
    if name == "pr":  # fp 0 at both cuts (its rate then 1e-8): the larger tp wins, each value's weights summed exactly
        pos, neg = math.fsum([0.7, 0.3, 0.1, 0.7]), math.fsum([0.3, 0.3])
        assert alone[0] == metric_scores(metrics[name], 0.3 + math.fsum([0.1, 0.7]), 0.0, pos, neg)
    for other in ([0, 0, 2, 1, 0, 0], [0, 5, 0, 0, 0, 0]):
        for weights in (WEIGHTS, [0.3, 1e17, *WEIGHTS[2:]]):
            counts = weighted_counts_of(np.column_stack([other, b]), labels, weights)
            only_b = weighted_counts_of(np.column_stack([b]), labels, weights)
            assert (
                feature_scores(counts, metrics[name], [1], False)[1]
                == feature_scores(only_b, metrics[name], [1], False)[0]
            )


def test_rand_gives_a_nominal_feature_its_own_draw_not_the_best_of_one_per_value(metrics):
    """rand on a nominal feature was the largest of one draw per label, the first labels' draws shared by
    several features (credit-g: three features of 0.935072)."""
    values = np.array([[0, 1.5, 2], [1, 0, 0], [2, 3, 1], [0, 1, 2]], dtype=float)
    counts = counts_of(values, [1, 0, 1, 0])
    scores = feature_scores(counts, metrics["rand"], [1], presence=False, labels=np.array([3, 0, 3]))
    np.testing.assert_array_equal(scores, metric_scores(metrics["rand"], np.zeros(3), np.zeros(3), 2, 2))
    assert len(set(scores.tolist())) == 3
