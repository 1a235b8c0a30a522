"""Rankings of one strong list beside weak and random ones, as scenario S8 of
``bench/bench_fusion_check.py`` draws them (the same generator and seeds)."""

from __future__ import annotations

import numpy as np


def one_strong_ranking(seed: int, M: int = 3000) -> tuple[np.ndarray, np.ndarray]:
    """Ranks (M, 9; 1 = top) of one strong list (quality 3), two weak (0.4) and six random
    lists of latent scores ``quality * effect + N(0, 1)``, 3 % of the genes relevant with
    exponential effects (a few large, most small), and the relevant genes (bool, M)."""
    rng = np.random.default_rng([8, seed])
    relevant = np.zeros(M, dtype=bool)
    relevant[rng.choice(M, size=round(0.03 * M), replace=False)] = True
    effect = np.where(relevant, rng.exponential(1.0, size=M), 0.0)
    scores = [q * effect + rng.standard_normal(M) for q in (3.0, 0.4, 0.4, 0, 0, 0, 0, 0, 0)]
    return np.column_stack([np.argsort(np.argsort(-s)) + 1.0 for s in scores]), relevant


def one_strong_equal(seed: int, M: int = 3000) -> tuple[np.ndarray, np.ndarray]:
    """As :func:`one_strong_ranking` with every relevant gene shifted by the list's quality
    (equal effects), a stream of its own: ranks (M, 9; 1 = top) and the relevant genes."""
    rng = np.random.default_rng([102, seed])
    relevant = np.zeros(M, dtype=bool)
    relevant[rng.choice(M, size=round(0.03 * M), replace=False)] = True
    scores = [q * relevant + rng.standard_normal(M) for q in (3.0, 0.4, 0.4, 0, 0, 0, 0, 0, 0)]
    return np.column_stack([np.argsort(np.argsort(-s)) + 1.0 for s in scores]), relevant
