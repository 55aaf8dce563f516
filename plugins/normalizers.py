"""Row normalizers ``l2`` and ``l1`` (REFERENCE.md, Normalizers; KDD'09 §4.1).

Each row's numeric non-class attributes are divided by the row's Euclidean
(``l2``) or absolute-sum (``l1``) length.  A zero row stays zero; missing values
stay missing and are left out of the norm.  Unlike Weka's ``Normalize``, an
all-zero row does not turn into missing values.
"""

from __future__ import annotations

import numpy as np

from filterkit.hookspecs import hookimpl
from filterkit.schema import Chunk
from filterkit.stage import Stage


class RowNormalizer(Stage):
    """Divide each row's features by its norm; subclasses say which norm."""

    order = 2

    def transform(self, chunk: Chunk) -> Chunk:
        features = self.features
        if chunk.is_sparse:
            matrix = chunk.values.tocsr(copy=True)
            acted = np.zeros(matrix.shape[1], dtype=bool)
            acted[features] = True
            in_norm = acted[matrix.indices] & ~np.isnan(matrix.data)
            contributions = np.where(in_norm, np.abs(matrix.data) ** self.order, 0.0)
            rows = np.repeat(np.arange(matrix.shape[0]), np.diff(matrix.indptr))
            norms = np.bincount(rows, weights=contributions, minlength=matrix.shape[0])
            norms = norms ** (1.0 / self.order)
            divisor = np.where(norms > 0, norms, 1.0)[rows]
            matrix.data = np.where(acted[matrix.indices], matrix.data / divisor, matrix.data)
            return Chunk(matrix, chunk.text, chunk.weights)
        values = chunk.values.copy()
        block = values[:, features]
        norms = np.nansum(np.abs(block) ** self.order, axis=1) ** (1.0 / self.order)
        values[:, features] = block / np.where(norms > 0, norms, 1.0)[:, None]
        return Chunk(values, chunk.text, chunk.weights)


class L2Normalizer(RowNormalizer):
    """Scale each row to Euclidean length 1 (zero rows stay zero)."""

    name = "l2"
    summary = "Scale each row's numeric features to Euclidean length 1 (zero rows stay zero)."
    order = 2


class L1Normalizer(RowNormalizer):
    """Scale each row so its absolute values sum to 1 (zero rows stay zero)."""

    name = "l1"
    summary = "Scale each row's numeric features to absolute sum 1 (zero rows stay zero)."
    order = 1


@hookimpl
def register_stages(register):
    """The row normalizers."""
    register(L2Normalizer)
    register(L1Normalizer)
