"""``filterkit evaluate``: cross-validate chains with a classifier and report the papers' measures."""

from __future__ import annotations

import functools
import json
import math
import shlex
import sys
from dataclasses import dataclass

import click
import numpy as np

from filterkit.arff.reader import DEFAULT_CHUNK_ROWS
from filterkit.commands.context import PluginLoader, plugin_loader, registry_of
from filterkit.commands.files import ReportCommand, check_distinct
from filterkit.commands.options import (
    RegisteredName,
    class_option,
    click_option,
    json_option,
    positive_option,
    quiet_option,
)
from filterkit.commands.stages import PRESET_OPTIONS, StageChain
from filterkit.errors import FilterkitError, OptionError
from filterkit.evaluation import (
    EXTRA_MEASURES,
    MEASURES,
    MULTICLASS_MEASURES,
    MULTICLASS_TASK,
    PER_CLASS_MEASURES,
    ChainSpec,
    Settings,
    choose_tasks,
    class_codes,
    class_records,
    evaluate_fold,
    macro_average,
    micro_average,
    nested_subsamples,
    paired_comparison,
    repeat_seed,
    stratified_folds,
    summarize,
    summarize_multiclass,
    take_rows,
)
from filterkit.outputs import checked_output, staged_output
from filterkit.plugins import load_plugins
from filterkit.progress import Progress, progress_mode, progress_option
from filterkit.runner import resolve_class
from filterkit.running import open_source
from filterkit.schema import NOMINAL, concatenate

EVALUATE_HELP = """Cross-validate a chain (or several) with a classifier on IN.arff.

\b
  filterkit evaluate --positive Ethics oh0.arff shape bns l2
  filterkit evaluate --each-class --compare iris.arff "minmax" "bns l2" "shape --no-zero-bin bns l2"
  filterkit evaluate --classifier aisvm --positive Ethics --json oh0.arff binarize l2
  filterkit evaluate --each-class --repeats 5 --stats --report r.html --compare oh0.arff "binarize l2" "shape bns l2"
  filterkit evaluate --positive Ethics --sweep select.top=10,100,1000 oh0.arff select --metric bns l2
  filterkit evaluate --multiclass --folds 5 --compare oh0.arff "binarize l2" "binarize bns l2"

Stratified k-fold cross-validation (seeded); the chain is fitted on each
training fold only and applied to its test fold. With --compare, every
argument after IN.arff is one quoted chain ("" is no stage), all evaluated on
the same folds; without it, the arguments after IN.arff are one chain's stages.
The classifier sees numeric features only: nominal attributes the chain leaves
nominal are one-hot encoded, string and date attributes are dropped, missing
values become 0; instance weights are not used. Rows with a missing class are
left out (and counted on stderr). AUC is averaged over folds, never pooled.
--repeats draws the folds again (the first draw is --seed's); --stats adds the
break-even point, micro-averages and paired tests against the first chain;
--sweep runs every chain at each value of one stage option on the same folds.
--multiclass makes the whole class one task: each chain is fitted without a
positive class, a multi-class classifier (svm: one-vs-rest) predicts one class
per row; accuracy, macro and micro F1, and per class its one-vs-rest AUC and F1.
"""

MULTICLASS_LABELS = {"accuracy": "acc", "macro_auc": "macroAUC", "macro_f1": "macroF1", "micro_f1": "microF1"}

#: The largest --seed: numpy's legacy seeding takes 0 .. 2**32 - 1, and each fold adds its number.
MAX_SEED = 2**31 - 1

LABELS = {
    "accuracy": "acc",
    "auc": "AUC",
    "f1": "F1",
    "precision": "prec",
    "recall": "recall",
    "specificity": "spec",
    "precision_at_20": "P@20",
}


