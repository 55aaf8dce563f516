"""Short Python versions of what the compiled modules do, that the tests compare them with.

The compiled modules (filterkit/arff/_speedups.c, filterkit/_kernels.c) are the package's fast
paths; where the package has no Python path beside one (the Python paths ``filterkit.kernels.compiled``
switches to are the package's own), the tests check it against these.
"""

from __future__ import annotations

import numpy as np


def gather_rows(block: bytes, start: int, rows: int, size: int, line_bytes: int):
    """What ``_speedups.gather_rows`` gives: the stripped data rows of ``block`` from byte
    ``start`` (blank lines and ``%`` comments left out) until ``rows`` rows or ``size`` bytes,
    as ``(text, lines, stop, seen, too_long)``."""
    gathered: list[bytes] = []
    line_of: list[int] = []
    at, seen, held = start, 0, 0
    while at < len(block):
        end = block.index(b"\n", at)
        if end - at > line_bytes:
            return b"\n".join(gathered), np.array(line_of, np.int64).tobytes(), at, seen, True
        line = block[at:end].strip()
        at = end + 1
        seen += 1
        if not line or line[0] == 37:  # '%'
            continue
        gathered.append(line)
        line_of.append(seen - 1)
        held += len(line) + 1
        if len(gathered) == rows or held >= size:
            break
    return b"\n".join(gathered), np.array(line_of, np.int64).tobytes(), at, seen, False


def entry_arrays(counts) -> dict:
    """A ``ValueCounts``' entries (:meth:`~filterkit.statistics.ValueCounts.entries`) by name, the sums rounded."""
    feature, value, label, sums = counts.entries()
    return {"feature": feature, "value": value, "label": label, "count": sums.to_float()}


def java_order(word: str) -> bytes:
    """The sort key that orders strings as Java's ``String.compareTo`` (by UTF-16 code units), which the
    ``words`` vocabulary's compiled ``java_order`` sorts by."""
    return word.encode("utf-16-be", "surrogatepass")
