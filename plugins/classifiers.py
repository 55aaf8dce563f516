"""The classifiers of ``filterkit evaluate``: ``svm``, the papers' linear SVM (KDD'09 §4; docs/algorithms.md
§8.4), and ``aisvm``, Anghelescu & Muchnik's adaptive-C-and-intercept SVM (docs/algorithms.md §9).
"""

from __future__ import annotations

import functools
from typing import Callable

import numpy as np
import scipy.sparse as sp

from filterkit.costs import loaded_costs, read_cost_matrix, refuse_with_rule
from filterkit.lent_workers import each, lent
from filterkit.linear_svm import FIT_ITERATIONS, SEARCH_ITERATIONS, fit_quietly, linear_svm, stopped_fits, with_refits
from filterkit.measures import area_under_roc, f1_scores
from filterkit.plugin import Classifier, FilterkitError, Option, hookimpl
from filterkit.saved_state import finite_numbers
from filterkit.thresholds import (
    MICRO_MACRO,
    ONE_ROW_CLASS,
    ColumnCut,
    class_offsets,
    f1_cut,
    fbr_cut,
    objective_cut,
    objective_scope,
    platt_sigmoid,
    refuse_cut_outside_probabilities,
    threshold_objective,
)


class LinearSVM(Classifier):
    """Linear SVM (liblinear), C by inner cross-validated AUC or F1, Platt-calibrated scores."""

    name = "svm"
    multiclass = True
    saveable = True
    has_weights = True
    #: A model ships decisions: C by the F1 they reach (docs/RESULTS.md §10: by AUC, C = 0.1 left F1 behind), searched
    #: upward until it stops improving, its inner fits stopped at 1,000 iterations (§10.3, §10.8: the same picks and
    #: test F1 on the nine tasks at a quarter to a half of the inner CV's CPU where C ≤ 1 wins).
    trained_defaults = {"c_by": "f1", "c_search": "early"}
    #: Options added after models were first saved, and their values that fit as before: a model fitted at these
    #: leaves them out of its params, so that it is the file an earlier filterkit wrote, and loads there.
    unrecorded_defaults = {"c_search": "full", "threshold": "fixed", "fbr_floor": 0.1, "costs": None}
    #: ``--svm-threshold`` other than fixed: the thresholds (one per SVM; k classes: offsets), the out-of-fold F1
    #: (macro-F1) they reach (:class:`ColumnCut`), whether each fell back (fbr, recall@precision) and (an objective)
    #: the out-of-fold precision and recall each reaches; None with the fixed cut.
    thresholds: np.ndarray | None = None
    #: The largest C fitted: a margin that hard is no softer at any C beyond, and liblinear, given C = 1e120 on
    #: iris, never returns (nor lets a signal end the run).
    largest_C = 1e10
    threshold_f1: list[float] | None = None
    fell_back: list[bool] | None = None
    threshold_reached: list[tuple[float | None, float | None]] | None = None
    #: The C values an early search scored by inner fits liblinear stopped at :data:`SEARCH_ITERATIONS`.
    stopped_C: tuple[float, ...] = ()
    #: ``train --search flat``'s out-of-fold values at the grid's one C (:meth:`take_out_of_fold`), or None.
    searched_out_of_fold: tuple | None = None
    #: Why the fixed cut decides although ``--svm-threshold`` asked for another (:data:`ONE_ROW_CLASS`); None else.
    threshold_rule: str | None = None
    #: ``--svm-threshold micro-macro`` or a scoped objective (``NAME=VALUE:LABEL``), one column: its out-of-fold
    #: scores, for the cuts that need the other labels (:func:`filterkit.thresholds.cut_label_set`); not saved.
    out_of_fold_scores: np.ndarray | None = None
    #: ``--svm-costs``: the matrix as read (every label of the class), the out-of-fold scores (rows × columns) and
    #: classes for :func:`filterkit.costs.cut_by_costs` (none saved); the labels of its columns and the matrix
    #: restricted to them (saved), and the out-of-fold cost the cut reaches.
    costs_read = cost_matrix = None
    cost_scores: np.ndarray | None = None
    cost_classes: np.ndarray | None = None
    cost_labels: list[str] | None = None
    threshold_cost: float | None = None
    summary = "Linear SVM (liblinear); C by inner-CV AUC or F1 from a grid; Platt-calibrated probabilities (KDD'09 §4)."
    options = (
        Option("c_values", str, "0.01,0.1,1,10,100", "The C grid, comma-separated (a C given twice is searched once)."),
        Option("inner_folds", int, 5, "Folds of the inner cross-validation that picks C.", minimum=2),
        Option(
            "c_by",
            str,
            "auc",
            "Pick C by the inner CV's mean AUC (KDD'09 §4), or by the F1 (k classes: macro-F1) of its out-of-fold "
            "rows decided as --svm-decision decides, the sigmoid fitted on those rows (f1).",
            choices=("auc", "f1"),
        ),
        Option(
            "c_search",
            str,
            "full",
            "Score every C of the grid (full), or walk the grid from its smallest C and stop at the first whose "
            "inner score (--svm-c-by) is not above the best so far, liblinear's inner fits stopped at 1,000 "
            "iterations (early: fewer fits and iterations; the model, and its sigmoid and cuts, from converged fits).",
            choices=("full", "early"),
        ),
        Option("loss", str, "squared-hinge", "The SVM's loss.", choices=("squared-hinge", "hinge")),
        Option(
            "intercept",
            str,
            "regularized",
            "liblinear's penalized offset b, or a free one left out of the penalty.",
            choices=("regularized", "free"),
        ),
        Option(
            "decision",
            str,
            "platt-cv",
            "Positive where Platt's probability ≥ 0.5, the sigmoid fitted on inner-CV decision values "
            "(platt-cv) or on the training rows' own (platt); or where the margin w·x + b > 0 (margin).",
            choices=("platt-cv", "platt", "margin"),
        ),
        Option(
            "class_weight",
            str,
            "none",
            "balanced: each class's errors cost C · rows / (2 · class rows).",
            choices=("none", "balanced"),
        ),
        Option(
            "threshold",
            str,
            "fixed",
            "Where a score (--svm-decision's probability or margin) becomes a decision: at 0.5 (the margin: 0) "
            "(fixed), or at the cut that maximizes the F1 of the inner CV's out-of-fold rows, per class (f1), "
            "falling back to a cut above every out-of-fold score where that F1 is not above --svm-fbr-floor "
            "(fbr: Yang's SCutFBR as LibMultiLabel's thresholding does it); or, binary tasks and labels, the cut "
            "of the highest out-of-fold precision among those of recall ≥ R (precision@recall=R), or of the "
            "highest recall among those of precision ≥ P, above every out-of-fold score where none reaches P "
            "(recall@precision=P); R, P in (0, 1], and with :LABEL (precision@recall=0.9:LABEL) for that label or "
            "positive class alone, the others cut as f1; or, on a label set, each label's cut for the largest micro-F1 "
            "plus macro-F1 of the labels' out-of-fold rows, the most frequent label first (micro-macro: Lin & "
            "Lin's thresholding, as LibMultiLabel's; a binary task: as f1).",
        ),
        Option(
            "fbr_floor",
            float,
            0.1,
            "--svm-threshold fbr: the out-of-fold F1 a class's cut must exceed to be kept (LibMultiLabel's "
            "smallest fbr).",
            minimum=0.0,
            maximum=1.0,
        ),
        Option(
            "costs",
            str,
            None,
            "A cost matrix in Weka's cost-file format (row: the actual class, column: the decided one): the cut "
            "of the least total cost on the inner CV's out-of-fold rows (k classes: per-class offsets that no "
            "single offset's move makes cheaper, by coordinate descent).",
            names_file=True,
        ),
    )

    def __init__(self, **params):
        #: The options given, not left at their defaults (``--svm-fbr-floor`` is refused without ``fbr``).
        self.given = frozenset(params)
        super().__init__(**params)

    def check_params(self) -> None:
        #: ``--svm-threshold``'s objective (:func:`threshold_objective`), None for fixed, f1, fbr or micro-macro, and
        #: the label it is scoped to (``:LABEL``), whose cut :func:`filterkit.thresholds.cut_label_set` moves to it.
        self.objective = threshold_objective(self.params["threshold"])
        self.scope = objective_scope(self.params["threshold"])
        refuse_with_rule(self.params)
        if "fbr_floor" in self.given and self.params["threshold"] != "fbr":
            raise FilterkitError(
                f"svm: --svm-fbr-floor is the floor of --svm-threshold fbr, not of {self.params['threshold']}: "
                "leave it out or give --svm-threshold fbr"
            )
        try:
            self.grid = [float(c) for c in self.params["c_values"].split(",")]
        except ValueError:
            raise FilterkitError(f"svm: --svm-c-values {self.params['c_values']!r} is not a list of numbers") from None
        if not self.grid or not all(0 < C < np.inf for C in self.grid):  # also refuses nan; no fit took these
            raise FilterkitError("svm: every C must be a positive number")
        self.grid = list(dict.fromkeys(self.grid))  # a C given twice searched once (a saved model may hold one)

    def fit(self, features, targets, seed):
        self.binary = True
        return self._fit_one_vs_rest(features, targets, 2, [1], seed)

    def fit_multiclass(self, features, classes, n_classes, seed):
        """One-vs-rest: one SVM per class at the C of the best inner macro one-vs-rest AUC."""
        self.binary = False
        self._refuse_class_cuts()
        return self._fit_one_vs_rest(features, classes, n_classes, range(n_classes), seed)

    def _refuse_class_cuts(self) -> None:
        """FilterkitError for a ``--svm-threshold`` that cuts one column alone, given several classes at once."""
        if self.params["threshold"] == MICRO_MACRO:
            raise FilterkitError(
                "svm: --svm-threshold micro-macro cuts the labels of a label set, and --multiclass predicts one "
                "class per row: use --svm-threshold f1"
            )
        if self.params["threshold"] == "fbr":
            raise FilterkitError(
                "svm: --svm-threshold fbr falls back to predicting a class for no row, and --multiclass predicts "
                "one class per row: use --svm-threshold f1"
            )
        if self.objective is not None:
            raise FilterkitError(
                f"svm: --svm-threshold {self.params['threshold']} cuts a binary task or a label, and --multiclass's "
                "per-class offsets optimise macro-F1 only: use --svm-threshold f1"
            )

    def _fit_one_vs_rest(self, features, classes, n_classes: int, columns, seed: int):
        """One SVM per class of ``columns`` against the rest, at the C of the best mean (over ``columns``)
        AUC of the inner cross-validation (or its out-of-fold F1, ``--svm-c-by f1``), each column's Platt
        sigmoid as the decision option says, and its cut by ``--svm-threshold`` on the inner CV's out-of-fold
        scores (none where a class has a single row: the fixed cut, :data:`ONE_ROW_CLASS`)."""
        classes = np.asarray(classes, dtype=np.int64)
        shared = (features, classes)  # sent to lent workers once a fit
        held_out = self._search_c(shared, n_classes, columns, seed)
        options = self._svm_options(self.chosen_C, seed)  # a class's fit to a lent worker, if any
        self.weights, self.intercepts = _linear_form(each(functools.partial(_fitted_class, options), columns, shared))
        in_sample = self.params["decision"] == "platt"
        fitted_on = _decisions(self.weights, self.intercepts, features) if in_sample else held_out
        self.sigmoids = (
            None
            if fitted_on is None or self.params["decision"] == "margin"
            else np.array([platt_sigmoid(fitted_on[:, j], classes == k) for j, k in enumerate(columns)])
        )
        self.has_probabilities = self.sigmoids is not None
        self.thresholds = self.threshold_f1 = self.fell_back = self.threshold_rule = self.threshold_reached = None
        self.out_of_fold_scores = self.costs_read = self.cost_matrix = self.cost_labels = self.threshold_cost = None
        if self.params["costs"] is not None:
            self._keep_for_costs(held_out, classes)
        if self.params["threshold"] == "fixed":
            return self
        if held_out is None:
            self.threshold_rule = ONE_ROW_CLASS
            self.fell_back = [True] if self._falls_back else None
        else:
            self._choose_thresholds(self._scored(held_out, self.sigmoids), classes, columns)
        return self

    def _search_c(self, shared: tuple, n_classes: int, columns, seed: int) -> np.ndarray | None:
        """Choose C (``chosen_C``): the grid's one C on the flat search's out-of-fold values
        (:meth:`take_out_of_fold`), the best of the inner cross-validation, or the grid's first where a class has
        one row; the out-of-fold values at that C that calibrate and cut (of converged fits), or None.  ``shared``:
        the fit's features and classes, as lent workers are sent them."""
        from sklearn.model_selection import StratifiedKFold

        classes = shared[1]
        self.inner_folds = folds = min(self.params["inner_folds"], int(np.bincount(classes, minlength=n_classes).min()))
        self.inner_auc: dict[float, float] = {}
        self.inner_f1: dict[float, float] = {}
        self.stopped_C: tuple[float, ...] = ()
        given, self.searched_out_of_fold = self.searched_out_of_fold, None  # for this fit alone
        if given is not None:
            return self._take_given(given, classes, columns)
        if folds < 2:
            self.chosen_C = self.grid[0]
            return None
        splits = StratifiedKFold(folds, shuffle=True, random_state=seed).split(np.zeros(len(classes)), classes)
        inner_rows = list(splits)
        inner = self.inner_f1 if self.params["c_by"] == "f1" else self.inner_auc
        early = self.params["c_search"] == "early"
        out_of_fold: dict[float, tuple] = {}
        for C in sorted(self.grid) if early else self.grid:
            out_of_fold[C] = self._inner_decisions(C, seed, inner_rows, shared, columns)
            if early and len(inner) > 1 and not inner[C] > max(score for c, score in inner.items() if c != C):
                break
        self.chosen_C = max(inner, key=lambda C: (inner[C], -C))
        values, stopped = out_of_fold[self.chosen_C]
        if self.chosen_C in self.stopped_C and self._reads_held_out:  # what calibrates and cuts: converged fits
            refits = stopped_fits(stopped)  # lent workers take a class of a fold each; here a fold's rows cut once
            refits = [(fold, [j]) for fold, positions in refits for j in positions] if lent() > 1 else refits
            options = self._svm_options(self.chosen_C, seed, FIT_ITERATIONS)
            again = [(*inner_rows[fold], positions) for fold, positions in refits]
            fitted = each(functools.partial(_fold_decisions, options, columns), again, shared)
            return with_refits(values, inner_rows, refits, [fold_values for fold_values, _ in fitted])
        return values

    def _take_given(self, given: tuple, classes: np.ndarray, columns) -> np.ndarray:
        """The flat search's out-of-fold values (:meth:`take_out_of_fold`) at the grid's one C, their folds and
        scores recorded as the inner ones; refused where they are not of this fit's rows and columns."""
        held, self.inner_folds, auc, f1 = given
        if len(set(self.grid)) != 1 or held.shape != (len(classes), len(columns)):
            raise FilterkitError(
                f"svm: out-of-fold values of shape {held.shape} at {len(set(self.grid))} C values, for a fit "
                f"of {len(classes)} rows and {len(columns)} columns at one C"
            )
        self.chosen_C = self.grid[0]
        self.inner_auc[self.chosen_C] = auc
        if self.params["c_by"] == "f1":
            self.inner_f1[self.chosen_C] = f1
        return held

    def _keep_for_costs(self, held_out: np.ndarray | None, classes: np.ndarray) -> None:
        """``--svm-costs``: the matrix read (once a fit), and the out-of-fold scores and classes of ``held_out``
        kept for :func:`filterkit.costs.cut_by_costs`; none where a class has one row (the fixed cut decides)."""
        self.costs_read = read_cost_matrix(self.params["costs"])
        self.cost_scores = None if held_out is None else self._scored(held_out, self.sigmoids)
        self.cost_classes, self.threshold_rule = classes, ONE_ROW_CLASS if held_out is None else None

    def _scored(self, decisions: np.ndarray, sigmoids: np.ndarray | None) -> np.ndarray:
        """Decision values as the classifier scores them: each column's Platt probability, or the margin."""
        if sigmoids is None:
            return decisions
        with np.errstate(over="ignore"):  # exp(A·f + B) past a double's range is inf: the probability 0
            return 1.0 / (1.0 + np.exp(sigmoids[:, 0] * decisions + sigmoids[:, 1]))

    @property
    def _reads_held_out(self) -> bool:
        """Whether the inner CV's out-of-fold values at the chosen C fit anything: the sigmoid (``platt-cv``), a
        cut (``--svm-threshold``) or the costs' cut."""
        params = self.params
        return params["decision"] == "platt-cv" or params["threshold"] != "fixed" or params["costs"] is not None

    @property
    def _falls_back(self) -> bool:
        """Whether ``--svm-threshold``'s rule can fall back to predicting nothing (fbr, micro-macro,
        recall@precision)."""
        return self.params["threshold"] in ("fbr", MICRO_MACRO) or (self.objective or ("",))[0] == "recall@precision"

    def _choose_thresholds(self, scores: np.ndarray, classes: np.ndarray, columns) -> None:
        """Each column's cut on the out-of-fold ``scores`` by ``--svm-threshold`` (:meth:`_cut`), the out-of-fold
        F1 it reaches, whether it fell back (fbr, recall@precision) and (an objective) its precision and recall."""
        if len(columns) > 1:
            self.thresholds, macro_f1 = class_offsets(scores, classes)
            self.threshold_f1 = [macro_f1]
            return
        self.cut_at(self._cut(scores[:, 0], classes == columns[0]))
        if self.params["threshold"] == MICRO_MACRO or self.scope is not None:
            self.out_of_fold_scores = scores[:, 0]

    def costs_decided(self, labels: list[str], costs: np.ndarray, decision: tuple | None) -> None:
        """``--svm-costs`` decided (:func:`filterkit.costs.cut_by_costs`): its columns' ``labels`` and ``costs``,
        and ``decision`` (None: the fixed cut) the thresholds, out-of-fold F1 (macro-F1), fallback and cost."""
        self.cost_labels, self.cost_matrix = labels, costs
        if decision is not None:
            self.thresholds, f1, fell_back, self.threshold_cost = decision
            self.threshold_f1, self.fell_back = [f1], [fell_back]

    def cut_at(self, cut: ColumnCut) -> None:
        """Decide the one column at ``cut`` (its threshold, out-of-fold F1, fallback, and an objective's reach)."""
        self.thresholds, self.threshold_f1, self.fell_back = np.array([cut.threshold]), [cut.f1], [cut.fell_back]
        self.threshold_reached = None if cut.precision is None else [(cut.precision, cut.recall)]

    def _cut(self, scores: np.ndarray, positives: np.ndarray) -> ColumnCut:
        """One column's cut by ``--svm-threshold`` (:func:`f1_cut`, :func:`fbr_cut`, :func:`objective_cut`) on its
        out-of-fold ``scores``; micro-macro's and a scoped objective's as f1's, until the other labels are known."""
        if self.params["threshold"] == "fbr":
            return ColumnCut(*fbr_cut(scores, positives, self.params["fbr_floor"]))
        if self.objective is None or self.scope is not None:
            return ColumnCut(*f1_cut(scores, positives), False)
        return objective_cut(scores, positives, *self.objective)

    def _inner_decisions(self, C: float, seed: int, inner_rows: list, shared: tuple, columns) -> tuple:
        """The out-of-fold decision values at ``C`` of the inner folds ``inner_rows`` (each: its training and test
        rows) of the fit's ``shared`` features and classes, and each fold's flags of the fits liblinear stopped, its
        mean AUC and (``--svm-c-by f1``) F1 recorded; an early search of several C fits them with at most
        :data:`SEARCH_ITERATIONS`."""
        classes = shared[1]
        searching = self.params["c_search"] == "early" and len(set(self.grid)) > 1
        iterations = SEARCH_ITERATIONS if searching else FIT_ITERATIONS
        decisions, stopped = self._out_of_fold(C, seed, inner_rows, shared, columns, iterations)
        self.stopped_C += (C,) if np.any(stopped) and searching and C not in self.stopped_C else ()
        self.inner_auc[C] = float(
            np.mean(
                [
                    np.nanmean([area_under_roc(classes[test] == k, decisions[test, j]) for j, k in enumerate(columns)])
                    for _, test in inner_rows
                ]
            )
        )
        if self.params["c_by"] == "f1":
            self.inner_f1[C] = self._out_of_fold_f1(decisions, classes, columns)
        return decisions, stopped

    def _out_of_fold(self, C: float, seed: int, inner_rows: list, shared: tuple, columns, iterations: int) -> tuple:
        """The inner folds' out-of-fold decision values at ``C`` (liblinear at most ``iterations``), and each fold's
        flags (a column each) of the fits liblinear stopped there."""
        decisions = np.zeros((len(shared[1]), len(columns)))
        fitted = each(
            functools.partial(_fold_decisions, self._svm_options(C, seed, iterations), columns), inner_rows, shared
        )
        stopped = []
        for (_, test), (fold_decisions, fold_stopped) in zip(inner_rows, fitted):  # fitted in lent workers, if any
            decisions[test] = fold_decisions
            stopped.append(fold_stopped)
        return decisions, stopped

    def _out_of_fold_f1(self, decisions: np.ndarray, classes: np.ndarray, columns) -> float:
        """The F1 of the positive column (k classes: the macro-F1) of the inner CV's out-of-fold decision values,
        each row decided as :meth:`predict` or :meth:`predict_class` would, Platt's sigmoids fitted on these
        rows unless ``--svm-decision margin`` (another ``--svm-threshold`` than fixed: at the cut it chooses on
        these rows, a cut that fell back reaching 0).

        An objective (``precision@recall=R``, ``recall@precision=P``) is scored so too: by the F1 at its own
        cut, not by the precision or recall it maximizes.  ``--svm-c-by f1`` promises C by the F1 of the
        decisions ``predict`` will make, and ``train --search flat`` records this value as that F1; the
        objective chooses where the cut lies, F1 judges the decisions it makes (with recall held ≥ R, or
        precision ≥ P, F1 grows with the quantity maximized, so the two mostly agree), and a C whose
        recall@precision cut fell back scores 0 as an fbr fallback does."""
        scores = decisions
        if self.params["decision"] != "margin":
            sigmoids = np.array([platt_sigmoid(decisions[:, j], classes == k) for j, k in enumerate(columns)])
            scores = self._scored(decisions, sigmoids)
        if len(columns) > 1 and self.params["threshold"] != "fixed":
            return class_offsets(scores, classes)[1]
        if len(columns) == 1 and self.params["threshold"] != "fixed":
            cut = self._cut(scores[:, 0], classes == columns[0])
            return 0.0 if cut.fell_back else cut.f1
        if len(columns) == 1:
            decided = scores[:, 0] > 0 if self.params["decision"] == "margin" else scores[:, 0] >= 0.5
            return f1_scores(classes == columns[0], decided, [True])[0]
        decided = np.asarray(columns)[np.argmax(scores, axis=1)]
        return float(np.mean(f1_scores(classes, decided, list(columns))))

    def decisions_at(
        self, C: float, seed: int, features, classes, columns, scored, iterations: int = FIT_ITERATIONS
    ) -> tuple[np.ndarray, np.ndarray]:
        """The decision values of the rows ``scored`` (one column per class of ``columns``) of one SVM at ``C`` per
        class of ``columns`` against the rest, fitted on ``features`` and ``classes`` with no inner cross-validation
        (``train --search flat`` makes its own folds; liblinear at most ``iterations``), and which of those fits
        liblinear stopped there (a flag per column); refused as :meth:`fit_multiclass` refuses, given several."""
        if len(columns) > 1:
            self._refuse_class_cuts()
        return _stopped_decisions(self._svm_options(C, seed, iterations), columns, features, classes, scored)

    def take_out_of_fold(self, decisions: np.ndarray, folds: int, auc: float, f1: float) -> None:
        """The next fit, at the grid's one C, takes ``decisions`` (rows × columns: the search's out-of-fold values
        at that C, each fold's chain and SVM fitted on its training rows; ``train --search flat``) for its sigmoid
        and cuts, and their ``folds``, mean AUC and F1 as its inner scores, in place of an inner cross-validation
        (docs/algorithms.md §8.4)."""
        self.searched_out_of_fold = (np.asarray(decisions, dtype=np.float64), int(folds), float(auc), float(f1))

    def out_of_fold_f1(self, decisions: np.ndarray, classes: np.ndarray, columns) -> float:
        """The F1 (k classes: macro-F1) by which ``--svm-c-by f1`` picks C, of out-of-fold ``decisions`` made by a
        search outside this classifier (``train --search flat``), as of the inner CV's (:meth:`_out_of_fold_f1`)."""
        return self._out_of_fold_f1(decisions, classes, columns)

    def _svm_options(self, C: float, seed: int, iterations: int = FIT_ITERATIONS) -> tuple:
        """:func:`~filterkit.linear_svm.linear_svm`'s arguments at ``C``, ``seed`` and ``iterations`` for this
        classifier's options; FilterkitError for a C above :attr:`largest_C` (checked here, where a fit is to be made,
        not of the grid: a model of such a grid, made before the bound, still loads)."""
        if C > self.largest_C:
            raise FilterkitError(f"svm: C = {C:g} is above {self.largest_C:g}, where liblinear may never return")
        class_weight = None if self.params["class_weight"] == "none" else "balanced"
        return (C, seed, self.params["loss"].replace("-", "_"), self.params["intercept"], class_weight, iterations)

    def class_scores(self, features):
        """Each class's Platt probability, or its decision value without a sigmoid."""
        return (
            self.probabilities(features)
            if self.has_probabilities
            else _decisions(self.weights, self.intercepts, features)
        )

    def probabilities(self, features):
        """Each class's Platt probability 1 / (1 + exp(A·f + B)) of its decision value f."""
        return self._scored(_decisions(self.weights, self.intercepts, features), self.sigmoids)

    def score(self, features):
        return self.class_scores(features)[:, 0]

    def exported_rule(self):
        """What :meth:`predict` and :meth:`predict_class` apply to the decision values, for an exported scorer
        (:mod:`filterkit.export`): the Platt sigmoids (A, B) per column or None, the thresholds (offsets) or None."""
        return self.sigmoids, self.thresholds

    def predict(self, features):
        """Positive where the score is ≥ the chosen threshold; else where the probability is ≥ 0.5 (the margin > 0)."""
        if self.thresholds is not None:
            return self.score(features) >= self.thresholds[0]
        return self.score(features) > 0 if self.sigmoids is None else self.score(features) >= 0.5

    def predict_class(self, features):
        """The class of the largest score less its offset (``--svm-threshold f1``; else none), the first on a tie."""
        scores = self.class_scores(features)
        return np.argmax(scores if self.thresholds is None else scores - self.thresholds, axis=1)

    def describe(self):
        described = {
            "C": self.chosen_C,
            "inner_folds": self.inner_folds,
            "inner_auc" if self.binary else "inner_macro_auc": {str(c): a for c, a in self.inner_auc.items()},
        }
        if self.inner_f1:
            described["inner_f1" if self.binary else "inner_macro_f1"] = {str(c): f for c, f in self.inner_f1.items()}
        if self.params["c_search"] == "early":
            described["C_scored"] = list(self.inner_auc)
        if self.stopped_C:
            described["C_scored_by_stopped_fits"] = list(self.stopped_C)
        if not self.binary:
            described["class_rule"] = "largest decision value" if self.sigmoids is None else "largest Platt probability"
        if self.params["intercept"] == "free":
            offsets = self.intercepts.tolist()
            described["b"] = offsets[0] if self.binary else offsets
        if self.thresholds is not None and self.binary:
            described.update(threshold=float(self.thresholds[0]), threshold_f1=self.threshold_f1[0])
            if self.threshold_reached is not None:
                described.update(zip(("threshold_precision", "threshold_recall"), self.threshold_reached[0]))
        elif self.thresholds is not None:
            described.update(thresholds=self.thresholds.tolist(), thresholds_macro_f1=self.threshold_f1[0])
        if self.threshold_rule is not None:
            described["threshold_rule"] = self.threshold_rule
        if self.threshold_cost is not None:
            described["threshold_cost"] = self.threshold_cost
        return {**described, **self._fallback_described()}

    def _fallback_described(self) -> dict:
        """``--svm-threshold fbr``, ``micro-macro`` or ``recall@precision``: whether the cut fell back
        (``threshold_fell_back``); nothing for another rule."""
        return {"threshold_fell_back": self.fell_back[0]} if self.fell_back and self._falls_back else {}

    def state(self):
        """The one-vs-rest SVMs' weights and intercepts, their Platt sigmoids (A, B) if any, and the thresholds
        ``--svm-threshold`` chose, if any."""
        saved = {"binary": self.binary, "weights": self.weights, "intercepts": self.intercepts}
        if self.sigmoids is not None:
            saved["sigmoids"] = self.sigmoids
        if self.thresholds is not None:
            saved["thresholds"] = self.thresholds
        if self.cost_matrix is not None:
            saved.update(cost_labels=self.cost_labels, cost_matrix=self.cost_matrix)
        return saved

    def load_state(self, state):
        optional = ("sigmoids", "thresholds", "cost_labels", "cost_matrix")
        _expect_keys(self, state, ("binary", "weights", "intercepts"), optional)
        self._check_fitted_parts(state)
        if type(state["binary"]) is not bool:
            raise FilterkitError(f"svm: 'binary' is {state['binary']!r}, not true or false")
        self.binary = state["binary"]
        self.weights, self.intercepts = _checked_linear_form(self, state["weights"], state["intercepts"])
        self.sigmoids = (
            None if state.get("sigmoids") is None else finite_numbers(self.name, "sigmoids", state["sigmoids"])
        )
        if self.sigmoids is not None and self.sigmoids.shape != (len(self.intercepts), 2):
            raise FilterkitError(f"svm: sigmoids of shape {self.sigmoids.shape}, not one (A, B) per SVM")
        self.has_probabilities = self.sigmoids is not None
        self.thresholds = (
            None if state.get("thresholds") is None else finite_numbers(self.name, "thresholds", state["thresholds"])
        )
        if self.thresholds is not None and self.thresholds.shape != self.intercepts.shape:
            raise FilterkitError(f"svm: thresholds of shape {self.thresholds.shape}, not one per SVM")
        if state["binary"] is True and self.sigmoids is not None and self.thresholds is not None:
            refuse_cut_outside_probabilities(self.thresholds)
        if self.binary != (len(self.intercepts) == 1):
            raise FilterkitError(f"svm: {len(self.intercepts)} SVMs for a {'binary' if self.binary else 'k-class'} fit")
        self.cost_labels, self.cost_matrix = loaded_costs(state, 2 if self.binary else len(self.intercepts))

    def _check_fitted_parts(self, state: dict) -> None:
        """FilterkitError unless ``state`` holds the sigmoids and thresholds a fit of these params makes: with platt-cv
        and a cut, both or neither (neither where a class has one row: :data:`ONE_ROW_CLASS`)."""
        decision, cut = self.params["decision"], self.params["threshold"] != "fixed" or self.params["costs"] is not None
        held = {key: state.get(key) is not None for key in ("sigmoids", "thresholds")}
        made = {"sigmoids": {"platt": True, "margin": False}.get(decision), "thresholds": None if cut else False}
        for key, option in (("sigmoids", f"--svm-decision {decision}"), ("thresholds", "--svm-threshold fixed")):
            if made[key] is not None and held[key] != made[key]:
                verb, how = ("lacks", "always") if made[key] else ("has", "never")
                raise FilterkitError(f"svm: its state {verb} '{key}', which a model trained with {option} {how} holds")
        if decision == "platt-cv" and cut and held["sigmoids"] != held["thresholds"]:
            present, absent = sorted(held, key=held.__getitem__, reverse=True)
            raise FilterkitError(
                f"svm: its state has '{present}' but not '{absent}': a fit makes both, or neither where a class has one"
            )

    def linear(self):
        return self.weights, self.intercepts


