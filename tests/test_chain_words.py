"""The library reads a chain's words (``Registry.parse_chain``, issue 73 item 4) as the command line's click group
of stages reads them: the same stages and parameters, or the same words for the same mistake."""

from __future__ import annotations

import itertools
import shlex

import click
import pytest

import filterkit
from chain_helpers import REAL
from filterkit.chain_words import ChainHelpError
from filterkit.commands.context import PluginLoader
from filterkit.commands.stages import StageChain
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
    # where click's group of stages prints a help (the library refuses it), or reads --help as it reads a flag
    "--help",
    "--help nope",
    "--help --help",
    "--help=1",
    "--help --top",
    "shape --help",
    "shape --help bns",
    "shape bns --help",
    "shape --help --help",
    "shape -- --help",
    "-- --help",
    "-- --help=1",
    "minmax --help=1",
    "select --top=5 --help=",
    "l2 --help --top",
    "l2 --help -x",
    "l2 --help nope",
    "nope --help",
    "select --top --help",
    "select --top x --help",
    "select --top x bns --help",
    "bns --alpha 2 l2 --help",
    "shape --hel",
    "shape --HELP",
    "--hel",
    "-h",
    "shape -h",
    # a word like an option where a stage's name belongs: click reads it as the group's option
    "shape -- --top 5",
    "-- --top",
    "-- --top=5",
    "-- --hel",
    "-- -x",
    "-- -",
    "-- --",
    "-- -- l2",
    "l2 -- --",
    "l2 -- -",
    "l2 -- -x=5",
    "l2 -- ---top",
    "select --top 5 -- --top 6",
    "bns -- --presence",
    "--=x",
    "l2 --=x",
]

#: Words whose every list of up to three (1,885 lists) the two parsers read alike.
WORDS = ["l2", "select", "--top", "5", "--", "-", "--help", "--help=1", "-h", "--top=5", "--no-presence=1", "nope"]

#: What :func:`outcome` gives for words that ask for a help.
HELP_ASKED = "help asked"


def click_parse(loader: PluginLoader, words: list[str]):
    """The chain as the command line's click group of stages reads it (evaluate's parsing before issue 73)."""
    group = StageChain("chain", result_callback=lambda stages: stages)
    text = shlex.join(words) if words else "(none)"
    try:
        with group.make_context(f"filterkit evaluate: chain '{text}'", list(words), obj=loader) as context:
            stages = group.invoke(context)
    except click.UsageError as error:
        raise FilterkitError(f"chain '{text}': {error.format_message()}") from None
    return text, [(stage.name, dict(stage.params)) for stage in stages]


def outcome(parse):
    """What ``parse`` gives: its result, its error's words, or :data:`HELP_ASKED` where the library refuses a
    help or click prints one and exits 0."""
    try:
        return parse()
    except ChainHelpError:
        return HELP_ASKED
    except click.exceptions.Exit as exit:
        return HELP_ASKED if exit.exit_code == 0 else exit
    except FilterkitError as error:
        return str(error)


def both_outcomes(words: list[str], loader: PluginLoader | None = None) -> tuple:
    """What the library and click's group of stages give for ``words``."""
    library = outcome(lambda: (lambda spec: (spec.text, spec.stages))(load_plugins().parse_chain(words)))
    return library, outcome(lambda: click_parse(loader or PluginLoader(), words))


@pytest.mark.parametrize("text", CHAINS)
def test_the_library_reads_a_chain_as_the_command_line_does(text):
    library, command_line = both_outcomes(shlex.split(text))
    assert library == command_line


def test_every_short_list_of_tricky_words_is_read_alike():
    """Each list of up to three of :data:`WORDS`: options with ``=``, ``--`` anywhere, ``-h``, repeated ``--help``."""
    loader = PluginLoader()
    for count in range(4):
        for words in itertools.product(WORDS, repeat=count):
            library, command_line = both_outcomes(list(words), loader)
            assert library == command_line, words


@pytest.mark.parametrize(
    ("words", "asked"),
    [
        (
            "shape --help",
            "--help asks for the help of shape, which only the command line prints (filterkit shape --help)",
        ),
        ("l2 -- --help", "--help asks for the list of stages, which only the command line prints (filterkit --help)"),
    ],
)
def test_the_library_refuses_a_help_it_cannot_print(words, asked):
    with pytest.raises(ChainHelpError) as refused:
        load_plugins().parse_chain(words)
    assert str(refused.value) == f"chain '{words}': {asked}"
    with pytest.raises(FilterkitError, match="help of words, which only the command line prints"):
        filterkit.train(REAL / "iris.arff", chains=["l2", "words --help"])


@pytest.mark.parametrize(
    ("command", "chains"),
    [
        (["evaluate", "--compare"], ["shape --help", "l2"]),
        (["evaluate", "--sweep", "select.top=1,2", "--compare"], ["select --help"]),
        (["train", "-o", "m.json", "--compare"], ["l2", "words --help"]),
    ],
)
def test_the_command_line_prints_the_help_a_chain_asks_for(run_filterkit, monkeypatch, tmp_path, command, chains):
    """As click's group of stages did: the stage's help, and exit 0."""
    monkeypatch.chdir(tmp_path)
    chain = next(words for words in chains if "--help" in words)
    result = run_filterkit(*command, REAL / "iris.arff", *chains)
    assert (result.status, result.stderr) == (0, "")
    usage = f"Usage: filterkit evaluate: chain '{chain}' {chain.split()[0]} [OPTIONS]\n"
    assert result.stdout.decode().startswith(usage)
    assert result.stdout.decode().endswith("  --help                          Show this message and exit.\n")
    assert not (tmp_path / "m.json").exists()


def test_the_command_line_prints_the_stages_where_a_chain_asks_for_them(run_filterkit):
    result = run_filterkit("evaluate", "--compare", REAL / "iris.arff", "shape -- --help", "l2")
    assert (result.status, result.stderr) == (0, "")
    assert result.stdout.decode().startswith("Usage: filterkit evaluate: chain 'shape -- --help' [OPTIONS] [COMMAND1]")
    assert "  shape            Shape each feature" in result.stdout.decode()


def test_a_preset_option_is_taken_where_the_words_leave_it_out_and_refused_where_they_give_it():
    """``--sweep``'s preset: an option the words give too was replaced, silently."""
    preset = {"select": {"top": 7}}
    spec = load_plugins().parse_chain("select l2", preset)
    assert spec.stages == load_plugins().parse_chain("select --top 7 l2").stages
    with pytest.raises(FilterkitError, match="stage 'select' is given --top, which --sweep sets"):
        load_plugins().parse_chain("select --top 3 l2", preset)


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
