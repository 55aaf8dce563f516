"""The command line's conventions (issue 18): help wherever it is asked for, ``-h``,
``--version``, ``python -m filterkit``, shell completion, and chain options accepted where
people put them, with an error that says where a misplaced option belongs."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import version

import pytest

from chain_helpers import FIXTURE_PLUGINS, REAL, read_bytes
from filterkit import __version__, cli

IRIS = REAL / "iris.arff"
BROKEN = FIXTURE_PLUGINS / "broken"


class TestHelp:
    def test_stage_help_by_stage_name_first_or_by_the_help_command(self, run_filterkit):
        after_input = run_filterkit(IRIS, "select", "--help")
        assert after_input.status == 0
        assert after_input.stdout.decode().startswith("Usage: filterkit IN.arff select [OPTIONS]\n")
        assert "--top INTEGER RANGE" in after_input.stdout.decode()
        for argv in (["select", "--help"], ["select", "-h"], ["select", "--top", "5", "--help"], ["help", "select"]):
            result = run_filterkit(*argv)
            assert (result.status, result.stdout) == (0, after_input.stdout), argv

    def test_help_alone_is_filterkit_s_help_and_help_of_a_command_is_its_help(self, run_filterkit):
        top = run_filterkit("--help")
        assert top.stdout.decode().startswith("Usage: filterkit [OPTIONS] IN.arff STAGE")
        assert run_filterkit("help").stdout == top.stdout
        apply_help = run_filterkit("apply", "--help")
        assert apply_help.stdout.decode().startswith("Usage: filterkit apply [OPTIONS] MODEL.json IN.arff")
        assert run_filterkit("help", "apply").stdout == apply_help.stdout

    def test_help_of_an_unknown_topic_is_a_usage_error_naming_stages_and_commands(self, run_filterkit):
        result = run_filterkit("help", "selekt")
        assert result.status == 2
        assert "no stage or command called 'selekt' (stages: acc, acc2," in result.stderr
        commands = "apply, evaluate, explain, export, help, info, plugins, predict, train, update"
        assert f"commands: {commands})" in result.stderr

    @pytest.mark.parametrize(
        "argv",
        [[], ["apply"], ["evaluate"], ["info"], ["plugins"], ["help"], ["IN", "l2"], ["IN", "ig", "select"]],
        ids=lambda argv: " ".join(argv) or "filterkit",
    )
    def test_dash_h_is_help_everywhere(self, run_filterkit, argv):
        argv = [str(IRIS) if word == "IN" else word for word in argv]
        long, short = run_filterkit(*argv, "--help"), run_filterkit(*argv, "-h")
        assert (long.status, short.status) == (0, 0)
        assert short.stdout == long.stdout
        assert b"-h, --help" in long.stdout

    def test_help_and_version_work_with_a_broken_plugin(self, run_filterkit):
        listing = run_filterkit("--help", plugins_dir=BROKEN)
        assert listing.status == 0
        assert "negate" in listing.stdout.decode().split("Stages:")[1]
        assert "plugin 'fails_to_import" in listing.stderr
        stage = run_filterkit("help", "negate", plugins_dir=BROKEN)
        assert stage.status == 0 and "Usage: filterkit IN.arff negate [OPTIONS]" in stage.stdout.decode()
        versions = run_filterkit("--version", plugins_dir=BROKEN)
        assert versions.status == 0
        assert f"  --plugins-dir {BROKEN}: fails_to_import, negate\n" in versions.stdout.decode()


def test_version_names_filterkit_its_libraries_and_each_plugin_distribution(run_filterkit):
    result = run_filterkit("--version")
    assert result.status == 0
    lines = result.stdout.decode().splitlines()
    assert lines[0] == f"filterkit {__version__}"
    assert lines[1] == f"Python {sys.version.split()[0]}"
    assert lines[2:5] == [f"{name} {version(name)}" for name in ("numpy", "scipy", "scikit-learn")]
    assert lines[5] == "plugins:"
    built_in = (
        "auto, classifiers, discretize, formats, housekeeping, metrics, normalizers, ordinal, scorers, selection, "
        "shaper, words"
    )
    assert f"  filterkit-arff {__version__}: {built_in}" in lines[6:]


def test_version_marks_a_disabled_plugin(run_filterkit, monkeypatch):
    monkeypatch.setenv("FILTERKIT_DISABLE_PLUGINS", "ordinal")
    assert ", ordinal (disabled), " in run_filterkit("--version").stdout.decode()


@pytest.mark.slow
def test_python_dash_m_filterkit_is_the_command(tmp_path):
    completed = subprocess.run(
        [sys.executable, "-m", "filterkit", str(IRIS), "select", "--top", "0"], capture_output=True, text=True
    )
    assert completed.returncode == 2
    assert completed.stderr.startswith("Usage: filterkit IN.arff select [OPTIONS]\n")


def completion_environment(*words: str) -> dict[str, str]:
    """The environment in which bash asks for the completions of the last of ``words`` (the words
    typed after ``filterkit``)."""
    typed = ["filterkit", *words]
    return {"COMP_WORDS": " ".join(typed), "COMP_CWORD": str(len(typed) - 1)}


@pytest.mark.slow
def test_the_console_script_answers_shell_completion_from_its_environment():
    # the process-level protocol: the variable set, filterkit answers on stdout, nothing on stderr, exit 0
    environment = {**os.environ, cli.COMPLETION_VARIABLE: "bash_complete", **completion_environment(str(IRIS), "sh")}
    completed = subprocess.run(
        [sys.executable, "-m", "filterkit"], env=environment, capture_output=True, text=True, timeout=60
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stderr == ""
    assert completed.stdout.splitlines() == ["plain,shape"]


class TestShellCompletion:
    """What ``filterkit.cli.complete`` answers, in this process (the console script hands it the
    instruction: the test above runs that hand-over)."""

    @pytest.fixture
    def completions(self, monkeypatch, capsys):
        """What bash completion offers for the last of the words, as click's ``TYPE,VALUE`` lines."""

        def complete(*words: str) -> list[str]:
            for name, value in completion_environment(*words).items():
                monkeypatch.setenv(name, value)
            assert cli.complete("bash_complete") == 0
            out, err = capsys.readouterr()
            assert err == ""
            return out.splitlines()

        return complete

    def test_stage_names_after_the_input(self, completions):
        assert completions(str(IRIS), "sh") == ["plain,shape"]
        assert completions("-c", "first", str(IRIS), "ig", "--presence", "select", "--top", "5", "l") == [
            "plain,l1",
            "plain,l2",
        ]

    def test_stage_options_after_the_stage(self, completions):
        assert completions(str(IRIS), "select", "--t") == ["plain,--top"]

    def test_chain_options_before_and_after_the_input(self, completions):
        assert completions("--po") == ["plain,--positive"]
        assert completions(str(IRIS), "--po") == ["plain,--positive"]

    def test_commands_and_files_as_the_first_word_and_topics_after_help(self, completions):
        commands = ("apply", "evaluate", "explain", "export", "help", "info", "plugins", "predict", "train", "update")
        assert completions("") == [f"plain,{c}" for c in commands] + ["file,"]
        assert completions("help", "s") == ["plain,select", "plain,shape"]

    @pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
    def test_the_completion_script_of_each_shell(self, capsys, shell):
        assert cli.complete(f"{shell}_source") == 0
        script = capsys.readouterr().out
        assert "_FILTERKIT_COMPLETE" in script
        assert f"{shell}_complete" in script


