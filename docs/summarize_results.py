"""Summarize the JSON written by docs/reproduce.sh into the tables and paired tests of docs/RESULTS.md.

Usage: python docs/summarize_results.py RESULTS_DIR

Paired tests compare two chains (or one chain under two classifier settings) on
the same tasks and folds.  Over tasks: the tasks' fold means, win/tie/loss and
the two-sided Wilcoxon signed-rank p-value (filterkit.measures.wilcoxon_p:
scipy.stats.wilcoxon with its default zero_method="wilcox", which drops tied
tasks; tasks pooled across data sets).  Per task: Nadeau & Bengio's corrected
resampled t-test of the per-fold differences
(filterkit.measures.corrected_resampled_t_test), counted as the tasks
significant at 0.05.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np

from filterkit.measures import corrected_resampled_t_test, wilcoxon_p

#: A task's corrected t-test p-value below this counts as a significant difference.
SIGNIFICANCE = 0.05

UCI_CHAINS = {
    "minmax": "minmax",
    "scale": "bns l2",
    "shape": "shape --no-zero-bin bns l2",
    "scale_unshifted": "bns --no-zero-preserve l2",
    "shape_unshifted": "shape --no-zero-bin --no-zero-preserve bns --no-zero-preserve l2",
}

#: JMLR 2003's selection chains, as (IG chain, BNS chain) pairs.
SELECTION_PAIRS = [
    (
        f"ig --presence --no-scale select --top {top} binarize{norm}",
        f"bns --presence --no-scale select --top {top} binarize{norm}",
    )
    for top, norm in ((1000, ""), (1000, " l2"), (500, ""))
]

CURVE_CHAINS = ("binarize l2", "binarize bns l2", "shape bns l2")


def load(directory: Path, pattern: str) -> dict[str, dict]:
    """Every JSON document matching ``pattern``, by file stem."""
    return {path.stem: json.loads(path.read_text()) for path in sorted(directory.glob(pattern)) if path.stat().st_size}


def test_train_ratios(settings: dict) -> dict[float, float]:
    """Per training fraction, the mean over folds of test rows / training rows.

    Full training folds are counted from ``fold_of_row``; a fraction f of a fold
    is taken as f · its training rows (the sample is ⌈f · n_c⌉ rows per class, a
    few rows more).
    """
    folds = [fold for fold in settings["fold_of_row"] if fold is not None]  # None: a row left out
    sizes = np.bincount(np.asarray(folds, dtype=np.int64), minlength=settings["folds"])
    rows = sizes.sum()
    return {
        float(fraction): float(np.mean(sizes / (fraction * (rows - sizes)))) for fraction in settings["train_fractions"]
    }


def task_results(documents: dict[str, dict], prefix: str = "") -> list[dict]:
    """Every (chain, task, fraction) result of the documents, with its data set (the file stem less
    ``prefix``) and its folds' test/training ratio."""
    rows = []
    for stem, document in documents.items():
        ratios = test_train_ratios(document["settings"])
        for result in document.get("results", [document]):
            rows.append({**result, "data": stem.removeprefix(prefix), "ratio": ratios[float(result["train_fraction"])]})
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


def of_chain(rows: list[dict], chain: str, fraction: float = 1.0) -> dict[tuple[str, str], dict]:
    """``chain``'s results at ``fraction``, by (data set, task)."""
    return {(r["data"], r["task"]): r for r in rows if r["chain"] == chain and r["train_fraction"] == fraction}


def fold_values(result: dict, measure: str) -> np.ndarray:
    """One result's per-fold values of ``measure`` (NaN where undefined)."""
    return np.array([np.nan if v is None else v for v in result["per_fold"][measure]], dtype=np.float64)


def paired(first: dict[tuple[str, str], dict], second: dict[tuple[str, str], dict], measure: str) -> dict:
    """``first`` against ``second`` on their common tasks: the mean difference of the tasks' fold means,
    win/tie/loss (within 1e-12 is a tie), the Wilcoxon p-value over tasks, and per task the corrected
    resampled t-test of the per-fold differences (how many tasks it finds significant, in each direction)."""
    tasks = [task for task in first if task in second]
    ours = np.array([np.nan if first[t][measure] is None else first[t][measure] for t in tasks], dtype=np.float64)
    theirs = np.array([np.nan if second[t][measure] is None else second[t][measure] for t in tasks], dtype=np.float64)
    differences = ours - theirs
    defined = ~np.isnan(differences)
    significant_better = significant_worse = 0
    for task in tasks:
        test = corrected_resampled_t_test(
            fold_values(first[task], measure) - fold_values(second[task], measure), first[task]["ratio"]
        )
        if test["p"] is not None and test["p"] < SIGNIFICANCE:
            significant_better += test["t"] > 0
            significant_worse += test["t"] < 0
    return {
        "tasks": len(tasks),
        "difference": float(np.mean(differences[defined])) if defined.any() else math.nan,
        "better": int(np.sum(differences[defined] > 1e-12)),
        "worse": int(np.sum(differences[defined] < -1e-12)),
        "tied": int(np.sum(np.abs(differences[defined]) <= 1e-12)),
        "wilcoxon_p": wilcoxon_p(ours, theirs),
        "significant_better": int(significant_better),
        "significant_worse": int(significant_worse),
    }


