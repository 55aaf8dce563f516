"""Multi-class shaping (issue 22, item 2; docs/algorithms.md §4.1): ``shape --multiclass
one-vs-rest`` (the default on a class of more than two labels without --positive) and
``--multiclass max``, against values worked by hand on a tiny three-class file, and on
oh0's ten classes and Weka's soybean (19 classes).

Every hand example uses ``--neighbors 1`` and the data below.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks
from test_sklearn import ZERO_WEIGHT_KEEPS_A_ROW

from chain_helpers import OH0_SAMPLE, REAL, read_bytes, without_comments
from filterkit.plugins import load_plugins
from filterkit.runner import Chain
from filterkit.schema import Chunk
from filterkit.sklearn import Shaper as ShaperAdapter
from filterkit.sources import FileSource
from filterkit.testing import check_stage

SHAPER_DATA = Path(__file__).parent / "data" / "shaper"

HEADER = """@relation three
@attribute x numeric
@attribute y numeric
@attribute z numeric
@attribute class {a,b,c}
@data
"""
TRAIN = (
    HEADER
    + """0,0,0,a
0,1,0,b
0,0,0,c
0,0,0,c
1,0,0,a
1,2,0,b
2,3,0,b
3,0,0,c
"""
)
# x: zero bin 0 a, 0 b, 0 c, 0 c  →  p̃_a(0) = 2/6, p̃_b(0) = 2/6, p̃_c(0) = 3/6.
#    non-zero rows in value order: positions 0–1 x=1 (a, b) | 2 x=2 (b) | 3 x=3 (c);  --neighbors 1:
#    v=1: rows [0, 3): a 1, b 2, c 0 of 3                     → a 2/5, b 3/5, c 1/5
#    v=2: rows [1, 4): half of the tied 1s (a ½, b ½), the 2 (b), the 3 (c) → a 1.5/5, b 2.5/5, c 2/5
#    v=3: rows [2, 4): the 2 (b), the 3 (c)                   → a 1/4, b 2/4, c 2/4
X_ZERO = {"a": 1 / 3, "b": 1 / 3, "c": 1 / 2}
X_KNOTS = {"a": (2 / 5, 3 / 10, 1 / 4), "b": (3 / 5, 1 / 2, 1 / 2), "c": (1 / 5, 2 / 5, 1 / 2)}


def gain(entries, positives, rows) -> float:
    """The information of a shaped feature, written out (docs/algorithms.md §4.1): per entry
    (rows, positives, p̃) the log-likelihood in bits, less the overall estimate's, per row."""
    likelihood = sum(p * math.log2(e) + (n - p) * math.log2(1 - e) for n, p, e in entries)
    overall = (positives + 1) / (rows + 2)
    return (likelihood - positives * math.log2(overall) - (rows - positives) * math.log2(1 - overall)) / rows


# x's information toward each class: the zero bin's 4 rows, the two 1s, the 2 and the 3.
X_GAIN = {
    "a": gain([(4, 1, 1 / 3), (2, 1, 2 / 5), (1, 0, 3 / 10), (1, 0, 1 / 4)], 2, 8),  # 0.0291
    "b": gain([(4, 1, 1 / 3), (2, 1, 3 / 5), (1, 1, 1 / 2), (1, 0, 1 / 2)], 3, 8),  # 0.0315
    "c": gain([(4, 2, 1 / 2), (2, 0, 1 / 5), (1, 0, 2 / 5), (1, 1, 1 / 2)], 3, 8),  # 0.1587
}


@pytest.fixture
def three(tmp_path):
    (tmp_path / "train.arff").write_text(TRAIN)
    (tmp_path / "test.arff").write_text(HEADER + "2.5,0,0,?\n0,2,0,?\n?,1,0,?\n")
    return tmp_path


def shaped(run_filterkit, data, *options):
    """The schema and rows of the training and test files through ``shape --neighbors 1 OPTIONS``."""
    model = data / "model.json"
    fitted = run_filterkit("--save-model", model, data / "train.arff", "shape", "--neighbors", "1", *options)
    assert fitted.status == 0, fitted.stderr
    applied = run_filterkit("apply", model, data / "test.arff")
    assert applied.status == 0, applied.stderr
    schema, train = read_bytes(fitted.stdout)
    _, test = read_bytes(applied.stdout)
    return schema, train.dense_values(), test.dense_values()


def test_hand_gains_order_the_classes():
    assert X_GAIN["c"] > X_GAIN["b"] > X_GAIN["a"] > 0
    assert X_GAIN["c"] == pytest.approx(0.158724, abs=1e-6)


