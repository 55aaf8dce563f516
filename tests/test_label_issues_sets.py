"""``filterkit evaluate --label-issues`` on label sets (issue 77, item 3): the rows whose given label set the
out-of-fold per-label probabilities contradict, the same rows in the same order as cleanlab's multi-label
``find_label_issues`` given the same probabilities, each flagged label with the words that pull its row toward
the label's suggested value."""

from __future__ import annotations

import collections
import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest

from filterkit import evaluation
from filterkit.evaluation import Settings
from filterkit.label_issues import (
    LabelIssueFinder,
    LabelSetIssues,
    label_set_pulls,
    label_set_quality_scores,
    per_label_issues,
    ranked_label_set_issues,
)

REUTERS = Path(__file__).parent / "data" / "multilabel" / "reuters-grain-corn.arff"

#: The share of Reuters' rows given one of their two labels turned, and the least share of them that the
#: ranking's top as many rows must hold (the issue's goal).  Observed with seed 77 and 'words --lowercase l2':
#: 5 of the 7 turned rows in the top 7 (all 7 among the 17 rows found); seeds 1-3: 5, 4 and 4 of 7.
FLIPPED_SHARE = 0.03
FLIPPED_FOUND_AT_LEAST = 0.5


def cleanlab_multilabel(truth: np.ndarray, probabilities: np.ndarray, ranked: bool = True) -> np.ndarray:
    """cleanlab's multi-label filter with its defaults, ranked by its label quality scores (else its mask),
    skipping the test where cleanlab is not installed."""
    filters = pytest.importorskip(
        "cleanlab.multilabel_classification.filter", reason="cleanlab (the test extra) checks the numpy filter"
    )
    labels = [np.flatnonzero(row).tolist() for row in truth]
    ranking = "self_confidence" if ranked else None
    return filters.find_label_issues(labels, probabilities, return_indices_ranked_by=ranking, n_jobs=1)


def found_in(truth: np.ndarray, probabilities: np.ndarray) -> np.ndarray:
    """The ranked issues of the numpy filter."""
    return ranked_label_set_issues(
        per_label_issues(truth, probabilities), label_set_quality_scores(truth, probabilities)
    )


