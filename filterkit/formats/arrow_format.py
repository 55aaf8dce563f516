"""The base of a columnar record format: a format whose author writes only how a stream becomes Arrow record
batches (its schema, its row count, its batches of the columns asked for), and inherits the rest: the scan, the
typing, a model's header matched by column name, the chunks and the errors naming the column and the row.
Parquet (:mod:`filterkit.formats.parquet`) is such a format.  Needs pyarrow (the ``parquet`` extra).

Each column becomes an attribute, by its Arrow type:

* strings and booleans (the labels ``true`` and ``false``) go through the typing step
  (:mod:`filterkit.formats.records`), as a JSON Lines field of strings or booleans does;
* dictionary columns are nominal, their labels in the order the rows first use them (``--text`` reads one as
  text, ``--numeric`` its labels as numbers, as CSV reads a field);
* integers, floats and decimals are numeric (NaN is missing), and go through the typing step's class rule;
* dates and timestamps are date attributes (milliseconds since 1970 UTC, a finer timestamp truncated to the
  millisecond; ``--text``, ``--nominal`` or ``--numeric`` naming one is an error);
* nulls are missing; a column of any other type is an error naming it.
"""

from __future__ import annotations

from typing import IO, Iterator, Sequence, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from filterkit.arff.dates import DEFAULT_FORMAT, FIRST_MILLISECOND, LAST_MILLISECOND, YEARS_OUTSIDE
from filterkit.errors import ArffError, FilterkitError
from filterkit.formats import FormatOptions, Layout, Reopen, relation_of
from filterkit.formats.records import (
    ColumnTyping,
    cell_value,
    dense_rows,
    label_codes,
    layout_by_name,
    repeated_name,
    split_names,
    typing_of,
)
from filterkit.limits import VARIABLES, Limits
from filterkit.schema import DATE, NOMINAL, NUMERIC, TEXT_KINDS, Attribute, Chunk, Schema
from filterkit.text import shown

#: How the scan reads a column, by its Arrow type (:func:`_reading`).
TYPED, NUMBERS, DICTIONARY, DATES = "typed", "numbers", "dictionary", "dates"
#: Rows a scan reads at a time.
SCAN_ROWS = 10_000


