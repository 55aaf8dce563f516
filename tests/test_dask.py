"""``--engine dask``: a chain fitted and applied over partitions on a real Dask cluster gives
byte for byte what the single-process run gives, whatever the partitioning.

One ``dask.distributed.LocalCluster`` of two worker processes serves the whole module
(``conftest.py``'s ``dask_scheduler``); the cluster tests are skipped when Dask is not
installed (``pip install 'filterkit-arff[dask]'``).
"""

from __future__ import annotations

import contextlib
import gzip
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from chain_helpers import OH0_SAMPLE, REAL, STAGES_DIR, read_bytes, without_comments
from filterkit.errors import FilterkitError
from filterkit.partitions import check_runnable
from filterkit.plugins import BUILT_IN_DISTRIBUTION, load_plugins
from filterkit.stage import Stage

pytestmark = pytest.mark.slow

OH0 = REAL / "oh0.wc.arff"
GRAIN = REAL / "grain_wc.arff"
IRIS = REAL / "iris.arff"
CREDIT = REAL / "credit-g.arff"
REUTERS = REAL / "reuters_grain_sample.arff"
ETHICS = ("--positive", "Ethics")
REGISTRY = load_plugins()
#: Every built-in stage, from the registry, and the scorers among them (a stage per metric).
BUILT_IN = sorted(
    name for name, registered in REGISTRY.stages.items() if registered.distribution == BUILT_IN_DISTRIBUTION
)
SCORERS = [name for name in BUILT_IN if name in REGISTRY.metrics]

#: A stage's case where it is not credit-g with no options: (input, chain-wide options, the stage's options).
#: The scorers, one class of stage that differ only in the metric computed from the merged counts, score
#: oh0's sample.
CASE_SETTINGS = {
    **{scorer: (OH0_SAMPLE, ETHICS, []) for scorer in SCORERS},
    "select": (CREDIT, (), ["--metric", "chi", "--top", "3"]),
    "ordinal": (OH0, (), ["--max-thresholds", "3"]),
    "binarize": (OH0, (), []),
    "l1": (IRIS, (), []),
    "l2": (OH0, (), []),
    "discretize": (IRIS, (), []),
    "words": (REUTERS, (), ["--counts"]),
    "remove": (IRIS, (), ["--range", "1"]),
    "keep": (IRIS, (), ["--type", "numeric"]),
    "fold": (CREDIT, (), ["--fold", "2", "--of", "5"]),
}

#: (input, chain-wide options, chain): one small chain per built-in stage, then the options those leave
#: out, each run on one of the two layouts in turn (a stage sees partitions, not how they were cut: the
#: text chains below run every layout, and each layout still runs half of the stages).
STAGE_CASES = [
    *[
        (path, options, [stage, *words])
        for stage in BUILT_IN
        for path, options, words in [CASE_SETTINGS.get(stage, (CREDIT, (), []))]
    ],
    (CREDIT, (), ["chi", "--presence", "--no-zero-preserve"]),
    (IRIS, (), ["ig", "--combine", "mean"]),
    (IRIS, (), ["shape", "--multiclass", "one-vs-rest"]),
    (OH0, ETHICS, ["ig", "--no-scale", "select", "--sparsity", "8"]),
    (CREDIT, (), ["ordinal"]),
]

#: The layouts of the stage cases: byte ranges of one file, or the file cut into three files.
LAYOUTS = ("ranges", "files")

#: The text chains of the issue and the layouts each runs in: oh0 (Ethics against the rest) as three
#: files, one byte range and seven; Reuters grain (class first, 2.6 times oh0's size) in one layout per
#: chain, the two chains between them running both.
TEXT_CASES = [
    ((OH0, ETHICS, ["shape", "bns", "l2"]), ("three files", "1 ranges", "7 ranges")),
    ((OH0, ETHICS, ["ig", "--presence", "select", "--top", "100", "l2"]), ("three files", "1 ranges", "7 ranges")),
    ((GRAIN, ("-c", "first"), ["shape", "bns", "l2"]), ("three files",)),
    ((GRAIN, ("-c", "first"), ["ig", "--presence", "select", "--top", "100", "l2"]), ("5 ranges",)),
]


def case_id(case) -> str:
    path, options, chain = case
    return f"{path.stem}:{' '.join([*options, *chain])}"


@pytest.fixture
def scheduler(dask_scheduler):
    """The address of the module's LocalCluster of two worker processes (conftest.py)."""
    return dask_scheduler


