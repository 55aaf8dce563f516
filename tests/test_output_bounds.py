"""Stages write only files filterkit reads back (issue 37, item 8): ``words``, ``ordinal`` and
``discretize`` check their output schema against the reader's bounds (``FILTERKIT_MAX_ATTRIBUTES``,
``FILTERKIT_MAX_LABELS``) before anything is written, name the option that makes fewer, and hold
bounded state on the way there.  The bounds are set small here, so the inputs stay tiny."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from chain_helpers import REAL
from filterkit.arff import read_arff
from filterkit.errors import FilterkitError
from filterkit.schema import NOMINAL, NUMERIC, STRING, Attribute, Chunk, Schema
from filterkit.stage import Context
from filterkit_plugins.ordinal import ThresholdEncoder, csr_of_runs
from filterkit_plugins.words import WordVector

IRIS = REAL / "iris.arff"


def documents(path, texts: list[str]) -> None:
    rows = "".join(f"'{text}',{'ab'[k % 2]}\n" for k, text in enumerate(texts))
    path.write_text(f"@relation docs\n@attribute text string\n@attribute class {{a,b}}\n@data\n{rows}")


def integers(path, values) -> None:
    rows = "".join(f"{value},{'ab'[k % 2]}\n" for k, value in enumerate(values))
    path.write_text(f"@relation counts\n@attribute n numeric\n@attribute class {{a,b}}\n@data\n{rows}")


def refused(result, output, words: list[str]) -> None:
    assert result.status == 1 and result.stdout == b""
    assert result.stderr.startswith("filterkit: error: ") and result.stderr.count("\n") == 1, result.stderr
    assert all(word in result.stderr for word in words), result.stderr
    assert not output.exists()


def reads_back(output, attributes: int) -> None:
    schema, _ = read_arff(output)  # under the same bounds
    assert len(schema) == attributes


@pytest.fixture
def corpus(tmp_path):
    """30 documents of 30 distinct words each and the word ``all`` in every one."""
    path = tmp_path / "docs.arff"
    documents(path, [f"all w{k}" for k in range(30)])
    return path


def test_words_refuses_more_word_attributes_than_a_file_may_declare(run_filterkit, monkeypatch, corpus, tmp_path):
    monkeypatch.setenv("FILTERKIT_MAX_ATTRIBUTES", "31")
    output = tmp_path / "out.arff"
    refused(
        run_filterkit("-o", output, corpus, "words"),
        output,
        ["stage 'words' would write 32 attributes", "31", "FILTERKIT_MAX_ATTRIBUTES", "--words-to-keep"],
    )
    assert run_filterkit("-o", output, corpus, "words", "--min-term-freq", "2").status == 0
    reads_back(output, 2)
    monkeypatch.setenv("FILTERKIT_MAX_ATTRIBUTES", "32")
    assert run_filterkit("-o", output, corpus, "words").status == 0
    reads_back(output, 32)


def test_words_stops_fitting_once_the_vocabulary_passes_twice_the_bound(monkeypatch):
    monkeypatch.setenv("FILTERKIT_MAX_ATTRIBUTES", "10")
    schema = Schema("docs", (Attribute("text", STRING), Attribute("class", NOMINAL, ("a", "b"))))
    stage = WordVector()
    stage.prepare(schema, Context(class_index=1))
    statistics = stage.new_statistics()
    fitted = 0
    with pytest.raises(FilterkitError, match="more than 20 distinct words.*FILTERKIT_MAX_ATTRIBUTES.*--stopwords"):
        for k in range(100):  # five new words a document: the fifth chunk passes 20
            chunk = Chunk(np.zeros((1, 2)), {0: [" ".join(f"d{k}w{j}" for j in range(5))]})
            statistics = stage.accumulate(statistics, chunk)
            fitted += 1
    assert fitted == 4
    halves = [
        stage.accumulate(stage.new_statistics(), Chunk(np.zeros((1, 2)), {0: [f"x{k} y{k} z{k}"]})) for k in (1, 2)
    ]
    monkeypatch.setenv("FILTERKIT_MAX_ATTRIBUTES", "2")
    stage.prepare(schema, Context(class_index=1))
    with pytest.raises(FilterkitError, match="more than 4 distinct words"):
        stage.merge(*halves)


def test_ordinal_refuses_more_thresholds_than_a_file_may_declare(run_filterkit, monkeypatch, tmp_path):
    data = tmp_path / "counts.arff"
    integers(data, range(1, 41))
    output = tmp_path / "out.arff"
    monkeypatch.setenv("FILTERKIT_MAX_ATTRIBUTES", "40")
    refused(
        run_filterkit("-o", output, data, "ordinal"),
        output,
        ["stage 'ordinal' would write 41 attributes", "FILTERKIT_MAX_ATTRIBUTES", "--max-thresholds"],
    )
    assert run_filterkit("-o", output, data, "ordinal", "--max-thresholds", "39").status == 0
    reads_back(output, 40)


@pytest.mark.parametrize("binary", [False, True])
def test_equal_width_bins_are_bounded_before_the_cut_points_are_made(run_filterkit, monkeypatch, tmp_path, binary):
    output = tmp_path / "out.arff"
    flag = ["--binary"] if binary else []
    # 10¹⁵ cut points would take 8 PB: the refusal comes before any is made
    refused(run_filterkit("-o", output, IRIS, "discretize", "--bins", "1000000000000000", *flag), output, ["--bins N"])
    monkeypatch.setenv("FILTERKIT_MAX_LABELS" if not binary else "FILTERKIT_MAX_ATTRIBUTES", "20")
    what = "labels in one attribute" if not binary else "attributes"
    refused(
        run_filterkit("-o", output, IRIS, "discretize", "--bins", "21" if not binary else "6", *flag), output, [what]
    )
    assert run_filterkit("-o", output, IRIS, "discretize", "--bins", "20" if not binary else "5", *flag).status == 0
    reads_back(output, 5 if not binary else 17)


def test_mdl_binary_names_the_option_that_makes_fewer(run_filterkit, monkeypatch, tmp_path):
    data = tmp_path / "blocks.arff"
    rows = "".join(f"{k},{'ab'[k // 10 % 2]}\n" for k in range(60))  # MDL cuts three of the six blocks apart
    data.write_text(f"@relation blocks\n@attribute x numeric\n@attribute class {{a,b}}\n@data\n{rows}")
    monkeypatch.setenv("FILTERKIT_MAX_ATTRIBUTES", "3")
    output = tmp_path / "out.arff"
    refused(run_filterkit("-o", output, data, "discretize", "--binary"), output, ["4 attributes", "leave out --binary"])
    assert run_filterkit("-o", output, data, "discretize").status == 0
    schema, _ = read_arff(output)
    assert len(schema.attributes[0].labels) == 4


def test_runs_become_the_csr_matrix_they_describe():
    rows, starts = np.array([1, 0, 1, 0]), np.array([0, 4, 3, 1])
    lengths, values = np.array([2, 1, 3, 2]), np.array([5.0, 6.0, np.nan, 7.0])
    made = csr_of_runs(rows, starts, lengths, values, (3, 7))
    expected = np.zeros((3, 7))
    expected[1, 0:2], expected[0, 4], expected[1, 3:6], expected[0, 1:3] = 5, 6, np.nan, 7
    np.testing.assert_array_equal(made.toarray(), expected)
    assert made.has_sorted_indices and made.indices.dtype == np.int32 and made.indptr.tolist() == [0, 3, 8, 8]


def test_ordinal_holds_few_bytes_per_output_entry(tmp_path):
    """300 rows of 300 distinct counts set 45,150 thresholds: the transform's peak stays near the
    12 bytes an entry the result holds (building a COO matrix and converting it took about 100)."""
    counts = np.random.default_rng(3).permutation(np.arange(1, 301)).astype(np.float64)
    schema = Schema("counts", (Attribute("n", NUMERIC), Attribute("class", NOMINAL, ("a", "b"))))
    chunk = Chunk(sp.csr_matrix(np.column_stack([counts, np.arange(300) % 2])))
    stage = ThresholdEncoder()
    stage.prepare(schema, Context(class_index=1))
    stage.finalize(stage.accumulate(stage.new_statistics(), chunk))
    tracemalloc.start()
    try:
        encoded = stage.transform(chunk)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert encoded.values.nnz == 300 * 301 // 2 + 150
    assert peak / encoded.values.nnz < 30


def test_a_header_longer_than_a_reader_takes_is_refused(run_filterkit, monkeypatch, tmp_path):
    """Long words, or a long name copied into every threshold's attribute, make the header
    grow past FILTERKIT_MAX_HEADER_BYTES while the attributes stay few."""
    docs, counts = tmp_path / "docs.arff", tmp_path / "counts.arff"
    documents(docs, [letter * 1000 for letter in "abc"])
    long_name = "n" * 500
    integers(counts, range(1, 11))
    counts.write_text(counts.read_text().replace("@attribute n ", f"@attribute {long_name} "))
    output = tmp_path / "out.arff"
    monkeypatch.setenv("FILTERKIT_MAX_HEADER_BYTES", "3000")
    refused(
        run_filterkit("-o", output, docs, "words"),
        output,
        ["would write 3,069 bytes of header at least", "FILTERKIT_MAX_HEADER_BYTES", "--words-to-keep"],
    )
    documents(docs, [letter * 500 for letter in "éüß"])  # as many bytes in UTF-8, half the characters
    refused(run_filterkit("-o", output, docs, "words"), output, ["would write 3,069 bytes of header at least"])
    refused(run_filterkit("-o", output, counts, "ordinal"), output, ["bytes of header", "--max-thresholds"])
    assert run_filterkit("-o", output, counts, "ordinal", "--max-thresholds", "4").status == 0
    reads_back(output, 5)
    monkeypatch.setenv("FILTERKIT_MAX_HEADER_BYTES", "3200")
    assert run_filterkit("-o", output, docs, "words").status == 0
    reads_back(output, 4)
