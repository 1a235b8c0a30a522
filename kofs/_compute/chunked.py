"""Chunked computation over cells with dask.array: per-gene statistics and graph terms.

A Dask matrix ``X`` (n_cells x n_genes, chunked along the cells; chunks dense or scipy.sparse,
as ``anndata.experimental.read_elem_lazy`` gives) is never loaded whole. Every statistic used
by the sparse-capable rankers is a *sum over cells*, so it is computed chunk by chunk and the
partial sums are added:

* column means ``sum_i w_i x_ij / sum_i w_i`` and two-pass squared deviations
  ``sum_i w_i (x_ij - mu_j)^2`` (the means first, then the deviations);
* column minima and maxima (constant genes);
* the graph term ``f^T S f = sum_{a,b} sum_{i in a} x_i . (S_ab X_b)_i`` over the blocks
  ``S_ab`` of the sample graph between row chunks ``a`` and ``b`` (only the non-empty ones),
  one pair of groups of chunks at a time (bounded memory);
* products ``U^T X = sum_a U_a^T X_a`` with a small dense ``U`` (SPEC phi3, the randomized
  PCA of the approximate kNN search) and ``X B`` (stacked row blocks);
* the exact kNN search, chunk against chunk (O(n^2): used below ``ANN_MIN_SAMPLES`` cells;
  above, the approximate search of :mod:`kofs.knowledge.similarity_kernels` on principal
  components computed with the products above).

The tasks run on Dask's local scheduler, or on a ``dask.distributed`` cluster when a client is
active (see :func:`dask_client`). Each chunk's computation is the in-memory kernel of
:mod:`kofs._compute.matrix`, so results equal the in-memory ones to rounding.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import scipy.sparse as sp

from kofs._compute.run_cache import cache_of
from kofs.errors import ParameterError

#: How long to try to reach a dask.distributed scheduler before giving up.
CONNECT_TIMEOUT = "10s"

__all__ = [
    "CONNECT_TIMEOUT",
    "chunk_sum",
    "dask_client",
    "is_dask",
    "row_chunks",
]


def is_dask(X: Any) -> bool:
    """True for a dask array (checked without importing dask)."""
    return type(X).__module__.split(".")[0] == "dask" and hasattr(X, "chunks")


def row_chunks(X) -> tuple[list[Any], np.ndarray]:
    """The delayed row chunks of ``X`` (one chunk over all genes) and their row offsets."""
    if len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    blocks = list(X.to_delayed()[:, 0])
    offsets = np.concatenate([[0], np.cumsum(X.chunks[0])]).astype(np.int64)
    return blocks, offsets


def _compute(tasks: list[Any]) -> list[Any]:
    import dask

    return list(dask.compute(*tasks))


def chunk_sum(X, func: Callable[..., Any], *args: Any) -> Any:
    """``sum_a func(X_a, start_a, stop_a, *args)`` over the row chunks ``X_a``."""
    from dask import delayed

    blocks, off = row_chunks(X)
    task = delayed(func, pure=True)
    parts = _compute([task(b, off[a], off[a + 1], *args) for a, b in enumerate(blocks)])
    total = parts[0]
    for p in parts[1:]:
        total = total + p
    return total


def _as_block(B) -> Any:
    if sp.issparse(B):
        return sp.csr_matrix(B, dtype=np.float64)
    return np.asarray(B, dtype=np.float64)


def _wsum(B, start, stop, w):
    B = _as_block(B)
    return np.asarray(B.T @ w[start:stop]).ravel()


def _chunk_moments(B, codes, n_groups):
    """Per group of rows of the chunk (``codes``: the chunk's rows' groups, None: one group):
    count, column sums, squared deviations about the chunk-group mean (two-pass), column
    maxima and minima; and the chunk's size in bytes."""
    from kofs._compute import blocks

    B = _as_block(B)
    m = B.shape[1]
    out = np.zeros((n_groups, 4, m))
    out[:, 2], out[:, 3] = -np.inf, np.inf
    counts = np.zeros(n_groups)
    problem = blocks.csr_problem(B) if sp.issparse(B) else None
    if problem:  # refused by check_magnitude before any kernel sees the chunk
        return counts, out, [0], (0, problem)
    for c in range(n_groups):
        Bc = B if codes is None else B[np.flatnonzero(codes == c)]
        if Bc.shape[0] == 0:
            continue
        counts[c] = Bc.shape[0]
        out[c, 0] = np.asarray(Bc.sum(axis=0)).ravel()
        out[c, 1] = blocks.column_sq_deviations(Bc, out[c, 0] / counts[c])
        out[c, 2], out[c, 3] = blocks.column_range(Bc)
    size = B.data.nbytes + B.indices.nbytes + B.indptr.nbytes if sp.issparse(B) else B.nbytes
    stored = B.data if sp.issparse(B) else B
    return counts, out, [size], (int(stored.size - np.count_nonzero(np.isfinite(stored))), "")


