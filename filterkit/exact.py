"""Exact sums of float64 weights, and tables of them keyed by sorted keys.

:class:`ExactSums` adds weights without rounding, so no order of the rows, chunk size
or partitioning changes a bit of a sum.  :class:`SortedSums` keeps a table keyed by
sorted keys as a few sorted runs merged pairwise, so building it costs O(n log n) in
the distinct keys, whatever the chunk size.  The class statistics of
:mod:`filterkit.statistics` are made of them.

Counting, ordering and merging non-negative int64 keys, and merging runs of counts, runs in
the compiled module ``filterkit._kernels``; numpy does what it declines (other keys, sums
of more than one digit), and everything with :data:`filterkit.kernels.ARRAYS` off.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from filterkit import kernels
from filterkit.errors import FilterkitError
from filterkit.schema import Chunk

# Exact sums are integers written in base 2**32 digits, one int64 column per digit.
_DIGIT_BITS = 32
_DIGIT_MASK = (1 << _DIGIT_BITS) - 1
_MANTISSA_BITS = 53


def in_written_form(digits: np.ndarray) -> bool:
    """Whether ``digits`` (rows × base 2**32 digits) are exact sums with their carries done: every digit in
    [0, 2**32) but the most significant, which keeps the sign (:meth:`ExactSums._normalized`'s form)."""
    lower, top = digits[:, :-1], digits[:, -1]
    return not (np.any((lower < 0) | (lower > _DIGIT_MASK)) or np.any(np.abs(top) > _DIGIT_MASK))


class ExactSums:
    """Sums of float64 values that are exact: adding them in any order, chunk size or partitioning gives the
    same bits, so a stage's statistics can be merged and still give the result of one pass (docs/plugins.md,
    Rules: statistics, not rows).  A float64 sum rounds at every addition and does not.

    An ``ExactSums`` holds ``len(sums)`` sums, one per row.  Make them with :meth:`zeros` (``n`` sums of
    nothing), :meth:`of_weights` (each finite, non-negative value exactly), :meth:`of_counts` (whole
    numbers) or :meth:`by_group` (values added up per group number: a chunk's weighted counts per feature
    in one call); combine them with :meth:`plus` (merging two parts' statistics), :meth:`minus`,
    :meth:`total`, :meth:`group_sums`, :meth:`stacked`, :meth:`scattered` and indexing by rows; read them
    with :meth:`to_float`, which rounds each sum once, the same way every time.  Each sum is an integer
    written in base 2**32 digits (``digits[:, i]``, int64, the least significant first) times
    2**(32·``lowest``); the arrays are not copied, so treat them as read-only."""

    def __init__(self, digits: np.ndarray, lowest: int = 0):
        self.digits = digits
        self.lowest = lowest

    @classmethod
    def zeros(cls, n: int) -> "ExactSums":
        """``n`` sums of nothing."""
        return cls(np.zeros((n, 1), dtype=np.int64))

    @classmethod
    def of_counts(cls, counts: np.ndarray) -> "ExactSums":
        """Whole numbers of unit weights (non-negative integers)."""
        return cls(np.asarray(counts, dtype=np.int64).reshape(-1, 1))._normalized()

    @classmethod
    def by_group(cls, groups: np.ndarray, weights: np.ndarray, size: int) -> "ExactSums":
        """``size`` sums: the ``weights`` (finite, ≥ 0) added up exactly per group number in [0, size)."""
        if not len(groups):
            return cls.zeros(size)
        order = stable_order(groups)
        sorted_groups = groups[order]
        starts = np.flatnonzero(np.r_[True, sorted_groups[1:] != sorted_groups[:-1]])
        return cls.of_weights(weights[order]).group_sums(starts).scattered(sorted_groups[starts], size)

    @classmethod
    def of_weights(cls, weights: np.ndarray) -> "ExactSums":
        """Each finite, non-negative float64 weight exactly."""
        weights = np.asarray(weights, dtype=np.float64)
        if len(weights) == 0:
            return cls.zeros(0)
        fraction, exponent = np.frexp(weights)
        mantissa = np.ldexp(fraction, _MANTISSA_BITS).astype(np.int64)
        exponent = exponent.astype(np.int64) - _MANTISSA_BITS
        limb = np.floor_divide(exponent, _DIGIT_BITS)
        shift = exponent - limb * _DIGIT_BITS
        lowest = int(limb.min())
        column = limb - lowest
        digits = np.zeros((len(weights), int(column.max()) + 3), dtype=np.int64)
        rows = np.arange(len(weights))
        digits[rows, column] = (mantissa & ((1 << (_DIGIT_BITS - shift)) - 1)) << shift
        digits[rows, column + 1] = (mantissa >> (_DIGIT_BITS - shift)) & _DIGIT_MASK
        digits[rows, column + 2] = mantissa >> np.minimum(2 * _DIGIT_BITS - shift, 63)
        return cls(digits, lowest)._trimmed()

    def __len__(self) -> int:
        return len(self.digits)

    def __getitem__(self, rows) -> "ExactSums":
        return ExactSums(self.digits[rows], self.lowest)

    def _spanning(self, lowest: int, width: int) -> np.ndarray:
        """The digits re-based to start at ``lowest`` with ``width`` columns (a copy)."""
        digits = np.zeros((len(self.digits), width), dtype=np.int64)
        start = self.lowest - lowest
        digits[:, start : start + self.digits.shape[1]] = self.digits
        return digits

    def _aligned(self, other: "ExactSums") -> tuple[np.ndarray, np.ndarray, int]:
        both = ExactSums.stacked([self, other])
        return both.digits[: len(self)], both.digits[len(self) :], both.lowest

    def plus(self, other: "ExactSums") -> "ExactSums":
        """Row-wise sums."""
        mine, theirs, lowest = self._aligned(other)
        return ExactSums(mine + theirs, lowest)._normalized()

    def minus(self, other: "ExactSums") -> "ExactSums":
        """Row-wise differences."""
        mine, theirs, lowest = self._aligned(other)
        return ExactSums(mine - theirs, lowest)._normalized()

    @staticmethod
    def stacked(parts: list["ExactSums"]) -> "ExactSums":
        """The rows of every part, one after the other."""
        lowest = min(part.lowest for part in parts)
        width = max(part.lowest + part.digits.shape[1] for part in parts) - lowest
        return ExactSums(np.concatenate([part._spanning(lowest, width) for part in parts]), lowest)

    def group_sums(self, starts: np.ndarray) -> "ExactSums":
        """The sums of consecutive groups of rows starting at ``starts`` (ascending, the first 0)."""
        if len(starts) == 0:
            return ExactSums.zeros(0)
        return ExactSums(np.add.reduceat(self.digits, starts, axis=0), self.lowest)._normalized()

    def scattered(self, index: np.ndarray, size: int) -> "ExactSums":
        """``size`` sums, row ``index[k]`` of them holding row k of these (indices distinct)."""
        digits = np.zeros((size, self.digits.shape[1]), dtype=np.int64)
        digits[index] = self.digits
        return ExactSums(digits, self.lowest)

    def total(self) -> "ExactSums":
        """The sum of every row, as one row."""
        return ExactSums(self.digits.sum(axis=0, keepdims=True), self.lowest)._normalized()

    def _normalized(self) -> "ExactSums":
        """Carries done: every digit in [0, 2**32) but the most significant, which keeps the sign."""
        digits = self.digits.copy()
        while True:
            for i in range(digits.shape[1] - 1):
                carry = digits[:, i] >> _DIGIT_BITS
                digits[:, i] &= _DIGIT_MASK
                digits[:, i + 1] += carry
            top = digits[:, -1]
            if not np.any((top > _DIGIT_MASK) | (top < -_DIGIT_MASK)):
                return ExactSums(digits, self.lowest)._trimmed()
            digits = np.concatenate([digits, np.zeros((len(digits), 1), dtype=np.int64)], axis=1)

    def _trimmed(self) -> "ExactSums":
        """Without all-zero digit columns at either end (at least one column kept)."""
        used = np.flatnonzero(np.any(self.digits != 0, axis=0))
        if len(used) == 0:
            return ExactSums(np.zeros((len(self.digits), 1), dtype=np.int64))
        first, last = int(used[0]), int(used[-1])
        if first == 0 and last == self.digits.shape[1] - 1:
            return self
        return ExactSums(self.digits[:, first : last + 1], self.lowest + first)

    def to_float(self) -> np.ndarray:
        """Each sum as a float64: exact where the sum is one, otherwise rounded by adding its
        digits from the most significant down, so equal sums always give equal floats."""
        digits = self.digits
        negative = digits[:, -1] < 0
        if negative.any():
            digits = (
                ExactSums(np.where(negative[:, None], -digits, digits), self.lowest)
                ._normalized()
                ._spanning(self.lowest, digits.shape[1] + 1)
            )
        result = np.zeros(len(digits))
        with np.errstate(over="ignore"):
            for i in range(digits.shape[1] - 1, -1, -1):
                result = result + np.ldexp(digits[:, i].astype(np.float64), _DIGIT_BITS * (self.lowest + i))
        return np.where(negative, -result, result)


def sums_of_rows(weights: np.ndarray | None, rows: np.ndarray) -> ExactSums | None:
    """The exact weights of the given rows, or None for unit weights."""
    return None if weights is None else ExactSums.of_weights(weights[rows])


def checked_weights(chunk: Chunk) -> np.ndarray | None:
    """The chunk's instance weights (None when every row weighs 1), refused unless finite and ≥ 0."""
    weights = chunk.weights
    if weights is None:
        return None
    bad = ~np.isfinite(weights) | (weights < 0)
    if bad.any():
        raise FilterkitError(
            f"instance weight {weights[np.flatnonzero(bad)[0]]!r}: class statistics need finite weights ≥ 0"
        )
    return np.asarray(weights, dtype=np.float64)


class SortedSums:
    """Exact sums keyed by unique keys (int64, or complex128 for two-part keys: numpy orders
    complex numbers by real, then imaginary part), held as sorted runs of decreasing size.

    A new run is merged with the last while that is not more than twice its size, so
    there are O(log n) runs and each key takes part in O(log n) linear merges: building
    the table of n keys costs O(n log n) whatever the chunk size.  :meth:`settled`
    merges the runs into one.
    """

    def __init__(self, runs: list[tuple[np.ndarray, ExactSums]], dtype=np.int64):
        self.runs = runs
        self.dtype = dtype

    @classmethod
    def empty(cls, dtype=np.int64) -> "SortedSums":
        """No keys."""
        return cls([], dtype)

    @classmethod
    def of_entries(cls, keys: np.ndarray, sums: ExactSums | None, dtype=np.int64) -> "SortedSums":
        """The sums per distinct key of entries (``sums`` None: each entry counts 1)."""
        if len(keys) == 0:
            return cls.empty(dtype)
        if sums is None:
            counted = _compiled_counts(keys)
            if counted is not None:
                return cls([(counted[0], ExactSums.of_counts(counted[1]))], dtype)
            sums = ExactSums.of_counts(np.ones(len(keys), dtype=np.int64))
        order = stable_order(keys)
        keys = keys[order]
        starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
        return cls([(keys[starts], sums[order].group_sums(starts))], dtype)

    @classmethod
    def of_sorted(cls, keys: np.ndarray, sums: ExactSums, dtype=np.int64) -> "SortedSums":
        """A table from keys already sorted and unique."""
        return cls([(keys, sums)] if len(keys) else [], dtype)

    def merged_with(self, other: "SortedSums") -> "SortedSums":
        """The sums of both tables, key by key."""
        runs = list(self.runs)
        for run in other.runs:
            runs.append(run)
            while len(runs) >= 2 and len(runs[-2][0]) <= 2 * len(runs[-1][0]):
                last = runs.pop()
                runs[-1] = _merged_runs(runs[-1], last)
        return SortedSums(runs, self.dtype)

    def settled(self) -> tuple[np.ndarray, ExactSums]:
        """The table as one sorted run: ``(keys, sums)``."""
        if not self.runs:
            return np.zeros(0, self.dtype), ExactSums.zeros(0)
        if len(self.runs) > 1:
            merged = self.runs[-1]
            for run in reversed(self.runs[:-1]):
                merged = _merged_runs(run, merged)
            self.runs = [merged]
        return self.runs[0]


def _compiled_counts(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The distinct keys, ascending, and how often each occurs, by the compiled kernel; None
    for keys that are not non-negative int64 or spread too thinly, or with :data:`filterkit.kernels.ARRAYS`
    off (numpy then counts them)."""
    if keys.dtype != np.int64 or not kernels.use_compiled(kernels.ARRAYS):
        return None
    distinct, counts = np.empty(len(keys), dtype=np.int64), np.empty(len(keys), dtype=np.int64)
    found = kernels.arrays.sorted_counts(np.ascontiguousarray(keys), distinct, counts)
    return None if found is None else (distinct[:found].copy(), counts[:found].copy())


def stable_order(keys: np.ndarray) -> np.ndarray:
    """``numpy.argsort(keys, kind="stable")``; for non-negative int64 keys by the compiled
    kernel's tally or radix sort (a stable order is unique, so the same)."""
    if keys.dtype == np.int64 and kernels.use_compiled(kernels.ARRAYS):
        order = np.empty(len(keys), dtype=np.int64)
        if kernels.arrays.stable_order(np.ascontiguousarray(keys), order) is not None:
            return order
    return np.argsort(keys, kind="stable")


def _merged_runs(first: tuple[np.ndarray, ExactSums], second: tuple[np.ndarray, ExactSums]):
    """Two sorted runs merged in linear time (each key's sums added)."""
    (keys_a, sums_a), (keys_b, sums_b) = first, second
    compiled = _compiled_merge(first, second)
    if compiled is not None:
        return compiled
    position_a = np.searchsorted(keys_b, keys_a, side="right") + np.arange(len(keys_a))
    position_b = np.searchsorted(keys_a, keys_b, side="left") + np.arange(len(keys_b))
    keys = np.empty(len(keys_a) + len(keys_b), dtype=np.result_type(keys_a, keys_b))
    keys[position_a] = keys_a
    keys[position_b] = keys_b
    both = ExactSums.stacked([sums_a, sums_b])
    digits = np.empty_like(both.digits)
    digits[position_a] = both.digits[: len(keys_a)]
    digits[position_b] = both.digits[len(keys_a) :]
    sums = ExactSums(digits, both.lowest)
    repeated = keys[1:] == keys[:-1]
    if not repeated.any():
        return keys, sums
    starts = np.flatnonzero(np.r_[True, ~repeated])
    return keys[starts], sums.group_sums(starts)


def _compiled_merge(first: tuple[np.ndarray, ExactSums], second: tuple[np.ndarray, ExactSums]):
    """:func:`_merged_runs` by the compiled kernel for complex or int64 keys whose sums are one
    digit at the same scale (counts), with what the numpy path gives, digit for digit: the sums
    of keys in both runs added and every sum carried (:meth:`ExactSums._normalized`) where any
    key was in both; None for other runs, for a key holding NaN, or with :data:`filterkit.kernels.ARRAYS` off."""
    (keys_a, sums_a), (keys_b, sums_b) = first, second
    if (
        not kernels.use_compiled(kernels.ARRAYS)
        or keys_a.dtype != keys_b.dtype
        or keys_a.dtype not in (np.complex128, np.int64)
        or sums_a.digits.shape[1] != 1
        or sums_b.digits.shape[1] != 1
        or sums_a.lowest != sums_b.lowest
    ):
        return None
    total = len(keys_a) + len(keys_b)
    keys, counts = np.empty(total, dtype=keys_a.dtype), np.empty(total, dtype=np.int64)
    counts_a, counts_b = np.ascontiguousarray(sums_a.digits[:, 0]), np.ascontiguousarray(sums_b.digits[:, 0])
    if keys_a.dtype == np.int64:
        merged = kernels.arrays.merge_integer_counts(
            np.ascontiguousarray(keys_a), counts_a, np.ascontiguousarray(keys_b), counts_b, keys, counts
        )
    else:
        merged = kernels.arrays.merge_counts(
            np.ascontiguousarray(keys_a).view(np.float64),
            counts_a,
            np.ascontiguousarray(keys_b).view(np.float64),
            counts_b,
            keys.view(np.float64),
            counts,
        )
    if merged is None:
        return None
    sums = ExactSums(counts[:merged].reshape(-1, 1), sums_a.lowest)
    return keys[:merged], sums._normalized() if merged < total else sums


def complex_keys(real: np.ndarray, imag: np.ndarray) -> np.ndarray:
    """real + i·imag without arithmetic (1j·inf would make the real part NaN)."""
    keys = np.empty(len(real), dtype=np.complex128)
    keys.real = real
    keys.imag = imag
    return keys


def fraction_count(fraction: float, n: int) -> int:
    """⌈F·n⌉, at least 1, computed exactly for the decimal F was written as (``repr``'s shortest form): in
    floats 0.28·25 is 7.000000000000001, whose ceiling would take 8 of 25, not 7 (``select --fraction``,
    ``evaluate --train-fraction``)."""
    return max(1, math.ceil(Fraction(repr(fraction)) * n))
