"""Tables and paired tests of part "nbr" of docs/reproduce.sh (issue 47 item 9; docs/RESULTS.md §8):
`nbr` as Wang & Manning define it beside the constant-less `nbr0` of filterkit 0.3, on part 8's tasks and
folds, and the paper's own setting on Debian package descriptions.

Usage: python docs/experiments/summarize_nbr.py RESULTS_DIR

Reads weighting-DECISION-SET.json and weighting-curve-oh10.json (part "weighting" and "collapse", or the
same runs with only the idf and nbr chains), nbr0-DECISION-SET.json, nbr0-curve-oh10.json and
paper-DECISION-debian-TASK-NGRAMS.json.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from summarize_results import curve_table, of_chain, paired_line  # noqa: E402
from summarize_weighting import cell, mean, rows_of  # noqa: E402

IDF, NBR, NBR0 = "idf --presence --multiply l2", "nbr --presence --multiply l2", "nbr0 --presence --multiply l2"


def unique(rows: list[dict]) -> list[dict]:
    """The rows less repeats of a (chain, data set, task, fraction): the runs of nbr0 repeat idf's on the same
    folds, to the bit."""
    seen, kept = set(), []
    for row in rows:
        key = (row["chain"], row["data"].split("-", 1)[-1], row["task"], row["train_fraction"])
        if key not in seen:
            seen.add(key)
            kept.append({**row, "data": key[1]})
    return kept


def part8(directory: Path) -> str:
    """idf, nbr and nbr0 on part 8's tasks: means, each against idf, and nbr against nbr0."""
    out = []
    decided = {
        d: unique(rows_of(directory, f"weighting-{d}-*.json") + rows_of(directory, f"nbr0-{d}-*.json"))
        for d in ("platt-cv", "margin")
    }
    for subset in ("text", "reuters"):
        platt, margin = (
            [r for r in rows if (subset == "reuters") == ("reuters" in r["data"])] for rows in decided.values()
        )
        out += [
            f"\n{subset} tasks: mean, and against `{IDF}` (Δ, better/tied/worse, Wilcoxon p)\n",
            "| chain | tasks | AUC | Δ AUC | F1 | Δ F1 | F1 margin | Δ F1 margin |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for chain in (IDF, NBR0, NBR):
            tasks = sum(r["chain"] == chain for r in platt)
            out.append(
                f"| `{chain}` | {tasks} | {mean(platt, chain, 'auc')} | {cell(platt, chain, IDF, 'auc')} | "
                f"{mean(platt, chain, 'f1')} | {cell(platt, chain, IDF, 'f1')} | {mean(margin, chain, 'f1')} | "
                f"{cell(margin, chain, IDF, 'f1')} |"
            )
        for name, rows in (("platt-cv", platt), ("margin", margin)):
            for measure in ("auc", "f1"):
                label = f"{subset}, {name}: `nbr` vs `nbr0`"
                out.append(paired_line(label, of_chain(rows, NBR), of_chain(rows, NBR0), measure))
    return "\n".join(out)


def reuters(directory: Path) -> str:
    """Per Reuters run (set and n-gram range), each chain's AUC / F1 (platt-cv) / F1 (margin)."""
    platt, margin = (
        unique(rows_of(directory, f"weighting-{d}-*.json") + rows_of(directory, f"nbr0-{d}-*.json"))
        for d in ("platt-cv", "margin")
    )
    runs = sorted({r["data"].removeprefix("platt-cv-") for r in platt if "reuters" in r["data"]})
    out = ["| chain | " + " | ".join(runs) + " |", "|---|" + "---|" * len(runs)]
    for chain in (IDF, NBR0, NBR):
        cells = []
        for run in runs:
            ours = [r for r in platt if r["data"] == f"platt-cv-{run}" and r["chain"] == chain]
            theirs = [r for r in margin if r["data"] == f"margin-{run}" and r["chain"] == chain]
            cells.append(
                f"{ours[0]['auc']:.4f} / {ours[0]['f1']:.3f} / {theirs[0]['f1']:.3f}" if ours and theirs else "—"
            )
        out.append(f"| `{chain}` | " + " | ".join(cells) + " |")
    return "\n".join(out)


def curve(directory: Path) -> str:
    """idf, nbr and nbr0 on the oh10 learning curve, and nbr against nbr0 and idf at each fraction."""
    rows = unique(rows_of(directory, "weighting-curve-*.json") + rows_of(directory, "nbr0-curve-*.json"))
    rows = [r for r in rows if r["chain"] in (IDF, NBR, NBR0)]
    out = [curve_table(rows), ""]
    for fraction in sorted({r["train_fraction"] for r in rows}):
        for baseline in (NBR0, IDF):
            for measure in ("auc", "f1"):
                label = f"`nbr` vs `{baseline}` at {fraction:g}"
                out.append(
                    paired_line(label, of_chain(rows, NBR, fraction), of_chain(rows, baseline, fraction), measure)
                )
    return "\n".join(out)


def paper(directory: Path) -> str:
    """Per chain (its `words …` prefix dropped) and Debian run (task and n-gram range): AUC / F1 (platt-cv) /
    F1 (margin); then fold by fold `nbr` against `nbr0`, NBSVM's features against the words alone, and `nbr`
    against tf·idf."""
    platt, margin = (rows_of(directory, f"paper-{d}-*.json") for d in ("platt-cv", "margin"))
    for row in platt + margin:
        row["data"] = row["data"].split("-debian-", 1)[-1]
        row["chain"] = (
            re.sub(r"^words --lowercase --ngrams \S+ --words-to-keep \d+ ?", "", row["chain"]) or "(the words alone)"
        )
    runs = list(dict.fromkeys(r["data"] for r in platt))
    out = ["| chain | " + " | ".join(runs) + " |", "|---|" + "---|" * len(runs)]
    for chain in dict.fromkeys(r["chain"] for r in platt):
        cells = []
        for run in runs:
            ours = [r for r in platt if r["data"] == run and r["chain"] == chain]
            theirs = [r for r in margin if r["data"] == run and r["chain"] == chain]
            cells.append(
                f"{ours[0]['auc']:.4f} / {ours[0]['f1']:.3f} / {theirs[0]['f1']:.3f}" if ours and theirs else "—"
            )
        out.append(f"| `{chain}` | " + " | ".join(cells) + " |")
    nbsvm = "nbr --nb-alpha 1 --presence --multiply"
    pairs = [(nbsvm, "nbr0 --presence --multiply"), (f"{nbsvm} l2", "nbr0 --presence --multiply l2")]
    pairs += [(nbsvm, "(the words alone)"), (f"{nbsvm} l2", "idf --presence --multiply l2")]
    for first, second in pairs:
        for run in runs:
            ours = [r for r in platt if r["data"] == run]
            for measure in ("auc", "f1"):
                label = f"{run}: `{first}` vs `{second}`"
                out.append(paired_line(label, of_chain(ours, first), of_chain(ours, second), measure))
    return "\n".join(out)


if __name__ == "__main__":
    directory = Path(sys.argv[1])
    print(part8(directory))
    print(reuters(directory))
    print(curve(directory))
    print(paper(directory))
