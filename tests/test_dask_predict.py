"""``predict`` and ``apply`` with ``--engine dask`` (issue 76, item 3): a model's fitted chain (and classifier)
applied over partitions on a Dask cluster writes the bytes of one process, in the input's row order, whatever the
partitioning; an input the engine cannot cut is refused as a chain run refuses it; a bad row is the one error line
of a local run, with no -o file; a worker with another version of the model's classifier is refused as one with
another stage.

The runs use the module's ``LocalCluster`` of two worker processes (``conftest.py``'s ``dask_scheduler``); the
models are trained once per module on shipped files."""

from __future__ import annotations

import io
import json
import re
import tempfile
from pathlib import Path

import pytest

import filterkit
from chain_helpers import REAL, TESTS, InventoryClient
from filterkit import cli, plugins
from filterkit.errors import FilterkitError
from filterkit.runner import Chain

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("dask_distributed")]  # a Dask cluster

SAMPLES = TESTS.parent / "arff_samples"
GRAIN = REAL / "reuters_grain_sample.arff"
IRIS = REAL / "iris.arff"
LABELS = TESTS / "data" / "multilabel" / "reuters-grain-corn.arff"
FAST = ("--svm-c-values", "0.1,1", "--svm-inner-folds", "2")
#: Rows a chunk: several chunks a partition, numbered on from the chunk before.
SMALL_CHUNKS = ("--chunk-rows", "7")


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    """Models of ``train`` (binary on Reuters grain's documents, multi-class on iris, multi-label on Reuters
    grain and corn) and of a chain saved with --save-model (on grain's documents), by name."""
    folder = tmp_path_factory.mktemp("models")
    made = {name: folder / f"{name}.json" for name in ("binary", "multiclass", "labels", "chain")}
    for name, arguments in (
        ("binary", [GRAIN, "words", "--counts", "bns", "l2"]),
        ("multiclass", ["--multiclass", IRIS, "minmax"]),
        ("labels", [LABELS, "words", "--lowercase", "bns", "l2"]),
    ):
        assert cli.run(["train", "-q", "-o", str(made[name]), *FAST, *map(str, arguments)]) == 0
    chain = ["-q", "--save-model", made["chain"], "-o", folder / "out.arff", GRAIN, "words", "--counts", "bns", "l2"]
    assert cli.run(list(map(str, chain))) == 0
    return made


def on_dask(scheduler: str, partitions: int) -> tuple:
    """The options of a run on the module's cluster, its input cut into ``partitions``, chunks of 7 rows."""
    return ("--engine", "dask", "--scheduler", scheduler, "--partitions", partitions, *SMALL_CHUNKS)


def written(run_filterkit, output: Path, *argv) -> bytes:
    """What ``filterkit ARGV -o OUTPUT`` writes to OUTPUT (the run checked to succeed; the file removed)."""
    result = run_filterkit(*argv, "-o", output)
    assert result.status == 0, result.stderr
    data = output.read_bytes()
    output.unlink()
    return data


PREDICT_CASES = [
    ("binary", GRAIN, "p.csv"),
    ("binary", SAMPLES / "reuters_grain.csv", "p.jsonl"),
    ("binary", SAMPLES / "reuters_grain.jsonl", "p.csv.gz"),
    ("multiclass", IRIS, "p.csv"),
    ("labels", LABELS, "p.jsonl"),
]


@pytest.mark.parametrize(
    "model, input_path, output", PREDICT_CASES, ids=[f"{m}-{i.name}-{o}" for m, i, o in PREDICT_CASES]
)
def test_predict_on_dask_writes_the_bytes_of_one_process(
    run_filterkit, dask_scheduler, tmp_path, models, model, input_path, output
):
    here = written(run_filterkit, tmp_path / output, "predict", models[model], input_path)
    for partitions in (1, 3):
        options = on_dask(dask_scheduler, partitions)
        on_cluster = written(run_filterkit, tmp_path / output, "predict", *options, models[model], input_path)
        assert on_cluster == here, f"{partitions} partition(s)"


