"""Plugins: discovery, --plugins-dir, failures that warn, strict mode, disabling, clashes, listing."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from importlib.metadata import EntryPoint

import numpy as np
import pytest

from chain_helpers import FIXTURE_PLUGINS, REAL, STAGES_DIR, read_bytes
from filterkit import hookspecs, plugins
from filterkit.arff import read_arff
from filterkit.errors import FilterkitError
from filterkit.plugins import load_plugins

BROKEN_DIR = FIXTURE_PLUGINS / "broken"
BROKEN_NAME = f"fails_to_import ({BROKEN_DIR / 'fails_to_import.py'})"
BROKEN_WARNING = (
    f"filterkit: warning: plugin '{BROKEN_NAME}' failed to load and is skipped "
    "(ModuleNotFoundError: No module named 'filterkit_no_such_module')\n"
)


def unit_rows(values: np.ndarray) -> np.ndarray:
    return values / np.linalg.norm(values, axis=1)[:, None]


@pytest.mark.parametrize("spelling", ["separate", "equals"])
def test_plugins_dir_stage_runs_in_a_chain_with_l2(filterkit_script, spelling):
    option = ["--plugins-dir", str(STAGES_DIR)] if spelling == "separate" else [f"--plugins-dir={STAGES_DIR}"]
    result = filterkit_script(*option, REAL / "iris.arff", "meanscale", "l2")
    assert result.status == 0, result.stderr
    assert result.stderr == ""
    _, original = read_arff(REAL / "iris.arff")
    features = original.values[:, :4]
    _, out = read_bytes(result.stdout)
    np.testing.assert_allclose(out.values[:, :4], unit_rows(features / np.abs(features).mean(axis=0)), rtol=1e-12)
    np.testing.assert_array_equal(out.values[:, 4], original.values[:, 4])


def test_plugin_that_fails_to_import_warns_once_and_the_rest_works(filterkit_script):
    result = filterkit_script("--plugins-dir", BROKEN_DIR, REAL / "iris.arff", "negate", "l2")
    assert result.status == 0
    assert result.stderr == BROKEN_WARNING
    _, original = read_arff(REAL / "iris.arff")
    _, out = read_bytes(result.stdout)
    np.testing.assert_allclose(out.values[:, :4], -unit_rows(original.values[:, :4]), rtol=1e-12)


def test_strict_mode_reraises_the_import_error(filterkit_script, monkeypatch):
    result = filterkit_script(
        "--plugins-dir", BROKEN_DIR, REAL / "iris.arff", "l2", env={"FILTERKIT_STRICT_PLUGINS": "1"}
    )
    assert result.status == 1
    assert result.stdout == b""
    assert "ModuleNotFoundError: No module named 'filterkit_no_such_module'" in result.stderr
    monkeypatch.setenv("FILTERKIT_STRICT_PLUGINS", "1")
    with pytest.raises(ModuleNotFoundError):
        load_plugins(BROKEN_DIR)
    monkeypatch.setenv("FILTERKIT_STRICT_PLUGINS", "0")
    assert "negate" in load_plugins(BROKEN_DIR).stages


def test_entry_point_that_fails_to_import_warns_once_naming_it(monkeypatch, capsys):
    installed = list(plugins.entry_points(group=plugins.GROUP))
    ghost = EntryPoint("ghost", "filterkit_ghost_plugin_module", plugins.GROUP)
    monkeypatch.setattr(plugins, "entry_points", lambda group: [*installed, ghost])
    registry = load_plugins()
    assert capsys.readouterr().err == (
        "filterkit: warning: plugin 'ghost' failed to load and is skipped "
        "(ModuleNotFoundError: No module named 'filterkit_ghost_plugin_module')\n"
    )
    assert registry.failed == [("ghost", "ModuleNotFoundError: No module named 'filterkit_ghost_plugin_module'")]
    assert {"l1", "l2"} <= set(registry.stages)


def test_plugin_whose_hook_raises_is_skipped_with_a_warning(run_filterkit):
    folder = FIXTURE_PLUGINS / "register_fails"
    result = run_filterkit(REAL / "iris.arff", "l2", plugins_dir=folder)
    assert result.status == 0
    assert result.stderr == (
        f"filterkit: warning: plugin 'raises_in_hook ({folder / 'raises_in_hook.py'})' failed to register "
        "and is skipped (RuntimeError in register_stages: cannot make my stages today)\n"
    )


@pytest.mark.parametrize("disabled", ["normalizers", "normalizers,fails_to_import", " fails_to_import , normalizers "])
def test_disabled_plugins_are_not_loaded(run_filterkit, monkeypatch, disabled):
    monkeypatch.setenv("FILTERKIT_DISABLE_PLUGINS", disabled)
    registry = load_plugins(BROKEN_DIR)
    assert "l2" not in registry.stages and "l1" not in registry.stages
    assert "negate" in registry.stages
    assert [name for name, _ in registry.failed] == ([] if "fails_to_import" in disabled else [BROKEN_NAME])
    result = run_filterkit(REAL / "iris.arff", "l2")
    assert result.status == 2
    assert "No such command 'l2'" in result.stderr


@pytest.mark.parametrize(
    "folder, first, second",
    [
        ("duplicate", "'first_twin ({d}/first_twin.py)' (plugins-dir {d})",
         "'second_twin ({d}/second_twin.py)' (plugins-dir {d})"),
        ("duplicate_builtin", "'normalizers' (filterkit)", "'my_l2 ({d}/my_l2.py)' (plugins-dir {d})"),
    ],
)
def test_two_plugins_registering_one_name_is_an_error_naming_both(run_filterkit, folder, first, second):
    directory = FIXTURE_PLUGINS / folder
    name = "twin" if folder == "duplicate" else "l2"
    result = run_filterkit(REAL / "iris.arff", plugins_dir=directory)
    assert result.status == 1
    assert result.stdout == b""
    assert result.stderr == (
        f"filterkit: error: two plugins register '{name}': {first.format(d=directory)} and "
        f"{second.format(d=directory)}; disable one with FILTERKIT_DISABLE_PLUGINS\n"
    )


def test_plugin_implementing_an_unknown_hook_is_an_error(run_filterkit):
    result = run_filterkit(REAL / "iris.arff", "l2", plugins_dir=FIXTURE_PLUGINS / "unknown_hook")
    assert result.status == 1
    assert result.stderr.startswith("filterkit: error: plugin ")
    assert "unknown hook 'register_widgets'" in result.stderr
    assert str(FIXTURE_PLUGINS / "unknown_hook" / "widgets.py") in result.stderr
    with pytest.raises(FilterkitError, match="implements an unknown hook"):
        load_plugins(FIXTURE_PLUGINS / "unknown_hook")


def test_plugins_json_lists_stages_with_plugin_and_distribution_and_the_failures(run_filterkit):
    result = run_filterkit("plugins", "--json", plugins_dir=BROKEN_DIR)
    assert result.status == 0
    listing = json.loads(result.stdout)
    assert set(listing) == {"stages", "metrics", "classifiers", "failed"}
    stages = {entry["name"]: entry for entry in listing["stages"]}
    for name in ("l1", "l2"):
        assert stages[name]["plugin"] == "normalizers"
        assert stages[name]["distribution"] == "filterkit"
    assert "Euclidean length 1" in stages["l2"]["summary"]
    assert stages["negate"]["distribution"] == f"plugins-dir {BROKEN_DIR}"
    assert listing["failed"] == [
        {"plugin": BROKEN_NAME, "error": "ModuleNotFoundError: No module named 'filterkit_no_such_module'"}
    ]
    assert result.stderr == BROKEN_WARNING


def test_plugins_text_listing(run_filterkit):
    result = run_filterkit("plugins", plugins_dir=BROKEN_DIR)
    assert result.status == 0
    lines = result.stdout.decode().splitlines()
    assert lines[0] == "stages:"
    l2 = next(line for line in lines if line.split()[:1] == ["l2"])
    assert l2.split()[1:3] == ["normalizers", "(filterkit)"]
    failed = lines.index("failed to load:")
    assert lines[failed + 1] == f"  {BROKEN_NAME}: ModuleNotFoundError: No module named 'filterkit_no_such_module'"


def test_builtin_stages_come_from_the_entry_point_group():
    registry = load_plugins()
    l2 = registry.stages["l2"]
    assert (l2.plugin, l2.distribution) == ("normalizers", "filterkit")
    assert any(e.name == "normalizers" for e in plugins.entry_points(group="filterkit"))


def test_the_framework_imports_no_concrete_stage():
    code = (
        "import sys, filterkit.cli, filterkit.runner, filterkit.model, filterkit.plugins, filterkit.stage\n"
        "print(sorted(m for m in sys.modules if m.startswith('filterkit_plugins')))"
    )
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "[]"


def test_every_hook_is_documented():
    hooks = [f for name, f in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("register_")]
    assert {f.__name__ for f in hooks} >= {"register_stages", "register_metrics", "register_classifiers"}
    assert all(inspect.getdoc(f) for f in hooks)
