"""Uncertainty and diagnostics of learned list weights (every run of a weight-learning aggregator).

* **Confidence intervals** — a seeded nonparametric bootstrap over genes: B replicates draw the
  genes (of G, for supervised EM) with replacement, refit the weights with everything else
  fixed, and the 2.5 % and 97.5 % quantiles of each weight form a percentile interval (Efron &
  Tibshirani 1993, ch. 13). Genes are not independent (a list's ranks are a permutation), so the
  intervals are approximate; they are wide exactly when the data barely constrain the weights,
  which is what they are for.
* **Likelihood gain over uniform weights** — ``l(fitted) - l(uniform)`` in nats: for ``em`` the
  uniform mixture ``pi_l = 1/L``; for ``reliability`` the best model in which every list has the
  same informativeness a (rho refitted).
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

from kofs.aggregate.em import fit_mixture_weights, rank_probabilities

__all__ = [
    "agreement_matrix",
    "em_bootstrap",
    "identification",
    "percentile_intervals",
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


def em_bootstrap(
    ranks: np.ndarray,
    *,
    relevant: np.ndarray | None,
    weights: np.ndarray,
    solver: str,
    tol: float,
    max_iter: int,
    n_boot: int,
    seed: int,
) -> dict:
    """Diagnostics of the book's EM weights: bootstrap over the genes of G, gain, identification.

    Returns
    -------
    dict
        ``weight_ci`` (L, 2), ``weight_sd`` (L,), ``loglik_gain`` (nats), ``lr_threshold``,
        ``identified``, ``n_boot``.
    """
    P = rank_probabilities(ranks)
    PG = P if relevant is None else P[np.asarray(relevant, dtype=bool)]
    K, L = PG.shape
    ll_fit = float(np.log(PG @ weights).sum())
    ll_uni = float(np.log(PG.mean(axis=1)).sum())
    gain = ll_fit - ll_uni
    identified, threshold = identification(gain, L)
    out = {"loglik_gain": gain, "lr_threshold": threshold, "identified": identified}
    if n_boot > 0:
        rng = np.random.default_rng(seed)
        reps = np.empty((n_boot, L))
        for b in range(n_boot):
            rows = PG[rng.integers(0, K, K)]
            reps[b] = fit_mixture_weights(
                rows, solver=solver, tol=tol, max_iter=max_iter, start=weights
            ).weights
        out.update(_summarise(reps))
    out["n_boot"] = int(n_boot)
    return out


def _summarise(reps: np.ndarray) -> dict:
    return {"weight_ci": percentile_intervals(reps), "weight_sd": reps.std(axis=0, ddof=1)}


def warning_line(method: str, info: dict, names: Sequence[str]) -> str | None:
    """The one-line warning of a run whose weights are not identified (None otherwise)."""
    if info.get("identified", True):
        return None
    return (
        f"{method}: list weights not identified (likelihood gain over uniform weights "
        f"{info['loglik_gain']:.3g} nats, 2*gain < chi2_{len(names) - 1}(0.95) = "
        f"{info['lr_threshold']:.3g}); treat the weights as uninformative"
    )


def reliability_diagnostics(fit, *, n_boot: int, seed: int, max_prior: float, n_lists: int) -> dict:
    """Diagnostics of a reliability fit (same keys as :func:`em_bootstrap`)."""
    from kofs.aggregate.reliability import reliability_bootstrap, tied_log_likelihood

    gain = float(fit.log_likelihood - tied_log_likelihood(fit, max_prior=max_prior))
    identified, threshold = identification(gain, n_lists)
    out = {"loglik_gain": gain, "lr_threshold": threshold, "identified": identified}
    if n_lists > 1 and not np.any(fit.a < 1.0):
        out["identified"] = False  # no list informs: the weights are the a -> 1 limit
    if n_boot > 0:
        reps = reliability_bootstrap(fit, n_boot=n_boot, seed=seed, max_prior=max_prior)
        out.update(_summarise(reps))
    out["n_boot"] = int(n_boot)
    return out


def label_weight_intervals(
    replicates: np.ndarray | None,
    redundancy: np.ndarray,
    *,
    fit=None,
    data_lists: np.ndarray | None = None,
    n_boot: int = 0,
    seed: int = 0,
    max_prior: float = 0.5,
) -> dict:
    """Intervals of label-supervised weights from bootstrap replicates of the list
    reliabilities ``v`` (shape (B, L); the redundancy weights ``c`` are held fixed).

    Without knowledge lists (``fit`` None) the weights are ``w = v * c / sum(v * c)``: nothing
    is fitted on the genes, so there is no likelihood gain and they count as identified. With
    knowledge lists, whose weights come from the agreement ``fit``
    (:func:`kofs.aggregate.reliability.hybrid_weights`), replicate b pairs the b-th label
    replicate with the b-th bootstrap replicate of the fit, and the gain and identification
    are the fit's.
    """
    from kofs.aggregate.reliability import hybrid_weights

    c = np.asarray(redundancy, dtype=np.float64)
    L = len(c)
    out: dict = {"n_boot": 0, "identified": True, "loglik_gain": None}
    if fit is not None:
        out = reliability_diagnostics(fit, n_boot=0, seed=seed, max_prior=max_prior, n_lists=L)
    if replicates is None or len(replicates) == 0:
        return out
    V = np.clip(np.asarray(replicates, dtype=np.float64), 0.0, None) * c
    if fit is None or data_lists is None:
        W = hybrid_weights(np.zeros_like(V), V, np.ones(L, dtype=bool))
    else:
        from kofs.aggregate.reliability import reliability_bootstrap

        B = len(V)
        A = reliability_bootstrap(fit, n_boot=B, seed=seed, max_prior=max_prior)
        W = hybrid_weights(A, V, np.asarray(data_lists, dtype=bool))
    out.update(
        n_boot=int(W.shape[0]),
        weight_ci=percentile_intervals(W),
        weight_sd=W.std(axis=0, ddof=1) if W.shape[0] > 1 else np.zeros(L),
    )
    return out
