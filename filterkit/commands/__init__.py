"""The ``filterkit`` command line as one click tree.

``filterkit`` is a :class:`~filterkit.commands.default_group.DefaultGroup`: a command
word names a command, imported only then, and any other first word starts the chain
(``filterkit in.arff shape bns l2``), whose subcommands are the stages of the run's
plugins (:mod:`filterkit.commands.context`).  ``-h`` is ``--help`` everywhere.
"""

from __future__ import annotations

from filterkit.commands.default_group import DefaultGroup
from filterkit.commands.help import help_command, version_option
from filterkit.commands.options import plugins_dir_option

#: The command words other than ``help``, and where each command is defined.
COMMANDS = {
    "apply": "filterkit.commands.apply:apply",
    "evaluate": "filterkit.commands.evaluate:evaluate",
    "info": "filterkit.commands.info:info",
    "plugins": "filterkit.commands.plugins:plugins",
}

#: The chain: the command that runs when the first word is not a command word.
CHAIN = "filterkit.commands.chain:chain"

#: ``filterkit`` itself; ``--plugins-dir`` and ``--version`` are its options (the chain's and the
#: commands' follow their word).
command_line = version_option(
    plugins_dir_option(
        DefaultGroup(
            "filterkit",
            commands=[help_command],
            lazy_commands=COMMANDS,
            default=CHAIN,
            context_settings={"help_option_names": ["-h", "--help"]},
        )
    )
)
