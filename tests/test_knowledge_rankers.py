"""Relevance voting (6.15) and relevance propagation (6.14): kernels and registry entries."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from kofs.errors import ParameterError
from kofs.knowledge.functions import learn_relevance, relevant_genes_functions, with_relevance
from kofs.knowledge.propagation import relevance_propagation, relevance_vote, transition_matrix
from kofs.rankers import RANKERS, run_ranker
from kofs.types import Expression, FeatureFunctions, FeatureRelation, RankerInputs


def _expr(X):
    n, m = X.shape
    return Expression(X, [f"g{j}" for j in range(m)], [f"s{i}" for i in range(n)])


# ------------------------------------------------------------------ kernels
def test_vote_matches_naive_loop(rng):
    m, T = 15, 6
    V = (rng.random((m, T)) < 0.3).astype(float)
    V[3] = 0
    r_fun = rng.random(T)
    out = relevance_vote(sp.csr_matrix(V), r_fun)
    for i in range(m):
        if V[i].sum() == 0:
            assert np.isnan(out[i])
        else:
            assert out[i] == pytest.approx(sum(V[i, t] * r_fun[t] for t in range(T)))
    avg = relevance_vote(sp.csr_matrix(V), r_fun, average=True)
    ok = V.sum(1) > 0
    np.testing.assert_allclose(avg[ok], out[ok] / V[ok].sum(1))
    assert np.isnan(avg[3])


def test_propagation_golden_path_graph():
    """Path a-b-c, r = (1, 0, 0), lambda = 0.5: r* = (7/6, 1/3, 1/6) (hand-solved)."""
    S = sp.csr_matrix(np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]], dtype=float))
    out = relevance_propagation(S, np.array([1.0, 0, 0]), lam=0.5)
    np.testing.assert_allclose(out, [7 / 6, 1 / 3, 1 / 6], atol=1e-14)


@pytest.mark.parametrize("directed", [False, True])
def test_propagation_dense_inverse_and_neumann(rng, directed):
    m = 25
    A = rng.random((m, m)) * (rng.random((m, m)) < 0.2)
    np.fill_diagonal(A, 0)
    if not directed:
        A = A + A.T
    A[5] = 0  # no out-edges: zero row of P_F
    if not directed:
        A[:, 5] = 0
    r = rng.random(m)
    lam = 0.7
    d = A.sum(1)
    P = np.divide(A, d[:, None], out=np.zeros_like(A), where=d[:, None] > 0)
    np.testing.assert_allclose(P.sum(1)[d > 0], 1.0)
    np.testing.assert_allclose(transition_matrix(sp.csr_matrix(A)).toarray(), P, atol=1e-15)
    dense = np.linalg.solve(np.eye(m) - lam * P, r)
    direct = relevance_propagation(sp.csr_matrix(A), r, lam=lam)
    it = relevance_propagation(sp.csr_matrix(A), r, lam=lam, solver="iterative")
    np.testing.assert_allclose(direct, dense, rtol=1e-12)
    np.testing.assert_allclose(it, dense, rtol=1e-10)
    neumann = np.zeros(m)
    term = r.copy()
    for _ in range(200):
        neumann += term
        term = lam * P @ term
    np.testing.assert_allclose(direct, neumann, rtol=1e-12)
    assert direct[5] == pytest.approx(r[5])  # nothing to draw from


def test_directed_flow_direction():
    """Edge 0 -> 1 only: gene 0 draws relevance from gene 1, not the other way."""
    S = sp.csr_matrix(np.array([[0, 1.0], [0, 0]]))
    out = relevance_propagation(S, np.array([0.0, 1.0]), lam=0.5)
    np.testing.assert_allclose(out, [0.5, 1.0])
    out = relevance_propagation(S, np.array([1.0, 0.0]), lam=0.5)
    np.testing.assert_allclose(out, [1.0, 0.0])


def test_propagation_bad_lambda():
    S = sp.csr_matrix(np.ones((2, 2)))
    for lam in (1.0, -0.1, 2):
        with pytest.raises(ParameterError, match="lambda"):
            relevance_propagation(S, np.ones(2), lam=lam)
    np.testing.assert_allclose(relevance_propagation(S, np.array([1.0, 2.0]), lam=0.0), [1, 2])


@given(
    st.integers(2, 12).flatmap(
        lambda m: st.tuples(
            st.lists(st.floats(0, 1), min_size=m * m, max_size=m * m),
            st.lists(st.floats(0, 5), min_size=m, max_size=m),
            st.floats(0.01, 0.95),
        )
    )
)
def test_propagation_properties(args):
    """For r >= 0: r <= r* <= max(r)/(1 - lambda), and r* solves the fixed point."""
    w, r, lam = args
    m = len(r)
    A = np.array(w).reshape(m, m)
    r = np.array(r)
    out = relevance_propagation(sp.csr_matrix(A), r, lam=lam)
    assert np.all(out >= r - 1e-9)
    assert np.all(out <= r.max() / (1 - lam) + 1e-9)
    P = transition_matrix(sp.csr_matrix(A))
    np.testing.assert_allclose(out, r + lam * (P @ out), atol=1e-9)


# ------------------------------------------------------------------ registry / runner
def _toy(rng):
    n, m = 8, 6
    X = rng.normal(size=(n, m))
    X[:, 4] = 3.0  # constant gene
    e = _expr(X)
    V = np.array([[1, 0], [1, 1], [0, 1], [0, 0], [1, 0], [0, 0]], dtype=float)
    f = FeatureFunctions(sp.csr_matrix(V), e.genes, ("T1", "T2"), name="go")
    W = np.zeros((m, m))
    W[2, 3] = W[3, 2] = 1.0
    W[0, 1] = W[1, 0] = 1.0
    rel = FeatureRelation(sp.csr_matrix(W), e.genes, name="ppi")
    return e, f, rel


def test_registry_entries():
    for name, req in (
        ("relevance-vote", {"functions"}),
        ("relevance-propagation", {"relation", "functions"}),
    ):
        spec = RANKERS.get(name)
        assert (
            spec.higher_is_better and spec.requires == frozenset(req) and spec.family == "knowledge"
        )
    assert RANKERS.get("relevance-propagation").params["lam"].default == 0.5


def test_relevance_vote_ranker(rng):
    e, f, _ = _toy(rng)
    fr = with_relevance(f, np.array([0.5, 2.0]))
    rk = run_ranker("relevance-vote", e, RankerInputs(functions=fr), list_name="GO-REL-VOTE")
    np.testing.assert_allclose(rk.scores[[0, 1, 2]], [0.5, 2.5, 2.0])
    assert np.isnan(rk.scores[3]) and np.isnan(rk.scores[5])  # no terms
    assert np.isnan(rk.scores[4])  # constant gene (runner)
    assert rk.top(3) == ["g1", "g2", "g0"] and rk.name == "GO-REL-VOTE"
    assert rk.ranks[1] == 1 and np.all(rk.ranks[[3, 4, 5]] > 3)


def test_relevance_vote_without_relevance_hint(rng):
    e, f, _ = _toy(rng)
    with pytest.raises(ParameterError, match="learn_relevance") as ei:
        run_ranker("relevance-vote", e, RankerInputs(functions=f))
    assert "\n" not in str(ei.value)
    with pytest.raises(ParameterError, match="gene functions"):
        run_ranker("relevance-vote", e, RankerInputs())


def test_relevance_propagation_ranker(rng):
    e, f, rel = _toy(rng)
    fr = learn_relevance(f, ["g1"])  # T1: 1/3, T2: 1/2
    np.testing.assert_allclose(fr.relevance, [1 / 3, 1 / 2])
    rk = run_ranker(
        "relevance-propagation", e, RankerInputs(functions=fr, relation=rel), params={"lam": 0.5}
    )
    v = np.array([1 / 3, 5 / 6, 1 / 2, 0.0, 1 / 3, 0.0])
    S = rel.matrix.toarray()
    P = S / np.maximum(S.sum(1, keepdims=True), 1e-300)
    expect = np.linalg.solve(np.eye(6) - 0.5 * P, v)
    np.testing.assert_allclose(rk.scores[[0, 1, 2, 3]], expect[[0, 1, 2, 3]], rtol=1e-12)
    assert rk.scores[3] > 0  # no term, but linked to gene 2: gains relevance
    assert np.isnan(rk.scores[5])  # no term and no edge: no knowledge
    assert np.isnan(rk.scores[4])  # constant
    with pytest.raises(ParameterError, match="lam"):
        run_ranker(
            "relevance-propagation",
            e,
            RankerInputs(functions=fr, relation=rel),
            params={"lam": 1.0},
        )
    with pytest.raises(ParameterError, match="lam"):
        run_ranker(
            "relevance-propagation",
            e,
            RankerInputs(functions=fr, relation=rel),
            params={"lam": "x"},
        )


def test_propagation_from_known_genes(rng):
    """GO-REL-PROP from a 0/1 indicator of known genes (relevant_genes_functions)."""
    e, _, rel = _toy(rng)
    known = relevant_genes_functions(e, ["g2"])
    rk = run_ranker("relevance-propagation", e, RankerInputs(functions=known, relation=rel))
    np.testing.assert_allclose(rk.scores[[2, 3]], [4 / 3, 2 / 3])  # (I - .5 P)^-1 on an edge
    np.testing.assert_allclose(rk.scores[[0, 1]], 0.0)
    assert rk.top(2) == ["g2", "g3"]


def test_rankers_invariant_to_gene_order(rng):
    e, f, rel = _toy(rng)
    fr = learn_relevance(f, ["g1", "g2"])
    perm = rng.permutation(e.n_genes)
    ep = Expression(e.values[:, perm], [e.genes[i] for i in perm], e.samples)
    fp = FeatureFunctions(fr.incidence[perm], ep.genes, fr.terms, relevance=fr.relevance)
    relp = FeatureRelation(rel.matrix[perm][:, perm], ep.genes)
    for name in ("relevance-vote", "relevance-propagation"):
        a = run_ranker(name, e, RankerInputs(functions=fr, relation=rel))
        b = run_ranker(name, ep, RankerInputs(functions=fp, relation=relp))
        np.testing.assert_allclose(b.scores, a.scores[perm])
