"""A ``--positive`` that is not a label of the class (issue 47, item 11): the chain, ``evaluate`` and
``info`` refuse it through one check (``check_positive``), which shows the class's labels and offers
the one that differs only in case; ``evaluate`` and ``info --metric`` on a file whose last attribute is
not the nominal class say which ``-c`` to give, as the chain does."""

from __future__ import annotations

import pytest

from filterkit.errors import FilterkitError
from filterkit.schema import NOMINAL, Attribute, check_positive

TOPIC = Attribute("topic", NOMINAL, labels=("science", "sport"))
TEXT = "@relation r\n@attribute topic {science,sport}\n@attribute text string\n@data\n" + "".join(
    f"{label},'{words}'\n"
    for label, words in [("science", "atoms cells"), ("sport", "goals runs"), ("science", "cells")] * 2
)
NOT_A_LABEL = (
    "--positive 'Science' is not a label of the class 'topic' {science,sport}: "
    "labels are case-sensitive; did you mean --positive science?"
)


def test_a_positive_label_differing_only_in_case_is_offered_with_the_class_s_labels():
    with pytest.raises(FilterkitError) as caught:
        check_positive("Science", TOPIC)
    assert caught.value.message == NOT_A_LABEL
    with pytest.raises(FilterkitError) as caught:
        check_positive("maths", TOPIC)
    assert caught.value.message == "--positive 'maths' is not a label of the class 'topic' {science,sport}"
    check_positive("science", TOPIC)
    check_positive(None, None)


def test_every_label_differing_only_in_case_is_offered_quoted_for_the_shell():
    spelled = Attribute("c", NOMINAL, labels=("New York", "NEW YORK", "Boston"))
    with pytest.raises(FilterkitError, match=r"did you mean --positive 'New York' or --positive 'NEW YORK'\?$"):
        check_positive("new york", spelled)


def test_many_labels_are_shown_up_to_200_characters_and_counted():
    many = Attribute("c", NOMINAL, labels=tuple(f"label{k}" for k in range(10000)))
    with pytest.raises(FilterkitError) as caught:
        check_positive("LABEL9999", many)
    message = caught.value.message
    assert message.startswith("--positive 'LABEL9999' is not a label of the class 'c' {label0,label1,")
    assert "…} (10,000 labels): labels are case-sensitive; did you mean --positive label9999?" in message
    assert len(message) < 400


def test_without_a_nominal_class_the_label_is_refused_without_labels():
    with pytest.raises(FilterkitError, match=r"^--positive 'x' is not a label of the class$"):
        check_positive("x", Attribute("n", "numeric"))
    with pytest.raises(FilterkitError, match=r"^--positive 'x' is not a label of the class$"):
        check_positive("x", None)


@pytest.mark.parametrize(
    "arguments",
    [
        ["-c", "first", "--positive", "Science", "{path}", "words", "shape"],
        ["evaluate", "-q", "-c", "first", "--positive", "Science", "--folds", "2", "{path}", "words"],
        ["info", "-c", "first", "--metric", "ig", "--positive", "Science", "{words}"],
    ],
    ids=["chain", "evaluate", "info"],
)
def test_the_chain_evaluate_and_info_offer_the_label_differing_in_case(run_filterkit, tmp_path, arguments):
    path, words = tmp_path / "topics.arff", tmp_path / "words.arff"
    path.write_text(TEXT)
    assert run_filterkit("-c", "first", "-o", words, path, "words").status == 0
    result = run_filterkit(*[a.format(path=path, words=words) for a in arguments])
    assert result.status == 1 and result.stdout == b""
    assert result.stderr.startswith("filterkit: error: ")
    assert result.stderr.endswith(NOT_A_LABEL + "\n")


def test_evaluate_and_info_without_the_class_say_which_c_to_give_as_the_chain_does(run_filterkit, tmp_path):
    path, words = tmp_path / "topics.arff", tmp_path / "words.arff"
    path.write_text(TEXT)
    assert run_filterkit("-c", "first", "-o", words, path, "words").status == 0
    hint = "the class (-c last) is 'runs', numeric: give -c first for 'topic'\n"
    chain = run_filterkit(words, "shape")
    assert chain.stderr.endswith(f"needs a nominal class attribute (-c); {hint}")
    result = run_filterkit("evaluate", "-q", "--positive", "science", "--folds", "2", words, "l2")
    assert (result.status, result.stdout) == (1, b"")
    assert result.stderr == f"filterkit: error: {words}: the classifier needs a nominal class attribute (-c); {hint}"
    result = run_filterkit("info", "--metric", "ig", words)
    assert (result.status, result.stdout) == (1, b"")
    assert result.stderr == f"filterkit: error: {words}: --metric needs a nominal class attribute (-c); {hint}"
