"""The ``ordinal`` stage (docs/algorithms.md §6; Esuli & Sebastiani, ECIR'09 §2).

A small data set worked by hand (dense and the same rows sparse), unseen test values through a
saved model, ``--max-thresholds`` on skewed counts, quoted names, and the real text file oh0
checked against an encoding computed here with numpy/scipy alone.
"""

from __future__ import annotations

import math
import random
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from chain_helpers import JAVA, JAVA_OPTIONS, REAL, needs_weka, read_bytes, without_comments
from chain_helpers import WEKA_JAR as JAR
from filterkit.arff import read_arff
from filterkit.schema import NOMINAL, NUMERIC, STRING

NAN = math.nan

HEADER = """@relation counts
@attribute count integer
@attribute note string
@attribute neg numeric
@attribute zero integer
@attribute words numeric
@attribute frac real
@attribute color {red,green}
@attribute class {n,p}
@data
"""
# count: non-negative integers, distinct non-zero {1, 3}  → count>=1, count>=3 (in place of count)
# note:  string, passes through, moves from position 1 to 2
# neg:   has -1 → passes through;  frac: has 0.5 → passes through (keeps its 'real')
# zero:  all zero → no attribute at all
# words: declared numeric but integer-valued, distinct non-zero {2, 5, 7} → words>=2, >=5, >=7
TRAIN_DENSE = (
    HEADER
    + """1,'a b',-1,0,2,0.5,red,p
3,'it\\'s',2,0,0,1,green,n
0,?,0,0,5,0,?,p
?,x,3,0,2,2,red,?
3,'',0,0,7,0,green,n
"""
)
TRAIN_SPARSE = (
    HEADER
    + """{0 1,1 'a b',2 -1,4 2,5 0.5,7 p}
{0 3,1 'it\\'s',2 2,5 1,6 green}
{1 ?,4 5,6 ?,7 p}
{0 ?,1 x,2 3,4 2,5 2,7 ?}
{0 3,1 '',4 7,6 green}
"""
)
EXPECTED_ATTRIBUTES = [
    ("count>=1", NUMERIC),
    ("count>=3", NUMERIC),
    ("note", STRING),
    ("neg", NUMERIC),
    ("words>=2", NUMERIC),
    ("words>=5", NUMERIC),
    ("words>=7", NUMERIC),
    ("frac", NUMERIC),
    ("color", NOMINAL),
    ("class", NOMINAL),
]
TEXT = 2  # the string column's new position
EXPECTED_NOTES = ["a b", "it's", None, "x", ""]
# count>=1 count>=3 | note (0 or ? in the matrix) | neg | words>=2 >=5 >=7 | frac | color | class
EXPECTED_TRAIN = [
    [1, 0, 0, -1, 1, 0, 0, 0.5, 0, 1],  # count 1, words 2
    [1, 1, 0, 2, 0, 0, 0, 1, 1, 0],  # count 3, words 0
    [0, 0, NAN, 0, 1, 1, 0, 0, NAN, 1],  # count 0 → all zeros; words 5
    [NAN, NAN, 0, 3, 1, 0, 0, 2, 0, NAN],  # count missing → both missing
    [1, 1, 0, 0, 1, 1, 1, 0, 1, 0],  # count 3, words 7
]

# Unseen values, applied through a saved model.  zero=9 or 1 has nowhere to go (no attribute).
TEST_DENSE = (
    HEADER
    + """2.5,t1,-1,9,5,0,red,?
100,t2,5,0,100,7,green,p
-1,t3,0,0,-2,0,red,n
?,?,?,?,?,?,?,?
0.5,t5,0,0,6.5,0,red,n
3,t6,0,1,1,0,green,n
"""
)
TEST_SPARSE = (
    HEADER
    + """{0 2.5,1 t1,2 -1,3 9,4 5,7 ?}
{0 100,1 t2,2 5,4 100,5 7,6 green,7 p}
{0 -1,1 t3,4 -2}
{0 ?,1 ?,2 ?,3 ?,4 ?,5 ?,6 ?,7 ?}
{0 0.5,1 t5,4 6.5}
{0 3,1 t6,3 1,4 1,6 green}
"""
)
EXPECTED_TEST = [
    [1, 0, 0, -1, 1, 1, 0, 0, 0, NAN],  # 2.5 reaches 1 not 3; 5 reaches 2 and 5 exactly
    [1, 1, 0, 5, 1, 1, 1, 7, 1, 1],  # beyond every threshold: all set
    [0, 0, 0, 0, 0, 0, 0, 0, 0, 0],  # negative values reach no threshold
    [NAN] * 10,  # missing → every output of the attribute missing
    [0, 0, 0, 0, 1, 1, 0, 0, 0, 0],  # 0.5 is below 1; 6.5 reaches 2 and 5
    [1, 1, 0, 0, 0, 0, 0, 0, 1, 0],  # 3 reaches 3 exactly; 1 is below the smallest threshold 2
]
EXPECTED_TEST_NOTES = ["t1", "t2", "t3", None, "t5", "t6"]

