"""``filterkit evaluate``: cross-validate chains with a classifier and report the papers' measures."""

from __future__ import annotations

import contextlib
import shlex
import sys
from dataclasses import dataclass, fields, replace

import click
from click.core import ParameterSource

from filterkit import evaluation, reports
from filterkit.chain_words import ChainHelpError, MisplacedOptionError
from filterkit.commands.context import PluginLoader, plugin_loader, registry_of
from filterkit.commands.files import (
    ReportCommand,
    check_apart,
    check_distinct,
    check_format_options,
    option_inputs,
)
from filterkit.commands.options import (
    RegisteredName,
    class_option,
    click_option,
    engine_option,
    format_option_decorators,
    input_format_option,
    json_option,
    labels_option,
    positive_option,
    progress_option,
    quiet_option,
    scheduler_option,
    workers_option,
)
from filterkit.commands.stages import show_chain_help
from filterkit.contract import PluginCrash
from filterkit.errors import FilterkitError, OptionError
from filterkit.evaluation import ChainSpec, Settings
from filterkit.evaluation_targets import THRESHOLDS
from filterkit.formats import FormatOptions, format_of, format_options
from filterkit.label_issues import LabelIssueFinder
from filterkit.labels import RENAME_LABEL, unjoinable_label
from filterkit.outputs import checked_output, staged_output
from filterkit.plugins import warn
from filterkit.progress import Progress, progress_mode
from filterkit.stage import Option
from filterkit.tasks import LABEL_SET, MAX_SEED, Task

EVALUATE_HELP = """Cross-validate a chain (or several) with a classifier on IN.arff.

\b
  filterkit evaluate --positive Ethics oh0.arff shape bns l2
  filterkit evaluate --each-class --compare iris.arff "minmax" "bns l2" "shape --no-zero-bin bns l2"
  filterkit evaluate --classifier aisvm --positive Ethics --json oh0.arff binarize l2
  filterkit evaluate --each-class --repeats 5 --stats --report r.html --compare oh0.arff "binarize l2" "shape bns l2"
  filterkit evaluate --positive Ethics --sweep select.top=10,100,1000 oh0.arff select --metric bns l2
  filterkit evaluate --multiclass --folds 5 --compare oh0.arff "binarize l2" "binarize bns l2"
  filterkit evaluate --test test.arff --predictions p.csv train.arff words --lowercase bns l2
  filterkit evaluate --test test.arff --json --compare meka-train.arff "words l2" "words bns l2"

Stratified k-fold cross-validation (seeded); the chain is fitted on each
training fold only and applied to its test fold. With --compare, every
argument after IN.arff is one quoted chain ("" is no stage), all evaluated on
the same folds; without it, the arguments after IN.arff are one chain's stages.
The classifier sees numeric features only: nominal attributes the chain leaves
nominal are one-hot encoded, string and date attributes are dropped (a chain
that leaves no feature is an error), missing values become 0; instance weights
are not used. Rows with a missing class are
left out (and counted on stderr). AUC is averaged over folds, never pooled; a
mean that leaves out folds (a one-class test fold has no AUC) is marked * and
footnoted. F1, precision and recall come from the counts summed over the folds
(Forman & Scholz 2010); --json also gives their per-fold means (f1_fold_mean, …).
With --test, --stats adds McNemar's test per task. Data of several labels a row
(MEKA's -C, or --labels FILE.xml) is evaluated label by label: docs/evaluate.md.
"""

#: What ``--jobs`` defaults to, as its help says it.
JOBS_DEFAULT = f"every core this process may use (here {evaluation.usable_cores()})" + (
    f" from {evaluation.POOL_FROM_ROWS:,} training rows, else 1" if evaluation.POOL_FROM_ROWS else ""
)

#: How many words ``--label-issues`` lists per row, those pulling it most toward the suggested label.
LABEL_ISSUE_WORDS = 5


