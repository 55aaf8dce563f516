"""filterkit: Weka-style ARFF filter chains for text classification."""

from filterkit.version import __version__

__all__ = ["__version__", "load_model", "train"]


def load_model(path, registry=None):
    """The model ``filterkit train`` saved at ``path``, with ``predict``, ``decision_function``,
    ``predict_proba``, ``transform`` and ``explain`` on a list of documents or rows
    (:class:`filterkit.trained.TrainedModel`)."""
    from filterkit.trained import load_model as load

    return load(path, registry)


def train(path, chains=None, *, jobs=1, search="auto", engine="local", scheduler=None, workers=None, **settings):
    """Fit a chain and a classifier on the file at ``path`` as ``filterkit train`` does
    (:func:`filterkit.training.train`): ``chains`` are the candidates as typed (``"shape bns l2"``; None:
    the default ones), ``settings`` :class:`filterkit.evaluation.Settings`' fields (``positive="grain"``,
    ``multiclass=True``); the candidates scored in ``jobs`` processes (None: one per core; off Linux, from 5,000
    rows), or on Dask (``engine="dask"``: at ``scheduler``, else a local cluster of ``workers``), by the ``search``
    ``auto`` (flat for several candidates with ``multiclass=True`` on more than two classes, else nested),
    ``nested`` or ``flat``, the same model whichever number of processes; ``.save(PATH)`` writes the model."""
    from filterkit.evaluation import Settings
    from filterkit.plugins import load_plugins
    from filterkit.training import train as fit

    if engine not in ("local", "dask"):
        raise ValueError(f"engine must be 'local' or 'dask', not {engine!r}")
    if engine == "local" and (scheduler is not None or workers is not None):
        raise ValueError("scheduler and workers need engine='dask'")
    if scheduler is not None and workers is not None:
        raise ValueError("give scheduler or workers, not both: a scheduler's cluster has its own workers")
    if any(count is not None and count < 1 for count in (jobs, workers)):
        raise ValueError("jobs and workers count processes: 1 or more")
    registry = load_plugins()
    specs = None if chains is None else [registry.parse_chain(text) for text in chains]
    placed = {"jobs": jobs, "search": search, "engine": engine, "scheduler": scheduler, "workers": workers}
    return fit(path, specs, Settings(**settings), registry, **placed)