FORMS = {"dense": (TRAIN_DENSE, TEST_DENSE), "sparse": (TRAIN_SPARSE, TEST_SPARSE)}


def encode(run_filterkit, path, *options, chain=()):
    """The ordinal output of ``path``: the result, its schema and its rows."""
    result = run_filterkit(*chain, path, "ordinal", *options)
    assert result.status == 0, result.stderr
    schema, chunk = read_bytes(result.stdout)
    return result, schema, chunk


def data_lines(arff: bytes) -> list[bytes]:
    return arff.split(b"@data\n", 1)[1].splitlines()


@pytest.fixture(params=list(FORMS))
def hand(request, tmp_path):
    """The hand-worked train and test files, dense or sparse."""
    train, test = FORMS[request.param]
    (tmp_path / "train.arff").write_text(train)
    (tmp_path / "test.arff").write_text(test)
    return request.param == "sparse", tmp_path / "train.arff", tmp_path / "test.arff"


def test_hand_example_attributes_are_expanded_in_place(run_filterkit, hand):
    sparse, train, _ = hand
    _, schema, _ = encode(run_filterkit, train)
    assert [(a.name, a.kind) for a in schema.attributes] == EXPECTED_ATTRIBUTES
    source, _ = read_arff(train)
    # passing attributes keep their whole declaration (labels, 'real', 'numeric')
    for name in ("note", "neg", "frac", "color", "class"):
        assert schema.attributes[schema.index_of(name)] == source.attributes[source.index_of(name)]
    encoded = [a for a in schema.attributes if ">=" in a.name]
    assert all(a.declared_type == "numeric" for a in encoded)
    assert not any(a.name.startswith("zero") for a in schema.attributes), "an all-zero attribute gives no output"


def test_hand_example_values(run_filterkit, hand):
    sparse, train, _ = hand
    result, _, chunk = encode(run_filterkit, train)
    np.testing.assert_array_equal(chunk.dense_values(), EXPECTED_TRAIN)
    assert chunk.text == {TEXT: EXPECTED_NOTES}, "the text column moves, intact, to its new position"
    assert chunk.is_sparse == sparse


def test_sparse_output_stays_sparse_and_zero_sets_nothing(run_filterkit, tmp_path):
    path = tmp_path / "train.arff"
    path.write_text(TRAIN_SPARSE)
    result, schema, chunk = encode(run_filterkit, path)
    lines = data_lines(result.stdout)
    assert len(lines) == 5 and all(line.startswith(b"{") and line.endswith(b"}") for line in lines)
    matrix = chunk.values.tocsr()
    encoded_columns = [0, 1, 4, 5, 6]
    stored = [sorted(set(matrix[i].indices.tolist()) & set(encoded_columns)) for i in range(5)]
    # exactly the thresholds reached (or missing) are stored; a zero stores nothing
    assert stored == [[0, 4], [0, 1], [4, 5], [0, 1, 4], [0, 1, 4, 5, 6]]
    in_encoded = np.isin(matrix.tocoo().col, encoded_columns)
    values = matrix.tocoo().data[in_encoded]
    assert set(np.unique(values[~np.isnan(values)]).tolist()) == {1.0}


@pytest.mark.parametrize("test_form", list(FORMS))
def test_saved_model_encodes_unseen_negative_and_missing_test_values(run_filterkit, hand, test_form, tmp_path):
    _, train, _ = hand
    test = tmp_path / f"test-{test_form}.arff"
    test.write_text(FORMS[test_form][1])
    model = tmp_path / "m.json"
    trained = run_filterkit("--save-model", model, train, "ordinal")
    assert trained.status == 0, trained.stderr
    applied = run_filterkit("apply", model, test)
    assert applied.status == 0, applied.stderr
    schema, chunk = read_bytes(applied.stdout)
    assert [(a.name, a.kind) for a in schema.attributes] == EXPECTED_ATTRIBUTES
    np.testing.assert_array_equal(chunk.dense_values(), EXPECTED_TEST)
    assert chunk.text == {TEXT: EXPECTED_TEST_NOTES}
    assert chunk.is_sparse == (test_form == "sparse")


