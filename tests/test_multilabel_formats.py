"""Multi-label rows in the other formats (docs/multilabel.md, "Formats"): a JSON Lines array of labels, a CSV
column of labels joined by a separator and svmlight's ``l1,l2`` read as MEKA's label attributes and written back;
MEKA's ``-C`` kept true after any chain; ``info``'s label statistics.  liac-arff reads the ARFF side and
scikit-learn's ``load_svmlight_file(multilabel=True)`` the svmlight side, independently of filterkit."""

from __future__ import annotations

import json
from pathlib import Path

import arff
import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file, load_svmlight_file
from sklearn.preprocessing import MultiLabelBinarizer

REUTERS = Path(__file__).parent / "data" / "multilabel" / "reuters-grain-corn.arff"
#: The relation of the Reuters MEKA file without its -C: a JSON Lines file of this name reads as that relation.
REUTERS_NAME = "Reuters-21578 grain and corn"
CHAIN = ["words", "--counts", "chi", "--presence", "select", "--top", "50", "shape"]


def reuters_rows() -> list[tuple[list[str], str]]:
    """The Reuters MEKA file's rows, read by liac-arff: each document's labels (grain, corn) and its text."""
    data = arff.load(REUTERS.open())
    assert [name for name, _ in data["attributes"]] == ["grain", "corn", "Text"]
    return [
        ([name for name, value in (("grain", g), ("corn", c)) if value == "1"], text) for g, c, text in data["data"]
    ]


def meka_text(rows: list[tuple[list[str], str]], labels: list[str], relation: str) -> str:
    """A MEKA file (liac-arff's writing) of ``rows``, its ``labels`` first in that order."""
    return arff.dumps(
        {
            "relation": relation,
            "attributes": [*((label, ["0", "1"]) for label in labels), ("Text", "STRING")],
            "data": [[*("1" if label in held else "0" for label in labels), text] for held, text in rows],
        }
    )


def meka_labels_last(rows: list[tuple[list[str], str]]) -> dict:
    """liac-arff's MEKA data of ``rows`` with the labels last (``-C -2``), after the text."""
    return {
        "relation": f"{REUTERS_NAME}: -C -2",
        "attributes": [("Text", "STRING"), ("grain", ["0", "1"]), ("corn", ["0", "1"])],
        "data": [[text, "1" if "grain" in held else "0", "1" if "corn" in held else "0"] for held, text in rows],
    }


def without_provenance(text: bytes) -> bytes:
    """ARFF or svmlight text without its comment lines (each run adds its provenance line)."""
    return b"".join(line for line in text.splitlines(keepends=True) if not line.startswith((b"%", b"#")))


def one_error_line(result, path: Path, line: int, words: str) -> None:
    """The run failed with one error line naming ``path`` and ``line``, saying ``words``."""
    assert result.status == 1 and result.stdout == b""
    assert result.stderr.startswith(f"filterkit: error: {path}:{line}: ") and result.stderr.count("\n") == 1
    assert words in result.stderr


@pytest.mark.slow  # the chain over the Reuters documents, for four chunk sizes: about 2 s
def test_json_lines_label_array_gives_the_meka_files_bytes(tmp_path, run_filterkit):
    rows = reuters_rows()
    documents = tmp_path / f"{REUTERS_NAME}.jsonl"
    documents.write_text("".join(json.dumps({"labels": held, "Text": text}) + "\n" for held, text in rows))
    # the labels are sorted (corn before grain): the MEKA file with its labels in that order is the same data
    meka = tmp_path / "meka.arff"
    meka.write_text(meka_text(rows, ["corn", "grain"], f"{REUTERS_NAME}: -C 2"))
    expected = run_filterkit(meka, *CHAIN)
    assert expected.status == 0 and b"@attribute corn {0,1}\n@attribute grain {0,1}\n" in expected.stdout
    for chunk_rows in ("1", "7", "100", "10000"):
        found = run_filterkit("--chunk-rows", chunk_rows, "--labels-column", "labels", documents, *CHAIN)
        assert found.status == 0, found.stderr
        assert found.stdout == expected.stdout


