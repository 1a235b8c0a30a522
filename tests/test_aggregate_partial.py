"""Partial ranked lists: RRA and Stuart against R RobustRankAggreg 1.2.1 (golden files in
tests/data/golden/rra, see its README), exact rational references where R loses its digits,
and the random-completion model of the other aggregators."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from conftest import costly_examples
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import betaincinv

from kofs.aggregate import AGGREGATORS, aggregate
from kofs.aggregate._order_stats import log_any_lower, log_joint_lower
from kofs.aggregate.partial import complete_ranks
from kofs.aggregate.rra import bh_qvalues, normalised_ranks, rho_scores
from kofs.aggregate.stuart import stuart_q
from kofs.errors import ParameterError
from kofs.types import Ranking

# --- exact rational references -----------------------------------------------------------------


def stuart_exact(r: list[Fraction]) -> Fraction:
    """R's qStuart recursion in exact rational arithmetic: no cancellation, no overflow."""
    r = sorted(r)
    N = len(r)
    v = [Fraction(1)]
    for k in range(1, N + 1):
        x, total, power = r[N - k], Fraction(0), Fraction(1)
        for j in range(1, k + 1):
            power *= x
            total += (-1) ** (j + 1) * v[k - j] * power / math.factorial(j)
        v.append(total)
    return math.factorial(N) * v[N]


def rra_exact_reference(u: np.ndarray) -> float:
    """RobustRankAggreg's exact p = 1 - stuart(1 - qbeta(rho, k, L-k+1)), in rationals."""
    L = u.size
    rho = rho_scores(u[None, :])[0]
    k = np.arange(1.0, L + 1.0)
    a = betaincinv(k, L - k + 1.0, rho)
    return float(1 - stuart_exact([1 - Fraction(float(x)) for x in a]))


# --- golden files --------------------------------------------------------------------------------


def read_case(testdata, case: str):
    folder = testdata / "golden" / "rra"
    d = pd.read_csv(folder / f"{case}_lists.tsv", sep="\t")
    expected = pd.read_csv(folder / f"{case}_expected.tsv", sep="\t").set_index("gene")
    lists = [
        Ranking(name, g["gene"].tolist(), g["rank"].to_numpy(float), higher_is_better=False)
        for name, g in d.groupby("list", sort=False)
    ]
    return lists, expected


def statistic(out, name: str, genes) -> np.ndarray:
    return pd.Series(out.statistics[name], index=list(out.genes))[list(genes)].to_numpy()


@pytest.fixture(scope="module")
def partial(testdata):
    return read_case(testdata, "partial")


@pytest.fixture(scope="module")
def many(testdata):
    return read_case(testdata, "many")


@pytest.mark.parametrize(("universe", "suffix"), [(None, ""), (1000, "_n1000")])
def test_rra_and_stuart_match_r_on_partial_lists(partial, universe, suffix):
    lists, expected = partial
    genes = expected.index
    rra = aggregate(lists, "rra", universe=universe)
    assert len(rra.genes) == len(genes)  # the union; genes of no list are not materialised
    p = statistic(rra, "p_value", genes)
    np.testing.assert_allclose(p, expected["rra" + suffix], rtol=1e-12)
    np.testing.assert_allclose(
        10.0 ** -pd.Series(rra.scores, index=list(rra.genes))[list(genes)], p, rtol=1e-12
    )
    stuart = aggregate(lists, "stuart", universe=universe)
    np.testing.assert_allclose(
        statistic(stuart, "stuart_q", genes), expected["stuart" + suffix], rtol=1e-12
    )
    # R orders by Score: so does kofs (ties aside)
    order = expected["rra" + suffix].sort_values(kind="stable").index[:10]
    assert set(rra.top(10)) == set(order)


