"""The local cluster ``--engine dask`` starts without ``--scheduler`` (issue 20): its scheduler and
workers are forked, once the client has read the input's header, from a process that imported the
tasks' modules; the recipes then name the schema the workers know; the client copies each part into
the output as soon as it and the parts before it are written."""

from __future__ import annotations

import contextlib
import errno
import gzip
import io
import os
import stat
import subprocess
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from chain_helpers import FILTERKIT, REAL, STAGES_DIR, local_cluster_facts
from filterkit import distributed as engine_module
from filterkit.distributed import DaskEngine
from filterkit.errors import FilterkitError
from filterkit.plugins import load_plugins
from filterkit.runner import Chain
from filterkit.schema import Schema

IRIS = REAL / "iris.arff"
OH0 = REAL / "oh0.wc.arff"


class Done:
    """A finished task, as ``as_completed`` hands it out."""

    status = "finished"

    def __init__(self, key: str):
        self.key = key

    def exception(self):
        return None

    def result(self):
        return self.key


class Failed(Done):
    """A task that failed with ``error``."""

    status = "error"

    def __init__(self, key: str, error: BaseException):
        super().__init__(key)
        self.error = error

    def exception(self):
        return self.error

    def result(self):
        raise self.error


def completing(order: list[int], events: list[str] | None = None):
    """A stand-in for ``dask.distributed`` whose ``as_completed`` hands the futures out in ``order``."""

    class CompletingOutOfOrder:
        class KilledWorker(Exception):
            pass

        @staticmethod
        def as_completed(given):
            for number in order:
                if events is not None:
                    events.append(f"done {number}")
                yield given[number]

    return CompletingOutOfOrder


def test_parts_are_handed_out_in_order_as_soon_as_the_earlier_ones_are_written(monkeypatch):
    futures = [Done(f"write-{number}") for number in range(4)]
    events: list[str] = []
    monkeypatch.setattr(engine_module, "import_distributed", lambda: completing([2, 0, 1, 3], events))
    engine = DaskEngine(object(), None, 1000)
    for future in engine._ended_in_order(futures, SimpleNamespace(advance=lambda: events.append("advance"))):
        events.append(f"copy {future.key}")
    assert [event for event in events if event != "advance"] == [
        "done 2", "done 0", "copy write-0", "done 1", "copy write-1", "copy write-2", "done 3", "copy write-3"
    ]  # fmt: skip
    assert events.count("advance") == 4


def test_a_pass_raises_the_first_error_in_partition_order_not_the_first_in_time(monkeypatch):
    """The second partition fails first; the first, failing later, holds the earlier bad row: a
    local run reports that one, and so must the cluster, whatever the timing."""
    futures = [
        Done("fit-0"),
        Failed("fit-1", FilterkitError("bad row", "in.arff", 40)),
        Failed("fit-2", FilterkitError("bad row", "in.arff", 90)),
    ]
    monkeypatch.setattr(engine_module, "import_distributed", lambda: completing([2, 0, 1]))
    with pytest.raises(FilterkitError) as raised:
        DaskEngine(object(), None, 1000)._report("fitting", futures)
    assert str(raised.value) == "in.arff:40: bad row"


def test_results_are_raised_in_order_too():
    futures = [Done("a"), Failed("b", FilterkitError("first", "b.arff")), Failed("c", FilterkitError("second"))]
    assert engine_module._results(futures[:1]) == ["a"]
    with pytest.raises(FilterkitError, match="first"):
        engine_module._results(futures)


def test_a_task_cancelled_because_the_scheduler_went_away_is_one_error():
    class Cancelled(Done):
        status = "cancelled"

    with pytest.raises(FilterkitError, match="^the Dask scheduler went away during the run; its tasks were cancelled$"):
        engine_module._raise_task_error(None, Cancelled("write-1"))


HEAD = b"@relation r\n@attribute a numeric\n@data\n"


