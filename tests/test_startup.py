"""Start-up (issue 20, item 2): a command imports only what it uses.

Each check runs a fresh interpreter, since the test process has imported everything
already, and reads the modules it loaded from ``sys.modules``.
"""

from __future__ import annotations

import json
import subprocess
import sys

import click
import pytest

from chain_helpers import REAL, read_bytes
from filterkit.commands import COMMANDS, command_line
from filterkit.commands.context import PluginLoader

IRIS = REAL / "iris.arff"

#: Run ``filterkit.cli.run(argv)`` (or only import the CLI, for no argv) and report, as
#: JSON on stderr's last line, the exit status and the modules loaded.
PROBE = """
import json, sys
import filterkit.cli
status = filterkit.cli.run(sys.argv[1:]) if len(sys.argv) > 1 else 0
sys.stdout.flush()
print(json.dumps({"status": status, "modules": sorted(sys.modules)}), file=sys.stderr)
"""

#: Libraries only some commands need: scikit-learn (evaluate, the classifiers, the sklearn
#: adapters), liac-arff (``import arff``: the liac conversions' tests) and Dask (--engine dask).
OPTIONAL_LIBRARIES = ("sklearn", "arff", "dask", "distributed")

#: The modules of the chain's run, which no command needs.
CHAIN_RUN = ("filterkit.commands.chain", "filterkit.running", "filterkit.partitions", "filterkit.sources")

#: filterkit's modules that no chain run needs.
NOT_FOR_THE_CHAIN = (
    "filterkit.arff.liac",
    "filterkit.commands.apply",
    "filterkit.commands.evaluate",
    "filterkit.commands.info",
    "filterkit.commands.plugins",
    "filterkit.evaluation",
    "filterkit.reports",
    "filterkit.sklearn",
)


def loaded_modules(*argv) -> tuple[int, bytes, set[str]]:
    """The exit status, stdout and the modules of a fresh ``filterkit ARGV`` run."""
    completed = subprocess.run(
        [sys.executable, "-c", PROBE, *map(str, argv)], capture_output=True, timeout=120, check=False
    )
    report = json.loads(completed.stderr.decode().strip().splitlines()[-1])
    return report["status"], completed.stdout, set(report["modules"])


def top_level(modules: set[str]) -> set[str]:
    """The packages of ``modules`` (``sklearn.base`` → ``sklearn``)."""
    return {name.split(".")[0] for name in modules}


@pytest.mark.slow
def test_importing_the_cli_loads_no_command_and_no_optional_library():
    status, _, modules = loaded_modules()
    assert status == 0
    assert top_level(modules).isdisjoint(OPTIONAL_LIBRARIES)
    assert modules.isdisjoint(NOT_FOR_THE_CHAIN)
    assert modules.isdisjoint(CHAIN_RUN)


@pytest.mark.slow
def test_a_chain_run_loads_neither_the_other_commands_nor_sklearn_liac_arff_or_dask():
    status, output, modules = loaded_modules("-q", IRIS, "l2")
    assert status == 0
    schema, chunk = read_bytes(output)
    assert chunk.n_rows == 150
    assert top_level(modules).isdisjoint(OPTIONAL_LIBRARIES)
    assert modules.isdisjoint(NOT_FOR_THE_CHAIN)


@pytest.mark.slow
def test_a_command_loads_its_own_module_and_not_the_chain():
    status, output, modules = loaded_modules("info", IRIS)
    assert status == 0
    assert b"150" in output
    assert "filterkit.commands.info" in modules
    assert modules.isdisjoint({*CHAIN_RUN, "filterkit.commands.apply", "filterkit.commands.evaluate"})
    assert top_level(modules).isdisjoint(OPTIONAL_LIBRARIES)


def test_the_command_words_resolve_to_their_commands_and_the_chain_lists_stages_not_commands():
    root = click.Context(command_line, obj=PluginLoader())
    for word in COMMANDS:
        command = command_line.named_command(word)
        assert isinstance(command, click.Command) and command.name == word
    assert command_line.named_command("iris.arff") is None
    assert "l2" in command_line.list_commands(root) and "info" not in command_line.list_commands(root)
