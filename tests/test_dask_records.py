"""``--engine dask`` reads CSV and JSON Lines (issue 52, item 6): the header comes from a scan of the whole
file in the client, the rows are cut into byte ranges between rows (a CSV value's quoted line ends are
never a cut), and the output is the local run's, byte for byte, whatever the partitions.

The engine is driven as ``filterkit.running.run`` drives it (the command line's refusal of non-ARFF
input under Dask is lifted in ``filterkit/commands/chain.py``); the cut itself is checked without Dask."""

from __future__ import annotations

import gzip
import shutil

import pytest
from record_files import write_csv, write_jsonl

from chain_helpers import REAL
from filterkit.errors import FilterkitError
from filterkit.formats import FormatOptions
from filterkit.outputs import checked_output
from filterkit.partitions import count_line_ends, csv_cuts, cut_at_line_ends
from filterkit.plugins import load_plugins
from filterkit.runner import Chain
from filterkit.running import LocalEngine, run

GRAIN = REAL / "reuters_grain_sample.arff"
IRIS = REAL / "iris.arff"
REGISTRY = load_plugins()
#: words --counts --lowercase shape bns l2: the documents' chain, every stage fitted over the partitions
DOCUMENTS_CHAIN = (("words", {"counts": True, "lowercase": True}), ("shape", {}), ("bns", {}), ("l2", {}))


def chain_of(stages, class_spec: str) -> Chain:
    return Chain([REGISTRY.make_stage(name, dict(params)) for name, params in stages], class_spec=class_spec)


def run_on(engine, path, stages, class_spec: str, target, readings: list | None = None) -> bytes:
    """The output of the chain of ``stages`` over ``path`` on ``engine``; the reading a saved model would
    record of the source appended to ``readings``."""
    save = None if readings is None else (lambda source: readings.append(source.reading))
    run(chain_of(stages, class_spec), str(path), engine, checked_output(target), save_model=save)
    return target.read_bytes()


def local_bytes(path, stages, class_spec: str, target, readings: list | None = None) -> bytes:
    return run_on(LocalEngine(7, None, FormatOptions(class_spec)), path, stages, class_spec, target, readings)


def dask_bytes(scheduler, path, stages, class_spec: str, count, target, readings: list | None = None) -> bytes:
    from filterkit.distributed import DaskEngine

    options = FormatOptions(class_spec)
    with DaskEngine.connect(scheduler, None, 7, partitions=count, options=options) as engine:
        return run_on(engine, path, stages, class_spec, target, readings)


@pytest.fixture(scope="module")
def documents(tmp_path_factory):
    """The Reuters grain documents as CSV (quoted values holding line ends) and JSON Lines (class first)."""
    folder = tmp_path_factory.mktemp("documents")
    return {
        "csv": (write_csv(GRAIN, folder / "grain.csv"), "last"),
        "jsonl": (write_jsonl(GRAIN, folder / "grain.jsonl", ["class-att", "Text"]), "first"),
    }


# ------------------------------------------------------------------ the cut, without Dask


def test_a_csv_is_cut_only_between_rows_never_in_a_quoted_line_end(tmp_path):
    rows = [f'{n},"line one of {n}\nline two, still quoted\n""three"""' for n in range(40)]
    path = tmp_path / "quoted.csv"
    path.write_bytes(("id,text\r\n" + "\n".join(rows) + "\n").encode())
    data = path.read_bytes()
    row_starts = {data.index(f'\n{n},"'.encode()) + 1 for n in range(1, 40)}
    begin, ranges = csv_cuts(str(path), 4)
    assert begin == len(b"id,text\r\n") and len(ranges) == 4
    assert ranges[0][0] == begin and ranges[-1][1] == len(data)
    assert all(stop == start for (_, stop), (start, _) in zip(ranges, ranges[1:]))
    assert {start for start, _ in ranges[1:]} <= row_starts
    naive = cut_at_line_ends(str(path), begin, len(data), 4)
    assert any(start not in row_starts for start, _ in naive[1:]), "a plain line cut would fall inside a value"


def test_a_csv_is_cut_after_a_single_quoted_value_holding_a_comma_and_a_double_quote(tmp_path):
    # issue 72: the row loop read ,"y' as opening a double-quoted value, so no cut fell after such a row
    rows = [f"{n:02d},'x,\"y'" for n in range(40)]  # rows of one length: a cut after each
    path = tmp_path / "single.csv"
    path.write_bytes(("id,t\n" + "\n".join(rows) + "\n").encode())
    data = path.read_bytes()
    begin, ranges = csv_cuts(str(path), 40)  # a range a row: the rows were read in pairs
    assert begin == len(b"id,t\n") and ranges[-1][1] == len(data)
    assert [data[start:stop] for start, stop in ranges] == [row.encode() + b"\n" for row in rows]


