"""Parquet read through pyarrow (filterkit/formats/parquet.py): the same documents as ARFF give the same
bytes, columns typed by their Parquet types, bad files one error line."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from chain_helpers import REAL, ComparedName
from filterkit.arff import read_arff
from filterkit.testing import run_filterkit

needs_pyarrow = pytest.mark.skipif(
    importlib.util.find_spec("pyarrow") is None,
    reason="pyarrow is not installed (pip install 'filterkit-arff[parquet]')",
)

GRAIN = REAL / "reuters_grain_sample.arff"
CHAIN = ("words", "--counts", "--lowercase", "shape", "bns", "l2")


def _filterkit(*args, stdin: bytes = b"") -> bytes:
    result = run_filterkit(*args, stdin=stdin)
    assert result.status == 0, result.stderr
    return result.stdout


def _body(output: bytes) -> bytes:
    """An ARFF output without its relation name and provenance lines."""
    return b"\n".join(line for line in output.split(b"\n") if not line.startswith((b"@relation", b"%")))


def _write(path: Path, columns: dict, row_group_size: int | None = None) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table(columns), path, row_group_size=row_group_size)
    return path


def _grain_columns(rows: slice = slice(None)) -> dict:
    """The ARFF sample's documents (Text) and classes (an int class-att column), as a Hugging Face export holds them."""
    import pyarrow as pa

    _, chunk = read_arff(GRAIN.open("rb"), str(GRAIN))
    return {"Text": chunk.text[0][rows], "class-att": pa.array(chunk.values[rows, 1].astype(int))}


@needs_pyarrow
@pytest.mark.parametrize("chunk_rows", [10000, 7, 1])
def test_documents_give_the_arff_bytes_whatever_the_chunk_size(tmp_path, chunk_rows):
    parquet = _write(tmp_path / "grain.parquet", _grain_columns(), row_group_size=13)
    arff = _filterkit(GRAIN, *CHAIN)
    result = run_filterkit(parquet, "--chunk-rows", chunk_rows, *CHAIN)
    assert result.status == 0
    assert _body(result.stdout) == _body(arff)
    assert result.stderr == (
        f"filterkit: {parquet}: 'Text' read as text (long or mostly distinct values with white space; "
        "--nominal to decide); class 'class-att' of whole numbers read as nominal (--numeric to keep numbers)\n"
    )


@needs_pyarrow
def test_a_model_trained_on_arff_applies_to_parquet_rows(tmp_path):
    model = tmp_path / "m.json"
    _filterkit("--save-model", model, GRAIN, *CHAIN, "-o", tmp_path / "train.arff")
    test_arff = tmp_path / "test.arff"
    schema, chunk = read_arff(GRAIN.open("rb"), str(GRAIN))
    header, rows = GRAIN.read_text(encoding="utf-8").split("@data\n")
    test_arff.write_text(header + "@data\n" + "".join(rows.splitlines(keepends=True)[40:]), encoding="utf-8")
    parquet = _write(tmp_path / "test.parquet", _grain_columns(slice(40, None)))
    expected = _filterkit("apply", model, test_arff)
    assert b"@data\n{" in expected  # word counts of the test rows, not an empty chunk
    assert _body(_filterkit("apply", model, parquet)) == _body(expected)