def test_apply_on_the_training_file_reproduces_the_training_output(run_filterkit, hand, tmp_path):
    _, train, _ = hand
    model = tmp_path / "m.json"
    trained = run_filterkit("--save-model", model, train, "ordinal")
    applied = run_filterkit("apply", model, train)
    assert trained.status == 0 and applied.status == 0, trained.stderr + applied.stderr
    assert without_comments(applied.stdout) == without_comments(trained.stdout)
    assert b"count>=3" in trained.stdout


def test_an_integer_class_passes_through(run_filterkit, tmp_path):
    path = tmp_path / "train.arff"
    path.write_text(TRAIN_DENSE)
    _, schema, chunk = encode(run_filterkit, path, chain=("-c", "first"))
    # the class is count (first): untouched, still 'integer'; words is still encoded
    assert [a.name for a in schema.attributes] == [
        "count",
        "note",
        "neg",
        "words>=2",
        "words>=5",
        "words>=7",
        "frac",
        "color",
        "class",
    ]
    assert schema.attributes[0].declared_type == "integer"
    np.testing.assert_array_equal(chunk.dense_values()[:, 0], [1, 3, 0, NAN, 3])
    np.testing.assert_array_equal(chunk.dense_values()[:, 3:6], [[1, 0, 0], [0, 0, 0], [1, 1, 0], [1, 0, 0], [1, 1, 1]])


def test_an_encoded_name_that_is_already_taken_is_an_error(run_filterkit, tmp_path):
    path = tmp_path / "clash.arff"
    # 'a>=1' is fractional, so it passes through; a's threshold 1 would be named 'a>=1' too
    path.write_text(
        "@relation clash\n@attribute a integer\n@attribute 'a>=1' numeric\n@attribute c {n,p}\n@data\n1,0.5,n\n0,0,p\n"
    )
    result = run_filterkit(path, "ordinal")
    assert result.status != 0
    assert "a>=1" in result.stderr and "already taken" in result.stderr
    assert b"@data" not in result.stdout


# ---------------------------------------------------------------------------------------------
# --max-thresholds (ordinal.py docstring): threshold i = 0 … M−1 is the smallest value whose
# cumulative weight exceeds i/M of the attribute's total non-zero weight; duplicates kept once.

SKEWED = """@relation skewed
@attribute x integer
@attribute y integer
@attribute class {n,p}
@data
1,5,p
1,0,n
1,1,p
1,0,n
1,5,p
1,0,n
2,1,p
3,0,n
4,0,p
9,0,n
0,1,p
0,0,n
?,0,p
"""
# x, non-zero values sorted: 1 1 1 1 1 1 2 3 4 9   (10 rows, weight 1 each)
#    cumulative weight per distinct value:  v=1: 6, v=2: 7, v=3: 8, v=4: 9, v=9: 10
#    M=1: i/M·10 = 0                    → first cumulative > 0 is 6 (v=1)                 → {1}
#    M=2: 0, 5                          → 6 > 0, 6 > 5: v=1 twice                         → {1}
#    M=3: 0, 3.33, 6.67                 → v=1, v=1, 7 > 6.67: v=2                         → {1, 2}
#    M=4: 0, 2.5, 5, 7.5                → v=1, v=1, v=1, 8 > 7.5: v=3                     → {1, 3}
#    M≥5: no more than M distinct values: all kept                                       → {1, 2, 3, 4, 9}
# y, non-zero: 1 1 1 5 5: two distinct values, so all kept unless M=1 (0 → cumulative 3 > 0: v=1).
SKEWED_THRESHOLDS = {
    1: ([1], [1]),
    2: ([1], [1, 5]),
    3: ([1, 2], [1, 5]),
    4: ([1, 3], [1, 5]),
    5: ([1, 2, 3, 4, 9], [1, 5]),
    6: ([1, 2, 3, 4, 9], [1, 5]),
}
SKEWED_X = np.array([1, 1, 1, 1, 1, 1, 2, 3, 4, 9, 0, 0, NAN])
SKEWED_Y = np.array([5, 0, 1, 0, 5, 0, 1, 0, 0, 0, 1, 0, 0.0])


def expected_encoding(column: np.ndarray, thresholds) -> np.ndarray:
    """One 0/1 column per threshold; missing → missing."""
    out = np.array([(column >= t).astype(float) for t in thresholds]).T
    out[np.isnan(column)] = NAN
    return out


