"""An evaluation's result document (built by :func:`filterkit.evaluation.result_document`) rendered as a
plain-text table, as a self-contained HTML page with its plots, and as a PNG of the learning curves
(as JSON by :func:`filterkit.documents.as_json`); and its predictions as CSV.  A document of multi-label
data (its settings name the ``labels``) has a table and page of its own.

Each renderer takes the document (or one read back from ``evaluate --json``).  The plots need matplotlib
(``pip install 'filterkit-arff[plot]'``); every text in them is drawn literally, never as math or TeX.
"""

from __future__ import annotations

import collections
import csv
import html
import io
import math
import re
import statistics
from dataclasses import dataclass, field

from filterkit.documents import as_json, for_terminal
from filterkit.errors import FilterkitError
from filterkit.labels import LABEL_SEPARATOR, RENAME_LABEL, unjoinable_label

MULTICLASS_LABELS = {"accuracy": "acc", "macro_auc": "macroAUC", "macro_f1": "macroF1", "micro_f1": "microF1"}

LABELS = {
    "accuracy": "acc",
    "auc": "AUC",
    "f1": "F1",
    "precision": "prec",
    "recall": "recall",
    "specificity": "spec",
    "precision_at_20": "P@20",
}

#: matplotlib settings under which a chain's text ('^x\d$') is drawn as typed.
LITERAL_TEXT = {"text.usetex": False, "text.parse_math": False}

#: matplotlib settings under which the same figure gives the same SVG, its text as text.
SVG_SETTINGS = {"svg.hashsalt": "filterkit", "svg.fonttype": "none"}


@dataclass
class Evaluation:
    """What :func:`filterkit.evaluation.evaluate` returns, whatever the task: the document ``evaluate --json``
    prints and its renderings; with a test file, also per (chain, task, fraction) its test rows (from 1),
    truth, scores and decisions (of multi-label data per chain its test rows, truth and predicted label sets,
    rows × labels)."""

    document: dict
    predictions: list[dict] = field(default_factory=list)

    def table(self, per_task: bool = False) -> str:
        """The text table ``evaluate`` prints (``per_task``: also a row per task)."""
        return table(self.document, per_task)

    def json(self) -> str:
        """The JSON text ``evaluate --json`` prints."""
        return as_json(self.document)

    def html(self, per_task: bool = False) -> str:
        """The self-contained HTML page ``evaluate --report`` writes (needs matplotlib)."""
        return html_page(self.document, per_task)

    def predictions_csv(self) -> str:
        """The scored test rows as CSV (``evaluate --predictions``): chain, task, train, row, truth, score,
        decision; of multi-label data chain, row and the true and predicted label sets."""
        labels = self.document["settings"].get("labels")
        if labels is not None:
            return label_set_predictions_csv(labels, self.predictions)
        return predictions_csv(self.predictions)


def _label_cut(settings: dict) -> str:
    """What decides each label: ``--threshold``, and under its ``decision`` the classifier's own cut rule where one
    is given (``--svm-threshold micro-macro``), which the header had left out."""
    rule = (settings.get("classifier_params") or {}).get("threshold", "fixed")
    given = settings["threshold"] == "decision" and rule != "fixed"
    return settings["threshold"] + (f" ({settings['classifier']}'s cut: {rule})" if given else "")


def fraction_text(value: float) -> str:
    """A training fraction (or a curve's value) as ``%g`` writes it, or every digit where ``%g`` would round it:
    --train-fraction 0.1234561,0.1234562 are two rows, not two of "0.123456"."""
    short = f"{value:g}"
    return short if float(short) == value else repr(float(value))


def fraction_width(rows) -> int:
    """The width of a table's ``train`` column: its head's, or the widest of ``rows``' fractions (a long one had
    pushed its row's measures right of their heads)."""
    return max(5, *(len(fraction_text(row["train_fraction"])) for row in rows))


def table(document: dict, per_task: bool = False) -> str:
    """The plain-text table ``evaluate`` prints: one row per chain (and fraction), macro-averaged over tasks
    (``per_task``: also one row per task); then, when the document has them, the spread over repeats, the
    break-even and micro-averages, and the paired tests; its texts escaped
    (:func:`filterkit.documents.for_terminal`)."""
    if "labels" in document["settings"]:
        return _label_set_table(document)
    document = for_terminal(document)
    if document["settings"].get("multiclass"):
        return _multiclass_table(document)
    rows, names, note = _rows(document, per_task)
    width = max(len("chain"), *(len(name) for name in names))
    notes: list[str] = []
    lines = [_header(document["settings"], note), *_measure_lines(document, names, rows, width, LABELS, 6, notes)]
    if "breakeven" in rows[-1]:
        lines += _breakeven_lines(document, names, rows, width, notes)
    lines += _cost_lines(document)
    for comparison in document.get("paired", []):
        lines += _paired_lines(comparison, multiclass=False)
    return "\n".join(lines + _footnote(notes)) + "\n"


