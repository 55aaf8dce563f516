"""A third-party plugin that fails where a model is read, or answers probabilities the classifier contract does not
allow, is one error line naming it (found by a hostile review of the plugin contract): its ``load_state`` crashing
was a traceback (or blamed the model file), and probabilities of the wrong shape, NaN or 7.0 were a traceback, or
written as they came with status 0."""

from __future__ import annotations

from pathlib import Path

import pytest

from filterkit.testing import run_filterkit

IRIS = Path(__file__).parent.parent / "arff_samples" / "iris.arff"

COUNTED = '''
import os
from filterkit.plugin import Stage, hookimpl

class Counted(Stage):
    """Learns a row count."""
    name = "counted"
    learns = True
    def new_statistics(self):
        return 0
    def accumulate(self, statistics, chunk):
        return statistics + chunk.n_rows
    def finalize(self, statistics):
        self.n = statistics
    def transform(self, chunk):
        return chunk
    def state(self):
        return {"n": self.n}
    def load_state(self, state):
        if os.environ.get("COUNTED_FAILS") == "load":
            raise RuntimeError("cannot load today")
        self.n = state["n"]
    def output_schema(self):
        if os.environ.get("COUNTED_FAILS") == "schema" and hasattr(self, "n"):
            1 / 0
        return super().output_schema()

@hookimpl
def register_stages(register):
    register(Counted)
'''

PROBABLE = '''
import os
import numpy as np
from filterkit.plugin import Classifier, hookimpl

class Probable(Classifier):
    """A linear score whose probabilities misbehave as PROBABLE says."""
    name = "probable"
    saveable = True
    has_probabilities = True
    def fit(self, features, targets, seed):
        self.w = np.ones(features.shape[1])
        return self
    def score(self, features):
        return np.asarray(features @ self.w).ravel()
    def predict(self, features):
        return self.score(features) > 5
    def probabilities(self, features):
        n, how = features.shape[0], os.environ.get("PROBABLE", "")
        return {"short": np.zeros(n - 1), "seven": np.full(n, 7.0), "nan": np.full(n, np.nan),
                "wide": np.zeros((n, 5)), "column": np.full((n, 1), 0.25)}.get(how, np.full(n, 0.5))
    def describe(self):
        return {}
    def state(self):
        return {"w": self.w}
    def load_state(self, state):
        if os.environ.get("PROBABLE") == "load":
            raise RuntimeError("cannot load today")
        self.w = np.asarray(state["w" if os.environ.get("PROBABLE") != "misfit" else "v"])

@hookimpl
def register_classifiers(register):
    register(Probable)
'''


@pytest.mark.parametrize(
    "fails, crash", [("load", "RuntimeError: cannot load today"), ("schema", "ZeroDivisionError: division by zero")]
)
def test_a_stage_failing_to_load_its_saved_state_is_named_not_the_model(tmp_path, monkeypatch, fails, crash):
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "counted.py").write_text(COUNTED)
    model, out = tmp_path / "m.json", tmp_path / "out.arff"
    saved = run_filterkit(
        "-q", "--save-model", model, "-o", tmp_path / "train.arff", IRIS, "counted", plugins_dir=tmp_path / "plugins"
    )
    assert saved.status == 0, saved.stderr
    monkeypatch.setenv("COUNTED_FAILS", fails)
    applied = run_filterkit("apply", model, IRIS, "-o", out, plugins_dir=tmp_path / "plugins")
    assert applied.status == 1 and not out.exists()
    folder = tmp_path / "plugins"
    origin = f"stage 'counted' (plugin 'counted ({folder}/counted.py)', distribution 'plugins-dir {folder}')"
    assert applied.stderr == f"filterkit: error: {origin} failed while loading its saved state: {crash}\n"


