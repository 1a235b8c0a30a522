"""MRSF, MCSF and the L2,1 solvers (kofs.rankers.multivariate, kofs.rankers._l21)."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from kofs.errors import ParameterError
from kofs.rankers import run_ranker
from kofs.rankers._l21 import agd_l21, entry_steps, group_soft_threshold, l21_norm, mrsf_path
from kofs.rankers.multivariate import (
    entry_order_scores,
    fisher_quadratic_scores,
    lslda_targets,
    lssvm_targets,
    mcsf_select,
    quadratic_scores,
    spectral_targets,
    unit_columns,
)
from kofs.types import Expression, RankerInputs, SampleCategories, SampleSimilarity


def _expr(X):
    n, m = X.shape
    return Expression(X, [f"g{j}" for j in range(m)], [f"s{i}" for i in range(n)])


def _cats(y):
    return SampleCategories([str(v) for v in y], [f"s{i}" for i in range(len(y))])


def _sim(S):
    return SampleSimilarity(S, [f"s{i}" for i in range(S.shape[0])])


def _kkt(F, Y, W, lam, rtol=1e-4):
    """KKT of 1/2||Y - FW||^2 + lam||W||_{2,1} (3.35 with the corrected sign)."""
    G = F.T @ (Y - F @ W)
    norms = np.linalg.norm(W, axis=1)
    act = norms > 0
    np.testing.assert_allclose(G[act], lam * W[act] / norms[act, None], rtol=rtol, atol=rtol * lam)
    assert np.all(np.linalg.norm(G[~act], axis=1) <= lam * (1 + rtol))


# ----------------------------------------------------------------------------- AGD


def test_group_soft_threshold():
    V = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])
    np.testing.assert_allclose(group_soft_threshold(V, 1.0), [[2.4, 3.2], [0, 0], [0, 0]])
    assert l21_norm(V) == pytest.approx(5.5)


def test_agd_returns_zero_above_lambda_max(rng):
    X = unit_columns(rng.normal(size=(30, 12)))
    Y = rng.normal(size=(30, 3))
    lam_max = np.linalg.norm(X.T @ Y, axis=1).max()
    W, _ = agd_l21(X, Y, lam_max)
    assert not W.any()
    W2, _ = agd_l21(X, Y, 0.9 * lam_max)
    assert W2.any()


def test_agd_orthonormal_design_has_the_prox_closed_form(rng):
    Q, _ = np.linalg.qr(rng.normal(size=(40, 8)))
    Y = rng.normal(size=(40, 4))
    lam = 0.8
    W, _ = agd_l21(Q, Y, lam, tol=1e-12)
    np.testing.assert_allclose(W, group_soft_threshold(Q.T @ Y, lam), atol=1e-9)


def test_agd_solution_satisfies_kkt(rng):
    X = unit_columns(rng.normal(size=(25, 15)))
    X[:, 3] = unit_columns((X[:, 2] + 0.05 * rng.normal(size=25))[:, None])[:, 0]  # redundancy
    Y = rng.normal(size=(25, 3))
    lam = 0.3 * np.linalg.norm(X.T @ Y, axis=1).max()
    W, info = agd_l21(X, Y, lam, tol=1e-12, max_iter=20000)
    assert 0 < (np.linalg.norm(W, axis=1) > 0).sum() < 15
    _kkt(X, Y, W, lam, rtol=1e-6)


# ----------------------------------------------------------------------------- entry steps


@given(st.integers(0, 10_000))
def test_entry_steps_is_the_smallest_root_in_unit_interval(seed):
    r = np.random.default_rng(seed)
    C = int(r.integers(1, 4))
    c = float(r.uniform(0.5, 2.0))
    a = r.normal(size=(5, C))
    a *= (r.uniform(0.0, 1.0, size=5) * c / np.linalg.norm(a, axis=1))[:, None]  # ||a|| <= c
    b = r.normal(size=(5, C)) * r.uniform(0.1, 3.0)
    got = entry_steps(a, b, c)
    grid = np.linspace(0, 1, 20001)
    for j in range(5):
        g = np.linalg.norm(a[j][None, :] - grid[:, None] * b[j][None, :], axis=1) - (1 - grid) * c
        first = grid[np.argmax(g >= -1e-12)]  # g(0) <= 0, g(1) >= 0
        assert abs(got[j] - first) <= 1e-4
        assert np.linalg.norm(a[j] - got[j] * b[j]) == pytest.approx((1 - got[j]) * c, abs=1e-8)


# ----------------------------------------------------------------------------- MRSF path


def test_mrsf_l1_selects_argmax_correlation(rng):
    F = unit_columns(rng.normal(size=(30, 40)))
    Y = rng.normal(size=(30, 4))
    res = mrsf_path(F, Y, 1)
    assert res.order == [int(np.argmax(np.linalg.norm(F.T @ Y, axis=1)))]


def test_mrsf_path_solution_is_optimal_for_its_lambda(rng):
    n, m = 40, 120
    F = unit_columns(rng.normal(size=(n, m)))
    coef = rng.choice([-1.0, 1.0], size=(6, 3)) * rng.uniform(1.0, 2.0, size=(6, 3))
    Y = F[:, :6] @ coef + 0.1 * rng.normal(size=(n, 3))
    res = mrsf_path(F, Y, 10, tol=1e-10, max_iter=20000)
    assert len(res.order) == 10 and len(set(res.order)) == 10
    W = np.zeros((m, 3))
    W[res.order] = res.W
    _kkt(F, Y, W, res.lam, rtol=1e-4)
    np.testing.assert_allclose(res.residual, Y - F @ W, atol=1e-12)
    assert set(range(6)) <= set(res.order)


def test_mrsf_avoids_a_redundant_copy(rng):
    """Theorem 3.2.2: a near-copy of a selected gene is passed over for an independent gene that
    a univariate score ranks lower."""
    n = 60
    y = np.repeat([0, 1, 2], 20)
    X = rng.normal(size=(n, 30))
    X[:, 0] += 2.5 * (y == 1)
    X[:, 1] = X[:, 0] + 0.05 * rng.normal(size=n)  # redundant copy of gene 0
    X[:, 2] += 2.0 * (y == 2)
    r = run_ranker("mrsf", _expr(X), RankerInputs(categories=_cats(y)), params={"l": 2})
    assert set(r.info["order"]) == {0, 2} or set(r.info["order"]) == {1, 2}
    f = fisher_quadratic_scores(unit_columns(X), y)
    assert f[1] > f[2] and f[0] > f[2]  # univariately the copy beats gene 2


def test_mrsf_adapter_order_scores_and_lslda_identity(rng):
    n = 45
    y = np.repeat([0, 1, 2], 15)
    X = rng.normal(size=(n, 50))
    for j, cls in ((4, 0), (9, 1), (17, 2)):
        X[:, j] += 3.0 * (y == cls)
    X[:, 30] = 2.0  # constant
    r = run_ranker("mrsf", _expr(X), RankerInputs(categories=_cats(y)), params={"l": 5})
    order = r.info["order"]
    assert len(order) == 5 and set(order[:3]) == {4, 9, 17}
    np.testing.assert_array_equal(r.order()[:5], order)
    assert np.isnan(r.scores[30]) and 30 not in order
    Y = lslda_targets(y)
    counts = np.bincount(y)
    Sfis = np.where(y[:, None] == y[None, :], 1.0 / counts[y][:, None], 0.0)
    np.testing.assert_allclose(Y @ Y.T, n * Sfis - 1.0, atol=1e-12)  # eq. 4.24
    Ysvm = lssvm_targets(y)
    assert set(np.unique(Ysvm)) == {-1.0, 1.0} and (Ysvm == 1).sum() == n
    r2 = run_ranker(
        "mrsf", _expr(X), RankerInputs(categories=_cats(y)), params={"l": 3, "target": "svm"}
    )
    assert set(r2.info["order"]) == {4, 9, 17}


def test_mrsf_unsupervised_targets(rng):
    n = 36
    centers = np.repeat(np.eye(3) * 6.0, 12, axis=0)
    X = np.hstack([centers + rng.normal(size=(n, 3)), rng.normal(size=(n, 20))])
    r = run_ranker("mrsf", _expr(X), RankerInputs(), params={"l": 3, "n_targets": 2})
    assert r.info["target"] == "rbf" and r.info["n_targets"] == 2
    assert set(r.info["order"]) == {0, 1, 2}


def test_spectral_targets_dense_equals_sparse(rng):
    n = 30
    B = rng.uniform(size=(n, n)) * (rng.uniform(size=(n, n)) < 0.3)
    S = B + B.T + np.eye(n)
    Yd, vd = spectral_targets(S, 4)
    Ys, vs = spectral_targets(sp.csr_matrix(S), 4, seed=1)
    np.testing.assert_allclose(vd, vs, rtol=1e-8)
    np.testing.assert_allclose(Yd @ Yd.T, Ys @ Ys.T, atol=1e-8)
    d = S.sum(axis=1)
    Sn = S / np.sqrt(np.outer(d, d))
    xi = np.sqrt(d) / np.linalg.norm(np.sqrt(d))
    np.testing.assert_allclose(Yd.T @ xi, 0.0, atol=1e-10)  # trivial eigenvector deflated
    np.testing.assert_allclose(Sn @ Yd, Yd * vd, atol=1e-10)  # eigenpairs of D^-1/2 S D^-1/2


# ----------------------------------------------------------------------------- MCSF


def test_mcsf_recovers_the_generating_subset(rng):
    n, m = 40, 12
    Z = rng.normal(size=(n, m))
    Z -= Z.mean(axis=0)
    Q, _ = np.linalg.qr(Z)  # orthonormal, centred columns
    A = [2, 5, 9]
    S = Q[:, A] @ Q[:, A].T
    r = run_ranker("mcsf", _expr(Q), RankerInputs(similarity=_sim(S)), params={"l": 6})
    assert set(r.info["order"]) == set(A) and r.info["stopped_early"]
    assert set(r.order()[:3]) == set(A)


def test_mcsf_efficient_update_matches_the_residual_matrix(rng):
    n, m, l = 20, 15, 6  # noqa: E741
    F = unit_columns(rng.normal(size=(n, m)))
    B = rng.normal(size=(n, n))
    S = 5.0 * B @ B.T / n
    order, current, stopped = mcsf_select(F, quadratic_scores(F, S), l)
    R = S.copy()
    naive = []
    for _ in range(l):
        sc = np.array([F[:, j] @ R @ F[:, j] if j not in naive else -np.inf for j in range(m)])
        i = int(np.argmax(sc))
        fro_new = np.linalg.norm(R - np.outer(F[:, i], F[:, i])) ** 2
        if fro_new > np.linalg.norm(R) ** 2:
            break
        naive.append(i)
        R -= np.outer(F[:, i], F[:, i])
    assert order == naive and len(order) == l and not stopped
    rest = np.setdiff1d(np.arange(m), order)
    np.testing.assert_allclose(
        current[rest], np.einsum("ij,ij->j", F[:, rest], R @ F[:, rest]), rtol=1e-10
    )


def test_mcsf_labels_early_stop_warns_and_fills(rng, caplog):
    y = np.repeat([0, 1], 15)
    X = rng.normal(size=(30, 25))
    X[:, 6] += 4.0 * y
    with caplog.at_level(logging.WARNING):
        r = run_ranker("mcsf", _expr(X), RankerInputs(categories=_cats(y)), params={"l": 10})
    assert r.info["order"][0] == 6 and r.info["stopped_early"] and r.info["n_selected"] < 10
    assert "stopped after" in caplog.text
    assert np.isfinite(r.scores).all() and r.order()[0] == 6
    full = run_ranker(
        "mcsf", _expr(X), RankerInputs(categories=_cats(y)), params={"l": 10, "early_stop": False}
    )
    assert len(full.info["order"]) == 10 and not full.info["stopped_early"]
    assert full.info["order"][: r.info["n_selected"]] == r.info["order"]
    np.testing.assert_array_equal(full.order()[:10], full.info["order"])
    F = unit_columns(X)
    Sfis = np.where(y[:, None] == y[None, :], 1.0 / 15, 0.0)
    np.testing.assert_allclose(fisher_quadratic_scores(F, y), quadratic_scores(F, Sfis), rtol=1e-12)


@pytest.mark.parametrize("name", ["mrsf", "mcsf"])
def test_all_constant_genes_and_tiny_inputs(rng, name):
    r = run_ranker(name, _expr(np.ones((6, 3))), RankerInputs(categories=_cats([0, 1] * 3)))
    assert np.isnan(r.scores).all() and r.info["order"] == []
    X = rng.normal(size=(3, 4))
    r = run_ranker(name, _expr(X), RankerInputs(categories=_cats([0, 1, 1])), params={"l": 2})
    assert np.isfinite(r.scores).all() and 1 <= len(r.info["order"]) <= 2


def test_mrsf_genes_left_once_the_targets_are_explained_tie_at_zero():
    """Three samples: two genes explain the LDA targets and the other genes' ||f^T R|| is
    float noise (3e-16), which ordered them; they now tie at 0, below the selected genes."""
    X = np.array([[4.0, 2, 3, 2, 5], [2, 3, 2, 6, 13], [4, 2, 7, 3, 7]])
    r = run_ranker("mrsf", _expr(X), RankerInputs(categories=_cats(["a", "b", "b"])))
    rest = np.setdiff1d(np.arange(5), r.info["order"])
    assert rest.size and (r.scores[rest] == 0).all()
    assert (r.scores[r.info["order"]] >= 1).all()


def test_entry_order_scores():
    s = entry_order_scores([3, 0], np.array([-np.inf, 0.2, 0.7, -np.inf, np.nan]))
    assert s[3] > s[0] > 0.7 and np.isnan(s[4])
    assert list(np.argsort(-np.nan_to_num(s, nan=-1))[:4]) == [3, 0, 2, 1]


# ----------------------------------------------------------------------------- shared


@pytest.mark.parametrize("name", ["mrsf", "mcsf"])
@pytest.mark.parametrize("supervised", [True, False])
def test_gene_order_invariance(rng, name, supervised):
    y = np.repeat([0, 1, 2], 10)
    X = rng.normal(size=(30, 25))
    X[:, 3] += 2.0 * (y == 1)
    X[:, 8] += 2.0 * (y == 2)
    perm = rng.permutation(25)
    inp = RankerInputs(categories=_cats(y)) if supervised else RankerInputs()
    a = run_ranker(name, _expr(X), inp, params={"l": 5})
    b = run_ranker(name, _expr(X[:, perm]), inp, params={"l": 5})
    assert [int(perm[j]) for j in b.info["order"]] == a.info["order"]
    np.testing.assert_allclose(b.scores, a.scores[perm], rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize(
    "name, params, inputs, match",
    [
        ("mrsf", {"l": 0}, "none", r"'l' must be an int in \[1, inf\)"),
        ("mrsf", {"target": "lda"}, "none", "needs sample labels"),
        ("mrsf", {"target": "similarity"}, "labels", "needs a sample similarity"),
        ("mrsf", {"target": "pca"}, "none", "must be one of"),
        ("mrsf", {"n_targets": "ten"}, "none", "must be an int"),
        ("mcsf", {"l": -3}, "labels", r"'l' must be an int in \[1, inf\)"),
        ("mcsf", {"target": "labels"}, "none", "needs sample labels"),
        ("mcsf", {}, "one-class", "at least 2 classes"),
    ],
)
def test_user_errors(rng, name, params, inputs, match):
    X = rng.normal(size=(12, 6))
    inp = {
        "none": RankerInputs(),
        "labels": RankerInputs(categories=_cats([0, 1] * 6)),
        "one-class": RankerInputs(categories=_cats([0] * 12)),
    }[inputs]
    with pytest.raises(ParameterError, match=match) as exc:
        run_ranker(name, _expr(X), inp, params=params)
    assert "\n" not in str(exc.value)


def test_real_all_lineage_mrsf_selects_20_and_cd3d_leads(shared_data):
    """ALL (128 x 8,562, B vs T lineage): CD3D, a T-cell receptor gene, leads every
    supervised list; MRSF selects 20 distinct genes (50 in bench_multivariate)."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    from _util import all_expression, all_labels

    expr = all_expression()
    inp = RankerInputs(categories=all_labels("lineage"))
    r = run_ranker("mrsf", expr, inp, params={"l": 20})
    assert len(set(r.info["order"])) == 20 and r.info["stopped"] == ""
    assert r.top(1) == ["CD3D"]
    for name in ("relieff", "trace-ratio", "hsic"):
        assert run_ranker(name, expr, inp).top(1) == ["CD3D"]
