"""``kofs reproduce CONFIG``: the book's KOFS experiment (Table 6.5) from a YAML config."""

from __future__ import annotations

import click

from kofs.cli._group import main
from kofs.cli._options import UserPath, threads_option


@main.command("reproduce")
@click.argument("config", type=UserPath(dir_okay=False, exists=True))
@click.option(
    "-o",
    "--output",
    type=UserPath(),
    default=None,
    help="Output folder (default: the config's 'output', else 'results' beside it).",
)
@click.option(
    "--quick",
    is_flag=True,
    help="Reduced run: <= 1,000 genes, 3 folds, 1-NN only, <= 2 split-half repeats and null draws.",
)
@threads_option("Cap on BLAS threads.")
def reproduce_cmd(config: str, output: str | None, quick: bool, threads: int | None) -> None:
    """Build the KOFS lists and aggregations of CONFIG, evaluate them as book Table 6.5 does
    (and with the honest protocol), and write tables, figures and report.html."""
    from kofs.cli._group import hold_output, report_written
    from kofs.evaluate.reproduce import experiment_output

    out, named = experiment_output(config, output)
    hold_output(out, inputs=[config], named=named)  # checked and taken before any work
    from kofs.evaluate.reproduce import run_experiment

    written = run_experiment(config, output=out, quick=quick, threads=threads)
    report_written(out, written)
