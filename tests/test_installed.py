"""The console script's remembered entry points (filterkit.installed): recalled only while the installed
distributions are those it found them in, the same as importlib.metadata finds, warnings included."""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import subprocess
import sys
import time
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
from test_plugin_discovery import FIXTURES, install

from filterkit import installed, plugins

GROUPS = (plugins.GROUP, plugins.NAMES_GROUP)


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A folder of one fixture distribution on ``sys.path``, and a cache folder of the test's own."""
    folder = tmp_path / "site"
    install(folder, "filterkit-fixtures", "1.0", "[filterkit]\nnegate = negate\n")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.syspath_prepend(str(FIXTURES / "broken"))
    monkeypatch.syspath_prepend(str(folder))
    importlib.invalidate_caches()
    yield folder
    sys.modules.pop("negate", None)


def recalled():
    """What a run would recall now."""
    mark = installed.fingerprint()
    return None if mark is None else installed.recall(GROUPS, mark)


def found_now() -> list[tuple]:
    return [tuple(point) for point in plugins._installed_entry_points(remember=False)]


def test_what_is_recalled_is_what_discovery_finds(site):
    assert recalled() is None  # nothing kept yet
    first = [tuple(point) for point in plugins._installed_entry_points(remember=True)]
    assert first == found_now()
    assert ("filterkit", "negate", "negate", "filterkit-fixtures", "1.0") in first
    assert ("filterkit.names", "filterkit", "filterkit_plugins:NAMES") in {point[:3] for point in first}
    points, warnings = recalled()
    assert [tuple(point) for point in points] == first and warnings == []
    assert [tuple(point) for point in plugins._installed_entry_points(remember=True)] == first


@pytest.mark.parametrize(
    "change",
    [
        "rewrite entry_points.txt",
        "add a distribution",
        "remove a distribution",
        "rewrite METADATA",
    ],
)
def test_a_change_to_the_installed_distributions_is_found_afresh(site, change):
    plugins._installed_entry_points(remember=True)
    assert recalled() is not None
    info = site / "filterkit_fixtures-1.0.dist-info"
    if change == "rewrite entry_points.txt":
        (info / "entry_points.txt").write_text("[filterkit]\nnegated = negate\n")
    elif change == "add a distribution":
        install(site, "filterkit-more", "2.0", "[filterkit]\nmore = negate\n")
    elif change == "remove a distribution":
        for file in info.iterdir():
            file.unlink()
        info.rmdir()
    else:
        text = (info / "METADATA").read_text().replace("Version: 1.0", "Version: 1.1")
        (info / "METADATA").write_text(text)
    importlib.invalidate_caches()
    assert recalled() is None
    again = [tuple(point) for point in plugins._installed_entry_points(remember=True)]
    assert again == found_now()
    assert recalled()[0] == [list(point) for point in again]


def test_another_sys_path_is_found_afresh(site, tmp_path, monkeypatch):
    plugins._installed_entry_points(remember=True)
    other = tmp_path / "other"
    install(other, "filterkit-other", "3.0", "[filterkit]\nother = negate\n")
    monkeypatch.syspath_prepend(str(other))
    assert recalled() is None
    assert ("filterkit", "other", "negate", "filterkit-other", "3.0") in {
        tuple(p) for p in plugins._installed_entry_points(remember=True)
    }


def test_the_warnings_of_an_unreadable_entry_points_file_are_given_again(site, capsys):
    install(site, "broken", "1.0", "")
    (site / "broken-1.0.dist-info" / "entry_points.txt").write_bytes(b"[filterkit]\nnoequals\n")
    first = plugins._installed_entry_points(remember=True)
    warning = capsys.readouterr().err
    assert warning.startswith("filterkit: warning: distribution broken: its entry_points.txt cannot be read (")
    assert plugins._installed_entry_points(remember=True) == first
    assert capsys.readouterr().err == warning


