"""The scikit-learn estimator checks that apply to ``WordVector`` (issue 72 item 11e): scikit-learn skips every
check of an estimator whose tags say it takes strings (as ``CountVectorizer``'s do), so
``test_sklearn.py::test_scikit_learn_estimator_checks`` checks nothing of it; these, which give no numeric X,
are run by name (docs/sklearn.md)."""

from __future__ import annotations

import pytest
from sklearn.exceptions import SkipTestWarning
from sklearn.utils import estimator_checks

from filterkit.sklearn import WordVector

#: The checks that give the estimator no X (the others give numbers, which a stage of words refuses).
CHECKS_WITHOUT_X = (
    "check_estimator_cloneable",
    "check_estimator_repr",
    "check_no_attributes_set_in_init",
    "check_parameters_default_constructible",
    "check_get_params_invariance",
    "check_set_params",
    "check_estimator_tags_renamed",
    "check_valid_tag_types",
)


def test_scikit_learn_skips_its_checks_for_an_estimator_of_strings():
    with pytest.warns(SkipTestWarning, match="Can't test estimator WordVector"):
        assert list(estimator_checks._yield_all_checks(WordVector(), legacy=True)) == []


@pytest.mark.parametrize("check", CHECKS_WITHOUT_X)
def test_word_vector_passes_the_checks_that_give_no_x(check):
    getattr(estimator_checks, check)("WordVector", WordVector())
