"""Start-up (issue 20, item 2): the console script freezes the imported libraries' objects before
the run, so the collections a run on a large file triggers do not walk numpy's and scipy's objects
(a full collection of 17–30 ms at grain ×10); and it collects nothing while it imports them (issue 51:
some 40 collections, 5 ms of a small run)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from chain_helpers import REAL

#: ``filterkit.cli.main(ARGV)`` with ``run`` wrapped to report, on stderr, how many objects were
#: frozen when the run began and how many collections ran since filterkit.cli was imported.
PROBE = """
import gc, sys
import filterkit.cli
collections = []
gc.callbacks.append(lambda phase, info: phase == "start" and collections.append(info["generation"]))
run = filterkit.cli.run
def reporting_run(argv, *args, **kwargs):
    print(f"frozen: {gc.get_freeze_count()}", file=sys.stderr)
    print(f"collections: {len(collections)}", file=sys.stderr)
    return run(argv, *args, **kwargs)
filterkit.cli.run = reporting_run
filterkit.cli.main(sys.argv[1:])
"""


@pytest.mark.slow
def test_the_imports_objects_are_frozen_before_the_run(run_filterkit):
    completed = subprocess.run(
        [sys.executable, "-c", PROBE, "-q", str(REAL / "iris.arff"), "l2"], capture_output=True, timeout=120
    )
    assert completed.returncode == 0, completed.stderr
    frozen, collections = (int(line.split(": ")[1]) for line in completed.stderr.decode().splitlines()[:2])
    assert frozen > 10_000  # numpy's, click's and filterkit's objects among them
    assert collections == 0
    assert completed.stdout == run_filterkit("-q", REAL / "iris.arff", "l2").stdout
