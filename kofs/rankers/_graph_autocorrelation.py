"""The graph autocorrelation rankers' computations (:mod:`kofs.rankers.autocorrelation` has
the registry adapters and the method's description). Imported when one of them runs: it loads
the count kernels (numba), the cell graph and the programme tests."""

from __future__ import annotations

import logging
import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from kofs._compute.counts import Counts, counts_view, log_normalised, masked_totals
from kofs.errors import InputError
from kofs.knowledge.cell_graph import cell_graph, graph_values
from kofs.knowledge.programmes import independent_programmes, named_programmes
from kofs.rankers._autocorrelation_kernels import hotspot_statistic, morans_i, normal_statistic
from kofs.rankers._count_kernels import (
    binomial_deviance,
    pearson_residual_variance,
    seurat_v3_variance,
)
from kofs.rankers.classic import variance_score

__all__ = ["hotspot_scores", "morans_scores"]

log = logging.getLogger(__name__)

_HVG = {
    "pearson-residuals": pearson_residual_variance,
    "deviance": binomial_deviance,
    "seurat-v3": seurat_v3_variance,
}

#: Per counts view: the HVG scores computed for it (rankers of one run share them).
_SCORES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@dataclass(frozen=True, eq=False)
class _Data:
    """What the statistic and the graphs see: counts (count null, log-normalised graph genes)
    or, for values that are not counts, the values themselves (Hotspot's normal model)."""

    counts: Counts | None
    values: Any = None
    totals: np.ndarray | None = None

    @property
    def n_cells(self) -> int:
        return (self.counts.X if self.counts is not None else self.values).shape[0]

    def statistic(self, W, cols: np.ndarray) -> np.ndarray:
        """The z-scores of the genes ``cols`` on the graph ``W``."""
        if self.counts is not None:
            return hotspot_statistic(self.counts, W, cols)[0]
        return normal_statistic(self.values[:, cols], W)

    def graph(self, genes, p, seed):
        L = graph_values(self.counts, genes, self.values, totals=self.totals)
        return cell_graph(L, **_graph_params(p, seed))


def _hvg_score(counts: Counts, method: str) -> np.ndarray:
    cached = _SCORES.setdefault(counts, {})
    if method not in cached:
        cached[method] = _HVG[method](counts)
    return cached[method]


def _top(score: np.ndarray, allowed: np.ndarray, n: int) -> np.ndarray:
    """The ``n`` highest-scoring allowed columns (NaN never), ties by column."""
    s = np.where(allowed & np.isfinite(score), score, -np.inf)
    order = np.lexsort((np.arange(s.size), -s))
    order = order[np.isfinite(s[order])]
    return np.sort(order[:n])


def _search(search: str) -> bool | None:
    return {"auto": None, "exact": True, "approximate": False}[search]


def _graph_params(p: dict[str, Any], seed: int) -> dict[str, Any]:
    return {"n_pcs": p["n_pcs"], "k": p["neighbors"], "seed": seed, "exact": _search(p["search"])}


