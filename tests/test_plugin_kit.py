"""The plugin kit: the example distributions ``examples/filterkit-tfidf`` (two stages, a metric, a classifier)
and ``examples/filterkit-fasttext`` (a format) installed next to filterkit in a fresh virtual environment,
each type-checked and run there through the command line, Dask, ``train``/``predict`` and scikit-learn (issue
73's "done when"), and ``docs/plugins.md`` kept in step with the code it documents.

The virtual environment gets filterkit and the example installed into it by pip, so the entry points
its ``filterkit`` sees are its own; only the third-party dependencies (numpy, scipy, scikit-learn, …,
and pytest) are reused from this interpreter, through a ``.pth`` file, and pip installs the two
projects with ``--no-index``: filterkit with ``--no-deps``, the example with its dependencies checked
against what is installed (its ``filterkit-arff`` is the filterkit just installed).  Both projects are
built without build isolation, with this interpreter's setuptools when it is new enough (then nothing
is fetched), else with a setuptools pip installs into the environment first.  Setting up takes about 9
seconds of CPU, once per run of this module, for both examples.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib.metadata
import importlib.util
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_fasttext_plugin import write_grain_files

from chain_helpers import read_bytes, without_comments
from filterkit import hookspecs
from filterkit.arff import read_arff
from filterkit.classifier import Classifier
from filterkit.metrics import Metric
from filterkit.plugins import load_plugins
from filterkit.stage import (
    Accepts,
    Context,
    Explainable,
    KeptPass,
    Option,
    Stage,
    StateArray,
    Updatable,
    ValueMapped,
)

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "filterkit-tfidf"
FASTTEXT = ROOT / "examples" / "filterkit-fasttext"
DOCS = ROOT / "docs" / "plugins.md"
OH0 = ROOT / "arff_samples" / "oh0.wc.arff"
TOP = 50
# The example's pyproject.toml asks for setuptools>=77 (SPDX license string); filterkit's for >=64.
BUILD_SETUPTOOLS = (77, 0)
PIP_WITH_PYTHON_OPTION = (22, 3)
# Left behind by builds and runs; never copied into the virtual environment's sources.
UNBUILT = ("__pycache__", "*.egg-info", "build", "dist", ".*", "*.so", "*.pyd")


# --- the example, installed in a fresh virtual environment -----------------------------------


@dataclasses.dataclass
class PluginVenv:
    """A virtual environment holding filterkit, filterkit-tfidf and filterkit-fasttext, and how to run in it."""

    root: Path
    prefix: Path
    python: Path
    filterkit: Path
    example_tests: Path
    env: dict
    #: Each example's folder (the copy it was installed from), by its distribution's name.
    examples: dict

    def run(self, *argv, timeout=120, env: dict | None = None) -> subprocess.CompletedProcess:
        """Run a program of the environment in its root folder; stdout as bytes, stderr as text."""
        completed = subprocess.run(
            [str(a) for a in argv], capture_output=True, cwd=self.root, env={**self.env, **(env or {})}, timeout=timeout
        )
        completed.stderr = completed.stderr.decode("utf-8", "replace")
        return completed


def _executable(prefix: Path, name: str) -> Path:
    folder = prefix / ("Scripts" if os.name == "nt" else "bin")
    return folder / (f"{name}.exe" if os.name == "nt" else name)


def _environment() -> dict:
    """This process's environment without what would let another filterkit or setting leak in."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "FILTERKIT_DISABLE_PLUGINS")
    }
    env.update(
        PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1", PYTHONDONTWRITEBYTECODE="1", FILTERKIT_STRICT_PLUGINS="1"
    )
    return env


def _dependency_folders() -> list[str]:
    """The site-packages folders this interpreter imports numpy, scipy, pytest… from."""
    return [
        p for p in dict.fromkeys(sys.path) if Path(p).name in ("site-packages", "dist-packages") and Path(p).is_dir()
    ]


def _has_version(distribution: str, minimum: tuple[int, int]) -> bool:
    """True when this interpreter has ``distribution`` installed at ``minimum`` or later."""
    try:
        version = importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return tuple(int(part) for part in re.findall(r"\d+", version)[:2]) >= minimum


