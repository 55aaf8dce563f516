"""The `nbr` of filterkit 0.3 (issue 47 item 9; docs/RESULTS.md §8): Wang & Manning's log-count ratio
without its norms, ln((α + tp) / (α + fp)) with α = 1, to measure it beside the paper's r on the same folds.

Load with ``filterkit --plugins-dir docs/experiments/nbr_constantless``: ``nbr0 --presence --multiply`` is
``nbr --presence --multiply`` as it was before the norms ln(‖q‖₁/‖p‖₁) were added.
"""

from __future__ import annotations

import numpy as np

from filterkit.hookspecs import hookimpl
from filterkit.metrics import Metric


def constantless_log_count_ratio(tp, fp, pos, neg):
    """ln((1 + tp) / (1 + fp)): the paper's r less ln(‖q‖₁ / ‖p‖₁)."""
    return np.log((1.0 + tp) / (1.0 + fp))


@hookimpl
def register_metrics(register):
    """nbr0, the constant-less NB log-count ratio."""
    register(Metric("nbr0", constantless_log_count_ratio, "NB log-count ratio without its norms (filterkit 0.3)."))
