"""The compiled parsers (filterkit/arff/_speedups.c) and the tokenizer read every file identically.

Each file is read both ways (the second with ``kernels.compiled(False, kernels.READING)``: by the
tokenizer), with several chunk sizes, and must give the same chunks and, for files meant to be
rejected, the same error and line.  Files are also written both ways (format_rows and
oracles.format_rows_in_python), and format_rows's own shortest-repr formatter is compared with repr
on millions of doubles.
"""

from __future__ import annotations

import io
import math
import pickle

import numpy as np
import pytest

from arff_helpers import CONFORMANCE, REAL_FILES, conformance_files, valid_files
from filterkit import kernels
from filterkit.arff import ArffReader, writer
from filterkit.arff import _speedups as speedups
from filterkit.errors import ArffError
from filterkit.formats.csv_writer import CsvWriter
from filterkit.schema import NOMINAL, NUMERIC, STRING, Attribute, Chunk, Schema
from oracles import format_numbers_in_python, printer


def read_both_ways(data: bytes, chunk_rows: int):
    """The file read by the compiled parsers, then by the tokenizer alone."""
    results = []
    for compiled in (True, False):
        with kernels.compiled(compiled, kernels.READING):
            try:
                with ArffReader(io.BytesIO(data), name="f", chunk_rows=chunk_rows) as source:
                    results.append(("ok", source.schema, list(source.chunks())))
            except ArffError as error:
                results.append(("error", str(error), None))
    return results


def assert_identical(first, second):
    assert first[0] == second[0]
    if first[0] == "error":
        assert first[1] == second[1]
        return
    assert first[1] == second[1]
    assert len(first[2]) == len(second[2])
    for a, b in zip(first[2], second[2]):
        assert a.is_sparse == b.is_sparse
        if a.is_sparse:  # the same stored values where: the same dense rows, without making them
            assert a.values.shape == b.values.shape
            np.testing.assert_array_equal(a.values.indices, b.values.indices)
            np.testing.assert_array_equal(a.values.indptr, b.values.indptr)
            values = a.values.data, b.values.data
        else:
            values = a.dense_values(), b.dense_values()
        np.testing.assert_array_equal(*values)
        assert np.array_equal(np.signbit(values[0]), np.signbit(values[1]))
        assert a.text == b.text
        assert (a.weights is None) == (b.weights is None)


@pytest.mark.slow
@pytest.mark.parametrize("path", REAL_FILES, ids=lambda p: p.name)
@pytest.mark.parametrize("chunk_rows", [1, 97, 10_000])
def test_real_files_read_identically(path, chunk_rows):
    assert_identical(*read_both_ways(path.read_bytes(), chunk_rows))


@pytest.mark.parametrize("name", conformance_files())
def test_conformance_files_read_or_fail_identically(name):
    assert_identical(*read_both_ways((CONFORMANCE / name).read_bytes(), 3))


TRICKY_NUMBERS = [
    "1e5",
    "-0",
    "+.5",
    ".5e-3",
    "00012",
    "1e400",
    "-1e400",
    "4.9e-324",
    "2.2250738585072011e-308",
    "0.1",
    "123456789012345678901234567890",
    "1.7976931348623157e308",
    "1e-400",
    "1.5e",
    "--1",
    "1+2",
    ".",
    "-",
    "1.2.3",
    "e5",
    "+-1",
    "1e+5",
    "9" * 70,
    "0." + "3" * 70,
    "123456789012345",
    "1234567890123456",
    "9007199254740993",
    "0.000000000000000000001",
    "0.0000000000000000000001",
    "0.1000000000000000055511151231257827",
    "000.000",
    "-.0",
    "5.",
    "+0.0",
]


