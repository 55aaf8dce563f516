"""CSV with a header row of attribute names, typed as Weka 3.6's CSVLoader types it.

Values are separated by commas.  A value may be quoted with ``"`` as RFC 4180
quotes (``""`` inside is one ``"``, a backslash is itself, a line end is part of the
value and is read as LF) or with ``'`` as ARFF and Weka's tokenizer quote (a
backslash escapes; on one line).  An empty value or ``?`` is missing unless quoted
(``"?"`` is the text ``?``).  A column is numeric when every value that is not
missing reads as a number as Java's ``Double.valueOf`` reads it (``NaN`` is
missing, as Weka reads it), nominal otherwise, its labels in the order they first
appear.  Text is kept as written, blanks included (as Weka keeps them); a quoted
value that reads as a number is a number, as in Weka.  Blank rows are skipped.
Typing needs the whole file before the header: one scan decides the types (a flag
per column), a second collects the labels of the nominal columns only, so memory
follows the labels, not the rows.  The column ``--labels-column`` names holds each row's labels joined by
``--label-separator``: read as MEKA's label attributes, first (docs/multilabel.md).

Each pass reads a chunk's rows in compiled passes, as the ARFF reader does (filterkit/formats/_lines.c):
``csv_gather`` cuts blocks of lines into rows, ``csv_cut`` cuts a group of rows into values and parses
the plain decimals into the chunk's numbers, and ``csv_ids`` numbers a column's distinct values, so Python
reads each label or text once per chunk.  :func:`_fields` is the reference grammar: it reads a row the
compiled cutter declines (and names its error), and every row with :data:`filterkit.kernels.READING` off.
"""

from __future__ import annotations

import codecs
import itertools
import re
from typing import IO, Iterator, NamedTuple, Sequence, cast, overload

import numpy as np

from filterkit import kernels
from filterkit.arff.reader import JAVA_BLANKS, NumberedLines
from filterkit.arff.tokens import unescape
from filterkit.errors import ArffError, FilterkitError
from filterkit.formats import FormatOptions, Layout, Reopen, relation_of
from filterkit.formats.lines import bounded_lines, decoded, line_groups
from filterkit.formats.records import (
    ColumnTyping,
    KeptGroups,
    LabelledDetails,
    LabelSets,
    class_column,
    column_values,
    label_codes,
    labelled_schema,
    layout_by_name,
    named_positions,
    number_in,
    one_by_one,
    repeated_name,
    split_names,
    typing_of,
    typing_options,
    with_labels,
)
from filterkit.limits import VARIABLES, Limits
from filterkit.schema import NOMINAL, NUMERIC, STRING, Attribute, Chunk, Schema
from filterkit.text import shown

#: A quoted value, blanks around it, up to the comma after it or the end of the row: in single
#: quotes with backslash escapes (ARFF), or in double quotes where ``""`` is one ``"`` (RFC 4180).
_QUOTED = re.compile(r"""[ \t]*(?:'([^'\\]*+(?:\\.[^'\\]*+)*+)'|"([^"]*+(?:""[^"]*+)*+)")[ \t]*(?=,|\Z)""", re.DOTALL)
#: A single-quoted value on one line (ARFF's backslash escapes), as :data:`_QUOTED` reads it.
_SINGLE_QUOTED = rb"'[^'\\]*+(?:\\.[^'\\]*+)*+'"
#: The values of a row up to its last (or first malformed) one, and an opening double quote there.  A
#: single-quoted value is one where blanks alone follow it to a comma or the line's end, as in
#: :func:`_fields` (else its quote is text up to the first comma, which may be inside it).
_LAST_VALUE = re.compile(
    rb"""(?:[ \t]*+(?:"[^"]*+(?:""[^"]*+)*+"[^,]*+|"""
    + _SINGLE_QUOTED
    + rb"""[ \t]*+(?=,)|(?!"|"""
    + _SINGLE_QUOTED
    + rb"""[ \t]*+\Z)[^,]*+),)*+[ \t]*+(?:"""
    + _SINGLE_QUOTED
    + rb"""[ \t]*+\Z|(")?)"""
)
#: The rest of a double-quoted value, up to its closing quote.
_QUOTED_REST = re.compile(rb'[^"]*+(?:""[^"]*+)*+"')


