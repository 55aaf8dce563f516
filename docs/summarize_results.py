"""Summarize the JSON written by docs/reproduce.sh into the tables of docs/RESULTS.md.

Usage: python docs/summarize_results.py RESULTS_DIR
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np


def load(directory: Path, pattern: str) -> dict[str, dict]:
    """Every JSON document matching ``pattern``, by file stem."""
    return {path.stem: json.loads(path.read_text()) for path in sorted(directory.glob(pattern)) if path.stat().st_size}


def task_results(documents: dict[str, dict]) -> list[dict]:
    """Every (chain, task, fraction) result of the documents, with its data set."""
    rows = []
    for stem, document in documents.items():
        for result in document.get("results", [document]):
            rows.append({**result, "data": stem})
    return rows


def chain_table(rows: list[dict], measures: list[str], title: str, fraction: float = 1.0) -> str:
    """Mean over every task of each chain's fold-averaged measures (tasks pooled across data sets)."""
    chains = list(dict.fromkeys(r["chain"] for r in rows))
    lines = [f"| {title} | tasks | " + " | ".join(measures) + " |", "|---|---|" + "---|" * len(measures)]
    for chain in chains:
        mine = [r for r in rows if r["chain"] == chain and r["train_fraction"] == fraction]
        cells = [f"{np.nanmean([np.nan if r[m] is None else r[m] for r in mine]):.3f}" for m in measures]
        lines.append(f"| `{chain}` | {len(mine)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def wins(rows: list[dict], first: str, second: str, measure: str = "auc") -> str:
    """How often ``first`` beats, ties and loses to ``second`` on the same task."""
    by_task = {}
    for r in rows:
        if r["train_fraction"] == 1.0:
            by_task.setdefault((r["data"], r["task"]), {})[r["chain"]] = r[measure]
    pairs = [(t[first], t[second]) for t in by_task.values() if first in t and second in t]
    better = sum(a > b + 1e-12 for a, b in pairs)
    worse = sum(b > a + 1e-12 for a, b in pairs)
    return f"`{first}` vs `{second}` ({measure}): {better} better, {len(pairs) - better - worse} tied, {worse} worse"


def curve_table(rows: list[dict]) -> str:
    """Mean AUC and F1 per chain and training fraction."""
    fractions = sorted({r["train_fraction"] for r in rows})
    chains = list(dict.fromkeys(r["chain"] for r in rows))
    lines = ["| chain | " + " | ".join(f"{f:g}" for f in fractions) + " |", "|---|" + "---|" * len(fractions)]
    for chain in chains:
        cells = []
        for fraction in fractions:
            mine = [r for r in rows if r["chain"] == chain and r["train_fraction"] == fraction]
            cells.append(f"{np.mean([r['auc'] for r in mine]):.3f} / {np.mean([r['f1'] for r in mine]):.3f}")
        lines.append(f"| `{chain}` | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def skewed_table(directory: Path) -> str:
    """svm vs aisvm recall and specificity per skewed task, and the mean recall ratio."""
    svm = load(directory, "skewed-*-svm.json")
    lines = [
        "| task | positives / rows | svm recall | svm spec | aisvm recall | aisvm spec |",
        "|---|---|---|---|---|---|",
    ]
    ratios, specificities = [], []
    for stem, plain in svm.items():
        adaptive_path = directory / (stem[: -len("-svm")] + "-aisvm.json")
        if not adaptive_path.exists():
            continue
        adaptive = json.loads(adaptive_path.read_text())
        rows = plain["settings"]["rows"]
        positives = plain["settings"]["class_counts"][plain["task"]]
        lines.append(
            f"| {stem[len('skewed-') : -len('-svm')]} | {positives} / {rows} | {plain['recall']:.3f} | "
            f"{plain['specificity']:.3f} | {adaptive['recall']:.3f} | {adaptive['specificity']:.3f} |"
        )
        if plain["recall"] > 0:
            ratios.append(adaptive["recall"] / plain["recall"])
        specificities.append(adaptive["specificity"])
    summary = (
        (
            f"\nMean recall ratio aisvm / svm over {len(ratios)} tasks with svm recall > 0: "
            f"{np.mean(ratios):.2f} (median {np.median(ratios):.2f}); aisvm specificity: mean "
            f"{np.mean(specificities):.3f}, min {np.min(specificities):.3f}."
        )
        if ratios
        else ""
    )
    return "\n".join(lines) + summary


def main(directory: str) -> None:
    """Print the markdown tables."""
    root = Path(directory)
    uci = task_results(load(root, "uci-*.json"))
    print("## UCI (KDD'09 Table 1)\n")
    print(chain_table(uci, ["auc", "f1", "accuracy", "precision_at_20"], "chain"))
    print()
    for first, second in (
        ("shape --no-zero-bin bns l2", "bns l2"),
        ("bns l2", "minmax"),
        ("shape --no-zero-bin bns l2", "minmax"),
    ):
        print(f"- {wins(uci, first, second)}")
    text = task_results(load(root, "text-*.json"))
    print("\n## Text\n")
    print(chain_table(text, ["f1", "auc", "accuracy", "precision_at_20"], "chain"))
    print()
    for first, second in (("shape bns l2", "binarize l2"), ("binarize bns l2", "binarize l2")):
        print(f"- {wins(text, first, second)}")
    curve = task_results(load(root, "curve-*.json"))
    if curve:
        print("\n## Learning curve (AUC / F1)\n")
        print(curve_table(curve))
    print("\n## aiSVM vs svm on skewed tasks\n")
    print(skewed_table(root))


if __name__ == "__main__":
    main(sys.argv[1])
