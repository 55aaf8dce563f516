"""``filterkit predict`` and ``filterkit explain``: a model of ``train`` on new rows, one chunk at a time."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import sys
from collections.abc import Iterator
from typing import TextIO

import click

from filterkit.commands.context import registry_of
from filterkit.commands.files import check_distinct, check_format_options, check_stdout_open
from filterkit.commands.options import (
    chunk_rows_option,
    format_option_decorators,
    input_format_option,
    json_option,
)
from filterkit.errors import FilterkitError
from filterkit.formats import FormatOptions, format_of, named_format, new_rows_reading
from filterkit.labels import LABEL_SEPARATOR
from filterkit.outputs import checked_output
from filterkit.text import shown


@contextlib.contextmanager
def _model_rows(ctx, model_path: str, input_path: str, output: str | None, params: dict) -> Iterator[tuple]:
    """The model of ``model_path`` and the chunks of ``input_path``, read as its training data was (its
    format unless named otherwise, with its settled options) and checked against its training header: an
    error when the file holds none of the attributes the model reads (a note names those it lacks)."""
    from filterkit.running import open_source
    from filterkit.trained import load_model

    check_stdout_open(output)
    if output is not None and output.lower().removesuffix(".gz").endswith(".json"):
        raise click.UsageError(f"-o {output}: predictions are JSON Lines (one object a row): name it .jsonl")
    named = [("the model", model_path), ("the input", input_path), *([("-o", output)] if output else [])]
    check_distinct([(role, path) for role, path in named if path != "-"])
    model = load_model(model_path, registry_of(ctx))
    formats = FormatOptions.of_params(params)
    input_format, reading = new_rows_reading(input_path, params["input_format"], formats, model.reading)
    check_format_options(formats, format_of(input_path, input_format))
    name = "<stdin>" if input_path == "-" else input_path
    with open_source(input_path, params["chunk_rows"], False, input_format, reading, model.input_schema) as source:
        model.chain.check_input(source.schema, name)
        absent = set(getattr(getattr(source, "layout", None), "absent", ()))
        read = [a.name for a in model.input_schema.attributes if a.name not in model.targets]
        if read and absent >= set(read):
            raise FilterkitError(f"the file holds none of the attributes the model reads ({shown_names(read)})", name)
        lacking = [attribute for attribute in read if attribute in absent]
        if lacking:
            sys.stderr.write(f"filterkit: note: {name} lacks {shown_names(lacking)}: missing in every row\n")
        yield model, source.chunks()


def shown_names(names: list[str]) -> str:
    """Attribute names for a message: the first ten, quoted, and how many more."""
    more = f" and {len(names) - 10} more" if len(names) > 10 else ""
    return ", ".join(shown(name) for name in names[:10]) + more


@contextlib.contextmanager
def _written(output: str | None) -> Iterator[TextIO]:
    """A text stream to ``output`` (None: standard output; a ``.gz`` name: gzip), published only whole."""
    from filterkit.running import output_stream

    with output_stream(None if output is None else checked_output(output)) as binary:
        text = io.TextIOWrapper(binary, encoding="utf-8", newline="")
        yield text
        text.flush()
        text.detach()


def _writes_json_lines(output: str | None, as_json: bool) -> bool:
    """JSON Lines with --json or an output named so (.jsonl, .ndjson, a .gz after them), else CSV."""
    return as_json or output is not None and named_format(output) == "jsonl"


def _shortest(value: float) -> str:
    """A float as the shortest text that reads back as it (the same bytes on every run)."""
    return repr(float(value))


def _number(value: float) -> float | None:
    """A decision value or probability for the output: None (empty, null) for a label predicted constant."""
    return None if math.isnan(value) else float(value)


def prediction_rows(model, chunks) -> Iterator[dict]:
    """Per input row: its number (from 1), predicted label (``labels``: the list of a multi-label model),
    decision value(s) and Platt probability(ies)."""
    row = 0
    for chunk in chunks:
        features = model.features(chunk)
        decisions, probabilities = model.decisions(features), model.probabilities(features)
        for position, predicted in enumerate(model.predicted(features)):
            row += 1
            record: dict = {"row": row, **model.answer(predicted)}
            if model.multiclass or model.label_sets:
                record["decision"] = dict(zip(model.classes, map(_number, decisions[position])))
                if probabilities is not None:
                    record["probability"] = dict(zip(model.classes, map(_number, probabilities[position])))
            else:
                record["decision"] = float(decisions[position])
                if probabilities is not None:
                    record["probability"] = float(probabilities[position])
            yield record


def _csv_row(record: dict, columns: list[str]) -> list[str]:
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
    label holding the separator of a row's labels)."""
    kinds = ("decision", "probability") if calibrated else ("decision",)
    if model.label_sets:
        joined = [label for label in model.classes if LABEL_SEPARATOR in label]
        if joined:
            raise FilterkitError(
                f"label {shown(joined[0])} holds {LABEL_SEPARATOR}, which joins a row's labels in CSV: write JSON "
                "Lines (--json)",
                model_path,
            )
        return ["row", "labels", *(f"{kind}:{label}" for kind in kinds for label in model.classes)]
    if model.multiclass:
        return ["row", "label", *(f"{kind}:{label}" for kind in kinds for label in model.classes)]
    return ["row", "label", *kinds]


@click.command(
    help="Predict each row of IN (any format filterkit reads; - for stdin) with a model of 'filterkit train': "
    "row, label, decision value (one per class of a multi-class model) and Platt's probability where the model "
    "has it; for multi-label data the row's labels (joined by | in CSV) and the values per label. CSV, or JSON "
    "Lines with --json or an output named .jsonl."
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
    as_json = _writes_json_lines(output, as_json)
    with _model_rows(ctx, model_path, input_path, output, params) as (model, chunks), _written(output) as stream:
        records = prediction_rows(model, chunks)
        if as_json:
            for record in records:
                stream.write(json.dumps(record, ensure_ascii=False) + "\n")
            return
        columns = _csv_columns(model, model.calibrated, model_path)
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
    from filterkit.explaining import explanation_text

    as_json = _writes_json_lines(output, as_json)
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
