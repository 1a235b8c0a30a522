"""The relevant-class test's null for top-k lists by simulation (kofs.aggregate.top_k_null)."""

from __future__ import annotations

import numpy as np
import pytest

from kofs.aggregate.intervals import observation_intervals
from kofs.aggregate.top_k_null import (
    _tetrachoric,
    _upper_orthant,
    latent_correlation,
    top_k_lists,
)


@pytest.mark.parametrize("r", [-0.6, 0.0, 0.3, 0.9])
def test_the_orthant_probability_is_sheppards_at_the_origin(r):
    """P(Z1 > 0, Z2 > 0) = 1/4 + arcsin(r) / (2 pi) (Sheppard 1899), and the independent case
    is the product of the margins."""
    assert _upper_orthant(0.0, 0.0, r) == pytest.approx(0.25 + np.arcsin(r) / (2 * np.pi), 1e-9)
    assert _upper_orthant(1.0, -0.5, 0.0) == pytest.approx(0.158655254 * 0.691462461, 1e-8)
    assert _tetrachoric(_upper_orthant(1.2, 0.7, r), 1.2, 0.7) == pytest.approx(r, abs=1e-5)


def test_the_latent_correlation_of_full_and_top_k_lists_is_recovered():
    """Four lists of 20,000 genes with a known latent correlation, two of them cut to their
    top 3,000 and 2,000: each pair's estimate (normal scores, the mean score in a top, the
    overlap of two tops) within 0.03 of the truth."""
    rng = np.random.default_rng(0)
    M = 20_000
    S = np.array(
        [[1, 0.5, 0.4, 0.3], [0.5, 1, 0.41, 0.2], [0.4, 0.41, 1, 0.35], [0.3, 0.2, 0.35, 1]]
    )
    Z = rng.multivariate_normal(np.zeros(4), S, size=M)
    R = np.empty_like(Z)
    R[np.argsort(-Z, axis=0), np.arange(4)] = np.arange(1.0, M + 1)[:, None]
    R[R[:, 2] > 3000, 2] = np.nan
    R[R[:, 3] > 2000, 3] = np.nan
    lo, hi = observation_intervals(R)
    assert top_k_lists(lo, hi).tolist() == [False, False, True, True]
    assert np.max(np.abs(latent_correlation(lo, hi) - S)) < 0.03


def test_the_latent_spread_of_an_interval_is_the_truncated_normal_one():
    """latent_sd is the standard deviation of N(0, 1) truncated to the interval's scores
    (scipy.stats.truncnorm), in both tails and in the middle; the widest point at an end
    spreads 0.31."""
    from scipy.special import ndtri
    from scipy.stats import truncnorm

    from kofs.aggregate.binormal import POINT_SD, latent_sd

    lo = np.array([0.0, 0.49, 0.2, 0.9, 0.999999, 0.0, 1e-9, 0.5])
    hi = np.array([0.01, 0.51, 0.6, 1.0, 1.0, 1e-12, 2e-9, 1.0])
    want = truncnorm.std(-ndtri(hi), -ndtri(lo))
    assert latent_sd(lo, hi) == pytest.approx(want, rel=1e-7)
    assert latent_sd(0.3, 0.3) == 0.0
    assert POINT_SD == pytest.approx(0.3112, abs=1e-4)


def test_a_full_ranking_with_tie_blocks_is_not_a_top_k_list():
    """A Mann-Whitney ranking of 20 + 20 samples ties its genes in blocks of up to 3 % of the
    genes: fewer than half of them are narrower than a point, but each block's latent score
    spreads less than a point's at an end, so the copula reads them (at their mean) and the
    list is a full ranking; the block below a top-800 list of 2,000 genes is no point."""
    from scipy import stats

    from kofs.aggregate.binormal import POINT_WIDTH, copula_points

    rng = np.random.default_rng(1)
    p = stats.mannwhitneyu(rng.normal(size=(2000, 20)), rng.normal(size=(2000, 20)), axis=1).pvalue
    R = np.column_stack([stats.rankdata(p), stats.rankdata(rng.normal(size=2000))])
    R[R[:, 1] > 800, 1] = np.nan
    lo, hi = observation_intervals(R)
    assert ((hi - lo)[:, 0] <= POINT_WIDTH).mean() < 0.5  # mostly in tie blocks
    assert copula_points(lo, hi)[:, 0].all()
    assert copula_points(lo, hi)[:, 1].tolist() == (R[:, 1] <= 800).tolist()
    assert top_k_lists(lo, hi).tolist() == [False, True]


