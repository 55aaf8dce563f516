"""``train --help`` shows the classifier options' defaults a model is fitted with (issue 72 item 11b): the SVM's C
by the inner F1 (``LinearSVM.trained_defaults``, docs/documents.md), where ``evaluate``'s default is the AUC."""

from __future__ import annotations

import re


def shown_default(help_text: bytes, flag: str) -> str:
    """The ``(default: …)`` click's help gives ``flag``, its lines joined."""
    text = " ".join(help_text.decode().split())
    found = re.search(re.escape(flag) + r" \[[^]]*\] .*?\(default: ([^)]*)\)", text)
    assert found is not None, text
    return found.group(1)


def test_train_s_help_gives_the_c_search_a_model_is_fitted_with(run_filterkit):
    assert shown_default(run_filterkit("train", "--help").stdout, "--svm-c-by") == "f1"
    assert shown_default(run_filterkit("help", "train").stdout, "--svm-c-by") == "f1"
    assert shown_default(run_filterkit("evaluate", "--help").stdout, "--svm-c-by") == "auc"
    assert shown_default(run_filterkit("train", "--help").stdout, "--svm-decision") == "platt-cv"


def test_train_picks_c_as_its_help_says(run_filterkit, tmp_path):
    import json

    from chain_helpers import REAL

    model = tmp_path / "model.json"
    result = run_filterkit("train", "-q", "-o", model, "--positive", "Iris-setosa", REAL / "iris.arff", "l2")
    assert result.status == 0, result.stderr
    classifier = json.loads(model.read_text())["classifier"]
    assert classifier["params"]["c_by"] == "f1" and "inner_f1" in classifier["fitted"]


def test_jobs_default_to_every_core_from_many_rows_and_the_help_says_how_many(run_filterkit):
    import os

    from filterkit import evaluation

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    for command in ("train", "evaluate"):
        text = " ".join(run_filterkit(command, "--help").stdout.decode().split())
        floor = f" from {evaluation.POOL_FROM_ROWS:,} training rows, else 1" if evaluation.POOL_FROM_ROWS else ""
        expected = f"[default: (every core this process may use (here {cores}){floor}); x>=1]"
        assert expected in text, command


def test_a_pool_is_started_by_default_only_for_enough_rows(monkeypatch):
    from filterkit import evaluation

    monkeypatch.setattr(evaluation, "usable_cores", lambda: 16)
    monkeypatch.setattr(evaluation, "POOL_FROM_ROWS", 5_000)  # as where workers are not forked
    assert evaluation.pool_size(None, evaluation.POOL_FROM_ROWS) == 16
    assert evaluation.pool_size(None, evaluation.POOL_FROM_ROWS - 1) == 1  # a worker's start would cost more
    assert evaluation.pool_size(3, 10) == 3 and evaluation.pool_size(1, 10**6) == 1  # --jobs as given
