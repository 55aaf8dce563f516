"""Corpora of other shapes than Reuters, built on a fresh Debian machine, and the default-candidate evidence.

    python benchmarks/corpora.py build [--inputs benchmarks/.inputs/corpora] [--quick]
    python benchmarks/corpora.py run [--inputs …] [--quick] [--only debian-science,…]
    python benchmarks/corpora.py summarize [--inputs …] [--quick]
    python benchmarks/corpora.py train [--inputs …] [--quick] [--only …] [--jobs 2] [--search auto|nested|flat]

``build`` writes train/test ARFF pairs (a string attribute ``text`` and a nominal class) under
``--inputs/data``:

- **Debian package descriptions by section.** The long descriptions (the ``Description:`` line and its
  continuation lines) of bookworm's main area.  A Docker-made Debian keeps no Translation files
  (``Acquire::Languages "none"``), so ``build`` runs ``apt-get update`` into lists of its own
  (``--inputs/apt``, with ``Acquire::Languages=en``; the system's lists are left alone) and joins each
  package of ``apt-cache dumpavail`` to its ``Translation-en`` text by ``Description-md5``.  A
  description that repeats an earlier one word for word (packages in name order) is left out, so no
  document sits in both files; the section drops its area (``contrib/``).  :func:`debian_documents` reads
  another language's Translation file as well (``benchmarks/run.py words`` builds its German corpus so: 13,104
  distinct descriptions, 98 % of them and 2.8 % of their bytes not ASCII); the lists then hold every language
  asked for.  A package is a test document when the first 8 hex digits of the SHA-256 of its name, as a
  number, are ≡ 0, 1 or 2 (mod 10): about 30 %.  Tasks: science, games and sound against the rest (F1 of the
  positive class), and the 10 sections with the most training documents at once (macro-F1; the files
  ``debian10-*``).
- **Fortune cookies by file.** Debian's ``fortunes`` and ``fortunes-min`` packages, fetched with
  ``apt-get download`` (nothing installed) and unpacked with ``dpkg-deb``: each ``%``-separated fortune a
  document, its file (``science``, ``computers`` …) the class.  A fortune that repeats an earlier one
  (files in name order) is left out; test split as above, by the SHA-256 of the fortune's text.  Tasks:
  science and computers against the rest, and the 10 largest files at once.
- **Reuters grain** and **corn**, Weka's own ``ReutersGrain-train.arff`` / ``-test.arff`` and
  ``ReutersCorn-…`` (Debian's weka package); corn was left out of the choice of the default candidates and
  their pick (docs/RESULTS.md §10), a check they had not seen.

``--quick`` keeps a fifth of the Debian packages (by a salted hash of the name), into ``--inputs/data-quick``
and ``--inputs/results-quick``.

``run`` evaluates, per task, the chains named by ``--chains`` (``GRID`` unless given; any of ``CHAINS``) with
``filterkit evaluate``, in each mode of ``--modes``: ``cv`` (5-fold CV on the training file: the inner score
``train`` would pick by), ``test`` (fitted on the training file, scored on the test file, ``--predictions``
kept) and ``test-margin`` (the same with ``--svm-decision margin``); and scikit-learn's
``TfidfVectorizer()`` + ``LinearSVC()``, default settings, fitted on the training file and scored on the
test file.  Every result is one JSON file
under ``--inputs/results``, reused when present.  ``summarize`` prints the tables of docs/RESULTS.md
§10, with McNemar's exact test of each pick against scikit-learn's decisions on the same test rows.
``train`` runs ``filterkit train`` itself (its default candidates, ``--jobs``) and ``predict`` on each task,
and prints each candidate's score, the pick, its test F1 and the CPU and wall seconds (docs/RESULTS.md §10.8),
kept under ``--inputs/results`` and reused only at the same commit and ``--jobs`` (never with changes under
``filterkit/`` or ``plugins/`` not committed).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_INPUTS = HERE / ".inputs" / "corpora"
WEKA_EXAMPLES = Path("/usr/share/doc/weka/examples")
FORTUNE_PACKAGES = ("fortunes", "fortunes-min")
TEST_RESIDUES = (0, 1, 2)  # of 10: about 30 % of the documents are test documents
QUICK_RESIDUES = (0,)  # of 5 (salted), before the split: --quick keeps about a fifth of the Debian corpus

#: The README's words (the route of its table), then each candidate's weighting.
WORDS = "words --counts --lowercase --stopwords weka"
#: TfidfVectorizer's vocabulary: every word, stop words too (Weka's default keeps 1,000 a class).
ALL_WORDS = "words --counts --lowercase --words-to-keep 1000000"
#: Every word, as runs of letters (TfidfVectorizer's tokens are runs of 2+ word characters).
LETTERS = f"{ALL_WORDS} --tokenizer alphabetic"
CHAINS = {
    "shape bns l2": f"{WORDS} shape bns l2",
    "tf·BNS": f"{WORDS} bns --multiply l2",
    "tf·idf": f"{WORDS} idf --presence --multiply l2",
    "auto": f"{WORDS} auto l2",
    "l2": f"{WORDS} l2",
    "tf·idf (all words)": f"{ALL_WORDS} idf --presence --multiply l2",
    "tf·BNS (all words)": f"{ALL_WORDS} bns --multiply l2",
    "shape bns l2 (all words)": f"{ALL_WORDS} shape bns l2",
    "tf·idf (letters)": f"{LETTERS} idf --presence --multiply l2",
    "tf·BNS (letters)": f"{LETTERS} bns --multiply l2",
    "log tf·idf (letters)": f"{LETTERS} --log-tf idf --presence --multiply l2",
    "log tf·idf smoothed (letters)": f"{LETTERS} --log-tf idf --presence --multiply --smooth l2",
    "tf·idf (characters 2-5)": f"{ALL_WORDS} --char-ngrams 2-5 idf --presence --multiply l2",
    "IG top 1000": f"{WORDS} ig --presence --no-scale select --top 1000 binarize",
    "BNS top 1000": f"{WORDS} bns --presence --no-scale select --top 1000 binarize",
}

#: What ``run`` and ``summarize`` take by default: the README's words under each weighting, and tf·BNS on letters.
GRID = ("shape bns l2", "tf·BNS", "tf·idf", "auto", "l2", "tf·BNS (letters)")

#: Each task: (its name, the data file stem, the positive class or None for all classes at once).
TASKS = (
    ("debian-science", "debian", "science"),
    ("debian-games", "debian", "games"),
    ("debian-sound", "debian", "sound"),
    ("debian-10", "debian10", None),
    ("fortunes-science", "fortunes", "science"),
    ("fortunes-computers", "fortunes", "computers"),
    ("fortunes-10", "fortunes10", None),
    ("reuters-grain", "grain", "1"),
    ("reuters-corn", "corn", "1"),
)


def residue(key: str, modulus: int) -> int:
    """The first 8 hex digits of ``key``'s SHA-256 as a number, mod ``modulus``: a split no seed moves."""
    return int(hashlib.sha256(key.encode("utf-8")).hexdigest()[:8], 16) % modulus