def _merge_moments(parts: list) -> tuple[np.ndarray, np.ndarray, list[int], tuple[int, str]]:
    """Several chunks' moments as one (same layout as :func:`_chunk_moments`): counts and
    sums add, squared deviations by the pairwise update ``M2 = sum_a M2_a + n_a (mean_a -
    mean)^2`` (Chan, Golub & LeVeque), maxima and minima, non-finite values add."""
    n = np.sum([p[0] for p in parts], axis=0)
    out = np.zeros_like(parts[0][1])
    out[:, 0] = np.sum([p[1][:, 0] for p in parts], axis=0)
    mean = out[:, 0] / np.where(n > 0, n, 1.0)[:, None]
    for n_a, st, *_ in parts:
        for c in np.flatnonzero(n_a):
            dev = st[c, 0] / n_a[c] - mean[c]
            out[c, 1] += st[c, 1] + n_a[c] * dev * dev
    out[:, 2] = np.max([p[1][:, 2] for p in parts], axis=0)
    out[:, 3] = np.min([p[1][:, 3] for p in parts], axis=0)
    nonfinite = sum(p[3][0] for p in parts)
    problem = next((p[3][1] for p in parts if p[3][1]), "")
    return n, out, [size for p in parts for size in p[2]], (nonfinite, problem)


class Moments:
    """Per-group column moments of a chunked matrix, from one pass over its chunks.

    Attributes (arrays of shape (groups,) or (groups, n_genes)): ``n`` rows per group,
    ``sums`` column sums, ``mean`` column means, ``m2`` squared deviations about ``mean``
    (chunk-wise two-pass, combined by :func:`_merge_moments`, as stable as a two-pass sum),
    ``hi``/``lo`` column maxima and minima; ``chunk_bytes`` the size of each row chunk in
    memory; ``nonfinite`` the number of NaN or infinite values and ``malformed`` what is wrong
    with the first structurally malformed CSR chunk ("" if none): the statistics are then
    meaningless, and :func:`kofs.pipeline.checks.check_magnitude` refuses such a matrix.
    """

    def __init__(self, merged: tuple[np.ndarray, np.ndarray, list[int], tuple[int, str]]):
        n, out, sizes, (nonfinite, malformed) = merged
        self.chunk_bytes = list(sizes)
        self.nonfinite, self.malformed = int(nonfinite), str(malformed)
        self.n, self.sums, self.m2 = n, out[:, 0], out[:, 1]
        self.mean = self.sums / np.where(n > 0, n, 1.0)[:, None]
        self.hi, self.lo = out[:, 2], out[:, 3]

    def sq_deviations(self, group: int, mu: np.ndarray) -> np.ndarray:
        """``sum_{i in group} (x_ij - mu_j)^2`` per column."""
        dev = self.mean[group] - mu
        return self.m2[group] + self.n[group] * dev * dev


#: Recent :class:`Moments` kept in the run's kernel cache (:mod:`kofs._compute.run_cache`),
#: keyed by the dask array's name (its deterministic token: the same name means the same values)
#: and the grouping: the rankers and checks of one run share one pass over the data instead of
#: one pass per statistic.
_MOMENTS_KEEP = 4
#: Bytes of per-chunk moments held before they are merged (many classes x many genes).
_MOMENTS_BATCH_BYTES = 256 * 2**20


