"""Rank aggregation: fuse several :class:`~kofs.types.Ranking` lists into one.

Every aggregator is registered in :data:`kofs.registry.AGGREGATORS`; :func:`aggregate` is the
shared runner (alignment of gene sets, rank matrix, relevant-gene mask, wrapping).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from kofs.canonical import canonical_rows
from kofs.errors import ParameterError
from kofs.registry import AGGREGATORS, resolve_params
from kofs.types import AggregateRanking, Ranking

from kofs.aggregate import _methods  # noqa: E402,F401  isort: skip  (registers every aggregator)

__all__ = ["aggregate", "rank_matrix", "AGGREGATORS"]


def rank_matrix(rankings: Sequence[Ranking]) -> tuple[tuple[str, ...], np.ndarray]:
    """Genes (union, in first-seen order) and the (m x L) rank matrix of ``rankings``.

    A gene missing from a list is tied at the bottom of that list (ranks |list|+1..M averaged),
    as ALGORITHMS.md §7.4 prescribes.
    """
    if not rankings:
        raise ParameterError("aggregation needs at least one ranked list")
    genes: dict[str, int] = {}
    for r in rankings:
        for g in r.genes:
            genes.setdefault(g, len(genes))
    M = len(genes)
    R = np.empty((M, len(rankings)), dtype=np.float64)
    for j, r in enumerate(rankings):
        if len(r.genes) == M and r.genes == tuple(genes):
            R[:, j] = r.ranks
            continue
        col = np.full(M, np.nan)
        idx = np.fromiter((genes[g] for g in r.genes), dtype=np.int64, count=len(r.genes))
        col[idx] = r.ranks
        n_missing = int(np.isnan(col).sum())
        col[np.isnan(col)] = len(r.genes) + (n_missing + 1) / 2.0
        R[:, j] = col
    return tuple(genes), R


def aggregate(
    rankings: Sequence[Ranking],
    method: str = "em",
    *,
    relevant_genes: Iterable[str] | None = None,
    params: Mapping[str, Any] | None = None,
) -> AggregateRanking:
    """Fuse ranked lists with the registered aggregator ``method``.

    Parameters
    ----------
    rankings : sequence of Ranking
        The L lists; their names must be distinct.
    method : str
        ``"em"`` (KOFS probabilistic model, eqs 6.16-6.19), ``"borda"``, ... (``kofs methods``).
    relevant_genes : iterable of str, optional
        Known-relevant genes G for supervised EM. Genes absent from the lists are dropped with
        a warning by the caller; none left raises :class:`~kofs.errors.ParameterError`.
    params : mapping, optional
        Aggregator parameters.

    Returns
    -------
    AggregateRanking
    """
    spec = AGGREGATORS.get(method)
    names = [r.name for r in rankings]
    if len(set(names)) != len(names):
        raise ParameterError(f"ranked lists must have distinct names, got {names}")
    resolved = resolve_params(f"aggregator {method!r}", spec.params, params or {})
    genes, R = rank_matrix(rankings)
    relevant = None
    if relevant_genes is not None:
        if not spec.supports_relevant:
            raise ParameterError(f"aggregator {method!r} does not use relevant genes; use 'em'")
        wanted = set(relevant_genes)
        relevant = np.fromiter((g in wanted for g in genes), dtype=bool, count=len(genes))
        if not relevant.any():
            raise ParameterError("none of the relevant genes is among the ranked genes")
    # the kernel sees the genes sorted by id: the result does not depend on the lists' order
    rows = canonical_rows(genes)
    scores_c, weights, info = spec.func(
        R[rows], relevant=None if relevant is None else relevant[rows], **resolved
    )
    scores = np.empty(len(genes), dtype=np.float64)
    scores[rows] = scores_c
    return AggregateRanking(
        method=method,
        genes=genes,
        scores=scores,
        list_names=names,
        list_ranks=R,
        weights=weights,
        info={"method": method, **resolved, **info},
    )
