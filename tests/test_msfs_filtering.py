"""MSFS similarity combination (6.2), filtered similarity (6.10) and term relevance (6.15)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import costly_examples
from hypothesis import given, settings
from hypothesis import strategies as st

from kofs.errors import CoverageError, ParameterError
from kofs.knowledge.filtering import (
    filtered_similarity,
    genes_of_relation,
    genes_of_terms,
    restrict_relation,
)
from kofs.knowledge.functions import (
    learn_relevance,
    learn_relevance_from_data,
    relevant_genes_functions,
    with_relevance,
)
from kofs.knowledge.msfs import combine_similarities
from kofs.knowledge.propagation import relevance_vote
from kofs.knowledge.similarity import sample_similarity
from kofs.types import Expression, FeatureFunctions, FeatureRelation, SampleSimilarity


def _expr(X):
    n, m = X.shape
    return Expression(X, [f"g{j}" for j in range(m)], [f"s{i}" for i in range(n)])


def _sim(M, n, name="s"):
    return SampleSimilarity(M, [f"s{i}" for i in range(n)], name=name)


# ------------------------------------------------------------------ MSFS
def test_combine_equal_weights_max(rng):
    n = 5
    A = rng.random((n, n)) * 4
    A = A + A.T
    B = rng.random((n, n))
    B = B + B.T
    S = combine_similarities([_sim(A, n, "a"), _sim(B, n, "b")])
    np.testing.assert_allclose(S.matrix, 0.5 * A / A.max() + 0.5 * B / B.max())
    assert S.provenance["weights"] == [0.5, 0.5] and S.provenance["parts"] == ["a", "b"]
    assert S.matrix.max() <= 1 + 1e-12


def test_combine_weights_trace_and_none(rng):
    n = 4
    A = np.diag([1.0, 2, 3, 4]) + 0.1
    B = np.eye(n) * 5
    S = combine_similarities([_sim(A, n), _sim(B, n)], [3, 1], normalise="trace")
    np.testing.assert_allclose(S.matrix, 0.75 * A * n / np.trace(A) + 0.25 * np.eye(n))
    S = combine_similarities([_sim(A, n), _sim(B, n)], [1, 1], normalise="none")
    np.testing.assert_allclose(S.matrix, 0.5 * (A + B))


def test_combine_weights_summing_beyond_the_largest_float(rng):
    """Weights 1e308, 1e308 summed to inf and were all divided to 0: a zero similarity, which
    `kofs rank --method msfs --msfs-weights 1e308,1e308` refused as "similarity graph has fewer
    than 2 connected samples", naming the matrix."""
    n = 4
    A = rng.random((n, n)) + 0.1
    A = A + A.T
    B = np.eye(n) + 0.5
    big = combine_similarities([_sim(A, n), _sim(B, n)], [1e308, 1e308])
    equal = combine_similarities([_sim(A, n), _sim(B, n)], [1, 1])
    np.testing.assert_allclose(big.matrix, equal.matrix)
    assert big.provenance["weights"] == [0.5, 0.5]


def test_combine_dense_sparse_mix(rng):
    n = 6
    A = rng.random((n, n))
    A = A + A.T
    B = sp.random(n, n, density=0.4, random_state=1)
    B = (B + B.T).tocsr()
    mixed = combine_similarities([_sim(A, n), _sim(B, n)])
    assert not mixed.is_sparse
    np.testing.assert_allclose(mixed.matrix, 0.5 * A / A.max() + 0.5 * B.toarray() / B.max())
    both = combine_similarities([_sim(B, n), _sim(B * 3, n)])
    assert both.is_sparse
    np.testing.assert_allclose(both.matrix.toarray(), B.toarray() / B.max())


def test_combine_errors(rng):
    n = 3
    A = np.ones((n, n))
    other = SampleSimilarity(A, ["x", "y", "z"])
    with pytest.raises(ParameterError, match="other samples") as ei:
        combine_similarities([_sim(A, n), other])
    assert "\n" not in str(ei.value)
    with pytest.raises(ParameterError, match="no similarity"):
        combine_similarities([])
    with pytest.raises(ParameterError, match="no positive"):
        combine_similarities([_sim(np.zeros((n, n)), n)])
    with pytest.raises(ParameterError, match="weights"):
        combine_similarities([_sim(A, n)], [-1])
    with pytest.raises(ParameterError, match="weights"):
        combine_similarities([_sim(A, n)], [1, 2])
    with pytest.raises(ParameterError, match="normalise"):
        combine_similarities([_sim(A, n)], normalise="sum")


