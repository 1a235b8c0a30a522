"""Data lists given the wrong way round (a ranking read ascending where it runs descending, a
p-value of the opposite one-sided test, a score of the opposite sign): found and left out of
the ``posterior`` fusion (:mod:`kofs.aggregate.relevance`).

The fusion's separations are >= 0, so its model cannot read a list as reversed evidence: a
reversed list that shares noise with the others leads a class of their shared top genes, and
one ranking given in both directions cancels itself. Two checks:

* :func:`reversed_copies`: pairs of lists whose positions correlate at ``-NEAR_COPY`` or below
  (one ranking given in both directions), of which :func:`oriented` keeps one;
* :func:`reversed_list`: the list that leads the fit, and every list without a say that depends
  on another (V-shaped dependence included), is read reversed, and is left out where that
  reading fits the lists better (the relevant-class test's full-likelihood gain over no class,
  or, where lists show intervals, the pairwise composite likelihood).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

import numpy as np

from kofs.aggregate.binormal import POINT_WIDTH
from kofs.aggregate.censored import INTERVAL_SHARE, interval_share
from kofs.aggregate.diagnostics import DOMINANT_WEIGHT
from kofs.aggregate.posterior import (
    MU_START,
    NEAR_COPY,
    NO_SEPARATION,
    P_RANGE,
    ClassNull,
    PosteriorFit,
    Prior,
    class_null_of,
    composite_log_likelihood,
    fit_posterior,
    relevant_class_test,
    separation_shares,
    with_exact_terms,
)

__all__ = ["oriented", "readable_reversed", "reversed_copies", "reversed_list"]

#: Two lists whose positions, over at least this many genes that both place at points,
#: correlate at ``-NEAR_COPY`` or below are one ranking given in both directions.
REVERSED_MIN = 20


def reversed_copies(lo: np.ndarray, hi: np.ndarray) -> list[tuple[int, int]]:
    """Pairs of lists ``(a, b)``, ``a < b``, each list in one pair at most, of which one ranks
    the genes it shares with the other in the opposite order (positions correlated at
    ``-NEAR_COPY`` or below over at least :data:`REVERSED_MIN` genes both place at points):
    one ranking given in both directions. The model's separations are >= 0, so it cannot
    read a ranking and its reverse at once: the one given the wrong way round became the
    relevant class's leader (bench/bench_fusion_check.py S1-S3: ~2,400 calls at FDP 1.00
    beside top-k lists), or cancelled the other through their correlation of -1 (fused
    top-100 precision 0.01 against 0.42 for the best list); :func:`oriented` keeps one
    (both stay where neither can be read reversed, :func:`readable_reversed`)."""
    D = lo.shape[1]
    if D < 2:
        return []
    r = _score_correlations(lo, hi)
    out: list[tuple[int, int]] = []
    used: set[int] = set()
    for a in range(D):
        for b in range(a + 1, D):
            if a not in used and b not in used and r[a, b] <= -NEAR_COPY:
                out.append((a, b))
                used.update((a, b))
    return out


#: A list without a say whose positions depend on another list's this many standard errors
#: beyond independence (:func:`_dependence`) is tested for being reversed
#: (:func:`reversed_list`).
DEPENDENT_Z = 10.0
#: Steps of the fit of a list's reversed reading (:func:`_reversed_gain`) ...
FLIP_STEPS = 15
#: ... which is made only for a list that places at least this share of the genes at points.
FULL = 0.95


def readable_reversed(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The lists that can be read reversed (D,): those placing at least :data:`FULL` of the
    genes at points. A top-k list's reverse would put its unranked genes first, and where the
    genes are the lists' union they are the other lists' genes: a list of 600 of 650 genes
    beside two random gene sets of 30, read reversed, gained 21 nats on pure noise."""
    return np.asarray(np.mean((hi - lo) <= POINT_WIDTH, axis=0) >= FULL)


def oriented(
    lo: np.ndarray,
    hi: np.ndarray,
    prior: Prior,
    calibrated: np.ndarray,
    col: int,
    **fit_options: Any,
) -> bool:
    """Whether list ``col`` fits the lists at least as well as given as reversed (``u -> 1 -
    u``; a p-value ``1 - p``): the relevant-class test's full-likelihood gains over no class
    of the two fits (the same data, the list read either way: two modes of the model with
    signed separations)."""
    cal = np.asarray(calibrated, bool)
    base = fit_posterior(lo, hi, prior, calibrated=cal, **fit_options)
    g0 = _class_test(base, lo, hi, **fit_options)["gain"]
    return float(g0) >= _reversed_gain(lo, hi, prior, cal, col, base, **fit_options)