@pytest.mark.parametrize("written", [HEAD + b"1\n2\n", HEAD[:5], None], ids=["rows", "header-cut", "no-part"])
def test_a_failed_later_part_gives_the_rows_it_wrote_then_its_error(tmp_path, monkeypatch, written):
    """As the first partition's rows before its error are out (and a local run's), so are a later one's."""
    pytest.importorskip("dask.distributed", reason="Dask is not installed (pip install 'filterkit[dask]')")
    path = tmp_path / "00001-part.arff"
    if written is not None:
        path.write_bytes(written)
    stream = io.BytesIO(b"earlier parts\n")
    stream.seek(0, io.SEEK_END)
    with pytest.raises(FilterkitError, match="bad row"):
        engine_module._copy_part(str(path), Failed("write-1", FilterkitError("bad row")), HEAD, stream, False)
    copied = b"1\n2\n" if written == HEAD + b"1\n2\n" else b""
    assert stream.getvalue() == b"earlier parts\n" + copied
    assert not path.exists() or written == HEAD[:5]


def test_a_finished_part_is_copied_and_removed(tmp_path):
    path = tmp_path / "00000-part.arff"
    path.write_bytes(HEAD + b"1\n")
    stream = io.BytesIO()
    engine_module._copy_part(str(path), Done("write-0"), HEAD, stream, True)
    assert stream.getvalue() == HEAD + b"1\n" and not path.exists()


@pytest.fixture
def part(tmp_path):
    """A part file of 3 MiB (more than one copy block) whose first 7 bytes are skipped, as a header is."""
    path = tmp_path / "part"
    path.write_bytes(b"HEADER\n" + bytes(range(256)) * (3 << 12))
    return path


@pytest.mark.parametrize("mode", ["wb", "ab"], ids=["file", "file-opened-to-append"])
def test_a_part_is_copied_whole_after_what_the_stream_holds(part, tmp_path, mode):
    target = tmp_path / "out"
    target.write_bytes(b"kept")
    with open(part, "rb") as source, open(target, mode) as stream:
        source.read(7)
        stream.write(b"header\n")  # still in the stream's buffer: must come first
        engine_module._copy_rest(source, stream)
        stream.write(b"after\n")
    before = b"kept" if mode == "ab" else b""
    assert target.read_bytes() == before + b"header\n" + part.read_bytes()[7:] + b"after\n"


def test_a_part_is_copied_into_a_compressed_stream_compressed(part, tmp_path):
    target = io.BytesIO()
    with open(part, "rb") as source, gzip.GzipFile(fileobj=target, mode="wb", mtime=0) as stream:
        source.read(7)
        engine_module._copy_rest(source, stream)
    assert gzip.decompress(target.getvalue()) == part.read_bytes()[7:]


def test_a_part_is_copied_into_a_pipe(part):
    read_end, write_end = os.pipe()
    received: list[bytes] = []
    with open(read_end, "rb") as pipe_out:
        reader = threading.Thread(target=lambda: received.append(pipe_out.read()))
        reader.start()
        with open(part, "rb") as source, open(write_end, "wb") as stream:
            source.read(7)
            stream.write(b"header\n")
            engine_module._copy_rest(source, stream)
        reader.join()
    assert received == [b"header\n" + part.read_bytes()[7:]]


class WritingTask:
    """The first partition's task as the client sees it, run in a thread: it opens the named pipe as a
    worker does, writes ``blocks`` (waiting for ``gate`` before the last one), then raises ``error`` if
    given; ``broken`` is the OSError its writing met (the client stopped reading)."""

    def __init__(self, path, blocks: list[bytes], error: Exception | None = None, gate=None, opens: bool = True):
        self.error, self.ended, self.broken = error, threading.Event(), None
        self.thread = threading.Thread(target=self._run, args=(path, blocks, gate, opens))
        self.thread.start()

    def _run(self, path, blocks, gate, opens):
        try:
            if opens:
                with engine_module._opened_part(str(path)) as pipe:
                    for number, block in enumerate(blocks):
                        if gate is not None and number == len(blocks) - 1:
                            assert gate.wait(10), "the rows written so far were not copied"
                        pipe.write(block)
                        pipe.flush()
        except OSError as error:
            self.broken = error
        finally:
            self.ended.set()

    def done(self) -> bool:
        return self.ended.is_set()

    def exception(self):
        self.ended.wait()
        return self.error

    def result(self):
        self.ended.wait()
        if self.error is not None:
            raise self.error

    @property
    def status(self) -> str:
        return "pending" if not self.done() else "error" if self.error is not None else "finished"


