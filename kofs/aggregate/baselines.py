"""Cheap, deterministic rank-statistic aggregators: mean, median, geometric mean and minimum rank.

Each aggregator turns the (m genes x L lists) matrix of average ranks (1 = best) into one
statistic per gene; the score is the *negated* statistic, so that higher is better as the
registry requires. They are the order statistics of R RobustRankAggreg's ``method = "mean"``,
``"median"``, ``"geom.mean"`` and ``"min"`` (Kolde et al. 2012), computed on raw ranks instead of
ranks divided by m (same order; the RRA golden tests check the values up to that factor).
"""

from __future__ import annotations

import numpy as np

from kofs.aggregate.em import check_rank_matrix
from kofs.registry import aggregator

__all__ = [
    "geometric_mean_rank",
    "mean_rank",
    "median_rank",
    "min_rank",
]

_REFERENCE = (
    "Kolde R, Laur S, Adler P, Vilo J (2012) Robust rank aggregation for gene list integration "
    "and meta-analysis. Bioinformatics 28:573-580 (baseline statistics of RobustRankAggreg)"
)


def mean_rank(ranks: np.ndarray) -> np.ndarray:
    """Mean rank of each gene over the lists, shape (m,); lower is better."""
    return np.asarray(ranks, dtype=np.float64).mean(axis=1)


def median_rank(ranks: np.ndarray) -> np.ndarray:
    """Median rank of each gene over the lists (mean of the two middle ranks for even L)."""
    return np.median(np.asarray(ranks, dtype=np.float64), axis=1)


def geometric_mean_rank(ranks: np.ndarray) -> np.ndarray:
    """Geometric mean ``exp(mean_l log r_{l,i})`` of each gene's ranks (ranks >= 1)."""
    return np.exp(np.log(np.asarray(ranks, dtype=np.float64)).mean(axis=1))


def min_rank(ranks: np.ndarray) -> np.ndarray:
    """Best (smallest) rank of each gene over the lists."""
    return np.asarray(ranks, dtype=np.float64).min(axis=1)


def _adapter(statistic):
    def run(R: np.ndarray, *, relevant: np.ndarray | None):
        R = check_rank_matrix(R, relevant)
        return -statistic(R), None, {}

    run.__doc__ = f"Registry adapter: score = -{statistic.__name__}(R)."
    return run


aggregator(
    "mean-rank",
    summary="Mean rank over the lists (ascending); cheap baseline.",
    reference=_REFERENCE,
)(_adapter(mean_rank))
aggregator(
    "median-rank",
    summary="Median rank over the lists (ascending); robust to one outlying list.",
    reference=_REFERENCE,
)(_adapter(median_rank))
aggregator(
    "geometric-mean",
    summary="Geometric mean of the ranks (ascending); rewards a few very high ranks.",
    reference=_REFERENCE,
)(_adapter(geometric_mean_rank))
aggregator(
    "min-rank",
    summary="Best rank in any list (ascending); many ties, a union-like baseline.",
    reference=_REFERENCE,
)(_adapter(min_rank))
