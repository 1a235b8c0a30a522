"""The compute kernels' cache belongs to a run (kofs/_compute/run_cache.py): what one run
computes once its steps share, nothing outlives the run, and a kernel outside a run keeps
nothing (no process-wide state a test would have to reset)."""

from __future__ import annotations

import numpy as np
import pytest

from kofs._compute import chunked
from kofs._compute.run_cache import cache_of, kernel_cache
from kofs.context import Context
from kofs.datasets import synthetic_counts
from kofs.types import Expression

da = pytest.importorskip("dask.array")


@pytest.fixture(scope="module")
def lazy():
    cells = synthetic_counts(120, 40, n_clusters=2, n_markers=4, seed=3)
    return da.from_array(np.asarray(cells.X.todense()), chunks=(50, 40))


def test_a_run_computes_the_moments_once_and_keeps_nothing_after(lazy):
    assert cache_of("moments") is None  # outside a run
    assert chunked.moments(lazy) is not chunked.moments(lazy)  # nothing kept
    with kernel_cache() as store:
        first = chunked.moments(lazy)
        assert chunked.moments(lazy) is first  # one pass over the chunks per run
        with kernel_cache():  # a step inside the run (run_ranker) uses the run's store
            assert chunked.moments(lazy) is first
        assert len(store["moments"]) == 1
    with kernel_cache():  # the next run starts empty
        assert chunked.moments(lazy) is not first
    assert cache_of("moments") is None
    np.testing.assert_allclose(first.mean[0], np.asarray(lazy.mean(axis=0).compute()))


def test_context_holds_the_store_of_its_run(lazy):
    X = Expression(np.zeros((3, 2)), ("g1", "g2"), ("s1", "s2", "s3"))
    with kernel_cache() as store:
        assert Context(X).kernels is store
    a, b = Context(X), Context(X)
    assert a.kernels is not b.kernels  # each run its own
    with kernel_cache(a.kernels):
        chunked.moments(lazy)
    assert len(a.kernels["moments"]) == 1 and not b.kernels


def test_rankers_of_a_run_share_the_approximate_search(faiss):
    from kofs.knowledge.neighbours import approximate_knn_squared_distances

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 20))
    with kernel_cache() as store:
        g5 = approximate_knn_squared_distances(X, k=5, seed=1)
        (entry,) = store["ann"].values()
        g10 = approximate_knn_squared_distances(X, k=10, seed=1)  # SPEC after Laplacian
        assert next(iter(store["ann"].values())) is entry  # candidates reused, not searched again
    assert g5.nnz == 300 * 5 and g10.nnz == 300 * 10
    assert cache_of("ann") is None
