"""``filterkit help [TOPIC]`` and ``filterkit --version``: the help of the chain, a stage or
a command, and the versions a bug report needs."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import cast

import click

from filterkit.commands.context import plugin_loader, registry_of
from filterkit.commands.stages import FilterkitGroup
from filterkit.plugins import GROUP, disabled_plugins, entry_points
from filterkit.version import __version__

#: The libraries whose versions change filterkit's results or speed, by distribution name.
LIBRARIES = ("numpy", "scipy", "scikit-learn")


def topics(ctx: click.Context, param: click.Parameter, start: str) -> list[str]:
    """The stage and command names that begin with ``start`` (completing ``filterkit help``)."""
    root = ctx.find_root()
    group = cast(FilterkitGroup, root.command)
    return sorted(name for name in [*registry_of(root).stages, *group.command_places] if name.startswith(start))


@click.command("help", help="Show the help of a stage or a command; without TOPIC, of filterkit.")
@click.argument("topic", required=False, metavar="[STAGE|COMMAND]", shell_complete=topics)
@click.pass_context
def help_command(ctx: click.Context, topic: str | None) -> None:
    """Print the help ``filterkit TOPIC --help`` would (``filterkit IN.arff STAGE --help`` for a
    stage); a usage error naming the stages and commands when TOPIC is neither."""
    root = ctx.find_root()
    group = cast(FilterkitGroup, root.command)
    command = group if topic is None else group.named_command(topic) or group.get_command(root, topic)
    if command is None:
        stages = ", ".join(sorted(registry_of(root).stages)) or "none"
        commands = ", ".join(sorted(group.command_places))
        raise click.UsageError(f"no stage or command called '{topic}' (stages: {stages}; commands: {commands})")
    click.echo(command.get_help(root if topic is None else click.Context(command, info_name=topic, parent=root)))


def show_version(ctx: click.Context, param: click.Parameter, wanted: bool) -> None:
    """Callback of ``--version``: print :func:`version_text` and exit."""
    if wanted and not ctx.resilient_parsing:
        click.echo(version_text(plugin_loader(ctx).folder))
        ctx.exit()


def version_text(plugins_dir: str | None) -> str:
    """filterkit's version, Python's, those of :data:`LIBRARIES`, and the distributions
    that provide plugins with the plugins each provides (and the ``--plugins-dir`` files).

    Read from the installed metadata without importing any plugin, so a broken plugin
    is listed too ('filterkit plugins' says whether it loads).
    """
    lines = [f"filterkit {__version__}", f"Python {sys.version.split()[0]}"]
    lines += [f"{library} {_installed_version(library)}" for library in LIBRARIES]
    provided: dict[str, set[str]] = {}
    for point in entry_points(GROUP):
        distribution = f"{point.dist.name} {point.dist.version}" if point.dist else "(unknown distribution)"
        provided.setdefault(distribution, set()).add(point.name)
    if plugins_dir is not None:
        provided[f"--plugins-dir {plugins_dir}"] = {path.stem for path in Path(plugins_dir).glob("*.py")}
    disabled = disabled_plugins()
    lines.append("plugins:")
    for distribution, names in sorted(provided.items()):
        listed = ", ".join(f"{name} (disabled)" if name in disabled else name for name in sorted(names))
        lines.append(f"  {distribution}: {listed or 'none'}")
    return "\n".join(lines)


def _installed_version(distribution: str) -> str:
    from importlib.metadata import PackageNotFoundError, version  # only --version reads other distributions

    try:
        return version(distribution)
    except PackageNotFoundError:
        return "not installed"


version_option = click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    callback=show_version,
    hidden=True,
    help="Show the versions of filterkit, its libraries and its plugins, and exit.",
)