def _fitted_one_vs_rest(options: tuple, features, classes, columns) -> list:
    """One SVM of :func:`~filterkit.linear_svm.linear_svm`'s ``options`` per class of ``columns`` against the rest,
    fitted."""
    return [fit_quietly(linear_svm(*options), features, (classes == k).astype(np.int64)) for k in columns]


def _fitted_class(options: tuple, shared: tuple, column: int):
    """The SVM of ``options`` for class ``column`` against the rest on the ``shared`` features and classes: a
    piece of work :func:`each` may send to a worker process."""
    features, classes = shared
    return _fitted_one_vs_rest(options, features, classes, [column])[0]


def _fold_decisions(options: tuple, columns, shared: tuple, fold: tuple) -> tuple[np.ndarray, np.ndarray]:
    """The decision values on an inner ``fold``'s test rows (its training and test rows of the ``shared`` features
    and classes, and optionally the positions of the ``columns`` to fit, all when not given) of
    :func:`_fitted_one_vs_rest` fitted on its training rows, and which of those fits liblinear stopped at the
    options' iterations: a piece of work :func:`each` may send to a worker process."""
    (features, classes), (train, test, *positions) = shared, fold
    fitted = [columns[j] for j in positions[0]] if positions else columns
    return _stopped_decisions(options, fitted, features[train], classes[train], features[test])


