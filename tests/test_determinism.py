"""Determinism (issue 9): the same input and options give byte-identical output
across runs, chunk sizes and (for order-free stages) row order.

Every built-in stage (as ``filterkit plugins --json`` lists them) runs, with
sensible options, on three small real data sets: iris (dense, three classes),
the first rows of credit-g (dense, nominal and numeric, two classes) and the
first rows of oh0 (sparse word counts, ten classes; only the words in at
least three of those rows), and each of them again with fractional instance weights
(0.1, 0.3, …: float sums of such weights change with the order of adding).  For each one:

* two runs in two processes with different hash seeds (PYTHONHASHSEED) give
  the same bytes: the default run, and one with ``--chunk-rows 100000`` (each
  input is far below the default chunk of 10,000 rows, so both read the whole
  file as one chunk: one run checks both);
* ``--chunk-rows 1`` gives the bytes of the default on every fourth of the rows (13 to 15 rows,
  every class and every weight still there: one-row chunks cost ~1 ms each, so the whole files
  would triple the module's time, and a one-row chunk merges the same way whether 13 or 60 follow it);
* with the input rows shuffled and read in chunks of 7 rows, the output rows are the same rows
  shuffled the same way (the header, the chain comment included, is identical): one run checks
  row order and chunk size — for every stage but ``select --metric svm --sample``, whose sample
  draws one seeded number per row in input order (documented in the README); it gets a run of
  the rows in order with ``--chunk-rows 7`` instead.

All runs go through ``filterkit.cli.run`` with ``-o`` in two child processes
(the whole-file runs in the second, each with its own hash seed), so the start-up
of a process that runs filterkit (1.4 s of CPU, scikit-learn's import for the SVM
included) is paid twice, not hundreds of times (and the plugins are discovered once
per process).
"""

from __future__ import annotations

import functools
import json
import os
import random
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from chain_helpers import REAL, example_stages, needs_two_classes, reads_text
from filterkit.arff.reader import DEFAULT_CHUNK_ROWS
from filterkit.testing import run_filterkit

# Stages with options worth a run of their own, beside the plain run of every stage.
EXTRA_RUNS = {
    "select-svm": ["select", "--metric", "svm", "--sample", "0.5", "--seed", "1", "--top", "20"],
    "select-presence": ["select", "--metric", "bns", "--presence", "--top", "20"],
    "presence-scorers": ["ig", "--presence", "chi", "--presence", "--combine", "mean"],
    "ordinal-quantiles": ["ordinal", "--max-thresholds", "2"],
    "select-sparsity": ["ig", "--presence", "--no-scale", "select", "--sparsity", "5"],
    "shape-bns-l2": ["shape", "bns", "l2"],
}
# Not order-free by design: the SVM's row sample is drawn in input order.
ORDER_DEPENDENT = {"select-svm"}

# Fractional instance weights (cycled over the rows): their float sums depend on the order of adding,
# so only exact sums give the same bytes for every chunking and row order.
WEIGHTS = ["0.1", "0.3", "0.7", "1", "2.2", "0.05"]
# data set: (source, rows kept, chain options, the --positive for stages that need a two-class task,
# instance weights or None); the rows kept are a slice (iris is sorted by class: every other row keeps all three)
DATA = {
    "iris": ("iris.arff", slice(None, None, 3), [], "Iris-versicolor", None),
    "credit-g": ("credit-g.arff", slice(60), [], None, None),
    "oh0": ("oh0.wc.arff", slice(50), [], "Ethics", None),
    "iris-weighted": ("iris.arff", slice(None, None, 3), [], "Iris-versicolor", WEIGHTS),
    "credit-g-weighted": ("credit-g.arff", slice(60), [], None, WEIGHTS),
    "oh0-weighted": ("oh0.wc.arff", slice(50), [], "Ethics", WEIGHTS),
    "grain": ("reuters_grain_sample.arff", slice(None), [], None, None),
    "grain-weighted": ("reuters_grain_sample.arff", slice(None), [], None, WEIGHTS),
}
#: The data sets of documents: a stage that reads text (``words``) runs on these, every other stage on the others.
TEXT_DATA = {"grain", "grain-weighted"}
# oh0's words kept: those in at least this many of the rows kept, so the header stays small.
OH0_MIN_ROWS = 3
#: The chunk size of the shuffled runs (and of the order-dependent runs' chunked run, in order).
ROWS7 = ["--chunk-rows", "7"]
#: ``--chunk-rows 1`` runs on every fourth of a data set's rows (the rows before the weights are
#: cycled over them, so the slice keeps every weight), against the default run on that slice.
ONE_ROW_SLICE = slice(None, None, 4)
ONE_ROW_CHUNKINGS = {
    "slice-default": [],
    "rows1": ["--chunk-rows", "1"],
}
#: The run in the second process: the whole file as one chunk, which is what the default does here.
WHOLE_FILE = ["--chunk-rows", "100000"]


