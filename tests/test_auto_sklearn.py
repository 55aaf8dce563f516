"""The scikit-learn adapter of ``auto`` passes scikit-learn's estimator checks, told the positive
class as ``shape`` is (the checks fit on y of three or four classes)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.utils.estimator_checks import (
    check_get_feature_names_out_error,
    check_transformer_get_feature_names_out,
    parametrize_with_checks,
)
from test_sklearn import ZERO_WEIGHT_KEEPS_A_ROW

from filterkit.sklearn import transformer_for

AUTO = transformer_for("auto")(positive="1")


@pytest.mark.slow
@parametrize_with_checks([AUTO], expected_failed_checks=lambda estimator: ZERO_WEIGHT_KEEPS_A_ROW)
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)


def test_feature_names_out_name_the_shaped_copies():
    name = type(AUTO).__name__
    check_transformer_get_feature_names_out(name, AUTO)
    check_get_feature_names_out_error(name, AUTO)
    rng = np.random.default_rng(0)
    y = np.arange(200) % 2
    band = np.where(y == 1, rng.uniform(0.4, 0.6, 200), rng.choice([0.1, 0.9], 200) + rng.uniform(-0.1, 0.1, 200))
    X = np.column_stack([band, rng.normal(y, 1.0)])
    fitted = transformer_for("auto")(positive="1").fit(X, y)
    assert list(fitted.get_feature_names_out()) == ["x0", "x0@shape", "x1", "x1@shape"]
    assert fitted.transform(X).shape == (200, 4)
