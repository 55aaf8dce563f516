"""``evaluate --label-issues``: the rows whose given label the out-of-fold probabilities contradict, found by
confident learning (Northcutt, Jiang & Chuang, "Confident Learning: Estimating Uncertainty in Dataset Labels",
JAIR 70, 2021), each with the words that pull it toward the label the model suggests.

Each cross-validation fold records, for its test rows, the classifier's probabilities (two classes: [1 − p, p] of
the task's positive class p; k classes: each class's Platt probability, normalized to sum 1 per row) and, for a
row whose largest probability is not its given label's, the features that pull it there
(:func:`fold_pulls`, in the fold, with the fold's fitted chain and classifier).  :func:`ranked_label_issues` then
finds the issues among every row's out-of-fold probabilities as cleanlab's ``find_label_issues`` does by default
(``filter_by='prune_by_noise_rate'``, ranked by ``'self_confidence'``), in numpy.

Label sets (binary relevance, :mod:`filterkit.evaluation_targets`) record per label its classifier's
probability p and the pulls of each row whose given value of the label p contradicts (:func:`label_set_pulls`);
:func:`ranked_label_set_issues` finds the rows as cleanlab's ``multilabel_classification.filter.find_label_issues``
does: each label's one-vs-rest [1 − p, p] through the single-label filter, any label flagged flagging the row,
ranked by ``multilabel_classification.rank.get_label_quality_scores`` (:func:`label_set_quality_scores`).
"""

from __future__ import annotations

import csv
import functools
import io
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

from filterkit.classifying import feature_names
from filterkit.errors import FilterkitError
from filterkit.labels import LABEL_SEPARATOR, RENAME_LABEL, unjoinable_label
from filterkit.tasks import LABEL_SET, Fits, Task, rest_name

#: The key of a fold's record (:func:`filterkit.evaluation.evaluate_fold`) that carries its test rows'
#: probabilities and pulls to :meth:`LabelIssueFinder.collect`, which takes it out of the record.
FOLD_RECORD = "label_issue_rows"

#: cleanlab's fuzzy comparison of probabilities (``FLOATING_POINT_COMPARISON``).
TOLERANCE = 1e-6

#: The least per-class threshold of the confident joint (cleanlab's ``CONFIDENT_THRESHOLDS_LOWER_BOUND``).
LEAST_THRESHOLD = 2 * TOLERANCE

#: The threshold of a class no row is given, so that no row counts as confidently of it.
ABSENT_CLASS_THRESHOLD = 2.0


def confident_joint(labels: np.ndarray, probabilities: np.ndarray) -> np.ndarray:
    """The calibrated confident joint C[given, true] of JAIR 2021 §3.1 (Eq. 1–2, and §3.2's calibration Eq. 3):
    a row counts toward true class j when its probability of j reaches j's threshold t_j (the mean probability
    of j over the rows given j), toward its largest such probability if several do; every diagonal entry at
    least 1; then each row of C scaled to the given label's count, the whole to the number of rows, and
    rounded keeping each row's total."""
    classes = probabilities.shape[1]
    counts = np.bincount(labels, minlength=classes)
    thresholds = np.array(
        [probabilities[labels == k, k].mean() if counts[k] else ABSENT_CLASS_THRESHOLD for k in range(classes)]
    ).clip(min=LEAST_THRESHOLD)
    confident = probabilities >= thresholds - TOLERANCE
    confident_classes = confident.sum(axis=1)
    guessed = np.where(confident_classes > 1, probabilities.argmax(axis=1), confident.argmax(axis=1))
    counted = confident_classes > 0
    joint = np.zeros((classes, classes), dtype=np.int64)
    np.add.at(joint, (labels[counted], guessed[counted]), 1)
    np.fill_diagonal(joint, joint.diagonal().clip(min=1))
    calibrated = (joint.T / joint.sum(axis=1).clip(min=1e-100) * counts).T
    calibrated = calibrated / max(calibrated.sum(), 1e-100) * counts.sum()
    return rounded_rows(calibrated)


def rounded_rows(matrix: np.ndarray) -> np.ndarray:
    """``matrix`` rounded to integers, each row keeping its (rounded) total: the entries rounded off most are moved
    by one until the totals hold (cleanlab's ``round_preserving_row_totals``, the same ties)."""
    rows = []
    for values in np.asarray(matrix, dtype=float):
        rounded = values.round()
        total, rounded_total = values.sum().round(), rounded.sum().round()
        while abs(rounded_total - total) > TOLERANCE:
            difference = np.round(total - rounded_total)
            step = -1 if difference < 0 else 1
            changes = min(int(abs(difference)), len(values))
            for position in np.argsort(values - rounded)[::-step][:changes]:
                rounded[position] += step
            rounded_total = rounded.sum().round()
        rows.append(rounded)
    return np.array(rows).astype(np.int64)


