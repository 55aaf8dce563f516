"""The options several commands share, declared once, and the click form of a declared
:class:`filterkit.stage.Option` (a stage's or a classifier's)."""

from __future__ import annotations

import functools
import shlex
import sys
from typing import TYPE_CHECKING, cast

import click

from filterkit.arff.reader import DEFAULT_CHUNK_ROWS
from filterkit.commands.context import registry_of, use_plugins_dir
from filterkit.formats import format_names, format_of, registered, registered_formats
from filterkit.formats import format_options as declared_format_options
from filterkit.progress import LOG_INTERVAL
from filterkit.stage import Option

if TYPE_CHECKING:
    from filterkit.arff.writer import NumberFormat


class OnceOptions:
    """A click command mixin: an option given twice is a usage error (click keeps the last value without a word:
    ``remove --range 1 --range 2`` removed attribute 2 alone).  Options that take several (``multiple``) or count
    are not concerned; a flag and its negation (``--sparse --dense``) are one option."""

    def make_parser(self, ctx: click.Context):
        parser = super().make_parser(ctx)  # type: ignore[misc]
        parse = parser.parse_args

        def parse_once(args: list[str]):
            opts, rest, order = parse(args=args)
            seen: set[str] = set()
            for param in order:
                if not isinstance(param, click.Option) or param.multiple or param.count or param.is_eager:
                    continue  # --help and --version: as many as given, the first answering
                if param.name in seen:
                    spelled = "/".join(param.opts + param.secondary_opts)
                    raise click.UsageError(f"option {spelled} is given twice: give it once", ctx)
                seen.add(str(param.name))
            return opts, rest, order

        setattr(parser, "parse_args", parse_once)
        return parser


class OnceCommand(OnceOptions, click.Command):
    """A command whose options may each be given once (:class:`OnceOptions`)."""


def _dash_for_stdout(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``-o -`` is standard output, as ``-`` is standard input: the same as no ``-o``."""
    return None if value == "-" else value


def stdout_output_option(help: str):
    """The ``-o``/``--output`` option of a command that writes to standard output without it (or with ``-o -``)."""
    return click.option("-o", "--output", type=click.Path(dir_okay=False), callback=_dash_for_stdout, help=help)


output_option = stdout_output_option("Write here (atomically) instead of stdout (-: stdout).")
class_option = click.option(
    "-c",
    "--class",
    "class_spec",
    default="last",
    show_default=True,
    help="The class attribute: last, first, a 1-based index or a name.",
)
labels_option = click.option(
    "--labels",
    "labels_file",
    type=click.Path(dir_okay=False),
    help="Multi-label data: Mulan's XML file naming the label attributes (MEKA's -C in the relation name needs "
    "none); each label is then learned from, in place of the class (docs/multilabel.md).",
)
row_form_option = click.option(
    "--sparse/--dense", "sparse", default=None, help="Force the output row form (default: as the input)."
)
#: The most rows a chunk may be asked to hold: the readers pass the count to C as a ``Py_ssize_t``.
MAX_CHUNK_ROWS = sys.maxsize
chunk_rows_option = click.option(
    "--chunk-rows",
    type=click.IntRange(1, MAX_CHUNK_ROWS),
    default=DEFAULT_CHUNK_ROWS,
    show_default=True,
    help="Rows per chunk (memory bound; never changes the output).",
)


def _by_suffix(written: bool) -> str:
    """The formats by their file names, for ``--from``/``--to``'s help."""
    forms = [r.value for r in registered_formats().formats.values()]
    named = [
        "/".join(form.suffixes)
        for form in forms
        if form.suffixes and form.suffixes != (".arff",) and (form.writer or not written)
    ]
    return ", ".join(named)


class FormatName(click.ParamType):
    """The name of a registered format (``written``: one filterkit writes), any case: a :class:`click.Choice`
    among the names in the run's registry, checked when the option is parsed."""

    name = "choice"

    def __init__(self, written: bool):
        self.written = written

    def _choice(self, ctx: click.Context | None) -> click.Choice:
        registry_of(ctx or click.get_current_context())  # the run's plugins, --plugins-dir included
        return click.Choice(format_names(self.written), case_sensitive=False)

    def get_metavar(self, param: click.Parameter, ctx: click.Context) -> str | None:
        return self._choice(ctx).get_metavar(param, ctx)

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str):
        return self._choice(ctx).shell_complete(ctx, param, incomplete)

    def convert(self, value, param, ctx):
        return self._choice(ctx).convert(value, param, ctx)


