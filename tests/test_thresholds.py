"""``--svm-threshold f1|fbr`` (issue 77, item 1) and its objectives ``precision@recall=R``, ``recall@precision=P``
(item 2): each column's cut chosen on the out-of-fold scores of the SVM's inner cross-validation, over every
distinct score; FBR's fallback as LibMultiLabel's SCutFBR; the cut recorded by ``evaluate``, saved by ``train``,
applied by ``predict`` and shown by ``explain``; ``fixed`` (the default) leaving every model as it was."""

from __future__ import annotations

import csv
import io
import json
import warnings
from pathlib import Path

import arff
import numpy as np
import pytest
from class_problems import class_problem
from sklearn.metrics import f1_score
from sklearn.model_selection import StratifiedKFold
from sklearn.svm import LinearSVC

import filterkit
from chain_helpers import REAL
from filterkit.errors import FilterkitError
from filterkit.thresholds import (
    ONE_ROW_CLASS,
    _best_offset,
    _macro_f1,
    class_offsets,
    f1_cut,
    fbr_cut,
    precision_at_recall_cut,
    recall_at_precision_cut,
)
from filterkit_plugins.classifiers import LinearSVM, platt_sigmoid

SONAR = REAL / "sonar.arff"
LABELS = Path(__file__).parent / "data" / "multilabel" / "reuters-grain-corn.arff"
MODELS = Path(__file__).parent / "data" / "models"
LABEL_CHAIN = ("words", "--lowercase", "bns", "l2")


def brute_force_cut(scores: np.ndarray, positives: np.ndarray) -> tuple[float, float | None, float]:
    """The score s whose rows ≥ s reach the largest F1 (the highest s on a tie), tried one by one with
    scikit-learn's F1; the next lower distinct score (None: s is the lowest); that F1."""
    distinct = np.unique(scores)
    best = max(distinct, key=lambda s: (f1_score(positives, scores >= s, zero_division=0.0), s))
    below = distinct[distinct < best]
    return float(best), None if not len(below) else float(below.max()), f1_score(positives, scores >= best)


@pytest.mark.parametrize("seed", range(12))
def test_the_f1_cut_is_the_brute_force_optimum_over_every_distinct_score(seed):
    generator = np.random.default_rng(seed)
    rows = int(generator.integers(2, 300))
    positives = generator.random(rows) < generator.uniform(0.05, 0.6)
    positives[int(generator.integers(rows))] = True
    scores = generator.normal(size=rows) + 1.5 * positives
    if seed % 2:
        scores = np.round(scores, 1)  # ties, positives and negatives sharing a score
    cut, reached = f1_cut(scores, positives)
    best, lower, expected = brute_force_cut(scores, positives)
    assert reached == pytest.approx(expected, abs=1e-15)
    assert np.array_equal(scores >= cut, scores >= best)
    assert cut == (best if lower is None else (best + lower) / 2)


def test_equal_f1s_go_to_the_higher_cut_and_the_cut_is_midway():
    scores = np.array([0.9, 0.8, 0.7, 0.6])
    positives = np.array([True, False, True, False])
    # rows ≥ 0.9: F1 2/3; ≥ 0.7: 2·2 / (3 + 2) = 0.8; ≥ 0.6: 2·2 / (4 + 2) = 2/3
    assert f1_cut(scores, positives) == (pytest.approx(0.65), 0.8)
    tied = np.array([True, False, False, True])  # ≥ 0.9: 2/3, ≥ 0.6: 2/3, between them less
    assert f1_cut(np.array([0.9, 0.8, 0.7, 0.6]), tied) == (pytest.approx(0.85), pytest.approx(2 / 3))


def test_a_cut_at_the_lowest_score_keeps_every_row_positive():
    assert f1_cut(np.array([0.2, 0.1, 0.1]), np.array([True, True, True])) == (0.1, 1.0)


@pytest.mark.parametrize(("floor", "falls_back"), [(0.0, False), (0.4, False), (0.5, True), (0.9, True)])
def test_fbr_falls_back_above_every_score_where_the_best_f1_is_not_above_the_floor(floor, falls_back):
    scores = np.array([0.9, 0.8, 0.7, 0.2, 0.1])
    positives = np.array([False, False, True, False, False])  # the best: rows ≥ 0.7, F1 2·1 / (3 + 1) = 0.5
    cut, reached, fell_back = fbr_cut(scores, positives, floor)
    assert reached == 0.5 and fell_back is falls_back
    assert cut == (np.nextafter(0.9, 1.0) if falls_back else (0.7 + 0.2) / 2)
    assert not (scores >= cut).any() if falls_back else list(scores >= cut) == [True, True, True, False, False]


def sonar() -> tuple[np.ndarray, np.ndarray]:
    """Sonar's features, each row divided by its L2 norm summed in column order as ``l2`` sums it (a cumulative
    sum adds one value after another), and whether it is a mine."""
    data = arff.loads(SONAR.read_text())["data"]
    features = np.array([row[:-1] for row in data], dtype=np.float64)
    norms = np.sqrt(np.cumsum(features * features, axis=1)[:, -1:])
    return features / norms, np.array([row[-1] == "Mine" for row in data])