def prune_counts(joint: np.ndarray) -> np.ndarray:
    """How many rows to prune per (true, given) pair: the confident joint transposed, each diagonal entry (rows
    kept) raised to at least 1, what was added taken evenly from the column's nonzero off-diagonal entries
    (none below 0, the rest cut to integers), as cleanlab's ``_keep_at_least_n_per_class`` with n = 1."""
    counts = joint.T.astype(float)
    diagonal = counts.diagonal().copy()
    raised = np.maximum(diagonal, 1)
    spread = np.maximum(np.count_nonzero(counts, axis=0) - 1.0, 1.0)
    adjusted = counts - (raised - diagonal) / spread
    adjusted[adjusted < 0] = 0
    np.fill_diagonal(adjusted, raised)
    return adjusted.astype(np.int64)


def ranked_label_issues(labels: np.ndarray, probabilities: np.ndarray) -> np.ndarray:
    """The positions of the rows whose given ``labels`` (class positions) their out-of-fold ``probabilities``
    (rows × classes, each row summing to 1) contradict, least self-confidence (the given label's probability)
    first.  Confident learning's prune-by-noise-rate (JAIR 2021 §3.2, "C_confusion" and "Prune by Noise Rate"):
    for each given class i and other class j, of the rows given i the C[i][j] of largest margin p_j − p_i
    (C: :func:`confident_joint`, adjusted by :func:`prune_counts`), unless a class has one row or fewer; a
    row whose given label's probability (plus 1e-6) is still its largest is kept.  The same rows in the same
    order as cleanlab's ``find_label_issues(labels, probabilities, filter_by='prune_by_noise_rate',
    return_indices_ranked_by='self_confidence')``."""
    labels = np.asarray(labels, dtype=np.int64)
    pruned = prune_counts(confident_joint(labels, probabilities))
    issues = np.zeros(len(labels), dtype=bool)
    for given in range(probabilities.shape[1]):
        rows = np.flatnonzero(labels == given)
        if len(rows) <= 1:
            continue
        marked = np.zeros(len(rows), dtype=bool)
        for other in range(probabilities.shape[1]):
            if other != given and pruned[other, given] > 0:
                margin = probabilities[rows, other] - probabilities[rows, given]
                marked[np.argsort(-margin)[: pruned[other, given]]] = True
        issues[rows] = marked
    nudged = probabilities.copy()
    nudged[np.arange(len(labels)), labels] += TOLERANCE
    issues[nudged.argmax(axis=1) == labels] = False
    found = np.flatnonzero(issues)
    return found[np.argsort(probabilities[found, labels[found]])]


def class_probabilities(probabilities: np.ndarray) -> np.ndarray:
    """A fold's probabilities as rows × classes summing to 1 per row: one column (the positive class's p) as
    [1 − p, p], several (each class's own one-vs-rest probability) each divided by the row's sum."""
    if probabilities.shape[1] == 1:
        return np.column_stack([1.0 - probabilities[:, 0], probabilities[:, 0]])
    return probabilities / probabilities.sum(axis=1, keepdims=True).clip(min=1e-300)


def fold_pulls(call, fitted, features, truth: np.ndarray, top: int) -> dict:
    """A fold's test rows for ``--label-issues``: their class probabilities (:func:`class_probabilities` of the
    classifier ``call``'s) and, for each row whose largest probability is not its given class (``truth``: class
    positions, or True for a task's positive class), the ``top`` features of ``features`` (the rows as the
    classifier saw them, of ``fitted``'s output) that pull it most toward that class (:func:`named_pulls`)."""
    schema = fitted.output_schema
    return named_pulls(call, lambda: feature_names(schema, [schema.index_of(fitted.class_name)]), features, truth, top)


#: Why a fold's classifier gave no probabilities, and what to do.
NO_PROBABILITIES = (
    "--label-issues needs each row's class probabilities, which {origin} did not give in a fold: svm gives them "
    "unless --svm-decision margin, and with platt-cv only where each class has training rows enough for the inner "
    "cross-validation that fits its sigmoid (--svm-decision platt fits it on the training rows)"
)


