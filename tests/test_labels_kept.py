"""``keep`` and ``remove`` on label sets (MEKA's ``-C``): ``keep`` dropped every label and ``remove --type nominal``
too, and the output kept ``-C 2``, so the first two features were written as labels (CSV ``x|y`` in every row, the
numbers gone), with status 0, or the writer crashed (found by a hostile review of multi-label data).  Labels now
stand where the class does: ``keep`` keeps them, ``remove`` removes one only when named one by one, and an output
with no label left carries no ``-C``."""

from __future__ import annotations

import pytest

from filterkit.testing import run_filterkit

LABELS_FIRST = """@relation 'toy: -C 2'
@attribute L1 {0,1}
@attribute L2 {0,1}
@attribute x numeric
@attribute y numeric
@data
1,0,1,2
0,1,3,4
1,1,5,6
0,0,7,8
"""

LABELS_LAST = """@relation 'toy: -C -2'
@attribute x numeric
@attribute y numeric
@attribute L1 {0,1}
@attribute L2 {0,1}
@data
{0 1,1 2,2 1}
{0 3,1 4,3 1}
{0 5,1 6,2 1,3 1}
{0 7,1 8}
"""


#: Each row's label set as CSV writes it (an empty set quoted, to tell it from a missing one).
SETS = ["L1", "L2", "L1|L2", '""']


@pytest.fixture(params=["first", "last"])
def meka(request, tmp_path):
    path = tmp_path / "toy.arff"
    path.write_text(LABELS_FIRST if request.param == "first" else LABELS_LAST)
    return path


def _csv(meka, *columns, sets=SETS) -> list[str]:
    """The CSV lines of the toy rows' ``columns`` (``labels``: the label sets), the labels where the file has them."""
    first = "-C 2" in meka.read_text()
    named = ["labels", *columns] if first else [*columns, "labels"]
    values = {"labels": sets, "x": ["1", "3", "5", "7"], "y": ["2", "4", "6", "8"]}
    return [",".join(named)] + [",".join(values[name][row] for name in named) for row in range(4)]


@pytest.mark.parametrize(
    "stage, columns",
    [
        (("keep", "--names", "x"), ("x",)),
        (("remove", "--names", "y"), ("x",)),
        (("remove", "--type", "nominal"), ("x", "y")),
    ],
)
def test_keep_and_remove_leave_the_labels_as_they_leave_the_class(meka, stage, columns):
    written = run_filterkit(meka, *stage, "--to", "csv")
    assert written.status == 0, written.stderr
    assert written.stdout.decode().splitlines() == _csv(meka, *columns)


def test_labels_named_one_by_one_are_removed_and_the_output_is_no_longer_meka_s(meka, tmp_path):
    out = tmp_path / "out.arff"
    written = run_filterkit(meka, "remove", "--names", "L1,L2", "-o", out)
    assert written.status == 0, written.stderr
    assert out.read_text().splitlines()[1] == "@relation toy"
    as_csv = run_filterkit(meka, "remove", "--names", "L1,L2", "--to", "csv")
    assert as_csv.stdout.decode().splitlines() == ["x,y", "1,2", "3,4", "5,6", "7,8"]
    info = run_filterkit("info", out)
    assert info.status == 0 and "labels" not in info.stdout.decode()


def test_one_label_removed_by_name_leaves_the_other(meka):
    written = run_filterkit(meka, "remove", "--names", "L1", "--to", "csv")
    assert written.status == 0, written.stderr
    assert written.stdout.decode().splitlines() == _csv(meka, "x", "y", sets=['""', "L2", "L2", '""'])


