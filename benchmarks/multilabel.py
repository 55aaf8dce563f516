"""A multi-label text benchmark a fresh Debian machine builds: package descriptions labelled by their debtags.

    python benchmarks/multilabel.py run [--inputs benchmarks/.inputs/multilabel] [--runs selection,…]
                                        [--formats arff,jsonl]     # builds first when not built; then summarizes
    python benchmarks/multilabel.py build [--inputs …]
    python benchmarks/multilabel.py summarize [--inputs …]
    python benchmarks/multilabel.py thresholds [--inputs …] [--min-positives N] [--route NAME]   # §11.1
    python benchmarks/multilabel.py build|thresholds --source appstream [--inputs …]   # the second corpus

``build`` takes bookworm main's long descriptions as benchmarks/corpora.py makes them (``apt-cache dumpavail``
joined to ``Translation-en`` in apt lists of its own under ``--inputs/apt``) with each package's ``Tag:`` field,
and keeps the debtags of the ``use`` and ``works-with`` facets (what a package is for, what it works on;
``::TODO`` left out).  A package without such a tag is left out; so is a description that repeats an earlier
one word for word (packages in name order).  The test documents are corpora.py's: the packages whose name's
SHA-256 is ≡ 0, 1 or 2 (mod 10).  The labels are the tags with at least ``MIN_TRAINING_POSITIVES`` training
documents; a document with none of them is left out.  Under ``--inputs/data`` the same train/test pair is
written twice: MEKA ARFF (``@relation 'debtags-train: -C 35'``, the labels first, ``{0,1}``, then the string
attribute ``text``) and JSON Lines (``{"labels": [...], "text": ...}``), with ``sizes.json``.

``run`` evaluates ``CHAINS`` by binary relevance (evaluate's linear SVM per label, C chosen per label) in one
``filterkit evaluate --test … --json --predictions … --compare`` per format of the training file, so the paired
tests are evaluate's; the test file is MEKA's in both (``evaluate`` could not read a JSON Lines file's labels
against a training header when §11 was measured).  It also runs scikit-learn's ``OneVsRestClassifier(LinearSVC())`` on
``TfidfVectorizer()``, default settings, fitted on the training file and scored on the test file.  Each result
is a JSON file under ``--inputs/results``, reused when present.  ``summarize`` checks that filterkit reads both
formats' files as the same bytes and that both runs gave the same results, recomputes every chain's measures
from its ``--predictions`` rows with ``sklearn.metrics``, and prints the tables of docs/RESULTS.md §11 with
the paired tests against scikit-learn (Wilcoxon over the labels' F1, McNemar on the test rows' label sets).

``thresholds`` (docs/RESULTS.md §11.1) evaluates a route (``--route``, a name of ``CHAINS``; by default
``THRESHOLD_ROUTE``) with ``THRESHOLD_SETTINGS`` under each of ``THRESHOLD_RULES``, one ``filterkit evaluate
--test …`` each: the SVM's own decisions (the margin's sign, as LibMultiLabel's one-vs-rest baseline decides),
Platt's 0.5 (the fixed cut, filterkit's default), MEKA's PCut, ``--svm-threshold f1`` and ``micro-macro``.
Each rule's CPU is its process's (user + system; one BLAS thread, as the console script has it), and its measures,
the paired tests against the margin, the fixed cut and PCut (Wilcoxon over the labels' F1, McNemar on the rows'
label sets) and the label cardinality it predicts come from its predictions.  ``--min-positives N`` builds the
corpus with the tags of at least N training documents as labels (rarer labels, where Lin & Lin's rule is meant to
act) in a folder ``--inputs`` of its own, whose apt lists are those of the default folder.

``--source appstream`` builds a second corpus of another shape instead, in ``benchmarks/.inputs/multilabel-appstream``
unless ``--inputs`` says otherwise: Debian's AppStream catalogue, each application's summary and description
labelled by its freedesktop.org categories (a hierarchy: ``Game`` and ``LogicGame``, ``AudioVideo`` and
``Player`` …), the categories of at least 30 training documents as labels (benchmarks/appstream.py says what it
reads and why that floor); the split, the files (``appstream-train.arff`` …) and ``thresholds`` are as above.
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import appstream  # noqa: E402
from corpora import ALL_WORDS, TEST_RESIDUES, WORDS, debian_packages, mcnemar, quoted, residue  # noqa: E402

HERE = Path(__file__).resolve().parent
DEFAULT_INPUTS = HERE / ".inputs" / "multilabel"
FACETS = ("use", "works-with")
MIN_TRAINING_POSITIVES = 70
STEM = "debtags"
FORMATS = ("arff", "jsonl")
TOP = 1000
MEASURES = ("micro_f1", "macro_f1", "hamming_loss", "subset_accuracy")
#: ``--source``: each corpus's file stem, default folder and default floor (``--min-positives``).
SOURCES = {
    "debtags": (STEM, DEFAULT_INPUTS, MIN_TRAINING_POSITIVES),
    "appstream": ("appstream", HERE / ".inputs" / "multilabel-appstream", appstream.MIN_TRAINING_POSITIVES),
}


def selection(metric: str, how: str) -> str:
    """JMLR 2003's selection (presence scores, the ``TOP`` best, binary features) from every word, the labels'
    scores combined ``how``."""
    return f"{ALL_WORDS} select --metric {metric} --presence --top {TOP} {how} binarize"


#: The chains: tf·idf as ``train``'s default candidate makes it (filterkit/training.py) and the README's route
#: (``shape`` per label, or toward each word's most informative label), on the README's words (1,000 in all on
#: multi-label data: ``words`` keeps its 1,000 per class over all rows when there is no class); tf·idf on every
#: word, as TfidfVectorizer keeps them; and BNS and χ² selection of 1,000 of every word by max, mean and Forman's
#: round robin; and the route issue 77 named, BNS weights toward each word's best label (thresholds only).  ``shape``
#: on every word is left out: a copy of each of ~28,000 words per label is ~970,000
#: features.
CHAINS = {
    "tf·idf": f"{WORDS} idf --presence --multiply l2",
    "shape bns l2": f"{WORDS} shape bns l2",
    "shape max bns l2": f"{WORDS} shape --multiclass max bns l2",
    "tf·idf (all words)": f"{ALL_WORDS} idf --presence --multiply l2",
    "bns max l2": f"{WORDS} bns --combine max l2",
    "BNS max": selection("bns", "--combine max"),
    "BNS mean": selection("bns", "--combine mean"),
    "BNS round robin": selection("bns", "--per-label"),
    "χ² max": selection("chi", "--combine max"),
    "χ² mean": selection("chi", "--combine mean"),
    "χ² round robin": selection("chi", "--per-label"),
}
#: The evaluations, each one ``evaluate --compare`` of these chains, the first the baseline.  ``shape``'s default
#: on 35 labels, a copy of each word per label (~35,000 features), is the costly one (37 minutes here, against 2
#: for ``shape max``, which shapes each word once, toward its most informative label), so each runs alone.
RUNS = {
    "selection": [name for name in CHAINS if not name.startswith(("shape", "bns"))],
    "shape": ["tf·idf", "shape max bns l2"],
    "shape-copies": ["tf·idf", "shape bns l2"],
}
#: The runs made on both formats when ``--formats`` is not given (the others on MEKA ARFF alone).
BOTH_FORMATS = ("selection",)
#: ``thresholds``: the default route whose labels are cut, evaluate's settings for it (train's C search) and each
#: rule's evaluate options, the baselines first.
THRESHOLD_ROUTE = "tf·idf (all words)"
THRESHOLD_SETTINGS = {"c_by": "f1", "c_search": "early"}
THRESHOLD_RULES: dict[str, list[str]] = {
    "margin": ["--svm-decision", "margin"],
    "fixed": [],
    "pcut": ["--threshold", "pcut"],
    "f1": ["--svm-threshold", "f1"],
    "micro-macro": ["--svm-threshold", "micro-macro"],
}
#: The rules each rule is tested against (:func:`summarize_thresholds`).
THRESHOLD_BASELINES = ("margin", "fixed", "pcut")


def debtags(record: dict[str, str]) -> list[str]:
    """A stanza's tags of ``FACETS``, sorted (``::TODO``, debtags' placeholder, left out)."""
    tags = {tag.strip() for tag in record.get("Tag", "").replace("\n", " ").split(",")}
    return sorted(tag for tag in tags if tag.split("::")[0] in FACETS and not tag.endswith("::TODO"))


def split(documents: list[tuple[str, str, list[str]]]) -> tuple[list, list, list[str]]:
    """Train and test (text, labels) of ``documents`` (package, text, tags), and the labels kept, sorted."""
    seen, train, test = set(), [], []
    for key, text, tags in sorted(documents):
        if text in seen or not tags:
            continue
        seen.add(text)
        (test if residue(key, 10) in TEST_RESIDUES else train).append((text, tags))
    counts: dict[str, int] = {}
    for _, tags in train:
        for tag in tags:
            counts[tag] = counts.get(tag, 0) + 1
    labels = sorted(tag for tag, count in counts.items() if count >= MIN_TRAINING_POSITIVES)
    kept = set(labels)
    parts = [[(text, [tag for tag in tags if tag in kept]) for text, tags in part] for part in (train, test)]
    return [row for row in parts[0] if row[1]], [row for row in parts[1] if row[1]], labels


def write_meka(path: Path, labels: list[str], rows: list[tuple[str, list[str]]]) -> None:
    """MEKA ARFF: ``-C k`` in the relation name, the k labels ``{0,1}`` first, then the string ``text``."""
    header = f"@relation {quoted(f'{path.stem}: -C {len(labels)}')}\n\n"
    header += "".join(f"@attribute {quoted(label)} {{0,1}}\n" for label in labels) + "@attribute text string\n"
    body = "".join(",".join(str(int(label in tags)) for label in labels) + f",{quoted(text)}\n" for text, tags in rows)
    path.write_text(f"{header}\n@data\n{body}", encoding="utf-8")


def write_jsonl(path: Path, rows: list[tuple[str, list[str]]]) -> None:
    """JSON Lines: a document a line, its labels an array of strings."""
    lines = (json.dumps({"labels": tags, "text": text}, ensure_ascii=False) + "\n" for text, tags in rows)
    path.write_text("".join(lines), encoding="utf-8")


def corpus_sizes(labels: list[str], train: list, test: list) -> dict:
    """Documents, labels, cardinality, density and each label's training and test documents."""
    sizes: dict = {"labels": len(labels)}
    for name, rows in (("train", train), ("test", test)):
        cardinality = sum(len(tags) for _, tags in rows) / len(rows)
        sizes[name] = {
            "documents": len(rows),
            "cardinality": round(cardinality, 4),
            "density": round(cardinality / len(labels), 4),
            "label sets": len({tuple(tags) for _, tags in rows}),
        }
    sizes["positives"] = {label: [sum(label in tags for _, tags in rows) for rows in (train, test)] for label in labels}
    return sizes