def html_page(document: dict, per_task: bool = False) -> str:
    """The self-contained HTML report: the settings in words, the results and paired tests as tables and
    the figures as inline SVG, each dot naming its task and values on hover; of multi-label data
    (:func:`_label_set_page`) the table and per chain after the first each label's F1 against the first's."""
    if "labels" in document["settings"]:
        return _label_set_page(document)
    matplotlib = require_matplotlib("--report")
    tips: dict[str, str] = {}
    with matplotlib.rc_context({**LITERAL_TEXT, **SVG_SETTINGS}):
        figures = "".join(_svg_figure(figure, title, tips) for figure, title in _report_figures(document, tips))
    several = len({r["task"] for r in document.get("results", [document])}) > 1
    title = html.escape(f"filterkit evaluate: {document['settings'].get('input', '')}")
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        "<style>body{font-family:sans-serif;margin:2em;max-width:80em}table{border-collapse:collapse;margin:1em 0}"
        "td,th{border:1px solid #ccc;padding:0.2em 0.5em}td{text-align:right}th{text-align:left}"
        "caption{text-align:left;font-style:italic}figure{display:inline-block;margin:1em}"
        f"svg{{max-width:100%;height:auto}}</style></head><body><h1>{title}</h1>"
        f"<h2>Settings</h2>{_settings_html(document)}<h2>Results</h2>{_results_html(document, per_task)}"
        f"{'<h2>Figures</h2>' + figures if figures else ''}{_paired_html(document.get('paired', []), several)}"
        "</body></html>\n"
    )


def learning_curves_png(document: dict) -> bytes:
    """A PNG of AUC and F1 against the training fraction, one line per chain (``evaluate --plot``)."""
    rows = document.get("macro", [document])
    with require_matplotlib("--plot").rc_context(LITERAL_TEXT):
        figure = _curves_figure(_learning_curves(rows), "fraction of the training fold")
    buffer = io.BytesIO()
    figure.tight_layout()
    figure.savefig(buffer, format="png", dpi=100, metadata={"Software": None})  # the same bytes from any version
    return buffer.getvalue()


def require_matplotlib(option: str):
    """matplotlib (its figures are drawn without pyplot, so a notebook's backend and figures stay as they
    were); FilterkitError saying how to install it if missing."""
    try:
        import matplotlib.figure
    except ImportError:
        raise FilterkitError(f"{option} needs matplotlib: pip install 'filterkit-arff[plot]'") from None
    return matplotlib


def _header(settings: dict, note: str) -> str:
    """The first line of a table: the protocol, the classifier, the rows and ``note``."""
    repeats = settings.get("repeats", 1)
    protocol = (
        f"{settings['folds']}-fold CV{f' × {repeats} repeats' if repeats > 1 else ''}"
        if "test" not in settings
        else f"scored on {settings['test']} ({settings['test_rows']} rows)"
    )
    rows = f"{settings['rows']} rows" if "test" not in settings else f"trained on {settings['rows']} rows"
    return f"{protocol}, seed {settings['seed']}, classifier {settings['classifier']}, {rows}; {note}"


def _rows(document: dict, per_task: bool) -> tuple[list[dict], list[str], str]:
    """A table's rows (each chain's macro averages, with ``per_task`` each result's too), their names and
    the note on the tasks."""
    if "results" not in document:
        return [document], [document["chain"]], f"task: {document['task']} vs rest"
    tasks = sorted({r["task"] for r in document["results"]})
    note = (
        f"task: {tasks[0]} vs rest" if len(tasks) == 1 else f"{len(tasks)} task(s), macro-averaged: {', '.join(tasks)}"
    )
    rows = document["results"] + document["macro"] if per_task else document["macro"]
    return rows, [r["chain"] + (f" [{r['task']}]" if per_task and "task" in r else "") for r in rows], note


def _paired_line(label: str, width: int, paired: dict, over: str | None, held_out: bool) -> str:
    """One measure's line of a paired comparison: the difference, the Wilcoxon tally over ``over``
    (tasks or classes; none: no such test), and the tally over folds unless scored on a test file."""
    line = f"  {label:>{width}} {paired['difference']:>+8.4f}"
    if over is not None:
        line += f"  {_wtl(paired[over])} p {_p_cell(paired[over]['wilcoxon_p'])}"
    if not held_out:
        line += f"  {_wtl(paired['over_folds'])} p {_p_cell(paired['over_folds']['corrected_t']['p'])}"
    return line


def _paired_lines(comparison: dict, multiclass: bool) -> list[str]:
    """The text table's lines of one paired comparison: its title, a line per measure (with ``--multiclass``
    overall, then per class) and, scored on a test file, McNemar's test per task instead of the tests over folds."""
    held_out = "mcnemar" in comparison
    folds = "" if held_out else "; folds won/tied/lost, corrected resampled t-test p"
    if multiclass:
        lines = [f"{_comparison_title(comparison)}: difference{folds}"]
        for measure, paired in comparison["measures"].items():
            lines.append(_paired_line(MULTICLASS_LABELS[measure], 8, paired, None, held_out))
        per_class_folds = "" if held_out else "; folds won/tied/lost, t-test p"
        lines.append(f"  per class: difference; classes won/tied/lost, Wilcoxon p{per_class_folds}")
        for measure, paired in comparison["per_class"].items():
            lines.append(_paired_line(LABELS[measure], 8, paired, "over_classes", held_out))
    else:
        lines = [f"{_comparison_title(comparison)}: difference; tasks won/tied/lost, Wilcoxon p{folds}"]
        for measure in ("f1", "auc", "breakeven"):
            lines.append(
                _paired_line(LABELS.get(measure, "BEP"), 6, comparison["measures"][measure], "over_tasks", held_out)
            )
    return lines + [
        f"  McNemar, task {task}: {test['only_chain_right']} row(s) right only under the chain, "
        f"{test['only_baseline_right']} only under the baseline, p {_p_cell(test['p']).strip()}"
        for task, test in comparison.get("mcnemar", {}).items()
    ]


