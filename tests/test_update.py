"""``filterkit update`` and ``partial_fit`` (issue 49, item 5): a model saved ``--updatable`` keeps the statistics
it was fitted from, and more rows merged into them give, byte for byte, the model (and the output) a fit on
all the rows gives; a chain whose old rows would look different downstream after the refit is refused,
naming the stage."""

from __future__ import annotations

import base64
import csv
import json
from pathlib import Path

import numpy as np
import pytest

from chain_helpers import OH0_SAMPLE, TESTS, without_comments
from filterkit.word_statistics import PAIR_ARRAYS

READS = TESTS.parent / "arff_samples" / "reuters_grain.csv"


#: One row a chunk (slow: a run per row), seven, and the whole file.
CHUNK_ROWS = [pytest.param("1", marks=pytest.mark.slow), "7", "100000"]


def split_arff(source: Path, folder: Path, first: int) -> tuple[Path, Path, Path]:
    """``source``'s first ``first`` rows (A), the rest (B) and all of them (AB), as ARFF files of its header."""
    text = source.read_text()
    header, data = text.split("@data\n", 1)
    rows = [line for line in data.splitlines() if line.strip()]
    paths = []
    for name, part in (("A", rows[:first]), ("B", rows[first:]), ("AB", rows)):
        path = folder / f"{name}.arff"
        path.write_text(header + "@data\n" + "".join(row + "\n" for row in part))
        paths.append(path)
    return paths[0], paths[1], paths[2]


def reuters_documents(folder: Path) -> Path:
    """The 60 Reuters grain documents of ``arff_samples/`` as an ARFF file of a text attribute and the class."""
    with READS.open(newline="") as stream:
        rows = list(csv.reader(stream))[1:]

    def quoted(text: str) -> str:
        escaped = text.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n").replace("\r", "\\r")
        return f"'{escaped}'"

    path = folder / "grain.arff"
    header = "@relation grain\n@attribute Text string\n@attribute class-att {0,1}\n@data\n"
    path.write_text(header + "".join(f"{quoted(text)},{label}\n" for text, label in rows))
    return path


def fitted(run_filterkit, model: Path, data: Path, chain: list[str], *options) -> None:
    result = run_filterkit(
        "-q", "--save-model", model, "--updatable", *options, "-o", model.with_suffix(".out"), data, *chain
    )
    assert result.status == 0, result.stderr


OH0_CHAINS = {
    "shape bns l2": (["--positive", "Ethics"], ["shape", "bns", "l2"]),
    "select by ig": ([], ["select", "--metric", "ig", "--top", "50", "l2"]),
    "minmax": ([], ["minmax"]),
}


@pytest.mark.parametrize("chunk_rows", CHUNK_ROWS)
@pytest.mark.parametrize("name", sorted(OH0_CHAINS))
def test_an_updated_model_is_the_model_fitted_on_all_the_rows(run_filterkit, tmp_path, name, chunk_rows):
    options, chain = OH0_CHAINS[name]
    first, more, both = split_arff(OH0_SAMPLE, tmp_path, 37)
    fitted(run_filterkit, tmp_path / "first.json", first, chain, *options, "--chunk-rows", chunk_rows)
    fitted(run_filterkit, tmp_path / "both.json", both, chain, *options)
    result = run_filterkit(
        "update", "-q", "--chunk-rows", chunk_rows, tmp_path / "first.json", more, "-o", tmp_path / "updated.json"
    )
    assert result.status == 0, result.stderr
    assert (tmp_path / "updated.json").read_bytes() == (tmp_path / "both.json").read_bytes()
    outputs = [run_filterkit("apply", tmp_path / f"{model}.json", more).stdout for model in ("updated", "both")]
    assert outputs[0] and without_comments(outputs[0]) == without_comments(outputs[1])