# ------------------------------------------------------------------ filtering
def test_filtered_equals_similarity_on_subset(rng):
    X = rng.normal(size=(10, 8))
    e = _expr(X)
    keep = [1, 3, 6]
    ref = sample_similarity(e.subset_genes(keep), "rbf").matrix
    for sel in (keep, ["g1", "g3", "g6", "unknown"], np.isin(np.arange(8), keep)):
        S = filtered_similarity(e, sel)
        np.testing.assert_allclose(S.matrix, ref)
        assert S.samples == e.samples and S.provenance["n_genes_kept"] == 3
    # the filter matters: other genes give another similarity
    assert np.abs(filtered_similarity(e, [0, 2]).matrix - ref).max() > 1e-3
    knn = filtered_similarity(e, keep, kind="knn", k=3)
    assert knn.matrix.shape == (10, 10)


def test_filtered_errors(rng):
    X = rng.normal(size=(6, 5))
    X[:, 2] = X[:, 3] = 1.0
    e = _expr(X)
    with pytest.raises(ParameterError, match="at least 2") as ei:
        filtered_similarity(e, [0])
    assert "\n" not in str(ei.value)
    with pytest.raises(CoverageError, match="none of the 1 given gene ids"):
        filtered_similarity(e, ["TP53"])
    with pytest.raises(ParameterError, match="no gene"):
        filtered_similarity(e, [])
    with pytest.raises(ParameterError, match="constant"):
        filtered_similarity(e, [2, 3])
    with pytest.raises(ParameterError):
        filtered_similarity(e, [0, 1], kind="nope")


def test_gene_selection_helpers():
    genes = [f"g{j}" for j in range(5)]
    V = sp.csr_matrix(np.array([[1, 0], [0, 1], [1, 1], [0, 0], [0, 0]], dtype=float))
    f = FeatureFunctions(V, genes, ("hsa05221", "hsa04110"), term_names=("AML", "Cell cycle"))
    np.testing.assert_array_equal(genes_of_terms(f, ["AML"]), [1, 0, 1, 0, 0])
    np.testing.assert_array_equal(genes_of_terms(f, ["hsa04110"]), [0, 1, 1, 0, 0])
    np.testing.assert_array_equal(genes_of_terms(f), [1, 1, 1, 0, 0])
    with pytest.raises(ParameterError, match="terms hsa00000: not among the 2 terms of 'f"):
        genes_of_terms(f, ["hsa00000"])
    with pytest.raises(ParameterError, match=r"^--pathway-ids hsa00000: not in sets\.gmt; give"):
        genes_of_terms(f, ["hsa00000"], option="--pathway-ids", among="in sets.gmt")
    W = np.zeros((5, 5))
    W[0, 3] = 1.0
    W[4, 4] = 1.0  # self-loop only: no interaction
    rel = FeatureRelation(sp.csr_matrix(W), genes, directed=True)
    np.testing.assert_array_equal(genes_of_relation(rel), [1, 0, 0, 1, 0])
    W[1, 3] = W[3, 1] = 2.0
    full = FeatureRelation(sp.csr_matrix(W), genes, name="go")
    sub = restrict_relation(full, ["g1", "g3", "g4"])
    expect = np.zeros((5, 5))
    expect[1, 3] = expect[3, 1] = 2.0
    expect[4, 4] = 1.0
    np.testing.assert_array_equal(sub.matrix.toarray(), expect)
    assert sub.genes == full.genes and sub.name == "go-restricted"


# ------------------------------------------------------------------ term relevance
def _functions(m=6):
    V = np.array([[1, 0, 0], [1, 1, 0], [0, 1, 0], [0, 1, 0], [1, 0, 0], [0, 0, 0]], dtype=float)
    return FeatureFunctions(sp.csr_matrix(V[:m]), [f"g{j}" for j in range(m)], ("A", "B", "C"))


def test_learn_relevance_ratio():
    f = _functions()
    out = learn_relevance(f, ["g1", "g2"])  # A: 1/3, B: 2/3, C: no genes -> 0
    np.testing.assert_allclose(out.relevance, [1 / 3, 2 / 3, 0.0])
    assert out.provenance["n_relevant"] == 2
    np.testing.assert_allclose(learn_relevance(f, np.array([0, 1])).relevance, [2 / 3, 1 / 3, 0])
    with pytest.raises(CoverageError, match="none of the"):
        learn_relevance(f, ["TP53"])
    with pytest.raises(ParameterError, match="mask"):
        learn_relevance(f, np.ones(3, dtype=bool))


