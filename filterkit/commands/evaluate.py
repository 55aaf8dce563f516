"""``filterkit evaluate``: cross-validate chains with a classifier and report the papers' measures."""

from __future__ import annotations

import functools
import json
import math
import shlex
import sys

import click
import numpy as np

from filterkit.arff.reader import DEFAULT_CHUNK_ROWS
from filterkit.commands.context import PluginLoader, plugin_loader, registry_of
from filterkit.commands.files import ReportCommand, open_source
from filterkit.commands.options import (
    RegisteredName,
    class_option,
    click_option,
    json_option,
    positive_option,
    quiet_option,
)
from filterkit.commands.stages import StageChain
from filterkit.errors import FilterkitError
from filterkit.evaluation import (
    MEASURES,
    ChainSpec,
    Settings,
    choose_tasks,
    class_codes,
    evaluate_fold,
    macro_average,
    nested_subsamples,
    stratified_folds,
    summarize,
    take_rows,
)
from filterkit.plugins import load_plugins
from filterkit.progress import Progress, progress_mode, progress_option
from filterkit.runner import resolve_class
from filterkit.schema import NOMINAL, concatenate

EVALUATE_HELP = """Cross-validate a chain (or several) with a classifier on IN.arff.

\b
  filterkit evaluate --positive Ethics oh0.arff shape bns l2
  filterkit evaluate --each-class --compare iris.arff "minmax" "bns l2" "shape --no-zero-bin bns l2"
  filterkit evaluate --classifier aisvm --positive Ethics --json oh0.arff binarize l2

Stratified k-fold cross-validation (seeded); the chain is fitted on each
training fold only and applied to its test fold. With --compare, every
argument after IN.arff is one quoted chain ("" is no stage), all evaluated on
the same folds; without it, the arguments after IN.arff are one chain's stages.
The classifier sees numeric features only: nominal attributes the chain leaves
nominal are one-hot encoded, string and date attributes are dropped, missing
values become 0; instance weights are not used. Rows with a missing class are
left out (and counted on stderr). AUC is averaged over folds, never pooled.
"""

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


def parse_chain(plugins: PluginLoader, words: list[str]) -> ChainSpec:
    """One chain's words (``shape --no-zero-bin bns l2``) as stage names and parameters."""
    group = StageChain("chain", result_callback=lambda stages: stages)
    text = shlex.join(words) if words else "(none)"
    try:
        with group.make_context(f"filterkit evaluate: chain '{text}'", list(words), obj=plugins) as context:
            stages = group.invoke(context)
    except click.UsageError as error:
        raise FilterkitError(f"chain '{text}': {error.format_message()}") from None
    return ChainSpec(text, [(stage.name, dict(stage.params)) for stage in stages])


@functools.lru_cache(maxsize=4)
def _worker_registry(plugins_dir):
    return load_plugins(plugins_dir)


def _evaluate_item(plugins_dir, schema, data, class_index, chain, task, train, test, settings):
    """One (chain, task, fold, fraction) in a worker process, which loads the plugins itself."""
    return evaluate_fold(_worker_registry(plugins_dir), schema, data, class_index, chain, task, train, test, settings)


def run_evaluation(registry, plugins_dir, schema, data, class_index, chains, tasks, settings, jobs, progress: Progress):
    """Every (chain, task, fraction) summarized over the folds; the folds are drawn once.
    The fits are one step of ``progress``."""
    codes = class_codes(data, class_index).astype(np.int64)
    items = []
    with progress.working("drawing the folds"):
        folds = stratified_folds(codes, settings.folds, settings.seed)
        for task in tasks:
            for fold, (train, test) in enumerate(folds):
                samples = nested_subsamples(train, codes, settings.train_fractions, settings.seed + fold)
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
    for fold, (_, test) in enumerate(folds):
        fold_of_row[test] = fold
    return grouped, fold_of_row


def report(chains, tasks, settings, grouped, fold_of_row, rows_used, left_out, extra) -> dict:
    """The JSON document: flat for one chain, task and fraction; else results and macro averages."""
    settings_json = {
        "folds": settings.folds,
        "seed": settings.seed,
        "train_fractions": list(settings.train_fractions),
        "classifier": settings.classifier,
        "classifier_params": settings.classifier_params,
        "rows": rows_used,
        "rows_with_missing_class_left_out": left_out,
        "fold_of_row": fold_of_row.tolist(),
        **extra,
    }
    results = []
    for chain in chains:
        for task in tasks:
            for fraction in settings.train_fractions:
                summary = summarize(grouped[(chain.text, task, fraction)])
                results.append({"chain": chain.text, "task": task, "train_fraction": fraction, **summary})
    if len(results) == 1:
        return {**results[0], "settings": settings_json}
    macro = []
    for chain in chains:
        for fraction in settings.train_fractions:
            per_task = [r for r in results if r["chain"] == chain.text and r["train_fraction"] == fraction]
            macro.append(
                {"chain": chain.text, "train_fraction": fraction, "tasks": len(per_task), **macro_average(per_task)}
            )
    return {"settings": settings_json, "results": results, "macro": macro}


