"""Every built-in stage on degenerate data and at the boundaries of its options gives
output, a ``filterkit: error:`` (exit 1) or, for an option outside its declared range,
a usage error (exit 2) — never a traceback or a crash reported as "failed during"
(the runner's wording for an exception a stage did not expect)."""

from __future__ import annotations

import functools
import math

import pytest

from chain_helpers import REAL, example_stages, needs_two_classes
from filterkit.plugins import BUILT_IN_DISTRIBUTION, load_plugins

# a numpy warning (overflow, invalid value) is a crash here: it would be noise on the command line
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

HEADER = """@relation degenerate
@attribute x numeric
@attribute y numeric
@attribute w integer
@attribute class {a,b}
@data
"""
DEGENERATE = {
    "no rows": HEADER,
    "all weights zero": HEADER + "1,2,3,a,{0}\n0,5,1,b,{0}\n2,0,2,a,{0}\n",
    "one class occurs": HEADER + "1,2,3,a\n0,5,1,a\n2,0,2,a\n",
    "one declared label": HEADER.replace("{a,b}", "{a}") + "1,2,3,a\n0,5,1,a\n",
    "no numeric feature": "@relation n\n@attribute color {red,green}\n@attribute class {a,b}\n@data\nred,a\ngreen,b\n",
    "all values missing": HEADER + "?,?,?,a\n?,?,?,b\n?,?,?,a\n",
    "every class missing": HEADER + "1,2,3,?\n0,5,1,?\n",
    "all-zero sparse rows": HEADER + "{3 a}\n{3 b}\n{}\n",
    "one row": HEADER + "1,2,3,b\n",
    "infinite values": HEADER + "Infinity,-Infinity,1,a\n1,2,3,b\n-Infinity,0,2,b\n",
    "tiny weights": HEADER + "1,2,3,a,{5e-324}\n0,5,1,b,{1e-300}\n2,0,2,a,{4.9e-324}\n",
    "huge weights": HEADER + "1,2,3,a,{1e308}\n0,5,1,b,{1.7e308}\n2,0,2,a,{1.7e308}\n",
}


@functools.lru_cache(maxsize=None)
def built_in_stages() -> dict:
    return {name: registered.value for name, registered in load_plugins().stages.items()}


def argv_for(stage: str, options: list[str], path, positive_label: str = "b") -> list[str]:
    positive = ["--positive", positive_label] if needs_two_classes([stage]) else []
    return [*positive, "-q", str(path), stage, *options]


def assert_output_or_clear_error(run_filterkit, argv):
    result = run_filterkit(*argv)
    assert result.status in (0, 1, 2), (argv, result.stderr)
    if result.status == 2:
        # click's own checks ("Invalid value") and a stage's refusal of its options together
        assert "\nError: " in result.stderr and "Traceback" not in result.stderr, (argv, result.stderr)
    elif result.status == 1:
        assert result.stderr.startswith("filterkit: error:"), (argv, result.stderr)
        assert "failed during" not in result.stderr and "Traceback" not in result.stderr, (argv, result.stderr)
    else:
        assert result.stdout.startswith(b"% filterkit chain:"), argv


#: Every built-in stage, from the registry: a new stage is swept without being listed here.
STAGE_NAMES = sorted(
    name for name, registered in load_plugins().stages.items() if registered.distribution == BUILT_IN_DISTRIBUTION
)


@pytest.mark.slow
@pytest.mark.parametrize("data", DEGENERATE)
@pytest.mark.parametrize("stage", STAGE_NAMES)
def test_every_stage_on_degenerate_data(run_filterkit, tmp_path, stage, data):
    path = tmp_path / "in.arff"
    path.write_text(DEGENERATE[data])
    for example in example_stages()[stage]:  # each option set the stage declares (Stage.examples)
        assert_output_or_clear_error(run_filterkit, argv_for(stage, example.command_words()[1:], path))


def boundary_values(option) -> list:
    """Values at and beyond an option's limits."""
    if option.kind is bool:
        return [True, False]
    if option.kind is str:
        return list(option.choices) or ["", "x"]
    if option.kind is int:
        return [0, -1, 1, 10**12, -(10**12)]
    return [0.0, -1.0, 1.0, 1e-320, 1e308, math.inf, -math.inf, math.nan]


def boundary_cases():
    cases = []
    for stage in ("shape", "auto", "bns", "select", "ordinal"):
        for option in built_in_stages()[stage].options:
            for value in boundary_values(option):
                flag = option.flag
                words = [flag if value else "--no-" + flag[2:]] if option.kind is bool else [flag, str(value)]
                if stage == "select" and option.name not in ("top", "fraction", "min_score", "sparsity"):
                    words = (
                        ["--top", "1", "--metric", "svm" if option.name in ("sample", "C", "seed") else "ig", *words]
                        if option.name != "metric"
                        else ["--top", "1", *words]
                    )
                cases.append(pytest.param(stage, words, id=f"{stage} {' '.join(words)}"))
    return cases


@pytest.mark.slow
@pytest.mark.parametrize("data", ["credit-g", "weighted"])
@pytest.mark.parametrize("stage, words", boundary_cases())
def test_every_option_at_its_boundaries(run_filterkit, tmp_path, stage, words, data):
    path = tmp_path / "in.arff"
    if data == "credit-g":
        lines = (REAL / "credit-g.arff").read_text().splitlines()
        start = next(i for i, line in enumerate(lines) if line.strip().lower() == "@data") + 1
        path.write_text("\n".join(lines[: start + 40]) + "\n")
    else:
        path.write_text(HEADER + "1,2,3,a,{0.1}\n0,5,1,b,{0.3}\n2,0,2,a,{0}\n4,1,0,b,{2}\n")
    # credit-g's classes are good and bad: a --positive b there would be refused before any option is used
    assert_output_or_clear_error(run_filterkit, argv_for(stage, words, path, "bad" if data == "credit-g" else "b"))
