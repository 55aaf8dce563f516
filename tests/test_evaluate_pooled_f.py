"""``evaluate``'s F1, precision and recall from the counts summed over the folds (issue 40, item 3):
Forman & Scholz, "Apples-to-Apples in Cross-Validation Studies", SIGKDD Explorations 12(1), 2010, show
that the mean of per-fold F is biased under class imbalance (a fold without positives scores 0) and
recommend F_tp,fp; the per-fold means stay in the document as ``f1_fold_mean`` and the like."""

from __future__ import annotations

import numpy as np
import pytest

from chain_helpers import read_bytes
from filterkit.classifier import Classifier
from filterkit.evaluation import ChainSpec, Settings, evaluate
from filterkit.plugins import Registered, load_plugins
from filterkit.sources import MemorySource

NO_STAGE = [ChainSpec("(none)", [])]


class FirstFeature(Classifier):
    """Positive where the first feature is above ½: on these files, always right."""

    name = "first-feature"

    def fit(self, features, targets, seed):
        return self

    def score(self, features):
        return np.asarray(features[:, 0].toarray()).ravel()

    def predict(self, features):
        return self.score(features) > 0.5


def registry():
    loaded = load_plugins().complete()
    loaded.classifiers["first-feature"] = Registered("first-feature", FirstFeature, "tests", "tests")
    return loaded


def source(positives: int, negatives: int, wrong: int = 0) -> MemorySource:
    """Rows whose one feature is 1 for the class 'yes', 0 for 'no'; then ``wrong`` of each the other way."""
    rows = ["1,yes"] * positives + ["0,no"] * negatives + ["0,yes", "1,no"] * wrong
    text = "@relation skewed\n@attribute x numeric\n@attribute class {no,yes}\n@data\n" + "\n".join(rows) + "\n"
    return MemorySource(*read_bytes(text.encode()))


def test_a_fold_without_positives_lowers_the_fold_mean_but_not_the_pooled_f():
    # 3 positives in 4 stratified folds: 3 folds hold one each (tp 1, fp 0, fn 0: F 1), one holds none
    # (tp = fp = fn = 0: F, precision and recall 0).  Mean of the folds: 3/4.  Summed: tp 3, fp 0, fn 0: 1.
    document = evaluate(source(3, 9), NO_STAGE, Settings(folds=4, classifier="first-feature"), registry()).document
    assert sorted(document["per_fold"]["f1"]) == [0.0, 1.0, 1.0, 1.0]
    for measure in ("f1", "precision", "recall"):
        assert document[measure] == 1.0
        assert document[f"{measure}_fold_mean"] == 0.75
    assert document["accuracy"] == 1.0


def test_macro_and_micro_averages_pool_each_task_over_its_folds():
    settings = Settings(folds=4, classifier="first-feature", positive="yes", stats=True)
    chains = [*NO_STAGE, ChainSpec("l2", [("l2", {})])]
    document = evaluate(source(3, 9), chains, settings, registry()).document
    for averaged in [*document["macro"], *(r["micro"] for r in document["macro"] if "micro" in r)]:
        assert (averaged["f1"], averaged["f1_fold_mean"]) == (1.0, 0.75)
    assert document["paired"][0]["measures"]["f1"]["difference"] == 0.0


@pytest.mark.parametrize("positives", [1, 4])
def test_with_a_test_file_the_one_fold_gives_equal_pooled_f_and_fold_mean(positives):
    # tp = positives, fp 1, fn 1: precision = recall = F1 = positives / (positives + 1).
    training, test = source(4, 8), source(positives, 3, wrong=1)
    document = evaluate(training, NO_STAGE, Settings(classifier="first-feature"), registry(), test=test).document
    for measure in ("f1", "precision", "recall"):
        assert document[measure] == document[f"{measure}_fold_mean"] == pytest.approx(positives / (positives + 1))


def test_multiclass_f1s_pool_each_class_over_the_folds():
    from filterkit.measures import multiclass_measures, summarize_multiclass

    def fold(truth, predicted):
        predicted = np.array(predicted)
        record = multiclass_measures(np.array(truth), np.eye(2)[predicted], predicted, ["p", "q"])
        return {**record, "classifier": {}, "features": 1}

    # Fold 1: p tp 2 fp 0 fn 1 (F 4/5), q tp 1 fp 1 fn 0 (F 2/3).  Fold 2: p tp 0 fp 0 fn 1 (F 0),
    # q tp 3 fp 1 fn 0 (F 6/7).  Summed: p tp 2 fp 0 fn 2 (F 2/3), q tp 4 fp 2 fn 0 (F 4/5); all: tp 6, fp 2, fn 2.
    summary = summarize_multiclass([fold([0, 0, 0, 1], [0, 0, 1, 1]), fold([0, 1, 1, 1], [1, 1, 1, 1])])
    assert summary["per_class"]["p"]["f1"] == pytest.approx(2 / 3)
    assert summary["per_class"]["p"]["f1_fold_mean"] == pytest.approx(0.4)
    assert summary["per_class"]["q"]["f1"] == pytest.approx(0.8)
    assert summary["macro_f1"] == pytest.approx((2 / 3 + 0.8) / 2)
    assert summary["macro_f1_fold_mean"] == pytest.approx(((0.8 + 2 / 3) / 2 + (0 + 6 / 7) / 2) / 2)
    assert summary["micro_f1"] == summary["micro_f1_fold_mean"] == pytest.approx(0.75)


def test_a_test_file_without_positives_or_decisions_scores_f1_0_both_ways():
    # tp = fp = fn = 0 in the one fold: F1 0, as the fold's own (the mean of per-fold values is that too).
    result = evaluate(source(4, 8), NO_STAGE, Settings(classifier="first-feature"), registry(), test=source(0, 3))
    assert result.document["f1"] == result.document["f1_fold_mean"] == 0.0