class CsvFormat:
    """Reads CSV files with a header row (see the module's description)."""

    def __init__(self, limits: Limits | None = None):
        self.limits = Limits.from_environment() if limits is None else limits
        #: the scan's rows, when the source asks for them to be kept (:class:`KeptGroups`)
        self.kept: KeptGroups | None = None

    def scan(self, opened: Reopen, name: str, options: FormatOptions, known_schema: Schema | None) -> Layout:
        """One pass types the columns (:class:`filterkit.formats.records.ColumnTyping`); a second collects
        the labels of the nominal columns whose labels the first could not keep.  None with ``known_schema``,
        a model's training header, which gives the types."""
        names = self._names(opened, name)
        if known_schema is not None and options.labels_column not in names:  # a model's labels, not given: missing
            options = options.replaced(labels_column=None)
        label_sets, label_at = self._label_column(names, options, name)
        if known_schema is not None:
            return self._known_scan(known_schema, names, name, options, label_sets, label_at)
        typed = [column for column in range(len(names)) if column != label_at]
        typing, rows, numbers_kept, label_sets = self._typed(opened, name, options, names, typed, label_sets, label_at)
        again = typing.needs_labels()
        if again:
            typing.restart_labels(again)
            for group, _ in self._groups(opened, name, len(names)):
                for position in again:
                    typing.collect(position, group.distinct(typed[position])[0])
        relation, attributes = relation_of(name, keep_extension=False), typing.attributes()
        if self.kept is not None and any(attributes[typed.index(column)].kind != NUMERIC for column in numbers_kept):
            self.kept.close()  # a label kept as its number, not as written: the passes read the file
            self.kept = None
        if label_sets is None:
            return Layout(Schema(relation, attributes), (), _Columns(label_codes(attributes), None, len(names)), rows)
        labels = label_sets.attributes(typing.names)
        columns = _Columns(label_codes(attributes), tuple(typed), len(names), label_at, options.label_separator)
        details = LabelledDetails(columns, label_sets.column, tuple(attribute.name for attribute in labels))
        return Layout(labelled_schema(relation, labels, attributes), (), details, rows)

    def _known_scan(
        self,
        known_schema: Schema,
        names: list[str],
        name: str,
        options: FormatOptions,
        label_sets: LabelSets | None,
        label_at: int | None,
    ) -> Layout:
        """The layout of a file whose types ``known_schema`` gives: its columns matched by name, the labels
        column's labels met as the model's."""
        if self.kept is not None:  # the scan reads the header row alone: nothing to keep
            self.kept.close()
            self.kept = None
        if label_sets is None:
            return known_layout(known_schema, names, name)
        others = [column for column in range(len(names)) if column != label_at]

        def matched(schema: Schema) -> Layout:  # the other columns by name, each at its place in the file
            found = known_layout(schema, [names[column] for column in others], name)
            columns = cast(_Columns, found.details)
            places = range(len(others)) if columns.positions is None else columns.positions
            at = tuple(None if place is None else others[place] for place in places)
            laid = _Columns(columns.codes, at, len(names), label_at, options.label_separator)
            return Layout(schema, (), laid, None, absent=found.absent)

        return label_sets.known_layout(known_schema, matched)

    def _typed(
        self,
        opened: Reopen,
        name: str,
        options: FormatOptions,
        names: list[str],
        typed: list[int],
        label_sets: LabelSets | None,
        label_at: int | None,
    ) -> tuple[ColumnTyping, int, set[int], LabelSets | None]:
        """The typing pass: the ``typed`` columns observed, the rows counted, the columns some group kept as
        numbers, and the labels column's labels.  A column observed by its numbers' count that a later group
        shows a word in makes the pass run again, observing it value by value from the start."""
        given = {*split_names(options.text), *split_names(options.nominal)}
        # the columns observed value by value in every group: those --text and --nominal name, the class (its
        # labels may be whole numbers), and those a group showed a value that is no plain number in (a group of
        # plain numbers alone is observed by their count: a column that stays numeric needs no more)
        by_values = {position for position, column in enumerate(typed) if names[column] in given}
        typed_names = [names[column] for column in typed]
        label = class_column(typed_names, typing_options(options, options.labels_column).class_spec)
        by_values |= set() if label is None else {label}
        while True:
            typing = typing_of(typed_names, name, self.limits, typing_options(options, options.labels_column))
            rows = 0
            numbers_kept: set[int] = set()  # columns kept as numbers in some group, not as their texts
            counted: set[int] = set()  # columns observed by their numbers' count in some group
            again_by_values: set[int] = set()  # of those, the columns a later group showed another value in
            for group, lines in self._groups(opened, name, len(names)):
                rows += len(lines)
                for position, column in enumerate(typed):
                    numbers = None if position in by_values else group.numbers_only(column)
                    if numbers is None:
                        if position in counted:
                            again_by_values.add(position)
                        by_values.add(position)
                        typing.observe(position, *group.distinct(column), lines[-1])
                    else:
                        typing.observe_numbers(position, *numbers)
                        counted.add(position)
                self._keep(group, lines, typed, numbers_kept, label_sets, label_at, options.label_separator)
            if not again_by_values:
                return typing, rows, numbers_kept, label_sets
            # how distinct a column's values are types it once it holds words: its numbers must count too
            label_sets, _ = self._label_column(names, options, name)
            if self.kept is not None:
                self.kept.close()
                self.kept = KeptGroups()

    def _keep(
        self,
        group: "_Group | _Cut",
        lines: list[int],
        typed: list[int],
        numbers_kept: set[int],
        label_sets: LabelSets | None,
        label_at: int | None,
        separator: str,
    ) -> None:
        """A group's labels met, and its values kept for the passes where the source asks for that."""
        kept = [group.present(column, numbers_kept) for column in typed] if self.kept is not None else []
        if label_sets is not None:
            sets = _label_sets(group.texts(cast(int, label_at)), separator)
            label_sets.observe(sets, lines)
            kept.insert(0, sets)
        if self.kept is not None:
            self.kept.add(lines, kept)

    def _label_column(self, names: list[str], options: FormatOptions, name: str) -> tuple[LabelSets | None, int | None]:
        """The labels of the column ``--labels-column`` names, to be met, and its position (None, None without
        it); an error for a column the header lacks or an empty separator."""
        column = options.labels_column
        if column is None:
            return None, None
        (position,) = named_positions(names, [column], "--labels-column", name)
        if not options.label_separator:
            raise FilterkitError("--label-separator is empty: give the text that separates a row's labels", name)
        return LabelSets(column, name, self.limits), position

    def scan_reads_rows(self, known_schema: Schema | None) -> bool:
        """Only without a model's header: with one, the scan reads the header row alone."""
        return known_schema is None

    def chunks(self, stream: IO[bytes], name: str, layout: Layout, chunk_rows: int) -> Iterator[Chunk]:
        """The rows as dense chunks of at most ``chunk_rows`` rows."""
        labelled = layout.details if isinstance(layout.details, LabelledDetails) else None
        columns_read = cast(_Columns, layout.details if labelled is None else labelled.details)
        codes, positions, width = columns_read.codes, columns_read.positions, columns_read.width
        attributes = layout.schema.attributes[len(labelled.labels) if labelled else 0 :]
        if self.kept is not None:
            for numbers, columns in self.kept.chunks(chunk_rows):
                sets = columns.pop(0) if labelled else None
                yield _labelled(_chunk(columns, numbers, attributes, codes, name), sets, labelled)
            return
        groups = _row_groups(stream, name, self.limits, chunk_rows)
        next(groups, None)  # the header row
        for group, numbers in groups:
            cut = _group_columns(group, numbers, width, name)
            sets = None
            if labelled is not None:
                sets = _label_sets(cut.texts(cast(int, columns_read.labels_at)), columns_read.label_separator)
            chunk = cut.chunk(attributes, codes, positions, numbers, name)
            yield _labelled(chunk, sets, labelled, numbers, name)

    def _names(self, opened: Reopen, name: str) -> list[str]:
        """The attribute names of the header row (the first row that is not blank)."""
        with opened() as stream:
            for group, numbers in _row_groups(stream, name, self.limits, 1):
                number = numbers[0]
                names = [text for text, _ in _checked_fields(decoded(group[0], name, number), None, name, number)]
                if len(names) > self.limits.attributes:
                    raise ArffError(
                        f"more than {self.limits.attributes:,} columns: refused "
                        f"(set {VARIABLES['attributes']} to allow more)",
                        name,
                        number,
                    )
                repeated = repeated_name(names)
                if repeated is not None:
                    raise ArffError(f"the column name {shown(repeated)} appears twice", name, number)
                return names
        raise ArffError("empty input: no header row of column names", name, 1)

    def _groups(self, opened: Reopen, name: str, width: int) -> Iterator[tuple["_Group | _Cut", list[int]]]:
        """The data rows (the header row skipped), a group at a time, cut into values."""
        with opened() as stream:
            groups = _row_groups(stream, name, self.limits, 10_000)
            next(groups, None)
            for group, numbers in groups:
                yield _group_columns(group, numbers, width, name), numbers


