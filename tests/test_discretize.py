"""The ``discretize`` stage against Weka 3.6's supervised and unsupervised Discretize filters."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from chain_helpers import REAL, SHARED_DATA, UCI_SETS, needs_weka, run_weka_filters
from filterkit import discretization
from filterkit.arff import read_arff
from filterkit.errors import FilterkitError
from filterkit.schema import NOMINAL, NUMERIC, Attribute, Chunk, Schema, weka_range
from filterkit.stage import Context
from filterkit.testing import check_stage, run_filterkit
from filterkit_plugins.discretize import (
    Discretizer,
    equal_frequency_cut_points,
    equal_width_cut_points,
    range_labels,
)
from filterkit_plugins.ordinal import ThresholdEncoder

#: The larger two UCI sets of ../shared/data/uci, beside chain_helpers.UCI_SETS.
LARGER_SETS = {"letter": "last", "optdigits": "last"}
SUPERVISED = "weka.filters.supervised.attribute.Discretize"
UNSUPERVISED = "weka.filters.unsupervised.attribute.Discretize"
#: filterkit's options and Weka's filter and options, per mode compared.
MODES = {
    "mdl": ([], SUPERVISED, []),
    "mdl-binary": (["--binary"], SUPERVISED, ["-D"]),
    "equal-width": (["--bins", "10"], UNSUPERVISED, ["-B", "10"]),
    "equal-frequency": (["--bins", "10", "--equal-frequency"], UNSUPERVISED, ["-B", "10", "-F"]),
    "equal-width-binary": (["--bins", "4", "--binary"], UNSUPERVISED, ["-B", "4", "-D"]),
}

#: The (data set, mode) pairs compared with Weka: every mode on the small sets; the larger two
#: (20,000 and 5,620 rows) for the MDL cut points only, where their size tests something the
#: small sets do not (the other modes' ~140 two-label attributes add minutes and no new case).
COMPARED = [(name, mode) for name in sorted(UCI_SETS) for mode in sorted(MODES)] + [
    (name, "mdl") for name in sorted(LARGER_SETS)
]
#: Data of ±Infinity and ±1e308 (issue 37, item 13), written by :func:`extreme_files`, and the
#: modes compared on each: MDL and equal frequency cut ±Infinity as Weka does, equal width
#: cuts ±1e308 at Infinity (the width passes the largest double).
EXTREME = {"infinite": ["mdl", "mdl-binary", "equal-frequency", "equal-frequency-3"], "huge": ["equal-width-3"]}
#: A date attribute (written with its zone, as Weka reads one in the local zone and filterkit in UTC) beside a number:
#: Weka's ``isNumeric`` holds dates, so its Discretize bins them by their milliseconds since 1970 (filterkit left them).
DATES = (
    "@relation dates\n@attribute x numeric\n@attribute d date \"yyyy-MM-dd'T'HH:mm:ssZ\"\n@attribute c {a,b}\n@data\n"
)
DATES += "".join(
    f"{k},{2000 + k % 7}-0{1 + k % 9}-1{k % 10}T0{k % 10}:00:00+0000,{'ab'[k % 3 == 0]}\n" for k in range(40)
)
DATES += "3,?,a\n"
EXTREME["dates"] = ["mdl", "mdl-binary", "equal-width-3", "equal-frequency-3"]
MODES["equal-frequency-3"] = (["--bins", "3", "--equal-frequency", "--binary"], UNSUPERVISED, ["-B", "3", "-F", "-D"])
MODES["equal-width-3"] = (["--bins", "3"], UNSUPERVISED, ["-B", "3"])


def _rows(*groups: tuple[int, str]) -> str:
    return "".join(row + "\n" for count, row in groups for _ in range(count))


@pytest.fixture(scope="session")
def extreme_files(tmp_path_factory) -> dict[str, Path]:
    """``infinite``: x with -Infinity, 1…12 and Infinity rows and missing values (Weka sorts a
    missing value as the largest double, below Infinity, and cuts only the values before it);
    y of -Infinity and Infinity only (the cut between them is NaN); z of ±1e308 and 1.7e308, whose
    midpoint passes the largest double.  ``huge``: ±1e308, whose equal-width bins are Infinity wide."""
    folder = tmp_path_factory.mktemp("extreme")
    header = "@relation {}\n" + "".join(f"@attribute {n} numeric\n" for n in "xyz") + "@attribute c {{a,b}}\n@data\n"
    steps = "".join(f"{k},-Infinity,1.7e308,b\n" for k in range(1, 13))
    infinite = _rows(
        (12, "-Infinity,-Infinity,1e308,a"), (12, "Infinity,Infinity,-1e308,a"), (6, "?,Infinity,1.7e308,b")
    )
    huge = _rows((3, "1e308,1,2,a"), (3, "-1e308,3,4,b"), (2, "0,5,?,a"))
    files = {name: folder / f"{name}.arff" for name in EXTREME}
    files["infinite"].write_text(header.format("infinite") + steps + infinite)
    files["huge"].write_text(header.format("huge") + huge)
    files["dates"].write_text(DATES)
    return files


def _data_file(name: str) -> Path | None:
    if name in UCI_SETS:
        return REAL / f"{name}.arff"
    path = SHARED_DATA / "uci" / f"{name}.arff"
    return path if path.is_file() else None


@pytest.fixture(scope="session")
def weka_outputs(tmp_path_factory, extreme_files) -> dict[tuple[str, str], Path]:
    """Weka's output file per compared (data set, mode), all from one JVM."""
    folder = tmp_path_factory.mktemp("weka_discretize")
    outputs, runs = {}, []
    for name, modes in EXTREME.items():
        for mode in modes:
            _, filter_class, options = MODES[mode]
            outputs[name, mode] = folder / f"{name}.{mode}.arff"
            runs.append(
                [filter_class, *options, "-i", str(extreme_files[name]), "-c", "last", "-o", str(outputs[name, mode])]
            )
    for name, mode in COMPARED:
        class_option = {**UCI_SETS, **LARGER_SETS}[name]
        path = _data_file(name)
        if path is None:
            continue
        _, filter_class, options = MODES[mode]
        out = folder / f"{name}.{mode}.arff"
        runs.append([filter_class, *options, "-i", str(path), "-c", class_option, "-o", str(out)])
        outputs[name, mode] = out
    run_weka_filters(folder, runs)
    return outputs


