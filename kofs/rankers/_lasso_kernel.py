"""Lasso in Gram form, shared by the SPS and FSSI kernels.

References
----------
.. [SPS] Y. Yan. Sparsity preserving score for feature selection. Applied Informatics 2:8, 2015
   (eqs. 5 and 8, Algorithm 2).
.. [FSSI] J. Xu, Y. Yin, H. Man, H. He. Feature selection based on sparse imputation
   (Algorithm 1, eqs. 10-11).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "lasso_active_set",
    "lasso_gram",
    "lasso_reconstruction",
    "reconstruction_residual_score",
]


# --------------------------------------------------------------------------------------------
# Lasso in Gram form (SPS, FSSI)
# --------------------------------------------------------------------------------------------


def lasso_gram(G: np.ndarray, q: np.ndarray, lambda_ratio: float) -> np.ndarray:
    """Exact lasso solution from the Gram matrix, by the LARS-lasso homotopy.

    Solves ``argmin_b ||y - D b||^2 + lam ||b||_1`` with ``G = D^T D``, ``q = D^T y`` and
    ``lam = lambda_ratio * lam_max``, ``lam_max = ||2 D^T y||_inf`` (the smallest lam giving b = 0).
    In scikit-learn's scaling (``(1/2N)||.||^2 + alpha ||.||_1``) this is ``alpha =
    lambda_ratio * alpha_max``, so the number of rows N cancels and is never needed.

    Parameters
    ----------
    G : ndarray of shape (k, k)
    q : ndarray of shape (k,)
    lambda_ratio : float in (0, 1]

    Returns
    -------
    ndarray of shape (k,)
    """
    from sklearn.linear_model import lars_path_gram

    qmax = np.abs(q).max() if q.size else 0.0
    if qmax == 0 or lambda_ratio >= 1:
        return np.zeros_like(q)
    with np.errstate(all="ignore"):
        _, _, coef = lars_path_gram(
            q.copy(),
            G.copy(),
            n_samples=1,
            alpha_min=lambda_ratio * qmax,
            method="lasso",
            return_path=False,
            max_iter=50 * len(q),
        )
    return np.asarray(coef, dtype=np.float64).ravel()


def lasso_active_set(
    G: np.ndarray,
    q: np.ndarray,
    lam: float,
    support: np.ndarray,
    signs: np.ndarray,
    *,
    max_iter: int = 30,
    tol: float = 1e-9,
):
    """Lasso solution from a guessed support, certified by the optimality conditions, or None.

    Solves ``argmin_b b^T G b - 2 q^T b + lam ||b||_1`` (= ||y - D b||^2 + lam ||b||_1) by an
    active-set iteration started from ``support``/``signs``: solve on the support, drop
    coordinates whose sign flipped, add the atom that violates ``|2 (G b - q)_j| <= lam`` most.
    Returns b only when every KKT condition holds (so b is an exact solution); None when the
    iteration does not settle within ``max_iter`` steps (callers then use :func:`lasso_gram`).
    """
    k = len(q)
    A = list(support)
    s = dict(zip(support.tolist(), signs.tolist(), strict=True))
    for _ in range(max_iter):
        b = np.zeros(k)
        if A:
            sA = np.array([s[j] for j in A])
            try:
                bA = np.linalg.solve(G[np.ix_(A, A)], q[A] - 0.5 * lam * sA)
            except np.linalg.LinAlgError:
                return None
            flipped = bA * sA <= 0
            if flipped.any():
                A = [j for j, f in zip(A, flipped, strict=True) if not f]
                continue
            b[A] = bA
        grad = 2.0 * (G @ b - q)
        grad[A] = 0.0
        j = int(np.argmax(np.abs(grad)))
        if abs(grad[j]) <= lam * (1.0 + tol) + 1e-12:
            return b
        A.append(j)
        s[j] = -np.sign(grad[j])
    return None


def lasso_reconstruction(X: np.ndarray, *, lambda_ratio: float = 0.01) -> np.ndarray:
    """Lasso reconstruction matrix B of SPS Algorithm 2 [SPS eq. 8].

    Row i solves ``argmin_b ||x_i - D_i b||^2 + lam_i ||b||_1`` with D_i the other n - 1 samples
    (m x (n-1)) and ``lam_i = lambda_ratio * ||2 D_i^T x_i||_inf``; all n problems use one
    (n x n) Gram matrix X X^T, so the cost is O(n^2 m) for the Gram plus O(n^3)-scale homotopies.

    Parameters
    ----------
    X : ndarray of shape (n, m)
    lambda_ratio : float
        lambda / lambda_max (default 0.01).

    Returns
    -------
    ndarray of shape (n, n), zero diagonal
    """
    n = X.shape[0]
    G = X @ X.T
    B = np.zeros((n, n))
    for i in range(n):
        others = np.delete(np.arange(n), i)
        B[i, others] = lasso_gram(G[np.ix_(others, others)], G[others, i], lambda_ratio)
    return B


def reconstruction_residual_score(X: np.ndarray, S: np.ndarray) -> np.ndarray:
    """Per-feature squared reconstruction residual ``||f_r - S f_r||^2`` [SPS eq. 5] (m,)."""
    R = X - S @ X
    return np.einsum("ij,ij->j", R, R)