def _stopped_decisions(options: tuple, columns, features, classes, scored) -> tuple[np.ndarray, np.ndarray]:
    """The decision values of the rows ``scored`` of :func:`_fitted_one_vs_rest` fitted on ``features`` and
    ``classes``, and whether liblinear stopped each of those fits (a flag per column) at the options' iterations.
    A fit that converged before them is the one of any larger limit, bit for bit (liblinear's walk, seeded, is
    the same until it converges), so only a stopped one is fitted again (:func:`~filterkit.linear_svm.stopped_fits`)."""
    models = _fitted_one_vs_rest(options, features, classes, columns)
    iterations = options[-1]  # linear_svm's last argument
    stopped = np.array([np.max(getattr(model, "n_iter_", 0)) >= iterations for model in models], dtype=bool)
    return _decisions(*_linear_form(models), scored), stopped


def _linear_form(models: list) -> tuple[np.ndarray, np.ndarray]:
    """The fitted SVMs' weights (one row each) and intercepts."""
    weights = np.vstack([np.asarray(model.coef_, dtype=np.float64).reshape(1, -1) for model in models])
    return weights, np.array([float(np.ravel(model.intercept_)[0]) for model in models])


def _expect_keys(classifier, state, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> None:
    """FilterkitError naming the first key a saved state lacks, or holds beyond ``required`` and ``optional``."""
    if not isinstance(state, dict):
        raise FilterkitError(f"{classifier.name}: its state is {type(state).__name__}, not a mapping")
    missing = [key for key in required if key not in state]
    extra = sorted(key for key in state if key not in required + optional)
    if missing or extra:
        raise FilterkitError(
            f"{classifier.name}: its state {'lacks' if missing else 'has an unknown'} '{(missing or extra)[0]}'"
        )


def _checked_linear_form(classifier, weights, intercepts) -> tuple[np.ndarray, np.ndarray]:
    """Saved weights (one row per SVM) and intercepts (one per row), finite and fitting each other."""
    weights, intercepts = (
        finite_numbers(classifier.name, "weights", weights),
        finite_numbers(classifier.name, "intercepts", intercepts),
    )
    if weights.ndim != 2 or intercepts.shape != (weights.shape[0],):
        raise FilterkitError(
            f"{classifier.name}: weights of shape {weights.shape} and intercepts of shape {intercepts.shape} "
            "do not make one linear function per row"
        )
    return weights, intercepts


def _decisions(weights: np.ndarray, intercepts: np.ndarray, features) -> np.ndarray:
    """Each row's decision value per SVM, features · weights[j] + intercepts[j] (as liblinear computes it)."""
    return np.asarray(features @ weights.T) + intercepts


def adaptive_c(
    base_C: float, recall_at: Callable[[float], float], rho_max: float, k_max: int, reading: str = "algorithm"
) -> tuple[int, float, list]:
    """Anghelescu & Muchnik's Algorithm 1 (docs/algorithms.md §9, step 2), in one of its two readings.

    ``recall_at(C)`` trains at C and returns the training recall of the target
    class.  For k = 1 … k_max, C_k = k · base_C; stop at the first k whose recall
    is ≥ rho_max (or at k_max).  The paper then contradicts itself:

    - ``algorithm`` (its pseudo-code): if that recall is 1.0 and k > 1, step back
      to k − 1; a recall in [rho_max, 1) is kept.
    - ``prose`` (its text, "ρ_k < ρ_max"): the chosen C is the largest whose
      recall stays below rho_max, so any stop at recall ≥ rho_max with k > 1
      steps back to k − 1.

    Returns (k, C*, the recalls measured).
    """
    recalls = []
    for k in range(1, k_max + 1):
        recalls.append(recall_at(k * base_C))
        if recalls[-1] >= rho_max:
            break
    overshot = recalls[-1] == 1.0 if reading == "algorithm" else recalls[-1] >= rho_max
    if overshot and k > 1:
        k -= 1
    return k, k * base_C, recalls


def adaptive_intercept(decisions: np.ndarray, targets: np.ndarray, min_specificity: float) -> float | None:
    """The cut on training decision values w·x with the highest training sensitivity
    while specificity stays ≥ ``min_specificity`` (docs/algorithms.md §9, step 3).

    Candidate cuts are the midpoints between consecutive distinct sorted decision
    values; a row is positive when its decision value is above the cut.  Among cuts
    of equal sensitivity the highest (the most specific) wins, which is where a
    search lowering the cut stops once every positive is retrieved.  Returns the cut,
    or None when no candidate meets the specificity bound (or there is none).
    """
    targets = np.asarray(targets, dtype=bool)
    distinct = np.unique(decisions)
    if len(distinct) < 2 or targets.all() or not targets.any():
        return None
    cuts = (distinct[1:] + distinct[:-1]) / 2
    positives_above = targets.sum() - np.searchsorted(np.sort(decisions[targets]), cuts, side="right")
    negatives_at_or_below = np.searchsorted(np.sort(decisions[~targets]), cuts, side="right")
    sensitivity = positives_above / targets.sum()
    specificity = negatives_at_or_below / (~targets).sum()
    feasible = np.flatnonzero(specificity >= min_specificity)
    if not len(feasible):
        return None
    best = sensitivity[feasible].max()
    return float(cuts[feasible[sensitivity[feasible] == best].max()])


class AdaptiveSVM(Classifier):
    """aiSVM: C adapted to the training recall, intercept moved for sensitivity under a specificity bound."""

    name = "aisvm"
    saveable = True
    has_weights = True
    summary = "Anghelescu & Muchnik's adaptive-C-and-intercept linear SVM (recall of rare classes)."
    options = (
        Option(
            "rho_max",
            float,
            0.75,
            "Stop raising C at the first training recall ≥ this (ρ_max).",
            minimum=0.0,
            maximum=1.0,
        ),
        Option("k_max", int, 20, "Try at most C = k·C₁ for k up to this.", minimum=1),
        Option(
            "alpha_n",
            float,
            0.85,
            "Keep training specificity ≥ this while moving the intercept (α_N*).",
            minimum=0.0,
            maximum=1.0,
        ),
        Option(
            "reading",
            str,
            "algorithm",
            "Algorithm 1's pseudo-code (step back from C_k only when its recall is 1.0) or the paper's prose "
            "(step back whenever recall reaches ρ_max, so ρ_k < ρ_max).",
            choices=("algorithm", "prose"),
        ),
    )

    def fit(self, features, targets, seed):
        targets = np.asarray(targets, dtype=np.int64)
        norms = (
            np.sqrt(np.asarray(features.multiply(features).sum(axis=1)).ravel())
            if sp.issparse(features)
            else np.linalg.norm(features, axis=1)
        )
        mean_norm = float(norms.mean()) if len(norms) else 0.0
        if mean_norm == 0:
            raise FilterkitError("aisvm: every training row is all zeros")
        self.base_C = 1.0 / mean_norm
        models = {}

        def recall_at(C):
            models[C] = model = fit_quietly(linear_svm(C, seed, loss="hinge"), features, targets)
            return float((model.decision_function(features)[targets == 1] > 0).mean())

        self.k, self.chosen_C, self.recalls = adaptive_c(
            self.base_C, recall_at, self.params["rho_max"], self.params["k_max"], self.params["reading"]
        )
        model = models[self.chosen_C]
        self.weights = np.asarray(model.coef_).ravel()
        decisions = np.asarray(features @ self.weights).ravel()
        cut = adaptive_intercept(decisions, targets, self.params["alpha_n"])
        self.intercept = float(model.intercept_[0]) if cut is None else -cut
        self.intercept_moved = cut is not None
        return self

    def score(self, features):
        return np.asarray(features @ self.weights).ravel() + self.intercept

    def predict(self, features):
        return self.score(features) > 0

    def state(self):
        """The weights and the (possibly moved) intercept."""
        return {"weights": self.weights, "intercept": self.intercept}

    def load_state(self, state):
        _expect_keys(self, state, ("weights", "intercept"))
        weights = finite_numbers(self.name, "weights", state["weights"])
        if weights.ndim != 1:
            raise FilterkitError(f"aisvm: weights of shape {weights.shape}, not one weight per feature")
        weights, intercepts = _checked_linear_form(self, weights.reshape(1, -1), [state["intercept"]])
        self.weights, self.intercept = weights[0], float(intercepts[0])

    def linear(self):
        return self.weights.reshape(1, -1), np.array([self.intercept])

    def describe(self):
        return {
            "C1": self.base_C,
            "k": self.k,
            "C": self.chosen_C,
            "recalls": self.recalls,
            "intercept": self.intercept,
            "intercept_moved": self.intercept_moved,
        }


@hookimpl
def register_classifiers(register):
    """The linear SVM and aiSVM."""
    register(LinearSVM)
    register(AdaptiveSVM)
