"""``filterkit info IN.arff``: a quick look at a data set before choosing a chain.

One streaming pass, chunk by chunk (memory follows the attributes, not the
rows; ``-`` reads stdin): the relation, rows, attributes by type, the row
form as written, density, the class distribution, instance weights and,
with ``--metric``, the best-scoring features with their 2×2 counts.

Row form: the reader stores a chunk as CSR when the file's first data row is
sparse, but a file may mix both forms row by row (Weka reads such files).
So the bytes the reader reads pass through :class:`_SparseRowCounter`, which
counts the lines whose first non-blank character is ``{``: in a header the
reader accepted, no line can start with ``{``, so each one is a sparse data
row (plus a sparse row written on the ``@data`` line itself).  The rest of the
rows are dense.  The file is read once; the counting is a regular expression
over each block the reader asks for.
"""

from __future__ import annotations

import gzip
import json
import math
import re
import shlex
import sys
import zlib
from typing import cast

import click
import numpy as np
import scipy.sparse as sp

from filterkit.arff.reader import ArffReader, open_source
from filterkit.commands.context import registry_of
from filterkit.commands.files import ReportCommand
from filterkit.commands.options import RegisteredName, chunk_rows_option, class_option, json_option, positive_option
from filterkit.errors import FilterkitError
from filterkit.formats import ARFF, format_of
from filterkit.metrics import (
    COMBINE_CHOICES,
    JOINT,
    Metric,
    class_scores,
    feature_scores,
    resolved_combine,
    target_classes,
    weka_ranking,
)
from filterkit.runner import resolve_class
from filterkit.schema import DATE, NOMINAL, NUMERIC, RELATIONAL, STRING, Chunk, Schema
from filterkit.statistics import ExactSums, ValueCounts

KINDS = (NUMERIC, NOMINAL, STRING, DATE, RELATIONAL)
DEFAULT_TOP = 10

INFO_HELP = """Summarize IN.arff (or - for stdin) in one streaming pass.

\b
  filterkit info oh0.arff
  filterkit info -c first --metric ig --presence --top 20 grain.arff
  filterkit info --metric bns --positive Ethics --json oh0.arff

Prints the relation, rows, attributes by type, whether rows are written
sparse or dense, the density (non-zero values / (rows × non-class
attributes); a missing value counts as non-zero, as a sparse row writes it;
a string counts when not empty), the class attribute (-c) with the count and
share of all rows of each label, and the instance weights if any.

With --metric, the numeric and nominal non-class attributes are ranked as
select --metric ranks them (--numeric-only: the numeric ones, as the scorer
stages score them): presence (value ≠ 0) with --presence, else the best
threshold; a nominal attribute over its values. On two classes the positive
class is --positive or the minority. On more classes without --positive, ig
and chi score all classes at once (--combine joint: Weka 3.6's
InfoGainAttributeEval / ChiSquaredAttributeEval scores, -B with --presence,
ranked as Weka's Ranker orders them, ties included); other metrics, or
--combine max, take the maximum over one-vs-rest of every class, and the
class column shows the class achieving it (the first label on a tie);
--combine mean their mean. tp and fp are presence counts: rows of that class
/ of the others where the feature is non-zero; pos and neg count the rows of
that class / of the others where the feature is not missing (shown for
numeric features scored against one class). With instance weights, all of
these are sums of weights, as the scorers use. Ties rank by position, except
with joint (Weka's order).
"""


