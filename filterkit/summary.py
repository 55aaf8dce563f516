"""A data set's summary in one streaming pass: :func:`summarize` over the reader, and its
rendering :func:`as_text` (``filterkit info`` prints it, or :func:`filterkit.documents.as_json`).

Memory follows the attributes, not the rows.  An ARFF file may mix dense and sparse rows, so the
bytes the reader reads pass through :class:`_SparseRowCounter`, which counts the lines whose
first non-blank character is ``{`` (no header line the reader accepts starts so).  Every other
format is read as a chain reads it (:func:`filterkit.running.open_source`: a scan for its header,
then one pass); its rows are sparse as its reader stores them (svmlight's), else dense (CSV, JSON
Lines, Parquet, folders).
"""

from __future__ import annotations

import contextlib
import gzip
import os
import re
import zlib
from collections.abc import Iterator
from typing import IO, Sequence, cast

import numpy as np

from filterkit.arff.reader import DEFAULT_CHUNK_ROWS, open_source
from filterkit.documents import for_terminal
from filterkit.errors import FilterkitError, folder_given
from filterkit.formats import ARFF, FormatOptions, format_of, registered, scanned_format
from filterkit.labels import (
    LABELS_TAKE_THE_CLASS,
    LabelTally,
    label_summary_lines,
    meka_label_positions,
    refuse_class_choice,
)
from filterkit.metrics import (
    JOINT,
    Metric,
    class_scores,
    combined,
    feature_scores,
    ranking_order,
    resolved_combine,
    target_classes,
)
from filterkit.runner import class_hint, resolve_class
from filterkit.schema import DATE, NOMINAL, NUMERIC, RELATIONAL, STRING, Attribute, Chunk, Schema, check_positive
from filterkit.statistics import ExactSums, ValueCounts

KINDS = (NUMERIC, NOMINAL, STRING, DATE, RELATIONAL)
#: The metrics whose joint scores are those of a Weka evaluator (InfoGainAttributeEval, ChiSquaredAttributeEval).
WEKA_JOINT = ("ig", "chi")
DEFAULT_TOP = 10


class _SparseRowCounter:
    """A binary stream that passes reads through and counts the lines starting with ``{``."""

    #: a row's first value after the separators the reader skips (a comma, each control character up to the space)
    _SPARSE_LINE = re.compile(
        rb"\n[\x00-\x09\x0b\x0c\x0e-\x20,]*(?:@data[\x00-\x09\x0b\x0c\x0e-\x20,]*)?\{", re.IGNORECASE
    )

    def __init__(self, stream):
        self._stream = stream
        self._tail = b""
        self.sparse_rows = 0

    def peek(self, size: int = 0) -> bytes:
        """The next bytes, unread; none from damaged gzip data (the read then gives the reader's error)."""
        try:
            return self._stream.peek(size)
        except (EOFError, zlib.error, gzip.BadGzipFile):
            return b""

    def read(self, size: int = -1) -> bytes:
        """Up to ``size`` bytes of the stream, counted once their lines are whole."""
        data = self._stream.read(size)
        lines = self._tail + data
        cut = max(lines.rfind(b"\n"), lines.rfind(b"\r")) + 1 if data else len(lines)
        self._tail = lines[cut:]
        text = b"\n" + lines[:cut].replace(b"\r", b"\n")
        self.sparse_rows += len(self._SPARSE_LINE.findall(text))
        return data