HEADER = b"@relation r\n@attribute a numeric\n@data\n"
ROWS = [b"%d\n" % n * 1000 for n in range(300)]  # 1.1 MB: more than the pipe holds


def first_part_pipe(folder):
    """A named pipe for the first partition in ``folder``, opened for reading as the client opens it."""
    pytest.importorskip("dask.distributed", reason="Dask is not installed (pip install 'filterkit[dask]')")
    path = folder / "00000-part.arff"
    reading = engine_module._first_part_pipe(str(path))
    if reading is None:
        pytest.skip("this system has no splice (Linux) or no named pipes")
    return path, reading


@pytest.fixture
def first_part(tmp_path):
    """:func:`first_part_pipe`, closed after the test."""
    path, reading = first_part_pipe(tmp_path)
    yield path, reading
    os.close(reading)


@pytest.mark.parametrize("mode", ["wb", "ab"], ids=["file", "file-opened-to-append"])
def test_the_first_part_comes_through_its_pipe_header_first(first_part, tmp_path, mode):
    path, reading = first_part
    target = tmp_path / "out"
    target.write_bytes(b"kept")
    task = WritingTask(path, [HEADER, *ROWS])
    with open(target, mode) as stream:
        engine_module._stream_part(reading, str(path), task, HEADER, stream)
        stream.write(b"next part\n")
    before = b"kept" if mode == "ab" else b""
    assert target.read_bytes() == before + HEADER + b"".join(ROWS) + b"next part\n"


def test_the_first_part_s_rows_are_copied_as_they_come(first_part):
    """The rows are in the output while the task still writes: it waits for them there before its last block."""
    path, reading = first_part
    read_end, write_end = os.pipe()
    copied, gate = bytearray(), threading.Event()
    expected = HEADER + b"".join(ROWS[:-1])

    def read_output():
        with open(read_end, "rb", buffering=0) as output:
            while block := output.read(1 << 16):
                copied.extend(block)
                if len(copied) >= len(expected):
                    gate.set()

    reader = threading.Thread(target=read_output)
    reader.start()
    task = WritingTask(path, [HEADER, *ROWS], gate=gate)
    with open(write_end, "wb") as stream:
        engine_module._stream_part(reading, str(path), task, HEADER, stream)
    reader.join()
    assert gate.is_set() and bytes(copied) == HEADER + b"".join(ROWS)


def test_the_first_part_copied_into_a_buffer(first_part):
    path, reading = first_part
    stream = io.BytesIO()
    engine_module._stream_part(reading, str(path), WritingTask(path, [HEADER, *ROWS[:3]]), HEADER, stream)
    assert stream.getvalue() == HEADER + b"".join(ROWS[:3])


def test_a_first_task_failing_before_it_writes_raises_its_error_and_writes_nothing(first_part):
    path, reading = first_part
    task = WritingTask(path, [], error=FilterkitError("bad row", "in.arff", 151), opens=False)
    stream = io.BytesIO()
    with pytest.raises(FilterkitError, match="bad row"):
        engine_module._stream_part(reading, str(path), task, HEADER, stream)
    assert stream.getvalue() == b""


def test_a_first_task_failing_part_way_leaves_the_rows_it_wrote_and_raises_its_error(first_part):
    path, reading = first_part
    task = WritingTask(path, [HEADER, *ROWS[:5]], error=FilterkitError("bad row", "in.arff", 900))
    stream = io.BytesIO()
    with pytest.raises(FilterkitError, match="bad row"):
        engine_module._stream_part(reading, str(path), task, HEADER, stream)
    assert stream.getvalue() == HEADER + b"".join(ROWS[:5])


