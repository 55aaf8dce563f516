"""Faults (issue 9): a full disk while writing -o or --save-model, and SIGINT mid-run.

A full disk is simulated portably with RLIMIT_FSIZE (the child ignores
SIGXFSZ, so a write past the limit fails with EFBIG, "File too large"), and,
where this process may mount one (root), on a real 64 kB tmpfs (ENOSPC).
Either way filterkit must exit 1 with one clear line naming the file, without
a traceback, and leave no partial file: neither the target nor a temporary,
and an older file of the same name untouched.

SIGINT (Ctrl-C) mid-run must remove the stdin spool (``filterkit-spool-*.chunks``
in TMPDIR, here a private folder) and the -o temporary, exit 130 and say
``filterkit: error: interrupted`` — while reading stdin, while writing the -o
temporary, and while busy fitting.  (tests/test_runner.py does the same for
SIGTERM.)  A signal that arrives while stdin still streams in, the writer then
keeping the pipe open, is a known bug shown by an opt-in statistical test
(FILTERKIT_SIGNAL_RACE=1).
"""

from __future__ import annotations

import contextlib
import os
import re
import resource
import signal
import subprocess
import sys
import time

import pytest

from chain_helpers import FILTERKIT, REAL, wait_for_temporary
from filterkit.testing import run_filterkit

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(FILTERKIT is None, reason="the filterkit console script is not installed"),
]

OH0 = REAL / "oh0.wc.arff"
# On oh0 this chain writes ~18 kB of ARFF, while its model is ~26 kB of arrays
# (model.npz) and ~280 kB of JSON (the input header): a file-size limit between
# those sizes fails exactly one of the three files.
SMALL_OUTPUT_CHAIN = ["--positive", "Ethics", OH0, "select", "--metric", "ig", "--top", "5"]


def _limit_file_size(limit: int):
    def preexec():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return preexec


