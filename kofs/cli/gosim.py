"""``kofs gosim``: GO semantic similarity between genes, written as a genes x genes TSV."""

from __future__ import annotations

import logging
import sys

import click
import numpy as np

from kofs.cli._group import main
from kofs.errors import CoverageError, InputError
from kofs.io.annotations import read_go_annotations
from kofs.io.genes import read_gene_list
from kofs.io.ontology import read_obo
from kofs.io.output import atomic_file, check_output_file, format_float
from kofs.knowledge.go import gene_similarity
from kofs.knowledge.go_semantics import MODES, go_semantics
from kofs.knowledge.go_similarity import COMBINES, MEASURES
from kofs.resources import check_memory, estimate_go_all_pairs, resolve_limit

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


def _write_matrix(fh, genes: list[str], values: np.ndarray) -> None:
    fh.write("gene\t" + "\t".join(genes) + "\n")
    fmt = "%.10g".__mod__
    for g, row in zip(genes, values, strict=True):
        cells = map(format_float, row.tolist()) if np.isnan(row).any() else map(fmt, row.tolist())
        fh.write(g + "\t" + "\t".join(cells) + "\n")


@main.command("gosim")
@click.option(
    "--go",
    "go_path",
    required=True,
    type=click.Path(dir_okay=False),
    help="Gene Ontology OBO file (.obo or .obo.gz; go-basic or full go.obo).",
)
@click.option(
    "--go-annotations",
    "ann_path",
    required=True,
    type=click.Path(dir_okay=False),
    help="GO annotations: GAF 2.x, NCBI gene2go or TSV (gene, GO id[, evidence[, aspect]]).",
)
@click.option(
    "--genes",
    "genes_path",
    required=True,
    type=click.Path(dir_okay=False),
    help="Genes to compare (one id per line, or first column of a CSV/TSV).",
)
@click.option(
    "-o",
    "--output",
    "out",
    required=True,
    help="Output TSV (genes x genes, gene ids as first column and header), or - for stdout.",
)
@click.option(
    "--measure",
    type=click.Choice(MEASURES),
    default="lin",
    show_default=True,
    help="Term similarity: Lin (in [0, 1]) or Resnik (IC of the MICA).",
)
@click.option(
    "--combine",
    type=click.Choice(COMBINES),
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
    type=click.Choice(MODES),
    default="kofs",
    show_default=True,
    help="kofs definitions, or reproduce R GOSemSim 2.24 mgeneSim.",
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
@click.option("--taxon", default=None, help="gene2go only: NCBI taxon to keep (e.g. 9606).")
@click.option(
    "--unknown-terms",
    "unknown_path",
    default=None,
    type=click.Path(dir_okay=False),
    help="GO ids to give no information content (one per line, # comments), e.g. the "
    "terms R GOSemSim's internal term table lacks, for an exact --mode gosemsim.",
)
@click.option(
    "--max-memory",
    default=None,
    metavar="SIZE",
    help="Memory limit, e.g. 4G (default: 80% of RAM); a gene list whose all-pairs "
    "matrix would exceed it fails early.",
)
@click.option(
    "--keep-missing",
    is_flag=True,
    help="Keep genes without terms in the output (as NA rows/columns) instead of omitting them.",
)
def gosim_cmd(go_path, ann_path, genes_path, out, measure, combine, aspect, mode, go_evidence,
              go_exclude_evidence, taxon, unknown_path, max_memory, keep_missing) -> None:  # fmt: skip
    """GO semantic similarity (Resnik/Lin, BMA/max/avg) between the genes of a list.

    Genes without a term in the aspect are reported on stderr and omitted (or written as NA
    with --keep-missing).
    """
    check_output_file(out, inputs=[genes_path, go_path, ann_path])
    genes = read_gene_list(genes_path)
    check_memory(
        estimate_go_all_pairs(len(genes)),
        limit=resolve_limit(max_memory),
        what=f"all-pairs GO similarity of {len(genes)} genes",
        suggestion="give fewer genes (--genes) or split the list",
    )
    ontology = read_obo(go_path)
    annotations = read_go_annotations(
        ann_path, evidence=go_evidence, exclude_evidence=go_exclude_evidence, taxon=taxon
    )
    unknown = None if unknown_path is None else _read_go_ids(unknown_path)
    sem = go_semantics(ontology, annotations, aspect=aspect, mode=mode, unknown_terms=unknown)
    sim, with_terms = gene_similarity(
        ontology,
        annotations,
        genes,
        measure=measure,
        combine=combine,
        aspect=aspect,
        mode=mode,
        semantics=sem,
    )
    if not with_terms:
        raise CoverageError(
            f"none of the {len(genes)} genes (e.g. {', '.join(genes[:3])}) has a {aspect.upper()} "
            "term in the annotations; check the gene id type and the evidence filters",
            path=ann_path,
        )
    have = set(with_terms)
    missing = [g for g in genes if g not in have]
    if missing:
        shown = ", ".join(missing[:10]) + (", ..." if len(missing) > 10 else "")
        log.warning(
            "%d of %d genes have no %s term (%s): %s", len(missing), len(genes), aspect.upper(),
            "written as NA" if keep_missing else "omitted", shown,
        )  # fmt: skip
    if keep_missing:
        names, values = genes, sim
    else:
        pos = {g: i for i, g in enumerate(genes)}
        idx = [pos[g] for g in with_terms]
        names, values = with_terms, sim[np.ix_(idx, idx)]
    if out == "-":
        _write_matrix(sys.stdout, names, values)
        sys.stdout.flush()
        return
    with atomic_file(out) as fh:
        _write_matrix(fh, names, values)
