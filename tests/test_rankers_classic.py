"""Classic rankers: variance, fisher, laplacian (kofs.rankers.classic)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_iris

from kofs.errors import ParameterError
from kofs.knowledge.similarity import similarity_from_array
from kofs.rankers import RANKERS, run_ranker
from kofs.rankers._spectral_kernels import laplacian_score
from kofs.rankers.classic import fisher_score, variance_score
from kofs.types import Expression, RankerInputs, SampleCategories, SampleSimilarity

IRIS_X, IRIS_Y = load_iris(return_X_y=True)


def _expr(X, prefix="F"):
    n, m = X.shape
    return Expression(X, [f"{prefix}{j + 1}" for j in range(m)], [f"s{i}" for i in range(n)])


def _cats(e, labels):
    return SampleCategories([str(v) for v in labels], e.samples, name="class")


IRIS = _expr(IRIS_X)
IRIS_INPUTS = RankerInputs(categories=_cats(IRIS, IRIS_Y))


def _naive_ls(X, S):
    """He et al. 2005 steps 3-4 written out with explicit D and L."""
    S = S.toarray() if sp.issparse(S) else S
    D = np.diag(S.sum(axis=1))
    L = D - S
    one = np.ones(len(S))
    out = []
    for f in X.T:
        ft = f - (f @ D @ one) / (one @ D @ one) * one
        out.append((ft @ L @ ft) / (ft @ D @ ft))
    return np.array(out)


def test_registry_entries():
    assert RANKERS.get("variance").higher_is_better
    assert RANKERS.get("fisher").higher_is_better and RANKERS.get("fisher").supervised
    spec = RANKERS.get("laplacian")
    assert not spec.higher_is_better and not spec.supervised
    assert spec.params["k"].default == 5


def test_iris_variance_order_and_values():
    r = run_ranker("variance", IRIS)
    assert r.top(4) == ["F3", "F1", "F4", "F2"]
    # published (ddof = 1) variances 0.686, 0.190, 3.116, 0.581; ours are population variances
    np.testing.assert_allclose(r.scores * 150 / 149, [0.686, 0.190, 3.116, 0.581], atol=1e-3)


def test_iris_fisher_order_and_reference_tool():
    r = run_ranker("fisher", IRIS, IRIS_INPUTS)
    assert r.top(4) == ["F3", "F4", "F1", "F2"]
    from skfeature.function.similarity_based.fisher_score import fisher_score as sk_fisher

    # skfeature-chappers 1.2.1 returns only the order (descending Fisher score)
    np.testing.assert_array_equal(sk_fisher(IRIS_X, IRIS_Y, mode="index"), np.argsort(-r.scores))
    X = np.random.default_rng(3).normal(size=(60, 40))
    y = np.repeat([0, 1, 2], 20)
    np.testing.assert_array_equal(sk_fisher(X, y, mode="index"), np.argsort(-fisher_score(X, y)))


@pytest.mark.parametrize("k", range(3, 15))
def test_iris_laplacian_small_k(k):
    """He et al. 2005 Fig. 1: 3 <= k < 15 sorts F4, F3, F1, F2 (cosine kNN, 0-1 weights)."""
    r = run_ranker("laplacian", IRIS, params={"k": k, "metric": "cosine", "weight": "binary"})
    assert r.top(4) == ["F4", "F3", "F1", "F2"]


@pytest.mark.parametrize("k", [15, *range(17, 41, 3)])
def test_iris_laplacian_large_k(k):
    """He et al. 2005 Fig. 1: k >= 15 sorts F3, F4, F1, F2 (k = 16 is the one exception here)."""
    r = run_ranker("laplacian", IRIS, params={"k": k, "metric": "cosine", "weight": "binary"})
    assert r.top(4) == ["F3", "F4", "F1", "F2"]


def test_laplacian_label_graph_is_one_over_one_plus_fisher(rng):
    X = rng.normal(size=(40, 30))
    y = rng.integers(0, 3, size=40)
    e = _expr(X)
    inputs = RankerInputs(categories=_cats(e, y))
    ls = run_ranker("laplacian", e, inputs, params={"graph": "label"}).scores
    fs = run_ranker("fisher", e, inputs).scores
    np.testing.assert_allclose(ls, 1.0 / (1.0 + fs), rtol=0, atol=1e-12)
    ls_iris = run_ranker("laplacian", IRIS, IRIS_INPUTS, params={"graph": "label"}).scores
    np.testing.assert_allclose(ls_iris, 1 / (1 + fisher_score(IRIS_X, IRIS_Y)), atol=1e-12)


def test_laplacian_matches_naive_and_reference_tool(rng):
    X = rng.normal(size=(30, 8)) + 5.0
    S, _ = similarity_from_array(X, "knn", k=5)
    ours = laplacian_score(X, S)
    np.testing.assert_allclose(ours, _naive_ls(X, S), rtol=1e-10)
    np.testing.assert_allclose(laplacian_score(X, S.toarray()), ours, rtol=1e-12)
    from skfeature.function.similarity_based.lap_score import lap_score

    # skfeature-chappers 1.2.1 returns only the order (ascending score) for a given W
    np.testing.assert_array_equal(lap_score(X, W=sp.csc_matrix(S), mode="index"), np.argsort(ours))


def test_laplacian_given_similarity_and_auto(rng):
    X = rng.normal(size=(15, 6))
    e = _expr(X)
    S = np.exp(-rng.random((15, 15)))
    S = (S + S.T) / 2
    given = RankerInputs(similarity=SampleSimilarity(S, e.samples, name="aux"))
    auto = run_ranker("laplacian", e, given)
    np.testing.assert_allclose(auto.scores, _naive_ls(X, S), rtol=1e-10)
    assert auto.info["graph"] == "aux"
    knn = run_ranker("laplacian", e, given, params={"graph": "knn"})
    assert not np.allclose(knn.scores, auto.scores)


def test_fisher_edge_cases():
    y = np.array([0, 0, 1, 1, 1])
    X = np.column_stack(
        [
            [1.0, 1.0, 2.0, 2.0, 2.0],  # perfectly separating: +inf
            [3.0, 3.0, 3.0, 3.0, 3.0],  # constant: NaN
            [0.1, 0.3, 0.1, 0.2, 0.3],
        ]
    )
    f = fisher_score(X, y)
    assert f[0] == np.inf and np.isnan(f[1]) and np.isfinite(f[2])
    # naive definition for the finite one
    mu = X[:, 2].mean()
    num = sum((y == c).sum() * (X[y == c, 2].mean() - mu) ** 2 for c in (0, 1))
    den = sum((y == c).sum() * X[y == c, 2].var() for c in (0, 1))
    assert f[2] == pytest.approx(num / den, rel=1e-12)
    e = _expr(X)
    r = run_ranker("fisher", e, RankerInputs(categories=_cats(e, y)))
    assert r.ranks[0] == 1 and r.ranks[1] == 3  # +inf best, constant last


def test_fisher_ignores_unlabelled_and_needs_two_classes(rng):
    X = rng.normal(size=(8, 4))
    e = _expr(X)
    labels = ["a", "b", "NA", "a", "b", "", "a", "b"]
    keep = [i for i, v in enumerate(labels) if v not in ("NA", "")]
    r = run_ranker("fisher", e, RankerInputs(categories=SampleCategories(labels, e.samples)))
    codes = np.array([0 if labels[i] == "a" else 1 for i in keep])
    np.testing.assert_allclose(r.scores, fisher_score(X[keep], codes))
    one = RankerInputs(categories=SampleCategories(["a"] * 8, e.samples, name="grp"))
    with pytest.raises(ParameterError, match="at least 2 classes") as err:
        run_ranker("fisher", e, one)
    assert "\n" not in str(err.value)
    with pytest.raises(ParameterError, match="needs sample labels"):
        run_ranker("fisher", e)


@pytest.mark.parametrize("name", ["variance", "fisher", "laplacian"])
def test_constant_genes_last_and_gene_permutation(name, rng):
    X = rng.normal(size=(20, 10))
    X[:, 3] = 2.0
    e = _expr(X)
    y = np.repeat([0, 1], 10)
    inputs = RankerInputs(categories=_cats(e, y))
    r = run_ranker(name, e, inputs)
    assert np.isnan(r.scores[3]) and r.ranks[3] == 10
    perm = rng.permutation(10)
    rp = run_ranker(name, e.subset_genes(perm), inputs)
    np.testing.assert_allclose(rp.scores, r.scores[perm], rtol=1e-12, equal_nan=True)


def test_variance_kernel_matches_numpy(rng):
    X = rng.normal(size=(5, 3))
    np.testing.assert_allclose(variance_score(X), ((X - X.mean(0)) ** 2).mean(0))


def test_laplacian_user_errors(rng):
    e = _expr(rng.normal(size=(10, 3)))
    with pytest.raises(ParameterError, match="graph='given' needs"):
        run_ranker("laplacian", e, params={"graph": "given"})
    with pytest.raises(ParameterError, match="graph='label' needs sample labels"):
        run_ranker("laplacian", e, params={"graph": "label"})
    with pytest.raises(ParameterError, match=r"'k' must be an int in \["):
        run_ranker("laplacian", e, params={"k": 0})
    with pytest.raises(ParameterError, match="must be one of"):
        run_ranker("laplacian", e, params={"graph": "rbf"})
    neg = RankerInputs(similarity=SampleSimilarity(-np.ones((10, 10)), e.samples))
    with pytest.raises(ParameterError, match="negative"):
        run_ranker("laplacian", e, neg)


def test_tiny_input_clamps_k():
    X = np.array([[0.0, 1.0], [1.0, 0.5], [2.0, 0.1]])
    r = run_ranker("laplacian", _expr(X))
    assert r.info["k"] == 2 and np.all(np.isfinite(r.scores))


def test_missing_values_give_nan_scores(rng):
    X = rng.normal(size=(12, 5))
    X[3, 1] = np.nan
    e = _expr(X)
    inputs = RankerInputs(categories=_cats(e, np.repeat([0, 1], 6)))
    for name in ("variance", "fisher"):
        r = run_ranker(name, e, inputs)
        assert np.isnan(r.scores[1]) and r.ranks[1] == 5
        assert np.all(np.isfinite(np.delete(r.scores, 1)))