def _label_sets(texts: list, separator: str) -> list[list[str]]:
    """Each row's labels: its value of the labels column cut at ``separator``, blanks around each label
    stripped (a missing or blank value: none)."""
    return [
        [] if text is None or not text.strip(BLANKS) else [label.strip(BLANKS) for label in text.split(separator)]
        for text in texts
    ]


def _labelled(chunk: Chunk, sets: list | None, labelled: LabelledDetails | None, lines=(), name: str = "") -> Chunk:
    """``chunk`` headed by the label columns of its rows' label ``sets`` (none without labels)."""
    return chunk if labelled is None else with_labels(chunk, cast(list, sets), labelled.labels, lines, name)


def _chunk(columns: list[list], numbers: list[int], attributes, codes: tuple, name: str) -> Chunk:
    """A chunk of rows given column by column as their present values (texts, or numbers the compiled
    tokenizer read; None: missing), ``numbers`` their lines."""
    values = np.empty((len(numbers), len(attributes)))
    texts: dict[int, list] = {}
    for column, (attribute, present) in enumerate(zip(attributes, columns)):
        converted = column_values(present, attribute, codes[column], number_in)
        if converted is None:
            converted = one_by_one(present, attribute, codes[column], numbers, name, _cell)
        values[:, column], text = converted
        if text is not None:
            texts[column] = text
    return Chunk(values, texts)


