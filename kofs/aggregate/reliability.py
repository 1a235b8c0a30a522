"""Reliability-weighted aggregation: a latent "relevant gene" class learned from agreement.

Model (a Dawid & Skene 1979 latent-class model for ranked lists, in the spirit of BARD, Deng,
Han, Li & Liu 2014): every gene i is relevant (``Z_i = 1``) with prior probability ``rho`` or
background (``Z_i = 0``). List l reports gene i at a normalised position ``u_{l,i}`` in (0, 1].

* Background genes: ``u ~ Uniform(0, 1)`` in every list.
* Relevant genes: ``u ~ Beta(a_l, 1)``, density ``a_l u^(a_l - 1)``, with ``0 < a_l <= 1``.
  ``a_l = 1`` is an uninformative list; the smaller ``a_l``, the more the list concentrates the
  relevant genes at its top. ``a_l`` is never above 1, so a list cannot be "informative in
  reverse": a reversed or random list is fitted at ``a_l = 1`` and contributes nothing.
* Lists are conditionally independent given Z, except that each list's log-likelihood ratio
  is multiplied by a *redundancy weight* ``c_l = 1 / sum_k max(0, r_{lk})^2`` where ``r`` is the
  correlation of the lists' normal scores among the background genes that either list calls
  (its top ``redundancy_top``; :func:`redundancy_weights`) -- a composite likelihood (Varin,
  Reid & Firth 2011). Two copies of a list get ``c = 1/2`` each and count once; lists that
  agree only about the relevant genes, or only in their bulk, keep ``c ~ 1``.

An observation is an interval of u: a gene alone at position r of M has
``[(r - 1)/M, r/M]``; a tie block at positions a..b has ``[(a - 1)/M, b/M]``; a gene absent
from a partial list of n genes (NaN rank) has ``[n/M, 1]`` (censored: "below the list").
The likelihood ratio of relevant to background is
``LR_l(lo, hi) = (hi^a - lo^a) / (hi - lo)``, so the posterior log-odds of relevance is
``logit(rho) + sum_l c_l log LR_l``. That log-odds (without the prior) is the fused score.
For an untied gene ``log LR ~ log a_l + (1 - a_l)(-log u)``: the score is a weighted sum of
``-log u`` with weights ``w_l = c_l (1 - a_l)``, reported normalised to sum 1.

EM: E step ``p_i = P(Z_i = 1 | data)``; M step ``rho = mean p`` (capped at ``max_prior``) and
``a_l = argmax sum_i p_i log LR_l`` (a concave one-dimensional problem, solved by a few
safeguarded Newton steps on binned sufficient statistics). With known relevant genes
(supervised), their ``p_i`` is fixed at 1. A list is never scored (M step) on the genes it was
built from (``built_from``), so a list seeded with the known genes cannot earn weight from them.
With fixed ``list_weights`` (e.g. label-supervised predictive values), the EM is skipped: the
weights are used as ``w_l``.

References
----------
Dawid AP, Skene AM (1979) Maximum likelihood estimation of observer error-rates using the EM
algorithm. Appl Stat 28:20-28.
Deng K, Han S, Li KJ, Liu JS (2014) Bayesian aggregation of order-based rank data. JASA
109:1023-1039.
Kolde R, Laur S, Adler P, Vilo J (2012) Robust rank aggregation. Bioinformatics 28:573-580.
Li C, Yang Z, et al. (2020) MAIC: meta-analysis by information content. (weights by
agreement with the consensus).
Varin C, Reid N, Firth D (2011) An overview of composite likelihood methods. Stat Sin 21:5-42.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit, ndtri

from kofs.errors import ParameterError
from kofs.registry import Param, aggregator

__all__ = [
    "ReliabilityFit",
    "block_intervals",
    "fit_reliability",
    "hybrid_weights",
    "interval_log_lr",
    "redundancy_weights",
]

A_MIN = 1e-3
#: Redundancy where the lists call (:func:`redundancy_weights`): at least this many genes per
#: list count as called, and a pair of lists calling fewer genes is measured on all genes.
CALLS_MIN = 50
#: Default top fraction of :func:`redundancy_weights` (defaults version 4; docs/aggregation.md).
REDUNDANCY_TOP = 0.05
_BATCH = 50  # bootstrap replicates drawn at once (memory: 50 x M doubles)
_MAX_STEP = 0.2


def block_intervals(
    ranks: np.ndarray, masked: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Observation intervals ``[lo, hi]`` of u for every gene in every list.

    Parameters
    ----------
    ranks : ndarray of shape (M, L)
        Ranks, 1 = best, ties averaged; NaN = the gene is absent from that (partial) list.
        Only the order of each column and its tie blocks are used.
    masked : ndarray of bool (M, L), optional
        Observations to drop (the genes a list was built from): they get ``[0, 1]`` and the
        list's other genes are positioned among the unmasked genes only, so that under the
        null they stay uniform.

    Returns
    -------
    lo, hi : ndarrays of shape (M, L)
        With ``M_j`` = the column's unmasked genes: a tie block at positions a..b has
        ``[(a-1)/M_j, b/M_j]``; absent genes of a list of n present genes have ``[n/M_j, 1]``.
    """
    R = np.asarray(ranks, dtype=np.float64)
    M, L = R.shape
    lo = np.zeros_like(R)
    hi = np.ones_like(R)
    for j in range(L):
        col = R[:, j]
        keep = np.ones(M, dtype=bool) if masked is None else ~np.asarray(masked[:, j], bool)
        Mj = int(keep.sum())
        if Mj == 0:
            continue
        present = ~np.isnan(col) & keep
        absent = np.isnan(col) & keep
        n = int(present.sum())
        lo[absent, j] = n / Mj
        if n:
            _, inverse, counts = np.unique(col[present], return_inverse=True, return_counts=True)
            end = np.cumsum(counts)
            lo[present, j] = (end - counts)[inverse.ravel()] / Mj
            hi[present, j] = end[inverse.ravel()] / Mj
    return lo, hi


