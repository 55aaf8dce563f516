"""The scikit-learn adapters: the same numbers as the chain and the command line,
scikit-learn's estimator checks, pipelines, grid search, cloning and pickling; the
adapters' names, selectors' get_support and scores_, load_arff."""

from __future__ import annotations

import gzip
import inspect
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.svm import LinearSVC
from sklearn.utils import all_estimators, get_tags
from sklearn.utils.estimator_checks import (
    check_get_feature_names_out_error,
    check_transformer_get_feature_names_out,
    parametrize_with_checks,
)

import filterkit.sklearn as adapters
from chain_helpers import REAL, assert_same_values, read_bytes
from filterkit.arff import read_arff
from filterkit.errors import FilterkitError
from filterkit.plugins import BUILT_IN_DISTRIBUTION, load_plugins
from filterkit.runner import Chain
from filterkit.schema import Chunk, take_rows
from filterkit.sklearn import (
    L1Normalizer,
    L2Normalizer,
    MinMaxNormalizer,
    PresenceBinarizer,
    ScoreScaler,
    Selector,
    Shaper,
    transformer_for,
)
from filterkit.sources import MemorySource

OH0 = REAL / "oh0.wc.arff"

#: cross_val_score's mean AUC of the README pipeline on oh0 Ethics-vs-rest was 0.9915
#: (5 unshuffled stratified folds); the bound leaves room for other liblinear builds.
README_AUC_BOUND = 0.97

REGISTRY = load_plugins()

#: What a stage needs for scikit-learn's checks to fit it.  The checks fit on
#: y = X[:, 0].astype(int), three or four classes: on more than two, ``shape`` must be
#: told the positive class (filterkit's rule, see test_shaper_on_three_classes_needs_a_positive_class),
#: so it is checked with positive="1".  ``select`` needs exactly one rule and, outside a
#: chain, a metric to rank by (a pipeline step does not see the scorer before it).
CHECK_PARAMS = {
    "auto": {"positive": "1"},
    "select": {"metric": "bns", "top": 2},
    "keep": {"type": "numeric"},
    "remove": {"type": "string"},
}

#: filterkit's own stages: a third-party plugin installed here answers for its own stages.
BUILT_IN_STAGES = sorted(
    name for name, registered in REGISTRY.stages.items() if registered.distribution == BUILT_IN_DISTRIBUTION
)

#: Stages that drop or add rows (fold), which no scikit-learn transformer may do: their adapters refuse to fit.
ROW_FILTERS = [name for name in BUILT_IN_STAGES if REGISTRY.stages[name].value.filters_rows]

ADAPTERS = [
    transformer_for(name)(**CHECK_PARAMS.get(name, {})) for name in BUILT_IN_STAGES if name not in ROW_FILTERS
] + [
    ScoreScaler(),
    ScoreScaler("ig", presence=True),
    Selector(metric="svm", top=2),
]

#: The ordinal stage's transformer (its class name is its plugin's choice).
Thresholds = transformer_for("ordinal")


@pytest.fixture(scope="module")
def oh0():
    """oh0's schema, rows, word-count matrix and class labels (strings)."""
    schema, chunk = read_arff(OH0)
    labels = np.array(schema.attributes[-1].labels)[chunk.values[:, -1].toarray().ravel().astype(int)]
    return schema, chunk, chunk.values[:, :-1], labels


def chain_output(stages: list[tuple[str, dict]], schema, train: Chunk, test: Chunk, positive=None) -> Chunk:
    """A filterkit chain fitted on ``train`` applied to ``test``."""
    chain = Chain([REGISTRY.make_stage(name, params) for name, params in stages], positive=positive)
    chain.fit(MemorySource(schema, train))
    return next(iter(chain.transform([test])))


#: scikit-learn takes a row of weight 0 for a row removed; filterkit's stages, as on the command line (and Weka's
#: filters), keep its values in the ranges and cut points they learn (whole weights are repeated rows:
#: tests/test_sklearn_hostile.py).
ZERO_WEIGHT_KEEPS_A_ROW = {
    f"check_sample_weight_equivalence_on_{kind}_data": "a weight-0 row's values still count, as on the command line"
    for kind in ("dense", "sparse")
}


