"""The ``filterkit`` command line: identity, atomic output, exit statuses, class choice, pipes, help."""

from __future__ import annotations

import json
import os
import pty
import subprocess

import numpy as np
import pytest

from chain_helpers import FILTERKIT, REAL, STAGES_DIR, read_bytes, without_comments
from filterkit import __version__
from filterkit.arff import read_arff

REAL_FILES = ["iris.arff", "wine.arff", "credit-g.arff", "oh0.wc.arff", "grain_wc.arff"]


def bad_copy(folder, name="bad.arff"):
    """iris.arff with a non-numeric value in its last row (line 226), far after the first rows."""
    text = (REAL / "iris.arff").read_text()
    assert text.endswith("\n")
    path = folder / name
    path.write_text(text + "5.0,3.3,1.4,x,Iris-setosa\n")
    return path


@pytest.mark.slow
@pytest.mark.parametrize("name", REAL_FILES)
def test_identity_reproduces_every_value_exactly(run_filterkit, name):
    schema, original = read_arff(REAL / name)
    result = run_filterkit(REAL / name)
    assert result.status == 0, result.stderr
    assert result.stderr == ""
    out_schema, rewritten = read_bytes(result.stdout)
    assert out_schema == schema
    assert rewritten.is_sparse == original.is_sparse
    np.testing.assert_array_equal(rewritten.dense_values(), original.dense_values())
    assert rewritten.text == original.text


def test_output_file_holds_what_stdout_would(run_filterkit, tmp_path):
    target = tmp_path / "out.arff"
    to_file = run_filterkit("-o", target, REAL / "iris.arff", "l2")
    to_stdout = run_filterkit(REAL / "iris.arff", "l2")
    assert to_file.status == 0 and to_file.stdout == b""
    assert target.read_bytes() == to_stdout.stdout
    assert sorted(os.listdir(tmp_path)) == ["out.arff"], "no temporary file is left beside the output"


@pytest.mark.parametrize("previous", [None, "old contents\n"], ids=["new-file", "existing-file"])
def test_failed_run_leaves_no_output_nor_temporary_file(filterkit_script, tmp_path, previous):
    bad_copy(tmp_path)  # writes bad.arff into tmp_path
    target = tmp_path / "out.arff"
    if previous is not None:
        target.write_text(previous)
    before = sorted(os.listdir(tmp_path))
    # Small chunks, so rows are already written to the temporary file when line 226 fails.
    result = filterkit_script("--chunk-rows", "10", "-o", "out.arff", "bad.arff", "l2", cwd=tmp_path)
    assert result.status == 1
    assert result.stderr.startswith("filterkit: error: bad.arff:226:")
    assert "petalwidth" in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == b""
    assert sorted(os.listdir(tmp_path)) == before
    if previous is not None:
        assert target.read_text() == previous, "an error must not clobber an existing file"


def test_bad_row_on_stdin_is_located_on_stdin(run_filterkit, tmp_path):
    result = run_filterkit("-", "l2", stdin=bad_copy(tmp_path).read_bytes())
    assert result.status == 1
    assert result.stderr.startswith("filterkit: error: <stdin>:226:")


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--bogus", "IN"], "No such option '--bogus'"),
        (["IN", "l2", "--bogus"], "No such option '--bogus'"),
        (["IN", "no-such-stage"], "No such command 'no-such-stage'"),
        (["IN", "l2", "--chunk-rows", "5"], "--chunk-rows is an option of the chain: put it before"),
        (["--chunk-rows", "0", "IN"], "--chunk-rows"),
        ([], "Missing argument 'IN.arff'"),
        (["IN", "select", "--top", "5", "--fraction", "0.5"], "Error: stage 'select' needs exactly one of"),
        (["IN", "discretize", "--equal-frequency"], "Error: discretize --equal-frequency needs --bins N"),
    ],
    ids=[
        "chain-option",
        "stage-option",
        "stage",
        "chain-option-after-input",
        "out-of-range",
        "no-input",
        "stage-options-together",
        "stage-option-without-its-partner",
    ],
)
def test_usage_errors_exit_2(run_filterkit, argv, message):
    result = run_filterkit(*[str(REAL / "iris.arff") if a == "IN" else a for a in argv])
    assert result.status == 2
    assert message in result.stderr
    assert result.stdout == b""


