"""``kofs fetch SOURCE``: download, cache and verify a public knowledge source.

Prints the cached file path(s) on stdout, one per line (for pipelines); messages go to stderr.
``kofs fetch list`` shows every source, its options and default URLs.
"""

from __future__ import annotations

import json
import logging

import click

from kofs.cli._config_options import declared_options, typed
from kofs.cli._group import echo, main


def _route_logs() -> None:
    """Send data_fetchers' log records through the handlers `kofs` configured."""
    src, dst = logging.getLogger("kofs"), logging.getLogger("data_fetchers")
    dst.handlers = list(src.handlers)
    dst.setLevel(src.level)
    dst.propagate = False


def _print_list(as_json: bool) -> None:
    from data_fetchers import list_sources

    rows = list_sources()
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    for r in rows:
        opts = []
        for p in r["params"]:
            opt = p["name"].upper() if p["name"] == "accession" else "--" + p["name"]
            if p["default"]:
                opt += f" [{p['default']}]"
            elif p["required"]:
                opt += " (required)"
            opts.append(opt)
        click.echo(f"{r['name']:<14} {r['description']}")
        click.echo(f"{'':<14} options: {', '.join(opts) or '-'}; checksums: {r['checksums']}")
        for u in r["urls"]:
            click.echo(f"{'':<14} {u}")


def _options() -> list:
    from data_fetchers import FetchOptions
    from kofs.options import options_of

    return options_of(FetchOptions)


@main.command("fetch")
@click.argument("source")
@click.argument("accession", required=False)
@declared_options(_options)
@click.pass_context
def fetch_cmd(ctx: click.Context, source: str, accession: str | None, **opts) -> None:
    """Download (or find in the cache) SOURCE and print its file paths.

    SOURCE is one of the names `kofs fetch list` shows (go-basic, go, goa, gene2go,
    kegg-pathways, gmt, string, biogrid, geo). Examples: `kofs fetch go-basic`,
    `kofs fetch goa --species human`, `kofs fetch gene2go --taxon 9606`,
    `kofs fetch kegg-pathways --organism hsa --kgml`, `kofs fetch gmt --url URL`,
    `kofs fetch string --species 9606 --version 12.0`, `kofs fetch biogrid --release 4.4.230`,
    `kofs fetch geo GSE2604`.
    """
    from data_fetchers import FetchOptions, fetch_source
    from kofs.options import build

    options = build(FetchOptions, typed(ctx, opts))
    if source == "list":
        _print_list(options.json)
        return
    _route_logs()
    result = fetch_source(source, accession, options)
    for p in result.paths:
        click.echo(str(p))
    echo(
        f"kofs: {source}: {len(result.downloaded)} file(s) downloaded, "
        f"{len(result.cached)} from the cache in {result.folder}"
    )
