"""``filterkit train`` against scikit-learn's ``GridSearchCV`` doing the equivalent search (issue 75, item 5).

    python benchmarks/train.py [--corpora debian10,grain,debian20,man] [--max-train N] [--max-train-of CORPORA]
                               [--routes full-1,full-all,early-1,early-all,flat-1,flat-all,nested-1,nested-all,
                                         grid-1,grid-all,compare-1,cv-1]
                               [--repeats 1]
                               [--fresh] [--man-per-section 300]
                               [--inputs benchmarks/.inputs/train] [--out benchmarks/RESULTS.md]

Corpora, train/test ARFF pairs (a string attribute and a nominal class), built from what benchmarks/corpora.py
builds (its ``build`` runs first when its files are missing):

- ``debian10``: Debian package descriptions in the 10 sections with the most training documents (corpora.py's
  ``debian10-*`` files: many short documents in 10 classes; macro-F1).
- ``grain``: Weka's Reuters grain, one class against the rest (F1 of the class ``1``).
- ``debian20``: the Debian descriptions of corpora.py's ``debian-*`` files (the same split by the package name's
  hash) in the 20 sections with the most training documents: many classes of short text (macro-F1).
- ``man``: long documents with large vocabularies: this machine's manual pages (``/usr/share/man/man*/``, English
  only), each rendered as plain text by ``man -l`` (``MANWIDTH=80``, ``col -b``), its section (``1`` … ``8``) the
  class; at most ``--man-per-section`` pages a section (those with the smallest SHA-256 of their file name), a
  section kept where it has 50 pages or more, a page repeating an earlier one word for word left out, the test split
  by the file name's hash as corpora.py splits packages (macro-F1).

``--max-train N`` keeps (on the corpora of ``--max-train-of``, every one unless given), of a training file with
more rows, the N rows whose lines have the smallest SHA-256 (in their order): the same rows on every run, so that a
run fits its time; the test file is whole.

Each route's measured rounds are kept in ``--inputs/runs/*.rounds.json`` and reused by a later invocation asking
for the same corpus file and route (``--fresh``: measure them again), so that a run stopped for time, or one
adding a corpus, need not measure again what it has; the table says when each round was measured and the load
average then.

Routes, each command its own process, CPU seconds (user + system, the workers included) and wall seconds from
``wait4`` (benchmarks/run.py's :func:`measure`), the median of ``--repeats`` interleaved rounds:

- ``full-1``, ``full-all``, ``early-1``, ``early-all``: ``filterkit train`` with its default candidates (no chain;
  ``--multiclass`` on k classes, ``--positive 1`` on grain), ``--svm-c-search full`` or ``early``, ``--jobs 1`` or
  ``--jobs`` = every core, then ``filterkit predict`` of the test file; the route's seconds are the two commands'
  together, its F1 that of the predicted labels.
  Their search is ``train``'s default, ``--search auto`` (flat on more than two classes, nested on grain).
- ``pair-1``: two of ``early-1``'s ``train`` at once (each its own model), then ``predict`` with the first's model:
  how much one ``--jobs 1`` run is slowed by a second beside it on this host (caches, memory bandwidth, a shared
  core), and so the best ``--jobs 2`` ÷ ``--jobs 1`` two processes can reach here (half that slowing, before the
  parent's own work).
- ``flat-1``, ``flat-all``: the same with ``--search flat`` (chain and C scored in one cross-validation, C searched
  early); ``nested-1``, ``nested-all`` with ``--search nested`` (C searched early), the default before
  docs/RESULTS.md §10.11.
- ``grid-1``, ``grid-all``: ``GridSearchCV(Pipeline(TfidfVectorizer(lowercase=True), LinearSVC()))`` over the
  equivalent search: 4 representations (``sublinear_tf`` False/True × ``ngram_range`` (1, 1)/(1, 2): as many as
  filterkit's default candidates, not the same ones) × C in {0.01, 0.1, 1, 10, 100} × 5 stratified folds
  (shuffled, seed 1: not filterkit's folds, as many), scored by macro-F1 (F1 of the positive class on grain),
  ``n_jobs=1`` or ``-1``; the refit pipeline's F1 on the test file.  The process reads the ARFF files with
  filterkit's reader.
- ``compare-1``: ``filterkit evaluate --compare --json`` of ``train``'s default candidates of the nested search
  (filterkit.training's ``default_candidates`` for the task: ``shape --multiclass max`` on more than two classes;
  ``evaluate --compare`` scores them nested, the search ``train --search nested`` makes) on the training file, with
  the settings ``train`` scores its candidates with: the candidates'
  folds (``CANDIDATE_FOLDS``, 5), seed 1, the svm's ``trained_defaults`` (``--svm-c-by f1 --svm-c-search early``,
  5 inner folds), ``--jobs 1``; it writes its report alone (no test file, no model).  Its F1 is the mean over the
  5 folds of each fold's F1 (macro-F1) of the candidate ``train`` would keep (the best AUC), the one shown as
  picked: the figure ``cross_validate`` gives, not evaluate's pooled F1 of the counts summed over the folds.
- ``cv-1``: the equivalent scikit-learn loop, for each of ``grid-1``'s 4 representations ``cross_validate`` (5
  stratified folds, shuffled, seed 1, ``n_jobs=1``) of ``Pipeline(TfidfVectorizer(...), GridSearchCV(LinearSVC(),
  C in {0.01, 0.1, 1, 10, 100}, 5 inner stratified folds, the task's F1))``.  The vectorizer sits outside the C
  search because that is where evaluate's chain sits: in each outer fold the chain is fitted once on the fold's
  training rows, and the svm picks C by its own inner cross-validation over those rows' features
  (plugins/classifiers.py ``_fit_one_vs_rest``), then is refitted on them at that C, as ``GridSearchCV``'s refit
  is; ``GridSearchCV(Pipeline)`` inside ``cross_validate`` would refit the vectorizer in every inner fold, work
  that evaluate does not do.  scikit-learn scores every C (evaluate's early search stops at the first C that does
  not improve).  Its F1 is the best representation's mean test-fold F1, that representation shown as picked.

F1 is scikit-learn's ``f1_score`` of the test file's labels (macro over the classes, or of the positive class), as
docs/RESULTS.md §10 computes it; filterkit's predicted labels are scored by :func:`f1_of`, the same figure.  The
section of ``--out`` under "``train`` against GridSearchCV" is rewritten with the command line, date, commit,
cores, load average, the table and, per corpus, the ratios filterkit ÷ GridSearchCV (CPU with one job each, wall
with every core each), a route with every core against the same with one (wall: ``train`` alone, the command
``--jobs`` is an option of, as issue 75's two-core goal measures it; and with ``predict``, which runs alike in both)
and compare-1 ÷ cv-1 (CPU) beside them (issue 75's goal: ``evaluate --compare`` at the same ratio to the equivalent
``cross_validate`` loop as ``train`` to ``GridSearchCV``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpora  # noqa: E402  (benchmarks/corpora.py: the corpora this benchmark starts from)
from run import _commit, adopt_orphans, measure, replace_section  # noqa: E402  (benchmarks/run.py: the measuring)

HERE = Path(__file__).resolve().parent
DEFAULT_INPUTS = HERE / ".inputs" / "train"
CORPORA_DATA = corpora.DEFAULT_INPUTS / "data"
MAN_ROOT = Path("/usr/share/man")
HEADING = "## `train` against GridSearchCV (`train.py`)"

#: Each corpus: its class attribute's positive class, or None for every class at once (macro-F1).
CORPUS_TASKS = {"debian10": None, "grain": "1", "debian20": None, "man": None}
ROUTES = (
    "full-1",
    "full-all",
    "early-1",
    "early-all",
    "pair-1",
    "flat-1",
    "flat-all",
    "nested-1",
    "nested-all",
    "grid-1",
    "grid-all",
    "compare-1",
    "cv-1",
)
C_VALUES = (0.01, 0.1, 1, 10, 100)

#: What the scikit-learn routes share: reading an ARFF file's documents and classes with filterkit's reader.
READ_DOCUMENTS = r"""
import json, sys
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics import f1_score, make_scorer
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_validate
from sklearn.pipeline import Pipeline
from sklearn.svm import LinearSVC
from filterkit.arff import read_arff

