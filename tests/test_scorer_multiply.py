"""``--multiply`` of the scorer stages (issue 22, item 4): each value times its feature's
score, ``x · s`` (Forman's TF·BNS on word counts), instead of the range rescaling ``x · s / (max − min)``.

The values are worked by hand on the small set of tests/test_scorers.py with ``acc2 = |tpr − fpr|``.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import norm

from chain_helpers import OH0_SAMPLE
from filterkit.arff.reader import read_arff
from filterkit.plugins import load_plugins
from filterkit.testing import check_stage, read_output, run_filterkit

REAL = Path(__file__).parent / "data" / "real"
MODELS_03 = Path(__file__).parent / "data" / "models-0.3"
NAN = np.nan

# pos = 3 (p), neg = 3 (n).
#   a: best cut > 0: tpr 2/3, fpr 0 → acc2 = 2/3; range [-1, 4].  Presence: 2/3 − 1/3 = 1/3.
#   b: 7 everywhere: score 0.
#   c: best cut > 0: tpr 2/2, fpr 1/3 → 2/3 (row 2 missing); range [0, 3].
TRAIN = """@relation scaling
@attribute a numeric
@attribute b numeric
@attribute c numeric
@attribute class {n,p}
@data
4,7,1,p
2,7,?,p
0,7,3,p
0,7,0,n
-1,7,0,n
0,7,2,n
"""
TRAIN_A = np.array([4, 2, 0, 0, -1, 0.0])
TRAIN_C = np.array([1, NAN, 3, 0, 0, 2.0])


def values_of_run(*argv) -> np.ndarray:
    run = run_filterkit(*argv)
    assert run.status == 0, run.stderr
    return read_output(run.stdout)[1].dense_values()


@pytest.fixture
def train(tmp_path) -> Path:
    path = tmp_path / "train.arff"
    path.write_text(TRAIN)
    return path


def test_multiply_gives_each_value_times_its_score(train):
    out = values_of_run("--positive", "p", train, "acc2", "--multiply")
    np.testing.assert_allclose(out[:, 0], TRAIN_A * 2 / 3, rtol=1e-15)  # 4 → 8/3, -1 → -2/3 (no division by 5)
    np.testing.assert_array_equal(out[:, 1], 0.0)  # score 0
    np.testing.assert_allclose(out[:, 2], TRAIN_C * 2 / 3, rtol=1e-15)  # missing stays missing
    assert np.isnan(out[1, 2])
    np.testing.assert_array_equal(out[:, 3], [1, 1, 1, 0, 0, 0])


def test_multiply_with_presence_scores_by_presence(train):
    out = values_of_run("--positive", "p", train, "acc2", "--multiply", "--presence")
    np.testing.assert_allclose(out[:, 0], TRAIN_A / 3, rtol=1e-15)


def test_multiply_without_zero_preserve_shifts_by_the_training_minimum(train):
    out = values_of_run("--positive", "p", train, "acc2", "--multiply", "--no-zero-preserve")
    np.testing.assert_allclose(out[:, 0], (TRAIN_A + 1) * 2 / 3, rtol=1e-15)  # -1 → 0, 4 → 10/3
    np.testing.assert_allclose(out[:, 2], TRAIN_C * 2 / 3, rtol=1e-15)  # minimum 0: as zero-preserving


def test_tf_bns_on_word_counts_is_count_times_bns_not_count_over_max_count(tmp_path):
    # w: counts 3, 1 in the two p rows, 0 in the two n rows: tpr 1 → 0.9995, fpr 0 → 0.0005.
    path = tmp_path / "counts.arff"
    path.write_text("@relation c\n@attribute w numeric\n@attribute class {n,p}\n@data\n3,p\n1,p\n0,n\n0,n\n")
    bns = 2 * norm.ppf(0.9995)
    multiplied = values_of_run("--positive", "p", path, "bns", "--presence", "--multiply")
    rescaled = values_of_run("--positive", "p", path, "bns", "--presence")
    np.testing.assert_allclose(multiplied[:, 0], [3 * bns, bns, 0, 0], rtol=1e-12)
    np.testing.assert_allclose(rescaled[:, 0], [bns, bns / 3, 0, 0], rtol=1e-12)  # x·BNS/max-count


def test_multiply_with_no_scale_is_refused(train):
    run = run_filterkit("--positive", "p", train, "bns", "--multiply", "--no-scale")
    assert run.status == 2 and run.stdout == b""  # a usage error, as every refused option combination
    assert "Error: stage 'bns': --multiply and --no-scale contradict" in run.stderr and "Traceback" not in run.stderr


@pytest.mark.parametrize(
    "options", [("--multiply",), ("--multiply", "--no-zero-preserve"), ("--multiply", "--presence")]
)
def test_multiply_output_does_not_depend_on_the_chunk_size(options):
    outputs = [
        run_filterkit("--chunk-rows", rows, "--positive", "Ethics", OH0_SAMPLE, "bns", *options, "l2").stdout
        for rows in (7, 25, 1000)
    ]
    assert outputs[0] == outputs[1] == outputs[2] and len(outputs[0]) > 10000


def test_saved_multiply_model_reapplies_to_the_same_bytes(tmp_path):
    model = tmp_path / "m.json"
    fitted = run_filterkit(
        "--save-model", model, "--positive", "Iris-versicolor", REAL / "iris.arff", "ig", "--multiply"
    )
    applied = run_filterkit("apply", model, REAL / "iris.arff")
    assert fitted.status == applied.status == 0
    assert fitted.stdout.split(b"\n", 1)[1] == applied.stdout.split(b"\n", 1)[1]


def test_model_saved_by_0_3_before_multiply_existed_keeps_its_output(tmp_path):
    name = "iris-bns-ig-no-zero-preserve-l2"
    run = run_filterkit("apply", MODELS_03 / f"{name}.json", REAL / "iris.arff")
    assert run.status == 0, run.stderr
    expected = (MODELS_03 / f"{name}.output.arff").read_bytes()
    assert run.stdout.split(b"\n", 1)[1] == expected.split(b"\n", 1)[1]
    loaded = read_arff(str(MODELS_03 / f"{name}.output.arff"))[1].dense_values()
    assert 0 < np.abs(loaded[:, :4]).max() <= 1  # a real output (L2 rows), not all zeros


@pytest.mark.slow
@pytest.mark.parametrize("zero_preserve", [True, False])
def test_multiply_passes_the_stage_contract(zero_preserve):
    assert check_stage(load_plugins().stage("bns"), multiply=True, zero_preserve=zero_preserve)


def test_a_multiply_model_whose_factor_was_edited_is_refused(tmp_path):
    model = tmp_path / "m.json"
    fitted = run_filterkit("--save-model", model, "--positive", "Iris-setosa", REAL / "iris.arff", "acc2", "--multiply")
    assert fitted.status == 0
    saved = json.loads(model.read_text())
    stored = saved["stages"][0]["state"]["factor"]["array"]
    factor = np.frombuffer(base64.b64decode(stored["base64"]), dtype=stored["dtype"]).copy()
    factor[0] *= 2
    stored["base64"] = base64.b64encode(factor.tobytes()).decode()
    model.write_text(json.dumps(saved))
    run = run_filterkit("apply", model, REAL / "iris.arff")
    assert run.status == 1 and "'factor' does not follow" in run.stderr
