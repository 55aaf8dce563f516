"""``filterkit predict`` and ``filterkit explain``: a model of ``train`` on new rows, one chunk at a time."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import sys
from collections.abc import Iterator
from typing import TextIO

import click

from filterkit.commands.context import registry_of
from filterkit.commands.files import check_distinct, check_stdout_open
from filterkit.commands.options import (
    chunk_rows_option,
    format_option_decorators,
    input_format_option,
    json_option,
)
from filterkit.formats import ARFF, FormatOptions, format_of, named_format
from filterkit.outputs import checked_output, staged_output

#: Output names written as JSON Lines (any other, and standard output without --json, is CSV).
JSON_LINES_SUFFIXES = (".jsonl", ".ndjson")


@contextlib.contextmanager
def _model_rows(ctx, model_path: str, input_path: str, output: str | None, params: dict) -> Iterator[tuple]:
    """The model of ``model_path`` and the chunks of ``input_path``, read as its training data was (its
    format unless named otherwise, with its settled options) and checked against its training header."""
    from filterkit.running import open_source
    from filterkit.trained import load_model

    check_stdout_open(output)
    named = [("the model", model_path), ("the input", input_path), *([("-o", output)] if output else [])]
    check_distinct([(role, path) for role, path in named if path != "-"])
    model = load_model(model_path, registry_of(ctx))
    trained_format, trained_options = model.reading
    formats = FormatOptions.of_params(params)
    input_format = params["input_format"] or named_format(input_path) or trained_format
    same_format = format_of(input_path, input_format) == (trained_format or ARFF)
    reading = formats.recorded(trained_options) if same_format else formats
    chain = model.chain
    known = chain.input_schema if format_of(input_path, input_format) != ARFF else None
    with open_source(input_path, params["chunk_rows"], False, input_format, reading, known) as source:
        chain.check_input(source.schema, "<stdin>" if input_path == "-" else input_path)
        yield model, source.chunks()


@contextlib.contextmanager
def _written(output: str | None) -> Iterator[TextIO]:
    """A text stream to ``output`` (None: standard output), published only whole."""
    if output is None:
        yield sys.stdout
        sys.stdout.flush()
        return
    with staged_output(checked_output(output)) as staged:
        text = io.TextIOWrapper(staged.stream, encoding="utf-8", newline="")
        yield text
        text.flush()
        text.detach()
        staged.publish()


def _number(value: float) -> str:
    """A float as the shortest text that reads back as it (the same bytes on every run)."""
    return repr(float(value))


def prediction_rows(model, chunks) -> Iterator[dict]:
    """Per input row: its number (from 1), predicted label, decision value(s) and Platt probability(ies)."""
    row = 0
    for chunk in chunks:
        features = model.features(chunk)
        decisions, probabilities = model.decisions(features), model.probabilities(features)
        for position, label in enumerate(model.predicted(features)):
            row += 1
            record: dict = {"row": row, "label": model.labels[label]}
            if model.multiclass:
                record["decision"] = dict(zip(model.classes, map(float, decisions[position])))
                if probabilities is not None:
                    record["probability"] = dict(zip(model.classes, map(float, probabilities[position])))
            else:
                record["decision"] = float(decisions[position])
                if probabilities is not None:
                    record["probability"] = float(probabilities[position])
            yield record


def _csv_row(record: dict, columns: list[str]) -> list[str]:
    flat = {"row": str(record["row"]), "label": record["label"]}
    for key in ("decision", "probability"):
        value = record.get(key)
        if isinstance(value, dict):
            flat.update({f"{key}:{label}": _number(number) for label, number in value.items()})
        elif value is not None:
            flat[key] = _number(value)
    return [flat[column] for column in columns]


def _csv_columns(model, calibrated: bool) -> list[str]:
    """The CSV columns of :func:`prediction_rows`' records."""
    kinds = ("decision", "probability") if calibrated else ("decision",)
    if model.multiclass:
        return ["row", "label", *(f"{kind}:{label}" for kind in kinds for label in model.classes)]
    return ["row", "label", *kinds]


@click.command(
    help="Predict each row of IN (any format filterkit reads; - for stdin) with a model of 'filterkit train': "
    "row, label, decision value (one per class of a multi-class model) and Platt's probability where the model "
    "has it; CSV, or JSON Lines with --json or an output named .jsonl."
)
@click.argument("model_path", metavar="MODEL.json")
@click.argument("input_path", metavar="IN")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write here (default: standard output).")
@json_option(help="Write JSON Lines: one object a row.")
@input_format_option
@format_option_decorators
@chunk_rows_option
@click.pass_context
def predict(ctx, model_path: str, input_path: str, output: str | None, as_json: bool, **params) -> None:
    """Stream IN through the model's chain and classifier, one chunk in memory."""
    as_json = as_json or (output is not None and output.lower().endswith(JSON_LINES_SUFFIXES))
    with _model_rows(ctx, model_path, input_path, output, params) as (model, chunks), _written(output) as stream:
        records = prediction_rows(model, chunks)
        if as_json:
            for record in records:
                stream.write(json.dumps(record, ensure_ascii=False) + "\n")
            return
        columns = _csv_columns(model, model.calibrated)
        writer = csv.writer(stream, lineterminator="\n")
        writer.writerow(columns)
        for record in records:
            writer.writerow(_csv_row(record, columns))


@click.command(
    help="Explain each row's decision by a model of 'filterkit train': the words (features) that moved it most, "
    "each with its count, its value after every stage and its contribution (value × weight); the contributions "
    "of every word and the intercept sum to the decision value."
)
@click.argument("model_path", metavar="MODEL.json")
@click.argument("input_path", metavar="IN")
@click.option("--top", type=click.IntRange(0), default=10, show_default=True, help="Words per row (0: every word).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write here (default: standard output).")
@json_option(help="One JSON object a row: decision, intercept and words (per class under 'classes').")
@input_format_option
@format_option_decorators
@chunk_rows_option
@click.pass_context
def explain(ctx, model_path: str, input_path: str, top: int, output: str | None, as_json: bool, **params) -> None:
    """Stream IN through the model, explaining each row."""
    from filterkit.trained import explanation_text

    as_json = as_json or (output is not None and output.lower().endswith(JSON_LINES_SUFFIXES))
    with _model_rows(ctx, model_path, input_path, output, params) as (model, chunks), _written(output) as stream:
        stages = [stage.name for stage in model.chain.stages]
        rows = 0
        for chunk in chunks:
            for explained in model.explain_chunk(chunk, top):
                explained["row"] += rows
                if as_json:
                    stream.write(json.dumps(explained, ensure_ascii=False) + "\n")
                else:
                    stream.write(explanation_text(explained, stages) + "\n\n")
            rows += chunk.n_rows