def paired_line(label: str, first: dict, second: dict, measure: str) -> str:
    """One markdown bullet: ``label`` and the paired comparison of ``first`` against ``second``."""
    result = paired(first, second, measure)
    if not result["tasks"]:
        return f"- {label} ({measure}): no common task"
    p = result["wilcoxon_p"]
    return (
        f"- {label} ({measure}, {result['tasks']} tasks): {result['difference']:+.4f}; "
        f"{result['better']} better, {result['tied']} tied, {result['worse']} worse; "
        f"Wilcoxon p = {'—' if p is None else f'{p:.2g}'}; corrected t-test p < {SIGNIFICANCE:g} on "
        f"{result['significant_better']} tasks better, {result['significant_worse']} worse"
    )


def chains_line(rows: list[dict], first: str, second: str, measure: str, fraction: float = 1.0) -> str:
    """Two chains of the same runs, paired task by task."""
    return paired_line(
        f"`{first}` vs `{second}`", of_chain(rows, first, fraction), of_chain(rows, second, fraction), measure
    )


def settings_line(label: str, rows: list[dict], baseline: list[dict], chain: str, measure: str, fraction: float = 1.0):
    """One chain under a changed classifier setting (``rows``) against the same chain in the baseline runs."""
    return paired_line(
        f"`{chain}`, {label}", of_chain(rows, chain, fraction), of_chain(baseline, chain, fraction), measure
    )


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
        if not adaptive_path.exists() or not adaptive_path.stat().st_size:
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


def reading_choices(document: dict) -> str:
    """aiSVM's choice per fold: k and the training recall at the chosen C (``k:recall``)."""
    return ", ".join(f"{fold['k']}:{fold['recalls'][fold['k'] - 1]:.2f}" for fold in document["classifier"])


def prose_table(directory: Path) -> str:
    """aiSVM's two readings of Algorithm 1 per skewed task: test recall and specificity, and per fold the
    chosen k with its training recall (k:train recall)."""
    lines = [
        "| task | algorithm recall / spec | prose recall / spec | algorithm k:train recall | prose k:train recall |",
        "|---|---|---|---|---|",
    ]
    for stem, prose in load(directory, "prose-*-aisvm.json").items():
        task = stem[len("prose-") : -len("-aisvm")]
        algorithm_path = directory / f"skewed-{task}-aisvm.json"
        if not algorithm_path.exists() or not algorithm_path.stat().st_size:
            continue
        algorithm = json.loads(algorithm_path.read_text())
        lines.append(
            f"| {task} | {algorithm['recall']:.3f} / {algorithm['specificity']:.3f} | "
            f"{prose['recall']:.3f} / {prose['specificity']:.3f} | {reading_choices(algorithm)} | "
            f"{reading_choices(prose)} |"
        )
    return "\n".join(lines)


def uci_section(root: Path) -> None:
    """KDD'09 Table 1 on the UCI sets, and the zero shift with a regularized and a free intercept."""
    uci = task_results(load(root, "uci-*.json"), "uci-")
    print("## UCI (KDD'09 Table 1)\n")
    print(chain_table(uci, ["auc", "f1", "accuracy", "precision_at_20"], "chain"))
    print()
    chains = UCI_CHAINS
    for first, second in (("shape", "scale"), ("scale", "minmax"), ("shape", "minmax")):
        print(chains_line(uci, chains[first], chains[second], "auc"))
    for measure in ("auc", "f1"):
        print(chains_line(uci, chains["shape"], chains["shape_unshifted"], measure))
        print(chains_line(uci, chains["scale"], chains["scale_unshifted"], measure))
    free = task_results(load(root, "intercept-uci-*.json"), "intercept-uci-")
    if not free:
        return
    sets = sorted({r["data"] for r in free})
    print(f"\n## UCI, --svm-intercept free ({len(sets)} sets: {', '.join(sets)})\n")
    print(chain_table(free, ["auc", "f1", "accuracy", "precision_at_20"], "chain"))
    print()
    same_sets = [r for r in uci if r["data"] in sets]
    print("Zero shift, regularized b (the baseline runs, the same sets):")
    for measure in ("auc", "f1"):
        print(chains_line(same_sets, chains["shape"], chains["shape_unshifted"], measure))
        print(chains_line(same_sets, chains["scale"], chains["scale_unshifted"], measure))
    print("\nZero shift, free b:")
    for measure in ("auc", "f1"):
        print(chains_line(free, chains["shape"], chains["shape_unshifted"], measure))
        print(chains_line(free, chains["scale"], chains["scale_unshifted"], measure))
    print("\nFree b vs regularized b, the same chain:")
    for measure in ("auc", "f1"):
        for name in ("scale", "shape", "scale_unshifted", "shape_unshifted"):
            print(settings_line("free vs regularized b", free, uci, chains[name], measure))
    for intercept in ("regularized", "free"):
        offset = task_results(load(root, f"intercept-offset-*-{intercept}.json"), "intercept-offset-")
        if offset:
            print(f"\nZero shift without l2 (an offset per feature), {intercept} b:")
            print(chain_table(offset, ["auc", "f1", "accuracy"], "chain"))