def test_json_lines_labels_are_sorted_whatever_the_row_order(tmp_path, run_filterkit):
    lines = [
        '{"tags": ["b", "a"], "x": 1}',
        '{"tags": [], "x": 2}',
        '{"x": 3}',
        '{"tags": ["c"], "x": 4, "tags2": null}',
    ]
    headers = []
    for order in (lines, lines[::-1]):
        path = tmp_path / "docs.jsonl"
        path.write_text("\n".join(order) + "\n")
        result = run_filterkit("--labels-column", "tags", path)
        assert result.status == 0, result.stderr
        headers.append(result.stdout.split(b"@data")[0])
    assert headers[0] == headers[1]
    header = b"@relation 'docs: -C 3'\n\n@attribute a {0,1}\n@attribute b {0,1}\n@attribute c {0,1}\n@attribute x "
    assert header in headers[0]
    data = arff.loads(run_filterkit("--labels-column", "tags", path).stdout.decode())["data"]
    # rows reversed: c; none (absent); none ([]); a and b
    assert [row[:3] for row in data] == [["0", "0", "1"], ["0", "0", "0"], ["0", "0", "0"], ["1", "1", "0"]]


@pytest.mark.parametrize(
    ("lines", "line", "words"),
    [
        (['{"labels": ["a"], "x": 1}', '{"labels": ["a", 3], "x": 2}'], 2, "holds 3: give it an array of strings"),
        (['{"labels": ["a"], "x": 1}', '{"labels": "a", "x": 2}'], 2, 'holds "a": give it an array of strings'),
        (
            ['{"labels": ["a"], "x": 1}', '{"labels": ["x"], "x": 2}'],
            2,
            "the label 'x' is named like another attribute",
        ),
        (['{"labels": ["a"], "x": 1}', '{"labels": [""], "x": 2}'], 2, "holds an empty label"),
    ],
)
def test_json_lines_bad_labels_are_one_error_naming_the_line(tmp_path, run_filterkit, lines, line, words):
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    output = tmp_path / "out.arff"
    one_error_line(run_filterkit("--labels-column", "labels", "-o", output, path), path, line, words)
    assert not output.exists()


def test_json_lines_array_without_labels_column_names_the_option(tmp_path, run_filterkit):
    path = tmp_path / "docs.jsonl"
    path.write_text('{"labels": ["a"], "x": 1}\n')
    one_error_line(run_filterkit(path), path, 1, "--labels-column")


def random_label_sets(seed: int, rows: int) -> tuple[np.ndarray, list[tuple[int, ...]]]:
    """Sparse non-negative features and label sets of the labels 1, 2, 5 and 10, some rows of none."""
    generator = np.random.default_rng(seed)
    features = generator.integers(0, 4, size=(rows, 6)) * (generator.random((rows, 6)) < 0.4)
    sets = [tuple(label for label in (1, 2, 5, 10) if generator.random() < 0.35) for _ in range(rows)]
    return features.astype(float), sets


def indicator(sets: list[tuple[int, ...]]) -> np.ndarray:
    """The label sets as dump_svmlight_file takes them: a row of 0 and 1 per set, column j for label j."""
    matrix = np.zeros((len(sets), 11), dtype=int)
    for row, labels in enumerate(sets):
        matrix[row, list(labels)] = 1
    return matrix


