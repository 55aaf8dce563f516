"""The ``filterkit`` command line as one click tree.

``filterkit`` is a :class:`~filterkit.commands.default_group.DefaultGroup`: a command
word (``apply``, ``evaluate``, ``help``, ``info``, ``plugins``) names a command, and any
other first word starts the chain (``filterkit in.arff shape bns l2``), whose subcommands
are the stages the run's plugins register.  The plugin registry is loaded from the click
context on first use, after ``--plugins-dir`` is parsed
(:mod:`filterkit.commands.context`); options that several commands share are declared
once (:mod:`filterkit.commands.options`).  ``-h`` is ``--help`` everywhere.
"""

from __future__ import annotations

from filterkit.commands.apply import apply
from filterkit.commands.chain import chain
from filterkit.commands.default_group import DefaultGroup
from filterkit.commands.evaluate import evaluate
from filterkit.commands.help import help_command, version_option
from filterkit.commands.info import info
from filterkit.commands.options import plugins_dir_option
from filterkit.commands.plugins import plugins

#: ``filterkit`` itself; ``--plugins-dir`` and ``--version`` are its options (the chain's and the
#: commands' follow their word).
command_line = version_option(
    plugins_dir_option(
        DefaultGroup(
            "filterkit",
            commands=[apply, evaluate, help_command, info, plugins],
            default=chain,
            context_settings={"help_option_names": ["-h", "--help"]},
        )
    )
)
