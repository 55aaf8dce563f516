"""Documents where practitioners keep them (issue 52): the same documents as ARFF, CSV and JSON Lines
give the same bytes, columns are typed by one documented rule, and JSON Lines is read as documented."""

from __future__ import annotations

import csv
import gzip
import io
import json

import pytest

from chain_helpers import REAL
from filterkit.arff import read_arff

GRAIN = REAL / "reuters_grain_sample.arff"
ROUTE = ("words", "--counts", "--lowercase", "--stopwords", "weka", "shape", "bns", "l2")


def _documents() -> list[tuple[str, str]]:
    """The sample's documents and labels, as the ARFF reader reads them."""
    schema, chunk = read_arff(GRAIN)
    labels = schema.attributes[1].labels
    return [(text, labels[int(code)]) for text, code in zip(chunk.text[0], chunk.values[:, 1].tolist())]


def _as_csv(rows, header=("Text", "class-att")) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue().encode("utf-8")


def _as_jsonl(rows, header=("Text", "class-att"), label=int) -> bytes:
    return "".join(json.dumps({header[0]: text, header[1]: label(y)}) + "\n" for text, y in rows).encode("utf-8")


def _without_relation(output: bytes) -> list[bytes]:
    """An output's lines but its relation name and provenance comments."""
    return [line for line in output.splitlines() if not line.startswith((b"@relation", b"%"))]


def _ok(run_filterkit, *argv, stdin=None):
    result = run_filterkit(*argv, stdin=stdin)
    assert result.status == 0, result.stderr
    return result


@pytest.mark.parametrize("chunk_rows", ["1", "7", "10000"])
def test_the_same_documents_as_arff_csv_and_json_lines_give_the_same_bytes(run_filterkit, tmp_path, chunk_rows):
    rows = _documents()
    files = {
        "csv": tmp_path / "grain.csv",
        "jsonl": tmp_path / "grain.jsonl",
        "csv.gz": tmp_path / "grain.csv.gz",
        "ndjson.gz": tmp_path / "grain.ndjson.gz",
    }
    files["csv"].write_bytes(_as_csv(rows))
    files["jsonl"].write_bytes(_as_jsonl(rows))
    files["csv.gz"].write_bytes(gzip.compress(_as_csv(rows)))
    files["ndjson.gz"].write_bytes(gzip.compress(_as_jsonl(rows, label=str)))
    expected = _without_relation(_ok(run_filterkit, "--chunk-rows", chunk_rows, GRAIN, *ROUTE).stdout)
    assert len(expected) > 1000
    for kind, path in files.items():
        output = _ok(run_filterkit, "--chunk-rows", chunk_rows, path, *ROUTE).stdout
        assert _without_relation(output) == expected, kind


def test_the_shipped_samples_are_the_arff_s_documents(run_filterkit):
    """README's example files: the sample's documents in CSV and JSON Lines."""
    expected = _without_relation(_ok(run_filterkit, GRAIN, *ROUTE).stdout)
    samples = REAL.parent.parent.parent / "arff_samples"
    for name in ("reuters_grain.csv", "reuters_grain.jsonl"):
        assert _without_relation(_ok(run_filterkit, samples / name, *ROUTE).stdout) == expected, name


def test_a_document_column_is_text_and_the_stderr_line_says_so(run_filterkit, tmp_path):
    path = tmp_path / "docs.csv"
    path.write_bytes(_as_csv(_documents()))
    result = _ok(run_filterkit, path)
    schema, _ = read_arff(io.BytesIO(result.stdout))
    assert [(a.name, a.kind) for a in schema.attributes] == [("Text", "string"), ("class-att", "nominal")]
    assert schema.attributes[1].labels == ("0", "1")
    assert result.stderr == (
        f"filterkit: {path}: 'Text' read as text (long or mostly distinct values with white space; "
        "--nominal to decide); class 'class-att' of whole numbers read as nominal (--numeric to keep numbers)\n"
    )


