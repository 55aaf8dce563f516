"""``--digits N`` and ``--float32``: the writer's rounded number formats.

Both the compiled printer (format_rows) and the repr-based oracles.format_numbers_in_python are checked
against oracles that do not share their code: Python's correctly rounded ``'e'`` formatting
for N digits, numpy's shortest float32 text (Dragon4's unique mode) for float32.  Every
text must also be laid out as the exact writer writes the double it reads back as.
"""

from __future__ import annotations

import io

import numpy as np
import pytest

from filterkit import __version__
from filterkit.arff import ArffReader, _speedups
from filterkit.arff.writer import EXACT, NumberFormat, write_arff
from filterkit.formats import FormatOptions, row_writer
from filterkit.schema import Attribute, Chunk, Schema
from oracles import format_numbers_in_python, printer

IRIS = "tests/data/real/iris.arff"


def compiled_texts(values, numbers: NumberFormat) -> list[str]:
    """One dense row of ``values`` through the compiled format_rows."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    indptr = np.array([0, values.size], dtype=np.int64)
    special = np.zeros(values.size, np.uint8)
    text = _speedups.format_rows(
        indptr, np.zeros(0, np.int64), values, special, [], False, numbers.digits or 0, numbers.float32
    )
    return text.decode("ascii").rstrip("\n").split(",")


def both_paths(values, numbers: NumberFormat) -> list[list[str]]:
    return [format_numbers_in_python(values, numbers), compiled_texts(values, numbers)]


def exact_text(value: float) -> str:
    """The exact writer's text of one double."""
    return format_numbers_in_python([value])[0]


def digits_oracle(value: float, digits: int) -> float:
    """The double of value correctly rounded to ``digits`` significant digits; value itself
    when that decimal is beyond the double range."""
    rounded = float(f"{value:.{digits - 1}e}")
    return value if np.isinf(rounded) else rounded


def float32_oracle(value: float) -> float:
    """numpy's shortest text of value's nearest float32, read back as a double."""
    with np.errstate(over="ignore"):
        narrow = np.float32(value)
    if not np.isfinite(narrow):
        return value
    return float(np.format_float_scientific(narrow, unique=True))


def random_doubles(count: int, seed: int) -> np.ndarray:
    generator = np.random.default_rng(seed)
    bits = generator.integers(0, 2**64, count, dtype=np.uint64, endpoint=False).view(np.float64)
    uniform = generator.uniform(-1, 1, count)
    return np.concatenate([bits[np.isfinite(bits)], uniform, uniform * generator.uniform(0.001, 1000, count)])


def assert_matches(values, numbers: NumberFormat, oracle) -> None:
    expected = [oracle(v) for v in values.tolist()]
    for texts in both_paths(values, numbers):
        wrong = [(v, t, e) for v, t, e in zip(values.tolist(), texts, expected) if float(t) != e]
        assert wrong[:5] == [], f"{len(wrong)} of {len(texts)} read back wrong"
        badly_laid_out = [t for t in texts if exact_text(float(t)) != t]
        assert badly_laid_out[:5] == []


def test_digits_round_to_significant_digits_by_hand():
    values = [0.1, 1 / 3, -2 / 3, 123456, 1234567, 1.125, 1.375, 2.5e-7, 99.96, -0.0, 0.0, 7.0]
    for texts in both_paths(values, NumberFormat(digits=3)):
        # 1.125 and 1.375 are exact ties: half to even
        assert texts == [
            "0.1",
            "0.333",
            "-0.667",
            "123000",
            "1230000",
            "1.12",
            "1.38",
            "2.5e-07",
            "100",
            "-0",
            "0",
            "7",
        ]


def test_float32_writes_the_shortest_float32_text_by_hand():
    values = [0.1, 1 / 3, 16777217.0, 123456789.0, 3.4028235e38, 1e39, 1e-50, -1e-50, 0.3, 2.0**-149]
    for texts in both_paths(values, NumberFormat(float32=True)):
        assert texts == [
            "0.1",
            "0.33333334",
            "16777216",  # 2**24 + 1 is no float32: it rounds to even
            "123456790",  # the float32 123456792's shortest text, a whole number written as one
            "3.4028235e+38",
            "1e+39",  # beyond float32's range: written exactly, never as Infinity
            "0",
            "-0",
            "0.3",
            "1e-45",
        ]


