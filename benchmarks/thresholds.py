"""Binary thresholds from out-of-fold scores against scikit-learn's ``TunedThresholdClassifierCV`` (issue 77).

    python benchmarks/thresholds.py [--tasks reuters-grain,debian-science,…] [--repeats 3] [--max-train N]
                                    [--max-train-of debian-science,…] [--fresh] [--report-only]
                                    [--inputs benchmarks/.inputs/thresholds] [--out benchmarks/RESULTS.md]

Issue 77's goal: "On binary tasks, F1 at least scikit-learn's TunedThresholdClassifierCV(LinearSVC) on the same
features, at less CPU (no extra fits)."

Tasks: the binary tasks of benchmarks/corpora.py (its ``build`` runs first when its files are missing): Weka's
Reuters grain and corn (``--positive 1``), Debian package descriptions' science, games and sound sections, and the
fortune files science and computers, each against the rest of its training file.  ``--max-train N`` keeps, of a
training file with more rows (on the tasks of ``--max-train-of``, every one unless given), the N rows whose lines
have the smallest SHA-256 (benchmarks/train.py's :func:`subsampled`); the test file is whole.

The features, the same for every route: the chain ``FEATURES`` fitted on the training file with ``--positive``
(``filterkit --save-model``) and applied to the test file (``filterkit apply``), each written as sparse ARFF under
``--inputs/features``.  On them, each route in its own process:

- ``fixed``: ``filterkit evaluate --test`` with an empty chain, ``--svm-c-by f1`` (C by the F1 of the inner CV's
  out-of-fold rows over 0.01, 0.1, 1, 10, 100, 5 inner folds, every C scored: train's settings but the full
  search), Platt's probability cut at 0.5 (``--svm-threshold fixed``, the default).
- ``f1``: the same with ``--svm-threshold f1``: the cut where the F1 of those same out-of-fold rows is highest
  (no fit beyond ``fixed``'s).
- ``f1-early``: ``f1`` with ``--svm-c-search early`` (train's default search: C walked up from 0.01 until the
  inner F1 stops rising).
- ``grid``: ``GridSearchCV(LinearSVC(), {"C": the same five}, scoring="f1", cv=5)``, refit, ``predict``.
- ``tuned``: that search, then ``TunedThresholdClassifierCV(LinearSVC(C=best C), scoring="f1", cv=5)`` (its
  defaults: 100 cuts between the extreme decision values, 5 stratified folds, refit on every row): six fits
  beyond the search, and cheaper than tuning the cut around the whole search
  (``TunedThresholdClassifierCV(GridSearchCV(…))``, five searches more).

``filterkit evaluate --test`` fits on the training file and scores the test file in one process, as the
scikit-learn routes do (``train`` then ``predict`` would be two processes, and ``train`` has no empty chain:
without one it searches its default candidates).  Every route uses one core (``--jobs 1``; scikit-learn's
``n_jobs`` left at None; OpenBLAS held to one thread, as filterkit's console script holds its own: its idle
second thread only spins); the scikit-learn process reads the ARFF files with filterkit's reader.  CPU seconds
(user + system, children included) and wall seconds from ``wait4`` (benchmarks/run.py's :func:`measure`), medians
of ``--repeats`` interleaved rounds (each round runs every task's routes in turn); each round is kept under
``--inputs/runs`` and reused unless ``--fresh``.  Test F1 is of the positive class; McNemar's exact test compares
``f1`` with ``tuned`` (and with ``fixed``) on the test rows' decisions.  The section of ``--out`` under
``HEADING`` is rewritten.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpora  # noqa: E402  (benchmarks/corpora.py: the corpora and McNemar's test)
from run import _commit, adopt_orphans, measure, replace_section  # noqa: E402  (benchmarks/run.py: the measuring)
from train import data_lines, subsampled  # noqa: E402  (benchmarks/train.py: the same subsample)

HERE = Path(__file__).resolve().parent
DEFAULT_INPUTS = HERE / ".inputs" / "thresholds"
HEADING = "## Binary thresholds against TunedThresholdClassifierCV (`thresholds.py`)"
FEATURES = "words --counts --lowercase --stopwords weka shape bns l2"
C_VALUES = (0.01, 0.1, 1, 10, 100)
ROUTES = ("fixed", "f1", "f1-early", "grid", "tuned")
ROUTE_NAMES = {
    "fixed": "(a) filterkit svm, fixed cut",
    "f1": "(b) filterkit svm, `--svm-threshold f1`",
    "f1-early": "(b′) (b) with `--svm-c-search early`",
    "grid": "(c) GridSearchCV(LinearSVC)",
    "tuned": "(d) TunedThresholdClassifierCV",
}
#: The routes run by ``filterkit evaluate``.
FILTERKIT_ROUTES = ("fixed", "f1", "f1-early")
#: Each task: its data file stem under corpora.py's data folder, and the positive class.
TASKS = {name: (stem, positive) for name, stem, positive in corpora.TASKS if positive is not None}

#: The scikit-learn routes: train file, test file, class attribute, positive class, route, C grid; prints JSON.
SKLEARN_ROUTE = r"""
import json, sys
from sklearn.model_selection import GridSearchCV, TunedThresholdClassifierCV
from sklearn.svm import LinearSVC
from filterkit.arff import read_arff

