"""In-memory kernels of one block of an expression matrix (a dense ndarray or a scipy CSR
matrix): what both the in-memory statistics (:mod:`kofs._compute.matrix`) and the dask backend
(:mod:`kofs._compute.chunked`, on each chunk) run. Nothing here knows of dask, so both import
it without a circle."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = [
    "as_csr",
    "column_range",
    "column_sq_deviations",
    "cross",
    "csr_problem",
    "is_sparse",
    "order_key",
    "row_norms2",
    "snap_zero",
    "weighted_sq_deviations",
]


def is_sparse(X) -> bool:
    """True for a scipy.sparse matrix or array."""
    return sp.issparse(X)


def csr_problem(A) -> str | None:
    """What is structurally wrong with the sparse matrix ``A``, in its own format (CSR, CSC,
    BSR: indptr not of length n + 1, not starting at 0 or not non-decreasing, indices out of
    range or not integers, arrays of different lengths; COO: coordinates out of range), or
    None. The compiled kernels -- scipy's format conversions among them -- index with these
    arrays unchecked: a malformed matrix read from a file must be refused before any of them
    reads it (a CSC matrix with an index out of range crashed the process in its conversion
    to CSR). O(nnz), vectorised."""
    fmt = getattr(A, "format", None)
    names = ("row", "col") if fmt == "coo" else ("indices", "indptr")
    for name in names:
        a = np.asarray(getattr(A, name, np.zeros(0, np.int64)))
        if a.dtype.kind not in "iu":
            return f"its {name} are {a.dtype.name}, not integers"
    try:
        if fmt == "coo":
            n_rows, n_cols = A.shape
            for name, bound in (("row", n_rows), ("col", n_cols)):
                a = np.asarray(getattr(A, name))
                if a.size and (a.min() < 0 or a.max() >= bound):
                    return f"a {name} index is out of range [0, {bound})"
            if np.asarray(A.data).size != np.asarray(A.row).size:
                return "its data and coordinates differ in length"
        elif fmt in ("csr", "csc", "bsr"):
            ends = int(np.asarray(A.indptr)[-1]) if np.asarray(A.indptr).size else 0
            if not ends == np.asarray(A.indices).size == np.asarray(A.data).size:
                # scipy's check would trim the arrays to the index pointer's end: stored values
                # lost in silence
                return (
                    f"its index pointer ends at {ends} but it holds {np.asarray(A.indices).size} "
                    f"indices and {np.asarray(A.data).size} values"
                )
            A.check_format(full_check=True)
    except (ValueError, TypeError, IndexError) as exc:
        return str(exc)
    return None


def as_csr(X) -> sp.csr_matrix:
    """``X`` as a float64 CSR matrix in canonical form (sorted indices, no duplicates)."""
    A = sp.csr_matrix(X, dtype=np.float64)
    if not A.has_canonical_format:
        A = A.copy()
        A.sum_duplicates()
    return A


def weighted_sq_deviations(X, weights: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """``sum_i w_i (x_ij - mu_j)^2`` per column, two-pass.

    For sparse ``X``: the stored entries contribute ``w_i (x_ij - mu_j)^2``, the implicit zeros
    ``mu_j^2 (sum_i w_i - sum_{i stored in column j} w_i)``.
    """
    w = np.asarray(weights, dtype=np.float64)
    if not is_sparse(X):
        D = X - mu
        return w @ (D * D)
    A = as_csr(X)
    from kofs._compute import numba_kernels

    if numba_kernels.AVAILABLE:  # one pass, no O(nnz) temporaries
        stored, w_stored = numba_kernels.weighted_column_deviations(A, w, mu)
        return stored + mu * mu * (w.sum() - w_stored)
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    dev = A.data - mu[A.indices]
    m = A.shape[1]
    stored = np.bincount(A.indices, weights=w[rows] * dev * dev, minlength=m)
    w_stored = np.bincount(A.indices, weights=w[rows], minlength=m)
    return stored + mu * mu * (w.sum() - w_stored)


def row_norms2(A) -> np.ndarray:
    """Squared L2 norm of every row (dense or sparse)."""
    if sp.issparse(A):
        A = sp.csr_matrix(A)
        from kofs._compute import numba_kernels

        if numba_kernels.AVAILABLE:
            return numba_kernels.row_sq_norms(A)
        return np.bincount(
            np.repeat(np.arange(A.shape[0]), np.diff(A.indptr)),
            weights=A.data * A.data,
            minlength=A.shape[0],
        )
    return np.einsum("ij,ij->i", A, A)


def cross(A, B) -> np.ndarray:
    """``A B^T`` as a dense array (A, B dense or sparse)."""
    out = A @ B.T
    return out.toarray() if sp.issparse(out) else np.asarray(out)


def order_key(d2: np.ndarray) -> np.ndarray:
    """Squared distances rounded to float32 for ordering neighbours: distances equal in exact
    arithmetic (ties, common with count data) but computed with different rounding (dense,
    sparse, chunked) then compare equal, and the lower index wins everywhere. The stored
    distances stay float64."""
    return d2.astype(np.float32)


def snap_zero(d2: np.ndarray, na: np.ndarray, nb: np.ndarray) -> np.ndarray:
    """Set to exactly 0 the squared distances within rounding of 0 (``<= 1e-12 (|a|^2 +
    |b|^2)``), in place: identical samples then tie exactly whatever the summation order
    (dense, sparse or chunked), and ties are broken by index the same way everywhere."""
    d2[d2 <= 1e-12 * (na[:, None] + nb[None, :])] = 0.0
    return d2


def column_sq_deviations(X, mu: np.ndarray) -> np.ndarray:
    """``sum_i (x_ij - mu_j)^2`` per column of an in-memory ``X``."""
    if not is_sparse(X):
        D = X - mu
        return np.einsum("ij,ij->j", D, D)
    A = as_csr(X)
    from kofs._compute import numba_kernels

    if numba_kernels.AVAILABLE:
        stored, n_stored = numba_kernels.weighted_column_deviations(A, np.ones(A.shape[0]), mu)
        return stored + mu * mu * (A.shape[0] - n_stored)
    dev = A.data - mu[A.indices]
    m = A.shape[1]
    stored = np.bincount(A.indices, weights=dev * dev, minlength=m)
    n_stored = np.bincount(A.indices, minlength=m)
    return stored + mu * mu * (A.shape[0] - n_stored)


def column_range(X) -> tuple[np.ndarray, np.ndarray]:
    """Per column ``(max, min)`` (implicit zeros of a sparse ``X`` included)."""
    if not is_sparse(X):
        X = np.asarray(X)
        return X.max(axis=0), X.min(axis=0)
    A = as_csr(X)
    from kofs._compute import numba_kernels

    if numba_kernels.AVAILABLE:  # no CSC copy of X (scipy's max(axis=0) makes one)
        hi, lo, count = numba_kernels.column_stats(A)
        implicit = count < A.shape[0]  # the column has implicit zeros
        return np.where(implicit, np.maximum(hi, 0.0), hi), np.where(
            implicit, np.minimum(lo, 0.0), lo
        )
    hi = np.asarray(A.max(axis=0).todense()).ravel()
    lo = np.asarray(A.min(axis=0).todense()).ravel()
    return hi, lo