def test_multilabel_svmlight_reads_as_load_svmlight_file_reads_it(tmp_path, run_filterkit):
    features, sets = random_label_sets(3, 40)
    features[5] = 0
    sets[5] = ()  # a row of no label and no feature: dump_svmlight_file writes it as a blank-ish line
    path = tmp_path / "docs.svm"
    dump_svmlight_file(features, indicator(sets), str(path), multilabel=True, zero_based=False)
    read_x, read_y = load_svmlight_file(str(path), multilabel=True, zero_based=False)
    result = run_filterkit(path)
    assert result.status == 0, result.stderr
    data = arff.loads(result.stdout.decode())
    names = [name for name, _ in data["attributes"]]
    assert data["relation"] == "docs.svm: -C 4" and names[:4] == ["1", "2", "5", "10"]
    values = np.array([[float(value) for value in row] for row in data["data"]])
    kept = [row for row in range(len(sets)) if sets[row] or features[row].any()]  # the blank line is no row
    assert len(values) == len(kept) == read_x.shape[0]
    binarized = MultiLabelBinarizer(classes=[1.0, 2.0, 5.0, 10.0]).fit_transform(read_y)
    np.testing.assert_array_equal(values[:, :4], binarized)
    np.testing.assert_array_equal(values[:, 4:], read_x.toarray())


def test_multilabel_svmlight_round_trips_and_scikit_learn_reads_it_back(tmp_path, run_filterkit):
    features, sets = random_label_sets(5, 30)
    features[3], sets[3] = 0, ()  # written 1:0, which both readers keep as a row
    source = tmp_path / "docs.svm"
    dump_svmlight_file(features, indicator(sets), str(source), multilabel=True, zero_based=False)
    source.write_bytes(source.read_bytes().replace(b"\n \n", b"\n1:0\n"))
    first = tmp_path / "first.arff"
    assert run_filterkit(source, "-o", first).status == 0
    written = tmp_path / "written.svm"
    assert run_filterkit(first, "-o", written).status == 0
    assert run_filterkit(written, "-o", tmp_path / "again.arff").status == 0
    again = without_provenance((tmp_path / "again.arff").read_bytes())
    assert again.replace(b"'written.svm: -C 4'", b"'docs.svm: -C 4'") == without_provenance(first.read_bytes())
    x, y = load_svmlight_file(str(written), multilabel=True, zero_based=False, n_features=6)
    assert [tuple(int(label) for label in labels) for labels in y] == sets
    np.testing.assert_array_equal(x.toarray(), features)
    assert b"\n1:0\n" in written.read_bytes()


@pytest.mark.parametrize("chunk_rows", ["1", "3", "1000"])
def test_multilabel_svmlight_bytes_do_not_depend_on_the_chunk_size(tmp_path, run_filterkit, chunk_rows):
    features, sets = random_label_sets(9, 25)
    path = tmp_path / "docs.svm"
    dump_svmlight_file(features, indicator(sets), str(path), multilabel=True, zero_based=False)
    expected = run_filterkit(path, "l2")
    assert expected.status == 0 and b"@relation 'docs.svm: -C 4'" in expected.stdout
    assert run_filterkit("--chunk-rows", chunk_rows, path, "l2").stdout == expected.stdout


def test_svmlight_names_labels_not_numbers_by_position(tmp_path, run_filterkit):
    result = run_filterkit(REUTERS, "words", "--counts", "--to", "svmlight")
    lines = without_provenance(result.stdout).splitlines()
    reuters = reuters_rows()
    assert len(lines) == len(reuters)
    expected = [",".join(str(["grain", "corn"].index(label)) for label in held) for held, _ in reuters]
    assert [line.split(b" ")[0].decode() if b":" not in line.split(b" ")[0] else "" for line in lines] == expected


@pytest.mark.parametrize(
    ("text", "line", "words", "options"),
    [
        (b"1 1:1\n2,3 2:1\n", 2, "label '2,3': a row of several labels", ["--single-label"]),
        (b"1 1:1\n1.0,3 2:1\n", 2, "labels '1' and '1.0' are one number written two ways", []),
        (b"1,a 1:1\n", 1, "the label 'a' of the label set '1,a' is not a number", []),
        (b"1,2 1:1\n2 3:1 1:1\n", 2, "index 1 after index 3", []),
    ],
)
def test_bad_multilabel_svmlight_is_one_error_naming_the_line(tmp_path, run_filterkit, text, line, words, options):
    path = tmp_path / "bad.svm"
    path.write_bytes(text)
    output = tmp_path / "out.arff"
    one_error_line(run_filterkit(*options, "-o", output, path), path, line, words)
    assert not output.exists()