@pytest.mark.parametrize("limit", sorted(SKEWED_THRESHOLDS))
def test_max_thresholds_picks_the_documented_quantiles(run_filterkit, tmp_path, limit):
    path = tmp_path / "skewed.arff"
    path.write_text(SKEWED)
    _, schema, chunk = encode(run_filterkit, path, "--max-thresholds", limit)
    x_thresholds, y_thresholds = SKEWED_THRESHOLDS[limit]
    assert [a.name for a in schema.attributes] == (
        [f"x>={v}" for v in x_thresholds] + [f"y>={v}" for v in y_thresholds] + ["class"]
    )
    values = chunk.dense_values()
    nx = len(x_thresholds)
    np.testing.assert_array_equal(values[:, :nx], expected_encoding(SKEWED_X, x_thresholds))
    np.testing.assert_array_equal(values[:, nx:-1], expected_encoding(SKEWED_Y, y_thresholds))


def test_max_thresholds_four_written_out(run_filterkit, tmp_path):
    path = tmp_path / "skewed.arff"
    path.write_text(SKEWED)
    _, schema, chunk = encode(run_filterkit, path, "--max-thresholds", "4")
    assert [a.name for a in schema.attributes] == ["x>=1", "x>=3", "y>=1", "y>=5", "class"]
    # x = 2 reaches 1 but not 3; x = 4 and 9 reach both; x missing: both missing
    np.testing.assert_array_equal(
        chunk.dense_values()[[0, 6, 7, 8, 9, 10, 12], :2], [[1, 0], [1, 0], [1, 1], [1, 1], [1, 1], [0, 0], [NAN, NAN]]
    )


WEIGHTED = """@relation weighted
@attribute x integer
@attribute class {n,p}
@data
1,p
2,n
3,p
4,n,{5}
0,p
"""


@pytest.mark.parametrize("weighted, thresholds", [(False, [1, 3]), (True, [1, 4])])
def test_max_thresholds_counts_rows_by_their_instance_weight(run_filterkit, tmp_path, weighted, thresholds):
    # Non-zero x: 1, 2, 3, 4.  M=2 → quantiles at 0 and 1/2 of the total weight.
    #   unweighted: cumulative 1, 2, 3, 4; half of 4 is 2; first cumulative > 2 is 3 (v=3) → {1, 3}
    #   4 has weight 5: cumulative 1, 2, 3, 8; half of 8 is 4; first cumulative > 4 is 8 (v=4) → {1, 4}
    text = WEIGHTED if weighted else WEIGHTED.replace(",{5}", "")
    path = tmp_path / "weighted.arff"
    path.write_text(text)
    _, schema, chunk = encode(run_filterkit, path, "--max-thresholds", "2")
    assert [a.name for a in schema.attributes] == [f"x>={v}" for v in thresholds] + ["class"]
    np.testing.assert_array_equal(
        chunk.dense_values()[:, :-1], expected_encoding(np.array([1, 2, 3, 4, 0.0]), thresholds)
    )
    if weighted:
        np.testing.assert_array_equal(chunk.weights, [1, 1, 1, 5, 1])


def test_max_thresholds_survive_a_saved_model(run_filterkit, tmp_path):
    train, test, model = tmp_path / "skewed.arff", tmp_path / "test.arff", tmp_path / "m.json"
    train.write_text(SKEWED)
    test.write_text(SKEWED.split("@data\n")[0] + "@data\n2.5,7,p\n100,0.5,n\n3,5,p\n")
    trained = run_filterkit("--save-model", model, train, "ordinal", "--max-thresholds", "4")
    assert trained.status == 0, trained.stderr
    applied = run_filterkit("apply", model, test)
    assert applied.status == 0, applied.stderr
    schema, chunk = read_bytes(applied.stdout)
    assert [a.name for a in schema.attributes] == ["x>=1", "x>=3", "y>=1", "y>=5", "class"]
    np.testing.assert_array_equal(chunk.dense_values(), [[1, 0, 1, 1, 1], [1, 1, 0, 0, 0], [1, 1, 1, 1, 1]])


def test_max_thresholds_below_one_is_refused(run_filterkit, tmp_path):
    path = tmp_path / "skewed.arff"
    path.write_text(SKEWED)
    result = run_filterkit(path, "ordinal", "--max-thresholds", "0")
    assert result.status != 0 and "--max-thresholds" in result.stderr


