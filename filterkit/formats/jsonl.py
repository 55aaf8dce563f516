"""JSON Lines (``.jsonl``, ``.ndjson``; gzip too): one JSON object a line, each field a column.

A field's value is a string, a number, a boolean (the labels ``true`` and ``false``) or null (missing);
a field absent from a line is missing there.  The columns are the first line's fields in their order, then
each new field where it is first met (missing in the lines before it), so a field may appear late.  A
nested object or array is an error naming the line and the field (but an array of strings in the field
``--labels-column`` names: the row's labels, read as MEKA's label attributes, first; docs/multilabel.md), as
is a line that is not one object;
blank lines are skipped.  JSON has types, so a string is text even where it reads as a number: the typing
step (:mod:`filterkit.formats.records`) sees a string column of digits as nominal, not numeric.  A
repeated field in one object is an error (JSON leaves its meaning open).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from json.scanner import make_scanner
from typing import IO, Any, BinaryIO, Callable, Iterable, Iterator, cast

import numpy as np

from filterkit.arff.writer import EXACT, NumberFormat, format_numbers
from filterkit.errors import ArffError, FilterkitError
from filterkit.formats import FormatOptions, Layout, Reopen, relation_of
from filterkit.formats.lines import decoded, text_line_groups
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
from filterkit.labels import meka_label_positions
from filterkit.limits import VARIABLES, Limits
from filterkit.schema import NOMINAL, NUMERIC, STRING, Chunk, Schema
from filterkit.text import shown

#: A value as the typing step sees it: its text and its number (None: not a number); None: missing.
Cell = tuple[str, float | None] | None


class JsonLinesFormat:
    """Reads JSON Lines (see the module's description)."""

    def __init__(self, limits: Limits | None = None):
        self.limits = Limits.from_environment() if limits is None else limits
        #: the scan's rows, when the source asks for them to be kept (:class:`KeptGroups`)
        self.kept: KeptGroups | None = None

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
            if self.kept is not None:
                self.kept.add(numbers, records)
        if not typing.names and not (label_sets and label_sets.first_line):
            raise ArffError("no JSON object with a field: nothing to read", name, 1)
        if known_schema is not None:
            if self.kept is not None:  # the passes read the file again
                self.kept.close()
                self.kept = None
            if label_sets is not None:
                return label_sets.known_layout(
                    known_schema, lambda others: layout_by_name(others, typing.names, name, rows, "field")
                )
            return layout_by_name(known_schema, typing.names, name, rows, "field")
        again = typing.needs_labels()
        if again:
            typing.restart_labels(again)
            for records, numbers in self._groups(opened, name):
                for column in again:
                    field = typing.names[column]
                    found = [_cell(record.get(field), field, name, number) for record, number in zip(records, numbers)]
                    typing.collect(column, dict.fromkeys(cell for cell in found if cell is not None))
        relation, attributes = relation_of(name, keep_extension=False), typing.attributes()
        if label_sets is None:
            schema = Schema(relation, attributes)
            return Layout(schema, (), label_codes(schema.attributes), rows)
        labels = label_sets.attributes(typing.names)
        schema = labelled_schema(relation, labels, attributes)
        details = LabelledDetails(label_codes(attributes), label_sets.column, tuple(a.name for a in labels))
        return Layout(schema, (), details, rows)

    def _present_cells(
        self, records: list[dict], numbers: list[int], field_of_labels: str | None, typing: ColumnTyping, name: str
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
            present[field] = [cell for cell in cells if cell is not None]
        return present

    def scan_reads_rows(self, known_schema: Schema | None) -> bool:
        """Always: the fields are known only once every line is read."""
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
            groups = _record_groups(stream, name, self.limits, rows, checked=False)
        for records, numbers in groups:
            chunk = _chunk(records, numbers, attributes, positions, codes, name)
            if labelled is not None:
                sets = _label_sets(records, numbers, labelled.column, name)
                chunk = with_labels(chunk, sets, labelled.labels)
            yield chunk

    def _groups(self, opened: Reopen, name: str) -> Iterator[tuple[list[dict], list[int]]]:
        """The records a group at a time, with their line numbers."""
        with opened() as stream:
            yield from _record_groups(stream, name, self.limits, 10_000)


def _regrouped(groups: Iterable[tuple[list[int], list[dict]]], rows: int) -> Iterator[tuple[list[dict], list[int]]]:
    """The records of the kept ``groups`` (line numbers, records), in groups of at most ``rows``."""
    for numbers, records in groups:
        for start in range(0, len(numbers), rows):
            yield records[start : start + rows], numbers[start : start + rows]


def _values_by_field(records: list[dict], numbers: list[int]) -> dict[str, tuple[list, list[int]]]:
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


def _label_sets(records: list[dict], numbers: list[int], field: str, name: str) -> list[list[str]]:
    """Each record's labels: the field ``field``'s array of strings (absent, null or ``[]``: none); an error
    naming the line of any other value."""
    sets = []
    for record, number in zip(records, numbers):
        value = record.get(field)
        if value is None:
            value = []
        elif type(value) is not list or not all(type(label) is str for label in value):
            found = next((label for label in value if type(label) is not str), None) if type(value) is list else value
            raise ArffError(
                f"the field of labels {shown(field)} holds {json.dumps(found)[:40]}: "
                "give it an array of strings (null or [] for none)",
                name,
                number,
            )
        sets.append(value)
    return sets


def _chunk(
    records: list[dict], numbers: list[int], attributes, positions: dict[str, int], codes: tuple, name: str
) -> Chunk:
    """A dense chunk of ``records`` (``numbers`` their lines), ``positions`` each attribute's by its name: a
    field absent from a record, or null, is missing; each field the records hold is read as a column (time
    as the chunk's values, which :func:`dense_rows` bounds)."""
    values = np.full((len(records), len(attributes)), np.nan)
    texts = {column: [None] * len(records) for column, a in enumerate(attributes) if a.kind == STRING}
    held = set().union(*records)
    for column in sorted(positions[field] for field in held if field in positions):  # not: the field of labels
        attribute = attributes[column]
        field, present = attribute.name, [record.get(attribute.name) for record in records]
        try:
            converted = column_values(present, attribute, codes[column], _no_number)
        except TypeError:  # an object or array, which no dict of labels holds
            converted = None
        if converted is None:
            converted = one_by_one(present, attribute, codes[column], numbers, name, _cell_of(field, name))
        values[:, column], text = converted
        if text is not None:
            texts[column] = text
    return Chunk(values, texts)


def _record_groups(
    stream: IO[bytes], name: str, limits: Limits, rows: int, checked: bool = True
) -> Iterator[tuple[list[dict], list[int]]]:
    """The objects of the lines that are not blank, in groups of at most ``rows`` (or a chunk's bytes);
    ``checked``: each object's fields checked to be distinct (the scan checks them; a chunk's pass need not)."""
    for group, numbers in text_line_groups(stream, name, limits, rows):
        yield _objects(group, numbers, name, checked), numbers


def _objects(group: list[bytes], numbers: list[int], name: str, checked: bool) -> list[dict]:
    """Each line's object, each line parsed alone (a group parsed as one array would take lines that are
    no object each, but together are, the line ends read as commas); a line that is not UTF-8 text, not one
    object (``checked``: with distinct fields), nested past Python's recursion, or whose text holds a lone
    surrogate (``"\\ud800"``, which no UTF-8 text holds) is an error naming it."""
    try:
        whole = b"\n".join(group).decode("utf-8")
    except UnicodeDecodeError:
        whole = "\n".join([decoded(line, name, number) for line, number in zip(group, numbers)])  # names the line
    signed = _NEGATIVE_ZERO.search(whole) is not None
    decoder = _DECODERS[checked][signed]
    objects = _objects_line_by_line(whole, len(group), _SCANNERS[checked][signed])
    if objects is None:
        decode = decoder.decode
        objects = [_object(text, number, name, decode) for text, number in zip(whole.split("\n"), numbers)]
    if _SURROGATE_ESCAPE.search(whole) is not None:
        for found, number in zip(objects, numbers):
            _refuse_lone_surrogates(found, name, number)
    return objects


def _objects_line_by_line(whole: str, lines: int, scan: Callable[[str, int], tuple[object, int]]) -> list | None:
    """The object of each of the ``lines`` lines of ``whole`` (joined by LF), read by a decoder's scanner
    (:data:`_SCANNERS`) from each line's start, which must end at the line's end (JSON white space
    after it); None where a line is anything else, for :func:`_object` to name it.  One text scanned in place:
    no line is cut out of it, and the decoder's Python steps around its scanner are left out (27 % of reading
    the objects)."""
    objects = []
    start = 0
    try:
        for _ in range(lines):
            end = whole.find("\n", start)
            end = len(whole) if end < 0 else end
            found, stop = scan(whole, start)
            if type(found) is not dict or stop > end or whole[stop:end].strip(" \t\r"):
                return None
            objects.append(found)
            start = end + 1
    except (StopIteration, ValueError, RecursionError):
        return None
    return objects


def _object(text: str, number: int, name: str, decode: Callable[[str], object]) -> dict:
    """The object of the line ``text`` (line ``number``); an error naming the line when it is not one."""
    try:
        found = decode(text)
    except _RepeatedField as repeated:
        raise ArffError(f"the field {shown(str(repeated))} appears twice in one object", name, number) from None
    except ValueError as error:
        raise ArffError(f"not JSON: {error}", name, number) from None
    except RecursionError:
        raise ArffError("not JSON filterkit reads: nested too deeply", name, number) from None
    if type(found) is not dict:
        raise ArffError(f"expected a JSON object, found {type(found).__name__}", name, number)
    return found


#: An integer ``-0`` (or a text or exponent that reads like one: the decoder that keeps its sign reads those alike).
_NEGATIVE_ZERO = re.compile(r"-0(?![0-9.eE])")

#: A JSON escape of a UTF-16 surrogate, which is text only in a pair.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _refuse_lone_surrogates(found: dict, name: str, number: int) -> None:
    """An error naming line ``number`` when its object's text holds a lone surrogate (a pair reads as one
    character)."""
    try:
        json.dumps(found, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise ArffError(
            "a lone surrogate escape (\\ud800 to \\udfff unpaired), which is no text", name, number
        ) from None


class _MinusZero(float):
    """JSON's integer ``-0``: the number -0.0, which keeps its sign, and the text ``-0`` as written (a label), as
    CSV reads them."""

    def __repr__(self) -> str:
        return "-0"


def _integer(text: str) -> int | float:
    """A JSON integer: ``-0`` as :class:`_MinusZero`, which keeps its sign (as CSV and Parquet read it)."""
    return _MinusZero(-0.0) if text == "-0" else int(text)


class _RepeatedField(ValueError):
    """A field twice in one object."""


def _fields_once(pairs: list[tuple[str, object]]) -> dict:
    """An object's fields as a dict; :class:`_RepeatedField` for a field given twice."""
    fields = dict(pairs)
    if len(fields) != len(pairs):
        keys = [key for key, _ in pairs]
        raise _RepeatedField(next(key for position, key in enumerate(keys) if key in keys[:position]))
    return fields


#: A line's decoders, (without, with) ``-0`` read as -0.0, by whether each object's fields are checked distinct.
_DECODERS = {
    checked: tuple(
        json.JSONDecoder(object_pairs_hook=_fields_once if checked else None, parse_int=_integer if signed else None)
        for signed in (False, True)
    )
    for checked in (False, True)
}
#: Each decoder's scanner (C in CPython), which its ``decode`` calls between two looks for white space.
_SCANNERS = {
    checked: tuple(make_scanner(cast(Any, decoder)) for decoder in decoders) for checked, decoders in _DECODERS.items()
}


def _cell(value: object, field: str, name: str, number: int) -> Cell:
    """A field's value as the typing step sees it (None: missing; NaN, as JSON's ``NaN`` reads, too)."""
    kind = type(value)
    if kind is str:
        return (value, None)  # type: ignore[return-value]
    if kind is int or kind is float or kind is _MinusZero:
        try:
            number_value = float(value)  # type: ignore[arg-type]
        except OverflowError:
            raise ArffError(f"the field {shown(field)} holds a number too large for a double", name, number) from None
        return None if number_value != number_value else (repr(value), number_value)
    if kind is bool:
        return ("true" if value else "false", None)
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
    """What a JSON string or boolean reads as: no number (JSON has types)."""


class JsonLinesWriter:
    """Writes rows as JSON Lines, an object a row, each attribute a field in declared order: a number in its
    shortest exact form (or rounded as ``numbers`` says; ±inf as ``Infinity``, as Python's json writes it), a
    nominal label or a text as a string, a missing value as null.  MEKA rows (``-C`` in the relation name)
    hold their labels in one field, ``--labels-column`` (default ``labels``): the array of the names of the
    labels a row holds, where the labels stood.  Dates, relational attributes and instance weights other
    than 1 are refused; JSON Lines has no comments, so no provenance line is written."""

    def __init__(self, stream: BinaryIO, schema: Schema, options: FormatOptions, numbers: NumberFormat = EXACT):
        self.stream, self.schema, self.numbers = stream, schema, numbers
        for attribute in schema.attributes:
            if attribute.kind not in (NUMERIC, NOMINAL, STRING):
                raise FilterkitError(
                    f"JSON Lines output holds numbers, labels and text: attribute {shown(attribute.name)} is "
                    f"{attribute.kind}"
                )
        self.label_positions = meka_label_positions(schema)
        self.label_names = [json.dumps(schema.attributes[p].name, ensure_ascii=False) for p in self.label_positions]
        #: the fields in order: each attribute's position, the labels' field standing for the first label's
        self.fields = [p for p in range(len(schema.attributes)) if p not in self.label_positions[1:]]
        names = [schema.attributes[p].name for p in self.fields]
        if self.label_positions:
            column = options.labels_column or "labels"
            if column in names:
                raise FilterkitError(f"JSON Lines output: the labels field {shown(column)} is named like an attribute")
            names[self.fields.index(self.label_positions[0])] = column
        self.keys = [json.dumps(name, ensure_ascii=False) + ":" for name in names]
        self.rows = 0

    def write(self, chunk: Chunk) -> None:
        """Append the rows of ``chunk``."""
        if chunk.weights is not None and (chunk.weights != 1).any():
            raise FilterkitError("JSON Lines output cannot hold instance weights other than 1")
        values = chunk.dense_values()
        columns = [self._field(values, chunk, position) for position in self.fields]
        lines = ("{" + ",".join(key + value for key, value in zip(self.keys, row)) + "}\n" for row in zip(*columns))
        self.stream.write("".join(lines).encode("utf-8"))
        self.rows += chunk.n_rows

    def _field(self, values: np.ndarray, chunk: Chunk, position: int) -> list[str]:
        """A field's JSON text in each row of the chunk of ``values``."""
        if self.label_positions and position == self.label_positions[0]:
            return self._label_arrays(values)
        attribute, column = self.schema.attributes[position], values[:, position]
        if attribute.kind == NUMERIC:
            return ["null" if text == "?" else text for text in format_numbers(column, self.numbers)]
        missing = np.isnan(column).tolist()
        if attribute.kind == STRING:
            texts = chunk.text.get(position, [None] * len(column))
            return ["null" if gone else json.dumps(text, ensure_ascii=False) for gone, text in zip(missing, texts)]
        labels = [json.dumps(label, ensure_ascii=False) for label in attribute.labels]
        codes = np.nan_to_num(column).astype(np.int64).tolist()
        return ["null" if gone else labels[code] for gone, code in zip(missing, codes)]

    def _label_arrays(self, values: np.ndarray) -> list[str]:
        """Each row's labels as a JSON array of their names."""
        held = values[:, self.label_positions]
        if np.isnan(held).any():
            row, label = (int(at[0]) for at in np.nonzero(np.isnan(held)))
            raise FilterkitError(
                f"row {self.rows + row + 1} has a missing label ({self.label_names[label]}), which a JSON Lines "
                "array of labels cannot hold"
            )
        names = self.label_names
        return ["[" + ",".join(names[label] for label in np.flatnonzero(row).tolist()) + "]" for row in held]
