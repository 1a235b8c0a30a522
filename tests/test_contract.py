"""Contract tests over the whole ranker and aggregator registries: every method, same rules
(shape, finiteness, direction flag, degenerate genes last, invariance to gene order, dense ==
sparse similarity, reproducible with a seed)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from kofs.aggregate import AGGREGATORS, aggregate
from kofs.knowledge.similarity import sample_similarity
from kofs.rankers import RANKERS, run_ranker
from kofs.types import (
    Expression,
    FeatureFunctions,
    FeatureRelation,
    RankerInputs,
    Ranking,
    SampleCategories,
)

N, M = 24, 14
SMALL = {"mrsf": {"l": 3}, "mcsf": {"l": 3}, "trace-ratio": {"l": 3}, "relieff": {"k": 3}}


def _data(seed: int = 0):
    rng = np.random.default_rng(seed)
    y = np.repeat(["a", "b"], N // 2)
    X = rng.normal(size=(N, M))
    X[y == "a", 0] += 4.0  # gene g0 separates the classes
    X[:, 5] = 1.5  # a constant gene
    genes = [f"g{j}" for j in range(M)]
    samples = [f"s{i}" for i in range(N)]
    expr = Expression(X, genes, samples)
    W = sp.random(M, M, density=0.3, random_state=seed, format="csr")
    W = (W + W.T).tocsr()
    W.setdiag(0)
    W.eliminate_zeros()
    V = sp.random(M, 6, density=0.4, random_state=seed + 1, format="csr")
    V.data[:] = 1.0
    inputs = RankerInputs(
        categories=SampleCategories(y, samples),
        similarity=sample_similarity(expr, "rbf"),
        relation=FeatureRelation(W, genes),
        functions=FeatureFunctions(V, genes, [f"t{k}" for k in range(6)], relevance=rng.random(6)),
    )
    return expr, inputs


def _permuted(expr: Expression, inputs: RankerInputs, perm: np.ndarray):
    genes = [expr.genes[i] for i in perm]
    pe = Expression(expr.values[:, perm], genes, expr.samples)
    rel, fun = inputs.relation, inputs.functions
    pi = RankerInputs(
        categories=inputs.categories,
        similarity=inputs.similarity,
        relation=FeatureRelation(rel.matrix[perm][:, perm], genes),
        functions=FeatureFunctions(fun.incidence[perm], genes, fun.terms, relevance=fun.relevance),
    )
    return pe, pi


@pytest.fixture(scope="module")
def data():
    return _data()


def _for(spec, expr: Expression) -> Expression:
    """Rankers that model counts get counts: ``round(exp(x))`` (same genes, constant gene 5)."""
    if not spec.counts:
        return expr
    return Expression(np.round(np.exp(np.asarray(expr.values))), expr.genes, expr.samples)


# FSSI solves one lasso per (gene, sample): its two contract runs take ~5 s each
NAMES = [pytest.param(n, marks=pytest.mark.slow) if n == "fssi" else n for n in RANKERS.names()]


@pytest.mark.parametrize("name", NAMES)
def test_ranker_contract(name, data):
    expr, inputs = data
    spec = RANKERS.get(name)
    expr = _for(spec, expr)
    r = run_ranker(name, expr, inputs, seed=0, params=SMALL.get(name))
    assert (
        isinstance(r, Ranking)
        and r.scores.shape == (M,)
        and r.higher_is_better is spec.higher_is_better
    )
    # constant gene: NaN score, ranked last (tied at the bottom with any other NaN)
    assert np.isnan(r.scores[5]) and r.ranks[5] == r.ranks.max()
    ok = ~np.isnan(r.scores)
    assert np.all(np.isfinite(r.scores[ok]) | np.isinf(r.scores[ok]))
    assert r.ranks.min() >= 1 and r.ranks.max() <= M
    # reproducible with a seed
    again = run_ranker(name, expr, inputs, seed=0, params=SMALL.get(name))
    np.testing.assert_array_equal(r.scores, again.scores)


@pytest.mark.parametrize("name", NAMES)
def test_ranker_invariant_to_gene_order(name, data):
    expr, inputs = data
    expr = _for(RANKERS.get(name), expr)
    perm = np.random.default_rng(1).permutation(M)
    a = run_ranker(name, expr, inputs, seed=0, params=SMALL.get(name))
    pe, pi = _permuted(expr, inputs, perm)
    b = run_ranker(name, pe, pi, seed=0, params=SMALL.get(name))
    np.testing.assert_allclose(b.scores, a.scores[perm], rtol=1e-7, atol=1e-9, equal_nan=True)


@pytest.mark.parametrize("name", [s.name for s in RANKERS if "similarity" in s.uses | s.requires])
def test_dense_and_sparse_similarity_agree(name, data):
    expr, inputs = data
    sparse = RankerInputs(
        categories=inputs.categories,
        similarity=type(inputs.similarity)(sp.csr_matrix(inputs.similarity.matrix), expr.samples),
    )
    a = run_ranker(name, expr, inputs, seed=0, params=SMALL.get(name))
    b = run_ranker(name, expr, sparse, seed=0, params=SMALL.get(name))
    np.testing.assert_allclose(a.scores, b.scores, rtol=1e-6, atol=1e-9, equal_nan=True)


@pytest.mark.parametrize("name", [s.name for s in RANKERS if s.supervised])
def test_supervised_rankers_find_the_separating_gene(name, data):
    expr, inputs = data
    r = run_ranker(name, expr, inputs, seed=0, params=SMALL.get(name))
    assert r.top(1) == ["g0"]


@pytest.mark.parametrize("method", AGGREGATORS.names())
def test_aggregator_contract(method, data):
    expr, inputs = data
    lists = [run_ranker(n, expr, inputs, seed=0) for n in ("variance", "fisher", "laplacian")]
    a = aggregate(lists, method)
    assert a.scores.shape == (M,) and np.all(np.isfinite(a.scores))
    assert a.list_ranks.shape == (M, 3)
    if AGGREGATORS.get(method).learns_weights:
        assert a.weights is not None and abs(a.weights.sum() - 1) < 1e-9 and (a.weights >= 0).all()
    # identical lists fuse to that list
    same = aggregate([lists[1], Ranking("copy", lists[1].genes, lists[1].scores, True)], method)
    top = lists[1].order()[:3]
    assert set(np.asarray(same.order()[:3])) == set(np.asarray(top))
