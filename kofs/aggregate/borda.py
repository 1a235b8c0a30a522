"""Borda count (KOFS_Borda): the positional rank-aggregation baseline of book ch. 6.

A gene at rank ``r`` of a list of ``M`` genes earns ``M - r + 1`` points; the fused score is the
sum of the points over the L lists (ALGORITHMS.md §7.4). Averaged ranks give tied genes the
average of the points of the positions they share; a gene missing from a list sits in the
averaged bottom tie block (:func:`kofs.aggregate.partial.complete_ranks`, ranks
n_l + 1 .. N of the universe averaged).

Reference: Dwork C, Kumar R, Naor M, Sivakumar D (2001) Rank aggregation methods for the web.
WWW '01, 613-622 (book ref. [46]); Zhao & Liu (2012) *Spectral Feature Selection for Data
Mining*, sec. 6.4.
"""

from __future__ import annotations

import numpy as np

from kofs.aggregate.em import check_rank_matrix
from kofs.registry import aggregator

__all__ = ["borda_count"]


def borda_count(ranks: np.ndarray) -> np.ndarray:
    """Borda points of every gene.

    Parameters
    ----------
    ranks : ndarray of shape (m, L)
        Ranks, 1 = best, ties averaged.

    Returns
    -------
    ndarray of shape (m,)
        ``sum_l (M - r_{l,i} + 1)`` with ``M = m``; higher is better. Equivalent to ascending
        rank sum; the final tie-break by gene position is done by the caller's ranking.
    """
    R = np.asarray(ranks, dtype=np.float64)
    M, L = R.shape
    return L * (M + 1.0) - R.sum(axis=1)


@aggregator(
    "borda",
    summary="Borda count: sum over lists of M - rank + 1 points (KOFS_Borda).",
    reference="Dwork et al. (2001) WWW '01:613-622; Zhao & Liu (2012) book sec. 6.4",
)
def _borda(R: np.ndarray, *, relevant: np.ndarray | None):
    """Registry adapter of :func:`borda_count` (no weights, no relevant genes)."""
    R = check_rank_matrix(R, relevant)
    return borda_count(R), None, {}
