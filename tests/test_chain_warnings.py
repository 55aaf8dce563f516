"""A chain's warnings reach the user wherever it runs: ``evaluate`` gives each distinct one once per chain (it dropped
them all), as ``train`` does; and ``--combine joint`` given with a positive class on more than two classes says that
the class changes nothing (a k-class score is of every class at once)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_train_progress import DOCUMENTS, RENAMING

IRIS = Path(__file__).parent.parent / "arff_samples" / "iris.arff"
UNUSED = (
    "--combine joint scores all 3 classes at once: the positive class (--positive, or each of --each-class) does "
    "not change its scores; --combine max scores it against the rest"
)


def _data(written: bytes) -> list[bytes]:
    """The lines of an ARFF output, but its comments (which hold the command line)."""
    return [line for line in written.splitlines() if not line.startswith(b"%")]


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("filterkit: warning:")]


@pytest.mark.parametrize(
    ("stage", "warned"),
    [
        (["ig", "--combine", "joint"], [f"stage 1 'ig' {UNUSED}"]),
        (["select", "--metric", "chi", "--combine", "joint", "--top", "2"], [f"stage 1 'select' {UNUSED}"]),
        (["ig", "--combine", "max"], []),
        (["select", "--metric", "chi", "--top", "2"], []),
    ],
)
def test_joint_with_a_positive_class_of_three_warns_that_the_class_changes_nothing(run_filterkit, stage, warned):
    result = run_filterkit(IRIS, "--positive", "Iris-setosa", *stage)
    assert result.status == 0, result.stderr
    assert _warnings(result.stderr) == [f"filterkit: warning: {line}" for line in warned]
    without_positive = run_filterkit(IRIS, *stage)
    assert without_positive.status == 0 and _warnings(without_positive.stderr) == []
    if warned:  # what it says: the same scores, so the same output
        assert _data(without_positive.stdout) == _data(result.stdout)


def test_evaluate_each_class_warns_once_per_chain_not_per_class_or_fold(run_filterkit):
    result = run_filterkit("evaluate", "--each-class", "--folds", "3", IRIS, "ig", "--combine", "joint")
    assert result.status == 0, result.stderr
    assert _warnings(result.stderr) == [
        f"filterkit: warning: task Iris-setosa, fold 1, chain 'ig --combine joint': stage 1 'ig' {UNUSED}"
    ]
    assert _warnings(run_filterkit("evaluate", "--each-class", "--folds", "3", IRIS, "ig").stderr) == []


def test_evaluate_gives_each_chain_s_warning_once_naming_the_chain(run_filterkit, tmp_path):
    path = tmp_path / "docs.arff"
    rows = "".join(f"'{text}',{k},{label}\n" for k, (text, label) in enumerate(DOCUMENTS))
    path.write_text(
        f"@relation docs\n@attribute text string\n@attribute n numeric\n@attribute class {{yes,no}}\n@data\n{rows}"
    )
    result = run_filterkit(
        "evaluate", "--folds", "2", "--compare", path, "words l2", "words bns l2", "words --prefix w_ l2"
    )
    assert result.status == 0, result.stderr
    assert _warnings(result.stderr) == [
        f"filterkit: warning: task no, fold 1, chain 'words l2': {RENAMING}",
        f"filterkit: warning: task no, fold 1, chain 'words bns l2': {RENAMING}",
    ]