@pytest.mark.parametrize(
    "how, what",
    [
        ("short", "probabilities returned values of shape (149,) for 150 test rows (one number per row is expected)"),
        ("nan", "probabilities returned NaN for 150 test rows (one number per row is expected)"),
        ("seven", "probabilities returned a value outside [0, 1]"),
        ("wide", "probabilities returned values of shape (150, 5) for 150 test rows and 1 classes"),
    ],
)
def test_probabilities_the_contract_does_not_allow_are_named_with_the_classifier(tmp_path, monkeypatch, how, what):
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "probable.py").write_text(PROBABLE)
    model = tmp_path / "m.json"
    trained = run_filterkit(
        "train",
        "-q",
        "-o",
        model,
        "--classifier",
        "probable",
        "--positive",
        "Iris-setosa",
        IRIS,
        "l2",
        plugins_dir=tmp_path / "plugins",
    )
    assert trained.status == 0, trained.stderr
    for good in ("", "column"):  # one a row, or a column of them
        monkeypatch.setenv("PROBABLE", good)
        predicted = run_filterkit("predict", model, IRIS, plugins_dir=tmp_path / "plugins")
        assert predicted.status == 0 and predicted.stdout.count(b"\n") == 151, predicted.stderr
    monkeypatch.setenv("PROBABLE", how)
    refused = run_filterkit("predict", model, IRIS, plugins_dir=tmp_path / "plugins")
    assert refused.status == 1 and refused.stdout == b""
    folder = tmp_path / "plugins"
    origin = f"classifier 'probable' (plugin 'probable ({folder}/probable.py)', distribution 'plugins-dir {folder}')"
    assert refused.stderr.startswith(f"filterkit: error: {origin} broke the classifier contract: {what}")


def _trained_probable(tmp_path) -> Path:
    """A model of the ``probable`` test classifier, trained on iris (its plugin under ``tmp_path / "plugins"``)."""
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "probable.py").write_text(PROBABLE)
    model = tmp_path / "m.json"
    options = ("-q", "-o", model, "--classifier", "probable", "--positive", "Iris-setosa", IRIS, "l2")
    trained = run_filterkit("train", *options, plugins_dir=tmp_path / "plugins")
    assert trained.status == 0, trained.stderr
    return model


def test_a_classifier_failing_to_load_its_saved_state_is_named_not_the_model(tmp_path, monkeypatch):
    """A classifier plugin's ``load_state`` crashing blamed the model file ("not a filterkit model"), where a stage's
    crash there names the stage's plugin; a state the classifier cannot take (its KeyError) is still the model's."""
    model = _trained_probable(tmp_path)
    folder = tmp_path / "plugins"
    origin = f"classifier 'probable' (plugin 'probable ({folder}/probable.py)', distribution 'plugins-dir {folder}')"
    monkeypatch.setenv("PROBABLE", "load")
    crashed = run_filterkit("predict", model, IRIS, plugins_dir=folder)
    assert crashed.status == 1 and crashed.stdout == b""
    assert crashed.stderr == (
        f"filterkit: error: {origin} failed while loading its saved state: RuntimeError: cannot load today\n"
    )
    monkeypatch.setenv("PROBABLE", "misfit")
    misfit = run_filterkit("predict", model, IRIS, plugins_dir=folder)
    assert misfit.status == 1 and misfit.stdout == b""
    assert misfit.stderr.startswith(f"filterkit: error: {model}: not a filterkit model (its classifier: {origin}")
    assert misfit.stderr.endswith("KeyError: 'v')\n")


LIAR = '''
import os
import numpy as np
from filterkit.plugin import NOMINAL, NUMERIC, Attribute, Chunk, Format, Layout, Schema, hookimpl

class Liar:
    """Reads any file as ten rows of a, b and a class {x,y}; LIAR says how its chunks lie."""
    def scan(self, opened, name, options, known_schema):
        attributes = (Attribute("a", NUMERIC), Attribute("b", NUMERIC), Attribute("class", NOMINAL, labels=("x", "y")))
        return Layout(known_schema or Schema("liar", attributes), (), None, 10)
    def scan_reads_rows(self, known_schema):
        return True
    def chunks(self, stream, name, layout, chunk_rows):
        values = np.column_stack([np.arange(10.0), np.arange(10.0) * 2, np.arange(10) % 2 * 1.0])
        how = os.environ.get("LIAR", "")
        if how == "narrow":
            values = values[:, :2]
        elif how == "half-label":
            values[0, 2] = 0.5
        elif how == "memory":
            raise MemoryError()
        elif how == "short":
            values = values[:9]
        elif how == "twice":
            yield Chunk(values)
        yield values if how == "array" else Chunk(values)

@hookimpl
def register_formats(register):
    register(Format("liar", Liar, suffixes=(".liar",)))
'''


