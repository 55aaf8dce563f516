"""The chain, ``filterkit [OPTIONS] IN.arff STAGE [--opt …] STAGE …``: the command that
runs when the first word is not a command word."""

from __future__ import annotations

import contextlib
import copy
import functools
import os
from types import SimpleNamespace
from typing import Sequence, cast

import click
from click.core import ParameterSource
from click.exceptions import NoSuchOption

from filterkit.commands.context import plugin_loader, registry_of
from filterkit.commands.default_group import DefaultCommandContext, DefaultGroup
from filterkit.commands.files import check_stdout_open, checked_outputs, output_format_of, same_file
from filterkit.commands.options import (
    class_option,
    engine_option,
    number_format,
    output_option,
    plugins_dir_option,
    positive_option,
    reading_and_writing_options,
    scheduler_option,
)
from filterkit.commands.stages import StageChain, StageCommand, misplaced_option
from filterkit.formats import ARFF, FormatOptions, format_of
from filterkit.partitions import checked_output_folder, partition_files
from filterkit.plugins import Registry
from filterkit.progress import Progress, progress_mode
from filterkit.runner import Chain, guarded
from filterkit.running import LocalEngine, OutputForm, run

CHAIN_HELP = """Read IN.arff (or - for stdin), run the STAGES in order, write ARFF.

svmlight/LibSVM (.svm, .svmlight, .libsvm) and CSV (.csv) are read and written
too, chosen by the file's name (a .gz after it: gzip) or by --from/--to.

\b
  filterkit in.arff shape bns l2 > out.arff
  cat in.arff | filterkit - ig --presence select --top 1000 l2
  filterkit --save-model m.json train.arff bns l2 > train_out.arff
  filterkit apply m.json test.arff > test_out.arff

With no stage the input is rewritten unchanged. The options below come before
the first stage, before or after IN.arff; a stage's options follow its name
('filterkit help STAGE' lists them). A file named like a command is read as
./NAME.

With --engine dask the chain runs over partitions on a Dask cluster: IN.arff
is split into byte ranges, or is a folder or a quoted glob ('parts/*.arff')
of files sharing one header, each file a partition (see docs/dask.md).
"""


#: The parameters of the chain's options that may also end the command line, after the last stage:
#: where the output goes and how its numbers are written (``filterkit in.svm shape bns l2 -o out.svm``).
OUTPUT_OPTIONS = ("output", "output_format", "digits", "float32")


def given_options(ctx: click.Context, values: dict) -> dict:
    """The ones of ``values`` (by parameter name) typed on the command line of ``ctx``."""
    return {
        name: value for name, value in values.items() if ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE
    }


