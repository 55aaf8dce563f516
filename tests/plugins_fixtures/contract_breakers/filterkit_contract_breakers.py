"""Stages that each break one rule of the stage contract (a test fixture, never for real use).

The first group breaks a rule checked on every chunk while a chain runs
(:mod:`filterkit.contract`); the second passes those checks but breaks a rule
only :func:`filterkit.testing.check_stage` can see.  Two metrics break the
metric contract (a score per feature, no exception), two classifiers the
classifier contract (one number per test row, no exception).  ``BREAKS`` maps each
stage's name to the rule ``check_stage`` names when it fails.
"""

import numpy as np
import scipy.sparse as sp

from filterkit.classifier import Classifier
from filterkit.hookspecs import hookimpl
from filterkit.metrics import Metric
from filterkit.schema import Chunk
from filterkit.stage import Stage, scale_features


class DropColumn(Stage):
    """Drop the first feature's column but keep declaring it (later indices shift by one)."""

    name = "dropcolumn"

    def transform(self, chunk):
        keep = [j for j in range(chunk.values.shape[1]) if j != self.features[0]]
        values = chunk.values[:, keep]
        return Chunk(values.tocsr() if sp.issparse(values) else values, chunk.text, chunk.weights)


class AddColumn(Stage):
    """Append a column of ones the output schema does not declare."""

    name = "addcolumn"

    def transform(self, chunk):
        ones = np.ones((chunk.n_rows, 1))
        if chunk.is_sparse:
            return Chunk(sp.hstack([chunk.values, sp.csr_matrix(ones)], format="csr"), chunk.text, chunk.weights)
        return Chunk(np.hstack([chunk.values, ones]), chunk.text, chunk.weights)


class DropRow(Stage):
    """Drop the last row of every chunk without declaring filters_rows."""

    name = "droprow"

    def transform(self, chunk):
        return Chunk(
            chunk.values[:-1],
            {c: t[:-1] for c, t in chunk.text.items()},
            None if chunk.weights is None else chunk.weights[:-1],
        )


class SetClass(Stage):
    """Overwrite every row's class with the first label, without declaring changes_class."""

    name = "setclass"

    def transform(self, chunk):
        values = chunk.dense_values().copy()
        values[:, self.context.class_index] = 0.0
        return Chunk(sp.csr_matrix(values) if chunk.is_sparse else values, chunk.text, chunk.weights)


class BadLabel(Stage):
    """Declare that it changes the class, then write a label code the class does not have."""

    name = "badlabel"
    changes_class = True

    def transform(self, chunk):
        values = chunk.dense_values().copy()
        values[:, self.context.class_index] = 99.0
        return Chunk(sp.csr_matrix(values) if chunk.is_sparse else values, chunk.text, chunk.weights)


class DropClass(Stage):
    """Leave the class attribute out of the output schema (and the rows)."""

    name = "dropclass"

    def output_schema(self):
        schema = self.input_schema
        return schema.with_attributes(a for i, a in enumerate(schema.attributes) if i != self.context.class_index)

    def transform(self, chunk):
        keep = [j for j in range(chunk.values.shape[1]) if j != self.context.class_index]
        values = chunk.values[:, keep]
        return Chunk(values.tocsr() if sp.issparse(values) else values, chunk.text, chunk.weights)


class ToArray(Stage):
    """Return the bare value matrix instead of a Chunk."""

    name = "toarray"

    def transform(self, chunk):
        return chunk.dense_values()


class ToNone(Stage):
    """Return nothing."""

    name = "tonone"

    def transform(self, chunk):
        return None


class Float32(Stage):
    """Return the values as float32."""

    name = "float32"

    def transform(self, chunk):
        return Chunk(chunk.values.astype(np.float32), chunk.text, chunk.weights)


class ToCoo(Stage):
    """Return sparse values as a COO matrix."""

    name = "tocoo"

    def transform(self, chunk):
        return Chunk(sp.coo_matrix(chunk.values), chunk.text, chunk.weights)


class LoseText(Stage):
    """Forget the text side columns of string attributes."""

    name = "losetext"

    def transform(self, chunk):
        return Chunk(chunk.values, {}, chunk.weights)


class ChunkMax(Stage):
    """Divide each feature by its maximum within the chunk (so the output depends on the chunk size)."""

    name = "chunkmax"

    def transform(self, chunk):
        peak = np.fmax.reduce(np.abs(chunk.dense_values()[:, self.features]), axis=0)
        return scale_features(chunk, self.features, 1.0 / np.where(peak > 0, peak, 1.0))