def parse_fractions(_ctx, _param, text: str) -> tuple[float, ...]:
    """``--train-fraction``'s ``"0.05,0.1,1"`` as sorted fractions in (0, 1]; a usage error else."""
    try:
        given = [float(part) for part in text.split(",")]  # an empty one (0.5,,1) is no number: no value dropped
    except ValueError:
        raise click.BadParameter(f"{text!r} is not a list of numbers") from None
    if not given or not all(0 < f <= 1 for f in given):  # also refuses nan
        raise click.BadParameter(f"{text!r}: every fraction must be in (0, 1]")
    twice = next((f for position, f in enumerate(given) if f in given[:position]), None)
    if twice is not None:
        raise click.BadParameter(f"{text!r}: the fraction {reports.fraction_text(twice)} is given twice")
    return tuple(sorted(given))


def parse_chain(plugins: PluginLoader, words: list[str], preset: dict[str, dict] | None = None) -> ChainSpec:
    """One chain's words (``shape --no-zero-bin bns l2``) as stage names and parameters; ``preset``
    gives, per stage name, values for options the words leave out (the swept option of ``--sweep``).  Words
    that ask for a help (``shape --help``) print it and exit 0, as the command line's group of stages did."""
    try:
        return plugins.registry().parse_chain(words, preset)
    except ChainHelpError:
        show_chain_help(plugins, words)
        raise
    except MisplacedOptionError as error:
        ctx = click.get_current_context()
        if error.option not in _own_options(ctx):
            raise click.UsageError(str(error)) from None
        if error.staged:
            where = f"or, as {ctx.info_name}'s own option, before the input file"
            raise click.UsageError(f"{error}; {where}") from None
        where = f"{error.option} is an option of {ctx.info_name}: put it before the input file"
        raise click.UsageError(f"chain '{error.text}': {where}") from None


def _own_options(ctx: click.Context) -> set[str]:
    """The spellings of the options of ``ctx``'s command (``-o``, ``--output``, ``--no-…``)."""
    return {
        spelled
        for param in ctx.command.get_params(ctx)
        if isinstance(param, click.Option)
        for spelled in [*param.opts, *param.secondary_opts]
    }


@dataclass(frozen=True)
class Sweep:
    """``--sweep 'STAGE.OPTION=V1,V2,…'`` read: its text, stage, option, label (``stage.option-name``) and
    values (as typed and converted)."""

    text: str
    stage: str
    option: str
    label: str
    values: tuple[str, ...]
    converted: tuple


def parse_sweep(registry, text: str) -> Sweep:
    """``--sweep 'STAGE.OPTION=V1,V2,…'`` checked against the stage's declared options."""
    target, equals, values_text = text.partition("=")
    stage_name, dot, option_name = target.strip().partition(".")
    option_name = option_name.strip().replace("-", "_")
    values = [value.strip() for value in values_text.split(",")]
    if not equals or not dot or not stage_name or not option_name or not all(values):  # 1,,2 too: no value dropped
        raise FilterkitError(f"--sweep {text!r} is not STAGE.OPTION=VALUE,VALUE,… (e.g. select.top=10,100)")
    options = {option.name: option for option in registry.stage(stage_name).options}
    if option_name not in options:
        raise FilterkitError(
            f"--sweep {text!r}: stage '{stage_name}' has no option '{option_name.replace('_', '-')}' "
            f"(it has: {', '.join(sorted(name.replace('_', '-') for name in options)) or 'none'})"
        )
    try:
        converted = [options[option_name].convert(value) for value in values]
    except FilterkitError as error:
        raise FilterkitError(f"--sweep {text!r}: {error}") from None
    if len(set(converted)) != len(converted):
        raise FilterkitError(f"--sweep {text!r}: a value is given twice")
    label = f"{stage_name}.{option_name.replace('_', '-')}"
    return Sweep(text, stage_name, option_name, label, tuple(values), tuple(converted))


