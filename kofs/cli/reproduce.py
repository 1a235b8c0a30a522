"""``kofs reproduce CONFIG``: the book's KOFS experiment (Table 6.5) from a YAML config."""

from __future__ import annotations

import click

from kofs.cli._group import main


@main.command("reproduce")
@click.argument("config", type=click.Path(dir_okay=False, exists=True))
@click.option(
    "-o", "--output", default=None, help="Output folder (default: the config's 'output')."
)
@click.option("--quick", is_flag=True, help="Reduced run: <= 1,000 genes, 3 folds, 1-NN only.")
@click.option("--threads", type=click.IntRange(min=1), default=None, help="Cap on BLAS threads.")
def reproduce_cmd(config: str, output: str | None, quick: bool, threads: int | None) -> None:
    """Build the KOFS lists and aggregations of CONFIG, evaluate them as book Table 6.5 does
    (and with the honest protocol), and write tables, figures and report.html."""
    from kofs.reproduce import run_experiment

    if output is not None:  # checked and taken before any work (else when writing)
        from kofs.cli._group import hold_output

        hold_output(output, inputs=[config])
    written = run_experiment(config, output=output, quick=quick, threads=threads)
    click.echo(
        f"kofs reproduce: wrote {len(written)} files ({written[-1].rsplit('/', 1)[0]}/report.html)",
        err=True,
    )