def _default_sigint() -> None:
    """In the child: SIGINT at its default, as a terminal's foreground job has it.

    A shell starts a background job (``cmd &``, ``nohup``) with SIGINT ignored, the child
    inherits that, and Python leaves it ignored (so does filterkit:
    :func:`test_an_ignored_sigint_stays_ignored`); run in the background, the suite would
    see the SIGINT tests hang."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run(argv, cwd, limit: int | None = None, **kwargs) -> subprocess.CompletedProcess:
    completed = subprocess.run(
        [FILTERKIT, *map(str, argv)],
        capture_output=True,
        cwd=cwd,
        timeout=120,
        preexec_fn=None if limit is None else _limit_file_size(limit),
        **kwargs,
    )
    completed.stderr = completed.stderr.decode("utf-8", "replace")
    return completed


def listing(folder) -> list[str]:
    return sorted(os.listdir(folder))


def assert_one_clean_error_line(stderr: str) -> None:
    assert "Traceback" not in stderr, stderr
    assert re.fullmatch(r"filterkit: error: [^\n]+\n", stderr), stderr


@pytest.fixture(scope="module")
def model_sizes(tmp_path_factory):
    """Sizes of the -o output and the model of SMALL_OUTPUT_CHAIN, saved without a limit
    (in this process: only the runs under a limit need the console script)."""
    folder = tmp_path_factory.mktemp("sizes")
    completed = run_filterkit("-o", folder / "out.arff", "--save-model", folder / "m.json", *SMALL_OUTPUT_CHAIN)
    assert completed.status == 0, completed.stderr
    sizes = {name: (folder / name).stat().st_size for name in ("out.arff", "m.json")}
    assert sizes["out.arff"] < sizes["m.json"], sizes
    return sizes


def contents(folder) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in listing(folder)}


# --------------------------------------------------------------------------
# -o into a full disk (each scenario runs once; its tests look at the outcome)

OLDER_OUTPUT = b"% an older output\n"


@pytest.fixture(scope="module")
def output_past_the_limit(tmp_path_factory):
    """``-o out.arff oh0 l2`` (~1.4 MB) under a 100 kB file-size limit, over an older out.arff."""
    folder = tmp_path_factory.mktemp("output-limit")
    (folder / "out.arff").write_bytes(OLDER_OUTPUT)
    completed = run(["-o", "out.arff", OH0, "l2"], folder, limit=100_000)
    return completed, contents(folder)


def test_file_size_limit_on_output_exits_1_and_leaves_no_partial_file(output_past_the_limit):
    completed, left = output_past_the_limit
    assert completed.returncode == 1
    assert completed.stdout == b""
    assert_one_clean_error_line(completed.stderr)
    assert left == {"out.arff": OLDER_OUTPUT}, "no partial output, no temporary, the older file untouched"


def test_file_size_limit_on_output_names_the_file(output_past_the_limit):
    completed, _ = output_past_the_limit
    assert "out.arff" in completed.stderr, completed.stderr


@pytest.fixture(scope="module")
def full_tmpfs_runs(tmp_path_factory):
    """On a 64 kB tmpfs: -o of ~1.4 MB, then --save-model of ~26 kB arrays and ~280 kB JSON.

    Skipped where a tmpfs cannot be mounted (not root, no CAP_SYS_ADMIN).
    """
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    work = tmp_path_factory.mktemp("tmpfs")
    mount_point = work / "full"
    mount_point.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount_point)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    outcomes = {}
    try:
        for what, argv in (
            ("output", ["-o", mount_point / "out.arff", OH0, "l2"]),
            ("model", ["--save-model", mount_point / "m.json", *SMALL_OUTPUT_CHAIN]),
        ):
            completed = run(argv, work)
            outcomes[what] = (completed, listing(mount_point))
            for name in listing(mount_point):  # each run starts on an empty file system
                (mount_point / name).unlink()
    finally:
        subprocess.run(["umount", str(mount_point)], capture_output=True)
    return outcomes


@pytest.mark.parametrize("what", ["output", "model"])
def test_full_tmpfs_exits_1_and_leaves_nothing_on_it(full_tmpfs_runs, what):
    completed, left = full_tmpfs_runs[what]
    assert completed.returncode == 1
    assert_one_clean_error_line(completed.stderr)
    assert left == [], "nothing is left on the full file system"


def test_full_tmpfs_error_names_the_file(full_tmpfs_runs):
    completed, _ = full_tmpfs_runs["output"]
    assert "out.arff" in completed.stderr, completed.stderr


def test_a_hard_linked_output_keeps_its_bytes_on_a_disk_too_full_for_the_new_ones(tmp_path):
    """A file with another hard link is written in place (it stays the same file): it was emptied, then written
    in part until the disk was full, its old bytes lost in both names; the blocks are reserved first now."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mount_point = tmp_path / "full"
    mount_point.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount_point)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        output, link = mount_point / "out.arff", mount_point / "link.arff"
        output.write_bytes(b"ORIGINAL CONTENT\n")
        os.link(output, link)
        header = "@relation r\n" + "".join(f"@attribute a{i} numeric\n" for i in range(20)) + "@attribute c {a,b}\n"
        rows = "".join(",".join(str((r * 20 + i) / 2801) for i in range(20)) + ",a\n" for r in range(140))
        (tmp_path / "mid.arff").write_text(header + "@data\n" + rows)  # its output, ~47 kB, fits once, not twice
        wide = run(["-o", output, tmp_path / "mid.arff", "l2"], tmp_path)
        assert wide.returncode == 1 and "out.arff" in wide.stderr
        assert_one_clean_error_line(wide.stderr)
        assert output.read_bytes() == link.read_bytes() == b"ORIGINAL CONTENT\n"
        assert listing(mount_point) == ["link.arff", "out.arff"]
        small = run(["-o", output, REAL / "iris.arff", "l2"], tmp_path)  # fits: written in place, both names
        assert small.returncode == 0 and os.stat(output).st_nlink == 2
        assert link.read_bytes() == run_filterkit(REAL / "iris.arff", "l2").stdout
    finally:
        subprocess.run(["umount", str(mount_point)], capture_output=True)


