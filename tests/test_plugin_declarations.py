"""Issue 72, item 5: an attribute the chain reads of a plugin's stage, metric or classifier (``learns``,
``accepts``, ``widening_hint``, a metric's ``joint``, a classifier's ``multiclass``…) that raises or is not of
its declared type is an error naming the plugin, one line and exit status 1, not a traceback or a run that
takes a string's truth for a flag's.  A stage's attributes are checked where the chain reads them (a stage's
may depend on its options or its fit); a metric's and a classifier's when the plugin registers them."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from chain_helpers import REAL
from filterkit.plugins import load_plugins

IRIS = REAL / "iris.arff"
LIAR = Path(__file__).resolve().parent / "plugins_fixtures" / "declarations"

#: Each attribute of the ``liar`` stage, and the end of the error its value of the wrong type gives.
WRONG_STAGE_ATTRIBUTES = {
    "learns": "its learns is 'yes' (str), expected True or False",
    "accepts": "its accepts is 'text' (str), expected a filterkit.stage.Accepts",
    "widening_hint": "its widening_hint is 5 (int), expected a string or None",
    "changes_class": "its changes_class is 'no' (str), expected True or False",
    "filters_rows": "its filters_rows is 1 (int), expected True or False",
    "keeps_fit_pass": "its keeps_fit_pass is 'yes' (str), expected True or False",
}


def liar_origin() -> str:
    return f"stage 'liar' (plugin 'liar ({LIAR / 'liar.py'})', distribution 'plugins-dir {LIAR}')"


@pytest.mark.parametrize("attribute", sorted(WRONG_STAGE_ATTRIBUTES))
def test_a_stage_attribute_that_raises_is_an_error_naming_the_plugin(attribute, run_filterkit):
    result = run_filterkit(IRIS, "liar", "--attribute", attribute, "--fault", "raises", plugins_dir=LIAR)
    assert (result.status, result.stdout) == (1, b"")
    assert result.stderr == (
        f"filterkit: error: {liar_origin()}: reading its {attribute} raised RuntimeError: {attribute} is broken\n"
    )


@pytest.mark.parametrize("attribute", sorted(WRONG_STAGE_ATTRIBUTES))
def test_a_stage_attribute_of_the_wrong_type_is_an_error_naming_the_plugin(attribute, run_filterkit):
    result = run_filterkit(IRIS, "liar", "--attribute", attribute, "--fault", "wrong-type", plugins_dir=LIAR)
    assert (result.status, result.stdout) == (1, b"")
    assert result.stderr == f"filterkit: error: {liar_origin()}: {WRONG_STAGE_ATTRIBUTES[attribute]}\n"


@pytest.mark.parametrize("fault, why", [("raises", "RuntimeError: state_arrays is broken"), ("wrong-type", "Attr")])
def test_state_arrays_that_break_saving_the_model_are_an_error_naming_the_plugin(fault, why, run_filterkit, tmp_path):
    model = tmp_path / "model.json"
    result = run_filterkit(
        "--save-model", model, IRIS, "liar", "--attribute", "state_arrays", "--fault", fault, plugins_dir=LIAR
    )
    assert (result.status, model.exists()) == (1, False)
    assert result.stderr.startswith(f"filterkit: error: {liar_origin()} failed during saving the model: {why}")
    assert result.stderr.count("\n") == 1


def test_the_liar_runs_when_nothing_is_broken(run_filterkit):
    result = run_filterkit(IRIS, "liar", plugins_dir=LIAR)
    assert (result.status, result.stderr) == (0, "")
    assert result.stdout.count(b"Iris-") == 150 + 3  # the rows, and the three labels of the class


#: A plugin registering a metric or a classifier whose ``attribute`` raises (``{raising}``) or holds ``{wrong}``.
METRIC_PLUGIN = """
from filterkit.hookspecs import hookimpl
from filterkit.metrics import Metric


class RaisingMetric(Metric):
    def __getattribute__(self, name):
        if {raising} and name == {attribute!r}:
            raise RuntimeError(name + " is broken")
        return super().__getattribute__(name)


@hookimpl
def register_metrics(register):
    fields = {{"summary": "True positive rate."}}
    if not {raising}:
        fields[{attribute!r}] = {wrong}
    register(RaisingMetric("tpr", lambda tp, fp, pos, neg: tp / pos, **fields))
"""

CLASSIFIER_PLUGIN = """
from filterkit.classifier import Classifier
from filterkit.hookspecs import hookimpl


