"""``auto`` on the degenerate data sets of test_degenerate.py with its guards off (test_degenerate.py
runs it with its defaults and at the boundaries of each option): output, a ``filterkit: error:`` (exit 1)
or a usage error (exit 2), never a traceback, a crash or a numpy warning."""

from __future__ import annotations

import pytest
from test_degenerate import DEGENERATE, assert_output_or_clear_error

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("error::RuntimeWarning")]


UNGUARDED = ["--min-support", "0", "--min-gain", "0", "--shape-copy", "unless-worse"]


@pytest.mark.parametrize("data", DEGENERATE)
def test_auto_without_its_guards_on_degenerate_data(run_filterkit, tmp_path, data):
    path = tmp_path / "in.arff"
    path.write_text(DEGENERATE[data])
    assert_output_or_clear_error(run_filterkit, ["--positive", "b", "-q", str(path), "auto", *UNGUARDED])
