"""The KOFS list catalogue (book Tables 6.3/6.4): which ranked lists each knowledge source
allows, and how each list's internal knowledge is built.

Every entry is one :class:`ListTemplate`: a name, the ranker, the sources it needs, and a
builder ``(Context) -> RankerInputs``. :func:`kofs_plan` keeps the entries the given sources
allow (``--lists`` chooses a subset); :func:`msfs_plan` is the MSFS special case (one list: SPEC
on the weighted sum of every sample similarity). Internal knowledge is built lazily and once
per run through :meth:`Context.cached`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kofs.errors import ParameterError
from kofs.knowledge.filtering import filtered_similarity, genes_of_terms, restrict_relation
from kofs.knowledge.functions import (
    learn_relevance,
    learn_relevance_from_data,
    relevant_genes_functions,
    with_relevance,
)
from kofs.knowledge.mahalanobis import mahalanobis_similarity
from kofs.knowledge.msfs import combine_similarities
from kofs.knowledge.similarity import sample_similarity
from kofs.pipeline import Context, ListPlan
from kofs.registry import unknown_message
from kofs.resources import check_memory, estimate_dense_similarity, estimate_mahalanobis
from kofs.types import FeatureFunctions, RankerInputs

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class KnowledgeSources:
    """Knowledge read from the user's files (not yet aligned to the matrix).

    Attributes
    ----------
    ontology, go_annotations : from :func:`kofs.io.ontology.read_obo` and
        :func:`kofs.io.annotations.read_go_annotations` (both or neither)
    pathways : GeneSets, optional
    interactions : Interactions, optional
    aux : tuple of Expression
        Auxiliary data on the same samples (e.g. miRNA), samples x features.
    term_relevance : mapping term id -> relevance, optional (``--term-relevance``)
    pathway_ids : pathway ids/names for Pathway-FILT (default: every pathway)
    go_term_ids : GO terms whose genes define GO-FILT (Leukemia-FILT style), optional
    id_map : user identifier table, optional
    go : GO similarity settings (aspect, measure, combine, top_k, mode)
    """

    ontology: Any = None
    go_annotations: Any = None
    pathways: Any = None
    interactions: Any = None
    aux: tuple[Any, ...] = ()
    term_relevance: Mapping[str, float] | None = None
    pathway_ids: tuple[str, ...] | None = None
    go_term_ids: tuple[str, ...] | None = None
    id_map: Mapping[str, str] | None = None
    go: Mapping[str, Any] = field(default_factory=dict)
    pathway_sizes: tuple[int, int | None] = (5, 500)
    interaction_options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def has_go(self) -> bool:
        return self.ontology is not None and self.go_annotations is not None

    def any(self) -> bool:
        return bool(
            self.has_go or self.pathways is not None or self.interactions is not None or self.aux
        )


GO_DEFAULTS = {"aspect": "BP", "measure": "lin", "combine": "bma", "top_k": 10, "mode": "kofs"}


# --- internal knowledge, built once per run -------------------------------------------------


def _src(ctx: Context) -> KnowledgeSources:
    return ctx.cache["sources"]


def _record(ctx: Context, result):
    """Keep the converter's coverage report (once per source) and return its object."""
    obj, report = result
    if all(r.source != report.source for r in ctx.coverage):
        ctx.coverage.append(report)
    return obj


def go_settings(ctx: Context) -> dict[str, Any]:
    return {**GO_DEFAULTS, **_src(ctx).go}


def go_semantics_of(ctx: Context, mode: str):
    """Closure and information content of the chosen aspect, computed once per mode."""
    from kofs.knowledge.go import go_semantics

    s, g = _src(ctx), go_settings(ctx)
    return ctx.cached(
        f"go_semantics:{mode}",
        lambda: go_semantics(s.ontology, s.go_annotations, aspect=g["aspect"], mode=mode),
    )


def go_relation_of(ctx: Context):
    from kofs.knowledge.go import go_relation

    s, g = _src(ctx), go_settings(ctx)
    return ctx.cached(
        "go_relation",
        lambda: _record(
            ctx,
            go_relation(
                ctx.expression,
                s.ontology,
                s.go_annotations,
                measure=g["measure"],
                combine=g["combine"],
                aspect=g["aspect"],
                mode=g["mode"],
                top_k=int(g["top_k"]),
                semantics=go_semantics_of(ctx, g["mode"]),
            ),
        ),
    )


def go_functions_of(ctx: Context, *, propagate: bool = True) -> FeatureFunctions:
    from kofs.knowledge.go import go_functions

    s, g = _src(ctx), go_settings(ctx)
    key = "go_functions" if propagate else "go_functions_direct"
    # the coverage report of the GO annotations is recorded once (by the relation or here)
    return ctx.cached(
        key,
        lambda: _record(
            ctx,
            go_functions(
                ctx.expression,
                s.ontology,
                s.go_annotations,
                aspect=g["aspect"],
                propagate=propagate,
                semantics=go_semantics_of(ctx, "kofs"),
            ),
        ),
    )


