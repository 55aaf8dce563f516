"""Mergeable per-feature statistics: value histograms by class, with exact weighted sums.

:class:`ValueCounts` records, for every feature, every distinct non-zero value
and the summed instance weights of the training rows of each class that have it,
plus per-class totals and missing counts, from which the zero counts follow.
:class:`PresenceCounts` records only what presence scores need.  Their size
follows the distinct values of the features and the classes that occur, not the
rows or the declared classes; statistics of two parts of the data merge into
those of the whole.

Weights are summed exactly and tables keyed by sorted keys kept as sorted runs
(:mod:`filterkit.exact`), so no order of the rows, chunk size or partitioning
changes a bit of any count, and fitting costs O(n log n) in the distinct values.

The per-chunk work on a sparse chunk (finding its entries, each feature's range, and for
unit weights the counts themselves) runs in the compiled module ``filterkit._kernels``;
numpy counts what it declines (weights, missing values, values that are not whole numbers
close together), and everything with :data:`filterkit.kernels.ARRAYS` off.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from filterkit import kernels
from filterkit.errors import FilterkitError
from filterkit.exact import (
    ExactSums,
    SortedSums,
    checked_weights,
    complex_keys,
    stable_order,
    sums_of_rows,
)
from filterkit.schema import Chunk, CsrArrays
from filterkit.stage import feature_positions

# Integer values spanning fewer than this many steps are ranked by subtraction, not a sort,
# where every integer up to their magnitude is a float64.
_INTEGER_SPAN = 2**20
_EXACT_INTEGERS = 2.0**52


class ClassCounts:
    """What every class statistic holds: exact per-class row totals (``totals``), and per
    (feature, class) pair that occurs the rows where the feature is non-zero
    (``nonzero_table``) or missing (``missing_table``), keyed ``feature · n_classes + class``.
    Pairs that do not occur take no space, so the size follows the data, not
    features × declared classes."""

    n_features: int
    n_classes: int
    totals: ExactSums
    missing_table: SortedSums

    @property
    def nonzero_table(self) -> SortedSums:
        raise NotImplementedError

    @property
    def class_totals(self) -> np.ndarray:
        """Per class, the summed weight of its rows (refused when all rows together weigh
        more than the largest double: no count could be written)."""
        if not np.isfinite(self.totals.total().to_float()).all():
            raise FilterkitError("the instance weights add up to more than the largest double (1.8e308)")
        return self.totals.to_float()

    def _pairs(self, table: SortedSums) -> tuple[np.ndarray, np.ndarray, ExactSums]:
        keys, sums = table.settled()
        feature, label = np.divmod(keys, max(self.n_classes, 1))
        return feature, label, sums

    @functools.cached_property
    def _by_class(self) -> dict:
        """Per table (``"nonzero"``, ``"missing"``): its pairs regrouped by class, as
        ``(feature, sums, starts)`` with class c's rows at ``starts[c]:starts[c + 1]``."""
        grouped = {}
        for name, table in (("nonzero", self.nonzero_table), ("missing", self.missing_table)):
            feature, label, sums = self._pairs(table)
            order = stable_order(label)
            starts = np.searchsorted(label[order], np.arange(self.n_classes + 1))
            grouped[name] = (feature[order], sums[order], starts)
        return grouped

    @functools.cached_property
    def _of_every_class(self) -> dict:
        """Per table, its sums per feature over every class."""
        totals = {}
        for name, table in (("nonzero", self.nonzero_table), ("missing", self.missing_table)):
            feature, _, sums = self._pairs(table)
            starts = np.flatnonzero(np.diff(feature, prepend=-1))  # each feature's first pair (none for no pairs)
            totals[name] = sums.group_sums(starts).scattered(feature[starts], self.n_features)
        return totals

    def _per_feature(self, name: str, target: int | None) -> ExactSums:
        """Per feature, the sums of table ``name`` for class ``target`` (None: of every class)."""
        if target is None:
            return self._of_every_class[name]
        feature, sums, starts = self._by_class[name]
        rows = slice(starts[target], starts[target + 1])
        return sums[rows].scattered(feature[rows], self.n_features)

    def _class_total(self, target: int | None) -> ExactSums:
        total = self.totals.total() if target is None else self.totals[np.array([target])]
        return ExactSums(np.repeat(total.digits, self.n_features, axis=0), total.lowest)

    def present_sums(self, target: int | None) -> ExactSums:
        """Per feature, the rows of class ``target`` (None: of every class) where it is not missing."""
        return self._class_total(target).minus(self._per_feature("missing", target))

    def nonzero_sums(self, target: int | None) -> ExactSums:
        """Per feature, the rows of class ``target`` (None: of every class) where it is non-zero."""
        return self._per_feature("nonzero", target)

    def missing_sums(self, target: int | None) -> ExactSums:
        """Per feature, the rows of class ``target`` (None: of every class) where it is missing."""
        return self._per_feature("missing", target)

    def zero_sums(self, target: int | None) -> ExactSums:
        """Per feature, the rows of class ``target`` (None: of every class) where it is exactly 0."""
        return self.present_sums(target).minus(self.nonzero_sums(target))

    @functools.cached_property
    def _occurring_pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every (feature, class) pair with non-zero or missing rows, by key: the key, and the rows of the
        class where the feature is zero, non-zero and missing, each an exact sum rounded once."""
        nonzero_keys, nonzero_sums = self.nonzero_table.settled()
        missing_keys, missing_sums = self.missing_table.settled()
        keys = np.union1d(nonzero_keys, missing_keys)
        nonzero = nonzero_sums.scattered(np.searchsorted(keys, nonzero_keys), len(keys))
        missing = missing_sums.scattered(np.searchsorted(keys, missing_keys), len(keys))
        zero = self.totals[keys % max(self.n_classes, 1)].minus(missing).minus(nonzero)
        return keys, zero.to_float(), nonzero.to_float(), missing.to_float()

    def class_columns(self, features: np.ndarray, classes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``[feature, k]`` for the ``features`` and ``classes`` given (each ascending): the rows of class
        ``classes[k]`` where the feature is zero, non-zero and missing, as :meth:`zero_sums`,
        :meth:`nonzero_sums` and :meth:`missing_sums` give them; only the pairs that occur are looked up."""
        shape = (len(features), len(classes))
        zero = np.broadcast_to(self.class_totals[classes], shape).copy()
        nonzero, missing = np.zeros(shape), np.zeros(shape)
        keys, pair_zero, pair_nonzero, pair_missing = self._occurring_pairs
        if len(features) and len(classes):
            width = max(self.n_classes, 1)
            span = slice(*np.searchsorted(keys, [features[0] * width, (features[-1] + 1) * width]))
            feature, label = np.divmod(keys[span], width)
            row = np.minimum(np.searchsorted(features, feature), len(features) - 1)
            column = np.minimum(np.searchsorted(classes, label), len(classes) - 1)
            held = np.flatnonzero((features[row] == feature) & (classes[column] == label))
            at = (row[held], column[held])
            held += span.start
            zero[at], nonzero[at], missing[at] = pair_zero[held], pair_nonzero[held], pair_missing[held]
        return zero, nonzero, missing

    @functools.cached_property
    def _present_of_every_class(self) -> ExactSums:
        return self.present_sums(None)

    def presence_table(self, target: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per feature ``(tp, fp, pos, neg)`` of class ``target`` vs the rest, a row "having" the
        feature where it is non-zero; each count an exact sum, rounded once."""
        has, has_all = self.nonzero_sums(target), self.nonzero_sums(None)
        present, present_all = self.present_sums(target), self._present_of_every_class
        return (
            has.to_float(),
            has_all.minus(has).to_float(),
            present.to_float(),
            present_all.minus(present).to_float(),
        )

    def vocabulary_sums(self, target: int) -> tuple[float, float]:
        """Σ tp and Σ fp of :meth:`presence_table` over every feature: the rows of class ``target``, and
        of the other classes, where each feature is non-zero, added up exactly and rounded once (exact
        sums of the merged tables, so they merge as the tables do)."""
        has, has_all = self.nonzero_sums(target), self.nonzero_sums(None)
        return float(has.total().to_float()[0]), float(has_all.minus(has).total().to_float()[0])

    def _value_range(self) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def _reclassed_pairs(self, table: SortedSums, mapping: np.ndarray, n_classes: int) -> SortedSums:
        """A (feature, class) table with class c called ``mapping[c]`` among ``n_classes``."""
        feature, label, sums = self._pairs(table)
        return SortedSums.of_entries(feature * n_classes + mapping[label], sums)

    def _renumbered(self, table: SortedSums, new_position: np.ndarray) -> SortedSums:
        """A (feature, class) table with each feature at ``new_position[feature]`` (−1: left out)."""
        feature, label, sums = self._pairs(table)
        renumbered = new_position[feature]
        kept = renumbered >= 0
        return SortedSums.of_entries(renumbered[kept] * max(self.n_classes, 1) + label[kept], sums[kept])

    def training_range(self) -> tuple[np.ndarray, np.ndarray]:
        """Per feature, the smallest and largest present training value, 0 included where
        zeros occur; 0 for a feature never present."""
        low, high = self._value_range()
        has_zero = self.zero_sums(None).to_float() > 0
        low = np.where(has_zero, np.minimum(low, 0.0), low)
        high = np.where(has_zero, np.maximum(high, 0.0), high)
        present = low <= high
        return np.where(present, low, 0.0), np.where(present, high, 0.0)


def row_labels(chunk: Chunk, class_index: int | np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Each row's class code (0 where it is missing) and whether it is known; ``class_index`` is the class
    column's position, or each row's code itself (NaN: missing; a label set's, :class:`LabelSetStatistics`)."""
    if class_index is None:
        return np.zeros(chunk.n_rows, dtype=np.int64), np.ones(chunk.n_rows, dtype=bool)
    classes = class_index if isinstance(class_index, np.ndarray) else chunk.column(class_index)
    known = ~np.isnan(classes)
    return np.where(known, classes, 0).astype(np.int64), known


def _class_totals(
    labels: np.ndarray, known: np.ndarray, n_classes: int, weights: np.ndarray | None = None
) -> ExactSums:
    """Per class, the exact summed weight of the rows whose class is known (``weights`` None: unit weights)."""
    if weights is None:
        return ExactSums.of_counts(np.bincount(labels[known], minlength=n_classes))
    return ExactSums.by_group(labels[known], weights[known], n_classes)


def _csr_arrays(rows: CsrArrays) -> dict[str, np.ndarray]:
    """A sparse chunk's ``indptr``, ``indices`` and float64 ``data`` (:meth:`Chunk.csr`), contiguous,
    by the names the kernels take them by."""
    return {
        "indptr": np.ascontiguousarray(rows.indptr),
        "indices": np.ascontiguousarray(rows.indices),
        "data": np.ascontiguousarray(rows.data, dtype=np.float64),
    }


def _chunk_entries(chunk: Chunk, features: np.ndarray, class_index: int | np.ndarray | None, n_classes: int, weights):
    """The stored entries of a chunk's feature columns for rows with a known class, zeros left out:
    ``(rows, columns, pairs, values, totals, missing)`` of the present values, ``pairs`` numbering
    each entry's (feature, class) as ``column · n_classes + label``; ``totals`` sums the known rows
    per class, ``missing`` the missing entries per pair (``weights``: None for unit weights)."""
    labels, known = row_labels(chunk, class_index)
    if chunk.is_sparse:
        # the feature columns found through a position map: a pass over the stored entries,
        # where slicing the columns out (values[:, features]) cost a copy of the chunk
        matrix = chunk.csr()
        position = feature_positions(matrix.shape[1], features)
        rows, columns, pairs, values = _sparse_entries(matrix, position, np.where(known, labels, -1), max(n_classes, 1))
    else:
        # the non-zero cells (NaN included) in row order, as a CSR matrix of the block would store them
        block = chunk.values[:, features]
        rows, columns = np.nonzero(block)
        rows, columns, values = rows.astype(np.int64), columns.astype(np.int64), block[rows, columns]
        keep = known[rows]
        rows, columns, values = rows[keep], columns[keep], values[keep]
        pairs = columns * max(n_classes, 1) + labels[rows]
    totals = _class_totals(labels, known, n_classes, weights)
    lost = np.isnan(values)
    missing = SortedSums.of_entries(pairs[lost], sums_of_rows(weights, rows[lost]))
    return rows[~lost], columns[~lost], pairs[~lost], values[~lost], totals, missing


def _sparse_entries(matrix: CsrArrays, position: np.ndarray, labels: np.ndarray, n_classes: int):
    """``(rows, columns, pairs, values)`` of :func:`_chunk_entries` for CSR arrays (``labels``
    −1 for a row whose class is missing), by the compiled kernel."""
    n = int(matrix.indptr[-1])
    rows, columns, pairs = (np.empty(n, dtype=np.int64) for _ in range(3))
    values = np.empty(n)
    found = kernels.arrays.sparse_entries(
        **_csr_arrays(matrix),
        position=position,
        labels=labels,
        n_classes=n_classes,
        rows=rows,
        columns=columns,
        pairs=pairs,
        values=values,
    )
    return rows[:found], columns[:found], pairs[:found], values[:found]


def column_ranges(columns: np.ndarray, values: np.ndarray, n: int):
    """Per column of ``n``, the smallest and largest of the entries' values (±inf for none);
    the values hold no NaN, so the order they are met in does not matter."""
    low, high = np.full(n, np.inf), np.full(n, -np.inf)
    kernels.arrays.column_ranges(
        np.ascontiguousarray(columns, dtype=np.int64), np.ascontiguousarray(values, dtype=np.float64), low, high
    )
    return low, high


def _check_key_space(n_features: int, n_classes: int) -> None:
    if n_features * max(n_classes, 1) >= 2**53:
        raise FilterkitError(f"{n_features} features × {n_classes} classes are too many to count")


def sums_through(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Each entry's sum of the ``values`` of its group up to and including it, the entries of a group together (a
    histogram's features): a segmented scan (Hillis and Steele's, log₂ n passes), so that no sum takes in another
    group's values, as a running total over every group less its value at the group's start did (a group's small
    weights were lost to the others' large ones, and its sums hung on theirs)."""
    sums = values.astype(np.float64)
    starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]]) if len(groups) else np.zeros(0, np.int64)
    longest = int(np.diff(np.r_[starts, len(groups)]).max()) if len(starts) else 0
    shift = 1
    while shift < longest:  # log₂ of the longest group's passes
        sums[shift:] += np.where(groups[shift:] == groups[:-shift], sums[:-shift], 0.0)
        shift *= 2
    return sums


