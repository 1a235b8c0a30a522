"""Array kernels of the sparse-representation rankers (NumPy/SciPy/scikit-learn only).

Conventions (ALGORITHMS.md §0): ``X`` is (n samples x m features); a *reconstruction matrix*
``S`` is (n x n) with row ``i`` holding the weights that rebuild sample ``i`` from the others
(``S[i, i] = 0``). The ranker adapters live in :mod:`kofs.rankers.sparse`. The lasso helpers live in
:mod:`kofs.rankers._lasso_kernel` and the FSSI kernel in :mod:`kofs.rankers._fssi_kernel`.

References
----------
.. [SS] M. Liu, D. Sun, D. Zhang. Sparsity Score: a new filter feature selection method based
   on l1 graph (eqs. 5-10, Algorithm 1).
.. [SPS] Y. Yan. Sparsity preserving score for feature selection. Applied Informatics 2:8, 2015
   (eqs. 5 and 8, Algorithm 2).
.. [FSSI] J. Xu, Y. Yin, H. Man, H. He. Feature selection based on sparse imputation
   (Algorithm 1, eqs. 10-11).
"""

from __future__ import annotations

from functools import partial

import numpy as np

from kofs._compute.workers import parallel_map

__all__ = [
    "canonical_feature_order",
    "l1_graph",
    "l1_graph_row",
    "sparsity_score_from_graph",
]

_HIGHS = {"presolve": False}
_LP_METHOD = "highs-ds"
_FULL_LP_MAX = 2000  # below this many features the l1-graph LP is solved in one go


def canonical_feature_order(X: np.ndarray) -> np.ndarray:
    """Permutation sorting the columns of ``X`` (n x m) lexicographically by their values.

    Solving the per-sample problems on ``X[:, perm]`` makes them, bit for bit, independent of the
    order in which the features were given (identical columns are interchangeable).
    """
    return np.lexsort(X[::-1]) if X.shape[1] else np.arange(0)


# --------------------------------------------------------------------------------------------
# Sparsity Score: l1 graph (eqs. 7 and 8) and score (eq. 10 with the S^T S fix)
# --------------------------------------------------------------------------------------------


def _lp8_restricted(D: np.ndarray, x: np.ndarray, W: np.ndarray, sigma: np.ndarray):
    """Dual of eq. (8) with the residual signs of the features outside ``W`` fixed to ``sigma``.

    Primal:  min ||s||_1 + sum_{k in W} |x_k - d_k s| + sum_{k not in W} sigma_k (x_k - d_k s)
             s.t. 1^T s = 1   (a lower bound of eq. (8) for every s, equal to it when the signs hold)
    Dual:    max x_W^T y + nu  s.t.  D_W^T y + nu 1 - w = -D_N^T sigma_N,  |y| <= 1,  |w| <= 1.
    The primal ``s`` is minus the multiplier of the k = n-1 equality rows.
    """
    from scipy.optimize import linprog

    k = D.shape[1]
    DW = D[W]
    g = D[~W].T @ sigma[~W]
    mw = DW.shape[0]
    A_eq = np.hstack([DW.T, np.ones((k, 1)), -np.eye(k)])
    c = -np.concatenate([x[W], [1.0], np.zeros(k)])
    lb = np.concatenate([-np.ones(mw), [-np.inf], -np.ones(k)])
    ub = np.concatenate([np.ones(mw), [np.inf], np.ones(k)])
    return linprog(
        c, A_eq=A_eq, b_eq=-g, bounds=np.column_stack([lb, ub]), method=_LP_METHOD, options=_HIGHS
    )


def _irls_start(D: np.ndarray, x: np.ndarray, *, iters: int = 10) -> np.ndarray:
    """Approximate least-absolute-deviation fit with sum-to-one weights (a warm start only)."""
    k = D.shape[1]
    w = np.ones(D.shape[0])
    s = np.full(k, 1.0 / k)
    K = np.zeros((k + 1, k + 1))
    K[:k, k] = K[k, :k] = 1.0
    for _ in range(iters):
        Dw = D * w[:, None]
        K[:k, :k] = Dw.T @ D + 1e-10 * np.eye(k)
        try:
            s = np.linalg.solve(K, np.concatenate([Dw.T @ x, [1.0]]))[:k]
        except np.linalg.LinAlgError:
            break
        w = 1.0 / np.maximum(np.abs(x - D @ s), 1e-6)
    return s


