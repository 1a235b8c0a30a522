"""Rank conventions shared by rankers, aggregators and reports (DESIGN.md, "Rank direction"),
and the Spearman correlation between ranked lists."""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata


def average_ranks(scores: np.ndarray, *, higher_is_better: bool) -> np.ndarray:
    """Ranks with 1 = best, ties averaged, NaN scores tied together at the bottom.

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
    s = np.asarray(scores, dtype=np.float64)
    ranks = np.empty(s.shape, dtype=np.float64)
    finite = ~np.isnan(s)
    n_ok = int(finite.sum())
    if n_ok:
        key = -s[finite] if higher_is_better else s[finite]
        ranks[finite] = rankdata(key, method="average")
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