@pytest.fixture
def on_dask(run_filterkit, scheduler):
    """Run a chain with ``--engine dask`` on the module's cluster (extra chain options first)."""

    def invoke(*argv, plugins_dir=None):
        return run_filterkit("--engine", "dask", "--scheduler", scheduler, *argv, plugins_dir=plugins_dir)

    return invoke


@pytest.fixture(scope="module")
def local_outputs():
    """The single-process outputs computed so far, by (input, options, chain)."""
    return {}


@pytest.fixture
def local(run_filterkit, local_outputs):
    """What ``filterkit OPTIONS IN CHAIN`` writes in this process (each chain run once per module)."""

    def output(path, options, chain) -> bytes:
        key = (str(path), tuple(options), tuple(chain))
        if key not in local_outputs:
            result = run_filterkit(*options, path, *chain)
            assert result.status == 0, result.stderr
            local_outputs[key] = result.stdout
        return local_outputs[key]

    return output


@pytest.fixture(scope="module")
def three_files(tmp_path_factory):
    """The folder of a real file's rows cut into three files sharing its header (made once per file)."""
    folders = {}

    def folder_of(path):
        if path not in folders:
            folders[path] = tmp_path_factory.mktemp(path.stem)
            split_rows(path, folders[path])
        return folders[path]

    return folder_of