def _l1_graph_row_lp8(D: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Exact solution s of eq. (8): min ||s||_1 + ||x - D s||_1 s.t. 1^T s = 1.

    ``t = x - D s`` absorbs the residual, so (8) is an l1-penalised least-absolute-deviation fit.
    Its dual has only k = n-1 rows; for large m it is solved on a working set W of features
    (those with the smallest residuals of an IRLS warm start, the others' residual signs fixed).
    The restricted problem is a lower bound of (8); when its solution leaves every residual
    outside W with the assumed sign, it attains that bound and is therefore optimal for (8)
    (an exact certificate). Otherwise the violators join W and the LP is re-solved; an infeasible
    restricted dual (unbounded restricted primal) doubles W.
    """
    m = D.shape[0]
    if m <= _FULL_LP_MAX:
        W = np.ones(m, dtype=bool)
        sigma = np.ones(m)
        order = np.arange(m)
        size = m
    else:
        r0 = x - D @ _irls_start(D, x)
        order = np.argsort(np.abs(r0), kind="stable")
        size = min(m, max(1000, 8 * D.shape[1]))
        W = np.zeros(m, dtype=bool)
        W[order[:size]] = True
        sigma = np.where(r0 >= 0, 1.0, -1.0)
    tol = 1e-9 * (1.0 + np.abs(x))
    while True:
        res = _lp8_restricted(D, x, W, sigma)
        if res.status == 2 and not W.all():  # restricted primal unbounded: enlarge W
            size = min(m, 2 * size)
            W[order[:size]] = True
            continue
        if res.status != 0:
            raise RuntimeError(f"l1-graph LP (eq. 8) failed: {res.message}")
        s = -res.eqlin.marginals
        r = x - D @ s
        bad = ~W & (sigma * r < -tol)
        if not bad.any():
            return s
        W |= bad
        sigma = np.where(W, sigma, np.where(r >= 0, 1.0, -1.0))


def _l1_graph_row_lp7(D: np.ndarray, x: np.ndarray, epsilon: float) -> np.ndarray | None:
    """Eq. (7) with the l2 ball replaced by the inscribed l_inf box (an LP), or None if infeasible.

    Solves  min ||s||_1  s.t.  |x_k - d_k s| <= epsilon / sqrt(m) for every k,  1^T s = 1.
    Every solution satisfies the paper's constraint ||x - D s||_2 <= epsilon.
    """
    from scipy.optimize import linprog

    m, k = D.shape
    delta = epsilon / np.sqrt(m)
    A_ub = np.block([[D, -D], [-D, D]])
    b_ub = np.concatenate([x + delta, delta - x])
    A_eq = np.concatenate([np.ones(k), -np.ones(k)])[None, :]
    res = linprog(
        np.ones(2 * k),
        A_ub=A_ub,
        b_ub=b_ub,
        A_eq=A_eq,
        b_eq=[1.0],
        bounds=(0, None),
        method="highs",
    )
    if res.status == 2:
        return None
    if res.status != 0:
        raise RuntimeError(f"l1-graph LP (eq. 7) failed: {res.message}")
    return res.x[:k] - res.x[k:]


def l1_graph_row(X: np.ndarray, i: int, *, formulation: int = 8, epsilon: float = 1e-3):
    """Row ``i`` of the l1-graph weight matrix S [SS eqs. 7/8] (length n, ``S[i, i] = 0``).

    Parameters
    ----------
    X : ndarray of shape (n, m)
    i : int
        The sample to reconstruct from the n - 1 others.
    formulation : {8, 7}
        8: the LP with compensation term t (always feasible). 7: the error-tolerance problem,
        with the l2 ball of radius ``epsilon`` replaced by the inscribed l_inf box.
    epsilon : float
        Error tolerance of eq. (7) (paper: 0.001).

    Returns
    -------
    ndarray of shape (n,), or None when eq. (7) is infeasible for this sample.
    """
    others = np.delete(np.arange(X.shape[0]), i)
    D = X[others].T
    s = _l1_graph_row_lp8(D, X[i]) if formulation == 8 else _l1_graph_row_lp7(D, X[i], epsilon)
    if s is None:
        return None
    row = np.zeros(X.shape[0])
    row[others] = s
    return row


def l1_graph(
    X: np.ndarray, *, formulation: int = 8, epsilon: float = 1e-3, n_jobs: int = 1
) -> tuple[np.ndarray, list[int]]:
    """Sparse reconstruction weight matrix S of the l1 graph [SS eq. 6], one LP per sample.

    Parameters
    ----------
    X : ndarray of shape (n, m)
    formulation : {8, 7}
        See :func:`l1_graph_row`.
    epsilon : float
        Tolerance of eq. (7).
    n_jobs : int
        Worker processes over samples (joblib); every row is an independent problem, so S does
        not depend on ``n_jobs``.

    Returns
    -------
    S : ndarray of shape (n, n), zero diagonal; rows of infeasible samples are NaN
    infeasible : list of int
        Samples for which eq. (7) has no solution (always empty for eq. 8).
    """
    n = X.shape[0]
    rows = parallel_map(
        partial(l1_graph_row, X), range(n), n_jobs, formulation=formulation, epsilon=epsilon
    )
    infeasible = [i for i, r in enumerate(rows) if r is None]
    S = np.vstack([np.full(n, np.nan) if r is None else r for r in rows])
    return S, infeasible


#: Relative size below which a residual of the l1-graph reconstruction is rounding (the
#: LP's sign certificate tolerates 1e-9 too, :func:`_l1_graph_row_lp8`).
RESIDUAL_RTOL = 1e-9


def sparsity_score_from_graph(X: np.ndarray, S: np.ndarray) -> np.ndarray:
    """Sparsity Score [SS eq. 10, with the S^T S fix]: lower is better.

    ``SS_r = ||f_r - S f_r||^2 / sum_i (f_ri - mu_r)^2
           = f_r^T (I - S - S^T + S^T S) f_r / f_r^T (I - 11^T/n) f_r``
    (eq. 10 prints S S^T, which is the column-convention formula; eq. 9's 1/n in the denominator
    is a constant factor and is dropped). Zero-variance features get NaN. A residual within
    rounding of the values it is computed from (``|x_ir - (S X)_ir| <= 1e-9 (|x_ir| +
    (|S| |X|)_ir)``) is 0: with more samples than features every sample is rebuilt exactly
    (t = 0 in eq. 8) and every feature scores 0, tied, not by float noise.

    Parameters
    ----------
    X : ndarray of shape (n, m)
    S : ndarray of shape (n, n), row i = reconstruction weights of sample i

    Returns
    -------
    ndarray of shape (m,)
    """
    R = X - S @ X
    R[np.abs(R) <= RESIDUAL_RTOL * (np.abs(X) + np.abs(S) @ np.abs(X))] = 0.0
    num = np.einsum("ij,ij->j", R, R)
    den = ((X - X.mean(axis=0)) ** 2).sum(axis=0)
    out = np.full(X.shape[1], np.nan)
    ok = den > 0
    out[ok] = num[ok] / den[ok]
    return out
