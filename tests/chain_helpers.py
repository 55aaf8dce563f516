"""Constants and helpers shared by the chain, CLI, plugin and model tests.

A module of its own (not conftest.py) so test files can import it by a name no
other test folder uses.
"""

from __future__ import annotations

import contextlib
import fnmatch
import functools
import hashlib
import importlib.metadata
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from filterkit import installed, plugins
from filterkit.arff import read_arff
from filterkit.plugins import Registry, load_plugins

TESTS = Path(__file__).parent
REAL = TESTS / "data" / "real"
#: The data sets of ``../shared/data`` beside the project (text, uci, weka), when there is one: tests of the
#: larger sets skip without it; the small ones are copied into :data:`REAL`.
SHARED_DATA = TESTS.parent.parent / "shared" / "data"
FIXTURE_PLUGINS = TESTS / "plugins_fixtures"
#: 60 of oh0's abstracts (half of them Ethics) over 240 of its words: check_stage's sparse sample.
OH0_SAMPLE = TESTS.parent / "filterkit" / "data" / "oh0_sample.arff"
STAGES_DIR = FIXTURE_PLUGINS / "stages"


def _console_script() -> str | None:
    """The ``filterkit`` script installed beside this interpreter, else the one on PATH."""
    beside = Path(sys.executable).with_name("filterkit")
    return str(beside) if beside.exists() else shutil.which("filterkit")


FILTERKIT = _console_script()


def _find_weka_jar() -> Path | None:
    """Weka's jar: ``$WEKA_JAR``, else where Debian's ``weka`` package puts it; None if neither."""
    for candidate in (os.environ.get("WEKA_JAR"), "/usr/share/java/weka.jar"):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


JAVA = shutil.which("java")
#: The JVM options of every Weka run of the tests: one garbage-collector thread and the quick (C1)
#: compiler only.  The runs are short, so the optimizing compiler's threads cost more CPU than they save
#: (Weka's word vectors of the Reuters corpora: 9 s of CPU instead of 14; the same output).
JAVA_OPTIONS = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1")
WEKA_JAR = _find_weka_jar()
JAVAC = shutil.which("javac")
#: Where :func:`weka_java` keeps the classes it compiles, one folder per source (read at import,
#: before a test points ``tempfile`` elsewhere).
JAVA_CLASSES = Path(tempfile.gettempdir()) / f"filterkit-tests-java-{os.getuid()}"


def weka_java(source: Path | str, *java_options: str) -> list[str]:
    """The command that runs the Java program ``source`` (a ``.java`` file, or its text) with Weka's
    jar on the class path.  Java's source launcher compiles the program at every start (~2 s of
    CPU), so it is compiled once into :data:`JAVA_CLASSES` (a folder per source text, shared by
    the test processes) and run from there; with no ``javac``, the source launcher runs it."""
    assert JAVA is not None and WEKA_JAR is not None  # needs_weka skipped the test otherwise
    text = source.read_text(encoding="utf-8") if isinstance(source, Path) else source
    name = re.search(r"public\s+class\s+(\w+)", text)
    assert name is not None, "a Java program declares its public class"
    if JAVAC is None:
        program = source if isinstance(source, Path) else _written_source(text, name.group(1))
        return [JAVA, *JAVA_OPTIONS, *java_options, "-cp", str(WEKA_JAR), str(program)]
    digest = hashlib.sha256(f"{JAVAC}\n{WEKA_JAR}\n{text}".encode()).hexdigest()[:16]
    classes = JAVA_CLASSES / f"{name.group(1)}-{digest}"
    if not classes.is_dir():
        JAVA_CLASSES.mkdir(parents=True, exist_ok=True)
        building = Path(tempfile.mkdtemp(dir=JAVA_CLASSES))
        program = building / f"{name.group(1)}.java"
        program.write_text(text, encoding="utf-8")
        subprocess.run(
            [JAVAC, "-nowarn", "-cp", str(WEKA_JAR), "-d", str(building / "classes"), str(program)],
            check=True,
            capture_output=True,
            timeout=300,
        )
        with contextlib.suppress(OSError):  # another test process compiled it first
            (building / "classes").rename(classes)
        shutil.rmtree(building, ignore_errors=True)
    return [JAVA, *JAVA_OPTIONS, *java_options, "-cp", f"{WEKA_JAR}{os.pathsep}{classes}", name.group(1)]


def _written_source(text: str, class_name: str) -> Path:
    """``text`` in a ``.java`` file named after its class, for the source launcher."""
    program = Path(tempfile.mkdtemp()) / f"{class_name}.java"
    program.write_text(text, encoding="utf-8")
    return program


#: Marks for a test that runs Weka: marked ``weka``, skipped with a reason without Java or the jar.
NEEDS_WEKA = [
    pytest.mark.weka,
    pytest.mark.skipif(JAVA is None, reason="java is not on PATH"),
    pytest.mark.skipif(WEKA_JAR is None, reason="no Weka jar: set WEKA_JAR or install /usr/share/java/weka.jar"),
]


