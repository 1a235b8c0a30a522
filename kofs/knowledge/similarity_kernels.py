"""Array kernels of the sample-similarity builders (NumPy/SciPy only; no ids, no I/O).

See :mod:`kofs.knowledge.similarity` for the formulas, references and the dispatcher; the
kernels are imported from here.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.linalg.blas import dsyrk
from threadpoolctl import threadpool_limits

from kofs._compute import chunked as _chunked
from kofs._compute.blocks import cross as _cross
from kofs._compute.blocks import order_key, snap_zero
from kofs._compute.blocks import row_norms2 as _row_norms2
from kofs._compute.chunked import is_dask
from kofs._compute.matrix import column_means
from kofs._compute.run_cache import cache_of
from kofs.errors import ParameterError, ResourceError

logger = logging.getLogger(__name__)

#: Dense builders refuse more samples than this (an n x n float64 matrix of 3.2 GB).
DENSE_LIMIT = 20000
#: Label graphs refuse more stored entries than this (sum of squared class sizes).
LABEL_NNZ_LIMIT = 100_000_000
#: Labels that mean "unlabelled sample" (semi-supervised SPEC, eq. 2.28).
MISSING_LABELS = frozenset({"", "NA", "N/A", "NaN", "nan", "?"})
_BLOCK_BYTES = 64 * 2**20
#: From this many samples a sparse exact kNN search uses the compiled loop (numba), below it
#: the block search (no compilation for small data).
EXACT_COMPILED_MIN = 2000


def _compiled_knn_available() -> bool:
    """Whether :mod:`kofs._compute.knn_exact` (numba) can run; imported only for the large sparse
    matrices it serves, so dense runs never load numba."""
    from kofs._compute import knn_exact

    return knn_exact.AVAILABLE


def _gram(A: np.ndarray) -> np.ndarray:
    """``A A^T`` by a symmetric rank-k update (half the flops of ``A @ A.T``)."""
    A = np.asarray(A, dtype=np.float64)
    if A.shape[0] < 2 or A.shape[1] == 0:
        return A @ A.T
    upper = dsyrk(1.0, np.ascontiguousarray(A).T, trans=1)
    return np.triu(upper) + np.triu(upper, 1).T


#: The last Gram matrix ``A A^T`` of a read-only matrix (an Expression's values), keyed by its
#: memory: the rankers of one run (Laplacian Score's kNN graph, SPEC's RBF similarity) need the
#: distances of the same canonical matrix; computing them once saved 1.5 s of a 271 x 47,192
#: run (load 7). Kept up to 32 MB (2,048 samples).
_GRAM_CACHE: dict = {}
_GRAM_CACHE_BYTES = 32 * 2**20


def _shared_gram(A: np.ndarray) -> np.ndarray:
    """:func:`_gram`, reused for the same read-only array object (an Expression's values: the
    same object for every ranker of a run; a new Expression is a new object, so data changed
    in place in between is never served stale). Not to be modified by the caller."""
    if not isinstance(A, np.ndarray) or A.flags.writeable or 8 * len(A) ** 2 > _GRAM_CACHE_BYTES:
        return _gram(A)
    hit = _GRAM_CACHE.get(id(A))
    if hit is not None and hit[0]() is A:
        return hit[1]
    G = _gram(A)
    _GRAM_CACHE.clear()
    _GRAM_CACHE[id(A)] = (weakref.ref(A), G)
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


def knn_squared_distances(X: np.ndarray, *, k: int = 5) -> sp.csr_matrix:
    """Directed kNN graph holding squared Euclidean distances, self excluded.

    Exact search by blocks of rows (squared-norm trick, ``argpartition``): memory
    O(block x n), never a dense n x n matrix. Ties are broken by the lower sample index. A
    sparse ``X`` of :data:`EXACT_COMPILED_MIN` samples or more goes through the compiled loop
    of :mod:`kofs._compute.knn_exact` when numba is installed (same result, same tie rule).

    Parameters
    ----------
    X : ndarray or scipy.sparse CSR of shape (n, m)
    k : int
        Neighbours per sample, 1 <= k <= n - 1.

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n, n)
        Row i holds the k nearest other samples of x_i (explicit entries, possibly 0.0 for
        duplicate samples).
    """
    n = X.shape[0]
    if not 1 <= k <= n - 1:
        raise ParameterError(f"kNN graph: k must lie in [1, {n - 1}] for {n} samples, got {k}")
    norms = _row_norms2(X)
    if sp.issparse(X) and n >= EXACT_COMPILED_MIN and _compiled_knn_available():
        from kofs._compute import knn_exact

        cols, vals = knn_exact.sparse_knn(X, k, norms)
        indptr = np.arange(0, n * k + 1, k, dtype=np.int64)
        return sp.csr_matrix((vals.ravel(), cols.ravel(), indptr), shape=(n, n))
    block = max(1, min(n, _BLOCK_BYTES // (8 * max(n, 1))))
    full = squared_distances(X) if block == n else None
    cols = np.empty((n, k), dtype=np.int64)
    vals = np.empty((n, k), dtype=np.float64)
    for start in range(0, n, block):
        stop = min(n, start + block)
        if full is not None:
            d2 = full
        else:
            d2 = norms[start:stop, None] + norms[None, :] - 2.0 * _cross(X[start:stop], X)
            np.maximum(d2, 0.0, out=d2)
            snap_zero(d2, norms[start:stop], norms)
        rows = np.arange(stop - start)
        d2[rows, rows + start] = np.inf  # no self-loops
        key = order_key(d2)
        part = (
            np.argpartition(key, k - 1, axis=1)[:, :k]
            if k < n - 1
            else np.argsort(key, axis=1)[:, :k]
        )
        kept = np.take_along_axis(key, part, axis=1)
        # a tie at the k-th distance: argpartition keeps an arbitrary one of the tied samples;
        # re-select those rows by (distance, index) so the lower index wins
        kth = kept.max(axis=1)
        tied = np.flatnonzero((key <= kth[:, None]).sum(axis=1) > k)
        for r in tied:
            best = np.lexsort((np.arange(n), key[r]))[:k]
            part[r], kept[r] = best, key[r, best]
        # deterministic: order the kept candidates by (distance, index)
        order = np.lexsort((part, kept), axis=1)
        cols[start:stop] = np.take_along_axis(part, order, axis=1)
        vals[start:stop] = np.take_along_axis(np.take_along_axis(d2, part, axis=1), order, axis=1)
    indptr = np.arange(0, n * k + 1, k, dtype=np.int64)
    return sp.csr_matrix((vals.ravel(), cols.ravel(), indptr), shape=(n, n))


#: Below this many samples the kNN search is exact (O(n^2) distances by blocks); from it on,
#: approximate with an inverted-file index (faiss, :func:`pc_neighbours`). Measured in
#: bench/bench_single_cell.py (``--knn``): see docs/single-cell.md.
ANN_MIN_SAMPLES = 10000
KNN_SEARCHES = ("auto", "exact", "approximate")


#: The approximate search looks for this many candidates (at least), then keeps the k nearest
#: by exact distance: the result for a given k does not depend on other searches (cacheable).
ANN_CANDIDATES = 15
#: Above this many features the candidate search runs on the top ``ANN_PROJECTION`` principal
#: components (randomized SVD with implicit centring: X is never densified or centred in
#: memory); candidates are then re-ranked by exact distances in the full space.
ANN_PROJECTION = 50


def _orthonormal(Y: np.ndarray) -> np.ndarray:
    """An orthonormal basis of the columns of a tall ``Y`` (n x l, n >> l).

    Cholesky QR applied twice (CholQR2: ``Y = Q R`` from the Cholesky factor of ``Y^T Y``; the
    second pass restores orthogonality to working precision): two BLAS-3 passes over ``Y``
    instead of a Householder QR, ~5x faster on 200,000 x 60. Falls back to Householder QR when
    ``Y^T Y`` is not numerically positive definite (rank-deficient ``Y``).
    """
    Q = Y
    try:
        for _ in range(2):
            R = np.linalg.cholesky(Q.T @ Q).T  # upper triangular, Q^T Q = R^T R
            Q = sla.solve_triangular(R, Q.T, trans="T", lower=False).T
    except np.linalg.LinAlgError:
        return np.linalg.qr(Y)[0]
    if not np.all(np.isfinite(Q)):
        return np.linalg.qr(Y)[0]
    return Q


def principal_scores(X, *, n_components: int = 50, seed: int = 0, n_iter: int = 2) -> np.ndarray:
    """Scores on the top principal components of the rows of ``X`` (dense or sparse).

    Randomized range finder (Halko, Martinsson & Tropp 2011, Alg. 4.4) applied to the centred
    matrix ``X - 1 mu^T`` without forming it: every product with it is a product with ``X``
    plus a rank-one correction. ``n_components + 10`` random directions, ``n_iter`` power
    iterations, orthonormalised by :func:`_orthonormal`; seeded. With numba, the products with
    a CSR ``X`` are compiled loops run on threads (no CSC copy of ``X`` for ``X^T Q``). A dask
    ``X`` is read once per product (``2 n_iter + 2`` passes over its chunks, :mod:`kofs._compute.chunked`);
    the result equals the in-memory one to rounding.
    """
    from kofs._compute import numba_kernels

    n, m = X.shape
    ell = min(n_components + 10, n, m)
    rng = np.random.default_rng(seed)
    if is_dask(X):  # one pass over the chunks per product
        mu = _chunked.column_means(X)

        def x_right(B):
            return _chunked.right_product(X, B)

        def x_left(Q):
            return _chunked.left_product(Q.T, X).T

    else:
        mu = column_means(X)  # X.mean(axis=0) of scipy.sparse copies X's values
        fast = sp.issparse(X) and numba_kernels.AVAILABLE
        if fast:
            X = sp.csr_matrix(X)
            if not X.has_canonical_format:
                X = X.copy()
                X.sum_duplicates()

        def x_right(B):
            return numba_kernels.csr_dense_product(X, B) if fast else np.asarray(X @ B)

        def x_left(Q):
            return numba_kernels.csr_t_dense_product(X, Q) if fast else np.asarray(X.T @ Q)

    def right(B):  # (X - 1 mu^T) B
        return x_right(B) - (mu @ B)[None, :]

    def left(Q):  # (X - 1 mu^T)^T Q
        return x_left(Q) - np.outer(mu, Q.sum(axis=0))

    Y = right(rng.standard_normal((m, ell)))
    for _ in range(n_iter):
        Q = _orthonormal(Y)
        Z = _orthonormal(left(Q))
        Y = right(Z)
    Q = _orthonormal(Y)
    small = left(Q).T
    with threadpool_limits(limits=1, user_api="blas"):  # (l x m): threads only cost here
        Ub, sv, _ = np.linalg.svd(small, full_matrices=False)
    k = min(n_components, sv.size)
    return (Q @ Ub[:, :k]) * sv[:k]


def _exact_candidate_d2(X, cand: np.ndarray) -> np.ndarray:
    """Exact squared distances ``||x_i - x_cand[i, t]||^2`` in float64, shape of ``cand``."""
    from kofs._compute import numba_kernels

    n, c = cand.shape
    norms = _row_norms2(X)
    if sp.issparse(X):
        A = sp.csr_matrix(X)
        if not A.has_canonical_format:
            A = A.copy()
            A.sum_duplicates()
        if numba_kernels.AVAILABLE:
            dots = numba_kernels.candidate_dots(A, cand)
        else:
            rows, cols = np.repeat(np.arange(n), c), cand.ravel()
            dots = np.concatenate(
                [
                    np.asarray(
                        A[rows[s : s + 50000]].multiply(A[cols[s : s + 50000]]).sum(1)
                    ).ravel()
                    for s in range(0, rows.size, 50000)
                ]
            ).reshape(n, c)
    else:
        dots = np.column_stack([np.einsum("ij,ij->i", X, X[cand[:, t]]) for t in range(c)])
    pair = norms[:, None] + norms[cand]
    d2 = np.maximum(pair - 2.0 * dots, 0.0)
    d2[d2 <= 1e-12 * pair] = 0.0
    return d2


def approximate_knn_squared_distances(X, *, k: int = 5, seed: int = 0) -> sp.csr_matrix:
    """Directed approximate kNN graph, squared Euclidean distances.

    Same layout as :func:`knn_squared_distances` (k neighbours per row, self excluded).
    ``max(k, ANN_CANDIDATES)`` candidates per sample are searched by :func:`pc_neighbours` (an
    inverted-file index, faiss) on the top ``ANN_PROJECTION`` principal components when there
    are more features (see :func:`principal_scores`); the k nearest candidates by exact float64
    distance in the full space are kept (for a dask ``X`` computed by pairs of chunk groups,
    :func:`kofs._compute.chunked.candidate_sq_distances`). Seeded: the result is reproducible.

    Raises
    ------
    ParameterError
        faiss is not installed (``pip install -e '.[sc]'`` in the kofs folder).
    """
    n = X.shape[0]
    if not 1 <= k <= n - 1:
        raise ParameterError(f"kNN graph: k must lie in [1, {n - 1}] for {n} samples, got {k}")
    c = min(max(k, ANN_CANDIDATES), n - 1)
    cache = cache_of("ann")  # the run's: Laplacian Score (k = 5) and SPEC (k = 10) share it
    if cache is None:
        cache = {}
    if is_dask(X):  # a dask array's name is a token of its graph: the same data, the same name
        key: tuple = ("dask", X.name, X.shape, seed, c)
        hit = cache.get(key)
        if hit is None:
            hit = (None, *_ann_candidates(X, c, seed))
            cache.clear()
            cache[key] = hit
        cand, d2 = hit[1], hit[2]
    else:
        buffer = X.data if sp.issparse(X) else X  # wrappers of the same data share the buffer
        base = buffer.base if isinstance(buffer, np.ndarray) and buffer.base is not None else buffer
        key = (id(base), X.shape, X.nnz if sp.issparse(X) else X.size, seed, c)
        hit = cache.get(key)
        if hit is not None and hit[0]() is base:
            cand, d2 = hit[1], hit[2]
        else:
            cand, d2 = _ann_candidates(X, c, seed)
            cache.clear()
            try:
                cache[key] = (weakref.ref(base), cand, d2)
            except TypeError:  # not weak-referenceable: no cache
                pass
    order = np.lexsort((cand, order_key(d2)), axis=1)[:, :k]
    cols = np.take_along_axis(cand, order, axis=1)
    vals = np.take_along_axis(d2, order, axis=1)
    indptr = np.arange(0, n * k + 1, k, dtype=np.int64)
    return sp.csr_matrix((vals.ravel(), cols.ravel(), indptr), shape=(n, n))


def _ann_candidates(X, c: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    chunked = is_dask(X)
    if chunked and X.shape[1] <= ANN_PROJECTION:
        X = _chunked.to_memory(X)  # n x (at most 50) genes: small
        chunked = False
    if X.shape[1] > ANN_PROJECTION:
        data = principal_scores(X, n_components=ANN_PROJECTION, seed=seed)
    else:
        data = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    cand, _ = pc_neighbours(data, c, seed=seed, exact=False)
    if chunked:  # exact distances by pairs of chunk groups (bounded memory)
        return cand, _chunked.candidate_sq_distances(X, cand)
    d2 = _exact_candidate_d2(X, cand)
    return cand, d2


#: Inverted-file search: the index has about ``sqrt(n)`` lists (k-means cells) and each query
#: scans the ``IVF_PROBES`` lists whose centroids are nearest (measured in
#: bench/bench_single_cell_scanpy.py: see docs/single-cell.md, "The cell kNN graph").
IVF_PROBES = 8
#: Points per centroid the k-means of the inverted file is trained on (a seeded subsample).
IVF_TRAIN_PER_LIST = 64


def _faiss():
    try:
        import faiss
    except ImportError:
        raise ParameterError(
            "the approximate kNN search needs faiss (faiss-cpu): pip install -e '.[sc]' in the "
            "kofs folder"
        ) from None
    return faiss


def pc_neighbours(
    P: np.ndarray, c: int, *, seed: int = 0, exact: bool | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The ``c`` nearest other rows of a low-dimensional ``P`` (e.g. principal components).

    Exact (a flat index) when ``exact`` is True, or None and fewer than
    :data:`ANN_MIN_SAMPLES` rows; otherwise an inverted file (faiss ``IndexIVFFlat``): k-means
    with about ``sqrt(n)`` centroids, trained single-threaded on a seeded subsample of
    :data:`IVF_TRAIN_PER_LIST` points per centroid, then every row scans the
    :data:`IVF_PROBES` nearest lists (rows with fewer than ``c`` candidates found are searched
    again over twice as many lists). faiss is prebuilt (no compilation at run time). The
    candidates' squared distances are then recomputed in float64 and each row is ordered by
    (distance at float32 rounding, index), the tie rule of the exact search.

    Parameters
    ----------
    P : ndarray of shape (n, d)
    c : int
        Neighbours per row, 1 <= c <= n - 1.
    seed : int
    exact : bool, optional

    Returns
    -------
    idx : ndarray of shape (n, c), int64
    d2 : ndarray of shape (n, c), float64
    """
    faiss = _faiss()
    P = np.ascontiguousarray(P, dtype=np.float64)
    n, d = P.shape
    if not 1 <= c <= n - 1:
        raise ParameterError(f"kNN graph: k must lie in [1, {n - 1}] for {n} samples, got {c}")
    data = np.ascontiguousarray(P, dtype=np.float32)
    want = min(n, c + 1)
    if exact is None:
        exact = n < ANN_MIN_SAMPLES
    if exact:
        index = faiss.IndexFlatL2(d)
        index.add(data)
        _, idx = index.search(data, want)
    else:
        nlist = max(1, min(int(round(np.sqrt(n))), n // 39))  # faiss wants >= 39 per list
        quantizer = faiss.IndexFlatL2(d)
        index = faiss.IndexIVFFlat(quantizer, d, nlist)
        rng = np.random.default_rng(seed)
        train = data[np.sort(rng.choice(n, min(n, nlist * IVF_TRAIN_PER_LIST), replace=False))]
        index.cp.seed = int(seed) % (2**31)
        index.cp.niter = 10
        index.cp.max_points_per_centroid = IVF_TRAIN_PER_LIST
        threads = faiss.omp_get_max_threads()
        faiss.omp_set_num_threads(1)  # k-means sums in one fixed order: the same centroids
        try:
            index.train(train)
        finally:
            faiss.omp_set_num_threads(threads)
        index.add(data)
        probes = min(nlist, IVF_PROBES)
        index.nprobe = probes
        _, idx = index.search(data, want)
        short = np.flatnonzero((idx < 0).any(axis=1))
        while short.size and probes < nlist:
            probes = min(nlist, 2 * probes)
            index.nprobe = probes
            _, again = index.search(data[short], want)
            idx[short] = again
            short = short[(again < 0).any(axis=1)]
    idx = np.asarray(idx, dtype=np.int64)
    # drop the row itself (or the farthest candidate when it was not returned, e.g. duplicates)
    is_self = idx == np.arange(n)[:, None]
    drop = np.where(is_self.any(axis=1), is_self.argmax(axis=1), want - 1)
    keep = np.ones_like(idx, dtype=bool)
    keep[np.arange(n), drop] = False
    cand = idx[keep].reshape(n, want - 1)[:, :c]
    d2 = np.empty(cand.shape)
    for t in range(c):
        dt = P - P[cand[:, t]]
        d2[:, t] = np.einsum("ij,ij->i", dt, dt)
    order = np.lexsort((cand, order_key(d2)), axis=1)
    return np.take_along_axis(cand, order, axis=1), np.take_along_axis(d2, order, axis=1)


#: A sparse matrix searched by the compiled exact loop (numba, :mod:`kofs._compute.knn_exact`) is
#: searched exactly while the search costs at most this many multiply-adds
#: (:func:`exact_search_work`; ~20 s on 2 cores), whatever the number of samples: measured in
#: bench/bench_single_cell.py, see docs/single-cell.md.
EXACT_WORK_MAX = 1e10


def exact_search_work(X) -> float:
    """Multiply-adds of the compiled exact search of a sparse ``X``: ``sum_g nnz_g^2`` (the
    products ``x_i . x_j``) plus ``n^2`` (the scan of the distances)."""
    per_gene = np.bincount(sp.csr_matrix(X).indices, minlength=X.shape[1]).astype(np.float64)
    return float(per_gene @ per_gene) + float(X.shape[0]) ** 2


def uses_exact_search(X, search: str = "auto") -> bool:
    """Whether :func:`knn_graph_distances` searches ``X`` exactly.

    ``search="auto"``: a sparse ``X`` with numba installed while :func:`exact_search_work` <=
    :data:`EXACT_WORK_MAX`; otherwise (dense, chunked) below :data:`ANN_MIN_SAMPLES` samples.
    """
    if search not in KNN_SEARCHES:
        raise ParameterError(f"kNN search must be one of {', '.join(KNN_SEARCHES)}, got {search!r}")
    if search == "exact":
        return True
    if search == "approximate":
        return False
    n = X.shape[0]
    if is_dask(X):
        return n < ANN_MIN_SAMPLES
    if sp.issparse(X) and n >= EXACT_COMPILED_MIN and _compiled_knn_available():
        return exact_search_work(X) <= EXACT_WORK_MAX
    return n < ANN_MIN_SAMPLES


def knn_graph_distances(X, *, k: int = 5, search: str = "auto", seed: int = 0) -> sp.csr_matrix:
    """Directed kNN squared distances, exact or approximate (:func:`pc_neighbours`) as
    :func:`uses_exact_search` decides."""
    exact = uses_exact_search(X, search)
    if not exact:
        return approximate_knn_squared_distances(X, k=k, seed=seed)
    if is_dask(X):
        if X.shape[0] >= ANN_MIN_SAMPLES:
            logger.warning(
                "exact kNN search over %d chunked cells is O(n^2); the default search "
                "(approximate) or a precomputed graph (AnnData obsp, --use-graph) scale",
                X.shape[0],
            )
        return _chunked.knn_squared_distances(X, k=k)
    return knn_squared_distances(X, k=k)


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
