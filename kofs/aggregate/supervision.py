"""Supervision of list weights by sample labels: a list's reliability is its cross-validated
predictive value on the samples it was built from.

For every list, the samples are split into stratified folds; a 1-nearest-neighbour classifier
(Euclidean, the book's ACC protocol) on the list's top k genes predicts the held-out fold; the
accuracy is averaged over folds and over k in ``top``. The reliability is Cohen's-kappa-like
``max(0, (acc - base) / (1 - base))`` where ``base`` is the larger of the majority-class rate and
the mean accuracy of random gene sets of the same sizes (``n_random`` seeded draws), so a list no
better than random genes gets 0 (on an easy task such as B vs T lineage, 30 random genes already
classify 81 % of the samples).

Called inside the honest protocol of ``kofs evaluate`` on the *training* samples of an outer
fold only (:class:`kofs.evaluate.rerank.KofsRanking` passes just those), so the test samples
are never seen. Lists built with the labels are re-built inside every inner fold (``refit``),
the others are label-free and computed once. :func:`soft_label_weights` turns the
reliabilities into list weights (docs/aggregation.md, Supervision).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from kofs._compute.chunked import is_dask
from kofs.errors import ParameterError

__all__ = ["MAX_SAMPLES", "label_reliabilities", "soft_label_weights", "stratified_subsample"]

#: Samples above which label reliabilities use a stratified subsample (see ``max_samples``).
MAX_SAMPLES = 5000


def label_reliabilities(
    X: np.ndarray,
    labels: Sequence[str] | np.ndarray,
    ranks: np.ndarray,
    *,
    top: Sequence[int] = (10, 30, 50),
    folds: int = 5,
    seed: int = 0,
    n_random: int = 5,
    genes: Sequence[str] | None = None,
    samples: Sequence[str] | None = None,
    n_boot: int = 0,
    max_samples: int | None = MAX_SAMPLES,
    refit: Callable[[np.ndarray], Mapping[int, np.ndarray]] | None = None,
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Cross-validated predictive value of every list.

    Parameters
    ----------
    X : ndarray (n_samples, M)
        Expression of the (training) samples, genes in the order of ``ranks``.
    labels : sequence (n_samples,)
    ranks : ndarray (M, L)
        Ranks of the lists (1 = best; NaN = absent, never selected).
    top : sequence of int
        Numbers of top genes; those above a quarter of the genes are skipped (all of them:
        a tenth of the genes).
    folds : int
        Stratified folds (reduced to the smallest class size, at least 2).
    seed : int
    n_random : int
        Random gene sets of each size whose mean accuracy is the chance level.
    genes, samples : sequence of str, optional
        Ids of the columns and rows; when given, genes and samples are put in the order of
        their ids first, so the folds, the random gene sets and every tie-break (hence the
        result) do not depend on the order of the matrix.
    n_boot : int
        Bootstrap replicates over samples (seeded by ``seed``): each replicate resamples the
        samples' cross-validated 1-NN outcomes (correct or not, per list and per random gene
        set) and recomputes every reliability. The lists and folds are held fixed, so the
        spread is the sampling error of the accuracies, not of the lists.
    max_samples : int or None
        Above this many samples the accuracies are estimated on a seeded stratified subsample
        of that size (every class keeps at least two samples): the 1-NN step holds a samples x
        samples distance block per gene set, 200 MB at 5,000 samples but 320 GB at 200,000
        cells. The sampling error of an accuracy on 5,000 samples is at most 0.7 points.
        None: all samples.
    refit : callable, optional
        For lists built with the labels (Fisher score, ReliefF, ...): ``refit(rows)`` returns
        ``{list column: ranks (M,)}`` of those lists re-built on the samples ``rows`` alone
        (row indices of ``X``; ranks in the row order of ``ranks``). Each such list is then
        re-built inside every fold on the fold's training samples, so its held-out accuracy is
        honest: built once on all samples, a supervised list's top genes were chosen with the
        held-out samples' labels and its accuracy is optimistic (on the 89 B-ALL samples
        Fisher's looked better than variance's in the honest protocol's inner folds although
        it predicts worse on the outer test samples). A list missing from the answer of some
        fold (its ranker cannot be re-built on those samples) is judged as built on all samples.

    Returns
    -------
    ndarray (L,)
        Reliabilities in [0, 1]; with ``n_boot`` > 0, also the replicates, shape (n_boot, L).
    """
    from sklearn.model_selection import StratifiedKFold

    # a sparse (CSR) or chunked (dask) matrix stays so: only the columns of each gene set are
    # made dense (exactly the stored values, so sparse and chunked runs tie-break alike)
    lazy = sp.issparse(X) or is_dask(X)
    X = sp.csr_matrix(X, dtype=np.float64) if sp.issparse(X) else X
    if not lazy:
        X = np.asarray(X, dtype=np.float64)
    y = np.asarray(labels)
    R = np.asarray(ranks, dtype=np.float64)
    g = np.arange(R.shape[0])
    rows = np.arange(len(y))  # original row of each internal row
    if genes is not None:
        g = np.argsort(np.asarray(genes, dtype=str), kind="stable")
        X, R = X[:, g], R[g]
    if samples is not None:
        s = np.argsort(np.asarray(samples, dtype=str), kind="stable")
        X, y, rows = X[s], y[s], rows[s]
    _, counts = np.unique(y, return_counts=True)
    if len(counts) < 2 or counts.min() < 2:
        raise ParameterError("label supervision needs at least two classes with two samples each")
    if max_samples is not None and len(y) > max_samples:
        keep = stratified_subsample(y, max_samples, seed)
        X, y, rows = X[keep], y[keep], rows[keep]
        _, counts = np.unique(y, return_counts=True)
    k_folds = int(min(folds, counts.min()))
    base = counts.max() / counts.sum()
    splits = list(StratifiedKFold(k_folds, shuffle=True, random_state=seed).split(X, y))
    if not lazy:  # (distances do not depend on the centring; it only helps the rounding)
        X = np.nan_to_num(X - np.nanmean(X, axis=0))
    # a top k covering a quarter of the genes or more no longer tells lists apart
    ks = [k for k in top if k <= R.shape[0] / 4] or [max(1, R.shape[0] // 10)]

    def correct(cols: np.ndarray) -> np.ndarray:
        # per sample: 1 when its held-out 1-NN prediction is right (Euclidean; ties to the
        # first training sample, as scikit-learn's brute force)
        Z = _dense_columns(X, cols) if lazy else X[:, cols]
        sq = (Z * Z).sum(axis=1)
        D = sq[:, None] + sq[None, :] - 2.0 * (Z @ Z.T)
        hit = np.zeros(len(y))
        for train, test in splits:
            nearest = train[np.argmin(D[np.ix_(test, train)], axis=1)]
            hit[test] = y[nearest] == y[test]
        return hit

    def correct_in_fold(cols: np.ndarray, train: np.ndarray, test: np.ndarray) -> np.ndarray:
        Z = _dense_columns(X, cols) if lazy else X[:, cols]
        sq = (Z * Z).sum(axis=1)
        D = sq[test, None] + sq[None, train] - 2.0 * (Z[test] @ Z[train].T)
        return y[train[np.argmin(D, axis=1)]] == y[test]

    def top_columns(r: np.ndarray, k: int) -> np.ndarray:
        order = np.argsort(np.where(np.isnan(r), np.inf, r), kind="stable")
        return order[: min(k, len(order))]

    rng = np.random.default_rng(seed)
    M = R.shape[0]
    # per-sample outcomes, averaged over k (and over the random sets for the chance level)
    chance = np.mean(
        [correct(rng.choice(M, min(k, M), replace=False)) for k in ks for _ in range(n_random)],
        axis=0,
    )
    hits = np.zeros((len(y), R.shape[1]))
    refitted: set[int] = set()
    if refit is not None:
        per_fold = [refit(np.sort(rows[train])) for train, _ in splits]
        # a list re-built in some folds only is judged as built on all samples in every fold
        refitted = set.intersection(*(set(f) for f in per_fold)) if per_fold else set()
        for (train, test), lists in zip(splits, per_fold, strict=True):
            for j in refitted:
                r = np.asarray(lists[j], dtype=np.float64)[g]
                hits[test, j] = np.mean(
                    [correct_in_fold(top_columns(r, k), train, test) for k in ks], axis=0
                )
    for j in range(R.shape[1]):
        if j not in refitted:
            hits[:, j] = np.mean([correct(top_columns(R[:, j], k)) for k in ks], axis=0)

    def reliabilities(idx: np.ndarray | None) -> np.ndarray:
        acc = hits.mean(axis=0) if idx is None else hits[idx].mean(axis=0)
        c = chance.mean() if idx is None else chance[idx].mean()
        b = max(majority, float(c))
        return np.maximum(0.0, (acc - b) / (1.0 - b)) if b < 1.0 else np.zeros(R.shape[1])

    majority = base
    out = reliabilities(None)
    if n_boot <= 0:
        return out
    boot = np.random.default_rng([seed, 1])
    reps = np.array([reliabilities(boot.integers(0, len(y), len(y))) for _ in range(n_boot)])
    return out, reps


def soft_label_weights(
    v: np.ndarray, replicates: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """Soft list weights from label reliabilities: each list's chance of being the most
    predictive list, relative to the likeliest list's.

    ``replicates`` (B, L) are paired bootstrap replicates of the reliabilities (the same
    resampled samples for every list), so ``P(best)_l`` is the share of replicates in which
    list l is the best (ties shared). The weight ``P(best)_l / max_k P(best)_k`` is 1 for the
    likeliest list, near 1 for lists the samples cannot tell from it, and goes to 0 only for a
    list that is measurably less predictive in nearly every replicate: no hard cut, and with few
    samples the labelled list is never dropped for noise. Without replicates the weights are
    ``v / max v``.

    Returns
    -------
    weights : ndarray (L,) in [0, 1]
    p_best : ndarray (L,), summing to 1
    """
    v = np.clip(np.asarray(v, dtype=np.float64), 0.0, None)
    L = len(v)
    if replicates is None or len(replicates) == 0:
        top = v.max() if L else 0.0
        w = v / top if top > 0 else np.ones(L)
        return w, w / w.sum() if w.sum() > 0 else w
    reps = np.asarray(replicates, dtype=np.float64)
    best = reps >= reps.max(axis=1, keepdims=True) - 1e-12
    p_best = (best / best.sum(axis=1, keepdims=True)).mean(axis=0)
    return p_best / p_best.max(), p_best


def stratified_subsample(y: np.ndarray, size: int, seed: int) -> np.ndarray:
    """Sorted row indices of a seeded stratified subsample of about ``size`` rows.

    Each class keeps its share of ``size`` (rounded), at least two rows (or all it has).
    """
    rng = np.random.default_rng([seed, 2])
    classes, inverse, counts = np.unique(y, return_inverse=True, return_counts=True)
    take = np.maximum(np.minimum(counts, 2), np.round(size * counts / counts.sum()).astype(int))
    take = np.minimum(take, counts)
    rows = [
        np.sort(rng.permutation(np.flatnonzero(inverse == c))[: take[c]])
        for c in range(len(classes))
    ]
    return np.sort(np.concatenate(rows))


def _dense_columns(X: Any, cols: np.ndarray) -> np.ndarray:
    """Columns ``cols`` of a sparse (CSR) or chunked (dask) matrix as a dense array."""
    Z = X[:, cols]
    if is_dask(Z):
        Z = Z.compute()
    return Z.toarray() if sp.issparse(Z) else np.asarray(Z, dtype=np.float64)
