"""Nominal attributes are scored and selected (issue 16, item 2).

IG and χ² score a nominal attribute over its values (Weka's table, checked against Weka in
test_multiclass.py); the two-class metrics score each value's presence (rows with that value vs
rows without, over the rows where the attribute is known), and the best value counts.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from chain_helpers import REAL, read_bytes
from filterkit.arff import read_arff
from filterkit.plugins import load_plugins
from filterkit.schema import NOMINAL, Attribute, Chunk

CREDIT = REAL / "credit-g.arff"


def ranking(run_filterkit, *args) -> dict:
    result = run_filterkit("info", "--top", 1000, "--json", *args)
    assert result.status == 0, result.stderr
    return json.loads(result.stdout)["ranking"]


def scores_of(ranking_document: dict) -> dict[str, float]:
    return {feature["name"]: feature["score"] for feature in ranking_document["features"]}


def test_info_lists_nominal_attributes_and_numeric_only_keeps_them_out(run_filterkit):
    schema, _ = read_arff(CREDIT)
    everything = ranking(run_filterkit, "--metric", "chi", CREDIT)
    assert everything["scored_features"] == 20 and everything["nominal_features"] == 13
    kinds = {feature["name"]: feature["kind"] for feature in everything["features"]}
    assert kinds == {a.name: a.kind for a in schema.attributes[:-1]}
    numeric = ranking(run_filterkit, "--metric", "chi", "--numeric-only", CREDIT)
    assert numeric["scored_features"] == 7 and numeric["nominal_features"] == 0
    assert {f["name"] for f in numeric["features"]} == {a.name for a in schema.attributes[:-1] if a.is_numeric}


@pytest.mark.parametrize("metric", ["bns", "odds", "acc2", "f1"])
def test_a_two_class_metric_scores_a_nominal_attribute_by_its_best_value(run_filterkit, metric):
    schema, data = read_arff(CREDIT)
    values = data.dense_values()
    bad = values[:, -1] == schema.attributes[-1].labels.index("bad")  # the minority class, positive by default
    function = load_plugins().metric(metric)
    from filterkit.metrics import metric_scores

    expected = {}
    for position, attribute in enumerate(schema.attributes[:-1]):
        if attribute.is_numeric:
            continue
        codes = values[:, position]
        per_value = [
            metric_scores(
                function,
                float(np.sum((codes == code) & bad)),
                float(np.sum((codes == code) & ~bad)),
                float(bad.sum()),
                float((~bad).sum()),
            )
            for code in range(len(attribute.labels))
        ]
        expected[attribute.name] = float(np.max(per_value))
    ours = scores_of(ranking(run_filterkit, "--metric", metric, CREDIT))
    assert {name: ours[name] for name in expected} == pytest.approx(expected, rel=1e-12)
    assert expected["checking_status"] > 0


def test_one_vs_rest_ig_of_a_nominal_attribute_on_two_classes_is_wekas_table(run_filterkit):
    # on two classes the one-vs-rest table (values × {bad, rest}) is Weka's (values × {good, bad})
    joint = scores_of(ranking(run_filterkit, "--metric", "ig", "--combine", "joint", CREDIT))
    one_vs_rest = scores_of(ranking(run_filterkit, "--metric", "ig", CREDIT))
    schema, _ = read_arff(CREDIT)
    for attribute in schema.attributes[:-1]:
        if attribute.kind == "nominal":
            assert one_vs_rest[attribute.name] == pytest.approx(joint[attribute.name], rel=1e-12)
    assert joint["checking_status"] == pytest.approx(0.094739, abs=5e-7)  # Weka 3.6's InfoGainAttributeEval


def test_select_ranks_nominal_with_numeric_and_drops_the_unselected(run_filterkit):
    document = ranking(run_filterkit, "--metric", "chi", CREDIT)
    best = [f["name"] for f in document["features"][:5]]
    assert {f["kind"] for f in document["features"][:5]} == {"nominal", "numeric"}
    result = run_filterkit(CREDIT, "select", "--metric", "chi", "--top", 5)
    assert result.status == 0, result.stderr
    schema, data = read_bytes(result.stdout)
    original, original_data = read_arff(CREDIT)
    kept = [a.name for a in schema.attributes]
    assert kept == [a.name for a in original.attributes if a.name in set(best) | {"class"}]
    for position, name in enumerate(kept):
        np.testing.assert_array_equal(
            data.dense_values()[:, position], original_data.dense_values()[:, original.index_of(name)]
        )
    assert schema.attributes[kept.index("checking_status")].labels == original.attributes[0].labels


def test_numeric_only_keeps_todays_selection(run_filterkit):
    result = run_filterkit(CREDIT, "select", "--metric", "chi", "--numeric-only", "--top", 2)
    assert result.status == 0, result.stderr
    schema, _ = read_bytes(result.stdout)
    original, _ = read_arff(CREDIT)
    nominal = [a.name for a in original.attributes if a.kind == "nominal"]
    names = [a.name for a in schema.attributes]
    assert [n for n in names if n in nominal] == nominal
    assert len(names) == len(nominal) + 2


def test_a_selection_of_nominal_attributes_saves_and_applies(run_filterkit, tmp_path):
    model = tmp_path / "model.json"
    fitted = run_filterkit("--save-model", model, CREDIT, "select", "--metric", "ig", "--fraction", 0.25)
    assert fitted.status == 0, fitted.stderr
    applied = run_filterkit("apply", model, CREDIT)
    assert applied.status == 0, applied.stderr
    assert applied.stdout.splitlines()[1:] == fitted.stdout.splitlines()[1:]
    schema, _ = read_bytes(applied.stdout)
    assert len(schema.attributes) == 5 + 1


def test_nominal_scores_cost_the_classes_with_rows_not_the_declared_labels():
    """A sibling of issue 47 item 3: the nominal features' class tables were (features × labels × declared
    classes); a class declared but never seen now costs nothing, and changes no score."""
    import tracemalloc

    from filterkit.metrics import feature_scores, target_classes
    from filterkit.statistics import ValueCounts

    rng = np.random.default_rng(5)
    values = np.column_stack([rng.integers(0, 40, (300, 20)), rng.integers(0, 2, 300)]).astype(np.float64)
    chunk = Chunk(values)
    metric = load_plugins().metrics["chi"].value
    labels = np.full(20, 40)

    def scores(n_classes: int) -> np.ndarray:
        counts = ValueCounts.empty(20, n_classes).add(chunk, np.arange(20), 20)
        class_attribute = Attribute("class", NOMINAL, labels=tuple(f"c{k}" for k in range(n_classes)))
        targets = target_classes(class_attribute, counts.class_totals, None)
        return feature_scores(counts, metric, targets, False, labels=labels)

    two = scores(2)
    tracemalloc.start()
    try:
        many = scores(20_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert np.array_equal(many, two)
    assert peak < 20_000_000  # 20 features x 40 labels x 20,000 classes of float64 took 128 MB