def test_special_values_and_the_double_range_stay_as_the_exact_writer_writes_them():
    values = [np.nan, np.inf, -np.inf, 1.7976931348623157e308, 5e-324]
    for numbers in (NumberFormat(digits=1), NumberFormat(digits=4), NumberFormat(float32=True)):
        for texts in both_paths(values, numbers):
            assert texts[:4] == ["?", "Infinity", "-Infinity", "1.7976931348623157e+308"]
    # the largest double rounds to 2e308 at one digit, beyond the range: written exactly
    assert both_paths([5e-324], NumberFormat(digits=1))[0] == ["5e-324"]


def test_digits_17_is_the_exact_format_and_the_default_is_unchanged():
    values = random_doubles(2000, 1)
    exact = format_numbers_in_python(values)
    for texts in both_paths(values, NumberFormat(digits=17)):
        assert texts == exact
    assert NumberFormat(digits=17).exact and EXACT.exact and not NumberFormat(digits=16).exact


@pytest.mark.parametrize("digits", [1, 2, 6, 9, 15, 16])
def test_digits_read_back_as_python_rounds(digits):
    assert_matches(random_doubles(1500, digits), NumberFormat(digits=digits), lambda v: digits_oracle(v, digits))


def test_float32_reads_back_as_numpy_shortest():
    generator = np.random.default_rng(5)
    narrow = generator.integers(0, 2**32, 2500, dtype=np.uint64).astype(np.uint32).view(np.float32)
    values = np.concatenate([narrow[np.isfinite(narrow)].astype(np.float64), random_doubles(400, 6)])
    assert_matches(values, NumberFormat(float32=True), float32_oracle)