@pytest.mark.parametrize(
    "data, kinds, labels",
    [
        # labels with white space repeat: nominal
        (
            b"text,label\nthe cat sat,New York\na dog ran,New York\nbirds fly high,Los Angeles\nfish swim,New York\n",
            ["string", "nominal"],
            ("New York", "Los Angeles"),
        ),
        # mostly distinct without white space (codes, one-word texts): nominal
        (b"id,label\nx1,a\nx2,b\nx3,a\n", ["nominal", "nominal"], ("a", "b")),
        # half distinct exactly, not more: nominal
        (b"t,c\nhello there,1\nhello there,2\ngood bye,1\ngood bye,2\n", ["nominal", "numeric"], ()),
        # ... unless a value is longer than any label: documents each written twice are text
        (b"t,c\n" + (b"word " * 41 + b",1\n") * 2 + b"good bye,1\ngood bye,2\n", ["string", "nominal"], ("1", "2")),
        # a class of whole numbers stays numeric in a file without documents (Weka's CSVLoader)
        (b"x,c\n1.5,1\n2.5,0\n", ["numeric", "numeric"], ()),
        # the class of whole numbers in a file of documents: nominal, labels in numeric order
        (b"t,c\nsome words here,10\nother words there,2\nmore words,2\n", ["string", "nominal"], ("2", "10")),
        # a number that is not whole keeps the class numeric
        (b"t,c\nsome words here,1.5\nother words there,2\n", ["string", "numeric"], ()),
    ],
)
def test_the_text_rule_and_its_edge_cases(run_filterkit, tmp_path, data, kinds, labels):
    path = tmp_path / "cols.csv"
    path.write_bytes(data)
    schema, _ = read_arff(io.BytesIO(_ok(run_filterkit, path).stdout))
    assert [a.kind for a in schema.attributes] == kinds
    assert schema.attributes[-1].labels == labels


def test_text_nominal_and_numeric_decide_instead_of_the_rules(run_filterkit, tmp_path):
    path = tmp_path / "cols.csv"
    path.write_bytes(b"t,c\nsome words here,1\nother words there,2\nmore words,2\n")
    schema, chunk = read_arff(io.BytesIO(_ok(run_filterkit, path, "--nominal", "t", "--numeric", "c").stdout))
    assert [a.kind for a in schema.attributes] == ["nominal", "numeric"]
    assert chunk.values[:, 1].tolist() == [1, 2, 2]
    result = _ok(run_filterkit, path, "--text", "t,c")
    schema, chunk = read_arff(io.BytesIO(result.stdout))
    assert [a.kind for a in schema.attributes] == ["string", "string"]
    assert chunk.text[1] == ["1", "2", "2"]
    assert result.stderr == ""  # nothing decided by a rule


@pytest.mark.parametrize(
    "argv, message",
    [
        (("--text", "body"), "--text 'body' is not a column (columns: 't', 'c')"),
        (("--text", "t", "--nominal", "t"), "column 't' is given to both --text and --nominal"),
    ],
)
def test_a_wrong_column_option_is_one_error(run_filterkit, tmp_path, argv, message):
    path = tmp_path / "cols.csv"
    path.write_bytes(b"t,c\nsome words,1\n")
    result = run_filterkit(path, *argv, "-o", tmp_path / "out.arff")
    assert (result.status, result.stdout) == (1, b"")
    assert result.stderr.startswith("filterkit: error: ") and message in result.stderr
    assert result.stderr.count("\n") == 1
    assert not (tmp_path / "out.arff").exists()


def test_a_hugging_face_export_works_as_it_is(run_filterkit, tmp_path):
    """``datasets``' ``to_json``: text first, an integer label; every column typed with no option."""
    path = tmp_path / "train.jsonl"
    rows = [("a fine movie with a good plot", 1), ("dull and far too long", 0), ("good acting, good story", 1)]
    path.write_bytes(b"".join(json.dumps({"text": t, "label": y}).encode() + b"\n" for t, y in rows))
    schema, chunk = read_arff(io.BytesIO(_ok(run_filterkit, path).stdout))
    assert [(a.name, a.kind, a.labels) for a in schema.attributes] == [
        ("text", "string", ()),
        ("label", "nominal", ("0", "1")),
    ]
    assert chunk.values[:, 1].tolist() == [1, 0, 1]


