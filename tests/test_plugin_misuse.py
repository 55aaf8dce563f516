"""What a read-only review of the plugin API found a third-party plugin could do unnoticed (the session of 2026-11-30,
ninth): a classifier named with a dash crashed ``evaluate --help`` for everyone, a model ran another plugin's stage of
its stage's name, a state that no model is loaded with was saved, a classifier's scores read as its decisions, and a
broken plugin was warned of once per process that loaded it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from chain_helpers import FILTERKIT
from filterkit.testing import run_filterkit

IRIS = Path(__file__).parent.parent / "arff_samples" / "iris.arff"

CLASSIFIER = '''
import numpy as np
from filterkit.plugin import Classifier, Option, hookimpl

class Odd(Classifier):
    """A linear score of ones whose answers misbehave as it is written."""
    name = "NAME"
    options = OPTIONS
    saveable = True
    def fit(self, features, targets, seed):
        self.w = np.ones(features.shape[1]) * WEIGHT
        return self
    def score(self, features):
        return np.asarray(features @ np.nan_to_num(self.w)).ravel()
    def predict(self, features):
        return PREDICT
    def state(self):
        return {"w": self.w}
    def load_state(self, state):
        self.w = state["w"]

@hookimpl
def register_classifiers(register):
    register(Odd)
'''

SCALING = '''
import numpy as np
from filterkit.plugin import Chunk, Stage, hookimpl

class Scale(Stage):
    """Scales each attribute by FACTOR over its largest training value."""
    name = "scale-by-max"
    learns = True
    def new_statistics(self):
        return None
    def accumulate(self, statistics, chunk):
        largest = chunk.dense_values()[:, self.features].max(axis=0)
        return largest if statistics is None else np.maximum(statistics, largest)
    def finalize(self, statistics):
        self.scale = FACTOR / statistics
        self.scale[0] = FIRST
    def transform(self, chunk):
        values = np.array(chunk.dense_values(), dtype=np.float64)
        values[:, self.features] *= self.scale
        return Chunk(values, chunk.text, chunk.weights)
    def state(self):
        return {"scale": self.scale}
    def load_state(self, state):
        self.scale = np.asarray(state["scale"], dtype=float)

@hookimpl
def register_stages(register):
    register(Scale)
'''


def classifier_plugin(tmp_path, name="odd", options="()", weight="1.0", predict="self.score(features) > 0"):
    folder = tmp_path / "classifier"
    folder.mkdir(exist_ok=True)
    source = CLASSIFIER.replace("NAME", name).replace("OPTIONS", options).replace("WEIGHT", weight)
    (folder / "odd.py").write_text(source.replace("PREDICT", predict))
    return folder


def scaling_plugin(folder: Path, file: str, factor="1.0", first="self.scale[0]") -> Path:
    folder.mkdir(exist_ok=True)
    (folder / file).write_text(SCALING.replace("FACTOR", factor).replace("FIRST", first))
    return folder


@pytest.mark.parametrize("name", ["my-clf", "a.b", "x+y", "my__clf"])
def test_a_classifier_with_options_named_as_no_identifier_is_skipped_not_a_crash_of_every_evaluate(tmp_path, name):
    # its options' click names (NAME__OPTION) were invalid: evaluate --help, evaluate and train ended in a traceback
    folder = classifier_plugin(tmp_path, name=name, options='(Option("k", int, 1, "k"),)')
    for words in (("evaluate", "--help"), ("evaluate", "--positive", "Iris-setosa", "--folds", "3", IRIS, "l2")):
        result = run_filterkit(*words, plugins_dir=folder)
        assert result.status == 0 and "Traceback" not in result.stderr, result.stderr
        assert f"classifier '{name}' has options, so its name, which begins theirs, must be an identifier without" in (
            result.stderr
        )
    plain = classifier_plugin(tmp_path, name=name)  # without options its name is any word, as before
    result = run_filterkit(
        "evaluate", "--classifier", name, "--positive", "Iris-setosa", "--folds", "3", IRIS, "l2", plugins_dir=plain
    )
    assert result.status == 0 and result.stderr == "", result.stderr


@pytest.mark.skipif(FILTERKIT is None, reason="the filterkit console script is not installed")
def test_a_broken_plugin_is_warned_of_once_a_command_not_once_a_load(tmp_path):
    # the command tree, the run and each --jobs worker loaded the plugins: the same warning came two to four times
    # (the console script, whose main() gives each warning once; an in-process run() is not the command)
    folder = classifier_plugin(tmp_path, name="my-clf", options='(Option("k", int, 1, "k"),)')
    for jobs in ("1", "2"):
        argv = ["--plugins-dir", folder, "evaluate", "--jobs", jobs, "--positive", "Iris-setosa", "--folds", "3"]
        result = subprocess.run([FILTERKIT, *map(str, argv), IRIS, "l2"], capture_output=True, text=True)
        assert result.returncode == 0 and result.stderr.count("is skipped") == 1, result.stderr


@pytest.mark.parametrize(
    "predict, answer", [("self.score(features)", "predict returned "), ("self.score(features) * 0 + 2", "2.0")]
)
def test_a_classifier_whose_predict_answers_scores_breaks_the_contract(tmp_path, predict, answer):
    # its scores were read as decisions: every row with a non-zero score predicted positive, status 0
    folder = classifier_plugin(tmp_path, predict=predict)
    result = run_filterkit(
        "evaluate",
        "--classifier",
        "odd",
        "--positive",
        "Iris-versicolor",
        "--folds",
        "3",
        IRIS,
        "minmax",
        plugins_dir=folder,
    )
    assert result.status == 1 and result.stdout == b"" and "Traceback" not in result.stderr
    assert "classifier 'odd'" in result.stderr and "broke the classifier contract" in result.stderr
    assert answer in result.stderr and "where a decision (True or False) is expected" in result.stderr


@pytest.mark.parametrize("weight", ["np.nan", "np.inf"])
def test_a_classifier_state_no_model_is_loaded_with_is_refused_at_saving(tmp_path, weight):
    # train saved it (status 0) and every predict of the model then failed: "not a filterkit model"
    folder = classifier_plugin(tmp_path, weight=weight)
    model = tmp_path / "m.json"
    result = run_filterkit(
        "train", "--classifier", "odd", "--positive", "Iris-setosa", "-o", model, IRIS, "l2", plugins_dir=folder
    )
    assert result.status == 1 and not model.exists() and "Traceback" not in result.stderr
    assert "the classifier cannot be saved: its state 'w' holds" in result.stderr
    assert "which a model is not loaded with" in result.stderr


@pytest.mark.parametrize("first", ["np.nan", "np.inf"])
def test_a_stage_state_no_model_is_loaded_with_is_refused_at_saving(tmp_path, first):
    # NaN anywhere, or an infinity in an array the stage declares finite (every array a plain state holds is
    # checked as NaN only, as loading checks it)
    folder = scaling_plugin(tmp_path / "plugins", "scaling.py", first=first)
    model, out = tmp_path / "m.json", tmp_path / "o.arff"
    result = run_filterkit("--save-model", model, "-o", out, IRIS, "scale-by-max", plugins_dir=folder)
    if first == "np.inf":  # the stage declares no state_arrays: an infinity is its to read back
        assert result.status == 0, result.stderr
        return
    assert result.status == 1 and not model.exists() and not out.exists()
    assert "stage 'scale-by-max' cannot be saved: its state 'scale' holds nan at (0,)" in result.stderr


def test_a_model_is_not_applied_with_another_plugin_s_stage_of_the_same_name(tmp_path):
    # the model records the plugin and its distribution, but loading looked at the stage's name only: another
    # plugin's 'scale-by-max' applied the fitted state to other effect (100 times the values), status 0
    fitted = scaling_plugin(tmp_path / "fitted", "scaling.py")
    model = tmp_path / "m.json"
    assert (
        run_filterkit(
            "-q", "--save-model", model, "-o", tmp_path / "o.arff", IRIS, "scale-by-max", plugins_dir=fitted
        ).status
        == 0
    )
    same = run_filterkit("apply", model, IRIS, plugins_dir=fitted)
    data = (tmp_path / "o.arff").read_bytes().split(b"@data")[1]
    assert same.status == 0 and same.stdout.split(b"@data")[1] == data
    moved = scaling_plugin(tmp_path / "moved", "scaling.py")  # the same plugin's file in another folder
    assert run_filterkit("apply", model, IRIS, plugins_dir=moved).stdout == same.stdout
    other = scaling_plugin(tmp_path / "other", "imposter.py", factor="100.0")
    result = run_filterkit("apply", model, IRIS, plugins_dir=other)
    assert result.status == 1 and result.stdout == b"" and "Traceback" not in result.stderr
    assert "the model needs stage 'scale-by-max' from plugin 'scaling (" in result.stderr
    assert "the installed stage of that name is plugin 'imposter (" in result.stderr


def test_a_classifier_option_with_a_command_s_flag_is_left_out_not_taken_for_it(tmp_path):
    # a classifier 'train' with an option 'fraction' (--train-fraction) took evaluate's own option: the learning
    # curve was not run, and with another classifier chosen it was refused as that classifier's option
    folder = tmp_path / "plugins"
    folder.mkdir()
    source = CLASSIFIER.replace("NAME", "train").replace("OPTIONS", '(Option("fraction", str, "", "f"),)')
    (folder / "clash.py").write_text(source.replace("WEIGHT", "1.0").replace("PREDICT", "self.score(features) > 0"))
    result = run_filterkit(
        "evaluate",
        "--train-fraction",
        "0.5,1",
        "--positive",
        "Iris-setosa",
        "--folds",
        "3",
        IRIS,
        "l2",
        plugins_dir=folder,
    )
    assert result.status == 0, result.stderr
    rows = [line.split()[:2] for line in result.stdout.decode().splitlines()[2:]]
    assert rows == [["l2", "0.5"], ["l2", "1"]]
    assert result.stderr.count("\n") == 1 and "classifier 'train' (plugin 'clash (" in result.stderr
    assert "its option 'fraction' is left out: --train-fraction is an option of 'evaluate'" in result.stderr
    helped = run_filterkit("evaluate", "--help", plugins_dir=folder)
    assert helped.status == 0 and helped.stdout.decode().count("--train-fraction") == 1


def test_a_stemmer_is_listed_and_named_where_it_fails(tmp_path):
    # 'filterkit plugins' listed no stemmer, and a stemmer's crash was blamed on the words stage's plugin alone
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "trunc.py").write_text(
        "from filterkit.plugin import Stemmer, hookimpl\n\ndef fails(word):\n    raise ValueError('stem boom')\n\n"
        '@hookimpl\ndef register_stemmers(register):\n    register(Stemmer("trunc", fails, "Fails."))\n'
    )
    listed = run_filterkit("plugins", plugins_dir=folder).stdout.decode()
    assert "stemmers:\n  trunc        trunc (" in listed and "Fails." in listed
    text = tmp_path / "docs.csv"
    text.write_text("text,class\nsome words,a\nmore words,b\n")
    result = run_filterkit("--text", "text", text, "words", "--stemmer", "trunc", plugins_dir=folder)
    assert result.status == 1 and result.stdout == b"" and "Traceback" not in result.stderr
    assert "stemmer 'trunc' failed on 'some': ValueError: stem boom" in result.stderr


@pytest.mark.parametrize("where", ["transform", "accumulate"])
def test_what_a_stage_prints_goes_to_standard_error_not_into_the_rows(tmp_path, where):
    # a stage's print() landed among the ARFF rows on standard output (status 0), which the next reader refused
    folder = tmp_path / "plugins"
    folder.mkdir()
    printed = {part: 'print("HELLO")' if part == where else "pass" for part in ("transform", "accumulate")}
    (folder / "noisy.py").write_text(
        "from filterkit.plugin import Stage, hookimpl\n\n"
        'class Noisy(Stage):\n    """Prints as it runs."""\n    name = "noisy"\n    learns = True\n'
        "    def new_statistics(self):\n        return 0\n"
        f"    def accumulate(self, statistics, chunk):\n        {printed['accumulate']}\n        return statistics\n"
        "    def finalize(self, statistics):\n        pass\n"
        f"    def transform(self, chunk):\n        {printed['transform']}\n        return chunk\n\n"
        "@hookimpl\ndef register_stages(register):\n    register(Noisy)\n"
    )
    result = run_filterkit(IRIS, "noisy", plugins_dir=folder)
    plain = run_filterkit(IRIS)
    assert result.status == 0 and "HELLO\n" in result.stderr and b"HELLO" not in result.stdout
    assert result.stdout.split(b"@data")[1] == plain.stdout.split(b"@data")[1]


def test_a_score_past_a_double_s_range_names_the_classifier_that_gave_it(tmp_path):
    # the error blamed the row's values alone, though every value of the row is finite
    folder = classifier_plugin(tmp_path, weight="np.inf", predict="np.zeros(features.shape[0], bool)")
    result = run_filterkit(
        "evaluate",
        "--classifier",
        "odd",
        "--positive",
        "Iris-setosa",
        "--folds",
        "3",
        IRIS,
        "minmax",
        plugins_dir=folder,
    )
    assert result.status == 1 and result.stdout == b"" and "Traceback" not in result.stderr
    assert "(of the training rows, then the test file's): classifier 'odd' (plugin 'odd (" in result.stderr
    assert "scored it inf, not a finite number: check the row's values" in result.stderr


def test_a_format_option_named_as_a_command_s_option_is_refused_at_registration(tmp_path):
    # a format's options are every command's: one named 'output' took -o's value on every run, the format used or
    # not ("--output out.arff: arff input written as arff does not take it")
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "fmtopt.py").write_text(
        "from filterkit.plugin import Format, Option, hookimpl\n\nclass Never:\n    pass\n\n"
        "@hookimpl\ndef register_formats(register):\n"
        '    register(Format("never", Never, suffixes=(".never",), options=(Option("output", str, "", "x"),)))\n'
    )
    output = tmp_path / "out.arff"
    result = run_filterkit(IRIS, "l2", "-o", output, plugins_dir=folder)
    assert result.status == 0 and output.read_bytes() == run_filterkit(IRIS, "l2").stdout
    assert "format 'never': its option 'output' (--output) is a command's own option" in result.stderr


def test_the_names_format_options_may_not_take_are_the_commands_own():
    """COMMAND_OPTION_NAMES, written out, is every option name and long flag of the chain and the commands, the
    built-in classifiers' (--svm-c-values …) among them."""
    import importlib

    import click

    from filterkit.cli import _import_command_tree
    from filterkit.commands import COMMANDS, command_line
    from filterkit.formats import format_options
    from filterkit.plugins import COMMAND_OPTION_NAMES

    _import_command_tree()
    commands = [command_line] + [
        getattr(importlib.import_module(module), name) for module, name in (v.split(":") for v in COMMANDS.values())
    ]
    root = click.Context(command_line, info_name="filterkit")
    found = set()
    for command in commands:
        for param in command.get_params(click.Context(command, parent=root, info_name=command.name)):
            if not isinstance(param, click.Option) or param.name in format_options():
                continue  # a format's option
            spelled = [flag[2:].replace("-", "_") for flag in [*param.opts, *param.secondary_opts] if flag[:2] == "--"]
            found.update(spelled if "__" in str(param.name) else [str(param.name), *spelled])  # a classifier's flags
    found.discard("_click_default_help")
    assert found == COMMAND_OPTION_NAMES, (sorted(found - COMMAND_OPTION_NAMES), sorted(COMMAND_OPTION_NAMES - found))


