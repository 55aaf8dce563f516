"""Issue 37, item 7: a plugin that raises ``SystemExit``, ``GeneratorExit`` or (with no signal
behind it) ``KeyboardInterrupt`` is a broken plugin like any other: skipped with one warning when
it does so at import or in a hook, an error naming it mid-run, exit status 1.  Before, it ended
filterkit with status 0 and the output cut short, 130 as if interrupted, or a traceback."""

from __future__ import annotations

import importlib
import signal
import sys
import textwrap

import pytest

from chain_helpers import REAL
from filterkit.plugins import load_plugins

IRIS = REAL / "iris.arff"

RAISED = {
    "SystemExit": "SystemExit(0)",
    "KeyboardInterrupt": "KeyboardInterrupt()",
    "GeneratorExit": "GeneratorExit()",
}

#: A plugin whose stage ``quit`` raises, in the method its option names, the exception named by
#: the module's ``RAISED``.
QUITTER = """
from filterkit.hookspecs import hookimpl
from filterkit.stage import Option, Stage


class Quit(Stage):
    \"\"\"Raise where --during says.\"\"\"

    name = "quit"
    options = (Option("during", str, "transform", "Where it raises.", choices=("init", "transform")),)

    def __init__(self, **params):
        super().__init__(**params)
        if self.params["during"] == "init":
            raise {raised}

    def transform(self, chunk):
        raise {raised}


@hookimpl
def register_stages(register):
    register(Quit)
"""


@pytest.fixture
def console_script_signals():
    """SIGTERM handled by Python code, as the console script handles it until a signal comes."""
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: None)
    yield
    signal.signal(signal.SIGTERM, previous)


def plugin_folder(tmp_path, name: str, source: str):
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / f"{name}.py").write_text(textwrap.dedent(source))
    return folder


@pytest.mark.parametrize("exception", sorted(RAISED))
def test_a_plugin_that_exits_at_import_is_skipped_with_one_warning(exception, tmp_path, capsys, console_script_signals):
    folder = plugin_folder(tmp_path, "leaver", f"raise {RAISED[exception]}\n")
    registry = load_plugins(folder).complete()
    message = "0" if exception == "SystemExit" else ""
    assert [(problem.plugin, problem.reason) for problem in registry.skipped] == [
        (f"leaver ({folder / 'leaver.py'})", f"it failed to import ({exception}: {message})")
    ]
    assert "l2" in registry.stages
    assert capsys.readouterr().err.count("filterkit: warning: plugin 'leaver") == 1


@pytest.mark.parametrize("exception", sorted(RAISED))
def test_a_plugin_whose_hook_exits_is_skipped_with_one_warning(exception, tmp_path, capsys, console_script_signals):
    source = f"""
        from filterkit.hookspecs import hookimpl

        @hookimpl
        def register_stages(register):
            raise {RAISED[exception]}
    """
    folder = plugin_folder(tmp_path, "leaver", source)
    registry = load_plugins(folder).complete()
    assert [problem.reason.split(":")[0] for problem in registry.skipped] == [f"{exception} in register_stages"]
    assert capsys.readouterr().err.count("filterkit: warning: ") == 1


@pytest.mark.parametrize("during", ["init", "transform"])
@pytest.mark.parametrize("exception", sorted(RAISED))
def test_a_stage_that_exits_mid_run_is_an_error_naming_its_plugin(
    exception, during, tmp_path, run_filterkit, console_script_signals
):
    folder = plugin_folder(tmp_path, "quitter", QUITTER.format(raised=RAISED[exception]))
    result = run_filterkit(IRIS, "l2", "quit", "--during", during, plugins_dir=folder)
    assert result.status == 1
    step = "while being made" if during == "init" else "during transform"
    assert result.stderr.startswith(
        f"filterkit: error: stage 'quit' (plugin 'quitter ({folder / 'quitter.py'})', "
        f"distribution 'plugins-dir {folder}') failed {step}: {exception}"
    )
    assert result.stderr.count("\n") == 1


def test_a_keyboard_interrupt_after_a_signal_still_interrupts(tmp_path, run_filterkit):
    """Once a stopping signal came, the console script ignores SIGTERM (as Python's default SIGTERM
    says no handler of filterkit's runs): the interrupt is the user's, not the plugin's."""
    folder = plugin_folder(tmp_path, "quitter", QUITTER.format(raised="KeyboardInterrupt()"))
    previous = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        result = run_filterkit(IRIS, "quit", plugins_dir=folder)
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert (result.status, result.stderr) == (130, "filterkit: error: interrupted\n")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_keyboard_interrupt_a_stage_raises_in_a_fold_is_its_fault_whatever_the_jobs(
    jobs, tmp_path, run_filterkit, console_script_signals
):
    """A ``--jobs`` worker ignores Ctrl-C and dies of SIGTERM, so no signal raises an interrupt there: one a stage
    raises in a fold is the plugin's fault, as in one process (it had ended the run as interrupted, status 130)."""
    folder = plugin_folder(tmp_path, "quitter", QUITTER.format(raised="KeyboardInterrupt()"))
    options = ("-q", "--multiclass", "--folds", "3", "--jobs", jobs)
    result = run_filterkit("evaluate", *options, IRIS, "quit", plugins_dir=folder)
    assert result.status == 1
    assert "stage 'quit' (plugin 'quitter" in result.stderr
    assert "failed during transform: KeyboardInterrupt" in result.stderr


