"""Fayyad & Irani's MDL cut points (filterkit.discretization) against Weka 3.6's own."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from chain_helpers import REAL, UCI_SETS, needs_weka, run_weka_filters
from filterkit.arff import read_arff
from filterkit.discretization import mdl_cut_points, weka_decimal
from filterkit.schema import NUMERIC


def _dense_table(path: Path, class_option: str):
    schema, chunk = read_arff(str(path))
    values = chunk.values.toarray() if hasattr(chunk.values, "toarray") else np.asarray(chunk.values)
    class_index = 0 if class_option == "first" else len(schema.attributes) - 1
    return schema, values, class_index


def _filterkit_ranges(path: Path, class_option: str, better_encoding: bool = False) -> dict[str, list[str]]:
    """Per numeric attribute, the range labels the cut points of :func:`mdl_cut_points` give."""
    schema, values, class_index = _dense_table(path, class_option)
    n_classes = len(schema.attributes[class_index].labels)
    ranges = {}
    for position, attribute in enumerate(schema.attributes):
        if attribute.kind != NUMERIC or position == class_index:
            continue
        known = ~np.isnan(values[:, position]) & ~np.isnan(values[:, class_index])
        column, labels = values[known, position], values[known, class_index].astype(int)
        distinct, where = np.unique(column, return_inverse=True)
        counts = np.zeros((len(distinct), n_classes))
        np.add.at(counts, (where.ravel(), labels), 1.0)
        cuts = mdl_cut_points(distinct, counts, better_encoding=better_encoding)
        ranges[attribute.name] = _range_labels(cuts)
    return ranges


def _range_labels(cuts: np.ndarray) -> list[str]:
    if not len(cuts):
        return ["'All'"]
    bounds = ["-inf", *(weka_decimal(cut) for cut in cuts), "inf"]
    return [
        f"'({low}-{high}{')' if high == 'inf' else ']'}'" for low, high in zip(bounds[:-1], bounds[1:], strict=True)
    ]


@pytest.fixture(scope="session")
def weka_mdl_headers(tmp_path_factory) -> dict[tuple[str, bool], dict[str, list[str]]]:
    """Weka's range labels per (data set, better encoding), every run in one JVM."""
    folder = tmp_path_factory.mktemp("weka_mdl")
    outputs, runs = {}, []
    for name, class_option in UCI_SETS.items():
        for better_encoding in (False, True):
            out = folder / f"{name}{'-E' if better_encoding else ''}.arff"
            options = ["-E"] if better_encoding else []
            runs.append(["weka.filters.supervised.attribute.Discretize", *options])
            runs[-1] += ["-i", str(REAL / f"{name}.arff"), "-c", class_option, "-o", str(out)]
            outputs[name, better_encoding] = out
    run_weka_filters(folder, runs)
    headers = {}
    for key, out in outputs.items():
        schema, _ = read_arff(str(out))
        headers[key] = {attribute.name: list(attribute.labels) for attribute in schema.attributes}
    return headers


@needs_weka
@pytest.mark.parametrize("better_encoding", [False, True], ids=["default", "better-encoding"])
@pytest.mark.parametrize("name", sorted(UCI_SETS))
def test_mdl_cut_points_equal_wekas_on_uci_sets(weka_mdl_headers, name, better_encoding):
    ours = _filterkit_ranges(REAL / f"{name}.arff", UCI_SETS[name], better_encoding)
    theirs = weka_mdl_headers[name, better_encoding]
    assert ours
    assert {attribute: theirs[attribute] for attribute in ours} == ours


def test_two_pure_classes_split_at_the_midpoint():
    values = np.arange(10.0)
    counts = np.zeros((10, 2))
    counts[:5, 0] = counts[5:, 1] = 1
    assert mdl_cut_points(values, counts).tolist() == [4.5]


def test_a_split_below_the_mdl_threshold_is_refused():
    values = np.arange(4.0)
    counts = np.array([[1, 0], [0, 1], [1, 0], [0, 1]], dtype=float)
    # best split 0 | 1 2 3: gain 0.311 bits, threshold (log2(3) + log2(7) − (2 − 2·0.918)) / 4 = 1.057
    assert mdl_cut_points(values, counts).tolist() == []


def test_better_encoding_counts_boundaries_not_rows():
    values = np.array([0.0, 1.0])
    counts = np.array([[0.0, 1.0], [6.0, 0.0]])
    # gain H(1/7) = 0.592 bits; Δ = log2(7) − 2·0.592 = 1.624; seven rows give
    # (log2(6) + Δ) / 7 = 0.601 (refused), one boundary gives (log2(1) + Δ) / 7 = 0.232
    assert mdl_cut_points(values, counts).tolist() == []
    assert mdl_cut_points(values, counts, better_encoding=True).tolist() == [0.5]
    assert mdl_cut_points(values, counts, row_counts=np.array([1.0, 1.0])).tolist() == [0.5]


def test_first_boundary_wins_a_tie_in_entropy():
    values = np.arange(4.0)
    counts = np.array([[9, 0], [0, 9], [9, 0], [0, 9]], dtype=float) * 10
    cuts = mdl_cut_points(values, counts)
    assert cuts.tolist() == [0.5, 1.5, 2.5]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (2.45, "2.45"),
        (5.55, "5.55"),
        (100.0, "100"),
        (-3.25, "-3.25"),
        (0.1234565, "0.123457"),
        (1234567.1234567, "1234567.123457"),
        (-4e-7, "0"),
        (-6e-7, "-0.000001"),
        (1e13, "1.0E13"),
        (1.5e20, "1.5E20"),
    ],
)
def test_weka_decimal_prints_as_weka_utils_double_to_string(value, text):
    assert weka_decimal(value) == text


@pytest.mark.parametrize("values", [[], [2.5]], ids=["no value", "one value"])
def test_a_feature_with_fewer_than_two_values_has_no_cut_point(values):
    assert mdl_cut_points(np.array(values), np.zeros((len(values), 3))).tolist() == []
