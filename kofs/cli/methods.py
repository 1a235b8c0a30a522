"""``kofs methods``: every ranker and aggregator with direction, inputs and reference."""

from __future__ import annotations

import click

from kofs.cli._group import main


@main.command("methods")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "tsv", "markdown"]),
    default="text",
    show_default=True,
    help="Plain text table, tab-separated values, or a Markdown table.",
)
@click.option(
    "--params", "show_params", is_flag=True, help="Also list every parameter with its default."
)
def methods_cmd(fmt: str, show_params: bool) -> None:
    """List rankers and aggregators (name, kind, direction, needed inputs, reference)."""
    from kofs.cli._method_table import methods_table

    click.echo(methods_table(fmt=fmt, with_params=show_params), nl=False)
