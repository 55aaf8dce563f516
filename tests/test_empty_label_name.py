"""A MEKA label attribute named ``''`` (which the ARFF reader reads, as Weka does, and ``train`` keeps): the outputs
that join a row's labels into one text (CSV's ``|``) cannot tell it from no label, so they refuse it, as the chain's
CSV writer already did; those that keep a row's labels apart (ARFF, JSON Lines' arrays of ``predict --json``)
write it.  JSON Lines output of the rows themselves refuses it too: its reader refuses an empty label."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from filterkit.errors import FilterkitError
from filterkit.reports import label_set_predictions_csv

DATA = Path(__file__).parent / "data" / "multilabel" / "three-labels-synthetic.arff"


@pytest.fixture
def empty_label(tmp_path) -> Path:
    """three-labels-synthetic.arff with its label ``b`` named ``''``: row 2 holds no label, row 8 ``''`` and
    ``rare``."""
    text = DATA.read_text(encoding="utf-8")
    assert "@attribute b {0,1}" in text
    path = tmp_path / "mle.arff"
    path.write_text(text.replace("@attribute b {0,1}", "@attribute '' {0,1}"), encoding="utf-8")
    return path


@pytest.fixture
def empty_label_model(run_filterkit, tmp_path, empty_label) -> Path:
    model = tmp_path / "mle.json"
    trained = run_filterkit("train", "-q", "-o", model, empty_label, "words", "l2")
    assert trained.status == 0, trained.stderr
    assert json.loads(model.read_text())["classifier"]["classes"] == ["use::editing", "", "rare"]
    return model


def test_predict_csv_refuses_an_empty_label_and_writes_no_file(run_filterkit, tmp_path, empty_label, empty_label_model):
    """Rows 2 (no label) and 8 (the label '') were both written ``2,,…``/``8,,…``."""
    out = tmp_path / "p.csv"
    refused = run_filterkit("predict", "-o", out, empty_label_model, empty_label)
    assert (refused.status, refused.stdout, out.exists()) == (1, b"", False)
    assert refused.stderr == (
        f"filterkit: error: {empty_label_model}: label '' is empty, which a row's labels joined by | cannot show "
        "in CSV: write JSON Lines (--json)\n"
    )
    assert run_filterkit("predict", empty_label_model, empty_label).status == 1  # to standard output too


def test_predict_json_lines_keeps_an_empty_label_apart_from_none(run_filterkit, empty_label, empty_label_model):
    written = run_filterkit("predict", "--json", empty_label_model, empty_label)
    assert written.status == 0, written.stderr
    records = [json.loads(line) for line in written.stdout.decode().splitlines()]
    assert all(set(record["labels"]) <= {"use::editing", "", "rare"} for record in records)
    assert "" in records[0]["decision"]


@pytest.mark.parametrize("option", ["--predictions", "--label-issues"])
def test_evaluate_refuses_an_empty_label_before_any_row_is_read(run_filterkit, tmp_path, empty_label, option):
    """``--predictions`` wrote truth {} and truth {''} alike (empty), and {'', 'rare'} as ``|rare``."""
    out = tmp_path / "out.csv"
    test = tmp_path / "mle2.arff"
    test.write_bytes(empty_label.read_bytes())
    given = ("--test", test) if option == "--predictions" else ("--folds", "2")
    refused = run_filterkit("evaluate", "-q", *given, option, out, empty_label, "words", "l2")
    assert (refused.status, refused.stdout, out.exists()) == (1, b"", False)
    assert refused.stderr == (
        f"filterkit: error: {option}: label '' is empty, which a row's labels joined by | cannot show: "
        "rename the label in the data\n"
    )


def test_the_predictions_csv_refuses_an_empty_label_itself():
    predictions = [{"chain": "c", "rows": [1, 2], "truth": [[0, 0], [1, 1]], "predicted": [[0, 0], [1, 0]]}]
    with pytest.raises(FilterkitError, match="label '' is empty, which a row's labels joined by | cannot show"):
        label_set_predictions_csv(["", "rare"], predictions)
    assert label_set_predictions_csv(["a", "rare"], predictions).splitlines()[1:] == ["c,1,,", "c,2,a|rare,a"]


def test_arff_output_keeps_an_empty_label_json_lines_refuses_it(run_filterkit, tmp_path, empty_label):
    """The JSON Lines writer wrote ``"labels":[""]``, which its reader refuses ("holds an empty label")."""
    arff = tmp_path / "out.arff"
    assert run_filterkit(empty_label, "-o", arff).status == 0
    assert "@attribute '' {0,1}" in arff.read_text()
    out = tmp_path / "mle.jsonl"
    refused = run_filterkit(empty_label, "-o", out)
    assert (refused.status, out.exists()) == (1, False)
    assert refused.stderr == (
        "filterkit: error: JSON Lines output: the label '' is empty, which a labels field cannot hold "
        "(reading it refuses an empty label)\n"
    )
