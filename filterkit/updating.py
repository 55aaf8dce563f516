"""Statistics kept in a model, so that ``filterkit update`` (and the adapters' ``partial_fit``) can fit it
again on more rows without the old ones (docs/command-line.md, "Updating a model").

A model saved with ``--updatable`` holds, beside each stage's fitted state, the statistics its pass
gathered (the section ``statistics``: one entry per stage, null for a stage that does not learn or whose
statistics came from the stage before it, as ``bns``'s from ``shape``'s).  They are written as state is,
JSON with embedded arrays, never pickle: the class counts of :mod:`filterkit.statistics` here, a stage's
own by :meth:`~filterkit.stage.Updatable.saved_statistics`, each the same whatever order the rows came in, so
that an updated model is, byte for byte, the model fitted on the old and new rows together.

Stage k was fitted on what the stages before it wrote for the old rows, and those rows are not kept: its
saved statistics still hold only where every refitted stage before it writes for them what it wrote
before, attribute by attribute (:meth:`~filterkit.stage.Updatable.values_after_refit`: ``words`` without
``--idf``, feature selection).  :func:`updated_chain` refuses the other chains, naming the stage and why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from filterkit.contract import declared
from filterkit.errors import FilterkitError
from filterkit.exact import ExactSums, SortedSums, complex_keys, in_written_form
from filterkit.labels import label_names
from filterkit.model import NotAModel, decoded_array, embedded_array, saved_state
from filterkit.plugins import Registry
from filterkit.progress import Progress
from filterkit.runner import Chain, guarded
from filterkit.running import shown_names
from filterkit.schema import Chunk
from filterkit.sources import MemorySource
from filterkit.stage import Stage, Updatable, ValueMapped
from filterkit.statistics import LabelSetStatistics, LabelStatistics, PresenceCounts, ValueCounts

#: The key of the statistics in a model document.
SECTION = "statistics"

_VALUE_COUNTS, _PRESENCE_COUNTS, _EXACT_SUMS = "value counts", "presence counts", "exact sums"
_LABEL_COUNTS, _LABEL_SET_COUNTS = "label counts", "label set counts"
_COUNTS = (ValueCounts, PresenceCounts)
#: Class counts of multi-label rows: one table per label, or one per label set (:mod:`filterkit.statistics`).
_LABELLED = (LabelStatistics, LabelSetStatistics)


def statistics_section(chain: Chain) -> list:
    """The model's ``statistics`` of a chain fitted keeping them (:attr:`~filterkit.runner.Chain.kept_statistics`)."""
    kept = chain.kept_statistics
    assert kept is not None, "the chain was fitted without keeping its statistics"
    return [
        None if position not in kept else _json_data(saved_statistics(stage, kept[position]), stage)
        for position, stage in enumerate(chain.stages)
    ]


def section_statistics(section: Any, chain: Chain) -> list[dict | None]:
    """The saved statistics of each stage of the fitted ``chain`` from a model's ``statistics`` section (arrays
    decoded), each checked by loading it; FilterkitError saying what does not fit."""
    if not isinstance(section, list) or len(section) != len(chain.stages):
        raise FilterkitError(f"the model's '{SECTION}' is not a list of one entry per stage")
    n_attributes = len(chain.input_schema) if chain.input_schema is not None else 0
    statistics: list[dict | None] = []
    for position, (stage, entry) in enumerate(zip(chain.stages, section)):
        where = f"stage {position + 1} '{stage.name}'"
        if entry is None:
            if declared(stage, "learns") and (position == 0 or not declared(chain.stages[position - 1], "learns")):
                raise FilterkitError(f"the model's '{SECTION}' has none of {where}, which learns")
            statistics.append(None)
            continue
        if not declared(stage, "learns") or not isinstance(entry, dict):
            raise FilterkitError(f"the model's '{SECTION}' of {where} is not statistics the stage learns")
        try:
            saved = _plain_data(entry, where, n_attributes)
        except NotAModel as error:
            raise FilterkitError(f"the model's '{SECTION}': {error.reason}") from None
        loaded_statistics(stage, saved)
        statistics.append(saved)
    return statistics


