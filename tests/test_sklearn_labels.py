"""The adapters on a label matrix Y (issue 50, item 5): the command line's numbers on MEKA data, Y in every
form scikit-learn gives it, partial_fit, the errors for a Y that does not fit, a Pipeline ending in
OneVsRestClassifier, and ``load`` returning Y and the label names."""

from __future__ import annotations

import io
import pickle
import re
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.multiclass import OneVsRestClassifier
from sklearn.pipeline import Pipeline
from sklearn.svm import LinearSVC

from filterkit.sklearn import (
    AutoStage,
    BnsScorer,
    IgScorer,
    L2Normalizer,
    Loaded,
    ScoreScaler,
    Selector,
    Shaper,
    WordVector,
    load,
    load_arff,
)

REUTERS = Path(__file__).parent / "data" / "multilabel" / "reuters-grain-corn.arff"
WORDS = ("words", "--counts", "--lowercase")

#: Each adapter beside the stage the command line runs for it, on the word counts of REUTERS.
SAME_AS_THE_COMMAND_LINE = [
    (lambda: BnsScorer(combine="max"), ["bns", "--combine", "max"]),
    (lambda: ScoreScaler("chi", combine="mean", normalize="max"), ["chi", "--combine", "mean", "--normalize", "max"]),
    (lambda: BnsScorer(label="corn"), ["bns", "--label", "corn"]),
    (lambda: IgScorer(label_powerset=True), ["ig", "--label-powerset"]),
    (
        lambda: Selector(metric="bns", top=30, per_label=True),
        ["select", "--metric", "bns", "--top", "30", "--per-label"],
    ),
    (
        lambda: Selector(metric="ig", top=30, label_powerset=True),
        ["select", "--metric", "ig", "--top", "30", "--label-powerset"],
    ),
    (lambda: Shaper(), ["shape"]),
    (lambda: Shaper(label="grain"), ["shape", "--label", "grain"]),
]


@pytest.fixture(scope="module")
def counts(tmp_path_factory) -> Path:
    """REUTERS's word counts, as ``filterkit REUTERS words --counts --lowercase`` writes them."""
    from filterkit.testing import run_filterkit

    path = tmp_path_factory.mktemp("labels") / "counts.arff"
    written = run_filterkit(REUTERS, *WORDS, "-o", path)
    assert written.status == 0, written.stderr
    return path


def command_line(*stages) -> Loaded:
    """What ``filterkit REUTERS words --counts --lowercase STAGES`` writes, loaded."""
    from filterkit.testing import run_filterkit

    written = run_filterkit(REUTERS, *WORDS, *stages)
    assert written.status == 0, written.stderr
    return load(io.BytesIO(written.stdout))


@pytest.mark.slow  # more than half a second
@pytest.mark.parametrize(
    "make, stages", SAME_AS_THE_COMMAND_LINE, ids=lambda value: " ".join(value) if isinstance(value, list) else ""
)
def test_a_label_matrix_gives_the_command_line_s_numbers_and_names(counts, make, stages):
    X, Y, names = loaded = load(counts)
    assert loaded.label_names == ("grain", "corn") and Y.shape == (244, 2) and X.shape == (244, len(names))
    expected, expected_Y, expected_names = command_line(*stages)
    out = make().set_params(label_names=list(loaded.label_names)).fit_transform(X, Y)
    assert sp.issparse(out) and out.shape == expected.shape
    assert np.array_equal(out.toarray(), expected.toarray())  # the same float64 bits, not just close
    assert np.array_equal(expected_Y.toarray(), Y.toarray())  # the labels pass through the chain unchanged
    frame, Y_frame, _ = load(counts, as_frame=True)  # names follow X's columns and Y's
    assert list(make().fit(frame, Y_frame).get_feature_names_out()) == expected_names


