"""filterkit-fasttext: fastText's supervised text format as a filterkit format, a third-party plugin.

A line is a document: its words, and its label as a word with the prefix ``__label__`` (fastText's
``-label`` default), anywhere in the line, as fastText reads it (``__label__sports Final score 3 1``).
Each line becomes a row of two attributes: a string ``text`` (the words but the label, joined by one
space) and a nominal ``class`` (the labels in the order first met), the class last.  What this reader
decides:

* **One label a line.**  filterkit's class is one attribute, so a line with two labels is an error
  naming its line (fastText's multi-label lines need label attributes this example does not make).
* **No label** (a line to predict): the class is missing (``?``).
* **Blank lines** are skipped; a line that is not UTF-8, or ``__label__`` with no name, is an error
  naming its line.
* **With a model's header** (``filterkit apply``, ``predict``) a label must be one of its classes.

``--engine dask`` cuts a file at its line ends (``ranges="lines"``); the format is read only (no
``--to fasttext``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import IO

import numpy as np

from filterkit.plugin import (
    NOMINAL,
    STRING,
    Attribute,
    Chunk,
    FilterkitError,
    Format,
    FormatOptions,
    Layout,
    Schema,
    hookimpl,
)

#: What marks a word as a label (fastText's ``-label`` default).
LABEL_PREFIX = "__label__"
#: The attributes, the class last.
TEXT, CLASS = "text", "class"

#: A line's document: its label (None: none) and its words but the label.
Document = tuple[str | None, str]


class FastTextFormat:
    """Reads fastText's format (see the module's description)."""

    def scan(
        self, opened: Callable[[], IO[bytes]], name: str, options: FormatOptions, known_schema: Schema | None
    ) -> Layout:
        """The labels of every line, in the order first met; with ``known_schema`` (a model's header) each
        must be one of its classes.  The layout's details are each label's code."""
        if known_schema is not None:
            _check_schema(known_schema, name)
        labels: dict[str, int] = {}
        rows = 0
        with opened() as stream:
            for number, (label, _) in _documents(stream, name):
                rows += 1
                if label is not None and label not in labels:
                    if known_schema is not None:
                        _check_label(known_schema, label, name, number)
                    labels[label] = len(labels)
        if known_schema is not None:
            classes = known_schema.attributes[1].labels
            return Layout(known_schema, (), {label: code for code, label in enumerate(classes)}, rows)
        schema = Schema(_relation(name), (Attribute(TEXT, STRING), Attribute(CLASS, NOMINAL, labels=tuple(labels))))
        return Layout(schema, (), labels, rows)

    def scan_reads_rows(self, known_schema: Schema | None) -> bool:
        """Always: the labels are known only once every line is read."""
        return True

    def chunks(self, stream: IO[bytes], name: str, layout: Layout, chunk_rows: int) -> Iterator[Chunk]:
        """The rows as dense chunks of at most ``chunk_rows`` rows."""
        codes = layout.details
        assert isinstance(codes, dict)
        texts: list[str] = []
        classes: list[float] = []
        for _, (label, text) in _documents(stream, name):
            texts.append(text)
            classes.append(np.nan if label is None else codes[label])
            if len(texts) == chunk_rows:
                yield _chunk(texts, classes)
                texts, classes = [], []
        if texts:
            yield _chunk(texts, classes)


def _documents(stream: IO[bytes], name: str) -> Iterator[tuple[int, Document]]:
    """Each line that is not blank, numbered from 1, as its document."""
    for number, line in enumerate(stream, 1):
        try:
            words = line.decode("utf-8").split()
        except UnicodeDecodeError as error:
            raise FilterkitError(f"not UTF-8 text ({error.reason} at byte {error.start + 1})", name, number) from None
        if words:
            yield number, _document(words, name, number)


def _document(words: list[str], name: str, number: int) -> Document:
    """A line's label and text; an error for two labels or a label without a name."""
    labels = [word for word in words if word.startswith(LABEL_PREFIX)]
    if len(labels) > 1:
        raise FilterkitError(
            f"{len(labels)} labels ({', '.join(labels[:3])}): a line has one label, the row's class", name, number
        )
    if labels == [LABEL_PREFIX]:
        raise FilterkitError(f"{LABEL_PREFIX} with no label name after it", name, number)
    text = " ".join(word for word in words if not word.startswith(LABEL_PREFIX))
    return (labels[0][len(LABEL_PREFIX) :] if labels else None), text


def _check_schema(schema: Schema, name: str) -> None:
    """An error unless a model's ``schema`` was read in this format."""
    if [(a.name, a.kind) for a in schema.attributes] != [(TEXT, STRING), (CLASS, NOMINAL)]:
        raise FilterkitError("the model was not trained on fastText data (attributes text and class)", name)


def _check_label(schema: Schema, label: str, name: str, number: int) -> None:
    """An error naming line ``number`` unless ``label`` is one of the classes of a model's ``schema``."""
    classes = schema.attributes[1].labels
    if label not in classes:
        known = ", ".join(classes[:10])
        raise FilterkitError(f"the label {label!r} is not one of the model's classes ({known})", name, number)


def _chunk(texts: list[str], classes: list[float]) -> Chunk:
    """A chunk of rows: the text column holds 0 (present), the class its label's code or NaN."""
    values = np.column_stack([np.zeros(len(texts)), np.array(classes, dtype=np.float64)])
    return Chunk(values, {0: texts})


def _relation(name: str) -> str:
    """The relation: the file's base name without ``.gz`` and its extension (``stdin`` for standard input)."""
    if name.startswith("<"):
        return name.strip("<>")
    base = os.path.basename(name).removesuffix(".gz")
    return base.rsplit(".", 1)[0] if "." in base.strip(".") else base


@hookimpl
def register_formats(register: Callable[[Format], None]) -> None:
    """Register the ``fasttext`` format."""
    register(Format("fasttext", FastTextFormat, aliases=("ft",), suffixes=(".ft", ".fasttext"), ranges="lines"))
