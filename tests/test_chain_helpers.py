"""The shared plugin registry of the ``run_filterkit`` fixture (chain_helpers.installed_plugins_once):
reused only while a fresh discovery would find the same plugins, loaded afresh otherwise."""

from __future__ import annotations

from chain_helpers import installed_plugins_once
from filterkit import installed, plugins


def test_the_installed_plugins_are_discovered_once():
    first = installed_plugins_once()
    assert installed_plugins_once() is first
    assert "l2" in first.stages and first.skipped == []


def test_a_plugin_variable_or_a_patched_plugins_module_is_discovered_afresh(monkeypatch):
    shared = installed_plugins_once()
    monkeypatch.setenv("FILTERKIT_DISABLE_PLUGINS", "normalizers")
    without_normalizers = installed_plugins_once()
    assert without_normalizers is not shared and "l2" not in without_normalizers.stages
    monkeypatch.delenv("FILTERKIT_DISABLE_PLUGINS")
    real_name_and_version = installed._name_and_version

    def patched(distribution):
        name, version = real_name_and_version(distribution)
        return name, version + ".patched"

    monkeypatch.setattr(installed, "_name_and_version", patched)
    patched = installed_plugins_once()
    assert patched is not shared and patched.stages["l2"].version.endswith(".patched")
    monkeypatch.undo()
    assert installed_plugins_once() is shared


def test_a_plugins_folder_is_loaded_afresh(tmp_path):
    (tmp_path / "nothing.py").write_text("")
    assert installed_plugins_once(str(tmp_path)) is not installed_plugins_once(str(tmp_path))


def test_a_warning_issued_from_the_plugins_module_keeps_the_shared_registry():
    # a warning whose frame is filterkit.plugins' adds __warningregistry__ to its globals, which read as a
    # monkeypatch: the rest of that worker loaded afresh, and the identity checks above failed after it
    first = installed_plugins_once()
    added = "__warningregistry__" not in vars(plugins)
    vars(plugins).setdefault("__warningregistry__", {})
    try:
        assert installed_plugins_once() is first
    finally:
        if added:
            del vars(plugins)["__warningregistry__"]
