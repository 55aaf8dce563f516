"""Streaming input: chunk sizes, weights, gzip and binary streams, line endings,
bounded memory on a million rows, and a linear-time header tokenizer."""

from __future__ import annotations

import gzip
import io
import math
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from arff_helpers import CONFORMANCE, REAL, assert_same_data, read_all, write_text
from filterkit.arff import ArffReader, read_arff
from filterkit.errors import ArffError

# --------------------------------------------------------------------------
# chunking


@pytest.mark.slow
@pytest.mark.parametrize(
    "path, sparse",
    [
        (REAL / "oh0.wc.arff", True),
        (REAL / "credit-g.arff", False),
        # dense rows with strings, then two sparse rows: both parsing paths
        (CONFORMANCE / "weka/classifiers__data__ClassifierTest.arff", False),
    ],
    ids=lambda v: getattr(v, "name", str(v)),
)
@pytest.mark.parametrize("chunk_rows", [1, 7])
def test_chunk_size_does_not_change_the_data(path, sparse, chunk_rows):
    whole = read_all(path)
    with ArffReader(path, chunk_rows=chunk_rows) as reader:
        chunks = list(reader.chunks())
    assert all(chunk.is_sparse == sparse for chunk in chunks)
    assert [c.n_rows for c in chunks[:-1]] == [chunk_rows] * (len(chunks) - 1)
    assert len(chunks) == math.ceil(whole[1].n_rows / chunk_rows)
    assert_same_data(*whole, *read_all(path, chunk_rows=chunk_rows))


def test_default_chunk_holds_up_to_ten_thousand_rows():
    with ArffReader(REAL / "credit-g.arff") as reader:
        assert [c.n_rows for c in reader.chunks()] == [1000]
    # first row: '<0',6,'critical/other existing credit',radio/tv,1169,...
    assert read_all(REAL / "credit-g.arff")[1].dense_values()[0, :5].tolist() == [0.0, 6.0, 4.0, 3.0, 1169.0]


# --------------------------------------------------------------------------
# instance weights

WEIGHTED = (
    "@relation weighted\n"
    "@attribute a numeric\n"
    "@attribute b {x,y}\n"
    "@attribute s string\n"
    "@data\n"
    "1,x,'one',{2.5}\n"
    "2,y,'two two' , {0.5}\n"
    "3,x,three\n"
    "{0 4,1 y,2 four} {3}\n"
    "{1 y} {0.125}\n"
    "{}\n"
)


def test_weights_at_the_end_of_dense_and_sparse_rows_are_read():
    schema, chunk = read_all(io.BytesIO(WEIGHTED.encode()), name="weighted")
    np.testing.assert_array_equal(chunk.weights, [2.5, 0.5, 1.0, 3.0, 0.125, 1.0])
    np.testing.assert_array_equal(
        chunk.dense_values(), [[1, 0, 0], [2, 1, 0], [3, 0, 0], [4, 1, 0], [0, 1, 0], [0, 0, 0]]
    )
    assert chunk.text[2] == ["one", "two two", "three", "four", "", ""]


@pytest.mark.parametrize("sparse", [True, False], ids=["sparse", "dense"])
def test_weights_are_written_back(sparse):
    schema, chunk = read_all(io.BytesIO(WEIGHTED.encode()), name="weighted")
    text = write_text(schema, chunk, sparse=sparse)
    rows = text.split("@data\n", 1)[1].splitlines()
    if sparse:
        # the empty strings are written out: Weka reads a left-out string as
        # '*WEKA*DUMMY*STRING*FOR*STRING*ATTRIBUTES*', not as ''
        expected = [
            "{0 1,2 one} {2.5}",
            "{0 2,1 y,2 'two two'} {0.5}",
            "{0 3,2 three}",
            "{0 4,1 y,2 four} {3}",
            "{1 y,2 ''} {0.125}",
            "{2 ''}",
        ]
    else:
        expected = ["1,x,one {2.5}", "2,y,'two two' {0.5}", "3,x,three", "4,y,four {3}", "0,y,'' {0.125}", "0,x,''"]
    assert rows == expected  # weight 1 is left out
    assert_same_data(schema, chunk, *read_all(io.BytesIO(text.encode()), name="written"))


def test_weight_that_is_not_a_number_is_rejected_at_its_line():
    with pytest.raises(ArffError) as caught:
        read_all(io.BytesIO(WEIGHTED.replace("{0.5}", "{heavy}").encode()), name="weighted")
    assert caught.value.line == 7


# --------------------------------------------------------------------------
# sources: gzip, binary streams, line endings