def test_json_lines_fields_missing_late_and_typed(run_filterkit, tmp_path):
    """Fields in the order first met, a late field missing before it, null and absence missing, booleans
    labels, a string of digits text (JSON has types), blank lines skipped."""
    path = tmp_path / "f.jsonl"
    path.write_bytes(
        b'{"n": 1, "flag": true, "code": "007"}\n\n'
        b'{"n": null, "flag": false, "code": "8", "late": 2.5}\n'
        b'{"flag": true, "code": "007"}\n'
    )
    schema, chunk = read_arff(io.BytesIO(_ok(run_filterkit, path).stdout))
    assert [(a.name, a.kind, a.labels) for a in schema.attributes] == [
        ("n", "numeric", ()),
        ("flag", "nominal", ("true", "false")),
        ("code", "nominal", ("007", "8")),
        ("late", "numeric", ()),
    ]
    values = chunk.values.tolist()
    assert [[v if v == v else None for v in row] for row in values] == [
        [1, 0, 0, None],
        [None, 1, 1, 2.5],
        [None, 0, 0, None],
    ]


@pytest.mark.parametrize(
    "data, message",
    [
        (b'{"a": 1}\n{"a": {"b": 2}}\n', ":2: the field 'a' holds an object"),
        (b'{"a": 1}\n{"a": ["x", "y"]}\n', ":2: the field 'a' holds an array"),
        (b'{"a": 1}\n[1, 2]\n', ":2: expected a JSON object, found list"),
        (b'{"a": 1}\n{"a": 1,\n', ":2: not JSON"),
        (b'{"a": 1, "a": 2}\n', ":1: the field 'a' appears twice in one object"),
        (b'{"a": "\xff"}\n', ":1: not UTF-8 text"),
        (b"\n\n", ":1: no JSON object with a field"),
    ],
)
def test_bad_json_lines_are_one_error_naming_the_line(run_filterkit, tmp_path, data, message):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(data)
    result = run_filterkit(path, "-o", tmp_path / "out.arff")
    assert (result.status, result.stdout) == (1, b"")
    assert result.stderr.startswith(f"filterkit: error: {path}{message}"), result.stderr
    assert result.stderr.count("\n") == 1
    assert not (tmp_path / "out.arff").exists()


def test_a_model_trained_on_csv_reads_new_documents_as_its_training_data_was_read(run_filterkit, tmp_path):
    """The model records the format: ``apply MODEL -`` reads CSV; a JSON Lines file gives the same rows."""
    rows = _documents()
    train, test = tmp_path / "train.csv", tmp_path / "test.jsonl"
    train.write_bytes(_as_csv(rows[:40]))
    test.write_bytes(_as_jsonl(rows[40:]))
    model = tmp_path / "m.json"
    _ok(run_filterkit, "--save-model", model, "-o", tmp_path / "out.arff", train, *ROUTE)
    assert json.loads(model.read_text())["input"] == {"format": "csv", "options": {}}
    from_stdin = _ok(run_filterkit, "apply", model, "-", stdin=_as_csv(rows[40:])).stdout
    from_jsonl = _ok(run_filterkit, "apply", model, test).stdout
    assert _without_relation(from_stdin) == _without_relation(from_jsonl)
    assert len(_without_relation(from_jsonl)) > 20
    test.write_bytes(b'{"Text": "wheat", "class-att": 1, "source": "x"}\n')
    result = run_filterkit("apply", model, test)
    assert result.status == 1
    assert "the field 'source' is not an attribute of the training data" in result.stderr


def test_a_label_of_whole_numbers_written_otherwise_is_found_by_its_number(run_filterkit, tmp_path):
    """``1.0`` and ``01`` are the label ``1`` of a class of whole numbers (CSV), and a number in a column
    read as text is its text (JSON Lines)."""
    path = tmp_path / "docs.csv"
    path.write_bytes(b"t,c\nsome words here,1.0\nother words there,01\nmore words,2\n")
    schema, chunk = read_arff(io.BytesIO(_ok(run_filterkit, path).stdout))
    assert schema.attributes[1].labels == ("1", "2")
    assert chunk.values[:, 1].tolist() == [0, 0, 1]
    path = tmp_path / "docs.jsonl"
    path.write_bytes(b'{"t": "a few words", "n": 7}\n{"t": 2.5, "n": 7}\n')
    schema, chunk = read_arff(io.BytesIO(_ok(run_filterkit, path, "--text", "t").stdout))
    assert chunk.text[0] == ["a few words", "2.5"]


