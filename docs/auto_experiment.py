"""Measure ``auto l2`` (issue 22, item 1) against the fixed chains of docs/RESULTS.md.

    python docs/auto_experiment.py run DATA_DIR OUT_DIR [uci|text|heldout ...]
    python docs/auto_experiment.py summarize OUT_DIR BASELINE_DIR

``run`` evaluates ``auto l2`` with exactly the protocol of docs/reproduce.sh (same seed, so
the same folds as its JSON): every UCI set of DATA_DIR/uci (``-c first`` for wine, 10
folds) and every text set of DATA_DIR/text (5 folds), every class with at least 50
positives; one process, one set at a time, small sets first; a set whose JSON exists is
skipped, so an interrupted run resumes.  ``heldout`` evaluates the sets kept back before
the design (Debian's weka examples, /usr/share/doc/weka/examples): ionosphere and
segment-challenge against ``shape --no-zero-bin bns l2`` and ``shape bns l2``, and
ReutersCorn-train / ReutersGrain-train as documents, ``words …`` then ``auto l2`` against
``words …`` then ``shape bns l2`` (the topic, ``--positive 1``, against the rest).

``summarize`` pairs every task of OUT_DIR with the same task in BASELINE_DIR (reproduce.sh's
``uci-SET.json`` and ``text-SET.json``) and prints, per collection, the mean AUC of each
chain, and ``auto l2``'s wins, ties and losses against each fixed chain with the Wilcoxon
signed-rank p-value over tasks (issue 17's paired test); and the held-back comparisons.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from filterkit.measures import corrected_resampled_t_test, wilcoxon_p

AUTO = "auto l2"
WEKA_EXAMPLES = Path("/usr/share/doc/weka/examples")
WORDS = "words --counts --lowercase --stopwords weka"
HELDOUT_NUMERIC = {"ionosphere": "last", "segment-challenge": "last"}
HELDOUT_TEXT = ("ReutersCorn-train", "ReutersGrain-train")
#: reproduce.sh's tasks: every class with at least 50 positives (the minority of a two-class set)
EACH_CLASS = ("--each-class", "--min-positives", "50")


def evaluate(path: Path, out: Path, class_spec: str, folds: int, chains: list[str], tasks=EACH_CLASS) -> None:
    """One ``filterkit evaluate`` of ``chains`` on ``path`` into ``out`` (skipped when done)."""
    if out.exists() and out.stat().st_size:
        return
    command = ["filterkit", "evaluate", "-q", "--jobs", "1", "-c", class_spec, *tasks]
    command += ["--folds", str(folds), "--json", "--compare", str(path), *chains]
    print(" ".join(command), file=sys.stderr, flush=True)
    partial = out.with_suffix(".part")
    with partial.open("wb") as sink:
        status = subprocess.run(command, stdout=sink).returncode
    if status == 0:
        partial.rename(out)
    else:
        print(f"{path.name}: exit status {status}", file=sys.stderr)


def run(data: Path, out: Path, parts: list[str]) -> None:
    """Evaluate ``auto l2`` on the collections named in ``parts``, smallest sets first."""
    out.mkdir(parents=True, exist_ok=True)
    if "uci" in parts:
        for path in sorted((data / "uci").glob("*.arff"), key=lambda p: p.stat().st_size):
            class_spec = "first" if path.stem == "wine" else "last"
            evaluate(path, out / f"uci-{path.stem}.json", class_spec, 10, [AUTO])
    if "text" in parts:
        for path in sorted((data / "text").glob("*.arff"), key=lambda p: p.stat().st_size):
            evaluate(path, out / f"text-{path.name.split('.')[0]}.json", "last", 5, [AUTO])
    if "heldout" in parts:
        for name, class_spec in HELDOUT_NUMERIC.items():
            chains = [AUTO, "shape --no-zero-bin bns l2", "shape bns l2"]
            evaluate(WEKA_EXAMPLES / f"{name}.arff", out / f"heldout-{name}.json", class_spec, 10, chains)
        for name in HELDOUT_TEXT:
            chains = [f"{WORDS} auto l2", f"{WORDS} shape bns l2"]
            task = ("--positive", "1")  # the topic (class-att 1) against the rest, whatever its size
            evaluate(WEKA_EXAMPLES / f"{name}.arff", out / f"heldout-{name}.json", "last", 10, chains, task)


def task_aucs(path: Path, per_fold: bool = False) -> dict:
    """(chain, task) → the task's fold-averaged AUC (with ``per_fold``: its per-fold AUCs), from one
    evaluate JSON."""
    document = json.loads(path.read_text())
    results = document.get("results", [document])
    return {
        (r["chain"], r.get("task", "")): r["per_fold"]["auc"] if per_fold else r["auc"]
        for r in results
        if r.get("train_fraction", 1.0) == 1.0
    }


def over_folds(path: Path, first: str, other: str) -> str:
    """Nadeau & Bengio's corrected resampled t-test of ``first`` − ``other`` per fold (the mean
    over the file's tasks, which share its folds), as ``filterkit evaluate --stats`` gives it."""
    aucs = task_aucs(path, per_fold=True)
    tasks = sorted({task for _, task in aucs})
    differences = np.nanmean(
        [np.array(aucs[(first, task)], dtype=float) - np.array(aucs[(other, task)], dtype=float) for task in tasks],
        axis=0,
    )
    folds = len(differences)
    test = corrected_resampled_t_test(differences, 1 / (folds - 1))
    won, lost = int(np.sum(differences > 0)), int(np.sum(differences < 0))
    tied = folds - won - lost
    return f" {won} better, {tied} tied, {lost} worse; corrected resampled t-test p = {test['p']:.3g}"


