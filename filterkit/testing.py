"""A contract kit for plugin authors: :func:`check_stage`, and helpers for a plugin's own tests.

``check_stage(MyStage, **options)`` runs a stage class through the stage contract, in the spirit of
scikit-learn's ``check_estimator``, on generated data, two small real files shipped with filterkit
(Fisher's iris; 60 OHSUMED abstracts as sparse word counts) and any ARFF files given as ``data``,
each read dense and sparse.  It raises :class:`StageCheckError` naming the first rule that broke:

- ``declaration``: a :class:`~filterkit.stage.Stage` subclass with a name, a summary and valid
  options, that can be made with ``options``;
- ``output contract``: every chunk it returns passes the checks every run makes
  (:mod:`filterkit.contract`);
- ``pure transform``: ``accumulate`` and ``transform`` leave the chunk they are given unchanged;
- ``determinism``: two runs give the same bytes;
- ``chunk size``: the same bytes with rows one, seven or all at a time;
- ``dense and sparse``: the same values from both forms of the same rows;
- ``zero preservation``: where :meth:`~filterkit.stage.Stage.preserves_zeros` says so, every 0 of an
  acted-on numeric feature stays 0;
- ``merge order`` (a stage that learns): statistics of two halves merged either way round give the
  output of one pass (a one-row file's row merged with the statistics of no rows);
- ``model round trip``: the stage saved as a model and loaded gives the same bytes (a stage that learns nothing
  may keep state too: words' stop words).

Each data set is given as the stage says it accepts (:class:`~filterkit.stage.Accepts`): a stage that
accepts no negative value gets the magnitudes of the numeric values.  A stage may refuse a data set
with a :class:`~filterkit.errors.FilterkitError` but must accept one;
a crash (any other exception) breaks the contract.  For a plugin's own tests, :func:`run_filterkit`
runs the command line in the test's process and :func:`read_output` reads what it wrote.
"""

from __future__ import annotations

import contextlib
import copy
import io
import sys
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Iterator
from unittest import mock

import numpy as np
import scipy.sparse as sp

from filterkit.arff import read_arff
from filterkit.arff.writer import write_arff
from filterkit.contract import ContractError
from filterkit.errors import FilterkitError
from filterkit.model import load_chain, save_model
from filterkit.plugins import Registered, Registry, check_stage_class
from filterkit.runner import Chain
from filterkit.schema import NOMINAL, NUMERIC, STRING, Attribute, Chunk, Schema
from filterkit.stage import Stage

#: The rules of :func:`check_stage`, in the order they are checked.
RULES = (
    "declaration",
    "output contract",
    "pure transform",
    "determinism",
    "chunk size",
    "dense and sparse",
    "zero preservation",
    "merge order",
    "model round trip",
)

#: The real files shipped for the check: ``filterkit/data/``.
SHIPPED_DATA = ("iris.arff", "oh0_sample.arff")


class StageCheckError(AssertionError):
    """A stage broke ``rule`` of the contract (``str()`` says how, on which data)."""

    def __init__(self, stage_class: type, rule: str, data: str, what: str):
        super().__init__(f"check_stage({stage_class.__qualname__}): rule '{rule}' broke on {data}: {what}")
        self.rule = rule
        self.data = data


@dataclass(frozen=True)
class _DataSet:
    """Rows to check a stage on, with a name for messages."""

    name: str
    schema: Schema
    chunk: Chunk


