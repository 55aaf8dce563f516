"""The one switch between the compiled modules and the Python and numpy paths (issue 48, item 5):
``filterkit.kernels.compiled`` turns a part off for the whole process, the call sites of that part
then take their other path, and the tests switch compiled paths with it only, never by patching a
private name of the compiled modules' callers.  The row printer, which has no Python path in the library, is
swapped for its oracle in one place, tests/oracles.py's ``printed_in_python``."""

from __future__ import annotations

import ast
import io
import threading
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import oracles
from filterkit import exact, kernels
from filterkit.arff import ArffReader, reader, writer
from filterkit.formats import csv as csv_format
from filterkit.schema import NUMERIC, Attribute, Chunk, Schema
from filterkit.statistics import PresenceCounts, ValueCounts

TESTS = Path(__file__).resolve().parent
#: The names a test may not patch: the compiled modules and the call sites' compiled helpers.
COMPILED_NAMES = ("_speedups", "_kernels", "_lines", "_words")


def patched_compiled_names(path: Path) -> list[str]:
    """``LINE: NAME`` for each ``setattr`` (monkeypatch's or the built-in), ``patch`` or ``patch.object``
    in ``path`` whose target names a compiled module or a ``_compiled…`` helper."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if not isinstance(node, ast.Call):
            continue
        function = node.func
        called = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
        if called not in ("setattr", "patch", "object"):
            continue
        names = []
        for argument in node.args[:2]:
            for part in ast.walk(argument):
                if isinstance(part, ast.Attribute):
                    names.append(part.attr)
                elif isinstance(part, ast.Name):
                    names.append(part.id)
                elif isinstance(part, ast.Constant) and isinstance(part.value, str):
                    names += part.value.split(".")
        found += [f"{node.lineno}: {name}" for name in names if name in COMPILED_NAMES or name.startswith("_compiled")]
    return found


@pytest.mark.parametrize("path", sorted(TESTS.rglob("*.py")), ids=lambda path: str(path.relative_to(TESTS)))
def test_no_test_patches_a_compiled_path_by_a_private_name(path):
    assert patched_compiled_names(path) == [], "switch compiled paths with filterkit.kernels.compiled"


def test_the_check_finds_each_way_of_patching_a_compiled_name(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "def test(monkeypatch):\n"
        "    monkeypatch.setattr(writer, '_speedups', None)\n"
        "    monkeypatch.setattr(statistics.ValueCounts, '_compiled_of_chunk', None)\n"
        "    monkeypatch.setattr('filterkit.formats.svmlight._lines', None)\n"
        "    setattr(reader._speedups, 'gather_rows', None)\n"
        "    mock.patch.object(exact, '_compiled_merge')\n"
        "    mock.patch('filterkit.plugin._words')\n"
        "    monkeypatch.setattr(writer, '_SPARSE_BLOCK_ENTRIES', 1)\n"
    )
    assert patched_compiled_names(sample) == [
        "2: _speedups",
        "3: _compiled_of_chunk",
        "4: _lines",
        "5: _speedups",
        "6: _compiled_merge",
        "7: _words",
    ]


def test_a_part_is_off_within_the_block_only_and_the_others_stay_on():
    assert all(kernels.use_compiled(part) for part in kernels.PARTS)
    with kernels.compiled(False, kernels.ARRAYS):
        assert [kernels.use_compiled(part) for part in kernels.PARTS] == [True, False]
        with kernels.compiled(False):
            assert not any(kernels.use_compiled(part) for part in kernels.PARTS)
            with kernels.compiled(True, kernels.READING):
                assert [kernels.use_compiled(part) for part in kernels.PARTS] == [True, False]
        assert [kernels.use_compiled(part) for part in kernels.PARTS] == [True, False]
    assert all(kernels.use_compiled(part) for part in kernels.PARTS)


def test_the_switch_holds_for_every_thread_and_comes_back_after_an_error():
    seen = []
    with pytest.raises(RuntimeError), kernels.compiled(False, kernels.READING):
        worker = threading.Thread(target=lambda: seen.append(kernels.use_compiled(kernels.READING)))
        worker.start()
        worker.join()
        raise RuntimeError
    assert seen == [False] and kernels.use_compiled(kernels.READING)


def blocks_exited_out_of_order(
    first: tuple[bool, str], second: tuple[bool, str], first_exits_first: bool
) -> list[bool]:
    """The parts on after thread A enters ``first``, thread B enters ``second`` and they leave in the order
    given, each step forced by an event, so the blocks overlap without nesting when ``first_exits_first``."""
    a_entered, b_entered, a_exited, b_exited = (threading.Event() for _ in range(4))

    def thread_a():
        with kernels.compiled(*first):
            a_entered.set()
            b_entered.wait()
            if not first_exits_first:
                b_exited.wait()
        a_exited.set()

    def thread_b():
        a_entered.wait()
        with kernels.compiled(*second):
            b_entered.set()
            if first_exits_first:
                a_exited.wait()
        b_exited.set()

    threads = [threading.Thread(target=thread_a), threading.Thread(target=thread_b)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [kernels.use_compiled(part) for part in kernels.PARTS]


@pytest.mark.parametrize("first_exits_first", [True, False], ids=["overlapping", "nested"])
@pytest.mark.parametrize(
    "first, second",
    [
        ((False, kernels.READING), (False, kernels.ARRAYS)),
        ((False, kernels.READING), (False, kernels.READING)),
        ((False, kernels.READING), (True, kernels.READING)),
        ((True, kernels.ARRAYS), (False, kernels.ARRAYS)),
    ],
)
def test_blocks_of_two_threads_leave_every_part_as_before_in_either_exit_order(first, second, first_exits_first):
    assert blocks_exited_out_of_order(first, second, first_exits_first) == [True, True]


def test_a_part_stays_off_while_an_overlapping_block_of_another_thread_holds_it_off():
    a_entered, b_entered, a_exited = threading.Event(), threading.Event(), threading.Event()
    seen = []

    def thread_a():
        with kernels.compiled(False, kernels.READING):
            a_entered.set()
            b_entered.wait()
        a_exited.set()

    def thread_b():
        a_entered.wait()
        with kernels.compiled(False, kernels.READING, kernels.ARRAYS):
            b_entered.set()
            a_exited.wait()
            seen.append([kernels.use_compiled(part) for part in kernels.PARTS])

    threads = [threading.Thread(target=thread_a), threading.Thread(target=thread_b)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == [[False, False]]


def test_an_unknown_part_is_refused():
    with pytest.raises(ValueError, match="no compiled part \\['array'\\]: the parts are reading, arrays"):
        with kernels.compiled(False, "array"):
            pass


def sparse_word_counts() -> Chunk:
    """Whole counts the compiled statistics take (class in column 0)."""
    return Chunk(sp.csr_matrix(np.array([[0.0, 2.0, 0.0, 1.0], [1.0, 0.0, 3.0, 1.0], [0.0, 2.0, 2.0, 0.0]])), {})


def test_with_the_arrays_off_the_statistics_and_exact_sums_take_numpy():
    chunk, features, keys = sparse_word_counts(), np.array([1, 2, 3]), np.array([3, 1, 3], dtype=np.int64)
    counts = PresenceCounts.empty(3, 2)
    assert ValueCounts._compiled_of_chunk(chunk, features, 0, 2) is not None
    assert counts._compiled_of_chunk(chunk, features, 0) is not None
    assert exact._compiled_counts(keys) is not None
    with kernels.compiled(False, kernels.ARRAYS):
        assert ValueCounts._compiled_of_chunk(chunk, features, 0, 2) is None
        assert counts._compiled_of_chunk(chunk, features, 0) is None
        assert exact._compiled_counts(keys) is None


def test_with_reading_off_the_readers_take_the_tokenizer(monkeypatch):
    called = []
    monkeypatch.setattr(reader, "_parse_row", lambda *a, _f=reader._parse_row: called.append(1) or _f(*a))
    data = b"@relation r\n@attribute a numeric\n@data\n1\n2\n"
    for compiled in (True, False):
        with kernels.compiled(compiled, kernels.READING), ArffReader(io.BytesIO(data), name="f") as source:
            assert [chunk.dense_values().tolist() for chunk in source.chunks()] == [[[1.0], [2.0]]]
        assert len(called) == (0 if compiled else 2)
    with kernels.compiled(False, kernels.READING):
        assert csv_format._plain_group([b"1,2", b"3,4"], 2) is None
    assert csv_format._plain_group([b"1,2", b"3,4"], 2) is not None


def test_printed_in_python_formats_every_row_by_the_oracle(monkeypatch):
    called = []
    monkeypatch.setattr(
        oracles, "format_rows_in_python", lambda *a, _f=oracles.format_rows_in_python: called.append(1) or _f(*a)
    )
    schema = Schema("r", (Attribute("a", NUMERIC),))
    texts = []
    for compiled in (True, False):
        with oracles.printer(compiled):
            stream = io.StringIO()
            writer.write_arff(stream, schema, [Chunk(np.array([[1 / 3], [-0.0]]))], False)
            texts.append(stream.getvalue())
        assert len(called) == (0 if compiled else 1)
    assert texts[0] == texts[1] and texts[0].endswith("@data\n0.3333333333333333\n-0\n")
