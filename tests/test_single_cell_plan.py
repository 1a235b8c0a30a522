"""The single-cell plan (defaults version 5): hotspot without labels, Fisher with them;
nuisance programmes seen (named, found in the data, per-list shares) and not rewarded; the
kNN search and the compiled-kernel cache."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import kofs
from kofs.datasets import splat_counts
from kofs.knowledge.programmes import independent_programmes, list_nuisance, named_programmes
from kofs.pipeline.presets import DEFAULTS_VERSION, default_plan
from kofs.rankers import run_ranker
from kofs.types import Expression, Ranking


@pytest.fixture(scope="module")
def sim():
    return splat_counts(2500, 1200, nuisance_genes=40, nuisance_fold=4.0, de_prob=0.03, seed=7)


@pytest.fixture(scope="module")
def expr(sim):
    return Expression(sim.X, sim.genes, sim.cells)


@pytest.fixture(scope="module")
def hotspot(expr):
    return run_ranker("hotspot", expr, seed=0)


def _top(r: Ranking, k: int) -> np.ndarray:
    index = {g: i for i, g in enumerate(r.genes)}
    return np.array([index[g] for g in r.top(k)])


def test_plans_of_version_5():
    assert default_plan("5", sparse=True) == ("hotspot",)
    assert default_plan("5", sparse=True, labels=True) == ("fisher",)
    assert "laplacian" in default_plan("5")  # dense (bulk) matrices keep their plan
    assert default_plan("1", sparse=True, labels=True) == default_plan("1")  # fallbacks


def test_version_6_gives_labelled_dense_data_fisher_alone():
    assert default_plan("6", labels=True)[0] == "fisher"
    assert "laplacian" not in default_plan("6", labels=True)
    assert "laplacian" in default_plan("6") and default_plan("6", sparse=True) == ("hotspot",)
    assert default_plan("6", sparse=True, labels=True) == ("fisher",)


@pytest.mark.slow
def test_hotspot_ranks_identity_and_leaves_the_nuisance_programme_out(sim, hotspot):
    top = _top(hotspot, 100)
    assert sim.de[top].mean() >= 0.7
    assert sim.nuisance[top].sum() <= 3
    found = [p for p in hotspot.info["programmes"] if p["independent"]]
    assert found, "the planted programme is found"
    planted = {sim.genes[j] for j in np.flatnonzero(sim.nuisance)}
    assert len(set(found[0]["genes"]) & planted) >= 0.8 * len(found[0]["genes"])
    assert hotspot.info["excluded_genes"] >= 10


@pytest.mark.slow
def test_keeping_the_programme_rewards_it(sim, expr, hotspot):
    kept = run_ranker("hotspot", expr, seed=0, params={"programmes": "keep"})
    assert sim.nuisance[_top(kept, 200)].sum() > sim.nuisance[_top(hotspot, 200)].sum() + 5


@pytest.mark.slow
def test_hotspot_is_deterministic_and_order_free(expr, hotspot):
    perm = np.random.default_rng(0).permutation(expr.n_genes)
    shuffled = Expression(expr.values[:, perm], [expr.genes[j] for j in perm], expr.samples)
    again = run_ranker("hotspot", shuffled, seed=0)
    ours = dict(zip(hotspot.genes, hotspot.scores, strict=True))
    theirs = dict(zip(again.genes, again.scores, strict=True))
    assert all((np.isnan(ours[g]) and np.isnan(theirs[g])) or ours[g] == theirs[g] for g in ours)


def test_hotspot_on_values_that_are_not_counts_uses_the_normal_null(caplog):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 40))
    X[:150, :5] += 2.0
    e = Expression(X, [f"g{j}" for j in range(40)], [f"c{i}" for i in range(300)])
    with caplog.at_level("WARNING"):
        r = run_ranker("hotspot", e, seed=0)
    assert "not counts" in caplog.text
    assert r.info["model"].startswith("normal null")
    assert set(r.top(5)) == {f"g{j}" for j in range(5)}


def test_named_programmes_match_symbols_case_insensitively():
    genes = ["MKI67", "Top2a", "mt-Co1", "RPL13A", "RPS6KA1", "FOS", "CENPU", "CD3E"]
    e = Expression(np.ones((2, len(genes))), genes, ["a", "b"])
    found = {k: [g for g, hit in zip(genes, v, strict=True) if hit] for k, v in
             named_programmes(e).items()}  # fmt: skip
    assert found == {
        "cell_cycle_s": ["CENPU"],  # MLF1IP's current symbol
        "cell_cycle_g2m": ["MKI67", "Top2a"],
        "stress": ["FOS"],
        "mitochondrial": ["mt-Co1"],
        "ribosomal": ["RPL13A"],  # not the kinase RPS6KA1
    }


def _modules(seed=0, n=3000, m=460):
    """Counts with a group module (genes 0-9, up in group 1), a crossed programme (genes
    10-19, up in a random 20 % of every group), a rare subpopulation module (genes 20-29, up
    in 3 % of the cells, all inside group 0), identity genes of other groups (30-59) and 400
    background genes holding most of the counts (so that no module shifts a cell's total)."""
    from kofs._compute.counts import counts_view

    rng = np.random.default_rng(seed)
    groups = rng.integers(0, 4, n)
    crossed = rng.random(n) < 0.2
    rare = (groups == 0) & (rng.random(n) < 0.12)
    mu = np.full((n, m), 2.0)
    mu[:, 60:] = 20.0
    mu[groups == 1, :10] *= 4
    mu[crossed, 10:20] *= 4
    mu[rare, 20:30] *= 6
    for g in (2, 3):
        mu[groups == g, 30 + 10 * (g - 2) : 40 + 10 * (g - 2)] *= 4
    mu[groups == 0, 50:60] *= 4
    return counts_view(sp.csr_matrix(rng.poisson(mu).astype(float)))


@pytest.mark.slow
def test_independent_programmes_separate_crossed_from_identity_and_rare():
    found = independent_programmes(_modules(), np.arange(60), seed=0)
    by_first = {int(p.genes.min()) // 10: p for p in found}
    assert by_first[1].independent  # the crossed programme
    assert not by_first[0].independent  # a group's module
    assert not by_first[2].independent  # a rare subpopulation inside one group
    assert by_first[1].identity_fraction < 0.05 < by_first[0].identity_fraction


def _composition(seed=0, n=3000, m=400):
    """Counts of fixed depth (2,000 per cell) with four group modules (genes 0-39, up 4x in
    their group) and a crossed programme (genes 40-59, up 5x in a random 20 % of the cells)
    that holds a large share of the counts, so that where it is active every other gene is
    lower (composition)."""
    from kofs._compute.counts import counts_view

    rng = np.random.default_rng(seed)
    groups = rng.integers(0, 4, n)
    crossed = rng.random(n) < 0.2
    mu = np.full((n, m), 2.0)
    for g in range(4):
        mu[groups == g, 10 * g : 10 * g + 10] *= 4
    mu[:, 40:60] = 20.0
    mu[crossed, 40:60] *= 5
    mu *= (2000.0 / mu.sum(axis=1))[:, None]
    return counts_view(sp.csr_matrix(rng.poisson(mu).astype(float)))


def test_a_programme_that_shifts_its_cells_composition_is_still_crossed():
    # the test's residuals leave the module's genes out of the cells' totals: with them in,
    # every other gene co-varies with the programme, the identity context's components follow
    # it and its signal reads as identity (identity fraction 1.0 before the fix)
    found = independent_programmes(_composition(), np.arange(400), seed=0)
    by_first = {int(p.genes.min()): p for p in found}
    assert by_first[40].independent and by_first[40].genes.size == 20
    assert by_first[40].identity_fraction < 0.05
    assert not by_first[0].independent and not by_first[10].independent


def _batch(seed=0, n=3000, m=460):
    """Counts with four group modules (genes 0-39, up 4x in their group) and a batch that
    crosses the groups: half the cells have genes 40-59 up 4x and genes 60-79 down 4x; 380
    background genes hold most of the counts."""
    from kofs._compute.counts import counts_view

    rng = np.random.default_rng(seed)
    groups = rng.integers(0, 4, n)
    batch = rng.random(n) < 0.5
    mu = np.full((n, m), 2.0)
    mu[:, 80:] = 20.0
    for g in range(4):
        mu[groups == g, 10 * g : 10 * g + 10] *= 4
    mu[batch, 40:60] *= 4
    mu[:, 60:80] = 8.0
    mu[batch, 60:80] /= 4
    return counts_view(sp.csr_matrix(rng.poisson(mu).astype(float)))


def test_a_batch_that_moves_genes_both_ways_is_crossed_and_owns_both_halves():
    """The identity context left out only genes correlated *positively* with a module: the
    batch's down genes stayed in it, its k-means found the batch, and the batch read as
    identity (identity fraction 0.14 and 88 batch genes in the top 500 of a simulation)."""
    found = independent_programmes(_batch(), np.arange(80), seed=0, extend=np.arange(80, 460))
    batch = [p for p in found if p.genes.min() >= 40]
    assert batch and all(p.independent for p in batch)
    owned = set(np.concatenate([p.associated for p in batch]).tolist())
    assert set(range(40, 80)) <= owned  # the up and the down half
    assert not any(p.independent for p in found if p.genes.max() < 40)


def test_two_cell_types_crossed_with_two_batches_are_not_all_set_aside():
    """Three crossed two-way splits (two cell types, two batches), each moving 20 genes up
    and 20 down: every module is crossed with the others once its own down genes are left
    out, so leaving the crossed ones out of the graph would leave no structure at all (every
    module was set aside without the check); none is, as before the batch fix."""
    from kofs._compute.counts import counts_view

    rng = np.random.default_rng(0)
    n = 3000
    mu = np.full((n, 500), 2.0)
    mu[:, 120:] = 20.0
    for axis in range(3):
        on, lo = rng.random(n) < 0.5, 40 * axis
        mu[on, lo : lo + 20] *= 4
        mu[:, lo + 20 : lo + 40] = 8.0
        mu[on, lo + 20 : lo + 40] /= 4
    counts = counts_view(sp.csr_matrix(rng.poisson(mu).astype(float)))
    found = independent_programmes(counts, np.arange(120), seed=0, extend=np.arange(120, 500))
    assert len(found) == 6 and not any(p.independent for p in found)


def test_list_nuisance_reports_each_lists_share(sim, expr):
    planted = np.flatnonzero(sim.nuisance)
    order = np.r_[planted, np.setdiff1d(np.arange(expr.n_genes), planted)]
    scores = np.empty(expr.n_genes)
    scores[order] = np.arange(expr.n_genes, 0, -1)
    nuisance_first = Ranking("nuisance-first", expr.genes, scores, True)
    de_first = Ranking("identity", expr.genes, sim.de.astype(float), True)
    a, b = list_nuisance(expr, [nuisance_first, de_first], seed=0)
    assert a["top"] == 120 and a["head_share"] > 0.8 and a["share"] > 0.25
    assert b["head_share"] == 0.0 and b["share"] < 0.05


@pytest.mark.slow
def test_rank_default_plan_on_counts(sim):
    res = kofs.rank(sim.X, bootstrap=0, threads=2)
    assert [r.name for r in res.lists] == ["hotspot"]
    assert res.settings["defaults"] == DEFAULTS_VERSION
    assert "nuisance" in res.lists[0].info and res.markers is None


def test_pc_neighbours_approximate_finds_the_exact_neighbours():
    from kofs.knowledge.neighbours import pc_neighbours

    rng = np.random.default_rng(0)
    centres = rng.normal(size=(30, 10)) * 4
    P = centres[rng.integers(0, 30, 12000)] + rng.normal(size=(12000, 10))
    exact, d_exact = pc_neighbours(P, 10, exact=True)
    approx, d_approx = pc_neighbours(P, 10, exact=False, seed=1)
    recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(exact, approx, strict=True)])
    assert recall > 0.95
    assert (np.diff(d_approx, axis=1) >= 0).all() and (d_approx[:, 0] >= d_exact[:, 0] - 1e-9).all()
    again, _ = pc_neighbours(P, 10, exact=False, seed=1)
    np.testing.assert_array_equal(approx, again)


