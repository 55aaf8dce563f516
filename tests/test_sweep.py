"""``filterkit evaluate --sweep STAGE.OPTION=V1,V2,…`` (issue 21, item 3): each chain at every value of
one stage option, on the same folds — JMLR 2003's F1-versus-number-of-features curves, and with
--train-fraction KDD'09's learning curves."""

from __future__ import annotations

import json

import pytest

from chain_helpers import REAL

DIABETES = REAL / "diabetes.arff"
FAST = ("--folds", "3", "--svm-c-values", "1", "--svm-inner-folds", "2")
CHAIN = ("select", "--metric", "ig")

pytestmark = pytest.mark.slow


def evaluate_json(run_filterkit, *arguments) -> dict:
    result = run_filterkit("evaluate", "-q", "--json", *FAST, *arguments)
    assert result.status == 0, result.stderr
    return json.loads(result.stdout)


def test_each_swept_value_is_the_chain_run_with_that_value_on_the_same_folds(run_filterkit):
    swept = evaluate_json(run_filterkit, "--sweep", "select.top=2,5", DIABETES, *CHAIN)
    assert [m["chain"] for m in swept["macro"]] == [
        "select --metric ig [select.top=2]",
        "select --metric ig [select.top=5]",
    ]
    assert [m["sweep"] for m in swept["macro"]] == [{"select.top": 2}, {"select.top": 5}]
    assert swept["settings"]["sweep"] == "select.top=2,5"
    for result, top in zip(swept["results"], ("2", "5")):
        alone = evaluate_json(run_filterkit, DIABETES, "select", "--metric", "ig", "--top", top)
        assert result["per_fold"] == alone["per_fold"]
        assert result["features"] == alone["features"] == [int(top)] * 3
        assert result["f1"] == alone["f1"]
    assert swept["settings"]["fold_of_row"] == alone["settings"]["fold_of_row"]


def test_a_swept_option_the_chain_gives_too_is_refused_not_replaced(run_filterkit):
    """The sweep replaced the chain's own --top 8 silently, and the chain's label showed both values."""
    for chain in (("select", "--metric", "ig", "--top", "8"), ("select", "--top=8", "--metric", "ig")):
        result = run_filterkit("evaluate", "-q", "--sweep", "select.top=2,5", DIABETES, *chain)
        assert result.status == 2 and result.stdout == b""
        assert "stage 'select' is given --top, which --sweep sets: leave it out of the chain" in result.stderr


def test_a_sweep_with_train_fractions_gives_one_learning_curve_per_value(run_filterkit):
    swept = evaluate_json(
        run_filterkit, "--sweep", "select.top=1,3", "--train-fraction", "0.5,1", "--stats", DIABETES, *CHAIN
    )
    assert [(m["sweep"]["select.top"], m["train_fraction"]) for m in swept["macro"]] == [
        (1, 0.5),
        (1, 1.0),
        (3, 0.5),
        (3, 1.0),
    ]
    # Paired tests of every swept chain against the first value, fraction by fraction.
    assert [(p["chain"], p["train_fraction"]) for p in swept["paired"]] == [
        ("select --metric ig [select.top=3]", 0.5),
        ("select --metric ig [select.top=3]", 1.0),
    ]


def test_a_compared_sweep_sweeps_every_chain(run_filterkit):
    swept = evaluate_json(
        run_filterkit, "--sweep", "select.top=1,2", "--compare", DIABETES, " ".join(CHAIN), "minmax " + " ".join(CHAIN)
    )
    assert [(m["chain"].split(" ")[0], m["sweep"]["select.top"]) for m in swept["macro"]] == [
        ("select", 1),
        ("select", 2),
        ("minmax", 1),
        ("minmax", 2),
    ]
    assert [r["features"] for r in swept["results"]] == [[1] * 3, [2] * 3, [1] * 3, [2] * 3]


@pytest.mark.parametrize(
    ("sweep", "words", "message"),
    [
        ("select.top", CHAIN, "is not STAGE.OPTION=VALUE"),
        ("top=1,2", CHAIN, "is not STAGE.OPTION=VALUE"),
        ("select.top=", CHAIN, "is not STAGE.OPTION=VALUE"),
        ("select.nope=1", CHAIN, "stage 'select' has no option 'nope' (it has: "),
        ("select.top=1", ("minmax",), "chain 'minmax' has no stage 'select'"),
        ("select.top=0", CHAIN, "option --top: '0' is below 1"),
        ("select.top=x", CHAIN, "option --top: 'x' is not an integer"),
        ("select.top=2,2", CHAIN, "a value is given twice"),
        ("nostage.top=2", CHAIN, "nostage"),
    ],
)
def test_bad_sweeps_are_clear_errors(run_filterkit, sweep, words, message):
    # a mistake in the words typed is a usage error (exit 2), as the chain command's; it was exit 1
    result = run_filterkit("evaluate", "--sweep", sweep, DIABETES, *words)
    assert result.status == 2 and "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("Error: ") and message in lines[-1], lines