# Selector(metric="svm") trains liblinear on the checks' tiny random data, where it may not converge.
@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@parametrize_with_checks(ADAPTERS, expected_failed_checks=lambda estimator: ZERO_WEIGHT_KEEPS_A_ROW)
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize("estimator", ADAPTERS, ids=repr)
def test_feature_names_out_checks(estimator):
    if estimator.__sklearn_tags__().input_tags.string:
        pytest.skip("these checks give numeric X; a stage that reads text takes documents (test_sklearn_documents)")
    name = type(estimator).__name__
    check_transformer_get_feature_names_out(name, estimator)
    check_get_feature_names_out_error(name, estimator)


@pytest.mark.slow
def test_importing_the_adapters_imports_no_stage_module():
    code = "import sys, filterkit.sklearn\nprint(sorted(m for m in sys.modules if m.startswith('filterkit_plugins')))"
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "[]"


def test_every_stage_has_a_transformer_whose_parameters_are_its_options_with_their_defaults():
    for name, registered in REGISTRY.stages.items():
        if registered.value.filters_rows:
            continue
        transformer = transformer_for(name)
        assert getattr(adapters, transformer.__name__) is transformer
        expected = {transformer.stage_parameters[o.name]: o.default for o in registered.value.options}
        params = transformer().get_params()
        assert ("positive" in params) is ("label_names" in params), name  # y's parameters: both or neither
        params.pop("positive", None), params.pop("label_names", None)
        assert params == expected, name
    assert Shaper is transformer_for("shape") and Selector is transformer_for("select")
    assert PresenceBinarizer is transformer_for("binarize") and L2Normalizer is transformer_for("l2")
    assert MinMaxNormalizer is transformer_for("minmax") and adapters.BnsTransformer is transformer_for("bns")
    assert adapters.BnsScorer is transformer_for("bns") and adapters.ThresholdEncoder is Thresholds
    assert "positive" in Shaper().get_params() and "positive" not in MinMaxNormalizer().get_params()
    assert "label_names" in Selector().get_params() and "label_names" not in MinMaxNormalizer().get_params()
    assert list(inspect.signature(ScoreScaler).parameters)[:2] == ["metric", "presence"]


def test_a_stage_option_named_like_a_transformer_method_is_a_stage_prefixed_parameter(oh0):
    schema, chunk, X, labels = oh0
    out = Shaper(stage_transform="logodds", positive="Ethics").fit_transform(X, labels)
    expected = chain_output([("shape", {"transform": "logodds"})], schema, chunk, chunk, positive="Ethics")
    assert (out != expected.values[:, :-1]).nnz == 0
    assert callable(Shaper().transform)


@pytest.mark.slow
def test_shape_bns_l2_pipeline_equals_the_chain_and_the_command_line(oh0, run_filterkit):
    schema, chunk, X, labels = oh0
    pipeline = make_pipeline(Shaper(positive="Ethics"), ScoreScaler("bns", positive="Ethics"), L2Normalizer())
    out = pipeline.fit_transform(X, labels)
    chained = chain_output([("shape", {}), ("bns", {}), ("l2", {})], schema, chunk, chunk, positive="Ethics")
    result = run_filterkit("--positive", "Ethics", OH0, "shape", "bns", "l2")
    assert result.status == 0, result.stderr
    _, command_line = read_bytes(result.stdout)
    assert_same_values(chained, command_line)
    assert sp.isspmatrix_csr(out)
    np.testing.assert_array_equal(out.toarray(), chained.values[:, :-1].toarray())
    assert out.nnz == X.nnz