def _class_test(
    fit: PosteriorFit,
    lo: np.ndarray,
    hi: np.ndarray,
    null: ClassNull | None = None,
    **fit_options: Any,
) -> dict:
    """The relevant-class test of ``fit`` (made with ``fit_options``) on ``lo``, ``hi``
    (``null``: its no-class part when already made; else the fit's own, when it has one)."""
    if fit.relevant_class:
        return fit.relevant_class
    return relevant_class_test(
        fit,
        lo,
        hi,
        dependence=bool(fit_options.get("dependence", True)),
        null=fit.class_null if null is None else null,
    )


def _class_null(
    fit: PosteriorFit, lo: np.ndarray, hi: np.ndarray, cal: np.ndarray, **fit_options: Any
) -> ClassNull:
    """The no-class part of the relevant-class tests on ``lo``, ``hi`` (the fit's own when it
    has one: :func:`kofs.aggregate.posterior.fit_posterior` made it choosing among its
    starts)."""
    M, D = lo.shape
    dependent = bool(fit_options.get("dependence", True)) and D > 1
    w = np.ones(M)
    if fit.class_null is not None and fit.class_null.matches(lo, hi, w, cal, dependent):
        return fit.class_null
    return class_null_of(lo, hi, w, cal, dependent=dependent)


def _reversed_gain(
    lo: np.ndarray,
    hi: np.ndarray,
    prior: Prior,
    cal: np.ndarray,
    col: int,
    base: PosteriorFit,
    null: ClassNull | None = None,
    composite: bool = False,
    base_cl: float = 0.0,
    **fit_options: Any,
) -> float:
    """The relevant-class test's gain (nats over no class) of the lists with list ``col``
    read reversed, fitted from ``base`` (the fit as given) with the list at the start's
    separation of every list, at most :data:`FLIP_STEPS` steps: a lower bound of the reversed
    reading's gain, so a list is reversed only where even that is higher than the gain as
    given (the reversed fit of a list that leads a good fit wanders for hundreds of steps from
    the fit's own starts: 7 s at 10 lists x 50,000 genes). ``null``: the test's no-class part
    of the lists as given (:func:`_class_null`), whose reading with a rank list reversed is
    the same model (:meth:`kofs.aggregate.posterior.ClassNull.reversed`). With
    ``composite`` (two or more lists showing intervals): the reversed reading fitted from its
    own starts, and its pairwise composite log-likelihood
    (:func:`kofs.aggregate.posterior.composite_log_likelihood`; the no-class part, the same for
    both readings, is the caller's), or -inf where the list's say read reversed (what it adds
    over that fit with it at separation 0) is below its say as given (in ``base``, of composite
    log-likelihood ``base_cl``)."""
    flo, fhi = lo.copy(), hi.copy()
    flo[:, col], fhi[:, col] = 1.0 - hi[:, col], 1.0 - lo[:, col]
    if cal[col]:  # p-values: the opposite one-sided test's (1 - p), within the model's range
        flo[:, col] = fhi[:, col] = np.clip(flo[:, col], *P_RANGE)
    mu0 = np.asarray(base.mu, dtype=np.float64).copy()
    mu0[col] = MU_START
    # compared by the composite likelihood, the reversed reading is fitted from its own starts
    # to its mode (a reversed full list beside top-k lists: 15 steps from the fit as given
    # stop 38 nats below that fit, the mode 350 above)
    other = fit_posterior(
        flo,
        fhi,
        prior,
        calibrated=cal,
        start=None if composite else replace(base, mu=mu0),
        max_iter=1000 if composite else FLIP_STEPS,
        exact=False,  # the exact terms only when the test needs them, below
        likelihood=False,  # (the test computes its own)
        **fit_options,
    )
    if other.mu[col] <= NO_SEPARATION:
        # read reversed, the list has no say: that reading is the fit as given with the list at
        # separation 0 (a point of the model as given), so it shows nothing against the list's
        # direction (a gain above the fit's then only says that fit stopped short of its mode)
        return -np.inf
    if composite:
        # the list's say either way: what it adds to its reading's fit over the same fit with
        # it at separation 0 (a point of both readings). Near-tied modes of the lists differ
        # by a few nats whichever way a list runs (graded full rankings beside top-k lists
        # sharing noise: the best list read reversed landed in the top-k lists' mode, its say
        # there 0.04 nats against 22.9 as given, and the mode 4 nats higher); a list is read
        # reversed only where its reversed say is the larger (a reversed full list beside
        # top-k lists: 441 against 31)
        cl_rev = composite_log_likelihood(other, flo, fhi)
        say = [
            cl
            - composite_log_likelihood(
                replace(f, mu=np.where(np.arange(len(f.mu)) == col, 0.0, f.mu)), lo, hi
            )
            for f, cl in ((other, cl_rev), (base, base_cl))
        ]
        return cl_rev if say[0] > say[1] else -np.inf
    other = with_exact_terms(other, flo, fhi)
    if null is not None and not cal[col]:  # (a p-value's reverse is clipped: made anew)
        null = null.reversed(col, flo, fhi)
    return float(_class_test(other, flo, fhi, null, **fit_options)["gain"])


