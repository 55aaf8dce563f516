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
from summarize_results import curve_table, load, of_chain, paired_line, task_results  # noqa: E402

WORDS = re.compile(r"^words --counts --lowercase --ngrams \S+ ")


def rows_of(directory: Path, pattern: str) -> list[dict]:
    """The task results of the matching documents, Reuters chains without their `words` prefix."""
    rows = task_results(load(directory, pattern))
    for row in rows:
        row["chain"] = WORDS.sub("", row["chain"])
    return rows


def weighting(directory: Path) -> str:
    """Mean AUC and F1 per chain under each decision, and each chain against tf·idf."""
    out = []
    by_decision = {d: rows_of(directory, f"weighting-{d}-*.json") for d in ("platt-cv", "margin")}
    for subset, keep in (("all", lambda data: True), ("text", lambda data: "reuters" not in data)):
        for decision, rows in by_decision.items():
            rows = [r for r in rows if keep(r["data"])]
            if not rows:
                continue
            chains = list(dict.fromkeys(r["chain"] for r in rows))
            out.append(f"\n{subset} tasks, {decision}:\n\n| chain | tasks | AUC | F1 | precision | recall |")
            out.append("|---|---|---|---|---|---|")
            for chain in chains:
                mine = [r for r in rows if r["chain"] == chain]
                cells = " | ".join(f"{np.mean([r[m] for r in mine]):.3f}" for m in ("auc", "f1", "precision", "recall"))
                out.append(f"| `{chain}` | {len(mine)} | {cells} |")
            out.append("")
            for chain in chains[1:]:
                for measure in ("auc", "f1") if decision == "platt-cv" else ("f1",):
                    out.append(
                        paired_line(f"`{chain}` vs tf·idf", of_chain(rows, chain), of_chain(rows, chains[0]), measure)
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
