"""The benchmark's C floor (issue 20, item 1) writes filterkit's bytes where it does the same job,
and its Schubfach printer writes repr's text.

``benchmarks/floor/floor.c`` is compiled with gcc (skipped without it); its identity and
``l2`` outputs must equal filterkit's from the ``@data`` line on, on real word counts and
on doubles chosen to be hard to print: every binary exponent, subnormals, powers of two
(whose rounding interval is lopsided), exact ties at the 17th digit, and random bits.

``floor print`` reads one double's bit pattern in hex per line and writes the text the floor
gives it; Python's ``repr`` is the oracle (with filterkit's conventions on top: an integral
value below 2^53 without ".0", "-0", "?" and "Infinity"), on about 330,000 doubles: random bit
patterns, every power of two, subnormals (the tiny ones where repr keeps one digit: 5e-324,
not 4.9e-324), integers and halves near 2^53, exact ties at the 17th digit, and values like
normalized word-count rows.
"""

from __future__ import annotations

import math
import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

from chain_helpers import REAL

FLOOR_SOURCE = Path(__file__).resolve().parent.parent / "benchmarks" / "floor" / "floor.c"

pytestmark = [
    pytest.mark.nightly,
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


def printed(floor: Path, values: np.ndarray) -> list[str]:
    """The floor's text of each float64 in ``values``, through ``floor print``."""
    bit_patterns = np.asarray(values, dtype=np.float64).view(np.uint64).tolist()
    stdin = "".join(f"{bits:016x}\n" for bits in bit_patterns)
    finished = subprocess.run([str(floor), "print"], input=stdin, capture_output=True, text=True, check=True)
    return finished.stdout.splitlines()


def expected_text(value: float) -> str:
    """repr(value), with filterkit's conventions for integers, NaN and the infinities."""
    if math.isnan(value):
        return "?"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if abs(value) < 2.0**53 and value == int(value):
        return "-0" if value == 0 and math.copysign(1.0, value) < 0 else str(int(value))
    return repr(value)


def doubles_to_print() -> np.ndarray:
    """About 330,000 doubles chosen to be hard to print."""
    generator = np.random.default_rng(2020)
    random_bits = generator.integers(0, 2**64 - 1, size=250_000, dtype=np.uint64, endpoint=True).view(np.float64)
    powers_of_two = np.ldexp(1.0, np.arange(-1074, 1024))
    smallest_subnormals = np.arange(1, 20_001, dtype=np.uint64).view(np.float64)
    subnormals = generator.integers(1, 2**52, size=20_000, dtype=np.uint64).view(np.float64)
    steps = np.arange(-3000, 3001, dtype=np.float64)
    near_2_53 = np.concatenate([2.0**53 + 2 * steps, 2.0**53 + steps, 2.0**52 + steps / 2, 2.0**54 + 4 * steps])
    ties = (4 * generator.integers(2**49, 2**50, size=5_000) + 3) / 4  # x.75 between 2^51 and 2^52
    counts = generator.integers(1, 40, size=(5_000, 8)).astype(np.float64)
    normalized_rows = (counts / np.sqrt((counts**2).sum(axis=1, keepdims=True))).ravel()
    decimals = generator.integers(1, 10**6, size=10_000) / 10.0 ** generator.integers(1, 12, size=10_000)
    special = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, np.finfo(np.float64).max, np.finfo(np.float64).tiny])
    everything = [random_bits, powers_of_two, smallest_subnormals, subnormals, near_2_53, ties]
    return np.concatenate([*everything, normalized_rows, decimals, special, -decimals])


def test_the_floors_printer_writes_repr_on_hard_doubles(floor):
    values = doubles_to_print()
    texts = printed(floor, values)
    assert len(texts) == len(values) > 300_000
    wrong = [(value, text) for value, text in zip(values.tolist(), texts) if text != expected_text(value)]
    assert wrong[:10] == []


@pytest.mark.parametrize(
    "value, text",
    [
        (0.1, "0.1"),
        (1e-05, "1e-05"),
        (0.0001, "0.0001"),
        (1e16, "1e+16"),
        (1.5e16, "1.5e+16"),
        (123456789012345.6, "123456789012345.6"),
        (2.0**53, "9007199254740992.0"),
        (2.0**53 - 1, "9007199254740991"),
        (5e-324, "5e-324"),
        (1e-323, "1e-323"),
        (1.5e-323, "1.5e-323"),
        (2.2250738585072014e-308, "2.2250738585072014e-308"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (1113178120592002.25, "1113178120592002.2"),  # an exact tie at the 17th digit: the even digit
        (1113178120592002.75, "1113178120592002.8"),
        (-0.3, "-0.3"),
        (-0.0, "-0"),
        (0.05707301455353496, "0.05707301455353496"),
    ],
)
def test_the_floors_printer_writes_hand_checked_texts(floor, value, text):
    assert printed(floor, np.array([value])) == [text]
