"""Where a test positive's weight sits at 5 % training (docs/RESULTS.md §9).

Usage: python docs/experiments/collapse_weights.py TEXT.wc.arff

Per class of the set: one random fifth held out, 5 % of the rest sampled per class (seed 1, not
`evaluate`'s folds), presence counts; BNS weights with rates clipped at 0.0005 (bns) and at half a
document (docs/experiments/bns_clips/collapse_metrics.py's bnsh).  Prints, per class and clip, the mean weight of
the words held by negatives only and of the words held by a positive, and the mean share of a held-out
positive's squared L2 norm on the negative-only words.
"""

from __future__ import annotations

import sys

import numpy as np
from scipy.special import ndtri

from filterkit.arff import read_arff


def bns(tp, fp, pos, neg, clip_pos, clip_neg):
    """BNS with the true- and false-positive rates clipped at ``clip_pos`` and ``clip_neg``; 0 if never seen."""
    tpr = np.clip(tp / pos, clip_pos, 1 - clip_pos)
    fpr = np.clip(fp / neg, clip_neg, 1 - clip_neg)
    return np.where(tp + fp > 0, np.abs(ndtri(tpr) - ndtri(fpr)), 0.0)


def main(path: str) -> None:
    """Print one line per class and clip."""
    _, data = read_arff(path)
    values = data.values.tocsr()
    labels = values[:, -1].toarray().ravel()
    present = (values[:, :-1] != 0).astype(float).tocsr()
    rng = np.random.default_rng(1)
    for label in range(int(np.nanmax(labels)) + 1):
        rows = rng.permutation(len(labels))
        test, train = rows[: len(rows) // 5], rows[len(rows) // 5 :]
        positives, negatives = train[labels[train] == label], train[labels[train] != label]
        sample = np.r_[
            rng.choice(positives, int(np.ceil(0.05 * len(positives))), replace=False),
            rng.choice(negatives, int(np.ceil(0.05 * len(negatives))), replace=False),
        ]
        is_positive = labels[sample] == label
        tp = np.asarray(present[sample[is_positive]].sum(0)).ravel()
        fp = np.asarray(present[sample[~is_positive]].sum(0)).ravel()
        pos, neg = is_positive.sum(), (~is_positive).sum()
        negative_only, in_a_positive = (tp == 0) & (fp > 0), tp > 0
        held_out = present[test[labels[test] == label]]
        for name, clips in (("0.0005", (0.0005, 0.0005)), ("half", (0.5 / pos, 0.5 / neg))):
            squared = held_out.multiply(bns(tp, fp, pos, neg, *clips)).power(2).toarray()
            totals = squared.sum(1)
            share = np.mean(squared[totals > 0][:, negative_only].sum(1) / totals[totals > 0])
            print(
                f"class {label} clip {name}: pos {pos} neg {neg}; negative-only words {negative_only.sum()} "
                f"mean weight {bns(tp, fp, pos, neg, *clips)[negative_only].mean():.2f}; words in a positive "
                f"{in_a_positive.sum()} mean weight {bns(tp, fp, pos, neg, *clips)[in_a_positive].mean():.2f}; "
                f"held-out positives' L2 mass on negative-only words {share:.2f}"
            )


if __name__ == "__main__":
    main(sys.argv[1])
