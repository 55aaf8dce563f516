"""The one typing step of the record formats (CSV, JSON Lines, Parquet, a folder per class): which
attributes their columns become, decided from the values of the whole input.

A format hands :class:`ColumnTyping` each group of rows, column by column, as the distinct values present
(each ``(text as written, its number or None)``) and how many rows hold one; at the end
:meth:`ColumnTyping.attributes` declares each column (docs/documents.md, "How columns are typed"):

* a column whose every value is a number is **numeric** (none at all: numeric, as Weka's CSVLoader reads it);
* a column that is not numeric, and not the class (``-c``: a label, however it is written), is **text** (a
  string attribute) when one of its values holds white space
  between two other characters, and its values are mostly distinct (more distinct values than half the rows
  that hold one) or one is longer than :data:`LONG_VALUE` characters: documents are written in words and
  are long or rarely repeat; labels and codes repeat, and are short;
* any other column is **nominal**, its labels in the order they first appear;
* in a file of documents (one with a text column), the class column of whole numbers only (a Hugging
  Face export's ``label``) is nominal, its labels in numeric order, as the svmlight reader declares them.

``--text`` and ``--nominal`` (Weka CSVLoader's ``-S`` and ``-N``) decide a column instead.  A column typed
by a rule rather than by the numbers is named on stderr, once.  A format whose columns carry a type
(Parquet's dictionary or timestamp columns) declares them instead (``declared``).
"""

from __future__ import annotations

import marshal
import re
import sys
from dataclasses import dataclass, field
from typing import IO, Any, Callable, Iterable, Iterator, NamedTuple, Sequence, cast

import numpy as np

from filterkit.arff.reader import parse_number
from filterkit.errors import ArffError, FilterkitError
from filterkit.formats import Layout
from filterkit.labels import LABEL_VALUES, meka_label_count, with_meka_label_count
from filterkit.limits import VARIABLES, Limits
from filterkit.schema import NOMINAL, NUMERIC, STRING, Attribute, Chunk, Schema
from filterkit.text import shown

#: Characters of a value no label is expected to reach: a column holding one (and white space) is text.
LONG_VALUE = 200

#: Bytes of distinct values a column keeps as labels while its type is open; past them it keeps only
#: their count, and a column that ends nominal has its labels collected in a second pass.
LABEL_BYTES = 64 << 20


@dataclass
class _Column:
    """What the values of one column have shown so far."""

    numeric: bool = True
    whole: bool = True
    present: int = 0
    spaced: bool = False
    longest: int = 0
    #: the distinct values as written, in the order they first appear (None: past :data:`LABEL_BYTES`)
    labels: dict[str, float | None] | None = field(default_factory=dict)
    label_bytes: int = 0
    #: hashes of the distinct values (to count them), up to the labels bound
    distinct: set[int] = field(default_factory=set)
    too_many: bool = False


def has_inner_blank(text: str) -> bool:
    """Whether white space stands between two other characters of ``text``."""
    stripped = text.strip()
    return any(character.isspace() for character in stripped)