input_format_option = click.option(
    "--from",
    "input_format",
    type=FormatName(written=False),
    help=f"The input's format (default: by its name: {_by_suffix(False)}; a folder of subfolders: folders, "
    "a folder per class; else arff; for -, arff, or for predict, apply and update the training data's format).",
)
output_format_option = click.option(
    "--to",
    "output_format",
    type=FormatName(written=True),
    help=f"The output's format (default: by the -o name: {_by_suffix(True)}, else arff; arff on stdout).",
)
digits_option = click.option(
    "--digits",
    type=click.IntRange(1, 17),
    metavar="N",
    help="Write each number correctly rounded to N significant digits, 1 to 17 (default: exact, "
    "the shortest text that reads back to the same double).",
)
float32_option = click.option(
    "--float32", is_flag=True, help="Write each number as the shortest text that reads back to the same float32."
)


def number_format(digits: int | None, float32: bool) -> NumberFormat:
    """The :class:`filterkit.arff.writer.NumberFormat` of ``--digits`` and ``--float32``;
    a usage error for both at once."""
    from filterkit.arff.writer import NumberFormat

    if digits is not None and float32:
        raise click.UsageError("give --digits N or --float32, not both")
    return NumberFormat(digits, float32)


quiet_option = click.option("-q", "--quiet", is_flag=True, help="No progress on stderr.")
progress_option = click.option(
    "--progress",
    is_flag=True,
    envvar="FILTERKIT_PROGRESS",
    help=f"Progress on stderr even when it is not a terminal (a log): a line every {LOG_INTERVAL:g} s "
    "and one per pass, with the total time (FILTERKIT_PROGRESS=1 too). -q silences it.",
)
plugins_dir_option = click.option(
    "--plugins-dir",
    metavar="DIR",
    is_eager=True,
    expose_value=False,
    callback=use_plugins_dir,
    help="Also load *.py files of DIR as plugins.",
)


def reading_and_writing_options(command):
    """The options of how the input is read, how the output is written and of the progress shown,
    which the chain and ``apply`` share, in the order of their help."""
    shared = (row_form_option, input_format_option, output_format_option, *format_options(), digits_option)
    for option in reversed((*shared, float32_option, chunk_rows_option, quiet_option, progress_option)):
        command = option(command)
    return command


def format_options() -> list:
    """The click decorators of every registered format's declared options (those of the installed plugins
    when the command tree is made): None unless given, so that a model's recorded reading options fill them."""
    made = []
    for option in declared_format_options().values():
        declarations, settings = click_parameter(option)
        made.append(click.option(*declarations, **{**settings, "default": None, "show_default": False}))
    return made


def format_option_decorators(command):
    """Every format's reading options (:func:`format_options`) on ``command``."""
    for option in reversed(format_options()):
        command = option(command)
    return command


#: ``--positive LABEL`` and ``--json`` (stored as ``as_json``), each command giving its own ``help=``.
positive_option = functools.partial(click.option, "--positive")
json_option = functools.partial(click.option, "--json", "as_json", is_flag=True)


def engine_option(what: str):
    """``--engine local|dask``, ``what`` saying how each runs, naming the extra Dask needs."""
    return click.option(
        "--engine",
        type=click.Choice(["local", "dask"]),
        default="local",
        show_default=True,
        # Not the install command: help is wrapped at hyphens, and a command split over two lines breaks when pasted.
        help=f"{what} (needs Dask: the dask extra).",
    )


scheduler_option = click.option(
    "--scheduler",
    metavar="ADDRESS",
    help="With --engine dask: the scheduler, e.g. tcp://host:8786 (default: a local cluster, --workers).",
)

