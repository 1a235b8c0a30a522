"""The sample Gram matrix is computed once per read-only matrix object within a run (one run's
rankers share it: the run's kernel cache), never served for other or changed data, nor kept
between runs."""

from __future__ import annotations

import numpy as np

from kofs._compute.run_cache import kernel_cache
from kofs.knowledge import similarity_kernels as K
from kofs.types import Expression


def _counting(monkeypatch) -> list[int]:
    calls = []
    real = K._gram

    def gram(A):
        calls.append(A.shape[0])
        return real(A)

    monkeypatch.setattr(K, "_gram", gram)
    return calls


def test_same_expression_values_share_one_gram(monkeypatch, rng):
    calls = _counting(monkeypatch)
    X = rng.normal(size=(30, 200))
    e = Expression(X, [f"g{j}" for j in range(200)], [f"s{i}" for i in range(30)])
    with kernel_cache():
        a = K.squared_distances(e.values)
        b = K.squared_distances(e.values)
        assert calls == [30]
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, K.squared_distances(X.copy()))  # writeable: computed
    with kernel_cache():  # another run computes its own
        np.testing.assert_array_equal(a, K.squared_distances(e.values))
    assert calls == [30, 30, 30]


def test_never_stale(monkeypatch, rng):
    calls = _counting(monkeypatch)
    X = rng.normal(size=(20, 50))
    with kernel_cache():
        e1 = Expression(X, [f"g{j}" for j in range(50)], [f"s{i}" for i in range(20)])
        d1 = K.squared_distances(e1.values)
        X *= 2.0  # the caller's array, changed in place: a new Expression sees the new data
        e2 = Expression(X, e1.genes, e1.samples)
        d2 = K.squared_distances(e2.values)
        assert calls == [20, 20]
        np.testing.assert_allclose(d2, 4.0 * d1, rtol=1e-12)
