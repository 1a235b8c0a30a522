r"""GO-MAH: sample similarity from a gene graph through the commute-time Mahalanobis distance.

Book ch. 6, eq. (6.3) and Proposition 1 (6.9), with the fixes of ALGORITHMS.md §7.2 / §11 item 2.

Definitions
-----------
Let ``W`` be the m x m gene graph (a :class:`~kofs.types.FeatureRelation`; a directed graph is
symmetrised as ``(W + W^T)/2``), ``L = D - W = U Sigma U^T`` its Laplacian, ``Sigma^+`` the
pseudo-inverse of the eigenvalues (those below ``1e-10 * max`` are zeroed, fix (d)), and
``X_EM = U (Sigma^+)^{1/2}`` the commute-time embedding (row r = gene r; isolated genes get a zero
row, fix (e)). Proposition 1 with ``l = m`` (fix (a)) is

    C = U (Sigma^+ - (1/m) (Sigma^+)^{1/2} 1 1^T (Sigma^+)^{1/2}) U^T
      = X_EM (I - 11^T/m) X_EM^T = L^+ - (1/m) a a^T,     a = X_EM 1 = sum_k sigma_k^{-1/2} u_k,

and the distance (6.3) is ``d^2(x, y) = (x - y)^T C^+ (x - y)`` (pseudo-inverse, fix (c)).

Derivation of the pseudo-inverse (why no dense m x m matrix is needed)
---------------------------------------------------------------------
Write ``R = range(L)`` (dimension m - c for c connected components, isolated genes included) and
``N`` its orthogonal complement, spanned by the component indicators. With ``w = U 1 / sqrt(m)``
(a unit vector whose coordinate on every eigenvector is ``1/sqrt(m)``), ``C = L^+ - b b^T`` with
``b = (L^+)^{1/2} w in R``. On R, Sherman-Morrison gives, because
``b^T L b = ||P_R w||^2 = 1 - c/m < 1``,

    C^+ = L + (1/c) g g^T,        g = L^{1/2} U 1 = sum_{k: sigma_k > 0} sigma_k^{1/2} u_k,   (P)

so C is positive semi-definite of rank exactly m - c (ALGORITHMS.md §7.2 (c) states
``<= m - c - 1``; the bound of §12, ``<= m - 1``, holds). Formula (P) exposes a defect of the printed
proposition: ``a`` and ``g`` depend on the *signs* of the eigenvectors (and on the basis chosen
inside repeated eigenvalues), so the printed C is not a function of the graph alone. Averaging
over the arbitrary orientation of the eigenbasis (independent random signs, or a random rotation
inside each eigenspace) gives ``E[a a^T] = L^+`` and hence

    C_inv = E[C] = (1 - 1/m) L^+,          C_inv^+ = m/(m - 1) L,                        (I)

which is our default (``centring="invariant"``). Then ``d^2(x, y) = m/(m-1) (x-y)^T L (x-y)
= m/(m-1) * 1/2 sum_{r,s} W_rs ((x_r - y_r) - (x_s - y_s))^2``: the graph-smoothness distance of
§7.2 (c). L is block diagonal over components, so C^+ is the direct sum of the components'
Laplacians and isolated genes contribute nothing. All n x n distances follow from the Gram
matrix ``Q = X (L X^T)`` (one sparse product, nnz(L) n flops, then one n x m by m x n product):
``d^2_ij = Q_ii + Q_jj - 2 Q_ij``.

Two computational paths that agree to rounding (tested to 1e-8):

* ``method="scalable"`` (default): (I) through sparse products; memory O(n m + nnz).
* ``method="exact"``: dense ``eigh`` of L, C built from (6.9), ``pinv`` with ``rtol=1e-10``
  (or ``ridge``: ``(C + eps I)^{-1}``); for m <= ``max_exact`` (3000) only.
  ``centring="eigenbasis"`` (exact path only) uses the printed formula literally in numpy's
  eigenbasis with each eigenvector's largest-magnitude entry made positive; it is reproducible
  but not invariant (see above), and is offered to reproduce the book.

Similarity (not specified in the book, ours): ``s_ij = exp(-d^2_ij / (2 delta^2))`` with
``delta^2 = median_{i<j} d^2_ij / 2`` (the median of the positive distances when that is 0).
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from kofs.errors import CoverageError, ParameterError
from kofs.types import Expression, FeatureRelation, SampleSimilarity

__all__ = [
    "mahalanobis_similarity",
    "graph_laplacian",
    "commute_time_covariance",
    "mahalanobis_sq_distances",
    "distance_similarity",
]

log = logging.getLogger(__name__)

EIG_TOL = 1e-10
PINV_RTOL = 1e-10
MAX_EXACT = 3000


# --------------------------------------------------------------------------------------------
# array kernels
# --------------------------------------------------------------------------------------------
def graph_laplacian(W: Any) -> sp.csr_matrix:
    """Laplacian ``L = D - W_sym`` of a non-negative gene graph, ``W_sym = (W + W^T)/2``.

    Parameters
    ----------
    W : sparse or dense array of shape (m, m), non-negative

    Returns
    -------
    scipy.sparse.csr_matrix of shape (m, m), symmetric positive semi-definite.
    """
    W = sp.csr_matrix(W, dtype=np.float64)
    W = ((W + W.T) * 0.5).tocsr()
    d = np.asarray(W.sum(axis=1)).ravel()
    return (sp.diags(d) - W).tocsr()


def _laplacian_eig(L: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``eigh`` of a dense Laplacian; eigenvalues below ``EIG_TOL * max`` set to 0 (fix (d)).

    Eigenvector signs are fixed so that each one's largest-magnitude entry is positive.
    """
    sigma, U = np.linalg.eigh(L)
    top = sigma.max() if sigma.size else 0.0
    sigma = np.where(sigma > EIG_TOL * max(top, 0.0), sigma, 0.0)
    lead = np.argmax(np.abs(U), axis=0)
    signs = np.sign(U[lead, np.arange(U.shape[1])])
    signs[signs == 0] = 1.0
    return sigma, U * signs


