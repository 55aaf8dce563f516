"""``filterkit.sklearn.load`` reads every format the command line reads (issue 52, item 6): documents as
CSV and JSON Lines load as the ARFF file's docs and labels, and a words pipeline fits on them."""

from __future__ import annotations

import numpy as np
import pytest
from record_files import write_csv, write_jsonl
from sklearn.pipeline import Pipeline
from sklearn.svm import LinearSVC

from chain_helpers import REAL
from filterkit.errors import FilterkitError
from filterkit.sklearn import L2Normalizer, Shaper, WordVector, load, load_arff

GRAIN = REAL / "reuters_grain_sample.arff"
IRIS = REAL / "iris.arff"


def test_documents_as_csv_and_json_lines_load_as_the_arff_file_and_fit(tmp_path):
    docs, y, names = load_arff(GRAIN)
    csv = write_csv(GRAIN, tmp_path / "grain.csv")
    jsonl = write_jsonl(GRAIN, tmp_path / "grain.jsonl", ["class-att", "Text"])
    pipeline = Pipeline(
        [("words", WordVector(counts=True, lowercase=True)), ("shape", Shaper()), ("l2", L2Normalizer())]
    )
    expected = pipeline.fit_transform(docs, y).toarray()
    for loaded in (load(csv), load(jsonl, class_="class-att"), load(csv, format="csv"), load(GRAIN)):
        assert loaded[2] == names == ["Text"]
        assert loaded[0].dtype == object and loaded[0][:, 0].tolist() == docs[:, 0].tolist()
        assert loaded[1].tolist() == y.tolist() and sorted(set(y.tolist())) == ["0", "1"]
        assert np.array_equal(pipeline.fit_transform(*loaded[:2]).toarray(), expected)
    svm = Pipeline([*pipeline.steps, ("svm", LinearSVC(random_state=0))]).fit(*load(jsonl, class_="first")[:2])
    assert (svm.predict(docs) == y).mean() == 1.0


def test_load_arff_is_load_of_arff(tmp_path):
    X, y, names = load(IRIS, format="arff")
    expected = load_arff(IRIS)
    assert np.array_equal(X, expected[0]) and y.tolist() == expected[1].tolist() and names == expected[2]


def test_the_reading_options_type_the_columns(tmp_path):
    csv = write_csv(IRIS, tmp_path / "iris.csv")
    X, y, names = load(csv, text="class", class_="first")
    assert names == ["sepalwidth", "petallength", "petalwidth", "class"]
    assert X[0, 3] == "Iris-setosa" and y[0] == 5.1
    frame, target, _ = load(csv, as_frame=True)
    assert list(target.cat.categories) == ["Iris-setosa", "Iris-versicolor", "Iris-virginica"]
    assert frame.shape == (150, 4)
    svm = tmp_path / "iris.svm"
    svm.write_text("1 0:2.5\n0 2:1\n")
    X, y, names = load(svm, zero_based=True)
    assert X.toarray().tolist() == [[2.5, 0, 0], [0, 0, 1]] and y.tolist() == ["1", "0"]


def test_an_unknown_option_or_format_is_refused(tmp_path):
    with pytest.raises(TypeError, match="unknown format options"):
        load(IRIS, textt="class")
    with pytest.raises(FilterkitError, match="unknown format 'xls'"):
        load(IRIS, format="xls")


def test_a_binary_stream_and_a_gzip_file_load_as_the_file_and_a_text_stream_is_refused(tmp_path):
    """ARFF read as it comes in the caller's thread (a stream, a gzip file) gives the file's rows; a text stream,
    which the reader cannot read, is a TypeError saying what to give, not a fault of the ARFF format."""
    import gzip

    path = REAL / "iris.arff"
    zipped = tmp_path / "iris.arff.gz"
    zipped.write_bytes(gzip.compress(path.read_bytes()))
    X, y, names = load(path)
    with open(path, "rb") as stream:
        for other in (load(zipped), load(stream)):
            assert np.array_equal(other[0], X) and list(other[1]) == list(y) and other[2] == names
    with open(path, encoding="utf-8") as text, pytest.raises(TypeError, match="not a text stream"):
        load(text)