class _Group:
    """A group of rows cut into values by :func:`_checked_fields`, column by column (None: missing)."""

    def __init__(self, columns: list[list]):
        self.columns = columns

    def texts(self, column: int) -> list:
        """A column's values as texts, None where missing."""
        return self.columns[column]

    def numbers_only(self, column: int) -> None:
        """None: the typing step observes these rows value by value (see :meth:`_Cut.numbers_only`)."""
        return None

    def present(self, column: int, numbers_kept: set[int]) -> list:
        """A column's values as :class:`KeptGroups` keeps them: texts, None where missing."""
        return self.columns[column]

    def distinct(self, column: int) -> tuple[list[tuple[str, float | None]], int]:
        """A column's distinct present values (``(text, number or None)``, in the order they first appear)
        and how many rows hold one."""
        texts = [text for text in self.columns[column] if text is not None]
        return [(text, number_in(text)) for text in dict.fromkeys(texts)], len(texts)

    def chunk(self, attributes, codes: tuple, positions: tuple | None, numbers: list[int], name: str) -> Chunk:
        """The chunk of the rows: the file's column at each attribute's position (None: missing)."""
        columns = self.columns
        if positions is not None:
            columns = [[None] * len(numbers) if p is None else columns[p] for p in positions]
        return _chunk(columns, numbers, attributes, codes, name)


#: The kinds of value the compiled cutter tells apart (``csv_cut`` in filterkit/formats/_lines.c), and its
#: flags of a quoted value, one with ``""`` inside, one with ARFF's backslash escapes.
_MISSING, _NUMBER, _TEXT, _MAYBE = range(4)
_KIND, _QUOTED_FLAG, _DOUBLED, _ESCAPED = 3, 4, 8, 16