def share_apt_lists(inputs: Path) -> None:
    """Where ``inputs`` (another corpus's folder, as ``--min-positives`` makes one) has no apt lists of its own,
    point its ``apt`` at those of ``DEFAULT_INPUTS``, when they are there: the same listing, not fetched again."""
    shared = DEFAULT_INPUTS / "apt"
    if inputs.resolve() != DEFAULT_INPUTS.resolve() and not (inputs / "apt").exists() and shared.exists():
        (inputs / "apt").symlink_to(shared.resolve(), target_is_directory=True)


def build(inputs: Path, source: str = "debtags") -> dict:
    """The MEKA ARFF and JSON Lines train/test files of ``source`` (``SOURCES``) under ``inputs/data``; their
    sizes (also sizes.json)."""
    folder = inputs / "data"
    folder.mkdir(parents=True, exist_ok=True)
    if source == "appstream":
        documents, listing = appstream.documents(inputs)
    else:
        documents = [(record["Package"], text, debtags(record)) for record, text in debian_packages(inputs)]
        release = next((inputs / "apt" / "lists").glob("*_debian_dists_bookworm_InRelease"))
        listing = next(line for line in release.read_text().splitlines() if line.startswith("Date:"))
    train, test, labels = split(documents)
    for part, rows in (("train", train), ("test", test)):
        write_meka(folder / f"{STEM}-{part}.arff", labels, rows)
        write_jsonl(folder / f"{STEM}-{part}.jsonl", rows)
    sizes = {"min_training_positives": MIN_TRAINING_POSITIVES, **corpus_sizes(labels, train, test), "lists": listing}
    (folder / "sizes.json").write_text(json.dumps(sizes, indent=1) + "\n")
    return sizes


