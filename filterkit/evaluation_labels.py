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
import csv
import html
import io
from dataclasses import dataclass

import numpy as np

from filterkit import evaluation
from filterkit.documents import for_terminal
from filterkit.errors import FilterkitError
from filterkit.evaluation import (
    ChainSpec,
    CheckedClassifier,
    Evaluation,
    Settings,
    _worker_registry,
    classifier_matrix,
    opened_input,
    read_rows,
)
from filterkit.formats import FormatOptions
from filterkit.labels import LABEL_SEPARATOR, NamedLabels, label_names, label_positions, mulan_labels
from filterkit.measures import corrected_resampled_t_test, mcnemar, micro_measures, wilcoxon_p, win_tie_loss
from filterkit.reports import LITERAL_TEXT, SVG_SETTINGS, _scatter_figure, _svg_figure, require_matplotlib
from filterkit.runner import Chain
from filterkit.schema import NOMINAL, Chunk, Schema, take_rows
from filterkit.sources import MemorySource

#: ``--threshold``: the classifier's own decision per label, or MEKA's PCut (one threshold for every label).
THRESHOLDS = ("decision", "pcut")

#: The measures of each fold in a cross-validated result's ``per_fold`` (the others are of the pooled folds).
FOLD_MEASURES = ("micro_f1", "macro_f1", "hamming_loss", "subset_accuracy")


@dataclass(frozen=True)
class LabelledData:
    """The rows of a multi-label evaluation, their label attributes' names (Mulan's ``named``, if any) and
    truth (rows × labels)."""

    schema: Schema
    data: Chunk
    labels: tuple[str, ...]
    named: NamedLabels | None
    truth: np.ndarray


class LabelEvaluation(Evaluation):
    """What ``evaluate`` returns on multi-label data: the ``--json`` document, its table and, scored on a
    test file, each chain's predicted label sets (``predictions``: chain, rows, truth, predicted)."""

    def table(self, per_task: bool = False) -> str:
        """The text table ``evaluate`` prints: a row per chain, each label's F1, the paired tests."""
        return label_table(self.document)

    def html(self, per_task: bool = False) -> str:
        """The page ``evaluate --report`` writes: the table and, per chain after the first, each label's F1
        under it against under the first, a dot per label (needs matplotlib)."""
        return label_report_html(self.document)

    def predictions_csv(self) -> str:
        """Each test row's label sets as CSV: chain, row, truth, predicted (names joined by ``|``)."""
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(["chain", "row", "truth", "predicted"])
        labels = np.array(self.document["settings"]["labels"], dtype=object)
        joined = [label for label in labels if LABEL_SEPARATOR in label]
        if joined:
            raise FilterkitError(f"--predictions: label '{joined[0]}' holds {LABEL_SEPARATOR}, which joins label names")
        for entry in self.predictions:
            for row, truth, predicted in zip(entry["rows"], entry["truth"], entry["predicted"]):
                sets = (LABEL_SEPARATOR.join(labels[chosen]) for chosen in (truth, predicted))
                writer.writerow([entry["chain"], int(row), *sets])
        return buffer.getvalue()


def labelled_data(schema: Schema, settings: Settings) -> tuple[tuple[str, ...], NamedLabels | None] | None:
    """The label names of multi-label input (MEKA's ``-C`` or Mulan's XML ``settings.labels_file``) and the
    XML's labels, or None for single-label input, refusing the options that need labels there."""
    named = None if settings.labels_file is None else mulan_labels(settings.labels_file)
    names = label_names(schema, named)
    if names:
        return names, named
    if settings.threshold != "decision" or settings.chain_per_label:
        option = "--chain-per-label" if settings.chain_per_label else f"--threshold {settings.threshold}"
        raise FilterkitError(f"{option} needs multi-label data (MEKA's -C in the relation name, or --labels FILE.xml)")
    return None


