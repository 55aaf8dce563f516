"""What the commands of one run share through the click context: the plugins.

The registry is loaded on first use, so ``--plugins-dir`` (an eager option of
the root and of the chain) is parsed before any stage, metric or classifier is
looked up.
"""

from __future__ import annotations

from typing import Callable

import click

from filterkit.plugins import Registry, load_plugins


class PluginLoader:
    """The plugins of one run: the ``--plugins-dir`` folder (if any) and, once asked
    for, the registry loaded with it by ``load`` (:func:`filterkit.plugins.load_plugins`)."""

    def __init__(self, folder: str | None = None, load: Callable[[str | None], Registry] = load_plugins):
        self.folder = folder
        self._load = load
        self._registry: Registry | None = None

    def use_folder(self, folder: str) -> None:
        """Load the plugin files of ``folder`` too (the registry is reloaded if it was loaded)."""
        if folder != self.folder:
            self.folder = folder
            self._registry = None

    def registry(self) -> Registry:
        """The registry, loaded on the first call."""
        if self._registry is None:
            self._registry = self._load(self.folder)
        return self._registry


def plugin_loader(ctx: click.Context) -> PluginLoader:
    """The run's :class:`PluginLoader` (a default one if the tree was invoked without one)."""
    loader = ctx.find_object(PluginLoader)
    return loader if loader is not None else ctx.find_root().ensure_object(PluginLoader)


def registry_of(ctx: click.Context) -> Registry:
    """The plugin registry of the run ``ctx`` belongs to."""
    return plugin_loader(ctx).registry()


def use_plugins_dir(ctx: click.Context, param: click.Parameter, folder: str | None) -> None:
    """Callback of ``--plugins-dir``: the run's plugins come from ``folder`` too."""
    if folder is not None:
        plugin_loader(ctx).use_folder(folder)
