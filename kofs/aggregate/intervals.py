"""Observations of a ranked list as intervals of normalised position, and their coding.

A list reports gene i at a normalised position ``u`` in (0, 1] (position / number of genes).
An observation is an interval of u: a gene alone at position r of M has ``[(r-1)/M, r/M]``; a
tie block at positions a..b has ``[(a-1)/M, b/M]``; a gene absent from a partial list of n
genes (NaN rank) has ``[n/M, 1]`` (censored: "below the list"); ``[0, 1]`` is no information.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.special import log_ndtr

__all__ = [
    "Coded",
    "TieBlocks",
    "block_intervals",
    "code_intervals",
    "observation_intervals",
]


def block_intervals(
    ranks: np.ndarray, masked: np.ndarray | None = None, *, blocks: TieBlocks | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Observation intervals ``[lo, hi]`` of u for every gene in every list.

    Parameters
    ----------
    ranks : ndarray of shape (M, L)
        Ranks, 1 = best, ties averaged; NaN = the gene is absent from that (partial) list.
        Only the order of each column and its tie blocks are used.
    masked : ndarray of bool (M, L), optional
        Observations to drop (the genes a list was built from): they get ``[0, 1]`` and the
        list's other genes are positioned among the unmasked genes only, so that under the
        null they stay uniform.
    blocks : TieBlocks, optional
        ``TieBlocks.of(ranks, masked)`` when already made (each list is then not sorted again).

    Returns
    -------
    lo, hi : ndarrays of shape (M, L)
        With ``M_j`` = the column's unmasked genes: a tie block at positions a..b has
        ``[(a-1)/M_j, b/M_j]``; absent genes of a list of n present genes have ``[n/M_j, 1]``.
    """
    R = np.asarray(ranks, dtype=np.float64)
    blocks = TieBlocks.of(R, masked) if blocks is None else blocks
    lo, hi = blocks.intervals(np.arange(R.shape[0]))
    # in R's memory layout (products downstream round by layout: the same bits as before)
    out_lo, out_hi = np.empty_like(R), np.empty_like(R)
    out_lo[...] = lo
    out_hi[...] = hi
    return out_lo, out_hi


