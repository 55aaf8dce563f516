"""What ``-o``, ``--save-model`` and ``apply -o`` do to the file they are given (issue 23).

A regular file (or a new one) is replaced atomically, a new file getting mode
0666 & ~umask as ``>`` gives it and an existing one keeping its mode; a symbolic
link is written through to its target; a file with other hard links is written
in place (once the output is complete, so a bad row still leaves it untouched);
a device or FIFO is written directly, never replaced; a target that cannot be
written is refused before any input is read, naming it.

The runs go through :func:`filterkit.cli.run` in this process (in the test's folder, under
the test's umask: the console script is ``sys.exit(run(argv))``), except where the process
is the point: the default output on the real script's stdout, and ``--engine dask``, whose
worker processes write the parts (they start under the umask of the process that starts them).
"""

from __future__ import annotations

import os
import stat
import subprocess
import threading
from types import SimpleNamespace

import pytest

from chain_helpers import FILTERKIT, REAL
from filterkit.testing import run_filterkit

needs_script = pytest.mark.skipif(FILTERKIT is None, reason="the filterkit console script is not installed")

IRIS = REAL / "iris.arff"


def run(argv, cwd, umask: int | None = None) -> SimpleNamespace:
    """``filterkit ARGV…`` through :func:`filterkit.cli.run` in the folder ``cwd`` (and under
    ``umask``): its ``returncode``, ``stdout`` bytes and ``stderr`` text, as a subprocess gives them."""
    previous_umask = None if umask is None else os.umask(umask)
    previous_folder = os.getcwd()
    os.chdir(cwd)
    try:
        result = run_filterkit(*argv)
    finally:
        os.chdir(previous_folder)
        if previous_umask is not None:
            os.umask(previous_umask)
    return SimpleNamespace(returncode=result.status, stdout=result.stdout, stderr=result.stderr)


def run_script(argv, cwd, umask: int | None = None) -> subprocess.CompletedProcess:
    """The installed console script as a real subprocess (started under ``umask``)."""
    completed = subprocess.run(
        [FILTERKIT, *map(str, argv)],
        capture_output=True,
        cwd=cwd,
        timeout=120,
        preexec_fn=None if umask is None else (lambda: os.umask(umask)),
    )
    completed.stderr = completed.stderr.decode("utf-8", "replace")
    return completed


@pytest.fixture(scope="module")
def expected_l2(tmp_path_factory) -> bytes:
    """What ``filterkit iris.arff l2`` writes to stdout."""
    completed = run([IRIS, "l2"], tmp_path_factory.mktemp("stdout"))
    assert completed.returncode == 0, completed.stderr
    return completed.stdout


def bad_copy(folder):
    """iris.arff with a non-numeric value in its last row (line 226)."""
    path = folder / "bad.arff"
    path.write_text(IRIS.read_text() + "5.0,3.3,1.4,x,Iris-setosa\n")
    return path


