"""The cost of fitting follows the data: distinct values are merged in O(n log n), and a
class declaring many labels costs only for the (feature, class) pairs that occur."""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest

from filterkit import cli, exact
from filterkit.schema import Chunk
from filterkit.statistics import ValueCounts


@pytest.mark.slow
def test_merging_one_chunk_at_a_time_costs_n_log_n_in_distinct_values(monkeypatch):
    merged_keys = []
    real_merge = exact._merged_runs

    def counted(first, second):
        merged_keys.append(len(first[0]) + len(second[0]))
        return real_merge(first, second)

    monkeypatch.setattr(exact, "_merged_runs", counted)
    n = 1024
    values = np.random.default_rng(0).permutation(n) + 0.5
    counts = ValueCounts.empty(1, 2)
    for i, value in enumerate(values):
        counts = counts.add(Chunk(np.array([[value, i % 2]])), np.array([0]), 1)
    assert sorted(counts.entries()[1].tolist()) == sorted(values.tolist())
    # re-merging everything per chunk would be n²/2 ≈ 524,000 keys, 25 times the bound
    assert sum(merged_keys) <= 2 * n * math.log2(n)


def many_labels_file(path, n_labels: int, n_features: int, n_rows: int) -> None:
    """Sparse word-count-like rows whose class declares ``n_labels`` labels, of which two occur."""
    generator = np.random.default_rng(1)
    labels = ",".join(f"c{i}" for i in range(n_labels))
    lines = [
        "@relation many",
        *(f"@attribute w{j} numeric" for j in range(n_features)),
        f"@attribute class {{{labels}}}",
        "@data",
    ]
    for row in range(n_rows):
        columns = np.sort(generator.choice(n_features, 20, replace=False))
        entries = [f"{j} {generator.integers(1, 5)}" for j in columns] + [f"{n_features} c{row % 2}"]
        lines.append("{" + ",".join(entries) + "}")
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.slow
@pytest.mark.parametrize(
    "chain", [["ig"], ["ig", "--presence"], ["chi", "--combine", "mean"], ["select", "--metric", "bns", "--top", "10"]]
)
def test_a_class_with_ten_thousand_labels_costs_what_the_data_holds(tmp_path, chain):
    path = tmp_path / "many.arff"
    many_labels_file(path, n_labels=10_000, n_features=1_000, n_rows=200)
    tracemalloc.start()
    try:
        status = cli.run(["-q", "-o", str(tmp_path / "out.arff"), str(path), *chain])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert status == 0
    # one float per feature and declared class would be 80 MB; the data itself is 4,000 values
    assert peak < 30_000_000