def test_fitted_on_training_rows_the_pipeline_transforms_test_rows_as_the_chain_does(oh0):
    schema, chunk, X, labels = oh0
    train, test = np.arange(0, 1003, 3), np.setdiff1d(np.arange(1003), np.arange(0, 1003, 3))
    pipeline = make_pipeline(
        Selector(metric="ig", top=300, positive="Ethics"), Shaper(positive="Ethics"), L1Normalizer()
    )
    out = pipeline.fit(X[train], labels[train]).transform(X[test])
    stages = [("select", {"metric": "ig", "top": 300}), ("shape", {}), ("l1", {})]
    chained = chain_output(stages, schema, take_rows(chunk, train), take_rows(chunk, test), positive="Ethics")
    assert out.shape == (len(test), 300)
    np.testing.assert_array_equal(out.toarray(), chained.values[:, :-1].toarray())


def test_sparse_input_gives_sparse_output_and_dense_input_dense_output_of_the_same_values(oh0):
    _, _, X, labels = oh0
    X = X[:, :400]
    pipeline = make_pipeline(Shaper(), ScoreScaler("bns"), Thresholds(max_thresholds=2), L2Normalizer())
    y = labels == "Ethics"
    from_sparse = clone(pipeline).fit_transform(X, y)
    from_dense = clone(pipeline).fit_transform(X.toarray(), y)
    from_sparse_array = clone(pipeline).fit_transform(sp.csr_array(X), y)
    assert sp.isspmatrix_csr(from_sparse) and isinstance(from_dense, np.ndarray)
    assert isinstance(from_sparse_array, sp.csr_array)
    np.testing.assert_allclose(from_dense, from_sparse.toarray(), rtol=1e-13, atol=0)
    assert from_sparse.nnz == X.nnz


def test_select_keeps_the_names_of_the_kept_features(oh0):
    schema, chunk, X, labels = oh0
    names = [a.name for a in schema.attributes[:-1]]
    selector = Selector(metric="ig", presence=True, top=5, positive="Ethics").fit(X, labels)
    chained = Chain([REGISTRY.make_stage("select", {"metric": "ig", "presence": True, "top": 5})], positive="Ethics")
    chained.fit(MemorySource(schema, chunk))
    kept = [a.name for a in chained.output_schema.attributes[:-1]]
    assert selector.get_feature_names_out(names).tolist() == kept
    assert selector.get_feature_names_out().tolist() == [f"x{names.index(name)}" for name in kept]


def test_ordinal_names_each_threshold_name_greater_or_equal_value():
    X = np.array([[0, 1, 0.5], [2, 0, 1.0], [3, 1, 0.0]])
    encoder = Thresholds().fit(X)
    assert encoder.get_feature_names_out().tolist() == ["x0>=2", "x0>=3", "x1>=1", "x2"]
    assert encoder.get_feature_names_out(["a", "b", "c"]).tolist() == ["a>=2", "a>=3", "b>=1", "c"]
    np.testing.assert_array_equal(encoder.transform(X), [[0, 0, 1, 0.5], [1, 0, 0, 1.0], [1, 1, 1, 0.0]])


@pytest.mark.slow
def test_readme_example_cross_validates_to_a_sensible_auc(oh0):
    _, _, X, labels = oh0
    y = labels == "Ethics"
    pipeline = make_pipeline(Shaper(), ScoreScaler("bns"), L2Normalizer(), LinearSVC())
    scores = cross_val_score(pipeline, X, y, cv=5, scoring="roc_auc")
    assert scores.mean() > README_AUC_BOUND


def test_grid_search_picks_selectors_top_with_a_linear_svm(oh0):
    _, _, X, labels = oh0
    pipeline = make_pipeline(Selector(metric="bns"), L2Normalizer(), LinearSVC())
    search = GridSearchCV(pipeline, {"selector__top": [3, 300]}, cv=3, scoring="roc_auc").fit(X, labels == "Ethics")
    assert search.best_params_ == {"selector__top": 300}
    low, high = search.cv_results_["mean_test_score"]
    assert low < 0.92 < 0.95 < high
    assert search.best_estimator_[0].transform(X).shape == (X.shape[0], 300)


