"""The research scripts docs/RESULTS.md tells a reader to run still run on today's filterkit:
``docs/reproduce.sh`` (then ``docs/summarize_results.py``) and ``docs/auto_experiment.py``, each on
a smoke-test cut of the smallest real input of its protocol (UCI iris without four fifths of its
virginicas: 110 rows, two one-vs-rest tasks of 50 positives, two thirds of the whole file's CPU): a
documented script no test runs breaks unseen when an API changes.  Issue 40's ``weighting`` part runs
on a tiny made-up text set and Reuters file.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_determinism import _split

from chain_helpers import REAL

DOCS = Path(__file__).resolve().parent.parent / "docs"

pytestmark = [
    pytest.mark.nightly,
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


@pytest.fixture(scope="module")
def weighted(environment, tmp_path_factory) -> Path:
    """``PARTS=weighting`` on a tiny text set (two classes of 50 rows, word counts) and a tiny Reuters
    file (60 documents, 20 of them positive, their words drawn mostly from one half of a vocabulary): OUT."""
    rng = random.Random(1)
    folder = tmp_path_factory.mktemp("weighting")
    (folder / "text").mkdir()
    header = "@relation tiny\n" + "".join(f"@attribute w{j} numeric\n" for j in range(12))
    rows = []
    for label in ("a", "b"):
        for _ in range(50):
            counts = [rng.randrange(3) if (j < 6) == (label == "a") or rng.random() < 0.2 else 0 for j in range(12)]
            rows.append(",".join(map(str, counts)) + f",{label}\n")
    text = header + "@attribute class {a,b}\n@data\n" + "".join(rows)
    (folder / "text" / "tiny.wc.arff").write_text(text, encoding="utf-8")
    vocabulary = ["wheat", "grain", "corn", "oil", "bank", "rate"]
    documents = [
        f"'{' '.join(rng.choices(vocabulary, [3, 3, 3, 1, 1, 1][:: 1 if positive else -1], k=5))} said',"
        f"{int(positive)}\n"
        for positive in [True] * 20 + [False] * 40
    ]
    reuters = "@relation r\n@attribute Text string\n@attribute class-att {0,1}\n@data\n" + "".join(documents)
    (folder / "ReutersGrain-train.arff").write_text(reuters, encoding="utf-8")
    out = tmp_path_factory.mktemp("weighting-results")
    overrides = {"PARTS": "weighting", "WEIGHTING_SETS": "tiny", "REUTERS_SETS": "Grain", "REUTERS_DIR": str(folder)}
    subprocess.run(
        ["bash", str(DOCS / "reproduce.sh"), str(folder), str(out)], env={**environment, **overrides}, check=True
    )
    return out


def test_weighting_runs_each_term_weight_on_text_and_reuters_with_and_without_bigrams(weighted, environment):
    names = sorted(path.name for path in weighted.glob("*.json"))
    assert names == [
        f"weighting-{decision}-{data}.json"
        for decision in ("margin", "platt-cv")
        for data in ("reutersGrain-1-1", "reutersGrain-1-2", "tiny")
    ]
    tiny = json.loads((weighted / "weighting-platt-cv-tiny.json").read_text())
    assert len({result["chain"] for result in tiny["results"]}) == 8
    assert {entry["baseline"] for entry in tiny["paired"]} == {"idf --presence --multiply l2"}
    summary = printed(environment, "experiments/summarize_weighting.py", str(weighted))
    rf = [r for name in names if "platt-cv" in name for r in json.loads((weighted / name).read_text())["results"]]
    rf_aucs = [r["auc"] for r in rf if r["chain"].endswith("rf --presence --multiply l2")]
    tasks, auc, *_ = table_row(summary, "rf --presence --multiply l2")
    assert (tasks, auc) == ("3", f"{sum(rf_aucs) / len(rf_aucs):.4f}")  # two-class: one task per file
