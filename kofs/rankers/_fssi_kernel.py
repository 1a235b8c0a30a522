"""FSSI kernel: leave-one-feature-out sparse imputation errors (adapter in
:mod:`kofs.rankers.sparse`).

References
----------
.. [FSSI] J. Xu, Y. Yin, H. Man, H. He. Feature selection based on sparse imputation
   (Algorithm 1, eqs. 10-11).
"""

from __future__ import annotations

from functools import partial

import numpy as np

from kofs._compute.workers import parallel_map
from kofs.rankers._lasso_kernel import lasso_active_set, lasso_gram

__all__ = ["fssi_errors"]


# --------------------------------------------------------------------------------------------
# FSSI: leave-one-feature-out sparse imputation (Algorithm 1, eqs. 10-11)
# --------------------------------------------------------------------------------------------


def _fssi_sample_errors(
    X: np.ndarray,
    G_all: np.ndarray,
    p: int,
    *,
    lambda_ratio: float,
    include_self: bool,
    block: int = 2048,
    kkt_tol: float = 1e-9,
):
    """Imputation errors ``F^impu(p) - F_z(p)`` of sample p for every feature z (m,), and the
    number of features solved by the explicit fallback.

    Problem (z, p): dictionary atoms = the other samples (or all, ``include_self``) restricted to
    the features F \\ {z}. In Gram form it is the all-feature problem of sample p downdated by
    one rank: ``G_z = G - u u^T``, ``q_z = q - u w`` with ``u`` = feature z over the atoms and
    ``w`` = its value in sample p; ``lam_z = lambda_ratio * ||2 q_z||_inf``.

    Fast route (exact, with a certificate): take the support A and signs s of the all-feature
    solution as a hypothesis. On that support the solution is ``x_A = (G_z,AA)^{-1}
    (q_z,A - lam_z s / 2)``; by Sherman-Morrison with ``H = G_AA^{-1}``, ``h = u_A^T H u_A``,
    ``a = H q_A``, ``b = H s`` and ``yhat = u_A^T (a - lam_z b / 2)``, the imputed value is
    ``(yhat - h w) / (1 - h)`` (so the error is ``(yhat - w) / (1 - h)``, a leave-one-out
    leverage formula). It is the exact lasso solution iff ``h < 1``, the signs of x_A equal s and
    every atom outside A satisfies ``|2 (G_z x - q_z)_j| <= lam_z`` (KKT). All three are checked
    for every z at once; the features failing them are solved explicitly by the homotopy on
    ``(G_z, q_z)``.
    """
    n, m = X.shape
    atoms = np.arange(n) if include_self else np.delete(np.arange(n), p)
    Xd = X[atoms]
    G = G_all[np.ix_(atoms, atoms)]
    q = G_all[atoms, p]
    w_all = X[p]
    x0 = lasso_gram(G, q, lambda_ratio)
    A = np.flatnonzero(x0)
    s = np.sign(x0[A])
    inactive = np.setdiff1d(np.arange(len(atoms)), A)
    H = None
    if A.size:
        GAA = G[np.ix_(A, A)]
        try:
            H = np.linalg.inv(np.linalg.cholesky(GAA))
            H = H.T @ H
        except np.linalg.LinAlgError:
            H = None
    err = np.empty(m)
    fallback = 0
    for start in range(0, m, block):
        cols = slice(start, min(m, start + block))
        w = w_all[cols]
        U = Xd[:, cols]
        lam = 2.0 * lambda_ratio * np.abs(q[:, None] - U * w[None, :]).max(axis=0)
        ok = np.zeros(U.shape[1], dtype=bool)
        e = np.empty(U.shape[1])
        if H is not None:
            UA = U[A]
            V = H @ UA
            h = np.einsum("ij,ij->j", UA, V)
            a, b = H @ q[A], H @ s
            yhat = UA.T @ a - 0.5 * lam * (UA.T @ b)
            with np.errstate(divide="ignore", invalid="ignore"):
                e = (yhat - w) / (1.0 - h)
            good = ((1.0 - h) > 1e-8) & np.isfinite(e)
            e = np.where(good, e, 0.0)
            # x_A = a - lam b / 2 + H u (imputed - w)  (Sherman-Morrison)
            xA = a[:, None] - 0.5 * b[:, None] * lam[None, :] + V * e[None, :]
            sign_ok = np.all(xA * s[:, None] > 0, axis=0)
            corr = G[np.ix_(inactive, A)] @ xA - q[inactive, None] - U[inactive] * e[None, :]
            kkt_ok = np.all(2.0 * np.abs(corr) <= lam[None, :] * (1.0 + kkt_tol) + 1e-12, axis=0)
            ok = good & sign_ok & kkt_ok
        for j in np.flatnonzero(~ok):
            u = U[:, j]
            Gz, qz = G - np.outer(u, u), q - u * w[j]
            xz = lasso_active_set(Gz, qz, lam[j], A, s)
            if xz is None:
                xz = lasso_gram(Gz, qz, lambda_ratio)
            e[j] = u @ xz - w[j]
            fallback += 1
        err[cols] = e
    return err, fallback


def fssi_errors(
    X: np.ndarray, *, lambda_ratio: float = 0.01, include_self: bool = False, n_jobs: int = 1
) -> tuple[np.ndarray, int]:
    """Matrix of FSSI imputation errors E (n x m), ``E[p, z] = F^impu_z(p) - X[p, z]``.

    Parameters
    ----------
    X : ndarray of shape (n, m)
    lambda_ratio : float
        lambda / lambda_max of every (z, p) problem (default 0.01).
    include_self : bool
        False (default): sample p is not an atom of its own dictionary (leave-one-out).
        True: the paper's literal "whole training data" dictionary.
    n_jobs : int
        Worker processes over samples (joblib); the result does not depend on it.

    Returns
    -------
    E : ndarray of shape (n, m)
    n_fallback : int
        Number of (z, p) problems solved explicitly (the others by the certified fast route).
    """
    G_all = X @ X.T
    out = parallel_map(
        partial(_fssi_sample_errors, X, G_all),
        range(X.shape[0]),
        n_jobs,
        lambda_ratio=lambda_ratio,
        include_self=include_self,
    )
    E = np.vstack([o[0] for o in out]) if out else np.zeros_like(X)
    return E, int(sum(o[1] for o in out))