def run_filterkit(inputs: Path, run: str, form: str) -> dict:
    """The chains of ``RUNS[run]`` in one ``evaluate --test`` on the ``form`` training file; the JSON and the
    predictions."""
    data, results = inputs / "data", inputs / "results"
    target = results / f"filterkit-{run}-{form}.json"
    if target.exists():
        return json.loads(target.read_text())
    results.mkdir(parents=True, exist_ok=True)
    predictions = target.with_suffix(".csv")
    command = ["filterkit", "evaluate", "--json", "--quiet"]
    if form == "jsonl":
        command += ["--labels-column", "labels"]
    # the test file is MEKA's in both: a JSON Lines file's labels are not read against a training header yet
    command += ["--test", str(data / f"{STEM}-test.arff"), "--predictions", str(predictions)]
    command += ["--compare", str(data / f"{STEM}-train.{form}"), *(CHAINS[name] for name in RUNS[run])]
    started = time.time()
    finished = subprocess.run(command, capture_output=True, text=True, check=True)
    found = json.loads(finished.stdout)
    found["seconds"] = round(time.time() - started, 1)
    found["load"] = Path("/proc/loadavg").read_text().split()[:3]
    target.write_text(json.dumps(found) + "\n")
    return found


def read_jsonl(path: Path) -> tuple[list[str], list[list[str]]]:
    """The texts and label lists of a file ``write_jsonl`` wrote."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [row["text"] for row in rows], [row["labels"] for row in rows]


def run_sklearn(inputs: Path) -> dict:
    """``OneVsRestClassifier(LinearSVC())`` on ``TfidfVectorizer()``, default settings: train, then test."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MultiLabelBinarizer
    from sklearn.svm import LinearSVC

    target = inputs / "results" / "sklearn.json"
    if target.exists():
        return json.loads(target.read_text())
    target.parent.mkdir(parents=True, exist_ok=True)
    (train_texts, train_labels), (test_texts, _) = (
        read_jsonl(inputs / "data" / f"{STEM}-{p}.jsonl") for p in ("train", "test")
    )
    binarizer = MultiLabelBinarizer()
    started = time.process_time()
    model = make_pipeline(TfidfVectorizer(), OneVsRestClassifier(LinearSVC()))
    model.fit(train_texts, binarizer.fit_transform(train_labels))
    predicted = model.predict(test_texts)
    found = {
        "labels": [str(label) for label in binarizer.classes_],
        "predicted": ["|".join(binarizer.classes_[row.nonzero()[0]]) for row in predicted],
        "seconds": round(time.process_time() - started, 1),
    }
    target.write_text(json.dumps(found) + "\n")
    return found


