"""``rowcount``: a fitted stage whose statistics are a dataclass (which needs the module in
sys.modules under ``from __future__ import annotations``) and whose state holds a numpy scalar."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from filterkit.hookspecs import hookimpl
from filterkit.stage import Stage


@dataclass(frozen=True)
class Rows:
    count: int


class RowCounter(Stage):
    name = "rowcount"
    summary = "Divide every feature by the number of training rows."
    learns = True

    def new_statistics(self):
        return Rows(0)

    def accumulate(self, statistics, chunk):
        return Rows(statistics.count + chunk.n_rows)

    def merge(self, first, second):
        return Rows(first.count + second.count)

    def finalize(self, statistics):
        self.rows = np.int64(statistics.count)

    def transform(self, chunk):
        values = chunk.dense_values().copy()
        values[:, self.features] /= float(self.rows)
        return type(chunk)(values, chunk.text, chunk.weights)

    def state(self):
        return {"rows": self.rows}

    def load_state(self, state):
        self.rows = np.int64(state["rows"])


@hookimpl
def register_stages(register):
    register(RowCounter)