@pytest.mark.parametrize("chunk_rows", ["1", "1000"])
def test_documents_over_many_blocks_are_cut_into_the_same_rows_and_an_error_names_its_line(
    run_filterkit, tmp_path, chunk_rows
):
    """A CSV of 1.8 MiB of documents spanning lines (rows cut from whole blocks, quoted values crossing
    the blocks' ends) reads as the ARFF does; a row that is not well formed far down names its line."""
    rows = [(f"document {k}\nits second line, \"quoted\" and 'not'\n" * (k % 7 + 1), str(k % 3)) for k in range(9000)]
    path = tmp_path / "many.csv"
    path.write_bytes(_as_csv(rows))
    assert path.stat().st_size > 1 << 20  # more than a block
    schema, chunk = read_arff(io.BytesIO(_ok(run_filterkit, "--chunk-rows", chunk_rows, path).stdout))
    assert chunk.text[0] == [text for text, _ in rows]
    assert [schema.attributes[1].labels[int(code)] for code in chunk.values[:, 1]] == [y for _, y in rows]
    lines = path.read_bytes().split(b"\n")
    line = 2 + sum(text.count("\n") + 1 for text, _ in rows[:8000])
    assert lines[line - 1].startswith(b'"document 8000')
    lines[line - 1] = b"'unclosed" + lines[line - 1]
    path.write_bytes(b"\n".join(lines))
    result = run_filterkit("--chunk-rows", chunk_rows, path)
    assert result.status == 1
    assert result.stderr.startswith(f"filterkit: error: {path}:{line}: "), result.stderr


def test_a_row_past_the_line_bound_far_down_is_refused_naming_its_line(run_filterkit, tmp_path, monkeypatch):
    """The rows a block pattern cannot take (one longer than a line may be) are read line by line from there:
    the bound's error names the row's first line, after 8,000 rows cut from blocks."""
    rows = [(f"document {k}\nits second line, and more\n" * 3, "a" if k % 2 else "b") for k in range(9000)]
    rows[8000] = ("a long document\n" * 8000, "a")
    path = tmp_path / "long.csv"
    path.write_bytes(_as_csv(rows))
    monkeypatch.setenv("FILTERKIT_MAX_LINE_BYTES", "100000")
    result = run_filterkit(path, "--text", "Text")
    line = 2 + sum(text.count("\n") + 1 for text, _ in rows[:8000])
    assert result.status == 1
    assert result.stderr == (
        f"filterkit: error: {path}:{line}: a row longer than 100,000 bytes: refused "
        "(set FILTERKIT_MAX_LINE_BYTES to allow more)\n"
    )


@pytest.mark.parametrize("name", ["out.parquet", "out.pq.gz"])
def test_an_output_named_as_a_format_filterkit_only_reads_is_refused_before_any_work(run_filterkit, tmp_path, name):
    result = run_filterkit(GRAIN, "-o", tmp_path / name)
    assert result.status == 2
    assert "does not write it" in result.stderr and "write arff, svmlight, csv, jsonl" in result.stderr
    assert not (tmp_path / name).exists()


