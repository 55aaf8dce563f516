"""The README's table: F1 of the positive class on Weka's Reuters grain and corn test files, for
filterkit's features + a default LinearSVC, scikit-learn's TfidfVectorizer + LinearSVC (default C, and
C chosen by 5-fold CV on the training file) and Weka 3.6's StringToWordVector + SMO.

    python examples/reuters_test_table.py [--data /usr/share/doc/weka/examples] [--weka-jar JAR]

The data are the train/test files of Debian's weka package (``apt-get install weka``). Each route is
fitted on the training file only and scored on the test file; CPU seconds are summed over both tasks
(Weka's include the JVM's start). The Weka rows need java and weka.jar and are left out without them.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import time
from pathlib import Path

from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics import f1_score, make_scorer
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC

from filterkit.sklearn import BnsScorer, L2Normalizer, Shaper, WordVector, load_arff

TASKS = ("Grain", "Corn")
F1 = make_scorer(f1_score, pos_label="1")
WEKA_ROUTES = {
    "Weka 3.6: StringToWordVector + SMO (defaults)": "weka.filters.unsupervised.attribute.StringToWordVector",
    "Weka 3.6: StringToWordVector -C -L -S -T -I + SMO": (
        "weka.filters.unsupervised.attribute.StringToWordVector -C -L -S -T -I"
    ),
}


def python_routes():
    """The routes run in this process, by name: each a function making an unfitted pipeline."""
    return {
        "filterkit: words --counts --lowercase --stopwords weka shape bns l2 + LinearSVC()": lambda: make_pipeline(
            WordVector(counts=True, lowercase=True, stopwords="weka"),
            Shaper(),
            BnsScorer(),
            L2Normalizer(),
            LinearSVC(),
        ),
        "scikit-learn: TfidfVectorizer() + LinearSVC()": lambda: make_pipeline(TfidfVectorizer(), LinearSVC()),
        "scikit-learn: TfidfVectorizer() + LinearSVC(C by 5-fold CV)": lambda: make_pipeline(
            TfidfVectorizer(),
            GridSearchCV(LinearSVC(), {"C": [0.01, 0.1, 1, 10, 100]}, scoring=F1, cv=5),
        ),
    }


def documents(path: Path):
    """The texts of a Reuters file and its class labels ("1": the topic)."""
    X, y, _ = load_arff(path)
    return X[:, 0], y


def weka_f1(jar: str, word_filter: str, train: Path, test: Path) -> float:
    """F1 of class 1 on ``test`` of Weka's FilteredClassifier (``word_filter`` + SMO) fitted on ``train``."""
    command = ["java", "-cp", jar, "weka.classifiers.meta.FilteredClassifier", "-t", str(train), "-T", str(test)]
    command += ["-p", "0", "-F", word_filter, "-W", "weka.classifiers.functions.SMO"]
    lines = subprocess.run(command, check=True, capture_output=True, text=True).stdout.splitlines()
    rows = [line.split() for line in lines if line.strip()[:1].isdigit()]
    return f1_score([row[1][-1] for row in rows], [row[2][-1] for row in rows], pos_label="1")


def children_cpu() -> float:
    """CPU seconds of the finished child processes."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    """Print the table in Markdown."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("/usr/share/doc/weka/examples"))
    parser.add_argument("--weka-jar", default=os.environ.get("WEKA_JAR", "/usr/share/java/weka.jar"))
    arguments = parser.parse_args()
    files = {task: [arguments.data / f"Reuters{task}-{part}.arff" for part in ("train", "test")] for task in TASKS}
    print("| route | grain F1 | corn F1 | CPU s |\n|---|---|---|---|")
    for name, make in python_routes().items():
        started, scores = time.process_time(), []
        for train, test in files.values():
            (X, y), (X_test, y_test) = documents(train), documents(test)
            scores.append(f1_score(y_test, make().fit(X, y).predict(X_test), pos_label="1"))
        print(f"| {name} | {scores[0]:.3f} | {scores[1]:.3f} | {time.process_time() - started:.1f} |")
    if shutil.which("java") and Path(arguments.weka_jar).is_file():
        for name, word_filter in WEKA_ROUTES.items():
            started = children_cpu()
            scores = [weka_f1(arguments.weka_jar, word_filter, *files[task]) for task in TASKS]
            print(f"| {name} | {scores[0]:.3f} | {scores[1]:.3f} | {children_cpu() - started:.1f} |")


if __name__ == "__main__":
    main()
