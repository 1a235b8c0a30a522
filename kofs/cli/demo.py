"""``kofs demo``: the whole pipeline on the bundled example data."""

from __future__ import annotations

import click

from kofs.cli._group import main
from kofs.cli._options import UserPath, seed_option, threads_option


@main.command("demo")
@click.option(
    "-o",
    "--output",
    type=UserPath(allow_dash=True),
    default="kofs-demo",
    show_default=True,
    help="Output folder, or - for stdout (an existing kofs-demo is replaced only when named).",
)
@seed_option()
@threads_option()
@click.option(
    "--top",
    type=click.IntRange(min=0),
    default=10,
    show_default=True,
    help="Genes shown in the terminal summary.",
)
def demo_cmd(output: str, seed: int, threads: int | None, top: int) -> None:
    """Rank the genes of the bundled ALL example (1,549 genes x 128 samples, B/T lineage).

    Equivalent to `kofs rank` on the bundled files (kofs/data/example: expression, B/T labels,
    GO BP, KEGG gene sets, STRING edges), the default aggregation of the KOFS lists
    (posterior; the book's EM: `kofs rank ... --aggregate em`).
    """
    from pathlib import Path

    from kofs.cli._group import option_given
    from kofs.cli.rank import execute
    from kofs.datasets.example import example_config
    from kofs.pipeline.config import RunConfig

    options = {**example_config(), "output": output, "seed": seed, "threads": threads, "top": top}
    if output == "-":  # no report.html: its title is no option the user gave (no warning)
        del options["title"]
    config = RunConfig.from_mapping(options, base=Path.cwd())
    execute(config, named=option_given("output"))