train_path, test_path, class_name, positive, route, values = sys.argv[1:7]

def features(path):
    schema, chunk = read_arff(path)
    index = next(i for i, attribute in enumerate(schema.attributes) if attribute.name == class_name)
    labels = schema.attributes[index].labels
    classes = chunk.values[:, index].toarray().ravel()
    kept = [column for column in range(chunk.values.shape[1]) if column != index]
    return chunk.values[:, kept], [int(labels[int(value)] == positive) for value in classes]

(train_x, train_y), (test_x, test_y) = features(train_path), features(test_path)
search = GridSearchCV(LinearSVC(), {"C": [float(value) for value in values.split(",")]}, scoring="f1", cv=5)
search.fit(train_x, train_y)
found = {"C": search.best_params_["C"], "inner_f1": search.best_score_}
model = search
if route == "tuned":
    model = TunedThresholdClassifierCV(LinearSVC(C=search.best_params_["C"]), scoring="f1", cv=5).fit(train_x, train_y)
    found.update(threshold=float(model.best_threshold_), inner_f1=float(model.best_score_))
found.update(truths=test_y, decisions=[int(value) for value in model.predict(test_x)])
print(json.dumps(found))
"""


def task_paths(inputs: Path, task: str, max_train: int | None) -> dict[str, Path]:
    """The files of a task's run: the training file it starts from, the model and the two feature files."""
    folder = inputs / "features" / (task + (f"-max{max_train}" if max_train else ""))
    return {
        "raw train": folder / "raw-train.arff",
        "model": folder / "features.model.json",
        "train": folder / "train.arff",
        "test": folder / "test.arff",
    }


def class_counts(path: Path, positive: str) -> tuple[str, int, int]:
    """A feature file's class attribute (its one nominal attribute), rows and rows of the class ``positive``."""
    from filterkit.arff import read_arff

    schema, chunk = read_arff(str(path))
    index = next(i for i, attribute in enumerate(schema.attributes) if attribute.kind == "nominal")
    labels = schema.attributes[index].labels
    classes = chunk.values[:, index].toarray().ravel()
    return schema.attributes[index].name, chunk.n_rows, sum(labels[int(value)] == positive for value in classes)


def feature_count(path: Path) -> int:
    """The attributes of a feature file's header, its class left out."""
    return sum(line.lower().startswith("@attribute") for line in data_lines(path)[0]) - 1


def make_features(inputs: Path, task: str, max_train: int | None) -> dict:
    """The task's feature files (made once, kept), their sizes and the seconds the chain took."""
    stem, positive = TASKS[task]
    data = corpora.DEFAULT_INPUTS / "data"
    if not (data / f"{stem}-train.arff").exists():
        corpora.build(corpora.DEFAULT_INPUTS, quick=False)
    paths = task_paths(inputs, task, max_train)
    sizes_file = paths["train"].with_name("sizes.json")
    if sizes_file.exists():
        return json.loads(sizes_file.read_text())
    paths["train"].parent.mkdir(parents=True, exist_ok=True)
    if max_train:
        subsampled(data / f"{stem}-train.arff", paths["raw train"], max_train)
    else:
        shutil.copyfile(data / f"{stem}-train.arff", paths["raw train"])
    filterkit = shutil.which("filterkit") or str(Path(sys.executable).with_name("filterkit"))
    fit = [filterkit, "-q", "--positive", positive, "--save-model", str(paths["model"]), str(paths["raw train"])]
    fit_seconds = measure([*fit, *FEATURES.split(), "-o", str(paths["train"])])[2]
    apply = [filterkit, "-q", "apply", str(paths["model"]), str(data / f"{stem}-test.arff"), "-o", str(paths["test"])]
    apply_seconds = measure(apply)[2]
    class_name, train_rows, train_positives = class_counts(paths["train"], positive)
    _, test_rows, test_positives = class_counts(paths["test"], positive)
    sizes = {
        "class": class_name,
        "train rows": train_rows,
        "train positives": train_positives,
        "test rows": test_rows,
        "test positives": test_positives,
        "features": feature_count(paths["train"]),
        "chain CPU s": round(fit_seconds + apply_seconds, 2),
    }
    sizes_file.write_text(json.dumps(sizes) + "\n")
    return sizes