def split_rows(path, folder, parts: int = 3) -> list:
    """The data lines of ``path`` cut into ``parts`` files that repeat its header, in name order."""
    text = path.read_bytes()
    data_line = re.search(rb"(?im)^@data[^\n]*\n", text)
    header, lines = text[: data_line.end()], text[data_line.end() :].splitlines(keepends=True)
    folder.mkdir(exist_ok=True)
    files = []
    for number in range(parts):
        share = lines[len(lines) * number // parts : len(lines) * (number + 1) // parts]
        target = folder / f"{path.stem}-{number + 1}.arff"
        target.write_bytes(header + b"".join(share))
        files.append(target)
    return files


def strip_header(arff: bytes) -> bytes:
    """The rows of an ARFF text (everything after the ``@data`` line)."""
    return arff[re.search(rb"(?im)^@data[^\n]*\n", arff).end() :]


@pytest.mark.parametrize(
    "case, layout",
    [(case, LAYOUTS[number % 2]) for number, case in enumerate(STAGE_CASES)],
    ids=[f"{LAYOUTS[number % 2]}-{case_id(case)}" for number, case in enumerate(STAGE_CASES)],
)
def test_every_stage_gives_the_local_output(local, on_dask, three_files, tmp_path, case, layout):
    path, options, chain = case
    source = [three_files(path)] if layout == "files" else ["--partitions", "4", path]
    result = on_dask("-o", tmp_path / "out.arff", *options, *source, *chain)
    assert result.status == 0, result.stderr
    assert (tmp_path / "out.arff").read_bytes() == local(path, options, chain)


@pytest.mark.parametrize("case, layouts", TEXT_CASES, ids=[case_id(case) for case, _ in TEXT_CASES])
def test_text_chains_give_the_local_output_however_partitioned(local, on_dask, three_files, tmp_path, case, layouts):
    path, options, chain = case
    expected = local(path, options, chain)
    inputs = {
        layout: [three_files(path)] if layout == "three files" else ["--partitions", layout.split()[0], path]
        for layout in layouts
    }
    for layout, argv in inputs.items():
        result = on_dask("-o", tmp_path / "out.arff", *options, *argv, *chain)
        assert result.status == 0, f"{layout}: {result.stderr}"
        assert (tmp_path / "out.arff").read_bytes() == expected, layout


def test_a_glob_names_the_files(local, on_dask, tmp_path):
    split_rows(CREDIT, tmp_path / "parts")
    (tmp_path / "parts" / "notes.txt").write_text("not a partition")
    result = on_dask("-o", tmp_path / "out.arff", str(tmp_path / "parts" / "credit-g-*.arff"), "minmax")
    assert result.status == 0, result.stderr
    assert (tmp_path / "out.arff").read_bytes() == local(CREDIT, (), ["minmax"])


def test_a_gzip_file_is_one_partition_named_without_gz(local, on_dask, tmp_path):
    first, second, third = split_rows(IRIS, tmp_path / "parts")
    with gzip.open(str(second) + ".gz", "wb") as compressed:
        compressed.write(second.read_bytes())
    second.unlink()
    result = on_dask("--output-dir", tmp_path / "out", tmp_path / "parts", "minmax")
    assert result.status == 0, result.stderr
    names = [first.name, second.name, third.name]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == names
    outputs = [(tmp_path / "out" / name).read_bytes() for name in names]
    expected = local(IRIS, (), ["minmax"])
    assert strip_header(expected) == b"".join(strip_header(o) for o in outputs)


def awkward_iris(folder):
    """iris with CRLF line ends, a row on the @data line, comments and blank lines among the
    rows, and every third row written sparse (the first row is dense, so the file is dense)."""
    text = IRIS.read_text()
    header, data = re.split(r"(?m)^@DATA\n", text)
    rows = [line for line in data.splitlines() if line.strip() and not line.startswith("%")]
    lines = []
    for number, row in enumerate(rows[1:], 1):
        if number % 3 == 0:
            row = "{" + ",".join(f"{i} {v}" for i, v in enumerate(row.split(","))) + "}"
        lines.append(row)
        if number % 7 == 0:
            lines.append("% a comment between rows")
        if number % 11 == 0:
            lines.append("   ")
    path = folder / "awkward.arff"
    path.write_bytes((header + f"@DATA {rows[0]}\n" + "\n".join(lines) + "\n").replace("\n", "\r\n").encode())
    return path


@pytest.mark.parametrize(
    "chain, counts",
    [(["minmax"], (1, 2, 37, 1000)), (["ig", "l2"], (3, 37))],  # 1000 ranges: more than there are lines
    ids=["minmax", "ig-l2"],
)
def test_byte_ranges_cut_only_between_rows(local, on_dask, tmp_path, chain, counts):
    path = awkward_iris(tmp_path)
    expected = local(path, (), chain)
    assert b"{" not in strip_header(expected), "the file's first row is dense, so is every output row"
    for count in counts:
        result = on_dask("-o", tmp_path / "out.arff", "--partitions", count, path, *chain)
        assert result.status == 0, result.stderr
        assert (tmp_path / "out.arff").read_bytes() == expected, f"{count} partitions"


@pytest.mark.parametrize("count", [1, 4, 50])
def test_a_bad_row_is_reported_at_its_line_in_the_file(run_filterkit, on_dask, tmp_path, count):
    lines = awkward_iris(tmp_path).read_bytes().split(b"\r\n")
    lines[150] = b"5.0,3.3,1.4,x,Iris-setosa"
    bad = tmp_path / "bad.arff"
    bad.write_bytes(b"\r\n".join(lines))
    local = run_filterkit(bad, "l2")
    assert local.status == 1 and local.stderr.startswith(f"filterkit: error: {bad}:151:")
    result = on_dask("-o", tmp_path / "out.arff", "--partitions", count, bad, "l2")
    assert (result.status, result.stderr) == (local.status, local.stderr)
    assert sorted(os.listdir(tmp_path)) == ["awkward.arff", "bad.arff"], "no output, no temporary parts"


def test_files_with_another_header_are_refused_naming_file_and_attribute(on_dask, tmp_path):
    first, second, third = split_rows(IRIS, tmp_path / "parts")
    second.write_text(second.read_text().replace("@ATTRIBUTE sepalwidth", "@ATTRIBUTE sepal_width"))
    result = on_dask("-o", tmp_path / "out.arff", tmp_path / "parts", "l2")
    assert result.status == 1
    assert result.stderr == (
        f"filterkit: error: {second}: header differs from {first}'s: attribute 2 differs: "
        "expected 'sepalwidth' numeric, found 'sepal_width' numeric\n"
    )
    assert not (tmp_path / "out.arff").exists()


@pytest.mark.parametrize("layout", ["ranges", "files"])
def test_outputs_per_partition_concatenate_to_the_single_output(on_dask, tmp_path, layout):
    if layout == "files":
        inputs = split_rows(OH0, tmp_path / "parts")
        argv, names = [tmp_path / "parts"], [p.name for p in inputs]
    else:
        argv, names = ["--partitions", "4", OH0], [f"part-{n:05d}.arff" for n in range(4)]
    chain = ["ig", "--presence", "select", "--top", "100", "l2"]
    single = on_dask("-o", tmp_path / "single.arff", *ETHICS, *argv, *chain)
    each = on_dask("--output-dir", tmp_path / "out", *ETHICS, *argv, *chain)
    assert single.status == 0 and each.status == 0, single.stderr + each.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == names, "no temporary file is left"
    outputs = [(tmp_path / "out" / name).read_bytes() for name in names]
    header = outputs[0][: len(outputs[0]) - len(strip_header(outputs[0]))]
    assert all(output.startswith(header) for output in outputs)
    assert header + b"".join(strip_header(o) for o in outputs) == (tmp_path / "single.arff").read_bytes()
    assert sum(read_bytes(o)[1].n_rows for o in outputs) == 1003


@pytest.mark.parametrize("rounding", [["--digits", "4"], ["--float32"]])
def test_rounded_numbers_are_the_local_ones_in_one_output_and_per_partition(local, on_dask, tmp_path, rounding):
    chain = ["shape", "bns", "l2"]
    expected = local(OH0, [*ETHICS, *rounding], chain)
    assert f"chain: {' '.join(ETHICS)} {' '.join(rounding)} shape".encode() in expected.splitlines()[0]
    assert expected != local(OH0, ETHICS, chain), "the rounding changes the numbers"
    single = on_dask("--partitions", "3", "-o", tmp_path / "single.arff", *ETHICS, *rounding, OH0, *chain)
    each = on_dask("--partitions", "3", "--output-dir", tmp_path / "out", *ETHICS, *rounding, OH0, *chain)
    assert single.status == 0 and each.status == 0, single.stderr + each.stderr
    assert (tmp_path / "single.arff").read_bytes() == expected
    parts = sorted((tmp_path / "out").iterdir())
    assert b"".join(strip_header(part.read_bytes()) for part in parts) == strip_header(expected)


def test_output_dir_never_overwrites_an_input(on_dask, tmp_path):
    inputs = split_rows(IRIS, tmp_path / "parts")
    before = [p.read_bytes() for p in inputs]
    result = on_dask("--output-dir", tmp_path / "parts", tmp_path / "parts", "l2")
    assert result.status == 1 and "would overwrite the input" in result.stderr
    assert [p.read_bytes() for p in inputs] == before


def test_output_dir_holding_another_run_s_parts_is_refused(on_dask, tmp_path):
    """A second run of fewer partitions left the first run's later parts beside its own, and the folder read back
    held their rows too (1,593 rows for oh0's 1,003), silently."""
    out = tmp_path / "out"
    first = on_dask("-q", "--partitions", "5", "--output-dir", out, *ETHICS, OH0, "l2")
    assert first.status == 0, first.stderr
    before = {path.name: path.read_bytes() for path in out.iterdir()}
    second = on_dask("-q", "--partitions", "2", "--output-dir", out, *ETHICS, OH0, "l2")
    assert second.status == 1 and f"--output-dir {out} holds part-00002.arff, which this run does not" in second.stderr
    assert {path.name: path.read_bytes() for path in out.iterdir()} == before
    again = on_dask("-q", "--partitions", "5", "--output-dir", out, *ETHICS, OH0, "l2")
    assert again.status == 0 and {path.name: path.read_bytes() for path in out.iterdir()} == before


def test_a_failed_output_dir_run_leaves_no_folder_it_made(on_dask, tmp_path):
    rows = IRIS.read_text().split("@DATA\n", 1)
    bad = tmp_path / "bad.arff"
    bad.write_text(rows[0] + "@DATA\n" + rows[1].replace("6.2,3.4,5.4,2.3", "6.2,x,5.4,2.3"))
    result = on_dask("-q", "--partitions", "3", "--output-dir", tmp_path / "made", bad, "l2")
    assert result.status == 1 and "'x'" in result.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == ["bad.arff"]


def test_more_partitions_than_bytes_of_json_lines_is_the_local_output(local, on_dask, tmp_path):
    """Past 38 partitions of a 38-byte file the first cut sought byte -1: 'Invalid argument'."""
    tiny = tmp_path / "tiny.jsonl"
    tiny.write_text('{"a": 1, "c": "x"}\n{"a": 2, "c": "y"}\n')
    for partitions in ("38", "39", "1000"):
        result = on_dask("--partitions", partitions, "-o", tmp_path / "d.arff", tiny, "l2")
        assert result.status == 0, result.stderr
        assert (tmp_path / "d.arff").read_bytes() == local(tiny, [], ["l2"])


@pytest.mark.parametrize(
    ("address", "words"),
    [
        ("foo", "(ValueError: missing port number in address 'foo')"),
        ("http://127.0.0.1:1", "(ValueError: unknown address scheme 'http'"),
        ("tcp://127.0.0.1:notaport", "(ValueError: invalid literal for int()"),
        ("silent", "(nothing answered as one within 2 s)"),
        ("banner", "no Dask scheduler with workers at tcp://127.0.0.1:"),
        ("", "--scheduler is empty: give the scheduler's address"),
    ],
)
def test_a_scheduler_address_that_is_none_or_does_not_answer_is_one_error_line(
    run_filterkit, dask_distributed, tmp_path, address, words
):
    """Each was a traceback, or (a listener that never answers) a wait for good."""
    import socket

    import dask

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    answering = threading.Thread(target=_ssh_banners, args=(listener,), daemon=True)
    if address == "banner":
        answering.start()
    # a listener's wait is cut at 1 s; an address that is none fails at once, but a loaded CI host can take past 2 s
    # to make the client that finds it (two runs failed so), so it has the default's time
    timeout = "1s" if address in ("silent", "banner") else "30s"
    address = {"silent": "tcp://127.0.0.1:%d", "banner": "tcp://127.0.0.1:%d"}.get(address, address)
    address = address % listener.getsockname()[1] if "%d" in address else address
    with dask.config.set({"distributed.comm.timeouts.connect": timeout}), contextlib.closing(listener):
        result = run_filterkit("--engine", "dask", "--scheduler", address, "-o", tmp_path / "x.arff", IRIS, "l2")
    assert result.status == 1 and words in result.stderr, result.stderr
    assert len(result.stderr.splitlines()) == 1 and not (tmp_path / "x.arff").exists()


def _ssh_banners(listener) -> None:
    """Answer every connection with another service's bytes (an SSH banner), as a mistyped port may."""
    with contextlib.suppress(OSError):
        while True:
            connection, _ = listener.accept()
            connection.sendall(b"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n" * 4)


TIMES = """
from filterkit.hookspecs import hookimpl
from filterkit.schema import Chunk
from filterkit.stage import Stage

FACTOR = {factor}


class Times(Stage):
    name = "times"
    summary = "Multiply every value by FACTOR (test fixture)."

    def transform(self, chunk):
        values = chunk.dense_values().copy()
        values[:, self.features] *= FACTOR
        return Chunk(values, chunk.text, chunk.weights)


@hookimpl
def register_stages(register):
    register(Times)
"""


def test_a_relative_plugins_dir_and_an_edited_plugin_run_as_the_client_runs_them(
    run_filterkit, on_dask, tmp_path, monkeypatch
):
    """A relative --plugins-dir was refused (the workers load it by its absolute path, and the names differed), and
    a worker kept running a plugin as it was before an edit, silently (the other factor's numbers)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plug").mkdir()
    for factor in ("10.0", "1000.0"):
        (tmp_path / "plug" / "times.py").write_text(TIMES.format(factor=factor))
        local = run_filterkit("-o", "local.arff", IRIS, "times", plugins_dir="plug")
        dask = on_dask("-o", "dask.arff", IRIS, "times", plugins_dir="plug")
        assert (local.status, dask.status) == (0, 0), local.stderr + dask.stderr
        assert (tmp_path / "dask.arff").read_bytes() == (tmp_path / "local.arff").read_bytes()
        assert f"{5.1 * float(factor):g}".encode() in (tmp_path / "dask.arff").read_bytes()


UNPICKLED = """
import threading

from filterkit.hookspecs import hookimpl
from filterkit.stage import Stage


class OddError(Exception):
    def __init__(self, what, number):
        super().__init__(what)
        self.lock = threading.Lock()


class Odd(Stage):
    name = "odd"
    summary = "Fail with an error pickle cannot take (test fixture)."

    def transform(self, chunk):
        raise OddError("odd", 2)


class Locked(Stage):
    name = "locked"
    summary = "Keep a state pickle cannot take (test fixture)."
    learns = True

    def new_statistics(self):
        return 0

    def accumulate(self, statistics, chunk):
        return statistics + chunk.n_rows

    def merge(self, first, second):
        return first + second

    def finalize(self, statistics):
        self.lock = threading.Lock()

    def transform(self, chunk):
        return chunk

    def state(self):
        return {"lock": self.lock}

    def load_state(self, state):
        self.lock = state["lock"]


@hookimpl
def register_stages(register):
    register(Odd)
    register(Locked)
"""


def test_a_stage_that_fails_while_being_made_keeps_only_a_cause_pickle_can_take(tmp_path):
    """As a crash during a pass (contract.called): made on a Dask worker, its error crosses with its cause, and an
    unpicklable one (holding a lock) had come back as a bare Exception."""
    import pickle

    from filterkit.errors import FilterkitError

    made = "class Made(Stage):\n    name = 'made'\n    summary = 'x'\n\n    def __init__(self, **params):\n"
    made += "        raise OddError('odd', 2)\n\n\nclass Odd(Stage):"
    text = UNPICKLED.replace("class Odd(Stage):", made).replace("register(Odd)", "register(Odd)\n    register(Made)")
    (tmp_path / "made.py").write_text(text)
    registry = load_plugins(str(tmp_path))
    with pytest.raises(FilterkitError, match="stage 'made' .* failed while being made: OddError: odd") as raised:
        registry.make_stage("made", {})
    assert raised.value.__cause__ is None and raised.value.__context__ is None
    assert pickle.loads(pickle.dumps(raised.value)).message == raised.value.message


@pytest.mark.parametrize(
    ("stage", "words"),
    [
        ("odd", "stage 'odd' (plugin 'unpickled ("),
        ("locked", "its fitted state cannot be sent to the Dask workers (TypeError: cannot pickle '_thread.lock'"),
    ],
)
def test_what_pickle_cannot_take_from_a_plugin_is_one_error_line(on_dask, tmp_path, stage, words):
    """An error whose cause pickle cannot take came back as a bare Exception, and a state pickle cannot take failed
    in Dask's serialization: each a traceback."""
    (tmp_path / "plug").mkdir()
    (tmp_path / "plug" / "unpickled.py").write_text(UNPICKLED)
    result = on_dask("--partitions", "2", "-o", tmp_path / "x.arff", IRIS, stage, "l2", plugins_dir=tmp_path / "plug")
    assert result.status == 1 and words in result.stderr, result.stderr
    assert len(result.stderr.splitlines()) == 1 and not (tmp_path / "x.arff").exists()


def test_saved_model_is_the_local_one_and_apply_reproduces_the_output(run_filterkit, on_dask, tmp_path):
    chain = ["shape", "bns", "select", "--top", "200", "l2"]
    local = run_filterkit("--save-model", tmp_path / "local.json", *ETHICS, OH0, *chain)
    dask = on_dask(
        "--save-model", tmp_path / "dask.json", "-o", tmp_path / "out.arff", "--partitions", "5", *ETHICS, OH0, *chain
    )
    assert local.status == 0 and dask.status == 0, local.stderr + dask.stderr
    # The arrays are in the JSON: the same document is the same arrays, to the bit.
    assert (tmp_path / "dask.json").read_bytes() == (tmp_path / "local.json").read_bytes()
    applied = run_filterkit("apply", tmp_path / "dask.json", OH0)
    assert applied.status == 0, applied.stderr
    assert without_comments(applied.stdout) == without_comments((tmp_path / "out.arff").read_bytes())


def test_workers_load_the_plugins_dir(run_filterkit, on_dask, tmp_path):
    local = run_filterkit(OH0, "meanscale", "l2", plugins_dir=STAGES_DIR)
    result = on_dask("-o", tmp_path / "out.arff", "--partitions", "3", OH0, "meanscale", "l2", plugins_dir=STAGES_DIR)
    assert local.status == 0 and result.status == 0, local.stderr + result.stderr
    assert (tmp_path / "out.arff").read_bytes() == local.stdout


def test_a_file_an_option_names_is_read_by_the_client_not_the_workers(run_filterkit, on_dask, tmp_path, monkeypatch):
    """Issue 37, item 9: ``--stopwords stop.txt`` is relative to the client's folder; the workers run
    in another, where the same name is another list (or nothing). The client reads the file and
    sends it with the tasks."""
    workers_folder = Path.cwd()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "stop.txt").write_text("the\nof\nand\nto\nsaid\n", encoding="utf-8")
    assert not (workers_folder / "stop.txt").exists()
    argv = [REUTERS, "words", "--counts", "--stopwords", "stop.txt"]
    local = run_filterkit(*argv)
    result = on_dask("-o", tmp_path / "out.arff", "--partitions", "3", *argv)
    assert local.status == 0 and result.status == 0, local.stderr + result.stderr
    assert (tmp_path / "out.arff").read_bytes() == local.stdout
    assert b"@attribute said " not in local.stdout and b"@attribute grain " in local.stdout


