"""ARFF input and output: a streaming reader, a writer and liac-arff conversions.

The liac-arff conversions (:mod:`filterkit.arff.liac`) are imported on first use, so
reading and writing ARFF does not load them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from filterkit.arff.reader import ArffReader, read_arff
from filterkit.arff.writer import ArffWriter, write_arff

__all__ = ["ArffReader", "ArffWriter", "from_liac", "read_arff", "to_liac", "write_arff"]

if TYPE_CHECKING:
    from filterkit.arff.liac import from_liac, to_liac
else:
    # Hidden from type checkers, which would otherwise take every name of the package as defined.
    def __getattr__(name: str):
        """``from_liac`` and ``to_liac``, importing :mod:`filterkit.arff.liac` on first use."""
        if name in ("from_liac", "to_liac"):
            return getattr(importlib.import_module("filterkit.arff.liac"), name)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