@pytest.mark.parametrize(("universe", "suffix"), [(None, ""), (1000, "_n1000")])
def test_exact_rra_p_values(partial, universe, suffix):
    lists, expected = partial
    genes = expected.index
    out = aggregate(lists, "rra", universe=universe, params={"exact": True})
    p = statistic(out, "p_value", genes)
    r = expected["rra_exact" + suffix].to_numpy()
    # R computes 1 - Q with Q near 1: its absolute error is ~1e-14, so it is relative-exact to
    # 1e-9 only for p >= 1e-4; below that the rational reference decides
    stable = r >= 1e-4
    np.testing.assert_allclose(p[stable], r[stable], rtol=1e-9)
    np.testing.assert_allclose(p, r, rtol=0, atol=1e-13)
    N = universe or len(genes)
    R = np.column_stack(
        [pd.Series(li.ranks, index=list(li.genes)).reindex(genes).to_numpy() for li in lists]
    )
    u = normalised_ranks(R, universe=N)
    smallest = np.argsort(p)[:8]
    reference = [rra_exact_reference(u[i]) for i in smallest]
    np.testing.assert_allclose(p[smallest], reference, rtol=1e-10)
    assert (
        p
        <= np.minimum(1.0, statistic(aggregate(lists, "rra", universe=N), "p_value", genes)) + 1e-15
    ).all()


def test_forty_lists_where_r_loses_precision(many):
    lists, expected = many
    genes = expected.index
    N = len(genes)
    # Bonferroni RRA has no recursion: R is exact
    rra = aggregate(lists, "rra")
    np.testing.assert_allclose(statistic(rra, "p_value", genes), expected["rra"], rtol=1e-12)
    # R's alternating Stuart recursion and its 1 - Q are garbage here (README): rationals decide
    R = np.column_stack(
        [pd.Series(li.ranks, index=list(li.genes)).reindex(genes).to_numpy() for li in lists]
    )
    q = statistic(aggregate(lists, "stuart"), "stuart_q", genes)
    picks = np.r_[np.argsort(q)[:10], np.arange(0, N, 25)]
    ref = [
        float(stuart_exact([Fraction(1) if np.isnan(x) else Fraction(int(x), N) for x in R[i]]))
        for i in picks
    ]
    np.testing.assert_allclose(q[picks], ref, rtol=1e-12)
    r_err = np.abs(expected["stuart"].to_numpy()[picks] / ref - 1)
    assert r_err.max() > 1e-3  # documents that R is not a usable reference here
    p = statistic(aggregate(lists, "rra", params={"exact": True}), "p_value", genes)
    assert ((p >= 0) & (p <= 1)).all()
    assert (expected["rra_exact"] < 0).any()  # R returns negative "p-values"
    u = normalised_ranks(R, universe=N)
    for i in np.argsort(p)[:3]:
        assert p[i] == pytest.approx(rra_exact_reference(u[i]), rel=1e-10)


# --- order-statistic kernels -------------------------------------------------------------------


@given(st.lists(st.integers(1, 997), min_size=1, max_size=12))
def test_joint_and_crossing_probabilities_are_exact(numerators):
    r = [Fraction(n, 997) for n in numerators]
    t = np.array([[float(x) for x in r]])
    assert math.exp(log_joint_lower(t)[0]) == pytest.approx(float(stuart_exact(r)), rel=1e-12)
    crossing = 1 - stuart_exact([1 - x for x in r])
    assert math.exp(log_any_lower(t)[0]) == pytest.approx(float(crossing), rel=1e-11, abs=1e-300)


def test_stuart_beyond_r_factorial_overflow():
    # 200 lists: R's factorial(200) is Inf and qStuart returns NaN; kofs stays exact
    rng = np.random.default_rng(3)
    u = np.array([rng.integers(1, 50, 200) / 1000.0, rng.integers(400, 1001, 200) / 1000.0])
    q = stuart_q(u)
    ref = [stuart_exact([Fraction(round(x * 1000), 1000) for x in row]) for row in u]
    assert q[1] == pytest.approx(float(ref[1]), rel=1e-11)
    logq = np.log(q[0]) if q[0] > 0 else None
    exact_log = math.log(ref[0].numerator) - math.log(ref[0].denominator)
    out = aggregate(
        [Ranking(f"l{j}", ["a", "b"], [u[0, j], u[1, j]], False) for j in range(3)], "stuart"
    )
    assert np.isfinite(out.scores).all()
    if logq is None:  # below the float range: the score (-log10 Q) still is exact
        from kofs.aggregate.stuart import stuart_log_q

        logq = stuart_log_q(u[:1])[0]
    assert logq == pytest.approx(exact_log, rel=1e-11)