def test_with_relevance():
    f = _functions()
    np.testing.assert_allclose(with_relevance(f, {"B": 2.0}).relevance, [0, 2, 0])
    np.testing.assert_allclose(with_relevance(f, [1, 2, 3]).relevance, [1, 2, 3])
    with pytest.raises(CoverageError, match="none of the 1 terms"):
        with_relevance(f, {"Z": 1})
    np.testing.assert_allclose(with_relevance(f, {"Z": 1, "A": 0.5}).relevance, [0.5, 0, 0])
    with pytest.raises(ParameterError, match="not a number"):
        with_relevance(f, {"A": "high"})
    with pytest.raises(ParameterError, match="2 values for 3 terms"):
        with_relevance(f, [1, 2])
    with pytest.raises(ParameterError, match="finite"):
        with_relevance(f, [1, np.nan, 0])


def test_learn_relevance_from_data(rng):
    n = 20
    X = rng.normal(size=(n, 6)) * 0.1
    X[:, 2] *= 100  # the most variable gene, only in term B
    X[:, 3] *= 50
    e = _expr(X)
    f = _functions()
    top = learn_relevance_from_data(f, e, top_fraction=2 / 6)  # top 2 genes: g2, g3
    np.testing.assert_allclose(top.relevance, [0, 2 / 3, 0])
    mean = learn_relevance_from_data(f, e, statistic="mean")
    var = X.var(axis=0)
    pct = (np.argsort(np.argsort(var))) / 5
    np.testing.assert_allclose(mean.relevance, [pct[[0, 1, 4]].mean(), pct[[1, 2, 3]].mean(), 0])
    given_ = learn_relevance_from_data(f, e, gene_scores=-np.arange(6.0), top_fraction=1 / 6)
    np.testing.assert_allclose(given_.relevance, [1 / 3, 0, 0])  # best: g0
    with pytest.raises(ParameterError, match="top_fraction"):
        learn_relevance_from_data(f, e, top_fraction=0)
    with pytest.raises(ParameterError, match="statistic"):
        learn_relevance_from_data(f, e, statistic="max")


def test_ids_matched_through_annotations(rng):
    """Entrez-keyed matrix, symbol lists: ids go through kofs.io.ids.match_gene_ids."""
    X = rng.normal(size=(6, 4))
    e = Expression(
        X,
        ["7157", "672", "675", "1956"],
        [f"s{i}" for i in range(6)],
        namespace="entrez",
        annotations={"symbol": ["TP53", "BRCA1", "BRCA2", "EGFR"]},
    )
    f = relevant_genes_functions(e, ["BRCA1", "EGFR", "NOPE"])
    np.testing.assert_array_equal(f.incidence.toarray().ravel(), [0, 1, 0, 1])
    V = sp.csr_matrix(np.array([[1, 0], [1, 0], [0, 1], [0, 1]], dtype=float))
    fun = FeatureFunctions(V, e.genes, ("A", "B"))
    np.testing.assert_allclose(learn_relevance(fun, ["TP53"], expression=e).relevance, [0.5, 0])
    S = filtered_similarity(e, ["TP53", "BRCA2"])
    np.testing.assert_allclose(S.matrix, sample_similarity(e.subset_genes([0, 2]), "rbf").matrix)


def test_relevant_genes_functions(rng):
    e = _expr(rng.normal(size=(4, 5)))
    f = relevant_genes_functions(e, ["g1", "g4", "XYZ"])
    assert f.terms == ("known_relevant",) and f.relevance.tolist() == [1.0]
    r = relevance_vote(f.incidence, f.relevance)
    np.testing.assert_array_equal(np.isnan(r), [True, False, True, True, False])
    np.testing.assert_allclose(r[[1, 4]], 1.0)


@settings(max_examples=costly_examples(30))
@given(st.integers(2, 6), st.integers(1, 4), st.data())
def test_combine_is_convex_combination(n, L, data):
    """With max scaling the result is symmetric, within [0, 1], and its max <= 1."""
    mats = []
    for _ in range(L):
        vals = data.draw(st.lists(st.floats(0.01, 10), min_size=n * n, max_size=n * n))
        A = np.array(vals).reshape(n, n)
        mats.append(_sim(A + A.T, n))
    w = data.draw(st.lists(st.floats(0, 1), min_size=L, max_size=L).filter(lambda v: sum(v) > 1e-3))
    S = combine_similarities(mats, w).matrix
    np.testing.assert_allclose(S, S.T)
    assert S.min() >= 0 and S.max() <= 1 + 1e-12
    a = np.asarray(w) / sum(w)
    expect = sum(ai * (M.matrix / M.matrix.max()) for ai, M in zip(a, mats, strict=True))
    np.testing.assert_allclose(S, expect, atol=1e-12)
