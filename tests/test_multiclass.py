"""The k-class IG and χ² (``--combine joint``) against Weka 3.6 itself.

For each data set Weka's ``InfoGainAttributeEval`` and ``ChiSquaredAttributeEval`` rank every
attribute with their default ``Ranker``, with ``-B`` (numeric attributes binarized: filterkit's
``--presence``) and without (numeric attributes cut at their MDL intervals: filterkit's default);
``tests/data/weka/WekaRanker.java`` prints the four rankings at full precision; one JVM ranks
every small file (tests/data/real's sets and the tie and missing-value files), another every shared
set, once per run of this module.  ``filterkit info --metric ig|chi [--presence] --combine joint --json`` must
give every attribute Weka's score within 1e-9 relative and Weka's ranking, ties in Weka's order.
"""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

from chain_helpers import REAL, SHARED_DATA, TESTS, needs_weka, read_bytes, shared_data_file, weka_java
from filterkit.metrics import weka_ranking
from filterkit.plugins import load_plugins
from filterkit.sklearn import ScoreScaler, Selector
from filterkit.testing import check_stage

WEKA_RANKER = TESTS / "data" / "weka" / "WekaRanker.java"
#: Multi-class and nominal sets of tests/data/real with their class attribute.
REAL_SETS = [
    ("oh0.wc.arff", "last"),
    ("credit-g.arff", "last"),
    ("vowel.arff", "last"),
    ("iris.arff", "last"),
    ("wine.arff", "first"),
    ("glass.arff", "last"),
    ("vehicle.arff", "last"),
    ("ecoli.arff", "last"),
    ("diabetes.arff", "last"),
    ("sonar.arff", "last"),
]
SHARED_SETS = [
    "text/oh5.wc.arff",
    "text/oh10.wc.arff",
    "text/tr11.wc.arff",
    "text/tr12.wc.arff",
    "text/tr23.wc.arff",
    "text/tr41.wc.arff",
    "uci/letter.arff",
    "uci/optdigits.arff",
]
MODES = [("ig", True), ("chi", True), ("ig", False), ("chi", False)]


Rankings = dict[tuple[str, bool], list[tuple[str, float]]]