def moments(X, codes: np.ndarray | None = None) -> Moments:
    """:class:`Moments` of the row groups ``codes`` (0..c-1; None: one group), one pass."""
    from dask import delayed

    if codes is not None:
        codes = np.ascontiguousarray(codes, dtype=np.int64)
    key = (X.name, X.shape, None if codes is None else hashlib.sha1(codes.tobytes()).hexdigest())
    cache = cache_of("moments")
    hit = None if cache is None else cache.get(key)
    if hit is not None:
        return hit
    n_groups = 1 if codes is None else int(codes.max()) + 1
    blocks, off = row_chunks(X)
    task = delayed(_chunk_moments, pure=True)
    tasks = [
        task(b, None if codes is None else codes[off[a] : off[a + 1]], n_groups)
        for a, b in enumerate(blocks)
    ]
    # the chunks' results are merged batch by batch: memory O(batch x groups x genes)
    batch = max(1, int(_MOMENTS_BATCH_BYTES // (n_groups * 4 * 8 * max(X.shape[1], 1))))
    merged = None
    for s in range(0, len(tasks), batch):
        parts = _compute(tasks[s : s + batch])
        merged = _merge_moments(parts if merged is None else [merged, *parts])
    found = Moments(merged)
    if cache is not None:
        while len(cache) >= _MOMENTS_KEEP:
            cache.pop(next(iter(cache)))
        cache[key] = found
    return found


def column_means(X, weights: np.ndarray | None = None) -> np.ndarray:
    if weights is None:
        return moments(X).mean[0]
    w = np.asarray(weights, dtype=np.float64)
    return chunk_sum(X, _wsum, w) / w.sum()


def _wdev(B, start, stop, w, mu):
    from kofs._compute.blocks import weighted_sq_deviations

    return weighted_sq_deviations(_as_block(B), w[start:stop], mu)


def weighted_sq_deviations(X, weights: np.ndarray, mu: np.ndarray) -> np.ndarray:
    return chunk_sum(X, _wdev, np.asarray(weights, dtype=np.float64), mu)


def column_sq_deviations(X, mu: np.ndarray | None = None) -> np.ndarray:
    mom = moments(X)
    return mom.sq_deviations(0, mom.mean[0] if mu is None else np.asarray(mu, np.float64))


def column_range(X) -> tuple[np.ndarray, np.ndarray]:
    """Per column ``(max, min)``, chunk by chunk."""
    mom = moments(X)
    return mom.hi[0], mom.lo[0]


def _ut_x(B, start, stop, Ut):
    B = _as_block(B)
    return np.asarray((B.T @ Ut[:, start:stop].T).T)


def left_product(Ut: np.ndarray, X) -> np.ndarray:
    """``Ut @ X`` for a small dense ``Ut`` (p x n), summed over the row chunks."""
    return chunk_sum(X, _ut_x, np.asarray(Ut, dtype=np.float64))


def _x_b(B, B_right):
    return np.asarray(_as_block(B) @ B_right)


def right_product(X, B: np.ndarray) -> np.ndarray:
    """``X @ B`` for a small dense ``B`` (m x p): one pass, the row chunks' products stacked
    (n x p in memory)."""
    from dask import delayed

    blocks, _ = row_chunks(X)
    task = delayed(_x_b, pure=True)
    B = np.asarray(B, dtype=np.float64)
    return np.vstack(_compute([task(b, B) for b in blocks]))


#: Entries of ``S_ab X_b`` formed at once by :func:`_pair_term` (its rows in slices): the
#: product of a graph block with a chunk is much denser than the chunk (a row of it holds the
#: genes of all the row's neighbours).
PRODUCT_ENTRIES = 2 * 10**7


def _pair_term(Xa, start, stop, S_blocks, others):
    Xa = _as_block(Xa)
    out = np.zeros(Xa.shape[1])
    for Sab, Xb in zip(S_blocks, others, strict=True):
        Xb = _as_block(Xb)
        per_row = np.diff(Xb.indptr) if sp.issparse(Xb) else np.full(Xb.shape[0], Xb.shape[1])
        # an upper bound of the stored entries of each row of S_ab X_b
        bound = np.cumsum(np.asarray(abs(Sab).sign() @ per_row.astype(np.float64)).ravel())
        lo = 0
        while lo < Sab.shape[0]:
            hi = max(lo + 1, int(np.searchsorted(bound, bound[lo] + PRODUCT_ENTRIES, "right")))
            hi = min(hi, Sab.shape[0])
            Y = Sab[lo:hi] @ Xb
            A = Xa[lo:hi]
            prod = A.multiply(Y) if sp.issparse(A) else A * np.asarray(Y)
            out += np.asarray(prod.sum(axis=0)).ravel()
            lo = hi
    return out


#: Memory for the row chunks held at once by :func:`graph_term` (two groups of chunks).
GRAPH_MEMORY = 4 * 2**30


def _groups(sizes: list[int], budget: float) -> list[list[int]]:
    """Consecutive chunk indices grouped so that each group holds at most ``budget`` bytes
    (a chunk larger than that alone)."""
    groups: list[list[int]] = [[]]
    held = 0
    for a, size in enumerate(sizes):
        if groups[-1] and held + size > budget:
            groups.append([])
            held = 0
        groups[-1].append(a)
        held += size
    return groups


def graph_term(X, S) -> np.ndarray:
    """``f^T S f`` of every gene: ``sum_{a,b} sum_{i in a} x_i . (S_ab X_b)_i``.

    Memory stays bounded whatever the graph: the row chunks are grouped (consecutive chunks,
    :data:`GRAPH_MEMORY` / 2 bytes per group, sizes from :func:`moments`), and the pairs of
    chunks are computed one pair of groups at a time, so at most two groups are in memory; a
    group is read again for every other group (``groups^2 / 2`` reads of a group in all).
    """
    from dask import delayed

    S = sp.csr_matrix(S, dtype=np.float64)
    blocks, off = row_chunks(X)
    groups = _groups(moments(X).chunk_bytes, GRAPH_MEMORY / 2)
    total = np.zeros(X.shape[1])
    for gi, G in enumerate(groups):
        for H in groups[gi:]:
            tasks = []
            for a in G + (H if H is not G else []):
                partners = H if a in G else G
                rows = S[off[a] : off[a + 1]]
                S_blocks, others = [], []
                for b in partners:
                    Sab = sp.csr_matrix(rows[:, off[b] : off[b + 1]])
                    if Sab.nnz:
                        S_blocks.append(Sab)
                        others.append(blocks[b])
                if S_blocks:
                    tasks.append(
                        delayed(_pair_term)(blocks[a], off[a], off[a + 1], S_blocks, others)
                    )
            if tasks:
                total += np.sum(_compute(tasks), axis=0)
    return total


def _knn_block(Xa, start, stop, blocks_off, k, *others):
    from kofs._compute.blocks import cross, order_key, row_norms2, snap_zero

    Xa = _as_block(Xa)
    na = row_norms2(Xa)
    cand_d, cand_i = [], []
    for (b0, _b1), Xb in zip(blocks_off, others, strict=True):
        Xb = _as_block(Xb)
        nb = row_norms2(Xb)
        d2 = na[:, None] + nb[None, :] - 2.0 * cross(Xa, Xb)
        np.maximum(d2, 0.0, out=d2)
        snap_zero(d2, na, nb)
        cols = np.arange(b0, b0 + Xb.shape[0])
        d2[cols[None, :] == np.arange(start, stop)[:, None]] = np.inf  # no self-loops
        cand_d.append(d2)
        cand_i.append(np.broadcast_to(cols, d2.shape))
    d2 = np.concatenate(cand_d, axis=1)
    idx = np.concatenate(cand_i, axis=1)
    order = np.lexsort((idx, order_key(d2)), axis=1)[:, :k]
    return np.take_along_axis(idx, order, axis=1), np.take_along_axis(d2, order, axis=1)


def knn_squared_distances(X, *, k: int) -> sp.csr_matrix:
    """Exact directed kNN squared distances, every row chunk against every chunk."""
    from dask import delayed

    n = X.shape[0]
    if not 1 <= k <= n - 1:
        raise ParameterError(f"kNN graph: k must lie in [1, {n - 1}] for {n} samples, got {k}")
    blocks, off = row_chunks(X)
    spans = [(int(off[b]), int(off[b + 1])) for b in range(len(blocks))]
    parts = _compute(
        [
            delayed(_knn_block)(Xa, off[a], off[a + 1], spans, k, *blocks)
            for a, Xa in enumerate(blocks)
        ]
    )
    cols = np.concatenate([p[0] for p in parts])
    vals = np.concatenate([p[1] for p in parts])
    indptr = np.arange(0, n * k + 1, k, dtype=np.int64)
    return sp.csr_matrix((vals.ravel(), cols.ravel(), indptr), shape=(n, n))


def _load_rows(blocks: list[Any], group: list[int]) -> Any:
    """The row chunks ``group`` (consecutive) of a dask matrix, in memory and stacked."""
    parts = [_as_block(b) for b in _compute([blocks[a] for a in group])]
    if sp.issparse(parts[0]):
        A = sp.vstack(parts, format="csr")
        if not A.has_canonical_format:
            A.sum_duplicates()
        return A
    return np.vstack(parts)


def _cross_dots(A, rows: np.ndarray, B, cand: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``a_rows[q] . b_cand[q, t]`` where ``mask`` (0 elsewhere): in-memory blocks A and B (the
    same one for pairs within a group); the compiled kernel of the in-memory search for CSR,
    so the dots are equal bit for bit."""
    from kofs._compute import numba_kernels

    if sp.issparse(A) and numba_kernels.AVAILABLE:
        return numba_kernels.cross_candidate_dots(A, rows, B, cand, mask)
    out = np.zeros(cand.shape)
    q, t = np.nonzero(mask)
    step = 50000  # pairs gathered at once
    for s in range(0, q.size, step):
        qs, ts = q[s : s + step], t[s : s + step]
        i, j = rows[qs], cand[qs, ts]
        if sp.issparse(A):
            out[qs, ts] = np.asarray(A[i].multiply(B[j]).sum(axis=1)).ravel()
        else:
            out[qs, ts] = np.einsum("ij,ij->i", A[i], B[j])
    return out


def candidate_sq_distances(X, cand: np.ndarray) -> np.ndarray:
    """Exact squared distances ``||x_i - x_cand[i, t]||^2`` (float64, shape of ``cand``) of a
    dask ``X``, without holding it: the pairs are computed one pair of chunk groups at a time
    (:data:`GRAPH_MEMORY` for the two groups, as :func:`graph_term`), each group loaded once
    per partner group and never copied. Equal to the in-memory candidate distances (same
    kernel) bit for bit."""
    from kofs._compute.blocks import row_norms2

    n, c = cand.shape
    blocks, off = row_chunks(X)
    groups = _groups(moments(X).chunk_bytes, GRAPH_MEMORY / 2)
    spans = [(int(off[G[0]]), int(off[G[-1] + 1])) for G in groups]
    row_group = np.repeat(np.arange(len(groups)), [hi - lo for lo, hi in spans])
    cand_group = row_group[cand]
    norms = np.empty(n)
    dots = np.zeros((n, c))

    def fill(A, a_span, B, b_span, partner):
        lo, hi = a_span
        mask = cand_group[lo:hi] == partner  # each pair where (group(i), group(j)) is
        if mask.any():
            local = np.where(mask, cand[lo:hi] - b_span[0], 0)
            rows = np.arange(hi - lo)
            dots[lo:hi][mask] = _cross_dots(A, rows, B, local, mask)[mask]

    for gi, G in enumerate(groups):
        AG = _load_rows(blocks, G)
        norms[spans[gi][0] : spans[gi][1]] = row_norms2(AG)
        fill(AG, spans[gi], AG, spans[gi], gi)
        for hj in range(gi + 1, len(groups)):
            AH = _load_rows(blocks, groups[hj])
            fill(AG, spans[gi], AH, spans[hj], hj)
            fill(AH, spans[hj], AG, spans[gi], gi)
            del AH
    pair = norms[:, None] + norms[cand]
    d2 = np.maximum(pair - 2.0 * dots, 0.0)
    d2[d2 <= 1e-12 * pair] = 0.0
    return d2


def take_rows(X, idx: np.ndarray) -> Any:
    """Rows ``idx`` of a dask ``X`` in memory (dense or CSR, as the chunks are)."""
    sub = X[np.asarray(idx)].compute()
    return sp.csr_matrix(sub, dtype=np.float64) if sp.issparse(sub) else np.asarray(sub, float)


def to_memory(X) -> Any:
    """The whole dask ``X`` in memory (small data only)."""
    return take_rows(X, np.arange(X.shape[0]))


@contextlib.contextmanager
def dask_client(address: str | None) -> Iterator[Any]:
    """Run the enclosed computations on the ``dask.distributed`` scheduler at ``address``
    (None: Dask's default, the local threaded scheduler or an already active client)."""
    if not address:
        yield None
        return
    try:
        from distributed import Client
    except ImportError:
        raise ParameterError(
            "--dask-scheduler needs the distributed package: pip install -e '.[sc]' in the kofs folder"
        ) from None
    try:
        client = Client(address, timeout=CONNECT_TIMEOUT, set_as_default=True)
    except (OSError, TimeoutError, ValueError) as exc:
        raise ParameterError(f"cannot connect to the Dask scheduler {address!r} ({exc})") from None
    try:
        yield client
    finally:
        client.close()
