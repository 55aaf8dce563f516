"""``evaluate`` on multi-label data (docs/evaluate.md, "Several labels per row"): binary relevance.

Each label is its own two-class task for the run's classifier (evaluate's linear SVM by default, C chosen
per label by its inner cross-validation).  The chain is fitted on the training rows once for all labels
(its supervised stages combining the labels' scores) or, with ``--chain-per-label``, once per label with
``--label`` set on its stages that take one.  The folds are drawn by iterative stratification (Sechidis,
Tsoumakas & Vlahavas 2011) so that rare labels reach every fold; each row's predicted label set comes from
its test fold, and the measures are those of the pooled predictions: micro- and macro-averaged F1, Hamming
loss, subset accuracy and each label's F1; chains are paired over labels (Wilcoxon), over folds (the
corrected resampled t-test) or, on a test file, over rows (McNemar on exact label sets).
"""

from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from filterkit.classifying import CheckedClassifier, feature_names, fitted_features, labels_without_inner_folds
from filterkit.errors import FilterkitError
from filterkit.label_issues import FOLD_RECORD, label_set_pulls
from filterkit.labels import NamedLabels, label_positions
from filterkit.measures import corrected_resampled_t_test, mcnemar, micro_measures, wilcoxon_p, win_tie_loss
from filterkit.reports import Evaluation
from filterkit.runner import Chain
from filterkit.schema import NOMINAL, Chunk, Schema, take_rows
from filterkit.sources import MemorySource, kept_for_rows
from filterkit.tasks import CHAIN_WARNINGS, ChainSpec, Fits, Settings, Task, fold_of_row, read_rows
from filterkit.thresholds import cut_label_set, refuse_scope_constant

#: ``--threshold``: the classifier's own decision per label, or MEKA's PCut (one threshold for every label).
THRESHOLDS = ("decision", "pcut")

#: The measures of each fold in a cross-validated result's ``per_fold`` (the others are of the pooled folds).
FOLD_MEASURES = ("micro_f1", "macro_f1", "hamming_loss", "subset_accuracy")


@dataclass(frozen=True)
class LabelledData:
    """The rows of a multi-label evaluation, their label attributes' names (Mulan's ``named``, if any),
    truth (rows × labels) and rows in the input (from 1; None: 1, 2, …)."""

    schema: Schema
    data: Chunk
    labels: tuple[str, ...]
    named: NamedLabels | None
    truth: np.ndarray
    input_rows: np.ndarray | None = None


def target_fits(task: Task, inputs: tuple, chains: list[ChainSpec], settings: Settings, progress) -> Fits:
    """The fits of a label set (``task``, :data:`filterkit.tasks.LABEL_SET`) on ``inputs`` (source, name, test
    source or None, test name) by binary relevance: the rows whose labels are all known, the folds drawn by
    iterative stratification (or the test file's rows), per (fold, chain) one :func:`label_fold`."""
    source, name, test, test_name = inputs
    refuse_single_label_settings(settings)
    rule = settings.classifier_params.get("threshold", "fixed")
    if settings.threshold == "pcut" and settings.classifier == "svm" and rule != "fixed":
        raise FilterkitError(
            f"--threshold pcut puts one threshold on every label's score, --svm-threshold {rule} one on each: "
            "choose one"
        )
    progress.expect(2 if test is None else 3)
    data, training_rows = read_rows(source, name, test, test_name, settings, progress)
    dataset, known = known_label_rows(source.schema, data, task.targets, task.named)
    in_test = known >= training_rows
    if test is not None and not in_test.any():
        raise FilterkitError("the test file has no row whose labels are all known", test_name)
    if in_test.all():
        raise FilterkitError("the training data has no row whose labels are all known", name)
    refuse_scope_constant(settings.classifier_params, task.targets, dataset.truth[~in_test], name)
    if test is None and settings.folds > len(known):
        raise FilterkitError(f"--folds {settings.folds} is more than the {len(known)} rows", name)
    with progress.working("drawing the folds"):
        draws = (
            task.folds(dataset.truth, settings.folds, settings.seed)
            if test is None
            else [(np.flatnonzero(~in_test), np.flatnonzero(in_test))]
        )
    fold_of = fold_of_row([rows for _, rows in draws], known, data.n_rows) if test is None else None
    inputs_json = {
        "input": name,
        **({"test": test_name} if test is not None else {}),
        "chains": [chain.text for chain in chains],
    }
    settings_json = _settings_document(settings, dataset, in_test, data.n_rows - len(known), fold_of, inputs_json)
    test_rows = known - training_rows + 1 if test is not None else None

    def evaluation(results: list[dict]) -> Evaluation:
        folds = {chain.text: results[k :: len(chains)] for k, chain in enumerate(chains)}
        return _evaluation(chains, dataset, draws, folds, settings_json, test_rows)

    return Fits(
        dataset,
        label_fold,
        [(chain, train, test) for train, test in draws for chain in chains],
        [f"fold {fold + 1}, chain '{chain.text}'" for fold in range(len(draws)) for chain in chains],
        evaluation,
        data.n_rows,
    )