def predictions_csv(predictions: list[dict]) -> str:
    """The scored test rows as CSV: chain, task, train fraction, row, truth, score, decision.  For a task
    truth and decision are 1 (the positive class) or 0; with ``--multiclass`` they are labels and the
    score is that of the decided class."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["chain", "task", "train", "row", "truth", "score", "decision"])
    for entry in predictions:
        labels = list(entry.get("per_class", ()))
        for row, truth, score, decision in zip(entry["rows"], entry["truth"], entry["scores"], entry["decisions"]):
            shown = (labels[truth], score[decision], labels[decision]) if labels else (int(truth), score, int(decision))
            fields = [entry["chain"], entry["task"], fraction_text(entry["train_fraction"]), int(row)]
            writer.writerow([*fields, shown[0], repr(float(shown[1])), shown[2]])
    return buffer.getvalue()


def label_set_predictions_csv(labels: list[str], predictions: list[dict]) -> str:
    """Each test row's label sets as CSV: chain, row, truth, predicted (the names of ``labels`` joined by ``|``),
    from ``predictions`` (per chain its rows, truth and predicted, rows × labels)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["chain", "row", "truth", "predicted"])
    why = unjoinable_label(labels)
    if why is not None:
        raise FilterkitError(f"--predictions: {why}: {RENAME_LABEL}")
    for entry in predictions:
        for row, truth, predicted in zip(entry["rows"], entry["truth"], entry["predicted"]):
            sets = (
                LABEL_SEPARATOR.join(label for label, on in zip(labels, chosen) if on) for chosen in (truth, predicted)
            )
            writer.writerow([entry["chain"], int(row), *sets])
    return buffer.getvalue()


def _short_means(document: dict, row: dict, measure: str) -> list[str]:
    """Where ``row``'s mean of ``measure`` leaves folds out (a fold without the measure, e.g. an AUC-less
    test fold of one class): ``task T over k of n folds`` for each of its tasks (a macro row's: every task), and
    where a ``--multiclass`` macro mean leaves a class out, having none of its value (no AUC without a test row)."""
    results = [row] if "per_fold" in row else document.get("results", [])
    short = []
    for result in results:
        if result["chain"] != row["chain"] or result["train_fraction"] != row["train_fraction"]:
            continue
        values = result["per_fold"].get(measure, [])
        defined = sum(value is not None for value in values)
        if defined < len(values):
            short.append(f"{result.get('scope', 'task')} {result['task']} over {defined} of {len(values)} folds")
        part = measure.removeprefix("macro_")
        missing = [
            label for label, entry in result.get("per_class", {}).items() if _cell(entry.get(part, 0)).strip() == "—"
        ]
        short += [f"class {label} left out (no {part.upper()} of it)" for label in missing if part != measure]
    return short


def _marked(document: dict, row: dict, measure: str, label: str, notes: list[str]) -> str:
    """``row``'s ``measure`` as a cell, marked ``*`` (and noted) when its mean leaves folds out."""
    short = _short_means(document, row, measure) if row.get(measure) is not None else []
    if not short or math.isnan(row[measure]):
        return _cell(row.get(measure))
    notes.append(f"  {label} of '{row['chain']}' (train {fraction_text(row['train_fraction'])}): {'; '.join(short)}")
    return _cell(row[measure]).strip() + "*"


def _footnote(notes: list[str]) -> list[str]:
    """The table's footnote on means marked ``*``: what each one leaves out."""
    if not notes:
        return []
    return [
        "* a mean over fewer folds than were run: a fold without the measure is left out (AUC: test rows of",
        "  one class; BEP: no positive; a class's F1: no row or prediction of it), a task or class without it too:",
        *notes,
    ]


def _measure_lines(
    document: dict, names: list[str], rows: list[dict], width: int, labels: dict, cell: int, notes: list[str]
) -> list[str]:
    """The column heads, a line of each row's measures (``labels``' keys; one that leaves folds out marked
    and noted in ``notes``) and, over several repeats, a line of each row's standard deviation across the
    repeats' means."""

    train = fraction_width(rows)

    def line(name: str, row: dict, cells) -> str:
        return f"{name:<{width}}  {fraction_text(row['train_fraction']):>{train}}  " + "  ".join(
            f"{c:>{cell}}" for c in cells
        )

    lines = [f"{'chain':<{width}}  {'train':>{train}}  " + "  ".join(f"{label:>{cell}}" for label in labels.values())]
    lines += [
        line(name, row, [_marked(document, row, m, label, notes) for m, label in labels.items()])
        for name, row in zip(names, rows)
    ]
    repeats = document["settings"].get("repeats", 1)
    if repeats > 1:
        lines.append(f"standard deviation over the {repeats} repeats' means:")
        for name, row in zip(names, rows):
            spread = row.get("std_over_repeats") or {m: row["repeats"][m]["std"] for m in labels}
            lines.append(line(name, row, [_cell(spread[m]) for m in labels]))
    return lines


