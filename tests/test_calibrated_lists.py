"""Calibrated lists: a data list with a known null (the Fisher score's F test) is read through
its p-values, the two-groups model with the theoretical null (kofs.aggregate.nulls,
kofs.aggregate.binormal)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import f_oneway, norm

from kofs import rank
from kofs.aggregate import aggregate
from kofs.aggregate.binormal import interval_terms
from kofs.aggregate.intervals import code_intervals
from kofs.aggregate.nulls import null_p_values
from kofs.rankers import run_ranker
from kofs.types import Expression, RankerInputs, Ranking, SampleCategories


def _expression(X: np.ndarray) -> Expression:
    n, m = X.shape
    return Expression(
        values=X,
        genes=tuple(f"g{i}" for i in range(m)),
        samples=tuple(f"s{j}" for j in range(n)),
    )


def _labels(labels) -> SampleCategories:
    return SampleCategories(
        samples=tuple(f"s{j}" for j in range(len(labels))), labels=tuple(labels)
    )


def test_fisher_p_values_are_the_one_way_anova_f_test():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(23, 40))
    X[:8, :5] += 1.5
    labels = ["a"] * 8 + ["b"] * 9 + ["c"] * 6
    r = run_ranker("fisher", _expression(X), RankerInputs(categories=_labels(labels)))
    assert r.info["null"] == {"distribution": "f", "df1": 2, "df2": 20, "scale": 10.0}
    groups = [np.array(labels) == k for k in "abc"]
    expected = f_oneway(*(X[g] for g in groups)).pvalue
    np.testing.assert_allclose(null_p_values(r), expected, rtol=1e-9)
    X[:, 7] = 3.0  # a constant gene: at the bottom, as in the ranks
    r = run_ranker("fisher", _expression(X), RankerInputs(categories=_labels(labels)))
    assert np.isnan(r.scores[7]) and null_p_values(r)[7] == 1.0


def test_scores_that_are_p_values_and_lists_without_a_null():
    s = np.array([0.5, 1e-8, np.nan, 2.0])
    r = Ranking("p", tuple("abcd"), s, higher_is_better=False, info={"null": {"distribution": "p"}})
    np.testing.assert_array_equal(np.isnan(null_p_values(r)), [False, False, True, True])
    assert null_p_values(Ranking("x", tuple("abcd"), s, higher_is_better=True)) is None


def test_a_calibrated_interval_is_the_normal_density_ratio_of_its_p_value():
    p = np.array([1e-12, 1e-4, 0.03, 0.5, 0.99])
    mu = 2.5
    llr, mean1, _, _ = interval_terms(p, p, mu, 0.3, calibrated=True)
    z = norm.isf(p)
    np.testing.assert_allclose(llr, mu * z - mu * mu / 2, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(mean1, z, rtol=1e-6)
    # a bin of p-values: the class probabilities are those of the normal scores' interval
    lo, hi = np.array([1e-4]), np.array([1e-3])
    llr, *_ = interval_terms(lo, hi, mu, 0.3, calibrated=True)
    a, b = norm.isf(hi), norm.isf(lo)
    expected = np.log((norm.cdf(b - mu) - norm.cdf(a - mu)) / (norm.cdf(b) - norm.cdf(a)))
    np.testing.assert_allclose(llr, expected, rtol=1e-6)


def test_calibrated_p_values_are_binned_on_the_normal_score_scale():
    p = np.array([[1e-40], [1e-20], [1e-6], [0.2], [0.7]])
    coded = code_intervals(p, p, n_bins=64, calibrated=np.array([True]))
    lo, hi = coded.lo[coded.codes[:, 0]], coded.hi[coded.codes[:, 0]]
    assert np.all((lo <= p[:, 0]) & (p[:, 0] <= hi))
    assert len(set(coded.codes[:, 0].tolist())) == 5  # far-apart p-values stay apart


def _two_groups(seed: int, m: int, relevant: int, mu: float) -> tuple[Ranking, np.ndarray]:
    rng = np.random.default_rng(seed)
    z = rng.normal(size=m)
    z[:relevant] += mu
    p = norm.sf(z)
    genes = tuple(f"g{i}" for i in range(m))
    truth = np.arange(m) < relevant
    return Ranking("test", genes, p, False, info={"null": {"distribution": "p"}}), truth


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_one_calibrated_list_learns_the_fraction_and_controls_the_fdr(seed):
    """A ranking's positions say nothing of how many genes are relevant; p-values do."""
    r, truth = _two_groups(seed, 8000, 400, 3.0)
    out = aggregate([r])
    assert abs(out.info["prior"] - 0.05) < 0.012 and abs(out.info["mu"][0] - 3.0) < 0.25
    called = out.statistics["q_value"] <= 0.10
    assert called.sum() > 100
    assert np.mean(~truth[called]) < 0.16
    assert "calibrated" in out.diagnostics["list_notes"]["test"]


