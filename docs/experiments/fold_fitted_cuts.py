"""Do a supervised chain's weights leak into the out-of-fold scores that per-label cuts are chosen on?
(docs/RESULTS.md §11.1, "Is it the chain fitted on every row?")

    python docs/experiments/fold_fitted_cuts.py DATA STEM C ["CHAIN"]

``evaluate`` fits the chain (``bns --combine max`` learns from every training row's labels) once, then cuts each
label where the F1 of its SVM's inner out-of-fold scores is highest.  Those scores come from features whose
weights saw the held-out rows' labels.  This compares, on DATA/STEM-train.arff and DATA/STEM-test.arff (a MEKA
pair as benchmarks/multilabel.py builds it), the test macro- and micro-F1 of three decisions of the same
``LinearSVC(C)`` per label, fitted on the chain's features of every training row: the margin's sign; cuts chosen on
out-of-fold scores of those features (``evaluate``'s way); and cuts chosen on out-of-fold scores where the chain
was fitted again on each fold's training rows (``filterkit --save-model``, then ``filterkit apply`` to the held-out
rows).  The five folds are the rows' SHA-256 mod 5; C is fixed so that only the scores differ.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from sklearn.datasets import load_svmlight_file
from sklearn.metrics import f1_score
from sklearn.preprocessing import MultiLabelBinarizer
from sklearn.svm import LinearSVC

BNS_MAX = "words --counts --lowercase --stopwords weka bns --combine max l2"
FOLDS = 5


def chain_features(folder: Path, header: list[str], fitted_on: list[str], applied_to: Path | list[str], chain: str):
    """svmlight files of the chain fitted on the rows ``fitted_on``, and of it applied to ``applied_to``."""
    fitted, applied = folder / "fitted.arff", folder / "applied.arff"
    fitted.write_text("".join(header + fitted_on))
    if isinstance(applied_to, Path):
        applied = applied_to
    else:
        applied.write_text("".join(header + applied_to))
    filterkit, model = shutil.which("filterkit") or "filterkit", folder / "model.json"
    subprocess.run([filterkit, "--save-model", model, "-o", folder / "fitted.svm", fitted, *chain.split()], check=True)
    subprocess.run([filterkit, "apply", model, applied, "-o", folder / "applied.svm"], check=True)
    fitted_x, fitted_y = load_svmlight_file(str(folder / "fitted.svm"), multilabel=True, zero_based=False)
    applied_x, applied_y = load_svmlight_file(
        str(folder / "applied.svm"), multilabel=True, zero_based=False, n_features=fitted_x.shape[1]
    )
    return (_int32(fitted_x), fitted_y), (_int32(applied_x), applied_y)


def _int32(matrix):
    """``matrix`` with the 32-bit indices liblinear's wrapper takes."""
    matrix = matrix.tocsr()
    matrix.indices, matrix.indptr = matrix.indices.astype(np.int32), matrix.indptr.astype(np.int32)
    return matrix


def f1_cut(scores: np.ndarray, truth: np.ndarray) -> float:
    """The cut between two distinct scores where the F1 of predicting every score above it is highest."""
    order = np.argsort(-scores, kind="stable")
    ranked, positive = scores[order], truth[order]
    f1 = 2 * np.cumsum(positive) / (np.arange(1, len(ranked) + 1) + positive.sum())
    ends = np.flatnonzero(np.r_[ranked[1:] != ranked[:-1], True])
    best = ends[np.argmax(f1[ends])]
    return (ranked[best] + ranked[best + 1]) / 2 if best + 1 < len(ranked) else ranked[best] - 1e-9


def main(data: Path, stem: str, c: float, chain: str) -> None:
    lines = (data / f"{stem}-train.arff").read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.strip().lower() == "@data")
    header, rows = lines[: at + 1], [line for line in lines[at + 1 :] if line.strip()]
    folds = np.array([int(hashlib.sha256(row.encode()).hexdigest(), 16) % FOLDS for row in rows])
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        (train_x, train_sets), (test_x, test_sets) = chain_features(
            folder, header, rows, data / f"{stem}-test.arff", chain
        )
        binarizer = MultiLabelBinarizer().fit(list(train_sets) + list(test_sets))
        train_y, test_y = binarizer.transform(train_sets), binarizer.transform(test_sets)
        once, again = np.zeros(train_y.shape), np.zeros(train_y.shape)
        for fold in range(FOLDS):
            inner, held = folds != fold, folds == fold
            kept = [row for row, k in zip(rows, folds) if k != fold]
            (fold_x, fold_sets), (held_x, _) = chain_features(
                folder, header, kept, [row for row, k in zip(rows, folds) if k == fold], chain
            )
            fold_y = binarizer.transform(fold_sets)
            for label in range(train_y.shape[1]):
                once[held, label] = (
                    LinearSVC(C=c).fit(train_x[inner], train_y[inner, label]).decision_function(train_x[held])
                )
                again[held, label] = LinearSVC(C=c).fit(fold_x, fold_y[:, label]).decision_function(held_x)
    test_scores = np.column_stack(
        [LinearSVC(C=c).fit(train_x, train_y[:, label]).decision_function(test_x) for label in range(train_y.shape[1])]
    )
    for name, out_of_fold in (("margin", None), ("chain fitted once", once), ("chain fitted per fold", again)):
        cuts = (
            np.zeros(train_y.shape[1])
            if out_of_fold is None
            else np.array([f1_cut(out_of_fold[:, label], train_y[:, label]) for label in range(train_y.shape[1])])
        )
        predicted = test_scores > cuts
        print(
            f"{stem} C={c:g} {name}: macro-F1 {f1_score(test_y, predicted, average='macro', zero_division=0):.4f}, "
            f"micro-F1 {f1_score(test_y, predicted, average='micro', zero_division=0):.4f}, "
            f"labels a row {predicted.sum(axis=1).mean():.2f}"
        )


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2], float(sys.argv[3]), sys.argv[4] if len(sys.argv) > 4 else BNS_MAX)
