"""``auto`` on the degenerate data sets of test_degenerate.py and at the boundaries of its options:
output, a ``filterkit: error:`` (exit 1) or a usage error (exit 2), never a traceback, a crash or a
numpy warning.  (test_degenerate.py lists the stages by name; ``auto`` needs ``--positive`` there.)"""

from __future__ import annotations

import pytest
from test_degenerate import DEGENERATE, HEADER, assert_output_or_clear_error, boundary_values

from chain_helpers import REAL
from filterkit.plugins import load_plugins

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("error::RuntimeWarning")]


@pytest.mark.parametrize("data", DEGENERATE)
@pytest.mark.parametrize("options", [[], ["--min-support", "0", "--min-gain", "0", "--shape-copy", "unless-worse"]])
def test_auto_on_degenerate_data(run_filterkit, tmp_path, data, options):
    path = tmp_path / "in.arff"
    path.write_text(DEGENERATE[data])
    assert_output_or_clear_error(run_filterkit, ["--positive", "b", "-q", str(path), "auto", *options])


def boundary_cases():
    cases = []
    for option in load_plugins().stages["auto"].value.options:
        for value in boundary_values(option):
            flag = option.flag
            words = [flag if value else "--no-" + flag[2:]] if option.kind is bool else [flag, str(value)]
            cases.append(pytest.param(words, id=" ".join(words)))
    return cases


@pytest.mark.parametrize("data", ["credit-g", "weighted"])
@pytest.mark.parametrize("words", boundary_cases())
def test_auto_options_at_their_boundaries(run_filterkit, tmp_path, words, data):
    path = tmp_path / "in.arff"
    positive = ["--positive", "bad"] if data == "credit-g" else ["--positive", "b"]
    if data == "credit-g":
        lines = (REAL / "credit-g.arff").read_text().splitlines()
        start = next(i for i, line in enumerate(lines) if line.strip().lower() == "@data") + 1
        path.write_text("\n".join(lines[: start + 40]) + "\n")
    else:
        path.write_text(HEADER + "1,2,3,a,{0.1}\n0,5,1,b,{0.3}\n2,0,2,a,{0}\n4,1,0,b,{2}\n")
    assert_output_or_clear_error(run_filterkit, [*positive, "-q", str(path), "auto", *words])