class _Cut:
    """A group of rows cut into values by the compiled cutter in one pass: per row and column the value's
    kind, its number where it is a plain decimal and where its text lies; Python reads only a column's
    distinct texts (labels, strings, the rare number in another form), numbered when asked for (``csv_ids``)."""

    def __init__(self, rows: "_Rows", width: int, found: tuple):
        _, numbers, kinds, starts, ends = found
        shape = (len(rows), width)
        self.joined, self.width, self._found = rows.joined, width, found
        self.numbers = np.frombuffer(numbers).reshape(shape)
        self.kinds = np.frombuffer(kinds, np.uint8).reshape(shape)
        self.starts, self.ends = np.frombuffer(starts, np.int64), np.frombuffer(ends, np.int64)
        self._distinct: dict[int, tuple[np.ndarray, list[str], list[float | None]]] = {}
        self._unquoted = not (self.kinds & _QUOTED_FLAG).any()

    def _values(self, column: int) -> tuple[np.ndarray, list[str], list[float | None]]:
        """Which distinct value each row of a column holds (-1: missing), and each distinct value's text
        and the number it reads as (None: none)."""
        known = self._distinct.get(column)
        if known is not None:
            return known
        _, _, kinds, starts, ends = self._found
        ids, firsts = kernels.lines.csv_ids(self.joined, kinds, starts, ends, self.width, column)
        texts, numbers = [], []
        joined = self.joined
        for cell in (np.frombuffer(firsts, np.int64) * self.width + column).tolist():
            kind = int(self.kinds.flat[cell])
            text = joined[self.starts[cell] : self.ends[cell]].decode("utf-8")
            if kind & _DOUBLED:
                text = text.replace('""', '"')
            elif kind & _ESCAPED:
                text = unescape(text)
            texts.append(text)
            kind &= _KIND
            number = float(self.numbers.flat[cell]) if kind == _NUMBER else None
            numbers.append(number_in(text) if kind == _MAYBE else number)
        known = self._distinct[column] = np.frombuffer(ids, np.int32), texts, numbers
        return known

    def numbers_only(self, column: int) -> tuple[int, bool] | None:
        """For a column whose values are all plain numbers (or missing): how many rows hold one and whether
        each is a whole number, which is all the typing step needs of a column that stays numeric; else None."""
        kinds = self.kinds[:, column] & _KIND
        if (kinds > _NUMBER).any():
            return None
        present = kinds == _NUMBER
        numbers = self.numbers[present, column]
        return int(np.count_nonzero(present)), bool((np.isfinite(numbers) & (numbers == np.floor(numbers))).all())

    def texts(self, column: int) -> list:
        """A column's values as texts, None where missing."""
        ids, texts, _ = self._values(column)
        return np.array([None, *texts], dtype=object)[ids + 1].tolist()

    def present(self, column: int, numbers_kept: set[int]) -> list:
        """A column's values as :class:`KeptGroups` keeps them: texts (None: missing), or the numbers of a column
        whose every value is a plain number (which goes into ``numbers_kept``) in a group without quotes (a
        file of documents quotes them, and its class of whole numbers becomes labels, kept as texts)."""
        if self._unquoted and (self.kinds[:, column] & _KIND == _NUMBER).all():
            numbers_kept.add(column)
            return self.numbers[:, column].tolist()
        return self.texts(column)

    def distinct(self, column: int) -> tuple[list[tuple[str, float | None]], int]:
        """A column's distinct present values (``(text, number or None)``, in the order they first appear)
        and how many rows hold one."""
        ids, texts, numbers = self._values(column)
        present = int(np.count_nonzero(ids >= 0))
        values: dict[str, float | None] = {}
        for text, number in zip(texts, numbers):
            values.setdefault(text, number)
        return list(values.items()), present

    def chunk(self, attributes, codes: tuple, positions: tuple | None, numbers: list[int], name: str) -> Chunk:
        """The chunk of the rows: numbers from the cutter's arrays, labels and texts by their distinct texts;
        a value the attribute cannot hold is read by :func:`one_by_one`, which names its line."""
        rows = len(numbers)
        # the file's columns in order: the numbers in one copy, and only the other columns one by one
        in_order = positions is None
        values = self.numbers.copy() if in_order else np.empty((rows, len(attributes)))
        others = cast(list, (self.kinds & _KIND >= _TEXT).any(axis=0).tolist())
        texts: dict[int, list] = {}
        for at, attribute in enumerate(attributes):
            column = at if positions is None else positions[at]
            if column is None:
                values[:, at] = np.nan
                if attribute.kind == STRING:
                    texts[at] = [None] * rows
                continue
            if in_order and attribute.kind == NUMERIC and not others[column]:
                continue
            converted = self._column(column, attribute, codes[at], others[column])
            if converted is None:
                converted = one_by_one(self.texts(column), attribute, codes[at], numbers, name, _cell)
            values[:, at], text = converted
            if text is not None:
                texts[at] = text
        return Chunk(values, texts)

    def _column(self, column: int, attribute: Attribute, codes: dict[str, int] | None, others: bool):
        """A column's values (and texts, for text) at once; None where one does not fit the attribute.
        ``others``: whether a value of the column is neither missing nor a plain decimal."""
        if attribute.kind == NUMERIC:
            found = self.numbers[:, column]
            if not others:
                return found, None
            other = self.kinds[:, column] & _KIND >= _TEXT
            ids, _, by_id = self._values(column)
            if any(number is None for number in by_id):
                return None
            found = found.copy()
            found[other] = np.array(by_id, dtype=np.float64)[ids[other]]
            return found, None
        ids, texts, _ = self._values(column)
        if attribute.kind == STRING:
            return np.where(ids >= 0, 0.0, np.nan), np.array([None, *texts], dtype=object)[ids + 1].tolist()
        assert codes is not None
        coded = [codes.get(text) for text in texts]
        if None in coded:
            return None
        return np.array([np.nan, *coded], dtype=np.float64)[ids + 1], None


