"""A tampered model file is refused: every stage's ``load_state`` checks what it loads
(shapes, whole-number indices in range, sorted knots, finite values, the options the
state was fitted with) and ``filterkit apply`` exits 1 with ``filterkit: error:``, no
traceback; a model saved before options were recorded still loads."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest

from chain_helpers import REAL
from filterkit.errors import FilterkitError
from filterkit.model import model_arrays
from filterkit.saved_state import SavedState, StateArray

TRAIN = REAL / "oh0.wc.arff"


def saved_model(run_filterkit, tmp_path, *chain):
    model = tmp_path / "m.json"
    result = run_filterkit("--positive", "Ethics", "--save-model", model, TRAIN, *chain)
    assert result.status == 0, result.stderr
    return model, result.stdout


def tamper_arrays(model, change) -> None:
    """Apply ``change(arrays)`` to the model's arrays (a dict of numpy arrays named ``POSITION.KEY``)
    and write them back into the model's JSON, as its arrays are embedded."""
    arrays = model_arrays(model)
    change(arrays)
    document = json.loads(model.read_text())
    for name, array in arrays.items():
        position, key = name.split(".", 1)
        document["stages"][int(position)]["state"][key] = {
            "array": {
                "dtype": array.dtype.newbyteorder("<").str,
                "shape": list(array.shape),
                "base64": base64.b64encode(array.astype(array.dtype.newbyteorder("<")).tobytes()).decode("ascii"),
            }
        }
    model.write_text(json.dumps(document))


def tamper_document(model, change) -> None:
    document = json.loads(model.read_text())
    change(document)
    model.write_text(json.dumps(document))


def assert_refused(run_filterkit, model, *words):
    applied = run_filterkit("apply", model, TRAIN)
    assert applied.status == 1, applied.stderr
    assert applied.stderr.startswith("filterkit: error:") and "Traceback" not in applied.stderr
    for word in words:
        assert word in applied.stderr
    assert applied.stdout == b""


def swap_two_knots(arrays):
    values = arrays["0.knot_value"].copy()
    same = np.flatnonzero(arrays["0.knot_feature"][1:] == arrays["0.knot_feature"][:-1])[0]
    values[same], values[same + 1] = values[same + 1], values[same]
    arrays["0.knot_value"] = values


def set_item(key, index, value, dtype=None):
    def change(arrays):
        array = arrays[key].astype(dtype or arrays[key].dtype)
        array[index] = value
        arrays[key] = array

    return change


ARRAY_TAMPERING = {
    "unsorted knots": (swap_two_knots, "not sorted"),
    "NaN in scores": (set_item("1.scores", 3, np.nan), "scores"),
    "infinite factor": (set_item("1.factor", 0, np.inf), "factor"),
    "a float index": (set_item("0.knot_feature", 5, 0.5, np.float64), "'knot_feature'"),
    "an index out of range": (set_item("0.knot_feature", -1, 10**6), "'knot_feature'"),
    "a probability above one": (set_item("0.zero_probability", 2, 1.5), "'zero_probability'"),
    "a shorter array": (lambda arrays: arrays.update({"1.minimum": arrays["1.minimum"][:-1]}), "'minimum'"),
    "a factor that does not follow from the scores": (set_item("1.factor", 0, 123.0), "'factor'"),
    "a two-dimensional array": (lambda arrays: arrays.update({"1.scores": arrays["1.scores"][:, None]}), "'scores'"),
}


@pytest.mark.slow
@pytest.mark.parametrize("change, words", ARRAY_TAMPERING.values(), ids=ARRAY_TAMPERING.keys())
def test_tampered_arrays_are_refused(run_filterkit, tmp_path, change, words):
    model, _ = saved_model(run_filterkit, tmp_path, "shape", "bns", "l2")
    tamper_arrays(model, change)
    assert_refused(run_filterkit, model, words)


OPTION_EDITS = {
    "shape --transform": (0, "transform", "logodds", "--transform"),
    "shape --neighbors": (0, "neighbors", 3, "--neighbors"),
    "bns --presence": (1, "presence", True, "--presence"),
    "bns --alpha": (1, "alpha", 0.5, "--alpha"),
}


