"""The within-class correlation of two lists one of which shows some genes only as intervals.

The fit's correlation of the lists (:func:`kofs.aggregate.posterior.fit_posterior`) is the
pooled within-class correlation of the genes' interval-mean latent scores. Where a list places
a gene at a point that is its latent score; where it shows an interval -- every gene below a
top-k list, a gene a list lacks, a wide tie block -- one mean stands for many genes, and the
correlation shrinks with the share of the list's variance the means keep (a Welch t-test's top
100 of 1,500 genes beside the Mann-Whitney ranking of the same samples: 0.05, where the two
share nearly all their noise). The rule that finds one data set's lists
(:func:`kofs.aggregate.sources.one_source`) then never sees such a pair.

Here a pair's correlation is the maximum-likelihood estimate of the bivariate normal
correlation ``r`` of the two lists' latent scores within each class (background around 0,
relevant around the separations), each gene weighted by its posterior probability of each
class, with every observation read as what it is: a point as its latent score, an interval as
the event that the score lies inside it (Tobit's likelihood: a point beside an interval
``Phi((b - r y) / s) - Phi((a - r y) / s)``, ``s = sqrt(1 - r^2)``; two intervals, the bivariate
normal probability of their rectangle). Genes with the same observations (the block below a
top-k list beside a full ranking's scores, rounded to :data:`ROUND`) are counted once with
their weights summed, so the cost follows the distinct observations, not the genes.

The fit uses it too (:meth:`kofs.aggregate.posterior._Problem._censored_correlations`): where
two or more rank lists (not p-values) show genes as intervals, the correlations between such
lists are these estimates, all pairs maximised together (:func:`class_correlations`), and the
fits of its starts are compared by the lists' pairwise composite likelihood (:func:`pair_composites`,
Lindsay 1988; Varin, Reid & Firth 2011), which reads a gene below two top-k lists by the
probability of their rectangle. Both lists of such a pair keep one mean for most genes, so
their interval means show almost none of the noise they share (six random top-300 lists of
3,000 genes sharing 41 % of it: 0.02-0.05 for 0.41), and the fit's own likelihood, which reads
an interval through its list alone, then scored their overlap as a relevant class above the
class of three full rankings (fused top-90 precision 0.02 against 0.44 for the best list;
0.61 now, ``bench/bench_fusion.py --stress``). A list with intervals beside full rankings
only keeps the full rankings' spread, and its interval-mean correlation stands (read as
censored, a table cut to its 20 smallest p-values beside two whole tables made a class of
half the genes with correlations 0.3-0.45: top-200 precision 0.66 -> 0.38 on the real data of
``bench/bench_cut_tables.py``).
"""

from __future__ import annotations

import numpy as np
from scipy.special import log_ndtr, ndtr

from kofs.aggregate.binormal import copula_points, log_mass, mixture_scores

__all__ = [
    "INTERVAL_SHARE",
    "R_MAX",
    "bounds_correlation",
    "class_correlations",
    "interval_share",
    "latent_bounds",
    "pair_composites",
    "pair_correlation",
]

#: A list that shows at least this share of the genes as intervals has its correlations with
#: the others estimated as censored (:func:`kofs.aggregate.sources.one_source`, the fit's
#: correlation step) and the fits of its lists compared by their composite likelihood.
INTERVAL_SHARE = 0.01
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


def _bvn_cdf(h: np.ndarray, k: np.ndarray, r: np.ndarray | float) -> np.ndarray:
    """``P(X <= h, Y <= k)`` for standard bivariate normal ``(X, Y)`` of correlation ``r``
    (``|r| <= R_MAX``; one for all or one per element): ``Phi(h) Phi(k) + 1/(2 pi)
    int_0^asin(r) exp(-(h^2 + k^2 - 2 h k sin t) / (2 cos^2 t)) dt`` (Sheppard's formula, as
    Genz 2004 evaluates it), by a 48-point Gauss-Legendre rule; infinite limits give the
    margins."""
    h, k, r = np.broadcast_arrays(
        np.asarray(h, np.float64), np.asarray(k, np.float64), np.asarray(r, np.float64)
    )
    return _Corners(h, k).cdf(r)