@pytest.mark.parametrize("during", ["fit", "transform"])
def test_a_failing_stage_on_a_worker_is_reported_as_locally(run_filterkit, on_dask, tmp_path, during):
    local = run_filterkit(IRIS, "explode", "--during", during, plugins_dir=STAGES_DIR)
    result = on_dask("-o", tmp_path / "out.arff", IRIS, "explode", "--during", during, plugins_dir=STAGES_DIR)
    assert local.status == 1 and f"failed during {during}: ZeroDivisionError" in local.stderr
    assert (result.status, result.stderr) == (local.status, local.stderr)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            [*ETHICS, "-o", "OUT", OH0, "select", "--metric", "svm", "--top", "10"],
            "stage 'select' cannot run with --engine dask with these options",
        ),
        (["-o", "OUT", "-", "l2"], "cannot partition standard input"),
        (["-o", "OUT", "--partitions", "2", "PARTS", "l2"], "--partitions splits one file"),
        (["-o", "OUT", "NOWHERE/*.arff", "l2"], "no file matches"),
    ],
    ids=["svm-sample", "stdin", "partitions-of-files", "empty-glob"],
)
def test_what_dask_cannot_run_identically_is_refused(on_dask, tmp_path, argv, message):
    split_rows(IRIS, tmp_path / "parts")
    replace = {
        "OUT": tmp_path / "out.arff",
        "PARTS": tmp_path / "parts",
        "NOWHERE/*.arff": str(tmp_path / "none" / "*.arff"),
    }
    result = on_dask(*[replace.get(a, a) if isinstance(a, str) else a for a in argv])
    assert result.status == 1
    assert message in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--output-dir", "OUT", IRIS, "l2"], "need --engine dask"),
        (["--partitions", "3", IRIS, "l2"], "need --engine dask"),
        (["--workers", "3", IRIS, "l2"], "need --engine dask"),
        (
            ["--engine", "dask", "--scheduler", "tcp://127.0.0.1:1", "--workers", "2", IRIS, "l2"],
            "which --scheduler replaces",
        ),
        (["--engine", "dask", "-o", "OUT/x.arff", "--output-dir", "OUT", IRIS, "l2"], "not both"),
        (["--engine", "dask", "--scheduler", "tcp://127.0.0.1:1", IRIS, "l2"], "give -o FILE or --output-dir DIR"),
    ],
    ids=["output-dir", "partitions", "workers", "workers-and-scheduler", "both-outputs", "remote-stdout"],
)
def test_usage_errors(run_filterkit, tmp_path, argv, message):
    result = run_filterkit(*[str(a).replace("OUT", str(tmp_path)) for a in argv])
    assert result.status == 2
    assert message in result.stderr


