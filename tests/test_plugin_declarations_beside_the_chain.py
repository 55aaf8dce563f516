"""Issue 72, item 5, where a stage's declarations are read outside the chain's run: ``train``'s refusal of a
stage that drops rows, ``update``'s reading of a model's statistics and the scikit-learn adapters (which stage
has a transformer, its tags, ``partial_fit``).  A plugin whose ``filters_rows``, ``learns`` or ``accepts`` raises
or is not of its declared type is an error naming it, not a traceback or a string taken for a flag; ``load``
refuses a format option its file's format does not take, as the command line does (item 6)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest

import filterkit.sklearn as filterkit_sklearn
from chain_helpers import REAL
from filterkit.errors import FilterkitError
from filterkit.plugins import load_plugins

IRIS = REAL / "iris.arff"
LIAR = Path(__file__).resolve().parent / "plugins_fixtures" / "declarations"
X = np.arange(12.0).reshape(6, 2)

#: A plugin of two stages: ``counter``, which learns and keeps its statistics (so a model of it is updatable),
#: with a ``learns`` broken as --lie says (once fitted only, with --once-fitted); and ``rowless``, whose
#: ``filters_rows`` raises whatever its options.
PLUGIN = '''
from filterkit.hookspecs import hookimpl
from filterkit.stage import Option, Stage


class Counter(Stage):
    """Count the rows and pass them through."""

    name = "counter"
    options = (
        Option("lie", str, "none", "How learns is broken.", choices=("none", "raises", "wrong-type")),
        Option("once_fitted", bool, False, "Break learns only once fitted."),
    )

    @property
    def learns(self):
        if self.params["lie"] == "none" or (self.params["once_fitted"] and not hasattr(self, "rows")):
            return True
        if self.params["lie"] == "raises":
            raise RuntimeError("learns is broken")
        return "yes"

    def new_statistics(self):
        return 0

    def accumulate(self, statistics, chunk):
        return statistics + chunk.n_rows

    def merge(self, first, second):
        return first + second

    def finalize(self, statistics):
        self.rows = statistics

    def transform(self, chunk):
        return chunk

    def saved_statistics(self, statistics):
        return {"rows": statistics}

    def loaded_statistics(self, saved):
        return saved["rows"]


class Rowless(Stage):
    """Pass the rows through."""

    name = "rowless"

    @property
    def filters_rows(self):
        raise RuntimeError("filters_rows is broken")

    def transform(self, chunk):
        return chunk


@hookimpl
def register_stages(register):
    register(Counter)
    register(Rowless)
'''


@pytest.fixture
def plugins(tmp_path) -> Path:
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "lying.py").write_text(textwrap.dedent(PLUGIN))
    return folder


def origin(stage: str, folder: Path, module: str) -> str:
    return f"stage '{stage}' (plugin '{module} ({folder / f'{module}.py'})', distribution 'plugins-dir {folder}')"


@pytest.fixture
def adapters(monkeypatch, plugins):
    """``transformer_for`` uncached, over the built-in stages, the liar and the plugin above."""
    registry = load_plugins(plugins)
    registry.stages["liar"] = load_plugins(LIAR).stages["liar"]
    monkeypatch.setattr(filterkit_sklearn, "_registry", lambda: registry)
    return filterkit_sklearn.transformer_for.__wrapped__


@pytest.mark.parametrize(
    "fault, problem",
    [
        ("raises", "reading its filters_rows raised RuntimeError: filters_rows is broken"),
        ("wrong-type", "its filters_rows is 1 (int), expected True or False"),
    ],
)
def test_train_names_the_plugin_whose_filters_rows_is_broken(fault, problem, run_filterkit, tmp_path):
    model = tmp_path / "model.json"
    arguments = ("-o", model, "--positive", "Iris-setosa", IRIS, "liar", "--attribute", "filters_rows")
    result = run_filterkit("train", "-q", *arguments, "--fault", fault, plugins_dir=LIAR)
    assert (result.status, result.stdout, model.exists()) == (1, b"", False)
    liar = f"stage 'liar' (plugin 'liar ({LIAR / 'liar.py'})', distribution 'plugins-dir {LIAR}')"
    assert result.stderr == f"filterkit: error: {liar}: {problem}\n"


def test_update_names_the_plugin_whose_learns_raises(plugins, run_filterkit, tmp_path):
    model = tmp_path / "model.json"
    assert run_filterkit("--save-model", model, "--updatable", IRIS, "counter", plugins_dir=plugins).status == 0
    saved = json.loads(model.read_text())
    saved["stages"][0]["params"]["lie"] = "raises"
    model.write_text(json.dumps(saved))
    result = run_filterkit("update", "-o", tmp_path / "updated.json", model, IRIS, plugins_dir=plugins)
    assert (result.status, result.stdout) == (1, b"")
    problem = "reading its learns raised RuntimeError: learns is broken"
    assert result.stderr == f"filterkit: error: {model}: {origin('counter', plugins, 'lying')}: {problem}\n"


def test_a_stage_whose_filters_rows_is_a_property_of_its_options_has_a_transformer(adapters):
    assert np.array_equal(adapters("liar")().fit_transform(X), X)


def test_a_stage_whose_filters_rows_raises_has_no_transformer_and_the_error_names_it(adapters, plugins):
    problem = "reading its filters_rows raised RuntimeError: filters_rows is broken"
    with pytest.raises(FilterkitError) as raised:
        adapters("rowless")
    assert str(raised.value) == f"{origin('rowless', plugins, 'lying')}: {problem}"


def test_the_listing_of_transformers_leaves_out_a_stage_that_drops_rows_or_whose_filters_rows_is_broken(adapters):
    listed = filterkit_sklearn._transformable_stages()
    assert {"counter", "liar", "l2", "keep", "select"} <= set(listed)
    assert not {"rowless", "fold"} & set(listed)


@pytest.mark.parametrize(
    "fault, problem",
    [
        ("raises", "reading its accepts raised RuntimeError: accepts is broken"),
        ("wrong-type", "its accepts is 'text' (str), expected a filterkit.stage.Accepts"),
    ],
)
@pytest.mark.parametrize("use", ["tags", "fit"])
def test_the_tags_and_fit_name_the_plugin_whose_accepts_is_broken(use, fault, problem, adapters):
    adapter = adapters("liar")(attribute="accepts", fault=fault)
    with pytest.raises(FilterkitError) as raised:
        adapter.__sklearn_tags__() if use == "tags" else adapter.fit(X)
    assert str(raised.value) == f"{origin('liar', LIAR, 'liar')}: {problem}"


@pytest.mark.parametrize(
    "fault, problem",
    [
        ("raises", "reading its learns raised RuntimeError: learns is broken"),
        ("wrong-type", "its learns is 'yes' (str), expected True or False"),
    ],
)
def test_partial_fit_names_the_plugin_whose_learns_breaks_once_fitted(fault, problem, adapters, plugins):
    adapter = adapters("counter")(lie=fault, once_fitted=True).fit(X)
    with pytest.raises(FilterkitError) as raised:
        adapter.partial_fit(X)
    assert str(raised.value) == f"{origin('counter', plugins, 'lying')}: {problem}"


def test_load_refuses_a_format_option_the_file_s_format_does_not_take(tmp_path):
    with pytest.raises(TypeError, match=r"^load: arff input does not take the format option text='class'$"):
        filterkit_sklearn.load(IRIS, text="class")
    path = tmp_path / "in.csv"
    path.write_text("a,b\n1,x\n2,y\n")
    with pytest.raises(TypeError, match=r"^load: csv input does not take the format option zero_based=True$"):
        filterkit_sklearn.load(path, zero_based=True)
    X, y, names = filterkit_sklearn.load(path, text="b")
    assert (names, list(y)) == (["a"], ["x", "y"])
