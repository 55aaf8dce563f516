"""``words`` cuts each document once: a run that writes right after its fit renumbers the rows its fitting
pass kept (:meth:`WordVector.accumulate_kept`, :func:`filterkit.kernels.renumber_words`), and must give the
bytes its transform gives (``apply`` of the saved model), whatever the options, the chunk size, or whether
the input is a file or a stream; a plugin stage that keeps its pass is held to the stage contract."""

from __future__ import annotations

import errno
import random
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from chain_helpers import without_comments
from filterkit import sources
from filterkit.errors import FilterkitError
from filterkit.kernels import join_kept_words, renumber_words
from filterkit.plugins import load_plugins
from filterkit.runner import Chain
from filterkit.schema import Chunk
from filterkit.sources import FileSource, KeptChunks
from filterkit.stage import Stage

REAL = Path(__file__).parent / "data" / "real"
WORDS = "alpha beta Gamma delta THE the a épée Straße naïve ΣΑΣ σας".split()

OPTION_SETS = [
    [],
    ["--counts", "--lowercase"],
    ["--counts", "--log-tf", "--idf", "--words-to-keep", "3"],
    ["--ngrams", "1-2", "--lowercase", "--stopwords", "weka"],
    ["--min-df", "2", "--max-df", "0.8", "--counts"],
    ["--hash", "3", "--counts"],  # eight columns: tokens collide, and a row's colliding counts add up
    ["--hash", "4", "--lowercase", "--stopwords", "weka"],
    ["--stemmer", "no-s", "--counts", "--attributes", "first"],
    ["--tokenizer", "alphabetic", "--whole-corpus", "--words-to-keep", "5"],
]


def quoted(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


STEMMER = (
    "from filterkit.hookspecs import hookimpl\n"
    "from filterkit.plugins import Stemmer\n\n\n"
    "@hookimpl\n"
    "def register_stemmers(register):\n"
    "    register(Stemmer('no-s', lambda word: word.removesuffix('s'), 'Drops a final s.'))\n"
)


def documents_file(folder: Path, rows: int = 300, seed: int = 7) -> Path:
    """Two string attributes (titles and texts, non-ASCII, empty and missing ones among them), a number, a
    class of three labels and instance weights: every part a kept row carries."""
    generator = random.Random(seed)
    lines = [
        "@relation docs",
        "@attribute title string",
        "@attribute size numeric",
        "@attribute text string",
        "@attribute class {a,b,c}",
        "@data",
    ]
    for row in range(rows):
        text = " ".join(generator.choice(WORDS) for _ in range(generator.randrange(25)))
        title = "?" if row % 11 == 0 else quoted(" ".join(generator.sample(WORDS, 2)) + ",x.y")
        size = "?" if row % 13 == 0 else str(row % 5)
        label = "?" if row % 17 == 0 else "abc"[row % 3]
        lines.append(f"{title},{size},{quoted(text)},{label},{{{1 + row % 4}}}")
    path = folder / "docs.arff"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("options", OPTION_SETS, ids=" ".join)
@pytest.mark.parametrize("chunk_rows", ["1", "7", "10000"])
def test_a_run_from_the_kept_pass_writes_the_transforms_bytes(run_filterkit, tmp_path, options, chunk_rows):
    data, model = documents_file(tmp_path), tmp_path / "m.json"
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "suffixes.py").write_text(STEMMER)
    fitted = run_filterkit(
        "--chunk-rows", chunk_rows, "--save-model", model, data, "words", *options, plugins_dir=plugins
    )
    assert fitted.status == 0, fitted.stderr
    applied = run_filterkit("apply", model, data, plugins_dir=plugins)
    assert applied.status == 0, applied.stderr
    assert without_comments(fitted.stdout) == without_comments(applied.stdout)
    assert fitted.stdout.count(b"\n{") + fitted.stdout.count(b"\n'") + fitted.stdout.count(b"\n?") >= 300 - 1


