"""BNS variants that isolate the small-training-set collapse (issue 40 item 6; docs/RESULTS.md §9).

Load with ``filterkit --plugins-dir docs/experiments/bns_clips``; each metric gets its scorer stage, so
``binarize bnsh l2`` is ``binarize bns l2`` with one thing changed:

* ``bnsh``: rates clipped at half a document of their own class, [0.5/n, 1 − 0.5/n] with n = pos for the
  true-positive rate and neg for the false-positive one, instead of
  at 0.0005 (a word in no training document still scores 0).
* ``bnsht`` / ``bnshf``: only the true-positive rate / only the false-positive rate clipped so.
* ``bnsc``: rates clipped at 0.05 instead of 0.0005.
* ``bnscap``: the weight of a word held by one or two positive documents capped at 1.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtri

from filterkit.hookspecs import hookimpl
from filterkit.metrics import Metric


def _bns(tpr, fpr):
    return np.abs(ndtri(tpr) - ndtri(fpr))


def bns_half_count(tp, fp, pos, neg):
    """BNS with each rate clipped at half a document of its class; 0 for a word never seen."""
    tpr = np.clip(tp / pos, 0.5 / pos, 1 - 0.5 / pos)
    fpr = np.clip(fp / neg, 0.5 / neg, 1 - 0.5 / neg)
    return np.where(tp + fp > 0, _bns(tpr, fpr), 0.0)


def bns_half_count_tpr(tp, fp, pos, neg):
    """BNS with only the true-positive rate clipped at half a document; 0 for a word never seen."""
    tpr = np.clip(tp / pos, 0.5 / pos, 1 - 0.5 / pos)
    fpr = np.clip(fp / neg, 0.0005, 0.9995)
    return np.where(tp + fp > 0, _bns(tpr, fpr), 0.0)


def bns_half_count_fpr(tp, fp, pos, neg):
    """BNS with only the false-positive rate clipped at half a document; 0 for a word never seen."""
    tpr = np.clip(tp / pos, 0.0005, 0.9995)
    fpr = np.clip(fp / neg, 0.5 / neg, 1 - 0.5 / neg)
    return np.where(tp + fp > 0, _bns(tpr, fpr), 0.0)


def bns_clip_005(tp, fp, pos, neg):
    """BNS with rates clipped to [0.05, 0.95]."""
    return _bns(np.clip(tp / pos, 0.05, 0.95), np.clip(fp / neg, 0.05, 0.95))


def bns_capped(tp, fp, pos, neg):
    """BNS (clip 0.0005), the weight of a word in one or two positive documents capped at 1."""
    weight = _bns(np.clip(tp / pos, 0.0005, 0.9995), np.clip(fp / neg, 0.0005, 0.9995))
    return np.where((tp >= 1) & (tp <= 2), np.minimum(weight, 1.0), weight)


@hookimpl
def register_metrics(register):
    """The BNS variants."""
    register(Metric("bnsh", bns_half_count, "BNS, rates clipped at half a document."))
    register(Metric("bnsht", bns_half_count_tpr, "BNS, the true-positive rate clipped at half a document."))
    register(Metric("bnshf", bns_half_count_fpr, "BNS, the false-positive rate clipped at half a document."))
    register(Metric("bnsc", bns_clip_005, "BNS, rates clipped to [0.05, 0.95]."))
    register(Metric("bnscap", bns_capped, "BNS, words of one or two positives capped at 1."))
