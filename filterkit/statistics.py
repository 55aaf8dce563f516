"""Mergeable per-feature statistics: value histograms by class.

:class:`ValueCounts` records, for every feature, every distinct non-zero value
and how many training rows of each class have it (weighted by instance
weights), plus per-class totals and missing counts, from which the zero counts
follow.  Its size follows the distinct values of the features, not the rows;
statistics of two parts of the data merge into those of the whole, whatever
the order of the rows.  Scorers, the shaper and the encoders all fit from it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from filterkit.errors import FilterkitError
from filterkit.schema import NOMINAL, Chunk
from filterkit.stage import Stage


# Integer values spanning fewer than this many steps are ranked by subtraction, not a sort,
# where every integer up to their magnitude is a float64.
_INTEGER_SPAN = 2**20
_EXACT_INTEGERS = 2.0**52
# Counts that are multiples of 2**-10 below 2**42 add up exactly in any order (52 bits).
_COUNT_QUANTUM, _EXACT_COUNT_TOTAL = 2.0**-10, 2.0**42


@dataclass
class ValueCounts:
    """Distinct non-zero values per feature with per-class weighted row counts.

    ``feature``, ``value``, ``label`` and ``count`` are parallel arrays sorted by
    (feature, value, label) with no repeated triple.  ``class_totals[c]`` counts
    rows of class c; ``missing[c, j]`` rows of class c where feature j is missing.
    """

    n_features: int
    n_classes: int
    feature: np.ndarray
    value: np.ndarray
    label: np.ndarray
    count: np.ndarray
    class_totals: np.ndarray
    missing: np.ndarray

    @classmethod
    def empty(cls, n_features: int, n_classes: int) -> "ValueCounts":
        """Statistics of no rows."""
        return cls(
            n_features, n_classes,
            np.zeros(0, np.int64), np.zeros(0), np.zeros(0, np.int64), np.zeros(0),
            np.zeros(n_classes), np.zeros((n_classes, n_features)),
        )

    def add(self, chunk: Chunk, features: np.ndarray, class_index: int | None) -> "ValueCounts":
        """These statistics with one chunk's rows added (rows with a missing class are skipped)."""
        return self.merge(ValueCounts.of_chunk(chunk, features, class_index, self.n_classes))

    @classmethod
    def of_chunk(cls, chunk: Chunk, features: np.ndarray, class_index: int | None, n_classes: int) -> "ValueCounts":
        """Statistics of one chunk's rows, for the given feature columns."""
        weights = chunk.weights if chunk.weights is not None else np.ones(chunk.n_rows)
        if class_index is None:
            labels = np.zeros(chunk.n_rows, dtype=np.int64)
            known = np.ones(chunk.n_rows, dtype=bool)
        else:
            classes = _column(chunk, class_index)
            known = ~np.isnan(classes)
            labels = np.where(known, classes, 0).astype(np.int64)
        block = chunk.values[:, features] if len(features) else sp.csr_matrix((chunk.n_rows, 0))
        block = sp.csr_matrix(block) if not sp.issparse(block) else block.tocsr()
        block.eliminate_zeros()
        rows = np.repeat(np.arange(chunk.n_rows), np.diff(block.indptr))
        columns, values = block.indices.astype(np.int64), block.data
        if not known.all():
            keep = known[rows]
            rows, columns, values = rows[keep], columns[keep], values[keep]
        class_totals = np.bincount(labels[known], weights=weights[known], minlength=n_classes)
        missing = np.zeros((n_classes, len(features)))
        missing_entry = np.isnan(values)
        if missing_entry.any():
            np.add.at(missing, (labels[rows[missing_entry]], columns[missing_entry]), weights[rows[missing_entry]])
            present = ~missing_entry
            rows, columns, values = rows[present], columns[present], values[present]
        count = weights[rows] if chunk.weights is not None else np.ones(len(rows))
        return cls(len(features), n_classes, columns, values, labels[rows], count, class_totals, missing)._compacted()

    def merge(self, other: "ValueCounts") -> "ValueCounts":
        """Statistics of the rows of both."""
        return ValueCounts(
            self.n_features, self.n_classes,
            np.concatenate([self.feature, other.feature]),
            np.concatenate([self.value, other.value]),
            np.concatenate([self.label, other.label]),
            np.concatenate([self.count, other.count]),
            self.class_totals + other.class_totals,
            self.missing + other.missing,
        )._compacted()

    def _compacted(self) -> "ValueCounts":
        """Sorted by (feature, value, label), each triple once with its counts summed.

        One sort of a single integer key (feature, value's rank, label) instead of a
        three-key lexsort: the values are ranked among the distinct values first.
        """
        if not len(self.feature):
            return self
        n_classes = max(self.n_classes, 1)
        lowest, highest = self.value.min(), self.value.max()
        if (max(-lowest, highest) < _EXACT_INTEGERS and highest - lowest < _INTEGER_SPAN
                and np.array_equal(self.value, np.floor(self.value))):
            # integer values (word counts): the value itself, less the lowest, is its rank
            distinct = lowest + np.arange(int(highest - lowest) + 1)
            value_rank = (self.value - lowest).astype(np.int64)
        else:
            distinct, value_rank = np.unique(self.value, return_inverse=True)
        n_values = len(distinct)
        if (self.n_features + 1) * n_values * n_classes >= 2**62:
            return self._compacted_by_lexsort()
        key = (self.feature * n_values + value_rank.ravel()) * n_classes + self.label
        if np.all(self.count == 1):
            # unweighted rows: a plain sort, and each key's count is its run length
            key = np.sort(key)
            starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
            unique_key = key[starts]
            count = np.diff(np.r_[starts, len(key)]).astype(np.float64)
        else:
            unique_key, inverse = np.unique(key, return_inverse=True)
            count = np.bincount(inverse.ravel(), weights=self.count, minlength=len(unique_key))
        rest, label = np.divmod(unique_key, n_classes)
        feature, rank = np.divmod(rest, n_values)
        return ValueCounts(self.n_features, self.n_classes, feature, distinct[rank], label, count,
                           self.class_totals, self.missing)

    def _compacted_by_lexsort(self) -> "ValueCounts":
        """:meth:`_compacted` for key spaces too large for one integer."""
        order = np.lexsort((self.label, self.value, self.feature))
        feature, value, label, count = self.feature[order], self.value[order], self.label[order], self.count[order]
        new = np.ones(len(feature), dtype=bool)
        new[1:] = (feature[1:] != feature[:-1]) | (value[1:] != value[:-1]) | (label[1:] != label[:-1])
        starts = np.flatnonzero(new)
        return ValueCounts(self.n_features, self.n_classes, feature[starts], value[starts], label[starts],
                           np.add.reduceat(count, starts), self.class_totals, self.missing)

    def sums_exactly(self) -> bool:
        """Whether these counts add up to the same float64 in any order (integers, and
        fractions of weights like 0.5, with totals far below 2**53)."""
        scaled = self.count / _COUNT_QUANTUM
        return bool(np.all(scaled == np.round(scaled)) and np.sum(self.count) < _EXACT_COUNT_TOTAL)

    def through(self, map_values) -> "ValueCounts | None":
        """The value counts of the same rows after each feature's values go through
        ``map_values(positions, values)``, an elementwise map that keeps 0 at 0; None
        when it moves a zero (zeros are not stored, so their new values are unknown),
        or when the counts carry weights whose sums depend on the order of adding
        (values merged by the map would then add up unlike a pass over the rows).

        A value mapped to 0 leaves the histogram (it is a zero now) and one mapped to
        NaN becomes missing, as a pass over the mapped rows would count them.
        """
        positions = np.arange(self.n_features)
        if np.any(map_values(positions, np.zeros(self.n_features)) != 0) or not self.sums_exactly():
            return None
        mapped = map_values(self.feature, self.value)
        missing = self.missing.copy()
        lost = np.isnan(mapped)
        np.add.at(missing, (self.label[lost], self.feature[lost]), self.count[lost])
        kept = ~lost & (mapped != 0)
        return ValueCounts(self.n_features, self.n_classes, self.feature[kept], mapped[kept], self.label[kept],
                           self.count[kept], self.class_totals.copy(), missing)._compacted()

    def of_features(self, positions: np.ndarray) -> "ValueCounts":
        """The counts of the features at ``positions``, renumbered in that order."""
        new_position = np.full(self.n_features, -1, dtype=np.int64)
        new_position[positions] = np.arange(len(positions))
        renumbered = new_position[self.feature]
        kept = renumbered >= 0
        return ValueCounts(len(positions), self.n_classes, renumbered[kept], self.value[kept], self.label[kept],
                           self.count[kept], self.class_totals.copy(), self.missing[:, positions])._compacted()

    def nonzero_counts(self) -> np.ndarray:
        """``[c, j]``: rows of class c whose feature j is present and not zero."""
        table = np.zeros((self.n_classes, self.n_features))
        np.add.at(table, (self.label, self.feature), self.count)
        return table

    def zero_counts(self) -> np.ndarray:
        """``[c, j]``: rows of class c whose feature j is exactly zero."""
        present = self.class_totals[:, None] - self.missing
        return np.maximum(present - self.nonzero_counts(), 0.0)

    def training_range(self) -> tuple[np.ndarray, np.ndarray]:
        """Per feature, the smallest and largest present training value (0 where zeros occur)."""
        feature, value, _ = self.histogram(include_zero=True)
        minimum = np.zeros(self.n_features)
        maximum = np.zeros(self.n_features)
        if len(feature):
            first = np.r_[True, feature[1:] != feature[:-1]]
            last = np.r_[feature[1:] != feature[:-1], True]
            minimum[feature[first]] = value[first]
            maximum[feature[last]] = value[last]
        return minimum, maximum

    def histogram(self, include_zero: bool = True):
        """Per feature, sorted distinct values with per-class counts.

        Returns ``(feature, value, counts)`` where ``counts[k, c]`` is the number
        of rows of class c at ``value[k]`` of ``feature[k]``; sorted by (feature,
        value); zero included (where any row has it) when ``include_zero``.
        """
        feature, value, label, count = self.feature, self.value, self.label, self.count
        if include_zero:
            zeros = self.zero_counts()
            zero_features = np.flatnonzero(zeros.sum(axis=0) > 0)
            z_feature = np.repeat(zero_features, self.n_classes)
            z_label = np.tile(np.arange(self.n_classes), len(zero_features))
            z_count = zeros[z_label, z_feature]
            feature = np.concatenate([feature, z_feature])
            value = np.concatenate([value, np.zeros(len(z_feature))])
            label = np.concatenate([label, z_label])
            count = np.concatenate([count, z_count])
        order = np.lexsort((label, value, feature))
        feature, value, label, count = feature[order], value[order], label[order], count[order]
        new = np.ones(len(feature), dtype=bool)
        new[1:] = (feature[1:] != feature[:-1]) | (value[1:] != value[:-1])
        group = np.cumsum(new) - 1
        counts = np.zeros((int(new.sum()), self.n_classes))
        np.add.at(counts, (group, label), count)
        return feature[new], value[new], counts


