"""The label check and sample-graph resolver shared by every ranker (kofs/rankers/_inputs.py)."""

from __future__ import annotations

import numpy as np
import pytest

from kofs.errors import ParameterError
from kofs.knowledge.similarity import AUTO_DENSE_MAX
from kofs.rankers import run_ranker
from kofs.rankers._inputs import graph_storage, labelled, resolve_auto, sample_graph
from kofs.types import Expression, RankerInputs, SampleCategories, SampleSimilarity

N, M = 12, 6
SAMPLES = [f"s{i}" for i in range(N)]


def _expr():
    X = np.random.default_rng(0).normal(size=(N, M))
    return Expression(X, [f"g{j}" for j in range(M)], SAMPLES)


def _cats(labels):
    return SampleCategories(labels, SAMPLES, name="group")


# (ranker, params) pairs that read the labels
LABEL_USERS = [
    ("fisher", {}),
    ("laplacian", {"graph": "label"}),
    ("spec-phi1", {"similarity": "label"}),
    ("spec-phi2", {"alpha": 0.5}),
    ("relieff", {}),
    ("trace-ratio", {}),
    ("hsic", {"target": "labels"}),
    ("mrsf", {"target": "lda"}),
    ("mcsf", {"target": "labels"}),
]


@pytest.mark.parametrize(("name", "params"), LABEL_USERS)
def test_one_message_for_one_class(name, params):
    inputs = RankerInputs(categories=_cats(["a"] * N))
    with pytest.raises(ParameterError) as err:
        run_ranker(name, _expr(), inputs, params=params)
    assert str(err.value).startswith(f"ranker '{name}'") or "SPEC" in str(err.value)
    assert str(err.value).endswith("needs at least 2 classes in labels 'group', got 1")


@pytest.mark.parametrize(("name", "params"), LABEL_USERS)
def test_one_message_for_no_labels(name, params):
    with pytest.raises(ParameterError, match=r"needs sample labels \(--labels\)"):
        run_ranker(name, _expr(), RankerInputs(), params=params)


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("laplacian", {"graph": "given"}),
        ("spec-phi1", {"similarity": "given"}),
        ("hsic", {"target": "similarity"}),
        ("mrsf", {"target": "similarity"}),
        ("mcsf", {"target": "similarity"}),
    ],
)
def test_one_message_for_no_similarity(name, params):
    inputs = RankerInputs(categories=_cats(["a", "b"] * (N // 2)))
    with pytest.raises(ParameterError, match=r"needs a sample similarity \(expression, --aux"):
        run_ranker(name, _expr(), inputs, params=params)


def test_labelled_drops_unlabelled_samples_and_keeps_x_when_all_are_labelled():
    X = _expr().values
    inputs = RankerInputs(categories=_cats(["b", "a", "NA"] * (N // 3)))
    Xl, codes = labelled(X, inputs, "x")
    assert Xl.shape == (2 * N // 3, M) and codes.tolist()[:2] == [1, 0]
    full = RankerInputs(categories=_cats(["b", "a"] * (N // 2)))
    assert labelled(X, full, "x")[0] is X


def test_sample_graph_kinds():
    X = _expr().values
    sim = SampleSimilarity(np.eye(N), SAMPLES, name="aux")
    inputs = RankerInputs(categories=_cats(["a", "b"] * (N // 2)), similarity=sim)
    assert resolve_auto("auto", inputs, "knn") == "given"
    assert resolve_auto("auto", RankerInputs(), "knn") == "knn"
    assert resolve_auto("rbf", inputs, "knn") == "rbf"
    S, Xs, name, used = sample_graph(X, inputs, "given", "x")
    assert S is sim.matrix and Xs is X and name == "aux" and used == {}
    S, Xs, name, _ = sample_graph(X, inputs, "label", "x")
    assert name == "label" and S.shape == (N, N)
    S, _, name, used = sample_graph(X, inputs, "knn", "x", k=3)
    assert name == "knn" and used["k"] == 3


def test_graph_storage_uses_the_one_threshold():
    assert graph_storage("auto", AUTO_DENSE_MAX) == "dense"
    assert graph_storage("auto", AUTO_DENSE_MAX + 1) == "sparse"
    assert graph_storage("auto", 10, given="sparse") == "sparse"
    assert graph_storage("given", 10) is None
    assert graph_storage("rbf", 10**6) == "dense"
    assert graph_storage("knn", 10) == graph_storage("label", 10) == "sparse"
    assert graph_storage(None, 10) is None