class _Tally:
    """What one pass over the chunks accumulates; its size follows the attributes."""

    def __init__(
        self,
        schema: Schema,
        class_index: int | None,
        scored: np.ndarray | None,
        presence: bool,
        label_positions: Sequence[int] = (),
    ):
        self.schema, self.class_index, self.presence = schema, class_index, presence
        self.text_columns = [i for i in schema.text_columns() if i != class_index]
        #: the attributes other than the class and the labels that are not text: a string or relational attribute
        #: is no feature
        self.is_feature = np.array([i != class_index for i in range(len(schema))], dtype=bool)
        self.is_feature[self.text_columns] = False
        self.label_positions = list(label_positions)
        self.is_feature[self.label_positions] = False
        self.rows = self.nonzero = self.missing = self.class_missing = self.label_missing = 0
        #: the rows of the chunks stored sparse (CSR)
        self.stored_sparse = 0
        self.weighted = False
        self.weight_total = ExactSums.zeros(1)
        attribute = schema.attributes[class_index] if class_index is not None else None
        n_labels = len(attribute.labels) if attribute is not None and attribute.kind == NOMINAL else 0
        self.label_rows = np.zeros(n_labels, dtype=np.int64)
        self.label_weight_sums = ExactSums.zeros(n_labels)
        self.scored = scored
        attributes = [schema.attributes[i] for i in scored.tolist()] if scored is not None else []
        #: per scored attribute, its number of nominal labels (0 for a numeric one)
        self.label_counts = np.array([len(a.labels) if a.kind == NOMINAL else 0 for a in attributes], dtype=np.int64)
        self.numeric = np.asarray(scored)[self.label_counts == 0] if presence and scored is not None else None
        self.counts = ValueCounts.empty(len(scored), n_labels) if scored is not None else None

    def add(self, chunk: Chunk) -> None:
        """Count the rows of ``chunk``."""
        n = chunk.n_rows
        self.rows += n
        self.stored_sparse += n if chunk.is_sparse else 0
        self.weighted = self.weighted or chunk.weights is not None
        weights = chunk.weights if chunk.weights is not None else np.ones(n)
        self.weight_total = self.weight_total.plus(ExactSums.of_weights(weights).total())
        if chunk.is_sparse:
            arrays = chunk.csr()
            features = arrays.data[self.is_feature[arrays.indices]]
        else:
            features = chunk.values[:, self.is_feature]
        self.nonzero += int(np.count_nonzero(features))
        self.missing += int(np.isnan(features).sum())
        self.missing += sum(int(np.isnan(chunk.column(column)).sum()) for column in self.text_columns)
        self.label_missing += sum(int(np.isnan(chunk.column(column)).sum()) for column in self.label_positions)
        if self.class_index is not None:
            self._add_classes(chunk.column(self.class_index), weights)
        if self.counts is not None:
            assert self.class_index is not None and self.scored is not None  # counts are kept for a metric only
            scored_chunk = _presence_chunk(chunk, self.numeric) if self.numeric is not None else chunk
            self.counts = self.counts.add(scored_chunk, self.scored, self.class_index)

    def _add_classes(self, codes: np.ndarray, weights: np.ndarray) -> None:
        known = ~np.isnan(codes)
        self.class_missing += int(len(codes) - known.sum())
        if len(self.label_rows):
            labels = codes[known].astype(np.int64)
            self.label_rows += np.bincount(labels, minlength=len(self.label_rows))
            self.label_weight_sums = self.label_weight_sums.plus(
                ExactSums.by_group(labels, weights[known], len(self.label_rows))
            )


def _presence_chunk(chunk: Chunk, numeric: np.ndarray) -> Chunk:
    """The chunk with the ``numeric`` columns' values turned into 1 (non-zero), 0 or missing, as presence
    scores need, so that their statistics stay small."""
    if chunk.is_sparse:
        arrays = chunk.csr()
        is_numeric = np.zeros(arrays.shape[1], dtype=bool)
        is_numeric[numeric] = True
        change = is_numeric[arrays.indices] & ~np.isnan(arrays.data)
        data = np.where(change, (arrays.data != 0).astype(np.float64), arrays.data)
        return Chunk.from_csr(data, arrays.indices, arrays.indptr, arrays.shape, chunk.text, chunk.weights)
    values = chunk.values.copy()
    block = values[:, numeric]
    values[:, numeric] = np.where(np.isnan(block), np.nan, (block != 0).astype(np.float64))
    return Chunk(values, chunk.text, chunk.weights)


def _number(value: float):
    value = float(value)
    return int(value) if value.is_integer() else value


