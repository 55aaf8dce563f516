"""The ``filterkit`` command: ``filterkit [OPTIONS] IN.arff STAGE [--opt …] STAGE …``.

The chain is a click group in chain mode (as click's ``imagepipe`` example):
each stage found in the plugin registry is a subcommand that returns a stage,
and the result callback fits and runs them.  ``plugins``, ``apply``,
``evaluate`` and ``info`` are commands of their own; a file with one of those
names is read as ``./NAME``.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shlex
import signal
import stat
import sys

import click

from filterkit.arff.reader import DEFAULT_CHUNK_ROWS
from filterkit.arff.writer import ArffWriter
from filterkit.background import write_behind
from filterkit.distributed import INSTALL_HINT, DaskEngine, check_runnable, checked_output_folder, partition_files
from filterkit.errors import FilterkitError
from filterkit.evaluate_command import evaluate_command
from filterkit.info_command import info_command
from filterkit.model import arrays_path, load_model, save_model
from filterkit.outputs import OutputFile, checked_output, staged_output
from filterkit.plugins import Registry, load_plugins
from filterkit.runner import Chain, terminal_progress
from filterkit.sources import FileSource, StreamSource
from filterkit.stage import Option

COMMANDS = ("plugins", "apply", "evaluate", "info")
_STDOUT_COMMANDS = ("plugins", "evaluate", "info")  # they always write to standard output
_OPTIONS_WITH_VALUES = {
    "-o", "--output", "-c", "--class", "--positive", "--save-model", "--plugins-dir", "--chunk-rows",
    "--engine", "--scheduler", "--partitions", "--output-dir",
}


def main(argv: list[str] | None = None) -> None:
    """Entry point of the console script; exits with 0, 1 (data error) or 2 (usage)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    argv, plugins_dir = _take_plugins_dir(argv)
    signal.signal(signal.SIGTERM, _terminate)
    keep_freed_memory()
    sys.exit(run(argv, plugins_dir))


def keep_freed_memory() -> None:
    """Ask glibc's allocator to keep freed blocks of up to 32 MiB for reuse.

    By default glibc gives large freed blocks back to the system at once, so each
    chunk's arrays arrive as fresh pages and fault in again: at grain ×100 that was
    450,000 page faults and 1.3 s of system time per run, against 46,000 and 0.2 s
    with this (peak memory unchanged, as the blocks are reused, not added).  Skipped
    where the C library has no ``mallopt`` (musl, macOS, Windows), and where the user
    tunes glibc's allocator through its ``MALLOC_*_`` environment variables.
    """
    if any(name.startswith("MALLOC_") and name.endswith("_") for name in os.environ):
        return
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, TypeError):
        return
    mallopt(_M_MMAP_THRESHOLD, 32 << 20)
    mallopt(_M_TRIM_THRESHOLD, 1 << 30)


_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's malloc.h


def _terminate(signum, frame):
    """SIGTERM unwinds like Ctrl-C, so temporary files and partial outputs are removed."""
    raise KeyboardInterrupt


def run(argv: list[str], plugins_dir: str | None = None) -> int:
    """Run the command line ``argv``; returns the exit status."""
    try:
        registry = load_plugins(plugins_dir)
        position = _first_word(argv)
        first = None if position is None else argv[position]
        if first in _STDOUT_COMMANDS and sys.stdout is None:
            raise FilterkitError(f"standard output is closed: 'filterkit {first}' writes there")
        if first in COMMANDS:
            commands = {
                "plugins": plugins_command,
                "apply": apply_command,
                "evaluate": lambda r: evaluate_command(r, plugins_dir, stage_command),
                "info": info_command,
            }
            command = commands[first](registry)
            args = argv[:position] + argv[position + 1 :]
            _invoke(command, args, f"filterkit {first}")
        else:
            _invoke(build_chain_command(registry, plugins_dir), argv, "filterkit")
        return 0
    except click.exceptions.Exit as done:
        return done.exit_code
    except click.ClickException as error:
        error.show()
        return error.exit_code
    except click.exceptions.Abort:
        return 130
    except FilterkitError as error:
        _say_error(str(error))
        return 1
    except BrokenPipeError:
        _silence_stdout()
        return 0
    except OSError as error:
        where = f"{error.filename}: " if error.filename else ""
        _say_error(f"{where}{error.strerror or error}")
        return 1
    except KeyboardInterrupt:
        _say_error("interrupted")
        return 130


