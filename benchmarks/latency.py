"""One document at a time through a fitted model, as a service answers (issue 49, item 3; issue 78's goals).

    python benchmarks/latency.py [--rounds 7] [--documents 200] [--starts 20] [--out benchmarks/RESULTS.md]
    python benchmarks/latency.py --quick     (fewer rounds, documents and starts; prints, writes nothing)

Everything is fitted on Weka's Reuters grain training documents (``ReutersGrain-train.arff``) and asked
about its test documents (``ReutersGrain-test.arff``), one document per call:

(a) scikit-learn's ``TfidfVectorizer() + LinearSVC()`` Pipeline, ``predict([doc])``: the bar;
(b) the Pipeline of filterkit's adapters ``WordVector(counts, lowercase, stopwords="weka"), Shaper, BnsScorer,
    L2Normalizer, LinearSVC()``, ``predict([doc])``;
(c) per default candidate chain of ``filterkit train``, a fitted :class:`filterkit.runner.Chain` on a one-row
    chunk, :func:`filterkit.classifying.classifier_matrix` and ``LinearSVC().decision_function``;
(d) per such chain, ``filterkit.load_model(M).predict([doc])`` on the model ``train`` saved (what
    ``filterkit train -o M TRAIN CHAIN`` does);
(e) per such model, its exported C scorer (``filterkit export M --c OUT.c``): a C harness that ``#include``\\s
    OUT.c (compiled ``-O2 -DFILTERKIT_NO_MAIN``), reads the documents NUL-separated and calls ``decide()`` then
    ``answer()`` on each, timing each call with ``clock_gettime(CLOCK_MONOTONIC)`` and the CPU of them all with
    ``CLOCK_PROCESS_CPUTIME_ID``; one run of it per round (which first scores every document once untimed);
(f) per such model, its exported ONNX graph (``filterkit export M --onnx OUT.onnx``) in ONNX Runtime: one
    ``InferenceSession`` on one thread (``SessionOptions`` intra- and inter-op threads 1, the CPU provider), made
    once, then ``session.run(["label"], {"documents": np.array([doc], dtype=object)})``, timed as (a) to (d) are;
    skipped, with a line in the report saying so, where onnxruntime or onnx is not installed.

Each round calls every path on the same ``--documents`` test documents in turn (interleaved rounds, the paths
in the same order each round, after one round of warming up).  Reported per path: the median and the 99th
percentile of the wall time of a call, the CPU time per call and each as a multiple of (a)'s in the same run.
Before timing, (c)'s features are checked equal to (d)'s ``transform``, (e)'s decision values equal to (d)'s
``decision_function`` bit for bit (``%a``) and its answers to ``predict``, and (f)'s labels equal to ``predict``'s
and its decision values to ``decision_function``'s within 1e-6 relative (what tests/test_export_onnx.py asks; how
many documents are bit for bit is reported), on every document timed.

Issue 78's goals are measured on two models: the grain models above, and a model of a 100,000-word vocabulary
asked about 200-word documents (:func:`synthetic_corpus`: Zipf-distributed pseudo-words, a tenth of them with a
letter past ASCII, in two classes; ``words --counts --lowercase --words-to-keep 1000000 bns --multiply l2``), on
which (a), (d), (e) and (f) are timed as above.  Per model: (e)'s p50; the cold start of the compiled scorer
(``cc -O2 OUT.c``, its own ``main``) scoring one document, from process start to exit, median of ``--starts``
runs, and its peak memory (the child's max RSS from ``wait4``) beside its arrays' bytes (``.rodata`` and
``.data``); beside them the cold start and peak memory of a fresh Python that imports filterkit, loads the model
and predicts one document, of one that imports scikit-learn, ``joblib.load``\\s (a)'s pipeline and predicts, and
of one that imports onnxruntime, opens (f)'s graph in a one-thread session and scores the document.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import _commit, replace_section  # noqa: E402  (benchmarks/run.py: the commit every report names)

HERE = Path(__file__).resolve().parent
EXAMPLES = Path("/usr/share/doc/weka/examples")
TRAIN, TEST = EXAMPLES / "ReutersGrain-train.arff", EXAMPLES / "ReutersGrain-test.arff"
HEADING = "## One document through a fitted model (`latency.py`)"
COMPILER = os.environ.get("CC", "cc")

#: The chain of the 100,000-word model: every word kept, as the default candidates keep them, and the default
#: tokenizer, so that the words past ASCII go through the UTF-8 path.
LARGE_CHAIN: list[tuple[str, dict]] = [
    ("words", {"counts": True, "lowercase": True, "words_to_keep": 1000000}),
    ("bns", {"multiply": True}),
    ("l2", {}),
]
#: The synthetic corpus: its seed, its pseudo-words, its training and test documents and the words of a document.
SEED, PSEUDO_WORDS, TRAINING_DOCUMENTS, TEST_DOCUMENTS, DOCUMENT_WORDS = 78, 150_000, 8000, 200, 200
#: The least vocabulary the goals ask of the large model.
LEAST_VOCABULARY = 100_000
#: The goals of issue 78 for the C scorer of the 100,000-word model.
GOAL_P50_S, GOAL_START_S, GOAL_MEMORY_BYTES = 20e-6, 10e-3, 5 * 2**20

#: Timed rounds: a path's function of the documents, giving the wall seconds of each call and its CPU seconds.
TimedRound = Callable[[list[str]], tuple[list[float], float]]

#: Cold starts: ``launcher RUNS STDIN PROGRAM ARGUMENTS…`` spawns the program RUNS times, its standard input from the
#: file STDIN and its output to /dev/null, and prints per run the ns from before the spawn to after the reaping
#: ``wait4`` and the child's max RSS in KiB; it exits 1 when a run does not exit 0.  (The child's max RSS counts the
#: memory of the process that spawned it, this small one's: a Python parent's would add its own.)
LAUNCHER = r"""
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