SOURCES = [
    REAL / "iris.arff",  # dense, numeric fast path
    REAL / "oh0.wc.arff",  # sparse fast path
    CONFORMANCE / "weka/classifiers__data__ClassifierTest.arff",  # strings, tokenizer path
    CONFORMANCE / "farff-r/inst_arffs__string_special_chars.arff",
    REAL / "grain_wc.arff",  # over 1 MB: line ends meet the reader's block boundary
]


def _ids(path):
    return path.name


@pytest.mark.slow
@pytest.mark.parametrize("path", SOURCES, ids=_ids)
def test_gzip_file_reads_the_same_as_plain(path, tmp_path):
    packed = tmp_path / (path.name + ".gz")
    packed.write_bytes(gzip.compress(path.read_bytes()))
    assert_same_data(*read_all(path), *read_all(packed))


@pytest.mark.slow
@pytest.mark.parametrize("path", SOURCES, ids=_ids)
def test_binary_stream_reads_the_same_as_a_path(path):
    assert_same_data(*read_all(path), *read_all(io.BytesIO(path.read_bytes()), name=str(path)))


def test_gzip_stream_reads_the_same_as_plain():
    path = REAL / "iris.arff"
    assert_same_data(*read_all(path), *read_all(io.BytesIO(gzip.compress(path.read_bytes()))))


@pytest.mark.slow
@pytest.mark.parametrize("ending", [b"\r\n", b"\r"], ids=["CRLF", "CR"])
@pytest.mark.parametrize("path", SOURCES, ids=_ids)
def test_crlf_and_cr_line_endings_read_the_same_as_lf(path, ending):
    # (oh0's comment header already mixes in a few CRLF lines)
    lf = path.read_bytes().replace(b"\r\n", b"\n")
    assert b"\r" not in lf
    expected = read_all(io.BytesIO(lf), name="lf")
    assert_same_data(*expected, *read_all(path))
    assert_same_data(*expected, *read_all(io.BytesIO(lf.replace(b"\n", ending)), name="converted"))


@pytest.mark.parametrize("ending", [b"\n", b"\r\n", b"\r"], ids=["LF", "CRLF", "CR"])
def test_error_line_is_the_same_whatever_the_line_ending(ending):
    data = (CONFORMANCE / "ARFFFiles-jl/load_jl__load_invalid_data__invalid_nominal.arff").read_bytes()
    with pytest.raises(ArffError) as caught:
        read_arff(io.BytesIO(data.replace(b"\n", ending)), name="nominal")
    assert caught.value.line == 5
    assert str(caught.value).startswith("nominal:5: value 'maybe'")


@pytest.mark.parametrize("ending", [b"\n", b"\r\n", b"\r", b""], ids=["LF", "CRLF", "CR", "none"])
@pytest.mark.parametrize(
    ("document", "line", "message"),
    [
        (b"@relation r\n@attribute s string", 2, "the header has no @data line"),
        (b"@relation r", 1, "the header has no @data line"),
        (b"@relation r\n@attribute s string\n@data\n'abc", 4, "unterminated ' quote"),
        (b"@relation r\n@attribute s numeric\n@data\n1\nx", 5, "value 'x' of attribute 's' is not a number"),
    ],
    ids=["no @data", "relation alone", "quote left open", "bad row"],
)
def test_an_error_at_the_end_of_the_file_names_its_last_line(document, line, message, ending):
    # the end of a file that ends with a line end is no line of its own (a 2-line header without @data was said
    # to end on line 3); gzip'd the same
    data = document.replace(b"\n", ending or b"\n") + ending
    for source in (data, gzip.compress(data)):
        with pytest.raises(ArffError) as caught:
            read_arff(io.BytesIO(source), name="end")
        assert (caught.value.line, caught.value.message[: len(message)]) == (line, message)


def test_the_command_names_the_last_line_of_a_header_without_data(run_filterkit, tmp_path):
    (tmp_path / "nd.arff").write_bytes(b"@relation r\n@attribute s string\n")
    result = run_filterkit(str(tmp_path / "nd.arff"))
    assert result.stderr.endswith("nd.arff:2: the header has no @data line (the file ends on this line)\n")
    result = run_filterkit("-", stdin=b"@relation r\n")
    assert result.stderr == "filterkit: error: <stdin>:1: the header has no @data line (the file ends on this line)\n"


# --------------------------------------------------------------------------
# memory: a million rows are read in bounded memory

