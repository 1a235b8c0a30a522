"""Evaluation metrics on tiny hand-computed cases (ALGORITHMS.md §8)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import spearmanr

from kofs._compute.ranks import rank_correlation
from kofs.evaluate.metrics import (
    hit_count,
    jaccard_score,
    neighbourhood_jaccard,
    redundancy_rate,
    residue_scale,
    sim_anno,
)


def test_redundancy_by_hand():
    a = np.array([1.0, 2, 3, 4])
    c = np.array([1.0, -1, 1, -1])
    X = np.column_stack([a, 2 * a, c])
    # |rho(a,2a)| = 1, |rho(a,c)| = |rho(2a,c)| = 2 / (2 sqrt 5)
    expected = (1 + 2 / np.sqrt(5)) / 3
    assert redundancy_rate(X) == pytest.approx(expected, abs=1e-12)
    assert redundancy_rate(X) == pytest.approx(0.6314757303, abs=1e-9)


def test_redundancy_is_mean_over_pairs_not_half():
    # two identical features: the book's printed normalisation would give 0.5, the mean gives 1
    X = np.column_stack([np.arange(5.0), np.arange(5.0)])
    assert redundancy_rate(X) == pytest.approx(1.0)


def test_redundancy_constant_and_single_features():
    X = np.column_stack([np.arange(4.0), np.ones(4), np.array([4.0, 3, 2, 1])])
    assert redundancy_rate(X) == pytest.approx(1.0)  # the constant column is left out
    assert np.isnan(redundancy_rate(np.arange(4.0)[:, None]))
    assert np.isnan(redundancy_rate(np.column_stack([np.arange(4.0), np.ones(4)])))


@given(st.integers(0, 10_000))
def test_redundancy_matches_corrcoef(seed):
    X = np.random.default_rng(seed).normal(size=(12, 5))
    C = np.abs(np.corrcoef(X, rowvar=False))
    assert redundancy_rate(X) == pytest.approx(C[np.triu_indices(5, 1)].mean(), abs=1e-12)


def test_residue_by_hand():
    # one feature [3, 4] -> centred, unit [-1, 1]/sqrt2; X X^T - I = -[[.5, .5], [.5, .5]]: sum 1
    assert residue_scale(np.array([[3.0], [4.0]]), np.eye(2)) == pytest.approx(1.0, abs=1e-12)
    # scaling a feature does not change it (features are unit-normalised)
    assert residue_scale(np.array([[30.0], [40.0]]), np.eye(2)) == pytest.approx(1.0, abs=1e-12)
    # three samples, feature [0, 0, 3] -> centred [-1, -1, 2] / sqrt6; K = 0
    Z = np.array([-1.0, -1, 2]) / np.sqrt(6)
    assert (
        residue_scale(np.array([[0.0], [0.0], [3.0]]), np.zeros((3, 3)))
        == pytest.approx((np.outer(Z, Z) ** 2).sum())
        == pytest.approx(1.0)
    )
    # a constant feature contributes nothing
    assert residue_scale(np.ones((2, 1)), np.eye(2)) == pytest.approx(2.0)
    with pytest.raises(ValueError):
        residue_scale(np.ones((3, 1)), np.eye(2))


def test_jaccard_by_hand():
    x1 = np.array([0.0, 1, 3, 7])
    x2 = np.array([0.0, 2, 3, 7])
    S1 = -np.abs(x1[:, None] - x1[None, :])
    S2 = -np.abs(x2[:, None] - x2[None, :])
    # nearest neighbours: x1 -> 1,0,1,2 ; x2 -> 1,2,1,2 : sample 1 disagrees
    assert neighbourhood_jaccard(S1, S2, k=1) == pytest.approx(0.75)
    assert neighbourhood_jaccard(S1, S2, k=2) == pytest.approx(1.0)
    assert neighbourhood_jaccard(S1, S1, k=1) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        neighbourhood_jaccard(S1, S2, k=0)


def test_jaccard_score_identical_similarity():
    X = np.random.default_rng(1).normal(size=(10, 4))
    Xc = X - X.mean(axis=0)
    Z = Xc / np.linalg.norm(Xc, axis=0)
    assert jaccard_score(X, Z @ Z.T, k=3) == pytest.approx(1.0)


def test_hits_and_sim_anno():
    assert hit_count(["A", "B", "C", "A"], {"A", "C", "Z"}) == 2
    assert hit_count([], {"A"}) == 0
    total, mean = sim_anno(np.array([[1.0, np.nan], [0.5, 0.25]]))
    assert total == pytest.approx(1.75) and mean == pytest.approx(1.75 / 3)
    assert all(np.isnan(v) for v in sim_anno(np.full((2, 2), np.nan)))


def test_rank_correlation():
    r = np.arange(1.0, 11)
    R = np.column_stack([r, r, r[::-1], np.array([1, 3, 2, 5, 4, 7, 6, 9, 8, 10.0])])
    C = rank_correlation(R)
    assert C[0, 1] == pytest.approx(1) and C[0, 2] == pytest.approx(-1)
    assert C[0, 3] == pytest.approx(spearmanr(R[:, 0], R[:, 3])[0])
    C = rank_correlation(np.column_stack([r, np.ones(10)]))
    assert np.isnan(C[0, 1]) and C[0, 0] == pytest.approx(1)
