"""Fixtures that run the command line: in this process, as a subprocess, in a shell.

``run_filterkit`` calls :func:`filterkit.cli.run` in this process (stdout as
bytes, stdin replaceable), with the installed plugins discovered once for the
session (:func:`chain_helpers.installed_plugins_once`); ``filterkit_script`` runs the installed
console script as a real subprocess, for pipes, exit statuses and stray files.  A
test that uses ``filterkit_script`` or ``shell``, or runs Weka, is marked ``slow`` here; a
``nightly`` one is ``slow`` too, and runs only with ``--nightly`` (``.ci/run`` runs the group after
the README's test command).
"""

from __future__ import annotations

import io
import os
import shlex
import subprocess
import sys
import tempfile

import pytest

#: The environment may forbid writing compiled bytecode (``PYTHONDONTWRITEBYTECODE``, as on the CI
#: machine): then every test process and every console-script launch compiled filterkit, the test files
#: and pytest's assertion rewriting of them from source again (4 s of a worker's 9 s of collection, 0.1 s
#: of a launch).  The tests' processes, and every interpreter they start, write it as Python does by
#: default: beside the sources, in ``__pycache__`` folders that git ignores (the standard library's and
#: the installed packages' are there already).  The same code runs: bytecode is what Python compiles the
#: source to either way.
if sys.dont_write_bytecode:
    sys.dont_write_bytecode = False
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

#: The console script remembers the installed plugins' entry points in the user's cache folder
#: (filterkit.installed): the tests' processes keep theirs in a folder of their own, removed at exit.
_CACHE_FOLDER = tempfile.TemporaryDirectory(prefix="filterkit-tests-cache-")
os.environ["XDG_CACHE_HOME"] = _CACHE_FOLDER.name

# After bytecode may be written, so that filterkit's and the helpers' is kept:
from chain_helpers import FILTERKIT, Result, installed_plugins_once  # noqa: E402
from filterkit import cli  # noqa: E402

#: Dask settings for every cluster the tests start (this process's, the console script's, their worker
#: processes': the environment is inherited): no statistical profiler sampling every worker's stack each
#: 10 ms, and the event loops' watchdog and system monitor ticking once a second, not every 20 and 500 ms.
#: Diagnostics only, the same results; an idle cluster of two workers then takes 0.03 of a core, not 0.09.
QUIET_DASK = {
    "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False",
    "DASK_DISTRIBUTED__ADMIN__TICK__INTERVAL": "1s",
    "DASK_DISTRIBUTED__ADMIN__SYSTEM_MONITOR__INTERVAL": "2s",
}
for _name, _value in QUIET_DASK.items():
    os.environ.setdefault(_name, _value)
if "dask" in sys.modules:  # imported before this file: read the settings again
    import dask

    dask.config.refresh()

#: Fixtures that start the console script as a process: about 0.15 s of CPU a launch (2026-11-27).
PROCESS_FIXTURES = frozenset({"filterkit_script", "shell"})


#: The test files that take longest (their tests' summed durations in a full run, most first: the default
#: suite on 2026-11-27, every file of 5 s or more).  Under ``-n 2`` a file runs on one worker
#: (``--dist loadfile``) and the files start in collection order (``--no-loadscope-reorder``, both in
#: ``pyproject.toml``): these are collected first, so that the suite does not end with one worker alone on
#: a long file while the other idles.  A new file that takes more than ~5 s goes in here, at its place
#: (``python -m pytest -n 2 --durations=0`` gives the figures; test_faults early for its waits, which take
#: wall time but little CPU).
LONGEST_FIRST = (
    "tests/test_trained.py",
    "tests/test_contract.py",
    "tests/test_dask.py",
    "tests/test_words.py",
    "tests/test_one_vs_rest_memory.py",
    "tests/test_multiclass.py",
    "tests/test_engines_agree.py",
    "tests/test_lines_compiled.py",
    "tests/test_sklearn.py",
    "tests/test_kept_passes.py",
    "tests/test_determinism.py",
    "tests/test_auto.py",
    "tests/arff/test_arff_speedups.py",
    "tests/test_evaluate_labels.py",
    "tests/test_evaluate_dask.py",
    "tests/test_plugin_kit.py",
    "tests/test_readme.py",
    "tests/test_kernels.py",
    "tests/test_faults.py",
    "tests/test_k_classes.py",
    "tests/test_shaper_missing.py",
    "tests/test_evaluate_report.py",
    "tests/test_no_traceback.py",
    "tests/test_evaluation_api.py",
    "tests/test_degenerate.py",
    "tests/test_malformed.py",
    "tests/test_unwritable_options.py",
    "tests/test_many_classes.py",
    "tests/test_csv_rfc4180.py",
    "tests/test_fasttext_plugin.py",
    "tests/arff/test_arff_properties.py",
    "tests/test_dask_local_cluster.py",
    "tests/test_evaluate.py",
    "tests/test_derived_statistics.py",
    "tests/test_documents_formats.py",
    "tests/test_discretize.py",
    "tests/arff/test_number_formats.py",
    "tests/test_shaper_multiclass.py",
    "tests/test_claims.py",
    "tests/test_evaluate_multiclass.py",
    "tests/test_words_hashing.py",
    "tests/test_words_characters.py",
    "tests/test_csv_hostile.py",
    # the nightly group's longest (deselected in the default suite)
    "tests/test_research_scripts.py",
    "tests/test_sanitizers.py",
)


