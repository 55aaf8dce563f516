"""filterkit-tfidf, installed: ``logtf`` and ``tfidf`` against hand-worked values and
scikit-learn's idf, mergeable statistics, model files, ``gss`` as a metric, scorer stage and
``select --metric``, and ``rocchio`` by hand and in ``filterkit evaluate``.

Run with the plugin installed (``pip install -e '.[test]'``, then ``python -m pytest``): filterkit
finds the plugin through its entry point, as a user's filterkit does.
"""

import io
import json
import math

import numpy as np
import pytest
import scipy.sparse as sp
from filterkit_tfidf import DocumentCounts, Rocchio, gss_coefficient, inverse_document_frequency
from sklearn.feature_extraction.text import TfidfTransformer

from filterkit.arff import read_arff
from filterkit.cli import run
from filterkit.errors import FilterkitError
from filterkit.model import model_arrays
from filterkit.plugins import load_plugins
from filterkit.schema import Chunk
from filterkit.stage import Context
from filterkit.testing import check_stage

HEADER = """@relation tiny
@attribute a numeric
@attribute b numeric
@attribute c numeric
@attribute d numeric
@attribute label {pos,neg}
@data
"""
# N = 4 rows; a is in all four, b in two, c in one (its missing value is not a document), d in none.
TINY_DENSE = HEADER + "3,1,0,0,pos\n1,2,0,0,pos\n2,0,?,0,neg\n5,0,2,0,neg\n"
TINY_SPARSE = HEADER + "{0 3,1 1,4 pos}\n{0 1,1 2,4 pos}\n{0 2,2 ?,4 neg}\n{0 5,2 2,4 neg}\n"
SMOOTH_IDF = [1.0, math.log(5 / 3) + 1, math.log(5 / 2) + 1, math.log(5) + 1]
PLAIN_IDF = [1.0, math.log(2) + 1, math.log(4) + 1, 0.0]
NAN = math.nan


@pytest.fixture
def filterkit(capsysbinary):
    """Run the filterkit command line in this process; returns (status, stdout bytes, stderr)."""

    def invoke(*argv):
        status = run([str(a) for a in argv])
        out, err = capsysbinary.readouterr()
        return status, out, err.decode("utf-8")

    return invoke


def write(folder, name, text):
    path = folder / name
    path.write_text(text)
    return path


def read_output(stdout: bytes):
    return read_arff(io.BytesIO(stdout), "<output>")


def counts_arff(folder, signal: float = 0.0):
    """40 rows of random counts of 12 words (w5 in none), every third row 'pos' (its w0 raised by ``signal``)."""
    counts = np.random.default_rng(7).poisson(0.6, size=(40, 12)).astype(np.float64)
    counts[:, 5] = 0.0
    positive = np.arange(len(counts)) % 3 == 0
    counts[positive, 0] += signal
    header = "@relation counts\n" + "".join(f"@attribute w{j} integer\n" for j in range(12))
    rows = "".join(",".join(f"{v:g}" for v in row) + (",pos\n" if p else ",neg\n") for row, p in zip(counts, positive))
    return write(folder, "counts.arff", header + "@attribute label {pos,neg}\n@data\n" + rows), counts


def test_everything_comes_from_this_distribution_s_entry_point():
    registry = load_plugins()
    for table, name in (
        (registry.stages, "logtf"),
        (registry.stages, "tfidf"),
        (registry.metrics, "gss"),
        (registry.classifiers, "rocchio"),
    ):
        assert (table[name].plugin, table[name].distribution) == ("tfidf", "filterkit-tfidf")
    assert "gss" in registry.stages, "filterkit makes a scorer stage for every registered metric"


@pytest.mark.parametrize("text", [TINY_DENSE, TINY_SPARSE], ids=["dense", "sparse"])
def test_logtf_is_one_plus_ln_of_positive_counts_and_keeps_zero_and_missing(filterkit, tmp_path, text):
    status, out, err = filterkit(write(tmp_path, "tiny.arff", text), "logtf")
    assert status == 0, err
    schema, chunk = read_output(out)
    ln = math.log
    expected = [
        [1 + ln(3), 1, 0, 0, 0],
        [1, 1 + ln(2), 0, 0, 0],
        [1 + ln(2), 0, NAN, 0, 1],
        [1 + ln(5), 0, 1 + ln(2), 0, 1],
    ]
    np.testing.assert_allclose(chunk.dense_values(), expected, rtol=1e-15, atol=0)
    assert chunk.is_sparse == (text is TINY_SPARSE)
    assert schema.attributes[4].labels == ("pos", "neg")


def test_logtf_refuses_a_negative_count(filterkit, tmp_path):
    status, out, err = filterkit(write(tmp_path, "tiny.arff", HEADER + "3,-2,0,0,pos\n"), "logtf")
    assert status == 1
    assert err == "filterkit: error: stage 'logtf': a term frequency cannot be negative (found -2)\n"


