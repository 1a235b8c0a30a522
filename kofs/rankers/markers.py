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

import logging
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

log = logging.getLogger(__name__)


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


def marker_groups_problem(labels: SampleCategories) -> str | None:
    """Why ``labels`` give no marker tables (fewer than 2 groups, or fewer than 2 groups of 2
    cells or more: a group is tested against the rest with its own variance), or None."""
    codes, classes = label_codes(labels.labels)
    if len(classes) < 2:
        return f"marker tables need at least 2 groups in labels {labels.name!r}, got {len(classes)}"
    sizes = np.bincount(codes[codes >= 0], minlength=len(classes))
    tested = int(np.count_nonzero(sizes >= 2))
    if tested < 2:
        return (
            f"marker tables need at least 2 groups of 2 cells or more in labels "
            f"{labels.name!r}, got {tested}"
        )
    return None


def marker_tables(
    expression: Expression, labels: SampleCategories, *, method: str = "t-test"
) -> MarkerTables:
    """Marker tables of the labelled cells of ``expression`` (labels aligned to its samples;
    unlabelled cells left out).

    A group of one cell has no variance to test with: it gets no table (one warning names
    such groups), and its cell stays in the other groups' "rest".

    Raises
    ------
    ParameterError
        An unknown method, or fewer than 2 groups of 2 cells or more.
    """
    if method not in MARKER_METHODS:
        raise ParameterError(
            f"markers: unknown test {method!r}; choose one of {', '.join(MARKER_METHODS)}"
        )
    problem = marker_groups_problem(labels)
    if problem:
        raise ParameterError(f"{problem} (use --markers none, or merge groups)")
    codes, classes = label_codes(labels.labels)
    sizes = np.bincount(codes[codes >= 0], minlength=len(classes))
    tested = np.flatnonzero(sizes >= 2)
    if tested.size < len(classes):
        single = [classes[i] for i in np.flatnonzero(sizes < 2)]
        log.warning(
            "marker tables: %d group(s) of labels %r have one cell and get no table (%s%s): a "
            "test against the rest needs at least 2",
            len(single), labels.name, ", ".join(map(str, single[:5])),
            ", ..." if len(single) > 5 else "",
        )  # fmt: skip
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
        groups=tuple(classes[i] for i in tested),
        genes=tuple(expression.genes),
        scores=out["scores"][tested],
        logfoldchanges=out["logfoldchanges"][tested],
        pvals=out["pvals"][tested],
        pvals_adj=out["pvals_adj"][tested],
        sizes=out["sizes"][tested],
        values=what,
    )
