"""``filterkit predict`` and ``filterkit explain``: a model of ``train`` on new rows, one chunk at a time."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import BinaryIO, TextIO, cast

import click

from filterkit.commands.context import plugin_loader, registry_of
from filterkit.commands.files import check_distinct, check_format_options, check_stdout_open
from filterkit.commands.options import (
    OnceCommand,
    chunk_rows_option,
    engine_option,
    format_option_decorators,
    input_format_option,
    json_option,
    partitions_option,
    refuse_uncut_input,
    scheduler_option,
    stdout_output_option,
    workers_option,
)
from filterkit.errors import FilterkitError
from filterkit.formats import (
    FormatOptions,
    format_of,
    named_format,
    new_rows_reading,
)
from filterkit.labels import LABEL_SEPARATOR, unjoinable_label
from filterkit.outputs import OutputFile, checked_output


@dataclass(frozen=True)
class EngineOptions:
    """``--engine``, ``--scheduler``, ``--workers`` and ``--partitions`` of ``predict`` and ``apply``."""

    name: str = "local"
    scheduler: str | None = None
    workers: int | None = None
    partitions: int | None = None

    @classmethod
    def of_params(cls, params: dict) -> EngineOptions:
        """The engine options taken out of a command's ``params``."""
        return cls(*(params.pop(name) for name in ("engine", "scheduler", "workers", "partitions")))

    @property
    def dask(self) -> bool:
        """Whether the rows are read over partitions on a Dask cluster."""
        return self.name == "dask"

    def check(self, input_path: str, input_format: str | None, output: str | None) -> None:
        """Refuse, before any cluster starts, what the engine cannot run as one process would: the Dask engine's
        options without it, an input it cannot cut into partitions (the chain's words), and standard output
        with --scheduler (the workers write the parts)."""
        if not self.dask:
            if self.scheduler or self.workers or self.partitions:
                raise click.UsageError("--scheduler, --workers and --partitions need --engine dask")
            return
        if self.scheduler and self.workers:
            raise click.UsageError("--workers sizes the local cluster, which --scheduler replaces: give one")
        if self.scheduler and output is None:
            raise click.UsageError(
                "with --scheduler, give -o FILE in a folder the workers share (they write the parts)"
            )
        refuse_uncut_input(input_path, input_format)

    @contextlib.contextmanager
    def connected(self, ctx, chain, chunk_rows: int, input_format, reading, progress=None, classifier=None):
        """The Dask engine of these options (:meth:`filterkit.distributed.DaskEngine.connect`), reading the input
        as ``input_format`` with ``reading``, its workers checked for ``chain``'s stages and the classifier named
        ``classifier`` (a model's, which ``predict`` rebuilds there; None: none)."""
        from filterkit.distributed import DaskEngine

        connecting = DaskEngine.connect(
            self.scheduler,
            plugin_loader(ctx).folder,
            chunk_rows,
            progress,
            self.partitions,
            input_format,
            reading,
            self.workers,
        )
        with connecting as engine:
            engine.check_workers(chain, None if classifier is None else registry_of(ctx).classifiers[classifier])
            yield engine


def engine_options(what: str):
    """``--engine`` (``what`` saying how each runs), ``--scheduler``, ``--workers`` and ``--partitions`` on a
    command (:class:`Engine`)."""
    decorators = [
        engine_option(what),
        scheduler_option,
        workers_option,
        partitions_option,
    ]

    def decorated(command):
        for decorator in reversed(decorators):
            command = decorator(command)
        return command

    return decorated


def _loaded_model(
    ctx, model_path: str, input_path: str, output: str | None, params: dict, engine: EngineOptions
) -> tuple:
    """The model of ``model_path``, and how ``input_path`` is read as its training data was (its format unless
    named otherwise, with its settled options): format and reading options; the outputs and engine checked
    before the model is read."""
    from filterkit.trained import load_model

    check_stdout_open(output)
    if output is not None and output.lower().removesuffix(".gz").endswith(".json"):
        raise click.UsageError(f"-o {output}: predictions are JSON Lines (one object a row): name it .jsonl")
    named = [("the model", model_path), ("the input", input_path), *([("-o", output)] if output else [])]
    check_distinct([(role, path) for role, path in named if path != "-"])
    engine.check(input_path, params["input_format"], output)
    model = load_model(model_path, registry_of(ctx))
    formats = FormatOptions.of_params(params)
    input_format, reading = new_rows_reading(input_path, params["input_format"], formats, model.reading)
    check_format_options(formats, format_of(input_path, input_format))
    if engine.dask:
        from filterkit.partitions import check_runnable

        check_runnable(model.chain.stages, input_path)
    return model, input_format, reading