@functools.lru_cache(maxsize=None)
def installed_stages() -> tuple[str, ...]:
    """The stages ``filterkit plugins --json`` lists (run in this process: it is collected twice under -n 2)."""
    listing = run_filterkit("plugins", "--json")
    assert listing.status == 0, listing.stderr
    return tuple(sorted(stage["name"] for stage in json.loads(listing.stdout)["stages"]))


def _split(text: str) -> tuple[str, list[str]]:
    """The header (through the @data line) and the data rows of ARFF text."""
    lines = text.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.strip().lower() == "@data")
    rows = [line for line in lines[at + 1 :] if line.strip() and not line.startswith("%")]
    return "".join(lines[: at + 1]), rows


def _fewer_words(header: str, rows: list[str], min_rows: int) -> tuple[str, list[str]]:
    """A plain sparse file without the words that occur in fewer than ``min_rows`` rows (the class stays)."""
    lines = header.splitlines(keepends=True)
    declarations = [i for i, line in enumerate(lines) if line.lower().startswith("@attribute")]
    parsed = [[pair.split(" ") for pair in row.strip()[1:-1].split(",")] for row in rows]
    counts = {}
    for pairs in parsed:
        for index, _ in pairs:
            counts[int(index)] = counts.get(int(index), 0) + 1
    class_index = len(declarations) - 1
    kept = [i for i in range(len(declarations)) if counts.get(i, 0) >= min_rows or i == class_index]
    new_index = {old: new for new, old in enumerate(kept)}
    dropped = {declarations[i] for i in range(len(declarations)) if i not in new_index}
    header = "".join(line for i, line in enumerate(lines) if i not in dropped)
    rows = [
        "{" + ",".join(f"{new_index[int(i)]} {v}" for i, v in pairs if int(i) in new_index) + "}\n" for pairs in parsed
    ]
    return header, rows


def _weighted(rows: list[str], weights: list[str] | None) -> list[str]:
    """The rows with the weights cycled over them (``{w}`` after each row), or as they are."""
    if weights is None:
        return rows
    return [f"{row.rstrip()},{{{weights[i % len(weights)]}}}\n" for i, row in enumerate(rows)]


_CHILD = textwrap.dedent(
    """
    import functools, json, sys
    import filterkit.cli
    from filterkit.cli import run
    # The plugins are discovered once per process (entry points: half the time of a small run).
    filterkit.cli.load_plugins = functools.lru_cache(maxsize=None)(filterkit.cli.load_plugins)
    jobs = json.load(open(sys.argv[1]))
    statuses = {}
    for key, argv in jobs:
        statuses[key] = run(argv)
    json.dump(statuses, open(sys.argv[2], "w"))
    """
)