def mode_of(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


# ---------------------------------------------------------------- file modes


#: Each kind of file filterkit writes, as the arguments that write it to NAME (run where
#: ``in.arff`` and its model ``m.json`` are).
WRITERS = {
    "-o": ["-o", "NAME", "in.arff", "l2"],
    "-o-gzip": ["-o", "NAME.gz", "in.arff", "l2"],
    "save-model": ["--save-model", "NAME", "in.arff", "minmax"],
    "apply-o": ["apply", "-o", "NAME", "m.json", "in.arff"],
}


@pytest.fixture(scope="module")
def minmax_model(tmp_path_factory) -> dict[str, bytes]:
    """The files ``filterkit --save-model m.json in.arff minmax`` writes (in.arff a copy of iris),
    by name, made once for the module: a test copies them beside its own ``in.arff``."""
    folder = tmp_path_factory.mktemp("model")
    (folder / "in.arff").write_bytes(IRIS.read_bytes())
    completed = run(["--save-model", "m.json", "in.arff", "minmax"], folder)
    assert completed.returncode == 0, completed.stderr
    return {path.name: path.read_bytes() for path in folder.iterdir() if path.name != "in.arff"}


def copy_model(model: dict[str, bytes], folder) -> None:
    """Write the model's files (:func:`minmax_model`) into ``folder``."""
    for name, data in model.items():
        (folder / name).write_bytes(data)


@pytest.mark.parametrize("umask", [0o022, 0o077], ids=oct)
@pytest.mark.parametrize("writer", list(WRITERS))
def test_a_new_file_gets_0666_less_the_umask_and_a_rewritten_one_keeps_its_mode(tmp_path, minmax_model, writer, umask):
    """As ``>`` and ``sed -i`` do: under umask 077 a teammate's 0644 file stays readable."""
    (tmp_path / "in.arff").write_bytes(IRIS.read_bytes())
    copy_model(minmax_model, tmp_path)
    argv = [argument.replace("NAME", "out") for argument in WRITERS[writer]]
    written = tmp_path / argv[argv.index("-o" if "-o" in argv else "--save-model") + 1]
    completed = run(argv, tmp_path, umask=umask)
    assert completed.returncode == 0, completed.stderr
    assert mode_of(written) == 0o666 & ~umask
    kept = 0o644 if umask == 0o077 else 0o640
    written.write_bytes(b"old\n")
    written.chmod(kept)
    completed = run(argv, tmp_path, umask=umask)
    assert completed.returncode == 0, completed.stderr
    assert mode_of(written) == kept
    assert written.read_bytes() != b"old\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(["in.arff", "m.json", written.name])


@pytest.mark.slow
@needs_script
def test_output_dir_parts_get_0666_less_the_umask_and_rewritten_ones_keep_their_mode(tmp_path):
    """Two runs under two umasks (each starting its own cluster): every part new under umask 022
    gets 0644; then under umask 077 a part whose mode was set to 0640 keeps it, and a new one gets 0600."""
    pytest.importorskip("distributed", reason="--engine dask needs pip install 'filterkit-arff[dask]'")
    (tmp_path / "parts").mkdir()
    for name in ("a.arff", "b.arff"):
        (tmp_path / "parts" / name).write_bytes(IRIS.read_bytes())
    argv = ["--engine", "dask", "--output-dir", "out", "parts", "minmax"]
    completed = run_script(argv, tmp_path, umask=0o022)
    assert completed.returncode == 0, completed.stderr
    assert {name: mode_of(tmp_path / "out" / name) for name in ("a.arff", "b.arff")} == dict.fromkeys(
        ("a.arff", "b.arff"), 0o644
    )
    (tmp_path / "out" / "a.arff").chmod(0o640)
    (tmp_path / "out" / "b.arff").unlink()
    completed = run_script(argv, tmp_path, umask=0o077)
    assert completed.returncode == 0, completed.stderr
    assert (mode_of(tmp_path / "out" / "a.arff"), mode_of(tmp_path / "out" / "b.arff")) == (0o640, 0o600)


# ----------------------------------------------------- links are written through


def test_a_symbolic_link_is_written_through_to_its_target(tmp_path, expected_l2):
    (tmp_path / "real.arff").write_text("old\n")
    (tmp_path / "link.arff").symlink_to("real.arff")
    completed = run(["-o", "link.arff", IRIS, "l2"], tmp_path)
    assert completed.returncode == 0, completed.stderr
    assert (tmp_path / "link.arff").is_symlink(), "the link stays a link"
    assert (tmp_path / "real.arff").read_bytes() == expected_l2
    assert sorted(os.listdir(tmp_path)) == ["link.arff", "real.arff"]


def test_a_dangling_symbolic_link_creates_its_target(tmp_path, expected_l2):
    (tmp_path / "sub").mkdir()
    (tmp_path / "link.arff").symlink_to("sub/new.arff")
    completed = run(["-o", "link.arff", IRIS, "l2"], tmp_path)
    assert completed.returncode == 0, completed.stderr
    assert (tmp_path / "link.arff").is_symlink()
    assert (tmp_path / "sub" / "new.arff").read_bytes() == expected_l2


def test_a_model_saved_through_a_symbolic_link_keeps_the_link(tmp_path):
    (tmp_path / "store").mkdir()
    (tmp_path / "store" / "m.json").write_text("old\n")
    (tmp_path / "m.json").symlink_to("store/m.json")
    completed = run(["--save-model", "m.json", IRIS, "minmax"], tmp_path)
    assert completed.returncode == 0, completed.stderr
    assert (tmp_path / "m.json").is_symlink()
    assert (tmp_path / "store" / "m.json").read_text().startswith("{")
    applied = run(["apply", "m.json", IRIS], tmp_path)
    assert applied.returncode == 0, applied.stderr


def test_a_hard_linked_output_is_written_in_place_through_every_name(tmp_path, expected_l2):
    (tmp_path / "out.arff").write_text("old\n")
    os.link(tmp_path / "out.arff", tmp_path / "other-name.arff")
    inode = os.stat(tmp_path / "out.arff").st_ino
    completed = run(["-o", "out.arff", IRIS, "l2"], tmp_path)
    assert completed.returncode == 0, completed.stderr
    assert os.stat(tmp_path / "out.arff").st_ino == inode, "the same file, not a new one"
    assert (tmp_path / "other-name.arff").read_bytes() == expected_l2
    assert sorted(os.listdir(tmp_path)) == ["other-name.arff", "out.arff"]


def test_two_runs_copying_into_one_hard_linked_file_take_turns(tmp_path, monkeypatch):
    """Issue 37, item 10: the first run pauses half-way through its copy, giving the second the
    chance to truncate and write into the file meanwhile (which it took, 1 in 12 times, before the
    lock); with the lock it waits, and the file ends as the last run's bytes, whole."""
    import shutil

    from filterkit import outputs

    (tmp_path / "out.arff").write_bytes(b"old")
    os.link(tmp_path / "out.arff", tmp_path / "other-name.arff")
    contents = {"first": b"A" * 300_000, "second": b"B" * 200_000}
    second_copying = threading.Event()

    def copy(source, target, length=0):
        if source.name.endswith(".first"):
            target.write(source.read(100_000))
            target.flush()
            second_copying.wait(timeout=0.5)
            target.write(source.read())
        else:
            second_copying.set()
            target.write(source.read())

    monkeypatch.setattr(shutil, "copyfileobj", copy)

    def publish(name):
        temporary = tmp_path / f"part.{name}"
        temporary.write_bytes(contents[name])
        outputs.publish_file(outputs.checked_output(tmp_path / "out.arff"), str(temporary))

    first = threading.Thread(target=publish, args=("first",))
    first.start()
    while not (tmp_path / "out.arff").read_bytes().startswith(b"A"):
        pass  # the first run holds the file, part-written
    publish("second")
    first.join()
    assert (tmp_path / "out.arff").read_bytes() == contents["second"]
    assert os.path.samefile(tmp_path / "out.arff", tmp_path / "other-name.arff")


def _cross_device_renames(monkeypatch, failing: int | None):
    """os.replace failing with EXDEV on its first ``failing`` calls (all when None), as a rename from a
    temporary folder on another file system does; the calls are counted."""
    import errno

    from filterkit import outputs

    calls = []
    rename = os.replace

    def replace(source, target):
        calls.append((str(source), str(target)))
        if failing is None or len(calls) <= failing:
            raise OSError(errno.EXDEV, os.strerror(errno.EXDEV), str(source))
        rename(source, target)

    monkeypatch.setattr(outputs.os, "replace", replace)
    return outputs, calls


def test_a_file_completed_on_another_file_system_is_copied_beside_the_target_then_renamed(tmp_path, monkeypatch):
    outputs, calls = _cross_device_renames(monkeypatch, failing=1)
    (tmp_path / "out.arff").write_bytes(b"old")
    os.chmod(tmp_path / "out.arff", 0o640)
    output = outputs.checked_output(tmp_path / "out.arff")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "complete").write_bytes(b"new bytes")
    outputs.publish_file(output, str(elsewhere / "complete"))
    assert (tmp_path / "out.arff").read_bytes() == b"new bytes"
    assert stat.S_IMODE(os.stat(tmp_path / "out.arff").st_mode) == 0o640
    assert len(calls) == 2 and os.path.dirname(calls[1][0]) == str(tmp_path)  # the copy beside the target
    assert sorted(os.listdir(tmp_path)) == ["elsewhere", "out.arff"] and not os.listdir(elsewhere)


