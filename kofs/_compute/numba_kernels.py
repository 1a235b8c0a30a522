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
* :func:`column_stats`, :func:`weighted_column_deviations`, :func:`row_sq_norms`: per-gene
  range and stored count, weighted squared deviations, per-cell squared norms, in one pass over
  the stored entries without O(nnz) temporaries.

Parallel loops run over a *fixed* number of row blocks (:data:`ROW_BLOCKS`), each with its own
accumulator, summed in block order: the results do not depend on the number of threads.
All inputs are used as given (int32 or int64 indices, float64 values): no copy of X is made.
"""

from __future__ import annotations

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
    "row_bounds",
    "row_sq_norms",
    "weighted_column_deviations",
]

#: Row blocks of the parallel reductions (fixed, so that results do not depend on threads).
ROW_BLOCKS = 16
#: Row blocks of ``X^T Q`` (each holds an m x l accumulator).
_T_BLOCKS = 4

if AVAILABLE:
    prange = numba.prange

    @numba.njit(cache=True, nogil=True, parallel=True)
    def _graph_gene_products(
        x_ptr, x_idx, x_val, s_ptr, s_idx, s_val, m, bounds, upper
    ):  # pragma: no cover
        # upper: S is symmetric, visit the edges j >= i only (an edge j > i counts twice)
        nb = bounds.shape[0] - 1
        acc = np.zeros((nb, m))
        for b in prange(nb):
            buf = np.zeros(m)
            a = acc[b]
            for i in range(bounds[b], bounds[b + 1]):
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
        out = np.zeros(m)
        for b in range(nb):
            out += acc[b]
        return out

    @numba.njit(cache=True, nogil=True, parallel=True)
    def _cross_candidate_dots(
        a_ptr, a_idx, a_val, b_ptr, b_idx, b_val, rows, cand, mask, m, bounds
    ):  # pragma: no cover
        # a_rows[q] . b_cand[q, t] where mask[q, t]: row i scattered into a dense buffer, the
        # candidate's stored entries gathered in order (A = B, rows = all: candidate_dots)
        r, c = cand.shape
        out = np.zeros((r, c))
        for blk in prange(bounds.shape[0] - 1):
            buf = np.zeros(m)
            for q in range(bounds[blk], bounds[blk + 1]):
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
        return out

    @numba.njit(cache=True, nogil=True, parallel=True)
    def _csr_dense(x_ptr, x_idx, x_val, B):  # pragma: no cover
        n = x_ptr.shape[0] - 1
        ell = B.shape[1]
        out = np.zeros((n, ell))
        for i in prange(n):
            for p in range(x_ptr[i], x_ptr[i + 1]):
                v = x_val[p]
                g = x_idx[p]
                for k in range(ell):
                    out[i, k] += v * B[g, k]
        return out

    @numba.njit(cache=True, nogil=True, parallel=True)
    def _csr_t_dense(x_ptr, x_idx, x_val, Q, m, bounds):  # pragma: no cover
        nb = bounds.shape[0] - 1
        ell = Q.shape[1]
        acc = np.zeros((nb, m, ell))
        for b in prange(nb):
            a = acc[b]
            for i in range(bounds[b], bounds[b + 1]):
                for p in range(x_ptr[i], x_ptr[i + 1]):
                    v = x_val[p]
                    g = x_idx[p]
                    for k in range(ell):
                        a[g, k] += v * Q[i, k]
        out = np.zeros((m, ell))
        for b in range(nb):
            out += acc[b]
        return out

    @numba.njit(cache=True, nogil=True)
    def _column_stats(x_idx, x_val, m):  # pragma: no cover
        hi = np.full(m, -np.inf)
        lo = np.full(m, np.inf)
        count = np.zeros(m, dtype=np.int64)
        for p in range(x_idx.shape[0]):
            g = x_idx[p]
            v = x_val[p]
            if v > hi[g]:
                hi[g] = v
            if v < lo[g]:
                lo[g] = v
            count[g] += 1
        return hi, lo, count

    @numba.njit(cache=True, nogil=True)
    def _weighted_deviations(x_ptr, x_idx, x_val, w, mu, m):  # pragma: no cover
        stored = np.zeros(m)
        w_stored = np.zeros(m)
        for i in range(x_ptr.shape[0] - 1):
            wi = w[i]
            for p in range(x_ptr[i], x_ptr[i + 1]):
                g = x_idx[p]
                dev = x_val[p] - mu[g]
                stored[g] += wi * dev * dev
                w_stored[g] += wi
        return stored, w_stored

    @numba.njit(cache=True, nogil=True)
    def _row_sq_norms(x_ptr, x_val):  # pragma: no cover
        n = x_ptr.shape[0] - 1
        out = np.zeros(n)
        for i in range(n):
            s = 0.0
            for p in range(x_ptr[i], x_ptr[i + 1]):
                s += x_val[p] * x_val[p]
            out[i] = s
        return out


def row_bounds(n: int, blocks: int) -> np.ndarray:
    """Boundaries of at most ``blocks`` near-equal row ranges of ``n`` rows (for prange)."""
    return np.linspace(0, n, min(blocks, max(n, 1)) + 1).astype(np.int64)


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
    return _graph_gene_products(
        xp, xi, xv, sp_, si, sv, X.shape[1], row_bounds(X.shape[0], ROW_BLOCKS), bool(symmetric)
    )


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
    return _cross_candidate_dots(
        ap, ai, av, bp, bi, bv, rows, cand, mask, A.shape[1], row_bounds(rows.size, ROW_BLOCKS)
    )


def csr_dense_product(X, B: np.ndarray) -> np.ndarray:
    """``X B`` for a CSR ``X`` (n x m) and a dense ``B`` (m x l)."""
    xp, xi, xv = _parts(X)
    return _csr_dense(xp, xi, xv, np.ascontiguousarray(B, dtype=np.float64))


def csr_t_dense_product(X, Q: np.ndarray) -> np.ndarray:
    """``X^T Q`` for a CSR ``X`` (n x m) and a dense ``Q`` (n x l), without transposing X."""
    xp, xi, xv = _parts(X)
    Q = np.ascontiguousarray(Q, dtype=np.float64)
    return _csr_t_dense(xp, xi, xv, Q, X.shape[1], row_bounds(X.shape[0], _T_BLOCKS))


def column_stats(X) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per column of a CSR ``X``: max and min of the stored entries (-inf / inf when none) and
    their number."""
    _, xi, xv = _parts(X)
    return _column_stats(xi, xv, X.shape[1])


def weighted_column_deviations(X, w: np.ndarray, mu: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per column of a CSR ``X``: ``sum_stored w_i (x_ij - mu_j)^2`` and ``sum_stored w_i``."""
    xp, xi, xv = _parts(X)
    w = np.ascontiguousarray(w, dtype=np.float64)
    mu = np.ascontiguousarray(mu, dtype=np.float64)
    return _weighted_deviations(xp, xi, xv, w, mu, X.shape[1])


def row_sq_norms(X) -> np.ndarray:
    """Squared L2 norm of every row of a CSR ``X``."""
    xp, _, xv = _parts(X)
    return _row_sq_norms(xp, xv)
