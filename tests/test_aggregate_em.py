"""KOFS probabilistic rank aggregation (eqs 6.16-6.19, ALGORITHMS.md §7.4 and §12)."""

from __future__ import annotations

import logging
import math

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from scipy.stats import rankdata

from kofs.aggregate import AGGREGATORS, aggregate
from kofs.aggregate.em import (
    e_step,
    em_aggregate,
    fit_mixture_weights,
    log_likelihood,
    m_step,
    rank_probabilities,
)
from kofs.aggregate.partial import complete_ranks
from kofs.errors import ParameterError
from kofs.types import Ranking


def ranks_of(scores: np.ndarray) -> np.ndarray:
    """Average ranks per column, 1 = highest score."""
    return np.column_stack([rankdata(-c) for c in np.atleast_2d(scores.T)])


def naive_probabilities(col: np.ndarray) -> np.ndarray:
    """P of one rank column by brute force: every tie block averages exp(1/r)/B over its ranks."""
    M = len(col)
    B = sum(math.exp(1.0 / j) for j in range(1, M + 1))
    out = np.empty(M)
    for v in np.unique(col):
        members = np.flatnonzero(col == v)
        a = int((col < v).sum()) + 1
        b = a + len(members) - 1
        out[members] = sum(math.exp(1.0 / r) for r in range(a, b + 1)) / (b - a + 1) / B
    return out


def perm_ranks(rng: np.random.Generator, M: int) -> np.ndarray:
    return rng.permutation(M).astype(float) + 1.0


# --- eq. 6.16 and the average-probability tie rule ------------------------------------------


def test_probabilities_without_ties_are_eq_6_16():
    M = 7
    R = np.array(
        [[1.0, 7.0], [2.0, 6.0], [3.0, 5.0], [4.0, 4.0], [5.0, 3.0], [6.0, 2.0], [7.0, 1.0]]
    )
    B = sum(math.exp(1.0 / j) for j in range(1, M + 1))
    P = rank_probabilities(R)
    np.testing.assert_allclose(
        P[:, 0], [math.exp(1.0 / r) / B for r in range(1, M + 1)], rtol=1e-14
    )
    np.testing.assert_allclose(P[:, 1], P[::-1, 0], rtol=1e-14)
    assert P[0, 0] / P[-1, 0] == pytest.approx(math.exp(1.0 - 1.0 / 7), rel=1e-13)


def test_tie_block_gets_average_probability():
    # ranks 2..4 tied (average 3) and 5..6 tied (average 5.5)
    col = np.array([3.0, 1.0, 3.0, 5.5, 3.0, 5.5])
    B = sum(math.exp(1.0 / j) for j in range(1, 7))
    P = rank_probabilities(col[:, None])[:, 0]
    block = (math.exp(1 / 2) + math.exp(1 / 3) + math.exp(1 / 4)) / 3 / B
    bottom = (math.exp(1 / 5) + math.exp(1 / 6)) / 2 / B
    np.testing.assert_allclose(P, [block, math.e / B, block, bottom, block, bottom], rtol=1e-14)
    assert P.sum() == pytest.approx(1.0, abs=1e-15)


@given(st.lists(st.integers(0, 6), min_size=1, max_size=40))
def test_probabilities_match_naive_and_sum_to_one(values):
    col = rankdata(-np.array(values, dtype=float))
    P = rank_probabilities(col[:, None])[:, 0]
    np.testing.assert_allclose(P, naive_probabilities(col), rtol=1e-12)
    assert abs(P.sum() - 1.0) < 1e-14


def test_probabilities_of_a_large_ranking_sum_to_one(rng):
    M = 50_000
    col = rankdata(-rng.integers(0, 3000, M).astype(float))  # many tie blocks
    P = rank_probabilities(col[:, None])[:, 0]
    assert abs(P.sum() - 1.0) < 1e-12
    assert (P > 0).all()


def test_missing_genes_form_a_bottom_block_through_the_runner():
    genes = [f"g{i}" for i in range(8)]
    full = Ranking("a", genes, np.arange(8.0), higher_is_better=False)
    partial = Ranking("b", genes[:5], np.arange(5.0), higher_is_better=False)  # g5..g7 missing
    out = aggregate([full, partial], "em")
    assert np.isnan(out.list_ranks[5:, 1]).all()  # not in list b
    completed = complete_ranks(out.list_ranks, universe=8)
    np.testing.assert_array_equal(completed[5:, 1], [7.0, 7.0, 7.0])
    P = rank_probabilities(completed)
    np.testing.assert_allclose(P.sum(axis=0), 1.0, atol=1e-15)
    assert P[5, 1] == P[6, 1] == P[7, 1]
    assert out.scores.sum() == pytest.approx(1.0, abs=1e-14)