@needs_pyarrow
def test_a_dictionary_column_is_nominal_in_the_order_rows_first_use_its_labels(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "d.parquet"
    kind = pa.dictionary(pa.int32(), pa.string())
    groups = [(["unused", "b"], [1, 1]), (["c", "b", "a"], [0, 1])]  # each row group its own dictionary
    with pq.ParquetWriter(path, pa.schema([("colour", kind), ("x", pa.int64())])) as writer:
        for dictionary, indices in groups:
            column = pa.DictionaryArray.from_arrays(pa.array(indices, pa.int32()), pa.array(dictionary))
            writer.write_table(pa.table({"colour": column, "x": pa.array(range(len(indices)))}))
    assert pq.ParquetFile(path).num_row_groups == 2
    output = _filterkit(path, "--chunk-rows", "1")
    assert output.split(b"@data\n")[1] == b"b,0\nb,1\nc,0\nb,1\n"
    assert b"@attribute colour {b,c}\n" in output
    assert b"@attribute colour string\n" in _filterkit(path, "--text", "colour")


@needs_pyarrow
def test_nulls_and_nan_are_missing_and_types_read_as_json_lines_reads_them(tmp_path):
    import pyarrow as pa

    columns = {
        "name": ["x", None, "y", "x"],
        "flag": pa.array([True, None, False, True]),
        "count": pa.array([3, None, 5, 7], pa.int32()),
        "ratio": pa.array([0.5, float("nan"), None, 2.0]),
        "code": ["01", "02", "01", None],  # strings of digits are labels, not numbers
        "empty": pa.array([None, None, None, None], pa.null()),
    }
    parquet = _write(tmp_path / "d.parquet", columns)
    lines = tmp_path / "d.jsonl"
    rows = [dict(zip(columns, values)) for values in zip(*(pa.array(c).to_pylist() for c in columns.values()))]
    lines.write_text("".join(json.dumps(row) + "\n" for row in rows))
    output = _filterkit(parquet)
    assert _body(output) == _body(_filterkit(lines))
    assert output.split(b"@data\n")[1] == b"x,true,3,0.5,01,?\n?,?,?,?,02,?\ny,false,5,?,01,?\nx,true,7,2,?,?\n"
    assert b"@attribute flag {true,false}\n@attribute count numeric\n" in output


@needs_pyarrow
@pytest.mark.parametrize("kind_option", ["--nominal", "--text"])
def test_a_column_of_nulls_given_a_kind_is_missing_in_every_row(tmp_path, kind_option):
    """Arrow's null type read as nominal or text: each value missing (its dictionary's one entry is a null,
    which was given to float() and failed as the format's fault)."""
    import pyarrow as pa

    parquet = _write(tmp_path / "n.parquet", {"empty": pa.array([None, None], pa.null()), "c": ["x", "y"]})
    output = _filterkit(kind_option, "empty", parquet)
    assert output.split(b"@data\n")[1] == b"?,x\n?,y\n"


@needs_pyarrow
def test_an_int_label_is_nominal_beside_text_and_numeric_without(tmp_path):
    documents = ["the wheat crop rose", "oil prices fell again", "grain exports grew fast"]
    with_text = _write(tmp_path / "docs.parquet", {"text": documents, "label": [2, 0, 2]})
    assert b"@attribute label {0,2}\n" in _filterkit(with_text)
    assert b"@attribute label numeric\n" in _filterkit(with_text, "--numeric", "label")
    numbers = _write(tmp_path / "numbers.parquet", {"x": [0.5, 1.5, 2.5], "label": [2, 0, 2]})
    assert b"@attribute label numeric\n" in _filterkit(numbers)


@needs_pyarrow
def test_an_int64_past_two_to_the_53_is_its_nearest_double_as_in_csv(tmp_path):
    """An id or hash column (a Hugging Face export's): read as a CSV of the same numbers reads it, where
    pyarrow's checked cast raised ArrowInvalid."""
    import pyarrow as pa

    ids = [1, 2**53 + 1, 2**63 - 1]
    path = _write(tmp_path / "ids.parquet", {"id": pa.array(ids, pa.int64()), "text": ["a b", "c d", "e f"]})
    csv = tmp_path / "ids.csv"
    csv.write_text("id,text\n" + "".join(f"{number},{text}\n" for number, text in zip(ids, ["a b", "c d", "e f"])))
    assert _body(_filterkit(path, "--text", "text")) == _body(_filterkit(csv, "--text", "text"))


@needs_pyarrow
def test_dates_and_timestamps_are_date_attributes_in_milliseconds_utc(tmp_path):
    import datetime

    import pyarrow as pa

    moment = datetime.datetime(2001, 2, 3, 4, 5, 6, 789000)
    before_1970 = datetime.datetime(1960, 1, 1, 0, 0, 0, 999)  # floored to its millisecond, not rounded to 0
    columns = {
        "day": pa.array([datetime.date(2001, 2, 3), None]),
        "zoned": pa.array([moment, moment], pa.timestamp("us", tz="UTC")),
        "naive": pa.array([before_1970, None], pa.timestamp("us")),
    }
    output = _filterkit(_write(tmp_path / "d.parquet", columns))
    assert b"@attribute day date yyyy-MM-dd\n@attribute zoned date 'yyyy-MM-dd\\'T\\'HH:mm:ss.SSS'\n" in output
    assert output.split(b"@data\n")[1] == (
        b"2001-02-03,2001-02-03T04:05:06.789,1960-01-01T00:00:00.000\n?,2001-02-03T04:05:06.789,?\n"
    )


@needs_pyarrow
@pytest.mark.parametrize(
    "unit, ticks", [("ms", 253402300800000), ("ms", -62135596800001), ("us", 253402300800000 * 1000)]
)
def test_a_timestamp_outside_the_years_1_to_9999_is_an_error_naming_its_row(tmp_path, unit, ticks):
    # it was read, and failed only when written: without a row, after the header, `info` exiting 0
    import pyarrow as pa

    path = _write(tmp_path / "d.parquet", {"when": pa.array([0, 1, ticks], pa.timestamp(unit)), "x": [1, 2, 3]})
    for argv in ((path, "-o", tmp_path / "out.arff"), ("info", path)):
        result = run_filterkit(*argv)
        assert (result.status, result.stderr) == (
            1,
            f"filterkit: error: {path}: row 3: the column 'when' holds a date outside the years 1 to 9999\n",
        )
    assert not (tmp_path / "out.arff").exists()


@needs_pyarrow
def test_timestamps_in_seconds_far_from_1970_do_not_wrap_round_into_range():
    # Parquet stores seconds as milliseconds; an Arrow source (a format plugin's) may hold them: times 1000 in
    # int64, 2**64 / 1000 s wrapped round to 1970
    import pyarrow as pa

    from filterkit.arff.dates import LAST_MILLISECOND
    from filterkit.formats.arrow_format import _milliseconds

    seconds = pa.array([18446744073709552, 1, None], pa.timestamp("s"))
    found = _milliseconds(seconds)
    assert found[0] > LAST_MILLISECOND and found[1] == 1000.0 and np.isnan(found[2])


@needs_pyarrow
def test_a_list_column_is_refused_naming_it(tmp_path):
    path = _write(tmp_path / "d.parquet", {"text": ["a b", "c d"], "tags": [["x"], ["y", "z"]]})
    out = tmp_path / "out.arff"
    result = run_filterkit(path, "-o", out)
    assert (result.status, result.stderr) == (
        1,
        f"filterkit: error: {path}: the column 'tags' holds lists (a column of several labels is not read yet): "
        "give it strings, numbers, booleans or dates\n",
    )
    assert not out.exists()


@needs_pyarrow
@pytest.mark.parametrize("damage", ["truncated", "not parquet", "damaged row group"])
def test_a_damaged_file_is_one_error_line_and_exit_1(tmp_path, damage):
    path = _write(tmp_path / "d.parquet", {"x": list(range(1000)), "text": [f"row {i}" for i in range(1000)]}, 500)
    data = bytearray(path.read_bytes())
    if damage == "truncated":
        data = data[: len(data) // 2]
        expected = "not a Parquet file, or a damaged one"
    elif damage == "not parquet":
        data = bytearray(b"x,text\n1,a\n")
        expected = "not a Parquet file, or a damaged one"
    else:
        import pyarrow.parquet as pq

        column = pq.ParquetFile(path).metadata.row_group(1).column(0)
        start = column.data_page_offset + 20
        data[start : start + 200] = b"\xff" * 200
        expected = "row group 2: damaged Parquet data"
    path.write_bytes(bytes(data))
    out = tmp_path / "out.arff"
    result = run_filterkit(path, "-o", out)
    assert result.status == 1
    assert result.stderr.startswith(f"filterkit: error: {path}: {expected} (")
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert not out.exists()


@needs_pyarrow
def test_stdin_is_read_as_parquet_with_from(tmp_path):
    path = _write(tmp_path / "d.parquet", {"x": [1.0, 2.0], "y": ["a", "b"]})
    assert _filterkit("--from", "parquet", "-", stdin=path.read_bytes()).split(b"@data\n")[1] == b"1,a\n2,b\n"


def test_without_pyarrow_the_error_names_the_extra_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # an import of pyarrow fails, as when it is not installed
    monkeypatch.delitem(sys.modules, "filterkit.formats.parquet", raising=False)
    path = tmp_path / "d.parquet"
    path.write_bytes(b"PAR1")
    result = run_filterkit(path, "l2")
    assert (result.status, result.stdout) == (1, b"")
    assert result.stderr == "filterkit: error: reading parquet needs pyarrow: pip install 'filterkit-arff[parquet]'\n"


@needs_pyarrow
def test_applied_rows_name_the_row_of_a_label_the_training_data_lacks(tmp_path):
    model = tmp_path / "m.json"
    train = _write(tmp_path / "train.parquet", {"x": [1.0, 3.0], "colour": ["red", "blue"]})
    _filterkit("--save-model", model, train, "minmax", "-o", tmp_path / "out.arff")
    test = _write(tmp_path / "test.parquet", {"x": [2.0, 2.0, 2.0], "colour": ["blue", "red", "green"]}, 2)
    out = tmp_path / "applied.arff"
    result = run_filterkit("apply", model, test, "-o", out)
    assert result.status == 1 and not out.exists()  # the first row group's rows are not left behind
    assert result.stderr == (
        f"filterkit: error: {test}: row 3: value 'green' is not one of the training labels of 'colour'\n"
    )
    unlabelled = _write(tmp_path / "unlabelled.parquet", {"x": [2.0]})  # a column the file lacks is missing
    assert _filterkit("apply", model, unlabelled).split(b"@data\n")[1] == b"0.5,?\n"


@needs_pyarrow
@pytest.mark.parametrize("chunk_rows", [1, 2, 10000])
@pytest.mark.parametrize("dictionary", [False, True], ids=["strings", "dictionary"])
def test_a_string_that_is_not_utf8_is_one_error_line_naming_its_row(tmp_path, chunk_rows, dictionary):
    import pyarrow as pa

    texts = pa.array([b"ok", b"fine", b"x\xffy", None], pa.binary()).view(pa.string())  # as an unchecked writer
    path = _write(tmp_path / "d.parquet", {"t": texts.dictionary_encode() if dictionary else texts, "x": [1, 2, 3, 4]})
    out = tmp_path / "out.arff"
    for argv in (("--chunk-rows", chunk_rows, path, "-o", out), ("info", path)):
        result = run_filterkit(*argv)
        assert (result.status, result.stderr) == (
            1,
            f"filterkit: error: {path}: row 3: the column 't' holds bytes that are not UTF-8 text "
            "(invalid start byte at byte 2)\n",
        )
    assert not out.exists()


def _read_parquet(path: Path) -> int:
    """Every row of the Parquet file at ``path``, scanned and read a chunk at a time (64 KiB a chunk)."""
    from filterkit.formats import FormatOptions
    from filterkit.formats.parquet import ParquetFormat
    from filterkit.limits import Limits

    reader = ParquetFormat(Limits(chunk_bytes=64 << 10))
    layout = reader.scan(lambda: path.open("rb"), str(path), FormatOptions(None), None)
    with path.open("rb") as stream:
        return sum(chunk.n_rows for chunk in reader.chunks(stream, str(path), layout, 10_000))


@needs_pyarrow
def test_null_columns_cost_memory_as_the_chunk_not_as_rows_times_columns(tmp_path):
    import tracemalloc

    import pyarrow as pa

    peaks = []
    for size in (400, 800):
        path = _write(tmp_path / f"{size}.parquet", {f"c{n}": pa.nulls(size) for n in range(size)})
        tracemalloc.start()
        try:
            assert _read_parquet(path) == size
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
    assert peaks[1] < 2.6 * peaks[0], peaks  # rows × columns: 4 times


@needs_pyarrow
def test_the_columns_are_named_checked_and_read_in_time_linear_in_their_number(tmp_path, monkeypatch):
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema_arrow, made = pq.ParquetFile.schema_arrow, []

    class Named:
        """The file's schema, its names counting their comparisons."""

        def __init__(self, fields):
            self.fields, self.names = fields, [ComparedName(name) for name in fields.names]

        def __iter__(self):
            return iter(self.fields)

        def __getattr__(self, attribute):
            return getattr(self.fields, attribute)

    def counted(parquet):  # pyarrow makes the schema afresh at each access, in time linear in the columns
        made.append(parquet)
        return Named(schema_arrow.fget(parquet))

    monkeypatch.setattr(pq.ParquetFile, "schema_arrow", property(counted))
    width = 2_000
    path = _write(tmp_path / "wide.parquet", {f"c{n}": pa.nulls(20) for n in range(width)})
    ComparedName.made = 0
    assert _read_parquet(path) == 20
    # four schemas and five comparisons a name here; a schema for each column: width, a scan of the names: width² / 2
    assert len(made) <= 8 and ComparedName.made <= 10 * width, (len(made), ComparedName.made)


@needs_pyarrow
def test_an_int64_class_past_two_to_the_53_is_refused_as_in_csv(tmp_path):
    """int64 labels 2**53 + 1 and 2**53 had become one label, 9007199254740992.0."""
    import pyarrow as pa

    columns = {"t": ["hello world", "foo bar", "baz qux"], "c": pa.array([2**53 + 1, 2**53, 1], type=pa.int64())}
    parquet = _write(tmp_path / "big.parquet", columns)
    result = run_filterkit(parquet)
    assert result.status == 1 and "the class 'c' holds '9007199254740993', a whole number past 2**53" in result.stderr


@needs_pyarrow
def test_a_float_column_holding_an_infinity_is_numeric_not_a_class_of_whole_numbers(tmp_path):
    """numpy's floor of inf is inf: a float column of 1, inf, 2 beside documents was taken for a class of whole
    numbers and refused ("'inf', a whole number past 2**53"); JSON Lines read the same values as numbers."""
    path = _write(
        tmp_path / "inf.parquet", {"text": ["the cat sat", "a dog ran", "birds fly"], "score": [1.0, np.inf, 2.0]}
    )
    records = tmp_path / "inf.jsonl"
    records.write_text(
        "".join(
            json.dumps({"text": t, "score": s}) + "\n"
            for t, s in (("the cat sat", 1.0), ("a dog ran", float("inf")), ("birds fly", 2.0))
        )
    )
    read = _filterkit(path)
    assert b"@attribute score numeric" in read and b"'a dog ran',Infinity" in read
    assert _body(read) == _body(_filterkit(records))


@needs_pyarrow
@pytest.mark.parametrize("chunk_rows", ["10000", "1"])
def test_a_dictionary_column_given_numeric_reads_its_labels_as_numbers(tmp_path, chunk_rows):
    # --numeric was ignored: a category of digits stayed nominal, as if the option had not been given
    import pyarrow as pa

    columns = {"size": pa.array(["10", "2.5", None, "10"]).dictionary_encode(), "c": pa.array(["x", "y", "x", "y"])}
    output = _filterkit(_write(tmp_path / "d.parquet", columns), "--numeric", "size", "--chunk-rows", chunk_rows)
    assert b"@attribute size numeric\n" in output
    assert output.split(b"@data\n")[1] == b"10,x\n2.5,y\n?,x\n10,y\n"
    wrong = {"size": pa.array(["10", "big"]).dictionary_encode(), "c": pa.array(["x", "y"])}
    result = run_filterkit(_write(tmp_path / "w.parquet", wrong), "--numeric", "size", "-o", tmp_path / "out.arff")
    assert result.status == 1 and "row 2" in result.stderr and "'big'" in result.stderr
    assert result.stderr.count("\n") == 1 and not (tmp_path / "out.arff").exists()


@needs_pyarrow
@pytest.mark.parametrize("flag", ["--numeric", "--nominal", "--text"])
def test_a_date_column_named_by_a_typing_option_is_refused_naming_both(tmp_path, flag):
    # the option was ignored: the column stayed a date attribute
    import datetime

    import pyarrow as pa

    columns = {"when": pa.array([datetime.datetime(2020, 1, 1)] * 2, pa.timestamp("ms")), "c": pa.array(["x", "y"])}
    path = _write(tmp_path / "d.parquet", columns)
    result = run_filterkit(path, flag, "when", "-o", tmp_path / "out.arff")
    assert result.status == 1 and result.stderr.startswith(f"filterkit: error: {path}: ")
    assert f"{flag} 'when'" in result.stderr and "date" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "out.arff").exists()