def _sets_and_a_top_list() -> list:
    """Two unranked random gene sets of 30 and a ranked random top-600 list of 1,500 genes."""
    from kofs.types import Ranking

    rng = np.random.default_rng(0)
    pool = [f"g{i}" for i in range(1500)]
    sets = [tuple(rng.choice(pool, 30, replace=False)) for _ in range(2)]
    return [
        Ranking("set a", sets[0], np.ones(30), True),
        Ranking("set b", sets[1], np.ones(30), True),
        Ranking("ranked", tuple(pool[:600]), rng.normal(size=600), True),
    ]


@pytest.mark.slow
def test_gene_sets_are_simulated_as_sets():
    """Two unranked gene sets of 30 (one tie block each, no point) and a ranked top-600
    list, all random, in a universe of 1,500: the simulated data sets take each list's own
    observations (its tie block, its block below), so the null is the lists' shape. Cut by the
    count of points instead, the sets were empty in every simulation, the null had no spread
    and the test read p = 1/21 on noise."""
    from kofs.aggregate import aggregate

    lists = _sets_and_a_top_list()
    test = aggregate(lists, universe=1500, params={"resamples": 0}).diagnostics[
        "relevant_class_test"
    ]
    # the statistic below the first ten simulations' mean: settled there (p > 1/2)
    assert test["simulations"] == 10 and test["null_sd"] > 0 and test["p_value"] > 0.5
    # without a universe the genes are the lists' union (every gene listed somewhere), which
    # simulated lists cut from one universe would not reproduce: no simulation
    union = aggregate(lists, params={"resamples": 0}).diagnostics["relevant_class_test"]
    assert "simulations" not in union


@pytest.mark.slow
def test_the_simulated_null_does_not_depend_on_the_lists_order():
    """The simulated data sets are drawn for the lists in a canonical order: the test's
    result is the same whatever order the lists are given in."""
    from kofs.aggregate import aggregate

    lists = _sets_and_a_top_list()
    tests = [
        aggregate(ls, universe=1500, params={"resamples": 0}).diagnostics["relevant_class_test"]
        for ls in (lists, lists[::-1], [lists[2], lists[0], lists[1]])
    ]
    assert "simulations" in tests[0] and tests[0] == tests[1] == tests[2]


def test_an_interrupt_does_not_wait_for_the_simulated_null(monkeypatch):
    """The simulated null runs on the side thread for minutes on large universes: after
    SIGTERM kofs said "terminated" and went on for 70-180 s waiting for it. An interrupt in
    the main thread now leaves without waiting for the running side task."""
    import threading
    import time

    import kofs.aggregate.relevance as relevance
    from kofs.aggregate import aggregate
    from kofs.types import Ranking

    release = threading.Event()
    started = threading.Event()

    def slow_null(observed, *args, **kwargs):
        started.set()
        release.wait(60)
        return observed

    def interrupted(*args, **kwargs):
        started.wait(10)
        raise KeyboardInterrupt

    monkeypatch.setattr(relevance, "simulated_class_test", slow_null)
    monkeypatch.setattr(relevance, "half_sample_fits", interrupted)
    rng = np.random.default_rng(0)
    pool = [f"g{i}" for i in range(2000)]
    lists = [Ranking(f"top{j}", tuple(rng.permutation(pool)[:300]), np.arange(300.0), False)
             for j in range(3)]  # fmt: skip
    t0 = time.perf_counter()
    try:
        with pytest.raises(KeyboardInterrupt):
            aggregate(lists, universe=2000)
        assert time.perf_counter() - t0 < 30 and not release.is_set()
    finally:
        release.set()