class ArrowFormat:
    """A reader of Arrow record batches (needs pyarrow).  A subclass writes :meth:`arrow_file`,
    :meth:`arrow_schema`, :meth:`arrow_rows` and :meth:`arrow_batches`; this class makes each column an
    attribute by its Arrow type (dictionaries nominal, dates and timestamps dates, numbers numeric, strings and
    booleans typed by their values as CSV's columns are), matches a model's header by column name, makes the
    chunks and names the column and row in every error.  It reads the typing step's options (``--text``,
    ``--nominal``, ``--numeric``) where its :class:`~filterkit.plugins.Format` declares them."""

    #: What the error of an input without any column says.
    nothing_found = "an input without a column"

    def __init__(self, limits: Limits | None = None):
        self.limits = Limits.from_environment() if limits is None else limits

    def arrow_file(self, stream: IO[bytes], name: str) -> object:
        """``stream`` (the file ``name``) opened, whatever :meth:`arrow_schema`, :meth:`arrow_rows` and
        :meth:`arrow_batches` take; an error naming ``name`` for an input the format cannot read."""
        raise NotImplementedError

    def arrow_schema(self, opened: object) -> pa.Schema:
        """The Arrow schema of the file :meth:`arrow_file` opened."""
        raise NotImplementedError

    def arrow_rows(self, opened: object) -> int | None:
        """The rows of the file :meth:`arrow_file` opened (None: not known before they are read)."""
        raise NotImplementedError

    def arrow_batches(self, opened: object, name: str, rows: int, columns: Sequence[str]) -> Iterator[pa.RecordBatch]:
        """The record batches of ``columns`` (in that order), each of at most ``rows`` rows (fewer where a
        batch's bytes ask: ``self.limits.chunk_bytes``); an error naming ``name`` for damaged data."""
        raise NotImplementedError

    def scan(self, opened: Reopen, name: str, options: FormatOptions, known_schema: Schema | None) -> Layout:
        """The columns typed from their Arrow types and, for strings, booleans and a class of whole numbers,
        from their values (a pass over those columns only; a second over the numbers whose labels the first
        did not keep); with ``known_schema`` (a model's header) the columns must be its attributes."""
        with opened() as stream:
            source = self.arrow_file(stream, name)
            fields = self.arrow_schema(source)
            names = self._names(fields, name)
            rows = self.arrow_rows(source)
            readings = [_reading(field, name) for field in fields]
            if known_schema is not None:
                return layout_by_name(known_schema, names, name, cast(int, rows), "column")
            dates = {
                position: Attribute(field.name, DATE, date_format=_date_format(field.type))
                for position, field in enumerate(fields)
                if readings[position] == DATES
            }
            _refuse_retyped_dates(names, readings, options, name)
            typing = typing_of(names, name, self.limits, options, dates)
            read_by_values = set(split_names(options.text)) | set(split_names(options.numeric))
            read = self._observe(source, name, names, readings, typing, read_by_values)
            again = typing.needs_labels()
            if again:
                typing.restart_labels(again)
                for batch in self.arrow_batches(source, name, SCAN_ROWS, [names[p] for p in again]):
                    for column, position in zip(batch.columns, again):
                        typing.collect(position, _distinct_cells(column))
        schema = Schema(relation_of(name, keep_extension=False), typing.attributes())
        return Layout(schema, (), label_codes(schema.attributes), read if rows is None else rows)

    def _observe(
        self,
        source: object,
        name: str,
        names: list[str],
        readings: list[str],
        typing: ColumnTyping,
        read_by_values: set[str],
    ) -> int:
        """The typing pass over every column but the dates: each dictionary column's labels in the order the
        rows use them (declared nominal, but those ``--text`` or ``--numeric`` names, ``read_by_values``), the
        others observed by ``typing``; the rows read."""
        dictionaries: dict[int, dict[str, None]] = {
            position: {}
            for position, reading in enumerate(readings)
            if reading == DICTIONARY and names[position] not in read_by_values
        }
        observed = [position for position, reading in enumerate(readings) if reading != DATES]
        read = 0
        for batch in self.arrow_batches(source, name, SCAN_ROWS, [names[p] for p in observed]):
            read += batch.num_rows
            for column, position in zip(batch.columns, observed):
                if position in dictionaries:
                    dictionaries[position].update(dict.fromkeys(_used_labels(column)))
                elif readings[position] == NUMBERS:
                    typing.observe_numbers(position, *_present_and_whole(column))
                else:
                    typing.observe(position, _distinct_cells(column), len(column) - column.null_count, read)
        for position, labels in dictionaries.items():
            if len(labels) > self.limits.labels:
                raise _too_many_labels(names[position], self.limits, name)
            typing.declared[position] = Attribute(names[position], NOMINAL, labels=tuple(labels))
        return read

    def _names(self, fields: pa.Schema, name: str) -> list[str]:
        """The column names; an error for a name given twice or past the bound on attributes."""
        names = list(fields.names)
        if len(names) > self.limits.attributes:
            raise ArffError(
                f"more than {self.limits.attributes:,} columns: refused (set {VARIABLES['attributes']} to allow more)",
                name,
            )
        repeated = repeated_name(names)
        if repeated is not None:
            raise ArffError(f"the column name {shown(repeated)} appears twice", name)
        if not names:
            raise ArffError(f"{self.nothing_found}: nothing to read", name)
        return names

    def scan_reads_rows(self, known_schema: Schema | None) -> bool:
        """Only without a model's header: with one, the scan reads the file's schema alone."""
        return known_schema is None

    def chunks(self, stream: IO[bytes], name: str, layout: Layout, chunk_rows: int) -> Iterator[Chunk]:
        """The rows as dense chunks of at most ``chunk_rows`` rows (fewer, :func:`dense_rows`, when the
        attributes are many), a record batch each."""
        codes = cast(tuple, layout.details)
        attributes = layout.schema.attributes
        source = self.arrow_file(stream, name)
        present = set(self.arrow_schema(source).names)
        read = [attribute.name for attribute in attributes if attribute.name in present]
        in_batch = {column_name: position for position, column_name in enumerate(read)}
        first_row = 1
        rows = dense_rows(chunk_rows, len(attributes), self.limits)
        for batch in self.arrow_batches(source, name, rows, read):
            values = np.full((batch.num_rows, len(attributes)), np.nan)
            texts: dict[int, list] = {}
            for column, attribute in enumerate(attributes):
                position = in_batch.get(attribute.name)
                array = None if position is None else batch.column(position)
                if attribute.kind in TEXT_KINDS:
                    texts[column] = [None] * batch.num_rows if array is None else _texts(array)
                    if array is not None:
                        values[:, column] = np.where(array.is_valid().to_numpy(zero_copy_only=False), 0.0, np.nan)
                elif array is not None:
                    values[:, column] = _values(array, attribute, codes[column], name, first_row)
            first_row += batch.num_rows
            yield Chunk(values, texts)