#: What plugin discovery reads besides a plugins folder (filterkit.plugins).
PLUGIN_VARIABLES = ("FILTERKIT_DISABLE_PLUGINS", "FILTERKIT_STRICT_PLUGINS")
#: What a warning issued from filterkit.plugins' code adds to its globals: no monkeypatch (a worker of the suite in
#: which one was issued had loaded every registry afresh, and test_chain_helpers' identity checks failed there).
WARNING_REGISTRY = "__warningregistry__"


def _plugins_module() -> dict:
    """The globals of filterkit.plugins and of filterkit.installed (which reads the entry points), by module and
    name, their warning registries left out."""
    return {
        (module.__name__, name): value
        for module in (plugins, installed)
        for name, value in vars(module).items()
        if name != WARNING_REGISTRY
    }


#: filterkit.plugins and filterkit.installed as imported, to tell whether a test has monkeypatched them since.
PRISTINE_PLUGINS_MODULE = _plugins_module()
_installed: list[Registry] = []


def installed_plugins_once(plugins_dir=None) -> Registry:
    """:func:`filterkit.plugins.load_plugins` for in-process runs, discovering the installed plugins once.

    Discovery is two thirds of a small run (~20 ms), and nothing a test does changes the installed
    entry points, so their registry is loaded once and reused — only while discovery would give the
    same: no plugins folder (a test may rewrite one), neither plugin variable set, filterkit.plugins
    nor filterkit.installed monkeypatched, and no plugin skipped or without hooks (each load warns about those).
    Any other call loads afresh, as filterkit does.
    """
    pristine = (
        plugins_dir is None
        and not any(os.environ.get(variable) for variable in PLUGIN_VARIABLES)
        and _plugins_module().keys() == PRISTINE_PLUGINS_MODULE.keys()
        and all(_plugins_module()[key] is value for key, value in PRISTINE_PLUGINS_MODULE.items())
    )
    if not pristine:
        return load_plugins(plugins_dir)
    if not _installed:
        registry = load_plugins()
        if registry.skipped or registry.without_hooks:
            return registry
        _installed.append(registry)
    return _installed[0]


def shared_data_file(relative: str) -> Path:
    """A file of ``../shared/data``; the calling test skips, with the reason, when it is not there."""
    path = SHARED_DATA / relative
    if not path.is_file():
        pytest.skip(f"{relative} is in ../shared/data only, which is not beside this clone")
    return path


#: Every UCI set in :data:`REAL`, with its class attribute as Weka's ``-c`` names it (wine's class is first).
UCI_SETS = {
    "iris": "last",
    "wine": "first",
    "credit-g": "last",
    "vowel": "last",
    "diabetes": "last",
    "ecoli": "last",
    "glass": "last",
    "sonar": "last",
    "vehicle": "last",
}

#: One JVM runs every Weka filter of a batch: one line per run, the filter class then its arguments.
_RUN_FILTERS_JAVA = """
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import weka.filters.Filter;

public class RunFilters {
    public static void main(String[] args) throws Exception {
        for (String line : Files.readAllLines(Path.of(args[0]))) {
            String[] words = line.split("\\t");
            Filter filter = (Filter) Class.forName(words[0]).getDeclaredConstructor().newInstance();
            Filter.filterFile(filter, Arrays.copyOfRange(words, 1, words.length));
        }
    }
}
"""


def run_weka_filters(folder: Path, runs: list[list[str]]) -> None:
    """Run each ``[filter class, arguments…]`` of ``runs`` in one JVM (:func:`weka_java`), so a
    test file pays one Java start for all its Weka runs."""
    jobs = folder / "jobs.tsv"
    jobs.write_text("".join("\t".join(run) + "\n" for run in runs))
    subprocess.run([*weka_java(_RUN_FILTERS_JAVA, "-Xmx1g"), str(jobs)], check=True, capture_output=True, timeout=900)


WEKA_RUNS = TESTS / "data" / "weka" / "WekaRuns.java"


@dataclass
class WekaJob:
    """What one job of :func:`run_weka_jobs` gave: whether it ran without an exception, and its output
    (the stack trace when it threw)."""

    ok: bool
    output: str