@pytest.mark.slow
def test_clone_and_set_params_keep_parameters_verbatim_and_refit_with_them(oh0):
    _, _, X, labels = oh0
    y = labels == "Ethics"
    shaper = Shaper(neighbors=3)
    copy = clone(shaper)
    assert copy is not shaper and copy.get_params() == shaper.get_params()
    assert copy.set_params(neighbors=40, stage_transform="logodds") is copy
    assert copy.get_params()["neighbors"] == 40 and shaper.get_params()["neighbors"] == 3
    assert (shaper.fit_transform(X, y) != copy.fit_transform(X, y)).nnz > 0
    pipeline = make_pipeline(Shaper(), L2Normalizer())
    pipeline.set_params(shaper__neighbors=40, shaper__stage_transform="logodds", l2normalizer=L1Normalizer())
    expected = make_pipeline(copy, L1Normalizer()).fit_transform(X, y)
    np.testing.assert_array_equal(pipeline.fit_transform(X, y).toarray(), expected.toarray())


@pytest.mark.slow
def test_a_pickled_fitted_pipeline_predicts_the_same_and_holds_only_plain_stage_state(oh0):
    _, _, X, labels = oh0
    y = labels == "Ethics"
    pipeline = make_pipeline(Shaper(), ScoreScaler("bns"), Selector(metric="chi", top=500), L2Normalizer(), LinearSVC())
    pipeline.fit(X, y)
    data = pickle.dumps(pipeline)
    assert b"filterkit_plugins" not in data
    restored = pickle.loads(data)
    np.testing.assert_array_equal(restored.decision_function(X), pipeline.decision_function(X))
    np.testing.assert_array_equal(restored[:-1].get_feature_names_out(), pipeline[:-1].get_feature_names_out())


def test_stages_that_learn_from_a_class_require_y_and_the_others_ignore_it():
    rng = np.random.default_rng(1)
    X = rng.poisson(1.0, size=(30, 4)).astype(float)
    for transformer in (Shaper(), ScoreScaler("chi"), Selector(metric="ig", top=2)):
        assert get_tags(transformer).target_tags.required
        with pytest.raises(ValueError, match="requires y to be passed"):
            transformer.fit(X)
    continuous = rng.normal(size=30)
    for transformer in (MinMaxNormalizer(), PresenceBinarizer(), Thresholds(), L2Normalizer()):
        assert not get_tags(transformer).target_tags.required
        np.testing.assert_array_equal(
            clone(transformer).fit(X, continuous).transform(X), transformer.fit(X).transform(X)
        )
        assert transformer.class_labels_ == ()


def test_class_labels_are_the_sorted_strings_of_y():
    X = np.array([[1.0], [0.0], [2.0], [0.0]])
    assert Shaper().fit(X, [True, False, False, False]).class_labels_ == ("False", "True")
    assert Shaper(positive=True).fit(X, [True, False, True, True]).class_labels_ == ("False", "True")
    assert Shaper(positive="b").fit(X, ["b", "a", "b", "a"]).class_labels_ == ("a", "b")
    assert ScoreScaler().fit(X, [10, 9, 10, 9]).class_labels_ == ("10", "9")
    with pytest.raises(ValueError, match="y holds 1 class"):
        Shaper().fit(X, ["a"] * 4)
    with pytest.raises(ValueError, match=r"^Shaper: y holds 0 classes {}; stage 'shape' learns from at least two$"):
        Shaper().fit(X, [None] * 4)
    with pytest.raises(ValueError, match="Unknown label type"):
        Shaper().fit(X, [0.5, 1.5, 2.25, 3.0])


def test_shaper_on_three_classes_shapes_toward_each_class_by_default():
    X = np.array([[1.0], [0.0], [2.0]])
    shaper = Shaper().fit(X, ["a", "b", "c"])
    assert shaper.transform(X).shape == (3, 3)
    assert list(shaper.get_feature_names_out()) == ["x0@a", "x0@b", "x0@c"]
    assert Shaper(positive="b").fit_transform(X, ["a", "b", "c"]).shape == (3, 1)


def test_selector_without_a_metric_says_it_has_nothing_to_rank_by():
    with pytest.raises(ValueError, match="has nothing to rank by"):
        Selector(top=2).fit(np.eye(3), [0, 1, 1])