def summarize(
    source,
    name: str | None = None,
    *,
    class_spec: str | None = "last",
    metric: Metric | None = None,
    positive: str | None = None,
    presence: bool = False,
    top: int = DEFAULT_TOP,
    combine: str | None = None,
    numeric_only: bool = False,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
    input_format: str | None = None,
    options: FormatOptions | None = None,
) -> dict:
    """The summary of the file or binary stream ``source`` (called ``name``), read once, as a JSON-ready
    dict; the keywords are ``filterkit info``'s options: ``input_format`` is ``--from`` (None: by the
    file's name; ARFF for a stream) and ``options`` the formats' reading options (default: ``class_spec``'s)."""
    path = os.fspath(source) if isinstance(source, (str, os.PathLike)) else None
    format_name = format_of(path, input_format)
    options = FormatOptions(class_spec) if options is None else options
    with contextlib.ExitStack() as stack:
        if format_name == ARFF:  # each ARFF row is written sparse or dense in its text: counted there
            counter, name = _counted_arff(stack, source, name)
            layout, chunks = scanned_format(format_name).streamed(cast(IO[bytes], counter), name, chunk_rows)
            schema = layout.schema
        else:
            scanned = stack.enter_context(_scanned_source(source, name, format_name, chunk_rows, options))
            counter, schema, chunks, name = None, scanned.schema, scanned.chunks(), scanned.name
        label_positions = meka_label_positions(schema)  # multi-label: the labels take the class's place
        labels = LabelTally(schema, label_positions) if label_positions else None
        if labels is not None:
            _refuse_class_options(class_spec, metric, name)
        try:
            class_index = None if labels else resolve_class(schema, class_spec)
        except FilterkitError as error:
            raise error.located(name) from None
        class_attribute = schema.attributes[class_index] if class_index is not None else None
        scored = None
        if metric is not None:
            hint = class_hint(schema, class_index)
            combine = _checked_combine(metric, class_attribute, positive, combine, name, hint)
            scored = scored_features(schema, class_index, numeric_only)
        tally = _Tally(schema, class_index, scored, presence, label_positions)
        for chunk in chunks:
            tally.add(chunk)
            if labels is not None:
                labels.add(chunk)
    document = _counts_summary(name, tally, tally.stored_sparse if counter is None else counter.sparse_rows)
    if labels is not None:
        document["labels"] = labels.summary()
    if class_attribute is not None:
        document["class"] = _class_summary(tally, class_attribute)
    if metric is not None:
        assert class_attribute is not None and combine is not None  # checked by _checked_combine
        document["ranking"] = _ranking(tally, class_attribute, metric, positive, top, combine)
    return document


def _counted_arff(stack: contextlib.ExitStack, source, name: str | None):
    """The ARFF file or stream ``source`` gunzipped, read through a :class:`_SparseRowCounter`, and its name;
    closed with ``stack``."""
    if isinstance(source, (str, os.PathLike)):
        if os.path.isdir(source):
            raise folder_given(os.fspath(source), "arff")
        source = stack.enter_context(open(source, "rb"))
    stream, name = open_source(source, name)
    if isinstance(stream, gzip.GzipFile):
        stack.callback(stream.close)
    return _SparseRowCounter(stream), name


def _scanned_source(source, name: str | None, format_name: str, chunk_rows: int, options: FormatOptions):
    """A file (``-``: standard input) of a format other than ARFF as a chain's run opens it, or a binary
    stream of one, scanned for its header (:class:`filterkit.sources.ScannedSource`)."""
    from filterkit import running
    from filterkit.sources import ScannedSource

    if isinstance(source, (str, os.PathLike)):
        return running.open_source(os.fspath(source), chunk_rows, False, format_name, options)
    if registered(format_name).reads_folder:
        raise FilterkitError(f"{format_name} reads a folder, not a stream")
    stream_name = name or str(getattr(source, "name", "<stream>"))
    return contextlib.closing(ScannedSource.of_stream(source, stream_name, format_name, chunk_rows, options))