@pytest.mark.slow
def test_random_decimals_parse_exactly_as_python_does(monkeypatch):
    generator = np.random.default_rng(11)
    tokens = []
    for _ in range(20_000):
        whole = "".join(generator.choice(list("0123456789"), generator.integers(0, 12)))
        fraction = "".join(generator.choice(list("0123456789"), generator.integers(0, 14)))
        sign = generator.choice(["", "-", "+"])
        token = sign + (whole or "0") + ("." + fraction if fraction or generator.random() < 0.2 else "")
        tokens.append(token)
    header = "@relation r\n@attribute a numeric\n@data\n"
    results = read_both_ways((header + "\n".join(tokens) + "\n").encode(), 5000)
    assert_identical(*results)
    values = np.concatenate([chunk.dense_values()[:, 0] for chunk in results[0][2]])
    assert values.tolist() == [float(t) for t in tokens]
    assert np.array_equal(np.signbit(values), np.signbit([float(t) for t in tokens]))


@pytest.mark.parametrize("token", TRICKY_NUMBERS)
@pytest.mark.parametrize("sparse", [False, True])
def test_awkward_numbers_parse_or_fail_identically(token, sparse):
    header = "@relation r\n@attribute a numeric\n@attribute b numeric\n@data\n"
    row = f"{{0 {token},1 2}}\n" if sparse else f"{token},2\n"
    results = read_both_ways((header + "1,3\n" * (not sparse) + row).encode(), 10)
    assert_identical(*results)
    if results[0][0] == "ok":
        assert results[0][2][0].dense_values()[-1, 0] == float(token)


# Sparse rows the compiled CSR parser takes, and rows it must leave to the general path
# (which then reads them, or fails with the same error and line, as the tokenizer alone).
SPARSE_ROWS = [
    "{0 1,2 x,3 'a b',4 2020-01-02}",
    "{}",
    "{ 1 5 , 2 7 }",
    "{1 5 2 7}",
    "{1,5,2,7}",
    "{1\t5,2\t?}",
    "{0 y,1 0,2 ?}",
    "{03 4}",
    "{1 -0}",
    "{1 1e5,2 -3.25e-2}",
    "{2 1,1 3}",
    "{1 1,1 2}",
    "{5 1}",
    "{1}",
    "{1 2,3}",
    "{1.0 2}",
    "{+1 2}",
    "{1e0 2}",
    "{-1 2}",
    "{1 2}, {3}",
    "{1 2},{0.5}",
    "{1 2} {3}",
    "{1 0x1F}",
    "{1 2 % a comment}",
    "{1 2}}",
    "{{1 2}",
    "{1 z}",
    "{0 q}",
    "{1 1.5e}",
    "{1 " + "9" * 80 + "}",
    "{4 'x'}",
    "{4 not-a-date}",
    "{2 x,2 x}",
    "{4 2020-01-02,2 text}",
    "{4 2020-01-03}",
    "{4 2020-13-45}",
    "{0 1-2}",
    "{0 2}",
    "{2 12}",
    "{0 ?,4 ?}",
]


@pytest.mark.parametrize("row", SPARSE_ROWS)
def test_sparse_rows_read_or_fail_identically(row):
    header = (
        "@relation r\n@attribute c {x,y}\n@attribute a numeric\n@attribute s string\n"
        "@attribute b numeric\n@attribute d date yyyy-MM-dd\n@data\n"
    )
    data = header + "{1 2}\n" + row + "\n" + "{0 y}\n"
    for chunk_rows in (1, 10):
        assert_identical(*read_both_ways(data.encode(), chunk_rows))


