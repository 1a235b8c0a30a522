"""Dask: chunked computation over cells equals the in-memory result (1e-10), on the local
scheduler and on a dask.distributed cluster of 2 worker processes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import kofs
from kofs.cli import main
from kofs.datasets import synthetic_counts
from kofs.io.single_cell import read_single_cell
from kofs.rankers import run_ranker
from kofs.types import Expression, RankerInputs, SampleCategories

da = pytest.importorskip("dask.array")
ad = pytest.importorskip("anndata")

CASES = [
    ("variance", {}),
    ("fisher", {}),
    ("laplacian", {}),
    ("spec-phi1", {}),
    ("spec-phi2", {"similarity": "knn"}),
    ("spec-phi3", {"similarity": "knn"}),
    ("spec-phi2", {"similarity": "knn", "gamma": "power", "power": 2}),
]


@pytest.fixture(scope="module")
def cells():
    return synthetic_counts(260, 150, n_clusters=3, n_markers=5, seed=7)


@pytest.fixture(scope="module")
def h5ad(cells, tmp_path_factory):
    path = tmp_path_factory.mktemp("dask") / "cells.h5ad"
    obs = pd.DataFrame({"cell_type": cells.labels()}, index=list(cells.cells))
    ad.AnnData(cells.X, obs=obs, var=pd.DataFrame(index=list(cells.genes))).write_h5ad(path)
    return path


def test_graph_term_in_groups_of_chunks(cells, monkeypatch):
    # a memory budget of one chunk: every pair of chunks computed group pair by group pair,
    # each product S_ab X_b by slices of a few rows
    from kofs._compute import chunked
    from kofs.knowledge.neighbours import knn_squared_distances
    from kofs.knowledge.similarity_kernels import heat_kernel_graph

    S = heat_kernel_graph(knn_squared_distances(cells.X, k=6), t=50.0)
    ref = np.asarray((cells.X.multiply(S @ cells.X)).sum(axis=0)).ravel()
    lazy = da.from_array(cells.X, chunks=(70, cells.X.shape[1]), asarray=False)
    assert len(chunked._groups(chunked.moments(lazy).chunk_bytes, 1)) == 4
    monkeypatch.setattr(chunked, "GRAPH_MEMORY", 2)
    monkeypatch.setattr(chunked, "PRODUCT_ENTRIES", 50)  # S_ab X_b by slices of rows
    np.testing.assert_allclose(chunked.graph_term(lazy, S), ref, rtol=1e-12)


@pytest.mark.parametrize("batch_bytes", [1, 2**30])
def test_moments_equal_in_memory(cells, batch_bytes, monkeypatch):
    # one pass, per-chunk moments merged chunk by chunk (1 byte) or all at once
    from kofs._compute import chunked, matrix

    monkeypatch.setattr(chunked, "_MOMENTS_BATCH_BYTES", batch_bytes)
    # a name of its own: moments are shared by arrays of one name (one data), not recomputed
    name = f"moments-{batch_bytes}"
    lazy = da.from_array(cells.X, chunks=(70, cells.X.shape[1]), asarray=False, name=name)
    codes = np.arange(cells.X.shape[0]) % 3
    mom = chunked.moments(lazy, codes)
    for c in range(3):
        Xc = cells.X[codes == c]
        mu = matrix.column_means(Xc)
        np.testing.assert_allclose(mom.mean[c], mu, rtol=1e-12)
        np.testing.assert_allclose(
            mom.sq_deviations(c, mu), matrix.column_sq_deviations(Xc, mu), rtol=1e-12
        )
        hi, lo = matrix.column_range(Xc)
        np.testing.assert_array_equal(mom.hi[c], hi)
        np.testing.assert_array_equal(mom.lo[c], lo)


@pytest.mark.parametrize(("name", "params"), CASES)
def test_chunked_equals_in_memory(cells, name, params):
    cats = SampleCategories(cells.labels(), cells.cells)
    lazy = da.from_array(cells.X, chunks=(70, cells.X.shape[1]), asarray=False)
    dense_chunks = da.from_array(cells.X.toarray(), chunks=(100, cells.X.shape[1]))
    ref = run_ranker(name, Expression(cells.X, cells.genes, cells.cells),
                     RankerInputs(categories=cats), params=params)  # fmt: skip
    for X in (lazy, dense_chunks):
        e = Expression(X, cells.genes, cells.cells)
        assert e.is_chunked
        got = run_ranker(name, e, RankerInputs(categories=cats), params=params)
        np.testing.assert_allclose(got.scores, ref.scores, rtol=1e-10, equal_nan=True)


@pytest.mark.slow
def test_h5ad_read_chunked(h5ad, cells):
    e, adata = read_single_cell(h5ad, chunk_size=64)
    assert e.is_chunked and e.values.chunks[0][0] == 64
    labels = SampleCategories(cells.labels(), cells.cells)
    res = kofs.rank(e, labels=labels)
    ref = kofs.rank(Expression(cells.X, cells.genes, cells.cells), labels=labels)
    assert res.final.top(20) == ref.final.top(20)
    for a, b in zip(res.lists, ref.lists, strict=True):
        np.testing.assert_allclose(a.scores, b.scores, rtol=1e-10, equal_nan=True)


@pytest.mark.slow
def test_distributed_cluster_equals_in_memory(h5ad, cells, tmp_path):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None,
        local_directory=str(tmp_path / "dask-worker-space"),
    ) as cluster:  # fmt: skip
        e, _ = read_single_cell(h5ad, chunk_size=90)
        labels = SampleCategories(cells.labels(), cells.cells)
        got = kofs.rank(e, labels=labels, dask_scheduler=cluster.scheduler_address)
        mem = Expression(cells.X, cells.genes, cells.cells)
        ref = kofs.rank(mem, labels=labels)
        for a, b in zip(got.lists, ref.lists, strict=True):
            assert a.name == b.name
            np.testing.assert_allclose(a.scores, b.scores, rtol=1e-10, equal_nan=True)
        np.testing.assert_allclose(got.final.scores, ref.final.scores, rtol=1e-8)
        np.testing.assert_allclose(got.markers.scores, ref.markers.scores, rtol=1e-9)
        out = tmp_path / "out"
        r = CliRunner().invoke(
            main,
            ["rank", str(h5ad), "--labels", "obs:cell_type", "--rankers", "variance,laplacian",
             "--dask-scheduler", cluster.scheduler_address, "--chunk-size", "100",
             "-o", str(out)],
        )  # fmt: skip
        assert r.exit_code == 0, r.stderr
        ranking = pd.read_csv(out / "ranking.tsv", sep="\t").set_index("gene")
        lap = kofs.run_ranker("laplacian", mem)
        np.testing.assert_allclose(
            ranking.loc[list(cells.genes), "score:laplacian"], lap.scores, rtol=1e-9
        )


def test_bad_scheduler_address(cells, monkeypatch):
    pytest.importorskip("distributed")
    monkeypatch.setattr("kofs._compute.chunked.CONNECT_TIMEOUT", "1s")
    with pytest.raises(kofs.KofsError, match="cannot connect to the Dask scheduler"):
        kofs.rank(cells.X, rankers=["variance"], dask_scheduler="tcp://127.0.0.1:1")


def test_chunked_principal_scores_equal_in_memory(cells):
    """The randomized PCA of the approximate kNN search reads a dask matrix once per product;
    same seed, same scores (to rounding)."""
    from kofs.knowledge.neighbours import principal_scores

    ref = principal_scores(cells.X, n_components=20, seed=3)
    lazy = da.from_array(cells.X, chunks=(70, cells.X.shape[1]), asarray=False)
    dense_chunks = da.from_array(cells.X.toarray(), chunks=(100, cells.X.shape[1]))
    for X in (lazy, dense_chunks):
        np.testing.assert_allclose(principal_scores(X, n_components=20, seed=3), ref, atol=1e-9)


@pytest.mark.parametrize("compiled", [True, False], ids=["numba", "scipy"])
@pytest.mark.parametrize("memory", [2, 2**30])
def test_approximate_graph_chunked_equals_in_memory(cells, memory, compiled, monkeypatch, faiss):
    """Candidates from the faiss inverted-file search on the chunked principal scores, their exact distances by
    pairs of chunk groups (one chunk per group with a budget of 2 bytes): the same graph as in
    memory, distances bit for bit (to rounding with the scipy products of the pairs when
    numba's kernel is not used)."""
    from kofs._compute import chunked, numba_kernels
    from kofs.knowledge import neighbours as K

    ref = K.approximate_knn_squared_distances(cells.X, k=5, seed=0)
    monkeypatch.setattr(chunked, "GRAPH_MEMORY", memory)
    monkeypatch.setattr(numba_kernels, "AVAILABLE", compiled and numba_kernels.AVAILABLE)
    # names of their own: the search is shared by arrays of one name (one data), not repeated
    tag = f"{memory}-{compiled}"
    for X in (
        da.from_array(cells.X, chunks=(70, cells.X.shape[1]), asarray=False, name=f"s-{tag}"),
        da.from_array(cells.X.toarray(), chunks=(100, cells.X.shape[1]), name=f"d-{tag}"),
    ):
        got = K.approximate_knn_squared_distances(X, k=5, seed=0)
        np.testing.assert_array_equal(got.indices, ref.indices)
        np.testing.assert_allclose(got.data, ref.data, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("laplacian", {"search": "approximate"}),
        ("spec-phi2", {"similarity": "knn", "search": "approximate"}),
        ("spec-phi3", {"similarity": "knn", "search": "approximate", "k_clusters": 3}),
    ],
)
def test_graph_rankers_chunked_with_approximate_search(cells, name, params, faiss):
    from kofs.registry import RANKERS

    known = RANKERS.get(name).params
    params = {k: v for k, v in params.items() if k in known}
    lazy = da.from_array(cells.X, chunks=(70, cells.X.shape[1]), asarray=False)
    ref = run_ranker(name, Expression(cells.X, cells.genes, cells.cells), params=params)
    got = run_ranker(name, Expression(lazy, cells.genes, cells.cells), params=params)
    assert got.info.get("search", ref.info.get("search")) == ref.info.get("search")
    np.testing.assert_allclose(got.scores, ref.scores, rtol=1e-9, equal_nan=True)


