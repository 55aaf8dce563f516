"""The stage contract (issue 15): every stage's output checked on every chunk, and ``check_stage``.

``tests/plugins_fixtures/contract_breakers`` is a plugin package whose stages each break one
rule; each must be caught, naming the stage, its plugin and distribution, with exit status 1
and no output file — in the chain, ``apply``, the scikit-learn adapters — and
``filterkit.testing.check_stage`` must name the rule each one breaks, while every built-in
stage and the example plugin pass it.
"""

from __future__ import annotations

import functools
import json
import re
import sys

import numpy as np
import pytest

import filterkit.testing
from chain_helpers import FIXTURE_PLUGINS, REAL, TESTS
from filterkit import sklearn as filterkit_sklearn
from filterkit.errors import FilterkitError
from filterkit.model import save_model
from filterkit.plugins import load_plugins
from filterkit.runner import Chain
from filterkit.sources import FileSource
from filterkit.testing import RULES, StageCheckError, check_stage, generated_rows, read_output, run_filterkit

BREAKERS = FIXTURE_PLUGINS / "contract_breakers"
BREAKERS_FILE = BREAKERS / "filterkit_contract_breakers.py"
EXAMPLE = TESTS.parent / "examples" / "filterkit-tfidf"
ORIGIN = f"(plugin 'filterkit_contract_breakers ({BREAKERS_FILE})', distribution 'plugins-dir {BREAKERS}')"


def breakers_module():
    load_plugins(BREAKERS)
    return sys.modules["filterkit_local_plugin_filterkit_contract_breakers"]


#: Each stage breaking a rule checked while a chain runs, and what the error says came back.
RUNTIME_VIOLATIONS = {
    "dropcolumn": ("transform", "it returned {less} columns; its output schema declares {n}"),
    "addcolumn": ("transform", "it returned {more} columns; its output schema declares {n}"),
    "droprow": (
        "transform",
        "it was given {rows} rows and returned {fewer} (a stage that drops or adds rows declares filters_rows = True)",
    ),
    "setclass": ("transform", "it changed the class column's values (a stage that does declares changes_class = True)"),
    "badlabel": (
        "transform",
        "attribute {n} is nominal with {labels} labels, and a value came back as 99.0 "
        "(a label's position, 0 to {last_label}, or NaN)",
    ),
    "dropclass": ("fit", "its output schema dropped the class attribute {class_declaration}"),
    "toarray": ("transform", "transform returned a 2-D numpy array, expected a filterkit Chunk"),
    "tonone": ("transform", "transform returned None, expected a filterkit Chunk"),
    "float32": ("transform", "the chunk's values are float32, expected float64"),
    "tocoo": ("transform", "transform returned a sparse COO matrix, expected CSR"),
}

FILES = {
    "iris.arff": {
        "n": 5,
        "rows": 150,
        "labels": 3,
        "class_declaration": "'class' {Iris-setosa,Iris-versicolor,Iris-virginica}",
    },
    "oh0.wc.arff": {"n": 3183, "rows": 1003, "labels": 10, "class_declaration": None},
}


def expected_error(stage: str, file: str) -> str:
    step, what = RUNTIME_VIOLATIONS[stage]
    facts = dict(FILES[file])
    facts.update(less=facts["n"] - 1, more=facts["n"] + 1, fewer=facts["rows"] - 1, last_label=facts["labels"] - 1)
    if facts["class_declaration"] is None:
        from filterkit.arff import read_arff
        from filterkit.schema import describe

        schema, _ = read_arff(REAL / file)
        facts["class_declaration"] = describe(schema.attributes[-1])
    return (
        f"filterkit: error: stage '{stage}' {ORIGIN} broke the stage contract during {step}: {what.format(**facts)}\n"
    )


@pytest.mark.slow
@pytest.mark.parametrize("file", sorted(FILES))
@pytest.mark.parametrize("stage", sorted(RUNTIME_VIOLATIONS))
def test_a_stage_breaking_the_contract_is_an_error_naming_it_with_no_output(tmp_path, stage, file):
    output = tmp_path / "out.arff"
    result = run_filterkit("-o", output, REAL / file, "l2", stage, "l1", plugins_dir=BREAKERS)
    assert (result.status, result.stdout) == (1, b"")
    assert result.stderr == expected_error(stage, file)
    assert list(tmp_path.iterdir()) == []