@pytest.mark.parametrize(
    "content",
    ["", "{", '{"fingerprint": 1}', "[]", '{"fingerprint": [], "entry_points": 3}', *range(3)],
)
def test_a_cache_file_that_cannot_be_read_is_passed_over(site, content):
    """Not JSON, not its form, or (a number here) its fingerprint right but its entry points or warnings not."""
    plugins._installed_entry_points(remember=True)
    (cache,) = (site.parent / "cache" / "filterkit").iterdir()
    if isinstance(content, int):
        kept = json.loads(cache.read_text())
        field, value = [("entry_points", [1]), ("entry_points", [["filterkit", "l2"]]), ("warnings", [None])][content]
        content = json.dumps({**kept, field: value})
    cache.write_text(content)
    assert recalled() is None
    assert [tuple(p) for p in plugins._installed_entry_points(remember=True)] == found_now()
    assert recalled() is not None  # written again


def test_a_cache_folder_that_cannot_be_written_is_passed_over(site, monkeypatch, tmp_path):
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the folder would be")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    assert [tuple(p) for p in plugins._installed_entry_points(remember=True)] == found_now()
    assert recalled() is None


def test_another_meta_path_finder_is_never_recalled(site, monkeypatch):
    class Finder:
        def find_spec(self, *arguments):
            return None

        def find_distributions(self, context=None):
            return iter(())

    plugins._installed_entry_points(remember=True)
    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, Finder()])
    assert installed.fingerprint() is None and recalled() is None


def test_a_rewrite_keeping_size_and_times_is_found_afresh(site):
    """As a copy with ``cp -p`` or a build with fixed timestamps makes: the files' bytes are what count."""
    plugins._installed_entry_points(remember=True)
    entry_points = site / "filterkit_fixtures-1.0.dist-info" / "entry_points.txt"
    status = entry_points.stat()
    entry_points.write_text(entry_points.read_text().replace("negate = negate", "negatf = negate"))
    os.utime(entry_points, ns=(status.st_atime_ns, status.st_mtime_ns))
    assert entry_points.stat().st_size == status.st_size and entry_points.stat().st_mtime_ns == status.st_mtime_ns
    assert recalled() is None
    assert ("filterkit", "negatf", "negate", "filterkit-fixtures", "1.0") in found_now()


def test_a_distribution_installed_while_they_are_found_is_not_left_out_for_good(site, monkeypatch):
    """What was found under the fingerprint before is kept only if the fingerprint is still that one."""
    real_name_and_version = installed._name_and_version

    def installing_meanwhile(distribution):
        if not (site / "filterkit_late-1.0.dist-info").exists():
            install(site, "filterkit-late", "1.0", "[filterkit]\nlate = negate\n")
        return real_name_and_version(distribution)

    monkeypatch.setattr(installed, "_name_and_version", installing_meanwhile)
    plugins._installed_entry_points(remember=True)
    assert recalled() is None  # nothing kept: the distributions changed while they were read
    monkeypatch.setattr(installed, "_name_and_version", real_name_and_version)
    importlib.invalidate_caches()
    assert ("filterkit", "late", "negate", "filterkit-late", "1.0") in {
        tuple(p) for p in plugins._installed_entry_points(remember=True)
    }
    assert recalled() is not None


def test_a_distribution_removed_while_they_are_found_and_put_back_after_is_not_left_out(site, monkeypatch):
    """As ``pip install --force-reinstall`` running beside a run: what was found without it is not kept
    under the fingerprint that holds it."""
    info, away = site / "filterkit_fixtures-1.0.dist-info", site.parent / "away"
    real_fingerprint = installed.fingerprint

    def removing_after_the_mark():
        mark = real_fingerprint()
        if info.exists():
            info.rename(away)
            importlib.invalidate_caches()
        return mark

    monkeypatch.setattr(installed, "fingerprint", removing_after_the_mark)
    assert "negate" not in {p.name for p in plugins._installed_entry_points(remember=True)}
    monkeypatch.setattr(installed, "fingerprint", real_fingerprint)
    away.rename(info)
    importlib.invalidate_caches()
    assert recalled() is None
    assert ("filterkit", "negate", "negate", "filterkit-fixtures", "1.0") in found_now()