# --- partial-list semantics ----------------------------------------------------------------------


def test_absent_gene_has_normalised_rank_one():
    # list a ranks x, y, z; list b ranks only y. N = 3 (the union).
    a = Ranking("a", ["x", "y", "z"], [1.0, 2.0, 3.0], higher_is_better=False)
    b = Ranking("b", ["y"], [1.0], higher_is_better=False)
    out = aggregate([a, b], "rra")
    np.testing.assert_array_equal(np.isnan(out.list_ranks[:, 1]), [True, False, True])
    # x: u = (1/3, 1) -> beta = (1 - (2/3)^2, 1): rho = 5/9, p = min(1, 2 rho) = 1
    # y: u = (2/3, 1/3) -> sorted (1/3, 2/3): beta_1 = 1 - (2/3)^2 = 5/9, beta_2 = 4/9 -> p = 8/9
    p = dict(zip(out.genes, out.statistics["p_value"], strict=True))
    assert p["x"] == pytest.approx(1.0)
    assert p["y"] == pytest.approx(8 / 9, rel=1e-14)
    assert p["z"] == pytest.approx(1.0)
    q = dict(zip(out.genes, out.statistics["q_value"], strict=True))
    assert q["y"] == pytest.approx(1.0)  # BH over 3 genes: min(8/9 * 3, 1 * 3/2, 1 * 3/3)
    # Stuart for y: P(U_(1) <= 1/3, U_(2) <= 2/3) = 2 (1/3)(2/3) - (1/3)^2 = 1/3
    s = aggregate([a, b], "stuart")
    assert dict(zip(s.genes, s.statistics["stuart_q"], strict=True))["y"] == pytest.approx(1 / 3)


def test_genes_in_no_list_get_p_one_not_a_small_p():
    # the defect: a gene in no list got p ~ 0.01 from the averaged bottom rank
    rng = np.random.default_rng(0)
    universe = [f"g{i}" for i in range(500)]
    lists = [
        Ranking(f"l{j}", list(rng.choice(universe, 50, replace=False)), np.arange(50.0), False)
        for j in range(5)
    ]
    out = aggregate(lists, "rra", universe=universe)
    assert len(out.genes) == 500 and out.info["universe"] == 500
    in_none = np.isnan(out.list_ranks).all(axis=1)
    assert in_none.sum() > 100
    np.testing.assert_array_equal(out.statistics["p_value"][in_none], 1.0)
    assert (out.scores[in_none] == 0).all()
    # a gene a list lacks counts as u = 1 there, not as the averaged bottom rank
    lone = np.flatnonzero((~np.isnan(out.list_ranks)).sum(axis=1) == 1)[0]
    r = np.nanmin(out.list_ranks[lone]) / 500
    assert out.statistics["p_value"][lone] == pytest.approx(min(1.0, 5 * (1 - (1 - r) ** 5)))


def test_random_completion_model_for_other_aggregators():
    a = Ranking("a", list("vwxyz"), np.arange(5.0), False)
    b = Ranking("b", list("zy"), [1.0, 2.0], False)  # n_b = 2 of N = 5: others at (3 + 5) / 2
    R = aggregate([a, b], "borda").list_ranks
    full = complete_ranks(R, universe=5)
    np.testing.assert_array_equal(full[:, 1], [4.0, 4.0, 4.0, 2.0, 1.0])
    borda = aggregate([a, b], "borda")
    np.testing.assert_array_equal(borda.scores, 2 * 6 - full.sum(axis=1))
    # a larger universe moves the bottom block: N = 9 -> (3 + 9) / 2 = 6, with genes of no list
    full9 = complete_ranks(R, universe=9)
    assert full9.shape == (9, 2) and full9[0, 1] == 6.0 and full9[8, 0] == 7.5
    mean9 = aggregate([a, b], "mean-rank", universe=9)
    np.testing.assert_allclose(-mean9.scores, full9[:5].mean(axis=1))
    em = aggregate([a, b], "em", universe=9)
    assert em.scores.shape == (5,) and np.isfinite(em.scores).all()
    assert em.weights is not None and em.weights.sum() == pytest.approx(1.0)
    assert em.info["list_lengths"] == {"a": 5, "b": 2}


