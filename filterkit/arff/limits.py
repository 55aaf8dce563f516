"""The ARFF reader's and writer's own bound; the bounds every input shares are :mod:`filterkit.limits`."""

from __future__ import annotations

#: Past this many labels in all nominal columns, the reader's and the writer's compiled label tables
#: (``_speedups.Labels``) are not made, and the labels are looked up and written by Python: a million
#: labels' table would add a third to the header's memory.
MOST_TABLED_LABELS = 1 << 16