@pytest.mark.slow
def test_top_k_lists_that_agree_for_real_are_called_and_noise_that_they_share_is_not():
    """Two informative top-200 lists (separations 2 and 1.4), a weak full ranking and two random
    ones, 60 of 2,000 genes relevant: the class test's statistic is the composite likelihood
    ratio of the class against the lists' correlation alone, so the overlap that correlation
    explains earns nothing and a real class stands out of its null (statistic 16 against a
    null of 2.5 +- 2; 13 calls at FDP 0.08). With the full-likelihood gain as the statistic
    (before the thirty-fourth session) simulated correlated lists gained as much as the real
    class (50 against 14 +- 13) and nothing was called. Four random top-200 lists sharing 41 %
    of their noise stay without a call."""
    from kofs.aggregate import aggregate
    from kofs.datasets.planted import DataList, planted_lists

    data = (
        DataList("good", 2.0, top=200),
        DataList("fair", 1.4, top=200),
        DataList("weak", 0.8),
        DataList("random1", 0.0),
        DataList("random2", 0.0),
    )
    pl = planted_lists(2000, 60, data=data, seed=2)
    fused = aggregate(list(pl.rankings), universe=pl.genes, params={"resamples": 0})
    test = fused.diagnostics["relevant_class_test"]
    assert test["simulations"] in (10, 20)
    assert test["statistic"] > test["null_mean"] + 5 * test["null_sd"]
    truth = np.fromiter((g in pl.relevant for g in fused.genes), bool)
    called = np.asarray(fused.statistics["q_value"]) <= 0.10
    assert called.sum() >= 5 and (~truth[called]).mean() <= 0.2

    noise = tuple(DataList(f"n{k}", 0.0, shared=0.41, group="noise", top=200) for k in range(4))
    pl = planted_lists(2000, 60, data=noise, seed=2)
    fused = aggregate(list(pl.rankings), universe=pl.genes, params={"resamples": 0})
    assert fused.diagnostics["relevant_class_test"]["p_value"] > 0.05
    assert not (np.asarray(fused.statistics["q_value"]) <= 0.10).any()


def test_the_second_stage_of_simulations_is_the_one_stage_test(monkeypatch):
    """The simulations are made in two stages, each with its own random stream: a test that
    goes on to the second stage is the twenty-simulation test, and one settled after the
    first is those ten simulations' test (its statistic the same). The p-value is the
    predictive t's, above the normal plug-in's."""
    from scipy.special import ndtr as ndtr_

    import kofs.aggregate.top_k_null as top_k_null
    from kofs.aggregate.intervals import observation_intervals
    from kofs.aggregate.posterior import Prior, fit_posterior

    rng = np.random.default_rng(3)
    M = 600
    relevant = rng.random(M) < 0.05
    R = np.empty((M, 3))
    for j, mu in enumerate((2.0, 1.5, 0.0)):
        z = rng.normal(size=M) + mu * relevant
        R[np.argsort(-z), j] = np.arange(1.0, M + 1)
    R[R > 100] = np.nan  # three top-100 lists
    lo, hi = observation_intervals(R)
    prior = Prior.empty(M)
    options = {"max_prior": 0.5, "dependence": True, "n_bins": 512}
    fit = fit_posterior(lo, hi, prior, **options)
    observed = {"statistic": 0.0, "df": 4.0, "p_value": 1.0, "gain": 0.0}

    def test(settled_p: float, n: int = 20) -> dict:
        monkeypatch.setattr(top_k_null, "SETTLED_P", settled_p)
        return top_k_null.simulated_class_test(
            observed, fit, lo, hi, prior, fit_options=options, n=n
        )

    two = test(0.0)  # never settled (the statistic above the null mean)
    assert two["statistic"] > two["null_mean"] and two["simulations"] == 20
    one = test(1.0)  # always settled after the first stage
    assert one["simulations"] == 10 and one["statistic"] == two["statistic"]
    assert test(1.0, n=10)["null_mean"] == one["null_mean"]
    # the reference is the predictive t of one more draw: wider than the normal plug-in
    t, stats = 3.0, np.array([-1.0, 0.5, 0.0, 1.0, -0.5, 0.2, -0.2, 0.8, -0.8, 0.0])
    z = (t - stats.mean()) / stats.std(ddof=1)
    assert top_k_null._reference_p(t, stats) > float(ndtr_(-z))