@pytest.mark.parametrize("text", [TINY_DENSE, TINY_SPARSE], ids=["dense", "sparse"])
@pytest.mark.parametrize("smooth, idf", [("--smooth", SMOOTH_IDF), ("--no-smooth", PLAIN_IDF)])
def test_each_feature_is_multiplied_by_its_hand_worked_idf(filterkit, tmp_path, text, smooth, idf):
    status, out, err = filterkit(write(tmp_path, "tiny.arff", text), "tfidf", smooth)
    assert status == 0, err
    _, chunk = read_output(out)
    a, b, c, d = idf
    expected = [[3 * a, 1 * b, 0, 0, 0], [1 * a, 2 * b, 0, 0, 0], [2 * a, 0, NAN, 0, 1], [5 * a, 0, 2 * c, 0, 1]]
    np.testing.assert_allclose(chunk.dense_values(), expected, rtol=1e-15, atol=0)


def test_zero_stays_zero_so_sparse_stays_sparse(filterkit, tmp_path):
    _, original = read_arff(write(tmp_path, "tiny.arff", TINY_SPARSE))
    status, out, err = filterkit(tmp_path / "tiny.arff", "tfidf")
    assert status == 0, err
    _, chunk = read_output(out)
    assert chunk.is_sparse
    assert (chunk.dense_values() != 0).tolist() == (original.dense_values() != 0).tolist()


def test_tfidf_equals_scikit_learn_smooth_tfidf_on_random_counts(filterkit, tmp_path):
    path, counts = counts_arff(tmp_path)
    status, out, err = filterkit(path, "tfidf")
    assert status == 0, err
    _, chunk = read_output(out)
    oracle = TfidfTransformer(norm=None, smooth_idf=True).fit(sp.csr_matrix(counts))
    np.testing.assert_allclose(
        chunk.dense_values()[:, :12], oracle.transform(sp.csr_matrix(counts)).toarray(), rtol=1e-13
    )


@pytest.mark.parametrize("text", [TINY_DENSE, TINY_SPARSE], ids=["dense", "sparse"])
def test_statistics_of_two_parts_merge_into_those_of_the_whole(tmp_path, text):
    schema, whole = read_arff(write(tmp_path, "tiny.arff", text))
    stage = load_plugins().make_stage("tfidf", {})
    stage.prepare(schema, Context(class_index=4))
    first = stage.accumulate(stage.new_statistics(), Chunk(whole.values[:1]))
    second = stage.accumulate(stage.new_statistics(), Chunk(whole.values[1:]))
    together = stage.accumulate(stage.new_statistics(), whole)
    for merged in (stage.merge(first, second), stage.merge(second, first)):
        assert merged.rows == together.rows == 4
        np.testing.assert_array_equal(merged.document_frequency, together.document_frequency)
    np.testing.assert_array_equal(together.document_frequency, [4, 2, 1, 0])


def test_output_does_not_depend_on_the_chunk_size(filterkit, tmp_path):
    path = write(tmp_path, "tiny.arff", TINY_SPARSE)
    assert filterkit("--chunk-rows", "1", path, "tfidf")[1] == filterkit(path, "tfidf")[1]


def test_saved_model_applies_the_training_idf_to_new_rows(filterkit, tmp_path):
    train = write(tmp_path, "train.arff", TINY_DENSE)
    test = write(tmp_path, "test.arff", HEADER + "1,1,1,1,pos\n0,0,0,3,neg\n")
    model = tmp_path / "model.json"
    status, _, err = filterkit("--save-model", model, train, "tfidf")
    assert status == 0, err
    document = json.loads(model.read_text())
    [entry] = document["stages"]
    assert (entry["name"], entry["plugin"], entry["distribution"]) == ("tfidf", "tfidf", "filterkit-tfidf")
    assert entry["state"]["documents"] == 4
    np.testing.assert_allclose(model_arrays(model)["0.idf"], SMOOTH_IDF, rtol=1e-15)
    status, out, err = filterkit("apply", model, test)
    assert status == 0, err
    _, chunk = read_output(out)
    np.testing.assert_allclose(chunk.dense_values(), [[*SMOOTH_IDF, 0], [0, 0, 0, 3 * SMOOTH_IDF[3], 1]], rtol=1e-15)


def test_a_saved_idf_of_the_wrong_length_is_refused(tmp_path):
    schema, _ = read_arff(write(tmp_path, "tiny.arff", TINY_DENSE))
    stage = load_plugins().make_stage("tfidf", {})
    stage.prepare(schema, Context(class_index=4))
    with pytest.raises(
        FilterkitError,
        match=r"stage 'tfidf': the model's saved state is invalid: 'idf' has shape \(3,\), expected \(4,\)",
    ):
        stage.load_state({"documents": 4, "document_frequency": np.zeros(4), "idf": np.ones(3)})