int
main(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    for (long run = 0, runs = atol(argv[1]); run < runs; run++) {
        posix_spawn_file_actions_t files;
        posix_spawn_file_actions_init(&files);
        posix_spawn_file_actions_addopen(&files, 0, argv[2], O_RDONLY, 0);
        posix_spawn_file_actions_addopen(&files, 1, "/dev/null", O_WRONLY, 0);
        struct timespec started, ended;
        struct rusage usage;
        pid_t child;
        int status;
        clock_gettime(CLOCK_MONOTONIC, &started);
        if (posix_spawnp(&child, argv[3], &files, NULL, argv + 3, environ) != 0)
            return 1;
        if (wait4(child, &status, 0, &usage) != child)
            return 1;
        clock_gettime(CLOCK_MONOTONIC, &ended);
        posix_spawn_file_actions_destroy(&files);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            return 1;
        long long ns = (ended.tv_sec - started.tv_sec) * 1000000000LL + (ended.tv_nsec - started.tv_nsec);
        printf("%lld %ld\n", ns, usage.ru_maxrss);
    }
    return 0;
}
"""

HARNESS = r"""
#define _POSIX_C_SOURCE 199309L
#include "@SCORER@"
#include <time.h>

/* argv[1]: "check" (each document's answer, a tab, its decision values as %a) or "time" (every document scored
 * once untimed, then once timed: the ns of each decide() + answer(), then "cpu" and the process's CPU ns over them
 * all); argv[2]: the documents, each ended by a NUL byte. */
static long long
nanoseconds(clockid_t clock)
{
    struct timespec now;
    clock_gettime(clock, &now);
    return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

int
main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    FILE *file = fopen(argv[2], "rb");
    size_t size = 0, room = 1 << 20, count = 0;
    char *text = malloc(room);
    while (file != NULL && text != NULL) {
        size += fread(text + size, 1, room - size, file);
        if (size < room)
            break;
        text = realloc(text, room *= 2);
    }
    if (file == NULL || text == NULL)
        return 2;
    fclose(file);
    size_t *start = malloc((size + 1) * sizeof(size_t)), at = 0;
    for (size_t i = 0; i < size; i++)
        if (text[i] == '\0') {
            start[count++] = at;
            at = i + 1;
        }
    start[count] = at;
    double decisions[SCORER_OUTPUTS];
    unsigned char chosen[SCORER_OUTPUTS];
    if (strcmp(argv[1], "check") == 0) {
        for (size_t d = 0; d < count; d++) {
            if (decide(text + start[d], start[d + 1] - start[d] - 1, decisions) != 0)
                return 1;
            int given = answer(decisions, chosen);
            size_t name_size;
            const char *name;
            for (int k = 0, written = 0; SCORER_TASK == 2 && k < SCORER_OUTPUTS; k++)
                if (chosen[k]) {
                    name = answer_name(k, &name_size);
                    printf("%s%.*s", written++ ? "," : "", (int)name_size, name);
                }
            if (SCORER_TASK != 2) {
                name = answer_name(given, &name_size);
                printf("%.*s", (int)name_size, name);
            }
            for (int k = 0; k < SCORER_OUTPUTS; k++)
                printf("\t%a", decisions[k]);
            putchar('\n');
        }
        return 0;
    }
    long long *spent = malloc((count + 1) * sizeof(long long)), answers = 0;
    for (size_t d = 0; d < count; d++) {
        decide(text + start[d], start[d + 1] - start[d] - 1, decisions);
        answers += answer(decisions, chosen);
    }
    long long cpu = nanoseconds(CLOCK_PROCESS_CPUTIME_ID);
    for (size_t d = 0; d < count; d++) {
        long long started = nanoseconds(CLOCK_MONOTONIC);
        decide(text + start[d], start[d + 1] - start[d] - 1, decisions);
        answers += answer(decisions, chosen);
        spent[d] = nanoseconds(CLOCK_MONOTONIC) - started;
    }
    cpu = nanoseconds(CLOCK_PROCESS_CPUTIME_ID) - cpu;
    for (size_t d = 0; d < count; d++)
        printf("%lld\n", spent[d]);
    printf("cpu %lld answers %lld\n", cpu, answers);
    return 0;
}
"""


def sklearn_paths(documents: list[str], labels, folder: Path) -> tuple[dict[str, TimedRound], Path]:
    """(a) and (b), fitted, and (a)'s pipeline saved with joblib (for its cold start)."""
    from sklearn.pipeline import make_pipeline
    from sklearn.svm import LinearSVC

    from filterkit.sklearn import BnsScorer, L2Normalizer, Shaper, WordVector

    tfidf, saved = tfidf_pipeline(documents, labels, folder / "grain-tfidf.joblib")
    adapters = make_pipeline(
        WordVector(counts=True, lowercase=True, stopwords="weka"), Shaper(), BnsScorer(), L2Normalizer(), LinearSVC()
    ).fit(documents, labels)
    return {
        "(a) TfidfVectorizer + LinearSVC": python_rounds(lambda document: tfidf.predict([document])),
        "(b) filterkit adapters + LinearSVC": python_rounds(lambda document: adapters.predict([document])),
    }, saved


