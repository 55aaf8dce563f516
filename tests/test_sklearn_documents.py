"""Documents, text and nominal columns in the scikit-learn adapters (issue 39): load_arff keeps
string attributes as text, WordVector takes documents as CountVectorizer does and a Pipeline of
words, shape, bns, l2 and an SVM gives the command line's numbers and predictions; a frame's
categorical columns are nominal attributes, as the command line treats them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.pipeline import Pipeline
from sklearn.svm import LinearSVC

from chain_helpers import REAL, read_bytes
from filterkit.sklearn import BnsScorer, L2Normalizer, Selector, Shaper, WordVector, load_arff

pd = pytest.importorskip("pandas")

SAMPLE = REAL / "reuters_grain_sample.arff"
CREDIT = REAL / "credit-g.arff"
WEKA_EXAMPLES = Path("/usr/share/doc/weka/examples")
WORDS = ["--counts", "--lowercase", "--stopwords", "weka"]


def split_arff(path: Path, folder: Path, every: int) -> tuple[Path, Path]:
    """``path``'s data lines (one document each) as a test file of every ``every``-th line and a
    training file of the others, both with its header."""
    text = path.read_text(encoding="utf-8")
    header, data = text.split("@data\n", 1)
    lines = [line for line in data.splitlines() if line.strip()]
    train, test = folder / "train.arff", folder / "test.arff"
    train.write_text(header + "@data\n" + "".join(f"{line}\n" for k, line in enumerate(lines) if k % every), "utf-8")
    test.write_text(header + "@data\n" + "".join(f"{line}\n" for line in lines[::every]), "utf-8")
    return train, test


def words_pipeline() -> Pipeline:
    return Pipeline(
        [
            ("words", WordVector(counts=True, lowercase=True, stopwords="weka")),
            ("shape", Shaper()),
            ("bns", BnsScorer()),
            ("l2", L2Normalizer()),
            ("svm", LinearSVC(random_state=0)),
        ]
    )


def features_and_labels(arff: bytes):
    """The word features (the class, which ``words`` writes first, left out) and the labels."""
    schema, chunk = read_bytes(arff)
    assert schema.attributes[0].name == "class-att"
    labels = np.array(schema.attributes[0].labels, dtype=object)[chunk.dense_values()[:, 0].astype(int)]
    return [a.name for a in schema.attributes[1:]], sp.csr_matrix(chunk.values)[:, 1:], labels


def check_pipeline_against_the_command_line(train: Path, test: Path, folder: Path, run_filterkit) -> None:
    """Fitted on ``train``'s documents, the pipeline's features (train and test) are the command
    line's ``words … shape bns l2`` and its ``apply``'s, bit for bit, and its predictions those of an
    SVM trained on the command line's output."""
    model = folder / "m.json"
    fitted = run_filterkit("--save-model", model, train, "words", *WORDS, "shape", "bns", "l2")
    assert fitted.status == 0, fitted.stderr
    applied = run_filterkit("apply", model, test)
    assert applied.status == 0, applied.stderr
    names, cli_train, y_train = features_and_labels(fitted.stdout)
    _, cli_test, _ = features_and_labels(applied.stdout)
    documents, y, _ = load_arff(train)
    test_documents, _, _ = load_arff(test)
    assert (y == y_train).all()
    pipeline = words_pipeline().fit(documents[:, 0].tolist(), y)
    assert pipeline[:-1].get_feature_names_out().tolist() == names
    for ours, theirs in [
        (pipeline[:-1].transform(documents), cli_train),
        (pipeline[:-1].transform(test_documents), cli_test),
    ]:
        assert sp.isspmatrix_csr(ours)
        np.testing.assert_array_equal(ours.toarray(), theirs.toarray())
    svm = LinearSVC(random_state=0).fit(cli_train, y_train)
    np.testing.assert_array_equal(pipeline.predict(test_documents), svm.predict(cli_test))
    np.testing.assert_array_equal(pipeline.decision_function(test_documents), svm.decision_function(cli_test))


@pytest.mark.slow
def test_a_words_shape_bns_l2_svm_pipeline_on_documents_is_the_command_line_s(tmp_path, run_filterkit):
    train, test = split_arff(SAMPLE, tmp_path, every=3)
    check_pipeline_against_the_command_line(train, test, tmp_path, run_filterkit)


@pytest.mark.slow
def test_the_pipeline_on_weka_s_reuters_grain_documents_is_the_command_line_s(tmp_path, run_filterkit):
    train, test = WEKA_EXAMPLES / "ReutersGrain-train.arff", WEKA_EXAMPLES / "ReutersGrain-test.arff"
    if not train.is_file() or not test.is_file():
        pytest.skip(f"{train} is not installed (Debian's weka package ships it)")
    check_pipeline_against_the_command_line(train, test, tmp_path, run_filterkit)


