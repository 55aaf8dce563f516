"""A plugin registering a metric named ``l2``: the scorers plugin would make a stage ``l2``
for it, clashing with the ``l2`` normalizer, so this plugin (not the two built-ins) is skipped."""

from filterkit.hookspecs import hookimpl
from filterkit.metrics import Metric


@hookimpl
def register_metrics(register):
    register(Metric("l2", lambda tp, fp, pos, neg: (tp / pos - fp / neg) ** 2, "Squared rate difference."))