def out_of_fold_probabilities(features, positives, C: float, folds: int, seed: int) -> np.ndarray:
    """The inner CV's out-of-fold decision values at ``C`` (liblinear, the folds drawn as the SVM draws them),
    through Platt's sigmoid fitted on them."""
    classes = positives.astype(np.int64)
    decisions = np.zeros(len(classes))
    for train, test in StratifiedKFold(folds, shuffle=True, random_state=seed).split(decisions, classes):
        model = LinearSVC(C=C, dual="auto", random_state=seed, max_iter=20000).fit(features[train], classes[train])
        decisions[test] = model.decision_function(features[test])
    A, B = platt_sigmoid(decisions, positives)
    return 1.0 / (1.0 + np.exp(A * decisions + B))


def test_platts_fit_on_separable_decisions_with_a_far_one_warns_of_no_overflow():
    # np.where computes both branches: exp(-z) overflowed where the other branch was kept ("RuntimeWarning:
    # overflow encountered in exp" on train's stderr)
    decisions = np.r_[np.linspace(-1, -0.5, 500), np.linspace(0.5, 1, 500), 900.0, -900.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        A, B = platt_sigmoid(decisions, decisions > 0)
    assert np.isfinite([A, B]).all() and A < -5
    assert np.all((1.0 / (1.0 + np.exp(A * decisions[:1000] + B)) > 0.5) == (decisions[:1000] > 0))


def test_the_svm_s_threshold_is_the_optimum_of_the_out_of_fold_scores_recomputed():
    features, mines = sonar()
    svm = LinearSVM(c_values="1", inner_folds=4, threshold="f1").fit(features, mines.astype(np.int64), 3)
    scores = out_of_fold_probabilities(features, mines, 1.0, 4, 3)
    best, lower, expected = brute_force_cut(scores, mines)
    described = svm.describe()
    assert described["threshold"] == pytest.approx((best + lower) / 2, abs=1e-9)
    assert described["threshold_f1"] == pytest.approx(expected, abs=1e-12)
    assert np.array_equal(svm.predict(features), svm.score(features) >= described["threshold"])
    assert svm.state()["thresholds"].tolist() == [described["threshold"]]
    assert not {"thresholds", "thresholds_macro_f1", "threshold_precision"} & set(described)  # k classes' keys


def test_evaluate_records_each_fold_s_threshold_of_its_training_rows(run_filterkit):
    result = run_filterkit(
        "evaluate", "--json", "--folds", "3", "--positive", "Mine", "--svm-c-values", "1", "--svm-threshold", "f1",
        SONAR, "l2",
    )  # fmt: skip
    assert result.status == 0, result.stderr
    document = json.loads(result.stdout)
    fold_of_row, seed = np.array(document["settings"]["fold_of_row"]), document["settings"]["seed"]
    features, mines = sonar()
    recorded = [fit["threshold"] for fit in document["classifier"]]
    assert len(set(recorded)) == 3  # the spread across folds shows
    for fold, threshold in enumerate(recorded):
        train = fold_of_row != fold
        scores = out_of_fold_probabilities(features[train], mines[train], 1.0, 5, seed)
        best, lower, _ = brute_force_cut(scores, mines[train])
        assert threshold == pytest.approx((best + lower) / 2, abs=1e-9)


def test_the_html_report_gives_the_spread_of_the_folds_thresholds(run_filterkit, tmp_path):
    page = tmp_path / "report.html"
    options = ("--folds", "3", "--positive", "Mine", "--svm-c-values", "1", "--svm-threshold", "f1")
    result = run_filterkit("evaluate", "--json", "--report", page, *options, SONAR, "l2")
    assert result.status == 0, result.stderr
    cuts = sorted(fit["threshold"] for fit in json.loads(result.stdout)["classifier"])
    spread = f"the threshold {cuts[0]:.4g} to {cuts[-1]:.4g} over 3 fits (median {cuts[1]:.4g})"
    assert spread in page.read_text()


def rows_of(text: bytes) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text.decode())))


def sonar_models_cut_by(folder: Path, rules: tuple[str, ...]) -> dict[str, Path]:
    """Models of sonar's mines, at C = 1, one cut by each ``--svm-threshold`` rule of ``rules``, by that rule."""
    from filterkit import cli

    models = {}
    for rule in rules:
        models[rule] = folder / f"{rule.partition('@')[0]}.json"
        argv = ["train", "-q", "-o", str(models[rule]), "--positive", "Mine", "--svm-c-values", "1"]
        assert cli.run([*argv, "--svm-threshold", rule, str(SONAR), "l2"]) == 0
    return models


@pytest.fixture(scope="module")
def sonar_models(tmp_path_factory):
    """Models of sonar's mines, at C = 1, with the fixed cut and with f1's."""
    return sonar_models_cut_by(tmp_path_factory.mktemp("thresholds"), ("fixed", "f1"))


