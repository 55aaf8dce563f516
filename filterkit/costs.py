"""``svm --svm-costs FILE`` (docs/algorithms.md §8.4.1): a cost matrix in Weka 3.6's cost-file format
(``weka.classifiers.CostMatrix``), read once when a classifier is fitted, the cut or per-class offsets of the least
out-of-fold cost chosen once the classes' labels are known (:func:`cut_by_costs`), and the cost of decisions as
Weka's Evaluation reports it given ``-m COSTFILE`` (:func:`total_cost`: its "Total Cost").

A loaded model never reads the file again: the labels and the matrix its decisions were chosen by are numbers in
the classifier's saved state.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from filterkit.errors import FilterkitError
from filterkit.option_files import OPTION_FILE_BYTES, option_file
from filterkit.saved_state import finite_numbers
from filterkit.thresholds import MARGIN_CUT, cost_cut, cost_offsets

#: A cost as written: digits with a decimal point or an exponent, no sign but ``+``, no inf or nan (Java's
#: ``Double.valueOf`` takes those, and a cost must be finite and not negative).
_COST = re.compile(r"\+?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
#: The size line's numbers, as Java's ``Integer.parseInt`` takes them (here: no sign, at most 9 digits).
_SIZE = re.compile(r"[0-9]{1,9}")
#: What separates a line's numbers: Java's ``StringTokenizer`` blanks, as Weka's reader splits them (not the other
#: characters ``str.split`` takes for white space, such as a no-break space).
_BLANKS = re.compile(r"[ \t\f]+")
#: The largest cost: a total over 10^8 rows stays finite, and whole costs sum exactly up to 2^53.
MOST_COST = 1e12


def read_cost_matrix(path: str) -> np.ndarray:
    """The cost matrix of the file ``path`` (rows: the actual class, columns: the decided one), as Weka 3.6's
    ``CostMatrix(Reader)`` reads it: lines starting with ``%`` and blank lines skipped, first "ROWS COLUMNS" (equal),
    then one line of numbers per row, split at Java's blanks (space, tab, form feed).  Stricter than Weka where it
    would read a file wrongly or not at all: each cost a number from 0 to :data:`MOST_COST`, no token beyond a
    row's, no line after the last row; Weka's expressions and Matlab's one-line form ``[0 1; 10 0]`` (which Weka
    3.6's ``-m`` refuses too) are refused.  A one-line FilterkitError
    naming the file and line."""
    try:
        data = option_file(path)
        text = "" if len(data) > OPTION_FILE_BYTES else data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        raise FilterkitError(f"option --svm-costs: cannot read the cost file: {reason}", path) from None
    if len(data) > OPTION_FILE_BYTES:
        raise FilterkitError(f"option --svm-costs: more than {OPTION_FILE_BYTES:,} bytes: not a cost matrix", path)
    size = 0
    rows: list[list[float]] = []
    lines = re.split("\r\n|\r|\n", text.removeprefix("\ufeff"))
    for number, line in enumerate(lines, start=1):
        words = [word for word in _BLANKS.split(line) if word]
        if not words or line.startswith("%"):
            continue
        if not size:
            size = _size(words, path, number)
        elif len(rows) == size:
            raise FilterkitError(f"option --svm-costs: a line after the {size} rows of the matrix", path, number)
        else:
            rows.append(_row(words, size, path, number))
    if not size:
        raise FilterkitError("option --svm-costs: no 'ROWS COLUMNS' line: not a Weka cost matrix", path, len(lines))
    if len(rows) < size:
        raise FilterkitError(f"option --svm-costs: {len(rows)} rows of the {size} the matrix has", path, len(lines))
    return np.array(rows, dtype=np.float64)


def _size(words: list[str], path: str, number: int) -> int:
    """The matrix's size from its first line ``words`` ("ROWS COLUMNS"); a FilterkitError where it is not two
    equal whole numbers above 0."""
    if words[0].startswith("["):
        raise FilterkitError(
            "option --svm-costs: Matlab's one-line form is not read (nor by Weka 3.6's -m): write 'ROWS COLUMNS', "
            "then a line per row",
            path,
            number,
        )
    if len(words) != 2 or not all(_SIZE.fullmatch(word) for word in words) or int(words[0]) < 1:
        raise FilterkitError(f"option --svm-costs: {' '.join(words)!r} is not 'ROWS COLUMNS'", path, number)
    if words[0] != words[1] and int(words[0]) != int(words[1]):
        raise FilterkitError(f"option --svm-costs: a {words[0]}×{words[1]} matrix is not square", path, number)
    return int(words[0])


def _row(words: list[str], size: int, path: str, number: int) -> list[float]:
    """One row's costs from its ``words``; a FilterkitError where they are not ``size`` finite numbers ≥ 0."""
    if len(words) != size:
        raise FilterkitError(f"option --svm-costs: {len(words)} costs in a row of a {size}×{size} matrix", path, number)
    for word in words:
        if not _COST.fullmatch(word) or not float(word) <= MOST_COST:
            raise FilterkitError(f"option --svm-costs: {word!r} is not a cost from 0 to {MOST_COST:g}", path, number)
    return [float(word) for word in words]


def total_cost(costs: np.ndarray, actual: np.ndarray, decided: np.ndarray) -> float:
    """Weka's "Total Cost" of the decisions ``decided`` against the ``actual`` classes (both positions among the
    rows of ``costs``): Σᵢ costs[actualᵢ, decidedᵢ]."""
    return float(np.sum(np.asarray(costs)[np.asarray(actual, dtype=np.int64), np.asarray(decided, dtype=np.int64)]))


