"""Solvers of the L2,1-regularised multi-output regression behind MRSF (book ch. 3.3-3.4, 5.6).

Everything uses the **1/2-scaled** loss ``1/2 ||Y - XW||_F^2 + lambda ||W||_{2,1}``, the one
for which the book's KKT conditions (3.33-3.35) and ``lambda_i = (1 - alpha) ||f_t^T R||`` are
right (ALGORITHMS.md §4.1). Pure NumPy/SciPy kernels: no ids, no I/O.

* :func:`group_soft_threshold` -- the prox step (3.24-3.30).
* :func:`agd_l21` -- accelerated gradient descent / FISTA (Alg. 4) with backtracking on L and the
  corrected search point ``S_j = W_j + beta_j (W_j - W_{j-1})`` (Alg. 8 drops ``W_j +``).
* :func:`mrsf_path` -- the MRSF path solver (Alg. 5/7): entry steps from the corrected quadratic
  (5.23) with ``a = f_j^T R``, AGD on the active set warm-started at the tentative solution,
  global optimality check with back-tracing.

Reference: Zhao Z., Liu H. *Spectral Feature Selection for Data Mining*, CRC 2012, ch. 3, 5.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np

log = logging.getLogger(__name__)

__all__ = ["group_soft_threshold", "l21_norm", "agd_l21", "entry_steps", "mrsf_path", "PathResult"]


def l21_norm(W: np.ndarray) -> float:
    """``||W||_{2,1} = sum_i ||w^i||_2`` (eq. 3.17)."""
    return float(np.linalg.norm(W, axis=1).sum()) if W.size else 0.0


def group_soft_threshold(V: np.ndarray, rho: float) -> np.ndarray:
    """Row-wise prox of ``rho ||.||_{2,1}`` (eq. 3.30).

    ``w^i = v^i (1 - rho / ||v^i||)`` if ``||v^i|| > rho`` else 0.
    """
    norms = np.linalg.norm(V, axis=1)
    keep = norms > rho
    out = np.zeros_like(V)
    out[keep] = V[keep] * (1.0 - rho / norms[keep])[:, None]
    return out


def _fista(
    G: np.ndarray,
    H: np.ndarray,
    lam: float,
    W0: np.ndarray,
    *,
    L0: float,
    max_iter: int,
    tol: float,
) -> tuple[np.ndarray, float, int]:
    """FISTA on the Gram form ``1/2 tr(W^T G W) - tr(W^T H)`` (+ const) + ``lam ||W||_{2,1}``.

    ``G = X^T X`` (k x k), ``H = X^T Y`` (k x C): the book's eqs. 5.32-5.33 (the constant
    ``1/2 tr(Y^T Y)`` cancels in the backtracking test). Returns (W, last L, iterations).
    """

    def smooth(W):
        GW = G @ W
        return 0.5 * float(np.sum(W * GW)) - float(np.sum(W * H)), GW - H

    W_prev = W = np.array(W0, dtype=np.float64)
    a_prev, a = 0.0, 1.0  # alpha_{j-2}, alpha_{j-1}; alpha_{-1} = 0, alpha_0 = 1
    L = float(L0)
    it = 0
    while it < max_iter:
        it += 1
        beta = (a_prev - 1.0) / a
        S = W + beta * (W - W_prev)
        fS, gS = smooth(S)
        while True:
            Wn = group_soft_threshold(S - gS / L, lam / L)
            D = Wn - S
            fn, _ = smooth(Wn)
            bound = fS + float(np.sum(gS * D)) + 0.5 * L * float(np.sum(D * D))
            if fn <= bound + 1e-12 * max(1.0, abs(bound)):
                break
            L *= 2.0
        W_prev, W = W, Wn
        a_prev, a = a, (1.0 + np.sqrt(1.0 + 4.0 * a * a)) / 2.0
        if np.linalg.norm(W - W_prev) <= tol * max(np.linalg.norm(W), 1e-12):
            break
    return W, L, it


def agd_l21(
    X: np.ndarray,
    Y: np.ndarray,
    lam: float,
    *,
    W0: np.ndarray | None = None,
    L0: float = 1.0,
    max_iter: int = 1000,
    tol: float = 1e-6,
) -> tuple[np.ndarray, dict]:
    """Solve ``min_W 1/2 ||Y - XW||_F^2 + lam ||W||_{2,1}`` by AGD (book Alg. 4).

    Parameters
    ----------
    X : ndarray of shape (n, k)
    Y : ndarray of shape (n, C)
    lam : float >= 0
    W0 : ndarray of shape (k, C), optional
        Starting point (default 0).
    L0 : float, default 1
        Initial Lipschitz estimate; doubled until the model function bounds the loss.
    max_iter : int, default 1000 (the book's M)
    tol : float, default 1e-6
        Stop when ``||W_{j+1} - W_j||_F <= tol ||W_{j+1}||_F``.

    Returns
    -------
    W : ndarray of shape (k, C)
    info : dict with ``iterations`` and ``L``.

    Notes
    -----
    Works on the k x k Gram matrix, so it is meant for k up to a few thousand columns (the
    MRSF active sets); with ``lam >= max_i ||f_i^T Y||`` the solution is exactly 0.
    """
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    W0 = np.zeros((X.shape[1], Y.shape[1])) if W0 is None else np.asarray(W0, dtype=np.float64)
    W, L, it = _fista(X.T @ X, X.T @ Y, float(lam), W0, L0=L0, max_iter=max_iter, tol=tol)
    return W, {"iterations": it, "L": L}


def entry_steps(a: np.ndarray, b: np.ndarray, c: float) -> np.ndarray:
    """Smallest ``alpha in [0, 1]`` with ``||a_j - alpha b_j|| = (1 - alpha) c`` for each row j.

    The quadratic (5.23) ``x alpha^2 - 2 y alpha + z = 0``, ``x = b.b - c^2``,
    ``y = a.b - c^2``, ``z = a.a - c^2`` with ``a = (f_j^T R)^T`` (the book prints ``f_t``)
    and ``b = (f_j^T X_A gamma_A)^T``. For an inactive feature ``z <= 0`` and the left side is
    ``||a - b||^2 >= 0`` at 1, so a root in [0, 1] exists; a feature for which every alpha
    works (``x = y = z = 0``: a copy of an active feature) gets 1 (never enters).

    Parameters
    ----------
    a, b : ndarray of shape (p, C)
    c : float > 0

    Returns
    -------
    ndarray of shape (p,)
    """
    c2 = c * c
    x = np.einsum("ij,ij->i", b, b) - c2
    y = np.einsum("ij,ij->i", a, b) - c2
    z = np.minimum(np.einsum("ij,ij->i", a, a) - c2, 0.0)
    eps = 1e-12 * c2
    out = np.ones(a.shape[0])
    lin = np.abs(x) <= eps
    with np.errstate(divide="ignore", invalid="ignore"):
        # linear case: -2 y alpha + z = 0
        al = np.where(np.abs(y) > eps, z / (2.0 * y), np.where(np.abs(z) <= eps, 1.0, np.inf))
        disc = np.maximum(y * y - x * z, 0.0)
        q = y + np.copysign(np.sqrt(disc), y)
        r1 = np.where(np.abs(x) > eps, q / x, np.inf)
        r2 = np.where(np.abs(q) > eps, z / q, np.inf)
    tol = 1e-10
    cand = np.stack([r1, r2])
    cand = np.where((cand >= -tol) & (cand <= 1 + tol), cand, np.inf)
    quad = cand.min(axis=0)
    res = np.where(lin, np.where((al >= -tol) & (al <= 1 + tol), al, np.inf), quad)
    out = np.where(np.isfinite(res), np.clip(res, 0.0, 1.0), 1.0)
    return out


@dataclass
class PathResult:
    """Outcome of :func:`mrsf_path`.

    Attributes
    ----------
    order : list of int
        Selected feature indices in entry order (earliest first).
    W : ndarray of shape (len(order), C)
        Weights of the selected features, rows in ``order``.
    lam : float
        The regularisation parameter of the final solution.
    residual : ndarray of shape (n, C)
        ``Y - X_A W``.
    info : dict
        ``path_steps``, ``agd_calls``, ``agd_iterations``, ``backtraces``, ``stopped``.
    """

    order: list[int]
    W: np.ndarray
    lam: float
    residual: np.ndarray
    info: dict = field(default_factory=dict)


def mrsf_path(
    F: np.ndarray,
    Y: np.ndarray,
    l: int,  # noqa: E741 (the book's symbol)
    *,
    max_iter: int = 1000,
    tol: float = 1e-6,
    max_backtrace: int = 50,
    max_steps: int | None = None,
) -> PathResult:
    """MRSF path solver (book Alg. 5/7): select ``l`` features of ``F`` to regress ``Y``.

    ``W = 0, lambda = inf, R = Y, A = {argmax_i ||f_i^T Y||}``; while ``|A| < l``: direction
    ``gamma = lstsq(X_A, R)``; entry step of every inactive feature (:func:`entry_steps`);
    ``j* = argmin alpha``, ``lambda = (1 - alpha*) c``; AGD on ``A + {j*}`` warm-started at
    ``[W + alpha* gamma; 0]``; if an inactive feature violates ``||f_j^T R~|| <= lambda``, the
    active set becomes the non-zero rows plus the violators and AGD is re-run (back-trace).
    An accepted active set keeps rows that AGD leaves at zero (a feature entering exactly on the
    boundary, Alg. 5 line 13); a back-trace drops them. If more than ``l`` features are active
    at the end, the ``l`` rows with the largest ``||w^i||`` are kept.

    Parameters
    ----------
    F : ndarray of shape (n, m)
        Features, preprocessed (columns centred, unit L2 norm; zero columns never enter).
    Y : ndarray of shape (n, C)
        Targets.
    l : int
        Number of features to select.
    max_iter, tol : AGD settings (:func:`agd_l21`).
    max_backtrace : int
        Back-traces allowed per path step.
    max_steps : int, optional
        Path steps allowed (default ``4 l + 100``).

    Returns
    -------
    PathResult
    """
    F = np.asarray(F, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    n, m = F.shape
    C = Y.shape[1]
    valid = np.linalg.norm(F, axis=0) > 0
    l = int(min(l, valid.sum()))  # noqa: E741 (the book's symbol)
    info = {"path_steps": 0, "agd_calls": 0, "agd_iterations": 0, "backtraces": 0, "stopped": ""}
    if l == 0:
        return PathResult(order=[], W=np.zeros((0, C)), lam=np.inf, residual=Y.copy(), info=info)
    corr = np.linalg.norm(F.T @ Y, axis=1)
    corr[~valid] = -np.inf
    j0 = int(np.argmax(corr))
    A = [j0]
    W = np.zeros((1, C))
    R = Y.copy()
    lam = float(corr[j0])
    stamp = {j0: (0, -corr[j0])}
    L = 1.0
    ynorm = max(float(np.linalg.norm(Y)), 1e-300)
    max_steps = 4 * l + 100 if max_steps is None else max_steps
    while len(A) < l:
        if info["path_steps"] >= max_steps:
            info["stopped"] = "max_steps"
            log.warning(
                "MRSF: path stopped after %d steps with %d of %d features", max_steps, len(A), l
            )
            break
        info["path_steps"] += 1
        XA = F[:, A]
        gamma = np.linalg.lstsq(XA, R, rcond=None)[0]
        FR = F.T @ R
        c = float(np.linalg.norm(FR[A], axis=1).max())
        if c <= 1e-10 * ynorm:
            info["stopped"] = "residual"
            log.warning(
                "MRSF: the targets are fitted exactly by %d features; %d requested", len(A), l
            )
            break
        FP = F.T @ (XA @ gamma)
        inactive = np.ones(m, dtype=bool)
        inactive[A] = False
        inactive &= valid
        idx = np.flatnonzero(inactive)
        alpha = entry_steps(FR[idx], FP[idx], c)
        jstar = int(idx[np.argmin(alpha)])
        astar = float(alpha.min())
        lam_new = (1.0 - astar) * c
        A_hat = A + [jstar]
        W_hat = np.vstack([W + astar * gamma, np.zeros((1, C))])
        new_corr = {jstar: float(np.linalg.norm(FR[jstar]))}
        for bt in range(max_backtrace + 1):
            XA = F[:, A_hat]
            W_t, L, it = _fista(
                XA.T @ XA, XA.T @ Y, lam_new, W_hat, L0=L, max_iter=max_iter, tol=tol
            )
            info["agd_calls"] += 1
            info["agd_iterations"] += it
            R_t = Y - XA @ W_t
            cn = np.linalg.norm(F.T @ R_t, axis=1)
            cn[A_hat] = -np.inf
            cn[~valid] = -np.inf
            viol = np.flatnonzero(cn > lam_new * (1.0 + 1e-6) + 1e-12 * ynorm)
            if viol.size == 0 or bt == max_backtrace:
                break
            info["backtraces"] += 1
            viol = viol[np.argsort(-cn[viol], kind="stable")]
            nz = np.flatnonzero(np.linalg.norm(W_t, axis=1) > 0)
            A_hat = [A_hat[i] for i in nz] + viol.tolist()
            W_hat = np.vstack([W_t[nz], np.zeros((viol.size, C))])
            new_corr.update({int(j): float(cn[j]) for j in viol})
        A, W = A_hat, W_t  # Alg. 5 line 13: rows on the boundary (w^i = 0) stay active
        R = Y - F[:, A] @ W
        lam = lam_new
        step = info["path_steps"]
        stamp = {j: stamp.get(j, (step, -new_corr.get(j, 0.0))) for j in A}
    if len(A) > l:
        big = np.argsort(-np.linalg.norm(W, axis=1), kind="stable")[:l]
        big = np.sort(big)
        A = [A[i] for i in big]
        W = W[big]
        R = Y - F[:, A] @ W
    pos = sorted(range(len(A)), key=lambda i: (stamp[A[i]], A[i]))
    order = [A[i] for i in pos]
    return PathResult(order=order, W=W[pos], lam=lam, residual=R, info=info)
