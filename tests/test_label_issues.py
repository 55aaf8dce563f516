"""``filterkit evaluate --label-issues`` (issue 77, item 3): the rows whose class the out-of-fold probabilities
contradict, by confident learning, the same rows in the same order as cleanlab's ``find_label_issues`` given the
same probabilities, each with the words that pull it toward the suggested class."""

from __future__ import annotations

import collections
import csv
import io
import json

import numpy as np
import pytest

from chain_helpers import REAL
from filterkit import evaluation
from filterkit.evaluation import Settings
from filterkit.label_issues import (
    LabelIssueFinder,
    LabelIssues,
    class_probabilities,
    ranked_label_issues,
)

OH0 = REAL / "oh0.wc.arff"
SONAR = REAL / "sonar.arff"

#: The share of oh0's labels flipped at random, and the least share of them that the ranking's top as many rows
#: must hold (the issue's goal: at least half).  Observed: 24 of the 30 flipped rows in the top 30 (26 among the
#: 42 rows found).
FLIPPED_SHARE = 0.03
FLIPPED_FOUND_AT_LEAST = 0.5


def cleanlab_ranking(labels: np.ndarray, probabilities: np.ndarray) -> np.ndarray:
    """cleanlab's default filter, ranked by self-confidence (skipping the test where cleanlab is not installed)."""
    filters = pytest.importorskip("cleanlab.filter", reason="cleanlab (the test extra) checks the numpy filter")
    return filters.find_label_issues(
        labels,
        probabilities,
        filter_by="prune_by_noise_rate",
        return_indices_ranked_by="self_confidence",
        n_jobs=1,
    )