def refuse_statistics_unlike_states(chain: Chain, statistics: list[dict | None], registry: Registry) -> None:
    """FilterkitError naming the first stage whose saved ``statistics`` do not give its saved state: the chain updated
    by no rows is what a fit on those statistics gives, so a statistic edited apart from the state (a range, a
    document count), which the update would merge as the old rows', shows here.  Each is checked alone on loading."""
    assert chain.input_schema is not None, "the chain is fitted"
    schema = chain.input_schema
    no_rows = Chunk(np.zeros((0, len(schema))), {position: [] for position in schema.text_columns()})
    refitted = updated_chain(chain, statistics, MemorySource(schema, no_rows), registry)
    for position, (saved, again) in enumerate(zip(chain.stages, refitted.stages), 1):
        where = f"stage {position} '{saved.name}'"
        if saved_state(saved.state(), False, where) != saved_state(again.state(), False, where):
            raise FilterkitError(
                f"the model's '{SECTION}' of {where} do not give its saved state (a fit on them gives another): "
                "the statistics or the state were edited"
            )


def saved_statistics(stage: Stage, statistics: Any) -> dict:
    """``stage``'s statistics as plain data: class counts here (wherever they are), the rest by the stage."""
    if isinstance(statistics, (*_COUNTS, *_LABELLED)):
        return _saved(statistics)
    if not isinstance(stage, Updatable):
        raise FilterkitError(
            f"stage '{stage.name}' cannot save its statistics, so a model holding it cannot be updated"
        )
    return _saved(guarded(stage, "saving its statistics", stage.saved_statistics, statistics))


def _saved(value: Any) -> Any:
    """``value`` with each class counts (:func:`saved_counts`) and exact sums in it as plain data."""
    if isinstance(value, _COUNTS):
        return saved_counts(value)
    if isinstance(value, LabelStatistics):
        return {"kind": _LABEL_COUNTS, "per_label": [saved_counts(counts) for counts in value.per_label]}
    if isinstance(value, LabelSetStatistics):  # each set its labels' bits, packed as label_set_codes packs them
        sets = np.array([list(packed) for packed in value.sets], dtype=np.uint8).reshape(len(value.sets), -1)
        return {"kind": _LABEL_SET_COUNTS, "sets": sets, "counts": saved_counts(value.counts)}
    if isinstance(value, ExactSums):
        return {"kind": _EXACT_SUMS, **_saved_sums(value)}
    if isinstance(value, dict):
        return {key: _saved(item) for key, item in value.items()}
    return value


def loaded_statistics(stage: Stage, saved: dict) -> Any:
    """The statistics :func:`saved_statistics` gave, for ``stage`` (prepared); FilterkitError naming the stage
    where they do not fit it."""
    try:
        counts = _loaded(saved)
        if isinstance(counts, (*_COUNTS, *_LABELLED)):
            check_counts_fit(counts, stage.new_statistics())
            return counts
        if not isinstance(stage, Updatable):
            raise FilterkitError(f"stage '{stage.name}' cannot load saved statistics")
        return stage.loaded_statistics(counts)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as error:
        raise FilterkitError(f"stage '{stage.name}': the model's statistics of it do not fit it ({error})") from None


def check_counts_fit(counts: Any, expected: Any) -> None:
    """ValueError unless ``counts`` are class counts (or multi-label ones) of ``expected``'s kind, features and
    classes (label sets: as many classes as sets)."""
    if type(counts) is not type(expected):
        raise ValueError("they are not the counts the stage gathers")
    if isinstance(counts, LabelStatistics):
        if len(counts.per_label) != len(expected.per_label):
            raise ValueError(
                f"counts of {len(counts.per_label)} labels where the stage learns {len(expected.per_label)}"
            )
        for mine, theirs in zip(counts.per_label, expected.per_label):
            check_counts_fit(mine, theirs)
    elif isinstance(counts, LabelSetStatistics):  # as many classes as sets: checked as they were loaded
        if type(counts.counts) is not type(expected.counts) or counts.counts.n_features != expected.counts.n_features:
            raise ValueError("they are not the counts the stage gathers")
    elif (counts.n_features, counts.n_classes) != (expected.n_features, expected.n_classes):
        raise ValueError("they are not the counts the stage gathers")


