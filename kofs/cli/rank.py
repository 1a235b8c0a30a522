"""``kofs rank``: rank the genes of an expression matrix, optionally with knowledge."""

from __future__ import annotations

from pathlib import Path

import click

from kofs.cli._options import parse_flat_params, parse_params, split_names
from kofs.cli._summary import print_summary
from kofs.config import dump_config, resolve_paths
from kofs.errors import ParameterError
from kofs.registry import AGGREGATORS

GENES_IN = click.Choice(["rows", "columns"])

# options whose values are file paths (made absolute in configs and resolved configs)
PATH_KEYS = (
    "expression",
    "labels",
    "relevant_genes",
    "output",
    "go",
    "go_annotations",
    "pathways",
    "kegg_names",
    "interactions",
    "string_aliases",
    "aux",
    "id_map",
    "term_relevance",
)
FILE = click.Path(dir_okay=False)


def rank_options(func):
    """Every option of ``kofs rank`` (also the keys of a ``kofs run`` config)."""
    opts = [
        click.option(
            "--labels",
            type=click.Path(dir_okay=False, allow_dash=False),
            help="Sample labels (CSV/TSV: sample id, label).",
        ),
        click.option(
            "--label-column",
            default=None,
            help="Label column of --labels (default: second column).",
        ),
        click.option(
            "--sample-column",
            default=None,
            help="Sample-id column of --labels (default: first column).",
        ),
        click.option(
            "--missing-labels",
            type=click.Choice(["error", "drop"]),
            default="error",
            show_default=True,
            help="Samples of the matrix without a label: fail, or drop them.",
        ),
        click.option(
            "--rankers",
            default=None,
            help="Comma-separated ranker names (default: every ranker the inputs allow; see `kofs methods`).",
        ),
        click.option(
            "--param",
            "params",
            multiple=True,
            metavar="NAME.KEY=VALUE",
            help="A ranker or list parameter, e.g. laplacian.k=10 (repeatable).",
        ),
        click.option(
            "--aggregate",
            default="em",
            show_default=True,
            type=click.Choice(AGGREGATORS.names()),
            help="Rank aggregation method.",
        ),
        click.option(
            "--aggregate-param",
            "aggregate_params",
            multiple=True,
            metavar="KEY=VALUE",
            help="Aggregator parameter, e.g. tol=1e-12 (repeatable).",
        ),
        click.option(
            "--relevant-genes",
            type=click.Path(dir_okay=False),
            default=None,
            help="Known relevant genes: supervised EM (KOFS_Prob-SUP).",
        ),
        click.option(
            "-o",
            "--output",
            default="kofs-out",
            show_default=True,
            help="Output folder, or - to write ranking.tsv to stdout.",
        ),
        click.option(
            "--seed", type=int, default=0, show_default=True, help="Seed of every random choice."
        ),
        click.option(
            "--threads",
            type=click.IntRange(min=1),
            default=None,
            help="Cap on BLAS/worker threads (default: all cores).",
        ),
        click.option(
            "--max-memory",
            default=None,
            metavar="SIZE",
            help="Memory limit of the big steps, e.g. 4G or 512M (default: 80% of RAM); a step estimated above it fails early.",
        ),
        click.option(
            "--genes-in",
            type=GENES_IN,
            default=None,
            help="Genes are the rows or the columns of EXPRESSION (default: guessed).",
        ),
        click.option(
            "--gene-column",
            default=None,
            help="Column holding the gene ids (default: the first id column).",
        ),
        click.option(
            "--duplicate-genes",
            type=click.Choice(["error", "first", "mean", "max-variance"]),
            default="error",
            show_default=True,
            help="What to do with repeated gene ids.",
        ),
        click.option(
            "--missing-values",
            type=click.Choice(["error", "drop-gene", "impute-mean"]),
            default="error",
            show_default=True,
            help="What to do with empty/NA cells.",
        ),
        click.option(
            "--top",
            type=click.IntRange(min=0),
            default=10,
            show_default=True,
            help="Genes shown in the terminal summary.",
        ),
        # knowledge sources (issue 3)
        click.option(
            "--go",
            type=FILE,
            default=None,
            help="Gene Ontology OBO file (go-basic.obo or go.obo, gzip ok).",
        ),
        click.option(
            "--go-annotations",
            type=FILE,
            default=None,
            help="GO annotations: GAF 2.x, NCBI gene2go, or TSV (gene, GO id[, evidence[, aspect]]).",
        ),
        click.option(
            "--go-evidence",
            default=None,
            help="Keep only these evidence codes (comma-separated, e.g. EXP,IDA,IMP).",
        ),
        click.option(
            "--go-exclude-evidence", default=None, help="Drop these evidence codes (e.g. IEA)."
        ),
        click.option(
            "--go-taxon", default=None, help="NCBI taxon filter for gene2go/GAF (e.g. 9606)."
        ),
        click.option(
            "--go-aspect",
            type=click.Choice(["BP", "MF", "CC"]),
            default="BP",
            show_default=True,
            help="GO aspect used.",
        ),
        click.option(
            "--go-measure",
            type=click.Choice(["lin", "resnik"]),
            default="lin",
            show_default=True,
            help="GO term similarity.",
        ),
        click.option(
            "--go-combine",
            type=click.Choice(["bma", "max", "avg"]),
            default="bma",
            show_default=True,
            help="Gene-level combination of term similarities.",
        ),
        click.option(
            "--go-top-k",
            type=click.IntRange(min=1),
            default=10,
            show_default=True,
            help="Neighbours per gene in the GO similarity graph.",
        ),
        click.option(
            "--go-term-ids",
            default=None,
            help="GO terms whose genes define GO-FILT (Leukemia-FILT style), comma-separated.",
        ),
        click.option(
            "--pathways",
            type=click.Path(),
            default=None,
            help="Pathways/gene sets: GMT, KEGG link/TSV, or KGML file/folder.",
        ),
        click.option(
            "--pathway-format",
            type=click.Choice(
                ["auto", "gmt", "kegg_link", "kegg_table", "kegg_gene2pathway", "kgml"]
            ),
            default="auto",
            show_default=True,
        ),
        click.option(
            "--pathway-ids",
            default=None,
            help="Pathways defining Pathway-FILT (ids or names, comma-separated; default all).",
        ),
        click.option(
            "--kegg-names",
            type=FILE,
            default=None,
            help="KEGG pathway names (REST list/pathway output) for --pathway-format kegg_link.",
        ),
        click.option(
            "--pathway-min-size",
            type=click.IntRange(min=1),
            default=5,
            show_default=True,
            help="Smallest gene set kept (genes found in the matrix).",
        ),
        click.option(
            "--pathway-max-size",
            type=click.IntRange(min=1),
            default=500,
            show_default=True,
            help="Largest gene set kept.",
        ),
        click.option(
            "--interactions",
            type=FILE,
            default=None,
            help="Gene interactions: edge list, STRING links, or BioGRID TAB2/TAB3.",
        ),
        click.option(
            "--interactions-format",
            type=click.Choice(["auto", "edgelist", "paired", "string", "biogrid"]),
            default="auto",
            show_default=True,
        ),
        click.option(
            "--string-min-score",
            type=float,
            default=400,
            show_default=True,
            help="STRING combined_score threshold (0-1000).",
        ),
        click.option(
            "--string-aliases",
            type=FILE,
            default=None,
            help="STRING protein.aliases/info file (ENSP -> gene).",
        ),
        click.option("--biogrid-taxon", default=None, help="BioGRID organism (NCBI taxon id)."),
        click.option(
            "--biogrid-system-type",
            type=click.Choice(["physical", "genetic", "all"]),
            default="physical",
            show_default=True,
            help="BioGRID experimental system type kept.",
        ),
        click.option(
            "--interaction-min-weight",
            type=float,
            default=0.0,
            show_default=True,
            help="Drop interactions lighter than this.",
        ),
        click.option(
            "--undirected",
            is_flag=True,
            help="Treat directed interactions (KGML, OmniPath) as undirected.",
        ),
        click.option(
            "--aux",
            type=FILE,
            multiple=True,
            help="Auxiliary data on the same samples (e.g. miRNA matrix); repeatable.",
        ),
        click.option(
            "--id-map",
            type=FILE,
            default=None,
            help="Two-column table mapping source gene ids to the matrix's ids.",
        ),
        click.option(
            "--term-relevance",
            type=FILE,
            default=None,
            help="Term relevance table (term, value) for the voting lists.",
        ),
        click.option(
            "--lists",
            default=None,
            help="Knowledge lists to build (comma-separated; default: all the inputs allow; see `kofs sources`).",
        ),
        click.option(
            "--method",
            type=click.Choice(["kofs", "msfs"]),
            default="kofs",
            show_default=True,
            help="kofs: rank per source and aggregate; msfs: SPEC on combined sample similarities.",
        ),
        click.option(
            "--msfs-weights",
            default=None,
            help="MSFS similarity weights, comma-separated (default equal).",
        ),
    ]
    for opt in reversed(opts):
        func = opt(func)
    return func