def route_command(route: str, paths: dict[str, Path], task: str, class_name: str, output: Path) -> list[str]:
    """The command of one route on a task's feature files."""
    positive = TASKS[task][1]
    if route in ("grid", "tuned"):
        values = ",".join(str(value) for value in C_VALUES)
        # one BLAS thread, as filterkit's console script sets for itself: an idle OpenBLAS thread spins (5.3 s
        # of CPU beside 7.7 s of GridSearchCV on Debian science's 42,859 rows), and nothing here needs two
        script = ["env", "OPENBLAS_NUM_THREADS=1", sys.executable, "-c", SKLEARN_ROUTE]
        return [*script, str(paths["train"]), str(paths["test"]), class_name, positive, route, values]
    filterkit = shutil.which("filterkit") or str(Path(sys.executable).with_name("filterkit"))
    return [
        filterkit,
        "evaluate",
        "-q",
        "--json",
        "--jobs",
        "1",
        "-c",
        class_name,
        "--positive",
        positive,
        "--svm-c-by",
        "f1",
        "--svm-c-values",
        ",".join(str(value) for value in C_VALUES),
        "--svm-threshold",
        route.removesuffix("-early"),
        "--svm-c-search",
        "early" if route.endswith("-early") else "full",
        "--test",
        str(paths["test"]),
        "--predictions",
        str(output.with_suffix(".csv")),
        str(paths["train"]),
    ]


def f1_precision_recall(truths: list[int], decisions: list[int]) -> tuple[float, float, float]:
    """F1, precision and recall of the positive class (1); 0 where undefined."""
    true_positive = sum(t == d == 1 for t, d in zip(truths, decisions))
    predicted, actual = sum(decisions), sum(truths)
    f1 = 2 * true_positive / (predicted + actual) if predicted + actual else 0.0
    return f1, true_positive / predicted if predicted else 0.0, true_positive / actual if actual else 0.0


def run_route(route: str, paths: dict[str, Path], task: str, class_name: str, folder: Path) -> dict:
    """One round of a route: its seconds, C, cut, and the test rows' truths and decisions."""
    output = folder / f"{paths['train'].parent.name}.{route}.out"
    wall, _, cpu = measure(route_command(route, paths, task, class_name, output), output)
    found = json.loads(output.read_text())
    if route in FILTERKIT_ROUTES:
        with open(output.with_suffix(".csv"), encoding="utf-8") as table:
            rows = list(csv.DictReader(table))
        classifier = found["classifier"][0]
        found = {
            "C": classifier["C"],
            "inner_f1": classifier["inner_f1"][str(float(classifier["C"]))],
            "truths": [int(row["truth"]) for row in rows],
            "decisions": [int(row["decision"]) for row in rows],
        }
        if "threshold" in classifier:
            found.update(threshold=classifier["threshold"], inner_f1=classifier["threshold_f1"])
    found.update(wall=wall, cpu=cpu, when=time.strftime("%Y-%m-%d %H:%M"), load=round(os.getloadavg()[0], 2))
    return found


def rounds_file(folder: Path, paths: dict[str, Path], route: str) -> Path:
    """Where the measured rounds of a route on a task's files are kept (reused unless ``--fresh``)."""
    return folder / f"{paths['train'].parent.name}.{route}.rounds.json"