def tfidf_pipeline(documents: list[str], labels, saved: Path):
    """(a) fitted on ``documents``, and where it is saved with joblib."""
    import joblib
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.pipeline import make_pipeline
    from sklearn.svm import LinearSVC

    pipeline = make_pipeline(TfidfVectorizer(), LinearSVC()).fit(documents, labels)
    joblib.dump(pipeline, saved)
    return pipeline, saved


def chain_paths(folder: Path) -> tuple[dict[str, TimedRound], dict[str, Path]]:
    """(c) and (d) per default candidate chain of ``train``, fitted (each model saved into ``folder``, then
    loaded); and each model's path by its chain's text."""
    import scipy.sparse as sp
    from sklearn.svm import LinearSVC

    import filterkit
    from filterkit.arff import read_arff
    from filterkit.classifying import classifier_matrix
    from filterkit.plugins import load_plugins
    from filterkit.runner import Chain
    from filterkit.sources import MemorySource
    from filterkit.training import default_candidates, train

    registry = load_plugins()
    schema, rows = read_arff(str(TRAIN))
    labels = rows.column(schema.index_of("class-att"))
    paths, models = {}, {}
    for number, candidate in enumerate(default_candidates(schema, registry)):
        chain = Chain([registry.make_stage(name, params) for name, params in candidate.stages])
        chain.fit(MemorySource(schema, rows))
        output = chain.output_schema
        assert output is not None, "a fitted chain has its output schema"
        class_index = output.index_of("class-att")
        svm = LinearSVC().fit(classifier_matrix(output, next(iter(chain.transform([rows]))), class_index), labels)
        model_path = folder / f"grain{number}.json"
        train(str(TRAIN), [candidate], registry=registry).save(model_path)
        model = filterkit.load_model(model_path)

        def chain_decision(document: str, chain=chain, output=output, class_index=class_index, svm=svm):
            transformed = next(iter(chain.transform([one_document(document)])))
            return svm.decision_function(classifier_matrix(output, transformed, class_index))

        for document in ("grain exports rose", "the board approved a stock split"):
            transformed = next(iter(chain.transform([one_document(document)])))
            features = sp.csr_matrix(classifier_matrix(output, transformed, class_index))
            assert (features != model.transform([document])).nnz == 0, "(c) and (d) make different features"
        paths[f"(c) Chain + classifier_matrix + LinearSVC: {candidate.text}"] = python_rounds(chain_decision)
        paths[f"(d) load_model(M).predict: {candidate.text}"] = prediction_rounds(model)
        models[candidate.text] = model_path
    return paths, models


def one_document(document: str):
    """A chunk of one row of the Reuters header: the text, and a missing class."""
    from filterkit.schema import Chunk

    return Chunk(np.array([[0.0, np.nan]]), {0: [document]})


def python_rounds(call: Callable[[str], object]) -> TimedRound:
    """A timed round of ``call`` in this process: ``perf_counter`` around each call, ``process_time`` around all."""

    def timed_round(documents: list[str]) -> tuple[list[float], float]:
        walls = []
        started_cpu = time.process_time()
        for document in documents:
            started = time.perf_counter()
            call(document)
            walls.append(time.perf_counter() - started)
        return walls, time.process_time() - started_cpu

    return timed_round


def prediction_rounds(model) -> TimedRound:
    """(d): ``model.predict([doc])``, timed in this process."""
    return python_rounds(lambda document: model.predict([document]))


class CScorer:
    """A model's exported C scorer, built in ``folder``: the harness of (e) and the scorer with its own ``main``."""

    def __init__(self, model_path: Path, folder: Path):
        self.folder, self.name = folder, model_path.stem
        source = folder / f"{self.name}.c"
        exported = subprocess.run(
            [sys.executable, "-m", "filterkit", "export", str(model_path), "--c", str(source)],
            capture_output=True,
            text=True,
        )
        if exported.returncode != 0:
            sys.exit(f"filterkit export {model_path} failed:\n{exported.stderr}")
        harness = folder / f"{self.name}-harness.c"
        harness.write_text(HARNESS.replace("@SCORER@", source.name))
        self.harness, self.program = folder / f"{self.name}-harness", folder / f"{self.name}-scorer"
        compiled([harness], self.harness, "-DFILTERKIT_NO_MAIN")
        compiled([source], self.program)
        self.array_bytes = array_bytes(self.program)

    def harness_output(self, mode: str, documents: list[str]) -> str:
        """What the harness prints in ``mode`` about ``documents``."""
        listed = self.folder / f"{self.name}-documents"
        listed.write_bytes(b"".join(document.encode("utf-8") + b"\0" for document in documents))
        return subprocess.run([str(self.harness), mode, str(listed)], capture_output=True, check=True, text=True).stdout

    def check(self, model, documents: list[str]) -> None:
        """Exit unless the harness's decision values equal ``model.decision_function``'s bit for bit and its
        answers ``model.predict``'s, on every one of ``documents``."""
        lines = self.harness_output("check", documents).splitlines()
        expected = np.asarray(model.decision_function(documents), dtype=np.float64).reshape(len(documents), -1)
        labels = model.predict(documents)
        assert len(lines) == len(documents), f"{self.name}: the harness scored {len(lines)} documents"
        for number, (line, wanted, label) in enumerate(zip(lines, expected, labels)):
            answer, *values = line.split("\t")
            given = np.array([float("nan") if "nan" in value else float.fromhex(value) for value in values])
            same = given.view(np.uint64) == wanted.view(np.uint64)
            if len(given) != len(wanted) or not np.all(same | (np.isnan(given) & np.isnan(wanted))):
                sys.exit(f"{self.name}: the C scorer gives {values} for document {number}, predict {wanted.tolist()}")
            if answer != label:
                sys.exit(f"{self.name}: the C scorer answers {answer!r} for document {number}, predict {label!r}")

    def timed_round(self, documents: list[str]) -> tuple[list[float], float]:
        """One run of the harness over ``documents``: the seconds of each timed call, and their CPU seconds."""
        *spent, totals = self.harness_output("time", documents).splitlines()
        return [int(ns) * 1e-9 for ns in spent], int(totals.split()[1]) * 1e-9


