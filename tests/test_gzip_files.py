"""gzip on both sides of a chain (issue 18, item 3): ``-o x.gz`` writes gzip, the same
bytes every time, and a ``.gz`` input is read as it is, in one pass or several."""

from __future__ import annotations

import gzip

import pytest

from chain_helpers import REAL

IRIS = REAL / "iris.arff"
CHAIN = ["--positive", "Iris-setosa"]

#: gzip's header flag bit that says a file name follows (RFC 1952, 2.3.1).
FNAME = 0x08


def gzipped(path) -> bytes:
    """``path``'s bytes, gzip-compressed by Python's own gzip module."""
    return gzip.compress(path.read_bytes(), mtime=0)


def test_an_output_named_gz_is_gzip_of_the_plain_output(run_filterkit, tmp_path):
    plain = run_filterkit(IRIS, "l2")
    result = run_filterkit("-o", tmp_path / "out.arff.gz", IRIS, "l2")
    assert result.status == 0, result.stderr
    written = (tmp_path / "out.arff.gz").read_bytes()
    assert written[:2] == b"\x1f\x8b"
    assert gzip.decompress(written) == plain.stdout


def test_the_gzip_output_is_byte_identical_whatever_the_time_name_or_chunk_size(run_filterkit, tmp_path):
    first = run_filterkit("-o", tmp_path / "first.gz", *CHAIN, IRIS, "shape", "bns", "l2")
    second = run_filterkit("--chunk-rows", 7, "-o", tmp_path / "second.arff.gz", *CHAIN, IRIS, "shape", "bns", "l2")
    assert first.status == second.status == 0, first.stderr + second.stderr
    written = (tmp_path / "first.gz").read_bytes()
    assert written == (tmp_path / "second.arff.gz").read_bytes()
    assert written[3] & FNAME == 0, "the header names no file"
    assert written[4:8] == b"\0\0\0\0", "the header's time is zero"


def test_apply_writes_gzip_for_a_gz_name_too(run_filterkit, tmp_path):
    model = tmp_path / "m.json"
    assert run_filterkit("--save-model", model, IRIS, "minmax").status == 0
    plain = run_filterkit("apply", model, IRIS)
    result = run_filterkit("apply", "-o", tmp_path / "out.gz", model, IRIS)
    assert result.status == 0, result.stderr
    assert gzip.decompress((tmp_path / "out.gz").read_bytes()) == plain.stdout


def test_a_bad_row_leaves_no_gzip_output_and_no_noise(run_filterkit, tmp_path):
    bad = tmp_path / "bad.arff"
    bad.write_text(IRIS.read_text() + "5.0,3.3,1.4,x,Iris-setosa\n")
    result = run_filterkit("-o", tmp_path / "out.arff.gz", bad, "l2")
    assert result.status == 1
    assert result.stderr == "filterkit: error: " + f"{bad}:226: value 'x' of attribute 'petalwidth' is not a number\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["bad.arff"]


def test_a_gz_output_through_the_console_script_is_complete(filterkit_script, run_filterkit, tmp_path):
    result = filterkit_script("-o", tmp_path / "out.arff.gz", IRIS, "l2")
    assert result.status == 0, result.stderr
    # The plain output from an in-process run: the process that matters is the one writing the gzip file.
    assert gzip.decompress((tmp_path / "out.arff.gz").read_bytes()) == run_filterkit(IRIS, "l2").stdout


@pytest.mark.parametrize("stages", [["l2"], ["shape", "bns", "l2"]], ids=" ".join)
def test_a_gz_input_gives_the_plain_input_s_output_from_a_file_or_stdin(run_filterkit, tmp_path, stages):
    compressed = tmp_path / "iris.arff.gz"
    compressed.write_bytes(gzipped(IRIS))
    expected = run_filterkit(*CHAIN, IRIS, *stages)
    from_file = run_filterkit(*CHAIN, compressed, *stages)
    from_stdin = run_filterkit(*CHAIN, "-", *stages, stdin=compressed.read_bytes())
    assert expected.status == from_file.status == from_stdin.status == 0, from_file.stderr + from_stdin.stderr
    assert from_file.stdout == expected.stdout == from_stdin.stdout
