"""A click group with a default command, for a command line whose first word is either
a command word or already the default command's (``filterkit in.arff l2``)."""

from __future__ import annotations

import click
from click.shell_completion import CompletionItem


class DefaultGroup(click.Group):
    """A group that runs ``default`` when no command word is given, as click-default-group's
    ``DefaultGroup`` (sqlite-utils uses it) does.

    The command word is the first argument that names one of the group's commands and
    that neither that command nor ``default`` would read as an option's value, so
    ``-o apply --dense apply m.json in.arff`` is the ``apply`` command writing to the
    file ``apply``, and ``--save-model apply in.arff l2`` is a chain saving its model
    to ``apply``.  Options before the command word go to the command, except the
    group's own (``--plugins-dir``); any option the group does not know is left for
    the command (``ignore_unknown_options``), ``--help`` included: without a command
    word it is the default's.
    """

    def __init__(self, name: str | None = None, *, default: click.Command, **kwargs):
        context_settings = {"ignore_unknown_options": True, **kwargs.pop("context_settings", {})}
        super().__init__(
            name, no_args_is_help=False, add_help_option=False, context_settings=context_settings, **kwargs
        )
        self.default = default

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Parse the group's own options; the rest stays in ``ctx.args`` for :meth:`resolve_command`."""
        return click.Command.parse_args(self, ctx, args)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command, list[str]]:
        """The command the arguments name and its arguments (the command word taken out)."""
        for position, word in enumerate(args):
            command = self.get_command(ctx, word)
            before = args[:position]
            if (
                command is not None
                and _reads_as_options(command, ctx, before)
                and _reads_as_options(self.default, ctx, before)
            ):
                return word, command, before + args[position + 1 :]
        return None, self.default, args

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[CompletionItem]:
        """The command words and the group's options that start with ``incomplete``, and
        what the default command would complete there: its options, or its first
        argument (files, for the chain)."""
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