# --- E and M steps (6.17, 6.18) --------------------------------------------------------------


def test_e_step_uses_the_fixed_denominator():
    P = np.array([[0.5, 0.25], [0.1, 0.3]])
    gamma = e_step(P, np.array([0.5, 0.5]))
    np.testing.assert_allclose(gamma, [[2 / 3, 1 / 3], [0.25, 0.75]], rtol=1e-14)
    gamma = e_step(P, np.array([0.2, 0.8]))
    np.testing.assert_allclose(gamma[0], [0.1 / 0.3, 0.2 / 0.3], rtol=1e-14)
    np.testing.assert_allclose(gamma.sum(axis=1), 1.0)


def test_one_em_iteration_moves_the_weights():
    # The printed eq. 6.17 (denominator sum_j pi_j P(r_{l,i})) gives gamma_il = pi_l, so pi
    # would stay at (1/2, 1/2); the fixed E step gives ((2/3 + 1/4)/2, (1/3 + 3/4)/2).
    P = np.array([[0.5, 0.25], [0.1, 0.3]])
    expected = [(2 / 3 + 0.25) / 2, (1 / 3 + 0.75) / 2]
    np.testing.assert_allclose(m_step(e_step(P, np.array([0.5, 0.5]))), expected, rtol=1e-14)
    fit = fit_mixture_weights(P, solver="em", max_iter=1)
    np.testing.assert_allclose(fit.weights, expected, rtol=1e-14)
    assert fit.iterations == 1 and not fit.converged


def test_vectorised_em_equals_literal_e_and_m_steps(rng):
    P = rank_probabilities(np.column_stack([perm_ranks(rng, 60) for _ in range(4)]))
    pi = np.full(4, 0.25)
    for _ in range(25):
        pi = m_step(e_step(P, pi))
    fit = fit_mixture_weights(P, solver="em", max_iter=25, tol=0.0)
    np.testing.assert_allclose(fit.weights, pi, rtol=1e-12)
    assert fit.log_likelihood[-1] == pytest.approx(log_likelihood(P, pi), rel=1e-13)


@pytest.mark.parametrize("solver", ["newton", "em"])
def test_log_likelihood_never_decreases(rng, solver):
    base = rng.normal(size=400)
    R = ranks_of(np.column_stack([base + rng.normal(scale=s, size=400) for s in (0.5, 1, 2, 4)]))
    for relevant in (None, R[:, 0] <= 30):
        P = rank_probabilities(R)
        P = P if relevant is None else P[relevant]
        trace = fit_mixture_weights(P, solver=solver, max_iter=300).log_likelihood
        assert len(trace) >= 2
        assert np.all(np.diff(trace) >= -1e-12 * abs(trace[0]))


# --- properties of the fitted weights (ALGORITHMS.md §12) ------------------------------------