def documents(path):
    schema, chunk = read_arff(path)
    labels = schema.attributes[-1].labels
    return [text or "" for text in chunk.text[0]], [labels[int(value)] for value in chunk.values[:, -1]]
"""

#: The GridSearchCV route: train file, test file, positive class ("" for macro-F1), n_jobs, C values; prints its JSON.
GRID_SEARCH = (
    READ_DOCUMENTS
    + r"""
train_path, test_path, positive, jobs = sys.argv[1:5]
(train_documents, train_classes), (test_documents, test_classes) = documents(train_path), documents(test_path)
score = make_scorer(f1_score, pos_label=positive) if positive else "f1_macro"
search = GridSearchCV(
    Pipeline([("tfidf", TfidfVectorizer(lowercase=True)), ("svm", LinearSVC())]),
    {
        "tfidf__sublinear_tf": [False, True],
        "tfidf__ngram_range": [(1, 1), (1, 2)],
        "svm__C": [float(value) for value in sys.argv[5].split(",")],
    },
    scoring=score,
    cv=StratifiedKFold(5, shuffle=True, random_state=1),
    n_jobs=int(jobs),
)
search.fit(train_documents, train_classes)
predicted = search.predict(test_documents)
averaged = {"pos_label": positive} if positive else {"average": "macro"}
f1 = f1_score(test_classes, predicted, **averaged)
best = search.best_params_
picked = f"sublinear_tf={best['tfidf__sublinear_tf']} ngram_range={best['tfidf__ngram_range']} C={best['svm__C']}"
print(json.dumps({"f1": f1, "picked": picked}))
"""
)

#: The cross_validate route: train file, positive class ("" for macro-F1), C values; prints its JSON.
CROSS_VALIDATE = (
    READ_DOCUMENTS
    + r"""
