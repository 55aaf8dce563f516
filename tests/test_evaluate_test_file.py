"""``filterkit evaluate --test TEST.arff``: each chain fitted on the whole training file, scored on a test
file (issue 39, item 2), checked against ``apply`` + scikit-learn by hand."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import arff
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.stats import binomtest

from chain_helpers import REAL, installed_plugins_once
from filterkit.evaluation import ChainSpec, Settings, evaluate

WEKA_EXAMPLES = Path("/usr/share/doc/weka/examples")
IRIS = REAL / "iris.arff"
FAST = ("--svm-c-values", "1", "--svm-inner-folds", "2")


def split_file(tmp_path, source: Path, every: int = 3, missing_class_rows: tuple = ()) -> tuple[Path, Path]:
    """``source`` split into a training file and a test file of every ``every``-th data row; the test
    rows at ``missing_class_rows`` (0-based) get a missing class."""
    lines = source.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().lower() == "@data") + 1
    header = lines[:start]
    rows = [line for line in lines[start:] if line.strip() and not line.startswith("%")]
    test = [row for i, row in enumerate(rows) if i % every == 0]
    test = [row.rsplit(",", 1)[0] + ",?" if i in missing_class_rows else row for i, row in enumerate(test)]
    paths = tmp_path / "train.arff", tmp_path / "test.arff"
    paths[0].write_text("\n".join(header + [row for i, row in enumerate(rows) if i % every]) + "\n")
    paths[1].write_text("\n".join(header + test) + "\n")
    return paths


def evaluate_json(run_filterkit, *arguments) -> dict:
    result = run_filterkit("evaluate", "-q", "--json", *arguments)
    assert result.status == 0, result.stderr
    return json.loads(result.stdout)


def predictions(path: Path) -> list[dict]:
    return list(csv.DictReader(io.StringIO(path.read_text())))


def features_and_class(data: bytes, class_name: str) -> tuple[sp.csr_matrix, np.ndarray]:
    """An ARFF output of ``apply`` read by liac-arff: its numeric attributes and its class."""
    document = arff.load(io.StringIO(data.decode()), return_type=arff.COO)
    values, rows, columns = document["data"]
    names, kinds = zip(*document["attributes"])
    class_index, n_rows = names.index(class_name), max(rows) + 1
    classes = np.full(n_rows, kinds[class_index][0], dtype=object)  # a sparse row leaves out the first label
    numeric = {j: k for k, j in enumerate(j for j, kind in enumerate(kinds) if kind in ("NUMERIC", "REAL"))}
    kept = [(r, numeric[c], float(v)) for v, r, c in zip(values, rows, columns) if c in numeric]
    for v, r, c in zip(values, rows, columns):
        if c == class_index:
            classes[r] = v
    r, c, v = zip(*kept)
    return sp.csr_matrix((v, (r, c)), shape=(n_rows, len(numeric))), classes


@pytest.mark.slow
@pytest.mark.parametrize("name", ["ReutersGrain", "ReutersCorn"])
def test_scores_on_a_test_file_agree_with_apply_and_scikit_learn_by_hand(run_filterkit, tmp_path, name):
    from sklearn.metrics import f1_score, roc_auc_score
    from sklearn.svm import LinearSVC

    train, test = WEKA_EXAMPLES / f"{name}-train.arff", WEKA_EXAMPLES / f"{name}-test.arff"
    if not (train.exists() and test.exists()):
        pytest.skip(f"Weka's {name} train/test files are missing (apt-get install weka)")
    chain = ("words", "--lowercase", "l2")
    scored = tmp_path / "scored.csv"
    arguments = ("--svm-decision", "margin", "--predictions", scored, "--test", test, train, *chain)
    document = evaluate_json(run_filterkit, *arguments)
    (classifier,) = document["classifier"]

    model = tmp_path / "model.json"
    fitted = run_filterkit("--save-model", model, train, *chain)
    applied = run_filterkit("apply", model, test)
    assert fitted.status == 0 and applied.status == 0, fitted.stderr + applied.stderr
    train_x, train_y = features_and_class(fitted.stdout, "class-att")
    test_x, test_y = features_and_class(applied.stdout, "class-att")
    svm = LinearSVC(C=classifier["C"], random_state=1, max_iter=20000).fit(train_x, train_y == "1")
    margins = svm.decision_function(test_x)
    assert document["settings"]["test_rows"] == len(test_y) == 604
    assert document["auc"] == pytest.approx(roc_auc_score(test_y == "1", margins), abs=1e-9)
    assert document["f1"] == pytest.approx(f1_score(test_y == "1", margins > 0), abs=1e-9)
    rows = predictions(scored)
    assert [int(r["row"]) for r in rows] == list(range(1, 605))
    assert np.allclose([float(r["score"]) for r in rows], margins, atol=1e-9)
    assert [r["truth"] for r in rows] == ["1" if label == "1" else "0" for label in test_y]


def test_the_library_call_gives_the_commands_document(run_filterkit, tmp_path):
    train, test = split_file(tmp_path, IRIS)
    command = evaluate_json(
        run_filterkit, *FAST, "--positive", "Iris-versicolor", "--test", test, "--compare", train, "minmax", "l2 "
    )
    chains = [ChainSpec("minmax", [("minmax", {})]), ChainSpec("l2", [("l2", {})])]
    settings = Settings(positive="Iris-versicolor", classifier_params={"c_values": "1", "inner_folds": 2})
    result = evaluate(train, chains, settings, installed_plugins_once(), test=test)
    assert json.loads(result.json()) == command
    assert command["settings"]["test_rows"] == 50 and command["settings"]["rows"] == 100
    assert "folds" not in command["settings"] and "fold_of_row" not in command["settings"]
    assert result.table().startswith(f"scored on {test} (50 rows), seed 1, classifier svm, trained on 100 rows;")


def test_mcnemar_counts_the_rows_only_one_chain_gets_right(run_filterkit, tmp_path):
    train, test = split_file(tmp_path, REAL / "diabetes.arff")
    scored = tmp_path / "scored.csv"
    arguments = (*FAST, "--stats", "--predictions", scored, "--test", test, "--compare", train, "minmax", "l2 ")
    document = evaluate_json(run_filterkit, *arguments)
    rows = predictions(scored)
    right = {
        chain: np.array([r["truth"] == r["decision"] for r in rows if r["chain"] == chain])
        for chain in ("minmax", "l2")
    }
    only_chain, only_baseline = int(np.sum(right["l2"] & ~right["minmax"])), int(np.sum(~right["l2"] & right["minmax"]))
    (comparison,) = document["paired"]
    (task,) = document["settings"]["tasks"]
    assert comparison["mcnemar"][task] == {
        "only_chain_right": only_chain,
        "only_baseline_right": only_baseline,
        "p": pytest.approx(binomtest(only_chain, only_chain + only_baseline).pvalue),
    }
    assert only_chain + only_baseline > 0
    text = run_filterkit("evaluate", "-q", *arguments)
    assert f"McNemar, task {task}: {only_chain} row(s) right only under the chain" in text.stdout.decode()
    assert "corrected resampled t-test" not in text.stdout.decode()


def test_test_rows_keep_their_numbers_when_rows_without_a_class_are_left_out(run_filterkit, tmp_path):
    train, test = split_file(tmp_path, IRIS, missing_class_rows=(0, 7))
    scored = tmp_path / "scored.csv"
    result = run_filterkit(
        "evaluate", "-q", *FAST, "--multiclass", "--predictions", scored, "--test", test, train, "l2"
    )
    assert result.status == 0, result.stderr
    assert "2 row(s) with a missing class are left out" in result.stderr
    rows = predictions(scored)
    assert [int(r["row"]) for r in rows] == [n for n in range(1, 51) if n not in (1, 8)]
    accuracy = np.mean([r["truth"] == r["decision"] for r in rows])
    assert result.stdout.decode().splitlines()[2].split()[2] == f"{accuracy:.3f}"
    assert {r["truth"] for r in rows} == {"Iris-setosa", "Iris-versicolor", "Iris-virginica"}


def test_a_test_row_whose_score_passes_a_doubles_range_is_an_error_naming_it(run_filterkit, tmp_path):
    # scikit-learn's roc_auc_score raised "Input contains infinity" as a traceback
    lines = IRIS.read_text().splitlines()
    third = lines.index("@DATA") + 3
    lines[third] = "-1.7e308,1.7e308,-1.7e308,-1.7e308,Iris-setosa"
    far = tmp_path / "far.arff"
    far.write_text("\n".join(lines) + "\n")
    options = ("--svm-c-values", "1", "--svm-decision", "margin")
    result = run_filterkit("evaluate", "--test", far, "--positive", "Iris-setosa", *options, IRIS, "minmax")
    assert result.status == 1 and result.stderr.count("\n") == 1
    assert "filterkit: error: row 153 (of the training rows, then the test file's): classifier 'svm' (" in (
        result.stderr
    )
    assert "scored it inf, not a finite number: check the row's values (a score past a double's range)" in (
        result.stderr
    )


def test_a_test_file_with_another_header_is_refused_naming_it_and_the_attribute(run_filterkit, tmp_path):
    train, test = split_file(tmp_path, IRIS)
    test.write_text(test.read_text().replace("petalwidth", "petal_width"))
    scored = tmp_path / "scored.csv"
    result = run_filterkit("evaluate", "-q", "--predictions", scored, "--test", test, "--each-class", train, "l2")
    assert result.status == 1 and result.stdout == b"" and not scored.exists()
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"filterkit: error: {test}") and "petalwidth" in line


@pytest.mark.parametrize(
    "arguments, message",
    [
        (("--folds", "5"), "--test cannot be combined with --folds"),
        (("--repeats", "2"), "--test cannot be combined with --repeats"),
    ],
)
def test_what_only_cross_validation_has_is_refused_with_a_test_file(run_filterkit, tmp_path, arguments, message):
    train, test = split_file(tmp_path, IRIS)
    result = run_filterkit("evaluate", "-q", *arguments, "--test", test, "--each-class", train, "l2")
    assert result.status == 2 and message in result.stderr


def test_predictions_need_a_test_file(run_filterkit, tmp_path):
    result = run_filterkit("evaluate", "-q", "--predictions", tmp_path / "p.csv", "--each-class", IRIS, "l2")
    assert result.status == 2 and "--predictions writes the scored rows of a test file" in result.stderr


@pytest.mark.parametrize(
    "task, message",
    [
        (("--positive", "Iris-setosa"), "the training file has no row of class 'Iris-setosa' to learn it from"),
        (("--multiclass",), "the training file has no row of class 'Iris-setosa' to learn it from"),
    ],
)
def test_a_class_the_training_file_lacks_is_refused_naming_it(run_filterkit, tmp_path, task, message):
    train, test = split_file(tmp_path, IRIS)
    lines = train.read_text().splitlines()
    train.write_text("\n".join(line for line in lines if not line.endswith("Iris-setosa")) + "\n")
    result = run_filterkit("evaluate", "-q", *FAST, *task, "--test", test, train, "l2")
    assert result.status == 1 and result.stdout == b""
    assert result.stderr == f"filterkit: error: {train}: {message}\n"


@pytest.mark.slow  # two evaluations and matplotlib's import: 0.65 s CPU
def test_the_report_and_multiclass_table_of_a_test_file_give_mcnemar_and_no_test_over_folds(run_filterkit, tmp_path):
    pytest.importorskip("matplotlib", reason="--report needs matplotlib (pip install 'filterkit-arff[plot]')")
    from filterkit import reports

    train, test = split_file(tmp_path, IRIS)
    arguments = (*FAST, "--stats", "--test", test, "--compare", train, "minmax", "l2 ")
    page = reports.html_page(evaluate_json(run_filterkit, "--positive", "Iris-virginica", *arguments))
    assert "<th>l2</th><td>minmax</td><td>1</td><td>Iris-virginica</td>" in page  # McNemar's table
    assert "corrected t-test" not in page
    table = run_filterkit("evaluate", "-q", "--multiclass", *arguments).stdout.decode()
    assert "McNemar, task (all classes):" in table and "folds won/tied/lost" not in table


NO_INNER_FOLDS = (
    "too few for inner folds: C is the grid's first, not searched, and no Platt sigmoid or threshold was fitted "
    "(the margin's sign decides)"
)


@pytest.mark.parametrize(
    "task, where", [(("--multiclass",), "task (all classes)"), (("--positive", "b"), "task b")], ids=["all", "b"]
)
def test_a_class_of_one_training_row_is_warned_of_as_train_warns_of_it(run_filterkit, tmp_path, task, where):
    """evaluate --test fits as train fits, and said nothing where a class of one row left the fit without inner
    folds (C the grid's first, no sigmoid): train warned of it."""
    train = tmp_path / "tiny.arff"
    train.write_text('@relation r\n@attribute Text string\n@attribute c {a,b}\n@data\n"x y",a\n"y z",a\n"x",b\n')
    test = tmp_path / "test.arff"
    test.write_text('@relation r\n@attribute Text string\n@attribute c {a,b}\n@data\n"x z",a\n"y",a\n"x",b\n"z y",b\n')
    result = run_filterkit("evaluate", *task, "--svm-c-values", "0.1,1", "--test", test, train, "words", "l2")
    assert result.status == 0, result.stderr
    warned = [line for line in result.stderr.splitlines() if "warning" in line]
    one_row = f"a class has one training row, {NO_INNER_FOLDS}"
    assert warned == [f"filterkit: warning: {where}, fold 1, chain 'words l2': {one_row}"]
    more = tmp_path / "more.arff"
    more.write_text(test.read_text())
    plenty = run_filterkit("evaluate", *task, "--svm-c-values", "0.1,1", "--test", test, more, "words", "l2")
    assert plenty.status == 0 and "warning" not in plenty.stderr


def test_multiclass_per_class_rows_are_the_test_rows_and_a_mean_without_a_class_is_marked(run_filterkit, tmp_path):
    # the rows column showed the training file's counts (25 setosa where the test file had none), and macroAUC,
    # the mean of two classes' AUC, was not marked as leaving the third out
    train, test = split_file(tmp_path, IRIS, every=2)
    lines = test.read_text().splitlines()
    test.write_text("\n".join(line for line in lines if not line.endswith(",Iris-setosa")) + "\n")
    result = run_filterkit("evaluate", "-q", "--multiclass", *FAST, "--test", test, train, "minmax")
    assert result.status == 0, result.stderr
    table = result.stdout.decode().splitlines()
    counts = {line.split()[0]: int(line.split()[1]) for line in table if line.startswith("Iris-")}
    assert counts == {"Iris-setosa": 0, "Iris-versicolor": 25, "Iris-virginica": 25}
    head = table[1].split()
    cells = dict(zip(head, table[2].split()))
    assert cells["macroAUC"].endswith("*") and not cells["acc"].endswith("*")
    assert "  macroAUC of 'minmax' (train 1): class Iris-setosa left out (no AUC of it)" in table


def test_multiclass_cross_validation_marks_no_macro_mean_whose_classes_all_have_a_value(run_filterkit, tmp_path):
    # two setosa rows in three folds: a fold without setosa has no per-fold value of it, but the pooled macro-F1
    # and the mean AUC hold it, so neither is a mean that leaves it out
    lines = IRIS.read_text().splitlines()
    setosa = [k for k, line in enumerate(lines) if line.endswith(",Iris-setosa")]
    path = tmp_path / "two-setosa.arff"
    path.write_text("\n".join(line for k, line in enumerate(lines) if k not in setosa[2:]) + "\n")
    result = run_filterkit("evaluate", "-q", "--multiclass", "--folds", "3", *FAST, path, "minmax")
    assert result.status == 0, result.stderr
    table = result.stdout.decode().splitlines()
    assert not any(cell.endswith("*") for cell in table[2].split()), table[2]
    assert "class Iris-setosa left out" not in result.stdout.decode()