def check_stage(
    stage_class: type[Stage], data: tuple[str | Path, ...] = (), positive: str | None = None, **options: Any
) -> list[str]:
    """Run ``stage_class(**options)`` through every rule of the stage contract (module docstring), also
    on the ARFF files ``data`` (class last), with ``positive`` as ``--positive``.  Returns the names of
    the data sets the stage accepted; raises :class:`StageCheckError` naming the first broken rule."""
    problem = check_stage_class(stage_class)
    if problem is not None:
        raise StageCheckError(stage_class, "declaration", "its class", problem)
    try:
        accepts = stage_class(**options).accepts
    except FilterkitError as error:
        raise StageCheckError(stage_class, "declaration", "its options", str(error)) from error
    except Exception as error:
        raise StageCheckError(
            stage_class, "declaration", "its options", f"making it crashed: {type(error).__name__}: {error}"
        ) from error
    checker = _Checker(stage_class, options, positive)
    accepted = [data_set.name for data_set in _data_sets(data, accepts.non_negative) if checker.check(data_set)]
    if not accepted:
        raise StageCheckError(
            stage_class, "output contract", "every data set", "it refused them all: " + "; ".join(checker.refusals)
        )
    return accepted


def _data_sets(extra: tuple[str | Path, ...], non_negative: bool = False) -> Iterator[_DataSet]:
    """Generated rows, the shipped real files and ``extra`` files, each dense and sparse; with
    ``non_negative`` (a stage that accepts no negative value) the magnitudes of their numeric values."""
    sources = [("generated rows", *generated_rows())]
    for name in SHIPPED_DATA:
        with resources.as_file(resources.files("filterkit") / "data" / name) as path:
            sources.append((name, *read_arff(path)))
    sources += [(str(path), *read_arff(path)) for path in extra]
    for name, schema, chunk in sources:
        dense = chunk.dense_values()
        if non_negative:
            dense = np.where([attribute.is_numeric for attribute in schema.attributes], np.abs(dense), dense)
        yield _DataSet(f"{name} (dense)", schema, Chunk(dense.copy(), chunk.text, chunk.weights))
        yield _DataSet(f"{name} (sparse)", schema, Chunk(sp.csr_matrix(dense), chunk.text, chunk.weights))


def generated_rows(n_rows: int = 48, seed: int = 7) -> tuple[Schema, Chunk]:
    """A small two-class data set with counts mostly 0, reals, missing values, a nominal, a string, weights."""
    rng = np.random.default_rng(seed)
    label = np.arange(n_rows) % 3 == 0
    counts = rng.poisson(np.where(label, 2.0, 0.4)[:, None] * [1.0, 0.5], (n_rows, 2))
    real = rng.normal(np.where(label, 1.0, -0.5), 1.0).round(3)
    gappy = np.where(rng.random(n_rows) < 0.2, np.nan, rng.integers(0, 4, n_rows))
    colour = rng.integers(0, 3, n_rows)
    values = np.column_stack([counts, real, gappy, colour, np.zeros(n_rows), np.where(label, 0, 1)]).astype(np.float64)
    schema = Schema(
        "generated",
        (
            Attribute("count1", NUMERIC, declared_type="integer"),
            Attribute("count2", NUMERIC, declared_type="integer"),
            Attribute("real", NUMERIC, declared_type="real"),
            Attribute("gappy", NUMERIC, declared_type="numeric"),
            Attribute("colour", NOMINAL, labels=("red", "green", "blue")),
            Attribute("note", STRING),
            Attribute("class", NOMINAL, labels=("yes", "no")),
        ),
    )
    notes = [f"row {i}" if i % 5 else "" for i in range(n_rows)]
    weights = np.where(np.arange(n_rows) % 4 == 0, 2.0, 1.0)
    weights[5] = 0.5
    return schema, Chunk(values, {5: notes}, weights)


class _RowsSource:
    """Rows in memory, served as copies in chunks of ``chunk_rows`` (None: all), remembering what it gave."""

    def __init__(self, data_set: _DataSet, chunk_rows: int | None):
        self.schema = data_set.schema
        self.pieces = list(_pieces(data_set.chunk, chunk_rows))
        self.given: list[tuple[Chunk, Chunk]] = []

    def chunks(self) -> Iterator[Chunk]:
        """Fresh copies of the chunks."""
        for piece in self.pieces:
            served = copy.deepcopy(piece)
            self.given.append((piece, served))
            yield served

    def untouched(self) -> bool:
        """True when every chunk served still equals the original."""
        return all(_same_chunk(original, served) for original, served in self.given)


