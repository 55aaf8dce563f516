"""Differential test against liac-arff on every file both parsers read.

Relation, attribute names, types and labels, and every value must agree
(liac-arff gives label strings for nominal values and None for missing ones).
Where liac-arff differs for a documented reason the difference is listed in
KNOWN_DIFFERENCES with our Weka-consistent value, so the test still fails if
either side changes.
"""

from __future__ import annotations

import io
import math

import arff
import pytest

from arff_helpers import CONFORMANCE, INDEX, REAL, assert_same_data, read_all, valid_files
from filterkit.arff import from_liac, to_liac
from filterkit.schema import NOMINAL, NUMERIC, STRING

# Weka 3.6.14's weka.core.Instances.relationName() for grain_wc.arff: Weka wrote
# the name with backslash escapes and reads them back; liac-arff keeps the escapes.
GRAIN_RELATION_BY_WEKA = (
    "Reuters-21578 Grain ModApte Train-weka.filters.unsupervised.attribute.NumericToBinary"
    "-weka.filters.unsupervised.instance.RemoveFolds-S0-N5-F1"
    "-weka.filters.unsupervised.attribute.StringToWordVector-R1-W1000000-prune-rate-1.0-C-N0-L"
    "-stemmerweka.core.stemmers.NullStemmer-M1-O-tokenizerweka.core.tokenizers.WordTokenizer"
    ' -delimiters " \\r\\n\\t.,;:\\\'\\"()?!"'
)


class _Anything:
    """Stands for a value of liac-arff's that the test does not pin down."""

    def __eq__(self, other):
        return True

    def __repr__(self):
        return "<anything>"


# name -> {difference: (liac's value, ours)}
KNOWN_DIFFERENCES = {
    # '@data 10,10,10': the row follows @data on the same line. Weka 3.6 reads
    # 1 row; liac-arff ignores the rest of the @data line and reads 0 rows.
    "liac-arff/test_loads__ARFF_FORMAT_CORRECT.arff": {"rows": (0, 1)},
    # A string left out of a sparse row in a file read densely: liac-arff fills
    # in the text '0', Weka 3.6 a placeholder '*WEKA*DUMMY*STRING*FOR*STRING*ATTRIBUTES*';
    # we read the empty string (an omitted value is a zero/empty value).
    "weka/classifiers__data__ClassifierTest.arff": {(19, 3): ("0", ""), (20, 0): ("0", "")},
    "weka/core__data__InstancesTest.arff": {(19, 3): ("0", ""), (20, 0): ("0", "")},
    # liac-arff keeps the backslashes (and drops the last quote) of the quoted
    # relation name; we unescape it exactly as Weka does.
    "real/grain_wc.arff": {"relation": (_Anything(), GRAIN_RELATION_BY_WEKA)},
}


def _files_liac_reads():
    names = [name for name in valid_files() if (INDEX[name].get("observed") or {}).get("liac", "").startswith("OK")]
    return [("conformance", name) for name in names] + [("real", p.name) for p in sorted(REAL.glob("*.arff"))]


def _path(where, name):
    return (CONFORMANCE if where == "conformance" else REAL) / name


def _key(where, name):
    return name if where == "conformance" else f"real/{name}"


def _load_liac(path, sparse: bool) -> dict:
    # Sparse files as liac's list of dicts: a dense list per row would be
    # millions of Python objects for the word-count files.
    with open(path, encoding="utf-8") as handle:
        return arff.load(handle, return_type=arff.LOD if sparse else arff.DENSE)


def _ours(schema, chunk, row, column, dense_row):
    """Our value in liac-arff's terms: a float, a label, a text, or None if missing."""
    attribute = schema.attributes[column]
    value = dense_row[0, column]
    if math.isnan(value):
        return None
    if attribute.kind == NOMINAL:
        return attribute.labels[int(value)]
    if attribute.kind == STRING:
        return chunk.text[column][row]
    return float(value)


def _omitted(attribute):
    """What a value left out of a sparse row is: 0, the first label, the empty string."""
    if attribute.kind == NOMINAL:
        return attribute.labels[0]
    if attribute.kind == STRING:
        return ""
    return 0.0