def _costed(document: dict) -> list[tuple[str, dict]]:
    """``svm --svm-costs``: each result's name (its chain, and task where there are several) and its held-out
    cost (``costs``); none where no result has one."""
    results = document.get("results", [document])
    several = len({result["task"] for result in results}) > 1
    return [
        (
            result["chain"] + (f" [{result['task']}]" if several else ""),
            {**result["costs"], "train_fraction": result["train_fraction"]},
        )
        for result in results
        if "costs" in result
    ]


def _cost_lines(document: dict) -> list[str]:
    """``svm --svm-costs``: a line per result of the cost of its held-out decisions, as Weka's Evaluation reports it
    given ``-m COSTFILE`` (Total Cost, Average Cost: total / rows); nothing without a cost."""
    costed = _costed(document)
    if not costed:
        return []
    width, train = max(len("chain"), *(len(name) for name, _ in costed)), fraction_width(cost for _, cost in costed)
    totals = [f"{cost['total']:.15g}" for _, cost in costed]  # every digit of a sum of costs, not its last bit's noise
    total = max(12, *(len(text) for text in totals))
    lines = [
        "cost of the held-out decisions (svm --svm-costs):",
        f"{'chain':<{width}}  {'train':>{train}}  {'Total Cost':>{total}}  {'Average Cost':>12}  {'rows':>7}",
    ]
    lines += [
        f"{name:<{width}}  {fraction_text(cost['train_fraction']):>{train}}  {text:>{total}}  "
        f"{cost['average']:>12.4f}  {cost['rows']:>7}"
        for (name, cost), text in zip(costed, totals)
    ]
    return lines


def _breakeven_lines(document: dict, names: list[str], rows: list[dict], width: int, notes: list[str]) -> list[str]:
    """The table's lines of ``--stats``: each row's break-even point (marked as :func:`_marked`) and, over
    several tasks, micro-averages."""
    micro, train = any("micro" in row for row in rows), fraction_width(rows)
    lines = [
        f"{'':<{width}}  {'train':>{train}}  {'BEP':>6}"
        + (f"  {'microF1':>7}  {'microP':>6}  {'microR':>6}" if micro else "")
    ]
    for name, row in zip(names, rows):
        pooled = row.get("micro", {})
        cells = f"  {_cell(pooled.get('f1')):>7}  {_cell(pooled.get('precision'))}  {_cell(pooled.get('recall'))}"
        lines.append(
            f"{name:<{width}}  {fraction_text(row['train_fraction']):>{train}}  "
            f"{_marked(document, row, 'breakeven', 'BEP', notes):>6}" + (cells if micro else "")
        )
    return lines


def _multiclass_table(document: dict) -> str:
    """The ``--multiclass`` table: one row per chain (and fraction) of the overall measures; then per
    class its one-vs-rest AUC and F1 under each chain; then the spread over repeats and the paired tests."""
    settings, rows = document["settings"], document["results"]
    notes: list[str] = []
    classes = list(rows[0]["per_class"])
    names = [row["chain"] for row in rows]
    width = max(len("chain"), *(len(name) for name in names))
    lines = [
        _header(settings, f"multi-class: {len(classes)} classes at once"),
        *_measure_lines(document, names, rows, width, MULTICLASS_LABELS, 8, notes),
    ]
    counts = settings.get("test_class_counts", settings.get("class_counts", {}))  # the rows scored
    class_width = max(len("class"), *(len(label) for label in classes))
    column = 13
    lines.append("per class, one-vs-rest AUC / F1, under chain 1, 2, … (the rows above, in order):")
    lines.append(
        f"{'class':<{class_width}}  {'rows':>5}  "
        + "  ".join(f"{f'chain {i + 1}':>{column}}" for i in range(len(rows)))
    )
    for label in classes:
        cells = ""
        for row in rows:
            entry = {**row["per_class"][label], "chain": row["chain"], "train_fraction": row["train_fraction"]}
            entry.update(task=label, scope="class")
            marks = [_marked(document, entry, m, name, notes).strip() for m, name in (("auc", "AUC"), ("f1", "F1"))]
            cells += f"  {' / '.join(marks):>{column}}"
        lines.append(f"{label:<{class_width}}  {counts.get(label, 0):>5}{cells}")
    lines += _cost_lines(document)
    for comparison in document.get("paired", []):
        lines += _paired_lines(comparison, multiclass=True)
    return "\n".join(lines + _footnote(notes)) + "\n"