def test_the_scores_are_the_same_for_y_dense_sparse_bool_a_frame_and_lists(counts):
    X, Y, _ = loaded = load(counts)
    dense = Y.toarray()
    forms = [sp.csr_array(Y), dense.astype(np.int64), dense.astype(bool), pd.DataFrame(dense, columns=["a", "b"])]
    expected = BnsScorer(combine="mean").fit(X, Y)
    assert expected.label_names_ == ("0", "1")  # no names given: the columns' positions
    for Y_form in [*forms, dense.astype(int).tolist()]:
        fitted = BnsScorer(combine="mean").fit(X, Y_form)
        assert np.array_equal(fitted.scores_, expected.scores_)
        assert (fitted.transform(X) != expected.transform(X)).nnz == 0
    assert BnsScorer().fit(X, forms[-1]).label_names_ == ("a", "b")
    assert BnsScorer(label_names=loaded.label_names).fit(X, forms[-1]).label_names_ == ("grain", "corn")
    assert not np.array_equal(BnsScorer(combine="min").fit(X, Y).scores_, expected.scores_)  # combine reaches it


def test_a_missing_label_is_left_out_of_that_label_s_counts_as_on_the_command_line(counts):
    X, Y, _ = load(counts)
    unknown = Y.toarray()
    unknown[:40, 1] = np.nan
    fitted = BnsScorer(label="1").fit(X, unknown)
    assert np.array_equal(fitted.scores_, BnsScorer().fit(X[40:], unknown[40:, 1] == 1).scores_)


@pytest.mark.slow  # more than half a second
@pytest.mark.parametrize(
    "make",
    [
        lambda: BnsScorer(combine="max"),
        lambda: Shaper(),
        lambda: Selector(metric="bns", top=30, per_label=True),
        lambda: Selector(metric="chi", top=30, label_powerset=True),
        lambda: ScoreScaler("ig", label_powerset=True),
    ],
)
def test_partial_fit_on_halves_is_the_fit_on_all_rows(counts, make):
    X, Y, _ = load(counts)
    whole = make().fit(X, Y)
    halves = make().partial_fit(X[:100], Y[:100])
    halves = pickle.loads(pickle.dumps(halves)).partial_fit(X[100:], Y[100:].toarray())
    assert (halves.transform(X) != whole.transform(X)).nnz == 0
    assert np.array_equal(getattr(halves, "scores_", 0), getattr(whole, "scores_", 0))
    assert (make().fit(X[:100], Y[:100]).transform(X) != whole.transform(X)).nnz > 0  # the halves differ
    with pytest.raises(ValueError, match=r"Y's labels {x,y} are not those of the first fit {0,1}"):
        make().fit(X[:100], Y[:100]).partial_fit(X[100:], pd.DataFrame(Y[100:].toarray(), columns=["x", "y"]))
    with pytest.raises(ValueError, match="was fitted with a label matrix Y of 2 labels: partial_fit needs one too"):
        make().fit(X[:100], Y[:100]).partial_fit(X[100:], Y[100:, 0].toarray().ravel())


@pytest.mark.slow  # more than half a second
@pytest.mark.parametrize("mulan", [False, True], ids=["MEKA's -C", "Mulan's XML"])
def test_an_updatable_model_of_multi_label_data_updates_to_the_model_fitted_on_all_rows(
    counts, tmp_path, run_filterkit, mulan
):
    text = counts.read_text()
    chain_options = []
    if mulan:  # the labels named by an XML file, the model keeping their names
        text = text.replace(": -C 2'", "'")
        (tmp_path / "labels.xml").write_text('<labels><label name="grain"/><label name="corn"/></labels>')
        chain_options = ["--labels", tmp_path / "labels.xml"]
    start = text.index("@data") + len("@data\n")
    rows = text[start:].splitlines()
    for name, part in (("all", rows), ("old", rows[:120]), ("new", rows[120:])):
        (tmp_path / f"{name}.arff").write_text(text[:start] + "\n".join(part) + "\n")
    for stages in (
        ["shape"],
        ["bns", "--combine", "mean"],
        ["select", "--metric", "ig", "--label-powerset", "--top", "9"],
    ):
        models = {name: tmp_path / f"{name}.json" for name in ("all", "old", "updated")}
        fitted = run_filterkit(*chain_options, "--save-model", models["all"], tmp_path / "all.arff", *stages)
        saved = run_filterkit(
            *chain_options, "--save-model", models["old"], "--updatable", tmp_path / "old.arff", *stages
        )
        assert fitted.status == saved.status == 0, fitted.stderr + saved.stderr
        assert run_filterkit("update", models["old"], tmp_path / "new.arff", "-o", models["updated"]).status == 0
        applied = [
            run_filterkit("apply", models[name], tmp_path / "all.arff").stdout.split(b"\n", 2)[2]
            for name in ("all", "updated")
        ]
        assert applied[0] == applied[1] and applied[0].count(b"@attribute") > 2