def _loaded(value: Any) -> Any:
    """``value`` with each class counts in it as :func:`saved_counts` saved them made again."""
    if isinstance(value, dict):
        if value.get("kind") in (_VALUE_COUNTS, _PRESENCE_COUNTS):
            return counts_of_saved(value)
        if value.get("kind") == _LABEL_COUNTS:
            return LabelStatistics([counts_of_saved(counts) for counts in value["per_label"]])
        if value.get("kind") == _LABEL_SET_COUNTS:
            return _label_sets_of_saved(value)
        if value.get("kind") == _EXACT_SUMS:
            return _sums_of_saved(value, None)
        return {key: _loaded(item) for key, item in value.items()}
    return value


def _label_sets_of_saved(saved: dict) -> LabelSetStatistics:
    """The label-set counts :func:`_saved` gave (ValueError where they are not well formed)."""
    sets = _array(saved["sets"], np.uint8, dimensions=2)
    packed = tuple(bytes(row) for row in sets)
    if list(packed) != sorted(set(packed)):
        raise ValueError("'sets' are not distinct label sets in ascending order")
    counts = counts_of_saved(saved["counts"])
    if counts.n_classes != len(packed):
        raise ValueError(f"counts of {counts.n_classes} classes for {len(packed)} label sets")
    return LabelSetStatistics(packed, counts)


def saved_counts(counts: ValueCounts | PresenceCounts) -> dict:
    """Class counts as plain data: each table in key order, each exact sum with its carries done."""
    missing_pairs, missing_sums = counts.missing_table.settled()
    saved: dict[str, Any] = {
        "n_features": counts.n_features,
        "n_classes": counts.n_classes,
        "totals": _saved_sums(counts.totals),
        "missing_pairs": missing_pairs,
        "missing_sums": _saved_sums(missing_sums),
    }
    if isinstance(counts, ValueCounts):
        keys, sums = counts.table.settled()
        pairs, values = keys.real.astype(np.int64), keys.imag.copy()
        return {"kind": _VALUE_COUNTS, **saved, "pairs": pairs, "values": values, "sums": _saved_sums(sums)}
    pairs, sums = counts.nonzero_table.settled()
    return {
        "kind": _PRESENCE_COUNTS,
        **saved,
        "pairs": pairs,
        "sums": _saved_sums(sums),
        "minimum": counts.minimum,
        "maximum": counts.maximum,
    }


def counts_of_saved(saved: dict) -> ValueCounts | PresenceCounts:
    """The class counts :func:`saved_counts` gave (ValueError where they are not well formed)."""
    n_features, n_classes = _whole(saved["n_features"]), _whole(saved["n_classes"])
    n_pairs = n_features * max(n_classes, 1)
    totals = _sums_of_saved(saved["totals"], n_classes, weights=True)
    missing_pairs = _sorted_pairs(saved["missing_pairs"], n_pairs)
    missing_sums = _sums_of_saved(saved["missing_sums"], len(missing_pairs), weights=True)
    missing = SortedSums.of_sorted(missing_pairs, missing_sums)
    pairs = _array(saved["pairs"], np.int64)
    sums = _sums_of_saved(saved["sums"], len(pairs), weights=True)
    _refuse_counts_past_totals(pairs, sums, missing_pairs, missing_sums, totals)
    if saved["kind"] == _VALUE_COUNTS:
        values = _array(saved["values"], np.float64)
        if len(values) != len(pairs) or (len(pairs) and (pairs.min() < 0 or pairs.max() >= n_pairs)):
            raise ValueError("'pairs' and 'values' do not fit the features and classes")
        step = np.diff(pairs)
        if np.any((step < 0) | ((step == 0) & (np.diff(values) <= 0))):
            raise ValueError("'pairs' and 'values' are not in ascending order")
        table = SortedSums.of_sorted(complex_keys(pairs.astype(np.float64), values), sums, np.complex128)
        return ValueCounts(n_features, n_classes, table, totals, missing)
    minimum, maximum = _array(saved["minimum"], np.float64), _array(saved["maximum"], np.float64)
    if len(minimum) != n_features or len(maximum) != n_features:
        raise ValueError("'minimum' and 'maximum' are not one value per feature")
    nonzero = SortedSums.of_sorted(_sorted_pairs(pairs, n_pairs), sums)
    return PresenceCounts(n_features, n_classes, nonzero, totals, missing, minimum, maximum)