def _label_set_table(document: dict) -> str:
    """The text ``evaluate`` prints on multi-label data: a row per chain (micro/macro F1, Hamming loss,
    subset accuracy), each label's positives and F1 under each chain, and each chain against the first; its texts
    escaped (:func:`filterkit.documents.for_terminal`)."""
    document = for_terminal(document)
    settings, results = document["settings"], document["results"]
    where = (
        f"scored on {settings['test']} ({settings['test_rows']} rows), trained on {settings['rows']} rows"
        if "test" in settings
        else f"{settings['folds']}-fold CV (iterative stratification), {settings['rows']} rows"
    )
    lines = [
        f"{where}, seed {settings['seed']}, classifier {settings['classifier']}; {len(settings['labels'])} labels "
        f"(cardinality {settings['cardinality']:.3f}), binary relevance, threshold {_label_cut(settings)}, "
        f"chain fitted {settings['chain_fitted']}"
    ]
    width = max(len("chain"), *(len(result["chain"]) for result in results))
    lines.append(f"{'chain':<{width}}  {'microF1':>8}  {'macroF1':>8}  {'Hamming':>8}  {'exact':>8}")
    for result in results:
        figures = (result[m] for m in ("micro_f1", "macro_f1", "hamming_loss", "subset_accuracy"))
        lines.append(f"{result['chain']:<{width}}  " + "  ".join(f"{value:>8.3f}" for value in figures))
    label_width = max(len("label"), *(len(label) for label in settings["labels"]))
    lines.append("per label, F1 under chain 1, 2, … (the rows above, in order):")
    lines.append(
        f"{'label':<{label_width}}  {'positives':>9}  "
        + "  ".join(f"{f'chain {i + 1}':>8}" for i in range(len(results)))
    )
    for label in settings["labels"]:
        entries = [result["per_label"][label] for result in results]
        f1s = "  ".join(f"{entry['f1']:>8.3f}" for entry in entries)
        lines.append(f"{label:<{label_width}}  {entries[0]['positives']:>9}  {f1s}")
    for paired in document.get("paired", []):
        over = paired["f1_over_labels"]
        p = "n/a" if over["wilcoxon_p"] is None else f"{over['wilcoxon_p']:.3g}"
        lines.append(
            f"'{paired['chain']}' against '{paired['baseline']}': per-label F1 {over['difference']:+.3f} on average, "
            f"{over['wins']} win(s), {over['ties']} tie(s), {over['losses']} loss(es) over labels, Wilcoxon p {p}"
        )
        if "micro_f1_over_folds" in paired:
            folds = paired["micro_f1_over_folds"]
            p = "n/a" if folds["corrected_t"]["p"] is None else f"{folds['corrected_t']['p']:.3g}"
            lines.append(
                f"  micro-F1 over folds: {folds['wins']} win(s), {folds['ties']} tie(s), {folds['losses']} loss(es), "
                f"corrected resampled t-test p {p}"
            )
        if "subset_mcnemar" in paired:
            test = paired["subset_mcnemar"]
            lines.append(
                f"  McNemar on exact label sets: {test['only_chain_right']} row(s) right only under the chain, "
                f"{test['only_baseline_right']} only under the baseline, p {test['p']:.3g}"
            )
    return "\n".join(lines) + "\n"


def _label_set_page(document: dict) -> str:
    """The self-contained HTML page of a multi-label evaluation: :func:`_label_set_table` and, per chain after the
    first, the scatter of its per-label F1 against the first's (evaluate's per-task scatter, a dot per label)."""
    matplotlib = require_matplotlib("--report")
    results = document["results"]
    tips: dict[str, str] = {}
    per_label = [
        {"chain": result["chain"], "task": label, "f1": entry["f1"], "train_fraction": 1.0}
        for result in results
        for label, entry in result["per_label"].items()
    ]
    with matplotlib.rc_context({**LITERAL_TEXT, **SVG_SETTINGS}):
        scatters = [
            _scatter_figure(per_label, results[0]["chain"], result["chain"], 1.0, tips, "label")
            for result in results[1:]
        ]
        figures = "".join(_svg_figure(figure, title, tips) for figure, title in scatters)
    title = html.escape(f"filterkit evaluate: {document['settings']['input']}")
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        "<style>body{font-family:sans-serif;margin:2em;max-width:80em}figure{display:inline-block;margin:1em}"
        f"svg{{max-width:100%;height:auto}}</style></head><body><h1>{title}</h1>"
        f"<pre>{html.escape(_label_set_table(document))}</pre>{figures}</body></html>\n"
    )


def _cell(value) -> str:
    return f"{value:>6.3f}" if value is not None and not math.isnan(value) else f"{'—':>6}"


def _p_cell(value) -> str:
    return f"{value:>8.3g}" if value is not None else f"{'—':>8}"


def _wtl(counts: dict) -> str:
    """``won/tied/lost`` of one paired comparison."""
    return f"{counts['wins']}/{counts['ties']}/{counts['losses']}"


def _comparison_title(comparison: dict) -> str:
    """``'chain' vs 'baseline' (train F)``."""
    return (
        f"'{comparison['chain']}' vs '{comparison['baseline']}' (train {fraction_text(comparison['train_fraction'])})"
    )


