"""Fits solved together (the half-sample refits) and genes collapsed into rows: the same
numbers as the fits made one by one on the genes."""

from __future__ import annotations

import numpy as np
import pytest

from kofs.aggregate import posterior, uncertainty
from kofs.aggregate.binormal import mixture_scores
from kofs.aggregate.intervals import TieBlocks, block_intervals, code_intervals
from kofs.aggregate.posterior import (
    Prior,
    _binned_log_likelihood,
    _corr_matrix,
    _Problem,
    _Stack,
    _standardise,
    fit_posterior,
)
from kofs.aggregate.uncertainty import (
    REFIT_MAX_ITER,
    REFIT_TOL,
    RESAMPLE_BINS,
    half_sample_fits,
    prepare_halves,
    tempered_fit,
)
from kofs.datasets.planted import DataList, planted_lists


def test_mixture_scores_take_a_fraction_per_element():
    rng = np.random.default_rng(0)
    u = np.concatenate([rng.random(300), [0.0, 1.0, 1e-300, 0.5]])
    mu = rng.uniform(0, 4, u.size)
    mu[::7] = 0.0
    rho = rng.uniform(0.01, 0.5, u.size)
    rho[::5] = 0.0  # no relevant class: the background quantile
    got = mixture_scores(u, mu, rho)
    want = np.array(
        [mixture_scores(np.array([a]), m, r)[0] for a, m, r in zip(u, mu, rho, strict=True)]
    )
    np.testing.assert_array_equal(got, want)