def _refuse_class_options(class_spec: str | None, metric: Metric | None, name: str) -> None:
    """FilterkitError for ``-c`` (other than the default) or ``--metric`` on label sets, which have no class."""
    refuse_class_choice(class_spec, name)
    if metric is not None:
        raise FilterkitError(
            f"--metric ranks features against one class, and the data {LABELS_TAKE_THE_CLASS}: rank them in a chain "
            f"(select --metric {metric.name} combines each label's scores)",
            name,
        )


def _checked_combine(
    metric: Metric, class_attribute: Attribute | None, positive: str | None, combine: str | None, name: str, hint: str
) -> str:
    """The combination ranking uses, once the class and ``positive`` are known to fit ``metric``; ``hint``
    (:func:`~filterkit.runner.class_hint`) says which ``-c`` names a nominal attribute."""
    if class_attribute is None or class_attribute.kind != NOMINAL:
        what = "none" if class_attribute is None else f"'{class_attribute.name}' is {class_attribute.kind}"
        raise FilterkitError(f"--metric needs a nominal class attribute (-c){hint or '; ' + what}", name)
    check_positive(positive, class_attribute, name)
    if combine is not None and positive is not None and len(class_attribute.labels) > 2:
        raise FilterkitError(
            f"--combine {combine} scores every class of '{class_attribute.name}' and --positive {positive} one "
            "against the rest: give one or the other",
            name,
        )
    return resolved_combine(metric, combine, class_attribute, positive)


def _counts_summary(name: str, tally: _Tally, sparse: int) -> dict:
    """The summary's figures that need no class."""
    schema = tally.schema
    kinds = [a.kind for a in schema.attributes]
    features = int(tally.is_feature.sum())
    cells = tally.rows * features
    forms = {0: "dense", tally.rows: "sparse"}
    return {
        "input": name,
        "relation": schema.relation,
        "rows": tally.rows,
        "row_format": forms.get(sparse, "mixed") if tally.rows else None,
        "sparse_rows": sparse,
        "dense_rows": tally.rows - sparse,
        "attributes": {"total": len(kinds), **{kind: kinds.count(kind) for kind in KINDS}},
        "non_class_attributes": len(kinds) - (tally.class_index is not None) - len(tally.label_positions),
        "features": features,
        "density": tally.nonzero / cells if cells else None,
        "nonzero_values": tally.nonzero,
        "values": cells,
        "missing_values": tally.missing,
        **({"missing_label_values": tally.label_missing} if tally.label_positions else {}),
        "class": None,
        "weights": {"present": tally.weighted, "sum": float(tally.weight_total.to_float()[0])},
    }


def _class_summary(tally: _Tally, attribute: Attribute) -> dict:
    """The class attribute and, when nominal, each label's rows (and weight) and share."""
    labels = None
    if attribute.kind == NOMINAL:
        weights = tally.label_weight_sums.to_float()
        labels = [
            {
                "label": label,
                "count": int(count),
                "percent": 100.0 * count / tally.rows if tally.rows else 0.0,
                **({"weight": float(weight)} if tally.weighted else {}),
            }
            for label, count, weight in zip(attribute.labels, tally.label_rows, weights)
        ]
    assert tally.class_index is not None  # a class attribute has a position
    return {
        "name": attribute.name,
        "index": tally.class_index + 1,
        "kind": attribute.kind,
        "labels": labels,
        "missing": tally.class_missing,
        "missing_percent": 100.0 * tally.class_missing / tally.rows if tally.rows else 0.0,
    }


