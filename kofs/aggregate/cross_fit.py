"""Cross-fitted observations of seeded lists (issue 11, "no circularity").

A list built (seeded) from known genes S -- relevance propagation started from them, term
relevance learned from them, GO terms enriched in them -- ranks them first by construction.
Scoring it on S would reward that circle. The cross-fit splits S into K folds
``S_1..S_K``; the list is rebuilt K times, the k-th time from ``S \\ S_k`` only, and a gene of
``S_k`` is observed at its position in that k-th rebuild, among the genes the rebuild was not
seeded from (its held-out position). A list is therefore never scored on a gene it was built
from; its reliability is learned on every known gene, each seen through a list that did not
know it (pooled over the folds). The genes outside S keep their position in the list built from
all of S (the list used for the ranking), positioned among the genes it was not built from.

:func:`held_out_intervals` turns the K rebuilt lists into the observation intervals the
posterior model reads (:func:`kofs.aggregate.intervals.observation_intervals`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from kofs.errors import ParameterError
from kofs.types import Ranking

__all__ = ["held_out_intervals"]


def held_out_intervals(
    genes: Sequence[str],
    names: Sequence[str],
    built_from: np.ndarray,
    held_out: Mapping[str, Sequence[tuple[Iterable[str], Ranking]]],
) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
    """Observation intervals of the held-out seed genes of every cross-fitted list.

    Parameters
    ----------
    genes : sequence of str
        Row genes of the rank matrix (M).
    names : sequence of str
        Column (list) names (L).
    built_from : ndarray of bool (M, L)
        The genes each full list was built from.
    held_out : mapping list name -> sequence of (held-out genes, rebuilt Ranking)
        Per fold: the genes ``S_k`` left out of the seeds and the list rebuilt from the
        others ``S \\ S_k``.

    Returns
    -------
    lo, hi : ndarray (M, L)
        NaN except at (held-out gene, list): the gene's interval of u in the rebuilt list,
        positioned among the genes that rebuild was not seeded from.
    n_scored : dict list name -> int
        How many seed genes got a held-out observation.
    """
    from kofs.aggregate.intervals import block_intervals

    M, L = built_from.shape
    index = {g: i for i, g in enumerate(genes)}
    col = {n: j for j, n in enumerate(names)}
    lo = np.full((M, L), np.nan)
    hi = np.full((M, L), np.nan)
    n_scored: dict[str, int] = {}
    unknown = sorted(set(held_out) - set(names))
    if unknown:
        raise ParameterError(f"held_out names lists that are not aggregated: {', '.join(unknown)}")
    for name, folds in held_out.items():
        j = col[name]
        seeds = built_from[:, j]
        done = np.zeros(M, dtype=bool)
        if isinstance(folds, (str, bytes)) or not all(
            isinstance(f, (tuple, list)) and len(f) == 2 and isinstance(f[1], Ranking)
            for f in folds
        ):
            raise ParameterError(
                f"held_out[{name!r}]: give a sequence of (held-out genes, rebuilt Ranking) pairs"
            )
        for fold_genes, ranking in folds:
            rows = np.fromiter(
                (index[g] for g in fold_genes if g in index), dtype=np.int64
            )  # fmt: skip
            rows = rows[seeds[rows] & ~done[rows]]
            if rows.size == 0:
                continue
            fold_ranks = _ranks_on(genes, ranking)
            masked = seeds.copy()
            masked[rows] = False  # the rebuild was seeded from S minus this fold
            flo, fhi = block_intervals(fold_ranks[:, None], masked[:, None])
            lo[rows, j] = flo[rows, 0]
            hi[rows, j] = fhi[rows, 0]
            done[rows] = True
        n_scored[name] = int(done.sum())
    return lo, hi, n_scored


def _ranks_on(genes: Sequence[str], ranking: Ranking) -> np.ndarray:
    """The ranking's ranks (ties averaged) over ``genes``; NaN where it lacks a gene."""
    pos = {g: i for i, g in enumerate(genes)}
    out = np.full(len(genes), np.nan)
    ranks = np.asarray(ranking.ranks, dtype=np.float64)
    for g, r in zip(ranking.genes, ranks, strict=True):
        i = pos.get(g)
        if i is not None:
            out[i] = r
    return out