def _evaluation(chains, dataset: LabelledData, draws, folds: dict, settings_json: dict, test_rows) -> Evaluation:
    """The :class:`Evaluation` of each chain's fold results ``folds`` (per chain text, in the order of ``draws``):
    the pooled test rows' measures, the paired tests against the first chain and, scored on a test file
    (``test_rows``: each known row's number in it), each chain's predicted label sets."""
    scored = np.concatenate([test for _, test in draws])
    results = [_chain_result(chain, dataset, draws, folds[chain.text], scored) for chain in chains]
    document: dict = {"settings": settings_json, "results": [result for result, _ in results]}
    if len(chains) > 1:
        ratio = float(np.mean([len(test) / len(train) for train, test in draws]))
        document["paired"] = [
            _paired(result, results[0][0], predicted, results[0][1], dataset.truth[scored], ratio)
            for result, predicted in results[1:]
        ]
    predictions = [
        {"chain": chain.text, "rows": test_rows[scored], "truth": dataset.truth[scored], "predicted": predicted}
        for chain, (_, predicted) in zip(chains, results)
        if test_rows is not None
    ]
    return Evaluation(document, predictions)


def known_label_rows(schema: Schema, data: Chunk, labels: tuple[str, ...], named) -> tuple[LabelledData, np.ndarray]:
    """The rows of ``data`` whose ``labels`` are all known, as :class:`LabelledData`, and their positions."""
    codes = np.column_stack([data.column(schema.index_of(label)) for label in labels])
    known = np.flatnonzero(~np.isnan(codes).any(axis=1))
    return LabelledData(schema, take_rows(data, known), labels, named, codes[known] == 1, known + 1), known


def refuse_single_label_settings(settings: Settings) -> None:
    """FilterkitError for the options of single-label evaluation that multi-label data has no use for."""
    refused = [
        ("--positive", settings.positive is not None),
        ("--each-class", settings.each_class),
        ("--multiclass", settings.multiclass),
        ("--train-fraction", settings.train_fractions != (1.0,)),
        ("--repeats", settings.repeats > 1),
    ]
    if settings.classifier == "svm" and settings.classifier_params.get("costs") is not None:
        raise FilterkitError(
            "svm --svm-costs: a cost matrix prices one class per row, and multi-label data has a set of labels per "
            "row: leave it out"
        )
    given = [option for option, chosen in refused if chosen]
    if given:
        raise FilterkitError(
            f"{', '.join(given)}: multi-label data is learned by binary relevance, every label at once (no task "
            "to choose; learning curves and repeats are not made for labels yet)"
        )