def _settings_html(document: dict) -> str:
    """The report's settings in words, as an HTML list: the data, the protocol, the tasks, the chains and
    the classifier."""
    settings, results = document["settings"], document.get("results", [document])
    left_out = settings.get("rows_with_missing_class_left_out", 0)
    counts = ", ".join(f"{label} {count}" for label, count in settings.get("class_counts", {}).items())
    if "test" in settings:
        protocol = f"trained on every row, scored on {settings['test']} ({settings['test_rows']} rows)"
    else:
        repeats = settings.get("repeats", 1)
        protocol = f"{settings['folds']}-fold cross-validation" + (f" repeated {repeats} times" if repeats > 1 else "")
    fractions = ", ".join(fraction_text(fraction) for fraction in settings["train_fractions"])
    if fractions != "1":
        protocol += f", trained on fractions {fractions} of the training rows"
    tasks, chains = (list(dict.fromkeys(r[key] for r in results)) for key in ("task", "chain"))
    words = {
        "Data": f"{settings['rows']} rows"
        + (f" ({left_out} without a class left out)" if left_out else "")
        + (f"; class '{settings['class']}': {counts}" if "class" in settings else ""),
        "Protocol": f"{protocol}, seed {settings['seed']}",
        "Tasks": f"{', '.join(tasks)}, each against the rest" + (", macro-averaged" if len(tasks) > 1 else ""),
        "Chains": ", ".join(f"'{chain}'" for chain in chains)
        + (" (the first is the baseline of the paired tests)" if document.get("paired") else ""),
        **({"Sweep": settings["sweep"]} if "sweep" in settings else {}),
        "Classifier": _classifier_words(settings, [fit for r in results for fit in r.get("classifier", [])]),
    }
    return "<ul>" + "".join(f"<li><b>{key}:</b> {html.escape(text)}</li>" for key, text in words.items()) + "</ul>"


def _classifier_words(settings: dict, fits: list[dict]) -> str:
    """The classifier, the options given to it and, from its ``fits``' records, how C was chosen."""
    grid = bool(fits) and all("inner_auc" in fit for fit in fits)  # else its grid options are shown as given
    params = {
        k: v for k, v in settings["classifier_params"].items() if not grid or k not in ("c_values", "inner_folds")
    }
    text = settings["classifier"] + "".join(f", {key.replace('_', ' ')} {value}" for key, value in params.items())
    if not grid:
        return text
    folds = "–".join(str(n) for n in sorted({fit["inner_folds"] for fit in fits}))
    chosen = collections.Counter(fit["C"] for fit in fits)
    measure = "F1" if all("inner_f1" in fit for fit in fits) else "AUC"  # --svm-c-by
    return (
        f"{text}; C chosen by {folds}-fold inner cross-validation ({measure}) from "
        + ", ".join(f"{float(c):g}" for c in fits[0]["inner_auc"])
        + ": "
        + ", ".join(f"C {c:g} in {chosen[c]} of {len(fits)} fits" for c in sorted(chosen))
        + _threshold_spread(fits)
    )


def _threshold_spread(fits: list[dict]) -> str:
    """How far the cut ``--svm-threshold`` chose moved across ``fits`` (one a fold): the least, median and
    largest; nothing where no fit chose one."""
    cuts = [fit["threshold"] for fit in fits if "threshold" in fit]
    if not cuts:
        return ""
    median = statistics.median(cuts)
    return f"; the threshold {min(cuts):.4g} to {max(cuts):.4g} over {len(cuts)} fits (median {median:.4g})"


def _html_table(heads: list[str], rows: list[list[str]], caption: str = "") -> str:
    """An HTML table: ``heads``, then ``rows`` (their first cell as the row's heading); all text escaped
    and stripped."""
    cells = "".join(
        f"<tr><th>{html.escape(row[0])}</th>{''.join(f'<td>{html.escape(cell.strip())}</td>' for cell in row[1:])}</tr>"
        for row in rows
    )
    head = "".join(f"<th>{html.escape(h)}</th>" for h in heads)
    return f"<table>{f'<caption>{html.escape(caption)}</caption>' if caption else ''}<tr>{head}</tr>{cells}</table>"


