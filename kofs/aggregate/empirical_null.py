"""Empirical nulls (Efron 2004, 2007): each list's null read from the middle of its own histogram.

The genes of one experiment are correlated, and a test's assumptions hold only roughly on real
data (outlying samples, unequal spreads), so its z-scores spread wider than N(0, 1) -- and
around a shifted centre -- even where nothing changed. Read against the theoretical null, that
spread is taken for changed genes: on random halves of one group of real samples (ALL, 42 NEG
B-ALL), the fusion of two DE tools' p-values called up to 727 genes where Benjamini-Hochberg
called none (``bench/bench_fusion.py --real-tables``). The empirical null is fitted to the
middle of the histogram, where changed genes are few, and is never taken narrower than the
theoretical one (narrower, the theoretical null is the conservative reading).

* :func:`signed_null`: signed z-scores (a table's two-sided p-values with its effects'
  directions): a normal ``N(delta, sigma^2)`` fitted by maximum likelihood to the z-scores
  within :data:`NULL_WINDOW` of their median (truncated to that window).
* :func:`folded_null`: p-values without directions: their folded z-scores ``|z| = Q^-1(p / 2)``
  (half-normal under the null, whatever the test's sidedness, since p is uniform) and a
  half-normal of scale ``sigma`` fitted to those within :data:`NULL_WINDOW`; a centre cannot be
  told from a fold. Exact for a two-sided test and for an F or chi-square statistic with one
  degree of freedom (a squared z); for a one-sided test whose statistic can go either way, a
  widened null adds p-values near 1 as well as near 0 and the fold cannot see it: such lists
  (a z-score read one-sided) are fitted in their z-scores (:func:`list_nulls`).
* :func:`recalibrated` reads each p-value against its list's null (``p' = 2 Q(Q^-1(p / 2) /
  sigma)`` for a fold; the theoretical null leaves ``p`` unchanged).

References
----------
Efron B (2004) Large-scale simultaneous hypothesis testing: the choice of a null hypothesis.
JASA 99:96-104.
Efron B (2007) Correlation and large-scale simultaneous significance testing. JASA 102:93-103.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize, minimize_scalar
from scipy.special import ndtr, ndtri

__all__ = ["folded_null", "list_nulls", "recalibrated", "signed_null"]

#: Half-width of the window (around each list's median signed z-score; from 0 for folded
#: z-scores) in which its empirical null is fitted (Efron's central matching reads the middle
#: of the histogram).
NULL_WINDOW = 1.5
#: Fewest genes with which a list's null is fitted (fewer: the theoretical null). The spread of
#: uniform p-values, whose null is the theoretical one, comes out at 1.28 or more in 10 % of
#: lists of 100 genes (up to 2.8 in 200), 1.10 of 1,000 (1.17), 1.03 of 5,000: the empirical
#: null is a large-scale estimate (Efron), read from thousands of genes.
MIN_GENES = 1000
#: A list whose z-scores all lie farther than GAP from 0 lacks its middle (a table filtered to
#: its significant genes; a whole table of 1,000 genes has one within 0.1 of 0 but with
#: probability 1e-35): its centre is not read, only its spread over the range it has.
GAP = 0.1
#: The interquartile range of N(0, 1).
IQR_NORMAL = 1.3489795003921634
#: Narrowest range of folded z-scores (below the window's end) from which a spread is read.
MIN_RANGE = 0.5


def signed_null(Z: np.ndarray, half_width: float = NULL_WINDOW) -> tuple[np.ndarray, np.ndarray]:
    """Each column's null centre and spread: ``N(delta, sigma^2)`` fitted by maximum likelihood
    to its z-scores within ``half_width`` of their median (NaN: no z-score), ``sigma >= 1``. A
    column without its middle (a table filtered to its significant genes: no z-score within
    :data:`GAP` of 0) has no centre to read: ``delta = 0`` and the spread of its folded
    z-scores over the range it has (:func:`folded_null`). A column whose window shows no peak
    (the fitted centre outside the window) reads the robust normal of all its z-scores: their
    median and interquartile range / 1.349 (``sigma >= 1``)."""
    D = Z.shape[1]
    delta, sigma = np.zeros(D), np.ones(D)
    for j in range(D):
        z = Z[~np.isnan(Z[:, j]), j]
        if z.size < MIN_GENES:
            continue
        if np.min(np.abs(z)) > GAP:
            sigma[j] = _half_normal_spread(np.abs(z), half_width)
            continue
        med = float(np.median(z))
        lo, hi = med - half_width, med + half_width
        w = z[(z >= lo) & (z <= hi)]

        def nll(t, w=w, lo=lo, hi=hi):
            d, ls = t
            sd = np.exp(ls)
            mass = ndtr((hi - d) / sd) - ndtr((lo - d) / sd)
            return float(
                np.sum(0.5 * ((w - d) / sd) ** 2) + w.size * (ls + np.log(max(mass, 1e-300)))
            )

        res = minimize(
            nll, np.array([med, 0.0]), method="Nelder-Mead", options={"xatol": 1e-5, "fatol": 1e-8}
        )
        if not lo <= res.x[0] <= hi:
            # no peak in the window (its histogram flat or rising to one edge): the fit runs off
            # to a centre far outside it and a huge spread (3,614 and 304 on an ALL B vs T
            # table). A middle that flat is wider than the window reads: the robust normal of
            # the whole column (its median, its interquartile range / 1.349). The theoretical
            # N(0, 1) read there took a study's thousands of small real differences (a random
            # split of real samples along the data's own biology: z-scores of SD 1.43, IQR
            # 1.66 x 1.349) for changed genes: 724 calls at FDP 0.88 where its BH calls 39
            q1, q3 = np.percentile(z, [25.0, 75.0])
            delta[j] = med
            sigma[j] = max(1.0, float(q3 - q1) / IQR_NORMAL)
            continue
        delta[j] = float(res.x[0])
        sigma[j] = max(1.0, float(np.exp(res.x[1])))
    return delta, sigma


def folded_null(P: np.ndarray, half_width: float = NULL_WINDOW) -> np.ndarray:
    """Each column's null spread ``sigma >= 1``: a half-normal fitted by maximum likelihood to
    its folded z-scores ``Q^-1(p / 2)`` within ``[least, half_width]`` (NaN: no p-value;
    ``least`` the smallest it has, 0 for a whole table: a table filtered to p <= t has none
    below ``Q^-1(t / 2)``, and reading the window from 0 took its missing middle for a null
    20 times wider)."""
    D = P.shape[1]
    sigma = np.ones(D)
    for j in range(D):
        p = P[~np.isnan(P[:, j]), j]
        if p.size < MIN_GENES:
            continue
        sigma[j] = _half_normal_spread(-ndtri(np.clip(p, 1e-300, 1.0) / 2.0), half_width)
    return sigma


def _half_normal_spread(z: np.ndarray, half_width: float) -> float:
    """ML scale (at least 1) of a half-normal truncated to ``[min z, half_width]`` fitted to the
    folded z-scores ``z`` in that range; 1 when fewer than :data:`MIN_GENES` are there or the
    range is narrower than :data:`MIN_RANGE`."""
    least = float(np.min(z))
    w = z[z <= half_width]
    if w.size < MIN_GENES or half_width - least < MIN_RANGE:
        return 1.0
    ss = float(np.sum(w**2))

    def nll(ls, n=w.size, ss=ss):
        sd = np.exp(ls)
        mass = ndtr(half_width / sd) - ndtr(least / sd)
        return 0.5 * ss / sd**2 + n * (ls + np.log(max(mass, 1e-300)))

    res = minimize_scalar(nll, bounds=(-3.0, 3.0), method="bounded", options={"xatol": 1e-6})
    return max(1.0, float(np.exp(res.x)))


def list_nulls(P: np.ndarray, upper_z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each list's empirical null (centre, spread) from its p-values ``P`` (M, L): a list whose
    p-values are the upper tails of z-scores (``upper_z``: a statistic whose null is N(0, 1)
    and which can go either way, read one-sided) is fitted in those z-scores
    (:func:`signed_null`); any other list (two-sided p-values, F or chi-square statistics, p-values
    of unknown sidedness) through its folded z-scores (:func:`folded_null`, centre 0)."""
    upper_z = np.asarray(upper_z, bool)
    center, spread = np.zeros(P.shape[1]), np.ones(P.shape[1])
    if (~upper_z).any():
        spread[~upper_z] = folded_null(P[:, ~upper_z])
    if upper_z.any():
        center[upper_z], spread[upper_z] = signed_null(-ndtri(np.clip(P[:, upper_z], 1e-300, 1.0)))
    return center, spread


def recalibrated(p: np.ndarray, center: float, spread: float, upper_z: bool) -> np.ndarray:
    """p-values read against a list's empirical null (:func:`list_nulls`): ``Q((z - center) /
    spread)`` of the upper-tail z-scores ``z = Q^-1(p)``, else ``2 Q(Q^-1(p / 2) / spread)`` (NaN
    stays NaN; the theoretical null returns ``p``)."""
    if spread == 1.0 and center == 0.0:
        return p
    q = np.clip(p, 0.0, 1.0)
    with np.errstate(invalid="ignore"):
        if upper_z:
            return ndtr((ndtri(q) + center) / spread)
        return np.minimum(2.0 * ndtr(ndtri(q / 2.0) / spread), 1.0)