def test_a_rename_beside_the_target_that_fails_too_is_one_error_with_nothing_left(tmp_path, monkeypatch):
    outputs, calls = _cross_device_renames(monkeypatch, failing=None)
    output = outputs.checked_output(tmp_path / "out.arff")
    (tmp_path / "complete").write_bytes(b"new bytes")
    with pytest.raises(OSError, match="cross-device"):
        outputs.publish_file(output, str(tmp_path / "complete"))
    assert len(calls) == 2  # the rename, and the copy's rename beside the target: no more
    assert os.listdir(tmp_path) == []


def test_a_temporary_file_that_cannot_be_made_is_an_error_naming_the_output_given(tmp_path, monkeypatch):
    # the error named the temporary file (.out.arff.RANDOM.tmp): a name the user never gave, other on every run
    import errno
    import tempfile

    real = tempfile.mkstemp

    def failing(*args, dir=None, **kwargs):
        if dir == str(tmp_path):
            raise OSError(errno.ENOSPC, "No space left on device", os.path.join(dir, ".out.arff.x1y2z3.tmp"))
        return real(*args, dir=dir, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", failing)
    out = tmp_path / "out.arff"
    result = run_filterkit(IRIS, "-o", out, "l2")
    assert (result.status, result.stderr) == (1, f"filterkit: error: cannot write {out}: No space left on device\n")
    assert os.listdir(tmp_path) == []


def test_a_hard_linked_output_is_untouched_by_a_bad_row(tmp_path):
    bad_copy(tmp_path)
    (tmp_path / "out.arff").write_text("old\n")
    os.link(tmp_path / "out.arff", tmp_path / "other-name.arff")
    completed = run(["--chunk-rows", "10", "-o", "out.arff", "bad.arff", "l2"], tmp_path)
    assert completed.returncode == 1
    assert completed.stderr.startswith("filterkit: error: bad.arff:226:")
    assert (tmp_path / "other-name.arff").read_text() == "old\n"
    assert sorted(os.listdir(tmp_path)) == ["bad.arff", "other-name.arff", "out.arff"]


# ------------------------------------------------- devices and FIFOs, in place


def private_device(folder, name: str, minor: int):
    """A node of Linux's memory device ``minor`` (3: null, 7: full) in ``folder``, so a
    test never risks the system's own /dev nodes."""
    node = folder / name
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, minor))
    except (PermissionError, AttributeError) as error:
        pytest.skip(f"cannot create a device node here: {error}")
    return node