class ColumnTyping:
    """The typing step (see the module's description): observe the groups of rows, then ask for the
    attributes; ``text`` and ``nominal`` name the columns given by ``--text`` and ``--nominal``."""

    def __init__(
        self,
        names: Sequence[str],
        name: str,
        limits: Limits,
        text: Iterable[str] = (),
        nominal: Iterable[str] = (),
        numeric: Iterable[str] = (),
        class_spec: str | None = None,
        declared: dict[int, Attribute] | None = None,
    ):
        self.names, self.name, self.limits = list(names), name, limits
        #: each name's position (the first, for a name given twice)
        self.positions = first_positions(self.names)
        self.declared = declared or {}
        self.columns = [_Column() for _ in self.names]
        self.given = {"--text": tuple(text), "--nominal": tuple(nominal), "--numeric": tuple(numeric)}
        self.class_spec = class_spec
        for first, second in (("--text", "--nominal"), ("--text", "--numeric"), ("--nominal", "--numeric")):
            both = sorted(set(self.given[first]) & set(self.given[second]))
            if both:
                raise FilterkitError(f"column {shown(both[0])} is given to both {first} and {second}")

    def add_column(self, column_name: str) -> int:
        """A column first met after the header (a JSON Lines field): missing in the rows before."""
        self.positions.setdefault(column_name, len(self.names))
        self.names.append(column_name)
        self.columns.append(_Column())
        return len(self.names) - 1

    @property
    def text(self) -> set[int]:
        """The columns ``--text`` names."""
        return self._given("--text")

    @property
    def nominal(self) -> set[int]:
        """The columns ``--nominal`` names."""
        return self._given("--nominal")

    @property
    def numeric(self) -> set[int]:
        """The columns ``--numeric`` names."""
        return self._given("--numeric")

    def _given(self, flag: str) -> set[int]:
        """The positions of the columns ``flag`` names; an error naming an unknown one."""
        return named_positions(self.names, self.given[flag], flag, self.name, self.positions)

    def observe(self, column: int, values: Iterable[tuple[str, float | None]], present: int, line: int) -> None:
        """Add a group's distinct values of ``column`` (``(text, number or None)``, each once, in the order
        they appear) and the rows of the group that hold a value; ``line``: the group's last line."""
        seen = self.columns[column]
        seen.present += present
        labels = seen.labels
        for text, number in values:
            if number is None:
                seen.numeric = seen.whole = False
            elif seen.whole and not float(number).is_integer():
                seen.whole = False
            if labels is not None and text not in labels:
                labels[text] = number
                seen.label_bytes += len(text)
                if seen.label_bytes > LABEL_BYTES:
                    seen.labels = labels = None
            if not seen.too_many:
                seen.distinct.add(hash(text))
                if len(seen.distinct) > self.limits.labels:
                    seen.too_many, seen.distinct = True, set()
            if number is None:
                seen.spaced = seen.spaced or has_inner_blank(text)
                seen.longest = max(seen.longest, len(text))
        if seen.too_many and self.names[column] in self.given["--nominal"]:
            raise self._too_many_labels(column, line)

    def observe_numbers(self, column: int, present: int, whole: bool) -> None:
        """Add a group of ``column`` whose ``present`` values are all numbers, their texts not given: for a
        column whose every value is a number by its declared type (Parquet's), whose texts never decide."""
        seen = self.columns[column]
        seen.present += present
        seen.whole = seen.whole and whole
        if present and seen.labels is not None:
            seen.labels = None  # the texts of these numbers were not kept: a nominal column rereads them

    def _too_many_labels(self, column: int, line: int | None) -> ArffError:
        """The error of a nominal column past the bound on labels."""
        column_name = shown(self.names[column])
        return ArffError(
            f"column {column_name} has more than {self.limits.labels:,} distinct values, too many labels for a "
            f"nominal attribute: refused (--text {column_name} reads it as text; set {VARIABLES['labels']} "
            "to allow more labels)",
            self.name,
            line,
        )

    def kinds(self) -> list[str]:
        """Each column's kind, by the rules of the module's description (unknown columns given to
        ``--text``, ``--nominal`` or ``--numeric`` are an error)."""
        kinds = []
        text, nominal, numeric = self.text, self.nominal, self.numeric
        label = class_column(self.names, self.class_spec)
        self.class_read_as_text = False
        for position, seen in enumerate(self.columns):
            if position in self.declared:
                kinds.append(self.declared[position].kind)
            elif position in text:
                kinds.append(STRING)
            elif position in nominal:
                kinds.append(NOMINAL)
            elif seen.numeric or position in numeric:
                kinds.append(NUMERIC)
            elif seen.spaced and (seen.too_many or 2 * len(seen.distinct) > seen.present or seen.longest > LONG_VALUE):
                self.class_read_as_text = position == label
                kinds.append(NOMINAL if position == label else STRING)
            else:
                kinds.append(NOMINAL)
        if (
            STRING in kinds
            and label is not None
            and kinds[label] == NUMERIC
            and label not in self.declared
            and label not in numeric
            and self.columns[label].present
            and self.columns[label].whole
        ):
            kinds[label] = NOMINAL
        return kinds

    def needs_labels(self) -> list[int]:
        """The nominal columns whose labels were not all kept: a second pass gives them (:meth:`collect`)."""
        kinds = self.kinds()
        return [
            position
            for position, seen in enumerate(self.columns)
            if kinds[position] == NOMINAL and position not in self.declared and seen.labels is None
        ]

    def restart_labels(self, columns: Iterable[int]) -> None:
        """Make ready to collect the labels of ``columns`` afresh."""
        for position in columns:
            self.columns[position].labels = {}

    def collect(self, column: int, values: Iterable[tuple[str, float | None]]) -> None:
        """Add a group's distinct values of ``column`` to its labels (the second pass)."""
        labels = self.columns[column].labels
        assert labels is not None  # restarted
        for text, number in values:
            labels.setdefault(text, number)

    def attributes(self) -> tuple[Attribute, ...]:
        """The attributes the columns become; their typing by a rule said on stderr."""
        kinds = self.kinds()
        text, nominal = self.text, self.nominal
        attributes = []
        for position, (column_name, kind) in enumerate(zip(self.names, kinds)):
            seen = self.columns[position]
            if position in self.declared:
                attributes.append(self.declared[position])
            elif kind == NUMERIC:
                attributes.append(Attribute(column_name, NUMERIC, declared_type="numeric"))
            elif kind == STRING:
                attributes.append(Attribute(column_name, STRING))
            elif seen.numeric and position not in nominal:  # the class of whole numbers in a file of documents
                assert seen.labels is not None
                self._refuse_inexact_labels(position, seen.labels)
                numbers = sorted({float(number) for number in seen.labels.values() if number is not None})
                attributes.append(Attribute(column_name, NOMINAL, labels=tuple(_whole(number) for number in numbers)))
            elif seen.too_many:
                raise self._too_many_labels(position, None)
            else:
                assert seen.labels is not None
                attributes.append(Attribute(column_name, NOMINAL, labels=tuple(seen.labels)))
        self._announce(kinds, text, nominal)
        return tuple(attributes)

    def _refuse_inexact_labels(self, column: int, labels: dict) -> None:
        """ArffError for a class of whole numbers holding one a double cannot hold exactly (2**53 or more): two such
        labels could become one (9007199254740993 and 9007199254740992), as svmlight's labels are refused."""
        past = next((text for text, number in labels.items() if number is not None and abs(number) >= 2**53), None)
        if past is not None:
            column_name = shown(self.names[column])
            raise ArffError(
                f"the class {column_name} holds {shown(past)}, a whole number past 2**53 that a double does not hold "
                f"exactly (two such labels could become one): --nominal {column_name} reads its labels as written",
                self.name,
            )

    def _announce(self, kinds: list[str], given_text: set[int], given_nominal: set[int]) -> None:
        """One stderr line naming the columns a rule typed as text, or as a nominal class of numbers."""
        text = [self.names[p] for p, kind in enumerate(kinds) if kind == STRING and p not in given_text]
        numbered = [
            self.names[p]
            for p, kind in enumerate(kinds)
            if kind == NOMINAL and self.columns[p].numeric and p not in given_nominal and p not in self.declared
        ]
        said = []
        if text:
            said.append(
                f"{_listed(text)} read as text (long or mostly distinct values with white space; --nominal to decide)"
            )
        if numbered:
            said.append(f"class {_listed(numbered)} of whole numbers read as nominal (--numeric to keep numbers)")
        if self.class_read_as_text:
            label = cast(int, class_column(self.names, self.class_spec))
            labels = [
                name for position, name in enumerate(self.names) if position != label and kinds[position] != STRING
            ]
            instead = f"-c {shown(labels[0])}" if labels else "-c COLUMN"
            said.append(
                f"the class {shown(self.names[label])} (-c {self.class_spec}) reads as text, and is read as nominal "
                f"labels: if it holds the documents, name the class ({instead})"
            )
        if said:
            print(f"filterkit: {self.name}: {'; '.join(said)}", file=sys.stderr)


