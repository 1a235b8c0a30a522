"""Store a run's result in an AnnData, scanpy style (``adata.var`` columns, ``adata.uns``).

``adata.var`` gets ``kofs_rank`` (integer position in the fused order: 1 = best, ties broken
by gene id, so ``adata.var.sort_values("kofs_rank")`` lists the genes best first) and
``kofs_score`` (fused score, higher is better), the fusion's per-gene statistics
(``kofs_q_value``, ...) and, per list, ``kofs_rank_<list>`` (integer position) and
``kofs_score_<list>`` (native scores of the ranker). Genes not ranked (e.g. ``use_raw`` ranked
``raw.var`` genes absent from ``var``) get a missing value (``<NA>`` ranks, NaN scores).
``adata.uns["kofs"]`` holds the aggregation method, the lists, the list weights, the
run's settings, the versions of the software and the ``var`` columns written
(``var_columns``), all writable to ``.h5ad``. A later run stored under the same key first
removes those columns and the marker tables of the earlier one. With marker tables
(labels), ``adata.uns["kofs_markers"]`` holds them in the layout of scanpy's
``rank_genes_groups`` (structured arrays ``names``, ``scores``, ``logfoldchanges``, ``pvals``,
``pvals_adj`` indexed by group, each group's genes by decreasing score, and ``params``), so
``scanpy.get.rank_genes_groups_df(adata, group, key="kofs_markers")`` and
``scanpy.pl.rank_genes_groups(adata, key="kofs_markers")`` read them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["store_result"]


def _h5ad_safe(value: Any) -> Any:
    """Drop None (not writable to .h5ad) and turn tuples into lists, recursively."""
    if isinstance(value, Mapping):
        return {str(k): _h5ad_safe(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        items = [_h5ad_safe(v) for v in value if v is not None]
        return [str(v) for v in items] if any(isinstance(v, str) for v in items) else items
    if isinstance(value, (np.floating, np.integer, np.bool_)):
        return value.item()
    return value


def _marker_uns(tables: Any) -> dict[str, Any]:
    """``rank_genes_groups``-style record of :class:`kofs.rankers.markers.MarkerTables`."""
    orders = [tables.order(g) for g in range(len(tables.groups))]
    groups = [str(g) for g in tables.groups]

    def records(values, dtype):
        cols = [np.asarray(values[g, o], dtype=dtype) for g, o in enumerate(orders)]
        return np.rec.fromarrays(cols, names=groups)

    gene_names = [np.array([tables.genes[i] for i in o], dtype=object) for o in orders]
    return {
        "params": {
            "groupby": str(tables.groupby),
            "reference": "rest",
            "method": str(tables.method),
            "use_raw": False,
            "corr_method": "benjamini-hochberg",
        },
        "names": np.rec.fromarrays(gene_names, names=groups),
        "scores": records(tables.scores, np.float32),
        "logfoldchanges": records(tables.logfoldchanges, np.float32),
        "pvals": records(tables.pvals, np.float64),
        "pvals_adj": records(tables.pvals_adj, np.float64),
    }


def store_result(adata: Any, result: Any, *, key: str = "kofs") -> None:
    """Write ``result`` (a :class:`kofs.pipeline.result.RunResult`) into ``adata`` in place.

    Parameters
    ----------
    adata : anndata.AnnData
    result : RunResult
    key : str
        Prefix of the ``var`` columns and key of ``adata.uns``.
    """
    from kofs.io.output import environment_info

    final = result.final
    index = pd.Index([str(g) for g in adata.var_names])

    def column(values: np.ndarray, genes) -> np.ndarray:
        return (
            pd.Series(np.asarray(values, dtype=np.float64), index=list(genes))
            .reindex(index)
            .to_numpy()
        )

    def positions(ranking: Any) -> Any:
        """1..m in the ranking's order (ties by gene id): int64, or Int64 with <NA>."""
        pos = np.empty(len(ranking.genes), dtype=np.int64)
        pos[ranking.order()] = np.arange(1, len(ranking.genes) + 1)
        col = pd.Series(pos, index=list(ranking.genes)).reindex(index)
        return col.to_numpy(np.int64) if not col.isna().any() else col.astype("Int64").array

    columns: dict[str, Any] = {
        f"{key}_rank": positions(final),
        f"{key}_score": column(final.scores, final.genes),
    }
    for name, values in dict(getattr(final, "statistics", None) or {}).items():
        columns[f"{key}_{name}"] = column(values, final.genes)
    for ranking in result.lists:
        columns[f"{key}_rank_{ranking.name}"] = positions(ranking)
        columns[f"{key}_score_{ranking.name}"] = column(ranking.scores, ranking.genes)
    _drop_previous(adata, key)
    for name, values in columns.items():
        adata.var[name] = values
    weights = (
        {}
        if final.weights is None
        else dict(zip(final.list_names, map(float, final.weights), strict=True))
    )
    versions = {k: v for k, v in environment_info().items() if v is not None}
    try:
        import importlib.metadata

        versions["anndata"] = importlib.metadata.version("anndata")
    except importlib.metadata.PackageNotFoundError:
        pass
    adata.uns[key] = _h5ad_safe(
        {
            "method": final.method,
            "lists": list(final.list_names),
            "weights": weights,
            "higher_is_better": {r.name: bool(r.higher_is_better) for r in result.lists},
            "params": dict(result.settings),
            "versions": versions,
            "var_columns": list(columns),
        }
    )
    tables = getattr(result, "markers", None)
    if tables is not None:
        adata.uns[f"{key}_markers"] = _marker_uns(tables)


def _drop_previous(adata: Any, key: str) -> None:
    """Remove what an earlier :func:`store_result` under ``key`` wrote: the ``var`` columns
    its ``uns[key]["var_columns"]`` names and ``uns[key + "_markers"]``, so that no list,
    statistic or marker table of an earlier run stays beside this run's."""
    previous = adata.uns.get(key)
    named = previous.get("var_columns") if isinstance(previous, Mapping) else None
    if named is not None:
        stale = [c for c in np.asarray(named, dtype=object).ravel().tolist() if c in adata.var]
        if stale:
            adata.var = adata.var.drop(columns=stale)
    if f"{key}_markers" in adata.uns:
        del adata.uns[f"{key}_markers"]