def evaluate(source, chains: list[ChainSpec], settings: Settings = Settings(), registry=None, **options) -> Evaluation:
    """:func:`filterkit.evaluation.evaluate` (``options`` are its keywords), multi-label data (MEKA's ``-C`` in
    the relation name, or Mulan's XML ``settings.labels_file``) evaluated by binary relevance."""
    from filterkit.plugins import load_plugins
    from filterkit.progress import Progress

    reading = options.pop("reading", None) or FormatOptions(settings.class_spec)
    names = (options.pop("name", None), options.pop("test_name", None))
    with contextlib.ExitStack() as stack:
        opened = opened_input(source, names[0], "<data>", options.pop("input_format", None), reading)
        source, name = stack.enter_context(opened)
        opened = opened_input(options.pop("test", None), names[1], "<test>", None, reading, source.schema)
        test, test_name = stack.enter_context(opened)
        labelled = labelled_data(source.schema, settings)
        if labelled is None:
            return evaluation.evaluate(
                source, chains, settings, registry, name=name, test=test, test_name=test_name, **options
            )
        registry = load_plugins(options.get("plugins_dir")) if registry is None else registry
        progress = Progress() if options.get("progress") is None else options["progress"]
        if options.get("engine", "local") != "local":
            raise FilterkitError(f"--engine {options['engine']} is not made for multi-label data yet: use --jobs")
        workers = (options.get("jobs", 1), options.get("plugins_dir"))
        return evaluate_labels(registry, (source, name, test, test_name), labelled, chains, settings, progress, workers)


def evaluate_labels(
    registry, inputs: tuple, labelled: tuple, chains: list[ChainSpec], settings: Settings, progress, workers: tuple
) -> LabelEvaluation:
    """Evaluate ``chains`` by binary relevance on the multi-label ``inputs`` (source, name, test, test name)
    whose ``labelled`` is :func:`labelled_data`'s answer, in ``workers`` (jobs, plugins folder)."""
    source, name, test, test_name = inputs
    labels, named = labelled
    refuse_single_label_settings(settings)
    progress.expect(2 if test is None else 3)
    data, training_rows = read_rows(source, name, test, test_name, settings, progress)
    dataset, known = known_label_rows(source.schema, data, labels, named)
    in_test = known >= training_rows
    if test is not None and not in_test.any():
        raise FilterkitError("the test file has no row whose labels are all known", test_name)
    if in_test.all():
        raise FilterkitError("the training data has no row whose labels are all known", name)
    if test is None and settings.folds > len(known):
        raise FilterkitError(f"--folds {settings.folds} is more than the {len(known)} rows", name)
    with progress.working("drawing the folds"):
        folds_drawn = test is None
        fold_of_row = iterative_stratification(dataset.truth, settings.folds, settings.seed) if folds_drawn else None
    draws = (
        [(np.flatnonzero(~in_test), np.flatnonzero(in_test))]
        if fold_of_row is None
        else [
            (np.flatnonzero(fold_of_row != fold), np.flatnonzero(fold_of_row == fold)) for fold in range(settings.folds)
        ]
    )
    folds = _fit_folds(registry, dataset, chains, draws, settings, progress, workers)
    progress.finish()
    scored = np.concatenate([test_rows for _, test_rows in draws])
    results = [_chain_result(chain, dataset, draws, folds[chain.text], scored) for chain in chains]
    inputs_json = {
        "input": name,
        **({"test": test_name} if test is not None else {}),
        "chains": [chain.text for chain in chains],
    }
    settings_json = _settings_document(settings, dataset, in_test, data.n_rows - len(known), fold_of_row, inputs_json)
    document: dict = {"settings": settings_json, "results": [result for result, _ in results]}
    if len(chains) > 1:
        ratio = float(np.mean([len(test_rows) / len(train_rows) for train_rows, test_rows in draws]))
        document["paired"] = [
            _paired(result, results[0][0], predicted, results[0][1], dataset.truth[scored], ratio)
            for result, predicted in results[1:]
        ]
    predictions = [
        {
            "chain": chain.text,
            "rows": known[scored] - training_rows + 1,
            "truth": dataset.truth[scored],
            "predicted": predicted,
        }
        for chain, (_, predicted) in zip(chains, results)
        if test is not None
    ]
    return LabelEvaluation(document, predictions)


def known_label_rows(schema: Schema, data: Chunk, labels: tuple[str, ...], named) -> tuple[LabelledData, np.ndarray]:
    """The rows of ``data`` whose ``labels`` are all known, as :class:`LabelledData`, and their positions."""
    codes = np.column_stack([data.column(schema.index_of(label)) for label in labels])
    known = np.flatnonzero(~np.isnan(codes).any(axis=1))
    return LabelledData(schema, take_rows(data, known), labels, named, codes[known] == 1), known


