"""Per-gene statistics of an expression matrix held dense (ndarray), sparse (scipy CSR) or
chunked over the cells (dask.array; delegated to :mod:`kofs._compute.chunked`).

Every function takes ``X`` of shape (n_samples, n_genes) and never densifies a sparse ``X``:
statistics are sparse reductions over the stored entries, with the implicit zeros added back
algebraically. Sums of squared deviations are *two-pass* (deviations from the mean, not
``E[x^2] - mu^2``), so a sparse result equals the dense one to rounding (~1e-15 relative).
"""

from __future__ import annotations

import numpy as np

from kofs._compute import blocks, chunked
from kofs._compute.chunked import is_dask
from kofs._compute.ranks import CONSTANT_RTOL, constant_range

__all__ = [
    "magnitude_problem",
    "constant_genes",
    "column_range",
    "column_means",
    "column_sq_deviations",
    "weighted_sq_deviations",
]


#: Largest |value| ranked: squares and Gram products of larger values overflow float64.
MAX_ABS_VALUE = 1e100


#: Smallest largest-|value| of a varying gene: squares of smaller values underflow float64.
MIN_ABS_VALUE = 1e-100


def magnitude_problem(
    hi: np.ndarray, lo: np.ndarray, genes, *, top: float | None = None
) -> str | None:
    """What makes a matrix unrankable by its magnitude, from its per-gene maxima ``hi`` and
    minima ``lo`` (:func:`column_range`), or None: values beyond :data:`MAX_ABS_VALUE` (their
    squares overflow), or a varying gene whose values all lie below :data:`MIN_ABS_VALUE` in
    magnitude (its variance and distances underflow to 0). ``top``: the largest |value| when
    known over every value (default: from ``hi`` and ``lo``, NaN columns aside)."""
    hi = np.asarray(hi, dtype=np.float64)
    lo = np.asarray(lo, dtype=np.float64)
    if top is None:
        top = float(max(np.fmax.reduce(hi, initial=-np.inf), -np.fmin.reduce(lo, initial=np.inf)))
    if top > MAX_ABS_VALUE:
        return (
            f"values as large as {top:.3g}: beyond {MAX_ABS_VALUE:g} their squares "
            "overflow the statistics; log-transform or rescale the data"
        )
    scale = np.maximum(np.abs(hi), np.abs(lo))
    tiny = np.flatnonzero(~constant_range(hi, lo) & (scale < MIN_ABS_VALUE))
    if tiny.size:
        g = int(tiny[0])
        return (
            f"{tiny.size} varying gene(s) have values no larger than {scale[g]:.3g} in "
            f"magnitude (e.g. {genes[g]!r}): below {MIN_ABS_VALUE:g} their squares underflow "
            "to 0 and every statistic ties; rescale the data (multiply it by a constant)"
        )
    return None


def column_means(X, weights: np.ndarray | None = None) -> np.ndarray:
    """``sum_i w_i x_ij / sum_i w_i`` per column (``w = 1`` by default)."""
    if is_dask(X):
        return chunked.column_means(X, weights)
    if weights is None:
        return np.asarray(X.sum(axis=0)).ravel() / X.shape[0]
    w = np.asarray(weights, dtype=np.float64)
    return np.asarray(X.T @ w).ravel() / w.sum()


def weighted_sq_deviations(X, weights: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """``sum_i w_i (x_ij - mu_j)^2`` per column, two-pass (dense, sparse or chunked; the
    in-memory kernel is :func:`kofs._compute.blocks.weighted_sq_deviations`)."""
    w = np.asarray(weights, dtype=np.float64)
    if is_dask(X):
        return chunked.weighted_sq_deviations(X, w, mu)
    return blocks.weighted_sq_deviations(X, w, mu)


def column_sq_deviations(X, mu: np.ndarray | None = None) -> np.ndarray:
    """``sum_i (x_ij - mu_j)^2`` per column (``mu`` default: the column means)."""
    if mu is None:
        mu = column_means(X)
    if is_dask(X):
        return chunked.column_sq_deviations(X, mu)
    return blocks.column_sq_deviations(X, mu)


def column_range(X) -> tuple[np.ndarray, np.ndarray]:
    """Per column ``(max, min)`` (implicit zeros of a sparse ``X`` included)."""
    if is_dask(X):
        return chunked.column_range(X)
    return blocks.column_range(X)


def constant_genes(X, *, rtol: float = CONSTANT_RTOL) -> np.ndarray:
    """Genes (columns of ``X``, samples x genes; dense, sparse or chunked) that do not vary
    across the samples.

    A column is constant when its range ``max - min`` is at most ``rtol`` times its largest
    magnitude (:func:`kofs._compute.ranks.constant_range`): the test is scale-free, so a matrix
    multiplied by 1e-200 has the same constant genes as the original, and an all-zero column is
    constant.

    Returns
    -------
    ndarray of bool, shape (n_genes,)
    """
    if X.shape[0] == 0:
        return np.ones(X.shape[1], dtype=bool)
    return constant_range(*column_range(X), rtol=rtol)
