"""``train`` says what it is doing (issue 75, item 4): each cross-validation fit of the candidates counted,
with an estimate of the time left, then the final fit; the stages' warnings in the chain command's words,
a candidate's once, the kept chain's once; and without ``--progress`` nothing but what it said before."""

from __future__ import annotations

import io
import itertools
import json
import re
from pathlib import Path

import pytest

from filterkit import training
from filterkit.evaluation import Settings
from filterkit.plugins import load_plugins
from filterkit.progress import LOG, Progress
from filterkit.tasks import ChainSpec

#: Documents whose words 'n' and 'class' are named like two other attributes: ``words`` renames them and
#: warns, in every fold alike (each document holds both words).
DOCUMENTS = [
    ("class n grain wheat", "yes"),
    ("n class grain corn", "yes"),
    ("class n wheat harvest", "yes"),
    ("n class grain export", "yes"),
    ("class n wheat tonnes", "yes"),
    ("n class grain prices", "yes"),
    ("class n oil crude", "no"),
    ("n class oil barrels", "no"),
    ("class n shares market", "no"),
    ("n class bank rates", "no"),
    ("class n oil opec", "no"),
    ("n class market stocks", "no"),
]
RENAMING = (
    "stage 1 'words' renames words named like another attribute (give --prefix to keep them): "
    "'class' as 'class_1', 'n' as 'n_1'"
)
CHAINS = ("words l2", "words bns l2")


@pytest.fixture
def documents(tmp_path) -> Path:
    path = tmp_path / "docs.arff"
    rows = "".join(f"'{text}',{k},{label}\n" for k, (text, label) in enumerate(DOCUMENTS))
    path.write_text(
        f"@relation docs\n@attribute text string\n@attribute n numeric\n@attribute class {{yes,no}}\n@data\n{rows}"
    )
    return path


def _candidates(documents: Path) -> list:
    """The words after ``-o MODEL``: two folds, the two candidate chains on ``documents``."""
    return ["--folds", "2", "--compare", documents, *CHAINS]


def _train(run_filterkit, documents: Path, model: Path, *options):
    return run_filterkit("train", *options, "-o", model, *_candidates(documents))


def test_each_candidate_warns_once_naming_it_and_the_kept_chain_once_in_the_chain_commands_words(
    run_filterkit, documents, tmp_path
):
    result = _train(run_filterkit, documents, tmp_path / "m.json")
    assert result.status == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if "warning" in line]
    assert warnings == [
        f"filterkit: warning: candidate 1 of 2 'words l2', fold 1: {RENAMING}",
        f"filterkit: warning: candidate 2 of 2 'words bns l2', fold 1: {RENAMING}",
        f"filterkit: warning: {RENAMING}",
    ]
    assert "step" not in result.stderr, "no progress without --progress"


def test_quiet_silences_progress_but_not_the_warnings_as_the_chain_command(run_filterkit, documents, tmp_path):
    loud, quiet = (_train(run_filterkit, documents, tmp_path / f"{k}.json", *q) for k, q in enumerate([[], ["-q"]]))
    assert quiet.status == 0 and quiet.stderr == loud.stderr


def test_progress_counts_every_fit_and_leaves_the_model_and_stdout_as_they_were(run_filterkit, documents, tmp_path):
    silent = _train(run_filterkit, documents, tmp_path / "silent.json")
    shown = _train(run_filterkit, documents, tmp_path / "shown.json", "--progress")
    assert shown.status == silent.status == 0
    assert (tmp_path / "shown.json").read_bytes() == (tmp_path / "silent.json").read_bytes()
    assert shown.stdout == silent.stdout == b""
    steps = [line for line in shown.stderr.splitlines() if line.startswith("filterkit: step")]
    scoring = "filterkit: step 2/2: scoring 2 candidate chains by 2-fold cross-validation"
    assert steps[1] == f"{scoring}: 0/4 fits (0%)"
    assert re.fullmatch(re.escape(scoring) + r": 4 fits in [0-9.]+ s, [0-9.,]+ fits/s", steps[-1])
    assert "fitting 'words" in shown.stderr and "the classifier on all 12 rows…" in shown.stderr
    progress_lines = ("filterkit: step ", "filterkit: fitting ", "filterkit: done in ")
    rest = [line for line in shown.stderr.splitlines() if not line.startswith(progress_lines)]
    assert rest == silent.stderr.splitlines(), "the warnings and the candidates' scores as before"


