"""``benchmarks/dask_profile.py`` (issue 20, item 6: where a Dask run's time goes) runs on today's
engine and reports each step of it.

The script wraps the engine's methods from outside, and no test ran it: it broke without a word
when one of them (``DaskEngine._shared``) took a second argument, its ``--inline`` mode when the
engine began waiting on each future's ``exception()``, and a run without the Dask engine ran whole,
then raised a ``KeyError`` traceback.  These run it as the docs say, in its three modes, on real
word counts.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from chain_helpers import REAL

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "dask_profile.py"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform != "linux", reason="the script reads the helper's CPU from Linux's /proc"),
]


def profiled(*arguments: str) -> subprocess.CompletedProcess:
    """``python benchmarks/dask_profile.py -- ARGUMENTS``, its output and report captured."""
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--", *arguments], capture_output=True, text=True, timeout=120, check=False
    )


def seconds(report: str, label: str) -> float:
    """The seconds the report gives the step ``label`` (its line ``LABEL: N.NN s, …``)."""
    found = re.search(rf"^{re.escape(label)}: (\d+\.\d\d) s", report, re.MULTILINE)
    assert found, f"no line for {label!r} in:\n{report}"
    return float(found.group(1))


@pytest.mark.parametrize("mode", [[], ["--spawn"], ["--inline"]])
@pytest.mark.parametrize("stages", [["l2"], ["shape", "bns", "l2"]])
def test_a_dask_run_is_profiled_step_by_step_and_its_output_is_the_local_run_s(mode, stages):
    pytest.importorskip("dask.distributed", reason="Dask is not installed (pip install 'filterkit[dask]')")
    chain = ["-q", "-c", "first", str(REAL / "grain_wc.arff"), *stages]
    run = subprocess.run(
        [sys.executable, str(SCRIPT), *mode, "--", "--engine", "dask", *chain],
        capture_output=True,
        timeout=180,
        check=False,
    )
    report = run.stderr.decode()
    assert run.returncode == 0, report
    local = subprocess.run([sys.executable, "-m", "filterkit", *chain], capture_output=True, check=True)
    assert run.stdout == local.stdout  # the profiled run is a real run: the same bytes
    whole, plan, writing = (seconds(report, step) for step in ("whole run", "plan", "write_concatenated"))
    assert 0 <= plan and 0 < writing and plan + writing <= whole + 0.01  # steps of the run, within it
    # l2 fits nothing: one pass, the writing; shape and bns are fitted together in one pass before it
    passes = {"l2": 1, "shape": 2}[stages[0]]
    recipes = re.search(r"^pickled recipes \[([\d, ]+)\] bytes, merged statistics \[([\d, ]*)\]", report, re.MULTILINE)
    assert recipes, report
    assert len(recipes.group(1).split(",")) == passes
    assert len([size for size in recipes.group(2).split(",") if size.strip()]) == passes - 1
    if mode != ["--inline"]:
        # a local cluster cuts one partition per worker (two), so the writing pass is two tasks
        assert re.search(r"^tasks write_partition, compute: 2, ", report, re.MULTILINE), report
    assert "Traceback" not in report


@pytest.mark.parametrize(
    "engine", [[], ["--engine", "local"], ["--engine=local"], ["--engine", "dask", "--engine", "local"]]
)
def test_a_run_on_the_local_engine_is_refused_in_one_line_before_it_runs(engine):
    run = profiled(*engine, "-q", str(REAL / "iris.arff"), "l2")
    assert run.returncode == 1
    assert run.stdout == ""  # refused before the run: no output written
    assert run.stderr.strip().splitlines() == [
        "dask_profile.py: give the run --engine dask (there is nothing to profile in a local run)"
    ]


def test_the_engine_given_last_is_the_one_profiled(tmp_path):
    pytest.importorskip("dask.distributed", reason="Dask is not installed (pip install 'filterkit[dask]')")
    run = profiled("--engine", "local", "--engine=dask", "-q", str(REAL / "iris.arff"), "l2")
    assert run.returncode == 0, run.stderr
    assert re.search(r"^tasks write_partition, compute: 2, ", run.stderr, re.MULTILINE), run.stderr
