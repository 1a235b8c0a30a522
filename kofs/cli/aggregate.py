"""``kofs aggregate LIST...``: fuse ranked gene lists that users bring (no expression matrix).

The options are generated from :class:`kofs.pipeline.user_lists_config.AggregateListsConfig`; the
command parses, makes one library call, writes the run files and summarises.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from kofs.cli._config_options import config_error, declared_options, typed
from kofs.cli._group import LazyParamsCommand
from kofs.cli._summary import print_summary, summary_shown

if TYPE_CHECKING:
    from kofs.io.gene_lists import ListSpec
    from kofs.pipeline.user_lists_config import AggregateListsConfig


def options() -> list:
    """The declared options of ``kofs aggregate`` (imported on use: ``kofs --version`` needs
    no numpy)."""
    from kofs.options import options_of
    from kofs.pipeline.user_lists_config import AggregateListsConfig

    return options_of(AggregateListsConfig)


def execute(specs: list[ListSpec], config: AggregateListsConfig, *, named: bool = True):
    """Fuse the lists (one library call), write the run files, summarise; returns the paths.
    ``named``: the user named the output folder (else an existing default one is refused)."""
    from kofs.cli._group import echo, hold_output, report_written, show_warnings
    from kofs.pipeline.config import dump_resolved
    from kofs.pipeline.user_lists_config import resolved_aggregate_config, run_aggregate_config
    from kofs.pipeline.write import aggregate_manifest, write_run
    from kofs.report.fusion import describe_fusion

    out = config.output
    universe_file = config.universe if config.universe and Path(config.universe).is_file() else None
    files = [s.path for s in specs if s.path != "-"]
    if out != "-":
        others = [p for p in (config.relevant_genes, universe_file) if p]
        hold_output(out, inputs=[*files, *others], named=named)  # before any work
    result = run_aggregate_config(specs, config)
    resolved = resolved_aggregate_config(specs, config, base=Path.cwd())
    inputs = {
        "lists": files or None,
        "relevant_genes": config.relevant_genes,
        "universe": universe_file,
    }
    manifest = aggregate_manifest(result, inputs=inputs, extra={"config": resolved})
    extra_files = {"config.resolved.yaml": dump_resolved(resolved)}
    if out != "-" and not config.no_report:
        from kofs.report.aggregate import aggregate_report_html

        extra_files["report.html"] = aggregate_report_html(result, manifest=manifest)
    written = write_run(result, out, manifest_data=manifest, extra_files=extra_files)
    for s in result.sources:
        echo(f"kofs: list {s.describe()}")
    shown = summary_shown(config.top)
    if not shown:  # else the summary ends with them
        for report in result.coverage:
            echo(f"kofs: coverage: {report.line()}")
    # the warnings before the summary, and a notice the summary prints (a list left out as
    # reversed or as one source with another, ...) not repeated as a warning line
    show_warnings(said=describe_fusion(result.final).notices if shown else ())
    print_summary(result, top=config.top)
    report_written(out, written)
    return written


def run_config(config_path: str, overrides: dict[str, Any]) -> list[str]:
    """``kofs run CONFIG`` for a config with ``command: aggregate``: options typed on the
    command line that ``kofs aggregate`` has (``--output``, ``--top``, ...) override the file;
    any other is an error."""
    from kofs.errors import ParameterError
    from kofs.pipeline.user_lists_config import read_aggregate_config

    known = {o.name for o in options()}
    unknown = sorted(k for k in overrides if k not in known)
    if unknown:
        raise ParameterError(
            "an aggregate config cannot be overridden with "
            + ", ".join("--" + k.replace("_", "-") for k in unknown),
            path=config_path,
        )
    from kofs.io._fsops import absolute_path

    values = dict(overrides)
    for key in ("output", "relevant_genes"):
        if values.get(key) not in (None, "-"):
            values[key] = absolute_path(values[key], Path.cwd())
    specs, config = read_aggregate_config(config_path, overrides=values)
    from kofs.pipeline.yaml_files import load_config

    named = "output" in values or load_config(config_path).get("output") is not None
    try:
        return execute(specs, config, named=named)
    except ParameterError as exc:  # a value of the config (universe, top_k, ...): name it
        raise config_error(exc, config_path) from None


@click.command("aggregate", cls=LazyParamsCommand)
@click.argument("lists", nargs=-1, required=True, metavar="LIST...")
@declared_options(options)
@click.pass_context
def aggregate_cmd(ctx: click.Context, lists: tuple[str, ...], **opts) -> None:
    """Fuse ranked gene lists (no expression matrix needed).

    Each LIST is [NAME=]FILE[:COLUMN[:asc|desc|abs]]: one gene per line in rank order (a
    top-k list); a table with a gene column and the named score column (a table with one raw
    p-value column is ranked by it, ascending, unnamed; a column of z-scores, z or zscore, is
    read as two-sided p-values signed by the z, :desc or :asc one-sided); a limma topTable,
    DESeq2 results, edgeR topTags, Seurat FindMarkers, scanpy rank_genes_groups_df or sleuth
    table (ranked by p-value, ascending; signed by its fold change or statistic) or a MAGeCK gene
    summary (neg|rank; --mageck-side pos for positive selection), recognised by their
    headers; a GSEA .rnk file; or a .gmt file (each gene set an unranked list). Lists may
    differ in length and genes: posterior observes a gene a top-k list or gene set lacks as
    below it, and a gene a scored table lacks as not tested (no information; --top-k names
    tables cut to their top, and a table of p-values that all stop at 0.5 or below is read
    as cut unless named with --tested); RRA and Stuart give it the normalised rank 1, as R
    RobustRankAggreg; the other methods place it in the list's bottom block.

    Writes OUTDIR/ranking.tsv (gene, rank, score, the method's statistics -- posterior, lfdr,
    q_value, data_posterior for posterior, and replicated where DE tables' changed genes
    change in some tables alone; p_value, q_value for RRA; stuart_q for Stuart --
    then rank:<list> and score:<list>, NA where a list lacks the gene),
    OUTDIR/weights.tsv (weighted methods), OUTDIR/report.html (the fusion on one offline page:
    top genes with their q-values, the weights in plain words, agreement, how each list was
    read; --no-report: none), OUTDIR/manifest.json and OUTDIR/config.resolved.yaml (`kofs run`
    repeats the run with it).
    """
    from kofs.io.gene_lists import parse_list_spec
    from kofs.pipeline.user_lists_config import AggregateListsConfig

    specs = [parse_list_spec(text) for text in lists]
    given = typed(ctx, opts)
    config = AggregateListsConfig.from_mapping(given)
    execute(specs, config, named="output" in given)


def register(group: click.Group) -> None:
    group.add_command(aggregate_cmd)


from kofs.cli._group import main  # noqa: E402

register(main)
