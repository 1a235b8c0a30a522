"""The relevant-class test's null for top-k lists, by simulation.

The relevant-class test (:func:`kofs.aggregate.posterior.relevant_class_test`) compares the
fitted class with the lists' correlation alone through the lists' Gaussian copula on the
positions that are points; a gene below a top-k list is an interval, whose dependence on the
other lists would need multivariate normal probabilities per gene, so the test leaves top-k
lists out of its copula and its null treats them as independent. Top-k lists that share noise
(several tools' top genes from one data set) then overlap beyond that null, and the class read
from the overlap passed the test by hundreds of nats (docs/aggregation.md, "Scenarios outside
the benchmark").

Here the test is made against the null it stands for: background genes with the lists'
latent correlation and no relevant class. Its statistic is the lists' pairwise composite
likelihood ratio of the fitted class against no class, each pair's correlation profiled out in
both (:func:`kofs.aggregate.posterior.composite_log_likelihood`: a gene below two top-k lists
counts by the probability of their rectangle under the pair's correlation), so the overlap
that correlation alone explains earns the class nothing. Each list's latent correlation with
the others is estimated from what the lists show -- full rankings by their normal scores'
correlation, a top-k list against a full ranking by the mean normal score of the other list's
genes in its top (``E[z | Z_j > c] = r phi(c) / P(Z_j > c)``), two top-k lists by their
overlap (the tetrachoric correlation: ``P(Z_j > c_j, Z_l > c_l; r)`` equal to the share of
genes in both tops); then :data:`SIMULATIONS` data sets of latent scores with that
correlation take each list's observations in the order of their latent scores (the same
top-k size, tie blocks and gene sets), each fitted as the data were, and the observed
statistic is referred to the predictive distribution of one more simulated statistic (a
normal sample's mean and SD from the simulations: Student's t with their number less one
degrees of freedom; the fit maximises the full likelihood, not the composite one, so the
statistic can be negative and is not chi-square; the reference is an approximation in the far
tail). The correlation includes whatever the relevant genes add, so the null is
conservative where lists agree for real.

The simulations are made in two stages (sequential Monte Carlo testing; Besag & Clifford
1991): the second half only when the first leaves the answer open -- its p-value between
:data:`SETTLED_P` and 1/2 (above 1/2 the no-signal probability it feeds is already its
largest). Each simulation
has its own random stream, so a test that goes on to the second stage is the one-stage test,
bit for bit.

Until the thirty-fourth session the statistic was the class's full-likelihood gain over
independent lists (:func:`kofs.aggregate.posterior.relevant_class_test`, which leaves top-k
lists out of its copula): simulated lists correlated as the data's gave gains as large as a
real class's (two informative top-300 lists beside random ones: null mean 42-73 against the
data's 25-60), and top-k lists that agree for real were seldom called (docs/aggregation.md,
"The simulated null's statistic").
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
from scipy.integrate import quad
from scipy.optimize import brentq
from scipy.special import ndtr, ndtri, stdtr

from kofs.aggregate.binormal import copula_points
from kofs.aggregate.posterior import (
    PosteriorFit,
    Prior,
    _corr_matrix,
    _offdiag,
    composite_log_likelihood,
    fit_posteriors,
)

__all__ = [
    "SIMULATIONS",
    "composite_statistic",
    "latent_correlation",
    "simulated_class_test",
    "top_k_lists",
]

#: Data sets simulated under the null (each a fit and a test as the data's).
SIMULATIONS = 20
#: The first stage of the simulations holds half of them, at least this many
#: (:func:`_settled`).
MIN_STAGE = 8
#: After the first stage the test stops when its p-value is below this (the no-signal
#: probability it feeds, ``-e p log p``, at most 0.0025: q-values move by a quarter of a
#: percent at most) or above 1/2 (the no-signal probability already its largest, 1/2).
SETTLED_P = 1e-4
#: Latent correlations are kept inside this (a correlation of 1 has no density).
R_MAX = 0.99
#: Simulated data sets fitted together (:func:`kofs.aggregate.posterior.fit_posteriors`) hold
#: at most this many observations (genes x lists) in all: ~100 MB of stacked arrays.
STACK_CELLS = 1_000_000


def top_k_lists(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Bool (D,): the lists whose observations are points to the copula
    (:func:`kofs.aggregate.binormal.copula_points`) for fewer than half of the genes (the
    relevant-class test leaves them out of its copula). A full ranking with tie blocks is not
    one: its blocks are points to the copula unless the latent score spreads inside them more
    than in a point at an end of a list."""
    return copula_points(lo, hi).mean(axis=0) < 0.5