def typing_of(
    names: Sequence[str], name: str, limits: Limits, options, declared: dict[int, Attribute] | None = None
) -> ColumnTyping:
    """The typing step of a record format's columns, with the reading options given (``--text``, ``--nominal``,
    ``--numeric``, the chain's ``-c``)."""
    return ColumnTyping(
        names,
        name,
        limits,
        split_names(options.text),
        split_names(options.nominal),
        split_names(options.numeric),
        options.class_spec,
        declared,
    )


def layout_by_name(schema: Schema, names: list[str], name: str, rows: int, what: str) -> Layout:
    """The layout of a model's training header for a format whose ``what`` (fields, columns) are matched by
    name; an error naming one the training data does not have (one it has and the file lacks is missing)."""
    declared = {attribute.name for attribute in schema.attributes}
    unknown = [column for column in names if column not in declared]
    if unknown:
        raise FilterkitError(
            f"the {what} {shown(unknown[0])} is not an attribute of the training data "
            f"({', '.join(shown(a.name) for a in schema.attributes[:10])})",
            name,
        )
    present = set(names)
    absent = tuple(attribute.name for attribute in schema.attributes if attribute.name not in present)
    return Layout(schema, (), label_codes(schema.attributes), rows, absent=absent)


class _NumberedCodes(dict):
    """A nominal attribute's codes, and ``by_number``: the code of each number only one label is written as (``1``
    of ``{1,2,x}``; not ``1`` of ``{01,x,1}``, which two labels are), so that ``1.0`` is found as ``1``."""

    def __init__(self, labels: tuple[str, ...]):
        super().__init__((label, code) for code, label in enumerate(labels))
        numbered: dict[float, int | None] = {}
        for code, label in enumerate(labels):
            number = _label_number(label)
            if number is not None:
                numbered[number] = None if number in numbered else code
        self.by_number = numbered