def test_predict_applies_the_saved_threshold(run_filterkit, sonar_models):
    saved = json.loads(sonar_models["f1"].read_text())["classifier"]
    threshold = saved["fitted"]["threshold"]
    assert 0 < threshold < 0.5  # the out-of-fold rows put the cut below Platt's 0.5
    answers = {}
    for rule, model in sonar_models.items():
        result = run_filterkit("predict", model, SONAR)
        assert result.status == 0, result.stderr
        answers[rule] = rows_of(result.stdout)
    probability = np.array([float(row["probability"]) for row in answers["f1"]])
    assert [row["probability"] for row in answers["f1"]] == [row["probability"] for row in answers["fixed"]]
    assert [row["label"] == "Mine" for row in answers["f1"]] == list(probability >= threshold)
    assert [row["label"] == "Mine" for row in answers["fixed"]] == list(probability >= 0.5)
    assert ((probability >= threshold) & (probability < 0.5)).any()  # rows the saved threshold decides otherwise


def test_explain_shows_the_threshold_a_row_is_compared_with(run_filterkit, sonar_models):
    threshold = json.loads(sonar_models["f1"].read_text())["classifier"]["fitted"]["threshold"]
    result = run_filterkit("explain", "--json", "--top", "1", sonar_models["f1"], SONAR)
    assert result.status == 0, result.stderr
    explained = [json.loads(line) for line in result.stdout.splitlines()]
    assert {row["threshold"] for row in explained} == {threshold}
    assert all((row["label"] == "Mine") == (row["probability"] >= threshold) for row in explained)
    text = run_filterkit("explain", "--top", "1", sonar_models["f1"], SONAR).stdout.decode()
    assert f"threshold {threshold:.4g})" in text.splitlines()[0]
    fixed = run_filterkit("explain", "--json", "--top", "1", sonar_models["fixed"], SONAR).stdout
    assert "threshold" not in json.loads(fixed.splitlines()[0])


def test_the_fixed_rule_given_writes_the_model_written_without_it(run_filterkit, tmp_path, sonar_models):
    model = tmp_path / "model.json"
    argv = ("train", "-q", "-o", model, "--positive", "Mine", "--svm-c-values", "1", SONAR, "l2")
    assert run_filterkit(*argv).status == 0
    assert model.read_bytes() == sonar_models["fixed"].read_bytes()
    written = json.loads(model.read_text())["classifier"]
    assert "threshold" not in written["params"] and "thresholds" not in written["state"]


def test_a_model_saved_before_thresholds_loads_and_predicts_as_it_did(run_filterkit):
    model = MODELS / "trained-grain.json"
    assert "thresholds" not in json.loads(model.read_text())["classifier"]["state"]
    result = run_filterkit("predict", model, REAL / "reuters_grain_sample.arff")
    assert result.status == 0, result.stderr
    rows = [line.split(",") for line in result.stdout.decode().splitlines()]
    expected = [line.split(",") for line in (MODELS / "trained-grain.predictions.csv").read_text().splitlines()]
    assert [row[:3] for row in rows] == [row[:3] for row in expected]  # rows, labels and decisions to the byte
    probabilities = np.array([[float(row[3]), float(wanted[3])] for row, wanted in zip(rows[1:], expected[1:])])
    np.testing.assert_allclose(probabilities[:, 0], probabilities[:, 1], rtol=1e-14)  # exp's last digit by host


def test_each_label_gets_its_own_threshold_saved_applied_and_recorded_per_fold(run_filterkit, tmp_path):
    model = tmp_path / "labels.json"
    argv = ("--svm-c-values", "1", "--svm-inner-folds", "3", "--svm-threshold", "fbr")
    assert run_filterkit("train", "-q", "-o", model, *argv, LABELS, *LABEL_CHAIN).status == 0
    per_label = json.loads(model.read_text())["classifier"]["per_label"]
    thresholds = [entry["fitted"]["threshold"] for entry in per_label]
    assert len(thresholds) == 2 and thresholds[0] != thresholds[1]
    assert [entry["fitted"]["threshold_fell_back"] for entry in per_label] == [False, False]
    loaded = filterkit.load_model(model)
    features = loaded.transform(documents_of(LABELS))
    probabilities = loaded.probabilities(features)
    assert np.array_equal(loaded.predicted(features), probabilities >= np.array(thresholds))
    result = run_filterkit("evaluate", "--json", "--folds", "3", *argv, LABELS, *LABEL_CHAIN)
    assert result.status == 0, result.stderr
    for entry in json.loads(result.stdout)["results"][0]["per_label"].values():
        assert len(entry["threshold"]) == 3 and all(0 < value < 1 for value in entry["threshold"])


def documents_of(path: Path) -> list[str]:
    """The text of each row of a MEKA file of two labels and a text."""
    return [row[2] for row in arff.loads(path.read_text(encoding="utf-8"))["data"]]


@pytest.mark.parametrize(
    ("argv", "refusal"),
    [
        (("--classifier", "aisvm", "--positive", "Mine", SONAR, "l2"), "another classifier than 'aisvm'"),
        (("--svm-threshold", "fbr", "--multiclass", REAL / "iris.arff", "l2"), "one class per row"),
    ],
)
def test_what_cannot_choose_a_threshold_is_refused_in_one_line(run_filterkit, argv, refusal):
    result = run_filterkit("evaluate", *([] if "--svm-threshold" in argv else ["--svm-threshold", "f1"]), *argv)
    assert result.status != 0 and refusal in result.stderr.strip().splitlines()[-1]


