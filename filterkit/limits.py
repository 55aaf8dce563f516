"""Bounds on what one input (ARFF, CSV, svmlight, JSON Lines, Parquet, a folder) may ask of memory, each with an
environment override.

A crafted or broken file (``/dev/zero``, a gzip bomb of blanks, a header of millions
of labels) must end in a clear error, not in gigabytes and a ``MemoryError``.  Every
bound is read from the environment when a reader starts, so a user can raise it for
one run; a value that is not a positive integer is an error naming the variable.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from filterkit.errors import FilterkitError

#: Longest accepted environment value: 18 digits stay far below int()'s digit limit.
_MOST_DIGITS = 18


@dataclass(frozen=True)
class Limits:
    """The bounds one reader or header parser applies."""

    #: Bytes in one line (its end excluded): a longer line is refused before it is held whole.
    line_bytes: int = 64 << 20
    #: Bytes of header, ``@relation`` to ``@data``.
    header_bytes: int = 256 << 20
    #: Attributes a header may declare (each costs a few hundred bytes).
    attributes: int = 1_000_000
    #: Labels one nominal attribute may declare (each costs about 250 bytes).
    labels: int = 1_000_000
    #: Bytes of row text in one chunk (which ends at ``chunk_rows`` rows or this, whichever comes first):
    #: a chunk's work holds ~30 times its text (grain: 10,000 rows, 260 MiB; 1 MiB of rows, 130 MiB).
    chunk_bytes: int = 1 << 20
    #: Relational attributes inside one another.
    nesting: int = 100

    @classmethod
    def from_environment(cls) -> "Limits":
        """The defaults, each replaced by its ``FILTERKIT_MAX_*`` variable where set."""
        defaults = cls()
        return cls(
            **{field: _positive_integer(variable, getattr(defaults, field)) for field, variable in VARIABLES.items()}
        )


#: The environment variable of each bound.
VARIABLES = {
    "line_bytes": "FILTERKIT_MAX_LINE_BYTES",
    "header_bytes": "FILTERKIT_MAX_HEADER_BYTES",
    "attributes": "FILTERKIT_MAX_ATTRIBUTES",
    "labels": "FILTERKIT_MAX_LABELS",
    "chunk_bytes": "FILTERKIT_MAX_CHUNK_BYTES",
    "nesting": "FILTERKIT_MAX_NESTING",
}


def _positive_integer(variable: str, default: int) -> int:
    text = os.environ.get(variable)
    if text is None:
        return default
    digits = text.strip()
    if not (digits.isascii() and digits.isdigit() and len(digits) <= _MOST_DIGITS and int(digits) > 0):
        raise FilterkitError(f"{variable} must be a positive integer (the default is {default}), not {text!r}")
    return int(digits)