@pytest.fixture
def private_full_device(tmp_path):
    """A device like /dev/full (every write fails with ENOSPC), in tmp_path."""
    return private_device(tmp_path, "full", 7)


@pytest.mark.parametrize(
    "option, extra",
    [("--predictions", ["--test", REAL / "iris.arff"]), ("--save-model", [])],
    ids=["evaluate-predictions", "save-model"],
)
def test_every_staged_output_that_cannot_be_written_names_its_file(tmp_path, private_full_device, option, extra):
    """``evaluate --predictions`` on a full device said only "No space left on device": the
    staged output, which every file goes through, names its file now."""
    train = tmp_path / "train.arff"
    train.write_bytes(IRIS.read_bytes())
    if option == "--save-model":
        argv = [option, private_full_device, "-o", tmp_path / "out.arff", train, "l2"]
    else:
        argv = ["evaluate", "-q", *extra, option, private_full_device, "--positive", "Iris-setosa", train, "l2"]
    completed = run(argv, tmp_path)
    assert completed.returncode == 1
    assert completed.stderr.endswith(f"{private_full_device}: No space left on device\n")
    assert completed.stderr.count("\n") == 1 and completed.stderr.startswith("filterkit: error: ")
    assert sorted(os.listdir(tmp_path)) == ["full", "train.arff"]


def test_a_device_output_is_written_in_place_and_never_replaced(tmp_path, private_full_device):
    completed = run(["-o", private_full_device, IRIS, "l2"], tmp_path)
    assert completed.returncode == 1
    assert completed.stderr == f"filterkit: error: cannot write {private_full_device}: No space left on device\n"
    assert stat.S_ISCHR(os.stat(private_full_device).st_mode), "the device node is still there"
    assert sorted(os.listdir(tmp_path)) == ["full"]


def test_a_null_device_takes_the_output_and_the_model(tmp_path):
    null = private_device(tmp_path, "null", 3)
    completed = run(["-o", null, "--save-model", null, IRIS, "minmax"], tmp_path)
    assert completed.returncode == 0, completed.stderr
    assert stat.S_ISCHR(os.stat(null).st_mode)


def test_a_fifo_output_streams_to_its_reader(tmp_path, expected_l2):
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    completed = run(["-o", fifo, IRIS, "l2"], tmp_path)
    reader.join(60)
    assert completed.returncode == 0, completed.stderr
    assert received == [expected_l2]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


# ------------------------------------------------- refused before any work


@pytest.mark.parametrize(
    "target, message",
    [
        ("", "cannot write '': the file name is empty"),
        ("a-folder", "cannot write a-folder: it is a folder"),
    ],
)
def test_an_output_that_cannot_be_a_file_is_refused_naming_it(tmp_path, target, message):
    (tmp_path / "a-folder").mkdir()
    bad_copy(tmp_path)
    for argv in (["-o", target, "bad.arff", "l2"], ["--save-model", target, "bad.arff", "minmax"]):
        completed = run(argv, tmp_path)
        assert completed.returncode in (1, 2), completed.stderr
        assert "Traceback" not in completed.stderr
        assert "bad.arff:226" not in completed.stderr, "refused before the input is read"
        if completed.returncode == 1:
            assert completed.stderr == f"filterkit: error: {message}\n"
    assert sorted(os.listdir(tmp_path)) == ["a-folder", "bad.arff"]