def test_idf_function_smooths_or_zeroes_unseen_features():
    np.testing.assert_allclose(inverse_document_frequency(np.array([4, 2, 1, 0]), 4), SMOOTH_IDF, rtol=1e-15)
    np.testing.assert_allclose(
        inverse_document_frequency(np.array([4, 2, 1, 0]), 4, smooth=False), PLAIN_IDF, rtol=1e-15
    )
    merged = DocumentCounts(1, np.array([1.0, 0.0])).merge(DocumentCounts(2, np.array([1.0, 2.0])))
    assert merged.rows == 3 and merged.document_frequency.tolist() == [2.0, 2.0]


def test_gss_of_hand_counts():
    tp = np.array([2.0, 2.0, 0.0, 4.0])
    fp = np.array([2.0, 0.0, 1.0, 0.0])
    # (tp·tn − fp·fn) / 8²: (4 − 4), (8 − 0), (0 − 4), (16 − 0), over 64.
    np.testing.assert_allclose(gss_coefficient(tp, fp, 4.0, 4.0), [0.0, 0.125, -0.0625, 0.25], rtol=1e-15)


def test_select_ranks_by_gss_and_the_gss_scorer_scales_by_it(filterkit, tmp_path):
    path = write(tmp_path, "tiny.arff", TINY_DENSE)
    # Presence, positive class pos, N = 4: a tp 2 fp 2 → 0; b tp 2 fp 0 → 4/16; c tp 0 fp 1 → −2/16; d → 0.
    status, out, err = filterkit(
        "--positive", "pos", path, "tfidf", "select", "--metric", "gss", "--presence", "--top", "1"
    )
    assert status == 0, err
    schema, chunk = read_output(out)
    assert [a.name for a in schema.attributes] == ["b", "label"]
    np.testing.assert_allclose(chunk.dense_values()[:, 0], [SMOOTH_IDF[1], 2 * SMOOTH_IDF[1], 0, 0], rtol=1e-15)
    status, out, err = filterkit("--positive", "pos", path, "gss", "--presence")
    assert status == 0, err
    _, chunk = read_output(out)
    # The scorer widens b's training range [0, 2] to its score: x · 0.25 / 2.
    np.testing.assert_allclose(chunk.dense_values()[:, 1], np.array([1, 2, 0, 0]) * 0.25 / 2, rtol=1e-15)


@pytest.mark.parametrize("form", [np.array, sp.csr_matrix], ids=["dense", "sparse"])
def test_rocchio_picks_the_nearer_class_centroid(form):
    # Positive centroid (2, 0), negative (0, 3): w = (2, −3), threshold (4 − 9) / 2 = −2.5.
    features = form(np.array([[1.0, 0.0], [3.0, 0.0], [0.0, 2.0], [0.0, 4.0]]))
    rocchio = Rocchio().fit(features, np.array([1, 1, 0, 0]), seed=0)
    assert rocchio.describe() == {"threshold": -2.5}
    rows = form(np.array([[1.0, 1.0], [0.0, 1.0], [2.0, 3.0]]))
    # (1, 1) is √2 from (2, 0) and √5 from (0, 3); (0, 1) is √5 and 2; (2, 3) is 3 and 2.
    np.testing.assert_allclose(rocchio.score(rows), [1.5, -0.5, -2.5], rtol=1e-15)
    assert rocchio.predict(rows).tolist() == [True, False, False]


def test_rocchio_saves_its_hyperplane_and_refuses_a_damaged_one():
    fitted = Rocchio().fit(np.array([[1.0, 0.0], [3.0, 0.0], [0.0, 2.0], [0.0, 4.0]]), np.array([1, 1, 0, 0]), seed=0)
    loaded = Rocchio()
    loaded.load_state(fitted.state())
    weights, intercepts = loaded.linear()
    assert (weights.tolist(), intercepts.tolist()) == ([[2.0, -3.0]], [2.5])
    rows = np.array([[1.0, 1.0], [0.0, 1.0]])
    np.testing.assert_array_equal(loaded.score(rows), fitted.score(rows))
    with pytest.raises(FilterkitError, match="rocchio: the model's weights and threshold must be finite numbers"):
        Rocchio().load_state({"weights": np.array([np.nan, 1.0]), "threshold": 0.0})


def test_rocchio_refuses_training_rows_of_one_class():
    with pytest.raises(FilterkitError, match="both positive and negative"):
        Rocchio().fit(np.ones((3, 2)), np.ones(3, dtype=np.int64), seed=0)


def test_rocchio_is_an_evaluate_classifier_and_finds_a_planted_word(filterkit, tmp_path):
    path, _ = counts_arff(tmp_path, signal=3.0)
    status, out, err = filterkit(
        "evaluate", "--classifier", "rocchio", "--positive", "pos", "--folds", "2", "--json", "-q", path, "tfidf"
    )
    assert status == 0, err
    report = json.loads(out)
    assert report["settings"]["classifier"] == "rocchio"
    assert [sorted(fold) for fold in report["classifier"]] == [["threshold"], ["threshold"]]
    assert report["auc"] > 0.9


@pytest.mark.parametrize("name", ["logtf", "tfidf", "gss"])
def test_every_stage_keeps_the_stage_contract(name):
    check_stage(load_plugins().stage(name))
