"""The stages of a chain as click subcommands, looked up in the run's plugin registry."""

from __future__ import annotations

import click
from click.exceptions import NoSuchCommand

from filterkit.commands.context import registry_of
from filterkit.commands.options import click_option
from filterkit.plugins import Registry


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
        return stage_command(registry, name) if name in registry.stages else None

    def resolve_command(self, ctx: click.Context, args: list[str]):
        """As :meth:`click.Group.resolve_command`; an unknown stage is named with the
        registered stages as the suggestions."""
        name = args[0]
        if not name.startswith("-") and not ctx.resilient_parsing and self.get_command(ctx, name) is None:
            raise NoSuchCommand(name, possibilities=self.list_commands(ctx), ctx=ctx)
        return super().resolve_command(ctx, args)


def stage_command(registry: Registry, name: str) -> click.Command:
    """The click subcommand for one registered stage; it returns the stage."""
    registered = registry.stages[name]
    stage_class = registered.value

    def make(**params):
        return registry.make_stage(name, params)

    summary = stage_class.one_line_summary()
    return click.Command(
        name,
        params=[click_option(o) for o in stage_class.options],
        callback=make,
        help=f"{summary}\n\n(plugin: {registered.plugin}, {registered.distribution})",
        short_help=summary,
    )