def test_a_stage_that_forgets_string_columns_is_caught(tmp_path):
    schema, rows = generated_rows()
    data = tmp_path / "generated.arff"
    with open(data, "wb") as stream:
        from filterkit.arff.writer import write_arff

        write_arff(stream, schema, [rows])
    result = run_filterkit("-o", tmp_path / "out.arff", data, "losetext", plugins_dir=BREAKERS)
    assert (result.status, result.stdout) == (1, b"")
    assert [p.name for p in tmp_path.iterdir()] == ["generated.arff"]
    assert result.stderr == (
        f"filterkit: error: stage 'losetext' {ORIGIN} broke the stage contract during transform: "
        "its text side columns are []; its output schema's string and relational attributes are at [5]\n"
    )


def test_the_last_stage_is_checked_before_the_writer_sees_its_output():
    result = run_filterkit(REAL / "iris.arff", "toarray", plugins_dir=BREAKERS)
    assert result.status == 1
    assert "Traceback" not in result.stderr
    assert result.stderr == expected_error("toarray", "iris.arff")


def test_apply_checks_a_saved_chain_s_stages_too(tmp_path):
    registry = load_plugins(BREAKERS)
    chain = Chain([registry.make_stage("l2", {}), registry.make_stage("droprow", {})])
    chain.fit(FileSource(str(REAL / "iris.arff")))
    model = tmp_path / "m.json"
    save_model(model, chain, registry)
    result = run_filterkit("apply", "-o", tmp_path / "out.arff", model, REAL / "iris.arff", plugins_dir=BREAKERS)
    assert (result.status, result.stdout) == (1, b"")
    assert result.stderr == expected_error("droprow", "iris.arff")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.json"]


def test_the_scikit_learn_adapter_checks_the_stage_too(monkeypatch):
    registry = load_plugins(BREAKERS)
    monkeypatch.setattr(filterkit_sklearn, "_registry", lambda: registry)
    # the uncached maker: the adapter classes other tests made (and pickle by name) stay as they are
    adapter = filterkit_sklearn.transformer_for.__wrapped__("droprow")()
    with pytest.raises(
        ValueError, match=r"broke the stage contract during transform: it was given 5 rows and returned 4"
    ):
        adapter.fit_transform(np.arange(10.0).reshape(5, 2))


def test_a_plugin_stage_that_keeps_the_contract_runs_unchanged():
    result = run_filterkit(REAL / "iris.arff", "l2", "l1", plugins_dir=BREAKERS)
    assert (result.status, result.stderr) == (0, "")
    _, out = read_output(result.stdout)
    np.testing.assert_allclose(np.abs(out.values[:, :4]).sum(axis=1), 1.0, rtol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize(
    "stage",
    sorted(RUNTIME_VIOLATIONS)
    + ["losetext", "chunkmax", "noisy", "sparsedoubles", "inplace", "fussy", "shiftzeros", "firstwins", "forgetful"],
)
def test_check_stage_names_the_rule_each_broken_stage_breaks(stage):
    module = breakers_module()
    stage_class = next(s for s in module.STAGES if s.name == stage)
    with pytest.raises(StageCheckError) as raised:
        check_stage(stage_class)
    assert raised.value.rule == module.BREAKS[stage]
    assert str(raised.value).startswith(
        f"check_stage({stage_class.__qualname__}): rule '{module.BREAKS[stage]}' broke on "
    )


def test_check_stage_refuses_a_class_that_is_not_a_stage_and_bad_options():
    with pytest.raises(StageCheckError, match="rule 'declaration' broke on its class: it registered the class dict"):
        check_stage(dict)
    registry = load_plugins()
    with pytest.raises(StageCheckError, match="rule 'declaration' broke on its options: .*needs exactly one of"):
        check_stage(registry.stage("select"))


#: ``check_stage`` of a built-in stage, run once per options: the positive-class tests below ask again for
#: what the sweep checked (a stage's result does not change within a process).
checked_stage = functools.lru_cache(maxsize=None)(check_stage)


def built_in_cases() -> list:
    return [
        pytest.param(name, options, id=f"{name}{json.dumps(options, sort_keys=True) if options else ''}")
        for name, registered in sorted(load_plugins().stages.items())
        for options in registered.value.examples
    ]


@pytest.mark.slow
@pytest.mark.parametrize("name, options", built_in_cases())
def test_every_built_in_stage_passes_check_stage(name, options):
    stage_class = load_plugins().stage(name)
    accepted = checked_stage(stage_class, **options)
    assert "generated rows (dense)" in accepted and "generated rows (sparse)" in accepted


@pytest.mark.slow
def test_check_stage_with_a_positive_class_checks_the_data_that_has_it():
    shape = load_plugins().stage("shape")
    every = ["generated rows", "iris.arff", "oh0_sample.arff"]
    assert checked_stage(shape) == [f"{data} ({form})" for data in every for form in ("dense", "sparse")]
    assert checked_stage(shape, positive="Ethics") == ["oh0_sample.arff (dense)", "oh0_sample.arff (sparse)"]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["shape", "l2", "minmax"])
