"""The housekeeping stages (issue 17, item 3) against Weka 3.6's Remove, RemoveType, RemoveUseless,
ReplaceMissingValues and StratifiedRemoveFolds, and the properties of ``fold``."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from chain_helpers import JAVA, REAL, UCI_SETS, WEKA_JAR, needs_weka, run_weka_filters
from filterkit.arff import read_arff
from filterkit.testing import check_stage, run_filterkit
from filterkit_plugins.housekeeping import (
    KeepAttributes,
    RemoveAttributes,
    StratifiedFold,
)

#: Data sets the missing-value and usefulness runs see besides the UCI sets: UCI sets with
#: every 7th value knocked out (weighted in one of them), and a file of useless attributes.
HOLED = {"iris-holes": ("iris", "last", False), "credit-g-holes": ("credit-g", "last", True)}
USELESS_ARFF = """@relation useless
@attribute constant numeric
@attribute missing numeric
@attribute id {a,b,c,d,e,f}
@attribute colour {red,green,blue}
@attribute same string
@attribute note string
@attribute x numeric
@attribute class {yes,no}
@data
1,?,a,red,'s',n1,0,yes
1,?,b,red,'s',n2,0,no
1,?,c,green,'s',n1,2,yes
1,?,d,red,'s',?,0,no
1,?,e,blue,?,n3,0,yes
1,?,f,red,'s',n1,5,no
"""

ATTRIBUTE = "weka.filters.unsupervised.attribute."
#: name: (data sets, filterkit's stage words, Weka's filter and options)
RUNS = {
    "remove-range": (UCI_SETS, ["remove", "--range", "1,3-4"], [ATTRIBUTE + "Remove", "-R", "1,3-4"]),
    "remove-nominal": (["credit-g"], ["remove", "--type", "nominal"], [ATTRIBUTE + "RemoveType", "-T", "nominal"]),
    "remove-numeric": (["credit-g"], ["remove", "--type", "numeric"], [ATTRIBUTE + "RemoveType", "-T", "numeric"]),
    # Weka's RemoveType -V fails on a nominal class of the type kept ("Attribute names are not unique"), and
    # Remove -V drops a class it is not given: the class is named in Weka's range (see the fixture)
    "keep-range": (UCI_SETS, ["keep", "--range", "2-4"], [ATTRIBUTE + "Remove", "-V", "-R", "2-4"]),
    "remove-useless": ([*UCI_SETS, *HOLED, "useless"], ["remove-useless"], [ATTRIBUTE + "RemoveUseless"]),
    # Weka 3.6 truncates -M to a whole number; filterkit takes the percentage as given
    "remove-useless-50": (
        ["useless"],
        ["remove-useless", "--max-percent", "50"],
        [ATTRIBUTE + "RemoveUseless", "-M", "50"],
    ),
    "remove-useless-0": (
        ["credit-g"],
        ["remove-useless", "--max-percent", "0"],
        [ATTRIBUTE + "RemoveUseless", "-M", "0"],
    ),
    "replace-missing": ([*UCI_SETS, *HOLED, "useless"], ["replace-missing"], [ATTRIBUTE + "ReplaceMissingValues"]),
}
FOLDS = "weka.filters.supervised.instance.StratifiedRemoveFolds"
FOLD_SETS = ["iris", "credit-g", "vehicle", "glass"]


def _holed(source: Path, target: Path, weighted: bool) -> None:
    """``source`` with every 7th value of each row's non-class attributes missing (the row's
    position decides which), and with instance weights 1, 2, 0.5 in turn when ``weighted``."""
    lines = source.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().lower() == "@data") + 1
    rows = [line for line in lines[start:] if line.strip() and not line.startswith("%")]
    out = []
    for number, row in enumerate(rows):
        cells = row.split(",")
        for k in range(len(cells) - 1):
            if (number + k) % 7 == 0:
                cells[k] = "?"
        weight = f",{{{(1, 2, 0.5)[number % 3]}}}" if weighted else ""
        out.append(",".join(cells) + weight)
    target.write_text("\n".join(lines[:start] + out) + "\n")


@pytest.fixture(scope="session")
def data_files(tmp_path_factory) -> dict[str, tuple[Path, str]]:
    """Every data set of the comparisons: its file and class option."""
    folder = tmp_path_factory.mktemp("housekeeping_data")
    files = {name: (REAL / f"{name}.arff", option) for name, option in UCI_SETS.items()}
    for name, (source, option, weighted) in HOLED.items():
        _holed(REAL / f"{source}.arff", folder / f"{name}.arff", weighted)
        files[name] = (folder / f"{name}.arff", option)
    (folder / "useless.arff").write_text(USELESS_ARFF)
    files["useless"] = (folder / "useless.arff", "last")
    return files


def _cases():
    return [(run, name) for run, (sets, _, _) in RUNS.items() for name in sets]


@pytest.fixture(scope="session")
def weka_outputs(tmp_path_factory, data_files) -> dict[tuple[str, str], Path]:
    """Weka's output per (run, data set) and per (fold run, data set), all from one JVM."""
    if JAVA is None or WEKA_JAR is None:
        pytest.skip("Weka 3.6 and Java are needed for the comparison")
    folder = tmp_path_factory.mktemp("weka_housekeeping")
    outputs, runs = {}, []
    for run, name in _cases():
        path, class_option = data_files[name]
        out = folder / f"{run}.{name}.arff"
        weka = RUNS[run][2]
        if run == "keep-range":  # Remove -V writes the attributes in its range's order
            ends = [class_option, weka[-1]] if class_option == "first" else [weka[-1], class_option]
            weka = [*weka[:-1], ",".join(ends)]
        runs.append([*weka, "-i", str(path), "-c", class_option, "-o", str(out)])
        outputs[run, name] = out
    for name in FOLD_SETS:
        path, class_option = data_files[name]
        for invert in (False, True):
            out = folder / f"fold-{invert}.{name}.arff"
            options = ["-N", "10", "-F", "3", *(["-V"] if invert else [])]
            runs.append([FOLDS, *options, "-i", str(path), "-c", class_option, "-o", str(out)])
            outputs[f"fold-{invert}", name] = out
    run_weka_filters(folder, runs)
    return outputs


