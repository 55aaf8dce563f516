"""The research scripts docs/RESULTS.md tells a reader to run still run on today's filterkit:
``docs/reproduce.sh`` (then ``docs/summarize_results.py``) and ``docs/auto_experiment.py``, each on
a smoke-test cut of the smallest real input of its protocol (UCI iris without four fifths of its
virginicas: 110 rows, two one-vs-rest tasks of 50 positives, two thirds of the whole file's CPU): a
documented script no test runs breaks unseen when an API changes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_determinism import _split

from chain_helpers import REAL

DOCS = Path(__file__).resolve().parent.parent / "docs"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("bash") is None, reason="docs/reproduce.sh is a bash script"),
]


@pytest.fixture(scope="module")
def environment() -> dict:
    """This Python's scripts first on PATH, so the scripts' ``filterkit`` is the one under test."""
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}


def printed(environment: dict, script: str, *arguments: str) -> str:
    """What ``python docs/SCRIPT ARGUMENTS`` prints on standard output; it must succeed."""
    command = [sys.executable, str(DOCS / script), *arguments]
    return subprocess.run(command, env=environment, capture_output=True, text=True, check=True, timeout=300).stdout


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    """A DATA_DIR laid out as the scripts expect, holding UCI iris only: every setosa and versicolor
    (the two tasks of at least 50 positives), every fifth virginica."""
    folder = tmp_path_factory.mktemp("data")
    (folder / "uci").mkdir()
    header, rows = _split((REAL / "iris.arff").read_text(encoding="utf-8"))
    virginica = [row for row in rows if row.rstrip().endswith("Iris-virginica")]
    kept = [row for row in rows if row not in virginica] + virginica[::5]
    (folder / "uci" / "iris.arff").write_text(header + "".join(kept), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def reproduced(data, environment, tmp_path_factory) -> Path:
    """``PARTS=uci docs/reproduce.sh DATA OUT``: OUT."""
    out = tmp_path_factory.mktemp("results")
    subprocess.run(
        ["bash", str(DOCS / "reproduce.sh"), str(data), str(out)],
        env={**environment, "PARTS": "uci"},
        check=True,
        timeout=300,
    )
    return out


def test_reproduce_evaluates_every_task_and_chain_of_its_protocol(reproduced):
    document = json.loads((reproduced / "uci-iris.json").read_text())
    results = document["results"]
    assert sorted({result["task"] for result in results}) == ["Iris-setosa", "Iris-versicolor"]
    assert len({result["chain"] for result in results}) == 5  # KDD'09's five representations
    assert all(0.5 <= result["auc"] <= 1 for result in results)


def mean_aucs(results_file: Path) -> dict[str, float]:
    """Each chain's AUC averaged over the tasks of one ``filterkit evaluate --json`` file."""
    by_chain: dict[str, list[float]] = {}
    for result in json.loads(results_file.read_text())["results"]:
        by_chain.setdefault(result["chain"], []).append(result["auc"])
    return {chain: sum(aucs) / len(aucs) for chain, aucs in by_chain.items()}


def table_row(summary: str, chain: str) -> list[str]:
    """The cells after the chain's name in the summary's first table row for ``chain``."""
    row = next(line for line in summary.splitlines() if line.startswith(f"| `{chain}` |"))
    return [cell.strip() for cell in row.strip("|").split("|")[1:]]


def test_its_results_are_summarized_task_by_task(reproduced, environment):
    summary = printed(environment, "summarize_results.py", str(reproduced))
    assert "## UCI" in summary
    for chain, auc in mean_aucs(reproduced / "uci-iris.json").items():
        tasks, mean_auc, *_ = table_row(summary, chain)
        assert (tasks, mean_auc) == ("2", f"{auc:.3f}")


def test_the_summary_without_a_folder_says_how_to_call_it(environment):
    finished = subprocess.run(
        [sys.executable, str(DOCS / "summarize_results.py")], env=environment, capture_output=True, text=True
    )
    assert finished.returncode == 1
    assert finished.stderr.startswith("usage: python docs/summarize_results.py RESULTS_DIR")


def test_auto_experiment_runs_and_is_compared_with_reproduce_s_tasks(data, reproduced, environment, tmp_path):
    out = tmp_path / "auto"
    printed(environment, "auto_experiment.py", "run", str(data), str(out), "uci")
    results = json.loads((out / "uci-iris.json").read_text())["results"]
    assert {result["chain"] for result in results} == {"auto l2"} and len(results) == 2
    summary = printed(environment, "auto_experiment.py", "summarize", str(out), str(reproduced))
    assert table_row(summary, "auto l2") == ["2", f"{mean_aucs(out / 'uci-iris.json')['auto l2']:.4f}"]
    assert table_row(summary, "bns l2") == ["2", f"{mean_aucs(reproduced / 'uci-iris.json')['bns l2']:.4f}"]
    assert "- `auto l2` vs `bns l2` on 2 tasks" in summary  # paired with reproduce.sh's tasks
