"""Checking a stage's saved state (a model file's) before the stage uses it.

A model file can be edited or damaged.  A stage declares the arrays of its state
(:class:`StateArray`, in ``Stage.state_arrays``) and :meth:`filterkit.stage.Stage.load_state`
reads them through :class:`SavedState`, which refuses, with a message naming the
stage and the entry, an array of the wrong shape, an index that is not a whole
number in range, a value that is not finite where it must be, and options edited
after fitting: a stage records the options it was fitted with
(:func:`fitted_options`), and a state that recorded them must be loaded under the
same options.  A state saved before options were recorded is taken as it is.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from filterkit.errors import FilterkitError

#: The state entry holding the options a stage was fitted with.
OPTIONS_KEY = "fitted_options"

#: A :class:`StateArray` size: one entry per feature the stage acts on (``len(stage.features)``).
FEATURES = "features"
#: A :class:`StateArray` size: one entry per attribute of the stage's input (``len(stage.input_schema)``).
ATTRIBUTES = "attributes"
#: What an array of whole numbers without an upper bound must add up to less than (in absolute value): every
#: count, sum and size made of it is then exact in float64 and int64 (a sum that wrapped around in int64
#: could pass a stage's consistency check).
_WHOLE_SUM_LIMIT = 2**53


@dataclass(frozen=True)
class StateArray:
    """How one array of a stage's saved state must look; ``Stage.load_state`` checks it.

    Every saved array has one dimension.  ``length`` is :data:`FEATURES`,
    :data:`ATTRIBUTES`, the key of an array declared before it (as many entries as
    that one) or None (any length).  Its entries are numbers, never NaN: finite
    ones, or with ``finite=False`` infinities too; with ``probability`` in [0, 1];
    with ``whole`` whole numbers in [``low``, ``high``), ``high`` a number, a size
    as for ``length``, or None (no upper bound: then they add up to less than 2**53 in
    absolute value).  ``default`` is what every entry
    holds in a state saved before the array existed (None: the array is required).
    """

    length: str | None = FEATURES
    finite: bool = True
    probability: bool = False
    whole: bool = False
    low: int = 0
    high: int | str | None = None
    default: float | None = None


def fitted_options(stage) -> dict:
    """The options ``stage`` was fitted with, for its saved state."""
    return dict(stage.params)


def invalid_state(stage, message: str) -> FilterkitError:
    """The error for a saved state that does not fit ``stage``, saying why."""
    return FilterkitError(f"stage '{stage.name}': the model's saved state is invalid: {message}")


class SavedState:
    """A stage's saved state, read entry by entry with checks."""

    def __init__(self, stage, state: dict):
        self.stage = stage
        self.state = state

    def array(self, key: str, declared: StateArray, sizes: dict[str, int]) -> np.ndarray:
        """The array ``key`` as ``declared``, its sizes looked up in ``sizes`` (float64, or
        int64 for whole numbers); NaN is never allowed, infinities only where ``declared`` allows them."""
        length = sizes[declared.length] if isinstance(declared.length, str) else declared.length
        if key not in self.state and declared.default is None:
            raise invalid_state(self.stage, f"'{key}' is missing")
        saved = self.state[key] if key in self.state else np.full(length or 0, declared.default)
        if isinstance(saved, list) and any(isinstance(value, bool) for value in saved):  # numpy takes true as 1
            raise invalid_state(self.stage, f"'{key}' holds true or false, not a number")
        try:
            array = np.asarray(saved, dtype=np.float64)
        except (TypeError, ValueError):
            raise invalid_state(self.stage, f"'{key}' is not an array of numbers") from None
        if array.ndim != 1 or (length is not None and len(array) != length):
            expected = f"({length},)" if length is not None else "one dimension"
            raise invalid_state(self.stage, f"'{key}' has shape {array.shape}, expected {expected}")
        bad = ~np.isfinite(array) if declared.finite or declared.whole else np.isnan(array)
        if bad.any():
            where = int(np.flatnonzero(bad)[0])
            raise invalid_state(self.stage, f"'{key}' holds {array[where]!r} at position {where}")
        if not declared.whole:
            if declared.probability and np.any((array < 0) | (array > 1)):
                raise invalid_state(self.stage, f"'{key}' holds a value outside [0, 1]")
            return array
        return self._whole_numbers(key, array, declared, sizes)

    def _whole_numbers(self, key: str, array: np.ndarray, declared: StateArray, sizes: dict[str, int]) -> np.ndarray:
        """``array`` as int64 if it holds whole numbers within ``declared``'s bounds (and sums, when unbounded,
        below 2**53)."""
        low, high = declared.low, sizes[declared.high] if isinstance(declared.high, str) else declared.high
        outside = (array != np.floor(array)) | (array < low) | ((array >= high) if high is not None else False)
        if outside.any():
            where = int(np.flatnonzero(outside)[0])
            bounds = f"[{low}, {high})" if high is not None else f"≥ {low}"
            raise invalid_state(
                self.stage, f"'{key}' holds {array[where]!r} at position {where}, not a whole number in {bounds}"
            )
        if high is None and np.abs(array).sum() >= _WHOLE_SUM_LIMIT:
            raise invalid_state(self.stage, f"'{key}' adds up to 2**53 or more (counts that large cannot be exact)")
        return array.astype(np.int64)

    def check_options(self) -> None:
        """Refuse options that differ from those the state was fitted with (when recorded)."""
        recorded = self.state.get(OPTIONS_KEY)
        if recorded is None:
            return
        if not isinstance(recorded, dict):
            raise invalid_state(self.stage, f"'{OPTIONS_KEY}' is not a table of options")
        declared = {option.name for option in self.stage.options}
        unknown = sorted(name for name in recorded if name not in declared)
        if unknown:
            raise invalid_state(self.stage, f"'{OPTIONS_KEY}' records {unknown[0]!r}, which is no option of the stage")
        for option in self.stage.options:
            value = self.stage.params[option.name]
            # an option the state does not record was added after it was saved
            fitted = recorded.get(option.name, option.value_before_it_existed)
            if fitted != value or isinstance(fitted, bool) != isinstance(value, bool):
                raise invalid_state(
                    self.stage,
                    f"option {option.flag} is {value!r} but the state was fitted with "
                    f"{fitted!r} (options edited after fitting)",
                )


def finite_numbers(owner: str, key: str, values) -> np.ndarray:
    """Saved numbers as a float array, FilterkitError naming ``owner`` and ``key`` unless each is a finite number: a
    numeric array's, or a JSON number (not a string or boolean, which numpy would read as one)."""
    try:
        array = np.asarray(values, dtype=np.float64)
        given = values if isinstance(values, np.ndarray) else np.asarray(values, dtype=object)
        numbers = given.dtype.kind in "iuf" or all(
            isinstance(leaf, (int, float, np.number)) and not isinstance(leaf, bool) for leaf in given.flat
        )
    except (TypeError, ValueError):
        numbers = False
    if not numbers:
        raise FilterkitError(f"{owner}: '{key}' is not an array of numbers")
    if not np.isfinite(array).all():
        raise FilterkitError(f"{owner}: '{key}' holds a value that is not a finite number")
    return array
