"""Pathways and gene sets: GMT, KEGG link/TSV, KGML file or folder.

Lists: Pathway-FILT (SPEC on the data filtered to the pathways' genes) and Pathway-REL-VOTE;
Pathway-FILT enters MSFS; pathway votes start propagation when neither relevant genes nor GO
are given.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from kofs.context import Context, ListTemplate
from kofs.errors import ParameterError
from kofs.options import opt
from kofs.sources._common import (
    check_similarity_memory,
    term_relevance_is_gene_level,
    with_term_relevance,
)
from kofs.sources._spec import SourceSpec
from kofs.types import FeatureFunctions, RankerInputs


@dataclass(frozen=True)
class PathwayOptions:
    pathways: str | None = opt(
        "pathways",
        "path",
        folder=True,
        help="Pathways/gene sets: GMT, GSEA GMX, KEGG link/TSV, or KGML file/folder.",
    )
    pathway_format: str = opt(
        "pathway_format",
        "choice",
        "auto",
        choices=("auto", "gmt", "gmx", "kegg_link", "kegg_table", "kegg_gene2pathway", "kgml"),
        help="Format of --pathways (default: .gmx by extension, others from the content).",
    )
    pathway_ids: tuple[str, ...] | None = opt(
        "pathway_ids",
        "names",
        help="Pathways defining Pathway-FILT (ids or names, comma-separated; default all).",
    )
    kegg_names: str | None = opt(
        "kegg_names",
        "path",
        help="KEGG pathway names (REST list/pathway output) for --pathway-format kegg_link.",
    )
    pathway_min_size: int = opt(
        "pathway_min_size",
        "int",
        5,
        low=1,
        help="Smallest gene set kept (genes found in the matrix).",
    )
    pathway_max_size: int = opt(
        "pathway_max_size", "int", 500, low=1, help="Largest gene set kept."
    )


@dataclass(frozen=True)
class PathwayData:
    """Gene sets and how a run uses them."""

    gene_sets: Any
    pathway_ids: tuple[str, ...] | None = None
    sizes: tuple[int, int | None] = (5, 500)


def _read(o: PathwayOptions) -> PathwayData | None:
    if o.pathway_max_size < o.pathway_min_size:
        raise ParameterError(
            f"--pathway-max-size {o.pathway_max_size} is below --pathway-min-size "
            f"{o.pathway_min_size}: no gene set could be kept"
        )
    if o.pathways is None:
        if o.pathway_ids:
            raise ParameterError("--pathway-ids needs --pathways")
        return None
    from kofs.errors import InputError
    from kofs.io.pathways import read_pathways
    from kofs.io.sniff import wrong_option

    try:
        sets = read_pathways(o.pathways, o.pathway_format, names=o.kegg_names)
    except InputError as exc:  # a table given to the wrong option says which one it needs
        raise wrong_option(o.pathways, "gmt", exc) from None
    return PathwayData(sets, o.pathway_ids, (o.pathway_min_size, o.pathway_max_size))


def _data(ctx: Context) -> PathwayData:
    return ctx.source("pathways")


def pathway_functions_of(ctx: Context) -> FeatureFunctions:
    from kofs.knowledge.genesets import genesets_to_functions

    p = _data(ctx)
    lo, hi = p.sizes
    return ctx.cached(
        "pathway_functions",
        lambda: ctx.record(
            genesets_to_functions(
                p.gene_sets, ctx.expression, min_size=lo, max_size=hi, id_map=ctx.sources.id_map
            )
        ),
        gene_level=True,
    )


def _sets(ctx: Context) -> str:
    """What the gene sets of the run are, for messages."""
    p = _data(ctx)
    file = os.path.basename(p.gene_sets.path or "") or "the pathways"
    return (
        f"the {len(pathway_functions_of(ctx).terms)} gene sets of {file} kept by their size "
        "(--pathway-min-size, --pathway-max-size)"
    )


def pathway_relevance(ctx: Context) -> FeatureFunctions:
    """Pathways with their relevance (voting, and the start of propagation)."""
    return ctx.cached(
        "pathway_functions_rel",
        lambda: with_term_relevance(ctx, pathway_functions_of(ctx), _sets(ctx)),
        gene_level=term_relevance_is_gene_level(ctx),
    )


def pathway_filt_genes(ctx: Context) -> np.ndarray:
    """The genes (bool mask over the matrix's genes) of the chosen pathways: Pathway-FILT's
    filter."""
    from kofs.knowledge.genesets import filter_genes

    p = _data(ctx)

    def build():
        idx, _report = filter_genes(
            p.gene_sets, ctx.expression, set_ids=p.pathway_ids, id_map=ctx.sources.id_map
        )
        mask = np.zeros(ctx.expression.n_genes, dtype=bool)
        mask[idx] = True
        return mask

    return ctx.cached("pathway_filt_genes", build)


def pathway_filt_similarity(ctx: Context) -> Any:
    from kofs.knowledge.filtering import filtered_similarity

    p = _data(ctx)
    key, genes = ctx.set_without_fold("pathway_filt", pathway_filt_genes(ctx))

    def build():
        check_similarity_memory(ctx, "Pathway-FILT")
        file = os.path.basename(p.gene_sets.path or "") or "the pathways"
        return filtered_similarity(
            ctx.expression, genes, name="Pathway-FILT", what=f"Pathway-FILT, the genes of {file}"
        )

    return ctx.cached(key, build)


def _lists(data: PathwayData) -> list[ListTemplate]:
    return [
        ListTemplate(
            "Pathway-FILT",
            "spec-phi2",
            ("pathways",),
            lambda ctx: RankerInputs(similarity=pathway_filt_similarity(ctx)),
            "SPEC on the similarity of the data filtered to the chosen pathways' genes",
            order=30,
            built_on=pathway_filt_genes,
        ),
        ListTemplate(
            "Pathway-REL-VOTE",
            "relevance-vote",
            ("pathways",),
            lambda ctx: RankerInputs(functions=pathway_relevance(ctx)),
            "relevance voting over pathway membership (eq. 6.15)",
            order=40,
        ),
    ]


def _evidence(ctx: Context):
    from kofs.knowledge.evidence import EvidenceSource

    return [EvidenceSource(20.0, "pathways", pathway_functions_of(ctx))]


def _releases(data: PathwayData) -> dict[str, Any]:
    return {"pathways": {"sets": len(data.gene_sets.ids), "namespace": data.gene_sets.namespace}}


SOURCE = SourceSpec(
    name="pathways",
    summary="pathways / gene sets (GMT, KEGG, KGML): Pathway-FILT, Pathway-REL-VOTE",
    options=PathwayOptions,
    read=_read,
    lists=_lists,
    provides=lambda data: ("pathways",),
    msfs=lambda ctx: [pathway_filt_similarity(ctx)],
    msfs_order=50,
    relevance=pathway_relevance,
    relevance_order=20,
    evidence=_evidence,
    releases=_releases,
    id_file="pathways",
    narrows=lambda data: {"Pathway-FILT": ("--pathway-ids", data.pathway_ids)},
)
