r"""Relevance voting (eq. 6.15) and relevance propagation (eq. 6.14) over gene knowledge.

Book ch. 6.3.2; ALGORITHMS.md §7.3 and §11 item 3.

* **Voting** ``r_i = sum_t v_it r_t^fun``: one sparse mat-vec of the genes x terms incidence V
  with the term relevance. A gene annotated to no term has no knowledge: its vote is NaN, so it
  is ranked last (DESIGN.md), not tied at 0 with genes annotated to irrelevant terms.
* **Propagation** ``r* = sum_k (lambda P_F)^k r = (I - lambda P_F)^{-1} r`` with the
  row-stochastic ``P_F = D_F^{-1} S_F`` (a gene without out-edges, ``d_i = 0``, has a zero row).
  ``(P_F r)_i`` is the mean relevance of the genes that row i of ``S_F`` points to, so on a
  directed relation relevance flows *against* the edge direction (pass the transpose for the
  other way). Since ``||lambda P_F||_inf <= lambda < 1`` the Neumann series converges and
  ``I - lambda P_F`` is non-singular. ``lambda`` is not given in the book: default 0.5 (ours).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from kofs.errors import ParameterError

__all__ = ["relevance_vote", "transition_matrix", "relevance_propagation"]

DEFAULT_LAMBDA = 0.5


def relevance_vote(V: Any, r_fun: np.ndarray, *, average: bool = False) -> np.ndarray:
    """Relevance voting, eq. (6.15).

    Parameters
    ----------
    V : sparse matrix of shape (m, T)
        Gene x term incidence ``v_it`` (0/1 or weights).
    r_fun : ndarray of shape (T,)
        Term relevance ``r_t^fun``.
    average : bool
        False (book): the sum over the gene's terms; True: the weighted mean (divides by
        ``sum_t v_it``, so heavily annotated genes are not favoured by their term count alone).

    Returns
    -------
    ndarray of shape (m,); NaN for genes without any term.
    """
    V = sp.csr_matrix(V, dtype=np.float64)
    r_fun = np.asarray(r_fun, dtype=np.float64)
    r = np.asarray(V @ r_fun, dtype=np.float64).ravel()
    has = np.diff(V.indptr) > 0
    if average:
        w = np.asarray(V.sum(axis=1)).ravel()
        ok = has & (w != 0)
        r[ok] = r[ok] / w[ok]
    r[~has] = np.nan
    return r


def transition_matrix(S: Any) -> sp.csr_matrix:
    """Row-stochastic ``P_F = D_F^{-1} S_F``; rows with ``d_i = 0`` stay zero.

    Parameters
    ----------
    S : sparse matrix of shape (m, m), non-negative

    Returns
    -------
    scipy.sparse.csr_matrix of shape (m, m)
    """
    S = sp.csr_matrix(S, dtype=np.float64, copy=True)
    S.sum_duplicates()
    d = np.asarray(S.sum(axis=1)).ravel()
    rows = np.repeat(np.arange(S.shape[0]), np.diff(S.indptr))
    # each entry divided by its row's sum (not multiplied by 1 / d_i, which overflows for a
    # subnormal degree: 5e-324 * inf is NaN); rows with d_i = 0 stay zero
    dr = d[rows]
    S.data = np.divide(S.data, dr, out=np.zeros_like(S.data), where=dr > 0)
    return S


def relevance_propagation(
    S: Any,
    r: np.ndarray,
    *,
    lam: float = DEFAULT_LAMBDA,
    solver: str = "direct",
    tol: float = 1e-12,
    max_iter: int = 10_000,
) -> np.ndarray:
    """Relevance propagation on a gene graph, eq. (6.14).

    Parameters
    ----------
    S : sparse matrix of shape (m, m)
        Non-negative relation ``S_F`` (directed allowed; see the module docstring).
    r : ndarray of shape (m,)
        Initial relevance (finite).
    lam : float
        Decay ``lambda``, ``0 <= lam < 1``; default 0.5 (ours, the book gives none).
    solver : {"direct", "iterative"}
        ``"direct"``: sparse LU of ``I - lam P_F``; ``"iterative"``: fixed point
        ``r* <- r + lam P_F r*`` until the max-norm change is below ``tol * max|r*|``.
    tol, max_iter : stopping rule of the iterative solver.

    Returns
    -------
    ndarray of shape (m,), the final relevance ``r*``.
    """
    if not 0.0 <= lam < 1.0:
        raise ParameterError(f"relevance propagation: lambda must lie in [0, 1), got {lam!r}")
    r = np.asarray(r, dtype=np.float64)
    P = transition_matrix(S)
    if P.shape != (r.size, r.size):
        raise ParameterError(
            f"relevance propagation: relation is {P.shape[0]} x {P.shape[1]}, relevance has {r.size}"
        )
    if lam == 0.0 or P.nnz == 0:
        return r.copy()
    if solver == "direct":
        A = (sp.identity(r.size, format="csc") - lam * P).tocsc()
        return np.asarray(spla.spsolve(A, r), dtype=np.float64).ravel()
    if solver != "iterative":
        raise ParameterError(
            f"relevance propagation: solver must be 'direct' or 'iterative', got {solver!r}"
        )
    x = r.copy()
    for _ in range(max_iter):
        nxt = r + lam * (P @ x)
        change = np.max(np.abs(nxt - x))
        x = nxt
        if change <= tol * max(np.max(np.abs(x)), 1e-300):
            break
    return x
