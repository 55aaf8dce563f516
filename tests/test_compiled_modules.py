"""The compiled modules are required: one missing, or built from other source than the Python beside it (a
checkout pulled without ``pip install -e .``), is one error line from the console script and a FilterkitError
for a library that imports filterkit, not a traceback or wrong output (each C source's ``INTERFACE`` number
against :data:`filterkit.kernels.INTERFACES`, checked when :mod:`filterkit.kernels` is imported)."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from filterkit.kernels import INTERFACES

ROOT = Path(__file__).resolve().parents[1]


def test_every_compiled_module_is_checked_and_built_with_its_source_s_interface():
    sources = {path: path.read_text(encoding="utf-8") for path in (ROOT / "filterkit").rglob("*.c")}
    modules = {path for path, source in sources.items() if "PyMODINIT_FUNC" in source}
    assert modules == {ROOT / (name.replace(".", "/") + ".c") for name in INTERFACES}
    for name, interface in INTERFACES.items():
        source = ROOT / (name.replace(".", "/") + ".c")
        assert re.search(r"^#define INTERFACE (\d+)$", sources[source], re.MULTILINE)[1] == str(interface), source
        assert importlib.import_module(name).INTERFACE == interface


def console_script_with(name: str, stand_in: str) -> subprocess.CompletedProcess:
    """``filterkit --help`` with the module ``name`` replaced by ``stand_in`` (Python code for sys.modules)."""
    code = f"import sys, types\nsys.modules[{name!r}] = {stand_in}\nfrom filterkit.cli import main\nmain()"
    return subprocess.run([sys.executable, "-c", code, "--help"], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("name", sorted(INTERFACES))
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


@pytest.mark.slow
def test_a_library_user_gets_the_check_when_filterkit_reads_a_file():
    code = (
        "import sys, types\nsys.modules['filterkit._kernels'] = types.ModuleType('old')\n"
        "sys.modules['filterkit._kernels'].__file__ = '/old/_kernels.so'\n"
        "from filterkit.errors import FilterkitError\n"
        "try:\n    from filterkit.arff import read_arff\nexcept FilterkitError as error:\n    print(error)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == (
        "the compiled module filterkit._kernels (/old/_kernels.so) was built from other source than this "
        "filterkit's: rebuild it (pip install -e . in a checkout)\n"
    )


@pytest.mark.parametrize(
    ("kernel", "first"),
    [
        ("sparse_entries", "indptr"),
        ("value_counts", "indptr"),
        ("presence_counts", "indptr"),
        ("shape_stored", "indices"),
    ],
)
def test_the_kernels_of_many_arguments_take_them_by_name(kernel, first):
    from filterkit import kernels

    with pytest.raises(TypeError, match=f"missing required argument '{first}'"):
        getattr(kernels.arrays, kernel)()
