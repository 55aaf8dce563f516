"""Error messages that name attributes, labels or values stay one short line, however large the data:
a nominal attribute of documents holds megabytes of labels (issue 52: an 11.2 MB one-line error)."""

from __future__ import annotations

import numpy as np
import pytest

from filterkit.arff.liac import from_liac
from filterkit.errors import FilterkitError
from filterkit.schema import NOMINAL, NUMERIC, Attribute, Schema, check_positive, describe
from filterkit.testing import run_filterkit
from filterkit_plugins.discretize import range_labels

#: 5,000 labels of 2,000 characters: 10 MB of labels in one attribute.
LONG_LABELS = tuple(f"{k:05d}" + "x" * 1995 for k in range(5000))


def _documents_file(path, labels: tuple[str, ...]) -> None:
    """An ARFF file whose first attribute is nominal of ``labels`` (each row one of them), the class last."""
    declared = ",".join(labels)
    rows = "".join(f"{label},{'yes' if k % 2 else 'no'}\n" for k, label in enumerate(labels[:40]))
    path.write_text(f"@relation docs\n@attribute text {{{declared}}}\n@attribute class {{yes,no}}\n@data\n{rows}")


def _schema(labels: tuple[str, ...]) -> Schema:
    return Schema("r", (Attribute("text", NOMINAL, labels), Attribute("class", NOMINAL, ("yes", "no"))))


def test_a_difference_in_thousands_of_long_labels_is_one_short_line_naming_the_labels_that_differ():
    test_labels = (*LONG_LABELS[:2], "new label", *LONG_LABELS[3:])
    difference = _schema(LONG_LABELS).first_difference(_schema(test_labels))
    assert difference is not None and len(difference) < 800 and "\n" not in difference
    assert difference.startswith("attribute 1 differs: expected 'text' {00000xxx")
    assert "…} (5,000 labels), found 'text' {00000xxx" in difference
    assert f"label {LONG_LABELS[2][:30]!r}"[:-1] in difference  # the missing one, its middle cut out
    assert difference.endswith("is missing, label 'new label' is new")


def test_labels_in_another_order_or_fewer_say_so():
    reordered = _schema(("a", "b", "c")).first_difference(_schema(("a", "c", "b")))
    assert reordered == (
        "attribute 1 differs: expected 'text' {a,b,c}, found 'text' {a,c,b}: "
        "the same labels in another order (label 2 is 'c')"
    )
    fewer = _schema(("a", "b", "c")).first_difference(_schema(("a", "b")))
    assert fewer == (
        "attribute 1 differs: expected 'text' {a,b,c}, found 'text' {a,b}: "
        "label 'c' is missing (3 labels expected, 2 found)"
    )


def test_describe_bounds_a_long_name_and_many_labels():
    described = describe(Attribute("n" * 5000, NOMINAL, LONG_LABELS))
    assert len(described) < 400
    assert describe(Attribute("play", NOMINAL, ("yes", "no"))) == "'play' {yes,no}"
    assert describe(Attribute("x", NUMERIC)) == "'x' numeric"


def test_positive_not_a_label_of_many_long_labels_is_bounded():
    with pytest.raises(FilterkitError) as raised:
        check_positive("nope", Attribute("text", NOMINAL, LONG_LABELS))
    assert len(str(raised.value)) < 400


def test_a_value_not_among_many_long_labels_read_from_liac_is_bounded():
    data = {
        "relation": "r",
        "attributes": [("text", list(LONG_LABELS))],
        "data": [["y" * 100_000]],
    }
    with pytest.raises(FilterkitError) as raised:
        from_liac(data)
    assert len(str(raised.value)) < 600


@pytest.mark.slow  # reads two files of 10 MB of labels
def test_evaluate_with_a_test_file_whose_long_labels_differ_says_which_in_one_short_line(tmp_path):
    train, test = tmp_path / "train.arff", tmp_path / "test.arff"
    _documents_file(train, LONG_LABELS)
    _documents_file(test, (*LONG_LABELS[:-1], "another-document"))
    result = run_filterkit("evaluate", "--test", test, train, "l2")
    assert result.status == 1
    assert result.stderr.count("\n") == 1 and len(result.stderr) < 1000
    assert result.stderr.startswith(f"filterkit: error: {test}: header differs from the training data: attribute 1")
    assert result.stderr.endswith("is missing, label 'another-document' is new\n")
    applied = run_filterkit("--save-model", tmp_path / "m.json", "-o", tmp_path / "out.arff", train, "l2")
    assert applied.status == 0, applied.stderr
    result = run_filterkit("apply", tmp_path / "m.json", test)
    assert result.status == 1
    assert result.stderr.count("\n") == 1 and len(result.stderr) < 1000


def test_discretize_bins_that_print_alike_name_one_not_every_bin():
    cuts = np.r_[np.arange(1001.0), 1000.0000001, 1000.0000002]  # the last three cuts print as 1000
    with pytest.raises(FilterkitError) as raised:
        range_labels(cuts, "x")
    assert str(raised.value) == (
        "stage 'discretize': attribute 'x' has two bins that print alike at 6 decimals (both '(1000-1000]')"
    )


def test_a_scikit_learn_category_not_fitted_is_bounded():
    import pandas as pd

    from filterkit.sklearn import transformer_for

    fitted = transformer_for("l2")().fit(pd.DataFrame({"text": pd.Categorical(LONG_LABELS[:50]), "x": range(50)}))
    with pytest.raises(ValueError) as raised:
        fitted.transform(pd.DataFrame({"text": pd.Categorical(["z" * 100_000]), "x": [1]}))
    assert len(str(raised.value)) < 600
    assert "holds 'zzz" in str(raised.value) and "(100,000 characters), which is not one of its categories {" in str(
        raised.value
    )


@pytest.mark.parametrize(
    "data, argv, words",
    [
        # the bad token is the weight, which the error had called a value
        ("1,x\n2,y\n3,x,{abc}\n", ("minmax",), "bad.arff:7: instance weight 'abc' is not a number"),
        # a stage error that named no attribute, where the others name theirs
        (
            "1.0000001,x\n1.0000002,x\n1.0000003,y\n1.0000004,y\n1.0000005,x\n1.0000006,x\n",
            ("discretize", "--bins", "4"),
            "stage 'discretize': attribute 'a' has two bins that print alike",
        ),
        # "(raise --sample)" where the sample was every row: the data holds no row of the class
        ("1,x\n2,x\n3,x\n", ("select", "--metric", "svm", "--top", "1"), "the training data has no rows of weight"),
    ],
    ids=["weight", "discretize", "svm-sample"],
)
def test_an_error_names_what_is_wrong_where_it_is(run_filterkit, tmp_path, data, argv, words):
    path = tmp_path / "bad.arff"
    path.write_text("@relation b\n@attribute a numeric\n@attribute c {x,y}\n@data\n" + data)
    result = run_filterkit(path, *argv)
    assert result.status == 1 and result.stderr.count("\n") == 1 and words in result.stderr
    assert "raise --sample" not in result.stderr
