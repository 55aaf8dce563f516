"""``select`` (docs/algorithms.md §5; JMLR 2003, Brank et al.).

Weka's Ranker is the oracle for ranking by presence information gain: the
``ig_binarized`` column of ``weka_scores_grain_wc.tsv`` holds Weka 3.6's own scores for
grain_wc, and, when Java is there, Weka's AttributeSelection filter is run itself.
"""

from __future__ import annotations

import csv
import subprocess

import numpy as np
import pytest

from chain_helpers import FIXTURE_PLUGINS, JAVA, JAVA_OPTIONS, REAL, WEKA_JAR, needs_weka, read_bytes, without_comments
from filterkit.arff import read_arff
from filterkit.model import model_arrays

GRAIN = REAL / "grain_wc.arff"
OH0 = REAL / "oh0.wc.arff"


def weka_ig_ranking() -> list[tuple[str, float, int]]:
    """(word, Weka's presence IG, 1-based position) for every word, best first, ties by position."""
    with open(REAL / "weka_scores_grain_wc.tsv", newline="") as handle:
        rows = [(r["name"], float(r["ig_binarized"]), int(r["index1"])) for r in csv.DictReader(handle, delimiter="\t")]
    return sorted(rows, key=lambda row: (-row[1], row[2]))


def kept_names(arff: bytes) -> list[str]:
    """The attribute names of an ARFF output, in order."""
    schema, _ = read_bytes(arff)
    return [a.name for a in schema.attributes]


def select_scores(model_path) -> np.ndarray:
    """The ranking scores that the model's first select stage recorded."""
    arrays = model_arrays(model_path)
    return arrays[next(key for key in arrays if key.endswith(".scores"))]


@pytest.mark.slow
@pytest.mark.parametrize("top", [100, 99, 3])
@pytest.mark.parametrize(
    "chain",
    [
        ["ig", "--presence", "select"],
        ["ig", "--presence", "--no-scale", "select"],
        ["select", "--metric", "ig", "--presence"],
    ],
    ids=["after-scorer", "after-no-scale-scorer", "by-metric"],
)
def test_ig_selection_keeps_the_words_weka_ranks_best(run_filterkit, chain, top):
    ranking = weka_ig_ranking()
    if top == 100:
        assert ranking[99][1] == ranking[100][1], "100 must cut a tie group, to check the tie-break"
    result = run_filterkit("-c", "first", GRAIN, *chain, "--top", top)
    assert result.status == 0, result.stderr
    names = kept_names(result.stdout)
    assert names[0] == "class-att"
    assert set(names[1:]) == {word for word, _, _ in ranking[:top]}
    original = [a.name for a in read_arff(GRAIN)[0].attributes]
    assert names == [n for n in original if n in set(names)], "kept attributes keep their input order"


@needs_weka
def test_weka_attribute_selection_keeps_the_same_words(run_filterkit, tmp_path):
    for top in (100, 99):
        out = tmp_path / f"weka{top}.arff"
        subprocess.run(
            [
                JAVA,
                *JAVA_OPTIONS,
                "-Xmx2g",
                "-cp",
                str(WEKA_JAR),
                "weka.filters.supervised.attribute.AttributeSelection",
                "-E",
                "weka.attributeSelection.InfoGainAttributeEval -B",
                "-S",
                f"weka.attributeSelection.Ranker -N {top}",
                "-c",
                "first",
                "-i",
                str(GRAIN),
                "-o",
                str(out),
            ],
            check=True,
            capture_output=True,
            timeout=300,
        )
        weka_kept = {a.name for a in read_arff(out)[0].attributes}
        ours = run_filterkit("-c", "first", GRAIN, "ig", "--presence", "select", "--top", top)
        assert len(weka_kept) == top + 1
        assert set(kept_names(ours.stdout)) == weka_kept


@pytest.mark.slow
def test_selection_leaves_values_unchanged_and_keeps_rows(run_filterkit):
    result = run_filterkit("-c", "first", GRAIN, "ig", "--no-scale", "select", "--top", 10)
    schema, selected = read_bytes(result.stdout)
    original_schema, original = read_arff(GRAIN)
    columns = [original_schema.index_of(a.name) for a in schema.attributes]
    assert selected.is_sparse
    np.testing.assert_array_equal(selected.dense_values(), original.dense_values()[:, columns])


