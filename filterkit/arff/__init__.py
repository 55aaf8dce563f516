"""ARFF input and output: a streaming reader, a writer and liac-arff conversions.

Each name is imported from its module on first use: the liac-arff conversions (:mod:`filterkit.arff.liac`)
are not loaded by reading and writing ARFF, and importing the compiled ``filterkit.arff._speedups``
(which :mod:`filterkit.kernels` does, and the reader imports the kernels) runs no reader.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

__all__ = ["ArffReader", "ArffWriter", "from_liac", "read_arff", "to_liac", "write_arff"]

#: Each name's module.
_HOMES = {
    "ArffReader": "reader",
    "read_arff": "reader",
    "ArffWriter": "writer",
    "write_arff": "writer",
    "from_liac": "liac",
    "to_liac": "liac",
}

if TYPE_CHECKING:
    from filterkit.arff.liac import from_liac, to_liac
    from filterkit.arff.reader import ArffReader, read_arff
    from filterkit.arff.writer import ArffWriter, write_arff
else:
    # Hidden from type checkers, which would otherwise take every name of the package as defined.
    def __getattr__(name: str):
        """A name of ``__all__``, importing its module on first use."""
        if name in _HOMES:
            return getattr(importlib.import_module(f"filterkit.arff.{_HOMES[name]}"), name)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