def _filterkit(*args: str) -> bytes:
    """What ``filterkit ARGS…`` writes, run in this process (no interpreter start per test)."""
    result = run_filterkit(*args)
    assert result.status == 0, result.stderr
    return result.stdout


def _assert_same_data(ours: Path, theirs: Path) -> None:
    schema, chunk = read_arff(str(ours))
    weka_schema, weka_chunk = read_arff(str(theirs))
    assert [a.name for a in schema.attributes] == [a.name for a in weka_schema.attributes]
    for attribute, weka_attribute in zip(schema.attributes, weka_schema.attributes, strict=True):
        assert attribute.same_declaration(weka_attribute), (attribute, weka_attribute)
    np.testing.assert_array_equal(chunk.dense_values(), weka_chunk.dense_values())


@needs_weka
@pytest.mark.parametrize("name, mode", COMPARED, ids="-".join)
def test_discretize_writes_what_weka_writes(weka_outputs, tmp_path, name, mode):
    path = _data_file(name)
    if path is None:
        pytest.skip(f"{name}.arff is in ../shared/data only, which is not beside this clone")
    class_option = {**UCI_SETS, **LARGER_SETS}[name]
    ours = tmp_path / "out.arff"
    _filterkit("-c", class_option, "-o", str(ours), str(path), "discretize", *MODES[mode][0])
    _assert_same_data(ours, weka_outputs[name, mode])


@needs_weka
@pytest.mark.parametrize("name, mode", [(name, mode) for name in ("infinite", "huge") for mode in EXTREME[name]])
def test_infinite_and_huge_values_discretize_as_in_weka(weka_outputs, extreme_files, name, mode):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy RuntimeWarning reaches stderr
        ours = _filterkit(str(extreme_files[name]), "discretize", *MODES[mode][0]).decode()
    theirs = weka_outputs[name, mode].read_text()
    body = [line for line in ours.splitlines() if line and not line.startswith(("%", "@relation"))]
    assert body == [line for line in theirs.splitlines() if line and not line.startswith("@relation")]
    assert "Infinity" in ours