@pytest.mark.parametrize("options", [["--counts", "--lowercase", "--ngrams", "1-3"], ["--hash", "10"]], ids=" ".join)
def test_a_real_corpus_read_from_a_stream_gives_the_files_bytes(run_filterkit, tmp_path, options):
    data, model = REAL / "reuters_grain_sample.arff", tmp_path / "m.json"
    fitted = run_filterkit("--save-model", model, data, "words", *options, "l2")
    streamed = run_filterkit("--chunk-rows", "5", "-", "words", *options, "l2", stdin=data.read_bytes())
    applied = run_filterkit("apply", model, data)
    assert fitted.status == streamed.status == applied.status == 0, fitted.stderr + streamed.stderr
    assert fitted.stdout == streamed.stdout
    assert without_comments(fitted.stdout) == without_comments(applied.stdout)
    assert fitted.stdout.count(b"\n{") > 20


def fitted_keeping(stages: list[Stage], data: Path, chunk_rows: int = 50) -> tuple[Chain, KeptChunks]:
    chain, kept = Chain(stages), KeptChunks()
    chain.fit(FileSource(str(data), chunk_rows), keep=kept)
    return chain, kept


def made(name: str, **params) -> Stage:
    return load_plugins().make_stage(name, params)


def test_words_keeps_its_own_form_but_not_character_ngrams(tmp_path):
    data = documents_file(tmp_path)
    chain, kept = fitted_keeping([made("words", counts=True), made("l2")], data)
    assert kept.stage_position == 0 and kept.own_form and kept.rows == 300
    assert [c.n_rows for c, _ in kept.chunks()] == [50] * 6
    out = np.vstack([c.dense_values() for c in chain.transform_kept(kept)])
    kept.close()
    again = np.vstack([c.dense_values() for c in chain.transform(FileSource(str(data)).chunks())])
    assert out.shape == (300, 16) and np.array_equal(out, again, equal_nan=True)
    # character n-grams are not kept: most of a document's hundreds are not kept words
    _, kept = fitted_keeping([made("words", char_ngrams="2-4")], data)
    assert kept.stage_position is None


def test_a_full_temporary_folder_gives_the_same_output_from_the_input(run_filterkit, tmp_path, monkeypatch):
    data = documents_file(tmp_path)
    expected = run_filterkit("--chunk-rows", "40", data, "words", "--counts", "l2")
    saved = []

    def fills_up(spool, chunk, **options):
        if len(saved) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        saved.append(chunk.n_rows)
        return save_chunk(spool, chunk, **options)

    save_chunk = sources._save_chunk
    monkeypatch.setattr(sources, "_save_chunk", fills_up)
    result = run_filterkit("--chunk-rows", "40", data, "words", "--counts", "l2")
    assert saved == [40, 40, 40]
    assert (result.status, result.stderr) == (0, "") and result.stdout == expected.stdout
    assert expected.stdout.count(b"\n{") == 300


def test_kept_chunks_past_their_bound_are_dropped_and_the_input_read_again(tmp_path):
    data = documents_file(tmp_path)
    chain, kept = Chain([made("words", counts=True, ngrams="1-3")]), KeptChunks(input_size=5_000)
    chain.fit(FileSource(str(data), 50), keep=kept)
    assert kept.stage_position is None and kept.rows is None
    with pytest.raises(ValueError, match="one fit"):
        chain.fit(FileSource(str(data), 50), keep=fitted_keeping([made("words")], data)[1])


def test_writing_from_kept_chunks_counts_rows(run_filterkit, tmp_path):
    result = run_filterkit("--progress", documents_file(tmp_path), "words")
    assert result.status == 0
    assert "pass 2/2: writing: 100% of 28.6 kB, 300 rows in" in result.stderr, result.stderr


