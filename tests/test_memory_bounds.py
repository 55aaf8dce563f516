"""Memory stays bounded by counts, not timings (issue 20, item 5): the reader cuts chunks by
bytes of text as well as rows, reads no further ahead than one chunk, and the writer formats
a sparse chunk a block of values at a time; none of this changes a byte of the output."""

from __future__ import annotations

import io
import threading
import time
import weakref

import numpy as np
import pytest
import scipy.sparse as sp

from chain_helpers import OH0_SAMPLE, REAL
from filterkit.arff import ArffWriter, writer
from filterkit.arff.reader import DEFAULT_CHUNK_ROWS, ArffReader
from filterkit.background import read_ahead
from filterkit.cli import run
from filterkit.limits import Limits
from filterkit.schema import NOMINAL, NUMERIC, STRING, Attribute, Chunk, Schema
from filterkit.sources import FileSource

#: Rows of ~75 word counts, as grain_wc's (546 bytes of text each on average there).
WORDS = 2_000


def wide_sparse_file(path, rows: int, per_row: int = 75) -> list[int]:
    """A sparse ARFF file of ``rows`` rows of ``per_row`` word counts; the bytes of each row's line."""
    generator = np.random.default_rng(20)
    header = "@relation wide\n@attribute class {a,b}\n"
    header += "".join(f"@attribute w{i} numeric\n" for i in range(WORDS)) + "@data\n"
    lines = []
    for row in range(rows):
        columns = np.arange(per_row) * (WORDS // per_row) + row % (WORDS // per_row) + 1
        counts = generator.integers(1, 40, per_row)
        cells = ",".join(f"{c} {n}" for c, n in zip(columns.tolist(), counts.tolist()))
        lines.append(f"{{0 {'ab'[row % 2]},{cells}}}")
    path.write_text(header + "\n".join(lines) + "\n")
    return [len(line) + 1 for line in lines]


def test_the_reader_cuts_a_chunk_of_wide_rows_at_its_budget_of_text(tmp_path, monkeypatch):
    monkeypatch.delenv("FILTERKIT_MAX_CHUNK_BYTES", raising=False)
    budget = Limits().chunk_bytes
    # 10,000 rows of grain's width would hold 5.5 MB of text in one chunk, and parsing and
    # formatting them would take several times that; the budget ends a chunk first
    path = tmp_path / "wide.arff"
    line_bytes = wide_sparse_file(path, 4_000)
    assert sum(line_bytes) > 2 * budget
    assert budget <= 2 << 20
    with ArffReader(str(path)) as reader:
        sizes = [chunk.n_rows for chunk in reader.chunks()]
    assert sum(sizes) == 4_000 and max(sizes) < DEFAULT_CHUNK_ROWS
    bounds = np.cumsum([0] + sizes)
    texts = [sum(line_bytes[start:stop]) for start, stop in zip(bounds[:-1], bounds[1:])]
    # a chunk ends with the line that reaches the budget: below it before that line
    assert all(text - line_bytes[stop - 1] < budget for text, stop in zip(texts, bounds[1:]))
    assert all(text >= budget for text in texts[:-1])


def test_the_budget_of_text_changes_no_byte_of_the_output(tmp_path, monkeypatch):
    outputs = []
    for budget in (None, "2048"):
        if budget is None:
            monkeypatch.delenv("FILTERKIT_MAX_CHUNK_BYTES", raising=False)
        else:
            monkeypatch.setenv("FILTERKIT_MAX_CHUNK_BYTES", budget)
        out = tmp_path / f"out-{budget}.arff"
        assert run(["-q", "--positive", "Ethics", str(OH0_SAMPLE), "shape", "bns", "l2", "-o", str(out)]) == 0
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]
    assert outputs[0].count(b"\n{") == 60


def test_read_ahead_reads_no_further_than_the_chunk_after_the_callers():
    # The caller is slow: a thread free to read on would have read every chunk before the
    # caller took the second.  Each chunk is started only once the one before it was taken.
    events: list[tuple[str, int]] = []
    lock = threading.Lock()

    def log(kind: str, number: int) -> None:
        with lock:
            events.append((kind, number))

    def make_chunks():
        for number in range(6):
            log("started", number)
            yield Chunk(np.full((1, 1), float(number)))

    for chunk in read_ahead(make_chunks):
        number = int(chunk.values[0, 0])
        log("taken", number)
        time.sleep(0.02)
    order = {event: position for position, event in enumerate(events)}
    assert [number for kind, number in events if kind == "taken"] == list(range(6))
    for number in range(1, 6):
        assert order[("started", number)] > order[("taken", number - 1)], events


