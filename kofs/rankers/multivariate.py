"""MRSF and MCSF: multivariate spectral feature selection (book ch. 3.2-3.6, 5.6-5.7).

Both select ``l`` genes *jointly*, so redundant genes are avoided, and report the entry order
(``info["order"]``). Scores (higher is better): the selected genes first, in entry order, then
the others by their current criterion value (MRSF: ``||f_j^T R||`` against the final residual;
MCSF: the updated score ``f_j^T R f_j``).

Targets (``target`` parameter):

* MRSF: ``lda`` (3.42, LSLDA) or ``svm`` (3.43, LSSVM) from the labels; or spectral targets
  ``Y = U_C Sigma_C^{1/2}`` from the top C eigenpairs of ``D^{-1/2} S D^{-1/2}`` with the
  trivial eigenvector ``D^{1/2} 1`` deflated, S the given sample similarity or (``rbf``) the
  RBF similarity of the expression built by :mod:`kofs.knowledge.similarity` (``auto``: dense
  RBF up to ``AUTO_DENSE_MAX`` (3,000) samples, sparse kNN RBF graph above; delta^2 = median squared distance / 2).
* MCSF: ``S^FIS`` (4.4) from the labels, the given similarity, or the same RBF similarity.

Genes are centred and scaled to unit L2 norm first (Theorem 3.2.2 and MCSF's criterion assume
unit-norm features).
"""

from __future__ import annotations

import logging

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, eigsh

from kofs.errors import ParameterError
from kofs.rankers._inputs import labelled, sample_graph
from kofs.rankers._l21 import mrsf_path
from kofs.registry import Param, ranker
from kofs.resources import F8

log = logging.getLogger(__name__)

__all__ = [
    "unit_columns",
    "lslda_targets",
    "lssvm_targets",
    "spectral_targets",
    "quadratic_scores",
    "fisher_quadratic_scores",
    "mcsf_select",
    "entry_order_scores",
    "estimate_mrsf",
    "estimate_mcsf",
]

_BLOCK = 4_000_000


def unit_columns(X: np.ndarray) -> np.ndarray:
    """Centre every column and scale it to unit L2 norm; constant or non-finite columns -> 0."""
    X = np.asarray(X, dtype=np.float64)
    ok = np.isfinite(X).all(axis=0)
    F = np.where(ok, X, 0.0)
    F = F - F.mean(axis=0)
    norms = np.linalg.norm(F, axis=0)
    ok &= np.ptp(np.where(ok, X, 0.0), axis=0) > 0
    F[:, ~ok] = 0.0
    F[:, ok] /= norms[ok]
    return F


def lslda_targets(codes: np.ndarray) -> np.ndarray:
    """LSLDA targets (3.42/4.21): ``sqrt(n/n_j) - sqrt(n_j/n)`` if ``y_i = j`` else
    ``-sqrt(n_j/n)``; shape (n, c). ``Y Y^T = n S^FIS - 11^T`` (4.24)."""
    _, codes = np.unique(np.asarray(codes), return_inverse=True)
    n = codes.size
    nj = np.bincount(codes).astype(np.float64)
    Y = np.tile(-np.sqrt(nj / n), (n, 1))
    Y[np.arange(n), codes] += np.sqrt(n / nj)[codes]
    return Y


def lssvm_targets(codes: np.ndarray) -> np.ndarray:
    """LSSVM targets (3.43/4.26): 1 if ``y_i = j`` else -1; shape (n, c)."""
    _, codes = np.unique(np.asarray(codes), return_inverse=True)
    Y = -np.ones((codes.size, codes.max() + 1))
    Y[np.arange(codes.size), codes] = 1.0
    return Y


