"""A click group with a default command, for a command line whose first word is either
a command word or already the default command's (``filterkit in.arff l2``), whose
commands are imported only when named."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Mapping

import click

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem


class DefaultGroup(click.Group):
    """A group that runs ``default`` when no command word is given, as click-default-group's
    ``DefaultGroup`` (sqlite-utils uses it) does.

    The command word is the first argument that names a command and that neither that
    command nor ``default`` reads as an option's value (``-o apply --dense apply m.json
    in.arff`` writes to the file ``apply``); the options before it go to the command,
    except the group's own.  ``lazy_commands`` maps command words to where their
    commands are defined (``"package.module:name"``), as ``default`` may be: a module is
    imported when its word is used or the help lists it.
    """

    def __init__(
        self,
        name: str | None = None,
        *,
        default: click.Command | str,
        lazy_commands: Mapping[str, str] | None = None,
        **kwargs,
    ):
        context_settings = {"ignore_unknown_options": True, **kwargs.pop("context_settings", {})}
        super().__init__(
            name, no_args_is_help=False, add_help_option=False, context_settings=context_settings, **kwargs
        )
        self._default = default
        self.lazy_commands = dict(lazy_commands or {})

    @property
    def default(self) -> click.Command:
        """The command that runs without a command word, imported on first use."""
        if isinstance(self._default, str):
            self._default = imported_command(self._default)
        return self._default

    def list_commands(self, ctx: click.Context) -> list[str]:
        """The command words, the lazy ones included, in name order."""
        return sorted({*self.commands, *self.lazy_commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command ``cmd_name`` names (importing it if it is a lazy one), or None."""
        if cmd_name not in self.commands and cmd_name in self.lazy_commands:
            self.add_command(imported_command(self.lazy_commands[cmd_name]), cmd_name)
        return super().get_command(ctx, cmd_name)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Parse the group's own options; the rest stays in ``ctx.args`` for :meth:`resolve_command`."""
        return click.Command.parse_args(self, ctx, args)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command, list[str]]:
        """The command the arguments name and its arguments (the command word taken out)."""
        for position, word in enumerate(args):
            command = self.get_command(ctx, word)
            before = args[:position]
            # A command word in first place needs no check, so the default is not imported for it.
            if command is not None and (
                not before or (_reads_as_options(command, ctx, before) and _reads_as_options(self.default, ctx, before))
            ):
                return word, command, before + args[position + 1 :]
        return None, self.default, args

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[CompletionItem]:
        """The command words and the group's options that start with ``incomplete``, and
        what the default command would complete there: its options, or its first
        argument (files, for the chain)."""
        from click.shell_completion import CompletionItem  # only shell completion needs it

        completions = super().shell_complete(ctx, incomplete)
        params = self.default.get_params(ctx)
        if incomplete.startswith("-"):
            offered = {item.value for item in completions}
            completions += [
                CompletionItem(name, help=param.help)
                for param in params
                if isinstance(param, click.Option) and not param.hidden
                for name in [*param.opts, *param.secondary_opts]
                if name.startswith(incomplete) and name not in offered
            ]
        else:
            arguments = [param for param in params if isinstance(param, click.Argument)]
            completions += arguments[0].shell_complete(ctx, incomplete) if arguments else []
        return completions

    def invoke(self, ctx: click.Context):
        """Run the command the arguments name, or the default."""
        name, command, args = self.resolve_command(ctx, ctx.args)
        ctx.invoked_subcommand = name
        with command.make_context(name, args, parent=ctx) as command_context:
            return command.invoke(command_context)


class DefaultCommandContext(click.Context):
    """The context class of a :class:`DefaultGroup`'s default command: typed without a
    command word, it adds none to the command path (``Usage: filterkit IN.arff explode``)."""

    @property
    def command_path(self) -> str:
        """The parent's command path."""
        return self.parent.command_path if self.parent is not None else super().command_path


def imported_command(place: str) -> click.Command:
    """The command at ``place`` (``"package.module:name"``), importing its module."""
    module_name, _, attribute = place.partition(":")
    command = getattr(importlib.import_module(module_name), attribute)
    if not isinstance(command, click.Command):
        raise TypeError(f"{place} is not a click command")
    return command


def _reads_as_options(command: click.Command, ctx: click.Context, words: list[str]) -> bool:
    """Whether ``command`` reads every one of ``words`` as one of its options or an
    option's value (an option it does not know counts as a flag)."""
    if not words:
        return True
    options = click.Command(None, params=[p for p in command.get_params(ctx) if isinstance(p, click.Option)])
    parser = options.make_parser(click.Context(options, ignore_unknown_options=True))
    try:
        _, rest, _ = parser.parse_args(list(words))
    except click.UsageError:
        return False
    return all(word.startswith("-") and word != "-" for word in rest)