def _results_html(document: dict, per_task: bool) -> str:
    """The text table's numbers as HTML tables: the measures (a mean over fewer folds marked ``*`` and
    explained below), the break-even and micro-averages, and over several repeats their spread."""
    rows, names, note = _rows(document, per_task)
    notes: list[str] = []
    heads = ["chain", "train", *LABELS.values()]
    body = [
        [
            name,
            fraction_text(row["train_fraction"]),
            *(_marked(document, row, m, label, notes) for m, label in LABELS.items()),
        ]
        for name, row in zip(names, rows)
    ]
    if "breakeven" in rows[-1]:
        micro = any("micro" in row for row in rows)
        heads += ["BEP", *(["microF1", "microP", "microR"] if micro else [])]
        for cells, row in zip(body, rows):
            cells.append(_marked(document, row, "breakeven", "BEP", notes))
            cells += [_cell(row.get("micro", {}).get(m)) for m in ("f1", "precision", "recall") if micro]
    parts = [_html_table(heads, body, note)]
    costed = _costed(document)
    if costed:
        parts.append(
            _html_table(
                ["chain", "train", "Total Cost", "Average Cost", "rows"],
                [
                    [
                        name,
                        fraction_text(cost["train_fraction"]),
                        f"{cost['total']:.15g}",
                        f"{cost['average']:.4f}",
                    ]
                    + [str(cost["rows"])]
                    for name, cost in costed
                ],
                "cost of the held-out decisions (svm --svm-costs)",
            )
        )
    repeats = document["settings"].get("repeats", 1)
    if repeats > 1:
        spreads = [row.get("std_over_repeats") or {m: row["repeats"][m]["std"] for m in LABELS} for row in rows]
        body = [[*cells[:2], *(_cell(spread[m]) for m in LABELS)] for cells, spread in zip(body, spreads)]
        parts.append(_html_table(heads[:9], body, f"standard deviation over the {repeats} repeats' means"))
    if notes:
        footnote = _footnote(notes)
        items = "".join(f"<li>{html.escape(line.strip())}</li>" for line in footnote[2:])
        parts.append(f"<p>{html.escape(' '.join(line.strip() for line in footnote[:2]))}</p><ul>{items}</ul>")
    return "".join(parts)


def _paired_html(paired: list[dict], several_tasks: bool) -> str:
    """The paired tests of each chain against the first as a table (the test over tasks only with
    ``several_tasks``); scored on a test file, McNemar's tests per task instead of the test over folds."""
    held_out = any("mcnemar" in comparison for comparison in paired)
    heads = ["chain", "baseline", "train", "measure", "difference"]
    heads += ["tasks W/T/L", "Wilcoxon p"] * several_tasks + ["folds W/T/L", "corrected t-test p"] * (not held_out)
    rows = []
    for comparison in paired:
        for measure, values in comparison["measures"].items():
            tasks, folds = values["over_tasks"], values["over_folds"]
            rows.append(
                [comparison["chain"], comparison["baseline"], fraction_text(comparison["train_fraction"])]
                + [LABELS.get(measure, "BEP"), f"{values['difference']:+.4f}"]
                + ([_wtl(tasks), _p_cell(tasks["wilcoxon_p"])] if several_tasks else [])
                + ([] if held_out else [_wtl(folds), _p_cell(folds["corrected_t"]["p"])])
            )
    mcnemar = [
        [c["chain"], c["baseline"], fraction_text(c["train_fraction"]), task]
        + [str(test["only_chain_right"]), str(test["only_baseline_right"]), _p_cell(test["p"])]
        for c in paired
        for task, test in c.get("mcnemar", {}).items()
    ]
    heads_mcnemar = ["chain", "baseline", "train", "task", "rows right only under the chain", "… the baseline", "p"]
    return (
        f"<h2>Paired tests against the first chain</h2>{_html_table(heads, rows)}"
        + (_html_table(heads_mcnemar, mcnemar, "McNemar's test per task on the test file's rows") if mcnemar else "")
        if paired
        else ""
    )


def _learning_curves(rows: list[dict]) -> dict[str, list[tuple]]:
    """Per chain, its (training fraction, AUC, F1) points."""
    return {
        chain: sorted((r["train_fraction"], r["auc"], r["f1"]) for r in rows if r["chain"] == chain)
        for chain in dict.fromkeys(r["chain"] for r in rows)
    }