def test_full_lists_are_unchanged_by_the_partial_machinery(rng):
    genes = [f"g{i}" for i in range(40)]
    lists = [Ranking(f"l{j}", genes, rng.normal(size=40), True) for j in range(4)]
    for method in AGGREGATORS.names():
        out = aggregate(lists, method)
        assert "universe" not in out.info
        assert not np.isnan(out.list_ranks).any()


@pytest.mark.slow  # every aggregator twice per example (~4 s of the fast tier for 2 examples)
@settings(max_examples=costly_examples(25))
@given(st.integers(0, 2**32 - 1))
def test_list_order_does_not_matter(seed):
    rng = np.random.default_rng(seed)
    pool = [f"g{i}" for i in range(30)]
    L = int(rng.integers(2, 5))
    lists = []
    for j in range(L):
        n = int(rng.integers(1, 30))
        genes = list(rng.choice(pool, n, replace=False))
        lists.append(Ranking(f"l{j}", genes, rng.integers(0, 5, n).astype(float), True))
    perm = list(rng.permutation(L))
    N = 30 + int(rng.integers(0, 20))
    for method in AGGREGATORS.names():
        # (posterior: the relevant-class test's simulated null of top-k lists, twenty fits of
        # these tiny lists each, is order-invariant by tests/test_aggregate_top_k_null.py)
        params = {"top_k_null": "independent"} if method == "posterior" else None
        a = aggregate(lists, method, universe=N, params=params)
        b = aggregate([lists[i] for i in perm], method, universe=N, params=params)
        sa = dict(zip(a.genes, a.scores, strict=True))
        sb = dict(zip(b.genes, b.scores, strict=True))
        assert set(sa) == set(sb)
        # every kernel sees the lists in canonical (name) order: fitted weights too (em,
        # posterior) are the same to rounding, even on tiny, nearly flat likelihoods
        np.testing.assert_allclose([sb[g] for g in sa], list(sa.values()), rtol=1e-10, atol=1e-12)
        if a.weights is not None:
            np.testing.assert_allclose(
                b.weights, np.asarray(a.weights)[perm], rtol=1e-10, atol=1e-12
            )
        for name, values in a.statistics.items():
            other = dict(zip(b.genes, b.statistics[name], strict=True))
            np.testing.assert_allclose([other[g] for g in sa], values, rtol=1e-9, atol=1e-300)


def test_bh_qvalues_count_the_universe():
    p = np.array([0.01, 0.04, 0.03])
    np.testing.assert_allclose(bh_qvalues(p), [0.03, 0.04, 0.04])
    np.testing.assert_allclose(bh_qvalues(p, n_tests=6), [0.06, 0.08, 0.08])


def test_universe_errors():
    a = Ranking("a", ["x", "y"], [1.0, 2.0], False)
    with pytest.raises(ParameterError, match="smaller than the 2 distinct genes"):
        aggregate([a], "rra", universe=1)
    with pytest.raises(ParameterError, match="not in the universe"):
        aggregate([a], "rra", universe=["x", "q"])
    with pytest.raises(ParameterError, match="repeated: a"):
        aggregate([a, a], "rra")


def test_fast_and_exact_binomial_steps_agree(rng):
    from kofs.aggregate._order_stats import _step, _step_exact, _tables

    L, m = 6, 50
    tables = _tables(L)
    state = np.log(rng.random((L + 1, m)))
    state[:2, :5] = -np.inf
    q = rng.random(m)
    q[:3] = [0.0, 1.0, 1e-300]  # nothing moves, everything moves, the exact fallback
    with np.errstate(divide="ignore"):
        exact = _step_exact(state, np.log(q), np.log1p(-q), *tables[:3])
    exact[:, 0] = state[:, 0]  # q = 0: the identity (0 * log 0 = 0 is not the exact path's job)
    np.testing.assert_allclose(_step(state, q, tables), exact, rtol=1e-12, atol=1e-12)
