"""A throwaway fitted stage: divide each feature by its mean absolute training value.

Zero-preserving, so it works on sparse data too.  Its statistics (per-feature
sums and counts of the non-missing values) merge by addition; its fitted state
is an array and a row count, so a saved model has both JSON values and an .npz.
"""

import numpy as np

from filterkit.hookspecs import hookimpl
from filterkit.schema import Chunk
from filterkit.stage import Stage


class MeanScale(Stage):
    """Divide each numeric feature by its mean absolute value on the training rows."""

    name = "meanscale"
    summary = "Divide each feature by its mean absolute training value (test fixture)."
    learns = True

    def new_statistics(self):
        width = len(self.features)
        return {"sums": np.zeros(width), "counts": np.zeros(width), "rows": 0}

    def accumulate(self, statistics, chunk):
        values = chunk.dense_values()[:, self.features]
        present = ~np.isnan(values)
        return self.merge(
            statistics,
            {
                "sums": np.where(present, np.abs(values), 0.0).sum(axis=0),
                "counts": present.sum(axis=0).astype(np.float64),
                "rows": chunk.n_rows,
            },
        )

    def merge(self, first, second):
        return {key: first[key] + second[key] for key in first}

    def finalize(self, statistics):
        counts = np.maximum(statistics["counts"], 1.0)
        means = statistics["sums"] / counts
        self.scale = np.where(means > 0, means, 1.0)
        self.rows = int(statistics["rows"])

    def transform(self, chunk):
        divisor = np.ones(chunk.values.shape[1])
        divisor[self.features] = self.scale
        if chunk.is_sparse:
            matrix = chunk.values.tocsr(copy=True)
            matrix.data = matrix.data / divisor[matrix.indices]
            return Chunk(matrix, chunk.text, chunk.weights)
        return Chunk(chunk.values / divisor, chunk.text, chunk.weights)

    def state(self):
        return {"scale": self.scale, "rows": self.rows}

    def load_state(self, state):
        self.scale = np.asarray(state["scale"], dtype=np.float64)
        self.rows = int(state["rows"])


@hookimpl
def register_stages(register):
    register(MeanScale)
