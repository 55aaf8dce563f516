"""What an output says about how it was made (issue 18, item 5), and the relation name
``apply`` writes (item 3): the provenance comment records filterkit's version, the chain
options that decide the output's bytes and the stages with their options, for ``apply``
the model file; a pipe of runs keeps every earlier line."""

from __future__ import annotations

import io

import pytest

from chain_helpers import REAL, read_bytes
from filterkit import __version__
from filterkit.arff import read_arff
from filterkit.arff.header import HeaderParser

IRIS = REAL / "iris.arff"
VERSION = f"(filterkit {__version__})"


def comment_lines(arff: bytes) -> list[str]:
    """The ``%`` lines before ``@relation``."""
    head = arff.split(b"@relation", 1)[0].decode()
    return [line for line in head.splitlines() if line.startswith("%")]


def test_the_line_records_the_chain_options_the_stages_and_the_version(run_filterkit):
    result = run_filterkit("-c", "5", "--positive", "Iris-setosa", IRIS, "--sparse", "shape", "--neighbors", "3", "l2")
    assert result.status == 0, result.stderr
    assert comment_lines(result.stdout) == [
        f"% filterkit chain: -c 5 --positive Iris-setosa --sparse shape --neighbors 3 l2 {VERSION}"
    ]


def test_options_that_cannot_change_the_bytes_are_not_recorded(run_filterkit, tmp_path):
    plain = run_filterkit(IRIS, "minmax")
    assert comment_lines(plain.stdout) == [f"% filterkit chain: minmax {VERSION}"]
    to_file = run_filterkit("-q", "--chunk-rows", "7", "-c", "last", "-o", tmp_path / "out.arff", IRIS, "minmax")
    assert to_file.status == 0, to_file.stderr
    assert (tmp_path / "out.arff").read_bytes() == plain.stdout
    from_stdin = run_filterkit("-", "minmax", stdin=IRIS.read_bytes())
    assert from_stdin.stdout == plain.stdout


def test_a_label_with_a_space_is_recorded_as_a_shell_would_read_it(run_filterkit, tmp_path):
    data = tmp_path / "spaced.arff"
    data.write_text(IRIS.read_text().replace("Iris-setosa", "'Iris setosa'"))
    result = run_filterkit("--positive", "Iris setosa", data, "shape")
    assert result.status == 0, result.stderr
    assert comment_lines(result.stdout) == [f"% filterkit chain: --positive 'Iris setosa' shape {VERSION}"]


def test_apply_records_the_model_file_and_keeps_the_input_s_relation_name(run_filterkit, tmp_path):
    model = tmp_path / "my model.json"
    fitted = run_filterkit("--save-model", model, "--positive", "Iris-setosa", IRIS, "shape", "l2")
    assert fitted.status == 0, fitted.stderr
    test = tmp_path / "test.arff"
    test.write_text(IRIS.read_text().replace("@RELATION iris", "@RELATION 'iris test set'"))
    applied = run_filterkit("apply", model, test, "--dense")
    assert applied.status == 0, applied.stderr
    assert comment_lines(applied.stdout) == [
        f"% filterkit apply 'my model.json': --positive Iris-setosa --dense shape l2 {VERSION}"
    ]
    assert read_bytes(applied.stdout)[0].relation == "iris test set"
    assert read_bytes(fitted.stdout)[0].relation == "iris"


def test_the_header_parser_keeps_the_comments_before_the_relation():
    parser = HeaderParser()
    for line in ["% filterkit chain: l2 (filterkit 0.2.0)", "", "  %  free text % with a percent ", "@relation r"]:
        parser.feed(line)
    for line in ["% after the relation", "@attribute a numeric", "@data"]:
        parser.feed(line)
    assert parser.comments == ["filterkit chain: l2 (filterkit 0.2.0)", "free text % with a percent"]
    assert read_arff(io.BytesIO(b"% x\n@relation r\n@attribute a numeric\n@data\n1\n"))[0].relation == "r"


@pytest.mark.parametrize("through", ["file", "stdin"])
def test_a_pipe_of_runs_keeps_every_earlier_line(run_filterkit, tmp_path, through):
    first = run_filterkit("-c", "last", "--positive", "Iris-setosa", IRIS, "ig", "select", "--top", "2")
    middle = tmp_path / "middle.arff"
    middle.write_bytes(first.stdout)
    second = run_filterkit(middle, "l2") if through == "file" else run_filterkit("-", "l2", stdin=first.stdout)
    assert second.status == 0, second.stderr
    third = run_filterkit("-", "l1", stdin=second.stdout)
    assert comment_lines(third.stdout) == [
        f"% filterkit chain: --positive Iris-setosa ig select --top 2 {VERSION}",
        f"% filterkit chain: l2 {VERSION}",
        f"% filterkit chain: l1 {VERSION}",
    ]
