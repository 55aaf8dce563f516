"""A third-party metric: the true positive rate, tp / pos (no stage of its own)."""

from filterkit.hookspecs import hookimpl
from filterkit.metrics import Metric


@hookimpl
def register_metrics(register):
    register(Metric("tpr", lambda tp, fp, pos, neg: tp / pos, "True positive rate: tp / pos."))
