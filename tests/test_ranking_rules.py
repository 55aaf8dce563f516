"""One rule each, in the framework (issue 48, item 3): the minority class (the positive class of a
two-class stage, and ``evaluate``'s task on two classes) and the ranking order (``select`` and
``info --metric --top``), so that the two places that use each cannot drift apart."""

from __future__ import annotations

import json

import numpy as np
import pytest

from filterkit.metrics import JOINT, minority_class, positive_code, ranking_order, weka_ranking
from filterkit.schema import NOMINAL, Attribute
from filterkit.tasks import choose_tasks

#: Two classes of three rows each; f2 and f4 tell them apart, f1 and f3 half as well, f5 not at all.
TIED = b"""@relation tied
@attribute f1 numeric
@attribute f2 numeric
@attribute f3 numeric
@attribute f4 numeric
@attribute f5 numeric
@attribute class {yes,no}
@data
1,1,1,1,1,yes
1,1,1,1,0,yes
0,1,0,1,1,yes
1,0,1,0,0,no
0,0,0,0,1,no
0,0,0,0,0,no
"""


@pytest.mark.parametrize("counts, minority", [([3, 5], 0), ([5, 3], 1), ([4, 4], 1)])
def test_the_minority_of_two_classes_is_the_second_label_on_a_tie(counts, minority):
    attribute = Attribute("class", NOMINAL, ("a", "b"))
    assert minority_class(np.array(counts)) == minority
    assert positive_code(attribute, np.array(counts), None) == minority
    assert choose_tasks(("a", "b"), np.array(counts), None, None, False, 50) == [("a", "b")[minority]]


def test_the_ranking_order_breaks_ties_by_position_or_as_weka_does_with_joint():
    scores = np.array([0.5, 1.0, 0.5, 1.0, 0.0])
    assert ranking_order(scores, "max").tolist() == [1, 3, 0, 2, 4]
    assert ranking_order(scores, "mean").tolist() == [1, 3, 0, 2, 4]
    assert ranking_order(scores, JOINT).tolist() == weka_ranking(scores).tolist()


@pytest.mark.parametrize("combine", ["max", JOINT])
def test_select_keeps_the_features_info_ranks_first_ties_included(run_filterkit, combine):
    ranked = run_filterkit("info", "--metric", "ig", "--combine", combine, "--top", "3", "--json", "-", stdin=TIED)
    assert ranked.status == 0, ranked.stderr
    names = [feature["name"] for feature in json.loads(ranked.stdout)["ranking"]["features"]]
    selected = run_filterkit("-", "select", "--metric", "ig", "--combine", combine, "--top", "3", stdin=TIED)
    assert selected.status == 0, selected.stderr
    kept = [line.split()[1] for line in selected.stdout.decode().splitlines() if line.startswith("@attribute f")]
    assert sorted(names) == kept
    assert set(names[:2]) == {"f2", "f4"}  # the third is one of a tie, which both break alike