def pathway_functions_of(ctx: Context) -> FeatureFunctions:
    from kofs.knowledge.genesets import genesets_to_functions

    s = _src(ctx)
    lo, hi = s.pathway_sizes
    return ctx.cached(
        "pathway_functions",
        lambda: _record(
            ctx,
            genesets_to_functions(
                s.pathways, ctx.expression, min_size=lo, max_size=hi, id_map=s.id_map
            ),
        ),
    )


def ppi_relation_of(ctx: Context):
    from kofs.knowledge.network import interactions_to_relation

    s = _src(ctx)
    return ctx.cached(
        "ppi_relation",
        lambda: _record(
            ctx,
            interactions_to_relation(
                s.interactions, ctx.expression, id_map=s.id_map, **s.interaction_options
            ),
        ),
    )


def with_term_relevance(ctx: Context, functions: FeatureFunctions) -> FeatureFunctions:
    """Term relevance: a user table, else learned from relevant genes (M_rel/M_all), else from
    the data (enrichment of high-variance genes; kofs.knowledge.functions)."""
    s = _src(ctx)
    if s.term_relevance is not None:
        known = set(functions.terms)
        values = {t: v for t, v in s.term_relevance.items() if t in known}
        if not values:
            raise ParameterError(f"--term-relevance names none of the terms of {functions.name}")
        return with_relevance(functions, values)
    if ctx.relevant_genes:
        return learn_relevance(functions, list(ctx.relevant_genes), expression=ctx.expression)
    return learn_relevance_from_data(functions, ctx.expression)


def check_similarity_memory(
    ctx: Context, what: str, *, n_genes: int | None = None, nnz: int = 0
) -> None:
    """Fail early when a sample similarity (dense up to 3000 samples, GO-MAH when ``n_genes``)
    would exceed ``ctx.max_memory``."""
    n = ctx.expression.n_samples
    if n_genes is not None:
        need = estimate_mahalanobis(n, n_genes, nnz=nnz)
    elif n <= 3000:
        need = estimate_dense_similarity(n)
    else:
        return  # sparse kNN graph: linear in n
    check_memory(
        need,
        limit=ctx.max_memory,
        what=f"{what} similarity ({n} samples)",
        suggestion="use fewer samples or genes, or leave the lists that need it out (--lists)",
    )


def data_similarity(ctx: Context):
    def build():
        check_similarity_memory(ctx, "expression")
        return sample_similarity(ctx.expression, "auto")

    return ctx.cached("data_similarity", build)


def initial_relevance(ctx: Context) -> FeatureFunctions:
    """Where propagation starts: the known relevant genes, else the GO (or pathway) votes."""
    if ctx.relevant_genes:
        return ctx.cached(
            "relevant_functions",
            lambda: relevant_genes_functions(ctx.expression, list(ctx.relevant_genes)),
        )
    if _src(ctx).has_go:
        return ctx.cached(
            "go_functions_rel", lambda: with_term_relevance(ctx, go_functions_of(ctx))
        )
    if _src(ctx).pathways is None:
        raise ParameterError(
            "relevance propagation (PPI-PROP, GO-REL-PROP) needs a starting "
            "relevance: give --relevant-genes, --go with --go-annotations, or "
            "--pathways"
        )
    return ctx.cached(
        "pathway_functions_rel", lambda: with_term_relevance(ctx, pathway_functions_of(ctx))
    )


def go_mah_similarity(ctx: Context):
    def build():
        rel = go_relation_of(ctx)
        check_similarity_memory(ctx, "GO-MAH", n_genes=ctx.expression.n_genes, nnz=rel.matrix.nnz)
        return mahalanobis_similarity(ctx.expression, rel, name="GO-MAH")

    return ctx.cached("go_mah", build)


GO_CAN_ALPHA = 0.05


def go_can_genes(ctx: Context) -> np.ndarray:
    """Genes of the GO terms enriched in relevant genes (GO-CAN-MAH's "cancer-related terms").

    A term qualifies when at least two relevant genes are directly annotated to it and it is
    over-represented among them: one-sided hypergeometric p < ``alpha`` after Benjamini-Hochberg
    (ours: the book only says "terms related to cancer"; a plain M_rel/M_all > |G|/m rule, or
    ancestor propagation, lets almost every gene qualify).
    """
    from scipy.stats import false_discovery_control, hypergeom

    direct = go_functions_of(ctx, propagate=False)
    rel_mask = np.isin(np.asarray(ctx.expression.genes), list(ctx.relevant_genes))
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


