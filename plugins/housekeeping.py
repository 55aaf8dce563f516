"""The housekeeping stages around a chain, each after its Weka 3.6 filter (docs/algorithms.md §13):
``remove`` / ``keep`` (``Remove``, ``RemoveType``: the union of ``--range``, ``--names``, ``--regex``
and ``--type``; the class goes only when named one by one, and ``keep`` always keeps it),
``remove-useless`` (``RemoveUseless``), ``replace-missing`` (``ReplaceMissingValues``) and ``fold``
(``StratifiedRemoveFolds``).  Statistics are per attribute (and per nominal label), merged exactly,
so memory follows the features; ``fold`` holds one 52-bit key per distinct training row.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import NamedTuple, cast

import numpy as np

from filterkit.arff.reader import JAVA_BLANKS
from filterkit.plugin import (
    DATE,
    NOMINAL,
    NUMERIC,
    RELATIONAL,
    STRING,
    Chunk,
    ExactSums,
    FilterkitError,
    Option,
    Schema,
    Stage,
    StateArray,
    Updatable,
    ValueMapped,
    checked_weights,
    feature_positions,
    hookimpl,
    invalid_state,
    nonzero_entries,
)
from filterkit.schema import take_rows, weka_range
from filterkit.stage_parts import AttributeSubset, features_of_kinds, label_layout
from filterkit.statistics import column_ranges

#: The attribute kinds ``--type`` takes, as Weka's RemoveType ``-T`` spells them.
TYPES = (NUMERIC, NOMINAL, STRING, DATE, RELATIONAL)
#: Weka's ``Utils.gr`` tolerance: a summed weight at or below it counts as none.
WEKA_SMALL = 1e-6
#: Row keys of ``fold`` are whole numbers below this (exact in a double, so a model holds them).
KEY_LIMIT = 2**52
#: The largest ``--of`` and ``--seed`` of ``fold``: Java's ``long``, which Weka's -N and -S are.
LONG_MAX = 2**63 - 1


class _SelectedAttributes(AttributeSubset):
    """``remove`` and ``keep`` (``keeps``): the attributes named by the union of the given rules."""

    options = (
        Option(
            "range", str, None, "Attributes by position, 1-based, Weka's syntax: first-3,5,last.", attribute_range=True
        ),
        Option("names", str, None, "Attributes by name, comma-separated: a,b."),
        Option(
            "regex",
            str,
            None,
            "Attributes whose whole name matches this regular expression (Python's re, run as written on "
            "the names from the data: a pattern with nested repeats, such as (a+)+, can take exponential time).",
        ),
        Option("type", str, None, "Attributes of this type (Weka's RemoveType -T).", choices=TYPES),
    )
    keeps = False

    def prepare(self, schema, context) -> None:
        super().prepare(schema, context)
        chosen, one_by_one = self.named(schema)
        kept = chosen if self.keeps else set(range(len(schema))) - chosen
        targets = set(context.labels) | ({context.class_index} - {None})  # the labels stand where the class does
        kept |= {position for position in targets if self.keeps or position not in one_by_one}
        self.columns = np.array(sorted(kept), dtype=np.int64)
        if not len(self.columns):
            raise FilterkitError(f"stage '{self.name}' would leave no attribute")

    def check_params(self) -> None:
        if all(self.params[name] is None for name in ("range", "names", "regex", "type")):
            raise FilterkitError(f"stage '{self.name}' needs --range, --names, --regex or --type")
        if self.params["regex"] is not None:
            try:
                self.pattern = re.compile(self.params["regex"])
            except re.error as error:
                raise FilterkitError(f"option --regex: {self.params['regex']!r} is not a regular expression: {error}")

    def named(self, schema: Schema) -> tuple[set[int], set[int]]:
        """The positions the rules name, and those of them named one by one (by number,
        ``first``, ``last`` or name), which is how the class or a label can be removed."""
        chosen: set[int] = set()
        one_by_one: set[int] = set()
        if self.params["range"] is not None:
            positions, single = weka_range(self.params["range"], len(schema), "--range")
            chosen.update(positions.tolist())
            one_by_one |= single
        if self.params["names"] is not None:
            for name in (part.strip(JAVA_BLANKS) for part in self.params["names"].split(",")):
                try:
                    position = schema.index_of(name)
                except KeyError:
                    raise FilterkitError(f"option --names: there is no attribute called '{name}'") from None
                chosen.add(position)
                one_by_one.add(position)
        if self.params["regex"] is not None:
            chosen.update(i for i, a in enumerate(schema.attributes) if self.pattern.fullmatch(a.name))
        if self.params["type"] is not None:
            chosen.update(i for i, a in enumerate(schema.attributes) if a.kind == self.params["type"])
        return chosen, one_by_one


class RemoveAttributes(_SelectedAttributes):
    """Remove the named attributes (Weka's Remove and RemoveType); the class (or a label) only when named."""

    name = "remove"
    examples = ({"range": "2"}, {"type": "numeric"})
    summary = "Remove attributes by --range, --names, --regex or --type (Weka's Remove, RemoveType)."


class KeepAttributes(_SelectedAttributes):
    """Keep only the named attributes and the class, or the labels (Weka's Remove -V and RemoveType -V)."""

    name = "keep"
    examples = ({"range": "1,3"},)
    summary = "Keep only the attributes named by --range, --names, --regex or --type, and the class or labels."

    keeps = True


@dataclass
class UsefulnessCounts:
    """Per attribute of the input: its known (non-missing) rows, its smallest and largest known
    value (numeric and date), which of its labels occur (nominal, flattened over the
    attributes' labels) and, for a string attribute, one of its texts and whether another
    differs.  Merging gives the counts of both parts, in either order."""

    known: np.ndarray
    low: np.ndarray
    high: np.ndarray
    labels_seen: np.ndarray
    texts: dict[int, tuple[str | None, bool]] = field(default_factory=dict)

    def merge(self, other: "UsefulnessCounts") -> "UsefulnessCounts":
        """The counts of both parts (each string attribute's smallest text: the same in either order)."""
        texts = dict(self.texts)
        for column, (text, varied) in other.texts.items():
            mine, mine_varied = texts.get(column, (None, False))
            differ = mine is not None and text is not None and mine != text
            smallest = text if mine is None else mine if text is None else min(mine, text)
            texts[column] = (smallest, mine_varied or varied or differ)
        return UsefulnessCounts(
            self.known + other.known,
            np.fmin(self.low, other.low),
            np.fmax(self.high, other.high),
            self.labels_seen | other.labels_seen,
            texts,
        )


class RemoveUseless(AttributeSubset):
    """Remove constant attributes and nominal ones that vary too much (Weka's RemoveUseless)."""

    name = "remove-useless"
    summary = (
        "Remove attributes with one distinct value (or none) and nominal ones whose distinct values "
        "exceed --max-percent of their rows (Weka's RemoveUseless)."
    )
    options = (
        Option(
            "max_percent",
            float,
            99.0,
            "Remove a nominal attribute whose distinct values are more than this percentage of its known rows "
            "(Weka's -M).",
            minimum=0.0,
        ),
    )
    learns = True
    state_arrays = {"kept": StateArray(length=None, whole=True, high="attributes")}

    def select_features(self, schema, context) -> np.ndarray:
        """Every attribute but the class and relational ones."""
        return features_of_kinds(schema, context, (NUMERIC, NOMINAL, STRING, DATE))

    def prepare(self, schema, context) -> None:
        super().prepare(schema, context)
        self.label_counts, self.label_offsets = label_layout(schema.attributes)
        self.kept = self.columns = np.arange(len(schema), dtype=np.int64)

    def new_statistics(self) -> UsefulnessCounts:
        n = len(self.input_schema)
        return UsefulnessCounts(
            np.zeros(n, dtype=np.int64),
            np.full(n, np.inf),
            np.full(n, -np.inf),
            np.zeros(int(self.label_counts.sum()), dtype=bool),
        )

    def accumulate(self, statistics: UsefulnessCounts, chunk: Chunk) -> UsefulnessCounts:
        n = len(self.input_schema)
        rows, columns, values = nonzero_entries(chunk)
        stored = np.bincount(columns, minlength=n)
        missing = np.isnan(values)
        known = chunk.n_rows - np.bincount(columns[missing], minlength=n)
        low, high = column_ranges(columns[~missing], values[~missing], n)
        implicit_zero = stored < chunk.n_rows
        low[implicit_zero] = np.fmin(low[implicit_zero], 0.0)
        high[implicit_zero] = np.fmax(high[implicit_zero], 0.0)
        seen = np.zeros(len(statistics.labels_seen), dtype=bool)
        nominal = (self.label_counts[columns] > 0) & ~missing
        seen[self.label_offsets[columns[nominal]] + values[nominal].astype(np.int64)] = True
        zero_seen = implicit_zero & (self.label_counts > 0)
        seen[self.label_offsets[zero_seen]] = True
        texts = {}
        for column, column_texts in chunk.text.items():
            if self.input_schema.attributes[column].kind != STRING:
                continue
            present = {t for t, m in zip(column_texts, np.isnan(chunk.column(column))) if not m and t is not None}
            texts[column] = (min(present) if present else None, len(present) > 1)
        return statistics.merge(UsefulnessCounts(known, low, high, seen, texts))

    def saved_statistics(self, statistics: UsefulnessCounts) -> dict:
        columns = sorted(statistics.texts)
        return {
            "known": statistics.known,
            "low": statistics.low,
            "high": statistics.high,
            "labels_seen": statistics.labels_seen,
            "text_columns": np.array(columns, dtype=np.int64),
            "texts": [statistics.texts[column][0] for column in columns],
            "texts_vary": np.array([statistics.texts[column][1] for column in columns], dtype=bool),
        }

    def loaded_statistics(self, saved: dict) -> UsefulnessCounts:
        empty = self.new_statistics()
        known, low, high, labels_seen = arrays = [saved[key] for key in ("known", "low", "high", "labels_seen")]
        for array, expected in zip(arrays, (empty.known, empty.low, empty.high, empty.labels_seen)):
            if not isinstance(array, np.ndarray) or array.dtype != expected.dtype or array.shape != expected.shape:
                raise ValueError("the counts are not one per attribute (or label) of the input")
        columns, texts, vary = saved["text_columns"], saved["texts"], saved["texts_vary"]
        strings = [i for i, attribute in enumerate(self.input_schema.attributes) if attribute.kind == STRING]
        if (
            not isinstance(texts, list)
            or not all(text is None or isinstance(text, str) for text in texts)
            or not set(np.asarray(columns).tolist()) <= set(strings)
            or not len(columns) == len(texts) == len(vary)
        ):
            raise ValueError("the texts are not one per string attribute")
        return UsefulnessCounts(known, low, high, labels_seen, dict(zip(columns.tolist(), zip(texts, vary.tolist()))))

    def finalize(self, statistics: UsefulnessCounts) -> None:
        useless = set()
        for position in self.features.tolist():
            attribute = self.input_schema.attributes[position]
            known = int(statistics.known[position])
            if attribute.kind == NOMINAL:
                start = self.label_offsets[position]
                distinct = int(statistics.labels_seen[start : start + self.label_counts[position]].sum())
                if distinct < 2 or distinct / known * 100.0 > self.params["max_percent"]:
                    useless.add(position)
            elif attribute.kind == STRING:
                if not statistics.texts.get(position, (None, False))[1]:
                    useless.add(position)
            elif known == 0 or statistics.low[position] == statistics.high[position]:
                useless.add(position)
        self.kept = self.columns = np.array([i for i in range(len(self.input_schema)) if i not in useless], np.int64)

    def load_state(self, state: dict) -> None:
        super().load_state(state)
        if np.any(np.diff(self.kept) <= 0) or not set(self.features.tolist()) | set(self.kept.tolist()) >= set(
            range(len(self.input_schema))
        ):
            raise invalid_state(self, "'kept' must ascend and hold the class")
        self.columns = self.kept


class MissingValueSums(NamedTuple):
    """Exact weighted sums for means and modes: the total weight, per feature the weight of its
    missing values and its positive and negative weighted values, per nominal label its weight."""

    total: ExactSums
    missing: ExactSums
    positive: ExactSums
    negative: ExactSums
    labels: ExactSums

    def merge(self, other: "MissingValueSums") -> "MissingValueSums":
        """The sums of both parts."""
        return MissingValueSums(*(mine.plus(theirs) for mine, theirs in zip(self, other)))


class ReplaceMissing(ValueMapped, Updatable):
    """Replace missing values by the training mean or mode (Weka's ReplaceMissingValues;
    docs/algorithms.md §13); a nominal attribute with no known value takes its first label."""

    name = "replace-missing"
    summary = (
        "Replace missing values by the training mean (numeric, date) or mode (nominal) (Weka's ReplaceMissingValues)."
    )
    learns = True
    state_arrays = {"replacement": StateArray()}

    def select_features(self, schema, context) -> np.ndarray:
        """The numeric, date and nominal attributes other than the class."""
        return features_of_kinds(schema, context, (NUMERIC, DATE, NOMINAL))

    def prepare(self, schema, context) -> None:
        super().prepare(schema, context)
        self.label_counts, self.label_offsets = label_layout(schema.attributes[i] for i in self.features)
        self.feature_of = feature_positions(len(schema), self.features)

    def preserves_zeros(self) -> bool:
        """Only missing values change."""
        return True

    def output_schema(self) -> Schema:
        return self.input_schema

    def new_statistics(self) -> MissingValueSums:
        n = len(self.features)
        return MissingValueSums(
            ExactSums.zeros(1),
            ExactSums.zeros(n),
            ExactSums.zeros(n),
            ExactSums.zeros(n),
            ExactSums.zeros(int(self.label_counts.sum())),
        )

    def accumulate(self, statistics: MissingValueSums, chunk: Chunk) -> MissingValueSums:
        weights = checked_weights(chunk)
        weights = np.ones(chunk.n_rows) if weights is None else weights
        rows, columns, values = nonzero_entries(chunk)
        which = self.feature_of[columns]
        acted = which >= 0
        rows, which, values = rows[acted], which[acted], values[acted]
        n = len(self.features)
        missing = np.isnan(values)
        nominal = self.label_counts[which] > 0
        numeric = ~missing & ~nominal
        with np.errstate(over="ignore"):
            products = weights[rows[numeric]] * values[numeric]
        if not np.all(np.isfinite(products)):
            first = np.flatnonzero(~np.isfinite(products))[0]
            bad = self.features[which[numeric][first]]
            why = (
                "has an infinite training value"
                if not np.isfinite(values[numeric][first])
                else "has a value whose weighted size exceeds the largest double"
            )
            raise FilterkitError(
                f"stage 'replace-missing': attribute '{self.input_schema.attributes[bad].name}' {why}, "
                "so its mean is not a number"
            )
        up = products > 0
        labelled = ~missing & nominal
        part = MissingValueSums(
            ExactSums.of_weights(weights).total(),
            ExactSums.by_group(which[missing], weights[rows[missing]], n),
            ExactSums.by_group(which[numeric][up], products[up], n),
            ExactSums.by_group(which[numeric][~up], -products[~up], n),
            ExactSums.by_group(
                self.label_offsets[which[labelled]] + values[labelled].astype(np.int64),
                weights[rows[labelled]],
                int(self.label_counts.sum()),
            ),
        )
        return statistics.merge(part)

    def saved_statistics(self, statistics: MissingValueSums) -> dict:
        return statistics._asdict()

    def loaded_statistics(self, saved: dict) -> MissingValueSums:
        empty = self.new_statistics()
        sums = [saved[key] for key in MissingValueSums._fields]
        if not all(isinstance(s, ExactSums) and len(s) == len(e) for s, e in zip(sums, empty)):
            raise ValueError("the sums are not one per feature (or label)")
        return MissingValueSums(*sums)

    def finalize(self, statistics: MissingValueSums) -> None:
        n = len(self.features)
        known = ExactSums.stacked([statistics.total] * n).minus(statistics.missing) if n else ExactSums.zeros(0)
        known_weight = known.to_float()
        value_sums = statistics.positive.minus(statistics.negative).to_float()
        with np.errstate(divide="ignore", invalid="ignore"):
            means = np.where(known_weight > WEKA_SMALL, value_sums / np.where(known_weight > 0, known_weight, 1), 0.0)
        label_weights = statistics.labels.to_float()
        replacement = means
        for k in np.flatnonzero(self.label_counts).tolist():
            start, count = self.label_offsets[k], self.label_counts[k]
            weights = label_weights[start : start + count].copy()
            # the first label's weight is what the others and the missing values leave
            weights[0] = known_weight[k] - weights[1:].sum()
            replacement[k] = float(np.argmax(weights))
        self.replacement = replacement

    def value_map(self):
        """A missing value becomes its feature's replacement; the others stay."""
        return lambda positions, values: np.where(np.isnan(values), self.replacement[positions], values)

    def load_state(self, state: dict) -> None:
        super().load_state(state)
        for k in np.flatnonzero(self.label_counts).tolist():
            code = self.replacement[k]
            if code != np.floor(code) or not 0 <= code < self.label_counts[k]:
                raise invalid_state(self, f"'replacement' holds {code!r} for a nominal attribute")


class StratifiedFold(Stage):
    """Keep one of N stratified folds of the rows, or the others (Weka's StratifiedRemoveFolds;
    docs/algorithms.md §13).  A row's key is a seeded 52-bit hash of its content (values, texts,
    weight): neither row order, chunk size nor partitioning moves it, and copies of a row share its
    fold.  Rows of other data (``apply``) fall where their keys rank among the training rows'; without
    a nominal class the rows form one group.  The fitted state is one key per distinct training row.
    """

    name = "fold"
    summary = (
        "Keep the rows of stratified fold --fold K of --of N, or the others with --invert (StratifiedRemoveFolds)."
    )
    options = (
        Option("fold", int, 1, "The fold to keep, 1 to N (Weka's -F).", minimum=1),
        Option("of", int, 10, "The number of folds N (Weka's -N).", minimum=2, maximum=LONG_MAX),
        Option("invert", bool, False, "Keep every row but the fold's (Weka's -V): the training rows."),
        Option(
            "seed", int, 0, "Seed of the row keys: another seed, other folds (Weka's -S).", minimum=0, maximum=LONG_MAX
        ),
    )
    learns = True
    filters_rows = True
    state_arrays = {
        "group_counts": StateArray(length=None, whole=True),
        "keys": StateArray(length=None, whole=True, high=KEY_LIMIT),
    }

    def check_params(self) -> None:
        if self.params["fold"] > self.params["of"]:
            raise FilterkitError(f"option --fold: {self.params['fold']} is above --of {self.params['of']}")

    def preserves_zeros(self) -> bool:
        """Kept rows keep their values."""
        return True

    def select_features(self, schema, context) -> np.ndarray:
        """None: rows are kept or dropped whole."""
        return np.zeros(0, dtype=np.int64)

    def prepare(self, schema, context) -> None:
        super().prepare(schema, context)
        class_index = context.class_index
        self.stratified = class_index is not None and schema.attributes[class_index].kind == NOMINAL
        self.n_groups = len(schema.attributes[class_index].labels) + 1 if self.stratified else 1
        self.salt = self.params["seed"].to_bytes(8, "little")

    def row_keys(self, chunk: Chunk) -> tuple[np.ndarray, np.ndarray]:
        """Each row's key and group."""
        import scipy.sparse as sp  # here, not at the top: select imports this module and plain chains avoid scipy

        matrix = sp.csr_matrix(chunk.values)
        data = np.where(np.isnan(matrix.data), np.nan, matrix.data)
        stored = data != 0
        weights = np.ones(chunk.n_rows) if chunk.weights is None else np.asarray(chunk.weights, dtype=np.float64)
        keys = np.empty(chunk.n_rows, dtype=np.int64)
        text_columns = sorted(chunk.text)
        for row in range(chunk.n_rows):
            span = slice(matrix.indptr[row], matrix.indptr[row + 1])
            kept = stored[span]
            digest = hashlib.blake2b(self.salt, digest_size=8)
            digest.update(matrix.indices[span][kept].astype(np.int64).tobytes())
            digest.update(data[span][kept].tobytes())
            digest.update(weights[row : row + 1].tobytes())
            for column in text_columns:
                text = chunk.text[column][row]
                digest.update(b"\x00" if text is None else b"\x01" + str(text).encode("utf-8") + b"\xff")
            keys[row] = int.from_bytes(digest.digest(), "little") >> 12
        if not self.stratified:
            return keys, np.zeros(chunk.n_rows, dtype=np.int64)
        labels = chunk.column(cast(int, self.context.class_index))
        groups = np.where(np.isnan(labels), self.n_groups - 1, np.nan_to_num(labels)).astype(np.int64)
        return keys, groups

    def new_statistics(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Each chunk's row keys and groups (their order does not matter: they are sorted when fitted)."""
        return []

    def accumulate(self, statistics: list, chunk: Chunk) -> list:
        return [*statistics, self.row_keys(chunk)]

    def merge(self, first: list, second: list) -> list:
        """The rows of both parts."""
        return first + second

    def finalize(self, statistics: list) -> None:
        none = np.zeros(0, dtype=np.int64)
        keys = np.concatenate([keys for keys, _ in statistics] or [none])
        groups = np.concatenate([groups for _, groups in statistics] or [none])
        pairs = np.unique(np.column_stack([groups, keys]), axis=0) if len(keys) else np.zeros((0, 2), np.int64)
        self.keys = pairs[:, 1].astype(np.int64)
        self.group_counts = np.bincount(pairs[:, 0], minlength=self.n_groups).astype(np.int64)
        self._layout()

    def _layout(self) -> None:
        self.group_starts = np.r_[0, np.cumsum(self.group_counts)].astype(np.int64)

    def transform(self, chunk: Chunk) -> Chunk:
        keys, groups = self.row_keys(chunk)
        position = np.empty(chunk.n_rows, dtype=np.int64)
        for group in np.unique(groups).tolist():
            rows = groups == group
            start, stop = self.group_starts[group], self.group_starts[group + 1]
            position[rows] = start + np.searchsorted(self.keys[start:stop], keys[rows], side="left")
        chosen = (position % self.params["of"] == self.params["fold"] - 1) != self.params["invert"]
        return take_rows(chunk, np.flatnonzero(chosen))

    def load_state(self, state: dict) -> None:
        super().load_state(state)
        if len(self.group_counts) != self.n_groups or self.group_counts.sum() != len(self.keys):
            raise invalid_state(self, "'group_counts' does not fit the class or the keys")
        self._layout()
        for group in range(self.n_groups):
            span = self.keys[self.group_starts[group] : self.group_starts[group + 1]]
            if np.any(np.diff(span) <= 0):
                raise invalid_state(self, "a group's keys do not ascend")


@hookimpl
def register_stages(register):
    """The housekeeping stages: ``remove``, ``keep``, ``remove-useless``, ``replace-missing``, ``fold``."""
    register(RemoveAttributes)
    register(KeepAttributes)
    register(RemoveUseless)
    register(ReplaceMissing)
    register(StratifiedFold)