def text_section(root: Path) -> None:
    """KDD'09's text representations and JMLR 2003's selection, under each decision rule of the SVM."""
    text = task_results(load(root, "text-*.json"), "text-")
    print("\n## Text\n")
    print(chain_table(text, ["f1", "auc", "accuracy", "precision_at_20"], "chain"))
    print()
    for first, second in (("shape bns l2", "binarize l2"), ("binarize bns l2", "binarize l2")):
        print(chains_line(text, first, second, "auc"))
        print(chains_line(text, first, second, "f1"))
    print("\nJMLR 2003, BNS vs IG selection (platt-cv, the default):")
    for ig, bns in SELECTION_PAIRS:
        print(chains_line(text, bns, ig, "f1"))
    for decision in ("margin", "platt"):
        runs = task_results(load(root, f"decision-text-{decision}-*.json"), f"decision-text-{decision}-")
        if not runs:
            continue
        sets = sorted({r["data"] for r in runs})
        print(f"\n## Text, --svm-decision {decision} ({len(sets)} sets: {', '.join(sets)})\n")
        print(chain_table(runs, ["f1", "precision", "recall", "auc"], "chain"))
        print("\nBNS vs IG selection:")
        for ig, bns in SELECTION_PAIRS:
            print(chains_line(runs, bns, ig, "f1"))
        print(f"\n{decision} vs platt-cv, the same chain:")
        for ig, bns in SELECTION_PAIRS:
            for chain in (ig, bns):
                print(settings_line(f"{decision} vs platt-cv", runs, text, chain, "f1"))


def curve_section(root: Path) -> None:
    """The oh10 learning curve under each decision rule, and each rule against platt-cv per fraction."""
    curve = task_results(load(root, "curve-*.json"), "curve-")
    if not curve:
        return
    tasks = len({(r["data"], r["task"]) for r in curve})
    print(f"\n## Learning curve (AUC / F1; {tasks} tasks)\n")
    print(curve_table(curve))
    for decision in ("margin", "platt"):
        runs = task_results(load(root, f"decision-curve-{decision}-*.json"), f"decision-curve-{decision}-")
        if not runs:
            continue
        print(f"\n## Learning curve, --svm-decision {decision} (AUC / F1)\n")
        print(curve_table(runs))
        print(f"\n{decision} vs platt-cv, the same chain and training fraction:")
        for measure in ("f1", "auc"):
            for fraction in sorted({r["train_fraction"] for r in runs}):
                for chain in CURVE_CHAINS:
                    label = f"{fraction:g}, {decision} vs platt-cv"
                    print(settings_line(label, runs, curve, chain, measure, fraction))


def skewed_section(root: Path) -> None:
    """aiSVM vs svm on the skewed text tasks, and aiSVM's two readings of Algorithm 1."""
    print("\n## aiSVM vs svm on skewed tasks\n")
    print(skewed_table(root))
    prose = task_results(load(root, "prose-*-aisvm.json"), "prose-")
    if not prose:
        return
    algorithm = task_results(load(root, "skewed-*-aisvm.json"), "skewed-")
    print("\n## aiSVM, --aisvm-reading prose vs algorithm\n")
    print(prose_table(root))
    print()
    for measure in ("recall", "specificity", "f1"):
        print(
            paired_line(
                "prose vs algorithm", of_chain(prose, "binarize l2"), of_chain(algorithm, "binarize l2"), measure
            )
        )


def main(directory: str) -> None:
    """Print the markdown tables and paired tests."""
    root = Path(directory)
    uci_section(root)
    text_section(root)
    curve_section(root)
    skewed_section(root)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python docs/summarize_results.py RESULTS_DIR   (the OUT_DIR of docs/reproduce.sh)")
    main(sys.argv[1])
