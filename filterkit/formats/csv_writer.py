"""CSV output: RFC 4180 rows with a header row of names, read back by :mod:`filterkit.formats.csv`."""

from __future__ import annotations

import re
from typing import BinaryIO

import numpy as np

from filterkit.arff.writer import EXACT, ArffWriter, NumberFormat
from filterkit.errors import FilterkitError
from filterkit.formats import FormatOptions
from filterkit.formats.csv import BLANKS, reads_missing
from filterkit.labels import meka_label_positions, refuse_missing_labels
from filterkit.schema import STRING, Attribute, Chunk, Schema
from filterkit.text import shown


class CsvWriter(ArffWriter):
    """Writes rows as RFC 4180 CSV: a header row of the names, then one row per instance,
    each ended by LF (as pandas writes).  Numbers are written in their shortest exact form
    (or rounded as ``numbers`` says); labels, strings, dates and names as they are, in
    double quotes (``"`` doubled) where they hold a comma, a quote or a line end, begin
    with ``'`` or would read as missing (``""``, ``"?"``, blanks).  A missing value is an
    empty cell (pandas reads NaN, Python's csv module ``''``), but ``?`` in a file of one
    column, whose empty row would be a blank line.  Instance weights other than 1 cannot
    be written (an error), nor a carriage return in a name, label or text (an error: the reader reads
    every line end as LF, so it would read back as another value); CSV has no comments, so no provenance
    line is written.  The rows are the ARFF writer's dense rows, with CSV's quoting and missing value.

    Multi-label rows (MEKA's ``-C`` in the relation name) are written with their labels in one column,
    ``--labels-column`` (default ``labels``), each row's label names joined by ``--label-separator``,
    where the labels stood (first for ``-C k``, last for ``-C -k``); a label name that is empty, has blanks
    around it or holds the separator is an error, as it would not read back."""

    #: the CSV reader bounds a row whole, the line ends of its quoted values included
    _quoted_records = True

    def __init__(
        self, stream: BinaryIO, schema: Schema, numbers: NumberFormat = EXACT, options: FormatOptions = FormatOptions()
    ):
        self._quote = csv_quoted
        self._quote_all = lambda texts: list(map(csv_quoted, texts))
        self.rows_written = 0
        self.label_positions = meka_label_positions(schema)
        for attribute in schema.attributes:
            for text in (attribute.name, *attribute.labels):
                _refuse_carriage_return(text, f"{attribute.kind} attribute {shown(attribute.name)}")
        if self.label_positions:
            schema = self._with_labels_column(schema, options.labels_column or "labels", options.label_separator)
        self._missing = "?" if len(schema) == 1 else ""
        super().__init__(stream, schema, False, (), numbers)

    def _with_labels_column(self, schema: Schema, column: str, separator: str) -> Schema:
        """``schema`` with its label attributes made one text ``column`` where they stood; what :meth:`write`
        needs to join each row's labels by ``separator``."""
        positions = self.label_positions
        self.label_names = [schema.attributes[position].name for position in positions]
        self.separator = separator
        held = next((name for name in self.label_names if not separator or separator in name), None)
        if held is not None:
            raise FilterkitError(f"CSV output: the label {shown(held)} holds the label separator {shown(separator)}")
        blank = next((name for name in self.label_names if name != name.strip(BLANKS) or not name), None)
        if blank is not None:
            raise FilterkitError(
                f"CSV output: the label {shown(blank)} is empty or has blanks around it, which a labels column "
                "cannot hold (reading it strips them)"
            )
        self.others = [position for position in range(len(schema)) if position not in set(positions)]
        others = [schema.attributes[position] for position in self.others]
        if column in {attribute.name for attribute in others}:
            raise FilterkitError(f"CSV output: the labels column {shown(column)} is named like another attribute")
        self.labels_at = 0 if positions[0] == 0 else len(others)
        attributes = (*others[: self.labels_at], Attribute(column, STRING), *others[self.labels_at :])
        return Schema(schema.relation, attributes)

    def _header(self, comments: list[str]) -> bytes:
        return (",".join(csv_quoted(a.name) for a in self.schema.attributes) + "\n").encode("utf-8")

    def write(self, chunk: Chunk) -> None:
        """Append the rows of ``chunk`` (a sparse one a block of rows at a time)."""
        if chunk.weights is not None and (chunk.weights != 1).any():
            raise FilterkitError("CSV output cannot hold instance weights other than 1")
        if self.label_positions:
            chunk = self._labels_joined(chunk)
        for column, texts in chunk.text.items():
            for row, text in enumerate(texts):
                if text is not None and "\r" in text:
                    where = f"row {self.rows_written + row + 1}'s value of {shown(self.schema.attributes[column].name)}"
                    _refuse_carriage_return(text, where)
        super().write(Chunk(chunk.values, chunk.text))
        self.rows_written += chunk.n_rows

    def _labels_joined(self, chunk: Chunk) -> Chunk:
        """``chunk`` with its label columns made one text column of each row's label names, joined."""
        values = chunk.dense_values()
        held = values[:, self.label_positions]
        refuse_missing_labels(held, self.rows_written, self.label_names, "a CSV labels column cannot hold")
        names = self.label_names
        joined = [self.separator.join(names[label] for label in np.flatnonzero(row).tolist()) for row in held]
        at = self.labels_at
        written = np.insert(values[:, self.others], at, 0.0, axis=1)
        moved = {old: new + (new >= at) for new, old in enumerate(self.others)}
        text = {moved[column]: texts for column, texts in chunk.text.items()}
        text[at] = joined
        return Chunk(written, text)


def _refuse_carriage_return(text: str, where: str) -> None:
    """A FilterkitError where ``text`` holds a carriage return: the CSV reader reads every line end as LF, so
    the text would read back as another (a label as another label)."""
    if "\r" in text:
        raise FilterkitError(
            f"CSV output: {where} holds a carriage return ({shown(text)}), which reads back as a line feed: "
            "write ARFF or JSON Lines, or remove it first"
        )


def csv_quoted(text: str) -> str:
    """``text`` as a CSV value that reads back as itself, here, in Python's csv module and in pandas (given
    ``keep_default_na=False``, else it reads ``NA`` and the like as missing): in double quotes, each ``"``
    doubled, where needed (see :class:`CsvWriter`)."""
    if _NEEDS_QUOTES.search(text) is None and not reads_missing(text, False):
        return text
    return '"' + text.replace('"', '""') + '"'


#: What a value written bare must not hold: a comma, a quote, a line end, a ``'`` first, or a byte-order mark first
#: (which a reader takes off the file's first bytes: a first name ``\ufeffid`` read back as ``id``).
_NEEDS_QUOTES = re.compile(r"""[,"\r\n]|\A[ \t]*'|\A\ufeff""")