@dataclass
class Histogram:
    """Per feature, its distinct training values (``feature``, ``value``: sorted by feature,
    then value; 0 included where rows have it) with the summed weight of their rows
    (``rows``); :meth:`of_class` gives one class's share of each."""

    feature: np.ndarray
    value: np.ndarray
    rows: np.ndarray
    counts: "ValueCounts"
    entry_group: np.ndarray
    zero_group: np.ndarray
    entry_sums: ExactSums
    entry_order: np.ndarray
    entry_starts: np.ndarray

    @functools.cached_property
    def _entry_feature_and_label(self) -> tuple[np.ndarray, np.ndarray]:
        """Each table entry's feature (ascending: the table is in key order) and class."""
        label = np.empty(len(self.entry_group), dtype=np.int64)
        label[self.entry_order] = np.repeat(np.arange(len(self.entry_starts) - 1), np.diff(self.entry_starts))
        return self.feature[self.entry_group], label

    def class_matrix(self, features: np.ndarray, classes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The entries of the ``features`` given (ascending), and ``[entry, k]``: each one's rows of class
        ``classes[k]`` (ascending), as :meth:`of_class` gives them, at a cost that follows those entries."""
        span = slice(
            int(np.searchsorted(self.feature, features[0], side="left")),
            int(np.searchsorted(self.feature, features[-1], side="right")),
        )
        entries = span.start + np.flatnonzero(np.isin(self.feature[span], features))
        matrix = np.zeros((len(entries), len(classes)))
        entry_feature, entry_label = self._entry_feature_and_label
        table = slice(*np.searchsorted(entry_feature, [features[0], features[-1] + 1]))
        group, label = self.entry_group[table], entry_label[table]
        row = np.minimum(np.searchsorted(entries, group), max(len(entries) - 1, 0))
        column = np.minimum(np.searchsorted(classes, label), max(len(classes) - 1, 0))
        if len(entries) and len(classes):
            held = np.flatnonzero((entries[row] == group) & (classes[column] == label))
            matrix[row[held], column[held]] = self.entry_sums[table.start + held].to_float()
            zero_group = self.zero_group[features]
            has_zero = zero_group >= 0
            zero = self.counts.class_columns(features[has_zero], classes)[0]
            matrix[np.searchsorted(entries, zero_group[has_zero])] = np.maximum(zero, 0.0)
        return entries, matrix

    def of_class(self, target: int) -> np.ndarray:
        """Per (feature, value), the summed weight of the rows of class ``target``."""
        shares = np.zeros(len(self.feature))
        chosen = self.entry_order[self.entry_starts[target] : self.entry_starts[target + 1]]
        shares[self.entry_group[chosen]] = self.entry_sums[chosen].to_float()
        has_zero = self.zero_group >= 0
        if has_zero.any():
            shares[self.zero_group[has_zero]] = np.maximum(self.counts.zero_sums(target).to_float()[has_zero], 0.0)
        return shares


class ValueCounts(ClassCounts):
    """Distinct non-zero values per feature with per-class exact weighted row counts.

    ``table`` holds one sum per (feature, class, value) that occurs, keyed by the complex
    number ``(feature · n_classes + class) + i·value`` (:meth:`entries` lists it).
    """

    def __init__(
        self, n_features: int, n_classes: int, table: SortedSums, totals: ExactSums, missing_table: SortedSums
    ):
        _check_key_space(n_features, n_classes)
        self.n_features, self.n_classes = n_features, n_classes
        self.table, self.totals, self.missing_table = table, totals, missing_table

    @classmethod
    def empty(cls, n_features: int, n_classes: int) -> "ValueCounts":
        """Statistics of no rows."""
        return cls(
            n_features, n_classes, SortedSums.empty(np.complex128), ExactSums.zeros(n_classes), SortedSums.empty()
        )

    def add(self, chunk: Chunk, features: np.ndarray, class_index: int | np.ndarray | None) -> "ValueCounts":
        """These statistics with one chunk's rows added (rows with a missing class are skipped)."""
        return self.merge(ValueCounts.of_chunk(chunk, features, class_index, self.n_classes))

    @classmethod
    def of_chunk(
        cls, chunk: Chunk, features: np.ndarray, class_index: int | np.ndarray | None, n_classes: int
    ) -> "ValueCounts":
        """Statistics of one chunk's rows, for the given feature columns."""
        weights = checked_weights(chunk)
        if weights is None and chunk.is_sparse:
            compiled = cls._compiled_of_chunk(chunk, features, class_index, n_classes)
            if compiled is not None:
                return compiled
        rows, _, pair, values, totals, missing = _chunk_entries(chunk, features, class_index, n_classes, weights)
        table = _value_table(pair, values, sums_of_rows(weights, rows))
        return cls(len(features), n_classes, table, totals, missing)

    @classmethod
    def _compiled_of_chunk(
        cls, chunk: Chunk, features: np.ndarray, class_index: int | np.ndarray | None, n_classes: int
    ) -> "ValueCounts | None":
        """:meth:`of_chunk` of a sparse chunk of unit weights by the compiled kernel, in one pass
        over its stored entries: the same table (:func:`_value_table`'s keys and counts); None
        where the numpy path is needed (a missing value, values that are not whole numbers
        close together, :data:`filterkit.kernels.ARRAYS` off)."""
        if not kernels.use_compiled(kernels.ARRAYS):
            return None
        matrix = chunk.csr()
        labels, known = row_labels(chunk, class_index)
        n = int(matrix.indptr[-1])
        pairs, values, counts = np.empty(n, dtype=np.int64), np.empty(n), np.empty(n, dtype=np.int64)
        found = kernels.arrays.value_counts(
            **_csr_arrays(matrix),
            position=feature_positions(matrix.shape[1], features),
            labels=np.where(known, labels, -1),
            n_classes=max(n_classes, 1),
            out_pairs=pairs,
            out_values=values,
            out_counts=counts,
        )
        if found is None:
            return None
        table = SortedSums.of_sorted(
            complex_keys(pairs[:found].astype(np.float64), values[:found]),
            ExactSums.of_counts(counts[:found]),
            np.complex128,
        )
        return cls(len(features), n_classes, table, _class_totals(labels, known, n_classes), SortedSums.empty())

    def merge(self, other: "ValueCounts") -> "ValueCounts":
        """Statistics of the rows of both."""
        return ValueCounts(
            self.n_features,
            self.n_classes,
            self.table.merged_with(other.table),
            self.totals.plus(other.totals),
            self.missing_table.merged_with(other.missing_table),
        )

    def entries(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, ExactSums]:
        """``table`` in key order: each entry's feature position, value, class code and summed row weight."""
        keys, sums = self.table.settled()
        feature, label = np.divmod(keys.real.astype(np.int64), max(self.n_classes, 1))
        return feature, keys.imag.copy(), label, sums

    @functools.cached_property
    def nonzero_table(self) -> SortedSums:
        """Per (feature, class), the rows where the feature is non-zero."""
        keys, sums = self.table.settled()
        pair = keys.real.astype(np.int64)
        starts = np.flatnonzero(np.diff(pair, prepend=-1))  # each pair's first value (none for no entries)
        return SortedSums.of_sorted(pair[starts], sums.group_sums(starts))

    def _value_range(self) -> tuple[np.ndarray, np.ndarray]:
        feature, value, _, _ = self.entries()
        return column_ranges(feature, value, self.n_features)

    def histogram(self, include_zero: bool = True) -> Histogram:
        """Per feature, its sorted distinct values with their rows (see :class:`Histogram`)."""
        feature, value, label, sums = self.entries()
        order = np.lexsort((value, feature))
        sorted_feature, sorted_value = feature[order], value[order]
        new = np.ones(len(order), dtype=bool)
        new[1:] = (sorted_feature[1:] != sorted_feature[:-1]) | (sorted_value[1:] != sorted_value[:-1])
        starts = np.flatnonzero(new)
        group_feature, group_value = sorted_feature[starts], sorted_value[starts]
        group_rows = sums[order].group_sums(starts).to_float()
        entry_group = np.empty(len(order), dtype=np.int64)
        entry_group[order] = np.cumsum(new) - 1
        zero_all = self.zero_sums(None).to_float() if include_zero else np.zeros(self.n_features)
        zero_features = np.flatnonzero(zero_all > 0)
        zero_rows = zero_all[zero_features]
        all_feature = np.concatenate([group_feature, zero_features])
        all_value = np.concatenate([group_value, np.zeros(len(zero_features))])
        placed = np.lexsort((all_value, all_feature))
        position = np.empty(len(placed), dtype=np.int64)
        position[placed] = np.arange(len(placed))
        zero_group = np.full(self.n_features, -1, dtype=np.int64)
        zero_group[zero_features] = position[len(group_feature) :]
        by_class = stable_order(label)
        return Histogram(
            all_feature[placed],
            all_value[placed],
            np.concatenate([group_rows, zero_rows])[placed],
            self,
            position[entry_group],
            zero_group,
            sums,
            by_class,
            np.searchsorted(label[by_class], np.arange(self.n_classes + 1)),
        )

    def through(self, map_values) -> "ValueCounts | None":
        """The value counts of the same rows after each feature's values go through
        ``map_values(positions, values)``, an elementwise map that keeps 0 at 0; None
        when it moves a zero (zeros are not stored, so their new values are unknown), or gives a
        number to a missing value (the counts keep no value for it).

        A value mapped to 0 leaves the histogram (it is a zero now) and one mapped to
        NaN becomes missing, as a pass over the mapped rows would count them; sums are
        exact, so the result is the pass's to the bit.
        """
        positions = np.arange(self.n_features)
        if np.any(map_values(positions, np.zeros(self.n_features)) != 0):
            return None
        has_missing = np.unique(self._pairs(self.missing_table)[0])
        if not np.isnan(map_values(has_missing, np.full(len(has_missing), np.nan))).all():
            return None
        feature, value, label, sums = self.entries()
        mapped = map_values(feature, value)
        pair = feature * max(self.n_classes, 1) + label
        lost = np.isnan(mapped)
        missing = self.missing_table.merged_with(SortedSums.of_entries(pair[lost], sums[lost]))
        kept = ~lost & (mapped != 0)
        table = _value_table(pair[kept], mapped[kept], sums[kept])
        return ValueCounts(self.n_features, self.n_classes, table, self.totals, missing)

    def reclassed(self, mapping: np.ndarray, n_classes: int) -> "ValueCounts":
        """The same counts with class c called ``mapping[c]`` among ``n_classes`` (distinct codes)."""
        feature, value, label, sums = self.entries()
        table = _value_table(feature * n_classes + mapping[label], value, sums)
        missing = self._reclassed_pairs(self.missing_table, mapping, n_classes)
        return ValueCounts(self.n_features, n_classes, table, self.totals.scattered(mapping, n_classes), missing)

    def of_features(self, positions: np.ndarray) -> "ValueCounts":
        """The counts of the features at ``positions``, renumbered in that order; −1 for a feature that is 0
        in every row (an attribute the rows were not given: ``filterkit update``'s new word)."""
        new_position = _renumbering(self.n_features, positions)
        feature, value, label, sums = self.entries()
        renumbered = new_position[feature]
        kept = renumbered >= 0
        table = _value_table(renumbered[kept] * max(self.n_classes, 1) + label[kept], value[kept], sums[kept])
        missing = self._renumbered(self.missing_table, new_position)
        return ValueCounts(len(positions), self.n_classes, table, self.totals, missing)


def _renumbering(n_features: int, positions: np.ndarray) -> np.ndarray:
    """Per feature of ``n_features``, its place among ``positions`` (−1 where it is not one of them)."""
    new_position = np.full(n_features, -1, dtype=np.int64)
    held = np.flatnonzero(positions >= 0)
    new_position[positions[held]] = held
    return new_position


def _value_table(pair: np.ndarray, values: np.ndarray, sums: ExactSums | None) -> SortedSums:
    """The sums per distinct (pair, value), keyed ``pair + i·value``.

    Sorted by one integer key (pair, value's rank) where it fits, the values ranked
    among the distinct values first (by subtraction for integers close together).
    """
    if not len(pair):
        return SortedSums.empty(np.complex128)
    lowest, highest = values.min(), values.max()
    if (
        max(-lowest, highest) < _EXACT_INTEGERS
        and highest - lowest < _INTEGER_SPAN
        and np.array_equal(values, np.floor(values))
    ):
        distinct = lowest + np.arange(int(highest - lowest) + 1)
        rank = (values - lowest).astype(np.int64)
    else:
        distinct, rank = np.unique(values, return_inverse=True)
        rank = rank.ravel()
    n_values = len(distinct)
    if (int(pair.max()) + 1) * n_values >= 2**62:
        return SortedSums.of_entries(complex_keys(pair.astype(np.float64), values), sums, np.complex128)
    table_keys, table_sums = SortedSums.of_entries(pair * n_values + rank, sums).settled()
    pair_of, rank_of = np.divmod(table_keys, n_values)
    return SortedSums.of_sorted(complex_keys(pair_of.astype(np.float64), distinct[rank_of]), table_sums, np.complex128)


class PresenceCounts(ClassCounts):
    """What presence scoring needs, and no value histogram: the tables of :class:`ClassCounts` and
    each feature's smallest and largest non-zero value, at a cost that follows the (feature, class)
    pairs that occur, not distinct values."""

    def __init__(
        self,
        n_features: int,
        n_classes: int,
        nonzero_table: SortedSums,
        totals: ExactSums,
        missing_table: SortedSums,
        minimum: np.ndarray,
        maximum: np.ndarray,
    ):
        _check_key_space(n_features, n_classes)
        self.n_features, self.n_classes = n_features, n_classes
        self._nonzero_table, self.totals, self.missing_table = nonzero_table, totals, missing_table
        self.minimum, self.maximum = minimum, maximum

    @property
    def nonzero_table(self) -> SortedSums:
        """Per (feature, class), the rows where the feature is non-zero."""
        return self._nonzero_table

    def reclassed(self, mapping: np.ndarray, n_classes: int) -> "PresenceCounts":
        """The same counts with class c called ``mapping[c]`` among ``n_classes`` (distinct codes)."""
        return PresenceCounts(
            self.n_features,
            n_classes,
            self._reclassed_pairs(self._nonzero_table, mapping, n_classes),
            self.totals.scattered(mapping, n_classes),
            self._reclassed_pairs(self.missing_table, mapping, n_classes),
            self.minimum,
            self.maximum,
        )

    @classmethod
    def empty(cls, n_features: int, n_classes: int) -> "PresenceCounts":
        """Statistics of no rows."""
        return cls(
            n_features,
            n_classes,
            SortedSums.empty(),
            ExactSums.zeros(n_classes),
            SortedSums.empty(),
            np.full(n_features, np.inf),
            np.full(n_features, -np.inf),
        )

    def add(self, chunk: Chunk, features: np.ndarray, class_index: int | np.ndarray | None) -> "PresenceCounts":
        """These statistics with one chunk's rows added (rows with a missing class are skipped)."""
        weights = checked_weights(chunk)
        if weights is None and chunk.is_sparse:
            compiled = self._compiled_of_chunk(chunk, features, class_index)
            if compiled is not None:
                return self.merge(compiled)
        rows, columns, pair, values, totals, missing = _chunk_entries(
            chunk, features, class_index, self.n_classes, weights
        )
        nonzero = SortedSums.of_entries(pair, sums_of_rows(weights, rows))
        low, high = column_ranges(columns, values, len(features))
        return self.merge(PresenceCounts(len(features), self.n_classes, nonzero, totals, missing, low, high))

    def _compiled_of_chunk(self, chunk: Chunk, features: np.ndarray, class_index: int | np.ndarray | None):
        """One sparse chunk's presence statistics (unit weights) by the compiled kernel, in one pass
        over its stored entries and a tally of the (feature, class) pairs: what the numpy path
        gathers; None where that path is needed (a missing value, or more pairs than four a
        stored entry, past a million, to tally; :data:`filterkit.kernels.ARRAYS` off)."""
        matrix = chunk.csr()
        n, classes = len(features), max(self.n_classes, 1)
        if n * classes > 4 * int(matrix.indptr[-1]) + (1 << 20) or not kernels.use_compiled(kernels.ARRAYS):
            return None
        labels, known = row_labels(chunk, class_index)
        pairs, counts = np.empty(n * classes, dtype=np.int64), np.empty(n * classes, dtype=np.int64)
        low, high = np.full(n, np.inf), np.full(n, -np.inf)
        found = kernels.arrays.presence_counts(
            **_csr_arrays(matrix),
            position=feature_positions(matrix.shape[1], features),
            labels=np.where(known, labels, -1),
            n_classes=classes,
            n_features=n,
            out_pairs=pairs,
            out_counts=counts,
            low=low,
            high=high,
        )
        if found is None:
            return None
        nonzero = SortedSums.of_sorted(pairs[:found].copy(), ExactSums.of_counts(counts[:found]))
        totals = _class_totals(labels, known, self.n_classes)
        return PresenceCounts(n, self.n_classes, nonzero, totals, SortedSums.empty(), low, high)

    @classmethod
    def of_value_counts(cls, counts: ValueCounts) -> "PresenceCounts":
        """The presence statistics of the rows ``counts`` describes."""
        low, high = counts._value_range()
        return cls(
            counts.n_features, counts.n_classes, counts.nonzero_table, counts.totals, counts.missing_table, low, high
        )

    def merge(self, other: "PresenceCounts") -> "PresenceCounts":
        """Statistics of the rows of both."""
        return PresenceCounts(
            self.n_features,
            self.n_classes,
            self.nonzero_table.merged_with(other.nonzero_table),
            self.totals.plus(other.totals),
            self.missing_table.merged_with(other.missing_table),
            np.minimum(self.minimum, other.minimum),
            np.maximum(self.maximum, other.maximum),
        )

    def _value_range(self) -> tuple[np.ndarray, np.ndarray]:
        return self.minimum, self.maximum

    def of_features(self, positions: np.ndarray) -> "PresenceCounts":
        """The counts of the features at ``positions``, renumbered in that order (−1: as for :class:`ValueCounts`)."""
        new_position = _renumbering(self.n_features, positions)
        held = np.flatnonzero(positions >= 0)
        minimum, maximum = np.full(len(positions), np.inf), np.full(len(positions), -np.inf)
        minimum[held], maximum[held] = self.minimum[positions[held]], self.maximum[positions[held]]
        return PresenceCounts(
            len(positions),
            self.n_classes,
            self._renumbered(self.nonzero_table, new_position),
            self.totals,
            self._renumbered(self.missing_table, new_position),
            minimum,
            maximum,
        )


@dataclass
class LabelStatistics:
    """Statistics of multi-label rows (binary relevance): one class statistic per label, each of the
    label's two-class task (``{0,1}``); they merge label by label, so any chunking gives the same."""

    per_label: list

    def merge(self, other: "LabelStatistics") -> "LabelStatistics":
        """The statistics of both parts."""
        return LabelStatistics([mine.merge(theirs) for mine, theirs in zip(self.per_label, other.per_label)])

    def of_features(self, positions: np.ndarray) -> "LabelStatistics":
        """Each label's statistics of the features at ``positions`` (as their ``of_features``)."""
        return LabelStatistics([counts.of_features(positions) for counts in self.per_label])


@dataclass
class LabelSetStatistics:
    """Statistics of multi-label rows by label set (the label powerset): each distinct set of labels a row
    carries is a class, the sets (``sets``: each row's labels packed as bits) numbered in their sorted order,
    so that any chunking gives the same; merging renumbers the classes of both into the union of sets."""

    sets: tuple[bytes, ...]
    counts: ValueCounts | PresenceCounts

    def merge(self, other: "LabelSetStatistics") -> "LabelSetStatistics":
        """The statistics of both parts."""
        union = tuple(sorted(set(self.sets) | set(other.sets)))
        return LabelSetStatistics(union, self._within(union).merge(other._within(union)))  # type: ignore[arg-type]

    def _within(self, union: tuple[bytes, ...]) -> ValueCounts | PresenceCounts:
        if self.sets == union:
            return self.counts
        code = {labels: position for position, labels in enumerate(union)}
        return self.counts.reclassed(np.array([code[labels] for labels in self.sets], dtype=np.int64), len(union))

    def of_features(self, positions: np.ndarray) -> "LabelSetStatistics":
        """The statistics of the features at ``positions`` (as their ``of_features``)."""
        return LabelSetStatistics(self.sets, self.counts.of_features(positions))

    def names(self, label_names: list[str]) -> tuple[str, ...]:
        """Each set as its labels' names joined by ``+`` (``{}`` for none)."""
        named = []
        for packed in self.sets:
            bits = np.unpackbits(np.frombuffer(packed, dtype=np.uint8))[: len(label_names)]
            named.append("+".join(name for name, bit in zip(label_names, bits) if bit) or "{}")
        return tuple(named)


def label_set_codes(chunk: Chunk, label_positions: tuple[int, ...]) -> tuple[tuple[bytes, ...], np.ndarray]:
    """The distinct label sets of ``chunk``'s rows (labels packed as bits, sorted) and each row's set's
    position among them (NaN for a row with a missing label)."""
    labels = np.column_stack([chunk.column(position) for position in label_positions])
    known = ~np.isnan(labels).any(axis=1)
    packed = np.packbits(np.where(known[:, None], labels, 0) == 1, axis=1)
    rows = np.ascontiguousarray(packed).view(np.dtype((np.void, packed.shape[1]))).ravel()
    distinct, inverse = np.unique(rows[known], return_inverse=True)
    codes = np.full(chunk.n_rows, np.nan)
    codes[known] = inverse
    return tuple(bytes(value) for value in distinct), codes


def label_ranges(statistics: LabelStatistics) -> tuple[np.ndarray, np.ndarray]:
    """Each feature's smallest and largest training value over every label's rows (a row whose label is
    missing is left out of that label's counts only)."""
    ranges = [counts.training_range() for counts in statistics.per_label]
    return np.min([low for low, _ in ranges], axis=0), np.max([high for _, high in ranges], axis=0)
