"""The same rows as an ARFF file, written as the record formats hold them (CSV, JSON Lines), for the
tests that read one data set in every format."""

from __future__ import annotations

import json
import math
from pathlib import Path

from filterkit.arff import read_arff
from filterkit.formats.csv_writer import CsvWriter
from filterkit.schema import NOMINAL, STRING


def write_csv(arff: Path, target: Path) -> Path:
    """The rows of ``arff`` as a CSV file at ``target``, written by filterkit's own CSV writer."""
    schema, chunk = read_arff(arff)
    with open(target, "wb") as stream:
        writer = CsvWriter(stream, schema)
        writer.write(chunk)
    return target


def write_jsonl(arff: Path, target: Path, order: list[str] | None = None) -> Path:
    """The rows of ``arff`` as JSON Lines at ``target``: an object a row, its fields in ``order`` (default:
    the attributes'), a nominal value or a text as a string, a number as a number, a missing value as null."""
    schema, chunk = read_arff(arff)
    names = [attribute.name for attribute in schema.attributes]
    values = chunk.dense_values()
    lines = []
    for row in range(chunk.n_rows):
        record = {}
        for column, attribute in enumerate(schema.attributes):
            value = values[row, column]
            if math.isnan(value):
                record[attribute.name] = None
            elif attribute.kind == STRING:
                record[attribute.name] = chunk.text[column][row]
            elif attribute.kind == NOMINAL:
                record[attribute.name] = attribute.labels[int(value)]
            else:
                record[attribute.name] = int(value) if value.is_integer() else float(value)
        lines.append(json.dumps({name: record[name] for name in (order or names)}))
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target