@pytest.fixture(scope="module")
def plugin_venv(tmp_path_factory) -> PluginVenv:
    root = tmp_path_factory.mktemp("plugin-kit")
    prefix = root / "venv"
    env = _environment()
    # This interpreter's pip can install into another one (pip ≥ 22.3): then the environment needs no pip.
    outer_pip = _has_version("pip", PIP_WITH_PYTHON_OPTION)
    created = subprocess.run(
        [sys.executable, "-m", "venv", *(["--without-pip"] if outer_pip else []), str(prefix)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    if created.returncode != 0:
        last = (created.stderr.strip().splitlines() or ["no message"])[-1]
        pytest.skip(f"cannot create a virtual environment with {sys.executable} -m venv ({last})")
    python = _executable(prefix, "python")
    pip = [sys.executable, "-m", "pip", "--python", str(python)] if outer_pip else [str(python), "-m", "pip"]
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=True,
    ).stdout.strip()
    (Path(purelib) / "filterkit_test_dependencies.pth").write_text("\n".join(_dependency_folders()) + "\n")

    def pip_install(*arguments) -> None:
        arguments = [str(a) for a in arguments]
        installed = subprocess.run(
            [*pip, "install", "--quiet", *arguments], capture_output=True, text=True, env=env, timeout=600
        )
        assert installed.returncode == 0, (
            f"pip install {' '.join(arguments)} failed:\n{installed.stdout}\n{installed.stderr}"
        )

    if not _has_version("setuptools", BUILD_SETUPTOOLS):
        pip_install(f"setuptools>={'.'.join(map(str, BUILD_SETUPTOOLS))}")
    # Build from copies: pip builds in the source tree, and the checkout must stay untouched.
    filterkit_source, example_source, fasttext_source = (
        root / "filterkit-src",
        root / "filterkit-tfidf-src",
        root / "filterkit-fasttext-src",
    )
    shutil.copytree(
        ROOT,
        filterkit_source,
        ignore=shutil.ignore_patterns(*UNBUILT, "tests", "examples", "arff_samples", "benchmarks", "docs"),
    )
    shutil.copytree(EXAMPLE, example_source, ignore=shutil.ignore_patterns(*UNBUILT))
    shutil.copytree(FASTTEXT, fasttext_source, ignore=shutil.ignore_patterns(*UNBUILT))
    pip_install("--no-build-isolation", "--no-deps", "--no-index", filterkit_source)
    # With their dependencies checked: the examples' filterkit-arff must be the filterkit installed here.
    pip_install("--no-build-isolation", "--no-index", example_source, fasttext_source)
    examples = {"filterkit-tfidf": example_source, "filterkit-fasttext": fasttext_source}
    return PluginVenv(root, prefix, python, _executable(prefix, "filterkit"), example_source / "tests", env, examples)


def _inside(path: str, folder: Path) -> bool:
    return Path(path).resolve().is_relative_to(folder.resolve())


@pytest.mark.slow
def test_venv_imports_filterkit_and_the_plugin_from_its_own_site_packages(plugin_venv):
    probe = (
        "import importlib.metadata as m, json, filterkit, filterkit_plugins, filterkit_tfidf, filterkit_fasttext\n"
        "modules = [filterkit, filterkit_plugins, filterkit_tfidf, filterkit_fasttext]\n"
        "print(json.dumps({'modules': [module.__file__ for module in modules],\n"
        "  'entry_points': [[e.name, e.dist.name, str(e.dist.locate_file(''))]\n"
        "                   for e in m.entry_points(group='filterkit')]}))"
    )
    result = plugin_venv.run(plugin_venv.python, "-c", probe)
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    assert all(_inside(module, plugin_venv.prefix) for module in found["modules"]), found["modules"]
    assert all(_inside(folder, plugin_venv.prefix) for _, _, folder in found["entry_points"]), found["entry_points"]
    assert ["tfidf", "filterkit-tfidf"] in [entry[:2] for entry in found["entry_points"]]
    assert ["fasttext", "filterkit-fasttext"] in [entry[:2] for entry in found["entry_points"]]
    assert ["normalizers", "filterkit-arff"] in [entry[:2] for entry in found["entry_points"]]


@pytest.mark.slow
def test_venv_filterkit_plugins_lists_the_example_with_its_distribution(plugin_venv):
    result = plugin_venv.run(plugin_venv.filterkit, "plugins", "--json")
    assert result.returncode == 0, result.stderr
    listing = json.loads(result.stdout)
    kinds = ("stages", "metrics", "classifiers", "formats")
    tables = {kind: {entry["name"]: entry for entry in listing[kind]} for kind in kinds}
    for kind, name in (("stages", "tfidf"), ("stages", "logtf"), ("metrics", "gss"), ("classifiers", "rocchio")):
        entry = tables[kind][name]
        assert (entry["plugin"], entry["distribution"]) == ("tfidf", "filterkit-tfidf"), entry
    fasttext = tables["formats"]["fasttext"]
    assert (fasttext["plugin"], fasttext["distribution"]) == ("fasttext", "filterkit-fasttext"), fasttext
    assert "gss" in tables["stages"], "every metric, a plugin's too, gets a scorer stage"
    assert tables["stages"]["l2"]["distribution"] == "filterkit-arff"
    assert listing["skipped"] == [] and listing["without_hooks"] == []


def rf_best_threshold(column: np.ndarray, positive: np.ndarray) -> float:
    """The best ``log2(2 + tp / max(1, fp))`` over every cut between consecutive distinct values
    ("has" = value > cut); 0 for a feature with one value only."""
    values = np.unique(column)
    if len(values) < 2:
        return 0.0
    has = column[None, :] > values[:-1, None]
    tp = (has & positive).sum(axis=1).astype(np.float64)
    fp = (has & ~positive).sum(axis=1).astype(np.float64)
    return float(np.max(np.log2(2.0 + tp / np.maximum(1.0, fp))))


def tfidf_select_rf_l2(train: np.ndarray, positive: np.ndarray, test: np.ndarray, top: int):
    """``tfidf select --metric rf --top K l2`` in plain numpy: the kept columns and the test rows."""
    idf = np.log((1.0 + len(train)) / (1.0 + np.count_nonzero(train, axis=0))) + 1.0
    weighted = train * idf
    scores = np.array([rf_best_threshold(weighted[:, j], positive) for j in range(train.shape[1])])
    kept = np.sort(np.lexsort((np.arange(len(scores)), -scores))[:top])
    rows = (test * idf)[:, kept]
    norms = np.linalg.norm(rows, axis=1)
    return kept, rows / np.where(norms > 0, norms, 1.0)[:, None]


def oh0_rows():
    """oh0's word counts, class codes, which rows are of class Ethics, and the words' names."""
    schema, chunk = read_arff(OH0)
    values = chunk.dense_values()
    positive = values[:, -1] == schema.attributes[-1].labels.index("Ethics")
    return values[:, :-1], values[:, -1], positive, [a.name for a in schema.attributes[:-1]]


def assert_chain_output(stdout: bytes, names: list[str], kept: np.ndarray, expected: np.ndarray, labels) -> None:
    schema, chunk = read_bytes(stdout)
    assert [a.name for a in schema.attributes] == [names[j] for j in kept] + ["class"]
    assert chunk.is_sparse, "tfidf, select and l2 keep zeros zero: sparse in, sparse out"
    np.testing.assert_allclose(chunk.dense_values()[:, :-1], expected, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(chunk.dense_values()[:, -1], labels)


@pytest.mark.slow
def test_venv_chain_of_tfidf_rf_selection_and_l2_matches_numpy(plugin_venv):
    counts, classes, positive, names = oh0_rows()
    result = plugin_venv.run(
        plugin_venv.filterkit, "--positive", "Ethics", OH0, "tfidf", "select", "--metric", "rf", "--top", TOP, "l2"
    )
    assert result.returncode == 0, result.stderr
    kept, expected = tfidf_select_rf_l2(counts, positive, counts, TOP)
    assert_chain_output(result.stdout, names, kept, expected, classes)


def split_rows(folder: Path) -> tuple[Path, Path]:
    """oh0 as two files: its even data rows (training) and its odd ones (held out)."""
    text = OH0.read_text(encoding="utf-8")
    header, data = re.split(r"(?im)^@data[ \t]*\n", text, maxsplit=1)
    lines = [line for line in data.splitlines() if line.strip() and not line.lstrip().startswith("%")]
    paths = []
    for name, part in (("train.arff", lines[0::2]), ("held_out.arff", lines[1::2])):
        paths.append(folder / name)
        paths[-1].write_text(header + "@data\n" + "\n".join(part) + "\n", encoding="utf-8")
    return paths[0], paths[1]


@pytest.mark.slow
def test_venv_saved_model_applies_the_training_idf_and_selection_to_held_out_rows(plugin_venv, tmp_path):
    train, held_out = split_rows(tmp_path)
    model = tmp_path / "model.json"
    fitted = plugin_venv.run(
        plugin_venv.filterkit,
        "--positive",
        "Ethics",
        "--save-model",
        model,
        "-o",
        tmp_path / "train.out.arff",
        train,
        "tfidf",
        "select",
        "--metric",
        "rf",
        "--top",
        TOP,
        "l2",
    )
    assert fitted.returncode == 0, fitted.stderr
    stages = json.loads(model.read_text())["stages"]
    assert [(s["name"], s["plugin"], s["distribution"]) for s in stages] == [
        ("tfidf", "tfidf", "filterkit-tfidf"),
        ("select", "selection", "filterkit-arff"),
        ("l2", "normalizers", "filterkit-arff"),
    ]
    assert stages[0]["state"]["documents"] == 502

    applied = plugin_venv.run(plugin_venv.filterkit, "apply", model, held_out)
    assert applied.returncode == 0, applied.stderr
    counts, classes, positive, names = oh0_rows()
    kept, expected = tfidf_select_rf_l2(counts[0::2], positive[0::2], counts[1::2], TOP)
    assert_chain_output(applied.stdout, names, kept, expected, classes[1::2])

    again = plugin_venv.run(plugin_venv.filterkit, "apply", model, train)
    assert again.returncode == 0, again.stderr
    assert without_comments(again.stdout) == without_comments((tmp_path / "train.out.arff").read_bytes())


@pytest.mark.slow
def test_venv_runs_the_example_s_own_tests(plugin_venv):
    # Without this interpreter's third-party pytest plugins: the example needs none, and they slow the start.
    result = plugin_venv.run(
        plugin_venv.python,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        plugin_venv.example_tests,
        timeout=300,
        env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
    )
    report = result.stdout.decode("utf-8", "replace")
    assert result.returncode == 0, report + result.stderr
    counts = dict((word, int(number)) for number, word in re.findall(r"(\d+) (passed|failed|skipped|error)", report))
    assert counts.get("passed", 0) >= 20 and set(counts) == {"passed"}, report


@pytest.mark.slow
def test_venv_mypy_strict_passes_on_the_examples_against_the_installed_py_typed(plugin_venv):
    """filterkit ships py.typed: mypy reads the installed package's annotations (without the marker it finds
    no types there), and both example plugins are clean under ``--strict`` against them (one run: mypy's time
    goes into reading filterkit's annotations, not the two modules)."""
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (the dev extra has it)")
    tfidf, fasttext = plugin_venv.examples["filterkit-tfidf"], plugin_venv.examples["filterkit-fasttext"]
    result = plugin_venv.run(
        sys.executable,
        "-m",
        "mypy",
        "--strict",
        "--no-incremental",
        "--config-file",
        tfidf / "pyproject.toml",
        "--python-executable",
        plugin_venv.python,
        tfidf / "filterkit_tfidf.py",
        fasttext / "filterkit_fasttext.py",
        timeout=300,
    )
    report = result.stdout.decode("utf-8", "replace")
    assert result.returncode == 0, report + result.stderr
    assert report.startswith("Success: no issues found in 2 source files"), report


# --- issue 73's "done when": each kind of plugin through every route, installed ------------------

#: The chain of both examples' stages and metric on oh0: logtf, tfidf, selection by gss (presence) and l2.
OH0_CHAIN = ("logtf", "tfidf", "select", "--metric", "gss", "--presence", "--top", TOP, "l2")
#: Every plugin of the examples at once, on fastText lines: the format's text, both stages, the gss scorer.
FASTTEXT_CHAIN = ("words", "--counts", "--lowercase", "logtf", "tfidf", "gss", "--presence", "l2")
#: What the examples' plugin modules may import of filterkit: its plugin API, nothing else.
PLUGIN_MODULES = (EXAMPLE / "filterkit_tfidf.py", FASTTEXT / "filterkit_fasttext.py")


@pytest.mark.parametrize("module", PLUGIN_MODULES, ids=lambda path: path.name)
def test_example_plugin_imports_filterkit_only_through_filterkit_plugin(module):
    imported = set()
    for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{module.name} imports relatively (line {node.lineno})"
            imported.add(node.module)
    assert {name for name in imported if name.split(".")[0] in ("filterkit", "filterkit_plugins")} == {
        "filterkit.plugin"
    }


def logtf_tfidf_select_gss_l2(counts: np.ndarray, positive: np.ndarray, top: int):
    """``logtf tfidf select --metric gss --presence --top K l2`` in plain numpy: the kept columns and the rows."""
    present = counts > 0
    weighted = np.where(present, 1.0 + np.log(np.where(present, counts, 1.0)), 0.0)
    weighted *= np.log((1.0 + len(counts)) / (1.0 + present.sum(axis=0))) + 1.0
    tp = (present & positive[:, None]).sum(axis=0).astype(np.float64)
    fp = (present & ~positive[:, None]).sum(axis=0).astype(np.float64)
    pos, neg = float(positive.sum()), float((~positive).sum())
    scores = (tp * (neg - fp) - fp * (pos - tp)) / (pos + neg) ** 2
    kept = np.sort(np.lexsort((np.arange(len(scores)), -scores))[:top])
    rows = weighted[:, kept]
    norms = np.linalg.norm(rows, axis=1)
    return kept, rows / np.where(norms > 0, norms, 1.0)[:, None]


@pytest.fixture(scope="module")
def oh0_chain_output(plugin_venv) -> bytes:
    """What the environment's ``filterkit`` writes for :data:`OH0_CHAIN` on oh0, Ethics the positive class."""
    result = plugin_venv.run(plugin_venv.filterkit, "--positive", "Ethics", OH0, *OH0_CHAIN)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.slow
def test_venv_example_stages_and_metric_on_the_command_line_match_numpy(oh0_chain_output):
    counts, classes, positive, names = oh0_rows()
    kept, expected = logtf_tfidf_select_gss_l2(counts, positive, TOP)
    assert_chain_output(oh0_chain_output, names, kept, expected, classes)


@pytest.mark.slow
def test_venv_dask_engine_runs_the_example_stages_and_metric_as_the_local_engine(plugin_venv, oh0_chain_output):
    """The workers are processes of the environment's interpreter: they find the plugins by their entry points."""
    pytest.importorskip("dask.distributed", reason="Dask is not installed (pip install 'filterkit-arff[dask]')")
    result = plugin_venv.run(
        plugin_venv.filterkit, "--engine", "dask", "--partitions", "3", "--positive", "Ethics", OH0, *OH0_CHAIN
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == oh0_chain_output


SKLEARN_PIPELINE = """
import json, sys
import numpy as np
from sklearn.pipeline import make_pipeline
from filterkit.sklearn import L2Normalizer, LogTf, Selector, load_arff, transformer_for

X, y, _ = load_arff(sys.argv[1])
selector = Selector(metric="gss", presence=True, top=int(sys.argv[3]))
pipeline = make_pipeline(LogTf(), transformer_for("tfidf")(), selector, L2Normalizer())
np.save(sys.argv[2], pipeline.fit_transform(X, y == "Ethics").toarray())
print(json.dumps([int(j) for j in selector.get_support(indices=True)]))
"""


@pytest.mark.slow
def test_venv_scikit_learn_pipeline_of_the_example_stages_gives_the_command_line_s_values(
    plugin_venv, oh0_chain_output, tmp_path
):
    """``logtf`` by its class name, ``tfidf`` by ``transformer_for`` and ``gss`` as ``Selector``'s metric."""
    features = tmp_path / "features.npy"
    result = plugin_venv.run(plugin_venv.python, "-c", SKLEARN_PIPELINE, OH0, features, TOP)
    assert result.returncode == 0, result.stderr
    schema, chunk = read_bytes(oh0_chain_output)
    names = oh0_rows()[3]
    assert [names[j] for j in json.loads(result.stdout)] == [a.name for a in schema.attributes[:-1]]
    np.testing.assert_array_equal(np.load(features), chunk.dense_values()[:, :-1])


def csv_rows(stdout: bytes) -> list[dict]:
    """``predict``'s CSV output as one dict a row."""
    header, *rows = stdout.decode("utf-8").splitlines()
    return [dict(zip(header.split(","), row.split(","))) for row in rows]


@pytest.mark.slow
def test_venv_rocchio_trained_on_fasttext_lines_predicts_by_its_centroids(plugin_venv, tmp_path):
    """``train`` and ``predict`` with every plugin of the examples at once: fastText lines, both stages, the gss
    scorer and ``rocchio``, whose decisions are those of the class centroids of the chain's training output."""
    grain = write_grain_files(tmp_path)
    train, test, model, chain = grain / "train.ft", grain / "test.ft", tmp_path / "m.json", tmp_path / "chain.json"
    task = ("--positive", "grain")
    trained = plugin_venv.run(
        plugin_venv.filterkit, "train", "-o", model, "--classifier", "rocchio", *task, train, *FASTTEXT_CHAIN
    )
    assert trained.returncode == 0, trained.stderr
    document = json.loads(model.read_text())
    assert (document["classifier"]["name"], document["classifier"]["distribution"]) == ("rocchio", "filterkit-tfidf")
    assert document["input"]["format"] == "fasttext"
    predicted = plugin_venv.run(plugin_venv.filterkit, "predict", model, test)
    assert predicted.returncode == 0, predicted.stderr
    explained = plugin_venv.run(plugin_venv.filterkit, "explain", model, test, "--json", "--top", "1")
    assert explained.returncode == 0, explained.stderr

    fitted = plugin_venv.run(
        plugin_venv.filterkit, *task, "--save-model", chain, "-o", tmp_path / "train.out.arff", train, *FASTTEXT_CHAIN
    )
    assert fitted.returncode == 0, fitted.stderr
    applied = plugin_venv.run(plugin_venv.filterkit, "apply", chain, test)
    assert applied.returncode == 0, applied.stderr
    schema, training = read_arff(tmp_path / "train.out.arff")
    [label] = [position for position, attribute in enumerate(schema.attributes) if attribute.name == "class"]
    positive = training.dense_values()[:, label] == schema.attributes[label].labels.index("grain")
    words = np.delete(training.dense_values(), label, axis=1)
    centroids = [words[rows].mean(axis=0) for rows in (positive, ~positive)]
    threshold = (centroids[0] @ centroids[0] - centroids[1] @ centroids[1]) / 2
    test_words = np.delete(read_bytes(applied.stdout)[1].dense_values(), label, axis=1)
    expected = test_words @ (centroids[0] - centroids[1]) - threshold

    rows = csv_rows(predicted.stdout)
    np.testing.assert_allclose([float(row["decision"]) for row in rows], expected, rtol=1e-12, atol=1e-15)
    assert [row["label"] == "grain" for row in rows] == (expected > 0).tolist()
    assert 0 < sum(expected > 0) < len(expected), "both classes are predicted"
    intercepts = [json.loads(line)["intercept"] for line in explained.stdout.decode("utf-8").splitlines()]
    np.testing.assert_allclose(intercepts, -threshold, rtol=1e-12)


# --- the example as a --plugins-dir file, in this process ------------------------------------


def test_example_module_loads_with_plugins_dir_for_quick_iteration():
    if _has_version("filterkit-tfidf", (0, 0)):
        pytest.skip("filterkit-tfidf is installed here: --plugins-dir would register its names a second time")
    registry = load_plugins(EXAMPLE)
    assert {"tfidf", "logtf", "gss"} <= set(registry.stages)
    assert registry.stages["tfidf"].distribution == f"plugins-dir {EXAMPLE}"
    assert "gss" in registry.metrics and "rocchio" in registry.classifiers
    assert registry.skipped == [] and registry.without_hooks == []


# --- docs/plugins.md ---------------------------------------------------------------------------


def markdown_sections(text: str) -> dict[str, str]:
    """Each heading line (``## Title``) and the text under it up to the next heading of the same
    or a higher level; lines inside fenced code blocks are never headings."""
    lines = text.splitlines()
    headings, fenced = [], False
    for number, line in enumerate(lines):
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,6} ", line):
            headings.append((number, len(line) - len(line.lstrip("#")), line))
    sections = {}
    for position, (number, level, line) in enumerate(headings):
        end = next((n for n, deeper, _ in headings[position + 1 :] if deeper <= level), len(lines))
        sections[line] = "\n".join(lines[number + 1 : end])
    return sections


def subheadings(section: str, level: int) -> list[str]:
    """The titles of the headings of ``level`` in a section's text (outside code blocks)."""
    return [line[level + 1 :] for line in markdown_sections(section) if line.startswith("#" * level + " ")]


def hookspec_functions() -> dict:
    """Every hook specification in filterkit.hookspecs, found by pluggy's marker, not by name."""
    marker = f"{hookspecs.hookspec.project_name}_spec"
    return {name: f for name, f in inspect.getmembers(hookspecs, inspect.isfunction) if hasattr(f, marker)}


def call_signature(function) -> str:
    """``name(a, b=1)``: the parameters without self and without annotations."""
    parameters = [
        p.name if p.default is inspect.Parameter.empty else f"{p.name}={p.default!r}"
        for p in inspect.signature(function).parameters.values()
        if p.name != "self"
    ]
    return f"{function.__name__}({', '.join(parameters)})"


def public_methods(cls) -> dict:
    return {
        name: member
        for name, member in inspect.getmembers(cls)
        if not name.startswith("_") and (inspect.isfunction(member) or inspect.ismethod(member))
    }


#: The classes whose methods a "### NAME methods" section documents: a stage's core and the protocols it may
#: opt into (filterkit.stage), each method under its own heading.
DOCUMENTED_TOGETHER = {Stage: (Stage, ValueMapped, KeptPass, Updatable, Explainable)}


@pytest.fixture(scope="module")
def docs_sections() -> dict[str, str]:
    return markdown_sections(DOCS.read_text(encoding="utf-8"))


def test_every_hookspec_has_a_heading_with_its_signature_in_docs_plugins_md(docs_sections):
    hooks = hookspec_functions()
    assert hooks, "no hook specification found in filterkit.hookspecs"
    reference = docs_sections["## Hook reference"]
    assert sorted(subheadings(reference, 3)) == sorted(hooks), (
        "docs/plugins.md '## Hook reference' must have one '### NAME' per hookspec"
    )
    for name, function in hooks.items():
        assert call_signature(function) in docs_sections[f"### {name}"], (
            f"### {name} must show {call_signature(function)}"
        )


@pytest.mark.parametrize("cls", [Stage, Classifier], ids=lambda c: c.__name__)
def test_documented_methods_are_exactly_the_public_methods_with_their_signatures(docs_sections, cls):
    section = docs_sections[f"### {cls.__name__} methods"]
    documented = {}
    for title in subheadings(section, 4):
        match = re.fullmatch(r"`((\w+)\(.*\))`", title)
        assert match, f"'#### {title}' should read '#### `method(arguments)`'"
        documented[match.group(2)] = match.group(1)
    methods = {
        name: method for part in DOCUMENTED_TOGETHER.get(cls, (cls,)) for name, method in public_methods(part).items()
    }
    assert sorted(documented) == sorted(methods)
    for name, method in methods.items():
        assert documented[name] == call_signature(method)


@pytest.mark.parametrize("cls", [Option, Context, StateArray, Metric, Accepts], ids=lambda c: c.__name__)
def test_documented_fields_are_exactly_the_dataclass_fields(docs_sections, cls):
    section = docs_sections[f"### {cls.__name__} fields"]
    documented = re.findall(r"^\| `(\w+)` \|", section, flags=re.M)
    assert documented == [field.name for field in dataclasses.fields(cls)]


def test_code_the_tutorial_quotes_from_the_example_is_the_example_s_code():
    """A fenced block whose first line is ``# FILE``, FILE a file of the example, is a verbatim part of FILE."""
    quotes = re.findall(r"^```\w*\n# ([\w./-]+)\n(.*?)^```", DOCS.read_text(encoding="utf-8"), flags=re.S | re.M)
    quoted = [(name, block) for name, block in quotes if (EXAMPLE / name).is_file()]
    assert {name for name, _ in quoted} == {"pyproject.toml", "filterkit_tfidf.py", "tests/test_tfidf.py"}
    for name, block in quoted:
        assert block.strip("\n") in (EXAMPLE / name).read_text(encoding="utf-8"), (
            f"docs/plugins.md quotes {name}:\n{block}"
        )