@pytest.mark.parametrize(
    "transformer, message",
    [
        (ScoreScaler("nope"), "ScoreScaler: no scorer for metric 'nope'"),
        (Shaper(neighbors=-1), "^Shaper: neighbors=-1 is below 0$"),
        (
            Selector(metric="bns", top=2, fraction=0.5),
            r"^Selector: stage 'select' needs exactly one of top=, fraction=, min_score=, sparsity= "
            r"\(found top=, fraction=\)$",
        ),
        (Selector(metric="nope", top=2), "^Selector: metric='nope' is not one of acc, "),
        (
            ScoreScaler("bns", multiply=True, scale=False),
            r"^ScoreScaler: stage 'bns': multiply=True and scale=False contradict each other "
            r"\(scale=False leaves the values unchanged\)$",
        ),
    ],
    ids=repr,
)
def test_bad_parameters_are_value_errors_at_fit(transformer, message):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=message):
            transformer.fit(np.eye(3), [0, 1, 1])


def test_an_unknown_stage_is_a_value_error_naming_the_installed_ones():
    with pytest.raises(ValueError, match=r"no stage called 'nope' \(installed: .*shape"):
        transformer_for("nope")
    with pytest.raises(AttributeError):
        adapters.NopeTransformer


def oh0_with_a_bool_y():
    """The README's example: oh0's word counts and y = (label == "Ethics")."""
    schema, chunk = read_arff(OH0)
    labels = schema.attributes[-1].labels
    return chunk.values[:, :-1], [labels[int(code)] == "Ethics" for code in chunk.values[:, -1].toarray().ravel()]


@pytest.mark.parametrize(
    "transformer", [Shaper, lambda **k: ScoreScaler("bns", **k), lambda **k: Selector(metric="ig", top=5, **k)]
)
def test_a_positive_class_that_is_not_among_y_s_labels_is_a_value_error_naming_them(transformer):
    X, y = oh0_with_a_bool_y()
    adapter = transformer(positive="Ethics")
    with pytest.raises(
        ValueError, match=r"^\w+: positive='Ethics' is not one of y's labels {False,True} \(compared as str\(y\)\)$"
    ):
        adapter.fit(X, y)
    fitted = transformer(positive=True).fit(X, y)
    assert fitted.class_labels_ == ("False", "True")
    with pytest.raises(ValueError, match=r"positive='c' is not one of y's labels {a,b}"):
        transformer(positive="c").fit(np.eye(4), ["a", "b", "a", "b"])


def test_the_readme_pipeline_with_positive_true_matches_the_default_minority_class():
    X, y = oh0_with_a_bool_y()
    default = make_pipeline(Shaper(), ScoreScaler("bns"), L2Normalizer()).fit_transform(X, y)
    named = make_pipeline(Shaper(positive=True), ScoreScaler("bns", positive=True), L2Normalizer()).fit_transform(X, y)
    assert (default != named).nnz == 0
    assert default.nnz == X.nnz


# ------------------------------------------------------------------ names


def test_star_import_gives_the_adapters_and_load_arff_only():
    namespace: dict = {}
    exec("from filterkit.sklearn import *", namespace)
    exported = set(namespace) - {"__builtins__"}
    assert {"Shaper", "Selector", "ScoreScaler", "L2Normalizer", "MinMaxNormalizer", "load_arff"} <= exported
    assert not exported & {
        "np",
        "sp",
        "re",
        "OrdinalEncoder",
        "Binarizer",
        "MinMaxScaler",
        "Normalizer",
        "Chain",
        "Registry",
    }
    classes = exported - {"load_arff", "transformer_for"}
    assert all(issubclass(namespace[name], adapters.FilterkitTransformer) for name in classes)


def test_no_adapter_is_named_like_a_scikit_learn_estimator_of_another_meaning():
    """Not even Binarizer: scikit-learn's maps x > 0 to 1, filterkit's (PresenceBinarizer) every x != 0."""
    exported = set(adapters.__all__)
    assert exported & {name for name, _ in all_estimators()} == set()