def stanzas(text: str):
    """Each stanza of a Debian control listing as a dict; a continued field keeps its continuation lines."""
    for block in text.split("\n\n"):
        record: dict[str, str] = {}
        field = None
        for line in block.split("\n"):
            if line[:1].isspace() and field is not None:
                record[field] += "\n" + line
            elif ":" in line:
                field, value = line.split(":", 1)
                record[field] = value.strip()
        if record:
            yield record


def description_text(value: str) -> str:
    """A Debian long description as plain text: the first line, then its continuation lines (`` .`` a blank)."""
    first, *rest = value.split("\n")
    lines = [first.strip()] + ["" if line.strip() == "." else line[1:] for line in rest]
    return "\n".join(lines).strip()


def apt_options(inputs: Path, languages: tuple[str, ...] = ("en",)) -> list[str]:
    """apt's options for the lists of our own under ``inputs/apt``, with the Translation files of ``languages``."""
    lists, cache = (inputs / "apt" / "lists").resolve(), (inputs / "apt" / "cache").resolve()
    return [
        f"-oDir::State::Lists={lists}",
        f"-oDir::Cache={cache}",
        f"-oAcquire::Languages={','.join(languages)}",
        "-oAPT::Sandbox::User=" + os.environ.get("USER", "root"),
    ]


def fetched_languages(inputs: Path) -> set[str]:
    """The languages whose Translation files the lists under ``inputs/apt`` hold."""
    found = (inputs / "apt" / "lists").glob("*_i18n_Translation-*")
    return {path.name.rsplit("Translation-", 1)[1].split(".")[0] for path in found}