#: The least variance of positions, relative to their sum of squares, whose correlation
#: :func:`_score_correlations` measures (float64 one-pass sums lose ~1e-16 of it).
_RELATIVE_SPREAD = 1e-10


def _score_correlations(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The correlation (D, D) of every two lists' positions over the genes both place at
    points (Spearman's, for full lists; NaN over fewer than :data:`REVERSED_MIN` genes). Positions, not normal scores: a one-sided test's normal scores
    against a two-sided test's of the same samples are V-shaped, their correlation ~0
    whichever way the one-sided test runs, dominated by the tails."""
    seen = ((hi - lo) <= POINT_WIDTH).astype(np.float64)
    z = np.where(seen > 0, 0.5 - 0.5 * (lo + hi), 0.0)
    n = seen.T @ seen
    sx = z.T @ seen  # sx[a, b]: the sum of a's scores over the genes both see
    sxx = (z * z).T @ seen
    sxy = z.T @ z
    var_a, var_b = n * sxx - sx**2, n * sxx.T - sx.T**2
    # positions that barely vary over the shared genes (a table cut to p-values < 1e-9: all
    # at ~0) leave their variance below the rounding of these one-pass sums, even negative:
    # their correlation is not measured (it read as -1, a list and its own top as reversed)
    spread = (var_a > _RELATIVE_SPREAD * n * sxx) & (var_b > _RELATIVE_SPREAD * n * sxx.T)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = (n * sxy - sx * sx.T) / np.sqrt(var_a * var_b)
    return np.where((n >= REVERSED_MIN) & spread & np.isfinite(r), r, np.nan)


def reversed_list(
    lo: np.ndarray,
    hi: np.ndarray,
    prior: Prior,
    calibrated: np.ndarray,
    **fit_options: Any,
) -> tuple[tuple[int, tuple[float, float]] | None, PosteriorFit, dict[str, float] | None]:
    """The data list given the wrong way round, if any -- ``(its column, (the relevant-class
    test's gain as given, with it reversed))``, else None --, the fit of the lists as given and
    its relevant-class test when one was made (None: none).

    A list ranked the wrong way round that shares noise with the others (the opposite
    one-sided test of the same samples as two-sided tests: its top genes are theirs where
    the statistic is low) makes with them a class of those genes, and leads it; the model's
    separations are >= 0, so it cannot read the list as reversed evidence (an independent
    check, bench/bench_fusion_check.py S4 and S6: FDP 0.97-1.00 with ~300 calls, the
    reversed list 56-84 % of the weight, in every seed). Their dependence is V-shaped (the
    two-sided lists' top holds both ends of the one-sided list), so no correlation between
    the lists shows it (~-0.01 at 1 % relevant genes). The list that carries at least
    :data:`DOMINANT_WEIGHT` of the fit's weight is therefore tested, and so is every list
    without a say that depends on another (:func:`_dependence`, :data:`DEPENDENT_Z`), of
    those that can be read reversed (:func:`readable_reversed`): it is reversed when the fit
    with its positions reversed (``u -> 1 - u``, a p-value ``1 - p``: the same data, the list
    read the other way) has the higher full likelihood
    (:func:`kofs.aggregate.posterior.relevant_class_test`'s gain over no class: the two are
    the same model, the signed one, at two of its modes)."""
    D = lo.shape[1]
    cal = np.asarray(calibrated, bool)
    base = fit_posterior(lo, hi, prior, calibrated=cal, **fit_options)
    if bool(np.all(base.mu <= NO_SEPARATION)):
        return None, base, None
    weights = separation_shares(
        base, Prior.empty(lo.shape[0]), np.arange(D), [str(k) for k in range(D)]
    )
    full = readable_reversed(lo, hi)
    suspects = {int(np.argmax(weights))} if weights.max() >= DOMINANT_WEIGHT else set()
    # and the lists without a say that depend on another list, linearly or not (a random
    # list depends on none; the opposite one-sided test beside two-sided ones of the same
    # samples does, V-shaped, and may bend the fit without leading it)
    suspects |= set(
        np.flatnonzero((base.mu <= NO_SEPARATION) & (_dependence(lo, hi) >= DEPENDENT_Z)).tolist()
    )
    cols = sorted(suspects & set(np.flatnonzero(full).tolist()))
    if not cols:
        return None, base, None
    # the reversed readings and the test of the fit as given are independent of each other:
    # two threads (NumPy's large array operations run without the GIL). The tests share
    # their no-class part
    null = _class_null(base, lo, hi, cal, **fit_options)
    # where lists show intervals the two readings are compared by the pairwise composite
    # likelihood (the fit's own reads an interval through its list alone, and top-k lists
    # that share noise then make a class of their overlap that outscores a real one)
    composite = bool(fit_options.get("dependence", True)) and bool(
        np.sum((interval_share(lo, hi) >= INTERVAL_SHARE) & ~cal) >= 2
    )
    base_cl = composite_log_likelihood(base, lo, hi) if composite else 0.0
    with ThreadPoolExecutor(max_workers=2) as pool:
        reversed_gains = [
            pool.submit(
                _reversed_gain, lo, hi, prior, cal, j, base, null, composite, base_cl, **fit_options
            )
            for j in cols
        ]
        test = _class_test(base, lo, hi, null, **fit_options)
        gains = [g.result() for g in reversed_gains]
    g0 = float(test["gain"])
    if composite:  # the no-class part: each pair's correlation alone, whichever way a list runs
        null_cl = composite_log_likelihood(None, lo, hi)
        g0 = base_cl - null_cl
        gains = [g - null_cl for g in gains]
    best: tuple[int, tuple[float, float]] | None = None
    for j, g1 in zip(cols, gains, strict=True):
        if g1 > g0 and (best is None or g1 > best[1][1]):
            best = (j, (g0, g1))
    return best, replace(base, class_null=null), test


def _dependence(lo: np.ndarray, hi: np.ndarray, bins: int = 10) -> np.ndarray:
    """Each list's largest dependence on another list (D,): the chi-square statistic of
    independence of their positions cut into ``bins`` x ``bins`` equal cells (the midpoint of
    a wide interval), as a z-score ``(X2 - df) / sqrt(2 df)`` (~N(0, 1) for independent
    lists); it sees dependence that no correlation shows (V-shaped, U-shaped)."""
    M, D = lo.shape
    if D < 2:
        return np.full(D, -np.inf)
    cell = np.minimum((0.5 * (lo + hi) * bins).astype(np.int64), bins - 1)
    onehot = np.zeros((M, D * bins), dtype=np.float32)
    onehot[np.arange(M)[:, None], cell + bins * np.arange(D)[None, :]] = 1.0
    counts = (onehot.T @ onehot).astype(np.float64).reshape(D, bins, D, bins)
    margins = counts[np.arange(D), :, np.arange(D), :].diagonal(axis1=1, axis2=2)  # (D, bins)
    expected = margins[:, :, None, None] * margins[None, None, :, :] / M  # (D, bins, D, bins)
    with np.errstate(divide="ignore", invalid="ignore"):
        x2 = np.where(expected > 0, (counts - expected) ** 2 / expected, 0.0).sum(axis=(1, 3))
    df = (bins - 1) ** 2
    z = (x2 - df) / np.sqrt(2.0 * df)
    np.fill_diagonal(z, -np.inf)
    return z.max(axis=1)
