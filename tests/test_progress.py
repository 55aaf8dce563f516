"""Progress on stderr (:mod:`filterkit.progress`): numbered passes with the share of the input's
bytes, rows per second and the time left; a terminal's line redrawn in place and kept at the end of
each pass; plain lines in a log with ``--progress`` or FILTERKIT_PROGRESS=1; nothing with ``-q`` or
when stderr is not a terminal and nobody asked; never a change in the output's bytes."""

from __future__ import annotations

import io
import re

import pytest

from chain_helpers import REAL
from filterkit.arff.writer import ArffWriter
from filterkit.plugins import load_plugins
from filterkit.progress import LOG, OFF, TERMINAL, Progress, data_size, duration, progress_mode
from filterkit.runner import Chain
from filterkit.sources import FileSource, StreamSource

IRIS = REAL / "iris.arff"
GRAIN = REAL / "grain_wc.arff"


class Clock:
    """A clock that moves on by ``tick`` seconds each time it is read."""

    def __init__(self, tick: float):
        self.now = 0.0
        self.tick = tick

    def __call__(self) -> float:
        self.now += self.tick
        return self.now


class Terminal(io.StringIO):
    """A text stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.fixture(scope="module")
def grain_times_four(tmp_path_factory):
    """Reuters grain with its rows four times (4.8 MB: several of the reader's 1 MiB blocks)."""
    text = GRAIN.read_bytes()
    cut = text.lower().index(b"@data")
    cut = text.index(b"\n", cut) + 1
    path = tmp_path_factory.mktemp("progress") / "grain4.arff"
    path.write_bytes(text[:cut] + text[cut:] * 4)
    return path


def run_chain(path, names, progress: Progress, chunk_rows: int = 200, class_spec: str = "first") -> bytes:
    """Fit ``names`` on the file and write its output as the chain command does, reporting to ``progress``."""
    registry = load_plugins()
    chain = Chain([registry.make_stage(name, {}) for name in names], class_spec=class_spec)
    source = FileSource(str(path), chunk_rows)
    progress.expect(chain.planned_passes() + 1, certain=len(names) < 2)
    chain.fit(source, progress)
    progress.settle()
    output = io.BytesIO()
    writer = ArffWriter(output, chain.output_schema, None, ["progress test"])
    with progress.step("writing", source) as meter:
        write = meter.counting(writer.write)
        for chunk in chain.transform(source.chunks()):
            write(chunk)
    progress.finish()
    return output.getvalue()


def percentages(lines: list[str]) -> list[int]:
    """The share of the input's bytes (``: 42% of 4.8 MB``) or of its rows (``2,600/6,216 rows (42%)``)."""
    shares = (re.search(r": (\d+)% of |/6,216 rows \((\d+)%\)", line) for line in lines)
    return [int(m.group(1) or m.group(2)) for m in shares if m]


@pytest.mark.parametrize(
    ("quiet", "requested", "terminal", "mode"),
    [
        (False, False, True, TERMINAL),
        (False, True, True, TERMINAL),
        (True, False, True, OFF),
        (True, True, True, OFF),
        (False, False, False, OFF),
        (False, True, False, LOG),
        (True, True, False, OFF),
    ],
)
def test_the_mode_follows_the_terminal_the_request_and_quiet(quiet, requested, terminal, mode):
    stream = Terminal() if terminal else io.StringIO()
    assert progress_mode(quiet, requested, stream) == mode


@pytest.fixture(scope="module")
def logged_run(grain_times_four) -> tuple[str, bytes]:
    """``shape bns l2`` over the file with a log on a fake clock: (the log, the output); made once, as
    the log test reads the one and the off test compares with the other."""
    log = io.StringIO()
    output = run_chain(grain_times_four, ["shape", "bns", "l2"], Progress(LOG, log, clock=Clock(1.0)))
    return log.getvalue(), output


def test_a_log_shows_every_pass_its_percentages_the_writing_pass_and_the_total_time(grain_times_four, logged_run):
    log, _ = logged_run
    lines = log.splitlines()
    assert "\r" not in log and "\x1b" not in log
    fitting = [line for line in lines if line.startswith("filterkit: pass 1: fitting shape: ")]
    writing = [line for line in lines if line.startswith("filterkit: pass 2/2: writing: ")]
    assert len(fitting) >= 3 and len(writing) >= 3  # a line every 2 (fake) seconds, one read per chunk
    assert lines.index(fitting[-1]) < lines.index(writing[0])
    assert "filterkit: fitting bns: its statistics come from shape's pass (no pass of its own)" in lines
    size = data_size(grain_times_four.stat().st_size)
    # the first pass counts the input's bytes; the writing pass, its rows, which the first pass counted
    assert all(f": {share}% of {size}, " in line for share, line in zip(percentages(fitting), fitting[:-1]))
    assert all(re.search(r": [\d,]+/6,216 rows \(\d+%\), ", line) for line in writing[:-1])
    for pass_lines in (fitting, writing):
        shares = percentages(pass_lines[:-1])
        assert shares == sorted(shares) and len({share for share in shares if 0 < share < 100}) >= 2, pass_lines
        assert any(re.search(r" rows/s, [0-9.]+ s left$", line) for line in pass_lines[:-1])
    for last in (fitting[-1], writing[-1]):
        assert re.fullmatch(rf".*: 100% of {size}, 6,216 rows in \d+\.\d s, [\d,]+ rows/s", last)
    assert re.fullmatch(r"filterkit: done in \d+ min \d\d s \(2 passes\)", lines[-1])  # the fake clock's minutes


def test_a_terminal_redraws_one_line_per_pass_and_keeps_it(grain_times_four):
    terminal = Terminal()
    run_chain(grain_times_four, ["minmax"], Progress(TERMINAL, terminal, clock=Clock(0.05)))
    text = terminal.getvalue()
    kept = text.split("\n")
    assert kept[-1] == ""  # the last line ended
    first_pass, second_pass, done = kept[:-1]
    for drawn, title in ((first_pass, "pass 1/2: fitting minmax"), (second_pass, "pass 2/2: writing")):
        # between the passes, minmax's work on its statistics is shown while it lasts, then erased
        working = ["filterkit: fitting minmax: its state from its statistics…\x1b[K", "\x1b[K"]
        redraws = [segment for segment in drawn.split("\r")[1:] if segment not in working]
        assert drawn.count(working[0]) == (title == "pass 2/2: writing")
        assert len(redraws) > 3
        assert all(r.startswith(f"filterkit: {title}: ") and r.endswith("\x1b[K") for r in redraws)
        assert re.search(r"6,216 rows in [\d.]+ s, [\d,]+ rows/s\x1b\[K$", redraws[-1])
        shares = percentages(redraws[:-1])
        assert shares == sorted(shares) and shares[0] < 50 and shares[-1] > 50
    assert done.startswith("filterkit: done in ")


def test_a_pass_that_knows_its_rows_draws_its_first_line_once_and_names_the_stage_it_derives_from():
    terminal = Terminal()
    run_chain(IRIS, ["minmax", "minmax"], Progress(TERMINAL, terminal, clock=Clock(0.05)), class_spec="last")
    segments = [segment for segment in terminal.getvalue().split("\r") if segment.strip("\n")]
    # the second pass knows its rows (the first counted them): drawn when the pass starts, not again
    # when its rows start coming (which drew a second "0/150 rows")
    assert segments.count("filterkit: pass 2: fitting minmax: 0/150 rows (0%)\x1b[K") == 1
    assert all(earlier != later for earlier, later in zip(segments, segments[1:]))
    assert "filterkit: fitting minmax: deriving its statistics from those of stage 'minmax'…\x1b[K" in segments


def test_a_failing_pass_ends_the_terminal_s_line_so_the_error_starts_its_own():
    terminal = Terminal()
    progress = Progress(TERMINAL, terminal)
    progress.expect(1)
    with pytest.raises(ValueError), progress.step("fitting x", items=4, unit="fits") as meter:
        meter.advance()
        raise ValueError("bad row")
    assert terminal.getvalue().startswith("\rfilterkit: pass 1/1: fitting x: 0/4 fits (0%)")
    assert terminal.getvalue().endswith("\n")


def test_off_writes_nothing_and_hands_the_chunks_on_untouched(grain_times_four, logged_run):
    silent = Terminal()
    quiet_output = run_chain(grain_times_four, ["shape", "bns", "l2"], Progress(OFF, silent))
    assert silent.getvalue() == ""
    _, shown_output = logged_run
    assert shown_output == quiet_output
    chunks = iter([])
    with Progress(OFF).step("writing") as meter:
        assert meter.counted(chunks) is chunks


def test_spooling_a_pipe_is_a_pass_with_the_bytes_read():
    log = io.StringIO()
    data = IRIS.read_bytes()
    with Progress(LOG, log).activated():
        source = StreamSource(io.BytesIO(data), "<stdin>", chunk_rows=10)
        source.spool()
    try:
        assert log.getvalue() == (
            f"filterkit: pass 1/1: spooling <stdin>: {data_size(len(data))}, 150 rows in "
            + log.getvalue().split(" rows in ", 1)[1]
        )
        assert source.size is not None and source.size > 0  # the spool's size, for the passes after it
        assert [chunk.n_rows for chunk in source.chunks()] == [10] * 15
        assert source.position() == source.size
    finally:
        source.close()


def test_spooling_stdin_redirected_from_a_file_shows_its_percentage(grain_times_four):
    log = io.StringIO()
    with open(grain_times_four, "rb") as stream, Progress(LOG, log, clock=Clock(1.0)).activated():
        source = StreamSource(stream, "<stdin>", chunk_rows=200)
        source.spool()
        source.close()
    lines = log.getvalue().splitlines()
    assert all(line.startswith("filterkit: pass 1/1: spooling <stdin>: ") for line in lines)
    shares = percentages(lines)
    assert shares == sorted(shares) and shares[-1] == 100 and len(set(shares)) >= 3


def test_the_chain_shows_progress_in_a_log_only_when_asked(run_filterkit, monkeypatch):
    plain = run_filterkit(IRIS, "minmax")
    assert plain.status == 0 and plain.stderr == ""  # stderr is not a terminal here
    asked = run_filterkit("--progress", IRIS, "minmax")
    assert asked.stdout == plain.stdout
    lines = asked.stderr.splitlines()
    assert len(lines) == 3
    assert lines[0].startswith("filterkit: pass 1/2: fitting minmax: 100% of 7.5 kB, 150 rows in ")
    assert lines[1].startswith("filterkit: pass 2/2: writing: 100% of 7.5 kB, 150 rows in ")
    assert lines[2].startswith("filterkit: done in ")
    assert run_filterkit("-q", "--progress", IRIS, "minmax").stderr == ""
    monkeypatch.setenv("FILTERKIT_PROGRESS", "1")
    assert run_filterkit(IRIS, "minmax").stderr.count("\n") == 3
    assert run_filterkit("-q", IRIS, "minmax").stderr == ""
    monkeypatch.setenv("FILTERKIT_PROGRESS", "0")
    assert run_filterkit(IRIS, "minmax").stderr == ""


@pytest.mark.parametrize(
    "chain, titles",
    [
        (["shape", "bns", "l2"], ["pass 1: fitting shape", "pass 2/2: writing"]),
        (["minmax", "minmax"], ["pass 1: fitting minmax", "pass 2: fitting minmax", "pass 3/3: writing"]),
        (["ig", "l2", "minmax"], ["pass 1/3: fitting ig", "pass 2/3: fitting minmax", "pass 3/3: writing"]),
    ],
    ids=["a-pass-saved", "a-pass-that-could-be-saved-runs", "no-pass-can-be-saved"],
)
def test_the_passes_announced_are_the_passes_run(run_filterkit, chain, titles):
    result = run_filterkit("--progress", "--positive", "Iris-setosa", IRIS, *chain)
    assert result.status == 0, result.stderr
    lines = result.stderr.splitlines()
    assert [": ".join(line.split(": ")[1:3]) for line in lines if line.startswith("filterkit: pass ")] == titles
    assert lines[-1].endswith(f" ({len(titles)} passes)")


def test_the_chain_reports_the_spooling_of_standard_input(run_filterkit):
    result = run_filterkit("--progress", "-", "minmax", stdin=IRIS.read_bytes())
    assert result.status == 0, result.stderr
    titles = [": ".join(line.split(": ")[1:3]) for line in result.stderr.splitlines()]
    assert titles[:3] == ["pass 1/3: spooling <stdin>", "pass 2/3: fitting minmax", "pass 3/3: writing"]
    assert result.stdout == run_filterkit(IRIS, "minmax").stdout


def test_evaluate_reports_its_steps_in_the_same_style(run_filterkit, monkeypatch):
    arguments = ("--folds", "2", "--positive", "Iris-setosa", IRIS, "minmax")
    quiet = run_filterkit("evaluate", *arguments)
    assert quiet.status == 0 and quiet.stderr == ""
    monkeypatch.setenv("FILTERKIT_PROGRESS", "1")
    shown = run_filterkit("evaluate", *arguments)
    assert shown.stdout == quiet.stdout
    lines = [line for line in shown.stderr.splitlines() if not line.startswith("filterkit: drawing the folds: ")]
    assert lines[0].startswith(f"filterkit: step 1/2: reading {IRIS}: 100% of 7.5 kB, 150 rows in ")
    assert re.fullmatch(r"filterkit: step 2/2: cross-validating: 2 fits in [\d.]+ s, [\d.]+ fits/s", lines[1])
    assert re.fullmatch(r"filterkit: done in [\d.]+ s \(2 steps\)", lines[2])
    assert run_filterkit("evaluate", "-q", *arguments).stderr == ""


def test_evaluate_counts_its_fits_in_a_log_with_the_share_and_what_is_running():
    log = io.StringIO()
    progress = Progress(LOG, log, word="step", clock=Clock(3.0))
    with progress.step("cross-validating", items=4, unit="fits") as meter:
        for fold in range(1, 5):
            meter.advance(detail=f"task A, fold {fold}, chain 'l2'")
    assert log.getvalue().splitlines() == [
        # started at 6 s; a line at each fit (9, 12, 15, 18 s: 2 s apart at least); the end at 21 s
        "filterkit: step 1: cross-validating: 1/4 fits (25%), 0.333 fits/s, 9.0 s left (task A, fold 1, chain 'l2')",
        "filterkit: step 1: cross-validating: 2/4 fits (50%), 0.333 fits/s, 6.0 s left (task A, fold 2, chain 'l2')",
        "filterkit: step 1: cross-validating: 3/4 fits (75%), 0.333 fits/s, 3.0 s left (task A, fold 3, chain 'l2')",
        "filterkit: step 1: cross-validating: 4/4 fits (100%), 0.333 fits/s (task A, fold 4, chain 'l2')",
        "filterkit: step 1: cross-validating: 4 fits in 15.0 s, 0.267 fits/s",
    ]


@pytest.mark.slow
def test_the_dask_engine_reports_its_passes_over_partitions(run_filterkit, tmp_path):
    pytest.importorskip("dask.distributed", reason="Dask is not installed (pip install 'filterkit-arff[dask]')")
    output = tmp_path / "out.arff"
    result = run_filterkit("--engine", "dask", "--partitions", "3", "--progress", "-o", output, IRIS, "minmax")
    assert result.status == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("filterkit: ")]
    if lines[0].startswith("filterkit: starting a local Dask cluster of "):
        lines = lines[1:]  # shown when it took a second or more
    # the rows the tasks report as Dask events while they read (a pass may end before the last
    # event arrives); the writing pass counts the rows its tasks wrote
    assert re.fullmatch(r"filterkit: pass 1/2: fitting minmax: [\d,]+ rows in [\d.]+ s(, [\d.,]+ rows/s)?", lines[0])
    assert re.fullmatch(r"filterkit: pass 2/2: writing: 150 rows in [\d.]+ s, [\d.,]+ rows/s", lines[1])
    assert lines[2].startswith("filterkit: done in ")
    assert output.read_bytes() == run_filterkit(IRIS, "minmax").stdout


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [(0.04, "0.0 s"), (4.06, "4.1 s"), (59.94, "59.9 s"), (125.4, "2 min 05 s"), (3725, "1 h 02 min")],
)
def test_durations_read_as_a_person_says_them(seconds, shown):
    assert duration(seconds) == shown