class _Rows(Sequence[bytes]):
    """A group of rows as one text: the rows joined by LF (a double-quoted value's line ends are LF too),
    ``ends`` where each ends in it."""

    def __init__(self, joined: bytes, ends: np.ndarray):
        self.joined, self.ends = joined, ends

    @classmethod
    def of(cls, rows: list[bytes]) -> "_Rows":
        """The rows of a list."""
        return cls(b"\n".join(rows), np.cumsum([len(row) + 1 for row in rows], dtype=np.int64) - 1)

    def __len__(self) -> int:
        return len(self.ends)

    @overload
    def __getitem__(self, row: int) -> bytes: ...

    @overload
    def __getitem__(self, row: slice) -> list[bytes]: ...

    def __getitem__(self, row):
        if isinstance(row, slice):
            return [self[at] for at in range(len(self))[row]]
        end = int(self.ends[row])
        start = int(self.ends[row - 1]) + 1 if row % len(self) else 0
        return self.joined[start:end]


def _plain_group(group: Sequence[bytes], width: int) -> _Cut | None:
    """A group of rows cut by the compiled cutter (``csv_cut``), in one pass without the GIL; None where it
    declines a row (one it leaves to :func:`_checked_fields`: another number of values, a double quote that
    does not end its value, bytes that are not UTF-8), and with :data:`filterkit.kernels.READING` off."""
    if not kernels.use_compiled(kernels.READING):
        return None
    rows = group if isinstance(group, _Rows) else _Rows.of(list(group))
    found = kernels.lines.csv_cut(rows.joined, rows.ends, width, _BLANK_BYTES)
    return _Cut(rows, width, found) if found[0] < 0 else None


class _Columns(NamedTuple):
    """How a CSV file's columns make a chunk: each attribute's label codes (None: not nominal), the column
    that holds each attribute (None: the file's columns are the attributes, in order; an attribute of
    None holds no column: missing), and the file's number of columns."""

    codes: tuple
    positions: tuple[int | None, ...] | None
    width: int
    #: the column of each row's labels (None: none) and what separates them there
    labels_at: int | None = None
    label_separator: str = ""


def known_layout(schema: Schema, names: list[str], name: str) -> Layout:
    """The layout of a model's training header, for rows read with it (``apply``, ``predict``): columns
    matched by name, as JSON Lines' fields are, so a file of documents without their class column reads
    (an attribute the file lacks is missing); an error naming a column the training data does not have."""
    column_of = {column_name: position for position, column_name in enumerate(names)}
    read = (NUMERIC, NOMINAL, STRING)
    kept = next((a for a in schema.attributes if a.name in column_of and a.kind not in read), None)
    if kept is not None:
        raise FilterkitError(
            f"header differs from the training data: the training data's attribute {shown(kept.name)} is {kept.kind}",
            name,
        )
    matched = layout_by_name(schema, names, name, 0, "column")
    positions = tuple(column_of.get(a.name) for a in schema.attributes)
    in_order = positions == tuple(range(len(names)))
    columns = _Columns(cast(tuple, matched.details), None if in_order else positions, len(names))
    return Layout(schema, (), columns, None, absent=matched.absent)


