"""The benchmark's measure of what two cores allow a local Dask cluster (``benchmarks/run.py``,
``--only halves``): two runs side by side, failing where either fails, and the report's row."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

RUN = Path(__file__).resolve().parent.parent / "benchmarks" / "run.py"

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the side-by-side runs go through sh")


@pytest.fixture(scope="module")
def bench():
    """benchmarks/run.py as a module (it is a script, not part of the package)."""
    spec = importlib.util.spec_from_file_location("benchmark_run", RUN)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_both_runs_happen_at_once_into_one_output(bench, tmp_path):
    marks = tmp_path / "marks"
    # each run appends a line, then waits until both lines are there: one after the other would hang
    script = f"echo x >> {marks}; while [ $(wc -l < {marks}) -lt 2 ]; do sleep 0.01; done; echo done"
    finished = subprocess.run(bench.side_by_side_command(["sh", "-c", script]), capture_output=True, timeout=10)
    assert finished.returncode == 0
    assert finished.stdout == b"done\ndone\n"


@pytest.mark.parametrize("failing", ["the run ending first", "the run ending last"])
def test_a_failing_run_fails_the_pair(bench, tmp_path, failing):
    turn = tmp_path / "turn"
    # whichever run makes the folder ends at once; the other ends 0.2 s later
    first, last = (3, 0) if failing == "the run ending first" else (0, 3)
    script = f"if mkdir {turn} 2>/dev/null; then exit {first}; else sleep 0.2; exit {last}; fi"
    finished = subprocess.run(bench.side_by_side_command(["sh", "-c", script]), timeout=10)
    assert finished.returncode != 0


def test_the_report_adds_the_import_to_the_halves_and_leaves_out_chains_without_them(bench):
    results = {
        ("grain_x300", "identity"): (0.60, 100, 0.5, 0.7, 0.9),
        ("grain_x300", "identity", "halves"): (0.57, 90, 0.5, 0.7, 1.0),
        ("grain_x300", "identity", "dask"): (0.84, 100, 0.8, 0.9, 1.2),
        ("grain_x300", "l2", "dask"): (2.0, 100, 1.9, 2.1, 3.0),
        ("grain_x300", "l2"): (1.4, 100, 1.3, 1.5, 2.0),
    }
    report = bench.format_dask_floor(results, [300], ["identity", "l2"], 0.15)
    rows = [line for line in report.splitlines() if line.startswith("| ") and "grain_x300" in line]
    assert rows == ["| identity rewrite | grain_x300 | 0.60 | 0.57 (0.95×) | 1.20× | 1.40× |"]
    assert "took 0.150 s" in report
    assert bench.format_dask_floor(results, [300], ["identity", "l2"], None) == ""
