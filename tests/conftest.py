"""Fixtures that run the command line: in this process, as a subprocess, in a shell.

``run_filterkit`` calls :func:`filterkit.cli.run` in this process (stdout as
bytes, stdin replaceable), with the installed plugins discovered once for the
session (:func:`installed_plugins_once`); ``filterkit_script`` runs the installed
console script as a real subprocess, for pipes, exit statuses and stray files.  A
test that uses ``filterkit_script`` or ``shell``, or runs Weka, is marked ``slow`` here.
"""

from __future__ import annotations

import io
import os
import shlex
import subprocess
import sys

import pytest

from chain_helpers import FILTERKIT, Result
from filterkit import cli, plugins
from filterkit.plugins import Registry, load_plugins

#: Fixtures that start the console script as a process: about a second of CPU a launch.
PROCESS_FIXTURES = frozenset({"filterkit_script", "shell"})


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    """Mark ``slow`` every test that runs Weka or starts the console script through a
    fixture, before ``-m "not slow"`` (the quick loop) picks what runs."""
    for item in items:
        if item.get_closest_marker("weka") is not None or PROCESS_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


#: What plugin discovery reads besides a plugins folder (filterkit.plugins).
PLUGIN_VARIABLES = ("FILTERKIT_DISABLE_PLUGINS", "FILTERKIT_STRICT_PLUGINS")
#: filterkit.plugins as imported, to tell whether a test has monkeypatched it since.
PRISTINE_PLUGINS_MODULE = dict(vars(plugins))
_installed: list[Registry] = []


def installed_plugins_once(plugins_dir=None) -> Registry:
    """:func:`filterkit.plugins.load_plugins` for in-process runs, discovering the installed plugins once.

    Discovery is two thirds of a small run (~20 ms), and nothing a test does changes the installed
    entry points, so their registry is loaded once and reused — only while discovery would give the
    same: no plugins folder (a test may rewrite one), neither plugin variable set, filterkit.plugins
    not monkeypatched, and no plugin skipped or without hooks (each load warns about those).
    Any other call loads afresh, as filterkit does.
    """
    pristine = (
        plugins_dir is None
        and not any(os.environ.get(variable) for variable in PLUGIN_VARIABLES)
        and vars(plugins).keys() == PRISTINE_PLUGINS_MODULE.keys()
        and all(vars(plugins)[name] is value for name, value in PRISTINE_PLUGINS_MODULE.items())
    )
    if not pristine:
        return load_plugins(plugins_dir)
    if not _installed:
        registry = load_plugins()
        if registry.skipped or registry.without_hooks:
            return registry
        _installed.append(registry)
    return _installed[0]


@pytest.fixture
def run_filterkit(capsysbinary, monkeypatch):
    """Call ``filterkit.cli.run(argv)``; ``stdin`` bytes become standard input."""
    monkeypatch.setattr(cli, "load_plugins", installed_plugins_once)

    def invoke(*argv, stdin: bytes | None = None, plugins_dir=None) -> Result:
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
        status = cli.run([str(a) for a in argv], None if plugins_dir is None else str(plugins_dir))
        out, err = capsysbinary.readouterr()
        return Result(status, out, err.decode("utf-8"))

    return invoke


@pytest.fixture
def filterkit_script():
    """Run the installed ``filterkit`` console script as a subprocess."""
    if FILTERKIT is None:
        pytest.skip("the filterkit console script is not installed (pip install -e .)")

    def invoke(*argv, stdin: bytes | None = None, cwd=None, env: dict | None = None) -> Result:
        completed = subprocess.run(
            [FILTERKIT, *map(str, argv)],
            input=stdin if stdin is not None else b"",
            capture_output=True,
            cwd=cwd,
            env=None if env is None else {**os.environ, **env},
            timeout=60,
        )
        return Result(completed.returncode, completed.stdout, completed.stderr.decode("utf-8"))

    return invoke


@pytest.fixture
def shell():
    """Run a bash command line in which ``filterkit`` means the console script."""
    if FILTERKIT is None:
        pytest.skip("the filterkit console script is not installed (pip install -e .)")

    def invoke(command: str, cwd=None, env: dict | None = None) -> Result:
        completed = subprocess.run(
            f'filterkit() {{ {shlex.quote(FILTERKIT)} "$@"; }}\n{command}',
            shell=True,
            executable="/bin/bash",
            capture_output=True,
            cwd=cwd,
            env=None if env is None else {**os.environ, **env},
            timeout=60,
        )
        return Result(completed.returncode, completed.stdout, completed.stderr.decode("utf-8"))

    return invoke