def test_the_names_removed_in_0_4_are_gone():
    for old in ("OrdinalEncoder", "Binarizer", "MinMaxScaler", "Normalizer"):
        with pytest.raises(AttributeError, match=f"no attribute '{old}'"):
            getattr(adapters, old)


# --------------------------------------------------- get_support and scores_


def weka_binarized_ig() -> dict[str, float]:
    """Weka 3.6's InfoGainAttributeEval -B score of every grain_wc word."""
    lines = (REAL / "weka_scores_grain_wc.tsv").read_text().splitlines()[1:]
    return {fields[1]: float(fields[3]) for fields in (line.split("\t") for line in lines)}


@pytest.mark.slow
def test_selector_scores_are_weka_s_information_gain_and_its_support_the_command_line_s(run_filterkit):
    X, y, names = adapters.load_arff(REAL / "grain_wc.arff", class_="first")
    selector = Selector(metric="ig", presence=True, top=100).fit(X, y)
    weka = weka_binarized_ig()
    # IG is a difference of entropies near 1: both sides round it to a few ulps of 1 (2.2e-16 each)
    np.testing.assert_allclose(selector.scores_, [weka[name] for name in names], rtol=1e-9, atol=1e-14)
    result = run_filterkit("-c", "first", REAL / "grain_wc.arff", "ig", "--presence", "select", "--top", "100")
    kept = [attribute.name for attribute in read_bytes(result.stdout)[0].attributes[1:]]
    mask = selector.get_support()
    assert mask.dtype == bool and mask.shape == (len(names),) and mask.sum() == 100
    assert [names[i] for i in selector.get_support(indices=True)] == kept
    assert (selector.transform(X) != X[:, mask]).nnz == 0


def test_a_scorer_has_scores_and_keeps_every_feature(oh0):
    _, _, X, labels = oh0
    scorer = ScoreScaler("bns", positive="Ethics").fit(X, labels)
    assert scorer.scores_.shape == (X.shape[1],) and np.isfinite(scorer.scores_).all()
    assert scorer.get_support().all()
    assert not hasattr(PresenceBinarizer().fit(X), "scores_")


def test_an_encoder_that_makes_new_features_has_no_get_support():
    fitted = Thresholds().fit(np.array([[0.0, 1.0], [2.0, 1.0]]))
    assert list(fitted.get_feature_names_out()) == ["x0>=2", "x1>=1"]
    assert not hasattr(fitted, "get_support")
    with pytest.raises(NotFittedError):
        Selector(metric="ig", top=2).get_support()


# ------------------------------------------------------------------ load_arff


def test_load_arff_gives_sparse_x_labels_and_names_of_a_sparse_file(oh0):
    schema, chunk, X_expected, labels = oh0
    X, y, names = adapters.load_arff(OH0)
    assert sp.issparse(X) and X.format == "csr" and X.shape == (1003, 3182)
    assert (X != X_expected).nnz == 0
    assert y.tolist() == labels.tolist() and y[0] == "Ethics"
    assert names == [attribute.name for attribute in schema.attributes[:-1]]


def test_load_arff_reads_gzip_a_first_class_nominal_inputs_and_no_class(tmp_path):
    compressed = tmp_path / "wine.arff.gz"
    compressed.write_bytes(gzip.compress((REAL / "wine.arff").read_bytes()))
    X, y, names = adapters.load_arff(compressed, class_="first")
    assert isinstance(X, np.ndarray) and X.shape == (178, 13) and names[0] == "Alcohol"
    assert sorted(set(y.tolist())) == ["1", "2", "3"]
    with pytest.warns(UserWarning, match=r"label positions of the nominal attributes 'checking_status', .*as_frame"):
        X, y, names = adapters.load_arff(REAL / "credit-g.arff", class_="class")
    assert X.shape == (1000, 20) and names[0] == "checking_status" and y[:2].tolist() == ["good", "bad"]
    assert X[0, 0] == 0.0 and X[1, 0] == 1.0  # '<0', then '0<=X<200': label positions
    with pytest.warns(UserWarning, match="the nominal attributes 'class', which the adapters take as numbers"):
        X, y, names = adapters.load_arff(REAL / "iris.arff", class_=None)
    assert y is None and X.shape == (150, 5) and names[-1] == "class"