# ---------------------------------------------------------------------------------------------
# Names that need quoting

QUOTED = """@relation quoted
@attribute 'my word' integer
@attribute 'it\\'s' integer
@attribute 'say "hi"' integer
@attribute '{brace}' integer
@attribute 'a%b' integer
@attribute class {n,p}
@data
1,2,3,1,4,p
0,1,0,2,0,n
"""
QUOTED_NAMES = ["my word>=1", "it's>=1", "it's>=2", 'say "hi">=3', "{brace}>=1", "{brace}>=2", "a%b>=4", "class"]


def test_names_with_spaces_and_quotes_are_quoted_and_read_back(run_filterkit, tmp_path):
    path = tmp_path / "quoted.arff"
    path.write_text(QUOTED)
    result, schema, chunk = encode(run_filterkit, path)
    assert [a.name for a in schema.attributes] == QUOTED_NAMES
    np.testing.assert_array_equal(chunk.dense_values(), [[1, 1, 1, 1, 1, 0, 1, 1], [0, 1, 0, 0, 1, 1, 0, 0]])
    header = result.stdout.decode().split("@data")[0]
    declared = re.findall(r"^@attribute (.*) numeric$", header, re.M)
    assert len(declared) == 7
    # every name with a space, quote, brace or % is written quoted
    assert all(name.startswith("'") and name.endswith("'") for name in declared)


# ---------------------------------------------------------------------------------------------
# The real file oh0 (word counts, sparse)

OH0 = REAL / "oh0.wc.arff"


@pytest.fixture(scope="module")
def oh0_expected():
    """Names and values of oh0's encoding, computed with numpy/scipy only."""
    schema, chunk = read_arff(OH0)
    class_index = len(schema) - 1
    words = chunk.values.tocsc()
    data = words.data
    assert not np.isnan(data).any() and (data >= 0).all() and (data == np.floor(data)).all()
    distinct_total = sum(
        len(np.unique(data[words.indptr[j] : words.indptr[j + 1]][data[words.indptr[j] : words.indptr[j + 1]] != 0]))
        for j in range(class_index)
    )
    names, rows, columns = [], [], []
    for j in range(class_index):
        entries = slice(words.indptr[j], words.indptr[j + 1])
        column_rows, column_values = words.indices[entries], data[entries]
        for v in np.unique(column_values[column_values != 0]):
            reached = column_rows[column_values >= v]
            rows.append(reached)
            columns.append(np.full(len(reached), len(names)))
            names.append(f"{schema.attributes[j].name}>={int(v)}")
    rows, columns = np.concatenate(rows), np.concatenate(columns)
    matrix = np.zeros((chunk.n_rows, len(names)))
    matrix[rows, columns] = 1.0
    assert len(names) == distinct_total
    return names + ["class"], matrix, chunk.dense_values()[:, class_index], schema.attributes[class_index]


@pytest.fixture(scope="module")
def oh0_output(tmp_path_factory):
    """oh0 encoded (in this process) with a saved model: (output bytes, model path)."""
    from filterkit import cli

    folder = tmp_path_factory.mktemp("oh0")
    model, out = folder / "m.json", folder / "out.arff"
    status = cli.run(["-q", "--save-model", str(model), "-o", str(out), str(OH0), "ordinal"], None)
    assert status == 0
    return out.read_bytes(), model


@pytest.mark.slow
def test_oh0_one_attribute_per_distinct_non_zero_count(oh0_output, oh0_expected):
    names, expected, classes, class_attribute = oh0_expected
    schema, chunk = read_bytes(oh0_output[0])
    # 1 (class) + Σ over the 3182 words of their number of distinct non-zero counts (8895 on oh0)
    assert len(schema) == len(names) == 1 + 8895
    assert [a.name for a in schema.attributes] == names
    assert schema.attributes[-1] == class_attribute
    assert chunk.is_sparse
    values = chunk.dense_values()
    np.testing.assert_array_equal(values[:, :-1], expected)
    np.testing.assert_array_equal(values[:, -1], classes)


def test_oh0_output_lines_are_sparse(oh0_output):
    lines = data_lines(oh0_output[0])
    assert len(lines) == 1003 and all(line.startswith(b"{") for line in lines)


def test_oh0_apply_reproduces_the_training_output_byte_for_byte(run_filterkit, oh0_output):
    trained, model = oh0_output
    applied = run_filterkit("apply", model, OH0)
    assert applied.status == 0, applied.stderr
    assert without_comments(applied.stdout) == without_comments(trained)


