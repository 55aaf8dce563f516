"""Plugin discovery without importing importlib.metadata (issue 20, start-up):
``filterkit.plugins.entry_points`` finds what ``importlib.metadata.entry_points`` finds (the same
distributions, names, values, metadata, the same ``load``), and ``load_plugins`` built on it
loads the same plugins with the same warnings as on importlib.metadata; pluggy's own loader,
``load_setuptools_entrypoints``, finds the same plugins.  The fixture plugins of
tests/plugins_fixtures are installed for these tests as a distribution in a temporary folder."""

from __future__ import annotations

import importlib
import importlib.metadata
import sys
from pathlib import Path

import pluggy
import pytest

from filterkit import hookspecs, plugins

FIXTURES = Path(__file__).resolve().parent / "plugins_fixtures"


def described(points) -> list[tuple]:
    """What a run uses of each entry point: its name, value, group and distribution."""
    return [(p.name, p.value, p.group, p.dist.metadata["Name"], p.dist.metadata["Version"]) for p in points]


def every_group() -> list[str]:
    return sorted({point.group for dist in importlib.metadata.distributions() for point in dist.entry_points})


def test_every_installed_group_is_found_as_importlib_metadata_finds_it():
    groups = every_group()
    assert {"filterkit", "filterkit.names", "console_scripts"} <= set(groups)
    for group in groups:
        assert described(plugins.entry_points(group=group)) == described(
            importlib.metadata.entry_points(group=group)
        ), group


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


def test_installed_fixture_plugins_are_found_as_importlib_metadata_finds_them(installed):
    ours = plugins.entry_points(group="filterkit")
    theirs = list(importlib.metadata.entry_points(group="filterkit"))
    assert described(ours) == described(theirs)
    assert [(p.name, p.dist.metadata["Name"]) for p in ours if p.dist.metadata["Name"] != "filterkit"] == [
        ("negate", "filterkit-fixtures"),
        ("fails_to_import", "filterkit-fixtures"),
        ("tpr", "filterkit-fixtures"),
        ("forgot", "filterkit-fixtures"),
        ("object", "filterkit.objects"),
        ("not-a-value", "filterkit.objects"),
        ("attribute", "filterkit.objects"),
    ]
    for mine, importlibs in zip(ours, theirs):
        assert outcome(mine.load) == outcome(importlibs.load), mine.name


def outcome(load) -> tuple:
    """What loading an entry point gives: the object, or the error's type and message."""
    try:
        return ("loaded", load())
    except Exception as error:
        return ("error", type(error).__name__, str(error))


def loaded_registry(capsys) -> tuple:
    registry = plugins.load_plugins().complete()
    stages = {name: (r.plugin, r.distribution, r.version) for name, r in registry.stages.items()}
    metrics = {name: (r.plugin, r.distribution, r.version) for name, r in registry.metrics.items()}
    return stages, metrics, registry.skipped, registry.without_hooks, capsys.readouterr().err


def test_load_plugins_loads_the_same_plugins_with_the_same_warnings_as_on_importlib_metadata(
    installed, monkeypatch, capsys
):
    ours = loaded_registry(capsys)
    with monkeypatch.context() as patched:
        patched.setattr(plugins, "entry_points", importlib.metadata.entry_points)
        theirs = loaded_registry(capsys)
    assert ours == theirs
    stages, metrics, skipped, without_hooks, warnings = ours
    assert stages["negate"] == ("negate", "filterkit-fixtures", "1.0")
    assert metrics["tpr"] == ("tpr", "filterkit-fixtures", "1.0")
    assert [(problem.plugin, problem.distribution) for problem in skipped] == [
        ("attribute", "filterkit.objects"),
        ("fails_to_import", "filterkit-fixtures"),
        ("not-a-value", "filterkit.objects"),
    ]
    assert "(AttributeError: module 'negate' has no attribute 'NoSuchThing')" in skipped[0].reason
    assert "(ModuleNotFoundError: No module named 'filterkit_no_such_module')" in skipped[1].reason
    assert (  # ours and theirs alike: which message depends on the importlib.metadata that reads the value
        "(AttributeError: 'NoneType' object has no attribute 'group')" in skipped[2].reason  # Python 3.11's
        or "(ValueError: ('Invalid object reference." in skipped[2].reason  # importlib_metadata 7+ (Dask imports it)
    )
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
    found = {point.name for point in plugins.entry_points(group=plugins.GROUP)}
    assert "shadowed" not in found
    assert {name for name, plugin in manager.list_name_plugin() if plugin is not None} == found - broken
    assert {"negate", "tpr", "forgot", "normalizers"} <= found - broken


def test_an_unusual_environment_is_left_to_importlib_metadata(installed, monkeypatch, tmp_path):
    """A zip file on ``sys.path`` (or an egg, or another finder of distributions): importlib.metadata reads it."""
    zipped = tmp_path / "plugins.zip"
    zipped.write_bytes(b"PK\x05\x06" + bytes(18))  # an empty zip archive
    monkeypatch.setattr(sys, "path", [*sys.path, str(zipped)])
    assert plugins._metadata_folders() is None
    assert described(plugins.entry_points(group="filterkit")) == described(
        importlib.metadata.entry_points(group="filterkit")
    )


def test_a_line_that_is_no_entry_point_is_left_out_with_a_warning(tmp_path, capsys):
    """importlib.metadata raises on it (a traceback on every run, whichever distribution holds it);
    filterkit leaves the line out, warning when it is in one of filterkit's groups."""
    folder = tmp_path / "broken-1.0.dist-info"
    folder.mkdir()
    (folder / "METADATA").write_text("Metadata-Version: 2.1\nName: broken\nVersion: 1.0\n")
    (folder / "entry_points.txt").write_text("[filterkit]\nnoequals\ngood = good_module\n\n[other]\nalso bad\n")
    points = plugins._FolderDistribution(str(folder)).entry_points
    assert [(point.name, point.value, point.group) for point in points] == [("good", "good_module", "filterkit")]
    warnings = capsys.readouterr().err
    assert warnings == (
        f"filterkit: warning: {folder}/entry_points.txt: 'noequals' in [filterkit] is not NAME = VALUE; left out\n"
    )


def test_an_entry_points_file_that_is_not_utf8_is_left_out_with_a_warning(tmp_path, capsys):
    folder = tmp_path / "garbled-1.0.dist-info"
    folder.mkdir()
    (folder / "METADATA").write_text("Metadata-Version: 2.1\nName: garbled\nVersion: 1.0\n")
    (folder / "entry_points.txt").write_bytes(b"[filterkit]\ngood = good_module\xff\n")
    assert list(plugins._FolderDistribution(str(folder)).entry_points) == []
    warning = capsys.readouterr().err
    assert warning.startswith(f"filterkit: warning: {folder}/entry_points.txt: not UTF-8 text (")
    assert warning.endswith("; left out\n") and warning.count("\n") == 1
