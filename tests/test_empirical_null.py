"""Empirical nulls (kofs.aggregate.empirical_null; docs/aggregation.md, "The empirical null"):
each data list with p-values is read against the null fitted to the middle of its own
histogram, never narrower than the theoretical one."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kstest, norm

from kofs.aggregate import aggregate
from kofs.aggregate.empirical_null import folded_null, recalibrated, signed_null
from kofs.pipeline.user_lists import aggregate_lists
from kofs.types import Ranking


def _signed_z_scores(seed: int, genes: int = 3000, relevant: int = 150) -> np.ndarray:
    """Two tables' signed z-scores sharing 60 % of their noise; the first ``relevant`` genes
    shifted by 3 SD, up or down at random."""
    rng = np.random.default_rng(seed)
    truth = np.arange(genes) < relevant
    direction = np.where(rng.random(genes) < 0.5, -1.0, 1.0)
    common = rng.normal(size=genes)
    return np.column_stack(
        [
            3.0 * truth * direction + np.sqrt(0.6) * common + np.sqrt(0.4) * rng.normal(size=genes)
            for _ in range(2)
        ]
    )


def _widened(rng, genes: int, spread: float, shared: float = 0.6) -> np.ndarray:
    """Two tests' z-scores where nothing changed, in an experiment whose correlated genes
    widen the null to N(0, spread^2), sharing ``shared`` of their noise."""
    common = rng.normal(size=genes)
    return np.column_stack(
        [
            spread * (np.sqrt(shared) * common + np.sqrt(1 - shared) * rng.normal(size=genes))
            for _ in range(2)
        ]
    )


def test_the_empirical_null_absorbs_a_shifted_and_wider_spread():
    """Correlated genes make one experiment's z-scores spread around a shifted centre and wider
    than N(0, 1) where nothing changed (ALL: 0.81-1.41 between random halves of one group): the
    theoretical null read that as changed genes; each table is now read against the normal
    fitted to the middle of its z-scores, never narrower than N(0, 1)."""
    rng = np.random.default_rng(8)
    wide = 0.3 + 1.4 * rng.normal(size=(5000, 1))
    delta, sigma = signed_null(wide)
    assert delta[0] == pytest.approx(0.3, abs=0.1) and 1.2 < sigma[0] < 1.8
    narrow = 0.8 * rng.normal(size=(5000, 1))
    assert signed_null(narrow)[1][0] == 1.0  # the theoretical null: the conservative one
    z = _signed_z_scores(9)  # 5 % shifted by 3 SD: the middle is the null's
    delta, sigma = signed_null(z)
    assert np.all(np.abs(delta) < 0.06) and np.all(sigma < 1.06)
    ids = [f"G{i}" for i in range(5000)]
    tables = {}
    for k, zz in enumerate((0.3 + _widened(rng, 5000, 1.4, shared=0.3)).T):
        tables[f"t{k}"] = pd.DataFrame(
            {"baseMean": 1.0, "log2FoldChange": zz, "pvalue": 2 * norm.sf(np.abs(zz)), "padj": 1.0},
            index=ids,
        )
    final = aggregate_lists(tables).final
    assert int((final.statistics["q_value"] <= 0.10).sum()) == 0
    emp = final.diagnostics["empirical_null"]
    assert emp["lists"] == ["t0", "t1"] and min(emp["spread"]) > 1.3


def test_the_folded_null_of_uniform_p_values_is_the_theoretical_one():
    p = np.random.default_rng(1).random((20_000, 3))
    assert np.all(folded_null(p) == 1.0) or np.all(np.abs(folded_null(p) - 1.0) < 0.03)
    col = p[:, 0]
    assert recalibrated(col, 0.0, 1.0, False) is col
    # too few genes to read a null from (uniform p-values of 100 genes gave spreads up to 2.8):
    # the theoretical null
    few = np.random.default_rng(2).random((999, 40))
    assert np.all(folded_null(few) == 1.0)
    assert np.all(signed_null(norm.isf(few))[1] == 1.0)


@pytest.mark.parametrize("changed", [0.0, 0.05])
def test_the_folded_null_reads_a_widened_null_and_recalibrates_it(changed):
    """Two-sided p-values of z ~ N(0, 1.3^2) (a null widened by correlation), with or without
    5 % of genes far out: the fold's spread is 1.3, and the p-values read against it are
    uniform again (the changed genes apart)."""
    rng = np.random.default_rng(2)
    genes = 20_000
    z = 1.3 * rng.normal(size=genes)
    n_changed = int(changed * genes)
    z[:n_changed] += np.where(rng.random(n_changed) < 0.5, -5.0, 5.0)
    p = 2 * norm.sf(np.abs(z))
    sigma = folded_null(p[:, None])[0]
    assert sigma == pytest.approx(1.3, abs=0.04)
    again = recalibrated(p, 0.0, sigma, False)[n_changed:]
    assert kstest(again, "uniform").pvalue > 0.01
    assert np.all(
        recalibrated(p, 0.0, sigma, False) >= p
    )  # never more significant than the theory says
    # a one-sided test (an F statistic with one numerator df is a squared t) folds the same way
    f = (z / 1.0) ** 2
    from scipy.stats import f as f_dist

    p_f = f_dist.sf(f, 1, 10_000)
    assert folded_null(p_f[:, None])[0] == pytest.approx(sigma, abs=0.01)


def test_p_value_tables_in_a_widened_null_make_no_calls_and_keep_a_real_signal():
    """Two tools' p-values (no fold change: the p-value reading) on data where nothing changed
    but the null is widened to 1.35: read against the theoretical null, the fusion called
    hundreds of genes (random halves of real ALL samples: up to 727, where Benjamini-Hochberg
    calls none); against the empirical null it calls none. With 150 genes shifted by 5 SD
    in an N(0, 1) null the calls stay."""
    rng = np.random.default_rng(3)
    genes = 4000
    ids = [f"G{i}" for i in range(genes)]

    def tables(z):
        return {
            f"t{k}": pd.DataFrame({"P.Value": 2 * norm.sf(np.abs(col))}, index=ids)
            for k, col in enumerate(z.T)
        }

    final = aggregate_lists(tables(_widened(rng, genes, 1.35)), score_column="P.Value").final
    assert int((final.statistics["q_value"] <= 0.10).sum()) == 0
    emp = final.diagnostics["empirical_null"]
    assert emp["reading"].startswith("p-values") and min(emp["spread"]) > 1.25
    z = _widened(rng, genes, 1.0)
    z[:150] += np.where(rng.random(150) < 0.5, -5.0, 5.0)[:, None]
    final = aggregate_lists(tables(z), score_column="P.Value").final
    called = final.statistics["q_value"] <= 0.10
    order = np.array([int(g[1:]) for g in final.genes])
    assert called.sum() >= 120 and np.mean(order[called] >= 150) <= 0.15
    assert max(final.diagnostics["empirical_null"]["spread"]) < 1.1


def test_kofs_own_statistics_keep_their_theoretical_null_unless_asked():
    """A ranker's z-scores with a known N(0, 1) null (Hotspot's autocorrelation) are read
    against that null by default (``null="auto"``: kofs computed them from samples it has);
    ``null="empirical"`` reads them against the normal fitted to the middle of their z-scores
    (not a fold: a one-sided z widened both ways), and a widened null then makes no calls."""
    rng = np.random.default_rng(4)
    genes = 3000
    ids = [f"G{i}" for i in range(genes)]
    z = 0.2 + _widened(rng, genes, 1.4, shared=0.3)
    lists = [
        Ranking(
            name=f"z{k}",
            genes=tuple(ids),
            scores=z[:, k],
            higher_is_better=True,
            info={"null": {"distribution": "normal"}},
        )
        for k in range(2)
    ]
    fused = aggregate(lists, method="posterior")
    assert int((fused.statistics["q_value"] <= 0.10).sum()) > 50
    assert "empirical_null" not in fused.diagnostics
    assert "theoretical null" in fused.diagnostics["list_notes"]["z0"]
    fused = aggregate(lists, method="posterior", params={"null": "empirical"})
    assert int((fused.statistics["q_value"] <= 0.10).sum()) == 0
    emp = fused.diagnostics["empirical_null"]
    assert emp["lists"] == ["z0", "z1"]
    assert emp["center"] == pytest.approx([0.2, 0.2], abs=0.1)
    assert emp["spread"] == pytest.approx([1.4, 1.4], abs=0.1)


def test_the_null_parameter_chooses_the_reading():
    """``null="theoretical"`` reads brought p-values as they are (the widened null then makes
    calls); ``"auto"`` and ``"empirical"`` read them against their empirical null."""
    rng = np.random.default_rng(4)
    genes = 3000
    ids = tuple(f"G{i}" for i in range(genes))
    z = _widened(rng, genes, 1.4, shared=0.3)
    lists = [
        Ranking(
            name=f"t{k}",
            genes=ids,
            scores=2 * norm.sf(np.abs(z[:, k])),
            higher_is_better=False,
            info={"null": {"distribution": "p"}},
        )
        for k in range(2)
    ]

    def calls(**kw):
        fused = aggregate(lists, method="posterior", **kw)
        return int((fused.statistics["q_value"] <= 0.10).sum()), fused.diagnostics

    theoretical, diag = calls(params={"null": "theoretical"})
    assert theoretical > 50 and "empirical_null" not in diag
    assert "theoretical null" in diag["list_notes"]["t0"]
    empirical, diag = calls(params={"null": "empirical"})
    assert empirical == 0 and min(diag["empirical_null"]["spread"]) > 1.3
    assert "empirical null" in diag["list_notes"]["t0"]
    assert calls()[0] == 0  # auto: the empirical null for brought tables


@pytest.mark.parametrize("kept", [0.5, 0.3, 0.05])
def test_a_table_filtered_to_its_significant_genes_keeps_a_sane_null(kept):
    """Tables exported with only p <= t lack the middle of their histogram. Read from 0, the
    window took the missing middle for a null 20 times wider (every p-value read as nothing)
    and the signed fit a centre of 1.5; the window now starts where the table's z-scores do,
    the centre of a table without its middle is not read, and a range too narrow to read
    leaves the theoretical null."""
    rng = np.random.default_rng(6)
    for spread in (1.0, 1.3):
        z = spread * rng.normal(size=20_000)
        z[:1000] += np.where(rng.random(1000) < 0.5, -4.0, 4.0)
        p = 2 * norm.sf(np.abs(z))
        keep = p <= kept
        sigma = folded_null(p[keep][:, None])[0]
        delta, sigma_signed = signed_null(z[keep][:, None])
        assert delta[0] == 0.0 and sigma_signed[0] == pytest.approx(sigma)
        if kept == 0.5:  # the range 0.67-1.5 is enough to read the spread from
            assert sigma == pytest.approx(spread, abs=0.08)
        else:
            assert sigma == 1.0


def test_a_window_without_a_peak_reads_the_columns_robust_normal():
    """A column whose window shows no peak (its histogram flat, or two groups up and down with
    little between) has no null to read there: the fit ran off to a centre far outside the
    window (-950, 3,614) with a spread in the hundreds. Such a column kept N(0, 1), which reads
    a study's thousands of small real differences (a random split of real samples along the
    data's own biology) as changed genes: bench_cut_tables' three whole signed tables, seeds 7
    and 9 of ten, 971 calls at FDP 0.95 and 4,447 at 0.98. A middle that flat is wider than the
    window: the column's median and interquartile range / 1.349 (never below 1) are its null
    now (those seeds: 69 calls at FDP 0.00 and 53 at 0.02)."""
    rng = np.random.default_rng(0)
    flat = rng.uniform(-4, 4, 5000)
    up_and_down = np.concatenate([rng.normal(-2.5, 1, 2500), rng.normal(2.5, 1, 2500)])
    Z = np.column_stack([flat, up_and_down])
    delta, sigma = signed_null(Z)
    q1, q3 = np.percentile(Z, [25, 75], axis=0)
    np.testing.assert_allclose(delta, np.median(Z, axis=0))
    np.testing.assert_allclose(sigma, (q3 - q1) / 1.3489795003921634)
    assert np.all(sigma > 2.5)
    # a null that shows its peak in the window is still read
    delta, sigma = signed_null(0.3 + 1.4 * rng.normal(size=(5000, 1)))
    assert delta[0] == pytest.approx(0.3, abs=0.1) and 1.2 < sigma[0] < 1.8
