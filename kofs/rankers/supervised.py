"""ReliefF, trace ratio and HSIC: univariate rankers of the book's unification (ch. 4.1).

All three are special cases of ``max sum_F f^T S^ f^`` (book Table 4.1, ALGORITHMS.md §3):
ReliefF with the (sign-corrected) S^REL, the trace ratio criterion with ``L_b - lambda* L_w``
and HSIC with the (minus-sign-restored) S_HSIC. Each has a pure array kernel
(:func:`relieff_scores`, :func:`trace_ratio_scores`, :func:`hsic_scores`) and a registry
adapter.

References
----------
Zhao Z., Liu H. *Spectral Feature Selection for Data Mining*, CRC 2012, ch. 4.1.
Robnik-Sikonja M., Kononenko I. Theoretical and empirical analysis of ReliefF and RReliefF.
Machine Learning 53, 2003.
Nie F. et al. Trace ratio criterion for feature selection. AAAI 2008.
Song L. et al. Feature selection via dependence maximization. JMLR 13, 2012.
"""

from __future__ import annotations

import logging

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator

from kofs.errors import ParameterError
from kofs.rankers._inputs import labelled, sample_graph
from kofs.registry import Param, ranker

log = logging.getLogger(__name__)

__all__ = [
    "relieff_scores",
    "trace_ratio_scores",
    "class_scatter",
    "hsic_scores",
    "label_kernel",
    "zero_diagonal",
]

_BLOCK = 4_000_000  # elements per temporary block (32 MB of float64)


# ----------------------------------------------------------------------------- ReliefF


