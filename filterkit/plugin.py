"""The plugin API: everything a filterkit plugin imports, from one module (docs/plugins.md, "The plugin API").

The built-in plugins import filterkit only through this module (``tests/test_plugin_api.py`` checks it), so
whatever a built-in stage, metric or classifier needs, a third-party plugin has too.  A name is imported
from its home module on first use (PEP 562), so a run that loads only ``l2`` does not import the metrics'
or the shaper's modules: importing this module costs no more than the names a plugin takes from it.
"""

# ruff: noqa: F401  (the names imported for type checkers are this module's exports)

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: Each exported name, by the module that defines it (``MODULE:NAME`` where the export renames it).
_HOMES = {
    "filterkit.arff.limits": ("Limits", "VARIABLES"),
    "filterkit.arff.reader": ("JAVA_BLANKS",),
    "filterkit.classifier": ("Classifier",),
    "filterkit.discretization": ("mdl_cut_points_by_feature", "midpoints", "weka_decimal"),
    "filterkit.errors": ("FilterkitError",),
    "filterkit.exact": ("ExactSums", "checked_weights", "complex_keys"),
    "filterkit.hookspecs": ("hookimpl",),
    "filterkit.metrics": (
        "COMBINE_OPTION",
        "JOINT",
        "LABEL_OPTIONS",
        "Metric",
        "Vocabulary",
        "class_scores",
        "combine_option",
        "combined",
        "feature_scores",
        "label_scores",
        "minority_class",
        "per_label_scores",
        "positive_code",
        "ranking_order",
        "resolved_combine",
        "target_classes",
        "weka_ranking",
        "with_options",
    ),
    "filterkit.labels": ("chosen_labels",),
    "filterkit.plugins": ("registered_stemmer",),
    "filterkit.saved_state": ("OPTIONS_KEY", "fitted_options", "invalid_state"),
    "filterkit.schema": (
        "DATE",
        "NOMINAL",
        "NUMERIC",
        "RELATIONAL",
        "STRING",
        "Attribute",
        "Chunk",
        "CsrArrays",
        "Schema",
        "collector_paused",
        "refuse_unreadable_output",
        "shown_labels",
        "shown_name",
        "take_rows",
        "weka_range",
    ),
    "filterkit.shaping": ("NEIGHBORS", "Knots", "first_unsorted_knot", "fit_toward"),
    "filterkit.stage": (
        "ATTRIBUTES",
        "Accepts",
        "FEATURES",
        "OPTION_FILE_BYTES",
        "SCALING_EXPONENTS",
        "Context",
        "Option",
        "Stage",
        "StateArray",
        "feature_positions",
        "map_features",
        "numeric_features",
        "option_file",
        "positions_by_width",
        "range_scaling",
        "refuse_infinite_ranges",
        "refuse_negative_values",
        "refuse_unaccepted_input",
        "scale_features",
        "scale_values",
        "scaling_map",
        "stored_in_features",
        "with_stored_values",
    ),
    "filterkit.stage_parts": (
        "AttributeSubset",
        "check_runs",
        "csr_of_runs",
        "features_of_kinds",
        "kept_columns",
        "label_layout",
        "nonzero_entries",
        "output_offsets",
        "unique_schema",
    ),
    "filterkit.statistics": (
        "ClassValueCountsStage",
        "LabelSetStatistics",
        "LabelStatistics",
        "PresenceCounts",
        "ValueCounts",
        "column_ranges",
        "label_ranges",
        "label_set_codes",
        "row_labels",
    ),
    # the compiled kernels the built-in stages call, and the switch of their numpy paths
    "filterkit.kernels": (
        "ARRAYS",
        "WordTally",
        "WordVocabulary",
        "count_words",
        "hash_columns",
        "join_kept_words",
        "ndtri",
        "normalize_stored",
        "renumber_words",
        "shape_stored",
        "use_compiled",
    ),
}

#: Where each exported name comes from: (module, the name there).
_SOURCES = {
    export.partition(":")[2] or export: (module, export.partition(":")[0])
    for module, exports in _HOMES.items()
    for export in exports
}

__all__ = sorted(_SOURCES)


def __getattr__(name: str) -> Any:
    """An exported name, imported from its home module the first time it is asked for."""
    if name not in _SOURCES:
        raise AttributeError(f"module 'filterkit.plugin' has no attribute {name!r}")
    module, original = _SOURCES[name]
    value = getattr(importlib.import_module(module), original)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # the same names, for type checkers (tests/test_plugin_api.py checks the two lists agree)
    from filterkit.arff.limits import VARIABLES, Limits
    from filterkit.arff.reader import JAVA_BLANKS
    from filterkit.classifier import Classifier
    from filterkit.discretization import mdl_cut_points_by_feature, midpoints, weka_decimal
    from filterkit.errors import FilterkitError
    from filterkit.exact import ExactSums, checked_weights, complex_keys
    from filterkit.hookspecs import hookimpl
    from filterkit.kernels import (
        ARRAYS,
        WordTally,
        WordVocabulary,
        count_words,
        hash_columns,
        join_kept_words,
        ndtri,
        normalize_stored,
        renumber_words,
        shape_stored,
        use_compiled,
    )
    from filterkit.labels import chosen_labels
    from filterkit.metrics import (
        COMBINE_OPTION,
        JOINT,
        LABEL_OPTIONS,
        Metric,
        Vocabulary,
        class_scores,
        combine_option,
        combined,
        feature_scores,
        label_scores,
        minority_class,
        per_label_scores,
        positive_code,
        ranking_order,
        resolved_combine,
        target_classes,
        weka_ranking,
        with_options,
    )
    from filterkit.plugins import registered_stemmer
    from filterkit.saved_state import OPTIONS_KEY, fitted_options, invalid_state
    from filterkit.schema import (
        DATE,
        NOMINAL,
        NUMERIC,
        RELATIONAL,
        STRING,
        Attribute,
        Chunk,
        CsrArrays,
        Schema,
        collector_paused,
        refuse_unreadable_output,
        shown_labels,
        shown_name,
        take_rows,
        weka_range,
    )
    from filterkit.shaping import NEIGHBORS, Knots, first_unsorted_knot, fit_toward
    from filterkit.stage import (
        ATTRIBUTES,
        FEATURES,
        OPTION_FILE_BYTES,
        SCALING_EXPONENTS,
        Accepts,
        Context,
        Option,
        Stage,
        StateArray,
        feature_positions,
        map_features,
        numeric_features,
        option_file,
        positions_by_width,
        range_scaling,
        refuse_infinite_ranges,
        refuse_negative_values,
        refuse_unaccepted_input,
        scale_features,
        scale_values,
        scaling_map,
        stored_in_features,
        with_stored_values,
    )
    from filterkit.stage_parts import (
        AttributeSubset,
        check_runs,
        csr_of_runs,
        features_of_kinds,
        kept_columns,
        label_layout,
        nonzero_entries,
        output_offsets,
        unique_schema,
    )
    from filterkit.statistics import (
        ClassValueCountsStage,
        LabelSetStatistics,
        LabelStatistics,
        PresenceCounts,
        ValueCounts,
        column_ranges,
        label_ranges,
        label_set_codes,
        row_labels,
    )
