"""The compiled modules, and the one switch between them and the Python and numpy paths.

Every compiled module is imported here and nowhere else, and checked when this module is imported:
one missing, or built from other source than the Python beside it (a checkout pulled without
``pip install -e .``), is a :class:`~filterkit.errors.FilterkitError` naming it, for a library user
as for the console script, not a traceback or wrong output.

A call site with a Python or numpy path beside its compiled one asks :func:`use_compiled` which to
take; :func:`compiled` turns a part of the compiled modules off (the tests compare the two paths
with it, and the outputs are the same bytes either way).  A compiled path with nothing beside it (the row
formatter of every writer, ``_speedups.format_rows``, and the kernels whose numpy twins no input reached) is
compared by the tests with its oracle in ``tests/oracles.py``.  The parts:

* :data:`READING`: the ARFF reader's parsers of plain rows and the CSV reader's tokenizer
  (``_speedups``); off, every row goes through the tokenizer or is read line by line.
* :data:`ARRAYS`: the kernels of the value and presence counts, the exact sums and the shaper's map
  (``_kernels``); off, numpy does their work, as it does anyway for what they decline (weights, missing
  values, log-odds, a scaled interpolation).
"""

from __future__ import annotations

import contextlib
import importlib
import threading
from collections.abc import Iterator
from types import ModuleType

from filterkit.errors import FilterkitError

#: Each compiled module and the ``INTERFACE`` number its C source defines (bumped there with any change to
#: a function's arguments or results).
INTERFACES = {
    "filterkit.arff._speedups": 10,
    "filterkit._kernels": 3,
    "filterkit._words": 12,
    "filterkit.formats._lines": 5,
}

READING = "reading"
ARRAYS = "arrays"
#: The parts :func:`compiled` turns on and off.
PARTS = (READING, ARRAYS)


def checked_module(name: str) -> ModuleType:
    """The compiled module ``name``; FilterkitError unless it imports and has the interface :data:`INTERFACES`
    expects."""
    try:
        module = importlib.import_module(name)
    except ImportError as error:
        raise FilterkitError(
            f"the compiled module {name} cannot be imported ({error}): install filterkit with a C compiler "
            "(pip install . or, in a checkout, pip install -e .)"
        ) from None
    if getattr(module, "INTERFACE", None) != INTERFACES[name]:
        raise FilterkitError(
            f"the compiled module {name} ({module.__file__}) was built from other source than this "
            "filterkit's: rebuild it (pip install -e . in a checkout)"
        )
    return module


#: The ARFF reader's line gathering and parsers of plain rows, and the row formatter of every writer.
speedups = checked_module("filterkit.arff._speedups")
#: The array kernels: key tallies, radix sorts and merges, a chunk's entries and ranges, shaping, row norms.
arrays = checked_module("filterkit._kernels")
#: The ``words`` stage's cutting and counting of ASCII documents.
words = checked_module("filterkit._words")
#: The svmlight format's line parser and writer.
lines = checked_module("filterkit.formats._lines")

#: The shaper's map of stored values and the L1/L2 row normalizer (the plugin API exports them).
shape_stored = arrays.shape_stored
normalize_stored = arrays.normalize_stored
#: The ``words`` stage's vocabulary, its (class, word) pair sums and its counter (the plugin API exports them).
WordVocabulary = words.Vocabulary
WordTally = words.Tally
count_words = words.count
hash_columns = words.hash_columns
renumber_words = words.renumber
join_kept_words = words.join_kept
#: bns's inverse normal distribution function, scipy.special.ndtri's values bit for bit (the plugin API exports it).
ndtri = arrays.ndtri

#: The parts :func:`compiled` turned off; replaced whole, never changed in place, so a reader in another
#: thread sees one state or the other.
_switched_off: frozenset[str] = frozenset()
#: The blocks of :func:`compiled` not yet ended, in the order they began: each one's switch and parts.
_open_blocks: list[tuple[bool, frozenset[str]]] = []
_switching = threading.Lock()


def use_compiled(part: str) -> bool:
    """Whether the compiled modules' ``part`` (one of :data:`PARTS`) is on: it is unless :func:`compiled`
    turned it off."""
    return part not in _switched_off


def _switched_off_by_open_blocks() -> frozenset[str]:
    """The parts off once every open block's switch is applied in the order the blocks began."""
    switched_off: frozenset[str] = frozenset()
    for enabled, parts in _open_blocks:
        switched_off = switched_off - parts if enabled else switched_off | parts
    return switched_off


@contextlib.contextmanager
def compiled(enabled: bool, *parts: str) -> Iterator[None]:
    """Within the block, the compiled ``parts`` (every part of :data:`PARTS` if none is named) on or off for
    the whole process, every thread included; once the block ends, each part is as the blocks still open
    (of any thread, in the order they began) leave it, so blocks of two threads may end in either order."""
    global _switched_off
    named = frozenset(parts or PARTS)
    if not named <= set(PARTS):
        raise ValueError(f"no compiled part {sorted(named - set(PARTS))}: the parts are {', '.join(PARTS)}")
    block = (enabled, named)
    with _switching:
        _open_blocks.append(block)
        _switched_off = _switched_off_by_open_blocks()
    try:
        yield
    finally:
        with _switching:
            _open_blocks[:] = [open_block for open_block in _open_blocks if open_block is not block]
            _switched_off = _switched_off_by_open_blocks()