def missing_onnx() -> str | None:
    """The package (f) needs that is not installed (onnx to export the graph, onnxruntime to run it), or None."""
    return next((name for name in ("onnx", "onnxruntime") if importlib.util.find_spec(name) is None), None)


def one_thread_session(graph: Path):
    """An ONNX Runtime session of ``graph`` on one thread (intra- and inter-op), on the CPU provider."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    return onnxruntime.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])


class OnnxGraph:
    """A model's exported ONNX graph, written into ``folder``, and (f): one session of it on one thread."""

    def __init__(self, model_path: Path, folder: Path):
        self.path = folder / f"{model_path.stem}.onnx"
        exported = subprocess.run(
            [sys.executable, "-m", "filterkit", "export", str(model_path), "--onnx", str(self.path)],
            capture_output=True,
            text=True,
        )
        if exported.returncode != 0:
            sys.exit(f"filterkit export {model_path} --onnx failed:\n{exported.stderr}")
        self.graph_bytes, self.bit_equal = self.path.stat().st_size, 0
        self.session = one_thread_session(self.path)
        self.timed_round = python_rounds(self.label)

    def label(self, document: str):
        """The graph's label of ``document``, one ``run`` call."""
        return self.session.run(["label"], {"documents": np.array([document], dtype=object)})[0]

    def check(self, model, documents: list[str]) -> None:
        """Exit unless the graph's labels are ``model.predict``'s and its decision values
        ``model.decision_function``'s within 1e-6 relative, on every one of ``documents``; count the documents whose
        decision values are the same bits."""
        decisions, labels = self.session.run(["decisions", "label"], {"documents": np.array(documents, dtype=object)})
        expected = np.asarray(model.decision_function(documents), dtype=np.float64).reshape(decisions.shape)
        wrong = [
            number for number, (given, wanted) in enumerate(zip(labels, model.predict(documents))) if given != wanted
        ]
        if wrong:
            sys.exit(f"{self.path.stem}: ONNX Runtime's label differs from predict's on documents {wrong}")
        far = ~np.isclose(decisions, expected, rtol=1e-6, atol=0, equal_nan=True)
        if far.any():
            sys.exit(
                f"{self.path.stem}: ONNX Runtime's decision values are not predict's on documents "
                f"{sorted(set(np.nonzero(far)[0].tolist()))}"
            )
        same = (decisions.view(np.uint64) == expected.view(np.uint64)) | (np.isnan(decisions) & np.isnan(expected))
        self.bit_equal = int(same.all(axis=1).sum())


def compiled(sources: list[Path], program: Path, *flags: str) -> None:
    """``program`` compiled from ``sources`` as issue 78 says (C99, -O2, libm)."""
    command = [COMPILER, "-std=c99", "-O2", *flags, "-o", str(program), *map(str, sources), "-lm"]
    subprocess.run(command, check=True, cwd=program.parent)


def array_bytes(program: Path) -> int:
    """The bytes of ``program``'s constant and initialized data (``size -A``: .rodata and .data), where the model's
    arrays are."""
    sections = subprocess.run(["size", "-A", str(program)], capture_output=True, text=True, check=True).stdout
    return sum(int(line.split()[1]) for line in sections.splitlines() if line.split()[:1] in ([".rodata"], [".data"]))


@cache
def cold_starts(launcher: Path, argv: tuple[str, ...], stdin: Path, starts: int) -> tuple[float, int]:
    """The median wall seconds from spawning ``argv`` (standard input from ``stdin``, output discarded) to reaping
    it, over ``starts`` runs, and the largest max RSS in bytes any run had: measured by ``launcher``
    (:data:`LAUNCHER`), a small C program, since a child's max RSS counts its parent's memory at the spawn.  Each
    measured once a run (the grain models share (a)'s pipeline)."""
    spawned = subprocess.run([str(launcher), str(starts), str(stdin), *argv], capture_output=True, text=True)
    if spawned.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed: {spawned.stderr}")
    runs = [line.split() for line in spawned.stdout.splitlines()]
    return statistics.median(int(ns) * 1e-9 for ns, _ in runs), max(int(kib) * 1024 for _, kib in runs)


def measured(paths: dict[str, TimedRound], documents: list[str], rounds: int) -> dict[str, tuple[list[float], float]]:
    """Per path, the wall seconds of each call and the CPU seconds per call, over ``rounds`` interleaved rounds."""
    for timed_round in paths.values():  # warming up: imports, caches, the first transform's plan
        timed_round(documents)
    walls: dict[str, list[float]] = {name: [] for name in paths}
    cpu = dict.fromkeys(paths, 0.0)
    for _ in range(rounds):
        for name, timed_round in paths.items():
            spent, spent_cpu = timed_round(documents)
            walls[name] += spent
            cpu[name] += spent_cpu
    return {name: (walls[name], cpu[name] / len(walls[name])) for name in paths}