train_path, positive = sys.argv[1:3]
train_documents, train_classes = documents(train_path)
score = make_scorer(f1_score, pos_label=positive) if positive else "f1_macro"
found = {}
for sublinear_tf in (False, True):
    for ngram_range in ((1, 1), (1, 2)):
        searched = GridSearchCV(
            LinearSVC(),
            {"C": [float(value) for value in sys.argv[3].split(",")]},
            scoring=score,
            cv=StratifiedKFold(5, shuffle=True, random_state=1),
            n_jobs=1,
        )
        pipeline = Pipeline(
            [("tfidf", TfidfVectorizer(lowercase=True, sublinear_tf=sublinear_tf, ngram_range=ngram_range)),
             ("svm", searched)]
        )
        scores = cross_validate(
            pipeline, train_documents, train_classes, scoring=score,
            cv=StratifiedKFold(5, shuffle=True, random_state=1), n_jobs=1,
        )
        found[f"sublinear_tf={sublinear_tf} ngram_range={ngram_range}"] = float(scores["test_score"].mean())
picked = max(found, key=found.get)
print(json.dumps({"f1": found[picked], "picked": picked, "scores": found}))
"""
)

#: What ``train`` with no chain scores on a training file (its path, "1" for --multiclass): its default candidates
#: and the evaluate options that score them as ``train`` does; prints them as JSON.
TRAIN_SCORING = r"""
import json, sys
import numpy as np
from filterkit.arff import read_arff
from filterkit.evaluation import worker_registry
from filterkit.training import CANDIDATE_FOLDS, default_candidates

path, multiclass = sys.argv[1], sys.argv[2] == "1"
schema, chunk = read_arff(path)
classes = chunk.values[:, -1]
registry = worker_registry(None)
several_classes = multiclass and len(np.unique(classes[~np.isnan(classes)])) > 2
chains = [chain.text for chain in default_candidates(schema, registry, several_classes)]
svm = registry.classifier("svm").trained_defaults
options = ["--folds", str(CANDIDATE_FOLDS), "--seed", "1"]
for name, value in sorted(svm.items()):
    options += ["--svm-" + name.replace("_", "-"), str(value)]
