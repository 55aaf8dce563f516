"""Short Python versions of what the compiled modules do, that the tests compare them with.

The compiled modules (filterkit/arff/_speedups.c, filterkit/_kernels.c) are the only path the
package runs; where no other oracle exists (liac-arff, the reader's tokenizer, repr, plain
numpy), the tests check them against these.
"""

from __future__ import annotations

import numpy as np

from filterkit.arff import reader


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


def _declined(*_arguments):
    raise reader._NotPlain


def tokenizer_only(monkeypatch) -> None:
    """Make the reader read every row with its tokenizer (the compiled parsers decline all)."""
    monkeypatch.setattr(reader, "_parse_sparse_plain", _declined)
    monkeypatch.setattr(reader, "_parse_dense_plain", _declined)