def test_a_format_clashing_by_an_alias_is_named_by_its_own_name(tmp_path):
    # the warning named the built-in format twice: "its format 'svmlight' clashes with the format 'svmlight'"
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "tsvx.py").write_text(
        "from filterkit.plugin import Format, hookimpl\n\nclass Reader:\n    pass\n\n"
        '@hookimpl\ndef register_formats(register):\n    register(Format("tsvx", Reader, aliases=("svm",)))\n'
    )
    result = run_filterkit(IRIS, plugins_dir=folder)
    assert result.status == 0
    assert "its format 'tsvx' clashes with the format 'svmlight' of plugin 'formats' (one name or alias" in (
        result.stderr
    )


@pytest.mark.skipif(FILTERKIT is None, reason="the filterkit console script is not installed")
def test_what_a_stage_echoes_or_writes_goes_to_standard_error_too(tmp_path):
    # click.echo wrote through sys.stdout.buffer, which the redirect had left standard output's, and a stage reading
    # sys.stdout.encoding found None
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "echoes.py").write_text(
        "import sys\n\nimport click\n\nfrom filterkit.plugin import Stage, hookimpl\n\n"
        'class Echoes(Stage):\n    """Echoes as it runs."""\n    name = "echoes"\n\n'
        "    def transform(self, chunk):\n"
        '        click.echo("ECHO")\n        sys.stdout.write(sys.stdout.encoding.lower() + "\\n")\n'
        '        sys.stdout.buffer.write(b"BYTES\\n")\n        return chunk\n\n'
        "@hookimpl\ndef register_stages(register):\n    register(Echoes)\n"
    )
    result = subprocess.run([FILTERKIT, "--plugins-dir", folder, IRIS, "echoes"], capture_output=True)
    assert result.returncode == 0, result.stderr
    assert b"ECHO\n" in result.stderr and b"utf-8\n" in result.stderr and b"BYTES\n" in result.stderr
    assert result.stdout.split(b"@data")[1] == run_filterkit(IRIS).stdout.split(b"@data")[1]