def test_load_arff_keeps_a_missing_class_as_none(tmp_path):
    path = tmp_path / "m.arff"
    path.write_text("@relation m\n@attribute x numeric\n@attribute c {a,b}\n@data\n1,a\n?,?\n3,b\n")
    X, y, _ = adapters.load_arff(path)
    assert y.tolist() == ["a", None, "b"]
    assert np.isnan(X[1, 0]) and X[2, 0] == 3.0


def test_load_arff_of_a_bad_file_names_the_line(tmp_path):
    path = tmp_path / "bad.arff"
    path.write_text("@relation m\n@attribute x numeric\n@data\n1\nx\n")
    with pytest.raises(FilterkitError, match="bad.arff:5: value 'x' of attribute 'x' is not a number"):
        adapters.load_arff(path)


def test_load_arff_as_frame_gives_categories_and_sparse_columns():
    pd = pytest.importorskip("pandas")
    frame, target, names = adapters.load_arff(REAL / "credit-g.arff", as_frame=True)
    assert list(frame.columns) == names and frame.shape == (1000, 20)
    assert isinstance(frame["checking_status"].dtype, pd.CategoricalDtype)
    assert frame["checking_status"].iloc[:2].tolist() == ["<0", "0<=X<200"]
    assert frame["duration"].iloc[0] == 6.0
    assert target.name == "class" and target.iloc[:2].tolist() == ["good", "bad"]
    frame, target, _ = adapters.load_arff(OH0, as_frame=True)
    assert isinstance(frame.dtypes.iloc[0], pd.SparseDtype) and frame.sparse.density == pytest.approx(52673 / 3191546)


def test_load_arff_as_frame_without_pandas_says_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas: ModuleNotFoundError
    with pytest.raises(ImportError, match=r"load_arff\(as_frame=True\) needs pandas: pip install pandas"):
        adapters.load_arff(REAL / "iris.arff", as_frame=True)


@pytest.mark.parametrize("name", ROW_FILTERS)
def test_a_stage_that_filters_rows_has_no_transformer_and_is_not_exported(name):
    class_name = REGISTRY.stages[name].value.__name__
    with pytest.raises(
        ValueError, match=f"stage '{name}' drops or adds rows, which a scikit-learn transformer may not"
    ):
        transformer_for(name)
    assert class_name not in adapters.__all__ and class_name not in dir(adapters)
    with pytest.raises(AttributeError):
        getattr(adapters, class_name)


def test_a_missing_class_from_load_arff_is_a_missing_class_to_the_adapters(tmp_path, run_filterkit):
    path = tmp_path / "m.arff"
    path.write_text("@relation m\n@attribute x numeric\n@attribute c {a,b}\n@data\n1,a\n2,?\n3,b\n0,a\n2,b\n4,?\n")
    X, y, _ = adapters.load_arff(path)
    shaper = Shaper().fit(X, y)
    assert shaper.class_labels_ == ("a", "b")
    result = run_filterkit(path, "shape")
    np.testing.assert_array_equal(shaper.transform(X), read_bytes(result.stdout)[1].dense_values()[:, :-1])


def test_load_arff_gives_the_text_of_a_string_class(tmp_path):
    path = tmp_path / "s.arff"
    path.write_text("@relation s\n@attribute x numeric\n@attribute c string\n@data\n1,'one'\n3,?\n")
    X, y, _ = adapters.load_arff(path)
    assert y.tolist() == ["one", None] and X.tolist() == [[1.0], [3.0]]


