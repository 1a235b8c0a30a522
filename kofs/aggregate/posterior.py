"""Posterior relevance: data lists are the evidence, knowledge is a prior (array kernels).

Model
-----
Every gene i is relevant (``Z_i = 1``) or background. Its prior probability of relevance is
``pi_i = expit(x_i' beta)``: ``x_i`` holds gene-level covariates (:mod:`kofs.aggregate.prior`:
each knowledge list's normal score of the gene among the genes its source covers, whether the
source covers the gene, a study-bias covariate, whether the gene is a known relevant gene).
The coefficients are learned from the data evidence (FDR regression, Scott et al. 2015;
covariate-assisted rank aggregation, Li, Yi & Liu 2022): knowledge that does not predict this
experiment's evidence gets coefficients near 0, and the study-bias term takes what is due to a
gene being well studied, so that being well studied earns nothing by itself.

Each *data* list l (computed from the expression values, or brought by the user) ranks genes
by a latent score, ``N(0, 1)`` for background genes and ``N(mu_l, 1)`` for relevant ones
(:mod:`kofs.aggregate.binormal`: a list's positions are the quantiles of the mixture, so the
model is consistent with a ranking being a permutation, as BARD's is, Deng, Han, Li & Liu
2014). ``mu_l >= 0`` is the list's reliability; its AUC ``Phi(mu_l / sqrt 2)`` is the chance
that it ranks a relevant gene above a background one. Reversed and random lists are fitted at
``mu_l = 0``. The lists' latent scores are jointly normal with a correlation matrix ``S``
shared by both classes (a Gaussian copula: lists computed from the same data, or sharing false
positives, are correlated also among background genes), so the evidence of gene i is the
linear discriminant ``mu' S^-1 s_i - mu' S^-1 mu / 2``. Ties, partial lists (a gene absent from
a top-k list lies "below the list") and masked observations are intervals of position: each
list's own term is its exact interval likelihood ratio ``log LR_l``, and the correlation
enters as the correction ``g' s_i - g' mu / 2`` with ``g = (S^-1 - I) mu`` at the interval's
point of equal evidence (:func:`kofs.aggregate.binormal.interval_terms`: exact for untied
genes; 0 when the lists are independent). Identical lists and
full lists more alike than S can be are one list to the fit (:mod:`kofs.aggregate.relevance`
merges them); a random list correlated with an informative one may cancel part of its noise.
With sample labels a list may be tempered by ``v_l`` in [0, 1] (:mod:`kofs.aggregate.supervision`):
read as seen through added noise, its own term weighs ``v_l`` (:func:`correlation_correction`).

The posterior log-odds of relevance is ``x_i' beta + sum_l v_l t_il`` (``t_il``: list l's term
above); the fused score is that log-odds, the posterior its expit, the local fdr ``1 - p_i``,
and the q-value the mean local fdr of the genes ranked up to gene i (Efron 2008; Storey 2003).

Fit: EM. E step: the posteriors; M step: ``mu_l`` = the posterior-weighted mean latent score of
the genes in their observed intervals (truncated-normal means; the MLE of a class mean whatever
S), S = the pooled within-class correlation of those scores, beta = one Newton step of the
ridge-penalised logistic regression of the posteriors on the covariates. The positions' latent
scores follow the current (mu, rho), so each step solves estimating equations whose root is the
true parameter when the model holds. Iterations are accelerated by SQUAREM (Varadhan & Roland
2008). Sufficient statistics are binned (:func:`kofs.aggregate.intervals.code_intervals`); the
final scores use every gene's exact interval. Where two or more rank lists show genes as
intervals (top-k lists), the correlation of two such lists is their censored estimate
(:mod:`kofs.aggregate.censored`), the full rankings' own fit is one more start, and the starts'
fits are compared by the lists' pairwise composite likelihood
(:func:`composite_log_likelihood`).

Effects of varying size. A calibrated list's relevant class ``N(mu, 1)`` in the normal score
``Q^-1(p)`` is one shift; where the effects vary in size (Gamma-distributed, say) the relevant
genes' scores spread far wider, and the fit explained the strong genes alone by a large mu and
a small class (conservative q-values). A relevant gene's scores over the lists are therefore
``lambda mu + e`` with an effect scale ``lambda ~ N+(1, tau2)`` (N(1, tau2) truncated to
lambda > 0) shared by the gene's lists; integrated over lambda its log likelihood ratio is
closed-form in ``a = mu' S^-1 s`` and ``c = mu' S^-1 mu``
(:func:`kofs.aggregate.binormal.spread_log_lr`; tau2 = 0: the linear discriminant above). Its
EM (:func:`_spread_em`) takes lambda's posterior moments given the scores: ``mu = sum p E[lambda]
s / sum p E[lambda^2]`` (the relevant mean is ``mu E[lambda]``) and the relevant scatter about
``E[lambda] mu`` plus ``Var(lambda) mu mu'`` (else the effect the lists share is read as shared
noise). tau2 is profiled over :data:`SPREAD_GRID` from the fit at tau2 = 0 (which is kept
unchanged unless the likelihood-ratio test of equal effects rejects them and the fit with the
spread finds no shared noise: :func:`_spread_profile`); the relevant-class test counts it as one
more parameter; the half-sample refits and the integrated posteriors' draws
(:mod:`kofs.aggregate.uncertainty`) hold it at its fit. A gene a table lacks is read over the
tables that have it (``mu_O``, ``S_OO``). Only where every data list is calibrated and every
observation a point or a gene the table lacks (p-value tables, untempered): cut or censored
tables are interval observations, whose terms are not integrated over lambda, and a rank list's latent scores are the mixture's quantiles, which the spread would
change (the rank reading's envelope already widens its class) -- there tau2 = 0.

References
----------
Biernacki C, Celeux G, Govaert G (2003) Choosing starting values for the EM algorithm for
getting the highest likelihood in multivariate Gaussian mixture models. Comput Stat Data Anal
41:561-575.
Deng K, Han S, Li KJ, Liu JS (2014) Bayesian aggregation of order-based rank data. JASA 109.
Efron B (2008) Microarrays, empirical Bayes and the two-groups model. Stat Sci 23:1-22.
Lindsay BG (1988) Composite likelihood methods. Contemp Math 80:221-239.
Li X, Yi D, Liu JS (2022) Bayesian analysis of rank data with covariates and heterogeneous
rankers. Stat Sci 37:1-23.
Scott JG, Kelly RC, Smith MA, Zhou P, Kass RE (2015) False discovery rate regression. JASA 110.
Self SG, Liang KY (1987) Asymptotic properties of maximum likelihood estimators and likelihood
ratio tests under nonstandard conditions. JASA 82:605-610.
Varadhan R, Roland C (2008) Simple and globally convergent methods for accelerating the
convergence of any EM algorithm. Scand J Stat 35:335-353.
Varin C, Reid N, Firth D (2011) An overview of composite likelihood methods. Stat Sin 21:5-42.
"""

from __future__ import annotations

import copy
import functools
import inspect
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.special import chdtrc, chdtri, expit, logit, ndtr, ndtri

from kofs._compute.ranks import tie_keys
from kofs.aggregate.binormal import (
    GRID_Q,
    POINT_WIDTH,
    GridPoints,
    copula_points,
    interval_terms,
    mixture_scores,
    narrow,
    normal_quantiles,
    score_grid,
    spread_log_lr,
    spread_parts,
)
from kofs.aggregate.censored import (
    INTERVAL_SHARE,
    class_correlations,
    interval_share,
    latent_bounds,
    pair_composites,
)
from kofs.aggregate.histogram import Envelope
from kofs.aggregate.intervals import Coded, code_intervals, unique_intervals

__all__ = [
    "PosteriorFit",
    "Prior",
    "composite_log_likelihood",
    "fit_posterior",
    "q_values",
    "relevant_class_test",
]

#: EM steps by which the full rankings' own-top starts are screened (:func:`_own_top_start`).
SCREEN_STEPS = 10
#: Starting separation of every data list and starting fraction of relevant genes.
MU_START = 1.0
RHO_START = 0.05
#: Floor of the mean prior probability, for the numbers only (about one gene in 10,000). A
#: floor of 1 % (until 2026-11-28) forced a class of at least 1 % of the genes: where fewer
#: relevant genes could be told apart, the likeliest background genes filled the class and were
#: called (an independent check, ``bench/bench_fusion_check.py`` S3: FDP 0.245 at q <= 0.10,
#: 0.039 without it). Classes of a few genes that lists rank high by chance are the
#: relevant-class and agreement tests' to reject (docs/aggregation.md, "The prior's floor").
MIN_PRIOR = 1e-4
#: Bounds of the extrapolated parameters (separations above 12 and standardised prior
#: coefficients above 20 in size are beyond anything a ranking can tell apart).
MU_MAX = 12.0
BETA_MAX = 20.0
#: Rounds of (fit with the list correlation fixed, re-estimate it).
ROUNDS = 4
#: A follower start (:func:`solve_stacked`) within this of another start's (mu, beta) in
#: every coordinate is on that start's path (the separations are ~1, the stopping tolerance
#: of a fit 1e-5): it stops there.
MERGE_TOL = 1e-2
_COARSE = np.linspace(-9.0, 9.0, 129)  # the fit's score grid (the final scores: GRID_Q)
#: A fit stops when its log-likelihood changed by less than LL_TOL nats in each of the last
#: FLAT_CYCLES SQUAREM cycles (parameters that change the likelihood by 0.01 nats are 0.14
#: standard errors apart at most: within noise), or when the parameters settle (``tol``).
LL_TOL = 0.01
FLAT_CYCLES = 3
#: Steps before the likelihood is followed (it costs a third of a step; most fits settle
#: their parameters before).
FLAT_AFTER = 30
#: Steps of the full rankings' own fit that starts a fit beside top-k lists (:class:`_Fit`).
SUBSET_STEPS = 60
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
    correlation : ndarray (D, D)
        S, the lists' within-class correlation.
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
        ``v_l t_il`` of every gene and data list (module docstring).
    list_llr, list_scores : ndarray (M, D)
        Each gene's interval log LR and point score in each list at (mu, rho)
        (:func:`kofs.aggregate.binormal.interval_terms`), before the correlation correction
        and tempering (exact or binned, as ``log_odds``).
    rho : float
        Mean prior probability (the expected fraction of relevant genes).
    log_likelihood : float
        Composite log-likelihood at the fit (0 for the null model, every mu = 0), without the
        lists' background copula (:func:`log_likelihood`).
    iterations : int
    converged : bool
    calibrated : ndarray of bool (D,)
        The data lists whose observations are null p-values (:mod:`kofs.aggregate.binormal`).
    refitted : bool
        With label weights: whether the parameters were re-fitted under them
        (:func:`kofs.aggregate.uncertainty.tempered_fit`).
    envelope : Envelope or None
        The rank lists' histogram classes when their evidence is bounded by them
        (:mod:`kofs.aggregate.envelope`); ``log_odds`` and ``list_terms`` are then the
        envelope's, ``list_llr`` the binormal's.
    relevant_class : dict or None
        :func:`relevant_class_test` of this fit when :func:`fit_posterior` already computed it
        (choosing among its starts), so that the caller need not compute it again.
    class_null : ClassNull or None
        The relevant-class test's no-class part on the fit's intervals when
        :func:`fit_posterior` made it (choosing among its starts): a later test of a fit on
        the same intervals (:func:`relevant_class_test`'s ``null``) reuses it.
    spread : float
        tau2, the variance of the relevant genes' effect scale ``lambda ~ N+(1, tau2)`` shared
        by a gene's calibrated lists (module docstring, "Effects of varying size"; 0: every
        relevant gene shifted by exactly mu). ``log_odds`` is then ``x' beta`` plus the
        integrated log likelihood ratio, and ``list_terms`` the linear terms plus each list's
        share ``mu_l (S^-1 mu)_l / mu' S^-1 mu`` of the spread's change to it.
    spread_seen : ndarray of bool (M, D) or None
        With the spread: which genes the tables have (``list_scores`` read there; None:
        every gene in every table).
    """

    mu: np.ndarray
    correlation: np.ndarray
    tempering: np.ndarray
    beta: np.ndarray
    center: np.ndarray
    scale: np.ndarray
    log_odds: np.ndarray
    prior_log_odds: np.ndarray
    list_terms: np.ndarray
    list_llr: np.ndarray
    list_scores: np.ndarray
    rho: float
    log_likelihood: float
    iterations: int
    converged: bool
    calibrated: np.ndarray
    refitted: bool = False
    envelope: Envelope | None = None
    relevant_class: dict[str, float] | None = None
    class_null: ClassNull | None = field(default=None, repr=False, compare=False)
    spread: float = 0.0
    spread_seen: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def posterior(self) -> np.ndarray:
        return expit(self.log_odds)

    @property
    def auc(self) -> np.ndarray:
        """``Phi(mu / sqrt 2)``: P(a relevant gene is ranked above a background gene)."""
        return ndtr(self.mu / np.sqrt(2.0))


def q_values(lfdr: np.ndarray, score: np.ndarray | None = None) -> np.ndarray:
    """Bayesian FDR of a list cut at each gene: the mean local fdr of the genes up to it, in
    the order of increasing local fdr, or of decreasing ``score`` (a ranking the local fdr
    need not follow exactly; then the smallest such mean at or below the gene, so that
    q-values rise down the ranking). Genes tied in the order share their group's value."""
    lfdr = np.asarray(lfdr, dtype=np.float64)
    n = lfdr.size
    if n == 0:
        return lfdr.copy()
    # scores tie as the ranking ties them (as printed: kofs._compute.ranks.tie_keys)
    key = lfdr if score is None else -tie_keys(score)
    order = np.argsort(key, kind="stable")
    running = np.cumsum(lfdr[order]) / np.arange(1, n + 1)
    # genes tied in the order get the value at the end of their tie group
    k = key[order]
    last = np.flatnonzero(np.append(k[1:] != k[:-1], True))
    group = np.repeat(running[last], np.diff(np.append(-1, last)))
    if score is not None:
        group = np.minimum.accumulate(group[::-1])[::-1]
    out = np.empty_like(lfdr)
    out[order] = np.minimum(group, 1.0)
    return out


#: Floor of the eigenvalues of the lists' correlation S (keeps it invertible, and the
#: discriminant from reading tiny differences between near copies of a list as evidence).
#: Lists more alike than S can then be are merged before the fit (:mod:`kofs.aggregate.relevance`).
SHRINK = 0.02


#: Correlation of two full lists' normal scores from which they are one ranking to the fit: the
#: largest the fit's list correlation can be (its eigenvalues are floored at ``SHRINK``). Two
#: lists more alike than that were fitted with a correlation below theirs, and a spurious
#: relevant class spread along their diagonal made up the rest (a random list and a copy of it
#: plus a little noise called half their genes).
NEAR_COPY = 1.0 - SHRINK


#: A calibrated list's p-values are read inside this range (0 and 1 are infinite scores).
P_RANGE = (1e-300, 1.0 - 1e-12)
#: Separations at or below this are no separation (the fit found no relevant class): the
#: evidence it would give differs between genes by rounding only, so the fused order falls back
#: to the lists' average (a signed fit's EM leaves them at ~1e-8, not at 0).
NO_SEPARATION = 1e-6


def _offdiag(D: int) -> tuple[np.ndarray, np.ndarray]:
    return np.triu_indices(D, 1)


def _threshold(r: np.ndarray, n: float) -> np.ndarray:
    """Soft-thresholded correlations (Bickel & Levina 2008): each shrunk by the size a
    correlation of independent lists reaches with family-wise probability 5 % over the pairs
    (``z_(1 - 0.025/K) / sqrt(n)``). Correlations that noise explains are 0 -- estimated
    ones fed back into the fit let random lists' noise build a spurious relevant class."""
    K = max(len(r), 1)
    t = float(ndtri(1 - 0.025 / K)) / np.sqrt(max(n, 2.0))
    return np.sign(r) * np.maximum(np.abs(r) - t, 0.0)