def run(inputs: Path, runs: list[str], formats: list[str] | None) -> None:
    """The corpus when not built, scikit-learn's route, then each of ``runs`` on each of ``formats`` (by default
    MEKA ARFF, and JSON Lines too for ``BOTH_FORMATS``)."""
    if not (inputs / "data" / "sizes.json").exists():
        build(inputs)
    print("scikit-learn", run_sklearn(inputs)["seconds"], "s", flush=True)
    for name in runs:
        for form in formats or (FORMATS if name in BOTH_FORMATS else ("arff",)):
            found = run_filterkit(inputs, name, form)
            print(name, form, found["seconds"], "s, load", " ".join(found["load"]), flush=True)


def children_cpu() -> float:
    """The CPU seconds (user + system) of this process's finished children."""
    import resource

    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def run_threshold(inputs: Path, route: str, rule: str) -> dict:
    """``route`` under ``rule`` on the MEKA files, in a process of its own: its labels, test truth and predicted
    label sets, CPU and wall seconds, the load before it; kept under ``--inputs/results``."""
    data, results = inputs / "data", inputs / "results"
    slug = "" if route == THRESHOLD_ROUTE else "".join(c if c.isalnum() else "-" for c in route) + "-"
    target = results / f"thresholds-{slug}{rule}.json"
    if target.exists():
        return json.loads(target.read_text())
    results.mkdir(parents=True, exist_ok=True)
    settings = [f"--svm-{name.replace('_', '-')}={value}" for name, value in THRESHOLD_SETTINGS.items()]
    command = ["filterkit", "evaluate", "--json", "--quiet", "--test", str(data / f"{STEM}-test.arff")]
    command += ["--predictions", str(target.with_suffix(".csv")), *settings, *THRESHOLD_RULES[rule]]
    command += [str(data / f"{STEM}-train.arff"), *CHAINS[route].split()]
    load, cpu, started = Path("/proc/loadavg").read_text().split()[:3], children_cpu(), time.time()
    finished = subprocess.run(command, capture_output=True, text=True, check=True)
    found = {"seconds": round(time.time() - started, 1), "cpu": round(children_cpu() - cpu, 2), "load": load}
    labels = json.loads(finished.stdout)["settings"]["labels"]
    with open(target.with_suffix(".csv"), encoding="utf-8") as table:
        rows = list(csv.DictReader(table))
    found.update(labels=labels, truth=[r["truth"] for r in rows], predicted=[r["predicted"] for r in rows])
    target.write_text(json.dumps(found) + "\n")
    return found


