"""Finding plugins and the registries of stages, metrics, classifiers and stemmers.

Plugins come from the entry-point group ``filterkit`` (the built-in stages
too) and from ``*.py`` files of a ``--plugins-dir``.  Loading never takes
filterkit down, as in conda's plugin manager: each plugin is imported,
checked and registered on its own, and anything wrong with one — an import
that fails or exits (:func:`filterkit.contract.plugin_fault`), a hook signature
or hook name the hookspecs do not define, a hook that raises, a stage without
a name or a summary, an instance where a class is expected, a name another
plugin already registered — skips that plugin as a whole with one warning
naming it, its distribution and how to disable it.
``FILTERKIT_STRICT_PLUGINS=1`` makes each of these an error instead, and
``FILTERKIT_DISABLE_PLUGINS=a,b`` skips plugins by name.

Built-in plugins are loaded first, then other distributions' entry points,
then ``--plugins-dir`` files, each group in name order; when two plugins
register one name, the one loaded later is skipped.

When every installed plugin declares what it registers, each is imported when
a name it registers is first looked up, so ``filterkit in.arff l2`` imports the
normalizers and no other stage.  A distribution declares them in a table that an
entry point of the group ``filterkit.names`` names (the built-in one:
``filterkit_plugins:NAMES``); listing a table, or a plugin registering other
names than it declares, loads them all.  ``--plugins-dir`` and
FILTERKIT_STRICT_PLUGINS load every plugin at once.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import inspect
import os
import re
import sys
import threading
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Callable

import pluggy

from filterkit import hookspecs
from filterkit.contract import plugin_fault
from filterkit.errors import FilterkitError
from filterkit.stage import Configurable, Option, Provenance, Stage

GROUP = "filterkit"
BUILT_IN_DISTRIBUTION = "filterkit-arff"
#: The entry-point group naming a distribution's table of what its plugins register.
NAMES_GROUP = "filterkit.names"
HOOKS = ("register_metrics", "register_classifiers", "register_stemmers", "register_stages")
NO_HOOKS_HINT = "no hook implementations: is @hookimpl missing?"


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
    """A word stemmer for the ``words`` stage (``--stemmer NAME``): a ``name``, a one-line
    ``summary`` and ``function``, which maps one word to its stem."""

    name: str
    function: Callable[[str], str]
    summary: str = ""


@dataclass(frozen=True)
class PluginProblem:
    """A plugin that was skipped (``reason``), or that loaded but registered nothing (``hint``)."""

    plugin: str
    distribution: str
    reason: str


@dataclass
class Registry:
    """Everything the loaded plugins contributed, by kind and name.

    ``skipped`` lists the plugins left out and why; ``without_hooks`` those that
    loaded but implement no hook; ``disabled`` the names FILTERKIT_DISABLE_PLUGINS skipped.
    In a registry that loads its plugins as their names are looked up, the first two
    tell of the plugins loaded so far: :meth:`complete` loads the rest.
    """

    stages: MutableMapping[str, Registered] = field(default_factory=dict)
    metrics: MutableMapping[str, Registered] = field(default_factory=dict)
    classifiers: MutableMapping[str, Registered] = field(default_factory=dict)
    stemmers: MutableMapping[str, Registered] = field(default_factory=dict)
    skipped: list[PluginProblem] = field(default_factory=list)
    without_hooks: list[PluginProblem] = field(default_factory=list)
    disabled: list[str] = field(default_factory=list)
    _pending: _PendingPlugins | None = field(default=None, repr=False, compare=False)

    def complete(self) -> Registry:
        """This registry with every plugin loaded (the plugins not needed so far, too)."""
        if self._pending is not None:
            self._pending.load_all()
        return self

    def stage(self, name: str):
        """The stage class called ``name``; FilterkitError listing the known ones if none."""
        return _lookup(self.stages, name, "stage").value

    def make_stage(self, name: str, params: dict, saved: bool = False):
        """A new stage ``name`` with ``params``, carrying the provenance of its plugin.

        ``saved``: the params come from a saved model, so an option they lack was added
        after it was saved and takes the value of the behaviour from before it existed.
        """
        registered = _lookup(self.stages, name, "stage")
        if saved:
            earlier = {option.name: option.value_before_it_existed for option in registered.value.options}
            params = {**earlier, **params}
        try:
            stage = registered.value(**params)
        except FilterkitError:
            raise
        except BaseException as error:
            if not plugin_fault(error):
                raise
            raise FilterkitError(
                f"stage '{name}' ({registered.provenance}) failed while being made: {type(error).__name__}: {error}"
            ) from error
        stage.provenance = registered.provenance
        return stage

    def metric(self, name: str):
        """The metric called ``name``; FilterkitError listing the known ones if none."""
        return _lookup(self.metrics, name, "metric").value

    def classifier(self, name: str):
        """The classifier class called ``name``; FilterkitError if none."""
        return _lookup(self.classifiers, name, "classifier").value

    def stemmer(self, name: str) -> Stemmer:
        """The stemmer called ``name``; FilterkitError listing the known ones if none."""
        return _lookup(self.stemmers, name, "stemmer").value


#: The registry :func:`load_plugins` made last, where a stage looks up what plugins registered.
_latest: list[Registry] = []


def registered_stemmer(name: str) -> Stemmer:
    """The stemmer called ``name`` in the registry loaded last (the installed plugins when none
    was loaded yet); FilterkitError listing the known ones if none."""
    registry = _latest[-1] if _latest else load_plugins()
    return registry.stemmer(name)


def _lookup(table: MutableMapping[str, Registered], name: str, kind: str) -> Registered:
    if name not in table:
        known = ", ".join(sorted(table)) or "none"
        raise FilterkitError(f"no {kind} called '{name}' (installed: {known}); see 'filterkit plugins'")
    return table[name]


def strict_plugins() -> bool:
    """Whether FILTERKIT_STRICT_PLUGINS asks for plugin problems to be errors."""
    value = os.environ.get("FILTERKIT_STRICT_PLUGINS", "").strip().lower()
    if value in ("", "0", "false", "no", "off"):
        return False
    if value in ("1", "true", "yes", "on"):
        return True
    raise FilterkitError(
        f"FILTERKIT_STRICT_PLUGINS={os.environ['FILTERKIT_STRICT_PLUGINS']!r} "
        "is not one of 1, true, yes, on, 0, false, no, off"
    )


def disabled_plugins() -> set[str]:
    """The plugin names listed in FILTERKIT_DISABLE_PLUGINS."""
    return {name.strip() for name in os.environ.get("FILTERKIT_DISABLE_PLUGINS", "").split(",") if name.strip()}


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


class _Loader:
    """One run of :func:`load_plugins`: the pluggy manager, the plugins in load order, their problems."""

    def __init__(self, strict: bool):
        self.strict = strict
        self.manager = pluggy.PluginManager(GROUP)
        self.manager.add_hookspecs(hookspecs)
        self.loaded: list[tuple[_Candidate, object]] = []
        self.skipped: list[PluginProblem] = []
        self.without_hooks: list[PluginProblem] = []

    def skip(self, candidate: _Candidate, reason: str, error: BaseException | None = None) -> None:
        """Leave ``candidate`` out with one warning (an error in strict mode)."""
        message = (
            f"plugin '{candidate.name}' ({_distribution_text(candidate)}) is skipped: {reason}; "
            f"disable it with FILTERKIT_DISABLE_PLUGINS={candidate.switch}"
        )
        if self.strict:
            raise FilterkitError(f"{message} (FILTERKIT_STRICT_PLUGINS is set)") from error
        self.skipped.append(PluginProblem(candidate.name, candidate.distribution, reason))
        _warn(message)

    def add(self, candidate: _Candidate) -> None:
        """Import ``candidate`` and register its hook implementations, or skip it."""
        try:
            module = candidate.load()
        except BaseException as error:
            if not plugin_fault(error):
                raise
            self.skip(candidate, f"it failed to import ({type(error).__name__}: {error})", error)
            return
        try:
            self.manager.register(module, name=candidate.name)
        except pluggy.PluginValidationError as error:
            self.skip(candidate, _signature_problem(module) or " ".join(str(error).split()), error)
            return
        except ValueError as error:
            self.skip(candidate, f"pluggy refused it ({error})", error)
            return
        unknown = sorted(caller.name for caller in self.manager.get_hookcallers(module) or [] if not caller.has_spec())
        if unknown:
            self.manager.unregister(module)
            hooks = ", ".join(f"'{name}'" for name in unknown)
            self.skip(candidate, f"it implements {hooks}, not a filterkit hook (the hooks are {', '.join(HOOKS)})")
            return
        if not self.manager.get_hookcallers(module):
            unmarked = [name for name in HOOKS if callable(getattr(module, name, None))]
            hint = NO_HOOKS_HINT + (f" ({', '.join(unmarked)} is not marked)" if unmarked else "")
            self.without_hooks.append(PluginProblem(candidate.name, candidate.distribution, hint))
            _warn(f"plugin '{candidate.name}' ({_distribution_text(candidate)}) registers nothing: {hint}")
            return
        self.loaded.append((candidate, module))

    def wants_metrics(self) -> bool:
        """Whether a loaded plugin makes stages from the registered metrics (its
        ``register_stages`` takes ``metrics``)."""
        return any("metrics" in i.argnames for i in self.manager.hook.register_stages.get_hookimpls())

    def registry(self) -> Registry:
        """Call every loaded plugin's hooks; a plugin with any problem is dropped and the rest
        called again (a dropped metric plugin takes its scorer stages with it)."""
        while True:
            registry, problems = self._collect()
            if not problems:
                return registry
            for candidate, module in list(self.loaded):
                if candidate.name in problems:
                    reason, error = problems[candidate.name]
                    self.manager.unregister(module)
                    self.loaded.remove((candidate, module))
                    self.skip(candidate, reason, error)

    def _collect(self) -> tuple[Registry, dict[str, tuple[str, BaseException | None]]]:
        registry = Registry()
        problems: dict[str, tuple[str, BaseException | None]] = {}
        candidates = {candidate.name: candidate for candidate, _ in self.loaded}
        order = {name: position for position, name in enumerate(candidates)}
        for hook_name in HOOKS:
            table = getattr(registry, hook_name.removeprefix("register_"))
            implementations = sorted(
                getattr(self.manager.hook, hook_name).get_hookimpls(), key=lambda i: order[i.plugin_name]
            )
            for implementation in implementations:
                plugin = implementation.plugin_name
                if plugin in problems:
                    continue
                contributed: list = []
                arguments = {
                    "register": contributed.append,
                    "metrics": {n: r.value for n, r in registry.metrics.items()},
                }
                try:
                    implementation.function(**{name: arguments[name] for name in implementation.argnames})
                except BaseException as error:
                    if not plugin_fault(error):
                        raise
                    problems[plugin] = (f"{type(error).__name__} in {hook_name}: {error}", error)
                    continue
                for thing in contributed:
                    try:
                        invalid = _CHECKS[hook_name](thing)
                    except BaseException as error:  # the plugin's code: a summary, an option's kind
                        if not plugin_fault(error):
                            raise
                        invalid = f"checking what it registered raised {type(error).__name__}: {error}"
                    culprit, reason = (
                        (plugin, invalid)
                        if invalid
                        else self._clash(registry, table, hook_name, thing.name, plugin, order)
                    )
                    if reason is not None:
                        problems.setdefault(culprit, (f"{reason} (in {hook_name})", None))
                        break
                    candidate = candidates[plugin]
                    if hook_name == "register_metrics":
                        thing = dataclasses.replace(
                            thing, provenance=Provenance(plugin, candidate.distribution, candidate.version)
                        )
                    table[thing.name] = Registered(thing.name, thing, plugin, candidate.distribution, candidate.version)
        return registry, problems

    @staticmethod
    def _clash(registry: Registry, table: dict, hook_name: str, name: str, plugin: str, order: dict):
        """(the plugin to skip, why) when ``name`` is taken, else (None, None): the plugin loaded
        last among the two registering it and, for a stage, the one whose metric it is named after."""
        if name not in table:
            return None, None
        first = table[name]
        kind = hook_name.removeprefix("register_")[:-1]
        if first.plugin == plugin:
            return plugin, f"it registers the {kind} '{name}' twice"
        metric_owner = registry.metrics[name].plugin if kind == "stage" and name in registry.metrics else None
        culprit = max({first.plugin, plugin, metric_owner} - {None}, key=lambda p: order[p])
        if culprit == metric_owner and culprit not in (first.plugin, plugin):
            return culprit, (
                f"its metric '{name}' clashes with the stage '{name}' of plugins '{first.plugin}' and '{plugin}'"
            )
        other = first.plugin if culprit == plugin else plugin
        return culprit, f"its {kind} '{name}' clashes with the {kind} '{name}' of plugin '{other}'"


def _signature_problem(module) -> str | None:
    """Which hook implementation of ``module`` takes arguments its hookspec does not offer."""
    for hook_name in HOOKS:
        function = getattr(module, hook_name, None)
        if function is None or not hasattr(function, f"{GROUP}_impl"):
            continue
        offered = list(inspect.signature(getattr(hookspecs, hook_name)).parameters)
        extra = [name for name in inspect.signature(function).parameters if name not in offered]
        if extra:
            return (
                f"its {hook_name} takes {', '.join(extra)}, "
                f"which the hook does not pass (it passes {', '.join(offered)})"
            )
    return None


def _distribution_text(candidate: _Candidate) -> str:
    version = f" {candidate.version}" if candidate.version else ""
    return f"distribution {candidate.distribution}{version}"


def _warn(message: str) -> None:
    print(f"filterkit: warning: {message}", file=sys.stderr)


def load_plugins(plugins_dir: str | os.PathLike | None = None) -> Registry:
    """Load every plugin and collect what each registers (see the module docstring).

    Returns the :class:`Registry`.  Raises FilterkitError only for a ``plugins_dir``
    that is not a folder, a bad FILTERKIT_STRICT_PLUGINS, or, in strict mode, the
    first plugin problem.
    """
    loader = _Loader(strict_plugins())
    disabled = disabled_plugins()
    candidates = [c for c in _candidates(plugins_dir, loader) if c.switch not in disabled]
    registry = Registry(skipped=loader.skipped, without_hooks=loader.without_hooks, disabled=sorted(disabled))
    pending = _PendingPlugins(loader, candidates, registry)
    if loader.strict or not all(candidate.declared for candidate in candidates):
        pending.load_all()
    else:
        registry._pending = pending
        registry.stages, registry.metrics, registry.classifiers, registry.stemmers = (
            PluginTable(kind, pending) for kind in KINDS
        )
    _latest[:] = [registry]
    return registry


#: The kinds of things plugins register, in the order of the registry's tables.
KINDS = ("stage", "metric", "classifier", "stemmer")


class PluginTable(MutableMapping):
    """One table of a registry that loads its plugins as names are looked up: a name
    loads the plugin that declares it; listing the table loads every plugin."""

    def __init__(self, kind: str, pending: _PendingPlugins):
        self.kind = kind
        self.entries: dict[str, Registered] = {}
        self._pending = pending

    def __getitem__(self, name: str) -> Registered:
        # under the loading lock: a load in another thread empties and refills the entries
        with self._pending.lock:
            if name not in self.entries:
                self._pending.load_declaring(self.kind, name)
            return self.entries[name]

    def __iter__(self) -> Iterator[str]:
        self._pending.load_all()
        return iter(self.entries)

    def __len__(self) -> int:
        self._pending.load_all()
        return len(self.entries)

    def __setitem__(self, name: str, registered: Registered) -> None:
        self.entries[name] = registered

    def __delitem__(self, name: str) -> None:
        del self.entries[name]

    def __repr__(self) -> str:
        return f"PluginTable({self.kind!r}, {self.entries!r})"


class _PendingPlugins:
    """The plugins of a registry not loaded yet, loaded on demand into ``registry`` (one
    thread at a time), and collected in the order :func:`load_plugins` would load them all."""

    def __init__(self, loader: _Loader, candidates: list[_Candidate], registry: Registry):
        self.loader = loader
        self.waiting = list(candidates)
        self.position = {candidate.name: position for position, candidate in enumerate(candidates)}
        self.registry = registry
        self.collected = False
        self.lock = threading.RLock()

    def load_declaring(self, kind: str, name: str) -> None:
        """Load the plugin that declares the ``kind`` called ``name``, if one waits."""
        self._load([c for c in self.waiting if (kind, name) in c.declared])

    def load_all(self) -> None:
        """Load every plugin still waiting."""
        self._load(list(self.waiting))

    def _load(self, candidates: list[_Candidate]) -> None:
        with self.lock:
            self._load_unlocked([c for c in candidates if c in self.waiting])

    def _load_unlocked(self, candidates: list[_Candidate]) -> None:
        if not candidates and self.collected:
            return
        while candidates:
            for candidate in candidates:
                self.waiting.remove(candidate)
                self.loader.add(candidate)
            # a plugin that makes a stage per metric (the scorers) needs every metric first
            wanted = self.loader.wants_metrics()
            candidates = [c for c in self.waiting if wanted and any(kind == "metric" for kind, _ in c.declared)]
        self.loader.loaded.sort(key=lambda loaded: self.position[loaded[0].name])
        loaded = self.loader.registry()
        self.collected = True
        for kind in KINDS:
            table = getattr(self.registry, f"{kind}s")
            entries = table.entries if isinstance(table, PluginTable) else table
            entries.clear()
            entries.update(getattr(loaded, f"{kind}s"))
        if self.waiting and not self._as_declared(loaded):
            self._load_unlocked(list(self.waiting))

    def _as_declared(self, loaded: Registry) -> bool:
        """Whether every loaded plugin registered exactly what it declares."""
        registered: dict[str, set[tuple[str, str]]] = {}
        for kind in KINDS:
            for name, entry in getattr(loaded, f"{kind}s").items():
                registered.setdefault(entry.plugin, set()).add((kind, name))
        return all(registered.get(c.name, set()) == c.declared for c, _ in self.loader.loaded)


def _candidates(plugins_dir, loader: _Loader) -> list[_Candidate]:
    """The plugins to load, in load order; a second entry point of a taken name is skipped."""
    points = entry_points(GROUP, NAMES_GROUP)
    named = {id(point.dist): _name_and_version(point.dist) for point in points}
    found = [(point, *named[id(point.dist)]) for point in points if point.group == GROUP]
    found.sort(key=lambda f: (f[1] != BUILT_IN_DISTRIBUTION, f[0].name, f[1], f[0].value))
    declared = _declarations([point for point in points if point.group == NAMES_GROUP], named)
    candidates: list[_Candidate] = []
    values: dict[str, str] = {}
    for point, distribution, version in found:
        names = declared.get((distribution, point.name), frozenset())
        candidate = _Candidate(point.name, point.name, distribution, version, point.load, names)
        if point.name in values:
            if values[point.name] != point.value:
                first = next(c for c in candidates if c.name == point.name)
                loader.skip(candidate, f"{_distribution_text(first)} already has an entry point named '{point.name}'")
            continue
        values[point.name] = point.value
        candidates.append(candidate)
    if plugins_dir is not None:
        folder = Path(plugins_dir)
        if not folder.is_dir():
            raise FilterkitError(f"plugins folder {str(plugins_dir)!r} is not a folder")
        for path in sorted(folder.glob("*.py")):
            candidates.append(
                _Candidate(
                    f"{path.stem} ({path})",
                    path.stem,
                    f"plugins-dir {plugins_dir}",
                    "",
                    functools.partial(_import_file, path),
                )
            )
    return candidates


def entry_points(*groups: str) -> list[metadata.EntryPoint]:
    """The installed entry points of ``groups``, as ``importlib.metadata.entry_points`` finds them
    (from the first distribution of each name on ``sys.path``), except that a distribution whose
    ``entry_points.txt`` cannot be read is left out with a warning: importlib.metadata raises, a
    traceback on every run whichever distribution holds the file."""
    found: list[metadata.EntryPoint] = []
    seen: set[str] = set()
    for distribution in metadata.distributions():
        name = distribution._normalized_name  # type: ignore[attr-defined]  # entry_points' own key
        if name in seen:
            continue
        seen.add(name)
        try:
            found.extend(point for point in distribution.entry_points if point.group in groups)
        except Exception as error:
            _warn(
                f"distribution {distribution.metadata['Name']}: its entry_points.txt cannot be read "
                f"({type(error).__name__}: {error}); its plugins are left out"
            )
    return found


def _name_and_version(distribution) -> tuple[str, str]:
    """A distribution's name and version (its METADATA, parsed once); "?" for an entry point without one."""
    if distribution is None:
        return "?", ""
    fields = distribution.metadata
    return fields["Name"], fields["Version"]


