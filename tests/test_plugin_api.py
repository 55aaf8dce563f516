"""The plugin API (issues 48 and 73): ``filterkit.plugin`` exports what a third-party plugin needs, as a literal
``__all__`` that type checkers read, each name documented in docs/plugins.md (written by
docs/make_plugin_api.py) and loaded only when used; the built-in plugins take those names from it, their
private helpers from the modules that define them, and import no other plugin and no compiled module."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

import filterkit.plugin

ROOT = Path(__file__).resolve().parent.parent
PLUGINS = sorted((ROOT / "plugins").glob("*.py"))
EXAMPLE_PLUGINS = sorted((ROOT / "examples").glob("*/filterkit_*.py"))


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


def imported_names(path: Path) -> list[tuple[int, str, str]]:
    """Every ``from filterkit… import NAME`` of a file: (line, module, NAME)."""
    return [
        (node.lineno, node.module, alias.name)
        for node in ast.walk(ast.parse(path.read_text(), str(path)))
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("filterkit.")
        for alias in node.names
    ]


@pytest.mark.parametrize("path", PLUGINS, ids=lambda path: path.name)
def test_a_built_in_plugin_imports_no_other_plugin_and_no_compiled_module(path):
    strays = [
        f"{path.name}:{line}: {module}"
        for line, module in imported_modules(path)
        if module.startswith((".", "filterkit_plugins"))
        or (module.startswith("filterkit.") and any(part.startswith("_") for part in module.split(".")))
    ]
    assert strays == []


@pytest.mark.parametrize("path", PLUGINS, ids=lambda path: path.name)
def test_a_built_in_plugin_takes_the_names_of_the_plugin_api_from_it(path):
    strays = [
        f"{path.name}:{line}: {name} from {module}"
        for line, module, name in imported_names(path)
        if name in filterkit.plugin.__all__ and module != "filterkit.plugin"
    ]
    assert strays == []


@pytest.mark.parametrize("path", EXAMPLE_PLUGINS, ids=lambda path: path.name)
def test_an_example_plugin_imports_filterkit_only_through_the_plugin_api(path):
    strays = [
        f"{path.name}:{line}: {module}"
        for line, module in imported_modules(path)
        if module.startswith("filterkit") and module != "filterkit.plugin"
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
    for module, names in filterkit.plugin._HOMES.items():
        for name in names:
            assert getattr(filterkit.plugin, name) is getattr(importlib.import_module(module), name)


def test_all_the_homes_and_the_names_for_type_checkers_list_the_same_names():
    tree = ast.parse((ROOT / "filterkit" / "plugin.py").read_text())
    guarded = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
    aliases = [alias for node in ast.walk(guarded) if isinstance(node, ast.ImportFrom) for alias in node.names]
    assert all(alias.asname == alias.name for alias in aliases), "re-export each name as `import X as X`"
    homes = [name for names in filterkit.plugin._HOMES.values() for name in names]
    assert sorted(homes) == sorted(alias.name for alias in aliases) == sorted(filterkit.plugin.__all__)
    assert len(set(homes)) == len(homes)


def test_all_is_a_literal_list():
    tree = ast.parse((ROOT / "filterkit" / "plugin.py").read_text())
    assigned = next(
        node for node in tree.body if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "__all__"
    )
    assert ast.literal_eval(assigned.value) == filterkit.plugin.__all__


def test_docs_plugins_md_is_what_make_plugin_api_writes():
    spec = importlib.util.spec_from_file_location("make_plugin_api", ROOT / "docs" / "make_plugin_api.py")
    assert spec is not None and spec.loader is not None
    make_plugin_api = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_plugin_api)
    written = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
    assert written == make_plugin_api.page(), "docs/plugins.md is out of date: run python docs/make_plugin_api.py"


def test_every_exported_name_has_a_documented_heading_and_a_description():
    section = (ROOT / "docs" / "plugins.md").read_text().split("## The plugin API", 1)[1].split("\n## ", 1)[0]
    entries = dict(re.findall(r"^#### `(\w+)`\n\n```python\n.*?\n```\n\n(.*?)\n", section, flags=re.M | re.S))
    assert sorted(entries) == sorted(filterkit.plugin.__all__)
    assert [name for name, text in entries.items() if not text.strip()] == []


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
