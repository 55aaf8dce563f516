"""The ``filterkit`` console script: runs the click tree of :mod:`filterkit.commands` and
turns what it raises into an exit status (0, 1 data error, 2 usage, 130 interrupted).

The tree (and numpy with it) is imported when a run starts, not with this module, so that
:func:`main` tunes the process (:mod:`filterkit.ownership`) before numpy is imported.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import importlib
import os
import signal
import sys

import click

from filterkit.arff.tokens import one_line
from filterkit.errors import FilterkitError
from filterkit.ownership import STOPPING_SIGNALS, cache_own_bytecode, claim_process, limit_blas_threads

#: The environment variable of click's shell completion (``_FILTERKIT_COMPLETE=bash_source filterkit``).
COMPLETION_VARIABLE = "_FILTERKIT_COMPLETE"


def main(argv: list[str] | None = None) -> None:
    """Entry point of the console script; exits with 0, 1 (data error) or 2 (usage).

    With :data:`COMPLETION_VARIABLE` set, it is click's shell completion instead: the
    script for bash, zsh or fish (``bash_source``), or the completions of the words
    the shell passes (``bash_complete``).
    """
    claim_process()
    limit_blas_threads()
    instruction = os.environ.get(COMPLETION_VARIABLE)
    if instruction:
        sys.exit(complete(instruction))
    argv = list(sys.argv[1:] if argv is None else argv)
    for signum in STOPPING_SIGNALS:
        if signal.getsignal(signum) is not signal.SIG_IGN:  # as a background job's SIGINT, or nohup's SIGHUP
            signal.signal(signum, _terminate)
    with contextlib.ExitStack() as warnings_once:
        collecting = gc.isenabled()
        gc.disable()  # importing the tree makes objects that live until exit: collecting among them took 5 ms
        try:
            from filterkit.plugins import each_warning_once  # with the tree: it imports the stage base and numpy

            warnings_once.enter_context(each_warning_once())
            _import_command_tree()
            gc.freeze()  # the imported libraries' objects live until exit: collections during the run skip them
        finally:  # as the caller had it, also when the import fails (a program calling main goes on)
            if collecting:
                gc.enable()
        status = run(argv)
    _ignore_stopping_signals()  # the run is over: a signal now would only turn its status into a kill's
    # The run's objects too: the exit's garbage collections over every object alive took 70 of a small
    # run's 80 ms exit; nothing is left to finalize (a run closes its outputs and joins its threads).
    gc.freeze()
    cache_own_bytecode()
    sys.exit(status)


def _import_command_tree() -> None:
    """Tune the allocator and import the compiled modules and the command tree; an error or an interrupt
    meanwhile is one line and exit status 1 or 130."""
    try:
        from filterkit.allocator import keep_freed_memory

        keep_freed_memory()
        importlib.import_module("filterkit.kernels")  # the compiled modules' check: a stale build is one error line
        command_tree()  # imported here, after the tuning, so that the freeze below takes numpy's objects too
    except FilterkitError as error:
        _say_error(error.message)
        sys.exit(1)
    except KeyboardInterrupt:  # Ctrl-C (or SIGTERM) while the libraries are imported
        _say_error("interrupted")
        sys.exit(130)


def command_tree() -> click.Group:
    """The ``filterkit`` click tree (:data:`filterkit.commands.command_line`), imported on first use with the
    reading options of the installed formats (the plugins loaded once for the import, where each option's
    look at the formats loaded them again)."""
    from filterkit.plugins import running_registry

    with running_registry(functools.cache(load_plugins)):
        from filterkit.commands import command_line

    return command_line


def load_plugins(plugins_dir: str | None = None):
    """The plugins a run loads (:func:`filterkit.plugins.load_plugins`, imported on first use), the
    installed ones recalled from the last run while the installed distributions are the same
    (:mod:`filterkit.installed`); a program can put another loader in its place."""
    from filterkit.plugins import load_plugins as load_installed_plugins

    return load_installed_plugins(plugins_dir, remember=True)


def complete(instruction: str) -> int:
    """Answer click's shell completion ``instruction`` (``bash_source``, ``zsh_complete``,
    …) on stdout; the exit status.  Plugin warnings are left out: they would garble the
    shell's line."""
    from click.shell_completion import shell_complete

    with open(os.devnull, "w") as nowhere, contextlib.redirect_stderr(nowhere):  # the installed plugins recalled
        tree = command_tree()
        from filterkit.commands.context import PluginLoader

        loader = PluginLoader(None, load_plugins)
        return shell_complete(tree, {"obj": loader}, "filterkit", COMPLETION_VARIABLE, instruction)


def _terminate(signum, frame):
    """Ctrl-C, SIGTERM and SIGHUP unwind the run (:data:`filterkit.ownership.STOPPING_SIGNALS`), so temporary files and
    partial outputs are removed; the ones that come while it unwinds (``timeout`` passes a terminal's
    Ctrl-C on to its command, which then gets two) are ignored, not raised again inside the cleanup."""
    _ignore_stopping_signals()
    raise KeyboardInterrupt


def _ignore_stopping_signals() -> None:
    """From now on, Ctrl-C, SIGTERM and SIGHUP do nothing to this process."""
    for signum in STOPPING_SIGNALS:
        signal.signal(signum, signal.SIG_IGN)


def run(argv: list[str], plugins_dir: str | None = None) -> int:
    """Run the command line ``argv``; returns the exit status.

    ``plugins_dir`` is a folder of plugin files to load, as ``--plugins-dir`` (which,
    given in ``argv``, takes its place).
    """
    try:
        command_line = command_tree()  # first: it imports the commands with the installed formats' options
        from filterkit.commands.context import PluginLoader
        from filterkit.plugins import running_registry

        loader = PluginLoader(plugins_dir, load_plugins)
        with (
            running_registry(loader.registry),
            command_line.make_context("filterkit", list(argv), obj=loader) as context,
        ):
            # Not command_line.main(standalone_mode=False): that still answers a broken
            # pipe with sys.exit(1) and turns --help's exit into a return value.
            command_line.invoke(context)
        return 0
    except click.exceptions.Exit as done:
        return done.exit_code
    except click.ClickException as error:
        error.show()
        return error.exit_code
    except FilterkitError as error:
        _say_error(str(error))
        return 1
    except BrokenPipeError:  # the reader of stdout went away: point stdout at /dev/null so exit is quiet
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as error:
        where = f"{error.filename}: " if error.filename else ""
        _say_error(f"{where}{error.strerror or error}")
        return 1
    except MemoryError:
        _say_error("out of memory (MemoryError): the command needed more than it was given")
        return 1
    except ImportError as error:  # a module imported late that cannot load: under a memory limit, its library
        _say_error(f"cannot load {error.name or 'a module'}: {error}")
        return 1
    except KeyboardInterrupt:
        _say_error("interrupted")
        return 130


def _say_error(message: str) -> None:
    """``filterkit: error: MESSAGE`` on one line of stderr, the control characters of a name or label it quotes
    escaped (:func:`filterkit.arff.tokens.one_line`)."""
    if sys.stderr is None:
        return
    with contextlib.suppress(BrokenPipeError):
        sys.stderr.write(f"filterkit: error: {one_line(message)}\n")
        sys.stderr.flush()
