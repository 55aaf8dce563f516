"""Every text written for a person shows a document's control characters escaped (issue 72 item 3): a word,
label or attribute name holding a terminal's escape sequence (``\\x1b[2J`` clears the screen, ``\\x1b]0;…\\x07``
sets the window's title) is shown as ``\\x1b[2J`` by ``explain``, ``evaluate``'s tables, ``train``'s candidate
lines, ``info`` and every error line, never sent to the terminal."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

#: A label that turns a terminal's text red, and words that clear its screen and set its window's title.
RED_LABEL = "grain\x1b[31m"
CLEARING = "\x1b[2Jwheat"
TITLE = "\x1b]0;pwned\x07"
#: What a terminal obeys: ESC, BEL and the C1 CSI.
OBEYED = (b"\x1b", b"\x07", "\x9b".encode())


@pytest.fixture
def escaping_documents(tmp_path) -> Path:
    """Twenty documents of two classes, one class's label and some words holding escape sequences."""
    path = tmp_path / "escaping.csv"
    with path.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(["text", "topic"])
        for k in range(10):
            writer.writerow([f"{CLEARING} grain harvest {TITLE} report {k}", RED_LABEL])
            writer.writerow([f"bank rate loan report market {k}", "money"])
    return path


def assert_escaped(written: bytes | str, *texts: str) -> None:
    """Nothing a terminal obeys in ``written``, and each of ``texts`` there as its Python literal."""
    data = written.encode() if isinstance(written, str) else written
    assert not any(code in data for code in OBEYED), data
    for text in texts:
        assert repr(text)[1:-1].encode() in data, (text, data)


def test_explain_shows_words_and_labels_escaped(run_filterkit, tmp_path, escaping_documents):
    model = tmp_path / "model.json"
    trained = run_filterkit(
        "train", "-q", "-o", model, "--positive", RED_LABEL, escaping_documents, "words", "--counts", "l2"
    )
    assert trained.status == 0, trained.stderr
    explained = run_filterkit("explain", "--top", "0", model, escaping_documents)
    assert explained.status == 0, explained.stderr
    assert_escaped(explained.stdout, RED_LABEL, CLEARING, "\x1b]0", "pwned\x07")
    assert explained.stdout.startswith(b"row 1: grain\\x1b[31m (decision ")


def test_multi_class_explain_shows_each_class_escaped(run_filterkit, tmp_path, escaping_documents):
    model = tmp_path / "model.json"
    trained = run_filterkit("train", "-q", "-o", model, "--multiclass", escaping_documents, "words", "l2")
    assert trained.status == 0, trained.stderr
    explained = run_filterkit("explain", "--top", "2", model, escaping_documents)
    assert explained.status == 0, explained.stderr
    assert_escaped(explained.stdout, RED_LABEL)


def test_explain_json_keeps_the_texts_as_they_are(run_filterkit, tmp_path, escaping_documents):
    model = tmp_path / "model.json"
    assert run_filterkit("train", "-q", "-o", model, escaping_documents, "words", "l2").status == 0
    explained = run_filterkit("explain", "--json", "--top", "0", model, escaping_documents)
    assert b'"label": "grain\\u001b[31m"' in explained.stdout  # JSON escapes them its own way, readers unescape


@pytest.mark.parametrize("options", [("--positive", RED_LABEL), ("--multiclass",)], ids=["task", "multiclass"])
def test_evaluate_s_table_shows_labels_escaped(run_filterkit, escaping_documents, options):
    result = run_filterkit("evaluate", "-q", "--folds", "2", *options, escaping_documents, "words", "l2")
    assert result.status == 0, result.stderr
    assert_escaped(result.stdout, RED_LABEL)


def test_evaluate_s_table_of_label_sets_shows_labels_escaped(run_filterkit, tmp_path):
    path = tmp_path / "labelled.csv"
    with path.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(["text", "labels"])
        for k in range(12):
            writer.writerow([f"{CLEARING} grain harvest report {k}", RED_LABEL])
            writer.writerow([f"bank rate loan report market {k}", "money"])
            writer.writerow([f"bank wheat grain loan report {k}", f"{RED_LABEL}|money"])
    result = run_filterkit("evaluate", "-q", "--folds", "2", "--labels-column", "labels", path, "words", "l2")
    assert result.status == 0, result.stderr
    assert_escaped(result.stdout, RED_LABEL)


def test_train_s_candidate_lines_show_chains_escaped(run_filterkit, tmp_path, escaping_documents):
    prefix = "\x1b[2J"
    result = run_filterkit(
        "train",
        "-q",
        "-o",
        tmp_path / "model.json",
        "--compare",
        escaping_documents,
        "words l2",
        f"words --prefix {prefix} l2",
    )
    assert result.status == 0, result.stderr
    assert_escaped(result.stderr, prefix)


def test_info_shows_the_relation_attributes_and_labels_escaped(run_filterkit, tmp_path):
    path = tmp_path / "escaping.arff"
    path.write_text(
        "@relation 'r\\033]0;title\\007'\n@attribute 'w\\033[2J' numeric\n@attribute class {'a\\033[31m',b}\n"
        "@data\n1,'a\\033[31m'\n0,b\n"
    )
    result = run_filterkit("info", "--metric", "ig", path)
    assert result.status == 0, result.stderr
    assert_escaped(result.stdout, "r\x1b]0;title\x07", "w\x1b[2J", "a\x1b[31m")


def test_an_error_line_quoting_labels_shows_them_escaped(run_filterkit, escaping_documents):
    result = run_filterkit("--positive", "wheat", escaping_documents, "shape")
    assert result.status == 1
    error = result.stderr.splitlines()[-1]
    expected = "--positive 'wheat' is not a label of the class 'topic' {grain\\x1b[31m,money}"
    assert error == f"filterkit: error: {escaping_documents}: {expected}"


def test_a_plugin_s_warning_and_its_listing_show_control_characters_escaped(run_filterkit, tmp_path):
    # a plugin that fails to import, its error quoting a text it read: the warning went out raw
    (tmp_path / "quoting.py").write_text(f"raise ImportError({CLEARING!r})\n")
    iris = Path(__file__).parent / "data" / "real" / "iris.arff"
    for argv in ((iris, "l2"), ("plugins",)):
        result = run_filterkit(*argv, plugins_dir=tmp_path)
        assert result.status == 0 and "filterkit: warning: plugin 'quoting" in result.stderr, result.stderr
        assert_escaped(result.stderr + result.stdout.decode(), CLEARING)


def test_auto_s_report_shows_a_name_s_control_characters_escaped(run_filterkit, tmp_path):
    path = tmp_path / "named.csv"
    rows = [f"{k % 7},{(k * 3) % 5},{'yes' if k % 2 else 'no'}" for k in range(40)]
    path.write_text("num\x1b[2J,other,class\n" + "\n".join(rows) + "\n")
    result = run_filterkit(path, "auto", "--report", "-o", tmp_path / "out.arff")
    assert result.status == 0 and "auto:" in result.stderr, result.stderr
    assert_escaped(result.stderr, "num\x1b[2J")