def noisy_probabilities(seed: int, classes: int, rows: int, decimals: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Labels with a tenth of them flipped, and probabilities leaning to the true class (``decimals``: rounded, so
    that margins tie)."""
    generator = np.random.default_rng(seed)
    truth = generator.integers(0, classes, rows)
    labels = truth.copy()
    flipped = generator.random(rows) < 0.1
    labels[flipped] = (truth[flipped] + generator.integers(1, classes, flipped.sum())) % classes
    scores = generator.dirichlet(np.ones(classes), rows) + 2.0 * np.eye(classes)[truth] * generator.random((rows, 1))
    probabilities = scores / scores.sum(axis=1, keepdims=True)
    if decimals is not None:
        probabilities = np.round(probabilities, decimals)
        probabilities /= probabilities.sum(axis=1, keepdims=True)
    return labels, probabilities


@pytest.mark.parametrize("classes", [2, 3, 7])
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("decimals", [None, 2])
def test_the_numpy_filter_finds_cleanlab_s_rows_in_its_order(classes, seed, decimals):
    labels, probabilities = noisy_probabilities(seed, classes, 300, decimals)
    ours = ranked_label_issues(labels, probabilities)
    assert len(ours) > 5
    np.testing.assert_array_equal(ours, cleanlab_ranking(labels, probabilities))


def test_only_a_row_confidently_of_another_class_is_an_issue():
    """Class 0's threshold is 0.633 (its rows' mean probability of 0), class 1's 0.667: row 2 (given 0, 0.8 of
    1) is counted as truly 1 and pruned; row 5 (given 1, 0.6 of 0) contradicts its label but reaches neither."""
    labels = np.array([0, 0, 0, 1, 1, 1])
    probabilities = np.array([[0.9, 0.1], [0.8, 0.2], [0.2, 0.8], [0.1, 0.9], [0.3, 0.7], [0.6, 0.4]])
    np.testing.assert_array_equal(ranked_label_issues(labels, probabilities), [2])
    np.testing.assert_array_equal(class_probabilities(np.array([[0.25], [1.0]])), [[0.75, 0.25], [0.0, 1.0]])
    np.testing.assert_allclose(class_probabilities(np.array([[0.2, 0.6], [0.5, 0.5]])), [[0.25, 0.75], [0.5, 0.5]])


def found_by_evaluate(path, words: list[str], settings: Settings) -> LabelIssues:
    """The issues ``evaluate --label-issues`` finds in ``path`` with the chain of ``words``."""
    from filterkit.plugins import load_plugins

    registry = load_plugins()
    chain = registry.parse_chain(words)
    finder = LabelIssueFinder()
    evaluation.evaluate(path, [chain], settings, registry, label_issues=finder)
    assert finder.found is not None
    return finder.found


@pytest.fixture(scope="module")
def flipped_oh0(tmp_path_factory) -> tuple[LabelIssues, np.ndarray]:
    """oh0 with 3 % of its rows' classes flipped to another class at random (seeded), and the issues that
    ``evaluate --multiclass --label-issues`` finds in it; the flipped rows (from 0)."""
    text = OH0.read_text(encoding="utf-8")
    header, _, data = text.partition("@DATA")
    classes = header.split("@ATTRIBUTE class\t{", 1)[1].split("}", 1)[0].split(",")
    lines = data.strip("\n").split("\n")
    generator = np.random.default_rng(77)
    flipped = np.sort(generator.choice(len(lines), round(FLIPPED_SHARE * len(lines)), replace=False))
    for row in flipped.tolist():
        body, _, label = lines[row].rstrip("}").rpartition(" ")
        others = [c for c in classes if c != label]
        lines[row] = f"{body} {others[generator.integers(len(others))]}}}"
    path = tmp_path_factory.mktemp("flipped") / "oh0-flipped.arff"
    path.write_text(header + "@DATA\n" + "\n".join(lines) + "\n", encoding="utf-8")
    return found_by_evaluate(path, ["binarize", "l2"], Settings(multiclass=True)), flipped


@pytest.mark.slow
def test_evaluate_s_issues_on_oh0_are_cleanlab_s_given_its_out_of_fold_probabilities(flipped_oh0):
    found, _ = flipped_oh0
    assert found.probabilities.shape == (1003, 10)
    np.testing.assert_allclose(found.probabilities.sum(axis=1), 1.0)
    assert len(found.found) > 30
    np.testing.assert_array_equal(found.found, cleanlab_ranking(found.labels, found.probabilities))


@pytest.mark.slow
def test_most_of_oh0_s_flipped_labels_rank_in_its_top_three_percent(flipped_oh0):
    found, flipped = flipped_oh0
    top = found.found[: len(flipped)]
    assert len(set(top.tolist()) & set(flipped.tolist())) >= FLIPPED_FOUND_AT_LEAST * len(flipped)


@pytest.mark.slow
def test_a_binary_task_s_issues_are_cleanlab_s_given_one_minus_p_and_p():
    found = found_by_evaluate(SONAR, ["minmax"], Settings(folds=5, positive="Mine"))
    assert found.classes == ["Rock", "Mine"]
    np.testing.assert_array_equal(found.labels, [given == "Mine" for given in found.given])
    assert len(found.found) > 3
    np.testing.assert_array_equal(found.found, cleanlab_ranking(found.labels, found.probabilities))


def mislabelled_file(tmp_path):
    """Three classes of 12 rows each, class k's rows holding a count of word k only, then row 38 of class a
    labelled b, after row 2 of no class."""
    generator = np.random.default_rng(5)
    lines = ["@relation three", *(f"@attribute w{k} numeric" for k in range(3)), "@attribute class {a,b,c}", "@data"]
    rows = [f"{int(count)},0,0,a" for count in generator.integers(1, 4, 12)]
    rows.insert(1, "0,2,0,?")
    rows += [f"0,{int(count)},0,b" for count in generator.integers(1, 4, 12)]
    rows += [f"0,0,{int(count)},c" for count in generator.integers(1, 4, 12)]
    rows.append("3,0,0,b")
    path = tmp_path / "three.arff"
    path.write_text("\n".join(lines + rows) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("task", "suggested"), [(["--multiclass"], "a"), (["--positive", "a"], "a"), (["--positive", "b"], "not b")]
)
def test_the_csv_names_the_input_row_its_labels_and_the_word_pulling_it(tmp_path, run_filterkit, task, suggested):
    issues = tmp_path / "issues.csv"
    argv = ["evaluate", "-q", "--folds", "3", *task, "--label-issues", issues, mislabelled_file(tmp_path), "l2"]
    result = run_filterkit(*argv)
    assert result.status == 0, result.stderr
    table = list(csv.DictReader(io.StringIO(issues.read_text(encoding="utf-8"))))
    assert table, "the mislabelled row is found"
    first = table[0]
    assert (first["row"], first["given"], first["suggested"], first["rank"]) == ("38", "b", suggested, "1")
    assert float(first["self_confidence"]) < 0.5
    assert first["word_1"] == "w0" and float(first["contribution_1"]) > 0  # toward the suggested label
    assert [entry["rank"] for entry in table] == [str(n) for n in range(1, len(table) + 1)]
    confidences = [float(entry["self_confidence"]) for entry in table]
    assert confidences == sorted(confidences)


@pytest.mark.parametrize("task", [["--multiclass"], ["--positive", "a"]])
def test_fold_of_row_is_indexed_by_the_file_s_rows_as_the_csv_s_row_is(tmp_path, run_filterkit, task):
    """Entry n of ``settings.fold_of_row`` is the file's data row n + 1 (the CSV's ``row`` n + 1), None for row
    2, whose class is missing: each fold then tests 4 rows of a, 4 of c and 4 or 5 of b."""
    issues, path = tmp_path / "issues.csv", mislabelled_file(tmp_path)
    argv = ["evaluate", "-q", "--json", "--folds", "3", *task, "--label-issues", issues, path, "l2"]
    result = run_filterkit(*argv)
    assert result.status == 0, result.stderr
    fold_of_row = json.loads(result.stdout)["settings"]["fold_of_row"]
    given = [line.rsplit(",", 1)[1] for line in path.read_text(encoding="utf-8").splitlines()[6:]]
    assert len(fold_of_row) == len(given) == 38 and fold_of_row[1] is None
    per_fold = {
        label: sorted(collections.Counter(f for f, g in zip(fold_of_row, given) if g == label).values())
        for label in "abc"
    }
    assert per_fold == {"a": [4, 4, 4], "b": [4, 4, 5], "c": [4, 4, 4]}
    flagged = int(list(csv.DictReader(io.StringIO(issues.read_text(encoding="utf-8"))))[0]["row"])
    assert given[flagged - 1] == "b" and fold_of_row[flagged - 1] in (0, 1, 2)


@pytest.mark.parametrize(
    ("options", "words"),
    [
        (["--test", SONAR], "--label-issues cannot be combined with --test"),
        (["--each-class", "--min-positives", "5"], "--label-issues cannot be combined with --each-class"),
        (["--repeats", "2"], "--label-issues needs --repeats 1 and --train-fraction 1"),
        (["--train-fraction", "0.5,1"], "--label-issues needs --repeats 1 and --train-fraction 1"),
        (["--multiclass", "--compare"], "--label-issues finds the rows of one chain's folds: give one chain"),
        (["--folds", "3", "--multiclass", "--svm-decision", "margin"], "--label-issues needs each row's class"),
    ],
)
def test_what_label_issues_refuses(tmp_path, run_filterkit, options, words):
    chains = ["l2", "minmax l2"] if "--compare" in options else ["l2"]
    argv = ["evaluate", "-q", "--label-issues", tmp_path / "issues.csv", *options, mislabelled_file(tmp_path)]
    result = run_filterkit(*argv, *chains)
    assert result.status != 0
    assert words in result.stderr
    assert not (tmp_path / "issues.csv").exists()


def test_a_chain_that_keeps_some_rows_only_is_refused_before_any_fit(tmp_path, run_filterkit):
    issues = tmp_path / "issues.csv"
    chain = ("fold", "--invert", "--of", "3", "l2")
    argv = ("evaluate", "-q", "--multiclass", "--label-issues", issues, mislabelled_file(tmp_path), *chain)
    result = run_filterkit(*argv)
    assert result.status == 1
    assert "chain 'fold --invert --of 3 l2': stage 'fold' keeps some rows only" in result.stderr
    assert not issues.exists()
