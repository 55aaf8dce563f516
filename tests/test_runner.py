"""The runner: fitting stage by stage, file and stdin sources, the stdin spool, streaming."""

from __future__ import annotations

import io
import itertools
import json
import os
import signal
import subprocess
import tempfile

import numpy as np
import pytest

from chain_helpers import (
    FILTERKIT,
    OH0_SAMPLE,
    REAL,
    STAGES_DIR,
    assert_same_values,
    read_bytes,
    wait_for_temporary,
)
from filterkit.arff import read_arff
from filterkit.arff.header import HeaderParser
from filterkit.background import read_ahead, write_behind
from filterkit.errors import FilterkitError
from filterkit.plugins import load_plugins
from filterkit.runner import Chain
from filterkit.schema import Chunk, concatenate
from filterkit.sources import FileSource, StreamSource

# A string attribute, a missing string and instance weights: all must survive the spool.
WEIGHTED = b"""@relation w
@attribute s string
@attribute x numeric
@attribute c {a,b}
@data
'hello world',1,a,{2}
?,2,b
'x',-3,a,{0.5}
"""


@pytest.fixture(scope="module")
def registry():
    """The installed plugins plus the fixture stages (meanscale, explode)."""
    return load_plugins(STAGES_DIR)


@pytest.fixture
def spools(monkeypatch, tmp_path):
    """Temporary files go to a private folder; returns the list of spool files created."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    created = []
    real_mkstemp = tempfile.mkstemp

    def recording_mkstemp(*args, **kwargs):
        handle, path = real_mkstemp(*args, **kwargs)
        if os.path.basename(path).startswith("filterkit-spool-"):
            created.append(path)
        return handle, path

    monkeypatch.setattr(tempfile, "mkstemp", recording_mkstemp)
    return created


def leftover_spools() -> list[str]:
    return [name for name in os.listdir(tempfile.gettempdir()) if name.startswith("filterkit-spool-")]


@pytest.mark.slow
@pytest.mark.parametrize(
    "source, chunk_rows",
    [("iris.arff", None), ("iris.arff", "7"), ("oh0.wc.arff", None), ("weighted", None), ("weighted", "1")],
)
def test_stdin_with_a_fitted_stage_gives_the_file_output_and_removes_its_spool(
    run_filterkit, spools, tmp_path, source, chunk_rows
):
    if source == "weighted":
        path = tmp_path / "weighted.arff"
        path.write_bytes(WEIGHTED)
    else:
        path = REAL / source
    options = [] if chunk_rows is None else ["--chunk-rows", chunk_rows]
    from_file = run_filterkit(*options, path, "meanscale", "l2", plugins_dir=STAGES_DIR)
    from_stdin = run_filterkit(*options, "-", "meanscale", "l2", stdin=path.read_bytes(), plugins_dir=STAGES_DIR)
    assert from_file.status == 0 and from_stdin.status == 0, from_file.stderr + from_stdin.stderr
    assert from_stdin.stdout == from_file.stdout
    assert len(spools) == 1, "stdin is spooled once for a chain with a fitted stage"
    assert leftover_spools() == []


def test_weighted_string_rows_survive_the_spool(run_filterkit, spools):
    result = run_filterkit("-", "meanscale", stdin=WEIGHTED, plugins_dir=STAGES_DIR)
    _, chunk = read_bytes(result.stdout)
    assert chunk.text[0] == ["hello world", None, "x"]
    np.testing.assert_array_equal(chunk.weights, [2.0, 1.0, 0.5])
    np.testing.assert_array_equal(chunk.values[:, 1], [0.5, 1.0, -1.5])


def test_stateless_chain_on_stdin_needs_no_spool(run_filterkit, spools):
    result = run_filterkit("-", "l2", "l1", stdin=(REAL / "iris.arff").read_bytes())
    assert result.status == 0
    assert spools == []


@pytest.mark.parametrize(
    "bad_row, stages, message",
    [
        (True, ["meanscale"], "<stdin>:226:"),
        (False, ["explode", "--during", "fit"], "failed during fit"),
        (False, ["meanscale", "explode"], "failed during transform"),
    ],
    ids=["bad-row-while-spooling", "stage-fails-fitting", "stage-fails-transforming"],
)
def test_spool_is_removed_when_the_run_fails(run_filterkit, spools, bad_row, stages, message):
    data = (REAL / "iris.arff").read_bytes() + (b"5.0,3.3,1.4,x,Iris-setosa\n" if bad_row else b"")
    result = run_filterkit("-", *stages, stdin=data, plugins_dir=STAGES_DIR)
    assert result.status == 1
    assert message in result.stderr
    assert len(spools) == 1
    assert leftover_spools() == []


@pytest.mark.parametrize("fails", [False, True], ids=["success", "failure"])
def test_console_script_leaves_no_spool_in_the_temporary_folder(filterkit_script, tmp_path, fails):
    data = (REAL / "iris.arff").read_bytes() + (b"5.0,3.3,1.4,x,Iris-setosa\n" if fails else b"")
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    result = filterkit_script(
        "--plugins-dir", STAGES_DIR, "-", "meanscale", "l2", stdin=data, env={"TMPDIR": str(temporary)}
    )
    assert result.status == (1 if fails else 0)
    assert "Traceback" not in result.stderr
    assert os.listdir(temporary) == []


def test_spool_is_binary_arrays_and_rereadable():
    # 60 sparse rows of oh0 in chunks of 25: the spool's format does not depend on the size
    source = StreamSource(io.BytesIO(OH0_SAMPLE.read_bytes()), chunk_rows=25)
    try:
        source.spool()
        spool = source._spool
        spool.seek(0)
        header = json.loads(spool.read(int.from_bytes(spool.read(8), "little")))
        # the first chunk's form, then its arrays' bytes: not ARFF text
        assert (header["shape"], header["sparse"]) == ([25, 240], True)
        assert [dtype for dtype, _ in header["arrays"]] == ["<f8", "<i8", "<i8"]
        assert os.readlink(f"/proc/self/fd/{spool.fileno()}").endswith(" (deleted)"), "unlinked while open"
        first = list(source.chunks())
        second = list(source.chunks())
    finally:
        source.close()
    assert spool.closed
    assert [c.n_rows for c in first] == [25, 25, 10] and first[0].is_sparse
    _, whole = read_arff(OH0_SAMPLE)
    for chunks in (first, second):
        assert_same_values(concatenate(chunks, whole.values.shape[1]), whole)


def test_each_stage_is_fitted_on_the_output_of_the_stages_before_it(registry):
    first, second = registry.make_stage("meanscale", {}), registry.make_stage("meanscale", {})
    Chain([first, second]).fit(FileSource(str(REAL / "iris.arff")))
    _, chunk = read_arff(REAL / "iris.arff")
    np.testing.assert_allclose(first.scale, np.abs(chunk.values[:, :4]).mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(second.scale, 1.0, rtol=1e-12)


def test_a_file_is_read_once_per_fitted_stage_and_once_to_write(registry, monkeypatch):
    passes = []
    original = FileSource.chunks

    def counted(self):
        passes.append(self.path)
        return original(self)

    monkeypatch.setattr(FileSource, "chunks", counted)
    source = FileSource(str(REAL / "iris.arff"))
    stages = [registry.make_stage(n, {}) for n in ("meanscale", "l2", "meanscale", "l1")]
    chain = Chain(stages).fit(source)
    assert len(passes) == 2
    list(chain.transform(source.chunks()))
    assert len(passes) == 3


def test_a_file_header_is_parsed_once_and_checked_on_every_pass(monkeypatch, tmp_path):
    path = tmp_path / "data.arff"
    path.write_text("@relation r\n@attribute x numeric\n@attribute c {a,b}\n@data 1,a\n2,b\n")
    parsed = []
    real_feed, real_feed_plain_run = HeaderParser.feed, HeaderParser.feed_plain_run
    monkeypatch.setattr(HeaderParser, "feed", lambda self, line: parsed.append(line) or real_feed(self, line))
    monkeypatch.setattr(  # a run of plain numeric declarations is taken at once
        HeaderParser,
        "feed_plain_run",
        lambda self, text, size: parsed.extend(text.splitlines()) or real_feed_plain_run(self, text, size),
    )
    source = FileSource(str(path))
    header_lines = len(parsed)
    passes = [concatenate(list(source.chunks()), 2).dense_values().tolist() for _ in range(2)]
    assert len(parsed) == header_lines == 4
    assert passes == [[[1.0, 0.0], [2.0, 1.0]]] * 2  # the row on the @data line is read on every pass
    path.write_text("@relation r\n@attribute y numeric\n@attribute c {a,b}\n@data 1,a\n2,b\n")
    with pytest.raises(
        FilterkitError, match=r"data.arff:4: the header \(lines 1-4\) changed since the file was first read"
    ):
        list(source.chunks())


def test_python_api_chain_equals_the_command_line(registry, run_filterkit):
    stages = [registry.make_stage("meanscale", {}), registry.make_stage("l2", {})]
    source = FileSource(str(REAL / "credit-g.arff"), chunk_rows=64)
    chain = Chain(stages, class_spec="last").fit(source)
    out = concatenate(list(chain.transform(source.chunks())), len(chain.output_schema))
    result = run_filterkit(REAL / "credit-g.arff", "meanscale", "l2", plugins_dir=STAGES_DIR)
    schema, expected = read_bytes(result.stdout)
    assert chain.output_schema.attributes == schema.attributes
    assert_same_values(out, expected)


def test_stateless_chain_streams_chunk_by_chunk(registry):
    """An endless source still yields output: nothing waits for the end of the input."""
    schema, chunk = read_arff(REAL / "iris.arff")

    class Endless:
        def __init__(self):
            self.schema = schema

        def chunks(self):
            return itertools.repeat(Chunk(chunk.values[:5]))

    source = Endless()
    chain = Chain([registry.make_stage("l2", {}), registry.make_stage("l1", {})]).fit(source)
    first_three = list(itertools.islice(chain.transform(source.chunks()), 3))
    assert [c.n_rows for c in first_three] == [5, 5, 5]
    np.testing.assert_allclose(np.abs(first_three[0].values[:, :4]).sum(axis=1), 1.0, rtol=1e-12)


def test_unknown_stage_name_lists_the_installed_ones(registry):
    with pytest.raises(FilterkitError, match=r"no stage called 'nope' \(installed: .*l2.*meanscale"):
        registry.make_stage("nope", {})


@pytest.mark.slow
@pytest.mark.skipif(FILTERKIT is None, reason="the filterkit console script is not installed")
@pytest.mark.parametrize(
    "stages, pattern",
    [(["meanscale"], "tmp/filterkit-spool-*"), (["l2"], "out/.out.arff.*")],
    ids=["spool", "output"],
)
@pytest.mark.parametrize("sent", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_sigterm_removes_the_spool_and_the_partial_output(tmp_path, stages, pattern, sent):
    """Killed (or its terminal hung up) while stdin is still open: the spool (or the -o temporary)
    exists, then is removed.

    grain_wc.arff is larger than the reader's 1 MiB block, so rows are read and
    spooled (or written) while the reader waits for the rest of its second block.
    The child starts with the signal at its default: under ``nohup`` the suite's own SIGHUP is
    ignored, which the child would inherit and filterkit leave ignored, as ``nohup`` asks.
    """
    for folder in ("tmp", "out"):
        (tmp_path / folder).mkdir()
    process = subprocess.Popen(
        [FILTERKIT, "--plugins-dir", str(STAGES_DIR), "-o", "out/out.arff", "-", *stages],
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        env={**os.environ, "TMPDIR": str(tmp_path / "tmp")},
        preexec_fn=lambda: signal.signal(sent, signal.SIG_DFL),
    )
    try:
        process.stdin.write((REAL / "grain_wc.arff").read_bytes())
        process.stdin.flush()
        wait_for_temporary(tmp_path, pattern, process, seconds=20)
        process.send_signal(sent)
        _, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130
    assert stderr.decode() == "filterkit: error: interrupted\n"
    assert sorted(tmp_path.rglob("*")) == [tmp_path / "out", tmp_path / "tmp"]


def _background_threads() -> list:
    import threading

    return [t for t in threading.enumerate() if t.name in ("filterkit-read-ahead", "filterkit-write-behind")]


def test_read_ahead_yields_in_order_and_raises_the_readers_error_when_its_chunk_is_due(tmp_path):
    path = tmp_path / "bad.arff"
    rows = "".join(f"{i},a\n" for i in range(25))
    path.write_text("@relation r\n@attribute x numeric\n@attribute c {a,b}\n@data\n" + rows + "7,z\n")
    source = FileSource(str(path), chunk_rows=10)
    seen = []
    with pytest.raises(FilterkitError, match=r"bad.arff:30: .*'z'"):
        for chunk in source.chunks():
            seen.append(chunk.dense_values()[:, 0].tolist())
    assert seen == [list(map(float, range(0, 10))), list(map(float, range(10, 20)))]
    assert not _background_threads()


def test_read_ahead_stops_its_thread_when_the_caller_stops_early():
    source = FileSource(str(REAL / "oh0.wc.arff"), chunk_rows=50)
    chunks = source.chunks()
    first = next(chunks)
    assert first.n_rows == 50
    chunks.close()
    assert not _background_threads()


def test_read_ahead_raises_when_the_reader_cannot_even_start():
    def no_reader():
        raise OSError(2, "No such file or directory")

    with pytest.raises(OSError, match="No such file"):
        list(read_ahead(no_reader))
    assert not _background_threads()


def test_write_behind_ends_its_thread_when_interrupted():
    import threading

    writing, release = threading.Event(), threading.Event()
    written = []

    def stalled_write(number):
        writing.set()
        release.wait(60)  # released below; the bound only keeps a broken write_behind from hanging the run
        written.append(number)

    def produce():
        yield 0
        assert writing.wait(60), "the first chunk never reached the writer"
        yield 1  # waits in the queue behind the stalled write
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_behind(produce(), stalled_write)
    assert _background_threads(), "Ctrl-C returned at once, without waiting for the stalled write"
    release.set()
    for thread in _background_threads():
        thread.join(2)
    assert not _background_threads()
    assert written == [0], "no chunk is written after Ctrl-C"


def test_write_behind_writes_in_order_and_stops_at_the_first_write_error():
    written = []

    def write(number):
        if number == 3:
            raise OSError(28, "No space left on device")
        written.append(number)

    with pytest.raises(OSError, match="No space left"):
        write_behind(iter(range(10)), write)
    assert written == [0, 1, 2]
    assert not _background_threads()


def test_write_behind_lets_a_producers_error_through_after_the_writer_is_done():
    written = []

    def produce():
        yield from range(4)
        raise FilterkitError("stage 'x' failed during transform")

    with pytest.raises(FilterkitError, match="failed during transform"):
        write_behind(produce(), written.append)
    assert written == [0, 1, 2, 3]
    assert not _background_threads()


def saved_stages(chain: Chain) -> list[tuple[str, dict, dict]]:
    """What a model file, a Dask recipe or a pickled adapter keeps of each stage."""
    return [(stage.name, dict(stage.params), stage.state()) for stage in chain.stages]


@pytest.mark.slow
def test_a_rebuilt_chain_gives_the_fitted_chains_output_byte_for_byte(registry):
    stages = [registry.make_stage(name, {}) for name in ("shape", "bns", "meanscale", "l2")]
    fitted = Chain(stages, positive="Ethics").fit(FileSource(str(REAL / "oh0.wc.arff")))
    rebuilt = Chain.rebuilt(registry, saved_stages(fitted), fitted.input_schema, fitted.class_name, fitted.positive)
    assert rebuilt.output_schema == fitted.output_schema
    assert (rebuilt.class_name, rebuilt.positive) == (fitted.class_name, "Ethics")
    chunks = list(FileSource(str(REAL / "oh0.wc.arff"), chunk_rows=300).chunks())
    for mine, theirs in zip(rebuilt.transform(chunks), fitted.transform(chunks), strict=True):
        assert_same_values(mine, theirs)


def test_a_rebuilt_chain_prepares_the_stage_without_state_and_stops_there(registry):
    fitted = Chain([registry.make_stage("meanscale", {})]).fit(FileSource(str(REAL / "iris.arff")))
    stages = [*saved_stages(fitted), ("meanscale", {}, None)]
    rebuilt = Chain.rebuilt(registry, stages, fitted.input_schema, fitted.class_name, None)
    last = rebuilt.stages[-1]
    assert rebuilt.output_schema is None
    assert last.input_schema == fitted.output_schema and last.context.previous == (rebuilt.stages[0],)
    assert not hasattr(last, "scale")


@pytest.mark.parametrize(
    "stages, message",
    [
        ([("l2", {"bogus": 1}, {})], "stage 1 'l2': 'l2' has no option bogus"),
        ([("l2", {}, {}), ("meanscale", {}, {})], "stage 2 'meanscale': KeyError: 'scale'"),
    ],
    ids=["bad-option", "missing-state"],
)
def test_rebuilding_names_the_stage_that_cannot_be_made_or_loaded(registry, stages, message):
    schema, _ = read_arff(REAL / "iris.arff")
    with pytest.raises(FilterkitError) as error:
        Chain.rebuilt(registry, stages, schema, "class", None)
    assert str(error.value) == message
