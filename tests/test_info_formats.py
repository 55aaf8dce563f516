"""``filterkit info`` reads every format a chain reads (issue 52, item 6): the same rows as ARFF, CSV and
JSON Lines give the same summary, the relation name and the input's name aside."""

from __future__ import annotations

import json

import pytest
from record_files import write_csv, write_jsonl

from chain_helpers import REAL
from filterkit.formats import FormatOptions
from filterkit.summary import summarize

GRAIN = REAL / "reuters_grain_sample.arff"
IRIS = REAL / "iris.arff"


def info(run_filterkit, *args, stdin: bytes | None = None) -> dict:
    result = run_filterkit("info", "--json", *args, stdin=stdin)
    assert result.status == 0, result.stderr
    return json.loads(result.stdout)


def without_names(document: dict) -> dict:
    return {key: value for key, value in document.items() if key not in ("input", "relation")}


@pytest.fixture(scope="module")
def grain_files(tmp_path_factory):
    """The Reuters grain documents as ARFF, CSV and JSON Lines (the class first in the JSON Lines)."""
    folder = tmp_path_factory.mktemp("grain")
    return (
        GRAIN,
        write_csv(GRAIN, folder / "grain.csv"),
        write_jsonl(GRAIN, folder / "grain.jsonl", ["class-att", "Text"]),
    )


def test_documents_as_arff_csv_and_json_lines_give_one_summary(run_filterkit, grain_files):
    arff, csv, jsonl = grain_files
    documents = [info(run_filterkit, arff), info(run_filterkit, csv), info(run_filterkit, "-c", "first", jsonl)]
    expected = without_names(documents[0])
    assert expected["rows"] == 60 and expected["row_format"] == "dense"
    assert expected["attributes"]["string"] == 1 and expected["features"] == 0
    assert [(e["label"], e["count"]) for e in expected["class"]["labels"]] == [("0", 40), ("1", 20)]
    assert without_names(documents[1]) == expected
    jsonl_summary = without_names(documents[2])
    assert jsonl_summary["class"]["index"] == 1  # the class comes first in the JSON Lines file
    jsonl_summary["class"]["index"] = expected["class"]["index"]
    assert jsonl_summary == expected
    assert (documents[1]["relation"], documents[2]["relation"]) == ("grain", "grain")


def test_numbers_as_csv_and_json_lines_rank_as_the_arff_file(run_filterkit, tmp_path):
    csv, jsonl = write_csv(IRIS, tmp_path / "iris.csv"), write_jsonl(IRIS, tmp_path / "iris.jsonl")
    options = ("--metric", "ig", "--top", "3")
    expected = without_names(info(run_filterkit, *options, IRIS))
    assert [e["name"] for e in expected["ranking"]["features"]] == ["petallength", "petalwidth", "sepallength"]
    assert without_names(info(run_filterkit, *options, csv)) == expected
    assert without_names(info(run_filterkit, *options, jsonl)) == expected


def test_standard_input_is_read_in_the_format_from_names(run_filterkit, grain_files):
    _, csv, _ = grain_files
    document = info(run_filterkit, "--from", "csv", "-", stdin=csv.read_bytes())
    assert (document["input"], document["relation"]) == ("<stdin>", "stdin")
    assert without_names(document) == without_names(info(run_filterkit, GRAIN))


def test_the_reading_options_type_the_columns(run_filterkit, tmp_path):
    csv = write_csv(IRIS, tmp_path / "iris.csv")
    document = info(run_filterkit, "--nominal", "sepallength", "--text", "class", "-c", "first", csv)
    assert document["attributes"] == {
        "total": 5,
        "numeric": 3,
        "nominal": 1,
        "string": 1,
        "date": 0,
        "relational": 0,
    }
    assert document["class"]["name"] == "sepallength" and len(document["class"]["labels"]) == 35


def test_svmlight_rows_are_sparse_and_csv_rows_dense(run_filterkit, tmp_path):
    svm = tmp_path / "iris.svm"
    assert run_filterkit(IRIS, "-o", svm).status == 0
    sparse = info(run_filterkit, svm)
    assert (sparse["row_format"], sparse["sparse_rows"], sparse["dense_rows"]) == ("sparse", 150, 0)
    assert (sparse["rows"], sparse["density"]) == (150, 1.0)
    dense = info(run_filterkit, write_csv(IRIS, tmp_path / "iris.csv"))
    assert (dense["row_format"], dense["sparse_rows"], dense["dense_rows"]) == ("dense", 0, 150)


def test_a_stream_of_csv_is_summarized_by_the_library(grain_files):
    _, csv, _ = grain_files
    with open(csv, "rb") as stream:
        document = summarize(stream, "docs", input_format="csv", options=FormatOptions("last"))
    assert document["input"] == "docs" and document["rows"] == 60


def test_a_malformed_csv_row_is_one_error_line_naming_it(run_filterkit, tmp_path):
    csv = tmp_path / "bad.csv"
    csv.write_text("a,b\n1,x\n2,y,3\n")
    result = run_filterkit("info", csv)
    assert result.status == 1 and result.stdout == b""
    assert result.stderr.startswith(f"filterkit: error: {csv}:3: ") and result.stderr.count("\n") == 1