@pytest.mark.parametrize("n_numbers", [8, 1000])  # rows put in order by a bit per number, or sorted
def test_renumbering_maps_orders_adds_and_leaves_out(n_numbers):
    indptr = np.array([0, 4, 4, 7])
    # row 0: a kept attribute (column 1), then token numbers 2, 0 and 1 of the fit (columns 2+)
    indices = np.array([1, 4, 2, 3, 0, 2, 4])
    data = np.array([9.5, 3.0, 1.0, 2.0, -1.5, 5.0, 6.0])
    table = np.array([7, -1, 7])  # numbers 0 and 2 share column 7 (hashing); number 1 is not kept
    renumbered = renumber_words(indptr, indices, data, 2, table, n_numbers)
    new_indptr, new_indices, new_data = (np.frombuffer(a, t) for a, t in zip(renumbered, (np.int64, np.int64, float)))
    assert new_indptr.tolist() == [0, 2, 2, 4]
    assert new_indices.tolist() == [1, 9, 0, 9]
    assert new_data.tolist() == [9.5, 4.0, -1.5, 11.0]


def test_renumbering_agrees_with_a_python_oracle_on_random_rows():
    """Numbers in one block of 4,096 or in up to five (a row then ordered by bits only if it holds as many
    numbers as there are words of block bits, else sorted)."""
    generator = np.random.default_rng(5)
    for case in range(300):
        first, n_table = int(generator.integers(0, 4)), int(generator.integers(1, 300))
        n_numbers = int(generator.integers(1, 400 if case % 2 else 20_000))
        table = np.where(generator.random(n_table) < 0.3, -1, generator.integers(0, n_numbers, n_table))
        lengths = generator.integers(0, 90, int(generator.integers(1, 12)))
        rows = [
            sorted(generator.choice(first, int(generator.integers(0, first + 1)), replace=False).tolist())
            + (first + generator.integers(0, n_table, length)).tolist()
            for length in lengths
        ]
        data = [generator.integers(1, 6, len(row)).astype(float) for row in rows]
        indptr = np.r_[0, np.cumsum([len(row) for row in rows])]
        renumbered = renumber_words(
            indptr, np.array(sum(rows, []), dtype=np.int64), np.concatenate(data), first, table, n_numbers
        )
        got_indptr, got_indices, got_data = (
            np.frombuffer(a, t) for a, t in zip(renumbered, (np.int64, np.int64, float))
        )
        expected_indices, expected_data, expected_indptr = [], [], [0]
        for row, values in zip(rows, data):
            kept = [(i, v) for i, v in zip(row, values) if i < first]
            sums: dict[int, float] = {}
            for i, v in zip(row, values):
                if i >= first and table[i - first] >= 0:
                    sums[first + int(table[i - first])] = sums.get(first + int(table[i - first]), 0.0) + v
            entries = kept + sorted(sums.items())
            expected_indices += [i for i, _ in entries]
            expected_data += [v for _, v in entries]
            expected_indptr.append(len(expected_indices))
        assert got_indptr.tolist() == expected_indptr
        assert got_indices.tolist() == expected_indices and got_data.tolist() == expected_data


@pytest.mark.parametrize("n_numbers", [8, 2**21])
def test_renumbering_sums_huge_counts_in_floating_point_whichever_way_a_row_is_ordered(n_numbers):
    """1,100 occurrences of 2**53 - 1 in one column: a row ordered by bits (few numbers) summed them in int64,
    past its range; a row sorted (numbers spread wide) in doubles.  Both now sum as Python's float sum does."""
    big = float(2**53 - 1)
    indptr = np.array([0, 1100])
    renumbered = renumber_words(
        indptr, np.full(1100, 2), np.full(1100, big), 2, np.array([5, 0, 1, 2, 3, 4, 6, 7]), n_numbers
    )
    assert np.frombuffer(renumbered[2], float).tolist() == [sum([big] * 1100)]


