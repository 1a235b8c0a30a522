"""Accuracy of top-k genes under cross-validation: the book's protocol and the honest one.

``book`` protocol (book ch. 6, ACC-10/30/50)
    The genes are ranked once on **all** samples; cross-validation only trains and tests the
    classifier on the top k genes. Selection has seen the test samples, so the accuracy is
    optimistic (selection bias; Ambroise & McLachlan 2002, PNAS 99:6562).
``honest`` protocol
    In every fold the ranking is re-run on the training samples only: the selector is given
    the training part of the matrix and the training labels, nothing else, so it cannot see a
    test sample.

Folds are stratified (``RepeatedStratifiedKFold``); with ``groups`` (e.g. replicate arrays of
one patient) ``StratifiedGroupKFold`` keeps a group in a single fold, reshuffled per repeat.
Classifiers come from scikit-learn: 1-NN on the raw values (the book's ACC), and SVMs (RBF,
linear) on standardised values (scaler fitted on the training fold).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import (
    LeaveOneGroupOut,
    LeaveOneOut,
    RepeatedStratifiedKFold,
    StratifiedGroupKFold,
)
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from threadpoolctl import threadpool_limits

from kofs.errors import ParameterError, whole_number
from kofs.options import FOLD_SEED_MAX
from kofs.progress import Progress, task
from kofs.types import Expression

log = logging.getLogger(__name__)

__all__ = ["CLASSIFIERS", "PROTOCOLS", "Fold", "make_folds", "classifier", "accuracy_curves"]

CLASSIFIERS = ("1nn", "svm-rbf", "svm-linear")
PROTOCOLS = ("book", "honest")


def classifier(name: str):
    """A fresh scikit-learn classifier: ``1nn``, ``svm-rbf`` or ``svm-linear`` (C = 1)."""
    if name == "1nn":
        return KNeighborsClassifier(n_neighbors=1)
    if name == "svm-rbf":
        return make_pipeline(StandardScaler(), SVC(kernel="rbf", C=1.0, gamma="scale"))
    if name == "svm-linear":
        return make_pipeline(StandardScaler(), SVC(kernel="linear", C=1.0))
    raise ParameterError(
        f"--classifiers: unknown classifier {name!r}; use {', '.join(CLASSIFIERS)}"
    )


@dataclass(frozen=True)
class Fold:
    """One train/test split (sample positions)."""

    repeat: int
    index: int
    train: np.ndarray
    test: np.ndarray


def make_folds(
    y: Sequence[str],
    *,
    n_splits: int = 5,
    n_repeats: int = 2,
    groups: Sequence[str] | None = None,
    seed: int = 0,
) -> list[Fold]:
    """Stratified k-fold splits, repeated; groups never straddle a train/test boundary.

    Parameters
    ----------
    y : sequence of str, length n
        Class labels.
    n_splits : int, default 5
        0 = leave-one-out (leave-one-group-out with ``groups``, e.g. leave-one-patient-out as
        ALGORITHMS.md §8 suggests for replicate arrays); ``n_repeats`` is then ignored.
    n_repeats : int, default 2
    groups : sequence of str, length n, optional
        Samples with the same group id (e.g. replicate arrays of one patient) stay together.
    seed : int, default 0

    Returns
    -------
    list of Fold

    Raises
    ------
    ParameterError
        Fewer than 2 folds, or more folds than the smallest class (or group count) allows.
    """
    for name, value, low, high in (
        ("n_splits", n_splits, 0, None),
        ("n_repeats", n_repeats, 1, None),
        ("seed", seed, 0, FOLD_SEED_MAX),  # seed + repeat seeds a NumPy generator
    ):
        if not whole_number(value) or value < low or (high is not None and value > high):
            limits = f">= {low}" if high is None else f"in [{low}, {high}]"
            raise ParameterError(f"{name} must be a whole number {limits}, got {value!r:.40}")
    y = np.asarray(y)
    classes, counts = np.unique(y, return_counts=True)
    if len(classes) < 2:
        raise ParameterError("evaluation needs at least two sample classes in --labels")
    if n_splits == 0:
        if groups is not None and len(groups) != len(y):
            raise ParameterError(f"--groups gives {len(groups)} values for {len(y)} samples")
        if groups is not None and len(np.unique(np.asarray(groups))) < 2:
            # was scikit-learn's ValueError (an internal error)
            raise ParameterError(
                "--folds 0 with --groups leaves one sample group out at a time and needs at "
                f"least 2 groups; --groups gives 1 ({str(np.asarray(groups)[0])!r})"
            )
        cv = LeaveOneOut() if groups is None else LeaveOneGroupOut()
        split = cv.split(np.zeros((len(y), 1)), y, None if groups is None else np.asarray(groups))
        return _two_classes_trained(
            [Fold(0, j, tr, te) for j, (tr, te) in enumerate(split)], y, groups, n_splits
        )
    if n_splits < 2 or n_repeats < 1:
        raise ParameterError(
            f"--folds must be 0 (leave-one-out) or >= 2 and --repeats >= 1 "
            f"(got {n_splits}, {n_repeats})"
        )
    if groups is None and counts.min() < 2:  # no stratified split has it in train and test
        # leave-one-out helps only beside two other classes: with one, leaving that sample out
        # trains on a single class
        loo = "use --folds 0 (leave-one-out), or " if len(classes) > 2 else ""
        raise ParameterError(
            f"--folds {n_splits}: class '{classes[counts.argmin()]}' has 1 sample, too few for a "
            f"stratified split; {loo}drop or merge that class"
        )
    if groups is None and n_splits > counts.min():
        raise ParameterError(
            f"--folds {n_splits} is more than the smallest class has samples "
            f"('{classes[counts.argmin()]}': {counts.min()}); use --folds {max(2, counts.min())}"
        )
    X = np.zeros((len(y), 1))
    folds = []
    if groups is None:
        cv = RepeatedStratifiedKFold(n_splits=n_splits, n_repeats=n_repeats, random_state=seed)
        for j, (tr, te) in enumerate(cv.split(X, y)):
            folds.append(Fold(j // n_splits, j % n_splits, tr, te))
        return folds
    groups = np.asarray(groups)
    if len(groups) != len(y):
        raise ParameterError(f"--groups gives {len(groups)} values for {len(y)} samples")
    if len(np.unique(groups)) < n_splits:
        raise ParameterError(
            f"--folds {n_splits} is more than the {len(np.unique(groups))} sample groups"
        )
    if n_splits > counts.max():  # was scikit-learn's ValueError (an internal error)
        raise ParameterError(
            f"--folds {n_splits} is more than every class has samples (the largest, "
            f"'{classes[counts.argmax()]}', has {counts.max()}); use --folds {counts.max()} "
            "or fewer"
        )
    for r in range(n_repeats):
        cv = StratifiedGroupKFold(n_splits=n_splits, shuffle=True, random_state=seed + r)
        for j, (tr, te) in enumerate(cv.split(X, y, groups)):
            folds.append(Fold(r, j, tr, te))
    return _two_classes_trained(folds, y, groups, n_splits)


def _two_classes_trained(folds, y, groups, n_splits) -> list[Fold]:
    """``folds``, each of whose training samples hold at least two classes.

    A fold trained on one class was scikit-learn's ValueError for the SVMs (an internal error)
    and an accuracy of 0 for 1-NN: leave-one-out beside a class of one sample, or ``groups``
    that hold every sample of a class (a batch confounded with the classes).
    """
    for f in folds:
        trained = np.unique(y[f.train])
        if len(trained) >= 2:
            continue
        left = sorted(set(np.unique(y).tolist()) - set(trained.tolist()))
        only = f"'{trained[0]}'" if len(trained) else "none"
        missing = ", ".join(f"'{c}'" for c in left)
        if groups is None:
            raise ParameterError(
                f"--folds {n_splits}: leaving out the only sample of class {missing} trains on "
                f"one class ({only}), from which no classifier learns the classes; drop or merge "
                "that class, or label more samples"
            )
        held = sorted({str(g) for g in np.asarray(groups)[f.test]})
        shown = ", ".join(held[:3]) + (", ..." if len(held) > 3 else "")
        raise ParameterError(
            f"--groups: a fold trains on one class ({only}): its held-out group(s) {shown} hold "
            f"every sample of class {missing}, so no classifier learns the classes; give groups "
            "that do not split along the classes (e.g. patients, not batches confounded with "
            "them), or drop --groups"
        )
    return folds


Selector = Callable[[Expression, np.ndarray], Mapping[str, np.ndarray]]


def _fold_accuracy(X, y, order, fold, ks, classifiers) -> dict[tuple[str, int], float]:
    out = {}
    for k in ks:
        cols = order[:k]
        for name in classifiers:
            model = clone(classifier(name)).fit(X[np.ix_(fold.train, cols)], y[fold.train])
            out[(name, k)] = float(
                np.mean(model.predict(X[np.ix_(fold.test, cols)]) == y[fold.test])
            )
    return out


def accuracy_curves(
    expression: Expression,
    y: Sequence[str],
    *,
    folds: Sequence[Fold],
    ks: Sequence[int],
    classifiers: Sequence[str] = ("1nn",),
    orders: Mapping[str, np.ndarray] | None = None,
    select: Selector | None = None,
    progress: Progress | None = None,
) -> list[dict]:
    """Cross-validated accuracy of the top-k genes of every list.

    Exactly one of ``orders`` (book protocol: gene orders computed on all samples) and
    ``select`` (honest protocol) is given. ``select(train_expression, train_labels)`` receives
    ``expression.subset_samples(fold.train)`` and the training labels only and returns
    ``{list name: gene order}`` (column indices, best first).

    Parameters
    ----------
    expression : Expression
    y : sequence of str, length n_samples
    folds : sequence of Fold
    ks : sequence of int
        Numbers of top genes.
    classifiers : sequence of str
        Names of :data:`CLASSIFIERS`.
    progress : kofs.progress.Progress, optional
        Told about every fold (task ``"evaluation folds (book)"`` or ``"... (honest)"``).

    Returns
    -------
    list of dict
        One row per (list, classifier, k): ``list, protocol, classifier, k, accuracy`` (mean
        over folds), ``std`` (over repeats of the per-repeat mean), ``n_folds``.
    """
    if (orders is None) == (select is None):
        raise ValueError("give exactly one of orders (book) and select (honest)")
    for name in classifiers:
        classifier(name)
    y = np.asarray(y)
    X = expression.values
    protocol = "book" if select is None else "honest"
    per: dict[tuple[str, str, int], list[tuple[int, float]]] = {}
    for fold in task(progress, f"evaluation folds ({protocol})", total=len(folds)).each(folds):
        if select is not None:
            fold_orders = select(expression.subset_samples(fold.train), y[fold.train].copy())
            if not isinstance(fold_orders, Mapping):
                raise ParameterError(
                    f"honest: the selector returned {fold_orders!r:.40}, not a mapping of list "
                    "name to gene order (column indices, best first)"
                )
        else:
            fold_orders = orders
        for lname, order in fold_orders.items():
            with threadpool_limits(limits=1):  # OpenMP start-up dominates tiny 1-NN/SVM calls
                acc = _fold_accuracy(X, y, np.asarray(order), fold, ks, classifiers)
            for (cname, k), a in acc.items():
                per.setdefault((lname, cname, k), []).append((fold.repeat, a))
        log.debug("%s protocol: fold %d.%d done", protocol, fold.repeat, fold.index)
    rows = []
    for (lname, cname, k), vals in per.items():
        reps = np.array([r for r, _ in vals])
        acc = np.array([a for _, a in vals])
        rep_means = [acc[reps == r].mean() for r in np.unique(reps)]
        rows.append(
            {
                "list": lname,
                "protocol": protocol,
                "classifier": cname,
                "k": int(k),
                "accuracy": float(acc.mean()),
                "std": float(np.std(rep_means, ddof=1)) if len(rep_means) > 1 else float("nan"),
                "n_folds": len(vals),
            }
        )
    return rows
