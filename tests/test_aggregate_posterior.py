"""The default fusion, ``posterior``: its kernels against direct computations, and its model
on planted lists with a known truth (kofs.datasets.planted)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from _planted import one_strong_equal, one_strong_ranking
from scipy.special import expit
from scipy.stats import norm, spearmanr

from kofs.aggregate import aggregate
from kofs.aggregate.binormal import (
    GRID_Q,
    GridPoints,
    interval_terms,
    log_mass,
    mixture_scores,
    normal_quantiles,
    score_grid,
)
from kofs.aggregate.intervals import (
    TieBlocks,
    _BinLocator,
    bin_edges,
    block_intervals,
    code_intervals,
    observation_intervals,
    unique_intervals,
)
from kofs.aggregate.posterior import (
    Prior,
    _pair_start,
    _Problem,
    _seen_copula,
    copula_log_density,
    fit_posterior,
    gene_terms,
    q_values,
)
from kofs.aggregate.reversed import _reversed_gain
from kofs.aggregate.sources import SHARED_NOISE, noise_sources
from kofs.aggregate.supervision import soft_label_weights
from kofs.aggregate.uncertainty import agreement_test, integrated_lfdr
from kofs.datasets.planted import DataList, KnowledgeList, planted_lists
from kofs.errors import ParameterError
from kofs.registry import DEFAULT_AGGREGATOR
from kofs.types import Ranking

# --- kernels --------------------------------------------------------------------------------


@pytest.mark.parametrize(("mu", "rho"), [(0.0, 0.1), (1.5, 0.05), (4.0, 0.3), (2.0, 0.5)])
def test_mixture_scores_invert_the_mixture(mu, rho):
    u = np.concatenate([np.geomspace(1e-12, 0.5, 40), 1 - np.geomspace(1e-12, 0.5, 40)])
    s = mixture_scores(u, mu, rho)
    upper = rho * norm.sf(s - mu) + (1 - rho) * norm.sf(s)
    lower = rho * norm.cdf(s - mu) + (1 - rho) * norm.cdf(s)
    rel = np.where(u <= 0.5, upper / u, lower / (1 - u))
    np.testing.assert_allclose(rel, 1.0, rtol=1e-9)
    assert np.all(np.diff(s[:40]) < 0)  # deeper in the list, lower score
    assert mixture_scores(np.array([0.0]), mu, rho)[0] == np.inf


def test_log_mass_matches_scipy_in_both_tails():
    a = np.array([-40.0, -3.0, 0.5, 9.0, 20.0, -np.inf])
    b = np.array([-39.0, -2.0, 0.6, 9.5, 20.1, np.inf])
    far = norm.logcdf(-39.0) + np.log1p(-np.exp(norm.logcdf(-40.0) - norm.logcdf(-39.0)))
    expected = [far, np.log(norm.cdf(-2) - norm.cdf(-3))]
    expected += [np.log(norm.cdf(0.6) - norm.cdf(0.5))]
    expected += [np.log(norm.sf(9.0) - norm.sf(9.5)), np.log(norm.sf(20.0) - norm.sf(20.1)), 0.0]
    np.testing.assert_allclose(log_mass(a, b), expected, rtol=1e-9)


@pytest.mark.parametrize("rho", [0.02, 0.3])
def test_interval_probabilities_add_up_to_the_width(rho):
    """rho P(interval | relevant) + (1 - rho) P(interval | background) = its width: the model's
    positions are uniform whatever mu (a ranking is a permutation)."""
    lo = np.array([0.0, 0.2, 0.6, 0.3])
    hi = np.array([0.05, 0.5, 1.0, 0.3 + 2e-4])
    llr, m1, m0, mean = interval_terms(lo, hi, 1.7, rho)
    s_top, s_bot = mixture_scores(lo, 1.7, rho), mixture_scores(hi, 1.7, rho)
    p1 = norm.sf(s_bot - 1.7) - norm.sf(s_top - 1.7)
    p0 = norm.sf(s_bot) - norm.sf(s_top)
    np.testing.assert_allclose(rho * p1 + (1 - rho) * p0, hi - lo, rtol=1e-7)
    np.testing.assert_allclose(llr, np.log(p1 / p0), rtol=1e-5, atol=1e-6)
    assert np.all(m1 >= m0 - 1e-12) and np.all((mean >= m0 - 1e-12) & (mean <= m1 + 1e-12))


def test_copula_density_is_the_joint_normal_over_its_margins():
    """The background copula term: log N(s; 0, S) - sum log phi(s_l), whole and on the lists
    each gene is seen in (a sub-matrix of S: a Gaussian copula's margin)."""
    from scipy.stats import multivariate_normal

    rng = np.random.default_rng(3)
    M, D = 400, 5
    s = rng.standard_normal((M, D))
    A = rng.standard_normal((D, 3 * D))
    C = A @ A.T
    S = C / np.sqrt(np.outer(np.diag(C), np.diag(C)))
    want = multivariate_normal(np.zeros(D), S).logpdf(s) - norm.logpdf(s).sum(axis=1)
    np.testing.assert_allclose(copula_log_density(s, S), want, rtol=1e-10, atol=1e-10)
    seen = rng.random((M, D)) < 0.7
    got = _seen_copula(s, seen, S)
    for i in range(M):
        cols = np.flatnonzero(seen[i])
        ref = (
            0.0
            if len(cols) < 2
            else multivariate_normal(np.zeros(len(cols)), S[np.ix_(cols, cols)]).logpdf(s[i, cols])
            - norm.logpdf(s[i, cols]).sum()
        )
        assert got[i] == pytest.approx(ref, abs=1e-9)


def test_q_values_are_the_running_mean_of_the_sorted_local_fdr():
    rng = np.random.default_rng(0)
    lfdr = np.round(rng.random(200), 2)  # ties
    q = q_values(lfdr)
    for i in range(200):
        at_least = lfdr <= lfdr[i]
        assert q[i] == pytest.approx(lfdr[at_least].mean())


def test_q_values_down_a_ranking_are_the_smallest_mean_at_or_below():
    """Down a ranking the local fdr does not follow exactly, the q-value of a gene is the
    smallest mean local fdr of a cut at or below it (ties of the ranking share their cut)."""
    rng = np.random.default_rng(1)
    score = np.round(rng.normal(size=300), 1)  # ties
    lfdr = np.clip(0.5 - 0.3 * score + rng.normal(0, 0.2, 300), 0, 1)
    q = q_values(lfdr, score)
    cuts = {t: lfdr[score >= t].mean() for t in np.unique(score)}
    for i in range(300):
        assert q[i] == pytest.approx(min(v for t, v in cuts.items() if t <= score[i]))
    assert np.array_equal(q_values(lfdr, -lfdr), q_values(lfdr))  # the lfdr's own order


def test_coded_intervals_keep_wide_blocks_whole():
    R = np.array([[1.0, np.nan], [2.0, 1.0], [3.0, np.nan], [4.0, 2.0]])
    lo, hi = block_intervals(R)
    c = code_intervals(lo, hi, n_bins=16, single=1)
    np.testing.assert_allclose(c.lo[c.codes[[0, 2], 1]], 0.5)  # "below the list": [2/4, 1]
    np.testing.assert_allclose(c.hi[c.codes[[0, 2], 1]], 1.0)


def test_unique_intervals_are_numpys_unique_rows():
    # one sort of complex numbers in place of np.unique(axis=0) (the block below a top-k list,
    # latent bounds at +-inf): the same rows, order and inverse
    rng = np.random.default_rng(3)
    lo = rng.choice([0.0, 0.1, 0.25, 0.5, -np.inf], size=500)
    hi = np.maximum(lo, rng.choice([-np.inf, 0.05, 0.3, 1.0, np.inf], size=500))
    want, back = np.unique(np.column_stack([lo, hi]), axis=0, return_inverse=True)
    ulo, uhi, inverse = unique_intervals(lo, hi)
    np.testing.assert_array_equal(np.column_stack([ulo, uhi]), want)
    np.testing.assert_array_equal(inverse, back.ravel())
    np.testing.assert_array_equal(ulo[inverse], lo)
    np.testing.assert_array_equal(uhi[inverse], hi)


def _ranks_with_ties_and_gaps(rng, M, L):
    R = np.empty((M, L))
    for j in range(L):
        R[:, j] = rng.integers(1, max(2, M // (1 + j)), M)  # ties, more in later lists
        R[rng.random(M) < 0.2 * (j % 2), j] = np.nan  # partial lists
    return R


def test_half_sample_positions_are_the_half_re_ranked():
    # the refits' positions follow from each list sorted once: the same as ranking the half
    rng = np.random.default_rng(1)
    for trial in range(6):
        M, L = 300 + 37 * trial, 4
        R = _ranks_with_ties_and_gaps(rng, M, L)
        masked = rng.random((M, L)) < 0.1 if trial % 2 else None
        blocks = TieBlocks.of(R, masked)
        for _ in range(3):
            rows = np.sort(rng.choice(M, M // 2, replace=False))
            want = block_intervals(R[rows], None if masked is None else masked[rows])
            got = blocks.intervals(rows)
            for w, g in zip(want, got, strict=True):
                np.testing.assert_array_equal(g, w)
            assert np.all(got[0] <= got[1])


def test_half_sample_coding_equals_coding_its_intervals():
    # TieBlocks.coded codes full rankings from integer positions by a table: the same codes
    # and tables as code_intervals of the half's intervals, for full rankings, tie blocks,
    # partial and masked lists and calibrated lists (their p-value intervals) alike
    rng = np.random.default_rng(3)
    for trial in range(12):
        M, L = int(rng.integers(20, 4000)), 5
        R = _ranks_with_ties_and_gaps(rng, M, L)
        R[:, 0] = rng.permutation(M) + 1.0  # full rankings without ties
        R[:, 3] = rng.permutation(M) + 1.0
        masked = rng.random((M, L)) < 0.05 if trial % 3 == 1 else None
        cal = np.array([False, False, trial % 2 == 1, False, trial % 4 == 3])
        p_lo = rng.random((M, L)) ** 4
        p_hi = np.minimum(1.0, p_lo * (1.0 + rng.random((M, L))))
        blocks = TieBlocks.of(R, masked)
        rows = np.sort(rng.choice(M, M // 2, replace=False))
        n_bins = int(rng.choice([16, 160, 512]))
        lo, hi = blocks.intervals(rows)
        lo[:, cal], hi[:, cal] = p_lo[rows][:, cal], p_hi[rows][:, cal]
        want = code_intervals(lo, hi, n_bins=n_bins, calibrated=cal)
        got = blocks.coded(
            rows, n_bins=n_bins, calibrated=cal, p_intervals=(p_lo[rows], p_hi[rows])
        )
        for field in ("codes", "lo", "hi", "list_of", "offsets"):
            w, g = getattr(want, field), getattr(got, field)
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)


def test_bins_are_located_as_by_binary_search():
    rng = np.random.default_rng(2)
    for M in (3, 99, 100, 101, 2500, 8562):
        for n_bins in (16, 160, 512):
            edges = bin_edges(M, n_bins, 100)
            x = np.concatenate(
                [rng.random(5000), edges, np.nextafter(edges, 2), np.nextafter(edges, -1)]
            )
            x = np.clip(np.concatenate([x, (np.arange(2 * M + 1)) / (2 * M)]), 0, 1)
            want = np.searchsorted(edges, x, side="right")
            np.testing.assert_array_equal(_BinLocator(edges, M)(x), want)


def test_grid_points_interpolate_as_np_interp():
    # the scores of fixed positions on the score grid, also where the grid's table is infinite
    rng = np.random.default_rng(3)
    mu = np.array([0.0, 0.4, 1.3, 3.0, 11.0])
    table = score_grid(mu, 0.05, GRID_Q[::16])
    assert not np.all(np.isfinite(table))
    grid = GRID_Q[::16]
    q = normal_quantiles(np.concatenate([rng.random(2000), [0.0, 1.0, 1e-300]]))
    q = np.concatenate([q, grid, np.nextafter(grid, 10), [-40.0, 40.0]])
    rows = rng.integers(0, len(mu), q.size)
    got = GridPoints(q, rows, grid).scores(table)
    want = q.copy()
    for i in np.flatnonzero(np.isfinite(q)):
        want[i] = q[i] + np.interp(q[i : i + 1], grid, table[rows[i]])[0]
    np.testing.assert_array_equal(got, want)


def test_integrated_lfdr_is_the_mean_lfdr_over_the_draws():
    """The integrated local fdr is the local fdr averaged over draws of the parameters (the
    same draws, made here by hand), exact where it is tiny; without parameter error it is the
    plug-in one."""
    pl = planted_lists(2000, 60, data=(DataList("a", 7.0), DataList("b", 5.0)), seed=5)
    genes = list(pl.rankings[0].genes)
    R = np.column_stack(
        [np.asarray(r.ranks)[[r.genes.index(g) for g in genes]] for r in pl.rankings]
    )
    lo, hi = block_intervals(R)
    prior = Prior.empty(R.shape[0])
    fit = fit_posterior(lo, hi, prior, n_bins=256)
    plug_in = integrated_lfdr(fit, lo, hi, prior, np.zeros((3, 3)), n_bins=256)
    assert np.array_equal(plug_in, 1.0 - fit.posterior)
    cov = np.diag([0.09, 0.04, 0.01])
    got = integrated_lfdr(fit, lo, hi, prior, cov, draws=8, seed=3, n_bins=256)
    problem = _Problem(code_intervals(lo, hi, n_bins=256), np.ones((R.shape[0], 1)),
                       np.ones(R.shape[0]), 0.5, tempering=fit.tempering)  # fmt: skip
    rng = np.random.default_rng(3)
    theta = np.concatenate([fit.mu, fit.beta])
    vals, vecs = np.linalg.eigh(cov)
    draws = [theta + (vecs * np.sqrt(vals)) @ rng.standard_normal(3) for _ in range(8)]
    want = np.zeros(R.shape[0])
    for t in draws:
        mu, beta = np.maximum(t[:2], 0.0), problem._cap(t[2:])
        llr, _, _, m = problem.terms(mu, problem.mean_prior(problem.X @ beta))
        want += expit(-(problem.X @ beta + problem.evidence(mu, fit.correlation, llr, m))) / 8
    np.testing.assert_allclose(got, want, rtol=1e-9)
    assert np.all(got > 0) and got.min() < 1e-16  # a local fdr below 1 - posterior's reach


# --- the model on planted lists -------------------------------------------------------------


GRADED_MU = (("good", 2.0), ("fair", 1.4), ("weak", 0.8))


def _weights(fused):
    return dict(zip(fused.list_names, fused.weights, strict=True))


def _precision(fused, planted, k=None):
    k = k or len(planted.relevant)
    return np.mean([g in planted.relevant for g in fused.top(k)])


@pytest.fixture(scope="module")
def graded():
    pl = planted_lists(seed=3)
    return pl, aggregate(pl.rankings, seed=0)


def test_it_is_the_default_everywhere():
    assert DEFAULT_AGGREGATOR == "posterior"
    import kofs
    from kofs.pipeline.user_lists_config import AggregateListsConfig

    assert AggregateListsConfig().aggregate == "posterior"
    assert kofs.rank(np.random.default_rng(0).normal(size=(20, 60)), bootstrap=0).final.method == (
        "posterior"
    )


def test_graded_lists_weigh_in_order_and_noise_weighs_little(graded):
    pl, fused = graded
    w = _weights(fused)
    assert w["good"] > w["fair"] > w["weak"] > 0.05
    noise = sum(v for k, v in w.items() if k.startswith("random") or k == "reversed")
    assert noise <= 0.15
    mu = dict(zip(fused.list_names, fused.info["mu"], strict=True))
    assert mu["reversed"] == 0.0 and abs(mu["good"] - 2.0) < 0.6
    ci = dict(zip(fused.list_names, fused.diagnostics["mu_ci"], strict=True))
    assert ci["good"][0] < mu["good"] < ci["good"][1]


@pytest.mark.parametrize("seed", [0, 3])
def test_twenty_random_lists_do_not_take_the_fit(seed):
    # three informative lists among 20 random ones: a start with every list alike climbed to
    # a mode of the random lists' chance agreement (log-likelihood 11 and 13 against 38 at
    # the informative lists' class; random lists 0.89 of the weight, top-90 precision 0.09
    # against 0.44 for the best list); the start from the two lists that agree most finds it
    data = (DataList("good", 2.0), DataList("fair", 1.4), DataList("weak", 0.8))
    data += tuple(DataList(f"random{k}", 0.0) for k in range(20))
    pl = planted_lists(data=data, seed=seed)
    fused = aggregate(pl.rankings, seed=0, params={"resamples": 0})
    w = _weights(fused)
    assert sum(v for k, v in w.items() if k.startswith("random")) <= 0.10
    assert w["good"] > w["weak"] and w["fair"] > w["weak"]
    k = len(pl.relevant)
    truth = np.isin(np.array(fused.genes), list(pl.relevant))
    fused_prec = truth[np.argsort(-fused.scores, kind="stable")[:k]].mean()
    best = max(
        np.isin(np.array(r.genes)[np.argsort(-np.asarray(r.scores))[:k]], list(pl.relevant)).mean()
        for r in pl.rankings[:3]
    )
    assert fused_prec >= best


def test_the_pair_start_is_the_pair_that_agrees_most():
    rng = np.random.default_rng(5)
    M, D = 2000, 8
    relevant = rng.random(M) < 0.05
    scores = rng.standard_normal((M, D))
    scores[:, 2] += 2.5 * relevant
    scores[:, 6] += 2.0 * relevant
    R = np.argsort(np.argsort(-scores, axis=0), axis=0) + 1.0
    lo, hi = block_intervals(R)
    mu = _pair_start(lo, hi)
    assert set(np.argsort(-mu)[:2].tolist()) == {2, 6}
    others = np.delete(mu, [2, 6])
    assert mu[2] > 1.0 and mu[6] > 1.0 and others.max() < 0.5


def test_the_fused_list_beats_its_best_input(graded):
    pl, fused = graded
    k = len(pl.relevant)
    best = max(
        np.mean([g in pl.relevant for g in r.top(k)])
        for r in pl.rankings
        if r.name in ("good", "fair", "weak")
    )
    assert _precision(fused, pl) > best


def test_every_gene_gets_a_posterior_a_local_fdr_and_a_q_value(graded):
    pl, fused = graded
    st = fused.statistics
    np.testing.assert_allclose(st["lfdr"], 1 - st["posterior"])
    order = fused.order()
    assert np.all(np.diff(st["q_value"][order]) >= -1e-12)  # q rises down the fused list
    assert np.all((st["q_value"] >= 0) & (st["q_value"] <= 1))
    called = st["q_value"] <= 0.1
    assert 5 <= called.sum() <= 90
    truth = np.array([g in pl.relevant for g in fused.genes])
    assert truth[called].mean() >= 0.7
    # the expected number of relevant genes is close to the planted 90
    assert 45 <= fused.info["expected_relevant"] <= 180


def test_a_relevant_class_below_one_percent_is_fitted_at_its_size():
    """12 relevant genes of 4,000 (0.3 %), three lists at separation 3: the prior is fitted
    near 0.3 %, not held at a floor of 1 % that the likeliest background genes then fill and
    are called with (a floor of 1 % gave 11 false of 50 calls over these seeds)."""
    false = calls = 0
    for seed in range(4):
        rng = np.random.default_rng(seed)
        M, k = 4000, 12
        genes = tuple(f"g{i}" for i in range(M))
        lists = [
            Ranking(f"l{j}", genes, rng.normal(size=M) + 3.0 * (np.arange(M) < k), True)
            for j in range(3)
        ]
        fused = aggregate(lists, params={"resamples": 0})
        assert 0.0015 < fused.info["prior"] < 0.006
        called = np.array([int(g[1:]) for g in fused.genes])[fused.statistics["q_value"] <= 0.10]
        false += int((called >= k).sum())
        calls += called.size
    assert calls >= 40 and false <= 6


def test_copies_of_a_list_count_once():
    """Three copies of a weak list must not outvote one good list (their agreement is their
    correlation, not evidence)."""
    pl = planted_lists(
        data=(DataList("good", 2.0), DataList("fair", 1.2), *(DataList("weak", 0.5),)), seed=1
    )
    weak = next(r for r in pl.rankings if r.name == "weak")
    copies = [Ranking(f"weak{k}", weak.genes, weak.scores, True) for k in range(3)]
    lists = [r for r in pl.rankings if r.name != "weak"] + copies
    fused = aggregate(lists, params={"resamples": 0})
    w = _weights(fused)
    assert w["good"] > sum(w[f"weak{k}"] for k in range(3))
    one = aggregate([r for r in pl.rankings], params={"resamples": 0})
    assert _precision(fused, pl) >= _precision(one, pl) - 0.1


def test_identical_lists_are_one_ranking_to_the_fusion():
    """A ranking given twice carries the information of one: the fit is the fit without the
    copy (the same fused scores and q-values, to the bit), the copies share the weight their
    ranking earns, and the copy is said to be one."""
    pl = planted_lists(data=(DataList("good", 2.0), DataList("fair", 1.2)), seed=2)
    good = next(r for r in pl.rankings if r.name == "good")
    once = aggregate(pl.rankings, params={"resamples": 4})
    twice = aggregate(
        [*pl.rankings, Ranking("good again", good.genes, good.scores, True)],
        params={"resamples": 4},
    )
    np.testing.assert_array_equal(twice.scores, once.scores)
    np.testing.assert_array_equal(twice.statistics["q_value"], once.statistics["q_value"])
    w1, w2 = _weights(once), _weights(twice)
    assert w2["good"] == w2["good again"] == pytest.approx(w1["good"] / 2)
    assert w2["fair"] == pytest.approx(w1["fair"])
    assert "the same ranking as good" in twice.diagnostics["list_notes"]["good again"]
    assert any("rank the genes identically" in n for n in twice.diagnostics["notices"])
    ci = twice.diagnostics["weight_ci"]
    names = list(twice.list_names)
    np.testing.assert_allclose(ci[names.index("good again")], ci[names.index("good")])


def test_copies_of_one_ranking_are_a_single_list():
    """Three copies of one ranking (of pure noise) are one ranking: no probability of
    relevance is learned from it (274 genes were called at q <= 0.10 when the copies' agreement
    was read as evidence)."""
    rng = np.random.default_rng(0)
    genes = [f"g{i}" for i in range(500)]
    s = rng.normal(size=500)
    fused = aggregate([Ranking(f"c{k}", genes, s, True) for k in range(3)])
    assert "q_value" not in fused.statistics
    np.testing.assert_allclose(fused.weights, 1 / 3)
    assert np.array_equal(fused.order(), np.argsort(-s, kind="stable"))


@pytest.mark.parametrize("noise", [0.001, 0.05, 0.15])
def test_near_copies_of_a_list_are_one_ranking(noise):
    """A random list, a copy of it with a little noise (normal-score correlation 0.99-1.0) and
    another random list: nothing is relevant. Fitted as three lists, the near copies were more
    alike than the model's list correlation can be (its eigenvalues are floored), and a
    spurious relevant class made up the rest: 1,300-1,600 of 3,000 genes called in two seeds of
    three. They are one ranking now (their mean normal score), with a notice."""
    M = 3000
    genes = [f"g{i}" for i in range(M)]
    for seed in (0, 2):
        rng = np.random.default_rng(seed)
        s = rng.normal(size=M)
        lists = [
            Ranking("a", genes, s, True),
            Ranking("b", genes, s + noise * rng.normal(size=M), True),
            Ranking("random", genes, rng.normal(size=M), True),
        ]
        fused = aggregate(lists, params={"resamples": 0})
        assert np.sum(fused.statistics["q_value"] <= 0.10) == 0
        w = _weights(fused)
        assert w["a"] == w["b"]
        assert any("almost identically" in n for n in fused.diagnostics["notices"])
        assert "nearly the same ranking as a" in fused.diagnostics["list_notes"]["b"]
        # the list standing for both says so as well (it read 'no say' beside b's note)
        assert "nearly the same ranking as b" in fused.diagnostics["list_notes"]["a"]


def test_near_copies_are_merged_also_in_a_larger_universe():
    """With a universe of genes no list contains (``kofs aggregate --universe``), the lists are
    still full over the genes they rank: their near copies are one ranking, and an identical
    copy counts once in the near copies' mean."""
    M = 2000
    genes = [f"g{i}" for i in range(M)]
    rng = np.random.default_rng(0)
    s = rng.normal(size=M)
    lists = [
        Ranking("a", genes, s, True),
        Ranking("a copy", genes, s, True),
        Ranking("b", genes, s + 0.05 * rng.normal(size=M), True),
        Ranking("random", genes, rng.normal(size=M), True),
    ]
    fused = aggregate(lists, params={"resamples": 0}, universe=M + 500)
    assert np.sum(fused.statistics["q_value"] <= 0.10) == 0
    w = _weights(fused)
    assert w["a"] == w["a copy"] == w["b"]
    assert any("almost identically" in n for n in fused.diagnostics["notices"])


def test_near_copies_of_an_informative_list_keep_its_evidence():
    """A good list given with a near copy of it: the fused ranking is about that of the good
    and fair lists alone, the pair shares the good list's weight; lists that are only
    correlated (r ~ 0.9) are not merged."""
    pl = planted_lists(data=(DataList("good", 2.0), DataList("fair", 1.2)), seed=4)
    good = next(r for r in pl.rankings if r.name == "good")
    rng = np.random.default_rng(0)
    twin = Ranking(
        "good twin", good.genes, good.scores + 0.05 * rng.normal(size=len(good.genes)), True
    )
    apart = Ranking(
        "good apart", good.genes, good.scores + 0.5 * rng.normal(size=len(good.genes)), True
    )
    once = aggregate(pl.rankings, params={"resamples": 0})
    twice = aggregate([*pl.rankings, twin], params={"resamples": 0})
    assert abs(_precision(twice, pl) - _precision(once, pl)) <= 0.05
    w1, w2 = _weights(once), _weights(twice)
    assert w2["good"] == w2["good twin"]
    assert w2["good"] + w2["good twin"] == pytest.approx(w1["good"], abs=0.1)
    kept = aggregate([*pl.rankings, apart], params={"resamples": 0})
    assert not any("identically" in n for n in kept.diagnostics["notices"])


def test_partial_lists_are_not_merged_by_their_correlation():
    """Only full lists are compared: two top-300 lists that nearly agree are two lists (the
    correlation of their tops is range-restricted; they enter through their intervals)."""
    pl = planted_lists(data=(DataList("good", 2.0), DataList("fair", 1.2)), seed=4)
    good = next(r for r in pl.rankings if r.name == "good")
    keep = np.argsort(-good.scores)[:300]
    genes = tuple(good.genes[i] for i in keep)
    rng = np.random.default_rng(1)
    top = [
        Ranking("top a", genes, good.scores[keep], True),
        Ranking("top b", genes, good.scores[keep] + 0.02 * rng.normal(size=300), True),
    ]
    # (the ranking and weights only: the test's simulated null for top-k lists is not needed)
    fused = aggregate([pl.rankings[1], *top], params={"resamples": 0, "top_k_null": "independent"})
    assert not any("identically" in n for n in fused.diagnostics["notices"])
    assert fused.weights[1] != fused.weights[2]


def test_the_fit_stops_where_the_likelihood_is_flat():
    """Two lists sharing noise and no relevant class: the full likelihood (with the lists'
    background copula) is flat along a ridge, and the fit stops there instead of crawling
    along it (thousands of steps before the stopping rule followed the likelihood); on clear
    signal the fit still settles its parameters."""
    rng = np.random.default_rng(0)
    M = 12_000
    z = rng.multivariate_normal([0.0, 0.0], [[1.0, 0.45], [0.45, 1.0]], size=M)
    R = np.argsort(np.argsort(-z, axis=0), axis=0) + 1.0
    lo, hi = observation_intervals(R, None, None)
    fit = fit_posterior(lo, hi, Prior.empty(M))
    assert fit.converged and fit.iterations < 300
    pl = planted_lists(data=(DataList("good", 2.5), DataList("fair", 1.8)), seed=3)
    R = np.column_stack([np.argsort(np.argsort(-r.scores)) + 1.0 for r in pl.rankings])
    lo, hi = observation_intervals(R, None, None)
    fit = fit_posterior(lo, hi, Prior.empty(len(R)))
    assert fit.converged and fit.mu[0] > fit.mu[1] > 1.0


def test_lists_sharing_false_positives_do_not_define_relevance():
    data = (
        DataList("good", 2.0),
        DataList("fair", 1.4),
        DataList("weak", 0.8),
        DataList("shared-a", 0.8, shared=0.6, group="fp"),
        DataList("shared-b", 0.8, shared=0.6, group="fp"),
    )
    pl = planted_lists(data=data, seed=2)
    fused = aggregate(pl.rankings, params={"resamples": 0})
    w = _weights(fused)
    assert w["good"] > w["shared-a"] and w["good"] > w["shared-b"]
    assert _precision(fused, pl) >= 0.4


def test_partial_lists_are_censored_below_the_list():
    pl = planted_lists(data=(DataList("good", 2.0, top=200), DataList("fair", 1.4)), seed=4)
    # (the scores only: the test's simulated null for top-k lists is not needed)
    fused = aggregate(pl.rankings, params={"resamples": 0, "top_k_null": "independent"})
    good = next(r for r in pl.rankings if r.name == "good")
    listed = set(good.genes)
    score = dict(zip(fused.genes, fused.scores, strict=True))
    fair = next(r for r in pl.rankings if r.name == "fair")
    fair_rank = dict(zip(fair.genes, fair.ranks, strict=True))
    # at the same position of the full list (or a better one, by less than 2), a gene in the
    # top-200 list outscores one absent. (Every pair, in a fixed order: the test took the
    # first 20,000 pairs of a set's hash order, a different sample in every process; where
    # the full list favours the absent gene by one position, the bottom of the partial list
    # and the block below it are evidence of about the same weight, either may win.) Far
    # below the relevant genes the envelope's decreasing histogram may pool the partial
    # list's last bin with the block below it: those pairs tie (scores equal to ~1e-9, in an
    # order the rounding of the fit decides), so a listed gene is never *below* an absent one.
    absent = [h for h in fair.genes if h not in listed]
    near = [(g, h) for g in sorted(listed) for h in absent if 0 <= fair_rank[h] - fair_rank[g] < 2]
    assert len(near) > 100 and all(score[g] > score[h] - 1e-6 for g, h in near)
    assert sum(score[g] > score[h] + 1e-6 for g, h in near) > len(near) // 2


def test_knowledge_is_a_prior_whose_strength_is_learned():
    data = (DataList("good", 1.6), DataList("fair", 1.2), DataList("weak", 0.8))
    informative = planted_lists(data=data, knowledge=(KnowledgeList("K", 1.2),), seed=5)
    null = planted_lists(data=data, knowledge=(KnowledgeList("K", 0.0, bias=1.5),), seed=5)
    for pl, helps in ((informative, True), (null, False)):
        cov = {"study bias": dict(zip(pl.genes, pl.study_bias, strict=True))}
        with_k = aggregate(pl.rankings, covariates=cov, params={"resamples": 0})
        data_only = aggregate([r for r in pl.rankings if r.name != "K"], params={"resamples": 0})
        moved = 50 - len(set(with_k.top(50)) & set(data_only.top(50)))
        odds = {r["covariate"]: r["log_odds_ratio"] for r in with_k.diagnostics["prior_effects"]}
        if helps:
            assert odds["K"] > 1.0
            assert _precision(with_k, pl) > _precision(data_only, pl)
        else:
            assert abs(odds["K"]) < 1.0
            assert moved <= 5


def test_a_list_a_user_names_as_knowledge_is_a_prior_as_kofs_knowledge_lists_are():
    """``knowledge=[name]`` (``kofs aggregate --knowledge``): a list a user brings that ranks
    genes by what is known enters as kofs's own knowledge lists do -- the same fit, bit for
    bit -- and not as evidence; genes it lacks are unknown to it, not below it."""
    data = (DataList("good", 1.6), DataList("fair", 1.2))
    pl = planted_lists(data=data, knowledge=(KnowledgeList("K", 1.2),), seed=5)
    own = aggregate(pl.rankings, params={"resamples": 0})
    brought = [replace(r, params={}) if r.name == "K" else r for r in pl.rankings]
    as_prior = aggregate(brought, knowledge=["K"], params={"resamples": 0})
    as_data = aggregate(brought, params={"resamples": 0})
    assert as_prior.genes == own.genes
    assert np.array_equal(as_prior.statistics["posterior"], own.statistics["posterior"])
    assert any(r["covariate"] == "K" for r in as_prior.diagnostics["prior_effects"])
    assert not any(r["covariate"] == "K" for r in as_data.diagnostics.get("prior_effects", []))
    # a top-300 knowledge list: the genes it lacks get the "covers" covariate, not a position
    k = next(r for r in brought if r.name == "K")
    top = Ranking("K", tuple(k.top(300)), np.arange(300, 0, -1.0), True)
    short = aggregate(
        [r for r in brought if r.name != "K"] + [top],
        knowledge=["K"],
        universe=list(pl.genes),
        params={"resamples": 0},
    )
    assert {r["covariate"] for r in short.diagnostics["prior_effects"]} >= {"K", "K covers"}
    for bad, needle in (
        ({"knowledge": ["nope"]}, "no list is named 'nope'"),
        ({"knowledge": "K"}, "as a list"),
        ({"knowledge": ["K", "good", "fair"]}, "every list is named as knowledge"),
        ({"knowledge": ["K"], "method": "borda"}, "does not use knowledge"),
    ):
        with pytest.raises(ParameterError, match=needle):
            aggregate(brought, **bad)


def test_one_data_list_is_its_own_answer():
    pl = planted_lists(data=(DataList("only", 1.5),), knowledge=(KnowledgeList("K", 1.0),), seed=0)
    fused = aggregate(pl.rankings, params={"resamples": 0})
    only = pl.rankings[0]
    assert fused.top(100) == only.top(100)
    assert "q_value" not in fused.statistics
    assert any("Only one list" in n for n in fused.diagnostics["notices"])
    # nothing is learned from one ranking: it carries the weight, no reliability is reported
    w = dict(zip(fused.list_names, fused.weights, strict=True))
    assert w == {"only": 1.0, "K": 0.0}
    assert np.isnan(fused.info["mu"]).all() and fused.info["iterations"] == 0
    # lists a user brings (no kofs ranker's): labels are no option of kofs aggregate
    notice = next(n for n in fused.diagnostics["notices"] if "Only one list" in n)
    assert "labels" not in notice and "table of p-values" in notice


def test_the_advice_of_a_notice_names_only_what_the_command_takes():
    """`kofs aggregate` of two random lists said 'give labels (--labels)', an option it does not
    have; with the lists of kofs rank without labels, labels are advised."""
    rng = np.random.default_rng(0)
    genes = tuple(f"g{j}" for j in range(400))
    lists = [Ranking(n, genes, rng.normal(size=400), True) for n in ("a", "b")]
    fused = aggregate(lists, seed=0, params={"resamples": 0})
    text = " ".join(fused.diagnostics["notices"])
    assert "no more than independent random rankings" in text
    assert "--labels" not in text and "known genes (--relevant-genes)" in text
    from kofs.aggregate.relevance import _what_to_give

    assert "--labels" in _what_to_give(True, None)
    assert "--labels" in _what_to_give(True, {"labels": False, "p_value": 1.0})
    given = _what_to_give(True, {"labels": True, "p_value": 1.0})
    assert "--labels" not in given and "Check that the labels" in given


@pytest.mark.slow
def test_knowledge_alone_is_fused_as_evidence_and_said_so():
    pl = planted_lists(
        data=(),
        knowledge=(KnowledgeList("K", 1.5, bias=0.0), KnowledgeList("J", 1.5, bias=0.0)),
        seed=0,
    )
    fused = aggregate(pl.rankings, params={"resamples": 0})
    assert any("No list was computed from the data" in n for n in fused.diagnostics["notices"])
    assert _precision(fused, pl) > 0.2


@pytest.mark.slow
def test_random_lists_are_reported_as_sharing_no_signal():
    pl = planted_lists(data=tuple(DataList(f"r{k}", 0.0) for k in range(4)), seed=6)
    fused = aggregate(pl.rankings, params={"resamples": 0})
    assert fused.diagnostics["agreement_test"]["p_value"] > 0.01
    assert any(
        "no more than independent random rankings" in n for n in fused.diagnostics["notices"]
    )


@pytest.mark.parametrize("seed", [0, 1])
def test_lists_sharing_noise_are_not_read_as_a_relevant_class(seed):
    """Four lists whose noise is 30 % shared and that rank no gene higher for being relevant
    (lists computed from one data set share noise): they agree far beyond independence, but no
    more than their correlation alone gives, so no gene is called (the fit alone called
    1,000-1,250 of 3,000 genes at q <= 0.10 here); graded informative lists still are."""
    noise = tuple(DataList(f"n{k}", 0.0, shared=0.3, group="noise") for k in range(4))
    pl = planted_lists(data=noise, seed=seed)
    fused = aggregate(pl.rankings, params={"resamples": 0})
    diag = fused.diagnostics
    assert diag["agreement_test"]["p_value"] < 1e-6  # they do agree
    assert diag["relevant_class_test"]["p_value"] > 0.05
    assert int((fused.statistics["q_value"] <= 0.10).sum()) == 0
    assert any("no more than lists sharing noise" in n for n in diag["notices"])
    graded = (DataList("good", 2.0), DataList("fair", 1.4), DataList("weak", 0.8))
    pl = planted_lists(data=graded, seed=seed)
    fused = aggregate(pl.rankings, params={"resamples": 0})
    assert fused.diagnostics["relevant_class_test"]["p_value"] < 1e-3
    called = fused.statistics["q_value"] <= 0.10
    truth = np.fromiter((g in pl.relevant for g in fused.genes), bool, len(fused.genes))
    assert called.sum() >= 10 and truth[called].mean() >= 0.7


@pytest.mark.slow
def test_top_k_lists_that_share_noise_call_no_gene():
    """Four random top-150 lists of 1,000 genes (the universe given) sharing 41 % of their
    noise -- several tools' top genes from one data set, nothing relevant: the model reads
    their overlap as a relevant class, and its test, which takes top-k lists as independent,
    passed it (99-151 calls at q <= 0.10, seeds 0-3). The test referred to
    data sets simulated with the lists' correlation (the default) calls nothing; the
    independent reading (for lists from independent data) still does, as documented; both
    runs say that the weights follow top-k lists in a notice naming them. Full rankings
    sharing noise get no such notice."""
    data = tuple(DataList(f"random{k}", 0.0, shared=0.41, group="g", top=150) for k in range(1, 5))
    pl = planted_lists(1000, 30, data=data, seed=0)
    for option, calls in (("simulated", 0), ("independent", 50)):
        fused = aggregate(
            pl.rankings,
            universe=pl.genes,
            params={"resamples": 0, "top_k_null": option},
        )
        called = int((fused.statistics["q_value"] <= 0.10).sum())
        assert called == 0 if option == "simulated" else called > calls
        test = fused.diagnostics["relevant_class_test"]
        assert ("simulations" in test) == (option == "simulated")
        notes = [n for n in fused.diagnostics["notices"] if n.startswith("Top-k lists")]
        assert len(notes) == 1 and "random1, random2, random3, random4" in notes[0]
    full = tuple(DataList(f"n{k}", 0.0, shared=0.3, group="noise") for k in range(4))
    fused = aggregate(planted_lists(data=full, seed=0).rankings, params={"resamples": 0})
    assert not any(n.startswith("Top-k lists") for n in fused.diagnostics["notices"])


def _tools_top_200(seed: int):
    """Three tools' top-200 lists (Welch t, Mann-Whitney, |fold change|) of one data set: 10
    + 10 samples, 200 of 5,000 genes (at random ids) changed by half-normal effects."""
    from scipy.stats import mannwhitneyu, ttest_ind

    rng = np.random.default_rng(seed)
    genes = np.array([f"g{i:05d}" for i in range(5000)])
    changed = rng.choice(5000, 200, replace=False)
    delta = np.zeros(5000)
    delta[changed] = np.abs(rng.normal(size=200)) * rng.choice([-1.0, 1.0], 200)
    A, B = rng.normal(size=(10, 5000)), rng.normal(size=(10, 5000)) + delta
    statistics = {
        "t": -ttest_ind(B, A, axis=0, equal_var=False)[1],
        "mann-whitney": -mannwhitneyu(B, A, axis=0)[1],
        "fold-change": np.abs(B.mean(axis=0) - A.mean(axis=0)),
    }
    lists = [
        Ranking(
            name, tuple(genes[np.argsort(-s, kind="stable")[:200]]), np.arange(200.0, 0, -1), True
        )
        for name, s in statistics.items()
    ]
    return genes, lists, set(genes[changed])


@pytest.mark.parametrize(
    ("seed", "null"),
    [(0, "independent"), pytest.param(3, "simulated", marks=pytest.mark.slow)],
)
def test_a_gene_below_correlated_top_k_lists_is_not_evidence_for_it(seed, null):
    """Top-k lists of one data set correlate (0.73-0.87 here), and the correlation correction,
    read at the mean score of a gene's interval below a list, overshot the interval's own
    evidence: a gene below every list got positive evidence, the fit half the genes relevant,
    and the envelope's histograms flattened to the background, so every gene's evidence was
    0 and the genes came out in id order (1-16 distinct scores; in an independent sweep top-200
    precision 0.035-0.07 against 0.34-0.41 for each list). Read at the interval's point of equal
    evidence, the fused top 200 is as good as the lists'."""
    genes, lists, changed = _tools_top_200(seed)
    precision = [np.mean([g in changed for g in r.genes]) for r in lists]
    # (the test's null, simulated by default, does not change the evidence: 8 s a fusion)
    params = {"resamples": 0, "top_k_null": null}
    fused = aggregate(lists, universe=list(genes), params=params)
    # the three share most of their noise: one source, which one of them stands for since the
    # twenty-fourth session (its ranking is the answer)
    (group,) = fused.diagnostics["sources"]
    assert sorted(group) == sorted(r.name for r in lists)
    top = np.asarray(fused.genes)[np.argsort(-fused.scores, kind="stable")[:200]]
    assert np.mean([g in changed for g in top]) >= min(precision) - 0.03


@pytest.mark.parametrize("mu", [1.0, 3.0, 4.4])
def test_a_gene_below_correlated_top_k_lists_is_evidence_against_it(mu):
    """The model's part of the test above (whose lists are now one source): the block below
    three top-200 lists of 5,000 genes that share 80 % of their noise, read at its mean by the
    correlation correction, came out as evidence *for* a gene below all three (+0.05 to +0.8 per
    list at separations 3-4.4). At the point of equal evidence the gene's whole term is its
    own log likelihood ratio times ``(S^-1 mu)_l / mu_l`` (binormal.interval_terms): against it."""
    D = 3
    S = np.full((D, D), 0.8)
    np.fill_diagonal(S, 1.0)
    mus = np.full(D, mu)
    below = (np.full((1, D), 200 / 5000), np.ones((1, D)))
    llr, _, _, mean = interval_terms(*below, mus[None, :], 0.04)
    terms = gene_terms(llr, mean, mus, S, np.ones(D))
    assert np.all(llr < 0) and np.all(terms < 0)
    factor = np.linalg.solve(S, mus) / mus
    np.testing.assert_allclose(terms, llr * factor, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("seed", [0, 3])
def test_a_fit_below_the_model_without_a_class_is_not_kept(seed):
    """Informative lists that share 30 % of their noise: the start of highest likelihood
    without the copula explained the shared noise by a class of 42 % of the genes whose full
    likelihood was 24 nats below that of no class at all -- not a maximum of the model, since
    that model is nested in it. Every observation being a point, the start of highest full
    likelihood is kept instead."""
    from kofs.aggregate.intervals import observation_intervals
    from kofs.aggregate.partial import partial_rank_matrix
    from kofs.aggregate.posterior import relevant_class_test

    data = tuple(
        DataList(name, mu, shared=0.3, group="noise")
        for name, mu in (("good", 2.0), ("fair", 1.4), ("weak", 0.8))
    )
    pl = planted_lists(3000, 90, data=data, seed=seed)
    _, R = partial_rank_matrix(pl.rankings)
    lo, hi = observation_intervals(R)
    fit = fit_posterior(lo, hi, Prior.empty(R.shape[0]))
    assert relevant_class_test(fit, lo, hi)["gain"] > 0
    assert 0.02 < fit.rho < 0.08  # 90 of 3,000 relevant: 0.03
    fused = aggregate(pl.rankings, params={"resamples": 0})
    assert fused.info["prior"] < 0.08


def test_lists_sharing_one_noise_factor_are_read_beyond_it():
    """Three graded lists and ten random ones, every list sharing half its noise (one
    factor): the starts read the factor as the class (every separation ~0.68, 39 % of the
    genes "relevant", fused top-90 precision 0.03, the random lists 0.75 of the weight). From
    the agreeing pair with the lists' hard-thresholded overall correlation the fit finds the
    class beyond the factor (1,245 nats higher), and the correlation correction cancels the
    factor: the fused list beats the best single list."""
    data = tuple(DataList(d, mu, shared=0.5, group="all") for d, mu in GRADED_MU) + tuple(
        DataList(f"random{k}", 0.0, shared=0.5, group="all") for k in range(10)
    )
    pl = planted_lists(3000, 90, data=data, seed=0)
    fused = aggregate(pl.rankings, params={"resamples": 0})
    w = _weights(fused)
    best = max(np.mean([g in pl.relevant for g in r.top(90)]) for r in pl.rankings[:3])
    assert _precision(fused, pl) > best + 0.1
    assert sum(v for n, v in w.items() if n.startswith("random")) < 0.1
    assert w["good"] > w["fair"] > w["weak"]


@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow)])
def test_a_reversed_list_is_evidence_of_the_class_in_its_test(seed):
    """Graded lists, six random ones and one that ranks the relevant genes last, with 30 %
    of the genes relevant: the fit from independent lists finds the class (separations near
    2.0 / 1.4 / 0.8, the reversed list at 0), but the class test's model could not explain
    the reversed list's anti-agreement, which the no-class model's correlation does: the
    test put the right fit 72-97 nats below no class, another start was kept (the reversed
    list 0.64 of the weight, fused top-900 precision 0.62 against 0.77 for the best list).
    The test's class model now has signed separations (a reversed list is evidence of the
    class, not of the ranking)."""
    from kofs.aggregate.intervals import observation_intervals
    from kofs.aggregate.partial import partial_rank_matrix
    from kofs.aggregate.posterior import relevant_class_test

    data = (
        DataList("good", 2.0),
        DataList("fair", 1.4),
        DataList("weak", 0.8),
        *(DataList(f"random{k}", 0.0) for k in range(6)),
        DataList("reversed", -1.5),
    )
    pl = planted_lists(3000, 900, data=data, seed=seed)
    _, R = partial_rank_matrix(pl.rankings)
    lo, hi = observation_intervals(R)
    fit = fit_posterior(lo, hi, Prior.empty(R.shape[0]), dependence=False)
    assert fit.mu[0] > fit.mu[1] > fit.mu[2] > 0.5 and fit.mu[-1] == 0.0
    assert relevant_class_test(fit, lo, hi)["gain"] > 50
    fused = aggregate(pl.rankings, params={"resamples": 0})
    w = dict(zip(fused.list_names, np.asarray(fused.weights), strict=True))
    assert w["reversed"] < 0.05 and w["good"] > w["fair"] > w["weak"]
    truth = np.fromiter((g in pl.relevant for g in fused.genes), bool, len(fused.genes))
    assert truth[fused.order()[:900]].mean() > 0.8


@pytest.mark.parametrize("seed", [0, 1])
def test_pure_noise_with_a_near_copy_in_a_larger_universe_calls_nothing(seed):
    """Two random rankings of 2,000 genes, one also given with a copy plus noise (correlation
    0.94, below the near-copy merge), in a universe of 2,500: the genes in no list are below
    every list at once, which the relevant-class test's null (correlation of the listed
    positions only) cannot explain. Keeping the start of highest full likelihood whenever the
    composite likelihood's choice scored below that null kept a class of half the genes here
    and called 990-1,150 genes of pure noise; the rule now holds only where every observation
    is a point. Since the twenty-fourth session the copy is left out as one source with a."""
    rng = np.random.default_rng(seed)
    genes = tuple(f"g{i}" for i in range(2000))
    a = rng.normal(size=2000)
    lists = [
        Ranking("a", genes, a, True),
        Ranking("a2", genes, a + rng.normal(scale=0.35, size=2000), True),
        Ranking("b", genes, rng.normal(size=2000), True),
    ]
    fused = aggregate(lists, universe=2500, params={"resamples": 0})
    assert int((fused.statistics["q_value"] <= 0.10).sum()) == 0
    # (the copy shares most of the noise of a: one source, one of the two stands for it)
    assert [sorted(g) for g in fused.diagnostics["sources"]] == [["a", "a2"]]


def test_agreement_test_is_calibrated_under_independence():
    rng = np.random.default_rng(0)
    p = []
    for _ in range(200):
        R = np.column_stack([rng.permutation(300) + 1.0 for _ in range(4)])
        lo, hi = block_intervals(R)
        p.append(agreement_test(lo, hi)["p_value"])
    p = np.array(p)
    # Sidak over positively dependent, discrete tests: conservative (measured 1 % at 5 %)
    assert np.mean(p <= 0.05) <= 0.07 and 0.2 < np.median(p) < 0.95
    lo, hi = block_intervals(np.column_stack([np.arange(300.0) + 1] * 2))
    assert agreement_test(lo, hi)["p_value"] < 1e-10
    r = spearmanr(np.arange(300), np.arange(300)).statistic
    assert r == pytest.approx(1.0)


def test_the_agreement_of_many_weak_lists_is_seen_and_random_ones_stay_at_chance():
    """Twenty rankings that each shift 50 of 1,000 genes by 1 SD, beside ten random ones: no
    pair agrees by much (the largest of 1,740 pair statistics gave p 0.10, so every posterior
    was averaged with a no-signal model at 0.39 and no gene was called, top-50 precision
    0.94), but the pairs' summed correlation is 12.8 SDs above chance. Under independence the
    sum is N(0, 1)."""
    rng = np.random.default_rng(0)
    genes = [f"g{i}" for i in range(1000)]
    relevant = np.arange(1000) < 50
    sums = []
    for _ in range(40):
        R = np.column_stack([rng.permutation(1000) + 1.0 for _ in range(30)])
        lo, hi = block_intervals(R)
        sums.append(agreement_test(lo, hi)["sum_statistic"])
    assert abs(np.mean(sums)) < 0.45 and 0.6 < np.std(sums) < 1.4
    lists = [
        Ranking(f"inf{j}", genes, relevant + rng.standard_normal(1000), True) for j in range(20)
    ] + [Ranking(f"rnd{j}", genes, rng.standard_normal(1000), True) for j in range(10)]
    fused = aggregate(lists, params={"resamples": 0})
    called = fused.statistics["q_value"] <= 0.10
    assert fused.diagnostics["agreement_test"]["p_value"] < 1e-10
    assert called.sum() >= 30 and (~relevant[called]).mean() <= 0.10


def test_soft_label_weights_share_what_the_samples_cannot_tell_apart():
    rng = np.random.default_rng(0)
    reps = np.column_stack(
        [rng.normal(0.8, 0.05, 500), rng.normal(0.79, 0.05, 500), rng.normal(0.3, 0.05, 500)]
    )
    w, p_best = soft_label_weights(np.array([0.8, 0.79, 0.3]), reps)
    assert w[0] == 1.0 and w[1] > 0.6 and w[2] < 0.01
    assert p_best.sum() == pytest.approx(1.0)
    w, _ = soft_label_weights(np.array([0.5, 0.25]), None)
    np.testing.assert_allclose(w, [1.0, 0.5])


def test_label_weights_temper_the_evidence():
    pl = planted_lists(data=(DataList("a", 1.5), DataList("b", 1.5), DataList("c", 1.5)), seed=7)
    even = aggregate(pl.rankings, params={"resamples": 0})
    tilted = aggregate(
        pl.rankings, list_weights={"a": 1.0, "b": 0.0, "c": 0.0}, params={"resamples": 0}
    )
    a = pl.rankings[0]
    overlap = lambda f: len(set(f.top(50)) & set(a.top(50)))  # noqa: E731
    assert overlap(tilted) > overlap(even)
    assert _weights(tilted)["a"] > 0.9


def test_tempering_is_the_discriminant_of_noisier_lists():
    """A list tempered by v is read as seen through added noise (score sqrt(v) s + noise):
    the gene terms sum to that model's linear discriminant; independent lists give the
    tempered own terms, v = 1 the untempered discriminant, v = 0 drops a list whatever its
    correlations."""
    rng = np.random.default_rng(3)
    D = 4
    A = rng.normal(size=(D, D))
    C = A @ A.T + 0.3 * np.eye(D)
    S = C / np.sqrt(np.outer(np.diag(C), np.diag(C)))
    mu = np.array([2.0, 1.0, 1.5, 0.5])
    s = rng.normal(size=(50, D)) + 0.5
    llr = mu * s - 0.5 * mu**2  # untied positions: the binormal log LR

    def discriminant(v):
        sv = np.sqrt(v)
        m = sv * mu
        Sv = S * np.outer(sv, sv) + np.diag(1 - v)
        a = np.linalg.solve(Sv, m)
        return (s * sv) @ a - 0.5 * a @ m

    for v in (np.ones(D), np.array([1.0, 0.03, 0.6, 1.0]), np.array([0.2, 1.0, 0.0, 0.9])):
        terms = gene_terms(llr, s, mu, S, v)
        np.testing.assert_allclose(terms.sum(axis=1), discriminant(v), rtol=1e-10, atol=1e-10)
    v = np.array([0.5, 0.3, 1.0, 0.8])
    np.testing.assert_allclose(gene_terms(llr, s, mu, np.eye(D), v), llr * v)
    v = np.array([1.0, 1.0, 0.0, 1.0])
    moved = s.copy()
    moved[:, 2] += 3.0  # the dropped list's scores change nothing
    np.testing.assert_allclose(gene_terms(llr, s, mu, S, v), gene_terms(llr, moved, mu, S, v))
    assert not gene_terms(llr, s, mu, S, v)[:, 2].any()


@pytest.mark.slow
def test_covariates_follow_the_genes_by_id():
    pl = planted_lists(data=(DataList("a", 1.5), DataList("b", 1.0)), seed=8)
    cov = dict(zip(pl.genes, pl.study_bias, strict=True))
    shuffled = dict(reversed(list(cov.items())))
    x = aggregate(pl.rankings, covariates={"bias": cov}, params={"resamples": 0})
    y = aggregate(pl.rankings, covariates={"bias": shuffled}, params={"resamples": 0})
    np.testing.assert_allclose(x.scores, y.scores)
    with pytest.raises(ParameterError, match="gene covariates"):
        aggregate(pl.rankings, "borda", covariates={"bias": cov})


def _one_data_sets_rankings(seed, changed=0, n=20, genes=1500, second=False, randoms=0):
    """Welch t and Mann-Whitney rankings (-log p) of one data set of ``n`` + ``n`` samples whose
    first ``changed`` genes go up by 1 SD; ``second``: the t ranking of an independent data set
    of the same genes; ``randoms`` random rankings."""
    from scipy.stats import mannwhitneyu, ttest_ind

    rng = np.random.default_rng(seed)
    ids = tuple(f"g{i:04d}" for i in range(genes))

    def data():
        A, B = rng.normal(size=(n, genes)), rng.normal(size=(n, genes))
        B[:, :changed] += 1.0
        return A, B

    A, B = data()
    out = [
        Ranking("t", ids, -np.log(ttest_ind(B, A, axis=0, equal_var=False).pvalue), True),
        Ranking("mann-whitney", ids, -np.log(mannwhitneyu(B, A, axis=0).pvalue), True),
    ]
    if second:
        A, B = data()
        out.append(Ranking("t-2", ids, -np.log(ttest_ind(B, A, axis=0).pvalue), True))
    out += [Ranking(f"random{k}", ids, rng.normal(size=genes), True) for k in range(randoms)]
    return out


def test_rankings_of_one_data_set_are_one_source():
    """Two tools' rankings of one data set share most of their noise, and their tails agree
    more than the Gaussian copula of their correlation says: the relevant-class test read that
    as a class (an independent sweep: 798-986 false calls at n = 25; here 300-500 of 2,000 genes
    beside three random lists, and with 100 changed genes 300-410 calls at FDP 0.69-0.77). They
    are now one source, which one of them stands for."""
    for lists in (_one_data_sets_rankings(0), _one_data_sets_rankings(1, randoms=3)):
        fused = aggregate(lists, params={"resamples": 0})
        q = fused.statistics.get("q_value", np.ones(len(fused.genes)))
        assert int(np.sum(q <= 0.10)) == 0
        (group,) = fused.diagnostics["sources"]
        assert sorted(group) == ["mann-whitney", "t"]
        assert dict(zip(fused.list_names, fused.weights, strict=True))[group[1]] == 0.0
        (note,) = [n for n in fused.diagnostics["notices"] if "are one source" in n]
        assert f"{group[0]} stands for both" in note
        # the one list left out is named (it read 'the others are left out')
        assert f"; {group[1]} is left out of the fusion (weight 0)" in note
    # with changed genes and no independent list: the ranking of the list that stands for them
    changed = aggregate(_one_data_sets_rankings(2, changed=60), params={"resamples": 0})
    assert "q_value" not in changed.statistics  # one ranking: no probability of relevance
    top = np.array([int(g[1:]) for g in np.asarray(changed.genes)[changed.order()[:60]]])
    assert np.mean(top < 60) > 0.5


def test_rankings_of_one_data_set_keep_calls_an_independent_data_set_confirms():
    """The same two rankings beside an independent data set's ranking and random lists, with
    60 changed genes: one of the two stands for their source, and the calls stay."""
    fused = aggregate(
        _one_data_sets_rankings(3, changed=60, second=True, randoms=3), params={"resamples": 0}
    )
    assert len(fused.diagnostics["sources"]) == 1
    called = np.array(
        [int(g[1:]) for g in np.asarray(fused.genes)[fused.statistics["q_value"] <= 0.10]]
    )
    assert called.size >= 30 and np.mean(called >= 60) <= 0.2
    # lists that share no noise are sources of their own
    independent = aggregate(planted_lists(seed=0).rankings, params={"resamples": 0})
    assert independent.diagnostics["sources"] is None
    assert not any("share most of their noise" in n for n in independent.diagnostics["notices"])


def test_lists_kofs_computed_from_one_matrix_are_not_reduced_to_one_source():
    """kofs rank's data lists all come from its matrix (their signal test, sample structure or
    label association, is the outside evidence): they stay separate lists, also where the test
    does not run (sparse or large matrices). The same lists from elsewhere are one source."""
    lists = _one_data_sets_rankings(4, changed=60, randoms=2)
    own = aggregate(
        [replace(r, params={**r.params, "ranker": "fisher"}) for r in lists],
        params={"resamples": 0},
    )
    assert own.diagnostics["sources"] is None
    weights = dict(zip(own.list_names, own.weights, strict=True))
    assert min(weights["t"], weights["mann-whitney"]) > 0
    assert aggregate(lists, params={"resamples": 0}).diagnostics["sources"] is not None


def test_lists_sharing_noise_are_grouped_into_sources_by_single_linkage():
    S = np.eye(5)
    S[0, 2] = S[2, 0] = 0.9
    S[2, 4] = S[4, 2] = SHARED_NOISE
    S[1, 3] = S[3, 1] = SHARED_NOISE - 0.01
    assert noise_sources(S) == [[0, 2, 4], [1], [3]]


def test_a_dominant_list_that_runs_against_two_agreeing_lists_gets_a_notice():
    """An independent check found a reversed list beside top-k lists taking all the weight
    (~3,500 calls at FDP 0.99) in silence. The fit is not mended by this; the reader is told."""
    rng = np.random.default_rng(0)
    genes = tuple(f"g{i}" for i in range(2000))
    signal = np.r_[np.full(400, 2.5), np.zeros(1600)]
    a, b = signal + rng.normal(size=2000), signal + rng.normal(size=2000)
    rev = -(signal + rng.normal(size=2000))
    lists = [Ranking("a", genes, a, True), Ranking("b", genes, b, True)]
    reversed_list = Ranking("rev", genes, rev, True)
    # known genes from the reversed list's top make em give it the weight
    top = [genes[i] for i in np.argsort(-rev)[:100]]
    fused = aggregate([*lists, reversed_list], "em", relevant_genes=top)
    assert dict(zip(fused.list_names, fused.weights, strict=True))["rev"] > 0.5
    (notice,) = [n for n in fused.diagnostics["notices"] if "runs against" in n]
    assert notice.startswith("'rev' carries") and "'a' and 'b'" in notice
    # a list kofs built has no file to give a direction in (kofs rank's Fisher list was told
    # to give one, FILE:COLUMN:asc|desc); one read from a file is
    assert "FILE:COLUMN" not in notice and "computed by kofs" in notice
    from_file = Ranking("rev", genes, rev, True, params={"path": "rev.tsv"})
    fused = aggregate([*lists, from_file], "em", relevant_genes=top)
    (notice,) = [n for n in fused.diagnostics["notices"] if "runs against" in n]
    assert "give its direction (FILE:COLUMN:asc|desc)" in notice
    # the same lists the right way round: no such notice
    fine = aggregate(lists + [Ranking("c", genes, signal + rng.normal(size=2000), True)])
    assert not any("runs against" in n for n in fine.diagnostics.get("notices") or [])


def _top_k_lists_and_a_reversed_list(seed, offset, reversed_quality=None):
    """10,000 genes, 100 relevant (exponential effects + ``offset``): a good list's top 200, a
    fair list's top 500, three random top-500 lists, and a full list the wrong way round: the
    fair list's own scores negated (``reversed_quality`` None) or a list of that quality's."""
    M = 10_000
    rng = np.random.default_rng(seed)
    genes = np.array([f"g{i}" for i in range(M)])
    relevant = np.zeros(M, dtype=bool)
    relevant[rng.choice(M, 100, replace=False)] = True
    effect = np.where(relevant, rng.exponential(1.0, M) + offset, 0.0)
    good = 3.0 * effect + rng.normal(size=M)
    fair = 1.5 * effect + rng.normal(size=M)

    def top(name: str, s: np.ndarray, k: int) -> Ranking:
        keep = np.argsort(-s, kind="stable")[:k]
        return Ranking(name, tuple(genes[keep]), s[keep], True)

    lists = [top("good", good, 200), top("fair", fair, 500)]
    lists += [top(f"random{j}", rng.normal(size=M), 500) for j in range(3)]
    if reversed_quality is not None:
        fair = reversed_quality * effect + rng.normal(size=M)
    lists.append(Ranking("reversed", tuple(genes), fair, False))
    return genes, relevant, lists


def test_a_reversed_full_list_beside_top_k_lists_is_left_out():
    """A reversed full list (of another list's quality, drawn apart) beside top-k lists: the
    fit kept the start whose class was the reversed list's top third (its separation 3.1, the
    prior 0.32: ~3,200 genes "relevant", the reversed list all the weight). The list that
    leads the fit is refitted reversed; read that way it fits the lists far better, and it is
    left out."""
    genes, relevant, lists = _top_k_lists_and_a_reversed_list(5, 0.5, reversed_quality=3.0)
    params = {"resamples": 0, "top_k_null": "independent"}
    fused = aggregate(lists, universe=list(genes), params=params)
    w = _weights(fused)
    assert w["reversed"] == 0.0 and w["good"] + w["fair"] > 0.9
    assert "wrong way round" in fused.diagnostics["list_notes"]["reversed"]
    called = fused.statistics["q_value"] <= 0.10
    truth = np.isin(np.asarray(fused.genes), genes[relevant])
    assert called.sum() < 150 and truth[fused.order()[:100]].mean() > 0.4


def test_a_reading_that_gives_a_list_no_say_does_not_reverse_it():
    """A random list read reversed gets separation 0: that reading is a point of the fit as
    given (the list at separation 0), so it cannot show the list runs the wrong way, whatever
    its gain (a gain above the fit's only says the fit stopped short of its mode)."""
    rng = np.random.default_rng(0)
    M = 3000
    effect = np.where(np.arange(M) < 90, 1.0, 0.0)
    scores = np.column_stack(
        [q * effect + rng.normal(size=M) for q in (3.0, 2.0, 1.5)] + [rng.normal(size=M)]
    )
    R = np.argsort(np.argsort(-scores, axis=0), axis=0) + 1.0
    lo, hi = observation_intervals(R, None, None)
    cal = np.zeros(4, dtype=bool)
    base = fit_posterior(lo, hi, Prior.empty(M), calibrated=cal)
    assert _reversed_gain(lo, hi, Prior.empty(M), cal, 3, base) == -np.inf


@pytest.mark.slow
def test_a_copy_given_the_wrong_way_round_beside_a_small_class_is_told_apart():
    """20,000 genes, 40 relevant (exponential effects), graded lists (3 / 1.5 / 0.7), six random
    lists and the quality-1.5 list's scores negated: with the class fitted at its own size
    (prior ~0.1 %) the reversed reading of the quality-1.5 list gave it separation 0 and a gain
    0.65 nats above the fit as given (which had stopped short), so the list was read as
    reversed, left out with its copy, and a random list took 0.90 of the weight (fused top-40
    precision 0; the quality-3 list's 0.375)."""
    rng = np.random.default_rng([99, 3])
    M = 20_000
    genes = tuple(f"G{i:05d}" for i in range(M))
    relevant = np.zeros(M, dtype=bool)
    relevant[rng.choice(M, size=40, replace=False)] = True
    effect = np.where(relevant, rng.exponential(1.0, size=M), 0.0)
    scores = {
        n: q * effect + rng.normal(size=M)
        for n, q in (("inf3", 3.0), ("inf1.5", 1.5), ("inf0.7", 0.7))
    }
    for j in range(6):
        scores[f"random{j + 1}"] = rng.normal(size=M)
    scores["reversed"] = -scores["inf1.5"]
    lists = [Ranking(n, genes, s, True) for n, s in scores.items()]
    fused = aggregate(lists, params={"resamples": 0})
    w = _weights(fused)
    assert w["inf1.5"] > 0.1 and w["reversed"] == 0.0
    assert sum(v for k, v in w.items() if k.startswith("random")) < 0.1
    truth = np.isin(np.asarray(fused.genes), np.asarray(genes)[relevant])
    assert truth[fused.order()[:40]].mean() >= 0.3


@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow)])
def test_a_list_given_also_the_wrong_way_round_is_left_out(seed):
    """The fair list's scores given again as a full ranking the wrong way round: it ranks the
    genes of the fair top-500 list in exactly the opposite order, which the model (separations
    >= 0) cannot read beside it; through their correlation of -1 it cancelled the fair list
    (no call, fused top-100 precision 0.01 against 0.42 for the good list), and in the
    independent check it led the class (~2,400 calls at FDP 1.00). It is left out, with a
    notice: the fusion is that of the other lists."""
    genes, relevant, lists = _top_k_lists_and_a_reversed_list([3, seed], 0.0)
    # (the relevant-class test's simulated null changes no score: 15 s a fusion)
    params = {"resamples": 0, "top_k_null": "independent"}
    fused = aggregate(lists, universe=list(genes), params=params)
    alone = aggregate(lists[:-1], universe=list(genes), params=params)
    w = _weights(fused)
    assert (
        w["reversed"] == 0.0
        and "the reverse of fair" in fused.diagnostics["list_notes"]["reversed"]
    )
    assert any("opposite order" in n for n in fused.diagnostics["notices"])
    np.testing.assert_array_equal(fused.scores, alone.scores)
    truth = np.isin(np.asarray(fused.genes), genes[relevant])
    assert truth[fused.order()[:100]].mean() > 0.3


@pytest.mark.parametrize("seed", [0, 1])
def test_the_opposite_one_sided_test_of_the_same_samples_is_left_out(seed):
    """Two-sided t-test and Mann-Whitney rankings of one matrix (2,000 genes, 5 % up), a t-test
    ranking of an independent matrix, three random rankings, and the first matrix's genes by t
    ascending (the one-sided test the wrong way round). Its top genes are the two-sided
    lists' where t is low, so with them it made a class of those genes: 314-318 calls at FDP
    0.97, 84 % of the weight. Read reversed it fits the lists better, and it is left out."""
    from scipy import stats

    rng = np.random.default_rng([4, seed])
    M = 2000
    genes = np.array([f"g{i}" for i in range(M)])
    relevant = np.zeros(M, dtype=bool)
    relevant[rng.choice(M, 100, replace=False)] = True
    effect = np.where(relevant, rng.exponential(1.0, M), 0.0)

    def matrix():
        return rng.normal(size=(M, 20)), rng.normal(size=(M, 20)) + effect[:, None]

    g1, g2 = matrix()
    t1, p1 = stats.ttest_ind(g2, g1, axis=1)
    p_mw = stats.mannwhitneyu(g2, g1, axis=1).pvalue
    _, p2 = stats.ttest_ind(*matrix()[::-1], axis=1)
    lists = [
        Ranking("t_test", tuple(genes), p1, False),
        Ranking("mann_whitney", tuple(genes), p_mw, False),
        Ranking("t_test_2", tuple(genes), p2, False),
        Ranking("reversed", tuple(genes), t1, False),
        *(Ranking(f"random{j}", tuple(genes), rng.normal(size=M), True) for j in range(3)),
    ]
    fused = aggregate(lists, params={"resamples": 0})
    w = _weights(fused)
    assert w["reversed"] == 0.0
    assert "wrong way round" in fused.diagnostics["list_notes"]["reversed"]
    called = fused.statistics["q_value"] <= 0.10
    truth = np.isin(np.asarray(fused.genes), genes[relevant])
    assert called.sum() <= 150 and (not called.any() or truth[called].mean() >= 0.85)
    assert truth[fused.order()[:100]].mean() >= 0.45


def test_a_ranking_with_tie_blocks_is_fused_as_a_full_ranking():
    """A Mann-Whitney ranking of 20 + 20 samples (tie blocks of up to 3 % of the genes) beside
    t-test rankings and random ones is a full ranking: no top-k notice, and the relevant-class
    test reads it in its copula instead of referring the statistic to 20 simulated data sets
    (13 s of 14 at 2,000 genes when the ties made it a "top-k list")."""
    from scipy import stats

    rng = np.random.default_rng([7, 1])
    M = 2000
    genes = tuple(f"g{i}" for i in range(M))
    effect = np.zeros(M)
    effect[rng.choice(M, 100, replace=False)] = rng.exponential(1.0, 100)
    g1, g2 = rng.normal(size=(M, 20)), rng.normal(size=(M, 20)) + effect[:, None]
    other = rng.normal(size=(M, 20)) + effect[:, None], rng.normal(size=(M, 20))
    lists = [
        Ranking("t_test", genes, stats.ttest_ind(g2, g1, axis=1).pvalue, False),
        Ranking("mann_whitney", genes, stats.mannwhitneyu(g2, g1, axis=1).pvalue, False),
        Ranking("t_test_2", genes, stats.ttest_ind(*other, axis=1).pvalue, False),
        *(Ranking(f"random{j}", genes, rng.normal(size=M), True) for j in range(3)),
    ]
    fused = aggregate(lists, params={"resamples": 0})
    assert "simulations" not in fused.diagnostics["relevant_class_test"]
    assert not any("Top-k lists" in n for n in fused.diagnostics["notices"])
    assert _weights(fused)["mann_whitney"] > 0


def test_a_shared_no_class_part_gives_the_test_made_anew():
    """The relevant-class test's no-class part depends on the intervals alone: made once
    (kept with the fit that chose among its starts) it gives every test on those intervals
    the numbers made anew; one made on other intervals is not used; and read with a list
    reversed it is the no-class part of the reversed intervals (the same model)."""
    from kofs.aggregate.posterior import class_null_of, relevant_class_test

    rng = np.random.default_rng(4)
    M = 2000
    effect = np.where(np.arange(M) < 80, 1.0, 0.0)
    scores = np.column_stack(
        [q * effect + rng.normal(size=M) for q in (2.5, 1.5)]
        + [rng.normal(size=M), -1.5 * effect + rng.normal(size=M)]
    )
    R = np.argsort(np.argsort(-scores, axis=0), axis=0) + 1.0
    R[::50, 1] = np.ceil(R[::50, 1] / 10) * 10  # a few ties
    lo, hi = observation_intervals(R, None, None)
    cal = np.zeros(4, dtype=bool)
    fit = fit_posterior(lo, hi, Prior.empty(M), calibrated=cal)
    assert fit.class_null is not None  # made choosing among the starts
    null = class_null_of(lo, hi, np.ones(M), cal, dependent=True)
    fresh = relevant_class_test(fit, lo, hi)
    for signed in (True, False):
        want = relevant_class_test(fit, lo, hi, signed=signed)
        assert relevant_class_test(fit, lo, hi, signed=signed, null=null) == want
        assert relevant_class_test(fit, lo, hi, signed=signed, null=fit.class_null) == want
    # made on other intervals (a copy is not the same intervals): not used
    other = class_null_of(lo[::-1].copy(), hi[::-1].copy(), np.ones(M), cal, dependent=True)
    assert not other.matches(lo, hi, np.ones(M), cal, True)
    assert relevant_class_test(fit, lo, hi, null=other) == fresh
    # list 3 read reversed
    flo, fhi = lo.copy(), hi.copy()
    flo[:, 3], fhi[:, 3] = 1.0 - hi[:, 3], 1.0 - lo[:, 3]
    flipped = fit_posterior(flo, fhi, Prior.empty(M), calibrated=cal)
    shared = null.reversed(3, flo, fhi)
    anew = class_null_of(flo, fhi, np.ones(M), cal, dependent=True)
    np.testing.assert_array_equal(shared.seen, anew.seen)
    # (up to the midpoint rule of an interval at the edge of narrow, 1 - u being rounded:
    # the exact interval mean and its midpoint's score differ by ~1e-6 there)
    np.testing.assert_allclose(shared.z, anew.z, rtol=0, atol=1e-5)
    np.testing.assert_allclose(shared.l_null, anew.l_null, rtol=1e-8)
    got = relevant_class_test(flipped, flo, fhi, null=shared)
    want = relevant_class_test(flipped, flo, fhi)
    np.testing.assert_allclose(got["gain"], want["gain"], rtol=1e-6)


def test_the_no_class_part_of_some_lists_is_theirs_in_the_part_of_all():
    """ClassNull.subset: the no-class part of some of the lists, from that of all of them (the
    fusion's test after leaving a list out), is the part made on their intervals, bit for bit;
    on other intervals it is not made."""
    from kofs.aggregate.posterior import class_null_of

    rng = np.random.default_rng(6)
    M = 1500
    effect = np.where(np.arange(M) < 60, 1.0, 0.0)
    scores = np.column_stack([q * effect + rng.normal(size=M) for q in (2.0, 1.0, 0.0, 1.5)])
    R = np.argsort(np.argsort(-scores, axis=0), axis=0) + 1.0
    R[::40, 2] = np.ceil(R[::40, 2] / 8) * 8  # a few ties
    lo, hi = observation_intervals(R, None, None)
    cal = np.zeros(4, dtype=bool)
    every = class_null_of(lo, hi, np.ones(M), cal, dependent=True)
    for cols in ([0, 1, 3], [1, 2], [2]):
        slo, shi = observation_intervals(R[:, cols], None, None)
        got = every.subset(np.array(cols), slo, shi)
        want = class_null_of(slo, shi, np.ones(M), cal[cols], dependent=len(cols) > 1)
        assert got is not None and got.matches(slo, shi, np.ones(M), cal[cols], len(cols) > 1)
        np.testing.assert_array_equal(got.z, want.z)
        np.testing.assert_array_equal(got.seen, want.seen)
        if len(cols) > 1:
            np.testing.assert_array_equal(got.S0, want.S0)
        assert got.l_null == want.l_null
    assert every.subset(np.array([1, 0]), lo[:, [0, 1]], hi[:, [0, 1]]) is None


def test_a_p_value_table_and_its_own_top_are_not_one_ranking_reversed(tmp_path, caplog):
    """A table cut to its most significant genes (p-values all below 1e-9, positions all ~0)
    beside the full table it was cut from: the one-pass correlation of their positions lost
    the cut's variance to rounding (negative) and read -1, so the cut was left out as
    reversed. Its positions are now too narrow to correlate: no list is reversed (the two are
    one source, as lists of one data set are)."""
    import logging

    import pandas as pd

    from kofs.aggregate.reversed import _score_correlations
    from kofs.pipeline.user_lists import aggregate_lists

    rng = np.random.default_rng(0)
    z = rng.normal(size=1500)
    z[:200] = np.linspace(7, 13, 200)
    p = 2 * norm.sf(np.abs(z))
    full = pd.DataFrame({"gene": [f"G{j}" for j in range(1500)], "pvalue": p})
    full.to_csv(tmp_path / "full.tsv", sep="\t", index=False)
    top = full.sort_values("pvalue").iloc[:200]
    assert top["pvalue"].max() < 1e-9
    top.to_csv(tmp_path / "top.tsv", sep="\t", index=False)
    with caplog.at_level(logging.WARNING, logger="kofs"):
        res = aggregate_lists([str(tmp_path / "full.tsv"), str(tmp_path / "top.tsv")])
    assert not any("opposite order" in r.getMessage() for r in caplog.records)
    assert not any("opposite order" in n for n in res.final.diagnostics.get("notices", []))
    lo = np.column_stack([np.linspace(0, 1e-12, 300), np.linspace(0, 1, 300)])
    r = _score_correlations(lo, lo.copy())
    assert np.isnan(r[0, 0]) and r[1, 1] == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("make", "seed", "ratio", "slack"),
    [
        (one_strong_ranking, 6, 0.5, 0.1),
        (one_strong_equal, 5, 0.2, 0.05),
        (one_strong_equal, 11, 0.2, 0.05),
    ],
)
def test_a_strong_list_beside_weak_and_random_ones_is_found_from_its_own_top(
    make, seed, ratio, slack
):
    """One strong ranking beside two weak and six random rankings. With exponential effects
    (``bench_fusion_check.py`` S8, seed 6) the pair that agrees most is the strong list and a
    weak one, but the pair start's cross means are small (0.15 / 0.21: a weak list's top holds
    few relevant genes), and every start climbed to a chance agreement of random lists (random
    lists 0.83 of the weight, fused top-90 precision 0.09 against the strong list's 0.51).
    With equal effects (S10) the list whose top agreed most with the others in all was a
    random one in seeds 5 and 11, and the fit ended in a chance agreement (separations [0, 0,
    0.13] and [0.03, 0, 2.43]; precision 0.02 / 0.07 against 0.76 / 0.71). Every full
    ranking's own top is a start, screened by a few EM steps: the strong list's class explains
    the others best."""
    R, relevant = make(seed)
    lo, hi = observation_intervals(R)
    fit = fit_posterior(lo, hi, Prior.empty(R.shape[0]))
    assert np.argmax(fit.mu) == 0
    assert fit.mu[3:].max() < ratio * fit.mu[0]
    fused = np.argsort(-fit.log_odds, kind="stable")[:90]
    strong = np.argsort(R[:, 0])[:90]
    assert relevant[fused].mean() >= relevant[strong].mean() - slack