def label_fold(
    registry, dataset: LabelledData, chain: ChainSpec, train, test, settings: Settings, label_pulls: int = 0
) -> dict:
    """Fit ``chain`` and a classifier per label on the ``train`` rows and predict the ``test`` rows' labels:
    ``predicted`` (test rows × labels), per label the classifier's ``C`` (None: not fitted, the label
    being constant in the training rows) and the number of ``features`` it saw, and where any label's classifier
    chose one, each label's ``threshold`` (None: none chosen).  Both are read of each classifier's ``describe()``
    under those names, whatever the classifier (``svm --svm-threshold f1|fbr`` records its cut there): what
    fitting chose, as each fold's ``classifier`` record of a single-label evaluation shows it; no model is saved
    here to read a state from.  Given ``label_pulls``, also record the rows for ``--label-issues``
    (:func:`~filterkit.label_issues.label_set_pulls`, that many words a row and label)."""
    truth = dataset.truth[train]
    shared = None if settings.chain_per_label else _features(registry, dataset, chain, chain.stages, train, test)
    fits, widths, warnings, seen = [], [], [], []
    for j, label in enumerate(dataset.labels):
        stages = _with_label(registry, chain.stages, label) if settings.chain_per_label else chain.stages
        train_features, test_features, warned, names_of = shared or _features(
            registry, dataset, chain, stages, train, test
        )
        warnings += [text for text in warned if text not in warnings]
        fits.append(_fit_label(registry, settings, truth[:, j], train_features, test_features))
        widths.append(int(train_features.shape[1]))
        seen.append((test_features, names_of))
    fits = _cut_together(fits, truth, dataset.labels, [test_features for test_features, _ in seen])
    scores, decisions, described, calls = zip(*fits)
    warnings += labels_without_inner_folds(dataset.labels, described)
    if settings.threshold == "pcut":
        threshold = pcut_threshold([train_scores for train_scores, _ in scores], truth)
        decisions = tuple(
            decided if test_scores is None else test_scores > threshold
            for (_, test_scores), decided in zip(scores, decisions)
        )
    record = {"predicted": np.column_stack(decisions), "C": [fit.get("C") for fit in described], "features": widths}
    if any("threshold" in fit for fit in described):
        record["threshold"] = [fit.get("threshold") for fit in described]
    if label_pulls:
        classifiers = [(call, *features) for call, features in zip(calls, seen)]
        record[FOLD_RECORD] = label_set_pulls(classifiers, dataset.truth[test], label_pulls)
    return {**record, CHAIN_WARNINGS: warnings} if warnings else record


def _cut_together(fits: list, truth: np.ndarray, labels, test_features: list) -> list:
    """``fits`` after the cuts that need every label (``svm --svm-threshold micro-macro`` or ``NAME=VALUE:LABEL``:
    :func:`~filterkit.thresholds.cut_label_set`), each moved label's test decisions and record made again."""
    calls = [call for *_, call in fits]
    before = [None if call is None else call("describe") for call in calls]
    cut_label_set([None if call is None else call.classifier for call in calls], truth, labels)
    return [
        fit
        if call is None or call("describe") == described
        else (fit[0], call("predict", features, shape=(features.shape[0],)).astype(bool), call("describe"), call)
        for fit, call, described, features in zip(fits, calls, before, test_features)
    ]


def _with_label(registry, stages: list[tuple[str, dict]], label: str) -> list[tuple[str, dict]]:
    """``stages`` with ``--label label`` on each stage that takes one and was given neither ``--label`` nor
    ``--label-powerset`` (whose classes are the sets of every label)."""
    return [
        (name, {**params, "label": label})
        if params.get("label") is None
        and not params.get("label_powerset")
        and any(option.name == "label" for option in registry.stage(name).options)
        else (name, params)
        for name, params in stages
    ]


def _features(registry, dataset: LabelledData, chain: ChainSpec, stages, train, test) -> tuple:
    """The classifier's features of the ``train`` and ``test`` rows, ``stages`` fitted on the ``train`` rows, the
    chain's warnings and a function giving the features' names (worked out once, where a label asks)."""
    fitted, left_out, train_features = fitted_label_chain(registry, dataset, chain, stages, train)
    schema = fitted.output_schema
    assert schema is not None  # fitted
    test_features = fitted_features(
        schema, next(iter(fitted.transform([take_rows(dataset.data, test)]))), left_out, test, fitted_on=False
    )
    return (
        train_features,
        test_features,
        list(fitted.warnings),
        functools.cache(lambda: feature_names(schema, left_out)),
    )