def synthetic_corpus(folder: Path) -> tuple[Path, list[str], list[str], list[str]]:
    """A two-class corpus of a vocabulary past 100,000 words, the same on every run (seed :data:`SEED`): the
    training documents as an ARFF file, and as texts with their classes; the test documents.

    :data:`PSEUDO_WORDS` distinct pseudo-words of 3 to 8 letters, a tenth with one letter of ``éüøåñçöà``; a word's
    probability in a class is Zipf's 1/(rank + 2.7) times exp(0.7·z), z standard normal per word and class; each
    document holds :data:`DOCUMENT_WORDS` words drawn from its class's distribution, with a full stop after one word
    in 15, its next word capitalized."""
    generator = np.random.default_rng(SEED)
    letters, accented = np.array(list("abcdefghijklmnopqrstuvwxyz")), "éüøåñçöà"
    vocabulary: dict[str, None] = {}
    while len(vocabulary) < PSEUDO_WORDS:
        word = list(generator.choice(letters, int(generator.integers(3, 9))))
        if generator.random() < 0.1:
            word[int(generator.integers(len(word)))] = accented[int(generator.integers(len(accented)))]
        vocabulary["".join(word)] = None
    words, zipf = list(vocabulary), 1 / (np.arange(1, PSEUDO_WORDS + 1) + 2.7)
    weights = [zipf * np.exp(0.7 * generator.standard_normal(PSEUDO_WORDS)) for _ in range(2)]
    cumulative = [np.cumsum(weight / weight.sum()) for weight in weights]
    classes = ["yes", "no"]

    def documents(count: int) -> tuple[list[str], list[str]]:
        labels = generator.integers(0, 2, count)
        uniform = generator.random((count, DOCUMENT_WORDS))
        drawn_by_class = [np.searchsorted(cdf, uniform, side="right").clip(max=PSEUDO_WORDS - 1) for cdf in cumulative]
        all_drawn = np.where(labels[:, None] == 0, *drawn_by_class)
        all_stops = generator.random((count, DOCUMENT_WORDS)) < 1 / 15
        texts = []
        for drawn, stops in zip(all_drawn, all_stops):
            tokens = []
            for position, number in enumerate(drawn):
                word = words[number]
                if position == 0 or stops[position - 1]:
                    word = word[0].upper() + word[1:]
                tokens.append(word + "." if stops[position] else word)
            texts.append(" ".join(tokens))
        return texts, [classes[label] for label in labels]

    train_texts, train_labels = documents(TRAINING_DOCUMENTS)
    test_texts, _ = documents(TEST_DOCUMENTS)
    arff = folder / "synthetic-train.arff"
    rows = "".join(f"'{text}',{label}\n" for text, label in zip(train_texts, train_labels))
    arff.write_text(
        f"@relation synthetic\n@attribute text string\n@attribute class {{{','.join(classes)}}}\n@data\n{rows}",
        encoding="utf-8",
    )
    return arff, train_texts, train_labels, test_texts