def _pooled_scatter(Z1: np.ndarray, w1: np.ndarray, Z0: np.ndarray, w0: np.ndarray) -> np.ndarray:
    """``sum w1 z1 z1' + sum w0 z0 z0'`` over the genes (rows)."""
    return (Z1 * w1[:, None]).T @ Z1 + (Z0 * w0[:, None]).T @ Z0


def _scatter_correlations(C: np.ndarray) -> np.ndarray:
    """The correlations of a scatter matrix, as upper off-diagonal entries."""
    d = np.sqrt(np.clip(np.diag(C), 1e-300, None))
    return (C / np.outer(d, d))[_offdiag(C.shape[0])]


def _corr_matrix(r: np.ndarray, D: int, floor: float = SHRINK) -> np.ndarray:
    """Correlation matrix from its upper off-diagonal entries, made positive definite (its
    eigenvalues at least ``floor``)."""
    S = np.eye(D)
    if D > 1:
        iu = _offdiag(D)
        S[iu] = r
        S[(iu[1], iu[0])] = r
        vals, vecs = np.linalg.eigh(S)
        if vals.min() < floor:
            S = (vecs * np.maximum(vals, floor)) @ vecs.T
            d = np.sqrt(np.diag(S))
            S = S / np.outer(d, d)
    return S


#: Odd 64-bit multipliers of the row hash of :func:`_collapse_rows` (fixed: the result does not
#: depend on them, only how fast it is found).
_HASH = np.random.default_rng(0x6B6F6673).integers(1, 2**62, 64, dtype=np.int64) | 1


def _collapse_rows(
    codes: np.ndarray, X: np.ndarray, w: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct rows of (codes, X) with their summed gene weights: every sum of the fit is
    a weighted sum over genes of a function of the row, so a fit on them is the fit on the
    genes (up to the order of the sums). Rows repeat when the lists are few and the
    covariates discrete (the half-sample refits of two lists: 2,315 rows for 23,596 genes);
    when fewer than a fifth would go the genes are kept as they are. Rows are told apart by a
    64-bit hash of their bits, checked afterwards (a collision falls back to sorting the rows)."""
    M, D = codes.shape
    if M < 2:
        return codes, X, w
    bits = np.column_stack([codes.astype(np.int64), X[:, 1:].view(np.int64)])  # X[:, 0]: 1
    mult = np.resize(_HASH, bits.shape[1])
    with np.errstate(over="ignore"):
        key = (bits * mult).sum(axis=1)  # wraps around: a hash
    # how many distinct keys first, from the sorted keys alone (half the time of the sort
    # with its order, which is needed only when rows go: many lists of many genes keep them)
    ordered = np.sort(key)
    if 1 + np.count_nonzero(ordered[1:] != ordered[:-1]) > 0.8 * M:
        return codes, X, w
    keys, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    if not np.array_equal(bits[first][inverse], bits):  # a collision: sort the rows themselves
        order = np.lexsort(bits.T[::-1])
        ordered = bits[order]
        new = np.ones(M, dtype=bool)
        new[1:] = np.any(ordered[1:] != ordered[:-1], axis=1)
        first = order[new]
        inverse = np.empty(M, dtype=np.int64)
        inverse[order] = np.cumsum(new) - 1
    weights = np.bincount(inverse, weights=w, minlength=first.size)
    return codes[first], X[first], weights


class PriorDesign:
    """The prior's logistic regression ``P(Z_i = 1) = expit(x_i' beta)`` on a standardised
    design ``X`` (rows, P + 1; intercept first) with row weights ``w``: its ridge-penalised
    Newton step and the cap of the mean prior (shared by the rank model's fit and
    :mod:`kofs.aggregate.signed`)."""

    def __init__(self, X: np.ndarray, weights: np.ndarray, max_prior: float) -> None:
        self.X = X
        self.w = weights
        self.max_prior = max_prior
        self.wsum = float(weights.sum())
        self.intercept_only = X.shape[1] == 1
        self.P = X.shape[1]
        self.ridge = np.full(X.shape[1], RIDGE)
        self.ridge[0] = 0.0

    def _prior_step(self, beta: np.ndarray, eta: np.ndarray, p: np.ndarray) -> np.ndarray:
        """One Newton step of the ridge logistic regression of p on X; the intercept then
        keeps the mean prior within its bounds."""
        X, w = self.X, self.w
        pi = expit(eta)
        g = X.T @ (w * (p - pi)) - self.ridge * beta
        H = (X * (w * pi * (1 - pi))[:, None]).T @ X + np.diag(self.ridge)
        try:
            step = np.linalg.solve(H + 1e-9 * np.eye(len(beta)), g)
        except np.linalg.LinAlgError:
            step = np.zeros_like(beta)
        return self._cap(beta + np.clip(step, -2.0, 2.0))

    def mean_prior(self, eta: np.ndarray) -> float:
        """The gene-weighted mean prior probability."""
        if self.intercept_only:
            return float(expit(eta[0]))
        return float(np.dot(self.w, expit(eta)) / self.wsum)

    def _cap(self, beta: np.ndarray) -> np.ndarray:
        """The intercept shifted so that the mean prior lies in [MIN_PRIOR, max_prior]."""
        low, high = MIN_PRIOR, self.max_prior
        if self.intercept_only:
            return np.array([logit(np.clip(expit(beta[0]), low, high))])
        eta = self.X @ beta
        mean = self.mean_prior(eta)
        if low <= mean <= high:
            return beta
        target = high if mean > high else low
        # the intercept's shift: Newton steps on the (increasing, concave-convex) mean prior
        shift = 0.0
        for _ in range(50):
            pi = expit(eta + shift)
            f = float(np.dot(self.w, pi) / self.wsum) - target
            if abs(f) < 1e-10:
                break
            slope = float(np.dot(self.w, pi * (1 - pi)) / self.wsum)
            shift -= float(np.clip(f / max(slope, 1e-12), -5.0, 5.0))
        out = beta.copy()
        out[0] += shift
        return out


class _Problem(PriorDesign):
    """Binned data of one fit: the coded intervals, the prior design, gene weights."""

    def __init__(
        self,
        coded: Coded,
        X: np.ndarray,
        weights: np.ndarray,
        max_prior: float,
        *,
        dependence: bool = True,
        tempering: np.ndarray | None = None,
        collapse: bool = False,
        calibrated: np.ndarray | None = None,
        interval_lists: np.ndarray | None = None,
    ) -> None:
        codes = coded.codes
        self.gene_weights = weights  # of the genes, before any collapse
        if collapse:  # genes of one (codes, covariates) row are one row of summed weight
            codes, X, weights = _collapse_rows(codes, X, weights)
        super().__init__(X, weights, max_prior)
        self.coded = coded
        self.codes = codes  # (rows, D): the coded interval of each row in each list
        self.M, self.D = codes.shape
        self.cal = (
            np.zeros(self.D, dtype=bool) if calibrated is None else np.asarray(calibrated, bool)
        )
        self.cal_code = self.cal[coded.list_of]  # of each coded interval
        # the coded intervals' ends and midpoints as normal quantiles on the fit's score grid
        # (they do not change)
        self._points = GridPoints(
            normal_quantiles(np.stack([coded.lo, coded.hi, 0.5 * (coded.lo + coded.hi)])),
            coded.list_of,
            _COARSE,
        )
        self.dependence = dependence and self.D > 1
        self.v = np.ones(self.D) if tempering is None else np.asarray(tempering, dtype=float)
        self.R = self.D * (self.D - 1) // 2 if self.dependence else 0
        # rank lists only: a calibrated list's p-values show its class themselves (its
        # marginal is in the binned likelihood), and read by the composite likelihood, with
        # each list's marginal counted once per pair, two cut tables of independent studies
        # beside a whole one chose a class of half the genes (top-200 precision 0.41 -> 0.16,
        # bench/bench_cut_tables.py); a rank list's positions are uniform whatever its class,
        # which only the lists' dependence shows
        self.interval_lists = (
            np.zeros(self.D, bool)
            if interval_lists is None
            else np.asarray(interval_lists, bool) & ~self.cal
        )
        self._cells: dict[tuple[int, int], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    @functools.cached_property
    def A(self) -> sp.csr_matrix:
        """Genes x coded intervals: one 1 per (gene, list); a list's evidence = A @ values. Row
        i holds its D codes, increasing with the list (each list's codes follow the previous
        list's), so the CSR arrays are the codes themselves. Made when first needed (a problem
        solved in a stack, :class:`_Stack`, never needs its own: the half-sample refits)."""
        return sp.csr_matrix(
            (
                np.ones(self.M * self.D),
                self.codes.ravel(),
                np.arange(0, self.M * self.D + 1, self.D),
            ),
            shape=(self.M, self.coded.size),
        )

    @functools.cached_property
    def intervals(self) -> tuple[np.ndarray, np.ndarray]:
        """Which coded intervals the lists' copula reads as intervals, not points
        (:func:`kofs.aggregate.binormal.copula_points`: the block below a top-k list, not a tie
        block inside a full ranking), of the rank lists that show at least
        :data:`INTERVAL_SHARE` of their genes so (``interval_lists``, found on the genes' own
        intervals: the bins of a full ranking are not its observations; calibrated lists are
        not among them), and those lists: where they are two or more, their correlations are
        censored estimates and the fits are compared by the composite likelihood."""
        c, lists = self.coded, self.interval_lists
        if not lists.any():
            return np.zeros(c.size, bool), lists
        return ~copula_points(c.lo, c.hi) & lists[c.list_of], lists

    def pair_cells(self, a: int, b: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The distinct cells of the coded intervals of lists ``a`` and ``b`` (each cell's code
        in either list) and each row's cell, made once: the censored correlations and the
        composite likelihood count equal observations once at every step and start, and the
        codes never change (only their latent bounds do)."""
        if (a, b) not in self._cells:
            self._cells[a, b] = _distinct_cells(self.codes, a, b, self.coded.size)
        return self._cells[a, b]

    def tempered(self, v: np.ndarray) -> _Problem:
        """This problem with the label weights ``v`` (its binned data shared, not copied)."""
        out = copy.copy(self)
        out.v = np.asarray(v, dtype=np.float64)
        return out

    def split(self, theta: np.ndarray):
        D, P = self.D, self.P
        return theta[:D], theta[D : D + P], theta[D + P :]

    def scores(self, mu: np.ndarray, rho: float) -> np.ndarray:
        """(3, coded intervals): the latent scores of each coded interval's ends and midpoint at
        (mu, rho), interpolated from a 129-point grid of exact solutions per list."""
        # a calibrated list's scores are its p-values' normal scores (rho = 0 in its map)
        rho_map = np.where(self.cal, 0.0, rho) if self.cal.any() else rho
        return self._points.scores(score_grid(mu, rho_map, _COARSE))

    def terms(self, mu: np.ndarray, rho: float, scores: np.ndarray | None = None):
        """Per coded interval: log LR, mean1, mean0, mean at (mu, rho) (``scores``: their
        :meth:`scores`, when already made)."""
        c = self.coded
        s = self.scores(mu, rho) if scores is None else scores
        return interval_terms(
            c.lo, c.hi, mu[c.list_of], rho, scores=(s[0], s[1], s[2]), calibrated=self.cal_code
        )

    def evidence(
        self,
        mu: np.ndarray,
        S: np.ndarray,
        llr: np.ndarray,
        mean: np.ndarray,
        cap: np.ndarray | None = None,
    ):
        """Each gene's evidence ``sum_l v_l t_il`` from the coded terms (module docstring);
        ``cap``: each coded interval's bound on its list's whole term ``v_l t_il`` before the
        tempering (the envelope, :mod:`kofs.aggregate.envelope`; +inf: none)."""
        lam = self.v[self.coded.list_of]
        if cap is not None:
            t = llr * lam
            if self.dependence:
                sv, g, m = correlation_correction(mu, S, self.v)
                at = self.coded.list_of
                t = t + mean * (sv * g)[at] - 0.5 * (g * m)[at]
            return self.A @ np.minimum(t, lam * cap)
        x = llr * lam
        if self.dependence:
            sv, g, m = correlation_correction(mu, S, self.v)
            if np.any(g):
                x = x + mean * (sv * g)[self.coded.list_of]
                return self.A @ x - 0.5 * float(g @ m)
        return self.A @ x

    def correlation_step(self, theta: np.ndarray) -> np.ndarray:
        """The lists' within-class correlation re-estimated at theta = (mu, beta,
        correlations): the posteriors of theta, then the pooled within-class correlation of
        the latent scores (upper off-diagonal entries). The other parameters' EM steps are
        :meth:`_Stack.step`'s."""
        mu, beta, r = self.split(theta)
        S = _corr_matrix(r, self.D)
        eta = self.X @ beta
        rho = self.mean_prior(eta)
        z = self.scores(mu, rho)
        llr, mean1, mean0, mean = self.terms(mu, rho, z)
        wp = self.w * expit(eta + self.evidence(mu, S, llr, mean))
        return self._correlation(mu, z, wp, mean1, mean0)

    def _correlation(self, mu, z, wp, mean1, mean0) -> np.ndarray:
        """The pooled within-class correlation of the genes' latent scores (class 1 around
        mu, class 0 around 0), as upper off-diagonal entries: the cross moments of the
        scores' conditional means, each list's variance its conditional second moment (a
        gene observed as an interval keeps the spread of its score inside it; read as its
        mean alone, a list of a few points among wide intervals -- a table cut to its
        significant genes -- has almost no spread but that of its points, and their
        agreement with another list reads as a correlation near 1)."""
        codes = self.codes
        C = _pooled_scatter(mean1[codes] - mu, wp, mean0[codes], self.w - wp)
        c = self.coded
        wide = (c.hi - c.lo) > POINT_WIDTH
        if wide.any():  # z: the coded intervals' latent scores (:meth:`scores`)
            a, b = np.minimum(z[0], z[1]), np.maximum(z[0], z[1])
            m = mu[c.list_of]
            var1 = np.where(wide, _truncated_variance(a - m, b - m), 0.0)
            var0 = np.where(wide, _truncated_variance(a, b), 0.0)
            # each coded interval's genes' summed weights in either class (codes of every list
            # are distinct: one count per coded interval)
            flat = codes.ravel()
            s1 = np.bincount(flat, weights=np.repeat(wp, self.D), minlength=c.size)
            s0 = np.bincount(flat, weights=np.repeat(self.w - wp, self.D), minlength=c.size)
            extra = np.bincount(c.list_of, weights=var1 * s1 + var0 * s0, minlength=self.D)
            C[np.diag_indices(self.D)] += extra
        r = _threshold(_scatter_correlations(C), self.wsum)
        if self.intervals[1].sum() >= 2:
            r = self._censored_correlations(r, mu, z, wp)
        return r

    def _censored_correlations(self, r, mu, z, wp) -> np.ndarray:
        """``r`` with the pairs of two rank lists that show genes as intervals (:attr:`intervals`)
        re-estimated as censored (:func:`kofs.aggregate.censored.class_correlations`: each
        interval read as the event that the score lies in it), soft-thresholded by the
        size noise reaches with family-wise probability 5 % over the pairs in units of the
        estimate's standard error under no correlation. Interval means shrink a correlation
        with the share of the list's variance they keep: six random top-300 lists of 3,000
        genes sharing 41 % of their noise read 0.02-0.05 from their means, and their shared
        top genes then made a class; that class outscored three full rankings' real one."""
        w, D = self.w, self.D
        wide, lists = self.intervals
        lower = np.where(wide, np.minimum(z[0], z[1]), z[2])
        upper = np.where(wide, np.maximum(z[0], z[1]), z[2])
        which = [
            (n, a, b)
            for n, (a, b) in enumerate(zip(*_offdiag(D), strict=True))
            if lists[a] and lists[b]
        ]
        parts, w1, w0, pair = [], [], [], []
        wq = w - wp
        for k, (_, a, b) in enumerate(which):  # each pair's distinct cells of coded intervals
            ca, cb, back = self.pair_cells(a, b)
            w1.append(np.bincount(back, weights=wp, minlength=ca.size))
            w0.append(np.bincount(back, weights=wq, minlength=ca.size))
            parts.append(np.column_stack([lower[ca], upper[ca], lower[cb], upper[cb]]))
            pair.append(np.full(ca.size, k))
        est, se = class_correlations(
            np.vstack(parts),
            np.concatenate(pair),
            np.array([mu[[a, b]] for _, a, b in which]),
            np.concatenate(w1),
            np.concatenate(w0),
            distinct=True,
        )
        t = float(ndtri(1.0 - 0.025 / max(len(r), 1)))
        out = r.copy()
        at = [n for n, _, _ in which]
        out[at] = np.sign(est) * np.maximum(np.abs(est) - t * se, 0.0)
        return out


