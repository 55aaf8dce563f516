"""The console script caches its own modules' bytecode where ``PYTHONDONTWRITEBYTECODE`` kept Python from writing
it (an editable install recompiled filterkit on every run: issue 51, item 6)."""

from __future__ import annotations

import importlib
import sys

import pytest

from filterkit.ownership import cache_own_bytecode


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A package of two modules, imported from source with bytecode writing off."""
    folder = tmp_path / "cachedemo"
    folder.mkdir()
    (folder / "__init__.py").write_text("VALUE = 1\n")
    (folder / "part.py").write_text("def twice(x):\n    return 2 * x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    for name in ("cachedemo", "cachedemo.part"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    importlib.import_module("cachedemo.part")
    yield folder
    for name in ("cachedemo", "cachedemo.part"):
        sys.modules.pop(name, None)


def test_missing_bytecode_is_written_once_and_read_back(package):
    assert not (package / "__pycache__").exists()
    assert cache_own_bytecode(("cachedemo",)) == 2
    assert cache_own_bytecode(("cachedemo",)) == 0
    cached = sys.modules["cachedemo.part"].__spec__.cached
    loader = importlib.machinery.SourcelessFileLoader("cachedemo.part", cached)
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader("cachedemo.part", loader))
    loader.exec_module(module)
    assert module.twice(21) == 42


def test_a_changed_source_is_written_again(package):
    cache_own_bytecode(("cachedemo",))
    (package / "part.py").write_text("def twice(x):\n    return x + x  # changed\n")
    assert cache_own_bytecode(("cachedemo",)) == 1


def test_nothing_is_written_where_python_writes_bytecode_itself(package, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    assert cache_own_bytecode(("cachedemo",)) == 0
    assert not (package / "__pycache__").exists()


def test_other_packages_are_left_alone(package):
    assert cache_own_bytecode(("filterkit_not_this",)) == 0
    assert not (package / "__pycache__").exists()
