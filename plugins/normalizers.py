"""Normalizers and the binarizer (docs/algorithms.md §7; KDD'09 §4.1).

``l2`` and ``l1`` divide each row's numeric non-class attributes by the row's
Euclidean or absolute-sum length, over the whole double range (a row of 1e-200s
or 1e200s is normalized like one of 1s; a row holding ±∞ becomes its limit: ±1
there, 0 elsewhere).  A zero row stays zero; missing values stay missing and are
left out of the norm.  Unlike Weka's instance ``Normalize``, an
all-zero row does not turn into missing values.

``minmax`` maps each numeric attribute to [0, 1] on its training range (Weka's
attribute ``Normalize``, the KDD'09 UCI baseline); ``binarize`` turns every
numeric feature into presence (value ≠ 0 → 1), the binary-word baseline.
"""

from __future__ import annotations

from typing import cast

import numpy as np

from filterkit.export.steps import Normalize, Presence
from filterkit.kernels import normalize_stored
from filterkit.plugin import (
    Chunk,
    StateArray,
    Updatable,
    ValueMapped,
    hookimpl,
    invalid_state,
)
from filterkit.stage import SCALING_EXPONENTS, range_scaling, refuse_infinite_ranges, scaling_map


class RowNormalizer(ValueMapped):
    """Divide each row's features by its norm; subclasses say which norm."""

    order = 2

    def preserves_zeros(self) -> bool:
        """A zero row stays zero, and so does every 0 of a row (it is only divided)."""
        return True

    def exported_step(self) -> Normalize:
        """The stage in an exported scorer (:mod:`filterkit.export`): the same norm of the same features."""
        return Normalize(self.features, self.order)

    def stored_values_map(self):
        """Each row's stored values divided by its norm (0 stays 0, and adds nothing to the norm)."""
        return self._normalized_stored

    def transform(self, chunk: Chunk) -> Chunk:
        if chunk.is_sparse:
            rows = chunk.csr()
            return chunk.with_stored(self._normalized_stored(rows, rows.data), rows)
        # the same kernel on the block's non-zero values, so that a row's norm sums in column order whether the
        # rows came dense or sparse (numpy's pairwise nansum of a wide row rounded otherwise)
        values = np.array(chunk.values, dtype=np.float64)  # a copy, in the kernel's type
        block = values[:, self.features]
        stored = block != 0  # NaN included: the kernel leaves it out of the norm and keeps it missing
        indptr = np.concatenate([[0], np.cumsum(stored.sum(axis=1))]).astype(np.int64)
        columns = np.nonzero(stored)[1].astype(np.int64)
        normalized = np.empty(len(columns))
        acted = np.ones(len(self.features), dtype=bool)
        normalize_stored(indptr, columns, np.ascontiguousarray(block[stored]), acted, self.order, normalized)
        block[stored] = normalized
        values[:, self.features] = block
        return Chunk(values, chunk.text, chunk.weights)

    def _normalized_stored(self, matrix, stored: np.ndarray) -> np.ndarray:
        """The stored values ``stored`` of the CSR ``matrix`` (CSR arrays or a matrix) with each
        row's features divided by the row's norm, by the compiled kernel (each row's powers summed
        in stored order; a row whose plain norm is unsafe rescaled first by the power of two that brings its
        largest value into [0.5, 1), or an infinite one set to its limit)."""
        acted_column = np.zeros(matrix.shape[1], dtype=bool)
        acted_column[self.features] = True
        data = np.empty(len(stored))
        normalize_stored(
            np.ascontiguousarray(matrix.indptr),
            np.ascontiguousarray(matrix.indices),
            np.ascontiguousarray(stored, dtype=np.float64),
            acted_column,
            self.order,
            data,
        )
        return data


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