def _declarations(points, named: dict) -> dict[tuple[str, str], frozenset[tuple[str, str]]]:
    """What each plugin declares it registers, by (distribution, plugin name), as (kind, name)
    pairs: a :data:`NAMES_GROUP` entry point names a distribution's table of them
    (``{"normalizers": {"stage": ("l2", …)}}``).  A table that cannot be read declares nothing,
    so its plugins are loaded at once."""
    declared = {}
    for point in points:
        distribution = named[id(point.dist)][0]
        try:
            table = point.load()
            for plugin, kinds in table.items():
                names = frozenset((kind, name) for kind, names in kinds.items() for name in names)
                declared[(distribution, plugin)] = names
        except BaseException as error:
            if not plugin_fault(error):
                raise
            _warn(
                f"the names {point.value} of distribution {distribution} are left out ({type(error).__name__}: {error})"
            )
    return declared


def _import_file(path: Path):
    """Import a plugin file as a module registered in ``sys.modules`` (dataclasses need it)."""
    module_name = f"filterkit_local_plugin_{path.stem}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    return module


_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*\Z")


def _check_configurable(thing, base: type[Configurable], kind: str) -> str | None:
    """Why ``thing`` cannot be registered as a ``base`` subclass, or None."""
    if not isinstance(thing, type):
        return f"it registered {_described(thing)} where a {kind} class (a subclass of {base.__qualname__}) is expected"
    if not issubclass(thing, base):
        return (
            f"it registered the class {thing.__qualname__}, "
            f"which is not a subclass of {base.__module__}.{base.__qualname__}"
        )
    problem = _check_name(thing, kind)
    if problem is None and not thing.one_line_summary():
        problem = f"{kind} '{thing.name}' has neither a summary nor a docstring"
    if problem is None:
        problem = _check_options(thing, kind)
    return problem