class _Corners:
    """Points ``(h, k)`` whose :func:`_bvn_cdf` is wanted under many correlations (the
    golden-section searches): its parts free of the correlation -- the margins' product,
    ``h^2 + k^2``, ``2 h k`` -- made once."""

    def __init__(self, h: np.ndarray, k: np.ndarray) -> None:
        self.base = ndtr(h) * ndtr(k)
        self.finite = np.isfinite(h) & np.isfinite(k)
        hf, kf = h[self.finite][:, None], k[self.finite][:, None]
        self.square, self.cross = hf * hf + kf * kf, 2.0 * hf * kf

    def cdf(self, r: np.ndarray) -> np.ndarray:
        """:func:`_bvn_cdf` of the points under correlation ``r`` (one per point)."""
        nonzero = r != 0.0
        finite = self.finite & nonzero
        if not finite.any():
            return self.base
        square, cross = self.square, self.cross
        if not nonzero.all():
            keep = nonzero[self.finite]
            square, cross = square[keep], cross[keep]
        a = np.arcsin(r[finite])
        t = 0.5 * a[:, None] * (_NODES + 1.0)
        sin, cos2 = np.sin(t), np.cos(t) ** 2
        f = np.exp(-(square - cross * sin) / (2.0 * cos2))
        out = self.base.copy()
        out[finite] += (0.5 * a) * (f @ _WEIGHTS) / (2.0 * np.pi)
        return np.clip(out, 0.0, 1.0)


class _Rectangles:
    """Rectangles ``(la, ua) x (lb, ub)``: ``log P(la < X < ua, lb < Y < ub)`` under
    correlations ``r`` (one per rectangle), their corners made once (:class:`_Corners`)."""

    def __init__(self, la, ua, lb, ub) -> None:
        self.corners = [_Corners(h, k) for h, k in ((ua, ub), (la, ub), (ua, lb), (la, lb))]

    def log_p(self, r: np.ndarray) -> np.ndarray:
        c = [corner.cdf(r) for corner in self.corners]
        p = c[0] - c[1] - c[2] + c[3]
        with np.errstate(divide="ignore"):
            return np.log(np.maximum(p, 1e-300))


class _Observations:
    """One class's distinct pairs of observations (residual latent bounds of each list; a
    point has equal bounds) of several pairs of lists (``pair``: each row's, of
    ``n_pairs``) and their summed weights, split by kind."""

    def __init__(
        self,
        bounds: np.ndarray,
        weight: np.ndarray,
        pair: np.ndarray,
        n_pairs: int,
        *,
        distinct: bool = False,
    ) -> None:
        keep = weight > 0
        if distinct:  # the rows are distinct already (cells of coded observations)
            rows, w, at = bounds[keep], weight[keep], pair[keep]
        else:
            b = np.column_stack([np.round(bounds[keep], 3), pair[keep]])
            first, back = _distinct_rows(b)
            rows, at = b[first, :4], pair[keep][first]
            w = np.bincount(back, weights=weight[keep], minlength=len(rows))
        self.n = n_pairs
        la, ua, lb, ub = rows.T
        pa, pb = la == ua, lb == ub
        pp, ip, pi, ii = pa & pb, ~pa & pb, pa & ~pb, ~pa & ~pb
        self.pp = (la[pp], lb[pp], w[pp], at[pp])
        self.ip = (_Slices(la[ip], ua[ip], lb[ip]), w[ip], at[ip])
        self.pi = (_Slices(lb[pi], ub[pi], la[pi]), w[pi], at[pi])
        self.ii = (_Rectangles(la[ii], ua[ii], lb[ii], ub[ii]), w[ii], at[ii])

    def log_likelihood(self, r: np.ndarray) -> np.ndarray:
        """The weighted log-likelihood of each pair's correlation ``r`` (n_pairs,) (terms that
        do not depend on it left out)."""
        out = np.zeros(self.n)
        x, y, w, at = self.pp
        if w.size:
            q = r[at]
            s2 = 1.0 - q * q
            t = -0.5 * np.log(s2) - (q * q * (x * x + y * y) - 2 * q * x * y) / (2 * s2)
            out += np.bincount(at, weights=w * t, minlength=self.n)
        for sliced, w, at in (self.ip, self.pi):
            if w.size:
                q = r[at]
                t = sliced.log_mass(q, np.sqrt(1.0 - q * q))
                out += np.bincount(at, weights=w * t, minlength=self.n)
        rectangles, w, at = self.ii
        if w.size:
            t = rectangles.log_p(r[at])
            out += np.bincount(at, weights=w * t, minlength=self.n)
        return out


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
    w = np.ones(a.shape[0]) if weights is None else np.asarray(weights, np.float64)
    p = np.clip(np.asarray(posterior, np.float64), 0.0, 1.0)
    r, se = class_correlations(
        np.hstack([a, b]), np.zeros(len(w), np.int64), mu, w * p, w * (1 - p)
    )
    return float(r[0]), float(se[0])


