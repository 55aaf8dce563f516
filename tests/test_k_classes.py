"""k classes without dead ends (issue 49 item 8).

Where something needs a task (one positive class) and the class has more than two labels, the error names
every way to one: ``--positive LABEL``, and in ``evaluate`` ``--each-class`` and ``--multiclass``; a stage
without a k-class form says so.  ``auto`` has a k-class form: each class against the rest, one column group
``NAME@LABEL`` per label (docs/algorithms.md §14), checked against a hand computation on a tiny file, against
one two-class fit per class, across chunk sizes, in ``evaluate --multiclass`` and ``--each-class``, and in
the scikit-learn adapter.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from chain_helpers import REAL, without_comments
from filterkit.errors import FilterkitError
from filterkit.metrics import positive_code
from filterkit.plugin import NOMINAL, NUMERIC, Accepts, Attribute, Chunk, Schema, Stage
from filterkit.plugins import load_plugins
from filterkit.runner import Chain
from filterkit.sources import FileSource, MemorySource
from filterkit.tasks import choose_tasks
from filterkit.testing import read_output, run_filterkit
from filterkit_plugins.auto import TREATMENTS

IRIS = REAL / "iris.arff"
OH0 = REAL / "oh0.wc.arff"
EVERY_WAY_TO_A_TASK = (
    "--positive LABEL (that class against the rest), --each-class (each class against the rest, in turn) "
    "or --multiclass (all 3 classes at once)"
)


class PairScorer(Stage):
    """A third party's stage that needs a positive class and has no k-class form."""

    name = "pair-scorer"
    summary = "Counts the positive rows."
    learns = True
    accepts = Accepts(two_classes=True)

    def new_statistics(self):
        return 0

    def accumulate(self, statistics, chunk):
        return statistics + chunk.n_rows

    def finalize(self, statistics) -> None:
        self.rows = statistics


THREE_CLASSES = Schema(
    "three",
    (Attribute("x", NUMERIC, declared_type="numeric"), Attribute("class", NOMINAL, labels=("a", "b", "c"))),
)


def test_evaluate_without_a_task_names_positive_each_class_and_multiclass():
    with pytest.raises(FilterkitError) as raised:
        choose_tasks(("a", "b", "c"), np.array([5, 5, 5]), None, None, False, 1)
    assert str(raised.value) == f"the class has 3 labels: choose the task with {EVERY_WAY_TO_A_TASK}"


def test_a_stage_without_a_k_class_form_says_so_and_names_positive_and_each_class():
    rows = MemorySource(THREE_CLASSES, Chunk(np.array([[1.0, 0], [2.0, 1], [3.0, 2]])))
    with pytest.raises(FilterkitError) as raised:
        Chain([PairScorer()], class_spec="last").fit(rows)
    assert str(raised.value) == (
        "stage 'pair-scorer' needs a two-class task (it has no k-class form, so --multiclass cannot run it): the "
        "class 'class' has 3 labels: give --positive LABEL (that class against the rest), or run each class in "
        "turn with evaluate --each-class"
    )
    assert Chain([PairScorer()], class_spec="last", positive="b").fit(rows).stages[0].rows == 3


def test_a_positive_class_asked_of_k_labels_names_the_ways_to_one():
    with pytest.raises(FilterkitError, match=r"has 3 labels: give --positive LABEL \(that class against the rest\), "):
        positive_code(THREE_CLASSES.attributes[1], np.array([1.0, 1.0, 1.0]), None)


@pytest.mark.slow
@pytest.mark.parametrize("data, labels", [(IRIS, 3), (OH0, 10)], ids=["iris", "oh0"])
def test_evaluate_on_k_classes_without_a_task_is_one_line_naming_multiclass(data, labels):
    result = run_filterkit("evaluate", data, "shape", "bns", "l2")
    assert result.status == 1 and result.stdout == b""
    assert result.stderr.splitlines() == [
        f"filterkit: error: the class has {labels} labels: choose the task with "
        + EVERY_WAY_TO_A_TASK.replace("all 3", f"all {labels}")
    ]


