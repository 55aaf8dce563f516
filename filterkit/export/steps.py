"""What a fitted stage is in an exported scorer (:mod:`filterkit.export.c_source`): a stage that can be exported
defines ``exported_step()``, which gives one of these steps (plain data) or raises :class:`NotExportable` saying
why not.  A stage without the method is refused by name.  Each step is an operation the C scorer
(``filterkit/export/scorer.c``) performs with the stage's arithmetic, in its order, so that the scores are
``predict``'s bit for bit."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


class NotExportable(Exception):
    """A fitted stage or classifier that an export cannot express exactly; its message says why, in a phrase."""


@dataclass(frozen=True)
class Words:
    """A document's words (the ``words`` stage): ``source`` the C code of its ``words_count``
    (:func:`filterkit.export.words.words_source`), each word's value its count (``counts``) or 1, made ln(1 + x)
    by ``log_tf`` and times ``idf[word]`` (None: no idf); its column ``first_column`` + the word's number, after
    the input attributes the stage keeps (``kept``: their names, which must be the class or the labels)."""

    source: str
    first_column: int
    counts: bool
    log_tf: bool
    idf: np.ndarray | None
    kept: tuple[str, ...]


@dataclass(frozen=True)
class Shape:
    """Forman et al.'s shaping toward one class per feature (KDD'09 §3) of the columns ``acted`` (ascending; the
    k-th shaped by the k-th knot table), as the compiled kernel ``shape_stored`` computes it: ``tables`` holds
    ``knot_start``, ``knot_value``, ``knot_probability``, ``first_probability``, ``zero_probability``,
    ``default_probability``, ``zero_shift`` (floats and whole numbers) and ``column_nominal`` (bools);
    ``zero_bin`` whether a 0 takes its own bin's probability.  With ``copies`` (one-vs-rest on several classes or
    labels: ``(source, output_column)``, per output column its input column, ascending, and its knot table or −1),
    each input column's value goes to each of its output columns, shaped by that column's table."""

    acted: np.ndarray
    tables: dict
    zero_bin: bool
    copies: tuple[np.ndarray, np.ndarray] | None = None


@dataclass(frozen=True)
class Scale:
    """Each column of ``acted`` times its ``factor`` (a scorer's scaling, or ``--multiply``); with ``exponents``
    (:func:`filterkit.stage.range_scaling`'s inner and outer powers of two, for a range beyond the safe doubles)
    ldexp(ldexp(x, inner) · factor, outer)."""

    acted: np.ndarray
    factor: np.ndarray
    exponents: tuple[np.ndarray, np.ndarray] | None = None


@dataclass(frozen=True)
class Presence:
    """Each column of ``acted`` 1 where it is not 0, missing where it is missing (``binarize``)."""

    acted: np.ndarray


@dataclass(frozen=True)
class Keep:
    """Only the columns ``columns`` (ascending) kept, renumbered 0, 1, … (``select``)."""

    columns: np.ndarray


@dataclass(frozen=True)
class Normalize:
    """The columns ``acted`` divided by their l1 or l2 norm (``order`` 1 or 2; ``l1``, ``l2``)."""

    acted: np.ndarray
    order: int


@dataclass(frozen=True)
class Unchanged:
    """A stage that changes no value of a document (``--no-scale``)."""


Step = Words | Shape | Scale | Presence | Keep | Normalize | Unchanged


def words_step(stage) -> Words:
    """The :class:`Words` step of a fitted ``words`` stage: its tokenizer's C source
    (:func:`filterkit.export.words.words_source`) and its words' values; NotExportable where the tokenizer cannot
    be written in C (:func:`filterkit.export.words.refusal`)."""
    from filterkit.export.words import refusal, words_source

    refused = refusal(stage)
    if refused is not None:
        raise NotExportable(refused)
    kept = tuple(stage.input_schema.attributes[position].name for position in stage.kept)
    idf = np.asarray(stage.idf, dtype=np.float64) if stage.params["idf"] else None
    return Words(words_source(stage), len(stage.kept), stage.params["counts"], stage.params["log_tf"], idf, kept)