class _SparseRowCounter:
    """A binary stream that passes reads through and counts the lines starting with ``{``.

    Blank characters before the ``{`` are allowed, as the reader strips them; a
    sparse row on the ``@data`` line itself counts too.  The common case (no
    indentation) is a numpy comparison of the first byte of each line; regular
    expressions run only on the blocks that need them.
    """

    _INDENTED = re.compile(rb"\n[ \t\x0b\x0c]+\{")
    _ON_DATA_LINE = re.compile(rb"\n[ \t\x0b\x0c]*@data[ \t\x0b\x0c]*\{", re.IGNORECASE)

    def __init__(self, stream):
        self._stream = stream
        self._tail = b""
        self.sparse_rows = 0

    def peek(self, size: int = 0) -> bytes:
        """The next bytes, unread; none from damaged gzip data (reading it then gives the
        reader's error, located)."""
        try:
            return self._stream.peek(size)
        except (EOFError, zlib.error, gzip.BadGzipFile):
            return b""

    def read(self, size: int = -1) -> bytes:
        data = self._stream.read(size)
        self._see(data)
        return data

    def _see(self, data: bytes) -> None:
        if not data:
            self._count(self._tail)
            self._tail = b""
            return
        data = self._tail + data
        cut = max(data.rfind(b"\n"), data.rfind(b"\r"))
        if cut == -1:
            self._tail = data
            return
        self._count(data[: cut + 1])
        self._tail = data[cut + 1 :]

    def _count(self, lines: bytes) -> None:
        """Count in whole lines (they start at a line start); CR line ends count as LF."""
        if not lines:
            return
        text = b"\n" + (lines.replace(b"\r", b"\n") if b"\r" in lines else lines)
        codes = np.frombuffer(text, dtype=np.uint8)
        first = codes[np.flatnonzero(codes[:-1] == 10) + 1]  # the first byte of every line
        self.sparse_rows += int(np.count_nonzero(first == 123))  # '{'
        indented = bool(np.isin(first, _BLANKS).any())
        if indented:
            self.sparse_rows += len(self._INDENTED.findall(text))
        if indented or np.any(first == 64):  # '@'
            self.sparse_rows += len(self._ON_DATA_LINE.findall(text))


_BLANKS = np.frombuffer(b" \t\x0b\x0c", dtype=np.uint8)


class _Tally:
    """What one pass over the chunks accumulates; its size follows the attributes."""

    def __init__(
        self, schema: Schema, class_index: int | None, scored: np.ndarray | None, presence: bool, numeric: np.ndarray
    ):
        self.schema = schema
        self.class_index = class_index
        self.other = np.array([i for i in range(len(schema)) if i != class_index], dtype=np.int64)
        self.text_columns = [i for i in schema.text_columns() if i != class_index]
        self.rows = 0
        self.nonzero = 0
        self.missing = 0
        self.weighted = False
        self.weight_total = ExactSums.zeros(1)
        attribute = schema.attributes[class_index] if class_index is not None else None
        n_labels = len(attribute.labels) if attribute is not None and attribute.kind == NOMINAL else 0
        self.label_rows = np.zeros(n_labels, dtype=np.int64)
        self.label_weight_sums = ExactSums.zeros(n_labels)
        self.class_missing = 0
        self.scored = scored
        self.presence = presence
        self.numeric = numeric
        self.counts = ValueCounts.empty(len(scored), n_labels) if scored is not None else None

    def add(self, chunk: Chunk) -> None:
        n = chunk.n_rows
        self.rows += n
        weights = chunk.weights if chunk.weights is not None else np.ones(n)
        if chunk.weights is not None:
            self.weighted = True
        self.weight_total = self.weight_total.plus(ExactSums.of_weights(weights).total())
        values = chunk.values
        if chunk.is_sparse:
            values = cast(sp.csr_matrix, values).tocsr()
            keep = values.indices != self.class_index if self.class_index is not None else slice(None)
            stored = values.data[keep]
            self.nonzero += int(np.count_nonzero(stored))
            self.missing += int(np.isnan(stored).sum())
        else:
            block = values[:, self.other]
            self.nonzero += int(np.count_nonzero(block))
            self.missing += int(np.isnan(block).sum())
        for column in self.text_columns:
            cells = chunk.column(column)
            texts = chunk.text[column]
            self.nonzero += sum(1 for text, value in zip(texts, cells.tolist()) if text and value == value)
        if self.class_index is not None:
            codes = chunk.column(self.class_index)
            known = ~np.isnan(codes)
            self.class_missing += int(n - known.sum())
            if len(self.label_rows):
                labels = codes[known].astype(np.int64)
                self.label_rows += np.bincount(labels, minlength=len(self.label_rows))
                self.label_weight_sums = self.label_weight_sums.plus(
                    ExactSums.by_group(labels, weights[known], len(self.label_rows))
                )
        if self.counts is not None:
            assert self.class_index is not None and self.scored is not None  # counts are kept for --metric only
            scored_chunk = _presence_chunk(chunk, self.numeric) if self.presence else chunk
            self.counts = self.counts.add(scored_chunk, self.scored, self.class_index)

    @property
    def weight_sum(self) -> float:
        """The sum of every row's weight (exact, rounded once: the same whatever the chunks)."""
        return float(self.weight_total.to_float()[0])

    @property
    def label_weights(self) -> np.ndarray:
        """Each label's sum of row weights (exact, rounded once)."""
        return self.label_weight_sums.to_float()


