"""Stuart-Aerts order-statistics aggregation, as R RobustRankAggreg ``method = "stuart"``.

A gene's normalised ranks ``u_{l,i} = r_{l,i} / N`` (u = 1 where a list does not contain it,
N the universe size, exactly as for RRA) are sorted, and its score is Stuart's Q statistic,
the probability that L iid U(0, 1) order statistics all lie at or below the observed ones:
``Q = P(U_(k) <= u_(k), k = 1..L)`` (Stuart 1954; Aerts et al. 2006, Endeavour). A small Q is
strong evidence. RobustRankAggreg computes Q with the alternating recursion
``V_k = sum_{j=1..k} (-1)^(j+1) V_(k-j) u_(L-k+1)^j / j!``, ``Q = L! V_L``, which loses digits
as L grows and overflows for L > 170; kofs evaluates the same probability with positive terms in
log space (:mod:`kofs.aggregate._order_stats`), equal to R where R is stable.

Q is R's ``Score``, not a p-value: under the null it is not uniform (Aerts et al. fit a
distribution to it), so no q-values are derived from it. The registered score is
``-log10(Q)`` (higher is better); Q itself is returned as the per-gene statistic
``stuart_q``.

References
----------
Stuart A (1954) Limit distributions for total rank values. Br J Stat Psychol 7:31-35.
Aerts S et al. (2006) Gene prioritization through genomic data fusion. Nat Biotechnol
24:537-544.
Kolde R, Laur S, Adler P, Vilo J (2012) Bioinformatics 28:573-580 (R RobustRankAggreg).
"""

from __future__ import annotations

import numpy as np

from kofs.aggregate._order_stats import log_joint_lower
from kofs.aggregate.partial import check_partial_ranks
from kofs.aggregate.rra import normalised_ranks
from kofs.registry import aggregator

__all__ = ["stuart_log_q", "stuart_q"]


def stuart_log_q(normalised: np.ndarray) -> np.ndarray:
    """Natural log of Stuart's Q for every gene.

    Parameters
    ----------
    normalised : ndarray of shape (m, L)
        Normalised ranks in (0, 1] (1 = absent from the list); column order does not matter.

    Returns
    -------
    ndarray of shape (m,), values in (-inf, 0]
    """
    return log_joint_lower(np.asarray(normalised, dtype=np.float64))


def stuart_q(normalised: np.ndarray) -> np.ndarray:
    """Stuart's Q (RobustRankAggreg ``aggregateRanks(method = "stuart")`` scores), shape (m,)."""
    return np.exp(stuart_log_q(normalised))


@aggregator(
    "stuart",
    summary="Stuart-Aerts Q: joint probability of the sorted normalised ranks (-log10 Q).",
    reference="Aerts et al. (2006) Nat Biotechnol 24:537-544; Kolde et al. (2012) (R RobustRankAggreg)",
    partial_lists=True,
)
def _stuart(R: np.ndarray, *, relevant: np.ndarray | None, universe: int):
    """Registry adapter: score = -log10(Q), Q from :func:`stuart_log_q` on ``R / N``."""
    R = check_partial_ranks(R, relevant, universe=universe)
    log_q = stuart_log_q(normalised_ranks(R, universe=universe))
    return 0.0 - log_q / np.log(10.0), None, {"statistics": {"stuart_q": np.exp(log_q)}}
