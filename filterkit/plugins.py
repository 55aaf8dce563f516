"""Finding plugins and the registries of stages, metrics and classifiers.

Plugins come from the entry-point group ``filterkit`` (the built-in stages
too) and from ``*.py`` files of a ``--plugins-dir``.  Each entry point is
loaded on its own, as conda does: one that fails to import prints a single
warning naming it and the rest keep working (``FILTERKIT_STRICT_PLUGINS=1``
re-raises instead).  ``FILTERKIT_DISABLE_PLUGINS=a,b`` skips plugins by name.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path

import pluggy

from filterkit import hookspecs
from filterkit.errors import FilterkitError

GROUP = "filterkit"


@dataclass
class Registered:
    """One contributed thing and where it came from."""

    name: str
    value: object
    plugin: str
    distribution: str


@dataclass
class Registry:
    """Everything the loaded plugins contributed, by kind and name."""

    stages: dict[str, Registered] = field(default_factory=dict)
    metrics: dict[str, Registered] = field(default_factory=dict)
    classifiers: dict[str, Registered] = field(default_factory=dict)
    failed: list[tuple[str, str]] = field(default_factory=list)

    def stage(self, name: str):
        """The stage class called ``name``; FilterkitError listing the known ones if none."""
        return _lookup(self.stages, name, "stage").value

    def make_stage(self, name: str, params: dict):
        """A new stage ``name`` with ``params``, labelled with the plugin it came from."""
        registered = _lookup(self.stages, name, "stage")
        stage = registered.value(**params)
        stage.plugin_name = registered.plugin
        return stage

    def metric(self, name: str):
        """The metric called ``name``; FilterkitError listing the known ones if none."""
        return _lookup(self.metrics, name, "metric").value

    def classifier(self, name: str):
        """The classifier class called ``name``; FilterkitError if none."""
        return _lookup(self.classifiers, name, "classifier").value


def _lookup(table: dict, name: str, kind: str) -> Registered:
    if name not in table:
        known = ", ".join(sorted(table)) or "none"
        raise FilterkitError(f"no {kind} called '{name}' (installed: {known}); see 'filterkit plugins'")
    return table[name]


def _strict() -> bool:
    return os.environ.get("FILTERKIT_STRICT_PLUGINS", "") not in ("", "0")


def _disabled() -> set[str]:
    return {name.strip() for name in os.environ.get("FILTERKIT_DISABLE_PLUGINS", "").split(",") if name.strip()}


def _warn(message: str) -> None:
    print(f"filterkit: warning: {message}", file=sys.stderr)


def load_plugins(plugins_dir: str | os.PathLike | None = None) -> Registry:
    """Load every plugin and collect what each registers.

    Raises FilterkitError when two plugins register the same name, or when a
    plugin implements a hook filterkit does not know.
    """
    manager = pluggy.PluginManager(GROUP)
    manager.add_hookspecs(hookspecs)
    failed: list[tuple[str, str]] = []
    distributions: dict[str, str] = {}
    disabled = _disabled()
    for entry_point in sorted(entry_points(group=GROUP), key=lambda e: e.name):
        if entry_point.name in disabled:
            continue
        distribution = entry_point.dist.name if entry_point.dist else "?"
        module = _import_or_warn(entry_point.name, entry_point.load, failed)
        if module is not None and manager.get_plugin(entry_point.name) is None:
            manager.register(module, name=entry_point.name)
            distributions[entry_point.name] = distribution
    if plugins_dir is not None:
        for path in sorted(Path(plugins_dir).glob("*.py")):
            name = f"{path.stem} ({path})"
            if path.stem in disabled:
                continue
            module = _import_or_warn(name, lambda p=path: _import_file(p), failed)
            if module is not None:
                manager.register(module, name=name)
                distributions[name] = f"plugins-dir {plugins_dir}"
    try:
        manager.check_pending()
    except pluggy.PluginValidationError as error:
        raise FilterkitError(f"plugin {error.plugin!r} implements an unknown hook: {error}") from None
    registry = Registry(failed=failed)
    for hook_name, table in (
        ("register_metrics", registry.metrics),
        ("register_classifiers", registry.classifiers),
        ("register_stages", registry.stages),
    ):
        for implementation in getattr(manager.hook, hook_name).get_hookimpls():
            plugin = implementation.plugin_name
            register = _registrar(table, plugin, distributions.get(plugin, plugin), hook_name)
            arguments = {"register": register, "metrics": {n: r.value for n, r in registry.metrics.items()}}
            try:
                implementation.function(**{name: arguments[name] for name in implementation.argnames})
            except FilterkitError:
                raise
            except Exception as error:
                _skip_failed(plugin, f"{type(error).__name__} in {hook_name}: {error}", "register", failed)
    return registry


def _import_or_warn(name: str, load, failed: list):
    try:
        return load()
    except Exception as error:
        _skip_failed(name, f"{type(error).__name__}: {error}", "load", failed)
        return None


def _skip_failed(name: str, reason: str, step: str, failed: list) -> None:
    """Record a plugin that failed and warn once; re-raise in strict mode."""
    if _strict():
        raise
    failed.append((name, reason))
    _warn(f"plugin '{name}' failed to {step} and is skipped ({reason})")


def _import_file(path: Path):
    """Import a plugin file as a module registered in ``sys.modules`` (dataclasses need it)."""
    module_name = f"filterkit_local_plugin_{path.stem}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    return module


def _registrar(table: dict, plugin: str, distribution: str, hook_name: str):
    def register(thing) -> None:
        name = getattr(thing, "name", None)
        if not isinstance(name, str) or not name:
            raise FilterkitError(f"plugin '{plugin}' ({hook_name}) registered {thing!r} without a name")
        if name in table:
            first = table[name]
            raise FilterkitError(
                f"two plugins register '{name}': '{first.plugin}' ({first.distribution}) "
                f"and '{plugin}' ({distribution}); disable one with FILTERKIT_DISABLE_PLUGINS"
            )
        table[name] = Registered(name, thing, plugin, distribution)

    return register
