"""The JSON text of filterkit's documents: a data set's summary (``info --json``) and an evaluation's
result (``evaluate --json``), both written by :func:`as_json`."""

from __future__ import annotations

import json
import math

import numpy as np


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
