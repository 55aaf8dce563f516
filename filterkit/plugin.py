"""The plugin API: what a third-party stage, metric, classifier, stemmer or format imports, from one module
(docs/plugins.md, "The plugin API", generated from these names' docstrings by docs/make_plugin_api.py).

A third-party plugin imports filterkit only through this module, and a built-in plugin takes these names
from it too; a helper only the built-ins share stays in the module where it lives, which they import it
from.  A name is imported from its home module on first use (PEP 562), so a run that loads only ``l2``
does not import the metrics' or the classifiers' modules: importing this module costs no more than the
names a plugin takes from it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__all__ = [
    "ATTRIBUTES",
    "DATE",
    "FEATURES",
    "NOMINAL",
    "NUMERIC",
    "RELATIONAL",
    "STRING",
    "Accepts",
    "ArrowFormat",
    "Attribute",
    "Chunk",
    "Classifier",
    "Context",
    "ExactSums",
    "Explainable",
    "FilterkitError",
    "Format",
    "FormatOptions",
    "KeptPass",
    "Layout",
    "Metric",
    "Option",
    "RecordFormat",
    "Schema",
    "Stage",
    "StateArray",
    "Stemmer",
    "Updatable",
    "ValueCounts",
    "ValueMapped",
    "Vocabulary",
    "checked_weights",
    "feature_positions",
    "hookimpl",
    "invalid_state",
    "map_features",
    "nonzero_entries",
    "numeric_features",
    "option_file",
    "row_labels",
    "scale_features",
    "stored_in_features",
]

#: The module that defines each exported name.
_HOMES = {
    "filterkit.classifier": ("Classifier",),
    "filterkit.errors": ("FilterkitError",),
    "filterkit.exact": ("ExactSums", "checked_weights"),
    "filterkit.hookspecs": ("hookimpl",),
    "filterkit.metrics": ("Metric", "Vocabulary"),
    "filterkit.formats": ("FormatOptions", "Layout"),
    "filterkit.formats.arrow_format": ("ArrowFormat",),
    "filterkit.formats.record_format": ("RecordFormat",),
    "filterkit.plugins": ("Format", "Stemmer"),
    "filterkit.saved_state": ("ATTRIBUTES", "FEATURES", "StateArray", "invalid_state"),
    "filterkit.option_files": ("option_file",),
    "filterkit.schema": ("DATE", "NOMINAL", "NUMERIC", "RELATIONAL", "STRING", "Attribute", "Chunk", "Schema"),
    "filterkit.stage": (
        "Accepts",
        "Context",
        "Explainable",
        "KeptPass",
        "Option",
        "Stage",
        "Updatable",
        "ValueMapped",
        "feature_positions",
        "map_features",
        "numeric_features",
        "scale_features",
        "stored_in_features",
    ),
    "filterkit.stage_parts": ("nonzero_entries",),
    "filterkit.statistics": ("ValueCounts", "row_labels"),
}

_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}


def __getattr__(name: str) -> Any:
    """An exported name, imported from its home module the first time it is asked for."""
    if name not in _HOME_OF:
        raise AttributeError(f"module 'filterkit.plugin' has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOME_OF[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The exported names."""
    return __all__


if TYPE_CHECKING:  # the same names, for type checkers (tests/test_plugin_api.py checks the three lists agree)
    from filterkit.classifier import Classifier as Classifier
    from filterkit.errors import FilterkitError as FilterkitError
    from filterkit.exact import ExactSums as ExactSums
    from filterkit.exact import checked_weights as checked_weights
    from filterkit.formats import FormatOptions as FormatOptions
    from filterkit.formats import Layout as Layout
    from filterkit.formats.arrow_format import ArrowFormat as ArrowFormat
    from filterkit.formats.record_format import RecordFormat as RecordFormat
    from filterkit.hookspecs import hookimpl as hookimpl
    from filterkit.metrics import Metric as Metric
    from filterkit.metrics import Vocabulary as Vocabulary
    from filterkit.option_files import option_file as option_file
    from filterkit.plugins import Format as Format
    from filterkit.plugins import Stemmer as Stemmer
    from filterkit.saved_state import ATTRIBUTES as ATTRIBUTES
    from filterkit.saved_state import FEATURES as FEATURES
    from filterkit.saved_state import StateArray as StateArray
    from filterkit.saved_state import invalid_state as invalid_state
    from filterkit.schema import DATE as DATE
    from filterkit.schema import NOMINAL as NOMINAL
    from filterkit.schema import NUMERIC as NUMERIC
    from filterkit.schema import RELATIONAL as RELATIONAL
    from filterkit.schema import STRING as STRING
    from filterkit.schema import Attribute as Attribute
    from filterkit.schema import Chunk as Chunk
    from filterkit.schema import Schema as Schema
    from filterkit.stage import Accepts as Accepts
    from filterkit.stage import Context as Context
    from filterkit.stage import Explainable as Explainable
    from filterkit.stage import KeptPass as KeptPass
    from filterkit.stage import Option as Option
    from filterkit.stage import Stage as Stage
    from filterkit.stage import Updatable as Updatable
    from filterkit.stage import ValueMapped as ValueMapped
    from filterkit.stage import feature_positions as feature_positions
    from filterkit.stage import map_features as map_features
    from filterkit.stage import numeric_features as numeric_features
    from filterkit.stage import scale_features as scale_features
    from filterkit.stage import stored_in_features as stored_in_features
    from filterkit.stage_parts import nonzero_entries as nonzero_entries
    from filterkit.statistics import ValueCounts as ValueCounts
    from filterkit.statistics import row_labels as row_labels
