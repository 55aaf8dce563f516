"""New rows are read with the model's attribute types: ``predict``, ``apply`` and ``update`` given ``--text``,
``--nominal`` or ``--numeric`` other than the training data was read with ignored them, with status 0 (found by a
hostile review of the rows ``predict`` reads); they now refuse them, naming what the model's reading was."""

from __future__ import annotations

import pytest

from filterkit.testing import run_filterkit

TRAINING = "code,x,class\n" + "".join(f"{1 + i % 2},0.{3 + i},{'ab'[i % 2]}\n" for i in range(6))


@pytest.fixture
def trained(tmp_path):
    """A model trained on a CSV file with ``--nominal code``, and that file."""
    rows, model = tmp_path / "rows.csv", tmp_path / "m.json"
    rows.write_text(TRAINING)
    made = run_filterkit("train", "-q", "--folds", "2", "--positive", "a", "--nominal", "code", "-o", model, rows)
    assert made.status == 0, made.stderr
    return model, rows


@pytest.mark.parametrize("command", ["predict", "apply"])
@pytest.mark.parametrize(
    "given, reading",
    [
        (("--numeric", "code"), "--numeric code contradicts the model: its training data was read without --numeric"),
        (("--text", "x"), "--text x contradicts the model: its training data was read without --text"),
        (("--nominal", "x"), "--nominal x contradicts the model: its training data was read with --nominal code"),
    ],
)
def test_a_typing_option_other_than_the_model_s_is_refused(trained, tmp_path, command, given, reading):
    model, rows = trained
    out = tmp_path / "out"
    refused = run_filterkit(command, model, rows, *given, "-o", out)
    assert (refused.status, refused.stderr, out.exists()) == (1, f"filterkit: error: {reading}\n", False)


@pytest.mark.parametrize("command", ["predict", "apply"])
def test_the_model_s_own_typing_option_or_none_reads_the_same_rows(trained, command):
    model, rows = trained
    plain = run_filterkit(command, model, rows)
    assert plain.status == 0 and plain.stdout.count(b"\n") > 6, plain.stderr
    assert run_filterkit(command, model, rows, "--nominal", "code").stdout == plain.stdout


def test_new_rows_in_another_format_are_checked_too(trained, tmp_path):
    model, _ = trained
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(f'{{"code": "{1 + i % 2}", "x": 0.{3 + i}, "class": "{"ab"[i % 2]}"}}\n' for i in range(6)))
    assert run_filterkit("predict", model, rows).status == 0
    refused = run_filterkit("predict", model, rows, "--numeric", "code")
    assert refused.status == 1
    assert refused.stderr.startswith("filterkit: error: --numeric code contradicts the model")


def test_update_refuses_it_as_well(trained, tmp_path):
    _, rows = trained
    model = tmp_path / "chain.json"
    saved = run_filterkit(
        "-q", "--save-model", model, "--updatable", "--nominal", "code", "-o", tmp_path / "out.arff", rows, "bns"
    )
    assert saved.status == 0, saved.stderr
    assert run_filterkit("update", model, rows, "-o", tmp_path / "same.json").status == 0
    refused = run_filterkit("update", model, rows, "--numeric", "code", "-o", tmp_path / "new.json")
    assert refused.status == 1 and "--numeric code contradicts the model" in refused.stderr
    assert not (tmp_path / "new.json").exists()


def test_the_same_columns_in_another_order_are_the_model_s_reading(tmp_path):
    rows, model = tmp_path / "rows.csv", tmp_path / "m.json"
    rows.write_text("code,x,class\n" + "".join(f"{1 + i % 2},{i % 3},{'ab'[i % 2]}\n" for i in range(6)))
    options = ("train", "-q", "--folds", "2", "--positive", "a", "--nominal", "code,x", "-o", model, rows)
    assert run_filterkit(*options).status == 0
    plain = run_filterkit("predict", model, rows)
    assert plain.status == 0 and run_filterkit("predict", model, rows, "--nominal", "x,code").stdout == plain.stdout
    refused = run_filterkit("predict", model, rows, "--nominal", "x")
    assert refused.status == 1 and "--nominal x contradicts the model" in refused.stderr
