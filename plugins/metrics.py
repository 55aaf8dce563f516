"""The twelve feature-selection metrics of Forman, JMLR 2003 (Table 1), and five term weights
(idf, rf, nbr, didf, igm: the s of tf·s under a scorer's ``--multiply``), each a vectorized function
of the 2×2 counts as docs/algorithms.md §2 and §2.1 restate them.  ig, chi and igm also have a
k-class form over a values × classes table (``--combine joint``), ig's and chi's summed in the order
of Weka 3.6's ``ContingencyTables`` so the scores are Weka's to the bit.
"""

from __future__ import annotations

import numpy as np

from filterkit.kernels import ndtri
from filterkit.plugin import Metric, Option, hookimpl

BNS_RATE_LIMIT = 0.0005
POW_EXPONENT = 5
PR_ZERO_FPR = 1e-8
RAND_SEED = 0
#: Weka's ``Utils.SMALL``: the weight below which its contingency tables treat a sum as zero.
WEKA_SMALL = 1e-6


def accuracy(tp, fp, pos, neg):
    """acc: tp − fp."""
    return tp - fp


def balanced_accuracy(tp, fp, pos, neg):
    """acc2: |tpr − fpr|."""
    return np.abs(tp / pos - fp / neg)


def bi_normal_separation(tp, fp, pos, neg, bns_half_document=False):
    """bns: |F⁻¹(tpr) − F⁻¹(fpr)|, rates clipped to [0.0005, 0.9995] (JMLR 2003 §2.1); with
    ``bns_half_document`` each rate clipped at half a document of its class, max(0.0005, 0.5/n), and a
    word no document holds scored 0 (docs/algorithms.md §2; docs/RESULTS.md §9)."""
    tpr_limit, fpr_limit = BNS_RATE_LIMIT, BNS_RATE_LIMIT
    if bns_half_document:
        tpr_limit, fpr_limit = np.maximum(BNS_RATE_LIMIT, 0.5 / pos), np.maximum(BNS_RATE_LIMIT, 0.5 / neg)
    tpr = np.clip(tp / pos, tpr_limit, 1 - tpr_limit)
    fpr = np.clip(fp / neg, fpr_limit, 1 - fpr_limit)
    scores = np.abs(_inverse_normal(tpr) - _inverse_normal(fpr))
    return np.where(tp + fp > 0, scores, 0.0) if bns_half_document else scores


def _inverse_normal(probabilities):
    """scipy.special.ndtri of each probability, bit for bit, by the compiled kernel: importing
    scipy.special took 0.16 s of a run that scores with bns."""
    probabilities = np.asarray(probabilities, dtype=np.float64)
    quantiles = np.empty(probabilities.size)
    ndtri(np.ascontiguousarray(probabilities.reshape(-1)), quantiles)
    return quantiles.reshape(probabilities.shape)[()]  # of a scalar a scalar, as the ufunc's


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


def information_gain_of_tables(tables):
    """ig over all classes at once: H(C) − H(C | value) in bits of each contingency table
    (features × values × classes), summed in the order of Weka 3.6's
    ``ContingencyTables.entropyOverColumns`` and ``entropyConditionedOnRows``."""
    n, n_values, _ = tables.shape
    row_totals, column_totals, _ = _margins(tables)
    over_columns = 0.0 - _sum_in_order(_x_ln_x(column_totals))  # (0 − t₀) − t₁ … is −(t₀ + t₁ …) to the bit
    total = _sum_in_order(column_totals)
    row_terms = np.concatenate([_x_ln_x(tables), -_x_ln_x(row_totals)[:, :, None]], axis=2)
    on_rows = _sum_in_order(row_terms.reshape(n, -1))
    row_grand_total = _sum_in_order(row_totals)
    with np.errstate(divide="ignore", invalid="ignore"):
        class_entropy = np.where(
            np.abs(total) < WEKA_SMALL, 0.0, (over_columns + _x_ln_x(total)) / (total * np.log(2.0))
        )
        conditioned = np.where(np.abs(row_grand_total) < WEKA_SMALL, 0.0, -on_rows / (row_grand_total * np.log(2.0)))
    return class_entropy - conditioned