APPLY_CASES = [
    ("chain", GRAIN),
    ("chain", SAMPLES / "reuters_grain.csv"),  # the relation is the file's, as one process names it
    ("binary", SAMPLES / "reuters_grain.jsonl"),
    ("multiclass", IRIS),
    ("labels", LABELS),
]


@pytest.mark.parametrize("model, input_path", APPLY_CASES, ids=[f"{m}-{i.name}" for m, i in APPLY_CASES])
def test_apply_on_dask_writes_the_bytes_of_one_process(
    run_filterkit, dask_scheduler, tmp_path, models, model, input_path
):
    here = written(run_filterkit, tmp_path / "out.arff", "apply", models[model], input_path)
    assert b"\n@data\n" in here
    for partitions in (1, 2, 5):
        options = on_dask(dask_scheduler, partitions)
        on_cluster = written(run_filterkit, tmp_path / "out.arff", "apply", *options, models[model], input_path)
        assert on_cluster == here, f"{partitions} partition(s)"


def test_the_engine_predicts_each_partition_in_the_input_order(dask_scheduler, models):
    from filterkit.commands.predict import PredictionWriter
    from filterkit.distributed import DaskEngine
    from filterkit.trained import load_model

    model = load_model(models["multiclass"])
    stream = io.BytesIO()
    with DaskEngine.connect(dask_scheduler, None, 7, partitions=4) as engine:
        with engine.opened(model.chain, str(IRIS)) as plan:
            assert len(plan.partitions) == 4
            engine.write_predictions(model, plan, PredictionWriter(), stream, None)
    records = [json.loads(line) for line in stream.getvalue().decode().splitlines()]
    assert [record["row"] for record in records] == list(range(1, 151))
    # iris lists its classes in turn, 50 rows each: the training rows' predictions follow them
    predicted = [record["label"] for record in records]
    assert predicted[:45].count("Iris-setosa") == 45 and predicted[-10:].count("Iris-virginica") >= 8


def test_an_input_the_engine_cannot_cut_is_refused_as_a_chain_run_refuses_it(run_filterkit, tmp_path, models):
    rows = tmp_path / "rows.svm"
    rows.write_text("1 1:2 3:4\n0 2:1\n")
    output = tmp_path / "p.csv"
    chain_run = run_filterkit("--engine", "dask", "-o", tmp_path / "out.arff", rows)
    refusal = chain_run.stderr.splitlines()[-1]
    assert chain_run.status == 2 and "--engine dask reads arff, csv and jsonl only" in refusal
    for command, model in (("predict", "binary"), ("apply", "chain")):
        result = run_filterkit(command, "--engine", "dask", "-o", output, models[model], rows)
        assert (result.status, result.stderr.splitlines()[-1]) == (2, refusal)
        assert not output.exists()


def test_a_bad_row_is_one_error_line_naming_its_line_and_leaves_no_output(
    run_filterkit, dask_scheduler, tmp_path, models
):
    lines = IRIS.read_text().splitlines(keepends=True)
    row = next(number for number, line in enumerate(lines, 1) if line.startswith("5.1,3.8,1.6"))
    lines[row - 1] = "abc" + lines[row - 1][3:]
    bad = tmp_path / "bad.arff"
    bad.write_text("".join(lines))
    expected = f"filterkit: error: {bad}:{row}: value 'abc' of attribute 'sepallength' is not a number\n"
    for command, output in (("predict", tmp_path / "out.csv"), ("apply", tmp_path / "out.arff")):
        here = run_filterkit(command, models["multiclass"], bad, "-o", output)
        assert (here.status, here.stderr) == (1, expected)
        for partitions in (1, 3):
            options = on_dask(dask_scheduler, partitions)
            result = run_filterkit(command, *options, models["multiclass"], bad, "-o", output)
            assert (result.status, result.stderr) == (1, here.stderr)
            assert not output.exists()
            assert not list(tmp_path.glob(".filterkit-parts-*"))


