"""Per-group marker tables: every group of cells against the rest, as scanpy's
``rank_genes_groups`` makes them (t-test or Wilcoxon; :mod:`kofs.rankers._marker_kernels`).

:func:`marker_tables` is the single-cell answer with labels that users read next to the ranked
list: per group, every gene's statistic, log2 fold change, p and BH q. The tests run on
log-normalised values, as scanpy's do: raw counts are normalised first (``normalize_total`` to
the median total + ``log1p``, :func:`kofs._compute.counts.log_normalised`); log-normalised counts are
used as given (their log base recognised); other values are used as given and their fold
changes are then only scanpy's formula applied to them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from kofs._compute.counts import counts_view, log_normalised
from kofs.errors import InputError, ParameterError
from kofs.knowledge.similarity_kernels import label_codes
from kofs.rankers._marker_kernels import MARKER_METHODS, group_tests
from kofs.types import Expression, SampleCategories

__all__ = ["MARKER_METHODS", "MarkerTables", "marker_tables"]

_FIELDS = ("scores", "logfoldchanges", "pvals", "pvals_adj")


@dataclass(frozen=True, eq=False)
class MarkerTables:
    """Every group against the rest (scanpy's ``rank_genes_groups`` with ``reference="rest"``).

    Attributes
    ----------
    method : {"t-test", "wilcoxon"}
    groupby : str
        Name of the labels.
    groups : tuple of str
    genes : tuple of str
        Gene ids, the columns of the arrays.
    scores, logfoldchanges, pvals, pvals_adj : ndarray of shape (n_groups, n_genes)
    sizes : ndarray of shape (n_groups,)
        Cells per group.
    values : str
        What was tested: ``"log-normalised counts"``, ``"log1p values as given"``, ...
    """

    method: str
    groupby: str
    groups: tuple[str, ...]
    genes: tuple[str, ...]
    scores: np.ndarray
    logfoldchanges: np.ndarray
    pvals: np.ndarray
    pvals_adj: np.ndarray
    sizes: np.ndarray
    values: str

    def order(self, g: int) -> np.ndarray:
        """Gene columns of group ``g`` by decreasing score (ties by gene id)."""
        ids = np.empty(len(self.genes), dtype=np.int64)
        ids[np.argsort(np.asarray(self.genes, dtype=object), kind="stable")] = np.arange(
            len(self.genes)
        )
        return np.lexsort((ids, -self.scores[g]))

    def to_frame(self, group: str | None = None, *, symbols=None):
        """A long pandas DataFrame: ``group, rank, gene, [symbol,] score, logfoldchange,
        pval, pval_adj``, each group's genes by decreasing score (scanpy's order); one group
        with ``group``."""
        import pandas as pd

        if group is not None and group not in self.groups:
            raise ParameterError(
                f"marker tables: no group {group!r}; groups: {', '.join(self.groups)}"
            )
        parts = []
        for g, name in enumerate(self.groups):
            if group is not None and name != group:
                continue
            o = self.order(g)
            part = {
                "group": name,
                "rank": np.arange(1, o.size + 1),
                "gene": [self.genes[i] for i in o],
            }
            if symbols:
                part["symbol"] = [symbols.get(self.genes[i], "") for i in o]
            part.update(
                score=self.scores[g, o],
                logfoldchange=self.logfoldchanges[g, o],
                pval=self.pvals[g, o],
                pval_adj=self.pvals_adj[g, o],
            )
            parts.append(pd.DataFrame(part))
        return pd.concat(parts, ignore_index=True)

    def summary(self, top: int = 10) -> dict[str, Any]:
        """A small JSON-friendly record (manifest): method, groups with sizes, top genes."""
        return {
            "method": self.method,
            "groupby": self.groupby,
            "reference": "rest",
            "values": self.values,
            "groups": {
                name: {
                    "cells": int(self.sizes[g]),
                    "top": [self.genes[i] for i in self.order(g)[:top]],
                }
                for g, name in enumerate(self.groups)
            },
        }


def _log_values(expression: Expression):
    """(values for the tests, log base or None, what they are)."""
    try:
        counts = counts_view(expression.values, who="marker tables", where=expression.source)
    except InputError:
        return expression.values, None, "values as given"
    if counts.source == "counts":
        return log_normalised(counts), None, "log-normalised counts (normalize_total + log1p)"
    if counts.source == "log2p":
        return expression.values, 2.0, "log2(1 + x) values as given"
    return expression.values, None, "log1p values as given"


def marker_tables(
    expression: Expression, labels: SampleCategories, *, method: str = "t-test"
) -> MarkerTables:
    """Marker tables of the labelled cells of ``expression`` (labels aligned to its samples;
    unlabelled cells left out).

    Raises
    ------
    ParameterError
        An unknown method, fewer than 2 groups, or a group of one cell (no variance).
    """
    if method not in MARKER_METHODS:
        raise ParameterError(
            f"markers: unknown test {method!r}; choose one of {', '.join(MARKER_METHODS)}"
        )
    codes, classes = label_codes(labels.labels)
    if len(classes) < 2:
        raise ParameterError(
            f"marker tables need at least 2 groups in labels {labels.name!r}, got {len(classes)}"
        )
    sizes = np.bincount(codes[codes >= 0], minlength=len(classes))
    if sizes.min() < 2:
        small = classes[int(np.argmin(sizes))]
        raise ParameterError(
            f"marker tables: group {small!r} of labels {labels.name!r} has one cell; a test "
            "against the rest needs at least 2 (use --markers none, or merge the group)"
        )
    values, base, what = _log_values(expression)
    keep = codes >= 0
    if not keep.all():
        from kofs._compute.chunked import is_dask, take_rows

        rows = np.flatnonzero(keep)
        values = take_rows(values, rows) if is_dask(values) else values[rows]
        codes = codes[rows]
    out = group_tests(values, codes, method=method, log_base=base)
    return MarkerTables(
        method=method,
        groupby=labels.name,
        groups=tuple(classes),
        genes=tuple(expression.genes),
        scores=out["scores"],
        logfoldchanges=out["logfoldchanges"],
        pvals=out["pvals"],
        pvals_adj=out["pvals_adj"],
        sizes=out["sizes"],
        values=what,
    )