@pytest.mark.parametrize("command", [("evaluate", "--folds", "3"), ("train", "-o", "{model}")])
def test_a_stage_failing_as_it_is_made_is_its_plugin_s_error_not_a_usage_error(tmp_path, command):
    # evaluate and train took the plugin's failure for a mistake in the chain's words: exit 2 and a usage line
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "crashy.py").write_text(
        "from filterkit.plugin import Stage, hookimpl\n\n"
        'class Crashy(Stage):\n    """Fails as it is made."""\n    name = "crashy"\n\n'
        "    def __init__(self, **params):\n        raise RuntimeError('not today')\n\n"
        "@hookimpl\ndef register_stages(register):\n    register(Crashy)\n"
    )
    argv = [tmp_path / "m.json" if word == "{model}" else word for word in command]
    result = run_filterkit(*argv, "--positive", "Iris-setosa", IRIS, "crashy", plugins_dir=folder)
    assert result.status == 1 and "Usage:" not in result.stderr and "Traceback" not in result.stderr
    assert "stage 'crashy' (plugin 'crashy (" in result.stderr
    assert "failed while being made: RuntimeError: not today" in result.stderr


def test_a_model_is_not_applied_with_another_plugin_s_classifier_of_the_same_name(tmp_path):
    # stages were checked, the classifier not: another plugin's 'odd' scored the model's rows, exit 0
    fitted, other = classifier_plugin(tmp_path), tmp_path / "other"
    model = tmp_path / "m.json"
    trained = run_filterkit(
        "train", "--classifier", "odd", "--positive", "Iris-setosa", "-o", model, IRIS, "l2", plugins_dir=fitted
    )
    assert trained.status == 0, trained.stderr
    assert run_filterkit("predict", model, IRIS, plugins_dir=fitted).status == 0
    other.mkdir()
    (other / "imposter.py").write_text((fitted / "odd.py").read_text())
    result = run_filterkit("predict", model, IRIS, plugins_dir=other)
    assert result.status == 1 and result.stdout == b"" and "Traceback" not in result.stderr
    assert "the model needs classifier 'odd' from plugin 'odd (" in result.stderr
    assert "the installed classifier of that name is plugin 'imposter (" in result.stderr