def swept_chains(registry, sweep: Sweep, chains: list[ChainSpec]) -> list[ChainSpec]:
    """Each chain once per value of ``sweep``, the option set in its every stage of that name."""
    swept = []
    for chain in chains:
        if not any(name == sweep.stage for name, _ in chain.stages):
            raise FilterkitError(f"--sweep {sweep.text!r}: chain '{chain.text}' has no stage '{sweep.stage}'")
        for value, typed in zip(sweep.values, sweep.converted):
            stages = [
                (name, {**params, sweep.option: typed} if name == sweep.stage else params)
                for name, params in chain.stages
            ]
            for name, params in stages:
                registry.make_stage(name, params)
            swept.append(ChainSpec(f"{chain.text} [{sweep.label}={value}]", stages, {sweep.label: typed}))
    return swept


class EvaluateCommand(ReportCommand):
    """``evaluate``, whose options include every registered classifier's, as ``--NAME-OPTION``."""

    #: Whether the classifiers' options are shown with the defaults a model is fitted with
    #: (``Classifier.trained_defaults``: ``train``), not their declared ones.
    trains = False

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        """The declared options, then the classifiers' (before ``--help``), made once per registry and command
        (click compares them by identity)."""
        params = super().get_params(ctx)
        declared = len(self.params)
        registry = registry_of(ctx)
        key = f"{_CLASSIFIER_OPTIONS}.{self.trains}"
        made = ctx.meta.get(key)
        if made is None or made[0] is not registry:
            made = ctx.meta[key] = (registry, self._classifier_options(ctx, registry, params))
        return [*params[:declared], *made[1], *params[declared:]]

    def _classifier_options(self, ctx: click.Context, registry, params: list[click.Parameter]) -> list[click.Option]:
        """Every classifier's options as ``--NAME-OPTION``, but one whose flag the command or a classifier loaded
        before has, left out with a warning naming its plugin (the command line read one of the two silently:
        a classifier ``train`` with an option ``fraction`` took ``evaluate --train-fraction``)."""
        taken = {spelled for param in params for spelled in [*param.opts, *param.secondary_opts]}
        options = []
        for registered in registry.classifiers.values():
            for option in registered.value.options:
                made = click_option(self._shown(registered.value, option), owner=registered.name)
                spelled = [*made.opts, *made.secondary_opts]
                clash = sorted(taken.intersection(spelled))
                if clash:
                    warn(
                        f"classifier '{registered.name}' ({registered.provenance}): its option '{option.name}' is "
                        f"left out: {clash[0]} is an option of '{ctx.info_name}' or of a classifier before it"
                    )
                    continue
                taken.update(spelled)
                options.append(made)
        return options

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Parse as any command; a required option missing because it was given after the input file (which
        makes it one of the chain's words) is a usage error that says where it goes."""
        try:
            return super().parse_args(ctx, args)
        except click.MissingParameter as missing:
            spellings = [] if missing.param is None else missing.param.opts
            late = next((o for o in spellings if any(a == o or a.startswith(o + "=") for a in args)), None)
            if late is None:
                raise
            raise click.UsageError(
                f"{late} is an option of {ctx.info_name}: put it before the input file, not among the chain's words",
                ctx=ctx,
            ) from None

    def _shown(self, classifier, option: Option) -> Option:
        """``option`` of ``classifier`` with the default this command fits it with."""
        if not self.trains or option.name not in classifier.trained_defaults:
            return option
        return replace(option, default=classifier.trained_defaults[option.name])


_CLASSIFIER_OPTIONS = "filterkit.evaluate.classifier_options"
COMMANDLINE = ParameterSource.COMMANDLINE


@click.command(cls=EvaluateCommand, help=EVALUATE_HELP, context_settings={"allow_interspersed_args": False})
@click.argument("input_path", metavar="IN.arff")
@click.argument("words", nargs=-1, type=click.UNPROCESSED, metavar="STAGES...|CHAINS...")
@click.option("--compare", is_flag=True, help="Each argument after IN.arff is a whole chain, in quotes.")
@click.option(
    "--test",
    "test_path",
    metavar="TEST.arff",
    help="Fit each chain (and the classifier) on all of IN.arff and score it on TEST.arff (same header) "
    "instead of cross-validating.",
)
@click.option(
    "--predictions",
    "predictions_path",
    type=click.Path(dir_okay=False),
    help="With --test, also write the scored test rows as CSV: chain, task, train, row, truth, score, decision.",
)
@click.option(
    "--label-issues",
    "label_issues_path",
    type=click.Path(dir_okay=False),
    help="Also write as CSV the rows whose given class the out-of-fold probabilities contradict, by confident "
    "learning (prune by noise rate, as cleanlab's find_label_issues), least self-confidence first: row, given, "
    f"suggested, self_confidence, rank and the {LABEL_ISSUE_WORDS} words pulling each toward the suggested class. "
    "On label sets (as cleanlab's multi-label find_label_issues) a line per flagged label: row, given, suggested, "
    "label, issue (wrongly present or absent), probability, quality, rank and the label's words.",
)
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
    callback=parse_fractions,
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
@labels_option
@click.option(
    "--threshold",
    type=click.Choice(THRESHOLDS),
    default="decision",
    show_default=True,
    help="Multi-label data: each label's classifier decides (svm: Platt's probability ≥ 0.5, or the margin's sign "
    "with --svm-decision margin), or MEKA's PCut: one threshold on every label's score, set so that the training "
    "rows' predicted label cardinality matches their true one.",
)
@click.option(
    "--chain-per-label",
    is_flag=True,
    help="Multi-label data: fit the chain once per label, --label LABEL on its stages that take one (label-specific "
    "features), instead of once for all labels (their scores combined).",
)
@positive_option(help="One task: this class against the rest (default on two classes: the minority).")
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
@json_option(help="Print JSON: means as top-level keys for one chain and task.")
@click.option("--per-task", is_flag=True, help="Also print one table row per task.")
@click.option(
    "--plot",
    type=click.Path(dir_okay=False),
    help="Save learning curves (AUC, F1) as a PNG, FILE.png (needs matplotlib).",
)
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False),
    help="Also write one self-contained HTML file: the settings, the table, the paired tests and the plots "
    "(learning curves, sweep curves, each chain against the first per task; needs matplotlib).",
)
@click.option(
    "--jobs",
    type=click.IntRange(1),
    default=None,
    show_default=JOBS_DEFAULT,
    help="Worker processes (--jobs 1: fit here, in this process); the same results for any number.",
)
@engine_option("Fit here (in --jobs processes) or as tasks on a Dask cluster, with the same results")
@scheduler_option
@workers_option
@input_format_option
@format_option_decorators
@quiet_option
@progress_option
@click.pass_context
def evaluate(
    ctx, input_path, words, compare, test_path, as_json, per_task, jobs, engine, scheduler, workers, **options
):
    """Cross-validate the chain(s) on IN.arff and print the measures, as a table or JSON."""
    plugins = plugin_loader(ctx)
    registry = plugins.registry()
    protocol = {field.name: options.pop(field.name) for field in fields(Settings) if field.name in options}
    fractions = options.pop("train_fraction")
    outputs = {name: options.pop(name) for name in ("plot", "report_path", "predictions_path", "label_issues_path")}
    mode = progress_mode(options.pop("quiet"), options.pop("progress"))
    input_format = options.pop("input_format")
    reading = FormatOptions.of_params(
        {name: options.pop(name, None) for name in format_options()}, protocol["class_spec"]
    )
    check_format_options(reading, format_of(input_path, input_format))
    params = classifier_params(registry, protocol["classifier"], options)
    _check_combinations(ctx, registry)
    finder = None if outputs["label_issues_path"] is None else LabelIssueFinder(LABEL_ISSUE_WORDS)
    settings = Settings(train_fractions=fractions, classifier_params=params, **protocol)
    chains = chains_of(plugins, registry, words, compare, settings.sweep)
    read = option_inputs(registry, chains, settings.classifier, params, settings.labels_file)
    if input_path == "-" and test_path == "-":
        raise click.UsageError("the input and --test are both - (standard input, which is read once): name a file")
    rendered = _checked_outputs([("the input", input_path), ("--test", test_path)], read, finder, **outputs)
    if finder is not None and len(chains) > 1:
        raise click.UsageError("--label-issues finds the rows of one chain's folds: give one chain (no --sweep)")
    result = evaluation.evaluate(
        input_path,
        chains,
        settings,
        registry,
        plugins_dir=plugins.folder,
        jobs=jobs,
        progress=Progress(mode, word="step"),
        test=test_path,
        engine=engine,
        scheduler=scheduler,
        workers=workers,
        input_format=input_format,
        reading=reading,
        label_issues=finder,
        check_task=lambda task: _refuse_outputs_of_label_sets(task, outputs),
    )
    for key, missing in (("rows_with_missing_class_left_out", "class"), ("rows_with_missing_labels_left_out", "label")):
        left_out = result.document["settings"].get(key)
        if left_out:
            note = f"{left_out} row(s) with a missing {missing} are left out of the evaluation"
            sys.stderr.write(f"filterkit: note: {note}\n")
    click.echo(result.json() if as_json else result.table(per_task), nl=as_json)  # the results, whatever follows
    contents = [(output, render(result, per_task)) for output, render in rendered]  # one that fails: none written
    with contextlib.ExitStack() as stack:
        staged = [stack.enter_context(staged_output(output)) for output, _ in contents]
        for stage, (_, content) in zip(staged, contents):
            stage.stream.write(content)
            stage.complete()  # a full disk fails here, before any file is published
        for stage in staged:
            stage.publish()