CSV_DOCUMENTS = (
    "id,tags,body\n"
    "1,sport|politics,the match and the vote\n"
    "2,,nothing tagged here at all\n"
    "3, politics ,a vote again\n"
    '4,"weather|sport",rain stopped play\n'
)


def test_csv_labels_column_round_trips(tmp_path, run_filterkit):
    source = tmp_path / "docs.csv"
    source.write_text(CSV_DOCUMENTS)
    first = tmp_path / "first.csv"
    assert run_filterkit("--labels-column", "tags", source, "-o", first).status == 0
    assert first.read_text() == (
        "tags,id,body\n"
        "politics|sport,1,the match and the vote\n"
        '"",2,nothing tagged here at all\n'
        "politics,3,a vote again\n"
        "sport|weather,4,rain stopped play\n"
    )
    again = run_filterkit("--labels-column", "tags", first, "--to", "csv")
    assert again.stdout == first.read_bytes()
    as_arff = arff.loads(run_filterkit("--labels-column", "tags", source).stdout.decode())
    assert as_arff["relation"] == "docs: -C 3"
    assert [name for name, _ in as_arff["attributes"]] == ["politics", "sport", "weather", "id", "body"]
    assert [row[:3] for row in as_arff["data"]] == [["1", "1", "0"], ["0", "0", "0"], ["1", "0", "0"], ["0", "1", "1"]]


def test_csv_and_json_lines_of_the_same_documents_give_the_same_bytes(tmp_path, run_filterkit):
    csv_path = tmp_path / "docs.csv"
    csv_path.write_text(CSV_DOCUMENTS)
    jsonl_path = tmp_path / "docs.jsonl"
    rows = [line.split(",", 2) for line in CSV_DOCUMENTS.splitlines()[1:]]
    jsonl_path.write_text(
        "".join(
            json.dumps({"id": int(i), "tags": [t.strip() for t in tags.strip('"').split("|") if t.strip()], "body": b})
            + "\n"
            for i, tags, b in rows
        )
    )
    outputs = [run_filterkit("--labels-column", "tags", path, "words", "--counts") for path in (csv_path, jsonl_path)]
    assert outputs[0].status == outputs[1].status == 0
    assert outputs[0].stdout == outputs[1].stdout


@pytest.mark.parametrize(
    ("text", "options", "line", "words"),
    [
        ("id,tags\n1,a|b\n2,a||c\n", [], 3, "holds an empty label"),
        ("id,tags\n1,a|b\n2,id\n", [], 3, "the label 'id' is named like another attribute"),
    ],
)
def test_bad_csv_labels_are_one_error_naming_the_line(tmp_path, run_filterkit, text, options, line, words):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    one_error_line(run_filterkit("--labels-column", "tags", *options, path), path, line, words)


def test_csv_labels_column_must_be_a_column(tmp_path, run_filterkit):
    path = tmp_path / "docs.csv"
    path.write_text("id,tags\n1,a\n")
    result = run_filterkit("--labels-column", "topics", path)
    assert result.status == 1 and result.stdout == b""
    expected = f"filterkit: error: {path}: --labels-column 'topics' is not a column (columns: 'id', 'tags')\n"
    assert result.stderr == expected


def test_meka_labels_last_stay_last_after_words(tmp_path, run_filterkit):
    data = meka_labels_last(reuters_rows())
    path = tmp_path / "last.arff"
    path.write_text(arff.dumps(data))
    for form in ("--dense", "--sparse"):
        result = run_filterkit(path, form, "words", "--counts")
        assert result.status == 0, result.stderr
        written = arff.loads(result.stdout.decode())
        assert written["relation"] == f"{REUTERS_NAME}: -C -2"
        assert [name for name, _ in written["attributes"][-2:]] == ["grain", "corn"]
        labels = [[str(value) for value in row[-2:]] for row in written["data"]]  # a sparse row's 0 is read as 0
        assert labels == [row[1:] for row in data["data"]]