def _floats(value: str | None, option: str) -> list[float] | None:
    names = split_names(value)
    if names is None:
        return None
    try:
        return [float(v) for v in names]
    except ValueError:
        raise ParameterError(f"{option} {value!r}: expected comma-separated numbers") from None


def read_sources_from_options(opts: dict):
    """The knowledge sources named by the options (a KnowledgeSources)."""
    from kofs.sources import read_sources

    return read_sources(
        go=opts.get("go"),
        go_annotations=opts.get("go_annotations"),
        go_evidence=opts.get("go_evidence"),
        go_exclude_evidence=opts.get("go_exclude_evidence"),
        go_taxon=opts.get("go_taxon"),
        go_settings={
            "aspect": opts.get("go_aspect", "BP"),
            "measure": opts.get("go_measure", "lin"),
            "combine": opts.get("go_combine", "bma"),
            "top_k": opts.get("go_top_k", 10),
        },
        pathways=opts.get("pathways"),
        pathway_format=opts.get("pathway_format", "auto"),
        pathway_ids=split_names(opts.get("pathway_ids")),
        kegg_names=opts.get("kegg_names"),
        pathway_sizes=(opts.get("pathway_min_size", 5), opts.get("pathway_max_size", 500)),
        go_term_ids=split_names(opts.get("go_term_ids")),
        interactions=opts.get("interactions"),
        interactions_format=opts.get("interactions_format", "auto"),
        string_min_score=opts.get("string_min_score", 400),
        string_aliases=opts.get("string_aliases"),
        biogrid_taxon=opts.get("biogrid_taxon"),
        biogrid_system_type=opts.get("biogrid_system_type", "physical"),
        interaction_min_weight=opts.get("interaction_min_weight", 0.0),
        undirected=bool(opts.get("undirected", False)),
        aux=list(opts.get("aux") or ()),
        id_map=opts.get("id_map"),
        term_relevance=opts.get("term_relevance"),
    )