@pytest.mark.slow
@pytest.mark.parametrize(
    "chain",
    [["bns"], ["shape"], ["select", "--metric", "bns", "--top", "2"], ["ig"], ["chi"], ["auto"]],
    ids=lambda chain: "-".join(chain),
)
def test_every_supervised_stage_runs_on_k_classes_without_positive(chain):
    result = run_filterkit(IRIS, *chain)
    assert result.status == 0 and result.stderr == ""
    schema, chunk = read_output(result.stdout)
    assert chunk.n_rows == 150 and schema.attributes[-1].labels == ("Iris-setosa", "Iris-versicolor", "Iris-virginica")


def write_tiny_file(path) -> None:
    """80 rows, classes a (40 rows), b and c (20 each), whose features carry the classes in known ways:
    ``band`` (dense) is about 5 on a, 1 on b and 9 on c; ``word`` (sparse: 0 on half the rows) is 0 on a,
    1 on b and 3 on c; ``flat`` is 2 everywhere.  Each row's ``band`` differs, so rows spread over the
    inner folds."""
    centre = {"a": 5.0, "b": 1.0, "c": 9.0}
    count = {"a": 0, "b": 1, "c": 3}
    labels = ["a"] * 40 + ["b"] * 20 + ["c"] * 20
    lines = ["@relation tiny", "@attribute band numeric", "@attribute word numeric", "@attribute flat numeric"]
    lines += ["@attribute class {a,b,c}", "@data"]
    for i, label in enumerate(labels):
        lines.append(f"{centre[label] + (i % 20 - 9.5) / 40:g},{count[label]},2,{label}")
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def tiny_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("k_classes") / "tiny.arff"
    write_tiny_file(path)
    return path


def fitted_auto(path, positive: str | None = None, **params):
    chain = Chain([load_plugins().make_stage("auto", params)], class_spec="last", positive=positive)
    chain.fit(FileSource(str(path)))
    return chain.stages[0]


def test_auto_on_k_classes_chooses_per_class_as_worked_out_by_hand(tiny_file):
    """By hand, each class against the rest (shaped copies only where shaping gains, so that each
    choice is one of the policy's steps):

    - ``band``, dense: a lies in the middle, so raw ranks a at chance (AUC ½) and shaping ranks it
      perfectly: shape clears, and a dense feature keeps its raw column too, ``both``; b lies lowest
      and c highest, so raw ranks them perfectly, its default, and nothing can gain over it: ``raw``.
    - ``word``, sparse, default presence: against a it is absent exactly on the positives, so presence
      turned round ranks perfectly and nothing gains: ``presence``; b and c both hold it, so presence
      ranks b (or c) above a but ties it with the other, AUC ¾: for c raw (3 above 1 above 0) ranks
      perfectly, the simplest that clears, ``raw``; for b only shaping (1 between 0 and 3) does,
      ``shape``, without a raw copy (a sparse feature keeps presence only by ``both``).
    - ``flat``: every criterion is ½, with support (40 or 20 rows of each side): ``drop``.
    """
    stage = fitted_auto(tiny_file, shape_copy="gain")
    chosen = np.array([TREATMENTS[code] for code in stage.treatment]).reshape(3, 3)
    assert chosen.tolist() == [["both", "raw", "raw"], ["presence", "shape", "raw"], ["drop", "drop", "drop"]]
    assert stage.fit_summary()[0] == "3 features × 3 classes: drop 3, presence 1, raw 3, shape 1, both 1"
    assert [attribute.name for attribute in stage.output_schema().attributes] == [
        "band@a",
        "band@a@shape",
        "band@b",
        "band@c",
        "word@a",
        "word@b",
        "word@c",
        "class",
    ]


def transformed(stage) -> np.ndarray:
    """Every row of iris through the fitted ``stage``, dense."""
    return np.vstack([chunk.dense_values() for chunk in map(stage.transform, FileSource(str(IRIS)).chunks())])


ONE_CLASS_ARRAYS = ("treatment", "criterion_raw", "criterion_shape", "scores", "factor", "copy_factor")


@pytest.mark.slow
def test_auto_on_k_classes_is_each_class_s_two_class_fit_side_by_side():
    """Column f·k + c of the k-class fit is feature f of the fit with ``--positive`` class c, its output
    column ``NAME@LABEL`` that fit's ``NAME``, value for value."""
    every = fitted_auto(IRIS)
    everything = transformed(every)
    names = [attribute.name for attribute in every.output_schema().attributes]
    for c, label in enumerate(every.class_attribute.labels):
        alone = fitted_auto(IRIS, positive=label)
        for key in ONE_CLASS_ARRAYS:
            np.testing.assert_array_equal(getattr(every, key)[c::3], getattr(alone, key), err_msg=key)
        output = transformed(alone)
        for j, attribute in enumerate(alone.output_schema().attributes[:-1]):
            base, _, copy = attribute.name.partition("@")
            name = f"{base}@{label}" + (f"@{copy}" if copy else "")
            np.testing.assert_array_equal(everything[:, names.index(name)], output[:, j], err_msg=name)