@pytest.mark.parametrize(
    "indptr, indices, data, table",
    [
        ([1, 2], [2], [1.0], [0]),  # indptr not from 0
        ([0, 3], [2], [1.0], [0]),  # past the entries
        ([0, 1], [-1], [1.0], [0]),  # a negative column
        ([0, 1], [3], [1.0], [0]),  # a number past the table
        ([0, 1], [2], [1.5], [0]),  # occurrences not whole
        ([0, 1], [2], [np.nan], [0]),
        ([0, 1], [2], [2.0**53], [0]),
        ([0, 1], [2], [1.0], [8]),  # a number not below n_numbers
    ],
)
def test_renumbering_refuses_entries_out_of_range(indptr, indices, data, table):
    with pytest.raises(ValueError):
        renumber_words(np.array(indptr), np.array(indices), np.array(data, dtype=float), 2, np.array(table), 8)


def test_renumbering_takes_its_arguments_by_name():
    with pytest.raises(TypeError, match="missing required argument 'indptr'"):
        renumber_words()
    renumbered = renumber_words(
        indptr=np.array([0, 1]), indices=np.array([2]), data=np.array([3.0]), first=2, table=np.array([0]), n_numbers=1
    )
    assert np.frombuffer(renumbered[1], np.int64).tolist() == [2]


def test_renumbering_refuses_arrays_of_other_types():
    good = (np.array([0, 1]), np.array([2]), np.array([1.0]), np.array([0]))
    for position, wrong in enumerate([good[0].astype(np.int32), good[1].astype(float), good[2].astype(np.int64)]):
        given = list(good)
        given[position] = wrong
        with pytest.raises(TypeError):
            renumber_words(*given[:3], 2, given[3], 8)


def joined(kept, indptr, ids, data) -> tuple[list, ...]:
    arrays = join_kept_words(kept, indptr, ids, data)
    return tuple(np.frombuffer(a, t).tolist() for a, t in zip(arrays, (float, np.int64, np.int64)))


def test_joining_kept_values_and_words_agrees_with_scipy_on_random_rows():
    """scipy's hstack of the kept block and the words' block, zeros left out (NaN is not zero, -0.0 is), the
    words' ids and counts read as columns of count's (id, count) pairs, or their values as float64."""
    generator = np.random.default_rng(7)
    for _ in range(300):
        n_rows, n_kept = int(generator.integers(0, 9)), int(generator.integers(0, 4))
        kept = generator.choice([0.0, -0.0, 1.5, -2.0, np.nan, np.inf], (n_rows, n_kept))
        lengths = generator.integers(0, 6, n_rows)
        indptr = np.r_[0, np.cumsum(lengths)].astype(np.int64)
        pairs = np.stack([generator.integers(0, 50, indptr[-1]), generator.integers(1, 9, indptr[-1])], axis=1)
        words = sp.csr_matrix((pairs[:, 1].astype(float), pairs[:, 0], indptr), shape=(n_rows, 50))
        expected = sp.hstack([sp.csr_matrix(np.where(np.isnan(kept), 7.0, kept)), words], format="csr")
        expected.data[expected.indices < n_kept] = kept[kept != 0]  # the NaN back in its places, in row order
        data = pairs[:, 1] if generator.random() < 0.5 else pairs[:, 1] / 4  # counts, or a transform's values
        expected.data[expected.indices >= n_kept] = data
        values, columns, row_starts = joined(kept, indptr, pairs[:, 0], data)
        assert row_starts == expected.indptr.tolist() and columns == expected.indices.tolist()
        assert np.array_equal(values, expected.data, equal_nan=True)
        assert np.signbit(values).tolist() == np.signbit(expected.data).tolist()


@pytest.mark.parametrize(
    "kept, indptr, ids, counts",
    [
        (np.zeros((2, 1)), [0, 1], [3], [1]),  # a start short for the rows
        (np.zeros((1, 1)), [1, 1], [3], [1]),  # indptr not from 0
        (np.zeros((1, 1)), [0, 2], [3], [1]),  # past the words
        (np.zeros((2, 1)), [0, 2, 1], [3], [1]),  # not ascending
        (np.zeros((1, 1)), [0, 1], [-3], [1]),  # a negative id
        (np.zeros((1, 1)), [0, 1], [3, 4], [1]),  # ids and counts of two lengths
    ],
)
def test_joining_refuses_rows_out_of_range(kept, indptr, ids, counts):
    with pytest.raises(ValueError):
        join_kept_words(kept, np.array(indptr), np.array(ids), np.array(counts))