def _refuse_outputs_of_label_sets(task: Task, outputs: dict) -> None:
    """Before any row is read: ``--plot`` of label sets, which have no learning curves, and ``--predictions`` or
    ``--label-issues`` of a label those cannot show (:func:`filterkit.labels.unjoinable_label`: its name holds the
    separator that joins a row's labels there, or is empty), each refused only after the cross-validation before."""
    if task.kind != LABEL_SET:
        return
    if outputs["plot"] is not None:
        raise FilterkitError("--plot draws learning curves, which multi-label data has not: use --report")
    why = unjoinable_label(task.targets)
    for option, path in (
        ("--predictions", outputs["predictions_path"]),
        ("--label-issues", outputs["label_issues_path"]),
    ):
        if why is not None and path is not None:
            raise FilterkitError(f"{option}: {why}: {RENAME_LABEL}")


def classifier_params(registry, classifier: str, classifier_values: dict) -> dict:
    """The options given for ``classifier`` (``--NAME-OPTION``), checked by making one."""
    if classifier not in registry.classifiers:
        raise click.UsageError(f"no classifier '{classifier}' is installed (see 'filterkit plugins')")
    given = {key: value for key, value in classifier_values.items() if value is not None}
    params = {key.split("__", 1)[1]: value for key, value in given.items() if key.startswith(classifier + "__")}
    ignored = [
        "--" + key.replace("__", "-").replace("_", "-")
        for key in sorted(given)
        if not key.startswith(classifier + "__")
    ]
    if ignored:
        raise click.UsageError(f"option(s) for another classifier than '{classifier}': {', '.join(ignored)}")
    try:
        registry.classifier(classifier)(**params)
    except OptionError as error:  # an option's own check names it as a stage's (--fbr-floor): as given here
        raise click.UsageError(error.message.replace("option --", f"option --{classifier}-", 1)) from None
    return params


