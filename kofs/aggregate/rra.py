"""Robust rank aggregation (RRA) of Kolde et al. (2012), as in R RobustRankAggreg 1.2.1.

Each gene's ranks are normalised to ``u_{l,i} = r_{l,i} / N`` (N = size of the gene universe,
by default the number of distinct genes in all lists, as ``rankMatrix()``), a gene that list l
does not contain gets ``u_{l,i} = 1`` (RobustRankAggreg's ``rankMatrix(full = FALSE)``), and
the L values are sorted, ``u_(1) <= ... <= u_(L)``. Under the null hypothesis of uninformative
lists the u are iid U(0, 1), so ``u_(k)`` follows ``Beta(k, L - k + 1)``; the beta score is
``beta_k = I_{u_(k)}(k, L - k + 1)`` and the rho score ``rho = min_k beta_k``.
RobustRankAggreg reports the Bonferroni-corrected ``p = min(1, L rho)`` (default,
``exact = FALSE``) or the exact null probability ``P(rho' <= rho)`` (``exact = TRUE``). kofs
computes the exact one from the first crossing of the thresholds ``qbeta(rho, k, L - k + 1)``
with positive terms only (:mod:`kofs.aggregate._order_stats`); R's ``1 - stuart(...)`` gives
the same number where it keeps its digits and loses them for small p.

The registered score is ``-log10(p)`` (higher is better; genes with ``p = 1`` tie at 0);
the p-values and their Benjamini-Hochberg q-values over the N genes of the universe (genes in
no list count as tests with p = 1) are returned as per-gene statistics. Ties inside a list
(e.g. an unranked gene set) are averaged ranks, as everywhere in kofs. The ``topCutoff``
variant of RobustRankAggreg is not provided.

Reference: Kolde R, Laur S, Adler P, Vilo J (2012) Robust rank aggregation for gene list
integration and meta-analysis. Bioinformatics 28:573-580.
"""

from __future__ import annotations

import numpy as np
from scipy.special import betainc, betaincinv

from kofs.aggregate._order_stats import log_any_lower
from kofs.aggregate.partial import check_partial_ranks
from kofs.registry import Param, aggregator

__all__ = [
    "beta_scores",
    "bh_qvalues",
    "normalised_ranks",
    "rho_scores",
    "rra_log_pvalues",
    "rra_pvalues",
]

_LOG10 = np.log(10.0)


def normalised_ranks(ranks: np.ndarray, *, universe: int) -> np.ndarray:
    """``u = r / N`` with ``u = 1`` where a list does not contain the gene (NaN rank).

    Parameters
    ----------
    ranks : ndarray of shape (m, L)
        Ranks inside each list (1 = best, ties averaged), NaN = absent from the list.
    universe : int
        N, the number of genes of the universe (>= every list's length).

    Returns
    -------
    ndarray of shape (m, L), values in (0, 1]
    """
    u = np.asarray(ranks, dtype=np.float64) / float(universe)
    return np.where(np.isnan(u), 1.0, np.minimum(u, 1.0))


def beta_scores(normalised: np.ndarray) -> np.ndarray:
    """Beta scores of the order statistics.

    Parameters
    ----------
    normalised : ndarray of shape (m, L)
        Normalised ranks in (0, 1].

    Returns
    -------
    ndarray of shape (m, L)
        Column k-1 holds ``I_{u_(k)}(k, L - k + 1)``, the probability that the k-th smallest of
        L iid U(0, 1) values is <= the gene's k-th smallest normalised rank.
    """
    u = np.sort(np.asarray(normalised, dtype=np.float64), axis=1)
    L = u.shape[1]
    k = np.arange(1.0, L + 1.0)
    return betainc(k, L - k + 1.0, u)


def rho_scores(normalised: np.ndarray) -> np.ndarray:
    """``rho = min_k beta_k`` of every gene (uncorrected); shape (m,)."""
    return beta_scores(normalised).min(axis=1)


def rra_log_pvalues(normalised: np.ndarray, *, exact: bool = False) -> np.ndarray:
    """Natural log of the RRA p-values (see :func:`rra_pvalues`); exact to the last digit
    also where p underflows."""
    u = np.asarray(normalised, dtype=np.float64)
    L = u.shape[1]
    rho = rho_scores(u)
    if not exact:
        with np.errstate(divide="ignore"):
            return np.minimum(0.0, np.log(rho) + np.log(L))
    k = np.arange(1.0, L + 1.0)
    thresholds = betaincinv(k[None, :], L - k[None, :] + 1.0, rho[:, None])
    out = log_any_lower(thresholds)
    return np.where(rho >= 1.0, 0.0, out)


def rra_pvalues(normalised: np.ndarray, *, exact: bool = False) -> np.ndarray:
    """RRA p-values (RobustRankAggreg ``aggregateRanks(method = "RRA")`` scores).

    Parameters
    ----------
    normalised : ndarray of shape (m, L)
        Normalised ranks ``r / N`` in (0, 1], 1 for a list that does not contain the gene.
    exact : bool, default False
        False: Bonferroni ``min(1, L rho)`` (R's default). True: the exact null probability
        of the observed rho, ``P(min_k I_{U_(k)}(k, L-k+1) <= rho)``.

    Returns
    -------
    ndarray of shape (m,)
        p-values, lower is better.
    """
    return np.exp(rra_log_pvalues(normalised, exact=exact))


def bh_qvalues(p: np.ndarray, *, n_tests: int | None = None) -> np.ndarray:
    """Benjamini-Hochberg q-values of ``p`` among ``n_tests >= len(p)`` tests, the others
    having p = 1 (genes of the universe that no list contains)."""
    from scipy.stats import false_discovery_control

    p = np.clip(np.asarray(p, dtype=np.float64), 0.0, 1.0)
    extra = 0 if n_tests is None else max(0, int(n_tests) - p.size)
    if p.size == 0:
        return p
    q = false_discovery_control(np.concatenate([p, np.ones(extra)]))
    return q[: p.size]


@aggregator(
    "rra",
    summary="Robust rank aggregation: -log10 RRA p-value of the beta order statistics.",
    reference="Kolde et al. (2012) Bioinformatics 28:573-580 (R RobustRankAggreg)",
    params={
        "exact": Param(
            False, bool, "exact rho p-value instead of Bonferroni min(1, L rho) (R's default)"
        ),
    },
    partial_lists=True,
)
def _rra(R: np.ndarray, *, relevant: np.ndarray | None, universe: int, exact: bool):
    """Registry adapter: score = -log10(p), p from :func:`rra_log_pvalues` on ``R / N``."""
    R = check_partial_ranks(R, relevant, universe=universe)
    log_p = rra_log_pvalues(normalised_ranks(R, universe=universe), exact=exact)
    p = np.exp(log_p)
    scores = 0.0 - log_p / _LOG10
    stats = {"p_value": p, "q_value": bh_qvalues(p, n_tests=universe)}
    return scores, None, {"n_p_below_0.05": int((p < 0.05).sum()), "statistics": stats}