@pytest.mark.parametrize("reverse", [False, True])
def test_the_fingerprint_holds_a_folders_distributions_in_the_order_it_lists_them(site, monkeypatch, reverse):
    """Of two distributions of one name in a folder, importlib.metadata takes the one listed first: a folder
    listing them in another order (tmpfs does after a rename) is another fingerprint."""
    install(site, "filterkit-fixtures", "2.0", "[filterkit]\nnegate = negate\n")
    real_scandir = os.scandir

    @contextlib.contextmanager
    def listing_in_order(folder):
        with real_scandir(folder) as children:
            yield sorted(children, key=lambda child: child.name, reverse=reverse)

    monkeypatch.setattr(installed.os, "scandir", listing_in_order)
    (held,) = [folders for entry, folders in installed.fingerprint()[1:] if entry == str(site)]
    assert [folder[0] for folder in held] == sorted(
        ["filterkit_fixtures-1.0.dist-info", "filterkit_fixtures-2.0.dist-info"], reverse=reverse
    )


def test_a_dist_info_naming_its_version_in_pkg_info_is_found_afresh_when_it_changes(site):
    """importlib.metadata reads PKG-INFO where a .dist-info holds no METADATA."""
    info = site / "filterkit_fixtures-1.0.dist-info"
    text = (info / "METADATA").read_text()
    (info / "METADATA").unlink()
    (info / "PKG-INFO").write_text(text)
    plugins._installed_entry_points(remember=True)
    (info / "PKG-INFO").write_text(text.replace("Version: 1.0", "Version: 1.1"))
    assert recalled() is None
    assert ("filterkit", "negate", "negate", "filterkit-fixtures", "1.1") in found_now()


def test_a_zip_on_sys_path_copied_over_with_its_times_is_found_afresh(site, tmp_path, monkeypatch):
    """A zip is stamped, not read: by its status change time too, which ``cp -p`` cannot carry over."""
    import zipfile

    def zipped(value: str):
        archive = tmp_path / "plugins.zip"
        with zipfile.ZipFile(archive, "w") as written:
            written.writestr("fkz-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: fkz\nVersion: 1.0\n")
            written.writestr("fkz-1.0.dist-info/entry_points.txt", f"[filterkit]\nfkz = {value}\n")
        return archive

    archive = zipped("fkz_a")
    status = archive.stat()
    monkeypatch.syspath_prepend(str(archive))
    plugins._installed_entry_points(remember=True)
    time.sleep(0.01)
    zipped("fkz_b")
    os.utime(archive, ns=(status.st_atime_ns, status.st_mtime_ns))
    assert archive.stat().st_size == status.st_size and archive.stat().st_mtime_ns == status.st_mtime_ns
    assert recalled() is None


def test_a_cache_file_nested_past_the_recursion_limit_is_passed_over(site):
    plugins._installed_entry_points(remember=True)
    (cache,) = (site.parent / "cache" / "filterkit").iterdir()
    cache.write_text("[" * 200_000 + "]" * 200_000)
    assert recalled() is None
    assert [tuple(p) for p in plugins._installed_entry_points(remember=True)] == found_now()
    assert recalled() is not None


