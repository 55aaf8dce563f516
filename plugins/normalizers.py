"""Normalizers and the binarizer (REFERENCE.md "Normalizers", "Binarizer"; KDD'09 §4.1).

``l2`` and ``l1`` divide each row's numeric non-class attributes by the row's
Euclidean or absolute-sum length.  A zero row stays zero; missing values stay
missing and are left out of the norm.  Unlike Weka's instance ``Normalize``, an
all-zero row does not turn into missing values.

``minmax`` maps each numeric attribute to [0, 1] on its training range (Weka's
attribute ``Normalize``, the KDD'09 UCI baseline); ``binarize`` turns every
numeric feature into presence (value ≠ 0 → 1), the binary-word baseline.
"""

from __future__ import annotations

import numpy as np

import scipy.sparse as sp

from filterkit.errors import FilterkitError
from filterkit.hookspecs import hookimpl
from filterkit.schema import Chunk
from filterkit.stage import Stage, scale_features, stored_in_features, with_stored_values


class RowNormalizer(Stage):
    """Divide each row's features by its norm; subclasses say which norm."""

    order = 2

    def preserves_zeros(self) -> bool:
        """A zero row stays zero, and so does every 0 of a row (it is only divided)."""
        return True

    def transform(self, chunk: Chunk) -> Chunk:
        features = self.features
        if chunk.is_sparse:
            matrix = chunk.values.tocsr()
            acted_entry = stored_in_features(matrix, features)
            in_norm = acted_entry & ~np.isnan(matrix.data)
            contributions = np.where(in_norm, np.abs(matrix.data) ** self.order, 0.0)
            rows = np.repeat(np.arange(matrix.shape[0]), np.diff(matrix.indptr))
            norms = np.bincount(rows, weights=contributions, minlength=matrix.shape[0])
            norms = norms ** (1.0 / self.order)
            divisor = np.where(norms > 0, norms, 1.0)[rows]
            data = np.where(acted_entry, matrix.data / divisor, matrix.data)
            return Chunk(with_stored_values(matrix, data), chunk.text, chunk.weights)
        values = chunk.values.copy()
        # C order, so each row's sum adds in the same order whatever the chunk's row count
        block = np.ascontiguousarray(values[:, features])
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


class Binarizer(Stage):
    """Presence: 1 where a numeric feature is non-zero, 0 where it is zero, missing stays missing."""

    name = "binarize"
    summary = "Turn each numeric feature into presence: 1 where non-zero, else 0 (missing stays missing)."

    def preserves_zeros(self) -> bool:
        """0 is absence."""
        return True

    def transform(self, chunk: Chunk) -> Chunk:
        if chunk.is_sparse:
            matrix = chunk.values.tocsr()
            binary = np.where(np.isnan(matrix.data), np.nan, (matrix.data != 0).astype(np.float64))
            data = np.where(stored_in_features(matrix, self.features), binary, matrix.data)
            return Chunk(with_stored_values(matrix, data), chunk.text, chunk.weights)
        values = chunk.values.copy()
        block = values[:, self.features]
        values[:, self.features] = np.where(np.isnan(block), np.nan, (block != 0).astype(np.float64))
        return Chunk(values, chunk.text, chunk.weights)


class MinMaxNormalizer(Stage):
    """Map each numeric feature to [0, 1] on its training range: (x − min) / (max − min).

    A feature constant on the training data (or never present) becomes 0; test
    values outside the range are not clipped; missing stays missing.  Not
    zero-preserving where min ≠ 0: such sparse data comes out filled in.
    """

    name = "minmax"
    summary = "Scale each numeric feature to [0, 1] on its training range (Weka's Normalize)."
    fitted = True

    def new_statistics(self):
        """The smallest and largest known value of each feature (±inf: none yet)."""
        return np.full(len(self.features), np.inf), np.full(len(self.features), -np.inf)

    def accumulate(self, statistics, chunk: Chunk):
        block = chunk.values[:, self.features]
        if sp.issparse(block):
            block = block.tocsc()
            column = np.repeat(np.arange(block.shape[1]), np.diff(block.indptr))
            low, high = np.full(block.shape[1], np.inf), np.full(block.shape[1], -np.inf)
            np.fmin.at(low, column, block.data)
            np.fmax.at(high, column, block.data)
            implicit_zero = np.diff(block.indptr) < chunk.n_rows
            low[implicit_zero] = np.minimum(low[implicit_zero], 0.0)
            high[implicit_zero] = np.maximum(high[implicit_zero], 0.0)
        else:
            low = np.fmin.reduce(block, axis=0, initial=np.inf)
            high = np.fmax.reduce(block, axis=0, initial=-np.inf)
        return self.merge(statistics, (low, high))

    def merge(self, first, second):
        return np.minimum(first[0], second[0]), np.maximum(first[1], second[1])

    def finalize(self, statistics) -> None:
        low, high = statistics
        present = np.isfinite(low)
        self.minimum = np.where(present, low, 0.0)
        width = np.where(present, high - low, 0.0)
        self.factor = np.where(width > 0, 1.0 / np.where(width > 0, width, 1.0), 0.0)

    def transform(self, chunk: Chunk) -> Chunk:
        return scale_features(chunk, self.features, self.factor, self.minimum)

    def state(self) -> dict:
        return {"minimum": self.minimum, "factor": self.factor}

    def load_state(self, state: dict) -> None:
        for key in ("minimum", "factor"):
            array = np.asarray(state[key], dtype=np.float64)
            if array.shape != (len(self.features),):
                raise FilterkitError(f"stage 'minmax': saved {key} has shape {array.shape}, expected ({len(self.features)},)")
            setattr(self, key, array)


@hookimpl
def register_stages(register):
    """The row normalizers, ``minmax`` and ``binarize``."""
    register(L2Normalizer)
    register(L1Normalizer)
    register(MinMaxNormalizer)
    register(Binarizer)
