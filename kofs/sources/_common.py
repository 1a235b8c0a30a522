"""Internal knowledge every source may build on: the expression's sample similarity, the memory
check of sample similarities, term relevance, the starting relevance of propagation, and the
gene graph of a network source (interactions, graph files)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kofs.errors import ParameterError
from kofs.resources import check_memory, estimate_dense_similarity, estimate_mahalanobis

if TYPE_CHECKING:  # the builders import scipy and the kernels when a list is built
    from kofs.context import Context
    from kofs.types import FeatureFunctions, FeatureRelation, SampleSimilarity


def check_similarity_memory(
    ctx: Context, what: str, *, n_genes: int | None = None, nnz: int = 0
) -> None:
    """Fail early when a sample similarity (dense up to ``AUTO_DENSE_MAX`` samples; GO-MAH
    when ``n_genes``) would exceed ``ctx.max_memory``."""
    from kofs.knowledge.similarity import AUTO_DENSE_MAX

    n = ctx.expression.n_samples
    if n_genes is not None:
        need = estimate_mahalanobis(n, n_genes, nnz=nnz)
    elif n <= AUTO_DENSE_MAX:
        need = estimate_dense_similarity(n)
    else:
        return  # sparse kNN graph: linear in n
    check_memory(
        need,
        limit=ctx.max_memory,
        what=f"{what} similarity ({n} samples)",
        suggestion="use fewer samples or genes, or leave the lists that need it out (--lists)",
    )


def data_similarity(ctx: Context) -> SampleSimilarity:
    """The expression's own sample similarity (SPEC, MSFS)."""

    from kofs.knowledge.similarity import sample_similarity

    def build() -> SampleSimilarity:
        check_similarity_memory(ctx, "expression")
        return sample_similarity(ctx.expression, "auto")

    return ctx.cached("data_similarity", build)


def term_relevance_is_gene_level(ctx: Context) -> bool:
    """Term relevance depends on gene ids only when it is a user table or learned from known
    genes (learned from the data otherwise)."""
    return ctx.source("term_relevance") is not None or bool(ctx.relevant_genes)


def with_term_relevance(ctx: Context, functions: FeatureFunctions, terms: str) -> FeatureFunctions:
    """Term relevance: a user table, else learned from relevant genes (M_rel/M_all), else from
    the data (enrichment of high-variance genes; :mod:`kofs.knowledge.functions`). ``terms``
    says what the terms of ``functions`` are, for the user (a table naming none of them is an
    error)."""
    from kofs.knowledge.functions import learn_relevance, learn_relevance_from_data, with_relevance

    table = ctx.source("term_relevance")
    if table is not None:
        known = set(functions.terms)
        values = {t: v for t, v in table.items() if t in known}
        if not values:
            raise ParameterError(
                f"--term-relevance names none of {terms}; add rows for them, or leave out the "
                "lists that vote with them (--lists)"
            )
        return with_relevance(functions, values)
    if ctx.relevant_genes:
        ctx.note_relevant_use()
        return learn_relevance(functions, list(ctx.relevant_genes), expression=ctx.expression)
    return learn_relevance_from_data(functions, ctx.expression)


#: What propagation over a network needs besides the network (a list template's ``needs``): a
#: starting relevance, from the known relevant genes or a source with ``relevance`` (GO,
#: pathways); :func:`has_start` says whether a run has one
START = "starting_relevance"

#: Why a propagation list cannot be built without :data:`START`, and what to give
NO_START = (
    "relevance propagation over a network (PPI-PROP, GRAPH-PROP) needs a starting relevance: give "
    "--relevant-genes, --go with --go-annotations, or --pathways"
)


def has_start(relevant_genes: bool, given: set[str]) -> bool:
    """Whether propagation can start: known relevant genes, or a given source (``given``: the
    names of the run's sources) with a starting relevance."""
    from kofs.sources import SOURCES

    return relevant_genes or any(s.relevance is not None and s.name in given for s in SOURCES)


def initial_relevance(ctx: Context) -> FeatureFunctions:
    """Where propagation starts: the known relevant genes, else the first source (in
    ``relevance_order``) that gives function votes (GO, then pathways)."""
    from kofs.knowledge.functions import relevant_genes_functions
    from kofs.sources import SOURCES

    if ctx.relevant_genes:
        return ctx.cached(
            "relevant_functions",
            lambda: relevant_genes_functions(ctx.expression, list(ctx.relevant_genes or ())),
            gene_level=True,
            uses_relevant=True,
        )
    for spec in sorted(SOURCES, key=lambda s: s.relevance_order):
        if spec.relevance is not None and ctx.source(spec.name) is not None:
            return spec.relevance(ctx)
    raise ParameterError(NO_START)


@dataclass(frozen=True)
class NetworkData:
    """What a network source reads: its interactions
    (:class:`~kofs.io.interaction_table.Interactions`) and the keyword arguments of their
    conversion to a gene graph (:func:`~kofs.knowledge.network.interactions_to_relation`)."""

    interactions: Any
    options: Mapping[str, Any] = field(default_factory=dict)


def network_relation(ctx: Context, source: str, key: str) -> FeatureRelation:
    """The gene graph of network source ``source`` (its :class:`NetworkData`) matched to the
    matrix's genes, coverage recorded; kept per run under ``key`` (gene level)."""
    from kofs.knowledge.network import interactions_to_relation

    d = ctx.source(source)
    return ctx.cached(
        key,
        lambda: ctx.record(
            interactions_to_relation(
                d.interactions, ctx.expression, id_map=ctx.sources.id_map, **d.options
            )
        ),
        gene_level=True,
    )
