"""Compiled loops over CSR matrices for large single-cell data (numba; optional).

numba is in the ``[sc]`` extra; every kernel is cached on disk (:mod:`kofs._compute.jit` chooses the
folder), so only the first process ever compiles it. Without numba, :data:`AVAILABLE` is False
and the callers use their NumPy/scipy.sparse formulation (same results to rounding, slower and
with larger temporaries on large data).

* :func:`graph_gene_products`: ``sum_i sum_j s_ij x_ig x_jg`` for every gene ``g`` (the
  ``f^T S f`` of every gene at once): one pass over the graph's edges, scattering ``x_i`` into
  a dense buffer of length m and gathering over the stored entries of its neighbours ``x_j``;
  cost ``sum_edges nnz(x_j)``, memory O(blocks x m).
* :func:`candidate_dots`, :func:`cross_candidate_dots`: ``x_i . x_j`` for every sample i and
  each of its candidate neighbours j (scatter ``x_i``, gather over ``x_j``), within one matrix
  or between two row blocks.
* :func:`csr_dense_product`, :func:`csr_t_dense_product`: ``X B`` and ``X^T Q`` for a CSR
  ``X`` and thin dense ``B``, ``Q`` (the randomized SVD's products), without a CSC copy of X.
* :func:`take_columns`: ``X[:, cols]`` (one threaded pass to count, one to copy).
* :func:`column_stats`, :func:`weighted_column_deviations`, :func:`row_sq_norms`: per-gene
  range and stored count, weighted squared deviations, per-cell squared norms, in one pass over
  the stored entries without O(nnz) temporaries.

Parallel loops run over a *fixed* number of row blocks (:data:`ROW_BLOCKS`), each with its own
accumulator, summed in block order: the results do not depend on the number of threads. The
kernels themselves are serial and release the GIL; :func:`run_blocks` runs the blocks on a pool
of Python threads. (numba's ``parallel=True`` would do the same, but compiling its parallel
loops takes seconds per kernel on a new cache -- the first run of a new installation -- where a
serial kernel takes a fraction of a second.)
All inputs are used as given (int32 or int64 indices, float64 values): no copy of X is made.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from kofs._compute.jit import AVAILABLE, numba

__all__ = [
    "AVAILABLE",
    "ROW_BLOCKS",
    "candidate_dots",
    "cross_candidate_dots",
    "column_stats",
    "csr_dense_product",
    "csr_t_dense_product",
    "graph_gene_products",
    "ordered_sum",
    "row_bounds",
    "run_blocks",
    "take_columns",
    "row_sq_norms",
    "threads",
    "weighted_column_deviations",
]

#: Row blocks of the parallel reductions (fixed, so that results do not depend on threads).
ROW_BLOCKS = 16
#: Row blocks of ``X^T Q`` (each holds an m x l accumulator).
_T_BLOCKS = 4

if AVAILABLE:

    @numba.njit(cache=True, nogil=True)
    def _graph_rows(
        x_ptr, x_idx, x_val, s_ptr, s_idx, s_val, lo, hi, upper, buf, a
    ):  # pragma: no cover
        # rows lo..hi of sum_ij s_ij x_ig x_jg added to a (zeros); upper: S is symmetric,
        # visit the edges j >= i only (an edge j > i counts twice); buf: zeros of length m
        for i in range(lo, hi):
            for p in range(x_ptr[i], x_ptr[i + 1]):
                buf[x_idx[p]] = x_val[p]
            for q in range(s_ptr[i], s_ptr[i + 1]):
                j = s_idx[q]
                if upper and j < i:
                    continue
                w = s_val[q]
                if upper and j > i:
                    w = 2.0 * w
                for p in range(x_ptr[j], x_ptr[j + 1]):
                    g = x_idx[p]
                    a[g] += w * x_val[p] * buf[g]
            for p in range(x_ptr[i], x_ptr[i + 1]):
                buf[x_idx[p]] = 0.0

    @numba.njit(cache=True, nogil=True)
    def _take_rows_columns(
        ptr, idx, val, new, lo, hi, out_ptr, out_idx, out_val, fill
    ):  # pragma: no cover
        # rows lo..hi of X[:, cols] (new[g]: the new index of column g, -1 if not taken);
        # fill False: out_ptr[i + 1] = the entries kept in row i; True: write them
        # branch-free: every entry is written at the next free place and kept by moving on
        # (the columns taken are in no order a branch predictor could learn)
        for i in range(lo, hi):
            if not fill:
                w = 0
                for p in range(ptr[i], ptr[i + 1]):
                    w += new[idx[p]] >= 0
                out_ptr[i + 1] = w
                continue
            w = out_ptr[i]
            end = out_ptr[i + 1]
            for p in range(ptr[i], ptr[i + 1]):
                if w == end:
                    break
                c = new[idx[p]]
                out_idx[w] = c
                out_val[w] = val[p]
                w += c >= 0

    @numba.njit(cache=True, nogil=True)
    def _cross_dots_rows(
        a_ptr, a_idx, a_val, b_ptr, b_idx, b_val, rows, cand, mask, lo, hi, out, buf
    ):  # pragma: no cover
        # a_rows[q] . b_cand[q, t] where mask[q, t], for q in lo..hi: row i scattered into a
        # dense buffer (buf: zeros of length m), the candidate's stored entries gathered in
        # order (A = B, rows = all: candidate_dots)
        c = cand.shape[1]
        for q in range(lo, hi):
            i = rows[q]
            for p in range(a_ptr[i], a_ptr[i + 1]):
                buf[a_idx[p]] = a_val[p]
            for t in range(c):
                if mask[q, t]:
                    j = cand[q, t]
                    s = 0.0
                    for p in range(b_ptr[j], b_ptr[j + 1]):
                        s += b_val[p] * buf[b_idx[p]]
                    out[q, t] = s
            for p in range(a_ptr[i], a_ptr[i + 1]):
                buf[a_idx[p]] = 0.0

    @numba.njit(cache=True, nogil=True)
    def _csr_dense_rows(x_ptr, x_idx, x_val, B, lo, hi, out):  # pragma: no cover
        ell = B.shape[1]
        for i in range(lo, hi):
            for p in range(x_ptr[i], x_ptr[i + 1]):
                v = x_val[p]
                g = x_idx[p]
                for k in range(ell):
                    out[i, k] += v * B[g, k]

    @numba.njit(cache=True, nogil=True)
    def _csr_t_dense_rows(x_ptr, x_idx, x_val, Q, lo, hi, a):  # pragma: no cover
        # rows lo..hi of X^T Q added to a (m x l zeros)
        ell = Q.shape[1]
        for i in range(lo, hi):
            for p in range(x_ptr[i], x_ptr[i + 1]):
                v = x_val[p]
                g = x_idx[p]
                for k in range(ell):
                    a[g, k] += v * Q[i, k]

    @numba.njit(cache=True, nogil=True)
    def _column_stats(x_idx, x_val, hi, lo, count):  # pragma: no cover
        # hi: -inf, lo: inf, count: zeros on entry
        for p in range(x_idx.shape[0]):
            g = x_idx[p]
            v = x_val[p]
            if v > hi[g]:
                hi[g] = v
            if v < lo[g]:
                lo[g] = v
            count[g] += 1

    @numba.njit(cache=True, nogil=True)
    def _weighted_deviations(x_ptr, x_idx, x_val, w, mu, stored, w_stored):  # pragma: no cover
        # stored, w_stored: zeros on entry
        for i in range(x_ptr.shape[0] - 1):
            wi = w[i]
            for p in range(x_ptr[i], x_ptr[i + 1]):
                g = x_idx[p]
                dev = x_val[p] - mu[g]
                stored[g] += wi * dev * dev
                w_stored[g] += wi

    @numba.njit(cache=True, nogil=True)
    def _row_sq_norms(x_ptr, x_val, out):  # pragma: no cover
        for i in range(out.shape[0]):
            s = 0.0
            for p in range(x_ptr[i], x_ptr[i + 1]):
                s += x_val[p] * x_val[p]
            out[i] = s


def row_bounds(n: int, blocks: int) -> np.ndarray:
    """Boundaries of at most ``blocks`` near-equal row ranges of ``n`` rows."""
    return np.linspace(0, n, min(blocks, max(n, 1)) + 1).astype(np.int64)


def threads() -> int:
    """Threads of the compiled loops: numba's thread count (``numba.set_num_threads``,
    ``NUMBA_NUM_THREADS``; default the cores)."""
    return max(1, int(numba.get_num_threads())) if AVAILABLE else 1


def run_blocks(task: Callable[[int, int], Any], bounds: np.ndarray) -> list:
    """``task(lo, hi)`` for every range of ``bounds``, on :func:`threads` threads (the kernels
    release the GIL), results in range order. The ranges are fixed by the caller, so sums over
    them in this order do not depend on the number of threads."""
    ranges = [(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
    workers = min(threads(), len(ranges))
    if workers <= 1:
        return [task(a, b) for a, b in ranges]
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(lambda r: task(*r), ranges))


def ordered_sum(parts: list, shape) -> np.ndarray:
    """``0 + parts[0] + parts[1] + ...`` in this order (fixed rounding)."""
    out = np.zeros(shape)
    for part in parts:
        out += part
    return out


def _parts(X):
    """The CSR arrays as they are (no copy unless the values are not float64)."""
    return X.indptr, X.indices, np.asarray(X.data, dtype=np.float64)


def graph_gene_products(X, S, *, symmetric: bool = False) -> np.ndarray:
    """``diag(X^T S X)``: per gene ``sum_{i,j} s_ij x_ig x_jg`` (X, S canonical CSR).

    ``symmetric``: S is symmetric, so each off-diagonal edge is visited once and counted twice
    (half the work).
    """
    xp, xi, xv = _parts(X)
    sp_, si, sv = _parts(S)
    m = X.shape[1]
    upper = bool(symmetric)

    def rows(lo: int, hi: int) -> np.ndarray:
        a = np.zeros(m)
        _graph_rows(xp, xi, xv, sp_, si, sv, lo, hi, upper, np.zeros(m), a)
        return a

    return ordered_sum(run_blocks(rows, row_bounds(X.shape[0], ROW_BLOCKS)), m)


def take_columns(X, cols: np.ndarray):
    """``X[:, cols]`` of a canonical CSR ``X`` for increasing ``cols`` (canonical CSR, float64
    values): the matrix scipy's column indexing gives, in one threaded pass per step."""
    import scipy.sparse as sp

    xp, xi, xv = _parts(X)
    n, m = X.shape
    cols = np.asarray(cols, dtype=np.int64)
    new = np.full(m, -1, dtype=np.int64)
    new[cols] = np.arange(cols.size)
    bounds = row_bounds(n, ROW_BLOCKS)
    out_ptr = np.zeros(n + 1, dtype=np.int64)
    # the counting pass's unused outputs: int32 like the usual out_idx (one compiled signature)
    dummy_i, dummy_v = np.zeros(0, dtype=np.int32), np.zeros(0)
    run_blocks(
        lambda lo, hi: _take_rows_columns(
            xp, xi, xv, new, lo, hi, out_ptr, dummy_i, dummy_v, False
        ),
        bounds,
    )
    np.cumsum(out_ptr, out=out_ptr)
    index_type = np.int32 if max(cols.size, out_ptr[-1]) < 2**31 else np.int64
    out_idx = np.empty(out_ptr[-1], dtype=index_type)
    out_val = np.empty(out_ptr[-1])
    run_blocks(
        lambda lo, hi: _take_rows_columns(xp, xi, xv, new, lo, hi, out_ptr, out_idx, out_val, True),
        bounds,
    )
    A = sp.csr_matrix((out_val, out_idx, out_ptr.astype(index_type)), shape=(n, cols.size))
    A.has_canonical_format = True  # X's rows were, and the columns keep their order
    return A