def missing_values(folder: Path) -> Path:
    """50 rows with missing values, a string attribute, and an attribute constant in the first 30 rows."""
    generator = np.random.default_rng(13)
    header = (
        "@relation gaps\n@attribute a numeric\n@attribute b {x,y,z}\n@attribute s string\n"
        "@attribute c numeric\n@attribute class {p,n}\n@data\n"
    )
    rows = []
    for i in range(50):
        a = "?" if generator.random() < 0.2 else f"{generator.normal(0, 3):.2f}"
        b = "?" if generator.random() < 0.2 else "xyz"[generator.integers(3)]
        c = 5 if i < 30 else generator.integers(10)
        rows.append(f"{a},{b},'t{generator.integers(3)}',{c},{'pn'[generator.integers(2)]}\n")
    path = folder / "gaps.arff"
    path.write_text(header + "".join(rows))
    return path


@pytest.mark.parametrize("chain", [["replace-missing"], ["remove-useless"], ["ordinal"], ["discretize"]])
def test_stages_keeping_statistics_of_their_own_kind_update_to_the_refit(run_filterkit, tmp_path, chain):
    first, more, both = split_arff(missing_values(tmp_path), tmp_path, 30)
    fitted(run_filterkit, tmp_path / "first.json", first, chain, "--chunk-rows", "7")
    fitted(run_filterkit, tmp_path / "both.json", both, chain)
    result = run_filterkit("update", "-q", tmp_path / "first.json", more, "-o", tmp_path / "updated.json")
    assert result.status == 0, result.stderr
    assert (tmp_path / "updated.json").read_bytes() == (tmp_path / "both.json").read_bytes()
    assert (tmp_path / "first.json").read_bytes() != (tmp_path / "both.json").read_bytes()


WORD_CHAINS = {
    "shape bns l2": ["shape", "bns", "l2"],
    "select by ig": ["select", "--metric", "ig", "--top", "50", "l2"],
}


@pytest.mark.parametrize("chunk_rows", CHUNK_ROWS)
@pytest.mark.parametrize("after_words", sorted(WORD_CHAINS))
def test_an_updated_word_chain_is_the_chain_fitted_on_all_the_documents(
    run_filterkit, tmp_path, chunk_rows, after_words
):
    first, more, both = split_arff(reuters_documents(tmp_path), tmp_path, 40)
    chain = ["words", "--lowercase", "--counts", "--words-to-keep", "1000000", *WORD_CHAINS[after_words]]
    fitted(run_filterkit, tmp_path / "first.json", first, chain, "--chunk-rows", chunk_rows)
    fitted(run_filterkit, tmp_path / "both.json", both, chain)
    result = run_filterkit(
        "update", "-q", "--chunk-rows", chunk_rows, tmp_path / "first.json", more, "-o", tmp_path / "updated.json"
    )
    assert result.status == 0, result.stderr
    updated, refitted = (json.loads((tmp_path / f"{name}.json").read_text()) for name in ("updated", "both"))
    first_words = json.loads((tmp_path / "first.json").read_text())["stages"][0]["state"]["words"]
    assert len(updated["stages"][0]["state"]["words"]) > len(first_words)  # the new documents brought words
    assert (tmp_path / "updated.json").read_bytes() == (tmp_path / "both.json").read_bytes()
    outputs = [run_filterkit("apply", tmp_path / f"{model}.json", more).stdout for model in ("updated", "both")]
    assert outputs[0] and without_comments(outputs[0]) == without_comments(outputs[1])
    assert updated == refitted


def test_a_word_kept_only_now_that_old_documents_hold_is_refused_naming_it(run_filterkit, tmp_path):
    first, more, _ = split_arff(reuters_documents(tmp_path), tmp_path, 40)
    fitted(
        run_filterkit,
        tmp_path / "first.json",
        first,
        ["words", "--lowercase", "--words-to-keep", "50", "shape", "bns", "l2"],
    )
    result = run_filterkit("update", "-q", tmp_path / "first.json", more, "-o", tmp_path / "updated.json")
    assert result.status == 1 and not (tmp_path / "updated.json").exists()
    assert result.stderr.startswith(
        f"filterkit: error: {tmp_path / 'first.json'}: stage 2 'shape' cannot be updated exactly: stage 1 'words' "
        "now writes '"
    )
    assert "which the old rows may hold but stage 2 never counted in them" in result.stderr
    assert len(result.stderr.splitlines()) == 1