@pytest.fixture
def read_only_folder(tmp_path):
    """A folder holding old.arff that this process may not write to: by its mode when not
    root, else a tmpfs mounted read-only (root ignores modes)."""
    folder = tmp_path / "read-only"
    folder.mkdir()
    if os.geteuid() != 0:
        (folder / "old.arff").write_text("old\n")
        (folder / "old.arff").chmod(0o444)
        folder.chmod(0o555)
        yield folder
        folder.chmod(0o755)
        return
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        (folder / "old.arff").write_text("old\n")
        remounted = subprocess.run(["mount", "-o", "remount,ro", str(folder)], capture_output=True)
        if remounted.returncode != 0:
            pytest.skip(f"cannot remount read-only: {remounted.stderr.decode().strip()}")
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], capture_output=True)


@pytest.mark.parametrize("name", ["old.arff", "new.arff"])
@pytest.mark.parametrize("option", ["-o", "--save-model"])
def test_a_target_that_cannot_be_written_is_refused_before_the_input_is_read(tmp_path, read_only_folder, name, option):
    bad_copy(tmp_path)
    target = read_only_folder / name
    completed = run([option, target, "bad.arff", "minmax"], tmp_path)
    assert completed.returncode == 1
    assert completed.stderr.startswith(f"filterkit: error: cannot write {target}: "), completed.stderr
    assert completed.stderr.count("\n") == 1 and "bad.arff" not in completed.stderr
    assert sorted(os.listdir(read_only_folder)) == ["old.arff"]
    assert (read_only_folder / "old.arff").read_text() == "old\n"


def test_apply_output_follows_the_same_rules(tmp_path, expected_l2):
    assert run(["--save-model", "m.json", IRIS, "l2"], tmp_path).returncode == 0
    (tmp_path / "real.arff").write_text("old\n")
    (tmp_path / "real.arff").chmod(0o640)
    (tmp_path / "link.arff").symlink_to("real.arff")
    completed = run(["apply", "-o", "link.arff", "m.json", IRIS], tmp_path)
    assert completed.returncode == 0, completed.stderr
    assert (tmp_path / "link.arff").is_symlink() and mode_of(tmp_path / "real.arff") == 0o640
    body = (tmp_path / "real.arff").read_bytes().split(b"\n", 1)[1]
    assert body == expected_l2.split(b"\n", 1)[1]
    refused = run(["apply", "-o", "", "m.json", IRIS], tmp_path)
    assert refused.returncode == 1 and refused.stderr == "filterkit: error: cannot write '': the file name is empty\n"


@pytest.mark.slow
@needs_script
def test_stdout_is_still_the_default(tmp_path, expected_l2):
    completed = run_script([IRIS, "l2"], tmp_path)
    assert completed.stdout == expected_l2
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(
    "argv",
    [
        ["-o", "-", IRIS, "l2"],
        ["apply", "-o", "-", "m.json", IRIS],
        ["predict", "t.json", IRIS, "-o", "-"],
        ["explain", "t.json", IRIS, "--output=-"],
    ],
    ids=["chain", "apply", "predict", "explain"],
)
def test_dash_as_output_is_standard_output_where_that_is_the_default(tmp_path, minmax_model, argv):
    copy_model(minmax_model, tmp_path)
    if "t.json" in argv:
        assert run(["train", "--multiclass", "-o", "t.json", IRIS, "l2"], tmp_path).returncode == 0
    without = run([word for word in argv if word not in ("-o", "-", "--output=-")], tmp_path)
    dashed = run(argv, tmp_path)
    assert without.returncode == 0 and without.stdout.count(b"\n") > 100, without.stderr
    assert (dashed.returncode, dashed.stdout, dashed.stderr) == (without.returncode, without.stdout, without.stderr)
    assert not (tmp_path / "-").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["--save-model", "-", IRIS, "minmax"],
        ["train", "--multiclass", "-o", "-", IRIS, "l2"],
        ["evaluate", "--test", IRIS, "--predictions", "-", IRIS, "l2"],
        ["update", "-o", "-", "m.json", IRIS],
    ],
    ids=["save-model", "train", "evaluate-predictions", "update"],
)
def test_dash_for_an_output_that_is_a_file_is_refused(tmp_path, minmax_model, argv):
    copy_model(minmax_model, tmp_path)
    refused = run(argv, tmp_path)
    assert refused.returncode == 1
    assert refused.stderr.endswith(
        "cannot write -: this output is a file, not standard output (./- names a file '-')\n"
    )
    assert not (tmp_path / "-").exists()


