"""The benchmark's measure of what two cores allow a local Dask cluster (``benchmarks/run.py``,
``--only halves``): the half inputs it runs, two runs side by side that fail where either fails,
the client's import timed in the rounds, and the report's rows."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

RUN = Path(__file__).resolve().parent.parent / "benchmarks" / "run.py"

pytestmark = [
    pytest.mark.slow,  # they start processes
    pytest.mark.skipif(sys.platform == "win32", reason="the side-by-side runs go through sh"),
]


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


@pytest.mark.parametrize("failing", ["background", "foreground"])
@pytest.mark.parametrize("ending", ["first", "last"])
def test_a_failing_run_fails_the_pair(bench, failing, ending):
    # sh gives the run it starts in the background /dev/null for standard input, the other one this
    # test's pipe: so each run knows which it is, and the failing one ends first or 0.2 s after the other
    failing_here = "[ -p /dev/stdin ]" if failing == "foreground" else "! [ -p /dev/stdin ]"
    wait_failing, wait_other = ("", "sleep 0.2;") if ending == "first" else ("sleep 0.2;", "")
    script = f"if {failing_here}; then {wait_failing} exit 3; else {wait_other} exit 0; fi"
    command = bench.side_by_side_command(["sh", "-c", script])
    finished = subprocess.run(command, stdin=subprocess.PIPE, timeout=10)
    assert finished.returncode != 0
    both_fine = subprocess.run(bench.side_by_side_command(["sh", "-c", "exit 0"]), stdin=subprocess.PIPE, timeout=10)
    assert both_fine.returncode == 0


def test_the_halves_run_at_the_dask_scales_with_a_one_pass_chain(bench):
    assert bench.halved_scales([10, 100, 300], ["identity", "shape"]) == ([100, 300], [])
    assert bench.halved_scales([10, 100, 301], ["l2"]) == ([100], [301])
    assert bench.halved_scales([10, 50], ["l2"]) == ([], [])  # below the Dask scales
    assert bench.halved_scales([100, 300], ["shape", "select"]) == ([], [])  # fitted chains have none


def test_the_halves_of_x300_run_x150_twice_both_ways(bench):
    inputs = {"grain_x150": Path("/in/grain_x150.arff"), "grain_x300": Path("/in/grain_x300.arff")}
    chains = {"shape": ["shape", "bns", "l2"], "l2": ["l2"], "identity": []}
    jobs = bench.halves_jobs("/bin/filterkit", inputs, 300, chains)
    assert [key for key, *_ in jobs] == [
        ("grain_x300", "l2", "halves"),
        ("grain_x300", "l2", "halves in one thread"),
        ("grain_x300", "identity", "halves"),
        ("grain_x300", "identity", "halves in one thread"),
    ]
    for key, _, data_name, command, output in jobs:
        assert data_name == "grain_x300" and output is None
        assert command[:2] == ["sh", "-c"]
        run = command[4:]  # what sh runs twice
        stages = ["l2"] if key[1] == "l2" else []
        assert run[-1 - len(stages) :] == ["/in/grain_x150.arff", *stages]
        assert "/in/grain_x300.arff" not in run
        if key[2] == "halves":
            assert run[0] == "/bin/filterkit"
        else:
            assert run[:2] == [sys.executable, "-c"] and "in_one_thread()" in run[2]


def test_the_client_s_import_is_timed_in_each_run_of_its_job(bench, tmp_path):
    pytest.importorskip("distributed", reason="Dask is not installed (pip install 'filterkit[dask]')")
    times = tmp_path / "times"
    assert bench.dask_import_time(times) is None
    key, _, _, command, _ = bench.dask_import_job(times)
    for _ in range(3):
        subprocess.run(command, check=True, timeout=60)
    runs = [float(line) for line in times.read_text().split()]
    assert len(runs) == 3 and all(0 < seconds < 10 for seconds in runs)
    assert bench.dask_import_time(times) == sorted(runs)[1]


RESULTS = {
    ("grain_x300", "identity"): (0.60, 100, 0.5, 0.7, 0.9),
    ("grain_x300", "identity", "halves"): (0.57, 90, 0.5, 0.7, 1.0),
    ("grain_x300", "identity", "halves in one thread"): (0.54, 90, 0.5, 0.7, 1.0),
    ("grain_x300", "identity", "dask"): (0.84, 100, 0.8, 0.9, 1.2),
    ("grain_x300", "l2", "dask"): (2.0, 100, 1.9, 2.1, 3.0),
    ("grain_x300", "l2"): (1.4, 100, 1.3, 1.5, 2.0),
}


def table_rows(report: str) -> list[str]:
    return [line for line in report.splitlines() if line.startswith("| ") and "grain_x" in line]


def test_the_report_adds_the_import_to_the_faster_halves(bench):
    report = bench.format_dask_floor(RESULTS, [300], ["identity", "l2"], 0.15, [])
    assert table_rows(report) == [
        "| identity rewrite | grain_x300 | 0.60 | 0.57 (0.95×) | 0.54 (0.90×) | 1.15× | 1.40× |"
    ]
    assert "0.150 s (median of the rounds' runs)" in report


def test_the_report_shows_what_was_not_measured_as_a_dash(bench):
    results = {key: value for key, value in RESULTS.items() if key[-1] not in ("dask", "halves in one thread")}
    report = bench.format_dask_floor(results, [300], ["identity"], None, [301])
    assert table_rows(report) == ["| identity rewrite | grain_x300 | 0.60 | 0.57 (0.95×) | – | – | – |"]
    assert "not measured" in report and "No halves at ×301: an odd scale has none." in report
    assert bench.format_dask_floor({}, [], ["identity"], None, []) == ""
    assert (
        bench.format_dask_floor({}, [], ["identity"], None, [301]).strip()
        == "No halves at ×301: an odd scale has none."
    )