def go_can_mah_similarity(ctx: Context):
    def build():
        rel = restrict_relation(go_relation_of(ctx), go_can_genes(ctx))
        check_similarity_memory(
            ctx, "GO-CAN-MAH", n_genes=ctx.expression.n_genes, nnz=rel.matrix.nnz
        )
        return mahalanobis_similarity(ctx.expression, rel, name="GO-CAN-MAH")

    return ctx.cached("go_can_mah", build)


def pathway_filt_similarity(ctx: Context):
    from kofs.knowledge.genesets import filter_genes

    s = _src(ctx)

    def build():
        idx, report = filter_genes(
            s.pathways, ctx.expression, set_ids=s.pathway_ids, id_map=s.id_map
        )
        check_similarity_memory(ctx, "Pathway-FILT")
        return filtered_similarity(ctx.expression, idx, name="Pathway-FILT")

    return ctx.cached("pathway_filt", build)


def go_filt_similarity(ctx: Context):
    def build():
        genes = genes_of_terms(go_functions_of(ctx), _src(ctx).go_term_ids)
        check_similarity_memory(ctx, "GO-FILT")
        return filtered_similarity(ctx.expression, genes, name="GO-FILT")

    return ctx.cached("go_filt", build)


def aux_similarity(ctx: Context, i: int):
    def build():
        aux = _src(ctx).aux[i]
        pos = {s: j for j, s in enumerate(aux.samples)}
        missing = [s for s in ctx.expression.samples if s not in pos]
        if missing:
            raise ParameterError(
                f"auxiliary data {aux.source}: {len(missing)} samples of the expression matrix are "
                f"missing (e.g. {', '.join(missing[:3])}); it must measure the same samples"
            )
        aligned = aux.subset_samples([pos[s] for s in ctx.expression.samples])
        check_similarity_memory(ctx, f"auxiliary data {aux.source}")
        return sample_similarity(aligned, "auto")

    return ctx.cached(f"aux{i}", build)


# --- the catalogue --------------------------------------------------------------------------


@dataclass(frozen=True)
class ListTemplate:
    name: str
    ranker: str
    needs: tuple[str, ...]
    build: Callable[[Context], RankerInputs]
    summary: str


def _sim(fn):
    return lambda ctx: RankerInputs(similarity=fn(ctx))


def _catalogue(n_aux: int) -> list[ListTemplate]:
    t = [
        ListTemplate(
            "SPEC",
            "spec-phi2",
            ("expression",),
            lambda ctx: RankerInputs(similarity=data_similarity(ctx)),
            "SPEC phi2 on the expression's sample similarity",
        ),
        ListTemplate(
            "Fisher",
            "fisher",
            ("labels",),
            lambda ctx: RankerInputs(categories=ctx.categories),
            "Fisher score on the sample labels",
        ),
        ListTemplate(
            "Pathway-FILT",
            "spec-phi2",
            ("pathways",),
            _sim(pathway_filt_similarity),
            "SPEC on the similarity of the data filtered to the chosen pathways' genes",
        ),
        ListTemplate(
            "Pathway-REL-VOTE",
            "relevance-vote",
            ("pathways",),
            lambda ctx: RankerInputs(
                functions=ctx.cached(
                    "pathway_functions_rel",
                    lambda: with_term_relevance(ctx, pathway_functions_of(ctx)),
                )
            ),
            "relevance voting over pathway membership (eq. 6.15)",
        ),
        ListTemplate(
            "GO-REL-VOTE",
            "relevance-vote",
            ("go",),
            lambda ctx: RankerInputs(
                functions=ctx.cached(
                    "go_functions_rel", lambda: with_term_relevance(ctx, go_functions_of(ctx))
                )
            ),
            "relevance voting over GO terms (eq. 6.15)",
        ),
        ListTemplate(
            "GO-MAH",
            "spec-phi2",
            ("go",),
            _sim(go_mah_similarity),
            "SPEC on the commute-time Mahalanobis similarity of the GO gene graph (Prop. 1)",
        ),
        ListTemplate(
            "GO-CAN-MAH",
            "spec-phi2",
            ("go", "relevant_genes"),
            _sim(go_can_mah_similarity),
            "GO-MAH with GO restricted to the terms of the relevant genes",
        ),
        ListTemplate(
            "GO-REL-PROP",
            "relevance-propagation",
            ("go",),
            lambda ctx: RankerInputs(
                relation=go_relation_of(ctx), functions=initial_relevance(ctx)
            ),
            "relevance propagation over the GO similarity graph (eq. 6.14)",
        ),
        ListTemplate(
            "GO-FILT",
            "spec-phi2",
            ("go", "go_term_ids"),
            _sim(go_filt_similarity),
            "SPEC on the data filtered to the genes of the chosen GO terms (Leukemia-FILT)",
        ),
        ListTemplate(
            "PPI-PROP",
            "relevance-propagation",
            ("interactions",),
            lambda ctx: RankerInputs(
                relation=ppi_relation_of(ctx), functions=initial_relevance(ctx)
            ),
            "relevance propagation over the interaction network (eq. 6.14)",
        ),
    ]
    for i in range(n_aux):
        t.append(
            ListTemplate(
                f"AUX{i + 1}-SPEC" if n_aux > 1 else "AUX-SPEC",
                "spec-phi2",
                ("aux",),
                _sim(lambda ctx, i=i: aux_similarity(ctx, i)),
                "SPEC on the auxiliary data's sample similarity",
            )
        )
    return t