def test_the_compiled_sparse_parser_takes_plain_rows_and_declines_others():
    flags = bytes([1, 0, 1, 0])
    *arrays, strings = speedups.parse_sparse_rows(b"{0 x,1 2.5}\n{}\n{1 ?,2 'a\\'b',3 7}", 3, 4, flags)
    indptr, indices, values, entries, rows, starts, ends, quoted = (
        np.frombuffer(raw, dtype) for raw, dtype in zip(arrays, (np.int64, np.int64, np.float64) + (np.int64,) * 5)
    )
    assert indptr.tolist() == [0, 2, 2, 5]
    assert indices.tolist() == [0, 1, 1, 2, 3]
    assert values.tolist() == [0.0, 2.5, 0.0, 0.0, 7.0]
    assert entries.tolist() == [0, 2, 3] and rows.tolist() == [0, 2, 2] and quoted.tolist() == [0, 0, 1]
    # "x" and "?" in the text, the quoted value's unescaped bytes in C's own buffer
    assert [(s, e) for s, e in zip(starts.tolist(), ends.tolist())] == [(3, 4), (18, 19), (0, 3)]
    assert strings == ["a'b"]
    assert speedups.parse_sparse_rows(b"{1 2,0 3}", 1, 4, flags) is None
    assert speedups.parse_sparse_rows(b"{1 2},{3}", 1, 4, flags) is None
    assert speedups.parse_sparse_rows(b"{1 'a'b}", 1, 4, flags) is False
    assert speedups.parse_sparse_rows(b"{1 '\xff'}", 1, 4, flags) is False


def write_both_ways(schema, chunks, sparse) -> list[str]:
    """The chunks written by the compiled format_rows, then by oracles.format_rows_in_python."""
    texts = []
    for compiled in (True, False):
        with printer(compiled):
            stream = io.StringIO()
            writer.write_arff(stream, schema, chunks, sparse)
            texts.append(stream.getvalue())
    return texts


LABELLED = Schema(
    "r",
    (
        Attribute("c", NOMINAL, ("a b", "é", "?", "x'y", "plain")),
        Attribute("n", NUMERIC),
        Attribute("s", STRING),
        Attribute("d", NOMINAL, ("0", "1")),
    ),
)


def csv_both_ways(schema, chunk) -> list[bytes]:
    """The chunk written by the CSV writer with the compiled printer, then with oracles.format_rows_in_python."""
    written = []
    for compiled in (True, False):
        with printer(compiled):
            stream = io.BytesIO()
            CsvWriter(stream, schema).write(chunk)
            written.append(stream.getvalue())
    return written


@pytest.mark.parametrize("sparse", [True, False], ids=["sparse", "dense"])
def test_labels_written_by_the_compiled_printer_are_the_python_writers(sparse):
    """Labels that need quotes, a label "?", missing labels and a first label (code 0, left out of a sparse
    row), in the ARFF writer and in the CSV writer (whose missing value is an empty cell)."""
    values = np.array(
        [[0, 1.5, 0, 1], [1, 0, 0, 0], [2, np.nan, 0, np.nan], [3, 2, 0, 1], [np.nan, 0, 0, 0], [4, 0, 0, 1]]
    )
    chunk = Chunk(values, {2: ["t", None, "u v", "", None, "w"]})
    compiled, python = write_both_ways(LABELLED, [chunk], sparse)
    assert compiled == python
    assert "'a b'" in compiled and "'é'" not in compiled and "'?'" in compiled and "'x\\'y'" in compiled
    assert ("{0 '?',1 ?,2 'u v',3 ?}" if sparse else "'?',?,'u v',?") in compiled
    compiled_csv, python_csv = csv_both_ways(LABELLED, chunk)
    assert compiled_csv == python_csv
    assert compiled_csv.splitlines()[3:6] == [b'"?",,u v,', b'x\'y,2,"",1', b',0,"",0']


@pytest.mark.parametrize("sparse", [True, False], ids=["sparse", "dense"])
def test_codes_outside_a_columns_labels_are_written_as_the_python_writer_indexes_them(sparse):
    """A column declared {} holds 0 where a sparse row leaves it out: its missing text, as the Python printer's
    labels-then-missing array gives it, and so do codes -1 and len(labels) (a review found the compiled printer
    raising there); in the ARFF and CSV writers."""
    schema = Schema("r", (Attribute("e", NOMINAL, ()), Attribute("c", NOMINAL, ("a", "b"))))
    chunk = Chunk(np.array([[0.0, 2.0], [0.0, -1.0], [np.nan, -2.0], [-1.0, 1.9]]), {})
    compiled, python = write_both_ways(schema, [chunk], sparse)
    assert compiled == python
    assert compiled.endswith("@data\n{1 ?}\n{1 ?}\n{0 ?,1 b}\n{0 ?,1 b}\n" if sparse else "@data\n?,?\n?,?\n?,b\n?,b\n")
    assert csv_both_ways(schema, chunk) == [b"e,c\n,\n,\n,b\n,b\n"] * 2