def _presence_chunk(chunk: Chunk, numeric: np.ndarray) -> Chunk:
    """The chunk with every value of the ``numeric`` columns turned into 1 (non-zero), 0 or
    missing; the other columns (the class, nominal codes) unchanged.

    Presence scores need only these; statistics of 0/1 values stay as small as
    (features × classes) whatever the distinct values of the data.
    """
    if chunk.is_sparse:
        matrix = cast(sp.csr_matrix, chunk.values).tocsr(copy=True)
        is_numeric = np.zeros(matrix.shape[1], dtype=bool)
        is_numeric[numeric] = True
        change = is_numeric[matrix.indices] & ~np.isnan(matrix.data)
        matrix.data = np.where(change, (matrix.data != 0).astype(np.float64), matrix.data)
        return Chunk(matrix, chunk.text, chunk.weights)
    values = chunk.values.copy()
    block = values[:, numeric]
    values[:, numeric] = np.where(np.isnan(block), np.nan, (block != 0).astype(np.float64))
    return Chunk(values, chunk.text, chunk.weights)


def _number(value: float):
    """An integral count as int (for JSON and text), else the float."""
    value = float(value)
    return int(value) if value.is_integer() else value


def rank_features(
    counts: ValueCounts,
    metric: Metric,
    targets: list[int],
    presence: bool,
    top: int,
    combine: str = "max",
    labels: np.ndarray | None = None,
) -> list[dict]:
    """The ``top`` features by their score: the metric's k-class form over every class
    (``combine="joint"``, ranked in Weka's ``Ranker`` order), or the maximum or mean of
    their one-vs-rest scores over ``targets`` (ties by position).

    One-vs-rest scores come from :func:`filterkit.metrics.class_scores`, one class at a
    time, so the class achieving the maximum is known (the first target on a tie); the
    2×2 presence counts are given for numeric features scored against one class.
    """
    if counts.n_features == 0 or not targets:
        return []
    is_nominal = np.zeros(counts.n_features, dtype=bool) if labels is None else labels > 0
    best_class: np.ndarray | None = None
    if combine == JOINT:
        scores = feature_scores(counts, metric, targets, presence, JOINT, None, labels)
        order = weka_ranking(scores)[:top]
        if metric.class_free:
            best_class = np.full(counts.n_features, targets[0])
    else:
        per_class = np.vstack(list(class_scores(counts, metric, targets, presence, None, labels)))
        scores = per_class.mean(axis=0) if combine == "mean" and len(targets) > 1 else per_class.max(axis=0)
        if combine != "mean" or len(targets) == 1:
            best_class = np.asarray(targets)[per_class.argmax(axis=0)]
        order = np.lexsort((np.arange(len(scores)), -scores))[:top]
    tables = {}
    if best_class is not None:
        tables = {target: counts.presence_table(target) for target in sorted(set(best_class[order].tolist()))}
    ranked = []
    for rank, feature in enumerate(order.tolist(), 1):
        target = None if best_class is None else int(best_class[feature])
        entry = {"rank": rank, "feature": feature, "score": float(scores[feature]), "class": target}
        for key, column in zip(("tp", "fp", "pos", "neg"), tables[target] if target is not None else ()):
            entry[key] = None if is_nominal[feature] else _number(column[feature])
        ranked.append(entry)
    return ranked