def chains_of(plugins: PluginLoader, registry, words, compare: bool, sweep: str | None) -> list[ChainSpec]:
    """The chains to evaluate: the words as one chain, or each word as one; each once per ``sweep`` value.  The
    words are the command line's, so a mistake in them is a usage error (exit 2), as in the chain command's."""
    try:
        swept = None if sweep is None else parse_sweep(registry, sweep)
        preset = None if swept is None else {swept.stage: {swept.option: swept.converted[0]}}
        if compare and not words:
            raise FilterkitError("--compare needs at least one quoted chain after the input file")
        _check_chain_words(registry, words, compare)
        texts = [_split_chain(text) for text in words] if compare else [list(words)]
        chains = [parse_chain(plugins, text, preset) for text in texts]
        _refuse_same_chain(chains)
        return chains if swept is None else swept_chains(registry, swept, chains)
    except (ChainHelpError, PluginCrash):  # a help asked for, or a plugin's own failure: no mistake of the words
        raise
    except FilterkitError as error:
        raise click.UsageError(str(error)) from None


def _refuse_same_chain(chains: list[ChainSpec]) -> None:
    """Refuse a chain given twice, compared by its stages and their options' values, not its spelling (``'l2'``
    and ``'l2 --'``, ``'select --top 10'`` and ``'select --top=10'`` are one chain, scored once)."""
    seen: dict[str, str] = {}
    for chain in chains:
        key = repr([(name, sorted(params.items())) for name, params in chain.stages])
        if key in seen:
            same = f"'{chain.text}'" if seen[key] == chain.text else f"'{seen[key]}' and '{chain.text}'"
            raise FilterkitError(f"the same chain is given twice: {same}")
        seen[key] = chain.text


