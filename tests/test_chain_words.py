"""The library reads a chain's words (``Registry.parse_chain``, issue 73 item 4) as the command line's click group
of stages reads them: the same stages and parameters, or the same words for the same mistake."""

from __future__ import annotations

import shlex

import click
import pytest

from filterkit.commands.context import PluginLoader
from filterkit.commands.stages import PRESET_OPTIONS, StageChain
from filterkit.errors import FilterkitError
from filterkit.plugins import load_plugins

CHAINS = [
    "",
    "l2",
    "shape bns l2",
    "shape --no-zero-bin bns l2",
    "select --top 10 l2",
    "select --top=10 l2",
    "select --top 10 --top 5",
    "select --top x",
    "select --top 0",
    "select --top 2.5",
    "select --top",
    "select --top= l2",
    "select --metric nope",
    "select --metric ig --top 3",
    "select --tp 3",
    "select --bogus",
    "select -x",
    "select -t3",
    "l2 --top 3",
    "l2 --no-presence",
    "bns --presence=1",
    "bns --presence --no-presence",
    "bns --multiply l2 --",
    "l2 -- bns",
    "-- l2",
    "--top 3 l2",
    "--hep l2",
    "-x l2",
    "nope",
    "sele",
    "l2 -",
    "l2 bnss",
    "words --lowercase --words-to-keep 100 l2",
    "words --words-to-keep -5",
    "words --tokenizer nope",
    "minmax --scale 1e400",
    "l2 --postive grain",
    "bns --alpha 2",
    "bns --alpha nan",
    "bns --combine mean",
    "bns --combine nope",
    "auto --min-gain -1",
    "nbr --nb-alpha 0",
]


def click_parse(loader: PluginLoader, words: list[str], preset: dict | None = None):
    """The chain as the command line's click group of stages reads it (evaluate's parsing before issue 73)."""
    group = StageChain("chain", result_callback=lambda stages: stages)
    text = shlex.join(words) if words else "(none)"
    try:
        with group.make_context(f"filterkit evaluate: chain '{text}'", list(words), obj=loader) as context:
            context.meta[PRESET_OPTIONS] = preset or {}
            stages = group.invoke(context)
    except click.UsageError as error:
        raise FilterkitError(f"chain '{text}': {error.format_message()}") from None
    return text, [(stage.name, dict(stage.params)) for stage in stages]


def outcome(parse):
    try:
        return parse()
    except FilterkitError as error:
        return str(error)


@pytest.mark.parametrize("text", CHAINS)
def test_the_library_reads_a_chain_as_the_command_line_does(text):
    loader = PluginLoader()
    words = shlex.split(text)
    library = outcome(lambda: (lambda spec: (spec.text, spec.stages))(load_plugins().parse_chain(words)))
    assert library == outcome(lambda: click_parse(loader, words))


def test_a_preset_option_is_taken_where_the_words_leave_it_out():
    loader = PluginLoader()
    preset = {"select": {"top": 7}}
    for text in ("select l2", "select --top 3 l2"):
        spec = load_plugins().parse_chain(text, preset)
        assert (spec.text, spec.stages) == click_parse(loader, shlex.split(text), preset)


def test_text_is_split_as_a_shell_splits_it():
    assert load_plugins().parse_chain("shape --no-zero-bin bns l2").stages == (
        load_plugins().parse_chain(["shape", "--no-zero-bin", "bns", "l2"]).stages
    )


def test_every_option_of_every_stage_is_read_and_refused_alike():
    """Each option of each installed stage, given a number, a word, nothing and each of its choices."""
    loader, registry = PluginLoader(), load_plugins()
    for name, registered in sorted(registry.stages.items()):
        for option in registered.value.options:
            values = ["", "x", "0", "-1", "2.5", "1e400", "nan", "3", *option.choices[:2]]
            spellings = [[option.flag]] if option.kind is bool else [[option.flag, value] for value in values]
            if option.kind is bool:
                spellings += [[option.off_flag or f"--no-{option.flag[2:]}"], [f"{option.flag}=1"]]
            for typed in spellings:
                words = [name, *typed, "l2"]
                library = outcome(lambda: (lambda spec: (spec.text, spec.stages))(registry.parse_chain(words)))
                assert library == outcome(lambda: click_parse(loader, words)), words


def test_the_library_reads_a_chain_without_the_command_line():
    """``filterkit.train``'s chains are read by the library: no module of ``filterkit.commands`` is imported."""
    import subprocess
    import sys

    program = (
        "import sys; from filterkit.plugins import load_plugins; load_plugins().parse_chain('shape bns l2'); "
        "print(sorted(m for m in sys.modules if m.startswith('filterkit.commands')))"
    )
    completed = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True)
    assert completed.stdout == "[]\n"
