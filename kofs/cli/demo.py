"""``kofs demo``: the whole pipeline on the bundled example data."""

from __future__ import annotations

import click

from kofs.cli._group import main
from kofs.cli.rank import run_rank
from kofs.example import example_paths


@main.command("demo")
@click.option(
    "-o", "--output", default="kofs-demo", show_default=True, help="Output folder, or - for stdout."
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--threads", type=click.IntRange(min=1), default=None)
@click.option("--top", type=click.IntRange(min=0), default=10, show_default=True)
def demo_cmd(output: str, seed: int, threads: int | None, top: int) -> None:
    """Rank the genes of the bundled ALL example (1,549 genes x 128 samples, B/T lineage).

    Equivalent to `kofs rank` on the bundled files (kofs/data/example: expression, B/T labels,
    GO BP, KEGG gene sets, STRING edges), reliability aggregation of the KOFS lists (the
    book's EM: `kofs rank ... --aggregate em`).
    """
    paths = example_paths()
    written = run_rank(
        paths["expression"],
        labels=paths["labels"],
        label_column="lineage",
        go=paths["go"],
        go_annotations=paths["go_annotations"],
        pathways=paths["pathways"],
        interactions=paths["interactions"],
        output=output,
        seed=seed,
        threads=threads,
        top=top,
    )
    if output != "-":
        click.echo(f"kofs demo: wrote {', '.join(written)}", err=True)
