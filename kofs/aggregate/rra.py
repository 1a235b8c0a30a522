"""Robust rank aggregation (RRA) of Kolde et al. (2012), as in R RobustRankAggreg 1.2.1.

Each gene's ranks are normalised to ``u_{l,i} = r_{l,i} / M`` (M = number of genes) and sorted,
``u_(1) <= ... <= u_(L)``. Under the null hypothesis of uninformative lists the u are iid
U(0, 1), so ``u_(k)`` follows ``Beta(k, L - k + 1)``; the beta score is
``beta_k = I_{u_(k)}(k, L - k + 1)`` (regularised incomplete beta function), and the rho score is
``rho = min_k beta_k``. RobustRankAggreg reports the Bonferroni-corrected ``p = min(1, L rho)``
(default, ``exact = FALSE``) or the exact null probability of ``rho`` (``exact = TRUE``,
computed with Stuart's recursion over ``1 - qbeta(rho, k, L - k + 1)``).

The registered score is ``-log10(p)`` (higher is better; genes with ``p = 1`` tie at 0). Genes
missing from a list come from :func:`kofs.aggregate.rank_matrix` as an averaged bottom tie
block, whereas RobustRankAggreg's ``rankMatrix(full = FALSE)`` gives them ``u = 1``; on full
lists (the kofs case) both agree. The ``topCutoff`` variant of RobustRankAggreg (partial lists)
is not provided: kofs lists always rank every gene.

Reference: Kolde R, Laur S, Adler P, Vilo J (2012) Robust rank aggregation for gene list
integration and meta-analysis. Bioinformatics 28:573-580.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import betainc, betaincinv

from kofs.aggregate.em import check_rank_matrix
from kofs.registry import Param, aggregator

__all__ = ["beta_scores", "rho_scores", "rra_pvalues"]


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


def _stuart_upper(v: np.ndarray) -> np.ndarray:
    """Stuart's recursion (RobustRankAggreg ``qStuart``) for every row of v.

    Parameters
    ----------
    v : ndarray of shape (m, N)
        Each row sorted ascending.

    Returns
    -------
    ndarray of shape (m,)
        ``N! V_N`` with ``V_0 = 1``, ``V_k = sum_{j=1..k} (-1)^(j+1) V_{k-j} v_(N-k+1)^j / j!``.
    """
    m, N = v.shape
    V = np.ones((m, N + 1))
    for k in range(1, N + 1):
        x = v[:, N - k]
        term = np.ones(m)  # (-1)^(j+1) x^j / j!, built incrementally
        total = np.zeros(m)
        for j in range(1, k + 1):
            term *= (x if j == 1 else -x) / j
            total += term * V[:, k - j]
        V[:, k] = total
    return math.factorial(N) * V[:, N]


def rra_pvalues(normalised: np.ndarray, *, exact: bool = False) -> np.ndarray:
    """RRA p-values (RobustRankAggreg ``aggregateRanks(method = "RRA")`` scores).

    Parameters
    ----------
    normalised : ndarray of shape (m, L)
        Normalised ranks ``r / M`` in (0, 1].
    exact : bool, default False
        False: Bonferroni ``min(1, L rho)``. True: ``1 - Stuart(1 - qbeta(rho, k, L-k+1))``,
        the exact null probability of the observed rho (numerically reliable for L up to ~15,
        as in the R package, because the recursion alternates signs).

    Returns
    -------
    ndarray of shape (m,)
        p-values, lower is better.
    """
    u = np.asarray(normalised, dtype=np.float64)
    L = u.shape[1]
    rho = rho_scores(u)
    if not exact:
        return np.minimum(1.0, rho * L)
    k = np.arange(1.0, L + 1.0)
    q = 1.0 - betaincinv(k[None, :], L - k[None, :] + 1.0, rho[:, None])
    return 1.0 - _stuart_upper(np.sort(q, axis=1))


@aggregator(
    "rra",
    summary="Robust rank aggregation: -log10 RRA p-value of the beta order statistics.",
    reference="Kolde et al. (2012) Bioinformatics 28:573-580 (R RobustRankAggreg)",
    params={
        "exact": Param(
            False, bool, "exact rho p-value (Stuart) instead of Bonferroni min(1, L rho)"
        ),
    },
)
def _rra(R: np.ndarray, *, relevant: np.ndarray | None, exact: bool):
    """Registry adapter: score = -log10(p), p from :func:`rra_pvalues` on ``R / M``."""
    R = check_rank_matrix(R, relevant)
    p = np.clip(rra_pvalues(R / R.shape[0], exact=exact), 0.0, 1.0)
    with np.errstate(divide="ignore"):
        scores = 0.0 - np.log10(p)
    return scores, None, {"n_p_below_0.05": int((p < 0.05).sum())}