def test_pcut_and_a_threshold_per_label_are_refused_together(run_filterkit):
    result = run_filterkit("evaluate", "--threshold", "pcut", "--svm-threshold", "f1", LABELS, *LABEL_CHAIN)
    assert result.status != 0 and "choose one" in result.stderr


@pytest.mark.parametrize("rule", ["f1", "fbr"])
def test_a_class_of_one_training_row_keeps_the_fixed_cut_and_says_so(rule):
    features = np.eye(4) + 0.1
    fixed = LinearSVM(c_values="100").fit(features, np.array([1, 0, 0, 0]), 1)
    svm = LinearSVM(c_values="100", threshold=rule).fit(features, np.array([1, 0, 0, 0]), 1)
    described = svm.describe()
    assert described["threshold_rule"] == ONE_ROW_CLASS and "threshold" not in described
    assert described.get("threshold_fell_back") is (True if rule == "fbr" else None)
    assert "thresholds" not in svm.state()
    assert list(svm.predict(features)) == list(fixed.predict(features)) == [True, False, False, False]


def test_a_multiclass_class_of_one_training_row_keeps_the_largest_score():
    features = np.eye(5) + 0.1
    classes = np.array([0, 1, 1, 2, 2])
    svm = LinearSVM(threshold="f1").fit_multiclass(features, classes, 3, 1)
    assert svm.describe()["threshold_rule"] == ONE_ROW_CLASS and "thresholds" not in svm.state()
    assert list(svm.predict_class(features)) == list(
        LinearSVM().fit_multiclass(features, classes, 3, 1).predict_class(features)
    )


def one_positive_corn(folder: Path) -> Path:
    """The grain and corn file with its first corn-positive row only, the other corn rows left out."""
    lines, kept = LABELS.read_text(encoding="utf-8").split("\n"), []
    data = seen = False
    for line in lines:
        corn = data and line.split(",", 2)[1:2] == ["1"]
        if not (corn and seen):
            kept.append(line)
        seen, data = seen or corn, data or line.startswith("@data")
    path = folder / "one-corn.arff"
    path.write_text("\n".join(kept), encoding="utf-8")
    return path


@pytest.mark.parametrize("rule", ["f1", "fbr"])
def test_a_label_of_one_positive_row_keeps_the_fixed_cut_and_the_others_are_cut(run_filterkit, tmp_path, rule):
    data, model = one_positive_corn(tmp_path), tmp_path / "labels.json"
    argv = ("--svm-c-values", "1", "--svm-inner-folds", "3", "--svm-threshold", rule)
    result = run_filterkit("train", "-q", "-o", model, *argv, data, *LABEL_CHAIN)
    assert result.status == 0, result.stderr
    grain, corn = json.loads(model.read_text())["classifier"]["per_label"]
    assert 0 < grain["fitted"]["threshold"] < 1 and "threshold_rule" not in grain["fitted"]
    assert corn["fitted"]["threshold_rule"] == ONE_ROW_CLASS and "threshold" not in corn["fitted"]
    assert corn["fitted"].get("threshold_fell_back") is (True if rule == "fbr" else None)
    assert "thresholds" in grain["state"] and "thresholds" not in corn["state"]
    loaded = filterkit.load_model(model)
    features = loaded.transform(documents_of(data))
    assert loaded.thresholds() == [grain["fitted"]["threshold"], None]
    assert np.array_equal(loaded.predicted(features)[:, 1], loaded.decisions(features)[:, 1] > 0)


def test_a_binary_task_of_one_positive_row_trains_with_the_fixed_cut(run_filterkit, tmp_path):
    data, model = tmp_path / "one-mine.arff", tmp_path / "mine.json"
    lines = SONAR.read_text().splitlines()
    mines = [position for position, line in enumerate(lines) if line.rstrip().endswith(",Mine")]
    data.write_text("\n".join(line for position, line in enumerate(lines) if position not in mines[1:]) + "\n")
    argv = ("--positive", "Mine", "--svm-c-values", "1", "--svm-threshold", "f1")
    result = run_filterkit("train", "-q", "-o", model, *argv, data, "l2")
    assert result.status == 0, result.stderr
    written = json.loads(model.read_text())["classifier"]
    assert written["fitted"]["threshold_rule"] == ONE_ROW_CLASS and "threshold" not in written["fitted"]


@pytest.mark.parametrize("rule", [(), ("--svm-threshold", "fixed"), ("--svm-threshold", "f1")])
@pytest.mark.parametrize("floor", ["0.1", "0.3"])
def test_an_fbr_floor_without_fbr_is_refused_in_one_line(run_filterkit, tmp_path, rule, floor):
    argv = ("--positive", "Mine", "--svm-c-values", "1", *rule, "--svm-fbr-floor", floor, SONAR, "l2")
    result = run_filterkit("train", "-q", "-o", tmp_path / "model.json", *argv)
    assert result.status != 0 and not (tmp_path / "model.json").exists()
    last = result.stderr.strip().splitlines()[-1]
    assert "--svm-fbr-floor is the floor of --svm-threshold fbr" in last
    with pytest.raises(FilterkitError, match="--svm-fbr-floor"):
        LinearSVM(fbr_floor=float(floor), **({} if not rule else {"threshold": rule[1]}))
    assert LinearSVM(threshold="fbr", fbr_floor=float(floor)).params["fbr_floor"] == float(floor)