def _row_groups(stream: IO[bytes], name: str, limits: Limits, chunk_rows: int) -> Iterator[tuple[_Rows, list[int]]]:
    """The rows that are not blank, each with the number of its first line, in groups: the header row alone,
    then groups of at most ``chunk_rows`` rows or ``limits.chunk_bytes`` bytes (as :func:`line_groups` makes).
    The lines of a double-quoted value that holds line ends are one row, joined with LF.

    The compiled row loop (``csv_gather``) cuts whole blocks of lines into rows; from a row longer than a line
    may be, or one left open at the end of the input, to the end (and for every row, with
    :data:`filterkit.kernels.READING` off), rows are gathered line by line, which names the line of any error."""
    lines = bounded_lines(stream, name, limits)
    if not kernels.use_compiled(kernels.READING):
        yield from _line_groups(_rows_by_line(_without_mark(lines), name, limits), chunk_rows, limits, True)
        return
    pieces: list[bytes] = []
    ends: list[np.ndarray] = []
    numbers: list[np.ndarray] = []
    rows = held = 0
    wanted = 1  # the header row, in a group of its own
    blocks = lines.blocks()
    carry = b""
    status = 0
    for block, at in blocks:
        if carry:
            block, at, carry = carry + block[at:], 0, b""
        elif lines.line_number == 0:
            at += 3 if block.startswith(codecs.BOM_UTF8, at) else 0
        while at < len(block):
            text, found, row_ends, at, seen, status = kernels.lines.csv_gather(
                block, at, wanted - rows, limits.chunk_bytes - held, limits.line_bytes
            )
            if text:
                at_end = np.frombuffer(row_ends, np.int64)
                ends.append(at_end + sum(len(piece) + 1 for piece in pieces))
                pieces.append(text)
                numbers.append(np.frombuffer(found, np.int64) + (lines.line_number + 1))
                rows += len(at_end)
                held += len(text) + 1
            lines.line_number += seen
            if rows == wanted or held >= limits.chunk_bytes:
                yield _Rows(b"\n".join(pieces), np.concatenate(ends)), np.concatenate(numbers).tolist()
                pieces, ends, numbers, rows, held, wanted = [], [], [], 0, 0, chunk_rows
            if status:
                carry = block[at:]
                break
        if status == 2 or len(carry) > limits.line_bytes:
            break
    if carry:
        rest = NumberedLines(itertools.chain([carry], (block[at:] for block, at in blocks)), name, limits.line_bytes)
        rest.line_number = lines.line_number
        gathered = _Rows(b"\n".join(pieces), np.concatenate(ends)) if pieces else _Rows.of([])
        held_rows = zip(np.concatenate(numbers).tolist() if numbers else [], gathered)
        more = itertools.chain(held_rows, _rows_by_line(rest, name, limits))
        yield from _line_groups(more, chunk_rows, limits, wanted == 1)
    elif pieces:
        yield _Rows(b"\n".join(pieces), np.concatenate(ends)), np.concatenate(numbers).tolist()


def _without_mark(lines: Iterator[tuple[int, bytes]]) -> Iterator[tuple[int, bytes]]:
    """The numbered lines, a byte-order mark before the first left out."""
    for number, line in lines:
        yield number, line.removeprefix(codecs.BOM_UTF8) if number == 1 else line


def _line_groups(
    rows: Iterator[tuple[int, bytes]], chunk_rows: int, limits: Limits, header: bool
) -> Iterator[tuple[_Rows, list[int]]]:
    """Numbered rows in :func:`_row_groups`' groups (the first row alone when it is the ``header``)."""
    if header:
        first = next(rows, None)
        if first is None:
            return
        yield _Rows.of([first[1]]), [first[0]]
    for group, numbers in line_groups(rows, chunk_rows, limits):
        yield _Rows.of(group), numbers


