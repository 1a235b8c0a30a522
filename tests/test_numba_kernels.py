"""The compiled CSR loops (kofs._compute.numba_kernels) equal their dense NumPy definitions."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

nk = pytest.importorskip("kofs._compute.numba_kernels")
if not nk.AVAILABLE:  # pragma: no cover
    pytest.skip("numba not installed", allow_module_level=True)


@pytest.fixture(scope="module")
def data():
    from kofs.datasets import synthetic_counts

    X = synthetic_counts(300, 80, density=0.1, seed=1).X
    return X, X.toarray()


def _rel(a, b):
    return np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300)


def test_products_equal_dense(data):
    X, D = data
    rng = np.random.default_rng(0)
    B, Q = rng.standard_normal((80, 7)), rng.standard_normal((300, 7))
    assert _rel(nk.csr_dense_product(X, B), D @ B) < 1e-12
    assert _rel(nk.csr_t_dense_product(X, Q), D.T @ Q) < 1e-12
    cand = rng.integers(0, 300, size=(300, 4))
    assert _rel(nk.candidate_dots(X, cand), np.einsum("ij,itj->it", D, D[cand])) < 1e-12
    S = sp.random(300, 300, density=0.02, random_state=0, format="csr")
    S = (S + S.T).tocsr()
    S.sort_indices()
    assert _rel(nk.graph_gene_products(X, S), np.einsum("ij,ij->j", D, S @ D)) < 1e-12
    assert _rel(nk.row_sq_norms(X), (D * D).sum(axis=1)) < 1e-12


def test_int64_indices_and_results_independent_of_threads(data):
    import numba

    X, D = data
    X64 = sp.csr_matrix((X.data, X.indices.astype(np.int64), X.indptr.astype(np.int64)), X.shape)
    S = sp.random(300, 300, density=0.02, random_state=1, format="csr")
    S = (S + S.T).tocsr()
    S.sort_indices()
    ref = nk.graph_gene_products(X, S)
    np.testing.assert_array_equal(nk.graph_gene_products(X64, S), ref)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = nk.graph_gene_products(X, S)
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(one, ref)  # fixed row blocks: bit-identical


def test_column_statistics_equal_dense(data):
    from kofs._compute.matrix import column_range, column_sq_deviations, weighted_sq_deviations

    X, D = data
    hi, lo = column_range(X)
    np.testing.assert_array_equal(hi, D.max(axis=0))
    np.testing.assert_array_equal(lo, D.min(axis=0))
    dense_row = sp.csr_matrix(np.vstack([np.full(5, 2.0), np.full(5, 3.0)]))  # no implicit zero
    np.testing.assert_array_equal(column_range(dense_row)[1], np.full(5, 2.0))
    w = np.random.default_rng(2).random(300)
    mu = (w @ D) / w.sum()
    assert _rel(weighted_sq_deviations(X, w, mu), w @ (D - mu) ** 2) < 1e-12
    assert _rel(column_sq_deviations(X), ((D - D.mean(axis=0)) ** 2).sum(axis=0)) < 1e-12


def test_principal_scores_sparse_equals_dense(data):
    from kofs.knowledge.neighbours import principal_scores

    X, D = data
    P = principal_scores(X, n_components=5, seed=3)
    Pd = principal_scores(D, n_components=5, seed=3)
    np.testing.assert_allclose(P, Pd, rtol=1e-8, atol=1e-8)
    # leading singular values of the centred matrix (randomized, power iterations: close)
    sv = np.linalg.svd(D - D.mean(axis=0), compute_uv=False)[:3]
    np.testing.assert_allclose(np.linalg.norm(P, axis=0)[:3], sv, rtol=0.05)


@pytest.mark.parametrize("dense", [False, True])
def test_principal_scores_independent_of_blas_threads(data, dense):
    """The same components, to the bit, at 1 and 2 BLAS threads (OpenBLAS rounds a product
    differently with more threads; a kNN graph on the components then moved a cell's neighbour
    at a near-tie and `kofs rank --threads 2` changed Hotspot's scores on pbmc68k)."""
    from threadpoolctl import threadpool_limits

    from kofs.knowledge.neighbours import principal_scores

    X = data[1] if dense else data[0]
    out = []
    for threads in (1, 2):
        with threadpool_limits(limits=threads, user_api="blas"):
            out.append(principal_scores(X, n_components=20, seed=3))
    np.testing.assert_array_equal(out[0], out[1])


def test_take_columns_equals_scipy(data):
    X, D = data
    cols = np.flatnonzero(np.random.default_rng(2).random(80) < 0.4)
    A = nk.take_columns(X, cols)
    B = X[:, cols]
    assert A.has_canonical_format
    np.testing.assert_array_equal(A.indptr, B.indptr)
    np.testing.assert_array_equal(A.indices, B.indices)
    np.testing.assert_array_equal(A.data, B.data)
    np.testing.assert_array_equal(A.toarray(), D[:, cols])
    assert nk.take_columns(X, np.zeros(0, dtype=np.int64)).shape == (300, 0)


def test_count_kernels_independent_of_threads(data):
    import numba

    from kofs._compute.counts import _recover, counts_view
    from kofs.rankers._count_kernels import pearson_residual_variance

    X, _ = data
    X = X.copy()
    X.data = np.random.default_rng(3).integers(1, 30, size=X.nnz).astype(np.float64)
    filled = np.diff(X.indptr) > 0
    X.data[X.indptr[:-1][filled]] = 1.0  # every cell's smallest count is 1
    L = X.copy()
    L.data = np.log1p(L.data * np.repeat(np.linspace(0.5, 3.0, 300), np.diff(X.indptr)))
    before = numba.get_num_threads()
    out = []
    try:
        for t in (before, 1):
            numba.set_num_threads(t)
            out.append(
                (pearson_residual_variance(counts_view(X.copy())), _recover(L, "log1p").data)
            )
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(out[0][0], out[1][0])
    np.testing.assert_array_equal(out[0][1], out[1][1])
    np.testing.assert_array_equal(out[0][1], X.data)  # the counts, recovered exactly