def update_lists(inputs: Path, languages: tuple[str, ...] = ("en",)) -> None:
    """Fetch the Packages lists and the Translation files of ``languages`` into ``inputs/apt`` once (the
    system's are not touched); the languages fetched before are fetched again beside them, not dropped."""
    fetched = fetched_languages(inputs)
    if set(languages) <= fetched:
        return
    lists = inputs / "apt" / "lists"
    (lists / "partial").mkdir(parents=True, exist_ok=True)
    (inputs / "apt" / "cache" / "archives" / "partial").mkdir(parents=True, exist_ok=True)
    every = tuple(sorted(fetched | set(languages)))
    subprocess.run(["apt-get", "-q", "update", *apt_options(inputs, every)], check=True, stdout=subprocess.DEVNULL)


def debian_packages(inputs: Path, language: str = "en") -> list[tuple[dict[str, str], str]]:
    """(``apt-cache dumpavail``'s stanza, long description in ``language``) of every package with a description
    in that language (the Translation files of ``en``, ``de``, ``fr``, ``es`` …)."""
    update_lists(inputs, (language,))
    options = apt_options(inputs, tuple(sorted(fetched_languages(inputs))))
    packages = subprocess.run(["apt-cache", *options, "dumpavail"], capture_output=True, text=True, check=True)
    targets = subprocess.run(
        [
            "apt-get",
            *options,
            "indextargets",
            "--format",
            "$(FILENAME)",
            "Created-By: Translations",
            f"Language: {language}",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    field = f"Description-{language}"
    descriptions = {}
    for target in sorted(targets):
        listing = subprocess.run(
            ["/usr/lib/apt/apt-helper", "cat-file", target], capture_output=True, text=True, check=True
        ).stdout
        for record in stanzas(listing):
            if field in record:
                descriptions[record["Description-md5"]] = description_text(record[field])
    found = ((record, descriptions.get(record.get("Description-md5", ""))) for record in stanzas(packages.stdout))
    return [(record, text) for record, text in found if text]


def debian_documents(inputs: Path, language: str = "en") -> list[tuple[str, str, str]]:
    """(package, long description in ``language``, section) of every package with such a description, in name
    order."""
    documents = []
    for record, text in debian_packages(inputs, language):
        section = record.get("Section", "").rsplit("/", 1)[-1]
        if section:
            documents.append((record["Package"], text, section))
    return sorted(documents)


def fortune_documents(inputs: Path) -> list[tuple[str, str, str]]:
    """(fortune, fortune, its file) of every fortune of ``FORTUNE_PACKAGES``, files in name order."""
    update_lists(inputs)
    unpacked = inputs / "fortunes"
    if not unpacked.exists():
        with tempfile.TemporaryDirectory(dir=inputs) as folder:
            subprocess.run(
                ["apt-get", "-q", *apt_options(inputs), "download", *FORTUNE_PACKAGES],
                cwd=folder,
                check=True,
                stdout=subprocess.DEVNULL,
            )
            for package in sorted(Path(folder).glob("*.deb")):
                subprocess.run(["dpkg-deb", "-x", str(package), f"{folder}/root"], check=True)
            shutil.move(f"{folder}/root/usr/share/games/fortunes", unpacked)
    documents = []
    for path in sorted(unpacked.iterdir()):
        if path.suffix or not path.is_file():  # the .dat indexes and .u8 links
            continue
        for fortune in re.split(r"^%\n", path.read_text(encoding="utf-8", errors="replace"), flags=re.M):
            if fortune.strip():
                documents.append((fortune, fortune.strip("\n"), path.name))
    return documents


def quoted(text: str) -> str:
    """``text`` as a single-quoted ARFF string on one line."""
    escaped = text.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n").replace("\r", "\\r")
    return "'" + escaped.replace("\t", "\\t") + "'"


def write_arff(path: Path, relation: str, class_name: str, labels: list[str], rows: list[tuple[str, str]]) -> None:
    """Documents as ARFF: a string attribute ``text`` and the nominal class ``class_name`` of ``labels``."""
    header = f"@relation {relation}\n\n@attribute text string\n@attribute {class_name} {{{','.join(labels)}}}\n"
    body = "".join(f"{quoted(text)},{label}\n" for text, label in rows)
    path.write_text(f"{header}\n@data\n{body}", encoding="utf-8")


def write_corpus(folder: Path, stem: str, class_name: str, documents, top: int = 10) -> dict:
    """Train/test files of every document, and of the ``top`` largest classes alone; their sizes."""
    seen, train, test = set(), [], []
    for key, text, label in documents:
        if text in seen:
            continue
        seen.add(text)
        (test if residue(key, 10) in TEST_RESIDUES else train).append((text, label))
    counts: dict[str, int] = {}
    for _, label in train:
        counts[label] = counts.get(label, 0) + 1
    labels = sorted(counts)
    largest = sorted(sorted(counts, key=lambda label: (-counts[label], label))[:top])
    test = [(text, label) for text, label in test if label in counts]
    sizes = {}
    for name, kept in ((stem, labels), (f"{stem}{top}", largest)):
        for part, rows in (("train", train), ("test", test)):
            rows = [row for row in rows if row[1] in kept]
            write_arff(folder / f"{name}-{part}.arff", f"{name}-{part}", class_name, kept, rows)
            sizes[f"{name}-{part}"] = len(rows)
    sizes[f"{stem} classes"] = {label: counts[label] for label in largest}
    return sizes


def build(inputs: Path, quick: bool) -> dict:
    """Every corpus's train/test ARFF files under ``inputs/data``; returns their sizes (also in sizes.json)."""
    folder = inputs / ("data-quick" if quick else "data")
    folder.mkdir(parents=True, exist_ok=True)
    debian = debian_documents(inputs)
    if quick:
        # salted: the unsalted residue mod 5 would decide the split mod 10 too
        debian = [document for document in debian if residue(document[0] + "/quick", 5) in QUICK_RESIDUES]
    sizes = write_corpus(folder, "debian", "debian_section", debian)
    sizes.update(write_corpus(folder, "fortunes", "fortune_file", fortune_documents(inputs)))
    for part in ("train", "test"):
        for topic in ("Grain", "Corn"):
            shutil.copyfile(WEKA_EXAMPLES / f"Reuters{topic}-{part}.arff", folder / f"{topic.lower()}-{part}.arff")
    release = next((inputs / "apt" / "lists").glob("*_debian_dists_bookworm_InRelease"))
    sizes["lists"] = next(line for line in release.read_text().splitlines() if line.startswith("Date:"))
    (folder / "sizes.json").write_text(json.dumps(sizes, indent=1) + "\n")
    return sizes


def task_options(positive: str | None) -> list[str]:
    """evaluate's task options: one class against the rest, or all classes at once."""
    return ["--multiclass"] if positive is None else ["--positive", positive]


def slug(name: str) -> str:
    """A file name for a chain's or setting's name."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower().replace("·", "")).strip("-")


def run_filterkit(data: Path, results: Path, task: tuple, name: str, chain: str, mode: str) -> dict:
    """One chain's evaluation of one task: ``cv`` (5 folds on the training file), or ``test`` and its variants
    (``MODE_OPTIONS``)."""
    task_name, stem, positive = task
    target = results / task_name / f"{slug(name)}.{mode}.json"
    if target.exists():
        return json.loads(target.read_text())
    target.parent.mkdir(parents=True, exist_ok=True)
    command = ["nice", "-n", "10", "filterkit", "evaluate", *task_options(positive), "--json"]
    if mode.startswith("cv"):
        command += ["--folds", "5", "--seed", "1", *MODE_OPTIONS.get(mode, [])]
    else:
        predictions = target.with_suffix(".csv")
        command += ["--test", str(data / f"{stem}-test.arff"), "--predictions", str(predictions)]
        command += MODE_OPTIONS.get(mode, [])
    command += ["--compare", str(data / f"{stem}-train.arff"), chain]
    started = time.time()
    finished = subprocess.run(command, capture_output=True, text=True)
    if finished.returncode:
        found = {"error": (finished.stderr.strip().splitlines() or ["exit " + str(finished.returncode)])[-1]}
    else:
        found = json.loads(finished.stdout)
        found = found["results"][0] if "results" in found else found
        if not mode.startswith("cv"):
            with open(predictions, encoding="utf-8") as table:
                rows = list(csv.DictReader(table))
            found["truths"] = [row["truth"] for row in rows]
            found["decisions"] = [row["decision"] for row in rows]
    found["seconds"] = round(time.time() - started, 1)
    target.write_text(json.dumps(found) + "\n")
    return found


def run_sklearn(data: Path, results: Path, task: tuple) -> dict:
    """scikit-learn's ``TfidfVectorizer()`` + ``LinearSVC()``, default settings, fitted on train, scored on test."""
    import numpy as np
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.metrics import f1_score, roc_auc_score
    from sklearn.pipeline import make_pipeline
    from sklearn.svm import LinearSVC

    from filterkit.arff import read_arff

    task_name, stem, positive = task
    target = results / task_name / "sklearn.test.json"
    if target.exists():
        return json.loads(target.read_text())
    target.parent.mkdir(parents=True, exist_ok=True)
    parts = {}
    for part in ("train", "test"):
        schema, chunk = read_arff(str(data / f"{stem}-{part}.arff"))
        labels = schema.attributes[-1].labels
        documents = [text or "" for text in chunk.text[0]]
        classes = [labels[int(value)] for value in chunk.values[:, -1]]
        parts[part] = documents, classes
    (train_documents, train_classes), (test_documents, test_classes) = parts["train"], parts["test"]
    started = time.process_time()
    if positive is None:
        model = make_pipeline(TfidfVectorizer(), LinearSVC()).fit(train_documents, train_classes)
        decisions = [str(label) for label in model.predict(test_documents)]
        found = {"macro_f1": f1_score(test_classes, decisions, average="macro")}
        found["accuracy"] = float(np.mean(np.array(decisions) == np.array(test_classes)))
    else:
        truth = [int(label == positive) for label in test_classes]
        model = make_pipeline(TfidfVectorizer(), LinearSVC())
        model.fit(train_documents, [int(label == positive) for label in train_classes])
        decisions = [str(int(value)) for value in model.predict(test_documents)]
        found = {"f1": f1_score(truth, [int(value) for value in decisions])}
        found["auc"] = roc_auc_score(truth, model.decision_function(test_documents))
    found["decisions"] = decisions
    found["seconds"] = round(time.process_time() - started, 1)
    target.write_text(json.dumps(found) + "\n")
    return found


MODES = ("test", "cv", "test-margin")
#: The classifier settings of the test modes beside the default (``test-balanced`` is not in ``MODES``'s default).
MODE_OPTIONS = {
    "test-margin": ["--svm-decision", "margin"],
    "test-balanced": ["--svm-class-weight", "balanced"],
    "test-f1": ["--svm-c-by", "f1"],
    "cv-f1": ["--svm-c-by", "f1"],
}


def run(inputs: Path, quick: bool, only: list[str], chains: list[str], modes: list[str]) -> None:
    """Every task's candidate chains (the modes in order: test, cv, test-margin) and scikit-learn's route."""
    data = inputs / ("data-quick" if quick else "data")
    results = inputs / ("results-quick" if quick else "results")
    tasks = [task for task in TASKS if not only or task[0] in only]
    for task in tasks:
        found = run_sklearn(data, results, task)
        print(task[0], "scikit-learn", score_of(found, task), found["seconds"], flush=True)
    for mode in modes:
        for task in tasks:
            for name in chains:
                found = run_filterkit(data, results, task, name, CHAINS[name], mode)
                print(task[0], name, mode, score_of(found, task), found["seconds"], flush=True)


def run_train(data: Path, results: Path, task: tuple, jobs: str, search: str = "auto") -> dict:
    """``filterkit train`` with its default candidates (``--jobs jobs``, ``--search search``) on the task's
    training file, then ``predict`` of its test file: each candidate's score, the pick, its test F1 (``f1``, the
    positive class's, or ``macro_f1`` over the classes of the truth and the decisions, as ``evaluate`` and
    scikit-learn average), and the two commands' CPU (``wait4``) and wall seconds, and McNemar's test against
    :func:`run_sklearn`'s decisions (right only under the pick, only under scikit-learn, p); kept as ``train.json``
    for the nested search (``train-flat.json``, ``train-auto.json`` for the others) under ``results`` with the commit
    and ``jobs`` it was run at, and reused only for the same two."""
    import numpy as np

    from filterkit.arff import read_arff

    task_name, stem, positive = task
    target = results / task_name / ("train.json" if search == "nested" else f"train-{search}.json")
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=HERE, capture_output=True, text=True).stdout.strip()
    changed = ["git", "status", "--porcelain", "--", "filterkit", "plugins"]
    if subprocess.run(changed, cwd=HERE.parent, capture_output=True, text=True).stdout.strip() or not commit:
        commit = ""  # uncommitted library changes (or no git): a result is never reused
    if target.exists() and commit:
        found = json.loads(target.read_text())
        if (found.get("commit"), found.get("jobs")) == (commit, jobs):
            return found
    target.parent.mkdir(parents=True, exist_ok=True)
    model, predictions = target.with_suffix(".model.json"), target.with_suffix(".csv")
    commands = [
        ["nice", "-n", "10", "filterkit", "train", "-q", "--jobs", jobs, "--search", search, *task_options(positive)]
        + ["-o", str(model)]
        + [str(data / f"{stem}-train.arff")],
        [
            "nice",
            "-n",
            "10",
            "filterkit",
            "predict",
            str(model),
            str(data / f"{stem}-test.arff"),
            "-o",
            str(predictions),
        ],
    ]
    cpu, started = 0.0, time.time()
    for command in commands:
        process = subprocess.Popen(command)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode:
            return {"error": f"{' '.join(command[3:5])}: exit status {process.returncode}"}
        cpu += usage.ru_utime + usage.ru_stime
    schema, chunk = read_arff(str(data / f"{stem}-test.arff"))
    labels = schema.attributes[-1].labels
    truth = np.array([labels[int(value)] for value in chunk.values[:, -1]])
    with open(predictions, encoding="utf-8") as table:
        decided = np.array([row["label"] for row in csv.DictReader(table)])
    if len(decided) != len(truth):
        return {"error": f"{predictions}: {len(decided)} predictions for {len(truth)} test rows"}
    classes = sorted(set(truth) | set(decided)) if positive is None else [positive]
    per_class = []
    for label in classes:
        hits, guessed, actual = (
            np.sum((truth == label) & (decided == label)),
            np.sum(decided == label),
            np.sum(truth == label),
        )
        per_class.append(float(2 * hits / (guessed + actual)) if guessed + actual else 0.0)
    fitted = json.loads(model.read_text())["classifier"]
    if positive is not None:  # scikit-learn's decisions are 1 for the positive class, 0 for the rest
        truth, decided = (np.where(labels_of == positive, "1", "0") for labels_of in (truth, decided))
    against = mcnemar(truth.tolist(), decided.tolist(), run_sklearn(data, results, task)["decisions"])
    found = {
        "candidates": {entry["chain"]: entry["score"] for entry in fitted["candidates"]},
        "pick": fitted["chain"],
        "f1" if positive is not None else "macro_f1": float(np.mean(per_class)),
        "cpu": round(cpu, 1),
        "seconds": round(time.time() - started, 1),
        "commit": commit,
        "jobs": jobs,
        "against_sklearn": dict(zip(("only_train", "only_sklearn", "p"), against)),
    }
    target.write_text(json.dumps(found) + "\n")
    return found


def score_of(found: dict, task: tuple) -> float | None:
    """A result's primary score: the positive class's F1, or macro-F1 with all classes at once."""
    return found.get("f1" if task[2] is not None else "macro_f1")


def mcnemar(truths: list[str], first: list[str], second: list[str]) -> tuple[int, int, float]:
    """Rows right only under ``first``, only under ``second``, and McNemar's exact (binomial) two-sided p."""
    from scipy.stats import binomtest

    only_first = sum(a == t != b for t, a, b in zip(truths, first, second))
    only_second = sum(b == t != a for t, a, b in zip(truths, first, second))
    total = only_first + only_second
    return only_first, only_second, 1.0 if total == 0 else binomtest(only_first, total, 0.5).pvalue


def auc_key(task: tuple) -> str:
    """The key of a result's AUC: the positive class's, or the macro one-vs-rest AUC with all classes at once."""
    return "auc" if task[2] is not None else "macro_auc"


def load(results: Path, task: tuple, name: str, mode: str) -> dict | None:
    """A stored result, or None when that run has not been made."""
    target = results / task[0] / f"{slug(name)}.{mode}.json"
    return json.loads(target.read_text()) if target.exists() else None


def cell(found: dict | None, task: tuple) -> str:
    """A result as ``score (AUC)``; blank when not run, the error's gist when it failed."""
    if found is None:
        return ""
    if "error" in found:
        return "fails"
    auc = found.get(auc_key(task))
    return f"{score_of(found, task):.3f}" + ("" if auc is None else f" ({auc:.3f})")


def summarize(inputs: Path, quick: bool, candidates: list[str], setting: str = "") -> str:
    """Per task each route's inner-CV and test scores; then the pick among ``candidates`` against scikit-learn.
    ``setting`` names the runs' classifier setting: "" for evaluate's default, ``f1`` for ``--svm-c-by f1`` (the
    modes ``cv-f1`` and ``test-f1``: what ``train`` fits by default), whose pick is by the inner CV's AUC, as
    ``train``'s (its F1 otherwise, as ``train`` picked in 0.3)."""
    results = inputs / ("results-quick" if quick else "results")
    suffix = f"-{setting}" if setting else ""
    modes = (f"cv{suffix}", f"test{suffix}") if setting else ("cv", "test", "test-margin")
    lines = [
        "| task | route | inner CV, 5 folds | test |" + ("" if setting else " test, `--svm-decision margin` |"),
        "|---|---|---|---|" + ("" if setting else "---|"),
    ]
    summary = [
        f"Pick = the best inner CV {'AUC' if setting else 'F1'} among {', '.join(f'`{name}`' for name in candidates)}.",
        "",
        "| task | TfidfVectorizer + LinearSVC | pick | pick's test score | Δ | McNemar: right only under "
        "the pick / only under scikit-learn, p | best filterkit route on test |",
        "|---|---|---|---|---|---|---|",
    ]
    for task in TASKS:
        sklearn = load(results, task, "sklearn", "test")
        if sklearn is None:
            continue
        lines.append(
            f"| {task[0]} | TfidfVectorizer() + LinearSVC() | | {cell(sklearn, task)} |" + " |" * (not setting)
        )
        inner = {}
        for name in CHAINS:
            runs = [load(results, task, name, mode) for mode in modes]
            if any(runs):
                lines.append(f"| {task[0]} | `{name}` | " + " | ".join(cell(found, task) for found in runs) + " |")
            if name in candidates and runs[0] and "error" not in runs[0] and runs[1]:
                inner[name] = runs[0][auc_key(task)] if setting else score_of(runs[0], task)
        tested = {name: load(results, task, name, f"test{suffix}") for name in CHAINS}
        tested = {name: found for name, found in tested.items() if found and "error" not in found}
        if not inner:
            continue
        pick = max(inner, key=lambda name: inner[name])
        best = max(tested, key=lambda name: score_of(tested[name], task))
        chosen, theirs = score_of(tested[pick], task), score_of(sklearn, task)
        only_pick, only_sklearn, p = mcnemar(tested[pick]["truths"], tested[pick]["decisions"], sklearn["decisions"])
        summary.append(
            f"| {task[0]} | {theirs:.3f} | `{pick}` | {chosen:.3f} | {chosen - theirs:+.3f} "
            f"| {only_pick} / {only_sklearn}, {p:.2g} | `{best}` {score_of(tested[best], task):.3f} |"
        )
    return "\n".join(lines + [""] + summary) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=("build", "run", "summarize", "train"))
    parser.add_argument("--inputs", type=Path, default=DEFAULT_INPUTS)
    parser.add_argument("--quick", action="store_true", help="a fifth of the Debian corpus")
    parser.add_argument("--only", default="", help="tasks, comma-separated (default: all)")
    parser.add_argument("--chains", default=",".join(GRID), help="candidates, comma-separated (of CHAINS)")
    parser.add_argument("--modes", default=",".join(MODES), help=f"of {', '.join([*MODES, *MODE_OPTIONS])}")
    parser.add_argument("--setting", default="", choices=("", "f1"), help="summarize: the cv-f1/test-f1 runs")
    parser.add_argument("--jobs", default="2", help="train: its --jobs")
    parser.add_argument(
        "--search",
        default="auto",
        choices=("auto", "nested", "flat"),
        help="train: its --search (train's default: auto)",
    )
    args = parser.parse_args()
    args.inputs.mkdir(parents=True, exist_ok=True)
    if args.action == "build":
        print(json.dumps(build(args.inputs, args.quick), indent=1))
    elif args.action == "run":
        only = [name for name in args.only.split(",") if name]
        run(args.inputs, args.quick, only, args.chains.split(","), args.modes.split(","))
    elif args.action == "train":
        results = args.inputs / ("results-quick" if args.quick else "results")
        data = args.inputs / ("data-quick" if args.quick else "data")
        for task in [task for task in TASKS if not args.only or task[0] in args.only.split(",")]:
            found = run_train(data, results, task, args.jobs, args.search)
            print(task[0], json.dumps(found), flush=True)
    else:
        print(summarize(args.inputs, args.quick, args.chains.split(","), args.setting))


if __name__ == "__main__":
    main()