@pytest.mark.parametrize(
    "how, what",
    [
        ("narrow", "it read 2 columns; the layout's schema declares 3"),
        (
            "half-label",
            "attribute 3 is nominal with 2 labels, and a value came back as 0.5 (a label's position, 0 to 1",
        ),
        ("array", "it yielded a 2-D numpy array, expected a filterkit Chunk"),
        # a row dropped or every row read twice was taken at the reader's word, status 0
        ("short", "a pass read 9 rows, where its scan counted 10"),
        ("twice", "a pass read 20 rows, where its scan counted 10"),
    ],
)
def test_a_third_party_reader_s_chunks_are_checked_against_its_layout(tmp_path, monkeypatch, how, what):
    """A chunk of 2 columns under a header of 3 was written as it came (an ARFF file no reader takes, status 0), a
    class code of 0.5 as the label x, and a bare array was a traceback."""
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "liar.py").write_text(LIAR)
    (tmp_path / "in.liar").write_text("")
    out = tmp_path / "out.arff"
    assert run_filterkit(tmp_path / "in.liar", "-o", out, plugins_dir=folder).status == 0
    assert out.read_text().count("\n1,2,y\n") == 1
    out.unlink()
    monkeypatch.setenv("LIAR", how)
    refused = run_filterkit(tmp_path / "in.liar", "-o", out, plugins_dir=folder)
    assert refused.status == 1 and not out.exists()
    origin = f"format 'liar' (plugin 'liar ({folder}/liar.py)', distribution 'plugins-dir {folder}')"
    assert refused.stderr.startswith(f"filterkit: error: {origin} broke the format contract during reading: {what}")


def test_running_out_of_memory_is_one_error_line_and_no_output(tmp_path, monkeypatch):
    """A MemoryError (here a reader's, which is not taken as the plugin's fault: the machine may be out of memory)
    was a traceback."""
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "liar.py").write_text(LIAR)
    (tmp_path / "in.liar").write_text("")
    out = tmp_path / "out.arff"
    monkeypatch.setenv("LIAR", "memory")
    refused = run_filterkit(tmp_path / "in.liar", "-o", out, plugins_dir=folder)
    assert (refused.status, out.exists(), refused.stdout) == (1, False, b"")
    assert (
        refused.stderr == "filterkit: error: out of memory (MemoryError): the command needed more than it was given\n"
    )


def test_what_a_plugin_prints_as_it_loads_goes_to_standard_error(tmp_path):
    """A plugin printing at its import put its line first in the chain's ARFF (and broke ``plugins --json``)."""
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "noisy.py").write_text(
        'print("noisy plugin loaded")\nfrom filterkit.plugin import hookimpl\n\n'
        "@hookimpl\ndef register_stages(register):\n    pass\n"
    )
    result = run_filterkit(IRIS, "l2", plugins_dir=folder)
    assert result.status == 0 and result.stdout.startswith(b"% filterkit chain: l2")
    assert b"noisy" not in result.stdout and "noisy plugin loaded\n" in result.stderr