def fitted_label_chain(registry, dataset: LabelledData, chain: ChainSpec, stages, train) -> tuple[Chain, tuple, Any]:
    """``stages`` (of ``chain``) fitted on the ``train`` rows, the label attributes' positions in its output and the
    classifier's features of those rows, made of what the fit's last pass kept (a fold's documents cut into words
    once, as :func:`~filterkit.evaluation.fitted_chain` does); FilterkitError for a chain that removes a label or
    leaves the classifiers no feature."""
    fitted = Chain(
        [registry.make_stage(name, params) for name, params in stages], class_spec=None, labels=dataset.named
    )
    rows = take_rows(dataset.data, train)
    kept = kept_for_rows(rows)
    with contextlib.closing(kept):
        fitted.fit(MemorySource(dataset.schema, rows), keep=kept)
        schema = fitted.output_schema
        assert schema is not None  # fitted
        left_out = label_positions(schema, dataset.labels)
        if len(left_out) < len(dataset.labels):
            raise FilterkitError(f"the chain '{chain.text}' removes label attributes, which the classifiers learn from")
        if not any(
            (attribute.is_numeric or attribute.kind == NOMINAL and attribute.labels) and position not in left_out
            for position, attribute in enumerate(schema.attributes)
        ):
            raise FilterkitError(
                f"the chain '{chain.text}' leaves the classifier no numeric feature besides the labels: turn text "
                "into word vectors with words"
            )
        chunks = (
            fitted.transform_kept(kept)
            if kept.stage_position is not None
            else fitted.transform([take_rows(dataset.data, train)])
        )
        return fitted, left_out, fitted_features(schema, next(iter(chunks)), left_out, train)


def _fit_label(registry, settings: Settings, truth: np.ndarray, train_features, test_features) -> tuple:
    """One label's ((training scores, test scores), test decisions, what fitting chose: its ``describe()``, the
    fitted classifier's call) from the classifier fitted on its ``truth``; a label constant in the training rows
    is predicted constant, with no scores, an empty description and no classifier (None)."""
    if truth.all() or not truth.any():
        return (None, None), np.full(test_features.shape[0], bool(truth.any())), {}, None
    call = CheckedClassifier(registry, settings.classifier, settings.classifier_params)
    call("fit", train_features, truth.astype(np.int64), settings.seed)
    test_rows = (test_features.shape[0],)
    decisions = call("predict", test_features, shape=test_rows).astype(bool)
    test_scores = call("score", test_features, shape=test_rows)
    train_scores = call("score", train_features, shape=truth.shape) if settings.threshold == "pcut" else None
    return (train_scores, test_scores), decisions, call("describe"), call


def pcut_threshold(train_scores: list, truth: np.ndarray) -> float:
    """MEKA's PCut (``-threshold PCut1``): the one threshold on every fitted label's training scores
    (``train_scores``, None for a label constant in the training rows) above which as many (row, label)
    pairs lie as the training label cardinality of ``truth`` asks for, midway between the scores either side."""
    fitted = [j for j, scores in enumerate(train_scores) if scores is not None]
    constant_positives = sum(int(truth[:, j].sum()) for j in range(truth.shape[1]) if j not in fitted)
    wanted = int(np.rint(truth.sum() - constant_positives))
    ordered = np.sort(np.concatenate([train_scores[j] for j in fitted]))[::-1] if fitted else np.empty(0)
    if wanted <= 0 or not len(ordered):
        return np.inf
    if wanted >= len(ordered):
        return -np.inf
    return float((ordered[wanted - 1] + ordered[wanted]) / 2)


def label_measures(truth: np.ndarray, predicted: np.ndarray, labels) -> dict:
    """The measures of ``predicted`` label sets against ``truth`` (rows × labels, bool): micro- and macro-averaged
    F1, precision and recall (a 0/0 counting 0, as scikit-learn's zero_division=0), Hamming loss, subset
    accuracy, label cardinalities and per label its F1, precision, recall, positives and predicted rows."""
    tp = np.sum(truth & predicted, axis=0)
    fp = np.sum(~truth & predicted, axis=0)
    fn = np.sum(truth & ~predicted, axis=0)
    per_label = {
        label: {
            **micro_measures(np.array([tp[j], fp[j], fn[j], 0])),
            "positives": int(truth[:, j].sum()),
            "predicted": int(predicted[:, j].sum()),
        }
        for j, label in enumerate(labels)
    }
    micro = micro_measures(np.array([tp.sum(), fp.sum(), fn.sum(), 0]))
    return {
        **{f"micro_{measure}": value for measure, value in micro.items()},
        **{
            f"macro_{measure}": float(np.mean([entry[measure] for entry in per_label.values()]))
            for measure in ("f1", "precision", "recall")
        },
        "hamming_loss": float(np.mean(truth != predicted)),
        "subset_accuracy": float(np.mean(np.all(truth == predicted, axis=1))),
        "cardinality": float(truth.sum(axis=1).mean()),
        "predicted_cardinality": float(predicted.sum(axis=1).mean()),
        "per_label": per_label,
    }