@pytest.mark.parametrize(
    "relation, count",
    [
        ("toy: -C +2", 2),
        ("toy: -c 2", 2),
        ("toy: -C -2 -x 1", -2),
        ('me: -C 2 -W "weka.classifiers.trees.J48 -C 0.25"', 2),
        ("toy: -Cool", None),
        ("toy -C 2", None),
        ('me: -C "2"', None),
        ("me: -C2", None),
        # Weka's filters write their options into the relation, a colon among StringToWordVector's delimiters:
        (
            "text-weka.filters.unsupervised.attribute.StringToWordVector -delimiters .,;: -weka.filters.supervised."
            "attribute.AddClassification-Wweka.classifiers.trees.J48 -C 0.25 -M 2",
            None,
        ),
        ("t: SMO -C 1.0 -K PolyKernel -C 250007", None),
    ],
)
def test_meka_s_option_is_its_first_whole_number_after_the_colon(relation, count):
    """The labels' count is the first ``-C k`` (Java's parseInt: ``+2`` too) after the first colon, as MEKA reads it;
    other text holding ``-C`` is not MEKA's (refusing it refused relations Weka writes, a classifier's ``-C 0.25``
    after a colon of StringToWordVector's delimiters: found by a review of this change)."""
    from filterkit.labels import meka_label_count

    assert meka_label_count(relation) == count


def test_meka_s_minus_c_0_is_refused_at_its_relation_line(tmp_path):
    """-C 0 named the @data line."""
    path = tmp_path / "c.arff"
    path.write_text("% a comment\n@relation 'me: -C 0'\n@attribute L1 {0,1}\n@attribute L2 {0,1}\n@data\n1,0\n")
    refused = run_filterkit("info", path)
    assert refused.status == 1
    assert refused.stderr == f"filterkit: error: {path}:2: relation 'me: -C 0': MEKA's -C 0 names no label\n"


def test_label_and_label_powerset_together_are_refused(meka):
    """--label-powerset with --label L1 scored L1 alone (a powerset of one label), as --label L1 does, and the
    provenance line recorded both (found by a hostile review of multi-label data)."""
    refused = run_filterkit(meka, "chi", "--presence", "--label-powerset", "--label", "L1")
    assert refused.status == 1 and refused.stdout == b""
    assert "--label 'L1' learns from one label, --label-powerset from the sets of all of them" in refused.stderr
    assert run_filterkit(meka, "chi", "--presence", "--label-powerset").status == 0


@pytest.mark.parametrize("option", ["--predictions", "--label-issues"])
def test_a_label_holding_the_separator_is_refused_before_the_cross_validation(tmp_path, option):
    """A label named ``a|b`` was refused by --predictions only after the whole evaluation, its table printed, status 1
    (found by a hostile review of multi-label data); it is refused before any row is read."""
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(f'{{"labels": ["{"a|b" if i % 2 else "c"}"], "t": {i}}}\n' for i in range(12)))
    out, test = tmp_path / "out.csv", tmp_path / "test.jsonl"
    test.write_text(rows.read_text())
    given = ("--test", test) if option == "--predictions" else ("--folds", "2")
    refused = run_filterkit("evaluate", "--jobs", "1", "--labels-column", "labels", *given, option, out, rows, "l2")
    assert (refused.status, refused.stdout, out.exists()) == (1, b"", False)
    why = "label 'a|b' holds |, which joins a row's labels: rename the label in the data"
    assert refused.stderr == f"filterkit: error: {option}: {why}\n"


@pytest.mark.parametrize("written", ["svmlight", "csv"])
def test_a_missing_label_refused_by_the_output_is_named_by_its_name(tmp_path, written):
    """svmlight output named the missing label by the text it writes for it ('0'), not its name (found by a
    hostile review of multi-label data)."""
    path = tmp_path / "missing.arff"
    path.write_text(LABELS_FIRST.replace("0,0,7,8", "0,?,7,8"))
    refused = run_filterkit(path, "--to", written, "-o", tmp_path / f"out.{written}")
    assert refused.status == 1 and not (tmp_path / f"out.{written}").exists()
    assert "row 4 has a missing label ('L2')" in refused.stderr


@pytest.mark.parametrize("relation", ["docs", "a:b", "run: -c1", "x: -c first", 'me: -C 2 -W "J48 -C 0.25"'])
def test_a_count_set_in_any_relation_reads_back(relation):
    """filterkit wrote 'run: -c1: -C 2' from a CSV file named 'run: -c1.csv' and read no -C (or two) back."""
    from filterkit.labels import meka_label_count, with_meka_label_count, without_meka_label_count

    assert meka_label_count(with_meka_label_count(relation, 3)) == 3
    assert meka_label_count(with_meka_label_count(relation, -4)) == -4
    if meka_label_count(relation) is None and ":" not in relation:
        assert without_meka_label_count(with_meka_label_count(relation, 3)) == relation