def test_a_first_part_with_another_header_is_refused_naming_it_while_its_task_still_writes(tmp_path):
    """Refused at once: its task, blocked on the full pipe, ends with a broken pipe once the client closes it."""
    path, reading = first_part_pipe(tmp_path)
    task = WritingTask(path, [HEADER.replace(b"numeric", b"real"), *ROWS, *ROWS])  # 2.2 MB: more than the pipe holds
    stream, refused = io.BytesIO(), []

    def stream_part():
        try:
            engine_module._stream_part(reading, str(path), task, HEADER, stream)
        except FilterkitError as error:
            refused.append(error)
        finally:
            os.close(reading)

    client = threading.Thread(target=stream_part, daemon=True)
    client.start()
    client.join(10)
    assert not client.is_alive(), "the client waited for a task blocked on the pipe it does not read"
    assert [(str(error.message), error.path) for error in refused] == [
        ("a partition's output has another header than the first's", str(path))
    ]
    assert stream.getvalue() == b""
    task.thread.join(10)
    assert isinstance(task.broken, BrokenPipeError)


def test_no_pipe_where_the_folder_cannot_hold_one(tmp_path):
    assert engine_module._first_part_pipe(str(tmp_path / "missing" / "00000-part.arff")) is None


def test_no_pipe_where_one_is_made_but_cannot_be_opened_and_none_is_left(tmp_path, monkeypatch):
    path = tmp_path / "00000-part.arff"
    opening = os.open

    def refusing_the_pipe(name, flags, *mode):
        if str(name) == str(path):
            raise OSError(errno.EOPNOTSUPP, "not here")
        return opening(name, flags, *mode)

    monkeypatch.setattr(engine_module.os, "open", refusing_the_pipe)
    assert engine_module._first_part_pipe(str(path)) is None
    assert not path.exists()


def test_a_task_writing_into_a_pipe_the_client_stopped_reading_fails_at_once(tmp_path):
    path = tmp_path / "00000-part.arff"
    os.mkfifo(path)
    with pytest.raises(OSError) as refused:
        engine_module._opened_part(str(path))
    assert refused.value.errno == errno.ENXIO


def test_a_part_file_is_made_or_emptied(tmp_path):
    path = tmp_path / "00001-part.arff"
    path.write_bytes(b"an older part")
    with engine_module._opened_part(str(path)) as part:
        part.write(b"rows\n")
    assert path.read_bytes() == b"rows\n" and stat.S_ISREG(path.stat().st_mode)


@pytest.mark.parametrize("local_threads", [2, None], ids=["local-cluster", "scheduler-cluster"])
def test_a_local_cluster_streams_the_first_part_and_copies_the_others(tmp_path, local_threads):
    """The first partition comes through a named pipe only on a local cluster (the workers of a
    scheduler may be on other machines); the others are part files, copied in order and removed."""
    pytest.importorskip("dask.distributed", reason="Dask is not installed (pip install 'filterkit[dask]')")
    schema, partitions = engine_module._split_file(str(IRIS), 3)
    chain = SimpleNamespace(output_schema=schema)
    header = engine_module.format_header(schema, ["made here"]).encode()
    written: list[tuple[str, bool]] = []

    def submit_parts(chain, plan, paths, sparse, comments, numbers):
        tasks = []
        for number, path in enumerate(paths):
            piped = stat.S_ISFIFO(os.stat(path).st_mode) if os.path.exists(path) else False
            written.append((os.path.basename(path), piped))
            rows = [header, b"row %d\n" % number]
            if piped:
                tasks.append(WritingTask(path, rows))
            else:
                Path(path).write_bytes(b"".join(rows))
                tasks.append(Done(f"write-{number}"))
        return tasks

    engine = DaskEngine(Refusing(), None, 1000, local_threads=local_threads)
    engine._submit_parts = submit_parts
    engine._ended_in_order = lambda futures, meter: iter(futures)
    stream = io.BytesIO()
    engine.write_concatenated(chain, SimpleNamespace(partitions=partitions), stream, None, ["made here"], str(tmp_path))
    assert stream.getvalue() == header + b"row 0\nrow 1\nrow 2\n"
    names = [f"{n:05d}-{p.output_name}" for n, p in enumerate(partitions)]
    assert written == [(names[0], local_threads is not None), (names[1], False), (names[2], False)]
    assert os.listdir(tmp_path) == []