def every_fifth_row(source, target) -> None:
    """``source``'s header and every fifth of its rows (oh0: 201 of 1,003, every class kept)."""
    header, rows = re.split(r"(?im)^@data$", source.read_text(), maxsplit=1)
    target.write_text(header + "@data\n" + "\n".join(rows.strip().splitlines()[::5]) + "\n")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["iris", "oh0"])
def test_auto_on_k_classes_writes_the_same_bytes_whatever_the_chunk_size(name, tmp_path):
    """On iris and (one-row chunks cost ~1 ms each at oh0's 31,735 columns) every fifth row of oh0."""
    data = IRIS
    if name == "oh0":
        data = tmp_path / "oh0_fifth.arff"
        every_fifth_row(OH0, data)
    outputs = []
    for rows in ("1", "7", "100000"):
        path = tmp_path / f"{rows}.arff"
        assert run_filterkit("--chunk-rows", rows, "-o", path, data, "auto").status == 0
        outputs.append(path.read_bytes())
    assert outputs[0] == outputs[1] == outputs[2]
    schema, _ = read_output(outputs[0])
    labels = schema.attributes[-1].labels
    assert {attribute.name.split("@")[1] for attribute in schema.attributes[:-1]} == set(labels)


@pytest.mark.slow
def test_auto_model_on_k_classes_round_trips(tmp_path):
    model = tmp_path / "auto.json"
    fitted = run_filterkit("--save-model", model, IRIS, "auto", "l2")
    applied = run_filterkit("apply", model, IRIS)
    assert fitted.status == applied.status == 0
    assert without_comments(applied.stdout) == without_comments(fitted.stdout)


@pytest.mark.slow
@pytest.mark.parametrize("tasks", [["--multiclass"], ["--each-class"]])
def test_evaluate_runs_auto_on_k_classes(tasks):
    result = run_filterkit("evaluate", "-q", "--folds", "3", "--json", *tasks, IRIS, "auto", "l2")
    assert result.status == 0, result.stderr
    assert b'"auc"' in result.stdout


@pytest.mark.slow
def test_the_scikit_learn_auto_adapter_fits_k_classes():
    from sklearn.datasets import load_iris

    from filterkit.sklearn import transformer_for

    X, y = load_iris(return_X_y=True)
    auto = transformer_for("auto")().fit(X, y)
    names = auto.get_feature_names_out()
    assert names[:2].tolist() == ["x0@0", "x0@0@shape"] and len(names) == 24
    assert auto.transform(X).shape == (150, 24)


def test_a_one_class_auto_model_read_as_k_classes_is_refused(tmp_path):
    """A model fitted with --positive whose positive class is edited away: its arrays hold one entry per
    feature where the k-class stage needs one per feature and class."""
    model = tmp_path / "auto.json"
    assert run_filterkit("--save-model", model, "--positive", "Iris-setosa", IRIS, "auto").status == 0
    saved = json.loads(model.read_text())
    model.write_text(json.dumps({**saved, "positive": None}))
    result = run_filterkit("apply", model, IRIS)
    assert result.status == 1 and result.stdout == b""
    assert "stage 1 'auto': the model's saved state is invalid: 'treatment' has 4 entries, expected 12" in result.stderr


@pytest.mark.slow
def test_train_and_predict_take_auto_on_k_classes_with_multiclass(tmp_path):
    model = tmp_path / "auto.json"
    assert run_filterkit("train", "-o", model, "--multiclass", IRIS, "auto", "l2").status == 0
    predicted = run_filterkit("predict", model, IRIS)
    assert predicted.status == 0
    lines = predicted.stdout.decode().splitlines()
    assert lines[0].startswith("row,label,decision:Iris-setosa,decision:Iris-versicolor,decision:Iris-virginica")
    assert len(lines) == 151 and lines[1].split(",")[1] == "Iris-setosa"
