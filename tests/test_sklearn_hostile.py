"""The scikit-learn adapters on what the command line reads differently from a naive loader: a class whose labels are
declared in an order other than the sorted one (the order decides ties), and rows with instance weights."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.pipeline import make_pipeline

from filterkit.sklearn import ScoreScaler, Selector, Shaper, load, load_arff
from filterkit.testing import read_output, run_filterkit

#: The class declared {p,n}: three rows each, so the positive class is the tie's, the second declared label (n).
TIED_CLASSES = """@relation o
@attribute a numeric
@attribute cls {p,n}
@data
1,p
2,p
0,p
3,n
0,n
0,n
"""

#: Three classes declared {z,a,m}, each with the one feature that marks it (``select --per-class`` takes turns).
THREE_CLASSES = """@relation three
@attribute fz numeric
@attribute fa numeric
@attribute fm numeric
@attribute cls {z,a,m}
@data
1,0,0,z
1,0,0,z
0,1,0,a
0,1,0,a
0,0,1,m
0,0,1,m
"""

#: Rows weighted 5 and 0 (``{w}`` after the row); the others weigh 1.
WEIGHTED = """@relation wt
@attribute a numeric
@attribute cls {n,p}
@data
1,p,{5}
0,p
0,n
1,n
0,n,{0}
"""

#: Two numeric features and weights that change which class is the minority and what the scores are.
WEIGHTED_FEATURES = """@relation wf
@attribute a numeric
@attribute b numeric
@attribute cls {n,p}
@data
1,0,p,{3}
2,1,p
0,4,n,{0.5}
3,0,n
0,2,n,{2}
5,1,p,{0}
0,0,n
"""


def written(tmp_path, text: str, name: str = "data.arff"):
    path = tmp_path / name
    path.write_text(text)
    return path


def command_line_values(*argv) -> np.ndarray:
    """The feature values (all but the class, last) that ``filterkit ARGV…`` writes."""
    run = run_filterkit(*argv)
    assert run.status == 0, run.stderr
    _, chunk = read_output(run.stdout)
    values = chunk.values.toarray() if chunk.is_sparse else chunk.values
    return values[:, :-1]


def test_shaper_on_a_categorical_y_shapes_toward_the_command_line_s_positive_class(tmp_path):
    path = written(tmp_path, TIED_CLASSES)
    X, y, _ = load_arff(path, as_frame=True)
    shaped = Shaper().fit_transform(X, y)
    np.testing.assert_array_equal(shaped, command_line_values(path, "shape"))
    assert shaped[0, 0] < 0  # toward n, the second declared label, not p (the second sorted one)


def test_score_scaler_on_a_categorical_y_gives_the_command_line_s_values(tmp_path):
    path = written(tmp_path, TIED_CLASSES)
    X, y, _ = load_arff(path, as_frame=True)
    scaler = ScoreScaler("pr").fit(X, y)
    np.testing.assert_array_equal(scaler.transform(X), command_line_values(path, "pr"))
    assert scaler.class_labels_ == ("p", "n")


def test_selector_per_class_takes_the_classes_in_their_declared_order(tmp_path):
    path = written(tmp_path, THREE_CLASSES)
    X, y, _ = load_arff(path, as_frame=True)
    selector = Selector(metric="ig", per_class=True, top=1).fit(X, y)
    run = run_filterkit(path, "select", "--metric", "ig", "--per-class", "--top", "1")
    assert run.status == 0, run.stderr
    schema, _ = read_output(run.stdout)
    assert list(selector.get_feature_names_out()) == [a.name for a in schema.attributes[:-1]] == ["fz"]


def test_a_categorical_y_s_unused_categories_stay_labels_as_declared_ones_do(tmp_path):
    path = written(tmp_path, TIED_CLASSES.replace("{p,n}", "{p,n,m}"))
    X, y, _ = load_arff(path, as_frame=True)
    scaler = ScoreScaler("ig").fit(X, y)
    assert scaler.class_labels_ == ("p", "n", "m")
    np.testing.assert_array_equal(scaler.transform(X), command_line_values(path, "ig"))


def test_a_plain_array_y_keeps_the_sorted_label_order():
    X = np.array([[1.0], [2.0], [0.0], [3.0], [0.0], [0.0]])
    y = np.array(["p", "p", "p", "n", "n", "n"], dtype=object)
    assert Shaper().fit(X, y).class_labels_ == ("n", "p")
    as_categories = pd.Categorical(y, categories=["p", "n"])
    assert Shaper().fit(X, as_categories).class_labels_ == ("p", "n")


def test_partial_fit_reads_a_later_y_by_the_first_fit_s_declared_labels(tmp_path):
    path = written(tmp_path, TIED_CLASSES)
    X, y, _ = load_arff(path, as_frame=True)
    whole = ScoreScaler("pr").fit(X, y)
    halves = ScoreScaler("pr").fit(X.iloc[::2], y.iloc[::2]).partial_fit(X.iloc[1::2], y.iloc[1::2].astype(str))
    assert halves.class_labels_ == ("p", "n")
    np.testing.assert_array_equal(halves.transform(X), whole.transform(X))


def test_sample_weight_gives_the_command_line_s_scores_on_a_weighted_file(tmp_path):
    path = written(tmp_path, WEIGHTED)
    X, y, _, sample_weight = load_arff(path, return_weights=True)
    np.testing.assert_array_equal(sample_weight, [5, 1, 1, 1, 0])
    scaler = ScoreScaler("ig", presence=True, positive="p").fit(X, y, sample_weight=sample_weight)
    expected = command_line_values("--positive", "p", path, "ig", "--presence")
    np.testing.assert_array_equal(scaler.transform(X), expected)
    assert scaler.scores_[0] == pytest.approx(0.0737613082228673, rel=1e-12)


@pytest.mark.parametrize("as_frame", [False, True])
def test_a_weighted_pipeline_writes_the_command_line_s_values(tmp_path, as_frame):
    path = written(tmp_path, WEIGHTED_FEATURES)
    X, y, _, sample_weight = load(path, as_frame=as_frame, return_weights=True)
    pipeline = make_pipeline(Shaper(), ScoreScaler("bns"))
    weights = {"shaper__sample_weight": sample_weight, "scorescaler__sample_weight": sample_weight}
    transformed = pipeline.fit(X, y, **weights).transform(X)
    np.testing.assert_array_equal(transformed, command_line_values(path, "shape", "bns"))


def test_fit_transform_and_partial_fit_take_the_weights_as_fit_does(tmp_path):
    path = written(tmp_path, WEIGHTED_FEATURES)
    X, y, _, sample_weight = load_arff(path, return_weights=True)
    expected = command_line_values(path, "shape")
    np.testing.assert_array_equal(Shaper().fit_transform(X, y, sample_weight=sample_weight), expected)
    halves = Shaper().partial_fit(X[:4], y[:4], sample_weight=sample_weight[:4])
    halves.partial_fit(X[4:], y[4:], sample_weight=sample_weight[4:])
    np.testing.assert_array_equal(halves.transform(X), expected)


@pytest.mark.parametrize("adapter", [Shaper(), ScoreScaler("bns"), Selector(metric="ig", top=3)], ids=repr)
def test_whole_number_weights_fit_as_that_many_repeated_rows(adapter):
    rng = np.random.default_rng(7)
    X = rng.integers(0, 4, size=(20, 5)).astype(float)
    y = np.array(["a", "b"] * 10, dtype=object)
    repeats = rng.integers(1, 4, size=20)
    weighted = clone(adapter).fit(X, y, sample_weight=repeats)
    repeated = clone(adapter).fit(np.repeat(X, repeats, axis=0), np.repeat(y, repeats))
    np.testing.assert_allclose(weighted.transform(X), repeated.transform(X), rtol=1e-12)


def test_a_negative_or_miscounted_sample_weight_is_a_value_error():
    X, y = np.array([[1.0], [0.0], [2.0], [0.0]]), np.array(["p", "p", "n", "n"], dtype=object)
    with pytest.raises(ValueError, match="(?i)negative"):
        Shaper().fit(X, y, sample_weight=[1, -1, 1, 1])
    with pytest.raises(ValueError):
        Shaper().fit(X, y, sample_weight=[1, 1])


def test_loading_a_weighted_file_without_its_weights_warns(tmp_path):
    path = written(tmp_path, WEIGHTED)
    for loader in (load, load_arff):
        with pytest.warns(UserWarning, match="return_weights=True"):
            loaded = loader(path)
        assert len(loaded) == 3


def test_loading_an_unweighted_file_gives_unit_weights_and_no_warning(tmp_path):
    path = written(tmp_path, TIED_CLASSES)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(load_arff(path)) == 3
        *_, sample_weight = load_arff(path, return_weights=True)
    np.testing.assert_array_equal(sample_weight, np.ones(6))


def test_a_range_s_last_is_x_s_last_column_with_or_without_y():
    """y is the class after X's columns: ``last`` named it, so with y (as a Pipeline always gives it)
    ``KeepAttributes(range="last")`` kept no column and ``Discretizer(attributes="last")`` binned nothing."""
    from filterkit.sklearn import Discretizer, KeepAttributes, RemoveAttributes

    X = np.array([[1.0, 10.0, 5.0], [2.0, 20.0, 6.0], [3.0, 30.0, 7.0], [4.0, 40.0, 8.0]])
    y = np.array(["a", "b", "a", "b"])
    for given in ((X,), (X, y)):
        assert list(KeepAttributes(range="last").fit(*given).get_feature_names_out()) == ["x2"]
        assert list(RemoveAttributes(range="2-last").fit(*given).get_feature_names_out()) == ["x0"]
        binned = Discretizer(bins=2, attributes="last").fit(*given).transform(X)
        assert binned[:, 2].tolist() == [0.0, 0.0, 1.0, 1.0] and binned[:, 1].tolist() == [10.0, 20.0, 30.0, 40.0]


@pytest.mark.parametrize(
    "transformer, params, message",
    [
        ("KeepAttributes", {"range": "4"}, "range='4' is not within 1-3"),
        ("RemoveAttributes", {"range": "2-4"}, "range='2-4' is not within 1-3"),
        ("Discretizer", {"attributes": "3,4", "bins": 2}, "attributes='4' is not within 1-3"),
    ],
)
def test_a_range_past_x_s_columns_is_refused_with_y_as_without_it(transformer, params, message):
    """With y, ``range='4'`` on three columns named y's class (KeepAttributes kept no column, RemoveAttributes all
    of X, Discretizer binned the third alone): without y it is refused."""
    from filterkit import sklearn as adapters

    X = np.array([[1.0, 10.0, 5.0], [2.0, 20.0, 6.0], [3.0, 30.0, 7.0], [4.0, 40.0, 8.0]])
    y = np.array(["a", "b", "a", "b"])
    for given in ((X,), (X, y)):
        with pytest.raises(ValueError) as refused:
            getattr(adapters, transformer)(**params).fit_transform(*given)
        assert message in str(refused.value)


def test_a_transformer_fitted_without_y_on_a_nominal_last_column_unpickles_as_fitted():
    """The unpickled stage took the last (categorical) column for the class: ReplaceMissing and RemoveUseless did not
    load, and KeepAttributes(range="1") gave both columns."""
    import pickle

    from filterkit.sklearn import KeepAttributes, RemoveUseless, ReplaceMissing

    frame = pd.DataFrame({"a": [1.0, np.nan, 3.0, 4.0], "c": pd.Categorical(["u", None, "u", "v"])})
    for transformer in (ReplaceMissing(), RemoveUseless(), KeepAttributes(range="1")):
        fitted = transformer.fit(frame)
        restored = pickle.loads(pickle.dumps(fitted))
        assert list(restored.get_feature_names_out()) == list(fitted.get_feature_names_out())
        np.testing.assert_array_equal(restored.transform(frame), fitted.transform(frame))
    assert list(KeepAttributes(range="1").fit(frame).get_feature_names_out()) == ["a"]


@pytest.mark.parametrize("y", [None, np.array(["a", "b"] * 3)], ids=["unlabelled", "labelled"])
def test_a_stage_that_keeps_no_feature_but_the_class_is_refused_with_y_as_without(y):
    # with y the class was kept and left out of X: a transform of zero columns, where without y it was an error
    from filterkit.sklearn import transformer_for

    X = np.arange(18.0).reshape(6, 3)
    keep = transformer_for("keep")(type="nominal")
    with pytest.raises(ValueError, match="KeepAttributes: stage 'keep' (would leave|leaves X) no"):
        keep.fit(X, y)
    assert transformer_for("keep")(type="numeric").fit(X, y).transform(X).shape == (6, 3)


def test_a_stage_that_keeps_no_feature_of_its_rows_is_refused_as_variance_threshold_refuses():
    # remove-useless on constant columns gave a transform of zero columns, with y or without
    from sklearn.feature_selection import VarianceThreshold

    from filterkit.sklearn import transformer_for

    constant = np.ones((5, 3))
    with pytest.raises(ValueError, match="No feature in X"):
        VarianceThreshold().fit(constant)
    for y in (None, np.array(["a", "b", "a", "b", "a"])):
        with pytest.raises(ValueError, match="RemoveUseless: stage 'remove-useless' leaves X no feature$"):
            transformer_for("remove-useless")().fit(constant, y)
        with pytest.raises(ValueError, match=r"leaves X no feature \(X holds one sample\)"):
            transformer_for("remove-useless")().fit(constant[:1], None if y is None else y[:1])


def test_a_refused_fit_leaves_the_estimator_unfitted_or_as_it_was():
    # the refusal came after the schema was kept: transform raised AttributeError, not NotFittedError, and a
    # refused refit left the old stage beside the new schema (IndexError)
    from sklearn.exceptions import NotFittedError

    from filterkit.sklearn import transformer_for

    useless = transformer_for("remove-useless")()
    with pytest.raises(ValueError, match="leaves X no feature"):
        useless.fit(np.ones((5, 3)))
    with pytest.raises(NotFittedError):
        useless.transform(np.ones((5, 3)))
    good = np.arange(20.0).reshape(5, 4)
    useless.fit(good)
    with pytest.raises(ValueError, match="leaves X no feature"):
        useless.fit(np.ones((5, 3)))
    with pytest.raises(NotFittedError):
        useless.transform(np.ones((5, 3)))