@contextlib.contextmanager
def _model_rows(
    ctx, model_path: str, input_path: str, output: str | None, params: dict, engine: EngineOptions = EngineOptions()
) -> Iterator[tuple]:
    """The model of ``model_path`` and the chunks of ``input_path`` (:func:`_loaded_model`), checked against its
    training header (:func:`~filterkit.running.check_new_rows`)."""
    from filterkit.running import check_new_rows, open_source

    model, input_format, reading = _loaded_model(ctx, model_path, input_path, output, params, engine)
    name = "<stdin>" if input_path == "-" else input_path
    with open_source(input_path, params["chunk_rows"], False, input_format, reading, model.input_schema) as source:
        check_new_rows(model.chain, source, name)
        yield model, source.chunks()


@contextlib.contextmanager
def _written(output: str | OutputFile | None) -> Iterator[TextIO]:
    """A text stream to ``output`` (None: standard output; a ``.gz`` name: gzip; a name checked here unless
    given as its :func:`filterkit.outputs.checked_output`), published only whole."""
    from filterkit.running import output_stream

    with output_stream(
        output if output is None or isinstance(output, OutputFile) else checked_output(output)
    ) as binary:
        held = _HeldBack(binary)
        text = io.TextIOWrapper(cast(BinaryIO, held), encoding="utf-8", newline="")
        try:
            yield text
        except BaseException:
            held.dropping = True  # the rows still in the text buffer are not written after an error
            raise
        finally:
            text.detach()  # never closing ``binary``: standard output stays the caller's


class _HeldBack(io.BufferedIOBase):
    """A binary stream's writes, dropped once ``dropping`` is set: what :func:`_written`'s text layer still holds
    when a run fails is not written (a bad row among the first leaves standard output empty)."""

    def __init__(self, binary):
        super().__init__()
        self.binary, self.dropping = binary, False

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        if not self.dropping:
            self.binary.write(data)
        return len(data)

    def flush(self) -> None:
        if not self.dropping:
            self.binary.flush()

    def close(self) -> None:
        """Closes this view alone (when collected, after :func:`_written` has ended ``binary``)."""
        self.dropping = True
        super().close()


def _writes_json_lines(output: str | None, as_json: bool) -> bool:
    """JSON Lines with --json or an output named so (.jsonl, .ndjson, a .gz after them), else CSV; a usage error
    where ``output`` is named as another format than the one written (``--json -o p.csv``, ``-o p.arff``: the file
    would be read as what its name says, as the chain refuses ``-o out.arff --to csv``)."""
    named = None if output is None else named_format(output)
    if named not in (None, "csv", "jsonl") or (as_json and named == "csv"):
        written = "JSON Lines" if as_json else "CSV"
        raise click.UsageError(f"-o {output} is named as {named}, but predictions are written as {written}")
    return as_json or named == "jsonl"


def _shortest(value: float) -> str:
    """A float as the shortest text that reads back as it (the same bytes on every run)."""
    return repr(float(value))


def _number(value: float) -> float | None:
    """A decision value or probability for the output: None (empty, null) for a label predicted constant."""
    return None if math.isnan(value) else float(value)


def prediction_rows(model, chunks, source: str | None = None) -> Iterator[dict]:
    """Per input row: its number (from 1), predicted label (``labels``: the list of a multi-label model),
    decision value(s) and Platt probability(ies); ``source``, the input's name, for an error naming a row."""
    first_row = 1
    for chunk in chunks:
        yield from prediction_records(model, chunk_outputs(model, chunk), first_row, source)
        first_row += chunk.n_rows


def chunk_outputs(model, chunk) -> tuple:
    """What ``model`` answers for each row of ``chunk``: predicted positions, decision values and probabilities
    (None for a model without them)."""
    features = model.features(chunk)
    return model.predicted(features), model.decisions(features), model.probabilities(features)