@pytest.mark.slow
@pytest.mark.parametrize("rows", ["1", "7"])
def test_oh0_chunk_size_never_changes_the_output(run_filterkit, oh0_output, rows):
    chunked = run_filterkit("-q", "--chunk-rows", rows, OH0, "ordinal")
    assert chunked.status == 0, chunked.stderr
    assert chunked.stdout == oh0_output[0]


@pytest.mark.parametrize("rows", ["1", "2", "7"])
def test_hand_example_chunk_size_never_changes_the_output(run_filterkit, hand, rows):
    _, train, _ = hand
    whole = run_filterkit(train, "ordinal")
    chunked = run_filterkit("--chunk-rows", rows, train, "ordinal")
    assert whole.status == chunked.status == 0
    assert chunked.stdout == whole.stdout


def test_oh0_shuffled_rows_give_the_same_attributes_and_the_same_rows(run_filterkit, oh0_output, tmp_path):
    text = OH0.read_bytes()
    head, body = _split_data(text)
    lines = [line for line in body.splitlines() if line.strip()]
    order = list(range(len(lines)))
    random.Random(20090406).shuffle(order)
    shuffled = tmp_path / "shuffled.arff"
    shuffled.write_bytes(head + b"\n".join(lines[i] for i in order) + b"\n")
    result = run_filterkit("-q", shuffled, "ordinal")
    assert result.status == 0, result.stderr
    original = oh0_output[0]
    assert result.stdout.split(b"@data\n")[0] == original.split(b"@data\n")[0], (
        "attribute order follows values, not rows"
    )
    original_rows = data_lines(original)
    assert data_lines(result.stdout) == [original_rows[i] for i in order]


def _split_data(text: bytes) -> tuple[bytes, bytes]:
    """The header up to and including the @data line, and the rest."""
    match = re.search(rb"(?im)^@data[ \t]*\r?\n", text)
    return text[: match.end()], text[match.end() :]


# ---------------------------------------------------------------------------------------------
# Weka 3.6 reads what the stage writes


def weka_read(path: Path) -> str:
    """Weka's summary of ``path`` (weka.core.Instances exits 0 even when it cannot parse: check the text)."""
    result = subprocess.run(
        [JAVA, *JAVA_OPTIONS, "-Xmx1g", "-cp", str(JAR), "weka.core.Instances", str(path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Exception" not in result.stdout + result.stderr, (result.stdout + result.stderr)[-2000:]
    return result.stdout


def weka_counts(summary: str) -> tuple[int, int]:
    instances = re.search(r"^Num Instances:\s+(\d+)$", summary, re.M)
    attributes = re.search(r"^Num Attributes:\s+(\d+)$", summary, re.M)
    assert instances and attributes, summary[-2000:]
    return int(instances.group(1)), int(attributes.group(1))


@needs_weka
def test_weka_reads_the_ordinal_output_of_oh0(oh0_output, oh0_expected, tmp_path):
    path = tmp_path / "oh0-ordinal.arff"
    path.write_bytes(oh0_output[0])
    summary = weka_read(path)
    assert weka_counts(summary) == (1003, len(oh0_expected[0]))
    # the per-attribute table: every encoded attribute numeric with no missing value, the class nominal
    table = re.findall(r"^\s*(\d+) (.{25}) +(Num|Nom|Str|Dat|Rel) +\d+% +\d+% +\d+% +(\d+) /", summary, re.M)
    assert len(table) == len(oh0_expected[0])
    assert {(kind, missing) for _, _, kind, missing in table[:-1]} == {("Num", "0")}
    assert table[-1][1].rstrip() == "class" and table[-1][2] == "Nom"
    assert table[0][1].rstrip() == oh0_expected[0][0][:25].rstrip()


@needs_weka
@pytest.mark.parametrize("text", [QUOTED, TRAIN_SPARSE], ids=["quoted-names", "hand-sparse"])
def test_weka_reads_quoted_names_and_the_hand_example(run_filterkit, tmp_path, text):
    source = tmp_path / "in.arff"
    source.write_text(text)
    result, schema, chunk = encode(run_filterkit, source)
    path = tmp_path / "out.arff"
    path.write_bytes(result.stdout)
    summary = weka_read(path)
    assert weka_counts(summary) == (chunk.n_rows, len(schema))
    names = [m.rstrip() for m in re.findall(r"^\s*\d+ (.{25}) +(?:Num|Nom|Str)", summary, re.M)]
    assert names == [a.name[:25].rstrip() for a in schema.attributes]