def test_the_null_region_tells_shared_noise_from_shared_effects():
    """Two lists' p-values where neither finds anything (both > 0.5) correlate as their noise
    does: two tests of one data set (z-scores' noise correlated 0.9) read clearly above 0
    there (0.22: two-sided p-values fold the z-scores), two independent studies of a contrast
    that changes 60 % of the genes (their p-values' normal scores correlated ~0.5 overall,
    through the effects) ~0 (a 5 % test: below its critical value in most seeds)."""
    from scipy.stats import norm

    from kofs.aggregate.sources import NULL_REGION_LR, null_region_correlation

    rng = np.random.default_rng(0)
    n = 6000
    common = rng.normal(size=n)
    z1 = 0.9**0.5 * common + 0.1**0.5 * rng.normal(size=n)
    z2 = 0.9**0.5 * common + 0.1**0.5 * rng.normal(size=n)
    r, stat, kept = null_region_correlation(2 * norm.sf(np.abs(z1)), 2 * norm.sf(np.abs(z2)))
    assert r > 0.15 and stat > 10 * NULL_REGION_LR and kept > 500
    shared = []
    for seed in range(5):
        rng = np.random.default_rng(seed)
        effect = rng.normal(0.0, 2.0, n) * (rng.random(n) < 0.6)
        p1 = 2 * norm.sf(np.abs(effect + rng.normal(size=n)))
        p2 = 2 * norm.sf(np.abs(effect + rng.normal(size=n)))
        assert np.corrcoef(norm.isf(p1), norm.isf(p2))[0, 1] > 0.4
        r, stat, _ = null_region_correlation(p1, p2)
        assert abs(r) < 0.1
        shared.append(stat >= NULL_REGION_LR)
    assert sum(shared) <= 1