def prediction_records(model, outputs: tuple, first_row: int, source: str | None = None) -> Iterator[dict]:
    """The records of :func:`prediction_rows` of one chunk's :func:`chunk_outputs`, numbered from ``first_row``;
    a row whose decision value is not a finite number is an error naming it and ``source``."""
    predictions, decisions, probabilities = outputs
    model.check_decisions(decisions, first_row, source)
    for position, predicted in enumerate(predictions):
        record: dict = {"row": first_row + position, **model.answer(predicted)}
        if model.multiclass or model.label_sets:
            record["decision"] = dict(zip(model.classes, map(_number, decisions[position])))
            if probabilities is not None:
                record["probability"] = dict(zip(model.classes, map(_number, probabilities[position])))
        else:
            record["decision"] = float(decisions[position])
            if probabilities is not None:
                record["probability"] = float(probabilities[position])
        yield record


@dataclass(frozen=True)
class PredictionWriter:
    """How predictions are written: JSON Lines (``columns`` empty), or CSV of ``columns`` (:func:`_csv_columns`).
    A Dask task calls :meth:`outputs` and :meth:`text` (:meth:`filterkit.distributed.DaskEngine.write_predictions`)."""

    columns: tuple[str, ...] = ()
    #: The input's name, for an error naming a row of it.
    source: str | None = None

    def header(self) -> str:
        """What comes before the first row: CSV's column names (nothing for JSON Lines)."""
        if not self.columns:
            return ""
        return self.text_of(
            [self.columns], lambda stream, rows: csv.writer(stream, lineterminator="\n").writerows(rows)
        )

    def write(self, stream: TextIO, records: Iterable[dict]) -> None:
        """Write ``records`` (:func:`prediction_records`) to ``stream``, one line each."""
        if not self.columns:
            for record in records:
                stream.write(json.dumps(record, ensure_ascii=False) + "\n")
            return
        writer = csv.writer(stream, lineterminator="\n")
        for record in records:
            writer.writerow(_csv_row(record, self.columns))

    def outputs(self, model, chunk) -> tuple:
        """:func:`chunk_outputs`."""
        return chunk_outputs(model, chunk)

    @staticmethod
    def model(chain, section: dict, reading: tuple, registry):
        """:func:`filterkit.trained.model_of`: the model the engine's workers rebuild from a model file's parts."""
        from filterkit.trained import model_of

        return model_of(chain, section, reading, registry)

    def text(self, model, outputs: tuple, first_row: int) -> str:
        """The lines of one chunk's ``outputs``, its rows numbered from ``first_row``."""
        return self.text_of(prediction_records(model, outputs, first_row, self.source), self.write)

    @staticmethod
    def text_of(rows, write) -> str:
        """What ``write(stream, rows)`` writes, as one string."""
        buffer = io.StringIO(newline="")
        write(buffer, rows)
        return buffer.getvalue()


def _csv_row(record: dict, columns: Sequence[str]) -> list[str]:
    flat = {"row": str(record["row"])}
    if "labels" in record:
        flat["labels"] = LABEL_SEPARATOR.join(record["labels"])
    else:
        flat["label"] = record["label"]
    for key in ("decision", "probability"):
        value = record.get(key)
        if isinstance(value, dict):
            flat.update({f"{key}:{label}": "" if n is None else _shortest(n) for label, n in value.items()})
        elif value is not None:
            flat[key] = _shortest(value)
    return [flat[column] for column in columns]


def _csv_columns(model, calibrated: bool, model_path: str) -> list[str]:
    """The CSV columns of :func:`prediction_rows`' records (an error naming ``model_path`` for a model of a
    label that a row's labels joined cannot show: one holding their separator, or an empty one)."""
    kinds = ("decision", "probability") if calibrated else ("decision",)
    if model.label_sets:
        why = unjoinable_label(model.classes)
        if why is not None:
            raise FilterkitError(f"{why} in CSV: write JSON Lines (--json)", model_path)
        return ["row", "labels", *(f"{kind}:{label}" for kind in kinds for label in model.classes)]
    if model.multiclass:
        return ["row", "label", *(f"{kind}:{label}" for kind in kinds for label in model.classes)]
    return ["row", "label", *kinds]


