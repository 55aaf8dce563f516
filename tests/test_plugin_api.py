"""The plugin API (issue 48): one module, ``filterkit.plugin``, that the built-in plugins import filterkit
through, that exports exactly what docs/plugins.md documents, and that loads each name only when used."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

import filterkit.plugin

ROOT = Path(__file__).resolve().parent.parent
PLUGINS = sorted((ROOT / "plugins").glob("*.py"))


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """Every module a file imports, at any depth of its code, with the line: ``.x`` for a relative import."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            found += [
                (node.lineno, f"{module}.{alias.name}" if module == "filterkit" else module) for alias in node.names
            ]
    return found


@pytest.mark.parametrize("path", PLUGINS, ids=lambda path: path.name)
def test_a_built_in_plugin_imports_filterkit_only_through_the_plugin_api(path):
    strays = [
        f"{path.name}:{line}: {module}"
        for line, module in imported_modules(path)
        if module.startswith((".", "filterkit_plugins"))
        or (module.startswith("filterkit") and module != "filterkit.plugin")
    ]
    assert strays == []


def test_the_check_finds_an_import_of_another_plugin_or_of_a_core_module(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from filterkit.plugin import Stage\nfrom .housekeeping import nonzero_entries\n"
        "def f():\n    from filterkit import _kernels\n    import filterkit.metrics\n"
    )
    assert imported_modules(sample) == [
        (1, "filterkit.plugin"),
        (2, ".housekeeping"),
        (4, "filterkit._kernels"),
        (5, "filterkit.metrics"),
    ]


def test_every_exported_name_is_the_object_its_home_module_defines():
    for module, exports in filterkit.plugin._HOMES.items():
        for export in exports:
            original, _, renamed = export.partition(":")
            assert getattr(filterkit.plugin, renamed or original) is getattr(importlib.import_module(module), original)


def test_the_names_for_type_checkers_are_the_exported_names():
    tree = ast.parse((ROOT / "filterkit" / "plugin.py").read_text())
    guarded = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
    typed = set()
    for node in ast.walk(guarded):
        if isinstance(node, ast.ImportFrom):
            typed |= {alias.asname or alias.name for alias in node.names if node.module != "filterkit"}
        elif isinstance(node, ast.Assign):
            typed |= {
                element.id for target in node.targets for element in ast.walk(target) if isinstance(element, ast.Name)
            }
    assert typed == set(filterkit.plugin.__all__)


def test_docs_plugins_md_documents_exactly_the_exported_names():
    docs = (ROOT / "docs" / "plugins.md").read_text()
    section = docs.split("## The plugin API", 1)[1].split("\n## ", 1)[0]
    documented = {
        name
        for row in section.splitlines()
        if row.startswith("| `")
        for name in re.findall(r"`(\w+)`", row.split(" | ")[0])
    }
    assert documented == set(filterkit.plugin.__all__)


def test_an_unknown_name_is_an_attribute_error_naming_it():
    with pytest.raises(AttributeError, match="'Stag'"):
        filterkit.plugin.Stag  # noqa: B018


@pytest.mark.slow
def test_importing_the_plugin_api_imports_none_of_the_modules_behind_it():
    probe = (
        "import sys, filterkit.plugin\n"
        "print(sorted(m for m in ('filterkit.metrics', 'filterkit.statistics', 'filterkit.shaping', "
        "'filterkit.discretization', 'filterkit.classifier', 'scipy') if m in sys.modules))\n"
        "filterkit.plugin.Stage\n"
        "print('filterkit.stage' in sys.modules, 'filterkit.metrics' in sys.modules)\n"
    )
    completed = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    assert completed.stdout.splitlines() == ["[]", "True False"]