def _inputs(expression_path: str, opts: dict) -> dict:
    """Input files of a run by role (None when not given; ``aux`` a list)."""
    inputs = {
        "expression": expression_path,
        **{k: opts.get(k) for k in PATH_KEYS if k not in ("expression", "output")},
    }
    inputs["aux"] = list(opts.get("aux") or ()) or None
    return inputs


def run_rank(expression_path: str, **opts) -> list[str]:
    """Read inputs, run the pipeline, write outputs; returns written paths.

    The output folder is checked and claimed before any work (a second run into it fails at
    once) and replaced whole at the end (kofs.io.output_folder).
    """
    from kofs.io.output_folder import claim_output

    out = opts["output"]
    if out == "-":
        return _run_rank(expression_path, **opts)
    files = [
        p
        for v in _inputs(expression_path, opts).values()
        if v
        for p in ([v] if isinstance(v, str) else v)
        if p != "-"
    ]
    with claim_output(out, inputs=files):
        return _run_rank(expression_path, **opts)


def _run_rank(expression_path: str, **opts) -> list[str]:
    from kofs.io.expression import read_expression
    from kofs.io.genes import read_gene_list
    from kofs.io.labels import align_labels, read_labels
    from kofs.io.run_output import manifest, write_run
    from kofs.pipeline import rank
    from kofs.resources import check_memory, estimate_expression_file, resolve_limit
    from kofs.sources import source_releases

    out = opts["output"]
    limit = resolve_limit(opts.get("max_memory"))
    inputs = _inputs(expression_path, opts)
    categories = None
    if opts.get("labels"):
        categories = read_labels(
            opts["labels"],
            sample_column=opts.get("sample_column"),
            label_column=opts.get("label_column"),
        )
    check_memory(
        estimate_expression_file(expression_path) or 0,
        limit=limit,
        what=f"reading {expression_path}",
        suggestion="filter the matrix to fewer genes or samples first",
    )
    expr = read_expression(
        expression_path,
        genes_in=opts.get("genes_in"),
        gene_column=opts.get("gene_column"),
        sample_ids=None if categories is None else categories.samples,
        duplicates=opts.get("duplicate_genes", "error"),
        missing=opts.get("missing_values", "error"),
    )
    if categories is not None:
        expr, categories = align_labels(
            expr,
            categories,
            missing=opts.get("missing_labels", "error"),
            labels_path=opts["labels"],
        )
    relevant = read_gene_list(opts["relevant_genes"]) if opts.get("relevant_genes") else None
    sources = read_sources_from_options(opts)
    result = rank(
        expr,
        labels=categories,
        sources=sources,
        method=opts.get("method", "kofs"),
        lists=split_names(opts.get("lists")),
        msfs_weights=_floats(opts.get("msfs_weights"), "--msfs-weights"),
        rankers=split_names(opts.get("rankers")),
        aggregate=opts.get("aggregate", "em"),
        relevant_genes=relevant,
        params=parse_params(opts.get("params") or ()),
        aggregate_params=parse_flat_params(
            opts.get("aggregate_params") or (), option="--aggregate-param"
        ),
        seed=opts.get("seed", 0),
        threads=opts.get("threads"),
        max_memory=limit,
    )
    resolved = resolve_paths({"expression": expression_path, **opts}, PATH_KEYS, base=Path.cwd())
    names = {p.name: key for key, p in config_keys().items()}
    resolved = {
        names.get(k, k): (list(v) if isinstance(v, tuple) else v) for k, v in resolved.items()
    }
    written = write_run(
        result,
        out,
        manifest_data=manifest(
            result,
            command="rank",
            inputs=inputs,
            extra={"config": resolved, "releases": source_releases(sources)},
        ),
        extra_files={"config.resolved.yaml": dump_config(resolved)},
    )
    print_summary(result, top=opts.get("top", 10), outputs=written)
    return written