def _runs():
    """(run name, stage words) for every installed stage plus the extra runs."""
    return [(name, stages[0].command_words()) for name, stages in example_stages().items()] + list(EXTRA_RUNS.items())


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    """Run every (stage, data set, variant) and return {key: (status, output bytes or None)}."""
    root = tmp_path_factory.mktemp("determinism")
    inputs = {}
    for name, (file, keep, _, _, weights) in DATA.items():
        header, rows = _split((REAL / file).read_text(encoding="utf-8"))
        rows = rows[keep]
        if file == "oh0.wc.arff":
            header, rows = _fewer_words(header, rows, OH0_MIN_ROWS)
        (root / f"{name}.slice.arff").write_text(
            header + "".join(_weighted(rows[ONE_ROW_SLICE], weights)), encoding="utf-8"
        )
        rows = _weighted(rows, weights)
        order = list(range(len(rows)))
        random.Random(20090628).shuffle(order)
        (root / f"{name}.arff").write_text(header + "".join(rows), encoding="utf-8")
        (root / f"{name}.shuffled.arff").write_text(header + "".join(rows[i] for i in order), encoding="utf-8")
        inputs[name] = order

    def out(key, which):
        return str(root / "out" / (key.replace("|", "_") + f".{which}.arff"))

    all_jobs, default_jobs = [], []
    for run_name, words in _runs():
        for name, (_, _, options, positive, _) in DATA.items():
            if reads_text(words) != (name in TEXT_DATA):
                continue
            chain_options = list(options)
            if positive and needs_two_classes(words):
                chain_options += ["--positive", positive]
            plain, shuffled = str(root / f"{name}.arff"), str(root / f"{name}.shuffled.arff")
            for chunking, chunk_options in ONE_ROW_CHUNKINGS.items():
                key = f"{run_name}|{name}|{chunking}"
                sliced = str(root / f"{name}.slice.arff")
                all_jobs.append((key, [*chain_options, *chunk_options, "-q", "-o", out(key, "a"), sliced, *words]))
            key = f"{run_name}|{name}|default"
            all_jobs.append((key, [*chain_options, "-q", "-o", out(key, "a"), plain, *words]))
            default_jobs.append((key, [*chain_options, *WHOLE_FILE, "-q", "-o", out(key, "b"), plain, *words]))
            if run_name in ORDER_DEPENDENT:
                key = f"{run_name}|{name}|rows7"
                all_jobs.append((key, [*chain_options, *ROWS7, "-q", "-o", out(key, "a"), plain, *words]))
            key = f"{run_name}|{name}|shuffled"
            all_jobs.append((key, [*chain_options, *ROWS7, "-q", "-o", out(key, "a"), shuffled, *words]))
    (root / "out").mkdir()
    # The first runs in one process (hash seed 1), the whole-file runs in another (seed 2).
    children = []
    for seed, jobs in (("1", all_jobs), ("2", default_jobs)):
        spec, result = root / f"jobs{seed}.json", root / f"statuses{seed}.json"
        spec.write_text(json.dumps(jobs))
        children.append(
            (
                subprocess.Popen(
                    [sys.executable, "-c", _CHILD, str(spec), str(result)],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                    env={**os.environ, "PYTHONHASHSEED": seed},
                ),
                result,
            )
        )
    for child, _ in children:
        _, stderr = child.communicate(timeout=600)
        assert child.returncode == 0, stderr.decode()
    statuses_a, statuses_b = (json.loads(result.read_text()) for _, result in children)

    def output(key, which):
        path = Path(out(key, which))
        return path.read_bytes() if path.exists() else None

    found = {key: (status, output(key, "a")) for key, status in statuses_a.items()}
    found.update({key + "|second-process": (status, output(key, "b")) for key, status in statuses_b.items()})
    return found, inputs


def test_every_installed_stage_is_covered():
    # a new built-in stage gets a run here, with the first of its declared option sets (Stage.examples)
    stages = installed_stages()
    assert {"l2", "l1", "minmax", "binarize", "select", "ordinal", "shape", "bns", "ig"} <= set(stages)


CASES = [(run_name, data) for run_name, words in _runs() for data in DATA if reads_text(words) == (data in TEXT_DATA)]


@pytest.mark.slow
@pytest.mark.parametrize("run_name, data", CASES, ids=[f"{r}-{d}" for r, d in CASES])
def test_output_is_byte_identical_across_processes_and_chunk_sizes(outputs, run_name, data):
    found, _ = outputs
    status, default = found[f"{run_name}|{data}|default"]
    assert status == 0 and default, f"{run_name} on {data} failed (status {status})"
    second = found[f"{run_name}|{data}|default|second-process"]
    assert second == (0, default), (
        "a second run (another process, another hash seed, the whole file as one chunk) gives other bytes"
    )
    if run_name in ORDER_DEPENDENT:  # the others read the shuffled rows in chunks of 7 (the test below)
        assert found[f"{run_name}|{data}|rows7"] == (0, default), "--chunk-rows 7 changes the output"
    status, sliced = found[f"{run_name}|{data}|slice-default"]
    assert status == 0 and sliced, f"{run_name} on every fourth row of {data} failed (status {status})"
    assert found[f"{run_name}|{data}|rows1"] == (0, sliced), "--chunk-rows 1 changes the output"


ORDER_FREE = [(r, d) for r, d in CASES if r not in ORDER_DEPENDENT]