def labelled_documents(folder: Path, first: int, rows_holding_label_1: tuple[int, ...] = ()) -> tuple[Path, ...]:
    """The Reuters grain documents as a ``text,label`` CSV, every third one holding the word 'label' (and those
    at ``rows_holding_label_1`` the word 'label_1'), split as :func:`split_arff` splits: A, B and AB, each
    ``grain.csv`` in a folder of that name (a CSV's relation is its file's name)."""
    with READS.open(newline="") as stream:
        rows = list(csv.reader(stream))[1:]
    documents = [
        [text + (" label" if k % 3 == 0 else "") + (" label_1" if k in rows_holding_label_1 else ""), label]
        for k, (text, label) in enumerate(rows)
    ]
    paths = []
    for name, part in (("A", documents[:first]), ("B", documents[first:]), ("AB", documents)):
        path = folder / name / "grain.csv"
        path.parent.mkdir()
        with path.open("w", newline="") as stream:
            csv.writer(stream).writerows([["text", "label"], *part])
        paths.append(path)
    return tuple(paths)


def class_named_wheat(folder: Path, first: int) -> tuple[Path, ...]:
    """The Reuters grain documents as ARFF whose class attribute is named 'wheat', a word many of them hold."""
    path = reuters_documents(folder)
    path.write_text(path.read_text().replace("@attribute class-att ", "@attribute wheat "))
    return split_arff(path, folder, first)


@pytest.mark.parametrize(
    "documents, renamed",
    [(labelled_documents, b"label_1"), (class_named_wheat, b"wheat_1")],
    ids=["label column", "class wheat"],
)
def test_a_word_renamed_alike_before_and_after_updates_to_the_refit(run_filterkit, tmp_path, documents, renamed):
    """Issue 72, item 10: a word named like another attribute is renamed ('label' as 'label_1') the same way in
    the old fit and the refit, so the update is exact, as it is with --prefix."""
    first, more, both = documents(tmp_path, 40)
    chain = ["words", "--words-to-keep", "1000000", "shape", "bns", "l2"]
    fitted(run_filterkit, tmp_path / "first.json", first, chain)
    fitted(run_filterkit, tmp_path / "both.json", both, chain)
    result = run_filterkit("update", "-q", tmp_path / "first.json", more, "-o", tmp_path / "updated.json")
    assert result.status == 0, result.stderr
    assert (tmp_path / "updated.json").read_bytes() == (tmp_path / "both.json").read_bytes()
    outputs = [run_filterkit("apply", tmp_path / f"{model}.json", more).stdout for model in ("updated", "both")]
    assert b"\n@attribute " + renamed + b" numeric\n" in outputs[0]
    assert without_comments(outputs[0]) == without_comments(outputs[1])


def test_a_word_renamed_otherwise_after_the_update_is_refused_naming_the_rename(run_filterkit, tmp_path):
    """The new rows hold the word 'label_1': 'label' is then renamed 'label_2', so the old rows' 'label_1' was
    another word; the refusal says so, not that shape's refit changes anything."""
    first, more, _ = labelled_documents(tmp_path, 40, rows_holding_label_1=(45, 50))
    fitted(run_filterkit, tmp_path / "first.json", first, ["words", "--words-to-keep", "1000000", "shape", "bns"])
    result = run_filterkit("update", "-q", tmp_path / "first.json", more, "-o", tmp_path / "updated.json")
    assert result.status == 1 and not (tmp_path / "updated.json").exists()
    assert result.stderr == (
        f"filterkit: error: {tmp_path / 'first.json'}: "
        "stage 2 'shape' cannot be updated exactly: it learned from what stage 1 'words' wrote "
        "for the old rows, and stage 1 names the word 'label' 'label_2' now, where it named it 'label_1'; the old "
        "rows are not in the model: refit the chain on all the rows\n"
    )


