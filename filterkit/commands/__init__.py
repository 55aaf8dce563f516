"""The ``filterkit`` command line as one click tree.

``filterkit`` is the chain (``filterkit in.arff shape bns l2``), a
:class:`~filterkit.commands.stages.FilterkitGroup` whose subcommands are the stages of the
run's plugins (:mod:`filterkit.commands.context`), unless a command word names a command,
imported only then.  The chain's run is :mod:`filterkit.commands.chain`, imported by a
chain run only.  ``-h`` is ``--help`` everywhere.
"""

from __future__ import annotations

import click

from filterkit.commands.help import version_option
from filterkit.commands.options import (
    class_option,
    engine_option,
    labels_option,
    output_option,
    partitions_option,
    plugins_dir_option,
    positive_option,
    reading_and_writing_options,
    scheduler_option,
    workers_option,
)
from filterkit.commands.stages import FilterkitGroup, complete_first_word

#: The command words, and where each command is defined.
COMMANDS = {
    "apply": "filterkit.commands.apply:apply",
    "evaluate": "filterkit.commands.evaluate:evaluate",
    "explain": "filterkit.commands.predict:explain",
    "export": "filterkit.commands.export:export",
    "help": "filterkit.commands.help:help_command",
    "info": "filterkit.commands.info:info",
    "plugins": "filterkit.commands.plugins:plugins",
    "predict": "filterkit.commands.predict:predict",
    "train": "filterkit.commands.train:train",
    "update": "filterkit.commands.update:update",
}

CHAIN_HELP = """Read IN.arff (or - for stdin), run the STAGES in order, write ARFF.

svmlight/LibSVM (.svm, .svmlight, .libsvm) and CSV (.csv) are read and written
too, chosen by the file's name (a .gz after it: gzip) or by --from/--to.

\b
  filterkit in.arff shape bns l2 > out.arff
  cat in.arff | filterkit - ig --presence select --top 1000 l2
  filterkit --save-model m.json train.arff bns l2 > train_out.arff
  filterkit apply m.json test.arff > test_out.arff

With no stage the input is rewritten unchanged. The options below come before
the first stage, before or after IN.arff; a stage's options follow its name
('filterkit help STAGE' lists them). A file named like a command is read as
./NAME.

With --engine dask the chain runs over partitions on a Dask cluster: IN.arff
is split into byte ranges, or is a folder or a quoted glob ('parts/*.arff')
of files sharing one header, each file a partition (see docs/dask.md).
"""


@click.group(
    "filterkit",
    cls=FilterkitGroup,
    commands=COMMANDS,
    help=CHAIN_HELP,
    subcommand_metavar="STAGE [OPTIONS]... [STAGE [OPTIONS]...]...",
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.argument(
    "input_path",
    metavar="IN.arff",
    type=click.Path(allow_dash=True),
    shell_complete=complete_first_word,
)
@output_option
@class_option
@labels_option
@positive_option(
    help="The positive class label for two-class stages (default: the minority class; on more classes each "
    "stage's multi-class form, as `filterkit plugins` says)."
)
@click.option(
    "--save-model",
    "model_path",
    type=click.Path(dir_okay=False),
    help="Save the fitted chain (one JSON file, arrays included).",
)
@click.option(
    "--updatable",
    is_flag=True,
    help="With --save-model: keep the statistics the chain was fitted from in the model, so that "
    "'filterkit update' can add rows to it.",
)
@reading_and_writing_options
@click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="After fitting, say on stderr what each stage chose (the stages that tell: auto's treatment per feature).",
)
@plugins_dir_option
@version_option
@engine_option("Run in this process, or over partitions on a Dask cluster")
@scheduler_option
@workers_option
@partitions_option
@click.option(
    "--output-dir",
    type=click.Path(file_okay=False),
    help="With --engine dask: write one output per partition into DIR.",
)
def command_line(**_):
    """The chain; the work happens in the result callback, :func:`run_chain`."""


@command_line.result_callback()
@click.pass_context
def run_chain(ctx: click.Context, steps: list, **params) -> None:
    """Run the chain (:func:`filterkit.commands.chain.run_chain`, imported by a chain run only)."""
    from filterkit.commands.chain import run_chain

    run_chain(ctx, steps, params)
