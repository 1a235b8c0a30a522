"""Borda, RRA (golden values of R RobustRankAggreg 1.2.1) and the rank-statistic baselines."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import norm, rankdata

from kofs.aggregate import AGGREGATORS, aggregate
from kofs.aggregate.baselines import geometric_mean_rank, mean_rank, median_rank, min_rank
from kofs.aggregate.borda import borda_count
from kofs.aggregate.rra import beta_scores, rho_scores, rra_pvalues
from kofs.errors import ParameterError
from kofs.types import Ranking

CASES = ("full", "ties", "eight")
COLUMN_SYMMETRIC = (
    "borda",
    "rra",
    "stuart",
    "mean-rank",
    "median-rank",
    "geometric-mean",
    "min-rank",
)


@pytest.fixture(scope="module")
def golden(testdata):
    folder = testdata / "golden" / "rra"
    out = {}
    for case in CASES:
        ranks = pd.read_csv(folder / f"{case}_ranks.tsv", sep="\t")
        expected = pd.read_csv(folder / f"{case}_expected.tsv", sep="\t")
        assert list(ranks["gene"]) == list(expected["gene"])
        out[case] = (ranks["gene"].tolist(), ranks.drop(columns="gene").to_numpy(float), expected)
    return out


def run(method: str, R: np.ndarray, **params):
    spec = AGGREGATORS.get(method)
    if spec.partial_lists:
        params.setdefault("universe", R.shape[0])
    return spec.func(R, relevant=None, **params)


# --- Borda --------------------------------------------------------------------------------------


def test_borda_small_case_by_hand():
    # lists over A, B, C, D: (A,B,C,D), (B,A,D,C), (A,C,B,D); points M - r + 1 with M = 4
    R = np.array([[1, 2, 1], [2, 1, 3], [3, 4, 2], [4, 3, 4]], dtype=float)
    np.testing.assert_array_equal(borda_count(R), [4 + 3 + 4, 3 + 4 + 2, 2 + 1 + 3, 1 + 2 + 1])
    scores, weights, info = run("borda", R)
    np.testing.assert_array_equal(scores, [11, 9, 6, 4])
    assert weights is None and info == {}


def test_borda_with_averaged_ties():
    # list 2 ties B and C at ranks 2..3 (average 2.5): each gets (2 + 1) / 2 points there
    R = np.array([[1, 1], [2, 2.5], [3, 2.5]])
    np.testing.assert_array_equal(borda_count(R), [3 + 3, 2 + 1.5, 1 + 1.5])


def test_borda_of_identical_lists_is_that_list(rng):
    genes = [f"g{i}" for i in range(50)]
    s = rng.normal(size=50)
    lists = [Ranking(n, genes, s, higher_is_better=True) for n in ("a", "b", "c")]
    out = aggregate(lists, "borda")
    np.testing.assert_array_equal(out.ranks, lists[0].ranks)
    assert out.top(5) == lists[0].top(5)
    assert out.weights is None


def test_borda_orders_like_mean_rank(rng):
    R = np.column_stack([rankdata(rng.integers(0, 5, 30)) for _ in range(4)])
    np.testing.assert_allclose(borda_count(R), 4 * 31 + 4 * run("mean-rank", R)[0])


# --- RRA against R RobustRankAggreg ------------------------------------------------------------


@pytest.mark.parametrize("case", CASES)
def test_rra_matches_robustrankaggreg(golden, case):
    _, R, expected = golden[case]
    u = R / R.shape[0]
    np.testing.assert_allclose(rra_pvalues(u), expected["rra"], rtol=1e-12)
    # Stuart's recursion alternates signs: both implementations agree to ~1e-13 absolute
    exact = rra_pvalues(u, exact=True)
    np.testing.assert_allclose(exact, expected["rra_exact"], rtol=1e-8, atol=1e-12)
    scores, weights, _ = run("rra", R, exact=False)
    np.testing.assert_allclose(10.0**-scores, expected["rra"], rtol=1e-12)
    assert weights is None


@pytest.mark.parametrize("case", CASES)
def test_baselines_match_robustrankaggreg(golden, case):
    _, R, expected = golden[case]
    M, L = R.shape
    p_mean = norm.cdf(mean_rank(R) / M, 0.5, np.sqrt(1 / 12 / L))  # R's "mean" is a z-test
    np.testing.assert_allclose(p_mean, expected["mean"], rtol=1e-12)
    np.testing.assert_allclose(median_rank(R) / M, expected["median"], rtol=1e-14)
    np.testing.assert_allclose(geometric_mean_rank(R) / M, expected["geom_mean"], rtol=1e-13)
    np.testing.assert_allclose(min_rank(R) / M, expected["min"], rtol=1e-14)
    for name, column in [
        ("median-rank", "median"),
        ("geometric-mean", "geom_mean"),
        ("min-rank", "min"),
    ]:
        np.testing.assert_allclose(-run(name, R)[0] / M, expected[column], rtol=1e-13)


def test_rra_through_the_runner_reproduces_r_order(golden):
    genes, R, expected = golden["full"]
    lists = [Ranking(f"L{j}", genes, R[:, j], higher_is_better=False) for j in range(R.shape[1])]
    out = aggregate(lists, "rra")
    np.testing.assert_allclose(10.0**-out.scores, expected["rra"], rtol=1e-12)
    r_order = expected.sort_values("rra", kind="stable")["gene"].tolist()  # R: order(Score)
    assert list(out.top(len(genes))) == r_order
    exact = aggregate(lists, "rra", params={"exact": "true"})
    p_exact = 10.0**-exact.scores
    np.testing.assert_allclose(p_exact, expected["rra_exact"], rtol=1e-8, atol=1e-12)


def test_rra_by_hand():
    # a gene first in all L = 3 lists of M = 10: u = 0.1 each; beta_k = I_0.1(k, 4 - k),
    # the smallest is beta_3 = 0.1^3, so p = min(1, 3 * 0.001)
    R = np.column_stack([np.arange(1.0, 11.0)] * 3)
    u = R / 10
    np.testing.assert_allclose(beta_scores(u)[0], [1 - 0.9**3, 1 - 0.9**3 - 3 * 0.1 * 0.81, 0.001])
    assert rho_scores(u)[0] == pytest.approx(0.001, rel=1e-12)
    assert rra_pvalues(u)[0] == pytest.approx(0.003, rel=1e-12)
    scores, _, info = run("rra", R, exact=False)
    assert scores[0] == pytest.approx(-np.log10(0.003), rel=1e-12)
    assert scores[1] == pytest.approx(-np.log10(3 * 0.2**3), rel=1e-12)
    assert scores[-1] == 0.0  # p = 1 after the Bonferroni cap
    assert info["n_p_below_0.05"] == 2  # p = 0.003, 0.024, then 3 * 0.3^3 = 0.081


# --- properties and edge cases shared by the column-symmetric aggregators ---------------------


@given(st.integers(1, 30), st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_list_order_invariance_and_finite_scores(M, L, seed):
    rng = np.random.default_rng(seed)
    R = np.column_stack([rankdata(rng.integers(0, 6, M)) for _ in range(L)])
    perm = rng.permutation(L)
    rows = rng.permutation(M)
    for name in COLUMN_SYMMETRIC:
        params = {"exact": False} if name == "rra" else {}
        s = run(name, R, **params)[0]
        assert np.isfinite(s).all()
        np.testing.assert_allclose(run(name, R[:, perm], **params)[0], s, rtol=1e-12)
        np.testing.assert_allclose(run(name, R[rows], **params)[0], s[rows], rtol=1e-12)
    p = rra_pvalues(R / M)
    assert ((p > 0) & (p <= 1)).all()


def test_baseline_values_by_hand():
    R = np.array([[1.0, 4.0, 2.0], [3.0, 1.0, 1.0], [2.0, 2.0, 4.0], [4.0, 3.0, 3.0]])
    np.testing.assert_allclose(mean_rank(R), [7 / 3, 5 / 3, 8 / 3, 10 / 3])
    np.testing.assert_allclose(median_rank(R), [2, 1, 2, 3])
    np.testing.assert_allclose(
        geometric_mean_rank(R), [2.0, 3 ** (1 / 3), 16 ** (1 / 3), 36 ** (1 / 3)]
    )
    np.testing.assert_allclose(min_rank(R), [1, 1, 2, 3])
    out = aggregate(
        [Ranking(f"l{j}", list("abcd"), R[:, j], higher_is_better=False) for j in range(3)],
        "mean-rank",
    )
    assert out.top(4) == ["b", "a", "c", "d"]


def test_single_gene_and_single_list():
    for name in COLUMN_SYMMETRIC:
        params = {"exact": True} if name == "rra" else {}
        assert np.isfinite(run(name, np.ones((1, 3)), **params)[0]).all()
        s = run(name, np.arange(1.0, 6.0)[:, None], **params)[0]
        assert np.all(np.diff(s) <= 0)  # one list: its own order


def test_registry_metadata():
    for name in COLUMN_SYMMETRIC:
        spec = AGGREGATORS.get(name)
        assert not spec.learns_weights and not spec.supports_relevant
        assert spec.summary and spec.reference


def test_user_errors():
    lists = [Ranking("a", ["x", "y"], [1.0, 2.0], higher_is_better=True)]
    with pytest.raises(ParameterError, match="does not use relevant genes") as exc:
        aggregate(lists, "borda", relevant_genes=["x"])
    assert "\n" not in str(exc.value)
    with pytest.raises(ParameterError, match="did you mean 'borda'"):
        aggregate(lists, "bords")
    with pytest.raises(ParameterError, match="exact"):
        aggregate(lists, "rra", params={"exact": "perhaps"})
    for name in COLUMN_SYMMETRIC:
        params = {"exact": False} if name == "rra" else {}
        if not AGGREGATORS.get(name).partial_lists:  # NaN = absent is for partial-list methods
            with pytest.raises(ParameterError, match="NaN"):
                run(name, np.array([[1.0], [np.nan]]), **params)
        with pytest.raises(ParameterError, match="< 1"):
            run(name, np.array([[0.0], [1.0]]), **params)
