"""Which files the reader accepts and rejects, and how it reports a rejection.

Weka 3.6 is the reference (tests/data/conformance/README.md): a file Weka
reads must read, with the row and attribute counts Weka saw; a file Weka
rejects must be rejected with an ArffError naming the file and the line.
"""

from __future__ import annotations

import pytest

from arff_helpers import (
    CONFORMANCE,
    INDEX,
    REAL_FILES,
    conformance_files,
    read_all,
    rejected_files,
    valid_files,
    weka_shape,
)
from filterkit.arff import read_arff
from filterkit.errors import ArffError


def test_expectations_match_what_weka_did():
    # The valid/reject split the tests use is exactly Weka's: this guards the
    # selection rules (e.g. 'reject (scipy only)' files are ones Weka reads).
    for name in conformance_files():
        assert (weka_shape(name) is not None) == (name in valid_files()), name
    assert len(valid_files()) == 72
    assert len(rejected_files()) == 20


@pytest.mark.parametrize("name", valid_files())
def test_valid_conformance_file_reads_with_wekas_shape(name):
    schema, chunk = read_all(CONFORMANCE / name)
    assert (chunk.n_rows, len(schema)) == weka_shape(name)


@pytest.mark.parametrize(
    "name", ["scipy/test8.arff", "ARFFFiles-jl/load_jl__sparse_non_missable_date_errors__arff.arff"]
)
def test_file_only_another_parser_rejects_reads(name):
    # Their suites reject these (scipy: zone letters in a date format; ARFFFiles:
    # a date left out of a sparse row) but Weka reads them, so we must.
    assert INDEX[name]["expect"] in ("reject (scipy only)", "reject (ARFFFiles)")
    schema, chunk = read_all(CONFORMANCE / name)
    assert chunk.n_rows == weka_shape(name)[0]


@pytest.mark.parametrize("path", REAL_FILES, ids=lambda p: p.name)
def test_real_file_reads(path):
    expected = {
        "iris.arff": (150, 5),
        "wine.arff": (178, 14),
        "credit-g.arff": (1000, 21),
        "oh0.wc.arff": (1003, 3183),
        "grain_wc.arff": (1554, 13028),
        "diabetes.arff": (768, 9),
        "ecoli.arff": (336, 8),
        "glass.arff": (214, 10),
        "sonar.arff": (208, 61),
        "vehicle.arff": (846, 19),
        "vowel.arff": (990, 14),
        "reuters_grain_sample.arff": (60, 2),
    }[path.name]
    schema, chunk = read_all(path)
    assert (chunk.n_rows, len(schema)) == expected


@pytest.mark.parametrize("name", rejected_files())
def test_rejected_file_raises_arff_error_with_file_and_line(name):
    path = CONFORMANCE / name
    with pytest.raises(ArffError) as caught:
        read_arff(path)
    error = caught.value
    assert error.line is not None
    assert error.path == str(path)
    assert str(error).startswith(f"{path}:{error.line}: ")


def _error(name: str) -> ArffError:
    with pytest.raises(ArffError) as caught:
        read_arff(CONFORMANCE / name)
    return caught.value


def test_undeclared_label_names_value_attribute_and_labels():
    error = _error("ARFFFiles-jl/load_jl__load_invalid_data__invalid_nominal.arff")
    assert error.line == 5
    assert error.message == "value 'maybe' is not a label of attribute 'cls' {yes,no}"


def test_duplicate_attribute_names_it_on_its_second_declaration():
    error = _error("liac-arff/test_decode__duplicate_attribute.arff")
    assert error.line == 4
    assert error.message == "attribute 'attr1' is declared twice"


def test_duplicate_label_is_rejected_like_weka():
    # scipy's suite reads only this file's header; Weka refuses the repeated label 'bla'.
    assert INDEX["scipy/test2.arff"]["observed"]["weka"].startswith("ERR")
    error = _error("scipy/test2.arff")
    assert error.line == 12
    assert "'attr9'" in error.message and "declared twice" in error.message


def test_unknown_type_is_named():
    error = _error("scipy/test3.arff")
    assert error.line == 3
    assert "unknown type 'crap'" in error.message


def test_sparse_index_beyond_attributes_gives_the_range():
    error = _error("liac-arff/test_decode__too_many_attributes_sparse.arff")
    assert error.line == 11
    assert error.message == "sparse index 2 is beyond the 2 attributes (0 to 1)"


@pytest.mark.parametrize(
    "name, line, message",
    [
        ("ARFFFiles-jl/load_jl__load_invalid_data__dup_sparse.arff", 5, "sparse indices must ascend: 0 after 0"),
        # MOA issue 139: Weka refuses unordered sparse indices ("indices have to be ordered").
        ("issues/Waikato_moa_issue139__sparse_unordered_indices.arff", 12, "sparse indices must ascend: 1 after 3"),
    ],
)
def test_unordered_sparse_indices_are_rejected(name, line, message):
    error = _error(name)
    assert (error.line, error.message) == (line, message)


def test_data_before_relation_is_rejected_at_its_line():
    error = _error("liac-arff/test_decode__invalid_layout_1.arff")
    assert error.line == 2
    assert error.message == "expected @relation before anything else, found '@data'"


def test_unclosed_sparse_row_is_rejected():
    error = _error("ARFFFiles-jl/load_jl__load_invalid_data__unclosed_sparse.arff")
    assert error.line == 4
    assert error.message == "sparse row has no closing '}'"