print(json.dumps({"chains": chains, "options": options}))
"""


def data_lines(path: Path) -> tuple[list[str], list[str]]:
    """An ARFF file written one row a line: its header lines (through ``@data``) and its row lines."""
    lines = path.read_text(encoding="utf-8").splitlines()
    at_data = next(index for index, line in enumerate(lines) if line.strip().lower() == "@data")
    return lines[: at_data + 1], [line for line in lines[at_data + 1 :] if line.strip() and not line.startswith("%")]


def label_of(row: str) -> str:
    """The class of a row line whose class is its last value."""
    return row.rsplit(",", 1)[1].strip()


def with_labels(header: list[str], labels: list[str]) -> list[str]:
    """``header`` with its last attribute (the class) declared as ``labels``."""
    last = max(index for index, line in enumerate(header) if line.lower().startswith("@attribute"))
    name = header[last].split()[1]
    return header[:last] + [f"@attribute {name} {{{','.join(labels)}}}"] + header[last + 1 :]


def write_lines(path: Path, header: list[str], rows: list[str]) -> None:
    """An ARFF file of ``header`` and ``rows``."""
    path.write_text("\n".join(header + rows) + "\n", encoding="utf-8")


def largest_classes(train: Path, test: Path, folder: Path, stem: str, top: int) -> None:
    """``stem``-train/-test.arff in ``folder``: the rows of ``train`` and ``test`` in the ``top`` classes with the
    most training rows (ties by name), the class declared with those alone."""
    header, rows = data_lines(train)
    counts: dict[str, int] = {}
    for row in rows:
        counts[label_of(row)] = counts.get(label_of(row), 0) + 1
    kept = sorted(sorted(counts, key=lambda label: (-counts[label], label))[:top])
    for part, path in (("train", train), ("test", test)):
        header, rows = data_lines(path)
        write_lines(folder / f"{stem}-{part}.arff", with_labels(header, kept), [r for r in rows if label_of(r) in kept])


def rendered_page(path: Path) -> str:
    """A manual page as plain text (``man -l``, 80 columns, overstrikes removed); empty where it fails."""
    environment = {**os.environ, "MANWIDTH": "80", "MAN_KEEP_FORMATTING": "0"}
    shown = subprocess.run(["man", "-l", str(path)], capture_output=True, env=environment, timeout=60)
    plain = subprocess.run(["col", "-b"], input=shown.stdout, capture_output=True)
    return plain.stdout.decode("utf-8", errors="replace").strip()


def man_corpus(folder: Path, per_section: int) -> None:
    """man-train/-test.arff in ``folder``: manual pages by section (see the module's docstring)."""
    chosen: list[tuple[str, Path]] = []
    for section_folder in sorted(MAN_ROOT.glob("man[1-8]")):
        pages = sorted(section_folder.iterdir(), key=lambda page: hashlib.sha256(page.name.encode()).hexdigest())
        pages = [page for page in pages if page.is_file() and not page.is_symlink()][:per_section]
        if len(pages) >= 50:
            chosen.extend((section_folder.name[3:], page) for page in pages)
    with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        texts = list(pool.map(rendered_page, (page for _, page in chosen)))
    seen, train, test = set(), [], []
    for (section, page), text in sorted(zip(chosen, texts), key=lambda found: found[0][1].name):
        if not text or text in seen:
            continue
        seen.add(text)
        (test if corpora.residue(page.name, 10) in corpora.TEST_RESIDUES else train).append((text, section))
    sections = sorted({section for _, section in train})
    for part, rows in (("train", train), ("test", [row for row in test if row[1] in sections])):
        corpora.write_arff(folder / f"man-{part}.arff", f"man-{part}", "man_section", sections, rows)


def subsampled(path: Path, target: Path, rows_kept: int) -> None:
    """``target``: ``path`` with at most ``rows_kept`` rows, those whose lines have the smallest SHA-256."""
    header, rows = data_lines(path)
    if len(rows) > rows_kept:
        ranked = sorted(range(len(rows)), key=lambda index: hashlib.sha256(rows[index].encode()).hexdigest())
        keep = set(ranked[:rows_kept])
        rows = [row for index, row in enumerate(rows) if index in keep]
    write_lines(target, header, rows)


def corpus_paths(inputs: Path, corpus: str, max_train: int | None) -> dict[str, Path]:
    """The train and test files a run of ``corpus`` reads, and the file of its test rows' labels."""
    suffix = f"-max{max_train}" if max_train else ""
    return {
        "train": inputs / f"{corpus}{suffix}-train.arff",
        "test": inputs / f"{corpus}-test.arff",
        "labels": inputs / f"{corpus}-test.labels",
    }


def make_inputs(inputs: Path, chosen: list[str], max_train: int | None, per_section: int) -> None:
    """Every chosen corpus's files under ``inputs`` (kept where present), corpora.py's built first if missing."""
    inputs.mkdir(parents=True, exist_ok=True)
    if not (CORPORA_DATA / "debian10-train.arff").exists():
        corpora.build(corpora.DEFAULT_INPUTS, quick=False)
    for corpus in chosen:
        whole, test = inputs / f"{corpus}-train.arff", inputs / f"{corpus}-test.arff"
        if not whole.exists():
            if corpus == "debian20":
                largest_classes(
                    CORPORA_DATA / "debian-train.arff", CORPORA_DATA / "debian-test.arff", inputs, corpus, 20
                )
            elif corpus == "man":
                man_corpus(inputs, per_section)
            else:
                shutil.copyfile(CORPORA_DATA / f"{corpus}-train.arff", whole)
                shutil.copyfile(CORPORA_DATA / f"{corpus}-test.arff", test)
        paths = corpus_paths(inputs, corpus, max_train)
        if not paths["train"].exists():
            subsampled(whole, paths["train"], max_train or 0)
        if not paths["labels"].exists():
            paths["labels"].write_text("\n".join(label_of(row) for row in data_lines(test)[1]) + "\n")


def f1_of(truth: list[str], predicted: list[str], positive: str | None) -> float:
    """Macro-F1 of ``predicted`` against ``truth``, or the F1 of the class ``positive``."""
    classes = [positive] if positive else sorted(set(truth))
    scores = []
    for label in classes:
        true_positive = sum(t == label and p == label for t, p in zip(truth, predicted))
        predicted_count, true_count = predicted.count(label), truth.count(label)
        scores.append(2 * true_positive / (predicted_count + true_count) if predicted_count + true_count else 0.0)
    return sum(scores) / len(scores)


def route_commands(route: str, paths: dict[str, Path], positive: str | None, folder: Path) -> list[list[str]]:
    """The commands of one route, in order."""
    filterkit = shutil.which("filterkit") or str(Path(sys.executable).with_name("filterkit"))
    kind, jobs = route.split("-")
    values = ",".join(str(value) for value in C_VALUES)
    if kind == "grid":
        n_jobs = "1" if jobs == "1" else "-1"
        return [
            [sys.executable, "-c", GRID_SEARCH, str(paths["train"]), str(paths["test"]), positive or "", n_jobs, values]
        ]
    if kind == "cv":
        return [[sys.executable, "-c", CROSS_VALIDATE, str(paths["train"]), positive or "", values]]
    task = ["--positive", positive] if positive else ["--multiclass"]
    if kind == "compare":
        scoring = train_scoring(paths["train"], positive)
        evaluate = [filterkit, "evaluate", "--compare", "--json", "-q", *task, *scoring["options"], "--jobs", "1"]
        return [evaluate + [str(paths["train"]), *scoring["chains"]]]
    model = folder / f"{paths['train'].stem}.{route}.json"
    workers = "1" if jobs == "1" else str(os.cpu_count() or 1)
    searches = {"flat": ["--search", "flat", "--svm-c-search", "early"], "nested": ["--search", "nested"]}
    search = searches.get(kind, ["--svm-c-search", "early" if kind == "pair" else kind])
    train = [filterkit, "train", "-q", *task, *search, "--jobs", workers, "-o", str(model)]
    if kind == "pair":  # two of early-1's train at once, the second's model beside the first's
        first, second = (shlex.join([*train[:-1], str(path), str(paths["train"])]) for path in (model, f"{model}.2"))
        both = f"{first} & started=$!; {second}; status=$?; wait $started && exit $status"
        return [["bash", "-c", both], [filterkit, "predict", str(model), str(paths["test"])]]
    return [train + [str(paths["train"])], [filterkit, "predict", str(model), str(paths["test"])]]


def train_scoring(train: Path, positive: str | None) -> dict:
    """``train``'s default candidates on ``train`` and the evaluate options that score them as ``train`` does
    (:data:`TRAIN_SCORING`, in a process of its own: the corpus it reads is not in this one's memory)."""
    command = [sys.executable, "-c", TRAIN_SCORING, str(train), "0" if positive else "1"]
    return json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout)


