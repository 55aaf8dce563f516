"""Values past a double's range after a chain (``bns --multiply`` of 1e308): refused by the classifier's every
user, never turned into the largest double, and no numpy warning on the way."""

from __future__ import annotations

import subprocess

import pytest

from chain_helpers import FILTERKIT, REAL
from filterkit.testing import run_filterkit

IRIS = REAL / "iris.arff"
TASK = ["--positive", "Iris-versicolor", "--svm-c-values", "1"]


def header() -> str:
    text = IRIS.read_text()
    return text[: text.index("@DATA") + len("@DATA\n")]


def rows() -> list[str]:
    text = IRIS.read_text()
    return [line for line in text[text.index("@DATA") + 6 :].splitlines() if line.strip()]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    path = tmp_path_factory.mktemp("unbounded") / "m.json"
    trained = run_filterkit("train", *TASK, "-o", path, IRIS, "bns", "--multiply")
    assert trained.status == 0, trained.stderr
    return path


def test_predict_refuses_a_row_past_a_double_s_range_as_the_c_scorer_does(model, tmp_path):
    """The infinity became 1.8e308 (numpy's nan_to_num), and predict wrote a finite decision (-4.3e306) with
    status 0, where the exported scorer refuses the row."""
    data = tmp_path / "huge.arff"
    data.write_text(header() + "5.1,3.5,1.4,0.2,?\n1e308,1,1,1,?\n")
    result = run_filterkit("predict", model, data)
    assert result.status == 1 and result.stdout == b""
    assert result.stderr == (
        f"filterkit: error: {data}: row 2: its decision value is not a finite number (it passes a double's range): "
        "check the model file and the row's values\n"
    )


@pytest.mark.parametrize("command", [["train", "-o", "MODEL"], ["evaluate", "--folds", "2"]])
def test_training_on_a_row_past_a_double_s_range_names_the_row(tmp_path, command):
    """liblinear was given 1.8e308 and ran for more than ten minutes on 141 rows (train), or the svm plugin was
    blamed for liblinear's refusal of an infinity."""
    data = tmp_path / "huge.arff"
    data.write_text(header() + "".join(row + "\n" for row in rows()[:140]) + "1e308,1,1,1,Iris-versicolor\n")
    argv = [str(tmp_path / "m.json") if word == "MODEL" else word for word in command]
    result = run_filterkit(*argv, *TASK, data, "bns", "--multiply")
    assert result.status == 1 and not (tmp_path / "m.json").exists()
    assert result.stderr == (
        "filterkit: error: row 141 (of the training rows, then the test file's): the chain writes it a value that "
        "is not a finite number (it passes a double's range): check the row's values, or scale them first\n"
    )


@pytest.mark.parametrize("search", [["--search", "nested"], ["--search", "flat", "--multiclass"]])
def test_training_on_a_finite_value_liblinear_cannot_fit_names_the_row_at_once(tmp_path, search):
    """1e80 in one of iris's rows (no chain that scales it): liblinear's primal Newton solver overflowed and ran
    without end, at one core's full use, uninterruptible (train and evaluate never returned)."""
    data = tmp_path / "huge.arff"
    data.write_text(header() + "".join(row + "\n" for row in rows()[:140]) + "1e80,1,1,1,Iris-versicolor\n")
    task = [] if "--multiclass" in search else TASK
    options = (
        ["--compare", data, "keep --type numeric", "minmax"]
        if "flat" in search
        else [data, "keep", "--type", "numeric"]
    )
    result = run_filterkit("train", *search, *task, "-o", tmp_path / "m.json", *options)
    assert result.status == 1 and not (tmp_path / "m.json").exists()
    assert result.stderr == (
        "filterkit: error: row 141 (of the training rows, then the test file's): the chain writes it the value 1e+80, "
        "past the 1e+60 a linear SVM can be fitted on (liblinear's steps overflow, and it runs without end): check "
        "the row's values, or scale them first\n"
    )
    scaled = run_filterkit("train", *search, *task, "-o", tmp_path / "m.json", data, "minmax")
    assert scaled.status == 0, scaled.stderr


