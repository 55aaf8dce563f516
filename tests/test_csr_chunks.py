"""Chunks of CSR arrays (issue 20: a plain run never imports scipy).

A sparse chunk read from ARFF holds its CSR arrays (``Chunk.from_csr``); its ``values`` matrix
is built only when something asks for it.  Every stage, the fused stored-values step, the
contract and the writer give the same results on such a chunk as on the matrix chunk of the
same rows, and the chains a plain ARFF run uses import no scipy at all.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from chain_helpers import REAL
from filterkit.arff import read_arff
from filterkit.arff.writer import write_arff
from filterkit.contract import ContractError, OutputContract
from filterkit.plugins import load_plugins
from filterkit.runner import Chain
from filterkit.schema import Chunk, CsrArrays, concatenate, is_sparse_matrix
from filterkit.sources import MemorySource
from filterkit.stage_parts import kept_columns
from filterkit.testing import check_stage

#: Run each chain of argv lists (JSON) through ``filterkit.cli.run`` in one fresh interpreter and
#: report, per chain, the exit status, the output's size and whether scipy / scipy.sparse were loaded.
PROBE = """
import io, json, sys
import filterkit.cli
report = []
for argv in json.loads(sys.argv[1]):
    sys.stdout = io.TextIOWrapper(io.BytesIO())
    status = filterkit.cli.run(argv)
    sys.stdout.flush()
    size = len(sys.stdout.buffer.getvalue())
    report.append([status, size, "scipy" in sys.modules, "scipy.sparse" in sys.modules])
