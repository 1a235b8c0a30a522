"""``kofs rank``: rank the genes of an expression matrix, optionally with knowledge."""

from __future__ import annotations

from pathlib import Path

import click

from kofs.cli._options import parse_flat_params, parse_params, split_names
from kofs.cli._summary import print_summary
from kofs.config import dump_config, resolve_paths
from kofs.registry import AGGREGATORS

GENES_IN = click.Choice(["rows", "columns"])

# options whose values are file paths (made absolute in configs and resolved configs)
PATH_KEYS = ("expression", "labels", "relevant_genes", "output")


def rank_options(func):
    """Every option of ``kofs rank`` (also the keys of a ``kofs run`` config)."""
    opts = [
        click.option("--labels", type=click.Path(dir_okay=False, allow_dash=False), help="Sample labels (CSV/TSV: sample id, label)."),
        click.option("--label-column", default=None, help="Label column of --labels (default: second column)."),
        click.option("--sample-column", default=None, help="Sample-id column of --labels (default: first column)."),
        click.option("--missing-labels", type=click.Choice(["error", "drop"]), default="error", show_default=True, help="Samples of the matrix without a label: fail, or drop them."),
        click.option("--rankers", default=None, help="Comma-separated ranker names (default: every ranker the inputs allow; see `kofs methods`)."),
        click.option("--param", "params", multiple=True, metavar="NAME.KEY=VALUE", help="A ranker or list parameter, e.g. laplacian.k=10 (repeatable)."),
        click.option("--aggregate", default="em", show_default=True, type=click.Choice(AGGREGATORS.names()), help="Rank aggregation method."),
        click.option("--aggregate-param", "aggregate_params", multiple=True, metavar="KEY=VALUE", help="Aggregator parameter, e.g. tol=1e-12 (repeatable)."),
        click.option("--relevant-genes", type=click.Path(dir_okay=False), default=None, help="Known relevant genes: supervised EM (KOFS_Prob-SUP)."),
        click.option("-o", "--output", default="kofs-out", show_default=True, help="Output folder, or - to write ranking.tsv to stdout."),
        click.option("--seed", type=int, default=0, show_default=True, help="Seed of every random choice."),
        click.option("--threads", type=click.IntRange(min=1), default=None, help="Cap on BLAS/worker threads (default: all cores)."),
        click.option("--genes-in", type=GENES_IN, default=None, help="Genes are the rows or the columns of EXPRESSION (default: guessed)."),
        click.option("--gene-column", default=None, help="Column holding the gene ids (default: the first id column)."),
        click.option("--duplicate-genes", type=click.Choice(["error", "first", "mean", "max-variance"]), default="error", show_default=True, help="What to do with repeated gene ids."),
        click.option("--missing-values", type=click.Choice(["error", "drop-gene", "impute-mean"]), default="error", show_default=True, help="What to do with empty/NA cells."),
        click.option("--top", type=click.IntRange(min=0), default=10, show_default=True, help="Genes shown in the terminal summary."),
    ]
    for opt in reversed(opts):
        func = opt(func)
    return func


def run_rank(expression_path: str, **opts) -> list[str]:
    """Read inputs, run the pipeline, write outputs; returns written paths."""
    from kofs.io.expression import read_expression
    from kofs.io.genes import read_gene_list
    from kofs.io.labels import align_labels, read_labels
    from kofs.io.output import check_output_dir
    from kofs.io.run_output import manifest, write_run
    from kofs.pipeline import rank

    out = opts["output"]
    inputs = {"expression": expression_path, "labels": opts.get("labels"), "relevant_genes": opts.get("relevant_genes")}
    if out != "-":
        check_output_dir(out, inputs=[p for p in inputs.values() if p and p != "-"])
    categories = None
    if opts.get("labels"):
        categories = read_labels(opts["labels"], sample_column=opts.get("sample_column"), label_column=opts.get("label_column"))
    expr = read_expression(
        expression_path,
        genes_in=opts.get("genes_in"),
        gene_column=opts.get("gene_column"),
        sample_ids=None if categories is None else categories.samples,
        duplicates=opts.get("duplicate_genes", "error"),
        missing=opts.get("missing_values", "error"),
    )
    if categories is not None:
        expr, categories = align_labels(expr, categories, missing=opts.get("missing_labels", "error"))
    relevant = read_gene_list(opts["relevant_genes"]) if opts.get("relevant_genes") else None
    result = rank(
        expr,
        labels=categories,
        rankers=split_names(opts.get("rankers")),
        aggregate=opts.get("aggregate", "em"),
        relevant_genes=relevant,
        params=parse_params(opts.get("params") or ()),
        aggregate_params=parse_flat_params(opts.get("aggregate_params") or (), option="--aggregate-param"),
        seed=opts.get("seed", 0),
        threads=opts.get("threads"),
    )
    resolved = resolve_paths({"expression": expression_path, **opts}, PATH_KEYS, base=Path.cwd())
    written = write_run(
        result,
        out,
        manifest_data=manifest(result, command="rank", inputs=inputs, extra={"config": resolved}),
        extra_files={"config.resolved.yaml": dump_config(resolved)},
    )
    print_summary(result, top=opts.get("top", 10), outputs=written)
    return written


@click.command("rank")
@click.argument("expression", type=click.Path(dir_okay=False, allow_dash=True))
@rank_options
def rank_cmd(expression: str, **opts) -> None:
    """Rank the genes of EXPRESSION (CSV/TSV, gzip ok, - for stdin) and fuse the lists.

    Writes OUTDIR/ranking.tsv (gene, rank, score, then rank:<list> and score:<list> for
    every list), OUTDIR/weights.tsv (EM source weights) and OUTDIR/manifest.json.
    """
    run_rank(expression, **opts)


def register(group: click.Group) -> None:
    group.add_command(rank_cmd)


from kofs.cli._group import main  # noqa: E402

register(main)