def test_one_vs_rest_writes_a_copy_shaped_toward_each_label(run_filterkit, three):
    schema, train, test = shaped(run_filterkit, three)
    names = [attribute.name for attribute in schema.attributes]
    assert names == ["x@a", "x@b", "x@c", "y@a", "y@b", "y@c", "z@a", "z@b", "z@c", "class"]
    for c, label in enumerate("abc"):
        knots = X_KNOTS[label]
        expected = [0, 0, 0, 0, knots[0], knots[0], knots[1], knots[2]]
        expected = [0.0 if p == 0 else p - X_ZERO[label] for p in expected]
        np.testing.assert_allclose(train[:, c], expected, rtol=1e-14, atol=1e-16, err_msg=label)
        # 2.5 lies halfway between the knots at 2 and 3; 0 stays 0; a missing x (none in training)
        # gets x's overall p̃ toward the label: a 2 of 8 rows → 3/10, b and c 3 of 8 → 4/10
        assert test[0, c] == pytest.approx((knots[1] + knots[2]) / 2 - X_ZERO[label], rel=1e-14)
        assert test[1, c] == 0
        assert test[2, c] == pytest.approx({"a": 3 / 10, "b": 4 / 10, "c": 4 / 10}[label] - X_ZERO[label], rel=1e-14)
    assert train[4, 0] == pytest.approx(1 / 15, rel=1e-14) and train[4, 2] == pytest.approx(-3 / 10, rel=1e-14)
    # z is 0 everywhere: every copy is 0; the class column is kept
    np.testing.assert_array_equal(train[:, 6:9], 0.0)
    np.testing.assert_array_equal(train[:, 9], [0, 1, 2, 2, 0, 1, 1, 2])


def test_max_shapes_each_feature_toward_its_most_informative_class(run_filterkit, three):
    schema, train, test = shaped(run_filterkit, three, "--multiclass", "max")
    assert [attribute.name for attribute in schema.attributes] == ["x", "y", "z", "class"]
    # x toward c (the largest hand gain): 1 → 1/5 − 1/2, 2 → 2/5 − 1/2, 3 → 1/2 − 1/2
    np.testing.assert_allclose(train[:, 0], [0, 0, 0, 0, -3 / 10, -3 / 10, -1 / 10, 0], rtol=1e-14, atol=1e-16)
    # y is non-zero on b's rows only: toward b.  Zero bin: 5 rows, no b → 1/7;
    # non-zero 1, 2, 3 (all b), --neighbors 1: v=1 rows 2 → 3/4, v=2 rows 3 → 4/5, v=3 rows 2 → 3/4
    np.testing.assert_allclose(train[:, 1], [0, 3 / 4 - 1 / 7, 0, 0, 0, 4 / 5 - 1 / 7, 3 / 4 - 1 / 7, 0], rtol=1e-14)
    # z tells nothing of any class (every gain 0): the first label, a, whose zero-bin shift makes it 0
    np.testing.assert_array_equal(train[:, 2], 0.0)
    assert test[0, 0] == pytest.approx((2 / 5 + 1 / 2) / 2 - 1 / 2, rel=1e-14)


def test_max_records_the_chosen_class_per_feature(three):
    stage = load_plugins().make_stage("shape", {"neighbors": 1, "multiclass": "max"})
    Chain([stage]).fit(FileSource(str(three / "train.arff")))
    assert stage.column_class.tolist() == [2, 1, 0]


def test_a_class_without_training_rows_is_never_the_most_informative(run_filterkit, tmp_path):
    header = HEADER.replace("{a,b,c}", "{a,b,c,d}")
    (tmp_path / "train.arff").write_text(header + TRAIN[len(HEADER) :])
    stage = load_plugins().make_stage("shape", {"neighbors": 1, "multiclass": "max"})
    Chain([stage]).fit(FileSource(str(tmp_path / "train.arff")))
    assert stage.column_class.tolist() == [2, 1, 0]
    ovr = run_filterkit(tmp_path / "train.arff", "shape")
    assert ovr.status == 0, ovr.stderr
    assert b"@attribute x@d numeric" in ovr.stdout


