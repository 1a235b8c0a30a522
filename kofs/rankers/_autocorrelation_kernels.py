"""Array kernels of graph autocorrelation: Hotspot's statistic under a count null, Moran's I.

**Hotspot** (DeTomaso & Yosef, "Hotspot identifies informative gene modules across modalities
of single-cell genomics", Cell Systems 12:446, 2021). For gene j with counts ``x_ij``, cell
totals ``s_i``, ``p_j = t_j / T`` and the depth-adjusted null mean ``mu_ij = s_i p_j``, the
local autocorrelation on a symmetric cell graph ``W`` (no self-loops) is

    H_j = sum_{i,k} w_ik a_ij a_kj,    a_ij = (x_ij - mu_ij) / sqrt(mu_ij)

(Poisson-scaled residuals). Under the null of independent cells with negative binomial counts
of mean ``mu_ij`` and the gene's dispersion ``1/theta_j`` (Hotspot's ``danb`` model, its
moment estimate ``1/theta_j = (sum_i (x_ij - mu_ij)^2 - t_j) / (p_j^2 sum_i s_i^2)``, at least
0), ``E[H_j] = 0`` and, exactly,

    Var(H_j) = 2 sum_{i,k} w_ik^2 v_ij v_kj,   v_ij = Var(a_ij) = 1 + mu_ij / theta_j,

so ``Z_j = H_j / sqrt(Var(H_j))`` says how far the gene's smoothness on the graph is beyond
what counts alone give (Hotspot's centred statistic scales each residual by its own negative
binomial deviation and takes ``Var = 2 sum w^2``; with Poisson scaling both the statistic and
its variance stay sums over the stored entries). Everything is sparse:

* ``sum w_ik a_ij a_kj = T1_j / p_j - 2 (X^T u)_j + p_j c`` with ``T1 = diag(X^T W' X)``,
  ``W' = D^{-1/2} W D^{-1/2}`` (``D = diag(s)``), ``u = D^{-1/2} W s^{1/2}``,
  ``c = s^{1/2 T} W s^{1/2}``;
* ``Var(H_j) = 2 (A + q_j B + q_j^2 C)`` with ``q_j = p_j / theta_j``, ``A = sum w^2``,
  ``B = 2 sum_i s_i sum_k w_ik^2``, ``C = s^T (W o W) s``.

**Moran's I** (scanpy's ``sc.metrics.morans_i``): ``I_j = (N / sum w) sum_{i,k} w_ik z_ij z_kj
/ sum_i z_ij^2`` with ``z = x - mean``, on the values as given (log-normalised).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from kofs._compute import chunked, numba_kernels
from kofs._compute.blocks import as_csr
from kofs._compute.chunked import is_dask
from kofs._compute.counts import Counts, take_columns
from kofs._compute.matrix import constant_genes
from kofs.rankers._spectral_kernels import CENTRING_LIMIT, _col_blocks

__all__ = ["hotspot_statistic", "morans_i", "normal_statistic"]


def _graph_term(
    X, S: sp.csr_matrix, *, symmetric: bool = False, cols: np.ndarray | None = None
) -> np.ndarray:
    """``diag(X^T S X)`` of a CSR or dask ``X`` (compiled loop when available), of the columns
    ``cols`` (increasing) only when given."""
    if cols is not None:
        X = X[:, cols] if is_dask(X) else take_columns(X, cols)
    if is_dask(X):
        return chunked.graph_term(X, S)
    if numba_kernels.AVAILABLE:
        return numba_kernels.graph_gene_products(X, S, symmetric=symmetric)
    out = np.zeros(X.shape[1])
    step = max(1, 2**26 // max(1, X.shape[1]))
    for a in range(0, X.shape[0], step):
        rows = slice(a, min(X.shape[0], a + step))
        out += np.asarray(X[rows].multiply(S[rows] @ X).sum(axis=0)).ravel()
    return out


def _t_dot(X, v: np.ndarray) -> np.ndarray:
    """``X^T v``."""
    if is_dask(X):
        return chunked.left_product(v[None, :], X).ravel()
    return np.asarray(X.T @ v).ravel()


def _square_sums(X) -> np.ndarray:
    if is_dask(X):
        return chunked.chunk_sum(X, _square_chunk)
    return np.bincount(X.indices, weights=X.data * X.data, minlength=X.shape[1])


def _square_chunk(B, start, stop):
    A = as_csr(B)
    return np.bincount(A.indices, weights=A.data * A.data, minlength=A.shape[1])


def hotspot_statistic(
    counts: Counts, W: sp.csr_matrix, cols: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Hotspot's local autocorrelation ``H`` and its z-score under the count null (module
    docstring), every gene (or every gene of ``cols``) at once.

    Parameters
    ----------
    counts : Counts
    W : csr_matrix of shape (n_cells, n_cells)
        Symmetric, non-negative, no self-loops (cells without counts are left out).
    cols : ndarray of int, optional
        The genes (columns) to score; default all.

    Returns
    -------
    z, h : ndarray of shape (n_genes,) or (len(cols),)
        NaN for genes without counts.
    """
    sel = slice(None) if cols is None else np.asarray(cols, dtype=np.int64)
    s = counts.cell_totals
    p = counts.gene_fractions[sel]
    live = (s > 0).astype(np.float64)
    W = sp.csr_matrix(sp.diags(live) @ W @ sp.diags(live))
    W.sort_indices()
    root = np.sqrt(s)
    inv_root = np.where(s > 0, 1.0 / np.where(s > 0, root, 1.0), 0.0)
    W_scaled = sp.csr_matrix(sp.diags(inv_root) @ W @ sp.diags(inv_root))
    W_scaled.sort_indices()
    X = counts.X
    t1 = _graph_term(X, W_scaled, symmetric=True, cols=None if cols is None else sel)
    u = inv_root * (W @ root)
    cross = _t_dot(X, u)[sel]
    c = float(root @ (W @ root))
    with np.errstate(divide="ignore", invalid="ignore"):
        h = t1 / p - 2.0 * cross + p * c
    # null variance: negative binomial with the gene's moment dispersion
    s2 = float(s @ s)
    xs = counts.depth_sums[sel]
    x2 = counts.square_sums[sel]
    t = counts.gene_totals[sel]
    with np.errstate(divide="ignore", invalid="ignore"):
        excess = x2 - 2.0 * p * xs + p * p * s2 - t
        q = np.maximum(excess, 0.0) / (p * s2)
    Wsq = W.multiply(W).tocsr()
    A = float(Wsq.sum())
    B = 2.0 * float(s @ np.asarray(Wsq.sum(axis=1)).ravel())
    C = float(s @ (Wsq @ s))
    var = 2.0 * (A + q * B + q * q * C)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = h / np.sqrt(var)
    bad = (t <= 0) | ~np.isfinite(z)
    z[bad] = np.nan
    h[bad] = np.nan
    return z, h


