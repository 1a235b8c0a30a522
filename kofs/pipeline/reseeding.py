"""Cross-fitting of lists seeded by the known genes, by re-seeding (issue 11, "no circularity").

A catalogue list built from the known relevant genes S (GO-CAN-MAH's terms, the start of
GO-REL-PROP / PPI-PROP / GRAPH-PROP, the term relevance M_rel/M_all of GO-REL-VOTE and
Pathway-REL-VOTE) ranks S first by construction; a weight learned from its ranks of S would be
circular. :func:`reseeded_lists` splits S into K seeded folds and rebuilds every seeded list K
times, the k-th time from the other K-1 folds (:meth:`kofs.context.Context.reseeded`: the
knowledge that does not depend on S is reused). The aggregator then observes each known gene in
the rebuild that did not know it (:mod:`kofs.aggregate.cross_fit`), so a list's reliability is
its recovery of held-out known genes, pooled over the folds; the list used for the ranking is
still the one built from all of S.

Where a list cannot be rebuilt (fewer than two seed genes, or a fold's seeds do not build it:
GO-CAN-MAH with no enriched term), it falls back to the exclusion rule -- its seed genes are
missing observations -- and the reason is recorded. Lists the run did not build (a user's
list file) are never rebuilt.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import numpy as np

from kofs.context import Context, ListPlan
from kofs.errors import KofsError, ParameterError
from kofs.pipeline.plans import filter_built
from kofs.types import Ranking

__all__ = ["DEFAULT_FOLDS", "check_folds", "reseeded_lists", "seed_folds"]

log = logging.getLogger(__name__)

#: Default number of folds of the cross-fit (docs/aggregation.md, "No circularity").
DEFAULT_FOLDS = 5


def check_folds(k: int) -> int:
    """``k`` as the number of folds: 0 (exclusion rule, no rebuilding) or at least 2."""
    try:
        k = int(k)
    except (TypeError, ValueError):
        raise ParameterError(f"cross-fit folds must be an integer, got {k!r}") from None
    if k < 0 or k == 1:
        raise ParameterError(
            f"cross-fit folds must be 0 (exclude the seed genes) or at least 2, got {k}"
        )
    return k


def seed_folds(genes: Sequence[str], k: int, seed: int) -> list[tuple[str, ...]]:
    """Split ``genes`` into ``k`` folds of (almost) equal size: the genes sorted by id, shuffled
    with ``seed`` and dealt round-robin (independent of the genes' order). Each fold sorted."""
    ids = sorted(set(genes))
    perm = np.random.default_rng(seed).permutation(len(ids))
    return [tuple(sorted(ids[i] for i in perm[f::k])) for f in range(k)]


def reseeded_lists(
    context: Context,
    plans: Sequence[ListPlan],
    built_from: Mapping[str, Sequence[str]],
    *,
    build: Callable[..., list[Ranking]],
    folds: int = DEFAULT_FOLDS,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    threads: int | None = None,
    timings: dict[str, float] | None = None,
    on_gene_set: Collection[str] | None = None,
) -> tuple[dict[str, list[tuple[tuple[str, ...], Ranking]]], dict[str, str]]:
    """Rebuild every seeded list once per fold of its seed genes.

    Parameters
    ----------
    context : Context
        The run's context (its cache holds the knowledge already built).
    plans : sequence of ListPlan
        The run's plans; those named in ``built_from`` are rebuilt.
    built_from : mapping list name -> seed genes
        :func:`kofs.pipeline.plans.built_from`.
    build : callable
        ``build(context, plans, params=..., threads=...) -> list of Ranking``: how the run
        builds its lists (:func:`kofs.pipeline.build.build_lists`).
    folds : int
        K (:func:`check_folds`); 0 rebuilds nothing.
    params, threads
        As :func:`kofs.pipeline.build.build_lists`.
    timings : dict, optional
        Gets ``cross_fit`` (seconds).
    on_gene_set : collection of str, optional
        The lists whose genes in ``built_from`` are the gene set their similarity is built on
        (the FILT lists: a fold leaves genes out of the similarity,
        :meth:`Context.without_filter_genes`, not out of the known genes); default: those of
        the plans' names that are FILT lists of the catalogue
        (:func:`kofs.pipeline.plans.filter_built`).

    Returns
    -------
    held_out : dict list name -> [(held-out genes, rebuilt Ranking), ...]
        For :func:`kofs.aggregate.aggregate` (``held_out=``).
    excluded : dict list name -> reason
        Seeded lists left to the exclusion rule, with the reason.
    """
    k = check_folds(folds)
    held: dict[str, list[tuple[tuple[str, ...], Ranking]]] = {}
    excluded: dict[str, str] = {}
    seeded = [p for p in plans if built_from.get(p.name)]
    if not seeded:
        return held, excluded
    if k == 0:
        return held, {p.name: "cross-fit off (0 folds)" for p in seeded}
    if on_gene_set is None:
        on_gene_set = {p.name for p in seeded if filter_built(p.name, context.sources)}
    t0 = time.perf_counter()
    groups: dict[tuple[str, ...], list[ListPlan]] = {}
    for p in seeded:
        groups.setdefault(tuple(sorted(set(built_from[p.name]))), []).append(p)
    for seeds, group in groups.items():
        kk = min(k, len(seeds))
        if kk < 2:
            for p in group:
                excluded[p.name] = f"{len(seeds)} seed gene: nothing to hold out"
            continue
        for fold in seed_folds(seeds, kk, context.seed):
            out = set(fold)
            rest = tuple(g for g in seeds if g not in out)
            # one context per fold and kind, shared by the group's lists: a FILT list's genes
            # are those of its similarity, not known genes
            fold_ctx: dict[bool, Context] = {}
            for p in group:
                if p.name in excluded:
                    continue
                on_set = p.name in on_gene_set
                if on_set not in fold_ctx:
                    fold_ctx[on_set] = (
                        context.without_filter_genes(fold) if on_set else context.reseeded(rest)
                    )
                own = {n: v for n, v in (params or {}).items() if n in (p.name, p.ranker)}
                try:
                    (ranking,) = build(fold_ctx[on_set], [p], params=own, threads=threads)
                except KofsError as exc:
                    excluded[p.name] = f"not rebuilt from {len(rest)} of the seed genes: {exc}"
                    held.pop(p.name, None)
                    continue
                held.setdefault(p.name, []).append((fold, ranking))
    for name, why in excluded.items():
        log.warning("%s: seed genes excluded from its scoring (%s)", name, why)
    if timings is not None:
        timings["cross_fit"] = round(time.perf_counter() - t0, 4)
    log.info(
        "cross-fit: %d seeded lists rebuilt %d times in %.2f s",
        len(held),
        k,
        time.perf_counter() - t0,
    )
    return held, excluded