def test_joining_more_words_than_memory_holds_is_a_memory_error():
    """Columns of stride 0 may be as long as an int64 counts: their output's bytes would pass Py_ssize_t."""
    endless = np.lib.stride_tricks.as_strided(np.zeros(1, dtype=np.int64), shape=(2**60 - 1,), strides=(0,))
    with pytest.raises(MemoryError):  # with the kept value, 2**63 bytes
        join_kept_words(np.ones((1, 1)), np.array([0, 2**60 - 1]), endless, endless)


@pytest.mark.parametrize(
    "position, wrong, argument",
    [
        (0, np.zeros(1), "kept"),  # not two-dimensional
        (0, np.zeros((1, 1), dtype=np.int64), "kept"),
        (1, np.array([0, 1], dtype=np.int32), "indptr"),
        (2, np.array([3.0]), "ids"),
        (3, np.array([1], dtype=np.float32), "data"),  # int64 or float64
    ],
)
def test_joining_refuses_arrays_of_other_types_naming_them(position, wrong, argument):
    given = [np.zeros((1, 1)), np.array([0, 1]), np.array([3]), np.array([1])]
    given[position] = wrong
    with pytest.raises(TypeError, match=f"^join_kept: {argument} must be an aligned"):
        join_kept_words(*given)


def test_a_sparse_block_of_kept_values_joins_as_a_dense_one():
    kept = np.array([[0.0, 2.0], [np.nan, 0.0], [0.0, 0.0]])
    indptr, ids = np.array([0, 2, 2, 3]), np.array([4, 1, 0])
    for data in (np.array([2, 1, 5]), np.array([0.5, 1.0, 2.5])):
        dense = words_module()._kept_then_words(kept, indptr, ids, data)
        sparse = words_module()._kept_then_words(sp.csr_matrix(kept), indptr, ids, data)
        for a, b in zip(dense, sparse):
            assert np.array_equal(a, b, equal_nan=True) and a.dtype == b.dtype
        assert dense[1].tolist() == [1, 6, 3, 0, 2] and dense[2].tolist() == [0, 3, 4, 5]
        assert np.array_equal(dense[0], [2.0, data[0], data[1], np.nan, data[2]], equal_nan=True)


def words_module():
    import filterkit_plugins.words

    return filterkit_plugins.words


class KeepingBadly(Stage):
    """A stage that keeps its pass, and whose kept form is wrong in the way ``fault`` says."""

    name = "keeping-badly"
    learns = keeps_fit_pass = True

    def __init__(self, fault: str):
        super().__init__()
        self.fault = fault

    def new_statistics(self):
        return 0

    def accumulate_kept(self, statistics, chunk):
        if self.fault == "rows":
            return statistics, Chunk(chunk.dense_values()[1:], {}, None)
        if self.fault == "tuple":
            return chunk
        if self.fault == "bytes":
            return statistics, Chunk(chunk.dense_values(), {0: [b"x"] * chunk.n_rows}, None)
        if self.fault == "objects":
            return statistics, Chunk(chunk.dense_values().astype(object), {}, None)
        return statistics, chunk

    def finalize(self, statistics):
        pass

    def output_schema(self):
        return self.input_schema

    def transform(self, chunk):
        return chunk

    def transform_kept(self, kept):
        values = kept.dense_values().copy()
        values[:, -1] = 0  # the class column
        return Chunk(values, kept.text, kept.weights)


