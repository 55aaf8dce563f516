"""Plugins: discovery, --plugins-dir, failures that warn, strict mode, disabling, clashes, listing."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from importlib.metadata import EntryPoint

import numpy as np
import pytest

import filterkit
from chain_helpers import FIXTURE_PLUGINS, REAL, STAGES_DIR, read_bytes
from filterkit import hookspecs, plugins
from filterkit.arff import read_arff
from filterkit.errors import FilterkitError
from filterkit.plugins import load_plugins

BROKEN_DIR = FIXTURE_PLUGINS / "broken"
BROKEN_NAME = f"fails_to_import ({BROKEN_DIR / 'fails_to_import.py'})"
BROKEN_REASON = "it failed to import (ModuleNotFoundError: No module named 'filterkit_no_such_module')"
BROKEN_WARNING = (
    f"filterkit: warning: plugin '{BROKEN_NAME}' (distribution plugins-dir {BROKEN_DIR}) is skipped: "
    f"{BROKEN_REASON}; disable it with FILTERKIT_DISABLE_PLUGINS=fails_to_import\n"
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


def test_strict_mode_makes_the_import_error_fatal(filterkit_script, monkeypatch):
    result = filterkit_script(
        "--plugins-dir", BROKEN_DIR, REAL / "iris.arff", "l2", env={"FILTERKIT_STRICT_PLUGINS": "1"}
    )
    assert result.status == 1
    assert result.stdout == b""
    assert result.stderr == BROKEN_WARNING.replace("warning", "error").replace(
        "=fails_to_import", "=fails_to_import (FILTERKIT_STRICT_PLUGINS is set)"
    )
    monkeypatch.setenv("FILTERKIT_STRICT_PLUGINS", "true")
    with pytest.raises(FilterkitError, match="No module named 'filterkit_no_such_module'") as raised:
        load_plugins(BROKEN_DIR)
    assert isinstance(raised.value.__cause__, ModuleNotFoundError)
    for lenient in ("0", "false", "no", "off", ""):
        monkeypatch.setenv("FILTERKIT_STRICT_PLUGINS", lenient)
        assert "negate" in load_plugins(BROKEN_DIR).stages


def test_strict_mode_with_an_unknown_value_is_an_error_naming_the_variable(run_filterkit, monkeypatch):
    monkeypatch.setenv("FILTERKIT_STRICT_PLUGINS", "maybe")
    result = run_filterkit(REAL / "iris.arff", "l2")
    assert result.status == 1
    assert result.stderr == (
        "filterkit: error: FILTERKIT_STRICT_PLUGINS='maybe' is not one of 1, true, yes, on, 0, false, no, off\n"
    )


def test_a_plugins_dir_that_is_not_a_folder_is_an_error(run_filterkit, tmp_path):
    result = run_filterkit(REAL / "iris.arff", "l2", plugins_dir=tmp_path / "nowhere")
    assert result.status == 1
    assert result.stdout == b""
    assert result.stderr == f"filterkit: error: plugins folder '{tmp_path / 'nowhere'}' is not a folder\n"


def test_entry_point_that_fails_to_import_warns_once_naming_it(monkeypatch, capsys):
    installed = list(plugins.entry_points(plugins.GROUP))
    ghost = EntryPoint("ghost", "filterkit_ghost_plugin_module", plugins.GROUP)
    monkeypatch.setattr(filterkit.installed, "read_entry_points", lambda groups: ([*installed, ghost], []))
    registry = load_plugins()
    reason = "it failed to import (ModuleNotFoundError: No module named 'filterkit_ghost_plugin_module')"
    assert capsys.readouterr().err == (
        f"filterkit: warning: plugin 'ghost' (distribution ?) is skipped: {reason}; "
        "disable it with FILTERKIT_DISABLE_PLUGINS=ghost\n"
    )
    assert registry.skipped == [plugins.PluginProblem("ghost", "?", reason)]
    assert {"l1", "l2"} <= set(registry.stages)


@pytest.mark.parametrize("disabled", ["normalizers", "normalizers,fails_to_import", " fails_to_import , normalizers "])
def test_disabled_plugins_are_not_loaded(run_filterkit, monkeypatch, disabled):
    monkeypatch.setenv("FILTERKIT_DISABLE_PLUGINS", disabled)
    registry = load_plugins(BROKEN_DIR)
    assert "l2" not in registry.stages and "l1" not in registry.stages
    assert "negate" in registry.stages
    assert [p.plugin for p in registry.skipped] == ([] if "fails_to_import" in disabled else [BROKEN_NAME])
    assert registry.disabled == sorted(name.strip() for name in disabled.split(","))
    result = run_filterkit(REAL / "iris.arff", "l2")
    assert result.status == 2
    assert "No such command 'l2'" in result.stderr


LOADING_FAULTS = {
    # folder: (the plugin file's stem, what the warning says is wrong)
    "broken": ("fails_to_import", BROKEN_REASON),
    "bad_signature": (
        "extra_argument",
        "its register_stages takes colour, which the hook does not pass (it passes register, metrics)",
    ),
    "unknown_hook": (
        "widgets",
        "it implements 'register_widgets', not a filterkit hook "
        "(the hooks are register_metrics, register_classifiers, register_stemmers, register_formats, register_stages)",
    ),
    "no_summary": ("nameless", "stage 'silent' has neither a summary nor a docstring (in register_stages)"),
    "instance": (
        "instance",
        "it registered an instance of Identity where a stage class (a subclass of Stage) "
        "is expected (in register_stages)",
    ),
    "register_fails": ("raises_in_hook", "RuntimeError in register_stages: cannot make my stages today"),
    "duplicate": (
        "second_twin",
        "its stage 'twin' clashes with the stage 'twin' of plugin "
        "'first_twin ({folder}/first_twin.py)' (in register_stages)",
    ),
    "duplicate_builtin": (
        "my_l2",
        "its stage 'l2' clashes with the stage 'l2' of plugin 'normalizers' (in register_stages)",
    ),
    "metric_clash": (
        "l2_metric",
        "its metric 'l2' clashes with the stage 'l2' of plugins 'normalizers' and 'scorers' (in register_stages)",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("folder", sorted(LOADING_FAULTS))
def test_a_broken_plugin_is_skipped_with_one_warning_and_the_rest_works(run_filterkit, folder):
    directory = FIXTURE_PLUGINS / folder
    stem, reason = LOADING_FAULTS[folder]
    reason = reason.format(folder=directory)
    plugin = f"{stem} ({directory / (stem + '.py')})"
    warning = (
        f"filterkit: warning: plugin '{plugin}' (distribution plugins-dir {directory}) "
        f"is skipped: {reason}; disable it with FILTERKIT_DISABLE_PLUGINS={stem}\n"
    )
    result = run_filterkit(REAL / "iris.arff", "l2", plugins_dir=directory)
    assert (result.status, result.stderr) == (0, warning)
    _, original = read_arff(REAL / "iris.arff")
    _, out = read_bytes(result.stdout)
    np.testing.assert_allclose(out.values[:, :4], unit_rows(original.values[:, :4]), rtol=1e-12)
    listed = run_filterkit("plugins", "--json", plugins_dir=directory)
    assert (listed.status, listed.stderr) == (0, warning)
    listing = json.loads(listed.stdout)
    assert listing["skipped"] == [{"plugin": plugin, "distribution": f"plugins-dir {directory}", "reason": reason}]
    l2 = next(entry for entry in listing["stages"] if entry["name"] == "l2")
    assert l2["plugin"] == "normalizers"
    assert {"l1", "bns", "shape"} <= {entry["name"] for entry in listing["stages"]}
    assert run_filterkit("plugins", plugins_dir=directory).status == 0


@pytest.mark.parametrize("folder", sorted(LOADING_FAULTS))
def test_strict_mode_makes_each_loading_fault_fatal(run_filterkit, monkeypatch, folder):
    monkeypatch.setenv("FILTERKIT_STRICT_PLUGINS", "1")
    result = run_filterkit(REAL / "iris.arff", "l2", plugins_dir=FIXTURE_PLUGINS / folder)
    assert result.status == 1
    assert result.stdout == b""
    assert result.stderr.startswith("filterkit: error: plugin ")
    assert result.stderr.endswith("(FILTERKIT_STRICT_PLUGINS is set)\n")
    assert result.stderr.count("\n") == 1


def test_a_metric_plugin_skipped_for_a_clash_takes_no_built_in_with_it():
    registry = load_plugins(FIXTURE_PLUGINS / "metric_clash")
    assert registry.stages["l2"].plugin == "normalizers"
    assert "l2" not in registry.metrics
    scorers = {name for name, registered in registry.stages.items() if registered.plugin == "scorers"}
    assert scorers == set(registry.metrics) and len(scorers) == 17


def test_a_plugin_without_hookimpl_is_listed_with_a_hint(run_filterkit):
    directory = FIXTURE_PLUGINS / "no_hookimpl"
    plugin = f"forgot ({directory / 'forgot.py'})"
    hint = "no hook implementations: is @hookimpl missing? (register_stages is not marked)"
    warning = (
        f"filterkit: warning: plugin '{plugin}' (distribution plugins-dir {directory}) registers nothing: {hint}\n"
    )
    result = run_filterkit(REAL / "iris.arff", "l2", plugins_dir=directory)
    assert (result.status, result.stderr) == (0, warning)
    listing = json.loads(run_filterkit("plugins", "--json", plugins_dir=directory).stdout)
    assert listing["without_hooks"] == [{"plugin": plugin, "distribution": f"plugins-dir {directory}", "hint": hint}]
    assert "forgotten" not in {entry["name"] for entry in listing["stages"]}
    text = run_filterkit("plugins", plugins_dir=directory).stdout.decode().splitlines()
    assert text[text.index("registering nothing:") + 1] == f"  {plugin} (plugins-dir {directory}): {hint}"


def test_a_second_entry_point_of_one_name_is_skipped_with_a_warning(monkeypatch, capsys):
    installed = list(plugins.entry_points(plugins.GROUP))
    impostor = EntryPoint("normalizers", "filterkit_impostor_module", plugins.GROUP)
    monkeypatch.setattr(filterkit.installed, "read_entry_points", lambda groups: ([*installed, impostor], []))
    registry = load_plugins()
    reason = f"distribution filterkit-arff {filterkit.__version__} already has an entry point named 'normalizers'"
    assert registry.skipped == [plugins.PluginProblem("normalizers", "?", reason)]
    assert capsys.readouterr().err == (
        f"filterkit: warning: plugin 'normalizers' (distribution ?) is skipped: {reason}; "
        "silence it: pip uninstall ? (FILTERKIT_DISABLE_PLUGINS=normalizers would skip the plugin of that name "
        "too)\n"
    )
    assert registry.stages["l2"].plugin == "normalizers"
    # the switch it names no longer: it left out the built-in normalizers with the impostor (l2 was gone)
    monkeypatch.setenv("FILTERKIT_DISABLE_PLUGINS", "normalizers")
    assert "l2" not in load_plugins().stages


def test_a_plugin_file_named_like_a_built_in_plugin_is_not_told_to_use_its_switch(tmp_path, capsys):
    """A plugins-folder file's switch is its name: normalizers.py shares the built-in normalizers', which
    FILTERKIT_DISABLE_PLUGINS=normalizers, the advice it was given, would leave out too."""
    (tmp_path / "normalizers.py").write_text(
        'from filterkit.plugin import Stage, hookimpl\n\nclass L2(Stage):\n    """An impostor."""\n'
        '    name = "l2"\n    def transform(self, chunk):\n        return chunk\n\n'
        "@hookimpl\ndef register_stages(register):\n    register(L2)\n"
    )
    registry = load_plugins(tmp_path).complete()
    assert registry.stages["l2"].plugin == "normalizers" and "minmax" in registry.stages
    assert capsys.readouterr().err.endswith(
        "; silence it: remove or rename its file (FILTERKIT_DISABLE_PLUGINS=normalizers would skip the plugin of "
        "that name too)\n"
    )


def test_plugins_json_lists_stages_with_plugin_and_distribution_and_the_failures(run_filterkit):
    result = run_filterkit("plugins", "--json", plugins_dir=BROKEN_DIR)
    assert result.status == 0
    listing = json.loads(result.stdout)
    assert set(listing) == {
        *("stages", "metrics", "classifiers", "stemmers", "formats"),
        *("skipped", "without_hooks", "disabled"),
    }
    assert listing["stemmers"] == []  # none is built in
    formats = {entry["name"]: entry for entry in listing["formats"]}
    assert formats["csv"]["plugin"] == "formats" and formats["csv"]["summary"] == "reads and writes .csv"
    assert formats["parquet"]["summary"] == "reads .parquet, .pq"
    stages = {entry["name"]: entry for entry in listing["stages"]}
    for name in ("l1", "l2"):
        assert stages[name]["plugin"] == "normalizers"
        assert stages[name]["distribution"] == "filterkit-arff"
        assert stages[name]["version"] == filterkit.__version__
    assert "Euclidean length 1" in stages["l2"]["summary"]
    assert stages["negate"]["distribution"] == f"plugins-dir {BROKEN_DIR}"
    assert listing["skipped"] == [
        {"plugin": BROKEN_NAME, "distribution": f"plugins-dir {BROKEN_DIR}", "reason": BROKEN_REASON}
    ]
    assert result.stderr == BROKEN_WARNING


def test_plugins_text_listing(run_filterkit):
    result = run_filterkit("plugins", plugins_dir=BROKEN_DIR)
    assert result.status == 0
    lines = result.stdout.decode().splitlines()
    assert lines[0] == "stages:"
    l2 = next(line for line in lines if line.split()[:1] == ["l2"])
    assert l2.split()[1:4] == ["normalizers", "(filterkit-arff", f"{filterkit.__version__})"]
    skipped = lines.index("skipped:")
    assert lines[skipped + 1] == f"  {BROKEN_NAME} (plugins-dir {BROKEN_DIR}): {BROKEN_REASON}"


def test_builtin_stages_come_from_the_entry_point_group():
    registry = load_plugins()
    l2 = registry.stages["l2"]
    assert (l2.plugin, l2.distribution) == ("normalizers", "filterkit-arff")
    assert any(e.name == "normalizers" for e in plugins.entry_points("filterkit"))


@pytest.mark.slow
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


def test_a_format_whose_reader_cannot_be_imported_is_one_error_naming_it(run_filterkit, tmp_path):
    plugin_dir = tmp_path / "plugins"
    plugin_dir.mkdir()
    (plugin_dir / "formats_broken.py").write_text(
        "from filterkit.plugin import Format, hookimpl\n\n\n@hookimpl\ndef register_formats(register):\n"
        "    register(Format('gone', 'nowhere_module:Reader', suffixes=('.gone',)))\n"
        "    register(Format('misnamed', 'json:NoSuchReader', suffixes=('.misnamed',)))\n"
    )
    for suffix, said in ((".gone", "format 'gone': cannot import nowhere_module:Reader"),
                         (".misnamed", "format 'misnamed': json has no NoSuchReader")):  # fmt: skip
        (tmp_path / f"in{suffix}").write_text("x\n")
        result = run_filterkit(tmp_path / f"in{suffix}", plugins_dir=plugin_dir)
        assert (result.status, result.stdout) == (1, b"") and result.stderr.startswith(f"filterkit: error: {said}")


def test_a_format_named_in_capitals_is_skipped_as_it_could_never_be_looked_up(run_filterkit, tmp_path):
    (tmp_path / "upper.py").write_text(
        "from filterkit.plugin import Format, hookimpl\n\n\n@hookimpl\ndef register_formats(register):\n"
        "    register(Format('Upper', 'json:JSONDecoder', suffixes=('.upp',)))\n"
    )
    result = run_filterkit(REAL / "iris.arff", plugins_dir=tmp_path)
    assert result.status == 0 and "expected a name in lower case" in result.stderr
