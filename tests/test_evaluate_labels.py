"""``evaluate`` on multi-label data (docs/evaluate.md, "Several labels per row"): iterative stratification puts
every label in every fold, the measures equal scikit-learn's on the same predictions, binary relevance decides
each label as evaluate decides it as a class, and PCut predicts the training label cardinality."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest

from filterkit.arff.reader import read_arff
from filterkit.evaluation import ChainSpec, Settings
from filterkit.evaluation_targets import LabelledData, label_fold, label_measures, pcut_threshold
from filterkit.plugins import load_plugins
from filterkit.tasks import iterative_stratification

DATA = Path(__file__).parent / "data" / "multilabel"
REUTERS = DATA / "reuters-grain-corn.arff"
WEKA_EXAMPLES = Path("/usr/share/doc/weka/examples")
needs_weka_examples = pytest.mark.skipif(
    not (WEKA_EXAMPLES / "ReutersCorn-test.arff").is_file(), reason="Debian's weka examples are not installed"
)


def skewed_labels(seed: int, rows: int = 200) -> np.ndarray:
    """``rows`` × 15 labels, from 40 % of the rows down to 1 %."""
    frequencies = [0.4, 0.3, 0.2, 0.12, 0.1, 0.08, 0.06, 0.05, 0.04, 0.03, 0.03, 0.025, 0.02, 0.015, 0.01]
    return np.random.default_rng(seed).random((rows, len(frequencies))) < frequencies


def labels_missing_a_fold(truth: np.ndarray, fold_of_row: np.ndarray, folds: int) -> list[int]:
    """The labels with at least ``folds`` positives of which some fold holds none."""
    return [
        j
        for j in range(truth.shape[1])
        if truth[:, j].sum() >= folds and (np.bincount(fold_of_row[truth[:, j]], minlength=folds) == 0).any()
    ]


@pytest.mark.parametrize("folds", [3, 5, 10])
def test_iterative_stratification_gives_every_label_with_k_positives_a_positive_in_every_fold(folds):
    from sklearn.model_selection import KFold

    missed_by_plain_folds = 0
    for seed in range(1, 11):
        truth = skewed_labels(seed)
        fold_of_row = iterative_stratification(truth, folds, seed)
        assert labels_missing_a_fold(truth, fold_of_row, folds) == []
        sizes = np.bincount(fold_of_row, minlength=folds)
        assert np.all(np.abs(sizes - len(truth) / folds) <= 0.1 * len(truth) / folds + 1), sizes
        plain = np.zeros(len(truth), dtype=np.int64)
        for fold, (_, test) in enumerate(KFold(folds, shuffle=True, random_state=seed).split(truth)):
            plain[test] = fold
        missed_by_plain_folds += len(labels_missing_a_fold(truth, plain, folds))
    assert missed_by_plain_folds > 0  # the data is one where unstratified folds leave rare labels out


def test_iterative_stratification_is_seeded():
    truth = skewed_labels(4)
    first = iterative_stratification(truth, 5, 7)
    np.testing.assert_array_equal(first, iterative_stratification(truth.copy(), 5, 7))
    assert not np.array_equal(first, iterative_stratification(truth, 5, 8))


def test_iterative_stratification_shares_reuters_labels_evenly_among_folds():
    schema, chunk = read_arff(str(REUTERS))
    truth = np.column_stack([chunk.column(schema.index_of(name)) for name in ("grain", "corn")]) == 1
    fold_of_row = iterative_stratification(truth, 10, 1)
    for j, positives in enumerate((103, 45)):
        per_fold = np.bincount(fold_of_row[truth[:, j]], minlength=10)
        assert per_fold.sum() == positives and set(per_fold.tolist()) <= {positives // 10, positives // 10 + 1}
    assert set(np.bincount(fold_of_row).tolist()) <= {24, 25}


def test_label_measures_equal_scikit_learn_s_metrics():
    from sklearn.metrics import accuracy_score, f1_score, hamming_loss, precision_score, recall_score

    generator = np.random.default_rng(11)
    truth = generator.random((80, 6)) < [0.5, 0.3, 0.2, 0.1, 0.05, 0.0]
    predicted = truth ^ (generator.random(truth.shape) < 0.15)
    predicted[:, 5] = False  # a label with no positive and none predicted: 0/0 counts 0
    labels = [f"l{j}" for j in range(6)]
    measures = label_measures(truth, predicted, labels)
    for average in ("micro", "macro"):
        for name, metric in (("f1", f1_score), ("precision", precision_score), ("recall", recall_score)):
            expected = metric(truth, predicted, average=average, zero_division=0)
            assert measures[f"{average}_{name}"] == pytest.approx(expected, abs=1e-12)
    assert measures["hamming_loss"] == pytest.approx(hamming_loss(truth, predicted), abs=1e-12)
    assert measures["subset_accuracy"] == pytest.approx(accuracy_score(truth, predicted), abs=1e-12)
    per_label_f1 = f1_score(truth, predicted, average=None, zero_division=0)
    assert [measures["per_label"][label]["f1"] for label in labels] == pytest.approx(per_label_f1.tolist(), abs=1e-12)
    assert [measures["per_label"][label]["positives"] for label in labels] == truth.sum(axis=0).tolist()


def test_pcut_puts_as_many_training_pairs_above_the_threshold_as_the_label_cardinality_asks():
    generator = np.random.default_rng(5)
    truth = generator.random((50, 4)) < [0.6, 0.3, 0.1, 1.0]  # the last label is positive in every row
    scores = [generator.random(50), generator.random(50), generator.random(50), None]
    threshold = pcut_threshold(scores, truth)
    above = sum(int(np.sum(s > threshold)) for s in scores if s is not None)
    assert above + 50 == truth.sum()  # the constant label's 50 positives and the fitted labels' pairs above
    assert pcut_threshold(scores, np.zeros_like(truth)) == np.inf


def reuters_pair(folder: Path) -> tuple[Path, Path]:
    """Weka's ReutersGrain and ReutersCorn training and test files as one MEKA pair (labels grain, corn)."""

    def documents(name: str) -> list[tuple[str, str]]:
        text = (WEKA_EXAMPLES / name).read_text(encoding="utf-8").split("@data", 1)[1]
        return [tuple(line.rsplit(",", 1)) for line in text.split("\n") if line.startswith("'")]

    header = REUTERS.read_text(encoding="utf-8").split("@relation", 1)[1].split("@data\n", 1)[0]
    paths = []
    for part in ("train", "test"):
        rows = []
        for (text, grain), (same_text, corn) in zip(
            documents(f"ReutersGrain-{part}.arff"), documents(f"ReutersCorn-{part}.arff")
        ):
            assert text == same_text
            rows.append(f"{grain},{corn},{text}\n")
        path = folder / f"reuters-{part}.arff"
        path.write_text(f"@relation{header}@data\n{''.join(rows)}", encoding="utf-8")
        paths.append(path)
    return paths[0], paths[1]


