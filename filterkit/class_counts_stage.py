"""The base of the stages that learn the value counts of their features by class, or by label of multi-label
data (:mod:`filterkit.statistics`): ``shape``, the scorers.  Such a stage that is also :class:`ValueMapped`
hands the next one its statistics, its counts sent through its value map, which saves the chain a pass."""

from __future__ import annotations

import numpy as np

from filterkit.labels import chosen_labels
from filterkit.schema import Chunk
from filterkit.stage import Accepts, Stage, ValueMapped, feature_positions, refuse_unaccepted_input
from filterkit.statistics import (
    LabelSetStatistics,
    LabelStatistics,
    PresenceCounts,
    ValueCounts,
    label_set_codes,
)


class ClassValueCountsStage(Stage):
    """A stage that learns the :class:`ValueCounts` of its features by class; it needs a
    nominal class attribute (``self.class_attribute``), or multi-label data, whose labels it learns
    each as a two-class task (``self.label_positions``; :class:`LabelStatistics`)."""

    learns = True
    accepts = Accepts(nominal_class=True, labels=True)
    #: the statistics :meth:`finalize` was given (features × distinct values), kept until :meth:`statistics_for`
    training_counts: ValueCounts | PresenceCounts | None = None
    #: multi-label data: the positions of the labels it learns (empty: the class)
    label_positions: tuple[int, ...] = ()

    def prepare(self, schema, context) -> None:
        super().prepare(schema, context)
        refuse_unaccepted_input(self, schema, context)
        if context.class_index is None and context.labels:
            self.label_positions = chosen_labels(self, schema, context.labels)
            self.class_attribute = schema.attributes[self.label_positions[0]]
        else:
            self.class_attribute = schema.attributes[context.class_index]

    def new_statistics(self):
        if self.label_positions and self.params.get("label_powerset"):
            return LabelSetStatistics((), self.class_statistics(0))
        if self.label_positions:
            return LabelStatistics([self.class_statistics() for _ in self.label_positions])
        return self.class_statistics()

    def class_statistics(self, n_classes: int | None = None) -> ValueCounts | PresenceCounts:
        """Empty statistics of one class attribute (or one label; or ``n_classes`` label sets)."""
        return ValueCounts.empty(
            len(self.features), len(self.class_attribute.labels) if n_classes is None else n_classes
        )

    def accumulate(self, statistics, chunk: Chunk):
        if isinstance(statistics, LabelSetStatistics):
            sets, codes = label_set_codes(chunk, self.label_positions)
            counts = self.class_statistics(len(sets)).add(chunk, self.features, codes)
            return statistics.merge(LabelSetStatistics(sets, counts))
        if isinstance(statistics, LabelStatistics):
            return LabelStatistics(
                [
                    counts.add(chunk, self.features, position)
                    for counts, position in zip(statistics.per_label, self.label_positions)
                ]
            )
        return statistics.add(chunk, self.features, self.context.class_index)

    def statistics_for(self, following: Stage):
        """The next stage's statistics: this stage's training value counts sent through
        :meth:`~filterkit.stage.ValueMapped.value_map`, when both gather class value counts over the same rows and
        this stage keeps every attribute in place.  The counts are released after."""
        counts, self.training_counts = self.training_counts, None
        value_map = self.value_map() if isinstance(self, ValueMapped) else None
        if (
            not isinstance(following, ClassValueCountsStage)
            or not isinstance(counts, ValueCounts)
            or value_map is None
            or len(self.output_schema().attributes) != len(self.input_schema.attributes)
        ):
            return None
        mapped = counts.through(value_map)
        return (
            None if mapped is None else following.statistics_of_counts(mapped, self.features, self.context.class_index)
        )

    def statistics_of_counts(self, counts: ValueCounts, columns: np.ndarray, class_index: int | None):
        """The statistics this stage would gather, picked out of ``counts``: value counts
        of its training rows over the columns ``columns`` by the class at ``class_index``
        (what :meth:`statistics_for` of the stage before derived); None when they do not
        cover its features and class, or when the stage gathers statistics of its own kind."""
        if type(self).accumulate is not ClassValueCountsStage.accumulate or class_index != self.context.class_index:
            return None
        empty = self.new_statistics()
        size = max(int(columns.max(initial=-1)), int(self.features.max(initial=-1))) + 1
        positions = feature_positions(size, columns)[self.features]
        if (positions < 0).any() or counts.n_classes != empty.n_classes:
            return None
        own = counts.of_features(positions)
        if type(empty) is ValueCounts:
            return own
        if type(empty) is PresenceCounts:
            return PresenceCounts.of_value_counts(own)
        return None