def _distinct_cells(
    codes: np.ndarray, a: int, b: int, size: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct cells of the codes (below ``size``) of columns ``a`` and ``b`` of
    ``codes`` (each cell's code in either) and each row's cell."""
    cells, back = np.unique(codes[:, a].astype(np.int64) * size + codes[:, b], return_inverse=True)
    return cells // size, cells % size, back.ravel()


def _truncated_variance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The variance of N(0, 1) truncated to [a, b] (elementwise; a <= b, infinite ends
    allowed)."""
    fa, fb = np.isfinite(a), np.isfinite(b)
    a0, b0 = np.where(fa, a, 0.0), np.where(fb, b, 0.0)
    pa = np.where(fa, np.exp(-0.5 * a0 * a0), 0.0) / np.sqrt(2.0 * np.pi)
    pb = np.where(fb, np.exp(-0.5 * b0 * b0), 0.0) / np.sqrt(2.0 * np.pi)
    # P(a < Z < b) from the nearer tail, for accuracy far out
    Z = np.maximum(np.where(a > 0, ndtr(-a) - ndtr(-b), ndtr(b) - ndtr(a)), 1e-300)
    mean = (pa - pb) / Z
    return np.clip(1.0 + (a0 * pa - b0 * pb) / Z - mean * mean, 0.0, 1.0)


def _flat(trace: list[float]) -> bool:
    """Whether the last :data:`FLAT_CYCLES` cycles changed the log-likelihood by less than
    :data:`LL_TOL` each: the fit moves along a ridge on which the data cannot tell the
    parameters apart (two lists sharing noise: thousands of steps for a gain below one nat)."""
    if len(trace) <= FLAT_CYCLES:
        return False
    return bool(np.max(np.abs(np.diff(trace[-FLAT_CYCLES - 1 :]))) < LL_TOL)


def _solve_starts(
    problems: list[_Problem],
    thetas: np.ndarray,
    *,
    tol: float,
    max_iter: int,
    fixed_mu: bool,
    rounds: int,
    follower: np.ndarray | None = None,
    groups: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The fits from the starts ``thetas`` (rows: mu, beta, correlations), each of its
    problem (``problems``, one per row), solved together (:func:`solve_stacked`): inner fits
    with each start's correlation fixed, the correlation re-estimated between them (at most
    ``rounds``; a start whose correlation changed by less than 0.01 stops; extrapolating over
    the D(D-1)/2 correlations too sent some fits astray). A ``follower`` start stops for good
    when it comes within :data:`MERGE_TOL` of another start of its group (``groups``: the
    starts of one fit; default one group) -- the same mode. Returns (theta, steps, converged,
    merged) per start."""
    D, P = problems[0].D, problems[0].P
    theta = np.array(thetas, dtype=np.float64)
    steps = np.zeros(len(theta), dtype=np.int64)
    done = np.zeros(len(theta), dtype=bool)
    merged = np.zeros(len(theta), dtype=bool)
    follows = np.zeros(len(theta), dtype=bool) if follower is None else np.asarray(follower)
    group = np.zeros(len(theta), dtype=np.int64) if groups is None else np.asarray(groups)
    active = np.arange(len(theta))
    for k in range(rounds):
        S = np.array(
            [
                _corr_matrix(theta[b, D + P :], D) if problems[b].dependence else np.eye(D)
                for b in active.tolist()
            ]
        )
        rest = np.setdiff1d(np.flatnonzero(~follows), active)  # leaders solved already
        inner, it, ok, met = solve_stacked(
            [problems[b] for b in active.tolist()],
            S,
            theta[active, : D + P],
            tol=tol,
            max_iter=max_iter,
            fixed_mu=fixed_mu,
            follower=follows[active],
            groups=group[active],
            others=(theta[rest, : D + P], group[rest]),
        )
        theta[active, : D + P] = inner
        steps[active] += it
        done[active] = ok
        merged[active] = met
        if k + 1 == rounds:
            break
        going = []
        for b in active.tolist():
            if merged[b]:
                continue
            r_old = theta[b, D + P :]
            r_new = problems[b].correlation_step(theta[b])
            theta[b, D + P :] = r_new
            if np.max(np.abs(r_new - r_old), initial=0.0) >= 0.01:
                going.append(b)
        active = np.array(going, dtype=np.int64)
        if active.size == 0:
            break
    return theta, steps, done, merged


# --- fits solved together ----------------------------------------------------------------
#
# SQUAREM (Varadhan & Roland 2008) on a stack of problems. A fit spends most of an EM step on
# the fixed cost of NumPy calls over a few hundred binned intervals (two lists: ~1.2 ms a step,
# whatever the genes), so fits made one after another (or on two threads, which the GIL
# serialises) pay it once per fit and step. Stacked, B fits share every call: their (collapsed)
# genes are the rows of one block-diagonal problem, their binned intervals one array, their
# parameters the rows of a (B, D + P + 1) array, each with its own fixed list correlation.
# Each fit keeps its own extrapolation, stopping rules and step count, so each reaches the
# point it reaches alone, up to the order of floating-point sums (the fits never mix: every
# sum runs over one fit's rows or intervals). Used for the starts of a fit (fit_posterior) and
# the half-sample refits (kofs.aggregate.uncertainty.half_sample_fits: 20 refits of a
# 271 x 47,192 run 0.52 s one by one, 0.28-0.30 s stacked).


class _Stack:
    """B problems of the same lists, covariates and label weights, fitted together, each with
    its list correlation fixed (``S``: one (D, D) matrix for all, or (B, D, D)); the
    separations (unless ``fixed_mu``) and the prior are fitted."""

    def __init__(self, parts: list[_Problem], S: np.ndarray, *, fixed_mu: bool = False) -> None:
        first = parts[0]
        self.parts = parts
        self.B, self.D, self.P = len(parts), first.D, first.P
        self.v = first.v
        self.cal = first.cal
        S = np.asarray(S, dtype=np.float64)
        self.S = np.broadcast_to(S, (self.B, self.D, self.D)) if S.ndim == 2 else S
        self.fixed_mu = fixed_mu
        self.dependence = first.dependence
        self.max_prior = first.max_prior
        self.intercept_only = first.intercept_only
        sizes = np.array([p.coded.size for p in parts])
        rows = np.array([p.M for p in parts])
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        self.row_start = np.concatenate([[0], np.cumsum(rows)])
        self.row_block = np.repeat(np.arange(self.B), rows)
        self.code_block = np.repeat(np.arange(self.B), sizes)
        self.code_list = np.concatenate([p.coded.list_of for p in parts])
        self.cell = self.code_block * self.D + self.code_list  # (fit, list) of each interval
        self.cal_code = self.cal[self.code_list]
        M, D = int(rows.sum()), self.D
        codes = np.empty((M, D), dtype=np.int64)  # each fit's codes after the previous fit's
        for p, o, a in zip(parts, offsets.tolist(), self.row_start.tolist(), strict=False):
            np.add(p.codes, o, out=codes[a : a + p.M])
        # as in _Problem: one 1 per (row, list), the codes increasing along a row
        self.A = sp.csr_matrix(
            (np.ones(M * D), codes.ravel(), np.arange(0, M * D + 1, D)), shape=(M, int(sizes.sum()))
        )
        self.AT = self.A.T
        self.codes = codes
        self.lo = np.concatenate([p.coded.lo for p in parts])
        self.hi = np.concatenate([p.coded.hi for p in parts])
        mid = 0.5 * (self.lo + self.hi)
        self._points = GridPoints(
            normal_quantiles(np.stack([self.lo, self.hi, mid])), self.cell, _COARSE
        )
        self.X = np.vstack([p.X for p in parts])
        self.w = np.concatenate([p.w for p in parts])
        self.wsum = np.array([p.wsum for p in parts])
        self.rows = rows
        # (genes of weight 1, the common case: w p is p)
        self.unit = bool(np.all(self.w == 1.0))
        # each fit's sum over its rows, in their order (np.bincount's by row_block: the same
        # numbers, without its passes over the block of every row)
        self.by_fit = sp.csr_matrix((np.ones(M), np.arange(M), self.row_start), shape=(self.B, M))

    def _eta(self, beta: np.ndarray) -> np.ndarray:
        if self.intercept_only:
            return np.repeat(beta[:, 0], self.rows)
        return np.einsum("ij,ij->i", self.X, beta[self.row_block])

    def _rho(self, beta: np.ndarray, eta: np.ndarray) -> np.ndarray:
        """Each fit's mean prior probability (:meth:`_Problem.mean_prior`)."""
        if self.intercept_only:
            return expit(beta[:, 0])
        return (self.by_fit @ (self.w * expit(eta))) / self.wsum

    def _cap(self, beta: np.ndarray) -> np.ndarray:
        """:meth:`_Problem._cap` of each fit's coefficients."""
        if self.intercept_only:
            return logit(np.clip(expit(beta[:, :1]), MIN_PRIOR, self.max_prior))
        return np.array([p._cap(b) for p, b in zip(self.parts, beta, strict=True)])

    def step(
        self, theta: np.ndarray, likelihood: bool = False
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """:meth:`_Problem.step` of every fit (rows of ``theta``: (mu, beta)), S fixed; with
        ``likelihood``, also each fit's log-likelihood at ``theta`` with the lists'
        background copula (what :meth:`_Problem.step` appends to its trace)."""
        B, D = self.B, self.D
        mu, beta = theta[:, :D], theta[:, D:]
        eta = self._eta(beta)
        rho = self._rho(beta, eta)
        rows = np.repeat(rho, D)
        if self.cal.any():  # calibrated lists: rho = 0 in their map (module docstring)
            rows = np.where(np.tile(self.cal, B), 0.0, rows)
        s = self._points.scores(score_grid(mu.ravel(), rows, _COARSE))
        llr, mean1, _, mean = interval_terms(
            self.lo, self.hi, mu.ravel()[self.cell], rho[self.code_block],
            scores=(s[0], s[1], s[2]), calibrated=self.cal_code if self.cal.any() else False,
        )  # fmt: skip
        x = llr * self.v[self.code_list]
        if self.dependence:
            # both terms of a coded interval summed before the one product with A
            sv, g, m = correlation_correction(mu, self.S, self.v)
            shift = 0.5 * np.sum(g * m, axis=1)
            x = x + mean * (sv * g).ravel()[self.cell]
            ev = self.A @ x
            ev -= np.repeat(shift, self.rows)
        else:
            ev = self.A @ x
        # eta + ev, in place (the same sum): no new arrays of every row
        log_odds = np.add(ev, eta, out=ev)
        ll = self._log_likelihood(log_odds, eta, llr, mean, rho) if likelihood else None
        p = expit(log_odds, out=log_odds)
        wp = p if self.unit else self.w * p
        W1 = self.AT @ wp
        num = np.bincount(self.cell, weights=W1 * mean1, minlength=B * D)
        den = np.bincount(self.cell, weights=W1, minlength=B * D)
        mu_new = np.where(den > 0, np.clip(num / np.maximum(den, 1e-300), 0.0, MU_MAX), 0.0)
        if self.fixed_mu:
            mu_new = mu
        if self.intercept_only:  # the mean posterior, in closed form
            mean_p = (self.by_fit @ wp) / self.wsum
            beta_new = self._cap(logit(np.clip(mean_p, 1e-12, 1 - 1e-12))[:, None])
        else:
            r = self.row_start
            beta_new = np.array(
                [
                    part._prior_step(beta[b], eta[r[b] : r[b + 1]], p[r[b] : r[b + 1]])
                    for b, part in enumerate(self.parts)
                ]
            )
        return np.column_stack([mu_new.reshape(B, D), beta_new]), ll

    def _log_likelihood(self, log_odds, eta, llr, mean, rho) -> np.ndarray:
        """Each fit's :func:`kofs.aggregate.posterior.log_likelihood` with its copula terms."""
        per_list = _list_log_density(llr, rho[self.code_block], self.cal_code)
        total = np.logaddexp(0.0, log_odds) - np.logaddexp(0.0, eta)
        total -= self.A @ (per_list * self.v[self.code_list])
        if self.D > 1:
            r = self.row_start
            for b in range(self.B):
                rows = slice(r[b], r[b + 1])
                total[rows] += copula_log_density(mean[self.codes[rows]], self.S[b])
        return np.bincount(self.row_block, weights=self.w * total, minlength=self.B)

    def project(self, theta: np.ndarray) -> np.ndarray:
        D = self.D
        return np.column_stack(
            [
                np.clip(theta[:, :D], 0.0, MU_MAX),
                self._cap(np.clip(theta[:, D:], -BETA_MAX, BETA_MAX)),
            ]
        )


def solve_stacked(
    parts: list[_Problem],
    S: np.ndarray,
    theta: np.ndarray,
    *,
    tol: float,
    max_iter: int,
    fixed_mu: bool = False,
    follower: np.ndarray | None = None,
    groups: np.ndarray | None = None,
    others: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each problem's fixed point of :meth:`_Stack.step` by SQUAREM (scheme S3, the plain step
    kept when the extrapolation does not reduce the residual), from the rows of ``theta``
    ((mu, beta) of each), stopping when its parameters settle (``tol``) or its likelihood is
    flat (:func:`_flat`, followed after
    :data:`FLAT_AFTER` steps). A fit that has stopped keeps its parameters
    while the others go on, and the stack is rebuilt from the unfinished ones when the stopped
    ones hold a quarter of its rows or more (most refits stop after a few steps, a few crawl
    along a flat ridge; of a fit's three starts, one stops ~10 steps before the next). A
    fit's steps do not depend on the other fits of its stack (they never mix).
    ``S``: each problem's fixed list correlation (:class:`_Stack`). A ``follower`` problem
    (bool per problem) stops, *merged*, when its parameters come within :data:`MERGE_TOL` of
    another non-follower's of its group (``groups``, int per problem: the starts of one fit;
    default one group), in the stack or a row of ``others`` (rows, their groups): from there
    it follows that start's path to the same mode. Returns (theta, steps, converged, merged)
    per problem."""
    theta = np.array(theta, dtype=np.float64)
    B = len(parts)
    follows = np.zeros(B, dtype=bool) if follower is None else np.asarray(follower, bool)
    merged = np.zeros(B, dtype=bool)
    leaders = np.flatnonzero(~follows)
    group = np.zeros(B, dtype=np.int64) if groups is None else np.asarray(groups, np.int64)
    fixed, fixed_group = (
        (np.zeros((0, theta.shape[1])), np.zeros(0, np.int64))
        if others is None
        else (np.asarray(others[0], np.float64), np.asarray(others[1], np.int64))
    )
    S = np.asarray(S, dtype=np.float64)
    if S.ndim == 2:
        S = np.broadcast_to(S, (B, *S.shape))
    done = np.zeros(B, dtype=bool)
    steps = np.zeros(B, dtype=np.int64)
    traces: list[list[float]] = [[] for _ in range(B)]
    members = np.arange(B)
    rows = np.array([p.M for p in parts])
    stack = _Stack(parts, S, fixed_mu=fixed_mu)
    it = 0
    while it < max_iter:
        active = members[~done[members]]
        if active.size == 0:
            break
        if active.size < members.size and 3 * rows[members].sum() >= 4 * rows[active].sum():
            # the stopped fits hold a quarter of the rows or more: a cycle (three steps) on
            # them costs about what rebuilding the stack does (a step of its rows)
            members = active
            stack = _Stack([parts[i] for i in members.tolist()], S[members], fixed_mu=fixed_mu)
        th = theta[members]
        t1, ll = stack.step(th, likelihood=it >= FLAT_AFTER)
        r = t1 - th
        it += 1
        flat_now = np.zeros(members.size, dtype=bool)
        if ll is not None:
            for k, b in enumerate(members.tolist()):
                traces[b].append(float(ll[k]))
                flat_now[k] = _flat(traces[b])
        now = ~done[members] & ((np.max(np.abs(r), axis=1) < tol) | flat_now)
        theta[members[now]], steps[members[now]] = t1[now], it
        done[members[now]] = True
        if done[members].all():
            break
        t2, _ = stack.step(t1)
        it += 1
        v = (t2 - t1) - r
        nv = np.linalg.norm(v, axis=1)
        flat = nv == 0
        alpha = np.minimum(-np.linalg.norm(r, axis=1) / np.where(flat, 1.0, nv), -1.0)
        with np.errstate(over="ignore", invalid="ignore"):
            cand = stack.project(th - 2 * alpha[:, None] * r + (alpha * alpha)[:, None] * v)
        t3, _ = stack.step(cand)
        it += 1
        with np.errstate(invalid="ignore"):
            better = np.max(np.abs(t3 - cand), axis=1) < np.max(np.abs(r), axis=1)
        ok = ~flat & np.all(np.isfinite(t3), axis=1) & better
        nxt = np.where(ok[:, None], t3, t2)
        going = ~done[members]
        theta[members[going]] = nxt[going]
        for b in np.flatnonzero(follows & ~done).tolist():
            near = np.vstack(
                [theta[leaders[group[leaders] == group[b]]], fixed[fixed_group == group[b]]]
            )
            if near.size and np.min(np.max(np.abs(near - theta[b]), axis=1)) < MERGE_TOL:
                done[b] = merged[b] = True
                steps[b] = it
    steps[~done] = it
    return theta, steps, done & ~merged, merged


def _binned_log_likelihood(problem: _Problem, theta: np.ndarray) -> float:
    """:func:`log_likelihood` of theta on the binned observations."""
    mu, beta, r = problem.split(theta)
    S = _corr_matrix(r, problem.D) if problem.dependence else np.eye(problem.D)
    eta = problem.X @ beta
    rho = problem.mean_prior(eta)
    llr, _, _, mean = problem.terms(mu, rho)
    codes = problem.codes
    terms = gene_terms(llr[codes], mean[codes], mu, S, problem.v)
    log_odds = eta + terms.sum(axis=1)
    # per coded interval, then per gene
    per_list = _list_log_density(llr, rho, problem.cal_code)[codes]
    return log_likelihood(log_odds, eta, llr, problem.v, rho, problem.w, per_list=per_list)


def _composite_log_likelihood(problem: _Problem, theta: np.ndarray) -> float:
    """:func:`composite_log_likelihood` of theta on the binned observations."""
    mu, beta, _ = problem.split(theta)
    c = problem.coded
    eta = problem.X @ beta
    rho = problem.mean_prior(eta)
    z = problem.scores(mu, rho)
    wide = problem.intervals[0]
    lower = np.where(wide, np.minimum(z[0], z[1]), z[2])
    upper = np.where(wide, np.maximum(z[0], z[1]), z[2])
    return _pairwise_composite(
        problem.codes,
        lower,
        upper,
        _log_map(lower, upper, mu[c.list_of], np.where(problem.cal, 0.0, rho)[c.list_of]),
        problem.w,
        mu,
        rho if problem.intercept_only else expit(eta),
        cells=problem.pair_cells,
    )


def composite_log_likelihood(
    fit: PosteriorFit | None, lo: np.ndarray, hi: np.ndarray, weights: np.ndarray | None = None
) -> float:
    """The lists' pairwise composite log-likelihood (Lindsay 1988; Varin, Reid & Firth 2011)
    at ``fit`` (made on ``lo``, ``hi``; ``weights``: the genes'), or with ``fit`` None at no
    relevant class; every pair's correlation is profiled out (a fit's correlations are made for
    its EM: soft-thresholded, and one step behind; compared at them, a fit stopped short of its
    mode can look better than its mode). Over the pairs of lists: the log
    of each gene's pair of observations under the two-class mixture
    (:func:`kofs.aggregate.censored.pair_composites`: a point by its latent score's density,
    an interval by its mass, so a gene below two top-k lists counts by the probability of
    their rectangle under the pair's correlation), less each point's log density under its
    list's map from positions to scores (positions are uniform whatever the parameters; the
    map is not).

    The fit's own likelihood reads an interval through its list alone: top-k lists that share
    noise overlap beyond what it allows, and a class of their shared top genes wins it (three
    graded full rankings beside six random top-300 lists sharing 41 % of their noise: the
    random lists took 0.998 of the weight, fused top-90 precision 0.02 against 0.44 for the
    best list). Where two or more rank lists show intervals, fits are compared by this (the fit's
    correlations of such lists are censored estimates: :meth:`_Problem._censored_correlations`)."""
    lo = np.asarray(lo, np.float64)
    hi = np.asarray(hi, np.float64)
    M, D = lo.shape
    w = np.ones(M) if weights is None else np.asarray(weights, np.float64)
    if fit is None:
        mu, rho, cal, prior = np.zeros(D), 0.0, np.zeros(D, bool), 0.0
    else:
        cal = np.zeros(D, bool) if fit.calibrated is None else np.asarray(fit.calibrated, bool)
        mu, rho = np.asarray(fit.mu, np.float64), fit.rho
        prior = expit(np.asarray(fit.prior_log_odds, np.float64))
        if M and np.all(prior == prior[0]):  # one prior for all: equal observations once
            prior = prior[0]
    rho_map = np.where(cal, 0.0, rho)
    codes = np.empty((M, D), np.int64)
    parts: list[np.ndarray] = []
    for j in range(D):  # each list's distinct latent bounds, coded
        b = latent_bounds(lo[:, j], hi[:, j], float(mu[j]), float(rho_map[j]))
        clo, chi, back = unique_intervals(b[:, 0], b[:, 1])
        codes[:, j] = back + sum(len(x) for x in parts)
        parts.append(np.column_stack([clo, chi]))
    bounds = np.vstack(parts)
    list_of = np.repeat(np.arange(D), [len(x) for x in parts])
    return _pairwise_composite(
        codes,
        bounds[:, 0],
        bounds[:, 1],
        _log_map(bounds[:, 0], bounds[:, 1], mu[list_of], rho_map[list_of]),
        w,
        mu,
        prior,
    )


def _log_map(lower, upper, mu, rho) -> np.ndarray:
    """Each point's log density under its list's map from positions to latent scores (the
    mixture of separation ``mu`` and fraction ``rho``, per observation); an interval: 0 (its
    mass in positions is its width, whatever the parameters)."""
    with np.errstate(divide="ignore"):
        f = np.logaddexp(
            np.log1p(-rho) - 0.5 * lower * lower, np.log(rho) - 0.5 * (lower - mu) ** 2
        )
    return np.where(lower == upper, f - 0.5 * np.log(2.0 * np.pi), 0.0)


def _pairwise_composite(
    codes: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    log_map: np.ndarray,
    w: np.ndarray,
    mu: np.ndarray,
    prior: np.ndarray | float,
    *,
    cells: Callable[[int, int], tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None,
) -> float:
    """The pairwise composite log-likelihood (:func:`composite_log_likelihood`; every pair's
    correlation profiled out) of rows of coded observations (``codes`` (M, D) into ``lower``,
    ``upper``: latent bounds, equal for a point; ``log_map``: each one's log density under its
    list's map), row weights ``w``, the relevant class's means ``mu`` and each row's prior (or
    one for all). ``cells``: each pair of lists' :func:`_distinct_cells`, when made already
    (:meth:`_Problem.pair_cells`)."""
    D = codes.shape[1]
    size = len(lower)
    total = -(D - 1) * float(w @ log_map[codes].sum(axis=1))
    one = np.ndim(prior) == 0
    parts, weights, pair = [], [], []
    for k, (a, b) in enumerate(zip(*_offdiag(D), strict=True)):
        ca, cb, wk = codes[:, a], codes[:, b], w
        if one:  # one term per distinct pair of coded observations
            ca, cb, back = (
                _distinct_cells(codes, a, b, size) if cells is None else cells(int(a), int(b))
            )
            wk = np.bincount(back, weights=w, minlength=ca.size)
        parts.append(np.column_stack([lower[ca], upper[ca], lower[cb], upper[cb]]))
        weights.append(wk)
        pair.append(np.full(len(wk), k))
    iu = _offdiag(D)
    terms = pair_composites(
        np.vstack(parts),
        np.concatenate(pair),
        np.column_stack([mu[iu[0]], mu[iu[1]]]),
        prior if one else np.tile(prior, len(parts)),
        np.concatenate(weights),
        np.full(len(parts), np.nan),
    )
    return total + float(terms.sum())


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
    lo: np.ndarray,
    hi: np.ndarray,
    mu: np.ndarray,
    rho: float,
    calibrated: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Per gene and data list: ``log LR`` of its exact interval and the interval's mean latent
    score under the mixture, at (mu, rho); ``calibrated`` lists' u are null p-values."""
    return ExactTerms(lo, hi, calibrated).terms(mu, rho)


class ExactTerms:
    """:func:`exact_list_terms` of fixed intervals at any (mu, rho): what does not depend on
    the parameters (the midpoints' normal quantiles and their place on the score grid, which
    intervals are narrow) is made once, so that a fixed-point iteration over the separations
    (:func:`_reversed_point`) pays for it once. Every list's midpoint scores are interpolated
    in one pass (elementwise: the same result as list by list)."""

    def __init__(
        self, lo: np.ndarray, hi: np.ndarray, calibrated: np.ndarray | None = None
    ) -> None:
        self.lo = np.asarray(lo, dtype=np.float64)
        self.hi = np.asarray(hi, dtype=np.float64)
        M, D = self.lo.shape
        self.cal = np.zeros(D, dtype=bool) if calibrated is None else np.asarray(calibrated, bool)
        self._points = GridPoints(
            normal_quantiles(0.5 * (self.lo + self.hi)), np.arange(D)[None, :], GRID_Q
        )
        # the ends' scores enter only for the intervals that are not narrow (ties, censored
        # and masked blocks): solved exactly there
        wide = ~narrow(self.lo, self.hi)
        self._wide = [np.flatnonzero(wide[:, j]) for j in range(D)]

    def terms(self, mu: np.ndarray, rho: float) -> tuple[np.ndarray, np.ndarray]:
        """(log LR, mean latent score), each (M, D), at (mu, rho)."""
        lo, hi, cal = self.lo, self.hi, self.cal
        mu = np.asarray(mu, dtype=np.float64)
        shift = score_grid(mu, np.where(cal, 0.0, rho) if cal.any() else rho, GRID_Q)
        mean = self._points.scores(shift)  # the midpoints' scores: a narrow interval's mean
        # a narrow interval's terms (:func:`interval_terms`, elementwise: the same numbers)
        with np.errstate(invalid="ignore"):
            llr = mu * mean
            llr -= 0.5 * mu * mu
        for j, wide in enumerate(self._wide):
            if wide.size:  # the others: interval_terms of their exact ends' scores
                m, rj = float(mu[j]), (0.0 if cal[j] else rho)
                a, b = lo[wide, j], hi[wide, j]
                llr[wide, j], _, _, mean[wide, j] = interval_terms(
                    a,
                    b,
                    m,
                    rho,
                    scores=(mixture_scores(a, m, rj), mixture_scores(b, m, rj), mean[wide, j]),
                    calibrated=bool(cal[j]),
                )
        llr[~np.isfinite(llr)] = 0.0
        return llr, mean


def _pair_start(lo: np.ndarray, hi: np.ndarray, among: np.ndarray | None = None) -> np.ndarray:
    """Separations to start from (D,): of the pair of lists (of ``among``, bool (D,): default
    all) whose top ``RHO_START`` fractions overlap most beyond chance (the overlap's z under
    independent rankings), each list's separation its mean normal score ``Phi^-1(1 - mid u)``
    on the genes the pair puts first (the top ``RHO_START`` of their summed scores); the pair's
    own two on each other's top genes (a list's mean on its own top genes is high whatever the
    list)."""
    M = lo.shape[0]
    z, top, n, agree = _top_agreement(lo, hi)
    if among is not None:
        agree[~np.outer(among, among)] = -np.inf
    j, k = np.unravel_index(int(np.argmax(agree)), agree.shape)
    size = max(int(round(RHO_START * M)), 1)
    both = np.argsort(-(z[:, j] + z[:, k]), kind="stable")[:size]
    mu = z[both].mean(axis=0)
    mu[j] = z[top[:, k] > 0, j].mean() if n[k] else 0.0
    mu[k] = z[top[:, j] > 0, k].mean() if n[j] else 0.0
    return np.clip(mu, 0.0, MU_MAX)


def _top_agreement(
    lo: np.ndarray, hi: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The lists' normal scores ``Phi^-1(1 - mid u)`` (M, D), their top ``RHO_START``
    fractions (M, D; 0/1), those tops' sizes (D,), and the pairwise overlap of the tops beyond
    chance (D, D; the overlap's z under independent rankings, -inf on the diagonal)."""
    M, D = lo.shape
    mid = 0.5 * (lo + hi)
    z = -ndtri(np.clip(mid, 0.5 / M, 1 - 0.5 / M))
    top = (mid <= RHO_START).astype(np.float64)
    n = top.sum(axis=0)
    expected = np.outer(n, n) / M
    sd = np.sqrt(np.maximum(expected * np.outer(1 - n / M, 1 - n / M), 1e-12))
    agree = (top.T @ top - expected) / sd
    agree[np.diag_indices(D)] = -np.inf
    return z, top, n, agree


def _own_top_start(
    problem: _Problem,
    lo: np.ndarray,
    hi: np.ndarray,
    full: np.ndarray,
    beta0: np.ndarray,
    none: np.ndarray,
    tol: float,
    fixed_mu: bool,
) -> np.ndarray:
    """Separations to start from (D,): of the full ranking whose own top leads to the highest
    likelihood. Each full ranking's start is its own top ``RHO_START`` genes (its separation
    its mean normal score there, each other list's its mean normal score on them); the
    starts are screened by :data:`SCREEN_STEPS` EM steps together (the "short runs" of
    Biernacki, Celeux & Govaert 2003) and the one of highest binned likelihood is kept. A
    ranking alone is a permutation, so what tells a strong list from random ones is how well
    the class its top makes explains the other lists."""
    z, top, _, _ = _top_agreement(lo, hi)
    cols = np.flatnonzero(full)
    mus = np.array(
        [
            np.clip(z[top[:, j] > 0].mean(axis=0), 0.0, MU_MAX)
            if top[:, j].any()
            else np.zeros(lo.shape[1])
            for j in cols
        ]
    )
    if len(cols) == 1:
        return mus[0]
    r0 = none if problem.dependence else np.zeros(0)
    thetas = np.array([np.concatenate([m, beta0, r0]) for m in mus])
    theta, _, _, _ = _solve_starts(
        [problem] * len(cols), thetas, tol=tol, max_iter=SCREEN_STEPS, fixed_mu=fixed_mu, rounds=1
    )
    lls = [_binned_log_likelihood(problem, t) for t in theta]
    return mus[int(np.argmax(lls))]


def _start_correlation(
    lo: np.ndarray, hi: np.ndarray, w: np.ndarray, *, hard: bool = False
) -> np.ndarray:
    """Correlation of the lists' normal scores ``Phi^-1(1 - mid u)`` over all genes,
    soft-thresholded (:func:`_threshold`), or with ``hard`` the correlations below the
    threshold set to 0 and the others kept as they are (Bickel & Levina 2008's estimator)."""
    D = lo.shape[1]
    if D < 2:
        return np.eye(D)
    z = -ndtri(np.clip(0.5 * (lo + hi), 1e-9, 1 - 1e-9))
    zc = z - np.average(z, axis=0, weights=w)
    C = (zc * w[:, None]).T @ zc
    r = _scatter_correlations(C)
    if hard:
        r = np.where(_threshold(r, float(w.sum())) != 0, r, 0.0)
    else:
        r = _threshold(r, float(w.sum()))
    return _corr_matrix(r, D)


def log_likelihood(
    log_odds: np.ndarray,
    eta: np.ndarray,
    llr: np.ndarray,
    v: np.ndarray,
    rho: float,
    w: np.ndarray,
    *,
    per_list: np.ndarray | None = None,
    scores: np.ndarray | None = None,
    correlation: np.ndarray | None = None,
    calibrated: np.ndarray | None = None,
) -> float:
    """The (composite) log-likelihood of the observations relative to the null model in
    which no list is informative (every position uniform, the lists independent): ``sum_i
    [log(pi_i e^(t_i) + 1 - pi_i) - sum_l v_l log(rho LR_il + 1 - rho)]``. The second part is
    each list's background density of its own positions (``P0 = width / (rho LR + 1 -
    rho)``): one list alone gains exactly nothing, whatever mu (its positions are uniform
    under the model). ``per_list``: :func:`_list_log_density` of ``llr`` when already known.
    A ``calibrated`` list (its u are null p-values) has no such part: the null model's
    density of its p-values is 1, and how they gather near 0 is evidence of the relevant class.

    With ``scores`` (M, D, the lists' latent scores; the interval's mean score for tied and
    censored positions) and ``correlation`` S, the lists' background Gaussian copula
    :func:`copula_log_density` is added: the full likelihood of the model, which the fit's
    stopping rule follows (the composite one swings by hundreds of nats along a ridge on which
    the full one is flat: two lists that share noise). It is not used to compare fits: near
    copies of a list make S nearly singular, and there the copula term rewards inflated
    scores."""
    mix = np.logaddexp(0.0, log_odds) - np.logaddexp(0.0, eta)
    if per_list is None:
        per_list = _list_log_density(llr, rho, calibrated)
    total = mix - per_list @ v
    if correlation is not None and scores is not None and correlation.shape[0] > 1:
        total = total + copula_log_density(scores, correlation)
    return float(np.sum(w * total))


def copula_log_density(scores: np.ndarray, S: np.ndarray) -> np.ndarray:
    """Per gene: the log density of the Gaussian copula with correlation S at the latent
    scores (M, D), ``-log det S / 2 - s' (S^-1 - I) s / 2``."""
    D = S.shape[0]
    _, logdet = np.linalg.slogdet(S)
    Q = np.linalg.inv(S) - np.eye(D)
    return -0.5 * logdet - 0.5 * np.einsum("ij,ij->i", scores @ Q, scores)


def _list_log_density(
    llr: np.ndarray, rho: np.ndarray | float, calibrated: np.ndarray | None = None
) -> np.ndarray:
    """``log(rho LR + 1 - rho)``: a list's density of its own positions (log_likelihood); 0
    for a ``calibrated`` list (broadcast with ``llr``), whose null p-values have density 1."""
    d = np.log(rho) + llr
    np.logaddexp(d, np.log1p(-rho), out=d)
    if calibrated is not None and np.any(calibrated):
        d = np.where(np.asarray(calibrated, bool), 0.0, d)
    return d


def gene_terms(
    llr: np.ndarray, mean: np.ndarray, mu: np.ndarray, S: np.ndarray, v: np.ndarray
) -> np.ndarray:
    """``v_l t_il`` (M, D): each list's own interval term plus its share of the correlation
    correction (module docstring; :func:`correlation_correction`)."""
    t = llr * v
    if S.shape[0] > 1:
        sv, g, m = correlation_correction(mu, S, v)
        c = mean * (sv * g)  # (in place: no more arrays of every gene than needed)
        c -= 0.5 * g * m
        t += c
    return t


def correlation_correction(
    mu: np.ndarray, S: np.ndarray, v: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(sqrt(v), g, m)`` of the correlation correction tempered by ``v``: list l's share is
    ``sqrt(v_l) g_l s_l - g_l m_l / 2``.

    A list tempered by ``v_l`` is read as seen through added independent noise: its score
    ``sqrt(v_l) s_l + sqrt(1 - v_l) e_l``, of separation ``m_l = sqrt(v_l) mu_l`` and
    correlation ``sqrt(v_l v_k) S_lk`` with list k (the matrix ``S_v``). The linear
    discriminant of those scores, at their expectation, is ``sum_l v_l (mu_l s_l - mu_l^2 /
    2)`` (each list's own term tempered) plus the shares above, with ``g = (S_v^-1 - I) m``:
    with independent lists exactly the tempered terms, with v = 1 the untempered
    discriminant, and a list of weight 0 drops out, its correlations too. (Scaling each list's
    share of the untempered correction by ``v_l`` instead breaks the cancellation between
    lists that share noise: two near copies, one tempered, then give a gene's evidence a large
    multiple of their difference, and the tempered fit ran to a degenerate class of half the
    genes on the ALL lineage labels.)"""
    sv = np.sqrt(np.clip(np.asarray(v, dtype=np.float64), 0.0, 1.0))
    m = sv * mu  # (D,), or (B, D) for B fits at once (S: (D, D) or one per fit, (B, D, D))
    Sv = S * np.outer(sv, sv)
    i = np.arange(len(sv))
    Sv[..., i, i] = 1.0
    return sv, np.linalg.solve(Sv, m[..., None])[..., 0] - m, m


def fit_posterior(
    lo: np.ndarray,
    hi: np.ndarray,
    prior: Prior,
    *,
    tempering: np.ndarray | None = None,
    max_prior: float = 0.5,
    dependence: bool = True,
    n_bins: int = 512,
    tol: float = 1e-5,
    max_iter: int = 1000,
    weights: np.ndarray | None = None,
    start: PosteriorFit | None = None,
    correlation: np.ndarray | None = None,
    standardise: tuple[np.ndarray, np.ndarray] | None = None,
    fixed_mu: bool = False,
    exact: bool = True,
    likelihood: bool = True,
    calibrated: np.ndarray | None = None,
) -> PosteriorFit:
    """Fit the model of the module docstring.

    Parameters
    ----------
    lo, hi : ndarray (M, D)
        Observation intervals of u of the data lists (:mod:`kofs.aggregate.intervals`).
    prior : Prior
        Gene-level covariates of the prior (may have no column).
    tempering : ndarray (D,), optional
        v_l in [0, 1] (label supervision); default 1
        (:func:`kofs.aggregate.uncertainty.tempered_fit`).
    max_prior : float
        Cap of the mean prior probability (the relevant class is the minority).
    dependence : bool
        Learn the lists' correlation S (else S = I: conditionally independent lists).
    n_bins : int
        Bins of the sufficient statistics.
    weights : ndarray (M,), optional
        Gene weights.
    start : PosteriorFit, optional
        Warm start.
    correlation : ndarray (D, D), optional
        A fixed S (not re-estimated).
    standardise : (center, scale), optional
        The covariates' standardisation (default: their weighted mean and SD).
    fixed_mu : bool
        Keep the separations of ``start`` (only the prior, and S, are fitted).
    exact : bool
        Compute the exact final scores (else the binned ones).
    likelihood : bool
        Compute the fit's log-likelihood (else NaN: a refit that only needs the parameters).
    calibrated : ndarray of bool (D,), optional
        The data lists whose ``lo``, ``hi`` are null p-values (``lo = hi = p``), not
        positions (:mod:`kofs.aggregate.binormal`).
    """
    one = _Fit(
        lo,
        hi,
        prior,
        tempering=tempering,
        max_prior=max_prior,
        dependence=dependence,
        n_bins=n_bins,
        tol=tol,
        max_iter=max_iter,
        weights=weights,
        start=start,
        correlation=correlation,
        standardise=standardise,
        fixed_mu=fixed_mu,
        exact=exact,
        likelihood=likelihood,
        calibrated=calibrated,
    )
    return _solve_fits([one])[0]


def fit_posteriors(
    data: list[tuple[np.ndarray, np.ndarray]], prior: Prior, **options: Any
) -> list[PosteriorFit]:
    """:func:`fit_posterior` (``options``: its keywords) of each data set ``(lo, hi)`` of
    ``data`` (the same number of lists; the same prior), their starts solved together
    (:func:`_solve_starts`), sharing the fixed cost of every NumPy call of an EM step. Each
    fit reaches what it reaches alone. The simulated null of :mod:`kofs.aggregate.top_k_null`
    (twenty fits of 10,000 genes x 5 top-k lists): 17 s one by one, 13 s as one stack, 10 s
    as two stacks on two threads."""
    given = {**_fit_defaults(), **options}
    return _solve_fits([_Fit(lo, hi, prior, **given) for lo, hi in data])


def _fit_defaults() -> dict[str, Any]:
    """:func:`fit_posterior`'s keywords and their defaults (defined there alone)."""
    parameters = inspect.signature(fit_posterior).parameters.values()
    return {p.name: p.default for p in parameters if p.kind is p.KEYWORD_ONLY}


def _solve_fits(fits: list[_Fit]) -> list[PosteriorFit]:
    """The fits of :func:`fit_posteriors`: their starts solved together, then each fit's.
    The fits of lists alone that start them (:meth:`_Fit.subset_fits`) are solved first, those
    that fit one stack (the same lists, options and steps) together."""
    pending = [(f, s) for f in fits if f.subsets for s in f.subset_fits()]
    stacks: dict[tuple, list[int]] = {}
    for i, (_, s) in enumerate(pending):
        key = (s.problem.D, s.problem.P, s.max_iter, s.problem.cal.tobytes())
        stacks.setdefault(key, []).append(i)
    owns: dict[int, PosteriorFit] = {}
    for members in stacks.values():
        owns.update(zip(members, _solve_fits([pending[i][1] for i in members]), strict=True))
    for f in fits:
        if f.subsets:
            f.start_from([owns[i] for i, (g, _) in enumerate(pending) if g is f])
    n = [len(f.thetas) for f in fits]
    first = fits[0]
    solved = _solve_starts(
        [f.problem for f in fits for _ in range(len(f.thetas))],
        np.vstack([f.thetas for f in fits]),
        tol=first.tol,
        max_iter=first.max_iter,
        fixed_mu=first.fixed_mu,
        rounds=first.rounds,
        follower=np.concatenate([f.follower for f in fits]),
        groups=np.repeat(np.arange(len(fits)), n),
    )
    cut = np.cumsum(n)[:-1]
    parts = zip(*(np.split(a, cut) for a in solved), strict=True)
    return [f.complete(*part) for f, part in zip(fits, parts, strict=True)]


class _Fit:
    """One fit of :func:`fit_posterior`: its problem and starts (made here), then the fit
    kept from the solved starts (:meth:`complete`)."""

    def __init__(
        self,
        lo: np.ndarray,
        hi: np.ndarray,
        prior: Prior,
        *,
        tempering: np.ndarray | None,
        max_prior: float,
        dependence: bool,
        n_bins: int,
        tol: float,
        max_iter: int,
        weights: np.ndarray | None,
        start: PosteriorFit | None,
        correlation: np.ndarray | None,
        standardise: tuple[np.ndarray, np.ndarray] | None,
        fixed_mu: bool,
        exact: bool,
        likelihood: bool,
        calibrated: np.ndarray | None,
    ) -> None:
        lo = np.asarray(lo, dtype=np.float64)
        hi = np.asarray(hi, dtype=np.float64)
        M, D = lo.shape
        w = np.ones(M) if weights is None else np.asarray(weights, dtype=np.float64)
        v = np.ones(D) if tempering is None else np.clip(np.asarray(tempering, float), 0.0, 1.0)
        X, center, scale = _standardise(np.asarray(prior.X, dtype=np.float64), w, standardise)
        coded = code_intervals(lo, hi, n_bins=n_bins, calibrated=calibrated)
        problem = _Problem(
            coded,
            X,
            w,
            max_prior,
            dependence=dependence,
            tempering=v,
            collapse=True,
            calibrated=calibrated,
            interval_lists=interval_share(lo, hi) >= INTERVAL_SHARE,
        )
        iu = _offdiag(D)
        # starts (mu, beta, correlations); the fit of highest likelihood is kept
        starts: list[tuple[np.ndarray, np.ndarray, np.ndarray] | None] = []
        # starts from the fits of some lists alone (:meth:`subset_fits`), None until solved:
        # (start, lists, calibrated, steps)
        subsets: list[tuple[int, np.ndarray, bool, int]] = []
        pair = -1  # the start that stops on reaching another (none: -1)
        followers: list[int] = []  # other such starts
        if start is not None:
            starts.append(
                (
                    np.asarray(start.mu, dtype=np.float64).copy(),
                    np.asarray(start.beta, dtype=np.float64).copy(),
                    np.asarray(start.correlation, dtype=np.float64)[iu],
                )
            )
        none = np.zeros(len(iu[0]))
        if start is None:
            mu0 = np.full(D, MU_START)
            beta0 = np.zeros(X.shape[1])
            beta0[0] = logit(RHO_START)
            # independent lists, and the lists' correlation over all genes (most genes are
            # background), which the first misses when lists share false positives
            starts.append((mu0, beta0, none))
            if problem.dependence and correlation is None:
                starts.append((mu0, beta0, _start_correlation(lo, hi, w)[iu]))
            if D >= 3:
                # from the two lists that agree most: with many lists, most of them noise, the
                # starts above (every list alike) can climb to a mode of the noise lists' chance
                # agreement, far below the likelihood of the class the informative lists share.
                # It stops when it comes close to another start (the same mode, found already)
                starts.append((_pair_start(lo, hi), beta0, none))
                pair = len(starts) - 1
                full = ~problem.intervals[1] & ~problem.cal
                if full.any():
                    # from the own top of the full ranking whose top explains the others best
                    # (screened; a top-k list's own top is its list: random top-500 lists' own
                    # classes then won the likelihood, S3 of bench_fusion_check 0.46 -> 0.23)
                    own = _own_top_start(problem, lo, hi, full, beta0, none, tol, fixed_mu)
                    starts.append((own, beta0, none))
                    followers.append(len(starts) - 1)
                if problem.dependence and 2 <= full.sum() and problem.intervals[1].sum() >= 2:
                    # the full rankings' own fit: top-k lists that share noise overlap beyond
                    # chance, a class the starts above climb to (the pair above is then two of
                    # them); the composite likelihood (:meth:`complete`) chooses
                    # (a start: its steps are few; where nothing is relevant its fit crawls)
                    subsets.append((len(starts), full, False, SUBSET_STEPS))
                    starts.append(None)
                    followers.append(len(starts) - 1)
            if problem.cal.any() and not problem.cal.all():
                # the calibrated lists' own fit: their p-values alone show a relevant class, which
                # the other lists then join (lists that share noise can make a class of their own)
                subsets.append((len(starts), problem.cal, True, 1000))
                starts.append(None)
        self.lo, self.hi, self.w, self.X = lo, hi, w, X
        self.prior, self.max_prior, self.none = prior, max_prior, none
        self.center, self.scale = center, scale
        self.problem, self.pair = problem, pair
        self.starts, self.subsets = starts, subsets
        self.rounds = ROUNDS if (problem.dependence and correlation is None) else 1
        self.follower = np.isin(np.arange(len(starts)), [pair, *followers])
        self.tol, self.max_iter, self.fixed_mu = tol, max_iter, fixed_mu
        self.exact, self.likelihood, self.correlation = exact, likelihood, correlation
        self.start = start
        if not subsets:
            self.start_from([])

    def subset_fits(self) -> list[_Fit]:
        """The fits of some lists alone (:func:`_subset_fit`) whose parameters start this fit,
        for :meth:`start_from` once solved: by :func:`_solve_fits` with the other fits' (the
        simulated null of :mod:`kofs.aggregate.top_k_null` stacks twenty fits, whose own
        starts then share one stack too)."""
        return [
            _subset_fit(
                self.lo, self.hi, self.prior, cols, self.w, self.max_prior, calibrated=cal, steps=n
            )
            for _, cols, cal, n in self.subsets
        ]

    def start_from(self, owns: list[PosteriorFit]) -> None:
        """The starts (rows of ``thetas``), those of :meth:`subset_fits` from their solved
        fits ``owns``."""
        problem, none = self.problem, self.none
        made = {}
        for (k, cols, cal, _), own in zip(self.subsets, owns, strict=True):
            sub = _subset_start(own, self.lo, self.hi, cols, self.w)
            # the full rankings' fit: with the lists' correlation at its posteriors (from none,
            # its first inner fit drifts to the top-k lists' shared noise before it is estimated)
            r0 = none if cal else problem.correlation_step(np.concatenate([*sub, none]))
            made[k] = (*sub, r0)
        starts = [made[k] if s is None else s for k, s in enumerate(self.starts)]
        if self.correlation is not None:
            fixed_r = np.asarray(self.correlation, dtype=np.float64)[_offdiag(problem.D)]
            starts = [(m0, b0, fixed_r) for m0, b0, _ in starts]
        self.thetas = np.array(
            [
                np.concatenate([m0, b0, r0 if problem.dependence else np.zeros(0)])
                for m0, b0, r0 in starts
            ]
        )

    def complete(
        self, theta: np.ndarray, steps: np.ndarray, done: np.ndarray, merged: np.ndarray
    ) -> PosteriorFit:
        """The fit kept from the solved starts (:func:`_solve_starts`' results)."""
        lo, hi, w, X, problem = self.lo, self.hi, self.w, self.X, self.problem
        center, scale, pair = self.center, self.scale, self.pair
        tol, max_iter, fixed_mu = self.tol, self.max_iter, self.fixed_mu
        exact, likelihood, correlation = self.exact, self.likelihood, self.correlation
        D, P = problem.D, problem.P
        iu = _offdiag(D)
        # the first start of highest likelihood (a start stopped on reaching another: not one)
        candidates = np.flatnonzero(~merged)
        k = int(candidates[0])
        points = bool(np.all(hi - lo <= POINT_WIDTH))
        if len(candidates) > 1:
            composite = problem.dependence and problem.intervals[1].sum() >= 2
            if composite and correlation is None and np.all(problem.v == 1):
                # Lists showing genes as intervals (top-k lists, genes a list lacks): the binned
                # likelihood leaves the lists' copula out, and their interval means hide how
                # much noise they share, so the start whose class is those lists' shared noise
                # wins it (three graded full rankings beside six random top-300 lists sharing
                # 41 % of their noise: the random lists took 0.998 of the weight, fused top-90
                # precision 0.02 against 0.44 for the best list). The pairwise composite
                # likelihood reads each pair's dependence, intervals included
                lls = [_composite_log_likelihood(problem, theta[j]) for j in candidates]
            else:
                lls = [_binned_log_likelihood(problem, theta[j]) for j in candidates]
            k = int(candidates[int(np.argmax(lls))])

        # the exact terms' parameter-free parts: made once for every start finished here and
        # the relevant-class tests' null scores
        exact_terms = ExactTerms(lo, hi, problem.cal) if exact else None

        def finish_at(th: np.ndarray, iterations: int, converged: bool) -> PosteriorFit:
            mu, beta, r = problem.split(th)
            S = _corr_matrix(r, D) if problem.dependence else np.eye(D)
            return finish_fit(
                problem,
                lo,
                hi,
                X,
                (mu, beta, S),
                (center, scale),
                exact=exact,
                likelihood=likelihood,
                iterations=iterations,
                converged=converged,
                exact_terms=exact_terms,
            )

        def finish(j: int) -> PosteriorFit:
            return finish_at(theta[j], int(steps[j]), bool(done[j]))

        fit = finish(k)
        if len(candidates) > 1 and exact and problem.dependence and correlation is None and points:
            # The likelihood above leaves the lists' copula out (it compares starts along ridges
            # where the copula term is unstable). A fit whose full likelihood is below that of
            # the nested model without a relevant class (every mu 0: the lists' correlation
            # alone) is not a maximum of the model's likelihood: it explains the lists' shared
            # noise by a spurious class. Then the start of highest full likelihood is kept. Only
            # where every observation is a point: the full likelihood reads a censored or masked
            # observation through its own list's interval alone, so genes below every list at
            # once (a universe larger than the lists) are a dependence no model without a class
            # can explain, and a class of half the genes then wins by hundreds of nats on pure
            # noise (tests/test_aggregate_posterior.py).
            # The test's class model has signed separations, whose likelihood is at least that
            # of the fit's own (mu >= 0): where the latter is above no class, so is the former,
            # and the signed test (the reported one) is left to the caller (on a second thread)
            # The no-class part depends on the intervals alone: made once for every test here,
            # and kept with the fit for the caller's tests on the same intervals
            null = class_null_of(lo, hi, w, problem.cal, dependent=True, exact_terms=exact_terms)
            fit = replace(fit, class_null=null)
            if relevant_class_test(fit, lo, hi, weights=w, signed=False, null=null)["gain"] < 0:
                fits = {k: fit}
                tests = {k: relevant_class_test(fit, lo, hi, weights=w, null=null)}
                if tests[k]["gain"] < 0:
                    for j in candidates.tolist():
                        if j != k:
                            fits[j] = replace(finish(j), class_null=null)
                            tests[j] = relevant_class_test(fits[j], lo, hi, weights=w, null=null)
                    if D >= 3 and pair >= 0 and max(t["gain"] for t in tests.values()) < 0:
                        # Every start reads the lists' shared noise as the class. Where every
                        # list shares one noise factor they all end in one mode: every separation
                        # alike, a third of the genes "relevant" (three graded lists and ten
                        # random ones sharing half their noise: fused top-90 precision 0.03). The
                        # agreeing pair's separations with the lists' overall correlation
                        # hard-thresholded (the large correlations unshrunk: the soft threshold
                        # leaves part of the factor, 0.06 at 3,000 genes and 13 lists, for the
                        # class to take) reach the class beyond the factor (1,245 nats higher
                        # there; precision 0.68 against 0.48 for the best list)
                        hard = _start_correlation(lo, hi, w, hard=True)[iu]
                        extra, s_x, d_x, _ = _solve_starts(
                            [problem],
                            np.concatenate([self.thetas[pair, : D + P], hard])[None, :],
                            tol=tol,
                            max_iter=max_iter,
                            fixed_mu=fixed_mu,
                            rounds=ROUNDS,
                        )
                        j = len(theta)  # after the usual starts (ties go to them)
                        fits[j] = replace(
                            finish_at(extra[0], int(s_x[0]), bool(d_x[0])), class_null=null
                        )
                        tests[j] = relevant_class_test(fits[j], lo, hi, weights=w, null=null)
                    k = max(tests, key=lambda j: (tests[j]["gain"], -j))
                fit = replace(fits[k], relevant_class=tests[k])
        if exact and not fixed_mu and spread_eligible(lo, hi, problem.cal, problem.v):
            # effects of varying size (module docstring): tau2 profiled from this fit, or a
            # refit's held at its start's
            start = self.start
            if start is None or start.spread > 0:
                from_ = fit if start is None else replace(fit, mu=start.mu, beta=start.beta)
                fit = spread_fit(
                    from_,
                    fit.list_scores,
                    X,
                    w,
                    self.max_prior,
                    dependence=problem.dependence,
                    fixed_S=correlation is not None,
                    tau2=None if start is None else start.spread,
                    tol=tol,
                    seen=spread_seen(lo, hi),
                )
        return fit


def _subset_fit(
    lo: np.ndarray,
    hi: np.ndarray,
    prior: Prior,
    cols: np.ndarray,
    w: np.ndarray,
    max_prior: float,
    *,
    calibrated: bool,
    steps: int,
) -> _Fit:
    """The fit (to solve) of the lists ``cols`` (bool (D,)) alone, as independent (the prior
    included; ``calibrated``: they are the calibrated lists), in at most ``steps`` steps."""
    options = {
        **_fit_defaults(),
        "max_prior": max_prior,
        "dependence": False,
        "weights": w,
        "max_iter": steps,
        "exact": False,
        "likelihood": False,
        "calibrated": np.full(int(cols.sum()), calibrated),
    }
    return _Fit(lo[:, cols], hi[:, cols], prior, **options)


def _subset_start(
    own: PosteriorFit, lo: np.ndarray, hi: np.ndarray, cols: np.ndarray, w: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(mu, beta) from the fit ``own`` of the lists ``cols`` alone (:func:`_subset_fit`),
    with each other list's separation the posterior-weighted mean normal score of its
    genes."""
    p = own.posterior
    mu = np.empty(lo.shape[1])
    mu[cols] = own.mu
    z = -ndtri(np.clip(0.5 * (lo[:, ~cols] + hi[:, ~cols]), 1e-9, 1 - 1e-9))
    mu[~cols] = np.clip((w * p) @ z / max(float(w @ p), 1e-300), 0.0, MU_MAX)
    return mu, np.asarray(own.beta, dtype=np.float64)


def finish_fit(
    problem: _Problem,
    lo: np.ndarray | None,
    hi: np.ndarray | None,
    X: np.ndarray,
    params: tuple[np.ndarray, np.ndarray, np.ndarray],
    standardisation: tuple[np.ndarray, np.ndarray],
    *,
    exact: bool,
    likelihood: bool,
    iterations: int,
    converged: bool,
    exact_terms: ExactTerms | None = None,
) -> PosteriorFit:
    """The :class:`PosteriorFit` of the parameters ``(mu, beta, S)`` fitted on ``problem``
    (the genes' intervals ``lo``, ``hi`` and standardised design ``X``): every gene's terms,
    exact (from ``lo``, ``hi``; ``exact_terms``: their :class:`ExactTerms` when already made)
    or binned (without them: None)."""
    mu, beta, S = params
    v = problem.v
    eta = X @ beta
    rho = problem.mean_prior(problem.X @ beta)
    cal = problem.cal
    if exact:
        assert lo is not None and hi is not None
        if exact_terms is None:
            exact_terms = ExactTerms(lo, hi, cal)
        llr_g, mean_g = exact_terms.terms(mu, rho)
    else:
        llr_k, _, _, mean_k = problem.terms(mu, rho)
        llr_g, mean_g = llr_k[problem.coded.codes], mean_k[problem.coded.codes]
    terms = gene_terms(llr_g, mean_g, mu, S, v)
    log_odds = eta + terms.sum(axis=1)
    w = problem.gene_weights
    loglik = (
        log_likelihood(log_odds, eta, llr_g, v, rho, w, calibrated=cal) if likelihood else np.nan
    )
    return PosteriorFit(
        mu=mu,
        correlation=S,
        tempering=v,
        beta=beta,
        center=standardisation[0],
        scale=standardisation[1],
        log_odds=log_odds,
        prior_log_odds=eta,
        list_terms=terms,
        list_llr=llr_g,
        list_scores=mean_g,
        rho=rho,
        log_likelihood=loglik,
        iterations=iterations,
        converged=converged,
        calibrated=cal,
    )


# --- effects of varying size (calibrated lists) -------------------------------------------
#
# Module docstring, "Effects of varying size". Fitted where every data list is calibrated and
# every observation a point or a gene the table lacks (p-value tables: each gene's normal
# scores are exact where it is seen), the lists untempered: the grid's first point is the fit above (tau2 = 0, unchanged), each next
# one an EM from the last, and the likelihood (the lists' background copula included, as S
# moves with tau2) chooses.

#: The grid over which the effect scale's variance tau2 is profiled (:func:`_spread_profile`;
#: EM moves tau2 slowly near 0, and not at all from 0, as in :mod:`kofs.aggregate.signed`).
SPREAD_GRID = (0.0, 0.05, 0.2, 0.8, 3.2, 12.8)
#: tau2 > 0 is kept where its likelihood is above tau2 = 0's by more than this (nats): the 5 %
#: critical value of the likelihood-ratio test of tau2 = 0, on the boundary of the parameter
#: space, whose statistic is then 1/2 chi2_0 + 1/2 chi2_1 (Self & Liang 1987): 2.71 / 2. Picked by
#: likelihood alone, equal effects took tau2 = 0.05 for a gain of 0.36 nats half the time.
SPREAD_GAIN = 0.5 * float(chdtri(1, 0.10))
#: Steps of each grid point's EM (accelerated; a grid point that has not settled still has a
#: likelihood, which is all the profile compares).
SPREAD_STEPS = 300


def spread_seen(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Which observations are points (the others, for :func:`spread_eligible`, genes a table
    lacks: the whole interval [0, 1])."""
    return (hi - lo) <= POINT_WIDTH


def spread_eligible(
    lo: np.ndarray, hi: np.ndarray, calibrated: np.ndarray, tempering: np.ndarray
) -> bool:
    """Whether a fit of these intervals gets the effect scale's spread: every data list
    calibrated (p-values; a rank list's normal scores have no known scale), every observation
    a point or a gene the table lacks (``[0, 1]``: the gene's lists are those that have it;
    cut and censored tables are interval terms, for which the integral is not made -- tau2 = 0
    there), no list tempered by labels, and no list whose points are all one p-value (a table
    of 0.3 everywhere: at tau2 = 0 its constant log LR is the prior's, but the integral over
    lambda reads it as a prior on lambda -- beside one study's Gamma table it moved mu 4.5 ->
    0.8, and 12 seeds' calls 62.7 / FDP 0.061 alone -> 68.2 / 0.085)."""
    cal = np.asarray(calibrated, bool)
    if cal.size == 0 or not cal.all() or not np.all(np.asarray(tempering) == 1.0):
        return False
    point = spread_seen(lo, hi)
    # (a table's p-values of exactly 1 are the interval of their tie block at the top,
    # kofs.aggregate.relevance._p_of_one: read as the gene missing there, as it nearly is)
    top = (hi >= P_RANGE[1]) & (lo >= 0.5)
    if not np.all(point | top | ((lo == 0.0) & (hi == 1.0))):
        return False
    for j in range(lo.shape[1]):
        values = lo[point[:, j], j]
        if values.size and values.min() == values.max():
            return False
    return True


class _SpreadData:
    """The exact normal scores ``Z`` (M, D) of the genes, which of them are seen (``seen``;
    None: all; a gene's lists are those that have it, its relevant scores ``lambda mu_O +
    e_O`` with ``e_O ~ N(0, S_OO)``), their weights and prior design."""

    def __init__(
        self, Z: np.ndarray, design: PriorDesign, dependence: bool, seen: np.ndarray | None = None
    ) -> None:
        Z = np.asarray(Z, dtype=np.float64)
        self.design = design
        self.w = design.w
        self.D = Z.shape[1]
        self.dependence = dependence and self.D > 1
        self.full = seen is None or bool(np.all(seen))
        self.seen = np.ones(Z.shape, bool) if seen is None else np.asarray(seen, bool)
        self.Z = Z if self.full else np.where(self.seen, Z, 0.0)
        self.N = self.seen.astype(np.float64)
        self.patterns: list[tuple[np.ndarray, np.ndarray]] = []
        if not self.full:  # the genes of each pattern of seen lists
            values, inverse = np.unique(self.seen, axis=0, return_inverse=True)
            inverse = inverse.ravel()
            for k, pattern in enumerate(values):
                self.patterns.append((np.flatnonzero(inverse == k), np.flatnonzero(pattern)))

    def evidence(self, mu, S, tau2):
        """(a, c, log LR) of every gene at (mu, S, tau2) (``c`` one number, or per gene when
        genes lack lists)."""
        a, c = self.discriminant(mu, S)
        return a, c, spread_log_lr(a, c, tau2)

    def discriminant(self, mu, S):
        """``a = mu_O' S_OO^-1 s_O`` and ``c = mu_O' S_OO^-1 mu_O`` of every gene."""
        G, c = self.directions(mu, S)
        if self.full:
            return self.Z @ G, c
        return np.einsum("ij,ij->i", self.Z, G), c

    def directions(self, mu, S):
        """``S_OO^-1 mu_O`` of every gene (its lists O; 0 elsewhere), (D,) when every gene has
        every list, else (M, D), and ``c``."""
        if self.full:
            g = np.linalg.solve(S, mu)
            return g, float(mu @ g)
        G = np.zeros(self.Z.shape)
        c = np.zeros(self.Z.shape[0])
        for rows, cols in self.patterns:
            if cols.size:
                g = np.linalg.solve(S[np.ix_(cols, cols)], mu[cols])
                G[np.ix_(rows, cols)] = g
                c[rows] = float(mu[cols] @ g)
        return G, c

    def log_likelihood(self, mu, S, beta, tau2) -> float:
        """The full log-likelihood relative to independent uniform p-values: each gene's
        background copula of its seen lists plus its mixture's log ratio
        (:func:`log_likelihood`)."""
        _, _, llr = self.evidence(mu, S, tau2)
        eta = self.design.X @ beta
        mix = np.logaddexp(0.0, eta + llr) - np.logaddexp(0.0, eta)
        if self.D > 1:
            mix += _seen_copula(self.Z, self.seen, S)
        return float(np.sum(self.w * mix))

    def separations(self, wp, el, el2) -> np.ndarray:
        """The M step of mu: ``sum p E[lambda] s / sum p E[lambda^2]`` over each list's genes
        (the maximum whatever S where every gene has every list)."""
        den = self.N.T @ (wp * el2)
        return np.clip((self.Z.T @ (wp * el)) / np.maximum(den, 1e-300), 0.0, MU_MAX)

    def correlations(self, mu, wp, el, el2) -> np.ndarray:
        """The pooled within-class correlations (upper off-diagonal entries, not thresholded):
        the relevant genes' scores about ``E[lambda] mu`` with ``Var(lambda) mu mu'`` (the
        shared effect, not shared noise), the others' about 0, each pair over the genes that
        have both lists."""
        Z, N = self.Z, self.N
        R = (Z - el[:, None] * mu) * N
        w0 = self.w - wp
        var = wp * (el2 - el * el)
        C = (R * wp[:, None]).T @ R + (Z * w0[:, None]).T @ Z
        C += ((N * mu) * var[:, None]).T @ (N * mu)
        if self.full:
            return _scatter_correlations(C)
        # each list's second moment over the genes that have the other list too
        own = R * R * wp[:, None] + Z * Z * w0[:, None] + (N * mu) ** 2 * var[:, None]
        V = own.T @ N
        with np.errstate(invalid="ignore", divide="ignore"):
            r = C / np.sqrt(V * V.T)
        return np.nan_to_num(r[_offdiag(self.D)], nan=0.0)


def _spread_em(
    data: _SpreadData,
    mu: np.ndarray,
    S: np.ndarray,
    beta: np.ndarray,
    tau2: float,
    *,
    fixed_S: bool,
    tol: float,
    max_iter: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, int]:
    """EM for (mu, S, beta) at a fixed tau2 (``fixed_S``: S kept), accelerated by SQUAREM (an
    extrapolation whose step moves more than the plain one did is replaced by the plain
    steps, as in :func:`solve_stacked`): the parameters,
    their log-likelihood and the steps. E step: the posteriors and lambda's moments given the
    scores (:func:`kofs.aggregate.binormal.spread_moments`); M step: ``mu = sum p E[lambda] s
    / sum p E[lambda^2]`` (the relevant mean is ``mu E[lambda]``), S the soft-thresholded
    correlation of :meth:`_SpreadData.scatter` (as the fit's own, :func:`_threshold`), beta
    one Newton step of the prior's regression."""
    D, design = data.D, data.design
    P = design.P
    iu = _offdiag(D)
    learn_S = data.dependence and not fixed_S

    def pack(mu, S, beta):
        return np.concatenate([mu, beta, S[iu] if learn_S else np.zeros(0)])

    def unpack(theta):
        S_ = _corr_matrix(np.clip(theta[D + P :], -1.0, 1.0), D) if learn_S else S
        return np.clip(theta[:D], 0.0, MU_MAX), S_, design._cap(theta[D : D + P])

    def step(theta):
        mu, S_, beta = unpack(theta)
        a, c = data.discriminant(mu, S_)
        llr, el, el2 = spread_parts(a, c, tau2)
        eta = design.X @ beta
        p = expit(eta + llr)
        wp = data.w * p
        mu_new = data.separations(wp, el, el2)
        if learn_S:
            r = _threshold(data.correlations(mu_new, wp, el, el2), design.wsum)
            S_ = _corr_matrix(r, D)
        return pack(mu_new, S_, design._prior_step(beta, eta, p))

    theta = pack(np.asarray(mu, dtype=np.float64), S, np.asarray(beta, dtype=np.float64))
    steps = 0
    while steps < max_iter:
        t1 = step(theta)
        t2 = step(t1)
        steps += 2
        r = t1 - theta
        v = t2 - t1 - r
        nv = float(np.linalg.norm(v))
        nxt = t2
        if nv > 0:
            alpha = min(-float(np.linalg.norm(r)) / nv, -1.0)
            cand = theta - 2.0 * alpha * r + alpha * alpha * v
            cand[:D] = np.clip(cand[:D], 0.0, MU_MAX)
            if learn_S:
                cand[D + P :] = np.clip(cand[D + P :], -0.999, 0.999)
            t3 = step(cand)
            steps += 1
            # kept where it moves less than the plain step did (as solve_stacked's)
            if np.all(np.isfinite(t3)) and np.max(np.abs(t3 - cand)) < np.max(np.abs(r)):
                nxt = t3
        change = float(np.max(np.abs(nxt - theta)))
        theta = nxt
        if change < tol:
            break
    mu, S_, beta = unpack(theta)
    return mu, S_, beta, data.log_likelihood(mu, S_, beta, tau2), steps


def _spread_profile(
    data: _SpreadData,
    mu: np.ndarray,
    S: np.ndarray,
    beta: np.ndarray,
    *,
    fixed_S: bool,
    tol: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, int]:
    """tau2 profiled over :data:`SPREAD_GRID` by likelihood: its first point the given fit
    (tau2 = 0, as fitted), each next one :func:`_spread_em` warm-started from the last; the
    grid stops once the likelihood has fallen twice. The best point is kept if its likelihood
    is above tau2 = 0's by more than :data:`SPREAD_GAIN` (the test of equal effects rejects
    them) and no correlation of its S is above 0 (after the soft threshold: the tables share no
    noise; :func:`_shares_noise`), else the given fit. Tables that share noise have two-sided p-values whose normal
    scores are more alike in their tails than the Gaussian copula says (docs/lists.md), and a
    class of effects of varying size takes those tails for relevant genes: two tables sharing
    60 % of their noise, Gamma effects, FDP 0.168 at q <= 0.10 with the spread against 0.061
    without. Shared noise of either sign makes two-sided p-values alike (``|z|`` of correlated
    z-scores correlate as the square of their correlation), so a negative fitted correlation is
    not shared noise (two independent tables: -0.008 at one seed). (The fit at tau2 = 0 is no
    judge of that: with effects of varying size it reads the effect the tables share as shared
    noise, S 0.02 where the spread's fit finds 0.) Returns (mu, S, beta, tau2, steps)."""
    ll0 = data.log_likelihood(mu, S, beta, 0.0)
    best = (ll0, mu, S, beta, 0.0)
    state = state0 = (mu, S, beta)
    falls = total = 0
    for tau2 in SPREAD_GRID[1:]:
        m1, S1, b1, ll, steps = _spread_em(
            data, *state, tau2, fixed_S=fixed_S, tol=tol, max_iter=SPREAD_STEPS
        )
        total += steps
        state = (m1, S1, b1)
        if ll > best[0]:
            best, falls = (ll, m1, S1, b1, tau2), 0
        else:
            falls += 1
            if falls == 2:
                break
    ll, mu, S, beta, tau2 = best
    # equal effects not rejected, or tables that share noise (below): the fit at tau2 = 0
    if ll - ll0 <= SPREAD_GAIN or _shares_noise(S):
        return (*state0, 0.0, total)
    return mu, S, beta, tau2, total


def _shares_noise(S: np.ndarray) -> bool:
    """Whether a correlation of the spread's fit ``S`` is above 0 (:func:`_spread_profile`).
    (Genes at p = 1 in two tables, a discrete test's atom, made S 0.05-0.10 between independent
    studies as points at the end of :data:`P_RANGE`; they are intervals now,
    :func:`kofs.aggregate.relevance._p_of_one`, which the spread reads as the gene missing
    there.)"""
    return bool(np.any(S[_offdiag(S.shape[0])] > 0))


def spread_terms(
    data: _SpreadData, mu: np.ndarray, S: np.ndarray, tau2: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per gene of ``data``: each list's ``log LR`` (0 where the gene lacks it) and term, and
    the whole evidence (:func:`kofs.aggregate.binormal.spread_log_lr`). A list's term is its
    share of the linear discriminant, ``(S_OO^-1 mu_O)_l (s_l - mu_l / 2)`` (with every list
    seen: :func:`gene_terms`'), plus its share ``mu_l (S_OO^-1 mu_O)_l / c`` of the spread's
    change to it: the terms sum to the evidence (PosteriorFit's ``spread``)."""
    mu = np.asarray(mu, dtype=np.float64)
    llr = np.where(data.seen, mu * data.Z - 0.5 * mu * mu, 0.0)
    G, c = data.directions(mu, S)
    terms = G * (data.Z - 0.5 * mu) * data.N
    a = data.Z @ G if data.full else np.einsum("ij,ij->i", data.Z, G)
    evidence = spread_log_lr(a, c, tau2)
    if tau2 > 0:
        cc = np.asarray(c, dtype=np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            share = np.where(cc[..., None] > 0, mu * G / cc[..., None], 0.0)
        terms += (evidence - terms.sum(axis=1))[:, None] * share
    return llr, terms, evidence


def spread_fit(
    fit: PosteriorFit,
    Z: np.ndarray,
    X: np.ndarray,
    w: np.ndarray,
    max_prior: float,
    *,
    dependence: bool,
    fixed_S: bool = False,
    tau2: float | None = None,
    tol: float = 1e-5,
    max_iter: int = SPREAD_STEPS,
    seen: np.ndarray | None = None,
) -> PosteriorFit:
    """``fit`` (of calibrated lists whose genes' exact normal scores are ``Z``, ``seen`` where
    the tables have the gene (None: everywhere); standardised design ``X``, gene weights
    ``w``) with the effect scale's spread: tau2 profiled over :data:`SPREAD_GRID` from it
    (``tau2`` None), or the EM at ``tau2`` from it (a refit). The fit itself where tau2 = 0 is
    kept."""
    data = _SpreadData(Z, PriorDesign(X, w, max_prior), dependence, seen)
    mu0, S0, beta0 = fit.mu, fit.correlation, fit.beta
    if tau2 is None:
        mu, S, beta, tau2, steps = _spread_profile(data, mu0, S0, beta0, fixed_S=fixed_S, tol=tol)
        converged = fit.converged
    elif tau2 > 0:
        mu, S, beta, _, steps = _spread_em(
            data, mu0, S0, beta0, tau2, fixed_S=fixed_S, tol=tol, max_iter=max_iter
        )
        converged = steps < max_iter
    else:
        return fit
    if tau2 <= 0:
        return fit
    llr, terms, evidence = spread_terms(data, mu, S, tau2)
    eta = X @ beta
    rho = data.design.mean_prior(eta)
    log_odds = eta + evidence
    loglik = float(np.sum(w * (np.logaddexp(0.0, log_odds) - np.logaddexp(0.0, eta))))
    return replace(
        fit,
        mu=mu,
        correlation=S,
        beta=beta,
        log_odds=log_odds,
        prior_log_odds=eta,
        list_terms=terms,
        list_llr=llr,
        list_scores=np.asarray(Z, dtype=np.float64),
        rho=rho,
        log_likelihood=loglik if np.isfinite(fit.log_likelihood) else np.nan,
        iterations=fit.iterations + int(steps),
        converged=bool(converged),
        relevant_class=None,
        spread=float(tau2),
        spread_seen=None if data.full else data.seen,
    )


def _spread_class_log_likelihood(
    fit: PosteriorFit, w: np.ndarray, dependent: bool, copula_seen: np.ndarray
) -> float:
    """:func:`relevant_class_test`'s full log-likelihood of a fit with the spread: at its
    separations, prior and tau2, S profiled (unthresholded, as the test's) from the pooled
    scatter of :meth:`_SpreadData.correlations` given its posteriors; the copula over
    ``copula_seen`` (the no-class part's points)."""
    mu, tau2 = fit.mu, fit.spread
    D = len(mu)
    data = _SpreadData(
        fit.list_scores, PriorDesign(np.ones((len(w), 1)), w, 0.5), dependent, fit.spread_seen
    )
    S = np.eye(D)
    if dependent:
        a, c = data.discriminant(mu, fit.correlation)
        _, el, el2 = spread_parts(a, c, tau2)
        r = data.correlations(mu, w * fit.posterior, el, el2)
        S = _corr_matrix(np.clip(r, -0.999, 0.999), D)
    _, _, llr = data.evidence(mu, S, tau2)
    eta = fit.prior_log_odds
    mix = np.logaddexp(0.0, eta + llr) - np.logaddexp(0.0, eta)
    if dependent:
        mix += _seen_copula(data.Z, copula_seen & data.seen, S)
    return float(np.sum(w * mix))


def with_exact_terms(fit: PosteriorFit, lo: np.ndarray, hi: np.ndarray) -> PosteriorFit:
    """``fit`` (made with ``exact=False``: binned terms) with every gene's exact terms on its
    intervals ``lo``, ``hi``: what :func:`finish_fit` gives with ``exact`` (the same numbers),
    for a caller that needs them only for some fits (its log-likelihood is left as it is)."""
    llr, mean = exact_list_terms(lo, hi, fit.mu, fit.rho, fit.calibrated)
    terms = gene_terms(llr, mean, fit.mu, fit.correlation, fit.tempering)
    return replace(
        fit,
        log_odds=fit.prior_log_odds + terms.sum(axis=1),
        list_terms=terms,
        list_llr=llr,
        list_scores=mean,
    )


def _pairwise_correlation(
    Z1: np.ndarray, w1: np.ndarray, Z0: np.ndarray, w0: np.ndarray, seen: np.ndarray
) -> np.ndarray:
    """The correlation matrix of the pooled weighted second moments ``w1 z1 z1' + w0 z0 z0'``
    about 0 (the model's class centres), each pair over the genes where both lists are seen
    (``seen`` (M, D)); not thresholded: the maximum-likelihood estimate given the scores."""
    D = Z1.shape[1]
    if seen.all():
        r = _scatter_correlations(_pooled_scatter(Z1, w1, Z0, w0))
        return _corr_matrix(np.clip(r, -0.999, 0.999), D)
    N = seen.astype(np.float64)
    A1 = np.where(seen, Z1, 0.0)
    A0 = np.where(seen, Z0, 0.0)
    C = _pooled_scatter(A1, w1, A0, w0)
    # the pair's own second moments: list j's over the genes where k is seen too
    V = (A1**2 * w1[:, None]).T @ N + (A0**2 * w0[:, None]).T @ N
    with np.errstate(invalid="ignore", divide="ignore"):
        R = C / np.sqrt(V * V.T)
    r = np.nan_to_num(R[_offdiag(D)], nan=0.0)
    return _corr_matrix(np.clip(r, -0.999, 0.999), D)


def _seen_copula(scores: np.ndarray, seen: np.ndarray, S: np.ndarray) -> np.ndarray:
    """Per gene: :func:`copula_log_density` of the lists it is seen in (the Gaussian copula
    of S's sub-matrix; a margin of a Gaussian copula is one), 0 with fewer than two."""
    M, D = scores.shape
    if seen.all():  # the common case: every list a full ranking without wide ties
        return copula_log_density(scores, S)
    out = np.zeros(M)
    if D <= 62:  # each row's pattern as one integer (a row-wise np.unique sorts far slower)
        code = seen.astype(np.int64) @ (np.int64(1) << np.arange(D, dtype=np.int64))
        values, inverse = np.unique(code, return_inverse=True)
        patterns = ((values[:, None] >> np.arange(D)) & 1).astype(bool)
    else:
        patterns, inverse = np.unique(seen, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    for k, pattern in enumerate(patterns):
        cols = np.flatnonzero(pattern)
        if len(cols) < 2:
            continue
        rows = inverse == k
        out[rows] = copula_log_density(scores[np.ix_(rows, cols)], S[np.ix_(cols, cols)])
    return out


@dataclass(frozen=True)
class ClassNull:
    """The no-class model of :func:`relevant_class_test` on intervals ``lo``, ``hi`` with gene
    weights ``w``: it depends on them alone (not on the fit), so every test on those intervals
    can share it (:func:`class_null_of`).

    ``z`` (M, D): the intervals' ``N(0, 1)`` means (the null's latent scores; None when the
    test needs none); ``seen`` (M, D): the observations the copula terms read as points;
    ``S0``: the no-class correlation (None without dependence); ``l_null``: its full
    log-likelihood. ``key`` holds what it was made from (weak references to ``lo`` and ``hi``,
    the weights, calibrated lists and dependence), so that :meth:`matches` tells whether a
    test may use it."""

    z: np.ndarray | None
    seen: np.ndarray
    S0: np.ndarray | None
    l_null: float
    key: tuple[Any, ...]

    def matches(
        self, lo: np.ndarray, hi: np.ndarray, w: np.ndarray, cal: np.ndarray, dependent: bool
    ) -> bool:
        lo_ref, hi_ref, w0, cal0, dep0 = self.key
        return (
            lo_ref() is lo
            and hi_ref() is hi
            and dep0 == dependent
            and np.array_equal(cal0, cal)
            and np.array_equal(w0, w)
        )

    def reversed(self, col: int, lo: np.ndarray, hi: np.ndarray) -> ClassNull:
        """The null part of the same lists with list ``col`` read reversed (``lo``, ``hi``:
        those intervals, ``u -> 1 - u``): its latent scores negated, its correlations with
        the others too, the likelihood unchanged (the Gaussian copula density of ``D z`` under
        ``D S0 D``, D the sign flip, is that of z under S0). Numerically equivalent to
        :func:`class_null_of` of the reversed intervals, not bit for bit (``Q^-1(1 - u)`` is
        computed, there, from a rounded ``1 - u``)."""
        _, _, w0, cal0, dep0 = self.key
        z = None
        if self.z is not None:
            z = self.z.copy()
            z[:, col] = -z[:, col]
        S0 = None
        if self.S0 is not None:
            S0 = self.S0.copy()
            S0[col, :] = -S0[col, :]
            S0[:, col] = -S0[:, col]
        key = (weakref.ref(lo), weakref.ref(hi), w0, cal0, dep0)
        return ClassNull(z, self.seen, S0, self.l_null, key)

    def subset(self, cols: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> ClassNull | None:
        """The null part of lists ``cols`` of these (their intervals ``lo``, ``hi``): their
        scores and points taken from here (a list's depend on its own intervals alone), S0
        and the likelihood made anew -- :func:`class_null_of` of ``lo``, ``hi``, bit for bit.
        None when these intervals are gone or are not those lists' (or no scores were made)."""
        lo_ref, hi_ref, w0, cal0, dep0 = self.key
        lo0, hi0 = lo_ref(), hi_ref()
        cols = np.asarray(cols, dtype=np.intp)
        if (
            self.z is None
            or lo0 is None
            or hi0 is None
            or not np.array_equal(lo0[:, cols], lo)
            or not np.array_equal(hi0[:, cols], hi)
        ):
            return None
        M, D = lo.shape
        # C order, as made anew (a product's rounding follows the layout)
        z = np.ascontiguousarray(self.z[:, cols])
        dependent = bool(dep0) and D > 1
        seen = (
            np.ascontiguousarray(self.seen[:, cols]) if dependent else np.zeros((M, D), dtype=bool)
        )
        S0 = None
        l_null = 0.0
        if dependent:
            S0 = _pairwise_correlation(z, w0, z, np.zeros(M), seen)
            l_null = float(np.sum(w0 * _seen_copula(z, seen, S0)))
        key = (weakref.ref(lo), weakref.ref(hi), w0, np.asarray(cal0)[cols], dependent)
        return ClassNull(z, seen, S0, l_null, key)


def class_null_of(
    lo: np.ndarray,
    hi: np.ndarray,
    w: np.ndarray,
    calibrated: np.ndarray,
    *,
    dependent: bool,
    scores: bool = True,
    exact_terms: ExactTerms | None = None,
) -> ClassNull:
    """The :class:`ClassNull` of :func:`relevant_class_test` on ``lo``, ``hi`` (the null's
    latent scores when ``scores`` or ``dependent``; ``exact_terms``: the intervals'
    :class:`ExactTerms` when already made)."""
    M, D = lo.shape
    cal = np.asarray(calibrated, bool)
    # N(0, 1) interval means (the null's scores; which lists sit below their mean). The
    # mixture is N(0, 1) whatever rho at mu = 0: rho = 0, so that fits of any rho share them
    z = None
    if dependent or scores:
        if exact_terms is None or not np.array_equal(exact_terms.cal, cal):
            exact_terms = ExactTerms(lo, hi, cal)
        z = exact_terms.terms(np.zeros(D), 0.0)[1]
    seen = np.zeros((M, D), dtype=bool)
    S0 = None
    l_null = 0.0
    if dependent:
        assert z is not None
        seen = copula_points(lo, hi)
        # a list seen for fewer than half of the genes (a top-k list) enters through its
        # interval terms only: its pairs' moments would be those of its top, range-restricted
        seen &= seen.mean(axis=0) >= 0.5
        S0 = _pairwise_correlation(z, w, z, np.zeros(M), seen)
        l_null = float(np.sum(w * _seen_copula(z, seen, S0)))
    key = (weakref.ref(lo), weakref.ref(hi), w, cal, dependent)
    return ClassNull(z, seen, S0, l_null, key)


def relevant_class_test(
    fit: PosteriorFit,
    lo: np.ndarray,
    hi: np.ndarray,
    *,
    weights: np.ndarray | None = None,
    dependence: bool = True,
    signed: bool = True,
    null: ClassNull | None = None,
) -> dict[str, float]:
    """Does the fit's relevant class explain the lists more than their correlation alone?

    Lists computed from one data set share noise, so they agree with each other also where no
    gene is relevant; the fit can read that agreement as a relevant class (a third to a half
    of the genes, with hundreds of genes at q <= 0.10 on planted lists sharing noise). The
    test compares two models by their full likelihood (:func:`log_likelihood` with the lists'
    background Gaussian copula): the fitted relevant class (mu, the prior, with S profiled:
    the pooled within-class correlation of the latent scores given the posteriors), and no
    relevant class with the lists' correlation S0 (every mu = 0: the normal scores of the
    positions). Neither correlation is thresholded. The copula terms read the positions that
    are points (:func:`kofs.aggregate.binormal.copula_points`: intervals at most
    :data:`POINT_WIDTH` wide, and tie blocks inside which the latent score spreads no more)
    of the lists that are points for at least half of the genes, each at its interval's mean
    latent score: a gene below a top-k list, or masked, enters through its
    lists' interval terms only, a top-k list as a whole too (the moments of its top alone are
    range-restricted), and each correlation is estimated over the genes seen in both lists.
    The statistic ``2 (l_fit - l_null)`` is referred to chi-square with as many degrees of
    freedom as the relevant class has parameters (the separations and the prior's
    coefficients); a mixture's likelihood ratio is not exactly chi-square (the null lies on
    the boundary and the prior is not identified there), so the p-value is approximate
    (conservative in the planted checks of docs/aggregation.md). The class's separations are
    signed (``signed``; else those of the fit, >= 0: a lower bound of the gain), below.

    ``fit`` is a fit on ``lo``, ``hi`` with exact final terms (:func:`fit_posterior`'s
    default). ``null``: the no-class part (:func:`class_null_of`) when already made on these
    intervals (used when it :meth:`~ClassNull.matches` them; else made here). Returns
    ``statistic``, ``df``, ``p_value`` and ``gain`` (``l_fit - l_null``, nats)."""
    lo = np.asarray(lo, dtype=np.float64)
    hi = np.asarray(hi, dtype=np.float64)
    M, D = lo.shape
    w = np.ones(M) if weights is None else np.asarray(weights, dtype=np.float64)
    cal = np.zeros(D, bool) if fit.calibrated is None else np.asarray(fit.calibrated, bool)
    dependent = dependence and D > 1
    if null is None or not null.matches(lo, hi, w, cal, dependent) or (null.z is None and signed):
        null = class_null_of(lo, hi, w, cal, dependent=dependent, scores=signed)
    z, seen, l_null = null.z, null.seen, null.l_null
    if fit.spread > 0:  # the class has one more parameter: tau2
        gain = _spread_class_log_likelihood(fit, w, dependent, seen) - l_null
        return likelihood_ratio_test(gain, D + len(fit.beta) + 1)

    eta = fit.prior_log_odds
    v = fit.tempering

    def l_class(mu: np.ndarray, llr: np.ndarray, mean: np.ndarray, post: np.ndarray) -> float:
        """The full log-likelihood at (mu, the fit's prior, S profiled given ``post``)."""
        S, copula = np.eye(D), np.zeros(M)
        if dependent:
            wp = w * post
            S = _pairwise_correlation(mean - mu, wp, mean, w - wp, seen)
            copula = _seen_copula(mean, seen, S)
        log_odds = eta + gene_terms(llr, mean, mu, S, v).sum(axis=1)
        out = log_likelihood(log_odds, eta, llr, v, fit.rho, w, calibrated=fit.calibrated)
        return out + float(np.sum(w * copula))

    l_fit = l_class(fit.mu, fit.list_llr, fit.list_scores, fit.posterior)
    # The fit keeps every separation >= 0 (a list that ranks the relevant genes last is not
    # evidence for the ranking), but a reversed list is evidence of the class: its
    # anti-agreement with the others is what the no-class model's correlation explains and a
    # class with mu >= 0 cannot. The test's relevant-class model has signed separations (a
    # reversed list is the binormal model of its reversed positions, its latent scores
    # negated); its likelihood is at least that of the point where the lists at 0 whose
    # relevant genes sit below their mean take their separation on the reversed positions
    flipped = _reversed_point(fit, lo, hi, z, w, cal) if z is not None and signed else None
    if flipped is not None:
        l_fit = max(l_fit, l_class(*flipped))
    return likelihood_ratio_test(l_fit - l_null, D + len(fit.beta))


def _reversed_point(
    fit: PosteriorFit,
    lo: np.ndarray,
    hi: np.ndarray,
    z: np.ndarray,
    w: np.ndarray,
    cal: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """A point of the signed-separation model for :func:`relevant_class_test`: each
    uncalibrated list at separation 0 whose relevant genes' mean normal score ``z`` is below
    0 is read on its reversed positions ``1 - u``, its separation the fixed point of its EM
    update given the fit's posteriors. Returns (mu, llr, scores, posteriors) with those lists'
    terms (their scores negated back: the copula reads the lists' own latent scores), or None
    when no list is such."""
    wp = w * fit.posterior
    total = float(wp.sum())
    if total <= 0:
        return None
    down = (fit.mu <= 1e-9) & ~cal & ((wp @ z) / total < 0)
    if not down.any():
        return None
    cols = np.flatnonzero(down)
    rlo, rhi = 1.0 - hi[:, cols], 1.0 - lo[:, cols]
    m = np.clip(-(wp @ z[:, cols]) / total, 1e-3, MU_MAX)
    reversed_terms = ExactTerms(rlo, rhi)
    for _ in range(50):  # the separation's EM update with the posteriors fixed
        _, s = reversed_terms.terms(m, fit.rho)
        m_new = np.clip((wp @ s) / total, 0.0, MU_MAX)
        done = np.max(np.abs(m_new - m)) < 1e-4
        m = m_new
        if done:
            break
    llr_r, s = reversed_terms.terms(m, fit.rho)
    mu = np.asarray(fit.mu, dtype=np.float64).copy()
    llr = np.asarray(fit.list_llr, dtype=np.float64).copy()
    mean = np.asarray(fit.list_scores, dtype=np.float64).copy()
    mu[cols] = -m
    llr[:, cols] = llr_r
    mean[:, cols] = -s
    # the posteriors of that point (its evidence), from which the correlation is profiled
    post = expit(
        fit.prior_log_odds + gene_terms(llr, mean, mu, np.eye(len(mu)), fit.tempering).sum(axis=1)
    )
    return mu, llr, mean, post


def likelihood_ratio_test(gain: float, df: int) -> dict[str, float]:
    """``statistic = 2 gain`` (at least 0) referred to chi-square with ``df`` degrees of
    freedom: the keys of :func:`relevant_class_test` (``gain`` in nats)."""
    statistic = max(2.0 * gain, 0.0)
    return {
        "statistic": statistic,
        "df": float(df),
        "p_value": float(chdtrc(df, statistic)),
        "gain": float(gain),
    }


def separation_shares(fit: PosteriorFit, prior: Prior, data_cols: np.ndarray, names, rows=None):
    """Each list's share of the separation between relevant and background genes in the fused
    log-odds: the mean of its term over the relevant genes minus the mean over the background
    genes (posterior-weighted; data list: its evidence ``v t``, knowledge list: its columns of
    the prior), 0 when negative, normalised. For a full binormal list the separation is
    ``mu^2`` (the J-divergence of its evidence), so weights follow reliability; a list that
    ranks only its top genes separates less than its full version, but by what it tells about
    them, not by how many genes it leaves tied below."""
    L = len(names)
    p = fit.posterior
    p1 = p / max(float(p.sum()), 1e-300)
    p0 = (1.0 - p) / max(float((1.0 - p).sum()), 1e-300)
    sep = np.zeros(L)
    sep[data_cols] = p1 @ fit.list_terms - p0 @ fit.list_terms
    if prior.X.shape[1]:
        X = np.asarray(prior.X if rows is None else prior.X[rows], dtype=np.float64)
        contrib = (X - fit.center) / fit.scale * fit.beta[1:]
        index = {n: j for j, n in enumerate(names)}
        for k, group in enumerate(prior.groups):
            j = index.get(group)
            if j is not None:  # a list's columns together
                sep[j] += float(p1 @ contrib[:, k] - p0 @ contrib[:, k])
    sep = np.maximum(sep, 0.0)
    total = sep.sum()
    return sep / total if total > 0 else sep
