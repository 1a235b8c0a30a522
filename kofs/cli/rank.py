"""``kofs rank``: rank the genes of an expression matrix, optionally with knowledge."""

from __future__ import annotations

import click

from kofs.cli._config_options import command_config, config_options
from kofs.cli._group import main
from kofs.pipeline.config import RunConfig


def execute(config: RunConfig, *, command: str = "rank", named: bool = True) -> list[str]:
    """Claim the output, run the config (one library call), write, summarise; ``named``: the
    user named the output folder (else an existing default folder is refused)."""
    from kofs.cli._group import report_written, show_warnings
    from kofs.cli._progress import cli_progress
    from kofs.cli._summary import print_summary, summary_shown
    from kofs.pipeline.run import run
    from kofs.pipeline.write import claim_result_output, write_result
    from kofs.report.fusion import describe_fusion

    # checked and taken before any work, replaced whole
    with claim_result_output(config, named=named):
        with cli_progress() as progress:
            result = run(config, progress=progress)
        written = write_result(result, command=command)
        # where the reader looks: before the summary, not after it, and the fusion's own
        # warning in plain words (the report says the same); a notice the summary prints is
        # not repeated as a warning line
        own = (result.final.diagnostics or {}).get("warning")
        notices = describe_fusion(result.final).notices
        show_warnings(
            {own: notices} if own else None,
            said=notices if summary_shown(config.output.top) else (),
        )
        print_summary(result, top=config.output.top)
    report_written(config.output.output, written)
    return written


@main.command("rank")
@click.argument("expression", type=click.Path(dir_okay=True, allow_dash=True))
@config_options()
@click.pass_context
def rank_cmd(ctx: click.Context, expression: str, **opts) -> None:
    """Rank the genes of EXPRESSION (CSV/TSV, gzip ok, - for stdin; or single-cell data: an
    AnnData .h5ad, a 10x .h5, or a 10x MatrixMarket folder) and fuse the lists.

    Writes OUTDIR/ranking.tsv (gene, rank, score, the fusion's per-gene statistics --
    posterior, lfdr, q_value, data_posterior by default -- then rank:<list> and score:<list>
    for every list, and an evidence column with knowledge), OUTDIR/weights.tsv (list weights
    with their 95% intervals, when the aggregator learns them), OUTDIR/report.html (the
    results explained, one page), OUTDIR/manifest.json (provenance) and
    OUTDIR/config.resolved.yaml (`kofs run` repeats the run with it). With knowledge sources
    (--go, --pathways, --interactions, --graph, --aux) the lists are those of the KOFS
    catalogue; `kofs sources` shows them.
    """
    from kofs.cli._group import option_given

    execute(command_config(ctx, opts, expression=expression), named=option_given("output"))