@pytest.mark.parametrize("position", ["-1", "2.7", "7"])
def test_a_trained_model_s_class_position_out_of_range_breaks_the_contract(tmp_path, position):
    # evaluate refused it; predict read -1 as the last class, 2.7 as class 2, and 7 was a traceback
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "classes.py").write_text(
        "import numpy as np\nfrom filterkit.plugin import Classifier, hookimpl\n\n"
        'class Classes(Classifier):\n    """Answers one class position for every row."""\n    name = "classes"\n'
        "    multiclass = True\n    saveable = True\n"
        "    def fit_multiclass(self, features, classes, n_classes, seed):\n        self.n = n_classes\n"
        "        return self\n"
        "    def class_scores(self, features):\n        return np.zeros((features.shape[0], self.n))\n"
        f"    def predict_class(self, features):\n        return np.full(features.shape[0], {position})\n"
        '    def state(self):\n        return {"n": self.n}\n'
        '    def load_state(self, state):\n        self.n = state["n"]\n\n'
        "@hookimpl\ndef register_classifiers(register):\n    register(Classes)\n"
    )
    model = tmp_path / "m.json"
    trained = run_filterkit(
        "train", "--multiclass", "--classifier", "classes", "-o", model, IRIS, "l2", plugins_dir=folder
    )
    assert trained.status == 0, trained.stderr
    result = run_filterkit("predict", model, IRIS, plugins_dir=folder)
    assert result.status == 1 and result.stdout == b"" and "Traceback" not in result.stderr
    assert "broke the classifier contract: predict_class returned a value that is not a class position 0 … 2" in (
        result.stderr
    )


