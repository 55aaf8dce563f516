"""JSON Lines read a line at a time (issue 72): each line is one object or an error naming it at any chunk
size, bad text is refused where it is read, ``-0`` keeps its sign, and a file of many sparse fields costs
memory as its chunks, not as rows × fields; the typing step's name lookups take linear time."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from chain_helpers import ComparedName
from filterkit.formats import FormatOptions
from filterkit.formats.jsonl import JsonLinesFormat
from filterkit.formats.records import ColumnTyping, layout_by_name
from filterkit.limits import Limits
from filterkit.schema import NUMERIC, Attribute, Schema

CHUNK_ROWS = ["1", "3", "10000"]


def _refused(run_filterkit, tmp_path: Path, argv: tuple, line: int, words: str) -> None:
    """The run of ``argv`` (its input ``tmp_path/in.jsonl``) fails with one error line naming ``line``, and
    writes no ``-o`` file."""
    output = tmp_path / "out.arff"
    result = run_filterkit(*argv, "-o", output)
    assert result.status == 1
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith(f"filterkit: error: {tmp_path / 'in.jsonl'}:{line}: ")
    assert words in result.stderr
    assert not output.exists()


def _rows_of_both(run_filterkit, tmp_path: Path, jsonl: str, csv: str, *argv) -> list[bytes]:
    """The data rows that ``argv`` and the same values as JSON Lines and as CSV give, each run exiting 0."""
    (tmp_path / "in.jsonl").write_text(jsonl)
    (tmp_path / "in.csv").write_text(csv)
    outputs = [run_filterkit(*argv, tmp_path / name) for name in ("in.jsonl", "in.csv")]
    assert [result.status for result in outputs] == [0, 0], [result.stderr for result in outputs]
    return [result.stdout.split(b"@data\n")[1] for result in outputs]


@pytest.mark.parametrize("chunk_rows", CHUNK_ROWS)
def test_lines_that_are_no_object_each_but_one_array_together_are_refused(run_filterkit, tmp_path, chunk_rows):
    path = tmp_path / "in.jsonl"
    path.write_text('{"labels":["a"]}\n{"labels":["a"\n"b"]},{"labels":["c"]},{"labels":["d"\n"e"]}\n')
    argv = ("--labels-column", "labels", "--chunk-rows", chunk_rows, path)
    _refused(run_filterkit, tmp_path, argv, 2, "not JSON")


@pytest.mark.parametrize("chunk_rows", CHUNK_ROWS)
@pytest.mark.parametrize(
    "line, words",
    [
        ('{"a":' + "[" * 1000 + "]" * 1000 + "}", "nested too deeply"),
        ('{"a":"x\xed\xa0\x80y"}', "not UTF-8"),  # a surrogate encoded as UTF-8, which no UTF-8 text holds
        ('{"a":"x\\ud800y"}', "lone surrogate"),
        ('{"\\udfff":"x"}', "lone surrogate"),
    ],
    ids=["nested", "surrogate-bytes", "surrogate-escape", "surrogate-field"],
)
def test_bad_text_is_one_error_line_naming_it_at_reading(run_filterkit, tmp_path, chunk_rows, line, words):
    path = tmp_path / "in.jsonl"
    path.write_bytes(b'{"a":"p","c":"x"}\n' + line.encode("latin-1") + b'\n{"a":"q","c":"y"}\n')
    _refused(run_filterkit, tmp_path, ("--chunk-rows", chunk_rows, path), 2, words)
    info = run_filterkit("info", path)
    assert info.status == 1 and info.stderr.startswith(f"filterkit: error: {path}:2: ") and words in info.stderr


@pytest.mark.parametrize("chunk_rows", CHUNK_ROWS)
def test_minus_zero_keeps_its_sign_as_csv_reads_it(run_filterkit, tmp_path, chunk_rows):
    jsonl, csv = '{"x":-0,"y":-0.0,"c":"a"}\n{"x":1e-05,"y":2,"c":"b"}\n', "x,y,c\n-0,-0.0,a\n1e-05,2,b\n"
    rows = _rows_of_both(run_filterkit, tmp_path, jsonl, csv, "--chunk-rows", chunk_rows)
    assert rows[0] == rows[1] == b"-0,-0,a\n1e-05,2,b\n"


def test_minus_zero_is_written_as_a_json_number_that_keeps_its_sign(run_filterkit, tmp_path):
    # written as the integer -0, which Python's json and pandas read as 0
    import math

    path = tmp_path / "zeros.arff"
    path.write_text("@relation r\n@attribute x numeric\n@attribute y numeric\n@data\n-0,1.5\n0,-0.0\n")
    written = run_filterkit(path, "--to", "jsonl").stdout
    assert written == b'{"x":-0.0,"y":1.5}\n{"x":0,"y":-0.0}\n'
    rows = [json.loads(line) for line in written.splitlines()]
    assert [math.copysign(1, row["x"]) for row in rows] == [-1, 1] and math.copysign(1, rows[1]["y"]) == -1
    (tmp_path / "zeros.jsonl").write_bytes(written)
    assert run_filterkit(tmp_path / "zeros.jsonl").stdout.endswith(b"@data\n-0,1.5\n0,-0\n")


@pytest.mark.parametrize("chunk_rows", CHUNK_ROWS)
def test_minus_zero_in_a_column_of_labels_is_the_label_minus_zero_as_csv_reads_it(run_filterkit, tmp_path, chunk_rows):
    # -0 read as the float -0.0 was the label '-0.0'
    (tmp_path / "in.jsonl").write_text('{"a":-0}\n{"a":"x"}\n{"a":0}\n')
    (tmp_path / "in.csv").write_text("a\n-0\nx\n0\n")
    outputs = [run_filterkit("--chunk-rows", chunk_rows, tmp_path / name) for name in ("in.jsonl", "in.csv")]
    assert [result.status for result in outputs] == [0, 0]
    headers = [result.stdout.split(b"\n\n@data\n")[0].rsplit(b"\n", 1)[1] for result in outputs]
    assert headers[0] == headers[1] == b"@attribute a {-0,x,0}"


def test_a_label_is_its_value_as_written_whatever_its_json_type(run_filterkit, tmp_path):
    """docs/documents.md: the number 1 and the string "1" are one label, 1 and 1.0 two, as CSV reads them."""
    (tmp_path / "in.jsonl").write_text('{"a":1}\n{"a":"1"}\n{"a":1.0}\n{"a":"x"}\n')
    (tmp_path / "in.csv").write_text("a\n1\n1\n1.0\nx\n")
    outputs = [run_filterkit(tmp_path / name) for name in ("in.jsonl", "in.csv")]
    assert [result.status for result in outputs] == [0, 0]
    for result in outputs:
        header, rows = result.stdout.split(b"\n\n@data\n")
        assert header.rsplit(b"\n", 1)[1] == b"@attribute a {1,1.0,x}" and rows == b"1\n1\n1.0\nx\n"


def test_a_label_of_a_fraction_or_an_exponent_is_the_shortest_text_of_its_double(run_filterkit, tmp_path):
    """docs/documents.md: 1e3, 1E3 and 1000.0 are the one label 1000.0 (JSON's numbers are read as values), where CSV
    keeps the three texts as written."""
    (tmp_path / "in.jsonl").write_text('{"a":1e3}\n{"a":1E3}\n{"a":1000.0}\n{"a":0.10}\n')
    (tmp_path / "in.csv").write_text("a\n1e3\n1E3\n1000.0\n0.10\n")
    read = {name: run_filterkit(tmp_path / name, "--nominal", "a") for name in ("in.jsonl", "in.csv")}
    assert [result.status for result in read.values()] == [0, 0]
    headers = {name: result.stdout.split(b"\n\n@data\n")[0].rsplit(b"\n", 1)[1] for name, result in read.items()}
    assert headers == {"in.jsonl": b"@attribute a {1000.0,0.1}", "in.csv": b"@attribute a {1e3,1E3,1000.0,0.10}"}


def test_a_group_s_lines_are_read_as_each_line_alone_reads():
    """The group's lines read in place by the decoder's scanner (``_objects_line_by_line``) against each line
    decoded alone, on 4,000 seeded groups of pieces where they could part: objects split over lines, two
    objects on a line, white space around them, arrays, numbers, -0, bad text."""
    import random

    from filterkit.errors import ArffError
    from filterkit.formats import jsonl

    pieces = [
        '{"a":1}',
        '{"b":"x"}',
        "{",
        "}",
        '"a":',
        "[",
        "]",
        ",",
        " ",
        "\t",
        "-0",
        "2",
        '"s"',
        "\n",
        "{}",
        '{"c":[1,',
    ]
    chooser = random.Random(72)

    def alone(lines: list[bytes], checked: bool):
        try:
            decoder = json.JSONDecoder(object_pairs_hook=jsonl._fields_once if checked else None)
            found = [decoder.decode(line.decode()) for line in lines]
        except ValueError:
            return "refused"
        return found if all(type(one) is dict for one in found) else "refused"

    agreed = 0
    for _ in range(4000):
        text = "".join(chooser.choices(pieces, k=chooser.randint(1, 12)))
        lines = [line.encode() for line in text.split("\n") if line.strip()]
        if not lines:
            continue
        for checked in (False, True):
            try:
                read = jsonl._objects(lines, list(range(1, len(lines) + 1)), "f", checked)
            except ArffError:
                read = "refused"
            expected = alone(lines, checked)
            assert json.dumps(read) == json.dumps(expected), lines
            agreed += read != "refused"
    assert agreed > 100  # groups read, besides the many refused


def _peak(function) -> int:
    """The most bytes traced while ``function`` runs."""
    tracemalloc.start()
    try:
        function()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _read(path: Path, labels_column: str | None = None) -> int:
    """Every row of the JSON Lines at ``path``, scanned and read a chunk at a time (64 KiB of text a chunk)."""
    reader = JsonLinesFormat(Limits(chunk_bytes=64 << 10))
    options = FormatOptions(None, labels_column=labels_column)
    layout = reader.scan(lambda: path.open("rb"), str(path), options, None)
    with path.open("rb") as stream:
        return sum(chunk.n_rows for chunk in reader.chunks(stream, str(path), layout, 10_000))


@pytest.mark.parametrize("labels", [False, True], ids=["fields", "labels"])
def test_a_new_field_or_label_a_line_costs_memory_as_the_file_grows_not_as_rows_times_fields(tmp_path, labels):
    peaks = []
    for lines in (600, 1200):
        path = tmp_path / f"{lines}.jsonl"
        records = ({"x": n, "labels": [f"l{n}"]} if labels else {f"f{n}": n} for n in range(lines))
        path.write_text("".join(json.dumps(record) + "\n" for record in records))
        assert _read(path, "labels" if labels else None) == lines
        peaks.append(_peak(lambda: _read(path, "labels" if labels else None)))
    assert peaks[1] < 2.6 * peaks[0], peaks  # rows × fields: 4 times


def test_the_typing_finds_given_columns_and_a_model_s_attributes_in_linear_time():
    width = 10_000
    names = [ComparedName(f"c{n}") for n in range(width)]
    others = [ComparedName(name) for name in names]  # equal names, other objects: a scan compares each
    ComparedName.made = 0
    typing = ColumnTyping(names, "f", Limits(), text=others[::2], nominal=others[1::2])
    assert len(typing.text) == len(typing.nominal) == width // 2
    schema = Schema("r", tuple(Attribute(name, NUMERIC) for name in names))
    assert layout_by_name(schema, others[: width // 2], "f", 0, "field").absent == tuple(names[width // 2 :])
    assert ComparedName.made <= 4 * width  # three a name here; a scan of the names for each, about width² / 4


def _engine_run(engine, path: Path, target: Path) -> bytes:
    """The output of ``l2`` over ``path`` (class last) on ``engine``."""
    from filterkit.outputs import checked_output
    from filterkit.plugins import load_plugins
    from filterkit.runner import Chain
    from filterkit.running import run

    chain = Chain([load_plugins().make_stage("l2", {})], class_spec="last")
    run(chain, str(path), engine, checked_output(target))
    return target.read_bytes()


@pytest.mark.slow
@pytest.mark.parametrize("case", ["wide", "minus-zero", "joined-lines", "surrogate-bytes"])
def test_dask_reads_json_lines_as_the_local_run(dask_scheduler, tmp_path, case):
    from filterkit.distributed import DaskEngine
    from filterkit.errors import FilterkitError
    from filterkit.running import LocalEngine

    lines = [json.dumps({f"f{n}": n, "c": "ab"[n % 2]}) for n in range(300)]
    if case == "minus-zero":
        lines[150] = '{"f1": -0, "c": "a"}'
    elif case == "joined-lines":
        lines[150:153] = ['{"f1":[1', '2]},{"f1":3},{"f1":[4', '5], "c": "a"}']
    elif case == "surrogate-bytes":
        lines[150] = '{"f1": 1, "c": "a\xed\xa0\x80"}'
    path = tmp_path / "in.jsonl"
    path.write_bytes(("\n".join(lines) + "\n").encode("latin-1"))
    options = FormatOptions("last")
    with DaskEngine.connect(dask_scheduler, None, 7, partitions=3, options=options) as engine:
        on_dask = lambda: _engine_run(engine, path, tmp_path / "dask.arff")  # noqa: E731
        if case in ("wide", "minus-zero"):
            local = _engine_run(LocalEngine(7, None, options), path, tmp_path / "local.arff")
            assert on_dask() == local and local.count(b"\n") > 600  # a row and an attribute each, a line
            assert (b",-0," in local) == (case == "minus-zero")
            return
        with pytest.raises(FilterkitError) as error:
            on_dask()
    assert (error.value.path, error.value.line) == (str(path), 151)
    assert not (tmp_path / "dask.arff").exists()


def test_a_wide_sparse_chunk_is_written_a_block_of_rows_at_a_time_as_the_same_bytes(monkeypatch):
    """The writer had made the whole chunk dense and joined its every line at once: 3 GB for oh0 shaped one-vs-rest
    (1,003 rows × 31,821 columns), where the ARFF and CSV writers hold a block of about a million cells."""
    import io

    import scipy.sparse as sp

    from filterkit.formats import jsonl
    from filterkit.schema import NUMERIC, Attribute, Chunk, Schema

    width, rows = 2_000, 300
    schema = Schema("wide", tuple(Attribute(f"w{j}", NUMERIC) for j in range(width)))
    chunk = Chunk(sp.random(rows, width, density=0.001, format="csr", random_state=1), {})

    def written(cells: int) -> bytes:
        monkeypatch.setattr(jsonl, "_BLOCK_CELLS", cells)
        stream = io.BytesIO()
        jsonl.JsonLinesWriter(stream, schema, FormatOptions(None)).write(chunk)
        return stream.getvalue()

    whole = written(rows * width)
    assert written(width * 7) == whole and whole.count(b"\n") == rows
    discarded = type("Discarded", (), {"write": lambda self, data: None})()
    monkeypatch.setattr(jsonl, "_BLOCK_CELLS", width * 7)
    blocked = _peak(lambda: jsonl.JsonLinesWriter(discarded, schema, FormatOptions(None)).write(chunk))
    monkeypatch.setattr(jsonl, "_BLOCK_CELLS", rows * width)
    at_once = _peak(lambda: jsonl.JsonLinesWriter(discarded, schema, FormatOptions(None)).write(chunk))
    assert blocked * 10 < at_once, (blocked, at_once)


@pytest.mark.parametrize("chunk_rows", CHUNK_ROWS)
def test_an_integer_past_a_double_s_range_is_infinity_as_csv_reads_its_digits(run_filterkit, tmp_path, chunk_rows):
    # an integer of 401 digits was an error where 1e400 (and the same digits in CSV or ARFF) read as Infinity
    digits = "1" + "0" * 400
    jsonl = f'{{"x":{digits},"c":"a"}}\n{{"x":-{digits},"c":"b"}}\n{{"x":1e400,"c":"a"}}\n'
    csv = f"x,c\n{digits},a\n-{digits},b\n1e400,a\n"
    rows = _rows_of_both(run_filterkit, tmp_path, jsonl, csv, "--chunk-rows", chunk_rows)
    assert rows[0] == rows[1] == b"Infinity,a\n-Infinity,b\nInfinity,a\n"


@pytest.mark.parametrize("chunk_rows", CHUNK_ROWS)
def test_strings_of_a_field_given_numeric_are_read_as_csv_reads_them(run_filterkit, tmp_path, chunk_rows):
    # a string under --numeric was "not a number" ("10" too): a field given --numeric read no string at all
    jsonl = '{"a":"10","c":"x"}\n{"a":" 2.5","c":"y"}\n{"a":1,"c":"y"}\n{"a":null,"c":"x"}\n'
    csv = 'a,c\n10,x\n" 2.5",y\n1,y\n?,x\n'
    rows = _rows_of_both(run_filterkit, tmp_path, jsonl, csv, "--numeric", "a", "--chunk-rows", chunk_rows)
    assert rows[0] == rows[1] == b"10,x\n2.5,y\n1,y\n?,x\n"
    (tmp_path / "in.jsonl").write_text('{"a":"10","c":"x"}\n{"a":"ten","c":"y"}\n')
    _refused(run_filterkit, tmp_path, ("--numeric", "a", "--chunk-rows", chunk_rows, tmp_path / "in.jsonl"), 2, "'ten'")


def test_a_string_in_a_model_s_numeric_attribute_reads_as_csv_reads_it(run_filterkit, tmp_path):
    """docs/documents.md: a numeric attribute of a model's header reads a JSON string as CSV reads the field (it
    was an error): "3.5" is 3.5, "NaN" missing, "x" an error naming its line."""
    (tmp_path / "train.jsonl").write_text('{"x": 1, "c": "a"}\n{"x": 2, "c": "b"}\n')
    model = tmp_path / "m.json"
    assert run_filterkit("--save-model", model, "-o", tmp_path / "o.arff", tmp_path / "train.jsonl", "l2").status == 0
    (tmp_path / "in.jsonl").write_text('{"x": "3.5", "c": "a"}\n{"x": "NaN", "c": "b"}\n')
    applied = run_filterkit("apply", model, tmp_path / "in.jsonl")
    assert applied.status == 0, applied.stderr
    assert applied.stdout.split(b"@data\n")[1] == b"1,a\n?,b\n"
    (tmp_path / "in.jsonl").write_text('{"x": "3.5", "c": "a"}\n{"x": "x", "c": "b"}\n')
    _refused(run_filterkit, tmp_path, ("apply", model, tmp_path / "in.jsonl"), 2, "'x'")
