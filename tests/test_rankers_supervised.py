"""ReliefF, trace ratio and HSIC (kofs.rankers.supervised): oracles, identities, edge cases."""

from __future__ import annotations

import itertools
import logging

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.spatial.distance import cdist

from kofs.errors import ParameterError
from kofs.rankers import run_ranker
from kofs.rankers.supervised import (
    class_scatter,
    hsic_scores,
    label_kernel,
    relieff_scores,
    trace_ratio_scores,
    zero_diagonal,
)
from kofs.types import Expression, RankerInputs, SampleCategories, SampleSimilarity


def _expr(X):
    n, m = X.shape
    return Expression(X, [f"g{j}" for j in range(m)], [f"s{i}" for i in range(n)])


def _cats(y, n=None):
    y = [str(v) for v in y]
    return SampleCategories(y, [f"s{i}" for i in range(len(y))])


def _planted(rng, n=40, m=30, informative=(3, 7)):
    y = np.repeat([0, 1], n // 2)
    X = rng.normal(size=(n, m))
    for j in informative:
        X[:, j] += 3.0 * y
    return X, y


# ----------------------------------------------------------------------------- ReliefF


def _relieff_naive(X, y, k, metric="cityblock", power=1):
    n, m = X.shape
    classes, counts = np.unique(y, return_counts=True)
    P = dict(zip(classes, counts / n, strict=True))
    D = cdist(X, X, metric=metric)
    score = np.zeros(m)
    for t in range(n):
        for C in classes:
            idx = [j for j in range(n) if y[j] == C and j != t]
            idx.sort(key=lambda j: (D[t, j], j))
            kk = min(k, len(idx))
            if kk == 0:
                continue
            d = sum(np.abs(X[t] - X[j]) ** power for j in idx[:kk]) / kk
            if C == y[t]:
                score -= d
            else:
                score += P[C] / (1 - P[y[t]]) * d
    return score / n


@pytest.mark.parametrize("metric", ["manhattan", "euclidean"])
@pytest.mark.parametrize("diff", ["absolute", "squared"])
def test_relieff_matches_naive_loop(rng, metric, diff):
    # three unequal classes, one smaller than k (k is reduced for it)
    y = np.array([0] * 9 + [1] * 4 + [2] * 7)
    X = rng.normal(size=(20, 6))
    got = relieff_scores(X, y, k=5, metric=metric, diff=diff)
    want = _relieff_naive(
        X,
        y,
        5,
        "cityblock" if metric == "manhattan" else "euclidean",
        1 if diff == "absolute" else 2,
    )
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_relieff_matches_skfeature_on_two_classes(rng):
    """skfeature's reliefF (skfeature-chappers 1.2.1, mode="raw", Manhattan neighbours, |a-b|)
    omits the 1/M factor; with two classes its prior handling coincides with eq. 4.6."""
    from skfeature.function.similarity_based.reliefF import reliefF  # reference tool (test extra)

    y = np.array([0] * 12 + [1] * 9)
    X = rng.normal(size=(21, 7))
    ours = relieff_scores(X, y, k=5)
    theirs = reliefF(X, y, mode="raw", k=5)
    np.testing.assert_allclose(ours * len(y), theirs, rtol=1e-12)


def test_relieff_srel_link_with_corrected_signs(rng):
    """Eq. 4.7 setting (equal classes, all neighbours, squared differences, unit-norm f):
    ReliefF = (2/n)(f^T S^REL f - 1) with S_ii = 1, hits +1/k_h, misses -1/((c-1) k_m);
    the printed S^REL (4.8, signs swapped) gives the opposite sign."""
    c, p = 3, 5
    y = np.repeat(np.arange(c), p)
    n = c * p
    X = rng.normal(size=(n, 8))
    X /= np.linalg.norm(X, axis=0)
    got = relieff_scores(X, y, k=50, diff="squared")  # k >= p: every hit and miss
    same = y[:, None] == y[None, :]
    S = np.where(same, 1.0 / (p - 1), -1.0 / ((c - 1) * p))
    np.fill_diagonal(S, 1.0)
    np.testing.assert_allclose(S.sum(axis=1), 1.0)  # D = I
    quad = np.einsum("ij,ij->j", X, S @ X)
    np.testing.assert_allclose(got, 2.0 / n * (quad - 1.0), rtol=1e-10, atol=1e-14)
    S_printed = np.where(same, -1.0 / (p - 1), 1.0 / ((c - 1) * p))
    np.fill_diagonal(S_printed, 1.0)
    quad_p = np.einsum("ij,ij->j", X, S_printed @ X)
    np.testing.assert_allclose(got, -2.0 / n * (quad_p - 1.0), rtol=1e-10, atol=1e-14)


def test_relieff_planted_genes_first_and_constant_last(rng):
    X, y = _planted(rng)
    X[:, 0] = 1.5  # constant gene
    r = run_ranker("relieff", _expr(X), RankerInputs(categories=_cats(y)))
    assert set(r.order()[:2]) == {3, 7}
    assert np.isnan(r.scores[0]) and r.ranks[0] == X.shape[1]


def test_relieff_nan_gene_is_ignored(rng, caplog):
    X, y = _planted(rng)
    Xn = X.copy()
    Xn[5, 10] = np.nan
    with caplog.at_level(logging.WARNING):
        r = run_ranker("relieff", _expr(Xn), RankerInputs(categories=_cats(y)))
    assert np.isnan(r.scores[10]) and "NaN" in caplog.text
    keep = np.delete(np.arange(X.shape[1]), 10)
    ref = relieff_scores(X[:, keep], y, k=10)
    np.testing.assert_allclose(np.delete(r.scores, 10), ref, rtol=1e-12)


def test_relieff_sampling_is_seeded(rng):
    X, y = _planted(rng)
    inp = RankerInputs(categories=_cats(y))
    a = run_ranker("relieff", _expr(X), inp, seed=3, params={"n_instances": 10})
    b = run_ranker("relieff", _expr(X), inp, seed=3, params={"n_instances": 10})
    c = run_ranker("relieff", _expr(X), inp, seed=4, params={"n_instances": 10})
    np.testing.assert_array_equal(a.scores, b.scores)
    assert not np.allclose(a.scores, c.scores)
    assert a.info["n_instances"] == 10


# ----------------------------------------------------------------------------- trace ratio


def _fisher(X, y):
    mu = X.mean(axis=0)
    num = sum((y == c).sum() * (X[y == c].mean(axis=0) - mu) ** 2 for c in np.unique(y))
    den = sum((y == c).sum() * X[y == c].var(axis=0) for c in np.unique(y))
    return num / den


def test_class_scatter_is_label_graph_quadratic_and_fisher(rng):
    y = np.array([0] * 5 + [1] * 8 + [2] * 6)
    X = rng.normal(size=(19, 5)) + 2.0
    n = len(y)
    counts = np.bincount(y)
    Sfis = np.where(y[:, None] == y[None, :], 1.0 / counts[y][:, None], 0.0)
    Lw = np.eye(n) - Sfis
    Lb = Sfis - np.ones((n, n)) / n
    b, w = class_scatter(X, y)
    np.testing.assert_allclose(b, np.einsum("ij,ij->j", X, Lb @ X), rtol=1e-10)
    np.testing.assert_allclose(w, np.einsum("ij,ij->j", X, Lw @ X), rtol=1e-10)
    np.testing.assert_allclose(b / w, _fisher(X, y), rtol=1e-10)
    scores, lam, _, _ = trace_ratio_scores(b, w, l=2)
    np.testing.assert_allclose(scores, np.einsum("ij,ij->j", X, (Lb - lam * Lw) @ X), rtol=1e-9)


def test_trace_ratio_reaches_the_global_optimum_by_brute_force(rng):
    b = rng.uniform(0.1, 5.0, size=9)
    w = rng.uniform(0.1, 5.0, size=9)
    for l in (1, 3, 5):  # noqa: E741 (the book's symbol)
        best = max(
            itertools.combinations(range(9), l), key=lambda s: b[list(s)].sum() / w[list(s)].sum()
        )
        scores, lam, sel, _ = trace_ratio_scores(b, w, l=l)
        assert set(sel.tolist()) == set(best)
        assert lam == pytest.approx(b[list(best)].sum() / w[list(best)].sum(), rel=1e-12)
        assert scores[sel].sum() == pytest.approx(0.0, abs=1e-9)  # sum_F f^T(L_b - l* L_w)f = 0


def test_trace_ratio_with_l1_is_fisher_and_top_set_matches_fisher_on_easy_data(rng):
    X, y = _planted(rng, informative=(2, 5, 11))
    r = run_ranker("trace-ratio", _expr(X), RankerInputs(categories=_cats(y)), params={"l": 1})
    F = _fisher(X, y)
    assert r.info["lambda"] == pytest.approx(F.max(), rel=1e-12)
    assert r.order()[0] == np.argmax(F)
    r3 = run_ranker("trace-ratio", _expr(X), RankerInputs(categories=_cats(y)), params={"l": 3})
    assert set(r3.order()[:3]) == set(np.argsort(-F)[:3]) == {2, 5, 11}


def test_trace_ratio_zero_within_scatter_gives_fisher_ratio(caplog):
    y = np.array([0, 0, 0, 1, 1, 1])
    X = np.array([[0, 0, 0, 1, 1, 1], [0, 1, 0, 1, 1, 2], [5, 1, 2, 2, 1, 0]], dtype=float).T
    with caplog.at_level(logging.WARNING):
        r = run_ranker("trace-ratio", _expr(X), RankerInputs(categories=_cats(y)), params={"l": 1})
    assert r.info["lambda"] == np.inf and "zero within-class" in caplog.text
    assert r.scores[0] == np.inf and r.order()[0] == 0


# ----------------------------------------------------------------------------- HSIC


def _hsic_ustat(K, L):
    """Unbiased HSIC as the U-statistic of Song et al. (2012, Thm. 2): (n)_4^{-1} times the sum
    over distinct 4-tuples of h = 1/24 sum_perm [k_tu l_tu + k_tu l_vw - 2 k_tu l_tv]."""
    n = K.shape[0]
    tot = 0.0
    for quad in itertools.permutations(range(n), 4):
        h = 0.0
        for t, u, v, w in itertools.permutations(quad):
            h += K[t, u] * L[t, u] + K[t, u] * L[v, w] - 2 * K[t, u] * L[t, v]
        tot += h / 24.0
    return tot / (n * (n - 1) * (n - 2) * (n - 3))


def test_hsic_matches_the_u_statistic(rng):
    n = 7
    X = rng.normal(size=(n, 3))
    y = np.array([0, 0, 1, 1, 1, 2, 2])
    L = (y[:, None] == y[None, :]).astype(float)
    got = hsic_scores(X, label_kernel(y))
    want = [_hsic_ustat(np.outer(f, f), L) for f in X.T]
    np.testing.assert_allclose(got, want, rtol=1e-10)
    B = rng.normal(size=(n, n))
    K = B @ B.T
    got2 = hsic_scores(X, zero_diagonal(K))
    want2 = [_hsic_ustat(np.outer(f, f), K) for f in X.T]
    np.testing.assert_allclose(got2, want2, rtol=1e-10)


def test_hsic_equals_f_S_hsic_f_with_restored_minus_signs(rng):
    n = 11
    X = rng.normal(size=(n, 4))
    B = rng.uniform(size=(n, n))
    K = zero_diagonal(B + B.T)
    one = np.ones(n)
    Ka = K @ one
    S = (
        K
        + (np.outer(one, one) - np.eye(n)) * (one @ K @ one) / ((n - 1) * (n - 2))
        - 2.0 / (n - 2) * (np.outer(Ka, one) - np.diag(Ka))
    ) / (n * (n - 3))
    S = 0.5 * (S + S.T)
    np.testing.assert_allclose(hsic_scores(X, K), np.einsum("ij,ij->j", X, S @ X), rtol=1e-10)
    np.testing.assert_allclose(hsic_scores(X + 7.0, K), hsic_scores(X, K), rtol=1e-9)


def test_hsic_similarity_dense_equals_sparse_and_labels_rank_planted(rng):
    X, y = _planted(rng)
    n = X.shape[0]
    B = rng.uniform(size=(n, n)) * (rng.uniform(size=(n, n)) < 0.2)
    K = B + B.T
    samples = [f"s{i}" for i in range(n)]
    dense = run_ranker("hsic", _expr(X), RankerInputs(similarity=SampleSimilarity(K, samples)))
    sparse = run_ranker(
        "hsic", _expr(X), RankerInputs(similarity=SampleSimilarity(sp.csr_matrix(K), samples))
    )
    np.testing.assert_allclose(dense.scores, sparse.scores, rtol=1e-10)
    assert dense.info["target"] == "similarity"
    lab = run_ranker("hsic", _expr(X), RankerInputs(categories=_cats(y)))
    assert set(lab.order()[:2]) == {3, 7} and lab.info["target"] == "labels"


# ----------------------------------------------------------------------------- shared


@pytest.mark.parametrize("name", ["relieff", "trace-ratio", "hsic"])
def test_gene_order_invariance(rng, name):
    X, y = _planted(rng)
    perm = rng.permutation(X.shape[1])
    inp = RankerInputs(categories=_cats(y))
    a = run_ranker(name, _expr(X), inp)
    b = run_ranker(name, _expr(X[:, perm]), inp)
    np.testing.assert_allclose(b.scores, a.scores[perm], rtol=1e-9)


@pytest.mark.parametrize(
    "name, params, inputs, match",
    [
        ("relieff", {"k": 0}, "labels", r"'k' must be an int in \["),
        ("relieff", {"metric": "cosine"}, "labels", "must be one of"),
        ("relieff", {}, "one-class", "at least 2 classes"),
        ("relieff", {}, "none", "needs sample labels"),
        ("trace-ratio", {"l": 0}, "labels", r"'l' must be an int in \[1, inf\)"),
        ("trace-ratio", {"lam": 1}, "labels", "unknown parameter"),
        ("hsic", {}, "none", "needs sample labels"),
        ("hsic", {"target": "labels"}, "similarity", "needs sample labels"),
        ("hsic", {"target": "kernel"}, "labels", "must be one of"),
    ],
)
def test_user_errors(rng, name, params, inputs, match):
    X, y = _planted(rng)
    n = X.shape[0]
    inp = {
        "labels": RankerInputs(categories=_cats(y)),
        "one-class": RankerInputs(categories=_cats(np.zeros(n, dtype=int))),
        "none": RankerInputs(),
        "similarity": RankerInputs(
            similarity=SampleSimilarity(np.eye(n), [f"s{i}" for i in range(n)])
        ),
    }[inputs]
    with pytest.raises(ParameterError, match=match) as exc:
        run_ranker(name, _expr(X), inp, params=params)
    assert "\n" not in str(exc.value)


@pytest.mark.parametrize("name", ["relieff", "trace-ratio", "hsic"])
def test_all_constant_genes_give_nan_not_an_error(name):
    X = np.ones((6, 3))
    r = run_ranker(name, _expr(X), RankerInputs(categories=_cats([0, 1] * 3)))
    assert np.isnan(r.scores).all()


def test_hsic_needs_four_samples():
    X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0]])
    with pytest.raises(ParameterError, match="at least 4 samples"):
        run_ranker("hsic", _expr(X), RankerInputs(categories=_cats([0, 1, 1])))


@pytest.mark.parametrize("name", ["fisher", "relieff", "trace-ratio"])
def test_label_supervision_with_classes_of_two_samples(name, caplog):
    """Two classes of two samples: the default fusion weighs the lists by their cross-validated
    predictive value, re-building a labelled list on each fold's training samples -- one per
    class, which the ranker refuses. The run stopped there, saying the user's labels had
    classes of one sample; the list is now judged as built on all samples, with a warning."""
    import kofs

    X = np.array([[1.0, 3, 3, 4, 5], [2, 5, 1, 4, 7], [2, 5, 2, 5, 1], [0, 3, 1, 2, 3]])
    y = ["a", "b", "b", "a"]
    with caplog.at_level(logging.WARNING):
        result = kofs.rank(X, labels=y, rankers=[name, "variance"], seed=0)
    assert f"list '{name}' cannot be re-built on the training samples" in caplog.text
    assert len(result.top(5)) == 5
