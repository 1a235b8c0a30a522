"""Tests of the sparse-representation rankers: Sparsity Score, SPS, FSSI."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.optimize import linprog
from scipy.stats import spearmanr
from sklearn.linear_model import Lasso

from kofs.errors import InputError, ParameterError
from kofs.rankers import _sparse_kernels as K
from kofs.rankers import run_ranker
from kofs.rankers._fssi_kernel import fssi_errors
from kofs.rankers._lasso_kernel import lasso_active_set, lasso_gram, lasso_reconstruction
from kofs.rankers.sparse import fssi, sparsity_preserving_score, sparsity_score
from kofs.types import Expression

# FSSI Table II, "SI rank" column, in load_wine's feature order.
FSSI_TABLE_II = np.array([5, 6, 10, 2, 3, 11, 8, 13, 4, 7, 12, 9, 1])


def _expr(X: np.ndarray, genes=None) -> Expression:
    genes = genes if genes is not None else [f"g{j}" for j in range(X.shape[1])]
    return Expression(X, genes, [f"s{i}" for i in range(X.shape[0])])


def _planted(rng, *, n=30, m=120, k=6, sep=6.0):
    """3 clusters; genes 0..k-1 carry the cluster means (+ small noise), the rest are N(0, 1)."""
    labels = np.repeat(np.arange(3), n // 3)
    X = rng.normal(size=(n, m))
    centers = rng.normal(scale=sep, size=(3, k))
    X[:, :k] = centers[labels] + 0.3 * rng.normal(size=(n, k))
    return X


# --- eq. (10) and its typo --------------------------------------------------------------------


def test_residual_identity_needs_StS_not_SSt(rng):
    n = 9
    S = rng.normal(size=(n, n))
    np.fill_diagonal(S, 0)
    f = rng.normal(size=n)
    eye = np.eye(n)
    lhs = np.sum((f - S @ f) ** 2)
    assert lhs == pytest.approx(f @ (eye - S - S.T + S.T @ S) @ f, rel=1e-12)
    assert abs(lhs - f @ (eye - S - S.T + S @ S.T) @ f) > 1e-3 * lhs


def test_sparsity_score_matches_quadratic_form(rng):
    n, m = 8, 5
    X = rng.normal(size=(n, m))
    S = rng.normal(size=(n, n))
    np.fill_diagonal(S, 0)
    eye, C = np.eye(n), np.eye(n) - np.ones((n, n)) / n
    want = [
        X[:, r] @ (eye - S - S.T + S.T @ S) @ X[:, r] / (X[:, r] @ C @ X[:, r]) for r in range(m)
    ]
    np.testing.assert_allclose(K.sparsity_score_from_graph(X, S), want, rtol=1e-12)


@given(shift=st.floats(-1e3, 1e3), scale=st.floats(0.01, 100), seed=st.integers(0, 10**6))
def test_sparsity_score_affine_invariant_when_rows_sum_to_one(shift, scale, seed):
    r = np.random.default_rng(seed)
    n = 7
    S = r.random((n, n))
    np.fill_diagonal(S, 0)
    S /= S.sum(axis=1, keepdims=True)  # (I - S) 1 = 0
    f = r.normal(size=(n, 1))
    a = K.sparsity_score_from_graph(f, S)
    b = K.sparsity_score_from_graph(scale * f + shift, S)
    np.testing.assert_allclose(a, b, rtol=1e-7)


def test_sparsity_score_of_exactly_rebuilt_samples_ties_at_zero():
    """More samples than genes: eq. (8) rebuilds every sample exactly (t = 0), so every gene
    scores 0. The residuals were float noise (1e-31) that ranked the genes, and a gene scaled
    by 7.3 (Sparsity Score is scale-invariant) moved in that order."""
    rng = np.random.default_rng(1)
    X = rng.poisson(4, size=(24, 10)).astype(float)
    a = run_ranker("sparsity-score", _expr(X))
    Y = X.copy()
    Y[:, 2] *= 7.3
    b = run_ranker("sparsity-score", _expr(Y))
    assert (a.scores == 0).all() and (b.scores == 0).all()
    assert (a.ranks == 5.5).all()


# --- the l1 graph LPs ---------------------------------------------------------------------------


def _lp8_reference(D, x):
    """Eq. (8) as the plain primal LP over [s+, s-, t+, t-]: (s, optimal objective)."""
    m, k = D.shape
    A = np.block(
        [[D, -D, np.eye(m), -np.eye(m)], [np.ones((1, k)), -np.ones((1, k)), np.zeros((1, 2 * m))]]
    )
    res = linprog(
        np.ones(2 * k + 2 * m), A_eq=A, b_eq=np.r_[x, 1.0], bounds=(0, None), method="highs"
    )
    return res.x[:k] - res.x[k : 2 * k], res.fun


@pytest.mark.parametrize("m", [40, 2600])  # 2600 > the full-LP threshold: working-set route
def test_lp8_row_is_optimal(rng, m):
    n = 10
    X = rng.normal(size=(n, m)) + rng.normal(size=(n, 1))
    D, x = X[1:].T, X[0]
    row = K.l1_graph_row(X, 0)
    s = row[1:]
    assert row[0] == 0
    assert s.sum() == pytest.approx(1.0, abs=1e-9)
    obj = np.abs(s).sum() + np.abs(x - D @ s).sum()
    assert obj == pytest.approx(_lp8_reference(D, x)[1], rel=1e-9)


def test_lp7_meets_the_tolerance_and_is_sparser_than_needed():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 4))
    row = K.l1_graph_row(X, 0, formulation=7, epsilon=1e-3)
    assert row.sum() == pytest.approx(1.0, abs=1e-9)
    # the inscribed box is reached at a corner here; HiGHS' feasibility tolerance is 1e-7
    assert np.linalg.norm(X[0] - row @ X) <= 1e-3 + 1e-7
    # m + 1 = 5 equality-like constraints: a vertex solution uses at most 5 atoms
    assert np.count_nonzero(np.abs(row) > 1e-9) <= 5


def test_lp7_infeasible_is_a_parameter_error(rng):
    X = rng.normal(size=(6, 40))
    with pytest.raises(ParameterError, match="formulation=8") as exc:
        run_ranker("sparsity-score", _expr(X), params={"formulation": 7})
    assert "\n" not in str(exc.value)


# --- lasso (SPS) ------------------------------------------------------------------------------


def test_lasso_gram_matches_sklearn_lasso_with_alpha_conversion(rng):
    X = rng.normal(size=(12, 300))
    D, y = X[1:].T, X[0]
    lam = 0.01 * np.abs(2 * D.T @ y).max()
    alpha = lam / (2 * D.shape[0])  # sklearn: (1/2N)||.||^2 + alpha ||.||_1
    ref = Lasso(alpha=alpha, fit_intercept=False, tol=1e-14, max_iter=100000).fit(D, y).coef_
    got = lasso_gram(D.T @ D, D.T @ y, 0.01)
    np.testing.assert_allclose(got, ref, atol=1e-8)
    B = lasso_reconstruction(X)
    np.testing.assert_allclose(B[0, 1:], got, atol=1e-12)
    assert np.all(np.diag(B) == 0)


def test_lasso_active_set_certified_or_none(rng):
    X = rng.normal(size=(15, 200))
    G, q = X[1:] @ X[1:].T, X[1:] @ X[0]
    ref = lasso_gram(G, q, 0.05)
    lam = 0.05 * 2 * np.abs(q).max()
    empty = np.array([], dtype=int)
    got = lasso_active_set(G, q, lam, empty, np.array([]))
    np.testing.assert_allclose(got, ref, atol=1e-9)
    # a wrong guess either converges to the same solution or gives up (never a wrong answer)
    wrong = lasso_active_set(G, q, lam, np.arange(14), np.ones(14), max_iter=2)
    assert wrong is None or np.allclose(wrong, ref, atol=1e-9)


def test_sps_equals_naive_per_sample_lasso_residuals(rng):
    X = rng.normal(size=(8, 50)) + 1.0
    want = np.zeros(50)
    for i in range(8):
        D, y = np.delete(X, i, axis=0).T, X[i]
        alpha = 0.05 * np.abs(D.T @ y).max() / len(y)
        b = Lasso(alpha=alpha, fit_intercept=False, tol=1e-14, max_iter=100000).fit(D, y).coef_
        want += (y - D @ b) ** 2  # Gamma(:, i)^2, eq. (5)
    got, info = sparsity_preserving_score(X, lambda_ratio=0.05)
    np.testing.assert_allclose(got, want, rtol=1e-7)
    assert 0 < info["lasso_nonzeros_per_sample"] <= 7


# --- planted signal -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["sparsity-score", "sps"])
def test_planted_cluster_genes_rank_first(name):
    X = _planted(np.random.default_rng(7))
    ranking = run_ranker(name, _expr(X))
    top = set(np.argsort(ranking.ranks)[:6])
    assert top == set(range(6)), sorted(ranking.ranks[:6])


def test_fssi_direction_worst_imputed_first():
    rng = np.random.default_rng(11)
    X = _planted(rng, n=18, m=30)
    X[:, 10] = X[:, 0]  # an exact copy: perfectly imputable from gene 0
    X[:, 20] = 8.0 * rng.normal(size=18)  # large independent noise: worst imputed
    r = run_ranker("fssi", _expr(X))
    assert r.higher_is_better
    assert r.ranks[20] == 1
    # the copied gene and its twin are far better imputed than any noise gene
    assert min(r.ranks[0], r.ranks[10]) > 24


# --- FSSI fast route == naive route -------------------------------------------------------------


def _fssi_naive(X, *, include_self, ratio=0.01, features=None):
    """Imputation errors of one scikit-learn lasso per (gene, sample); columns of ``features``
    only (default all; the others stay 0)."""
    n, m = X.shape
    E = np.zeros((n, m))
    for z in range(m) if features is None else features:
        rest = np.delete(np.arange(m), z)
        for p in range(n):
            atoms = np.arange(n) if include_self else np.delete(np.arange(n), p)
            D, y = X[np.ix_(atoms, rest)].T, X[p, rest]
            alpha = ratio * np.abs(D.T @ y).max() / len(y)
            b = Lasso(alpha=alpha, fit_intercept=False, tol=1e-14, max_iter=200000).fit(D, y).coef_
            E[p, z] = X[atoms, z] @ b - X[p, z]
    return E


@pytest.mark.parametrize(
    "include_self,shape", [(False, (10, 30)), (True, (10, 30)), (False, (12, 6))]
)
def test_fssi_fast_route_equals_naive_lasso(include_self, shape):
    X = np.random.default_rng(5).normal(size=shape) + 2.0
    E, n_explicit = fssi_errors(X, include_self=include_self)
    ref = _fssi_naive(X, include_self=include_self)
    np.testing.assert_allclose(E, ref, atol=1e-8 * np.abs(ref).max())
    if shape[1] > shape[0]:  # the certified leverage update must carry most problems
        assert n_explicit < 0.6 * E.size


# --- contract: gene order, constant genes, n_jobs, errors ----------------------------------------


@pytest.mark.parametrize("name", ["sparsity-score", "sps", "fssi"])
def test_invariant_to_gene_order_and_constant_genes_last(name):
    rng = np.random.default_rng(2)
    X = _planted(rng, n=12, m=20)
    X[:, 3] = 4.0  # constant gene
    genes = [f"g{j}" for j in range(20)]
    a = run_ranker(name, _expr(X, genes))
    perm = rng.permutation(20)
    b = run_ranker(name, _expr(X[:, perm], [genes[j] for j in perm]))
    assert np.isnan(a.scores[3]) and a.ranks[3] == 20
    np.testing.assert_array_equal(a.scores[perm], b.scores)


def test_n_jobs_does_not_change_results():
    from joblib import parallel_config

    X = _planted(np.random.default_rng(4), n=9, m=12, k=3)
    a, _ = sparsity_score(X, n_jobs=1)
    c, _ = fssi(X, n_jobs=1)
    # threads keep the test fast on a shared machine; the default backend (processes) runs the
    # same independent per-sample problems and gathers them in the same order
    with parallel_config(backend="threading"):
        b, _ = sparsity_score(X, n_jobs=2)
        d, _ = fssi(X, n_jobs=2)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(c, d)


@pytest.mark.parametrize("name", ["sparsity-score", "sps", "fssi"])
def test_missing_values_are_an_input_error(name):
    X = np.random.default_rng(0).normal(size=(6, 5))
    X[2, 1] = np.nan
    with pytest.raises(InputError, match="missing") as exc:
        run_ranker(name, _expr(X))
    assert "\n" not in str(exc.value)


def test_bad_parameters_are_parameter_errors():
    X = np.random.default_rng(0).normal(size=(6, 5))
    with pytest.raises(ParameterError, match="formulation"):
        run_ranker("sparsity-score", _expr(X), params={"formulation": 5})
    with pytest.raises(ParameterError, match="lambda_ratio"):
        run_ranker("sps", _expr(X), params={"lambda_ratio": 2.0})
    with pytest.raises(ParameterError, match="n_jobs"):
        run_ranker("fssi", _expr(X), params={"n_jobs": 0})


def test_tiny_input_two_samples():
    X = np.array([[1.0, 2.0, 3.0], [2.0, 2.0, 5.0]])
    for name in ("sparsity-score", "sps", "fssi"):
        r = run_ranker(name, _expr(X))
        assert np.isnan(r.scores[1]) and r.ranks[1] == 3
        assert np.all(np.isfinite(r.scores[[0, 2]]))


# --- Wine: the papers' numbers --------------------------------------------------------------------


@pytest.mark.slow  # 178 LPs twice
def test_wine_sparsity_score_equals_the_plain_lps():
    """Sparsity Score on Wine (178 x 13) equals eq. (8) solved as 178 plain primal LPs
    (:func:`_lp8_reference`'s problem, scipy HiGHS), and eq. (10) computed from that graph.

    SS Table 2 (SVM-RBF with the top 12 of 13 features: 97.1 %) cannot test the ranking: every
    12-feature subset of Wine scores 0.972-0.994. Nor can accuracy with fewer features: with 13
    features and 177 other samples the l1 graph rebuilds 8 of the raw features exactly (score 0
    to rounding, ~1e-28: their order is rounding noise) and leaves the other 5 partly to the
    slack t of (8)."""
    from sklearn.datasets import load_wine

    X, _ = load_wine(return_X_y=True)
    n = X.shape[0]
    S = np.zeros((n, n))
    for i in range(n):
        S[i, np.arange(n) != i] = _lp8_reference(np.delete(X, i, axis=0).T, X[i])[0]
    R = X - S @ X
    want = (R * R).sum(axis=0) / ((X - X.mean(axis=0)) ** 2).sum(axis=0)
    scores, _ = sparsity_score(X)
    np.testing.assert_allclose(scores, want, rtol=1e-9, atol=1e-12)
    # ash, total phenols, nonflavanoid phenols, hue, OD280/OD315: partly left to the slack
    assert np.flatnonzero(scores > 1e-12).tolist() == [2, 5, 7, 10, 11]


@pytest.mark.slow  # 4 x 178 lasso problems of the naive route
def test_wine_fssi_ranks_against_table_II():
    """Wine FSSI ranks near Table II's (Spearman 0.80; Proline first) -- but so do Wine's raw
    variances (0.83): on raw Wine FSSI's order is nearly the features' scale. So scores are
    also checked against the naive route (one scikit-learn lasso per gene and sample) for
    Proline, Nonflavanoid phenols (first and last), Malic acid and OD280/OD315 (the two
    features FSSI orders unlike their scale)."""
    from sklearn.datasets import load_wine

    X, _ = load_wine(return_X_y=True)
    scores, _ = fssi(X)
    ranks = np.empty(13, dtype=int)
    ranks[np.argsort(-scores, kind="stable")] = np.arange(1, 14)
    rho = spearmanr(ranks, FSSI_TABLE_II)[0]
    print(f"Wine FSSI ranks {ranks.tolist()} vs Table II: Spearman {rho:.2f}")
    assert ranks[12] == 1  # Proline first, as in Table II
    assert rho > 0.6
    some = [12, 7, 1, 11]
    naive = np.sqrt((_fssi_naive(X, include_self=False, features=some) ** 2).sum(axis=0))
    np.testing.assert_allclose(scores[some], naive[some], rtol=1e-8)
