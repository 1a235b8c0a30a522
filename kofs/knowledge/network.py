"""Interaction networks -> K_REL^{int,FEA}: a sparse m x m gene graph aligned to the matrix
(book Table 6.2: INT^FEA -> REL^{int,FEA}), used by relevance propagation (eq. 6.14) and the
graph-based sample similarities."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

from kofs.errors import CoverageError, ParameterError
from kofs.io.ids import CoverageReport, match_gene_ids
from kofs.io.interaction_table import Interactions
from kofs.types import Expression, FeatureRelation

log = logging.getLogger(__name__)

__all__ = ["interactions_to_relation", "max_merge_edges"]


def max_merge_edges(
    rows: np.ndarray, cols: np.ndarray, weights: np.ndarray, n: int
) -> sp.csr_matrix:
    """CSR n x n matrix from an edge list, repeated (row, col) entries merged by maximum.

    Parameters
    ----------
    rows, cols : int arrays of shape (E,)
    weights : float array of shape (E,)
    n : int

    Returns
    -------
    csr_matrix of shape (n, n), float64, no explicit duplicates
    """
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    weights = np.asarray(weights, dtype=np.float64)
    order = np.lexsort((weights, cols, rows))
    r, c, w = rows[order], cols[order], weights[order]
    last = np.ones(len(r), dtype=bool)
    if len(r) > 1:
        last[:-1] = (r[1:] != r[:-1]) | (c[1:] != c[:-1])
    a = sp.csr_matrix((w[last], (r[last], c[last])), shape=(n, n))
    a.sort_indices()
    return a


def interactions_to_relation(
    interactions: Interactions,
    expression: Expression,
    *,
    min_weight: float = 0.0,
    symmetrize: bool = True,
    ignore_direction: bool = False,
    id_map: Mapping[str, str] | None = None,
) -> tuple[FeatureRelation, CoverageReport]:
    """Map an interaction edge table onto the matrix's genes as a sparse weighted graph.

    Parameters
    ----------
    interactions : Interactions
    expression : Expression
    min_weight : float, default 0
        Drop edges with ``weight < min_weight`` (zero-weight edges never appear in the sparse
        graph).
    symmetrize : bool, default True
        Store each undirected edge in both directions (merged by maximum when the file gives
        both), so an all-undirected network yields a symmetric matrix. With False every edge
        is stored once, as listed.
    ignore_direction : bool, default False
        Treat directed edges (KGML, OmniPath) as undirected. Otherwise they stay one-way and
        the relation is marked ``directed``.
    id_map : mapping, optional
        User id table source id -> matrix id (``--id-map``).

    Returns
    -------
    relation : FeatureRelation
        CSR m x m over ``expression.genes``, no self-loops (edges whose two ends map to one
        gene are dropped), repeated pairs merged by maximum weight.
    report : CoverageReport

    Raises
    ------
    ParameterError
        Negative ``min_weight``.
    CoverageError
        No node matches the matrix, or no edge joins two matrix genes.
    """
    if not np.isfinite(min_weight) or min_weight < 0:
        raise ParameterError(f"min_weight must be a finite number >= 0, got {min_weight!r}")
    source = f"interactions {Path(interactions.path).name}" if interactions.path else "interactions"
    mapping, report = match_gene_ids(
        interactions.nodes(),
        expression,
        source=source,
        id_map=id_map,
        path=interactions.path,
        aliases=interactions.aliases,
    )
    lookup = pd.Series(mapping, dtype=np.float64)
    i = pd.Series(interactions.source).map(lookup).to_numpy()
    j = pd.Series(interactions.target).map(lookup).to_numpy()
    w = interactions.weight
    mapped = ~(np.isnan(i) | np.isnan(j))
    strong = (w >= min_weight) & (w > 0)
    loops = mapped & (i == j)
    keep = mapped & strong & ~loops
    if not keep.any():
        joining = mapped & ~loops
        if joining.any() and not (w[joining] > 0).any():
            # every edge between two matrix genes weighs 0 (an edge of weight 0 is no edge)
            hint = (
                f"all {int(joining.sum())} edges between two matrix genes have weight 0 (an "
                "edge of weight 0 is no interaction); check the weight column"
            )
        elif joining.any():
            hint = (
                f"lower --interaction-min-weight (the heaviest of them weighs {w[joining].max():g})"
            )
        else:
            hint = "check the id types"
        raise CoverageError(
            f"{'' if interactions.path else f'{source}: '}no interaction with weight >= "
            f"{min_weight:g} joins two matrix genes ({int(mapped.sum())} of "
            f"{interactions.n_edges} edges have both ends in the matrix); {hint}",
            path=interactions.path,
        )
    i, j, w = i[keep].astype(np.int64), j[keep].astype(np.int64), w[keep]
    d = np.zeros(len(i), bool) if ignore_direction else interactions.directed[keep]
    if symmetrize:
        und = ~d
        rows, cols = np.concatenate([i, j[und]]), np.concatenate([j, i[und]])
        w = np.concatenate([w, w[und]])
    else:
        rows, cols = i, j
    matrix = max_merge_edges(rows, cols, w, expression.n_genes)
    directed = bool(d.any())
    if int(loops.sum()):
        log.info(
            "%s: %d edge(s) became self-loops after id mapping and were dropped",
            source,
            int(loops.sum()),
        )
    relation = FeatureRelation(
        matrix,
        expression.genes,
        directed=directed,
        name="interactions",
        provenance={
            "source": interactions.path,
            "edges_read": interactions.n_edges,
            "edges_unmapped": int((~mapped).sum()),
            "edges_below_min_weight": int((mapped & ~strong).sum()),
            "self_loops_after_mapping": int(loops.sum()),
            "edges_kept": int(keep.sum()),
            "nonzeros": int(matrix.nnz),
            "min_weight": float(min_weight),
            "symmetrize": bool(symmetrize),
            "ignore_direction": bool(ignore_direction),
        },
    )
    return relation, report