@pytest.mark.slow  # (the real data's t-tests and two fusions: ~6 s)
def test_independent_halves_of_a_dense_contrast_are_not_one_source(shared_data):
    """Two disjoint random halves of the ALL samples, B vs T in each, p-values alone: the fit
    correlated them 0.52 (their shared effects: thousands of genes differ between B and T
    cells), and one half was left out as one source with the other ("several tools' analyses
    of one data set"); their null genes' p-values are unrelated, so both are fused."""
    import pandas as pd
    from scipy.stats import ttest_ind

    X = pd.read_csv(shared_data / "ALL" / "ALL_gene_expr.tsv.gz", sep="\t", index_col=0)
    samples = pd.read_csv(shared_data / "ALL" / "ALL_samples.tsv", sep="\t", dtype=str)
    lineage = samples.set_index("sample_id").lineage.str[0]
    num = X.select_dtypes("number")
    lab = lineage.loc[num.columns].to_numpy()
    half = np.random.default_rng(1).permutation(num.shape[1]) < num.shape[1] // 2
    lists = []
    for k, m in enumerate((half, ~half)):
        x, lk = num.to_numpy()[:, m], lab[m]
        p = ttest_ind(x[:, lk == "B"], x[:, lk == "T"], axis=1, equal_var=False).pvalue
        lists.append(
            Ranking(
                f"h{k}", tuple(map(str, num.index)), p, False, info={"null": {"distribution": "p"}}
            )
        )
    fused = aggregate(lists, params={"resamples": 0})
    assert fused.diagnostics["sources"] is None