def test_load_arff_keeps_the_text_of_a_string_attribute(tmp_path):
    X, y, names = load_arff(SAMPLE)
    assert X.dtype == object and X.shape == (60, 1) and names == ["Text"]
    assert X[0, 0].startswith("BAHIA COCOA REVIEW Showers continued throughout the week in\nthe Bahia cocoa zone")
    assert sorted(set(y.tolist())) == ["0", "1"]
    frame, target, _ = load_arff(SAMPLE, as_frame=True)
    assert isinstance(frame["Text"].dtype, pd.StringDtype) and frame["Text"].iloc[0] == X[0, 0]
    path = tmp_path / "mixed.arff"
    path.write_text(
        "@relation m\n@attribute n numeric\n@attribute t string\n@attribute c {a,b}\n@data\n1,'x y',a\n?,?,b\n"
    )
    X, _, _ = load_arff(path)
    assert X[0].tolist() == [1.0, "x y"] and np.isnan(X[1, 0]) and X[1, 1] is None
    frame, _, _ = load_arff(path, as_frame=True)
    assert frame["t"].isna().tolist() == [False, True] and frame["n"].dtype == np.float64


def test_word_vector_takes_a_list_an_array_a_series_and_a_frame_s_text_column_alike():
    X, y, _ = load_arff(SAMPLE)
    frame, target, _ = load_arff(SAMPLE, as_frame=True)
    documents = X[:, 0].tolist()
    expected = WordVector(lowercase=True).fit(documents, y).transform(documents)
    assert expected.shape[0] == 60 and expected.nnz > 0
    for given, labels in [(X, y), (X[:, 0], y), (frame["Text"], target), (frame, target), (frame[["Text"]], y)]:
        vector = WordVector(lowercase=True).fit(given, labels)
        assert (vector.transform(given) != expected).nnz == 0
        assert (vector.transform(documents) != expected).nnz == 0


def test_a_text_column_given_to_a_stage_that_does_not_read_text_is_a_value_error():
    frame = pd.DataFrame({"n": [1.0, 2.0, 3.0, 4.0], "t": ["a b", "b", "c", "a"]})
    with pytest.raises(ValueError, match="L2Normalizer: stage 'l2' passes the text of 't' through unread"):
        L2Normalizer().fit(frame)


def test_a_frame_with_categorical_columns_is_selected_as_the_command_line_selects_nominal_attributes(run_filterkit):
    frame, target, names = load_arff(CREDIT, as_frame=True)
    selector = Selector(metric="ig", top=5).fit(frame, target)
    result = run_filterkit(CREDIT, "select", "--metric", "ig", "--top", "5")
    schema, chunk = read_bytes(result.stdout)
    kept = [a.name for a in schema.attributes[:-1]]
    assert selector.feature_names_in_.tolist() == names
    assert selector.get_feature_names_out().tolist() == kept
    np.testing.assert_array_equal(selector.transform(frame), chunk.dense_values()[:, :-1])
    with pytest.warns(UserWarning, match="nominal attributes 'checking_status', 'credit_history', 'purpose'"):
        X, y, _ = load_arff(CREDIT)
    # as numbers, the label positions rank otherwise: the reason for the warning
    assert [names[i] for i in Selector(metric="ig", top=5).fit(X, y).get_support(indices=True)] != kept


def test_a_frame_with_categorical_columns_is_shaped_as_the_command_line_shapes_it(run_filterkit):
    frame, target, names = load_arff(CREDIT, as_frame=True)
    shaper = Shaper(positive="good").set_output(transform="pandas").fit(frame, target)
    out = shaper.transform(frame)
    result = run_filterkit("--positive", "good", CREDIT, "shape")
    schema, chunk = read_bytes(result.stdout)
    assert isinstance(out, pd.DataFrame) and out.columns.tolist() == [a.name for a in schema.attributes[:-1]]
    np.testing.assert_array_equal(out.to_numpy(), chunk.dense_values()[:, :-1])


def test_a_category_not_seen_when_fitting_is_a_value_error_naming_the_column():
    frame = pd.DataFrame({"colour": pd.Categorical(["red", "blue", "red", "blue"]), "n": [1.0, 0.0, 2.0, 0.0]})
    selector = Selector(metric="ig", top=1).fit(frame, ["a", "b", "a", "b"])
    assert selector.get_feature_names_out().tolist() == ["colour"]
    other = pd.DataFrame({"colour": pd.Categorical(["green"]), "n": [1.0]})
    with pytest.raises(ValueError, match=r"column 'colour' holds 'green', which is not one of its categories"):
        selector.transform(other)