def config_keys() -> dict[str, click.Parameter]:
    """Config key (a long option's name with underscores) -> parameter of `kofs rank`."""
    out = {}
    for p in rank_cmd.params:
        longs = [o[2:] for o in getattr(p, "opts", []) if o.startswith("--")]
        out[longs[0].replace("-", "_") if longs else p.name] = p
    return out


@click.command("rank")
@click.argument("expression", type=click.Path(dir_okay=False, allow_dash=True))
@rank_options
def rank_cmd(expression: str, **opts) -> None:
    """Rank the genes of EXPRESSION (CSV/TSV, gzip ok, - for stdin) and fuse the lists.

    Writes OUTDIR/ranking.tsv (gene, rank, score, then rank:<list> and score:<list> for
    every list, and an evidence column with knowledge), OUTDIR/weights.tsv (EM source
    weights), OUTDIR/manifest.json (provenance) and OUTDIR/config.resolved.yaml (`kofs run`
    repeats the run with it). With knowledge sources (--go, --pathways, --interactions,
    --aux) the lists are those of the KOFS catalogue; `kofs sources` shows them.
    """
    run_rank(expression, **opts)


def register(group: click.Group) -> None:
    group.add_command(rank_cmd)


from kofs.cli._group import main  # noqa: E402

register(main)
