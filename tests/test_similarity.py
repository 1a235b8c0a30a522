"""Sample-similarity builders (kofs.knowledge.similarity)."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from sklearn.metrics.pairwise import cosine_similarity as sk_cosine
from sklearn.neighbors import NearestNeighbors

import kofs.knowledge.neighbours as neighbours
import kofs.knowledge.similarity as sim
import kofs.knowledge.similarity_kernels as kernels
from kofs.errors import ParameterError, ResourceError
from kofs.types import Expression, SampleCategories, SampleSimilarity


def _expr(X):
    n, m = X.shape
    return Expression(X, [f"g{j}" for j in range(m)], [f"s{i}" for i in range(n)])


def test_squared_distances_match_naive(rng):
    X = rng.normal(size=(7, 5))
    naive = np.array([[np.sum((a - b) ** 2) for b in X] for a in X])
    np.testing.assert_allclose(kernels.squared_distances(X), naive, atol=1e-12)
    assert np.all(np.diag(kernels.squared_distances(X)) == 0)


def test_rbf_formula_and_default_bandwidth(rng):
    X = rng.normal(size=(9, 4))
    d2 = np.array([[np.sum((a - b) ** 2) for b in X] for a in X])
    S = kernels.rbf_similarity(X, delta2=0.7)
    np.testing.assert_allclose(S, np.exp(-d2 / 1.4), atol=1e-12)
    assert np.allclose(np.diag(S), 1.0)
    delta2 = kernels.median_bandwidth(X)
    assert delta2 == pytest.approx(np.median(d2[np.triu_indices(9, 1)]) / 2)
    # median-distant pair gets exp(-1)
    np.testing.assert_allclose(kernels.rbf_similarity(X), np.exp(-d2 / (2 * delta2)), atol=1e-12)


def test_median_bandwidth_subsamples_deterministically(rng):
    X = rng.normal(size=(50, 3))
    a = kernels.median_bandwidth(X, max_samples=20)
    assert a == kernels.median_bandwidth(X, max_samples=20)
    assert a != kernels.median_bandwidth(X)
    assert kernels.median_bandwidth(np.ones((4, 2))) == 1.0


def test_linear_polynomial_cosine(rng):
    X = rng.normal(size=(6, 3))
    np.testing.assert_allclose(kernels.linear_similarity(X, c=2.0), X @ X.T + 2.0)
    np.testing.assert_allclose(
        kernels.polynomial_similarity(X, a=0.5, c=1.0, degree=3), (0.5 * X @ X.T + 1.0) ** 3
    )
    np.testing.assert_allclose(kernels.cosine_similarity(X), sk_cosine(X), atol=1e-12)
    Z = X.copy()
    Z[2] = 0.0
    C = kernels.cosine_similarity(Z)
    assert C[2, 2] == 1.0 and np.all(C[2, [0, 1, 3, 4, 5]] == 0)


def _check_knn_graph(S, X, k):
    n = X.shape[0]
    assert sp.issparse(S)
    assert abs(S - S.T).max() == 0
    assert S.diagonal().sum() == 0
    assert np.all(np.diff(S.indptr) >= k)
    # every sample's k nearest neighbours are edges
    _, idx = NearestNeighbors(n_neighbors=k).fit(X).kneighbors()
    dense = S.toarray()
    for i in range(n):
        assert np.all(dense[i, idx[i]] > 0)


def test_knn_graph_symmetric_no_self_loops_at_least_k(rng):
    X = rng.normal(size=(40, 6))
    S, used = sim.similarity_from_array(X, "knn", k=4)
    _check_knn_graph(S, X, 4)
    d2 = neighbours.knn_squared_distances(X, k=4)
    assert used["t"] == pytest.approx(d2.data.mean())
    # heat kernel weights on edges
    rows, cols = S.nonzero()
    full = kernels.squared_distances(X)
    np.testing.assert_allclose(S.data, np.exp(-full[rows, cols] / used["t"]), rtol=1e-12)


def test_knn_blockwise_equals_single_block(rng, monkeypatch):
    X = rng.normal(size=(30, 5))
    whole = neighbours.knn_squared_distances(X, k=3)
    monkeypatch.setattr(neighbours, "BLOCK_BYTES", 8 * 30 * 4)  # 4 rows per block
    blocked = neighbours.knn_squared_distances(X, k=3)
    np.testing.assert_array_equal(whole.indices, blocked.indices)
    np.testing.assert_allclose(whole.data, blocked.data, rtol=1e-10)


@given(
    n=st.integers(3, 25),
    k=st.integers(1, 6),
    seed=st.integers(0, 10_000),
)
def test_knn_graph_property(n, k, seed):
    X = np.random.default_rng(seed).normal(size=(n, 3))
    k = min(k, n - 1)
    S, _ = sim.similarity_from_array(X, "knn", k=k)
    _check_knn_graph(S, X, k)


def test_knn_binary_and_cosine(rng):
    X = rng.normal(size=(20, 4)) + 3
    S, used = sim.similarity_from_array(X, "knn", k=3, weight="binary", metric="cosine")
    assert set(np.unique(S.data)) == {1.0}
    Xn = X / np.linalg.norm(X, axis=1)[:, None]
    _check_knn_graph(S, Xn, 3)
    assert used == {"k": 3, "metric": "cosine", "weight": "binary", "search": "exact"}


def test_knn_rbf_graph_uses_rbf_weights(rng):
    X = rng.normal(size=(25, 4))
    S, used = sim.similarity_from_array(X, "knn-rbf", k=5, delta2=0.8)
    dense = kernels.rbf_similarity(X, delta2=0.8)
    rows, cols = S.nonzero()
    np.testing.assert_allclose(S.data, dense[rows, cols], rtol=1e-12)
    _check_knn_graph(S, X, 5)


def test_k_clamped_with_warning(rng, caplog):
    X = rng.normal(size=(4, 2))
    with caplog.at_level(logging.WARNING, logger="kofs.knowledge.similarity"):
        S, used = sim.similarity_from_array(X, "knn", k=10)
    assert used["k"] == 3 and "reduced" in caplog.text
    assert np.all(S.toarray() + np.eye(4) > 0)


def test_label_graphs():
    codes = np.array([0, 1, 0, 0, 1])
    S = kernels.fisher_label_similarity(codes).toarray()
    expected = np.array(
        [[1 / 3 if a == b == 0 else 1 / 2 if a == b == 1 else 0 for b in codes] for a in codes]
    )
    np.testing.assert_allclose(S, expected)
    np.testing.assert_allclose(S.sum(axis=1), 1.0)  # D = I
    B = kernels.binary_label_similarity(codes).toarray()
    np.testing.assert_array_equal(B, (codes[:, None] == codes[None, :]).astype(float))
    with pytest.raises(ParameterError, match="unlabelled"):
        kernels.fisher_label_similarity(np.array([0, -1, 1]))


def test_label_codes_missing():
    codes, classes = kernels.label_codes(["b", "NA", "a", "", "b"])
    assert classes == ("a", "b")
    np.testing.assert_array_equal(codes, [1, -1, 0, -1, 1])


def test_sample_similarity_dispatch(rng, monkeypatch):
    X = rng.normal(size=(12, 5))
    e = _expr(X)
    s = sim.sample_similarity(e)
    assert isinstance(s, SampleSimilarity) and not s.is_sparse
    assert s.samples == e.samples and s.provenance["resolved"] == "rbf"
    monkeypatch.setattr(sim, "AUTO_DENSE_MAX", 10)
    s2 = sim.sample_similarity(e, k=3)
    assert s2.is_sparse and s2.provenance["resolved"] == "knn-rbf" and s2.provenance["k"] == 3
    cats = SampleCategories(["a", "b"] * 6, e.samples)
    lab = sim.sample_similarity(e, "label", categories=cats)
    np.testing.assert_allclose(lab.degrees(), 1.0)


def test_sample_similarity_errors(rng, monkeypatch):
    e = _expr(rng.normal(size=(6, 3)))
    with pytest.raises(ParameterError, match="unknown similarity kind 'rbff'") as err:
        sim.sample_similarity(e, "rbff")
    assert "\n" not in str(err.value)
    with pytest.raises(ParameterError, match="unknown parameter"):
        sim.sample_similarity(e, "rbf", k=3)
    with pytest.raises(ParameterError, match="needs sample labels"):
        sim.sample_similarity(e, "label")
    with pytest.raises(ParameterError, match="delta2 must be > 0"):
        sim.sample_similarity(e, "rbf", delta2=-1.0)
    other = SampleCategories(["a", "b"] * 3, [f"x{i}" for i in range(6)])
    with pytest.raises(ParameterError, match="not aligned"):
        sim.sample_similarity(e, "label", categories=other)
    with pytest.raises(ParameterError, match="metric"):
        sim.sample_similarity(e, "knn", metric="manhattan")
    monkeypatch.setattr(kernels, "DENSE_LIMIT", 5)
    with pytest.raises(ResourceError, match="knn-rbf"):
        sim.sample_similarity(e, "rbf")


def test_non_finite_features_left_out(rng, caplog):
    X = rng.normal(size=(10, 4))
    Xn = X.copy()
    Xn[2, 1] = np.inf
    with caplog.at_level(logging.WARNING, logger="kofs.knowledge.similarity"):
        S, used = sim.similarity_from_array(Xn, "rbf")
    assert used["features_dropped"] == 1 and "left out" in caplog.text
    np.testing.assert_allclose(S, kernels.rbf_similarity(np.delete(X, 1, axis=1)), rtol=1e-12)
    with pytest.raises(ParameterError, match="every feature has a missing"):
        sim.similarity_from_array(np.full((4, 2), np.nan), "knn")