@pytest.mark.slow  # a Dask cluster
def test_dask_engine_lays_out_labels_as_the_local_run(dask_scheduler, tmp_path, run_filterkit):
    rows = reuters_rows()
    documents = tmp_path / "docs.jsonl"
    documents.write_text("".join(json.dumps({"labels": held, "Text": text}) + "\n" for held, text in rows))
    last = tmp_path / "last.arff"
    last.write_text(arff.dumps(meka_labels_last(rows)))
    for path, options in ((documents, ["--labels-column", "labels"]), (last, [])):
        local = run_filterkit(*options, path, "words", "--counts")
        assert local.status == 0, local.stderr
        engine = ["--engine", "dask", "--scheduler", dask_scheduler, "--partitions", "3"]
        output = tmp_path / "dask.arff"
        assert run_filterkit(*engine, *options, "-o", output, path, "words", "--counts").status == 0
        assert output.read_bytes() == local.stdout
    assert b"@attribute grain {0,1}\n@attribute corn {0,1}\n\n@data" in local.stdout


def test_csv_writes_labels_last_for_meka_labels_last(tmp_path, run_filterkit):
    path = tmp_path / "last.arff"
    path.write_text(
        "@relation 'r: -C -2'\n@attribute x numeric\n@attribute a {0,1}\n@attribute b {0,1}\n@data\n3,1,1\n4,0,1\n"
    )
    result = run_filterkit(path, "--to", "csv", "--labels-column", "topics", "--label-separator", ";")
    assert result.stdout == b"x,topics\n3,a;b\n4,b\n"


def test_info_shows_label_cardinality_density_sets_and_frequencies(run_filterkit):
    rows = reuters_rows()
    counts = {label: sum(label in held for held, _ in rows) for label in ("grain", "corn")}
    cardinality = sum(len(held) for held, _ in rows) / len(rows)
    distinct = len({tuple(held) for held, _ in rows})
    result = run_filterkit("info", "--json", REUTERS)
    labels = json.loads(result.stdout)["labels"]
    assert labels["count"] == 2 and labels["distinct_sets"] == distinct == 4
    assert labels["cardinality"] == pytest.approx(cardinality) and labels["density"] == pytest.approx(cardinality / 2)
    assert [(entry["label"], entry["rows"]) for entry in labels["frequency"]] == list(counts.items())
    text = run_filterkit("info", REUTERS).stdout.decode()
    assert "class:       none\n" in text
    said = f"cardinality {cardinality:.4g} a row, density {cardinality / 2:.4g}, 4 distinct label sets\n"
    assert f"labels:      2 (MEKA's -C): {said}" in text


def test_info_counts_labels_apart_from_the_features(run_filterkit, tmp_path):
    """The labels were counted as features: density 1/3 of "3 rows × 3 features" where x is the only one, and a
    missing label among the "non-class values"."""
    path = tmp_path / "two.arff"
    path.write_text(
        "@relation 'r: -C 2'\n@attribute a {0,1}\n@attribute b {0,1}\n@attribute x numeric\n@data\n"
        "1,1,0\n?,0,5\n0,0,?\n"
    )
    document = json.loads(run_filterkit("info", "--json", path).stdout)
    assert (document["features"], document["non_class_attributes"]) == (1, 1)
    assert (document["nonzero_values"], document["values"], document["density"]) == (2, 3, pytest.approx(2 / 3))
    assert (document["missing_values"], document["missing_label_values"]) == (1, 1)
    text = run_filterkit("info", path).stdout.decode()
    assert "density:     0.6667 (2 non-zero of 3 rows × 1 features)\n" in text
    assert "missing:     1 values besides the labels, 1 label values (a missing label counts as not held)\n" in text