def test_uniform_p_values_call_nothing():
    rng = np.random.default_rng(3)
    genes = tuple(f"g{i}" for i in range(5000))
    r = Ranking("null", genes, rng.uniform(size=5000), False, info={"null": {"distribution": "p"}})
    out = aggregate([r])
    assert not np.any(out.statistics["q_value"] <= 0.10)


def test_labelled_default_controls_the_fdr_where_the_joint_fit_did_not():
    """10 vs 10 samples, 30 of 3,000 genes moved by 2 SD: the default labelled plan (Fisher
    alone, calibrated) calls about what a t-test with Benjamini-Hochberg calls; the old plan
    (five data lists, rank model) called 109 genes at FDP 0.44 on such designs."""
    fdp, calls = [], []
    for seed in range(3):
        rng = np.random.default_rng(seed)
        X = rng.normal(size=(20, 3000))
        X[:10, :30] += 2.0
        res = rank(_expression(X), labels=_labels(["a"] * 10 + ["b"] * 10)).final
        called = res.statistics["q_value"] <= 0.10
        truth = np.array([int(g[1:]) < 30 for g in res.genes])
        calls.append(called.sum())
        fdp.append(np.mean(~truth[called]) if called.any() else 0.0)
    assert 5 <= np.mean(calls) <= 40 and np.mean(fdp) <= 0.2


def _deseq_table(path, seed: int, names=("baseMean", "log2FoldChange", "pvalue", "padj")):
    rng = np.random.default_rng(seed)
    m, rel = 3000, 150
    z = rng.normal(size=m)
    z[:rel] += 3.0
    p = 2 * norm.sf(np.abs(z))
    cols = dict(zip(names, (np.full(m, 100.0), z / 3, p, np.minimum(p * m, 1.0)), strict=True))
    import pandas as pd

    pd.DataFrame({"gene": [f"G{i}" for i in range(m)], **cols}).to_csv(path, sep="\t", index=False)
    return np.arange(m) < rel


def test_tables_ranked_by_raw_p_values_are_calibrated(tmp_path):
    from kofs.io.gene_lists import read_ranked_lists
    from kofs.pipeline.user_lists import aggregate_lists

    _deseq_table(tmp_path / "de.tsv", 0)
    (deseq,) = read_ranked_lists(str(tmp_path / "de.tsv"))
    assert deseq.p_values and deseq.ranking().info["null"] == {"distribution": "p"}
    (adjusted,) = read_ranked_lists(f"{tmp_path / 'de.tsv'}:padj")
    assert not adjusted.p_values  # adjusted p-values are not uniform under the null
    (fold,) = read_ranked_lists(f"{tmp_path / 'de.tsv'}:log2FoldChange:abs")
    assert not fold.p_values
    res = aggregate_lists([str(tmp_path / "de.tsv")])
    assert res.settings["p_value_lists"] == ["de"]
    assert "null" in res.lists[0].info
    plain = aggregate_lists([str(tmp_path / "de.tsv")], ranks_only=True)
    assert plain.settings["p_value_lists"] == [] and "null" not in plain.lists[0].info


def test_one_p_value_table_gets_q_values_as_benjamini_hochberg_would(tmp_path):
    """One ranking gives no q-values (its positions cannot show how many genes are relevant);
    one table of p-values does, near Benjamini-Hochberg's."""
    from kofs.pipeline.user_lists import aggregate_lists

    truth = _deseq_table(tmp_path / "de.tsv", 1)
    final = aggregate_lists([str(tmp_path / "de.tsv")]).final
    genes = np.array([int(g[1:]) for g in final.genes])
    called = final.statistics["q_value"] <= 0.10
    p = 2 * norm.sf(np.abs(np.random.default_rng(1).normal(size=3000) + 3.0 * truth))
    ps = np.sort(p)
    bh = int(np.max(np.flatnonzero(ps <= 0.10 * np.arange(1, 3001) / 3000))) + 1
    assert 0.7 * bh <= called.sum() <= 1.3 * bh
    assert np.mean(~truth[genes[called]]) < 0.2
    without = aggregate_lists([str(tmp_path / "de.tsv")], ranks_only=True).final
    assert "q_value" not in without.statistics or not np.any(without.statistics["q_value"] <= 0.1)


def test_cli_ranks_only_flag(tmp_path):
    from click.testing import CliRunner

    from kofs.cli import main

    _deseq_table(tmp_path / "a.tsv", 2)
    _deseq_table(tmp_path / "b.tsv", 3, ("baseMean", "logFC", "P.Value", "adj.P.Val"))
    for extra in ([], ["--ranks-only"]):
        out = tmp_path / f"out{len(extra)}"
        r = CliRunner().invoke(
            main,
            ["aggregate", str(tmp_path / "a.tsv"), str(tmp_path / "b.tsv"), "-o", str(out), *extra],
        )
        assert r.exit_code == 0, r.output
        import json

        manifest = json.loads((out / "manifest.json").read_text())
        text = json.dumps(manifest)
        assert ('"ranks_only": true' in text) == bool(extra)


