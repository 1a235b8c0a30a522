"""Sparse end to end: every ranker declared ``sparse=True`` gives on a scipy.sparse CSR matrix
the scores it gives on the same matrix dense (to 1e-10), without densifying it."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from kofs.rankers import RANKERS, run_ranker
from kofs.types import Expression, RankerInputs, SampleCategories

SPARSE_RANKERS = [s.name for s in RANKERS if s.sparse]

# parameters exercising each code path (graph kinds, gamma powers) of the sparse kernels
CASES = [
    (name, params)
    for name in SPARSE_RANKERS
    for params in (
        [{}, {"graph": "knn", "k": 4}, {"graph": "knn", "metric": "cosine", "weight": "binary"},
         {"graph": "label"}]
        if name == "laplacian"
        else [{}, {"similarity": "knn", "neighbors": 4}, {"similarity": "knn-rbf"}
              if False else {"similarity": "rbf"}, {"gamma": "power", "power": 2},
              {"gamma": "power", "power": 3, "similarity": "knn"}, {"alpha": 0.5}]
        if name.startswith("spec")
        else [{}]
    )
]  # fmt: skip


def _raw(n=90, m=40, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.negative_binomial(1, 0.6, size=(n, m)).astype(float)
    X[rng.random((n, m)) < 0.7] = 0.0
    X[: n // 3, :3] += rng.poisson(4, size=(n // 3, 3))  # planted markers of one cluster
    X[:, 5] = 0.0  # a constant gene
    X[:, 6] = 2.0  # a constant gene with no zero
    return X, rng


def _counts(n=90, m=40, seed=1):
    X, rng = _raw(n, m, seed)
    labels = np.array(["a", "b", "c"])[np.arange(n) * 3 // n]
    # library-size normalised, as single-cell data are: no exact distance ties in the kNN search
    size = X.sum(axis=1, keepdims=True) + rng.uniform(1, 2, size=(n, 1))
    X = np.log1p(X / size * 100)
    X[:, 6] = 2.0  # a constant gene with no zero
    return X, labels


def test_sparse_capable_rankers_are_declared():
    assert {"variance", "fisher", "laplacian", "spec-phi1", "spec-phi2", "spec-phi3"} <= set(
        SPARSE_RANKERS
    )


@pytest.mark.parametrize(("name", "params"), CASES)
def test_dense_equals_sparse(name, params):
    X, labels = _counts()
    if RANKERS.get(name).counts:  # rankers that model counts get the counts
        X = _raw()[0]
    genes = [f"g{j}" for j in range(X.shape[1])]
    samples = [f"c{i}" for i in range(X.shape[0])]
    cats = SampleCategories(labels, samples)
    dense = Expression(X, genes, samples)
    sparse = Expression(sp.csr_matrix(X), genes, samples)
    assert sparse.is_sparse and not dense.is_sparse
    a = run_ranker(name, dense, RankerInputs(categories=cats), params=params)
    b = run_ranker(name, sparse, RankerInputs(categories=cats), params=params)
    np.testing.assert_array_equal(np.isnan(a.scores), np.isnan(b.scores))
    ok = ~np.isnan(a.scores)
    np.testing.assert_allclose(b.scores[ok], a.scores[ok], rtol=1e-10, atol=1e-12)
    assert np.isnan(b.scores[[5, 6]]).all()


@pytest.mark.parametrize(
    ("name", "params"),
    [("laplacian", {"graph": "label"}), ("spec-phi2", {"similarity": "label"}),
     ("morans-i", {})],
)  # fmt: skip
def test_genes_of_a_large_offset_score_alike_dense_sparse_and_chunked(name, params):
    """Genes of mean 1e8 and spread 1 (no zeros): the sparse and chunked kernels centred them
    algebraically (f^T S f - vol mu^2) and lost every digit: Laplacian Scores of 0 to 8 where the
    dense kernel, which centres, gave 0.85; Moran's I likewise. They equal the scores of the
    same genes without the offset (every one of these scores ignores a shift)."""
    da = pytest.importorskip("dask.array")
    from kofs.types import SampleSimilarity

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 6))
    X[:10, :2] += 2
    genes, samples = [f"g{j}" for j in range(6)], [f"c{i:02d}" for i in range(40)]
    W = sp.random(40, 40, density=0.2, random_state=1, format="csr")
    inputs = RankerInputs(
        categories=SampleCategories(["a"] * 20 + ["b"] * 20, samples),
        similarity=SampleSimilarity((W + W.T).tocsr(), samples),
    )
    want = run_ranker(name, Expression(X, genes, samples), inputs, params=params).scores
    Y = X + 1e8
    for values in (Y, sp.csr_matrix(Y), da.from_array(sp.csr_matrix(Y), chunks=(15, 6),
                                                     asarray=False)):  # fmt: skip
        got = run_ranker(name, Expression(values, genes, samples), inputs, params=params)
        np.testing.assert_allclose(got.scores, want, rtol=1e-7)


def test_sparse_is_not_densified(monkeypatch):
    X, labels = _counts()
    expr = Expression(sp.csr_matrix(X), [f"g{j}" for j in range(40)], [f"c{i}" for i in range(90)])

    for method in ("toarray", "todense"):
        original = getattr(sp.csr_matrix, method)

        def guarded(self, *args, _original=original, **kwargs):
            assert self.shape[1] != 40, "the expression matrix was densified"
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(sp.csr_matrix, method, guarded)
    for name in ("variance", "laplacian", "spec-phi1", "spec-phi2", "spec-phi3"):
        run_ranker(name, expr, params={"graph": "knn"} if name == "laplacian" else None)


def test_dense_only_ranker_gets_dense_data():
    X, _ = _counts(n=30, m=8)
    expr = Expression(sp.csr_matrix(X), [f"g{j}" for j in range(8)], [f"c{i}" for i in range(30)])
    assert not RANKERS.get("sps").sparse
    r = run_ranker("sps", expr)
    d = run_ranker("sps", Expression(X, expr.genes, expr.samples))
    np.testing.assert_allclose(r.scores, d.scores, rtol=1e-12, equal_nan=True)


def test_approximate_knn_graph_is_close_and_seeded(faiss):
    from kofs.datasets import synthetic_counts
    from kofs.knowledge.neighbours import (
        approximate_knn_squared_distances,
        knn_graph_distances,
        knn_squared_distances,
    )

    d = synthetic_counts(600, 300, n_clusters=3, seed=2)
    exact = knn_squared_distances(d.X, k=5)
    a = approximate_knn_squared_distances(d.X, k=5, seed=0)
    b = approximate_knn_squared_distances(d.X.copy(), k=5, seed=0)  # no cache: same result
    assert (a != b).nnz == 0 and a.shape == exact.shape and a.nnz == exact.nnz
    assert (a.indices != np.repeat(np.arange(600), 5)).all()  # no self-loops
    # distances are exact for the neighbours found, never closer than the true kNN
    rows = np.repeat(np.arange(600), 5)
    full = ((d.X[rows] - d.X[a.indices]).power(2)).sum(axis=1).A1
    np.testing.assert_allclose(a.data, full, rtol=1e-9, atol=1e-9)
    assert a.data.mean() >= exact.data.mean() - 1e-9
    assert a.data.mean() <= 1.1 * exact.data.mean()
    same = (d.clusters[rows] == d.clusters[a.indices]).mean()
    assert same >= (d.clusters[rows] == d.clusters[exact.indices]).mean() - 0.05
    assert (knn_graph_distances(d.X, k=5, search="exact") != exact).nnz == 0


def test_memory_check_counts_sparse_and_refuses_dense_only_rankers():
    from kofs.errors import ResourceError
    from kofs.pipeline.rank import rank

    X = sp.random(200, 5000, density=0.01, format="csr", random_state=0)
    res = rank(X, rankers=["variance"], max_memory="4M")  # two CSR copies fit
    assert res.lists[0].name == "variance"
    with pytest.raises(ResourceError, match="works on sparse data .*variance.*laplacian"):
        rank(X, rankers=["sps"], max_memory="4M")  # its dense copy of X does not
    # a graph ranker on CSR holds no dense (centred) copy of X: the estimate is CSR-sized
    # (the former dense-copy estimate, ~8.2 MB here, refused it)
    assert rank(X, rankers=["laplacian"], max_memory="4M").lists[0].name == "laplacian"