@pytest.mark.parametrize(
    "options, problem",
    [
        (
            'Option("smooth", bool, True, "s"), Option("no_smooth", int, 0, "n")',
            "the flag --no-smooth of option 'smooth' is another option's too",
        ),
        ('Option("help", bool, False, "h")', "the flag --help of option 'help' is the help's"),
        (
            'Option("v", bool, False, "v", off_flag="--quiet"), Option("quiet", int, 0, "q")',
            "the flag --quiet of option 'v' is another option's too",
        ),
        ('Option("x", list, None, "x")', "option 'x' is of <class 'list'>, not int, float, str or bool"),
    ],
)
def test_options_whose_flags_the_command_line_cannot_tell_apart_are_refused_at_registration(tmp_path, options, problem):
    """``--no-smooth 3`` set the int and left ``smooth`` on, with no way to turn it off; an option named ``help`` ran
    the chain instead of the help; a list option failed only when given."""
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "clash.py").write_text(
        "from filterkit.plugin import Option, Stage, hookimpl\n\n"
        f'class Clash(Stage):\n    """Clashing options."""\n    name = "clash"\n    options = ({options},)\n'
        "    def transform(self, chunk):\n        return chunk\n\n"
        "@hookimpl\ndef register_stages(register):\n    register(Clash)\n"
    )
    result = run_filterkit(IRIS, "l2", plugins_dir=folder)
    assert result.status == 0
    assert f"is skipped: stage 'clash': {problem} (in register_stages)" in result.stderr


@pytest.mark.parametrize(
    "state, problem",
    [
        ("{(1, 2): 3}", "its state has a key that is not a string"),
        ("[1, 2]", "its state is a list, not a dict"),
        ('{"n": float("nan")}', "its state 'n' holds nan, which JSON has no number for"),
        ("_ring()", "its state 'ring' nests deeper than 100"),
    ],
)
def test_a_state_a_model_file_cannot_hold_is_refused_naming_the_stage(tmp_path, state, problem):
    """A tuple key was a traceback from json, a dict holding itself a RecursionError, a list an AttributeError, and
    a NaN was saved as a bare NaN, which is no JSON."""
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "odd_state.py").write_text(
        "from filterkit.plugin import Stage, hookimpl\n\n"
        'def _ring():\n    ring = {}\n    ring["again"] = ring\n    return {"ring": ring}\n\n'
        'class OddState(Stage):\n    """Learns nothing a model can hold."""\n'
        '    name = "odd-state"\n    learns = True\n'
        "    def new_statistics(self):\n        return 0\n"
        "    def accumulate(self, statistics, chunk):\n        return statistics\n"
        "    def finalize(self, statistics):\n        pass\n"
        "    def transform(self, chunk):\n        return chunk\n"
        f"    def state(self):\n        return {state}\n\n"
        "@hookimpl\ndef register_stages(register):\n    register(OddState)\n"
    )
    model = tmp_path / "m.json"
    result = run_filterkit(
        "-q", "--save-model", model, "-o", tmp_path / "o.arff", IRIS, "odd-state", plugins_dir=folder
    )
    assert result.status == 1 and not model.exists() and not (tmp_path / "o.arff").exists()
    assert len(result.stderr.splitlines()) == 1 and f"cannot be saved: {problem}" in result.stderr, result.stderr


def test_a_label_set_model_checks_each_label_s_probabilities_too(tmp_path, monkeypatch):
    """Each label's classifier answers as a two-class one: 7.0 was written as a label's probability (status 0), NaN
    as an empty cell, and too few values were a traceback."""
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "probable.py").write_text(PROBABLE)
    rows = "".join(f"{k % 2},{k // 2 % 2},{k},{k % 5}\n" for k in range(30))
    data = tmp_path / "ml.arff"
    data.write_text(
        "@relation 'ml: -C 2'\n@attribute l1 {0,1}\n@attribute l2 {0,1}\n@attribute a numeric\n@attribute b numeric\n"
        f"@data\n{rows}"
    )
    model = tmp_path / "m.json"
    trained = run_filterkit("train", "-q", "-o", model, "--classifier", "probable", data, "l2", plugins_dir=folder)
    assert trained.status == 0, trained.stderr
    assert run_filterkit("predict", model, data, plugins_dir=folder).status == 0
    for how, what in (("seven", "a value outside [0, 1]"), ("nan", "NaN"), ("short", "values of shape (29,)")):
        monkeypatch.setenv("PROBABLE", how)
        refused = run_filterkit("predict", model, data, plugins_dir=folder)
        assert refused.status == 1 and refused.stdout == b"", refused.stderr
        assert f"broke the classifier contract: probabilities returned {what}" in refused.stderr