@pytest.mark.parametrize("m", [1, 2, 5])
def test_tiny_p_value_tables_are_fused_without_error(m):
    """Half-sample refits need genes in each half: a tiny fusion gets no intervals (before: an
    internal error on a one-gene DESeq2 table)."""
    genes = tuple(f"g{i}" for i in range(m))
    p = np.linspace(1e-7, 0.5, m)
    r = Ranking("t", genes, p, False, info={"null": {"distribution": "p"}})
    out = aggregate([r])
    assert np.all(np.isfinite(out.statistics["q_value"]))
    assert out.diagnostics["n_resamples"] == 0


def test_normal_null_is_the_upper_tail():
    z = np.array([-1.0, 0.0, 2.0, np.nan])
    r = Ranking("z", tuple("abcd"), z, True, info={"null": {"distribution": "normal"}})
    np.testing.assert_allclose(null_p_values(r)[:3], norm.sf(z[:3]))
    assert null_p_values(r)[3] == 1.0  # a gene the ranker found constant: nothing to test


@pytest.mark.parametrize(("groups", "most_calls"), [(8, None), (1, 2)])
def test_single_cell_default_gets_q_values_from_hotspots_null(groups, most_calls):
    """Hotspot's z is N(0, 1) under its count null: the single-cell default (one list) gets
    q-values; cells of one kind get (almost) no call."""
    from kofs.datasets.splat import splat_counts

    s = splat_counts(
        1500, 1500, n_groups=groups, de_prob=0.03 if groups > 1 else 0.0,
        nuisance_genes=50 if groups > 1 else 0, seed=3,
    )  # fmt: skip
    e = Expression(values=s.X, genes=s.genes, samples=s.cells)
    res = rank(e)
    assert [r.name for r in res.lists] == ["hotspot"]
    assert res.lists[0].info["null"] == {"distribution": "normal"}
    called = res.final.statistics["q_value"] <= 0.10
    index = {g: i for i, g in enumerate(s.genes)}
    truth = (s.de | s.nuisance)[[index[g] for g in res.final.genes]]
    if most_calls is None:
        assert called.sum() >= 10 and np.mean(~truth[called]) <= 0.2
    else:
        assert called.sum() <= most_calls


def test_masked_genes_of_a_calibrated_list_carry_no_information():
    r, truth = _two_groups(4, 3000, 150, 3.0)
    masked = [r.genes[i] for i in range(5)]  # relevant genes with small p-values
    out = aggregate([r], built_from={"test": masked})
    index = {g: i for i, g in enumerate(out.genes)}
    post = out.statistics["posterior"][[index[g] for g in masked]]
    assert np.allclose(post, post[0]) and post[0] < 0.5  # the prior, not their p-values


def test_log_f_tail_is_scipys_log_survival_where_that_does_not_underflow():
    from scipy.stats import f

    from kofs.aggregate.nulls import log_f_tail

    for d1, d2 in ((7, 19992), (2, 100), (9, 80), (1, 5), (50, 2_000_000)):
        x = np.array([5.0, 20.0, 60.0, 150.0])
        ref = f.logsf(x, d1, d2)
        seen = np.isfinite(ref)
        assert seen.sum() >= 2
        assert np.allclose(log_f_tail(x, d1, d2)[seen], ref[seen], rtol=1e-9)
    # far past the smallest double (scipy: -inf), still finite and decreasing
    far = log_f_tail(np.array([250.0, 1000.0, 3000.0]), 7, 19992)
    assert np.all(np.isfinite(far)) and np.all(np.diff(far) < 0) and far[0] < -745


@pytest.mark.parametrize("kind", ["f", "normal"])
def test_p_values_below_the_floor_keep_their_lists_order(kind):
    # an F of 20,000 cells, a Hotspot z above 38: p-values below 1e-300 (or 0 in doubles); the
    # fused ranking of the one calibrated list is its own order, not ties broken by gene id
    rng = np.random.default_rng(0)
    m = 3000
    if kind == "f":
        s = rng.f(7, 19992, m)
        s[:200] = np.geomspace(100, 3000, 200)
        null = {"distribution": "f", "df1": 7, "df2": 19992, "scale": 1.0}
    else:
        s = rng.normal(size=m)
        s[:200] = np.geomspace(5, 90, 200)
        null = {"distribution": "normal"}
    s[200:203] = np.inf  # an infinite statistic (no variance within the groups): first
    genes = tuple(f"g{i:04d}" for i in range(m))
    ranked = Ranking("list", genes, s, True, info={"null": null})
    fused = aggregate([ranked])
    assert np.unique(fused.scores[:200]).size == 200
    assert np.array_equal(fused.order()[:203], np.argsort(-s, kind="stable")[:203])
