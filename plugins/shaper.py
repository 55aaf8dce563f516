"""``shape``: the zero-preserving local-probability feature shaper (Forman, Scholz
& Rajaram, KDD'09 §3.2, §3.3, §3.5; docs/algorithms.md §4).

Each feature is replaced by a smoothed estimate of P(positive | value):

1. zero bin (default): rows at 0 form their own bin, p̃(0) = (pos₀+1)/(n₀+2);
   non-zero values are estimated from non-zero rows only (``--no-zero-bin``: zeros are
   an ordinary value);
2. at each distinct training value v, a window of every row at v plus the n rows
   just below and just above in value order (``--neighbors``, 15 a side); where
   the window ends inside a group of tied values, the group counts fractionally
   (k of its m rows count k/m of its positives), so row order never matters;
   p̃(v) = (positives + 1) / (rows + 2);
3. between training values linear interpolation, beyond them the end value;
4. ``--transform prob`` (default) or ``logodds`` applied after interpolation;
5. zero-preserving (default): output T(p̃(x)) − T(p̃(0)), so 0 stays 0 and sparse
   stays sparse;
6. missing values (``--missing bin``, default): their own bin, p̃(missing) =
   (positives among them + 1)/(rows + 2), output like a value's,
   T(p̃(missing)) − T(p̃(0)); a feature without missing training rows maps a
   missing value to its overall p̃.  ``--missing keep``: missing stays missing.

A nominal attribute becomes numeric T(p̃(label)), the Laplace-corrected positive
fraction of its label (no zero shift); a label unseen in training gets the
attribute's overall fraction, a missing label its missing bin's (docs/algorithms.md §4.2).  Statistics are
per-feature value histograms, so the cost follows distinct values, not rows.

The positive class is ``--positive``, or on a two-label class the minority one.
On a class of k > 2 labels without ``--positive`` (docs/algorithms.md §4.1):
``--multiclass one-vs-rest`` (default) writes k copies of each feature,
``NAME@LABEL``, the copy of label c shaped with c as the positive class;
``--multiclass max`` shapes each feature toward its most informative class, the
one whose shaped feature predicts c-vs-rest on the training rows with the largest
log-likelihood gain over the class rate.  Internally every output feature is a
*column*, a (feature, class) pair; the fitted arrays are per column.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, cast

import numpy as np

from filterkit.class_counts_stage import ClassValueCountsStage
from filterkit.export.steps import NotExportable, Shape
from filterkit.kernels import ARRAYS, shape_stored, use_compiled
from filterkit.labels import LABEL_OPTIONS
from filterkit.limits import VARIABLES, Limits
from filterkit.metrics import positive_code
from filterkit.plugin import (
    NOMINAL,
    NUMERIC,
    Attribute,
    Chunk,
    FilterkitError,
    Option,
    StateArray,
    ValueCounts,
    ValueMapped,
    feature_positions,
    hookimpl,
    invalid_state,
    map_features,
)
from filterkit.saved_state import OPTIONS_KEY, fitted_options
from filterkit.shaping import NEIGHBORS, Knots, first_unsorted_knot, fit_toward
from filterkit.stage import positions_by_width, with_stored_values
from filterkit.stage_parts import features_of_kinds
from filterkit.statistics import LabelStatistics

if TYPE_CHECKING:
    import scipy.sparse as sp


#: ``--multiclass``: a shaped copy of each feature per class label, or each toward its most informative class.
ONE_VS_REST = "one-vs-rest"
MOST_INFORMATIVE = "max"
#: ``--missing``: missing values form their own bin, or stay missing (0.3's behaviour).
MISSING_BIN = "bin"
MISSING_KEPT = "keep"


class Shaper(ClassValueCountsStage, ValueMapped):
    """Replace each feature by its local probability of the positive class."""

    name = "shape"
    examples = ({}, {"zero_preserve": False})
    summary = (
        "Shape each feature into its local positive-class probability (KDD'09 LP shaper). Multi-class: "
        "one-vs-rest, a copy NAME@LABEL per class (--multiclass max: toward its most informative class); "
        "multi-label: so per label, or toward one (--label)."
    )
    options = (
        Option("zero_bin", bool, True, "Zeros form their own bin (--no-zero-bin for dense data)."),
        Option("neighbors", int, NEIGHBORS, "Rows taken on each side of a value.", minimum=0),
        Option("transform", str, "prob", "Output the probability or its log-odds.", choices=("prob", "logodds")),
        Option("zero_preserve", bool, True, "Shift so that 0 maps to 0 (--no-zero-preserve: output T(p) itself)."),
        Option(
            "multiclass",
            str,
            ONE_VS_REST,
            "On a class of more than two labels without --positive: one copy of each feature per label, "
            "NAME@LABEL, shaped toward it (one-vs-rest), or each feature shaped toward its most informative "
            "label (max).",
            choices=(ONE_VS_REST, MOST_INFORMATIVE),
        ),
        Option(
            "missing",
            str,
            MISSING_BIN,
            "A missing value gets its own bin, shaped like a value (bin), or stays missing (keep, as before 0.4).",
            choices=(MISSING_BIN, MISSING_KEPT),
            before_it_existed=MISSING_KEPT,
        ),
        LABEL_OPTIONS[0],
    )
    widening_hint = (
        "one copy of each feature per class label (per label of multi-label data); --positive LABEL (--label NAME "
        "on multi-label data) or --multiclass max shapes it once"
    )
    #: Per column (a feature shaped toward one class): its class (saved only by --multiclass max; −1:
    #: a binary shaper's, not recorded), p̃(0), p̃ over all its present rows and p̃(missing) (saved
    #: only where it differs from that); the knots, sorted by (column, value), with p̃ at each.
    state_arrays = {
        "column_class": StateArray(length=None, whole=True, low=-1),
        "zero_probability": StateArray(length="column_class", probability=True),
        "default_probability": StateArray(length="column_class", probability=True),
        "missing_probability": StateArray(length="column_class", probability=True),
        "knot_feature": StateArray(length=None, whole=True, high="column_class"),
        "knot_value": StateArray(length="knot_feature", finite=False),
        "knot_probability": StateArray(length="knot_feature", probability=True),
    }

    def select_features(self, schema, context):
        """Numeric and nominal attributes other than the class."""
        return features_of_kinds(schema, context, (NUMERIC, NOMINAL))

    def prepare(self, schema, context) -> None:
        super().prepare(schema, context)
        self.nominal = np.array([schema.attributes[i].kind == NOMINAL for i in self.features], dtype=bool)
        # multi-label data: each label's two-class task, shaped toward its value 1 (docs/multilabel.md)
        multilabel = bool(self.label_positions)
        labels = (
            tuple(schema.attributes[i].name for i in self.label_positions)
            if multilabel
            else self.class_attribute.labels
        )
        #: what each copy is shaped toward: the class's labels, or the label attributes' names
        self.target_names = labels
        # a class of more than two labels without --positive shapes toward every class (docs/algorithms.md
        # §4.1): one-vs-rest copies, or (--multiclass max) each feature's class is learned; so do several labels
        self.every_class = len(labels) > 1 if multilabel else self.context.positive is None and len(labels) > 2
        self.one_vs_rest = self.every_class and self.params["multiclass"] == ONE_VS_REST
        self.chooses_classes = self.every_class and self.params["multiclass"] == MOST_INFORMATIVE
        self.copies = len(labels) if self.one_vs_rest else 1
        self.column_feature = np.repeat(np.arange(len(self.features)), self.copies)
        self.column_nominal = self.nominal[self.column_feature]
        if self.one_vs_rest:
            self._lay_out_copies()

    def _lay_out_copies(self) -> None:
        """The one-vs-rest output schema: each feature replaced, where it stands, by its copies
        NAME@LABEL in the class's label order; ``source`` maps each output attribute to its input
        attribute, ``output_column`` to its column (−1: not shaped)."""
        labels = self.target_names
        written = len(self.input_schema.attributes) + len(self.features) * (len(labels) - 1)
        allowed = Limits.from_environment().attributes
        if written > allowed:
            raise FilterkitError(
                f"stage '{self.name}': --multiclass {ONE_VS_REST} would write {written:,} attributes "
                f"({len(self.features):,} features × {len(labels):,} labels), more than the {allowed:,} a file may "
                f"declare (set {VARIABLES['attributes']} to allow more): use --multiclass {MOST_INFORMATIVE} "
                "or --positive"
            )
        attributes, source, output_column = [], [], []
        column_of_attribute = np.full(len(self.input_schema.attributes), -1, dtype=np.int64)
        column_of_attribute[self.features] = np.arange(len(self.features)) * self.copies
        for i, attribute in enumerate(self.input_schema.attributes):
            if column_of_attribute[i] < 0:
                attributes.append(attribute)
                source.append(i)
                output_column.append(-1)
                continue
            for c, label in enumerate(labels):
                attributes.append(Attribute(f"{attribute.name}@{label}", NUMERIC, declared_type="numeric"))
                source.append(i)
                output_column.append(column_of_attribute[i] + c)
        repeated = sorted(name for name, count in Counter(a.name for a in attributes).items() if count > 1)
        if repeated:
            raise FilterkitError(
                f"stage '{self.name}': --multiclass {ONE_VS_REST} would write two attributes called "
                f"'{repeated[0]}' (a copy NAME@LABEL repeats an attribute's name): rename it, or use "
                f"--multiclass {MOST_INFORMATIVE} or --positive"
            )
        self.copies_schema = self.input_schema.with_attributes(attributes)
        self.source = np.array(source, dtype=np.int64)
        self.output_column = np.array(output_column, dtype=np.int64)
        self.output_of_input = np.searchsorted(self.source, np.arange(len(self.input_schema.attributes)))

    def output_schema(self):
        """The input schema with every shaped attribute numeric; one-vs-rest: each replaced by its copies."""
        return self.copies_schema if self.one_vs_rest else super().output_schema()

    def finalize(self, statistics: ValueCounts | LabelStatistics) -> None:
        options = self.params["zero_bin"], self.params["neighbors"], self.params["missing"] == MISSING_BIN
        if isinstance(statistics, LabelStatistics):
            # each label's own two-class counts, shaped toward its value 1
            fits = [
                fit_toward(1, counts.histogram(include_zero=True), counts, self.nominal, *options)
                for counts in statistics.per_label
            ]
            has_rows = np.array([counts.class_totals[1] > 0 for counts in statistics.per_label])
        else:
            self.training_counts = statistics
            has_rows = statistics.class_totals > 0
            if self.one_vs_rest:
                targets = list(range(len(self.class_attribute.labels)))
            elif self.every_class:  # --multiclass max: toward the labels that have rows, not every declared one
                targets = np.flatnonzero(has_rows).tolist() or list(range(len(self.class_attribute.labels)))
            else:
                targets = [positive_code(self.class_attribute, statistics.class_totals, self.context.positive)]
            histogram = statistics.histogram(include_zero=True)
            fits = [fit_toward(target, histogram, statistics, self.nominal, *options) for target in targets]
        n_features = len(self.features)
        # the code of each fit's columns in column_class: a copy's or a label's position, else the class label the
        # fit shapes toward
        one_each = self.one_vs_rest or isinstance(statistics, LabelStatistics)
        codes = list(range(len(fits))) if one_each else [fit.target for fit in fits]
        if self.one_vs_rest:
            self.column_class = np.tile(np.arange(self.copies), n_features)
        elif len(fits) > 1:
            # each feature's class of largest information among those with training rows (the first on a tie)
            information = np.where(has_rows[codes][:, None], [fit.information for fit in fits], -np.inf)
            self.column_class = np.asarray(codes, dtype=np.int64)[np.argmax(information, axis=0)]
        else:
            self.column_class = np.full(n_features, codes[0], dtype=np.int64)
        n_columns = len(self.column_class)
        self.zero_probability = np.empty(n_columns)
        self.default_probability = np.empty(n_columns)
        self.missing_probability = np.empty(n_columns)
        knot_feature, knot_value, knot_probability = [], [], []
        for fit, code in zip(fits, codes):
            # this fit's column of each feature (−1: the feature is shaped toward another class)
            column = np.flatnonzero(self.column_class == code)
            feature = self.column_feature[column]
            column_of_feature = np.full(n_features, -1, dtype=np.int64)
            column_of_feature[feature] = column
            self.zero_probability[column] = fit.zero_probability[feature]
            self.default_probability[column] = fit.default_probability[feature]
            self.missing_probability[column] = fit.missing_probability[feature]
            used = column_of_feature[fit.knot_feature] >= 0
            knot_feature.append(column_of_feature[fit.knot_feature[used]])
            knot_value.append(fit.knot_value[used])
            knot_probability.append(fit.knot_probability[used])
        knots = [np.concatenate(part) for part in (knot_feature, knot_value, knot_probability)]
        order = np.lexsort((knots[1], knots[0]))
        self.knot_feature, self.knot_value, self.knot_probability = (part[order] for part in knots)
        self.knots = self._knots()
        self.zero_probability = self.knots.at_zero()

    def _knots(self) -> Knots:
        return Knots(
            self.knot_feature,
            self.knot_value,
            self.knot_probability,
            self.zero_probability,
            self.default_probability,
            self.column_nominal,
            self.params["zero_bin"],
        )

    def _shape(self, positions: np.ndarray, values: np.ndarray) -> np.ndarray:
        """The output value of each (column, value) pair; NaN is shaped from the missing bin
        (--missing bin) or stays NaN (keep)."""
        transform = _TRANSFORMS[self.params["transform"]]
        missing = np.isnan(values)
        anything_missing = missing.any()
        probability = self.knots.at(positions, np.where(missing, 0.0, values) if anything_missing else values)
        binned = anything_missing and self.params["missing"] == MISSING_BIN
        if binned:
            probability[missing] = self.missing_probability[positions[missing]]
        shaped = transform(probability)
        if self.params["zero_preserve"]:
            shaped = shaped - self._zero_shift()[positions]
        return np.where(missing, np.nan, shaped) if anything_missing and not binned else shaped

    def _zero_shift(self) -> np.ndarray:
        """Per column, T(p̃(0)) (0 for nominal features): subtracted so that 0 maps to 0."""
        transform = _TRANSFORMS[self.params["transform"]]
        return np.where(self.column_nominal, 0.0, transform(self.zero_probability))

    def exported_step(self) -> Shape:
        """The stage in an exported scorer (:mod:`filterkit.export`): the compiled kernel's tables (and one-vs-rest's
        copies); refused where that kernel does not shape (--no-zero-preserve, --transform logodds, a scaled knot
        step) and for nominal attributes."""
        if not self.params["zero_preserve"]:
            raise NotExportable("--no-zero-preserve gives every feature a value in every document")
        tables = self._compiled_tables()
        if tables is None:
            raise NotExportable(
                "--transform logodds (numpy's logarithm may round otherwise than C's)"
                if self.params["transform"] != "prob"
                else "two knots of a feature are so far apart or so close that their step is interpolated on scaled "
                "values, which the exported scorer does not do"
                if self.knots.scaled.any()
                else "the compiled kernels are turned off (filterkit.kernels.compiled)"
            )
        if tables["column_nominal"].any():
            raise NotExportable("it shapes a nominal attribute, which an exported scorer does not read")
        copies = (self.source, self.output_column) if self.one_vs_rest else None
        return Shape(self.features, tables, bool(self.params["zero_bin"]), copies)

    def preserves_zeros(self) -> bool:
        """With --zero-preserve (the default) T(0) is subtracted, so 0 maps to 0 (in every copy)."""
        return self.params["zero_preserve"]

    def value_map(self):
        """Shaping toward one class per feature is elementwise (one-vs-rest copies are not)."""
        return None if self.one_vs_rest else self._shape

    def stored_values_map(self):
        """The map :meth:`value_map` gives, by the compiled kernel where it is built."""
        if super().stored_values_map() is None:
            return None
        position_of = positions_by_width(self.features)
        return lambda rows, data: self._shaped_stored(rows, position_of(rows.shape[1]), data)

    def transform(self, chunk: Chunk) -> Chunk:
        if self.one_vs_rest:
            return self._transform_copies(chunk)
        if chunk.is_sparse and self.params["zero_preserve"]:
            rows = chunk.csr()
            data = self._shaped_stored(rows, feature_positions(chunk.shape[1], self.features))
            nominal = np.flatnonzero(self.nominal)
            if not len(nominal):
                return chunk.with_stored(data, rows)
            matrix = cast("sp.csr_matrix", chunk.values).tocsr()
            shaped = self._with_first_labels(
                with_stored_values(matrix, data), matrix, self.features[nominal], self.features[nominal], nominal
            )
            return Chunk(shaped, chunk.text, chunk.weights)
        return map_features(chunk, self.features, self._shape)

    def _shaped_stored(self, rows, position_of: np.ndarray, stored: np.ndarray | None = None) -> np.ndarray:
        """The stored values of ``rows`` (CSR arrays or matrix; or ``stored`` in their place) with
        those of a shaped attribute (``position_of``: each attribute's column, −1 for none) shaped:
        by the compiled kernel when the fit needs neither the log-odds nor the scaled
        interpolation (and :data:`filterkit.kernels.ARRAYS` is on), else by :meth:`_shape`."""
        indices = rows.indices
        stored = rows.data if stored is None else stored
        tables = self._compiled_tables()
        if tables is not None:
            data = np.empty(len(stored))
            if shape_stored(
                indices=np.ascontiguousarray(indices),
                data=np.ascontiguousarray(stored, dtype=np.float64),
                position=position_of,
                out=data,
                **tables,
            ):
                return data
        positions = position_of[indices]
        acted = positions >= 0
        data = stored.copy()
        data[acted] = self._shape(positions[acted], data[acted])
        return data

    def _compiled_tables(self) -> dict | None:
        """The fitted tables by the names ``shape_stored`` takes them by, or None where
        only :meth:`_shape` shapes: for ``--transform logodds`` (numpy's logarithm may round
        differently from C's), for a fit with a knot step that needs the scaled interpolation, and with
        :data:`filterkit.kernels.ARRAYS` off."""
        if self.params["transform"] != "prob" or self.knots.scaled.any() or not use_compiled(ARRAYS):
            return None
        floats = {
            "knot_value": self.knot_value,
            "knot_probability": self.knot_probability,
            "first_probability": self.knots.first_probability,
            "zero_probability": self.zero_probability,
            "default_probability": self.default_probability,
            "missing_probability": self.missing_probability,
            "zero_shift": self._zero_shift(),
        }
        return {
            "knot_start": np.ascontiguousarray(self.knots.start, dtype=np.int64),
            **{name: np.ascontiguousarray(values, dtype=np.float64) for name, values in floats.items()},
            "column_nominal": np.ascontiguousarray(self.column_nominal, dtype=bool),
            "zero_bin": bool(self.params["zero_bin"]),
            "missing_bin": self.params["missing"] == MISSING_BIN,
            **dict(zip(("table_start", "table_low", "table_high", "lookup"), self._lookup_tables())),
        }

    def _lookup_tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(start, low, high, lookup)`` for ``shape_stored``: per numeric column, its whole
        values from its first knot to its last, shaped already by :meth:`_shape`, at
        ``lookup[start + v − low]``; start −1 for a column without (nominal, no knots, more than
        ``_LOOKUP_SPAN`` values, or past a budget of 4 entries a knot, in column order).  Made
        once per fit or load: its size follows the knots, not the rows."""
        made = self.__dict__.get("_lookup_made")
        if made is not None and made[0] is self.knot_value:
            return made[1]
        n_columns = len(self.column_feature)
        start = self.knots.start
        has_knots = np.diff(start) > 0
        last_knot = max(len(self.knot_value) - 1, 0)
        first = self.knot_value[np.minimum(start[:-1], last_knot)] if len(self.knot_value) else 0.0
        last = self.knot_value[np.maximum(start[1:] - 1, 0)] if len(self.knot_value) else 0.0
        with np.errstate(invalid="ignore"):
            low, high = np.where(has_knots, np.ceil(first), 0.0), np.where(has_knots, np.floor(last), -1.0)
            looked_up = (
                has_knots
                & ~self.column_nominal
                & (np.abs(low) < _EXACT_INTEGERS)
                & (np.abs(high) < _EXACT_INTEGERS)
                & (high >= low)
                & (high - low < _LOOKUP_SPAN)
            )
        size = np.where(looked_up, high - low + 1, 0).astype(np.int64)
        looked_up &= np.cumsum(size) <= 4 * len(self.knot_value)
        size = np.where(looked_up, size, 0)
        start = np.where(looked_up, np.cumsum(size) - size, -1)
        column = np.repeat(np.arange(n_columns), size)
        values = low[column] + (np.arange(len(column)) - start[column])
        tables = (start, np.where(looked_up, low, 0.0), np.where(looked_up, high, -1.0), self._shape(column, values))
        self._lookup_made = (self.knot_value, tables)
        return tables

    def _transform_copies(self, chunk: Chunk) -> Chunk:
        """One-vs-rest: each input attribute's values in each of its output attributes, the
        copies shaped; a sparse chunk stays sparse, touching only its stored values, when
        zeros stay zero."""
        text = {int(self.output_of_input[column]): rows for column, rows in chunk.text.items()}
        shaped = self.output_column >= 0
        if chunk.is_sparse and self.params["zero_preserve"]:
            import scipy.sparse as sp

            matrix = cast(sp.csr_matrix, chunk.values).tocsr()
            outputs_per_input = np.bincount(self.source, minlength=matrix.shape[1])
            repeats = outputs_per_input[matrix.indices]
            entry = np.repeat(np.arange(len(matrix.data)), repeats)
            within = np.arange(len(entry)) - np.repeat(np.cumsum(repeats) - repeats, repeats)
            output = self.output_of_input[matrix.indices[entry]] + within
            data = matrix.data[entry]
            column = self.output_column[output]
            acted = column >= 0
            data[acted] = self._shape(column[acted], data[acted])
            row_starts = np.r_[0, np.cumsum(repeats)][matrix.indptr]
            copies = sp.csr_matrix((data, output, row_starts), shape=(matrix.shape[0], len(self.source)))
            if not data.all():
                copies.eliminate_zeros()
            nominal = np.flatnonzero(shaped & self.column_nominal[np.maximum(self.output_column, 0)])
            copies = self._with_first_labels(copies, matrix, nominal, self.source[nominal], self.output_column[nominal])
            return Chunk(copies, text, chunk.weights)
        values = chunk.dense_values()[:, self.source]
        block = values[:, shaped]
        columns = np.broadcast_to(self.output_column[shaped], block.shape)
        values[:, shaped] = self._shape(columns.ravel(), block.ravel()).reshape(block.shape)
        if chunk.is_sparse:
            import scipy.sparse as sp

            values = sp.csr_matrix(values)  # computed densely, stored sparse again
        return Chunk(values, text, chunk.weights)

    def _with_first_labels(
        self, shaped: sp.csr_matrix, matrix: sp.csr_matrix, outputs: np.ndarray, inputs: np.ndarray, columns: np.ndarray
    ) -> sp.csr_matrix:
        """``shaped`` (the stored values of the sparse ``matrix`` shaped) with the nominal output
        attributes ``outputs`` filled where their input attribute ``inputs`` holds the first label,
        which sparse rows leave out: a nominal value has no zero shift, so it is shaped like any
        label (with ``columns``, their columns), and only the numeric attributes stay sparse."""
        if not len(outputs):
            return shaped
        import scipy.sparse as sp

        stored = matrix[:, inputs].tocsc()
        stored.data = np.ones_like(stored.data)
        rows, which = np.nonzero(stored.toarray() == 0)
        values = self._shape(columns[which], np.zeros(len(rows)))
        first_labels = sp.csr_matrix((values, (rows, outputs[which])), shape=shaped.shape)
        return cast(sp.csr_matrix, (shaped + first_labels).tocsr())

    def state(self) -> dict:
        """The fitted arrays, ``column_class`` and ``missing_probability`` only where ``state_arrays`` says."""
        recorded = {"column_class": self.column_class} if self.chooses_classes else {}
        differs = not np.array_equal(self.missing_probability, self.default_probability)
        missing = {"missing_probability": self.missing_probability} if differs else {}
        return {
            **recorded,
            "knot_feature": self.knot_feature,
            "knot_value": self.knot_value,
            "knot_probability": self.knot_probability,
            "zero_probability": self.zero_probability,
            "default_probability": self.default_probability,
            **missing,
            OPTIONS_KEY: fitted_options(self),
        }

    def load_state(self, state: dict) -> None:
        if "column_class" not in state and not self.chooses_classes:
            # one-vs-rest: every label in order; a binary shaper's class is not recorded (−1)
            implied = np.tile(np.arange(self.copies), len(self.features)) if self.one_vs_rest else -1
            state = {**state, "column_class": np.broadcast_to(implied, len(self.column_feature))}
        elif "column_class" in state and np.ndim(state["column_class"]) == 1:
            # the other arrays' lengths follow column_class's: a wrong length is its fault
            if len(state["column_class"]) != len(self.column_feature):
                raise invalid_state(
                    self,
                    f"'column_class' has {len(state['column_class'])} entries, expected {len(self.column_feature)}",
                )
        if "missing_probability" not in state and "default_probability" in state:
            state = {**state, "missing_probability": state["default_probability"]}
        super().load_state(state)
        n_labels = len(self.target_names)
        expected = np.tile(np.arange(n_labels), len(self.features)) if self.one_vs_rest else None
        if np.any(self.column_class >= n_labels) or (
            expected is not None and not np.array_equal(self.column_class, expected)
        ):
            raise invalid_state(self, "'column_class' does not name each column's class label")
        where = first_unsorted_knot(self.knot_feature, self.knot_value)
        if where is not None:
            raise invalid_state(self, f"the knots are not sorted by feature and value (knot {where})")
        nominal_knot = self.column_nominal[self.knot_feature]
        if nominal_knot.any():
            labels = np.array([len(self.input_schema.attributes[i].labels or ()) for i in self.features])
            codes = self.knot_value[nominal_knot]
            knot_labels = labels[self.column_feature[self.knot_feature[nominal_knot]]]
            if np.any((codes != np.floor(codes)) | (codes < 0) | (codes >= knot_labels)):
                raise invalid_state(self, "a nominal attribute's knot is not one of its label codes")
        self.knots = self._knots()


_TRANSFORMS = {"prob": lambda p: p, "logodds": lambda p: np.log(p) - np.log1p(-p)}

# The compiled kernel reads a column's shaped whole values from a table when its knots span at most
# this many of them (word counts: a few dozen), and only values below 2**52 are whole numbers exactly.
_LOOKUP_SPAN = 256
_EXACT_INTEGERS = 2.0**52


@hookimpl
def register_stages(register):
    """The LP shaper."""
    register(Shaper)