@pytest.mark.parametrize("exact", [True, False])
def test_pc_neighbours_of_very_large_or_small_components(exact):
    """Components beyond ~1e18 overflowed faiss's float32 squared distances: every cell got
    the neighbour -1, and the graph built from it crashed the process (double free). Scaled by
    a power of two, the search finds the same neighbours whatever the scale."""
    from kofs.knowledge.neighbours import pc_neighbours

    rng = np.random.default_rng(2)
    n = 12000 if not exact else 300
    P = rng.normal(size=(n, 8))
    idx, d2 = pc_neighbours(P, 5, exact=exact, seed=1)
    for factor in (2.0**80, 2.0**-80):
        idx_s, d2_s = pc_neighbours(P * factor, 5, exact=exact, seed=1)
        np.testing.assert_array_equal(idx_s, idx)
        np.testing.assert_array_equal(d2_s, d2 * factor * factor)


def test_a_cell_graph_of_huge_values_ranks_as_the_unscaled_one():
    """Non-count values of 1e24 ran the default plan into a crash of the process; a power of
    two times the values ranks the genes exactly as the values."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 40))
    X[:30, :5] += 3.0
    base = kofs.rank(X, rankers=["hotspot"]).final
    big = kofs.rank(X * 2.0**80, rankers=["hotspot"]).final
    assert big.genes == base.genes
    np.testing.assert_array_equal(big.ranks, base.ranks)


def test_numba_cache_goes_where_kofs_can_write(tmp_path, monkeypatch):
    from kofs._compute import jit

    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    assert jit.cache_folder(tmp_path / "pkg") is None  # a writable package: numba's own
    # only the package is read-only (matched by path: a temp folder's random name may hold "pkg")
    package = tmp_path / "pkg"
    monkeypatch.setattr(jit, "_writable", lambda folder: package not in (folder, *folder.parents))
    monkeypatch.setenv("KOFS_CACHE_DIR", str(tmp_path / "kc"))
    assert jit.cache_folder(tmp_path / "pkg") == tmp_path / "kc" / "numba"
    monkeypatch.setattr(jit, "_writable", lambda folder: False)
    assert jit.cache_folder(tmp_path / "pkg").name.startswith("kofs-numba-")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "mine"))
    assert jit.cache_folder(tmp_path / "pkg") == tmp_path / "mine"


def test_correlation_distances_equal_scipy():
    from scipy.spatial.distance import pdist

    from kofs.knowledge import programmes

    rng = np.random.default_rng(0)
    Z = rng.standard_normal((200, 700))
    Z[:, :40] += rng.standard_normal((200, 1))
    Z[:, 5] = 0.0  # a constant column: scipy's distance is NaN, here 1 (no correlation)
    ours = programmes._correlation_distances(Z)
    ref = pdist(Z.T, "correlation")
    finite = np.isfinite(ref)
    assert ours.shape == ref.shape and np.isfinite(ours).all()
    np.testing.assert_allclose(ours[finite], ref[finite], atol=1e-12)


_KERNELS_CALLED = """
import json, sys
import scipy.sparse as sp
from numba.core.registry import CPUDispatcher
import kofs
import kofs._compute.counts, kofs._compute.numba_kernels, kofs.rankers._count_kernels
from kofs.pipeline import warm_kernels as warm
from kofs.datasets import splat_counts
from kofs.types import Expression
sim = splat_counts(2500, 1200, nuisance_genes=40, nuisance_fold=4.0, de_prob=0.03, seed=7)
X = sp.csr_matrix(sim.X)
X.data = X.data.astype(float)
kofs.rank(Expression(X, sim.genes, sim.cells))  # the default plan, no warm-up
table = {k.py_func.__qualname__: tuple(s) for k, s in warm._signatures()}
called = {}
for module in (kofs._compute.counts, kofs._compute.numba_kernels, kofs.rankers._count_kernels):
    for name, kernel in vars(module).items():
        if isinstance(kernel, CPUDispatcher) and kernel.signatures:
            called[name] = name in table and table[name] in kernel.signatures
