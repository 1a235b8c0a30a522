"""Array kernels of the sample-similarity builders (NumPy/SciPy only; no ids, no I/O).

See :mod:`kofs.knowledge.similarity` for the formulas, references and the dispatcher; the
kernels are imported from here.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable

import numpy as np
import scipy.sparse as sp
from scipy.linalg.blas import dsyrk

from kofs._compute import chunked as _chunked
from kofs._compute.blocks import cross as _cross
from kofs._compute.blocks import row_norms2 as _row_norms2
from kofs._compute.blocks import snap_zero
from kofs._compute.chunked import is_dask
from kofs._compute.run_cache import cache_of
from kofs.errors import ParameterError, ResourceError

logger = logging.getLogger(__name__)

#: Dense builders refuse more samples than this (an n x n float64 matrix of 3.2 GB).
DENSE_LIMIT = 20000
#: Label graphs refuse more stored entries than this (sum of squared class sizes).
LABEL_NNZ_LIMIT = 100_000_000
#: Labels that mean "unlabelled sample" (semi-supervised SPEC, eq. 2.28).
MISSING_LABELS = frozenset({"", "NA", "N/A", "NaN", "nan", "?"})
BLOCK_BYTES = 64 * 2**20


def _gram(A: np.ndarray) -> np.ndarray:
    """``A A^T`` by a symmetric rank-k update (half the flops of ``A @ A.T``)."""
    A = np.asarray(A, dtype=np.float64)
    if A.shape[0] < 2 or A.shape[1] == 0:
        return A @ A.T
    upper = dsyrk(1.0, np.ascontiguousarray(A).T, trans=1)
    return np.triu(upper) + np.triu(upper, 1).T


#: Gram matrices ``A A^T`` of read-only matrices (an Expression's values) are kept in the run's
#: kernel cache, the last one only: the rankers of one run (Laplacian Score's kNN graph, SPEC's
#: RBF similarity) need the distances of the same canonical matrix; computing them once saved
#: 1.5 s of a 271 x 47,192 run (load 7). Kept up to 32 MB (2,048 samples).
_GRAM_CACHE_BYTES = 32 * 2**20


def _shared_gram(A: np.ndarray) -> np.ndarray:
    """:func:`_gram`, reused within a run for the same read-only array object (an Expression's
    values: the same object for every ranker of a run; a new Expression is a new object, so
    data changed in place in between is never served stale). Not to be modified by the
    caller."""
    cache = cache_of("gram")
    if (
        cache is None
        or not isinstance(A, np.ndarray)
        or A.flags.writeable
        or 8 * len(A) ** 2 > _GRAM_CACHE_BYTES
    ):
        return _gram(A)
    hit = cache.get(id(A))
    if hit is not None and hit[0]() is A:
        return hit[1]
    G = _gram(A)
    cache.clear()
    cache[id(A)] = (weakref.ref(A), G)
    return G


def squared_distances(A: np.ndarray, B: np.ndarray | None = None) -> np.ndarray:
    """Pairwise squared Euclidean distances by the squared-norm trick (book 5.4.1).

    Parameters
    ----------
    A : ndarray of shape (p, m)
    B : ndarray of shape (q, m), optional (default ``A``)

    Returns
    -------
    ndarray of shape (p, q)
        ``||a_i||^2 + ||b_j||^2 - 2 a_i^T b_j``, clipped at 0; exact 0 on the diagonal and
        exactly symmetric when ``B`` is omitted.
    """
    same = B is None
    if sp.issparse(A) or (B is not None and sp.issparse(B)):
        B = A if same else B
        na, nb = _row_norms2(A), _row_norms2(B)
        d2 = na[:, None] + nb[None, :] - 2.0 * _cross(A, B)
    elif same:
        G = _shared_gram(A)
        na = nb = np.diag(G).copy()
        d2 = na[:, None] + na[None, :] - 2.0 * G
    else:
        na = np.einsum("ij,ij->i", A, A)
        nb = np.einsum("ij,ij->i", B, B)
        d2 = na[:, None] + nb[None, :] - 2.0 * (A @ B.T)
    np.maximum(d2, 0.0, out=d2)
    snap_zero(d2, na, nb)
    if same:
        d2 = np.maximum(d2, d2.T) if sp.issparse(A) else d2
        np.fill_diagonal(d2, 0.0)
    return d2


def median_bandwidth(X: np.ndarray, *, max_samples: int = 2000) -> float:
    """Default RBF bandwidth ``delta^2`` = median pairwise squared distance / 2 (ours).

    With it, the RBF weight of a median-distant pair is ``exp(-1)``. Above ``max_samples``
    samples the median is taken over the pairs of ``max_samples`` evenly spaced samples
    (deterministic, no RNG). Returns 1.0 when all samples coincide.
    """
    n = X.shape[0]
    if n < 2:
        return 1.0
    idx = np.unique(np.linspace(0, n - 1, min(n, max_samples)).astype(np.int64))
    rows = _chunked.take_rows(X, idx) if is_dask(X) else X[idx]
    return _median_half(squared_distances(rows))


def _median_half(d2: np.ndarray) -> float:
    med = float(np.median(d2[np.triu_indices(d2.shape[0], k=1)]))
    return med / 2.0 if med > 0 else 1.0


def _check_dense_size(n: int, what: str) -> None:
    if n > DENSE_LIMIT:
        raise ResourceError(
            f"{what} similarity of {n} samples would be a dense {n} x {n} matrix "
            f"({8 * n * n / 2**30:.1f} GB); use kind 'knn-rbf' (sparse kNN) instead"
        )


def rbf_similarity(X: np.ndarray, *, delta2: float | None = None) -> np.ndarray:
    """Dense RBF similarity (book eq. 2.25).

    Parameters
    ----------
    X : ndarray of shape (n, m)
    delta2 : float, optional
        ``delta^2`` (> 0); default :func:`median_bandwidth`.

    Returns
    -------
    ndarray of shape (n, n)
        ``exp(-||x_i - x_j||^2 / (2 delta^2))``, symmetric, diagonal 1.
    """
    return rbf_with_bandwidth(X, delta2=delta2)[0]


def rbf_with_bandwidth(X: np.ndarray, *, delta2: float | None = None) -> tuple[np.ndarray, float]:
    """:func:`rbf_similarity` and the ``delta^2`` used (distances computed once)."""
    n = X.shape[0]
    _check_dense_size(n, "RBF")
    S = squared_distances(X)
    if delta2 is None:
        delta2 = _median_half(S) if n <= 2000 else median_bandwidth(X)
    S *= -1.0 / (2.0 * float(delta2))
    np.exp(S, out=S)
    return S, float(delta2)


def linear_similarity(X: np.ndarray, *, c: float = 0.0) -> np.ndarray:
    """Linear kernel ``x_i^T x_j + c`` (book eq. 2.23), dense (n, n). May be negative."""
    _check_dense_size(X.shape[0], "linear")
    return _cross(X, X) + c


def polynomial_similarity(
    X: np.ndarray, *, a: float = 1.0, c: float = 1.0, degree: int = 2
) -> np.ndarray:
    """Polynomial kernel ``(a x_i^T x_j + c)^d`` (book eq. 2.24), dense (n, n)."""
    _check_dense_size(X.shape[0], "polynomial")
    return (a * _cross(X, X) + c) ** degree


def cosine_similarity(X: np.ndarray) -> np.ndarray:
    """Cosine similarity ``x_i^T x_j / (||x_i|| ||x_j||)`` (book prints ``||x_i|| ||x_i||``: typo).

    A zero row has similarity 0 to every other sample and 1 to itself.
    """
    _check_dense_size(X.shape[0], "cosine")
    norms = np.sqrt(_row_norms2(X))
    safe = np.where(norms > 0, norms, 1.0)
    S = _cross(X, X) / safe[:, None] / safe[None, :]
    np.fill_diagonal(S, 1.0)
    return S


def default_heat_t(knn_d2: sp.csr_matrix) -> float:
    """Default heat-kernel ``t`` (ours): mean squared distance over the directed kNN edges."""
    t = float(np.mean(knn_d2.data)) if knn_d2.nnz else 0.0
    return t if t > 0 else 1.0


def heat_kernel_graph(knn_d2: sp.csr_matrix, *, t: float) -> sp.csr_matrix:
    """Symmetric "OR" kNN heat-kernel graph (LS step 2): ``S_ij = exp(-d_ij^2 / t)`` on edges.

    Parameters
    ----------
    knn_d2 : csr_matrix of shape (n, n)
        Directed kNN squared distances (:func:`knn_squared_distances`).
    t : float
        Bandwidth (> 0). For RBF weights (2.25) pass ``t = 2 delta^2``.

    Returns
    -------
    csr_matrix of shape (n, n)
        Symmetric (``max(s_ij, s_ji)``), no self-loops; an edge weight that would underflow
        is kept at the smallest normal float so that every sample keeps >= k neighbours.
    """
    W = knn_d2.copy()
    W.data = np.maximum(np.exp(-W.data / t), np.finfo(np.float64).tiny)
    W = W.maximum(W.T).tocsr()
    W.sort_indices()
    return W


def label_codes(labels: tuple[str, ...] | list[str]) -> tuple[np.ndarray, tuple[str, ...]]:
    """Integer class codes (sorted class names), -1 for an unlabelled sample (:data:`MISSING_LABELS`)."""
    classes = tuple(sorted({v for v in labels if v not in MISSING_LABELS}))
    lookup = {c: i for i, c in enumerate(classes)}
    return np.array([lookup.get(v, -1) for v in labels], dtype=np.int64), classes


def _label_graph(codes: np.ndarray, weight: Callable[[int], float]) -> sp.csr_matrix:
    codes = np.asarray(codes, dtype=np.int64)
    n = codes.shape[0]
    if (codes < 0).any():
        raise ParameterError("label graph: every sample needs a label; drop the unlabelled samples")
    sizes = np.bincount(codes)
    nnz = int(np.sum(sizes.astype(np.int64) ** 2))
    if nnz > LABEL_NNZ_LIMIT:
        raise ResourceError(
            f"label graph would store {nnz} entries (classes of {n} samples); "
            "use fisher / a kNN graph instead"
        )
    rows, cols, vals = [], [], []
    for lab, size in enumerate(sizes):
        members = np.flatnonzero(codes == lab)
        if size == 0:
            continue
        rows.append(np.repeat(members, size))
        cols.append(np.tile(members, size))
        vals.append(np.full(size * size, weight(int(size))))
    if not rows:
        return sp.csr_matrix((n, n))
    S = sp.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n)
    )
    S.sort_indices()
    return S


def fisher_label_similarity(codes: np.ndarray) -> sp.csr_matrix:
    """S^FIS (book eq. 2.27): ``s_ij = 1/n_l`` if ``y_i = y_j = l`` (diagonal included), else 0.

    Its degree matrix is the identity; with it the Laplacian Score is ``1/(1 + Fisher)``.
    """
    return _label_graph(codes, lambda size: 1.0 / size)


def binary_label_similarity(codes: np.ndarray) -> sp.csr_matrix:
    """Binary label graph (book eq. 2.26): ``s_ij = 1`` if ``y_i = y_j``, else 0."""
    return _label_graph(codes, lambda size: 1.0)


def unit_rows(X: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm (zero rows kept); Euclidean kNN on them = cosine kNN."""
    norms = np.sqrt(_row_norms2(X))
    scale = 1.0 / np.where(norms > 0, norms, 1.0)
    if sp.issparse(X):
        return sp.csr_matrix(sp.diags(scale) @ X)
    return X * scale[:, None]
