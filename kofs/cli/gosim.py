"""``kofs gosim``: GO semantic similarity between genes, written as a genes x genes TSV, or
binary (``.npz`` or ``.parquet``) for large gene lists.

The options are generated from :class:`kofs.knowledge.gosim.GosimConfig`; the command parses
and makes one library call (:func:`kofs.knowledge.gosim.run_gosim`)."""

from __future__ import annotations

import click

from kofs.cli._config_options import declared_options, typed
from kofs.cli._group import main


def _options() -> list:
    from kofs.knowledge.gosim import GosimConfig
    from kofs.options import options_of

    return options_of(GosimConfig)


@main.command("gosim")
@declared_options(_options)
@click.pass_context
def gosim_cmd(ctx: click.Context, **opts) -> None:
    """GO semantic similarity (Resnik/Lin, BMA/max/avg) between the genes of a list.

    Genes without a term in the aspect are reported on stderr and omitted (or written as NA
    with --keep-missing). kofs mode writes float32 values (7 significant digits), gosemsim mode
    float64 values rounded to 3 decimals as GOSemSim does.
    """
    from kofs.cli._progress import cli_progress
    from kofs.knowledge.gosim import GosimConfig, run_gosim

    config = GosimConfig.from_mapping(typed(ctx, opts))
    with cli_progress() as progress:
        run_gosim(config, progress=progress)