def macro_f1(classes: np.ndarray, scores: np.ndarray, offsets: np.ndarray) -> float:
    """scikit-learn's macro-F1 of the classes of the largest score less its offset."""
    decided = np.argmax(scores - offsets, axis=1)
    return f1_score(classes, decided, labels=range(scores.shape[1]), average="macro", zero_division=0.0)


@pytest.mark.parametrize("seed", range(12))
def test_each_class_offset_is_the_best_of_every_offset_tried_one_by_one(seed):
    generator, classes, scores = class_problem(seed, rows=(5, 80), widths=(2, 6))
    width = scores.shape[1]
    truth = np.bincount(classes, minlength=width).astype(np.float64)
    offsets, k = generator.normal(size=width) * 0.1, int(generator.integers(width))
    reached = _macro_f1(classes, np.argmax(scores - offsets, axis=1), truth)
    assert reached == pytest.approx(macro_f1(classes, scores, offsets), abs=1e-15)
    offset, best = _best_offset(scores, classes, offsets, k, truth, reached)
    rivals = np.delete(scores - offsets, k, axis=1).max(axis=1)
    gaps = np.unique(np.round(scores[:, k] - rivals, 9))
    tried = [gaps[0] - 1, gaps[-1] + 1, *((gaps[1:] + gaps[:-1]) / 2)]
    values = [macro_f1(classes, scores, np.where(np.arange(width) == k, t, offsets)) for t in tried]
    assert best == pytest.approx(max(max(values), reached), abs=1e-12)
    assert macro_f1(classes, scores, np.where(np.arange(width) == k, offset, offsets)) == pytest.approx(best, abs=1e-12)
    found, reached = class_offsets(scores, classes)
    assert reached == pytest.approx(macro_f1(classes, scores, found), abs=1e-12)
    assert reached >= macro_f1(classes, scores, np.zeros(width))


def test_multiclass_offsets_are_saved_and_decide_the_class(run_filterkit, tmp_path):
    model = tmp_path / "iris.json"
    argv = ("train", "-q", "-o", model, "--multiclass", "--svm-c-values", "1", "--svm-threshold", "f1")
    assert run_filterkit(*argv, REAL / "iris.arff", "minmax").status == 0
    fitted = json.loads(model.read_text())["classifier"]["fitted"]
    assert len(fitted["thresholds"]) == 3 and any(fitted["thresholds"])
    loaded = filterkit.load_model(model)
    data = arff.loads((REAL / "iris.arff").read_text())["data"]
    documents = [dict(zip(["sepallength", "sepalwidth", "petallength", "petalwidth"], row[:4])) for row in data]
    probabilities = loaded.predict_proba(documents)
    expected = [loaded.classes_[k] for k in np.argmax(probabilities - np.array(fitted["thresholds"]), axis=1)]
    assert loaded.predict(documents) == expected


@pytest.mark.parametrize("scale", [1024.0, 1 / 1024])
def test_class_offsets_scale_with_the_scores_at_either_end_too(scale):
    generator = np.random.default_rng(5)
    classes = generator.integers(0, 2, 60)
    scores = generator.random((60, 3))
    scores[np.arange(60), classes] += 0.3
    scores[:, 2] += 1.0  # class 2 holds no row and scores highest everywhere: its offset goes past the top end
    offsets, reached = class_offsets(scores, classes)
    assert not (np.argmax(scores - offsets, axis=1) == 2).any()
    scaled, reached_scaled = class_offsets(scores * scale, classes)
    assert reached_scaled == reached
    assert np.array_equal(scaled, offsets * scale)


def test_an_offset_past_the_end_is_beyond_it_at_any_magnitude():
    scores = np.array([[0.0, 3e17], [0.0, 3e17 + 64]])
    offset, reached = _best_offset(scores, np.array([0, 0]), np.zeros(2), 1, np.array([2.0, 0.0]), 0.0)
    assert reached == 0.5 and offset > 3e17 + 64
    assert list(np.argmax(scores - np.array([0.0, offset]), axis=1)) == [0, 0]


@pytest.fixture(scope="module")
def iris_offsets(tmp_path_factory):
    """A --multiclass model of iris whose classes are decided with offsets (--svm-threshold f1)."""
    from filterkit import cli

    model = tmp_path_factory.mktemp("offsets") / "iris.json"
    argv = ["train", "-q", "-o", str(model), "--multiclass", "--svm-c-values", "1", "--svm-threshold", "f1"]
    assert cli.run([*argv, str(REAL / "iris.arff"), "minmax"]) == 0
    return model


def test_explain_calls_a_multiclass_cut_an_offset(run_filterkit, iris_offsets):
    offsets = filterkit.load_model(iris_offsets).classifier("state")["thresholds"].tolist()
    assert any(offsets)
    result = run_filterkit("explain", "--json", "--top", "1", iris_offsets, REAL / "iris.arff")
    assert result.status == 0, result.stderr
    explained = [json.loads(line) for line in result.stdout.splitlines()]
    assert all([entry["offset"] for entry in row["classes"]] == offsets for row in explained)
    assert not any("threshold" in entry for row in explained for entry in row["classes"])
    text = run_filterkit("explain", "--top", "1", iris_offsets, REAL / "iris.arff").stdout.decode()
    chosen = next(entry for entry in explained[0]["classes"] if entry["class"] == explained[0]["label"])
    assert f", offset {chosen['offset']:.4g})" in text.splitlines()[0] and "threshold" not in text