def summarize(
    reader: ArffReader,
    sparse_rows: _SparseRowCounter,
    class_spec: str,
    metric: Metric | None,
    positive: str | None,
    presence: bool,
    top: int,
    input_name: str,
    combine: str | None = None,
    numeric_only: bool = False,
) -> dict:
    """Read every chunk of ``reader`` and return the summary document (JSON-ready)."""
    schema = reader.schema
    class_index = resolve_class(schema, class_spec)
    class_attribute = schema.attributes[class_index] if class_index is not None else None
    scored = None
    if metric is not None:
        if class_attribute is None or class_attribute.kind != NOMINAL:
            what = "none" if class_attribute is None else f"'{class_attribute.name}' is {class_attribute.kind}"
            raise FilterkitError(f"--metric needs a nominal class attribute (-c); {what}", input_name)
        if positive is not None and positive not in class_attribute.labels:
            raise FilterkitError(
                f"--positive {positive!r} is not a label of the class '{class_attribute.name}' "
                f"{{{','.join(class_attribute.labels)}}}",
                input_name,
            )
        combine = resolved_combine(metric, combine, class_attribute, positive)
        scored = scored_features(schema, class_index, numeric_only)
    label_counts = _label_counts(schema, scored)
    numeric = np.asarray(scored)[label_counts == 0] if scored is not None else np.zeros(0, dtype=np.int64)
    tally = _Tally(schema, class_index, scored, presence, numeric)
    for chunk in reader.chunks():
        tally.add(chunk)

    kinds = [a.kind for a in schema.attributes]
    cells = tally.rows * len(tally.other)
    sparse = sparse_rows.sparse_rows
    document = {
        "input": input_name,
        "relation": schema.relation,
        "rows": tally.rows,
        "row_format": None
        if tally.rows == 0
        else "sparse"
        if sparse == tally.rows
        else "dense"
        if sparse == 0
        else "mixed",
        "sparse_rows": sparse,
        "dense_rows": tally.rows - sparse,
        "attributes": {"total": len(kinds), **{kind: kinds.count(kind) for kind in KINDS}},
        "non_class_attributes": len(tally.other),
        "density": tally.nonzero / cells if cells else None,
        "nonzero_values": tally.nonzero,
        "values": cells,
        "missing_values": tally.missing,
        "class": None,
        "weights": {"present": tally.weighted, "sum": tally.weight_sum},
    }
    if class_attribute is not None:
        assert class_index is not None  # class_attribute is set only with class_index
        labels = None
        if class_attribute.kind == NOMINAL:
            labels = [
                {
                    "label": label,
                    "count": int(count),
                    "percent": 100.0 * count / tally.rows if tally.rows else 0.0,
                    **({"weight": float(weight)} if tally.weighted else {}),
                }
                for label, count, weight in zip(class_attribute.labels, tally.label_rows, tally.label_weights)
            ]
        document["class"] = {
            "name": class_attribute.name,
            "index": class_index + 1,
            "kind": class_attribute.kind,
            "labels": labels,
            "missing": tally.class_missing,
            "missing_percent": 100.0 * tally.class_missing / tally.rows if tally.rows else 0.0,
        }
    if metric is not None:
        counts = tally.counts
        # checked where --metric was read: a nominal class, features scored and counted, the combination resolved
        assert class_attribute is not None and scored is not None and counts is not None and combine is not None
        targets = target_classes(class_attribute, counts.class_totals, positive) if counts.class_totals.sum() else []
        if combine == JOINT and not metric.class_free:
            targets = [int(c) for c in np.flatnonzero(counts.class_totals > 0)]
        ranked = rank_features(counts, metric, targets, presence, top, combine, label_counts)
        for entry in ranked:
            feature = int(scored[entry.pop("feature")])
            entry["name"] = schema.attributes[feature].name
            entry["index"] = feature + 1
            entry["kind"] = schema.attributes[feature].kind
            entry["class"] = None if entry["class"] is None else class_attribute.labels[entry["class"]]
        document["ranking"] = {
            "metric": metric.name,
            "mode": "presence" if presence else "threshold",
            "scored_features": int(len(scored)),
            "nominal_features": int(np.count_nonzero(label_counts)),
            "targets": [class_attribute.labels[t] for t in targets],
            "combine": combine if combine == JOINT or len(targets) > 1 else None,
            "top": top,
            "features": [
                {
                    key: entry.get(key)
                    for key in ("rank", "name", "index", "kind", "score", "class", "tp", "fp", "pos", "neg")
                }
                for entry in ranked
            ],
        }
    return document