def _check_chain_words(registry, words, compare: bool) -> None:
    """Usage errors for a quoted chain without ``--compare``, and one chain's stages unquoted with it."""
    quoted = [] if compare else [w for w in words if len(w.split()) > 1 and w.split()[0] in registry.stages]
    if quoted:
        command = click.get_current_context().info_name
        raise click.UsageError(
            f"{quoted[0]!r} is a whole chain in one argument: to compare chains give --compare before the input "
            f"(filterkit {command} --compare IN {shlex.quote(quoted[0])} …); for one chain leave out the quotes"
        )
    if compare and len(words) > 1 and all(word and not any(c.isspace() for c in word) for word in words):
        raise click.UsageError(
            f"--compare: every chain is one unquoted word ({', '.join(map(repr, words))}): quote each chain, as in "
            f"--compare IN {shlex.quote(' '.join(words))}, or drop --compare for one chain; to compare "
            f"one-stage chains, put a space inside a chain's quotes ({shlex.quote(words[0] + ' ')})"
        )


def _split_chain(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError as error:
        raise FilterkitError(f"chain {text!r}: {error}") from None


def _checked_outputs(
    inputs: list[tuple[str, str | None]],
    option_files: list[tuple[str, str]],
    finder: LabelIssueFinder | None,
    plot: str | None,
    report_path: str | None,
    predictions_path: str | None,
    label_issues_path: str | None,
) -> list[tuple]:
    """Before any work: ``--plot``, ``--report``, ``--predictions`` and ``--label-issues`` as (output, renderer to
    bytes), each checked writable, apart from the ``inputs`` ((role, path); a path of None or ``-``: none), the
    ``option_files`` and each other, with matplotlib installed for the plots;
    ``--label-issues`` renders the issues ``finder`` found."""
    if plot is not None and not plot.lower().endswith(".png"):
        raise FilterkitError(f"--plot {plot}: the learning curves are a PNG; give a name ending in .png")
    given = [
        (option, path, render)
        for option, path, render in (
            ("--plot", plot, lambda result, _: reports.learning_curves_png(result.document)),
            ("--report", report_path, lambda result, per_task: result.html(per_task).encode()),
            ("--predictions", predictions_path, lambda result, _: result.predictions_csv().encode()),
            ("--label-issues", label_issues_path, lambda result, _: _label_issues_csv(finder)),
        )
        if path is not None
    ]
    outputs = [(checked_output(path), render) for _, path, render in given]
    read = [(role, path) for role, path in inputs if path not in ("-", None)]
    written = [(option, path) for option, path, _ in given]
    check_distinct([*read, *written])
    check_apart(option_files, written)
    for option, _, _ in given:
        if option in ("--plot", "--report"):
            reports.require_matplotlib(option)
    return outputs


def _label_issues_csv(finder: LabelIssueFinder | None) -> bytes:
    """The CSV of ``--label-issues``: the issues ``finder`` found, each with its words."""
    assert finder is not None and finder.found is not None  # made with --label-issues, found by the evaluation
    return finder.found.csv(finder.top).encode()


def _check_combinations(ctx, registry) -> None:
    """Usage errors, before any work, for options that cannot go together."""
    params = ctx.params
    given = {
        param.name: param.opts[0] for param in ctx.command.params if ctx.get_parameter_source(param.name) is COMMANDLINE
    }
    if params["positive"] is not None and params["each_class"]:
        raise click.UsageError(
            f"--positive {params['positive']} and --each-class both choose the tasks: give --positive for one task "
            "or --each-class for every class"
        )
    if params["multiclass"]:
        if not registry.classifier(params["classifier"]).multiclass:
            raise click.UsageError(
                f"classifier '{params['classifier']}' is binary and cannot learn k classes at once (--multiclass "
                "needs a classifier that declares multiclass, e.g. svm); for one task per class use --each-class"
            )
        binary_only = ("positive", "each_class", "min_positives", "per_task", "plot", "report_path")
        why = "it evaluates one task of all classes (its table always shows each class; use --json for everything)"
        _refuse(given, "--multiclass", binary_only, why)
    elif "min_positives" in given and not params["each_class"]:
        raise click.UsageError(
            "--min-positives chooses the classes that --each-class evaluates, and has no use without it (multi-label "
            "data evaluates every label): give --each-class, or leave it out"
        )
    check_engine_options(ctx)
    if params["test_path"] is not None:
        _refuse(
            given, "--test", ("folds", "repeats"), "each chain is fitted on all of IN.arff and scored once on TEST.arff"
        )
    elif params["predictions_path"] is not None:
        raise click.UsageError("--predictions writes the scored rows of a test file: give --test TEST.arff")
    if params["label_issues_path"] is not None:
        why = "it ranks every row once, by the probabilities of the one fit that held it out"
        _refuse(given, "--label-issues", ("test_path", "each_class"), why)
        if params["repeats"] > 1 or params["train_fraction"] != (1.0,):
            raise click.UsageError(f"--label-issues needs --repeats 1 and --train-fraction 1: {why}")


def check_engine_options(ctx) -> None:
    """Usage errors, before any work, for ``--scheduler``, ``--workers`` and ``--jobs`` that do not fit ``--engine``
    (``evaluate``'s and ``train``'s, which place their fits alike)."""
    params = ctx.params
    if (params["scheduler"] is not None or params["workers"] is not None) and params["engine"] != "dask":
        raise click.UsageError("--scheduler and --workers need --engine dask")
    if params["scheduler"] is not None and params["workers"] is not None:
        raise click.UsageError("--workers sizes the local cluster, which --scheduler replaces: give one")
    if params["engine"] == "dask" and ctx.get_parameter_source("jobs") is COMMANDLINE:
        raise click.UsageError("--jobs and --engine dask both say where the fits run: give one")


def _refuse(given: dict[str, str], option: str, names: tuple[str, ...], why: str) -> None:
    """A usage error naming the options of ``names`` that are ``given`` (name: flag) with ``option``."""
    flags = [given[name] for name in names if name in given]
    if flags:
        raise click.UsageError(f"{option} cannot be combined with {', '.join(flags)}: {why}")
