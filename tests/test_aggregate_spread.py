"""Effects of varying size in p-value tables: the effect scale ``lambda ~ N+(1, tau2)`` shared
by a gene's calibrated lists (kofs.aggregate.posterior, "Effects of varying size")."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import integrate
from scipy.stats import chi2, norm

import kofs.aggregate.posterior as posterior
from kofs import aggregate_lists
from kofs.aggregate.binormal import spread_log_lr, spread_moments
from kofs.aggregate.posterior import Prior, fit_posterior, relevant_class_test


def _bh(p: np.ndarray) -> np.ndarray:
    m = len(p)
    o = np.argsort(p)
    q = np.empty(m)
    q[o] = np.minimum.accumulate((p[o] * m / np.arange(1, m + 1))[::-1])[::-1]
    return q


def _studies(seed: int, kind: str, D: int = 2, M: int = 4000, shared: float = 0.0):
    """D studies' z-scores of M genes, 200 relevant, their effects (SD units) shared by the
    studies and of either sign: Gamma(2, 1.25), or every one 2.5 (``equal``); the studies
    share a fraction ``shared`` of their noise."""
    rng = np.random.default_rng(seed)
    truth = np.zeros(M, bool)
    truth[rng.choice(M, 200, replace=False)] = True
    effect = rng.gamma(2, 1.25, M) if kind == "gamma" else np.full(M, 2.5)
    signal = np.where(truth, rng.choice([-1, 1], M) * effect, 0.0)
    common = rng.normal(size=M)
    noise = [np.sqrt(shared) * common + np.sqrt(1 - shared) * rng.normal(size=M) for _ in range(D)]
    return truth, np.column_stack([signal + e for e in noise])


def _p(Z: np.ndarray) -> np.ndarray:
    return 2 * norm.sf(np.abs(Z))


def _fit(p: np.ndarray):
    return fit_posterior(p, p, Prior.empty(p.shape[0]), calibrated=np.ones(p.shape[1], bool))


@pytest.mark.parametrize(("a", "c", "tau2"), [(2.0, 3.0, 0.5), (-3.0, 2.0, 2.0), (10.0, 20.0, 4.0)])
def test_the_integrated_likelihood_ratio_and_moments_are_the_integrals(a, c, tau2):
    """``E_lambda exp(lambda a - lambda^2 c / 2)`` over ``N+(1, tau2)``, and lambda's
    posterior moments, against numerical integrals."""
    sd = np.sqrt(tau2)

    def f(lam):
        return np.exp(lam * a - lam * lam * c / 2) * norm.pdf(lam, 1, sd) / norm.cdf(1 / sd)

    mass = integrate.quad(f, 0, np.inf)[0]
    first = integrate.quad(lambda x: x * f(x), 0, np.inf)[0] / mass
    second = integrate.quad(lambda x: x * x * f(x), 0, np.inf)[0] / mass
    assert float(spread_log_lr(np.array(a), c, tau2)) == pytest.approx(np.log(mass), abs=1e-9)
    e1, e2 = spread_moments(np.array([a]), c, tau2)
    assert e1[0] == pytest.approx(first, rel=1e-7) and e2[0] == pytest.approx(second, rel=1e-7)
    # tau2 = 0: the linear discriminant, and lambda = 1
    assert float(spread_log_lr(np.array(a), c, 0.0)) == a - c / 2
    assert spread_moments(np.array([a]), c, 0.0)[0][0] == 1.0


def test_p_value_tables_with_effects_of_varying_size_approach_fishers_power(tmp_path):
    """Two studies' p-value tables (no fold changes), Gamma effects shared: the fusion's calls
    at q <= 0.10 come near Fisher's combination + BH, with the FDP within the bound (over these
    seeds, before the spread: 230 calls at FDP 0.004 against Fisher's 299 at 0.087; with it 289
    at 0.062)."""
    genes = np.array([f"g{i}" for i in range(4000)])
    calls = fisher_calls = false = 0
    for seed in range(3):
        truth, Z = _studies(seed, "gamma")
        P = _p(Z)
        paths = []
        for j in range(2):
            path = tmp_path / f"s{seed}_{j}.tsv"
            pd.DataFrame({"gene": genes, "pvalue": P[:, j]}).to_csv(path, sep="\t", index=False)
            paths.append(str(path))
        fused = aggregate_lists(paths).final
        q = pd.Series(np.asarray(fused.statistics["q_value"]), index=list(fused.genes))
        sel = q.reindex(genes).fillna(1.0).to_numpy() <= 0.10
        calls += int(sel.sum())
        false += int((sel & ~truth).sum())
        fisher_calls += int((_bh(chi2.sf(-2 * np.log(P).sum(axis=1), 4)) <= 0.10).sum())
    assert calls >= 0.9 * fisher_calls
    assert false / calls <= 0.12


def test_the_spread_is_fitted_and_tested_as_one_more_parameter():
    truth, Z = _studies(0, "gamma")
    p = _p(Z)
    fit = _fit(p)
    assert fit.spread > 0
    # the relevant mean is mu E[lambda]: the relevant genes' mean score, not mu alone
    sd = np.sqrt(fit.spread)
    mean_lambda = 1 + sd * norm.pdf(1 / sd) / norm.cdf(1 / sd)
    observed = fit.list_scores[truth].mean(axis=0)
    assert np.allclose(fit.mu * mean_lambda, observed, rtol=0.25)
    # the lists' evidence sums to the integrated log LR
    assert np.allclose(fit.list_terms.sum(axis=1), fit.log_odds - fit.prior_log_odds)
    test = relevant_class_test(fit, p, p)
    assert test["df"] == 2 + 1 + 1 and test["p_value"] < 1e-10


@pytest.mark.parametrize("D", [1, 2])
def test_equal_effects_keep_the_fit_without_spread(D, monkeypatch):
    """Every effect 2.5 SD: tau2 stays ~0 (at most the grid's first point above 0: a two-sided
    p-value's normal score of one shift is not quite normal, and two tables may show it), and
    where it is 0 the fit is the one without the spread, to the last digit."""
    zero = 0
    for seed in range(3):
        _, Z = _studies(seed, "equal", D=D)
        p = _p(Z)
        fit = _fit(p)
        assert fit.spread <= posterior.SPREAD_GRID[1]
        if fit.spread == 0.0:
            zero += 1
            with monkeypatch.context() as m:
                m.setattr(posterior, "SPREAD_GRID", (0.0,))
                plain = _fit(p)
            assert np.array_equal(fit.log_odds, plain.log_odds)
            assert np.array_equal(fit.mu, plain.mu)
    assert zero >= 2


def test_tables_that_share_noise_and_cut_tables_keep_tau2_at_zero():
    """Tables sharing 60 % of their noise: the Gaussian copula misreads the tails of their
    two-sided p-values' normal scores, and the spread takes those tails for relevant genes
    (FDP 0.17 against 0.06): tau2 = 0. A table cut to its top genes: interval observations,
    tau2 = 0."""
    _, Z = _studies(0, "gamma", shared=0.6)
    assert _fit(_p(Z)).spread == 0.0
    _, Z = _studies(0, "gamma")
    p = _p(Z)
    lo, hi = p.copy(), p.copy()
    below = p[:, 0] > np.sort(p[:, 0])[300]
    lo[below, 0], hi[below, 0] = np.sort(p[:, 0])[300], 1.0
    fit = fit_posterior(lo, hi, Prior.empty(len(p)), calibrated=np.ones(2, bool))
    assert fit.spread == 0.0


def test_genes_a_table_lacks_keep_the_spread_over_the_tables_that_have_them():
    """A table without 200 of the 4,000 genes: those genes' evidence is the other table's, and
    the fit keeps its spread (before: such a pair fell back to tau2 = 0, 73 calls where the
    whole pair made 91)."""
    truth, Z = _studies(0, "gamma")
    p = _p(Z)
    lo, hi = p.copy(), p.copy()
    lo[:200, 1], hi[:200, 1] = 0.0, 1.0
    prior = Prior.empty(len(p))
    whole = _fit(p)
    fit = fit_posterior(lo, hi, prior, calibrated=np.ones(2, bool))
    assert fit.spread > 0 and fit.spread_seen is not None
    assert np.allclose(fit.list_terms.sum(axis=1), fit.log_odds - fit.prior_log_odds)
    # a gene in one table only: its evidence is that table's, integrated over lambda
    g = fit.mu[0]
    expected = spread_log_lr(g * fit.list_scores[:200, 0], g * g, fit.spread)
    assert np.allclose(fit.log_odds[:200] - fit.prior_log_odds[:200], expected)
    calls = (posterior.q_values(1 - fit.posterior, fit.log_odds) <= 0.1).sum()
    calls_whole = (posterior.q_values(1 - whole.posterior, whole.log_odds) <= 0.1).sum()
    assert calls >= 0.9 * calls_whole
    assert relevant_class_test(fit, lo, hi)["df"] == 4


def test_a_table_of_one_p_value_everywhere_keeps_tau2_at_zero(monkeypatch):
    """A table whose every gene has p = 0.3 carries no ranking: at tau2 = 0 its constant log LR
    is the prior's, but integrated over lambda it was a prior on lambda, and beside one study's
    Gamma table it moved the fit (mu 4.5 -> 0.8, tau2 12.8; 12 seeds: 62.7 calls at FDP 0.061
    alone -> 68.2 at 0.085). tau2 stays 0: the fit without the spread, to the last digit."""
    _, Z = _studies(0, "gamma", D=1)
    p = np.column_stack([_p(Z)[:, 0], np.full(len(Z), 0.3)])
    fit = _fit(p)
    assert fit.spread == 0.0
    with monkeypatch.context() as m:
        m.setattr(posterior, "SPREAD_GRID", (0.0,))
        plain = _fit(p)
    assert np.array_equal(fit.log_odds, plain.log_odds)


def test_genes_at_p_1_in_both_tables_are_not_shared_noise():
    """Five null genes at p = 1 in both of two independent studies' tables (a gene without
    counts): scored at the end of the p-values' range (-7.03) they made S 0.05, and the
    shared-noise guard dropped the spread (71 calls where the tables without them make 91).
    The guard reads the correlation over the other genes: the spread is kept."""
    truth, Z = _studies(0, "gamma")
    p = _p(Z)
    genes = np.array([f"g{i}" for i in range(len(p))])

    def calls(P: np.ndarray) -> int:
        tables = {f"t{j}": pd.DataFrame({"gene": genes, "pvalue": P[:, j]}) for j in range(2)}
        fused = aggregate_lists(tables).final
        return int((np.asarray(fused.statistics["q_value"]) <= 0.10).sum())

    atoms = p.copy()
    atoms[np.flatnonzero(~truth)[:5]] = 1.0
    assert calls(atoms) >= 0.95 * calls(p)


def test_many_genes_at_p_1_in_both_tables_do_not_make_them_one_source():
    """100 null genes of 4,000 at p = 1 in both of two independent studies' tables (genes
    unexpressed in both): as points at the floor's normal score (-7.03) they put the tables'
    correlation at 0.53-0.55, one table was left out as the other's source, and the pair called
    what one table calls (74 where the tables without them make 86-107). A p of exactly 1 is
    now the interval of its tie block at the top ([1 - f, 1]): two tables, their weights
    shared, the calls of the tables without the genes at 1."""
    genes = np.array([f"g{i}" for i in range(4000)])
    for seed in (0, 1):
        truth, Z = _studies(seed, "gamma")
        p = _p(Z)
        p[np.flatnonzero(~truth)[:100]] = 1.0
        tables = {f"t{j}": pd.DataFrame({"gene": genes, "pvalue": p[:, j]}) for j in range(2)}
        fused = aggregate_lists(tables).final
        assert fused.diagnostics["sources"] is None
        assert np.all(np.asarray(fused.weights) > 0.3)
        called = np.asarray(fused.statistics["q_value"]) <= 0.10
        rows = np.array([int(g[1:]) for g in np.asarray(fused.genes)[called]])
        fisher = _bh(chi2.sf(-2.0 * np.log(p).sum(axis=1), 4)) <= 0.10
        assert rows.size >= 0.85 * fisher.sum()
        assert np.mean(~truth[rows]) <= 0.12