def run_weka_jobs(folder: Path, jobs: list[list[str]]) -> list[WekaJob]:
    """Run each job of ``jobs`` in one JVM (``tests/data/weka/WekaRuns.java``): ``["relation", FILE]``
    gives the relation name as Weka reads it, ``["evaluate", CLASSIFIER, options…]`` what the
    classifier's command line prints; fails the test if the JVM fails or says "exception" on stderr."""
    listing = folder / "weka_jobs.tsv"
    listing.write_text("".join("\t".join(map(str, job)) + "\n" for job in jobs), encoding="utf-8")
    completed = subprocess.run(
        [*weka_java(WEKA_RUNS, "-Xmx1g"), str(listing)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert "exception" not in completed.stderr.lower(), completed.stderr[-3000:]  # Weka reports failures here
    parts = re.split(r"^### WekaRuns (\d+) (ok|failed)\n", completed.stdout, flags=re.M)
    results = [WekaJob(status == "ok", text) for status, text in zip(parts[2::3], parts[3::3])]
    assert [int(number) for number in parts[1::3]] == list(range(len(jobs))), completed.stdout[-3000:]
    return results


def needs_weka(test):
    """Decorate a test that runs Weka with :data:`NEEDS_WEKA`."""
    for mark in NEEDS_WEKA:
        test = mark(test)
    return test


def weka_normalize(source: Path, target: Path, class_position: str | None = None) -> None:
    """Weka 3.6's ``weka.filters.unsupervised.attribute.Normalize`` on ``source``, written to ``target``
    (``class_position``: its ``-c``, ``first`` or ``last``; none by default); fails the test if Weka does."""
    completed = subprocess.run(
        [
            str(JAVA),
            *JAVA_OPTIONS,
            "-cp",
            str(WEKA_JAR),
            "weka.filters.unsupervised.attribute.Normalize",
            *(["-c", class_position] if class_position is not None else []),
            "-i",
            str(source),
            "-o",
            str(target),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0 and Path(target).is_file(), completed.stderr[-2000:]


@dataclass
class Result:
    """What one run of the command line gave."""

    status: int
    stdout: bytes
    stderr: str


def read_bytes(data: bytes, name: str = "<output>"):
    """The schema and all rows of ARFF text held in memory."""
    return read_arff(io.BytesIO(data), name)


def assert_same_values(first, second) -> None:
    """Two chunks hold exactly the same values (NaN matching NaN), text and weights."""
    assert first.is_sparse == second.is_sparse
    np.testing.assert_array_equal(first.dense_values(), second.dense_values())
    assert first.text == second.text
    if first.weights is None or second.weights is None:
        assert first.weights is None and second.weights is None
    else:
        np.testing.assert_array_equal(first.weights, second.weights)


def without_comments(arff: bytes) -> bytes:
    """ARFF text without its ``%`` comment lines (which name the chain)."""
    return b"".join(line for line in arff.splitlines(keepends=True) if not line.startswith(b"%"))


def open_files(pid: int) -> list[str]:
    """The paths of the files the process holds open, unlinked ones included (the spool)."""
    paths = []
    for descriptor in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):
            paths.append(os.readlink(f"/proc/{pid}/fd/{descriptor}").removesuffix(" (deleted)"))
    return paths


def wait_for_temporary(folder, pattern: str, process, seconds: float = 30):
    """Until a file matching ``pattern`` in ``folder`` exists or is held open by the process."""
    deadline = time.monotonic() + seconds
    wanted = str(folder / pattern)
    while not (list(folder.glob(pattern)) or any(fnmatch.fnmatch(p, wanted) for p in open_files(process.pid))):
        assert process.poll() is None, "filterkit ended before the temporary file appeared"
        assert time.monotonic() < deadline, "the temporary file never appeared"
        time.sleep(0.01)


@functools.cache
def example_stages() -> dict[str, list]:
    """Each installed stage made with each of its declared option sets (``Stage.examples``), by name."""
    registry = load_plugins()
    return {
        name: [registry.make_stage(name, options) for options in registered.value.examples]
        for name, registered in sorted(registry.stages.items())
    }


def reads_text(words: list[str]) -> bool:
    """True when a stage named among a chain's ``words`` (with its first option set) reads text (``Accepts.text``)."""
    stages = example_stages()
    return any(word in stages and stages[word][0].accepts.text for word in words)


def needs_two_classes(words: list[str]) -> bool:
    """True when a stage named among a chain's ``words`` (with its first option set) needs a two-class task."""
    stages = example_stages()
    return any(word in stages and stages[word][0].accepts.two_classes for word in words)


class ComparedName(str):
    """A name that counts the comparisons made with it (``ComparedName.made``): a set or dict compares none or one
    a name, a scan of a list one per name it passes, so a test of linear time asserts a few a name."""

    made = 0

    def __eq__(self, other):
        ComparedName.made += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


class InventoryClient:
    """Stands in for a Dask client in :meth:`filterkit.distributed.DaskEngine.check_workers`: ``run`` answers with
    the given inventory per worker, ``run_on_scheduler`` with the scheduler's filterkit version (None: none)."""

    def __init__(self, inventories: dict, scheduler: str | None = None):
        from filterkit.version import __version__

        self.inventories = inventories
        self.scheduler = scheduler or __version__

    def run(self, function, *args):
        from filterkit.distributed import worker_inventory

        assert function is worker_inventory
        return self.inventories

    def run_on_scheduler(self, function, *args):
        assert (function, args) == (importlib.metadata.version, ("filterkit-arff",))
        if self.scheduler == "none":
            raise importlib.metadata.PackageNotFoundError("filterkit-arff")
        return self.scheduler
