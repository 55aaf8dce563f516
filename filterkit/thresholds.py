"""Where a linear classifier's score becomes a decision (``svm --svm-threshold``; docs/algorithms.md §8.4.1): each
column's cut chosen on the out-of-fold scores of the inner cross-validation, over every distinct score: the F1's
(f1), Yang's SCutFBR as LibMultiLabel does it (fbr), fastText's autotune objectives (precision@recall,
recall@precision), Lin & Lin's joint micro- and macro-F1 cut of every label of a label set (micro-macro),
per-class offsets on the out-of-fold macro-F1 (``--multiclass``), and the cut or offsets of the least out-of-fold
cost of a cost matrix (``svm --svm-costs``: :func:`cost_cut`, :func:`cost_offsets`); and Platt's sigmoid, which
makes the scores probabilities first (:func:`platt_sigmoid`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from filterkit.errors import FilterkitError

#: ``--svm-threshold micro-macro``: Lin & Lin's micro+macro cuts (:func:`micro_macro_cuts`).  One column alone (a
#: binary task, one label as its SVM fits it) is cut where its F1 is highest, as ``f1``; a label set's labels are
#: cut together over every label's out-of-fold scores by :func:`cut_label_set`.
MICRO_MACRO = "micro-macro"
#: ``--svm-threshold``: the fixed cut (0.5, or 0 on the margin), or per class the out-of-fold F1's (f1, fbr), or
#: Lin & Lin's micro+macro (micro-macro).
THRESHOLD_RULES = ("fixed", "f1", "fbr", MICRO_MACRO)
#: ``--svm-threshold NAME=VALUE[:LABEL]``: fastText's autotune metrics as cuts on the out-of-fold scores, VALUE in
#: (0, 1] the floor of the second quantity (:func:`precision_at_recall_cut`, :func:`recall_at_precision_cut`);
#: with ``:LABEL`` for that label (or binary task's positive class) alone, the others cut as f1
#: (:func:`objective_scope`, :func:`cut_label_set`).
OBJECTIVES = ("precision@recall", "recall@precision")
#: An objective's value as written: digits with a decimal point or an exponent, no sign, space, inf or nan.
_OBJECTIVE_VALUE = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
#: ``describe()``'s ``threshold_rule`` where a class of the training rows has a single row: no inner CV, so no
#: out-of-fold score to cut, and the fixed cut decides (fbr: counted as fallen back).
ONE_ROW_CLASS = "fixed: a class of one row"


def threshold_objective(rule: str) -> tuple[str, float] | None:
    """``--svm-threshold``'s objective as (name, floor) (``precision@recall=0.9``, also scoped as
    ``precision@recall=0.9:LABEL``: ("precision@recall", 0.9)), None for fixed, f1, fbr or micro-macro; a one-line
    FilterkitError for any other rule, a floor that is not a number in (0, 1] or a ``:`` naming no label."""
    if rule in THRESHOLD_RULES:
        return None
    name, equals, written = rule.partition("=")
    if name not in OBJECTIVES or not equals:
        raise FilterkitError(
            f"svm: --svm-threshold {rule!r} is not one of {', '.join(THRESHOLD_RULES)}, precision@recall=R, "
            "recall@precision=P"
        )
    value, scoped, label = written.partition(":")
    floor = float(value) if _OBJECTIVE_VALUE.fullmatch(value) else float("nan")
    if not 0.0 < floor <= 1.0:
        wanted = name.partition("@")[2]
        raise FilterkitError(
            f"svm: --svm-threshold {rule!r}: the {wanted} must be a number above 0 and at most 1, as in {name}=0.9"
        )
    if scoped and not label:
        raise FilterkitError(f"svm: --svm-threshold {rule!r}: name a label after ':', as in {name}=0.9:LABEL")
    return name, floor


def objective_scope(rule: str) -> str | None:
    """The LABEL of a scoped objective ``NAME=VALUE:LABEL`` (everything after the first ``:`` that follows
    VALUE, so a label may hold ``:``, as debtags' ``use::editing``), None for any other rule; refused as
    :func:`threshold_objective` refuses."""
    if threshold_objective(rule) is None:
        return None
    return rule.partition("=")[2].partition(":")[2] or None


class ColumnCut(NamedTuple):
    """One column's cut by ``--svm-threshold`` on its out-of-fold scores: the threshold, the out-of-fold F1
    (f1, fbr: the best cut's, also where fbr fell back; an objective: its own cut's, 0 where it fell back),
    whether it fell back, and (an objective) the precision and recall it reaches there."""

    threshold: float
    f1: float
    fell_back: bool
    precision: float | None = None
    recall: float | None = None


def f1_cut(scores: np.ndarray, positives: np.ndarray) -> tuple[float, float]:
    """The threshold t on ``scores`` (a row positive where its score ≥ t) of the largest F1 against
    ``positives``, and that F1; every distinct score is a candidate (sorted once, true and false positives
    counted cumulatively: O(n log n)).

    The best candidate s (on equal F1s the highest) makes every row scoring ≥ s positive; t is the midpoint
    between s and the next lower distinct score s′, where nothing is known of the rows between them (the
    largest margin either side, as :func:`filterkit.evaluation_targets.pcut_threshold` and LibMultiLabel's
    SCut place it); s itself where s is the lowest score or (s + s′) / 2 rounds down to s′.  Each candidate's
    F1 is 2·TP / (TP + FP + P) of integers, so equal F1s compare equal."""
    candidates = _Candidates(scores, positives)
    f1 = 2.0 * candidates.true_positives / (candidates.predicted + candidates.positives)
    best = int(np.argmax(f1))
    return candidates.cut(best), float(f1[best])


class _Candidates:
    """Every distinct score of ``scores`` as a cut (a row positive where its score is ≥ it), highest first, with
    the true positives and rows predicted at each, against ``positives``: sorted once, counted cumulatively."""

    def __init__(self, scores: np.ndarray, positives: np.ndarray):
        scores, positives = np.asarray(scores, dtype=np.float64), np.asarray(positives, dtype=bool)
        self.order = order = np.argsort(-scores, kind="stable")
        self.descending = scores[order]
        self.group_ends = np.flatnonzero(np.append(self.descending[1:] != self.descending[:-1], True))
        self.true_positives = np.cumsum(positives[order])[self.group_ends]
        self.predicted = self.group_ends + 1
        self.positives = np.count_nonzero(positives)

    def cut(self, chosen: int) -> float:
        """The threshold of candidate ``chosen``: midway between its score and the next lower distinct one, its
        score itself where it is the lowest or the midpoint rounds down to the lower score."""
        score = self.descending[self.group_ends[chosen]]
        lower = self.descending[self.group_ends[chosen] + 1] if chosen + 1 < len(self.group_ends) else -np.inf
        middle = (score + lower) / 2
        return float(middle if middle > lower else score)

    def precision(self) -> np.ndarray:
        """Each candidate's precision TP / (TP + FP), never 0/0: a candidate predicts at least its own rows."""
        return self.true_positives / self.predicted

    def recall(self) -> np.ndarray:
        """Each candidate's recall TP / P (``positives`` holds at least one row)."""
        return self.true_positives / self.positives


def precision_at_recall_cut(scores: np.ndarray, positives: np.ndarray, recall: float) -> tuple[float, float, float]:
    """fastText's precisionAtRecall as a cut: among the distinct ``scores`` s whose rows ≥ s reach a recall ≥
    ``recall`` (0 < recall ≤ 1) of ``positives`` (at least one row), the one of the highest precision, the
    highest s on a tie; the threshold placed as :func:`f1_cut` places it, with the precision and recall it
    reaches.  Some s always qualifies: the lowest makes every row positive, a recall of 1."""
    candidates = _Candidates(scores, positives)
    precision, reached = candidates.precision(), candidates.recall()
    best = int(np.argmax(np.where(reached >= recall, precision, -1.0)))
    return candidates.cut(best), float(precision[best]), float(reached[best])


def recall_at_precision_cut(
    scores: np.ndarray, positives: np.ndarray, precision: float
) -> tuple[float, float, float, bool]:
    """fastText's recallAtPrecision as a cut: among the distinct ``scores`` s whose rows ≥ s reach a precision
    ≥ ``precision`` against ``positives`` (at least one row), the one of the highest recall, the highest s on a
    tie; the threshold placed as :func:`f1_cut` places it, with the precision and recall it reaches and False.
    Where no s reaches ``precision``: a threshold just above the highest score (no row positive, as
    :func:`fbr_cut` falls back), a precision and recall of 0 (0/0 counting 0, as
    :func:`filterkit.measures.f1_scores` counts it) and True."""
    candidates = _Candidates(scores, positives)
    reached, recall = candidates.precision(), candidates.recall()
    qualifies = reached >= precision
    if not qualifies.any():
        return float(np.nextafter(np.max(scores), np.inf)), 0.0, 0.0, True
    best = int(np.argmax(np.where(qualifies, candidates.true_positives, -1)))
    return candidates.cut(best), float(reached[best]), float(recall[best]), False


def objective_cut(scores: np.ndarray, positives: np.ndarray, name: str, floor: float) -> ColumnCut:
    """The cut of the objective ``name`` (:data:`OBJECTIVES`) of floor ``floor`` on ``scores`` against ``positives``
    (:func:`precision_at_recall_cut`, :func:`recall_at_precision_cut`), with the F1 its decisions reach there (0
    where recall@precision fell back), whether it fell back, and the precision and recall it reaches."""
    if name == "precision@recall":
        threshold, precision, recall = precision_at_recall_cut(scores, positives, floor)
        fell_back = False
    else:
        threshold, precision, recall, fell_back = recall_at_precision_cut(scores, positives, floor)
    predicted = np.asarray(scores) >= threshold
    hits = np.count_nonzero(predicted & positives)
    f1 = 2.0 * hits / (np.count_nonzero(predicted) + np.count_nonzero(positives))
    return ColumnCut(threshold, f1, fell_back, precision, recall)


def fbr_cut(scores: np.ndarray, positives: np.ndarray, floor: float) -> tuple[float, float, bool]:
    """SCutFBR (Yang 2001; Lin & Lin, CIKM 2023, as LibMultiLabel's ``_scutfbr`` does it): :func:`f1_cut`'s
    threshold where its F1 is above ``floor``, else one just above the highest score (no row of ``scores``
    positive: a rare class whose cut was fitted to noise is predicted only for rows scored above every
    out-of-fold row); with the F1 :func:`f1_cut` reached and whether it fell back."""
    cut, best = f1_cut(scores, positives)
    if best > floor:
        return cut, best, False
    return float(np.nextafter(np.max(scores), np.inf)), best, True


def micro_macro_cuts(scores: list[np.ndarray | None], truth: np.ndarray) -> list[ColumnCut | None]:
    """Lin & Lin's micro+macro thresholds (CIKM 2023, "On the thresholding strategy for infrequent labels in
    multi-label classification", §4.3 and Supplementary D: the micromacro-freq rule of LibMultiLabel's
    ``linear.train_thresholding``) on the out-of-fold ``scores`` of each label of ``truth`` (rows × labels; None:
    a label without out-of-fold scores, left uncut and counted nowhere), one :class:`ColumnCut` per label.

    The labels are cut one at a time, the most frequent first (on equal counts, in their order).  The m-th's cut
    is the candidate of the largest micro-F1 + F1/m: the micro-F1 of its true and false positives and false
    negatives added to those of the m − 1 labels cut before it, at their cuts, plus its own F1 over m (the F1s of
    the labels cut before are constants, so this is the macro-F1 the rule optimises, less them).  A frequent label,
    first, is cut at its own best F1; a rare one's few rows move micro-F1 little, so its cut is judged by the
    collection's F-measure more than by its own few rows, which is what keeps it from the noise a cut on its F1
    alone fits.  Every distinct score is a candidate, placed as :func:`f1_cut` places it, and so is no row at all
    (a threshold just above the highest score, ``fell_back``), the highest candidate taken on a tie.  LibMultiLabel
    cuts each of its three folds and averages the cuts; here one cut is made over the pooled out-of-fold rows of
    the inner cross-validation, as :func:`f1_cut` is, and their counts are the ones added up.  Each objective is
    one quotient of integer products (exact in float64 while they stay below 2**53), so equal objectives compare
    equal."""
    truth = np.asarray(truth, dtype=bool)
    cut = [j for j, column in enumerate(scores) if column is not None]
    order = sorted(cut, key=lambda j: -np.count_nonzero(truth[:, j]))
    totals = np.zeros(3)
    cuts: list[ColumnCut | None] = [None] * len(scores)
    for labels, j in enumerate(order, start=1):
        column = scores[j]
        assert column is not None  # in ``cut``
        cuts[j], counts = _micro_macro_cut(column, truth[:, j], totals, labels)
        totals += counts
    return cuts


def _micro_macro_cut(scores: np.ndarray, positives: np.ndarray, totals: np.ndarray, labels: int) -> tuple:
    """One label's cut by :func:`micro_macro_cuts`, the ``labels``-th cut, ``totals`` the true positives, false
    positives and false negatives of those cut before; with its (true positives, false positives, false
    negatives)."""
    candidates = _Candidates(scores, positives)
    hits = np.concatenate([[0], candidates.true_positives]).astype(np.float64)
    predicted = np.concatenate([[0], candidates.predicted]).astype(np.float64)
    false_positives, false_negatives = predicted - hits, candidates.positives - hits
    micro = 2.0 * (totals[0] + hits)
    micro_total = micro + totals[1] + false_positives + totals[2] + false_negatives
    own_total = predicted + candidates.positives
    objective = (micro * own_total * labels + 2.0 * hits * micro_total) / (micro_total * own_total * labels)
    best = int(np.argmax(objective))
    threshold = float(np.nextafter(np.max(scores), np.inf)) if best == 0 else candidates.cut(best - 1)
    cut = ColumnCut(threshold, float(2.0 * hits[best] / own_total[best]), best == 0)
    return cut, np.array([hits[best], false_positives[best], false_negatives[best]])


def cut_label_set(
    classifiers: list, truth: np.ndarray, labels: Sequence[str], names: Sequence[str] | None = None
) -> None:
    """The cuts of ``--svm-threshold`` that need the other labels, made once every label's classifier is fitted
    (before predicting or saving): ``classifiers`` one per label of ``labels`` (None: a label constant in the
    training rows ``truth``, rows × labels), each svm under such a rule having kept its out-of-fold scores
    (``out_of_fold_scores``) and cut itself as f1 does.  ``micro-macro``: every such label cut again by
    :func:`micro_macro_cuts`.  A scoped objective ``NAME=VALUE:LABEL``: LABEL's cut moved to the objective's
    (:func:`objective_cut`) on its out-of-fold scores, the others keeping f1's; a one-line FilterkitError naming
    LABEL where it is none of ``names`` (every name LABEL may take, by default ``labels``: a binary task passes
    its positive class as ``labels`` and every class as ``names``).  Each cut through the classifier's
    ``cut_at``; a classifier without out-of-fold scores (another rule or classifier, a class of one row) is left
    as it was."""
    svms = [classifier for classifier in classifiers if hasattr(classifier, "out_of_fold_scores")]
    rule = svms[0].params["threshold"] if svms else None
    kept = [getattr(classifier, "out_of_fold_scores", None) for classifier in classifiers]
    truth = np.asarray(truth, dtype=bool)
    if rule == MICRO_MACRO:
        cuts = micro_macro_cuts(kept, truth)
    elif rule is not None and objective_scope(rule) is not None:
        cuts = _scoped_cuts(rule, kept, truth, list(labels), list(labels if names is None else names))
    else:
        return
    for classifier, cut in zip(classifiers, cuts):
        if cut is not None:
            classifier.cut_at(cut)


def refuse_scope_outside(params: dict | None, labels, tasks: list[str], name: str | None) -> None:
    """FilterkitError, naming the data's ``name``, where the svm's ``--svm-threshold`` objective is scoped to no class
    of ``labels`` (said before any fit, where the fit had said it unnamed), or to one that none of the run's binary
    ``tasks`` is (``--positive`` another, ``--each-class`` leaving it out): its cut, made for its task alone, would be
    made for none, silently.  ``tasks`` of k classes at once are the classes."""
    rule = (params or {}).get("threshold")
    scope = objective_scope(rule) if isinstance(rule, str) else None
    if scope is not None and scope not in labels:
        shown = ", ".join(labels[:5]) + (", …" if len(labels) > 5 else "")
        raise FilterkitError(f"svm: --svm-threshold {rule}: {scope!r} is not a label of the data ({shown})", name)
    if scope is not None and scope not in tasks:
        raise FilterkitError(
            f"--svm-threshold {rule}: class '{scope}' is none of this run's tasks ({', '.join(tasks)}), so its "
            "cut would be made for nothing",
            name,
        )


def refuse_scope_constant(params: dict | None, labels, truth: np.ndarray, name: str | None) -> None:
    """FilterkitError, naming the training data's ``name``, where the svm's ``--svm-threshold`` objective is scoped to
    a label of ``labels`` that no training row of ``truth`` (rows × labels) holds, or every one: no fit, no
    out-of-fold score, so the cut made for it alone would be made for nothing, silently."""
    rule = (params or {}).get("threshold")
    scope = objective_scope(rule) if isinstance(rule, str) else None
    if scope is None or scope not in labels:
        return
    held = int(truth[:, list(labels).index(scope)].sum())
    if held in (0, len(truth)):
        which = "no training row holds" if held == 0 else "every training row holds"
        raise FilterkitError(
            f"svm: --svm-threshold {rule}: {which} the label '{scope}', so its cut would be made for nothing", name
        )


def _scoped_cuts(rule: str, kept: list, truth: np.ndarray, labels: list[str], names: list[str]) -> list:
    """The cuts of the scoped objective ``rule`` (``NAME=VALUE:LABEL``): LABEL's by :func:`objective_cut` on its
    ``kept`` out-of-fold scores, None for every other label of ``labels`` (and for LABEL without scores); a
    one-line FilterkitError where LABEL is none of ``names``, naming a few of them."""
    scope, objective = objective_scope(rule), threshold_objective(rule)
    assert scope is not None and objective is not None  # a scoped objective
    if scope not in names:
        shown = ", ".join(names[:5]) + (", …" if len(names) > 5 else "")
        raise FilterkitError(f"svm: --svm-threshold {rule}: {scope!r} is not a label of the data ({shown})")
    cuts: list[ColumnCut | None] = [None] * len(kept)
    j = labels.index(scope) if scope in labels else None
    if j is not None and kept[j] is not None:
        cuts[j] = objective_cut(kept[j], truth[:, j], *objective)
    return cuts


#: Out-of-fold gaps (:func:`_best_offset`) closer than this are taken as equal: no offset is placed between them.
_SAME_GAP = 1e-9


def class_offsets(scores: np.ndarray, classes: np.ndarray, sweeps: int = 3) -> tuple[np.ndarray, float]:
    """Per class k an offset t_k (a row's class: the largest score_k − t_k, the first on a tie) raising the
    macro-F1 of ``classes`` (positions 0 … k − 1) on the out-of-fold ``scores`` (rows × classes), and that
    macro-F1: coordinate ascent from t = 0, ``sweeps`` passes over the classes in order, each t_k set exactly
    given the others (:func:`_best_offset`); deterministic."""
    truth = np.bincount(classes, minlength=scores.shape[1]).astype(np.float64)
    return _ascended(scores, classes, _MacroF1(classes, truth), sweeps)


def cost_offsets(
    scores: np.ndarray, classes: np.ndarray, costs: np.ndarray, sweeps: int | None = None
) -> tuple[np.ndarray, float, float]:
    """Per class k an offset t_k, as :func:`class_offsets` places them, lowering the total cost Σᵢ
    ``costs``[classᵢ, decidedᵢ] (row: the actual class, column: the decided one) of the out-of-fold ``scores``
    (rows × classes) against ``classes``; with the total cost and the macro-F1 of the decisions the offsets make.
    By default the passes go on until one moves no offset: a local minimum, no single offset's move cheaper (three
    passes had stopped short of it in 5 of 600 random problems)."""
    objective = _LeastCost(classes, costs)
    offsets, _ = _ascended(scores, classes, objective, sweeps)
    decided = np.argmax(scores - offsets, axis=1)
    return offsets, -objective.of(decided), _macro_f1(classes, decided, objective.truth)


#: The fixed cut on the margin as a threshold (a row positive where its score is ≥ it): the margin > 0.
MARGIN_CUT = float(np.nextafter(0.0, 1.0))


def cost_cut(
    scores: np.ndarray, positives: np.ndarray, costs: np.ndarray, plain: float = 0.5
) -> tuple[ColumnCut, float]:
    """The cut on one column's out-of-fold ``scores`` of the least total cost of its decisions against
    ``positives``, ``costs`` 2 × 2 (row: actual, column: decided; 0 the rest, 1 the positive class), with that
    cost.  The candidates are :func:`f1_cut`'s, every distinct score, placed as it places them, and no row positive
    (a threshold just above the highest score, ``fell_back``); the highest candidate on a tie.  Where every
    candidate costs the same (a matrix pricing every decision alike), the fixed cut ``plain`` (0.5 on
    probabilities, :data:`MARGIN_CUT` on the margin) is kept, as :func:`cost_offsets` keeps the largest score:
    no cost tells a cut from another.  The cut's F1 is that of its decisions against ``positives``."""
    positives = np.asarray(positives, dtype=bool)
    candidates = _Candidates(scores, positives)
    actual = positives.astype(np.int64)
    moved = actual[candidates.order]
    change = np.cumsum(costs[moved, 1] - costs[moved, 0])[candidates.group_ends]
    totals = float(np.sum(costs[actual, 0])) + np.concatenate([[0.0], change])
    if (totals == totals[0]).all():
        decided = np.asarray(scores) >= plain
        f1 = 2.0 * np.count_nonzero(decided & positives) / (np.count_nonzero(decided) + candidates.positives)
        return ColumnCut(plain, float(f1), False), float(totals[0])
    best = int(np.argmin(totals))
    if best == 0:
        f1 = 0.0
        threshold = float(np.nextafter(np.max(scores), np.inf))
    else:
        f1 = 2.0 * candidates.true_positives[best - 1] / (candidates.predicted[best - 1] + candidates.positives)
        threshold = candidates.cut(best - 1)
    return ColumnCut(threshold, float(f1), best == 0), float(totals[best])


def _ascended(scores: np.ndarray, classes: np.ndarray, objective, sweeps: int | None) -> tuple[np.ndarray, float]:
    """Coordinate ascent on the per-class offsets of ``scores`` (rows × classes; ``classes`` the actual ones) from
    t = 0: ``sweeps`` passes over the classes in order (None: until a pass moves no offset, which ends, as each move
    strictly raises the objective), each offset set by :func:`_best_offset` given the others, raising ``objective``
    (higher is better); the offsets and the objective they reach.  A pass that moves none ends the ascent either way
    (the passes after it would move none)."""
    offsets = np.zeros(scores.shape[1])
    reached = objective.of(np.argmax(scores, axis=1))
    passes = 0
    while sweeps is None or passes < sweeps:
        before, passes = offsets.copy(), passes + 1
        for k in range(scores.shape[1]):
            offsets[k], reached = _best_offset(scores, classes, offsets, k, objective.truth, reached, objective)
        if np.array_equal(before, offsets):
            break
    return offsets, reached


class _MacroF1:
    """:func:`class_offsets`' objective: the macro-F1 of the decisions against ``classes`` (positions 0 …
    k − 1, ``truth`` their counts), from counts (a 0/0 counting 0)."""

    def __init__(self, classes: np.ndarray, truth: np.ndarray):
        self.classes, self.truth, self.width = classes, truth, len(truth)

    def of(self, decided: np.ndarray) -> float:
        """The macro-F1 of the decisions ``decided``."""
        return _macro_f1(self.classes, decided, self.truth)

    def moving(self, rival: np.ndarray, order: np.ndarray, k: int) -> np.ndarray:
        """The macro-F1 after the first m rows of ``order`` move to class ``k`` from their ``rival`` class, for
        m = 0 … rows: the counts of true positives and decisions per class summed cumulatively."""
        rows, width, classes = len(rival), self.width, self.classes
        moved_from, held = rival[order], classes[order]
        left = np.zeros((rows + 1, width))
        left[np.arange(1, rows + 1), moved_from] = 1.0
        lost = np.zeros((rows + 1, width))
        lost[np.arange(1, rows + 1), moved_from] = held == moved_from
        predicted = np.bincount(rival, minlength=width) - np.cumsum(left, axis=0)
        hits = np.bincount(classes[rival == classes], minlength=width) - np.cumsum(lost, axis=0)
        predicted[:, k] += np.arange(rows + 1)
        hits[:, k] += np.concatenate([[0], np.cumsum(held == k)])
        return _macro_f1s(hits, predicted, self.truth)


class _LeastCost:
    """:func:`cost_offsets`' objective: the total cost of the decisions against ``classes``, negated (higher is
    better), ``costs`` a matrix of actual (row) by decided (column) class."""

    def __init__(self, classes: np.ndarray, costs: np.ndarray):
        self.classes, self.costs = classes, np.asarray(costs, dtype=np.float64)
        self.truth = np.bincount(classes, minlength=len(self.costs)).astype(np.float64)

    def of(self, decided: np.ndarray) -> float:
        """The negated total cost of the decisions ``decided``."""
        return -float(np.sum(self.costs[self.classes, decided]))

    def moving(self, rival: np.ndarray, order: np.ndarray, k: int) -> np.ndarray:
        """The negated total cost after the first m rows of ``order`` move to class ``k`` from their ``rival``
        class, for m = 0 … rows: each moved row's change of cost, costs[actual, k] − costs[actual, rival], summed
        cumulatively onto the cost of the rival decisions."""
        held = self.classes[order]
        change = self.costs[held, k] - self.costs[held, rival[order]]
        before = float(np.sum(self.costs[self.classes, rival]))
        return -(before + np.concatenate([[0.0], np.cumsum(change)]))


def _macro_f1(classes: np.ndarray, decided: np.ndarray, truth: np.ndarray) -> float:
    """The macro-F1 of ``decided`` against ``classes``, ``truth`` their per-class counts (a 0/0 counting 0)."""
    hits = np.bincount(classes[decided == classes], minlength=len(truth)).astype(np.float64)
    predicted = np.bincount(decided, minlength=len(truth)).astype(np.float64)
    return float(_macro_f1s(hits[None, :], predicted[None, :], truth)[0])


def _macro_f1s(hits: np.ndarray, predicted: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Per row of class counts (true positives ``hits``, ``predicted``; ``truth`` per class) the mean over classes
    of 2·TP / (predicted + true), 0 where both are 0; one summation for every caller, so equal counts give
    bit-equal values."""
    total = predicted + truth
    f1 = np.divide(2.0 * hits, total, out=np.zeros_like(total, dtype=np.float64), where=total > 0)
    return f1.sum(axis=1) / len(truth)


def _best_offset(scores, classes, offsets, k: int, truth, reached: float, objective=None) -> tuple[float, float]:
    """Class ``k``'s offset of the highest ``objective`` (:class:`_LeastCost`; by default :class:`_MacroF1`, the
    macro-F1 of ``classes``, ``truth`` their counts), the others' ``offsets`` held, and that value; the current
    offset (of value ``reached``) unless one is strictly better, then the highest such.  Row i goes to k where
    score_ik − t_k > max_{j≠k}(score_ij − t_j), i.e. where t_k < d_i = score_ik − max_{j≠k}(score_ij − t_j): the
    rows sorted once by d_i, the objective after moving the first m of them to k from their rival classes
    computed cumulatively (``objective.moving``), and each candidate (the midpoint between two distinct d, or
    :func:`_past_end` of either end) valued exactly.  Gaps within
    :data:`_SAME_GAP` of the next are one: d is a difference of differences, and two rows whose d should be equal
    may differ in the last bit, where the argmax of :meth:`LinearSVM.predict_class` would not split them as the
    sorted order does."""
    rows = scores.shape[0]
    objective = _MacroF1(classes, truth) if objective is None else objective
    others = scores - offsets
    others[:, k] = -np.inf
    rival = np.argmax(others, axis=1)
    gaps = scores[:, k] - others[np.arange(rows), rival]
    order = np.argsort(-gaps, kind="stable")
    descending = gaps[order]
    values = objective.moving(rival, order, k)
    apart = np.concatenate([[True], descending[:-1] - descending[1:] > _SAME_GAP, [True]])
    values[~apart] = -np.inf
    moved = int(np.argmax(values))
    if not values[moved] > reached:
        return float(offsets[k]), reached
    reach = float(descending[0] - descending[-1])
    if not moved:
        return _past_end(float(descending[0]), 1.0, reach), float(values[moved])
    if moved == rows:
        return _past_end(float(descending[-1]), -1.0, reach), float(values[moved])
    return float((descending[moved - 1] + descending[moved]) / 2), float(values[moved])


def _past_end(end: float, direction: float, reach: float) -> float:
    """An offset beyond the gap ``end``, the largest (``direction`` 1) or the smallest (−1): half the gaps' range
    ``reach`` past it (0.5 where every gap is equal), as far as a midpoint would be from a gap a range away, so
    that an offset on margins scales with them as one on probabilities does; the next float beyond ``end``
    where that rounds back to it."""
    beyond = end + direction * (reach / 2 if reach > 0 else 0.5)
    return float(beyond if beyond != end else np.nextafter(end, direction * np.inf))


def refuse_cut_outside_probabilities(thresholds: np.ndarray) -> None:
    """FilterkitError for a two-class cut on Platt's probability outside [0, 1] (a fit places it at a score, between
    two, or just past the largest: ``cost_cut``'s "no row"), which decides every row alike."""
    outside = thresholds[(thresholds < 0) | (thresholds > np.nextafter(1.0, 2.0))]
    if len(outside):
        raise FilterkitError(
            f"svm: a threshold of {float(outside[0])!r} on Platt's probability, which no fit makes (it lies in [0, 1])"
        )


def platt_sigmoid(decisions: np.ndarray, targets: np.ndarray, iterations: int = 100) -> tuple[float, float]:
    """Platt's sigmoid P(y=1 | f) = 1 / (1 + exp(A·f + B)) fitted to held-out decision values.

    Platt (1999) with the regularized targets and the Newton method with
    backtracking of Lin, Lin & Weng (2007), "A note on Platt's probabilistic outputs".
    """
    targets = np.asarray(targets, dtype=bool)
    prior_positive, prior_negative = targets.sum(), (~targets).sum()
    t = np.where(targets, (prior_positive + 1.0) / (prior_positive + 2.0), 1.0 / (prior_negative + 2.0))
    A, B = 0.0, np.log((prior_negative + 1.0) / (prior_positive + 1.0))

    def objective(A, B):
        z = decisions * A + B
        with np.errstate(over="ignore"):  # np.where computes both branches; it keeps the one that stays in range
            return float(np.sum(np.where(z >= 0, t * z + np.log1p(np.exp(-z)), (t - 1) * z + np.log1p(np.exp(z)))))

    value = objective(A, B)
    for _ in range(iterations):
        z = decisions * A + B
        with np.errstate(over="ignore", invalid="ignore"):
            p = np.where(z >= 0, np.exp(-z) / (1 + np.exp(-z)), 1 / (1 + np.exp(z)))
        d2 = p * (1 - p)
        h11 = 1e-12 + np.sum(decisions * decisions * d2)
        h22 = 1e-12 + np.sum(d2)
        h21 = np.sum(decisions * d2)
        d1 = t - p
        g1, g2 = np.sum(decisions * d1), np.sum(d1)
        if abs(g1) < 1e-5 and abs(g2) < 1e-5:
            break
        det = h11 * h22 - h21 * h21
        dA, dB = -(h22 * g1 - h21 * g2) / det, -(-h21 * g1 + h11 * g2) / det
        gd = g1 * dA + g2 * dB
        step = 1.0
        while step >= 1e-10:
            new_value = objective(A + step * dA, B + step * dB)
            if new_value < value + 1e-4 * step * gd:
                A, B, value = A + step * dA, B + step * dB, new_value
                break
            step /= 2
        else:
            break
    return float(A), float(B)