def _label_number(label: str) -> float | None:
    """The whole number a label is written as (None: no whole number)."""
    try:
        number = float(label)
    except ValueError:
        return None
    return number if number.is_integer() else None


def label_codes(attributes: Sequence[Attribute]) -> tuple[dict[str, int] | None, ...]:
    """Each nominal attribute's code of each label (None for the other kinds), as :func:`cell_value` reads them."""
    return tuple(_NumberedCodes(a.labels) if a.kind == NOMINAL else None for a in attributes)


#: A character no text that Java's ``Double.valueOf`` reads holds (so a document is no number at a glance).
_NOT_IN_A_NUMBER = re.compile(r"[^0-9a-fA-FxXpPNIinty.+\-\x00-\x20]")


def number_in(text: str) -> float | None:
    """The number a text reads as (Java's ``Double.valueOf``, as CSV reads a field), None for any other text."""
    if _NOT_IN_A_NUMBER.search(text) is not None:
        return None
    try:
        return parse_number(text)
    except ArffError:
        return None


def cell_value(
    text: str, number: float | None, attribute: Attribute, codes: dict[str, int] | None, texts: list | None, row: int
) -> float:
    """One present value as a chunk holds it: a number, a label's code (a label of whole numbers found by its
    number too: ``1.0`` is the label ``1``), 0 for text (kept in ``texts[row]``); ArffError for a value the
    attribute cannot hold (to be located by the caller)."""
    kind = attribute.kind
    if kind == NUMERIC:
        if number is None:  # a typed format's text (JSON's or Parquet's string) under --numeric: read as CSV reads it
            number = number_in(text)
        if number is None:
            raise ArffError(f"value {shown(text)} of {shown(attribute.name)} is not a number")
        return number
    if kind == STRING:
        assert texts is not None
        texts[row] = text
        return 0.0
    assert codes is not None
    code = codes.get(text)
    if code is None and isinstance(codes, _NumberedCodes) and number is not None and float(number).is_integer():
        code = codes.by_number.get(float(number))
    if code is None:
        raise ArffError(f"value {shown(text)} is not one of the training labels of {shown(attribute.name)}")
    return code


