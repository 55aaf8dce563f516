"""What the writer cannot write is a clear error, and dense rows from sparse chunks are
written a block at a time (issue 23)."""

from __future__ import annotations

import io

import numpy as np
import pytest
import scipy.sparse as sp

from arff_helpers import REAL, read_all
from filterkit.arff import ArffWriter, writer
from filterkit.errors import ArffError
from filterkit.schema import DATE, NUMERIC, STRING, Attribute, Chunk, Schema

WHEN = Schema("r", (Attribute("x", NUMERIC), Attribute("when", DATE, date_format="yyyy-MM-dd")))


def written(schema, chunk, sparse=None) -> bytes:
    out = io.BytesIO()
    ArffWriter(out, schema, sparse).write(chunk)
    return out.getvalue()


@pytest.mark.parametrize("millis", [253402300800000.0, -62135596800001.0, np.inf, 1e300])
def test_a_date_outside_the_years_1_to_9999_is_a_clear_error(millis):
    # 253402300800000 ms is 10000-01-01: a stage's output, after the header is written
    with pytest.raises(ArffError) as caught:
        written(WHEN, Chunk(np.array([[1.0, 0.0], [2.0, millis]])))
    message = caught.value.message
    assert message.startswith("attribute 'when': the date ") and "is outside the years 1 to 9999" in message


def test_the_last_dates_of_the_range_are_written():
    text = written(WHEN, Chunk(np.array([[1.0, 253402300799999.0], [2.0, -62135596800000.0]])))
    assert text.endswith(b"@data\n1,9999-12-31\n2,0001-01-01\n")


@pytest.mark.parametrize("weight", [np.nan, np.inf, -1.0])
def test_a_weight_that_cannot_be_read_back_is_not_written(weight):
    chunk = Chunk(np.array([[1.0, 0.0], [2.0, 0.0]]), weights=np.array([1.0, weight]))
    with pytest.raises(ArffError, match="cannot be written"):
        written(WHEN, chunk)


@pytest.mark.slow
def test_dense_rows_from_a_sparse_chunk_are_written_a_block_at_a_time(monkeypatch):
    schema, chunk = read_all(REAL / "oh0.wc.arff")
    assert chunk.is_sparse
    expected = written(schema, Chunk(chunk.dense_values(), chunk.text, chunk.weights), sparse=False)
    seen = []
    entries = writer.ArffWriter._entries

    def counting(self, block, sparse):
        seen.append(block.n_rows)
        return entries(self, block, sparse)

    monkeypatch.setattr(writer.ArffWriter, "_entries", counting)
    assert written(schema, chunk, sparse=False) == expected
    assert max(seen) == (1 << 20) // len(schema) and sum(seen) == chunk.n_rows


def test_weights_and_strings_follow_their_rows_across_blocks(monkeypatch):
    monkeypatch.setattr(writer, "_DENSE_BLOCK_CELLS", 4)
    schema = Schema("r", (Attribute("x", NUMERIC), Attribute("y", NUMERIC), Attribute("s", STRING)))
    values = sp.csr_matrix(np.array([[0, 1, 0], [2, 0, 0], [0, 0, 0], [3, 4, 0], [5, 0, 0]], dtype=float))
    chunk = Chunk(values, {2: ["a", "b c", "", "d", "e"]}, weights=np.array([1.0, 0.5, 2.0, 1.0, 3.0]))
    assert (
        written(schema, chunk, sparse=False).split(b"@data\n")[1]
        == b"0,1,a\n2,0,'b c' {0.5}\n0,0,'' {2}\n3,4,d\n5,0,e {3}\n"
    )


@pytest.mark.parametrize(
    "pattern, text",
    [
        ("yyyy-MM-dd'T'HH:mm:ssZ", "9999-12-31T23:59:59-0100"),
        ("yyyy-MM-dd'T'HH:mm:ssZ", "0001-01-01T00:30:00+0100"),
    ],
)
def test_a_date_read_past_the_years_1_to_9999_by_its_zone_is_refused_at_its_line(
    run_filterkit, tmp_path, pattern, text
):
    # read, it failed only when written, without a line, after the header; `info` exited 0
    path = tmp_path / "late.arff"
    path.write_text(f"@relation r\n@attribute when date \"{pattern}\"\n@data\n'{text}'\n")
    expected = (
        f"filterkit: error: {path}:4: date '{text}' is outside the years 1 to 9999 in UTC, as filterkit holds dates\n"
    )
    for argv in (("info", path), (path, "-o", tmp_path / "out.arff")):
        result = run_filterkit(*argv)
        assert (result.status, result.stderr) == (1, expected)
    assert not (tmp_path / "out.arff").exists()
    edge = text.replace("-0100", "+0000").replace("+0100", "+0000")
    path.write_text(f"@relation r\n@attribute when date \"{pattern}\"\n@data\n'{edge}'\n")
    assert run_filterkit("info", path).status == 0