def test_a_keyboard_interrupt_raised_in_another_thread_than_the_main_one_is_the_plugin_s():
    """Python runs signal handlers in the main thread only: in a Dask worker's task thread an interrupt is the
    plugin's, which had ended the worker process (four of a shared cluster's, one after the other)."""
    import threading

    from filterkit.contract import plugin_fault

    found = []
    with pytest.MonkeyPatch.context() as patch:  # as in a --jobs-less program with Python's own Ctrl-C handler
        handlers = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL}
        patch.setattr(signal, "getsignal", handlers.get)
        thread = threading.Thread(target=lambda: found.append(plugin_fault(KeyboardInterrupt())))
        thread.start()
        thread.join()
        assert found == [True] and not plugin_fault(KeyboardInterrupt())


@pytest.mark.slow
@pytest.mark.parametrize("exception", sorted(RAISED))
def test_the_console_script_exits_1_when_a_stage_exits(exception, tmp_path, filterkit_script):
    folder = plugin_folder(tmp_path, "quitter", QUITTER.format(raised=RAISED[exception]))
    output = tmp_path / "out.arff"
    result = filterkit_script("--plugins-dir", folder, IRIS, "quit", "-o", output)
    assert result.status == 1
    assert "failed during transform: " + exception in result.stderr
    assert not output.exists()


def test_an_installed_plugin_that_exits_at_import_is_skipped(tmp_path, monkeypatch, capsys, console_script_signals):
    info = tmp_path / "filterkit_leaver-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: filterkit-leaver\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[filterkit]\nleaver = filterkit_leaver_module\n")
    (tmp_path / "filterkit_leaver_module.py").write_text("import sys\nsys.exit('bye')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    try:
        registry = load_plugins().complete()
    finally:
        sys.modules.pop("filterkit_leaver_module", None)
    assert [(p.plugin, p.distribution, p.reason) for p in registry.skipped] == [
        ("leaver", "filterkit-leaver", "it failed to import (SystemExit: bye)")
    ]
    assert "bns" in registry.stages
    assert capsys.readouterr().err.count("filterkit: warning: ") == 1


def test_a_classifier_that_exits_is_an_error_naming_its_plugin(tmp_path, run_filterkit, console_script_signals):
    source = """
        from filterkit.classifier import Classifier
        from filterkit.hookspecs import hookimpl

        class Quit(Classifier):
            \"\"\"Exit while fitting.\"\"\"

            name = "quit"

            def fit(self, features, targets, seed):
                raise SystemExit(0)

        @hookimpl
        def register_classifiers(register):
            register(Quit)
    """
    folder = plugin_folder(tmp_path, "quitter", source)
    result = run_filterkit(
        "evaluate", "--classifier", "quit", "--positive", "Iris-setosa", IRIS, "l2", plugins_dir=folder
    )
    assert (result.status, result.stdout) == (1, b"")
    assert result.stderr == (
        f"filterkit: error: classifier 'quit' (plugin 'quitter ({folder / 'quitter.py'})', "
        f"distribution 'plugins-dir {folder}') failed during fit: SystemExit: 0\n"
    )


def test_a_metric_that_exits_is_an_error_naming_its_plugin(tmp_path, run_filterkit, console_script_signals):
    source = """
        from filterkit.hookspecs import hookimpl
        from filterkit.metrics import Metric

        def leave(tp, fp, pos, neg):
            raise SystemExit(0)

        @hookimpl
        def register_metrics(register):
            register(Metric("leave", leave))
    """
    folder = plugin_folder(tmp_path, "leaver", source)
    for chain in (["leave"], ["select", "--metric", "leave", "--top", "2"]):
        result = run_filterkit("--positive", "Iris-setosa", IRIS, *chain, plugins_dir=folder)
        assert result.status == 1
        assert result.stderr == (
            f"filterkit: error: metric 'leave' (plugin 'leaver ({folder / 'leaver.py'})', "
            f"distribution 'plugins-dir {folder}') failed: SystemExit: 0\n"
        )


@pytest.mark.parametrize(
    "body, raised",
    [
        (  # refused by name since the options' kinds are checked (it raised KeyError: <class 'list'>)
            'options = (Option("x", list, [], "A kind options do not have."),)',
            "stage 'odd': option 'x' is of <class 'list'>, not int, float, str or bool",
        ),
        (
            "@classmethod\n            def one_line_summary(cls):\n                raise SystemExit(3)",
            "checking what it registered raised SystemExit: 3",
        ),
    ],
    ids=["an option of another kind", "a summary that exits"],
)
def test_a_stage_whose_check_raises_is_skipped_with_one_warning(body, raised, tmp_path, capsys, console_script_signals):
    source = f"""
        from filterkit.hookspecs import hookimpl
        from filterkit.stage import Option, Stage

        class Odd(Stage):
            \"\"\"A stage the loader's checks cannot read.\"\"\"

            name = "odd"
            {body}

        @hookimpl
        def register_stages(register):
            register(Odd)
    """
    folder = plugin_folder(tmp_path, "odd", source)
    registry = load_plugins(folder).complete()
    assert [problem.reason for problem in registry.skipped] == [f"{raised} (in register_stages)"]
    assert "odd" not in registry.stages and "l2" in registry.stages
    assert capsys.readouterr().err.count("filterkit: warning: ") == 1