def refuse_with_rule(params: dict) -> None:
    """FilterkitError for ``--svm-costs`` beside an ``--svm-threshold`` other than fixed: the cost matrix chooses
    the cut, and another rule would choose it again by another objective."""
    if params.get("costs") is not None and params["threshold"] != "fixed":
        raise FilterkitError(
            f"svm: --svm-costs chooses the cut by the cost matrix, and --svm-threshold {params['threshold']} would "
            "choose it by another objective: give one of them"
        )


def refuse_unfitting_costs(classifier: str, params: dict, labels: Sequence[str], multiclass: bool) -> None:
    """Before any fit, once the data is read: a one-line FilterkitError where the classifier ``classifier`` of
    ``params`` is an svm given ``--svm-costs`` whose matrix does not fit the class of ``labels`` (every label it
    declares): a matrix of another size (naming the file, as the cost file's own faults are), or a binary task
    (``multiclass`` False) of a class of more than two labels.  The matrix is read as a fit reads it
    (:func:`read_cost_matrix`: within a run, the bytes the run read); nothing for another classifier or an svm
    without ``--svm-costs``."""
    path = params.get("costs")
    if classifier != "svm" or path is None:
        return
    if not multiclass:
        _refuse_binary_task(labels)
    _refuse_other_size(read_cost_matrix(path), labels, path)


def _refuse_binary_task(labels: Sequence[str]) -> None:
    """FilterkitError for a binary task's cost matrix on a class of other than two ``labels``."""
    if len(labels) != 2:
        raise FilterkitError(
            f"option --svm-costs: a class of {len(labels)} labels, and a binary task decides one against the rest, "
            "which no row of the matrix prices: give --multiclass"
        )


def _refuse_other_size(read: np.ndarray, labels: Sequence[str], path: str) -> None:
    """FilterkitError naming the cost file ``path`` where its matrix ``read`` is not one row per label of
    ``labels``."""
    if len(read) != len(labels):
        shown = ", ".join(labels[:5]) + (", …" if len(labels) > 5 else "")
        raise FilterkitError(
            f"option --svm-costs: a {len(read)}×{len(read)} matrix, and the class has {len(labels)} labels ({shown})",
            path,
        )


def cut_by_costs(classifier, labels: Sequence[str], columns: Sequence[int]) -> None:
    """Decide a fitted ``classifier`` (an svm given ``--svm-costs``, which read the matrix of all the class's
    ``labels`` as ``costs_read`` and kept its out-of-fold ``cost_scores`` and ``cost_classes``) by the least
    out-of-fold cost, now
    that the labels of its columns are known: ``columns`` their positions among ``labels`` (binary: the rest's
    label, then the positive class's).  k columns: :func:`~filterkit.thresholds.cost_offsets`; one:
    :func:`~filterkit.thresholds.cost_cut`, keeping the fixed cut (0.5 on probabilities, the margin > 0) where
    every cut costs the same.  The labels of ``columns`` and the matrix restricted to them go to
    the classifier's ``costs_decided`` with the decision: the thresholds (one per column), the out-of-fold F1
    (macro-F1) and cost they reach and whether no row is positive (None without out-of-fold scores: a class of
    one row).  A one-line FilterkitError naming the file where the matrix does not fit the labels (which a run
    refuses before any fit: :func:`refuse_unfitting_costs`).  Nothing for another classifier or an svm without
    ``--svm-costs``."""
    read = getattr(classifier, "costs_read", None)
    if read is None:
        return
    _refuse_other_size(read, labels, classifier.params["costs"])
    costs = read[np.ix_(columns, columns)]
    scores, classes = classifier.cost_scores, classifier.cost_classes
    decision = None
    if scores is not None and scores.shape[1] == 1:
        plain = 0.5 if classifier.has_probabilities else MARGIN_CUT
        cut, cost = cost_cut(scores[:, 0], classes == 1, costs, plain)
        decision = (np.array([cut.threshold]), cut.f1, cut.fell_back, cost)
    elif scores is not None:
        offsets, cost, macro_f1 = cost_offsets(scores, classes, costs)
        decision = (offsets, macro_f1, False, cost)
    classifier.costs_decided([labels[j] for j in columns], costs, decision)


def cut_task_by_costs(classifier, labels: Sequence[str], positive: int) -> None:
    """:func:`cut_by_costs` for a binary task, class ``positive`` of ``labels`` against the other (a one-line
    FilterkitError where the class has more labels: the rest is then no one label a row of the matrix prices)."""
    if getattr(classifier, "costs_read", None) is None:
        return
    _refuse_binary_task(labels)
    cut_by_costs(classifier, labels, [1 - positive, positive])


def loaded_costs(state: dict, columns: int) -> tuple[list[str] | None, np.ndarray | None]:
    """An svm's saved ``cost_labels`` and ``cost_matrix`` (both or neither; None, None for neither): ``columns``
    labels (strings) and a matrix of ``columns`` × ``columns`` costs from 0 to :data:`MOST_COST`; a one-line
    FilterkitError else."""
    labels, matrix = state.get("cost_labels"), state.get("cost_matrix")
    if labels is None and matrix is None:
        return None, None
    costs = None if matrix is None else finite_numbers("svm", "cost_matrix", matrix)
    if costs is None or costs.shape != (columns, columns) or not ((costs >= 0).all() and (costs <= MOST_COST).all()):
        raise FilterkitError(f"svm: 'cost_matrix' is not {columns}×{columns} costs from 0 to {MOST_COST:g}")
    if not isinstance(labels, list) or len(labels) != columns or not all(isinstance(x, str) for x in labels):
        raise FilterkitError(f"svm: 'cost_labels' is not a list of {columns} labels")
    return labels, costs