def column_values(
    present: list, attribute: Attribute, codes: dict[str, int] | None, number: Callable[[str], float | None]
) -> tuple[np.ndarray, list | None] | None:
    """A column of a chunk at once: its values and, for text, its texts, from each row's value (None:
    missing; a format's text, or a JSON number or boolean); ``number`` reads a text as a number.  None
    when a value does not fit the attribute (:func:`cell_value` then names it)."""
    kind = attribute.kind
    if kind == STRING:
        if not all(text is None or type(text) is str for text in present):
            return None
        return np.array([np.nan if text is None else 0.0 for text in present]), present
    if kind == NUMERIC:
        found = [
            np.nan if value is None else value if type(value) in (int, float) else number(value) for value in present
        ]
        if any(value is None for value in found):
            return None
        return np.array(found, dtype=np.float64), None
    assert codes is not None
    coded = [np.nan if value is None else codes.get(value) for value in present]
    if any(code is None for code in coded):
        return None
    return np.array(coded, dtype=np.float64), None


def one_by_one(
    present: list,
    attribute: Attribute,
    codes: dict[str, int] | None,
    lines: list[int],
    name: str,
    cell: Callable[[Any, int], tuple[str, float | None] | None],
) -> tuple[np.ndarray, list | None]:
    """A column of a chunk a value at a time, where :func:`column_values` found one it could not take at
    once (a label of whole numbers written otherwise, ``1.0``): each value made a cell by ``cell(value,
    line)`` and read by :func:`cell_value`, the first one ``attribute`` cannot hold an error naming its line."""
    values = np.full(len(present), np.nan)
    texts: list | None = [None] * len(present) if attribute.kind == STRING else None
    for row, (value, line) in enumerate(zip(present, lines)):
        found = None if value is None else cell(value, line)
        if found is not None:
            try:
                values[row] = cell_value(*found, attribute, codes, texts, row)
            except ArffError as error:
                raise error.located(name, line) from None
    return values, texts


def _whole(number: float) -> str:
    """A whole number as a label: ``3``, not ``3.0``."""
    return str(int(number)) if abs(number) < 2**53 else repr(number)


def _listed(names: list[str]) -> str:
    """Column names for a message, the first few then how many more."""
    shown_names = ", ".join(shown(name) for name in names[:5])
    return shown_names + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def named_positions(
    names: list[str], given: Iterable[str], flag: str, name: str, positions: dict[str, int] | None = None
) -> set[int]:
    """The positions of the columns named in ``given`` (``positions``: :func:`first_positions` of ``names``,
    if made already); an error naming an unknown one."""
    given = tuple(given)
    if not given:
        return set()
    known = first_positions(names) if positions is None else positions
    for column_name in given:
        if column_name not in known:
            raise FilterkitError(f"{flag} {shown(column_name)} is not a column (columns: {_listed(names)})", name)
    return {known[column_name] for column_name in given}


def first_positions(names: Iterable[str]) -> dict[str, int]:
    """Each name's position among ``names`` (its first, for a name given twice): a lookup of constant time,
    where a list's ``index`` walks the names."""
    positions: dict[str, int] = {}
    for position, column_name in enumerate(names):
        positions.setdefault(column_name, position)
    return positions


def repeated_name(names: Iterable[str]) -> str | None:
    """The first of ``names`` that repeats one before it (None: all distinct), in one pass over a set, where
    a check of each name against the names before it takes time quadratic in their number."""
    seen: set[str] = set()
    for column_name in names:
        if column_name in seen:
            return column_name
        seen.add(column_name)
    return None


def class_column(names: Sequence[str], class_spec: str | None) -> int | None:
    """The position ``-c`` names among ``names`` (last, first, a 1-based index or a name); None if none."""
    if class_spec is None or not names:
        return None
    if class_spec == "last":
        return len(names) - 1
    if class_spec == "first":
        return 0
    if class_spec.isdigit() and 1 <= int(class_spec) <= len(names):
        return int(class_spec) - 1
    return list(names).index(class_spec) if class_spec in names else None