def test_engine_options_are_checked_before_any_work(run_filterkit, tmp_path, models):
    output = tmp_path / "p.csv"
    for extra, message in (
        (("--scheduler", "tcp://127.0.0.1:1"), "--scheduler, --workers and --partitions need --engine dask"),
        (("--partitions", "2"), "--scheduler, --workers and --partitions need --engine dask"),
        (("--engine", "dask", "--scheduler", "tcp://127.0.0.1:1", "--workers", "2"), "which --scheduler replaces"),
        (("--engine", "dask", "--scheduler", "tcp://127.0.0.1:1"), "with --scheduler, give -o FILE"),
    ):
        for command, model in (("predict", "binary"), ("apply", "chain")):
            result = run_filterkit(command, *extra, models[model], GRAIN)
            assert result.status == 2 and message in result.stderr, (command, extra, result.stderr)
    result = run_filterkit("apply", "--engine", "dask", "-o", output, models["chain"], GRAIN)
    assert result.status == 2 and "--engine dask writes ARFF only" in result.stderr
    assert not output.exists()


def test_labels_named_by_a_file_reach_the_workers(run_filterkit, dask_scheduler, tmp_path):
    # Mulan's XML names the labels (the relation does not): the tasks' chain must know them, or bns finds no class.
    data = tmp_path / "labels.arff"
    data.write_text(LABELS.read_text().replace("@relation 'Reuters-21578 grain and corn: -C 2'", "@relation plain"))
    names = tmp_path / "labels.xml"
    names.write_text(
        '<?xml version="1.0" encoding="utf-8"?>\n<labels xmlns="http://mulan.sourceforge.net/labels">\n'
        '<label name="grain"></label>\n<label name="corn"></label>\n</labels>\n'
    )
    model = tmp_path / "m.json"
    chain = ("-q", "--labels", names, data, "words", "bns", "l2")
    here = written(run_filterkit, tmp_path / "out.arff", "--save-model", model, *chain)
    options = on_dask(dask_scheduler, 3)
    assert written(run_filterkit, tmp_path / "out.arff", *options, *chain) == here
    applied = written(run_filterkit, tmp_path / "out.arff", "apply", model, data)
    assert written(run_filterkit, tmp_path / "out.arff", "apply", *options, model, data) == applied


def checked_for_svm(inventories: dict, classifier: bool = True) -> None:
    """Check workers of ``inventories`` for a chain of l2 and (``classifier``) the svm classifier."""
    from filterkit.distributed import DaskEngine

    registry = plugins.load_plugins()
    engine = DaskEngine(InventoryClient(inventories), None, 1000)
    engine.check_workers(Chain([registry.make_stage("l2", {})]), registry.classifiers["svm"] if classifier else None)


def test_a_worker_with_another_version_of_the_classifier_is_named_as_a_stage_is():
    from filterkit.distributed import worker_inventory

    inventory = worker_inventory(None)
    older = {**inventory, "classifiers": {**inventory["classifiers"], "svm": ["classifiers", "filterkit", "0.0.9"]}}
    checked_for_svm({"tcp://a:1": inventory, "tcp://b:2": inventory})
    checked_for_svm({"tcp://a:1": inventory, "tcp://b:2": older}, classifier=False)  # apply rebuilds no classifier
    with pytest.raises(FilterkitError) as raised:
        checked_for_svm({"tcp://a:1": inventory, "tcp://b:2": older})
    assert str(raised.value) == (
        "Dask worker tcp://b:2 has classifier 'svm' from plugin 'classifiers', distribution 'filterkit 0.0.9', "
        f"the client from plugin 'classifiers', distribution 'filterkit-arff {filterkit.__version__}'; "
        "install the same version everywhere"
    )
    lacking = {**inventory, "classifiers": {}}
    with pytest.raises(FilterkitError) as raised:
        checked_for_svm({"tcp://a:1": lacking})
    assert str(raised.value) == (
        "Dask worker tcp://a:1 has no classifier 'svm' (the client has it from plugin 'classifiers', "
        f"distribution 'filterkit-arff {filterkit.__version__}'); install the plugin on every worker"
    )