def refuse_single_label_settings(settings: Settings) -> None:
    """FilterkitError for the options of single-label evaluation that multi-label data has no use for."""
    refused = [
        ("--positive", settings.positive is not None),
        ("--each-class", settings.each_class),
        ("--multiclass", settings.multiclass),
        ("--train-fraction", settings.train_fractions != (1.0,)),
        ("--repeats", settings.repeats > 1),
    ]
    given = [option for option, chosen in refused if chosen]
    if given:
        raise FilterkitError(
            f"{', '.join(given)}: multi-label data is learned by binary relevance, every label at once (no task "
            "to choose; learning curves and repeats are not made for labels yet)"
        )


def iterative_stratification(truth: np.ndarray, folds: int, seed: int) -> np.ndarray:
    """Each row's fold (0 … ``folds`` − 1) by Sechidis, Tsoumakas & Vlahavas's iterative stratification
    (ECML PKDD 2011, Algorithm 1) of the rows × labels ``truth``: the label with the fewest rows still to
    place goes first, each of its rows to the fold that most lacks that label's positives (then the fold
    that most lacks rows, then one of those at random); rows without a label go last, to the folds that
    most lack rows.  ``seed`` orders the rows and breaks the ties."""
    generator = np.random.default_rng(seed)
    order = generator.permutation(len(truth))
    ordered = np.asarray(truth, dtype=bool)[order]
    # Each fold's wants, times ``folds`` to stay integers: a label's positives (or the rows) minus folds · placed.
    label_wants = np.tile(ordered.sum(axis=0).astype(np.int64), (folds, 1))
    row_wants = np.full(folds, len(ordered), dtype=np.int64)
    remaining = ordered.sum(axis=0).astype(np.int64)
    fold_of = np.full(len(ordered), -1, dtype=np.int64)

    def place(row: int, wants: np.ndarray) -> None:
        tied = np.flatnonzero(wants == wants.max())
        tied = tied[row_wants[tied] == row_wants[tied].max()]
        fold = int(tied[0] if len(tied) == 1 else generator.choice(tied))
        fold_of[row] = fold
        label_wants[fold] -= folds * ordered[row]
        row_wants[fold] -= folds
        remaining[:] -= ordered[row]

    while remaining.any():
        fewest = np.flatnonzero(remaining == remaining[remaining > 0].min())
        label = int(fewest[0] if len(fewest) == 1 else generator.choice(fewest))
        for row in np.flatnonzero(ordered[:, label] & (fold_of < 0)).tolist():
            place(row, label_wants[:, label])
    for row in np.flatnonzero(fold_of < 0).tolist():
        place(row, row_wants)
    fold_of_row = np.empty_like(fold_of)
    fold_of_row[order] = fold_of
    return fold_of_row


def _fit_folds(registry, dataset: LabelledData, chains, draws, settings: Settings, progress, workers) -> dict:
    """Per chain text, each draw's :func:`label_fold` answer, fitted here or in ``workers[0]`` processes."""
    jobs, plugins_dir = workers
    fits = [(chain, train, test) for train, test in draws for chain in chains]
    step = "cross-validating" if len(draws) > 1 else "scoring the test file"
    with contextlib.ExitStack() as stack:
        if min(jobs, len(fits)) == 1:
            results = (label_fold(registry, dataset, *fit, settings) for fit in fits)
        else:
            from joblib import Parallel, delayed

            results = Parallel(n_jobs=min(jobs, len(fits)), return_as="generator")(
                delayed(_label_fold_in_worker)(plugins_dir, dataset, *fit, settings) for fit in fits
            )
        meter = stack.enter_context(progress.step(step, items=len(fits), unit="fits"))
        folds: dict[str, list[dict]] = {chain.text: [] for chain in chains}
        for (chain, _, _), result in zip(fits, results):
            folds[chain.text].append(result)
            meter.advance(detail=f"fold {len(folds[chain.text])}, chain '{chain.text}'")
    return folds


def _label_fold_in_worker(plugins_dir, dataset: LabelledData, chain, train, test, settings: Settings) -> dict:
    return label_fold(_worker_registry(plugins_dir), dataset, chain, train, test, settings)


