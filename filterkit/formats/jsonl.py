"""JSON Lines (``.jsonl``, ``.ndjson``; gzip too): one JSON object a line, each field a column.

A field's value is a string, a number, a boolean (the labels ``true`` and ``false``) or null (missing);
a field absent from a line is missing there.  The columns are the first line's fields in their order, then
each new field where it is first met (missing in the lines before it), so a field may appear late.  A
nested object or array is an error naming the line and the field (but an array of strings in the field
``--labels-column`` names: the row's labels, read as MEKA's label attributes, first; docs/multilabel.md), as
is a line that is not one object;
blank lines are skipped.  JSON has types, so a string is text even where it reads as a number: the typing
step (:mod:`filterkit.formats.records`) sees a string column of digits as nominal, not numeric.  A
repeated field in one object is an error (JSON leaves its meaning open).  The objects are the records of a
record format (:mod:`filterkit.formats.record_format`), which types and reads their fields.
"""

from __future__ import annotations

import json
import re
from json.scanner import make_scanner
from typing import IO, Any, BinaryIO, Callable, Iterator, cast

import numpy as np

from filterkit.arff.writer import EXACT, NumberFormat, format_numbers, refuse_long_lines
from filterkit.errors import ArffError, FilterkitError
from filterkit.formats import FormatOptions
from filterkit.formats.lines import decoded, text_line_groups
from filterkit.formats.record_format import RecordFormat, RecordGroup
from filterkit.labels import meka_label_positions, refuse_missing_labels
from filterkit.limits import Limits
from filterkit.schema import NOMINAL, NUMERIC, STRING, Chunk, Schema, take_rows
from filterkit.text import SURROGATE_ESCAPE, shown


class JsonLinesFormat(RecordFormat):
    """Reads JSON Lines (see the module's description): the records are the lines' objects."""

    nothing_found = "no JSON object with a field"

    def record_groups(self, stream: IO[bytes], name: str, rows: int, scanning: bool) -> Iterator[RecordGroup]:
        """The objects of the lines that are not blank, in groups of at most ``rows`` (or a chunk's bytes);
        each object's fields checked to be distinct when ``scanning`` (a chunk's pass need not)."""
        for group, numbers in text_line_groups(stream, name, self.limits, rows):
            yield _objects(group, numbers, name, scanning), numbers


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
    if SURROGATE_ESCAPE.search(whole) is not None:
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


#: The cells of a block of rows written at once, as the ARFF writer writes sparse rows dense.
_BLOCK_CELLS = 1 << 20


#: The numbers the ARFF printer writes that JSON writes otherwise: a missing value, and a negative zero.
_JSON_NUMBER = {"?": "null", "-0": "-0.0"}


class JsonLinesWriter:
    """Writes rows as JSON Lines, an object a row, each attribute a field in declared order: a number in its
    shortest exact form (or rounded as ``numbers`` says; ±inf as ``Infinity``, as Python's json writes it), a
    nominal label or a text as a string, a missing value as null.  MEKA rows (``-C`` in the relation name)
    hold their labels in one field, ``--labels-column`` (default ``labels``): the array of the names of the
    labels a row holds, where the labels stood (an empty label name is refused: the reader refuses it).  Dates,
    relational attributes and instance weights other than 1 are refused, as is a line longer than the reader
    reads (``FILTERKIT_MAX_LINE_BYTES``); JSON Lines has no comments, so no provenance line is written."""

    def __init__(self, stream: BinaryIO, schema: Schema, options: FormatOptions, numbers: NumberFormat = EXACT):
        self.stream, self.schema, self.numbers = stream, schema, numbers
        for attribute in schema.attributes:
            if attribute.kind not in (NUMERIC, NOMINAL, STRING):
                raise FilterkitError(
                    f"JSON Lines output holds numbers, labels and text: attribute {shown(attribute.name)} is "
                    f"{attribute.kind}"
                )
        self.label_positions = meka_label_positions(schema)
        if any(not schema.attributes[p].name for p in self.label_positions):
            raise FilterkitError(
                "JSON Lines output: the label '' is empty, which a labels field cannot hold (reading it refuses an "
                "empty label)"
            )
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
        #: the reader's bound on a line, which every line written must keep
        self.line_bytes = Limits.from_environment().line_bytes

    def write(self, chunk: Chunk) -> None:
        """Append the rows of ``chunk``, a block of about :data:`_BLOCK_CELLS` cells at a time (a sparse chunk of
        oh0's width, written whole, had taken 3 GB)."""
        if chunk.weights is not None and (chunk.weights != 1).any():
            raise FilterkitError("JSON Lines output cannot hold instance weights other than 1")
        step = max(1, _BLOCK_CELLS // max(1, chunk.shape[1]))
        for start in range(0, chunk.n_rows, step):
            block = (
                chunk if step >= chunk.n_rows else take_rows(chunk, np.arange(start, min(start + step, chunk.n_rows)))
            )
            values = block.dense_values()
            columns = [self._field(values, block, position) for position in self.fields]
            lines = ("{" + ",".join(key + value for key, value in zip(self.keys, row)) + "}\n" for row in zip(*columns))
            text = "".join(lines).encode("utf-8")
            refuse_long_lines(text, self.line_bytes, self.rows + 1, "row")
            self.stream.write(text)
            self.rows += block.n_rows

    def _field(self, values: np.ndarray, chunk: Chunk, position: int) -> list[str]:
        """A field's JSON text in each row of the chunk of ``values``."""
        if self.label_positions and position == self.label_positions[0]:
            return self._label_arrays(values)
        attribute, column = self.schema.attributes[position], values[:, position]
        if attribute.kind == NUMERIC:
            # -0 as -0.0: JSON readers read the integer -0 as 0 (Python's json, pandas), its sign lost
            return [_JSON_NUMBER.get(text, text) for text in format_numbers(column, self.numbers)]
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
        attribute_names = [self.schema.attributes[p].name for p in self.label_positions]
        refuse_missing_labels(held, self.rows, attribute_names, "a JSON Lines array of labels cannot hold")
        names = self.label_names
        return ["[" + ",".join(names[label] for label in np.flatnonzero(row).tolist()) + "]" for row in held]