class TestOptionsWherePeoplePutThem:
    def test_chain_options_after_the_input_file_mean_what_they_mean_before_it(self, run_filterkit, tmp_path):
        before = run_filterkit("--positive", "Iris-setosa", "-c", "last", "--dense", IRIS, "shape", "l2")
        assert before.status == 0, before.stderr
        after = run_filterkit(IRIS, "--positive", "Iris-setosa", "-c", "last", "--dense", "shape", "l2")
        assert after.stdout == before.stdout
        mixed = run_filterkit(
            "--positive=Iris-setosa", IRIS, "-clast", "-o", tmp_path / "out.arff", "--dense", "shape", "l2"
        )
        assert (mixed.status, mixed.stdout) == (0, b"")
        assert (tmp_path / "out.arff").read_bytes() == before.stdout

    def test_a_chain_option_s_value_may_be_spelled_like_a_stage(self, run_filterkit, tmp_path):
        data = tmp_path / "named.arff"
        data.write_text(
            "@relation named\n@attribute select {yes,no}\n@attribute x numeric\n@attribute y numeric\n"
            "@data\nyes,1,0\nyes,2,0\nno,0,1\nno,0,3\n"
        )
        before = run_filterkit("-c", "select", data, "ig", "select", "--top", "1")
        assert before.status == 0, before.stderr
        schema, _ = read_bytes(before.stdout)
        assert [a.name for a in schema.attributes] == ["select", "x"]
        assert run_filterkit(data, "-c", "select", "ig", "select", "--top", "1").stdout == before.stdout

    @pytest.mark.parametrize(
        "argv",
        [["--top", "5", "IN", "ig", "select"], ["IN", "--top", "5", "ig", "select"], ["IN", "--top=5", "ig", "select"]],
        ids=["before-input", "after-input", "joined-value"],
    )
    def test_a_stage_option_before_its_stage_says_where_it_belongs(self, run_filterkit, argv):
        result = run_filterkit(*[str(IRIS) if word == "IN" else word for word in argv])
        assert result.status == 2
        assert result.stderr.endswith("Error: --top is an option of select: put it after 'select'\n")
        assert "Did you mean" not in result.stderr
        assert result.stdout == b""

    def test_an_option_of_another_stage_names_that_stage(self, run_filterkit):
        result = run_filterkit(IRIS, "select", "--top", "2", "l2", "--top", "1")
        assert result.status == 2
        assert result.stderr.endswith("Error: --top is an option of select, not of l2: put it after 'select'\n")
        shared = run_filterkit(IRIS, "--no-presence", "ig")
        assert "--no-presence is an option of acc, acc2, bns, chi, dfreq, didf, f1, idf, ig, igm," in shared.stderr
        assert shared.stderr.endswith(": put it after the name of the stage it is for\n")

    def test_a_chain_option_after_a_stage_says_where_it_belongs(self, run_filterkit):
        result = run_filterkit(IRIS, "l2", "--positive", "Iris-setosa")
        assert result.status == 2
        assert result.stderr.endswith(
            "Error: --positive is an option of the chain: put it before the input file or the first stage\n"
        )

    def test_an_option_of_evaluate_or_train_after_the_input_says_where_it_belongs(self, run_filterkit, tmp_path):
        model = tmp_path / "m.json"
        late_output = run_filterkit("train", IRIS, "l2", "-o", model)
        assert late_output.status == 2
        assert late_output.stderr.endswith(
            "Error: -o is an option of train: put it before the input file, not among the chain's words\n"
        )
        assert not model.exists()
        late_own = run_filterkit("evaluate", IRIS, "l2", "--svm-c-by", "f1")
        assert late_own.status == 2
        assert late_own.stderr.endswith(
            "Error: chain 'l2 --svm-c-by f1': --svm-c-by is an option of evaluate: put it before the input file\n"
        )
        shared_with_auto = run_filterkit("evaluate", IRIS, "l2", "--folds", "3")
        assert shared_with_auto.status == 2
        assert shared_with_auto.stderr.endswith(
            "--folds is an option of auto, not of l2: put it after 'auto'; or, as evaluate's own option, "
            "before the input file\n"
        )
        before_the_chain = run_filterkit("train", "-o", model, IRIS, "--search", "flat", "l2")
        assert before_the_chain.status == 2
        assert before_the_chain.stderr.endswith(
            "Error: chain '--search flat l2': --search is an option of train: put it before the input file\n"
        )
        stage_only = run_filterkit("evaluate", IRIS, "l2", "--top", "2")
        assert stage_only.status == 2  # a mistake in the chain's words, as the chain command's (it was 1)
        assert stage_only.stderr.endswith("--top is an option of select, not of l2: put it after 'select'\n")

    def test_suggestions_name_only_options_that_look_alike(self, run_filterkit):
        typo = run_filterkit(IRIS, "select", "--tp", "5")
        assert typo.stderr.endswith("Error: No such option '--tp'. Did you mean '--top'?\n")
        unknown = run_filterkit(IRIS, "--bogus", "l2")
        assert unknown.stderr.endswith("Error: No such option '--bogus'.\n")
        chain_typo = run_filterkit(IRIS, "--postive", "x", "l2")
        assert chain_typo.stderr.endswith("Error: No such option '--postive'. Did you mean '--positive'?\n")