class Noisy(Stage):
    """Add fresh random noise to every non-zero value (so two runs differ)."""

    name = "noisy"

    def transform(self, chunk):
        return scale_features(chunk, self.features, 1.0 + np.random.default_rng().random(len(self.features)))


class Fussy(Stage):
    """Raises a plain exception while checking its options."""

    name = "fussy"

    def check_params(self):
        raise KeyError("no such setting")

    def transform(self, chunk):
        return chunk


class SparseDoubles(Stage):
    """Double the features of sparse chunks only (so the two row forms disagree)."""

    name = "sparsedoubles"

    def transform(self, chunk):
        factor = 2.0 if chunk.is_sparse else 1.0
        return scale_features(chunk, self.features, np.full(len(self.features), factor))


class InPlace(Stage):
    """Negate the features in the input chunk itself (a transform that is not pure)."""

    name = "inplace"

    def transform(self, chunk):
        if chunk.is_sparse:
            chunk.values.data *= -1.0
        else:
            chunk.values[:, self.features] *= -1.0
        return chunk


class ShiftZeros(Stage):
    """Declare zero preservation, then add 1 to every feature."""

    name = "shiftzeros"

    def preserves_zeros(self):
        return True

    def transform(self, chunk):
        return scale_features(chunk, self.features, np.ones(len(self.features)), -np.ones(len(self.features)))


class FirstWins(Stage):
    """A fitted stage whose ``merge`` keeps the first part's maximum only (so merge order matters)."""

    name = "firstwins"
    learns = True

    def new_statistics(self):
        return None

    def accumulate(self, statistics, chunk):
        peak = np.fmax.reduce(np.abs(chunk.dense_values()[:, self.features]), axis=0)
        return peak if statistics is None else np.fmax(statistics, peak)

    def merge(self, first, second):
        return second if first is None else first

    def finalize(self, statistics):
        self.peak = np.where(statistics > 0, statistics, 1.0)  # NaN (never seen) is not > 0

    def transform(self, chunk):
        return scale_features(chunk, self.features, 1.0 / self.peak)

    def state(self):
        return {"peak": self.peak}

    def load_state(self, state):
        self.peak = np.asarray(state["peak"], dtype=np.float64)


class Forgetful(FirstWins):
    """Merges correctly, but its saved state loads as all ones (a model gives other output)."""

    name = "forgetful"

    def merge(self, first, second):
        return np.fmax(first, second)

    def load_state(self, state):
        self.peak = np.ones_like(state["peak"])


#: Each stage's name, and the rule check_stage reports it breaking.
BREAKS = {
    "dropcolumn": "output contract",
    "addcolumn": "output contract",
    "droprow": "output contract",
    "setclass": "output contract",
    "badlabel": "output contract",
    "dropclass": "output contract",
    "toarray": "output contract",
    "tonone": "output contract",
    "float32": "output contract",
    "tocoo": "output contract",
    "losetext": "output contract",
    "chunkmax": "chunk size",
    "noisy": "determinism",
    "sparsedoubles": "dense and sparse",
    "fussy": "declaration",
    "inplace": "pure transform",
    "shiftzeros": "zero preservation",
    "firstwins": "merge order",
    "forgetful": "model round trip",
}

STAGES = (
    DropColumn,
    AddColumn,
    DropRow,
    SetClass,
    BadLabel,
    DropClass,
    ToArray,
    ToNone,
    Float32,
    ToCoo,
    LoseText,
    ChunkMax,
    Noisy,
    SparseDoubles,
    InPlace,
    Fussy,
    ShiftZeros,
    FirstWins,
    Forgetful,
)


class Crashy(Classifier):
    """Raises while fitting."""

    name = "crashy"

    def fit(self, features, targets, seed):
        raise RuntimeError("cannot learn today")


class ShortScore(Classifier):
    """Scores one row too few."""

    name = "shortscore"

    def fit(self, features, targets, seed):
        return self

    def score(self, features):
        return np.zeros(features.shape[0] - 1)

    def predict(self, features):
        return np.zeros(features.shape[0], dtype=bool)


@hookimpl
def register_classifiers(register):
    register(Crashy)
    register(ShortScore)


def crashing_metric(tp, fp, pos, neg):
    """Raises on any counts."""
    raise ZeroDivisionError("no score today")


#: Metrics breaking the metric contract: one raises, one returns a single number for all features.
METRICS = (
    Metric("crashing", crashing_metric, "Raises."),
    Metric("scalar", lambda tp, fp, pos, neg: 1.0, "One score for every feature."),
)


@hookimpl
def register_metrics(register):
    for metric in METRICS:
        register(metric)


@hookimpl
def register_stages(register):
    for stage in STAGES:
        register(stage)