def chi_squared_of_tables(tables):
    """chi over all classes at once: Pearson's χ² of each contingency table (features ×
    values × classes) without Yates' correction, its empty rows and columns (weight ≤ 1e-6)
    left out, summed in the order of Weka 3.6's ``ContingencyTables.chiVal``."""
    n = len(tables)
    row_totals, column_totals, _ = _margins(tables)
    kept_rows, kept_columns = row_totals > WEKA_SMALL, column_totals > WEKA_SMALL
    kept_cells = kept_rows[:, :, None] & kept_columns[:, None, :]
    kept = tables * kept_cells
    row_totals, column_totals, grand_total = _margins(kept)
    safe_grand_total = np.where(grand_total > 0, grand_total, 1.0)
    expected = column_totals[:, None, :] * row_totals[:, :, None] / safe_grand_total[:, None, None]
    counted = kept_cells & (expected >= WEKA_SMALL)
    safe_expected = np.where(counted, expected, 1.0)
    difference = np.abs(kept - expected)
    return _sum_in_order(np.where(counted, difference * difference / safe_expected, 0.0).reshape(n, -1))


def _margins(tables):
    """Each table's row totals, column totals and grand total, summed cell by cell in Weka's order."""
    n = len(tables)
    return (
        _sum_in_order(tables),
        _sum_in_order(tables.transpose(0, 2, 1)),
        _sum_in_order(tables.reshape(n, -1)),
    )


def _sum_in_order(terms):
    """The sums along the last axis, each term added in turn from the first, as Weka's loops add them
    (``cumsum`` adds one after another; ``sum`` would add pairwise)."""
    if terms.shape[-1] == 0:
        return np.zeros(terms.shape[:-1])
    return np.cumsum(terms, axis=-1)[..., -1]


def _x_ln_x(x):
    """x · ln x, 0 for x ≤ 0 (Weka's ``ContingencyTables.lnFunc``)."""
    safe = np.where(x > 0, x, 1.0)
    return np.where(x > 0, x * np.log(safe), 0.0)


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


def inverse_document_frequency(tp, fp, pos, neg, smooth=False):
    """idf: ln(N / df), N = pos + neg, df = tp + fp; 0 where df = 0 (IIR §6.2.1); smooth: scikit-learn's
    ``TfidfTransformer`` default, ln((1 + N) / (1 + df)) + 1 (as if one more document held every term)."""
    df = tp + fp
    if smooth:
        return np.log((1.0 + pos + neg) / (1.0 + df)) + 1.0
    return np.where(df > 0, np.log((pos + neg) / np.where(df > 0, df, 1.0)), 0.0)


def relevance_frequency(tp, fp, pos, neg):
    """rf: log2(2 + tp / max(1, fp)) (Lan, Tan, Su & Lu, IEEE TPAMI 31(4), 2009)."""
    return np.log2(2.0 + tp / np.maximum(1.0, fp))


def nb_log_count_ratio(tp, fp, pos, neg, alpha=1.0, *, vocabulary):
    """nbr: Wang & Manning's r = ln((p/‖p‖₁) / (q/‖q‖₁)) on binarized counts (ACL 2012, §2): p = α + tp,
    q = α + fp, and the norms over the whole vocabulary V, ‖p‖₁ = α·|V| + Σ_V tp, ‖q‖₁ = α·|V| + Σ_V fp."""
    p_norm = alpha * vocabulary.size + vocabulary.tp
    q_norm = alpha * vocabulary.size + vocabulary.fp
    return np.log(((alpha + tp) / p_norm) / ((alpha + fp) / q_norm))


def delta_idf(tp, fp, pos, neg, smooth=False):
    """didf: log2(|P|·N_t / (|N|·P_t)) (Martineau & Finin, ICWSM 2009), 0 where tp or fp is 0;
    smooth: log2((|P|·N_t + 0.5) / (|N|·P_t + 0.5)) (Paltoglou & Thelwall, ACL 2010)."""
    if smooth:
        return np.log2((pos * fp + 0.5) / (neg * tp + 0.5))
    defined = (tp > 0) & (fp > 0)
    return np.where(defined, np.log2(np.where(defined, pos * fp / (neg * tp), 1.0)), 0.0)


def inverse_gravity_moment(tp, fp, pos, neg, coefficient=7.0):
    """igm: 1 + λ·f₁ / Σᵣ fᵣ·r over the class document frequencies (tp, fp) sorted decreasing
    (Chen, Zhang, Long & Zhang, ESWA 66, 2016); 1 for a term in no document."""
    return _gravity_weight(np.stack([tp, fp], axis=-1), coefficient)