@pytest.mark.parametrize("solver", ["newton", "em"])
def test_symmetric_lists_give_uniform_weights(solver):
    M = 300
    r = np.arange(1.0, M + 1)
    # a list and its reverse: the log-likelihood is symmetric in (pi_1, pi_2)
    _, w, _ = em_aggregate(np.column_stack([r, r[::-1]]), solver=solver)
    np.testing.assert_allclose(w, [0.5, 0.5], atol=1e-9)
    # three cyclic shifts of one ranking: symmetric under cyclic permutations of pi
    R = np.column_stack([np.roll(r, k * M // 3) for k in range(3)])
    _, w, _ = em_aggregate(R, solver=solver)
    np.testing.assert_allclose(w, [1 / 3] * 3, atol=1e-9)
    # identical lists
    _, w, _ = em_aggregate(np.column_stack([r, r, r, r]), solver=solver)
    np.testing.assert_allclose(w, [0.25] * 4, atol=1e-15)


def test_supervised_weights_favour_the_list_that_ranks_G_first(rng):
    M = 500
    R = np.column_stack([perm_ranks(rng, M) for _ in range(3)])
    relevant = R[:, 1] <= 25  # G = the top 25 genes of list 1
    scores, w, info = em_aggregate(R, relevant=relevant)
    assert info["n_G"] == 25 and info["converged"]
    assert w[1] > 0.9 and w[1] == w.max()
    _, w_uns, _ = em_aggregate(R)
    assert w_uns[1] < 0.6  # the supervision, not the lists alone, makes list 1 dominate


def test_unsupervised_up_weights_a_reversed_list(rng):
    M = 2000
    r = np.arange(1.0, M + 1)
    # three identical lists and the reversed one: 1/6 each vs 1/2 (§7.4 simulation)
    _, w, info = em_aggregate(np.column_stack([r, r, r, r[::-1]]))
    np.testing.assert_allclose(w, [1 / 6, 1 / 6, 1 / 6, 1 / 2], atol=1e-9)
    assert info["converged"]
    # three near-identical lists: the reversed list still gets the largest weight
    near = ranks_of(np.column_stack([-r + rng.normal(scale=5, size=M) for _ in range(3)]))
    _, w, _ = em_aggregate(np.column_stack([near, r[::-1]]))
    assert w[3] == w.max() and w[3] > 0.35


def test_newton_reaches_the_em_fixed_point(rng):
    base = rng.normal(size=120)
    R = ranks_of(np.column_stack([base + rng.normal(scale=s, size=120) for s in (0.3, 1, 3)]))
    relevant = base > np.quantile(base, 0.8)
    _, w_newton, info = em_aggregate(R, relevant=relevant)
    _, w_em, info_em = em_aggregate(R, relevant=relevant, solver="em", tol=1e-14, max_iter=200_000)
    assert info["iterations"] < 20 and info_em["iterations"] > info["iterations"]
    np.testing.assert_allclose(w_newton, w_em, atol=2e-5)
    assert info["log_likelihood"] >= info_em["log_likelihood"] - 1e-9


def test_newton_solution_satisfies_the_kkt_conditions(rng):
    base = rng.normal(size=3000)
    cols = [base + rng.normal(scale=s, size=3000) for s in (0.2, 0.5, 1, 2, 4, 8)]
    R = ranks_of(np.column_stack([*cols, -base]))
    P = rank_probabilities(R)
    fit = fit_mixture_weights(P)
    assert fit.converged
    # stationarity on the simplex: (1/K) sum_i P_il / q_i == 1 where pi_l > 0, <= 1 elsewhere
    g = (P / (P @ fit.weights)[:, None]).mean(axis=0)
    assert np.all(g <= 1 + 1e-7)
    np.testing.assert_allclose(g[fit.weights > 1e-6], 1.0, atol=1e-7)
    # plain EM after 1000 iterations is still below the maximum (slow linear convergence)
    em = fit_mixture_weights(P, solver="em", max_iter=1000)
    assert em.log_likelihood[-1] <= fit.log_likelihood[-1] + 1e-9


@example(M=2, L=4, seed=292, supervised=False)  # a flat maximum: weights once differed by 3e-7
@given(
    st.integers(2, 40),
    st.integers(1, 5),
    st.integers(0, 2**32 - 1),
    st.booleans(),
)
def test_gene_order_invariance_and_valid_weights(M, L, seed, supervised):
    rng = np.random.default_rng(seed)
    R = ranks_of(rng.integers(0, 8, size=(M, L)).astype(float))
    relevant = rng.random(M) < 0.4 if supervised else None
    if relevant is not None and not relevant.any():
        relevant[0] = True
    scores, w, info = em_aggregate(R, relevant=relevant)
    assert np.isfinite(scores).all() and np.isfinite(w).all() and (w >= 0).all()
    assert w.sum() == pytest.approx(1.0, abs=1e-12)
    assert scores.sum() == pytest.approx(1.0, abs=1e-12)
    perm = rng.permutation(M)
    s2, w2, _ = em_aggregate(R[perm], relevant=None if relevant is None else relevant[perm])
    np.testing.assert_array_equal(w2, w)  # exactly: the fit sees the rows in canonical order
    np.testing.assert_allclose(s2, scores[perm], rtol=1e-12)


def test_deterministic(rng):
    R = np.column_stack([perm_ranks(rng, 1000) for _ in range(5)])
    a = em_aggregate(R)
    b = em_aggregate(R)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])


def test_newton_falls_back_to_an_em_step_when_the_model_fails(rng, monkeypatch):
    import kofs.aggregate.em as em_module

    def broken(*args, **kwargs):
        raise np.linalg.LinAlgError("not positive definite")

    P = rank_probabilities(np.column_stack([perm_ranks(rng, 80) for _ in range(3)]))
    expected = fit_mixture_weights(P, solver="em", max_iter=2, tol=0.0).weights
    monkeypatch.setattr(em_module, "cholesky", broken)
    fit = fit_mixture_weights(P, solver="newton", max_iter=2, tol=0.0)
    np.testing.assert_allclose(fit.weights, expected, rtol=1e-12)


# --- edge cases --------------------------------------------------------------------------------


def test_single_list_and_single_gene():
    r = np.arange(1.0, 6.0)[:, None]
    scores, w, info = em_aggregate(r)
    np.testing.assert_array_equal(w, [1.0])
    np.testing.assert_allclose(scores, rank_probabilities(r)[:, 0])
    assert info["iterations"] == 0 and info["converged"]
    scores, w, info = em_aggregate(np.ones((1, 3)))
    np.testing.assert_allclose(scores, [1.0])
    np.testing.assert_allclose(w, [1 / 3] * 3)


def test_all_genes_tied_in_every_list():
    R = np.full((10, 3), 5.5)
    scores, w, info = em_aggregate(R)
    np.testing.assert_allclose(scores, 0.1)
    np.testing.assert_allclose(w, [1 / 3] * 3)


def test_not_converged_is_reported_and_logged(rng, caplog):
    R = np.column_stack([perm_ranks(rng, 500) for _ in range(3)])
    with caplog.at_level(logging.WARNING, logger="kofs.aggregate.em"):
        _, _, info = em_aggregate(R, solver="em", max_iter=3)
    assert info["iterations"] == 3 and info["converged"] is False
    assert "without converging" in caplog.text


# --- the public runner and registry ----------------------------------------------------------


def test_runner_with_rankings_supervised_and_unsupervised(rng):
    genes = [f"G{i}" for i in range(200)]
    truth = rng.normal(size=200)
    lists = [
        Ranking(f"l{k}", genes, truth + rng.normal(scale=s, size=200), higher_is_better=True)
        for k, s in enumerate((0.1, 3.0, 3.0))
    ]
    relevant = [genes[i] for i in np.argsort(-truth)[:15]] + ["NOT_A_GENE"]
    sup = aggregate(lists, "em", relevant_genes=relevant)
    assert sup.weights.sum() == pytest.approx(1.0)
    assert sup.weights[0] == sup.weights.max() and sup.weights[0] > 0.6
    assert sup.info["n_G"] == 15 and sup.info["converged"] is True
    assert sup.info["solver"] == "newton" and sup.info["tol"] == 1e-10
    assert set(sup.top(10)) <= set(genes)
    uns = aggregate(lists, "em", params={"solver": "em", "max_iter": "50"})
    assert uns.info["n_G"] == 200 and uns.info["iterations"] == 50
    spec = AGGREGATORS.get("em")
    assert spec.learns_weights and spec.supports_relevant


@pytest.mark.parametrize(
    "params, fragment",
    [
        ({"solver": "lbfgs"}, "solver"),
        ({"max_iter": 0}, "max_iter"),
        ({"tol": -1}, "tol"),
        ({"maxiter": 10}, "did you mean 'max_iter'"),
    ],
)
def test_bad_parameters_raise_one_line_parameter_errors(params, fragment):
    lists = [Ranking("a", ["x", "y"], [1.0, 2.0], higher_is_better=True)]
    with pytest.raises(ParameterError, match=fragment) as exc:
        aggregate(lists, "em", params=params)
    assert "\n" not in str(exc.value)


def test_user_errors_in_the_kernel_adapter():
    func = AGGREGATORS.get("em").func
    kw = {"solver": "newton", "tol": 1e-10, "max_iter": 10}
    with pytest.raises(ParameterError, match="relevant-gene set G is empty"):
        func(np.ones((3, 2)), relevant=np.zeros(3, dtype=bool), **kw)
    with pytest.raises(ParameterError, match="NaN"):
        func(np.array([[1.0, np.nan]]), relevant=None, **kw)
    with pytest.raises(ParameterError, match="shape"):
        func(np.ones(3), relevant=None, **kw)
    with pytest.raises(ParameterError, match="mask"):
        func(np.ones((3, 2)), relevant=np.ones(2, dtype=bool), **kw)
    with pytest.raises(ParameterError, match="none of the relevant genes"):
        aggregate([Ranking("a", ["x"], [1.0], higher_is_better=True)], "em", relevant_genes=["z"])