def test_check_stage_merges_a_one_row_file_with_the_statistics_of_no_rows(name, tmp_path, monkeypatch):
    one_row = tmp_path / "one_row.arff"
    one_row.write_text("@relation one\n@attribute a numeric\n@attribute b numeric\n@attribute c {x,y}\n@data\n1,2,x\n")
    monkeypatch.setattr(filterkit.testing, "SHIPPED_DATA", ())  # the sweep above checked these stages on them
    accepted = check_stage(load_plugins().stage(name), data=(one_row,))
    assert accepted == [f"{data} ({form})" for data in ("generated rows", one_row) for form in ("dense", "sparse")]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["logtf", "tfidf", "gss"])
def test_the_example_plugin_s_stages_pass_check_stage(name):
    stage_class = load_plugins(EXAMPLE).stage(name)
    assert len(check_stage(stage_class)) >= 2


def test_the_rules_are_the_documented_ones():
    from filterkit import testing

    for rule in RULES:
        assert f"``{rule}``" in testing.__doc__
    assert set(breakers_module().BREAKS.values()) == set(RULES)


def test_a_stage_refusing_data_with_an_error_is_not_a_crash():
    registry = load_plugins()
    with pytest.raises(FilterkitError, match="Ethics"):
        Chain([registry.make_stage("shape", {})], positive="Ethics").fit(FileSource(str(REAL / "iris.arff")))
    assert "iris.arff (dense)" not in checked_stage(registry.stage("shape"), positive="Ethics")


@pytest.mark.parametrize("chain", [["crashing"], ["select", "--metric", "crashing", "--top", "5"], ["scalar"]])
def test_a_broken_metric_is_named_with_its_plugin_not_the_scorer_s(tmp_path, chain):
    result = run_filterkit(
        "-o", tmp_path / "out.arff", "--positive", "Ethics", REAL / "oh0.wc.arff", *chain, plugins_dir=BREAKERS
    )
    assert (result.status, result.stdout) == (1, b"")
    if chain == ["scalar"]:
        # best-threshold scoring: one count per distinct training value of each word, 8,895 in all
        expected = f"metric 'scalar' {ORIGIN} returned scores of shape () for counts of shape (8895,)"
    else:
        expected = f"metric 'crashing' {ORIGIN} failed: ZeroDivisionError: no score today"
    assert result.stderr == f"filterkit: error: {expected}\n"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "classifier, step, what",
    [
        ("crashy", "failed during fit:", "RuntimeError: cannot learn today"),
        # a test fold of oh0's 1,003 rows holds 100 or 101 of them
        (
            "shortscore",
            "broke the classifier contract:",
            "score returned values of shape ({short},) for {rows} test rows (one number per row is expected)",
        ),
    ],
)
def test_a_broken_classifier_is_named_with_its_plugin(classifier, step, what):
    result = run_filterkit(
        "evaluate",
        "--positive",
        "Ethics",
        "--folds",
        "10",
        "--classifier",
        classifier,
        REAL / "oh0.wc.arff",
        "l2",
        plugins_dir=BREAKERS,
    )
    assert result.status == 1
    assert "Traceback" not in result.stderr
    expected = f"filterkit: error: classifier '{classifier}' {ORIGIN} {step} {what}\n"
    assert result.stderr in {expected.format(short=rows - 1, rows=rows) for rows in (100, 101)}


def test_a_stage_whose_constructor_crashes_is_named_with_its_plugin():
    result = run_filterkit(REAL / "iris.arff", "fussy", plugins_dir=BREAKERS)
    assert (result.status, result.stdout) == (1, b"")
    assert (
        result.stderr
        == f"filterkit: error: stage 'fussy' {ORIGIN} failed while being made: KeyError: 'no such setting'\n"
    )


def test_check_stage_names_the_column_and_row_where_the_row_forms_disagree():
    stage_class = next(s for s in breakers_module().STAGES if s.name == "sparsedoubles")
    with pytest.raises(StageCheckError) as raised:
        check_stage(stage_class)
    # The first generated data set is dense: its first feature doubles when read sparse.
    message = str(raised.value)
    found = re.search(r"gave other values: '[^']+' in row \d+ is (\S+) read dense, (\S+) read sparse$", message)
    assert found, message
    dense, sparse = (float(value) for value in found.groups())
    assert sparse == 2 * dense != 0
