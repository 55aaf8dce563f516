"""filterkit's built-in stages, registered through the same hooks as any third-party plugin.

``NAMES`` says what each built-in plugin (an entry point of pyproject.toml's
``[project.entry-points.filterkit]``) registers, so that a run imports only the plugins its
chain names; tests/test_lazy_plugins.py holds it to what they register.
"""

#: The metrics, and the scorer stage made from each.
METRICS = tuple("acc acc2 bns chi dfreq f1 ig oddn odds pow pr rand idf rf nbr didf igm".split())

NAMES = {
    "auto": {"stage": ("auto",)},
    "classifiers": {"classifier": ("aisvm", "svm")},
    "discretize": {"stage": ("discretize",)},
    "formats": {"format": ("arff", "svmlight", "csv", "jsonl", "parquet", "folders")},
    "housekeeping": {"stage": ("fold", "keep", "remove", "remove-useless", "replace-missing")},
    "metrics": {"metric": METRICS},
    "normalizers": {"stage": ("binarize", "l1", "l2", "minmax")},
    "ordinal": {"stage": ("ordinal",)},
    "scorers": {"stage": METRICS},
    "selection": {"stage": ("select",)},
    "shaper": {"stage": ("shape",)},
    "words": {"stage": ("words",)},
}