@needs_weka
@pytest.mark.parametrize("mode", EXTREME["dates"])
def test_dates_discretize_by_their_milliseconds_as_in_weka(weka_outputs, extreme_files, mode):
    ours = _filterkit(str(extreme_files["dates"]), "discretize", *MODES[mode][0]).decode()
    theirs = weka_outputs["dates", mode].read_text()
    body = [line for line in ours.splitlines() if line and not line.startswith(("%", "@relation"))]
    assert body == [line for line in theirs.splitlines() if line and not line.startswith("@relation")]
    assert " date " not in ours.split("@data")[0]


def test_a_model_holds_infinite_cut_points_but_refuses_a_nan_one(extreme_files, tmp_path):
    model = tmp_path / "model.json"
    trained = _filterkit("--save-model", str(model), str(extreme_files["infinite"]), "discretize")
    assert b"'\\'(-inf--Infinity]\\''" in trained
    applied = _filterkit("apply", str(model), str(extreme_files["infinite"]))
    assert applied.split(b"\n", 1)[1] == trained.split(b"\n", 1)[1]
    refused = run_filterkit(
        "--save-model", str(model), str(extreme_files["infinite"]), "discretize", "--bins", "3", "--equal-frequency"
    )
    assert refused.status == 1
    assert refused.stderr == (
        "filterkit: error: stage 'discretize': attribute 'y' has a cut point between -Infinity and Infinity, NaN, "
        "which a model cannot hold\n"
    )


def test_infinite_values_to_transform_fall_in_the_outer_bins_and_thresholds():
    stage = _fitted_on_values(np.r_[np.arange(20.0), np.arange(20.0, 40.0)], [0] * 20 + [1] * 20)
    chunk = Chunk(np.array([[-np.inf, 0.0], [np.inf, 1.0], [5.0, 0.0]]), {}, None)
    assert stage.transform(chunk).dense_values()[:, 0].tolist() == [0.0, 1.0, 0.0]
    schema = Schema("r", (Attribute("n", NUMERIC), Attribute("m", NUMERIC), Attribute("c", NOMINAL, ("a", "b"))))
    ordinal = ThresholdEncoder()
    ordinal.prepare(schema, Context(class_index=2))
    training = Chunk(np.array([[1.0, 1, 0], [2, 2, 1], [3, 3, 0]]))
    ordinal.finalize(ordinal.accumulate(ordinal.new_statistics(), training))
    encoded = ordinal.transform(Chunk(sp.csr_matrix(np.array([[np.inf, 1.0, 0.0], [2.0, np.inf, 1.0]]))))
    assert encoded.dense_values().tolist() == [[1.0, 1, 1, 1, 0, 0, 0], [1, 1, 0, 1, 1, 1, 1]]


@needs_weka
def test_discretize_header_and_rows_are_wekas_bytes(weka_outputs):
    ours = _filterkit(str(REAL / "iris.arff"), "discretize").decode()
    theirs = weka_outputs["iris", "mdl"].read_text()
    body = [line for line in ours.splitlines() if line and not line.startswith(("%", "@relation"))]
    assert body == [line for line in theirs.splitlines() if line and not line.startswith("@relation")]


@pytest.mark.slow
@pytest.mark.parametrize("options", [[], ["--binary"], ["--bins", "5", "--equal-frequency"]], ids=str)
def test_saved_model_applies_as_the_training_run(tmp_path, options):
    model = tmp_path / "model.json"
    trained = _filterkit("--save-model", str(model), str(REAL / "glass.arff"), "discretize", *options)
    applied = _filterkit("apply", str(model), str(REAL / "glass.arff"))
    # the first line is the comment naming the command (chain or apply)
    assert applied.split(b"\n", 1)[1] == trained.split(b"\n", 1)[1]
    assert b"{'\\'(-inf-" in applied


# (the default options are test_contract's check of the built-in stage ``discretize``)
@pytest.mark.slow
@pytest.mark.parametrize("options", [{"binary": True}, {"bins": 3}, {"bins": 3, "equal_frequency": True}], ids=str)
def test_discretize_passes_the_stage_contract(options):
    check_stage(Discretizer, **options)