@pytest.mark.slow
@pytest.mark.parametrize("run_name, data", ORDER_FREE, ids=[f"{r}-{d}" for r, d in ORDER_FREE])
def test_shuffled_rows_give_the_same_rows_shuffled_the_same_way(outputs, run_name, data):
    found, orders = outputs
    status, default = found[f"{run_name}|{data}|default"]
    shuffled_status, shuffled = found[f"{run_name}|{data}|shuffled"]
    assert status == 0 and shuffled_status == 0
    header, rows = _split(default.decode("utf-8"))
    shuffled_header, shuffled_rows = _split(shuffled.decode("utf-8"))
    assert shuffled_header == header, "the fitted header depends on row order or chunk size"
    if len(rows) < len(orders[data]):  # a stage that keeps some rows (fold): the same ones, in their input order
        assert sorted(shuffled_rows) == sorted(rows), "a row filter keeps other rows when they come in another order"
        return
    unshuffled = [None] * len(rows)
    for position, original in enumerate(orders[data]):
        unshuffled[original] = shuffled_rows[position]
    differing = [i for i, (a, b) in enumerate(zip(unshuffled, rows)) if a != b]
    assert not differing, (
        f"{len(differing)} rows differ (rows shuffled, in chunks of 7), "
        f"the first: {rows[differing[0]]!r} vs {unshuffled[differing[0]]!r}"
    )


def _written_weight(row: str) -> str:
    """The instance weight an output row ends with (`` {w}``), "1" when it has none (1 is not written)."""
    weight = re.search(r" \{([^{}]*)\}$", row.rstrip())
    return weight.group(1) if weight else "1"


@pytest.mark.slow
def test_the_input_subsets_are_what_the_tests_assume(outputs):
    found, orders = outputs
    assert max(len(order) for order in orders.values()) < DEFAULT_CHUNK_ROWS, "the default reads each as one chunk"
    assert {name: len(order) for name, order in orders.items()} == {
        "iris": 50,
        "credit-g": 60,
        "oh0": 50,
        "iris-weighted": 50,
        "credit-g-weighted": 60,
        "oh0-weighted": 50,
        "grain": 60,
        "grain-weighted": 60,
    }
    assert b"} {0.1}\n" in found["l2|oh0-weighted|default"][1] and b" {0.3}\n" in found["l2|iris-weighted|default"][1]
    header, rows = _split(found["l2|oh0|default"][1].decode("utf-8"))
    assert 200 < header.count("@attribute") < 500 and len(rows) == 50 and all(row.startswith("{") for row in rows)
    assert sum(row.rstrip().endswith("Ethics}") for row in rows) >= 4
    _, iris_rows = _split(found["l2|iris|default"][1].decode("utf-8"))
    assert {row.rstrip().rsplit(",", 1)[1] for row in iris_rows} == {"Iris-setosa", "Iris-versicolor", "Iris-virginica"}
    # the slices of the --chunk-rows 1 runs: every class, the positive class, every weight
    sliced = {
        name: _split(found[f"{'words' if name in TEXT_DATA else 'l2'}|{name}|slice-default"][1].decode("utf-8"))[1]
        for name in DATA
    }
    assert {name: len(rows) for name, rows in sliced.items()} == {
        "iris": 13,
        "credit-g": 15,
        "oh0": 13,
        "iris-weighted": 13,
        "credit-g-weighted": 15,
        "oh0-weighted": 13,
        "grain": 15,
        "grain-weighted": 15,
    }
    assert {row.rstrip().rsplit(",", 1)[1] for row in sliced["iris"]} == {
        row.rstrip().rsplit(",", 1)[1] for row in iris_rows
    }
    assert {row.rstrip().rsplit(",", 1)[1] for row in sliced["credit-g"]} == {"good", "bad"}
    assert any(row.rstrip().endswith("Ethics}") for row in sliced["oh0"])
    for name in ("iris-weighted", "credit-g-weighted", "oh0-weighted", "grain-weighted"):
        assert {_written_weight(row) for row in sliced[name]} == set(WEIGHTS)


@pytest.mark.parametrize("stage", ["l2", "l1"])
def test_row_norms_of_wine_do_not_depend_on_the_chunk_size(run_filterkit, stage):
    # wine: 178 dense rows of numeric features (the default class, the last attribute, is numeric here)
    default = run_filterkit(REAL / "wine.arff", stage)
    assert default.status == 0
    assert run_filterkit("--chunk-rows", "1", REAL / "wine.arff", stage).stdout == default.stdout
