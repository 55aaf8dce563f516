"""``filterkit train``: fit a chain and a classifier as ``evaluate --test --svm-c-by f1 --svm-c-search early`` does
(the nested search; the flat one calibrates on its own cross-validation); save both in a model."""

from __future__ import annotations

import sys

import click

from filterkit.arff.tokens import one_line
from filterkit.classifying import labels_without_inner_folds, without_inner_folds
from filterkit.commands.context import plugin_loader
from filterkit.commands.evaluate import (
    JOBS_DEFAULT,
    MAX_SEED,
    EvaluateCommand,
    chains_of,
    check_engine_options,
    classifier_params,
)
from filterkit.commands.files import check_apart, check_format_options, option_inputs
from filterkit.commands.options import (
    RegisteredName,
    class_option,
    engine_option,
    format_option_decorators,
    input_format_option,
    labels_option,
    positive_option,
    progress_option,
    quiet_option,
    scheduler_option,
    workers_option,
)
from filterkit.evaluation import Settings
from filterkit.formats import FormatOptions, format_of, format_options
from filterkit.outputs import checked_output
from filterkit.progress import Progress, progress_mode
from filterkit.training import SEARCHES

TRAIN_HELP = """Fit a chain and a classifier on TRAIN and save both in one model file.

\b
  filterkit train -o grain.json ReutersGrain-train.arff words --lowercase shape bns l2
  filterkit train -o topics.json --multiclass docs.jsonl
  filterkit train -o m.json --positive Ethics --compare oh0.arff "bns --multiply l2" "shape bns l2"
  filterkit predict grain.json ReutersGrain-test.arff
  filterkit explain grain.json ReutersGrain-test.arff --top 5

One chain, or candidates searched nested, are fitted exactly as
'evaluate --test --svm-c-by f1 --svm-c-search early' fits them (the same
rows, C search and seed), so the model scores a test file as that does.
The task is --positive LABEL against the rest, the minority of two classes,
or every class with --multiclass (one-vs-rest). On multi-label data
(MEKA's -C, or --labels FILE.xml) the chain is fitted once and a classifier
per label (binary relevance, as 'evaluate --test'); the model predicts each
row's set of labels.

Given several chains (--compare, each quoted) or none, each candidate is
scored by --folds-fold cross-validation on TRAIN (the AUC of the task, the
macro one-vs-rest AUC with --multiclass, micro-F1 on labels) and the best is
kept; the model records every candidate's score, its F1 beside it. The SVM
picks C by the F1 of its inner (or, searched flat, out-of-fold) values here
(--svm-c-by f1, where evaluate's default is auc: a model ships decisions).
With no chain the candidates are these on text (docs/RESULTS.md §10.1,
§10.2, §10.9):

\b
{text}

and on word counts (no text attribute):

\b
{counts}

With --search flat (a class's task, the svm), and by default (--search
auto) where several candidates are scored with --multiclass on more than
two classes (docs/RESULTS.md §10.11), each candidate's folds are fitted
once and the SVM at each C of its grid on each fold, with no inner
cross-validation, as scikit-learn's GridSearchCV searches: C by the F1 of
the out-of-fold rows (--svm-c-by), the candidate by its AUC at that C, and
the kept chain fitted at that C alone, its sigmoid and cuts fitted on those
out-of-fold values (the model records "search": "flat" and each
candidate's C). On text it puts this chain of words and word pairs in place
of the second candidate (docs/RESULTS.md §10.10):

\b
{flat}

With --engine dask the candidates' fits run as tasks on a Dask cluster
(--scheduler ADDRESS, or a local one of --workers processes), the kept
chain's final fit here; the model is the same file as --engine local's.

With --multiclass on more than two classes, and on labels, shape is
'shape --multiclass max' (each word shaped once, toward its most
informative class), not a copy of every word per class.
"""


def _train_help() -> str:
    """The help, the default candidates listed from the tables train uses."""
    from filterkit.training import COUNT_CANDIDATES, FLAT_TEXT_CANDIDATES, TEXT_CANDIDATES

    def typed(stages) -> str:
        words = []
        for name, params in stages:
            words.append(name)
            for key, value in params.items():
                flag = "--" + key.replace("_", "-")
                words.append(flag if value is True else f"{flag} {value}")
        return " ".join(words)

    return TRAIN_HELP.format(
        text="\n".join(f"  {typed(chain)}" for chain in TEXT_CANDIDATES),
        counts="\n".join(f"  {typed(chain)}" for chain in COUNT_CANDIDATES),
        flat="\n".join(f"  {typed(chain)}" for chain in FLAT_TEXT_CANDIDATES[-1:]),
    )


class TrainCommand(EvaluateCommand):
    """``train``: evaluate's classifier options, shown with the defaults a model is fitted with."""

    trains = True