@pytest.mark.slow
@pytest.mark.parametrize("position, name, value, flag", OPTION_EDITS.values(), ids=OPTION_EDITS.keys())
def test_options_edited_after_fitting_are_refused(run_filterkit, tmp_path, position, name, value, flag):
    model, _ = saved_model(run_filterkit, tmp_path, "shape", "bns", "l2")
    tamper_document(model, lambda document: document["stages"][position]["params"].update({name: value}))
    assert_refused(run_filterkit, model, flag, "edited after fitting")


def test_select_and_ordinal_states_are_checked(run_filterkit, tmp_path):
    model, _ = saved_model(
        run_filterkit, tmp_path, "select", "--metric", "ig", "--top", "20", "ordinal", "--max-thresholds", "2"
    )
    original = model.read_bytes()
    for change, words in [
        (set_item("0.kept", 0, 3182), "'kept'"),
        (lambda arrays: arrays.update({"0.kept": arrays["0.kept"][:-1]}), "--top"),
        (set_item("1.thresholds", 0, 2.5), "threshold"),
        (set_item("1.threshold_counts", 0, 3), "'threshold_counts'"),
    ]:
        model.write_bytes(original)
        tamper_arrays(model, change)
        assert_refused(run_filterkit, model, words)
    model.write_bytes(original)
    tamper_document(model, lambda document: document["stages"][1]["params"].update({"max_thresholds": 5}))
    assert_refused(run_filterkit, model, "--max-thresholds", "edited after fitting")


@pytest.mark.slow
def test_a_model_saved_before_options_were_recorded_loads_and_gives_the_same_output(run_filterkit, tmp_path):
    chain = ["shape", "bns", "select", "--metric", "chi", "--top", "100", "ordinal", "--max-thresholds", "3", "minmax"]
    model, trained = saved_model(run_filterkit, tmp_path, *chain)

    def as_before(document):
        for entry in document["stages"]:
            for key in ("fitted_options", "inner_exponent", "outer_exponent"):
                entry["state"].pop(key, None)

    tamper_document(model, as_before)
    applied = run_filterkit("apply", model, TRAIN)
    assert applied.status == 0, applied.stderr
    assert applied.stdout.split(b"\n", 1)[1] == trained.split(b"\n", 1)[1]


class _Stage:
    name = "counts"


def test_whole_numbers_without_an_upper_bound_add_up_to_less_than_2_to_the_53():
    declared = StateArray(length=None, whole=True, low=-(2**62))
    exact = SavedState(_Stage(), {"counts": np.array([2**52, 2**52 - 1], dtype=np.int64)}).array("counts", declared, {})
    assert exact.tolist() == [2**52, 2**52 - 1]
    # 2**53 + 1 as float64 is 2**53: an int64 beyond it would not be read exactly
    for values in ([2**53 + 1], [2**52, 2**52], [2**62] * 4, [-(2**53), -1]):
        state = SavedState(_Stage(), {"counts": np.array(values, dtype=np.int64)})
        with pytest.raises(FilterkitError, match="'counts' adds up to 2\\*\\*53 or more"):
            state.array("counts", declared, {})


@pytest.mark.slow
def test_counts_whose_sum_wraps_around_in_int64_are_refused_not_a_crash(filterkit_script, tmp_path):
    """ordinal's 'threshold_counts' of four 2**62 add up to 0 in int64, as many as its 0 thresholds:
    the state passed its check and applying it crashed the process (SIGSEGV)."""
    model = tmp_path / "m.json"
    trained = filterkit_script("--save-model", model, "-o", tmp_path / "out.arff", REAL / "iris.arff", "ordinal")
    assert trained.status == 0, trained.stderr
    tamper_arrays(model, lambda arrays: arrays.update({"0.threshold_counts": np.full(4, 2**62, dtype=np.int64)}))
    applied = filterkit_script("apply", model, REAL / "iris.arff")
    assert (applied.status, applied.stdout) == (1, b"")
    assert applied.stderr.endswith("'threshold_counts' adds up to 2**53 or more (counts that large cannot be exact))\n")
