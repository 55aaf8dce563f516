"""The stages of a chain as click subcommands, looked up in the run's plugin registry, and
the error that says where a misplaced option belongs."""

from __future__ import annotations

import click
from click.core import ParameterSource
from click.exceptions import NoSuchCommand, NoSuchOption

from filterkit.commands.context import registry_of
from filterkit.commands.options import click_option
from filterkit.errors import OptionError
from filterkit.plugins import Registry

#: The root context's ``meta`` key of option values, per stage name, that a stage takes when
#: its words leave the option out (``evaluate --sweep``'s swept option).
PRESET_OPTIONS = "filterkit.preset_options"


class StageChain(click.Group):
    """A chained group (as click's ``imagepipe`` example) whose subcommands are the stages
    registered in the run's plugins, each returning a new stage; the result callback
    gets them in order."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, chain=True, invoke_without_command=True, **kwargs)

    def list_commands(self, ctx: click.Context) -> list[str]:
        """The registered stage names, sorted."""
        return sorted(registry_of(ctx).stages)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        """The subcommand of the stage ``name``, None if no plugin registered one."""
        registry = registry_of(ctx)
        return stage_command(registry, name, self.command_class or StageCommand) if name in registry.stages else None

    def resolve_command(self, ctx: click.Context, args: list[str]):
        """As :meth:`click.Group.resolve_command`; an unknown stage is named with the
        registered stages as the suggestions."""
        name = args[0]
        if not name.startswith("-") and not ctx.resilient_parsing and self.get_command(ctx, name) is None:
            raise NoSuchCommand(name, possibilities=self.list_commands(ctx), ctx=ctx)
        return super().resolve_command(ctx, args)


class StageCommand(click.Command):
    """The subcommand of one stage: an option it does not have is reported with the
    stage or the chain it belongs to (:func:`misplaced_option`)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Parse as any command; an unknown option says where it belongs."""
        try:
            return super().parse_args(ctx, args)
        except NoSuchOption as error:
            raise misplaced_option(ctx, error.option_name) from None


def stage_command(registry: Registry, name: str, cls: type[click.Command]) -> click.Command:
    """The click subcommand (of class ``cls``) for one registered stage; it returns the stage."""
    registered = registry.stages[name]
    stage_class = registered.value

    def make(**params):
        context = click.get_current_context()
        for option, value in context.find_root().meta.get(PRESET_OPTIONS, {}).get(name, {}).items():
            if context.get_parameter_source(option) is ParameterSource.DEFAULT:
                params[option] = value
        try:
            return registry.make_stage(name, params)
        except OptionError as error:
            raise click.UsageError(error.message) from None

    summary = stage_class.one_line_summary()
    return cls(
        name,
        params=[click_option(o) for o in stage_class.options],
        callback=make,
        help=f"{summary}\n\n(plugin: {registered.plugin}, {registered.distribution})",
        short_help=summary,
    )


def stages_with_option(registry: Registry, option: str) -> list[str]:
    """The names of the stages that declare ``option`` (``--top``, or ``--no-presence``
    for a flag pair), sorted."""
    owners = []
    for name, registered in registry.stages.items():
        for declared in registered.value.options:
            flags = {declared.flag, f"--no-{declared.flag[2:]}"} if declared.kind is bool else {declared.flag}
            if option in flags:
                owners.append(name)
                break
    return sorted(owners)


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
    chain_context = ctx.parent if in_stage else ctx
    owners = [name for name in stages_with_option(registry_of(ctx), option) if name != command.name]
    if in_stage and chain_context is not None and option in _option_names(chain_context):
        return NoSuchOption(
            option, f"{option} is an option of the chain: put it before the input file or the first stage", ctx=ctx
        )
    if owners:
        not_here = f", not of {command.name}" if in_stage else ""
        if len(owners) == 1:
            where = f"put it after '{owners[0]}'"
        else:
            where = "put it after the name of the stage it is for"
        return NoSuchOption(option, f"{option} is an option of {', '.join(owners)}{not_here}: {where}", ctx=ctx)
    own = _option_names(ctx)
    bare = {name.lstrip("-"): name for name in own if name.startswith("--")}
    from difflib import get_close_matches  # only a mistyped option needs it

    close = get_close_matches(option.lstrip("-"), list(bare), n=3)
    return NoSuchOption(option, possibilities=[bare[name] for name in close], ctx=ctx)


def _option_names(ctx: click.Context) -> set[str]:
    """Every spelling of every option of the command of ``ctx`` (``-o``, ``--output``,
    ``--no-presence``, …), its help option included."""
    names: set[str] = set()
    for param in ctx.command.get_params(ctx):
        if isinstance(param, click.Option):
            names.update(param.opts)
            names.update(param.secondary_opts)
    return names