@pytest.mark.parametrize(
    "chain, refused",
    [
        (
            ["words", "--idf", "--words-to-keep", "1000000", "shape", "bns"],
            "stage 2 'shape' cannot be updated exactly: it learned from what stage 1 'words' wrote",
        ),
        (
            ["words", "--words-to-keep", "1000000", "l2", "shape"],
            "stage 3 'shape' cannot be updated exactly: it learned from what stage 2 'l2' wrote for the old rows, "
            "and stage 2 writes each value from a whole row, whose attributes the update changes;",
        ),
        (
            ["words", "--words-to-keep", "1000000", "minmax"],
            "stage 2 'minmax' cannot be updated: the attributes before it change, and its statistics cannot follow",
        ),
    ],
)
def test_a_stage_learning_from_values_the_update_changes_is_refused(run_filterkit, tmp_path, chain, refused):
    first, more, _ = split_arff(reuters_documents(tmp_path), tmp_path, 40)
    fitted(run_filterkit, tmp_path / "first.json", first, chain)
    result = run_filterkit("update", "-q", tmp_path / "first.json", more, "-o", tmp_path / "updated.json")
    assert result.status == 1 and not (tmp_path / "updated.json").exists()
    assert result.stderr.startswith(f"filterkit: error: {tmp_path / 'first.json'}: {refused}")
    assert result.stderr.endswith("refit the chain on all the rows\n") and len(result.stderr.splitlines()) == 1


def test_an_attribute_kept_only_now_before_a_learning_stage_is_refused(run_filterkit, tmp_path):
    first, more, _ = split_arff(missing_values(tmp_path), tmp_path, 30)
    fitted(run_filterkit, tmp_path / "first.json", first, ["remove-useless", "select", "--metric", "ig", "--top", "2"])
    result = run_filterkit("update", "-q", tmp_path / "first.json", more, "-o", tmp_path / "updated.json")
    assert result.stderr == (
        f"filterkit: error: {tmp_path / 'first.json'}: "
        "stage 2 'select' cannot be updated exactly: stage 1 'remove-useless' now writes 'c', "
        "which the old rows may hold but stage 2 never counted in them: refit the chain on all the rows\n"
    )


def test_a_scaler_before_a_learning_stage_is_refused(run_filterkit, tmp_path):
    first, more, _ = split_arff(OH0_SAMPLE, tmp_path, 37)
    fitted(run_filterkit, tmp_path / "first.json", first, ["minmax", "select", "--metric", "ig", "--top", "5"])
    result = run_filterkit("update", "-q", tmp_path / "first.json", more, "-o", tmp_path / "updated.json")
    assert result.status == 1
    assert result.stderr == (
        f"filterkit: error: {tmp_path / 'first.json'}: "
        "stage 2 'select' cannot be updated exactly: it learned from what stage 1 'minmax' wrote "
        "for the old rows, and stage 1 writes other values once refitted on more rows; the old rows are not in the "
        "model: refit the chain on all the rows\n"
    )


def test_a_model_saved_without_statistics_says_how_to_save_one(run_filterkit, tmp_path):
    first, more, _ = split_arff(OH0_SAMPLE, tmp_path, 37)
    assert (
        run_filterkit("-q", "--save-model", tmp_path / "m.json", "-o", tmp_path / "out.arff", first, "minmax").status
        == 0
    )
    result = run_filterkit("update", tmp_path / "m.json", more, "-o", tmp_path / "new.json")
    assert result.status == 1 and not (tmp_path / "new.json").exists()
    assert result.stderr == (
        f"filterkit: error: {tmp_path / 'm.json'}: the model holds no statistics to add rows to: save it with "
        "--updatable (filterkit --save-model m.json --updatable IN.arff STAGES...)\n"
    )


def test_rows_of_another_header_are_refused_naming_the_first_difference(run_filterkit, tmp_path):
    first, more, _ = split_arff(OH0_SAMPLE, tmp_path, 37)
    fitted(run_filterkit, tmp_path / "first.json", first, ["minmax"])
    other = tmp_path / "other.arff"
    other.write_text(more.read_text().replace("@attribute", "@attribute", 1).replace("@ATTRIBUTE", "@attribute", 1))
    text = more.read_text()
    name = text.split("@attribute ", 2)[1].split()[0]
    other.write_text(text.replace(f"@attribute {name} ", f"@attribute {name}_renamed ", 1))
    result = run_filterkit("update", tmp_path / "first.json", other, "-o", tmp_path / "new.json")
    assert result.status == 1 and not (tmp_path / "new.json").exists()
    assert result.stderr.startswith(f"filterkit: error: {other}: header differs from the training data: ")
    assert name in result.stderr and len(result.stderr.splitlines()) == 1


