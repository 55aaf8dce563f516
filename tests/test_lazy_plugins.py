"""Start-up (issue 20, item 2): a run imports the built-in plugins its chain names, no other.

The built-in distribution declares what each of its plugins registers (``filterkit_plugins.NAMES``,
named by an entry point of the group ``filterkit.names``); a registry loads a plugin when one of its
names is looked up, and every plugin when a table is listed.  The subprocess checks run a fresh
interpreter, since the test process has imported every plugin already.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import filterkit_plugins
from chain_helpers import REAL, read_bytes
from filterkit import plugins
from filterkit.plugins import PluginTable, load_plugins

#: Run ``filterkit.cli.run(argv)`` and report, as JSON on stderr's last line, the exit
#: status and the modules loaded.
PROBE = """
import json, sys
import filterkit.cli
status = filterkit.cli.run(sys.argv[1:])
sys.stdout.flush()
print(json.dumps({"status": status, "modules": sorted(sys.modules)}), file=sys.stderr)
"""

#: filterkit's modules that only some plugins use (the metrics and their counting, the
#: classifier protocol, the MDL cut points).
PLUGIN_LIBRARIES = {"filterkit.metrics", "filterkit.statistics", "filterkit.classifier", "filterkit.discretization"}


def run_probe(*argv) -> tuple[int, bytes, set[str]]:
    """The exit status, stdout and the modules of a fresh ``filterkit ARGV`` run."""
    completed = subprocess.run(
        [sys.executable, "-c", PROBE, *map(str, argv)], capture_output=True, timeout=120, check=False
    )
    report = json.loads(completed.stderr.decode().strip().splitlines()[-1])
    return report["status"], completed.stdout, set(report["modules"])


def plugin_modules(modules: set[str]) -> set[str]:
    """The built-in plugin modules among ``modules``."""
    return {name for name in modules if name.startswith("filterkit_plugins.")}


def full_registry(monkeypatch) -> plugins.Registry:
    """The registry with every plugin loaded at once (FILTERKIT_STRICT_PLUGINS loads so)."""
    monkeypatch.setenv("FILTERKIT_STRICT_PLUGINS", "1")
    registry = load_plugins()
    monkeypatch.delenv("FILTERKIT_STRICT_PLUGINS")
    assert not isinstance(registry.stages, PluginTable)
    return registry


def as_listed(registry: plugins.Registry) -> dict[str, dict[str, tuple]]:
    """Each table of ``registry`` as name → (value, plugin, distribution, version); a class
    as its module and name (a stage made per metric is a new class each load)."""
    return {
        kind: {
            name: (_named(r.value), r.plugin, r.distribution, r.version) for name, r in getattr(registry, kind).items()
        }
        for kind in ("stages", "metrics", "classifiers", "stemmers", "formats")
    }


def _named(value):
    return (value.__module__, value.__qualname__) if isinstance(value, type) else value


@pytest.mark.slow
def test_an_l2_run_imports_the_normalizers_plugin_and_no_other():
    status, output, modules = run_probe("-q", REAL / "iris.arff", "l2")
    assert status == 0
    schema, chunk = read_bytes(output)
    assert chunk.n_rows == 150
    assert plugin_modules(modules) == {"filterkit_plugins.formats", "filterkit_plugins.normalizers"}
    assert modules.isdisjoint(PLUGIN_LIBRARIES)


#: Standard modules that only some runs need, each 1–5 ms of a start: spooling and writing into a file
#: (tempfile, shutil: a chain that learns spools its chunks), OpenSSL's digests (hashlib), DATE attributes'
#: names (calendar), and finding the plugins afresh (importlib.metadata, with zipfile and email), which a
#: run does only when the installed distributions changed; under 1 ms each, --float32's exact search (decimal),
#: Mulan's label files (xml.parsers.expat) and annotations (numpy.typing); and filterkit's partitions of an
#: input among Dask's tasks (5 ms: three dataclasses made as it is imported) and CSV's and JSON Lines' parsers.
RARELY_NEEDED = {
    "filterkit.partitions",
    "filterkit.formats.records",
    "tempfile",
    "shutil",
    "hashlib",
    "calendar",
    "importlib.metadata",
    "decimal",
    "xml.parsers.expat",
    "numpy.typing",
}


@pytest.mark.slow
def test_a_run_writing_to_stdout_imports_no_module_only_some_runs_need():
    run_probe("-q", REAL / "iris.arff", "l2")  # remembers the entry points, if the cache was empty
    for chain in ([], ["l2"]):
        status, output, modules = run_probe("-q", REAL / "iris.arff", *chain)
        assert status == 0 and read_bytes(output)[1].n_rows == 150
        assert modules.isdisjoint(RARELY_NEEDED), (chain, modules & RARELY_NEEDED)


@pytest.mark.slow
def test_a_scorer_run_imports_the_metrics_its_stages_are_made_from():
    status, output, modules = run_probe("-q", REAL / "iris.arff", "bns", "l2")
    assert status == 0
    assert read_bytes(output)[1].n_rows == 150
    assert plugin_modules(modules) == {
        "filterkit_plugins.formats",
        "filterkit_plugins.metrics",
        "filterkit_plugins.scorers",
        "filterkit_plugins.normalizers",
    }
    assert "filterkit.classifier" not in modules


@pytest.mark.slow
def test_the_chain_help_still_lists_every_stage():
    status, output, modules = run_probe(REAL / "iris.arff", "--help")
    assert status == 0
    listed = output.decode()
    for stage in ("auto", "bns", "discretize", "fold", "select", "shape", "words", "minmax"):
        assert f"\n  {stage} " in listed
    assert "filterkit_plugins.words" in modules


def test_the_built_in_declarations_are_what_the_plugins_register(monkeypatch):
    registered: dict[str, set[tuple[str, str]]] = {}
    for kind, table in as_listed(full_registry(monkeypatch)).items():
        for name, (_, plugin, _, _) in table.items():
            registered.setdefault(plugin, set()).add((kind[:-1], name))
    lazy = load_plugins()
    assert isinstance(lazy.stages, PluginTable)
    declared = {candidate.name: set(candidate.declared) for candidate in lazy._pending.waiting}
    assert {plugin: names for plugin, names in declared.items() if names} == registered
    assert len(registered) == 12 and ("stage", "l2") in registered["normalizers"]


def test_a_lazy_registry_finds_what_the_full_one_has_and_lists_the_same(monkeypatch):
    full = as_listed(full_registry(monkeypatch))
    lazy = load_plugins()
    assert _named(lazy.stages["l2"].value) == full["stages"]["l2"][0]
    assert lazy.stages["shape"].plugin == "shaper"
    assert "iris.arff" not in lazy.stages and "l2" not in lazy.metrics
    assert lazy.metric("bns").function is full["metrics"]["bns"][0].function
    assert "normalizers" not in {c.name for c in lazy._pending.waiting}
    assert "words" in {c.name for c in lazy._pending.waiting}
    assert as_listed(lazy) == full
    assert lazy._pending.waiting == []


def test_a_plugin_registering_more_than_it_declares_loads_them_all(monkeypatch):
    full = as_listed(full_registry(monkeypatch))
    monkeypatch.setitem(filterkit_plugins.NAMES, "normalizers", {"stage": ("l2",)})
    lazy = load_plugins()
    assert lazy.stages["l2"].plugin == "normalizers"
    assert lazy._pending.waiting == []
    assert as_listed(lazy) == full


def test_a_registry_completes_on_request_and_keeps_the_load_order(monkeypatch):
    full = full_registry(monkeypatch)
    lazy = load_plugins()
    assert lazy.stages["words"].plugin == "words" and lazy.stages["auto"].plugin == "auto"
    assert lazy.complete() is lazy
    assert list(lazy.stages) == list(full.stages)
    assert list(lazy.metrics) == list(full.metrics)
    assert lazy.skipped == [] and lazy.without_hooks == []


def test_a_disabled_plugin_stays_out_of_a_lazy_registry(monkeypatch):
    monkeypatch.setenv("FILTERKIT_DISABLE_PLUGINS", "normalizers")
    lazy = load_plugins()
    assert "l2" not in lazy.stages
    assert "bns" in lazy.stages
    assert lazy.disabled == ["normalizers"]
