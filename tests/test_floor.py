"""The benchmark's C floor (issue 20, item 1) writes filterkit's bytes where it does the same job.

``benchmarks/floor/floor.c`` is compiled with gcc (skipped without it); its identity and
``l2`` outputs must equal filterkit's from the ``@data`` line on, on real word counts and
on doubles chosen to be hard to print: every binary exponent, subnormals, powers of two
(whose rounding interval is lopsided), exact ties at the 17th digit, and random bits.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

from chain_helpers import REAL

FLOOR_SOURCE = Path(__file__).resolve().parent.parent / "benchmarks" / "floor" / "floor.c"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed: the floor cannot be built"),
]


@pytest.fixture(scope="module")
def floor(tmp_path_factory) -> Path:
    """The floor, built as benchmarks/run.py builds it."""
    binary = tmp_path_factory.mktemp("floor") / "floor"
    subprocess.run(["gcc", "-O2", "-o", str(binary), str(FLOOR_SOURCE), "-lm"], check=True)
    return binary


def hard_doubles(count: int) -> list[float]:
    """Finite non-zero doubles that stress a shortest round-trip printer."""
    generator = np.random.default_rng(20)
    bits = generator.integers(0, 2**63, size=count, dtype=np.uint64)
    random_bits = [v for v in bits.view(np.float64).tolist() if np.isfinite(v) and v != 0]
    powers_of_two = [2.0**e for e in range(-1074, 1024, 7)]
    subnormals = [struct.unpack("<d", struct.pack("<Q", int(b)))[0] for b in generator.integers(1, 2**52, 500)]
    ties = [(4 * int(n) + 3) / 4 for n in generator.integers(2**49, 2**50, 500)]  # x.75 at 2^51–2^52: 17-digit ties
    fractions = (generator.integers(1, 99, 2000) / generator.integers(1, 99, 2000)).tolist()
    uniform = generator.random(2000).tolist()
    return random_bits + powers_of_two + subnormals + ties + fractions + uniform


def sparse_arff(values: list[float], per_row: int = 9) -> bytes:
    """A sparse ARFF with a nominal class first and ``values`` in rows of ``per_row``."""
    lines = ["@relation hard", "@attribute class {a,b}"]
    lines += [f"@attribute x{i} numeric" for i in range(per_row)]
    lines.append("@data")
    for start in range(0, len(values), per_row):
        row = values[start : start + per_row]
        label = ["0 b"] if start % 2 else []
        lines.append("{" + ",".join(label + [f"{i + 1} {v!r}" for i, v in enumerate(row)]) + "}")
    return ("\n".join(lines) + "\n").encode()


def data_section(arff: bytes) -> bytes:
    return arff[arff.lower().index(b"\n@data") :]


def floor_output(floor: Path, job: str, path: Path) -> bytes:
    return subprocess.run([str(floor), job, "-c", "first", str(path)], capture_output=True, check=True).stdout


@pytest.mark.parametrize("job, stages", [("identity", []), ("l2", ["l2"])])
def test_the_floor_writes_filterkits_bytes_on_real_word_counts(floor, run_filterkit, job, stages):
    path = REAL / "grain_wc.arff"
    ours = run_filterkit("-q", "-c", "first", path, *stages)
    assert ours.status == 0
    assert data_section(floor_output(floor, job, path)) == data_section(ours.stdout)


@pytest.mark.parametrize("job, stages", [("identity", []), ("l2", ["l2"])])
def test_the_floor_writes_filterkits_bytes_on_hard_doubles(floor, run_filterkit, tmp_path, job, stages):
    path = tmp_path / "hard.arff"
    path.write_bytes(sparse_arff(hard_doubles(20000)))
    ours = run_filterkit("-q", "-c", "first", path, *stages)
    assert ours.status == 0
    floors = data_section(floor_output(floor, job, path))
    assert floors == data_section(ours.stdout)
    if job == "identity":
        assert b" 5e-324" in floors  # the smallest subnormal in repr's layout, not %.17g's 4.9406564584124654e-324


def test_the_floor_refuses_what_it_does_not_read(floor, tmp_path):
    path = tmp_path / "dense.arff"
    path.write_bytes(b"@relation d\n@attribute x numeric\n@attribute c {a,b}\n@data\n1,a\n")
    refused = subprocess.run([str(floor), "l2", str(path)], capture_output=True)
    assert refused.returncode == 2
    assert b"line 5: a dense row" in refused.stderr