def _filterkit(*args) -> bytes:
    result = run_filterkit(*args)
    assert result.status == 0, result.stderr
    return result.stdout


def _read(data: bytes | Path):
    import io

    return read_arff(io.BytesIO(data) if isinstance(data, bytes) else str(data))


@needs_weka
@pytest.mark.slow
@pytest.mark.parametrize("run, name", _cases(), ids="-".join)
def test_each_stage_writes_what_its_weka_filter_writes(weka_outputs, data_files, run, name):
    path, class_option = data_files[name]
    schema, chunk = _read(_filterkit("-c", class_option, path, *RUNS[run][1]))
    weka_schema, weka_chunk = _read(weka_outputs[run, name])
    assert [a.name for a in schema.attributes] == [a.name for a in weka_schema.attributes]
    for ours, theirs in zip(schema.attributes, weka_schema.attributes, strict=True):
        assert ours.same_declaration(theirs), (ours, theirs)
    # Weka prints numbers to 6 decimals
    np.testing.assert_allclose(chunk.dense_values(), weka_chunk.dense_values(), rtol=1e-9, atol=5e-7)
    for column, texts in chunk.text.items():
        assert texts == weka_chunk.text[column]
    if chunk.weights is not None:
        np.testing.assert_array_equal(chunk.weights, weka_chunk.weights)


def _rows(data: bytes) -> list[str]:
    text = data.decode()
    return [row for row in text[re.search(r"(?im)^@data\n", text).end() :].splitlines() if row]