@pytest.mark.slow
def test_many_random_values_are_written_alike_by_both_paths():
    values = random_doubles(20_000, 7)
    narrow = np.random.default_rng(8).integers(0, 2**32, 30_000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    for numbers in [NumberFormat(digits=d) for d in (1, 3, 5, 8, 12, 15, 16)]:
        assert compiled_texts(values, numbers) == format_numbers_in_python(values, numbers)
    for sample in (values, narrow[np.isfinite(narrow)].astype(np.float64)):
        assert compiled_texts(sample, NumberFormat(float32=True)) == [
            exact_text(float32_oracle(v)) for v in sample.tolist()
        ]


@pytest.mark.slow
def test_float32_every_power_of_two_and_its_neighbours():
    exponents = np.arange(-149, 128)
    powers = np.ldexp(np.float32(1), exponents).astype(np.float32)
    around = [powers]
    for direction in (0, np.inf):
        with np.errstate(over="ignore"):
            around.append(np.nextafter(powers, np.float32(direction)))
    values = np.concatenate(around).astype(np.float64)
    values = np.concatenate([values, values * 1.0000001, -values])
    values = values[np.isfinite(values)]
    assert compiled_texts(values, NumberFormat(float32=True)) == [
        exact_text(float32_oracle(v)) for v in values.tolist()
    ]
    assert format_numbers_in_python(values, NumberFormat(float32=True)) == [
        exact_text(float32_oracle(v)) for v in values.tolist()
    ]


def number_schema(width: int) -> Schema:
    return Schema("r", tuple(Attribute(f"a{i}", "numeric", declared_type="numeric") for i in range(width)))


@pytest.mark.parametrize("sparse", [True, False])
def test_the_arff_writer_rounds_the_same_on_both_paths(sparse):
    values = np.array([[0.0, 1 / 3, 0.0, 2.0], [np.nan, 0.0, 123456.789, -1e-9]])
    texts = []
    for compiled in (True, False):
        with printer(compiled):
            stream = io.StringIO()
            write_arff(stream, number_schema(4), [Chunk(values)], sparse, numbers=NumberFormat(digits=4))
            texts.append(stream.getvalue().split("@data\n")[1])
    expected = "{1 0.3333,3 2}\n{0 ?,2 123500,3 -1e-09}\n" if sparse else "0,0.3333,0,2\n?,0,123500,-1e-09\n"
    assert texts == [expected, expected]


def test_svmlight_and_csv_writers_round_their_numbers():
    schema = Schema(
        "r",
        (
            Attribute("x", "numeric", declared_type="numeric"),
            Attribute("y", "numeric", declared_type="numeric"),
            Attribute("class", "numeric", declared_type="numeric"),
        ),
    )
    chunk = Chunk(np.array([[1 / 3, 0.0, 2 / 3], [0.0, 1e-7 / 3, 1.0]]))
    numbers = NumberFormat(digits=2)
    svm, csv = io.BytesIO(), io.BytesIO()
    row_writer("svmlight", svm, schema, None, [], "class", FormatOptions(), numbers).write(chunk)
    row_writer("csv", csv, schema, None, [], "class", FormatOptions(), numbers).write(chunk)
    assert svm.getvalue() == b"0.67 1:0.33\n1 2:3.3e-08\n"
    assert csv.getvalue() == b"x,y,class\n0.33,0,0.67\n0,3.3e-08,1\n"


def body(output: bytes) -> list[str]:
    return output.decode().split("@data\n")[1].splitlines()


def test_the_chain_writes_rounded_numbers_and_records_how(run_filterkit):
    exact = run_filterkit(IRIS, "l2")
    rounded = run_filterkit(IRIS, "--digits", "6", "l2")
    narrow = run_filterkit(IRIS, "l2", "--float32")
    assert exact.status == rounded.status == narrow.status == 0
    assert rounded.stdout.decode().splitlines()[0] == f"% filterkit chain: --digits 6 l2 (filterkit {__version__})"
    assert narrow.stdout.decode().splitlines()[0] == f"% filterkit chain: --float32 l2 (filterkit {__version__})"
    assert (
        body(exact.stdout)[0]
        == "0.8037727730153805,0.5516087657948691,0.2206435063179476,0.03152050090256395,Iris-setosa"
    )
    assert body(rounded.stdout)[0] == "0.803773,0.551609,0.220644,0.0315205,Iris-setosa"
    assert body(narrow.stdout)[0] == "0.80377275,0.55160874,0.2206435,0.0315205,Iris-setosa"
    with ArffReader(io.BytesIO(rounded.stdout)) as source:
        assert source.header_comments == (f"filterkit chain: --digits 6 l2 (filterkit {__version__})",)


def test_digits_17_writes_the_default_bytes_provenance_included(run_filterkit):
    assert run_filterkit(IRIS, "--digits", "17", "l2").stdout == run_filterkit(IRIS, "l2").stdout


def test_apply_writes_rounded_numbers(run_filterkit, tmp_path):
    model = tmp_path / "m.json"
    assert run_filterkit("--save-model", model, "-o", tmp_path / "train.arff", IRIS, "l2").status == 0
    applied = run_filterkit("apply", model, IRIS, "--digits", "3")
    assert applied.status == 0
    first_line = applied.stdout.decode().splitlines()[0]
    assert first_line == f"% filterkit apply m.json: --digits 3 l2 (filterkit {__version__})"
    assert body(applied.stdout)[0] == "0.804,0.552,0.221,0.0315,Iris-setosa"


@pytest.mark.parametrize(
    "args, message",
    [
        (["--digits", "0"], "0 is not in the range 1<=x<=17"),
        (["--digits", "18"], "18 is not in the range 1<=x<=17"),
        (["--digits", "3", "--float32"], "give --digits N or --float32, not both"),
    ],
)
def test_rounding_options_are_refused_before_any_work(run_filterkit, args, message, tmp_path):
    output = tmp_path / "out.arff"
    result = run_filterkit(IRIS, *args, "-o", output, "l2")
    assert result.status == 2
    assert message in result.stderr
    assert not output.exists()


@pytest.mark.parametrize("numbers", [EXACT, NumberFormat(digits=3), NumberFormat(float32=True)])
def test_the_csv_and_svmlight_writers_numbers_are_the_arff_writers(numbers):
    from filterkit.arff import writer

    values = np.r_[random_doubles(300, 9), 0.0, -0.0, np.nan, np.inf, -np.inf, 2.0**53, 1e300, 5e-324]
    assert (
        writer.format_numbers(values, numbers)
        == format_numbers_in_python(values, numbers)
        == compiled_texts(values, numbers)
    )
    assert writer.format_numbers([], numbers) == []
