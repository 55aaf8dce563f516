"""filterkit's modules import one another without a circle (issue 48, item 4).

Every import statement counts, the ones inside a function too: filterkit imports some modules late so
that a run loads only what it uses (tests/test_startup_imports.py), which changes when a module loads,
not what depends on what; a late import that closes a circle is still a circle, one that merely waits
for its first call to show up.
"""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "filterkit"


def module_name(path: Path) -> str:
    """The dotted name of the module in ``path``, a package by its ``__init__.py``."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(name: str) -> bool:
    """Whether ``name`` is a module of filterkit: a Python file, a package or a compiled extension."""
    path = PACKAGE.parent.joinpath(*name.split("."))
    return path.is_dir() or (path.parent.is_dir() and any(path.parent.glob(f"{path.name}.*")))


def imported(tree: ast.Module, package: str) -> set[str]:
    """The filterkit modules ``tree`` imports anywhere in it: ``from P import N`` imports the module
    ``P.N`` where there is one, else ``P``; a relative import is resolved from ``package``."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            for alias in node.names:
                names.add(f"{base}.{alias.name}" if is_module(f"{base}.{alias.name}") else base)
    return {name for name in names if name.split(".")[0] == PACKAGE.name and is_module(name)}


@functools.cache
def import_graph() -> dict[str, set[str]]:
    """Each filterkit Python module and the filterkit modules it imports (parsed once per session:
    the tests only read it)."""
    graph = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = module_name(path)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        graph[name] = imported(ast.parse(path.read_text(encoding="utf-8")), package) - {name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Circles of imports, as the modules around each (a depth-first search from each module not yet
    on a circle found, back to it); none when there is no circle."""
    found: list[list[str]] = []
    on_circle: set[str] = set()
    for start in sorted(graph):
        if start in on_circle:
            continue
        path, pending, visited = [start], [iter(sorted(graph[start]))], {start}
        while pending:
            following = next(pending[-1], None)
            if following is None:
                pending.pop()
                path.pop()
            elif following == start:
                found.append([*path, start])
                on_circle.update(path)
                break
            elif following in graph and following not in visited:
                visited.add(following)
                path.append(following)
                pending.append(iter(sorted(graph[following])))
    return found


def test_the_graph_sees_imports_inside_functions_and_of_submodules():
    graph = import_graph()
    assert "filterkit.running" in graph["filterkit.evaluation"]  # inside evaluation.opened_input only
    assert "filterkit.kernels" in graph["filterkit.arff.reader"]  # from filterkit import kernels
    assert "filterkit.arff" not in graph["filterkit.arff.reader"]
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]


def test_no_filterkit_module_imports_itself_through_others():
    assert circles(import_graph()) == []


@pytest.mark.slow
def test_importing_the_kernels_runs_no_module_that_imports_them():
    """``filterkit.kernels`` imports the compiled ``filterkit.arff._speedups`` by name, which runs the
    ``filterkit.arff`` package first: that package loads its reader (which imports the kernels) only when
    a name of it is used, so the kernels are never half made when the reader takes them."""
    probe = "import sys, filterkit.kernels\nprint(sorted(m for m in sys.modules if m.startswith('filterkit.arff.')))"
    completed = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    assert completed.stdout.strip() == "['filterkit.arff._speedups']"