def _scores(data: _Data, score, allowed, folds, p, seed):
    """Z of every gene, each fold scored on the graph of the other fold's top genes."""
    z = np.full(score.size, np.nan)
    per_fold = max(2, p["n_top_genes"] // (2 if p["cross_fit"] else 1))
    if not p["cross_fit"]:
        genes = _top(score, allowed, per_fold)
        z[:] = data.statistic(data.graph(genes, p, seed), np.arange(score.size))
        return z, [int(genes.size)]
    used = []
    for f in (0, 1):
        genes = _top(score, allowed & (folds != f), per_fold)
        cols = np.flatnonzero(folds == f)
        z[cols] = data.statistic(data.graph(genes, p, seed), cols)
        used.append(int(genes.size))
    return z, used


def _programmes(counts: Counts, score, allowed, p, seed, expression, info) -> np.ndarray:
    """Columns of the identity-independent programmes among the candidate graph genes (the
    ``n_top_genes`` most variable allowed genes), with the genes that co-vary with them, found
    on a seeded subsample of :data:`~kofs.knowledge.programmes.TEST_CELLS` cells;
    ``info["programmes"]`` records every module tested."""
    graph_genes = _top(score, allowed, p["n_top_genes"])
    with threadpool_limits(limits=1, user_api="blas"):  # small matrices: threads only cost
        found = independent_programmes(counts, graph_genes, seed=seed)
    info["programmes"] = [f.as_dict(expression.genes) for f in found]
    nuisance = [f for f in found if f.independent]
    if not nuisance:
        return np.zeros(0, dtype=np.int64)
    drop = np.unique(np.concatenate([f.associated for f in nuisance]))
    info["excluded_genes"] = int(drop.size)
    log.info(
        "hotspot: %d identity-independent programme(s) found (%d genes with those co-varying "
        "with them); they do not build the cell graph", len(nuisance), drop.size,
    )  # fmt: skip
    return drop


def hotspot_scores(X, *, seed: int, expression, **p) -> tuple[np.ndarray, dict[str, Any]]:
    """The ``hotspot`` ranker (:mod:`kofs.rankers.autocorrelation`)."""
    info: dict[str, Any] = {}
    try:
        counts = counts_view(X, who="ranker 'hotspot'", where=expression.source)
    except InputError:
        counts = None
    if counts is not None:
        data = _Data(counts)
        score = _hvg_score(counts, p["hvg"])
        allowed = counts.gene_totals > 0
        info.update(model="count null (negative binomial)", counts=counts.source, hvg=p["hvg"])
    else:  # not counts: Hotspot's normal model, graph genes by variance
        log.warning(
            "ranker 'hotspot': the values are not counts (nor log-normalised counts): smoothness "
            "is judged against a normal null and the graph genes are the most variable ones; "
            "give the counts for the count null (--layer, --use-raw)"
        )
        data = _Data(None, X)
        score = variance_score(X)
        allowed = score > 0
        info.update(model="normal null (values not counts)", hvg="variance")
    m = X.shape[1]
    if p["programmes"] == "exclude":
        named = named_programmes(expression)
        for mask in named.values():
            allowed &= ~mask
        info["named_programmes"] = {k: int(v.sum()) for k, v in named.items()}
    folds = np.random.default_rng(seed).permutation(m) % 2
    if p["programmes"] == "exclude" and counts is not None:
        drop = _programmes(counts, score, allowed, p, seed, expression, info)
        allowed[drop] = False
        if not allowed[counts.gene_totals > 0].all():
            # cells normalised by their counts outside the nuisance programmes: a strong
            # programme then does not shift every other gene of the cells it is active in
            data = _Data(counts, totals=masked_totals(counts, allowed))
    z, used = _scores(data, score, allowed, folds, p, seed)
    info["graph_genes"] = used
    return z, info


def morans_scores(X, inputs, *, seed: int, expression, **p) -> tuple[np.ndarray, dict[str, Any]]:
    """The ``morans-i`` ranker (:mod:`kofs.rankers.autocorrelation`)."""
    info: dict[str, Any] = {}
    try:
        counts = counts_view(X, who="ranker 'morans-i'", where=expression.source)
    except InputError:  # values that are not counts: ranked as given
        counts = None
    if inputs.similarity is not None:
        W = inputs.similarity.matrix
        info["graph"] = inputs.similarity.name
    else:
        data = _Data(counts) if counts is not None else _Data(None, X)
        if counts is not None:
            score = _hvg_score(counts, p["hvg"])
            allowed = counts.gene_totals > 0
        else:
            score = variance_score(X)
            allowed = score > 0
        W = data.graph(_top(score, allowed, p["n_top_genes"]), p, seed)
        info["graph"] = "cell graph"
    if counts is not None and counts.source == "counts":
        values = log_normalised(counts)
        info["values"] = "log-normalised counts"
    else:
        values = X
        info["values"] = "as given"
    return morans_i(values, W), info