def test_a_hard_linked_output_written_shorter_ends_where_its_new_bytes_end(tmp_path):
    """Written over in place, not emptied first: the new bytes must still be the whole file."""
    output, link = tmp_path / "out.arff", tmp_path / "link.arff"
    output.write_bytes(b"x" * 100_000)
    os.link(output, link)
    assert run(["-o", output, REAL / "iris.arff", "l2"], tmp_path).returncode == 0
    assert link.read_bytes() == run_filterkit(REAL / "iris.arff", "l2").stdout


# --------------------------------------------------------------------------
# --save-model into a full disk


@pytest.fixture(scope="module")
def older_model(tmp_path_factory) -> dict[str, bytes]:
    """The file of a model saved earlier under the same name (iris, minmax: it has arrays), in this process."""
    folder = tmp_path_factory.mktemp("older-model")
    completed = run_filterkit("--save-model", folder / "m.json", REAL / "iris.arff", "minmax")
    assert completed.status == 0, completed.stderr
    files = contents(folder)
    assert sorted(files) == ["m.json"]
    return files


@pytest.fixture(scope="module")
def save_model_past_the_limit(tmp_path_factory, model_sizes, older_model):
    """``-o out.arff --save-model m.json`` over an older m.json, with a limit the -o output fits in but the
    model does not."""
    folder = tmp_path_factory.mktemp("model-limit")
    for name, data in older_model.items():
        (folder / name).write_bytes(data)
    limit = (model_sizes["out.arff"] + model_sizes["m.json"]) // 2
    completed = run(["-o", "out.arff", "--save-model", "m.json", *SMALL_OUTPUT_CHAIN], folder, limit=limit)
    return completed, contents(folder)


def test_file_size_limit_on_save_model_keeps_the_older_model_and_leaves_no_output(
    save_model_past_the_limit, older_model
):
    completed, left = save_model_past_the_limit
    assert completed.returncode == 1
    assert_one_clean_error_line(completed.stderr)
    assert left == older_model, "the older model untouched; no -o output, no temporary"


def test_file_size_limit_on_save_model_names_the_file(save_model_past_the_limit):
    completed, _ = save_model_past_the_limit
    assert "m.json" in completed.stderr, completed.stderr


# --------------------------------------------------------------------------
# SIGINT mid-run


def _grain_rows(copies: int) -> bytes:
    """grain_wc.arff (1.2 MB, class first) with its data rows repeated ``copies`` times."""
    text = (REAL / "grain_wc.arff").read_bytes()
    cut = text.lower().index(b"@data") + len(b"@data\n")
    return text[:cut] + text[cut:] * copies


def _reap(process) -> None:
    """Kill the child if it still runs, wait for it, and close its standard input."""
    if process.poll() is None:
        process.kill()
    process.wait()
    with contextlib.suppress(BrokenPipeError, OSError):
        process.stdin.close()


def _ended_within(process, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    return process.poll() is not None


def _cpu_ticks_and_state(pid: int) -> tuple[int, str]:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12]), fields[0]  # utime + stime, state