@pytest.mark.slow
def test_evaluate_reads_documents_in_any_format_and_a_test_file_with_the_training_header(run_filterkit, tmp_path):
    """evaluate --test on CSV training documents and a JSON Lines test file scores as on the ARFF pair. The
    test file holds grain articles only: typed on its own, its class would have the one label 1, so it is
    read with the training data's header, as apply reads new rows."""
    rows = _documents()
    split = {"interleaved": (rows[1::2], rows[::2]), "one label": (rows[:45], rows[45:])}
    assert {y for _, y in split["one label"][1]} == {"1"}
    chain = ("words", "--counts", "--lowercase", "l2")
    results = {}
    for kind, (training, testing) in split.items():
        train_arff, test_arff = tmp_path / "train.arff", tmp_path / "test.arff"
        for path, part in ((train_arff, training), (test_arff, testing)):
            lines = ["@relation r", "@attribute Text string", "@attribute class-att {0,1}", "@data"]
            lines += [_arff_string(text) + f",{y}" for text, y in part]
            path.write_text("\n".join(lines) + "\n")
        train_csv, test_jsonl = tmp_path / "train.csv", tmp_path / "test.jsonl"
        train_csv.write_bytes(_as_csv(training))
        test_jsonl.write_bytes(_as_jsonl(testing))
        expected = json.loads(_ok(run_filterkit, "evaluate", "--json", "--test", test_arff, train_arff, *chain).stdout)
        scored = json.loads(_ok(run_filterkit, "evaluate", "--json", "--test", test_jsonl, train_csv, *chain).stdout)
        assert scored["per_fold"] == expected["per_fold"], kind
        results[kind] = expected["per_fold"]
    assert 0.8 < results["interleaved"]["auc"][0] <= 1


def _arff_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n") + "'"


def test_json_lines_with_a_byte_order_mark_crlf_and_blank_lines_and_a_line_past_the_bound(
    run_filterkit, tmp_path, monkeypatch
):
    path = tmp_path / "f.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"a": 1}\r\n  \r\n\t\n{"a": 2}\r\n')
    schema, chunk = read_arff(io.BytesIO(_ok(run_filterkit, path).stdout))
    assert [a.name for a in schema.attributes] == ["a"] and chunk.values[:, 0].tolist() == [1, 2]
    path.write_bytes(b'{"a": 1}\n\n{"a": "' + b"x" * 200 + b'"}\n{"a": 3}\n')
    monkeypatch.setenv("FILTERKIT_MAX_LINE_BYTES", "100")
    result = run_filterkit(path)
    assert result.status == 1
    assert result.stderr == (
        f"filterkit: error: {path}:3: a line longer than 100 bytes: refused "
        "(set FILTERKIT_MAX_LINE_BYTES to allow more)\n"
    )


def test_a_column_of_numbers_then_words_is_typed_by_all_its_values_whatever_the_quoting(run_filterkit, tmp_path):
    """10,000 plain numbers cut by the compiled tokenizer, then 30 titles: the numbers count as distinct
    values, so the column is text whether or not one value is quoted (it was nominal unquoted)."""
    body = "".join(f"{k},{'ab'[k % 2]}\n" for k in range(10000)) + "".join(
        f"title number {k},{'ab'[k % 2]}\n" for k in range(30)
    )
    kinds = set()
    for first in ("0,", '"0",'):
        path = tmp_path / "mix.csv"
        path.write_text("title,label\n" + body.replace("0,", first, 1))
        schema, _ = read_arff(io.BytesIO(_ok(run_filterkit, path).stdout))
        kinds.add(schema.attributes[0].kind)
    assert kinds == {"string"}


def test_a_lone_surrogate_in_json_lines_is_an_error_naming_its_line_and_a_pair_is_text(run_filterkit, tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"t": "a \\ud83d\\ude00 b"}\n{"t": "a \\ud800 b"}\n')
    result = run_filterkit(path, "-o", tmp_path / "out.arff")
    assert (result.status, result.stdout) == (1, b"")
    assert (
        result.stderr
        == f"filterkit: error: {path}:2: a lone surrogate escape (\\ud800 to \\udfff unpaired), which is no text\n"
    )
    path.write_bytes(b'{"t": "a \\ud83d\\ude00 b"}\n')
    _, chunk = read_arff(io.BytesIO(_ok(run_filterkit, path, "--text", "t").stdout))
    assert chunk.text[0] == ["a \U0001f600 b"]