@pytest.mark.parametrize(
    ("count", "shown"), [(999, "999 B"), (7486, "7.5 kB"), (84_832_481, "84.8 MB"), (2 * 10**12, "2.0 TB")]
)
def test_sizes_read_in_decimal_units(count, shown):
    assert data_size(count) == shown


@pytest.mark.parametrize(
    "suffix, text, rows",
    [
        (".svm", "1 1:0.5 3:2\n# a comment line\n-1 2:1\n1 1:1 2:0.5 3:1\n", 3),
        (".csv", "a,b,class\n" + "".join(f"{i / 7},{i % 3},{'xy'[i % 2]}\n" for i in range(25_001)), 25_001),
    ],
)
def test_the_header_scan_of_svmlight_and_csv_counts_the_rows_it_read(run_filterkit, tmp_path, suffix, text, rows):
    data = tmp_path / f"data{suffix}"
    data.write_text(text)
    result = run_filterkit("--progress", data, "minmax")
    assert result.status == 0, result.stderr
    scan, fitting, writing = result.stderr.splitlines()[:3]
    assert scan.startswith(f"filterkit: pass 1/3: scanning {data} for its header: ")
    assert f", {rows:,} rows in " in scan
    assert f", {rows:,} rows in " in fitting and f", {rows:,} rows in " in writing


def test_a_csv_spooled_from_standard_input_shows_its_bytes_and_a_model_s_header_takes_no_scan(run_filterkit, tmp_path):
    data = tmp_path / "data.csv"
    data.write_text("a,b,class\n" + "".join(f"{i / 7},{i % 3},{'xy'[i % 2]}\n" for i in range(40)))
    piped = run_filterkit("--progress", "--from", "csv", "-", "minmax", stdin=data.read_bytes())
    assert piped.status == 0, piped.stderr
    spool, scan = piped.stderr.splitlines()[:2]
    assert re.fullmatch(rf"filterkit: pass 1/4: spooling <stdin>: {data_size(data.stat().st_size)} in \S+ s", spool)
    assert scan.startswith("filterkit: pass 2/4: scanning <stdin> for its header: ") and ", 40 rows in " in scan
    model = tmp_path / "model.json"
    assert run_filterkit("-q", "--save-model", model, data, "minmax").status == 0
    applied = run_filterkit("--progress", "apply", model, data)
    assert applied.status == 0, applied.stderr
    assert applied.stderr.splitlines()[0].startswith("filterkit: pass 1/1: writing: 100% of ")