def flipped_label_sets(seed: int, labels: int, rows: int, decimals: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Given label sets with a twentieth of their (row, label) entries turned, and each label's probability
    leaning to the true set (``decimals``: rounded, so that scores tie); the last label is held by no row."""
    generator = np.random.default_rng(seed)
    truth = generator.random((rows, labels)) < np.linspace(0.5, 0.05, labels)
    truth[:, -1] = False
    given = truth ^ (generator.random((rows, labels)) < 0.05)
    given[:, -1] = False
    lean = generator.random((rows, labels))
    probabilities = np.where(truth, 0.5 + lean / 2, lean / 2) * 0.7 + generator.random((rows, labels)) * 0.3
    if decimals is not None:
        probabilities = np.round(probabilities, decimals)
    return given, probabilities


@pytest.mark.filterwarnings("ignore:May not flag all label issues")
@pytest.mark.parametrize("labels", [2, 5])
@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("decimals", [None, 1])
def test_the_numpy_filter_finds_cleanlab_s_rows_in_its_order(labels, seed, decimals):
    truth, probabilities = flipped_label_sets(seed, labels, 300, decimals)
    ours = found_in(truth, probabilities)
    assert len(ours) > 5
    np.testing.assert_array_equal(ours, cleanlab_multilabel(truth, probabilities))
    np.testing.assert_array_equal(
        per_label_issues(truth, probabilities).any(axis=1), cleanlab_multilabel(truth, probabilities, ranked=False)
    )
    ranks = pytest.importorskip("cleanlab.multilabel_classification.rank")
    listed = [np.flatnonzero(row).tolist() for row in truth]
    np.testing.assert_array_equal(
        label_set_quality_scores(truth, probabilities), ranks.get_label_quality_scores(listed, probabilities)
    )


def test_the_quality_weighs_the_lowest_self_confidence_most():
    """Row 0: self-confidences 0.9 (given, p 0.9), 0.2 (not given, p 0.8) and 1, sorted 1, 0.9, 0.2:
    0.8 · 0.9 + 0.2 · 1 = 0.92, then 0.8 · 0.2 + 0.2 · 0.92 = 0.344.  Row 1: 0.6, 0.7, 0.1 sorted 0.7, 0.6, 0.1:
    0.8 · 0.6 + 0.2 · 0.7 = 0.62, then 0.8 · 0.1 + 0.2 · 0.62 = 0.204."""
    truth = np.array([[True, False, False], [False, True, True]])
    probabilities = np.array([[0.9, 0.8, 0.0], [0.4, 0.7, 0.1]])
    np.testing.assert_allclose(label_set_quality_scores(truth, probabilities), [0.344, 0.204])


def test_only_a_label_confidently_of_the_other_value_flags_its_row():
    """Label 0, each value's threshold the mean self-confidence of its rows (given: 0.633, not given: 0.75):
    row 2 (given, 1 − p = 0.8) is confidently without it.  Label 1 (given: 0.675, not given: 0.74) flags row 5
    (not given, p 0.9); row 4 (given, p 0.45) contradicts it but reaches neither threshold.  Row 5's quality
    (0.8 · 0.1 + 0.2 · 0.7 = 0.22) ranks it before row 2's (0.8 · 0.2 + 0.2 · 0.9 = 0.34)."""
    truth = np.array([[1, 0], [1, 0], [1, 0], [0, 1], [0, 1], [0, 0], [0, 0]], dtype=bool)
    probabilities = np.array([[0.9, 0.1], [0.8, 0.1], [0.2, 0.1], [0.1, 0.9], [0.3, 0.45], [0.3, 0.9], [0.3, 0.1]])
    flagged = per_label_issues(truth, probabilities)
    np.testing.assert_array_equal(np.argwhere(flagged), [[2, 0], [5, 1]])
    quality = label_set_quality_scores(truth, probabilities)
    np.testing.assert_allclose(quality[[2, 5]], [0.34, 0.22])
    np.testing.assert_array_equal(ranked_label_set_issues(flagged, quality), [5, 2])
    np.testing.assert_array_equal(ranked_label_set_issues(flagged, quality), cleanlab_multilabel(truth, probabilities))


def test_a_label_without_a_classifier_is_not_judged_in_its_fold():
    """A label constant in a fold's training rows has no classifier: its test rows' probability is their given
    value, so that the fold flags none of them by it, and no row is pulled by it."""
    truth = np.array([[True, False], [False, True]])
    found = label_set_pulls([(None, None, list), (None, None, list)], truth, 5)
    np.testing.assert_array_equal(found["probabilities"], [[1.0, 0.0], [0.0, 1.0]])
    assert found["pulls"] == {}
    assert not per_label_issues(truth, found["probabilities"]).any()


@pytest.mark.parametrize("held_by", [1, 2])
def test_a_label_too_rare_for_a_fold_s_probabilities_is_not_judged_and_the_others_are(tmp_path, run_filterkit, held_by):
    """A label of one or two rows has too few in a fold's training rows for the inner cross-validation that fits its
    sigmoid: that label is not judged there (the run once stopped with 'svm does not give probabilities'), the
    others are, and row 46 is still found."""
    source = mislabelled_sets(tmp_path).read_text(encoding="utf-8").splitlines()
    header = source.index("@attribute b {0,1}")
    source[0] = "@relation 'sets: -C 3'"
    source.insert(header + 1, "@attribute c {0,1}")
    data = source.index("@data")
    source[data + 1 :] = [f"{row[:4]}{int(k < held_by)},{row[4:]}" for k, row in enumerate(source[data + 1 :])]
    path = tmp_path / "rare.arff"
    path.write_text("\n".join(source) + "\n", encoding="utf-8")
    issues = tmp_path / "issues.csv"
    result = run_filterkit("evaluate", "-q", "--folds", "3", "--label-issues", issues, path, "l2")
    assert result.status == 0, result.stderr
    table = list(csv.DictReader(io.StringIO(issues.read_text(encoding="utf-8"))))
    assert [line["row"] for line in table[:2]] == ["46", "46"]
    assert {line["label"] for line in table} <= {"a", "b"}


def found_by_evaluate(path, words: list[str], settings: Settings) -> LabelSetIssues:
    """The issues ``evaluate --label-issues`` finds in the label sets of ``path`` with the chain of ``words``."""
    from filterkit.plugins import load_plugins

    registry = load_plugins()
    finder = LabelIssueFinder()
    evaluation.evaluate(path, [registry.parse_chain(words)], settings, registry, label_issues=finder)
    assert isinstance(finder.found, LabelSetIssues)
    return finder.found


@pytest.mark.slow
def test_evaluate_s_issues_on_reuters_are_cleanlab_s_given_its_out_of_fold_probabilities():
    found = found_by_evaluate(REUTERS, ["words", "--lowercase", "l2"], Settings())
    assert found.probabilities.shape == (244, 2) and found.labels == ("grain", "corn")
    assert ((found.probabilities > 0) & (found.probabilities < 1)).all()  # every fold fitted both labels
    assert len(found.found) >= 3
    np.testing.assert_array_equal(found.found, cleanlab_multilabel(found.truth, found.probabilities))


@pytest.mark.slow
def test_most_rows_with_a_turned_label_rank_in_reuters_top_three_percent(tmp_path):
    text = REUTERS.read_text(encoding="utf-8")
    header, _, data = text.partition("@data\n")
    lines = data.strip("\n").split("\n")
    generator = np.random.default_rng(77)
    flipped = np.sort(generator.choice(len(lines), round(FLIPPED_SHARE * len(lines)), replace=False))
    for row in flipped.tolist():
        values = lines[row].split(",", 2)
        label = int(generator.integers(2))
        values[label] = "1" if values[label] == "0" else "0"
        lines[row] = ",".join(values)
    path = tmp_path / "reuters-turned.arff"
    path.write_text(header + "@data\n" + "\n".join(lines) + "\n", encoding="utf-8")
    found = found_by_evaluate(path, ["words", "--lowercase", "l2"], Settings())
    top = set(found.found[: len(flipped)].tolist())
    assert len(top & set(flipped.tolist())) >= FLIPPED_FOUND_AT_LEAST * len(flipped)
    np.testing.assert_array_equal(found.found, cleanlab_multilabel(found.truth, found.probabilities))


def mislabelled_sets(tmp_path) -> Path:
    """MEKA label sets a and b over counts of words w0 (a's) and w1 (b's): 12 rows of a, 12 of b, 12 of both,
    8 of neither (a row of unknown labels among them), then row 46 holding w0 only but labelled b only."""
    generator = np.random.default_rng(5)
    counts = generator.integers(1, 4, (44, 2)).tolist()
    lines = ["@relation 'sets: -C 2'", "@attribute a {0,1}", "@attribute b {0,1}"]
    lines += ["@attribute w0 numeric", "@attribute w1 numeric", "@data"]
    rows = [f"1,0,{x},0" for x, _ in counts[:12]] + [f"0,1,0,{y}" for _, y in counts[12:24]]
    rows += [f"1,1,{x},{y}" for x, y in counts[24:36]] + ["0,0,0,0"] * 8
    rows.insert(3, "?,0,2,0")
    rows.append("0,1,3,0")
    path = tmp_path / "sets.arff"
    path.write_text("\n".join(lines + rows) + "\n", encoding="utf-8")
    return path


def test_the_csv_names_the_input_row_its_label_sets_and_the_words_pulling_each_label(tmp_path, run_filterkit):
    """Row 46 is flagged by both labels, a line each: a looks wrongly absent (w0 pulls toward it), b wrongly
    present (w0 pulls away from it)."""
    issues = tmp_path / "issues.csv"
    result = run_filterkit("evaluate", "-q", "--folds", "3", "--label-issues", issues, mislabelled_sets(tmp_path), "l2")
    assert result.status == 0, result.stderr
    table = list(csv.DictReader(io.StringIO(issues.read_text(encoding="utf-8"))))
    first, second = table[:2]
    for line in (first, second):
        assert (line["row"], line["given"], line["suggested"], line["rank"]) == ("46", "b", "a", "1")
        assert float(line["quality"]) < 0.2
        assert (line["word_1"], line["word_2"]) == ("w0", "")  # the row's only word
        assert float(line["contribution_1"]) > 0  # toward the label's suggested value
    assert (first["label"], first["issue"], second["label"], second["issue"]) == (
        "a",
        "wrongly absent",
        "b",
        "wrongly present",
    )
    assert float(first["probability"]) > 0.5 > float(second["probability"])
    ranks = [int(line["rank"]) for line in table]
    assert ranks == sorted(ranks)
    qualities = [float(line["quality"]) for line in table]
    assert qualities == sorted(qualities)


def test_label_sets_fold_of_row_is_indexed_by_the_file_s_rows(tmp_path, run_filterkit):
    """Entry n of ``settings.fold_of_row`` is the file's data row n + 1, None for row 4, whose labels are unknown;
    the CSV's row 46 is the last entry."""
    result = run_filterkit("evaluate", "-q", "--json", "--folds", "3", mislabelled_sets(tmp_path), "l2")
    assert result.status == 0, result.stderr
    fold_of_row = json.loads(result.stdout)["settings"]["fold_of_row"]
    assert len(fold_of_row) == 46 and fold_of_row[3] is None
    assert sorted(collections.Counter(fold for fold in fold_of_row if fold is not None).values()) == [15, 15, 15]


def test_label_sets_need_each_label_s_probabilities(tmp_path, run_filterkit):
    issues = tmp_path / "issues.csv"
    argv = ["evaluate", "-q", "--folds", "3", "--svm-decision", "margin", "--label-issues", issues]
    result = run_filterkit(*argv, mislabelled_sets(tmp_path), "l2")
    assert result.status != 0
    assert "--label-issues needs each row's class probabilities" in result.stderr and "--svm-decision" in result.stderr
    assert not issues.exists()


def test_a_label_holding_the_separator_is_refused_before_any_fit(tmp_path):
    # the CSV joined a row's labels by |: the label 'grain|x' could not be told from the set {grain, x}
    from filterkit.testing import run_filterkit

    text = REUTERS.read_text()
    renamed = tmp_path / "joined.arff"
    renamed.write_text(text.replace("@attribute grain ", "@attribute 'grain|x' ", 1))
    assert renamed.read_text() != text
    issues = tmp_path / "issues.csv"
    result = run_filterkit("evaluate", "-q", "--label-issues", issues, renamed, "words", "l2")
    assert (result.status, result.stderr) == (
        1,
        "filterkit: error: --label-issues: label 'grain|x' holds |, which joins a row's labels: rename the label in "
        "the data\n",
    )
    assert not issues.exists()