def class_correlations(
    bounds: np.ndarray,
    pair: np.ndarray,
    mu: np.ndarray,
    w1: np.ndarray,
    w0: np.ndarray,
    *,
    distinct: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`bounds_correlation` of several pairs of lists at once: observations ``bounds``
    (n, 4: either list's lower and upper latent bounds, equal for a point) of pairs ``pair``
    (n,) (0, 1, ...), with weights ``w1`` in the relevant class (around ``mu`` (pairs, 2))
    and ``w0`` in the background (``distinct``: the rows are distinct already). Each pair's
    log-likelihood is maximised over ``[-R_MAX, R_MAX]`` by golden-section search, all pairs
    together, to within ``1e-3`` (one evaluation of every pair per step)."""
    pair = np.asarray(pair, np.int64)
    mu = np.asarray(mu, np.float64).reshape(-1, 2)
    n = len(mu)
    if mu.any():
        shifted = bounds - np.repeat(mu, 2, axis=1)[pair]
        classes = [
            _Observations(bounds, w0, pair, n, distinct=distinct),
            _Observations(shifted, w1, pair, n, distinct=distinct),
        ]
    else:
        classes = [_Observations(bounds, w0 + w1, pair, n, distinct=distinct)]

    def nll(r: np.ndarray) -> np.ndarray:
        return -np.sum([c.log_likelihood(r) for c in classes], axis=0)

    est = _golden(nll, n)
    eps = 1e-3
    curvature = (nll(np.full(n, eps)) - 2.0 * nll(np.zeros(n)) + nll(np.full(n, -eps))) / eps**2
    with np.errstate(divide="ignore"):
        se = np.where(curvature > 0, 1.0 / np.sqrt(np.maximum(curvature, 1e-300)), np.inf)
    return est, se


def _golden(f, n: int, tol: float = 1e-3) -> np.ndarray:
    """The minimiser in ``[-R_MAX, R_MAX]`` of each of ``n`` functions evaluated together
    (``f``: (n,) points -> (n,) values), by golden-section search to within ``tol``."""
    a, b = np.full(n, -R_MAX), np.full(n, R_MAX)
    g = 0.5 * (np.sqrt(5.0) - 1.0)
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = f(c), f(d)
    while n and np.max(b - a) > tol:
        left = fc < fd  # the minimum is in [a, d]
        b = np.where(left, d, b)
        a = np.where(left, a, c)
        c2, d2 = b - g * (b - a), a + g * (b - a)
        x = np.where(left, c2, d2)  # the one new point of each
        fx = f(x)
        c, d = np.where(left, c2, d), np.where(left, c, d2)
        fc, fd = np.where(left, fx, fd), np.where(left, fc, fx)
    return 0.5 * (a + b)


_LOG_2PI = float(np.log(2.0 * np.pi))


class _Slices:
    """Intervals ``lo``, ``hi`` of one score beside points ``y`` of the other: the log of
    each interval's conditional mass given its point, ``log_mass((lo - q y) / s, (hi - q y) /
    s)`` under correlation ``q`` (``s = sqrt(1 - q^2)``). An interval open below (the block
    below a top-k list, most of them) has ``Phi`` 0 at its lower end: its value is ``log
    Phi`` of the upper one alone, as :func:`kofs.aggregate.binormal.log_mass` finds it (its
    lower end's term adds -0.0), without that term's work."""

    def __init__(self, lo: np.ndarray, hi: np.ndarray, y: np.ndarray) -> None:
        below = (lo == -np.inf) & np.isfinite(y)
        self.below, self.rest = np.flatnonzero(below), np.flatnonzero(~below)
        self.lo, self.hi, self.y = lo[self.rest], hi, y

    def log_mass(self, q: np.ndarray, s: np.ndarray) -> np.ndarray:
        """Each interval's log conditional mass (``q``, ``s``: each row's)."""
        qy = q * self.y
        b = (self.hi - qy) / s
        out = np.empty(b.shape)
        out[self.below] = log_ndtr(b[self.below])
        rest = self.rest
        out[rest] = log_mass((self.lo - qy[rest]) / s[rest], b[rest])
        return out


class _PairDensity:
    """Per observation pair (rows ``la``, ``ua``, ``lb``, ``ub``), the log density of two latent
    scores of correlation ``r`` (unit variances, means 0): a point (``la == ua``) by its
    density, an interval by its mass, so a pair of points by the bivariate density, a point
    beside an interval by the point's density times the interval's conditional mass, two
    intervals by their rectangle's mass. The rows are split by kind, and what does not depend
    on ``r`` computed, once: :func:`pair_composites` evaluates them at every step of its
    golden-section search."""

    def __init__(self, la, ua, lb, ub, pair: np.ndarray) -> None:
        self.n = la.shape[0]
        pa, pb = la == ua, lb == ub
        both = np.flatnonzero(pa & pb)
        x, y = la[both], lb[both]
        self.pp = (both, pair[both], x, y, x * x + y * y)
        self.pi = []  # a point beside an interval, either way round
        for sel, p, lo, hi in ((pa & ~pb, la, lb, ub), (~pa & pb, lb, la, ua)):
            at = np.flatnonzero(sel)
            if at.size:
                x = p[at]
                base = -0.5 * x * x - 0.5 * _LOG_2PI
                self.pi.append((at, pair[at], base, _Slices(lo[at], hi[at], x)))
        wide = np.flatnonzero(~pa & ~pb)
        self.ii = (wide, pair[wide], _Rectangles(la[wide], ua[wide], lb[wide], ub[wide]))

    def at(self, r: np.ndarray) -> np.ndarray:
        """The rows' log densities under each pair's correlation ``r``."""
        out = np.empty(self.n)
        rows, pair, x, y, xy = self.pp
        q = r[pair]
        s2 = 1.0 - q * q
        out[rows] = -_LOG_2PI - 0.5 * np.log(s2) - (xy - 2 * q * x * y) / (2 * s2)
        for rows, pair, base, sliced in self.pi:
            q = r[pair]
            out[rows] = base + sliced.log_mass(q, np.sqrt(1.0 - q * q))
        rows, pair, rectangles = self.ii
        if rows.size:
            out[rows] = rectangles.log_p(r[pair])
        return out


def pair_composites(
    bounds: np.ndarray,
    pair: np.ndarray,
    mu: np.ndarray,
    prior: np.ndarray | float,
    weights: np.ndarray,
    r: np.ndarray,
) -> np.ndarray:
    """Each pair's term of the lists' pairwise composite log-likelihood (Lindsay 1988; Varin,
    Reid & Firth 2011): the weighted log of each observation pair's density under the
    two-class mixture, ``(1 - pi) f(obs; 0, r) + pi f(obs - mu; r)`` (:class:`_PairDensity`;
    ``bounds`` (n, 4): the lower and upper latent bounds of either list, ``pair`` (n,) each
    row's pair, ``mu`` (pairs, 2) the relevant class's means, ``prior`` the probability of
    relevance of each row or one for all). A pair whose ``r`` is NaN has its correlation
    profiled out (its maximum over ``[-R_MAX, R_MAX]``). The lists' maps from positions to
    scores (their marginal densities) are the caller's to take off."""
    pair = np.asarray(pair, np.int64)
    mu = np.asarray(mu, np.float64).reshape(-1, 2)
    n = len(mu)
    la, ua, lb, ub = bounds.T
    m1, m2 = mu[pair, 0], mu[pair, 1]
    pi = np.clip(np.asarray(prior, np.float64), 1e-300, 1.0 - 1e-16)
    lp, lq = np.log(pi), np.log1p(-pi)
    background = _PairDensity(la, ua, lb, ub, pair)
    relevant = _PairDensity(la - m1, ua - m1, lb - m2, ub - m2, pair)

    def value(x: np.ndarray) -> np.ndarray:
        t0, t1 = background.at(x), relevant.at(x)
        return np.bincount(pair, weights=weights * np.logaddexp(lq + t0, lp + t1), minlength=n)

    r = np.asarray(r, np.float64).copy()
    free = np.isnan(r)
    if free.any():
        best = _golden(lambda x: -value(np.where(free, x, r)), n)
        r = np.where(free, best, r)
    return value(r)