def test_a_zero_below_every_cut_point_stays_zero_in_sparse_output():
    schema, chunk = read_arff(str(REAL / "oh0.wc.arff"))
    stage = Discretizer()
    from filterkit.stage import Context

    stage.prepare(schema, Context(class_index=len(schema) - 1))
    statistics = stage.accumulate(stage.new_statistics(), chunk)
    stage.finalize(statistics)
    assert stage.preserves_zeros()
    out = stage.transform(chunk)
    assert out.is_sparse
    assert out.values.nnz <= chunk.values.nnz


def test_a_zero_above_a_cut_point_is_written_as_its_bin():
    stage = _fitted_on_values(np.array([-3.0, -2.0, 0.0, 0.0, 1.0, 2.0]), [0, 0, 1, 1, 1, 1])
    assert stage.cut_points.tolist() == [-1.0]
    assert not stage.preserves_zeros()
    import scipy.sparse as sp

    from filterkit.schema import Chunk

    sparse = Chunk(sp.csr_matrix(np.array([[0.0, 1.0], [-3.0, 0.0]])), {}, None)
    assert stage.transform(sparse).dense_values().tolist() == [[1.0, 1.0], [0.0, 0.0]]


def _fitted_on_values(values: np.ndarray, classes: list[int], **options) -> Discretizer:
    from filterkit.schema import NOMINAL, NUMERIC, Attribute, Chunk, Schema
    from filterkit.stage import Context

    schema = Schema("r", (Attribute("x", NUMERIC, declared_type="numeric"), Attribute("c", NOMINAL, ("a", "b"))))
    chunk = Chunk(np.column_stack([values, np.array(classes, dtype=float)]), {}, None)
    stage = Discretizer(**options)
    stage.prepare(schema, Context(class_index=1))
    stage.finalize(stage.accumulate(stage.new_statistics(), chunk))
    return stage


def test_missing_values_stay_missing_in_every_binary_attribute():
    from filterkit.schema import Chunk

    values = np.r_[np.arange(20.0), np.arange(20.0, 40.0), np.arange(40.0, 60.0)]
    stage = _fitted_on_values(values, [0] * 20 + [1] * 20 + [0] * 20, binary=True)
    assert stage.cut_points.tolist() == [19.5, 39.5]
    out = stage.transform(Chunk(np.array([[np.nan, 0.0], [25.0, 1.0], [50.0, 0.0]]), {}, None)).dense_values()
    assert np.isnan(out[0, :2]).all()
    assert out[1:, :2].tolist() == [[1.0, 0.0], [1.0, 1.0]]


def test_weka_range_labels_and_ranges():
    assert range_labels(np.array([2.45, 4.75]), "a") == ("'(-inf-2.45]'", "'(2.45-4.75]'", "'(4.75-inf)'")
    assert range_labels(np.zeros(0), "a") == ("'All'",)
    assert weka_range("first-last", 4, "--attributes")[0].tolist() == [0, 1, 2, 3]
    assert weka_range("1,3-last", 5, "--attributes")[0].tolist() == [0, 2, 3, 4]
    # a span either way round, as Weka's Range (Remove -R 3-1 keeps petalwidth and the class of iris)
    assert weka_range("3-1", 5, "--attributes")[0].tolist() == [0, 1, 2]
    assert weka_range("last-first", 4, "--attributes")[0].tolist() == [0, 1, 2, 3]
    with pytest.raises(FilterkitError, match="--attributes"):
        weka_range("2-9", 5, "--attributes")


def test_equal_width_and_equal_frequency_cut_points():
    assert equal_width_cut_points(0.0, 10.0, 4).tolist() == [2.5, 5.0, 7.5]
    assert equal_width_cut_points(3.0, 3.0, 4).tolist() == []
    # eight rows of weight 1 at 0 … 7 in two bins: the cut after the fourth
    assert equal_frequency_cut_points(np.arange(8.0), np.ones(8), 2).tolist() == [3.5]
    # a heavy value: the boundary nearer the target of 5 wins (after 1: 2 rows, after 2: 9)
    assert equal_frequency_cut_points(np.arange(4.0), np.array([1.0, 1.0, 7.0, 1.0]), 2).tolist() == [1.5]