def _check_name(thing, kind: str) -> str | None:
    name = getattr(thing, "name", None)
    if not isinstance(name, str) or not _WORD.match(name):
        return (
            f"it registered {_described(thing)} with the name {name!r} "
            f"(a {kind} needs a word of letters, digits, _ . + -)"
        )
    return None


def _check_options(thing, kind: str) -> str | None:
    options = thing.options
    if not isinstance(options, tuple) or not all(isinstance(o, Option) for o in options):
        return f"{kind} '{thing.name}': options must be a tuple of filterkit.stage.Option"
    names = [option.name for option in options]
    for option in options:
        if not option.name.isidentifier():
            return f"{kind} '{thing.name}': option name {option.name!r} is not a Python identifier"
        if names.count(option.name) > 1:
            return f"{kind} '{thing.name}' declares option '{option.name}' twice"
        try:
            option.convert(option.default)
        except FilterkitError as error:
            return f"{kind} '{thing.name}': the default of {error}"
    return None


def check_stage_class(thing) -> str | None:
    """Why ``thing`` cannot be registered as a stage (not a Stage subclass, no name or
    summary, bad options), or None."""
    return _check_configurable(thing, Stage, "stage")


def _check_classifier(thing) -> str | None:
    from filterkit.classifier import Classifier  # imported by the first classifier plugin loaded

    return _check_configurable(thing, Classifier, "classifier")


def _check_metric(thing) -> str | None:
    from filterkit.metrics import Metric  # imported by the first metric plugin loaded

    if not isinstance(thing, Metric):
        return f"it registered {_described(thing)} where a filterkit.metrics.Metric is expected"
    if not callable(thing.function):
        return f"metric '{thing.name}': its function is not callable"
    return _check_name(thing, "metric")


def _check_stemmer(thing) -> str | None:
    if not isinstance(thing, Stemmer):
        return f"it registered {_described(thing)} where a filterkit.plugins.Stemmer is expected"
    if not callable(thing.function):
        return f"stemmer '{thing.name}': its function is not callable"
    return _check_name(thing, "stemmer")


_CHECKS = {
    "register_stages": check_stage_class,
    "register_classifiers": _check_classifier,
    "register_metrics": _check_metric,
    "register_stemmers": _check_stemmer,
}


def _described(thing) -> str:
    if isinstance(thing, type):
        return f"the class {thing.__qualname__}"
    return f"an instance of {type(thing).__qualname__}"