@pytest.mark.slow
def test_sparsity_keeps_the_longest_prefix_whose_average_stays_below(run_filterkit, tmp_path):
    _, data = read_arff(OH0)
    presence = (data.values[:, :-1] != 0).toarray()
    rows = presence.shape[0]
    for target in (3.0, 20.0, 51.5):
        model = tmp_path / f"m{target}.json"
        result = run_filterkit("--save-model", model, OH0, "ig", "--presence", "select", "--sparsity", target)
        assert result.status == 0, result.stderr
        _, selected = read_bytes(result.stdout)
        average = (selected.dense_values()[:, :-1] != 0).sum() / rows
        assert average <= target
        scores = model_arrays(model)["0.scores"]
        order = np.lexsort((np.arange(len(scores)), -scores))
        kept = selected.values.shape[1] - 1
        assert kept < len(order)
        assert (presence[:, order[:kept]].sum() / rows) == pytest.approx(average)
        next_average = presence[:, order[: kept + 1]].sum() / rows
        assert next_average > target, "maximal: the next-ranked feature would exceed the target"


def test_fraction_rounds_up_and_keeps_at_least_one(run_filterkit):
    for fraction, expected in ((0.5, 2), (0.51, 3), (0.001, 1), (1.0, 4)):
        result = run_filterkit(REAL / "iris.arff", "select", "--metric", "ig", "--fraction", fraction)
        assert result.status == 0, result.stderr
        assert len(kept_names(result.stdout)) == expected + 1


def test_min_score_keeps_exactly_the_features_at_or_above(run_filterkit, tmp_path):
    model = tmp_path / "m.json"
    run_filterkit("--save-model", model, OH0, "select", "--metric", "bns", "--presence", "--top", 1)
    scores = select_scores(model)
    names = [a.name for a in read_arff(OH0)[0].attributes][:-1]
    threshold = float(np.sort(scores)[-40])
    result = run_filterkit(OH0, "select", "--metric", "bns", "--presence", "--min-score", threshold)
    assert kept_names(result.stdout)[:-1] == [n for n, s in zip(names, scores) if s >= threshold]
    assert len(kept_names(result.stdout)) - 1 >= 40


def test_class_and_non_numeric_attributes_are_kept_in_place(run_filterkit):
    schema, _ = read_arff(REAL / "credit-g.arff")
    result = run_filterkit(REAL / "credit-g.arff", "select", "--metric", "ig", "--numeric-only", "--top", 2)
    assert result.status == 0, result.stderr
    names = kept_names(result.stdout)
    numeric = [a.name for a in schema.attributes[:-1] if a.is_numeric]
    non_numeric = [a.name for a in schema.attributes if not a.is_numeric]
    assert [n for n in names if n in non_numeric] == non_numeric
    assert len([n for n in names if n in numeric]) == 2
    assert names == [a.name for a in schema.attributes if a.name in set(names)]


STRINGS = """@relation strings
@attribute a numeric
@attribute note string
@attribute b numeric
@attribute c numeric
@attribute when date "yyyy-MM-dd"
@attribute class {n,p}
@data
0,'first row',5,1,2020-01-02,n
1,'second, row',0,1,?,p
1,third,6,1,2021-03-04,p
0,'',0,1,2022-05-06,n
"""


def test_text_and_dates_stay_with_their_rows_when_columns_are_dropped(run_filterkit, tmp_path):
    path = tmp_path / "strings.arff"
    path.write_text(STRINGS)
    result = run_filterkit(path, "select", "--metric", "acc2", "--presence", "--top", 1)
    assert result.status == 0, result.stderr
    schema, chunk = read_bytes(result.stdout)
    assert [a.name for a in schema.attributes] == ["a", "note", "when", "class"]
    assert chunk.text[1] == ["first row", "second, row", "third", ""]
    np.testing.assert_array_equal(chunk.values[:, 0], [0, 1, 1, 0])
    assert np.isnan(chunk.values[1, 2]) and chunk.values[0, 2] == 1577923200000.0


def test_select_after_select_ranks_by_the_first_ones_scores(run_filterkit):
    twice = run_filterkit(OH0, "select", "--metric", "chi", "--top", 50, "select", "--top", 5)
    once = run_filterkit(OH0, "select", "--metric", "chi", "--top", 5)
    assert twice.status == 0, twice.stderr
    assert kept_names(twice.stdout) == kept_names(once.stdout)