sys.stderr.write(json.dumps(report) + "\\n")
"""

SPARSE = REAL / "grain_wc.arff"
DENSE = REAL / "iris.arff"
# bns among them: its inverse normal is the compiled kernel, not scipy.special.ndtri
SCIPY_FREE_CHAINS = [[], ["l2"], ["ig", "--presence", "select", "--top", "100", "l2"], ["shape", "bns", "l2"]]


def scipy_loaded_by(chains: list[list[str]]) -> list[list]:
    completed = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(chains)], capture_output=True, timeout=300, check=False
    )
    return json.loads(completed.stderr.decode().strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("data, class_flag", [(SPARSE, ["-c", "first"]), (DENSE, [])])
def test_the_plain_chains_never_import_scipy(data, class_flag):
    chains = [["-q", *class_flag, str(data), *chain] for chain in SCIPY_FREE_CHAINS]
    report = scipy_loaded_by(chains)
    for chain, (status, size, scipy_loaded, _) in zip(chains, report):
        assert status == 0 and size > 1000, chain
        assert not scipy_loaded, chain


def reference_matrix(arrays: CsrArrays) -> sp.csr_matrix:
    return sp.csr_matrix((arrays.data.copy(), arrays.indices.copy(), arrays.indptr.copy()), shape=arrays.shape)


def test_values_of_an_array_chunk_is_the_matrix_of_its_arrays_made_once():
    data, indices, indptr = np.array([1.5, np.nan, -2.0]), np.array([2, 0, 1]), np.array([0, 1, 1, 3])
    chunk = Chunk.from_csr(data, indices, indptr, (3, 4), {}, np.array([1.0, 2.0, 3.0]))
    assert chunk.is_sparse and chunk.n_rows == 3 and chunk.shape == (3, 4) and not chunk.has_matrix
    assert chunk.csr().data is data  # no copy, no matrix
    matrix = chunk.values
    assert chunk.has_matrix and chunk.values is matrix
    assert matrix.format == "csr" and matrix.shape == (3, 4)
    expected = np.array([[0, 0, 1.5, 0], [0, 0, 0, 0], [np.nan, -2.0, 0, 0]])
    np.testing.assert_array_equal(matrix.toarray(), expected)
    np.testing.assert_array_equal(chunk.dense_values(), expected)
    np.testing.assert_array_equal(chunk.column(0), [0, 0, np.nan])


def test_a_matrix_chunk_returns_its_own_matrix_and_arrays():
    matrix = sp.csr_matrix(np.array([[0, 1.0], [2.0, 0]]))
    chunk = Chunk(matrix)
    assert chunk.values is matrix and chunk.is_sparse
    arrays = chunk.csr()
    assert arrays.data is matrix.data and arrays.indices is matrix.indices and arrays.shape == (2, 2)
    assert not Chunk(np.zeros((2, 2))).is_sparse


@pytest.mark.slow
def test_is_sparse_matrix_answers_false_without_scipy():
    probe = (
        "import sys, numpy as np\n"
        "from filterkit.schema import Chunk, is_sparse_matrix\n"
        "chunk = Chunk.from_csr(np.ones(1), np.zeros(1, dtype=np.int64), np.array([0, 1]), (1, 1))\n"
        "print(is_sparse_matrix(np.ones((1, 1))), chunk.is_sparse, chunk.n_rows, 'scipy' in sys.modules)\n"
        "chunk.values\n"
        "print('scipy.sparse' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.split() == ["False", "True", "1", "False", "True"]
    assert is_sparse_matrix(sp.csr_matrix((1, 1))) and not is_sparse_matrix(np.ones(1))


def test_row_slices_and_concatenation_of_array_chunks_match_the_matrix():
    _, chunk = read_arff(SPARSE)
    assert not chunk.has_matrix
    matrix = reference_matrix(chunk.csr())
    for start, stop in [(0, 1), (3, 40), (17, 17), (chunk.n_rows - 5, chunk.n_rows)]:
        part = chunk.rows(start, stop)
        assert not part.has_matrix
        np.testing.assert_array_equal(part.dense_values(), matrix[start:stop].toarray())
    parts = [chunk.rows(0, 10), Chunk(matrix[10:20]), Chunk(matrix[20:30].toarray())]
    joined = concatenate(parts, matrix.shape[1])
    np.testing.assert_array_equal(joined.dense_values(), matrix[:30].toarray())


STAGES = [
    ("grain_wc.arff", "first", [("l2", {})]),
    ("grain_wc.arff", "first", [("l1", {}), ("binarize", {})]),
    ("grain_wc.arff", "first", [("shape", {}), ("bns", {}), ("l2", {})]),
    ("grain_wc.arff", "first", [("ig", {"presence": True}), ("select", {"top": 50}), ("l2", {})]),
    ("grain_wc.arff", "first", [("minmax", {})]),
    ("oh0.wc.arff", "last", [("shape", {"multiclass": "max"}), ("chi", {}), ("l2", {})]),
    ("iris.arff", "last", [("shape", {}), ("bns", {}), ("l2", {})]),
    ("iris.arff", "last", [("minmax", {}), ("select", {"top": 2, "metric": "ig"})]),
]


def written(schema, chunks) -> bytes:
    stream = io.BytesIO()
    write_arff(stream, schema, chunks)
    return stream.getvalue()


@pytest.mark.slow
@pytest.mark.parametrize("file, class_spec, stages", STAGES)
@pytest.mark.parametrize("rows", [29, 100_000])
def test_array_and_matrix_chunks_give_the_same_output_through_every_stage(file, class_spec, stages, rows):
    schema, whole = read_arff(REAL / file)
    registry = load_plugins()

    def chunks(as_matrix: bool) -> list[Chunk]:
        parts = [whole.rows(start, min(start + rows, whole.n_rows)) for start in range(0, whole.n_rows, rows)]
        if as_matrix and whole.is_sparse:
            return [Chunk(reference_matrix(part.csr()), part.text, part.weights) for part in parts]
        return parts

    outputs = []
    for as_matrix in (False, True):
        chain = Chain([registry.make_stage(name, options) for name, options in stages], class_spec=class_spec)
        chain.fit(MemorySource(schema, concatenate(chunks(as_matrix), len(schema), schema.text_columns())))
        transformed = list(chain.transform(iter(chunks(as_matrix))))
        outputs.append(written(chain.output_schema, transformed))
        # each stage alone, as well as the chain's fused steps
        alone = chunks(as_matrix)
        for stage in chain.stages:
            alone = [stage.transform(chunk) for chunk in alone]
        outputs.append(written(chain.output_schema, alone))
    assert outputs[0] == outputs[1] == outputs[2] == outputs[3]
    assert len(outputs[0]) > 1000


def test_selecting_columns_of_arrays_is_scipy_column_indexing():
    generator = np.random.default_rng(7)
    dense = np.where(generator.random((30, 12)) < 0.3, generator.integers(1, 5, (30, 12)), 0).astype(float)
    matrix = sp.csr_matrix(dense)
    columns = np.array([0, 3, 4, 9, 11])
    data, indices, indptr, shape = kept_columns(Chunk(matrix).csr(), columns)
    expected = matrix[:, columns]
    assert shape == expected.shape
    assert indptr.tolist() == expected.indptr.tolist()
    assert indices.tolist() == expected.indices.tolist() and data.tolist() == expected.data.tolist()


def contract_of(file: str, stage_name: str) -> tuple[OutputContract, Chunk]:
    schema, chunk = read_arff(REAL / file)
    stage = load_plugins().make_stage(stage_name, {})
    chain = Chain([stage], class_spec="first").fit(MemorySource(schema, chunk))
    return OutputContract.of(chain.stages[0]), chunk.rows(0, 20)


def refusals(given: Chunk) -> list[tuple[str, Chunk, Chunk]]:
    """Bad results, each as an array chunk and as the matrix chunk of the same arrays."""
    arrays = given.csr()
    n_rows, n_columns = arrays.shape
    bad = {
        "float32 values": (arrays.data.astype(np.float32), arrays.indices, arrays.indptr, arrays.shape),
        "wrong row count": tuple(given.rows(0, n_rows - 1).csr()),
        "one column too many": (arrays.data, arrays.indices, arrays.indptr, (n_rows, n_columns + 1)),
        "class changed": (np.where(arrays.indices == 0, 1 - arrays.data, arrays.data), *arrays[1:]),
    }
    made = []
    for what, (data, indices, indptr, shape) in bad.items():
        made.append(
            (
                what,
                Chunk.from_csr(data, indices, indptr, shape, given.text),
                Chunk(sp.csr_matrix((data, indices, indptr), shape=shape), given.text),
            )
        )
    return made


@pytest.mark.parametrize("what_index", range(4))
def test_the_contract_refuses_on_arrays_what_it_refuses_on_matrices(what_index):
    contract, given = contract_of("grain_wc.arff", "l2")
    what, as_arrays, as_matrix = refusals(given)[what_index]
    messages = []
    for result in (as_arrays, as_matrix):
        with pytest.raises(ContractError) as refused:
            contract.checked(given, result)
        messages.append(str(refused.value))
    assert messages[0] == messages[1], what
    assert not as_arrays.has_matrix  # checked on its arrays


def test_the_contract_refuses_arrays_that_make_no_matrix():
    contract, given = contract_of("grain_wc.arff", "l2")
    arrays = given.csr()
    broken = [
        (arrays.data, arrays.indices, arrays.indptr[:-1], arrays.shape, "row starts"),
        (arrays.data, arrays.indices + arrays.shape[1], arrays.indptr, arrays.shape, "column index outside"),
        (arrays.data, arrays.indices.astype(float), arrays.indptr, arrays.shape, "expected int32 or int64"),
    ]
    for data, indices, indptr, shape, message in broken:
        with pytest.raises(ContractError, match=message):
            contract.checked(given, Chunk.from_csr(data, indices, indptr, shape, given.text))
    assert contract.checked(given, Chunk.from_csr(*arrays[:3], arrays.shape, given.text))[0].n_rows == 20


@pytest.mark.slow
@pytest.mark.parametrize("name", ["l2", "l1", "binarize"])
def test_stages_made_for_array_chunks_still_pass_the_stage_contract_check(name):
    check_stage(type(load_plugins().make_stage(name, {})))


def test_a_chunk_of_nothing_is_refused_as_before():
    contract, given = contract_of("grain_wc.arff", "l2")
    with pytest.raises(ContractError, match="the chunk's values are None, expected a 2-D array or CSR matrix"):
        contract.checked(given, Chunk(None, given.text))