@dataclass(frozen=True)
class TieBlocks:
    """Each list's ordered genes and tie blocks, from which :func:`block_intervals` of any
    subset of the genes (re-ranked within it: a half-sample) follows without sorting again.

    ``order[j]``: list j's present unmasked genes, best first; ``first`` / ``last`` (L, M): where
    each gene's tie block starts / ends (exclusive) in its list's order (0 for a gene that is
    not there); ``keep``, ``present`` (L, M): unmasked, and present and unmasked.
    """

    order: tuple[np.ndarray, ...]
    first: np.ndarray
    last: np.ndarray
    keep: np.ndarray
    present: np.ndarray

    @staticmethod
    def of(ranks: np.ndarray, masked: np.ndarray | None = None) -> TieBlocks:
        R = np.asarray(ranks, dtype=np.float64)
        M, L = R.shape
        keep = np.ones((L, M), dtype=bool)
        if masked is not None:
            keep = np.ascontiguousarray(~np.asarray(masked, bool).T)
        present = keep & ~np.isnan(R.T)
        first = np.zeros((L, M), dtype=np.intp)
        last = np.zeros((L, M), dtype=np.intp)
        order = []
        for j in range(L):
            genes = np.flatnonzero(present[j])
            col = R[genes, j]
            o = np.argsort(col, kind="stable")
            v = col[o]
            new = np.flatnonzero(v[1:] != v[:-1]) + 1  # positions that start a tie block
            starts = np.concatenate([[0], new]).astype(np.intp)
            ends = np.concatenate([new, [v.size]]).astype(np.intp)
            genes = genes[o]
            first[j, genes] = np.repeat(starts, ends - starts)
            last[j, genes] = np.repeat(ends, ends - starts)
            order.append(genes)
        return TieBlocks(tuple(order), first, last, keep, present)

    def intervals(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:func:`block_intervals` of the genes ``rows`` (increasing) alone."""
        L, M = self.keep.shape
        rows = np.asarray(rows, dtype=np.intp)
        chosen = np.zeros(M, dtype=bool)
        chosen[rows] = True
        lo = np.zeros((L, rows.size))
        hi = np.ones((L, rows.size))
        for j in range(L):
            keep = self.keep[j, rows]
            Mj = int(np.count_nonzero(keep))
            if Mj == 0:
                continue
            # the chosen genes before each position of the list: a block's chosen genes sit
            # between the counts at its start and at its end
            order = self.order[j]
            before = np.zeros(order.size + 1, dtype=np.intp)
            np.cumsum(chosen[order], out=before[1:])
            a = before[self.first[j, rows]] / Mj
            b = before[self.last[j, rows]] / Mj
            present = self.present[j, rows]
            if present.all():
                lo[j], hi[j] = a, b
            else:  # absent: below the list; masked: [0, 1]
                n = int(before[-1])
                lo[j] = np.where(present, a, np.where(keep, n / Mj, 0.0))
                hi[j] = np.where(present, b, 1.0)
        return np.ascontiguousarray(lo.T), np.ascontiguousarray(hi.T)


def observation_intervals(
    ranks: np.ndarray,
    built_from: np.ndarray | None = None,
    held_out: tuple[np.ndarray, np.ndarray] | None = None,
    *,
    blocks: TieBlocks | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Intervals of every (gene, list): :func:`block_intervals` with the genes a list was built
    from masked (``[0, 1]``, no information), then replaced by their cross-fitted interval
    where ``held_out`` has one (:func:`kofs.aggregate.cross_fit.held_out_intervals`).
    ``blocks``: ``TieBlocks.of(ranks, built_from)`` when already made."""
    lo, hi = block_intervals(ranks, built_from, blocks=blocks)
    if held_out is not None:
        hlo, hhi = held_out
        have = ~np.isnan(hlo)
        lo = np.where(have, hlo, lo)
        hi = np.where(have, hhi, hi)
    return lo, hi


def bin_edges(M: int, n_bins: int, single: int) -> np.ndarray:
    """u-space bin edges: the first ``single`` positions alone, then geometric up to 1."""
    top = np.arange(0, min(single, M) + 1, dtype=np.float64)
    rest = np.geomspace(max(single, 1), M, max(n_bins - single, 2))
    edges = np.unique(np.concatenate([top, np.round(rest)]))
    return edges / M


class _BinLocator:
    """``np.searchsorted(edges, x, side="right")`` for edges that are multiples of 1/M
    (:func:`bin_edges`), by table: no edge lies strictly inside a cell ``[i/M, (i+1)/M)``, so
    the count of edges up to the cell's start is the answer, up to the one-cell rounding of
    ``floor(x M)``, which one comparison each way corrects."""

    def __init__(self, edges: np.ndarray, M: int) -> None:
        self.M = M
        self.count = np.searchsorted(edges, np.arange(M + 1) / M, side="right")
        self.ext = np.concatenate([[-np.inf], edges, [np.inf]])  # ext[c + 1] = edges[c]

    def __call__(self, x: np.ndarray) -> np.ndarray:
        cell = np.floor(x * self.M)
        np.clip(cell, 0, self.M, out=cell)
        t = self.count[cell.astype(np.intp)]
        t += self.ext[t + 1] <= x
        t -= self.ext[t] > x
        return t


@dataclass(frozen=True)
class Coded:
    """Each list's observations coded into a small table of intervals (sufficient statistics).

    ``codes[i, j]`` indexes the flat tables ``lo``/``hi`` (list j's entries start at
    ``offsets[j]``; ``list_of[k]`` is the list of entry k).
    """

    codes: np.ndarray  # (M, L) int64
    lo: np.ndarray  # (K,)
    hi: np.ndarray  # (K,)
    list_of: np.ndarray  # (K,) int64
    offsets: np.ndarray  # (L + 1,)

    @property
    def size(self) -> int:
        return int(self.lo.size)


#: Normal scores ``Q^-1(p)`` spanned by the bins of a calibrated list's p-values (p from
#: 1e-300 to 1 - 1e-19).
_Z_SPAN = (-9.0, 37.0)


def _p_edges(n_bins: int) -> np.ndarray:
    """Bin edges of null p-values (:func:`code_intervals`): evenly spaced in normal score."""
    z = np.linspace(_Z_SPAN[1], _Z_SPAN[0], max(n_bins - 1, 2))
    with np.errstate(under="ignore"):
        inner = np.exp(log_ndtr(-z))
    return np.unique(np.concatenate([[0.0], inner, [1.0]]))


def code_intervals(
    lo: np.ndarray,
    hi: np.ndarray,
    *,
    n_bins: int = 512,
    single: int = 100,
    calibrated: np.ndarray | None = None,
) -> Coded:
    """Coarsen each gene's interval to its u-bin unless its own interval (a tie block, the
    absent block, a masked observation) is wider than the bin; identical intervals share a
    code. Bins: the first ``single`` positions alone, then geometric (``n_bins`` in all);
    for a ``calibrated`` list (its u are null p-values, which reach far below 1 / M), evenly
    spaced in normal score."""
    M, L = lo.shape
    cal = np.zeros(L, dtype=bool) if calibrated is None else np.asarray(calibrated, dtype=bool)
    codes = np.empty((M, L), dtype=np.int64)
    los, his, owner = [], [], []
    offsets = np.zeros(L + 1, dtype=np.int64)
    total = 0

    def binning(calibrated: bool) -> tuple[np.ndarray, Callable[[np.ndarray], np.ndarray]]:
        if calibrated:
            e = _p_edges(n_bins)
            return e, lambda x: np.asarray(np.searchsorted(e, x, side="right"))
        e = bin_edges(M, n_bins, single)
        return e, _BinLocator(e, M)

    bins = {c: binning(c) for c in set(cal.tolist())}  # each kind of list's edges, made once
    for j in range(L):
        edges, locate = bins[bool(cal[j])]
        nb = len(edges) - 1
        width = (edges[1:] - edges[:-1]) * (1 + 1e-9)  # a narrow observation fits in its bin
        mid = 0.5 * (lo[:, j] + hi[:, j])
        k = np.clip(locate(mid) - 1, 0, nb - 1)
        wide = (hi[:, j] - lo[:, j]) > width[k]
        used = np.flatnonzero(np.bincount(k[~wide], minlength=nb))  # bins of narrow ones
        index = np.full(nb, -1, dtype=np.int64)
        index[used] = np.arange(used.size)
        code = index[k]
        blo, bhi = edges[used], edges[used + 1]
        if wide.any():  # own intervals, identical ones shared
            pairs = np.column_stack([lo[wide, j], hi[wide, j]])
            uniq, inv = np.unique(pairs, axis=0, return_inverse=True)
            code[wide] = used.size + inv.ravel()
            blo = np.concatenate([blo, uniq[:, 0]])
            bhi = np.concatenate([bhi, uniq[:, 1]])
        codes[:, j] = code + total
        los.append(blo)
        his.append(bhi)
        owner.append(np.full(blo.size, j, dtype=np.int64))
        total += blo.size
        offsets[j + 1] = total
    return Coded(
        codes,
        np.concatenate(los) if los else np.zeros(0),
        np.concatenate(his) if his else np.zeros(0),
        np.concatenate(owner) if owner else np.zeros(0, dtype=np.int64),
        offsets,
    )
