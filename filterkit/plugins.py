"""Finding plugins and the registries of stages, metrics, classifiers, stemmers and formats.

Plugins are the entry points of the group ``filterkit`` (the built-in ones first), then the ``*.py``
files of a ``--plugins-dir``.  One broken plugin never takes filterkit down, as in conda's plugin
manager: a plugin failing in any way (:func:`filterkit.contract.plugin_fault`) or registering a bad
or taken name is skipped whole, with one warning naming it, its distribution and how to disable it
(``FILTERKIT_DISABLE_PLUGINS=a,b``); ``FILTERKIT_STRICT_PLUGINS=1`` makes that an error.  When every
distribution declares what its plugins register (an entry point of the group ``filterkit.names``
naming a table: ``filterkit_plugins:NAMES``), each plugin is imported when a name it declares is
first looked up, so ``filterkit in.arff l2`` imports the normalizers and no other stage.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import importlib.util
import inspect
import os
import re
import shlex
import sys
import threading
from collections import UserDict
from collections.abc import Iterator, MutableMapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import pluggy

from filterkit import hookspecs, installed
from filterkit.arff.tokens import one_line
from filterkit.contract import DECLARED_BOOL, Declared, PluginCrash, crossing_cause, declaration_problem, plugin_fault
from filterkit.errors import FilterkitError
from filterkit.stage import Configurable, Option, Provenance, Stage

if TYPE_CHECKING:
    from importlib import metadata

    from filterkit.tasks import ChainSpec

GROUP = "filterkit"
#: The built-in plugins' distribution (models saved before the rename, issue 39, name it "filterkit").
BUILT_IN_DISTRIBUTION = "filterkit-arff"
#: How the distribution of a ``--plugins-dir`` file's plugin begins (then the folder).
PLUGINS_DIR = "plugins-dir "
#: The entry-point group naming a distribution's table of what its plugins register.
NAMES_GROUP = "filterkit.names"
NO_HOOKS_HINT = "no hook implementations: is @hookimpl missing?"
HOOKS = ("register_metrics", "register_classifiers", "register_stemmers", "register_formats", "register_stages")
#: What each of :data:`HOOKS` registers.
KINDS = tuple(hook.removeprefix("register_")[:-1] for hook in HOOKS)


@dataclass
class Registered:
    """One contributed thing and where it came from."""

    name: str
    value: Any  # a stage class, a metric or a classifier class, by the table it is in
    plugin: str
    distribution: str
    version: str = ""

    @property
    def provenance(self) -> Provenance:
        """The plugin, distribution and version, as a stage carries them."""
        return Provenance(self.plugin, self.distribution, self.version)


@dataclass(frozen=True)
class Stemmer:
    """A word stemmer for ``words --stemmer NAME``: ``function`` maps one word to its stem."""

    name: str
    function: Callable[[str], str]
    summary: str = ""


@dataclass(frozen=True)
class Format:
    """A file format, for ``--from NAME``/``--to NAME`` and the file names ending in one of its ``suffixes``
    (before any ``.gz``).

    ``reader`` is its :class:`filterkit.formats.ScannedFormat` class (``scan`` returns the ``Layout``, ``chunks``
    reads a pass; with ``streams``, a :class:`filterkit.formats.StreamedFormat`), ``writer`` its
    :class:`filterkit.formats.RowWriter` class or None for a format that is only read, each given as the class or as
    ``"module:Class"``, imported when first used; the writer is made with the arguments ``writer_arguments`` names
    (``stream``, ``schema``, ``sparse``, ``comments``, ``class_name``, ``options``, ``numbers``).  ``options`` are
    the options it reads with and ``written_options`` those it writes with (every command offers them; one given to
    a format that does not take it is a usage error naming both).  ``extra`` is what to install when its module
    needs a package filterkit does not require; ``reads_folder``: it reads a folder, not a file; ``ranges``: how
    ``--engine dask`` cuts one file into partitions (``"lines"``: at any line end, ``"csv"``: after the header row,
    outside quoted values; None: it does not); ``keeps_extension``: a file's relation name keeps its extension (as
    Weka's LibSVMLoader names it); ``streams``: its header comes before its rows (ARFF), so it is read with no scan,
    a stream as it comes (``streamed``) and a file afresh each pass, and its header is its own, which a model's is
    checked against; such a format declares no reading options (a stream is read with none), and ``ranges`` only
    with ARFF's reader (``--engine dask`` cuts a streamed file with it).  Every call into its reader and writer is
    guarded: one that raises (an OSError, a MemoryError or a KeyboardInterrupt aside) is one error naming the format
    and its plugin.
    """

    name: str
    reader: type | str
    writer: type | str | None = None
    aliases: tuple[str, ...] = ()
    suffixes: tuple[str, ...] = ()
    writer_arguments: tuple[str, ...] = ()
    options: tuple[Option, ...] = ()
    written_options: tuple[Option, ...] = ()
    extra: str | None = None
    reads_folder: bool = False
    ranges: str | None = None
    keeps_extension: bool = False
    streams: bool = False

    @property
    def names(self) -> tuple[str, ...]:
        """The names ``--from``/``--to`` take for it: its name, then its aliases."""
        return (self.name, *self.aliases)


#: What a registered format must declare, and as what.
_CLASS_REFERENCE = Declared(
    lambda value: value is None or isinstance(value, (type, str)), "a class, 'module:Class' or None"
)
FORMAT_DECLARATIONS = {
    "reader": Declared(lambda value: isinstance(value, (type, str)), "a class or 'module:Class'"),
    "writer": _CLASS_REFERENCE,
    # in lower case, as --from's names and file names are looked up
    "name": Declared(lambda value: isinstance(value, str) and value == value.lower(), "a name in lower case"),
    "aliases": Declared(
        lambda value: isinstance(value, tuple) and all(_is_word(a) and a == a.lower() for a in value),
        "a tuple of words in lower case",
    ),
    "suffixes": Declared(
        lambda value: (
            isinstance(value, tuple) and all(isinstance(s, str) and s.startswith(".") and s == s.lower() for s in value)
        ),
        "a tuple of suffixes in lower case starting with '.'",
    ),
    "options": Declared(lambda value: _options(value), "a tuple of filterkit.stage.Option"),
    "written_options": Declared(lambda value: _options(value), "a tuple of filterkit.stage.Option"),
    "ranges": Declared(lambda value: value in (None, "lines", "csv"), "None, 'lines' or 'csv'"),
    "streams": DECLARED_BOOL,
}


def _options(value) -> bool:
    return isinstance(value, tuple) and all(isinstance(option, Option) for option in value)


@dataclass(frozen=True)
class PluginProblem:
    """A plugin that was skipped (``reason``), or that loaded but registered nothing (``hint``)."""

    plugin: str
    distribution: str
    reason: str


@dataclass
class Registry:
    """Everything the loaded plugins contributed, by kind and name; the plugins ``skipped``, those
    ``without_hooks`` (of those loaded so far: :meth:`complete` loads the rest), those ``disabled``."""

    stages: MutableMapping[str, Registered] = field(default_factory=dict)
    metrics: MutableMapping[str, Registered] = field(default_factory=dict)
    classifiers: MutableMapping[str, Registered] = field(default_factory=dict)
    stemmers: MutableMapping[str, Registered] = field(default_factory=dict)
    formats: MutableMapping[str, Registered] = field(default_factory=dict)
    skipped: list[PluginProblem] = field(default_factory=list)
    without_hooks: list[PluginProblem] = field(default_factory=list)
    disabled: list[str] = field(default_factory=list)
    _pending: _Plugins | None = field(default=None, repr=False, compare=False)

    def complete(self) -> Registry:
        """This registry with every plugin loaded (the plugins not needed so far, too)."""
        if self._pending is not None:
            self._pending.load()
        return self

    def stage(self, name: str):
        """The stage class called ``name``; FilterkitError listing the known ones if none."""
        return _lookup(self.stages, name, "stage").value

    def parse_chain(self, chain: str | Sequence[str], preset: dict[str, dict] | None = None) -> ChainSpec:
        """A chain as typed (``"shape --no-zero-bin bns l2"``, or its words) as stage names and parameters,
        each option checked as the command line checks it (:mod:`filterkit.chain_words`); ``preset`` gives, per
        stage name, values for options the words leave out (an option in both is an error).  FilterkitError
        ``chain 'WORDS': why``; a :class:`~filterkit.chain_words.ChainHelpError` (a FilterkitError) where the
        words ask for a help (``shape --help``), which only the command line prints."""
        from filterkit.chain_words import parse_chain

        return parse_chain(self, shlex.split(chain) if isinstance(chain, str) else list(chain), preset)

    def make_stage(self, name: str, params: dict, saved: bool = False):
        """A new stage ``name`` with ``params``, carrying the provenance of its plugin; ``saved``: the
        params come from a model, so an option they lack takes its value from before it existed."""
        registered = _lookup(self.stages, name, "stage")
        if saved:
            params = {**{option.name: option.value_before_it_existed for option in registered.value.options}, **params}
        try:
            stage = registered.value(**params)
        except BaseException as error:
            if isinstance(error, FilterkitError) or not plugin_fault(error):
                raise
            fault = PluginCrash(
                f"stage '{name}' ({registered.provenance}) failed while being made: {type(error).__name__}: {error}"
            )
            cause = crossing_cause(error)
        else:
            stage.provenance = registered.provenance
            return stage
        raise fault from cause  # outside the handler, as contract.called raises

    def metric(self, name: str):
        """The metric called ``name``; FilterkitError listing the known ones if none."""
        return _lookup(self.metrics, name, "metric").value

    def classifier(self, name: str):
        """The classifier class called ``name``; FilterkitError if none."""
        return _lookup(self.classifiers, name, "classifier").value

    def stemmer(self, name: str) -> Stemmer:
        """The stemmer called ``name``; FilterkitError listing the known ones if none."""
        return _lookup(self.stemmers, name, "stemmer").value

    def format(self, name: str) -> Format | None:
        """The format ``name`` or an alias names (any case), or None."""
        name = name.lower()
        if name in self.formats:
            return self.formats[name].value
        return next((r.value for r in self.formats.values() if name in r.value.aliases), None)


#: The registry :func:`load_plugins` made last, where a stage looks up what plugins registered.
_latest: list[Registry] = []


def registered_stemmer(name: str) -> Stemmer:
    """The stemmer called ``name`` in the registry loaded last (else in the installed plugins)."""
    return (_latest[-1] if _latest else load_plugins()).stemmer(name)


def _lookup(table: MutableMapping[str, Registered], name: str, kind: str) -> Registered:
    if name not in table:
        known = ", ".join(sorted(table)) or "none"
        raise FilterkitError(f"no {kind} called '{name}' (installed: {known}); see 'filterkit plugins'")
    return table[name]


#: The registries of the command-line runs going on (:func:`running_registry`), the innermost last.
_running: list[Callable[[], Registry]] = []


@contextlib.contextmanager
def running_registry(registry: Callable[[], Registry]) -> Iterator[None]:
    """Within: :func:`registered_formats` reads ``registry()`` (a run's, loaded on first use)."""
    _running.append(registry)
    try:
        yield
    finally:
        _running.pop()


def registered_formats() -> Registry:
    """The registry formats are looked up in: the run's going on (:func:`running_registry`), else the one
    loaded last, as :func:`registered_stemmer` reads (the installed plugins', loaded once: a search of the
    entry points costs about 20 ms, which every file a library call opened paid)."""
    if _running:
        return _running[-1]()
    return _latest[-1] if _latest else load_plugins()


def strict_plugins() -> bool:
    """Whether FILTERKIT_STRICT_PLUGINS asks for plugin problems to be errors."""
    value = os.environ.get("FILTERKIT_STRICT_PLUGINS", "").strip().lower()
    if value not in ("", "0", "false", "no", "off", "1", "true", "yes", "on"):
        raise FilterkitError(
            f"FILTERKIT_STRICT_PLUGINS={os.environ['FILTERKIT_STRICT_PLUGINS']!r} "
            "is not one of 1, true, yes, on, 0, false, no, off"
        )
    return value in ("1", "true", "yes", "on")


def disabled_plugins() -> set[str]:
    """The plugin names listed in FILTERKIT_DISABLE_PLUGINS."""
    return {name.strip() for name in os.environ.get("FILTERKIT_DISABLE_PLUGINS", "").split(",") if name.strip()}


def load_plugins(plugins_dir: str | os.PathLike | None = None, remember: bool = False) -> Registry:
    """The :class:`Registry` of every plugin; FilterkitError only for a ``plugins_dir`` that is not
    a folder, a bad FILTERKIT_STRICT_PLUGINS or, in strict mode, the first plugin problem.  With
    ``remember`` (the console script), the installed entry points are those the last run found while
    the installed distributions are the same (:mod:`filterkit.installed`)."""
    registry = _loaded(plugins_dir, remember)
    _latest[:] = [registry]
    return registry


def _loaded(plugins_dir, remember: bool) -> Registry:
    """The registry of :func:`load_plugins`."""
    registry = Registry(disabled=sorted(disabled_plugins()))
    plugins = _Plugins(strict_plugins(), registry, plugins_dir, remember)
    lazy = not plugins.strict and all(candidate.declared for candidate in plugins.waiting)
    if lazy:
        registry._pending = plugins
    else:
        plugins.load()
    for kind, table in plugins.tables.items():
        setattr(registry, f"{kind}s", table if lazy else table.data)
    return registry


class PluginTable(UserDict[str, Registered]):
    """A table of a registry loading its plugins as names are looked up: a name loads the plugin
    declaring it; listing the table loads every plugin declaring a thing of its kind (a plugin that
    registers more than it declares loads every plugin)."""

    def __init__(self, kind: str, plugins: _Plugins):
        super().__init__()
        self.kind = kind
        self._plugins = plugins

    def __missing__(self, name: str) -> Registered:
        self._plugins.load(self.kind, name)
        return self.data[name]

    def __contains__(self, name: object) -> bool:
        if name not in self.data:
            self._plugins.load(self.kind, str(name))
        return name in self.data

    def __iter__(self) -> Iterator[str]:
        self._plugins.load(self.kind)
        return iter(self.data)

    def __len__(self) -> int:
        self._plugins.load(self.kind)
        return len(self.data)


@dataclass(frozen=True)
class _Candidate:
    """A plugin to load: its registered name, the name that disables it, where it comes from."""

    name: str
    switch: str
    distribution: str
    version: str
    load: Callable[[], object]
    #: What the plugin declares it registers, as (kind, name) pairs: ("stage", "l2").
    declared: frozenset[tuple[str, str]] = frozenset()

    def __str__(self) -> str:
        return f"distribution {self.distribution}{f' {self.version}' if self.version else ''}"


class _Plugins:
    """The plugins of one :func:`load_plugins`, waiting or loaded (in load order) into a pluggy
    manager, and the tables their hooks fill; loaded on demand, one thread at a time."""

    def __init__(self, strict: bool, registry: Registry, plugins_dir, remember: bool = False):
        self.strict = strict
        self.remember = remember
        self.registry = registry
        self.manager = pluggy.PluginManager(GROUP)
        self.manager.add_hookspecs(hookspecs)
        #: Every plugin found, disabled ones too: a switch two of them share would leave out both.
        self.found = _candidates(plugins_dir, self)
        self.waiting = [c for c in self.found if c.switch not in registry.disabled]
        self.order = {candidate.name: position for position, candidate in enumerate(self.waiting)}
        self.loaded: dict[str, tuple[_Candidate, object]] = {}
        self.tables = {kind: PluginTable(kind, self) for kind in KINDS}
        self.lock = threading.RLock()

    def skip(
        self, candidate: _Candidate, reason: str, error: BaseException | None = None, switch_shared: bool = False
    ) -> None:
        """Leave ``candidate`` out with one warning (an error in strict mode), saying how to silence it: its switch,
        unless another plugin's is the same (``switch_shared``), which the switch would leave out too."""
        switch_shared = switch_shared or any(
            other.switch == candidate.switch and other is not candidate for other in getattr(self, "found", ())
        )
        local = candidate.distribution.startswith(PLUGINS_DIR)
        fix = "remove or rename its file" if local else f"pip uninstall {candidate.distribution}"
        silence = (
            f"silence it: {fix} (FILTERKIT_DISABLE_PLUGINS={candidate.switch} would skip the plugin of that name too)"
            if switch_shared
            else f"disable it with FILTERKIT_DISABLE_PLUGINS={candidate.switch}"
        )
        message = f"plugin '{candidate.name}' ({candidate}) is skipped: {reason}; {silence}"
        if self.strict:
            raise FilterkitError(f"{message} (FILTERKIT_STRICT_PLUGINS is set)") from error
        self.registry.skipped.append(PluginProblem(candidate.name, candidate.distribution, reason))
        warn(message)

    def load(self, kind: str | None = None, name: str | None = None) -> None:
        """Load the waiting plugins that declare the ``kind`` called ``name`` (any of ``kind`` without
        ``name``; all without ``kind``), and fill the tables again from every plugin loaded.  What a plugin prints
        meanwhile (at its import, or registering) goes to standard error: the command's output is on standard output."""
        with self.lock:
            wanted = [
                c for c in self.waiting if kind is None or any(k == kind and name in (None, n) for k, n in c.declared)
            ]
            if wanted:  # sys.stdout swapped only while a plugin loads (a lookup of a name is any thread's)
                with contextlib.redirect_stdout(sys.stderr):
                    self._load(wanted)

    def _load(self, wanted: list[_Candidate]) -> None:
        """:meth:`load` of the ``wanted`` plugins, which wait to load."""
        for candidate in wanted:
            self._add(candidate)
        # a plugin that makes a stage per metric (the scorers) needs every metric first
        if any("metrics" in i.argnames for i in self.manager.hook.register_stages.get_hookimpls()):
            for candidate in [c for c in self.waiting if any(k == "metric" for k, _ in c.declared)]:
                self._add(candidate)
        self._fill()

    def _fill(self) -> None:
        """Fill the tables from the loaded plugins, skipping each with a problem; load every plugin
        when one registers other names than it declares (it may hide any name)."""
        while problems := self._collect():
            for plugin in sorted(problems, key=self.order.__getitem__):
                candidate, module = self.loaded.pop(plugin)
                self.manager.unregister(module)
                self.skip(candidate, *problems[plugin])
        declared = {(c.name, *pair) for c, _ in self.loaded.values() for pair in c.declared}
        registered = {(e.plugin, t.kind, e.name) for t in self.tables.values() for e in t.data.values()}
        if self.waiting and registered != declared:
            self.load()

    def _add(self, candidate: _Candidate) -> None:
        """Import the waiting ``candidate`` and register its hook implementations, or skip it."""
        self.waiting.remove(candidate)
        try:
            module = candidate.load()
        except BaseException as error:
            if not plugin_fault(error):
                raise
            return self.skip(candidate, f"it failed to import ({type(error).__name__}: {error})", error)
        try:
            self.manager.register(module, name=candidate.name)
        except pluggy.PluginValidationError as error:
            return self.skip(candidate, _signature_problem(module) or " ".join(str(error).split()), error)
        except ValueError as error:
            return self.skip(candidate, f"pluggy refused it ({error})", error)
        callers = self.manager.get_hookcallers(module) or []
        unknown = sorted(f"'{caller.name}'" for caller in callers if not caller.has_spec())
        if unknown:
            self.manager.unregister(module)
            return self.skip(
                candidate,
                f"it implements {', '.join(unknown)}, not a filterkit hook (the hooks are {', '.join(HOOKS)})",
            )
        if not callers:
            unmarked = ", ".join(name for name in HOOKS if callable(getattr(module, name, None)))
            hint = NO_HOOKS_HINT + (f" ({unmarked} is not marked)" if unmarked else "")
            self.registry.without_hooks.append(PluginProblem(candidate.name, candidate.distribution, hint))
            return warn(f"plugin '{candidate.name}' ({candidate}) registers nothing: {hint}")
        self.loaded[candidate.name] = (candidate, module)

    def _collect(self) -> dict[str, tuple[str, BaseException | None]]:
        """Fill the tables from the loaded plugins' hooks, in load order; the problems found, by plugin."""
        tables: dict[str, dict[str, Registered]] = {kind: {} for kind in KINDS}
        problems: dict[str, tuple[str, BaseException | None]] = {}
        for hook_name, kind in zip(HOOKS, KINDS):
            implementations = getattr(self.manager.hook, hook_name).get_hookimpls()
            for implementation in sorted(implementations, key=lambda i: self.order[i.plugin_name]):
                plugin, candidate = implementation.plugin_name, self.loaded[implementation.plugin_name][0]
                if plugin in problems:
                    continue
                contributed: list = []
                metrics = {n: r.value for n, r in tables["metric"].items()}
                arguments = {"register": contributed.append, "metrics": metrics}
                try:
                    implementation.function(**{name: arguments[name] for name in implementation.argnames})
                except BaseException as error:
                    if not plugin_fault(error):
                        raise
                    problems[plugin] = (f"{type(error).__name__} in {hook_name}: {error}", error)
                    continue
                for thing in contributed:
                    try:
                        culprit, reason = plugin, _check(thing, kind)
                    except BaseException as error:  # the plugin's code: a summary, an option's kind
                        if not plugin_fault(error):
                            raise
                        culprit, reason = plugin, f"checking what it registered raised {type(error).__name__}: {error}"
                    if reason is None:
                        taken = _looked_up_as(tables[kind], thing, kind)
                        culprit, reason = self._clash(tables, kind, taken, plugin, thing.name)
                    if reason is not None:
                        problems.setdefault(culprit, (f"{reason} (in {hook_name})", None))
                        break
                    entry = Registered(thing.name, thing, plugin, candidate.distribution, candidate.version)
                    if kind == "metric":
                        entry.value = dataclasses.replace(thing, provenance=entry.provenance)
                    tables[kind][thing.name] = entry
        for kind, entries in tables.items():
            self.tables[kind].data = entries
        return problems

    def _clash(self, tables: dict, kind: str, name: str, plugin: str, own: str) -> tuple[str | None, str | None]:
        """(the plugin to skip, why) when ``name`` is taken by what ``plugin`` registers as ``own`` (a format's
        name, where one of its names is another format's), else (None, None): the plugin loaded last among the two
        registering it and, for a stage, the one whose metric it is named after."""
        if name not in tables[kind]:
            return None, None
        first = tables[kind][name].plugin
        if first == plugin:
            return plugin, f"it registers the {kind} '{name}' twice"
        metric_owner = tables["metric"][name].plugin if kind == "stage" and name in tables["metric"] else None
        culprit = max({first, plugin, metric_owner} - {None}, key=lambda p: self.order[p])
        if culprit not in (first, plugin):
            return culprit, f"its metric '{name}' clashes with the stage '{name}' of plugins '{first}' and '{plugin}'"
        other, (its, others) = (first, (own, name)) if culprit == plugin else (plugin, (name, own))
        shared = "" if own == name else " (one name or alias is both's)"
        return culprit, f"its {kind} '{its}' clashes with the {kind} '{others}' of plugin '{other}'{shared}"


def _looked_up_as(table: dict[str, Registered], thing, kind: str) -> str:
    """The name ``thing`` takes in ``table``: its name; for a format, that of the registered format one of
    whose names it also has."""
    if kind == "format":
        return next((name for name, r in table.items() if set(r.value.names) & set(thing.names)), thing.name)
    return thing.name


def _signature_problem(module) -> str | None:
    """Which hook implementation of ``module`` takes arguments its hookspec does not offer."""
    for hook_name in HOOKS:
        function: Any = getattr(module, hook_name, None)
        if hasattr(function, f"{GROUP}_impl"):
            offered = list(inspect.signature(getattr(hookspecs, hook_name)).parameters)
            extra = [name for name in inspect.signature(function).parameters if name not in offered]
            if extra:
                passed = f"which the hook does not pass (it passes {', '.join(offered)})"
                return f"its {hook_name} takes {', '.join(extra)}, {passed}"
    return None


#: The warnings given already while :func:`each_warning_once` is in force (None: every one is given).
_given: set[str] | None = None


@contextlib.contextmanager
def each_warning_once() -> Iterator[None]:
    """Within: a plugin warning given already is not given again.  A command loads the plugins for its command
    tree, again for its run, and in each ``--jobs`` worker (forked within, so knowing what was given): a broken
    plugin had been warned of two to four times."""
    global _given
    outer, _given = _given, set() if _given is None else _given
    try:
        yield
    finally:
        _given = outer


def warn(message: str) -> None:
    """``filterkit: warning: MESSAGE`` on stderr, its control characters escaped (a plugin's error may quote
    anything); once only within :func:`each_warning_once`."""
    line = f"filterkit: warning: {one_line(message)}"
    if _given is not None:
        if line in _given:
            return
        _given.add(line)
    print(line, file=sys.stderr)


def _candidates(plugins_dir, plugins: _Plugins) -> list[_Candidate]:
    """The plugins to load, in load order, with what their distributions declare they register
    (``{"normalizers": {"stage": ("l2", …)}}``: a table that cannot be read declares nothing); a
    second entry point of a taken name is skipped."""
    points = _installed_entry_points(plugins.remember)
    declared: dict[tuple[str, str], frozenset[tuple[str, str]]] = {}
    for point in (point for point in points if point.group == NAMES_GROUP):
        try:
            for plugin, kinds in point.load().items():
                declared[(point.distribution, plugin)] = frozenset(
                    (k, name) for k, names in kinds.items() for name in names
                )
        except BaseException as error:
            if not plugin_fault(error):
                raise
            reason = f"{type(error).__name__}: {error}"
            warn(f"the names {point.value} of distribution {point.distribution} are left out ({reason})")
    found = sorted(
        (point for point in points if point.group == GROUP),
        key=lambda p: (p.distribution != BUILT_IN_DISTRIBUTION, p.name, p.distribution, p.value),
    )
    candidates: dict[str, _Candidate] = {}
    values: dict[str, str] = {}
    twins: dict[str, str] = {}  # a distribution registering the very plugins of an earlier one: the first's name
    for point in found:
        distribution = point.distribution
        names = declared.get((distribution, point.name), frozenset())
        candidate = _Candidate(point.name, point.name, distribution, point.version, point.load, names)
        if point.name not in candidates:
            candidates[point.name], values[point.name] = candidate, point.value
        elif values[point.name] != point.value:
            reason = f"{candidates[point.name]} already has an entry point named '{point.name}'"
            plugins.skip(candidate, reason, switch_shared=True)
        elif distribution != candidates[point.name].distribution:
            twins.setdefault(distribution, candidates[point.name].distribution)
    for twin, first in twins.items():  # e.g. filterkit-arff installed over a checkout's old 'filterkit'
        warn(
            f"distribution {twin} registers the same plugins as {first}: the same package installed twice "
            f"(once under an old name?); its copy is not used: pip uninstall {twin}"
        )
    if plugins_dir is not None:
        if not Path(plugins_dir).is_dir():
            raise FilterkitError(f"plugins folder {str(plugins_dir)!r} is not a folder")
        for path in sorted(Path(plugins_dir).glob("*.py")):
            name = f"{path.stem} ({path})"
            candidates[name] = _Candidate(
                name, path.stem, f"{PLUGINS_DIR}{plugins_dir}", "", functools.partial(_import_file, path)
            )
    return list(candidates.values())


def entry_points(*groups: str) -> list[metadata.EntryPoint]:
    """The installed entry points of ``groups``, as ``importlib.metadata.entry_points`` finds them,
    but a distribution whose ``entry_points.txt`` cannot be read is left out with a warning."""
    found, warnings = installed.read_entry_points(groups)
    for warning in warnings:
        warn(warning)
    return found


def _installed_entry_points(remember: bool) -> list[installed.EntryPoint]:
    """The entry points of :data:`GROUP` and :data:`NAMES_GROUP` (:func:`filterkit.installed.entry_points_of`),
    warning of what their discovery found."""
    points, warnings = installed.entry_points_of((GROUP, NAMES_GROUP), remember)
    for warning in warnings:
        warn(warning)
    return points


def _import_file(path: Path):
    """Import a plugin file as a module registered in ``sys.modules`` (dataclasses need it)."""
    module_name = f"filterkit_local_plugin_{path.stem}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None and spec.loader is not None  # a .py file's spec has a loader
    module = sys.modules[module_name] = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    return module


_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*\Z")


def _is_word(value) -> bool:
    return isinstance(value, str) and bool(_WORD.match(value))


def check_stage_class(thing) -> str | None:
    """Why ``thing`` cannot be registered as a stage (not a Stage, no name or summary, bad options), or None."""
    return _check_configurable(thing, Stage, "stage")


def _check_configurable(thing, base: type[Configurable], kind: str) -> str | None:
    """Why ``thing`` cannot be registered as a ``base`` subclass, or None."""
    if not isinstance(thing, type):
        return f"it registered {_described(thing)} where a {kind} class (a subclass of {base.__qualname__}) is expected"
    if not issubclass(thing, base):
        base_name = f"{base.__module__}.{base.__qualname__}"
        return f"it registered the class {thing.__qualname__}, which is not a subclass of {base_name}"
    problem = _check_name(thing, kind)
    if problem is None and not thing.one_line_summary():
        problem = f"{kind} '{thing.name}' has neither a summary nor a docstring"
    return problem or _check_options(thing, kind)


def _check_name(thing, kind: str) -> str | None:
    name = getattr(thing, "name", None)
    if not isinstance(name, str) or not _WORD.match(name):
        word = f"a {kind} needs a word of letters, digits, _ . + -"
        return f"it registered {_described(thing)} with the name {name!r} ({word})"
    return None


def _check_options(thing, kind: str) -> str | None:
    """Why ``thing``'s options cannot be registered, or None: each an Option of an identifier and a kind the command
    line reads, its default one it takes, and its flags (a bool's ``--no-NAME`` or ``off_flag`` too) its own, not
    another option's nor ``--help``: the command line would give one of the two silently."""
    options = thing.options
    if not isinstance(options, tuple) or not all(isinstance(o, Option) for o in options):
        return f"{kind} '{thing.name}': options must be a tuple of filterkit.stage.Option"
    names = [option.name for option in options]
    flags = [flag for option in options for flag in _flags(option)]
    for option in options:
        if not option.name.isidentifier():
            return f"{kind} '{thing.name}': option name {option.name!r} is not a Python identifier"
        if names.count(option.name) > 1:
            return f"{kind} '{thing.name}' declares option '{option.name}' twice"
        if option.kind not in (int, float, str, bool):
            return f"{kind} '{thing.name}': option '{option.name}' is of {option.kind!r}, not int, float, str or bool"
        taken = next((flag for flag in _flags(option) if flags.count(flag) > 1 or flag in ("--help", "-h")), None)
        if taken is not None:
            whose = "the help's" if taken in ("--help", "-h") else "another option's too"
            return f"{kind} '{thing.name}': the flag {taken} of option '{option.name}' is {whose}"
        try:
            option.convert(option.default)
        except FilterkitError as error:
            return f"{kind} '{thing.name}': the default of {error}"
    return None


def _flags(option: Option) -> list[str]:
    """The command-line flags of ``option``: its own, and a bool's flag for False."""
    return [option.flag, option.off_flag or "--no-" + option.flag[2:]] if option.kind is bool else [option.flag]


def _check(thing, kind: str) -> str | None:
    """Why ``thing`` cannot be registered as a ``kind``, or None."""
    if kind == "stage":
        return check_stage_class(thing)
    if kind == "classifier":
        from filterkit.classifier import CLASSIFIER_DECLARATIONS, Classifier  # imported by the first classifier plugin

        problem = _check_configurable(thing, Classifier, kind) or _declared(thing, kind, CLASSIFIER_DECLARATIONS)
        if problem is None and thing.options and (not thing.name.isidentifier() or "__" in thing.name):
            problem = (  # --NAME-OPTION, stored NAME__OPTION
                f"classifier '{thing.name}' has options, so its name, which begins theirs, must be an identifier "
                "without __"
            )
        return problem
    expected: Any = Stemmer
    declarations: dict[str, Declared] = {"function": Declared(callable, "a function")}
    if kind == "format":
        expected, declarations = Format, FORMAT_DECLARATIONS
    elif kind == "metric":
        from filterkit.metrics import METRIC_DECLARATIONS, Metric  # imported by the first metric plugin loaded

        expected, declarations = Metric, METRIC_DECLARATIONS
    if not isinstance(thing, expected):
        return f"it registered {_described(thing)} where a {expected.__module__}.{expected.__qualname__} is expected"
    problem = _check_name(thing, kind) or _declared(thing, kind, declarations)
    return problem or (_check_streams(thing) or _check_format_options(thing) if kind == "format" else None)


#: The reader of the one format that streams today: ARFF's, whose byte ranges ``--engine dask`` reads.
STREAMING_READER = "filterkit.formats.arff:ArffFormat"


#: The names and long flags (``-`` as ``_``) of the commands' own options and the built-in classifiers', which a
#: format's options may not take: a format's options are every command's, so the command line would read one as
#: the other (a format's option ``output`` took ``-o``'s value).  tests/test_plugin_misuse.py checks it.
COMMAND_OPTION_NAMES = frozenset(
    """aisvm_alpha_n aisvm_k_max aisvm_reading aisvm_rho_max as_json c c_path chain_per_label chunk_rows class
    class_spec classifier combine compare dense digits each_class engine float32 folds from help input_format jobs
    json label_issues label_issues_path labels labels_file metric metric_name min_positives model_path multiclass
    numeric_only onnx onnx_path output output_dir output_format partitions per_task plot plugins_dir positive
    predictions predictions_path presence progress quiet repeats report report_path save_model scheduler search seed
    sparse stats svm_c_by svm_c_search svm_c_values svm_class_weight svm_costs svm_decision svm_fbr_floor
    svm_inner_folds svm_intercept svm_loss svm_threshold sweep test test_path threshold to top train_fraction
    updatable verbose version workers""".split()
)


def _check_format_options(form: Format) -> str | None:
    """Why a format's options cannot be added to the commands (one is a command's own), or None."""
    for option in (*form.options, *form.written_options):
        taken = [flag for flag in _flags(option) if flag[2:].replace("-", "_") in COMMAND_OPTION_NAMES]
        if option.name in COMMAND_OPTION_NAMES or taken:
            spelled = taken[0] if taken else option.flag
            return f"format '{form.name}': its option '{option.name}' ({spelled}) is a command's own option"
    return None


def _check_streams(form: Format) -> str | None:
    """Why a format that declares ``streams`` cannot be read as it says, or None: a streamed input is read
    with no options, and ``--engine dask`` cuts a streamed file with ARFF's reader alone."""
    if not form.streams:
        return None
    if form.options:
        return f"format '{form.name}' streams, so it is read with no options: it cannot declare reading options"
    if form.ranges is not None and form.reader != STREAMING_READER:
        return f"format '{form.name}' streams, and --engine dask cuts only ARFF's streamed files: declare ranges=None"
    return None


def _declared(thing, kind: str, declarations: dict[str, Declared]) -> str | None:
    """Why the registered ``thing`` does not declare its attributes as ``declarations`` says, or None."""
    problem = declaration_problem(thing, declarations)
    return None if problem is None else f"{kind} '{thing.name}': {problem}"


def _described(thing) -> str:
    return (
        f"the class {thing.__qualname__}" if isinstance(thing, type) else f"an instance of {type(thing).__qualname__}"
    )
