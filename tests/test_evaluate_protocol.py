"""Cross-validation protocols: folds, groups, and that the honest protocol cannot leak."""

from __future__ import annotations

import numpy as np
import pytest

from kofs.errors import ParameterError
from kofs.evaluate import accuracy_curves, evaluate, make_folds
from kofs.types import Expression


def _expr(X, prefix="s"):
    return Expression(
        X, [f"g{j}" for j in range(X.shape[1])], [f"{prefix}{i}" for i in range(X.shape[0])]
    )


def _fisher_order(X, y):
    """Two-class Fisher-like score (difference of means over pooled sd), best first."""
    a, b = X[y == y[0]], X[y != y[0]]
    score = (a.mean(0) - b.mean(0)) ** 2 / (a.var(0) + b.var(0) + 1e-12)
    return np.argsort(-score, kind="stable")


def test_folds_cover_each_sample_once_per_repeat():
    y = np.array(["a"] * 6 + ["b"] * 9)
    folds = make_folds(y, n_splits=3, n_repeats=2, seed=1)
    assert len(folds) == 6
    for r in (0, 1):
        tests = np.concatenate([f.test for f in folds if f.repeat == r])
        assert sorted(tests.tolist()) == list(range(15))
    for f in folds:
        assert not set(f.train) & set(f.test)
        assert set(y[f.test]) == {"a", "b"}  # stratified


def test_groups_never_straddle_folds():
    # 12 patients measured twice (replicate arrays), two classes
    patients = np.repeat([f"p{i}" for i in range(12)], 2)
    y = np.repeat(["B"] * 6 + ["T"] * 6, 2)
    folds = make_folds(y, n_splits=3, n_repeats=2, groups=patients, seed=0)
    assert len(folds) == 6
    for f in folds:
        assert not set(patients[f.train]) & set(patients[f.test])
    # the two repeats shuffle differently
    assert any(
        not np.array_equal(a.test, b.test) for a, b in zip(folds[:3], folds[3:], strict=True)
    )


def test_leave_one_out_and_leave_one_group_out():
    y = np.array(["a", "b"] * 4)
    folds = make_folds(y, n_splits=0)
    assert len(folds) == 8 and all(len(f.test) == 1 for f in folds)
    patients = np.repeat(["p1", "p2", "p3", "p4"], 2)
    folds = make_folds(y, n_splits=0, groups=patients)
    assert [sorted(patients[f.test].tolist()) for f in folds] == [
        [p, p] for p in ("p1", "p2", "p3", "p4")
    ]


def test_fold_errors_are_one_line_parameter_errors():
    y = np.array(["a", "a", "b", "b", "b", "b"])
    with pytest.raises(ParameterError, match="smallest class") as exc:
        make_folds(y, n_splits=3)
    assert "\n" not in str(exc.value)
    # the class as the user wrote it, not numpy's repr (np.str_('a'))
    assert "('a': 2); use --folds 2" in str(exc.value)
    with pytest.raises(ParameterError, match="two sample classes"):
        make_folds(np.array(["a"] * 6))
    with pytest.raises(ParameterError, match="groups"):
        make_folds(y, n_splits=2, groups=["g"] * 5)
    with pytest.raises(ParameterError, match="classifier"):
        evaluate({"x": np.arange(1.0, 5)}, _expr(np.ones((6, 4))), labels=y, classifiers=["3nn"])


def test_honest_selector_sees_training_samples_only():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 30))
    y = np.array(["a", "b"] * 10)
    expr = _expr(X)
    folds = make_folds(y, n_splits=4, n_repeats=2, seed=3)
    seen = []

    def select(train, y_train):
        seen.append(set(train.samples))
        assert train.values.shape == (len(y_train), 30)
        return {"fisher": _fisher_order(train.values, y_train)}

    accuracy_curves(expr, y, folds=folds, ks=[5], select=select)
    assert len(seen) == len(folds)
    for s, f in zip(seen, folds, strict=True):
        assert s == {expr.samples[i] for i in f.train}
        assert not s & {expr.samples[i] for i in f.test}


def test_selection_bias_book_protocol_is_optimistic_on_noise():
    """Pure noise: ranking on all samples (book) reaches high CV accuracy, the honest protocol
    stays near chance (Ambroise & McLachlan 2002)."""
    rng = np.random.default_rng(42)
    X = rng.normal(size=(40, 2000))
    y = np.array(["a", "b"] * 20)
    expr = _expr(X)
    folds = make_folds(y, n_splits=5, n_repeats=2, seed=0)
    book = accuracy_curves(expr, y, folds=folds, ks=[10], orders={"fisher": _fisher_order(X, y)})
    honest = accuracy_curves(
        expr,
        y,
        folds=folds,
        ks=[10],
        select=lambda tr, yt: {"fisher": _fisher_order(tr.values, yt)},
    )
    assert book[0]["accuracy"] > 0.75
    assert honest[0]["accuracy"] < 0.65
    assert book[0]["protocol"] == "book" and honest[0]["protocol"] == "honest"