def _ranks(M: int, seed: int, data=None) -> tuple[np.ndarray, np.ndarray]:
    data = data or (DataList("good", 2.0), DataList("fair", 1.2), DataList("noise", 0.0))
    pl = planted_lists(M, M // 30, data=data, seed=seed)
    genes = list(pl.rankings[0].genes)
    R = np.column_stack(
        [np.asarray(r.ranks)[[r.genes.index(g) for g in genes]] for r in pl.rankings]
    )
    return R, np.flatnonzero(np.isin(genes, sorted(pl.relevant)))


@pytest.mark.parametrize(("covariate", "weak_hash"), [(False, False), (True, False), (True, True)])
def test_genes_collapsed_into_rows_give_the_same_step(covariate, weak_hash, monkeypatch):
    if weak_hash:  # every multiplier 1: rows with the same sum collide, and are sorted apart
        monkeypatch.setattr(posterior, "_HASH", np.ones(64, dtype=np.int64))
    # two lists on coarse bins: many genes share their (codes, covariates) row
    R, relevant = _ranks(3000, 1, (DataList("a", 1.8), DataList("b", 1.0)))
    lo, hi = block_intervals(R)
    coded = code_intervals(lo, hi, n_bins=40)
    raw = np.isin(np.arange(3000), relevant[::2]).astype(float)[:, None]  # a known-gene flag
    X, _, _ = _standardise(raw if covariate else np.zeros((3000, 0)), None)
    w = np.random.default_rng(2).uniform(0.5, 1.5, 3000)
    genes = _Problem(coded, X, w, 0.5)
    rows = _Problem(coded, X, w, 0.5, collapse=True)
    assert rows.M < genes.M / 2
    assert rows.w.sum() == pytest.approx(w.sum())
    theta = np.concatenate([[1.3, 0.7], [-2.5] + ([0.4] if covariate else []), [0.2]])
    S = _corr_matrix(theta[-1:], 2)
    (step_rows, ll_rows), (step_genes, ll_genes) = (
        _Stack([p], S).step(theta[None, :-1], likelihood=True) for p in (rows, genes)
    )
    np.testing.assert_allclose(step_rows, step_genes, atol=1e-12)  # one EM step of (mu, beta)
    np.testing.assert_allclose(ll_rows, ll_genes, atol=1e-8)
    np.testing.assert_allclose(
        rows.correlation_step(theta), genes.correlation_step(theta), atol=1e-12
    )
    assert _binned_log_likelihood(rows, theta) == pytest.approx(
        _binned_log_likelihood(genes, theta), abs=1e-8
    )


def _one_by_one(fit, R, prior, n, seed, bins, weights_of):
    """The refits of half_sample_fits made one by one with fit_posterior (the same halves)."""
    rng = np.random.default_rng(seed)
    M = R.shape[0]
    halves = [np.sort(rng.choice(M, M // 2, replace=False)) for _ in range(n)]
    blocks = TieBlocks.of(R, None)
    out = []
    for rows in halves:
        lo, hi = blocks.intervals(rows)
        sub = Prior(np.asarray(prior.X)[rows], prior.names, prior.groups)
        kw = dict(max_prior=0.5, n_bins=min(bins, RESAMPLE_BINS), exact=False)
        f = fit_posterior(
            lo, hi, sub, correlation=fit.correlation, start=fit,
            standardise=(fit.center, fit.scale), tol=REFIT_TOL, max_iter=REFIT_MAX_ITER,
            likelihood=False, **kw,
        )  # fmt: skip
        if np.any(fit.tempering < 1):
            f = tempered_fit(
                f, lo, hi, sub, fit.tempering, tol=REFIT_TOL, max_iter=REFIT_MAX_ITER,
                standardise=(fit.center, fit.scale), refit=fit.refitted, **kw,
            )  # fmt: skip
        out.append((f.mu, f.beta, weights_of(f, rows)))
    return out


@pytest.mark.parametrize(
    ("tempering", "covariate", "split"),
    [
        (None, False, False),
        (None, True, False),
        ((1.0, 0.4, 0.0), False, False),
        (None, True, True),
    ],
)
def test_stacked_refits_are_the_refits_made_one_by_one(tempering, covariate, split, monkeypatch):
    if split:  # two stacks on two threads, as for large problems
        monkeypatch.setattr(uncertainty, "SPLIT_SIZE", 1)
    R, relevant = _ranks(2400, 3)
    M = R.shape[0]
    raw = np.isin(np.arange(M), relevant[::3]).astype(float)[:, None]
    prior = Prior(raw, ("known",), ("known",)) if covariate else Prior.empty(M)
    lo, hi = block_intervals(R)
    fit = fit_posterior(lo, hi, prior, n_bins=256)
    if tempering is not None:
        fit = tempered_fit(fit, lo, hi, prior, np.array(tempering), max_prior=0.5, n_bins=256)
        assert fit.refitted

    def weights_of(f, rows):  # something of every gene of the refit
        return np.array([f.posterior.mean(), f.list_terms[:, 0].std(), len(rows)])

    halves = prepare_halves(
        R, prior, masked=None, n=6, seed=11, max_prior=0.5, n_bins=256,
        standardisation=(fit.center, fit.scale),
    )  # fmt: skip
    got = half_sample_fits(fit, halves, weights_of=weights_of)
    want = _one_by_one(fit, R, prior, 6, 11, 256, weights_of)
    np.testing.assert_allclose(got.mu, [w[0] for w in want], atol=1e-9)
    np.testing.assert_allclose(got.beta, [w[1] for w in want], atol=1e-9)
    np.testing.assert_allclose(got.weights, [w[2] for w in want], atol=1e-9)
    assert np.ptp(got.mu, axis=0).max() > 0.01  # the halves differ: the refits did move


@pytest.mark.parametrize("covariate", [False, True])
def test_fits_of_several_data_sets_solved_together_are_the_fits_made_alone(covariate):
    """fit_posteriors (the simulated null's twenty fits, solved as one stack): every data set
    gets the fit it gets alone -- its own starts, its own follower merging only with its own
    starts (a follower of one data set reaching another data set's mode must not stop), and
    its own choice of start."""
    from kofs.aggregate.posterior import fit_posteriors

    data = [
        (DataList("good", 2.0), DataList("fair", 1.2), DataList("noise", 0.0)),
        (DataList("a", 0.0), DataList("b", 0.0), DataList("c", 0.0)),  # nothing to find
        (DataList("good", 1.0), DataList("fair", 1.0), DataList("weak", 0.5)),
    ]
    sets = [block_intervals(_ranks(1500, seed, d)[0]) for seed, d in enumerate(data)]
    rng = np.random.default_rng(1)
    raw = rng.random((1500, 1))
    prior = Prior(raw, ("known",), ("known",)) if covariate else Prior.empty(1500)
    together = fit_posteriors(sets, prior, n_bins=256)
    for (lo, hi), got in zip(sets, together, strict=True):
        want = fit_posterior(lo, hi, prior, n_bins=256)
        np.testing.assert_allclose(got.mu, want.mu, atol=1e-9)
        np.testing.assert_allclose(got.beta, want.beta, atol=1e-9)
        np.testing.assert_allclose(got.log_odds, want.log_odds, atol=1e-8)
        assert got.iterations == want.iterations
    assert together[0].mu[0] > 1.0 and together[1].mu.max() < together[0].mu[0]


def test_a_follower_stops_only_on_a_mode_of_its_own_fit():
    """A follower start stops (merged) on reaching another start of its own fit; a start of
    another data set's fit at the same point is not the same mode."""
    from kofs.aggregate.posterior import solve_stacked

    lo, hi = block_intervals(_ranks(1200, 5)[0])
    prior = Prior.empty(lo.shape[0])
    X, _, _ = _standardise(prior.X, np.ones(lo.shape[0]))
    problem = _Problem(code_intervals(lo, hi, n_bins=256), X, np.ones(lo.shape[0]), 0.5)
    start = np.array([[1.0, 1.0, 1.0, -2.0]])
    there = solve_stacked([problem], np.eye(3), start, tol=1e-5, max_iter=50)[0]

    def merged(group: int) -> bool:
        out = solve_stacked(
            [problem], np.eye(3), start, tol=1e-5, max_iter=50,
            follower=np.array([True]), groups=np.array([group]), others=(there, np.array([0])),
        )  # fmt: skip
        return bool(out[3][0])

    assert merged(0) and not merged(1)


def _exact_terms_list_by_list(lo, hi, mu, rho, cal):
    """exact_list_terms as it was written list by list (each list's midpoints located on
    the grid, every interval through interval_terms)."""
    from kofs.aggregate.binormal import (
        GRID_Q,
        grid_scores_q,
        interval_terms,
        narrow,
        normal_quantiles,
        score_grid,
    )

    M, D = lo.shape
    llr, mean = np.zeros((M, D)), np.zeros((M, D))
    shift = score_grid(mu, np.where(cal, 0.0, rho) if cal.any() else rho, GRID_Q)
    for j in range(D):
        rj = 0.0 if cal[j] else rho
        s_mid = grid_scores_q(normal_quantiles(0.5 * (lo[:, j] + hi[:, j])), shift[j], GRID_Q)
        s_top, s_bot = s_mid.copy(), s_mid.copy()
        wide = ~narrow(lo[:, j], hi[:, j])
        s_top[wide] = mixture_scores(lo[wide, j], mu[j], rj)
        s_bot[wide] = mixture_scores(hi[wide, j], mu[j], rj)
        llr[:, j], _, _, mean[:, j] = interval_terms(
            lo[:, j], hi[:, j], mu[j], rho, scores=(s_top, s_bot, s_mid), calibrated=bool(cal[j])
        )
    return llr, mean


def test_exact_terms_reused_give_the_numbers_of_each_list_alone():
    """ExactTerms (the parameter-free parts made once, every list's midpoints in one pass):
    bit for bit the list-by-list terms, at every (mu, rho) it is asked for -- with ties, a
    top-k list, masked genes and a calibrated list."""
    R = _ranks(900, 7)[0].copy()
    R[:, 0] = np.ceil(R[:, 0] / 40)  # tie blocks
    R[R[:, 1] > 200, 1] = np.nan  # a top-200 list
    masked = np.zeros(R.shape, dtype=bool)
    masked[::17, 2] = True
    lo, hi = block_intervals(R, masked)
    rng = np.random.default_rng(3)
    p = rng.random(lo.shape[0]) ** 2
    lo = np.column_stack([lo, p])
    hi = np.column_stack([hi, p])
    cal = np.array([False, False, False, True])
    terms = posterior.ExactTerms(lo, hi, cal)
    for mu, rho in (([1.5, 2.0, 0.0, 1.0], 0.05), ([0.0, 0.3, 3.0, 2.5], 0.2), ([0.0] * 4, 0.1)):
        mu = np.asarray(mu)
        want = _exact_terms_list_by_list(lo, hi, mu, rho, cal)
        for got in (terms.terms(mu, rho), posterior.exact_list_terms(lo, hi, mu, rho, cal)):
            np.testing.assert_array_equal(got[0], want[0])
            np.testing.assert_array_equal(got[1], want[1])


def test_exact_terms_added_to_a_binned_fit_are_the_exact_fit():
    """with_exact_terms of a fit made with binned terms: the exact fit's terms, bit for bit."""
    lo, hi = block_intervals(_ranks(1500, 11)[0])
    prior = Prior.empty(lo.shape[0])
    start = fit_posterior(lo, hi, prior, exact=False)
    binned = fit_posterior(lo, hi, prior, start=start, exact=False, likelihood=False)
    exact = fit_posterior(lo, hi, prior, start=start)
    got = posterior.with_exact_terms(binned, lo, hi)
    for name in ("mu", "beta", "log_odds", "list_terms", "list_llr", "list_scores"):
        np.testing.assert_array_equal(getattr(got, name), getattr(exact, name))
    assert not np.array_equal(binned.log_odds, exact.log_odds)


def test_a_stack_rebuilt_as_its_fits_stop_gives_each_fit_its_own_steps():
    """Fits that stop at different steps (the stack rebuilt without them as they do): each
    ends where it ends alone, bit for bit, after as many steps."""
    from kofs.aggregate.posterior import solve_stacked

    problems = []
    for seed, M in ((1, 900), (2, 1500), (3, 1200), (4, 600)):
        lo, hi = block_intervals(_ranks(M, seed)[0])
        X, _, _ = _standardise(np.zeros((M, 0)), np.ones(M))
        problems.append(_Problem(code_intervals(lo, hi, n_bins=256), X, np.ones(M), 0.5))
    start = np.array([[1.0, 1.0, 1.0, -2.0]] * len(problems))
    theta, steps, done, _ = solve_stacked(problems, np.eye(3), start, tol=1e-6, max_iter=200)
    assert len(set(steps.tolist())) > 2  # they stop at different steps
    for k, problem in enumerate(problems):
        alone = solve_stacked([problem], np.eye(3), start[k : k + 1], tol=1e-6, max_iter=200)
        np.testing.assert_array_equal(theta[k], alone[0][0])
        assert steps[k] == alone[1][0] and done[k] == alone[2][0]


def test_halves_reusing_the_coding_of_more_lists_are_the_halves_made_anew(monkeypatch):
    """prepare_halves' reuse: the halves of some of the lists, taking those lists' coding from
    halves made of all of them (as the fusion does when it leaves a list out), are the halves
    made anew; halves of other genes (another seed) are not used."""
    from kofs.aggregate import intervals

    coded = []
    made = intervals._Coder.column
    monkeypatch.setattr(
        intervals._Coder, "column", lambda self, *a: coded.append(1) or made(self, *a)
    )
    R = _ranks(1800, 9, (DataList("a", 2.0), DataList("b", 1.0), DataList("c", 0.0)))[0].copy()
    R[:, 1] = np.ceil(R[:, 1] / 7)  # tie blocks
    R[R[:, 2] > 700, 2] = np.nan  # a top-700 list
    prior = Prior.empty(R.shape[0])
    std = _standardise(prior.X, np.ones(R.shape[0]))[1:]
    kw = dict(masked=None, n=5, max_prior=0.5, n_bins=256, standardisation=std)
    every = prepare_halves(R, prior, seed=2, **kw)
    cols = np.array([0, 2])
    want = prepare_halves(R[:, cols], prior, seed=2, **kw)
    for seed, reused in ((2, True), (3, False)):
        coded.clear()
        got = prepare_halves(R[:, cols], prior, seed=seed, reuse=(every, cols), **kw)
        assert len(coded) == (0 if reused else 5)  # (list 0: by its positions, apart)
        if not reused:
            want = prepare_halves(R[:, cols], prior, seed=seed, **kw)
        for a, b in zip(got.problems, want.problems, strict=True):
            for name in ("codes", "lo", "hi", "list_of", "offsets"):
                np.testing.assert_array_equal(getattr(a.coded, name), getattr(b.coded, name))
            np.testing.assert_array_equal(a.codes, b.codes)
            np.testing.assert_array_equal(a.w, b.w)


def test_a_full_ranking_is_ordered_as_by_a_stable_sort():
    """TieBlocks' order of a list's genes: one scatter for the ranks 1..n each once, the
    stable sort otherwise (ties, gaps, a repeated rank, ranks not from 1)."""
    from kofs.aggregate.intervals import _stable_order

    rng = np.random.default_rng(5)
    full = rng.permutation(400) + 1.0
    cases = [full, np.ceil(full / 3), full + 0.5, full + 1, np.append(full, 7.0)]
    cases += [np.array([1.0]), np.zeros(0), np.where(full == 5, 6.0, full)]
    for col in cases:
        np.testing.assert_array_equal(_stable_order(col), np.argsort(col, kind="stable"))


def test_agreement_tests_sharing_their_tails_are_the_tests_made_alone():
    """The overlap tails kept by an agreement test of all the lists give the test of some of
    them (the fusion's, after leaving one out) its numbers, read from there."""
    lo, hi = block_intervals(_ranks(3000, 13)[0])
    tails: dict = {}
    first = uncertainty.agreement_test(lo, hi, tails)
    assert first["p_value"] == uncertainty.agreement_test(lo, hi)["p_value"]
    assert len(tails) > 0
    known = dict(tails)
    got = uncertainty.agreement_test(lo[:, [0, 2]], hi[:, [0, 2]], tails)
    assert tails == known  # every tail read, none computed
    want = uncertainty.agreement_test(lo[:, [0, 2]], hi[:, [0, 2]])
    assert {k: v for k, v in got.items() if k != "correlation"} == {
        k: v for k, v in want.items() if k != "correlation"
    }
    np.testing.assert_array_equal(got["correlation"], want["correlation"])
