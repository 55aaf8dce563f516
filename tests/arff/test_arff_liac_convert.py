"""to_liac / from_liac: liac-arff's dict format in and out, and what it cannot hold."""

from __future__ import annotations

import io

import arff
import numpy as np
import pytest

from arff_helpers import CONFORMANCE, assert_same_data, read_all
from filterkit.arff import from_liac, to_liac
from filterkit.errors import ArffError
from filterkit.schema import NOMINAL, NUMERIC, STRING, Chunk

WEATHER = {
    "relation": "weather",
    "description": "",
    "attributes": [
        ("outlook", ["sunny", "overcast", "rainy"]),
        ("temperature", "REAL"),
        ("count", "INTEGER"),
        ("note", "STRING"),
    ],
    "data": [
        ["sunny", 85.0, 3, "hot day"],
        ["rainy", None, None, None],
        [None, -1.5, 0, ""],
    ],
}


def test_from_liac_builds_schema_and_dense_values():
    schema, chunk = from_liac(WEATHER)
    assert schema.relation == "weather"
    assert [(a.name, a.kind, a.declared_type) for a in schema.attributes] == [
        ("outlook", NOMINAL, ""),
        ("temperature", NUMERIC, "real"),
        ("count", NUMERIC, "integer"),
        ("note", STRING, ""),
    ]
    assert schema.attributes[0].labels == ("sunny", "overcast", "rainy")
    assert not chunk.is_sparse
    np.testing.assert_array_equal(chunk.values, [[0, 85, 3, 0], [2, np.nan, np.nan, np.nan], [np.nan, -1.5, 0, 0]])
    assert chunk.text == {3: ["hot day", None, ""]}
    assert chunk.weights is None


def test_to_liac_inverts_from_liac():
    assert to_liac(*from_liac(WEATHER)) == WEATHER


def test_to_liac_gives_ints_for_integer_attributes_and_never_truncates():
    schema, chunk = from_liac({**WEATHER, "data": [["sunny", 1.0, 4.0, "a"], ["sunny", 1.0, 4.5, "b"]]})
    counts = [row[2] for row in to_liac(schema, chunk)["data"]]
    assert counts == [4, 4.5]
    assert type(counts[0]) is int and type(counts[1]) is float


def test_from_liac_reads_liacs_sparse_forms_as_csr():
    path = CONFORMANCE / "ARFFFiles-jl/test_data__sparse_example.arff"
    schema, chunk = read_all(path)
    for return_type in (arff.LOD, arff.COO):
        with open(path, encoding="utf-8") as handle:
            converted_schema, converted = from_liac(arff.load(handle, return_type=return_type))
        assert converted.is_sparse
        assert_same_data(schema, chunk, converted_schema, converted)
    assert chunk.text[1] == ["foo", "bar", ""]  # the string row 3 leaves out is ""


def test_from_liac_of_liac_loads_equals_our_reading_of_the_same_text():
    text = "@relation r\n@attribute a {x,y}\n@attribute b numeric\n@data\ny,2\n?,?\nx,0.25\n"
    assert_same_data(*read_all(io.BytesIO(text.encode()), name="t"), *from_liac(arff.loads(text)))


def test_date_attribute_cannot_go_to_liac():
    schema, chunk = read_all(CONFORMANCE / "farff-r/inst_arffs__dates.arff")
    with pytest.raises(ArffError, match=r"is a date: liac-arff has no DATE type"):
        to_liac(schema, chunk)


def test_relational_attribute_cannot_go_to_liac():
    schema, chunk = read_all(CONFORMANCE / "ARFFFiles-jl/test_data__relational_example.arff")
    with pytest.raises(ArffError, match=r"is relational: liac-arff has no relational type"):
        to_liac(schema, chunk)


def test_weights_cannot_go_to_liac_but_unit_weights_can():
    schema, chunk = from_liac(WEATHER)
    weighted = Chunk(chunk.values, chunk.text, np.array([1.0, 2.0, 1.0]))
    with pytest.raises(ArffError, match="no instance weights"):
        to_liac(schema, weighted)
    assert to_liac(schema, Chunk(chunk.values, chunk.text, np.ones(3)))["data"] == WEATHER["data"]


@pytest.mark.parametrize("kind", ["DATE", "date 'yyyy-MM-dd'"])
def test_from_liac_rejects_a_date_type(kind):
    with pytest.raises(ArffError, match="liac-arff has no DATE type"):
        from_liac({"relation": "r", "attributes": [("when", kind)], "data": []})


@pytest.mark.parametrize(
    "obj, message",
    [
        (
            {"relation": "r", "attributes": [("a", "BLOB")], "data": []},
            "attribute 'a': unknown liac-arff type 'BLOB'",
        ),
        (
            {"relation": "r", "attributes": [("a", ["x", "y"])], "data": [["x"], ["maybe"]]},
            "data row 2: value 'maybe' is not a label of attribute 'a' {x,y}",
        ),
        (
            {"relation": "r", "attributes": [("a", "NUMERIC")], "data": [[1.0], ["abc"]]},
            "data row 2: value 'abc' of attribute 'a' is not a number",
        ),
        (
            {"relation": "r", "attributes": [("a", "NUMERIC")], "data": [["1.5"], ["nan"]]},
            "data row 2: value 'nan' of attribute 'a' is not a number",
        ),
        (
            {"relation": "r", "attributes": [("a", "NUMERIC")], "data": [["1.5"], ["\u0663"]]},
            "data row 2: value '\u0663' of attribute 'a' is not a number",
        ),
        (
            {"relation": "r", "attributes": [("a", "NUMERIC"), ("b", "REAL")], "data": [[1.0, 2.0], [1.0]]},
            "data row 2: expected 2 values, found 1 values",
        ),
        (
            {"relation": "r", "attributes": [("a", "NUMERIC")], "data": [{0: 1.0}, {3: 2.0}]},
            "data row 2: attribute index 3 is not in 0 to 0",
        ),
        (
            {"relation": "r", "attributes": [("a", "NUMERIC"), ("a", "REAL")], "data": []},
            "attribute 'a' is declared twice",
        ),
        ({"relation": "r", "data": []}, "not a liac-arff dict"),
    ],
)
def test_from_liac_rejects_bad_input_naming_row_and_attribute(obj, message):
    with pytest.raises(ArffError) as caught:
        from_liac(obj)
    assert caught.value.message.startswith(message)


def test_from_liac_with_no_rows_gives_an_empty_chunk_of_the_right_width():
    schema, chunk = from_liac({"relation": "r", "attributes": [("a", "NUMERIC"), ("s", "STRING")], "data": []})
    assert chunk.values.shape == (0, 2)
    assert chunk.text == {1: []}


def test_to_liac_of_a_sparse_chunk_gives_dense_rows():
    schema, chunk = read_all(CONFORMANCE / "liac-arff/test_loads__SPARSE_ARFF_xor.arff")
    assert chunk.is_sparse
    data = to_liac(schema, chunk)["data"]
    assert data == [[0.0, 0.0, 0.0], [0.0, 1.0, 1.0], [1.0, 0.0, 1.0], [1.0, 1.0, 0.0]]