def test_select_by_label_powerset_ranks_by_the_label_sets_scores(counts):
    X, Y, _ = load(counts)
    by_sets = Selector(metric="ig", top=10, label_powerset=True).fit(X, Y).scores_
    assert np.array_equal(by_sets, IgScorer(label_powerset=True).fit(X, Y).scores_)
    assert not np.allclose(by_sets, Selector(metric="ig", top=10).fit(X, Y).scores_)  # not binary relevance


@pytest.mark.parametrize(
    "Y, message",
    [
        (
            np.array([[0, 1], [2, 0], [1, 1], [0, 0]]),
            r"^BnsScorer: Y holds 2 in row 1 for the label 'grain': a label matrix holds 0 and 1 \(NaN: not known\)$",
        ),
        (sp.csr_matrix(np.array([[0, 1], [0, 0], [1, 0.5], [0, 0]])), r"Y holds 0\.5 in row 2 for the label 'corn'"),
        (
            np.array([[0, 1], [1, 0], [1, 1]]),
            r"^BnsScorer: Y has 3 rows and X 4: a label matrix has one row per row of X$",
        ),
        (np.array([["0", "1"]] * 4), r"Y holds text, not numbers"),
    ],
)
def test_a_label_matrix_that_does_not_fit_is_a_value_error_saying_why(Y, message):
    with pytest.raises(ValueError, match=message):
        BnsScorer(label_names=["grain", "corn"]).fit(np.eye(4), Y)


@pytest.mark.parametrize(
    "adapter, message",
    [
        (BnsScorer(label_names=["a"]), r"Y has 2 columns where label_names gives 1$"),
        (BnsScorer(label_names=["a", "a"]), r"the label name 'a' names two labels"),
        (BnsScorer(label_names=["x1", "b"]), r"the label name 'x1' names a column of X too"),
        (BnsScorer(positive="1"), r"positive='1' names a class of a one-column y"),
        (BnsScorer(label="c"), r"^BnsScorer: stage 'bns': label='c' is not a label of this data \('0', '1'\)$"),
        (AutoStage(), r"stage 'auto' learns from one class and this data has 2 labels a row"),
    ],
)
def test_label_names_and_options_that_do_not_fit_are_a_value_error(adapter, message):
    with pytest.raises(ValueError, match=message):
        adapter.fit(np.eye(4), np.array([[0, 1], [1, 0], [1, 1], [0, 0]]))


def test_a_stage_that_learns_from_no_class_ignores_a_label_matrix(counts):
    X, Y, _ = load(counts)
    assert (L2Normalizer().fit(X, Y).transform(X) != L2Normalizer().fit(X).transform(X)).nnz == 0
    documents, Y_documents, _ = load(REUTERS)
    words = WordVector(counts=True, lowercase=True).fit(documents, Y_documents)
    assert words.get_feature_names_out().tolist()[:3] == ["&#2", "&#3", "&lt"]


def test_a_pipeline_ending_in_one_vs_rest_predicts_as_the_command_line_s_features_do(counts):
    documents, Y, _ = loaded = load(REUTERS)
    train, test = np.arange(0, 244, 2), np.arange(1, 244, 2)
    pipeline = Pipeline(
        [
            ("words", WordVector(counts=True, lowercase=True)),
            ("shape", Shaper(label_names=loaded.label_names)),
            ("bns", BnsScorer(combine="max", label_names=loaded.label_names)),
            ("l2", L2Normalizer()),
            ("svm", OneVsRestClassifier(LinearSVC(random_state=0))),
        ]
    )
    predicted = pipeline.fit(documents[train], Y[train]).predict(documents[test])
    X, _, _ = load(counts)  # the same chain by hand: its features, then the same classifier
    features = Pipeline(pipeline.steps[1:-1]).fit(X[train], Y[train])
    by_hand = OneVsRestClassifier(LinearSVC(random_state=0)).fit(features.transform(X[train]), Y[train])
    assert np.array_equal(
        predicted.toarray() if sp.issparse(predicted) else predicted, by_hand.predict(features.transform(X[test]))
    )
    truth = Y[test]
    assert predicted.shape == truth.shape and 0.8 < (predicted == truth).mean() < 1  # learned, not perfect