def test_the_class_is_never_text_by_the_rule_and_a_class_of_documents_says_how_to_name_the_class(
    run_filterkit, tmp_path
):
    """Multi-word labels in a small file stay the class's labels; a label,text file under -c last is told to
    name its class."""
    path = tmp_path / "small.csv"
    path.write_bytes(
        b"text,label\ngreat film,very positive\nbad film,negative\nawful film,very negative\nok film,positive\n"
    )
    result = _ok(run_filterkit, path)
    schema, _ = read_arff(io.BytesIO(result.stdout))
    assert [a.kind for a in schema.attributes] == ["string", "nominal"]
    assert "the class 'label' (-c last) reads as text" in result.stderr
    path = tmp_path / "label_first.jsonl"
    path.write_bytes(
        b"".join(json.dumps({"label": k % 3, "text": f"alpha beta {k}"}).encode() + b"\n" for k in range(30))
    )
    result = run_filterkit(path, "words")
    assert result.status == 1
    assert result.stderr.startswith(
        f"filterkit: {path}: the class 'text' (-c last) reads as text, and is read as nominal labels: if it holds the "
        "documents, name the class (-c 'label')\n"
    )
    schema, _ = read_arff(io.BytesIO(_ok(run_filterkit, "-c", "label", path).stdout))
    assert [(a.kind, a.labels) for a in schema.attributes] == [("nominal", ("0", "1", "2")), ("string", ())]


def test_a_chain_that_learns_cuts_a_csv_into_fields_once_for_its_passes(run_filterkit, tmp_path, monkeypatch):
    """The scan keeps its rows' values (in an unlinked file) for the passes after it, which read them instead
    of cutting the file into fields again; the bytes are those of the ARFF, for any chunk size."""
    from filterkit.formats import csv as csv_format

    rows = _documents()
    path = tmp_path / "docs.csv"
    path.write_bytes(_as_csv(rows))
    cut = csv_format._group_columns
    cuts = []

    def counted(group, numbers, width, name):
        cuts.extend(group)
        return cut(group, numbers, width, name)

    expected = _without_relation(_ok(run_filterkit, GRAIN, *ROUTE).stdout)
    monkeypatch.setattr(csv_format, "_group_columns", counted)
    for chunk_rows in ("1", "7", "10000"):
        cuts.clear()
        output = _ok(run_filterkit, "--chunk-rows", chunk_rows, path, *ROUTE).stdout
        assert _without_relation(output) == expected
        assert len(cuts) == len(rows)  # each row once (words, shape and bns learn)


def test_labels_of_numbers_are_read_as_written_when_the_scan_kept_numbers(run_filterkit, tmp_path):
    """A plain column of numbers made nominal (--nominal) keeps its labels as written (1.50, not 1.5) through
    a chain that learns: the scan kept that column as numbers, so the passes read the file instead."""
    path = tmp_path / "plain.csv"
    path.write_bytes(b"a,b\n1,1.50\n2,2\n3,1.50\n")
    for chunk_rows in ("1", "10000"):
        schema, chunk = read_arff(
            io.BytesIO(_ok(run_filterkit, "--chunk-rows", chunk_rows, path, "--nominal", "b", "minmax").stdout)
        )
        assert schema.attributes[1].labels == ("1.50", "2")
        assert chunk.values.tolist() == [[0, 0], [0.5, 1], [1, 0]]


def test_a_late_json_lines_field_is_missing_before_it_in_the_rows_the_scan_kept(run_filterkit, tmp_path):
    """A chain that learns (minmax) reads the scan's kept columns: a field first met on line 3 is missing on
    the lines before it, as when the file is read again."""
    path = tmp_path / "late.jsonl"
    path.write_bytes(
        b'{"y": "p", "a": 1}\n{"y": "q", "a": 3}\n{"y": "p", "a": 2, "b": 10}\n{"y": "q", "a": 5, "b": 20}\n'
    )
    for chunk_rows in ("1", "3", "10000"):
        output = _ok(run_filterkit, "-c", "first", "--chunk-rows", chunk_rows, path, "minmax").stdout
        _, chunk = read_arff(io.BytesIO(output))
        values = [[value if value == value else None for value in row] for row in chunk.values.tolist()]
        assert values == [[0, 0, None], [1, 0.5, None], [0, 0.25, 0], [1, 1, 1]]


