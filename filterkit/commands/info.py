"""``filterkit info IN``: its options parsed, then :func:`filterkit.summary.summarize`
and the summary rendered as text or JSON."""

from __future__ import annotations

import sys

import click

from filterkit import documents, summary
from filterkit.commands.context import registry_of
from filterkit.commands.files import ReportCommand, check_format_options
from filterkit.commands.options import (
    RegisteredName,
    chunk_rows_option,
    class_option,
    format_option_decorators,
    input_format_option,
    json_option,
    positive_option,
)
from filterkit.errors import FilterkitError
from filterkit.formats import FormatOptions, format_of, format_options, registered
from filterkit.metrics import COMBINE_CHOICES

INFO_HELP = """Summarize IN (or - for stdin) in one streaming pass.

\b
  filterkit info oh0.arff
  filterkit info -c first --metric ig --presence --top 20 grain.arff
  filterkit info --metric bns --positive Ethics --json oh0.arff
  filterkit info docs.csv
  filterkit info --from jsonl - < docs.jsonl

IN is read in any format a chain reads (--from, else by its name: ARFF
by default), with the same reading options. Prints the relation, rows,
attributes by type, whether rows are written sparse or dense (in ARFF: as
each line is written; svmlight: sparse; the other formats: dense), the density (non-zero values / (rows × features: the
non-class attributes but string and relational ones); a missing value counts
as non-zero, as a sparse row writes it), the class attribute (-c) with the
count and share of all rows of each label, and the instance weights if any.
On multi-label data (MEKA's -C: docs/multilabel.md) there is no class: the
labels' cardinality (mean labels a row), density (cardinality / labels), the
number of distinct label sets and each label's rows and share.

With --metric, the numeric and nominal non-class attributes are ranked as
select --metric ranks them (--numeric-only: the numeric ones, as the scorer
stages score them): presence (value ≠ 0) with --presence, else the best
threshold; a nominal attribute over its values. On two classes the positive
class is --positive or the minority. On more classes without --positive, ig,
igm and chi score all classes at once (--combine joint; ig and chi as Weka
3.6's InfoGainAttributeEval / ChiSquaredAttributeEval score, -B with
--presence, ranked as Weka's Ranker orders them, ties included); other metrics, or
--combine max, take the maximum over one-vs-rest of every class, and the
class column shows the class achieving it (the first label on a tie);
--combine mean their mean. tp and fp are presence counts: rows of that class
/ of the others where the feature is non-zero; pos and neg count the rows of
that class / of the others where the feature is not missing (shown for
numeric features scored against one class). With instance weights, all of
these are sums of weights, as the scorers use. Ties rank by position, except
with joint (Weka's order).
"""


@click.command(cls=ReportCommand, help=INFO_HELP)
@click.argument("input_path", metavar="IN")
@class_option
@input_format_option
@format_option_decorators
@click.option(
    "--metric", "metric_name", type=RegisteredName("metrics"), help="Rank the numeric features by this metric."
)
@click.option(
    "--top",
    type=click.IntRange(1),
    default=None,
    help=f"Features to show with --metric [default: {summary.DEFAULT_TOP}].",
)
@positive_option(help="With --metric: the positive class (default on two classes: the minority).")
@click.option("--presence", is_flag=True, help="With --metric: score presence (value ≠ 0), not the best threshold.")
@click.option(
    "--combine",
    type=click.Choice(COMBINE_CHOICES),
    default=None,
    help="With --metric on more than two classes: one-vs-rest combined by max, mean or min, or joint (all classes at "
    "once: Weka's IG and χ², or igm; ig, chi and igm only). Default: joint for those without --positive, else max.",
)
@click.option("--numeric-only", is_flag=True, help="With --metric: rank the numeric attributes only.")
@json_option(help="Print JSON.")
@chunk_rows_option
@click.pass_context
def info(
    ctx: click.Context, input_path: str, metric_name: str | None, input_format: str | None, as_json: bool, **params
) -> None:
    """Summarize IN in one pass and print the summary, as text or JSON."""
    registry = registry_of(ctx)
    given = [
        name for name in ("top", "positive", "presence", "combine", "numeric_only") if params[name] not in (None, False)
    ]
    if metric_name is None and given:
        flags = " and ".join(f"--{name.replace('_', '-')}" for name in given)
        raise click.UsageError(f"{flags} {'needs' if len(given) == 1 else 'need'} --metric")
    metric = registry.metric(metric_name) if metric_name is not None else None
    options = FormatOptions.of_params(params, params["class_spec"])
    check_format_options(options, format_of(input_path, input_format))
    summarized = {name: value for name, value in params.items() if name not in format_options()}
    # a format that streams reads standard input as it comes; the others from the path "-", as a chain's run does
    streamed_stdin = input_path == "-" and registered(format_of(None, input_format)).streams
    if streamed_stdin and sys.stdin is None:
        raise FilterkitError("standard input is closed")
    document = summary.summarize(
        sys.stdin.buffer if streamed_stdin else input_path,
        "<stdin>" if input_path == "-" else input_path,
        metric=metric,
        input_format=input_format,
        options=options,
        **{**summarized, "top": summarized["top"] or summary.DEFAULT_TOP},
    )
    click.echo(documents.as_json(document) if as_json else summary.as_text(document), nl=as_json)