def _invoke(command: click.Command, args: list[str], prog_name: str) -> None:
    """Parse ``args`` and run ``command``, leaving every exception to :func:`run`.

    Not ``command.main(standalone_mode=False)``: that still answers a broken
    pipe with ``sys.exit(1)`` and turns ``--help``'s exit into a return value.
    """
    with command.make_context(prog_name, args) as context:
        command.invoke(context)


def _say_error(message: str) -> None:
    if sys.stderr is None:
        return
    with contextlib.suppress(BrokenPipeError):
        sys.stderr.write(f"filterkit: error: {message}\n")
        sys.stderr.flush()


def _silence_stdout() -> None:
    """After the reader of stdout went away: point stdout at /dev/null so exit is quiet."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    with contextlib.suppress(OSError):
        os.dup2(devnull, sys.stdout.fileno())


def _take_plugins_dir(argv: list[str]) -> tuple[list[str], str | None]:
    """Remove ``--plugins-dir DIR`` from the arguments (it is needed before parsing)."""
    rest, plugins_dir = [], None
    iterator = iter(argv)
    for argument in iterator:
        if argument == "--plugins-dir":
            plugins_dir = next(iterator, None)
            if plugins_dir is None:
                raise SystemExit(_usage_exit("--plugins-dir needs a folder"))
        elif argument.startswith("--plugins-dir="):
            plugins_dir = argument.split("=", 1)[1]
        else:
            rest.append(argument)
    return rest, plugins_dir


def _usage_exit(message: str) -> int:
    if sys.stderr is not None:
        sys.stderr.write(f"filterkit: usage error: {message}\n")
    return 2


def _first_word(argv: list[str]) -> int | None:
    """The position of the first argument that is neither an option nor an option's value."""
    skip = False
    for position, argument in enumerate(argv):
        if skip:
            skip = False
        elif argument in _OPTIONS_WITH_VALUES:
            skip = True
        elif not argument.startswith("-") or argument == "-":
            return position
    return None


def _click_option(option: Option) -> click.Option:
    if option.kind is bool:
        declaration = f"{option.flag}/--no-{option.flag[2:]}"
        return click.Option([declaration, option.name], default=option.default, help=option.help, show_default=True)
    if option.choices:
        kind = click.Choice(option.choices)
    elif option.kind is int:
        kind = click.IntRange(option.minimum, option.maximum) if option.minimum is not None or option.maximum is not None else click.INT
    elif option.kind is float:
        kind = click.FloatRange(option.minimum, option.maximum) if option.minimum is not None or option.maximum is not None else click.FLOAT
    else:
        kind = click.STRING
    return click.Option(
        [option.flag, option.name], type=kind, default=option.default, help=option.help,
        show_default=option.default is not None,
    )


def stage_command(registry: Registry, name: str) -> click.Command:
    """The click subcommand for one registered stage; it returns the stage."""
    registered = registry.stages[name]
    stage_class = registered.value

    def make(**params):
        return registry.make_stage(name, params)

    summary = stage_class.one_line_summary()
    return click.Command(
        name,
        params=[_click_option(o) for o in stage_class.options],
        callback=make,
        help=f"{summary}\n\n(plugin: {registered.plugin}, {registered.distribution})",
        short_help=summary,
    )


CHAIN_HELP = """Read IN.arff (or - for stdin), run the STAGES in order, write ARFF.

\b
  filterkit in.arff shape bns l2 > out.arff
  cat in.arff | filterkit - ig --presence select --top 1000 l2
  filterkit --save-model m.json train.arff bns l2 > train_out.arff
  filterkit apply m.json test.arff > test_out.arff

With no stage the input is rewritten unchanged. Options of the chain come
before IN.arff; a stage's options follow its name ('filterkit STAGE --help').
Other commands: 'filterkit plugins' lists what is installed, 'filterkit apply'
applies a saved model, 'filterkit evaluate' cross-validates chains with a
classifier, 'filterkit info' summarizes a file (rows, density, class counts,
best features by a metric). A file named like a command is read as ./NAME.

With --engine dask the chain runs over partitions on a Dask cluster: IN.arff
is split into byte ranges, or is a folder or a quoted glob ('parts/*.arff')
of files sharing one header, each file a partition (see docs/dask.md).
"""