def named_pulls(call, names_of: Callable[[], list[str]], features, truth: np.ndarray, top: int) -> dict:
    """:func:`fold_pulls` with the features' names given by ``names_of()`` (asked only where a row is pulled):
    each pull is the contribution value × weight of :meth:`~filterkit.trained.TrainedModel.explain_chunk`,
    toward the suggested class less toward the given one (two classes: the positive class's contribution, its
    sign turned toward the suggested class).  No pulls from a classifier without weights."""
    if not call.provides("has_probabilities"):
        raise FilterkitError(NO_PROBABILITIES.format(origin=call.origin))
    labels = np.asarray(truth, dtype=np.int64)
    columns = 1 if truth.dtype == bool else None
    raw = np.asarray(call("probabilities", features), dtype=np.float64).reshape(len(labels), columns or -1)
    probabilities = class_probabilities(raw)
    suggested = probabilities.argmax(axis=1)
    contradicted = np.flatnonzero(suggested != labels)
    pulls: dict[int, list] = {}
    if call.provides("has_weights") and len(contradicted):
        weights = np.asarray(call("linear")[0], dtype=np.float64)
        names = names_of()
        for row in contradicted.tolist():
            start, end = features.indptr[row], features.indptr[row + 1]
            positions, values = features.indices[start:end], features.data[start:end]
            if weights.shape[0] == 1:
                toward = values * weights[0, positions] * (1.0 if suggested[row] == 1 else -1.0)
            else:
                toward = values * (weights[suggested[row], positions] - weights[labels[row], positions])
            order = sorted(np.flatnonzero(toward > 0).tolist(), key=lambda j: (-toward[j], names[positions[j]]))
            pulls[row] = [(names[positions[j]], float(toward[j])) for j in order[:top]]
    return {"probabilities": probabilities, "pulls": pulls, "binary": columns == 1}


def label_set_pulls(classifiers: list[tuple], truth: np.ndarray, top: int) -> dict:
    """A fold's test rows for ``--label-issues`` on label sets (``truth``: test rows × labels): each label's
    probability p (rows × labels) and, keyed by (row, label position), the ``top`` words pulling a row toward the
    value of the label p suggests where it is not the given one (:func:`named_pulls`).  ``classifiers`` holds per
    label its classifier's call, the test rows' features and a function giving their names, the call None for a
    label constant in the training rows.  A label the fold cannot judge, constant in its training rows or too rare
    there for its classifier's probabilities, is not judged: its p is the given value (never an issue) and it pulls
    no row; FilterkitError where no label of the fold has probabilities (``--svm-decision margin``)."""
    probabilities = truth.astype(np.float64)
    pulls: dict[tuple[int, int], list] = {}
    fitted = [call for call, _, _ in classifiers if call is not None]
    if fitted and not any(call.provides("has_probabilities") for call in fitted):
        raise FilterkitError(NO_PROBABILITIES.format(origin=fitted[0].origin))
    for label, (call, features, names_of) in enumerate(classifiers):
        if call is None or not call.provides("has_probabilities"):
            continue
        found = named_pulls(call, names_of, features, truth[:, label], top)
        probabilities[:, label] = found["probabilities"][:, 1]
        pulls.update({(row, label): words for row, words in found["pulls"].items()})
    return {"probabilities": probabilities, "pulls": pulls}


def per_label_issues(truth: np.ndarray, probabilities: np.ndarray) -> np.ndarray:
    """Rows × labels, True where a row's given value of a label (``truth``, bool) is an issue by the label's own
    probability p (``probabilities``, rows × labels): each label's one-vs-rest [1 − p, p] through
    :func:`ranked_label_issues`, as cleanlab's ``find_multilabel_issues_per_class`` by default."""
    flagged = np.zeros(truth.shape, dtype=bool)
    for label in range(truth.shape[1]):
        one_vs_rest = class_probabilities(probabilities[:, [label]])
        flagged[ranked_label_issues(truth[:, label].astype(np.int64), one_vs_rest), label] = True
    return flagged


#: The weight of each next (lower) label's self-confidence in a row's quality (cleanlab's
#: ``exponential_moving_average`` alpha, the default of its multi-label ``get_label_quality_scores``).
QUALITY_ALPHA = 0.8


