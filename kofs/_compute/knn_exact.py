"""Exact kNN search on a sparse (CSR) matrix by a compiled loop (numba; optional).

numba is in the ``[sc]`` extra (compiled code cached on disk, :mod:`kofs._compute.jit`). Without it,
:data:`AVAILABLE` is False and :func:`kofs.knowledge.neighbours.knn_squared_distances`
uses its block formulation (scipy sparse products and ``argpartition``; same result, slower on
many samples).

For every sample ``i`` the dot products ``x_i . x_j`` with all samples are accumulated in a
dense buffer of length n by walking the stored entries of ``x_i`` and, for each of its genes,
the samples storing that gene (the columns of ``X``, CSC): cost ``sum_g nnz_g^2`` over all
samples (the sparse ``X X^T`` without forming it), memory O(n) per thread. The squared
distances ``|x_i|^2 + |x_j|^2 - 2 x_i . x_j`` are then clipped at 0 and snapped to 0 within
rounding (:func:`kofs._compute.blocks.snap_zero`), ordered by their float32 rounding
(:func:`kofs._compute.blocks.order_key`) and, among equal keys, by the lower index: exactly the rule
of the block search. The k best of a row are kept in a sorted array of length k while the
samples are scanned in index order (a candidate replaces the worst only with a strictly
smaller key, so the lower index wins ties).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["AVAILABLE", "sparse_knn"]

from kofs._compute.jit import AVAILABLE, numba

#: Rows handled by one task on a thread (each task owns one dense buffer of length n).
_ROWS_PER_TASK = 64

if AVAILABLE:

    @numba.njit(cache=True, nogil=True)
    def _knn_rows(
        lo,
        hi,
        x_ptr,
        x_idx,
        x_val,
        c_ptr,
        c_idx,
        c_val,
        norms,
        cols,
        vals,
        acc,
        best_key,
        best_idx,
        best_d2,
    ):  # pragma: no cover
        # acc: zeros of length n; best_*: buffers of length k (float32, int64, float64)
        n = norms.shape[0]
        k = best_key.shape[0]
        for i in range(lo, hi):
            for p in range(x_ptr[i], x_ptr[i + 1]):
                g = x_idx[p]
                v = x_val[p]
                for q in range(c_ptr[g], c_ptr[g + 1]):
                    acc[c_idx[q]] += v * c_val[q]
            ni = norms[i]
            filled = 0
            for j in range(n):
                d2 = ni + norms[j] - 2.0 * acc[j]
                acc[j] = 0.0
                if j == i:
                    continue
                if d2 < 0.0:
                    d2 = 0.0
                if d2 <= 1e-12 * (ni + norms[j]):
                    d2 = 0.0
                key = np.float32(d2)
                if filled == k and key >= best_key[k - 1]:
                    continue
                # insert after every kept entry with a key <= key (they have lower indices)
                pos = filled if filled < k else k - 1
                while pos > 0 and best_key[pos - 1] > key:
                    if pos < k:
                        best_key[pos] = best_key[pos - 1]
                        best_idx[pos] = best_idx[pos - 1]
                        best_d2[pos] = best_d2[pos - 1]
                    pos -= 1
                best_key[pos] = key
                best_idx[pos] = j
                best_d2[pos] = d2
                if filled < k:
                    filled += 1
            for t in range(k):
                cols[i, t] = best_idx[t]
                vals[i, t] = best_d2[t]


def sparse_knn(X, k: int, norms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact k nearest other rows of a CSR ``X``: (indices, squared distances), both (n, k),
    each row ordered by (distance, index). ``norms``: squared row norms."""
    A = sp.csr_matrix(X, dtype=np.float64)
    if not A.has_canonical_format:
        A = A.copy()
        A.sum_duplicates()
    from kofs._compute.numba_kernels import run_blocks

    C = A.tocsc()
    n = A.shape[0]
    x_ptr, x_idx = A.indptr.astype(np.int64), A.indices.astype(np.int64)
    c_ptr, c_idx = C.indptr.astype(np.int64), C.indices.astype(np.int64)
    norms = np.asarray(norms, dtype=np.float64)
    cols = np.empty((n, k), dtype=np.int64)
    vals = np.empty((n, k))
    run_blocks(
        lambda lo, hi: _knn_rows(
            lo, hi, x_ptr, x_idx, A.data, c_ptr, c_idx, C.data, norms, cols, vals,
            np.zeros(n), np.empty(k, dtype=np.float32), np.empty(k, dtype=np.int64), np.empty(k)
        ),
        np.append(np.arange(0, n, _ROWS_PER_TASK), n),
    )  # fmt: skip
    return cols, vals
