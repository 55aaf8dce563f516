"""The C floor's Schubfach printer (benchmarks/floor/floor.c, issue 20 item 1) writes repr's text.

``floor print`` reads one double's bit pattern in hex per line and writes the text the floor
gives it; Python's ``repr`` is the oracle (with filterkit's conventions on top: an integral
value below 2^53 without ".0", "-0", "?" and "Infinity").  The doubles: random bit patterns
(every binary exponent), every power of two (the lopsided intervals), subnormals (the tiny
ones where repr keeps one digit: 5e-324, not 4.9e-324), integers and halves near 2^53, exact
ties at the 17th digit, and values like normalized word-count rows.  Compiled with gcc as
benchmarks/run.py compiles it; skipped without gcc.
"""

from __future__ import annotations

import math
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

FLOOR_SOURCE = Path(__file__).resolve().parent.parent / "benchmarks" / "floor" / "floor.c"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed: the floor cannot be built"),
]


@pytest.fixture(scope="module")
def floor(tmp_path_factory) -> Path:
    """The floor, built with the options benchmarks/run.py uses."""
    binary = tmp_path_factory.mktemp("floor_printer") / "floor"
    subprocess.run(["gcc", "-O2", "-o", str(binary), str(FLOOR_SOURCE), "-lm"], check=True)
    return binary


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


def hard_doubles() -> np.ndarray:
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
    values = hard_doubles()
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
