"""The files options name (``Option(names_file=True)``: ``words --stopwords FILE``, ``svm --svm-costs FILE``),
read once a run before any fit and given to every fit (filterkit/option_files.py): a pipe gives every fold its
bytes, and a built-in list's name (``--stopwords weka``) is never opened as a path."""

from __future__ import annotations

import os
import subprocess
import threading

import pytest

from chain_helpers import REAL


def _served_once(path, text: str) -> threading.Thread:
    """A FIFO at ``path`` whose one writer gives ``text`` to the first reader, then closes: a second open of it
    would wait for a writer that never comes."""
    os.mkfifo(path)

    def serve():
        with open(path, "w", encoding="utf-8") as stream:
            stream.write(text)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize(
    "command",
    [
        ("evaluate", "-q", "--json", "--folds", "3", "--jobs", "1"),
        ("evaluate", "-q", "--json", "--folds", "3", "--jobs", "2"),
        ("train", "-q", "-o", "MODEL", "--folds", "3", "--compare"),
    ],
    ids=["evaluate", "evaluate-jobs-2", "train-compare"],
)
def test_a_run_reads_its_option_files_once_before_any_fit(tmp_path, command):
    # A pipe gives its bytes once: a fold that opened the file again would wait for a writer, or read nothing.
    texts = {"costs": "2 2\n0 1\n5 0\n", "stop": "the\nof\nand\nsaid\n"}
    outputs = []
    for served in (False, True):
        paths = {name: tmp_path / f"{name}-{served}" for name in texts}
        for name, path in paths.items():
            _served_once(path, texts[name]) if served else path.write_text(texts[name])
        chain = f"words --lowercase --stopwords {paths['stop']} l2"
        compare = command[-1] == "--compare"
        chains = [chain, "words --lowercase l2"] if compare else chain.split()
        arguments = [*command[: -1 if compare else None], "--svm-c-values", "1", "--svm-costs", str(paths["costs"])]
        arguments += [*(command[-1:] if compare else ()), str(REAL / "reuters_grain_sample.arff"), *chains]
        model = tmp_path / f"model-{served}.json"
        arguments = [str(model) if argument == "MODEL" else argument for argument in arguments]
        finished = subprocess.run(["filterkit", *arguments], capture_output=True, timeout=300, check=False)
        assert finished.returncode == 0, finished.stderr.decode()
        output = model.read_bytes() if compare else finished.stdout
        for name, path in paths.items():
            output = output.replace(str(path).encode(), name.encode())
        outputs.append(output)
    assert outputs[1] == outputs[0] and b'"threshold_cost"' in outputs[0]


@pytest.mark.parametrize(
    "command",
    [("evaluate", "-q", "--folds", "3"), ("train", "-q", "-o", "model.json", "--folds", "3")],
    ids=["evaluate", "train"],
)
def test_a_built_in_stop_word_list_is_not_opened_as_a_file_of_its_name(tmp_path, command):
    # A FIFO named like the built-in list, in the working folder: opening it would wait for a writer forever.
    os.mkfifo(tmp_path / "weka")
    chain = ("words", "--lowercase", "--stopwords", "weka", "l2")
    run = [*command, "--svm-c-values", "1", str(REAL / "reuters_grain_sample.arff"), *chain]
    finished = subprocess.run(["filterkit", *run], cwd=tmp_path, capture_output=True, timeout=120, check=False)
    assert finished.returncode == 0, finished.stderr.decode()