def test_a_chain_that_learns_reads_an_svmlight_file_once_after_its_scan(run_filterkit, tmp_path, monkeypatch):
    """A format that keeps nothing of its scan has its first whole pass's chunks kept for the passes after it."""
    from filterkit.formats.svmlight import SvmlightFormat

    path = tmp_path / "data.svm"
    path.write_bytes(b"".join(b"%d 1:%d 2:%d 3:1\n" % (k % 2, k % 5 + 1, k % 3) for k in range(40)))
    read = SvmlightFormat.chunks
    passes = []

    def counted(self, *args):
        passes.append(1)
        yield from read(self, *args)

    expected = _ok(run_filterkit, path, "shape", "bns", "l2").stdout
    monkeypatch.setattr(SvmlightFormat, "chunks", counted)
    assert _ok(run_filterkit, path, "shape", "bns", "l2").stdout == expected
    assert len(passes) == 1


@pytest.mark.parametrize(
    "name, data",
    [
        ("big.csv", b"t,c\nhello world,9007199254740993\nfoo bar,9007199254740992\nbaz qux,1\n"),
        (
            "big.jsonl",
            b'{"t":"hello world","c":9007199254740993}\n{"t":"foo bar","c":9007199254740992}\n{"t":"baz qux","c":1}\n',
        ),
    ],
)
def test_a_class_of_whole_numbers_past_two_to_the_53_is_refused_and_read_as_written_with_nominal(
    run_filterkit, tmp_path, name, data
):
    """Two labels a double cannot tell apart (2**53 + 1 and 2**53) had become one, 9007199254740992.0, silently;
    svmlight's reader refuses such labels too."""
    path = tmp_path / name
    path.write_bytes(data)
    refused = run_filterkit(path)
    assert refused.status == 1 and refused.stdout == b""
    assert refused.stderr == (
        f"filterkit: error: {path}: the class 'c' holds '9007199254740993', a whole number past 2**53 that a double "
        "does not hold exactly (two such labels could become one): --nominal 'c' reads its labels as written\n"
    )
    schema, _ = read_arff(io.BytesIO(_ok(run_filterkit, "--nominal", "c", path).stdout))
    assert schema.attributes[-1].labels == ("9007199254740993", "9007199254740992", "1")


def test_a_value_is_found_by_its_number_only_where_one_label_is_written_as_that_number(run_filterkit, tmp_path):
    """A model's nominal {01,x,1} took ``001`` of a new file for the label ``1``, status 0, where ``01`` is that number
    too: another spelling of a whole number is found by its number only where one label is that number (``1.0`` is
    the ``1`` of {1,2,x}, and of the class of whole numbers of a file of documents)."""
    model = tmp_path / "m.json"
    (tmp_path / "train.csv").write_bytes(b"a,class\n01,p\nx,q\n1,p\n")
    assert run_filterkit("--save-model", model, tmp_path / "train.csv").status == 0
    (tmp_path / "new.csv").write_bytes(b"a,class\n001,q\n")
    refused = run_filterkit("apply", model, tmp_path / "new.csv")
    assert refused.status == 1
    assert refused.stderr.endswith(f"{tmp_path / 'new.csv'}:2: value '001' is not one of the training labels of 'a'\n")
    (tmp_path / "docs.csv").write_bytes(b"t,c\nsome words here,1\nother words there,2\n")
    assert run_filterkit("--save-model", model, tmp_path / "docs.csv").status == 0
    (tmp_path / "new.csv").write_bytes(b"t,c\nsome words,2.0\nother,01\n")
    schema, chunk = read_arff(io.BytesIO(_ok(run_filterkit, "apply", model, tmp_path / "new.csv").stdout))
    assert schema.attributes[1].labels == ("1", "2") and chunk.values[:, 1].tolist() == [1, 0]
    (tmp_path / "mixed.csv").write_bytes(b"a,c\n1,1\n2,2\n3,x\n4,1\n")
    assert run_filterkit("--save-model", model, tmp_path / "mixed.csv").status == 0
    (tmp_path / "new.jsonl").write_bytes(b'{"a": 5, "c": 1.0}\n{"a": 6, "c": "x"}\n')
    schema, chunk = read_arff(io.BytesIO(_ok(run_filterkit, "apply", model, tmp_path / "new.jsonl").stdout))
    assert schema.attributes[1].labels == ("1", "2", "x") and chunk.values[:, 1].tolist() == [0, 2]
