"""``select --per-class``: each class's one-vs-rest ranking taken in turns (issue 16, item 4).

The classes take turns in the order the class attribute declares them (classes without
training rows take none); each takes its best feature not yet taken; a class's ties go to
the earlier attribute.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from chain_helpers import REAL, read_bytes
from filterkit.arff import read_arff
from filterkit_plugins.selection import round_robin

OH0 = REAL / "oh0.wc.arff"


def test_turns_skip_features_already_taken():
    first = np.array([3.0, 2.0, 1.0, 0.0])
    second = np.array([3.0, 0.0, 0.0, 1.0])
    # first takes 0; second's best (0) is taken, so it takes 3; first takes 1; second's next are 1 (taken), then 2
    assert round_robin([first, second]).tolist() == [0, 3, 1, 2]


def test_a_class_breaks_its_ties_by_position():
    assert round_robin([np.array([1.0, 1.0, 1.0]), np.array([0.0, 5.0, 5.0])]).tolist() == [0, 1, 2]


def test_a_class_stops_taking_turns_below_the_minimum():
    first = np.array([3.0, 2.0, 1.0, 0.0])
    second = np.array([3.0, 0.0, 0.0, 1.0])
    assert round_robin([first, second], minimum=2.0).tolist() == [0, 1]


def class_rankings(run_filterkit, top: int) -> dict[str, list[str]]:
    """Each class's own one-vs-rest ranking of oh0's words (presence IG), from ``info --positive``."""
    labels = read_arff(OH0)[0].attributes[-1].labels
    rankings = {}
    for label in labels:
        result = run_filterkit("info", "--metric", "ig", "--presence", "--positive", label, "--top", top, "--json", OH0)
        assert result.status == 0, result.stderr
        rankings[label] = [f["name"] for f in json.loads(result.stdout)["ranking"]["features"]]
    return rankings


def kept_words(run_filterkit, *options) -> list[str]:
    result = run_filterkit(OH0, "select", "--metric", "ig", "--presence", *options)
    assert result.status == 0, result.stderr
    schema, _ = read_bytes(result.stdout)
    return [a.name for a in schema.attributes[:-1]]


def test_every_class_gets_its_turns_on_oh0(run_filterkit):
    rankings = class_rankings(run_filterkit, 12)
    expected, taken = [], set()
    for _ in range(3):
        for label, ranking in rankings.items():  # the declared order of the labels
            word = next(word for word in ranking if word not in taken)
            taken.add(word)
            expected.append((label, word))
    kept = kept_words(run_filterkit, "--per-class", "--top", 30)
    assert set(kept) == taken and len(kept) == 30
    per_label = {label: [word for owner, word in expected if owner == label] for label in rankings}
    assert all(len(words) == 3 for words in per_label.values())
    assert per_label["Heart-Valve-Prosthesis"] == ["valve", "replac", "mitral"]


def test_per_class_differs_from_the_global_rankings_on_oh0(run_filterkit):
    per_class = set(kept_words(run_filterkit, "--per-class", "--top", 10))
    by_max = set(kept_words(run_filterkit, "--combine", "max", "--top", 10))
    joint = set(kept_words(run_filterkit, "--top", 10))
    assert per_class != by_max and per_class != joint
    # the global rankings give Heart-Valve-Prosthesis several of the ten words; per class it gets one
    assert {"valve", "replac", "mitral"} <= by_max
    assert "valve" in per_class and not {"replac", "mitral"} & per_class


def test_per_class_does_not_depend_on_the_chunk_size(run_filterkit):
    whole = run_filterkit(OH0, "select", "--metric", "bns", "--per-class", "--sparsity", 3)
    chunked = run_filterkit("--chunk-rows", 41, OH0, "select", "--metric", "bns", "--per-class", "--sparsity", 3)
    assert whole.status == 0, whole.stderr
    assert whole.stdout == chunked.stdout


def test_per_class_with_a_minimum_score_keeps_what_some_class_scores_that_high(run_filterkit):
    document = run_filterkit("info", "--metric", "ig", "--presence", "--combine", "max", "--top", 5000, "--json", OH0)
    best = {f["name"]: f["score"] for f in json.loads(document.stdout)["ranking"]["features"]}
    kept = kept_words(run_filterkit, "--per-class", "--min-score", 0.1)
    assert set(kept) == {name for name, score in best.items() if score >= 0.1}


def test_per_class_saves_and_applies(run_filterkit, tmp_path):
    model = tmp_path / "model.json"
    fitted = run_filterkit(
        "--save-model", model, OH0, "select", "--metric", "ig", "--presence", "--per-class", "--top", 20
    )
    assert fitted.status == 0, fitted.stderr
    applied = run_filterkit("apply", model, OH0)
    assert applied.status == 0, applied.stderr
    assert applied.stdout.splitlines()[1:] == fitted.stdout.splitlines()[1:]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--per-class", "--top", "5"], "select --per-class needs --metric NAME"),
        (["--metric", "svm", "--per-class", "--top", "5"], "select --per-class needs --metric NAME"),
        (["--metric", "ig", "--per-class", "--combine", "joint", "--top", "5"], "not with --combine joint"),
    ],
)
def test_per_class_is_refused_without_a_metric_or_with_joint(run_filterkit, options, message):
    result = run_filterkit(OH0, "select", *options)
    # options that cannot go together: a usage error (2), as click's own checks are
    assert result.status == 2 and "\nError: " in result.stderr and message in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    "chain",
    [
        ["select", "--metric", "ig", "--presence", "--per-class", "--top", "20"],
        ["chi", "--no-scale", "select", "--top", "20"],
        ["select", "--metric", "ig", "--top", "20"],
    ],
)
def test_the_dask_engine_gives_the_local_bytes(run_filterkit, dask_scheduler, tmp_path, chain):
    local = run_filterkit(OH0, *chain)
    assert local.status == 0, local.stderr
    output = tmp_path / "out.arff"
    engine = ["--engine", "dask", "--scheduler", dask_scheduler, "-o", output, "--partitions", 3]
    on_dask = run_filterkit(*engine, OH0, *chain)
    assert on_dask.status == 0, on_dask.stderr
    assert output.read_bytes() == local.stdout