def format_table(document: dict, per_task: bool) -> str:
    """A plain-text table: one row per chain (and fraction), macro-averaged over tasks."""
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
    lines = [
        f"{settings['folds']}-fold CV, seed {settings['seed']}, classifier {settings['classifier']}, "
        f"{settings['rows']} rows; {header_note}",
        f"{'chain':<{width}}  {'train':>5}  " + "  ".join(f"{LABELS[m]:>6}" for m in MEASURES),
    ]
    for row in rows:
        name = row["chain"] + (f" [{row['task']}]" if per_task and "task" in row and "results" in document else "")
        cells = "  ".join(f"{row[m]:>6.3f}" if not math.isnan(row[m]) else f"{'—':>6}" for m in MEASURES)
        lines.append(f"{name:<{width}}  {row['train_fraction']:>5g}  {cells}")
    return "\n".join(lines) + "\n"


def plot_learning_curves(document: dict, path: str) -> None:
    """AUC and F1 against the training fraction, one line per chain (matplotlib, optional)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise FilterkitError("--plot needs matplotlib: pip install 'filterkit[plot]'") from None
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
@click.option("--classifier", type=RegisteredName("classifiers"), default="svm", show_default=True)
@class_option
@positive_option("One task: this class against the rest (default on two classes: the minority).")
@click.option(
    "--each-class",
    is_flag=True,
    help="Every class with at least --min-positives rows against the rest, macro-averaged.",
)
@click.option("--min-positives", type=click.IntRange(1), default=50, show_default=True)
@json_option("Print JSON: means as top-level keys for one chain and task.")
@click.option("--per-task", is_flag=True, help="Also print one table row per task.")
@click.option(
    "--plot", type=click.Path(dir_okay=False), help="Save learning curves (AUC, F1) as a PNG (needs matplotlib)."
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
    classifier,
    class_spec,
    positive,
    each_class,
    min_positives,
    as_json,
    per_task,
    plot,
    jobs,
    quiet,
    progress,
    **classifier_values,
):
    """Cross-validate the chain(s) on IN.arff and print the measures, as a table or JSON."""
    plugins = plugin_loader(ctx)
    registry = plugins.registry()
    if classifier not in registry.classifiers:
        raise FilterkitError(f"no classifier '{classifier}' is installed (see 'filterkit plugins')")
    params = {
        key.split("__", 1)[1]: value
        for key, value in classifier_values.items()
        if value is not None and key.startswith(classifier + "__")
    }
    ignored = sorted(
        key for key, value in classifier_values.items() if value is not None and not key.startswith(classifier + "__")
    )
    if ignored:
        raise FilterkitError(f"option(s) for another classifier than '{classifier}': {', '.join(ignored)}")
    registry.classifier(classifier)(**params)
    settings = Settings(folds, seed, parse_fractions(train_fraction), classifier, params)
    if compare:
        if not words:
            raise FilterkitError("--compare needs at least one quoted chain after IN.arff")
        chains = [parse_chain(plugins, shlex.split(text)) for text in words]
    else:
        chains = [parse_chain(plugins, list(words))]
    if len({c.text for c in chains}) != len(chains):
        raise FilterkitError("the same chain is given twice")

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
    tasks = choose_tasks(labels, counts, positive, each_class, min_positives)

    grouped, fold_of_row = run_evaluation(
        registry, plugins.folder, schema, data, class_index, chains, tasks, settings, jobs, reporter
    )
    reporter.finish()
    document = report(
        chains,
        tasks,
        settings,
        grouped,
        fold_of_row,
        int(data.n_rows),
        left_out,
        {
            "input": input_path,
            "class": schema.attributes[class_index].name,
            "class_counts": dict(zip(labels, counts.tolist())),
            "chains": [c.text for c in chains],
            "tasks": tasks,
        },
    )
    if plot:
        plot_learning_curves(document, plot)
    if as_json:
        click.echo(json.dumps(_without_nan(document), indent=1, allow_nan=False, default=_json_default))
    else:
        click.echo(format_table(document, per_task), nl=False)


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
