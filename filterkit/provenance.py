"""What a model records of the plugin of each of its stages and of its classifier, checked against what is installed:
a model is applied with the stage or classifier it was fitted with, not another plugin's of the same name."""

from __future__ import annotations

from collections.abc import Mapping

from filterkit.errors import FilterkitError
from filterkit.plugins import BUILT_IN_DISTRIBUTION, PLUGINS_DIR, Registered


def installed_as_saved(kind: str, entry: dict, table: Mapping[str, Registered], path) -> Registered:
    """The installed ``kind`` (``"stage"``, ``"classifier"``) of ``table`` that a model's ``entry`` names (its
    ``name``, ``plugin`` and ``distribution``); FilterkitError naming the model file ``path`` where none of that name
    is installed, or where the one installed is another plugin's (whose fitted state may mean otherwise: it had been
    applied with exit 0)."""
    # a model saved before the rename: "filterkit" on PyPI is another project
    recorded = entry.get("distribution")
    distribution = BUILT_IN_DISTRIBUTION if recorded == "filterkit" else recorded
    needed = f"{kind} '{entry['name']}' from plugin '{entry.get('plugin')}' ({distribution})"
    if entry["name"] not in table:
        raise FilterkitError(f"the model needs {needed}, which is not installed", str(path))
    installed = table[entry["name"]]
    if not _same_plugin(entry.get("plugin"), distribution, installed.plugin, installed.distribution):
        raise FilterkitError(
            f"the model needs {needed}; the installed {kind} of that name is plugin '{installed.plugin}' "
            f"({installed.distribution}), whose fitted state may mean otherwise",
            str(path),
        )
    return installed


def _same_plugin(plugin, distribution, installed_plugin: str, installed_distribution: str) -> bool:
    """Whether what ``plugin`` of ``distribution`` fitted (None in a model that does not say) is the installed
    one's: any built-in one (the built-in plugins' modules may move), else the same plugin by name (a
    ``--plugins-dir`` file's name, wherever its folder is, or installed by a package under that name) and, both
    installed by a package, the same package."""
    if plugin is None or distribution is None or distribution == installed_distribution == BUILT_IN_DISTRIBUTION:
        return True
    local = distribution.startswith(PLUGINS_DIR) or installed_distribution.startswith(PLUGINS_DIR)
    named = str(plugin).split(" (", 1)[0] == installed_plugin.split(" (", 1)[0]
    return named and (local or distribution == installed_distribution)