def test_rows_of_another_relation_name_or_numeric_type_keep_the_model_s_header(run_filterkit, tmp_path):
    """The model took the new file's relation name and ``real`` for ``integer``: not the fit on all the rows."""
    first = tmp_path / "first.arff"
    first.write_text("@relation r1\n@attribute a integer\n@attribute c {x,y}\n@data\n1,x\n3,y\n2,x\n")
    more = tmp_path / "more.arff"
    more.write_text("@relation other\n@attribute a real\n@attribute c {x,y}\n@data\n4,y\n")
    both = tmp_path / "both.arff"
    both.write_text(first.read_text() + "4,y\n")
    fitted(run_filterkit, tmp_path / "first.json", first, ["minmax"])
    fitted(run_filterkit, tmp_path / "both.json", both, ["minmax"])
    result = run_filterkit("update", tmp_path / "first.json", more, "-o", tmp_path / "new.json")
    assert result.status == 0, result.stderr
    assert (tmp_path / "new.json").read_bytes() == (tmp_path / "both.json").read_bytes()


def test_rows_of_other_labels_are_refused_naming_both_label_sets(run_filterkit, tmp_path):
    """New rows whose relation said ``-C 2`` made a model of three labels one of two, status 0."""
    data = TESTS / "data" / "multilabel" / "three-labels-synthetic.arff"
    first, more, _ = split_arff(data, tmp_path, 150)
    fitted(run_filterkit, tmp_path / "first.json", first, ["words", "--counts", "ig", "--multiply", "l2"])
    for relation, held in (("'ls: -C 2'", "'use::editing', 'b'"), ("ls", "none")):
        other = tmp_path / "other.arff"
        other.write_text(more.read_text().replace("'ls: -C 3'", relation, 1))
        result = run_filterkit("update", tmp_path / "first.json", other, "-o", tmp_path / "new.json")
        assert result.status == 1 and not (tmp_path / "new.json").exists()
        assert result.stderr == (
            f"filterkit: error: {other}: the new rows hold the labels {held}, and the model 'use::editing', 'b', "
            "'rare': add rows of the model's labels (MEKA's -C in the relation name, as in its training data)\n"
        )


@pytest.mark.slow  # train searches C by cross-validation
def test_a_model_holding_a_classifier_points_to_train(run_filterkit, tmp_path):
    first, more, _ = split_arff(OH0_SAMPLE, tmp_path, 37)
    trained = run_filterkit("train", "-q", "-o", tmp_path / "trained.json", "--positive", "Ethics", first, "minmax")
    assert trained.status == 0, trained.stderr
    result = run_filterkit("update", tmp_path / "trained.json", more, "-o", tmp_path / "new.json")
    assert result.status == 1 and not (tmp_path / "new.json").exists()
    assert result.stderr == (
        f"filterkit: error: {tmp_path / 'trained.json'}: the model holds a classifier, which update does not merge: "
        "update a model of the chain alone, then train the classifier again on all the rows (filterkit train)\n"
    )


def test_updatable_needs_save_model(run_filterkit, tmp_path):
    result = run_filterkit("--updatable", OH0_SAMPLE, "minmax")
    assert result.status == 2
    assert "--updatable keeps statistics in the model: give --save-model M.json too" in result.stderr


def test_a_stage_that_cannot_save_statistics_is_named_and_leaves_no_output(run_filterkit, tmp_path):
    result = run_filterkit(
        "-q",
        "--save-model",
        tmp_path / "m.json",
        "--updatable",
        "-o",
        tmp_path / "out.arff",
        OH0_SAMPLE,
        "fold",
        "--of",
        "2",
    )
    assert result.status == 1
    assert "stage 'fold' cannot save its statistics, so a model holding it cannot be updated" in result.stderr
    assert not (tmp_path / "m.json").exists() and not (tmp_path / "out.arff").exists()


def same_state(first: dict, second: dict) -> bool:
    """Whether two stage states are equal, arrays bit for bit."""
    return first.keys() == second.keys() and all(
        np.array_equal(first[key], second[key]) if isinstance(first[key], np.ndarray) else first[key] == second[key]
        for key in first
    )