def summarize_thresholds(inputs: Path, route: str) -> str:
    """§11.1's table for ``route``: per rule of ``THRESHOLD_RULES`` its measures, labels a row, CPU, and the paired
    tests against each of ``THRESHOLD_BASELINES``."""
    import numpy as np

    found = {rule: run_threshold(inputs, route, rule) for rule in THRESHOLD_RULES}
    labels = found["fixed"]["labels"]
    assert all(entry["labels"] == labels and entry["truth"] == found["fixed"]["truth"] for entry in found.values())
    truth = label_matrix(found["fixed"]["truth"], labels)
    predicted = {rule: label_matrix(entry["predicted"], labels) for rule, entry in found.items()}
    scored = {rule: measures(truth, matrix) for rule, matrix in predicted.items()}
    lines = [corpus_line(inputs)] if (inputs / "data" / "sizes.json").exists() else []
    lines += [
        f"Route `{CHAINS[route]}`.",
        "; ".join(
            f"{rule} {entry['seconds']} s wall (load {' '.join(entry['load'])})" for rule, entry in found.items()
        ),
        "",
        "| rule | micro-F1 | macro-F1 | Hamming loss | subset accuracy | labels a row | CPU s | per-label F1 against "
        "the margin: Δ, W/T/L, Wilcoxon p | against fixed | against PCut | label sets right only under it / only "
        "under fixed, McNemar p |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for rule, values in scored.items():
        cells = [f"{values[key]:.{4 if key == 'hamming_loss' else 3}f}" for key in MEASURES]
        cells += [f"{predicted[rule].sum(axis=1).mean():.2f}", f"{found[rule]['cpu']:.1f}"]
        for other in THRESHOLD_BASELINES:
            over, _ = paired_tests(truth, (values, predicted[rule]), (scored[other], predicted[other]))
            cells.append(
                f"{over['difference']:+.3f}, {over['wins']}/{over['ties']}/{over['losses']}, {over['wilcoxon_p']:.2g}"
            )
        _, exact = paired_tests(truth, (values, predicted[rule]), (scored["fixed"], predicted["fixed"]))
        cells.append(f"{exact['only_chain_right']} / {exact['only_baseline_right']}, {exact['p']:.2g}")
        lines.append(f"| {rule} | " + " | ".join(cells) + " |")
    cardinality = float(np.mean(truth.sum(axis=1)))
    return "\n".join(lines) + f"\n\nTest label cardinality {cardinality:.3f}.\n"


def corpus_line(inputs: Path) -> str:
    """The corpus of ``inputs``: documents, labels, the labels of fewer than 70 training documents (§11's floor),
    the fewest positives of a label."""
    sizes = json.loads((inputs / "data" / "sizes.json").read_text())
    positives = list(sizes["positives"].values())
    rare = sum(train < 70 for train, _ in positives)
    return (
        f"Corpus: {sizes['train']['documents']:,} training and {sizes['test']['documents']:,} test documents, "
        f"{sizes['labels']} labels ({rare} of fewer than 70 training documents); a label's fewest positives "
        f"{min(train for train, _ in positives)} training, {min(test for _, test in positives)} test."
    )


def paired_tests(truth, route: tuple, other: tuple) -> tuple[dict, dict]:
    """scipy's Wilcoxon over the labels' F1 and McNemar's exact test on the rows' whole label sets, of ``route``
    against ``other`` (each: its :func:`measures` and its predicted rows × labels)."""
    import numpy as np
    from scipy.stats import wilcoxon

    (found, predicted), (found_other, predicted_other) = route, other
    ours, theirs = found["per_label"], found_other["per_label"]
    differences = np.subtract(ours, theirs)
    wins, ties = int(np.sum(differences > 0)), int(np.sum(differences == 0))
    p = 1.0 if ties == len(differences) else float(wilcoxon(ours, theirs).pvalue)  # 1 when all tie, as evaluate
    rows = [[tuple(row) for row in matrix] for matrix in (truth, predicted, predicted_other)]
    only = mcnemar(*rows)
    over = {"difference": differences.mean(), "wins": wins, "ties": ties, "losses": len(differences) - wins - ties}
    return {**over, "wilcoxon_p": p}, {"only_chain_right": only[0], "only_baseline_right": only[1], "p": only[2]}


def label_matrix(sets: list[str], labels: list[str]):
    """Label sets (names joined by ``|``, evaluate's ``--predictions`` form) as a rows × labels 0/1 matrix."""
    import numpy as np

    return np.array([[label in joined.split("|") for label in labels] for joined in sets], dtype=int)


def measures(truth, predicted) -> dict:
    """MEKA's measures of predicted label sets by ``sklearn.metrics`` (a 0/0 F1 counts 0, as evaluate's)."""
    from sklearn.metrics import accuracy_score, f1_score, hamming_loss

    return {
        "micro_f1": f1_score(truth, predicted, average="micro", zero_division=0),
        "macro_f1": f1_score(truth, predicted, average="macro", zero_division=0),
        "hamming_loss": hamming_loss(truth, predicted),
        "subset_accuracy": accuracy_score(truth, predicted),
        "per_label": f1_score(truth, predicted, average=None, zero_division=0).tolist(),
    }


def read_as_arff(path: Path) -> bytes:
    """What filterkit reads of ``path``, written as ARFF."""
    options = ["--labels-column", "labels"] if path.suffix == ".jsonl" else []
    return subprocess.run(["filterkit", "-q", *options, str(path)], capture_output=True, check=True).stdout


def check_formats(inputs: Path) -> str:
    """Whether filterkit reads the same of both formats, and which runs' evaluations (the JSON Lines training
    file against the same test file) gave the same results, paired tests and predictions."""
    data, results = inputs / "data", inputs / "results"
    for part in ("train", "test"):
        if read_as_arff(data / f"{STEM}-{part}.arff") != read_as_arff(data / f"{STEM}-{part}.jsonl"):
            return f"the {part} files read DIFFERENTLY"
    found = []
    for run in RUNS:
        paths = [results / f"filterkit-{run}-{form}" for form in FORMATS]
        if not all(path.with_suffix(".json").exists() for path in paths):
            continue
        documents = [json.loads(path.with_suffix(".json").read_text()) for path in paths]
        settings = [{k: v for k, v in doc["settings"].items() if k not in ("input", "test")} for doc in documents]
        same = settings[0] == settings[1] and all(
            documents[0][key] == documents[1][key] for key in ("results", "paired")
        )
        same = same and paths[0].with_suffix(".csv").read_bytes() == paths[1].with_suffix(".csv").read_bytes()
        found.append(f"run {run!r}: " + ("the same results, paired tests and predictions" if same else "DIFFERENT"))
    return "both files of each part read as the same bytes; " + ("; ".join(found) or "no run of both formats")


def summarize(inputs: Path) -> str:
    """The corpus, each route's measures (evaluate's, checked against sklearn.metrics on its predictions), the
    paired tests against the first chain (evaluate's) and against scikit-learn (per-label F1 by Wilcoxon;
    McNemar on exact label sets), and selection's max, mean and round robin against each other."""
    import numpy as np

    results = inputs / "results"
    sizes = json.loads((inputs / "data" / "sizes.json").read_text())
    paths = {run: results / f"filterkit-{run}-arff.json" for run in RUNS}
    documents = {run: json.loads(path.read_text()) for run, path in paths.items() if path.exists()}
    if "selection" not in documents:
        return f"No summary without the selection run ({paths['selection']} is missing).\n"
    document = documents["selection"]
    labels = document["settings"]["labels"]
    others = [doc for run, doc in documents.items() if run != "selection"]
    assert all(doc["results"][0] == document["results"][0] for doc in others), "the baseline differs between runs"
    results_of_all = document["results"] + [entry for doc in others for entry in doc["results"][1:]]
    selection_chains = set(document["settings"]["chains"])
    rows = []
    for run in documents:
        with open(results / f"filterkit-{run}-arff.csv", encoding="utf-8") as table:
            rows += [row for row in csv.DictReader(table) if run == "selection" or row["chain"] not in selection_chains]
    truth_sets = [row["truth"] for row in rows if row["chain"] == rows[0]["chain"]]
    truth = label_matrix(truth_sets, labels)
    sklearn = run_sklearn(inputs)
    assert sklearn["labels"] == labels, "scikit-learn's labels are not evaluate's"
    routes = {"TfidfVectorizer() + OneVsRest(LinearSVC())": label_matrix(sklearn["predicted"], labels)}
    routes.update(
        {
            entry["chain"]: label_matrix([r["predicted"] for r in rows if r["chain"] == entry["chain"]], labels)
            for entry in results_of_all
        }
    )
    names = {chain: name for name, chain in CHAINS.items()}
    found = {route: measures(truth, predicted) for route, predicted in routes.items()}

    def routes_paired(route: str, other: str) -> tuple[dict, dict]:
        """:func:`paired_tests` of two routes by name."""
        return paired_tests(truth, (found[route], routes[route]), (found[other], routes[other]))

    disagreements = []
    for doc in documents.values():
        for entry in doc["paired"]:
            for theirs, ours in zip(
                (entry["f1_over_labels"], entry["subset_mcnemar"]), routes_paired(entry["chain"], entry["baseline"])
            ):
                if any(not np.isclose(ours[key], value, rtol=1e-9, atol=1e-12) for key, value in theirs.items()):
                    disagreements.append(f"{names[entry['chain']]}'s paired tests")
    for entry in results_of_all:
        ours = found[entry["chain"]]
        theirs = dict(entry, per_label=[entry["per_label"][label]["f1"] for label in labels])
        for key, value in ours.items():
            if not np.allclose(value, theirs[key], rtol=0, atol=1e-12):
                disagreements.append(f"{names[entry['chain']]} {key}")
    train, test = sizes["train"], sizes["test"]
    lines = [
        f"Corpus: {train['documents']:,} training and {test['documents']:,} test documents, {sizes['labels']} labels; "
        f"cardinality {train['cardinality']:.3f} / {test['cardinality']:.3f}, density {train['density']:.4f} / "
        f"{test['density']:.4f}, {train['label sets']} / {test['label sets']} distinct label sets; {sizes['lists']}.",
        "evaluate's measures and paired tests against sklearn.metrics and scipy.stats on its --predictions: "
        + ("all agree (to 1e-12)" if not disagreements else "DISAGREE: " + ", ".join(disagreements))
        + ".",
        f"MEKA ARFF against JSON Lines: {check_formats(inputs)}.",
        "evaluate: "
        + "; ".join(f"{run} {doc['seconds']} s wall (load {' '.join(doc['load'])})" for run, doc in documents.items())
        + "; "
        f"scikit-learn {sklearn['seconds']} s CPU.",
        "",
        "| route | micro-F1 | macro-F1 | Hamming loss | subset accuracy | per-label F1 vs the first chain: Δ, "
        "W/T/L, Wilcoxon p | exact sets right only under it / only under the first, McNemar p |",
        "|---|---|---|---|---|---|---|",
    ]
    paired = {entry["chain"]: entry for doc in documents.values() for entry in doc["paired"]}
    for route, values in found.items():
        cells = [f"{values[key]:.{4 if key == 'hamming_loss' else 3}f}" for key in MEASURES]
        tests = ["", ""]
        if route in paired:
            over, exact = paired[route]["f1_over_labels"], paired[route]["subset_mcnemar"]
            tests = [
                f"{over['difference']:+.3f}, {over['wins']}/{over['ties']}/{over['losses']}, {over['wilcoxon_p']:.2g}",
                f"{exact['only_chain_right']} / {exact['only_baseline_right']}, {exact['p']:.2g}",
            ]
        name = f"`{names[route]}`" if route in names else route
        lines.append(f"| {name} | " + " | ".join(cells + tests) + " |")
    lines += [
        "",
        "| against | route | per-label F1: Δ, W/T/L, Wilcoxon p | exact sets right only under the route "
        "/ only under the other, McNemar p |",
        "|---|---|---|---|",
    ]

    def versus(route: str, other: str) -> str:
        over, exact = routes_paired(route, other)
        return (
            f"{over['difference']:+.3f}, {over['wins']}/{over['ties']}/{over['losses']}, {over['wilcoxon_p']:.2g} | "
            f"{exact['only_chain_right']} / {exact['only_baseline_right']}, {exact['p']:.2g}"
        )

    sklearn_route = next(iter(routes))
    for chain in (entry["chain"] for entry in results_of_all):
        lines.append(f"| scikit-learn | `{names[chain]}` | {versus(chain, sklearn_route)} |")
    for metric in ("BNS", "χ²"):
        for how in ("mean", "round robin"):
            route, other = CHAINS[f"{metric} {how}"], CHAINS[f"{metric} max"]
            lines.append(f"| `{metric} max` | `{metric} {how}` | {versus(route, other)} |")
        tested = versus(CHAINS[f"{metric} max"], CHAINS["tf·idf (all words)"])
        lines.append(f"| `tf·idf (all words)` | `{metric} max` | {tested} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    global MIN_TRAINING_POSITIVES, STEM
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=("build", "run", "summarize", "thresholds"))
    parser.add_argument("--source", choices=SOURCES, default="debtags", help="the corpus (default: §11's debtags)")
    parser.add_argument("--inputs", type=Path, help="the corpus's folder (default: the source's under .inputs)")
    parser.add_argument("--formats", help="of arff, jsonl (run; default: arff, and jsonl for the selection run)")
    parser.add_argument("--runs", default=",".join(RUNS), help="of selection, shape, shape-copies (run)")
    parser.add_argument(
        "--min-positives",
        type=int,
        help="the training documents a tag needs to be a label (build; default: the source's, 70 for debtags)",
    )
    parser.add_argument("--route", choices=CHAINS, default=THRESHOLD_ROUTE, help="the chain cut (thresholds)")
    args = parser.parse_args()
    STEM, default_inputs, default_floor = SOURCES[args.source]
    args.inputs = args.inputs or default_inputs
    args.inputs.mkdir(parents=True, exist_ok=True)
    MIN_TRAINING_POSITIVES = default_floor if args.min_positives is None else args.min_positives
    if args.action == "build":
        print(json.dumps(build(args.inputs, args.source), indent=1))
    elif args.action == "thresholds":
        if not (args.inputs / "data" / "sizes.json").exists():
            if args.source == "debtags":
                share_apt_lists(args.inputs)
            build(args.inputs, args.source)
        print(summarize_thresholds(args.inputs, args.route))
    elif args.action == "run":
        run(args.inputs, args.runs.split(","), args.formats.split(",") if args.formats else None)
        print(summarize(args.inputs))
    else:
        print(summarize(args.inputs))


if __name__ == "__main__":
    main()