def spectral_targets(S, n_targets: int, *, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """MRSF targets ``Y = U_C Sigma_C^{1/2}`` from a sample similarity (ch. 3.2, 5.6).

    Eigenpairs of ``S^ = D^{-1/2} S D^{-1/2}`` after deflating the trivial eigenvector
    ``xi_1 = D^{1/2} 1 / ||D^{1/2} 1||`` (it carries only the sample density, ch. 3.1); only
    positive eigenvalues are kept, so Y may have fewer than ``n_targets`` columns.

    Parameters
    ----------
    S : ndarray or sparse matrix of shape (n, n), symmetric, non-negative
    n_targets : int
        C, the number of eigenpairs.
    seed : int
        Start vector of the sparse eigensolver (dense inputs are solved exactly).

    Returns
    -------
    Y : ndarray of shape (n, C')
    eigenvalues : ndarray of shape (C',), descending
    """
    n = S.shape[0]
    d = np.asarray(S.sum(axis=1)).ravel()
    d = np.where(d > 0, d, 1.0)
    r = 1.0 / np.sqrt(d)
    xi = np.sqrt(d) / np.linalg.norm(np.sqrt(d))
    C = int(min(n_targets, n - 1))
    if C < 1:
        raise ValueError("spectral targets need at least 2 samples")
    if sp.issparse(S):
        Sn = sp.diags(r) @ sp.csr_matrix(S) @ sp.diags(r)

        def mv(v):
            v = np.asarray(v, dtype=np.float64)
            return Sn @ v - np.outer(xi, xi @ v) if v.ndim == 2 else Sn @ v - xi * (xi @ v)

        op = LinearOperator((n, n), matvec=mv, matmat=mv, dtype=np.float64)
        v0 = np.random.default_rng(seed).standard_normal(n)
        vals, vecs = eigsh(op, k=C, which="LA", v0=v0)
    else:
        Sn = r[:, None] * np.asarray(S, dtype=np.float64) * r[None, :]
        Sn = 0.5 * (Sn + Sn.T) - np.outer(xi, xi)
        vals, vecs = sla.eigh(Sn, subset_by_index=[n - C, n - 1])
    order = np.argsort(-vals, kind="stable")
    vals, vecs = vals[order], vecs[:, order]
    pos = vals > 1e-12 * max(1.0, abs(vals).max())
    return vecs[:, pos] * np.sqrt(vals[pos]), vals[pos]


def quadratic_scores(F: np.ndarray, S) -> np.ndarray:
    """``f_j^T S f_j`` for every column (5.42); S dense or sparse, blocked over genes."""
    n, m = F.shape
    out = np.empty(m)
    step = max(1, _BLOCK // max(n, 1))
    for j in range(0, m, step):
        B = F[:, j : j + step]
        out[j : j + step] = np.einsum("ij,ij->j", B, np.asarray(S @ B))
    return out


def fisher_quadratic_scores(F: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """``f_j^T S^FIS f_j = sum_c (sum_{i in c} f_ij)^2 / n_c`` (eq. 4.4) without forming S."""
    _, codes = np.unique(np.asarray(codes), return_inverse=True)
    n = codes.size
    Z = sp.csr_matrix((np.ones(n), (codes, np.arange(n))))
    counts = np.asarray(Z.sum(axis=1)).ravel()
    return ((Z @ F) ** 2 / counts[:, None]).sum(axis=0)


def mcsf_select(
    F: np.ndarray,
    scores: np.ndarray,
    l: int,  # noqa: E741
    *,
    early_stop: bool = True,
) -> tuple[list[int], np.ndarray, bool]:
    """Greedy MCSF (book Alg. 6) with the efficient score update (5.41-5.43).

    ``i* = argmax_{i not in A} sc(i)``; stop early when ``sc(i*) < 1/2`` (then
    ``||R - f f^T||_F^2 > ||R||_F^2``, Alg. 6 line 4, unit-norm features); otherwise add i* and
    update ``sc(j) -= (f_j^T f_{i*})^2``. O(l m n) after the first pass.

    Parameters
    ----------
    F : ndarray of shape (n, m)
        Unit-norm features (zero columns are never selected).
    scores : ndarray of shape (m,)
        ``f_j^T S f_j`` (:func:`quadratic_scores`, :func:`fisher_quadratic_scores`).
    l : int
    early_stop : bool, default True
        Apply the stop rule of Alg. 6 line 4; False keeps adding the best feature until ``l``
        are selected even when ``||R||_F`` grows.

    Returns
    -------
    order : list of int
        Selected features in selection order (may be shorter than l).
    current : ndarray of shape (m,)
        The final scores ``f_j^T R f_j`` (selected features: -inf).
    stopped_early : bool
    """
    sc = np.array(scores, dtype=np.float64)
    sc[np.linalg.norm(F, axis=0) == 0] = -np.inf
    sc[~np.isfinite(sc)] = -np.inf
    order: list[int] = []
    stopped = False
    for _ in range(int(min(l, F.shape[1]))):
        i = int(np.argmax(sc))
        if not np.isfinite(sc[i]):
            break
        if early_stop and sc[i] < 0.5:
            stopped = True
            break
        order.append(i)
        sc -= (F.T @ F[:, i]) ** 2
        sc[order] = -np.inf
    return order, sc, stopped


#: Relative size (to the targets) below which MRSF's residual correlations are rounding.
RESIDUAL_RTOL = 1e-10


def entry_order_scores(order: list[int], rest: np.ndarray) -> np.ndarray:
    """Scores putting ``order`` first (earlier = higher) above all other genes' ``rest``.

    ``score[order[p]] = top + (k - p)`` with ``top`` the largest finite rest score of the
    unselected genes (0 if none); non-finite rest scores become NaN.
    """
    s = np.array(rest, dtype=np.float64)
    s[~np.isfinite(s)] = np.nan
    mask = np.ones(s.size, dtype=bool)
    mask[order] = False
    fin = s[mask & np.isfinite(s)]
    top = float(fin.max()) if fin.size else 0.0
    k = len(order)
    s[order] = top + (k - np.arange(k))
    return s


# ----------------------------------------------------------------------------- adapters


def _similarity(X, inputs, target: str, name: str):
    """The given similarity (``target="similarity"``) or the ``auto`` RBF of the finite genes."""
    if target == "similarity":
        return sample_graph(X, inputs, "given", f"ranker {name!r} with target={target!r}")[0]
    ok = np.isfinite(X).all(axis=0)
    return sample_graph(X[:, ok] if not ok.all() else X, inputs, "auto", name)[0]


def estimate_mrsf(n_samples: int, n_genes: int, *, l: int = 50, n_targets: int = 10) -> int:  # noqa: E741
    """MRSF (L2,1 path): the unit-column copy F (n x m), correlations F'R and entry steps
    (3 m x C), the active block and its least squares (2 n x l, l x C) and, with a spectral
    target, the dense n x n kernel and eigenvectors."""
    n, m, l, c = int(n_samples), int(n_genes), int(l), int(n_targets)  # noqa: E741
    return 2 * F8 * n * m + 3 * F8 * m * max(c, 1) + 2 * F8 * n * l + F8 * l * c + 2 * F8 * n * n


def estimate_mcsf(n_samples: int, n_genes: int, *, l: int = 50) -> int:  # noqa: E741
    """MCSF (greedy matrix comparison): F (n x m), S F and the running residual products
    (2 n x m more), the n x n similarity and the selected block (n x l)."""
    n, m = int(n_samples), int(n_genes)
    return 3 * F8 * n * m + F8 * n * n + F8 * n * int(l)


# what MRSF and MCSF share in the registry: opt-in, multivariate, labels or a similarity used
_MULTIVARIATE = dict(
    family="multivariate",
    uses=("categories", "similarity"),
    multivariate=True,
    in_default_plan=False,
)
L_PARAM = Param(50, int, "number of genes to select (clipped to the number of genes)", low=1)


def _auto(inputs, supervised: str) -> str:
    if inputs.categories is not None:
        return supervised
    return "similarity" if inputs.similarity is not None else "rbf"


@ranker(
    "mrsf",
    higher_is_better=True,
    memory=lambda n, m, p, given: estimate_mrsf(n, m, l=min(p["l"], m), n_targets=p["n_targets"]),
    summary="MRSF: L2,1 multi-output regression path, minimal redundancy (Alg. 5/7)",
    reference="Zhao & Liu 2012 ch. 3.2-3.4, 5.6 (Alg. 5/7, eq. 3.16)",
    **_MULTIVARIATE,
    params={
        "l": L_PARAM,
        "target": Param(
            "auto",
            str,
            "regression targets: lda/svm from labels, spectral targets "
            "of the similarity or of an RBF kernel; auto = lda if labels, else "
            "similarity if given, else rbf",
            choices=("auto", "lda", "svm", "similarity", "rbf"),
        ),
        "n_targets": Param(10, int, "C, eigenpairs used as spectral targets", low=1),
        "max_iter": Param(1000, int, "AGD iterations per call (the book's M)", low=1),
        "tol": Param(1e-6, float, "AGD stop: relative change of W", low=0.0),
    },
)
def _mrsf(X, inputs, *, seed, l, target, n_targets, max_iter, tol):  # noqa: E741
    if target == "auto":
        target = _auto(inputs, "lda")
    if target in ("lda", "svm"):
        X, codes = labelled(X, inputs, f"ranker 'mrsf' with target={target!r}")
        Y = lslda_targets(codes) if target == "lda" else lssvm_targets(codes)
    else:
        S = _similarity(X, inputs, target, "mrsf")
        Y, _ = spectral_targets(S, n_targets, seed=seed)
        if Y.shape[1] == 0:
            raise ParameterError(
                "ranker 'mrsf': the similarity has no positive non-trivial "
                "eigenvalue; use another similarity or labels"
            )
    F = unit_columns(X)
    res = mrsf_path(F, Y, l, max_iter=max_iter, tol=tol)
    rest = np.linalg.norm(F.T @ res.residual, axis=1)
    # unit columns: ||f^T R|| <= ||R||; a residual within rounding of the targets (the path
    # explained them: rank-deficient X, few samples) leaves the rest tied at 0, not in the
    # order of their float noise
    rest[rest <= RESIDUAL_RTOL * np.linalg.norm(Y)] = 0.0
    if len(res.order) < l:
        log.warning(
            "mrsf: selected %d of %d genes; the rest follow by ||f^T R||", len(res.order), l
        )
    scores = entry_order_scores(res.order, rest)
    info = {
        "order": list(res.order),
        "target": target,
        "n_targets": int(Y.shape[1]),
        "lambda": res.lam,
        "residual": float(np.linalg.norm(res.residual)),
        "weights": res.W.tolist(),
        **res.info,
    }
    return scores, info


@ranker(
    "mcsf",
    higher_is_better=True,
    memory=lambda n, m, p, given: estimate_mcsf(n, m, l=min(p["l"], m)),
    summary="MCSF: greedy matrix comparison ||S - X_A X_A^T||, minimal redundancy (Alg. 6)",
    reference="Zhao & Liu 2012 ch. 3.5, 5.7 (Alg. 6, eqs. 5.41-5.43)",
    **_MULTIVARIATE,
    params={
        "l": L_PARAM,
        "target": Param(
            "auto",
            str,
            "S: labels (S^FIS, eq. 4.4), the given similarity or an "
            "RBF kernel; auto = labels if given, else similarity, else rbf",
            choices=("auto", "labels", "similarity", "rbf"),
        ),
        "early_stop": Param(
            True,
            bool,
            "stop when no gene lowers ||S - X_A X_A^T|| (Alg. 6 "
            "line 4); false always selects l genes",
        ),
    },
)
def _mcsf(X, inputs, *, seed, l, target, early_stop):  # noqa: E741 (the book's symbol)
    if target == "auto":
        target = _auto(inputs, "labels")
    if target == "labels":
        X, codes = labelled(X, inputs, "ranker 'mcsf' with target='labels'")
        F = unit_columns(X)
        base = fisher_quadratic_scores(F, codes)
    else:
        F = unit_columns(X)
        base = quadratic_scores(F, _similarity(X, inputs, target, "mcsf"))
    order, current, stopped = mcsf_select(F, base, l, early_stop=early_stop)
    if len(order) < min(l, X.shape[1]):
        log.warning(
            "mcsf: stopped after %d of %d genes (no gene lowers ||S - X_A X_A^T||); "
            "the rest follow by their current score",
            len(order),
            l,
        )
    scores = entry_order_scores(order, current)
    return scores, {
        "order": order,
        "target": target,
        "stopped_early": stopped,
        "n_selected": len(order),
    }