def _available(ctx: Context, s: KnowledgeSources) -> set[str]:
    """The source names a list template may need (``ListTemplate.needs``) that this run has."""
    given = {
        "labels": ctx.categories is not None,
        "pathways": s.pathways is not None,
        "go": s.has_go,
        "go_term_ids": bool(s.go_term_ids),
        "interactions": s.interactions is not None,
        "aux": bool(s.aux),
        "relevant_genes": bool(ctx.relevant_genes),
    }
    return {"expression", *(name for name, present in given.items() if present)}


def kofs_plan(
    ctx: Context, sources: KnowledgeSources, lists: Sequence[str] | None = None
) -> list[ListPlan]:
    """Plans of every catalogue list the inputs allow (or the chosen ``lists``)."""
    ctx.cache["sources"] = sources
    catalogue = {t.name: t for t in _catalogue(len(sources.aux))}
    have = _available(ctx, sources)
    if lists is None:
        chosen = [t for t in catalogue.values() if set(t.needs) <= have]
    else:
        chosen = []
        for name in lists:
            if name not in catalogue:
                raise ParameterError("--lists: " + unknown_message("list", name, catalogue))
            t = catalogue[name]
            missing = set(t.needs) - have
            if missing:
                raise ParameterError(
                    f"list {name!r} needs {', '.join(sorted(missing)).replace('_', '-')} "
                    f"(give --{sorted(missing)[0].replace('_', '-')})"
                )
            chosen.append(t)
    return [
        ListPlan(name=t.name, ranker=t.ranker, build_inputs=t.build, sources=t.needs)
        for t in chosen
    ]


def msfs_plan(
    ctx: Context, sources: KnowledgeSources, *, weights: Sequence[float] | None = None
) -> list[ListPlan]:
    """MSFS (book Alg. 9): SPEC on the weighted sum of every sample similarity the inputs give
    (expression, labels S^FIS, auxiliary data, GO-MAH, Pathway-FILT)."""
    ctx.cache["sources"] = sources

    def build(ctx: Context) -> RankerInputs:
        parts = [data_similarity(ctx)]
        if ctx.categories is not None:
            parts.append(sample_similarity(ctx.expression, "label", categories=ctx.categories))
        parts += [aux_similarity(ctx, i) for i in range(len(sources.aux))]
        if sources.has_go:
            parts.append(go_mah_similarity(ctx))
        if sources.pathways is not None:
            parts.append(pathway_filt_similarity(ctx))
        if weights is not None and len(weights) != len(parts):
            raise ParameterError(
                f"--msfs-weights: {len(weights)} weights for {len(parts)} similarities "
                f"({', '.join(p.name for p in parts)})"
            )
        return RankerInputs(similarity=combine_similarities(parts, weights))

    return [
        ListPlan(
            name="MSFS", ranker="spec-phi2", build_inputs=build, sources=("expression", "knowledge")
        )
    ]


#: Catalogue lists built from the known relevant genes: "always" (their definition needs them)
#: or "unless_table" (term relevance learned from them unless a --term-relevance table is given)
#: or "start" (propagation starts from them).
SEEDED_LISTS = {
    "GO-CAN-MAH": "always",
    "GO-REL-PROP": "start",
    "PPI-PROP": "start",
    "GO-REL-VOTE": "unless_table",
    "Pathway-REL-VOTE": "unless_table",
}


def built_from(
    ctx: Context, sources: KnowledgeSources, list_names: Sequence[str]
) -> dict[str, tuple[str, ...]]:
    """The known relevant genes each catalogue list was built from (empty when none).

    A list seeded by the relevant genes (GO-CAN-MAH terms, the start of propagation, term
    relevance M_rel/M_all) must never be scored on them when its reliability is learned.
    """
    if not ctx.relevant_genes:
        return {}
    out = {}
    for name in list_names:
        how = SEEDED_LISTS.get(name)
        if how is None or (how == "unless_table" and sources.term_relevance is not None):
            continue
        out[name] = tuple(ctx.relevant_genes)
    return out
