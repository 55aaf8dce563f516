"""One document at a time through a fitted model, as a service answers (issue 49, item 3).

    python benchmarks/latency.py [--rounds 7] [--documents 200] [--out benchmarks/RESULTS.md]

Everything is fitted on Weka's Reuters grain training documents (``ReutersGrain-train.arff``) and asked
about its test documents (``ReutersGrain-test.arff``), one document per call, in this process:

(a) scikit-learn's ``TfidfVectorizer() + LinearSVC()`` Pipeline, ``predict([doc])``: the bar;
(b) the Pipeline of filterkit's adapters ``WordVector(counts, lowercase, stopwords="weka"), Shaper, BnsScorer,
    L2Normalizer, LinearSVC()``, ``predict([doc])``;
(c) per default candidate chain of ``filterkit train`` (``words --counts --lowercase --stopwords weka``, then
    ``shape bns l2``, ``bns --multiply l2`` or ``idf --multiply l2``), a fitted :class:`filterkit.runner.Chain`
    on a one-row chunk, :func:`filterkit.evaluation.classifier_matrix` and ``LinearSVC().decision_function``;
(d) per such chain, ``filterkit.load_model(M).predict([doc])`` on the model ``train`` saved (what
    ``filterkit train -o M TRAIN CHAIN`` does).

Each round calls every path on the same ``--documents`` test documents in turn (interleaved rounds, the paths
in the same order each round, after one round of warming up).  Reported per path: the median and the 99th
percentile of the wall time of a call (``perf_counter``), the CPU time per call (``process_time`` over the
path's calls) and each as a multiple of (a)'s in the same run.  Before timing, (c)'s features are checked
equal to (d)'s ``transform`` (the same chain, fitted by ``train`` on the same rows).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import _commit, replace_section  # noqa: E402  (benchmarks/run.py: the commit every report names)

HERE = Path(__file__).resolve().parent
EXAMPLES = Path("/usr/share/doc/weka/examples")
TRAIN, TEST = EXAMPLES / "ReutersGrain-train.arff", EXAMPLES / "ReutersGrain-test.arff"
HEADING = "## One document through a fitted model (`latency.py`)"


def sklearn_paths(documents: list[str], labels) -> dict:
    """(a) and (b), fitted: each a function of one document."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.pipeline import make_pipeline
    from sklearn.svm import LinearSVC

    from filterkit.sklearn import BnsScorer, L2Normalizer, Shaper, WordVector

    tfidf = make_pipeline(TfidfVectorizer(), LinearSVC()).fit(documents, labels)
    adapters = make_pipeline(
        WordVector(counts=True, lowercase=True, stopwords="weka"), Shaper(), BnsScorer(), L2Normalizer(), LinearSVC()
    ).fit(documents, labels)
    return {
        "(a) TfidfVectorizer + LinearSVC": lambda document: tfidf.predict([document]),
        "(b) filterkit adapters + LinearSVC": lambda document: adapters.predict([document]),
    }


def chain_paths(folder: Path) -> dict:
    """(c) and (d) per default candidate chain of ``train``, fitted (each model saved into ``folder``, then loaded)."""
    import scipy.sparse as sp
    from sklearn.svm import LinearSVC

    import filterkit
    from filterkit.arff import read_arff
    from filterkit.evaluation import classifier_matrix
    from filterkit.plugins import load_plugins
    from filterkit.runner import Chain
    from filterkit.sources import MemorySource
    from filterkit.training import default_candidates, train

    registry = load_plugins()
    schema, rows = read_arff(str(TRAIN))
    labels = rows.column(schema.index_of("class-att"))
    paths = {}
    for number, candidate in enumerate(default_candidates(schema, registry)):
        chain = Chain([registry.make_stage(name, params) for name, params in candidate.stages])
        chain.fit(MemorySource(schema, rows))
        output, class_index = chain.output_schema, chain.output_schema.index_of("class-att")
        svm = LinearSVC().fit(classifier_matrix(output, next(iter(chain.transform([rows]))), class_index), labels)
        model_path = folder / f"model{number}.json"
        train(str(TRAIN), [candidate], registry=registry).save(model_path)
        model = filterkit.load_model(model_path)

        def chain_decision(document: str, chain=chain, output=output, class_index=class_index, svm=svm):
            transformed = next(iter(chain.transform([one_document(document)])))
            return svm.decision_function(classifier_matrix(output, transformed, class_index))

        def model_prediction(document: str, model=model):
            return model.predict([document])

        for document in ("grain exports rose", "the board approved a stock split"):
            transformed = next(iter(chain.transform([one_document(document)])))
            features = sp.csr_matrix(classifier_matrix(output, transformed, class_index))
            assert (features != model.transform([document])).nnz == 0, "(c) and (d) make different features"
        paths[f"(c) Chain + classifier_matrix + LinearSVC: {candidate.text}"] = chain_decision
        paths[f"(d) load_model(M).predict: {candidate.text}"] = model_prediction
    return paths