def test_with_positive_or_two_classes_multiclass_changes_nothing(run_filterkit, three):
    for options in ([], ["--multiclass", "max"]):
        one = run_filterkit("--positive", "b", three / "train.arff", "shape", "--neighbors", "1", *options)
        assert one.status == 0
        schema, rows = read_bytes(one.stdout)
        assert [attribute.name for attribute in schema.attributes] == ["x", "y", "z", "class"]
        np.testing.assert_allclose(rows.dense_values()[4:8, 0], [p - 1 / 3 for p in (3 / 5, 3 / 5, 1 / 2, 1 / 2)])
    default = run_filterkit(REAL / "diabetes.arff", "shape")
    assert default.status == 0
    assert without_comments(run_filterkit(REAL / "diabetes.arff", "shape", "--multiclass", "max").stdout) == (
        without_comments(default.stdout)
    )


@pytest.mark.slow
def test_each_copy_is_the_binary_shaper_toward_its_label_on_oh0(run_filterkit):
    """oh0 (10 classes, sparse word counts): the copy word@L equals ``--positive L``'s word, for
    every label; zeros stay zeros in every copy."""
    schema_in, rows_in = read_bytes((REAL / "oh0.wc.arff").read_bytes())
    result = run_filterkit(REAL / "oh0.wc.arff", "shape")
    assert result.status == 0, result.stderr
    schema, rows = read_bytes(result.stdout)
    labels = schema_in.attributes[-1].labels
    k, n_words = len(labels), len(schema_in.attributes) - 1
    assert len(schema.attributes) == n_words * k + 1 and rows.is_sparse
    assert schema.attributes[1].name == f"{schema_in.attributes[0].name}@{labels[1]}"
    copies = rows.values[:, :-1]
    # a copy is non-zero only where its word is (a p̃ equal to the zero bin's gives an exact 0)
    pattern = (rows_in.values[:, :-1] != 0).astype(np.int64)
    assert ((copies != 0).astype(np.int64) - pattern[:, np.repeat(np.arange(n_words), k)]).max() <= 0
    assert copies.nnz > 0.99 * pattern.nnz * k
    for c, label in enumerate(labels[:3]):
        binary = run_filterkit("--positive", label, REAL / "oh0.wc.arff", "shape")
        _, expected = read_bytes(binary.stdout)
        difference = copies[:, c::k] - expected.values[:, :-1]
        assert difference.nnz == 0 or np.abs(difference.data).max() == 0, label


def test_max_keeps_sparse_zeros_and_names_on_oh0(run_filterkit):
    result = run_filterkit(OH0_SAMPLE, "shape", "--multiclass", "max", "--transform", "logodds")
    assert result.status == 0, result.stderr
    schema_in, rows_in = read_bytes(OH0_SAMPLE.read_bytes())
    schema, rows = read_bytes(result.stdout)
    assert [a.name for a in schema.attributes] == [a.name for a in schema_in.attributes]
    assert rows.values.nnz <= rows_in.values.nnz
    assert set(zip(*rows.values.nonzero())) <= set(zip(*rows_in.values.nonzero()))


@pytest.mark.slow
@pytest.mark.parametrize("options", [[], ["--multiclass", "max"], ["--no-zero-bin", "--transform", "logodds"]])
def test_the_chunk_size_does_not_change_a_byte(run_filterkit, options):
    for data in (OH0_SAMPLE, SHAPER_DATA / "soybean-sample.arff"):
        whole = run_filterkit(data, "shape", *options)
        assert whole.status == 0, whole.stderr
        assert run_filterkit("--chunk-rows", "1", data, "shape", *options).stdout == whole.stdout
        assert run_filterkit("--chunk-rows", "7", data, "shape", *options).stdout == whole.stdout


def test_a_copy_named_like_another_attribute_is_a_clear_error(run_filterkit, tmp_path):
    (tmp_path / "clash.arff").write_text(
        "@relation clash\n@attribute x numeric\n@attribute x@b string\n@attribute class {a,b,c}\n@data\n1,w,a\n"
    )
    result = run_filterkit("-o", tmp_path / "out.arff", tmp_path / "clash.arff", "shape")
    assert result.status == 1
    assert result.stderr.startswith("filterkit: error:") and "Traceback" not in result.stderr
    assert "'x@b'" in result.stderr and "--multiclass max" in result.stderr
    assert not (tmp_path / "out.arff").exists()
    assert run_filterkit(tmp_path / "clash.arff", "shape", "--multiclass", "max").status == 0


@pytest.mark.parametrize("options", [{}, {"multiclass": "max"}, {"multiclass": "max", "zero_bin": False}])
@pytest.mark.slow
def test_the_stage_contract_holds_for_each_mode(options):
    shaper = load_plugins().stages["shape"].value
    check_stage(shaper, **options)