def median_round(found: list[dict]) -> dict:
    """The round whose test F1 is the median (the lower middle one of an even count): LinearSVC() draws its
    coordinate order from an unseeded generator, so scikit-learn's decisions may differ between rounds."""
    ranked = sorted(found, key=lambda run: f1_precision_recall(run["truths"], run["decisions"])[0])
    return ranked[(len(ranked) - 1) // 2]


def f1_range(found: list[dict]) -> str:
    """`` (rounds: LOW–HIGH)`` where the rounds' test F1 differ, else empty."""
    scores = [f1_precision_recall(run["truths"], run["decisions"])[0] for run in found]
    return f" ({min(scores):.3f}–{max(scores):.3f})" if max(scores) > min(scores) else ""


def median_of(found: list[dict], key: str) -> float:
    """The median of one measure over a route's rounds."""
    return statistics.median(run[key] for run in found)


def format_report(runs: dict[tuple[str, str], list[dict]], sizes: dict, repeats: int, limits: dict) -> str:
    """The section of RESULTS.md: per task each route's C, cut, test F1 and seconds, then the goal per task."""
    command = " ".join(["python", "benchmarks/thresholds.py", *sys.argv[1:]])
    loads = [run["load"] for found in runs.values() for run in found[:repeats]]
    lines = [
        HEADING,
        "",
        f"`{command}` on {time.strftime('%Y-%m-%d')} at commit {_commit()}, {os.cpu_count()} cores, load average "
        f"{min(loads, default=0):.2f}–{max(loads, default=0):.2f} during the rounds, niceness {os.nice(0)}; medians "
        f"of {repeats} interleaved rounds.  Features: `{FEATURES}` fitted on the training file with `--positive` "
        "and applied to the test file (the chain's CPU, shared by every route, is not in the routes' seconds).  "
        "(a)/(b): `filterkit evaluate --test` on those features, an empty chain, `--jobs 1 --svm-c-by f1`, "
        "C over 0.01–100 by the F1 of 5 inner folds' out-of-fold rows, the cut Platt's 0.5 (a) or the F1-best "
        "out-of-fold cut (b), every C scored; (b′) as (b) with `--svm-c-search early` (train's default); "
        "(c): `GridSearchCV(LinearSVC(), C, scoring='f1', cv=5)`; (d): (c)'s search, then "
        "`TunedThresholdClassifierCV(LinearSVC(C=best), scoring='f1', cv=5)`.  CPU: user + system of the "
        "route's process and children (`wait4`), the process's start and reading included; "
        "`OPENBLAS_NUM_THREADS=1` for (c)/(d), as filterkit sets for itself.  C, cut and test F1: "
        "of the round with the median test F1 (the rounds' range in brackets where they differ).  Cut: (b)'s on "
        "Platt's probability, (d)'s on LinearSVC's decision value.  Inner F1: what picked the C (and the cut).",
        "",
        "| task | train rows (positives) | test rows (positives) | features | route | C | cut | inner F1 | test F1 "
        "| precision | recall | CPU s | wall s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    verdicts = []
    for task in dict.fromkeys(task for task, _ in runs):
        size = sizes[task]
        measured = {route: runs[(task, route)][:repeats] for t, route in runs if t == task and runs[(t, route)]}
        name = task + (f" (first {limits[task]:,} rows)" if limits.get(task) else "")
        for route, found in measured.items():
            last = median_round(found)
            f1, precision, recall = f1_precision_recall(last["truths"], last["decisions"])
            cut = f"{last['threshold']:.3g}" if "threshold" in last else ("0.5" if route == "fixed" else "0")
            lines.append(
                f"| {name} | {size['train rows']:,} ({size['train positives']:,}) "
                f"| {size['test rows']:,} ({size['test positives']:,}) "
                f"| {size['features']:,} | {ROUTE_NAMES[route]} | {last['C']:g} | {cut} | {last['inner_f1']:.3f} "
                f"| {f1:.3f}{f1_range(found)} | {precision:.3f} | {recall:.3f} | {median_of(found, 'cpu'):.2f} "
                f"| {median_of(found, 'wall'):.2f} |"
            )
        verdicts += [verdict(task, measured, ours) for ours in ("f1", "f1-early") if {ours, "tuned"} <= set(measured)]
    missing = [f"{task} {route}" for (task, route), found in runs.items() if not found]
    lines.append("")
    if missing:
        lines += [f"Not measured (stopped for time, or left out): {', '.join(missing)}.", ""]
    lines += [
        "Issue 77's goal per task: test F1 of (b) ≥ (d)'s, and (b)'s CPU < (d)'s; McNemar's exact test of the test "
        "rows' decisions (rows right only under one route / only under the other, two-sided p).",
        "",
        "| task | route | F1 (b) − (d) | CPU (b) ÷ (d) | (b) vs (d): McNemar | (b) vs (a): F1, McNemar | goal |",
        "|---|---|---|---|---|---|---|",
        *verdicts,
    ]
    return "\n".join(lines) + "\n"


def verdict(task: str, measured: dict[str, list[dict]], route: str) -> str:
    """One task's row of the goal's table for ``route``, (b) or (b′)."""
    ours, theirs = median_round(measured[route]), median_round(measured["tuned"])
    truths = ours["truths"]
    assert truths == theirs["truths"], f"{task}: the routes' test rows differ"
    ours_f1 = f1_precision_recall(truths, ours["decisions"])[0]
    theirs_f1 = f1_precision_recall(truths, theirs["decisions"])[0]
    ratio = median_of(measured[route], "cpu") / median_of(measured["tuned"], "cpu")
    only_ours, only_theirs, p = corpora.mcnemar(truths, ours["decisions"], theirs["decisions"])
    against_fixed = ""
    if "fixed" in measured:
        fixed = median_round(measured["fixed"])["decisions"]
        gain = ours_f1 - f1_precision_recall(truths, fixed)[0]
        only_b, only_a, p_fixed = corpora.mcnemar(truths, ours["decisions"], fixed)
        against_fixed = f"{gain:+.3f}, {only_b} / {only_a}, p {p_fixed:.2g}"
    held = ours_f1 >= theirs_f1 and ratio < 1
    reason = [] if held else (["F1 lower"] if ours_f1 < theirs_f1 else []) + (["CPU not less"] if ratio >= 1 else [])
    return (
        f"| {task} | {ROUTE_NAMES[route].split()[0]} | {ours_f1 - theirs_f1:+.3f} | {ratio:.2f}× "
        f"| {only_ours} / {only_theirs}, p {p:.2g} "
        f"| {against_fixed} | {'holds' if held else 'not met: ' + ', '.join(reason)} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", default=",".join(TASKS), help="Comma-separated: " + ",".join(TASKS))
    parser.add_argument("--routes", default=",".join(ROUTES), help="Comma-separated: " + ",".join(ROUTES))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-train", type=int, default=None, help="At most this many training rows a task.")
    parser.add_argument("--max-train-of", default="", help="Comma-separated tasks --max-train applies to.")
    parser.add_argument("--fresh", action="store_true", help="Measure every round again, the stored ones too.")
    parser.add_argument("--report-only", action="store_true", help="Write the section from the stored rounds.")
    parser.add_argument("--inputs", type=Path, default=DEFAULT_INPUTS)
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    args = parser.parse_args()
    tasks = [name for name in args.tasks.split(",") if name]
    routes = [name for name in args.routes.split(",") if name]
    unknown = sorted(set(tasks) - set(TASKS)) + sorted(set(routes) - set(ROUTES))
    if unknown:
        parser.error(f"unknown tasks or routes: {', '.join(unknown)}")
    limited = set(args.max_train_of.split(",")) if args.max_train_of else set(tasks)
    limits = {task: args.max_train if task in limited else None for task in tasks}
    adopt_orphans()
    sizes = {task: make_features(args.inputs, task, limits[task]) for task in tasks}
    folder = args.inputs / "runs"
    folder.mkdir(parents=True, exist_ok=True)
    paths = {task: task_paths(args.inputs, task, limits[task]) for task in tasks}
    stored = {(task, route): rounds_file(folder, paths[task], route) for task in tasks for route in routes}
    runs = {
        key: [] if args.fresh or not path.exists() else json.loads(path.read_text()) for key, path in stored.items()
    }
    for round_number in range(0 if args.report_only else args.repeats):
        for task in tasks:
            for route in routes:
                if len(runs[(task, route)]) > round_number:
                    continue
                found = run_route(route, paths[task], task, sizes[task]["class"], folder)
                runs[(task, route)].append(found)
                stored[(task, route)].write_text(json.dumps(runs[(task, route)]) + "\n")
                f1 = f1_precision_recall(found["truths"], found["decisions"])[0]
                print(
                    f"{task:<18} {route:<6} {found['wall']:7.2f} s wall {found['cpu']:7.2f} s CPU F1 {f1:.4f}",
                    file=sys.stderr,
                    flush=True,
                )
            # rewritten after every task's round, so that a run stopped for time keeps what it measured
            replace_section(args.out, HEADING, format_report(runs, sizes, args.repeats, limits))
    replace_section(args.out, HEADING, format_report(runs, sizes, args.repeats, limits))
    print(args.out.read_text().split(HEADING, 1)[1])


if __name__ == "__main__":
    main()