def normal_statistic(X, W: sp.csr_matrix) -> np.ndarray:
    """Hotspot's statistic under its normal model, for values that are not counts: the
    z-scored values ``z_ij = (x_ij - mean_j) / sd_j`` give ``H_j = sum w_ik z_ij z_kj`` and
    ``Z_j = H_j / sqrt(2 sum w_ik^2)`` (symmetric ``W``). NaN for a constant column."""
    n = X.shape[0]
    W = sp.csr_matrix(W, dtype=np.float64)
    W.sort_indices()
    deg = np.asarray(W.sum(axis=1)).ravel()
    total = float(deg.sum())
    if is_dask(X) or sp.issparse(X):
        A = X if is_dask(X) else as_csr(X)
        mean = _t_dot(A, np.ones(n)) / n
        xwx = _graph_term(A, W, symmetric=True)
        xd = _t_dot(A, deg)
        ss = _square_sums(A) - n * mean * mean
    else:
        A = np.asarray(X, dtype=np.float64)
        mean = A.mean(axis=0)
        xwx = np.einsum("ij,ij->j", A, np.asarray(W @ A))
        xd = A.T @ deg
        ss = ((A - mean) ** 2).sum(axis=0)
    h = xwx - 2.0 * mean * xd + mean * mean * total
    var_w = 2.0 * float(W.multiply(W).sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        z = h / (ss / n) / np.sqrt(var_w)
    z[~(ss > 0)] = np.nan
    return z


def morans_i(X, W: sp.csr_matrix) -> np.ndarray:
    """Moran's I of every column of ``X`` (dense, CSR or dask) on the graph ``W`` (any
    non-negative weights; scanpy's ``sc.metrics.morans_i``). NaN for a constant column."""
    n = X.shape[0]
    W = sp.csr_matrix(W, dtype=np.float64)
    W.sort_indices()
    total = float(W.sum())
    rows = np.asarray(W.sum(axis=1)).ravel()
    cols = np.asarray(W.sum(axis=0)).ravel()
    if is_dask(X) or sp.issparse(X):
        A = X if is_dask(X) else as_csr(X)
        sums = _t_dot(A, np.ones(n))
        mean = sums / n
        xwx = _graph_term(A, W)
        xr = _t_dot(A, rows)
        xc = _t_dot(A, cols)
        ss = _square_sums(A) - n * mean * mean
    else:
        A = np.asarray(X, dtype=np.float64)
        mean = A.mean(axis=0)
        xwx = np.einsum("ij,ij->j", A, np.asarray(W @ A))
        xr, xc = A.T @ rows, A.T @ cols
        ss = ((A - mean) ** 2).sum(axis=0)
    num = xwx - mean * (xr + xc) + mean * mean * total
    # the expansions lose the digits of a gene with a large offset (mean >> spread, so no
    # zeros): such genes are centred explicitly (as the spectral kernels do)
    with np.errstate(invalid="ignore"):
        bad = np.flatnonzero((mean != 0) & ~(n * mean * mean <= CENTRING_LIMIT * ss))
    for block in _col_blocks(n, bad.size):
        cols = bad[block]
        F = X[:, cols].compute() if is_dask(X) else X[:, cols]
        Z = (F.toarray() if sp.issparse(F) else np.asarray(F, dtype=np.float64)) - mean[cols]
        num[cols] = np.einsum("ij,ij->j", Z, np.asarray(W @ Z))
        ss[cols] = np.einsum("ij,ij->j", Z, Z)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (n / total) * num / ss
    # constant to rounding (the project's rule, constant_genes): log-normalised values of cells
    # whose counts are proportional differ in the 16th digit only, and the cancellations of
    # num and ss turned that noise into scores of order 1 (dense and chunked unlike)
    out[~(ss > 0) | constant_genes(X)] = np.nan
    return out