def _saved_sums(sums: ExactSums) -> dict:
    """Exact sums in their one written form: carries done, no all-zero digit column at either end."""
    normal = sums._normalized()
    return {"digits": normal.digits, "lowest": normal.lowest}


#: The digit positions (base 2**32) that sums of float64 values can hold: from 2**-1074 (the least subnormal) to
#: 2**(1024 + 64) (2**64 values each below 2**1024).
_LOWEST_DIGIT, _DIGITS_END = -34, 34


def _sums_of_saved(saved: dict, rows: int | None, weights: bool = False) -> ExactSums:
    """The exact sums :func:`_saved_sums` saved, ``rows`` of them (None: as many as there are), in their written
    form within a double's range (an edited ``lowest`` of 2**40 asked for terabytes); ``weights``: sums of row
    weights, none below 0."""
    digits = _array(saved["digits"], np.int64, dimensions=2)
    if rows is not None and digits.shape[0] != rows or digits.shape[1] < 1:
        raise ValueError(f"exact sums of {digits.shape[0]} rows where {rows} were expected")
    lowest = _whole(saved["lowest"], signed=True)
    if lowest < _LOWEST_DIGIT or lowest + digits.shape[1] > _DIGITS_END:
        raise ValueError("exact sums with digits past a double's range")
    if not in_written_form(digits):
        raise ValueError("exact sums not in their written form (each digit below 2**32, all but the last ≥ 0)")
    if weights and np.any(digits[:, -1] < 0):
        raise ValueError("a sum of row weights below 0")
    return ExactSums(digits.copy(), lowest)


def _refuse_counts_past_totals(
    pairs: np.ndarray, sums: ExactSums, missing_pairs: np.ndarray, missing_sums: ExactSums, totals: ExactSums
) -> None:
    """ValueError where a (feature, class) pair's counted weight (its values' or non-zero entries', in ``pairs``'
    order, and its missing values') is more than its class's total weight: no rows give such counts.  Only the
    pairs the tables hold are summed (an edited feature count does not size anything)."""
    classes = len(totals)
    if classes == 0 or not (len(pairs) or len(missing_pairs)):
        return
    held = np.union1d(pairs, missing_pairs)
    counted = ExactSums.zeros(len(held))
    if len(pairs):
        starts = np.flatnonzero(np.r_[True, pairs[1:] != pairs[:-1]])
        counted = counted.plus(sums.group_sums(starts).scattered(np.searchsorted(held, pairs[starts]), len(held)))
    if len(missing_pairs):
        counted = counted.plus(missing_sums.scattered(np.searchsorted(held, missing_pairs), len(held)))
    over = np.flatnonzero(totals[held % classes].minus(counted).digits[:, -1] < 0)
    if len(over):
        pair = int(held[over[0]])
        raise ValueError(
            f"feature {pair // classes + 1}'s counts in class {pair % classes + 1} are more than the class's rows"
        )


def _sorted_pairs(pairs: Any, n_pairs: int) -> np.ndarray:
    pairs = _array(pairs, np.int64)
    if len(pairs) and (pairs[0] < 0 or pairs[-1] >= n_pairs or np.any(np.diff(pairs) <= 0)):
        raise ValueError("a table's keys are not ascending (feature, class) pairs")
    return pairs


def _array(value: Any, dtype, dimensions: int = 1) -> np.ndarray:
    if not isinstance(value, np.ndarray) or value.dtype != dtype or value.ndim != dimensions:
        raise ValueError(f"an array of {np.dtype(dtype)} in {dimensions} dimension(s) was expected")
    return value


