"""Rank conventions shared by rankers and aggregators (DESIGN.md, "Rank direction")."""

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