def _refuse_retyped_dates(names: list[str], readings: list[str], options: FormatOptions, name: str) -> None:
    """An error for a date or timestamp column that ``--text``, ``--nominal`` or ``--numeric`` names: its type
    makes it a date attribute, which the option would have silently left as it was."""
    for flag, given in (("--text", options.text), ("--nominal", options.nominal), ("--numeric", options.numeric)):
        for column_name in split_names(given):
            if column_name in names and readings[names.index(column_name)] == DATES:
                raise ArffError(
                    f"{flag} {shown(column_name)} names a date column (a date or timestamp type), which is read as a "
                    "date attribute: leave it out of the option",
                    name,
                )


def _reading(field: pa.Field, name: str) -> str:
    """How the scan reads a column of ``field``'s type; an error naming a column filterkit cannot read."""
    kind = field.type
    if pa.types.is_dictionary(kind):
        if _reading(pa.field(field.name, kind.value_type), name) not in (TYPED, NUMBERS):
            raise _unread(field, name)
        return DICTIONARY
    if is_string(kind) or pa.types.is_boolean(kind):
        return TYPED
    if _is_number(kind):
        return NUMBERS
    if pa.types.is_timestamp(kind) or pa.types.is_date(kind):
        return DATES
    raise _unread(field, name)


def is_string(kind: pa.DataType) -> bool:
    """Whether ``kind`` is one of Arrow's string types."""
    return pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_string_view(kind)


def _is_number(kind: pa.DataType) -> bool:
    """Whether ``kind`` holds numbers (integers, floats, decimals; or only nulls)."""
    types = pa.types
    return types.is_integer(kind) or types.is_floating(kind) or types.is_decimal(kind) or types.is_null(kind)


def _unread(field: pa.Field, name: str) -> ArffError:
    """The error of a column whose type filterkit does not read."""
    kind = field.type
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        what = "lists (a column of several labels is not read yet)"
    elif pa.types.is_nested(kind):
        what = f"nested values ({kind})"
    else:
        what = f"{kind}, which filterkit does not read"
    return ArffError(f"the column {shown(field.name)} holds {what}: give it strings, numbers, booleans or dates", name)


def _date_format(kind: pa.DataType) -> str:
    """The pattern a date column is written with: the day for dates, the millisecond for timestamps (Parquet
    holds no timestamp of whole seconds: pyarrow writes one in milliseconds)."""
    if pa.types.is_date(kind):
        return "yyyy-MM-dd"
    return DEFAULT_FORMAT + ".SSS"


def _too_many_labels(column_name: str, limits: Limits, name: str) -> ArffError:
    """The error of a dictionary column past the bound on labels."""
    return ArffError(
        f"column {shown(column_name)} has more than {limits.labels:,} distinct values, too many labels for a "
        f"nominal attribute: refused (--text {shown(column_name)} reads it as text; set {VARIABLES['labels']} "
        "to allow more labels)",
        name,
    )


def _cells(values: list) -> list[tuple[str, float | None]]:
    """Python values of a column as the typing step sees them (as JSON Lines reads the same values)."""
    return [_cell(value) for value in values]


def _cell(value: object) -> tuple[str, float | None]:
    """A value's text and number (None: not a number)."""
    if isinstance(value, str):
        return (value, None)
    if isinstance(value, bool):
        return ("true" if value else "false", None)
    if isinstance(value, int):
        return (str(value), float(value))
    number = float(cast(float, value))
    return (repr(number), number)


def _distinct_cells(array: pa.Array) -> list[tuple[str, float | None]]:
    """The distinct present values of ``array`` in the order they first appear (NaN is missing)."""
    if pa.types.is_floating(array.type):
        array = pc.if_else(pc.is_nan(array), None, array)
    distinct = pc.unique(array).drop_null()
    if is_string(distinct.type):
        return [(text, None) for text in distinct.to_pylist()]
    return _cells(distinct.to_pylist())


def _used_labels(array: pa.Array) -> list[str]:
    """The labels a dictionary column's rows use, in the order they first use them."""
    used = pc.unique(array.indices).drop_null()
    return [text for text, _ in _cells(array.dictionary.take(used).to_pylist())]