@click.command(
    cls=OnceCommand,
    help="Predict each row of IN (any format filterkit reads; - for stdin) with a model of 'filterkit train': "
    "row, label, decision value (one per class of a multi-class model) and Platt's probability where the model "
    "has it; for multi-label data the row's labels (joined by | in CSV) and the values per label. CSV, or JSON "
    "Lines with --json or an output named .jsonl.",
)
@click.argument("model_path", metavar="MODEL.json")
@click.argument("input_path", metavar="IN")
@stdout_output_option("Write here (default, or -: standard output).")
@json_option(help="Write JSON Lines: one object a row.")
@input_format_option
@format_option_decorators
@chunk_rows_option
@engine_options("Predict in this process, or over partitions on a Dask cluster, with the same bytes")
@click.pass_context
def predict(ctx, model_path: str, input_path: str, output: str | None, as_json: bool, **params) -> None:
    """Stream IN through the model's chain and classifier, one chunk in memory; or, with --engine dask, each
    partition of IN in a task (:meth:`filterkit.distributed.DaskEngine.write_predictions`)."""
    as_json = _writes_json_lines(output, as_json)
    engine = EngineOptions.of_params(params)
    if engine.dask:
        _predict_on_dask(ctx, model_path, input_path, output, as_json, params, engine)
        return
    rows = _model_rows(ctx, model_path, input_path, output, params, engine)
    with rows as (model, chunks), _written(output) as stream:
        writer = _prediction_writer(model, as_json, model_path, input_path)
        stream.write(writer.header())
        writer.write(stream, prediction_rows(model, chunks, writer.source))


def _prediction_writer(model, as_json: bool, model_path: str, input_path: str) -> PredictionWriter:
    """JSON Lines, or CSV of the model's columns; rows of ``input_path`` (- for standard input)."""
    columns = () if as_json else tuple(_csv_columns(model, model.calibrated, model_path))
    return PredictionWriter(columns, "<stdin>" if input_path == "-" else input_path)


def _predict_on_dask(ctx, model_path: str, input_path: str, output: str | None, as_json: bool, params, engine) -> None:
    """``predict`` over the partitions of IN on a Dask cluster, written in the input's order, with the bytes of
    one process: published only whole to ``-o``."""
    from filterkit.running import check_new_rows

    model, input_format, reading = _loaded_model(ctx, model_path, input_path, output, params, engine)
    output_file = None if output is None else checked_output(output)
    connecting = engine.connected(
        ctx, model.chain, params["chunk_rows"], input_format, reading, classifier=model.section["name"]
    )
    with connecting as dask:
        with dask.opened(model.chain, input_path) as plan:
            check_new_rows(model.chain, plan, input_path)
            writer = _prediction_writer(model, as_json, model_path, input_path)
            beside = None if output_file is None or output_file.how == "stream" else output_file.staging_folder
            with _written(output_file) as text:  # its binary stream, ended as one process ends it (a .gz's flush)
                dask.write_predictions(model, plan, writer, text.buffer, beside)


@click.command(
    cls=OnceCommand,
    help="Explain each row's decision by a model of 'filterkit train': the words (features) that moved it most, "
    "each with its count, its value after every stage and its contribution (value × weight); the contributions "
    "of every word and the intercept sum to the decision value.",
)
@click.argument("model_path", metavar="MODEL.json")
@click.argument("input_path", metavar="IN")
@click.option("--top", type=click.IntRange(0), default=10, show_default=True, help="Words per row (0: every word).")
@stdout_output_option("Write here (default, or -: standard output).")
@json_option(help="One JSON object a row: decision, intercept and words (per class under 'classes').")
@input_format_option
@format_option_decorators
@chunk_rows_option
@click.pass_context
def explain(ctx, model_path: str, input_path: str, top: int, output: str | None, as_json: bool, **params) -> None:
    """Stream IN through the model, explaining each row."""
    from filterkit.explaining import explanation_text

    as_json = _writes_json_lines(output, as_json)
    with _model_rows(ctx, model_path, input_path, output, params) as (model, chunks), _written(output) as stream:
        stages = [stage.name for stage in model.chain.stages]
        rows = 0
        for chunk in chunks:
            for explained in model.explain_chunk(chunk, top, rows + 1, "<stdin>" if input_path == "-" else input_path):
                if as_json:
                    stream.write(json.dumps(explained, ensure_ascii=False) + "\n")
                else:
                    stream.write(explanation_text(explained, stages) + "\n\n")
            rows += chunk.n_rows