def test_load_gives_y_and_the_label_names_of_meka_and_mulan_data(tmp_path):
    documents, Y, names = loaded = load_arff(REUTERS)
    assert isinstance(loaded, tuple) and len(loaded) == 3 and names == ["Text"]
    assert loaded.label_names == ("grain", "corn") and Y.shape == (244, 2) and Y.sum(axis=0).tolist() == [103, 45]
    assert documents[0, 0].startswith("BAHIA COCOA REVIEW")
    assert pickle.loads(pickle.dumps(loaded)).label_names == ("grain", "corn")
    frame, Y_frame, _ = load(REUTERS, as_frame=True)
    assert list(Y_frame.columns) == ["grain", "corn"] and str(Y_frame.dtypes.iloc[0]) == "Int8"
    assert Y_frame.to_numpy().tolist() == Y.astype(int).tolist()
    text = REUTERS.read_text()
    last = text.replace(": -C 2'", ": -C -2'").replace("@attribute grain {0,1}\n@attribute corn {0,1}\n", "")
    last = last.replace(
        "@attribute Text string\n", "@attribute Text string\n@attribute grain {0,1}\n@attribute corn {0,1}\n"
    )
    rows = last.split("@data\n")
    moved = [
        line[line.index(",", line.index(",") + 1) + 1 :] + "," + line[: line.index(",", line.index(",") + 1)]
        for line in rows[1].splitlines()
        if line
    ]
    (tmp_path / "last.arff").write_text(rows[0] + "@data\n" + "\n".join(moved) + "\n")
    (tmp_path / "mulan.arff").write_text(text.replace(": -C 2'", "'"))
    (tmp_path / "mulan.xml").write_text(
        '<labels xmlns="http://mulan.sourceforge.net/labels"><label name="corn"/><label name="grain"/></labels>'
    )
    for other in (load(tmp_path / "last.arff"), load(tmp_path / "mulan.arff", labels=tmp_path / "mulan.xml")):
        assert other.label_names == ("grain", "corn")  # in the attributes' order, as the chain takes them
        assert np.array_equal(other[1], Y) and other[0][:, 0].tolist() == documents[:, 0].tolist()
    with pytest.warns(UserWarning, match="nominal attributes 'grain', 'corn'"):
        X, y, names = load(tmp_path / "mulan.arff")  # without the XML: one class, the last attribute
    assert names == ["grain", "corn"] and y[0].startswith("BAHIA")


@pytest.mark.slow  # more than half a second
def test_the_example_of_docs_sklearn_md_runs_and_prints_what_it_says(monkeypatch, capsys):
    root = Path(__file__).parent.parent
    page = (root / "docs" / "sklearn.md").read_text()
    section = page[page.index("## Several labels per row") :]
    block = section[section.index("\n    from filterkit.sklearn") + 1 :]
    code = textwrap.dedent(block[: re.search(r"\n(?! |\n)", block).start()])  # up to the first line not indented
    said = re.search(r"print\(.*\)\s+# ([0-9.]+):", code)
    assert said is not None and "OneVsRestClassifier(LinearSVC())" in code
    monkeypatch.chdir(root)
    exec(compile(code, "docs/sklearn.md", "exec"), {})
    assert f"{float(capsys.readouterr().out):.4f}" == said.group(1)


def test_partial_fit_takes_an_unnamed_y_as_the_labels_of_the_first_fit(counts):
    X, Y, _ = load(counts)
    named = pd.DataFrame(Y[:100].toarray(), columns=["grain", "corn"])
    fitted = BnsScorer(label="corn").fit(X[:100], named).partial_fit(X[100:], Y[100:])
    assert fitted.label_names_ == ("grain", "corn")
    assert np.array_equal(fitted.scores_, BnsScorer(label="1").fit(X, Y).scores_)


def test_partial_fit_with_fewer_label_columns_says_the_first_fit_had_more(counts):
    """The error blamed label_names, which nobody had given."""
    X, Y, _ = load(counts)
    fitted = BnsScorer().fit(X[:100], Y[:100])
    with pytest.raises(ValueError, match=r"^BnsScorer: Y has 1 columns where the first fit had 2$"):
        fitted.partial_fit(X[100:], Y[100:, :1])