def _ranking(tally: _Tally, attribute: Attribute, metric: Metric, positive: str | None, top: int, combine: str) -> dict:
    """The ``top`` features by ``metric``, with the class achieving the maximum and, for numeric features,
    its 2×2 presence counts."""
    counts, scored, schema, labels = tally.counts, tally.scored, tally.schema, tally.label_counts
    assert counts is not None and scored is not None  # counted for a metric
    targets = target_classes(attribute, counts.class_totals, positive) if counts.class_totals.sum() else []
    if combine == JOINT and not metric.class_free:
        targets = [int(c) for c in np.flatnonzero(counts.class_totals > 0)]
    scores, order, best_class = _ranked(counts, metric, targets, tally.presence, top, combine, labels)
    tables = {}
    if best_class is not None:
        tables = {target: counts.presence_table(target) for target in sorted(set(best_class[order].tolist()))}
    features = []
    for rank, feature in enumerate(order.tolist(), 1):
        target = None if best_class is None else int(best_class[feature])
        table = tables[target] if target is not None and not labels[feature] else (None,) * 4
        features.append(
            {
                "rank": rank,
                "name": schema.attributes[scored[feature]].name,
                "index": int(scored[feature]) + 1,
                "kind": schema.attributes[scored[feature]].kind,
                "score": float(scores[feature]),
                "class": None if target is None else attribute.labels[target],
                **{
                    key: None if c is None else _number(c[feature]) for key, c in zip(("tp", "fp", "pos", "neg"), table)
                },
            }
        )
    return {
        "metric": metric.name,
        "mode": "presence" if tally.presence else "threshold",
        "scored_features": int(len(scored)),
        "nominal_features": int(np.count_nonzero(labels)),
        "targets": [attribute.labels[t] for t in targets],
        "combine": combine if combine == JOINT or len(targets) > 1 else None,
        "top": top,
        "features": features,
    }


def _ranked(counts: ValueCounts, metric: Metric, targets: list[int], presence: bool, top: int, combine: str, labels):
    """Every feature's score, the ``top`` best (:func:`filterkit.metrics.ranking_order`) and the class
    achieving each feature's maximum, or minimum with ``min`` (None for a mean)."""
    if counts.n_features == 0 or not targets:
        return np.zeros(0), np.zeros(0, dtype=np.int64), None
    if combine == JOINT:
        scores = feature_scores(counts, metric, targets, presence, JOINT, None, labels)
        best_class = np.full(counts.n_features, targets[0]) if metric.class_free else None
    else:
        best_class = np.full(counts.n_features, targets[0])
        per_class = class_scores(counts, metric, targets, presence, None, labels)
        scores = combined(_noting_best_class(per_class, targets, combine, best_class), combine)
        if combine == "mean" and len(targets) > 1:
            best_class = None
    return scores, ranking_order(scores, combine)[:top], best_class


def _noting_best_class(per_class: Iterator[np.ndarray], targets: list[int], combine: str, best_class: np.ndarray):
    """Each class's scores passed on, with ``best_class`` set to the class of each feature's maximum
    (minimum with ``min``), the first on a tie as ``argmax`` takes it; one best score per feature held."""
    better = np.less if combine == "min" else np.greater
    best = None
    for target, scores in zip(targets, per_class):
        if best is None:
            best = scores.copy()
        improved = better(scores, best)
        best_class[improved], best[improved] = target, scores[improved]
        yield scores


def scored_features(schema: Schema, class_index: int | None, numeric_only: bool) -> np.ndarray:
    """Positions of the attributes ``--metric`` ranks: numeric non-class ones, and nominal unless ``numeric_only``."""
    kinds = (NUMERIC,) if numeric_only else (NUMERIC, NOMINAL)
    return np.array(
        [i for i, a in enumerate(schema.attributes) if a.kind in kinds and i != class_index], dtype=np.int64
    )


def _missing(document: dict) -> str:
    """The missing values: of the attributes besides the class, or besides the labels and of the labels."""
    if "missing_label_values" not in document:
        return f"{document['missing_values']} non-class values"
    return (
        f"{document['missing_values']} values besides the labels, {document['missing_label_values']} label values "
        "(a missing label counts as not held)"
    )


