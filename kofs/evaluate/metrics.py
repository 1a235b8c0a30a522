"""Evaluation metrics of a selected gene set: pure array kernels (ALGORITHMS.md §8).

* :func:`redundancy_rate` — RED, mean absolute pairwise Pearson correlation (book ch. 4).
* :func:`residue_scale` — ``||X_F X_F^T - K||_F^2`` (book ch. 4, unsupervised).
* :func:`neighbourhood_jaccard` / :func:`jaccard_score` — JAC of k-nearest-sample sets (book ch. 4).
* :func:`hit_count` — HIT_canc / HIT_leu: known genes among the selected ones (book ch. 6).
* :func:`sim_anno` — Sim_anno: summed GO similarity between selected and known genes (book ch. 6).

All functions take arrays only (no gene ids, no I/O); the caller selects the columns.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

__all__ = [
    "redundancy_rate",
    "residue_scale",
    "neighbourhood_jaccard",
    "jaccard_score",
    "hit_count",
    "sim_anno",
]


def redundancy_rate(X_F: np.ndarray) -> float:
    """Redundancy rate of the selected features (book eq. 4.3, normalisation fixed).

    ``RED(F) = 2 / (k (k - 1)) * sum_{i < j} |rho_ij|`` with ``rho`` the Pearson correlation of
    features i and j over the samples. The book prints ``1/(k(k-1)) sum_{i>j}`` (half the mean),
    but reports values up to 0.92, which only the mean over pairs allows (ALGORITHMS.md §8).

    Parameters
    ----------
    X_F : ndarray of shape (n_samples, k)
        The k selected features.

    Returns
    -------
    float
        In [0, 1]; NaN when fewer than two non-constant features (constant features have no
        correlation and are left out of the pairs).
    """
    X = np.asarray(X_F, dtype=np.float64)
    Xc = X - X.mean(axis=0)
    norm = np.sqrt((Xc**2).sum(axis=0))
    keep = norm > 1e-12 * max(1.0, float(norm.max(initial=0.0)))
    k = int(keep.sum())
    if k < 2:
        return float("nan")
    Z = Xc[:, keep] / norm[keep]
    R = np.abs(Z.T @ Z)
    return float((R.sum() - np.trace(R)) / (k * (k - 1)))


def _unit_columns(X: np.ndarray) -> np.ndarray:
    """Centre every feature and scale it to unit L2 norm (constant features become zero)."""
    X = np.asarray(X, dtype=np.float64)
    X = X - X.mean(axis=0)
    norm = np.sqrt((X**2).sum(axis=0))
    out = np.zeros_like(X)
    ok = norm > 0
    out[:, ok] = X[:, ok] / norm[ok]
    return out


def residue_scale(X_F: np.ndarray, K: np.ndarray) -> float:
    """Residue scale ``||X_F X_F^T - K||_F^2`` (book ch. 4, unsupervised; lower is better).

    Parameters
    ----------
    X_F : ndarray of shape (n_samples, k)
        Selected features; each is centred and scaled to unit L2 norm first (ALGORITHMS.md §8
        [REC] says unit-normalised; ours: centred too, else the mean expression level, which is
        positive for every gene of a log-scale array, dominates ``X_F X_F^T``); constant
        features become zero.
    K : ndarray of shape (n_samples, n_samples)
        The input sample similarity (RBF on all features in the book).

    Returns
    -------
    float
    """
    Z = _unit_columns(X_F)
    K = np.asarray(K, dtype=np.float64)
    if K.shape != (Z.shape[0], Z.shape[0]):
        raise ValueError(f"K has shape {K.shape}, expected {(Z.shape[0], Z.shape[0])}")
    D = Z @ Z.T - K
    return float((D**2).sum())


def _neighbours(S: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k most similar samples of each sample, itself excluded; ties -> lower index."""
    S = np.array(S, dtype=np.float64)
    n = S.shape[0]
    np.fill_diagonal(S, -np.inf)
    order = np.argsort(-S, axis=1, kind="stable")
    return order[:, : min(k, n - 1)]


def neighbourhood_jaccard(K_F: np.ndarray, K: np.ndarray, *, k: int) -> float:
    """Jaccard score of the k-nearest-sample sets under two similarities (book ch. 4).

    ``JAC = (1/n) sum_i |NB(i,k,K_F) ∩ NB(i,k,K)| / |NB(i,k,K_F) ∪ NB(i,k,K)|`` with
    ``NB(i, k, S)`` the k samples most similar to i under S, i excluded [REC]; ties are broken
    by sample position.

    Parameters
    ----------
    K_F, K : ndarray of shape (n, n)
        Similarity from the selected features and the reference similarity.
    k : int
        Neighbourhood size (book: 1 and 5).

    Returns
    -------
    float
        In [0, 1]; higher is better.
    """
    if k < 1:
        raise ValueError("k must be >= 1")
    A, B = _neighbours(K_F, k), _neighbours(K, k)
    total = 0.0
    for a, b in zip(A, B, strict=False):
        sa, sb = set(a.tolist()), set(b.tolist())
        total += len(sa & sb) / len(sa | sb)
    return total / A.shape[0]


def jaccard_score(X_F: np.ndarray, K: np.ndarray, *, k: int) -> float:
    """:func:`neighbourhood_jaccard` with ``K_F = X_F X_F^T`` (features centred, unit norm)."""
    Z = _unit_columns(X_F)
    return neighbourhood_jaccard(Z @ Z.T, K, k=k)


def hit_count(selected: Iterable[str], known: Iterable[str]) -> int:
    """Number of selected genes that are known genes (book's HIT_canc / HIT_leu, a count)."""
    known = set(known)
    return sum(1 for g in set(selected) if g in known)


def sim_anno(S: np.ndarray) -> tuple[float, float]:
    """Sim_anno from the GO similarity between selected (rows) and known (columns) genes.

    The book does not say how pairs are combined; its values (687-7766 for 50 genes) suggest a
    sum over pairs [INF], which is returned first, with the mean over pairs beside it. A known
    gene that is also selected contributes its self-similarity. Genes without GO terms (NaN
    rows/columns) are left out.

    Parameters
    ----------
    S : ndarray of shape (k, K)

    Returns
    -------
    total, mean : float
        NaN when no pair has a similarity.
    """
    S = np.asarray(S, dtype=np.float64)
    ok = ~np.isnan(S)
    if not ok.any():
        return float("nan"), float("nan")
    return float(S[ok].sum()), float(S[ok].mean())