@click.command(cls=TrainCommand, help=_train_help(), context_settings={"allow_interspersed_args": False})
@click.argument("input_path", metavar="TRAIN")
@click.argument("words", nargs=-1, type=click.UNPROCESSED, metavar="[STAGES...|CHAINS...]")
@click.option("-o", "--output", "model_path", required=True, type=click.Path(dir_okay=False), help="The model file.")
@click.option("--compare", is_flag=True, help="Each argument after TRAIN is a whole candidate chain, in quotes.")
@click.option(
    "--folds",
    type=click.IntRange(2),
    default=5,
    show_default=True,
    help="Folds of the cross-validation that scores candidate chains.",
)
@click.option(
    "--seed",
    type=click.IntRange(0, MAX_SEED),
    default=1,
    show_default=True,
    help="Seed of the candidates' folds and of the classifier.",
)
@click.option(
    "--jobs",
    type=click.IntRange(1),
    default=None,
    show_default=JOBS_DEFAULT,
    help="Worker processes for the candidates' cross-validation and, from 5,000 rows of a class's task, the final "
    "fit's inner folds (--jobs 1: fit here, in this process); the same model for any number.",
)
@click.option(
    "--search",
    type=click.Choice(SEARCHES),
    default="auto",
    show_default=True,
    help="How candidates are scored and the svm's C picked: nested (each fold's SVM picks C by its own inner "
    "cross-validation), flat (one cross-validation over chain and C, no inner one: about a fifth of the SVM "
    "fits; a class's task and the svm only; a candidate's folds at a time in up to --jobs processes), or auto "
    "(flat for several candidates with --multiclass on more than two classes present, nested otherwise).",
)
@engine_option("Score the candidates here (in --jobs processes) or as tasks on a Dask cluster, the same model")
@scheduler_option
@workers_option
@click.option("--classifier", type=RegisteredName("classifiers"), default="svm", show_default=True)
@class_option
@positive_option(help="The task: this class against the rest (default on two classes: the minority).")
@click.option("--multiclass", is_flag=True, help="Every class at once (svm: one-vs-rest).")
@labels_option
@input_format_option
@format_option_decorators
@quiet_option
@progress_option
@click.pass_context
def train(ctx, input_path, words, model_path, compare, folds, seed, jobs, search, multiclass, **options):
    """Fit the chain (the best candidate) and the classifier on TRAIN; save the model."""
    from filterkit.training import train as train_model

    check_engine_options(ctx)
    placed = {name: options.pop(name) for name in ("engine", "scheduler", "workers")}
    plugins = plugin_loader(ctx)
    registry = plugins.registry()
    if options["positive"] is not None and multiclass:
        raise click.UsageError(f"--positive {options['positive']} and --multiclass both choose the task: give one")
    if multiclass and not registry.classifier(options["classifier"]).multiclass:
        raise click.UsageError(f"classifier '{options['classifier']}' is binary and cannot learn k classes at once")
    mode = progress_mode(options.pop("quiet"), options.pop("progress"))
    input_format = options.pop("input_format")
    reading = FormatOptions.of_params(
        {name: options.pop(name, None) for name in format_options()}, options["class_spec"]
    )
    check_format_options(reading, format_of(input_path, input_format))
    settings = Settings(
        seed=seed,
        classifier=options.pop("classifier"),
        class_spec=options.pop("class_spec"),
        positive=options.pop("positive"),
        multiclass=multiclass,
        labels_file=options.pop("labels_file"),
    )
    settings.classifier_params = classifier_params(registry, settings.classifier, options)
    checked_output(model_path)  # before any work
    chains = chains_of(plugins, registry, words, compare, None) if words else None
    read = option_inputs(registry, chains, settings.classifier, settings.classifier_params, settings.labels_file)
    check_apart([*([("the input", input_path)] if input_path != "-" else []), *read], [("-o", model_path)])
    progress = Progress(mode, word="step")
    model = train_model(
        input_path,
        chains,
        settings,
        registry,
        input_format=input_format,
        reading=reading,
        progress=progress,
        candidate_folds=folds,
        jobs=jobs,
        plugins_dir=plugins.folder,
        warn=progress.warning,  # as the chain command warns: -q silences progress only
        search=search,
        **placed,
    )
    _warn_without_inner_folds(model.section, progress)
    for candidate in model.section.get("candidates", ()):
        kept = "kept" if candidate["chain"] == model.section["chain"] else "    "
        second = next(key for key in ("f1", "macro_f1") if key in candidate)
        picked = f", C {candidate['C']:g}" if "C" in candidate else ""
        sys.stderr.write(
            f"filterkit: {kept} {candidate['measure']} {candidate['score']:.4f} ({second} {candidate[second]:.4f}"
            f"{picked}) '{one_line(candidate['chain'])}'\n"
        )
    model.save(model_path)


def _warn_without_inner_folds(section: dict, progress: Progress) -> None:
    """A warning where the final fit had no inner cross-validation (a class of one training row), and one naming
    the labels whose fits had none (one row on one side): its C is the grid's first, unsearched, and ``platt-cv``
    fitted no sigmoid (the margin's sign decides, no threshold cut)."""
    fitted = section.get("fitted", {})
    if without_inner_folds(fitted) and section.get("search") != "flat":
        chosen = f" ({fitted['C']:g})" if isinstance(fitted.get("C"), (int, float)) else ""
        progress.warning(
            f"a class has one training row, too few for inner folds: C is the grid's first{chosen}, not searched, "
            "and no Platt sigmoid or threshold was fitted (the margin's sign decides)"
        )
    labels = section.get("classes", ()) if section.get("per_label") else ()
    fits = [entry.get("fitted") for entry in section.get("per_label", ())]
    for warning in labels_without_inner_folds(labels, fits):
        progress.warning(warning)