class PresenceBinarizer(ValueMapped):
    """Presence: 1 where a numeric feature is non-zero, 0 where it is zero, missing stays missing."""

    name = "binarize"
    summary = "Turn each numeric feature into presence: 1 where non-zero, else 0 (missing stays missing)."

    def preserves_zeros(self) -> bool:
        """0 is absence."""
        return True

    def exported_step(self) -> Presence:
        """The stage in an exported scorer (:mod:`filterkit.export`): presence of the same features."""
        return Presence(self.features)

    def value_map(self):
        """1 where x ≠ 0, 0 where x = 0, NaN stays NaN."""
        return lambda positions, values: np.where(np.isnan(values), np.nan, (values != 0).astype(np.float64))


class MinMaxNormalizer(ValueMapped, Updatable):
    """Map each numeric feature to [0, 1] on its training range: (x − min) / (max − min).

    A feature constant on the training data (or never present) becomes 0; test
    values outside the range are not clipped; missing stays missing.  Not
    zero-preserving where min ≠ 0: such sparse data comes out filled in.
    """

    name = "minmax"
    summary = "Scale each numeric feature to [0, 1] on its training range (Weka's Normalize)."
    learns = True
    state_arrays = {"minimum": StateArray(), "factor": StateArray(), **SCALING_EXPONENTS}

    def new_statistics(self):
        """The smallest and largest known value of each feature (±inf: none yet)."""
        return np.full(len(self.features), np.inf), np.full(len(self.features), -np.inf)

    def accumulate(self, statistics, chunk: Chunk):
        if chunk.is_sparse:
            import scipy.sparse as sp

            block = cast(sp.spmatrix, chunk.values[:, self.features]).tocsc()
            column = np.repeat(np.arange(block.shape[1]), np.diff(block.indptr))
            low, high = np.full(block.shape[1], np.inf), np.full(block.shape[1], -np.inf)
            np.fmin.at(low, column, block.data)
            np.fmax.at(high, column, block.data)
            implicit_zero = np.diff(block.indptr) < chunk.n_rows
            low[implicit_zero] = np.minimum(low[implicit_zero], 0.0)
            high[implicit_zero] = np.maximum(high[implicit_zero], 0.0)
        else:
            block = chunk.values[:, self.features]
            low = np.fmin.reduce(block, axis=0, initial=np.inf)
            high = np.fmax.reduce(block, axis=0, initial=-np.inf)
        return self.merge(statistics, (low, high))

    def merge(self, first, second):
        return np.minimum(first[0], second[0]), np.maximum(first[1], second[1])

    def saved_statistics(self, statistics) -> dict:
        low, high = statistics
        return {"low": low, "high": high}

    def loaded_statistics(self, saved: dict):
        low, high = saved["low"], saved["high"]
        if any(
            not isinstance(a, np.ndarray) or a.dtype != np.float64 or a.shape != (len(self.features),)
            for a in (low, high)
        ):
            raise ValueError("'low' and 'high' are not one float64 per feature")
        return low, high

    def finalize(self, statistics) -> None:
        low, high = statistics
        present = low <= high
        self.minimum = np.where(present, low, 0.0)
        maximum = np.where(present, high, 0.0)
        refuse_infinite_ranges(self, np.where(present, low, 0.0), maximum)
        self.factor, (self.inner_exponent, self.outer_exponent) = range_scaling(
            self.minimum, maximum, np.ones(len(self.features))
        )

    def value_map(self):
        """(x − min) / (max − min)."""
        return scaling_map(self.factor, self.minimum, self.inner_exponent, self.outer_exponent)

    def state(self) -> dict:
        """The arrays alone: minmax has no options, and its models never recorded them."""
        return {key: getattr(self, key) for key in self.state_arrays}

    def load_state(self, state: dict) -> None:
        super().load_state(state)
        if np.any(self.factor < 0):
            raise invalid_state(self, "'factor' holds a negative value")


@hookimpl
def register_stages(register):
    """The row normalizers, ``minmax`` and ``binarize``."""
    register(L2Normalizer)
    register(L1Normalizer)
    register(MinMaxNormalizer)
    register(PresenceBinarizer)