def parse_fractions(text: str) -> tuple[float, ...]:
    """``"0.05,0.1,1"`` as sorted fractions in (0, 1]."""
    try:
        fractions = sorted({float(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise FilterkitError(f"--train-fraction {text!r} is not a list of numbers") from None
    if not fractions or not all(math.isfinite(f) for f in fractions) or fractions[0] <= 0 or fractions[-1] > 1:
        raise FilterkitError(f"--train-fraction {text!r}: every fraction must be in (0, 1]")
    return tuple(fractions)


def parse_chain(plugins: PluginLoader, words: list[str], preset: dict[str, dict] | None = None) -> ChainSpec:
    """One chain's words (``shape --no-zero-bin bns l2``) as stage names and parameters; ``preset``
    gives, per stage name, values for options the words leave out (the swept option of ``--sweep``)."""
    group = StageChain("chain", result_callback=lambda stages: stages)
    text = shlex.join(words) if words else "(none)"
    try:
        with group.make_context(f"filterkit evaluate: chain '{text}'", list(words), obj=plugins) as context:
            context.meta[PRESET_OPTIONS] = preset or {}
            stages = group.invoke(context)
    except click.UsageError as error:
        raise FilterkitError(f"chain '{text}': {error.format_message()}") from None
    return ChainSpec(text, [(stage.name, dict(stage.params)) for stage in stages])


@dataclass(frozen=True)
class Sweep:
    """``--sweep 'STAGE.OPTION=V1,V2,…'`` read: the stage, the option and its values (as typed and converted)."""

    stage: str
    option: str
    values: tuple[str, ...]
    converted: tuple

    @property
    def label(self) -> str:
        """``stage.option-name``, as the swept chains are labelled."""
        return f"{self.stage}.{self.option.replace('_', '-')}"

    def preset(self) -> dict[str, dict]:
        """The first value, for chains that leave the swept option out (it is replaced on every run)."""
        return {self.stage: {self.option: self.converted[0]}}


def parse_sweep(registry, text: str) -> Sweep:
    """``--sweep 'STAGE.OPTION=V1,V2,…'`` checked against the stage's declared options."""
    target, equals, values_text = text.partition("=")
    stage_name, dot, option_name = target.strip().partition(".")
    option_name = option_name.strip().replace("-", "_")
    values = [value.strip() for value in values_text.split(",") if value.strip()]
    if not equals or not dot or not stage_name or not option_name or not values:
        raise FilterkitError(f"--sweep {text!r} is not STAGE.OPTION=VALUE,VALUE,… (e.g. select.top=10,100)")
    options = {option.name: option for option in registry.stage(stage_name).options}
    if option_name not in options:
        raise FilterkitError(
            f"--sweep {text!r}: stage '{stage_name}' has no option '{option_name.replace('_', '-')}' "
            f"(it has: {', '.join(sorted(name.replace('_', '-') for name in options)) or 'none'})"
        )
    option = options[option_name]
    try:
        converted = [option.convert(value) for value in values]
    except FilterkitError as error:
        raise FilterkitError(f"--sweep {text!r}: {error}") from None
    if len(set(converted)) != len(converted):
        raise FilterkitError(f"--sweep {text!r}: a value is given twice")
    return Sweep(stage_name, option_name, tuple(values), tuple(converted))


def swept_chains(registry, sweep: Sweep, text: str, chains: list[ChainSpec]) -> list[ChainSpec]:
    """Each chain once per value of ``sweep``, the option set in its every stage of that name."""
    swept = []
    for chain in chains:
        if not any(name == sweep.stage for name, _ in chain.stages):
            raise FilterkitError(f"--sweep {text!r}: chain '{chain.text}' has no stage '{sweep.stage}'")
        for value, typed in zip(sweep.values, sweep.converted):
            stages = [
                (name, {**params, sweep.option: typed} if name == sweep.stage else params)
                for name, params in chain.stages
            ]
            for name, params in stages:
                registry.make_stage(name, params)
            swept.append(ChainSpec(f"{chain.text} [{sweep.label}={value}]", stages, {sweep.label: typed}))
    return swept


@functools.lru_cache(maxsize=4)
def _worker_registry(plugins_dir):
    return load_plugins(plugins_dir)


def _evaluate_item(plugins_dir, schema, data, class_index, chain, task, train, test, settings):
    """One (chain, task, fold, fraction) in a worker process, which loads the plugins itself."""
    return evaluate_fold(_worker_registry(plugins_dir), schema, data, class_index, chain, task, train, test, settings)


def run_evaluation(registry, plugins_dir, schema, data, class_index, chains, tasks, settings, jobs, progress: Progress):
    """Every (chain, task, fraction)'s fold results, in the order (repeat, fold); the folds of each repeat
    are drawn once for every chain and task.  Also the rows' folds (of the first repeat) and, per fraction,
    the mean ratio of test to training rows.  The fits are one step of ``progress``."""
    codes = class_codes(data, class_index).astype(np.int64)
    items = []
    ratios: dict[float, list[float]] = {fraction: [] for fraction in settings.train_fractions}
    with progress.working("drawing the folds"):
        draws = [
            stratified_folds(codes, settings.folds, repeat_seed(settings.seed, repeat))
            for repeat in range(settings.repeats)
        ]
        for task in tasks:
            for repeat, folds in enumerate(draws):
                for fold, (train, test) in enumerate(folds):
                    samples = nested_subsamples(
                        train, codes, settings.train_fractions, repeat_seed(settings.seed, repeat) + fold
                    )
                    for fraction in settings.train_fractions:
                        if task == tasks[0]:
                            ratios[fraction].append(len(test) / len(samples[fraction]))
                    for chain in chains:
                        for fraction in settings.train_fractions:
                            items.append((chain, task, fold, fraction, samples[fraction], test))
    if jobs == 1:
        results = (
            evaluate_fold(registry, schema, data, class_index, c, t, tr, te, settings) for c, t, _, _, tr, te in items
        )
    else:
        from joblib import Parallel, delayed

        results = Parallel(n_jobs=jobs, return_as="generator")(
            delayed(_evaluate_item)(plugins_dir, schema, data, class_index, c, t, tr, te, settings)
            for c, t, _, _, tr, te in items
        )
    grouped: dict[tuple, list] = {}
    with progress.step("cross-validating", items=len(items), unit="fits") as meter:
        for item, result in zip(items, results):
            chain, task, fold, fraction = item[:4]
            grouped.setdefault((chain.text, task, fraction), []).append(result)
            meter.advance(detail=f"task {task}, fold {fold + 1}, chain '{chain.text}'")
    fold_of_row = np.zeros(len(codes), dtype=np.int64)
    for fold, (_, test) in enumerate(draws[0]):
        fold_of_row[test] = fold
    return grouped, fold_of_row, {fraction: float(np.mean(values)) for fraction, values in ratios.items()}


def settings_document(
    settings, rows_used: int, left_out: int, fold_of_row: np.ndarray, extra: dict, multiclass: bool = False
) -> dict:
    """The ``settings`` of the JSON document: the protocol, the rows used, each row's fold and
    ``extra``; with several repeats each repeat's fold seed."""
    document = {
        "folds": settings.folds,
        "seed": settings.seed,
        "train_fractions": list(settings.train_fractions),
        "classifier": settings.classifier,
        "classifier_params": settings.classifier_params,
        **({"multiclass": True} if multiclass else {}),
        "rows": rows_used,
        "rows_with_missing_class_left_out": left_out,
        "fold_of_row": fold_of_row.tolist(),
        **extra,
    }
    if settings.repeats > 1:
        document["repeats"] = settings.repeats
        document["fold_seeds"] = [repeat_seed(settings.seed, r) for r in range(settings.repeats)]
    return document


def report(chains, tasks, settings, grouped, fold_of_row, rows_used, left_out, extra, stats=False, ratios=None) -> dict:
    """The JSON document: flat for one chain, task and fraction; else results and macro averages.

    Over several repeats each result also holds each repeat's means and their
    spread; ``stats`` adds the break-even point, micro-averages over several
    tasks and paired tests of every chain against the first (``ratios``: per
    fraction, test rows / training rows, for the corrected t-test)."""
    settings_json = settings_document(settings, rows_used, left_out, fold_of_row, extra)
    results = []
    for chain in chains:
        for task in tasks:
            for fraction in settings.train_fractions:
                summary = summarize(grouped[(chain.text, task, fraction)], settings.repeats, stats)
                swept = {"sweep": chain.sweep} if chain.sweep else {}
                results.append({"chain": chain.text, "task": task, "train_fraction": fraction, **swept, **summary})
    if len(results) == 1:
        return {**results[0], "settings": settings_json}
    macro = []
    for chain in chains:
        for fraction in settings.train_fractions:
            per_task = [r for r in results if r["chain"] == chain.text and r["train_fraction"] == fraction]
            entry = {
                "chain": chain.text,
                "train_fraction": fraction,
                **({"sweep": chain.sweep} if chain.sweep else {}),
                "tasks": len(per_task),
                **macro_average(per_task, stats),
            }
            if settings.repeats > 1:
                entry["std_over_repeats"] = _macro_spread(per_task, settings.repeats)
            if stats and len(tasks) > 1:
                entry["micro"] = micro_average([grouped[(chain.text, task, fraction)] for task in tasks])
            macro.append(entry)
    document = {"settings": settings_json, "results": results, "macro": macro}
    if stats and len(chains) > 1:
        document["paired"] = [
            {
                "chain": chain.text,
                "baseline": chains[0].text,
                "train_fraction": fraction,
                "measures": paired_comparison(
                    {task: grouped[(chain.text, task, fraction)] for task in tasks},
                    {task: grouped[(chains[0].text, task, fraction)] for task in tasks},
                    (ratios or {}).get(fraction, 1 / (settings.folds - 1)),
                ),
            }
            for chain in chains[1:]
            for fraction in settings.train_fractions
        ]
    return document


def multiclass_report(chains, settings, grouped, fold_of_row, rows_used, left_out, extra, stats, ratios) -> dict:
    """The JSON document of ``--multiclass``: the settings and one result per chain (and fraction);
    with ``stats`` and several chains, each chain against the first on the same folds: the overall
    measures over folds (corrected resampled t-test) and each class's AUC and F1 over classes
    (Wilcoxon) and over folds."""
    settings_json = settings_document(settings, rows_used, left_out, fold_of_row, extra, multiclass=True)
    results = [
        {
            "chain": chain.text,
            "task": MULTICLASS_TASK,
            "train_fraction": fraction,
            **({"sweep": chain.sweep} if chain.sweep else {}),
            **summarize_multiclass(grouped[(chain.text, MULTICLASS_TASK, fraction)], settings.repeats),
        }
        for chain in chains
        for fraction in settings.train_fractions
    ]
    document: dict = {"settings": settings_json, "results": results}
    if stats and len(chains) > 1:
        document["paired"] = []
        for chain in chains[1:]:
            for fraction in settings.train_fractions:
                records = grouped[(chain.text, MULTICLASS_TASK, fraction)]
                baseline = grouped[(chains[0].text, MULTICLASS_TASK, fraction)]
                ratio = (ratios or {}).get(fraction, 1 / (settings.folds - 1))
                overall = paired_comparison({"": records}, {"": baseline}, ratio, MULTICLASS_MEASURES)
                labels = list(records[0]["per_class"])
                per_class = paired_comparison(
                    {label: class_records(records, label) for label in labels},
                    {label: class_records(baseline, label) for label in labels},
                    ratio,
                    PER_CLASS_MEASURES,
                )
                document["paired"].append(
                    {
                        "chain": chain.text,
                        "baseline": chains[0].text,
                        "train_fraction": fraction,
                        "measures": {
                            measure: {"difference": paired["difference"], "over_folds": paired["over_folds"]}
                            for measure, paired in overall.items()
                        },
                        "per_class": {
                            measure: {
                                "difference": paired["difference"],
                                "over_classes": paired["over_tasks"],
                                "over_folds": paired["over_folds"],
                            }
                            for measure, paired in per_class.items()
                        },
                    }
                )
    return document


def format_multiclass_table(document: dict) -> str:
    """The ``--multiclass`` table: one row per chain (and fraction) of the overall measures; then per
    class its one-vs-rest AUC and F1 under each chain; then the spread over repeats and the paired tests."""
    settings, rows = document["settings"], document["results"]
    repeats = settings.get("repeats", 1)
    classes = list(rows[0]["per_class"])
    names = [row["chain"] for row in rows]
    width = max(len("chain"), *(len(name) for name in names))
    lines = [
        f"{settings['folds']}-fold CV{f' × {repeats} repeats' if repeats > 1 else ''}, seed {settings['seed']}, "
        f"classifier {settings['classifier']}, {settings['rows']} rows; multi-class: {len(classes)} classes at once",
        f"{'chain':<{width}}  {'train':>5}  " + "  ".join(f"{MULTICLASS_LABELS[m]:>8}" for m in MULTICLASS_MEASURES),
    ]
    for name, row in zip(names, rows):
        cells = "  ".join(f"{_cell(row[m]):>8}" for m in MULTICLASS_MEASURES)
        lines.append(f"{name:<{width}}  {row['train_fraction']:>5g}  {cells}")
    if repeats > 1:
        lines.append(f"standard deviation over the {repeats} repeats' means:")
        for name, row in zip(names, rows):
            cells = "  ".join(f"{_cell(row['repeats'][m]['std']):>8}" for m in MULTICLASS_MEASURES)
            lines.append(f"{name:<{width}}  {row['train_fraction']:>5g}  {cells}")
    counts = settings.get("class_counts", {})
    class_width = max(len("class"), *(len(label) for label in classes))
    column = 13
    lines.append("per class, one-vs-rest AUC / F1, under chain 1, 2, … (the rows above, in order):")
    lines.append(
        f"{'class':<{class_width}}  {'rows':>5}  "
        + "  ".join(f"{f'chain {i + 1}':>{column}}" for i in range(len(rows)))
    )
    for label in classes:
        pairs = [(row["per_class"][label]["auc"], row["per_class"][label]["f1"]) for row in rows]
        cells = "  ".join(f"{_cell(auc).strip() + ' / ' + _cell(f1).strip():>{column}}" for auc, f1 in pairs)
        lines.append(f"{label:<{class_width}}  {counts.get(label, 0):>5}  {cells}")
    for comparison in document.get("paired", []):
        lines.append(
            f"'{comparison['chain']}' vs '{comparison['baseline']}' (train {comparison['train_fraction']:g}): "
            "difference; folds won/tied/lost, corrected resampled t-test p"
        )
        for measure, paired in comparison["measures"].items():
            folds_ = paired["over_folds"]
            lines.append(
                f"  {MULTICLASS_LABELS[measure]:>8} {paired['difference']:>+8.4f}  "
                f"{_tally(folds_, folds_['corrected_t']['p'])}"
            )
        lines.append("  per class: difference; classes won/tied/lost, Wilcoxon p; folds won/tied/lost, t-test p")
        for measure, paired in comparison["per_class"].items():
            classes_, folds_ = paired["over_classes"], paired["over_folds"]
            lines.append(
                f"  {LABELS[measure]:>8} {paired['difference']:>+8.4f}  "
                f"{_tally(classes_, classes_['wilcoxon_p'])}  {_tally(folds_, folds_['corrected_t']['p'])}"
            )
    return "\n".join(lines) + "\n"


def _macro_spread(per_task: list[dict], repeats: int) -> dict:
    """Per measure, the standard deviation across repeats of each repeat's macro average."""
    spread = {}
    for measure in [*MEASURES, *EXTRA_MEASURES]:
        per_repeat = np.array(
            [[r["repeats"][measure]["per_repeat"][repeat] for r in per_task] for repeat in range(repeats)],
            dtype=np.float64,
        )
        defined = ~np.isnan(per_repeat)
        means = np.array(
            [per_repeat[i][defined[i]].mean() for i in range(repeats) if defined[i].any()], dtype=np.float64
        )
        spread[measure] = float(means.std(ddof=1)) if len(means) > 1 else 0.0
    return spread


def _cell(value) -> str:
    return f"{value:>6.3f}" if value is not None and not math.isnan(value) else f"{'—':>6}"


def _p_cell(value) -> str:
    return f"{value:>8.3g}" if value is not None else f"{'—':>8}"


def _tally(counts: dict, p) -> str:
    """``won/tied/lost p P`` of one paired comparison, as the text tables show it."""
    return f"{counts['wins']}/{counts['ties']}/{counts['losses']} p {_p_cell(p)}"


def format_table(document: dict, per_task: bool) -> str:
    """A plain-text table: one row per chain (and fraction), macro-averaged over tasks; then, when the
    document has them, the spread over repeats, the break-even and micro-averages, and the paired tests."""
    if "results" not in document:
        rows = [document]
        header_note = f"task: {document['task']} vs rest"
    else:
        rows = document["macro"]
        tasks = sorted({r["task"] for r in document["results"]})
        header_note = (
            f"task: {tasks[0]} vs rest"
            if len(tasks) == 1
            else f"{len(tasks)} task(s), macro-averaged: {', '.join(tasks)}"
        )
        if per_task:
            rows = document["results"] + rows
    settings = document["settings"]
    width = max(
        len("chain"), *(len(r["chain"]) + (len(r.get("task", "")) + 3 if per_task and "task" in r else 0) for r in rows)
    )
    repeats = settings.get("repeats", 1)
    lines = [
        f"{settings['folds']}-fold CV{f' × {repeats} repeats' if repeats > 1 else ''}, seed {settings['seed']}, "
        f"classifier {settings['classifier']}, {settings['rows']} rows; {header_note}",
        f"{'chain':<{width}}  {'train':>5}  " + "  ".join(f"{LABELS[m]:>6}" for m in MEASURES),
    ]
    names = []
    for row in rows:
        name = row["chain"] + (f" [{row['task']}]" if per_task and "task" in row and "results" in document else "")
        names.append(name)
        cells = "  ".join(_cell(row[m]) for m in MEASURES)
        lines.append(f"{name:<{width}}  {row['train_fraction']:>5g}  {cells}")
    if repeats > 1:
        lines.append(f"standard deviation over the {repeats} repeats' means:")
        for name, row in zip(names, rows):
            spread = row.get("std_over_repeats") or {m: row["repeats"][m]["std"] for m in MEASURES}
            cells = "  ".join(_cell(spread[m]) for m in MEASURES)
            lines.append(f"{name:<{width}}  {row['train_fraction']:>5g}  {cells}")
    if "breakeven" in rows[-1]:
        micro = any("micro" in row for row in rows)
        lines.append(
            f"{'':<{width}}  {'train':>5}  {'BEP':>6}"
            + (f"  {'microF1':>7}  {'microP':>6}  {'microR':>6}" if micro else "")
        )
        for name, row in zip(names, rows):
            pooled = row.get("micro", {})
            lines.append(
                f"{name:<{width}}  {row['train_fraction']:>5g}  {_cell(row['breakeven'])}"
                + (
                    f"  {_cell(pooled.get('f1')):>7}  {_cell(pooled.get('precision'))}  {_cell(pooled.get('recall'))}"
                    if micro
                    else ""
                )
            )
    for comparison in document.get("paired", []):
        lines.append(
            f"'{comparison['chain']}' vs '{comparison['baseline']}' (train {comparison['train_fraction']:g}): "
            "difference; tasks won/tied/lost, Wilcoxon p; folds won/tied/lost, corrected resampled t-test p"
        )
        for measure in ("f1", "auc", "breakeven"):
            paired = comparison["measures"][measure]
            tasks_, folds_ = paired["over_tasks"], paired["over_folds"]
            lines.append(
                f"  {LABELS.get(measure, 'BEP'):>6} {paired['difference']:>+8.4f}  "
                f"{_tally(tasks_, tasks_['wilcoxon_p'])}  {_tally(folds_, folds_['corrected_t']['p'])}"
            )
    return "\n".join(lines) + "\n"


def plot_learning_curves(document: dict, path: str) -> None:
    """AUC and F1 against the training fraction, one line per chain (matplotlib, optional)."""
    plt = _pyplot("--plot")
    rows = document["macro"] if "macro" in document else [document]
    figure, axes = plt.subplots(1, 2, figsize=(10, 4))
    for chain in dict.fromkeys(r["chain"] for r in rows):
        points = sorted((r["train_fraction"], r["auc"], r["f1"]) for r in rows if r["chain"] == chain)
        for axis, column, label in ((axes[0], 1, "AUC"), (axes[1], 2, "F1")):
            axis.plot([p[0] for p in points], [p[column] for p in points], marker="o", label=chain)
            axis.set_xlabel("fraction of the training fold")
            axis.set_ylabel(label)
            axis.set_xscale("log")
    axes[0].legend(fontsize="small")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def _pyplot(option: str):
    """matplotlib's pyplot on the Agg backend; FilterkitError saying how to install it if missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise FilterkitError(f"{option} needs matplotlib: pip install 'filterkit[plot]'") from None
    return plt


def _figure_html(plt, figure, title: str) -> str:
    """A figure as an inline PNG (a data URI: the page needs no network and no other file)."""
    import base64
    import html
    import io

    buffer = io.BytesIO()
    figure.tight_layout()
    figure.savefig(buffer, format="png", dpi=90, metadata={"Software": None})
    plt.close(figure)
    encoded = base64.b64encode(buffer.getvalue()).decode("ascii")
    caption = html.escape(title)
    return (
        f'<figure><img alt="{caption}" src="data:image/png;base64,{encoded}">'
        f"<figcaption>{caption}</figcaption></figure>"
    )


def _report_figures(document: dict, plt) -> list[str]:
    """The report's plots: learning curves, sweep curves, and each chain against the first per task."""
    rows = document.get("macro", [document])
    figures = []
    fractions = sorted({r["train_fraction"] for r in rows})
    if len(fractions) > 1:
        figure, axes = plt.subplots(1, 2, figsize=(10, 4))
        for chain in dict.fromkeys(r["chain"] for r in rows):
            points = sorted((r["train_fraction"], r["auc"], r["f1"]) for r in rows if r["chain"] == chain)
            for axis, column, label in ((axes[0], 1, "AUC"), (axes[1], 2, "F1")):
                axis.plot([p[0] for p in points], [p[column] for p in points], marker="o", label=chain)
                axis.set(xlabel="fraction of the training fold", ylabel=label, xscale="log")
                axis.minorticks_off()
                axis.set_xticks(fractions, [f"{f:g}" for f in fractions])
        axes[0].legend(fontsize="small")
        figures.append(_figure_html(plt, figure, "Learning curves: macro-averaged AUC and F1"))
    swept = [r for r in rows if r.get("sweep")]
    if swept and all(isinstance(v, (int, float)) for r in swept for v in r["sweep"].values()):
        (label,) = swept[0]["sweep"]
        figure, axes = plt.subplots(1, 2, figsize=(10, 4))
        curves: dict[tuple, list] = {}
        for r in swept:
            base = r["chain"][: r["chain"].rindex(" [")]
            curves.setdefault((base, r["train_fraction"]), []).append((r["sweep"][label], r["auc"], r["f1"]))
        for (base, fraction), points in curves.items():
            points.sort()
            name = base if len(fractions) == 1 else f"{base} (train {fraction:g})"
            for axis, column, measure in ((axes[0], 1, "AUC"), (axes[1], 2, "F1")):
                axis.plot([p[0] for p in points], [p[column] for p in points], marker="o", label=name)
                axis.set(xlabel=label, ylabel=measure, xscale="log" if min(p[0] for p in points) > 0 else "linear")
                axis.minorticks_off()
                axis.set_xticks([p[0] for p in points], [f"{p[0]:g}" for p in points])
        axes[0].legend(fontsize="small")
        figures.append(_figure_html(plt, figure, f"Sweep of {label}: macro-averaged AUC and F1"))
    results = document.get("results", [])
    chains = list(dict.fromkeys(r["chain"] for r in results))
    tasks = list(dict.fromkeys(r["task"] for r in results))
    if len(chains) > 1 and len(tasks) > 1:
        for fraction in fractions:
            by = {(r["chain"], r["task"]): r["f1"] for r in results if r["train_fraction"] == fraction}
            for chain in chains[1:]:
                figure, axis = plt.subplots(figsize=(5, 5))
                x = [by[(chains[0], t)] for t in tasks]
                y = [by[(chain, t)] for t in tasks]
                axis.scatter(x, y, s=18)
                low, high = min(x + y), max(x + y)
                axis.plot([low, high], [low, high], color="grey", linewidth=0.8)
                axis.set(xlabel=f"F1 of '{chains[0]}'", ylabel=f"F1 of '{chain}'")
                figures.append(
                    _figure_html(
                        plt,
                        figure,
                        f"F1 per task (train {fraction:g}): '{chain}' against '{chains[0]}'; above the line it wins",
                    )
                )
    return figures


def report_html(document: dict, table: str) -> str:
    """The self-contained HTML report: the settings, the table, the plots and the paired tests."""
    import html

    plt = _pyplot("--report")
    settings = document["settings"]
    shown = {key: value for key, value in settings.items() if key not in ("fold_of_row", "class_counts")}
    settings_rows = "".join(
        f"<tr><th>{html.escape(str(key))}</th><td>{html.escape(json.dumps(value, default=_json_default))}</td></tr>"
        for key, value in shown.items()
    )
    paired_rows = ""
    for comparison in document.get("paired", []):
        for measure, paired in comparison["measures"].items():
            tasks_, folds_ = paired["over_tasks"], paired["over_folds"]
            p_w, p_t = tasks_["wilcoxon_p"], folds_["corrected_t"]["p"]
            paired_rows += (
                f"<tr><td>{html.escape(comparison['chain'])}</td><td>{html.escape(comparison['baseline'])}</td>"
                f"<td>{comparison['train_fraction']:g}</td><td>{measure}</td><td>{paired['difference']:+.4f}</td>"
                f"<td>{tasks_['wins']}/{tasks_['ties']}/{tasks_['losses']}</td>"
                f"<td>{'—' if p_w is None else f'{p_w:.3g}'}</td>"
                f"<td>{folds_['wins']}/{folds_['ties']}/{folds_['losses']}</td>"
                f"<td>{'—' if p_t is None else f'{p_t:.3g}'}</td></tr>"
            )
    paired_section = (
        "<h2>Paired tests against the first chain</h2><table><tr><th>chain</th><th>baseline</th><th>train</th>"
        "<th>measure</th><th>difference</th><th>tasks W/T/L</th><th>Wilcoxon p</th><th>folds W/T/L</th>"
        f"<th>corrected t-test p</th></tr>{paired_rows}</table>"
        if paired_rows
        else ""
    )
    figures = "".join(_report_figures(document, plt))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>filterkit evaluate: {html.escape(str(settings.get('input', '')))}</title>"
        "<style>body{font-family:sans-serif;margin:2em;max-width:80em}table{border-collapse:collapse;margin:1em 0}"
        "td,th{border:1px solid #ccc;padding:0.2em 0.5em;text-align:left}pre{background:#f6f6f6;padding:1em;"
        "overflow-x:auto}figure{display:inline-block;margin:1em}</style></head><body>"
        f"<h1>filterkit evaluate: {html.escape(str(settings.get('input', '')))}</h1>"
        f"<h2>Settings</h2><table>{settings_rows}</table>"
        f"<h2>Results</h2><pre>{html.escape(table)}</pre>"
        f"{'<h2>Plots</h2>' + figures if figures else ''}"
        f"{paired_section}"
        "</body></html>\n"
    )


class EvaluateCommand(ReportCommand):
    """``evaluate``, whose options include every registered classifier's, as ``--NAME-OPTION``."""

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        """The declared options, then the classifiers' (before ``--help``)."""
        params = super().get_params(ctx)
        declared = len(self.params)
        return [*params[:declared], *_classifier_options(ctx), *params[declared:]]


def _classifier_options(ctx: click.Context) -> list[click.Option]:
    """The options of every registered classifier, made once per registry (click compares them by identity)."""
    registry = registry_of(ctx)
    made = ctx.meta.get(_CLASSIFIER_OPTIONS)
    if made is None or made[0] is not registry:
        options = [
            click_option(option, owner=registered.name)
            for registered in registry.classifiers.values()
            for option in registered.value.options
        ]
        made = ctx.meta[_CLASSIFIER_OPTIONS] = (registry, options)
    return made[1]


_CLASSIFIER_OPTIONS = "filterkit.evaluate.classifier_options"


@click.command(cls=EvaluateCommand, help=EVALUATE_HELP, context_settings={"allow_interspersed_args": False})
@click.argument("input_path", metavar="IN.arff")
@click.argument("words", nargs=-1, type=click.UNPROCESSED, metavar="STAGES...|CHAINS...")
@click.option("--compare", is_flag=True, help="Each argument after IN.arff is a whole chain, in quotes.")
@click.option("--folds", type=click.IntRange(2), default=10, show_default=True)
@click.option(
    "--seed",
    type=click.IntRange(0, MAX_SEED),
    default=1,
    show_default=True,
    help="Seed of the folds, samples and classifier.",
)
@click.option(
    "--train-fraction",
    default="1",
    show_default=True,
    help="Learning curve: fractions of each training fold, e.g. 0.05,0.1,0.2,0.5,1.",
)
@click.option(
    "--repeats",
    type=click.IntRange(1, 1000),
    default=1,
    show_default=True,
    help="Draw the folds this many times (the first with --seed); report each chain's mean and standard "
    "deviation across repeats.",
)
@click.option(
    "--sweep",
    metavar="STAGE.OPTION=V1,V2,…",
    help="Evaluate each chain at every value of one stage option, on the same folds (e.g. select.top=10,100,1000).",
)
@click.option(
    "--stats",
    is_flag=True,
    help="Add the precision–recall break-even point, micro-averaged F1/precision/recall over tasks, and "
    "paired tests of every chain against the first (Wilcoxon over tasks, corrected resampled t-test over folds).",
)
@click.option("--classifier", type=RegisteredName("classifiers"), default="svm", show_default=True)
@class_option
@positive_option("One task: this class against the rest (default on two classes: the minority).")
@click.option(
    "--each-class",
    is_flag=True,
    help="Every class with at least --min-positives rows against the rest, macro-averaged.",
)
@click.option("--min-positives", type=click.IntRange(1), default=50, show_default=True)
@click.option(
    "--multiclass",
    is_flag=True,
    help="One task of all classes: chains fitted without a positive class, a multi-class classifier "
    "(svm: one-vs-rest); accuracy, macro/micro F1 and each class's one-vs-rest AUC and F1.",
)
@json_option("Print JSON: means as top-level keys for one chain and task.")
@click.option("--per-task", is_flag=True, help="Also print one table row per task.")
@click.option(
    "--plot", type=click.Path(dir_okay=False), help="Save learning curves (AUC, F1) as a PNG (needs matplotlib)."
)
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False),
    help="Also write one self-contained HTML file: the settings, the table, the paired tests and the plots "
    "(learning curves, sweep curves, each chain against the first per task; needs matplotlib).",
)
@click.option("--jobs", type=click.IntRange(1), default=1, show_default=True, help="Worker processes.")
@quiet_option
@progress_option
@click.pass_context
def evaluate(
    ctx,
    input_path,
    words,
    compare,
    folds,
    seed,
    train_fraction,
    repeats,
    sweep,
    stats,
    classifier,
    class_spec,
    positive,
    each_class,
    min_positives,
    multiclass,
    as_json,
    per_task,
    plot,
    report_path,
    jobs,
    quiet,
    progress,
    **classifier_values,
):
    """Cross-validate the chain(s) on IN.arff and print the measures, as a table or JSON."""
    plugins = plugin_loader(ctx)
    registry = plugins.registry()
    if classifier not in registry.classifiers:
        raise click.UsageError(f"no classifier '{classifier}' is installed (see 'filterkit plugins')")
    params = {
        key.split("__", 1)[1]: value
        for key, value in classifier_values.items()
        if value is not None and key.startswith(classifier + "__")
    }
    ignored = sorted(
        key for key, value in classifier_values.items() if value is not None and not key.startswith(classifier + "__")
    )
    if ignored:
        flags = ", ".join("--" + key.replace("__", "-").replace("_", "-") for key in ignored)
        raise click.UsageError(f"option(s) for another classifier than '{classifier}': {flags}")
    try:
        registry.classifier(classifier)(**params)
    except OptionError as error:
        raise click.UsageError(error.message) from None
    if multiclass:
        _check_multiclass_options(ctx, registry, classifier, positive, each_class, per_task, plot, report_path)
    report_file = None
    if report_path is not None:
        report_file = checked_output(report_path)
        check_distinct([*([("the input", input_path)] if input_path != "-" else []), ("--report", report_path)])
        _pyplot("--report")
    settings = Settings(folds, seed, parse_fractions(train_fraction), classifier, params, repeats, multiclass)
    swept = None if sweep is None else parse_sweep(registry, sweep)
    preset = None if swept is None else swept.preset()
    if compare:
        if not words:
            raise FilterkitError("--compare needs at least one quoted chain after IN.arff")
        chains = [parse_chain(plugins, shlex.split(text), preset) for text in words]
    else:
        chains = [parse_chain(plugins, list(words), preset)]
    if len({c.text for c in chains}) != len(chains):
        raise FilterkitError("the same chain is given twice")
    if swept is not None:
        chains = swept_chains(registry, swept, sweep, chains)

    reporter = Progress(progress_mode(quiet, progress), word="step")
    reporter.expect(2)
    with open_source(input_path, DEFAULT_CHUNK_ROWS, needs_passes=False) as source:
        schema = source.schema
        with reporter.step(f"reading {input_path}", source) as meter:
            data = concatenate(list(meter.counted(source.chunks())), len(schema), schema.text_columns())
    class_index = resolve_class(schema, class_spec)
    if class_index is None or schema.attributes[class_index].kind != NOMINAL:
        raise FilterkitError("evaluate needs a nominal class attribute (-c)", input_path)
    codes = class_codes(data, class_index)
    known = np.flatnonzero(~np.isnan(codes))
    left_out = len(codes) - len(known)
    if left_out:
        sys.stderr.write(f"filterkit: note: {left_out} row(s) with a missing class are left out of the evaluation\n")
        data = take_rows(data, known)
    labels = schema.attributes[class_index].labels
    counts = np.bincount(class_codes(data, class_index).astype(np.int64), minlength=len(labels))
    tasks = [MULTICLASS_TASK] if multiclass else choose_tasks(labels, counts, positive, each_class, min_positives)
    if multiclass and np.count_nonzero(counts) < 2:
        raise FilterkitError("--multiclass needs rows of at least two classes", input_path)

    grouped, fold_of_row, ratios = run_evaluation(
        registry, plugins.folder, schema, data, class_index, chains, tasks, settings, jobs, reporter
    )
    reporter.finish()
    extra = {
        "input": input_path,
        "class": schema.attributes[class_index].name,
        "class_counts": dict(zip(labels, counts.tolist())),
        "chains": [c.text for c in chains],
        "tasks": tasks,
        **({"sweep": sweep} if sweep is not None else {}),
    }
    if multiclass:
        document = multiclass_report(
            chains, settings, grouped, fold_of_row, int(data.n_rows), left_out, extra, stats, ratios
        )
        _print_document(document, format_multiclass_table(document), as_json)
        return
    document = report(
        chains,
        tasks,
        settings,
        grouped,
        fold_of_row,
        int(data.n_rows),
        left_out,
        extra,
        stats,
        ratios,
    )
    if plot:
        plot_learning_curves(document, plot)
    table = format_table(document, per_task)
    if report_file is not None:
        with staged_output(report_file) as staged:
            without_tests = {key: value for key, value in document.items() if key != "paired"}
            staged.stream.write(report_html(document, format_table(without_tests, per_task)).encode("utf-8"))
            staged.publish()
    _print_document(document, table, as_json)