class RowNumbering(Stage):
    """A stage whose result depends on each row's position in the whole input."""

    name = "rownumber"

    def needs_row_positions(self) -> bool:
        return True


def test_a_stage_that_needs_row_positions_is_refused_by_its_declaration_naming_it():
    registry = load_plugins()
    runnable = [registry.make_stage("select", {"metric": "ig", "top": 5}), registry.make_stage("l2", {})]
    check_runnable(runnable, str(IRIS))
    for stage in (RowNumbering(), registry.make_stage("select", {"metric": "svm", "top": 5})):
        assert stage.needs_row_positions()
        with pytest.raises(FilterkitError, match=f"stage '{stage.name}' cannot run with --engine dask"):
            check_runnable([*runnable, stage], str(IRIS))


def test_without_dask_the_engine_names_the_extra_to_install(run_filterkit, monkeypatch):
    monkeypatch.setitem(sys.modules, "dask", None)
    monkeypatch.setitem(sys.modules, "dask.distributed", None)
    result = run_filterkit("--engine", "dask", IRIS, "l2")
    assert result.status == 1
    assert "pip install 'filterkit-arff[dask]'" in result.stderr


def test_a_local_run_does_not_import_dask():
    code = "import sys; from filterkit import cli; cli.run(['--help']); assert 'dask' not in sys.modules"
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr


def test_console_script_starts_its_own_local_cluster(filterkit_script, local, scheduler):
    result = filterkit_script("--engine", "dask", IRIS, "minmax", "l2")
    assert (result.status, result.stderr) == (0, "")
    assert result.stdout == local(IRIS, (), ["minmax", "l2"])