def commute_time_covariance(
    L: np.ndarray, *, centring: str = "invariant"
) -> tuple[np.ndarray, np.ndarray]:
    """Knowledge covariance C of Proposition 1 (eq. 6.9) from a dense Laplacian.

    Parameters
    ----------
    L : ndarray of shape (m, m)
        Graph Laplacian ``D - S_FEA``.
    centring : {"invariant", "eigenbasis"}
        ``"eigenbasis"``: the printed formula ``U (Sigma^+ - (1/m)(Sigma^+)^{1/2} 1 1^T
        (Sigma^+)^{1/2}) U^T`` in the sign-fixed eigenbasis; ``"invariant"``: its average over
        eigenbasis orientations, ``(1 - 1/m) L^+`` (module docstring, eq. (I)).

    Returns
    -------
    C : ndarray of shape (m, m)
    X_EM : ndarray of shape (m, m)
        The commute-time embedding ``U (Sigma^+)^{1/2}`` (row r = feature r).
    """
    m = L.shape[0]
    sigma, U = _laplacian_eig(np.asarray(L, dtype=np.float64))
    inv = np.zeros_like(sigma)
    nz = sigma > 0
    inv[nz] = 1.0 / sigma[nz]
    X_em = U * np.sqrt(inv)
    L_pinv = (U * inv) @ U.T
    if centring == "invariant":
        C = (1.0 - 1.0 / m) * L_pinv
    elif centring == "eigenbasis":
        a = X_em.sum(axis=1)
        C = L_pinv - np.outer(a, a) / m
    else:
        raise ParameterError(f"centring must be 'invariant' or 'eigenbasis', got {centring!r}")
    return 0.5 * (C + C.T), X_em