class ChainStage(StageCommand):
    """A stage of the chain; when it is the last, the chain's output options (:data:`OUTPUT_OPTIONS`)
    may follow its own: :meth:`ChainGroup.get_command` adds them, hidden."""

    output_options: Sequence[click.Option] = ()

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Parse the stage's options and the output options, which go to the chain; those before
        another stage are a usage error."""
        rest = super().parse_args(ctx, args)
        output = given_options(ctx, {option.name: ctx.params.pop(str(option.name)) for option in self.output_options})
        if output and rest and not ctx.resilient_parsing:
            raise misplaced_option(ctx, next(o.opts[0] for o in self.output_options if o.name in output))
        cast(click.Context, ctx.parent).params.update(output)
        return rest


class ChainGroup(StageChain):
    """The chain: the default command of ``filterkit``, typed without a command word.

    Click parses each step once: the chain's options before IN.arff, then
    (:meth:`resolve_command`) its options after IN.arff (:class:`ChainOptions`) and each
    stage with its options, the last stage followed by the output options
    (:class:`ChainStage`).  Its help lists the stages and the other commands of ``filterkit``.
    """

    context_class = DefaultCommandContext
    command_class = ChainStage

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Parse the options before IN.arff; one that is not the chain's says whose it is (:func:`misplaced_option`)."""
        try:
            return super().parse_args(ctx, args)
        except NoSuchOption as error:
            raise misplaced_option(ctx, error.option_name) from None

    def resolve_command(self, ctx: click.Context, args: list[str]):
        """The next step: the chain's options when options follow IN.arff, or the stage
        IN.arff names when they ask for help (``filterkit select --top 5 --help``); else a stage."""
        if not args[0].startswith("-") or args[0] == "-":
            return super().resolve_command(ctx, args)
        named = str(ctx.params.get("input_path"))
        if named in registry_of(ctx).stages and not ctx.resilient_parsing and set(args) & set(ctx.help_option_names):
            return named, self.get_command(ctx, named), args
        return None, ChainOptions(self), args

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        """The stage ``name`` with the output options, hidden, after its own."""
        command = super().get_command(ctx, name)
        if isinstance(command, ChainStage):
            own = {flag for param in command.params for flag in [*param.opts, *param.secondary_opts]}
            command.output_options = [option for option in self.output_options if own.isdisjoint(option.opts)]
            command.params += command.output_options
        return command

    @functools.cached_property
    def output_options(self) -> list[click.Option]:
        """Hidden copies of the chain's options named in :data:`OUTPUT_OPTIONS`."""
        copies = [copy.copy(p) for p in self.params if isinstance(p, click.Option) and p.name in OUTPUT_OPTIONS]
        for option in copies:
            option.hidden = True
        return copies

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The stages, then the commands of the group this chain is the default of."""
        sections: list[tuple[str, click.Group, click.Context]] = [("Stages", self, ctx)]
        parent = ctx.parent
        if parent is not None and isinstance(parent.command, DefaultGroup):
            sections.append(("Commands", parent.command, parent))
        for title, group, group_context in sections:
            names = group.list_commands(group_context)
            if not names:
                continue
            limit = formatter.width - 6 - max(len(name) for name in names)
            commands = [cast(click.Command, group.get_command(group_context, name)) for name in names]  # listed
            rows = [(name, command.get_short_help_str(limit)) for name, command in zip(names, commands)]
            with formatter.section(title):
                formatter.write_dl(rows)


class ChainOptions(click.Command):
    """The chain's options that follow IN.arff, parsed as a step of the chain: they set
    the chain's values (a later one wins), and speak with the chain's help and usage."""

    context_class = DefaultCommandContext

    def __init__(self, chain: ChainGroup):
        super().__init__(None, params=[param for param in chain.params if isinstance(param, click.Option)])
        self.chain = chain

    def get_help(self, ctx: click.Context) -> str:
        """The chain's help."""
        return self.chain.get_help(cast(click.Context, ctx.parent))

    def get_usage(self, ctx: click.Context) -> str:
        """The chain's usage line."""
        return self.chain.get_usage(cast(click.Context, ctx.parent))

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Parse the options up to the first stage and hand what they set to the chain."""
        try:
            rest = super().parse_args(ctx, args)
        except NoSuchOption as error:
            raise misplaced_option(cast(click.Context, ctx.parent), error.option_name) from None
        cast(click.Context, ctx.parent).params.update(given_options(ctx, ctx.params))
        return rest


@click.group(cls=ChainGroup, help=CHAIN_HELP, subcommand_metavar="STAGE [OPTIONS]... [STAGE [OPTIONS]...]...")
@click.argument("input_path", metavar="IN.arff", type=click.Path(allow_dash=True))
@output_option
@class_option
@positive_option("The positive class label for two-class stages (default: the minority class).")
@click.option(
    "--save-model",
    "model_path",
    type=click.Path(dir_okay=False),
    help="Save the fitted chain (one JSON file, arrays included).",
)
@reading_and_writing_options
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="After fitting, say on stderr what each stage chose (the stages that tell: auto's treatment per feature).",
)
@plugins_dir_option
@engine_option("Run in this process, or over partitions on a Dask cluster")
@scheduler_option
@click.option(
    "--partitions",
    type=click.IntRange(1),
    help=(
        "With --engine dask: cut one input file into N byte ranges at most "
        "(default: 1 per worker thread of the local cluster, 2 of a scheduler's)."
    ),
)
@click.option(
    "--output-dir",
    type=click.Path(file_okay=False),
    help="With --engine dask: write one output per partition into DIR.",
)
def chain(**_):
    """The chain; the work happens in the result callback, :func:`run_chain`."""


@chain.result_callback()
@click.pass_context
def run_chain(ctx: click.Context, steps: list, **params) -> None:
    """Fit the stages on IN.arff and write their output, here or on Dask (:func:`filterkit.running.run`)."""
    options = SimpleNamespace(**params)
    numbers = number_format(options.digits, options.float32)
    loader = plugin_loader(ctx)
    stages = [stage for stage in steps if stage is not None]  # the steps of ChainOptions return None
    chain = Chain(stages, class_spec=options.class_spec, positive=options.positive)
    output, output_dir, model_path = options.output, options.output_dir, options.model_path
    dask = options.engine == "dask"
    if not dask and (options.scheduler or options.partitions or output_dir):
        raise click.UsageError("--scheduler, --partitions and --output-dir need --engine dask")
    if dask:
        check_dask_run(chain, options)
        output_dir = None if output_dir is None else checked_output_folder(output_dir)
    check_stdout_open(output or output_dir)
    output_file = checked_outputs(
        partition_files(options.input_path) if dask else [options.input_path], output, model_path
    )
    formats = FormatOptions(options.zero_based)
    form = OutputForm(output_format_of(output, options.output_format), options.sparse, numbers, formats)
    save = (lambda source: save_model(model_path, chain, loader.registry(), source)) if model_path else None
    progress = Progress(progress_mode(options.quiet, options.progress))
    # a stage that learns after one that learns may get its statistics from that one's pass
    may_skip = any(first.learns and second.learns for first, second in zip(stages, stages[1:]))
    progress.expect(chain.planned_passes() + 1, certain=not may_skip)

    def on_fitted(chain: Chain) -> None:
        progress.settle()
        if options.verbose:
            report_fitted(chain)

    with progress.activated(), contextlib.ExitStack() as stack:
        if dask:
            from filterkit.distributed import DaskEngine

            connecting = DaskEngine.connect(
                options.scheduler, loader.folder, options.chunk_rows, progress, options.partitions
            )
            engine = stack.enter_context(connecting)
            engine.check_workers(chain)
        else:
            engine = LocalEngine(options.chunk_rows, options.input_format, formats, progress)
        run(chain, options.input_path, engine, output_file, form, "chain", save, on_fitted, output_dir)
    progress.finish()


def check_dask_run(chain: Chain, options: SimpleNamespace) -> None:
    """Refuse, before any cluster starts, what ``--engine dask`` cannot run as a local run would."""
    from filterkit.partitions import check_runnable

    if options.output and options.output_dir:
        raise click.UsageError("give -o FILE or --output-dir DIR, not both")
    if options.scheduler and not (options.output or options.output_dir):
        raise click.UsageError(
            "with --scheduler, give -o FILE or --output-dir DIR in a folder the workers share (they write the rows)"
        )
    if ARFF != format_of(options.input_path, options.input_format) or ARFF != output_format_of(
        options.output, options.output_format
    ):
        raise click.UsageError(
            "--engine dask reads and writes ARFF only: convert the data first (filterkit in.svm -o in.arff)"
        )
    if (
        options.output_dir
        and options.model_path
        and same_file(os.path.dirname(os.path.abspath(options.model_path)), options.output_dir)
    ):
        raise click.UsageError(
            f"--save-model {options.model_path} is inside --output-dir {options.output_dir}, whose files are "
            "the partitions' outputs: save the model elsewhere"
        )
    check_runnable(chain.stages, options.input_path)


def save_model(path: str, chain: Chain, registry: Registry, source) -> None:
    """Save ``chain``'s model to ``path`` (:func:`filterkit.model.save_model`, imported by the
    runs that save a model), with the svmlight index base ``source`` was read with."""
    from filterkit.formats.svmlight import first_index_of
    from filterkit.model import save_model as save

    save(path, chain, registry, first_index_of(source))


def report_fitted(chain: Chain) -> None:
    """``-v``: each fitted stage's own account of what it chose (its optional ``fit_summary()``
    lines), on stderr as ``filterkit: STAGE: LINE``."""
    for stage in chain.stages:
        summary = getattr(stage, "fit_summary", None)
        if summary is not None:
            for line in guarded(stage, "fit_summary", summary):
                click.echo(f"filterkit: {stage.name}: {line}", err=True)
