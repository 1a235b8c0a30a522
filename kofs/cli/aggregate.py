"""``kofs aggregate LIST...``: fuse ranked gene lists that users bring (no expression matrix)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from kofs.cli._summary import print_summary
from kofs.config import check_keys, load_config
from kofs.errors import ParameterError
from kofs.io.gene_lists import DIRECTIONS, MAGECK_SIDES, ListSpec, parse_list_spec
from kofs.options import Option
from kofs.registry import AGGREGATORS

#: Keys of an aggregate config (``kofs run`` with ``command: aggregate``).
CONFIG_KEYS = (
    "command",
    "lists",
    "output",
    "method",
    "aggregate_param",
    "relevant_genes",
    "universe",
    "gene_column",
    "score_column",
    "direction",
    "mageck_side",
    "top",
)


#: ``--aggregate-param`` items (or a YAML mapping) parsed as ``kofs rank`` parses them
_AGGREGATE_PARAM = Option("aggregate_param", "flat_params", {}, metavar="KEY=VALUE")


def aggregate_options(func):
    """The options of ``kofs aggregate`` (also the keys of an aggregate config)."""
    opts = [
        click.option(
            "-o",
            "--output",
            default="kofs-out",
            show_default=True,
            help="Output folder, or - to write ranking.tsv to stdout.",
        ),
        click.option(
            "--method",
            default="rra",
            show_default=True,
            type=click.Choice(AGGREGATORS.names()),
            help="Rank aggregation method (see `kofs methods`).",
        ),
        click.option(
            "--aggregate-param",
            "aggregate_params",
            multiple=True,
            metavar="KEY=VALUE",
            help="Aggregator parameter, e.g. exact=true for RRA (repeatable).",
        ),
        click.option(
            "--relevant-genes",
            type=click.Path(dir_okay=False),
            default=None,
            help="Known relevant genes: supervised EM (--method em).",
        ),
        click.option(
            "--universe",
            default=None,
            metavar="N|FILE",
            help="Gene universe: its size N, or a file of its genes (default: the genes of the lists).",
        ),
        click.option(
            "--gene-column",
            default=None,
            help="Gene column of table lists (default: a symbol/id column, else the first).",
        ),
        click.option(
            "--score-column",
            default=None,
            help="Score column of table lists whose spec names none (FILE:COLUMN:DIRECTION).",
        ),
        click.option(
            "--direction",
            type=click.Choice(DIRECTIONS),
            default=None,
            help="Direction of --score-column: asc (smallest first), desc, abs (largest |value|).",
        ),
        click.option(
            "--mageck-side",
            type=click.Choice(MAGECK_SIDES),
            default="neg",
            show_default=True,
            help="MAGeCK gene summaries: negative (depletion) or positive selection ranks.",
        ),
        click.option(
            "--top",
            type=click.IntRange(min=0),
            default=10,
            show_default=True,
            help="Genes shown in the terminal summary.",
        ),
    ]
    for opt in reversed(opts):
        func = opt(func)
    return func


def _dump(resolved: dict[str, Any]) -> str:
    """YAML text of an aggregate config (dash keys, sorted)."""
    import yaml

    plain = {k.replace("_", "-"): v for k, v in sorted(resolved.items())}
    return "# kofs resolved configuration: `kofs run THIS_FILE` repeats the run\n" + yaml.safe_dump(
        plain, sort_keys=True, default_flow_style=False, allow_unicode=True
    )


def _spec_config(spec: ListSpec) -> dict[str, Any]:
    out: dict[str, Any] = {"file": spec.path if spec.path == "-" else os.path.abspath(spec.path)}
    for key in ("name", "column", "direction"):
        if getattr(spec, key) is not None:
            out[key] = getattr(spec, key)
    return out


def _universe_value(value: str | int | None) -> str | int | None:
    if value is None or isinstance(value, int):
        return value
    text = str(value)
    if text.strip().isdigit() and not os.path.exists(text):
        return int(text)
    return os.path.abspath(text)


def run_aggregate(specs: list[ListSpec], *, quiet: bool = False, **opts) -> list[str]:
    """Read the lists, fuse them (one library call), write the outputs; returns the paths."""
    from kofs.io.output import check_output_dir
    from kofs.list_aggregation import aggregate_lists
    from kofs.outputs import aggregate_manifest, write_run

    out = opts.get("output", "kofs-out")
    universe = _universe_value(opts.get("universe"))
    files = [s.path for s in specs if s.path != "-"]
    others = [opts.get("relevant_genes"), universe if isinstance(universe, str) else None]
    if out != "-":
        check_output_dir(out, inputs=[*files, *(p for p in others if p)])
    params = _AGGREGATE_PARAM.parse(opts.get("aggregate_params") or []) or {}
    result = aggregate_lists(
        specs,
        method=opts.get("method", "rra"),
        params=params,
        universe=universe,
        relevant_genes=opts.get("relevant_genes"),
        gene_column=opts.get("gene_column"),
        column=opts.get("score_column"),
        direction=opts.get("direction"),
        mageck_side=opts.get("mageck_side", "neg"),
    )
    resolved = {
        "command": "aggregate",
        "lists": [_spec_config(s) for s in specs],
        "output": out if out == "-" else os.path.abspath(out),
        "method": opts.get("method", "rra"),
        "aggregate_param": dict(params),
        "relevant_genes": None
        if opts.get("relevant_genes") is None
        else os.path.abspath(opts["relevant_genes"]),
        "universe": universe,
        "gene_column": opts.get("gene_column"),
        "score_column": opts.get("score_column"),
        "direction": opts.get("direction"),
        "mageck_side": opts.get("mageck_side", "neg"),
        "top": opts.get("top", 10),
    }
    inputs = {
        "lists": files or None,
        "relevant_genes": opts.get("relevant_genes"),
        "universe": universe if isinstance(universe, str) else None,
    }
    written = write_run(
        result,
        out,
        manifest_data=aggregate_manifest(result, inputs=inputs, extra={"config": resolved}),
        extra_files={"config.resolved.yaml": _dump(resolved)},
    )
    if not quiet:
        for s in result.sources:
            click.echo(f"kofs: list {s.describe()}", err=True)
        for report in result.coverage:
            click.echo(f"kofs: coverage: {report.line()}", err=True)
        if result.final.weights is not None:
            click.echo("kofs: weights.tsv holds point estimates only (no intervals yet)", err=True)
    print_summary(result, top=opts.get("top", 10), outputs=written)
    return written


def run_aggregate_config(config_path: str, overrides: dict[str, Any], *, quiet: bool) -> list[str]:
    """``kofs run CONFIG`` for a config with ``command: aggregate`` (only ``--output`` may be
    overridden on the command line)."""
    cfg = load_config(config_path)
    check_keys(cfg, CONFIG_KEYS, path=config_path)
    unknown = sorted(k for k in overrides if k != "output")
    if unknown:
        raise ParameterError(
            "an aggregate config can only be overridden with --output, not "
            + ", ".join("--" + k.replace("_", "-") for k in unknown),
            path=config_path,
        )
    base = Path(config_path).resolve().parent
    lists = cfg.pop("lists", None)
    if not isinstance(lists, list) or not lists:
        raise ParameterError("config key 'lists' must be a list of files", path=config_path)
    specs = [_config_spec(item, base, config_path) for item in lists]
    opts: dict[str, Any] = {k: v for k, v in cfg.items() if k not in ("command", "lists")}
    if "aggregate_param" in opts:
        opts["aggregate_params"] = opts.pop("aggregate_param")
    for key in ("relevant_genes", "output"):
        if isinstance(opts.get(key), str) and opts[key] != "-":
            opts[key] = str((base / opts[key]).resolve())
    if isinstance(opts.get("universe"), str) and not opts["universe"].strip().isdigit():
        opts["universe"] = str((base / opts["universe"]).resolve())
    method = opts.get("method", "rra")
    if method not in AGGREGATORS:
        AGGREGATORS.get(str(method))  # raises the did-you-mean error
    opts.update(overrides)
    return run_aggregate(specs, quiet=quiet, **opts)


def _config_spec(item: Any, base: Path, config_path: str) -> ListSpec:
    if isinstance(item, str):
        spec = parse_list_spec(item, base=base)
        path = spec.path if spec.path == "-" else str(Path(spec.path).resolve())
        return ListSpec(path, spec.name, spec.column, spec.direction)
    if isinstance(item, dict) and isinstance(item.get("file"), str):
        extra = set(item) - {"file", "name", "column", "direction"}
        if extra:
            raise ParameterError(
                f"config list entry has unknown keys {sorted(extra)}; use file, name, column, "
                "direction",
                path=config_path,
            )
        direction = item.get("direction")
        if direction is not None and direction not in DIRECTIONS:
            raise ParameterError(
                f"config list entry direction must be asc, desc or abs, got {direction!r}",
                path=config_path,
            )
        path = item["file"] if item["file"] == "-" else str((base / item["file"]).resolve())
        return ListSpec(path, item.get("name"), item.get("column"), direction)
    raise ParameterError(
        f"config list entry {item!r}: expected FILE[:COLUMN[:DIRECTION]] or a mapping with 'file'",
        path=config_path,
    )


@click.command("aggregate")
@click.argument("lists", nargs=-1, required=True, metavar="LIST...")
@aggregate_options
@click.pass_context
def aggregate_cmd(ctx: click.Context, lists: tuple[str, ...], **opts) -> None:
    """Fuse ranked gene lists (no expression matrix needed).

    Each LIST is [NAME=]FILE[:COLUMN[:asc|desc|abs]]: one gene per line in rank order (a
    top-k list); a table with a gene column and the named score column; a limma topTable,
    DESeq2 results or edgeR topTags table (ranked by p-value, ascending) or a MAGeCK gene
    summary (neg|rank; --mageck-side pos for positive selection), recognised by their
    headers; a GSEA .rnk file; or a .gmt file (each gene set an unranked list). Lists may
    differ in length and genes: RRA and Stuart give a gene a list lacks the normalised rank 1,
    as R RobustRankAggreg; the other methods place it in the list's bottom block.

    Writes OUTDIR/ranking.tsv (gene, rank, score, p_value and q_value for RRA or stuart_q
    for Stuart, then rank:<list> and score:<list>, NA where a list lacks the gene),
    OUTDIR/weights.tsv (weighted methods), OUTDIR/manifest.json and
    OUTDIR/config.resolved.yaml (`kofs run` repeats the run with it).
    """
    specs = [parse_list_spec(text) for text in lists]
    quiet = bool((ctx.obj or {}).get("quiet"))
    run_aggregate(specs, quiet=quiet, **opts)


def register(group: click.Group) -> None:
    group.add_command(aggregate_cmd)


from kofs.cli._group import main  # noqa: E402

register(main)