def _sq_from_gram(Q: np.ndarray) -> np.ndarray:
    q = np.diag(Q)
    D2 = q[:, None] + q[None, :] - 2.0 * Q
    D2 = 0.5 * (D2 + D2.T)
    np.fill_diagonal(D2, 0.0)
    return np.maximum(D2, 0.0)


def mahalanobis_sq_distances(
    X: np.ndarray,
    W: Any,
    *,
    method: str = "scalable",
    centring: str = "invariant",
    ridge: float | None = None,
    max_exact: int = MAX_EXACT,
) -> np.ndarray:
    """All squared Mahalanobis distances (6.3) between the rows of X under C of (6.9).

    Parameters
    ----------
    X : ndarray of shape (n, m)
        Samples as rows.
    W : sparse matrix of shape (m, m)
        Non-negative gene graph ``S_FEA`` (symmetrised).
    method : {"scalable", "exact"}
        See the module docstring; ``"exact"`` only for ``m <= max_exact``.
    centring : {"invariant", "eigenbasis"}
        ``"eigenbasis"`` requires ``method="exact"``.
    ridge : float or None
        Exact path only: use ``(C + ridge I)^{-1}`` instead of ``C^+``.
    max_exact : int
        Largest m for the exact (dense, O(m^3)) path.

    Returns
    -------
    ndarray of shape (n, n), symmetric, zero diagonal, non-negative.
    """
    X = np.asarray(X, dtype=np.float64)
    X = X - X.mean(axis=0)  # distances are translation invariant; centring limits cancellation
    m = X.shape[1]
    L = graph_laplacian(W)
    if method == "scalable":
        if centring != "invariant" or ridge is not None:
            raise ParameterError(
                "mahalanobis: centring='eigenbasis' and ridge need method='exact' "
                "(the scalable path computes the orientation-invariant C^+ = m/(m-1) L)"
            )
        scale = m / (m - 1.0) if m > 1 else 1.0
        Q = scale * (X @ np.asarray(L @ X.T))
        return _sq_from_gram(Q)
    if method != "exact":
        raise ParameterError(f"mahalanobis: method must be 'scalable' or 'exact', got {method!r}")
    if m > max_exact:
        raise ParameterError(
            f"mahalanobis: method='exact' builds dense {m} x {m} matrices (limit {max_exact} genes); "
            "use method='scalable' (identical result) or raise max_exact"
        )
    C, _ = commute_time_covariance(L.toarray(), centring=centring)
    if ridge is not None:
        if not ridge > 0:
            raise ParameterError(f"mahalanobis: ridge must be > 0, got {ridge!r}")
        M = np.linalg.inv(C + ridge * np.eye(m))
    else:
        M = np.linalg.pinv(C, rtol=PINV_RTOL, hermitian=True)
    M = 0.5 * (M + M.T)
    return _sq_from_gram(X @ M @ X.T)


def distance_similarity(D2: np.ndarray, *, delta2: float | None = None) -> tuple[np.ndarray, float]:
    """Gaussian kernel ``exp(-D2 / (2 delta^2))`` on squared distances.

    Parameters
    ----------
    D2 : ndarray of shape (n, n)
        Squared distances, zero diagonal.
    delta2 : float or None
        Bandwidth ``delta^2``; None = half the median of the off-diagonal ``D2`` (ours), or of
        its positive values when that median is 0. All-zero distances give an all-ones matrix.

    Returns
    -------
    S : ndarray of shape (n, n), entries in (0, 1], unit diagonal
    delta2 : float, the bandwidth used
    """
    n = D2.shape[0]
    if delta2 is None:
        off = D2[np.triu_indices(n, k=1)]
        med = float(np.median(off)) if off.size else 0.0
        if med <= 0 and np.any(off > 0):
            med = float(np.median(off[off > 0]))
        delta2 = med / 2.0 if med > 0 else 1.0
    elif not delta2 > 0:
        raise ParameterError(f"mahalanobis: delta2 must be > 0, got {delta2!r}")
    S = np.exp(-D2 / (2.0 * delta2))
    return 0.5 * (S + S.T), float(delta2)


