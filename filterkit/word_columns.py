"""The names of what ``words`` (:mod:`filterkit_plugins.words`) reads and writes: the error for an input
that holds no text, each kept word's attribute name, and every hashed column's (``--hash``), by its most
frequent training token or by its number (``--hash-names number``), and the refusal of more hashed columns than
filterkit reads back."""

from __future__ import annotations

import itertools

import numpy as np

from filterkit.errors import FilterkitError
from filterkit.limits import VARIABLES, Limits
from filterkit.schema import NOMINAL, shown_name

#: The attributes the error for an input without text names (then their count).
ATTRIBUTES_SHOWN = 6


def no_text_message(schema, class_index: int | None, attributes: str) -> str:
    """The error for an input in which ``--attributes`` names no string attribute: the attributes it
    holds, by kind, and how to make one text."""
    described = [
        f"{shown_name(a.name)} {a.kind}"
        + (f" ({len(a.labels):,} labels)" if a.kind == NOMINAL else "")
        + (" (the class)" if i == class_index else "")
        for i, a in enumerate(schema.attributes[:ATTRIBUTES_SHOWN])
    ]
    more = f", … ({len(schema):,} attributes)" if len(schema) > ATTRIBUTES_SHOWN else ""
    selected = "" if attributes == "first-last" else f" among --attributes {attributes}"
    return (
        f"stage 'words' finds no string attribute to turn into words{selected}: the input holds "
        f"{', '.join(described) or 'no attribute'}{more}; read a CSV or JSON Lines column as text with "
        "--text COLUMN (an ARFF file declares it 'string'), or choose string attributes with --attributes"
    )


def word_names(prefix: str, words: list[str], taken: set[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """Each word's attribute name, ``prefix + word``, and the (name, new name) of those renamed: a name
    in ``taken`` (another attribute's) becomes ``name_1``, or ``name_2`` … the first that no attribute
    has.  A name depends only on the word and the names, not on the order the words were met."""
    names = [prefix + word for word in words] if prefix else list(words)
    if taken.isdisjoint(names):  # the common case, by one C-level pass (--hash 16's 44,000 placeholders: 3 ms less)
        return names, []
    clashing = [k for k, name in enumerate(names) if name in taken]
    used = taken.union(names)
    renamed = []
    for k in clashing:
        name = next(f"{names[k]}_{n}" for n in itertools.count(1) if f"{names[k]}_{n}" not in used)
        used.add(name)
        renamed.append((names[k], name))
        names[k] = name
    return names, renamed


def refuse_too_many_columns(bits: int, others: int) -> None:
    """Before any column is named: a one-line FilterkitError naming ``--hash`` where its 2**``bits`` columns and
    the ``others`` attributes the stage keeps are more attributes than filterkit reads back
    (:class:`~filterkit.limits.Limits`; ``--hash 24`` named 16.8 M columns, seconds and gigabytes, before
    :func:`~filterkit.schema.refuse_unreadable_output` refused them)."""
    limit, attributes = Limits.from_environment().attributes, (1 << bits) + others
    if attributes > limit:
        raise FilterkitError(
            f"option --hash {bits}: {1 << bits:,} columns and the attributes kept make {attributes:,}, more than the "
            f"{limit:,} attributes filterkit reads back (set {VARIABLES['attributes']} to allow more): hash into "
            "fewer bits"
        )


def hashed_column_names(
    prefix: str, n_columns: int, columns: np.ndarray, names: list[str], taken: set[str]
) -> tuple[list[str], list[tuple[str, str]]]:
    """Every one of ``n_columns`` hashed columns' attribute name: at ``columns`` (ascending) their tokens'
    ``names``, at every other column ``PREFIX#COLUMN`` (renamed as :func:`word_names` renames, if taken by
    another attribute or a token's name), and the (name, new name) of each ``PREFIX#COLUMN`` renamed because
    another attribute has its name (which the stage warns of, as of a word's; not one a token's name took).  With
    no ``columns`` (``--hash-names number``), every column's."""
    held = np.zeros(n_columns, dtype=bool)
    held[columns] = True
    unused = np.flatnonzero(~held)
    placeholders, renamed = word_names(prefix, [f"#{column}" for column in unused.tolist()], taken.union(names))
    every = np.empty(n_columns, dtype=object)  # placed by numpy: a dict per column took twice the time
    every[columns] = names
    every[unused] = placeholders
    return every.tolist(), [(name, new) for name, new in renamed if name in taken]
