"""The compiled modules are required: one missing, or built from other source than the Python beside it (a
checkout pulled without ``pip install -e .``), is one error line from the console script, not a traceback or
wrong output (each C source's ``INTERFACE`` number against :data:`filterkit.cli.COMPILED`)."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from filterkit.cli import COMPILED

ROOT = Path(__file__).resolve().parents[1]


def test_every_compiled_module_is_checked_and_built_with_its_source_s_interface():
    sources = {path: path.read_text(encoding="utf-8") for path in (ROOT / "filterkit").rglob("*.c")}
    assert len(sources) == len(COMPILED)
    for name, interface in COMPILED.items():
        source = ROOT / (name.replace(".", "/") + ".c")
        assert re.search(r"^#define INTERFACE (\d+)$", sources[source], re.MULTILINE)[1] == str(interface), source
        assert importlib.import_module(name).INTERFACE == interface


def console_script_with(name: str, stand_in: str) -> subprocess.CompletedProcess:
    """``filterkit --help`` with the module ``name`` replaced by ``stand_in`` (Python code for sys.modules)."""
    code = f"import sys, types\nsys.modules[{name!r}] = {stand_in}\nfrom filterkit.cli import main\nmain()"
    return subprocess.run([sys.executable, "-c", code, "--help"], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("name", sorted(COMPILED))
def test_a_missing_compiled_module_is_one_error_line(name):
    result = console_script_with(name, "None")
    assert (result.returncode, result.stdout) == (1, "")
    assert re.fullmatch(
        rf"filterkit: error: the compiled module {re.escape(name)} cannot be imported \(.*\): install filterkit "
        r"with a C compiler \(pip install \. or, in a checkout, pip install -e \.\)\n",
        result.stderr,
    ), result.stderr


def test_a_compiled_module_built_from_other_source_is_one_error_line():
    stand_in = "types.ModuleType('old'); sys.modules['filterkit._kernels'].__file__ = '/old/_kernels.so'"
    result = console_script_with("filterkit._kernels", stand_in)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (
        "filterkit: error: the compiled module filterkit._kernels (/old/_kernels.so) was built from other source "
        "than this filterkit's: rebuild it (pip install -e . in a checkout)\n"
    )