def test_the_time_left_is_an_estimate_once_a_fit_has_finished(documents):
    """A clock that moves 3 s at each reading: every fit draws the log's line, with "about … left"."""
    ticks = itertools.count(step=3.0)
    stream = io.StringIO()
    progress = Progress(LOG, stream, word="step", clock=lambda: float(next(ticks)))
    registry = load_plugins()
    chains = [ChainSpec(text, [(name, {}) for name in text.split()]) for text in CHAINS]
    warned: list[str] = []
    model = training.train(
        str(documents), chains, Settings(), registry, progress=progress, candidate_folds=2, warn=warned.append
    )
    assert model.section["chain"] in CHAINS
    lines = [line for line in stream.getvalue().splitlines() if "scoring" in line]
    assert lines[0].endswith(": 0/4 fits (0%)")
    assert re.search(
        r": 1/4 fits \(25%\), [0-9.]+ fits/s, about [0-9.]+ s left \(candidate 1 of 2, fold 1 of 2\)$", lines[1]
    )
    assert re.search(r": 3/4 fits \(75%\), .*about [0-9.]+ s left \(candidate 1 of 2, fold 2 of 2\)$", lines[3])
    assert lines[-1].endswith("fits/s") and ": 4 fits in " in lines[-1]
    assert warned[-1] == RENAMING and len(warned) == 3


@pytest.mark.slow
def test_two_jobs_count_the_same_fits_and_make_the_same_model(filterkit_script, documents, tmp_path):
    one, two = (
        filterkit_script("train", "--progress", *jobs, "-o", tmp_path / f"{len(jobs)}.json", *_candidates(documents))
        for jobs in ([], ["--jobs", "2"])
    )
    assert one.status == two.status == 0, two.stderr
    assert (tmp_path / "0.json").read_bytes() == (tmp_path / "2.json").read_bytes()
    for run in (one, two):
        assert "2-fold cross-validation: 0/4 fits (0%)" in run.stderr
        assert re.search(r"cross-validation: 4 fits in [0-9.]+ s", run.stderr)
        assert run.stderr.count("filterkit: warning:") == 3


def test_label_set_candidates_warn_once_each_as_single_label_ones_do(tmp_path):
    """On multi-label data (MEKA's ``-C 2``) each candidate's warning comes back from its folds once too."""
    path = tmp_path / "labels.arff"
    rows = "".join(
        f"{int(label == 'yes')},{int(k % 3 == 0)},'{text}',{k}\n" for k, (text, label) in enumerate(DOCUMENTS)
    )
    path.write_text(
        "@relation 'docs: -C 2'\n@attribute yes {0,1}\n@attribute third {0,1}\n@attribute text string\n"
        f"@attribute n numeric\n@data\n{rows}"
    )
    renaming = RENAMING.replace("'class' as 'class_1', 'n' as 'n_1'", "'n' as 'n_1'")
    warned: list[str] = []
    chains = [ChainSpec(text, [(name, {}) for name in text.split()]) for text in CHAINS]
    training.train(str(path), chains, Settings(), load_plugins(), candidate_folds=2, warn=warned.append)
    assert warned == [
        f"candidate 1 of 2 'words l2', fold 1: {renaming}",
        f"candidate 2 of 2 'words bns l2', fold 1: {renaming}",
        renaming,
    ]


def test_a_class_of_one_training_row_is_warned_of_as_the_search_and_sigmoid_it_costs(run_filterkit, tmp_path):
    """Too few rows for inner folds: C was the grid's first and platt-cv fitted no sigmoid, with no word said."""
    data = tmp_path / "tiny.arff"
    data.write_text('@relation r\n@attribute Text string\n@attribute c {a,b}\n@data\n"x y",a\n"y z",a\n"x",b\n')
    model = tmp_path / "model.json"
    result = run_filterkit("train", "-q", "-o", model, "--svm-c-values", "0.1,1", data, "words", "l2")
    assert result.status == 0, result.stderr
    assert result.stderr == (
        "filterkit: warning: a class has one training row, too few for inner folds: C is the grid's first (0.1), "
        "not searched, and no Platt sigmoid or threshold was fitted (the margin's sign decides)\n"
    )
    assert "sigmoids" not in json.loads(model.read_text())["classifier"]["state"]