def test_a_file_source_holds_at_most_two_of_its_chunks_at_once(tmp_path, monkeypatch):
    # the caller's chunk and the one read after it; before, a third waited in the queue
    path = tmp_path / "wide.arff"
    wide_sparse_file(path, 300, per_row=5)
    source = FileSource(str(path), chunk_rows=10)
    alive = {"now": 0, "most": 0}
    lock = threading.Lock()
    parse_group = ArffReader._parse_group

    def released() -> None:
        with lock:
            alive["now"] -= 1

    def counted(self, lines, numbers, sparse):
        chunk = parse_group(self, lines, numbers, sparse)
        with lock:
            alive["now"] += 1
            alive["most"] = max(alive["most"], alive["now"])
        weakref.finalize(chunk, released)
        return chunk

    monkeypatch.setattr(ArffReader, "_parse_group", counted)
    rows = 0
    for chunk in source.chunks():
        rows += chunk.n_rows
        time.sleep(0.01)
        del chunk
    assert rows == 300
    assert alive["most"] == 2


SCHEMA = Schema(
    "r",
    (Attribute("class", NOMINAL, labels=("a", "b")),)
    + tuple(Attribute(f"w{i}", NUMERIC) for i in range(40))
    + (Attribute("note", STRING),),
)


def sparse_chunk(rows: int, weights: bool = False) -> Chunk:
    """Rows of a class, 40 numbers (60 % of them zero) and a string present in every third row."""
    generator = np.random.default_rng(5)
    dense = np.round(generator.uniform(0, 1000, (rows, 42))) / 7
    dense[generator.uniform(size=(rows, 42)) < 0.6] = 0
    dense[:, 0] = np.arange(rows) % 2
    dense[:, 41] = 0
    notes = [None if row % 3 else f"note {row}" for row in range(rows)]
    return Chunk(sp.csr_matrix(dense), {41: notes}, generator.uniform(0.5, 2, rows) if weights else None)


def written(chunk: Chunk, sparse=None) -> bytes:
    out = io.BytesIO()
    ArffWriter(out, SCHEMA, sparse).write(chunk)
    return out.getvalue()


@pytest.mark.parametrize("weights", [False, True])
def test_the_writer_formats_a_sparse_chunk_a_block_of_values_at_a_time(monkeypatch, weights):
    chunk = sparse_chunk(1_000, weights)
    monkeypatch.setattr(writer, "_SPARSE_BLOCK_ENTRIES", 10**9)
    whole = written(chunk)
    monkeypatch.setattr(writer, "_SPARSE_BLOCK_ENTRIES", 500)
    formatted = []
    entries = writer.ArffWriter._entries

    def counting(self, block, sparse):
        found = entries(self, block, sparse)
        formatted.append(len(found[1]))
        return found

    monkeypatch.setattr(writer.ArffWriter, "_entries", counting)
    assert written(chunk) == whole
    stored = np.count_nonzero(chunk.values.data) + sum(note is not None for note in chunk.text[41])
    assert sum(formatted) == stored
    # a block ends with the row that reaches the bound; these rows hold at most 42 values
    assert len(formatted) > 10 and max(formatted) < 500 + 42


def test_the_writer_splits_a_wide_sparse_chunk_by_default():
    # a chunk of 10,000 rows of 75 values (grain's) is 750,000 values: more than one block
    assert writer._SPARSE_BLOCK_ENTRIES <= 1 << 18
    assert 10_000 * 75 > 2 * writer._SPARSE_BLOCK_ENTRIES


def test_a_block_is_never_less_than_one_row(monkeypatch):
    chunk = sparse_chunk(5)
    whole = written(chunk)
    monkeypatch.setattr(writer, "_SPARSE_BLOCK_ENTRIES", 1)
    assert written(chunk) == whole
    assert whole.split(b"@data\n")[1].count(b"\n") == 5


def test_real_sparse_data_is_written_the_same_in_small_blocks(monkeypatch):
    with ArffReader(str(REAL / "oh0.wc.arff")) as reader:
        schema, chunk = reader.schema, reader.read_all()
    whole = io.BytesIO()
    ArffWriter(whole, schema).write(chunk)
    monkeypatch.setattr(writer, "_SPARSE_BLOCK_ENTRIES", 100)
    blocks = io.BytesIO()
    ArffWriter(blocks, schema).write(chunk)
    assert blocks.getvalue() == whole.getvalue()
    assert whole.getvalue().split(b"@data\n")[1].count(b"\n") == 1003
