"""Text written into a comment cannot add rows (issue 37, item 6): an option value, a model
file's name or an earlier run's provenance line holding a line end or another control
character is escaped in the ARFF ``%`` and the svmlight ``#`` lines, and names and labels
from the data are quoted in the header, so every output reads back with the rows it was
written with."""

from __future__ import annotations

import pytest

from chain_helpers import REAL, read_bytes
from filterkit import __version__
from filterkit.arff.tokens import one_line
from filterkit.formats import FormatOptions
from filterkit.formats.svmlight import SvmlightFormat

IRIS = REAL / "iris.arff"
#: An option value that, written raw, would end the comment and add a row in either format.
HOSTILE = "zzz\n7 1:1 #\r5.1,3.5,1.4,0.2,Iris-setosa\x85\u2028\x1b\x00"
SVMLIGHT = b"1 1:1 2:3\n-1 2:1\n"


def test_control_characters_are_written_as_escapes_and_nothing_else_changes():
    assert one_line("a\nb\r\tc\x1b\x00\x7f\x85\u2028") == "a\\nb\\r\tc\\x1b\\x00\\x7f\\x85\\u2028"  # a tab ends no line
    assert one_line("plain 'text' with \\n, é and %") == "plain 'text' with \\n, é and %"
    assert one_line(one_line(HOSTILE)) == one_line(HOSTILE)  # a pipe of runs does not escape twice


def test_bidirectional_controls_are_written_as_escapes_so_a_line_shows_its_text_in_order():
    """A right-to-left override (U+202E) or isolate in a word would make a terminal show the rest of the error
    or comment line reversed: each is written as its escape, and right-to-left letters themselves are kept."""
    marks = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
    assert one_line("a" + marks + "b") == "a" + "".join(f"\\u{ord(mark):04x}" for mark in marks) + "b"
    assert one_line("שלום مرحبا") == "שלום مرحبا"


def test_an_option_value_cannot_add_an_arff_row(run_filterkit):
    result = run_filterkit(IRIS, "remove", "--regex", HOSTILE)
    assert result.status == 0, result.stderr
    head = result.stdout.split(b"@relation", 1)[0].decode()
    assert head.count("\n") == 1 and head.startswith("% filterkit chain: remove --regex 'zzz\\n7 1:1 #\\r5.1")
    schema, chunk = read_bytes(result.stdout)
    assert chunk.n_rows == 150 and len(schema) == 5


def test_an_option_value_cannot_add_an_svmlight_row(run_filterkit, tmp_path):
    data = tmp_path / "r.svm"
    data.write_bytes(SVMLIGHT)
    result = run_filterkit(data, "remove", "--regex", HOSTILE, "--to", "svmlight")
    assert result.status == 0, result.stderr
    lines = result.stdout.decode().split("\n")
    assert lines[1:] == ["1 1:1 2:3", "-1 2:1", ""]
    assert lines[0].startswith("# filterkit chain: remove --regex 'zzz\\n7 1:1 #\\r5.1")
    written = tmp_path / "out.svm"
    written.write_bytes(result.stdout)
    assert SvmlightFormat().scan(lambda: open(written, "rb"), str(written), FormatOptions(), None).rows == 2


@pytest.mark.parametrize("to", ["arff", "svmlight"])
def test_a_model_file_name_and_earlier_provenance_stay_one_line_each(run_filterkit, tmp_path, to):
    data = tmp_path / "r.svm"
    data.write_bytes(SVMLIGHT)
    model = tmp_path / "model\n1 1:5.json"
    fitted = run_filterkit("--save-model", model, data, "remove", "--regex", "a\nb")
    assert fitted.status == 0, fitted.stderr
    earlier = tmp_path / "earlier.arff"
    earlier.write_bytes(fitted.stdout)
    applied = run_filterkit("apply", model, earlier, "--to", to)
    assert applied.status == 0, applied.stderr
    text = applied.stdout.decode()
    mark = "%" if to == "arff" else "#"
    assert text.splitlines()[:2] == [
        f"{mark} {fitted.stdout.decode().splitlines()[0][2:]}",
        f"{mark} filterkit apply 'model\\n1 1:5.json': remove --regex 'a\\nb' (filterkit {__version__})",
    ]
    assert "'a\\nb'" in fitted.stdout.decode().splitlines()[0]


def test_names_from_the_data_are_quoted_in_the_header(run_filterkit, tmp_path):
    data = tmp_path / "rel\n@data\n1 1:1.svm"
    data.write_bytes(SVMLIGHT)
    result = run_filterkit(data, "remove-useless")
    assert result.status == 0, result.stderr
    schema, chunk = read_bytes(result.stdout)
    assert schema.relation == data.name and chunk.n_rows == 2