def differences(schema, chunk, liac: dict) -> dict:
    found = {}
    if liac["relation"] != schema.relation:
        found["relation"] = (liac["relation"], schema.relation)
    if len(liac["attributes"]) != len(schema):
        found["attributes"] = (len(liac["attributes"]), len(schema))
    for column, ((name, kind), attribute) in enumerate(zip(liac["attributes"], schema.attributes)):
        if name != attribute.name:
            found[("name", column)] = (name, attribute.name)
        if isinstance(kind, list):
            ours_kind = list(attribute.labels) if attribute.kind == NOMINAL else attribute.kind
        else:
            ours_kind = attribute.declared_type.upper() if attribute.kind == NUMERIC else attribute.kind.upper()
        if kind != ours_kind:
            found[("type", column)] = (kind, ours_kind)
    if len(liac["data"]) != chunk.n_rows:
        found["rows"] = (len(liac["data"]), chunk.n_rows)
        return found
    text_columns = schema.text_columns()
    for row, values in enumerate(liac["data"]):
        if chunk.is_sparse:
            dense_row = chunk.values[row].toarray()
            # A cell neither side stores is zero on both: compare only the
            # cells liac-arff or we hold, so a word-count file costs O(entries).
            stored = set(values) if isinstance(values, dict) else set(range(len(values)))
            columns = sorted(stored | set(chunk.values[row].indices.tolist()) | set(text_columns))
        else:
            dense_row = chunk.values[row : row + 1]
            columns = range(len(schema))
        for column in columns:
            if isinstance(values, dict):
                theirs = values.get(column, _omitted(schema.attributes[column]))
            else:
                theirs = values[column]
            ours = _ours(schema, chunk, row, column, dense_row)
            if isinstance(theirs, (int, float)) and not isinstance(theirs, bool) and ours is not None:
                # liac-arff gives ints for INTEGER attributes
                same = isinstance(ours, float) and float(theirs) == ours
            else:
                same = theirs == ours
            if not same:
                found[(row, column)] = (theirs, ours)
    return found


@pytest.mark.slow
@pytest.mark.parametrize("where, name", _files_liac_reads(), ids=lambda v: v)
def test_same_data_as_liac_arff(where, name):
    schema, chunk = read_all(_path(where, name))
    liac = _load_liac(_path(where, name), chunk.is_sparse)
    assert differences(schema, chunk, liac) == KNOWN_DIFFERENCES.get(_key(where, name), {})


def test_row_on_the_data_line_is_read_as_weka_does():
    # liac-arff reads no row here (see KNOWN_DIFFERENCES); Weka and we read one.
    schema, chunk = read_all(CONFORMANCE / "liac-arff/test_loads__ARFF_FORMAT_CORRECT.arff")
    assert [a.name for a in schema.attributes] == ["number_of_files", "lines of code", "defect density"]
    assert chunk.dense_values().tolist() == [[10.0, 10.0, 10.0]]


def test_grain_relation_name_is_unescaped_as_weka_does():
    schema, _ = read_all(REAL / "grain_wc.arff")
    assert schema.relation == GRAIN_RELATION_BY_WEKA
    assert schema.relation.endswith('-delimiters " \\r\\n\\t.,;:\\\'\\"()?!"')


# Conversions are compared on the files liac-arff reads as we do.
AGREEING = [(w, n) for w, n in _files_liac_reads() if _key(w, n) not in KNOWN_DIFFERENCES]
# Dense rows of the word-count files would be millions of Python objects.
AGREEING_SMALL = [(w, n) for w, n in AGREEING if not n.endswith("wc.arff")]


@pytest.mark.parametrize(
    "name",
    [
        "real/iris.arff",
        "real/credit-g.arff",
        "conformance/liac-arff/test_encode__encode_string.arff",
        "conformance/weka/classifiers__pmml__data__heart-c.arff",
    ],
)
def test_what_liac_arff_writes_from_to_liac_reads_back_the_same(name):
    path = CONFORMANCE.parent / name
    schema, chunk = read_all(path)
    written = arff.dumps(to_liac(schema, chunk))
    assert_same_data(schema, chunk, *read_all(io.BytesIO(written.encode("utf-8")), name="by-liac"))


@pytest.mark.parametrize("where, name", AGREEING, ids=lambda v: v)
def test_from_liac_of_liacs_reading_equals_our_reading(where, name):
    schema, chunk = read_all(_path(where, name))
    converted = from_liac(_load_liac(_path(where, name), chunk.is_sparse))
    assert_same_data(schema, chunk, *converted)


@pytest.mark.parametrize("where, name", AGREEING_SMALL, ids=lambda v: v)
def test_to_liac_of_our_reading_equals_liacs_reading(where, name):
    schema, chunk = read_all(_path(where, name))
    liac = _load_liac(_path(where, name), chunk.is_sparse)
    ours = to_liac(schema, chunk)
    assert ours["relation"] == liac["relation"]
    assert ours["attributes"] == liac["attributes"]
    # Sparse files were loaded as dicts: a value a row leaves out is 0, the
    # first label or "" (liac-arff's dense loading would give the text '0').
    expected = [
        [row.get(c, _omitted(a)) for c, a in enumerate(schema.attributes)] if isinstance(row, dict) else row
        for row in liac["data"]
    ]
    assert ours["data"] == expected