def _present_and_whole(array: pa.Array) -> tuple[int, bool]:
    """The numbers a column holds (NaN and nulls not counted) and whether they are all whole (finite: an infinity is
    no whole number, as the CSV reader counts it, where it had made a float class of ±inf a class of whole numbers)."""
    numbers = _floats(array)
    numbers = numbers[~np.isnan(numbers)]
    return len(numbers), bool((np.isfinite(numbers) & (numbers == np.floor(numbers))).all())


def _floats(array: pa.Array) -> np.ndarray:
    """A column of numbers as float64, NaN for nulls."""
    if pa.types.is_null(array.type):
        return np.full(len(array), np.nan)
    # not checked: an int64 past 2**53 (an id, a hash) is its nearest double, as a CSV or ARFF number is read
    return pc.fill_null(array.cast(pa.float64(), safe=False), np.nan).to_numpy(zero_copy_only=False)


#: Ticks of each timestamp unit in a millisecond (seconds: a thousandth).
_TICKS_PER_MILLISECOND = {"s": 0.001, "ms": 1, "us": 1_000, "ns": 1_000_000}


def _milliseconds(array: pa.Array) -> np.ndarray:
    """A column of dates or timestamps as milliseconds since 1970 UTC (NaN for nulls), a finer timestamp
    floored to its millisecond."""
    if pa.types.is_date(array.type):
        return _floats(array.cast(pa.date64()).cast(pa.int64()))
    ticks = pc.fill_null(array.cast(pa.int64()), 0).to_numpy()
    per_millisecond = _TICKS_PER_MILLISECOND[array.type.unit]
    # seconds times 1000 in float64: in int64 a far date wrapped round into the years 1 to 9999
    milliseconds = ticks * 1000.0 if per_millisecond < 1 else (ticks // per_millisecond).astype(np.float64)
    milliseconds[~array.is_valid().to_numpy(zero_copy_only=False)] = np.nan
    return milliseconds


def _texts(array: pa.Array) -> list:
    """A text column's values (None: missing)."""
    if pa.types.is_dictionary(array.type):
        array = array.dictionary_decode()
    if is_string(array.type):
        return array.to_pylist()
    return [None if value is None else _cell(value)[0] for value in array.to_pylist()]


def _values(
    array: pa.Array, attribute: Attribute, codes: dict[str, int] | None, name: str, first_row: int
) -> np.ndarray:
    """The values of a column for ``attribute`` as a chunk holds them (NaN: missing); a value the attribute
    cannot hold is an error naming its row (counted from 1 over the file)."""
    kind = array.type
    if attribute.kind == DATE:
        if not (pa.types.is_timestamp(kind) or pa.types.is_date(kind)):
            raise FilterkitError(
                f"the column {shown(attribute.name)} holds {kind}, not the dates of the training data", name
            )
        milliseconds = _milliseconds(array)
        outside = np.flatnonzero((milliseconds < FIRST_MILLISECOND) | (milliseconds > LAST_MILLISECOND))
        if outside.size:
            raise ArffError(
                f"row {first_row + int(outside[0])}: the column {shown(attribute.name)} holds a date {YEARS_OUTSIDE}",
                name,
            )
        return milliseconds
    if attribute.kind == NUMERIC and _is_number(kind):
        return _floats(array)
    encoded = array if pa.types.is_dictionary(kind) else pc.dictionary_encode(array)
    # a null in the dictionary (a column of Arrow's null type has one) is missing, as NaN is
    distinct = [None if value is None else _cell(value) for value in encoded.dictionary.to_pylist()]
    indices = encoded.indices
    if pa.types.is_floating(encoded.dictionary.type):
        distinct = [None if cell is None or cell[1] != cell[1] else cell for cell in distinct]
    mapped = np.full(len(distinct) + 1, np.nan)  # the last: a missing value
    for position, cell in enumerate(distinct):
        if cell is None:
            continue
        try:
            mapped[position] = cell_value(*cell, attribute, codes, None, 0)
        except ArffError as error:
            used = pc.index(indices, position).as_py()
            if used < 0:
                continue  # a dictionary entry no row uses
            raise ArffError(f"row {first_row + used}: {error.message}", name) from None
    return mapped[pc.fill_null(indices, len(distinct)).to_numpy(zero_copy_only=False)]
