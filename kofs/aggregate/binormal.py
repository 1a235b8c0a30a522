"""The binormal latent-score model of one ranked list (array kernels, no ids).

A list ranks genes by a latent score: ``N(0, 1)`` for background genes and ``N(mu, 1)`` for
relevant ones (``mu >= 0``: the list's separation, d' of signal detection theory; its AUC is
``Phi(mu / sqrt 2)``). With a fraction ``rho`` of relevant genes, the scores' distribution is
the mixture ``H(s) = rho Phi(s - mu) + (1 - rho) Phi(s)``, and a gene at normalised position
u (0 = top) of the list has the latent score ``s(u) = H^-1(1 - u)``. Positions are a
permutation: the model's distribution of positions is uniform whatever mu and rho, and the
background genes are pushed down exactly as far as the relevant genes above them take
(Thurstone's model of rankings; Pepe 2003, ch. 5, for the binormal ROC curve).

An observation is an interval ``[ulo, uhi]`` of u (a rank, a tie block, or "below the list"
for a partial list), i.e. the interval ``[s(uhi), s(ulo)]`` of latent score; its probability
under each class and the class's mean score inside it are what the aggregator needs.

A *calibrated* list reports each gene's p-value under a known null distribution of its
statistic (an F test of the labels) in place of its position: ``u = p`` is uniform for
background genes whatever the others do, so its latent score is ``Q^-1(p)`` (``rho = 0`` in
the map above): the two-groups model with the theoretical null (Efron 2008), in which the
distribution of the p-values shows how many genes are relevant, where a ranking's positions
cannot.
"""

from __future__ import annotations

import numpy as np
from scipy.special import log_ndtr, ndtri

from kofs.aggregate.intervals import unique_intervals

__all__ = [
    "GridPoints",
    "grid_scores",
    "grid_scores_q",
    "copula_points",
    "interval_terms",
    "latent_sd",
    "log_mass",
    "mixture_scores",
    "normal_quantiles",
    "score_grid",
    "spread_log_lr",
    "spread_moments",
    "spread_parts",
]

_LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)


def _log1mexp(x: np.ndarray) -> np.ndarray:
    """``log(1 - exp(x))`` for x <= 0 (Maechler 2012), -inf at 0."""
    x = np.asarray(np.minimum(x, 0.0))
    near = x > -0.6931471805599453
    far = ~near
    out = np.empty_like(x)
    with np.errstate(divide="ignore"):
        out[near] = np.log(-np.expm1(x[near]))
        out[far] = np.log1p(-np.exp(x[far]))
    return out


