"""A Dask task reads, fits and writes its partition in its own thread (issue 20): the workers'
threads are the parallelism, so neither the reader nor the writer starts a thread of its own
(issue 38: the background threads are read-ahead and write-behind only, which a task does not
use), and what a task writes and counts is what the local reader and writer give."""

from __future__ import annotations

import io
import threading

import numpy as np
import pytest

from chain_helpers import REAL
from filterkit.arff.reader import ArffReader
from filterkit.arff.writer import ArffWriter
from filterkit.distributed import ChainRecipe, _partition_statistics, _write_partition
from filterkit.partitions import file_plan
from filterkit.running import OutputForm

GRAIN = REAL / "grain_wc.arff"
#: the 1.2 MB file's 1,554 rows as two chunks, each parsed from a group of over 64 KiB of text and
#: holding over 2**16 stored values (what the reader and the writer share between two threads)
CHUNK_ROWS = 1000


@pytest.fixture
def started_threads(monkeypatch):
    """The names of the threads started while the test runs."""
    names: list[str] = []
    start = threading.Thread.start

    def recording_start(thread):
        names.append(thread.name)
        start(thread)

    monkeypatch.setattr(threading.Thread, "start", recording_start)
    return names


def locally_written(path) -> tuple[bytes, int]:
    """The file as the local engine's reader and writer rewrite it, and its row count."""
    out = io.BytesIO()
    rows = 0
    with ArffReader(str(path), path.name, CHUNK_ROWS) as reader:
        writer = ArffWriter(out, reader.schema, None, [])
        for chunk in reader.chunks():
            writer.write(chunk)
            rows += chunk.n_rows
    return out.getvalue(), rows


def recipe_of(schema, sparse, stages=(), class_name=None) -> ChainRecipe:
    return ChainRecipe(stages, schema, class_name, None, None, CHUNK_ROWS, sparse)


def test_the_reader_and_writer_start_no_thread_on_groups_large_enough_to_share(started_threads):
    """Each of the two chunks is a group of over 64 KiB of text and over 2**16 stored values,
    which the reader parsed and the writer formatted two at a time in helper threads before."""
    written, rows = locally_written(GRAIN)
    assert started_threads == []
    assert rows == 1554 and written.count(b"\n{") == 1554


def test_a_write_task_starts_no_thread_and_writes_what_the_local_engine_does(tmp_path, started_threads):
    plan = file_plan(str(GRAIN), GRAIN.name)
    written = tmp_path / "part.arff"
    rows = _write_partition(
        recipe_of(plan.schema, plan.sparse_rows), plan.partitions[0], 0, str(written), OutputForm(), []
    )
    assert [name for name in started_threads if name.startswith("filterkit-")] == []
    assert (written.read_bytes(), rows) == locally_written(GRAIN)
    assert rows == 1554


def test_a_statistics_task_starts_no_thread_and_counts_what_the_local_fit_does(started_threads):
    plan = file_plan(str(GRAIN), GRAIN.name)
    recipe = recipe_of(plan.schema, plan.sparse_rows, (("bns", {}, None),), "class-att")
    on_task, worker = _partition_statistics(recipe, plan.partitions[0], 0)
    assert worker is None  # called here, not on a worker
    assert [name for name in started_threads if name.startswith("filterkit-")] == []
    stage = recipe.rebuild().stages[-1]
    local = stage.new_statistics()
    with ArffReader(str(GRAIN), GRAIN.name, CHUNK_ROWS) as reader:
        for chunk in reader.chunks():
            local = stage.accumulate(local, chunk)
    on_task_state, local_state = fitted_state(recipe, on_task), fitted_state(recipe, local)
    assert on_task_state.keys() == local_state.keys()
    for name, value in local_state.items():
        np.testing.assert_array_equal(on_task_state[name], value, err_msg=name)
    assert np.count_nonzero(local_state["scores"]) > 1000


def fitted_state(recipe: ChainRecipe, statistics) -> dict:
    """The state of the recipe's last stage fitted on ``statistics``."""
    stage = recipe.rebuild().stages[-1]
    stage.finalize(statistics)
    return stage.state()


def test_a_file_partition_task_starts_no_thread(tmp_path, started_threads):
    """The task that reads a folder input's file header and first row (rows of over 64 KiB)."""
    wide = tmp_path / "wide.arff"
    attributes = "".join(f"@attribute a{i} numeric\n" for i in range(12000))
    row = "{" + ",".join(f"{i} {i % 7 + 1}" for i in range(12000)) + "}\n"
    wide.write_text(f"@relation wide\n{attributes}@data\n{row}{row}")
    plan = file_plan(str(wide), wide.name)
    assert (len(plan.schema.attributes), plan.sparse_rows) == (12000, True)
    assert [name for name in started_threads if name.startswith("filterkit-")] == []
