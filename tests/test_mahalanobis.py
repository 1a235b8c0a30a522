"""GO-MAH: Proposition 1 (eq. 6.9) identities, the pseudo-inverse derivation, exact == scalable."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from kofs.errors import CoverageError, KofsError, ParameterError
from kofs.knowledge.mahalanobis import (
    _laplacian_eig,
    commute_time_covariance,
    graph_laplacian,
    mahalanobis_similarity,
    mahalanobis_sq_distances,
)
from kofs.types import Expression, FeatureRelation


def _graph(m, blocks, rng, isolated=(), directed=False):
    """Random weighted graph: dense-ish random blocks (components) plus isolated genes."""
    W = np.zeros((m, m))
    for blk in blocks:
        blk = np.asarray(blk)
        A = rng.uniform(0.1, 1.0, (blk.size, blk.size)) * (rng.random((blk.size, blk.size)) < 0.7)
        # a path keeps the block connected
        for a, b in zip(blk[:-1], blk[1:], strict=True):
            A[list(blk).index(a), list(blk).index(b)] = rng.uniform(0.2, 1.0)
        if not directed:
            A = np.triu(A, 1)
            A = A + A.T
        else:
            np.fill_diagonal(A, 0)
        W[np.ix_(blk, blk)] = A
    for i in isolated:
        W[i, :] = 0
        W[:, i] = 0
    return sp.csr_matrix(W)


def _expr(X):
    n, m = X.shape
    return Expression(X, [f"g{j}" for j in range(m)], [f"s{i}" for i in range(n)])


def _rel(W, expr, directed=False):
    return FeatureRelation(W, expr.genes, directed=directed, name="toy")


def test_prop1_identity_and_rank(rng):
    """§12: C == X_EM (I - 11^T/m) X_EM^T, PSD, rank m - c (<= m - 1)."""
    m = 10
    W = _graph(m, [range(0, 6), range(6, 9)], rng, isolated=[9])
    L = graph_laplacian(W).toarray()
    C, X_em = commute_time_covariance(L, centring="eigenbasis")
    J = np.eye(m) - np.ones((m, m)) / m
    np.testing.assert_allclose(C, X_em @ J @ X_em.T, atol=1e-12)
    ev = np.linalg.eigvalsh(C)
    assert ev.min() > -1e-10
    c = 3  # two blocks + one isolated gene
    assert np.linalg.matrix_rank(C, tol=1e-9) == m - c
    assert np.linalg.matrix_rank(C, tol=1e-9) <= m - 1
    # the isolated gene has a zero embedding row
    np.testing.assert_allclose(X_em[9], 0.0, atol=1e-12)


def test_pinv_closed_form_eigenbasis(rng):
    """Derivation (P): C^+ = L + (1/c) g g^T with g = L^{1/2} U 1."""
    m = 9
    W = _graph(m, [range(0, 5), range(5, 8)], rng, isolated=[8])
    L = graph_laplacian(W).toarray()
    C, _ = commute_time_covariance(L, centring="eigenbasis")
    sigma, U = _laplacian_eig(L)
    c = int(np.sum(sigma == 0))
    assert c == 3
    g = (U * np.sqrt(sigma)).sum(axis=1)
    np.testing.assert_allclose(
        np.linalg.pinv(C, rtol=1e-10, hermitian=True), L + np.outer(g, g) / c, atol=1e-9
    )


def test_invariant_is_average_over_eigenvector_signs(rng):
    """(I): averaging the printed C over all 2^m eigenvector orientations gives (1 - 1/m) L^+."""
    m = 7
    W = _graph(m, [range(m)], rng)
    L = graph_laplacian(W).toarray()
    sigma, U = _laplacian_eig(L)
    inv = np.where(sigma > 0, 1.0 / np.where(sigma > 0, sigma, 1.0), 0.0)
    Lp = (U * inv) @ U.T
    acc = np.zeros((m, m))
    for signs in itertools.product([-1.0, 1.0], repeat=m):
        Us = U * np.array(signs)
        X_em = Us * np.sqrt(inv)
        acc += X_em @ (np.eye(m) - np.ones((m, m)) / m) @ X_em.T
    acc /= 2**m
    C_inv, _ = commute_time_covariance(L, centring="invariant")
    np.testing.assert_allclose(acc, C_inv, atol=1e-12)
    np.testing.assert_allclose(C_inv, (1 - 1 / m) * Lp, atol=1e-12)
    # and the printed C does depend on the orientation (the defect the default resolves)
    C_e, _ = commute_time_covariance(L, centring="eigenbasis")
    X_flip = (U * np.r_[np.ones(m - 1), -1.0]) * np.sqrt(inv)
    C_flip = X_flip @ (np.eye(m) - np.ones((m, m)) / m) @ X_flip.T
    assert np.abs(C_e - C_flip).max() > 1e-3


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_exact_equals_scalable(seed, directed):
    rng = np.random.default_rng(seed)
    m, n = 40, 12
    W = _graph(
        m,
        [range(0, 15), range(15, 30), range(30, 36)],
        rng,
        isolated=[36, 37, 38, 39],
        directed=directed,
    )
    X = rng.normal(size=(n, m))
    a = mahalanobis_sq_distances(X, W, method="scalable")
    b = mahalanobis_sq_distances(X, W, method="exact")
    np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-8 * a.max())
    e = _expr(X)
    s1 = mahalanobis_similarity(e, _rel(W, e, directed))
    s2 = mahalanobis_similarity(e, _rel(W, e, directed), method="exact")
    np.testing.assert_allclose(s1.matrix, s2.matrix, atol=1e-8)


def test_distance_is_graph_smoothness(rng):
    """d^2 = m/(m-1) * 1/2 sum_rs W_rs (delta_r - delta_s)^2 (naive loop)."""
    m, n = 8, 5
    W = _graph(m, [range(0, 5), range(5, 8)], rng)
    Wd = W.toarray()
    X = rng.normal(size=(n, m))
    D2 = mahalanobis_sq_distances(X, W)
    for i, j in [(0, 1), (2, 4), (3, 3)]:
        d = X[i] - X[j]
        naive = 0.5 * sum(Wd[r, s] * (d[r] - d[s]) ** 2 for r in range(m) for s in range(m))
        assert D2[i, j] == pytest.approx(m / (m - 1) * naive, rel=1e-12, abs=1e-12)


def test_ridge_path(rng):
    m, n = 12, 6
    W = _graph(m, [range(0, 7), range(7, 12)], rng)
    X = rng.normal(size=(n, m))
    L = graph_laplacian(W).toarray()
    C, _ = commute_time_covariance(L)
    D2 = mahalanobis_sq_distances(X, W, method="exact", ridge=0.1)
    d = X[1] - X[4]
    assert D2[1, 4] == pytest.approx(d @ np.linalg.solve(C + 0.1 * np.eye(m), d), rel=1e-10)
    # with differences orthogonal to the component indicators, ridge -> pinv as eps -> 0
    Xc = X.copy()
    for blk in (slice(0, 7), slice(7, 12)):
        Xc[:, blk] -= Xc[:, blk].mean(axis=1, keepdims=True)
    tiny = mahalanobis_sq_distances(Xc, W, method="exact", ridge=1e-9)
    np.testing.assert_allclose(tiny, mahalanobis_sq_distances(Xc, W), rtol=1e-6)


def test_similarity_properties_and_provenance(rng):
    m, n = 30, 15
    W = _graph(m, [range(0, 20), range(20, 27)], rng, isolated=[27, 28, 29])
    X = rng.normal(size=(n, m))
    e = _expr(X)
    S = mahalanobis_similarity(e, _rel(W, e))
    M = S.matrix
    assert M.shape == (n, n) and S.samples == e.samples
    np.testing.assert_allclose(M, M.T)
    np.testing.assert_allclose(np.diag(M), 1.0)
    assert np.all(M > 0) and np.all(M <= 1)
    # delta^2 = median/2  =>  the median off-diagonal similarity is exp(-1)
    assert np.median(M[np.triu_indices(n, 1)]) == pytest.approx(np.exp(-1), rel=1e-9)
    p = S.provenance
    assert p["n_components"] == 5 and p["n_isolated_genes"] == 3 and p["builder"] == "mahalanobis"


def test_isolated_genes_do_not_matter_and_gene_order_invariance(rng):
    m, n = 20, 10
    W = _graph(m, [range(0, 16)], rng, isolated=[16, 17, 18, 19])
    X = rng.normal(size=(n, m))
    e = _expr(X)
    base = mahalanobis_similarity(e, _rel(W, e)).matrix
    X2 = X.copy()
    X2[:, 16:] = rng.normal(size=(n, 4)) * 100
    e2 = _expr(X2)
    np.testing.assert_allclose(mahalanobis_similarity(e2, _rel(W, e2)).matrix, base, atol=1e-12)
    perm = rng.permutation(m)
    ep = Expression(X[:, perm], [e.genes[i] for i in perm], e.samples)
    Wp = W[perm][:, perm]
    np.testing.assert_allclose(mahalanobis_similarity(ep, _rel(Wp, ep)).matrix, base, atol=1e-10)


def test_scalable_large_sparse_graph(rng):
    """m = 20,000 genes: the default path never forms an m x m dense matrix."""
    m, n = 20_000, 20
    rows = rng.integers(0, m, 60_000)
    cols = rng.integers(0, m, 60_000)
    W = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(m, m))
    X = rng.normal(size=(n, m))
    e = _expr(X)
    S = mahalanobis_similarity(e, _rel(W, e))
    assert S.matrix.shape == (n, n) and np.all(np.isfinite(S.matrix))
    with pytest.raises(ParameterError, match="scalable"):
        mahalanobis_similarity(e, _rel(W, e), method="exact")


def _one_line(err: KofsError) -> None:
    assert "\n" not in str(err) and str(err)


def test_user_errors(rng):
    m, n = 6, 4
    W = _graph(m, [range(m)], rng)
    X = rng.normal(size=(n, m))
    e = _expr(X)
    other = FeatureRelation(W, [f"h{j}" for j in range(m)], name="other")
    with pytest.raises(ParameterError, match="not aligned") as ei:
        mahalanobis_similarity(e, other)
    _one_line(ei.value)
    neg = W.copy()
    neg.data[0] = -1
    with pytest.raises(ParameterError, match="negative"):
        mahalanobis_similarity(e, _rel(neg, e))
    with pytest.raises(CoverageError, match="no edge"):
        mahalanobis_similarity(e, _rel(sp.identity(m, format="csr"), e))
    with pytest.raises(ParameterError, match="method='exact'"):
        mahalanobis_similarity(e, _rel(W, e), ridge=0.1)
    with pytest.raises(ParameterError, match="method"):
        mahalanobis_similarity(e, _rel(W, e), method="fast")
    with pytest.raises(ParameterError, match="centring"):
        mahalanobis_similarity(e, _rel(W, e), method="exact", centring="rows")
    with pytest.raises(ParameterError, match="delta2"):
        mahalanobis_similarity(e, _rel(W, e), delta2=-1.0)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ParameterError, match="missing"):
        mahalanobis_similarity(_expr(Xn), _rel(W, e))


def test_identical_samples_give_all_ones(rng):
    m = 5
    W = _graph(m, [range(m)], rng)
    X = np.tile(rng.normal(size=m), (4, 1))
    e = _expr(X)
    np.testing.assert_allclose(mahalanobis_similarity(e, _rel(W, e)).matrix, 1.0)


def test_bundled_example_ppi_exact_equals_scalable():
    """Real data: the bundled ALL subset (128 samples) with its STRING edges (read with pandas)."""
    from pathlib import Path

    import pandas as pd

    from kofs import __file__ as kofs_init

    d = Path(kofs_init).parent / "data" / "example"
    tab = pd.read_csv(d / "expression.tsv.gz", sep="\t")
    genes = tab["symbol"].astype(str).tolist()
    X = tab.drop(columns=["symbol", "entrez_id"]).to_numpy(float).T
    e = Expression(X, genes, tab.columns[2:])
    edges = pd.read_csv(d / "interactions.tsv", sep="\t")
    pos = {g: i for i, g in enumerate(genes)}
    ok = edges["symbol_a"].isin(pos) & edges["symbol_b"].isin(pos)
    a = edges.loc[ok, "symbol_a"].map(pos).to_numpy()
    b = edges.loc[ok, "symbol_b"].map(pos).to_numpy()
    w = edges.loc[ok, "score"].to_numpy(float)
    # keep the linked genes plus 100 isolated ones (keeps the dense exact path cheap)
    linked = np.unique(np.r_[a, b])
    keep = np.r_[linked, np.setdiff1d(np.arange(len(genes)), linked)[:100]]
    e = e.subset_genes(keep)
    X = e.values
    new = {g: i for i, g in enumerate(keep)}
    a, b = np.vectorize(new.get)(a), np.vectorize(new.get)(b)
    m = keep.size
    W = sp.csr_matrix((np.r_[w, w], (np.r_[a, b], np.r_[b, a])), shape=(m, m))
    rel = _rel(W, e)
    s1 = mahalanobis_similarity(e, rel)
    s2 = mahalanobis_similarity(e, rel, method="exact")
    np.testing.assert_allclose(s1.matrix, s2.matrix, atol=1e-8)
    assert s1.provenance["n_edges"] > 50
    # the graph distance is not the Euclidean one: the similarities differ from a plain RBF
    D2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    rbf = np.exp(-D2 / np.median(D2[np.triu_indices(len(X), 1)]))
    assert np.corrcoef(rbf.ravel(), s1.matrix.ravel())[0, 1] < 0.99