def test_a_local_cluster_plans_without_waiting_for_its_workers(tmp_path):
    """With a local cluster the partition count is known before the workers are up, so the client
    cuts the input while they start."""

    class NotStarted:
        def __getattr__(self, name):
            raise AssertionError(f"the plan asked the cluster for {name}")

    engine = DaskEngine(NotStarted(), None, 1000, local_threads=2)
    plan = engine.plan(str(IRIS))
    assert len(plan.partitions) == 2 and plan.sparse_rows is False  # one per worker thread
    assert [p.start for p in plan.partitions[1:]] == [p.end for p in plan.partitions[:-1]]


class Refusing:
    """A client that fails the test if asked anything."""

    def __getattr__(self, name):
        raise AssertionError(f"the client was asked for {name}")


def test_a_local_cluster_starts_once_the_header_is_read_and_its_recipes_name_the_schema(monkeypatch):
    """The console script's cluster is forked once the plan has read the header: the workers know the
    schema, so a recipe names it and goes with each task instead of being scattered to every worker."""
    started: list[dict] = []

    def start(engine, schemas):
        started.append(dict(schemas))
        engine._client = Refusing()
        return True  # forked: the workers know ``schemas``

    monkeypatch.setattr(DaskEngine, "_start_local_cluster", start)
    engine = DaskEngine(None, None, 1000, local_threads=2)
    engine._local_cluster = contextlib.ExitStack()
    plan = engine.plan(str(IRIS))
    assert [list(schemas) for schemas in started] == [[plan.schema_key]]
    assert started[0][plan.schema_key] is plan.schema and len(plan.partitions) == 2
    chain = Chain([load_plugins().make_stage("l2", {})])
    chain.fit_with(plan.schema, lambda position, stage: None)
    recipe = engine.recipe(chain, plan)
    assert recipe.schema == engine_module.InheritedSchema(plan.schema_key)
    monkeypatch.setitem(engine_module._INHERITED_SCHEMAS, plan.schema_key, plan.schema)
    assert recipe.input_schema() is plan.schema
    assert engine._shared(recipe, 2) is recipe  # no scatter: the client refuses to be asked


class Scattering:
    """A client that records what it scatters, and how."""

    def __init__(self):
        self.scattered: list[tuple] = []

    def scatter(self, data, **options):
        self.scattered.append((data, options))
        return "the future of the recipe"


def test_a_recipe_for_more_partitions_than_worker_threads_is_scattered_once():
    """Each task would carry its own copy of the fitted states (1.3 MB for grain's shape bns l2)."""
    engine = DaskEngine(Scattering(), None, 1000, local_threads=2)
    recipe = SimpleNamespace(schema=engine_module.InheritedSchema("key"))
    assert engine._shared(recipe, 2) is recipe
    assert engine._shared(recipe, 3) == "the future of the recipe"
    assert engine.client.scattered == [(recipe, {"hash": False, "broadcast": True})]


def test_a_recipe_carrying_its_schema_is_scattered_once():
    engine = DaskEngine(Scattering(), None, 1000, local_threads=2)
    recipe = SimpleNamespace(schema=Schema("r", ()))
    assert engine._shared(recipe, 1) == "the future of the recipe"
    assert engine.client.scattered == [(recipe, {"hash": False, "broadcast": True})]


def test_a_recipe_whose_schema_a_worker_was_not_forked_with_is_an_error():
    with pytest.raises(FilterkitError, match="a Dask worker was sent a schema it was not forked knowing"):
        engine_module.InheritedSchema("no-such-key").resolve()


def test_a_cluster_not_forked_gets_the_schema_in_each_recipe(monkeypatch):
    """Where the workers were spawned by Dask's nannies (a library call) they know no schema."""

    def start(engine, schemas):
        engine._client = Refusing()
        return False

    monkeypatch.setattr(DaskEngine, "_start_local_cluster", start)
    engine = DaskEngine(None, None, 1000, local_threads=2)
    engine._local_cluster = contextlib.ExitStack()
    assert engine.plan(str(IRIS)).schema_key is None