def _wait_until_idle(process, seconds: float = 30) -> None:
    """Until filterkit sleeps without using CPU for 0.15 s: it has taken all the input given and waits in read()."""
    deadline = time.monotonic() + seconds
    quiet, last = 0, None
    while quiet < 3:
        assert process.poll() is None, "filterkit ended while it should wait for more input"
        assert time.monotonic() < deadline, "filterkit never waited for input"
        ticks, state = _cpu_ticks_and_state(process.pid)
        quiet = quiet + 1 if (state == "S" and ticks == last) else 0
        last = ticks
        time.sleep(0.05)


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="reads the process state from /proc")
@pytest.mark.parametrize(
    "stages, pattern, close_stdin",
    [
        # stdin still open, waiting for more rows: interrupted while reading (and spooling) the input
        (["bns", "l2"], "tmp/filterkit-spool-*.chunks", False),
        # stdin still open, nothing to fit: interrupted while rows are written to the -o temporary
        (["l2"], "out/.out.arff.*", False),
        # all the input given: interrupted while busy fitting from the spool (or still spooling)
        (["shape", "bns", "l2"], "tmp/filterkit-spool-*.chunks", True),
    ],
    ids=["while-spooling", "while-writing-output", "while-fitting"],
)
def test_sigint_removes_the_spool_and_the_partial_output(tmp_path, stages, pattern, close_stdin):
    """The signal is sent once filterkit waits in read() for more input, or while it computes.

    (Not shown here: a signal that arrives while the reader copies between two reads of a
    stream that then stays open is only acted on when more input comes — a race of
    Python's buffered read, reported with these tests.)
    """
    for folder in ("tmp", "out"):
        (tmp_path / folder).mkdir()
    data = _grain_rows(32 if close_stdin else 1)  # 32: fitting lasts over a second on a quiet machine
    process = subprocess.Popen(
        [FILTERKIT, "-c", "first", "--chunk-rows", "500", "-o", "out/out.arff", "-", *stages],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        env={**os.environ, "TMPDIR": str(tmp_path / "tmp")},
        preexec_fn=_default_sigint,
    )
    try:
        process.stdin.write(data)
        if close_stdin:
            process.stdin.close()
            wait_for_temporary(tmp_path, pattern, process)
            time.sleep(0.3)  # into the fitting pass (or still spooling: either way)
            assert process.poll() is None, "filterkit finished before it could be interrupted"
        else:
            process.stdin.flush()
            wait_for_temporary(tmp_path, pattern, process)
            _wait_until_idle(process)
        process.send_signal(signal.SIGINT)
        ended = _ended_within(process, 30)
    finally:
        _reap(process)
    stderr = process.stderr.read().decode("utf-8", "replace")
    assert ended, "SIGINT did not end filterkit"
    assert process.returncode == 130, stderr
    assert stderr == "filterkit: error: interrupted\n"
    assert sorted(tmp_path.rglob("*")) == [tmp_path / "out", tmp_path / "tmp"], "no spool, no -o temporary"