# The child reports its peak resident set in kB.  Linux carries the forking
# parent's high-water mark over exec into ru_maxrss (a child of a 400 MB pytest
# process reports at least 400 MB), so VmHWM, the peak of the child's own
# address space, is used where /proc has it; ru_maxrss is the fallback.
_CHILD = textwrap.dedent(
    """
    import resource, sys
    from filterkit.arff import ArffReader
    rows, total = 0, 0.0
    with ArffReader(sys.argv[1]) as reader:
        for chunk in reader.chunks():
            rows += chunk.n_rows
            total += float(chunk.values.sum())
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:
        with open("/proc/self/status") as status:
            peak = next(int(l.split()[1]) for l in status if l.startswith("VmHWM:"))
    except (OSError, StopIteration):
        pass
    print(rows, total, peak)
    """
)


def _write_sparse_rows(path, n_rows, piece=100_000):
    """A sparse file of five numeric attributes and a nominal class, written in pieces.

    Row i is {0 a,3 b,5 c} with a = 1 + i % 97, b = (i % 1000) / 8 and the
    class 'pos' on every tenth row, so its sums are known exactly.
    """
    with open(path, "w", encoding="utf-8") as out:
        out.write("@relation big\n")
        out.writelines(f"@attribute x{i} numeric\n" for i in range(5))
        out.write("@attribute class {neg,pos}\n@data\n")
        for start in range(0, n_rows, piece):
            index = np.arange(start, min(start + piece, n_rows))
            a = (1 + index % 97).tolist()
            b = ((index % 1000) / 8).tolist()
            label = np.where(index % 10 == 0, "pos", "neg").tolist()
            out.write("\n".join(f"{{0 {x},3 {y},5 {c}}}" for x, y, c in zip(a, b, label)))
            out.write("\n")


def _expected_sum(n_rows):
    index = np.arange(n_rows)
    return float((1 + index % 97).sum() + ((index % 1000) / 8).sum() + (index % 10 == 0).sum())


def _peak_rss_mb(path, n_rows):
    result = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path)], capture_output=True, text=True, timeout=120, check=True
    )
    rows, total, peak_kb = result.stdout.split()
    assert int(rows) == n_rows
    assert float(total) == _expected_sum(n_rows)  # every row was read, not skipped
    return int(peak_kb) / 1024  # ru_maxrss is in kilobytes on Linux


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss is in kilobytes on Linux only")
def test_reading_a_million_rows_in_chunks_keeps_memory_flat(tmp_path):
    small, big = tmp_path / "small.arff", tmp_path / "big.arff"
    _write_sparse_rows(small, 100_000)
    _write_sparse_rows(big, 1_000_000)
    assert big.stat().st_size > 20_000_000
    small_peak = _peak_rss_mb(small, 100_000)
    big_peak = _peak_rss_mb(big, 1_000_000)
    # the whole matrix of a million rows would be ~24 MB of CSR plus the text;
    # chunked reading must not grow with the rows
    assert big_peak - small_peak < 50, (small_peak, big_peak)
    assert big_peak < 300, big_peak


# --------------------------------------------------------------------------
# the header tokenizer takes linear time (liac-arff issue #117 was a ReDoS)

_REPEATS = 250_000  # about 1 MB of header line


def _timed_read(header_line: str):
    document = f"@relation redos\n{header_line}\n@data\n".encode()
    assert len(document) > 1_000_000
    # CPU seconds, not wall: other processes on a shared machine stretch the wall time, not the CPU time
    start = time.process_time()
    try:
        result = read_arff(io.BytesIO(document), name="redos")
    except ArffError as error:
        result = error
    return result, time.process_time() - start


@pytest.mark.slow
def test_quoted_commas_in_an_unterminated_nominal_are_rejected_fast():
    # liac-arff's own regression shape, made 1 MB long
    result, seconds = _timed_read("@attribute width {" + "','," * _REPEATS)
    assert isinstance(result, ArffError) and result.line == 2
    assert "no closing '}'" in result.message
    assert seconds < 10  # generous: a linear scan takes well under a second, a quadratic scan of 1 MB minutes


def test_escaped_quotes_and_backslashes_are_rejected_fast():
    # one quote opened and never closed: every \' and \\ must be skipped once
    result, seconds = _timed_read("@attribute width {'" + "\\'\\\\," * _REPEATS)
    assert isinstance(result, ArffError) and result.line == 2
    assert "unterminated ' quote" in result.message
    assert seconds < 10  # generous: a linear scan takes well under a second, a quadratic scan of 1 MB minutes


@pytest.mark.slow
def test_a_megabyte_of_quoted_labels_with_escapes_is_read_fast():
    labels = ",".join(f"'l\\'{i}\\\\'" for i in range(_REPEATS // 2))
    result, seconds = _timed_read("@attribute width {" + labels + "}")
    schema, _ = result
    assert len(schema.attributes[0].labels) == _REPEATS // 2
    assert schema.attributes[0].labels[7] == "l'7\\"
    assert seconds < 10  # generous: a linear scan takes well under a second, a quadratic scan of 1 MB minutes