def test_dash_as_an_output_folder_is_refused(tmp_path):
    refused = run(["--engine", "dask", "--output-dir", "-", IRIS, "l2"], tmp_path)
    assert refused.returncode == 1 and not (tmp_path / "-").exists()
    assert refused.stderr.endswith(
        "cannot write into --output-dir -: it names a folder, not standard output (./- does)\n"
    )


def test_standard_input_is_not_both_the_input_and_the_test_file(tmp_path):
    refused = run_filterkit("evaluate", "--test", "-", "-", "l2", stdin=IRIS.read_bytes())
    assert refused.status == 2
    assert refused.stderr.endswith(
        "Error: the input and --test are both - (standard input, which is read once): name a file\n"
    )


# ------------------------------------------- inputs, outputs and model are distinct


@pytest.fixture
def folder_with_input(tmp_path):
    (tmp_path / "in.arff").write_bytes(IRIS.read_bytes())
    return tmp_path


@pytest.mark.parametrize(
    "argv, first, second",
    [
        (["--save-model", "in.arff", "in.arff", "minmax", "l2"], "the input in.arff", "--save-model in.arff"),
        (["-o", "in.arff", "in.arff", "l2"], "the input in.arff", "-o in.arff"),
        (["-o", "./sub/../in.arff", "in.arff", "l2"], "the input in.arff", "-o ./sub/../in.arff"),
        (["-o", "new.arff", "--save-model", "new.arff", "in.arff", "minmax"], "-o new.arff", "--save-model new.arff"),
        (["-o", "hard-link.arff", "in.arff", "l2"], "the input in.arff", "-o hard-link.arff"),
        (["-o", "symbolic-link.arff", "in.arff", "l2"], "the input in.arff", "-o symbolic-link.arff"),
    ],
    ids=[
        "model-over-input",
        "output-over-input",
        "output-over-input-by-another-name",
        "output-and-model-both-new",
        "output-hard-link-of-input",
        "output-symbolic-link-to-input",
    ],
)
def test_the_input_output_and_model_files_must_be_distinct(folder_with_input, argv, first, second):
    (folder_with_input / "sub").mkdir()
    os.link(folder_with_input / "in.arff", folder_with_input / "hard-link.arff")
    (folder_with_input / "symbolic-link.arff").symlink_to("in.arff")
    before = {p.name: p.read_bytes() for p in folder_with_input.iterdir() if p.is_file()}
    completed = run(argv, folder_with_input)
    assert completed.returncode == 2, completed.stderr
    assert f"{first} and {second} are the same file" in completed.stderr
    assert "Traceback" not in completed.stderr
    assert {p.name: p.read_bytes() for p in folder_with_input.iterdir() if p.is_file()} == before


@pytest.mark.parametrize(
    "argv, message",
    [
        (["apply", "m.json", "m.json"], "the model m.json and the input m.json are the same file"),
        (["apply", "-o", "m.json", "m.json", "in.arff"], "the model m.json and -o m.json are the same file"),
        (["apply", "-o", "m.npz", "m.json", "in.arff"], "the model's arrays m.npz and -o m.npz are the same file"),
        (["apply", "-o", "in.arff", "m.json", "in.arff"], "the input in.arff and -o in.arff are the same file"),
    ],
    ids=["input-is-the-model", "output-over-model", "output-over-arrays", "output-over-input"],
)
def test_apply_refuses_to_write_over_its_model_or_input(folder_with_input, minmax_model, argv, message):
    copy_model(minmax_model, folder_with_input)
    before = {p.name: p.read_bytes() for p in folder_with_input.iterdir()}
    completed = run(argv, folder_with_input)
    assert completed.returncode == 2, completed.stderr
    assert message in completed.stderr
    assert {p.name: p.read_bytes() for p in folder_with_input.iterdir()} == before


def test_a_relative_output_dir_is_resolved_on_the_client(tmp_path, monkeypatch):
    from filterkit.partitions import checked_output_folder

    monkeypatch.chdir(tmp_path)
    assert checked_output_folder("out/parts") == str(tmp_path / "out" / "parts")
