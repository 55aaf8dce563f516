"""Shared helpers for the ARFF reader/writer tests (imported by the test modules).

Every fixture file lives under tests/data (copied from the shared data set),
so these tests run on a fresh clone.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from filterkit.arff import ArffReader, write_arff
from filterkit.schema import concatenate

DATA = Path(__file__).resolve().parent.parent / "data"
CONFORMANCE = DATA / "conformance"
REAL = DATA / "real"
INDEX = json.loads((CONFORMANCE / "index.json").read_text(encoding="utf-8"))

REAL_FILES = sorted(REAL.glob("*.arff"))

# Files Weka 3.6 reads although the suite they come from rejects them: they must read.
_WEKA_READS = {"reject (scipy only)", "reject (ARFFFiles)"}
# Files whose own suite calls them valid but that Weka 3.6 rejects (duplicate label 'bla').
_WEKA_REJECTS = {"scipy/test2.arff"}


def conformance_files() -> list[str]:
    """Index keys of every conformance .arff file (the .txt snippets and docs are not ARFF)."""
    return sorted(name for name in INDEX if name.endswith(".arff"))


def must_reject(name: str) -> bool:
    """True when filterkit must reject the conformance file ``name``."""
    expect = INDEX[name]["expect"]
    if name in _WEKA_REJECTS:
        return True
    return expect.startswith("reject") and expect not in _WEKA_READS


def valid_files() -> list[str]:
    return [n for n in conformance_files() if not must_reject(n)]


def rejected_files() -> list[str]:
    return [n for n in conformance_files() if must_reject(n)]


def weka_shape(name: str) -> tuple[int, int] | None:
    """(rows, attributes) Weka 3.6.14 read from conformance file ``name``, None if it failed."""
    observed = (INDEX[name].get("observed") or {}).get("weka", "")
    match = re.fullmatch(r"OK (\d+) rows x (\d+) attrs", observed)
    return (int(match.group(1)), int(match.group(2))) if match else None


def read_all(source, chunk_rows: int = 10_000, name: str | None = None):
    """Schema and every row in one chunk."""
    with ArffReader(source, name=name, chunk_rows=chunk_rows) as reader:
        chunks = list(reader.chunks())
        return reader.schema, concatenate(chunks, len(reader.schema), reader.schema.text_columns())


def write_text(schema, chunk, sparse=None) -> str:
    out = io.StringIO()
    write_arff(out, schema, [chunk], sparse=sparse)
    return out.getvalue()


def as_csr(values) -> sp.csr_matrix:
    """A canonical CSR copy: sorted indices, explicit zeros dropped (NaN kept)."""
    matrix = sp.csr_matrix(values, copy=True)
    matrix.eliminate_zeros()
    matrix.sort_indices()
    return matrix


def assert_same_values(a, b) -> None:
    """Equal matrices, NaN equal to NaN, whether dense or sparse."""
    assert a.shape == b.shape
    if sp.issparse(a) or sp.issparse(b):
        left, right = as_csr(a), as_csr(b)
        np.testing.assert_array_equal(left.indptr, right.indptr)
        np.testing.assert_array_equal(left.indices, right.indices)
        np.testing.assert_array_equal(left.data, right.data)
    else:
        np.testing.assert_array_equal(a, b)


def assert_same_data(schema_a, chunk_a, schema_b, chunk_b) -> None:
    """Identical schema, values (NaN-aware), text side columns and weights.

    Weights of None and all-ones are the same thing (the writer omits ``{1}``).
    """
    assert schema_a == schema_b, schema_a.first_difference(schema_b)
    assert chunk_a.n_rows == chunk_b.n_rows
    assert_same_values(chunk_a.values, chunk_b.values)
    assert chunk_a.text == chunk_b.text
    weights_a = np.ones(chunk_a.n_rows) if chunk_a.weights is None else chunk_a.weights
    weights_b = np.ones(chunk_b.n_rows) if chunk_b.weights is None else chunk_b.weights
    np.testing.assert_array_equal(weights_a, weights_b)