def test_a_plugins_metric_ranks_too(run_filterkit):
    plugins = FIXTURE_PLUGINS / "metric"
    schema, data = read_arff(OH0)
    classes = data.dense_values()[:, -1]
    positive = schema.attributes[-1].labels.index("Ethics")
    present = (data.values[:, :-1] != 0).toarray()
    rate = present[classes == positive].sum(axis=0) / np.count_nonzero(classes == positive)
    best = np.lexsort((np.arange(len(rate)), -rate))[:5]
    expected = [schema.attributes[i].name for i in sorted(best)] + ["class"]
    for chain in (["select", "--metric", "tpr", "--presence"], ["tpr", "--presence", "--no-scale", "select"]):
        result = run_filterkit("--positive", "Ethics", OH0, *chain, "--top", 5, plugins_dir=plugins)
        assert result.status == 0, result.stderr
        assert kept_names(result.stdout) == expected


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["select", "--top", "5"], "ig --no-scale select --top 100"),
        (["l2", "select", "--top", "5"], "give --metric NAME"),
        (["select", "--metric", "ig"], "exactly one of --top, --fraction, --min-score, --sparsity"),
        (["select", "--metric", "ig", "--top", "3", "--sparsity", "4"], "found --top, --sparsity"),
        (["select", "--metric", "nosuch", "--top", "3"], "nosuch"),
        (["select", "--metric", "ig", "--fraction", "1.5"], "--fraction"),
        (["select", "--metric", "ig", "--top", "0"], "--top"),
    ],
)
def test_a_chain_select_cannot_run_says_how_to_fix_it(run_filterkit, arguments, message):
    result = run_filterkit(REAL / "iris.arff", *arguments)
    assert result.status in (1, 2)
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == b""


def planted(tmp_path, rows=400, seed=1):
    """Twenty count features; f7 is the only one tied to the class."""
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 3, (rows, 20)).astype(float)
    positive = rng.random(rows) < 0.3
    values[:, 7] = np.where(positive, rng.integers(1, 4, rows), 0) + (rng.random(rows) < 0.1)
    lines = ["@relation planted"] + [f"@attribute f{j} numeric" for j in range(20)]
    lines += ["@attribute class {no,yes}", "@data"]
    lines += [",".join(str(int(v)) for v in row) + ("," + ("yes" if p else "no")) for row, p in zip(values, positive)]
    path = tmp_path / "planted.arff"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_svm_ranks_the_planted_feature_first(run_filterkit, tmp_path):
    path = planted(tmp_path)
    for sample in ("1.0", "0.3"):
        result = run_filterkit(path, "select", "--metric", "svm", "--sample", sample, "--top", 1)
        assert result.status == 0, result.stderr
        assert kept_names(result.stdout) == ["f7", "class"]


def test_svm_is_reproducible_under_a_seed_and_the_seed_draws_the_sample(run_filterkit, tmp_path):
    path = planted(tmp_path)

    def scores(seed, chunk_rows="10000"):
        model = tmp_path / f"m{seed}-{chunk_rows}.json"
        result = run_filterkit(
            "--save-model",
            model,
            "--chunk-rows",
            chunk_rows,
            path,
            "select",
            "--metric",
            "svm",
            "--sample",
            "0.5",
            "--seed",
            seed,
            "--top",
            5,
        )
        assert result.status == 0, result.stderr
        return select_scores(model), result.stdout

    first, output = scores(3)
    again, output_again = scores(3)
    np.testing.assert_array_equal(first, again)
    assert output == output_again
    chunked, _ = scores(3, chunk_rows="7")
    np.testing.assert_array_equal(first, chunked)
    other, _ = scores(4)
    assert not np.array_equal(first, other), "another seed draws another sample"


def test_svm_weights_are_liblinears_on_the_whole_data(run_filterkit, tmp_path):
    from sklearn.svm import LinearSVC

    path = planted(tmp_path)
    model = tmp_path / "m.json"
    run_filterkit("--save-model", model, path, "select", "--metric", "svm", "--C", "0.5", "--top", 3)
    schema, data = read_arff(path)
    values = data.dense_values()
    y = (values[:, -1] == schema.attributes[-1].labels.index("yes")).astype(int)
    expected = LinearSVC(C=0.5, dual=True, random_state=0, max_iter=10000).fit(values[:, :-1], y)
    np.testing.assert_allclose(select_scores(model), np.abs(expected.coef_.ravel()), rtol=1e-6, atol=1e-9)


