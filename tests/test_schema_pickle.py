"""A schema is pickled compactly (Schema.__reduce__): each plain numeric attribute as its name and
declared type, made again in bulk; every other attribute as itself.  A Dask run sends the schema to
every worker for every pass (issue 20, the Dask bar)."""

from __future__ import annotations

import pickle

import pytest

from chain_helpers import REAL, TESTS
from filterkit.arff.reader import read_arff
from filterkit.schema import NUMERIC, Attribute, Schema

CONFORMANCE = TESTS / "data" / "conformance" / "ARFFFiles-jl"


@pytest.mark.parametrize(
    "path",
    [
        REAL / "grain_wc.arff",  # 13,027 attributes: numeric, a nominal class
        REAL / "credit-g.arff",  # nominal and numeric interleaved
        CONFORMANCE / "test_data__relational_example.arff",  # relational, with members
        CONFORMANCE / "test_data__simple_with_missing.arff",  # date and string
    ],
    ids=lambda path: path.name,
)
def test_a_real_schema_comes_back_equal_attribute_for_attribute(path):
    schema, _ = read_arff(path)
    back = pickle.loads(pickle.dumps(schema, protocol=pickle.HIGHEST_PROTOCOL))
    assert back == schema
    assert [attribute.declared_type for attribute in back.attributes] == [
        attribute.declared_type for attribute in schema.attributes
    ]
    assert all(type(attribute) is Attribute for attribute in back.attributes)


def test_declared_types_and_the_order_of_mixed_attributes_are_kept():
    attributes = (
        Attribute("a", NUMERIC, declared_type="integer"),
        Attribute("b", "nominal", labels=("x", "y")),
        Attribute("c", NUMERIC, declared_type="real"),
        Attribute("d", NUMERIC, declared_type="numeric"),
        Attribute("e", "date", date_format="yyyy-MM-dd"),
        Attribute("f", NUMERIC),  # made by a stage: no declared keyword
    )
    schema = Schema("mixed", attributes)
    back = pickle.loads(pickle.dumps(schema))
    assert back == schema and back.relation == "mixed"
    assert [a.declared_type for a in back.attributes] == ["integer", "", "real", "numeric", "", ""]


def test_a_wide_numeric_header_pickles_to_three_fifths_of_the_bytes_of_its_attribute_objects():
    """Half before the attributes held only their fields that differ from the class's defaults (285,311 bytes
    against 493,402 now)."""
    schema, _ = read_arff(REAL / "grain_wc.arff")
    compact = len(pickle.dumps(schema, protocol=pickle.HIGHEST_PROTOCOL))
    as_objects = len(pickle.dumps(tuple(schema.attributes), protocol=pickle.HIGHEST_PROTOCOL))
    assert compact < as_objects * 0.6
