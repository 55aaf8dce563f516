"""The base of a record format: a format whose author writes only how a stream becomes records, each a line
number and a mapping of field to value, and inherits the rest: the scan (each field typed by the typing step
of :mod:`filterkit.formats.records`: numeric, nominal, text), a model's header matched by field name, a field
of label sets (``--labels-column``), the chunks, and errors naming the file and the line.

A value is a string, a number, a boolean (the labels ``true`` and ``false``) or None (missing); a field
absent from a record is missing there.  The fields are the first record's in their order, then each new
field where it is first met.  JSON Lines (:mod:`filterkit.formats.jsonl`) is such a format, and so are
the two made from outside in tests/test_record_format.py.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from typing import IO, Callable, Iterable, Iterator, Mapping, Sequence, cast

import numpy as np

from filterkit.errors import ArffError
from filterkit.formats import FormatOptions, Layout, Reopen, relation_of
from filterkit.formats.records import (
    ColumnTyping,
    KeptGroups,
    LabelledDetails,
    LabelSets,
    column_values,
    dense_rows,
    first_positions,
    label_codes,
    labelled_schema,
    layout_by_name,
    one_by_one,
    typing_of,
    typing_options,
    with_labels,
)
from filterkit.limits import VARIABLES, Limits
from filterkit.schema import STRING, Chunk, Schema
from filterkit.text import shown

#: A value as the typing step sees it: its text and its number (None: not a number); None: missing.
Cell = tuple[str, float | None] | None
#: A group of records and the line number of each.
RecordGroup = tuple[Sequence[Mapping[str, object]], list[int]]

#: Records a scan reads at a time.
SCAN_RECORDS = 10_000


class RecordFormat:
    """A reader of records, each a line number and a mapping of field to value (a string, a number, a boolean,
    None or absent: missing; the field ``--labels-column`` names, a list of label names).  A subclass writes
    :meth:`records` (or, to read a group of records at once, :meth:`record_groups`); this class types each
    field by its values (numeric, nominal or text, as CSV's columns are typed), matches a model's header by
    field name, makes the chunks and names the file and line in every error.  It reads the typing step's
    options (``--text``, ``--nominal``, ``--numeric``) and ``--labels-column`` where its
    :class:`~filterkit.plugins.Format` declares them."""

    #: What the error of an input without any field says is missing.
    nothing_found = "no record with a field"

    def __init__(self, limits: Limits | None = None):
        self.limits = Limits.from_environment() if limits is None else limits
        #: the scan's records, when the source asks for them to be kept (:class:`KeptGroups`)
        self.kept: KeptGroups | None = None

    def records(self, stream: IO[bytes], name: str) -> Iterator[tuple[int, Mapping[str, object]]]:
        """Each record of ``stream`` (the file ``name``) with its line number (from 1); a record the format
        cannot read is a :class:`~filterkit.errors.FilterkitError` naming ``name`` and the line."""
        raise NotImplementedError(f"{type(self).__name__} reads no records: give it records() or record_groups()")

    def record_groups(self, stream: IO[bytes], name: str, rows: int, scanning: bool) -> Iterator[RecordGroup]:
        """The records of :meth:`records` in groups of at most ``rows``; ``scanning``: the scan's pass (a format
        may check there what a later pass then need not)."""
        records: list[Mapping[str, object]] = []
        numbers: list[int] = []
        for number, record in self.records(stream, name):
            records.append(record)
            numbers.append(number)
            if len(records) == rows:
                yield records, numbers
                records, numbers = [], []
        if records:
            yield records, numbers

    def scan(self, opened: Reopen, name: str, options: FormatOptions, known_schema: Schema | None) -> Layout:
        """One pass finds the fields and types them (a second collects labels the first could not keep);
        with ``known_schema`` (a model's header) the fields must be its attributes.  The field of labels
        (``--labels-column``) becomes the label attributes, first."""
        field_of_labels = options.labels_column
        typing = typing_of([], name, self.limits, typing_options(options, field_of_labels))
        label_sets = None if field_of_labels is None else LabelSets(field_of_labels, name, self.limits)
        rows = 0
        for records, numbers in self._groups(opened, name):
            rows += len(records)
            for field, cells in self._present_cells(records, numbers, field_of_labels, typing, name).items():
                typing.observe(typing.positions[field], dict.fromkeys(cells), len(cells), numbers[-1])
            if label_sets is not None:
                label_sets.observe(_label_sets(records, numbers, label_sets.column, name), numbers)
            if self.kept is not None:  # as dicts, which marshal writes
                self.kept.add(numbers, [record if type(record) is dict else dict(record) for record in records])
        if not typing.names and not (label_sets and label_sets.first_line):
            raise ArffError(f"{self.nothing_found}: nothing to read", name, 1)
        if known_schema is not None:
            return self._known_layout(known_schema, typing.names, name, rows, label_sets)
        self._collect_labels(opened, name, typing)
        relation, attributes = relation_of(name, keep_extension=False), typing.attributes()
        if label_sets is None:
            schema = Schema(relation, attributes)
            return Layout(schema, (), label_codes(schema.attributes), rows)
        labels = label_sets.attributes(typing.names)
        schema = labelled_schema(relation, labels, attributes)
        details = LabelledDetails(label_codes(attributes), label_sets.column, tuple(a.name for a in labels))
        return Layout(schema, (), details, rows)

    def _known_layout(
        self, known_schema: Schema, fields: list[str], name: str, rows: int, label_sets: LabelSets | None
    ) -> Layout:
        """The layout of a model's header: the fields matched by name, the labels met as the model's."""
        if self.kept is not None:  # the passes read the file again
            self.kept.close()
            self.kept = None
        if label_sets is not None:
            return label_sets.known_layout(
                known_schema, lambda others: layout_by_name(others, fields, name, rows, "field")
            )
        return layout_by_name(known_schema, fields, name, rows, "field")

    def _collect_labels(self, opened: Reopen, name: str, typing: ColumnTyping) -> None:
        """The second pass: the labels of the nominal fields whose labels the scan could not keep."""
        again = typing.needs_labels()
        if not again:
            return
        typing.restart_labels(again)
        for records, numbers in self._groups(opened, name):
            for column in again:
                field = typing.names[column]
                found = [_cell(record.get(field), field, name, number) for record, number in zip(records, numbers)]
                typing.collect(column, dict.fromkeys(cell for cell in found if cell is not None))

    def _present_cells(
        self,
        records: Sequence[Mapping[str, object]],
        numbers: list[int],
        field_of_labels: str | None,
        typing: ColumnTyping,
        name: str,
    ) -> dict[str, list[tuple[str, float | None]]]:
        """Each field of ``records`` (but the field of labels) and the cells of its present values, a new field
        added to ``typing`` in the order first met; an error past the bound on attributes, or for a value no
        cell holds, naming its line."""
        held = _values_by_field(records, numbers)
        held.pop(cast(str, field_of_labels), None)
        for field, (_, lines) in held.items():
            if field not in typing.positions:
                if len(typing.names) >= self.limits.attributes:
                    raise ArffError(
                        f"more than {self.limits.attributes:,} fields: refused "
                        f"(set {VARIABLES['attributes']} to allow more)",
                        name,
                        lines[0],
                    )
                typing.add_column(field)
        present = {}
        for field, (values, lines) in held.items():
            cells = [_cell(value, field, name, number) for value, number in zip(values, lines)]
            present[field] = [found for found in cells if found is not None]
        return present

    def scan_reads_rows(self, known_schema: Schema | None) -> bool:
        """Always: the fields are known only once every record is read."""
        return True

    def chunks(self, stream: IO[bytes], name: str, layout: Layout, chunk_rows: int) -> Iterator[Chunk]:
        """The rows as dense chunks of at most ``chunk_rows`` rows (fewer, :func:`dense_rows`, when the
        attributes are many), the label attributes first, if any."""
        labelled = layout.details if isinstance(layout.details, LabelledDetails) else None
        codes = layout.details if labelled is None else labelled.details
        assert isinstance(codes, tuple)
        attributes = layout.schema.attributes[len(labelled.labels) if labelled else 0 :]
        positions = first_positions(attribute.name for attribute in attributes)
        rows = dense_rows(chunk_rows, len(layout.schema.attributes), self.limits)
        if self.kept is not None:  # the records of the scan
            groups = _regrouped(self.kept.groups(), rows)
        else:
            groups = self.record_groups(stream, name, rows, scanning=False)
        for records, numbers in groups:
            chunk = _chunk(records, numbers, attributes, positions, codes, name)
            if labelled is not None:
                sets = _label_sets(records, numbers, labelled.column, name)
                chunk = with_labels(chunk, sets, labelled.labels)
            yield chunk

    def _groups(self, opened: Reopen, name: str) -> Iterator[RecordGroup]:
        """The records a group at a time, with their line numbers."""
        with opened() as stream:
            yield from self.record_groups(stream, name, SCAN_RECORDS, scanning=True)


def _regrouped(groups: Iterable[tuple[list[int], list]], rows: int) -> Iterator[RecordGroup]:
    """The records of the kept ``groups`` (line numbers, records), in groups of at most ``rows``."""
    for numbers, records in groups:
        for start in range(0, len(numbers), rows):
            yield records[start : start + rows], numbers[start : start + rows]


def _values_by_field(records: Sequence[Mapping[str, object]], numbers: list[int]) -> dict[str, tuple[list, list[int]]]:
    """Each field of ``records`` (in the order first met) with its values and their lines: a column at a
    time when every record holds every field, else record by record (time as the values, not as rows ×
    fields: a file may add a field a line)."""
    fields = set().union(*records)
    if sum(map(len, records)) == len(records) * len(fields):
        return {field: ([record[field] for record in records], numbers) for field in records[0]}
    held: defaultdict[str, tuple[list, list[int]]] = defaultdict(lambda: ([], []))
    for record, number in zip(records, numbers):
        for field, value in record.items():
            values, lines = held[field]
            values.append(value)
            lines.append(number)
    return held


def _label_sets(records: Sequence[Mapping[str, object]], numbers: list[int], field: str, name: str) -> list[list[str]]:
    """Each record's labels: the field ``field``'s list of strings (absent, None or ``[]``: none); an error
    naming the line of any other value."""
    sets = []
    for record, number in zip(records, numbers):
        value = record.get(field)
        if value is None:
            value = []
        elif type(value) is not list or not all(type(label) is str for label in value):
            found = next((label for label in value if type(label) is not str), None) if type(value) is list else value
            raise ArffError(
                f"the field of labels {shown(field)} holds {json.dumps(found, default=repr)[:40]}: "
                "give it an array of strings (null or [] for none)",
                name,
                number,
            )
        sets.append(value)
    return sets


def _chunk(
    records: Sequence[Mapping[str, object]],
    numbers: list[int],
    attributes,
    positions: dict[str, int],
    codes: tuple,
    name: str,
) -> Chunk:
    """A dense chunk of ``records`` (``numbers`` their lines), ``positions`` each attribute's by its name: a
    field absent from a record, or None, is missing; each field the records hold is read as a column (time
    as the chunk's values, which :func:`dense_rows` bounds)."""
    values = np.full((len(records), len(attributes)), np.nan)
    texts = {column: [None] * len(records) for column, a in enumerate(attributes) if a.kind == STRING}
    held = set().union(*records)
    for column in sorted(positions[field] for field in held if field in positions):  # not: the field of labels
        attribute = attributes[column]
        field, present = attribute.name, [record.get(attribute.name) for record in records]
        try:
            converted = column_values(present, attribute, codes[column], _no_number)
        except (TypeError, OverflowError):  # an object or array (no dict of labels holds one); an integer past a double
            converted = None
        if converted is None:
            converted = one_by_one(present, attribute, codes[column], numbers, name, _cell_of(field, name))
        values[:, column], text = converted
        if text is not None:
            texts[column] = text
    return Chunk(values, texts)


def _cell(value: object, field: str, name: str, number: int) -> Cell:
    """A field's value as the typing step sees it (None: missing; NaN too); an error naming line ``number``
    of ``name`` for a value that is no string, number, boolean or None."""
    kind = type(value)
    if kind is str:
        return (cast(str, value), None)
    if kind is bool:
        return ("true" if value else "false", None)
    if isinstance(value, (int, float)):
        try:
            number_value = float(value)
        except OverflowError:  # an integer past a double's range: ±Infinity, as CSV and ARFF read its digits
            number_value = math.inf if cast(int, value) > 0 else -math.inf
        return None if number_value != number_value else (repr(value), number_value)
    if value is None:
        return None
    what = "an array (a field of labels is named by --labels-column)" if kind is list else "an object"
    raise ArffError(
        f"the field {shown(field)} holds {what}: give it a string, a number, true, false or null", name, number
    )


def _cell_of(field: str, name: str) -> Callable[[object, int], Cell]:
    """:func:`_cell` of a field's values."""
    return lambda value, number: _cell(value, field, name, number)


def _no_number(value: object) -> None:
    """What a string or boolean value reads as: no number (the records have types)."""