def relieff_scores(
    X: np.ndarray,
    codes: np.ndarray,
    *,
    k: int = 10,
    sample_idx: np.ndarray | None = None,
    metric: str = "manhattan",
    diff: str = "absolute",
) -> np.ndarray:
    """ReliefF relevance of every feature (book eq. 4.6), higher is better.

    ``phi(f_i) = (1/M) sum_t [ -(1/M_hit) sum_{j in NH(t)} d(x_ti, x_ji)
    + sum_{C != cl(t)} P(C)/(1 - P(cl(t))) (1/M_C) sum_{j in NM(t, C)} d(x_ti, x_ji) ]``

    Parameters
    ----------
    X : ndarray of shape (n, m)
        Samples x features.
    codes : ndarray of shape (n,)
        Integer class label per sample (at least two classes).
    k : int, default 10
        Nearest hits / nearest misses per class; fewer when a class is small
        (``M_hit = min(k, n_cl - 1)``, ``M_C = min(k, n_C)``).
    sample_idx : ndarray of int, optional
        The M instances ``x_t`` to average over (default: all n samples).
    metric : {"manhattan", "euclidean"}
        Distance between samples used to find the neighbours (over all features).
        Manhattan is the distance of Robnik-Sikonja & Kononenko; Euclidean that of eq. 4.7.
    diff : {"absolute", "squared"}
        Per-feature difference ``d``: ``|a - b|`` (eq. 4.6) or ``(a - b)^2`` (eq. 4.7, for
        which ``phi = (2/n) (f^T S^REL f - 1)`` holds in the book's idealised setting).

    Returns
    -------
    ndarray of shape (m,)
        Neighbour ties are broken by sample index. A class with one sample has no hits (its
        hit term is 0). Priors ``P(C) = n_C / n``.
    """
    from scipy.spatial.distance import cdist

    X = np.asarray(X, dtype=np.float64)
    n, m = X.shape
    _, codes = np.unique(np.asarray(codes), return_inverse=True)
    counts = np.bincount(codes)
    c = counts.size
    if c < 2:
        raise ValueError("ReliefF needs at least two classes")
    prior = counts / n
    members = [np.flatnonzero(codes == q) for q in range(c)]
    ts = np.arange(n) if sample_idx is None else np.asarray(sample_idx, dtype=np.int64)
    M = ts.size
    rows: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    wts: list[np.ndarray] = []
    step = max(1, _BLOCK // max(n, 1))
    for start in range(0, M, step):
        tb = ts[start : start + step]
        D = cdist(X[tb], X, metric="cityblock" if metric == "manhattan" else "euclidean")
        D[np.arange(tb.size), tb] = np.inf  # never your own neighbour
        for q in range(c):
            cand = members[q]
            order = np.argsort(D[:, cand], axis=1, kind="stable")
            for r, t in enumerate(tb):
                own = codes[t]
                kk = min(k, cand.size - 1) if q == own else min(k, cand.size)
                if kk <= 0:
                    continue
                nb = cand[order[r, :kk]]
                if q == own:
                    w = -1.0 / (M * kk)
                else:
                    w = prior[q] / (1.0 - prior[own]) / (M * kk)
                rows.append(np.full(kk, t))
                cols.append(nb)
                wts.append(np.full(kk, w))
    ti = np.concatenate(rows)
    ji = np.concatenate(cols)
    wi = np.concatenate(wts)
    score = np.zeros(m)
    pstep = max(1, _BLOCK // max(m, 1))
    for s in range(0, ti.size, pstep):
        d = X[ti[s : s + pstep]] - X[ji[s : s + pstep]]
        d = np.abs(d) if diff == "absolute" else d * d
        score += wi[s : s + pstep] @ d
    return score


# ----------------------------------------------------------------------------- trace ratio


def class_scatter(X: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Between- and within-class scatter of every feature: ``f^T L_b f`` and ``f^T L_w f``.

    With the label graphs of Nie et al. (Fisher style), ``L_w = I - S^FIS`` and
    ``L_b = S^FIS - 11^T/n`` (S^FIS of eq. 4.4), so ``f^T L_b f = sum_c n_c (mu_c - mu)^2`` and
    ``f^T L_w f = sum_c n_c sigma_c^2``; their ratio is the Fisher score (eq. 4.3).

    Returns
    -------
    (b, w) : two ndarrays of shape (m,)
    """
    X = np.asarray(X, dtype=np.float64)
    _, codes = np.unique(np.asarray(codes), return_inverse=True)
    n = X.shape[0]
    Z = sp.csr_matrix((np.ones(n), (codes, np.arange(n))))  # classes x samples
    counts = np.asarray(Z.sum(axis=1)).ravel()
    Xc = X - X.mean(axis=0)
    sums = Z @ Xc  # c x m class sums of the centred data
    b = (sums**2 / counts[:, None]).sum(axis=0)
    w = (Xc**2).sum(axis=0) - b
    return b, np.maximum(w, 0.0)


def trace_ratio_scores(
    b: np.ndarray,
    w: np.ndarray,
    *,
    l: int,  # noqa: E741
    max_iter: int = 100,
) -> tuple[np.ndarray, float, np.ndarray, int]:
    """Trace ratio criterion for selecting ``l`` features (book eqs. 4.10-4.13).

    Iterates (P1) select the top ``l`` of ``b_i - lambda w_i``; (P2) ``lambda = sum_sel b /
    sum_sel w``, from ``lambda = 0`` until the selection repeats. ``lambda`` increases
    monotonically to the global optimum ``lambda* = max_{|F| = l} sum_F b / sum_F w``.

    Parameters
    ----------
    b, w : ndarray of shape (m,)
        ``f^T L_b f`` and ``f^T L_w f`` per feature (:func:`class_scatter`); features with
        ``b = w = 0`` are never selected.
    l : int
        Subset size (the book's k); clipped to the number of usable features.
    max_iter : int

    Returns
    -------
    scores : ndarray of shape (m,)
        ``b - lambda* w`` (eq. 4.13), higher is better. When the optimal subset has zero
        within-class scatter (``lambda* = inf``) the Fisher ratio ``b / w`` is returned instead.
    lam : float
        ``lambda*``.
    selected : ndarray of int
        The optimal subset, best first.
    n_iter : int
    """
    b = np.asarray(b, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    usable = (b + w) > 0
    l = int(min(l, usable.sum()))  # noqa: E741 (the book's symbol)
    if l < 1:
        raise ValueError("trace ratio: no feature with non-zero scatter")
    lam = 0.0
    prev: frozenset[int] | None = None
    n_iter = 0
    sel = np.empty(0, dtype=np.int64)
    while n_iter < max_iter:
        n_iter += 1
        s = np.where(usable, b - lam * w, -np.inf)
        sel = np.argsort(-s, kind="stable")[:l]
        cur = frozenset(sel.tolist())
        den = w[sel].sum()
        if den <= 0:
            lam = np.inf
            break
        new = b[sel].sum() / den
        if cur == prev or new <= lam:
            lam = max(lam, new)
            break
        prev, lam = cur, new
    if np.isinf(lam):
        log.warning(
            "trace ratio: the %d best features have zero within-class scatter; "
            "scores are the Fisher ratio b/w",
            l,
        )
        with np.errstate(divide="ignore", invalid="ignore"):
            scores = np.where(w > 0, b / np.where(w > 0, w, 1.0), np.where(b > 0, np.inf, np.nan))
    else:
        scores = b - lam * w
    scores = np.where(usable, scores, np.nan)
    sel = sel[np.argsort(-np.nan_to_num(scores[sel], nan=-np.inf), kind="stable")]
    return scores, float(lam), sel, n_iter


# ----------------------------------------------------------------------------- HSIC


def zero_diagonal(K) -> np.ndarray | sp.csr_matrix:
    """``K`` with its diagonal set to 0 (``K~`` of eq. 4.14); dense or sparse."""
    if sp.issparse(K):
        K = sp.csr_matrix(K, dtype=np.float64)
        return (K - sp.diags(K.diagonal())).tocsr()
    K = np.array(K, dtype=np.float64)
    np.fill_diagonal(K, 0.0)
    return K


def label_kernel(codes: np.ndarray) -> LinearOperator:
    """Zero-diagonal delta kernel of the labels, ``K~_ij = 1[y_i = y_j], i != j``, as an
    n x n operator (never stored densely)."""
    _, codes = np.unique(np.asarray(codes), return_inverse=True)
    n = codes.size
    Z = sp.csr_matrix((np.ones(n), (np.arange(n), codes)))  # n x c

    def matmat(V):
        V = np.asarray(V, dtype=np.float64)
        return Z @ (Z.T @ V) - V

    return LinearOperator((n, n), matvec=matmat, matmat=matmat, rmatvec=matmat, dtype=np.float64)


def hsic_scores(X: np.ndarray, Kt) -> np.ndarray:
    """Unbiased HSIC between each feature's linear kernel and a target kernel (eq. 4.14).

    ``HSIC(f) = 1/(n(n-3)) [ tr(K~F K~) + 1^T K~F 1 1^T K~ 1 / ((n-1)(n-2))
    - 2/(n-2) 1^T K~F K~ 1 ]`` with ``K~F = f f^T`` and both diagonals zeroed (the two minus
    signs lost in the book's extraction restored), i.e. ``f^T S_HSIC f`` (eq. 4.15).
    Vectorised: ``tr(K~F K~) = f^T K~ f``, ``1^T K~F 1 = (1^T f)^2 - f^T f``,
    ``1^T K~F K~ 1 = (1^T f)(f^T a) - sum_i a_i f_i^2`` with ``a = K~ 1``.

    Parameters
    ----------
    X : ndarray of shape (n, m), n >= 4
    Kt : ndarray, sparse matrix or LinearOperator of shape (n, n)
        The target kernel with a zero diagonal (:func:`zero_diagonal`, :func:`label_kernel`).

    Returns
    -------
    ndarray of shape (m,), higher is better. Invariant to shifting a feature by a constant.
    """
    X = np.asarray(X, dtype=np.float64)
    n, m = X.shape
    if n < 4:
        raise ValueError("unbiased HSIC needs at least 4 samples")
    a = np.asarray(Kt @ np.ones((n, 1))).ravel()
    s = a.sum()
    quad = np.empty(m)
    step = max(1, _BLOCK // max(n, 1))
    for j in range(0, m, step):
        B = X[:, j : j + step]
        quad[j : j + step] = np.einsum("ij,ij->j", B, np.asarray(Kt @ B))
    sf = X.sum(axis=0)
    ss = np.einsum("ij,ij->j", X, X)
    fa = X.T @ a
    f2a = (X * X).T @ a
    return (quad + (sf**2 - ss) * s / ((n - 1) * (n - 2)) - 2.0 / (n - 2) * (sf * fa - f2a)) / (
        n * (n - 3)
    )


# ----------------------------------------------------------------------------- adapters


def _finite_columns(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(X with non-finite genes zeroed, mask of finite genes)."""
    ok = np.isfinite(X).all(axis=0)
    if ok.all():
        return X, ok
    log.warning("%d genes contain NaN/inf values and get no score", int((~ok).sum()))
    X = X.copy()
    X[:, ~ok] = 0.0
    return X, ok


@ranker(
    "relieff",
    higher_is_better=True,
    summary="ReliefF: k nearest hits vs misses per class, class priors (eq. 4.6)",
    reference="Robnik-Sikonja & Kononenko 2003; Zhao & Liu 2012 eq. 4.6",
    family="supervised",
    requires=("categories",),
    in_default_plan=False,
    params={
        "k": Param(10, int, "nearest hits / misses per class (fewer if a class is small)", low=1),
        "n_instances": Param(
            None, int, "instances M to average over, sampled with the seed (default: all)", low=1
        ),
        "metric": Param(
            "manhattan",
            str,
            "distance for the neighbour search",
            choices=("manhattan", "euclidean"),
        ),
        "diff": Param(
            "absolute",
            str,
            "per-gene difference: |a-b| (4.6) or (a-b)^2 (4.7)",
            choices=("absolute", "squared"),
        ),
    },
)
def _relieff(X, inputs, *, seed, k, n_instances, metric, diff):
    X, codes = labelled(X, inputs, "ranker 'relieff'")
    X, ok = _finite_columns(X)
    n = X.shape[0]
    idx = None
    if n_instances is not None and n_instances < n:
        idx = np.sort(np.random.default_rng(seed).choice(n, size=n_instances, replace=False))
    scores = relieff_scores(X, codes, k=k, sample_idx=idx, metric=metric, diff=diff)
    scores[~ok] = np.nan
    return scores, {"n_instances": n if idx is None else int(idx.size)}


@ranker(
    "trace-ratio",
    higher_is_better=True,
    summary="trace ratio criterion, Fisher-style label graphs; score f^T(L_b - lambda* L_w)f",
    reference="Nie et al. AAAI 2008; Zhao & Liu 2012 eqs. 4.10-4.13",
    family="supervised",
    requires=("categories",),
    in_default_plan=False,
    params={
        "l": Param(
            50, int, "subset size k of the criterion (clipped to the number of genes)", low=1
        ),
        "max_iter": Param(100, int, "maximum P1/P2 iterations", low=1),
    },
)
def _trace_ratio(X, inputs, *, seed, l, max_iter):  # noqa: E741 (the book's symbol)
    X, codes = labelled(X, inputs, "ranker 'trace-ratio'")
    X, ok = _finite_columns(X)
    b, w = class_scatter(X, codes)
    b[~ok] = 0.0
    w[~ok] = 0.0
    if not ((b + w) > 0).any():  # every gene constant: nothing to rank
        return np.full(b.size, np.nan), {"lambda": float("nan"), "selected": [], "iterations": 0}
    scores, lam, sel, it = trace_ratio_scores(b, w, l=l, max_iter=max_iter)
    return scores, {"lambda": lam, "selected": sel.tolist(), "iterations": it}


@ranker(
    "hsic",
    higher_is_better=True,
    summary="unbiased HSIC of each gene's linear kernel with the label (or similarity) kernel",
    reference="Song et al. JMLR 2012; Zhao & Liu 2012 eqs. 4.14-4.15",
    family="supervised",
    requires_one_of=("categories", "similarity"),
    uses=("categories", "similarity"),
    in_default_plan=False,
    params={
        "target": Param(
            "auto",
            str,
            "target kernel: labels (delta kernel), the sample "
            "similarity, or auto (labels if given)",
            choices=("auto", "labels", "similarity"),
        ),
    },
)
def _hsic(X, inputs, *, seed, target):
    if target == "auto":
        target = "labels" if inputs.categories is not None else "similarity"
    if target == "labels":
        X, codes = labelled(X, inputs, "ranker 'hsic' with target='labels'")
        Kt = label_kernel(codes)
    else:
        S, X, _, _ = sample_graph(X, inputs, "given", "ranker 'hsic' with target='similarity'")
        Kt = zero_diagonal(S)
    if X.shape[0] < 4:
        raise ParameterError(f"ranker 'hsic' needs at least 4 samples, got {X.shape[0]}")
    X, ok = _finite_columns(X)
    scores = hsic_scores(X, Kt)
    scores[~ok] = np.nan
    return scores, {"target": target}
