"""Nearest neighbours of samples: the exact kNN search (dense, sparse or chunked; a compiled
loop when numba is there), the approximate one (randomized PCA, faiss inverted-file candidates
re-ranked by exact distances) and the choice between them. The heat-kernel graphs of
:mod:`kofs.knowledge.similarity_kernels` are built from their distances."""

from __future__ import annotations

import logging
import weakref

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from kofs._compute import chunked as _chunked
from kofs._compute.blocks import cross as _cross
from kofs._compute.blocks import order_key, snap_zero
from kofs._compute.blocks import row_norms2 as _row_norms2
from kofs._compute.chunked import is_dask
from kofs._compute.matrix import column_means
from kofs._compute.run_cache import cache_of
from kofs.errors import InputError, ParameterError
from kofs.knowledge.similarity_kernels import BLOCK_BYTES, squared_distances

logger = logging.getLogger(__name__)

#: From this many samples a sparse exact kNN search uses the compiled loop (numba), below it
#: the block search (no compilation for small data).
EXACT_COMPILED_MIN = 2000


def _compiled_knn_available() -> bool:
    """Whether :mod:`kofs._compute.knn_exact` (numba) can run; imported only for the large sparse
    matrices it serves, so dense runs never load numba."""
    from kofs._compute import knn_exact

    return knn_exact.AVAILABLE


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
    block = max(1, min(n, BLOCK_BYTES // (8 * max(n, 1))))
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

    elif sp.issparse(X) and numba_kernels.AVAILABLE:
        mu = column_means(X)  # X.mean(axis=0) of scipy.sparse copies X's values
        X = sp.csr_matrix(X)
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()

        def x_right(B):
            return numba_kernels.csr_dense_product(X, B)

        def x_left(Q):
            return numba_kernels.csr_t_dense_product(X, Q)

    elif sp.issparse(X):
        mu = column_means(X)

        def x_right(B):
            return np.asarray(X @ B)

        def x_left(Q):
            return np.asarray(X.T @ Q)

    else:  # dense: fixed row blocks, each product single-threaded (see below)
        X = np.asarray(X)
        mu = column_means(X)
        right_rows = numba_kernels.row_bounds(n, numba_kernels.ROW_BLOCKS)
        left_rows = numba_kernels.row_bounds(n, 4)

        def x_right(B):
            return np.vstack(numba_kernels.run_blocks(lambda a, b: X[a:b] @ B, right_rows))

        def x_left(Q):
            parts = numba_kernels.run_blocks(lambda a, b: X[a:b].T @ Q[a:b], left_rows)
            return numba_kernels.ordered_sum(parts, (m, Q.shape[1]))

    def right(B):  # (X - 1 mu^T) B
        return x_right(B) - (mu @ B)[None, :]

    def left(Q):  # (X - 1 mu^T)^T Q
        return x_left(Q) - np.outer(mu, Q.sum(axis=0))

    # single-threaded BLAS: OpenBLAS rounds a product differently at 1 and at 2 threads (last
    # digits of the components), and a cell whose two neighbours are at near-equal distances
    # then got another graph: `--threads` changed Hotspot's scores. The large products run on
    # fixed row blocks in parallel instead (compiled loops or the blocks above).
    with threadpool_limits(limits=1, user_api="blas"):
        Y = right(rng.standard_normal((m, ell)))
        for _ in range(n_iter):
            Q = _orthonormal(Y)
            Z = _orthonormal(left(Q))
            Y = right(Z)
        Q = _orthonormal(Y)
        small = left(Q).T
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


def _power_of_two_scale(P: np.ndarray) -> float:
    """1.0, or the power of two that brings the largest ``|P|`` to [1, 2) when it lies outside
    [2**-40, 2**40] (float32 squared distances then overflow or lose every digit). Scaling by
    a power of two is exact: the float32 values, their order and their ties do not change."""
    top = float(np.max(np.abs(P), initial=0.0))
    if top == 0.0 or 2.0**-40 <= top <= 2.0**40:
        return 1.0
    return float(np.ldexp(1.0, -int(np.floor(np.log2(top)))))


def pc_neighbours(
    P: np.ndarray, c: int, *, seed: int = 0, exact: bool | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The ``c`` nearest other rows of a low-dimensional ``P`` (e.g. principal components).

    Exact (a flat index) when ``exact`` is True, or None and fewer than
    :data:`ANN_MIN_SAMPLES` rows, or when the rows are too few for two lists; otherwise an
    inverted file (faiss ``IndexIVFFlat``): k-means
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
    if not np.isfinite(P).all():
        raise InputError(
            "kNN graph: the principal components are not finite (values too large for "
            "floating-point sums); log-transform or rescale the data"
        )
    # searched in float32 (faiss): components beyond ~1e18 overflow its squared distances
    # (every cell then had no neighbour, index -1), so the search sees them scaled by a power
    # of two -- exact, the same order and ties -- when they are that large or small
    scale = _power_of_two_scale(P)
    data = np.ascontiguousarray(P * scale, dtype=np.float32)
    want = min(n, c + 1)
    if exact is None:
        exact = n < ANN_MIN_SAMPLES
    nlist = max(1, min(int(round(np.sqrt(n))), n // 39))  # faiss wants >= 39 per list
    # an inverted file of one list is the exhaustive search (and faiss would print its warning
    # about too few training points on stderr)
    if exact or nlist == 1:
        index = faiss.IndexFlatL2(d)
        index.add(data)
        _, idx = index.search(data, want)
    else:
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
    if cand.size and (cand.min() < 0 or cand.max() >= n):  # never an index out of the graph
        raise RuntimeError(f"kNN graph: the search found fewer than {c} neighbours of a cell")
    d2 = np.empty(cand.shape)
    for t in range(c):
        dt = P - P[cand[:, t]]
        d2[:, t] = np.einsum("ij,ij->i", dt, dt)
    if not np.isfinite(d2).all():
        raise InputError(
            "kNN graph: the squared distances between cells overflow (values too large); "
            "log-transform or rescale the data"
        )
    order = np.lexsort((cand, order_key(d2 * (scale * scale))), axis=1)
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
