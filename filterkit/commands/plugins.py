"""``filterkit plugins``: what is installed, what was skipped and why."""

from __future__ import annotations

import json
from typing import cast

import click

from filterkit.arff.tokens import one_line
from filterkit.commands.context import registry_of
from filterkit.commands.files import ReportCommand
from filterkit.commands.options import json_option
from filterkit.plugins import Format
from filterkit.stage import Configurable

#: What the listing names, each kind under its heading.
KINDS = ("stages", "metrics", "classifiers", "stemmers", "formats")


@click.command(
    cls=ReportCommand,
    help="List stages, metrics, classifiers, stemmers and formats with the plugin, distribution and version of each, "
    "and the plugins that were skipped or register nothing.",
)
@json_option(help="Machine-readable output.")
@click.pass_context
def plugins(ctx: click.Context, as_json: bool) -> None:
    """Print the registry: as a listing, or as JSON with ``--json``."""
    registry = registry_of(ctx).complete()
    listing: dict[str, list] = {
        kind: [
            {
                "name": r.name,
                "plugin": r.plugin,
                "distribution": r.distribution,
                "version": r.version,
                "summary": _summary_of(r.value),
            }
            for r in sorted(getattr(registry, kind).values(), key=lambda r: r.name)
        ]
        for kind in KINDS
    }
    listing["skipped"] = [vars(problem) for problem in registry.skipped]
    listing["without_hooks"] = [
        {"plugin": p.plugin, "distribution": p.distribution, "hint": p.reason} for p in registry.without_hooks
    ]
    listing["disabled"] = registry.disabled
    if as_json:
        click.echo(json.dumps(listing, indent=2))
        return
    for kind in KINDS:
        click.echo(f"{kind}:")
        for entry in listing[kind]:
            version = f" {entry['version']}" if entry["version"] else ""
            line = f"  {entry['name']:<12} {entry['plugin']} ({entry['distribution']}{version})  {entry['summary']}"
            click.echo(one_line(line))
        if not listing[kind]:
            click.echo("  (none)")
    for title, problems in (("skipped:", registry.skipped), ("registering nothing:", registry.without_hooks)):
        if problems:
            click.echo(title)
            for problem in problems:
                click.echo(one_line(f"  {problem.plugin} ({problem.distribution}): {problem.reason}"))
    if registry.disabled:
        click.echo(f"disabled by FILTERKIT_DISABLE_PLUGINS: {', '.join(registry.disabled)}")


def _summary_of(value) -> str:
    """A registered thing's one-line summary (a metric's ``summary`` field, a class's declaration, what a
    format reads and writes)."""
    if isinstance(value, type):
        return cast(type[Configurable], value).one_line_summary()  # a stage or classifier class
    if isinstance(value, Format):
        files = ", ".join(value.suffixes) or ("folders" if value.reads_folder else "--from only")
        return f"{'reads and writes' if value.writer else 'reads'} {files}"
    return getattr(value, "summary", "")