def scored_features(schema: Schema, class_index: int | None, numeric_only: bool) -> np.ndarray:
    """Positions of the attributes ``--metric`` ranks: the numeric non-class ones, and the
    nominal ones unless ``numeric_only``."""
    kinds = (NUMERIC,) if numeric_only else (NUMERIC, NOMINAL)
    return np.array(
        [i for i, a in enumerate(schema.attributes) if a.kind in kinds and i != class_index], dtype=np.int64
    )


def _label_counts(schema: Schema, scored: np.ndarray | None) -> np.ndarray:
    """Per scored attribute, its number of nominal labels (0 for a numeric one)."""
    if scored is None:
        return np.zeros(0, dtype=np.int64)
    attributes = [schema.attributes[i] for i in scored.tolist()]
    return np.array([len(a.labels) if a.kind == NOMINAL else 0 for a in attributes], dtype=np.int64)


def format_text(document: dict) -> str:
    """The summary for people."""
    lines = [f"relation:    {document['relation']}"]
    rows = document["rows"]
    form = {
        "sparse": "sparse rows",
        "dense": "dense rows",
        None: "no data rows",
        "mixed": f"mixed: {document['sparse_rows']} sparse, {document['dense_rows']} dense",
    }[document["row_format"]]
    lines.append(f"rows:        {rows} ({form})")
    attributes = document["attributes"]
    by_kind = ", ".join(f"{attributes[kind]} {kind}" for kind in KINDS if attributes[kind])
    lines.append(f"attributes:  {attributes['total']}" + (f" ({by_kind})" if by_kind else ""))
    if document["density"] is None:
        lines.append("density:     n/a (no rows or no non-class attributes)")
    else:
        lines.append(
            f"density:     {document['density']:.4g} ({document['nonzero_values']} non-zero of "
            f"{rows} rows × {document['non_class_attributes']} non-class attributes)"
        )
    lines.append(f"missing:     {document['missing_values']} non-class values")
    weights = document["weights"]
    lines.append(
        f"weights:     sum {weights['sum']:.6g} over {rows} rows"
        if weights["present"]
        else "weights:     none (every row weighs 1)"
    )
    target = document["class"]
    if target is None:
        lines.append("class:       none")
    else:
        labels = f", {len(target['labels'])} labels" if target["labels"] is not None else ""
        lines.append(f"class:       '{target['name']}' (attribute {target['index']}, {target['kind']}{labels})")
        if target["labels"] is not None:
            width = max([len(entry["label"]) for entry in target["labels"]] + [len("(missing)")])
            for entry in target["labels"]:
                weight = f"  weight {entry['weight']:.6g}" if "weight" in entry else ""
                lines.append(f"  {entry['label']:<{width}}  {entry['count']:>8}  {entry['percent']:6.2f}%{weight}")
            lines.append(f"  {'(missing)':<{width}}  {target['missing']:>8}  {target['missing_percent']:6.2f}%")
        else:
            lines.append(f"  not nominal: no label distribution; {target['missing']} missing")
    ranking = document.get("ranking")
    if ranking is not None:
        mode = "presence" if ranking["mode"] == "presence" else "best threshold"
        if ranking["combine"] == JOINT:
            against = f"joint over {len(ranking['targets'])} classes (Weka's scores and Ranker order)"
        elif ranking["combine"]:
            against = f"{ranking['combine']} over one-vs-rest of {len(ranking['targets'])} classes"
        elif ranking["targets"]:
            against = f"'{ranking['targets'][0]}' vs rest"
        else:
            against = "no class has rows"
        lines.append("")
        lines.append(
            f"top {len(ranking['features'])} of {_scored_text(ranking)} by "
            f"{ranking['metric']} ({mode}), {against}"
            + ("; tp/fp: presence counts" if any(e["tp"] is not None for e in ranking["features"]) else "")
        )
        if ranking["features"]:
            table = [("rank", "feature", "score", "class", "tp", "fp", "pos", "neg")]
            table += [
                (
                    str(e["rank"]),
                    e["name"],
                    f"{e['score']:.6g}",
                    e["class"] if e["class"] is not None else "-",
                    *(_count_text(e[key]) for key in ("tp", "fp", "pos", "neg")),
                )
                for e in ranking["features"]
            ]
            widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
            left = {1, 3}
            for row in table:
                cells = [cell.ljust(w) if i in left else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths))]
                lines.append("  " + "  ".join(cells).rstrip())
    return "\n".join(lines) + "\n"


