"""kofs.GeneSelector: scikit-learn's estimator checks, pipelines, and agreement with run_ranker."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_breast_cancer
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import estimator_checks_generator

import kofs
from kofs.pipeline.selector import GeneSelector


def _name(check) -> str:
    return getattr(check, "func", check).__name__


# every scikit-learn estimator check, except the array-API one: kofs computes in NumPy float64
# and does not take array-API namespaces (sklearn itself skips that check unless
# SCIPY_ARRAY_API=1, so it would only ever be reported as skipped)
CHECKS = [
    (est, check)
    for base in (GeneSelector(), GeneSelector("variance"), GeneSelector("fisher"))
    for est, check in estimator_checks_generator(base, mark=None)
    if _name(check) != "check_array_api_input"
]


@pytest.mark.parametrize(
    ("estimator", "check"), CHECKS, ids=[f"{e.ranker}-{_name(c)}" for e, c in CHECKS]
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _planted(n=40, m=30, seed=0):
    """Two classes; genes 4, 11 and 17 shifted in class 1 (strongest first)."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], n // 2)
    X = rng.normal(size=(n, m))
    for gene, shift in ((4, 4.0), (11, 3.0), (17, 2.0)):
        X[y == 1, gene] += shift
    return X, y


def test_pipeline_cross_validated_on_breast_cancer():
    X, y = load_breast_cancer(return_X_y=True)
    model = make_pipeline(StandardScaler(), GeneSelector("fisher", n_features=10), SVC())
    cv = StratifiedKFold(n_splits=5, shuffle=True, random_state=0)
    scores = cross_val_score(model, X, y, cv=cv)
    assert scores.mean() > 0.93
    assert model.fit(X, y)[1].get_support().sum() == 10


@pytest.mark.parametrize(
    ("ranker", "params", "supervised"),
    [("fisher", None, True), ("laplacian", {"k": 7}, False), ("variance", None, False)],
)
def test_transform_keeps_the_top_of_run_ranker(ranker, params, supervised):
    X, y = _planted()
    genes = [f"x{j}" for j in range(X.shape[1])]
    samples = [f"s{i}" for i in range(X.shape[0])]
    expr = kofs.Expression(X.copy(), genes, samples)
    inputs = kofs.RankerInputs(
        categories=kofs.SampleCategories([str(v) for v in y], samples) if supervised else None
    )
    ref = kofs.run_ranker(ranker, expr, inputs, params=params)
    sel = GeneSelector(ranker, n_features=5, params=params).fit(X, y if supervised else None)
    top = ref.order()[:5]
    np.testing.assert_array_equal(sel.get_support(indices=True), np.sort(top))
    np.testing.assert_array_equal(sel.transform(X), X[:, np.sort(top)])
    np.testing.assert_array_equal(sel.ranking_, ref.order())
    np.testing.assert_allclose(sel.scores_, ref.scores, equal_nan=True)
    np.testing.assert_array_equal(sel.ranks_, ref.ranks)
    if supervised:
        assert set(sel.ranking_[:3]) == {4, 11, 17}


def test_dataframe_keeps_column_names():
    X, y = _planted()
    names = [f"GENE{j}" for j in range(X.shape[1])]
    df = pd.DataFrame(X, columns=names)
    sel = GeneSelector("fisher", n_features=3).fit(df, y)
    assert list(sel.feature_names_in_) == names
    assert list(sel.get_feature_names_out()) == ["GENE4", "GENE11", "GENE17"]
    out = sel.set_output(transform="pandas").transform(df)
    assert list(out.columns) == ["GENE4", "GENE11", "GENE17"]


def test_ties_broken_by_position_and_n_features_clipped():
    X = np.random.default_rng(1).normal(size=(20, 4))
    X = np.hstack([X, X])  # columns j and j + 4 tie
    sel = GeneSelector("variance", n_features=1).fit(X)
    best = int(np.argmax(X[:, :4].var(axis=0)))
    np.testing.assert_array_equal(sel.get_support(indices=True), [best])
    assert GeneSelector("variance", n_features=100).fit(X).get_support().all()


def test_caller_array_stays_writeable():
    X, y = _planted()
    GeneSelector("fisher").fit(X, y)
    assert X.flags.writeable


@pytest.mark.parametrize(
    ("selector", "match"),
    [
        (GeneSelector("fisher"), r"needs sample labels.*requires y to be passed"),
        (GeneSelector("relevance-vote"), r"needs gene functions"),
        (GeneSelector(params={"kk": 3}), r"unknown parameter 'kk' \(did you mean 'k'\?\)"),
        (GeneSelector("fishr"), r"'ranker' parameter of GeneSelector must be a str among"),
        (GeneSelector(n_features=0), r"'n_features' parameter of GeneSelector must be an int"),
    ],
)
def test_errors_are_value_errors_with_the_kofs_message(selector, match):
    X, _ = _planted()
    with pytest.raises(ValueError, match=match):
        selector.fit(X)


def test_continuous_y_refused_by_supervised_rankers():
    X, _ = _planted()
    with pytest.raises(ValueError, match="Unknown label type"):
        GeneSelector("fisher").fit(X, np.linspace(0, 1, X.shape[0]))


def test_labels_reach_rankers_that_can_use_them():
    X, y = _planted()
    sel = GeneSelector("laplacian", n_features=3, params={"graph": "label"}).fit(X, y)
    assert set(sel.get_support(indices=True)) == {4, 11, 17}


def test_sparse_input_equals_dense():
    import scipy.sparse as sp

    from kofs.datasets import synthetic_counts

    d = synthetic_counts(120, 300, n_clusters=2, n_markers=4, seed=5)
    y = d.clusters
    for ranker, target in (("laplacian", None), ("fisher", y), ("spec-phi2", None)):
        a = GeneSelector(ranker, n_features=8).fit(d.X, target)
        b = GeneSelector(ranker, n_features=8).fit(d.X.toarray(), target)
        np.testing.assert_allclose(a.scores_, b.scores_, rtol=1e-10, equal_nan=True)
        assert sp.issparse(a.transform(d.X)) and a.transform(d.X).shape == (120, 8)


def test_ties_go_by_column_position_and_constant_data_is_refused():
    """Tied columns were ordered by the names x0, x1, x10, x11, x2, ...: n_features=3 chose
    columns 0, 1 and 10. An all-constant matrix was fitted without a word."""
    X = np.tile(np.random.default_rng(0).normal(size=(20, 1)), (1, 12))
    s = GeneSelector("variance", n_features=3).fit(X)
    assert np.flatnonzero(s.get_support()).tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="every one of the 12 columns of X is constant"):
        GeneSelector("variance", n_features=3).fit(np.ones((20, 12)))
