"""The nightly group (issue 48, item 6; issue 73, item 6): the research scripts, the README's table, the
benchmark scripts, the benchmark floor and the sanitizer builds run with ``--nightly`` (``.ci/run`` runs
``--nightly -m nightly`` after the README's test command), and neither in the quick loop
(``-m "not slow"``) nor in a plain ``python -m pytest`` (the README's test command, the default suite)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
#: A file wholly nightly, and two of which only some tests are (the README's table, the benchmark script's run).
FILES = ["tests/test_floor.py", "tests/test_readme.py", "tests/test_multilabel_benchmark.py"]


def collected(*options: str) -> set[str]:
    """The test ids ``python -m pytest --collect-only`` picks from :data:`FILES` with ``options``."""
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *options, *FILES],
        capture_output=True,
        text=True,
        cwd=TESTS.parent,
        timeout=120,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return {line for line in completed.stdout.splitlines() if "::" in line}


@pytest.mark.slow
def test_the_nightly_tests_run_only_with_nightly():
    plain, nightly, quick = collected(), collected("--nightly"), collected("--nightly", "-m", "not slow")
    floor = {test for test in nightly if test.startswith("tests/test_floor.py")}
    table = {test for test in nightly if "readme_table" in test}
    benchmark = {test for test in nightly if "test_run_and_summarize" in test}
    assert floor and table and len(benchmark) == 1
    assert nightly - plain == floor | table | benchmark
    assert not (floor | table | benchmark) & quick
    assert "tests/test_readme.py::test_the_readme_is_an_entry_of_at_most_250_lines" in plain & quick