@pytest.mark.parametrize(
    "name, parameters",
    [("shape", {}), ("bns", {"positive": "1"}), ("select", {"metric": "ig", "top": 5}), ("minmax", {})],
)
def test_partial_fit_equals_one_fit_on_all_the_rows(name, parameters):
    from filterkit.sklearn import transformer_for

    generator = np.random.default_rng(49)
    X, y = generator.poisson(0.6, (90, 12)).astype(np.float64), generator.integers(0, 3, 90)
    transformer = transformer_for(name)
    updated = transformer(**parameters).fit(X[:50], y[:50]).partial_fit(X[50:71], y[50:71]).partial_fit(X[71:], y[71:])
    refitted = transformer(**parameters).fit(X, y)
    assert same_state(updated.stage_.state(), refitted.stage_.state())
    assert not same_state(transformer(**parameters).fit(X[:50], y[:50]).stage_.state(), refitted.stage_.state())
    assert np.array_equal(updated.transform(X), refitted.transform(X))


def test_partial_fit_of_documents_equals_one_fit_on_all_of_them():
    from filterkit.sklearn import transformer_for

    with READS.open(newline="") as stream:
        rows = list(csv.reader(stream))[1:]
    documents, labels = [text for text, _ in rows], [label for _, label in rows]
    words = transformer_for("words")
    updated = (
        words(lowercase=True, counts=True).fit(documents[:35], labels[:35]).partial_fit(documents[35:], labels[35:])
    )
    refitted = words(lowercase=True, counts=True).fit(documents, labels)
    assert len(updated.get_feature_names_out()) > len(
        words(lowercase=True).fit(documents[:35], labels[:35]).get_feature_names_out()
    )
    assert list(updated.get_feature_names_out()) == list(refitted.get_feature_names_out())
    assert (updated.transform(documents) != refitted.transform(documents)).nnz == 0


def test_partial_fit_refuses_a_label_the_first_fit_lacked():
    from filterkit.sklearn import transformer_for

    X = np.eye(4)
    shape = transformer_for("shape")().fit(X, ["a", "b", "a", "b"])
    with pytest.raises(ValueError, match="y holds the label 'c', which the first fit did not have"):
        shape.partial_fit(X, ["a", "c", "a", "b"])


def test_usefulness_counts_merge_to_the_same_text_in_either_order():
    from filterkit_plugins.housekeeping import UsefulnessCounts

    def counts(text: str) -> UsefulnessCounts:
        return UsefulnessCounts(np.ones(1, np.int64), np.zeros(1), np.zeros(1), np.zeros(0, bool), {0: (text, False)})

    first, second = counts("tea"), counts("coffee")
    assert first.merge(second).texts == second.merge(first).texts == {0: ("coffee", True)}


#: The start of the error of statistics that do not fit the stage.
FIT = "stage 'shape': the model's statistics of it do not fit it ("


def spoil(document: dict, change: str) -> None:
    statistics = document["statistics"]
    if change == "not an entry per stage":
        del statistics[-1]
    elif change == "counts of other classes":
        statistics[0]["n_classes"] = 3
    elif change == "a stage that does not learn":
        statistics[2] = {"kind": "value counts"}
    elif change == "no statistics of a stage that learns":
        statistics[0] = None
    elif change == "an array of other bytes":
        statistics[0]["pairs"]["array"]["base64"] = "!!"
    elif change == "counts below 0":
        statistics[0]["sums"] = {"digits": _ints_entry(-_saved_ints(statistics[0]["sums"]["digits"])), "lowest": 0}
    elif change == "a class's total below its counts":
        totals = _saved_ints(statistics[0]["totals"]["digits"])
        statistics[0]["totals"]["digits"] = _ints_entry(np.ones_like(totals))
    elif change == "digits past a double":
        statistics[0]["totals"]["lowest"] = 2**40
    elif change == "a digit past 2**32":
        statistics[0]["totals"]["digits"] = _ints_entry(_saved_ints(statistics[0]["totals"]["digits"]) + 2**32)