def weka_rankings(files: list[tuple[str, str]]) -> dict[str, Rankings]:
    """Weka's four rankings of each (path, class) file, in one JVM: path → (metric, binarized) →
    [(attribute name, merit)], best first."""
    arguments = [word for pair in files for word in pair]
    output = subprocess.run(
        [*weka_java(WEKA_RANKER, "-Xmx2g"), *arguments],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    by_file: dict[str, Rankings] = {}
    rankings: Rankings = {}
    current: list[tuple[str, float]] = []
    for line in output.splitlines():
        if line.startswith("## "):
            rankings = by_file.setdefault(files[int(line.split()[1])][0], {})
        elif line.startswith("# "):
            words = line.split()
            current = rankings.setdefault((words[1], len(words) == 3), [])
        else:
            _, name, merit = line.split("\t")
            current.append((name, float(merit)))
    assert sorted(by_file) == sorted(path for path, _ in files), "WekaRanker left a file out"
    return by_file


@pytest.fixture(scope="module")
def small_files(tmp_path_factory) -> tuple[dict[str, str], dict[str, Rankings]]:
    """The small files (tests/data/real's sets, the tie and missing-value files written here) by
    name → path, and Weka's rankings of each by path, from one JVM."""
    folder = tmp_path_factory.mktemp("weka-ranker")
    paths = {name: str(REAL / name) for name, _ in REAL_SETS}
    classes = dict(REAL_SETS)
    for name, text in WRITTEN.items():
        paths[name] = str(folder / name)
        (folder / name).write_text(text)
        classes[name] = "last"
    return paths, weka_rankings([(paths[name], classes[name]) for name in paths])


@pytest.fixture(scope="module")
def shared_rankings() -> dict[str, Rankings]:
    """Weka's rankings of every shared set beside this clone, by path, from one JVM."""
    present = [str(SHARED_DATA / relative) for relative in SHARED_SETS if (SHARED_DATA / relative).is_file()]
    return weka_rankings([(path, "last") for path in present]) if present else {}


def joint_ranking(run_filterkit, path, class_spec: str, metric: str, presence: bool, *extra) -> dict:
    """``filterkit info --combine joint --json`` ranking every attribute."""
    flags = ["--presence"] if presence else []
    result = run_filterkit(
        "info",
        "-c",
        class_spec,
        "--metric",
        metric,
        *flags,
        *([] if "--combine" in extra else ["--combine", "joint"]),
        "--top",
        10**6,
        "--json",
        *extra,
        path,
    )
    assert result.status == 0, result.stderr
    return json.loads(result.stdout)["ranking"]


def assert_same_as_weka(ranking: dict, weka: list[tuple[str, float]]) -> None:
    """Every attribute's score within 1e-9 relative of Weka's, and Weka's order."""
    ours = [(feature["name"], feature["score"]) for feature in ranking["features"]]
    assert len(ours) == len(weka)
    scores = dict(ours)
    for name, merit in weka:
        assert scores[name] == pytest.approx(merit, rel=1e-9, abs=1e-300), name
    assert [name for name, _ in ours] == [name for name, _ in weka]


@needs_weka
@pytest.mark.parametrize(("metric", "presence"), MODES)
@pytest.mark.parametrize(("name", "class_spec"), REAL_SETS)
def test_joint_scores_and_ranking_are_wekas(run_filterkit, small_files, name, class_spec, metric, presence):
    path = REAL / name
    weka = small_files[1][str(path)][(metric, presence)]
    assert_same_as_weka(joint_ranking(run_filterkit, path, class_spec, metric, presence), weka)


@pytest.mark.slow
@needs_weka
@pytest.mark.parametrize(("metric", "presence"), MODES)
@pytest.mark.parametrize("relative", SHARED_SETS)
def test_joint_scores_and_ranking_are_wekas_on_the_shared_sets(
    run_filterkit, shared_rankings, relative, metric, presence
):
    path = shared_data_file(relative)
    weka = shared_rankings[str(path)][(metric, presence)]
    assert_same_as_weka(joint_ranking(run_filterkit, path, "last", metric, presence), weka)


def test_oh0_aortic_is_wekas_0_224_not_the_one_vs_rest_maximum(run_filterkit):
    # the example: Weka's IG -B of 'aortic' on oh0 is 0.224, the max over one-vs-rest 0.210
    joint = joint_ranking(run_filterkit, REAL / "oh0.wc.arff", "last", "ig", True)
    by_name = {feature["name"]: feature for feature in joint["features"]}
    assert by_name["aortic"]["score"] == pytest.approx(0.224095, abs=5e-7)
    maximum = joint_ranking(run_filterkit, REAL / "oh0.wc.arff", "last", "ig", True, "--combine", "max")
    assert {f["name"]: f["score"] for f in maximum["features"]}["aortic"] == pytest.approx(0.210, abs=5e-4)


TIES = """@relation ties
@attribute a numeric
@attribute b numeric
@attribute c numeric
@attribute d numeric
@attribute e numeric
@attribute f numeric
@attribute g numeric
@attribute h numeric
@attribute class {x,y,z}
@data
1,0,1,0,1,0,1,0,x
1,0,1,0,1,0,1,0,x
0,1,0,1,0,1,0,1,y
0,1,0,1,0,1,0,1,y
0,0,0,0,0,0,0,0,z
1,1,1,1,1,1,1,1,z
"""


@needs_weka
def test_ties_rank_in_wekas_quicksort_order_not_by_position(run_filterkit, small_files):
    paths, rankings = small_files
    path = paths["ties.arff"]
    weka = rankings[path][("ig", True)]
    ranking = joint_ranking(run_filterkit, path, "last", "ig", True)
    assert_same_as_weka(ranking, weka)
    names = [feature["name"] for feature in ranking["features"]]
    assert len({feature["score"] for feature in ranking["features"]}) == 1, "every attribute ties"
    assert names != sorted(names), "Weka's Ranker does not put tied attributes in position order"


def test_weka_ranking_reads_the_ascending_quicksort_backwards():
    # Weka 3.6.14's Utils.sort of [3, 1, 3, 2, 3] (a median-of-three quicksort) gives the positions
    # [1, 3, 0, 2, 4], and the Ranker reads them backwards: the three tied 3s come out as 4, 2, 0
    assert weka_ranking(np.array([3.0, 1.0, 3.0, 2.0, 3.0])).tolist() == [4, 2, 0, 3, 1]


MISSING = """@relation missing
@attribute n numeric
@attribute p numeric
@attribute colour {red,green,blue}
@attribute class {x,y,z}
@data
1.5,0,red,x
?,2,red,x
2.5,0,?,x
3,1,green,y
?,?,green,y
4,1,blue,y
7,0,?,z
8.5,3,blue,z
9,0,blue,z
0,?,red,z
"""
#: Written by the small_files fixture, ranked by Weka with tests/data/real's sets.
WRITTEN = {"ties.arff": TIES, "missing.arff": MISSING}


@needs_weka
@pytest.mark.parametrize(("metric", "presence"), MODES)
def test_missing_values_are_spread_over_the_known_values_as_weka_does(run_filterkit, small_files, metric, presence):
    paths, rankings = small_files
    path = paths["missing.arff"]
    weka = rankings[path][(metric, presence)]
    assert_same_as_weka(joint_ranking(run_filterkit, path, "last", metric, presence), weka)


def test_joint_is_the_default_for_ig_and_chi_on_more_than_two_classes(run_filterkit):
    oh0 = REAL / "oh0.wc.arff"
    default = run_filterkit("info", "--metric", "chi", "--presence", "--top", 5, "--json", oh0)
    assert json.loads(default.stdout)["ranking"]["combine"] == "joint"
    joint = joint_ranking(run_filterkit, oh0, "last", "chi", True)
    assert json.loads(default.stdout)["ranking"]["features"] == joint["features"][:5]
    positive = run_filterkit("info", "--metric", "chi", "--presence", "--positive", "Ethics", "--json", oh0)
    assert json.loads(positive.stdout)["ranking"]["combine"] is None
    bns = run_filterkit("info", "--metric", "bns", "--presence", "--json", oh0)
    assert json.loads(bns.stdout)["ranking"]["combine"] == "max"


def test_scorer_default_on_oh0_is_the_joint_score(run_filterkit):
    oh0 = REAL / "oh0.wc.arff"
    joint = {f["name"]: f["score"] for f in joint_ranking(run_filterkit, oh0, "last", "ig", True)["features"]}
    registry = load_plugins()
    stage = registry.make_stage("ig", {"presence": True, "scale": False})
    from filterkit.runner import Chain
    from filterkit.sources import FileSource

    Chain([stage]).fit(FileSource(str(oh0)))
    recorded = stage.feature_scores()
    assert recorded["aortic"] == joint["aortic"]
    assert recorded == pytest.approx(joint, rel=0, abs=0)


@pytest.mark.parametrize("command", [["info", "--metric", "bns"], ["select", "--metric", "odds", "--top", "3"]])
def test_joint_is_refused_for_a_metric_without_a_k_class_form(run_filterkit, command):
    oh0 = REAL / "oh0.wc.arff"
    argv = [*command, "--combine", "joint", oh0] if command[0] == "info" else [oh0, *command, "--combine", "joint"]
    result = run_filterkit(*argv)
    assert result.status == 1
    assert "has no k-class form" in result.stderr and "Traceback" not in result.stderr
    scorer = run_filterkit(oh0, "bns", "--combine", "joint")
    assert scorer.status == 1 and "metric 'bns' has no k-class form" in scorer.stderr


def test_help_says_which_metrics_are_one_vs_rest(run_filterkit):
    bns = run_filterkit(REAL / "iris.arff", "bns", "--help").stdout.decode()
    assert "one-vs-rest" in " ".join(bns.split()) and "no k-class form" in " ".join(bns.split())
    ig = " ".join(run_filterkit(REAL / "iris.arff", "ig", "--help").stdout.decode().split())
    assert "joint" in ig and "as Weka" in ig


def test_dfreq_needs_no_class_split(run_filterkit):
    oh0 = REAL / "oh0.wc.arff"
    scores = {}
    for combine in ("joint", "max", "mean"):
        result = run_filterkit("info", "--metric", "dfreq", "--presence", "--combine", combine, "--json", oh0)
        assert result.status == 0, result.stderr
        scores[combine] = [(f["name"], f["score"]) for f in json.loads(result.stdout)["ranking"]["features"]]
    assert scores["joint"] == scores["max"] == scores["mean"]
    assert scores["joint"][0][1] > 100


@pytest.mark.slow
def test_joint_scores_do_not_depend_on_the_chunk_size(run_filterkit):
    oh0 = REAL / "oh0.wc.arff"
    for metric, presence in MODES:
        whole = joint_ranking(run_filterkit, oh0, "last", metric, presence)
        chunked = joint_ranking(run_filterkit, oh0, "last", metric, presence, "--chunk-rows", 37)
        assert whole == chunked


@pytest.mark.slow
@pytest.mark.parametrize("presence", [True, False])
def test_a_joint_scorer_passes_the_stage_contract(presence):
    registry = load_plugins()
    check_stage(registry.stages["chi"].value, combine="joint", presence=presence)


def test_the_sklearn_adapters_take_combine_joint(run_filterkit):
    from filterkit.arff import read_arff

    schema, chunk = read_arff(REAL / "vowel.arff")
    numeric = [i for i, a in enumerate(schema.attributes[:-1]) if a.is_numeric]
    X = chunk.dense_values()[:, numeric]
    labels = schema.attributes[-1].labels
    y = [labels[int(code)] for code in chunk.dense_values()[:, -1]]
    scaler = ScoreScaler("ig", combine="joint", scale=False).fit(X, y)
    ranking = joint_ranking(run_filterkit, REAL / "vowel.arff", "last", "ig", False, "--numeric-only")
    expected = {f["name"]: f["score"] for f in ranking["features"]}
    names = [schema.attributes[i].name for i in numeric]
    # the adapter orders the classes by their string, so Weka's sums run in another order: the last bits may differ
    assert scaler.stage_.scores.tolist() == pytest.approx([expected[name] for name in names], rel=1e-12)
    selector = Selector(metric="chi", combine="joint", presence=True, top=3).fit(X, y)
    assert selector.transform(X).shape == (len(y), 3)


def test_select_joint_keeps_wekas_top_k(run_filterkit):
    oh0 = REAL / "oh0.wc.arff"
    ranking = joint_ranking(run_filterkit, oh0, "last", "ig", True)
    result = run_filterkit(oh0, "select", "--metric", "ig", "--presence", "--combine", "joint", "--top", 40)
    assert result.status == 0, result.stderr
    schema, _ = read_bytes(result.stdout)
    kept = {a.name for a in schema.attributes[:-1]}
    assert kept == {f["name"] for f in ranking["features"][:40]}


def test_alpha_keeps_one_vs_rest_and_is_refused_with_joint(run_filterkit):
    oh0 = REAL / "oh0.wc.arff"
    weighted = run_filterkit(oh0, "ig", "--presence", "--alpha", 0.7)
    assert weighted.status == 0, weighted.stderr
    refused = run_filterkit(oh0, "ig", "--presence", "--combine", "joint", "--alpha", 0.7)
    assert refused.status == 1 and "not with --combine joint" in refused.stderr
