"""Compiled loops over CSR matrices for large single-cell data (numba; optional).

numba comes with pynndescent (the ``[sc]`` extra). Without it, :data:`AVAILABLE` is False and
the callers use their scipy.sparse formulation (same results, slower on large data).

* :func:`graph_gene_products`: ``sum_i sum_j s_ij x_ig x_jg`` for every gene ``g`` (the
  ``f^T S f`` of every gene at once): one pass over the graph's edges, scattering ``x_i`` into
  a dense buffer of length m and gathering over the stored entries of its neighbours ``x_j``;
  cost ``sum_edges nnz(x_j)``, memory O(m).
* :func:`pair_dots`: ``x_i . x_j`` for a list of row pairs (sorted-index merge).
"""

from __future__ import annotations

import numpy as np

__all__ = ["AVAILABLE", "graph_gene_products", "pair_dots"]

try:
    import numba

    AVAILABLE = True
except ImportError:  # pragma: no cover - exercised only without the [sc] extra
    AVAILABLE = False

if AVAILABLE:

    @numba.njit(cache=True, nogil=True)
    def _graph_gene_products(x_ptr, x_idx, x_val, s_ptr, s_idx, s_val, m):  # pragma: no cover
        n = x_ptr.shape[0] - 1
        acc = np.zeros(m)
        buf = np.zeros(m)
        for i in range(n):
            for p in range(x_ptr[i], x_ptr[i + 1]):
                buf[x_idx[p]] = x_val[p]
            for q in range(s_ptr[i], s_ptr[i + 1]):
                j = s_idx[q]
                w = s_val[q]
                for p in range(x_ptr[j], x_ptr[j + 1]):
                    g = x_idx[p]
                    acc[g] += w * x_val[p] * buf[g]
            for p in range(x_ptr[i], x_ptr[i + 1]):
                buf[x_idx[p]] = 0.0
        return acc

    @numba.njit(cache=True, nogil=True)
    def _pair_dots(x_ptr, x_idx, x_val, rows, cols):  # pragma: no cover
        out = np.zeros(rows.shape[0])
        for t in range(rows.shape[0]):
            a, b = rows[t], cols[t]
            p, pe = x_ptr[a], x_ptr[a + 1]
            q, qe = x_ptr[b], x_ptr[b + 1]
            s = 0.0
            while p < pe and q < qe:
                ia, ib = x_idx[p], x_idx[q]
                if ia == ib:
                    s += x_val[p] * x_val[q]
                    p += 1
                    q += 1
                elif ia < ib:
                    p += 1
                else:
                    q += 1
            out[t] = s
        return out


def graph_gene_products(X, S) -> np.ndarray:
    """``diag(X^T S X)``: per gene ``sum_{i,j} s_ij x_ig x_jg`` (X, S canonical CSR)."""
    return _graph_gene_products(
        X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data.astype(np.float64),
        S.indptr.astype(np.int64), S.indices.astype(np.int64), S.data.astype(np.float64),
        X.shape[1],
    )  # fmt: skip


def pair_dots(X, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """``x_rows[t] . x_cols[t]`` for every pair t (X canonical CSR: sorted indices)."""
    return _pair_dots(
        X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data.astype(np.float64),
        np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64),
    )  # fmt: skip