def test_a_scheduler_s_cluster_gets_two_partitions_per_worker_thread():
    """Workers of unequal speed balance the load over more partitions; a local cluster's are alike."""

    class Client:
        def nthreads(self):
            return {"tcp://a:1": 2, "tcp://b:1": 1}

    assert DaskEngine(Client(), None, 1000).default_partitions() == 6
    assert DaskEngine(Client(), None, 1000, local_threads=2).default_partitions() == 2


@pytest.mark.slow
def test_workers_are_forked_from_a_process_that_imported_the_tasks_modules():
    facts = local_cluster_facts()  # a fresh interpreter, claimed as the console script claims its own
    assert len(set(facts["parents"])) == 1 and facts["client"] not in facts["parents"]
    assert facts["imported"] == [True, True]


def console_script(*argv) -> subprocess.CompletedProcess:
    if FILTERKIT is None:
        pytest.skip("the filterkit console script is not installed (pip install -e .)")
    pytest.importorskip("dask.distributed", reason="Dask is not installed (pip install 'filterkit[dask]')")
    return subprocess.run([FILTERKIT, *map(str, argv)], capture_output=True, timeout=120)


@pytest.mark.slow
def test_a_local_cluster_streams_the_local_run_s_bytes_into_a_pipe():
    local = console_script("-c", "first", OH0, "minmax", "l2")
    dask = console_script("--engine", "dask", "--partitions", "5", "-c", "first", OH0, "minmax", "l2")
    assert (dask.returncode, dask.stderr) == (0, b"")
    assert local.returncode == 0 and dask.stdout == local.stdout


@pytest.mark.slow
def test_a_worker_error_on_a_local_cluster_is_one_line_and_no_output(tmp_path):
    out = tmp_path / "out.arff"
    argv = ["--plugins-dir", STAGES_DIR, "-o", out, IRIS, "explode", "--during", "transform"]
    result = console_script("--engine", "dask", *argv)
    assert result.returncode == 1
    assert result.stderr.decode().count("\n") == 1
    assert result.stderr.startswith(b"filterkit: error: ") and b"failed during transform" in result.stderr
    assert os.listdir(tmp_path) == []


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_a_full_disk_while_a_task_writes_its_part_names_the_folder():
    """The parts of a run to standard output go to the temporary folder, which a local run never
    needs: the error says where the room was missing and why it was needed."""
    schema, partitions = engine_module._split_file(str(IRIS), 2)
    chain = Chain([load_plugins().make_stage("l2", {})])
    chain.fit_with(schema, lambda position, stage: None)
    plan = engine_module.Plan(tuple(partitions), schema, False)
    recipe = DaskEngine(object(), None, 1000).recipe(chain, plan)
    with pytest.raises(FilterkitError) as raised:
        engine_module._write_partition(recipe, partitions[1], "/dev/full", None, [])
    assert str(raised.value) == (
        "/dev: No space left on device writing the partitions' outputs: --engine dask needs room for the whole "
        "output in this folder (the system's temporary folder, TMPDIR, when the output is standard output)"
    )


class Cancelling:
    """A client that records what it is asked to cancel."""

    def __init__(self):
        self.cancelled: list = []

    def cancel(self, futures):
        self.cancelled.append(futures)


def test_a_failure_cancels_a_scheduler_s_tasks_but_leaves_a_local_cluster_to_its_stop():
    """A local cluster's workers end with the run; its scheduler may be gone (its helper killed),
    and Dask's cancelling then waited 30 s, or raised past the run's one error line."""
    for local_threads, asked in [(None, [["task"]]), (2, [])]:
        client = Cancelling()
        engine = DaskEngine(Refusing() if local_threads else client, None, 1000, local_threads=local_threads)
        with pytest.raises(FilterkitError, match="bad row"):
            with engine._cancelled_on_failure(["task"]):
                raise FilterkitError("bad row")
        assert client.cancelled == asked
