"""The within-class correlation of two lists one of which shows some genes only as intervals.

The fit's correlation of the lists (:func:`kofs.aggregate.posterior.fit_posterior`) is the
pooled within-class correlation of the genes' interval-mean latent scores. Where a list places
a gene at a point that is its latent score; where it shows an interval -- every gene below a
top-k list, a gene a list lacks, a wide tie block -- one mean stands for many genes, and the
correlation shrinks with the share of the list's variance the means keep (a Welch t-test's top
100 of 1,500 genes beside the Mann-Whitney ranking of the same samples: 0.05, where the two
share nearly all their noise). The rule that finds one data set's lists
(:func:`kofs.aggregate.relevance.one_source`) then never sees such a pair.

Here a pair's correlation is the maximum-likelihood estimate of the bivariate normal
correlation ``r`` of the two lists' latent scores within each class (background around 0,
relevant around the separations), each gene weighted by its posterior probability of each
class, with every observation read as what it is: a point as its latent score, an interval as
the event that the score lies inside it (Tobit's likelihood: a point beside an interval
``Phi((b - r y) / s) - Phi((a - r y) / s)``, ``s = sqrt(1 - r^2)``; two intervals, the bivariate
normal probability of their rectangle). Genes with the same observations (the block below a
top-k list beside a full ranking's scores, rounded to :data:`ROUND`) are counted once with
their weights summed, so the cost follows the distinct observations, not the genes.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import ndtr

from kofs.aggregate.binormal import copula_points, log_mass, mixture_scores

__all__ = ["R_MAX", "bounds_correlation", "interval_share", "latent_bounds", "pair_correlation"]

#: Correlations are estimated inside ``[-R_MAX, R_MAX]`` (a correlation of 1 has no density).
R_MAX = 0.99
#: Latent scores are rounded to this before equal observations are counted once.
ROUND = 1e-3
#: Nodes of the Gauss-Legendre rule of the bivariate normal distribution function.
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(48)


def interval_share(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Per list (D,): the share of the genes it shows as intervals wider than a point
    (:func:`kofs.aggregate.binormal.copula_points`)."""
    return 1.0 - copula_points(lo, hi).mean(axis=0)


def _bvn_cdf(h: np.ndarray, k: np.ndarray, r: float) -> np.ndarray:
    """``P(X <= h, Y <= k)`` for standard bivariate normal ``(X, Y)`` of correlation ``r``
    (``|r| <= R_MAX``): ``Phi(h) Phi(k) + 1/(2 pi) int_0^asin(r) exp(-(h^2 + k^2 - 2 h k
    sin t) / (2 cos^2 t)) dt`` (Sheppard's formula, as Genz 2004 evaluates it), by a 48-point
    Gauss-Legendre rule; infinite limits give the margins."""
    h, k = np.broadcast_arrays(np.asarray(h, np.float64), np.asarray(k, np.float64))
    base = ndtr(h) * ndtr(k)
    finite = np.isfinite(h) & np.isfinite(k)
    if r == 0.0 or not finite.any():
        return base
    hf, kf = h[finite][:, None], k[finite][:, None]
    a = np.arcsin(r)
    t = 0.5 * a * (_NODES + 1.0)
    sin, cos2 = np.sin(t), np.cos(t) ** 2
    f = np.exp(-(hf * hf + kf * kf - 2.0 * hf * kf * sin) / (2.0 * cos2))
    out = base.copy()
    out[finite] += (0.5 * a) * (f @ _WEIGHTS) / (2.0 * np.pi)
    return np.clip(out, 0.0, 1.0)


def _rectangle_log_p(la, ua, lb, ub, r: float) -> np.ndarray:
    """``log P(la < X < ua, lb < Y < ub)`` under correlation ``r``."""
    p = _bvn_cdf(ua, ub, r) - _bvn_cdf(la, ub, r) - _bvn_cdf(ua, lb, r) + _bvn_cdf(la, lb, r)
    with np.errstate(divide="ignore"):
        return np.log(np.maximum(p, 1e-300))


class _Observations:
    """One class's distinct pairs of observations (residual latent bounds of each list; a
    point has equal bounds) and their summed weights, split by kind."""

    def __init__(self, bounds: np.ndarray, weight: np.ndarray) -> None:
        keep = weight > 0
        b = np.round(bounds[keep], 3)
        first, back = _distinct_rows(b)
        rows = b[first]
        w = np.bincount(back, weights=weight[keep], minlength=len(rows))
        la, ua, lb, ub = rows.T
        pa, pb = la == ua, lb == ub
        self.pp = (la[pa & pb], lb[pa & pb], w[pa & pb])
        self.ip = (la[~pa & pb], ua[~pa & pb], lb[~pa & pb], w[~pa & pb])
        self.pi = (lb[pa & ~pb], ub[pa & ~pb], la[pa & ~pb], w[pa & ~pb])
        self.ii = (la[~pa & ~pb], ua[~pa & ~pb], lb[~pa & ~pb], ub[~pa & ~pb], w[~pa & ~pb])

    def log_likelihood(self, r: float) -> float:
        """The weighted log-likelihood of ``r`` (terms that do not depend on it left out)."""
        s2 = 1.0 - r * r
        s = np.sqrt(s2)
        x, y, w = self.pp
        total = float(
            w @ (-0.5 * np.log(s2) - (r * r * (x * x + y * y) - 2 * r * x * y) / (2 * s2))
        )
        for lo, hi, y, w in (self.ip, self.pi):
            if w.size:
                total += float(w @ log_mass((lo - r * y) / s, (hi - r * y) / s))
        la, ua, lb, ub, w = self.ii
        if w.size:
            total += float(w @ _rectangle_log_p(la, ua, lb, ub, r))
        return total