def _curves_figure(curves: dict[str, list[tuple]], xlabel: str):
    """AUC and F1 side by side against x, one line per curve (name: its (x, AUC, F1) points), ticked at its x."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(10, 4))
    axes = figure.subplots(1, 2)
    for name, points in curves.items():
        xs = [p[0] for p in points]
        for axis, column, measure in ((axes[0], 1, "AUC"), (axes[1], 2, "F1")):
            axis.plot(xs, [p[column] for p in points], marker="o", label=name)
            axis.set(xlabel=xlabel, ylabel=measure, xscale="log" if min(xs) > 0 else "linear")
            axis.minorticks_off()
            axis.set_xticks(xs, [fraction_text(x) for x in xs])
    for axis in axes:
        axis.legend(fontsize="small")
    return figure


def _report_figures(document: dict, tips: dict[str, str]) -> list[tuple]:
    """The report's figures and their titles: learning curves, sweep curves, and per fraction each chain
    against the first per task, or with one task (or chain) each fold's AUC and F1; ``tips``: each dot's
    SVG id and the text shown on hover."""
    rows = document.get("macro", [document])
    fractions = sorted({r["train_fraction"] for r in rows})
    figures = []
    if len(fractions) > 1:
        curves = _curves_figure(_learning_curves(rows), "fraction of the training fold")
        figures.append((curves, "Learning curves: macro-averaged AUC and F1"))
    swept = [r for r in rows if r.get("sweep")]
    if swept and all(isinstance(v, (int, float)) for r in swept for v in r["sweep"].values()):
        (label,) = swept[0]["sweep"]
        sweeps: dict[str, list] = {}
        for r in swept:
            base = r["chain"][: r["chain"].rindex(" [")]
            name = base if len(fractions) == 1 else f"{base} (train {fraction_text(r['train_fraction'])})"
            sweeps.setdefault(name, []).append((r["sweep"][label], r["auc"], r["f1"]))
        curves = _curves_figure({name: sorted(points) for name, points in sweeps.items()}, label)
        figures.append((curves, f"Sweep of {label}: macro-averaged AUC and F1"))
    results = document.get("results", [document])
    chains = list(dict.fromkeys(r["chain"] for r in results))
    tasks = list(dict.fromkeys(r["task"] for r in results))
    for fraction in fractions:
        at = [r for r in results if r["train_fraction"] == fraction]
        if len(chains) > 1 and len(tasks) > 1:
            figures += [_scatter_figure(at, chains[0], chain, fraction, tips) for chain in chains[1:]]
        else:
            figures.append(_folds_figure(at, len(tasks) == 1, fraction, tips))
    return figures


def _dot(axis, x: float, y: float, tip: str, tips: dict[str, str], label: str | None) -> None:
    """One dot whose SVG group (its id a key of ``tips``) carries ``tip`` as its hover text."""
    gid = f"filterkit-dot-{len(tips)}"
    tips[gid] = tip
    axis.plot([x], [y], linestyle="none", marker="o", color="C0", alpha=0.8, gid=gid, label=label)


def _scatter_figure(
    results: list[dict], baseline: str, chain: str, fraction: float, tips: dict[str, str], unit: str = "task"
):
    """Each task's F1 under ``chain`` against under ``baseline``, a dot per task (a ``unit``: a label of
    multi-label data), and the line of equal F1."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(5.5, 5.5))
    axis = figure.subplots()
    f1 = {(r["chain"], r["task"]): r["f1"] for r in results}
    points = [(task, f1[(baseline, task)], f1[(chain, task)]) for (name, task) in f1 if name == chain]
    for i, (task, x, y) in enumerate(points):
        tip = f"{unit} {task}: F1 {_cell(x).strip()} under '{baseline}', {_cell(y).strip()} under '{chain}'"
        _dot(axis, x, y, tip, tips, f"a {unit} (hover: its name)" if i == 0 else None)
    known = [v for _, x, y in points for v in (x, y) if v is not None and not math.isnan(v)]
    low, high = min(known, default=0.0), max(known, default=1.0)
    axis.plot([low, high], [low, high], color="grey", linewidth=0.8, label="equal F1")
    margin = (high - low) * 0.05 or 0.05
    axis.set(xlabel=f"F1 of '{baseline}'", ylabel=f"F1 of '{chain}'", aspect="equal")
    axis.set(xlim=(low - margin, high + margin), ylim=(low - margin, high + margin))
    axis.legend(fontsize="small", loc="lower right")
    return (
        figure,
        f"F1 per {unit} (train {fraction_text(fraction)}): '{chain}' against '{baseline}'; above the line it wins",
    )


def _folds_figure(results: list[dict], one_task: bool, fraction: float, tips: dict[str, str]):
    """Each chain's (with one chain: each task's) AUC and F1 on every fold as dots, beside the table's value."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(10, 4.5))
    names = [r["chain"] if one_task else r["task"] for r in results]
    for axis, measure, label in zip(figure.subplots(1, 2), ("auc", "f1"), ("AUC", "F1")):
        for i, r in enumerate(results):
            values = r["per_fold"][measure]
            for fold, value in enumerate(values):
                where = f"fold {fold + 1}" if len(values) > 1 else "the test file"
                tip = f"'{r['chain']}', task {r['task']}, {where}: {label} {_cell(value).strip()}"
                x = i + 0.3 * (fold + 0.5 - len(values) / 2) / len(values)
                kind = "a fold" if len(values) > 1 else "the test file"
                if value is not None:
                    _dot(axis, x, value, tip, tips, f"{kind} (hover: its value)" if i == fold == 0 else None)
            axis.plot([i - 0.25, i + 0.25], [r[measure]] * 2, color="C1", label="the table's value" if i == 0 else None)
        slanted = {"rotation": 15, "ha": "right"} if max(map(len, names)) > 12 else {}
        axis.set_xticks(range(len(names)), names, **slanted)
        axis.set(xlabel="chain" if one_task else "task", ylabel=label, xlim=(-0.5, len(names) - 0.5))
        axis.legend(fontsize="small")
    of = f"task {results[0]['task']}, per chain" if one_task else f"chain '{results[0]['chain']}', per task"
    return figure, f"AUC and F1 on each fold (train {fraction_text(fraction)}): {of}"


def _svg_figure(figure, title: str, tips: dict[str, str]) -> str:
    """A figure as inline SVG (the page needs no other file), each dot of ``tips`` with its ``<title>``."""
    buffer = io.StringIO()
    figure.tight_layout()
    figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    svg = buffer.getvalue()
    svg = re.sub(
        r'<g id="(filterkit-dot-\d+)">',
        lambda m: f"{m[0]}<title>{html.escape(tips[m[1]])}</title>",
        svg[svg.index("<svg") :],
    )
    return f"<figure>{svg}<figcaption>{html.escape(title)}</figcaption></figure>"