def label_sets(text: str, chain: str, labels: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The truth and predicted label matrices of ``chain`` in a ``--predictions`` CSV."""
    rows = [row for row in csv.DictReader(io.StringIO(text)) if row["chain"] == chain]
    matrix = lambda column: np.array(  # noqa: E731
        [[label in row[column].split("|") for label in labels] for row in rows], dtype=bool
    )
    return matrix("truth"), matrix("predicted")


@pytest.mark.slow
@needs_weka_examples
def test_binary_relevance_decides_each_label_as_evaluate_decides_it_as_the_class(tmp_path, run_filterkit):
    train, test = reuters_pair(tmp_path)
    chain = ["words", "--lowercase", "--whole-corpus", "bns", "l2"]
    multi = tmp_path / "multi.csv"
    result = run_filterkit("evaluate", "--chain-per-label", "--test", test, "--predictions", multi, train, *chain)
    assert result.status == 0, result.stderr
    truth, predicted = label_sets(multi.read_text(), "words --lowercase --whole-corpus bns l2", ["grain", "corn"])
    for j, name in enumerate(("Grain", "Corn")):
        single = tmp_path / f"{name}.csv"
        weka = [WEKA_EXAMPLES / f"Reuters{name}-{part}.arff" for part in ("train", "test")]
        result = run_filterkit("evaluate", "--test", weka[1], "--predictions", single, weka[0], *chain)
        assert result.status == 0, result.stderr
        rows = list(csv.DictReader(io.StringIO(single.read_text())))
        np.testing.assert_array_equal(predicted[:, j], [row["decision"] == "1" for row in rows])
        np.testing.assert_array_equal(truth[:, j], [row["truth"] == "1" for row in rows])


@pytest.mark.slow
@needs_weka_examples
def test_the_json_measures_are_scikit_learn_s_of_the_predicted_label_sets(tmp_path, run_filterkit):
    from scipy.stats import wilcoxon
    from sklearn.metrics import accuracy_score, f1_score, hamming_loss

    train, test = reuters_pair(tmp_path)
    chains = ["words --lowercase l2", "words --lowercase bns l2"]
    predictions = tmp_path / "p.csv"
    result = run_filterkit(
        "evaluate", "--test", test, "--predictions", predictions, "--json", "--compare", train, *chains
    )
    assert result.status == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["settings"]["labels"] == ["grain", "corn"]
    assert document["settings"]["test_rows"] == 604 and document["settings"]["test_label_counts"] == {
        "grain": 57,
        "corn": 24,
    }
    for entry in document["results"]:
        truth, predicted = label_sets(predictions.read_text(), entry["chain"], ["grain", "corn"])
        assert len(truth) == 604
        assert entry["micro_f1"] == pytest.approx(f1_score(truth, predicted, average="micro"), abs=1e-12)
        assert entry["macro_f1"] == pytest.approx(f1_score(truth, predicted, average="macro"), abs=1e-12)
        assert entry["hamming_loss"] == pytest.approx(hamming_loss(truth, predicted), abs=1e-12)
        assert entry["subset_accuracy"] == pytest.approx(accuracy_score(truth, predicted), abs=1e-12)
        per_label = f1_score(truth, predicted, average=None)
        assert [entry["per_label"][label]["f1"] for label in ("grain", "corn")] == pytest.approx(per_label.tolist())
        assert {label: values["positives"] for label, values in entry["per_label"].items()} == {"grain": 57, "corn": 24}
    (paired,) = document["paired"]
    ours, baseline = ([r["per_label"][label]["f1"] for label in ("grain", "corn")] for r in document["results"][::-1])
    assert paired["f1_over_labels"]["difference"] == pytest.approx(np.mean(np.subtract(ours, baseline)))
    assert paired["f1_over_labels"]["wilcoxon_p"] == pytest.approx(wilcoxon(ours, baseline).pvalue)
    assert paired["subset_mcnemar"]["p"] < 0.01  # bns mends 18 more label sets than it breaks (docs/evaluate.md)


@pytest.mark.slow
def test_cross_validating_the_reuters_labels_file_is_stratified_and_the_same_bytes_in_two_processes(run_filterkit):
    argv = ["evaluate", "--folds", "5", "--json", REUTERS, "words", "--lowercase", "bns", "l2"]
    result = run_filterkit(*argv)
    assert result.status == 0, result.stderr
    document = json.loads(result.stdout)
    settings = document["settings"]
    assert settings["rows"] == 244 and settings["label_counts"] == {"grain": 103, "corn": 45}
    assert settings["stratification"] == "iterative" and settings["chain_fitted"] == "once"
    schema, chunk = read_arff(str(REUTERS))
    truth = np.column_stack([chunk.column(0), chunk.column(1)]) == 1
    np.testing.assert_array_equal(settings["fold_of_row"], iterative_stratification(truth, 5, 1))
    (entry,) = document["results"]
    assert entry["per_label"]["grain"]["positives"] == 103 and len(entry["per_label"]["corn"]["C"]) == 5
    assert entry["micro_f1"] > 0.85 and entry["subset_accuracy"] > 0.85 and entry["hamming_loss"] < 0.07
    assert run_filterkit(*argv[:1], "--jobs", "2", *argv[1:]).stdout == result.stdout


@pytest.mark.slow
def test_pcut_predicts_the_training_label_cardinality_on_the_training_rows():
    registry = load_plugins()
    schema, chunk = read_arff(str(REUTERS))
    truth = np.column_stack([chunk.column(0), chunk.column(1)]) == 1
    dataset = LabelledData(schema, chunk, ("grain", "corn"), None, truth)
    chain = ChainSpec("words --words-to-keep 10 l2", [("words", {"words_to_keep": 10}), ("l2", {})])  # SVMs that err
    rows = np.arange(len(truth))
    decided = label_fold(registry, dataset, chain, rows, rows, Settings(threshold="decision"))["predicted"]
    cut = label_fold(registry, dataset, chain, rows, rows, Settings(threshold="pcut"))["predicted"]
    assert cut.sum() == truth.sum() == 148
    assert decided.sum() == 88  # the SVMs' own decisions miss the cardinality PCut matches


@pytest.mark.slow
def test_mulan_s_xml_labels_evaluate_as_meka_s(tmp_path, run_filterkit):
    mulan = tmp_path / "reuters.arff"
    mulan.write_text(REUTERS.read_text(encoding="utf-8").replace(": -C 2'", "'"), encoding="utf-8")
    xml = tmp_path / "reuters.xml"
    xml.write_text('<labels><label name="grain"/><label name="corn"/></labels>')
    chain = ["--folds", "3", "--json"]
    meka = json.loads(run_filterkit("evaluate", *chain, REUTERS, "words", "l2").stdout)
    by_xml = json.loads(run_filterkit("evaluate", "--labels", xml, *chain, mulan, "words", "l2").stdout)
    meka["settings"].pop("input"), by_xml["settings"].pop("input")
    assert meka == by_xml


@pytest.mark.slow
def test_rows_with_a_missing_label_are_left_out_and_counted(tmp_path, run_filterkit):
    lines = REUTERS.read_text(encoding="utf-8").split("\n")
    first_row = lines.index("@data") + 1
    lines[first_row] = "?" + lines[first_row][1:]
    path = tmp_path / "missing.arff"
    path.write_text("\n".join(lines), encoding="utf-8")
    result = run_filterkit("evaluate", "--folds", "3", "--json", path, "words", "l2")
    assert result.status == 0, result.stderr
    assert json.loads(result.stdout)["settings"]["rows"] == 243
    assert "1 row(s) with a missing label are left out" in result.stderr


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--positive", "1", REUTERS], "--positive: multi-label data is learned by binary relevance"),
        (["--train-fraction", "0.5,1", REUTERS], "--train-fraction: multi-label data"),
        (["--threshold", "pcut", WEKA_EXAMPLES / "ReutersCorn-test.arff"], "--threshold pcut needs multi-label data"),
        (["--chain-per-label", WEKA_EXAMPLES / "ReutersCorn-test.arff"], "--chain-per-label needs multi-label data"),
        (["--folds", "245", REUTERS], "--folds 245 is more than the 244 rows"),
    ],
)
def test_options_that_do_not_fit_the_data_s_labels_are_one_error(run_filterkit, argv, message):
    if not Path(argv[-1]).is_file():
        pytest.skip("Debian's weka examples are not installed")
    result = run_filterkit("evaluate", *argv, "words", "l2")
    assert result.status == 1 and len(result.stderr.strip().splitlines()) == 1
    assert message in result.stderr and "Traceback" not in result.stderr


@pytest.mark.slow
def test_the_report_shows_each_label_s_f1_under_each_chain_and_plot_is_refused(tmp_path, run_filterkit):
    pytest.importorskip("matplotlib")
    report, plot = tmp_path / "r.html", tmp_path / "p.png"
    chains = ["--compare", REUTERS, "words l2", "words bns l2"]
    result = run_filterkit("evaluate", "--folds", "3", "--json", "--report", report, *chains)
    assert result.status == 0, result.stderr
    page = report.read_text(encoding="utf-8")
    for label, entry in json.loads(result.stdout)["results"][1]["per_label"].items():
        assert f"<title>label {label}: F1 " in page and f"{entry['f1']:.3f} under &#x27;words bns l2&#x27;" in page
    assert "F1 per label (train 1): &#x27;words bns l2&#x27; against &#x27;words l2&#x27;" in page
    refused = run_filterkit("evaluate", "--folds", "3", "--plot", plot, *chains)
    assert refused.status == 1 and refused.stdout == b"" and not plot.exists()
    assert "--plot draws learning curves, which multi-label data has not" in refused.stderr


@pytest.mark.slow
def test_cross_validated_chains_are_paired_over_folds_by_the_corrected_t_test(run_filterkit):
    from filterkit.measures import corrected_resampled_t_test

    result = run_filterkit("evaluate", "--folds", "4", "--json", "--compare", REUTERS, "words l2", "words bns l2")
    assert result.status == 0, result.stderr
    document = json.loads(result.stdout)
    baseline, chain = (entry["per_fold"]["micro_f1"] for entry in document["results"])
    assert len(chain) == 4 and chain != baseline
    sizes = np.bincount(document["settings"]["fold_of_row"])
    ratio = float(np.mean(sizes / (sizes.sum() - sizes)))
    (paired,) = document["paired"]
    expected = corrected_resampled_t_test(np.subtract(chain, baseline), ratio)
    assert paired["micro_f1_over_folds"]["corrected_t"] == pytest.approx(expected)
    assert "subset_mcnemar" not in paired  # McNemar is for one held-out set


def test_an_output_that_cannot_be_written_leaves_no_other_output(tmp_path, run_filterkit):
    """--predictions refused a label holding '|' once the evaluation was done, when the --report page had already
    been written; it is now refused before any row is read, and neither is written."""
    text = (DATA / "three-labels-synthetic.arff").read_text(encoding="utf-8").replace("use::editing", "use|editing")
    data, test = tmp_path / "sets.arff", tmp_path / "test.arff"
    data.write_text(text, encoding="utf-8")
    test.write_text(text, encoding="utf-8")
    report, predictions = tmp_path / "report.html", tmp_path / "predictions.csv"
    argv = ["evaluate", "-q", "--test", test, "--report", report, "--predictions", predictions, data, "words", "l2"]
    result = run_filterkit(*argv)
    assert result.status == 1 and result.stdout == b""
    assert "--predictions: label 'use|editing' holds |, which joins a row's labels" in result.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == ["sets.arff", "test.arff"]


def test_plot_of_label_sets_is_refused_before_any_row_is_read(tmp_path, run_filterkit):
    """It was refused once the whole cross-validation had run."""
    pytest.importorskip("matplotlib")  # without it --plot is refused first, for that
    plot = tmp_path / "p.png"
    result = run_filterkit("evaluate", "--progress", "--folds", "3", "--plot", plot, REUTERS, "words", "l2")
    assert result.status == 1 and result.stdout == b"" and not plot.exists()
    assert result.stderr.splitlines() == [
        "filterkit: error: --plot draws learning curves, which multi-label data has not: use --report"
    ]


def test_a_label_of_one_training_row_is_warned_of_as_train_warns_of_it(run_filterkit, tmp_path):
    """evaluate --test fits each label as train does, and said nothing of the label 'rare' (one row) whose fit had no
    inner folds; train warned of it."""
    synthetic = DATA / "three-labels-synthetic.arff"
    test = tmp_path / "test.arff"
    test.write_text(synthetic.read_text())
    result = run_filterkit("evaluate", "--svm-c-values", "0.1,1", "--test", test, synthetic, "words", "l2")
    assert result.status == 0, result.stderr
    warned = [line for line in result.stderr.splitlines() if "warning" in line]
    assert len(warned) == 1 and warned[0].endswith(
        "label 'rare': one training row on one side, too few for inner folds: C is the grid's first, not searched, "
        "and no Platt sigmoid or threshold was fitted (the margin's sign decides)"
    )


@pytest.mark.parametrize("scope, which", [("none", "no training row holds"), ("all", "every training row holds")])
@pytest.mark.parametrize("command", ["evaluate", "train"])
def test_an_objective_scoped_to_a_label_no_row_or_every_row_holds_is_refused(
    run_filterkit, tmp_path, scope, which, command
):
    # such a label has no fit and no out-of-fold score: the cut was made for nothing, without a word
    lines = (DATA / "three-labels-synthetic.arff").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.lower().startswith("@data")) + 1
    header = [line.replace("-C 3", "-C 5") for line in lines[:start] if not line.startswith("%")]
    at = next(i for i, line in enumerate(header) if line.lower().startswith("@attribute"))
    header[at:at] = ["@attribute none {0,1}", "@attribute all {0,1}"]
    path = tmp_path / "five.arff"
    path.write_text("\n".join(header + ["0,1," + line for line in lines[start:] if line.strip()]) + "\n")
    rule = f"recall@precision=0.9:{scope}"
    argv = ["--svm-c-values", "1", "--svm-threshold", rule, path, "words", "l2"]
    output = tmp_path / "m.json"
    result = run_filterkit(*(["evaluate", "--folds", "3"] if command == "evaluate" else ["train", "-o", output]), *argv)
    assert result.status == 1 and result.stderr == (
        f"filterkit: error: {path}: svm: --svm-threshold {rule}: {which} the label '{scope}', so its cut would be "
        "made for nothing\n"
    )
    assert not output.exists()