def test_a_sparse_entry_stored_twice_is_read_as_scipy_adds_it_and_the_callers_matrix_is_left_alone():
    """scipy adds up the entries a CSR matrix stores twice; the adapters read the stored entries one by one, so
    [[1 + 2, 4]] was normalized as [1, 2, 4] (0.65, 0.87), and a presence could be 2."""
    twice = sp.csr_matrix((np.array([1.0, 2.0, 4.0, 1.0]), np.array([0, 0, 1, 1]), np.array([0, 3, 4])), shape=(2, 2))
    once = sp.csr_matrix(twice.toarray())
    for make in (L2Normalizer, PresenceBinarizer, MinMaxNormalizer):
        assert np.array_equal(make().fit_transform(twice).toarray(), make().fit_transform(once).toarray())
    assert np.array_equal(L2Normalizer().fit(once).transform(twice).toarray(), [[0.6, 0.8], [0.0, 1.0]])
    classes = np.array(["a", "b"])
    assert np.array_equal(
        adapters.BnsScorer().fit(twice, classes).transform(twice).toarray(),
        adapters.BnsScorer().fit(once, classes).transform(once).toarray(),
    )
    assert twice.data.tolist() == [1.0, 2.0, 4.0, 1.0] and not twice.has_canonical_format


def test_a_label_entry_stored_twice_is_its_sum_and_refused_as_a_two():
    features = sp.csr_matrix(np.eye(4))
    labels = sp.csr_matrix((np.array([1.0, 1.0, 1.0]), np.array([0, 0, 1]), np.array([0, 2, 3, 3, 3])), shape=(4, 2))
    with pytest.raises(ValueError, match="Y holds 2 in row 0 for the label '0'"):
        adapters.BnsScorer().fit(features, labels)


def test_a_frames_missing_class_is_left_out_as_the_arrays_is(tmp_path):
    """A frame's class column holds NaN where the file has ``?`` (a nullable column pd.NA): scikit-learn's check
    refused it ("Input contains NaN"), where the array form leaves the row out of the class counts."""
    pd = pytest.importorskip("pandas")
    path = tmp_path / "missing.arff"
    rows = ["1,0,pos", "0,1,neg", "3,0,?", "0,2,neg", "2,1,pos", "0,1,neg"]
    path.write_text("@relation m\n@attribute a numeric\n@attribute b numeric\n@attribute c {pos,neg}\n@data\n")
    path.write_text(path.read_text() + "\n".join(rows) + "\n")
    frame, target, _ = adapters.load_arff(path, as_frame=True)
    values, classes, _ = adapters.load_arff(path)
    expected = adapters.BnsScorer().fit(values, classes).transform(values)
    assert target.isna().tolist() == [False, False, True, False, False, False]
    assert np.array_equal(adapters.BnsScorer().fit(frame, target).transform(frame), expected)
    nullable = pd.Series(pd.array([1, 0, pd.NA, 0, 1, 0], dtype="Int64"))
    numbers = np.array([1, 0, None, 0, 1, 0], dtype=object)
    assert np.array_equal(
        adapters.BnsScorer().fit(values, nullable).transform(values),
        adapters.BnsScorer().fit(values, numbers).transform(values),
    )


def test_a_sparse_x_is_refused_where_fit_was_given_categories():
    """A sparse X holds numbers only: given where fit read a column of categories, any number was taken as its
    code, silently."""
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"c": pd.Categorical(["u", "v", "w", "u"] * 5), "n": np.arange(20, dtype=float)})
    shaper = adapters.Shaper().fit(frame, np.where(frame["c"] == "u", "a", "b"))
    with pytest.raises(ValueError, match="Shaper was fitted on columns of text or categories, which a sparse X"):
        shaper.transform(sp.csr_matrix([[7.0, 1.0]]))


def test_partial_fit_spells_a_class_label_as_fit_spells_it():
    """fit reads y's labels as numpy infers their type (``[1, 2.0]``: floats, '1.0' and '2.0'); partial_fit read
    each as given ('1'), so the same y was refused as holding a label the first fit lacked."""
    features = np.random.default_rng(0).poisson(1, (6, 3)).astype(float)
    classes = np.array([1, 2.0, 1, 2.0, 1, None], dtype=object)
    twice = adapters.BnsScorer().fit(features[:3], classes[:3]).partial_fit(features[3:], classes[3:])
    assert twice.class_labels_ == ("1.0", "2.0")
    assert np.array_equal(twice.transform(features), adapters.BnsScorer().fit(features, classes).transform(features))