def test_the_row_named_is_the_input_s_row_where_rows_of_a_missing_class_were_left_out(tmp_path):
    """Two rows of a missing class before it made row 143 "row 141"."""
    data = tmp_path / "huge.arff"
    body = "".join(row + "\n" for row in rows()[:140])
    data.write_text(header() + "5.1,3.5,1.4,0.2,?\n5.0,3.4,1.5,0.2,?\n" + body + "1e308,1,1,1,Iris-versicolor\n")
    result = run_filterkit("train", *TASK, "-o", tmp_path / "m.json", data, "bns", "--multiply")
    assert result.status == 1
    assert "filterkit: error: row 143 (of the training rows, then the test file's): the chain writes" in result.stderr


@pytest.mark.skipif(FILTERKIT is None, reason="the filterkit console script is not installed")
def test_a_product_past_a_double_s_range_is_infinity_without_a_numpy_warning(tmp_path):
    """numpy's RuntimeWarning, with filterkit's source line, was on standard error (a warning reaches it only in a
    process of its own)."""
    data = tmp_path / "huge.arff"
    data.write_text(header() + "".join(row + "\n" for row in rows()) + "1e308,1,1,1,Iris-versicolor\n")
    for sparse in ([], ["--sparse"]):
        argv = [FILTERKIT, *sparse, "--positive", "Iris-versicolor", str(data), "bns", "--multiply"]
        result = subprocess.run(argv, capture_output=True, timeout=120)
        assert result.returncode == 0 and result.stderr == b""
        assert b"Infinity" in result.stdout.split(b"@data", 1)[1]


#: Instance weights near 1e19 and 1e16 (the reviewer's file): F(high) − F(low) of the shaper's windows rounds past
#: the window's weight, and p̃ to exactly 0 or 1.
HEAVY_ROWS = """@relation w
@attribute a numeric
@attribute b numeric
@attribute c {n,p}
@data
0.3,0.88,n,{7e19}
0,0.57,p,{1e16}
2,0.73,p,{7e19}
2,0.68,p,{1e16}
1,0.57,p,{1e16}
1,0.87,p,{7e19}
2,0.37,p,{7e19}
0.3,0.06,n,{7e19}
1,0.07,n,{1e16}
1,0.42,n,{7e19}
1,0.44,n,{7e19}
2,0.41,n,{1e16}
1,0.65,p,{7e19}
0.2,0.52,p,{7e19}
"""


@pytest.mark.parametrize("stage", ["auto", "shape"])
def test_rows_of_huge_weights_fit_a_model_that_loads_and_applies_alike(tmp_path, stage):
    """The fit exited 0 and saved a knot probability outside [0, 1], which apply (and Dask's workers) refused as
    not a model; numpy warned of log2(0)."""
    data = tmp_path / "heavy.arff"
    data.write_text(HEAVY_ROWS)
    fitted = run_filterkit("--save-model", tmp_path / "m.json", "-o", tmp_path / "out.arff", data, stage)
    assert fitted.status == 0, fitted.stderr
    applied = run_filterkit("apply", tmp_path / "m.json", data)
    assert applied.status == 0, applied.stderr
    body = lambda text: text.split(b"@relation", 1)[1]  # noqa: E731  the provenance comments differ
    assert body(applied.stdout) == body((tmp_path / "out.arff").read_bytes())
    if FILTERKIT is not None:
        quiet = subprocess.run([FILTERKIT, str(data), stage], capture_output=True, timeout=120)
        assert quiet.returncode == 0 and quiet.stderr == b""


def test_ordinary_fractional_weights_shape_as_before_the_clip(tmp_path):
    """Clipping a window's positives to its weight (the first form of the fix above) moved this value in its last
    digits: (0.3 + 1) / (0.3 + 2) rounded past the window's own rounding."""
    data = tmp_path / "tiny.arff"
    data.write_text(
        "@relation t\n@attribute x numeric\n@attribute class {a,b}\n@data\n1,b,{0.1}\n2,b,{0.2}\n3,a,{0.3}\n"
    )
    result = run_filterkit("--positive", "a", data, "shape", "--neighbors", "0")
    assert result.status == 0, result.stderr
    assert result.stdout.split(b"@data\n", 1)[1].splitlines()[-1] == b"0.0652173913043479,a {0.3}"
