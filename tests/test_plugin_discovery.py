"""Plugin discovery through ``importlib.metadata``: installed distributions' entry points load
the plugins with one warning per broken one, as pluggy's own loader finds them, and a distribution
whose ``entry_points.txt`` importlib.metadata cannot read is left out with a warning instead of a
traceback.  The fixture plugins of tests/plugins_fixtures are installed for these tests as a
distribution in a temporary folder."""

from __future__ import annotations

import importlib
import importlib.metadata
import sys
from pathlib import Path

import pluggy
import pytest

from filterkit import hookspecs, plugins

FIXTURES = Path(__file__).resolve().parent / "plugins_fixtures"


def install(folder: Path, name: str, version: str, entry_points: str, metadata: str | None = None) -> None:
    """A distribution's metadata folder, as pip installs it."""
    info = folder / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    header = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\nSummary: a test\n\nA README.\nName: not this\n"
    (info / "METADATA").write_text(header if metadata is None else metadata, encoding="utf-8")
    (info / "entry_points.txt").write_text(entry_points, encoding="utf-8")


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """Fixture plugins installed in two folders put on ``sys.path``, with the tricky cases
    importlib.metadata resolves: one distribution in both folders (the first is used),
    comments, blank lines and spaces in entry_points.txt, a folded METADATA header, a value
    naming an object in a module, a value that is not one, an entry point of another group."""
    first, second = tmp_path / "first", tmp_path / "second"
    install(
        first,
        "filterkit-fixtures",
        "1.0",
        "# the fixtures\n[filterkit]\nnegate = negate\n  fails_to_import=fails_to_import  \n\n"
        "  # tpr = negate\ntpr = true_positive_rate\nforgot = forgot\n[other]\nnegate = elsewhere\n",
    )
    install(second, "filterkit_fixtures", "2.0", "[filterkit]\nshadowed = negate\n")
    install(
        second,
        "filterkit.objects",
        "3.0",
        "[filterkit]\nobject = negate:Negate\nnot-a-value = -bad-\nattribute = negate:NoSuchThing\n",
        metadata="Metadata-Version: 2.1\nName: filterkit.objects\nSummary: folded\n  over two lines\nVersion: 3.0\n",
    )
    monkeypatch.syspath_prepend(str(FIXTURES / "no_hookimpl"))
    monkeypatch.syspath_prepend(str(FIXTURES / "metric"))
    monkeypatch.syspath_prepend(str(FIXTURES / "broken"))
    monkeypatch.setattr(sys, "path", [*sys.path, str(first), str(second)])
    importlib.invalidate_caches()
    yield
    for module in ("negate", "fails_to_import", "true_positive_rate", "forgot"):
        sys.modules.pop(module, None)


def loaded_registry(capsys) -> tuple:
    registry = plugins.load_plugins().complete()
    stages = {name: (r.plugin, r.distribution, r.version) for name, r in registry.stages.items()}
    metrics = {name: (r.plugin, r.distribution, r.version) for name, r in registry.metrics.items()}
    return stages, metrics, registry.skipped, registry.without_hooks, capsys.readouterr().err


def test_installed_plugins_load_with_one_warning_for_each_broken_one(installed, capsys):
    """Among them a distribution shadowed by one of its name earlier on ``sys.path``, comments and
    blank lines in entry_points.txt, a folded METADATA header, a value naming an object."""
    stages, metrics, skipped, without_hooks, warnings = loaded_registry(capsys)
    assert stages["negate"] == ("negate", "filterkit-fixtures", "1.0")
    assert metrics["tpr"] == ("tpr", "filterkit-fixtures", "1.0")
    assert [(problem.plugin, problem.distribution) for problem in skipped] == [
        ("attribute", "filterkit.objects"),
        ("fails_to_import", "filterkit-fixtures"),
        ("not-a-value", "filterkit.objects"),
    ]
    assert "(AttributeError: module 'negate' has no attribute 'NoSuchThing')" in skipped[0].reason
    assert "(ModuleNotFoundError: No module named 'filterkit_no_such_module')" in skipped[1].reason
    assert "(ValueError: invalid object reference '-bad-' (an entry point names module or" in skipped[2].reason
    assert [problem.plugin for problem in without_hooks] == ["forgot", "object"]  # a class, not a module of hooks
    assert warnings.count("filterkit: warning: ") == 5


