"""``kofs sources``: what each knowledge source becomes, and its gene coverage, without ranking."""

from __future__ import annotations

import json

import click

from kofs.cli._group import main
from kofs.cli.rank import rank_options, read_sources_from_options


@main.command("sources")
@click.argument("expression", type=click.Path(dir_okay=False, allow_dash=True))
@rank_options
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def sources_cmd(expression: str, as_json: bool, **opts) -> None:
    """Show the internal knowledge and the lists the given sources allow, with coverage.

    Takes the same options as `kofs rank`; converts every source but ranks nothing.
    Prints to stdout.
    """
    from kofs.io.expression import read_expression
    from kofs.io.genes import read_gene_list
    from kofs.io.labels import align_labels, read_labels
    from kofs.sources import describe_sources

    categories = None
    if opts.get("labels"):
        categories = read_labels(
            opts["labels"],
            sample_column=opts.get("sample_column"),
            label_column=opts.get("label_column"),
        )
    expr = read_expression(
        expression,
        genes_in=opts.get("genes_in"),
        gene_column=opts.get("gene_column"),
        sample_ids=None if categories is None else categories.samples,
        duplicates=opts.get("duplicate_genes", "error"),
        missing=opts.get("missing_values", "error"),
        decimal=opts.get("decimal") or ".",
    )
    if categories is not None:
        expr, categories = align_labels(
            expr,
            categories,
            missing=opts.get("missing_labels", "error"),
            labels_path=opts["labels"],
        )
    relevant = read_gene_list(opts["relevant_genes"]) if opts.get("relevant_genes") else None
    report = describe_sources(
        expr,
        read_sources_from_options(opts),
        labels=categories,
        relevant_genes=relevant,
        method=opts.get("method", "kofs"),
        max_memory=opts.get("max_memory"),
    )
    if as_json:
        click.echo(json.dumps(report, indent=2, sort_keys=True, default=str))
        return
    click.echo(
        f"expression: {report['expression']['samples']} samples x {report['expression']['genes']} genes"
    )
    for k in report["internal_knowledge"]:
        click.echo(f"  {k['kind']:<18} {k['name']:<24} {k['detail']}")
    click.echo("coverage:")
    for c in report["coverage"]:
        click.echo(f"  {c['line']}")
    click.echo("lists: " + ", ".join(f"{p['name']} ({p['ranker']})" for p in report["lists"]))
