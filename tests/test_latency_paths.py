"""One document at a time through a fitted chain (issue 49, item 3): what no chunk changes (each stage's
output contract and stored-values map) is made once per fitted chain or fitted adapter, not at every
call; the one-row outputs stay those rows of a whole-chunk transform, from many threads at once; a
refit is transformed by its new fit.  Correctness only: the speed is benchmarks/latency.py's."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import scipy.sparse as sp

from chain_helpers import REAL
from filterkit import runner
from filterkit.arff import read_arff
from filterkit.plugins import load_plugins
from filterkit.runner import Chain
from filterkit.schema import Chunk
from filterkit.sklearn import BnsScorer, L2Normalizer, Shaper, WordVector, load_arff
from filterkit.sources import MemorySource

SAMPLE = REAL / "reuters_grain_sample.arff"
#: The README's route and the two weightings a service would ship (words, then a map step on sparse rows).
CHAINS = {
    "shape bns l2": [("words", {"lowercase": True}), ("shape", {}), ("bns", {}), ("l2", {})],
    "bns --multiply l2": [("words", {"lowercase": True}), ("bns", {"multiply": True}), ("l2", {})],
    "idf l2": [("words", {"lowercase": True}), ("idf", {}), ("l2", {})],
}


@pytest.fixture(scope="module")
def documents():
    return read_arff(SAMPLE)


def fitted(stages, schema, chunk) -> Chain:
    registry = load_plugins()
    return Chain([registry.make_stage(name, params) for name, params in stages]).fit(MemorySource(schema, chunk))


def one_row(chunk: Chunk, row: int) -> Chunk:
    return Chunk(chunk.values[row : row + 1], {c: texts[row : row + 1] for c, texts in chunk.text.items()})


def csr_bytes(chunk: Chunk) -> tuple[bytes, bytes, bytes, tuple]:
    """A sparse chunk's stored values, their columns and row starts, as bytes: equal means the same output."""
    rows = chunk.csr()
    return (
        rows.data.tobytes(),
        rows.indices.astype(np.int64).tobytes(),
        rows.indptr.astype(np.int64).tobytes(),
        rows.shape,
    )


def counting_contracts(monkeypatch) -> list:
    """A list that grows by one each time a stage's output contract is made (with its schema checks)."""
    made: list = []
    of = runner.OutputContract.of

    def counted(stage, step="transform"):
        made.append(stage.name)
        return of(stage, step)

    monkeypatch.setattr(runner.OutputContract, "of", counted)
    return made


def test_a_fitted_chain_makes_its_stages_contracts_once_for_many_one_row_transforms(documents, monkeypatch):
    schema, chunk = documents
    chain = fitted(CHAINS["shape bns l2"], schema, chunk)
    made = counting_contracts(monkeypatch)
    for row in range(5):
        list(chain.transform([one_row(chunk, row)]))
    assert made == ["words", "shape", "bns", "l2"]


def test_each_stage_s_output_of_one_row_comes_by_the_chain_s_plan_and_ends_in_the_transform_s(documents, monkeypatch):
    schema, chunk = documents
    chain = fitted(CHAINS["shape bns l2"], schema, chunk)
    made = counting_contracts(monkeypatch)
    for row in range(3):
        outputs = chain.each_stage(one_row(chunk, row))
        assert [output.shape[1] for output in outputs] == [len(stage.output_schema()) for stage in chain.stages]
        assert csr_bytes(outputs[-1]) == csr_bytes(next(iter(chain.transform([one_row(chunk, row)]))))
    assert made == ["words", "shape", "bns", "l2"]


@pytest.mark.parametrize("name", CHAINS)
def test_one_row_transforms_from_many_threads_are_the_rows_of_a_whole_chunk_transform(documents, name):
    schema, chunk = documents
    whole = next(iter(fitted(CHAINS[name], schema, chunk).transform([chunk])))
    expected = [csr_bytes(whole.rows(row, row + 1)) for row in range(chunk.n_rows)]
    chain = fitted(CHAINS[name], schema, chunk)  # fitted again: the threads' first calls make its plan

    def transformed(row: int):
        return csr_bytes(next(iter(chain.transform([one_row(chunk, row)]))))

    rows = [row for _ in range(4) for row in range(chunk.n_rows)]  # each row four times, interleaved
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(transformed, rows))
    assert results == [expected[row] for row in rows]