def test_word_vector_passes_a_frame_s_numbers_bools_and_categories_through_beside_the_words():
    frame = pd.DataFrame(
        {
            "t": ["a b", "b", None],
            "n": pd.array([1, None, 3], dtype="Int64"),
            "flag": [True, False, True],
            "c": pd.Categorical(["x", "y", "x"]),
        }
    )
    vector = WordVector().fit(frame)
    assert vector.get_feature_names_out().tolist() == ["n", "flag", "c", "a", "b"]
    np.testing.assert_array_equal(
        vector.transform(frame).toarray(), [[1, 1, 0, 1, 1], [np.nan, 0, 1, 0, 1], [3, 1, 0, 0, 0]]
    )


def test_a_plain_list_of_numbers_as_y_is_the_class_as_an_array_of_them_is():
    X, y, _ = load_arff(SAMPLE)
    documents = X[:, 0].tolist()
    numbers = [int(label) for label in y]  # the labels are "0" and "1"
    kept = {
        name: tuple(WordVector(lowercase=True, words_to_keep=20).fit(documents, given).get_feature_names_out())
        for name, given in [("labels", y), ("array", np.array(numbers)), ("list", numbers), ("none", None)]
    }
    assert kept["list"] == kept["array"] == kept["labels"]
    assert kept["none"] != kept["labels"]  # per class, words_to_keep keeps other words than over all rows


def test_word_vector_on_numbers_is_a_value_error_and_its_tags_say_it_takes_documents():
    with pytest.raises(ValueError, match=r"^WordVector: stage 'words' finds no string attribute to turn into words: "):
        WordVector().fit(np.eye(3), ["a", "b", "a"])
    tags = WordVector().__sklearn_tags__().input_tags
    assert (tags.string, tags.two_d_array) == (True, False)


def test_word_vector_fit_transform_cuts_the_documents_once_into_fit_then_transform_s_values(monkeypatch):
    """``fit_transform`` makes X's values of what the fit's pass kept (the documents cut into words once, where fit
    then transform cut them twice), the values of fit then transform, whatever X's form; a frame's numbers pass
    through beside the words, and a stage fitted on a sparse array gives one."""
    from filterkit.plugins import load_plugins

    words = type(load_plugins().make_stage("words", {}))
    counted, cut = words.counted, []
    monkeypatch.setattr(
        words, "counted", lambda self, chunk, *a, **k: cut.append(chunk.n_rows) or counted(self, chunk, *a, **k)
    )
    X, y, _ = load_arff(SAMPLE)
    frame, target, _ = load_arff(SAMPLE, as_frame=True)
    frame["n"] = np.arange(len(frame), dtype=float)
    options = {"lowercase": True, "ngrams": "1-2", "words_to_keep": 50}
    for given, labels in [(X[:, 0].tolist(), y), (frame, target)]:
        cut.clear()
        vector = WordVector(**options)
        once = vector.fit_transform(given, labels)
        assert cut == [60]
        expected = WordVector(**options).fit(given, labels).transform(given)
        assert cut == [60, 60, 60] and isinstance(once, sp.csr_matrix)
        assert once.shape == expected.shape and once.shape[1] > 50 and (once != expected).nnz == 0
    column = vector.get_feature_names_out().tolist().index("n")
    np.testing.assert_array_equal(once[:, [column]].toarray().ravel(), frame["n"].to_numpy())
    counts = sp.csr_array(expected)
    shaped = Shaper().fit_transform(counts, y)
    assert isinstance(shaped, sp.csr_array)
    assert (shaped != Shaper().fit(counts, y).transform(counts)).nnz == 0 and shaped.nnz > 0


def test_no_documents_transform_to_no_rows_as_count_vectorizer_s_do():
    """An empty list of documents had failed in numpy ("cannot reshape array of size 0")."""
    words = WordVector().fit(["wheat corn", "corn rice"])
    for empty in ([], np.array([], dtype=object)):
        rows = words.transform(empty)
        assert sp.issparse(rows) and rows.shape == (0, 3)


def test_documents_all_missing_are_a_value_error_naming_them_and_missing_ones_transform_to_zeros():
    """A list of None had failed in scikit-learn's check ("Expected 2D array, got 1D array instead")."""
    for missing in ([None], [None, None], np.array([None, None], dtype=object)):
        with pytest.raises(ValueError, match="WordVector: every document of X is missing"):
            WordVector().fit(missing)
    rows = WordVector().fit(["wheat corn", None]).transform([None, "corn corn"])
    np.testing.assert_array_equal(rows.toarray(), [[0, 0], [1, 0]])  # presence, as Weka's default