def _rows_by_line(lines: Iterator[tuple[int, bytes]], name: str, limits: Limits) -> Iterator[tuple[int, bytes]]:
    """The rows of numbered lines, gathered a line at a time (see :func:`_row_groups`)."""
    for number, line in lines:
        if b'"' in line and ends_quoted(line, False):
            parts, held = [line], len(line)
            for _, more in lines:
                parts.append(more)
                held += len(more) + 1
                if held > limits.line_bytes:
                    raise ArffError(
                        f"a row longer than {limits.line_bytes:,} bytes: refused "
                        f"(set {VARIABLES['line_bytes']} to allow more)",
                        name,
                        number,
                    )
                if not ends_quoted(more, True):
                    break
            line = b"\n".join(parts)
        if line.strip():
            yield number, line


def ends_quoted(line: bytes, quoted: bool) -> bool:
    """Whether a double-quoted value is still open at the end of ``line``; ``quoted`` says
    whether one is open at its start."""
    position = 0
    if quoted:
        rest = _QUOTED_REST.match(line)
        if rest is None:
            return True
        position = line.find(b",", rest.end()) + 1
        if position == 0:
            return False
    last = cast(re.Match, _LAST_VALUE.match(line, position))
    return last.group(1) is not None and _QUOTED_REST.match(line, last.end()) is None


def _fields(line: str) -> list[tuple[str, bool]]:
    """A line's values, each as ``(text, quoted)``; an unterminated quote is an error."""
    if "'" not in line and '"' not in line:
        return [(text, False) for text in line.split(",")]
    fields = []
    position = 0
    while True:
        match = _QUOTED.match(line, position)
        if match is not None:
            single, double = match.groups()
            text = unescape(single) if double is None else double.replace('""', '"')
            fields.append((text, True))
            end = match.end()
        else:
            comma = line.find(",", position)
            end = len(line) if comma < 0 else comma
            text = line[position:end]
            if text.lstrip(" \t")[:1] == '"':
                raise ArffError(f"value {len(fields) + 1}: a quote that does not end the value (or never closes)")
            fields.append((text, False))
        if end >= len(line):
            return fields
        position = end + 1


def _group_columns(group: _Rows, numbers: list[int], width: int, name: str) -> _Group | _Cut:
    """A group of rows cut into values: by the compiled cutter (:func:`_plain_group`), or where it declines a
    row (and with :data:`filterkit.kernels.READING` off) row by row by :func:`_checked_fields`, which names the
    error of the first row that has one."""
    cut = _plain_group(group, width)
    if cut is not None:
        return cut
    columns: list[list] = [[None] * len(group) for _ in range(width)]
    for row, (line, number) in enumerate(zip(group, numbers)):
        for column, (text, quoted) in enumerate(_checked_fields(decoded(line, name, number), width, name, number)):
            columns[column][row] = None if reads_missing(text, quoted) else text
    return _Group(columns)


def _checked_fields(line: str, width: int | None, name: str, number: int) -> list[tuple[str, bool]]:
    """The fields of a row, which must be ``width`` (the header's columns) unless None."""
    try:
        fields = _fields(line)
    except ArffError as error:
        raise error.located(name, number) from None
    if width is not None and len(fields) != width:
        raise ArffError(f"{len(fields)} values; the header row names {width} columns", name, number)
    return fields


#: The blanks around a value that may leave it missing: white space that Java's ``trim`` strips too (up to the
#: space), so a cell of U+00A0 or U+3000 is a value, as in CSVLoader, pandas and the ARFF reader; and a NUL is
#: one, as the ARFF reader reads it (tests/test_csv_rfc4180.py).
BLANKS = "".join(character for character in JAVA_BLANKS if character.isspace())
_BLANK_BYTES = BLANKS.encode("ascii")


def reads_missing(text: str, quoted: bool) -> bool:
    """Whether a value is missing: unquoted, and empty or ``?`` once :data:`BLANKS` are stripped."""
    return not quoted and text.strip(BLANKS) in ("", "?")


def _cell(text: str, number: int) -> tuple[str, float | None]:
    """A present value as the typing step sees it (``number``: its line, which CSV does not need)."""
    return text, number_in(text)