def build_chain_command(registry: Registry, loaded_plugins_dir: str | None = None) -> click.Group:
    """The chained click group whose subcommands are the registered stages.

    ``loaded_plugins_dir`` (taken from the command line before parsing) is
    where Dask workers load plugin files from too.
    """

    @click.group(chain=True, invoke_without_command=True, help=CHAIN_HELP,
                 subcommand_metavar="STAGE [OPTIONS]... [STAGE [OPTIONS]...]...")
    @click.argument("input_path", metavar="IN.arff")
    @click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write here (atomically) instead of stdout.")
    @click.option("-c", "--class", "class_spec", default="last", show_default=True,
                  help="The class attribute: last, first, a 1-based index or a name.")
    @click.option("--positive", help="The positive class label for two-class stages (default: the minority class).")
    @click.option("--save-model", "model_path", type=click.Path(dir_okay=False), help="Save the fitted chain (JSON, arrays in a side .npz).")
    @click.option("--sparse/--dense", "sparse", default=None, help="Force the output row form (default: as the input).")
    @click.option("--chunk-rows", type=click.IntRange(1), default=DEFAULT_CHUNK_ROWS, show_default=True,
                  help="Rows per chunk (memory bound; never changes the output).")
    @click.option("-q", "--quiet", is_flag=True, help="No progress on stderr.")
    @click.option("--plugins-dir", metavar="DIR", help="Also load *.py files of DIR as plugins.")
    @click.option("--engine", type=click.Choice(["local", "dask"]), default="local", show_default=True,
                  help=f"Run in this process, or over partitions on a Dask cluster ({INSTALL_HINT}).")
    @click.option("--scheduler", metavar="ADDRESS",
                  help="With --engine dask: the scheduler, e.g. tcp://host:8786 (default: 2 local worker processes).")
    @click.option("--partitions", type=click.IntRange(1),
                  help="With --engine dask: cut one input file into N byte ranges at most (default: 2 per worker thread).")
    @click.option("--output-dir", type=click.Path(file_okay=False),
                  help="With --engine dask: write one output per partition into DIR.")
    def chain(**_):
        """The chain; the work happens in the result callback."""

    @chain.result_callback()
    def run_chain(stages, input_path, output, class_spec, positive, model_path, sparse, chunk_rows, quiet, plugins_dir,
                  engine, scheduler, partitions, output_dir):
        progress = terminal_progress if (not quiet and sys.stderr.isatty()) else None
        fitted_chain = Chain(stages, class_spec=class_spec, positive=positive)
        if engine == "dask":
            _run_on_dask(fitted_chain, input_path, output, output_dir, model_path, sparse, chunk_rows,
                         progress is not None, scheduler, partitions, registry, loaded_plugins_dir)
            return
        if scheduler or partitions or output_dir:
            raise click.UsageError("--scheduler, --partitions and --output-dir need --engine dask")
        _check_stdout_open(output)
        output_file = _checked_outputs([input_path], output, model_path)
        with _open_source(input_path, chunk_rows, needs_passes=any(s.fitted for s in stages)) as source:
            fitted_chain.fit(source, progress)
            comments = [f"filterkit chain: {describe_chain(stages)}"]
            with _output(output_file) as stream:
                writer = ArffWriter(stream, fitted_chain.output_schema, sparse, comments)
                write_behind(fitted_chain.transform(source.chunks()), writer.write)
                if model_path:
                    # Only a run that transformed every row saves its model; a model that
                    # cannot be saved still removes the -o output, which is published last.
                    save_model(model_path, fitted_chain, registry)
        if progress is not None:
            sys.stderr.write("\n")

    for name in sorted(registry.stages):
        chain.add_command(stage_command(registry, name))
    return chain


