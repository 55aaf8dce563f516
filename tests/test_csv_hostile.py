"""CSV under hostile input (issue 72): a wide header and crafted values take time that grows with the input, not
with its square or with the values' shared hash bits (item 8); output that would read back as other values is
refused (item 6)."""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

import pytest

from chain_helpers import ComparedName
from filterkit import kernels
from filterkit.formats import csv as csv_format
from filterkit.running import open_source
from filterkit.schema import NUMERIC, Attribute, Schema

sys.path.insert(0, str(Path(__file__).parent))
from test_words_hostile import fnv_colliding_words, fnv_low_bits  # noqa: E402


def least_time(work, rounds: int = 3) -> float:
    """The least CPU time of ``rounds`` calls of ``work``."""
    times = []
    for _ in range(rounds):
        started = time.process_time()
        work()
        times.append(time.process_time() - started)
    return min(times)


def test_a_wide_header_s_names_are_compared_a_few_times_each(tmp_path, monkeypatch):
    # the duplicate check compared each name with every name before it: 80,000 columns took 43 s
    columns = 10_000
    path = tmp_path / "wide.csv"
    path.write_text(",".join(f"a{k}" for k in range(columns)) + "\n" + ",".join(["1"] * columns) + "\n")
    fields = csv_format._checked_fields

    def compared_names(line, width, name, number):  # the header's names (width None) as counting ones
        found = fields(line, width, name, number)
        return found if width is not None else [(ComparedName(text), quoted) for text, quoted in found]

    monkeypatch.setattr(csv_format, "_checked_fields", compared_names)
    ComparedName.made = 0
    with open_source(str(path), 1000, needs_passes=False) as source:
        assert len(source.schema.attributes) == columns
        list(source.chunks())
    assert ComparedName.made <= 4 * columns, ComparedName.made  # a scan of the names before each: columns² / 2


def test_a_model_s_header_is_matched_to_a_wide_file_s_columns_in_linear_time():
    columns = 10_000
    names = [ComparedName(f"a{k}") for k in range(columns)]
    schema = Schema("wide", tuple(Attribute(ComparedName(name), NUMERIC) for name in reversed(names)))
    ComparedName.made = 0
    csv_format.known_layout(schema, names, "test.csv")
    assert ComparedName.made <= 8 * columns, (
        ComparedName.made
    )  # four a name here; a scan of the names for each: columns² / 2


def ids_time(values: list[str]) -> float:
    """The CPU time of numbering the distinct values of a column of ``values`` (``csv_ids``)."""
    cut = csv_format._plain_group([value.encode() for value in values], 1)
    assert cut is not None
    _, _, kinds, starts, ends = cut._found
    return least_time(lambda: kernels.lines.csv_ids(cut.joined, kinds, starts, ends, 1, 0))


@pytest.mark.slow
def test_values_crafted_to_share_a_hash_slot_cost_no_more_than_random_ones():
    crafted = fnv_colliding_words(30_000)
    assert len({fnv_low_bits(word, 16) for word in crafted[::1000]}) == 1  # the unkeyed hash's one slot
    generator = random.Random(72)
    spread = ["".join(generator.choices("abcdefghijklmnopqrstuvwxyz", k=18)) for _ in range(30_000)]
    # unkeyed, the crafted values probed one run of slots: 66 times the time per group
    assert ids_time(crafted) < 5 * ids_time(spread) + 0.01


def test_a_column_s_distinct_values_are_numbered_in_the_order_they_first_appear():
    values = ["b", "a", "b", "'a'", "?", "c", "a", '"a"']
    cut = csv_format._plain_group([value.encode() for value in values], 1)
    assert cut is not None
    assert cut.texts(0) == ["b", "a", "b", "a", None, "c", "a", "a"]
    ids, texts, _ = cut._values(0)
    # the same text quoted or not is another value to the table (its kind differs), read back as the same text
    assert ids.tolist() == [0, 1, 0, 2, -1, 3, 1, 2] and texts == ["b", "a", "a", "c"]


@pytest.mark.parametrize(
    "arff, refused",
    [
        ('@relation r\n@attribute t {"a\\rb","a\\nb"}\n@data\n"a\\rb"\n"a\\nb"\n', "nominal attribute 't' holds a"),
        ('@relation r\n@attribute "x\\ry" numeric\n@data\n1\n', "numeric attribute 'x\\ry' holds a"),
        ('@relation r\n@attribute s string\n@attribute c {x,y}\n@data\nok,y\n"p\\rq",x\n', "row 2's value of 's'"),
        ("@relation 'r: -C 2'\n@attribute ' a' {0,1}\n@attribute b {0,1}\n@attribute x numeric\n@data\n1,0,3\n",
         "the label ' a' is empty or has blanks around it"),
    ],
)  # fmt: skip
def test_csv_output_that_would_read_back_as_other_values_is_refused_and_no_file_is_left(
    tmp_path, run_filterkit, arff, refused
):
    # a carriage return reads back as a line feed (two labels became one); blanks around a label are stripped
    source, written = tmp_path / "in.arff", tmp_path / "out.csv"
    source.write_text(arff)
    run = run_filterkit(source, "-o", written)
    assert run.status == 1 and refused in run.stderr and run.stderr.count("\n") == 1, run.stderr
    assert not written.exists()


def test_csv_output_of_labels_and_texts_that_read_back_is_written_and_reads_back(tmp_path, run_filterkit):
    source, written = tmp_path / "in.arff", tmp_path / "out.csv"
    source.write_text(
        '@relation r\n@attribute s string\n@attribute c {"a b","a\\nb"}\n@data\n"p\\nq","a\\nb"\n?,"a b"\n'
    )
    assert run_filterkit(source, "-o", written).status == 0
    again = run_filterkit(written, "--to", "arff")
    assert again.status == 0, again.stderr
    assert again.stdout.decode().endswith("@data\n'p\\nq','a\\nb'\n?,'a b'\n")