def test_a_csv_with_cr_line_ends_or_no_rows_is_one_range(tmp_path):
    path = tmp_path / "cr.csv"
    path.write_bytes(b"a,b\r1,2\r3,4\r")
    assert csv_cuts(str(path), 3) == (0, [(0, 12)])
    path.write_bytes(b"\n\na,b\n")
    assert csv_cuts(str(path), 3) == (6, [(6, 6)])


def test_a_stretch_without_line_feed_past_the_line_bound_ends_the_cutting(tmp_path, monkeypatch):
    monkeypatch.setenv("FILTERKIT_MAX_LINE_BYTES", "64")
    path = tmp_path / "long.csv"
    path.write_bytes(b"a,b\n" + b"1,2\n" * 20 + b"3," + b"x" * 100 + b"\n" + b"4,5\n" * 20)
    begin, ranges = csv_cuts(str(path), 4)
    assert begin == 4 and ranges == [(4, 72), (72, path.stat().st_size)]  # cut at 72, stopped at 84


# ------------------------------------------------------------------ on a Dask cluster


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["csv", "jsonl"])
@pytest.mark.parametrize("count", [1, 3])
def test_documents_give_the_local_run_s_bytes(dask_scheduler, documents, tmp_path, kind, count):
    path, class_spec = documents[kind]
    readings: list = []
    expected = local_bytes(path, DOCUMENTS_CHAIN, class_spec, tmp_path / "local.arff", readings)
    assert expected.count(b"\n") > 60 and b"@attribute" in expected
    output = dask_bytes(dask_scheduler, path, DOCUMENTS_CHAIN, class_spec, count, tmp_path / "dask.arff", readings)
    assert output == expected
    assert readings[0][0] == kind and readings[1] == readings[0], "a saved model records how the input was read"


@pytest.mark.slow
def test_numbers_crlf_and_gzip_give_the_local_run_s_bytes(dask_scheduler, tmp_path):
    crlf = tmp_path / "iris.csv"
    crlf.write_bytes(write_csv(IRIS, tmp_path / "plain.csv").read_bytes().replace(b"\n", b"\r\n"))
    packed = tmp_path / "iris.jsonl.gz"
    with gzip.open(packed, "wb") as stream:
        stream.write(write_jsonl(IRIS, tmp_path / "iris.jsonl").read_bytes())
    stages = (("discretize", {}), ("l2", {}))
    for path in (crlf, packed):
        expected = local_bytes(path, stages, "last", tmp_path / "local.arff")
        assert dask_bytes(dask_scheduler, path, stages, "last", 3, tmp_path / "dask.arff") == expected


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["csv", "jsonl"])
def test_a_bad_row_is_reported_at_its_line_in_the_file(dask_scheduler, tmp_path, kind):
    source = write_csv(IRIS, tmp_path / "iris.csv") if kind == "csv" else write_jsonl(IRIS, tmp_path / "iris.jsonl")
    lines = source.read_bytes().split(b"\n")
    line = 140 if kind == "csv" else 139  # the CSV's header row is its line 1
    lines[line - 1] = b"5.0,3.3,1.4,0.2" if kind == "csv" else b'{"sepallength": [1]}'
    bad = tmp_path / f"bad.{kind}"
    bad.write_bytes(b"\n".join(lines))
    stages = (("l2", {}),)
    with pytest.raises(FilterkitError) as local:
        local_bytes(bad, stages, "last", tmp_path / "local.arff")
    assert (local.value.path, local.value.line) == (str(bad), line)
    assert count_line_ends(str(bad), bad.stat().st_size) > line
    with pytest.raises(FilterkitError) as on_dask:
        dask_bytes(dask_scheduler, bad, stages, "last", 3, tmp_path / "dask.arff")
    assert str(on_dask.value) == str(local.value)
    assert not (tmp_path / "dask.arff").exists()


@pytest.mark.slow
def test_a_folder_of_csv_parts_is_refused_naming_the_file(dask_scheduler, tmp_path):
    parts = tmp_path / "parts"
    parts.mkdir()
    shutil.copy(write_csv(IRIS, tmp_path / "iris.csv"), parts / "a.csv")
    with pytest.raises(FilterkitError, match=r"reads a folder or pattern of ARFF files only, and .*a\.csv is not one"):
        dask_bytes(dask_scheduler, f"{parts}/*.csv", (("l2", {}),), "last", None, tmp_path / "dask.arff")


@pytest.mark.slow
def test_the_command_line_runs_a_csv_of_documents_on_dask(run_filterkit, dask_scheduler, documents, tmp_path):
    path, _ = documents["csv"]
    chain = ["words", "--counts", "--lowercase", "shape", "bns", "l2"]
    local = run_filterkit(path, *chain)
    assert local.status == 0, local.stderr
    argv = ["--engine", "dask", "--scheduler", dask_scheduler, "--partitions", "3", "-o", tmp_path / "out.arff"]
    result = run_filterkit(*argv, path, *chain)
    assert result.status == 0, result.stderr
    assert (tmp_path / "out.arff").read_bytes() == local.stdout