def dense_rows(chunk_rows: int, width: int, limits: Limits) -> int:
    """The rows of a dense chunk of ``width`` attributes: at most ``chunk_rows``, and no more values than a
    chunk's bytes (``limits.chunk_bytes``; a value takes two bytes of text at least), so that a file of
    many sparse fields, each missing from most rows, is not held as rows × fields at once."""
    return max(1, min(chunk_rows, limits.chunk_bytes // max(width, 1)))


def split_names(text: str | None) -> tuple[str, ...]:
    """Column names given to ``--text`` or ``--nominal``, comma-separated."""
    return () if not text else tuple(part for part in text.split(",") if part)


class KeptGroups:
    """The scan's groups of rows, each as its line numbers and its columns of present values (None: missing),
    kept in an unlinked temporary file so that the chunk passes read them instead of cutting the input into
    fields again (a chain that learns reads its input twice at least).  Written by :mod:`marshal`, which
    holds lists of text, numbers and None exactly and reads them back at a few times JSON's speed: the file
    is this process's own, unlinked as it is made, and holds no code."""

    def __init__(self) -> None:
        import tempfile  # here: only a run of several passes keeps its groups (tempfile is 5 ms of a start)

        self.file: IO[bytes] = tempfile.TemporaryFile(prefix="filterkit-spool-")

    def add(self, lines: list[int], rows: list) -> None:
        """Keep a group: its line numbers and its columns (or, :meth:`groups`, its rows)."""
        data = marshal.dumps((lines, rows))
        self.file.write(len(data).to_bytes(8, "little") + data)

    def groups(self) -> Iterator[tuple[list[int], list]]:
        """The kept groups as :meth:`add` was given them."""
        self.file.flush()
        self.file.seek(0)
        while size := self.file.read(8):
            yield marshal.loads(self.file.read(int.from_bytes(size, "little")))

    def chunks(self, chunk_rows: int) -> Iterator[tuple[list[int], list[list]]]:
        """The kept rows of groups kept as columns, in groups of at most ``chunk_rows``."""
        for lines, columns in self.groups():
            for start in range(0, len(lines), chunk_rows):
                yield lines[start : start + chunk_rows], [column[start : start + chunk_rows] for column in columns]

    def close(self) -> None:
        """Delete the kept groups."""
        self.file.close()


#: A label that reads as a decimal number: the labels of a file all of whose labels do are ordered as numbers.
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def label_order(labels: Iterable[str]) -> tuple[str, ...]:
    """Labels in the order their attributes take: as numbers when every one reads as a decimal number
    (svmlight's ``1,3,10``), else by code point; so the same for any row order or chunk size."""
    labels = set(labels)
    if all(_DECIMAL.fullmatch(label) for label in labels):
        return tuple(sorted(labels, key=lambda label: (float(label), label)))
    return tuple(sorted(labels))


class LabelSets:
    """The labels a scan meets in the column of each row's label set (``--labels-column``, svmlight's
    ``l1,l2``), with the line where each is first met, which names it in an error."""

    def __init__(self, column: str, name: str, limits: Limits):
        self.column, self.name, self.limits = column, name, limits
        self.first_line: dict[str, int] = {}

    def observe(self, sets: Iterable[Iterable[str]], lines: Iterable[int]) -> None:
        """Add a group's label sets (``lines`` their line numbers); an error for an empty label or past the
        bound on attributes."""
        first_line = self.first_line
        for labels, line in zip(sets, lines):
            for label in labels:
                if label not in first_line:
                    if not label:
                        raise ArffError(f"the column {shown(self.column)} holds an empty label", self.name, line)
                    first_line[label] = line
                    if len(first_line) > self.limits.attributes:
                        raise ArffError(
                            f"more than {self.limits.attributes:,} labels: refused "
                            f"(set {VARIABLES['attributes']} to allow more)",
                            self.name,
                            line,
                        )

    def attributes(self, others: Sequence[str]) -> tuple[Attribute, ...]:
        """The label attributes, ``{0,1}`` each, in :func:`label_order`; an error naming the line of a label
        named like one of ``others`` (the other attributes)."""
        taken = set(others)
        clashes = [(line, label) for label, line in self.first_line.items() if label in taken]
        if clashes:
            line, label = min(clashes)
            raise ArffError(
                f"the label {shown(label)} is named like another attribute: it cannot be both", self.name, line
            )
        return tuple(Attribute(label, NOMINAL, labels=LABEL_VALUES) for label in label_order(self.first_line))

    def known_layout(self, schema: Schema, match: Callable[[Schema], "Layout"]) -> "Layout":
        """The layout of a model's training header (``schema``, its labels first as a column of labels makes
        them: MEKA's ``-C k``), the other attributes laid out by the format's ``match`` of their schema; an
        error naming the line of a label met that the model lacks (:func:`label_values` finds those a scan of
        the header alone did not meet)."""
        count = meka_label_count(schema.relation)
        if count is None or count < 0:
            raise FilterkitError(
                f"--labels-column {self.column}: the model's labels are not its first attributes, as a column of "
                "labels reads them: give the rows in the model's training format",
                self.name,
            )
        labels = tuple(a.name for a in schema.attributes[:count])
        unknown = [(line, label) for label, line in self.first_line.items() if label not in labels]
        if unknown:
            line, label = min(unknown)
            raise ArffError(unknown_label(label, labels), self.name, line)
        matched = match(Schema(schema.relation, schema.attributes[count:]))
        details = LabelledDetails(matched.details, self.column, labels)
        return Layout(schema, (), details, matched.rows, absent=matched.absent)


def unknown_label(label: str, labels: Sequence[str]) -> str:
    """The error of a row's label that a model's labels do not hold."""
    return f"the label {shown(label)} is not one of the model's ({', '.join(shown(known) for known in labels)})"


def label_values(
    sets: Sequence[Iterable[str]], labels: Sequence[str], lines: Sequence[int] = (), name: str = ""
) -> np.ndarray:
    """Rows × labels of 0 and 1: which of ``labels`` (every label the scan met, or a model's) each of ``sets``
    holds; an error naming the line (of ``lines`` in ``name``) of a label they lack."""
    positions = {label: position for position, label in enumerate(labels)}
    values = np.zeros((len(sets), len(labels)))
    for row, found in enumerate(sets):
        for label in found:
            position = positions.get(label)
            if position is None:
                raise ArffError(unknown_label(label, labels), name, lines[row] if lines else None)
            values[row, position] = 1.0
    return values


def labelled_schema(relation: str, labels: tuple[Attribute, ...], others: Sequence[Attribute]) -> Schema:
    """The schema of multi-label rows: the label attributes first, marked by MEKA's ``-C`` in the relation name."""
    return Schema(with_meka_label_count(relation, len(labels)), (*labels, *others))


class LabelledDetails(NamedTuple):
    """A record format's reading details when a column holds each row's label set: the format's own
    ``details`` of the other attributes, the labels' ``column`` and the label attributes' names in order."""

    details: Any
    column: str
    labels: tuple[str, ...]


def with_labels(
    chunk: Chunk, sets: Sequence[Iterable[str]], labels: Sequence[str], lines: Sequence[int] = (), name: str = ""
) -> Chunk:
    """``chunk`` (dense, its rows' other attributes) headed by the label columns of its rows' ``sets``
    (:func:`label_values`)."""
    values = np.hstack([label_values(sets, labels, lines, name), chunk.values])
    return Chunk(values, {column + len(labels): texts for column, texts in chunk.text.items()}, chunk.weights)


def typing_options(options, labels_column: str | None):
    """The reading ``options`` the typing step of the other columns takes: with a column of labels, no class
    (``-c``: the labels take its place)."""
    return options if labels_column is None else type(options)(None, **options.given)
