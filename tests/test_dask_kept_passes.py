"""A Dask worker keeps what a pass over a partition was given for the run's next pass over it (issue 76, item 1):
the next task on that worker reads it back instead of reading and parsing the partition and running the stages
before again, as a local run's passes do; the client copies the parts into one file by the kernel; and a worker
started with Dask's allocator settings gets the local run's."""

from __future__ import annotations

import dataclasses
import gzip
import io
import os

import pytest

from chain_helpers import REAL
from filterkit import allocator, kept_on_workers
from filterkit.distributed import DaskEngine, _partition_statistics, _write_partition
from filterkit.outputs import append_rest
from filterkit.partitions import file_plan
from filterkit.plugins import load_plugins
from filterkit.runner import Chain
from filterkit.running import OutputForm

GRAIN = REAL / "grain_wc.arff"
CHUNK_ROWS = 500


def fitted_on_tasks(plan, partition_of_pass, engine: DaskEngine) -> Chain:
    """``minmax bns l2`` on grain fitted pass by pass through the statistics task, pass k reading
    ``partition_of_pass(k)``."""
    registry = load_plugins()
    chain = Chain([registry.make_stage(name, {}) for name in ("minmax", "bns", "l2")], class_spec="first")

    def statistics_of(position, stage):
        recipe = engine.recipe(chain, plan, fitting=position)
        statistics, worker = _partition_statistics(recipe, partition_of_pass(position), 0)
        assert worker is None  # called here, not on a worker
        return statistics

    return chain.fit_with(plan.schema, statistics_of)


def written_by_task(chain: Chain, plan, partition, engine: DaskEngine, path) -> bytes:
    rows = _write_partition(engine.recipe(chain, plan), partition, 0, str(path), OutputForm(), [])
    assert rows == 1554
    return path.read_bytes()


def test_a_partitions_later_passes_read_what_its_first_kept_not_the_input(tmp_path):
    plan = file_plan(str(GRAIN), GRAIN.name)
    real = plan.partitions[0]
    missing = dataclasses.replace(real, path=str(tmp_path / "gone.arff"))  # a pass that reads it fails
    kept_engine = DaskEngine(object(), None, CHUNK_ROWS)
    chain = fitted_on_tasks(plan, lambda position: real if position == 0 else missing, kept_engine)
    kept_output = written_by_task(chain, plan, missing, kept_engine, tmp_path / "kept.arff")
    assert kept_on_workers.forget(kept_engine.run) == 0  # the writing pass took (and deleted) what was kept

    reading_engine = DaskEngine(object(), None, CHUNK_ROWS)  # another run: nothing of the first is seen
    reread = fitted_on_tasks(plan, lambda position: real, reading_engine)
    kept_on_workers.forget(reading_engine.run)  # each pass read the input: what it kept goes unread
    assert written_by_task(reread, plan, real, reading_engine, tmp_path / "read.arff") == kept_output
    assert kept_output.count(b"\n{") == 1554

    with pytest.raises(Exception, match="gone.arff"):  # without kept chunks the missing input is read
        written_by_task(reread, plan, missing, reading_engine, tmp_path / "fails.arff")


def test_what_a_run_keeps_is_deleted_when_it_is_forgotten_and_only_its_own(tmp_path):
    plan = file_plan(str(GRAIN), GRAIN.name)
    engine, other = DaskEngine(object(), None, CHUNK_ROWS), DaskEngine(object(), None, CHUNK_ROWS)
    fitted_on_tasks(plan, lambda position: plan.partitions[0], engine)
    fitted_on_tasks(plan, lambda position: plan.partitions[0], other)
    assert kept_on_workers.take(engine.run, 1) is None  # another partition's
    assert kept_on_workers.forget(engine.run) == 1
    assert kept_on_workers.forget(engine.run) == 0
    assert kept_on_workers.forget(other.run) == 1


def test_a_text_chunk_is_not_kept_so_words_reads_its_partition_again(tmp_path):
    """A stage's own form of its chunks numbers the tokens its partition met, not the merged vocabulary's: on a
    worker, a pass keeps only the chunks as given, and never text."""
    documents = REAL / "reuters_grain_sample.arff"
    plan = file_plan(str(documents), documents.name)
    engine = DaskEngine(object(), None, CHUNK_ROWS)
    chain = Chain([load_plugins().make_stage("words", {"counts": True})])
    chain.fit_with(
        plan.schema,
        lambda position, stage: _partition_statistics(engine.recipe(chain, plan, fitting=0), plan.partitions[0], 0)[0],
    )
    assert kept_on_workers.forget(engine.run) == 0
    assert len(chain.output_schema.attributes) > 100


def test_parts_go_into_a_plain_file_by_the_kernel_with_the_streams_place_kept(tmp_path):
    part = tmp_path / "part"
    part.write_bytes(b"HEADER\n" + bytes(range(256)) * 5000)
    target = tmp_path / "out"
    with open(target, "wb") as stream, open(part, "rb") as rows:
        stream.write(b"first ")
        assert rows.read(7) == b"HEADER\n"
        append_rest(rows, stream)
        assert stream.tell() == 6 + 256 * 5000
        stream.write(b" last")
    assert target.read_bytes() == b"first " + bytes(range(256)) * 5000 + b" last"