def _chain_result(chain: ChainSpec, dataset: LabelledData, draws, folds: list[dict], scored: np.ndarray) -> tuple:
    """A chain's result (its measures on the pooled test rows ``scored``, per label the C, the number of
    features and (where :func:`label_fold` recorded one) the threshold of each fold; cross-validated,
    :data:`FOLD_MEASURES` of each fold of ``draws``) and its predicted label sets in ``scored``'s order."""
    predicted = np.concatenate([fold["predicted"] for fold in folds])
    result = {
        "chain": chain.text,
        **({"sweep": chain.sweep} if chain.sweep else {}),
        **label_measures(dataset.truth[scored], predicted, dataset.labels),
    }
    for j, entry in enumerate(result["per_label"].values()):
        entry.update(C=[fold["C"][j] for fold in folds], features=[fold["features"][j] for fold in folds])
        if any("threshold" in fold for fold in folds):
            entry["threshold"] = [fold.get("threshold", [None] * len(dataset.labels))[j] for fold in folds]
    if len(draws) > 1:
        per_fold = [
            label_measures(dataset.truth[test], fold["predicted"], dataset.labels)
            for (_, test), fold in zip(draws, folds)
        ]
        result["per_fold"] = {measure: [values[measure] for values in per_fold] for measure in FOLD_MEASURES}
    return result, predicted


def _paired(result: dict, baseline: dict, predicted, baseline_predicted, truth, ratio: float) -> dict:
    """A chain against the first on the same rows: over labels, each label's F1 (mean difference, win/tie/loss,
    Wilcoxon's p); cross-validated, over folds the micro-F1 (win/tie/loss, Nadeau & Bengio's corrected
    resampled t-test, ``ratio`` the test to training rows); on a test file McNemar's test of the rows whose
    label set each predicts exactly."""
    ours = [entry["f1"] for entry in result["per_label"].values()]
    theirs = [entry["f1"] for entry in baseline["per_label"].values()]
    differences = np.array(ours) - np.array(theirs)
    paired = {
        "chain": result["chain"],
        "baseline": baseline["chain"],
        "f1_over_labels": {
            "difference": float(differences.mean()),
            **win_tie_loss(differences),
            "wilcoxon_p": wilcoxon_p(ours, theirs),
        },
    }
    if "per_fold" in result:
        fold_differences = np.subtract(result["per_fold"]["micro_f1"], baseline["per_fold"]["micro_f1"])
        paired["micro_f1_over_folds"] = {
            **win_tie_loss(fold_differences),
            "corrected_t": corrected_resampled_t_test(fold_differences, ratio),
        }
    else:
        exact = [np.all(sets == truth, axis=1) for sets in (predicted, baseline_predicted)]
        paired["subset_mcnemar"] = mcnemar(np.ones(len(truth), dtype=bool), *exact)
    return paired


def _settings_document(settings: Settings, dataset: LabelledData, in_test, left_out: int, fold_of_row, inputs) -> dict:
    """The ``settings`` of the JSON document: the protocol, the labels and their counts (training rows,
    and a test file's), each row's fold (cross-validated), the ``inputs``' names and the chains."""
    training = dataset.truth[~in_test]
    document = {
        **({"folds": settings.folds, "stratification": "iterative"} if fold_of_row is not None else {}),
        "seed": settings.seed,
        "classifier": settings.classifier,
        "classifier_params": settings.classifier_params,
        "threshold": settings.threshold,
        "chain_fitted": "per label" if settings.chain_per_label else "once",
        "rows": len(training),
        "rows_with_missing_labels_left_out": left_out,
        "labels": list(dataset.labels),
        "label_counts": dict(zip(dataset.labels, training.sum(axis=0).tolist())),
        "cardinality": float(training.sum(axis=1).mean()) if len(training) else 0.0,
        **({"fold_of_row": fold_of_row} if fold_of_row is not None else {}),
        **inputs,
    }
    if in_test.any():
        document.update(
            test_rows=int(in_test.sum()),
            test_label_counts=dict(zip(dataset.labels, dataset.truth[in_test].sum(axis=0).tolist())),
        )
    if settings.sweep is not None:
        document["sweep"] = settings.sweep
    return document