@dataclass
class PresenceCounts:
    """What presence scoring needs, and no value histogram: per class and feature the rows
    where the feature is non-zero, class totals, missing counts, and each feature's smallest
    and largest non-zero value.

    The same interface as :class:`ValueCounts` for presence scores and training ranges,
    at a cost that follows features × classes, not distinct values.
    """

    n_features: int
    n_classes: int
    nonzero: np.ndarray
    class_totals: np.ndarray
    missing: np.ndarray
    minimum: np.ndarray
    maximum: np.ndarray

    @classmethod
    def empty(cls, n_features: int, n_classes: int) -> "PresenceCounts":
        """Statistics of no rows."""
        return cls(n_features, n_classes, np.zeros((n_classes, n_features)), np.zeros(n_classes),
                   np.zeros((n_classes, n_features)), np.full(n_features, np.inf), np.full(n_features, -np.inf))

    def add(self, chunk: Chunk, features: np.ndarray, class_index: int | None) -> "PresenceCounts":
        """These statistics with one chunk's rows added (rows with a missing class are skipped)."""
        classes = _column(chunk, class_index)
        known = ~np.isnan(classes)
        labels = np.where(known, classes, 0).astype(np.int64)
        block = chunk.values[:, features] if len(features) else sp.csr_matrix((chunk.n_rows, 0))
        block = sp.csr_matrix(block) if not sp.issparse(block) else block.tocsr()
        rows = np.repeat(np.arange(chunk.n_rows), np.diff(block.indptr))
        columns, values = block.indices.astype(np.int64), block.data
        keep = known[rows] & (values != 0)
        if not keep.all():
            rows, columns, values = rows[keep], columns[keep], values[keep]
        n = len(features)
        weights = None if chunk.weights is None else chunk.weights[rows]
        missing_entry = np.isnan(values)
        missing = np.zeros((self.n_classes, n))
        if missing_entry.any():
            missing = self._by_class(labels[rows[missing_entry]], columns[missing_entry],
                                     None if weights is None else weights[missing_entry], n)
            present = ~missing_entry
            rows, columns, values = rows[present], columns[present], values[present]
            weights = None if weights is None else weights[present]
        nonzero = self._by_class(labels[rows], columns, weights, n)
        # per column smallest and largest value: the entries regrouped by column (CSC)
        row_starts = np.r_[0, np.cumsum(np.bincount(rows, minlength=chunk.n_rows))]
        by_column = sp.csr_matrix((values, columns, row_starts), shape=(chunk.n_rows, n)).tocsc()
        low, high = np.full(n, np.inf), np.full(n, -np.inf)
        filled = np.flatnonzero(np.diff(by_column.indptr))
        if len(filled):
            starts = by_column.indptr[filled]
            low[filled] = np.minimum.reduceat(by_column.data, starts)
            high[filled] = np.maximum.reduceat(by_column.data, starts)
        row_weights = np.ones(chunk.n_rows) if chunk.weights is None else chunk.weights
        totals = np.bincount(labels[known], weights=row_weights[known], minlength=self.n_classes)
        return self.merge(PresenceCounts(n, self.n_classes, nonzero, totals, missing, low, high))

    def _by_class(self, labels: np.ndarray, columns: np.ndarray, weights: np.ndarray | None, n: int) -> np.ndarray:
        """``[c, j]``: the summed weights (or the number) of entries of class c in column j."""
        counts = np.bincount(labels * n + columns, weights=weights, minlength=self.n_classes * n)
        return counts.astype(np.float64).reshape(self.n_classes, n)

    @classmethod
    def of_value_counts(cls, counts: ValueCounts) -> "PresenceCounts":
        """The presence statistics of the rows ``counts`` describes."""
        low, high = np.full(counts.n_features, np.inf), np.full(counts.n_features, -np.inf)
        np.minimum.at(low, counts.feature, counts.value)
        np.maximum.at(high, counts.feature, counts.value)
        return cls(counts.n_features, counts.n_classes, counts.nonzero_counts(), counts.class_totals.copy(),
                   counts.missing.copy(), low, high)

    def merge(self, other: "PresenceCounts") -> "PresenceCounts":
        """Statistics of the rows of both."""
        return PresenceCounts(
            self.n_features, self.n_classes, self.nonzero + other.nonzero, self.class_totals + other.class_totals,
            self.missing + other.missing, np.minimum(self.minimum, other.minimum), np.maximum(self.maximum, other.maximum),
        )

    def nonzero_counts(self) -> np.ndarray:
        """``[c, j]``: rows of class c whose feature j is present and not zero."""
        return self.nonzero

    def zero_counts(self) -> np.ndarray:
        """``[c, j]``: rows of class c whose feature j is exactly zero."""
        return np.maximum(self.class_totals[:, None] - self.missing - self.nonzero, 0.0)

    def training_range(self) -> tuple[np.ndarray, np.ndarray]:
        """Per feature, the smallest and largest present training value, 0 included where
        zeros occur (as :meth:`ValueCounts.training_range`); 0 for a feature never present."""
        has_zero = self.zero_counts().sum(axis=0) > 0
        low = np.where(has_zero, np.minimum(self.minimum, 0.0), self.minimum)
        high = np.where(has_zero, np.maximum(self.maximum, 0.0), self.maximum)
        present = np.isfinite(low)
        return np.where(present, low, 0.0), np.where(present, high, 0.0)