def large_model(arff: Path, saved: Path):
    """The model of :data:`LARGE_CHAIN` trained on ``arff``, saved, loaded; and its vocabulary's size."""
    import filterkit
    from filterkit.plugins import load_plugins
    from filterkit.running import describe_chain
    from filterkit.tasks import ChainSpec
    from filterkit.training import train

    registry = load_plugins()
    text = describe_chain([registry.make_stage(name, params) for name, params in LARGE_CHAIN])
    train(str(arff), [ChainSpec(text, [(name, dict(params)) for name, params in LARGE_CHAIN])], registry=registry).save(
        saved
    )
    model = filterkit.load_model(saved)
    return model, text, len(model.feature_names)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def format_table(results: dict) -> list[str]:
    """Each path's p50, p99 and CPU per call in ms, and each ÷ the first path's."""
    bar_walls, bar_cpu = next(iter(results.values()))
    bar_p50, bar_p99 = statistics.median(bar_walls), percentile(bar_walls, 0.99)
    lines = [
        "| path | p50 ms | p99 ms | CPU ms/call | p50 ÷ (a) | p99 ÷ (a) | CPU ÷ (a) |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, (walls, cpu) in results.items():
        p50, p99 = statistics.median(walls), percentile(walls, 0.99)
        lines.append(
            f"| {name} | {p50 * 1e3:.4f} | {p99 * 1e3:.4f} | {cpu * 1e3:.4f} | {p50 / bar_p50:.3f} "
            f"| {p99 / bar_p99:.3f} | {cpu / bar_cpu:.3f} |"
        )
    return lines


def format_goals(goals: list[dict], empty_start: tuple[float, int], starts: int, onnx_skipped: str) -> list[str]:
    """The table of issue 78's goals: per model, the C scorer's p50, cold start and memory beside
    ``load_model(M).predict``'s, scikit-learn's pipeline's and ONNX Runtime's (unless ``onnx_skipped`` says why
    not); then whether the 100,000-word model meets them, and ONNX Runtime's figures on it."""
    measured_onnx = not onnx_skipped
    lines = [
        f"Issue 78's goals.  p50: in-process, per document, from the rounds above; cold start: process start to "
        f"exit scoring one document, median of {starts} runs; max RSS: the largest of those runs' (`wait4` in a "
        "small C launcher, whose own memory a spawned child's max RSS counts: the empty program's figure below is "
        "that floor).  C: the scorer compiled with its own `main` (`cc -std=c99 -O2 OUT.c -lm`), the document on "
        "standard input; its arrays: the program's `.rodata` + `.data`; RSS − arrays: its max RSS less all its "
        "arrays' bytes, what the goal bounds (peak memory ≤ the arrays + 5 MB).  An empty C program "
        f"(`int main(void)`) starts in {empty_start[0] * 1e3:.2f} ms with a max RSS of "
        f"{empty_start[1] / 2**20:.2f} MB.  predict: a fresh `python -c` importing filterkit, `load_model(M)`, "
        "`predict([doc])`; scikit-learn: a fresh `python -c` importing sklearn and joblib, `joblib.load` of (a)'s "
        "fitted pipeline, `predict([doc])`"
        + (
            "; ONNX: a fresh `python -c` importing numpy and onnxruntime, an `InferenceSession` of the graph "
            "`filterkit export M --onnx` wrote on one thread (`SessionOptions` intra- and inter-op threads 1), "
            "`run` on the document; its graph MB: the .onnx file's size."
            if measured_onnx
            else "."
        ),
        "",
        "| model | C p50 µs | C cold start ms | C max RSS MB | C arrays MB | C RSS − arrays MB | predict p50 µs "
        "| predict cold start ms | predict max RSS MB | scikit-learn p50 µs | scikit-learn cold start ms "
        "| scikit-learn max RSS MB |"
        + (" ONNX p50 µs | ONNX cold start ms | ONNX max RSS MB | ONNX graph MB |" if measured_onnx else ""),
        "|---|---|---|---|---|---|---|---|---|---|---|---|" + ("---|---|---|---|" if measured_onnx else ""),
    ]
    for goal in goals:
        lines.append(
            f"| {goal['name']} | {goal['c_p50'] * 1e6:.1f} | {goal['c_start'] * 1e3:.2f} | {goal['c_rss'] / 2**20:.2f} "
            f"| {goal['arrays'] / 2**20:.2f} | {(goal['c_rss'] - goal['arrays']) / 2**20:.2f} "
            f"| {goal['predict_p50'] * 1e6:.0f} | {goal['predict_start'] * 1e3:.0f} "
            f"| {goal['predict_rss'] / 2**20:.0f} | {goal['sklearn_p50'] * 1e6:.0f} "
            f"| {goal['sklearn_start'] * 1e3:.0f} | {goal['sklearn_rss'] / 2**20:.0f} |"
            + (
                f" {goal['onnx_p50'] * 1e6:.0f} | {goal['onnx_start'] * 1e3:.0f} | {goal['onnx_rss'] / 2**20:.0f} "
                f"| {goal['graph_bytes'] / 2**20:.2f} |"
                if measured_onnx
                else ""
            )
        )
    large = goals[-1]
    verdicts = [
        (
            "p50 ≤ 20 µs",
            large["c_p50"] <= GOAL_P50_S,
            f"{large['c_p50'] * 1e6:.1f} µs; the rounds' p50s {min(large['c_round_p50s']) * 1e6:.1f} to "
            f"{max(large['c_round_p50s']) * 1e6:.1f} µs",
        ),
        ("cold start ≤ 10 ms", large["c_start"] <= GOAL_START_S, f"{large['c_start'] * 1e3:.2f} ms"),
        (
            "memory ≤ 5 MB beyond the arrays",
            large["c_rss"] - large["arrays"] <= GOAL_MEMORY_BYTES,
            f"{(large['c_rss'] - large['arrays']) / 2**20:.2f} MB",
        ),
    ]
    lines += [
        "",
        "The C scorer of the 100,000-word model against the goals: "
        + "; ".join(f"{goal} {'met' if met else 'NOT met'} ({figure})" for goal, met, figure in verdicts)
        + ".  "
        + (onnx_summary(large) if measured_onnx else f"ONNX Runtime is not measured: {onnx_skipped}."),
    ]
    return lines


def onnx_summary(large: dict) -> str:
    """ONNX Runtime's p50 and cold start on the 100,000-word model, each beside predict's and scikit-learn's."""
    return (
        f"ONNX Runtime on it (one thread): p50 {large['onnx_p50'] * 1e6:.0f} µs a document, "
        f"{large['onnx_p50'] / large['predict_p50']:.2f}× `load_model(M).predict`'s "
        f"({large['predict_p50'] * 1e6:.0f} µs) and {large['onnx_p50'] / large['sklearn_p50']:.2f}× scikit-learn's "
        f"({large['sklearn_p50'] * 1e6:.0f} µs); "
        f"cold start {large['onnx_start'] * 1e3:.0f} ms, against predict's {large['predict_start'] * 1e3:.0f} ms and "
        f"scikit-learn's {large['sklearn_start'] * 1e3:.0f} ms."
    )


def format_report(grain: dict, large: dict, goals: list[dict], settings: dict) -> str:
    """The section of RESULTS.md: the grain paths' table, the 100,000-word model's, and the goals'."""
    lines = [
        HEADING,
        "",
        f"`{settings['command']}` on {time.strftime('%Y-%m-%d')} at commit {_commit()}, {os.cpu_count()} cores "
        f"({settings['machine']}), load average {settings['load']:.2f} at the start; Python {sys.version.split()[0]}, "
        f"{settings['compiler']}.  Each table: {settings['documents']} documents one per call, {settings['rounds']} "
        f"interleaved rounds ({settings['rounds'] * settings['documents']} calls a path); ms of wall time per call "
        "(median, 99th percentile) and of CPU per call; ÷ (a): the same figure over (a)'s in this run.  (e)'s "
        "decision values were checked equal to (d)'s `decision_function` bit for bit, and its answers to "
        f"`predict`'s, on every document timed.  {settings['onnx_check']}",
        "",
        "Fitted on Weka's `ReutersGrain-train.arff`, asked about `ReutersGrain-test.arff`:",
        "",
        *format_table(grain),
        "",
        f"A 100,000-word vocabulary: {settings['vocabulary']:,} words kept by `{settings['large_chain']}` from "
        f"{TRAINING_DOCUMENTS:,} synthetic training documents of {DOCUMENT_WORDS} words (seed {SEED}: Zipf-distributed "
        "pseudo-words, a tenth with a letter past ASCII, two classes), asked about test documents of "
        f"{DOCUMENT_WORDS} words:",
        "",
        *format_table(large),
        "",
        *format_goals(goals, settings["empty_start"], settings["starts"], settings["onnx_skipped"]),
    ]
    return "\n".join(lines) + "\n"


def onnx_settings(served: list[Served], documents: int) -> dict[str, str]:
    """What the report says of (f): why it is skipped (empty where it is not), and what its check found."""
    missing = missing_onnx()
    if missing is not None:
        skipped = f"{missing} is not installed (`pip install 'filterkit-arff[onnx]'`)"
        return {"onnx_skipped": skipped, "onnx_check": f"(f), ONNX Runtime, is skipped: {skipped}."}
    bit_equal = sum(model.graph.bit_equal for model in served if model.graph is not None)
    return {
        "onnx_skipped": "",
        "onnx_check": "(f)'s labels were checked equal to `predict`'s, and its decision values to "
        f"`decision_function`'s within 1e-6 relative, on every document timed: the same bits on {bit_equal:,} of "
        f"{documents * len(served):,} (documents × models).",
    }


def machine() -> str:
    """The CPU's model name, as /proc/cpuinfo gives it."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def python_start(code: str, *arguments: Path) -> tuple[str, ...]:
    """A fresh Python running ``code`` with ``arguments``; the document on its standard input."""
    return (sys.executable, "-c", code, *map(str, arguments))


PREDICT_START = "import sys, filterkit; filterkit.load_model(sys.argv[1]).predict([sys.stdin.read()])"
SKLEARN_START = "import sys, sklearn, joblib; joblib.load(sys.argv[1]).predict([sys.stdin.read()])"
#: (f)'s cold start: the session of :func:`one_thread_session`, one ``run`` of the document.
ONNX_START = (
    "import sys, numpy, onnxruntime; options = onnxruntime.SessionOptions(); "
    "options.intra_op_num_threads = options.inter_op_num_threads = 1; "
    "session = onnxruntime.InferenceSession(sys.argv[1], options, providers=['CPUExecutionProvider']); "
    "session.run(['label'], {'documents': numpy.array([sys.stdin.read()], dtype=object)})"
)


@dataclass
class Served:
    """A model as the goals' table compares it: its C scorer, its saved file, (a)'s saved pipeline of the same
    corpus, the document a cold start scores, the names of its C, predict and scikit-learn paths, and its ONNX
    graph (None where (f) is skipped)."""

    name: str
    chain: str
    scorer: CScorer
    model_path: Path
    pipeline_path: Path
    document: Path
    paths: tuple[str, str, str]
    graph: OnnxGraph | None


def goal_row(served: Served, results: dict, rounds: int, launcher: Path, starts: int) -> dict:
    """One row of the goals' table: ``served``'s p50s in ``results`` (and its C scorer's p50 in each of the
    ``rounds``) and its cold starts (the ONNX figures None where (f) is skipped)."""
    c_start, c_rss = cold_starts(launcher, (str(served.scorer.program), "-0"), served.document, starts)
    predict_start, predict_rss = cold_starts(
        launcher, python_start(PREDICT_START, served.model_path), served.document, starts
    )
    sklearn_start, sklearn_rss = cold_starts(
        launcher, python_start(SKLEARN_START, served.pipeline_path), served.document, starts
    )
    c_p50, predict_p50, sklearn_p50 = (statistics.median(results[path][0]) for path in served.paths)
    c_walls = results[served.paths[0]][0]
    per_round = len(c_walls) // rounds
    c_round_p50s = [statistics.median(c_walls[at : at + per_round]) for at in range(0, len(c_walls), per_round)]
    onnx: dict[str, float | None] = dict.fromkeys(("onnx_p50", "onnx_start", "onnx_rss", "graph_bytes"))
    if served.graph is not None:
        onnx["onnx_start"], onnx["onnx_rss"] = cold_starts(
            launcher, python_start(ONNX_START, served.graph.path), served.document, starts
        )
        onnx["onnx_p50"] = statistics.median(results[onnx_path(served.chain)][0])
        onnx["graph_bytes"] = served.graph.graph_bytes
    return {
        "name": served.name,
        "c_p50": c_p50,
        "c_round_p50s": c_round_p50s,
        "c_start": c_start,
        "c_rss": c_rss,
        "arrays": served.scorer.array_bytes,
        "predict_p50": predict_p50,
        "predict_start": predict_start,
        "predict_rss": predict_rss,
        "sklearn_p50": sklearn_p50,
        "sklearn_start": sklearn_start,
        "sklearn_rss": sklearn_rss,
        **onnx,
    }


BAR = "(a) TfidfVectorizer + LinearSVC"


def exported_path(text: str) -> str:
    return f"(e) exported C scorer, decide + answer: {text}"


def predicted_path(text: str) -> str:
    return f"(d) load_model(M).predict: {text}"


def onnx_path(text: str) -> str:
    return f"(f) ONNX Runtime, one thread, run: {text}"


def onnx_graph(model_path: Path, model, folder: Path, documents: list[str]) -> OnnxGraph | None:
    """(f) of the model at ``model_path``, checked against ``model`` on ``documents``; None where it is skipped."""
    if missing_onnx() is not None:
        return None
    graph = OnnxGraph(model_path, folder)
    graph.check(model, documents)
    return graph


def grain_results(folder: Path, documents: list[str], rounds: int) -> tuple[dict, list[Served]]:
    """(a) to (f) on Reuters grain, timed on ``documents``; each model as the goals' table compares it."""
    import filterkit
    from filterkit.sklearn import load_arff

    train_documents, train_labels, _ = load_arff(TRAIN)
    paths, pipeline = sklearn_paths(train_documents[:, 0].tolist(), train_labels, folder)
    chains, models = chain_paths(folder)
    paths.update(chains)
    document = folder / "grain-document"
    document.write_bytes(documents[0].encode("utf-8"))
    served = []
    for text, model_path in models.items():
        model = filterkit.load_model(model_path)
        scorer = CScorer(model_path, folder)
        scorer.check(model, documents)
        paths[exported_path(text)] = scorer.timed_round
        graph = onnx_graph(model_path, model, folder, documents)
        if graph is not None:
            paths[onnx_path(text)] = graph.timed_round
        names = (exported_path(text), predicted_path(text), BAR)
        served.append(Served(f"grain: {text}", text, scorer, model_path, pipeline, document, names, graph))
    print(f"Reuters grain: {len(paths)} paths, {rounds} rounds", file=sys.stderr)
    return measured(paths, documents, rounds), served


def large_results(folder: Path, count: int, rounds: int) -> tuple[dict, Served, int]:
    """(a), (d), (e) and (f) on the 100,000-word model, timed on ``count`` of its test documents; the model as the
    goals' table compares it; and its vocabulary's size."""
    arff, texts, labels, tests = synthetic_corpus(folder)
    model_path = folder / "large.json"
    model, text, vocabulary = large_model(arff, model_path)
    print(f"the 100,000-word model keeps {vocabulary:,} words", file=sys.stderr)
    if vocabulary < LEAST_VOCABULARY:
        sys.exit(f"the synthetic corpus gives {vocabulary:,} words, fewer than {LEAST_VOCABULARY:,}")
    documents = tests[:count]
    scorer = CScorer(model_path, folder)
    scorer.check(model, documents)
    pipeline, pipeline_path = tfidf_pipeline(texts, labels, folder / "large-tfidf.joblib")
    paths = {
        BAR: python_rounds(lambda document: pipeline.predict([document])),
        predicted_path(text): prediction_rounds(model),
        exported_path(text): scorer.timed_round,
    }
    graph = onnx_graph(model_path, model, folder, documents)
    if graph is not None:
        paths[onnx_path(text)] = graph.timed_round
    document = folder / "large-document"
    document.write_bytes(documents[0].encode("utf-8"))
    names = (exported_path(text), predicted_path(text), BAR)
    served = Served(f"{vocabulary:,} words: {text}", text, scorer, model_path, pipeline_path, document, names, graph)
    print(f"{vocabulary:,} words: {len(paths)} paths, {rounds} rounds", file=sys.stderr)
    return measured(paths, documents, rounds), served, vocabulary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--documents", type=int, default=200)
    parser.add_argument("--starts", type=int, default=20, help="cold starts a program, median taken (default 20)")
    parser.add_argument("--quick", action="store_true", help="2 rounds, 40 documents, 5 starts; write nothing")
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.documents, args.starts = 2, 40, 5
    if not TRAIN.is_file() or not TEST.is_file():
        sys.exit(f"{TRAIN} is not installed (Debian's weka package ships it)")
    from filterkit.sklearn import load_arff

    load = os.getloadavg()[0]
    test_documents, _, _ = load_arff(TEST)
    documents = test_documents[: args.documents, 0].tolist()
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        launcher, empty = folder / "launcher", folder / "empty"
        (folder / "launcher.c").write_text(LAUNCHER)
        (folder / "empty.c").write_text("int main(void) { return 0; }\n")
        compiled([folder / "launcher.c"], launcher)
        compiled([folder / "empty.c"], empty)
        grain, grain_served = grain_results(folder, documents, args.rounds)
        large, large_served, vocabulary = large_results(folder, len(documents), args.rounds)
        print(f"cold starts, {args.starts} of each", file=sys.stderr)
        empty_start = cold_starts(launcher, (str(empty),), folder / "empty.c", args.starts)
        goals = [goal_row(served, grain, args.rounds, launcher, args.starts) for served in grain_served]
        goals.append(goal_row(large_served, large, args.rounds, launcher, args.starts))
    compiler = subprocess.run([COMPILER, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    settings = {
        "command": " ".join(["python", "benchmarks/latency.py", *sys.argv[1:]]),
        "machine": machine(),
        "load": load,
        "compiler": compiler,
        "documents": len(documents),
        "rounds": args.rounds,
        "vocabulary": vocabulary,
        "large_chain": large_served.chain,
        "empty_start": empty_start,
        "starts": args.starts,
        **onnx_settings([*grain_served, large_served], len(documents)),
    }
    report = format_report(grain, large, goals, settings)
    if not args.quick:
        replace_section(args.out, HEADING, report)
    print(report)


if __name__ == "__main__":
    main()