def log_mass(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``log(Phi(b) - Phi(a))`` for ``a <= b`` (either may be infinite), accurate in both
    tails: the upper tail is computed from ``Phi(-x)``."""
    a, b = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
    upper = a > 0
    out = np.empty(a.shape)
    with np.errstate(invalid="ignore"):
        # upper tail: Q(a) - Q(b) = Q(a) (1 - Q(b)/Q(a)), Q(x) = Phi(-x)
        au, bu = a[upper], b[upper]
        la, lb = log_ndtr(-au), log_ndtr(-bu)
        out[upper] = la + _log1mexp(lb - la)
        # otherwise: Phi(b) (1 - Phi(a)/Phi(b))
        down = ~upper
        pa, pb = log_ndtr(a[down]), log_ndtr(b[down])
        out[down] = pb + _log1mexp(pa - pb)
    return np.where(b > a, out, -np.inf)


def _log_pdf(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(np.isfinite(x), -0.5 * x * x - _LOG_SQRT_2PI, -np.inf)


def _log_pdf_finite(x: np.ndarray) -> np.ndarray:
    """:func:`_log_pdf` of finite x."""
    return -0.5 * x * x - _LOG_SQRT_2PI


def mixture_scores(u: np.ndarray, mu: np.ndarray | float, rho: np.ndarray | float) -> np.ndarray:
    """Latent scores ``s(u) = H^-1(1 - u)`` of the mixture ``rho N(mu, 1) + (1-rho) N(0, 1)``.

    ``u``, ``mu`` and ``rho`` broadcast together; u = 0 gives +inf, u = 1 gives -inf. Solved by
    safeguarded Newton steps inside the bracket ``[Q^-1(u), Q^-1(u) + mu]`` (``Q = 1 - Phi``)
    on ``log(rho Q(s - mu) + (1 - rho) Q(s)) = log u`` for u <= 1/2 and on the same equation
    for the lower tail, ``log(rho Phi(s - mu) + (1 - rho) Phi(s)) = log(1 - u)``, above: both
    tails keep their digits. Each element stops when its step is below 1e-12.
    """
    u = np.asarray(u, dtype=np.float64)
    mu = np.asarray(mu, dtype=np.float64)
    per_element = np.ndim(rho) > 0  # a fraction per element (several fits at once)
    if per_element:
        u, mu, rho_all = np.broadcast_arrays(u, mu, np.asarray(rho, dtype=np.float64))
    else:
        u, mu = np.broadcast_arrays(u, mu)
    with np.errstate(divide="ignore"):
        q0 = -ndtri(np.clip(u, 0.0, 1.0))
    out = q0.copy()
    inside = (u > 0) & (u < 1) & (mu > 0)
    if per_element:
        inside &= rho_all > 0
    elif rho <= 0:
        return out
    inner = np.flatnonzero(inside.ravel())
    if inner.size == 0:
        return out
    uu, mm = u.ravel()[inner], mu.ravel()[inner]
    lo = q0.ravel()[inner]
    hi = lo + mm
    upper = uu <= 0.5
    target = np.where(upper, np.log(uu), np.log1p(-uu))
    sign = np.where(upper, 1.0, -1.0)  # lower tail: Phi(x) = Q(-x)
    r = rho_all.ravel()[inner] if per_element else float(rho)
    log_r, log_b = np.log(r), np.log1p(-r)
    s = lo + r * mm  # a start inside the bracket
    result = np.empty_like(s)
    # the unfinished elements' state, compacted as they finish; with finite brackets every
    # iterate is finite and the normal log-density needs no guard
    log_pdf = _log_pdf_finite if np.all(np.isfinite(hi)) else _log_pdf
    active = np.arange(s.size)
    for _ in range(100):
        d = s - mm
        log_t = np.logaddexp(log_r + log_ndtr(-sign * d), log_b + log_ndtr(-sign * s))
        f = sign * (log_t - target)  # > 0: the root lies above s (S(s) > u)
        above = f > 0
        la = np.where(above, s, lo)
        ha = np.where(above, hi, s)
        log_num = np.logaddexp(log_r + log_pdf(d), log_b + log_pdf(s))
        new = s + f / np.exp(log_num - log_t)
        bad = ~((new >= la) & (new <= ha)) | ~np.isfinite(new)
        new = np.where(bad, 0.5 * (la + ha), new)
        scale = 1.0 + np.abs(s)
        done = (np.abs(new - s) <= 1e-12 * scale) | (ha - la <= 1e-13 * scale)
        result[active[done]] = new[done]
        keep = ~done
        active = active[keep]
        if active.size == 0:
            break
        s, lo, hi, mm, sign, target = (x[keep] for x in (new, la, ha, mm, sign, target))
        if per_element:
            log_r, log_b = log_r[keep], log_b[keep]
    else:
        result[active] = s
    flat = out.ravel()
    flat[inner] = result
    return flat.reshape(out.shape)


#: Grid of ``q = Q^-1(u)`` on which :func:`score_grid` solves the mixture exactly.
GRID_Q = np.linspace(-9.0, 9.0, 2049)


def score_grid(mu: np.ndarray, rho: np.ndarray | float, grid: np.ndarray = GRID_Q) -> np.ndarray:
    """``s - q`` on the grid ``q`` for every list (rows: ``mu``; ``rho``: one fraction, or
    one per row), for :func:`grid_scores`."""
    mu = np.atleast_1d(np.asarray(mu, dtype=np.float64))
    if np.ndim(rho) > 0:
        rho = np.asarray(rho, dtype=np.float64)[:, None]
    return mixture_scores(ndtr_upper(grid)[None, :], mu[:, None], rho) - grid[None, :]


def grid_scores(u: np.ndarray, shift: np.ndarray, grid: np.ndarray = GRID_Q) -> np.ndarray:
    """:func:`mixture_scores` of one list by interpolation of its :func:`score_grid` row
    ``shift`` (``s - q`` is smooth in ``q = Q^-1(u)``, between 0 and mu, so the result is
    increasing in q like the exact one; error ~1e-6 with the 2049-point grid). u = 0 and 1
    give +-inf."""
    return grid_scores_q(normal_quantiles(u), shift, grid)


def normal_quantiles(u: np.ndarray) -> np.ndarray:
    """``q = Q^-1(u)`` (+inf at u = 0, -inf at 1): the argument of :func:`grid_scores_q`, which
    does not depend on the list's parameters (computed once per set of intervals)."""
    with np.errstate(divide="ignore"):
        return -ndtri(np.clip(np.asarray(u, dtype=np.float64), 0.0, 1.0))


def grid_scores_q(q: np.ndarray, shift: np.ndarray, grid: np.ndarray = GRID_Q) -> np.ndarray:
    """:func:`grid_scores` from the normal quantiles ``q`` of the positions."""
    return GridPoints(q, None, grid).scores(np.atleast_2d(shift))


class GridPoints:
    """Points ``q`` (any shape; each of row ``rows`` of a table, default 0) located once on an
    evenly spaced grid, so that the scores ``q + np.interp(q, grid, table[row])`` of any
    :func:`score_grid` table follow from a few array operations (the same interval and the
    same arithmetic as ``np.interp``, ``slope (x - x_j) + y_j``: the same result bit for bit).
    Non-finite q (u = 0 or 1) keep their value."""

    def __init__(self, q: np.ndarray, rows: np.ndarray | None, grid: np.ndarray) -> None:
        self.q = np.asarray(q, dtype=np.float64)
        self.grid = grid
        self.finite = np.isfinite(self.q)
        # (every point finite, the common case: the points themselves, not a copy)
        self.all_finite = bool(self.finite.all())
        x = self.q.ravel() if self.all_finite else self.q[self.finite]
        rows = np.zeros(self.q.shape, dtype=np.intp) if rows is None else rows
        self.rows = (
            np.broadcast_to(rows, self.q.shape).ravel()
            if self.all_finite
            else np.broadcast_to(rows, self.q.shape)[self.finite]
        )
        n = grid.size
        h = (grid[-1] - grid[0]) / (n - 1)
        j = np.floor((x - grid[0]) / h)
        np.clip(j, 0, n - 2, out=j)
        k = j.astype(np.intp)
        # the division's rounding may miss the interval by one: grid[k] <= x < grid[k + 1]
        k -= x < grid.take(k)
        np.clip(k, 0, n - 2, out=k)
        k += x >= grid.take(k + 1)
        np.clip(k, 0, n - 2, out=k)
        self.k = k
        self.dx = x - grid.take(k)
        self.step = np.diff(grid).take(k)  # grid[k + 1] - grid[k]
        # each point's grid cell as a flat index into a (rows, grid size) table (and the
        # next entry's), and its row's first and last entries (a fit's EM step reads a new
        # table every time)
        self.first = self.rows * n
        self.flat = self.first + k
        self.flat_next = self.flat + 1
        self.below = np.flatnonzero(x < grid[0])
        self.above = np.flatnonzero(x >= grid[-1])
        self.at_point = np.flatnonzero(self.dx == 0)
        self.x = x

    def scores(self, table: np.ndarray) -> np.ndarray:
        """``q + np.interp(q, grid, table[row])``; ``table``: (rows, grid size), whose
        non-finite values (the grid's last point, u = 1) are handled as ``np.interp`` does."""
        grid, k, dx = self.grid, self.k, self.dx
        flat = np.ascontiguousarray(table, dtype=np.float64).ravel()
        y0, y1 = flat.take(self.flat), flat.take(self.flat_next)
        with np.errstate(invalid="ignore", over="ignore"):
            # (in place: the same operations, fewer arrays of every point)
            slope = np.subtract(y1, y0)
            slope /= self.step
            v = np.multiply(slope, dx)
            v += y0
            bad = np.flatnonzero(np.isnan(v))
            if bad.size:  # np.interp: from the other end, else the common value
                v[bad] = slope[bad] * (self.x[bad] - grid[k[bad] + 1]) + y1[bad]
                same = bad[np.isnan(v[bad]) & (y0[bad] == y1[bad])]
                v[same] = y0[same]
        v[self.at_point] = y0[self.at_point]
        v[self.below] = flat.take(self.first[self.below])
        v[self.above] = flat.take(self.first[self.above] + grid.size - 1)
        if self.all_finite:
            v += self.x
            return v.reshape(self.q.shape)
        out = self.q.copy()
        out[self.finite] = self.x + v
        return out


def ndtr_upper(q: np.ndarray) -> np.ndarray:
    """``Q(q) = 1 - Phi(q)``."""
    return np.exp(log_ndtr(-np.asarray(q, dtype=np.float64)))


#: Intervals narrower than this fraction of their distance to the nearer end of [0, 1] are
#: evaluated at their midpoint (density ratio): the exact difference of two nearly equal
#: probabilities loses the digits the ratio needs. The criterion is relative because the
#: density varies on the scale of that distance: an interval touching an end (the top gene's
#: [0, 1/n]) is always evaluated exactly, where a midpoint would overstate a large separation.
NARROW = 1e-2
#: Separations below which a wide interval's point of equal evidence is its background mean
#: (its limit; ``log_lr / mu`` loses digits as mu -> 0).
EQUAL_EVIDENCE_MU = 1e-6
#: Widest interval read as a point (a tie block of at most 1 % of the genes, a bin of the
#: fit's coded positions): its point score is its mixture mean. Wider ones -- a gene below a
#: top-k list, a censored, masked or large tied block -- are observations of an interval, read
#: at their point of equal evidence (:func:`interval_terms`); the relevant-class test leaves
#: them out of its copula terms.
POINT_WIDTH = 0.01


def latent_sd(ulo: np.ndarray | float, uhi: np.ndarray | float) -> np.ndarray:
    """The standard deviation of a ``N(0, 1)`` latent score inside the interval of positions
    ``[ulo, uhi]`` (scores ``[Q^-1(uhi), Q^-1(ulo)]``): ``Var = 1 + (a phi(a) - b phi(b)) / Z
    - ((phi(a) - phi(b)) / Z)^2``, ``Z = Phi(b) - Phi(a)`` (:func:`log_mass`, accurate in
    both tails); 0 for an empty interval."""
    ulo, uhi = np.broadcast_arrays(
        np.asarray(ulo, dtype=np.float64), np.asarray(uhi, dtype=np.float64)
    )
    a, b = normal_quantiles(uhi), normal_quantiles(ulo)
    log_z = log_mass(a, b)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        pa, pb = np.exp(_log_pdf(a) - log_z), np.exp(_log_pdf(b) - log_z)
        ta = np.where(np.isfinite(a), a * pa, 0.0)
        tb = np.where(np.isfinite(b), b * pb, 0.0)
        var = 1.0 + ta - tb - (pa - pb) ** 2
    return np.sqrt(np.where(np.isfinite(var) & (b > a), np.maximum(var, 0.0), 0.0))


#: The latent spread of the widest point at an end of a list (``[0, POINT_WIDTH]``: 0.31).
POINT_SD = float(latent_sd(0.0, POINT_WIDTH))


def copula_points(ulo: np.ndarray, uhi: np.ndarray) -> np.ndarray:
    """Which observations the lists' Gaussian copula reads as points (at their mean latent
    score): those inside which a ``N(0, 1)`` latent score varies no more than inside the
    widest point at an end (:data:`POINT_SD`): every interval at most :data:`POINT_WIDTH`
    wide, and a tie block inside a full ranking (a Mann-Whitney test of 20 + 20 samples ties
    its genes in blocks of up to 3 % of them in the middle of the list), but not the block
    below a top-k list."""
    ulo, uhi = np.broadcast_arrays(
        np.asarray(ulo, dtype=np.float64), np.asarray(uhi, dtype=np.float64)
    )
    out = (uhi - ulo) <= POINT_WIDTH
    wide = ~out
    if wide.any():  # the distinct wide intervals (tie blocks: a few per list) once each
        plo, phi, back = unique_intervals(ulo[wide], uhi[wide])
        out[wide] = (latent_sd(plo, phi) <= POINT_SD)[back]
    return out


def narrow(ulo: np.ndarray, uhi: np.ndarray) -> np.ndarray:
    """Which intervals :func:`interval_terms` evaluates at their midpoint (:data:`NARROW`)."""
    ulo = np.asarray(ulo, dtype=np.float64)
    uhi = np.asarray(uhi, dtype=np.float64)
    return (uhi - ulo) < NARROW * np.minimum(ulo, 1.0 - uhi)


def interval_terms(
    ulo: np.ndarray,
    uhi: np.ndarray,
    mu: np.ndarray | float,
    rho: np.ndarray | float,
    *,
    scores: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
    calibrated: np.ndarray | bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Class terms of position intervals ``[ulo, uhi]`` (broadcast with ``mu``, and with
    ``rho`` when it is an array).

    ``scores``: the latent scores ``(s(ulo), s(uhi), s(mid))`` when already known (else
    computed by :func:`mixture_scores`). ``calibrated`` (per element, or one for all): the
    interval is one of null p-values, not of positions (module docstring): its scores are
    ``Q^-1(u)`` whatever mu and rho, and its width is its background probability, not its
    mixture probability.

    Returns
    -------
    log_lr : ndarray
        ``log P(interval | relevant) - log P(interval | background)``; for an interval
        that is :func:`narrow` the density ratio at its midpoint, ``mu s - mu^2 / 2``.
    mean1, mean0 : ndarray
        Mean latent score inside the interval for a relevant / a background gene (the
        truncated-normal means): the E-step statistics of mu and of the list correlations.
    mean : ndarray
        The interval's point score, at which the lists' correlation correction reads it: the
        score itself for a narrow interval; the mixture mean for one at most
        :data:`POINT_WIDTH` wide (a point, or the fit's bin of points: the correction is linear
        in the scores); for a wider observation the point of equal evidence, where a single
        position's log likelihood ratio ``mu s - mu^2 / 2`` equals the interval's (``log_lr /
        mu + mu / 2``, inside the interval; the background mean ``mean0`` as mu -> 0). The
        correction carries the point's quadratic term, so read at such an interval's mean it
        overshoots the interval's weaker own evidence: a gene below three correlated top-200
        lists of 5,000 genes (separations 3-4.4) came out as evidence *for* the gene (+0.05 to
        +0.8 per list), a fifth of the genes relevant, and the fused order near chance. At the
        point of equal evidence the gene's whole term is its list's own log likelihood ratio
        times ``(S^-1 mu)_l / mu_l``, as a point's is.
    """
    ulo = np.asarray(ulo, dtype=np.float64)
    uhi = np.asarray(uhi, dtype=np.float64)
    if scores is None:
        rho_map = np.where(calibrated, 0.0, rho) if np.any(calibrated) else rho
        s_top = mixture_scores(ulo, mu, rho_map)  # higher score = nearer the top
        s_bot = mixture_scores(uhi, mu, rho_map)
        s_mid = mixture_scores(0.5 * (ulo + uhi), mu, rho_map)
    else:
        s_top, s_bot, s_mid = scores
    mu = np.broadcast_to(np.asarray(mu, dtype=np.float64), s_top.shape)
    ulo, uhi = np.broadcast_to(ulo, s_top.shape), np.broadcast_to(uhi, s_top.shape)
    is_narrow = narrow(ulo, uhi)
    with np.errstate(invalid="ignore"):
        log_lr = mu * s_mid - 0.5 * mu * mu
    mean1 = s_mid.copy()
    mean0 = s_mid.copy()
    mean = s_mid.copy()
    wide = ~is_narrow
    if wide.any():  # ties, censored and masked blocks: exact class probabilities and means
        a, b, m = s_bot[wide], s_top[wide], mu[wide]
        log_p1 = log_mass(a - m, b - m)
        log_p0 = log_mass(a, b)
        with np.errstate(over="ignore", invalid="ignore"):
            m1 = m + np.exp(_log_pdf(a - m) - log_p1) - np.exp(_log_pdf(b - m) - log_p1)
            m0 = np.exp(_log_pdf(a) - log_p0) - np.exp(_log_pdf(b) - log_p0)
            log_lr[wide] = log_p1 - log_p0
        m1 = np.where(np.isfinite(m1), m1, s_mid[wide])
        m0 = np.where(np.isfinite(m0), m0, s_mid[wide])
        mean1[wide] = m1
        mean0[wide] = m0
        # rho P1 + (1 - rho) P0 = the interval's width for positions (for null p-values, P0):
        # the class shares of the mixture mean
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            r = np.broadcast_to(rho, s_top.shape)[wide] if np.ndim(rho) > 0 else rho
            width = np.maximum(uhi[wide] - ulo[wide], 1e-300)
            if np.any(calibrated):
                cal = np.broadcast_to(calibrated, s_top.shape)[wide]
                width = np.where(cal, r * np.exp(log_p1) + (1 - r) * np.exp(log_p0), width)
            share = np.clip(r * np.exp(log_p1) / np.maximum(width, 1e-300), 0, 1)
            # the point of equal evidence of an observation wider than a point (docstring);
            # its limit as mu -> 0 is the background mean
            point = log_lr[wide] / m + 0.5 * m
        mixture = np.where(np.isfinite(share), share * m1 + (1 - share) * m0, s_mid[wide])
        equal = np.where((m > EQUAL_EVIDENCE_MU) & np.isfinite(point), point, m0)
        mean[wide] = np.where(uhi[wide] - ulo[wide] > POINT_WIDTH, equal, mixture)
    # an empty or uninformative interval carries nothing
    log_lr = np.where(np.isfinite(log_lr), log_lr, 0.0)
    return log_lr, mean1, mean0, mean


# --- effects of varying size (calibrated lists) -------------------------------------------
#
# A relevant gene's normal scores over calibrated lists are ``s = lambda mu + e``, ``e ~ N(0,
# S)``, with an effect scale ``lambda ~ N+(1, tau2)`` (N(1, tau2) truncated to lambda > 0)
# shared by the gene's lists: effects of varying size (kofs.aggregate.posterior, "Effects of
# varying size"). With ``a = mu' S^-1 s`` and ``c = mu' S^-1 mu``, lambda given s is N(m, v)
# truncated to lambda > 0, ``m = (1 + tau2 a) / h``, ``v = tau2 / h``, ``h = 1 + tau2 c``.


def spread_log_lr(a: np.ndarray, c: float | np.ndarray, tau2: float) -> np.ndarray:
    """The log likelihood ratio (relevant / background) of genes whose scores give ``a = mu'
    S^-1 s``, integrated over ``lambda ~ N+(1, tau2)``: ``-log(h)/2 + (2a - c + tau2 a^2)/2h +
    log Phi((1 + tau2 a) / sqrt(tau2 h)) - log Phi(1 / sqrt(tau2))``; ``tau2 = 0``: the linear
    discriminant ``a - c/2`` (the same numbers)."""
    a = np.asarray(a, dtype=np.float64)
    if tau2 <= 0:
        return a - 0.5 * c
    h = 1.0 + tau2 * c
    t = np.sqrt(tau2)
    out = (2.0 * a - c + tau2 * a * a) / (2.0 * h) - 0.5 * np.log(h)
    out += log_ndtr((1.0 + tau2 * a) / (t * np.sqrt(h))) - float(log_ndtr(1.0 / t))
    return out


def spread_moments(
    a: np.ndarray, c: float | np.ndarray, tau2: float
) -> tuple[np.ndarray, np.ndarray]:
    """``E[lambda | s]`` and ``E[lambda^2 | s]`` of a relevant gene (``tau2 = 0``: 1 and 1):
    the truncated normal's ``m + sqrt(v) r`` and ``m E[lambda] + v``, ``r = phi(alpha) /
    Phi(alpha)``, ``alpha = m / sqrt(v)``."""
    return spread_parts(a, c, tau2)[1:]


def spread_parts(
    a: np.ndarray, c: float | np.ndarray, tau2: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`spread_log_lr` and :func:`spread_moments` at once (one ``log Phi(alpha)``)."""
    a = np.asarray(a, dtype=np.float64)
    if tau2 <= 0:
        return a - 0.5 * c, np.ones_like(a), np.ones_like(a)
    h = 1.0 + tau2 * c
    m = (1.0 + tau2 * a) / h
    sd = np.sqrt(tau2 / h)
    alpha = m / sd
    log_phi = log_ndtr(alpha)
    llr = (2.0 * a - c + tau2 * a * a) / (2.0 * h) - 0.5 * np.log(h)
    llr += log_phi - float(log_ndtr(1.0 / np.sqrt(tau2)))
    r = np.exp(-0.5 * alpha * alpha - _LOG_SQRT_2PI - log_phi)
    # far below 0 (alpha -> -inf) m + sd r -> sd / |alpha|: the sum kept >= 0
    first = np.maximum(m + sd * r, 0.0)
    return llr, first, np.maximum(m * first + sd * sd, first * first)