def test_supervised_discretize_needs_a_nominal_class():
    from filterkit.schema import NUMERIC, Attribute, Schema
    from filterkit.stage import Context

    schema = Schema("r", (Attribute("x", NUMERIC), Attribute("y", NUMERIC)))
    with pytest.raises(FilterkitError, match="nominal class"):
        Discretizer().prepare(schema, Context(class_index=1))
    with pytest.raises(FilterkitError, match="needs --bins"):
        Discretizer(equal_frequency=True)


def test_supervised_cut_points_cost_the_classes_with_rows_not_the_declared_labels():
    import tracemalloc

    generator = np.random.default_rng(5)
    x = generator.permutation(2_000).astype(float)
    values = np.column_stack([x, (x >= 700) & (x < 1_500)])
    cuts = {}
    for labels in (("a", "b"), ("a", "b", *(f"unused{k}" for k in range(3_000)))):
        schema = Schema("r", (Attribute("x", NUMERIC), Attribute("class", NOMINAL, labels)))
        stage = Discretizer()
        stage.prepare(schema, Context(class_index=1))
        statistics = stage.accumulate(stage.new_statistics(), Chunk(values, {}))
        tracemalloc.start()
        stage.finalize(statistics)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        cuts[len(labels)] = stage.state()["cut_points"]
    # a column per declared label: 2,000 values x 3,002 classes took 48 MB
    assert peak < 5_000_000
    assert cuts[3_002].tolist() == cuts[2].tolist() == [699.5, 1_499.5]


def test_the_tabled_logarithm_is_math_log_to_the_bit():
    """Whole counts read their logarithm from a table grown as larger ones come; every other value, NaN and the
    table's edges take math.log itself, and values that are not positive take 0."""
    generator = np.random.default_rng(5)
    edges = [np.nan, np.inf, -np.inf, 0.0, -0.0, -2.0, 0.5, 1.0, 2.0, 65535.0, 65536.0, 65537.0, 1e300, 5e-324]
    for largest in (3, 300, 70_000, 40):  # the table grows, then serves smaller counts
        values = np.concatenate([generator.integers(-3, largest, 2_000).astype(float), generator.random(300) * 1e6])
        values = np.concatenate([values, edges])
        generator.shuffle(values)
        expected = np.array([0.0 if value <= 0 else math.log(value) for value in values.tolist()])
        logs = discretization._ln(values.reshape(-1, 2))
        assert logs.shape == (len(values) // 2, 2)
        assert np.array_equal(logs.ravel(), expected, equal_nan=True)
        assert np.array_equal(
            logs.ravel().view(np.int64)[~np.isnan(expected)], expected.view(np.int64)[~np.isnan(expected)]
        )


def test_more_classes_than_3_to_the_k_holds_refuse_every_cut_as_weka_does():
    """Issue 72: the MDL criterion's log2(3^k − 2) overflowed a double from k = 647 classes with rows
    (OverflowError, so ig and chi on many classes failed); Java's Math.pow gives Infinity there, and
    no split passes an infinite threshold."""
    values = np.arange(1_400, dtype=np.float64)
    class_counts = np.zeros((1_400, 700))
    class_counts[np.arange(1_400), np.arange(1_400) // 2] = 1.0
    assert discretization.mdl_cut_points(values, class_counts, better_encoding=True).tolist() == []


def test_equal_width_bins_past_the_header_bound_are_refused_as_their_labels_are_made(run_filterkit, monkeypatch):
    # without --binary the check counted labels in one attribute, not the header's bytes: 20 attributes and
    # --bins 999999 ran a minute to an out-of-memory error; here, 4 of iris's attributes past a small bound were
    # written (exit 0) as a header filterkit then refuses to read
    monkeypatch.setenv("FILTERKIT_MAX_HEADER_BYTES", "20000")
    result = run_filterkit(REAL / "iris.arff", "discretize", "--bins", "1000")
    assert result.status == 1 and result.stdout == b""
    assert "stage 'discretize' would write" in result.stderr and "bytes of header at least, more than the 20,000" in (
        result.stderr
    )
    assert result.stderr.endswith("make fewer bins with --bins N\n")
