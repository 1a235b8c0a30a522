"""Uncertainty and diagnostics of learned list weights (every run of a weight-learning aggregator).

* **Confidence intervals** — a seeded nonparametric bootstrap over genes: B replicates draw the
  genes (of G, for supervised EM) with replacement, refit the weights with everything else
  fixed, and the 2.5 % and 97.5 % quantiles of each weight form a percentile interval (Efron &
  Tibshirani 1993, ch. 13). Genes are not independent (a list's ranks are a permutation), so the
  intervals are approximate; they are wide exactly when the data barely constrain the weights,
  which is what they are for.
* **Likelihood gain over uniform weights** — ``l(fitted) - l(uniform)`` in nats: for ``em`` the
  uniform mixture ``pi_l = 1/L`` (:func:`kofs.aggregate.em.em_bootstrap`).
* **Identification warning** — the weights are called *not identified* when the likelihood-ratio
  statistic ``2 * gain`` is below the 95 % quantile of chi-square with ``L - 1`` degrees of
  freedom: the data do not reject "all lists equally weighted" at the 5 % level, so the fitted
  differences between lists are within noise. (Weights on the boundary make the null
  distribution a chi-bar-square mixture with fewer effective degrees of freedom; chi-square with
  L - 1 is the conservative choice: it warns more often, never less.)
* **Agreement matrix** — Spearman correlation of every pair of lists (on the genes ranked by
  both).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: A list carrying at least this share of the weight ...
DOMINANT_WEIGHT = 0.5
#: ... whose ranking correlates negatively with each of two other lists that agree with each
#: other (over their shared genes), each correlation at least AGAINST_Z standard errors from 0
#: (r sqrt(n - 1) under independence) and AGAINST in size, runs against agreeing lists: the
#: posterior fusion tests whether it is ranked the wrong way round
#: (:func:`kofs.aggregate.reversed.reversed_list`), and the fused answer gets a notice.
AGAINST = 0.1
AGAINST_Z = 5.0

__all__ = [
    "agreement_matrix",
    "identification",
    "percentile_intervals",
    "warning_line",
]

LEVEL = 0.95


def agreement_matrix(ranks: np.ndarray) -> np.ndarray:
    """Spearman correlation of every pair of lists (pairwise complete genes); shape (L, L).

    Parameters
    ----------
    ranks : ndarray of shape (M, L)
        Ranks, NaN = absent.
    """
    R = np.asarray(ranks, dtype=np.float64)
    L = R.shape[1]
    out = np.eye(L)
    if not np.isnan(R).any():
        Z = R - R.mean(axis=0)
        sd = np.sqrt((Z**2).sum(axis=0))
        with np.errstate(invalid="ignore", divide="ignore"):
            C = (Z.T @ Z) / np.outer(sd, sd)
        C[~np.isfinite(C)] = 0.0
        np.fill_diagonal(C, 1.0)
        return C
    for j in range(L):
        for k in range(j + 1, L):
            both = ~np.isnan(R[:, j]) & ~np.isnan(R[:, k])
            if both.sum() < 3:
                continue
            x = _rank(R[both, j])
            y = _rank(R[both, k])
            with np.errstate(invalid="ignore", divide="ignore"):  # a constant list: rho = 0
                r = np.corrcoef(x, y)[0, 1]
            out[j, k] = out[k, j] = 0.0 if not np.isfinite(r) else r
    return out


def _rank(x: np.ndarray) -> np.ndarray:
    from scipy.stats import rankdata

    return rankdata(x)


def percentile_intervals(samples: np.ndarray, level: float = LEVEL) -> np.ndarray:
    """(L, 2) percentile intervals of bootstrap replicates of shape (B, L)."""
    alpha = (1.0 - level) / 2.0
    return np.quantile(samples, [alpha, 1.0 - alpha], axis=0).T


def identification(gain: float, n_lists: int, level: float = LEVEL) -> tuple[bool, float]:
    """(identified, threshold): ``2 * gain >= chi2.ppf(level, L - 1)``."""
    from scipy.special import gammaincinv  # chi2.ppf(p, k) = 2 gammaincinv(k/2, p), as scipy

    if n_lists < 2:
        return True, 0.0
    threshold = float(2.0 * gammaincinv((n_lists - 1) / 2.0, level))
    return bool(2.0 * gain >= threshold), threshold


def warning_line(method: str, info: dict, names: Sequence[str]) -> str | None:
    """The one-line warning of a run whose weights are not identified (None otherwise)."""
    if info.get("identified", True):
        return None
    return (
        f"{method}: list weights not identified (likelihood gain over uniform weights "
        f"{info['loglik_gain']:.3g} nats, 2*gain < chi2_{len(names) - 1}(0.95) = "
        f"{info['lr_threshold']:.3g}); treat the weights as uninformative"
    )