@pytest.mark.parametrize(
    "change, error",
    [
        ("not an entry per stage", "the model's 'statistics' is not a list of one entry per stage"),
        ("counts of other classes", "stage 'shape': the model's statistics of it do not fit it (exact sums of 10 "),
        ("a stage that does not learn", "the model's 'statistics' of stage 3 'l2' is not statistics the stage learns"),
        ("no statistics of a stage that learns", "the model's 'statistics' has none of stage 1 'shape', which learns"),
        ("an array of other bytes", "the model's 'statistics': array 'stage 1 'shape' statistics' declares "),
        # counts no rows give, which update merged into a model without a word (bns scores of 0, totals of 12)
        ("counts below 0", FIT + "a sum of row weights below 0)"),
        ("a class's total below its counts", FIT + "feature 1's counts in class 7 are more than the class's rows)"),
        # a lowest digit of 2**40 asked for 24 TiB, and the error blamed the plugin
        ("digits past a double", FIT + "exact sums with digits past a double's range)"),
        ("a digit past 2**32", FIT + "exact sums not in their written form (each digit below 2**32"),
    ],
)
def test_spoiled_statistics_are_one_error_naming_the_model(run_filterkit, tmp_path, change, error):
    first, more, _ = split_arff(OH0_SAMPLE, tmp_path, 37)
    model = tmp_path / "first.json"
    fitted(run_filterkit, model, first, ["shape", "bns", "l2"], "--positive", "Ethics")
    document = json.loads(model.read_text())
    spoil(document, change)
    model.write_text(json.dumps(document))
    result = run_filterkit("update", model, more, "-o", tmp_path / "new.json")
    assert result.status == 1 and not (tmp_path / "new.json").exists()
    assert result.stderr.startswith(f"filterkit: error: {model}: {error}") and len(result.stderr.splitlines()) == 1


def _saved_ints(entry: dict) -> np.ndarray:
    array = entry["array"]
    return np.frombuffer(base64.b64decode(array["base64"]), dtype=array["dtype"]).reshape(array["shape"]).copy()


def _array_entry(values, dtype: str) -> dict:
    """A model file's entry of an array (base64 of its little-endian bytes), as ``values`` in ``dtype``."""
    values = np.ascontiguousarray(values, dtype=dtype)
    encoded = base64.b64encode(values.tobytes()).decode()
    return {"array": {"dtype": dtype, "shape": list(values.shape), "base64": encoded}}


def _ints_entry(values) -> dict:
    return _array_entry(values, "<i8")


def _float_entry(values) -> dict:
    return _array_entry(values, "<f8")


@pytest.mark.parametrize(
    "spoil_words, error",
    [
        (lambda words: words.update(n_documents=0), "a pair's documents are more than 'n_documents'"),
        (
            lambda words: words.update({k: _ints_entry(_saved_ints(words[k])[::-1]) for k in PAIR_ARRAYS}),
            "the pairs are not each (class, word) once, in that order",
        ),
        (
            lambda words: words.update(
                {k: _ints_entry(np.r_[_saved_ints(words[k])[:1], _saved_ints(words[k])]) for k in PAIR_ARRAYS}
            ),
            "the pairs are not each (class, word) once, in that order",
        ),
    ],
    ids=["no-documents", "pairs-reversed", "a-pair-twice"],
)
def test_word_statistics_that_contradict_themselves_are_one_error_naming_the_model(
    run_filterkit, tmp_path, spoil_words, error
):
    # each was taken: the updated model's counts were wrong (n_documents 0 gave 124 where a refit gives 244)
    first, more, _ = split_arff(reuters_documents(tmp_path), tmp_path, 40)
    model = tmp_path / "first.json"
    fitted(run_filterkit, model, first, ["words", "--lowercase", "--counts", *WORD_CHAINS["shape bns l2"]])
    document = json.loads(model.read_text())
    spoil_words(document["statistics"][0])
    model.write_text(json.dumps(document))
    result = run_filterkit("update", model, more, "-o", tmp_path / "new.json")
    assert result.status == 1 and not (tmp_path / "new.json").exists()
    expected = f"filterkit: error: {model}: stage 'words': the model's statistics of it do not fit it ({error})\n"
    assert result.stderr == expected


