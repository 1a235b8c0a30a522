"""Rank conventions shared by rankers, aggregators and reports (DESIGN.md, "Rank direction"),
and the Spearman correlation between ranked lists."""

from __future__ import annotations

import numpy as np

#: Relative tolerance of :func:`kofs._compute.matrix.constant_genes`: a gene whose range is at
#: most this fraction of its largest magnitude is constant (float noise such as 1.0 vs
#: 1.0000000000000002).
CONSTANT_RTOL = 1e-12


def constant_range(hi: np.ndarray, lo: np.ndarray, *, rtol: float = CONSTANT_RTOL) -> np.ndarray:
    """Constant columns from their maxima ``hi`` and minima ``lo``: the range ``hi - lo`` is
    at most ``rtol`` times the largest magnitude (:func:`kofs._compute.matrix.constant_genes`)."""
    return (hi - lo) <= rtol * np.maximum(np.abs(hi), np.abs(lo))


#: Significant digits scores are written with (``%.10g``, :func:`kofs.io.output.format_float`).
PRINTED_DIGITS = 10


def printed(values: np.ndarray) -> np.ndarray:
    """``values`` rounded to the precision they are written with (``%.10g``).

    Ranks are computed on these, so two scores that print equal always share an averaged rank
    (and float noise in the 16th digit never decides a tie).
    """
    v = np.asarray(values, dtype=np.float64)
    fmt = f"%.{PRINTED_DIGITS}g"
    flat = [float(fmt % x) for x in v.ravel().tolist()]
    return np.asarray(flat, dtype=np.float64).reshape(v.shape)


def tie_keys(values: np.ndarray) -> np.ndarray:
    """Values ordering exactly like :func:`printed` ones, computed fast.

    Rounding to 10 significant digits is monotonic, and two values print equal only when they
    differ by less than 1e-9 relative and so are neighbours in sorted order: only values with
    such a close neighbour are rounded (formatting every value is ~20x slower).
    """
    v = np.array(values, dtype=np.float64).ravel()
    ok = np.flatnonzero(np.isfinite(v))
    if ok.size < 2:
        return v
    order = ok[np.argsort(v[ok], kind="stable")]
    sv = v[order]
    gap = np.abs(np.diff(sv))
    close = gap <= 1e-9 * np.maximum(np.abs(sv[1:]), np.abs(sv[:-1]))
    if close.any():
        cand = np.zeros(sv.size, dtype=bool)
        cand[:-1] |= close
        cand[1:] |= close
        idx = order[cand]
        v[idx] = printed(v[idx])
    return v


def tie_averaged_ranks(x: np.ndarray) -> np.ndarray:
    """1-based ranks of ``x`` (ascending, no NaN), ties given their average rank.

    The same numbers as ``scipy.stats.rankdata(x, method="average")`` (first position of the
    tie block plus half its length less one: exact in float64), without importing
    scipy.stats (about a second of every run's start-up).
    """
    x = np.asarray(x).ravel()
    order = np.argsort(x, kind="stable")
    y = x[order]
    starts = np.flatnonzero(np.r_[True, y[1:] != y[:-1]])
    counts = np.diff(np.r_[starts, y.size])
    ranks = np.empty(y.size, dtype=np.float64)
    ranks[order] = np.repeat(starts + 1 + (counts - 1) / 2.0, counts)
    return ranks


def average_ranks(scores: np.ndarray, *, higher_is_better: bool) -> np.ndarray:
    """Ranks with 1 = best, ties averaged, NaN scores tied together at the bottom.

    Scores are compared as printed (:func:`printed`): equal printed scores tie.

    Parameters
    ----------
    scores : ndarray of shape (m,)
        Native scores; ``+inf``/``-inf`` are legitimate extreme scores, NaN means "degenerate".
    higher_is_better : bool
        Direction of ``scores``.

    Returns
    -------
    ndarray of shape (m,), float64
    """
    s = tie_keys(scores).reshape(np.shape(scores))
    ranks = np.empty(s.shape, dtype=np.float64)
    finite = ~np.isnan(s)
    n_ok = int(finite.sum())
    if n_ok:
        key = -s[finite] if higher_is_better else s[finite]
        ranks[finite] = tie_averaged_ranks(key)
    n_bad = s.size - n_ok
    if n_bad:
        ranks[~finite] = n_ok + (n_bad + 1) / 2.0
    return ranks


def rank_correlation(R: np.ndarray) -> np.ndarray:
    """Spearman correlation between ranked lists.

    Parameters
    ----------
    R : ndarray of shape (m, L)
        Ranks (1 = best, ties averaged) of m genes in L lists.

    Returns
    -------
    ndarray of shape (L, L)
        Pearson correlation of the ranks (= Spearman's rho with averaged ties); NaN for a list
        whose ranks are all equal.
    """
    R = np.asarray(R, dtype=np.float64)
    Rc = R - R.mean(axis=0)
    norm = np.sqrt((Rc**2).sum(axis=0))
    with np.errstate(invalid="ignore", divide="ignore"):
        Z = Rc / norm
        C = Z.T @ Z
    C[:, norm == 0] = np.nan
    C[norm == 0, :] = np.nan
    return np.clip(C, -1.0, 1.0)