@pytest.mark.slow
def test_an_ignored_sigint_stays_ignored(tmp_path):
    """Started with SIGINT ignored (a background job of a shell, ``nohup``), filterkit leaves it
    ignored, as other command-line tools do: the signal neither stops the run nor loses output."""
    (tmp_path / "tmp").mkdir()
    process = subprocess.Popen(
        [FILTERKIT, "-c", "first", "-o", "out.arff", "-", "l2"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    document = _grain_rows(1)
    more_rows = _grain_rows(2)[len(document) :]
    try:
        process.stdin.write(document)
        process.stdin.flush()
        wait_for_temporary(tmp_path, ".out.arff.*", process)
        process.send_signal(signal.SIGINT)
        process.stdin.write(more_rows)
        process.stdin.close()
        assert _ended_within(process, 60)
    finally:
        _reap(process)
    assert process.returncode == 0, process.stderr.read()
    assert (tmp_path / "out.arff").read_bytes().count(b"\n{") == _grain_rows(2).count(b"\n{") > 0


@pytest.mark.skipif(
    os.environ.get("FILTERKIT_SIGNAL_RACE") != "1",
    reason="statistical, ~30 s each: set FILTERKIT_SIGNAL_RACE=1 to run it",
)
@pytest.mark.parametrize("sent", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_while_stdin_streams_ends_filterkit_even_if_the_writer_then_stalls(tmp_path, sent):
    """The signal is sent while rows still stream in; the writer then keeps the pipe open, idle."""
    data = _grain_rows(1)
    hung = 0
    for trial in range(10):
        folder = tmp_path / str(trial)
        for name in ("tmp", "out"):
            (folder / name).mkdir(parents=True)
        process = subprocess.Popen(
            [FILTERKIT, "-c", "first", "-o", "out/out.arff", "-", "bns", "l2"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=folder,
            env={**os.environ, "TMPDIR": str(folder / "tmp")},
            preexec_fn=_default_sigint,
        )
        try:
            process.stdin.write(data)
            process.stdin.flush()
            wait_for_temporary(folder, "tmp/filterkit-spool-*.chunks", process)
            process.send_signal(sent)
            if not _ended_within(process, 3):
                hung += 1
        finally:
            _reap(process)
    assert hung == 0, f"{hung} of 10 runs still waited for input 3 s after the signal"


# --------------------------------------------------------------------------
# The stdin spool: SIGKILL, a full disk


def test_sigkill_leaves_no_spool(tmp_path):
    """The spool has no name once open, so even SIGKILL (no cleanup at all) leaves nothing."""
    (tmp_path / "tmp").mkdir()
    process = subprocess.Popen(
        [FILTERKIT, "-c", "first", "-", "bns", "l2"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=tmp_path,
        env={**os.environ, "TMPDIR": str(tmp_path / "tmp")},
    )
    try:
        process.stdin.write(_grain_rows(1))
        process.stdin.flush()
        wait_for_temporary(tmp_path, "tmp/filterkit-spool-*.chunks", process)
        process.kill()
    finally:
        _reap(process)
    assert listing(tmp_path / "tmp") == []


def test_a_full_disk_under_the_spool_names_the_folder_and_what_to_do(tmp_path):
    (tmp_path / "tmp").mkdir()
    completed = run(
        ["-", "bns", "l2"],
        tmp_path,
        limit=100_000,
        input=OH0.read_bytes(),
        env={**os.environ, "TMPDIR": str(tmp_path / "tmp")},
    )
    assert completed.returncode == 1
    assert_one_clean_error_line(completed.stderr)
    assert completed.stderr.startswith(
        f"filterkit: error: cannot spool <stdin> into the temporary folder {tmp_path / 'tmp'} (File too large): "
    ), completed.stderr
    assert "TMPDIR" in completed.stderr
    assert listing(tmp_path / "tmp") == []


def test_the_signals_that_come_while_a_stopped_run_unwinds_are_ignored():
    """``timeout`` passes a terminal's Ctrl-C on to its command, which then gets two: the second
    must not interrupt the cleanup the first started (a traceback from a finalizer, Dask's
    client half-closed)."""
    from filterkit import cli
    from filterkit.ownership import STOPPING_SIGNALS

    saved = {signum: signal.getsignal(signum) for signum in STOPPING_SIGNALS}
    try:
        with pytest.raises(KeyboardInterrupt):
            cli._terminate(signal.SIGINT, None)
        assert {signal.getsignal(signum) for signum in STOPPING_SIGNALS} == {signal.SIG_IGN}
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)


def test_a_signal_once_the_run_is_over_leaves_its_exit_status(tmp_path):
    """While the interpreter exits (Python puts the default handlers back), a SIGTERM turned a complete
    run's 0 into a kill: the stopping signals are ignored once the run has returned."""
    script = (
        "import os, signal, sys\n"
        "from filterkit import cli\n"
        "cli.run = lambda argv, plugins_dir=None: 0\n"
        "exiting = sys.exit\n"
        "def signalled_while_exiting(status):\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "    exiting(status)\n"
        "sys.exit = signalled_while_exiting\n"
        "cli.main(['iris.arff'])\n"
    )
    finished = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60, cwd=tmp_path)
    assert (finished.returncode, finished.stderr) == (0, b"")


def test_an_output_that_fails_at_its_end_leaves_the_model_saved_with_it_as_it_was(tmp_path, monkeypatch):
    """The model was saved before the output's last bytes and sync, where a full disk shows: a run that failed
    there (exit 1, the output not written) had replaced the model file."""
    from filterkit import outputs

    model, out = tmp_path / "m.json", tmp_path / "out.arff"
    model.write_text("PREVIOUS MODEL")
    complete = outputs.StagedOutput.complete

    def full_at_the_end(stage):
        if stage.output.path == str(out):
            raise OSError(28, "No space left on device")
        complete(stage)

    monkeypatch.setattr(outputs.StagedOutput, "complete", full_at_the_end)
    result = run_filterkit("-q", "--save-model", model, "-o", out, REAL / "iris.arff", "minmax")
    assert result.status == 1 and "cannot write" in result.stderr and "No space left on device" in result.stderr
    assert model.read_text() == "PREVIOUS MODEL" and not out.exists()


def test_a_stopping_signal_during_the_copy_into_a_hard_linked_output_waits_for_its_end(tmp_path, monkeypatch):
    """A hard-linked output is written in place: a Ctrl-C in the middle of the copy left the new bytes' start
    over the old ones' rest, in both names; the copy ends first now, then the run stops (exit 130)."""
    import shutil
    import signal

    output, link = tmp_path / "out.arff", tmp_path / "link.arff"
    output.write_bytes(b"OLD " * 100_000)
    os.link(output, link)

    copy = shutil.copyfileobj

    def interrupted_copy(source, target, length=0):
        target.write(source.read(100))
        os.kill(os.getpid(), signal.SIGINT)
        copy(source, target)

    monkeypatch.setattr(shutil, "copyfileobj", interrupted_copy)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # ignored in a background job's process
    try:
        result = run_filterkit("-q", "-o", output, REAL / "iris.arff", "l2")
    finally:
        signal.signal(signal.SIGINT, previous)
    assert result.status == 130 and "interrupted" in result.stderr
    assert link.read_bytes() == run_filterkit("-q", REAL / "iris.arff", "l2").stdout


@pytest.mark.skipif(FILTERKIT is None, reason="the filterkit console script is not installed")
def test_dev_stdout_as_the_output_writes_to_a_pipe(tmp_path):
    """realpath turned /dev/stdout on a pipe into /proc/PID/fd/pipe:[N], which no folder holds: refused."""
    result = subprocess.run([FILTERKIT, "-q", "-o", "/dev/stdout", REAL / "iris.arff", "l2"], capture_output=True)
    assert result.returncode == 0 and result.stderr == b""
    assert result.stdout == run_filterkit("-q", REAL / "iris.arff", "l2").stdout


def test_a_module_that_cannot_load_is_one_error_line(monkeypatch):
    """Under ulimit -v a module imported late (scipy's, by evaluate) failed to map its library: a traceback."""
    from filterkit import runner

    def unloadable(*arguments, **options):
        raise ImportError("libfoo.so: failed to map segment from shared object", name="scipy.optimize._minpack")

    monkeypatch.setattr(runner.Chain, "fit", unloadable)
    result = run_filterkit("-q", REAL / "iris.arff", "minmax")
    assert result.status == 1 and result.stdout == b""
    assert result.stderr == (
        "filterkit: error: cannot load scipy.optimize._minpack: libfoo.so: failed to map segment from shared object\n"
    )


@pytest.mark.skipif(FILTERKIT is None, reason="the filterkit console script is not installed")
def test_a_run_waiting_for_a_hard_linked_output_s_lock_stops_at_a_signal_and_writes_nothing(tmp_path):
    """Signals were held from before the lock's wait: a Ctrl-C only took effect once the lock was free, and after
    the file had been written over."""
    import fcntl
    import signal
    import time

    output, link = tmp_path / "out.arff", tmp_path / "link.arff"
    output.write_text("OLD\n")
    os.link(output, link)
    with open(output, "rb") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        process = subprocess.Popen(
            [FILTERKIT, "-q", "-o", output, REAL / "iris.arff", "l2"],
            stderr=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=_default_sigint,  # a background job's SIGINT is ignored, which filterkit keeps
        )
        time.sleep(3)  # the run is waiting for the lock by now
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=20)  # before the lock is given up
        assert process.returncode == 130 and b"interrupted" in stderr
    assert link.read_text() == "OLD\n"


def test_a_file_system_without_fallocate_still_takes_a_hard_linked_output(tmp_path, monkeypatch):
    """glibc's posix_fallocate, where the file system has none, reads the file: on one opened to write only it
    fails with EBADF, which had made the output fail; the reservation is passed over there, as where unsupported."""
    import errno

    def unsupported(handle, offset, length):
        raise OSError(errno.EBADF, "Bad file descriptor")

    monkeypatch.setattr(os, "posix_fallocate", unsupported)
    output, link = tmp_path / "out.arff", tmp_path / "link.arff"
    output.write_text("OLD " * 10_000)
    os.link(output, link)
    assert run_filterkit("-q", "-o", output, REAL / "iris.arff", "l2").status == 0
    assert link.read_bytes() == run_filterkit("-q", REAL / "iris.arff", "l2").stdout