def test_a_class_named_like_a_class_position_is_found_by_its_place(run_filterkit, tmp_path):
    named_first = tmp_path / "named.arff"
    named_first.write_text(OH0_SAMPLE.read_text().replace("@attribute class ", "@attribute first "))
    first, more, both = split_arff(named_first, tmp_path, 37)
    for model, data in (("first", first), ("both", both)):
        fitted(run_filterkit, tmp_path / f"{model}.json", data, ["shape", "bns"], "-c", "last", "--positive", "Ethics")
    result = run_filterkit("update", "-q", tmp_path / "first.json", more, "-o", tmp_path / "updated.json")
    assert result.status == 0, result.stderr
    assert (tmp_path / "updated.json").read_bytes() == (tmp_path / "both.json").read_bytes()


@pytest.mark.slow
def test_an_updated_model_equals_the_model_a_dask_fit_saves(run_filterkit, dask_scheduler, tmp_path):
    first, more, both = split_arff(OH0_SAMPLE, tmp_path, 37)
    chain = ["shape", "bns", "l2"]
    fitted(run_filterkit, tmp_path / "first.json", first, chain, "--positive", "Ethics")
    on_dask = ("--engine", "dask", "--scheduler", dask_scheduler, "--partitions", "3", "--positive", "Ethics")
    fitted(run_filterkit, tmp_path / "both.json", both, chain, *on_dask)
    result = run_filterkit("update", "-q", tmp_path / "first.json", more, "-o", tmp_path / "updated.json")
    assert result.status == 0, result.stderr
    assert (tmp_path / "updated.json").read_bytes() == (tmp_path / "both.json").read_bytes()


def test_a_fitted_transformer_that_keeps_no_statistics_has_no_partial_fit():
    from filterkit.sklearn import transformer_for

    X, y = np.random.default_rng(5).poisson(1.0, (40, 5)).astype(np.float64), np.arange(40) % 2
    selector = transformer_for("select")(metric="svm", top=2)
    assert hasattr(selector, "partial_fit")  # before the fit, partial_fit is fit
    assert not hasattr(selector.fit(X, y), "partial_fit")
    assert hasattr(transformer_for("select")(metric="ig", top=2).fit(X, y), "partial_fit")


UNLIKE_STATE = "do not give its saved state (a fit on them gives another): the statistics or the state were edited"


def _shape(entry: dict) -> list[int]:
    return entry["array"]["shape"]


@pytest.mark.parametrize(
    "chain, position, spoil_statistics",
    [
        # minmax's training low edited to -100: the update merged it and the model's minimum became -100
        (
            ["minmax", "l2"],
            0,
            lambda entry: entry.update(low=_float_entry(np.full(entry["low"]["array"]["shape"], -100.0))),
        ),
        # a range narrowed to one value, each statistic plausible alone
        (["minmax", "l2"], 0, lambda entry: entry.update(high=entry["low"])),
        # words' n_documents edited upward (its pairs stay within it): the update said 102158 documents
        (["words", "--lowercase", "bns", "l2"], 0, lambda entry: entry.update(n_documents=entry["n_documents"] + 9)),
    ],
    ids=["minmax-low", "minmax-no-width", "words-documents"],
)
def test_statistics_that_do_not_give_the_saved_state_are_refused_naming_the_stage(
    run_filterkit, tmp_path, chain, position, spoil_statistics
):
    data = reuters_documents(tmp_path) if chain[0] == "words" else OH0_SAMPLE
    first, more, _ = split_arff(data, tmp_path, 40)
    model = tmp_path / "first.json"
    fitted(run_filterkit, model, first, chain)
    document = json.loads(model.read_text())
    spoil_statistics(document["statistics"][position])
    model.write_text(json.dumps(document))
    result = run_filterkit("update", model, more, "-o", tmp_path / "new.json")
    assert result.status == 1 and not (tmp_path / "new.json").exists()
    where = f"stage {position + 1} '{chain[0]}'"
    assert result.stderr == f"filterkit: error: {model}: the model's 'statistics' of {where} {UNLIKE_STATE}\n"
