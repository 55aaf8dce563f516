"""The twelve feature-selection metrics of Forman, JMLR 2003 (Table 1).

Each is a vectorized function of the 2×2 counts, as restated exactly in the
project's algorithm reference (docs/algorithms.md §2).  The
asymmetric ones (acc, f1, oddn, odds, pow, pr) invert a negatively correlated
feature first, so every metric rewards it too.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtri

from filterkit.hookspecs import hookimpl
from filterkit.metrics import Metric

BNS_RATE_LIMIT = 0.0005
POW_EXPONENT = 5
PR_ZERO_FPR = 1e-8
RAND_SEED = 0


def accuracy(tp, fp, pos, neg):
    """acc: tp − fp."""
    return tp - fp


def balanced_accuracy(tp, fp, pos, neg):
    """acc2: |tpr − fpr|."""
    return np.abs(tp / pos - fp / neg)


def bi_normal_separation(tp, fp, pos, neg):
    """bns: |F⁻¹(tpr) − F⁻¹(fpr)|, rates clipped to [0.0005, 0.9995] (JMLR 2003 §2.1)."""
    tpr = np.clip(tp / pos, BNS_RATE_LIMIT, 1 - BNS_RATE_LIMIT)
    fpr = np.clip(fp / neg, BNS_RATE_LIMIT, 1 - BNS_RATE_LIMIT)
    return np.abs(ndtri(tpr) - ndtri(fpr))


def chi_squared(tp, fp, pos, neg):
    """chi: Pearson's χ² of the 2×2 table, without Yates' correction."""
    total = pos + neg
    p_pos, p_neg = pos / total, neg / total
    fn, tn = pos - tp, neg - fp
    return (
        _chi_term(tp, (tp + fp) * p_pos)
        + _chi_term(fn, (fn + tn) * p_pos)
        + _chi_term(fp, (tp + fp) * p_neg)
        + _chi_term(tn, (fn + tn) * p_neg)
    )


def _chi_term(count, expected):
    safe = np.where(expected > 0, expected, 1.0)
    return np.where(expected > 0, (count - expected) ** 2 / safe, 0.0)


def document_frequency(tp, fp, pos, neg):
    """dfreq: tp + fp (needs no labels)."""
    return tp + fp


def f1_measure(tp, fp, pos, neg):
    """f1: 2·tp / (pos + tp + fp)."""
    return 2 * tp / (pos + tp + fp)


def information_gain(tp, fp, pos, neg):
    """ig: e(pos, neg) − [P(word)·e(tp, fp) + P(¬word)·e(fn, tn)], in bits."""
    total = pos + neg
    fn, tn = pos - tp, neg - fp
    p_word = (tp + fp) / total
    return _entropy(pos, neg) - (p_word * _entropy(tp, fp) + (1 - p_word) * _entropy(fn, tn))


def _entropy(x, y):
    total = x + y
    safe = np.where(total > 0, total, 1.0)
    return _plogp(x / safe) + _plogp(y / safe)


def _plogp(p):
    safe = np.where(p > 0, p, 1.0)
    return np.where(p > 0, -p * np.log2(safe), 0.0)


def odds_ratio_numerator(tp, fp, pos, neg):
    """oddn: tpr · (1 − fpr)."""
    return tp / pos * (1 - fp / neg)


def odds_ratio(tp, fp, pos, neg):
    """odds: tpr(1 − fpr) / ((1 − tpr)·fpr); a zero fn or fp is replaced by 1 in the denominator only."""
    fn = pos - tp
    denominator = (np.where(fn == 0, 1.0, fn) / pos) * (np.where(fp == 0, 1.0, fp) / neg)
    return tp / pos * (1 - fp / neg) / denominator


def power(tp, fp, pos, neg):
    """pow: (1 − fpr)^k − (1 − tpr)^k with k = 5."""
    return (1 - fp / neg) ** POW_EXPONENT - (1 - tp / pos) ** POW_EXPONENT


def probability_ratio(tp, fp, pos, neg):
    """pr: tpr / fpr, with fpr = 0 replaced by 1e-8."""
    fpr = fp / neg
    return tp / pos / np.where(fpr == 0, PR_ZERO_FPR, fpr)


def random_score(tp, fp, pos, neg):
    """rand: a seeded random number per feature (the baseline)."""
    return np.random.default_rng(RAND_SEED).random(np.shape(tp))


METRICS = (
    Metric("acc", accuracy, "Accuracy: tp − fp.", invert_negative=True),
    Metric("acc2", balanced_accuracy, "Balanced accuracy: |tpr − fpr|."),
    Metric("bns", bi_normal_separation, "Bi-Normal Separation: |F⁻¹(tpr) − F⁻¹(fpr)|."),
    Metric("chi", chi_squared, "Chi-squared of the 2×2 table (no Yates)."),
    Metric("dfreq", document_frequency, "Document frequency: tp + fp."),
    Metric("f1", f1_measure, "F1 of predicting the class by the feature.", invert_negative=True),
    Metric("ig", information_gain, "Information gain (bits)."),
    Metric("oddn", odds_ratio_numerator, "Odds-ratio numerator: tpr·(1 − fpr).", invert_negative=True),
    Metric("odds", odds_ratio, "Odds ratio.", invert_negative=True),
    Metric("pow", power, "Power: (1 − fpr)^5 − (1 − tpr)^5.", invert_negative=True),
    Metric("pr", probability_ratio, "Probability ratio: tpr / fpr.", invert_negative=True),
    Metric("rand", random_score, "A seeded random score (baseline).", uses_counts=False),
)


@hookimpl
def register_metrics(register):
    """The twelve metrics of JMLR 2003."""
    for metric in METRICS:
        register(metric)