def interval_log_lr(a: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``log((hi^a - lo^a) / (hi - lo))``, broadcast over a, lo, hi (0 <= lo < hi <= 1)."""
    a = np.asarray(a, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_hi = np.log(hi)
        ratio = np.where(lo > 0, np.log(np.maximum(lo, 1e-300)) - log_hi, -np.inf)
        # hi^a - lo^a = hi^a (1 - (lo/hi)^a) = hi^a * -expm1(a log(lo/hi))
        out = a * log_hi + np.log(-np.expm1(a * ratio)) - np.log(hi - lo)
    return out


def _dlog_lr(a: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """First and second derivatives in a of :func:`interval_log_lr`.

    With ``t = lo/hi`` and ``x = -a log t``: ``f' = log hi - log t / expm1(x)``,
    ``f'' = -(log t)^2 e^-x / (-expm1(-x))^2``; for ``lo = 0``: ``f' = log hi``, ``f'' = 0``.
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        log_t = np.log(lo) - np.log(hi)
        x = -a * log_t
        pos = lo > 0
        d1 = np.log(hi) - np.where(pos, log_t / np.expm1(x), 0.0)
        d2 = np.where(pos, -(log_t**2) * np.exp(-x) / np.expm1(-x) ** 2, 0.0)
    return d1, d2


def _bins(M: int, n_bins: int) -> np.ndarray:
    """u-space bin edges: single positions at the top, then geometric up to 1."""
    edges = np.unique(np.round(np.geomspace(1.0, M, n_bins + 1)))
    return np.concatenate(([0.0], edges / M))


@dataclass(frozen=True)
class _Coded:
    """Each list's observations coded into a small table of intervals (sufficient statistics)."""

    codes: np.ndarray  # (M, L) int: index into the list's table
    lo: list[np.ndarray]  # per list, (K_l,)
    hi: list[np.ndarray]
    offsets: np.ndarray  # (L,) start of each list in a flat table


def _code(lo: np.ndarray, hi: np.ndarray, n_bins: int) -> _Coded:
    """Coarsen each gene's interval to its u-bin, unless its own interval (a tie block or the
    absent block) is wider than the bin; identical intervals share a code."""
    M, L = lo.shape
    edges = _bins(M, n_bins)
    codes = np.empty((M, L), dtype=np.int64)
    los, his, offsets = [], [], np.zeros(L, dtype=np.int64)
    total = 0
    for j in range(L):
        mid = 0.5 * (lo[:, j] + hi[:, j])
        k = np.clip(np.searchsorted(edges, mid, side="right") - 1, 0, len(edges) - 2)
        blo, bhi = edges[k], edges[k + 1]
        wide = (hi[:, j] - lo[:, j]) > (bhi - blo)
        clo = np.where(wide, lo[:, j], blo)
        chi = np.where(wide, hi[:, j], bhi)
        # an interval is identified by both ends (a masked [0, 1] shares its lower end with
        # the list's first block)
        _, first, inv = np.unique(clo + 1j * chi, return_index=True, return_inverse=True)
        codes[:, j] = inv.ravel() + total
        los.append(clo[first])
        his.append(chi[first])
        offsets[j] = total
        total += len(first)
    return _Coded(codes, los, his, offsets)


def _weighted_corr(z: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted Pearson correlation matrix of the columns of ``z`` (NaN-free, 0 where a column
    is constant)."""
    w = w / w.sum()
    zc = z - w @ z
    cov = (zc * w[:, None]).T @ zc
    sd = np.sqrt(np.clip(np.diag(cov), 1e-300, None))
    r = cov / np.outer(sd, sd)
    r[~np.isfinite(r)] = 0.0
    np.fill_diagonal(r, 1.0)
    return r


def _called_corr(z: np.ndarray, w: np.ndarray, called: np.ndarray):
    """Weighted correlation of every pair of columns of ``z`` among the rows either column
    ``called``, and where that region holds at least ``CALLS_MIN`` rows of positive weight.

    The sums over the union ``c_j + c_k - c_j c_k`` are a few (L x M)(M x L) products, so all
    L^2 pairs cost about as much as one correlation matrix."""
    C = called.astype(np.float64)
    wz = z * w[:, None]
    wz2 = wz * z
    WC = C * w[:, None]

    def union(v_own: np.ndarray, V: np.ndarray) -> np.ndarray:
        # [j, k] = sum_i V_ij (c_ij + c_ik - c_ij c_ik), with v_own[j] = sum_i V_ij c_ij
        return v_own[:, None] + (C.T @ V).T - (C.T @ (V * C)).T

    n = union(WC.sum(axis=0), np.broadcast_to(w[:, None], z.shape))
    sj = union((wz * C).sum(axis=0), wz)
    qj = union((wz2 * C).sum(axis=0), wz2)
    wzc = wz * C
    p = wzc.T @ z + z.T @ wzc - (z * C).T @ wzc
    count = C.sum(axis=0)
    rows = count[:, None] + count[None, :] - C.T @ C
    with np.errstate(divide="ignore", invalid="ignore"):
        mj = sj / n
        vj = qj / n - mj * mj
        r = (p / n - mj * mj.T) / np.sqrt(vj * vj.T)
    # a list constant on the region orders nothing there: no region correlation
    enough = (rows >= CALLS_MIN) & (n > 0) & (vj > 1e-12) & (vj.T > 1e-12)
    r = np.where(np.isfinite(r), np.clip(r, -1.0, 1.0), 0.0)
    np.fill_diagonal(r, 1.0)
    return r, enough


def redundancy_weights(
    lo: np.ndarray,
    hi: np.ndarray,
    background: np.ndarray | None = None,
    *,
    top: float = 1.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Redundancy weights ``c_l = 1 / sum_k max(0, r_lk)^2`` and the correlation matrix r.

    ``r`` is the (background-weighted) Pearson correlation of the normal scores
    ``Phi^-1(mid u)`` of the lists; ``background`` holds each gene's weight (1 - p_i), None for
    all genes equally. With ``top`` < 1, ``r_lk`` is measured among the genes that list l or
    list k *calls* -- those in its top ``max(top, CALLS_MIN / M)`` -- (among all genes when
    fewer than ``CALLS_MIN`` qualify, and for pairs with a set-like list, which orders
    nothing among its calls: there the overlap is what counts). Agreement in the bulk of two
    lists (e.g. graph scores that both follow a gene's mean) says nothing about which genes
    are relevant, and counted as redundancy it can leave the weights unidentified; the
    redundant errors that matter are made where the lists call. Pairwise regions keep
    ``r_lk`` independent of the other lists (docs/aggregation.md, "Redundancy where the lists
    call").
    """
    M, L = lo.shape
    w = np.ones(M) if background is None else np.asarray(background, dtype=np.float64)
    mid = 0.5 * (lo + hi)
    z = ndtri(np.clip(mid, 1e-12, 1 - 1e-12))
    r = _weighted_corr(z, w)
    if top < 1.0:
        called = mid <= min(1.0, max(float(top), CALLS_MIN / M))
        r_called, enough = _called_corr(z, w, called)
        # a set-like list (at most two distinct positions: its genes and the rest) orders
        # nothing among the genes it calls; its redundancy is its overlap with the other
        # list, which the all-gene correlation measures (for two sets: their phi coefficient)
        set_like = np.array([np.unique(mid[:, j]).size <= 2 for j in range(L)])
        enough &= ~(set_like[:, None] | set_like[None, :])
        r = np.where(enough, r_called, r)
    c = 1.0 / (np.clip(r, 0.0, 1.0) ** 2).sum(axis=1)
    return c, r


@dataclass(frozen=True)
class ReliabilityFit:
    """Result of :func:`fit_reliability`.

    Attributes
    ----------
    a : ndarray (L,)
        Beta(a, 1) shape of each list's relevant-gene positions (1 = uninformative).
    redundancy : ndarray (L,)
        c_l, the composite-likelihood weight of each list.
    prior : float
        rho, the fitted fraction of relevant genes.
    posterior : ndarray (M,)
        p_i = P(Z_i = 1 | data).
    log_likelihood : float
        Composite log-likelihood at the fit.
    iterations : int
        L-BFGS-B iterations (both stages).
    converged : bool
    """

    a: np.ndarray
    redundancy: np.ndarray
    prior: float
    posterior: np.ndarray
    log_likelihood: float
    iterations: int
    converged: bool
    coded: _Coded | None = None
    fixed: np.ndarray | None = None
    canonical: np.ndarray | None = None  # gene order of the fit (rows sorted by their data)

    @property
    def weights(self) -> np.ndarray:
        """Normalised score weights ``c_l (1 - a_l) / sum``; all zero when no list informs."""
        return score_weights(self.a, self.redundancy)


def score_weights(a: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``c_l (1 - a_l)`` normalised to sum 1 (all zero when every a_l = 1; a_l within 1e-9 of
    1 counts as 1)."""
    gap = 1.0 - np.asarray(a)
    w = np.asarray(c) * np.where(gap > 1e-9, gap, 0.0)
    s = w.sum(axis=-1, keepdims=True)
    return np.divide(w, s, out=np.zeros_like(w), where=s > 0)


class _Problem:
    """Negative composite log-likelihood of the model and its gradient in (a_1..a_L, rho)."""

    def __init__(
        self,
        coded: _Coded,
        c: np.ndarray,
        weights: np.ndarray,
        fixed: np.ndarray,
        rows: np.ndarray | None = None,
        inactive_weight: float = 0.0,
        tie: np.ndarray | None = None,
    ) -> None:
        self.L = len(coded.lo)
        self.flat_lo = np.concatenate(coded.lo)
        self.flat_hi = np.concatenate(coded.hi)
        self.owner = np.repeat(np.arange(self.L), [len(x) for x in coded.lo])
        self.codes = coded.codes if rows is None else coded.codes[rows]
        self.flat_codes = self.codes.ravel()
        self.c = np.asarray(c, dtype=np.float64)
        self.w = weights if rows is None else weights[rows]
        self.fixed = fixed if rows is None else fixed[rows]
        self.inactive = float(inactive_weight)
        self.K = len(self.flat_lo)
        self.scale = 1.0 / max(float(self.w.sum()) + self.inactive, 1.0)
        self.tie = np.arange(self.L) if tie is None else np.asarray(tie)  # list -> parameter
        self.n_params = int(self.tie.max()) + 1
        self.A = np.eye(self.n_params)[:, self.tie] if tie is not None else None
        self.param = self.tie[self.owner]
        self.cw = self.c[self.owner]

    def _fold(self, x: np.ndarray) -> np.ndarray:
        """Per-list quantities (L,) or (L, L) summed onto the (tied) parameters."""
        if self.A is None:
            return x
        return self.A @ x if x.ndim == 1 else self.A @ x @ self.A.T

    def evaluate(self, a: np.ndarray, rho: float):
        """(log-likelihood, posterior p, summed log LR s) at (a, rho)."""
        f = interval_log_lr(a[self.param], self.flat_lo, self.flat_hi) * self.cw
        s = f[self.codes].sum(axis=1)
        eta = np.log(rho) - np.log1p(-rho) + s
        ll_i = np.where(self.fixed, np.log(rho) + s, np.log1p(-rho) + np.logaddexp(0.0, eta))
        p = np.where(self.fixed, 1.0, expit(eta))
        ll = float(self.w @ ll_i) + self.inactive * float(np.log1p(-rho))
        return ll, p, s

    def newton_terms(self, a: np.ndarray, rho: float):
        """Log-likelihood, gradient and Hessian in (a_1..a_L, theta = logit rho)."""
        ll, p, _ = self.evaluate(a, rho)
        d1, d2 = _dlog_lr(a[self.param], self.flat_lo, self.flat_hi)
        D1 = (d1 * self.cw)[self.codes]  # (M, L): d s_i / d a_l
        w, fixed = self.w, self.fixed
        wp = w * p
        v = np.where(fixed, 0.0, w * p * (1.0 - p))
        g_a = self._fold(wp @ D1)
        g_t = float((w * np.where(fixed, 1.0 - rho, p - rho)).sum()) - self.inactive * rho
        H_aa = (D1 * v[:, None]).T @ D1
        H_aa[np.diag_indices(self.L)] += _per_list(self, wp, d2 * self.cw)
        H_aa = self._fold(H_aa)
        h_at = self._fold(v @ D1)
        h_tt = float(v.sum()) - rho * (1.0 - rho) * (float(w.sum()) + self.inactive)
        n = len(g_a)
        g = np.concatenate([g_a, [g_t]])
        H = np.empty((n + 1, n + 1))
        H[:n, :n] = H_aa
        H[:n, -1] = H[-1, :n] = h_at
        H[-1, -1] = h_tt
        return ll, g, H


def _per_list(problem: _Problem, wp: np.ndarray, values: np.ndarray) -> np.ndarray:
    """``sum_i wp_i values[code_il]`` for every list l."""
    G = np.bincount(problem.flat_codes, weights=np.repeat(wp, problem.L), minlength=problem.K)
    return np.bincount(problem.owner, weights=G * values, minlength=problem.L)


def _maximise(
    problem: _Problem,
    a0: np.ndarray,
    rho0: float,
    max_prior: float,
    tol: float,
    max_iter: int,
    warmup: int = 20,
) -> tuple[np.ndarray, float, int, bool]:
    """Projected Newton with backtracking on ``A_MIN <= a <= 1``, ``1e-6 <= rho <= max_prior``.

    Variables are (a, logit rho). A variable at a bound whose gradient points outward is held
    there; the Newton step on the others uses the Hessian made negative definite (eigenvalues
    capped at ``-1e-8 * scale``); the step is projected on the box and halved until the
    log-likelihood does not decrease.
    """
    L = problem.n_params
    lo_b = np.concatenate([np.full(L, A_MIN), [_logit(1e-6)]])
    hi_b = np.concatenate([np.ones(L), [_logit(max_prior)]])
    a0, rho0, _ = _em_steps(problem, np.clip(a0, A_MIN, 1.0), rho0, max_prior, warmup, 1e-6)
    x = np.clip(np.concatenate([a0, [_logit(rho0)]]), lo_b, hi_b)
    ll, g, H = problem.newton_terms(x[:-1], float(expit(x[-1])))
    scale = max(float(problem.w.sum()) + problem.inactive, 1.0)
    converged = False
    it = 0
    while it < max_iter:
        it += 1
        at_lo = (x <= lo_b) & (g < 0)
        at_hi = (x >= hi_b) & (g > 0)
        free = ~(at_lo | at_hi)
        step = np.zeros_like(x)
        if free.any():
            Hf = H[np.ix_(free, free)]
            vals, vecs = np.linalg.eigh((Hf + Hf.T) / 2)
            vals = np.minimum(vals, -1e-8 * scale)
            step[free] = -(vecs @ ((vecs.T @ g[free]) / vals))
            big = float(np.abs(step).max())
            if big > _MAX_STEP:  # trust region: the likelihood is not concave everywhere
                step *= _MAX_STEP / big
        t = 1.0
        while True:
            x_new = np.clip(x + t * step, lo_b, hi_b)
            ll_new, p_new, _ = problem.evaluate(x_new[:-1], float(expit(x_new[-1])))
            if ll_new > ll or t < 1e-10:
                break
            t *= 0.5
        gain = ll_new - ll
        if gain <= 0:
            converged = True
            break
        moved = float(np.abs(x_new - x).max())
        x = x_new
        ll, g, H = problem.newton_terms(x[:-1], float(expit(x[-1])))
        if gain <= tol * scale or moved < 1e-10:
            converged = True
            break
    return x[:-1].copy(), float(expit(x[-1])), it, converged


def _em_steps(
    problem: _Problem, a: np.ndarray, rho: float, max_prior: float, n_steps: int, tol: float
) -> tuple[np.ndarray, float, int]:
    """EM iterations (monotone; they keep the start's basin of attraction).

    E step: p_i. M step: rho = weighted mean of p (in [1e-6, max_prior]); each a_l maximises
    the concave ``sum_k S_lk log LR(a; lo_k, hi_k)`` (S = summed p per code) by safeguarded
    one-dimensional Newton steps, all lists at once.
    """
    scale = max(float(problem.w.sum()) + problem.inactive, 1.0)
    ll_old = -np.inf
    done = 0
    for _ in range(n_steps):
        ll, p, _ = problem.evaluate(a, rho)
        if ll - ll_old < tol * scale:
            break
        done += 1
        ll_old = ll
        wp = problem.w * p
        total = float(problem.w.sum()) + problem.inactive
        rho = float(min(max(wp.sum() / total, 1e-6), max_prior))
        G = np.bincount(problem.flat_codes, weights=np.repeat(wp, problem.L), minlength=problem.K)
        n = problem.n_params
        lo_b, hi_b = np.full(n, A_MIN), np.ones(n)
        x = a.copy()
        for _ in range(30):
            d1, d2 = _dlog_lr(x[problem.param], problem.flat_lo, problem.flat_hi)
            g = np.bincount(problem.param, weights=G * d1 * problem.cw, minlength=n)
            h = np.bincount(problem.param, weights=G * d2 * problem.cw, minlength=n)
            lo_b = np.where(g > 0, x, lo_b)
            hi_b = np.where(g <= 0, x, hi_b)
            newton = np.where(h < 0, x - g / np.where(h < 0, h, -1.0), np.nan)
            inside = (newton > lo_b) & (newton < hi_b)
            x_new = np.where(inside, newton, 0.5 * (lo_b + hi_b))
            x_new = np.where((x >= 1.0) & (g >= 0), 1.0, x_new)
            if np.abs(x_new - x).max() < 1e-9:
                x = x_new
                break
            x = x_new
        a = x
    return a, rho, done


def _logit(v: float) -> float:
    return float(np.log(v) - np.log1p(-v))


def observation_intervals(
    ranks: np.ndarray,
    built_from: np.ndarray | None = None,
    held_out: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`block_intervals` with the built-from pairs masked: uninformative [0, 1], and each
    list re-positioned among the genes it was not built from.

    ``held_out`` = (lo, hi), arrays (M, L) that are NaN except for cross-fitted observations:
    a seed gene's interval in the list rebuilt without its fold
    (:func:`kofs.aggregate.cross_fit.held_out_intervals`); they replace the masked [0, 1]."""
    lo, hi = block_intervals(ranks, None if built_from is None else np.asarray(built_from, bool))
    if held_out is not None:
        hlo, hhi = held_out
        given = ~np.isnan(hlo)
        lo = np.where(given, hlo, lo)
        hi = np.where(given, hhi, hi)
    return lo, hi


def fit_reliability(
    ranks: np.ndarray,
    *,
    relevant: np.ndarray | None = None,
    built_from: np.ndarray | None = None,
    held_out: tuple[np.ndarray, np.ndarray] | None = None,
    intervals: tuple[np.ndarray, np.ndarray] | None = None,
    prior: float = 0.05,
    max_prior: float = 0.5,
    dependence: bool = True,
    redundancy_top: float = REDUNDANCY_TOP,
    n_bins: int = 256,
    tol: float = 1e-10,
    max_iter: int = 500,
) -> ReliabilityFit:
    """Maximum (composite) likelihood fit of the latent-class reliability model.

    Parameters
    ----------
    ranks : ndarray of shape (M, L)
        1 = best, ties averaged, NaN = absent from a partial list.
    relevant : ndarray of bool (M,), optional
        Known relevant genes (supervised): observed ``Z_i = 1``.
    built_from : ndarray of bool (M, L), optional
        ``built_from[i, l]``: list l was built (seeded) from gene i; that observation is
        treated as missing (interval [0, 1], likelihood ratio 1) in the fit and the score.
    held_out : (lo, hi) arrays (M, L), optional
        Cross-fitted observations of built-from pairs (NaN elsewhere): the gene's interval in
        the list rebuilt without it (:func:`observation_intervals`).
    intervals : (lo, hi) arrays (M, L), optional
        The observation intervals when already computed (then ``ranks``, ``built_from`` and
        ``held_out`` are not read again).
    prior : float
        Starting fraction rho of relevant genes.
    max_prior : float
        Upper bound of rho: the relevant class is the minority.
    dependence : bool
        Redundancy weights c_l (True) or conditional independence (c = 1).
    redundancy_top : float
        Measure redundancy among the genes in this top fraction of some list
        (:func:`redundancy_weights`); 1 = all genes.
    n_bins : int
        u bins of the sufficient statistics (the top positions stay single ranks).
    tol, max_iter
        L-BFGS-B relative tolerance on the objective and iteration cap per stage.

    Returns
    -------
    ReliabilityFit

    Notes
    -----
    The likelihood is maximised directly (L-BFGS-B with the analytic gradient, which is the
    EM gradient: ``d l / d a_l = c_l sum_i p_i d log LR_l / d a``) from a = 1/2, rho =
    ``prior``. With ``dependence``, a first fit uses c from the correlations over all genes
    (that the lists call, ``redundancy_top``); c is then re-estimated among the background
    genes (weights 1 - p_i) and the fit repeated from the first solution.
    """
    lo, hi = (
        intervals if intervals is not None else observation_intervals(ranks, built_from, held_out)
    )
    M, L = lo.shape
    fixed = np.zeros(M, dtype=bool) if relevant is None else np.asarray(relevant, dtype=bool)
    # The likelihood depends on the genes only as a multiset of rows: fitting on the rows in a
    # canonical order makes the fit exactly independent of gene order (as for the book's EM),
    # also where the likelihood is flat and the solver could stop at different points.
    order = np.lexsort((*lo.T[::-1], *hi.T[::-1], fixed))
    back = np.empty(M, dtype=np.int64)
    back[order] = np.arange(M)
    lo, hi, fixed = lo[order], hi[order], fixed[order]
    coded = _code(lo, hi, n_bins)
    w = np.ones(M)
    c = redundancy_weights(lo, hi, top=redundancy_top)[0] if dependence else np.ones(L)
    a, rho, nit, ok = _maximise(
        _Problem(coded, c, w, fixed), np.full(L, 0.5), prior, max_prior, tol, max_iter
    )
    if dependence:
        _, p, _ = _Problem(coded, c, w, fixed).evaluate(a, rho)
        c = redundancy_weights(lo, hi, background=1.0 - p, top=redundancy_top)[0]
        a, rho, nit2, ok = _maximise(
            _Problem(coded, c, w, fixed), a, rho, max_prior, tol, max_iter, warmup=3
        )
        nit += nit2
    problem = _Problem(coded, c, w, fixed)
    ll, p, _ = problem.evaluate(a, rho)
    # never end below the null model (every a_l = 1, no list informative), whatever the
    # solver did on a flat or ill-conditioned likelihood: there the answer is "no weights"
    null = max((problem.evaluate(np.ones(L), r)[0], r) for r in (rho, max_prior))
    if ll < null[0]:
        a, rho = np.ones(L), null[1]
        ll, p, _ = problem.evaluate(a, rho)
    coded = _Coded(coded.codes[back], coded.lo, coded.hi, coded.offsets)
    return ReliabilityFit(
        a, c, rho, p[back], ll, nit, ok, coded=coded, fixed=fixed[back], canonical=order
    )


def exact_scores(
    ranks: np.ndarray,
    a: np.ndarray,
    c: np.ndarray,
    built_from: np.ndarray | None = None,
    held_out: tuple[np.ndarray, np.ndarray] | None = None,
    *,
    intervals: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """Fused score of every gene: ``sum_l c_l log LR_l`` on the exact (unbinned) intervals
    (``intervals``: already computed :func:`observation_intervals`)."""
    lo, hi = (
        intervals if intervals is not None else observation_intervals(ranks, built_from, held_out)
    )
    return (interval_log_lr(a[None, :], lo, hi) * c[None, :]).sum(axis=1)


def check_partial_ranks(ranks: np.ndarray) -> np.ndarray:
    """Validate a rank matrix that may hold NaN (absent genes); returns float64."""
    R = np.asarray(ranks, dtype=np.float64)
    if R.ndim != 2 or R.shape[0] == 0 or R.shape[1] == 0:
        raise ParameterError(
            f"rank matrix must be genes x lists with at least one of each, got shape {R.shape}"
        )
    if np.isinf(R).any() or (R < 1).any():
        raise ParameterError("rank matrix holds an infinite or < 1 rank")
    if np.isnan(R).all(axis=0).any():
        raise ParameterError("a ranked list has no gene")
    return R


# --- diagnostics, label-supervised scores, registry adapter ------------------------------------


def reliability_bootstrap(
    fit: ReliabilityFit, *, n_boot: int, seed: int, max_prior: float
) -> np.ndarray:
    """Bootstrap replicates (n_boot, L) of the score weights, genes drawn with replacement.

    One-step (linearised) bootstrap: each replicate's estimate is one projected Newton step
    from the full-data fit, ``theta_b = theta - H^-1 g_b``, with ``g_b = sum_i n_bi grad l_i``
    the gradient of the replicate's log-likelihood and H
    the full-data Hessian (redundancy weights c fixed). Parameters on a bound whose replicate
    gradient points outward stay there; the others are clipped to the box. The gene weights
    ``n_bi`` are independent Exp(1) draws (the Bayesian bootstrap, Rubin 1981: mean 1 and
    variance 1 like the multinomial counts of resampling, Poisson(1) in the large-M limit, and
    ten times cheaper to draw), so all replicates' gradients are one matrix product with the
    per-gene gradients, computed once.
    """
    M = len(fit.posterior)
    fixed = fit.fixed if fit.fixed is not None else np.zeros(M, dtype=bool)
    assert fit.coded is not None  # set by fit_reliability
    problem = _Problem(fit.coded, fit.redundancy, np.ones(M), fixed)
    a, rho = fit.a, fit.prior
    _, p, _ = problem.evaluate(a, rho)
    d1, _ = _dlog_lr(a[problem.param], problem.flat_lo, problem.flat_hi)
    D1 = (d1 * problem.cw)[problem.codes]
    G = np.column_stack([p[:, None] * D1, np.where(fixed, 1.0 - rho, p - rho)])
    if fit.canonical is not None:  # draw the gene weights in the canonical order
        G = G[fit.canonical]
    _, _, H = problem.newton_terms(a, rho)
    L = len(a)
    lo_b = np.concatenate([np.full(L, A_MIN), [_logit(1e-6)]])
    hi_b = np.concatenate([np.ones(L), [_logit(max_prior)]])
    x = np.concatenate([a, [_logit(rho)]])
    rng = np.random.default_rng(seed)
    reps = np.empty((n_boot, L))
    grads = np.empty((n_boot, L + 1))
    for start in range(0, n_boot, _BATCH):
        n = min(_BATCH, n_boot - start)
        W = rng.standard_exponential(size=(n, M), dtype=np.float32).astype(np.float64)
        grads[start : start + n] = W @ G
    for b in range(n_boot):
        g = grads[b]
        free = ~(((x <= lo_b) & (g < 0)) | ((x >= hi_b) & (g > 0)))
        step = np.zeros_like(x)
        if free.any():
            Hf = H[np.ix_(free, free)]
            try:
                step[free] = -np.linalg.solve(Hf, g[free])
            except np.linalg.LinAlgError:
                step[free] = -np.linalg.lstsq(Hf, g[free], rcond=None)[0]
        xb = np.clip(x + step, lo_b, hi_b)
        reps[b] = score_weights(xb[:-1], fit.redundancy)
        if not reps[b].any():  # the same a -> 1 limit as the point estimate
            reps[b] = fit.redundancy / fit.redundancy.sum()
    return reps


def tied_log_likelihood(fit: ReliabilityFit, *, max_prior: float) -> float:
    """Best log-likelihood when every list has the same a (rho refitted): the "uniform
    weights" model of the identification test."""
    M = len(fit.posterior)
    fixed = fit.fixed if fit.fixed is not None else np.zeros(M, dtype=bool)
    L = len(fit.a)
    assert fit.coded is not None  # set by fit_reliability
    problem = _Problem(
        fit.coded, fit.redundancy, np.ones(M), fixed, tie=np.zeros(L, dtype=np.int64)
    )
    a, rho, _, _ = _maximise(problem, np.array([0.5]), fit.prior, max_prior, 1e-10, 500)
    ll = problem.evaluate(a, rho)[0]
    return max(float(ll), float(problem.evaluate(np.ones(1), fit.prior)[0]))


def mean_neg_log_u(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``E[-log u | lo <= u <= hi]`` for u uniform: ``[(u - u log u)]_lo^hi / (hi - lo)``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        F = lambda u: np.where(u > 0, u - u * np.log(np.where(u > 0, u, 1.0)), 0.0)  # noqa: E731
        return (F(hi) - F(lo)) / (hi - lo)


def hybrid_weights(agreement: np.ndarray, label: np.ndarray, data: np.ndarray) -> np.ndarray:
    """Label-supervised weights of a run with knowledge-only lists (sum 1).

    The knowledge lists keep their share of the agreement weights ``agreement``; the
    data-driven lists (``data``) share the rest in proportion to ``label`` (their
    cross-validated predictive values times redundancy). Without any label signal the
    agreement weights are used; without either, uniform weights. Broadcasts over leading axes
    (bootstrap replicates).
    """
    w = np.clip(np.asarray(agreement, dtype=np.float64), 0.0, None)
    v = np.where(data, np.clip(np.asarray(label, dtype=np.float64), 0.0, None), 0.0)
    L = w.shape[-1]
    total = w.sum(axis=-1, keepdims=True)
    vsum = v.sum(axis=-1, keepdims=True)
    safe_total = np.where(total > 0, total, 1.0)
    know = np.where(data, 0.0, w) / safe_total  # knowledge lists' agreement share
    share = know.sum(axis=-1, keepdims=True)
    with_labels = know + (1.0 - share) * v / np.where(vsum > 0, vsum, 1.0)
    only_agreement = np.where(total > 0, w / safe_total, 1.0 / L)
    return np.where(vsum > 0, with_labels, only_agreement)


def data_support(
    ranks: np.ndarray,
    data_lists: np.ndarray,
    fraction: float,
    weights: np.ndarray | None = None,
) -> np.ndarray | None:
    """Boolean (M,): the gene is in the top ``fraction`` of at least one data-driven list
    (with ``weights``: one that earned weight -- a reversed or random list, fitted at weight 0,
    supports nothing; all data lists when none earned weight).

    None when there is no data-driven list or no knowledge-only list (nothing to gate).
    """
    data_lists = np.asarray(data_lists, dtype=bool)
    if fraction <= 0 or not data_lists.any() or data_lists.all():
        return None
    if weights is not None and (data_lists & (np.asarray(weights) > 0)).any():
        data_lists = data_lists & (np.asarray(weights) > 0)
    lo, _ = block_intervals(np.asarray(ranks, dtype=np.float64)[:, data_lists])
    return np.asarray((lo < fraction).any(axis=1), dtype=bool)


def reliability_aggregate(
    ranks: np.ndarray,
    *,
    relevant: np.ndarray | None = None,
    built_from: np.ndarray | None = None,
    held_out: tuple[np.ndarray, np.ndarray] | None = None,
    data_lists: np.ndarray | None = None,
    list_weights: np.ndarray | None = None,
    prior: float = 0.05,
    max_prior: float = 0.5,
    dependence: bool = True,
    redundancy_top: float = REDUNDANCY_TOP,
    n_bins: int = 256,
    support_fraction: float = 0.10,
    seed_evidence: bool | None = None,
) -> tuple[np.ndarray, np.ndarray, dict, dict]:
    """Reliability aggregation (module docstring): scores, weights, info and the fit details.

    Parameters
    ----------
    ranks : ndarray (M, L)
        NaN = absent from a partial list.
    relevant : bool (M,), optional
        Known relevant genes (supervised).
    built_from : bool (M, L), optional
        Genes each list was built from (treated as missing observations of that list).
    held_out : (lo, hi) arrays (M, L), optional
        Cross-fitted observations of built-from pairs (:func:`observation_intervals`); they
        replace the missing observations in the fit (and in the score when
        ``seed_evidence`` is False).
    data_lists : bool (L,), optional
        Lists computed from the expression values (the others use knowledge only). Genes in
        the top ``support_fraction`` of no data-driven list are ranked after every gene that is
        (and marked ``knowledge-only``).
    list_weights : ndarray (L,), optional
        Fixed list reliabilities (label supervision): no fit; the score is
        ``sum_l v_l E[-log u_il]`` with ``v ~ list_weights * c`` normalised.
    prior, max_prior, dependence, redundancy_top, n_bins
        See :func:`fit_reliability`.
    support_fraction : float
        See ``data_lists``; 0 switches the rule off.
    seed_evidence : bool, optional
        True: a list's positions of the genes it was built from enter the fused score (they are
        its knowledge: GO-REL-PROP ranks its seed genes first *because* they are known); they
        never enter its weight, which is learned with them masked. False: the score reads the
        same observations as the fit (masked or cross-fitted). None (default): True without
        ``relevant``, False with it -- when known genes supervise the weights they are the
        question's premise, and scoring them by their own seeding would hand the input list
        back as the answer (on ALL lineage with the cancer genes: a top 50 of known genes only).

    Returns
    -------
    scores, weights, info, extras
        ``extras`` holds ``fit`` (a ReliabilityFit or None) and ``support`` (bool (M,) or None).
    """
    R = check_partial_ranks(ranks)
    M, L = R.shape
    lo, hi = observation_intervals(R, built_from, held_out)  # what the weights are learned on
    # what the score reads: the seeded lists' own positions of their seed genes (seed evidence),
    # else the same observations as the fit (seed genes masked or cross-fitted)
    if seed_evidence is None:
        seed_evidence = relevant is None
    slo, shi = observation_intervals(R) if seed_evidence and built_from is not None else (lo, hi)
    cols = canonical_list_order(
        R,
        relevant=relevant,
        data_lists=data_lists,
        list_weights=list_weights,
        intervals=(lo, hi),
    )
    if np.array_equal(cols, np.arange(L)):
        return _aggregate_canonical(
            R,
            lo,
            hi,
            (slo, shi),
            relevant=relevant,
            data_lists=data_lists,
            list_weights=list_weights,
            prior=prior,
            max_prior=max_prior,
            dependence=dependence,
            redundancy_top=redundancy_top,
            n_bins=n_bins,
            support_fraction=support_fraction,
        )
    scores, weights, info, extras = _aggregate_canonical(
        R[:, cols],
        lo[:, cols],
        hi[:, cols],
        (slo[:, cols], shi[:, cols]),
        relevant=relevant,
        data_lists=None if data_lists is None else np.asarray(data_lists)[cols],
        list_weights=None if list_weights is None else np.asarray(list_weights)[cols],
        prior=prior,
        max_prior=max_prior,
        dependence=dependence,
        redundancy_top=redundancy_top,
        n_bins=n_bins,
        support_fraction=support_fraction,
    )
    back = np.argsort(cols)
    for key in ("a", "redundancy", "label_reliability", "agreement_weights"):
        if key in info:
            info[key] = [info[key][k] for k in back]
    extras["columns"] = cols  # the fit (extras["fit"]) is in this list order
    return scores, np.asarray(weights)[back], info, extras


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser on uint64 (wrapping arithmetic): a well-spread integer hash."""
    x = np.asarray(x, dtype=np.uint64)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def canonical_list_order(
    ranks: np.ndarray,
    *,
    relevant: np.ndarray | None = None,
    built_from: np.ndarray | None = None,
    held_out: tuple[np.ndarray, np.ndarray] | None = None,
    data_lists: np.ndarray | None = None,
    list_weights: np.ndarray | None = None,
    intervals: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """A list order that depends on the lists' content only, never on their order or on the
    genes' order: every floating-point sum over lists then runs in the same order, so the fit
    is invariant to list order to the last bit.

    Each observation interval is hashed (64-bit, wrapping sums); a gene's hash is the sum over
    lists (order-free), and a list's key sums, over genes (order-free), the hash of its
    observation combined with the gene's hash. Lists are sorted by key (exact duplicates
    stay in the given order, which cannot change the result).
    """
    if intervals is None:
        intervals = observation_intervals(ranks, built_from, held_out)
    lo, hi = (np.asarray(x, dtype=np.float64) + 0.0 for x in intervals)  # -0.0 -> 0.0
    cell = _mix(lo.view(np.uint64) ^ _mix(hi.view(np.uint64) + np.uint64(0x9E3779B97F4A7C15)))
    with np.errstate(over="ignore"):
        row = cell.sum(axis=1, dtype=np.uint64)
        if relevant is not None:
            row = row ^ _mix(np.asarray(relevant, dtype=np.uint64) + np.uint64(7))
        key = _mix(cell ^ _mix(row)[:, None]).sum(axis=0, dtype=np.uint64)
        if data_lists is not None:
            key = _mix(key ^ np.asarray(data_lists, dtype=np.uint64))
        if list_weights is not None:
            key = _mix(key ^ np.asarray(list_weights, dtype=np.float64).view(np.uint64))
    return np.argsort(key, kind="stable")


def _aggregate_canonical(
    ranks: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    scored: tuple[np.ndarray, np.ndarray],
    *,
    relevant: np.ndarray | None,
    data_lists: np.ndarray | None,
    list_weights: np.ndarray | None,
    prior: float,
    max_prior: float,
    dependence: bool,
    redundancy_top: float,
    n_bins: int,
    support_fraction: float,
) -> tuple[np.ndarray, np.ndarray, dict, dict]:
    """:func:`reliability_aggregate` on lists in canonical order, given the observation
    intervals ``lo``, ``hi`` of the fit and ``scored`` of the score
    (:func:`observation_intervals`)."""
    R = ranks
    M, L = R.shape
    fit = None
    if list_weights is not None:
        v = np.clip(np.asarray(list_weights, dtype=np.float64), 0.0, None)
        rows = np.lexsort((*lo.T[::-1], *hi.T[::-1]))  # sums over genes in a fixed order
        c = (
            redundancy_weights(lo[rows], hi[rows], top=redundancy_top)[0]
            if dependence
            else np.ones(L)
        )
        data = None if data_lists is None else np.asarray(data_lists, dtype=bool)
        info = {"label_reliability": v.tolist(), "redundancy": c.tolist()}
        if data is not None and data.any() and not data.all():
            # knowledge lists do not predict labels by design: their weight is learned from
            # agreement (the unsupervised fit), the data-driven lists share the rest by label
            fit = fit_reliability(
                R,
                intervals=(lo, hi),
                prior=prior,
                max_prior=max_prior,
                dependence=dependence,
                redundancy_top=redundancy_top,
                n_bins=n_bins,
            )
            weights = hybrid_weights(fit.weights, v * c, data)
            info.update(
                agreement_weights=fit.weights.tolist(),
                a=fit.a.tolist(),
                prior=fit.prior,
                log_likelihood=fit.log_likelihood,
                iterations=fit.iterations,
                converged=fit.converged,
                knowledge_weights="agreement",
            )
        else:
            weights = hybrid_weights(np.zeros(L), v * c, np.ones(L, dtype=bool))
            info.update(iterations=0, converged=True)
        lo, hi = scored
        scores = mean_neg_log_u(lo, hi) @ weights
    else:
        fit = fit_reliability(
            R,
            relevant=relevant,
            intervals=(lo, hi),
            prior=prior,
            max_prior=max_prior,
            dependence=dependence,
            redundancy_top=redundancy_top,
            n_bins=n_bins,
        )
        scores = exact_scores(R, fit.a, fit.redundancy, intervals=scored)
        weights = fit.weights
        if not weights.any():
            # no agreement signal (every a_l = 1: one list, copies of one list, noise): the
            # limit a -> 1 of the score, the redundancy-weighted mean of -log u
            lo, hi = scored
            weights = fit.redundancy / fit.redundancy.sum()
            scores = mean_neg_log_u(lo, hi) @ weights
        info = {
            "a": fit.a.tolist(),
            "redundancy": fit.redundancy.tolist(),
            "prior": fit.prior,
            "log_likelihood": fit.log_likelihood,
            "iterations": fit.iterations,
            "converged": fit.converged,
            "n_relevant_expected": float(fit.posterior.sum()),
        }
    support = None
    if data_lists is not None:
        support = data_support(R, data_lists, support_fraction, weights)
    if support is not None and not support.all():
        span = float(np.nanmax(scores) - np.nanmin(scores)) + 1.0
        scores = np.where(support, scores, scores - span)
        info["knowledge_only_genes"] = int((~support).sum())
    return scores, weights, info, {"fit": fit, "support": support}


@aggregator(
    "reliability",
    summary="Latent relevant-gene class: list weights learned from agreement (reversed, random "
    "and duplicate lists get ~0 extra weight); partial lists.",
    reference="Dawid & Skene (1979) Appl Stat 28:20; Deng et al. (2014) JASA 109:1023 (BARD); "
    "kofs docs/aggregation.md",
    params={
        "prior": Param(0.05, float, "starting fraction of relevant genes", low=1e-6, high=0.5),
        "max_prior": Param(0.5, float, "largest fraction of relevant genes", low=1e-4, high=0.5),
        "dependence": Param(True, bool, "down-weight redundant (correlated) lists"),
        "redundancy_top": Param(
            REDUNDANCY_TOP,
            float,
            "measure redundancy among the genes in this top fraction of some list (1 = all "
            "genes, as in defaults version 3)",
            low=0.0,
            high=1.0,
            closed="right",
        ),
        "n_bins": Param(256, int, "rank bins of the fit's sufficient statistics", low=8),
        "support_fraction": Param(
            0.10,
            float,
            "genes outside this top fraction of every data-driven list rank after the others "
            "(knowledge-only); 0 = off",
            low=0.0,
            high=1.0,
        ),
        "seed_evidence": Param(
            None,
            bool,
            "a list's positions of the genes it was built from count in the fused score (never "
            "in its weight); default: yes, unless known relevant genes supervise the weights",
        ),
    },
    learns_weights=True,
    supports_relevant=True,
    partial_lists=True,
    context=True,
    diagnose=lambda R, **kw: _diagnose(R, **kw),
)
def _reliability(
    R: np.ndarray,
    *,
    relevant: np.ndarray | None,
    built_from: np.ndarray | None = None,
    held_out: tuple[np.ndarray, np.ndarray] | None = None,
    data_lists: np.ndarray | None = None,
    list_weights: np.ndarray | None = None,
    list_weight_replicates: np.ndarray | None = None,
    universe: int | None = None,
    **params,
):
    """Registry adapter of :func:`reliability_aggregate` (the fit rides in ``info['_fit']``).

    Genes of the universe that no list contains (``universe`` > rows) are absent from every
    list: rows of NaN, fitted like the others; their scores are dropped by the runner."""
    m = R.shape[0]
    if universe is not None and universe > m:
        R = np.vstack([R, np.full((universe - m, R.shape[1]), np.nan)])
        if relevant is not None:
            relevant = np.concatenate([relevant, np.zeros(universe - m, dtype=bool)])
        if built_from is not None:
            built_from = np.vstack([built_from, np.zeros((universe - m, R.shape[1]), dtype=bool)])
        if held_out is not None:
            pad = np.full((universe - m, R.shape[1]), np.nan)
            held_out = (np.vstack([held_out[0], pad]), np.vstack([held_out[1], pad]))
    scores, weights, info, extras = reliability_aggregate(
        R,
        relevant=relevant,
        built_from=built_from,
        held_out=held_out,
        data_lists=data_lists,
        list_weights=list_weights,
        **params,
    )
    info["_fit"] = extras["fit"]
    info["_columns"] = extras.get("columns")
    info["_support"] = extras["support"]
    if data_lists is not None:
        info["_data_lists"] = np.asarray(data_lists, dtype=bool)
    if list_weights is not None and list_weight_replicates is not None:
        info["_v_replicates"] = list_weight_replicates
    return np.asarray(scores)[:m], weights, info


def _diagnose(R, *, info: dict, n_boot: int, seed: int, params: dict, **_) -> dict:
    from kofs.aggregate.diagnostics import label_weight_intervals, reliability_diagnostics

    fit = info.get("_fit")
    L = R.shape[1]
    cols = info.get("_columns")
    cols = np.arange(L) if cols is None else np.asarray(cols)
    # the fit is in the canonical list order (cols); the rest in the caller's
    if "label_reliability" in info:  # label-supervised weights
        reps = info.get("_v_replicates")
        data = info.get("_data_lists")
        out = label_weight_intervals(
            None if reps is None else np.asarray(reps)[:, cols],
            np.asarray(info["redundancy"])[cols],
            fit=fit,
            data_lists=None if data is None else np.asarray(data)[cols],
            n_boot=n_boot,
            seed=seed,
            max_prior=params["max_prior"],
        )
    else:
        out = reliability_diagnostics(
            fit, n_boot=n_boot, seed=seed, max_prior=params["max_prior"], n_lists=L
        )
    back = np.argsort(cols)
    for key in ("weight_ci", "weight_sd"):
        if out.get(key) is not None:
            out[key] = np.asarray(out[key])[back]
    return out