def test_a_chain_fitted_again_transforms_by_its_new_fit(documents):
    schema, chunk = documents
    first, second = chunk.rows(0, 30), chunk.rows(30, 60)
    chain = fitted(CHAINS["shape bns l2"], schema, first)
    list(chain.transform([one_row(chunk, 0)]))  # its plan made on the first fit
    chain.fit(MemorySource(schema, second))
    fresh = fitted(CHAINS["shape bns l2"], schema, second)
    assert (
        len(chain.output_schema)
        == len(fresh.output_schema)
        != len(fitted(CHAINS["shape bns l2"], schema, first).output_schema)
    )
    for row in (0, 45):
        ours, theirs = (next(iter(c.transform([one_row(chunk, row)]))) for c in (chain, fresh))
        assert csr_bytes(ours) == csr_bytes(theirs)


def test_words_joins_the_kept_values_and_the_words_as_scipy_s_hstack_does(documents):
    schema, chunk = documents
    words = fitted([("words", {"counts": True, "idf": True})], schema, chunk).stages[0]
    values = chunk.values.copy()
    values[::3, 1] = np.nan  # a missing class is stored, 0 (the first label) is not
    for given in (Chunk(values, chunk.text), Chunk(sp.csr_matrix(values), chunk.text), one_row(chunk, 7)):
        indptr, ids, counts = words.counted(given, words.vocabulary, False)
        word_columns = sp.csr_matrix((counts * words.idf[ids], ids, indptr), shape=(given.n_rows, len(words.words)))
        expected = sp.hstack([sp.csr_matrix(given.values)[:, words.kept], word_columns], format="csr")
        expected.eliminate_zeros()  # a word in every training document: idf 0
        assert (expected.data == 0).sum() == 0 and np.isnan(expected.data).any() == (given.n_rows > 1)
        result = words.transform(given)
        assert csr_bytes(result) == csr_bytes(Chunk(expected))


def words_pipeline_steps():
    return [WordVector(lowercase=True), Shaper(), BnsScorer(), L2Normalizer()]


def test_a_fitted_adapter_makes_its_stage_s_contract_once_and_a_refit_its_own(monkeypatch):
    documents, y, _ = load_arff(SAMPLE)
    documents = documents[:, 0].tolist()
    words = WordVector(lowercase=True).fit(documents, y)
    made = counting_contracts(monkeypatch)
    outputs = [words.transform([document]) for document in documents[:5]]
    assert made == ["words"]
    np.testing.assert_array_equal(sp.vstack(outputs).toarray(), words.transform(documents[:5]).toarray())
    words.fit(documents[30:], y[30:])
    assert words.transform(documents[:1]).shape[1] == len(
        WordVector(lowercase=True).fit(documents[30:], y[30:]).get_feature_names_out()
    )


def test_adapters_transform_one_document_from_many_threads_as_all_at_once():
    documents, y, _ = load_arff(SAMPLE)
    documents = documents[:, 0].tolist()
    steps = words_pipeline_steps()
    X = documents
    for step in steps:
        X = step.fit(X, y).transform(X)

    def transformed(row: int) -> np.ndarray:
        one = [documents[row]]
        for step in steps:
            one = step.transform(one)
        return one.toarray()

    rows = [row for _ in range(2) for row in range(0, len(documents), 2)]
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(transformed, rows))
    for row, result in zip(rows, results):
        assert result.tobytes() == X[row].toarray().tobytes()


class CountedWalks(tuple):
    """A schema's attributes that count the walks over them (an index is not a walk)."""

    walks = 0

    def __iter__(self):
        CountedWalks.walks += 1
        return super().__iter__()


def test_classifier_matrix_walks_a_schema_s_attributes_once_for_many_one_row_calls(documents):
    from filterkit.classifying import classifier_matrix
    from filterkit.schema import Schema

    schema, chunk = documents
    chain = fitted(CHAINS["shape bns l2"], schema, chunk)
    output = chain.output_schema
    counted = Schema(output.relation, CountedWalks(output.attributes))
    class_index = output.index_of("class-att")
    whole = classifier_matrix(output, next(iter(chain.transform([chunk]))), class_index)
    CountedWalks.walks = 0
    for row in range(5):
        features = classifier_matrix(counted, next(iter(chain.transform([one_row(chunk, row)]))), class_index)
        np.testing.assert_array_equal(features.toarray(), whole[row].toarray())
    assert CountedWalks.walks == 1  # its kinds, once: every positions_of asks the array made of them