def test_parts_go_into_a_compressed_stream_through_a_buffer(tmp_path):
    part = tmp_path / "part"
    part.write_bytes(b"HEADER\nrows\n" * 1000)
    compressed = io.BytesIO()
    with gzip.GzipFile(fileobj=compressed, mode="wb") as stream, open(part, "rb") as rows:
        rows.read(7)
        append_rest(rows, stream)
    assert gzip.decompress(compressed.getvalue()) == (b"HEADER\nrows\n" * 1000)[7:]


def test_a_pipe_takes_the_parts_through_a_buffer(tmp_path):
    part = tmp_path / "part"
    part.write_bytes(b"x" * 10_000)
    reading, writing = os.pipe()
    with open(writing, "wb") as stream, open(part, "rb") as rows:
        append_rest(rows, stream)
    with open(reading, "rb") as piped:
        assert piped.read() == b"x" * 10_000


@pytest.mark.parametrize(
    ("environment", "sets"),
    [
        ({"MALLOC_TRIM_THRESHOLD_": "65536"}, True),  # Dask's nanny's setting
        ({}, True),  # a worker started without a nanny
        ({"MALLOC_TRIM_THRESHOLD_": "0"}, False),  # the user's
        ({"MALLOC_TRIM_THRESHOLD_": "65536", "MALLOC_ARENA_MAX_": "2"}, False),
    ],
)
def test_a_worker_with_dasks_allocator_settings_gets_the_local_runs(monkeypatch, environment, sets):
    for name in [name for name in os.environ if name.startswith("MALLOC_")]:
        monkeypatch.delenv(name)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    calls = []
    monkeypatch.setattr(allocator, "_set_allocator", lambda: calls.append("kept"))
    monkeypatch.setattr(allocator, "_worker_keeps", False)
    monkeypatch.setattr(kept_on_workers, "_tuning", set())  # no run of another test counts on the tuning
    given_back = []

    class Library:
        def mallopt(self, parameter, value):
            given_back.append((parameter, value))

        def malloc_trim(self, pad):
            given_back.append(("trim", pad))

    monkeypatch.setattr(allocator.ctypes, "CDLL", lambda name: Library())
    allocator.keep_freed_memory_in_worker()
    allocator.keep_freed_memory_in_worker()  # once a run
    assert calls == (["kept"] if sets else [])
    kept_on_workers.forget("a run that kept nothing here")  # its end gives the memory back
    trim = int(environment.get("MALLOC_TRIM_THRESHOLD_", 128 * 1024))
    assert given_back == ([(-3, 128 * 1024), (-1, trim), ("trim", 0)] if sets else [])
    allocator.keep_freed_memory_in_worker()  # the next run keeps again
    assert calls == (["kept", "kept"] if sets else [])


def test_what_a_task_leaves_after_its_run_is_forgotten_is_closed_at_once():
    """A run that failed or was stopped is forgotten while tasks of it may still run: what they leave is deleted."""
    plan = file_plan(str(GRAIN), GRAIN.name)
    engine = DaskEngine(object(), None, CHUNK_ROWS)
    kept_on_workers.forget(engine.run)
    fitted_on_tasks(plan, lambda position: plan.partitions[0], engine)
    assert kept_on_workers.take(engine.run, 0) is None


def test_a_run_whose_first_pass_failed_still_has_the_workers_forget_it():
    class Client:
        status = "running"

        def __init__(self):
            self.ran = []

        def run(self, function, *arguments, **options):
            self.ran.append((function, arguments, options))

    client = Client()
    engine = DaskEngine(client, None, CHUNK_ROWS)
    engine.forget_kept()  # no pass sent a task that keeps: nothing to ask
    assert client.ran == []
    engine.keeping = True  # a pass sent them, and failed before any came back (nothing placed)
    engine.forget_kept()
    assert client.ran == [(kept_on_workers.forget, (engine.run,), {"on_error": "ignore"})]
    engine.keeping, client.status = True, "connecting"  # its scheduler went away: no call to wait 30 s on
    engine.forget_kept()
    assert len(client.ran) == 1


def test_one_runs_end_keeps_the_allocator_tuned_for_another_still_running(monkeypatch):
    given_back = []
    monkeypatch.setattr(kept_on_workers, "_tuning", set())  # no run of another test counts on the tuning
    monkeypatch.setattr(kept_on_workers, "keep_freed_memory_in_worker", lambda: None)
    monkeypatch.setattr(kept_on_workers, "give_back_freed_memory", lambda: given_back.append(True))
    kept_on_workers.start("run A")
    kept_on_workers.start("run B")
    kept_on_workers.forget("run A")
    assert given_back == []  # run B's tasks still count on it
    kept_on_workers.start("run A")  # a late task of a forgotten run tunes nothing for it
    kept_on_workers.forget("run B")
    assert given_back == [True]