print(json.dumps(called))
"""


@pytest.mark.slow  # a fresh process running the default plan (7 s): the full tier
def test_the_kernels_compiled_ahead_are_those_the_default_plan_calls():
    """:mod:`kofs.pipeline.warm_kernels` compiles the default single-cell plan's kernels while the input
    is read; a kernel it does not know, or knows by another signature, would compile on its
    first call again (a new installation's first run slower, silently). A fresh process runs
    the plan without the warm-up and reports every kernel called and whether the table has
    its signature."""
    pytest.importorskip("numba")
    import json
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", _KERNELS_CALLED], capture_output=True, text=True, check=True
    )
    called = json.loads(out.stdout.strip().splitlines()[-1])
    assert len(called) >= 4, called
    assert all(called.values()), called


def test_warm_start_compiles_the_kernels_once_per_process(monkeypatch):
    pytest.importorskip("numba")
    from kofs._compute import numba_kernels
    from kofs.pipeline import warm_kernels as warm

    monkeypatch.setattr(warm, "_started", False)
    monkeypatch.setattr(numba_kernels, "threads", lambda: 2)
    thread = warm.start()
    assert thread is not None and warm.start() is None  # once
    thread.join()
    for kernel, signature in warm._signatures():
        assert tuple(signature) in kernel.signatures
    monkeypatch.setattr(warm, "_started", False)
    assert warm.start(threads=1) is None  # --threads 1: no core of its own
    monkeypatch.setattr(numba_kernels, "threads", lambda: 1)
    assert warm.start() is None  # NUMBA_NUM_THREADS=1 likewise


def test_an_inverted_file_of_one_list_is_the_exhaustive_search(capfd):
    """Fewer than 78 rows give faiss's inverted file one list: it printed "WARNING clustering
    20 points to 1 centroids" on stderr (outside kofs's logging) for the same neighbours as
    the flat index. Such a search is the flat one now."""
    from kofs.knowledge.neighbours import pc_neighbours

    P = np.random.default_rng(0).normal(size=(20, 5))
    approx = pc_neighbours(P, 5, exact=False)
    exact = pc_neighbours(P, 5, exact=True)
    assert np.array_equal(approx[0], exact[0])
    assert "WARNING" not in capfd.readouterr().err
