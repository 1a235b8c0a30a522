"""Count rankers and graph autocorrelation (kofs/_compute/counts.py, kofs/rankers/counts.py,
kofs/rankers/autocorrelation.py): recovery of counts, golden values of scanpy 1.11.5 on the
bundled PBMC data (tests/data/single_cell/README.md), naive oracles, sparse == dense == Dask."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from kofs._compute.counts import counts_view, log_normalised, subset_cells
from kofs.datasets import splat_counts
from kofs.errors import InputError
from kofs.rankers import run_ranker
from kofs.rankers._autocorrelation_kernels import hotspot_statistic, morans_i, normal_statistic
from kofs.rankers._count_kernels import (
    binomial_deviance,
    loess,
    pearson_residual_variance,
    seurat_v3_variance,
)
from kofs.types import Expression

ad = pytest.importorskip("anndata")
DATA = Path(__file__).parent / "data" / "single_cell"


@pytest.fixture(scope="module")
def pbmc():
    return ad.read_h5ad(DATA / "pbmc68k_reduced_raw.h5ad")


@pytest.fixture(scope="module")
def golden():
    return pd.read_csv(DATA / "pbmc68k_reduced_scanpy_genes.tsv.gz", sep="\t")


@pytest.fixture(scope="module")
def sim():
    return splat_counts(400, 300, nuisance_genes=30, seed=5)


def _lognorm(X, base=None):
    A = sp.csr_matrix(X, dtype=np.float64)
    s = np.asarray(A.sum(axis=1)).ravel()
    L = sp.csr_matrix(sp.diags(1e4 / s) @ A)
    L.data = np.log1p(L.data) if base is None else np.log2(1 + L.data)
    return L


# --- counts -----------------------------------------------------------------------------


@pytest.mark.parametrize("base", [None, 2])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_counts_are_recovered_from_log_normalised_values(sim, base, dtype):
    L = sp.csr_matrix(_lognorm(sim.X, base), dtype=dtype)
    view = counts_view(sp.csr_matrix(L, dtype=np.float64))
    assert view.source == ("log1p" if base is None else "log2p")
    assert abs(view.X - sim.X).max() == 0
    np.testing.assert_allclose(view.cell_totals, np.asarray(sim.X.sum(axis=1)).ravel())


def test_counts_are_recovered_beside_explicitly_stored_zeros(sim):
    """Log-normalised values whose CSR stores some zeros (a thresholded or re-assembled
    matrix: a stored 0 is a 0): the recovery took the 0 for a cell's smallest count, gave up,
    and hotspot fell back to its normal model saying the values were not counts."""
    L = _lognorm(sim.X).tocoo()
    dense = sim.X.toarray()
    rows = np.arange(10)
    cols = np.array([np.flatnonzero(dense[i] == 0)[0] for i in rows])
    Z = sp.csr_matrix(
        (np.r_[L.data, np.zeros(10)], (np.r_[L.row, rows], np.r_[L.col, cols])), shape=L.shape
    )
    assert Z.nnz == L.nnz + 10 and not Z.data.all()
    view = counts_view(Z)
    assert view.source == "log1p" and abs(view.X - sim.X).max() == 0
    assert Z.nnz == L.nnz + 10  # the caller's matrix is left as it is


def test_counts_are_taken_as_they_are(sim):
    view = counts_view(sim.X)
    assert view.source == "counts" and view.X is not None
    np.testing.assert_array_equal(view.gene_totals, np.asarray(sim.X.sum(axis=0)).ravel())
    np.testing.assert_allclose(view.square_sums, np.asarray(sim.X.multiply(sim.X).sum(0)).ravel())


def test_a_cell_whose_smallest_count_is_two_is_recovered():
    """Ratios 1, 1.5, 2.5 are not whole: the smallest value stands for 2 counts (a cell
    holding 2, 4, 6 is indistinguishable from 1, 2, 3 and is read so)."""
    X = sp.csr_matrix(np.array([[2.0, 3.0, 0.0, 5.0], [1.0, 0.0, 3.0, 1.0]]))
    view = counts_view(_lognorm(X))
    assert abs(view.X - X).max() == 0


def test_scaled_values_are_refused_with_one_line(sim):
    scaled = sim.X.toarray() - sim.X.toarray().mean(axis=0)
    with pytest.raises(InputError, match="holds negative values .as low as -"):
        counts_view(scaled, who="ranker 'x'")
    # values >= 0 that are not counts: no word of negative values
    with pytest.raises(InputError, match="neither counts nor log1p-normalised counts .scaled"):
        counts_view(np.abs(scaled) + 0.37, who="ranker 'x'")
    with pytest.raises(InputError, match="layer counts"):
        run_ranker("pearson-residuals", Expression(scaled, sim.genes, sim.cells))


@pytest.mark.parametrize("bad", [-1.0, 0.5])
@pytest.mark.parametrize("name", ["pearson-residuals", "deviance", "seurat-v3"])
def test_chunked_counts_are_checked_beyond_the_first_chunk(sim, name, bad):
    """The first chunk holds counts, a later one a negative or a fractional value: the
    in-memory matrix is refused, the chunked one was ranked as if it held counts."""
    da = pytest.importorskip("dask.array")
    X = sim.X.toarray()
    X[300, 4] = bad
    with pytest.raises(InputError, match="neither counts"):
        run_ranker(name, Expression(X, sim.genes, sim.cells))
    lazy = da.from_array(sp.csr_matrix(X), chunks=(150, 300), asarray=False)
    with pytest.raises(InputError, match=f"ranker '{name}': a chunk's values are not counts"):
        run_ranker(name, Expression(lazy, sim.genes, sim.cells))


def test_log_normalised_is_scanpys_normalize_total_log1p(sim):
    view = counts_view(sim.X)
    L = log_normalised(view).toarray()
    s = np.asarray(sim.X.sum(axis=1)).ravel()
    np.testing.assert_allclose(L, np.log1p(sim.X.toarray() / s[:, None] * np.median(s)))


def test_subset_cells_recomputes_totals(sim):
    sub = subset_cells(counts_view(sim.X), np.arange(10, 60))
    np.testing.assert_array_equal(sub.gene_totals, np.asarray(sim.X[10:60].sum(0)).ravel())


# --- count rankers: golden and oracles ---------------------------------------------------


def test_pearson_residuals_equal_scanpys(pbmc, golden):
    view = counts_view(sp.csr_matrix(pbmc.X, dtype=np.float64))
    ours = pearson_residual_variance(view)
    np.testing.assert_allclose(ours, golden["residual_variances"], rtol=1e-6)


def test_seurat_v3_is_scanpys_up_to_its_interpolated_loess(pbmc, golden):
    """scanpy fits the loess on k-d-tree vertices and interpolates (scikit-misc's default);
    kofs computes every local fit: values within 3 % on these 765 genes (0.4 % on 15,000
    simulated ones), the same top genes."""
    view = counts_view(sp.csr_matrix(pbmc.X, dtype=np.float64))
    ours = seurat_v3_variance(view)
    ref = golden["variances_norm"].to_numpy()
    assert np.max(np.abs(ours - ref) / ref) < 0.03
    top = set(np.argsort(-ours)[:100]) & set(np.argsort(-ref)[:100])
    assert len(top) >= 97


def test_loess_equals_scikit_misc_direct():
    skmisc = pytest.importorskip("skmisc.loess")
    rng = np.random.default_rng(0)
    x = rng.normal(size=400)
    y = np.sin(x) + rng.normal(scale=0.3, size=400)
    model = skmisc.loess(x, y, span=0.3, degree=2, surface="direct")
    model.fit()
    np.testing.assert_allclose(loess(x, y, span=0.3, degree=2), model.outputs.fitted_values,
                               atol=1e-10)  # fmt: skip


def test_loess_fits_a_quadratic_exactly():
    x = np.linspace(-2, 3, 200)
    y = 1.0 - 2.0 * x + 0.5 * x * x
    np.testing.assert_allclose(loess(x, y, span=0.3), y, atol=1e-9)


def test_loess_and_seurat_v3_with_fewer_points_than_the_degree(tmp_path):
    """One or two genes with a variance (fewer than degree + 1 = 3 points) were an IndexError
    (exit 1 from the CLI); each point is now its own fit."""
    from click.testing import CliRunner

    from kofs.cli import main

    for n in (1, 2):
        x, y = np.arange(1.0, n + 1), np.array([2.0, -1.0][:n])
        np.testing.assert_allclose(loess(x, y, span=0.3, degree=2), y)
    tsv = tmp_path / "two.tsv"
    tsv.write_text("gene\tc1\tc2\tc3\tc4\tc5\nG1\t1\t2\t0\t5\t3\nG2\t0\t0\t0\t0\t0\n"
                   "G3\t4\t0\t1\t2\t2\n")  # fmt: skip
    out = tmp_path / "out"
    args = ["rank", str(tsv), "--genes-in", "rows", "--rankers", "seurat-v3", "-o", str(out)]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.stderr
    assert (out / "ranking.tsv").read_text().splitlines()[-1].startswith("G2\t")


def test_deviance_equals_the_naive_formula(sim):
    X = sim.X.toarray()
    s = X.sum(1, keepdims=True)
    mu = s * X.sum(0) / X.sum()
    with np.errstate(all="ignore"):
        t1 = np.where(X > 0, X * np.log(X / mu), 0.0)
        t2 = np.where(s - X > 0, (s - X) * np.log((s - X) / (s - mu)), 0.0)
    naive = 2 * (t1 + t2).sum(0)
    ok = X.sum(0) > 0
    np.testing.assert_allclose(binomial_deviance(counts_view(sim.X))[ok], naive[ok], rtol=1e-9)


@pytest.mark.parametrize("name", ["pearson-residuals", "deviance", "seurat-v3"])
def test_count_rankers_dense_sparse_dask_and_log_input_agree(sim, name):
    da = pytest.importorskip("dask.array")
    forms = {
        "sparse": sim.X,
        "dense": sim.X.toarray(),
        "dask": da.from_array(sim.X, chunks=(150, 300), asarray=False),
        "log1p": _lognorm(sim.X),
    }
    scores = {k: run_ranker(name, Expression(v, sim.genes, sim.cells)).scores for k, v in
              forms.items()}  # fmt: skip
    for k in ("dense", "dask", "log1p"):
        np.testing.assert_allclose(scores[k], scores["sparse"], rtol=1e-10, equal_nan=True)


# --- graph autocorrelation ----------------------------------------------------------------


def _graph(n, k=6, seed=0):
    rng = np.random.default_rng(seed)
    rows = np.repeat(np.arange(n), k)
    cols = (rows + rng.integers(1, n, rows.size)) % n
    W = sp.csr_matrix((rng.random(rows.size), (rows, cols)), shape=(n, n))
    W = ((W + W.T) * 0.5).tocsr()
    W.sort_indices()
    return W


def test_hotspot_statistic_equals_the_naive_sums(sim):
    view = counts_view(sim.X)
    W = _graph(sim.X.shape[0])
    z, h = hotspot_statistic(view, W)
    X = sim.X.toarray()
    s = X.sum(1)
    t = X.sum(0)
    p = t / t.sum()
    mu = np.outer(s, p)
    with np.errstate(all="ignore"):
        a = (X - mu) / np.sqrt(mu)
        inv = np.maximum(((X - mu) ** 2).sum(0) - t, 0) / (p**2 * (s**2).sum())
    Wd = W.toarray()
    H = np.einsum("ij,ik,jk->k", Wd, a, a)
    v = 1 + mu * inv
    V = 2 * np.einsum("ij,ik,jk->k", Wd**2, v, v)
    ok = t > 0
    np.testing.assert_allclose(h[ok], H[ok], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(z[ok], (H / np.sqrt(V))[ok], rtol=1e-9, atol=1e-9)
    assert np.isnan(z[~ok]).all()


def test_hotspot_z_is_standard_normal_on_noise():
    """Independent Poisson counts: the z-scores of 600 genes have mean ~0 and sd ~1."""
    rng = np.random.default_rng(3)
    lib = rng.lognormal(7, 0.4, size=500)
    p = rng.gamma(0.8, 1, size=600)
    p /= p.sum()
    X = sp.csr_matrix(rng.poisson(np.outer(lib, p)).astype(float))
    z, _ = hotspot_statistic(counts_view(X), _graph(500, seed=1))
    z = z[np.isfinite(z)]
    assert abs(z.mean()) < 0.15 and 0.85 < z.std() < 1.15


def test_normal_statistic_equals_the_naive_sums():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 7))
    W = _graph(80)
    Z = (X - X.mean(0)) / X.std(0)
    H = np.einsum("ij,ik,jk->k", W.toarray(), Z, Z)
    want = H / np.sqrt(2 * (W.toarray() ** 2).sum())
    np.testing.assert_allclose(normal_statistic(X, W), want, rtol=1e-10)
    np.testing.assert_allclose(normal_statistic(sp.csr_matrix(X), W), want, rtol=1e-10)


def test_morans_i_equals_scanpys(pbmc, golden):
    X = sp.csr_matrix(pbmc.X, dtype=np.float64)
    W = sp.csr_matrix(pbmc.obsp["connectivities"], dtype=np.float64)
    np.testing.assert_allclose(morans_i(X, W), golden["morans_i"], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(morans_i(X.toarray(), W), golden["morans_i"], rtol=1e-6,
                               atol=1e-7)  # fmt: skip


def test_morans_i_ranker_uses_the_given_graph(pbmc, golden):
    from kofs.pipeline.anndata import anndata_graph
    from kofs.types import RankerInputs

    e = Expression(sp.csr_matrix(pbmc.X, dtype=np.float64), list(pbmc.var_names),
                   list(pbmc.obs_names))  # fmt: skip
    g = anndata_graph(pbmc, "connectivities", e.samples)
    r = run_ranker("morans-i", e, RankerInputs(similarity=g))
    np.testing.assert_allclose(r.scores, golden["morans_i"], rtol=1e-6, atol=1e-7)
    assert r.info["values"] == "as given"


def test_morans_i_of_proportional_cells_is_nan():
    """Counts of rank 1 (every cell a multiple of one profile): the log-normalised values of a
    gene are equal up to rounding, and Moran's I was that noise blown up (-1.3 in memory, -2
    chunked) instead of NaN, the score of a constant gene."""
    da = pytest.importorskip("dask.array")
    u = np.array([4.0, 5, 6, 4, 6, 5, 6, 5, 1, 5, 3, 2])
    X = np.outer(u, [3.0, 1, 2, 4, 3, 5])
    genes, cells = [f"g{j}" for j in range(6)], [f"c{i:02d}" for i in range(12)]
    lazy = da.from_array(sp.csr_matrix(X), chunks=(7, 6), asarray=False)
    for values in (X, sp.csr_matrix(X), lazy):
        r = run_ranker("morans-i", Expression(values, genes, cells))
        assert np.isnan(r.scores).all()


@pytest.mark.parametrize("name", ["hotspot", "morans-i"])
def test_graph_rankers_dask_equals_in_memory(name):
    """Chunked counts (dask, 3 chunks of cells): the same graphs and statistics."""
    da = pytest.importorskip("dask.array")
    sim = splat_counts(900, 500, nuisance_genes=30, seed=2)
    a = run_ranker(name, Expression(sim.X, sim.genes, sim.cells), seed=0)
    lazy = da.from_array(sim.X, chunks=(300, 500), asarray=False)
    b = run_ranker(name, Expression(lazy, sim.genes, sim.cells), seed=0)
    np.testing.assert_allclose(b.scores, a.scores, rtol=1e-9, atol=1e-9, equal_nan=True)
