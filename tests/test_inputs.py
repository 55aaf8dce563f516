"""Inputs that can be read only once (issue 23): a FIFO, ``<(…)``, ``/dev/stdin``.

A regular file is read again for every pass; anything else is read once, as
standard input is, and spooled when the chain needs several passes.  Each case
must give exactly what the same data in a regular file gives.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import threading

import pytest

from chain_helpers import FILTERKIT, REAL, STAGES_DIR
from filterkit.testing import run_filterkit

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(FILTERKIT is None, reason="the filterkit console script is not installed"),
]

IRIS = REAL / "iris.arff"
#: Long enough for any of these runs; a run that opens its input a second time hangs until then.
PATIENCE = 30


def run(argv, cwd, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([FILTERKIT, *map(str, argv)], capture_output=True, cwd=cwd, timeout=PATIENCE, **kwargs)


def in_bash(command: str, cwd) -> subprocess.CompletedProcess:
    script = f'filterkit() {{ {shlex.quote(FILTERKIT)} "$@"; }}\n{command}'
    return subprocess.run(script, shell=True, executable="/bin/bash", capture_output=True, cwd=cwd, timeout=PATIENCE)


@pytest.fixture(scope="module")
def from_a_file():
    """What a chain gives on iris.arff as a regular file (run in this process: only the runs that read
    once need the console script)."""

    def output(*stages) -> bytes:
        completed = run_filterkit(IRIS, *stages)
        assert completed.status == 0, completed.stderr
        return completed.stdout

    return output


def feed_fifo(fifo, data: bytes) -> threading.Thread:
    """Write ``data`` into ``fifo`` once, from a thread (open blocks until a reader comes)."""
    writer = threading.Thread(target=lambda: fifo.write_bytes(data), daemon=True)
    writer.start()
    return writer


@pytest.mark.parametrize(
    "stages",
    [[], ["l2"], ["minmax", "l2"], ["minmax", "ig", "l2"]],
    ids=["identity", "stateless", "fitted", "two-passes"],
)
def test_a_named_fifo_is_read_once(tmp_path, from_a_file, stages):
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)
    writer = feed_fifo(fifo, IRIS.read_bytes())
    completed = run([fifo, *stages], tmp_path)
    writer.join(PATIENCE)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == from_a_file(*stages)


@pytest.mark.parametrize(
    "command",
    [
        "filterkit <(cat {iris}) minmax l2",
        "filterkit <(gzip -c {iris}) minmax l2",
        "cat {iris} | filterkit /dev/stdin minmax l2",
        "cat {iris} | filterkit /proc/self/fd/0 minmax l2",
    ],
    ids=["process-substitution", "gzip-through-process-substitution", "dev-stdin", "proc-self-fd"],
)
def test_a_pipe_given_by_name_is_spooled_like_stdin(tmp_path, from_a_file, command):
    completed = in_bash(command.format(iris=shlex.quote(str(IRIS))), tmp_path)
    assert completed.returncode == 0, completed.stderr.decode()
    assert completed.stdout == from_a_file("minmax", "l2")


def test_apply_reads_a_fifo_once(tmp_path, from_a_file):
    assert run_filterkit("--save-model", tmp_path / "m.json", IRIS, "minmax", "l2").status == 0
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)
    writer = feed_fifo(fifo, IRIS.read_bytes())
    completed = run(["apply", "m.json", fifo], tmp_path)
    writer.join(PATIENCE)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.split(b"\n", 1)[1] == from_a_file("minmax", "l2").split(b"\n", 1)[1]


def test_a_bad_row_in_a_fifo_is_located_in_it(tmp_path):
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)
    writer = feed_fifo(fifo, IRIS.read_bytes() + b"5.0,3.3,1.4,x,Iris-setosa\n")
    completed = run(["--plugins-dir", STAGES_DIR, fifo, "meanscale"], tmp_path)
    writer.join(PATIENCE)
    assert completed.returncode == 1
    assert completed.stderr.decode().startswith(f"filterkit: error: {fifo}:226:")
    assert os.listdir(tmp_path) == ["in.fifo"]