def _upper_orthant(h: float, k: float, r: float) -> float:
    """``P(Z1 > h, Z2 > k)`` for standard normals of correlation r: ``int_h^inf phi(x)
    P(Z2 > k | Z1 = x) dx``, by adaptive quadrature."""
    s = np.sqrt(1.0 - r * r)

    def f(x: float) -> float:
        return float(np.exp(-0.5 * x * x) / np.sqrt(2.0 * np.pi) * ndtr((r * x - k) / s))

    value, _ = quad(f, h, np.inf, epsabs=1e-12, epsrel=1e-10, limit=200)
    return float(value)


def _tetrachoric(both: float, h: float, k: float) -> float:
    """The correlation r with ``P(Z1 > h, Z2 > k; r) = both``."""

    def f(r: float) -> float:
        return _upper_orthant(h, k, r) - both

    lo, hi = -R_MAX, R_MAX
    if f(lo) >= 0:
        return lo
    if f(hi) <= 0:
        return hi
    return float(brentq(f, lo, hi, xtol=1e-6))


def latent_correlation(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The lists' latent correlation (D, D) over all genes (module docstring). A top-k list's
    genes are those listed (their interval above its block at the bottom: a tie block or gene
    set counts as listed as points do)."""
    lo = np.asarray(lo, dtype=np.float64)
    hi = np.asarray(hi, dtype=np.float64)
    M, D = lo.shape
    z = -ndtri(np.clip(0.5 * (lo + hi), 0.5 / M, 1 - 0.5 / M))
    listed = hi < 1.0
    partial = top_k_lists(lo, hi)
    share = np.clip(listed.mean(axis=0), 1.0 / M, 1.0 - 1.0 / M)
    cut = -ndtri(share)  # Z > cut: listed
    dens = np.exp(-0.5 * cut * cut) / np.sqrt(2.0 * np.pi)
    iu = _offdiag(D)
    r = np.zeros(len(iu[0]))
    for n, (j, k) in enumerate(zip(iu[0].tolist(), iu[1].tolist(), strict=True)):
        if partial[j] and partial[k]:
            r[n] = _tetrachoric(float(np.mean(listed[:, j] & listed[:, k])), cut[j], cut[k])
        elif partial[j] or partial[k]:
            p, f = (j, k) if partial[j] else (k, j)
            if listed[:, p].any():
                r[n] = float(np.mean(z[listed[:, p], f])) * share[p] / dens[p]
        else:
            r[n] = float(np.corrcoef(z[:, j], z[:, k])[0, 1])
    return _corr_matrix(np.clip(np.nan_to_num(r), -R_MAX, R_MAX), D)


def _reference_p(t: float, stats: np.ndarray) -> float:
    """P(a new simulated statistic >= t) from ``stats``: the predictive distribution of one more
    draw of a normal sample's values, ``mean + sd sqrt(1 + 1/n) T_{n-1}`` (its mean and SD
    estimated from n draws: the normal with them plugged in was too sure -- three lists of one
    data set, 95 % of each tied at zero, no signal: p 2e-4 where the statistic was 3.5 SDs out).
    With no spread: the share of the simulations at or above t."""
    n = len(stats)
    sd = float(stats.std(ddof=1)) if n > 1 else 0.0
    if not sd > 0:
        return float((1 + np.sum(stats >= t)) / (n + 1))
    return float(stdtr(n - 1, -(t - float(stats.mean())) / (sd * np.sqrt(1.0 + 1.0 / n))))


def _settled(t: float, stats: np.ndarray) -> bool:
    """Whether the first stage of simulations already settles the test of statistic ``t``
    (:data:`SETTLED_P`)."""
    p = _reference_p(t, stats)
    return bool(p < SETTLED_P or p > 0.5)


def composite_statistic(fit: PosteriorFit, lo: np.ndarray, hi: np.ndarray) -> float:
    """``2 (CL(fit) - CL(no class))``: the lists' pairwise composite likelihood ratio of the
    relevant class of ``fit`` (made on ``lo``, ``hi``) against none, every pair's correlation
    profiled out in both (:func:`kofs.aggregate.posterior.composite_log_likelihood`)."""
    return 2.0 * (composite_log_likelihood(fit, lo, hi) - composite_log_likelihood(None, lo, hi))


def simulated_class_test(
    observed: dict[str, float],
    fit: PosteriorFit,
    lo: np.ndarray,
    hi: np.ndarray,
    prior: Prior,
    *,
    fit_options: dict,
    n: int = SIMULATIONS,
    seed: int = 0,
) -> dict[str, float]:
    """The relevant-class test of ``fit`` (made on ``lo``, ``hi``; ``observed``: its
    :func:`~kofs.aggregate.posterior.relevant_class_test`) against the simulated null of the
    module docstring: the keys of ``observed`` (``gain`` and ``df``, the full-likelihood
    test's, kept for the reader) with ``statistic`` the composite likelihood ratio
    (:func:`composite_statistic`), ``p_value`` its tail under the simulations
    (:func:`_reference_p`), and ``simulations``, ``null_mean`` and ``null_sd`` (of the
    statistic under the null).
    ``fit_options``: the data's :func:`fit_posterior` options."""
    lo = np.asarray(lo, dtype=np.float64)
    hi = np.asarray(hi, dtype=np.float64)
    M, D = lo.shape
    # each list's observations in their order (ties, the block below a top-k list): the
    # simulated genes take them in the order of their latent scores
    order = np.argsort(lo, axis=0, kind="stable")
    cols = np.arange(D)
    slo, shi = lo[order, cols], hi[order, cols]
    root = np.linalg.cholesky(latent_correlation(lo, hi))

    def statistics(sims: range) -> list[float]:
        """The statistic of the simulated data sets ``sims`` (each its own random stream),
        their fits solved together (each is what it is alone)."""
        data = []
        for b in sims:
            Z = np.random.default_rng([seed, b]).standard_normal((M, D)) @ root.T
            at = np.argsort(-Z, axis=0)
            blo, bhi = np.empty((M, D)), np.empty((M, D))
            blo[at, cols] = slo
            bhi[at, cols] = shi
            data.append((blo, bhi))
        fits: list[PosteriorFit] = fit_posteriors(data, prior, **fit_options)
        return [composite_statistic(f, blo, bhi) for f, (blo, bhi) in zip(fits, data, strict=True)]

    # two threads, each fitting its stacks of simulations (NumPy's large array operations
    # run without the GIL): 17 s -> 10 s for twenty fits of 10,000 genes x 5 top-k lists.
    # In two stages: the second half is simulated only when the first leaves the answer open
    # (module docstring)
    def launch(pool: ThreadPoolExecutor, sims: range) -> list:
        chunk = max(1, min(-(-len(sims) // 2), STACK_CELLS // (M * D)))
        return [
            pool.submit(statistics, range(a, min(sims.stop, a + chunk)))
            for a in range(sims.start, sims.stop, chunk)
        ]

    first = n // 2 if n >= 2 * MIN_STAGE else n
    with ThreadPoolExecutor(max_workers=2) as pool:
        running = launch(pool, range(first))
        t = composite_statistic(fit, lo, hi)
        values = [g for f in running for g in f.result()]
        if first < n and not _settled(t, np.array(values)):
            values += [g for f in launch(pool, range(first, n)) for g in f.result()]
    stats = np.array(values)
    mean, sd = float(stats.mean()), float(stats.std(ddof=1))
    p = _reference_p(t, stats)
    return {
        **observed,
        "statistic": t,
        "p_value": p,
        "simulations": float(len(stats)),
        "null_mean": mean,
        "null_sd": sd,
    }