def label_set_quality_scores(truth: np.ndarray, probabilities: np.ndarray) -> np.ndarray:
    """Each row's label quality, from 0 (its given set looks wrong) to 1, as cleanlab's multi-label
    ``get_label_quality_scores`` by default: per label the self-confidence (p where the row is given the label,
    else 1 − p), sorted from the highest down and averaged exponentially, each next score weighing
    :data:`QUALITY_ALPHA` against the average so far (the lowest weighs most); the same arithmetic, bit for bit."""
    ordered = np.fliplr(np.sort(np.where(truth, probabilities, 1 - probabilities), axis=1)).T
    quality = ordered[0]
    for confidences in ordered[1:]:
        quality = QUALITY_ALPHA * confidences + (1 - QUALITY_ALPHA) * quality
    return quality


def ranked_label_set_issues(flagged: np.ndarray, quality: np.ndarray) -> np.ndarray:
    """The positions of the rows with any label ``flagged`` (:func:`per_label_issues`), least ``quality``
    (:func:`label_set_quality_scores`) first: the rows in the order of cleanlab's multi-label
    ``find_label_issues(labels, pred_probs, return_indices_ranked_by='self_confidence')`` (the same sort of the
    same values, so that ties fall alike)."""
    found = np.flatnonzero(flagged.any(axis=1))
    return found[np.argsort(quality[found])]


@dataclass
class LabelIssues:
    """What :meth:`LabelIssueFinder.collect` found: every row's out-of-fold ``probabilities`` (rows × classes, in
    the rows' order, summing to 1), its given label's position among ``classes`` (``labels``) and its row in the
    input (from 1, ``input_rows``); the rows of the issues (``found``: positions, least self-confidence first) and
    per row the words pulling it toward its suggested class ((word, contribution), …; ``pulls``, keyed by
    position)."""

    probabilities: np.ndarray
    labels: np.ndarray
    classes: list[str]
    given: list[str]
    input_rows: np.ndarray
    found: np.ndarray
    pulls: dict[int, list[tuple[str, float]]]

    def csv(self, top: int) -> str:
        """The issues as CSV: row, given, suggested (the class of the largest probability), self_confidence (the
        given label's probability), rank, then ``top`` pairs of word and contribution (empty where a row has
        fewer words pulling it)."""
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        pairs = [name for n in range(1, top + 1) for name in (f"word_{n}", f"contribution_{n}")]
        writer.writerow(["row", "given", "suggested", "self_confidence", "rank", *pairs])
        for rank, position in enumerate(self.found.tolist(), start=1):
            listed = [value for word, weight in self.pulls.get(position, [])[:top] for value in (word, repr(weight))]
            suggested = self.classes[int(self.probabilities[position].argmax())]
            confidence = float(self.probabilities[position, self.labels[position]])
            fields = [int(self.input_rows[position]), self.given[position], suggested, repr(confidence), rank]
            writer.writerow([*fields, *listed, *[""] * (2 * top - len(listed))])
        return buffer.getvalue()


@dataclass
class LabelSetIssues:
    """What :meth:`LabelIssueFinder.collect` found in label sets: every row's out-of-fold ``probabilities`` (rows ×
    labels, each label's own p), its given label set (``truth``, rows × labels) and its row in the input (from 1,
    ``input_rows``), the ``labels``' names; where each label's filter flags a row (``flagged``:
    :func:`per_label_issues`), each row's ``quality`` (:func:`label_set_quality_scores`), the rows of the issues
    (``found``: positions, least quality first) and per (position, label position) the words pulling the row
    toward the value of the label its p suggests ((word, contribution), …; ``pulls``)."""

    probabilities: np.ndarray
    truth: np.ndarray
    labels: tuple[str, ...]
    input_rows: np.ndarray
    flagged: np.ndarray
    quality: np.ndarray
    found: np.ndarray
    pulls: dict[tuple[int, int], list[tuple[str, float]]]

    def csv(self, top: int) -> str:
        """The issues as CSV, a line per flagged label of each row, the rows ranked and their labels in order:
        row, given and suggested (label sets, their names joined by ``|``; suggested: the given set with each
        flagged label turned), label, issue (``wrongly present`` or ``wrongly absent``), probability (the label's
        p), quality (the row's), rank (the row's), then ``top`` pairs of word and contribution (empty where
        fewer words pull the row toward the label's suggested value)."""
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        pairs = [name for n in range(1, top + 1) for name in (f"word_{n}", f"contribution_{n}")]
        writer.writerow(["row", "given", "suggested", "label", "issue", "probability", "quality", "rank", *pairs])
        for rank, position in enumerate(self.found.tolist(), start=1):
            given, flagged = self.truth[position], self.flagged[position]
            sets = [self._names(given), self._names(given ^ flagged)]
            for label in np.flatnonzero(flagged).tolist():
                words = self.pulls.get((position, label), [])[:top]
                listed = [value for word, weight in words for value in (word, repr(weight))]
                issue = "wrongly present" if given[label] else "wrongly absent"
                probability, quality = float(self.probabilities[position, label]), float(self.quality[position])
                fields = [int(self.input_rows[position]), *sets, self.labels[label], issue, repr(probability)]
                writer.writerow([*fields, repr(quality), rank, *listed, *[""] * (2 * top - len(listed))])
        return buffer.getvalue()

    def _names(self, held: np.ndarray) -> str:
        """The names of the labels ``held`` (a row's bools), joined by :data:`LABEL_SEPARATOR`."""
        return LABEL_SEPARATOR.join(self.labels[label] for label in np.flatnonzero(held).tolist())


