"""``kofs fetch SOURCE``: download, cache and verify a public knowledge source.

Prints the cached file path(s) on stdout, one per line (for pipelines); messages go to stderr.
``kofs fetch list`` shows every source, its options and default URLs.
"""

from __future__ import annotations

import json
import logging

import click

from kofs.cli._group import echo, main
from kofs.cli._options import UserPath
from kofs.errors import ParameterError


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


@main.command("fetch")
@click.argument("source")
@click.argument("accession", required=False)
@click.option("--species", help="goa: EBI species name (human); string: NCBI taxon (9606).")
@click.option("--taxon", help="gene2go: keep the rows of this NCBI taxon (9606).")
@click.option("--organism", help="kegg-pathways: KEGG organism code (hsa).")
@click.option("--version", help="string: STRING version (default 12.0).")
@click.option("--release", help="go/go-basic: YYYY-MM-DD; goa: number; biogrid: 4.4.230.")
@click.option("--url", help="gmt: URL (or local path) of the GMT file.")
@click.option("--platform", help="geo: platform of a multi-platform series (GPL96).")
@click.option("--kgml", is_flag=True, help="kegg-pathways: also fetch the KGML of every pathway.")
@click.option(
    "--cache",
    type=UserPath(file_okay=False),
    default=None,
    help="Cache root [default: $KOFS_CACHE, else the user cache folder/kofs].",
)
@click.option(
    "--source-url",
    default=None,
    help="Replace the upstream base URL (mirror, local copy); a single-file source "
    "takes the file's own URL.",
)
@click.option("--offline", is_flag=True, help="Use only the cache; list what is missing.")
@click.option("--force", is_flag=True, help="Download again even when cached.")
@click.option("--sha256", default=None, help="Expected sha256 of the main file.")
@click.option("--md5", default=None, help="Expected md5 of the main file.")
@click.option(
    "--timeout",
    type=float,
    default=60.0,
    show_default=True,
    help="Seconds for connecting and for each read.",
)
@click.option("--json", "as_json", is_flag=True, help="`list`: print the sources as JSON.")
@click.pass_context
def fetch_cmd(
    ctx: click.Context,
    source: str,
    accession: str | None,
    kgml: bool,
    cache: str | None,
    source_url: str | None,
    offline: bool,
    force: bool,
    sha256: str | None,
    md5: str | None,
    timeout: float,
    as_json: bool,
    **options: str | None,
) -> None:
    """Download (or find in the cache) SOURCE and print its file paths.

    SOURCE is one of the names `kofs fetch list` shows (go-basic, go, goa, gene2go,
    kegg-pathways, gmt, string, biogrid, geo). Examples: `kofs fetch go-basic`,
    `kofs fetch goa --species human`, `kofs fetch gene2go --taxon 9606`,
    `kofs fetch kegg-pathways --organism hsa --kgml`, `kofs fetch gmt --url URL`,
    `kofs fetch string --species 9606 --version 12.0`, `kofs fetch biogrid --release 4.4.230`,
    `kofs fetch geo GSE2604`.
    """
    from data_fetchers import SOURCES, fetch

    if source == "list":
        _print_list(as_json)
        return
    _route_logs()
    params: dict[str, object] = {k: v for k, v in options.items() if v is not None}
    if kgml:
        params["kgml"] = True
    spec = SOURCES.get(source)
    if accession is not None:
        if spec is not None and spec.positional is None:
            raise ParameterError(
                f"source {source!r} takes no argument (got {accession!r}); see `kofs fetch list`"
            )
        params[spec.positional if spec is not None else "accession"] = accession
    result = fetch(
        source,
        params=params,
        cache=cache,
        source_url=source_url,
        force=force,
        offline=offline,
        sha256=sha256,
        md5=md5,
        timeout=timeout,
    )
    for p in result.paths:
        click.echo(str(p))
    echo(
        f"kofs: {source}: {len(result.downloaded)} file(s) downloaded, "
        f"{len(result.cached)} from the cache in {result.folder}"
    )
