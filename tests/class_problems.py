"""Random k-class problems for the tests of per-class offsets (``--multiclass``'s cuts on the macro-F1 and on a
cost matrix): a module of its own, so that both test files draw them by the same code."""

from __future__ import annotations

import numpy as np


def class_problem(seed: int, rows: tuple[int, int], widths: tuple[int, int]):
    """The generator of ``seed`` (for the draws that follow), and what it drew: a number of rows in ``rows`` and
    of classes in ``widths`` (each [low, high)), each row's class, and scores (rows × classes) in [0, 1) with up to
    0.5 added to the row's own class's; on odd seeds the scores rounded to one decimal, which makes ties."""
    generator = np.random.default_rng(seed)
    n_rows, width = int(generator.integers(*rows)), int(generator.integers(*widths))
    classes = generator.integers(0, width, n_rows)
    scores = generator.random((n_rows, width))
    scores[np.arange(n_rows), classes] += generator.random(n_rows) * 0.5
    if seed % 2:
        scores = np.round(scores, 1)  # ties
    return generator, classes, scores