def label_fold(registry, dataset: LabelledData, chain: ChainSpec, train, test, settings: Settings) -> dict:
    """Fit ``chain`` and a classifier per label on the ``train`` rows and predict the ``test`` rows' labels:
    ``predicted`` (test rows × labels), per label the classifier's ``C`` (None: not fitted, the label
    being constant in the training rows) and the number of ``features`` it saw."""
    truth = dataset.truth[train]
    shared = None if settings.chain_per_label else _features(registry, dataset, chain, chain.stages, train, test)
    fits, widths = [], []
    for j, label in enumerate(dataset.labels):
        stages = _with_label(registry, chain.stages, label) if settings.chain_per_label else chain.stages
        train_features, test_features = shared or _features(registry, dataset, chain, stages, train, test)
        fits.append(_fit_label(registry, settings, truth[:, j], train_features, test_features))
        widths.append(int(train_features.shape[1]))
    scores, decisions, chosen = zip(*fits)
    if settings.threshold == "pcut":
        threshold = pcut_threshold([train_scores for train_scores, _ in scores], truth)
        decisions = tuple(
            decided if test_scores is None else test_scores > threshold
            for (_, test_scores), decided in zip(scores, decisions)
        )
    return {"predicted": np.column_stack(decisions), "C": list(chosen), "features": widths}


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
    """The classifier's features of the ``train`` and ``test`` rows, ``stages`` fitted on the ``train`` rows."""
    fitted, left_out = fitted_label_chain(registry, dataset, chain, stages, train)
    assert fitted.output_schema is not None  # fitted
    return tuple(
        classifier_matrix(fitted.output_schema, next(iter(fitted.transform([take_rows(dataset.data, rows)]))), left_out)
        for rows in (train, test)
    )


def fitted_label_chain(registry, dataset: LabelledData, chain: ChainSpec, stages, train) -> tuple[Chain, tuple]:
    """``stages`` (of ``chain``) fitted on the ``train`` rows, and the label attributes' positions in its output;
    FilterkitError for a chain that removes a label or leaves the classifiers no feature."""
    fitted = Chain(
        [registry.make_stage(name, params) for name, params in stages], class_spec=None, labels=dataset.named
    )
    fitted.fit(MemorySource(dataset.schema, take_rows(dataset.data, train)))
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
            f"the chain '{chain.text}' leaves the classifier no numeric feature besides the labels: turn text into "
            "word vectors with words"
        )
    return fitted, left_out


def _fit_label(registry, settings: Settings, truth: np.ndarray, train_features, test_features) -> tuple:
    """One label's ((training scores, test scores), test decisions, C) from the classifier fitted on its
    ``truth``; a label constant in the training rows is predicted constant, with no scores and C None."""
    if truth.all() or not truth.any():
        return (None, None), np.full(test_features.shape[0], bool(truth.any())), None
    call = CheckedClassifier(registry, settings.classifier, settings.classifier_params)
    call("fit", train_features, truth.astype(np.int64), settings.seed)
    test_rows = (test_features.shape[0],)
    decisions = call("predict", test_features, shape=test_rows).astype(bool)
    test_scores = call("score", test_features, shape=test_rows)
    train_scores = call("score", train_features, shape=truth.shape) if settings.threshold == "pcut" else None
    return (train_scores, test_scores), decisions, call("describe").get("C")


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
    """A chain's result (its measures on the pooled test rows ``scored``, per label the C and the number of
    features of each fold; cross-validated, :data:`FOLD_MEASURES` of each fold of ``draws``) and its
    predicted label sets in ``scored``'s order."""
    predicted = np.concatenate([fold["predicted"] for fold in folds])
    result = {
        "chain": chain.text,
        **({"sweep": chain.sweep} if chain.sweep else {}),
        **label_measures(dataset.truth[scored], predicted, dataset.labels),
    }
    for j, entry in enumerate(result["per_label"].values()):
        entry.update(C=[fold["C"][j] for fold in folds], features=[fold["features"][j] for fold in folds])
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
        **({"fold_of_row": fold_of_row.tolist()} if fold_of_row is not None else {}),
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


def label_table(document: dict) -> str:
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
        f"(cardinality {settings['cardinality']:.3f}), binary relevance, threshold {settings['threshold']}, "
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


def label_report_html(document: dict) -> str:
    """The self-contained HTML page of a multi-label evaluation: :func:`label_table` and, per chain after the
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
        f"<pre>{html.escape(label_table(document))}</pre>{figures}</body></html>\n"
    )