def _print_document(document: dict, table: str, as_json: bool) -> None:
    """The evaluation on stdout: the JSON document, or the table."""
    if as_json:
        click.echo(json.dumps(_without_nan(document), indent=1, allow_nan=False, default=_json_default))
    else:
        click.echo(table, nl=False)


def _check_multiclass_options(ctx, registry, classifier, positive, each_class, per_task, plot, report_path) -> None:
    """Refuse what ``--multiclass`` cannot do: a binary classifier, and the options of binary tasks or
    of the binary table and plots."""
    if not getattr(registry.classifier(classifier), "multiclass", False):
        raise click.UsageError(
            f"classifier '{classifier}' is binary and cannot learn k classes at once (--multiclass needs a "
            "classifier that declares multiclass, e.g. svm); for one task per class use --each-class"
        )
    given = [
        flag
        for flag, value in (
            ("--positive", positive is not None),
            ("--each-class", each_class),
            ("--min-positives", ctx.get_parameter_source("min_positives") is click.core.ParameterSource.COMMANDLINE),
            ("--per-task", per_task),
            ("--plot", plot is not None),
            ("--report", report_path is not None),
        )
        if value
    ]
    if given:
        raise click.UsageError(
            f"--multiclass cannot be combined with {', '.join(given)}: it evaluates one task of all classes "
            "(its table always shows each class; use --json for everything)"
        )


def _without_nan(value):
    """NaN (an undefined AUC) as JSON null."""
    if isinstance(value, dict):
        return {key: _without_nan(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_without_nan(item) for item in value]
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _json_default(value):
    if isinstance(value, (np.integer, np.floating)):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON")
