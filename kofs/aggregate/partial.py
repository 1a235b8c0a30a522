"""Partial ranked lists: the one representation every aggregator receives.

Lists may rank different genes and differ in length. The shared runner
(:func:`kofs.aggregate.aggregate`) builds the (m genes x L lists) rank matrix over the union of
the lists' genes with **NaN where a list does not contain a gene**; each list's length is the
number of its non-NaN entries, and the gene universe has N >= m genes (default m; genes of the
universe that no list contains are not materialised).

An aggregator registered with ``partial_lists=True`` (RRA, Stuart) receives this NaN matrix and
``universe=N`` and applies its own model (RobustRankAggreg: an absent gene has normalised rank
u = 1). Every other aggregator receives :func:`complete_ranks`: the **random-completion model**,
in which the genes a list does not contain fill the rest of the list's ranking in an unknown,
uniformly random order, so each gets the expected rank of that bottom block,
``(n_l + 1 + N) / 2`` (ranks ``n_l + 1 .. N`` averaged, ALGORITHMS.md §7.4), and the
``N - m`` genes in no list are rows of the matrix too (so that tie blocks, Borda points and the
EM normaliser count the whole universe); the runner keeps the scores of the m named genes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kofs.errors import ParameterError
from kofs.types import Ranking

__all__ = ["check_partial_ranks", "complete_ranks", "list_lengths", "partial_rank_matrix"]


def partial_rank_matrix(rankings: Sequence[Ranking]) -> tuple[tuple[str, ...], np.ndarray]:
    """Genes (union, in first-seen order) and the (m x L) rank matrix, NaN = not in the list.

    Each list's own ranks (1 = best, ties averaged; degenerate NaN scores tied at its bottom)
    are kept as they are.
    """
    if not rankings:
        raise ParameterError("aggregation needs at least one ranked list")
    first = rankings[0].genes
    if all(r.genes is first or r.genes == first for r in rankings[1:]) and len(set(first)) == len(
        first
    ):  # the common case (kofs rank): every list ranks the same genes in the same order
        return tuple(first), np.column_stack(
            [np.asarray(r.ranks, dtype=np.float64) for r in rankings]
        )
    genes: dict[str, int] = {}
    for r in rankings:
        for g in r.genes:
            genes.setdefault(g, len(genes))
    M = len(genes)
    R = np.full((M, len(rankings)), np.nan)
    for j, r in enumerate(rankings):
        if len(r.genes) == M and r.genes == tuple(genes):
            R[:, j] = r.ranks
            continue
        idx = np.fromiter((genes[g] for g in r.genes), dtype=np.int64, count=len(r.genes))
        R[idx, j] = r.ranks
    return tuple(genes), R


def list_lengths(ranks: np.ndarray) -> np.ndarray:
    """Number of genes each list contains (non-NaN entries per column), shape (L,)."""
    return (~np.isnan(np.asarray(ranks, dtype=np.float64))).sum(axis=0)


def check_partial_ranks(
    ranks: np.ndarray, relevant: np.ndarray | None = None, *, universe: int
) -> np.ndarray:
    """Validate a partial rank matrix (NaN = absent) handed to a partial-list aggregator.

    Raises
    ------
    ParameterError
        Wrong shape, an empty matrix, an infinite or < 1 rank, a rank above N, a list with
        no gene, N smaller than the number of genes, or a mismatching relevant-gene mask.
    """
    R = np.asarray(ranks, dtype=np.float64)
    if R.ndim != 2 or R.shape[0] == 0 or R.shape[1] == 0:
        raise ParameterError(
            f"rank matrix must be genes x lists with at least one of each, got shape {R.shape}"
        )
    if universe < R.shape[0]:
        raise ParameterError(
            f"the gene universe ({universe}) is smaller than the number of ranked genes "
            f"({R.shape[0]}); give a universe of at least {R.shape[0]} genes"
        )
    present = ~np.isnan(R)
    if np.isinf(R).any() or (R[present] < 1).any() or (R[present] > universe).any():
        raise ParameterError(f"rank matrix holds an infinite, < 1 or > N = {universe} rank")
    if not present.any(axis=0).all():
        raise ParameterError("every list must contain at least one gene")
    if relevant is not None and np.shape(relevant) != (R.shape[0],):
        raise ParameterError(
            f"relevant-gene mask has shape {np.shape(relevant)}, expected ({R.shape[0]},)"
        )
    return R


def complete_ranks(ranks: np.ndarray, *, universe: int) -> np.ndarray:
    """Full (N x L) ranks under the random-completion model (module docstring).

    Parameters
    ----------
    ranks : ndarray of shape (m, L)
        NaN = the list does not contain the gene.
    universe : int
        N >= m.

    Returns
    -------
    ndarray of shape (N, L)
        The first m rows are ``ranks`` with every NaN of list l replaced by
        ``(n_l + 1 + N) / 2``; the other ``N - m`` rows (genes in no list) hold that value too.
    """
    R = check_partial_ranks(ranks, universe=universe)
    m, L = R.shape
    n = list_lengths(R)
    bottom = (n + 1.0 + universe) / 2.0
    out = np.empty((universe, L))
    out[:m] = np.where(np.isnan(R), bottom[None, :], R)
    out[m:] = bottom[None, :]
    return out