def one_document(document: str):
    """A chunk of one row of the Reuters header: the text, and a missing class."""
    from filterkit.schema import Chunk

    return Chunk(np.array([[0.0, np.nan]]), {0: [document]})


def measured(paths: dict, documents: list[str], rounds: int) -> dict[str, tuple[list[float], float]]:
    """Per path, the wall seconds of each call and the CPU seconds per call, over ``rounds`` interleaved rounds."""
    for call in paths.values():  # warming up: imports, caches, the first transform's plan
        for document in documents:
            call(document)
    walls: dict[str, list[float]] = {name: [] for name in paths}
    cpu = dict.fromkeys(paths, 0.0)
    for _ in range(rounds):
        for name, call in paths.items():
            started_cpu = time.process_time()
            for document in documents:
                started = time.perf_counter()
                call(document)
                walls[name].append(time.perf_counter() - started)
            cpu[name] += time.process_time() - started_cpu
    return {name: (walls[name], cpu[name] / len(walls[name])) for name in paths}


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def format_report(results: dict, rounds: int, n_documents: int) -> str:
    """The section of RESULTS.md: each path's p50, p99 and CPU per call in ms, and each ÷ (a)'s."""
    bar_walls, bar_cpu = next(iter(results.values()))
    bar_p50, bar_p99 = statistics.median(bar_walls), percentile(bar_walls, 0.99)
    lines = [
        HEADING,
        "",
        f"`python benchmarks/latency.py` on {time.strftime('%Y-%m-%d')} at commit {_commit()}, {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.2f}; Python {sys.version.split()[0]}.  Fitted on Weka's "
        f"`ReutersGrain-train.arff`, asked about {n_documents} documents of `ReutersGrain-test.arff` one per call, "
        f"{rounds} interleaved rounds ({rounds * n_documents} calls a path).  ms of wall time per call (median, "
        "99th percentile) and of CPU per call; ÷ (a): the same figure over (a)'s in this run.",
        "",
        "| path | p50 ms | p99 ms | CPU ms/call | p50 ÷ (a) | p99 ÷ (a) | CPU ÷ (a) |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, (walls, cpu) in results.items():
        p50, p99 = statistics.median(walls), percentile(walls, 0.99)
        lines.append(
            f"| {name} | {p50 * 1e3:.3f} | {p99 * 1e3:.3f} | {cpu * 1e3:.3f} | {p50 / bar_p50:.2f} "
            f"| {p99 / bar_p99:.2f} | {cpu / bar_cpu:.2f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--documents", type=int, default=200)
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    args = parser.parse_args()
    if not TRAIN.is_file() or not TEST.is_file():
        sys.exit(f"{TRAIN} is not installed (Debian's weka package ships it)")
    from filterkit.sklearn import load_arff

    train_documents, train_labels, _ = load_arff(TRAIN)
    test_documents, _, _ = load_arff(TEST)
    with tempfile.TemporaryDirectory() as folder:
        paths = {**sklearn_paths(train_documents[:, 0].tolist(), train_labels), **chain_paths(Path(folder))}
        results = measured(paths, test_documents[: args.documents, 0].tolist(), args.rounds)
    report = format_report(results, args.rounds, min(args.documents, len(test_documents)))
    replace_section(args.out, HEADING, report)
    print(report)


if __name__ == "__main__":
    main()