def test_pluggy_finds_the_same_plugins(installed):
    """pluggy's ``load_setuptools_entrypoints`` (which stops at the first plugin that fails to
    load) registers, by name, the plugins discovery finds, the broken ones aside.  One
    difference, kept from filterkit 0.3.0: pluggy reads a distribution shadowed by another of
    its name earlier on ``sys.path`` too (here ``shadowed``, of filterkit_fixtures 2.0, which
    fails there as its module is registered already); importlib.metadata and filterkit do not."""
    manager = pluggy.PluginManager(plugins.GROUP)
    manager.add_hookspecs(hookspecs)
    broken = {"fails_to_import", "not-a-value", "attribute", "object"}
    for name in broken | {"shadowed"}:
        manager.set_blocked(name)
    manager.load_setuptools_entrypoints(plugins.GROUP)
    found = {point.name for point in plugins.entry_points(plugins.GROUP)}
    assert "shadowed" not in found
    assert {name for name, plugin in manager.list_name_plugin() if plugin is not None} == found - broken
    assert {"negate", "tpr", "forgot", "normalizers"} <= found - broken


@pytest.mark.parametrize(
    "text", [b"[filterkit]\nnoequals\ngood = good_module\n", b"[filterkit]\ngood = good_module\xff\n"]
)
def test_a_distribution_whose_entry_points_cannot_be_read_is_left_out_with_a_warning(
    text, tmp_path, monkeypatch, capsys
):
    """importlib.metadata raises on a line that is no entry point, or a file that is not UTF-8:
    a traceback on every run, whichever distribution holds it."""
    install(tmp_path, "broken", "1.0", "")
    (tmp_path / "broken-1.0.dist-info" / "entry_points.txt").write_bytes(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    points = plugins.entry_points(plugins.GROUP)
    distributions = {point.dist.metadata["Name"] for point in points}
    assert "filterkit-arff" in distributions and "broken" not in distributions
    warning = capsys.readouterr().err
    assert warning.startswith("filterkit: warning: distribution broken: its entry_points.txt cannot be read (")
    assert warning.endswith("); its plugins are left out\n") and warning.count("\n") == 1
    assert "l2" in plugins.load_plugins().stages


def test_a_table_of_names_that_cannot_be_read_is_left_out_with_a_warning(tmp_path, monkeypatch, capsys):
    """Its distribution's plugins are then loaded at once, as undeclared ones are."""
    install(
        tmp_path,
        "filterkit-declared",
        "1.0",
        "[filterkit]\nnegate = negate\n[filterkit.names]\ndeclared = filterkit_no_such_module:NAMES\n",
    )
    monkeypatch.syspath_prepend(str(FIXTURES / "broken"))
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        registry = plugins.load_plugins()
        assert registry.stages["negate"].distribution == "filterkit-declared"
    finally:
        sys.modules.pop("negate", None)
    assert not isinstance(registry.stages, plugins.PluginTable)
    assert capsys.readouterr().err == (
        "filterkit: warning: the names filterkit_no_such_module:NAMES of distribution filterkit-declared are left "
        "out (ModuleNotFoundError: No module named 'filterkit_no_such_module')\n"
    )


def test_a_distribution_declaring_its_names_is_loaded_as_they_are_looked_up(tmp_path, monkeypatch):
    (tmp_path / "negate_names.py").write_text('NAMES = {"negate": {"stage": ("negate",)}}\n')
    install(
        tmp_path,
        "filterkit-declared",
        "1.0",
        "[filterkit]\nnegate = negate\n[filterkit.names]\nd = negate_names:NAMES\n",
    )
    monkeypatch.syspath_prepend(str(FIXTURES / "broken"))
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("negate", None)
    try:
        registry = plugins.load_plugins()
        assert isinstance(registry.stages, plugins.PluginTable)
        assert "negate" not in sys.modules
        assert registry.stages["negate"].distribution == "filterkit-declared"
        assert "negate" in sys.modules and "words" in {candidate.name for candidate in registry._pending.waiting}
    finally:
        sys.modules.pop("negate", None)
        sys.modules.pop("negate_names", None)


def test_the_built_ins_installed_again_under_the_old_name_are_named_once(tmp_path, monkeypatch, capsys):
    """A checkout installed as 'filterkit' (before the distribution was renamed) and again as filterkit-arff:
    one warning names the old one and how to remove it, and the built-ins load once, from filterkit-arff."""
    built_in = importlib.metadata.distribution(plugins.BUILT_IN_DISTRIBUTION)
    lines = [f"{point.name} = {point.value}" for point in built_in.entry_points if point.group == plugins.GROUP]
    install(tmp_path, "filterkit", "0.3.0", "[filterkit]\n" + "\n".join(lines) + "\n")
    monkeypatch.setattr(sys, "path", [*sys.path, str(tmp_path)])
    importlib.invalidate_caches()
    stages, _, skipped, _, warnings = loaded_registry(capsys)
    assert warnings == (
        "filterkit: warning: distribution filterkit registers the same plugins as filterkit-arff: the same package "
        "installed twice (once under an old name?); its copy is not used: pip uninstall filterkit\n"
    )
    assert stages["l2"][1] == plugins.BUILT_IN_DISTRIBUTION and skipped == []
