"""``kofs sources``: what each knowledge source becomes, and its gene coverage, without ranking."""

from __future__ import annotations

import json

import click

from kofs.cli._config_options import command_config, config_options
from kofs.cli._group import main
from kofs.errors import printable

#: what `kofs sources` uses of a run's options (no aggregation, output or summary options)
SOURCES_OPTIONS = (
    "inputs", "knowledge", "method", "lists", "msfs_weights", "max_memory", "cache_dir", "no_cache",
)  # fmt: skip


@main.command("sources")
@click.argument("expression", type=click.Path(dir_okay=False, allow_dash=True))
@config_options(SOURCES_OPTIONS)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def sources_cmd(ctx: click.Context, expression: str, as_json: bool, **opts) -> None:
    """Show the internal knowledge and the lists the given sources allow, with coverage.

    Takes the input and knowledge options of `kofs rank`; converts every source but ranks
    nothing. Prints to stdout.
    """
    from kofs.pipeline.run import describe

    report = describe(command_config(ctx, opts, expression=expression))
    if as_json:
        click.echo(json.dumps(report, indent=2, sort_keys=True, default=str))
        return
    lines = [
        f"expression: {report['expression']['samples']} {report['expression']['unit']} x "
        f"{report['expression']['genes']} genes",
        *(f"  {k['kind']:<18} {k['name']:<24} {k['detail']}" for k in report["internal_knowledge"]),
        "coverage:",
        *(f"  {c['line']}" for c in report["coverage"]),
        "lists: " + ", ".join(f"{p['name']} ({p['ranker']})" for p in report["lists"]),
    ]
    for line in lines:  # file and gene names: terminal control characters escaped
        click.echo(printable(line))