def _column(chunk: Chunk, index: int) -> np.ndarray:
    column = chunk.values[:, index]
    return np.asarray(column.toarray()).ravel() if sp.issparse(column) else np.asarray(column, dtype=float)


class ClassValueCountsStage(Stage):
    """A fitted stage whose statistics are the :class:`ValueCounts` of its features
    by class; it needs a nominal class attribute (``self.class_attribute``)."""

    fitted = True
    #: the statistics :meth:`finalize` was given (features × distinct values), kept until :meth:`statistics_for`
    training_counts: ValueCounts | PresenceCounts | None = None

    def prepare(self, schema, context) -> None:
        super().prepare(schema, context)
        if context.class_index is None or schema.attributes[context.class_index].kind != NOMINAL:
            raise FilterkitError(f"stage '{self.name}' needs a nominal class attribute (-c)")
        self.class_attribute = schema.attributes[context.class_index]

    def new_statistics(self) -> ValueCounts:
        return ValueCounts.empty(len(self.features), len(self.class_attribute.labels))

    def accumulate(self, statistics: ValueCounts, chunk: Chunk) -> ValueCounts:
        return statistics.add(chunk, self.features, self.context.class_index)

    def merge(self, first: ValueCounts, second: ValueCounts) -> ValueCounts:
        return first.merge(second)

    def value_map(self):
        """This fitted stage's transform as an elementwise map of (feature position,
        value) pairs, ``map(positions, values) -> values``, when it is one (every
        attribute stays in place, only the values of ``features`` change), else None.
        Such a stage derives the next stage's statistics without a pass
        (:meth:`statistics_for`)."""
        return None

    def statistics_for(self, following: Stage):
        """The next stage's statistics: this stage's training value counts sent through
        :meth:`value_map`, when both gather class value counts over the same rows and
        this stage keeps every attribute in place.  The counts are released after."""
        counts, self.training_counts = self.training_counts, None
        value_map = self.value_map()
        if not isinstance(following, ClassValueCountsStage) or not isinstance(counts, ValueCounts) \
                or value_map is None or len(self.output_schema().attributes) != len(self.input_schema.attributes):
            return None
        mapped = counts.through(value_map)
        return None if mapped is None else following.statistics_from(mapped, self.features, self.context.class_index)

    def statistics_from(self, counts: ValueCounts, columns: np.ndarray, class_index: int | None):
        """This stage's statistics taken from value counts of its training rows over the
        columns ``columns``, or None when they do not cover its features and class, or
        when the stage gathers statistics of its own kind."""
        if type(self).accumulate is not ClassValueCountsStage.accumulate or class_index != self.context.class_index:
            return None
        empty = self.new_statistics()
        position_of = np.full(max(int(columns.max(initial=-1)), int(self.features.max(initial=-1))) + 1, -1, dtype=np.int64)
        position_of[columns] = np.arange(len(columns))
        positions = position_of[self.features]
        if (positions < 0).any() or counts.n_classes != empty.n_classes:
            return None
        own = counts.of_features(positions)
        if type(empty) is ValueCounts:
            return own
        if type(empty) is PresenceCounts:
            return PresenceCounts.of_value_counts(own)
        return None
