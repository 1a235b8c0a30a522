"""Tie-averaged ranks without scipy.stats: the same numbers as scipy.stats.rankdata."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.stats import rankdata

from kofs._compute.ranks import average_ranks, tie_averaged_ranks


@settings(max_examples=200, deadline=None)
@given(
    arrays(
        np.float64,
        st.integers(1, 60),
        elements=st.sampled_from([-2.0, -0.0, 0.0, 0.5, 1.0, 3.0]) | st.floats(-1e6, 1e6),
    )
)
def test_tie_averaged_ranks_equal_scipy_rankdata(x):
    assert tie_averaged_ranks(x).tobytes() == rankdata(x, method="average").tobytes()


def test_average_ranks_direction_ties_and_nan_last():
    r = average_ranks(np.array([3.0, np.nan, 1.0, 3.0, 2.0]), higher_is_better=True)
    np.testing.assert_array_equal(r, [1.5, 5.0, 4.0, 1.5, 3.0])


@pytest.mark.parametrize("in_run", [False, True])
def test_order_ties_by_gene_id_across_gene_sets(in_run):
    """Ties are ordered by gene id, outside a run and inside one, where the gene-id order is
    computed once per gene set (the run's kernel cache) and reused: rankings of other gene
    sets in between, and new tuples of the same ids, are still ordered by their own ids."""
    import contextlib

    from kofs._compute.run_cache import kernel_cache
    from kofs.types import Ranking

    with kernel_cache() if in_run else contextlib.nullcontext() as store:
        genes = ("g2", "g1", "g3", "g10")
        a = Ranking("a", genes, [1.0, 1.0, 0.5, 1.0], higher_is_better=True)
        assert a.top(4) == ["g1", "g10", "g2", "g3"]
        b = Ranking("b", ("z", "y", "x"), [1.0, 1.0, 2.0], higher_is_better=True)
        assert b.top(3) == ["x", "y", "z"]
        c = Ranking("c", list(genes), [0.5, 0.5, 1.0, 0.5], higher_is_better=True)
        assert c.top(4) == ["g3", "g1", "g10", "g2"]
        assert a.top(4) == ["g1", "g10", "g2", "g3"]
        if in_run:
            assert len(store["id_order"]) == 2  # one per gene set