def test_usage_error_exit_status_of_the_console_script(filterkit_script):
    result = filterkit_script(REAL / "iris.arff", "l2", "--bogus")
    assert result.status == 2
    assert "No such option '--bogus'" in result.stderr
    assert "Traceback" not in result.stderr


def test_missing_input_file_is_a_data_error(run_filterkit, tmp_path):
    result = run_filterkit(tmp_path / "absent.arff", "l2")
    assert result.status == 1
    assert result.stderr.startswith("filterkit: error: ")
    assert "absent.arff" in result.stderr


class TestClassChoice:
    """wine.arff has its class first and a numeric attribute, Proline, last."""

    @pytest.mark.parametrize("spec", ["first", "class", "1"])
    def test_first_attribute_as_class_by_position_name_or_index(self, run_filterkit, spec):
        schema, original = read_arff(REAL / "wine.arff")
        result = run_filterkit("-c", spec, REAL / "wine.arff", "l2")
        assert result.status == 0, result.stderr
        out_schema, out = read_bytes(result.stdout)
        values = out.dense_values()
        np.testing.assert_array_equal(values[:, 0], original.values[:, 0])
        np.testing.assert_allclose(np.linalg.norm(values[:, 1:], axis=1), 1.0, rtol=1e-12)
        assert [a.declared_type for a in out_schema.attributes[1:]] == ["numeric"] * 13

    def test_by_default_the_last_attribute_is_the_class_and_untouched(self, run_filterkit):
        schema, original = read_arff(REAL / "wine.arff")
        result = run_filterkit(REAL / "wine.arff", "l2")
        out_schema, out = read_bytes(result.stdout)
        values = out.dense_values()
        np.testing.assert_array_equal(values[:, 13], original.values[:, 13])
        np.testing.assert_allclose(np.linalg.norm(values[:, 1:13], axis=1), 1.0, rtol=1e-12)
        assert out_schema.attributes[13] == schema.attributes[13], "Proline keeps its INTEGER declaration"

    @pytest.mark.parametrize("spec, message", [("15", "class index 15 is outside 1..14"), ("Colour", "'Colour'")])
    def test_unknown_class_is_a_clear_error(self, run_filterkit, spec, message):
        result = run_filterkit("-c", spec, REAL / "wine.arff", "l2")
        assert result.status == 1
        assert result.stderr.startswith("filterkit: error: ")
        assert message in result.stderr


def test_shell_pipeline_through_stdin_equals_one_chain(shell):
    path = REAL / "oh0.wc.arff"
    piped = shell(f"cat '{path}' | filterkit - l2 | filterkit - l1")
    direct = shell(f"filterkit '{path}' l2 l1")
    assert piped.status == 0 and direct.status == 0, piped.stderr + direct.stderr
    assert piped.stderr == "" and direct.stderr == ""
    assert without_comments(piped.stdout) == without_comments(direct.stdout)
    _, values = read_bytes(piped.stdout)
    assert values.is_sparse
    np.testing.assert_allclose(abs(values.values[:, :-1]).sum(axis=1), 1.0, rtol=1e-12)


@pytest.mark.parametrize("stages", [["l2"], []], ids=["l2", "identity"])
def test_reader_closing_early_ends_filterkit_quietly(shell, stages):
    """The output (1.3 MB) is far larger than a pipe holds, so the pipe surely breaks."""
    command = " ".join(["filterkit", f"'{REAL / 'oh0.wc.arff'}'", *stages])
    result = shell(f'{command} | head -1; echo "status=${{PIPESTATUS[0]}}"')
    line = f"% filterkit chain: {' '.join(stages) or '(identity)'} (filterkit {__version__})"
    assert result.stdout.decode().splitlines() == [line, "status=0"]
    assert result.stderr == ""