def test_predict_refuses_workers_with_another_version_of_the_model_s_classifier(
    run_filterkit, dask_scheduler, newer_svm_here, tmp_path, models
):
    output = tmp_path / "p.csv"
    result = run_filterkit("predict", *on_dask(dask_scheduler, 2), models["binary"], GRAIN, "-o", output)
    version = re.escape(filterkit.__version__)
    assert result.status == 1 and re.fullmatch(
        rf"filterkit: error: Dask worker tcp://[0-9.]+:[0-9]+ has classifier 'svm' from plugin 'classifiers', "
        rf"distribution 'filterkit-arff {version}', the client from plugin 'classifiers', distribution "
        rf"'filterkit-arff {version}\.client'; install the same version everywhere\n",
        result.stderr,
    ), result.stderr
    assert list(tmp_path.iterdir()) == []
    applied = run_filterkit("apply", *on_dask(dask_scheduler, 2), models["binary"], GRAIN, "-o", tmp_path / "o.arff")
    assert applied.status == 0, applied.stderr  # apply's chain has no classifier to check


def iris_with_a_bad_row(folder: Path, row: int) -> Path:
    """iris.arff with the sepal length of its data row ``row`` (from 1) not a number."""
    lines = IRIS.read_text().splitlines(keepends=True)
    data = [number for number, line in enumerate(lines) if line[:1].isdigit()]
    lines[data[row - 1]] = "abc" + lines[data[row - 1]][3:]
    bad = folder / f"bad-{row}.arff"
    bad.write_text("".join(lines))
    return bad


def test_predict_on_a_local_cluster_to_standard_output(run_filterkit, filterkit_script, monkeypatch, tmp_path, models):
    # No --scheduler: predict starts its own cluster and the parts go to the system's temporary folder.
    parts_in = tmp_path / "tmp"
    parts_in.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(parts_in))
    here = run_filterkit("predict", *SMALL_CHUNKS, models["multiclass"], IRIS)
    assert here.status == 0 and here.stdout.count(b"\n") == 151
    local_cluster = ("--engine", "dask", "--workers", "1", "--partitions", "3", *SMALL_CHUNKS, models["multiclass"])
    result = run_filterkit("predict", *local_cluster, IRIS)
    assert (result.status, result.stdout, result.stderr) == (0, here.stdout, "")
    assert not list(parts_in.glob(".filterkit-parts-*"))
    # A failed run in a process of its own (what reaches the real standard output; TMPDIR the parts' folder).
    # A bad row in the first partition: nothing written, as the local run, whose buffer holds its first rows.
    early = iris_with_a_bad_row(tmp_path, 4)
    local = filterkit_script("predict", *SMALL_CHUNKS, models["multiclass"], early)
    assert (local.status, local.stdout) == (1, b"")
    result = filterkit_script("predict", *local_cluster, early, env={"TMPDIR": str(parts_in)})
    assert (result.status, result.stdout, result.stderr) == (1, b"", local.stderr)
    # In the last partition: the header and the partitions before it, the local predictions' first lines.
    result = filterkit_script(
        "predict", *local_cluster, iris_with_a_bad_row(tmp_path, 141), env={"TMPDIR": str(parts_in)}
    )
    assert result.status == 1 and ":213: value 'abc'" in result.stderr
    assert here.stdout.startswith(result.stdout) and result.stdout.endswith(b"\n")
    assert 1 < result.stdout.count(b"\n") < 141
    assert not list(parts_in.glob(".filterkit-parts-*"))