workers_option = click.option(
    "--workers",
    type=click.IntRange(1),
    help=(
        "With --engine dask and no --scheduler: the local cluster's worker processes, one thread each, each "
        "limited to an equal share of the machine's memory (default: one per core this process may use)."
    ),
)
partitions_option = click.option(
    "--partitions",
    type=click.IntRange(1),
    help=(
        "With --engine dask: cut one input file into N byte ranges at most "
        "(default: 1 per worker thread of the local cluster, 2 of a scheduler's)."
    ),
)


class RegisteredName(click.ParamType):
    """The name of a registered metric or classifier: a :class:`click.Choice` among the
    names in the run's registry (``table`` is ``"metrics"`` or ``"classifiers"``), any
    text when it has none."""

    name = "choice"

    def __init__(self, table: str):
        self.table = table

    def _choice(self, ctx: click.Context | None) -> click.ParamType:
        names = sorted(getattr(registry_of(ctx or click.get_current_context()), self.table))
        return click.Choice(names) if names else click.STRING

    def get_metavar(self, param: click.Parameter, ctx: click.Context) -> str | None:
        return self._choice(ctx).get_metavar(param, ctx)

    def convert(self, value, param, ctx):
        return self._choice(ctx).convert(value, param, ctx)


def click_option(option: Option, owner: str | None = None) -> click.Option:
    """The click option of a declared option; click checks its type, choices and bounds.

    A stage's option is ``--NAME`` with its declared default.  A classifier's (``owner``
    is the classifier's name) is ``--OWNER-NAME``, stored as ``OWNER__NAME`` and None
    unless given, so ``evaluate`` can tell which classifier it was meant for; its help
    names the classifier and the declared default.  A bool option is a flag pair
    (``--presence/--no-presence``, or its declared ``off_flag``).
    """
    declarations, settings = click_parameter(option, owner)
    return click.Option(declarations, **settings)


def click_parameter(option: Option, owner: str | None = None) -> tuple[list[str], dict]:
    """The declarations and settings of :func:`click_option`'s option."""
    flag = option.flag if owner is None else f"--{owner}-{option.flag[2:]}"
    name = option.name if owner is None else f"{owner}__{option.name}"
    default = option.default if owner is None else None
    help = option.help if owner is None else f"[{owner}] {option.help} (default: {option.default})"
    if option.kind is bool:
        off = option.off_flag or f"--no-{flag[2:]}"
        return [f"{flag}/{off}", name], {"default": default, "help": help, "show_default": owner is None}
    settings = {"type": _click_type(option), "default": default, "help": help, "show_default": default is not None}
    return [flag, name], settings


def _click_type(option: Option) -> click.ParamType:
    bounded = option.minimum is not None or option.maximum is not None
    if option.choices:
        return click.Choice(option.choices)
    if option.kind is int:
        # an int option's bounds are whole numbers, declared as float | None for both kinds
        return (
            click.IntRange(cast(int | None, option.minimum), cast(int | None, option.maximum)) if bounded else click.INT
        )
    if option.kind is float:
        return click.FloatRange(option.minimum, option.maximum) if bounded else click.FLOAT
    return click.STRING


def refuse_uncut_input(input_path: str, input_format: str | None) -> None:
    """A usage error, before any cluster starts, for an input ``--engine dask`` cannot cut into partitions (its
    format declares no ``ranges``), naming the formats it cuts and the conversion to make."""
    read_as = format_of(input_path, input_format)
    if registered(read_as).ranges is None:
        names = [r.name for r in registered_formats().formats.values() if r.value.ranges is not None]
        path = shlex.quote(input_path)
        raise click.UsageError(
            f"--engine dask reads {' and '.join(filter(None, (', '.join(names[:-1]), names[-1])))} only (the "
            f"formats installed that it cuts into partitions), and {path} is read as {read_as}: convert it first "
            f"(filterkit {path} -o {shlex.quote(input_path.rstrip('/') + '.arff')})"
        )
