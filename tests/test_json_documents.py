"""``--json`` documents are JSON: a paired test over folds whose differences are all equal and not zero
has t = ±inf (and p = 0), written as null instead of ending ``evaluate --stats --json`` in a traceback."""

from __future__ import annotations

import json
import math

import numpy as np

from filterkit.documents import as_json
from filterkit.measures import corrected_resampled_t_test


def test_equal_nonzero_fold_differences_give_an_infinite_t_written_as_null():
    test = corrected_resampled_t_test([0.25, 0.25, 0.25, 0.25, 0.25], 0.25)
    assert (test["t"], test["p"], test["df"]) == (math.inf, 0.0, 4)
    document = json.loads(as_json({"paired": [test], "auc": np.float64("nan"), "rows": np.int64(7)}))
    assert document == {"paired": [{"t": None, "p": 0.0, "df": 4, "folds": 5}], "auc": None, "rows": 7}
