"""Every command of README.md runs as written: each line of its ``sh`` blocks in order (the set-up lines
from their ``filterkit`` on, their install and test command being the one .ci/run runs), and its ``python``
blocks, starting in a folder that holds a copy of arff_samples/ as the repository does, with a home folder
of the test's own (a line ending in ``cd DIR`` moves the next ones there); a ``text`` block after a block
of one command is the first lines of that command's output. And its table is what
examples/reuters_test_table.py prints."""

from __future__ import annotations

import importlib.util
import itertools
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from chain_helpers import needs_weka

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
FENCE = re.compile(r"^```(\w+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
#: A set-up line: a virtual environment, an install, then what runs in it.
SETUP = re.compile(r"^python3 -m venv \.venv && \. \.venv/bin/activate && (pip install [^&]+) && (.+)$")
WEKA_EXAMPLES = Path("/usr/share/doc/weka/examples")
#: The first lines of what the first command (the set-up line's run) prints: ``filterkit info`` of the shaped file.
FIRST_SUMMARY = [
    "relation:    oh0.mat",
    "rows:        1003 (sparse rows)",
    "attributes:  3183 (3182 numeric, 1 nominal)",
    "density:     0.0165 (52673 non-zero of 1003 rows × 3182 non-class attributes)",
]


def readme_blocks() -> list[tuple[str, str]]:
    """README's fenced blocks, in order: (language, text)."""
    return [(match[1], match[2]) for match in FENCE.finditer(README)]


def readme_commands() -> list[tuple[str, str, list[str]]]:
    """Each command of README's ``sh`` and ``python`` blocks, in order: its language, its text and the
    first lines of its output that the ``text`` block after it shows (up to a line "…")."""
    commands: list[tuple[str, str, list[str]]] = []
    blocks = readme_blocks()
    for position, (language, text) in enumerate(blocks):
        following = blocks[position + 1] if position + 1 < len(blocks) else ("", "")
        if language == "python":
            commands.append((language, text, []))
        elif language == "sh":
            commands += [(language, line, []) for line in text.splitlines() if line.strip()]
        else:
            continue
        if following[0] == "text":
            commands[-1][2].extend(following[1].split("…")[0].splitlines())
    return commands


def test_the_readme_is_an_entry_of_at_most_250_lines():
    assert len(README.splitlines()) <= 250


def test_the_set_up_lines_install_and_run_filterkit_and_the_tests_as_ci_does():
    setups = [match for match in map(SETUP.match, README.splitlines()) if match]
    assert [setup[1] for setup in setups] == ["pip install .", "pip install -e '.[test]'"]
    assert setups[0][2].startswith("filterkit ")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    tests = f"{setups[1][1]} && {setups[1][2]}"
    assert f"\n{tests}\n" in ci
    assert "--nightly" not in setups[1][2].split()  # the default suite, which the README's time is of
    # CI runs every test: the README's command, then the nightly group alone (tests/conftest.py)
    assert ci.index(tests) < ci.index("\npython -m pytest -q -n 2 --nightly -m nightly\n")


def test_every_readme_command_runs_in_order_and_gives_what_the_readme_shows(shell, tmp_path):
    folder, home = tmp_path / "repository", tmp_path / "home"
    shutil.copytree(ROOT / "arff_samples", folder / "arff_samples")
    home.mkdir()
    commands = readme_commands()
    assert len(commands) >= 12
    for language, command, shown in commands:
        setup = SETUP.match(command)
        if setup and "pytest" in command:
            continue  # the whole suite: .ci/run runs it (the test above)
        if language == "python":
            completed = subprocess.run([sys.executable, "-c", command], capture_output=True, cwd=folder, timeout=120)
            status, stdout, stderr = completed.returncode, completed.stdout, completed.stderr.decode()
        else:
            result = shell(setup[2] if setup else command, cwd=folder, env={"HOME": str(home)})
            status, stdout, stderr = result.status, result.stdout, result.stderr
        assert status == 0, f"{command}\n{stderr}"
        assert "Traceback" not in stderr and "error:" not in stderr, f"{command}\n{stderr}"
        moved, written = re.search(r"&& cd ~/(\S+)$", command), re.search(r" -o (\S+)", command)
        if moved:
            folder = home / moved[1]
        elif written:
            output = (folder / written[1]).read_bytes()
            assert output.startswith(b"% filterkit chain: ") or (output and not written[1].endswith(".arff")), command
        else:
            assert stdout.strip(), command
        assert stdout.decode().splitlines()[: len(shown)] == shown, command
        if setup:  # the first command: the shaped file summarized
            assert stdout.decode().splitlines()[:4] == FIRST_SUMMARY
    # nothing written beside the data, by the first command or the ones before the cd
    assert sorted(path.name for path in (tmp_path / "repository").iterdir()) == ["arff_samples"]


def table_scores(text: str) -> dict[str, tuple[str, str]]:
    """The Markdown table of grain and corn F1 in ``text`` (its header names them; the README has other tables):
    each route's grain and corn F1."""
    lines = text.splitlines()
    start = next(k for k, line in enumerate(lines) if line.startswith("| route | grain F1 | corn F1 |"))
    table = itertools.takewhile(lambda line: line.startswith("|"), lines[start:])
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in table]
    return {row[0]: (row[1], row[2]) for row in rows if len(row) == 4 and row[3][:1].isdigit()}


needs_reuters = pytest.mark.skipif(
    not (WEKA_EXAMPLES / "ReutersCorn-test.arff").is_file(), reason="no Weka examples (apt-get install weka)"
)


@pytest.mark.nightly
@needs_reuters
def test_the_readme_table_is_what_the_script_prints(tmp_path):
    # Without a jar the script prints the filterkit and scikit-learn rows only; the Weka rows are the
    # next test's.
    script = ROOT / "examples" / "reuters_test_table.py"
    command = [sys.executable, script, "--weka-jar", tmp_path / "none.jar"]
    printed = subprocess.run(command, capture_output=True, text=True, check=True, timeout=600).stdout
    table = table_scores(README)
    assert len(table) == 5
    assert table_scores(printed) == {name: scores for name, scores in table.items() if not name.startswith("Weka")}


@pytest.mark.nightly
@needs_weka
@needs_reuters
@pytest.mark.parametrize(
    "route", ["Weka 3.6: StringToWordVector + SMO (defaults)", "Weka 3.6: StringToWordVector -C -L -S -T -I + SMO"]
)
def test_the_readme_table_s_weka_rows_are_what_the_script_computes(route):
    # Each route's SMO run on corn only: grain goes through the same command with another file, and
    # Weka 3.6 is fixed, so half the runs check the script's command line and its reading of Weka's output.
    from chain_helpers import WEKA_JAR

    spec = importlib.util.spec_from_file_location("reuters_test_table", ROOT / "examples" / "reuters_test_table.py")
    table_script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(table_script)
    files = [WEKA_EXAMPLES / f"ReutersCorn-{part}.arff" for part in ("train", "test")]
    corn = table_script.weka_f1(str(WEKA_JAR), table_script.WEKA_ROUTES[route], *files)
    assert f"{corn:.3f}" == table_scores(README)[route][1]
