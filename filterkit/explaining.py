"""Why a trained model decided as it did (``filterkit explain``, :meth:`TrainedModel.explain`): per row, the
features that moved each decision most, each traced back along the chain to the count it started from
(:class:`Tracer`), and the explanation as lines for a terminal (:func:`explanation_text`)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import scipy.sparse as sp

from filterkit.documents import for_terminal
from filterkit.schema import STRING, Chunk, Schema


def listed_words(names: list[str], tracer: Tracer, row: int, present: tuple, top: int) -> dict:
    """The ``top`` features of one row's decision by the size of their contribution (0: every one), traced,
    and the count and sum of the others; ``present``: the row's columns, values and contributions."""
    columns, values, contributions = present
    order = sorted(range(len(columns)), key=lambda j: (-abs(contributions[j]), names[columns[j]]))
    listed = order if top == 0 else order[:top]
    words = [tracer.word(row, names[columns[j]], float(values[j]), float(contributions[j])) for j in listed]
    others = [float(contributions[j]) for j in order[len(listed) :]]
    return {"words": words, "other_words": len(others), "other_contribution": math.fsum(others)}


class Tracer:
    """A feature's value after every stage, found by its name in each stage's output: a numeric attribute's
    value, or for a nominal label's column (``one_hot``: its attribute and label) 1 where the row holds it;
    ``counts`` holds, per step, the counts behind a stage's output (:meth:`Explainable.explained_counts`) or None."""

    def __init__(
        self,
        outputs: list[Chunk],
        counts: list[Chunk | None],
        schemas: list[tuple[Schema, dict[str, int]]],
        one_hot: dict,
    ):
        self.outputs, self.one_hot = outputs, one_hot
        self.schemas, self.positions = [schema for schema, _ in schemas], [positions for _, positions in schemas]
        self.csr = [sp.csr_matrix(chunk.values) for chunk in outputs]
        self.counts = [None if chunk is None else sp.csr_matrix(chunk.values) for chunk in counts]

    def value(self, step: int, row: int, name: str, matrices: list | None = None) -> float | None:
        attribute_name, label = self.one_hot.get(name, (name, None))
        position = self.positions[step].get(attribute_name)
        if position is None or self.schemas[step].attributes[position].kind == STRING:
            return None  # absent here, or a text a later stage cuts into words, one of which may share its name
        value = float((self.csr if matrices is None else matrices)[step][row, position])
        if math.isnan(value):
            return None
        if label is None:
            return value
        labels = self.schemas[step].attributes[position].labels
        return float(label in labels and value == labels.index(label))

    def word(self, row: int, name: str, value: float, contribution: float) -> dict:
        """One feature of ``row``: its first value along the chain, its value after each stage, its own.  Before
        the stage that makes a copy ``NAME@SUFFIX`` of a feature (``shape``'s one-vs-rest copy of a class, ``auto``'s
        shaped copy), its values are those of the feature ``NAME`` it copies."""
        steps = [self.value(step, row, name) for step in range(len(self.outputs))]
        attribute_name = self.one_hot.get(name, (name, None))[0]
        made = next((step for step, positions in enumerate(self.positions) if attribute_name in positions), None)
        if made and "@" in name:
            steps[:made] = [self.value(step, row, self._copied(step, name)) for step in range(made)]
        step = next((step for step, found in enumerate(steps) if found is not None), None)
        first = value if step is None else steps[step]
        if step is not None and self.counts[step] is not None:
            first = self.value(step, row, name, self.counts)
        return {"word": name, "count": first, "steps": steps[1:], "value": value, "contribution": contribution}

    def _copied(self, step: int, name: str) -> str:
        """The feature at ``step`` that the copy ``name`` (``NAME@SUFFIX``, a copy of a copy too: ``auto``'s shaped
        copy of ``shape``'s per-class one) was made from: the longest ``NAME`` before an ``@`` found there (a word or
        a class label may hold ``@`` itself); ``name`` where none is."""
        source = name
        while "@" in source:
            source = source.rpartition("@")[0]
            if self.one_hot.get(source, (source, None))[0] in self.positions[step]:
                return source
        return name


def explanation_text(explained: dict, stage_names: Sequence[str]) -> str:
    """One explained document (:meth:`TrainedModel.explain_chunk`) as lines for a terminal, its words and labels
    escaped (:func:`filterkit.documents.for_terminal`)."""
    explained = for_terminal(explained)
    if "labels" in explained:
        return _label_set_text(explained, explained["classes"], stage_names)
    classes = explained.get("classes") or [explained]
    chosen = next((c for c in classes if c.get("class", explained["label"]) == explained["label"]), classes[0])
    heading = f"row {explained['row']}: {explained['label']} (decision {chosen['decision']:.6g}"
    if "probability" in chosen:
        heading += f", probability {chosen['probability']:.4g}"
    for cut in ("threshold", "offset"):
        if cut in chosen:
            heading += f", {cut} {chosen[cut]:.4g}"
    lines = [heading + ")"]
    if explained.get("classes"):
        lines.append(f"  why {chosen['class']}:")
    return "\n".join(lines + _word_lines(chosen, stage_names))


def _label_set_text(explained: dict, classes: list[dict], stage_names: Sequence[str]) -> str:
    """A multi-label row's explanation: its labels, then why each was predicted (without one, why the label
    of the largest decision was not)."""
    chosen = [c for c in classes if c["class"] in explained["labels"]]
    if not chosen and classes:
        chosen = [max(classes, key=lambda c: c["decision"])]
    lines = [f"row {explained['row']}: labels {', '.join(explained['labels']) or '(none)'}"]
    for entry in chosen:
        held = "why" if entry["class"] in explained["labels"] else "why not"
        probability = f", probability {entry['probability']:.4g}" if "probability" in entry else ""
        threshold = f", threshold {entry['threshold']:.4g}" if "threshold" in entry else ""
        lines.append(f"  {held} {entry['class']} (decision {entry['decision']:.6g}{probability}{threshold}):")
        lines.extend(_word_lines(entry, stage_names))
    return "\n".join(lines)


def _word_lines(chosen: dict, stage_names: Sequence[str]) -> list[str]:
    """The lines of one explained decision: each listed word's contribution, count and values, the rest, the
    intercept."""
    lines = []
    along = " → ".join(stage_names)
    lines.append(f"  {'contribution':>12}  {'word':<24} {'count':>8}  value after {along}")
    for word in chosen["words"]:
        steps = " → ".join("·" if value is None else f"{value:.4g}" for value in word["steps"])
        lines.append(f"  {word['contribution']:>+12.5f}  {word['word']:<24} {word['count']:>8.4g}  {steps}")
    if chosen["other_words"]:
        lines.append(f"  {chosen['other_contribution']:>+12.5f}  ({chosen['other_words']} other words)")
    lines.append(f"  {chosen['intercept']:>+12.5f}  (intercept)")
    return lines
