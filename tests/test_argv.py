"""The chain's command line as click parses it, each option once (issue 38, item 4): the chain's
options before and after IN.arff, the output options after the last stage, and what is refused."""

from __future__ import annotations

import pytest

from chain_helpers import REAL, read_bytes
from filterkit import cli

IRIS = REAL / "iris.arff"

#: A stage that declares an option spelled like one of the chain's output options.
ROUNDING = '''
from filterkit.hookspecs import hookimpl
from filterkit.stage import Option, Stage


class Rounding(Stage):
    """Leave the values as they are; its --digits is its own."""

    name = "rounding"
    summary = "Leave the values as they are (test fixture)."
    options = (Option("digits", int, 1, "Digits of its own."),)

    def transform(self, chunk):
        return chunk


@hookimpl
def register_stages(register):
    register(Rounding)
'''


@pytest.mark.parametrize(
    "argv",
    [
        ["-o", "OUT", "--digits", "3", "IN", "shape", "l2"],
        ["IN", "-o", "OUT", "--digits", "3", "shape", "l2"],
        ["IN", "shape", "l2", "-o", "OUT", "--digits", "3"],
        ["IN", "--digits", "3", "shape", "l2", "--output=OUT"],
    ],
    ids=["before-input", "after-input", "after-last-stage", "split"],
)
def test_the_output_options_mean_the_same_wherever_they_stand(run_filterkit, tmp_path, argv):
    expected = run_filterkit("--positive", "Iris-setosa", "--digits", "3", IRIS, "shape", "l2")
    assert expected.status == 0, expected.stderr
    assert b"\n-0.571,0.177,-0.569,-0.565,Iris-virginica\n" in expected.stdout  # three significant digits
    out = tmp_path / "out.arff"
    words = [str(IRIS) if w == "IN" else str(out) if w == "OUT" else w.replace("OUT", str(out)) for w in argv]
    result = run_filterkit("--positive", "Iris-setosa", *words)
    assert (result.status, result.stderr, result.stdout) == (0, "", b"")
    assert out.read_bytes() == expected.stdout


def test_an_output_file_named_like_a_stage_after_the_last_stage(run_filterkit, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run_filterkit(IRIS, "l2", "-o", "shape")
    assert result.status == 0, result.stderr
    assert (tmp_path / "shape").read_bytes() == run_filterkit(IRIS, "l2").stdout


@pytest.mark.parametrize(
    "argv, misplaced",
    [(["l2", "-o", "OUT", "minmax"], "-o"), (["l2", "-o", "OUT", "--chunk-rows", "5"], "--chunk-rows")],
    ids=["before-another-stage", "followed-by-another-chain-option"],
)
def test_a_chain_option_between_stages_is_refused_naming_it(run_filterkit, tmp_path, argv, misplaced):
    out = tmp_path / "out.arff"
    result = run_filterkit(IRIS, *[str(out) if word == "OUT" else word for word in argv])
    assert result.status == 2
    assert result.stderr.endswith(
        f"Error: {misplaced} is an option of the chain: put it before the input file or the first stage\n"
    )
    assert not out.exists()


def test_a_stage_option_spelled_like_an_output_option_is_the_stage_s(run_filterkit, tmp_path):
    (tmp_path / "rounding.py").write_text(ROUNDING)
    result = run_filterkit(IRIS, "rounding", "--digits", "3", plugins_dir=tmp_path)
    assert result.status == 0, result.stderr
    assert result.stdout.startswith(b"% filterkit chain: rounding --digits 3 (filterkit ")
    assert read_bytes(result.stdout)[1].n_rows == 150
    exact = run_filterkit(IRIS).stdout.split(b"@data", 1)[1]
    assert result.stdout.split(b"@data", 1)[1] == exact, "the chain's --digits did not round the numbers"


def test_help_and_usage_errors_after_the_input_are_the_chain_s(run_filterkit):
    chain_help = run_filterkit("--help")
    after_input = run_filterkit(IRIS, "--quiet", "--help")
    assert (after_input.status, after_input.stdout) == (0, chain_help.stdout)
    bad = run_filterkit(IRIS, "--chunk-rows", "0", "l2")
    assert bad.status == 2
    assert bad.stderr.startswith("Usage: filterkit [OPTIONS] IN.arff STAGE [OPTIONS]...")
    assert "Try 'filterkit --help' for help." in bad.stderr
    assert "Invalid value for '--chunk-rows': 0 is not in the range 1<=x<=9223372036854775807." in bad.stderr


def test_double_dash_ends_the_chain_s_options(run_filterkit):
    result = run_filterkit(IRIS, "-q", "--", "l2")
    assert result.status == 0, result.stderr
    assert result.stdout == run_filterkit(IRIS, "l2").stdout


def test_shell_completion_goes_on_past_an_output_option_between_stages(monkeypatch, capsys):
    """Completing is no run: the misplaced -o is refused when the line runs, not while it is typed."""
    monkeypatch.setenv("COMP_WORDS", f"filterkit {IRIS} l2 -o x shape l")
    monkeypatch.setenv("COMP_CWORD", "6")
    assert cli.complete("bash_complete") == 0
    assert capsys.readouterr() == ("plain,l1\n", "")
