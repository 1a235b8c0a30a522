"""``kofs evaluate RANKING... EXPRESSION``: accuracy, knowledge support and redundancy of ranked
gene lists, with figures and an offline HTML report.

The options are generated from :class:`kofs.evaluate.config.EvaluateConfig`; the command
parses, claims the output folder and makes one library call
(:func:`kofs.evaluate.run.evaluate_files`)."""

from __future__ import annotations

import os

import click

from kofs.cli._config_options import declared_options, typed
from kofs.cli._group import main
from kofs.cli._options import UserPath


def _options() -> list:
    from kofs.evaluate.config import EvaluateConfig
    from kofs.options import options_of

    return options_of(EvaluateConfig)


@main.command("evaluate")
@click.argument("rankings", nargs=-1, required=True, type=UserPath(exists=False))
@click.argument("expression", type=UserPath(dir_okay=False))
@declared_options(_options, exclude=("rankings", "expression"))
@click.pass_context
def evaluate_cmd(ctx: click.Context, rankings, expression, **opts) -> None:
    """Evaluate RANKING (ranking.tsv files or `kofs rank` output folders, not - for stdin)
    on EXPRESSION (- for stdin).

    Writes OUTDIR/evaluation.tsv (one row per list), accuracy.tsv (curves), figures/ (PNG, SVG)
    and report.html (readable offline).
    """
    from kofs.cli._group import hold_output, option_given, report_written
    from kofs.cli._progress import cli_progress
    from kofs.evaluate.config import EvaluateConfig
    from kofs.evaluate.run import evaluate_files

    config = EvaluateConfig.from_mapping(
        {**typed(ctx, opts), "rankings": list(rankings), "expression": expression}
    )  # checked before any work
    inputs = [*config.rankings, config.expression, config.labels, config.go, config.go_annotations]
    hold_output(  # checked and taken before any work
        config.output,
        inputs=[p for p in inputs if p and os.path.exists(p)],  # ranking folders too
        named=option_given("output"),
    )
    with cli_progress() as progress:
        written = evaluate_files(config, progress=progress)
    report_written(config.output, written)