def kept_candidate(report: dict, positive: str | None) -> tuple[float, str]:
    """The mean over the folds of the F1 (macro-F1) of the chain ``train`` would keep from an ``evaluate --compare
    --json`` report (the best AUC, the first on a tie), and that chain."""
    measure, f1 = ("auc", "f1_fold_mean") if positive else ("macro_auc", "macro_f1_fold_mean")
    results = report["results"]
    best = max(range(len(results)), key=lambda k: (results[k][measure], -k))
    return results[best][f1], results[best]["chain"]


def run_route(route: str, paths: dict[str, Path], positive: str | None, folder: Path) -> dict:
    """One run of a route: wall and CPU seconds of its commands together, the largest peak RSS, test F1, pick."""
    output = folder / f"{paths['train'].stem}.{route}.out"
    wall = cpu = 0.0
    peak = 0
    walls = []
    for command in route_commands(route, paths, positive, folder):
        elapsed, rss, used = measure(command, output)
        wall, cpu, peak = wall + elapsed, cpu + used, max(peak, rss)
        walls.append(elapsed)
    if route.startswith(("grid", "cv")):
        found = json.loads(output.read_text())
        f1, picked = found["f1"], found["picked"]
    elif route.startswith("compare"):
        f1, picked = kept_candidate(json.loads(output.read_text()), positive)
    else:
        rows = output.read_text().splitlines()[1:]
        predicted = [row.split(",")[1] for row in rows]
        truth = paths["labels"].read_text().split()
        f1 = f1_of(truth, predicted, positive)
        model = json.loads((folder / f"{paths['train'].stem}.{route}.json").read_text())
        picked = model["classifier"]["chain"]
    return {"wall": wall, "first_wall": walls[0], "cpu": cpu, "peak": peak, "f1": f1, "picked": picked}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpora", default="debian10,grain", help="Comma-separated: " + ",".join(CORPUS_TASKS))
    parser.add_argument("--routes", default=",".join(ROUTES), help="Comma-separated: " + ",".join(ROUTES))
    parser.add_argument("--max-train", type=int, default=None, help="At most this many training rows a corpus.")
    parser.add_argument(
        "--max-train-of", default="", help="Comma-separated corpora --max-train applies to (default: every one)."
    )
    parser.add_argument("--man-per-section", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--fresh", action="store_true", help="Measure every round again, the stored ones too.")
    parser.add_argument(
        "--report-only", action="store_true", help="Write the section from the stored rounds; measure nothing."
    )
    parser.add_argument("--inputs", type=Path, default=DEFAULT_INPUTS)
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    parser.add_argument("--write-inputs", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    chosen = [name for name in args.corpora.split(",") if name]
    routes = [name for name in args.routes.split(",") if name]
    unknown = sorted(set(chosen) - set(CORPUS_TASKS)) + sorted(set(routes) - set(ROUTES))
    if unknown:
        parser.error(f"unknown corpora or routes: {', '.join(unknown)}")
    limited = set(args.max_train_of.split(",")) if args.max_train_of else set(chosen)
    limits = {corpus: args.max_train if corpus in limited else None for corpus in chosen}
    if args.write_inputs:
        corpus = args.write_inputs
        make_inputs(args.inputs, [corpus], limits[corpus], args.man_per_section)
        return
    # written by processes of their own, gone before the runs: a run forked from a process holding the corpora
    # would count their memory in its peak RSS
    for corpus in chosen:
        subprocess.run([sys.executable, __file__, *sys.argv[1:], "--write-inputs", corpus], check=True)
    adopt_orphans()
    folder = args.inputs / "runs"
    folder.mkdir(exist_ok=True)
    sizes = {corpus: corpus_sizes(corpus_paths(args.inputs, corpus, limits[corpus])) for corpus in chosen}
    stored = {
        (corpus, route): rounds_file(folder, corpus_paths(args.inputs, corpus, limits[corpus]), route)
        for corpus in chosen
        for route in routes
    }
    runs = {
        key: [] if args.fresh or not path.exists() else json.loads(path.read_text()) for key, path in stored.items()
    }
    for round_number in range(0 if args.report_only else args.repeats):
        for corpus in chosen:
            paths = corpus_paths(args.inputs, corpus, limits[corpus])
            for route in routes:
                if len(runs[(corpus, route)]) > round_number:
                    continue
                found = run_route(route, paths, CORPUS_TASKS[corpus], folder)
                found.update(when=time.strftime("%Y-%m-%d %H:%M"), load=round(os.getloadavg()[0], 2))
                runs[(corpus, route)].append(found)
                stored[(corpus, route)].write_text(json.dumps(runs[(corpus, route)]) + "\n")
                print(
                    f"{corpus:<10} {route:<10} {found['wall']:8.1f} s wall {found['cpu']:8.1f} s CPU "
                    f"F1 {found['f1']:.4f}",
                    file=sys.stderr,
                    flush=True,
                )
                # rewritten after every route, so that a run stopped for time keeps what it measured
                replace_section(args.out, HEADING, format_report(runs, sizes, args.repeats))
    replace_section(args.out, HEADING, format_report(runs, sizes, args.repeats))
    print(args.out.read_text().split(HEADING, 1)[1])


def rounds_file(folder: Path, paths: dict[str, Path], route: str) -> Path:
    """Where the measured rounds of a route on a corpus's files are kept (reused unless ``--fresh``); the default
    search's routes (``full-*``, ``early-*``) are kept as ``auto``'s, apart from the nested default's before it."""
    searched = ".auto" if route.split("-")[0] in ("full", "early") else ""
    return folder / f"{paths['train'].stem}.{route}{searched}.rounds.json"


def corpus_sizes(paths: dict[str, Path]) -> tuple[int, int, int]:
    """Training rows, test rows and classes of a corpus's run."""
    header, rows = data_lines(paths["train"])
    classes = len({label_of(row) for row in rows})
    return len(rows), len(paths["labels"].read_text().split()), classes


def median_of(found: list[dict], key: str) -> float:
    """The median of one measure over a route's rounds."""
    return statistics.median(run[key] for run in found)


def when_measured(found: list[dict]) -> str:
    """When each round of a route was measured, with the load average then."""
    return ", ".join(f"{run['when']} ({run['load']})" for run in found)


def format_report(runs: dict[tuple[str, str], list[dict]], sizes: dict, repeats: int) -> str:
    """The section of RESULTS.md: every corpus and route measured (the first ``repeats`` rounds of each), the
    routes not measured, then each corpus's ratios to GridSearchCV."""
    missing = [f"{corpus} {route}" for (corpus, route), found in runs.items() if not found]
    runs = {key: found[:repeats] for key, found in runs.items() if found}
    command = " ".join(["python", "benchmarks/train.py", *sys.argv[1:]])
    rounds = (
        "1 round (no median: the time box of the run allowed one)"
        if repeats == 1
        else f"medians of {repeats} interleaved rounds"
    )
    lines = [
        HEADING,
        "",
        f"`{command}` on {time.strftime('%Y-%m-%d')} at commit {_commit()}, {os.cpu_count()} cores, load average "
        f"{os.getloadavg()[0]:.2f} at the end, niceness {os.nice(0)}; {rounds}.  filterkit: `train` with the "
        "default candidates (`--svm-c-search` full or early, `--jobs 1` or every core), then `predict` of the "
        "test file, the two commands' seconds together; GridSearchCV: TfidfVectorizer × LinearSVC over "
        "sublinear_tf × ngram_range (1,1)/(1,2) × 5 C × 5 stratified folds, n_jobs 1 or -1, refit and scored on "
        "the test file.  compare-1: `evaluate --compare` of train's default candidates with train's scoring "
        "settings (5 folds, seed 1, `--svm-c-by f1 --svm-c-search early`, 5 inner folds), `--jobs 1`, no test file; "
        "cv-1: for each of the 4 representations, `cross_validate` (5 stratified folds, n_jobs 1) of "
        "TfidfVectorizer then `GridSearchCV(LinearSVC, 5 C, 5 inner folds)`, the C search inside each fold as "
        "evaluate's svm does it.  CPU: user + system of every process of the route (`wait4`).  F1: macro-F1 "
        "(grain: F1 of the class 1) on the test file; compare-1 and cv-1: cross-validated on the training file "
        "(the mean of the 5 folds' F1), of the picked chain or representation.  Picked: filterkit's chosen chain "
        "(compare-1: the one train would keep, best AUC), GridSearchCV's best parameters (cv-1: the best mean F1).",
        "",
        "| corpus | train rows | test rows | classes | route | CPU s | wall s | peak RSS MiB | F1 | picked "
        "| measured (load) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (corpus, route), found in runs.items():
        train_rows, test_rows, classes = sizes[corpus]
        lines.append(
            f"| {corpus} | {train_rows:,} | {test_rows:,} | {classes} | {route} | {median_of(found, 'cpu'):.1f} "
            f"| {median_of(found, 'wall'):.1f} | {int(median_of(found, 'peak'))} | {median_of(found, 'f1'):.4f} "
            f"| {found[0]['picked']} | {when_measured(found)} |"
        )
    lines.append("")
    if missing:
        lines += [f"Not measured (stopped for time, or left out): {', '.join(missing)}.", ""]
    for corpus in dict.fromkeys(corpus for corpus, _ in runs):
        found = {route: runs[(c, route)] for c, route in runs if c == corpus}
        parts = []
        for kind in ("full", "early"):
            for jobs, measured in (("1", "cpu"), ("all", "wall")):
                ours, theirs = found.get(f"{kind}-{jobs}"), found.get(f"grid-{jobs}")
                if ours and theirs:
                    ratio = median_of(ours, measured) / median_of(theirs, measured)
                    change = median_of(ours, "f1") - median_of(theirs, "f1")
                    parts.append(f"{kind}-{jobs} ÷ grid-{jobs}: {measured} {ratio:.2f}×, F1 {change:+.4f}")
        one, pair = found.get("early-1"), found.get("pair-1")
        if one and pair and all("first_wall" in run for run in one + pair):
            slowed = median_of(pair, "first_wall") / median_of(one, "first_wall")
            parts.append(f"pair-1 ÷ early-1, `train`'s wall: {slowed:.2f}× (at best {slowed / 2:.2f}× with two jobs)")
        for kind in ("full", "early", "flat", "nested"):
            one, every = found.get(f"{kind}-1"), found.get(f"{kind}-all")
            if one and every and all("first_wall" in run for run in one + every):
                alone = median_of(every, "first_wall") / median_of(one, "first_wall")
                together = median_of(every, "wall") / median_of(one, "wall")
                parts.append(f"{kind}-all ÷ {kind}-1, wall: `train` alone {alone:.2f}×, with `predict` {together:.2f}×")
        compared, looped = found.get("compare-1"), found.get("cv-1")
        if compared and looped:
            ratio = median_of(compared, "cpu") / median_of(looped, "cpu")
            change = median_of(compared, "f1") - median_of(looped, "f1")
            parts.append(f"compare-1 ÷ cv-1: cpu {ratio:.2f}×, cross-validated F1 {change:+.4f}")
        if parts:
            lines.append(f"- {corpus}: " + "; ".join(parts) + ".")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
