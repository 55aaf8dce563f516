"""read -> write -> read gives back identical data, in sparse and in dense output."""

from __future__ import annotations

import io

import numpy as np
import pytest

from arff_helpers import CONFORMANCE, REAL, assert_same_data, read_all, valid_files, write_text
from filterkit.arff.writer import write_arff
from filterkit.schema import Chunk

FILES = [CONFORMANCE / name for name in valid_files()] + sorted(REAL.glob("*.arff"))
# Dense output of all of grain_wc is 20 million values (~40 MB of text, ~15 s):
# its first rows prove the same thing.
DENSE_ROW_LIMIT = {"grain_wc.arff": 200}


def _ids(path):
    return str(path.relative_to(path.parents[1]))


def _first_rows(chunk: Chunk, n: int) -> Chunk:
    weights = None if chunk.weights is None else chunk.weights[:n]
    return Chunk(chunk.values[:n], {c: t[:n] for c, t in chunk.text.items()}, weights)


@pytest.mark.slow
@pytest.mark.parametrize("sparse", [True, False], ids=["sparse", "dense"])
@pytest.mark.parametrize("path", FILES, ids=_ids)
def test_round_trip_is_identical(path, sparse):
    schema, chunk = read_all(path)
    limit = None if sparse else DENSE_ROW_LIMIT.get(path.name)
    if limit is not None:
        chunk = _first_rows(chunk, limit)
    text = write_text(schema, chunk, sparse=sparse)
    rows = [line for line in text.split("\n")[text.split("\n").index("@data") + 1 :] if line]
    assert len(rows) == chunk.n_rows
    assert all(row.startswith("{") == sparse for row in rows)
    schema_back, chunk_back = read_all(io.BytesIO(text.encode("utf-8")), name="written")
    assert_same_data(schema, chunk, schema_back, chunk_back)
    assert chunk_back.is_sparse == (sparse and chunk.n_rows > 0)


def test_round_trip_keeps_awkward_strings_and_missing_values():
    # Control characters, quotes, backslashes, '%', octal-looking text, empty
    # strings and missing strings, in a dense and a sparse rendering.
    source = (
        "@relation 'awk ward'\n"
        "@attribute 'a b' string\n"
        "@attribute n numeric\n"
        "@attribute c {'x y','q\\'s',?x}\n"
        "@data\n"
        "'tab\\there\\nnew % \\\\0 \\'q\\' \"d\"',1.5,'x y'\n"
        "'',?,?\n"
        "?,-0.0,'q\\'s'\n"
        "'\\011\\0\\377',1e300,?x\n"
    )
    schema, chunk = read_all(io.BytesIO(source.encode()), name="awkward")
    assert chunk.text[0] == ["tab\there\nnew % \\0 'q' \"d\"", "", None, "\t\x00\xff"]
    assert schema.attributes[2].labels == ("x y", "q's", "?x")
    for sparse in (True, False):
        back = read_all(io.BytesIO(write_text(schema, chunk, sparse).encode()), name="written")
        assert_same_data(schema, chunk, *back)
        if not sparse:  # a sparse row leaves any zero out, -0.0 included
            assert np.signbit(back[1].dense_values()[2, 1])


class _TextSink:
    """A text stream that is not an io.TextIOBase (as codecs' stream writers are not)."""

    def __init__(self):
        self.parts: list[str] = []

    def write(self, text: str) -> int:
        assert isinstance(text, str)
        self.parts.append(text)
        return len(text)


@pytest.mark.parametrize("path", [REAL / "oh0.wc.arff", REAL / "credit-g.arff"], ids=_ids)
def test_binary_and_any_text_stream_get_the_same_document(path):
    schema, chunk = read_all(path)
    text = write_text(schema, chunk)
    binary, sink = io.BytesIO(), _TextSink()
    write_arff(binary, schema, [chunk])
    write_arff(sink, schema, [chunk])
    assert binary.getvalue() == text.encode("utf-8")
    assert "".join(sink.parts) == text
    assert text.count("\n") > chunk.n_rows