def test_a_0_3_model_of_a_multiclass_file_with_positive_applies_byte_for_byte(run_filterkit):
    applied = run_filterkit(
        "apply", SHAPER_DATA / "soybean-shape-logodds-0.3.json", SHAPER_DATA / "soybean-sample.arff"
    )
    assert applied.status == 0, applied.stderr
    expected = (SHAPER_DATA / "soybean-sample-shape-logodds-0.3.out.arff").read_bytes()
    assert without_comments(applied.stdout) == without_comments(expected)


@pytest.mark.slow
def test_soybean_one_vs_rest_round_trips_through_a_model(run_filterkit, tmp_path):
    data = SHAPER_DATA / "soybean.arff"
    fitted = run_filterkit("--save-model", tmp_path / "m.json", data, "shape", "--multiclass", "max")
    assert fitted.status == 0, fitted.stderr
    assert without_comments(run_filterkit("apply", tmp_path / "m.json", data).stdout) == without_comments(fitted.stdout)
    fitted = run_filterkit("--save-model", tmp_path / "o.json", data, "shape")
    schema, _ = read_bytes(fitted.stdout)
    assert len(schema.attributes) == 35 * 19 + 1
    assert without_comments(run_filterkit("apply", tmp_path / "o.json", data).stdout) == without_comments(fitted.stdout)


# --- the scikit-learn adapter ------------------------------------------------------------------


def test_the_scikit_learn_shaper_takes_a_multiclass_y_with_its_defaults():
    X = np.loadtxt(TRAIN.splitlines()[6:], delimiter=",", usecols=(0, 1, 2))
    y = [line.split(",")[-1] for line in TRAIN.splitlines()[6:]]
    shaper = ShaperAdapter(neighbors=1).fit(X, y)
    assert shaper.get_feature_names_out().tolist() == [f"x{j}@{c}" for j in range(3) for c in "abc"]
    out = shaper.transform(np.array([[2.5, 0.0, 0.0]]))
    assert out.shape == (1, 9)
    np.testing.assert_allclose(out[0, :3], [(X_KNOTS[c][1] + X_KNOTS[c][2]) / 2 - X_ZERO[c] for c in "abc"])
    kept = ShaperAdapter(neighbors=1, multiclass="max").fit(X, y)
    assert kept.get_feature_names_out().tolist() == ["x0", "x1", "x2"]
    assert kept.transform(X).shape == (8, 3)


def test_the_scikit_learn_shaper_names_its_copies_in_a_pandas_frame():
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame({"u": [1.0, 0, 2, 3, 0, 1], "v": [0.0, 1, 0, 1, 2, 1]})
    y = ["a", "b", "c", "a", "b", "c"]
    frame = ShaperAdapter().set_output(transform="pandas").fit(X, y).transform(X)
    assert frame.columns.tolist() == ["u@a", "u@b", "u@c", "v@a", "v@b", "v@c"]


@pytest.mark.slow
@parametrize_with_checks(
    [ShaperAdapter(), ShaperAdapter(multiclass="max")], expected_failed_checks=lambda estimator: ZERO_WEIGHT_KEEPS_A_ROW
)
def test_scikit_learn_estimator_checks_with_default_parameters(estimator, check):
    check(estimator)


def test_a_max_model_must_say_which_class_each_feature_was_shaped_toward(three):
    from filterkit.errors import FilterkitError

    stage = load_plugins().make_stage("shape", {"neighbors": 1, "multiclass": "max"})
    chain = Chain([stage]).fit(FileSource(str(three / "train.arff")))
    state = stage.state()
    assert state["column_class"].tolist() == [2, 1, 0]
    assert (
        "column_class"
        not in Chain([load_plugins().make_stage("shape", {})])
        .fit(FileSource(str(three / "train.arff")))
        .stages[0]
        .state()
    )
    for broken, words in (
        ({key: value for key, value in state.items() if key != "column_class"}, "'column_class' is missing"),
        ({**state, "column_class": np.array([2, 1, 3])}, "'column_class'"),
        ({**state, "column_class": np.array([2, 1])}, "'column_class'"),
    ):
        fresh = load_plugins().make_stage("shape", {"neighbors": 1, "multiclass": "max"})
        fresh.prepare(chain.input_schema, stage.context)
        with pytest.raises(FilterkitError, match=words):
            fresh.load_state(broken)


SPARSE_WITH_A_NOMINAL = """@relation words_and_a_nominal
@attribute w1 numeric
@attribute kind {first,second,third}
@attribute w2 numeric
@attribute w3 numeric
@attribute class {a,b,c}
@data
{0 2,4 a}
{1 second,3 1,4 a}
{2 1,4 b}
{0 1,1 third,2 3,4 b}
{4 c}
{3 4,4 c}
{0 1,1 second,4 c}
{1 first,2 2,4 a}
"""


