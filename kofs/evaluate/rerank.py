"""Re-running a KOFS ranking on a subset of samples (the honest protocol's selector).

:class:`KofsRanking` builds the catalogue lists (:func:`kofs.plans.kofs_plan` /
:func:`kofs.pipeline.run_plan`, the same code :func:`kofs.pipeline.rank` runs) and several
aggregations of them (e.g. KOFS_Borda, KOFS_Prob, KOFS_Prob-SUP: the same lists fused by Borda,
unsupervised EM and supervised EM) for any set of samples. Knowledge sources are read once by
the caller; internal knowledge that depends on gene ids only (the GO similarity graph, GO and
pathway incidence, the interaction graph, term relevance learned from known genes) is built
once and reused across folds. Everything built from expression values (sample similarities,
Mahalanobis similarities, filtered-data similarities, data-driven rankings) is rebuilt per
call, so a call on the training samples of a fold never sees a test sample. Lists of the
knowledge-only rankers (relevance voting/propagation) do not use expression values; they are
computed once and only the runner's constant-gene mask is redone per call.

With ``KnowledgeSources.term_relevance`` unset and no known genes, term relevance is learned
from the data; it is then rebuilt per call as well.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kofs.errors import ParameterError
from kofs.pipeline import Context, aggregate_supervised, relevant_gene_ids
from kofs.rankers import run_ranker
from kofs.types import AggregateRanking, Expression, Ranking, SampleCategories

log = logging.getLogger(__name__)

__all__ = ["Aggregation", "KofsRanking", "GENE_LEVEL_KEYS"]

# cache entries of kofs.plans that depend on gene ids (and known genes) only, never on values
GENE_LEVEL_KEYS = (
    "go_relation",
    "go_functions",
    "go_functions_direct",
    "pathway_functions",
    "ppi_relation",
    "relevant_functions",
)
# term relevance is gene-level only when learned from known genes or given as a table
_RELEVANCE_KEYS = ("go_functions_rel", "pathway_functions_rel")
# rankers whose scores use knowledge only (the matrix only for the constant-gene mask)
KNOWLEDGE_ONLY_RANKERS = ("relevance-vote", "relevance-propagation")


@dataclass(frozen=True)
class Aggregation:
    """One fused list: ``name`` (e.g. ``"KOFS_Prob-SUP"``), aggregator ``method``, and the
    known genes G of supervised EM (``None`` = unsupervised). ``supervision="labels"``: list
    weights = cross-validated predictive value on the samples :meth:`KofsRanking.run` gets
    (the training samples of an outer fold in the honest protocol)."""

    name: str
    method: str = "em"
    relevant_genes: tuple[str, ...] | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    supervision: str | None = None  # none | genes | labels (kofs.pipeline.SUPERVISION)
    bootstrap: int = 0


@dataclass
class KofsRanking:
    """The catalogue lists plus their aggregations, re-runnable on sample subsets.

    Parameters
    ----------
    sources : kofs.plans.KnowledgeSources
        Read once (:func:`kofs.sources.read_sources`).
    lists : sequence of str
        Catalogue list names (book Table 6.3 names: SPEC, Fisher, Pathway-FILT, ...).
    aggregations : sequence of Aggregation
    list_relevant_genes : sequence of str, optional
        Known genes used to *build* lists (term relevance M_rel/M_all, GO-CAN-MAH terms, start of
        propagation): the book's cancer-gene annotation.
    rename : mapping, optional
        Display names of lists (e.g. ``{"GO-FILT": "Leukemia-FILT"}``).
    params : mapping, optional
        ``{list_or_ranker: {param: value}}``.
    seed : int
    """

    sources: Any
    lists: Sequence[str]
    aggregations: Sequence[Aggregation] = ()
    list_relevant_genes: Sequence[str] | None = None
    rename: Mapping[str, str] = field(default_factory=dict)
    params: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    seed: int = 0
    _shared: dict[str, Any] = field(default_factory=dict, repr=False)

    def names(self) -> list[str]:
        return [self.rename.get(n, n) for n in self.lists] + [a.name for a in self.aggregations]

    def run(
        self, expression: Expression, labels: SampleCategories | None = None
    ) -> dict[str, Ranking | AggregateRanking]:
        """Every list and aggregation on ``expression`` (ordered as :meth:`names`).

        ``labels`` must be aligned to ``expression.samples`` (Fisher needs them).
        """
        from kofs.plans import built_from, kofs_plan

        rel = None
        if self.list_relevant_genes is not None:
            rel = self._mapped(expression, "list_relevant_genes", self.list_relevant_genes)
        ctx = Context(expression=expression, categories=labels, relevant_genes=rel, seed=self.seed)
        ctx.cache.update(self._shared)
        constant = np.ptp(expression.values, axis=0) == 0
        gene_level_relevance = bool(rel) or self.sources.term_relevance is not None
        out: dict[str, Ranking | AggregateRanking] = {}
        for plan in kofs_plan(ctx, self.sources, list(self.lists)):
            name = self.rename.get(plan.name, plan.name)
            cached = self._shared.get(f"list:{plan.name}")
            if cached is not None:
                # knowledge-only ranker: scores do not depend on values; redo the runner's mask
                scores = np.where(constant, np.nan, cached.scores)
                r = Ranking(
                    name, cached.genes, scores, cached.higher_is_better, params=cached.params
                )
            else:
                p = {
                    **plan.params,
                    **self.params.get(plan.ranker, {}),
                    **self.params.get(plan.name, {}),
                }
                r = run_ranker(
                    plan.ranker,
                    expression,
                    plan.build_inputs(ctx),
                    seed=self.seed,
                    list_name=name,
                    params=p,
                )
                if plan.ranker in KNOWLEDGE_ONLY_RANKERS and gene_level_relevance:
                    self._shared[f"list:{plan.name}"] = r
            out[name] = r
        keys = GENE_LEVEL_KEYS
        if gene_level_relevance:
            keys = keys + _RELEVANCE_KEYS
        for key in keys:
            if key in ctx.cache:
                self._shared.setdefault(key, ctx.cache[key])
        renamed = list(out.values())
        seeded = {
            self.rename.get(n, n): genes
            for n, genes in built_from(ctx, self.sources, list(self.lists)).items()
        }
        for agg in self.aggregations:
            G = None
            if agg.relevant_genes is not None:
                G = self._mapped(expression, f"G:{agg.name}", agg.relevant_genes)
                if not G:
                    raise ParameterError(f"{agg.name}: none of its known genes is in the matrix")
            level = agg.supervision or ("genes" if G is not None else "none")
            actx = Context(
                expression=expression,
                categories=labels,
                relevant_genes=G if level == "genes" else None,
                seed=self.seed,
            )
            out[agg.name] = aggregate_supervised(
                actx,
                renamed,
                agg.method,
                params=agg.params,
                supervision=level,
                built_from=seeded,
                bootstrap=agg.bootstrap,
            )
        return out

    def _mapped(self, expression: Expression, key: str, genes: Sequence[str]) -> tuple[str, ...]:
        """Known genes as matrix ids, mapped once per gene set (folds share the genes)."""
        hit = self._shared.get(f"ids:{key}")
        if hit is None or hit[0] != expression.genes:
            hit = (expression.genes, relevant_gene_ids(expression, genes))
            self._shared[f"ids:{key}"] = hit
        return hit[1]

    def orders(
        self, expression: Expression, labels: SampleCategories | None = None
    ) -> dict[str, np.ndarray]:
        """Gene orders (column indices, best first) of :meth:`run`."""
        return {name: r.order() for name, r in self.run(expression, labels).items()}
