"""Classic univariate baselines: variance, Fisher score, Laplacian Score (ALGORITHMS.md §1).

Kernels are pure array functions; the registered adapters only pick the knowledge they need.

References
----------
He, Cai & Niyogi, "Laplacian Score for Feature Selection", NIPS 2005 (LS; eqs. 4, 7).
Zhao & Liu, *Spectral Feature Selection for Data Mining*, 2012, eqs. 4.2, 4.3.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from kofs._compute.blocks import is_sparse
from kofs._compute.chunked import is_dask
from kofs._compute.matrix import column_means, column_sq_deviations, constant_genes
from kofs.knowledge.neighbours import ANN_MIN_SAMPLES
from kofs.rankers._inputs import (
    graph_ranker_memory,
    graph_storage,
    labelled,
    resolve_auto,
    sample_graph,
)
from kofs.rankers._spectral_kernels import laplacian_score
from kofs.registry import Param, ranker

__all__ = ["f_test_null", "fisher_score", "variance_score"]

logger = logging.getLogger(__name__)

#: How the sample kNN graph's neighbours are searched (shared by the Laplacian Score and SPEC).
SEARCH_PARAM = Param(
    "auto",
    str,
    f"kNN search: exact below {ANN_MIN_SAMPLES} samples (sparse data with numba: while the "
    "exact search is cheap enough, see docs/single-cell.md), approximate (faiss inverted file) "
    "otherwise; or force exact / approximate",
    choices=("auto", "exact", "approximate"),
)


def variance_score(X: np.ndarray) -> np.ndarray:
    """Population variance ``(1/n) sum_i (f_ri - mu_r)^2`` of every column (higher is better).

    Parameters
    ----------
    X : ndarray or scipy.sparse CSR of shape (n, m)
        A sparse ``X`` is reduced over its stored entries (two-pass, never densified).

    Returns
    -------
    ndarray of shape (m,)
    """
    if is_sparse(X) or is_dask(X):
        return column_sq_deviations(X) / X.shape[0]
    return np.var(X, axis=0)


def fisher_score(X: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Fisher score ``sum_k n_k (mu^k - mu)^2 / sum_k n_k (sigma^k)^2`` (book eq. 4.3).

    ``sigma^k`` is the population (1/n_k) within-class standard deviation. Higher is better.

    Parameters
    ----------
    X : ndarray or scipy.sparse CSR of shape (n, m)
        A sparse ``X`` is reduced class by class over its stored entries (never densified).
    codes : ndarray of shape (n,), int
        Class code per sample, 0..c-1 (every sample labelled).

    Returns
    -------
    ndarray of shape (m,)
        ``+inf`` when the within-class scatter is 0 and the between-class scatter > 0
        (perfectly separating gene); NaN when both are 0 (constant gene).
    """
    codes = np.asarray(codes, dtype=np.int64)
    if is_dask(X):
        return _chunked_fisher(X, codes)
    mu = column_means(X)
    between = np.zeros(X.shape[1])
    within = np.zeros(X.shape[1])
    for c in np.unique(codes):
        Xc = X[codes == c]
        mu_c = column_means(Xc)
        between += Xc.shape[0] * (mu_c - mu) ** 2
        scatter = column_sq_deviations(Xc, mu_c)
        scatter[constant_genes(Xc)] = 0.0  # exact zero for class-constant genes
        within += scatter
    between[constant_genes(X)] = 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        out = between / within
    out[(within == 0) & (between > 0)] = np.inf
    out[(within == 0) & (between == 0)] = np.nan
    return out


def _chunked_fisher(X, codes: np.ndarray) -> np.ndarray:
    """:func:`fisher_score` of a dask ``X`` from one pass over its chunks (class moments)."""
    from kofs._compute.chunked import moments
    from kofs._compute.ranks import constant_range

    mom = moments(X, codes)
    present = np.flatnonzero(mom.n > 0)
    mu = mom.sums[present].sum(axis=0) / mom.n[present].sum()
    between = np.zeros(X.shape[1])
    within = np.zeros(X.shape[1])
    for c in present:
        between += mom.n[c] * (mom.mean[c] - mu) ** 2
        scatter = mom.m2[c].copy()
        scatter[constant_range(mom.hi[c], mom.lo[c])] = 0.0
        within += scatter
    between[constant_range(mom.hi[present].max(axis=0), mom.lo[present].min(axis=0))] = 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        out = between / within
    out[(within == 0) & (between > 0)] = np.inf
    out[(within == 0) & (between == 0)] = np.nan
    return out


