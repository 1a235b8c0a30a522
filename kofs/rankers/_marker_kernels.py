"""Array kernels of the per-group marker tests (one group against the rest), as scanpy's
``rank_genes_groups`` defines them (no ids, no I/O).

For every group g and gene j, on log-normalised values:

* ``t-test``: Welch's t of the group against the rest, from the groups' means and unbiased
  variances (``scipy.stats.ttest_ind_from_stats(..., equal_var=False)``, two-sided p); a NaN
  statistic (equal means, zero variances) becomes 0 and its p 1 (scanpy's ``method="t-test"``);
* ``wilcoxon``: the rank-sum z of the group against the rest without tie correction,
  ``z = (R_g - n_g (n + 1) / 2) / sqrt(n_g (n - n_g) (n + 1) / 12)``, two-sided normal p
  (scanpy's ``method="wilcoxon"``, ``tie_correct=False``). Ranks are averaged over ties; on
  non-negative sparse data all zeros of a gene share one rank, so only the stored values are
  sorted;
* ``logfoldchanges = log2((expm1(mean_g) + 1e-9) / (expm1(mean_rest) + 1e-9))`` (scanpy's
  approximation from means of log values);
* ``pvals_adj``: Benjamini-Hochberg within each group.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from kofs._compute.blocks import as_csr
from kofs._compute.chunked import chunk_sum, is_dask

__all__ = ["MARKER_METHODS", "group_tests"]

MARKER_METHODS = ("t-test", "wilcoxon")


def _group_sums(A, codes: np.ndarray, n_groups: int):
    """Per group: column sums and sums of squares (groups x genes)."""
    if sp.issparse(A):
        G = sp.csr_matrix(
            (np.ones(codes.size), (codes, np.arange(codes.size))), shape=(n_groups, codes.size)
        )
        return np.asarray((G @ A).todense()), np.asarray((G @ A.multiply(A)).todense())
    G = np.zeros((n_groups, codes.size))
    G[codes, np.arange(codes.size)] = 1.0
    return G @ A, G @ (A * A)


def _sums_chunk(B, start, stop, codes, n_groups):
    B = as_csr(B) if sp.issparse(B) else np.asarray(B, dtype=np.float64)
    s1, s2 = _group_sums(B, codes[start:stop], n_groups)
    return np.stack([s1, s2])


def _mean_var(s1, s2, n):
    """Mean and unbiased variance from sums (scanpy's ``_get_mean_var``)."""
    n = np.asarray(n, dtype=np.float64)[:, None]
    mean = s1 / n
    with np.errstate(divide="ignore", invalid="ignore"):
        var = (s2 / n - mean * mean) * n / (n - 1)
    return mean, np.maximum(np.nan_to_num(var, nan=0.0), 0.0)


def _ranksums(A, codes: np.ndarray, n_groups: int) -> np.ndarray:
    """Per group and gene: the sum of the group's ranks among all cells (ties averaged)."""
    from scipy.stats import rankdata

    n, m = A.shape
    out = np.zeros((n_groups, m))
    if sp.issparse(A) and A.nnz and A.data.min() >= 0:
        C = sp.csc_matrix(A)
        C.eliminate_zeros()
        sizes = np.bincount(codes, minlength=n_groups).astype(np.float64)
        for j in range(m):
            lo, hi = C.indptr[j], C.indptr[j + 1]
            zeros = n - (hi - lo)
            zero_rank = (zeros + 1) / 2.0
            if hi == lo:
                out[:, j] = sizes * zero_rank
                continue
            r = zeros + rankdata(C.data[lo:hi])
            cells = codes[C.indices[lo:hi]]
            stored = np.bincount(cells, weights=r, minlength=n_groups)
            stored_n = np.bincount(cells, minlength=n_groups)
            out[:, j] = stored + (sizes - stored_n) * zero_rank
        return out
    D = A.toarray() if sp.issparse(A) else np.asarray(A, dtype=np.float64)
    step = max(1, 2**24 // max(n, 1))
    for a in range(0, m, step):
        R = rankdata(D[:, a : a + step], axis=0)
        for g in range(n_groups):
            out[g, a : a + step] = R[codes == g].sum(axis=0)
    return out


def group_tests(
    X, codes: np.ndarray, *, method: str = "t-test", log_base: float | None = None
) -> dict[str, np.ndarray]:
    """Every group against the rest, every gene (see the module docstring).

    Parameters
    ----------
    X : ndarray, CSR or dask array of shape (n, m)
        Log-normalised values (``log1p``; ``log_base`` for another base).
    codes : ndarray of shape (n,), int
        Group of every cell, 0..c-1 (every cell labelled).
    method : {"t-test", "wilcoxon"}

    Returns
    -------
    dict of ndarray of shape (c, m)
        ``scores``, ``pvals``, ``pvals_adj``, ``logfoldchanges``, ``means``, ``means_rest``;
        and ``sizes`` of shape (c,).
    """
    from scipy import stats

    codes = np.asarray(codes, dtype=np.int64)
    n_groups = int(codes.max()) + 1
    n, m = X.shape
    if is_dask(X):
        s1, s2 = chunk_sum(X, _sums_chunk, codes, n_groups)
    else:
        A = as_csr(X) if sp.issparse(X) else np.asarray(X, dtype=np.float64)
        s1, s2 = _group_sums(A, codes, n_groups)
    sizes = np.bincount(codes, minlength=n_groups).astype(np.float64)
    mean, var = _mean_var(s1, s2, sizes)
    rest_n = n - sizes
    mean_r, var_r = _mean_var(s1.sum(axis=0) - s1, s2.sum(axis=0) - s2, rest_n)
    if method == "t-test":
        with np.errstate(invalid="ignore", divide="ignore"):
            scores, pvals = stats.ttest_ind_from_stats(
                mean, np.sqrt(var), sizes[:, None], mean_r, np.sqrt(var_r), rest_n[:, None],
                equal_var=False,
            )  # fmt: skip
        scores = np.where(np.isnan(scores), 0.0, scores)
        pvals = np.where(np.isnan(pvals), 1.0, pvals)
    elif method == "wilcoxon":
        if is_dask(X):
            from kofs._compute.chunked import to_memory

            X = to_memory(X)
        R = _ranksums(as_csr(X) if sp.issparse(X) else X, codes, n_groups)
        expected = sizes[:, None] * (n + 1) / 2.0
        sd = np.sqrt(sizes * rest_n * (n + 1) / 12.0)[:, None]
        with np.errstate(invalid="ignore", divide="ignore"):
            scores = (R - expected) / sd
        scores = np.where(np.isnan(scores), 0.0, scores)
        pvals = 2.0 * stats.norm.sf(np.abs(scores))
    else:
        raise ValueError(f"unknown marker test {method!r}")
    expm1 = np.expm1 if log_base is None else (lambda v: np.expm1(v * np.log(log_base)))
    with np.errstate(divide="ignore", invalid="ignore"):
        lfc = np.log2((expm1(mean) + 1e-9) / (expm1(mean_r) + 1e-9))
    # Benjamini-Hochberg per group, untested genes (NaN) at 1
    adj = np.stack([stats.false_discovery_control(np.nan_to_num(p, nan=1.0)) for p in pvals])
    return {
        "scores": scores,
        "pvals": pvals,
        "pvals_adj": adj,
        "logfoldchanges": lfc,
        "means": mean,
        "means_rest": mean_r,
        "sizes": sizes,
    }