@pytest.mark.parametrize("options", [{}, {"multiclass": "max"}, {"positive": "a"}])
def test_a_nominal_attribute_leaves_the_numeric_ones_sparse_and_the_output_equal_to_the_dense_path(
    tmp_path, monkeypatch, options
):
    # the first label of a nominal is left out of a sparse row: it is shaped like any label, so it
    # must be filled in, while the numeric columns stay sparse (they were made dense before)
    path = tmp_path / "mixed.arff"
    path.write_text(SPARSE_WITH_A_NOMINAL)
    positive = options.get("positive")
    params = {"neighbors": 1, **{k: v for k, v in options.items() if k != "positive"}}
    chain = Chain([load_plugins().make_stage("shape", params)], positive=positive).fit(FileSource(str(path)))
    chunks = list(FileSource(str(path)).chunks())
    with monkeypatch.context() as patched:
        # a sparse chunk is never made dense whole: rows × features × classes would not fit
        patched.setattr(Chunk, "dense_values", lambda chunk: pytest.fail("a sparse chunk was made dense"))
        (sparse,) = chain.transform(chunks)
    dense_input = FileSource(str(path)).chunks()
    (dense,) = chain.transform(type(chunk)(chunk.dense_values(), chunk.text, chunk.weights) for chunk in dense_input)
    assert sparse.is_sparse and not dense.is_sparse
    np.testing.assert_array_equal(sparse.dense_values(), dense.values)
    copies = 3 if not options else 1
    numeric_entries, class_entries = 8, 5  # stored in the rows above: w1, w2 and w3; the classes b and c
    # each copy: the numeric values as stored, and the nominal in every row
    assert sparse.values.nnz == copies * (numeric_entries + 8) + class_entries


def test_one_vs_rest_copies_beyond_the_attribute_limit_are_refused_before_any_work(
    run_filterkit, monkeypatch, tmp_path
):
    # features × labels columns: a class of many labels must not make millions of attributes unasked
    out = tmp_path / "out.arff"
    monkeypatch.setenv("FILTERKIT_MAX_ATTRIBUTES", "12")
    refused = run_filterkit("-o", out, REAL / "iris.arff", "shape")
    assert refused.status == 1 and not out.exists()
    assert refused.stderr == (
        "filterkit: error: stage 'shape': --multiclass one-vs-rest would write 13 attributes (4 features × 3 "
        "labels), more than the 12 a file may declare (set FILTERKIT_MAX_ATTRIBUTES to allow more): use "
        "--multiclass max or --positive\n"
    )
    assert run_filterkit("-o", out, REAL / "iris.arff", "shape", "--multiclass", "max").status == 0
    monkeypatch.setenv("FILTERKIT_MAX_ATTRIBUTES", "13")
    assert run_filterkit("-o", out, REAL / "iris.arff", "shape").status == 0


def test_most_informative_fits_toward_the_labels_that_have_rows_only(tmp_path, run_filterkit, monkeypatch):
    """A class declaring 2,000 labels, three of them on rows: --multiclass max fitted toward every declared label
    (a fit costs the features: 200,000 labels × 200 features took 4 GB), and wrote what fitting the three gives."""
    import filterkit_plugins.shaper as shaper

    calls = []
    fit_toward = shaper.fit_toward
    monkeypatch.setattr(shaper, "fit_toward", lambda target, *rest: calls.append(target) or fit_toward(target, *rest))
    labels = [f"l{k}" for k in range(2000)]
    rows = "".join(f"{k % 4},{k % 3},{(k * 7) % 5},{labels[(k % 3) * 900]}\n" for k in range(60))
    header = "@relation m\n@attribute a numeric\n@attribute b numeric\n@attribute c numeric\n"
    wide, narrow = tmp_path / "wide.arff", tmp_path / "narrow.arff"
    wide.write_text(header + "@attribute class {" + ",".join(labels) + "}\n@data\n" + rows)
    narrow.write_text(header + "@attribute class {l0,l900,l1800}\n@data\n" + rows)
    shaped = run_filterkit("-q", wide, "shape", "--multiclass", "max")
    assert shaped.status == 0 and sorted(calls) == [0, 900, 1800]
    alone = run_filterkit("-q", narrow, "shape", "--multiclass", "max")
    assert shaped.stdout.split(b"@data")[1] == alone.stdout.split(b"@data")[1]