def test_accuracy_on_separable_data_and_rows():
    rng = np.random.default_rng(1)
    y = np.array(["a"] * 10 + ["b"] * 10)
    X = rng.normal(size=(20, 8))
    X[:, 0] += np.where(y == "a", 10.0, -10.0)
    expr = _expr(X)
    folds = make_folds(y, n_splits=5, n_repeats=1)
    good, bad = np.arange(8), np.arange(8)[::-1]
    rows = accuracy_curves(
        expr,
        y,
        folds=folds,
        ks=[1],
        classifiers=["1nn", "svm-linear", "svm-rbf"],
        orders={"good": good, "bad": bad},
    )
    acc = {(r["list"], r["classifier"]): r["accuracy"] for r in rows}
    assert all(acc[("good", c)] == 1.0 for c in ("1nn", "svm-linear", "svm-rbf"))
    assert acc[("bad", "1nn")] < 0.9
    with pytest.raises(ValueError):
        accuracy_curves(expr, y, folds=folds, ks=[1])


def test_evaluate_edge_cases_unranked_and_constant_genes():
    rng = np.random.default_rng(5)
    y = np.array(["a", "b"] * 6)
    X = rng.normal(size=(12, 6))
    X[:, 1] = 3.0  # constant gene
    expr = _expr(X)
    ranks = np.array([2.0, 1.0, np.nan, 3.0, np.nan, 4.0])  # two genes not ranked by the list
    res = evaluate(
        {"partial": ranks}, expr, labels=y, top=[2, 3], classifiers=["1nn"], n_splits=3, n_repeats=1
    )
    row = res.table.iloc[0]
    assert "2 genes unranked" in row["notes"]
    assert res.orders["partial"].tolist()[:4] == [1, 0, 3, 5]  # unranked genes last, by position
    # RED of the top 3 (genes 1, 0, 3): the constant gene 1 is left out of the pairs
    assert row["RED-3"] == pytest.approx(abs(np.corrcoef(X[:, 0], X[:, 3])[0, 1]))
    with pytest.raises(ParameterError, match="matrix has 6"):
        evaluate({"partial": ranks}, expr, labels=y, top=[10])
    with pytest.raises(ParameterError, match="2 ranks for 6 genes"):
        evaluate({"short": np.array([1.0, 2.0])}, expr, labels=y, top=[2])


def test_default_top_sizes_fit_a_small_matrix():
    """``kofs evaluate`` with its default --top (10, 30, 50) on a matrix of 40 genes: the sizes
    beyond the matrix are left out (it was an error the user had not caused); sizes the user
    chose are passed on as given (and checked against the matrix)."""
    from types import SimpleNamespace

    from kofs.evaluate.run import _top_sizes

    assert _top_sizes(SimpleNamespace(top=(10, 30, 50)), 40) == [10, 30]
    assert _top_sizes(SimpleNamespace(top=(10, 30, 50)), 5) == [5]
    assert _top_sizes(SimpleNamespace(top=(10, 30, 50)), 8000) == [10, 30, 50]
    assert _top_sizes(SimpleNamespace(top=(20, 60)), 40) == [20, 60]


def test_evaluation_ignores_column_and_gene_order():
    """The folds are drawn over the samples in id order (they followed the file's column
    order: the example's SPEC ACC-10 was 1 or 0.996 by the order of its columns), and a list's
    tied genes enter its top k by gene id (by file position before)."""
    rng = np.random.default_rng(5)
    n, m = 30, 12
    y = np.array(["a"] * 15 + ["b"] * 15)
    X = rng.normal(size=(n, m)).round(3)
    X[y == "a", :4] += 0.7
    genes = [f"g{j:02d}" for j in range(m)]
    ranks = np.array([1, 2, 4, 4, 4, 6, 7, 8, 10, 10, 10, 12], dtype=float)  # ties cut by k

    def run(sp, gp, names):
        e = Expression(X[np.ix_(sp, gp)], [genes[j] for j in gp], [names[i] for i in sp])
        res = evaluate(
            {"L": ranks[gp]}, e, labels=y[sp], top=(3, 9), classifiers=("1nn", "svm-linear"),
            curve_ks=(3, 9), n_splits=3, n_repeats=2,
        )  # fmt: skip
        return res.table.to_csv(), sorted(str(sorted(r.items())) for r in res.accuracy)

    ident, names = np.arange(n), [f"s{i:02d}" for i in range(n)]
    base = run(ident, np.arange(m), names)
    for seed in range(3):
        r = np.random.default_rng(seed)
        assert run(r.permutation(n), r.permutation(m), names) == base


def test_a_fold_trained_on_one_class_is_refused():
    """Leave-one-out beside a class of one sample (two classes), or groups that hold every
    sample of a class, trained a fold on one class: scikit-learn's ValueError for the SVMs (an
    internal error, exit 1) and an accuracy of 0 for 1-NN."""
    y = np.array(["a"] * 7 + ["b"])
    with pytest.raises(ParameterError, match="only sample of class 'b' trains on one class"):
        make_folds(y, n_splits=0)
    # --folds 5 told the user to use --folds 0, which then failed
    with pytest.raises(ParameterError, match="too few for a stratified split; drop or merge"):
        make_folds(y, n_splits=5)
    y = np.array(["a"] * 4 + ["b"] * 4)
    batches = np.array(["x"] * 4 + ["y"] * 4)  # a batch per class
    for n_splits in (0, 2):
        with pytest.raises(ParameterError, match="--groups: a fold trains on one class") as exc:
            make_folds(y, n_splits=n_splits, groups=batches)
        assert "\n" not in str(exc.value)
    # three classes: leaving the single sample out still trains on two
    y3 = np.array(["a"] * 4 + ["b"] * 4 + ["c"])
    assert len(make_folds(y3, n_splits=0)) == 9