def test_explain_shows_the_cut_the_loaded_classifier_applies_not_the_fitted_record(sonar_models, iris_offsets):
    loaded = filterkit.load_model(sonar_models["f1"])
    applied = loaded.classifier("state")["thresholds"].tolist()
    loaded.section["fitted"]["threshold"] = 0.99
    assert loaded.thresholds() == applied
    multiclass = filterkit.load_model(iris_offsets)
    multiclass.section["fitted"]["thresholds"] = [9.0, 9.0, 9.0]
    assert multiclass.thresholds() == multiclass.classifier("state")["thresholds"].tolist()


def random_scores(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Scores of 2 to 300 rows, at least one positive, positives scored higher on the whole; rounded to one
    decimal on odd seeds (ties, positives and negatives sharing a score)."""
    generator = np.random.default_rng(seed)
    rows = int(generator.integers(2, 300))
    positives = generator.random(rows) < generator.uniform(0.05, 0.6)
    positives[int(generator.integers(rows))] = True
    scores = generator.normal(size=rows) + 1.5 * positives
    return (np.round(scores, 1) if seed % 2 else scores), positives


def brute_force_objective(scores, positives, maximized: str, floor: float):
    """Every distinct score s tried one by one, the precision and recall of "rows ≥ s" counted anew for each:
    among those whose other quantity reaches ``floor``, the s of the largest ``maximized`` one (the highest s on a
    tie), the next lower distinct score (None: s is the lowest), s's precision and recall; None where none
    reaches."""
    measured = {}
    for s in np.unique(scores):
        hits = np.count_nonzero(positives & (scores >= s))
        measured[s] = (hits / np.count_nonzero(scores >= s), hits / np.count_nonzero(positives))
    held = 1 if maximized == "precision" else 0
    reaching = [s for s, values in measured.items() if values[held] >= floor]
    if not reaching:
        return None
    best = max(reaching, key=lambda s: (measured[s][1 - held], s))
    below = [s for s in measured if s < best]
    return float(best), max(below) if below else None, *measured[best]


def floors(seed: int, positives: np.ndarray) -> list[float]:
    """The floors tried on ``seed``'s scores: 1, a recall or precision some cut reaches exactly, and random ones."""
    generator = np.random.default_rng(seed + 100)
    exact = int(generator.integers(1, np.count_nonzero(positives) + 1)) / np.count_nonzero(positives)
    return [1.0, exact, *generator.uniform(0.01, 1.0, 4)]


@pytest.mark.parametrize("seed", range(12))
def test_the_precision_at_recall_cut_is_the_brute_force_optimum_over_every_distinct_score(seed):
    scores, positives = random_scores(seed)
    for recall in floors(seed, positives):
        cut, precision, reached = precision_at_recall_cut(scores, positives, recall)
        best, lower, expected_precision, expected_recall = brute_force_objective(scores, positives, "precision", recall)
        assert np.array_equal(scores >= cut, scores >= best)
        assert cut == (best if lower is None else (best + lower) / 2)
        assert (precision, reached) == (pytest.approx(expected_precision), pytest.approx(expected_recall))
        assert reached >= recall


@pytest.mark.parametrize("seed", range(12))
def test_the_recall_at_precision_cut_is_the_brute_force_optimum_and_falls_back_exactly_where_none_reaches(seed):
    scores, positives = random_scores(seed)
    outcomes = set()
    for precision in floors(seed, positives):
        cut, reached, recall, fell_back = recall_at_precision_cut(scores, positives, precision)
        expected = brute_force_objective(scores, positives, "recall", precision)
        assert fell_back is (expected is None)
        outcomes.add(fell_back)
        if fell_back:
            assert cut == np.nextafter(scores.max(), np.inf) and (reached, recall) == (0.0, 0.0)
            continue
        best, lower, expected_precision, expected_recall = expected
        assert np.array_equal(scores >= cut, scores >= best)
        assert cut == (best if lower is None else (best + lower) / 2)
        assert (reached, recall) == (pytest.approx(expected_precision), pytest.approx(expected_recall))
        assert reached >= precision
    assert False in outcomes  # the small exact floor is always reached


def test_objective_ties_go_to_the_higher_cut_and_the_lowest_cut_reaches_any_recall():
    scores = np.array([0.9, 0.8, 0.7, 0.6, 0.5])
    positives = np.array([True, False, True, False, True])
    # rows ≥ s: 0.9: P 1, R 1/3; 0.8: 1/2, 1/3; 0.7: 2/3, 2/3; 0.6: 1/2, 2/3; 0.5: 3/5, 1
    assert precision_at_recall_cut(scores, positives, 0.5) == (pytest.approx(0.65), 2 / 3, 2 / 3)
    assert precision_at_recall_cut(scores, positives, 1.0) == (0.5, 3 / 5, 1.0)
    assert recall_at_precision_cut(scores, positives, 0.5) == (0.5, 3 / 5, 1.0, False)
    assert recall_at_precision_cut(scores, positives, 0.65) == (pytest.approx(0.65), 2 / 3, 2 / 3, False)
    # recall 1/3 at 0.9 and 0.8, precision 1 and 1/2 both ≥ 0.5: the tie goes to 0.9
    assert recall_at_precision_cut(scores[:2], positives[:2], 0.5) == (pytest.approx(0.85), 1.0, 1.0, False)


def test_recall_at_precision_falls_back_where_the_top_row_is_negative_and_precision_one_is_asked():
    scores, positives = np.array([0.9, 0.8, 0.1]), np.array([False, True, True])
    cut, precision, recall, fell_back = recall_at_precision_cut(scores, positives, 1.0)
    assert fell_back and cut == np.nextafter(0.9, 1.0) and not (scores >= cut).any() and precision == recall == 0.0
    assert recall_at_precision_cut(scores, positives, 2 / 3) == (0.1, 2 / 3, 1.0, False)  # the lowest: itself


@pytest.mark.parametrize(
    ("rule", "maximized", "floor"),
    [("precision@recall=0.9", "precision", 0.9), ("recall@precision=0.9", "recall", 0.9)],
)
def test_the_svm_s_objective_cut_is_the_optimum_of_the_out_of_fold_scores_recomputed(rule, maximized, floor):
    features, mines = sonar()
    svm = LinearSVM(c_values="1", inner_folds=4, threshold=rule, c_by="f1").fit(features, mines.astype(np.int64), 3)
    scores = out_of_fold_probabilities(features, mines, 1.0, 4, 3)
    best, lower, precision, recall = brute_force_objective(scores, mines, maximized, floor)
    described = svm.describe()
    assert described["threshold"] == pytest.approx((best + lower) / 2, abs=1e-9)
    assert (described["threshold_precision"], described["threshold_recall"]) == (
        pytest.approx(precision),
        pytest.approx(recall),
    )
    # C is scored by the F1 at the objective's cut (--svm-c-by f1), recorded beside it
    at_cut = f1_score(mines, scores >= best)
    assert described["threshold_f1"] == described["inner_f1"]["1.0"] == pytest.approx(at_cut)
    assert described.get("threshold_fell_back") is (False if maximized == "recall" else None)
    assert np.array_equal(svm.predict(features), svm.score(features) >= described["threshold"])
    assert svm.state()["thresholds"].tolist() == [described["threshold"]]


def test_an_svm_whose_recall_at_precision_cut_falls_back_records_it_and_scores_0():
    generator = np.random.default_rng(4)
    classes = np.arange(60) % 2
    features = np.column_stack([2.0 * classes - 1 + generator.normal(0, 0.5, 60), np.ones(60)])
    features[0, 0] = 10.0  # a negative row beyond every positive: the top out-of-fold score, no cut of precision 1
    svm = LinearSVM(c_values="1", inner_folds=3, threshold="recall@precision=1", c_by="f1").fit(features, classes, 2)
    described = svm.describe()
    assert described["threshold_fell_back"] is True
    assert described["threshold_precision"] == described["threshold_recall"] == described["threshold_f1"] == 0.0
    assert described["inner_f1"] == {"1.0": 0.0}
    assert not svm.predict(features[1:]).any()  # the cut lies above the outlier's out-of-fold score


def test_evaluate_records_each_fold_s_objective_cut_and_what_it_reached(run_filterkit):
    options = ("--folds", "3", "--positive", "Mine", "--svm-c-values", "1")
    result = run_filterkit("evaluate", "--json", *options, "--svm-threshold", "precision@recall=0.9", SONAR, "l2")
    assert result.status == 0, result.stderr
    document = json.loads(result.stdout)
    fold_of_row, seed = np.array(document["settings"]["fold_of_row"]), document["settings"]["seed"]
    features, mines = sonar()
    assert len(document["classifier"]) == 3
    for fold, fit in enumerate(document["classifier"]):
        train = fold_of_row != fold
        scores = out_of_fold_probabilities(features[train], mines[train], 1.0, 5, seed)
        best, lower, precision, recall = brute_force_objective(scores, mines[train], "precision", 0.9)
        assert fit["threshold"] == pytest.approx((best + lower) / 2, abs=1e-9)
        assert (fit["threshold_precision"], fit["threshold_recall"]) == (
            pytest.approx(precision),
            pytest.approx(recall),
        )
        assert fit["threshold_recall"] >= 0.9 and "threshold_fell_back" not in fit
    held_out = document["per_fold"]
    assert len(held_out["precision"]) == len(held_out["recall"]) == 3  # what each fold's cut reached on its test rows


@pytest.fixture(scope="module")
def objective_models(tmp_path_factory):
    """Models of sonar's mines, at C = 1, cut by each objective."""
    rules = ("precision@recall=0.95", "recall@precision=0.85")
    return sonar_models_cut_by(tmp_path_factory.mktemp("objectives"), rules)


@pytest.mark.parametrize("rule", ["precision@recall=0.95", "recall@precision=0.85"])
def test_predict_applies_the_objective_s_saved_cut(run_filterkit, objective_models, sonar_models, rule):
    written = json.loads(objective_models[rule].read_text())["classifier"]
    threshold = written["fitted"]["threshold"]
    assert written["params"]["threshold"] == rule
    assert filterkit.load_model(objective_models[rule]).classifier("state")["thresholds"].tolist() == [threshold]
    assert 0 < written["fitted"]["threshold_precision"] <= 1 and 0 < written["fitted"]["threshold_recall"] <= 1
    result = run_filterkit("predict", objective_models[rule], SONAR)
    assert result.status == 0, result.stderr
    answers = rows_of(result.stdout)
    fixed = rows_of(run_filterkit("predict", sonar_models["fixed"], SONAR).stdout)
    assert [row["probability"] for row in answers] == [row["probability"] for row in fixed]
    probability = np.array([float(row["probability"]) for row in answers])
    assert [row["label"] == "Mine" for row in answers] == list(probability >= threshold)
    assert ((probability >= threshold) != (probability >= 0.5)).any()  # rows the saved cut decides otherwise


NOT_A_RECALL = "the recall must be a number above 0 and at most 1, as in precision@recall=0.9"
NOT_A_PRECISION = "the precision must be a number above 0 and at most 1, as in recall@precision=0.9"
NOT_A_RULE = "is not one of fixed, f1, fbr, micro-macro, precision@recall=R, recall@precision=P"


@pytest.mark.parametrize(
    ("rule", "refusal"),
    [
        ("precision@recall=abc", f"'precision@recall=abc': {NOT_A_RECALL}"),
        ("precision@recall=0", f"'precision@recall=0': {NOT_A_RECALL}"),
        ("precision@recall=1.5", f"'precision@recall=1.5': {NOT_A_RECALL}"),
        ("recall@precision=nan", f"'recall@precision=nan': {NOT_A_PRECISION}"),
        ("recall@precision= 0.5", f"'recall@precision= 0.5': {NOT_A_PRECISION}"),
        ("recall@precision", f"'recall@precision' {NOT_A_RULE}"),
        ("f2", f"'f2' {NOT_A_RULE}"),
    ],
)
def test_a_bad_threshold_rule_is_refused_in_one_line_before_anything_is_fitted(run_filterkit, tmp_path, rule, refusal):
    argv = ("--positive", "Mine", "--svm-threshold", rule, SONAR, "l2")
    result = run_filterkit("train", "-q", "-o", tmp_path / "model.json", *argv)
    assert result.status == 2 and not (tmp_path / "model.json").exists()  # a usage error, as --svm-fbr-floor's
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert errors == [f"Error: svm: --svm-threshold {refusal}"]
    with pytest.raises(FilterkitError) as refused:
        LinearSVM(threshold=rule)
    assert refused.value.message == f"svm: --svm-threshold {refusal}"


@pytest.mark.parametrize("rule", ["precision@recall=0.9", "recall@precision=0.9"])
def test_an_objective_with_multiclass_is_refused_in_one_line(run_filterkit, rule):
    result = run_filterkit("evaluate", "--multiclass", "--svm-threshold", rule, REAL / "iris.arff", "l2")
    lines = result.stderr.strip().splitlines()
    assert result.status == 1 and len(lines) == 1
    assert "--multiclass's per-class offsets optimise macro-F1 only: use --svm-threshold f1" in lines[0]


@pytest.mark.parametrize("edited", [5.0, -3.0, 1.5])
def test_a_saved_probability_cut_outside_0_to_1_is_refused(run_filterkit, tmp_path, edited):
    """A threshold edited to 5 (or -3) on Platt's probability loaded and decided every row alike, status 0 (found by
    a hostile review of the decision rules); no fit makes one outside [0, 1] (the highest is just past the largest
    score, ``cost_cut``'s "no row")."""
    model = tmp_path / "virginica.json"
    argv = ("train", "-q", "-o", model, "--positive", "Iris-virginica", "--svm-threshold", "f1")
    assert run_filterkit(*argv, REAL / "iris.arff", "minmax").status == 0
    assert run_filterkit("predict", model, REAL / "iris.arff").status == 0
    document = json.loads(model.read_text())
    document["classifier"]["state"]["thresholds"] = [edited]
    model.write_text(json.dumps(document))
    refused = run_filterkit("predict", model, REAL / "iris.arff")
    assert refused.status == 1 and refused.stdout == b""
    assert f"svm: a threshold of {edited!r} on Platt's probability, which no fit makes" in refused.stderr


def test_a_classifier_option_s_own_check_names_it_as_given(run_filterkit):
    """--svm-fbr-floor nan passed click's FLOAT and failed the option's own check, which named it --fbr-floor, with
    status 1; such checks are usage errors (status 2), as click's, naming the option as given."""
    options = ("--jobs", "1", "--positive", "Iris-virginica", "--svm-threshold", "fbr", "--svm-fbr-floor", "nan")
    refused = run_filterkit("evaluate", *options, REAL / "iris.arff", "minmax")
    assert refused.status == 2 and "Error: option --svm-fbr-floor: nan is not a finite number" in refused.stderr
    stage = run_filterkit(REAL / "iris.arff", "chi", "select", "--fraction", "nan")
    assert stage.status == 2 and "Error: option --fraction: nan is not a finite number" in stage.stderr