def inverse_gravity_moment_of_tables(tables, coefficient=7.0):
    """igm over all classes at once: the class frequencies of every value row but the first (the
    zero, the lowest interval or the first label: where the term is absent)."""
    return _gravity_weight(tables[:, 1:, :].sum(axis=1), coefficient)


def _gravity_weight(frequencies, coefficient):
    """1 + λ·igm of class frequencies (the last axis); igm 0 where every frequency is 0."""
    ranked = -np.sort(-frequencies, axis=-1)
    moment = (ranked * np.arange(1, ranked.shape[-1] + 1)).sum(axis=-1)
    igm = ranked[..., 0] / np.where(moment > 0, moment, 1.0)
    return 1.0 + coefficient * igm


METRICS = (
    Metric("acc", accuracy, "Accuracy: tp − fp.", invert_negative=True),
    Metric("acc2", balanced_accuracy, "Balanced accuracy: |tpr − fpr|."),
    Metric(
        "bns",
        bi_normal_separation,
        "Bi-Normal Separation: |F⁻¹(tpr) − F⁻¹(fpr)|.",
        options=(
            Option(
                "bns_half_document",
                bool,
                False,
                "Clip each rate at half a document of its class, not at 0.0005 (small training sets).",
            ),
        ),
    ),
    Metric(
        "chi",
        chi_squared,
        "Chi-squared of the 2×2 table (no Yates); joint: of the values × classes table, as Weka.",
        joint=chi_squared_of_tables,
    ),
    Metric("dfreq", document_frequency, "Document frequency: tp + fp.", class_free=True),
    Metric("f1", f1_measure, "F1 of predicting the class by the feature.", invert_negative=True),
    Metric(
        "ig",
        information_gain,
        "Information gain (bits); joint: H(C) − H(C | A) over all classes, as Weka.",
        joint=information_gain_of_tables,
    ),
    Metric("oddn", odds_ratio_numerator, "Odds-ratio numerator: tpr·(1 − fpr).", invert_negative=True),
    Metric("odds", odds_ratio, "Odds ratio.", invert_negative=True),
    Metric("pow", power, "Power: (1 − fpr)^5 − (1 − tpr)^5.", invert_negative=True),
    Metric("pr", probability_ratio, "Probability ratio: tpr / fpr.", invert_negative=True),
    Metric("rand", random_score, "A seeded random score (baseline).", uses_counts=False, class_free=True),
    Metric(
        "idf",
        inverse_document_frequency,
        "Inverse document frequency: ln(N / df).",
        class_free=True,
        options=(
            Option(
                "smooth",
                bool,
                False,
                "scikit-learn's smoothed idf, ln((1 + N) / (1 + df)) + 1 (with --presence: df the documents "
                "holding the feature).",
            ),
        ),
    ),
    Metric("rf", relevance_frequency, "Relevance frequency (Lan et al. 2009): log2(2 + tp / max(1, fp))."),
    Metric(
        "nbr",
        nb_log_count_ratio,
        "NB log-count ratio (Wang & Manning 2012): ln((p/‖p‖₁) / (q/‖q‖₁)), p = α + tp, q = α + fp, the norms "
        "over every scored feature.",
        options=(Option("nb_alpha", float, 1.0, "nbr's smoothing α, added to tp and fp.", minimum=0.001),),
        uses_vocabulary=True,
    ),
    Metric(
        "didf",
        delta_idf,
        "Delta idf (Martineau & Finin 2009): log2(pos·fp / (neg·tp)), > 0 for terms of the negative class.",
        options=(Option("smooth", bool, False, "Paltoglou & Thelwall's smoothed didf: add 0.5 to both products."),),
    ),
    Metric(
        "igm",
        inverse_gravity_moment,
        "TF-IGM's 1 + λ·igm (Chen et al. 2016); joint: over all classes at once.",
        joint=inverse_gravity_moment_of_tables,
        options=(Option("igm_lambda", float, 7.0, "igm's coefficient λ: the weight is 1 + λ·igm.", minimum=0.0),),
    ),
)


@hookimpl
def register_metrics(register):
    """The twelve metrics of JMLR 2003 and the five term weights."""
    for metric in METRICS:
        register(metric)
