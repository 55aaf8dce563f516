"""Training on multi-label data (:func:`filterkit.trained.train` with labels): binary relevance, the chain fitted
once for every label and a classifier per label, as ``evaluate --test`` scores it; the model is a
:class:`~filterkit.trained.LabelSetModel`."""

from __future__ import annotations

import dataclasses

import numpy as np

from filterkit import evaluation
from filterkit.errors import FilterkitError
from filterkit.evaluation import CheckedClassifier, Settings
from filterkit.plugins import Registry
from filterkit.sources import MemorySource
from filterkit.trained import LabelSetModel, best_candidate, default_candidates, section_head


def train_labels(
    registry: Registry, opened: tuple, labelled: tuple, chains, settings: Settings, progress, scoring: tuple
) -> LabelSetModel:
    """:func:`train` on multi-label data (``labelled``: the labels' names and Mulan's XML, if any), by binary
    relevance as ``evaluate --test`` scores it: the chain fitted once for every label, a classifier per label
    (a label constant in the training rows predicted constant); several candidates are scored by
    cross-validated micro-F1 over iteratively stratified folds (``scoring``: the folds, the jobs and the plugins
    folder of their processes)."""
    from filterkit import evaluation_labels
    from filterkit.progress import Progress

    source, name = opened
    candidate_folds, *workers = scoring
    evaluation_labels.refuse_single_label_settings(settings)
    if settings.threshold != "decision" or settings.chain_per_label:
        option = "chain_per_label" if settings.chain_per_label else f"threshold={settings.threshold!r}"
        raise FilterkitError(f"{option}: a model decides each label by its own classifier, over one chain")
    progress.expect(1)
    data, _ = evaluation.read_rows(source, name, None, "", settings, progress)
    dataset, _ = evaluation_labels.known_label_rows(source.schema, data, *labelled)
    if not len(dataset.truth):
        raise FilterkitError("the training data has no row whose labels are all known", name)
    chains = default_candidates(dataset.schema, registry) if chains is None else chains
    candidates = []
    if len(chains) > 1:
        with progress.working(f"scoring {len(chains)} candidate chains by {candidate_folds}-fold cross-validation"):
            result = evaluation_labels.evaluate_labels(
                registry,
                (MemorySource(dataset.schema, dataset.data), name, None, None),
                labelled,
                chains,
                dataclasses.replace(settings, folds=candidate_folds),
                Progress(),
                tuple(workers),
            )
        candidates = [
            {"chain": entry["chain"], "measure": "micro_f1", "score": entry["micro_f1"], "macro_f1": entry["macro_f1"]}
            for entry in result.document["results"]
        ]
        chosen = best_candidate(chains, candidates)
    else:
        chosen = chains[0]
    with progress.working(f"fitting '{chosen.text}' and a classifier per label"):
        rows = np.arange(len(dataset.truth))
        fitted, left_out = evaluation_labels.fitted_label_chain(registry, dataset, chosen, chosen.stages, rows)
        assert fitted.output_schema is not None  # fitted
        features = evaluation.classifier_matrix(
            fitted.output_schema, next(iter(fitted.transform([dataset.data]))), left_out
        )
        per_label: list[dict] = []
        classifiers: list[CheckedClassifier | None] = []
        for column in dataset.truth.T:
            call = CheckedClassifier(registry, settings.classifier, settings.classifier_params)
            if column.all() or not column.any():
                per_label.append({"constant": bool(column.any())})
                classifiers.append(None)
                continue
            call("fit", features, column.astype(np.int64), settings.seed)
            per_label.append({"fitted": call("describe"), "state": call("state")})
            classifiers.append(call)
    progress.finish()
    section = {
        **section_head(registry, settings, call.classifier.params, "labels", list(dataset.labels), chosen, features),
        **({"candidates": candidates} if candidates else {}),
        "per_label": per_label,
    }
    return LabelSetModel(fitted, classifiers, section, source.reading, registry)
