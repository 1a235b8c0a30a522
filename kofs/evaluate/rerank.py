"""Re-running a KOFS ranking on a subset of samples (the honest protocol's selector).

:class:`KofsRanking` builds the catalogue lists (:func:`kofs.pipeline.plans.kofs_plan` and
:func:`kofs.pipeline.build.build_lists`, the code every run uses, with its memory checks and thread
limits) and several aggregations of them (e.g. KOFS_Borda, KOFS_Prob, KOFS_Prob-SUP: the same
lists fused by Borda, unsupervised EM and supervised EM) for any set of samples. Knowledge
sources are read once by the caller; internal knowledge that depends on gene ids only (the GO
similarity graph, GO and pathway incidence, the interaction graph, term relevance learned from
known genes) is built once and shared across calls (:attr:`kofs.context.Context.shared`).
Everything built from expression values (sample similarities, Mahalanobis similarities,
filtered-data similarities, data-driven rankings, term relevance learned from the data) is
rebuilt per call, so a call on the training samples of a fold never sees a test sample.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from kofs._compute.canonical import canonicalize, restore_aggregate, restore_ranking
from kofs.context import Context
from kofs.errors import ParameterError
from kofs.evaluate.known import KnownGenes
from kofs.evaluate.split import SplitHalf, SplitHalfResult, split_half
from kofs.pipeline.build import build_lists
from kofs.pipeline.rank import relevant_gene_ids
from kofs.pipeline.reseeding import reseeded_lists
from kofs.pipeline.supervision import aggregate_supervised
from kofs.progress import Progress
from kofs.registry import AGGREGATORS, DEFAULT_AGGREGATOR
from kofs.types import AggregateRanking, Expression, Ranking, SampleCategories

log = logging.getLogger(__name__)

__all__ = ["Aggregation", "KofsRanking"]

#: names of the gene sets of :meth:`KofsRanking.gene_sets`
_SEEDS, _SUPERVISION = "list seeds", "supervision of "


@dataclass(frozen=True)
class Aggregation:
    """One fused list: ``name`` (e.g. ``"KOFS_Prob-SUP"``), aggregator ``method``, and the
    known genes G of supervised EM (``None`` = unsupervised). ``supervision="labels"``: list
    weights = cross-validated predictive value on the samples :meth:`KofsRanking.run` gets
    (the training samples of an outer fold in the honest protocol)."""

    name: str
    method: str = DEFAULT_AGGREGATOR
    relevant_genes: tuple[str, ...] | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    supervision: str | None = None  # none | genes | labels (kofs.pipeline.supervision.SUPERVISION)
    bootstrap: int = 0


@dataclass
class KofsRanking:
    """The catalogue lists plus their aggregations, re-runnable on sample subsets.

    Parameters
    ----------
    sources : kofs.sources.KnowledgeSources
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
    cross_fit : int
        K of the cross-fit of the seeded lists for aggregators with list context
        (``reliability``; :func:`kofs.pipeline.reseeding.reseeded_lists`); 0 = exclusion.
    """

    sources: Any
    lists: Sequence[str]
    aggregations: Sequence[Aggregation] = ()
    list_relevant_genes: Sequence[str] | None = None
    rename: Mapping[str, str] = field(default_factory=dict)
    params: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    seed: int = 0
    cross_fit: int = 5
    _shared: dict[Any, Any] = field(default_factory=dict, repr=False)

    def names(self) -> list[str]:
        return [self.rename.get(n, n) for n in self.lists] + [a.name for a in self.aggregations]

    def run(
        self,
        expression: Expression,
        labels: SampleCategories | None = None,
        *,
        drop_unbuildable: bool = False,
    ) -> dict[str, Ranking | AggregateRanking]:
        """Every list and aggregation on ``expression`` (ordered as :meth:`names`).

        ``labels`` must be aligned to ``expression.samples`` (Fisher needs them).
        ``drop_unbuildable``: a list seeded by the known genes that cannot be built from them
        (GO-CAN-MAH with no enriched GO term) is left out, with a warning, and the
        aggregations fuse the others (the random seeds of the split-half null).
        """
        from kofs.pipeline.plans import built_from, filter_built, kofs_plan

        canon = canonicalize(expression, labels)  # order-free results, as in pipeline.rank
        expression, labels = canon.expression, canon.labels
        rel = None
        if self.list_relevant_genes is not None:
            rel = self._mapped(expression, "list_relevant_genes", self.list_relevant_genes)
        ctx = Context(
            expression=expression,
            categories=labels,
            relevant_genes=rel,
            sources=self.sources,
            seed=self.seed,
            shared=self._shared,
        )
        plans = [
            replace(p, name=self.rename.get(p.name, p.name))
            for p in kofs_plan(ctx, list(self.lists), warn=False)
        ]
        params = {self.rename.get(k, k): v for k, v in self.params.items()}
        if drop_unbuildable:
            seeds_of = {self.rename.get(n, n) for n in built_from(ctx, list(self.lists))}
            plans, lists = _buildable(ctx, plans, params, seeded=seeds_of)
        else:
            lists = build_lists(ctx, plans, params=params)
        out: dict[str, Ranking | AggregateRanking] = {r.name: r for r in lists}
        built = {p.name for p in plans}
        seeded = {
            self.rename.get(n, n): genes
            for n, genes in built_from(ctx, list(self.lists)).items()
            if self.rename.get(n, n) in built
        }
        held_out: dict = {}
        if seeded and any(AGGREGATORS.get(a.method).context for a in self.aggregations):
            on_set = {self.rename.get(n, n) for n in self.lists if filter_built(n, ctx.sources)}
            held_out, _ = reseeded_lists(
                ctx,
                plans,
                seeded,
                build=build_lists,
                folds=self.cross_fit,
                params=params,
                on_gene_set=on_set,
            )
        for agg in self.aggregations:
            G = None
            if agg.relevant_genes is not None:
                G = self._mapped(expression, f"G:{agg.name}", agg.relevant_genes)
                if not G:
                    raise ParameterError(f"{agg.name}: none of its known genes is in the matrix")
            level = agg.supervision or ("genes" if G is not None else "none")
            # the lists' context (sources, caches), as ``kofs rank`` fuses: the default
            # fusion's prior has the study-bias covariate (annotations and interactions per
            # gene), so that an aggregation row of ``reproduce`` is the fusion a user runs
            actx = replace(ctx, relevant_genes=G if level == "genes" else None)
            out[agg.name] = aggregate_supervised(
                actx,
                lists,
                agg.method,
                params=agg.params,
                supervision=level,
                built_from=seeded,
                held_out=held_out if AGGREGATORS.get(agg.method).context else None,
                bootstrap=agg.bootstrap,
            )
        return {
            k: restore_ranking(v, canon) if isinstance(v, Ranking) else restore_aggregate(v, canon)
            for k, v in out.items()
        }

    def _mapped(self, expression: Expression, key: str, genes: Sequence[str]) -> tuple[str, ...]:
        """Known genes as matrix ids, mapped once per gene set (folds share the genes)."""
        skey = ("ids", key, expression.genes, tuple(genes))
        if skey not in self._shared:
            self._shared[skey] = relevant_gene_ids(expression, genes)
        return self._shared[skey]

    def orders(
        self, expression: Expression, labels: SampleCategories | None = None
    ) -> dict[str, np.ndarray]:
        """Gene orders (column indices, best first) of :meth:`run`."""
        return {name: r.order() for name, r in self.run(expression, labels).items()}

    def origins(self) -> dict[str, tuple[str, str | None]]:
        """``{name: (kind, ranker)}`` of every list and aggregation (:meth:`names` order): kind
        ``data`` (built from the matrix and labels only), ``knowledge`` or ``aggregation``."""
        from kofs.pipeline.plans import list_origin

        out: dict[str, tuple[str, str | None]] = {}
        for n in self.lists:
            o = list_origin(n, self.sources)
            kind = "knowledge" if o is None or not o[1] else "data"
            out[self.rename.get(n, n)] = (kind, None if o is None else o[0])
        out.update({a.name: ("aggregation", None) for a in self.aggregations})
        return out

    def gene_sets(self, expression: Expression) -> dict[str, tuple[str, ...]]:
        """Every known gene set the run builds or fits from, as matrix ids: ``list seeds`` and
        ``supervision of <aggregation>`` (the genes supervising an aggregation)."""
        out = {}
        if self.list_relevant_genes is not None:
            out[_SEEDS] = self._mapped(expression, "list_relevant_genes", self.list_relevant_genes)
        for a in self.aggregations:
            if a.relevant_genes is not None:
                out[_SUPERVISION + a.name] = self._mapped(
                    expression, f"G:{a.name}", a.relevant_genes
                )
        return out

    def with_gene_sets(self, gene_sets: Mapping[str, Sequence[str]]) -> KofsRanking:
        """The same run built from other gene sets (keys of :meth:`gene_sets`); it shares this
        run's gene-level knowledge."""
        return replace(
            self,
            list_relevant_genes=(
                tuple(gene_sets[_SEEDS]) if _SEEDS in gene_sets else self.list_relevant_genes
            ),
            aggregations=[
                replace(a, relevant_genes=tuple(gene_sets[_SUPERVISION + a.name]))
                if _SUPERVISION + a.name in gene_sets
                else a
                for a in self.aggregations
            ],
        )

    def split_half(
        self,
        expression: Expression,
        labels: SampleCategories | None = None,
        *,
        known: KnownGenes,
        settings: SplitHalf,
        progress: Progress | None = None,
    ) -> SplitHalfResult:
        """Split-half evaluation of every list and aggregation on ``known``
        (:func:`kofs.evaluate.split.split_half`): per repeat the lists are built and the
        aggregations fitted on all samples from :meth:`gene_sets` without the held-out genes."""

        def build(sets: Mapping[str, tuple[str, ...]], null: bool) -> dict[str, np.ndarray]:
            runs = self.with_gene_sets(sets).run(expression, labels, drop_unbuildable=null)
            return {n: np.asarray(r.ranks, dtype=np.float64) for n, r in runs.items()}

        return split_half(
            build,
            known.in_matrix(expression),
            genes=expression.genes,
            gene_sets=self.gene_sets(expression),
            settings=settings,
            lists=self.origins(),
            progress=progress,
        )


def _buildable(
    ctx: Context, plans: Sequence[Any], params: Mapping[str, Any], *, seeded: set[str]
) -> tuple[list[Any], list[Ranking]]:
    """Build each plan; a seeded one (its name in ``seeded``) that cannot be built from the
    context's known genes is left out with a warning."""
    from kofs.errors import KofsError

    kept, lists = [], []
    for p in plans:
        own = {n: v for n, v in params.items() if n in (p.name, p.ranker)}
        try:
            (ranking,) = build_lists(ctx, [p], params=own)
        except KofsError as exc:
            if p.name not in seeded:
                raise
            log.warning("%s left out: it cannot be built from these known genes (%s)", p.name, exc)
            continue
        kept.append(p)
        lists.append(ranking)
    return kept, lists
