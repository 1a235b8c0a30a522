"""Array kernels of the count rankers (no ids, no I/O): Pearson-residual variance, binomial
deviance, seurat_v3 standardised variance (with its loess), all on :class:`~kofs._compute.counts.Counts`.

Every kernel visits the stored entries only: the implicit zeros of a gene are added back in
closed form (deviance, seurat_v3) or as one sum over the *distinct* cell totals (Pearson
residuals: a zero's residual depends on the cell only through its total, and counts have few
distinct totals). Sparse and chunked (dask) counts give the same values to rounding.

References
----------
Lause, Berens & Kobak, "Analytic Pearson residuals for normalization of single-cell RNA-seq
UMI data", Genome Biology 22:258 (2021); scanpy ``experimental.pp.highly_variable_genes(
flavor="pearson_residuals")``.
Townes, Hicks, Aryee & Irizarry, "Feature selection and dimension reduction for single-cell
RNA-Seq based on a multinomial model", Genome Biology 20:295 (2019) (binomial deviance).
Stuart et al., "Comprehensive integration of single-cell data", Cell 177:1888 (2019) (the
``vst`` / seurat_v3 variance); scanpy ``highly_variable_genes(flavor="seurat_v3")``.
Cleveland & Devlin, "Locally weighted regression", JASA 83:596 (1988) (loess).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from kofs._compute.blocks import as_csr
from kofs._compute.chunked import chunk_sum, is_dask
from kofs._compute.counts import Counts
from kofs._compute.jit import AVAILABLE as _COMPILED
from kofs._compute.jit import numba

__all__ = [
    "binomial_deviance",
    "loess",
    "pearson_residual_variance",
    "seurat_v3_variance",
]

#: Bytes of the (distinct totals x genes) block of zero residuals held at a time.
_BLOCK_BYTES = 64 * 2**20
#: Stored entries handled per vectorised step of the per-entry sums.
_STEP = 4_000_000


def _residual(x: np.ndarray, mu: np.ndarray, theta: float, clip: float) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        r = (x - mu) / np.sqrt(mu + mu * mu / theta)
    r = np.where(mu > 0, r, 0.0)
    return np.clip(r, -clip, clip)


if _COMPILED:

    @numba.njit(cache=True, nogil=True)
    def _zero_sums(u, cnt, p, theta, clip, lo, hi, z1, z2):  # pragma: no cover
        for j in range(lo, hi):
            a = 0.0
            b = 0.0
            for t in range(u.shape[0]):
                mu = u[t] * p[j]
                if mu > 0:
                    r = -mu / math.sqrt(mu + mu * mu / theta)
                    if r < -clip:
                        r = -clip
                    a += cnt[t] * r
                    b += cnt[t] * r * r
            z1[j] = a
            z2[j] = b


def _pearson_zeros(u, cnt, p, theta, clip):
    """Per gene: ``sum_t cnt_t r0(u_t p_j)`` and ``sum_t cnt_t r0^2`` (cells with total u_t)."""
    m = p.size
    if _COMPILED:
        from kofs._compute.numba_kernels import ROW_BLOCKS, row_bounds, run_blocks

        z1, z2 = np.empty(m), np.empty(m)
        c = cnt.astype(np.float64)
        th, cl = float(theta), float(clip)
        run_blocks(
            lambda lo, hi: _zero_sums(u, c, p, th, cl, lo, hi, z1, z2), row_bounds(m, ROW_BLOCKS)
        )
        return z1, z2
    z1, z2 = np.zeros(m), np.zeros(m)
    step = max(1, _BLOCK_BYTES // (8 * max(m, 1)))
    for a in range(0, u.size, step):
        r0 = _residual(np.zeros(1), np.outer(u[a : a + step], p), theta, clip)
        c = cnt[a : a + step].astype(np.float64)
        z1 += c @ r0
        z2 += c @ (r0 * r0)
    return z1, z2


if _COMPILED:

    @numba.njit(cache=True, nogil=True)
    def _stored_sums(ptr, idx, val, s, p, theta, clip, lo, hi, acc):  # pragma: no cover
        # rows lo..hi added to acc (2 x m zeros); min/max written out as numba's builtins
        # compute them (max(a, b) = b if b > a else a)
        for i in range(lo, hi):
            for q in range(ptr[i], ptr[i + 1]):
                j = idx[q]
                mu = s[i] * p[j]
                if mu <= 0:
                    continue
                sd = math.sqrt(mu + mu * mu / theta)
                r = (val[q] - mu) / sd
                r = -clip if -clip > r else r
                r = clip if clip < r else r
                r0 = -mu / sd
                r0 = -clip if -clip > r0 else r0
                acc[0, j] += r - r0
                acc[1, j] += r * r - r0 * r0


def _pearson_stored(A: sp.csr_matrix, s: np.ndarray, p: np.ndarray, theta: float, clip: float):
    """Per gene: sum over the stored entries of ``r - r0`` and ``r^2 - r0^2`` (``r0``: the
    residual the entry would have as a zero)."""
    if _COMPILED:
        from kofs._compute.numba_kernels import ROW_BLOCKS, ordered_sum, row_bounds, run_blocks

        val = np.asarray(A.data, dtype=np.float64)
        th, cl = float(theta), float(clip)

        def rows(lo: int, hi: int) -> np.ndarray:
            acc = np.zeros((2, A.shape[1]))
            _stored_sums(A.indptr, A.indices, val, s, p, th, cl, lo, hi, acc)
            return acc

        return ordered_sum(run_blocks(rows, row_bounds(A.shape[0], ROW_BLOCKS)), (2, A.shape[1]))
    m = A.shape[1]
    d1, d2 = np.zeros(m), np.zeros(m)
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    for a in range(0, A.nnz, _STEP):
        b = min(A.nnz, a + _STEP)
        j = A.indices[a:b]
        mu = s[rows[a:b]] * p[j]
        r = _residual(A.data[a:b], mu, theta, clip)
        r0 = _residual(np.zeros(b - a), mu, theta, clip)
        d1 += np.bincount(j, weights=r - r0, minlength=m)
        d2 += np.bincount(j, weights=r * r - r0 * r0, minlength=m)
    return np.stack([d1, d2])


def _pearson_chunk(B, start, stop, s, p, theta, clip):
    return _pearson_stored(as_csr(B), s[start:stop], p, theta, clip)


def pearson_residual_variance(
    counts: Counts, *, theta: float = 100.0, clip: float | None = None
) -> np.ndarray:
    """Variance over cells of the clipped analytic Pearson residuals of every gene.

    ``r_ij = (x_ij - mu_ij) / sqrt(mu_ij + mu_ij^2 / theta)`` with ``mu_ij = s_i t_j / T``
    (cell total ``s_i``, gene total ``t_j``, grand total ``T``), clipped to ``[-clip, clip]``
    (default ``sqrt(n)``); the result is the population variance ``(1/n) sum_i (r_ij -
    mean_j)^2`` (Lause et al. 2021, eqs. 3-5; scanpy's ``residual_variances``). A cell without
    counts has residual 0.

    Parameters
    ----------
    counts : Counts
    theta : float
        Overdispersion of the null model (100: the paper's choice for UMI data).
    clip : float, optional

    Returns
    -------
    ndarray of shape (n_genes,)
    """
    n, m = counts.X.shape
    clip = float(np.sqrt(n)) if clip is None else float(clip)
    s, p = counts.cell_totals, counts.gene_fractions
    # zeros: every cell contributes r0(s_i p_j); summed over the distinct totals
    u, cnt = np.unique(s, return_counts=True)
    z1, z2 = _pearson_zeros(u, cnt, p, theta, clip)
    if is_dask(counts.X):
        d = chunk_sum(counts.X, _pearson_chunk, s, p, theta, clip)
    else:
        d = _pearson_stored(counts.X, s, p, theta, clip)
    mean = (z1 + d[0]) / n
    return np.maximum((z2 + d[1]) / n - mean * mean, 0.0)


def _deviance_stored(A: sp.csr_matrix, s: np.ndarray, p: np.ndarray):
    """Per gene: the stored entries' deviance terms and the sum of their cells' totals."""
    m = A.shape[1]
    dev, lib = np.zeros(m), np.zeros(m)
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    for a in range(0, A.nnz, _STEP):
        b = min(A.nnz, a + _STEP)
        j = A.indices[a:b]
        y = A.data[a:b]
        ni = s[rows[a:b]]
        mu = ni * p[j]
        rest = ni - y
        with np.errstate(divide="ignore", invalid="ignore"):
            term = y * np.log(y / mu) + np.where(rest > 0, rest * np.log(rest / (ni - mu)), 0.0)
        dev += np.bincount(j, weights=term, minlength=m)
        lib += np.bincount(j, weights=ni, minlength=m)
    return np.stack([dev, lib])


def _deviance_chunk(B, start, stop, s, p):
    return _deviance_stored(as_csr(B), s[start:stop], p)


def binomial_deviance(counts: Counts) -> np.ndarray:
    """Binomial deviance of every gene against a constant fraction of each cell's counts.

    ``D_j = 2 sum_i [ y_ij log(y_ij / mu_ij) + (s_i - y_ij) log((s_i - y_ij) / (s_i - mu_ij)) ]``
    with ``mu_ij = s_i p_j``, ``p_j = t_j / T`` (Townes et al. 2019, "Feature selection with
    deviance"; scry's ``devianceFeatureSelection``, binomial family). A zero contributes
    ``-2 s_i log(1 - p_j)``, summed in closed form. Higher = more variable than the model.

    Returns
    -------
    ndarray of shape (n_genes,)
    """
    s, p = counts.cell_totals, counts.gene_fractions
    if is_dask(counts.X):
        dev, lib = chunk_sum(counts.X, _deviance_chunk, s, p)
    else:
        dev, lib = _deviance_stored(counts.X, s, p)
    with np.errstate(divide="ignore", invalid="ignore"):
        zeros = -np.log1p(-p) * (counts.total - lib)
    zeros = np.where(p < 1, zeros, 0.0)
    return 2.0 * (dev + zeros)


def loess(x: np.ndarray, y: np.ndarray, *, span: float = 0.3, degree: int = 2) -> np.ndarray:
    """Fitted values of a loess curve of ``y`` on ``x`` (one predictor), computed directly.

    At every ``x_0``: the ``q = floor(span * n)`` nearest points, tricube weights ``(1 -
    (|x - x_0| / h)^3)^3`` with ``h`` the distance to the q-th nearest, and a weighted least
    squares polynomial of ``degree`` in ``x - x_0``; the fit is its value at ``x_0``
    (Cleveland & Devlin 1988). This is scikit-misc's ``loess(x, y, span, degree)`` with
    ``surface="direct"``; scikit-misc's default (``"interpolate"``) evaluates the same local
    fits on the vertices of a k-d tree and interpolates between them.

    Parameters
    ----------
    x, y : ndarray of shape (n,)
    span : float in (0, 1]
    degree : {1, 2}

    Returns
    -------
    ndarray of shape (n,)
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n = x.size
    if n == 0:
        return np.zeros(0)
    # a window of at least degree + 1 points, but never more than there are (fewer than
    # degree + 1 points: the degenerate windows below are solved by least squares)
    q = min(n, max(degree + 1, int(np.floor(span * n))))
    order = np.argsort(x, kind="stable")
    xs, ys = x[order], y[order]
    # the q nearest of every point form a window [lo, lo + q) of the sorted x
    lo = np.zeros(n, dtype=np.int64)
    a = 0
    for i in range(n):
        while a + q < n and xs[i] - xs[a] > xs[a + q] - xs[i]:
            a += 1
        lo[i] = a
    fitted = np.empty(n)
    block = max(1, (16 * 2**20) // (8 * q))
    offsets = np.arange(q)
    for start in range(0, n, block):
        idx = np.arange(start, min(n, start + block))
        win = lo[idx, None] + offsets[None, :]
        dx = xs[win] - xs[idx, None]
        h = np.maximum(np.abs(dx[:, 0]), np.abs(dx[:, -1]))
        h = np.where(h > 0, h, 1.0)
        w = np.clip(1.0 - (np.abs(dx) / h[:, None]) ** 3, 0.0, None) ** 3
        # normal equations from the weighted moments sum w dx^k (k <= 2 degree) and sum w y dx^k
        wy = w * ys[win]
        moments, rhs = [w.sum(axis=1)], [wy.sum(axis=1)]
        power = np.ones_like(dx)
        for k in range(1, 2 * degree + 1):
            power *= dx
            moments.append((w * power).sum(axis=1))
            if k <= degree:
                rhs.append((wy * power).sum(axis=1))
        G = np.stack([[moments[a + b] for b in range(degree + 1)] for a in range(degree + 1)])
        G = np.moveaxis(G, 2, 0)  # (b, degree+1, degree+1)
        r = np.stack(rhs, axis=1)
        coef = np.empty_like(r)
        solvable = np.abs(np.linalg.det(G)) > 0
        if solvable.any():
            coef[solvable] = np.linalg.solve(G[solvable], r[solvable][:, :, None])[:, :, 0]
        for i in np.flatnonzero(~solvable):  # degenerate windows (ties): least squares
            coef[i] = np.linalg.lstsq(G[i], r[i], rcond=None)[0]
        fitted[idx] = coef[:, 0]
    out = np.empty(n)
    out[order] = fitted
    return out


def _seurat_stored(A: sp.csr_matrix, clip_val: np.ndarray):
    m = A.shape[1]
    v = np.minimum(A.data, clip_val[A.indices])
    return np.stack(
        [
            np.bincount(A.indices, weights=v, minlength=m),
            np.bincount(A.indices, weights=v * v, minlength=m),
        ]
    )


def _seurat_chunk(B, start, stop, clip_val):
    return _seurat_stored(as_csr(B), clip_val)


def _moments(counts: Counts) -> tuple[np.ndarray, np.ndarray]:
    """Per-gene mean and unbiased variance (ddof 1) of the counts."""
    n = counts.X.shape[0]
    mean = counts.gene_totals / n
    var = (counts.square_sums - n * mean * mean) / max(n - 1, 1)
    return mean, np.maximum(var, 0.0)


def seurat_v3_variance(counts: Counts, *, span: float = 0.3) -> np.ndarray:
    """The seurat_v3 ("vst") standardised variance of every gene.

    ``log10`` of the genes' variances (ddof 1) is regressed on ``log10`` of their means by
    :func:`loess` (degree 2, ``span``) over the genes with a positive variance, giving an
    expected standard deviation ``sigma_j = sqrt(10^fit_j)``; counts are clipped at
    ``mean_j + sqrt(n) sigma_j`` and the result is the variance of ``(x_ij - mean_j) /
    sigma_j`` over cells (ddof 1) with the clipped values (Stuart et al. 2019; scanpy's
    ``variances_norm``). Genes without variance keep ``sigma = 1``.

    Returns
    -------
    ndarray of shape (n_genes,)
    """
    n = counts.X.shape[0]
    mean, var = _moments(counts)
    fit = np.zeros(mean.size)
    keep = var > 0
    if keep.any():
        fit[keep] = loess(np.log10(mean[keep]), np.log10(var[keep]), span=span, degree=2)
    sigma = np.sqrt(10.0**fit)
    clip_val = sigma * np.sqrt(n) + mean
    if is_dask(counts.X):
        s1, s2 = chunk_sum(counts.X, _seurat_chunk, clip_val)
    else:
        s1, s2 = _seurat_stored(counts.X, clip_val)
    return (n * mean * mean + s2 - 2.0 * s1 * mean) / ((n - 1) * sigma * sigma)