def as_text(document: dict) -> str:
    """The summary for people, its texts escaped (:func:`filterkit.documents.for_terminal`)."""
    document = for_terminal(document)
    rows, attributes, weights = document["rows"], document["attributes"], document["weights"]
    form = {
        "sparse": "sparse rows",
        "dense": "dense rows",
        None: "no data rows",
        "mixed": f"mixed: {document['sparse_rows']} sparse, {document['dense_rows']} dense",
    }[document["row_format"]]
    by_kind = ", ".join(f"{attributes[kind]} {kind}" for kind in KINDS if attributes[kind])
    left_out = document["non_class_attributes"] - document["features"]
    noun = "features" if left_out or "missing_label_values" in document else "non-class attributes"
    aside = f"; {left_out} string or relational attribute{'s' * (left_out > 1)} left out" if left_out else ""
    density = (
        f"n/a (no rows or no {noun}{aside})"
        if document["density"] is None
        else f"{document['density']:.4g} ({document['nonzero_values']} non-zero of "
        f"{rows} rows × {document['features']} {noun}{aside})"
    )
    lines = [
        f"relation:    {document['relation']}",
        f"rows:        {rows} ({form})",
        f"attributes:  {attributes['total']}" + (f" ({by_kind})" if by_kind else ""),
        f"density:     {density}",
        f"missing:     {_missing(document)}",
        f"weights:     sum {weights['sum']:.6g} over {rows} rows"
        if weights["present"]
        else "weights:     none (every row weighs 1)",
        *_class_lines(document["class"]),
        *label_summary_lines(document.get("labels")),
        *_ranking_lines(document.get("ranking")),
    ]
    return "\n".join(lines) + "\n"


def _class_lines(target: dict | None) -> list[str]:
    """The class attribute and its table of labels."""
    if target is None:
        return ["class:       none"]
    if target["labels"] is None:
        return [
            f"class:       '{target['name']}' (attribute {target['index']}, {target['kind']})",
            f"  not nominal: no label distribution; {target['missing']} missing",
        ]
    labels = target["labels"]
    width = max([len(entry["label"]) for entry in labels] + [len("(missing)")])
    return [
        f"class:       '{target['name']}' (attribute {target['index']}, {target['kind']}, {len(labels)} labels)",
        *(
            f"  {e['label']:<{width}}  {e['count']:>8}  {e['percent']:6.2f}%"
            + (f"  weight {e['weight']:.6g}" if "weight" in e else "")
            for e in labels
        ),
        f"  {'(missing)':<{width}}  {target['missing']:>8}  {target['missing_percent']:6.2f}%",
    ]


def _ranking_lines(ranking: dict | None) -> list[str]:
    """A blank line, the ranking's heading and its table of features."""
    if ranking is None:
        return []
    classes = len(ranking["targets"])
    if ranking["combine"] == JOINT:
        weka = " (Weka's scores and Ranker order)" if ranking["metric"] in WEKA_JOINT else ""  # igm's is TF-IGM's
        against = f"joint over {classes} classes{weka}"
    elif ranking["combine"]:
        against = f"{ranking['combine']} over one-vs-rest of {classes} classes"
    else:
        against = f"'{ranking['targets'][0]}' vs rest" if classes else "no class has rows"
    scored = f"{ranking['scored_features']} " + (
        f"features ({ranking['nominal_features']} nominal)" if ranking["nominal_features"] else "numeric features"
    )
    features = ranking["features"]
    heading = (
        f"top {len(features)} of {scored} by {ranking['metric']} "
        f"({'presence' if ranking['mode'] == 'presence' else 'best threshold'}), {against}"
        + ("; tp/fp: presence counts" if any(e["tp"] is not None for e in features) else "")
    )
    if not features:
        return ["", heading]
    table = [("rank", "feature", "score", "class", "tp", "fp", "pos", "neg")]
    table += [
        (
            str(e["rank"]),
            e["name"],
            f"{e['score']:.6g}",
            e["class"] if e["class"] is not None else "-",
            *(_count_text(e[key]) for key in ("tp", "fp", "pos", "neg")),
        )
        for e in features
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    aligned = [
        "  ".join(cell.ljust(w) if i in (1, 3) else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths)))
        for row in table
    ]
    return ["", heading, *("  " + line.rstrip() for line in aligned)]


def _count_text(count) -> str:
    if count is None:
        return "-"
    return f"{count:g}" if isinstance(count, float) else str(count)