@pytest.mark.parametrize(
    "fault, message",
    [
        ("rows", "accumulate_kept kept 49 rows of 50"),
        ("tuple", "accumulate_kept must return its statistics and a filterkit Chunk"),
        ("class", "it changed the class column's values"),
        ("bytes", "failed during fit: TypeError: Object of type bytes is not JSON serializable"),
        ("objects", "failed during fit: TypeError: a chunk of Python objects cannot be kept"),
    ],
)
def test_a_stage_that_keeps_its_pass_is_held_to_the_contract(fault, message):
    with pytest.raises(FilterkitError, match=f"stage 'keeping-badly' .*{message}"):
        chain, kept = fitted_keeping([KeepingBadly(fault)], REAL / "iris.arff")
        list(chain.transform_kept(kept))


def test_kept_arrays_are_narrowed_only_where_nothing_is_lost(tmp_path):
    cases = [
        (np.array([0, 2**31 - 1, -(2**31)]), np.int32),
        (np.array([0, 2**31]), np.int64),  # past int32
        (np.array([0, 2**16 - 1]), np.uint16),  # a sparse row's indices under 65,536 columns
        (np.array([0, 2**16]), np.int32),
        (np.array([-1, 5]), np.int32),
        (np.array([], dtype=np.int64), np.int32),
        (np.array([0.0, 1.0, 255.0]), np.uint8),  # a word's counts
        (np.array([1.0, 256.0]), np.float32),
        (np.array([-0.0, 1.0]), np.float32),  # -0.0 would come back as 0.0 from a byte
        (np.array([1.0] * 64 + [-0.0]), np.float32),  # past the first 64 values looked at
        (np.array([1.0] * 64 + [300.0]), np.float32),
        (np.array([1.0] * 64 + [np.nan]), np.float32),
        (np.array([1.0] * 64 + [2.5]), np.float32),
        (np.array([1.0, 3.0, np.nan, -0.0, np.inf]), np.float32),
        (np.array([0.1]), np.float64),  # not a float32
        (np.array([5e-324]), np.float64),  # a subnormal float32 cannot hold
        (np.array([1.0, 1e300, -1e300]), np.float64),  # past float32's range, without a warning
        (np.array([7], dtype=np.uint32), np.uint32),
        (np.array([0.5, 2.0], dtype=np.float32), np.float32),  # already narrow: read back as it was, not widened
        (np.array([3, -4], dtype=np.int32), np.int32),
    ]
    for array, saved_as in cases:
        assert sources._narrowed(array).dtype == saved_as
        # a chunk of these values and these weights, through the kept file and back
        chunk = Chunk(array.reshape(-1, 1), weights=array)
        with open(tmp_path / "kept.chunks", "w+b") as spool:
            sources._save_chunk(spool, chunk, narrow=True)
            spool.seek(0)
            back, no_class = sources._load_chunk(spool)
        assert no_class is None
        for read, given in ((back.values, chunk.values), (back.weights, array)):
            assert read.dtype == given.dtype and np.array_equal(read, given, equal_nan=True)
            assert np.signbit(read).tolist() == np.signbit(given).tolist()
    # 0-d (a hostile review of 7151dc0: the look at the first 64 values failed on it), and a dense chunk, looked
    # at by its first 64 values, not its first 64 rows
    assert sources._narrowed(np.array(2.0)).dtype == np.uint8 and sources._narrowed(np.array(2.5)).dtype == np.float32
    dense = np.full((3, 40), 3.0)
    dense[2, 39] = -0.0
    assert sources._narrowed(dense[:2]).dtype == np.uint8 and sources._narrowed(dense).dtype == np.float32
    with open(tmp_path / "dense.chunks", "w+b") as spool:
        sources._save_chunk(spool, Chunk(dense), narrow=True)
        spool.seek(0)
        back, _ = sources._load_chunk(spool)
    assert back.values.dtype == np.float64 and back.values.tobytes() == dense.tobytes()
    signalling = np.array([0x7FF0000000000001], dtype=np.uint64).view(np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning reaches the terminal (numpy's for casting it was one)
        assert sources._narrowed(signalling).dtype == np.float32
