"""Tables and paired tests of issue 40's parts "weighting" and "collapse" (docs/RESULTS.md §8, §9).

Usage: python docs/experiments/summarize_weighting.py RESULTS_DIR

Reads weighting-DECISION-SET.json (text sets and Reuters through `words`) and collapse-*.json
written by docs/reproduce.sh.  Tasks are pooled over the data sets, every task weighing the same; the
`words …` prefix of the Reuters chains is dropped so that each chain is one row.  Paired tests are
docs/summarize_results.py's: Wilcoxon over tasks, the corrected t-test per task.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from summarize_results import curve_table, load, of_chain, paired, paired_line, task_results  # noqa: E402

WORDS = re.compile(r"^words --counts --lowercase --ngrams \S+ ")


def rows_of(directory: Path, pattern: str) -> list[dict]:
    """The task results of the matching documents, Reuters chains without their `words` prefix."""
    rows = task_results(load(directory, pattern))
    for row in rows:
        row["chain"] = WORDS.sub("", row["chain"])
    return rows


def cell(rows: list[dict], chain: str, baseline: str, measure: str) -> str:
    """``chain`` against ``baseline``: mean difference (better/tied/worse tasks, Wilcoxon p)."""
    result = paired(of_chain(rows, chain), of_chain(rows, baseline), measure)
    if chain == baseline or not result["tasks"]:
        return ""
    counts = f"{result['better']}/{result['tied']}/{result['worse']}"
    p = "—" if result["wilcoxon_p"] is None else f"{result['wilcoxon_p']:.2g}"
    return f"{result['difference']:+.3f} ({counts}, {p})"


def mean(rows: list[dict], chain: str, measure: str) -> str:
    """``chain``'s mean of ``measure`` over its tasks (AUC to 4 decimals, F1 to 3), or — without any."""
    values = [r[measure] for r in rows if r["chain"] == chain]
    return f"{np.mean(values):.{4 if measure == 'auc' else 3}f}" if values else "—"


def weighting(directory: Path) -> str:
    """Per chain: AUC and F1 under platt-cv, F1 under margin, each against tf·idf (the first chain); on all
    tasks, then on the text sets and on Reuters alone."""
    out = []
    decided = {d: rows_of(directory, f"weighting-{d}-*.json") for d in ("platt-cv", "margin")}
    for subset in ("all", "text", "reuters"):
        platt, margin = (
            [r for r in rows if subset == "all" or (subset == "reuters") == ("reuters" in r["data"])]
            for rows in decided.values()
        )
        if not platt:
            continue
        chains = list(dict.fromkeys(r["chain"] for r in platt))
        out += [
            f"\n{subset} tasks: mean, and against `{chains[0]}` (Δ, better/tied/worse, Wilcoxon p)\n",
            "| chain | tasks | AUC | Δ AUC | F1 | Δ F1 | F1 margin | Δ F1 margin |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for chain in chains:
            tasks = sum(r["chain"] == chain for r in platt)
            out.append(
                f"| `{chain}` | {tasks} | {mean(platt, chain, 'auc')} | {cell(platt, chain, chains[0], 'auc')} | "
                f"{mean(platt, chain, 'f1')} | {cell(platt, chain, chains[0], 'f1')} | {mean(margin, chain, 'f1')} | "
                f"{cell(margin, chain, chains[0], 'f1')} |"
            )
    return "\n".join(out)


def collapse(directory: Path) -> str:
    """The learning curves of the BNS variants, and each chain against `binarize bns l2` and `binarize l2`
    at each fraction."""
    rows = rows_of(directory, "collapse-*.json") + rows_of(directory, "weighting-curve-*.json")
    if not rows:
        return ""
    out = [curve_table(rows), ""]
    for fraction in sorted({r["train_fraction"] for r in rows}):
        for baseline in ("binarize bns l2", "binarize l2"):
            theirs = of_chain(rows, baseline, fraction)
            for chain in dict.fromkeys(r["chain"] for r in rows if r["chain"] != baseline):
                for measure in ("auc", "f1"):
                    label = f"`{chain}` vs `{baseline}` at {fraction:g}"
                    out.append(paired_line(label, of_chain(rows, chain, fraction), theirs, measure))
    return "\n".join(out)


if __name__ == "__main__":
    directory = Path(sys.argv[1])
    print(weighting(directory))
    print(collapse(directory))
