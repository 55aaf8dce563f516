"""The hooks a filterkit plugin implements, in the register-callback style.

filterkit calls each hook with a ``register`` function; the plugin calls it
once for every thing it contributes, so names and duplicates are checked when
they are registered.  Built-in stages use exactly these hooks.
"""

import pluggy

hookspec = pluggy.HookspecMarker("filterkit")
#: Marks a function of a plugin module as the implementation of the hook of its name
#: (``@hookimpl`` above ``def register_stages(register):``); a function named as no hook is refused.
hookimpl = pluggy.HookimplMarker("filterkit")


@hookspec
def register_stages(register, metrics):
    """Contribute chain stages: call ``register(StageClass)`` for each.

    ``StageClass`` subclasses :class:`filterkit.stage.Stage`; its ``name`` is the
    word used in a chain (``filterkit in.arff NAME …``).  ``metrics`` maps the
    name of every registered metric to its :class:`filterkit.metrics.Metric`
    (metrics are collected first), so a plugin can make a stage per metric;
    an implementation that does not need it leaves the argument out.
    """


@hookspec
def register_metrics(register):
    """Contribute feature-scoring metrics: call ``register(metric)`` for each.

    ``metric`` is a :class:`filterkit.metrics.Metric`: a name and a function of the
    2×2 counts ``(tp, fp, pos, neg)``, vectorized over features (JMLR 2003 §2).
    """


@hookspec
def register_classifiers(register):
    """Contribute classifiers for ``filterkit evaluate``: call ``register(ClassifierClass)``.

    ``ClassifierClass`` subclasses :class:`filterkit.classifier.Classifier`: a binary learner, and
    also a k-class one for ``evaluate --multiclass`` when it sets ``multiclass = True``.
    """


@hookspec
def register_stemmers(register):
    """Contribute word stemmers for the ``words`` stage: call ``register(stemmer)`` for each.

    ``stemmer`` is a :class:`filterkit.plugins.Stemmer`: a name (``words --stemmer NAME``)
    and a function mapping one word to its stem, applied after ``--lowercase``.
    """


@hookspec
def register_formats(register):
    """Contribute file formats for ``--from``/``--to`` and file names: call ``register(format)`` for each.

    ``format`` is a :class:`filterkit.plugins.Format`: a name (``--from NAME``), aliases, the file suffixes
    it is chosen by, its reader and writer classes and the options it reads and writes with.
    """