@pytest.mark.slow
@pytest.mark.parametrize(
    "chain",
    [
        ["ig", "--presence", "select", "--top", "30"],
        ["select", "--metric", "bns", "--sparsity", "10"],
        ["bns", "select", "--fraction", "0.01", "l2"],
        ["select", "--metric", "svm", "--sample", "0.5", "--top", "20"],
    ],
)
def test_a_saved_model_reproduces_the_training_output(run_filterkit, tmp_path, chain):
    model = tmp_path / "m.json"
    trained = run_filterkit("--save-model", model, OH0, *chain)
    assert trained.status == 0, trained.stderr
    applied = run_filterkit("apply", model, OH0)
    assert applied.status == 0, applied.stderr
    assert without_comments(applied.stdout) == without_comments(trained.stdout)
    assert len(kept_names(trained.stdout)) < len(read_arff(OH0)[0].attributes)


@pytest.mark.slow
def test_chunk_size_and_row_order_do_not_change_the_selection(run_filterkit, tmp_path):
    text = OH0.read_text()
    header, data = text.split("@DATA\n", 1)
    rows = data.strip("\n").split("\n")
    shuffled = tmp_path / "shuffled.arff"
    shuffled.write_text(header + "@DATA\n" + "\n".join(rows[::-1]) + "\n")
    chain = ["select", "--metric", "bns", "--top", "25"]
    names = {kept_names(run_filterkit("--chunk-rows", n, OH0, *chain).stdout).__repr__() for n in ("1", "7", "10000")}
    names.add(repr(kept_names(run_filterkit(shuffled, *chain).stdout)))
    assert len(names) == 1


@pytest.mark.parametrize(
    "chain, warned",
    [
        (("select", "--metric", "ig", "--C", 5, "--seed", 3), ["--C, --seed: only --metric svm reads them"]),
        (
            ("ig", "select", "--presence", "--sample", 0.5),
            ["--sample: only --metric svm reads it", "--presence: only a"],
        ),
        (("select", "--metric", "svm", "--C", 2, "--seed", 1, "--sample", 0.5), []),
        (("select", "--metric", "svm", "--presence", "--numeric-only"), ["--presence, --numeric-only: --metric svm"]),
        (("select", "--metric", "ig", "--per-class", "--combine", "mean"), ["--combine: --per-class and --per-label"]),
        (("select", "--metric", "bns", "--presence", "--combine", "mean"), []),
    ],
)
def test_options_this_metric_does_not_read_are_warned_of_and_change_nothing(run_filterkit, chain, warned):
    """--C, --sample and --seed are svm's; --presence, --combine and --numeric-only a metric's (not svm's, and
    --combine not --per-class's): given where nothing reads them, the fit warns of them (a saved model may hold them,
    so they are not refused) and keeps the words it keeps without them."""
    result = run_filterkit(OH0, *chain, "--top", 5)
    assert result.status == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.endswith("; ignored here")]
    assert len(lines) == len(warned) and all(text in line for text, line in zip(warned, lines))
    given = ("--C", 5, "--seed", 3, "--sample", 0.5, "--presence", "--numeric-only", "--combine", "mean")
    plain = [word for word in chain if word not in given]
    if warned:
        assert without_comments(result.stdout) == without_comments(run_filterkit(OH0, *plain, "--top", 5).stdout)


def test_a_sample_of_0_without_the_svm_is_ignored_with_a_warning_as_before(run_filterkit):
    # refusing --sample 0 (which only the svm reads) for every metric had refused models saved with it
    result = run_filterkit(OH0, "ig", "select", "--top", "5", "--sample", "0")
    assert result.status == 0 and "--sample" in result.stderr and "ignored here" in result.stderr
    refused = run_filterkit("--positive", "Ethics", OH0, "select", "--metric", "svm", "--top", "5", "--sample", "0")
    assert refused.status == 2 and "option --sample: 0.0 is not in (0, 1]" in refused.stderr
