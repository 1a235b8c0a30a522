"""Gene Ontology: an OBO ontology plus gene annotations (GAF, gene2go, TSV).

Lists (book Table 6.3): GO-REL-VOTE, GO-MAH, GO-CAN-MAH (with relevant genes), GO-REL-PROP and
GO-FILT (with ``--go-term-ids``); GO-MAH enters MSFS; GO votes start propagation when no
relevant genes are given.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from kofs.context import Context, ListTemplate
from kofs.errors import CoverageError, ParameterError
from kofs.options import opt
from kofs.sources._common import (
    check_similarity_memory,
    initial_relevance,
    term_relevance_is_gene_level,
    with_term_relevance,
)
from kofs.sources._spec import ReadResources, SourceSpec
from kofs.types import FeatureFunctions, FeatureRelation, RankerInputs

log = logging.getLogger(__name__)

#: GO-CAN-MAH: terms enriched in the relevant genes at this BH q-value
GO_CAN_ALPHA = 0.05


@dataclass(frozen=True)
class GoOptions:
    go: str | None = opt(
        "go", "path", help="Gene Ontology OBO file (go-basic.obo or go.obo, gzip ok)."
    )
    go_annotations: str | None = opt(
        "go_annotations",
        "path",
        help="GO annotations: GAF 1.0/2.x, NCBI gene2go, or TSV (gene, GO id[, evidence[, aspect]]).",
    )
    go_evidence: tuple[str, ...] | None = opt(
        "go_evidence",
        "names",
        help="Keep only these evidence codes (comma-separated, e.g. EXP,IDA,IMP).",
    )
    go_exclude_evidence: tuple[str, ...] | None = opt(
        "go_exclude_evidence", "names", help="Drop these evidence codes (e.g. IEA)."
    )
    go_taxon: str | None = opt(
        "go_taxon",
        help="NCBI taxon to keep (e.g. 9606): gene2go tax_id or GAF taxon column; an error for TSV.",
    )
    go_aspect: str = opt(
        "go_aspect", "choice", "BP", choices=("BP", "MF", "CC"), help="GO aspect used."
    )
    go_measure: str = opt(
        "go_measure", "choice", "lin", choices=("lin", "resnik"), help="GO term similarity."
    )
    go_combine: str = opt(
        "go_combine",
        "choice",
        "bma",
        choices=("bma", "max", "avg"),
        help="Gene-level combination of term similarities.",
    )
    go_top_k: int = opt(
        "go_top_k", "int", 10, low=1, help="Neighbours per gene in the GO similarity graph."
    )
    go_term_ids: tuple[str, ...] | None = opt(
        "go_term_ids",
        "names",
        help="GO terms whose genes define GO-FILT (Leukemia-FILT style), comma-separated.",
    )


@dataclass(frozen=True)
class GoData:
    """The ontology, its annotations and the GO settings of a run."""

    ontology: Any
    annotations: Any
    aspect: str = "BP"
    measure: str = "lin"
    combine: str = "bma"
    top_k: int = 10
    term_ids: tuple[str, ...] | None = None
    mode: str = "kofs"
    cache: Any = None  # kofs.cache.Cache of derived GO data, or None


def _read(o: GoOptions, res: ReadResources | None = None) -> GoData | None:
    if (o.go is None) != (o.go_annotations is None):
        raise ParameterError("GO needs both --go (the OBO ontology) and --go-annotations")
    if o.go is None:
        if o.go_term_ids:
            raise ParameterError("--go-term-ids needs --go and --go-annotations")
        return None
    from kofs.errors import InputError
    from kofs.io.annotations import read_go_annotations
    from kofs.io.ontology import read_obo
    from kofs.io.sniff import wrong_option

    res = res or ReadResources()
    try:  # a table given to the wrong option says which one it needs
        ontology = read_obo(o.go, cache=res.cache, max_memory=res.max_memory, progress=res.progress)
    except InputError as exc:
        raise wrong_option(o.go, "obo", exc) from None
    assert o.go_annotations is not None  # checked above
    try:
        annotations = read_go_annotations(
            o.go_annotations,
            evidence=",".join(o.go_evidence) if o.go_evidence else None,
            exclude_evidence=",".join(o.go_exclude_evidence) if o.go_exclude_evidence else None,
            taxon=o.go_taxon,
            ontology=ontology,
            cache=res.cache,
            max_memory=res.max_memory,
            progress=res.progress,
        )
    except InputError as exc:
        raise wrong_option(o.go_annotations, "go_annotations", exc) from None
    taxa = {t: n for t, n in annotations.taxa.items() if t}
    if o.go_taxon is None and len(taxa) > 1:
        from kofs.io.annotations import taxa_text

        main_taxon = max(taxa.items(), key=lambda kv: (kv[1], kv[0]))[0]
        log.warning(
            "%s holds the annotations of %s, read together (a gene symbol of one species "
            "takes the annotations of the same symbol of another, case ignored); keep the "
            "matrix's species with --go-taxon (e.g. --go-taxon %s)",
            o.go_annotations,
            taxa_text(taxa),
            main_taxon,
        )
    return GoData(
        ontology,
        annotations,
        aspect=o.go_aspect,
        measure=o.go_measure,
        combine=o.go_combine,
        top_k=o.go_top_k,
        term_ids=o.go_term_ids,
        cache=res.cache,
    )


def go_data(
    ontology: Any,
    annotations: Any,
    *,
    aspect: str = "BP",
    measure: str = "lin",
    combine: str = "bma",
    top_k: int = 10,
    term_ids: tuple[str, ...] | None = None,
) -> GoData:
    """GO knowledge from already-read objects (Python API)."""
    return GoData(ontology, annotations, aspect, measure, combine, top_k, term_ids)


# --- internal knowledge, built once per run -----------------------------------------------


def _go(ctx: Context) -> GoData:
    return ctx.source("go")


def go_semantics_of(ctx: Context, mode: str) -> Any:
    """Closure and information content of the chosen aspect, computed once per mode."""
    from kofs.knowledge.go_semantics import go_semantics

    g = _go(ctx)
    return ctx.cached(
        f"go_semantics:{mode}",
        lambda: go_semantics(
            g.ontology,
            g.annotations,
            aspect=g.aspect,
            mode=mode,
            cache=g.cache,
            max_memory=ctx.max_memory,
            progress=ctx.progress,
        ),  # fmt: skip
        gene_level=True,
    )


def go_relation_of(ctx: Context) -> Any:
    """The GO gene relation of the run; an error naming the GO files when it relates no two
    genes (an ontology of a few terms, say: every list built on it would be empty)."""
    from kofs.knowledge.go import go_relation

    g = _go(ctx)
    check_go_species(ctx)
    return ctx.cached(
        "go_relation",
        lambda: _with_edges(
            g,
            ctx.record(
                go_relation(
                    ctx.expression,
                    g.ontology,
                    g.annotations,
                    measure=g.measure,
                    combine=g.combine,
                    aspect=g.aspect,
                    mode=g.mode,
                    top_k=int(g.top_k),
                    id_map=ctx.sources.id_map,
                    semantics=go_semantics_of(ctx, g.mode),
                    max_memory=ctx.max_memory,
                    progress=ctx.progress,
                    cache=g.cache,
                )
            ),
        ),
        gene_level=True,
    )


def _with_edges(g: GoData, rel: FeatureRelation) -> FeatureRelation:
    """``rel`` when it has an edge between two genes; a :class:`CoverageError` naming the GO
    files otherwise."""
    W = rel.matrix.tocoo()
    if np.any(W.row != W.col):
        return rel
    obo = f" and {g.ontology.source}" if g.ontology.source else ""
    raise CoverageError(
        f"no two genes of the matrix share an informative GO {g.aspect} term in "
        f"{g.annotations.source or 'the GO annotations'}{obo} (every gene similarity is 0); "
        "check that the ontology is a full GO release and that the annotations' gene ids "
        "match the matrix"
    )


def check_go_species(ctx: Context) -> None:
    """Warn once per run when the GO annotations seem to be of another species than the matrix
    (:func:`kofs.io.annotations.species_mismatch`)."""
    from kofs.io.annotations import species_mismatch

    def check() -> bool:
        message = species_mismatch(_go(ctx).annotations, ctx.expression)
        if message:
            log.warning("%s", message)
        return True

    ctx.cached("go_species_checked", check, gene_level=True)


def go_functions_of(ctx: Context, *, propagate: bool = True) -> FeatureFunctions:
    from kofs.knowledge.go import go_functions

    g = _go(ctx)
    check_go_species(ctx)
    key = "go_functions" if propagate else "go_functions_direct"
    # the coverage report of the GO annotations is recorded once (by the relation or here)
    return ctx.cached(
        key,
        lambda: ctx.record(
            go_functions(
                ctx.expression,
                g.ontology,
                g.annotations,
                aspect=g.aspect,
                propagate=propagate,
                id_map=ctx.sources.id_map,
                semantics=go_semantics_of(ctx, "kofs"),
            )
        ),
        gene_level=True,
    )


def _terms(ctx: Context) -> str:
    """What the GO terms of the run are, for messages."""
    g = _go(ctx)
    file = os.path.basename(g.annotations.source or "") or "the GO annotations"
    return (
        f"the {len(go_functions_of(ctx).terms)} GO {g.aspect} terms that annotate genes of the "
        f"matrix in {file} (--go-aspect {g.aspect})"
    )


def go_relevance(ctx: Context) -> FeatureFunctions:
    """GO terms with their relevance (voting, and the start of propagation)."""
    return ctx.cached(
        "go_functions_rel",
        lambda: with_term_relevance(ctx, go_functions_of(ctx), _terms(ctx)),
        gene_level=term_relevance_is_gene_level(ctx),
    )


def go_mah_similarity(ctx: Context) -> Any:
    from kofs.knowledge.mahalanobis import mahalanobis_similarity

    def build():
        rel = go_relation_of(ctx)
        check_similarity_memory(ctx, "GO-MAH", n_genes=ctx.expression.n_genes, nnz=rel.matrix.nnz)
        return mahalanobis_similarity(ctx.expression, rel, name="GO-MAH")

    return ctx.cached("go_mah", build)


def go_can_genes(ctx: Context) -> np.ndarray:
    """Genes of the GO terms enriched in relevant genes (GO-CAN-MAH's "cancer-related terms").

    A term qualifies when at least two relevant genes are directly annotated to it and it is
    over-represented among them: one-sided hypergeometric p < ``GO_CAN_ALPHA`` after
    Benjamini-Hochberg (ours: the book only says "terms related to cancer"; a plain
    M_rel/M_all > |G|/m rule, or ancestor propagation, lets almost every gene qualify).
    """
    from scipy.stats import false_discovery_control, hypergeom

    from kofs.knowledge.filtering import genes_of_terms

    direct = go_functions_of(ctx, propagate=False)
    ctx.note_relevant_use()
    rel_mask = np.isin(np.asarray(ctx.expression.genes), list(ctx.relevant_genes or ()))
    V = direct.incidence
    n_rel = np.asarray(V[rel_mask].sum(axis=0)).ravel()
    n_all = np.asarray(V.sum(axis=0)).ravel()
    m, k = ctx.expression.n_genes, int(rel_mask.sum())
    pval = hypergeom.sf(n_rel - 1, m, k, n_all)
    q = false_discovery_control(np.clip(pval, 0, 1))
    enriched = np.flatnonzero((n_rel >= 2) & (q < GO_CAN_ALPHA))
    if enriched.size == 0:
        raise ParameterError(
            "GO-CAN-MAH: no GO term is enriched in the relevant genes; "
            "give more relevant genes or leave the list out (--lists)"
        )
    return genes_of_terms(direct, [direct.terms[i] for i in enriched])


def go_can_mah_similarity(ctx: Context) -> Any:
    from kofs.knowledge.filtering import restrict_relation
    from kofs.knowledge.mahalanobis import mahalanobis_similarity

    def build():
        rel = restrict_relation(go_relation_of(ctx), go_can_genes(ctx))
        check_similarity_memory(
            ctx, "GO-CAN-MAH", n_genes=ctx.expression.n_genes, nnz=rel.matrix.nnz
        )
        return mahalanobis_similarity(ctx.expression, rel, name="GO-CAN-MAH")

    return ctx.cached("go_can_mah", build, uses_relevant=True)


def go_filt_genes(ctx: Context) -> np.ndarray:
    """The genes (bool mask over the matrix's genes) annotated to the chosen GO terms:
    GO-FILT's filter."""
    from kofs.knowledge.filtering import genes_of_terms

    def build():
        g = _go(ctx)
        # a secondary id (alt_id) stands for its term, as in the annotations
        terms = None if g.term_ids is None else [g.ontology.primary(t) or t for t in g.term_ids]
        return genes_of_terms(
            go_functions_of(ctx), terms, option="--go-term-ids", among=f"among {_terms(ctx)}"
        )

    return ctx.cached("go_filt_genes", build)


def go_filt_similarity(ctx: Context) -> Any:
    from kofs.knowledge.filtering import filtered_similarity

    key, genes = ctx.set_without_fold("go_filt", go_filt_genes(ctx))

    def build():
        check_similarity_memory(ctx, "GO-FILT")
        return filtered_similarity(
            ctx.expression, genes, name="GO-FILT", what=f"GO-FILT, the genes among {_terms(ctx)}"
        )

    return ctx.cached(key, build)


# --- the plug-in ----------------------------------------------------------------------------


def _lists(data: GoData) -> list[ListTemplate]:
    return [
        ListTemplate(
            "GO-REL-VOTE",
            "relevance-vote",
            ("go",),
            lambda ctx: RankerInputs(functions=go_relevance(ctx)),
            "relevance voting over GO terms (eq. 6.15)",
            order=50,
        ),
        ListTemplate(
            "GO-MAH",
            "spec-phi2",
            ("go",),
            lambda ctx: RankerInputs(similarity=go_mah_similarity(ctx)),
            "SPEC on the commute-time Mahalanobis similarity of the GO gene graph (Prop. 1)",
            order=60,
        ),
        ListTemplate(
            "GO-CAN-MAH",
            "spec-phi2",
            ("go", "relevant_genes"),
            lambda ctx: RankerInputs(similarity=go_can_mah_similarity(ctx)),
            "GO-MAH with GO restricted to the terms of the relevant genes",
            order=70,
        ),
        ListTemplate(
            "GO-REL-PROP",
            "relevance-propagation",
            ("go",),
            lambda ctx: RankerInputs(
                relation=go_relation_of(ctx), functions=initial_relevance(ctx)
            ),
            "relevance propagation over the GO similarity graph (eq. 6.14)",
            order=80,
        ),
        ListTemplate(
            "GO-FILT",
            "spec-phi2",
            ("go", "go_term_ids"),
            lambda ctx: RankerInputs(similarity=go_filt_similarity(ctx)),
            "SPEC on the data filtered to the genes of the chosen GO terms (Leukemia-FILT)",
            order=90,
            built_on=go_filt_genes,
        ),
    ]


def _provides(data: GoData) -> tuple[str, ...]:
    return ("go", "go_term_ids") if data.term_ids else ("go",)


def _evidence(ctx: Context):
    """GO terms (the annotations with the true-path rule), and the GO similarity graph when a
    list built it (it is not built for the evidence alone)."""
    from kofs.knowledge.evidence import EvidenceSource

    out = [EvidenceSource(10.0, "GO", go_functions_of(ctx))]
    if "go_relation" in ctx.cache:
        out.append(EvidenceSource(30.0, "GO neighbours", ctx.cache["go_relation"]))
    return out


def _releases(data: GoData) -> dict[str, Any]:
    o, a = data.ontology, data.annotations
    return {
        "go_ontology": {"data-version": o.data_version, "date": o.date, "terms": len(o.terms)},
        "go_annotations": {
            "format": a.fmt,
            **dict(a.header),
            "rows": len(a.terms),
            **({"taxa": dict(a.taxa)} if a.taxa else {}),
        },
    }


SOURCE = SourceSpec(
    name="go",
    summary="Gene Ontology (OBO + annotations): GO-REL-VOTE, GO-MAH, GO-CAN-MAH, GO-REL-PROP, GO-FILT",
    options=GoOptions,
    read=_read,
    uses_resources=True,
    lists=_lists,
    provides=_provides,
    msfs=lambda ctx: [go_mah_similarity(ctx)],
    msfs_order=40,
    relevance=go_relevance,
    relevance_order=10,
    evidence=_evidence,
    releases=_releases,
    id_file="go_annotations",
    narrows=lambda data: {"GO-FILT": ("--go-term-ids", data.term_ids)},
)
