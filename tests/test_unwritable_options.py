"""Option values that no file can hold end in one error line, before any output (issue 47, item 6).

An argument's bytes that are not UTF-8 reach Python as lone surrogates (``$'\\xff'`` is ``'\\udcff'``),
as does a model's JSON ``"\\ud800"``: the provenance line could not be written as UTF-8, and a
``--chunk-rows`` beyond what C's ``Py_ssize_t`` holds overflowed in the readers, after the header was
on stdout.  A file name is not refused (it may be any bytes): its provenance is escaped.
"""

from __future__ import annotations

import json
import os
import re

import pytest

from chain_helpers import REAL, read_bytes
from filterkit.partitions import cut_at_line_ends

IRIS = REAL / "iris.arff"
GRAIN_MODEL = REAL.parent / "models" / "trained-grain.json"
#: A byte that is no UTF-8 text, as a command-line argument (subprocess writes it back as the byte).
NOT_UTF8 = os.fsdecode(b"\xff")


@pytest.fixture
def documents(tmp_path):
    path = tmp_path / "docs.arff"
    path.write_text("@relation d\n@attribute text string\n@attribute class {a,b}\n@data\n'x y',a\n'y z',b\n")
    return path


def one_error_line(result, *words: str) -> None:
    assert "Traceback" not in result.stderr, result.stderr
    assert result.status == 1 and result.stdout == b"", result.stderr
    assert re.fullmatch(r"filterkit: error: [^\n]+\n", result.stderr), result.stderr
    assert all(word in result.stderr for word in words), result.stderr


@pytest.mark.parametrize(
    "argv, option",
    [
        ([IRIS, "remove", "--regex", NOT_UTF8], "--regex"),
        (["{documents}", "words", "--delimiters", NOT_UTF8 + " "], "--delimiters"),
        (["{documents}", "words", "--prefix", NOT_UTF8], "--prefix"),
    ],
    ids=["remove-regex", "words-delimiters", "words-prefix"],
)
def test_an_option_that_is_not_utf8_is_one_error_line(filterkit_script, documents, tmp_path, argv, option):
    output = tmp_path / "out.arff"
    argv = [documents if word == "{documents}" else word for word in argv]
    one_error_line(filterkit_script(*argv), f"option {option}: ", "is not UTF-8 text")
    one_error_line(filterkit_script("-o", output, *argv), option)
    assert not output.exists()


def test_a_model_string_with_a_lone_surrogate_is_refused(run_filterkit, tmp_path):
    model = tmp_path / "m.json"
    assert (
        run_filterkit("--save-model", model, "-o", tmp_path / "out.arff", IRIS, "remove", "--regex", "petal").status
        == 0
    )
    saved = json.loads(model.read_text())
    saved["stages"][0]["params"]["regex"] = "petal\ud800"
    model.write_text(json.dumps(saved))  # ensure_ascii: the surrogate is written "\ud800"
    one_error_line(run_filterkit("apply", model, IRIS), "not a filterkit model", "stages[0].params.regex", "no UTF-8")


@pytest.mark.parametrize(
    "command", [("predict",), ("explain",), ("export", "--onnx", "{out}"), ("export", "--c", "{out}")]
)
@pytest.mark.parametrize("field", ["labels", "relation"])
def test_a_trained_model_s_text_with_a_lone_surrogate_is_refused_at_loading(run_filterkit, tmp_path, command, field):
    # a label holding one loaded: predict crashed writing it (on the rows given that label only), export --onnx
    # crashed, export --c wrote bytes that are no UTF-8, explain printed it escaped
    edited, out, rows = tmp_path / "edited.json", tmp_path / "out", tmp_path / "rows.jsonl"
    saved = json.loads(GRAIN_MODEL.read_text())
    if field == "labels":
        saved["input_schema"]["attributes"][1]["labels"][0] = "0\udc80"  # the label of the empty document
    else:
        saved["input_schema"]["relation"] += "\udc80"
    edited.write_text(json.dumps(saved))  # ensure_ascii: the surrogate is written "\udc80"
    where = "attributes[1].labels[0]" if field == "labels" else "input_schema.relation"
    rows.write_text('{"Text": "wheat"}\n{"Text": ""}\n')
    argv = [out if word == "{out}" else word for word in command]
    result = run_filterkit(*argv[:1], edited, *([] if argv[0] == "export" else [rows]), *argv[1:])
    one_error_line(result, f"{edited}: not a filterkit model", where, "lone surrogate")
    assert not out.exists()


def test_a_model_file_name_that_is_not_utf8_is_escaped_in_the_provenance(filterkit_script, tmp_path):
    model = tmp_path / (NOT_UTF8 + ".json")
    assert filterkit_script("--save-model", model, "-o", tmp_path / "out.arff", IRIS, "l2").status == 0
    result = filterkit_script("apply", model, IRIS)
    assert result.status == 0 and "Traceback" not in result.stderr, result.stderr
    assert result.stdout.startswith(b"% filterkit apply '\\udcff.json': l2 (filterkit ")
    schema, rows = read_bytes(result.stdout)
    assert len(schema) == 5 and rows.n_rows == 150


@pytest.mark.parametrize(
    "command",
    [
        ["{iris}"],
        ["{svm}"],
        ["{iris}", "l2"],
        ["apply", "{model}", "{iris}"],
        ["info", "{iris}"],
        ["--engine", "dask", "{iris}"],
    ],
    ids=["arff", "svmlight", "fitted", "apply", "info", "dask"],
)
def test_chunk_rows_beyond_what_c_holds_is_refused_before_any_output(filterkit_script, tmp_path, command):
    """2**63 overflowed ``Py_ssize_t`` in the readers, after the header was written; now click's range
    check refuses it (a usage error, exit 2, as ``--chunk-rows 0``), and 2**63 - 1 is taken."""
    files = {"{iris}": IRIS, "{svm}": tmp_path / "iris.svm", "{model}": tmp_path / "m.json"}
    assert filterkit_script("-o", files["{svm}"], "--save-model", files["{model}"], IRIS, "l2").status == 0
    argv = [files.get(word, word) for word in command]
    at = 1 if argv[0] in ("apply", "info") else 0
    for rows, status in ((2**63, 2), (2**63 - 1, 0)):
        result = filterkit_script(*argv[:at], "--chunk-rows", rows, *argv[at:])
        assert "Traceback" not in result.stderr and result.status == status, result.stderr
        if status:
            assert result.stdout == b"" and "Invalid value for '--chunk-rows'" in result.stderr, result.stderr


def test_more_partitions_than_lines_cost_the_lines(tmp_path):
    """``--partitions 2**63`` looped 2**63 times to cut a small file; the cuts past the last line are skipped."""
    path = tmp_path / "rows.arff"
    path.write_bytes(b"@data\n" + b"".join(b"%d\n" % k for k in range(100)))
    begin, end = len(b"@data"), os.path.getsize(path)
    every_line = cut_at_line_ends(path, begin, end, end - begin)
    assert len(every_line) == 101  # the rest of the @data line, then each row
    assert cut_at_line_ends(path, begin, end, 2**63) == every_line
    assert cut_at_line_ends(path, begin, end, 4) == [(5, 77), (77, 152), (152, 224), (224, 296)]