def test_a_header_read_pickles_with_its_label_table():
    """The reader's known header (its columns hold the compiled label table) pickles, as before the table."""
    data = b"@relation r\n@attribute c {x,y}\n@attribute n numeric\n@data\ny,1\nx,2\n"
    with ArffReader(io.BytesIO(data), name="f") as source:
        header = pickle.loads(pickle.dumps(source.header))
    with ArffReader(io.BytesIO(data), name="f", known_header=header) as source:
        assert [chunk.dense_values().tolist() for chunk in source.chunks()] == [[[1.0, 1.0], [0.0, 2.0]]]


def test_a_label_entry_needs_a_code_of_its_column():
    labels = speedups.Labels(np.array([1, 1, 1], np.int64), [b"a", b"bb", b"?"], np.zeros(3))
    row = np.array([0, 2], np.int64)

    def formatted(columns, values):
        flags = np.full(len(values), 2, np.uint8)
        return speedups.format_rows(
            row, np.array(columns, np.int64), np.array(values), flags, [], True, 0, False, None, None, labels
        )

    assert formatted([1, 1], [1.0, np.nan]) == b"{1 bb,1 ?}\n"
    assert formatted([1, 1], [-3.0, 2.5]) == b"{1 a,1 ?}\n"  # numpy's indexing of the Python printer's texts
    for columns, values in (([1, 1], [1.0, 3.0]), ([1, 1], [-4.0, 0.0]), ([0, 1], [0.0, 0.0]), ([1, 1], [np.inf, 0])):
        with pytest.raises(ValueError, match="format_rows: a "):
            formatted(columns, values)


@pytest.mark.parametrize("sparse", [True, False, None], ids=["sparse", "dense", "as-read"])
@pytest.mark.parametrize("name", valid_files())
def test_conformance_files_are_written_identically(name, sparse):
    with ArffReader(CONFORMANCE / name) as source:
        schema, chunks = source.schema, list(source.chunks())
    compiled, python = write_both_ways(schema, chunks, sparse)
    assert compiled == python