@ranker(
    "variance",
    higher_is_better=True,
    summary="Population variance of each gene",
    reference="He, Cai & Niyogi, NIPS 2005 (baseline); Liu, Sun & Zhang, Sparsity Score, eq. 1",
    family="classic",
    sparse=True,
)
def _variance(X, inputs, *, seed):
    return variance_score(X)


def f_test_null(n: int, k: int) -> dict[str, Any] | None:
    """The null of the Fisher score of ``k`` classes over ``n`` samples: ``(n - k) / (k - 1)``
    times the score is the one-way ANOVA F(k - 1, n - k) statistic (read by
    :mod:`kofs.aggregate.nulls`); None when the F test has no degrees of freedom."""
    if k < 2 or n - k < 1:
        return None
    return {"distribution": "f", "df1": k - 1, "df2": n - k, "scale": (n - k) / (k - 1)}


@ranker(
    "fisher",
    higher_is_better=True,
    summary="Fisher score: between- over within-class scatter",
    reference="Zhao & Liu 2012 eq. 4.3; He et al. 2005 eq. 4",
    family="classic",
    requires=("categories",),
    sparse=True,
)
def _fisher(X, inputs, *, seed):
    Xl, codes = labelled(X, inputs, "ranker 'fisher'")
    # its null: the one-way ANOVA F test (the fusion reads the list's p-values)
    null = f_test_null(int(Xl.shape[0]), int(np.unique(codes).size))
    return fisher_score(Xl, codes), ({} if null is None else {"null": null})


def _laplacian_memory(n: int, m: int, p, given: str | None) -> int:
    kind = "knn" if p["graph"] == "auto" and given is None else p["graph"]
    return graph_ranker_memory(n, m, graph_storage(kind, n, given), k=p["k"])


@ranker(
    "laplacian",
    higher_is_better=False,
    summary="Laplacian Score: locality preservation on a sample graph",
    reference="He, Cai & Niyogi, NIPS 2005; Zhao & Liu 2012 eq. 4.2",
    family="classic",
    uses=("similarity", "categories"),
    sparse=True,
    memory=_laplacian_memory,
    params={
        "graph": Param(
            "auto",
            str,
            "sample graph: auto = the given similarity if any, else knn; knn = symmetric kNN "
            "heat kernel; label = S^FIS (1/n_l within class) from the labels; given = the input "
            "similarity",
            choices=("auto", "knn", "label", "given"),
        ),
        "k": Param(5, int, "neighbours of the kNN graph", low=1),
        "t": Param(
            None,
            float,
            "heat-kernel t (default: mean squared distance over kNN edges)",
            low=0,
            closed="right",
        ),
        "metric": Param(
            "euclidean",
            str,
            "kNN distance (cosine = Euclidean on unit-norm samples)",
            choices=("euclidean", "cosine"),
        ),
        "weight": Param(
            "heat",
            str,
            "edge weight: heat kernel exp(-d^2/t) or binary 0-1",
            choices=("heat", "binary"),
        ),
        "search": SEARCH_PARAM,
    },
)
def _laplacian(X, inputs, *, seed, graph, k, t, metric, weight, search):
    kind = resolve_auto(graph, inputs, "knn")
    build = (
        {"k": k, "t": t, "metric": metric, "weight": weight, "search": search, "seed": seed}
        if kind == "knn"
        else {}
    )
    S, Xs, name, used = sample_graph(
        X, inputs, kind, f"ranker 'laplacian' with graph={kind!r}", **build
    )
    return laplacian_score(Xs, S), {"graph": name, **used}