def pytest_addoption(parser):
    """``--nightly``: also run the ``nightly`` group, as ``.ci/run`` does (``--nightly -m nightly``)."""
    parser.addoption(
        "--nightly",
        action="store_true",
        help="also run the tests marked nightly (research and benchmark scripts, README table, floor, sanitizers)",
    )


def _collection_rank(item) -> int:
    """The place of the item's file in :data:`LONGEST_FIRST`; every other file after them."""
    path = item.nodeid.split("::", 1)[0]
    return LONGEST_FIRST.index(path) if path in LONGEST_FIRST else len(LONGEST_FIRST)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Leave out the ``nightly`` tests unless ``--nightly`` is given; mark ``slow`` every test that
    runs Weka, starts the console script through a fixture or is ``nightly``, before ``-m "not slow"``
    (the quick loop) picks what runs; put the files of :data:`LONGEST_FIRST` first (a stable sort:
    every file keeps its tests' order)."""
    if not config.getoption("--nightly"):
        nightly = [item for item in items if item.get_closest_marker("nightly") is not None]
        if nightly:
            config.hook.pytest_deselected(items=nightly)
            items[:] = [item for item in items if item.get_closest_marker("nightly") is None]
    for item in items:
        marked = any(item.get_closest_marker(name) is not None for name in ("weka", "nightly"))
        if marked or PROCESS_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
    items.sort(key=_collection_rank)


@pytest.fixture(scope="session")
def dask_distributed():
    """``dask.distributed``, or the test skipped when Dask is not installed: imported when a test
    sets up, not when its module is collected, so the quick loop (which deselects every Dask test)
    does not pay for Dask's import."""
    return pytest.importorskip("dask.distributed", reason="Dask is not installed (pip install 'filterkit-arff[dask]')")


@pytest.fixture(scope="module")
def dask_scheduler(dask_distributed):
    """The address of a ``LocalCluster`` of two worker processes shared by the module's tests that
    run ``--engine dask --scheduler``: a cluster costs seconds of CPU to start, and about a tenth
    of a core while it idles, so it lives as long as the module, not the session."""
    with dask_distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    ) as cluster:
        yield cluster.scheduler_address


@pytest.fixture(scope="session", autouse=True)
def plugins_found_once():
    """Every in-process run finds the installed plugins once per session
    (:func:`chain_helpers.installed_plugins_once`, which loads afresh whenever a test changes what the
    search would find): the ``run_filterkit`` fixture and ``filterkit.testing.run_filterkit`` alike,
    the latter ~460 runs of the quick loop that searched afresh each time (3 s of CPU)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cli, "load_plugins", installed_plugins_once)
        yield


@pytest.fixture
def run_filterkit(capsysbinary, monkeypatch):
    """Call ``filterkit.cli.run(argv)``; ``stdin`` bytes become standard input."""

    def invoke(*argv, stdin: bytes | None = None, plugins_dir=None) -> Result:
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
        status = cli.run([str(a) for a in argv], None if plugins_dir is None else str(plugins_dir))
        out, err = capsysbinary.readouterr()
        return Result(status, out, err.decode("utf-8"))

    return invoke


@pytest.fixture
def filterkit_script():
    """Run the installed ``filterkit`` console script as a subprocess."""
    if FILTERKIT is None:
        pytest.skip("the filterkit console script is not installed (pip install -e .)")

    def invoke(*argv, stdin: bytes | None = None, cwd=None, env: dict | None = None) -> Result:
        completed = subprocess.run(
            [FILTERKIT, *map(str, argv)],
            input=stdin if stdin is not None else b"",
            capture_output=True,
            cwd=cwd,
            env=None if env is None else {**os.environ, **env},
            timeout=60,
        )
        return Result(completed.returncode, completed.stdout, completed.stderr.decode("utf-8"))

    return invoke


@pytest.fixture
def shell():
    """Run a bash command line in which ``filterkit`` means the console script."""
    if FILTERKIT is None:
        pytest.skip("the filterkit console script is not installed (pip install -e .)")

    def invoke(command: str, cwd=None, env: dict | None = None) -> Result:
        completed = subprocess.run(
            f'filterkit() {{ {shlex.quote(FILTERKIT)} "$@"; }}\n{command}',
            shell=True,
            executable="/bin/bash",
            capture_output=True,
            cwd=cwd,
            env=None if env is None else {**os.environ, **env},
            timeout=60,
        )
        return Result(completed.returncode, completed.stdout, completed.stderr.decode("utf-8"))

    return invoke


@pytest.fixture
def newer_svm_here(monkeypatch):
    """This process's plugins give the classifier ``svm`` at a version the workers of a Dask cluster lack (theirs
    plus ``.client``): what a client with another filterkit's svm looks like to the worker check."""
    import dataclasses

    from filterkit import plugins

    real_loaded = plugins._loaded

    def with_a_newer_svm_here(plugins_dir, remember):
        registry = real_loaded(plugins_dir, remember).complete()
        svm = registry.classifiers["svm"]
        registry.classifiers["svm"] = dataclasses.replace(svm, version=svm.version + ".client")
        return registry

    monkeypatch.setattr(plugins, "_loaded", with_a_newer_svm_here)
