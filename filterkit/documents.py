"""filterkit's documents: a data set's summary (``info``), an evaluation's result (``evaluate``) and a row's
explanation (``explain``), as JSON text (:func:`as_json`) or with their texts made safe for a terminal
(:func:`for_terminal`)."""

from __future__ import annotations

import json
import math

import numpy as np

from filterkit.arff.tokens import one_line


def as_json(document: dict) -> str:
    """A document (the summary, an evaluation's) as JSON text: numpy numbers as numbers, one that is
    not finite (an undefined score or AUC) as null."""
    return json.dumps(_json_ready(document), indent=1, allow_nan=False, default=np.generic.item)


def _json_ready(value):
    if isinstance(value, dict):
        return {key: _json_ready(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_json_ready(item) for item in value]
    return None if isinstance(value, float) and not math.isfinite(value) else value


def for_terminal(document):
    """``document`` with every text (keys too) as a person's terminal may show it: its control and line-ending
    characters written as Python literals (``\\x1b[2J``, :func:`filterkit.arff.tokens.one_line`), so that a
    word, label or name read from a file cannot move the cursor, clear the screen or set the window's title."""
    if isinstance(document, str):
        return one_line(document)
    if isinstance(document, dict):
        return {for_terminal(key): for_terminal(value) for key, value in document.items()}
    if isinstance(document, (list, tuple)):
        return type(document)(for_terminal(item) for item in document)
    return document