# --------------------------------------------------------------------------------------------
# public wrapper
# --------------------------------------------------------------------------------------------
def mahalanobis_similarity(
    expression: Expression,
    relation: FeatureRelation,
    *,
    method: str = "scalable",
    centring: str = "invariant",
    ridge: float | None = None,
    delta2: float | None = None,
    max_exact: int = MAX_EXACT,
    name: str | None = None,
) -> SampleSimilarity:
    """GO-MAH sample similarity: Gaussian kernel on the commute-time Mahalanobis distance.

    Parameters
    ----------
    expression : Expression
        n samples x m genes.
    relation : FeatureRelation
        Gene graph aligned to ``expression.genes`` (e.g. GO semantic similarity, PPI).
    method : {"scalable", "exact"}
        ``"scalable"`` (default) never forms a dense m x m matrix; ``"exact"`` follows (6.9)
        with a dense eigendecomposition (m <= ``max_exact``). Both give the same result.
    centring : {"invariant", "eigenbasis"}
        Resolution of the basis dependence of (6.9) (module docstring); default invariant.
    ridge : float or None
        Exact path: ``(C + ridge I)^{-1}`` instead of the pseudo-inverse.
    delta2 : float or None
        Kernel bandwidth; default half the median squared distance.
    max_exact : int
        Gene limit of the exact path (default 3000).
    name : str, optional
        Name of the similarity (default ``"mahalanobis:<relation name>"``).

    Returns
    -------
    SampleSimilarity
        Dense n x n, provenance with the parameters, bandwidth, #components and #isolated genes.

    Raises
    ------
    ParameterError
        Misaligned relation, negative weights, non-finite data, bad option.
    CoverageError
        The relation has no edge between two different genes of the matrix.
    """
    if tuple(relation.genes) != expression.genes:
        raise ParameterError(
            f"mahalanobis: relation {relation.name!r} is not aligned to the matrix's genes; "
            "build it for this expression matrix"
        )
    W = relation.matrix
    if W.nnz and W.data.min() < 0:
        raise ParameterError(
            f"mahalanobis: relation {relation.name!r} has negative weights; a Laplacian needs "
            "non-negative similarities"
        )
    X = expression.values
    if not np.all(np.isfinite(X)):
        raise ParameterError(
            "mahalanobis: the expression matrix has missing or infinite values; impute or drop them"
        )
    off = W - sp.diags(W.diagonal())
    off.eliminate_zeros()
    if off.nnz == 0:
        raise CoverageError(
            f"mahalanobis: relation {relation.name!r} has no edge between two genes of the matrix; "
            "check the gene identifiers of the knowledge source"
        )
    D2 = mahalanobis_sq_distances(
        X, W, method=method, centring=centring, ridge=ridge, max_exact=max_exact
    )
    S, used = distance_similarity(D2, delta2=delta2)
    sym = off + off.T
    n_comp, _ = connected_components(sym, directed=False)
    isolated = int(np.sum(np.diff(sym.tocsr().indptr) == 0))
    log.info(
        "mahalanobis similarity from %r: %d genes, %d components (%d isolated), delta^2=%.4g",
        relation.name,
        expression.n_genes,
        n_comp,
        isolated,
        used,
    )
    prov = {
        "builder": "mahalanobis",
        "relation": relation.name,
        "method": method,
        "centring": centring,
        "ridge": ridge,
        "delta2": used,
        "n_components": int(n_comp),
        "n_isolated_genes": isolated,
        "n_edges": int(sym.nnz // 2),
    }
    return SampleSimilarity(
        S, expression.samples, name=name or f"mahalanobis:{relation.name}", provenance=prov
    )