def _whole(value: Any, signed: bool = False) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not (signed or value >= 0) or abs(value) >= 2**53:
        raise ValueError(f"{value!r} is not a whole number in range")
    return value


def _json_data(value: Any, stage: Stage) -> Any:
    """Plain data as JSON data, each array embedded as a state array is."""
    if isinstance(value, np.ndarray):
        return {"array": embedded_array(value, f"stage '{stage.name}'", "statistics")}
    if isinstance(value, dict):
        return {str(key): _json_data(item, stage) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_data(item, stage) for item in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def _plain_data(value: Any, where: str, n_attributes: int) -> Any:
    """JSON data with each embedded array decoded (checked as a state array is)."""
    if isinstance(value, dict):
        if set(value) == {"array"}:
            array = value["array"]
            if not (
                isinstance(array, dict)
                and set(array) == {"dtype", "shape", "base64"}
                and isinstance(array["dtype"], str)
                and isinstance(array["shape"], list)
                and all(type(length) is int and length >= 0 for length in array["shape"])
                and isinstance(array["base64"], str)
            ):
                raise NotAModel(f"{where}: an array is written badly")
            try:
                dtype = np.dtype(array["dtype"])
            except TypeError:
                raise NotAModel(f"{where}: an array has the dtype {array['dtype'][:20]!r}") from None
            if dtype.kind not in "biuf":
                raise NotAModel(f"{where}: an array holds {dtype}, not numbers")
            return decoded_array(f"{where} statistics", array, n_attributes)
        return {key: _plain_data(item, where, n_attributes) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain_data(item, where, n_attributes) for item in value]
    return value


@dataclass
class _OldRows:
    """What the refitted stages before a stage write for the old rows, compared with what they wrote."""

    #: True once the attributes are matched by name (a stage writes other attributes now), not position.
    by_name: bool = False
    #: The attributes written now whose values in the old rows are not known to be 0, by the stage writing each.
    unknown: dict[str, int] = field(default_factory=dict)
    #: The stage that writes other values for the old rows now, and what it does: (position, the words after
    #: "stage N" in the refusal).
    changed: tuple[int, str] | None = None


def _listed(names: tuple[str, ...]) -> str:
    """Label names for a message (the first ten), or ``none``."""
    return shown_names(list(names)) if names else "none"


def updated_chain(
    old: Chain,
    statistics: list[dict | None],
    source,
    registry: Registry,
    progress: Progress | None = None,
    name: str | None = None,
    model: str | None = None,
) -> Chain:
    """``old``, a fitted chain with the saved ``statistics`` of its rows, fitted again on those and ``source``'s
    rows: the chain a fit on both gives, to the bit, keeping its statistics and header.  FilterkitError naming the
    stage, why and the model file ``model`` where the saved statistics of the old rows no longer describe what that
    stage would see, and naming the new rows' file ``name`` where they hold other labels than the model's."""
    assert old.input_schema is not None, "the chain is fitted"
    found = label_names(source.schema, old.labels)
    if found != old.label_names:
        raise FilterkitError(
            f"the new rows hold the labels {_listed(found)}, and the model {_listed(old.label_names)}: "
            "add rows of the model's labels (MEKA's -C in the relation name, as in its training data)",
            name,
        )
    # the class by its position: a class attribute named "last" or "2" is not read as -c would read it
    class_spec = None if old.class_name is None else str(old.input_schema.index_of(old.class_name) + 1)
    new = Chain(
        [registry.make_stage(stage.name, stage.params, saved=True) for stage in old.stages],
        class_spec=class_spec,
        positive=old.positive,
        labels=old.labels,
    )
    new.kept_statistics = {}
    loaded: dict[int, Any] = {}

    def old_statistics(position: int) -> Any:
        """The old rows' statistics of stage ``position``, as the old chain gathered them."""
        if position not in loaded:
            saved = statistics[position]
            loaded[position] = None if saved is None else loaded_statistics(old.stages[position], saved)
        return loaded[position]

    def start(position: int, stage: Stage) -> Any:
        saved = statistics[position]
        if saved is None:
            raise FilterkitError(
                f"stage {position + 1} '{stage.name}' cannot be updated: the model holds no statistics of it (they "
                f"came from those of stage {position}, which cannot give them now): refit the chain on all the rows",
                model,
            )
        rows = _old_rows(old, new, position, old_statistics)
        before = old.stages[position]
        if rows.changed is not None:
            culprit, why = rows.changed
            raise FilterkitError(
                f"stage {position + 1} '{stage.name}' cannot be updated exactly: it learned from what stage "
                f"{culprit + 1} '{old.stages[culprit].name}' wrote for the old rows, and stage {culprit + 1} {why}; "
                "the old rows are not in the model: refit the chain on all the rows",
                model,
            )
        if not rows.by_name:  # loaded again: the pass adds to them, and _old_rows reads them as saved
            return loaded_statistics(before, saved)
        names = [stage.input_schema.attributes[i].name for i in stage.features]
        unknown = next((name for name in names if name in rows.unknown), None)
        if unknown is not None:
            culprit = rows.unknown[unknown]
            raise FilterkitError(
                f"stage {position + 1} '{stage.name}' cannot be updated exactly: stage {culprit + 1} "
                f"'{old.stages[culprit].name}' now writes '{unknown}', which the old rows may hold but stage "
                f"{position + 1} never counted in them: refit the chain on all the rows",
                model,
            )
        moved = getattr(old_statistics(position), "of_features", None)
        if not callable(moved):
            raise FilterkitError(
                f"stage {position + 1} '{stage.name}' cannot be updated: the attributes before it change, and its "
                "statistics cannot follow them by name: refit the chain on all the rows",
                model,
            )
        earlier = {before.input_schema.attributes[i].name: k for k, i in enumerate(before.features)}
        return moved(np.array([earlier.get(name, -1) for name in names], dtype=np.int64))

    return new.fit(_ReadAs(source, old.input_schema), progress, start)


class _ReadAs:
    """``source`` under the model's header ``schema``: new rows whose header differs only where rows read alike
    (the relation name, ``integer`` for ``real``) leave the model's header as it was, as a fit on all the rows
    keeps the first file's."""

    def __init__(self, source, schema) -> None:
        self._source, self.schema = source, schema

    def __getattr__(self, name: str) -> Any:
        return getattr(self._source, name)


def _old_rows(old: Chain, new: Chain, position: int, old_statistics) -> _OldRows:
    """How the refitted stages before ``position`` write the old rows, compared with the old chain's."""
    rows = _OldRows()
    for earlier in range(position):
        before, now = old.stages[earlier], new.stages[earlier]
        if declared(now, "learns"):
            kept = guarded(now, "update", _values_after_refit, now, before, old_statistics(earlier))
            if isinstance(kept, FilterkitError):
                return _OldRows(changed=(earlier, kept.message))
            if kept is not None:
                names = {attribute.name for attribute in now.output_schema().attributes}
                rows.unknown = {name: k for name, k in rows.unknown.items() if name in names}
                rows.unknown.update((name, earlier) for name in kept)
                rows.by_name = rows.by_name or before.output_schema() != now.output_schema()
            elif rows.by_name or _json_data(before.state(), before) != _json_data(now.state(), now):
                return _OldRows(changed=(earlier, "writes other values once refitted on more rows"))
        elif rows.by_name and (not isinstance(now, ValueMapped) or guarded(now, "update", now.value_map) is None):
            return _OldRows(
                changed=(earlier, "writes each value from a whole row, whose attributes the update changes")
            )
    return rows


def _values_after_refit(now: Stage, before: Stage, before_statistics: Any) -> list[str] | None | FilterkitError:
    """``now.values_after_refit(before, before_statistics)``, or the FilterkitError by which it says why not."""
    if not isinstance(now, Updatable):
        return None
    try:
        return now.values_after_refit(before, before_statistics)
    except FilterkitError as error:
        return error
