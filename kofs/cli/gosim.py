"""``kofs gosim``: GO semantic similarity between genes, written as a genes x genes TSV, or
binary (``.npz`` or ``.parquet``) for large gene lists."""

from __future__ import annotations

import logging
import sys

import click

from kofs.cli._group import main
from kofs.cli._options import LazyChoice, UserPath
from kofs.errors import CoverageError, InputError

log = logging.getLogger(__name__)


def _read_go_ids(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8") as fh:
            ids = [ln.split("#", 1)[0].strip() for ln in fh]
    except OSError as exc:
        raise InputError(f"cannot read the term list ({exc.strerror})", path=path) from None
    ids = [i for i in ids if i]
    bad = [i for i in ids if not i.startswith("GO:")]
    if bad:
        raise InputError(f"{bad[0]!r} is not a GO id (GO:NNNNNNN); one id per line", path=path)
    return ids


def _output_format(out: str) -> str:
    """``tsv``, ``npz`` or ``parquet`` from the output name."""
    low = out.lower()
    if low.endswith(".npz"):
        return "npz"
    if low.endswith(".parquet"):
        return "parquet"
    return "tsv"


def _parquet_frame(names: list[str], values):
    import pandas as pd

    df = pd.DataFrame(values, columns=list(names))
    df.insert(0, "gene", list(names))
    return df


def _write_matrix(fh, genes: list[str], values) -> None:
    import numpy as np

    from kofs.io.output import format_float

    fh.write("gene\t" + "\t".join(genes) + "\n")
    spec = "%.7g" if values.dtype == np.float32 else "%.10g"
    # one %-format per row (formats a whole row in C, ~30 % faster than formatting each value)
    row_format = "\t".join([spec] * values.shape[1])
    for g, row in zip(genes, values, strict=True):
        if np.isnan(row).any():
            text = "\t".join(map(format_float, row.tolist()))
        else:
            text = row_format % tuple(row.tolist())
        fh.write(g + "\t" + text + "\n")


@main.command("gosim")
@click.option(
    "--go",
    "go_path",
    required=True,
    type=UserPath(dir_okay=False),
    help="Gene Ontology OBO file (.obo or .obo.gz; go-basic or full go.obo).",
)
@click.option(
    "--go-annotations",
    "ann_path",
    required=True,
    type=UserPath(dir_okay=False),
    help="GO annotations: GAF 2.x, NCBI gene2go or TSV (gene, GO id[, evidence[, aspect]]).",
)
@click.option(
    "--genes",
    "genes_path",
    required=True,
    type=UserPath(dir_okay=False),
    help="Genes to compare (one id per line, or first column of a CSV/TSV).",
)
@click.option(
    "-o",
    "--output",
    "out",
    required=True,
    help="Output: genes x genes TSV (gene ids as first column and header), - for stdout, "
    "or binary by extension: .npz (arrays 'similarity' and 'genes'; numpy.load) or .parquet. "
    "Use .npz for thousands of genes.",
)
@click.option(
    "--measure",
    type=LazyChoice("kofs.knowledge.go_similarity", "MEASURES"),
    default="lin",
    show_default=True,
    help="Term similarity: Lin (in [0, 1]) or Resnik (IC of the MICA).",
)
@click.option(
    "--combine",
    type=LazyChoice("kofs.knowledge.go_similarity", "COMBINES"),
    default="bma",
    show_default=True,
    help="Gene similarity from term similarities: best-match average, max or average.",
)
@click.option(
    "--aspect",
    type=click.Choice(["BP", "MF", "CC"], case_sensitive=False),
    default="BP",
    show_default=True,
    help="GO aspect.",
)
@click.option(
    "--mode",
    type=LazyChoice("kofs.knowledge.go_semantics", "MODES"),
    default="kofs",
    show_default=True,
    help="kofs definitions, or reproduce R GOSemSim mgeneSim (its term table for the GO "
    "release ships with kofs).",
)
@click.option(
    "--gosemsim-version",
    default=None,
    metavar="VERSION",
    help="--mode gosemsim: the GOSemSim version whose term table is used (default: the newest "
    "kofs ships for the GO release; 2.24 for GO 2022-07-01).",
)
@click.option(
    "--go-evidence",
    default=None,
    metavar="CODES",
    help="Use only these evidence codes (comma-separated, e.g. EXP,IDA,IMP).",
)
@click.option(
    "--go-exclude-evidence",
    default=None,
    metavar="CODES",
    help="Drop these evidence codes (comma-separated, e.g. IEA).",
)
@click.option(
    "--taxon",
    default=None,
    help="NCBI taxon to keep (e.g. 9606): gene2go tax_id or GAF taxon column; an error for TSV.",
)
@click.option(
    "--unknown-terms",
    "unknown_path",
    default=None,
    type=UserPath(dir_okay=False),
    help="GO ids to give no information content (one per line, # comments); in --mode "
    "gosemsim it replaces the term table kofs ships for the release.",
)
@click.option(
    "--max-memory",
    default=None,
    metavar="SIZE",
    help="Memory limit, e.g. 4G (default: 80% of RAM); a gene list whose all-pairs "
    "matrix would exceed it fails early.",
)
@click.option(
    "--cache-dir",
    type=UserPath(file_okay=False),
    default=None,
    help="Cache of parsed GO (default: $KOFS_CACHE_DIR, else $XDG_CACHE_HOME/kofs or ~/.cache/kofs).",
)
@click.option("--no-cache", is_flag=True, help="Neither read nor write the GO cache.")
@click.option(
    "--keep-missing",
    is_flag=True,
    help="Keep genes without terms in the output (as NA rows/columns) instead of omitting them.",
)
def gosim_cmd(go_path, ann_path, genes_path, out, measure, combine, aspect, mode, gosemsim_version, go_evidence,
              go_exclude_evidence, taxon, unknown_path, max_memory, cache_dir, no_cache,
              keep_missing) -> None:  # fmt: skip
    """GO semantic similarity (Resnik/Lin, BMA/max/avg) between the genes of a list.

    Genes without a term in the aspect are reported on stderr and omitted (or written as NA
    with --keep-missing). kofs mode writes float32 values (7 significant digits), gosemsim mode
    float64 values rounded to 3 decimals as GOSemSim does.
    """
    import numpy as np

    from kofs.cache import open_cache
    from kofs.cli._progress import cli_progress
    from kofs.io.annotations import read_go_annotations
    from kofs.io.genes import read_gene_list
    from kofs.io.ontology import read_obo
    from kofs.io.output import atomic_file, check_output_file, write_similarity_npz
    from kofs.knowledge.go import gene_similarity, genes_with_terms
    from kofs.knowledge.go_semantics import go_semantics
    from kofs.resources import check_memory, estimate_go_all_pairs, resolve_limit

    fmt = _output_format(out)
    check_output_file(out, inputs=[genes_path, go_path, ann_path])
    genes = read_gene_list(genes_path)
    dtype = np.float32 if mode == "kofs" else np.float64
    limit = resolve_limit(max_memory)
    check_memory(
        estimate_go_all_pairs(len(genes), itemsize=np.dtype(dtype).itemsize),
        limit=limit,
        what=f"all-pairs GO similarity of {len(genes)} genes",
        suggestion="give fewer genes (--genes) or split the list",
    )
    cache = open_cache(cache_dir, enabled=not no_cache)
    with cli_progress() as progress:
        ontology = read_obo(go_path, cache=cache, max_memory=limit, progress=progress)
        annotations = read_go_annotations(
            ann_path,
            evidence=go_evidence,
            exclude_evidence=go_exclude_evidence,
            taxon=taxon,
            ontology=ontology,
            cache=cache,
            max_memory=limit,
            progress=progress,
        )
        unknown = None if unknown_path is None else _read_go_ids(unknown_path)
        sem = go_semantics(
            ontology, annotations, aspect=aspect, mode=mode, unknown_terms=unknown,
            gosemsim_version=gosemsim_version, cache=cache, max_memory=limit, progress=progress,
        )  # fmt: skip
        with_terms = genes_with_terms(ontology, annotations, genes, semantics=sem)
        if not with_terms:
            raise CoverageError(
                f"none of the {len(genes)} genes (e.g. {', '.join(genes[:3])}) has a "
                f"{aspect.upper()} term in the annotations; check the gene id type and the "
                "evidence filters",
                path=ann_path,
            )
        have = set(with_terms)
        missing = [g for g in genes if g not in have]
        if missing:
            shown = ", ".join(missing[:10]) + (", ..." if len(missing) > 10 else "")
            log.warning(
                "%d of %d genes have no %s term (%s): %s", len(missing), len(genes),
                aspect.upper(), "written as NA" if keep_missing else "omitted", shown,
            )  # fmt: skip
        names = genes if keep_missing else with_terms
        values, _ = gene_similarity(
            ontology, annotations, names, measure=measure, combine=combine, aspect=aspect,
            mode=mode, semantics=sem, max_memory=limit, progress=progress, dtype=dtype,
        )  # fmt: skip
    info = {"measure": measure, "combine": combine, "aspect": aspect.upper(), "mode": mode,
            "go_release": ontology.data_version or "", "annotations": str(ann_path)}  # fmt: skip
    if out == "-":
        _write_matrix(sys.stdout, names, values)
        sys.stdout.flush()
    elif fmt == "npz":
        with atomic_file(out, "wb") as fh:
            write_similarity_npz(fh, names, values, info)
    elif fmt == "parquet":
        with atomic_file(out, "wb") as fh:
            _parquet_frame(names, values).to_parquet(fh, index=False)
    else:
        with atomic_file(out) as fh:
            _write_matrix(fh, names, values)