@pytest.mark.parametrize("name", ["plugins", "apply"])
def test_file_named_like_a_command_is_read_as_dot_slash_name(run_filterkit, tmp_path, monkeypatch, name):
    (tmp_path / name).write_bytes((REAL / "iris.arff").read_bytes())
    monkeypatch.chdir(tmp_path)
    result = run_filterkit(f"./{name}", "l2")
    assert result.status == 0, result.stderr
    assert read_bytes(result.stdout)[1].n_rows == 150
    if name == "plugins":
        listing = run_filterkit("plugins")
        assert listing.status == 0 and b"normalizers" in listing.stdout, "the bare word is still the command"


def test_option_value_spelled_like_a_command_is_not_taken_for_the_command(run_filterkit, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert run_filterkit("--save-model", "m.json", REAL / "iris.arff", "l2").status == 0
    result = run_filterkit("-o", "apply", "--dense", "apply", "m.json", REAL / "iris.arff")
    assert result.status == 0, result.stderr
    assert read_bytes((tmp_path / "apply").read_bytes())[1].n_rows == 150


def test_help_lists_the_stages_found_at_runtime_apart_from_the_commands(run_filterkit):
    result = run_filterkit("--help", plugins_dir=STAGES_DIR)
    assert result.status == 0
    stages, commands = result.stdout.decode().split("Stages:")[1].split("Commands:")

    def words(section):
        return {line.split()[0] for line in section.splitlines() if line.startswith("  ") and line[2] != " "}

    assert {"l1", "l2", "meanscale", "explode"} <= words(stages)
    assert "Divide each feature by its mean absolute training value" in stages
    expected = {"apply", "evaluate", "explain", "export", "help", "info", "plugins", "predict", "train", "update"}
    assert words(commands) == expected


def test_stage_help_shows_its_options_and_plugin(run_filterkit):
    result = run_filterkit(REAL / "iris.arff", "explode", "--help", plugins_dir=STAGES_DIR)
    assert result.status == 0
    text = result.stdout.decode()
    assert "Usage: filterkit IN.arff explode [OPTIONS]" in text
    assert "--during [fit|transform]" in text
    assert "The step that raises." in text
    assert "plugin: explode" in text
    l2_help = run_filterkit(REAL / "iris.arff", "l2", "--help")
    assert "Euclidean length 1" in l2_help.stdout.decode()
    assert "(plugin: normalizers, filterkit-arff)" in l2_help.stdout.decode()


@pytest.mark.parametrize("step", ["transform", "fit"])
def test_stage_that_raises_is_named_with_its_plugin(run_filterkit, step):
    result = run_filterkit(REAL / "iris.arff", "l2", "explode", "--during", step, plugins_dir=STAGES_DIR)
    assert result.status == 1
    happening = "transforming" if step == "transform" else "fitting"
    assert result.stderr == (
        f"filterkit: error: stage 'explode' (plugin 'explode ({STAGES_DIR / 'explode.py'})', distribution "
        f"'plugins-dir {STAGES_DIR}') failed during {step}: ZeroDivisionError: boom while {happening}\n"
    )
    if step == "fit":
        assert result.stdout == b"", "nothing is written before every stage is fitted"


@pytest.mark.parametrize("name, option", [("oh0.wc.arff", "--dense"), ("iris.arff", "--sparse")])
def test_row_form_can_be_forced_without_changing_values(run_filterkit, tmp_path, name, option):
    header, data = (REAL / name).read_text().split("@DATA", 1)
    sample = tmp_path / name  # the first 60 rows: oh0 written dense is 6 MB in full
    sample.write_text(header + "@DATA" + "\n".join(data.split("\n")[:60]) + "\n")
    as_input = read_bytes(run_filterkit(sample, "l2").stdout)[1]
    result = run_filterkit(option, sample, "l2")
    rows = result.stdout.decode().split("@data\n")[1].splitlines()
    assert len(rows) > 50
    assert all(row.startswith("{") == (option == "--sparse") for row in rows)
    forced = read_bytes(result.stdout)[1]
    assert forced.is_sparse == (option == "--sparse")
    np.testing.assert_array_equal(forced.dense_values(), as_input.dense_values())


@pytest.mark.slow
@pytest.mark.parametrize("name", ["iris.arff", "oh0.wc.arff"])
def test_chunk_size_never_changes_the_output(run_filterkit, name):
    default = run_filterkit(REAL / name, "l2")
    assert default.status == 0
    for rows in ("1", "7"):
        assert run_filterkit("--chunk-rows", rows, REAL / name, "l2").stdout == default.stdout


def stderr_on_a_terminal(*argv) -> str:
    """What the console script writes to stderr when stderr is a terminal (a pseudo-terminal)."""
    leader, follower = pty.openpty()
    completed = subprocess.run([FILTERKIT, *map(str, argv)], stdout=subprocess.DEVNULL, stderr=follower, timeout=60)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # Linux reports EIO once the terminal has no writer
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert completed.returncode == 0
    return b"".join(chunks).decode()


@pytest.mark.slow
@pytest.mark.skipif(FILTERKIT is None, reason="the filterkit console script is not installed")
def test_progress_goes_to_a_terminal_stderr_and_quiet_silences_it():
    chain = [REAL / "iris.arff", "meanscale"]
    assert "filterkit: pass 1/2: fitting meanscale: 100% of 7.5 kB, 150 rows in " in stderr_on_a_terminal(
        "--plugins-dir", STAGES_DIR, *chain
    )
    assert stderr_on_a_terminal("--plugins-dir", STAGES_DIR, "-q", *chain) == ""


@pytest.mark.slow
def test_output_into_a_missing_folder_names_the_requested_path(tmp_path):
    target = tmp_path / "no-such-folder" / "out.arff"
    result = subprocess.run(
        [FILTERKIT, "-o", str(target), str(REAL / "iris.arff"), "l2"], capture_output=True, text=True
    )
    assert result.returncode == 1
    assert result.stderr == f"filterkit: error: cannot write {target}: no folder {target.parent}\n"


@pytest.mark.slow
def test_the_output_records_the_chain_as_typed_with_its_options(run_filterkit, tmp_path):
    chain = ["ig", "--presence", "select", "--top", "7", "shape", "--no-zero-bin", "--neighbors", "3", "l2"]
    result = run_filterkit("--positive", "Ethics", REAL / "oh0.wc.arff", *chain)
    assert result.status == 0, result.stderr
    first_line = result.stdout.decode().split("\n", 1)[0]
    version = f"(filterkit {__version__})"
    assert first_line == f"% filterkit chain: --positive Ethics {' '.join(chain)} {version}"
    model = tmp_path / "m.json"
    run_filterkit("--save-model", model, "--positive", "Ethics", REAL / "oh0.wc.arff", *chain)
    applied = run_filterkit("apply", model, REAL / "oh0.wc.arff")
    assert (
        applied.stdout.decode().split("\n", 1)[0]
        == f"% filterkit apply m.json: --positive Ethics {' '.join(chain)} {version}"
    )


def test_a_model_path_spelled_like_a_command_is_the_chain_s_value(run_filterkit, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run_filterkit("--save-model", "apply", REAL / "iris.arff", "minmax")
    assert result.status == 0, result.stderr
    assert json.loads((tmp_path / "apply").read_text())["stages"][0]["name"] == "minmax"


def test_a_command_word_after_the_shared_options_is_the_command(run_filterkit):
    result = run_filterkit("-c", "first", "info", REAL / "iris.arff")
    assert result.status == 0, result.stderr
    assert "class:       'sepallength' (attribute 1, numeric" in result.stdout.decode()


def test_classifier_options_are_checked_by_their_declared_bounds_like_stage_options(run_filterkit):
    classifier = run_filterkit(
        "evaluate", "--positive", "Iris-setosa", "--svm-inner-folds", "1", REAL / "iris.arff", "l2"
    )
    stage = run_filterkit(REAL / "iris.arff", "select", "--top", "0")
    assert (classifier.status, stage.status) == (2, 2)
    assert "Invalid value for '--svm-inner-folds': 1 is not in the range x>=2." in classifier.stderr
    assert "Invalid value for '--top': 0 is not in the range x>=1." in stage.stderr
    # the classifier's own refusal of an option, like a stage's, is a usage error too
    grid = run_filterkit("evaluate", "--positive", "Iris-setosa", "--svm-c-values", "x", REAL / "iris.arff", "l2")
    assert grid.status == 2 and "Error: svm: --svm-c-values 'x' is not a list of numbers" in grid.stderr


@pytest.mark.parametrize("grid", ["nan", "0.1,inf", "-1", "0", "1,1e300"])
def test_a_c_grid_of_no_positive_number_is_a_usage_error_and_a_c_past_1e10_is_not_fitted(run_filterkit, tmp_path, grid):
    # nan reached liblinear (a fit-time error), and C = 1e120 on iris never returned, deaf to SIGTERM
    model = tmp_path / "m.json"
    result = run_filterkit("train", "--multiclass", "--svm-c-values", grid, "-o", model, REAL / "iris.arff", "minmax")
    if grid == "1,1e300":
        assert (result.status, result.stderr) == (
            1,
            "filterkit: error: svm: C = 1e+300 is above 1e+10, where liblinear may never return\n",
        )
    else:
        assert result.status == 2 and "Error: svm: every C must be a positive number" in result.stderr
    assert not model.exists()


@pytest.mark.parametrize(
    "fractions, why", [("2", "every fraction must be in (0, 1]"), ("x", "is not a list of numbers")]
)
def test_a_learning_curve_fraction_out_of_range_is_a_usage_error(run_filterkit, fractions, why):
    """``--train-fraction``, like ``--folds``, is refused as a usage error (status 2), as the command line reads it;
    it had been an error of the run (status 1)."""
    result = run_filterkit("evaluate", "--train-fraction", fractions, REAL / "iris.arff", "l2")
    assert result.status == 2 and f"Invalid value for '--train-fraction': '{fractions}'" in result.stderr
    assert why in result.stderr


@pytest.mark.parametrize(
    "option, value, why",
    [
        ("--train-fraction", "0.5,0.5", "'0.5,0.5': the fraction 0.5 is given twice"),
        ("--train-fraction", "0.5,1,.5", "the fraction 0.5 is given twice"),
        ("--train-fraction", "0.1234561,0.1234561", "the fraction 0.1234561 is given twice"),
    ],
)
def test_a_value_given_twice_in_a_list_option_is_a_usage_error(run_filterkit, option, value, why):
    # the second was dropped without a word, where --sweep and --compare refuse a value or chain given twice
    result = run_filterkit("evaluate", "--folds", "3", option, value, REAL / "iris.arff", "l2")
    assert result.status == 2 and why in result.stderr and "Traceback" not in result.stderr


def test_a_c_given_twice_is_searched_once_and_a_model_saved_with_one_still_loads(run_filterkit, tmp_path):
    # refusing it had refused the models saved before, which hold the grid as given
    model = tmp_path / "m.json"
    argv = ("--positive", "Iris-setosa", "--svm-c-values", "1,1.0,10")
    assert run_filterkit("train", "-o", model, *argv, REAL / "iris.arff", "minmax").status == 0
    document = json.loads(model.read_text())
    assert document["classifier"]["params"]["c_values"] == "1,1.0,10"
    assert document["classifier"]["fitted"]["C_scored"] == [1.0, 10.0]
    assert list(document["classifier"]["fitted"]["inner_auc"]) == ["1.0", "10.0"]
    assert run_filterkit("predict", model, REAL / "iris.arff").status == 0


@pytest.mark.parametrize(
    "argv, option",
    [
        (["{iris}", "remove", "--range", "1", "--range", "2"], "--range"),
        (["{iris}", "select", "--metric", "ig", "--metric", "chi", "--top", "2"], "--metric"),
        (["-c", "first", "-c", "last", "{iris}", "l2"], "-c"),
        (["--sparse", "--dense", "{iris}", "l2"], "--sparse"),
        (["-o", "{out}", "{iris}", "l2", "-o", "{out}"], "-o"),
        (["evaluate", "--folds", "3", "--folds", "4", "{iris}", "l2"], "--folds"),
        (["info", "--top", "2", "--top", "3", "{iris}"], "--top"),
    ],
    ids=["stage", "stage-choice", "chain", "flag-pair", "output-before-and-after", "evaluate", "info"],
)
def test_an_option_given_twice_is_a_usage_error(run_filterkit, tmp_path, argv, option):
    # the last one had won without a word: remove --range 1 --range 2 removed attribute 2 alone, and -o a.arff
    # … -o b.arff never wrote a.arff
    out = tmp_path / "out.arff"
    argv = [REAL / "iris.arff" if word == "{iris}" else out if word == "{out}" else word for word in argv]
    result = run_filterkit(*argv)
    assert result.status == 2 and "given twice" in result.stderr and option in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and not out.exists()


@pytest.mark.parametrize(
    "option, value, why",
    [
        ("--train-fraction", "0.5,,1", "is not a list of numbers"),
        ("--train-fraction", "0.5,1,", "is not a list of numbers"),
        ("--sweep", "select.top=1,,2", "is not STAGE.OPTION=VALUE,VALUE"),
        ("--sweep", "select.top=2,3,", "is not STAGE.OPTION=VALUE,VALUE"),
    ],
)
def test_an_empty_item_of_a_list_option_is_refused_not_dropped(run_filterkit, option, value, why):
    # the empty item was dropped without a word, where --svm-c-values 1,,10 is refused
    result = run_filterkit("evaluate", "--folds", "3", option, value, REAL / "iris.arff", "select", "--metric", "ig")
    assert result.status in (1, 2) and why in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("command", [(), ("evaluate", "--folds", "3")])
def test_a_label_separator_without_a_labels_column_is_a_usage_error(run_filterkit, tmp_path, command):
    # a CSV input without --labels-column took --label-separator and did nothing with it, where ARFF refused it
    path = tmp_path / "iris.csv"
    path.write_bytes(run_filterkit(REAL / "iris.arff", "--to", "csv").stdout)
    result = run_filterkit(*command, "--label-separator", ";", path, "l2")
    assert result.status == 2 and "splits the labels of --labels-column" in result.stderr
    written = run_filterkit(
        "--label-separator", ";", "--to", "csv", REAL.parent / "multilabel" / "three-labels-synthetic.arff"
    )
    assert written.status == 0 and written.stdout.startswith(b"labels,")


@pytest.mark.parametrize(
    "argv, written", [(("--json", "-o", "{out}.csv"), "JSON Lines"), (("-o", "{out}.arff"), "CSV")], ids=["json", "csv"]
)
def test_predictions_to_a_file_named_as_another_format_are_a_usage_error(run_filterkit, tmp_path, argv, written):
    # JSON Lines went into p.csv and CSV into p.arff, exit 0, where the chain refuses -o out.arff --to csv
    model = tmp_path / "m.json"
    trained = run_filterkit(
        "train", "-q", "-o", model, "--positive", "Iris-setosa", "--svm-c-values", "1", REAL / "iris.arff", "minmax"
    )
    assert trained.status == 0, trained.stderr
    argv = [word.replace("{out}", str(tmp_path / "p")) for word in argv]
    result = run_filterkit("predict", *argv, model, REAL / "iris.arff")
    assert result.status == 2 and f"predictions are written as {written}" in result.stderr
    assert not any(path.name.startswith("p.") for path in tmp_path.iterdir())
    assert run_filterkit("predict", "-o", tmp_path / "p.csv", model, REAL / "iris.arff").status == 0