@dataclass
class LabelIssueFinder:
    """What ``evaluate --label-issues`` asks of :func:`filterkit.evaluation.evaluate`: each fold scored with
    its rows' probabilities and pulls (:meth:`scoring`), then the issues among them (:meth:`collect`)."""

    top: int = 5
    found: LabelIssues | LabelSetIssues | None = field(default=None)
    label_sets: bool = False

    def scoring(self, task: Task, fits: Fits) -> Fits:
        """``fits`` whose every fold also records its rows for the issues (:func:`fold_pulls`, of a label set
        :func:`label_set_pulls`)."""
        self.label_sets = task.kind == LABEL_SET
        why = unjoinable_label(fits.dataset.labels) if self.label_sets else None
        if why is not None:  # before any fit: the CSV joins a row's labels (as --predictions refuses them)
            raise FilterkitError(f"--label-issues: {why}: {RENAME_LABEL}")
        return replace(fits, score=functools.partial(fits.score, label_pulls=self.top))

    def collect(self, fits: Fits, results: list[dict]) -> LabelIssues | LabelSetIssues:
        """The issues among the folds' ``results`` (their records taken out), every row scored out of fold once."""
        records = [result.pop(FOLD_RECORD) for result in results]
        tested = [np.asarray(arguments[-1]) for arguments in fits.arguments]
        probabilities = np.empty((sum(len(rows) for rows in tested), records[0]["probabilities"].shape[1]))
        probabilities[np.concatenate(tested)] = np.vstack([record["probabilities"] for record in records])
        self.found = (
            _label_set_issues(fits.dataset, probabilities, tested, records)
            if self.label_sets
            else _class_issues(fits, probabilities, tested, records)
        )
        return self.found


def _class_issues(fits: Fits, probabilities: np.ndarray, tested: list, records: list[dict]) -> LabelIssues:
    """The issues of one label a row, from the pooled ``probabilities`` and the folds' ``records`` of their
    ``tested`` rows."""
    dataset = fits.dataset
    codes = dataset.data.column(dataset.class_index).astype(np.int64)
    pulls = {
        int(rows[position]): words
        for rows, record in zip(tested, records)
        for position, words in record["pulls"].items()
    }
    if records[0]["binary"]:
        task = fits.arguments[0][1]
        labels = (codes == dataset.labels.index(task)).astype(np.int64)
        classes = [rest_name(dataset.labels, task), task]
    else:
        present = np.flatnonzero(np.bincount(codes, minlength=len(dataset.labels)))
        labels = np.searchsorted(present, codes)
        classes = [dataset.labels[k] for k in present]
    return LabelIssues(
        probabilities,
        labels,
        classes,
        [dataset.labels[code] for code in codes],
        dataset.input_rows if dataset.input_rows is not None else np.arange(1, len(codes) + 1),
        ranked_label_issues(labels, probabilities),
        pulls,
    )


def _label_set_issues(dataset, probabilities: np.ndarray, tested: list, records: list[dict]) -> LabelSetIssues:
    """The issues of a label set (``dataset``: :class:`~filterkit.evaluation_targets.LabelledData`), from the
    pooled ``probabilities`` and the folds' ``records`` of their ``tested`` rows."""
    truth = dataset.truth
    flagged = per_label_issues(truth, probabilities)
    quality = label_set_quality_scores(truth, probabilities)
    pulls = {
        (int(rows[position]), label): words
        for rows, record in zip(tested, records)
        for (position, label), words in record["pulls"].items()
    }
    return LabelSetIssues(
        probabilities,
        truth,
        dataset.labels,
        dataset.input_rows if dataset.input_rows is not None else np.arange(1, len(truth) + 1),
        flagged,
        quality,
        ranked_label_set_issues(flagged, quality),
        pulls,
    )