@pytest.mark.slow
@pytest.mark.parametrize("path", REAL_FILES, ids=lambda p: p.name)
def test_real_files_are_written_identically(path):
    # Two chunks each way: 300 rows sparse; dense, at most 200,000 values (the narrow files' 300 rows,
    # oh0's 62 and grain_wc's 14 of 13,028 values: the Python oracle formats every zero).
    with ArffReader(path, chunk_rows=150) as source:
        schema, chunks = source.schema, list(source.chunks())[:2]
    dense_rows = min(150, 100_000 // len(schema))
    with ArffReader(path, chunk_rows=dense_rows) as source:
        dense_chunks = list(source.chunks())[:2]
    for sparse, written in ((True, chunks), (False, dense_chunks)):
        compiled, python = write_both_ways(schema, written, sparse)
        assert compiled == python


def test_awkward_values_are_written_identically(monkeypatch):
    from filterkit.schema import Attribute, Chunk, Schema

    values = np.array(
        [
            [
                0.1,
                -0.0,
                np.nan,
                np.inf,
                -np.inf,
                2.0**53,
                2.0**53 - 1,
                -(2.0**53) + 1,
                1e-300,
                5e-324,
                1e16,
                123.456,
                -7.0,
                0.0,
            ]
        ]
    )
    schema = Schema("r", tuple(Attribute(f"a{i}", "numeric", declared_type="numeric") for i in range(values.shape[1])))
    for sparse in (True, False):
        compiled, python = write_both_ways(schema, [Chunk(values)], sparse)
        assert compiled == python
    assert (
        "0.1,-0,?,Infinity,-Infinity,9007199254740992.0,9007199254740991,-9007199254740991,1e-300,5e-324,1e+16,123.456,-7,0"
        in compiled
    )


@pytest.mark.parametrize("sparse", [True, False])
@pytest.mark.parametrize("numbers", [writer.EXACT, writer.NumberFormat(digits=3), writer.NumberFormat(float32=True)])
def test_weighted_rows_are_written_identically_with_their_weights_exact(sparse, numbers):
    from filterkit.schema import Attribute, Chunk, Schema

    schema = Schema("r", (Attribute("a", "numeric"), Attribute("b", "numeric")))
    values = np.array([[1 / 3, 0.0], [0.0, 2.0], [np.nan, -0.0], [5e-324, 1e300], [1.0, 1.0]])
    weights = np.array([1.0, 1 / 3, 0.0, 2.0, 1e300])
    texts = []
    for compiled in (True, False):
        with printer(compiled):
            stream = io.BytesIO()
            writer.write_arff(stream, schema, [Chunk(values, {}, weights)], sparse, numbers=numbers)
            texts.append(stream.getvalue().split(b"@data\n")[1])
    assert texts[0] == texts[1]
    rows = texts[0].decode().splitlines()
    assert " {" not in rows[0]
    assert [row[row.index(" {") :] for row in rows[1:]] == [" {0.3333333333333333}", " {0}", " {2}", " {1e+300}"]


def numbers_written_both_ways(values) -> tuple[list[str], list[str]]:
    """One dense row of ``values`` through format_rows, and the Python path's texts (repr)."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    indptr = np.array([0, values.size], dtype=np.int64)
    compiled = speedups.format_rows(indptr, np.zeros(0, np.int64), values, np.zeros(values.size, np.uint8), [], False)
    return compiled.decode("ascii").rstrip("\n").split(","), format_numbers_in_python(values)


def assert_numbers_written_identically(values):
    compiled, python = numbers_written_both_ways(values)
    assert len(compiled) == len(python)
    mismatches = [(c, p) for c, p in zip(compiled, python) if c != p]
    assert mismatches[:10] == [], f"{len(mismatches)} of {len(python)} differ"


def neighbours(values, steps=2) -> np.ndarray:
    """values and the doubles up to ``steps`` ulps either side of each, both signs."""
    values = np.asarray(values, dtype=np.float64)
    around = [values]
    for direction in (0.0, np.inf):
        step = values
        for _ in range(steps):
            with np.errstate(over="ignore"):  # the largest double's upper neighbour is inf (left out later)
                step = np.nextafter(step, direction)
            around.append(step)
    found = np.concatenate(around)
    return np.concatenate([found, -found])


@pytest.mark.slow
def test_random_bit_patterns_are_written_as_repr():
    # Every exponent, both signs, subnormals; NaN and infinities are left to the other tests.
    bits = np.random.default_rng(12).integers(0, 2**64, 250_000, dtype=np.uint64, endpoint=False)
    values = bits.view(np.float64)
    assert_numbers_written_identically(values[np.isfinite(values)])


@pytest.mark.slow
def test_values_like_normalized_rows_are_written_as_repr():
    generator = np.random.default_rng(13)
    uniform = generator.uniform(-1, 1, 50_000)
    scale = generator.uniform(0.001, 100, 50_000)
    counts = generator.poisson(3, 50_000) + 1.0
    assert_numbers_written_identically(
        np.concatenate([uniform, uniform * scale, uniform / scale, counts / np.sqrt(scale * 31), uniform * 1e-3])
    )


def near_integer_when_scaled() -> list[float]:
    """Doubles x = m * 2**e for which x, or a boundary (2m ± 1) * 2**(e-1) of the interval that
    reads back as x, times 10**k (the scale numbers.c picks) lies within 2**-40 of an integer
    without being one: the compiled formatter leaves these to Python."""
    from filterkit.arff.make_powers_of_ten import TARGET_DIGITS, floor_log10_pow2

    found = []
    for e in range(-1074, 972):
        k = TARGET_DIGITS - floor_log10_pow2(e + 52)
        bits = -(e + k)  # x * 10**k = m * 5**k / 2**bits
        if k < 0 or not 41 <= bits <= 52:
            continue
        inverse = pow(5**k, -1, 2 ** (bits + 1))
        for residue in (inverse, -inverse):  # just above or just below an integer
            # m * 5**k, or (2m + 1) * 5**k, or (2m - 1) * 5**k is residue * 5**k = ±1 modulo 2**bits
            # (or 2**(bits + 1)), and stays so when 2**52 is added to m
            for m in (residue % 2**bits, (residue % 2 ** (bits + 1) - 1) // 2, (residue % 2 ** (bits + 1) + 1) // 2):
                found.append(math.ldexp(m + 2**52, e))
    return found


@pytest.mark.slow
def test_edge_doubles_are_written_as_repr():
    generator = np.random.default_rng(14)
    powers_of_two = np.ldexp(1.0, np.arange(-1074, 1024))
    powers_of_ten = np.array([float(f"1e{e}") for e in range(-323, 309)])
    subnormals = np.concatenate(
        [np.arange(1, 2000) * 5e-324]  # a few significant bits: many shortest candidates
        + [(generator.integers(2 ** (b - 1), 2**b, 200) * 5e-324) for b in range(1, 53)]  # every bit length
    )
    named = [
        5e-324,
        2.2250738585072014e-308,
        2.2250738585072009e-308,
        1.7976931348623157e308,
        2.0**53,
        2.0**54,
        1e15,
        1e16,
        1e17,
        1e18,
        1e19,
        1e20,
        1e22,
        1e23,
        0.0001,
        0.00001,
        0.1,
        0.2,
        0.3,
        1 / 3,
        2 / 3,
        0.5,
        2.5,
        123456789012345.6,
        1234567890123456.7,
        9999999999999998.0,
        0.1 + 0.2,
        562949953421311.25,
    ]
    digits = generator.integers(1, 16, 30_000)
    short_decimals = [
        float(f"{generator.integers(0, 10**d)}e{e}") for d, e in zip(digits, generator.integers(-330, 310, 30_000))
    ]
    large_integers = np.concatenate([generator.integers(2**53, 2**62, 20_000).astype(float), np.arange(1, 2000) * 1e16])
    dyadic = generator.integers(1, 2**20, 20_000) / 2.0 ** generator.integers(1, 60, 20_000)  # 0.5, 0.375, ...
    values = np.concatenate(
        [
            neighbours(powers_of_two),
            neighbours(powers_of_ten),
            neighbours(subnormals, 1),
            neighbours(named, 4),
            neighbours(short_decimals, 1),
            neighbours(large_integers, 1),
            neighbours(dyadic, 1),
            neighbours(near_integer_when_scaled(), 1),
        ]
    )
    assert_numbers_written_identically(values[(values != 0) & np.isfinite(values)])


def test_powers_of_ten_header_is_what_its_generator_writes():
    from filterkit.arff import make_powers_of_ten

    assert make_powers_of_ten.HEADER.read_text() == make_powers_of_ten.header_text()


@pytest.mark.parametrize("sparse", [False, True])
def test_numbers_at_the_edges_of_the_exact_case_read_as_float_reads_them(sparse):
    from test_lines_compiled import EDGE_NUMBERS

    header = "@relation r\n" + "".join(f"@attribute a{i} numeric\n" for i in range(len(EDGE_NUMBERS))) + "@data\n"
    if sparse:
        row = "{" + ",".join(f"{i} {number}" for i, number in enumerate(EDGE_NUMBERS)) + "}"
    else:
        row = ",".join(EDGE_NUMBERS)
    with ArffReader(io.BytesIO((header + row + "\n").encode())) as reader:
        chunk = reader.read_all()
    expected = np.array([float(number) for number in EDGE_NUMBERS])
    if sparse:  # a zero is not stored, negative or not
        assert chunk.values.toarray()[0].tolist() == expected.tolist()
    else:
        assert np.asarray(chunk.values)[0].tobytes() == expected.tobytes()