class Raising:
    def __get__(self, instance, owner=None):
        raise RuntimeError({attribute!r} + " is broken")


class Constant(Classifier):
    \"\"\"Score every row 0.\"\"\"

    name = "constant"
    {attribute} = Raising() if {raising} else {wrong}


@hookimpl
def register_classifiers(register):
    register(Constant)
"""

WRONG_METRIC_ATTRIBUTES = {
    "summary": ("3", "its summary is 3 (int), expected a string"),
    "invert_negative": ("'yes'", "its invert_negative is 'yes' (str), expected True or False"),
    "uses_counts": ("None", "its uses_counts is None (NoneType), expected True or False"),
    "joint": ("5", "its joint is 5 (int), expected a function or None"),
    "class_free": ("'no'", "its class_free is 'no' (str), expected True or False"),
    "options": ("['alpha']", "its options is ['alpha'] (list), expected a tuple of filterkit.stage.Option"),
    "uses_vocabulary": ("1", "its uses_vocabulary is 1 (int), expected True or False"),
}
WRONG_CLASSIFIER_ATTRIBUTES = {
    "multiclass": ("'yes'", "its multiclass is 'yes' (str), expected True or False"),
    "saveable": ("1", "its saveable is 1 (int), expected True or False"),
    "has_weights": ("'no'", "its has_weights is 'no' (str), expected True or False"),
    "has_probabilities": ("None", "its has_probabilities is None (NoneType), expected True or False"),
    "trained_defaults": ("['C']", "its trained_defaults is ['C'] (list), expected a dict of option names to values"),
}
CASES = [
    ("metric", "tpr", METRIC_PLUGIN, attribute, raising, wrong, problem)
    for attribute, (wrong, problem) in WRONG_METRIC_ATTRIBUTES.items()
    for raising in (True, False)
] + [
    ("classifier", "constant", CLASSIFIER_PLUGIN, attribute, raising, wrong, problem)
    for attribute, (wrong, problem) in WRONG_CLASSIFIER_ATTRIBUTES.items()
    for raising in (True, False)
]


def plugin_folder(tmp_path, kind: str, source: str, attribute: str, raising: bool, wrong: str) -> Path:
    folder = tmp_path / "plugins"
    folder.mkdir()
    code = source.format(attribute=attribute, raising=raising, wrong=wrong)
    (folder / f"lying_{kind}.py").write_text(textwrap.dedent(code))
    return folder


def command_of(kind: str) -> list:
    """A run that uses the registered metric or classifier."""
    if kind == "metric":
        return ["--positive", "Iris-setosa", IRIS, "select", "--metric", "tpr", "--top", "2"]
    return ["evaluate", "--classifier", "constant", "--positive", "Iris-setosa", IRIS, "l2"]


@pytest.mark.parametrize(
    "kind, name, source, attribute, raising, wrong, problem",
    CASES,
    ids=[f"{case[0]}-{case[3]}-{'raises' if case[4] else 'wrong-type'}" for case in CASES],
)
def test_a_metric_or_classifier_attribute_that_raises_or_lies_is_a_problem_naming_the_plugin(
    kind, name, source, attribute, raising, wrong, problem, tmp_path, run_filterkit, monkeypatch, capsysbinary
):
    folder = plugin_folder(tmp_path, kind, source, attribute, raising, wrong)
    reason = f"reading its {attribute} raised RuntimeError: {attribute} is broken" if raising else problem
    plugin = f"lying_{kind} ({folder / f'lying_{kind}.py'})"
    registry = load_plugins(folder).complete()
    assert [(p.plugin, p.reason) for p in registry.skipped] == [
        (plugin, f"{kind} '{name}': {reason} (in register_{kind}s)")
    ]
    capsysbinary.readouterr()  # the warning of the load above
    monkeypatch.setenv("FILTERKIT_STRICT_PLUGINS", "1")
    result = run_filterkit(*command_of(kind), plugins_dir=folder)
    assert (result.status, result.stdout) == (1, b"")
    assert result.stderr == (
        f"filterkit: error: plugin '{plugin}' (distribution plugins-dir {folder}) is skipped: {kind} '{name}': "
        f"{reason} (in register_{kind}s); disable it with FILTERKIT_DISABLE_PLUGINS=lying_{kind} "
        "(FILTERKIT_STRICT_PLUGINS is set)\n"
    )
