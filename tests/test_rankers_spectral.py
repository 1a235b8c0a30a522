"""SPEC phi1/phi2/phi3 (kofs.rankers.spectral, kofs.rankers._spectral_kernels)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from kofs.errors import ParameterError
from kofs.knowledge.similarity import similarity_from_array
from kofs.knowledge.similarity_kernels import fisher_label_similarity, rbf_similarity
from kofs.rankers import RANKERS, run_ranker
from kofs.rankers._spectral_kernels import (
    eigengap_clusters,
    laplacian_score,
    normalized_eigenpairs,
    spec_phi1,
    spec_phi2,
    spec_phi3,
)
from kofs.types import Expression, RankerInputs, SampleCategories, SampleSimilarity


def _expr(X):
    n, m = X.shape
    return Expression(X, [f"F{j + 1}" for j in range(m)], [f"s{i}" for i in range(n)])


def _oracle(X, S, power):
    """Book definitions (2.17-2.19) through a full dense eigendecomposition of Lcal."""
    S = S.toarray() if sp.issparse(S) else S
    d = S.sum(axis=1)
    n = len(d)
    Lcal = np.eye(n) - S / np.sqrt(np.outer(d, d))
    lam, U = np.linalg.eigh(Lcal)
    xi1 = np.sqrt(d) / np.linalg.norm(np.sqrt(d))
    U[:, 0] = xi1
    g = lambda x: x**power  # noqa: E731
    phi1, phi2, phi3 = [], [], []
    for f in X.T:
        fh = np.sqrt(d) * f
        fh /= np.linalg.norm(fh)
        a = U.T @ fh
        phi1.append(np.sum(a**2 * g(lam)))
        phi2.append(phi1[-1] / (1 - (fh @ xi1) ** 2))
        phi3.append(np.sum((g(2.0) - g(lam[1:3])) * a[1:3] ** 2))  # k = 3
    return np.array(phi1), np.array(phi2), np.array(phi3)


@pytest.mark.parametrize("power", [1, 2, 3])
def test_kernels_match_eigendecomposition_oracle(rng, power):
    X = rng.normal(size=(25, 12)) + rng.uniform(0, 4, size=12)
    S = rbf_similarity(X, delta2=4.0)
    o1, o2, o3 = _oracle(X, S, power)
    np.testing.assert_allclose(spec_phi1(X, S, power=power), o1, rtol=1e-9)
    np.testing.assert_allclose(spec_phi2(X, S, power=power), o2, rtol=1e-9)
    np.testing.assert_allclose(spec_phi3(X, S, k=3, power=power)[0], o3, rtol=1e-8, atol=1e-14)


def test_reference_tool_skfeature_spec_raw_scores(rng):
    """skfeature SPEC style -1 / 0 / k compute phi1 / phi2 / phi3 (ALGORITHMS.md §13)."""
    from skfeature.function.similarity_based.SPEC import spec

    X = rng.normal(size=(30, 9)) * 2 + 1
    S = rbf_similarity(X)
    np.testing.assert_allclose(spec(X, W=S, style=-1, mode="raw"), spec_phi1(X, S), rtol=1e-9)
    np.testing.assert_allclose(spec(X, W=S, style=0, mode="raw"), spec_phi2(X, S), rtol=1e-9)
    np.testing.assert_allclose(
        spec(X, W=S, style=3, mode="raw"), spec_phi3(X, S, k=3)[0], rtol=1e-8
    )


def test_laplacian_score_equals_phi2_identity(rng):
    X = rng.normal(size=(50, 20)) * rng.uniform(0.1, 3, size=20) + rng.uniform(-5, 5, size=20)
    e = _expr(X)
    ls = run_ranker("laplacian", e).scores
    S, _ = similarity_from_array(X, "knn", k=5)
    given = RankerInputs(similarity=SampleSimilarity(S, e.samples, name="knn"))
    phi2 = run_ranker("spec-phi2", e, given).scores
    np.testing.assert_allclose(phi2, ls, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("power", [1, 2, 3, 4])
@pytest.mark.parametrize("sparse_graph", [False, True])
def test_column_blocks_reuse_buffers_correctly(rng, monkeypatch, power, sparse_graph):
    """Several equal column blocks and a narrower last one (buffers reused from block to block,
    one set per block shape), every power's chain of products, a dense or a sparse graph: the
    same scores as one block, and as the eigendecomposition."""
    from kofs.rankers import _spectral_kernels

    X = rng.normal(size=(25, 30)) + rng.uniform(0, 4, size=30)
    X[:, 9] = 1.5  # a constant gene inside a block
    S = rbf_similarity(X, delta2=4.0)
    S = sp.csr_matrix(np.where(S > np.median(S), S, 0.0)) if sparse_graph else S
    whole = spec_phi1(X, S, power=power), spec_phi2(X, S, power=power)
    monkeypatch.setattr(_spectral_kernels, "_BLOCK_BYTES", 8 * 25 * 7)  # 4 x 7 columns + 2
    blocked = spec_phi1(X, S, power=power), spec_phi2(X, S, power=power)
    o1, o2, _ = _oracle(np.delete(X, 9, axis=1), S, power)
    for a, b, o in zip(whole, blocked, (o1, o2), strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-13)
        assert np.isnan(b[9])
        np.testing.assert_allclose(np.delete(b, 9), o, rtol=1e-9)


@pytest.mark.parametrize("power", [1, 3])
def test_dense_equals_sparse(rng, power):
    X = rng.normal(size=(40, 10))
    S, _ = similarity_from_array(X, "knn", k=6)
    D = S.toarray()
    for fn in (spec_phi1, spec_phi2):
        np.testing.assert_allclose(fn(X, S, power=power), fn(X, D, power=power), rtol=1e-12)
    np.testing.assert_allclose(
        spec_phi3(X, S, k=3, power=power)[0], spec_phi3(X, D, k=3, power=power)[0], rtol=1e-8
    )


@pytest.mark.slow
def test_lanczos_path_equals_dense_eigh(rng):
    """n > 500 with a sparse S runs eigsh; the dense ndarray runs LAPACK eigh."""
    centres = np.array([[0, 0], [3, 0], [0, 3]])
    X = np.vstack([rng.normal(size=(170, 2)) + c for c in centres])
    X = np.column_stack([X, rng.uniform(size=(510, 3))])
    S, _ = similarity_from_array(X, "knn", k=10)
    lam_s, _ = normalized_eigenpairs(S, n_pairs=3)
    lam_d, _ = normalized_eigenpairs(S.toarray(), n_pairs=3)
    np.testing.assert_allclose(lam_s, lam_d, atol=1e-9)
    np.testing.assert_allclose(
        spec_phi3(X, S, k=3)[0], spec_phi3(X, S.toarray(), k=3)[0], rtol=1e-6
    )


def _gaussian_mixture(seed=0):
    """Book Example 6/9: 90 points from 3 unit-variance 2-D Gaussians + four U(0,1) features."""
    rng = np.random.default_rng(seed)
    means = np.array([[5.0, 0.0], [0.0, 5.0], [5.0, 5.0]])
    rel = np.vstack([rng.normal(size=(30, 2)) + m for m in means])
    return np.column_stack([rel, rng.uniform(size=(90, 4))]), np.repeat([0, 1, 2], 30)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("name", ["spec-phi1", "spec-phi2", "spec-phi3"])
@pytest.mark.parametrize("gamma", ["identity", "power"])
def test_three_gaussians_relevant_features_first(seed, name, gamma):
    X, _ = _gaussian_mixture(seed)
    params = {"similarity": "rbf", "delta": 1.0, "gamma": gamma}
    if name == "spec-phi3":
        params["k"] = 3
    r = run_ranker(name, _expr(X), params=params)
    assert set(r.top(2)) == {"F1", "F2"}


def test_phi3_label_graph_closed_form(rng):
    """S^FIS: c components; phi3 (k = c, gamma = x) = 2 * between-class SS / ||f||^2."""
    X = rng.normal(size=(30, 7)) + 2
    y = np.repeat([0, 1, 2], 10)
    between = sum(10 * (X[y == c].mean(0) - X.mean(0)) ** 2 for c in range(3))
    phi3, lam = spec_phi3(X, fisher_label_similarity(y), k=3)
    np.testing.assert_allclose(phi3, 2 * between / (X**2).sum(0), rtol=1e-10)
    np.testing.assert_allclose(lam[:2], 0.0, atol=1e-12)
    # basis independent: permuting the samples changes nothing
    p = rng.permutation(30)
    np.testing.assert_allclose(
        spec_phi3(X[p], fisher_label_similarity(y[p]), k=3)[0], phi3, rtol=1e-10
    )


def test_phi3_default_k_and_rejects_k1(rng):
    X, y = _gaussian_mixture()
    e = _expr(X)
    inputs = RankerInputs(categories=SampleCategories([str(v) for v in y], e.samples))
    assert run_ranker("spec-phi3", e, inputs).info["k"] == 3
    # without labels, the eigengap heuristic finds the mixture's three clusters
    info = run_ranker("spec-phi3", e).info
    assert (info["k"], info["k_from"]) == (3, "eigengap")
    assert run_ranker("spec-phi3", e, params={"k": 4}).info["k_from"] == "given"
    with pytest.raises(ParameterError, match=r"'k' must be an int in \[") as err:
        run_ranker("spec-phi3", e, params={"k": 1})
    assert "\n" not in str(err.value)
    with pytest.raises(ParameterError, match="k must lie in"):
        spec_phi3(X, rbf_similarity(X), k=1)


def test_eigengap_clusters():
    assert eigengap_clusters(np.array([0.01, 0.02, 0.9, 0.95])) == 3  # 3 small: 3 clusters
    assert eigengap_clusters(np.array([0.5, 0.6, 0.7, 0.95])) == 4
    assert eigengap_clusters(np.array([0.9])) == 2  # nothing to compare
    # a planted 5-cluster kNN graph of cells: the unsupervised default k finds 5 clusters and
    # phi3 then ranks the markers of every cluster (with k = 2 only one cut's markers)
    from kofs.datasets import synthetic_counts

    d = synthetic_counts(1500, 300, n_clusters=5, n_markers=6, density=0.1, seed=2)
    e = Expression(d.X, d.genes, d.cells)
    graph = {"similarity": "knn", "neighbors": 10}

    def markers_found(r):  # per cluster: how many of its 6 markers are in the top 30
        top = set(r.top(30))
        return [sum(d.genes[j] in top for j in row) for row in np.asarray(d.markers)]

    r = run_ranker("spec-phi3", e, params=graph)
    assert r.info["k"] == 5
    assert min(markers_found(r)) >= 4  # most markers of every cluster (measured: 5 to 6 of 6)
    # k = 2 ranks the markers of one cut: some cluster is left without them (measured 0 of 6)
    assert min(markers_found(run_ranker("spec-phi3", e, params={**graph, "k": 2}))) <= 1


def test_semi_supervised_alpha(rng):
    X, y = _gaussian_mixture(3)
    labels = [str(v) for v in y]
    for i in range(0, 90, 4):
        labels[i] = "NA"  # unlabelled
    e = _expr(X)
    inputs = RankerInputs(categories=SampleCategories(labels, e.samples))
    keep = np.array([v != "NA" for v in labels])
    codes = np.array([int(v) for v in labels if v != "NA"])
    base = {"similarity": "rbf", "delta": 1.0}
    unsup = run_ranker("spec-phi2", e, inputs, params=base).scores
    sup = spec_phi2(X[keep], fisher_label_similarity(codes))
    half = run_ranker("spec-phi2", e, inputs, params={**base, "alpha": 0.5}).scores
    np.testing.assert_allclose(half, 0.5 * unsup + 0.5 * sup, rtol=1e-12)
    one = run_ranker("spec-phi2", e, inputs, params={**base, "alpha": 1.0}).scores
    np.testing.assert_allclose(one, sup, rtol=1e-12)
    with pytest.raises(ParameterError, match="needs sample labels"):
        run_ranker("spec-phi1", e, params={"alpha": 0.3})


def test_similarity_choices(rng):
    X = rng.normal(size=(20, 5))
    e = _expr(X)
    S = rbf_similarity(X, delta2=2.0)
    given = RankerInputs(similarity=SampleSimilarity(S, e.samples, name="aux"))
    auto = run_ranker("spec-phi1", e, given)
    np.testing.assert_allclose(auto.scores, spec_phi1(X, S), rtol=1e-12)
    assert auto.info["similarity"] == "aux"
    rbf = run_ranker("spec-phi1", e, given, params={"similarity": "rbf"})
    np.testing.assert_allclose(rbf.scores, spec_phi1(X, rbf_similarity(X)), rtol=1e-12)
    with pytest.raises(ParameterError, match="similarity='given' needs"):
        run_ranker("spec-phi2", e, params={"similarity": "given"})
    with pytest.raises(ParameterError, match="needs sample labels"):
        run_ranker("spec-phi2", e, params={"similarity": "label"})


@pytest.mark.parametrize("name", ["spec-phi1", "spec-phi2", "spec-phi3"])
def test_constant_genes_last_and_permutation(name, rng):
    X = rng.normal(size=(24, 9))
    X[:, 5] = 1.5
    e = _expr(X)
    r = run_ranker(name, e)
    assert np.isnan(r.scores[5]) and r.ranks[5] == 9
    perm = rng.permutation(9)
    rp = run_ranker(name, e.subset_genes(perm))
    np.testing.assert_allclose(rp.scores, r.scores[perm], rtol=1e-10, equal_nan=True)
    assert np.isnan(spec_phi1(X, rbf_similarity(X))[5])  # NaN already in the kernel


def test_isolated_samples_are_dropped(rng):
    X = rng.normal(size=(12, 4))
    S = rbf_similarity(X, delta2=1.0)
    S[0, :] = 0.0
    S[:, 0] = 0.0
    np.testing.assert_allclose(spec_phi2(X, S), spec_phi2(X[1:], S[1:, 1:]), rtol=1e-12)
    np.testing.assert_allclose(laplacian_score(X, S), laplacian_score(X[1:], S[1:, 1:]), rtol=1e-12)


@given(n=st.integers(4, 20), m=st.integers(1, 6), seed=st.integers(0, 10_000))
def test_scores_lie_in_spectrum_range(n, m, seed):
    """phi1, phi2 (gamma = x) are Rayleigh quotients of Lcal: within [0, 2]."""
    X = np.random.default_rng(seed).normal(size=(n, m))
    S = rbf_similarity(X)
    for s in (spec_phi1(X, S), spec_phi2(X, S)):
        assert np.all((s >= -1e-12) & (s <= 2 + 1e-12))


def test_registry_directions():
    assert not RANKERS.get("spec-phi1").higher_is_better
    assert not RANKERS.get("spec-phi2").higher_is_better
    assert RANKERS.get("spec-phi3").higher_is_better
    assert RANKERS.get("spec-phi1").params["power"].default == 3


@pytest.mark.parametrize("name", ["laplacian", "spec-phi1", "spec-phi2", "spec-phi3"])
def test_missing_values_only_affect_their_gene(name, rng):
    """A NaN makes its own gene NaN (ranked last); the graph is built from complete genes."""
    X = rng.normal(size=(20, 8))
    Xn = X.copy()
    Xn[4, 2] = np.nan
    r = run_ranker(name, _expr(Xn))
    assert np.isnan(r.scores[2]) and r.ranks[2] == 8
    assert r.info.get("features_dropped") == 1
    clean = run_ranker(name, _expr(np.delete(X, 2, axis=1)))
    np.testing.assert_allclose(np.delete(r.scores, 2), clean.scores, rtol=1e-9)


def test_asymmetric_similarity_is_symmetrised(rng, caplog):
    X = rng.normal(size=(10, 4))
    S = rng.random((10, 10))
    with caplog.at_level("WARNING", logger="kofs.rankers._spectral_kernels"):
        got = spec_phi2(X, S)
    assert "not symmetric" in caplog.text
    np.testing.assert_allclose(got, spec_phi2(X, (S + S.T) / 2), rtol=1e-12)


def test_tiny_inputs():
    X = np.array([[0.0, 1.0, 2.0], [1.0, 0.5, 2.0], [2.0, 0.1, 2.0]])
    e = _expr(X)
    for name in ("spec-phi1", "spec-phi2", "spec-phi3"):
        r = run_ranker(name, e)
        assert np.all(np.isfinite(r.scores[:2])) and np.isnan(r.scores[2])
    with pytest.raises(ParameterError, match="at least 3"):
        run_ranker("spec-phi3", _expr(X[:2]))
    assert np.all(np.isfinite(run_ranker("spec-phi2", _expr(X[:2, :2])).scores))


@pytest.mark.parametrize("name", ["spec-phi1", "spec-phi2", "spec-phi3"])
@pytest.mark.parametrize("delta", [1e300, 1e-170])
def test_an_rbf_width_whose_square_is_not_a_number_is_refused(name, delta):
    """delta is squared in the kernel: 1e300 overflowed (an internal OverflowError, exit 1)
    and 1e-170 underflowed to 0 (an error naming delta2); both are outside the parameter's
    range now, said in the user's terms."""
    X, _ = _gaussian_mixture()
    with pytest.raises(ParameterError, match=r"'delta' must be a float in \[1e-150, 1e\+150\]"):
        run_ranker(name, _expr(X), params={"delta": delta})
    assert run_ranker(name, _expr(X), params={"delta": 1e150}).scores.size == X.shape[1]