def test_json_lines_output_writes_the_labels_as_one_array_and_reads_back(tmp_path, run_filterkit):
    rows = reuters_rows()
    written = run_filterkit(REUTERS, "--to", "jsonl")
    assert written.status == 0, written.stderr
    lines = written.stdout.decode().splitlines()
    assert [json.loads(line) for line in lines] == [{"labels": held, "Text": text} for held, text in rows]
    assert lines[0].startswith('{"labels":[],"Text":')
    path = tmp_path / f"{REUTERS_NAME}.jsonl"
    path.write_bytes(written.stdout)
    again = run_filterkit("--labels-column", "labels", path, "--to", "jsonl")
    # read back, the labels are sorted (corn, grain): the arrays list them so
    assert [json.loads(line)["labels"] for line in again.stdout.decode().splitlines()] == [
        sorted(held) for held, _ in rows
    ]
    as_arff = run_filterkit("--labels-column", "labels", path)
    meka = tmp_path / "meka.arff"
    meka.write_text(meka_text(rows, ["corn", "grain"], f"{REUTERS_NAME}: -C 2"))
    assert without_provenance(as_arff.stdout) == without_provenance(run_filterkit(meka).stdout)


def test_json_lines_output_of_numbers_labels_and_missing_values(tmp_path, run_filterkit):
    path = tmp_path / "mixed.arff"
    path.write_text(
        "@relation 'm: -C -1'\n@attribute x numeric\n@attribute c {'a b',\"q\\\"\"}\n@attribute s string\n"
        "@attribute topic {0,1}\n@data\n1.5,'a b','t',1\n?,?,?,0\n-0,'q\"',é,1\n"
    )
    result = run_filterkit(path, "--to", "jsonl", "--labels-column", "topics")
    assert result.status == 0, result.stderr
    assert result.stdout.decode() == (
        '{"x":1.5,"c":"a b","s":"t","topics":["topic"]}\n'
        '{"x":null,"c":null,"s":null,"topics":[]}\n'
        '{"x":-0.0,"c":"q\\"","s":"é","topics":["topic"]}\n'
    )


def test_json_lines_output_refuses_a_date(tmp_path, run_filterkit):
    path = tmp_path / "dated.arff"
    path.write_text("@relation d\n@attribute when date\n@attribute x numeric\n@data\n'2001-01-01T00:00:00',1\n")
    output = tmp_path / "out.jsonl"
    result = run_filterkit(path, "-o", output)
    assert result.status == 1 and not output.exists()
    assert result.stderr == (
        "filterkit: error: JSON Lines output holds numbers, labels and text: attribute 'when' is date\n"
    )


@pytest.mark.parametrize(
    ("suffix", "label", "output"),
    [
        (".csv", "'a\\x1bb'", "a CSV labels column cannot hold"),
        (".jsonl", "'a\\x1bb'", "a JSON Lines array of labels cannot hold"),
        (".svm", "'a\\x1bb'", "svmlight output cannot hold"),
    ],
)
def test_a_missing_label_is_one_error_naming_its_row_and_label_shown_escaped(
    tmp_path, run_filterkit, suffix, label, output
):
    """Each writer of label sets refuses a row whose label is missing (``?``) as the others do: one line naming
    the row and the label, quoted with its control characters escaped, exit 1 and no output file."""
    path = tmp_path / "missing.arff"
    path.write_text(
        "@relation 'r: -C 2'\n@attribute 'a\\033b' {0,1}\n@attribute b {0,1}\n@attribute x numeric\n"
        "@data\n1,0,3\n?,1,4\n"
    )
    written = tmp_path / f"out{suffix}"
    result = run_filterkit(path, "-o", written)
    assert result.status == 1 and not written.exists()
    assert result.stderr == f"filterkit: error: row 2 has a missing label ({label}), which {output}\n"
