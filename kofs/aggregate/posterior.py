"""Posterior relevance: data lists are the evidence, knowledge is a prior (array kernels).

Model
-----
Every gene i is relevant (``Z_i = 1``) or background. Its prior probability of relevance is
``pi_i = expit(x_i' beta)``: ``x_i`` holds gene-level covariates -- each knowledge list's
position of the gene (``-log u - 1`` among the genes the source covers; 0, "no information",
where it covers nothing), whether the source covers the gene, a study-bias covariate (how many
annotations and interactions the gene has) and whether the gene is a known relevant gene. The
coefficients are learned from the data evidence (FDR regression, Scott et al. 2015; covariate-
assisted rank aggregation, Li, Yi & Liu 2022): knowledge that does not predict this
experiment's evidence gets coefficients near 0, and the study-bias term takes what is due to a
gene being well studied, so that being well studied earns nothing by itself.

Each *data* list l (computed from the expression values, or brought by the user) ranks genes
by a latent score ``N(mu_l, 1)`` for relevant genes and ``N(0, 1)`` for background genes,
conditionally independent given Z (:mod:`kofs.aggregate.binormal`: the positions of a list are
the quantiles of the mixture, so the model is consistent with a ranking being a permutation,
as in BARD, Deng, Han, Li & Liu 2014). ``mu_l >= 0`` is the list's reliability (its AUC,
``Phi(mu_l / sqrt 2)``, is the chance that it ranks a relevant gene above a background one);
reversed and random lists are fitted at ``mu_l = 0``. Ties, partial lists (a gene absent from
a top-k list lies "below the list") and masked observations are intervals of position with
exact probabilities.

Dependence between data lists is a composite-likelihood weight ``c_l = 1 / sum_k max(0,
r_lk)^2`` (Varin, Reid & Firth 2011), r the correlation of the lists' latent background scores
over all genes, weighted by ``1 - p_i``: two copies of a list count once. With sample labels a
list may also carry a tempering weight ``v_l`` in [0, 1] (:mod:`kofs.aggregate.supervision`).

The posterior log-odds of relevance is ``x_i' beta + sum_l v_l c_l log LR_l(obs_il)``; the
fused score is that log-odds, the posterior its expit, the local fdr ``1 - p_i`` and the
q-value the running mean of the sorted local fdrs (Efron 2008; Storey 2003).

Fit: EM. E step: the posterior; M step: ``mu_l`` = the posterior-weighted mean latent score of
the genes in their observed intervals (truncated-normal means), beta = one Newton step of the
ridge-penalised logistic regression of the posterior on the covariates. The positions' latent
scores follow the current (mu, rho), so each step solves the estimating equations whose root is
the true parameter when the model holds. Iterations are accelerated by SQUAREM (Varadhan &
Roland 2008). Sufficient statistics are binned (:func:`kofs.aggregate.intervals.code_intervals`);
the final scores use every gene's exact interval.

References
----------
Deng K, Han S, Li KJ, Liu JS (2014) Bayesian aggregation of order-based rank data. JASA 109.
Efron B (2008) Microarrays, empirical Bayes and the two-groups model. Stat Sci 23:1-22.
Li X, Yi D, Liu JS (2022) Bayesian analysis of rank data with covariates and heterogeneous
rankers. Stat Sci 37:1-23.
Scott JG, Kelly RC, Smith MA, Zhou P, Kass RE (2015) False discovery rate regression. JASA 110.
Varadhan R, Roland C (2008) Simple and globally convergent methods for accelerating the
convergence of any EM algorithm. Scand J Stat 35:335-353.
Varin C, Reid N, Firth D (2011) An overview of composite likelihood methods. Stat Sin 21:5-42.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.special import expit, logit, ndtr

from kofs.aggregate.binormal import GRID_Q, grid_scores, interval_terms, mixture_scores, score_grid
from kofs.aggregate.intervals import Coded, code_intervals

__all__ = [
    "PosteriorFit",
    "Prior",
    "fit_posterior",
    "q_values",
    "redundancy_weights",
]

#: Starting separation of every data list and starting fraction of relevant genes.
MU_START = 1.0
RHO_START = 0.05
#: Bounds of the extrapolated parameters (separations above 12 and standardised prior
#: coefficients above 20 in size are beyond anything a ranking can tell apart).
MU_MAX = 12.0
BETA_MAX = 20.0
_COARSE = np.linspace(-9.0, 9.0, 257)  # the fit's score grid (the final scores: GRID_Q)
#: Ridge penalty on the standardised prior coefficients (a N(0, 1) prior on each).
RIDGE = 1.0


@dataclass(frozen=True)
class Prior:
    """The prior's design: covariates (M, P) without the intercept, and their names.

    Columns are standardised inside the fit; ``groups`` names the knowledge list (or other
    source) each column belongs to, so that a list's share of the prior can be reported.
    """

    X: np.ndarray
    names: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()

    @staticmethod
    def empty(M: int) -> Prior:
        return Prior(np.zeros((M, 0)))


@dataclass(frozen=True)
class PosteriorFit:
    """Result of :func:`fit_posterior` (lists: the data lists, in the order given).

    Attributes
    ----------
    mu : ndarray (D,)
        Separation of each data list (0 = uninformative).
    redundancy : ndarray (D,)
        c_l, the composite-likelihood weight of each data list.
    tempering : ndarray (D,)
        v_l (1 without label supervision).
    beta : ndarray (P + 1,)
        Prior coefficients on the standardised covariates, intercept first.
    center, scale : ndarray (P,)
        The covariates' standardisation.
    log_odds : ndarray (M,)
        Posterior log-odds of relevance (exact intervals).
    prior_log_odds : ndarray (M,)
        ``x_i' beta``.
    list_terms : ndarray (M, D)
        ``v_l c_l log LR_l`` of every gene and data list.
    rho : float
        Mean prior probability (the expected fraction of relevant genes).
    log_likelihood : float
        Composite log-likelihood at the fit (0 for the null model, every mu = 0).
    iterations : int
    converged : bool
    """

    mu: np.ndarray
    redundancy: np.ndarray
    tempering: np.ndarray
    beta: np.ndarray
    center: np.ndarray
    scale: np.ndarray
    log_odds: np.ndarray
    prior_log_odds: np.ndarray
    list_terms: np.ndarray
    rho: float
    log_likelihood: float
    iterations: int
    converged: bool
    correlation: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))

    @property
    def posterior(self) -> np.ndarray:
        return expit(self.log_odds)

    @property
    def auc(self) -> np.ndarray:
        """``Phi(mu / sqrt 2)``: P(a relevant gene is ranked above a background gene)."""
        return ndtr(self.mu / np.sqrt(2.0))


def q_values(lfdr: np.ndarray) -> np.ndarray:
    """Bayesian FDR of the genes at least as likely relevant: the mean local fdr of the genes
    up to each one in the order of increasing local fdr (ties share their group's value)."""
    lfdr = np.asarray(lfdr, dtype=np.float64)
    order = np.argsort(lfdr, kind="stable")
    sorted_ = lfdr[order]
    running = np.cumsum(sorted_) / np.arange(1, lfdr.size + 1)
    # genes with the same local fdr get the value at the end of their tie group
    _, first, counts = np.unique(sorted_, return_index=True, return_counts=True)
    last = first + counts - 1
    group_q = running[last]
    q_sorted = np.repeat(group_q, counts)
    out = np.empty_like(lfdr)
    out[order] = np.minimum(q_sorted, 1.0)
    return out


def _weighted_corr(z: np.ndarray, w: np.ndarray) -> np.ndarray:
    w = w / w.sum()
    zc = z - w @ z
    cov = (zc * w[:, None]).T @ zc
    sd = np.sqrt(np.clip(np.diag(cov), 1e-300, None))
    r = cov / np.outer(sd, sd)
    r[~np.isfinite(r)] = 0.0
    np.fill_diagonal(r, 1.0)
    return r


def redundancy_weights(scores: np.ndarray, background: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``c_l = 1 / sum_k max(0, r_lk)^2`` and the correlation matrix r of the lists' latent
    background scores (columns of ``scores``), weighted by ``background`` (1 - p_i)."""
    if scores.shape[1] == 0:
        return np.ones(0), np.zeros((0, 0))
    r = _weighted_corr(scores, np.asarray(background, dtype=np.float64) + 1e-12)
    c = 1.0 / (np.clip(r, 0.0, 1.0) ** 2).sum(axis=1)
    return c, r


class _Problem:
    """Binned data of one fit: the coded intervals, the prior design, gene weights."""

    def __init__(
        self,
        coded: Coded,
        X: np.ndarray,
        weights: np.ndarray,
        max_prior: float,
    ) -> None:
        self.coded = coded
        self.X = X  # (M, P + 1), intercept first, standardised
        self.w = weights
        self.max_prior = max_prior
        self.M, self.D = coded.codes.shape
        self.flat = coded.codes.ravel()
        self.wsum = float(weights.sum())
        self.ridge = np.full(X.shape[1], RIDGE)
        self.ridge[0] = 0.0

    def terms(self, mu: np.ndarray, rho: float):
        """Per coded interval: log LR, mean1, mean0 at (mu, rho) (latent scores interpolated
        from a 257-point grid of exact solutions per list)."""
        c = self.coded
        ends = np.stack([c.lo, c.hi, 0.5 * (c.lo + c.hi)])
        s = np.empty_like(ends)
        shift = score_grid(mu, rho, _COARSE)
        for j in range(self.D):
            sl = slice(c.offsets[j], c.offsets[j + 1])
            s[:, sl] = grid_scores(ends[:, sl], shift[j], _COARSE)
        return interval_terms(c.lo, c.hi, mu[c.list_of], rho, scores=(s[0], s[1], s[2]))

    def step(self, mu: np.ndarray, beta: np.ndarray, lam: np.ndarray, fixed_mu: bool = False):
        """One EM step from (mu, beta) with list weights lam = v c: new (mu, beta), the
        posterior log-odds, and the composite log-likelihood at (mu, beta)."""
        eta = self.X @ beta
        rho = float(np.average(expit(eta), weights=self.w))
        llr, mean1, _ = self.terms(mu, rho)
        ev = (llr[self.coded.codes] * lam).sum(axis=1)
        lo = eta + ev
        p = expit(lo)
        loglik = float(
            np.sum(self.w * (np.logaddexp(0.0, lo) - np.logaddexp(0.0, eta)))
        )  # log(pi e^ev + 1 - pi)
        wp = self.w * p
        W1 = np.bincount(self.flat, weights=np.repeat(wp, self.D), minlength=self.coded.size)
        num = np.bincount(self.coded.list_of, weights=W1 * mean1, minlength=self.D)
        den = np.bincount(self.coded.list_of, weights=W1, minlength=self.D)
        mu_new = np.where(den > 0, np.maximum(num / np.maximum(den, 1e-300), 0.0), 0.0)
        if fixed_mu:
            mu_new = mu
        beta_new = self._prior_step(beta, eta, p)
        return mu_new, beta_new, lo, loglik

    def _prior_step(self, beta: np.ndarray, eta: np.ndarray, p: np.ndarray) -> np.ndarray:
        """One Newton step of the ridge logistic regression of p on X; the intercept then
        keeps the mean prior at most ``max_prior``."""
        X, w = self.X, self.w
        if X.shape[1] == 1:  # intercept only: the mean posterior, in closed form
            mean = float(np.clip(np.sum(w * p) / self.wsum, 1e-12, 1 - 1e-12))
            return self._cap(np.array([logit(mean)]))
        pi = expit(eta)
        g = X.T @ (w * (p - pi)) - self.ridge * beta
        H = (X * (w * pi * (1 - pi))[:, None]).T @ X + np.diag(self.ridge)
        try:
            step = np.linalg.solve(H + 1e-9 * np.eye(len(beta)), g)
        except np.linalg.LinAlgError:
            step = np.zeros_like(beta)
        step = np.clip(step, -2.0, 2.0)
        new = beta + step
        return self._cap(new)

    def _cap(self, beta: np.ndarray) -> np.ndarray:
        eta = self.X @ beta
        if np.average(expit(eta), weights=self.w) <= self.max_prior:
            return beta
        lo, hi = -50.0, 0.0  # shift of the intercept
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            if np.average(expit(eta + mid), weights=self.w) > self.max_prior:
                hi = mid
            else:
                lo = mid
        out = beta.copy()
        out[0] += lo
        return out


def _squarem(
    problem: _Problem,
    mu: np.ndarray,
    beta: np.ndarray,
    lam: np.ndarray,
    *,
    tol: float,
    max_iter: int,
    fixed_mu: bool = False,
) -> tuple[np.ndarray, np.ndarray, int, bool]:
    """Fixed point of :meth:`_Problem.step` by SQUAREM (scheme S3, with fallback to the plain
    step when the extrapolation does not reduce the residual)."""
    D = len(mu)

    def F(theta):
        m, b, _, _ = problem.step(theta[:D], theta[D:], lam, fixed_mu)
        return np.concatenate([m, b])

    def project(theta):
        theta = theta.copy()
        theta[:D] = np.clip(theta[:D], 0.0, MU_MAX)
        theta[D:] = problem._cap(np.clip(theta[D:], -BETA_MAX, BETA_MAX))
        return theta

    theta = np.concatenate([mu, beta])
    it = 0
    converged = False
    while it < max_iter:
        t1 = F(theta)
        r = t1 - theta
        it += 1
        if np.max(np.abs(r)) < tol:
            theta = t1
            converged = True
            break
        t2 = F(t1)
        it += 1
        v = (t2 - t1) - r
        nv = np.linalg.norm(v)
        if nv == 0:
            theta = t2
            continue
        alpha = -np.linalg.norm(r) / nv
        alpha = min(alpha, -1.0)
        cand = project(theta - 2 * alpha * r + alpha * alpha * v)
        t3 = F(cand)
        it += 1
        if np.all(np.isfinite(t3)) and np.max(np.abs(t3 - cand)) < np.max(np.abs(r)):
            theta = t3
        else:
            theta = t2
    return theta[:D], theta[D:], it, converged


def _standardise(
    X: np.ndarray,
    w: np.ndarray | None,
    given: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The design with an intercept column and standardised covariates (weighted by ``w``),
    or with the ``given`` (center, scale)."""
    if X.shape[1] == 0:
        return np.ones((X.shape[0], 1)), np.zeros(0), np.ones(0)
    if given is not None:
        center, scale = given
    else:
        center = np.average(X, axis=0, weights=w)
        sd = np.sqrt(np.average((X - center) ** 2, axis=0, weights=w))
        scale = np.where(sd > 1e-12, sd, 1.0)
    Z = (X - center) / scale
    return np.column_stack([np.ones(X.shape[0]), Z]), center, scale


def exact_list_terms(
    lo: np.ndarray, hi: np.ndarray, mu: np.ndarray, rho: float
) -> tuple[np.ndarray, np.ndarray]:
    """Per gene and data list: ``log LR`` and the background mean latent score of its exact
    interval at (mu, rho)."""
    M, D = lo.shape
    llr = np.zeros((M, D))
    mean0 = np.zeros((M, D))
    shift = score_grid(mu, rho, GRID_Q)
    for j in range(D):
        m = float(mu[j])
        s_top, s_bot, s_mid = (
            grid_scores(x, shift[j], GRID_Q)
            for x in (lo[:, j], hi[:, j], 0.5 * (lo[:, j] + hi[:, j]))
        )
        wide = (hi[:, j] - lo[:, j]) >= 1e-4
        if wide.any():  # ties, censored and masked blocks: exact scores at their ends
            s_top[wide] = mixture_scores(lo[wide, j], m, rho)
            s_bot[wide] = mixture_scores(hi[wide, j], m, rho)
        llr[:, j], _, mean0[:, j] = interval_terms(
            lo[:, j], hi[:, j], m, rho, scores=(s_top, s_bot, s_mid)
        )
    return llr, mean0


def fit_posterior(
    lo: np.ndarray,
    hi: np.ndarray,
    prior: Prior,
    *,
    tempering: np.ndarray | None = None,
    max_prior: float = 0.5,
    dependence: bool = True,
    n_bins: int = 512,
    tol: float = 1e-7,
    max_iter: int = 2000,
    weights: np.ndarray | None = None,
    start: PosteriorFit | None = None,
    redundancy: np.ndarray | None = None,
    standardise: tuple[np.ndarray, np.ndarray] | None = None,
    fixed_mu: bool = False,
    exact: bool = True,
) -> PosteriorFit:
    """Fit the model of the module docstring.

    Parameters
    ----------
    lo, hi : ndarray (M, D)
        Observation intervals of u of the data lists (:mod:`kofs.aggregate.intervals`).
    prior : Prior
        Gene-level covariates of the prior (may have no column).
    tempering : ndarray (D,), optional
        v_l in [0, 1] (label supervision); default 1.
    max_prior : float
        Cap of the mean prior probability (the relevant class is the minority).
    dependence : bool
        Learn the redundancy weights c (else c = 1).
    n_bins : int
        Bins of the sufficient statistics.
    weights : ndarray (M,), optional
        Gene weights (bootstrap).
    start : PosteriorFit, optional
        Warm start.
    redundancy : ndarray (D,), optional
        Fixed redundancy weights (no re-estimation).
    standardise : (center, scale), optional
        The covariates' standardisation (default: their weighted mean and SD).
    fixed_mu : bool
        Keep the separations of ``start`` (only the prior is fitted).
    exact : bool
        Compute the exact final scores (else the binned ones).
    """
    lo = np.asarray(lo, dtype=np.float64)
    hi = np.asarray(hi, dtype=np.float64)
    M, D = lo.shape
    w = np.ones(M) if weights is None else np.asarray(weights, dtype=np.float64)
    v = np.ones(D) if tempering is None else np.clip(np.asarray(tempering, float), 0.0, 1.0)
    X, center, scale = _standardise(np.asarray(prior.X, dtype=np.float64), w, standardise)
    coded = code_intervals(lo, hi, n_bins=n_bins)
    problem = _Problem(coded, X, w, max_prior)
    if start is not None:
        mu = np.asarray(start.mu, dtype=np.float64).copy()
        beta = np.asarray(start.beta, dtype=np.float64).copy()
    else:
        mu = np.full(D, MU_START)
        beta = np.zeros(X.shape[1])
        beta[0] = logit(RHO_START)
    c = np.ones(D) if redundancy is None else np.asarray(redundancy, dtype=np.float64)
    rounds = 2 if (dependence and redundancy is None and D > 1) else 1
    iterations = 0
    converged = False
    r = np.eye(D)
    for k in range(rounds):
        mu, beta, it, converged = _squarem(
            problem, mu, beta, v * c, tol=tol, max_iter=max_iter, fixed_mu=fixed_mu
        )
        iterations += it
        if k + 1 < rounds:
            eta = X @ beta
            rho = float(np.average(expit(eta), weights=w))
            llr, _, mean0 = problem.terms(mu, rho)
            lo_odds = eta + (llr[coded.codes] * (v * c)).sum(axis=1)
            bg = w * (1.0 - expit(lo_odds))
            c, r = redundancy_weights(mean0[coded.codes], bg)
    eta = X @ beta
    rho = float(np.average(expit(eta), weights=w))
    lam = v * c
    if exact:
        llr_g, mean0_g = exact_list_terms(lo, hi, mu, rho)
    else:
        llr_k, _, mean0_k = problem.terms(mu, rho)
        llr_g, mean0_g = llr_k[coded.codes], mean0_k[coded.codes]
    terms = llr_g * lam
    log_odds = eta + terms.sum(axis=1)
    loglik = float(
        np.sum(w * (np.logaddexp(0.0, eta + terms.sum(axis=1)) - np.logaddexp(0.0, eta)))
    )
    if D > 1 and rounds == 1 and redundancy is None:
        _, r = redundancy_weights(mean0_g, w * (1.0 - expit(log_odds)))
    return PosteriorFit(
        mu=mu,
        redundancy=c,
        tempering=v,
        beta=beta,
        center=center,
        scale=scale,
        log_odds=log_odds,
        prior_log_odds=eta,
        list_terms=terms,
        rho=rho,
        log_likelihood=loglik,
        iterations=iterations,
        converged=converged,
        correlation=r,
    )