def _pieces(chunk: Chunk, chunk_rows: int | None) -> Iterator[Chunk]:
    step = chunk.n_rows if chunk_rows is None else chunk_rows
    for start in range(0, chunk.n_rows, max(step, 1)):
        piece = copy.deepcopy(chunk.rows(start, min(start + step, chunk.n_rows)))
        if piece.is_sparse:  # as the ARFF reader hands them on: CSR arrays, the matrix built only if the stage asks
            piece = Chunk.from_csr(*piece.csr()[:3], piece.shape, piece.text, piece.weights)
        yield piece


def _same_chunk(first: Chunk, second: Chunk) -> bool:
    """Whether two chunks hold the same rows, text and weights in the same form."""
    if first.is_sparse != second.is_sparse or first.text != second.text:
        return False
    if first.weights is None or second.weights is None:
        same_weights = first.weights is second.weights
    else:
        same_weights = np.array_equal(first.weights, second.weights, equal_nan=True)
    return same_weights and np.array_equal(first.dense_values(), second.dense_values(), equal_nan=True)


class _Checker:
    """The rules after ``declaration``, for one stage class and its options."""

    def __init__(self, stage_class: type[Stage], options: dict, positive: str | None):
        self.stage_class = stage_class
        self.options = options
        self.positive = positive
        self.refusals: list[str] = []

    def fail(self, rule: str, data_set: _DataSet, what: str):
        raise StageCheckError(self.stage_class, rule, data_set.name, what)

    def check(self, data_set: _DataSet) -> bool:
        """Every rule on ``data_set``; False when the stage refuses it."""
        try:
            source = _RowsSource(data_set, None)
            chain, output = self.run(source)
        except ContractError as error:
            self.fail("output contract", data_set, str(error))
        except FilterkitError as error:
            if error.__cause__ is not None:
                self.fail("output contract", data_set, f"it crashed: {error}")
            self.refusals.append(f"{data_set.name}: {error}")
            return False
        if not source.untouched():
            self.fail("pure transform", data_set, "a chunk it was given was changed")
        if self.run(_RowsSource(data_set, None))[1] != output:
            self.fail("determinism", data_set, "a second run gave other bytes")
        for chunk_rows in (1, 7):
            if self.run(_RowsSource(data_set, chunk_rows))[1] != output:
                self.fail("chunk size", data_set, f"chunks of {chunk_rows} rows gave other bytes than all rows at once")
        self.check_forms(data_set, output)
        self.check_zeros(data_set, chain, output)
        if chain.stages[0].learns:
            self.check_merge(data_set, output)
        self.check_model(data_set, chain, output)  # a stage that learns nothing may keep state (words' stop words)
        return True

    def run(self, source, fit_with=None):
        """A fresh stage fitted on ``source`` (or by ``fit_with``) and applied to it: (chain, output bytes)."""
        chain = Chain([self.stage_class(**self.options)], class_spec="last", positive=self.positive)
        if fit_with is None:
            chain.fit(source)
        else:
            chain.fit_with(source.schema, fit_with)
        return chain, _written(chain, source)

    def check_forms(self, data_set: _DataSet, output: bytes) -> None:
        chunk = data_set.chunk  # dense_values() is a copy for a sparse chunk
        other_values = chunk.dense_values() if chunk.is_sparse else sp.csr_matrix(chunk.values)
        other = _DataSet(data_set.name, data_set.schema, Chunk(other_values, chunk.text, chunk.weights))
        try:
            _, other_output = self.run(_RowsSource(other, None))
        except FilterkitError as error:
            self.fail("dense and sparse", data_set, f"the other row form was refused: {error}")
        schema, values = read_output(output)
        other_schema, other_values = read_output(other_output)
        if schema != other_schema:
            self.fail("dense and sparse", data_set, "the output schemas differ")
        given, other_given = values.dense_values(), other_values.dense_values()
        differ = ~np.isclose(given, other_given, rtol=1e-12, atol=0, equal_nan=True)
        if differ.any():
            row, column = (int(i) for i in np.argwhere(differ)[0])
            forms = ("sparse", "dense") if data_set.chunk.is_sparse else ("dense", "sparse")
            self.fail(
                "dense and sparse",
                data_set,
                f"the dense and sparse forms of the rows gave other values: '{schema.attributes[column].name}' "
                f"in row {row + 1} is {float(given[row, column])!r} read {forms[0]}, "
                f"{float(other_given[row, column])!r} read {forms[1]}",
            )

    def check_zeros(self, data_set: _DataSet, chain, output: bytes) -> None:
        stage = chain.stages[0]
        if not stage.preserves_zeros():
            return
        schema, result = read_output(output)
        given = data_set.chunk.dense_values()
        for position in stage.features.tolist():
            if not data_set.schema.attributes[position].is_numeric:
                continue  # a nominal's 0 is its first label, not an absence
            name = data_set.schema.attributes[position].name
            try:
                column = result.dense_values()[:, schema.index_of(name)]
            except KeyError:
                continue
            moved = (given[:, position] == 0) & (column != 0)
            if moved.any():
                row = int(np.flatnonzero(moved)[0])
                self.fail(
                    "zero preservation",
                    data_set,
                    "it declares preserves_zeros(), "
                    f"and the 0 of '{name}' in row {row + 1} became {float(column[row])!r}",
                )

    def check_merge(self, data_set: _DataSet, output: bytes) -> None:
        halves = list(_pieces(data_set.chunk, max(1, (data_set.chunk.n_rows + 1) // 2)))
        for order in ((0, 1), (1, 0)):

            def merged(position, stage, order=order):
                # a one-row data set has one half: its other is the statistics of no rows
                first, second = (
                    stage.accumulate(stage.new_statistics(), copy.deepcopy(halves[i]))
                    if i < len(halves)
                    else stage.new_statistics()
                    for i in order
                )
                return stage.merge(first, second)

            if self.run(_RowsSource(data_set, None), merged)[1] != output:
                which = "first half with the second" if order == (0, 1) else "second half with the first"
                self.fail(
                    "merge order", data_set, f"merging the statistics of the {which} gave other bytes than one pass"
                )

    def check_model(self, data_set: _DataSet, chain, output: bytes) -> None:
        name = self.stage_class.name
        registry = Registry(stages={name: Registered(name, self.stage_class, "check_stage", "check_stage")})
        with tempfile.TemporaryDirectory(prefix="filterkit-check-stage-") as folder:
            path = Path(folder) / "model.json"
            save_model(path, chain, registry)
            loaded = load_chain(path, registry)
        if _written(loaded, _RowsSource(data_set, None)) != output:
            self.fail(
                "model round trip", data_set, "the model, saved and loaded, gave other bytes than the fitted stage"
            )


def _written(chain, source) -> bytes:
    buffer = io.BytesIO()
    write_arff(buffer, chain.output_schema, chain.transform(source.chunks()))
    return buffer.getvalue()


@dataclass
class Run:
    """What one in-process run of the command line gave."""

    status: int
    stdout: bytes
    stderr: str


def run_filterkit(*argv, stdin: bytes = b"", plugins_dir: str | Path | None = None) -> Run:
    """Run ``filterkit ARGV…`` in this process with ``stdin``: the status, what it wrote and what it said."""
    from filterkit.cli import run

    out, err = io.BytesIO(), io.StringIO()
    stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    with (
        contextlib.redirect_stderr(err),
        contextlib.redirect_stdout(stdout),
        mock.patch.object(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")),
    ):
        status = run([str(a) for a in argv], None if plugins_dir is None else str(plugins_dir))
        stdout.flush()
    return Run(status, out.getvalue(), err.getvalue())


def read_output(data: bytes, name: str = "<output>") -> tuple[Schema, Chunk]:
    """The schema and every row of ARFF text held in memory (what :func:`run_filterkit` wrote)."""
    return read_arff(io.BytesIO(data), name)