def compare(rows: dict[tuple[str, str], dict[str, float]], chains: list[str], first: str) -> list[str]:
    """Mean AUC per chain over the tasks it has, and ``first``'s wins/ties/losses, mean difference
    and Wilcoxon p against each other chain over the tasks both have."""
    lines = ["| chain | tasks | mean AUC |", "|---|---|---|"]
    for chain in chains:
        aucs = [task[chain] for task in rows.values() if chain in task]
        lines.append(f"| `{chain}` | {len(aucs)} | {np.mean(aucs):.4f} |")
    for chain in chains:
        if chain == first:
            continue
        both = [task for task in rows.values() if first in task and chain in task]
        mine = np.array([task[first] for task in both])
        theirs = np.array([task[chain] for task in both])
        better, worse = int(np.sum(mine > theirs + 1e-12)), int(np.sum(theirs > mine + 1e-12))
        p = wilcoxon_p(mine, theirs)
        lines.append(
            f"- `{first}` vs `{chain}` on {len(both)} tasks ({np.mean(mine):.4f} vs {np.mean(theirs):.4f}): "
            f"{better} better, {len(mine) - better - worse} tied, {worse} worse; "
            f"Wilcoxon p = {p if p is None else f'{p:.3g}'}"
        )
    return lines


def summarize(out: Path, baseline: Path) -> None:
    """The tables of the final report (module docstring)."""
    for collection in ("uci", "text"):
        rows: dict[tuple[str, str], dict[str, float]] = {}
        chains: list[str] = []
        for path in sorted(out.glob(f"{collection}-*.json")):
            reference = baseline / path.name
            if not reference.exists() or not reference.stat().st_size:
                print(f"{path.name}: no baseline in {baseline} (yet)", file=sys.stderr)
                continue
            for source in (reference, path):
                for (chain, task), auc in task_aucs(source).items():
                    rows.setdefault((path.stem, task), {})[chain] = auc
                    if chain not in chains:
                        chains.append(chain)
        if rows:
            ordered = [AUTO] + [chain for chain in chains if chain != AUTO]
            print(f"\n## {collection}\n")
            print("\n".join(compare(rows, ordered, AUTO)))
    for path in sorted(out.glob("heldout-*.json")):
        rows = {}
        for (chain, task), auc in task_aucs(path).items():
            rows.setdefault((path.stem, task), {})[chain] = auc
        chains = list(dict.fromkeys(chain for aucs in rows.values() for chain in aucs))
        print(f"\n## {path.stem}\n")
        lines = compare(rows, chains, chains[0])
        for chain in chains[1:]:
            lines.append(f"- `{chains[0]}` vs `{chain}` over folds:" + over_folds(path, chains[0], chain))
        print("\n".join(lines))


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "run":
        run(Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4:] or ["uci", "text"])
    elif len(sys.argv) == 4 and sys.argv[1] == "summarize":
        summarize(Path(sys.argv[2]), Path(sys.argv[3]))
    else:
        sys.exit(__doc__)