def test_chunked_search_is_approximate_above_the_threshold(cells, monkeypatch, faiss):
    """``search="auto"`` on a dask matrix: exact below ANN_MIN_SAMPLES cells, approximate
    (chunked PCA + faiss inverted-file search) from it on, no O(n^2) chunk-against-chunk search."""
    from kofs._compute import chunked
    from kofs.knowledge import neighbours as K

    lazy = da.from_array(cells.X, chunks=(70, cells.X.shape[1]), asarray=False)
    assert K.uses_exact_search(lazy)
    monkeypatch.setattr(K, "ANN_MIN_SAMPLES", 100)
    assert not K.uses_exact_search(lazy) and K.uses_exact_search(lazy, "exact")

    def boom(*a, **k):
        raise AssertionError("exact chunked search used")

    monkeypatch.setattr(chunked, "knn_squared_distances", boom)
    res = run_ranker("laplacian", Expression(lazy, cells.genes, cells.cells))
    assert res.info["search"] == "approximate"


@pytest.mark.slow
def test_unsorted_cells_stay_in_file_order_when_chunked(cells, tmp_path, monkeypatch, caplog):
    """An .h5ad whose cells are not sorted by name: the chunked run keeps the file's order (no
    gather of rows across chunks, one warning line) and equals the kernels run in memory on
    the file's order; order-free statistics equal the in-memory run, which sorts the cells."""
    import logging

    from kofs._compute import canonical

    rng = np.random.default_rng(0)
    order = rng.permutation(cells.X.shape[0])
    names = [f"cell{rng.integers(10**6):07d}_{i}" for i in range(len(order))]
    X = cells.X[order]
    obs = pd.DataFrame({"cell_type": np.asarray(cells.labels())[order]}, index=names)
    path = tmp_path / "shuffled.h5ad"
    ad.AnnData(X, obs=obs, var=pd.DataFrame(index=list(cells.genes))).write_h5ad(path)
    taken = []
    real_take = canonical._take
    monkeypatch.setattr(
        canonical, "_take", lambda M, r, c: taken.append(np.asarray(r)) or real_take(M, r, c)
    )
    e, _ = read_single_cell(path, chunk_size=64)
    labels = SampleCategories(tuple(obs["cell_type"]), tuple(names))
    rankers = ["variance", "fisher", "laplacian"]
    with caplog.at_level(logging.WARNING, logger="kofs"):
        res = kofs.rank(e, labels=labels, rankers=rankers, bootstrap=0)
    assert sum("not sorted by name" in r.getMessage() for r in caplog.records) == 1
    assert all(np.array_equal(r, np.arange(len(r))) for r in taken)  # no row gather
    got = {r.name: pd.Series(r.scores, index=r.genes) for r in res.lists}
    # the file's order in memory: the same cells under names sorted in that order
    ordered = [f"c{i:05d}" for i in range(len(names))]
    inputs = RankerInputs(categories=SampleCategories(labels.labels, tuple(ordered)))
    for name in rankers:
        ref = run_ranker(name, Expression(X, cells.genes, ordered), inputs)
        np.testing.assert_allclose(
            got[name].loc[list(cells.genes)], ref.scores, rtol=1e-10, equal_nan=True
        )
    sorted_run = kofs.rank(ad.read_h5ad(path), labels="obs:cell_type", rankers=rankers[:2])
    for a, b in zip(res.lists[:2], sorted_run.lists, strict=True):
        np.testing.assert_allclose(a.scores, b.scores, rtol=1e-10, equal_nan=True)