def _run_on_dask(chain, input_path, output, output_dir, model_path, sparse, chunk_rows, progress, scheduler,
                 partitions, registry, plugins_dir) -> None:
    """The chain fitted and applied by :mod:`filterkit.distributed`; outputs and model as a local run's."""
    if output and output_dir:
        raise click.UsageError("give -o FILE or --output-dir DIR, not both")
    if scheduler and not (output or output_dir):
        raise click.UsageError(
            "with --scheduler, give -o FILE or --output-dir DIR in a folder the workers share (they write the rows)"
        )
    check_runnable(chain.stages, input_path)
    _check_stdout_open(output or output_dir)
    output_file = _checked_outputs(partition_files(input_path), output, model_path)
    if output_dir is not None:
        output_dir = checked_output_folder(output_dir)
    with DaskEngine.connect(scheduler, plugins_dir, chunk_rows, progress) as engine:
        engine.check_workers(chain)
        plan = engine.plan(input_path, partitions)
        if output_dir is not None:
            engine.checked_targets(plan, output_dir)
        engine.fit(chain, plan)
        comments = [f"filterkit chain: {describe_chain(chain.stages)}"]
        save = (lambda: save_model(model_path, chain, registry)) if model_path else None
        if output_dir:
            engine.write_each(chain, plan, output_dir, sparse, comments, before_publish=save)
        else:
            with _output(output_file) as stream:
                staging = None if output_file is None or output_file.how == "stream" else output_file.staging_folder
                engine.write_concatenated(chain, plan, stream, sparse, comments, parts_folder=staging)
                if save:
                    save()
    if progress:
        sys.stderr.write("\n")


def describe_chain(stages) -> str:
    """The chain as it would be typed: each stage with the options that differ from their defaults."""
    words = []
    for stage in stages:
        words.append(stage.name)
        for option in stage.options:
            value = stage.params[option.name]
            if value == option.default:
                continue
            if option.kind is bool:
                words.append(option.flag if value else f"--no-{option.flag[2:]}")
            else:
                words.extend([option.flag, shlex.quote(str(value))])
    return " ".join(words) or "(identity)"


def _check_stdout_open(output: str | None) -> None:
    """Without an output file, refuse a closed standard output before any work."""
    if output is None and sys.stdout is None:
        raise FilterkitError("standard output is closed: give -o FILE")


def _checked_outputs(inputs: list[str], output: str | None, model_path: str | None) -> OutputFile | None:
    """Check, before any work, that every output can be written and that the inputs,
    ``-o`` and the model's two files are distinct files; the ``-o`` target, if any."""
    output_file = None if output is None else checked_output(output)
    named = [("the input", path) for path in inputs if path != "-"]
    if output is not None:
        named.append(("-o", output))
    if model_path is not None:
        checked_output(model_path)
        checked_output(arrays_path(model_path))
        named += [("--save-model", model_path), ("the model's arrays", os.fspath(arrays_path(model_path)))]
    _check_distinct(named)
    return output_file


def _check_distinct(named: list[tuple[str, str]]) -> None:
    """A usage error naming both when two of the (role, path) pairs are one file."""
    for position, (role, path) in enumerate(named):
        for other_role, other_path in named[position + 1 :]:
            if same_file(path, other_path):
                raise click.UsageError(f"{role} {path} and {other_role} {other_path} are the same file")


def same_file(first: str, second: str) -> bool:
    """Whether two paths name one file: by device and inode where both exist, else by
    their absolute paths with links resolved.  Two character devices (``/dev/null``
    twice, a terminal) do not count: writing both is harmless."""
    try:
        first_status, second_status = os.stat(first), os.stat(second)
    except OSError:
        return os.path.normcase(os.path.realpath(first)) == os.path.normcase(os.path.realpath(second))
    if stat.S_ISCHR(first_status.st_mode) and stat.S_ISCHR(second_status.st_mode):
        return False
    return (first_status.st_dev, first_status.st_ino) == (second_status.st_dev, second_status.st_ino)


@contextlib.contextmanager
def _open_source(path: str, chunk_rows: int, needs_passes: bool):
    """The input as a source: a regular file is read once per pass; standard input and
    any other file that cannot be read twice (a FIFO, ``<(…)``, ``/dev/stdin``, a
    device) is read once, and spooled when the chain needs several passes."""
    if path == "-":
        if sys.stdin is None:
            raise FilterkitError("standard input is closed")
        stream, name, owned = sys.stdin.buffer, "<stdin>", False
    elif _is_regular_file(path):
        yield FileSource(path, chunk_rows)
        return
    else:
        stream, name, owned = open(path, "rb"), path, True
    try:
        source = StreamSource(stream, name, chunk_rows)
        try:
            if needs_passes:
                source.spool()
            yield source
        finally:
            source.close()
    finally:
        if owned:
            stream.close()


