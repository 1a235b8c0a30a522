"""The compiled exact kNN search (kofs._compute.knn_exact) equals the block search, ties included."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from kofs._compute import knn_exact
from kofs.knowledge import neighbours as kern

pytestmark = pytest.mark.skipif(not knn_exact.AVAILABLE, reason="numba not installed")


def _counts(n: int, m: int, seed: int) -> sp.csr_matrix:
    # small integer counts: many exactly tied distances; duplicated rows: zero distances
    rng = np.random.default_rng(seed)
    X = rng.poisson(0.3, size=(n, m)).astype(float)
    X[n // 2 : n // 2 + 5] = X[3]
    X[10] = 0.0
    X[11] = 0.0
    return sp.csr_matrix(X)


@pytest.mark.parametrize("k", [1, 5, 12])
def test_compiled_equals_block_search(k, monkeypatch):
    X = _counts(300, 40, seed=k)
    block = kern.knn_squared_distances(X, k=k)  # below EXACT_COMPILED_MIN: block search
    assert X.shape[0] < kern.EXACT_COMPILED_MIN
    monkeypatch.setattr(kern, "EXACT_COMPILED_MIN", 2)
    compiled = kern.knn_squared_distances(X, k=k)
    np.testing.assert_array_equal(compiled.indices, block.indices)
    np.testing.assert_allclose(compiled.data, block.data, rtol=1e-12, atol=0)
    # the dense block search agrees as well
    dense = kern.knn_squared_distances(X.toarray(), k=k)
    np.testing.assert_array_equal(compiled.indices, dense.indices)


def test_ties_go_to_the_lower_index(monkeypatch):
    # rows 1..4 are all at distance 1 from row 0: the k = 2 nearest are 1 and 2
    X = sp.csr_matrix(np.array([[0, 0], [1, 0], [0, 1], [-1, 0], [0, -1]], dtype=float))
    monkeypatch.setattr(kern, "EXACT_COMPILED_MIN", 2)
    G = kern.knn_squared_distances(X, k=2)
    assert G.indices[:2].tolist() == [1, 2]
    assert G[0, 1] == 1.0 and G[0, 2] == 1.0


def test_auto_search_is_exact_while_cheap():
    X = _counts(kern.ANN_MIN_SAMPLES, 3, seed=0)  # many cells, tiny work: exact
    assert kern.exact_search_work(X) <= kern.EXACT_WORK_MAX
    assert kern.uses_exact_search(X, "auto")
    assert not kern.uses_exact_search(X, "approximate")
    assert not kern.uses_exact_search(X.toarray(), "auto")  # dense: by the number of samples
