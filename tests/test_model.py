"""Batch mode and model files: --save-model, ``filterkit apply``, format_version, no pickle,
one file that can be renamed, and the two-file models of filterkit 0.2 still read."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from chain_helpers import (
    FIXTURE_PLUGINS,
    REAL,
    STAGES_DIR,
    TESTS,
    assert_same_values,
    read_bytes,
    without_comments,
)
from filterkit.arff import read_arff
from filterkit.errors import FilterkitError
from filterkit.model import FORMAT_VERSION, arrays_path, load_chain, model_arrays, save_model
from filterkit.plugins import load_plugins
from filterkit.runner import Chain
from filterkit.schema import concatenate
from filterkit.sources import FileSource


def split_in_halves(path, folder):
    """Write the first and second half of the data rows of ``path`` as train.arff and test.arff."""
    text = path.read_text()
    marker = "@data" if "@data" in text else "@DATA"
    header, data = text.split(marker, 1)
    rows = [line for line in data.splitlines() if line.strip() and not line.startswith("%")]
    half = len(rows) // 2
    train, test = folder / "train.arff", folder / "test.arff"
    train.write_text(header + marker + "\n" + "\n".join(rows[:half]) + "\n")
    test.write_text(header + marker + "\n" + "\n".join(rows[half:]) + "\n")
    return train, test


def fit_once_transform_both(train, test):
    """What batch mode must give: the chain fitted on ``train``, applied to each file."""
    registry = load_plugins(STAGES_DIR)
    source = FileSource(str(train))
    chain = Chain([registry.make_stage("meanscale", {}), registry.make_stage("l2", {})]).fit(source)
    width = len(chain.output_schema)
    return [concatenate(list(chain.transform(FileSource(str(p)).chunks())), width) for p in (train, test)]


@pytest.fixture
def saved_model(run_filterkit, tmp_path, monkeypatch):
    """credit-g split in two; a model of 'meanscale l2' fitted on the first half."""
    monkeypatch.chdir(tmp_path)
    train, test = split_in_halves(REAL / "credit-g.arff", tmp_path)
    result = run_filterkit("--save-model", "m.json", train, "meanscale", "l2", plugins_dir=STAGES_DIR)
    assert result.status == 0, result.stderr
    return tmp_path / "m.json", train, test, result


@pytest.mark.parametrize("name", ["credit-g.arff", "oh0.wc.arff"])
def test_batch_mode_equals_fitting_once_and_transforming_both(filterkit_script, tmp_path, name):
    train, test = split_in_halves(REAL / name, tmp_path)
    trained = filterkit_script(
        "--plugins-dir", STAGES_DIR, "--save-model", "m.json", "train.arff", "meanscale", "l2", cwd=tmp_path
    )
    applied = filterkit_script("--plugins-dir", STAGES_DIR, "apply", "m.json", "test.arff", cwd=tmp_path)
    assert trained.status == 0 and applied.status == 0, trained.stderr + applied.stderr
    expected_train, expected_test = fit_once_transform_both(train, test)
    assert_same_values(read_bytes(trained.stdout)[1], expected_train)
    assert_same_values(read_bytes(applied.stdout)[1], expected_test)
    refitted_on_test = fit_once_transform_both(test, test)[1]
    assert not np.array_equal(refitted_on_test.dense_values(), expected_test.dense_values()), (
        "the halves must fit differently, or a refitting apply would pass unnoticed"
    )


def test_applying_to_the_training_file_reproduces_the_training_output(run_filterkit, saved_model):
    model, train, _, trained = saved_model
    applied = run_filterkit("apply", model, train, plugins_dir=STAGES_DIR)
    assert applied.status == 0
    assert without_comments(applied.stdout) == without_comments(trained.stdout)


def test_apply_reads_stdin_and_writes_atomically(run_filterkit, saved_model, tmp_path):
    model, _, test, _ = saved_model
    to_stdout = run_filterkit("apply", model, test, plugins_dir=STAGES_DIR)
    from_stdin = run_filterkit("apply", "-o", "b.arff", model, "-", stdin=test.read_bytes(), plugins_dir=STAGES_DIR)
    assert from_stdin.status == 0 and from_stdin.stdout == b""
    assert (tmp_path / "b.arff").read_bytes() == to_stdout.stdout


def test_model_is_json_with_plain_state_and_its_arrays_hold_no_objects(saved_model):
    model, train, _, _ = saved_model
    document = json.loads(model.read_text())
    assert document["format_version"] == FORMAT_VERSION == 2
    assert [s["name"] for s in document["stages"]] == ["meanscale", "l2"]
    assert [s["plugin"] for s in document["stages"]] == [f"meanscale ({STAGES_DIR / 'meanscale.py'})", "normalizers"]
    assert document["class"] == "class"
    state = document["stages"][0]["state"]
    assert state["rows"] == 500
    assert set(state["scale"]["array"]) == {"dtype", "shape", "base64"}
    assert (state["scale"]["array"]["dtype"], state["scale"]["array"]["shape"]) == ("<f8", [7])

    def plain(value):
        if isinstance(value, dict):
            return all(isinstance(k, str) and plain(v) for k, v in value.items())
        if isinstance(value, list):
            return all(plain(v) for v in value)
        return value is None or isinstance(value, (str, int, float, bool))

    assert plain(document)
    assert sorted(model.parent.iterdir()) == sorted([model, train, train.with_name("test.arff")]), "one file"
    arrays = model_arrays(model)
    assert list(arrays) == ["0.scale"] and arrays["0.scale"].dtype == np.float64
    scale = arrays["0.scale"]
    schema, rows = read_arff(train)
    numeric = [i for i, a in enumerate(schema.attributes) if a.is_numeric]
    assert len(numeric) == len(scale) == 7
    np.testing.assert_allclose(scale, np.abs(rows.values[:, numeric]).mean(axis=0), rtol=1e-12)


def test_a_renamed_or_moved_model_still_applies(run_filterkit, saved_model, tmp_path):
    model, _, test, _ = saved_model
    expected = run_filterkit("apply", model, test, plugins_dir=STAGES_DIR)
    (tmp_path / "elsewhere").mkdir()
    moved = model.rename(tmp_path / "elsewhere" / "renamed.model")
    result = run_filterkit("apply", moved, test, plugins_dir=STAGES_DIR)
    assert result.status == 0, result.stderr
    assert without_comments(result.stdout) == without_comments(expected.stdout)


def test_the_same_fit_saves_the_same_model_bytes(run_filterkit, tmp_path):
    chain = ["--positive", "Iris-setosa", REAL / "iris.arff", "shape", "bns", "select", "--top", "3", "minmax", "l2"]
    for name, chunk_rows in (("first.json", "1000"), ("second.json", "7")):
        result = run_filterkit("--chunk-rows", chunk_rows, "--save-model", tmp_path / name, *chain)
        assert result.status == 0, result.stderr
    assert (tmp_path / "first.json").read_bytes() == (tmp_path / "second.json").read_bytes()


#: ``--positive Iris-setosa iris.arff shape bns select --top 3 minmax l2``, saved by filterkit 0.2.
OLD_MODEL = TESTS / "data" / "models" / "iris-shape-bns-select-minmax-l2.json"


def test_a_model_saved_by_filterkit_0_2_applies_as_its_chain_does_today(run_filterkit, tmp_path):
    shutil.copy(OLD_MODEL, tmp_path / OLD_MODEL.name)
    shutil.copy(arrays_path(OLD_MODEL), tmp_path / arrays_path(OLD_MODEL).name)
    chain = ["--positive", "Iris-setosa", REAL / "iris.arff", "shape", "bns", "select", "--top", "3", "minmax", "l2"]
    fitted = run_filterkit("--save-model", tmp_path / "new.json", *chain)
    old = run_filterkit("apply", tmp_path / OLD_MODEL.name, REAL / "iris.arff")
    new = run_filterkit("apply", tmp_path / "new.json", REAL / "iris.arff")
    assert fitted.status == old.status == new.status == 0, fitted.stderr + old.stderr + new.stderr
    assert without_comments(old.stdout) == without_comments(new.stdout) == without_comments(fitted.stdout)
    old_arrays, new_arrays = model_arrays(OLD_MODEL), model_arrays(tmp_path / "new.json")
    assert list(old_arrays) == list(new_arrays) and len(old_arrays) == 17
    for name, array in old_arrays.items():
        assert array.dtype == new_arrays[name].dtype
        if name.endswith("knot_probability"):  # shape's windows are summed feature by feature since 0.4: last bits
            np.testing.assert_allclose(array, new_arrays[name], rtol=1e-13, err_msg=name)
        else:
            np.testing.assert_array_equal(array, new_arrays[name], err_msg=name)


#: Saved by filterkit 0.3 (format 2) with the output it wrote: ``--positive Iris-versicolor iris.arff bns ig
#: --no-zero-preserve l2``.
MODEL_0_3 = TESTS / "data" / "models-0.3" / "iris-bns-ig-no-zero-preserve-l2.json"


def recorded_distributions(model) -> set[str]:
    return {stage["distribution"] for stage in json.loads(model.read_text())["stages"]}


def test_models_record_the_built_ins_as_filterkit_arff_and_those_recording_filterkit_apply_as_before(
    run_filterkit, tmp_path
):
    """The distribution was "filterkit" up to 0.4 (a name on PyPI that is another project's): models of
    0.2 to 0.4 record it, and still apply byte for byte; new ones record "filterkit-arff"."""
    assert recorded_distributions(OLD_MODEL) == recorded_distributions(MODEL_0_3) == {"filterkit"}
    applied = run_filterkit("apply", MODEL_0_3, REAL / "iris.arff")
    assert applied.status == 0, applied.stderr
    assert without_comments(applied.stdout) == without_comments(MODEL_0_3.with_suffix(".output.arff").read_bytes())
    chain = ["--positive", "Iris-setosa", REAL / "iris.arff", "shape", "bns", "select", "--top", "3", "minmax", "l2"]
    assert run_filterkit("--save-model", tmp_path / "new.json", *chain).status == 0
    assert recorded_distributions(tmp_path / "new.json") == {"filterkit-arff"}


def test_object_arrays_of_an_old_model_are_never_unpickled(run_filterkit, tmp_path):
    model = tmp_path / "m.json"
    shutil.copy(OLD_MODEL, model)
    np.savez(arrays_path(model), **{"0.knot_feature": np.array([{"not": "numbers"}], dtype=object)})
    result = run_filterkit("apply", model, REAL / "iris.arff")
    assert result.status == 1
    assert result.stderr == (
        f"filterkit: error: {arrays_path(model)}: not a filterkit model "
        "(array '0.knot_feature' holds object, not numbers)\n"
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "change, message",
    [
        (
            ("@attribute credit_amount numeric", "@attribute amount numeric"),
            "attribute 5 differs: expected 'credit_amount' numeric, found 'amount' numeric",
        ),
        (
            ("@attribute class { good, bad}", "@attribute class { good, bad, unknown}"),
            "attribute 21 differs: expected 'class' {good,bad}, found 'class' {good,bad,unknown}: "
            "label 'unknown' is new (2 labels expected, 3 found)",
        ),
        (
            ("@attribute age numeric", "@attribute age { young, old}"),
            "attribute 13 differs: expected 'age' numeric, found 'age' {young,old}",
        ),
        (
            ("@attribute class { good, bad}", "@attribute class { good, bad}\n@attribute extra numeric"),
            "expected 21 attributes, found 22",
        ),
    ],
    ids=["renamed", "labels", "type", "extra-attribute"],
)
def test_test_file_with_another_header_is_refused_naming_the_first_difference(
    run_filterkit, saved_model, change, message
):
    model, _, test, _ = saved_model
    text = test.read_text()
    assert change[0] in text
    test.write_text(text.replace(change[0], change[1]))
    result = run_filterkit("apply", model, test, plugins_dir=STAGES_DIR)
    assert result.status == 1
    assert result.stderr == f"filterkit: error: {test}: header differs from the training data: {message}\n"
    assert result.stdout == b""


def test_relation_name_may_differ(run_filterkit, saved_model):
    model, _, test, _ = saved_model
    test.write_text(test.read_text().replace("@relation german_credit", "@relation 'credit, test half'"))
    assert run_filterkit("apply", model, test, plugins_dir=STAGES_DIR).status == 0


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: {**d, "format_version": 99}, "unknown model format_version 99 (this filterkit reads 1 and 2)"),
        (lambda d: {k: v for k, v in d.items() if k != "format_version"}, "not a filterkit model (no format_version)"),
        (lambda d: {**d, "stages": "l2"}, "not a filterkit model (the model: 'stages' is a string, not a list)"),
    ],
    ids=["future-version", "no-version", "malformed"],
)
def test_unusable_model_is_a_clear_error(run_filterkit, saved_model, edit, message):
    model, _, test, _ = saved_model
    model.write_text(json.dumps(edit(json.loads(model.read_text()))))
    result = run_filterkit("apply", model, test, plugins_dir=STAGES_DIR)
    assert result.status == 1
    assert result.stderr.startswith(f"filterkit: error: {model}: {message}")
    with pytest.raises(FilterkitError) as raised:  # looking inside it: the same checks, the same words
        model_arrays(model)
    assert str(raised.value).startswith(f"{model}: {message}")


def test_model_that_is_not_json_is_a_clear_error(run_filterkit, saved_model):
    model, _, test, _ = saved_model
    model.write_text("format_version = 1\n")
    result = run_filterkit("apply", model, test, plugins_dir=STAGES_DIR)
    assert result.status == 1
    assert result.stderr.startswith(f"filterkit: error: {model}:1: not a filterkit model (bad JSON")


def test_model_needing_a_missing_plugin_names_it(filterkit_script, saved_model):
    model, _, test, _ = saved_model
    result = filterkit_script("apply", model, test)
    assert result.status == 1
    assert result.stderr == (
        f"filterkit: error: {model}: the model needs stage 'meanscale' from plugin "
        f"'meanscale ({STAGES_DIR / 'meanscale.py'})' (plugins-dir {STAGES_DIR}), which is not installed\n"
    )


def test_model_of_a_disabled_builtin_plugin_names_it(run_filterkit, tmp_path, monkeypatch):
    model = tmp_path / "m.json"
    assert run_filterkit("--save-model", model, REAL / "iris.arff", "l2").status == 0
    monkeypatch.setenv("FILTERKIT_DISABLE_PLUGINS", "normalizers")
    needs = "the model needs stage 'l2' from plugin 'normalizers' (filterkit-arff), which is not installed"
    for saved in (model, MODEL_0_3):  # a model of 0.3 records the built-ins' distribution as "filterkit"
        result = run_filterkit("apply", saved, REAL / "iris.arff")
        assert result.status == 1
        assert result.stderr == f"filterkit: error: {saved}: {needs}\n"


def test_an_old_model_without_its_arrays_file_is_a_clear_error(run_filterkit, tmp_path):
    model = tmp_path / "m.json"
    shutil.copy(OLD_MODEL, model)
    result = run_filterkit("apply", model, REAL / "iris.arff")
    assert result.status == 1
    assert result.stderr == (
        f"filterkit: error: {model}: not a filterkit model "
        f"(its arrays {arrays_path(model)}: No such file or directory)\n"
    )


def test_python_api_round_trip_keeps_params_and_state(tmp_path):
    registry = load_plugins(STAGES_DIR)
    stages = [registry.make_stage("meanscale", {}), registry.make_stage("explode", {"during": "transform"})]
    chain = Chain(stages, class_spec="first", positive="2").fit(FileSource(str(REAL / "wine.arff")))
    save_model(tmp_path / "wine.json", chain, registry)
    loaded = load_chain(tmp_path / "wine.json", registry)
    assert [s.params for s in loaded.stages] == [{}, {"during": "transform"}]
    assert loaded.class_name == "class"
    assert loaded.positive == "2" and loaded.stages[0].context.positive == "2"
    assert loaded.input_schema == chain.input_schema
    assert loaded.output_schema == chain.output_schema
    np.testing.assert_array_equal(loaded.stages[0].scale, chain.stages[0].scale)
    assert loaded.stages[0].rows == 178
    assert loaded.stages[0].features.tolist() == list(range(1, 14)), "the class (first) is not a feature"


@pytest.mark.parametrize(
    "chain",
    [["l2"], ["meanscale", "explode"]],
    ids=["bad-row-after-fitting", "stage-fails-transforming"],
)
def test_failed_run_saves_no_model(run_filterkit, tmp_path, chain):
    data = tmp_path / "bad.arff"
    data.write_bytes((REAL / "iris.arff").read_bytes() + b"5.0,3.3,1.4,x,Iris-setosa\n")
    arguments = ["--save-model", tmp_path / "m.json", "-o", tmp_path / "out.arff", data, *chain]
    if "explode" in chain:
        arguments[-3] = REAL / "iris.arff"
    result = run_filterkit(*arguments, plugins_dir=STAGES_DIR)
    assert result.status == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.arff"]


def test_model_that_cannot_be_saved_is_refused_before_any_output(run_filterkit, tmp_path):
    model = tmp_path / "absent" / "m.json"
    result = run_filterkit(
        "--save-model", model, "-o", tmp_path / "out.arff", REAL / "iris.arff", "meanscale", plugins_dir=STAGES_DIR
    )
    assert result.status == 1
    assert result.stderr == f"filterkit: error: cannot write {model}: no folder {tmp_path / 'absent'}\n"
    assert list(tmp_path.iterdir()) == []


def test_a_numpy_scalar_in_state_is_saved_as_a_number(run_filterkit, tmp_path):
    plugins = FIXTURE_PLUGINS / "scalar_state"
    model = tmp_path / "m.json"
    trained = run_filterkit("--save-model", model, REAL / "iris.arff", "rowcount", plugins_dir=plugins)
    assert trained.status == 0, trained.stderr
    assert json.loads(model.read_text())["stages"][0]["state"] == {"rows": 150}
    applied = run_filterkit("apply", model, REAL / "iris.arff", plugins_dir=plugins)
    assert without_comments(applied.stdout) == without_comments(trained.stdout)
    assert read_bytes(trained.stdout)[1].values[0, 0] == pytest.approx(5.1 / 150)
