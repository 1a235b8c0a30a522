"""Uncertainty of a posterior-relevance fit: half-sample refits, intervals, integrated posteriors
and the test of agreement between the data lists.

* **Half-sample refits** (a delete-d jackknife with d = M/2; Shao & Wu 1989): B random halves
  of the genes, each re-ranked within the half (the lists stay permutations, as the model
  needs: weighting genes of the full lists instead breaks that and can send the fit to a
  degenerate solution), refitted from the full fit. With d = M/2 the variance of the
  half-sample estimates around their mean estimates the variance of the full-data estimate
  (factor (M - d)/d = 1). Intervals are Wald intervals ``estimate +- t SE`` on the scale of
  each quantity (t: Student's 97.5 % quantile with B - 1 degrees of freedom, as the SE is
  estimated from B refits), kept inside its range (mu >= 0, weights in [0, 1]). On planted lists the
  intervals of the separations cover 95 % (bench/bench_fusion.py).
* **Posteriors integrated over the parameters' error.** Plug-in posteriors treat the fitted
  reliabilities as exact; when they are learned from few relevant genes (a top-k list, a weak
  list), an over-estimated reliability makes them over-confident. Each gene's posterior is
  averaged over draws of the parameters from their estimated sampling distribution
  ``N(theta, V)`` (V: the half-sample refits' covariance), an approximation of the posterior
  probability of relevance given the data alone, not given the fitted parameters
  (``P(Z_i = 1 | data) = E[P(Z_i = 1 | data, theta) | data]``). The reported posterior, local
  fdr and q-values (down the fitted ranking) are read from it.
* **Agreement test** (what the fusion can learn from): do the data lists agree with each other
  more than independent random rankings would? For each pair of lists: the correlation of their
  normal scores (``z = r sqrt(M - 1)``) and the overlap of their top 1 %, 5 % and 20 % (its
  exact hypergeometric tail probability, as a z); statistic ``T`` = the largest of these n = 4K z (K
  pairs), ``p_max = 1 - Phi(T)^n`` (Sidak; conservative, the tests being positively dependent) --
  no refits. The largest pair is a statistic because a few informative lists among many
  random ones agree in a few pairs only, and the top overlaps because relevant genes sit at the
  top (over all genes their agreement is diluted). Many lists that each agree a little (twenty
  studies' rankings, each weak) agree in no pair by much: the sum of the pairs' correlation z,
  ``S = sum z / sqrt(K)``, is N(0, 1) under independent rankings (each pair's correlation has
  variance ``1 / (M - 1)`` under permutation and two pairs' correlations are uncorrelated), and
  ``p_sum = 1 - Phi(S)``. The test's p-value is ``min(1, 2 min(p_max, p_sum))`` (Bonferroni over
  the two): twenty weak rankings (a 1 SD shift of 5 % of 1,000 genes) beside ten random ones
  gave ``p_max`` 0.10, so no gene was called (top-50 precision 0.94).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

import numpy as np
from scipy.special import expit, gammaln, log_ndtr, logsumexp, ndtr, ndtri, stdtrit

from kofs.aggregate.binormal import spread_log_lr
from kofs.aggregate.censored import INTERVAL_SHARE, interval_share
from kofs.aggregate.intervals import TieBlocks, code_intervals
from kofs.aggregate.posterior import (
    PosteriorFit,
    Prior,
    PriorDesign,
    _Problem,
    _SpreadData,
    _standardise,
    finish_fit,
    fit_posterior,
    gene_terms,
    solve_stacked,
    spread_fit,
)

__all__ = [
    "Resamples",
    "agreement_test",
    "Halves",
    "half_sample_fits",
    "prepare_halves",
    "integrated_lfdr",
    "tempered_fit",
]

#: A data list whose label weight is below this has (almost) no say in the tempered fit.
LITTLE_SAY = 0.05

#: Log-likelihood gain over the null model below which a tempered re-fit explains nothing.
NO_GAIN = 1e-6

#: Bins of the refits' sufficient statistics (coarser than the fit's: a refit only needs the
#: parameters, not per-gene scores).
RESAMPLE_BINS = 160
#: Convergence tolerance of a refit (the parameters' change).
REFIT_TOL = 1e-3
#: Steps of a refit at most: warm-started, a refit is then within ~1e-3 of its optimum, far
#: below the standard errors it serves.
REFIT_MAX_ITER = 40
#: Coded entries (rows x lists) of all the refits above which they are solved as two stacks on
#: two threads (10 lists x 50,000 genes, 20 refits of 10 x 25,000 entries: the whole fusion
#: 1.84 s with one stack, 1.46 s with two; two lists x 47,192 genes collapse to ~90,000
#: entries, where one stack is faster).
SPLIT_SIZE = 1 << 21
#: Two-sided 95 % normal quantile of the Wald intervals.
Z95 = 1.959963984540054


@dataclass(frozen=True)
class Resamples:
    """Half-sample refits of a fit (:func:`half_sample_fits`).

    ``mu`` (B, D) separations, ``beta`` (B, P + 1) prior coefficients (on the full fit's
    standardisation), ``weights`` (B, L) list weights; ``cov``: the covariance of (mu, beta)
    over the refits (the jackknife estimate of the full fit's covariance).
    """

    mu: np.ndarray
    beta: np.ndarray
    weights: np.ndarray

    @property
    def theta(self) -> np.ndarray:
        return np.column_stack([self.mu, self.beta])

    @property
    def cov(self) -> np.ndarray:
        t = self.theta
        if t.shape[0] < 2:
            return np.zeros((t.shape[1], t.shape[1]))
        return np.atleast_2d(np.cov(t.T))

    @property
    def se_mu(self) -> np.ndarray:
        return self.mu.std(axis=0, ddof=1) if self.mu.shape[0] > 1 else np.zeros(self.mu.shape[1])

    @property
    def se_beta(self) -> np.ndarray:
        b = self.beta
        return b.std(axis=0, ddof=1) if b.shape[0] > 1 else np.zeros(b.shape[1])

    @property
    def se_weights(self) -> np.ndarray:
        w = self.weights
        return w.std(axis=0, ddof=1) if w.shape[0] > 1 else np.zeros(w.shape[1])


def tempered_fit(
    base: PosteriorFit,
    lo: np.ndarray,
    hi: np.ndarray,
    prior: Prior,
    v: np.ndarray,
    *,
    max_prior: float,
    n_bins: int,
    tol: float = 1e-4,
    max_iter: int = 300,
    exact: bool = True,
    standardise: tuple[np.ndarray, np.ndarray] | None = None,
    refit: bool | None = None,
) -> PosteriorFit:
    """The fit with the label weights ``v`` tempering each data list's evidence, re-fitted
    from the untempered ``base`` (its list correlation kept): the relevant class is what the
    lists that predict the labels agree on, and knowledge is judged against that.

    A re-fit that gains nothing over the null model (log-likelihood <= :data:`NO_GAIN`: the
    tempered lists, e.g. one list alone, carry no information on the separations and the
    fraction of relevant genes) is not used: it drifts on a flat likelihood (to mu = 0, every
    gene tied, on the PBMC cells with Fisher and Laplacian keeping a say). The untempered
    fit's parameters are then kept and only its evidence is tempered. Keeping them in every
    case was tried and fails the other way: on B-ALL the labelled Fisher list, fitted at
    mu ~ 0 among the unsupervised lists it disagrees with, then carried no evidence and the
    knowledge prior made the ranking.

    ``refit``: re-fit (True) or keep the untempered parameters (False) without looking at the
    gain -- the half-sample refits follow the choice made on all the genes, so that their
    spread measures the sampling error of one model, not switches between the two."""
    v = np.clip(np.asarray(v, dtype=np.float64), 0.0, 1.0)
    if refit is False:
        return _tempered_evidence(base, v)
    fit = fit_posterior(
        lo,
        hi,
        prior,
        tempering=v,
        correlation=base.correlation,
        start=base,
        max_prior=max_prior,
        n_bins=n_bins,
        tol=tol,
        max_iter=max_iter,
        exact=exact,
        standardise=(base.center, base.scale) if standardise is None else standardise,
        likelihood=refit is None,
        calibrated=base.calibrated,
    )
    if refit or fit.log_likelihood > NO_GAIN:
        return replace(fit, refitted=True)
    return _tempered_evidence(base, v)


def _tempered_evidence(base: PosteriorFit, v: np.ndarray) -> PosteriorFit:
    """``base`` (untempered) with its lists' evidence tempered by ``v``."""
    terms = gene_terms(base.list_llr, base.list_scores, base.mu, base.correlation, v)
    # (the effect scale's spread is not tempered: a tempered list's evidence is linear)
    return replace(
        base,
        tempering=v,
        list_terms=terms,
        log_odds=base.prior_log_odds + terms.sum(axis=1),
        spread=0.0,
    )


@dataclass(frozen=True)
class Halves:
    """The data of the half-sample refits (:func:`prepare_halves`): each half's genes
    ``rows`` (increasing), standardised prior design ``X`` and binned problem."""

    rows: list[np.ndarray]
    X: list[np.ndarray]
    problems: list[_Problem]
    standardisation: tuple[np.ndarray, np.ndarray]
    calibrated: np.ndarray
    bins: int = RESAMPLE_BINS


def prepare_halves(
    data_ranks: np.ndarray,
    prior: Prior,
    *,
    masked: np.ndarray | None,
    n: int,
    seed: int,
    max_prior: float,
    n_bins: int,
    standardisation: tuple[np.ndarray, np.ndarray],
    calibrated: np.ndarray | None = None,
    blocks: TieBlocks | None = None,
    intervals: tuple[np.ndarray, np.ndarray] | None = None,
    threads: int = 2,
    reuse: tuple[Halves, np.ndarray] | None = None,
) -> Halves:
    """The ``n`` halves of the genes (drawn with ``seed``) and their binned data: each half
    re-ranked (its positions among its own genes; a ``calibrated`` list keeps its genes'
    p-values, ``intervals``: the fit's ``lo``, ``hi``), its prior design on the fit's
    ``standardisation``. Nothing here depends on the fit's parameters, so it can be made while
    the fit is solved. ``blocks``: ``TieBlocks.of(data_ranks, masked)`` when already made;
    ``threads``: the halves made on that many threads when they are large. ``reuse``: halves
    made as these are (the same genes, ``n``, ``seed`` and bins) of lists of which these are
    some, with the index there of each of these lists (-1: not there) -- a list's coding of a
    half depends on its own positions alone, so those lists' are taken from them (the fusion
    that leaves a list out after making the halves of all)."""
    R = np.asarray(data_ranks, dtype=np.float64)
    M, D = R.shape
    rng = np.random.default_rng(seed)
    X = np.asarray(prior.X, dtype=np.float64)
    halves = [np.sort(rng.choice(M, M // 2, replace=False)) for _ in range(n)]  # drawn first
    if blocks is None:  # each list sorted once: a half's positions follow
        blocks = TieBlocks.of(R, masked)
    bins = min(n_bins, RESAMPLE_BINS)
    cal = np.zeros(D, dtype=bool) if calibrated is None else np.asarray(calibrated, bool)
    if cal.any() and intervals is None:
        raise ValueError("the halves of a calibrated fit need its intervals")
    # sorting, binning and indexing run in NumPy without the GIL, and each half depends on
    # itself alone (pool.map keeps their order)
    pool_size = threads if threads > 1 and (M // 2) * D * n >= SPLIT_SIZE else 1

    # the lists showing genes as intervals (top-k lists) are the fit's (its censored
    # correlations: kofs.aggregate.posterior._Problem.intervals)
    interval_lists = None if intervals is None else interval_share(*intervals) >= INTERVAL_SHARE
    old, where = (None, None) if reuse is None else reuse
    if old is not None and (
        old.bins != bins
        or len(old.rows) != n
        or any(not np.array_equal(a, b) for a, b in zip(old.rows, halves, strict=True))
    ):
        old = None

    def prepare(k: int) -> tuple[np.ndarray, _Problem]:
        rows = halves[k]
        Xs, _, _ = _standardise(X[rows], None, standardisation)
        known = None
        if old is not None and where is not None:
            done = old.problems[k].coded
            known = [done.column(int(i)) if i >= 0 else None for i in where]
        coded = blocks.coded(
            rows,
            n_bins=bins,
            calibrated=cal,
            p_intervals=(intervals[0][rows], intervals[1][rows])
            if intervals is not None and cal.any()
            else None,
            known=known,
        )
        return Xs, _Problem(
            coded,
            Xs,
            np.ones(len(rows)),
            max_prior,
            collapse=True,
            calibrated=cal,
            interval_lists=interval_lists,
        )

    with ThreadPoolExecutor(max_workers=pool_size) as pool:
        made = list(pool.map(prepare, range(n)))
    return Halves(halves, [m[0] for m in made], [m[1] for m in made], standardisation, cal, bins)


def half_sample_fits(
    fit: PosteriorFit,
    halves: Halves,
    *,
    weights_of,
    threads: int = 2,
) -> Resamples:
    """The half-sample refits (module docstring) of ``halves`` (:func:`prepare_halves`, on
    ``fit``'s standardisation), warm-started from ``fit``, with its list correlation fixed,
    each as the fit was made: untempered, then (with label weights) the tempered refit of
    :func:`tempered_fit`; the refits are solved together
    (:func:`kofs.aggregate.posterior.solve_stacked`). ``weights_of(fit, rows)`` gives the list
    weights of a refit on the genes ``rows``; ``threads``: at most two stacks of refits on two
    threads (large problems)."""
    n = len(halves.rows)
    parts = halves.problems
    D = parts[0].D if parts else len(fit.mu)
    if not np.array_equal(halves.calibrated, fit.calibrated) or any(
        not np.array_equal(a, b)
        for a, b in zip(halves.standardisation, (fit.center, fit.scale), strict=True)
    ):
        raise ValueError("the halves were not prepared as the fit was made")
    standardisation = halves.standardisation
    M_half = parts[0].gene_weights.size if parts else 0
    pool_size = threads if threads > 1 and M_half * D * n >= SPLIT_SIZE else 1
    start = np.tile(np.concatenate([fit.mu, fit.beta]), (n, 1))

    def solve(problems: list[_Problem], theta: np.ndarray, **extra) -> list[PosteriorFit]:
        # one stack; two on two threads when the refits' rows are many (NumPy then works on
        # large arrays without the GIL; small stacks are bound by it): the refits are
        # independent, so the result does not depend on the split or the threads' timing
        size = sum(p.M for p in problems) * D
        stacks = 2 if threads > 1 and size >= SPLIT_SIZE and len(problems) > 1 else 1
        chunks = np.array_split(np.arange(len(problems)), stacks)
        with ThreadPoolExecutor(max_workers=stacks) as pool:
            done = list(
                pool.map(
                    lambda c: solve_stacked(
                        [problems[i] for i in c.tolist()], fit.correlation, theta[c],
                        tol=REFIT_TOL, max_iter=REFIT_MAX_ITER,
                    ),
                    chunks,
                )
            )  # fmt: skip
        theta = np.vstack([d[0] for d in done])
        steps = np.concatenate([d[1] for d in done])
        converged = np.concatenate([d[2] for d in done])

        def finish(k: int) -> PosteriorFit:
            Xs = halves.X[k]
            t = theta[k]
            return replace(
                finish_fit(
                    problems[k], None, None, Xs, (t[:D], t[D:], fit.correlation), standardisation,
                    exact=False, likelihood=False, iterations=int(steps[k]),
                    converged=bool(converged[k]),
                ),
                **extra,
            )  # fmt: skip

        with ThreadPoolExecutor(max_workers=pool_size) as pool:
            return list(pool.map(finish, range(len(problems))))

    if fit.spread > 0:
        # effects of varying size (kofs.aggregate.posterior): each half refitted at the fit's
        # tau2 and correlation, on its genes' exact normal scores (a calibrated list's
        # p-values are kept by every half)
        def spread_refit(k: int) -> PosteriorFit:
            rows = halves.rows[k]
            return spread_fit(
                fit, fit.list_scores[rows], halves.X[k], np.ones(len(rows)),
                parts[k].max_prior, dependence=parts[k].dependence, fixed_S=True,
                tau2=fit.spread, tol=REFIT_TOL, max_iter=REFIT_MAX_ITER,
                seen=None if fit.spread_seen is None else fit.spread_seen[rows],
            )  # fmt: skip

        with ThreadPoolExecutor(max_workers=pool_size) as pool:
            fits = list(pool.map(spread_refit, range(n)))
    else:
        fits = solve(parts, start)
    if np.any(fit.tempering < 1):  # as tempered_fit, with the choice made on all the genes
        if fit.refitted:
            theta = np.array([np.concatenate([f.mu, f.beta]) for f in fits])
            fits = solve([p.tempered(fit.tempering) for p in parts], theta, refitted=True)
        else:
            fits = [_tempered_evidence(f, fit.tempering) for f in fits]
    with ThreadPoolExecutor(max_workers=pool_size) as pool:
        weights = list(pool.map(lambda k: weights_of(fits[k], halves.rows[k]), range(n)))
    return Resamples(
        np.array([f.mu for f in fits]).reshape(n, D),
        np.array([f.beta for f in fits]).reshape(n, len(fit.beta)),
        np.array(weights).reshape(n, -1),
    )


def wald(
    estimate: np.ndarray, se: np.ndarray, low: float, high: float, *, df: int | None = None
) -> np.ndarray:
    """``estimate +- t se`` kept inside [low, high]: array (k, 2); ``t`` is the 97.5 %
    quantile of Student's t with ``df`` degrees of freedom (the standard error is estimated
    from df + 1 refits), or of the normal distribution."""
    est = np.asarray(estimate, dtype=np.float64)
    se = np.asarray(se, dtype=np.float64)
    z = Z95 if df is None else float(stdtrit(max(df, 1), 0.975))
    return np.column_stack([np.clip(est - z * se, low, high), np.clip(est + z * se, low, high)])


def integrated_lfdr(
    fit: PosteriorFit,
    lo: np.ndarray,
    hi: np.ndarray,
    prior: Prior,
    cov: np.ndarray,
    *,
    draws: int = 50,
    seed: int = 0,
    max_prior: float = 0.5,
    n_bins: int = 512,
    threads: int = 2,
) -> np.ndarray:
    """Each gene's local fdr (1 - its posterior probability of relevance) averaged over the
    parameters' estimated sampling distribution ``N(theta, V)`` (module docstring). The draws
    are evaluated on ``threads`` threads (all drawn first, summed in their order: the result
    does not depend on the threads)."""
    D = len(fit.mu)
    theta = np.concatenate([fit.mu, fit.beta])
    if draws <= 0 or not np.any(cov) or lo.shape[0] == 0:
        return 1.0 - fit.posterior
    X, _, _ = _standardise(np.asarray(prior.X, dtype=np.float64), None, (fit.center, fit.scale))
    rng = np.random.default_rng(seed)
    # draws of the parameters, with the covariance's null directions (fixed parts) kept fixed
    vals, vecs = np.linalg.eigh((cov + cov.T) / 2)
    root = vecs * np.sqrt(np.clip(vals, 0.0, None))
    thetas = [theta + root @ rng.standard_normal(len(theta)) for _ in range(draws)]
    if fit.spread > 0:
        # effects of varying size: the genes' exact normal scores (PosteriorFit.list_scores),
        # the evidence integrated over the effect scale at the fit's tau2 and correlation
        design = PriorDesign(X, np.ones(lo.shape[0]), max_prior)
        data = _SpreadData(fit.list_scores, design, False, fit.spread_seen)

        def spread_odds(t: np.ndarray) -> np.ndarray:
            mu = np.maximum(t[:D], 0.0)
            a, c = data.discriminant(mu, fit.correlation)
            return X @ design._cap(t[D:]) + spread_log_lr(a, c, fit.spread)

        return _mean_lfdr(spread_odds, thetas, lo.shape[0], threads)
    problem = _Problem(
        code_intervals(lo, hi, n_bins=n_bins, calibrated=fit.calibrated),
        X,
        np.ones(lo.shape[0]),
        max_prior,
        dependence=fit.correlation.shape[0] > 1,
        tempering=fit.tempering,
        calibrated=fit.calibrated,
    )

    # a rank list's evidence stays bounded by its histogram class (kofs.aggregate.envelope),
    # held at its fit
    env = fit.envelope
    coded = problem.coded
    cap = None if env is None else env.log_ratio(coded.lo, coded.hi, coded.list_of)

    def log_odds(t: np.ndarray) -> np.ndarray:
        mu = np.maximum(t[:D], 0.0)
        beta = problem._cap(t[D:])
        eta = X @ beta
        llr, _, _, mean = problem.terms(mu, problem.mean_prior(eta))
        return eta + problem.evidence(mu, fit.correlation, llr, mean, cap)

    return _mean_lfdr(log_odds, thetas, lo.shape[0], threads)


def _mean_lfdr(log_odds, thetas: list[np.ndarray], M: int, threads: int) -> np.ndarray:
    """The mean over the draws ``thetas`` of ``expit(-log_odds(theta))``, evaluated on
    ``threads`` threads (summed in the draws' order)."""
    lfdr = np.zeros(M)
    with ThreadPoolExecutor(max_workers=max(1, min(threads, len(thetas)))) as pool:
        for x in pool.map(log_odds, thetas):
            lfdr += expit(-x)  # exact to its last digits when small
    return lfdr / len(thetas)


def _log_hypergeom_sf(
    x: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    M: int,
    known: dict[tuple[int, int, int, int], float] | None = None,
) -> np.ndarray:
    """``log P(X >= x)`` for X the overlap of a random a-set and b-set among M (hypergeometric),
    summed exactly over the support (log-gamma terms; no scipy.stats). ``known``: tails
    computed before, by ``(x, a, b, M)`` (read and filled)."""
    out = np.zeros(len(x))
    for i, (xi, ai, bi) in enumerate(zip(x.astype(int), a.astype(int), b.astype(int), strict=True)):
        hi = min(ai, bi)
        if xi <= max(0, ai + bi - M):
            continue  # P = 1
        key = (xi, ai, bi, M)
        if known is not None and key in known:
            out[i] = known[key]
            continue
        j = np.arange(xi, hi + 1)
        terms = _log_comb(ai, j) + _log_comb(M - ai, bi - j) - _log_comb(M, np.array(bi))
        out[i] = float(logsumexp(terms)) if j.size else -np.inf
        if known is not None:
            known[key] = float(out[i])
    return np.minimum(out, 0.0)


def _log_comb(n, k) -> np.ndarray:
    n = np.asarray(n, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    return gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)


#: Top fractions at which the agreement test also counts the overlap of two lists' top genes.
AGREEMENT_CUTS = (0.01, 0.05, 0.2)


def agreement_test(
    lo: np.ndarray,
    hi: np.ndarray,
    tails: dict[tuple[int, int, int, int], float] | None = None,
) -> dict:
    """Do the data lists agree more than independent random rankings would? (module
    docstring). Returns ``statistic`` (the largest z), ``p_value``, ``pairs``, ``tests`` and
    the correlation matrix. ``tails``: the overlaps' tail probabilities computed by earlier
    tests (of some of these lists, in one fusion), read and filled (each is a function of the
    pair's overlap and top sizes alone)."""
    M, D = lo.shape
    K = D * (D - 1) // 2
    if D < 2 or M < 3:
        return {
            "statistic": 0.0,
            "sum_statistic": 0.0,
            "p_value": 1.0,
            "pairs": K,
            "tests": 0,
            "correlation": np.eye(D),
        }
    mid = 0.5 * (lo + hi)
    z = ndtri(np.clip(mid, 0.5 / M, 1 - 0.5 / M))
    z = (z - z.mean(axis=0)) / np.where(z.std(axis=0) > 0, z.std(axis=0), 1.0)
    r = (z.T @ z) / M
    iu = np.triu_indices(D, 1)
    stats = [r[iu] * np.sqrt(M - 1)]
    for c in AGREEMENT_CUTS:
        top = (mid <= c).astype(np.float64)  # genes a list puts in its top fraction c
        k = top.sum(axis=0)
        overlap = (top.T @ top)[iu]
        # the exact hypergeometric tail P(overlap >= observed), as a z
        log_p = _log_hypergeom_sf(overlap, k[iu[0]], k[iu[1]], M, tails)
        stats.append(-ndtri(np.clip(np.exp(log_p), 1e-300, 1.0)))
    zs = np.concatenate(stats)
    T = float(zs.max())
    n = len(zs)
    # P(max of n independent N(0, 1) >= T) = 1 - Phi(T)^n (conservative for the positively
    # dependent tests here), computed without cancellation
    p_max = -np.expm1(n * log_ndtr(T))
    # the pairs' correlations summed: each N(0, 1 / (M - 1)), pairwise uncorrelated
    S = float(stats[0].sum() / np.sqrt(K))
    p_sum = float(ndtr(-S))
    p = 2.0 * min(float(p_max), p_sum)
    return {
        "statistic": T,
        "sum_statistic": S,
        "p_value": float(min(max(p, 0.0), 1.0)),
        "pairs": K,
        "tests": n,
        "correlation": r,
    }
