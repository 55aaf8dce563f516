"""The stages of a chain as click subcommands, looked up in the run's plugin registry; the
``filterkit`` group, which is the chain unless a command word names a command; and the error
that says where a misplaced option belongs."""

from __future__ import annotations

import copy
import functools
import importlib
import shlex
from typing import TYPE_CHECKING, Mapping, Sequence, cast

import click
from click.core import ParameterSource
from click.exceptions import NoSuchCommand, NoSuchOption

from filterkit.commands.context import PluginLoader, registry_of
from filterkit.commands.options import OnceOptions, click_option
from filterkit.errors import OptionError
from filterkit.plugins import Registry

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem


class StageChain(OnceOptions, click.Group):
    """A chained group (as click's ``imagepipe`` example) whose subcommands are the stages
    registered in the run's plugins, each returning a new stage; the result callback
    gets them in order."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, chain=True, invoke_without_command=True, **kwargs)

    def list_commands(self, ctx: click.Context) -> list[str]:
        """The registered stage names, sorted."""
        return sorted(registry_of(ctx).stages)

    def get_command(self, ctx: click.Context, name: str) -> StageCommand | None:
        """The subcommand of the stage ``name``, None if no plugin registered one."""
        registry = registry_of(ctx)
        return stage_command(registry, name) if name in registry.stages else None

    def resolve_command(self, ctx: click.Context, args: list[str]):
        """As :meth:`click.Group.resolve_command`; an unknown stage is named with the
        registered stages as the suggestions."""
        name = args[0]
        if not name.startswith("-") and not ctx.resilient_parsing and self.get_command(ctx, name) is None:
            raise NoSuchCommand(name, possibilities=self.list_commands(ctx), ctx=ctx)
        return super().resolve_command(ctx, args)


def show_chain_help(plugins: PluginLoader, words: list[str]) -> None:
    """Print the help that a chain's words ask for (``shape --help``: the stage's; ``--help``: the stages') as
    the group of stages prints it, usage line ``filterkit evaluate: chain 'WORDS' …``, and exit 0 (click's Exit);
    returns if the words ask for none."""
    group = StageChain("chain", result_callback=lambda stages: stages)
    text = shlex.join(words) if words else "(none)"
    with group.make_context(f"filterkit evaluate: chain '{text}'", list(words), obj=plugins) as context:
        group.invoke(context)


#: The parameters of the chain's options that may also end the command line, after the last stage:
#: where the output goes and how its numbers are written (``filterkit in.svm shape bns l2 -o out.svm``).
OUTPUT_OPTIONS = ("output", "output_format", "digits", "float32")

#: The options of ``filterkit`` that stay its own before a command word.
ROOT_OPTIONS = ("plugins_dir", "version")


def given_options(ctx: click.Context, values: dict) -> dict:
    """The ones of ``values`` (by parameter name) typed on the command line of ``ctx``."""
    return {
        name: value for name, value in values.items() if ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE
    }


class StageCommand(OnceOptions, click.Command):
    """The subcommand of one stage: an option it does not have is reported with the stage or
    the chain it belongs to (:func:`misplaced_option`).  When it is the chain's last stage, the
    chain's output options (:data:`OUTPUT_OPTIONS`) may follow its own:
    :meth:`FilterkitGroup.get_command` adds them, hidden."""

    output_options: Sequence[click.Option] = ()

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Parse the stage's options and the output options, which go to the chain; those before
        another stage are a usage error, as is an option the stage does not have."""
        try:
            rest = super().parse_args(ctx, args)
        except NoSuchOption as error:
            raise misplaced_option(ctx, error.option_name) from None
        output = given_options(ctx, {option.name: ctx.params.pop(str(option.name)) for option in self.output_options})
        if output and rest and not ctx.resilient_parsing:
            raise misplaced_option(ctx, next(o.opts[0] for o in self.output_options if o.name in output))
        chain = cast(click.Context, ctx.parent)
        twice = next((o for o in self.output_options if o.name in given_options(chain, dict.fromkeys(output))), None)
        if twice is not None:
            raise click.UsageError(f"option {'/'.join(twice.opts)} is given twice (before and after the stages)", ctx)
        chain.params.update(output)
        return rest


class FilterkitGroup(StageChain):
    """``filterkit``: the chain, ``filterkit [OPTIONS] IN.arff STAGE [--opt …] STAGE …``, or
    the command a command word names.

    The command word is the first word that names a command and that neither that command
    nor the chain reads as an option's value (``-o apply --dense apply m.json in.arff``
    writes to the file ``apply``); the options before it go to the command, except
    :data:`ROOT_OPTIONS`.  ``commands`` maps the command words to where their commands are
    defined (``"package.module:name"``): a module is imported when its word is used or the
    help lists it.  Otherwise click parses each step of the chain once (:meth:`resolve_command`).
    """

    def __init__(self, *args, commands: Mapping[str, str], **kwargs):
        super().__init__(*args, **kwargs)
        self.command_places = dict(commands)

    def named_command(self, word: str) -> click.Command | None:
        """The command the command word ``word`` names (importing its module), or None."""
        place = self.command_places.get(word)
        if place is None:
            return None
        module_name, _, attribute = place.partition(":")
        return getattr(importlib.import_module(module_name), attribute)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Parse the chain's options before IN.arff (one that is not the chain's says whose it is,
        :func:`misplaced_option`); or, before a command word, only :data:`ROOT_OPTIONS`."""
        for position, word in enumerate(args):
            command = self.named_command(word)
            if command is None:
                continue
            own = [p for p in self.params if p.name in ROOT_OPTIONS]
            before = args[:position]
            if before and not (
                _reads_as_options(self.get_params(ctx), before)
                and _reads_as_options([*own, *command.get_params(ctx)], before)
            ):
                continue
            with click.Command(None, params=own, add_help_option=False).make_context(
                None,
                before,
                ctx,
                ignore_unknown_options=True,
                allow_extra_args=True,
                resilient_parsing=ctx.resilient_parsing,
            ) as own_ctx:
                ctx.meta[COMMAND_WORD] = command
                ctx._protected_args, ctx.args = [word], [*own_ctx.args, *args[position + 1 :]]
                return ctx.args
        try:
            return super().parse_args(ctx, args)
        except NoSuchOption as error:
            raise misplaced_option(ctx, error.option_name) from None

    def invoke(self, ctx: click.Context):
        """Run the command a command word named, or the chain."""
        command = ctx.meta.get(COMMAND_WORD)
        if command is None:
            return super().invoke(ctx)
        word, *args = [*ctx._protected_args, *ctx.args]
        ctx.invoked_subcommand = word
        with command.make_context(word, args, parent=ctx) as command_context:
            return command.invoke(command_context)

    def resolve_command(self, ctx: click.Context, args: list[str]):
        """The next step: the command of a command word; the chain's options when options
        follow IN.arff, or the stage IN.arff names when they ask for help
        (``filterkit select --top 5 --help``); else a stage."""
        if COMMAND_WORD in ctx.meta:
            return args[0], ctx.meta[COMMAND_WORD], args[1:]
        if not args[0].startswith("-") or args[0] == "-":
            return super().resolve_command(ctx, args)
        named = str(ctx.params.get("input_path"))
        if named in registry_of(ctx).stages and not ctx.resilient_parsing and set(args) & set(ctx.help_option_names):
            return named, self.get_command(ctx, named), args
        return None, ChainOptions(self), args

    def list_commands(self, ctx: click.Context) -> list[str]:
        """The stages; none after a command word (completing a command's words offers no stage)."""
        return [] if COMMAND_WORD in ctx.meta else super().list_commands(ctx)

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        """The chain's parameters; to a command's context, its options only (so its path is ``filterkit info``)."""
        params = super().get_params(ctx)
        if ctx.command is self or isinstance(ctx.command, StageCommand):
            return params
        return [param for param in params if isinstance(param, click.Option)]

    def get_command(self, ctx: click.Context, name: str) -> StageCommand | None:
        """The stage ``name`` with the output options, hidden, after its own."""
        command = super().get_command(ctx, name)
        if command is not None:
            own = _option_names(command.params)
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
        """The stages, then the commands."""
        for title, names, lookup in (
            ("Stages", super().list_commands(ctx), functools.partial(self.get_command, ctx)),
            ("Commands", sorted(self.command_places), self.named_command),
        ):
            if not names:
                continue
            limit = formatter.width - 6 - max(len(name) for name in names)
            rows = [(name, cast(click.Command, lookup(name)).get_short_help_str(limit)) for name in names]
            with formatter.section(title):
                formatter.write_dl(rows)


#: The ``meta`` key of ``filterkit``'s context that holds the command a command word named.
COMMAND_WORD = "filterkit.command"


def complete_first_word(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Completing IN.arff: the command words and the files that start with ``incomplete``."""
    from click.shell_completion import CompletionItem  # only shell completion needs it

    places = cast(FilterkitGroup, ctx.command).command_places
    words = [CompletionItem(word) for word in sorted(places) if word.startswith(incomplete)]
    return words + param.type.shell_complete(ctx, param, incomplete)


class ChainOptionsContext(click.Context):
    """The context of :class:`ChainOptions`: it adds nothing to the command path (``Usage: filterkit …``)."""

    @property
    def command_path(self) -> str:
        """The chain's command path."""
        return cast(click.Context, self.parent).command_path


class ChainOptions(OnceOptions, click.Command):
    """The chain's options that follow IN.arff, parsed as a step of the chain: they set
    the chain's values (a later one wins), and speak with the chain's help and usage."""

    context_class = ChainOptionsContext

    def __init__(self, chain: FilterkitGroup):
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


def _reads_as_options(params: list[click.Parameter], words: list[str]) -> bool:
    """Whether the options among ``params`` read every one of ``words`` as an option or an
    option's value (an option they do not know counts as a flag)."""
    options = click.Command(None, params=[p for p in params if isinstance(p, click.Option)])
    parser = options.make_parser(click.Context(options, ignore_unknown_options=True))
    try:
        _, rest, _ = parser.parse_args(list(words))
    except click.UsageError:
        return False
    return all(word.startswith("-") and word != "-" for word in rest)


def stage_command(registry: Registry, name: str) -> StageCommand:
    """The click subcommand of one registered stage; it returns the stage."""
    registered = registry.stages[name]
    stage_class = registered.value

    def make(**params):
        try:
            return registry.make_stage(name, params)
        except OptionError as error:
            raise click.UsageError(error.message) from None

    summary = stage_class.one_line_summary()
    return StageCommand(
        name,
        params=[click_option(o) for o in stage_class.options],
        callback=make,
        help=f"{summary}\n\n(plugin: {registered.plugin}, {registered.distribution})",
        short_help=summary,
    )


def misplaced_option(ctx: click.Context, option: str) -> NoSuchOption:
    """The usage error for ``option``, which the command of ``ctx`` (a stage, or the chain
    before its first stage) does not have.

    An option of a stage placed elsewhere says so (``--top is an option of select: put it
    after 'select'``), as does an option of the chain placed after a stage.  Any other
    option is unknown; the suggestions are the command's own options that look like it,
    compared without their dashes (with them, ``--top`` looked like ``--output``).
    """
    command = ctx.command
    in_stage = isinstance(command, StageCommand)
    chain_context = ctx.parent if in_stage else None  # a stage's parent is the chain's context
    owners = sorted(
        name
        for name, registered in registry_of(ctx).stages.items()
        if name != command.name and option in _option_names([click_option(o) for o in registered.value.options])
    )
    if chain_context is not None and option in _option_names(chain_context.command.get_params(chain_context)):
        return NoSuchOption(
            option, f"{option} is an option of the chain: put it before the input file or the first stage", ctx=ctx
        )
    if owners:
        not_here = f", not of {command.name}" if in_stage else ""
        where = f"put it after '{owners[0]}'" if len(owners) == 1 else "put it after the name of the stage it is for"
        return NoSuchOption(option, f"{option} is an option of {', '.join(owners)}{not_here}: {where}", ctx=ctx)
    own = _option_names(command.get_params(ctx))
    bare = {name.lstrip("-"): name for name in own if name.startswith("--")}
    from difflib import get_close_matches  # only a mistyped option needs it

    close = get_close_matches(option.lstrip("-"), list(bare), n=3)
    return NoSuchOption(option, possibilities=[bare[name] for name in close], ctx=ctx)


def _option_names(params: list[click.Parameter]) -> set[str]:
    """Every spelling of every option among ``params`` (``-o``, ``--output``, ``--no-presence``, …)."""
    return {
        name for param in params if isinstance(param, click.Option) for name in [*param.opts, *param.secondary_opts]
    }