def test_an_egg_on_sys_path_is_read_from_its_egg_info(tmp_path, monkeypatch):
    """importlib.metadata reads an egg's EGG-INFO folder (no suffix) when the egg itself is on sys.path."""
    egg = tmp_path / "filterkit_egg-1.0-py3.11.egg"
    (egg / "EGG-INFO").mkdir(parents=True)
    (egg / "EGG-INFO" / "PKG-INFO").write_text("Metadata-Version: 1.1\nName: filterkit-egg\nVersion: 1.0\n")
    (egg / "EGG-INFO" / "entry_points.txt").write_text("[filterkit]\nfirst = negate\n")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.syspath_prepend(str(egg))
    importlib.invalidate_caches()
    assert ("filterkit", "first", "negate", "filterkit-egg", "1.0") in {
        tuple(p) for p in plugins._installed_entry_points(remember=True)
    }
    (egg / "EGG-INFO" / "entry_points.txt").write_text("[filterkit]\nsecond = negate\n")
    assert recalled() is None
    assert ("filterkit", "second", "negate", "filterkit-egg", "1.0") in found_now()


def test_a_sys_path_entry_not_a_string_remembers_nothing(site, monkeypatch):
    """importlib.metadata takes a pathlib.Path on sys.path; the fingerprint does not (and a run does not fail)."""
    monkeypatch.setattr(sys, "path", [*sys.path, Path("/nowhere")])
    assert installed.fingerprint() is None
    assert [tuple(p) for p in plugins._installed_entry_points(remember=True)] == found_now()
    assert not (site.parent / "cache").exists()


def test_without_a_home_nothing_is_remembered(site, monkeypatch, tmp_path):
    """No HOME and no home in the password database: ``~`` stays ``~``, and no ``./~/.cache`` is made."""
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setattr(os.path, "expanduser", lambda path: path)
    monkeypatch.chdir(tmp_path)
    assert [tuple(p) for p in plugins._installed_entry_points(remember=True)] == found_now()
    assert recalled() is None and not (tmp_path / "~").exists()


@pytest.mark.parametrize("kind", ["fifo", "symlink", "folder"])
def test_a_cache_file_that_is_not_a_regular_file_is_passed_over(site, kind):
    """A named pipe (which would block a read), a link (to a file of the right form) or a folder."""
    plugins._installed_entry_points(remember=True)
    (cache,) = (site.parent / "cache" / "filterkit").iterdir()
    kept = site.parent / "kept.json"
    cache.rename(kept)
    if kind == "fifo":
        os.mkfifo(cache)
    elif kind == "symlink":
        cache.symlink_to(kept)
    else:
        cache.mkdir()
    assert recalled() is None
    assert [tuple(p) for p in plugins._installed_entry_points(remember=True)] == found_now()


@pytest.mark.parametrize(
    "value", ["os", "os.path", "os.path:join", "os.path : join", "os.path:join [extra]", "json:decoder.JSONDecoder"]
)
def test_an_entry_point_value_loads_what_importlib_metadata_loads(value):
    assert installed.load_object(value) is EntryPoint("x", value, "g").load()


@pytest.mark.parametrize("value", ["-bad-", "os:", "os:path:join", ""])
def test_a_value_of_another_form_is_a_value_error(value):
    with pytest.raises(ValueError, match="invalid object reference"):
        installed.load_object(value)


def test_the_console_script_recalls_them_without_importing_importlib_metadata(tmp_path):
    """The second run of the console script reads the first run's file, and never imports importlib.metadata."""
    child = (
        "import sys, filterkit.cli\n"
        "try:\n    filterkit.cli.main(sys.argv[1:])\n"
        "except SystemExit:\n    pass\n"
        "print('importlib.metadata' in sys.modules, file=sys.stderr)\n"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    iris = str(Path(__file__).resolve().parents[1] / "arff_samples" / "iris.arff")
    imported = []
    outputs = []
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-c", child, iris, "l2"], env=env, capture_output=True, text=True, check=True
        )
        imported.append(done.stderr.strip())
        outputs.append(done.stdout)
    assert imported == ["True", "False"]
    assert outputs[0] == outputs[1] and "@attribute" in outputs[0]
    (cache,) = (tmp_path / "cache" / "filterkit").iterdir()
    assert any(point[:2] == ["filterkit", "normalizers"] for point in json.loads(cache.read_text())["entry_points"])
