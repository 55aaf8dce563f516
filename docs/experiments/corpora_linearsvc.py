"""The README's classifier on benchmarks/corpora.py's tasks: filterkit's chains + ``LinearSVC()`` (docs/RESULTS.md §10).

    python docs/experiments/corpora_linearsvc.py [DATA] [TASK …]

``evaluate`` chooses C by the inner AUC and decides by Platt's probability; scikit-learn's route is
``LinearSVC()``, C = 1 and the margin.  Fitting filterkit's chains (its scikit-learn adapters) with that
same ``LinearSVC()`` on the training file and scoring the test file separates what the chain does from
what the classifier does.  Prints one line per task and route: F1 of the positive class (macro-F1 with
all classes at once).  DATA is ``benchmarks/.inputs/corpora/data`` unless given.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from sklearn.metrics import f1_score
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC

from filterkit.sklearn import BnsScorer, IdfScorer, L2Normalizer, Shaper, WordVector, load_arff

REPOSITORY = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("corpora", REPOSITORY / "benchmarks" / "corpora.py")
assert spec is not None and spec.loader is not None
corpora = importlib.util.module_from_spec(spec)
spec.loader.exec_module(corpora)

README_WORDS = {"counts": True, "lowercase": True, "stopwords": "weka"}
LETTERS = {"counts": True, "lowercase": True, "words_to_keep": 1000000, "tokenizer": "alphabetic"}
ROUTES = {
    "shape bns l2": lambda: [WordVector(**README_WORDS), Shaper(), BnsScorer(), L2Normalizer()],
    "tf·BNS": lambda: [WordVector(**README_WORDS), BnsScorer(multiply=True), L2Normalizer()],
    "tf·idf": lambda: [WordVector(**README_WORDS), IdfScorer(presence=True, multiply=True), L2Normalizer()],
    "tf·BNS (letters)": lambda: [WordVector(**LETTERS), BnsScorer(multiply=True), L2Normalizer()],
}


def main(data: Path, only: list[str]) -> None:
    for name, stem, positive in corpora.TASKS:
        if only and name not in only:
            continue
        X, y, _ = load_arff(str(data / f"{stem}-train.arff"))
        X_test, y_test, _ = load_arff(str(data / f"{stem}-test.arff"))
        if positive is not None:
            y, y_test = (y == positive).astype(int), (y_test == positive).astype(int)
        for route, stages in ROUTES.items():
            if positive is None and route == "shape bns l2":
                continue  # one shaped copy of each word per class: too slow for this probe
            predicted = make_pipeline(*stages(), LinearSVC()).fit(X[:, :1], y).predict(X_test[:, :1])
            score = f1_score(y_test, predicted, average="binary" if positive is not None else "macro")
            print(f"{name}\t{route} + LinearSVC()\t{score:.3f}", flush=True)


if __name__ == "__main__":
    arguments = sys.argv[1:]
    folder = Path(arguments.pop(0)) if arguments and "/" in arguments[0] else corpora.DEFAULT_INPUTS / "data"
    main(folder, arguments)