def test_holding_stopping_signals_leaves_a_handler_python_did_not_install_as_it_was():
    """The block put SIG_DFL back on every stopping signal, where a handler installed from C (an embedding host)
    reads as SIG_DFL in Python: a library call writing an output took the host's SIGHUP handler away."""
    import ctypes
    import signal

    from filterkit.ownership import stopping_signals_recorded

    libc = ctypes.CDLL(None)
    libc.signal.restype = ctypes.c_void_p
    libc.signal.argtypes = (ctypes.c_int, ctypes.c_void_p)
    ignore = 1  # SIG_IGN, set behind Python's back: getsignal still says SIG_DFL
    before = signal.getsignal(signal.SIGHUP)
    libc.signal(signal.SIGHUP, ignore)
    try:
        with stopping_signals_recorded():
            pass
        assert libc.signal(signal.SIGHUP, ignore) == ignore  # the previous disposition: still the host's
    finally:
        signal.signal(signal.SIGHUP, before)


def test_a_model_s_stage_failing_as_it_is_made_is_its_plugin_s_error_not_the_model_s(tmp_path, monkeypatch):
    # apply and predict said "not a filterkit model (… failed while being made …)", blaming the file
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "moody.py").write_text(
        "import os\nfrom filterkit.plugin import Stage, hookimpl\n\n"
        'class Moody(Stage):\n    """Fails as it is made when MOODY is set."""\n    name = "moody"\n\n'
        "    def __init__(self, **params):\n        if os.environ.get('MOODY'):\n"
        "            raise RuntimeError('not today')\n        super().__init__(**params)\n\n"
        "    def transform(self, chunk):\n        return chunk\n\n"
        "@hookimpl\ndef register_stages(register):\n    register(Moody)\n"
    )
    model = tmp_path / "m.json"
    saved = run_filterkit("-q", "--save-model", model, "-o", tmp_path / "o.arff", IRIS, "moody", plugins_dir=folder)
    assert saved.status == 0, saved.stderr
    monkeypatch.setenv("MOODY", "1")
    result = run_filterkit("apply", model, IRIS, plugins_dir=folder)
    assert result.status == 1 and result.stdout == b"" and "not a filterkit model" not in result.stderr
    assert "stage 'moody' (plugin 'moody (" in result.stderr
    assert "failed while being made: RuntimeError: not today" in result.stderr