def candidate_dots(X, cand: np.ndarray) -> np.ndarray:
    """``x_i . x_cand[i, t]`` for every row i and candidate t (X canonical CSR; (n, c) out)."""
    rows = np.arange(X.shape[0])
    return cross_candidate_dots(X, rows, X, cand, np.ones(np.shape(cand), dtype=np.bool_))


def cross_candidate_dots(A, rows: np.ndarray, B, cand: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``a_rows[q] . b_cand[q, t]`` where ``mask[q, t]`` (0 elsewhere), A and B canonical CSR
    with the same columns (the chunked search's pairs of blocks: the same arithmetic as
    :func:`candidate_dots`, so equal bit for bit)."""
    ap, ai, av = _parts(A)
    bp, bi, bv = _parts(B)
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    cand = np.ascontiguousarray(cand, dtype=np.int64)
    mask = np.ascontiguousarray(mask, dtype=np.bool_)
    out = np.zeros(cand.shape)
    m = A.shape[1]
    run_blocks(
        lambda lo, hi: _cross_dots_rows(
            ap, ai, av, bp, bi, bv, rows, cand, mask, lo, hi, out, np.zeros(m)
        ),
        row_bounds(rows.size, ROW_BLOCKS),
    )
    return out


def csr_dense_product(X, B: np.ndarray) -> np.ndarray:
    """``X B`` for a CSR ``X`` (n x m) and a dense ``B`` (m x l)."""
    xp, xi, xv = _parts(X)
    B = np.ascontiguousarray(B, dtype=np.float64)
    out = np.zeros((X.shape[0], B.shape[1]))
    run_blocks(
        lambda lo, hi: _csr_dense_rows(xp, xi, xv, B, lo, hi, out),
        row_bounds(X.shape[0], ROW_BLOCKS),
    )
    return out


def csr_t_dense_product(X, Q: np.ndarray) -> np.ndarray:
    """``X^T Q`` for a CSR ``X`` (n x m) and a dense ``Q`` (n x l), without transposing X."""
    xp, xi, xv = _parts(X)
    Q = np.ascontiguousarray(Q, dtype=np.float64)
    shape = (X.shape[1], Q.shape[1])

    def rows(lo: int, hi: int) -> np.ndarray:
        a = np.zeros(shape)
        _csr_t_dense_rows(xp, xi, xv, Q, lo, hi, a)
        return a

    return ordered_sum(run_blocks(rows, row_bounds(X.shape[0], _T_BLOCKS)), shape)


def column_stats(X) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per column of a CSR ``X``: max and min of the stored entries (-inf / inf when none) and
    their number."""
    _, xi, xv = _parts(X)
    m = X.shape[1]
    hi, lo, count = np.full(m, -np.inf), np.full(m, np.inf), np.zeros(m, dtype=np.int64)
    _column_stats(xi, xv, hi, lo, count)
    return hi, lo, count


def weighted_column_deviations(X, w: np.ndarray, mu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per column of a CSR ``X``: ``sum_stored w_i (x_ij - mu_j)^2`` and ``sum_stored w_i``."""
    xp, xi, xv = _parts(X)
    w = np.ascontiguousarray(w, dtype=np.float64)
    mu = np.ascontiguousarray(mu, dtype=np.float64)
    stored, w_stored = np.zeros(X.shape[1]), np.zeros(X.shape[1])
    _weighted_deviations(xp, xi, xv, w, mu, stored, w_stored)
    return stored, w_stored


def row_sq_norms(X) -> np.ndarray:
    """Squared L2 norm of every row of a CSR ``X``."""
    xp, _, xv = _parts(X)
    out = np.zeros(X.shape[0])
    _row_sq_norms(xp, xv, out)
    return out