def latent_bounds(lo: np.ndarray, hi: np.ndarray, mu: float, rho: float) -> np.ndarray:
    """Each gene's latent bounds (M, 2) in one list (observation intervals of positions
    ``lo``, ``hi`` (M,)) under the mixture of separation ``mu`` and fraction ``rho`` (0 for a
    list of null p-values: their normal scores): a point's both at the score of its midpoint,
    an interval's at the scores of its ends."""
    point = copula_points(lo, hi)
    out = np.empty((len(lo), 2))
    out[point] = mixture_scores(0.5 * (lo[point] + hi[point]), mu, rho)[:, None]
    wide = ~point
    if wide.any():  # the distinct wide intervals (a few blocks) once each
        ends = np.column_stack([hi[wide], lo[wide]])
        first, back = _distinct_rows(ends)
        out[wide] = mixture_scores(ends[first], mu, rho)[back]
    return out


def _distinct_rows(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The first row of each distinct row of ``x`` and each row's distinct row, by one
    integer key per row from each column's codes (a row-wise np.unique sorts far slower)."""
    key = np.zeros(x.shape[0], dtype=np.int64)
    for j in range(x.shape[1]):
        _, code = np.unique(x[:, j], return_inverse=True)
        # renumbered after each column, the key stays below the number of rows (no overflow)
        _, key = np.unique(key * (int(code.max(initial=0)) + 1) + code.ravel(), return_inverse=True)
        key = key.ravel()
    _, first, back = np.unique(key, return_index=True, return_inverse=True)
    return first, back.ravel()


def pair_correlation(
    lo: np.ndarray,
    hi: np.ndarray,
    mu: np.ndarray,
    rho: np.ndarray,
    posterior: np.ndarray,
    weights: np.ndarray | None = None,
) -> tuple[float, float]:
    """The within-class correlation of two lists (module docstring): ``lo``, ``hi`` (M, 2)
    their observation intervals of positions, ``mu`` (2,) their separations, ``rho`` (2,)
    the fraction of relevant genes of each list's map from positions to scores (the fit's;
    0 for a list of null p-values), ``posterior`` (M,) each gene's probability of relevance,
    ``weights`` (M,) the genes' weights: :func:`bounds_correlation` of their
    :func:`latent_bounds`."""
    lo = np.asarray(lo, np.float64)
    hi = np.asarray(hi, np.float64)
    mu = np.asarray(mu, np.float64)
    rho = np.broadcast_to(np.asarray(rho, np.float64), (2,))
    bounds = [latent_bounds(lo[:, j], hi[:, j], float(mu[j]), float(rho[j])) for j in range(2)]
    return bounds_correlation(bounds[0], bounds[1], mu, posterior, weights)


def bounds_correlation(
    a: np.ndarray,
    b: np.ndarray,
    mu: np.ndarray,
    posterior: np.ndarray,
    weights: np.ndarray | None = None,
) -> tuple[float, float]:
    """The within-class correlation of two lists from their genes' :func:`latent_bounds`
    ``a``, ``b`` (M, 2), separations ``mu`` (2,), the genes' probabilities of relevance and
    weights. Returns the estimate and its standard error under no correlation (from the
    curvature of the log-likelihood at 0: the scale of what noise gives, as ``1 / sqrt(n)``
    is for two lists of points)."""
    mu = np.asarray(mu, np.float64)
    w = np.ones(a.shape[0]) if weights is None else np.asarray(weights, np.float64)
    p = np.clip(np.asarray(posterior, np.float64), 0.0, 1.0)
    both = np.hstack([a, b])
    if mu.any():
        classes = [
            _Observations(both, w * (1.0 - p)),
            _Observations(both - np.repeat(mu, 2), w * p),
        ]
    else:
        classes = [_Observations(both, w)]

    def nll(r: float) -> float:
        return -sum(c.log_likelihood(r) for c in classes)

    best = minimize_scalar(nll, bounds=(-R_MAX, R_MAX), method="bounded", options={"xatol": 1e-3})
    eps = 1e-3
    curvature = (nll(eps) - 2.0 * nll(0.0) + nll(-eps)) / (eps * eps)
    se = 1.0 / np.sqrt(curvature) if curvature > 0 else np.inf
    return float(best.x), float(se)