def _is_regular_file(path: str) -> bool:
    """Whether ``path`` is a regular file (which can be read again); True when it cannot
    be looked at, so that opening it gives the error."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return True


@contextlib.contextmanager
def _output(output: OutputFile | None):
    """A binary stream to stdout, or to ``output``, published only when the block succeeds."""
    if output is None:
        sys.stdout.flush()
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    with staged_output(output) as stage:
        try:
            yield stage.stream
            stage.publish()
        except OSError as error:
            if error.filename is not None:
                raise
            raise FilterkitError(f"cannot write {output.path}: {error.strerror or error}") from None


def plugins_command(registry: Registry) -> click.Command:
    """``filterkit plugins``: what is installed, what was skipped and why."""

    @click.command(help="List stages, metrics and classifiers with the plugin, distribution and version of each, "
                        "and the plugins that were skipped or register nothing.")
    @click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
    def plugins(as_json):
        listing: dict[str, list] = {
            kind: [
                {"name": r.name, "plugin": r.plugin, "distribution": r.distribution, "version": r.version,
                 "summary": _summary_of(r.value)}
                for r in sorted(table.values(), key=lambda r: r.name)
            ]
            for kind, table in (("stages", registry.stages), ("metrics", registry.metrics),
                                ("classifiers", registry.classifiers))
        }
        listing["skipped"] = [vars(problem) for problem in registry.skipped]
        listing["without_hooks"] = [
            {"plugin": p.plugin, "distribution": p.distribution, "hint": p.reason} for p in registry.without_hooks
        ]
        listing["disabled"] = registry.disabled
        if as_json:
            click.echo(json.dumps(listing, indent=2))
            return
        for kind in ("stages", "metrics", "classifiers"):
            click.echo(f"{kind}:")
            for entry in listing[kind]:
                version = f" {entry['version']}" if entry["version"] else ""
                click.echo(f"  {entry['name']:<12} {entry['plugin']} ({entry['distribution']}{version})  {entry['summary']}")
            if not listing[kind]:
                click.echo("  (none)")
        for title, problems in (("skipped:", registry.skipped), ("registering nothing:", registry.without_hooks)):
            if problems:
                click.echo(title)
                for problem in problems:
                    click.echo(f"  {problem.plugin} ({problem.distribution}): {problem.reason}")
        if registry.disabled:
            click.echo(f"disabled by FILTERKIT_DISABLE_PLUGINS: {', '.join(registry.disabled)}")

    return plugins


def _summary_of(value) -> str:
    """A registered thing's one-line summary (a metric's ``summary`` field, a class's declaration)."""
    if isinstance(value, type):
        return value.one_line_summary()
    return getattr(value, "summary", "")


def apply_command(registry: Registry) -> click.Command:
    """``filterkit apply M.json TEST.arff``: a saved chain applied to new data."""

    @click.command(help="Apply a model saved with --save-model to IN.arff (or -) and write ARFF.")
    @click.argument("model_path", metavar="MODEL.json")
    @click.argument("input_path", metavar="IN.arff")
    @click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write here (atomically) instead of stdout.")
    @click.option("--sparse/--dense", "sparse", default=None, help="Force the output row form.")
    @click.option("--chunk-rows", type=click.IntRange(1), default=DEFAULT_CHUNK_ROWS, show_default=True)
    def apply(model_path, input_path, output, sparse, chunk_rows):
        _check_stdout_open(output)
        output_file = None if output is None else checked_output(output)
        named = [("the model", model_path)]
        if os.fspath(arrays_path(model_path)) != model_path:
            named.append(("the model's arrays", os.fspath(arrays_path(model_path))))
        if input_path != "-":
            named.append(("the input", input_path))
        if output is not None:
            named.append(("-o", output))
        _check_distinct(named)
        chain = load_model(model_path, registry)
        with _open_source(input_path, chunk_rows, needs_passes=False) as source:
            chain.check_input(source.schema, "<stdin>" if input_path == "-" else input_path)
            comments = [f"filterkit apply {os.path.basename(model_path)}: {describe_chain(chain.stages)}"]
            with _output(output_file) as stream:
                writer = ArffWriter(stream, chain.output_schema, sparse, comments)
                write_behind(chain.transform(source.chunks()), writer.write)

    return apply