def _class_counts(rows: list[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in rows:
        label = row.rsplit(",", 1)[-1]
        counts[label] = counts.get(label, 0) + 1
    return counts


@needs_weka
@pytest.mark.slow
@pytest.mark.parametrize("name", FOLD_SETS)
def test_fold_sizes_and_class_shares_are_wekas(weka_outputs, data_files, name):
    path, class_option = data_files[name]
    whole = _rows(_filterkit(path))
    for invert in (False, True):
        ours = _rows(
            _filterkit("-c", class_option, path, "fold", "--fold", "3", "--of", "10", *(["--invert"] * invert))
        )
        theirs = _rows(weka_outputs[f"fold-{invert}", name].read_bytes())
        # copies of a row stay together in filterkit's folds (Weka deals them out like other rows)
        copies = len(whole) - len(set(whole))
        assert abs(len(ours) - len(theirs)) <= copies
        ours_counts, theirs_counts = _class_counts(ours), _class_counts(theirs)
        assert ours_counts.keys() == theirs_counts.keys()
        assert all(abs(ours_counts[label] - theirs_counts[label]) <= 1 + copies for label in ours_counts)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["iris", "credit-g", "vehicle"])
def test_folds_are_disjoint_stratified_and_make_up_the_input(name):
    path = REAL / f"{name}.arff"
    whole = _rows(_filterkit(path))
    folds = [_rows(_filterkit(path, "fold", "--fold", str(k), "--of", "7", "--seed", "3")) for k in range(1, 8)]
    assert sorted(row for fold in folds for row in fold) == sorted(whole)
    distinct = sorted(set(whole))
    sizes = [len(set(fold)) for fold in folds]
    assert max(sizes) - min(sizes) <= 1
    counts = _class_counts(distinct)
    for fold in folds:
        for label, share in _class_counts(sorted(set(fold))).items():
            assert counts[label] // 7 <= share <= -(-counts[label] // 7)
    assert not set(folds[0]) & set(folds[1]), "copies of a row fall in one fold"
    # --invert keeps exactly the other rows, in input order
    training = _rows(_filterkit(path, "fold", "--fold", "2", "--of", "7", "--seed", "3", "--invert"))
    assert sorted(training + folds[1]) == sorted(whole)


@pytest.mark.slow
def test_fold_takes_the_same_rows_whatever_the_row_order_and_chunk_size(tmp_path):
    text = (REAL / "vehicle.arff").read_text()
    at = text.lower().index("@data\n") + len("@data\n")
    rows = text[at:].splitlines()
    shuffled = tmp_path / "shuffled.arff"
    shuffled.write_text(text[:at] + "\n".join(reversed(rows)) + "\n")
    plain = _rows(_filterkit(REAL / "vehicle.arff", "fold", "--fold", "4", "--seed", "9"))
    for argv in (["--chunk-rows", "1", REAL / "vehicle.arff"], ["--chunk-rows", "7", shuffled]):
        assert sorted(_rows(_filterkit(*argv, "fold", "--fold", "4", "--seed", "9"))) == sorted(plain)
    other_seed = _rows(_filterkit(REAL / "vehicle.arff", "fold", "--fold", "4", "--seed", "10"))
    assert sorted(other_seed) != sorted(plain)


def test_remove_never_removes_the_class_unless_named():
    iris = REAL / "iris.arff"
    assert _read(_filterkit(iris, "remove", "--range", "3-last"))[0].attributes[-1].name == "class"
    assert [a.name for a in _read(_filterkit(iris, "remove", "--regex", ".*l.*"))[0].attributes] == ["class"]
    named = _read(_filterkit(iris, "remove", "--names", "class,sepalwidth"))[0]
    assert [a.name for a in named.attributes] == ["sepallength", "petallength", "petalwidth"]
    assert "class" not in [a.name for a in _read(_filterkit(iris, "remove", "--range", "1,last"))[0].attributes]
    kept = _read(_filterkit(iris, "keep", "--regex", "petal.*"))[0]
    assert [a.name for a in kept.attributes] == ["petallength", "petalwidth", "class"]


@pytest.mark.parametrize(
    "words, message, status",
    [
        # options that make no sense together are usage errors (2), as click's own checks are;
        # options read against the data's header (ranges, names) fail in the data's terms (1)
        (["remove"], "needs --range, --names, --regex or --type", 2),
        (["remove", "--range", "2-9"], "'2-9' is not within 1-5", 1),
        (["remove", "--range", "1..3"], "is not a range like first-3,5,last", 1),
        (["keep", "--names", "petal"], "there is no attribute called 'petal'", 1),
        (["remove", "--regex", "("], "is not a regular expression", 2),
        (["fold", "--fold", "11"], "--fold: 11 is above --of 10", 2),
    ],
)
def test_bad_options_are_clear_errors(words, message, status):
    result = run_filterkit(REAL / "iris.arff", *words)
    assert result.status == status and message in result.stderr and "Traceback" not in result.stderr


def test_replace_missing_takes_the_weighted_mean_and_mode_and_leaves_the_class(tmp_path):
    path = tmp_path / "in.arff"
    path.write_text(
        "@relation r\n@attribute x numeric\n@attribute c {a,b,c}\n@attribute y {p,q}\n"
        "@data\n1,b,?,{3}\n?,a,p\n4,?,q\n?,c,?\n{0 2,1 c,2 q}\n"
    )
    schema, chunk = _read(_filterkit(path, "replace-missing"))
    # mean of x: (3·1 + 1·4 + 1·2) / 5 = 1.8; mode of c: a (1) b (3) c (1) by weight: b
    np.testing.assert_array_equal(chunk.dense_values()[:, 0], [1, 1.8, 4, 1.8, 2])
    np.testing.assert_array_equal(chunk.dense_values()[:, 1], [1, 0, 1, 2, 2])
    assert np.isnan(chunk.dense_values()[[0, 3], 2]).all()


# (remove-useless and replace-missing with their defaults are test_contract's checks of the built-in stages)
@pytest.mark.slow  # check_stage over three stages: 0.56 s CPU together
@pytest.mark.parametrize(
    "stage_class, options",
    [
        (RemoveAttributes, {"range": "1"}),
        (KeepAttributes, {"type": "numeric"}),
        (StratifiedFold, {"fold": 2, "of": 3}),
    ],
)
def test_each_stage_passes_check_stage(stage_class, options):
    assert check_stage(stage_class, **options)


@pytest.mark.slow
def test_replace_missing_and_fold_on_dask_give_the_local_output(tmp_path, data_files):
    distributed = pytest.importorskip("dask.distributed", reason="Dask is not installed")
    path, _ = data_files["credit-g-holes"]
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster:
        for chain in (["replace-missing"], ["fold", "--fold", "2", "--of", "5", "--invert"]):
            local = _filterkit(path, *chain)
            out = tmp_path / "dask.arff"
            _filterkit(
                "--engine",
                "dask",
                "--scheduler",
                cluster.scheduler_address,
                "--partitions",
                "3",
                "-o",
                out,
                path,
                *chain,
            )
            assert sorted(_rows(out.read_bytes())) == sorted(_rows(local))