def _scored_text(ranking: dict) -> str:
    """``3182 numeric features``, or with nominal ones ``20 features (13 nominal)``."""
    if ranking["nominal_features"]:
        return f"{ranking['scored_features']} features ({ranking['nominal_features']} nominal)"
    return f"{ranking['scored_features']} numeric features"


def _count_text(count) -> str:
    """A count of the ranking table: ``-`` where none applies."""
    if count is None:
        return "-"
    return f"{count:g}" if isinstance(count, float) else str(count)


def _json_ready(value):
    if isinstance(value, dict):
        return {key: _json_ready(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_json_ready(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (np.integer, np.floating)):
        return _json_ready(value.item())
    return value


@click.command(cls=ReportCommand, help=INFO_HELP)
@click.argument("input_path", metavar="IN.arff")
@class_option
@click.option(
    "--metric", "metric_name", type=RegisteredName("metrics"), help="Rank the numeric features by this metric."
)
@click.option(
    "--top", type=click.IntRange(1), default=None, help=f"Features to show with --metric [default: {DEFAULT_TOP}]."
)
@positive_option("With --metric: the positive class (default on two classes: the minority).")
@click.option("--presence", is_flag=True, help="With --metric: score presence (value ≠ 0), not the best threshold.")
@click.option(
    "--combine",
    type=click.Choice(COMBINE_CHOICES),
    default=None,
    help="With --metric on more than two classes: one-vs-rest combined by max or mean, or joint (all classes at "
    "once, Weka's IG and χ²; ig and chi only). Default: joint for ig and chi without --positive, else max.",
)
@click.option("--numeric-only", is_flag=True, help="With --metric: rank the numeric attributes only.")
@json_option("Print JSON.")
@chunk_rows_option
@click.pass_context
def info(
    ctx: click.Context,
    input_path: str,
    class_spec: str,
    metric_name: str | None,
    top: int | None,
    positive: str | None,
    presence: bool,
    combine: str | None,
    numeric_only: bool,
    as_json: bool,
    chunk_rows: int,
) -> None:
    """Summarize IN.arff in one pass and print the summary, as text or JSON."""
    registry = registry_of(ctx)
    if metric_name is None:
        given = [
            flag
            for flag, value in (
                ("--top", top),
                ("--positive", positive),
                ("--presence", presence or None),
                ("--combine", combine),
                ("--numeric-only", numeric_only or None),
            )
            if value is not None
        ]
        if given:
            raise click.UsageError(f"{' and '.join(given)} {'needs' if len(given) == 1 else 'need'} --metric")
    metric = registry.metric(metric_name) if metric_name is not None else None
    name = "<stdin>" if input_path == "-" else input_path
    if format_of(input_path, None) != ARFF:
        raise FilterkitError(
            f"info reads ARFF; convert it first: filterkit {shlex.quote(input_path)} -o NAME.arff", name
        )
    if input_path == "-" and sys.stdin is None:
        raise FilterkitError("standard input is closed")
    raw = sys.stdin.buffer if input_path == "-" else open(input_path, "rb")
    try:
        stream, _ = open_source(raw, name)
        counter = _SparseRowCounter(stream)
        try:
            with ArffReader(counter, name, chunk_rows) as reader:
                document = summarize(
                    reader,
                    counter,
                    class_spec,
                    metric,
                    positive,
                    presence,
                    top or DEFAULT_TOP,
                    name,
                    combine,
                    numeric_only,
                )
        finally:
            if isinstance(stream, gzip.GzipFile):
                stream.close()
    finally:
        if input_path != "-":
            raw.close()
    if as_json:
        click.echo(json.dumps(_json_ready(document), indent=1, allow_nan=False))
    else:
        click.echo(format_text(document), nl=False)
