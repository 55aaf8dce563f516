"""Exit (issue 20, item 2): the console script leaves the objects alive at exit out of the
interpreter's last garbage collections, which were most of a small run's exit time, and
still writes every byte and the exit status."""

from __future__ import annotations

import subprocess
import sys

import pytest

from chain_helpers import REAL

#: ``filterkit.cli.main(ARGV)``; an atexit handler, run after main's sys.exit, reports on
#: stderr how many objects were frozen then.
PROBE = """
import atexit, gc, sys
import filterkit.cli
atexit.register(lambda: print(f"frozen: {gc.get_freeze_count()}", file=sys.stderr))
filterkit.cli.main(sys.argv[1:])
"""


def run_main(*argv) -> subprocess.CompletedProcess:
    """A fresh interpreter running ``filterkit.cli.main(argv)``."""
    return subprocess.run([sys.executable, "-c", PROBE, *map(str, argv)], capture_output=True, timeout=120, check=False)


def frozen_count(stderr: bytes) -> int:
    """The number of frozen objects the probe's atexit handler reported."""
    return int(stderr.decode().strip().splitlines()[-1].removeprefix("frozen: "))


@pytest.mark.slow
def test_a_run_exits_with_its_objects_frozen_and_its_output_whole(run_filterkit):
    completed = run_main("-q", REAL / "iris.arff", "l2")
    assert completed.returncode == 0
    assert frozen_count(completed.stderr) > 10_000  # numpy's and scipy's objects among them
    assert completed.stdout == run_filterkit("-q", REAL / "iris.arff", "l2").stdout


@pytest.mark.slow
def test_a_failed_run_exits_with_status_1_and_its_message(tmp_path):
    missing = tmp_path / "missing.arff"
    completed = run_main(missing, "l2")
    assert completed.returncode == 1
    assert completed.stdout == b""
    assert f"filterkit: error: {missing}: No such file or directory" in completed.stderr.decode()
    assert frozen_count(completed.stderr) > 10_000
