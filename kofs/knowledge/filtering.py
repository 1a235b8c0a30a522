r"""Sample similarity on data filtered to chosen genes (book eq. 6.10; Pathway-FILT, Leukemia-FILT).

``X_F = Pi_F(X)`` keeps the columns of the genes linked to chosen functions, pathways or
interactions; any sample similarity is then built on ``X_F``. The similarity only *defines* the
sample structure: the ranker fed with it (e.g. ``spec-phi2``) still ranks **all** genes of the
matrix (ALGORITHMS.md §7.2).

Helpers select the genes: :func:`genes_of_terms` (genes annotated to chosen terms of a
FeatureFunctions, e.g. KEGG leukemia pathways) and :func:`genes_of_relation` (genes with at least
one interaction). :func:`restrict_relation` keeps the edges among chosen genes (GO-CAN-MAH: the
GO relation restricted to the genes of terms of known relevant genes).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

import numpy as np
import scipy.sparse as sp

from kofs.errors import ParameterError
from kofs.knowledge.functions import gene_mask
from kofs.knowledge.similarity import sample_similarity
from kofs.types import Expression, FeatureFunctions, FeatureRelation, SampleSimilarity

__all__ = ["filtered_similarity", "genes_of_terms", "genes_of_relation", "restrict_relation"]

log = logging.getLogger(__name__)


def genes_of_terms(
    functions: FeatureFunctions,
    terms: Iterable[str] | None = None,
    *,
    option: str = "terms",
    among: str | None = None,
) -> np.ndarray:
    """Boolean mask (m,) of the genes annotated to any of ``terms`` (ids or names; None = all).

    Raises ParameterError when a term is unknown, naming it as ``option`` (how the terms were
    given, e.g. ``--go-term-ids``) and saying which terms there are as ``among`` (default: the
    number of terms of ``functions``).
    """
    V = functions.incidence
    if terms is None:
        cols = np.arange(V.shape[1])
    else:
        by_id = {t: i for i, t in enumerate(functions.terms)}
        by_name = {t: i for i, t in enumerate(functions.term_names)}
        cols = []
        for t in terms:
            idx = by_id.get(str(t), by_name.get(str(t)))
            if idx is None:
                where = among or f"among the {len(functions.terms)} terms of {functions.name!r}"
                raise ParameterError(f"{option} {t}: not {where}; give term ids or names")
            cols.append(idx)
        cols = np.asarray(cols, dtype=int)
    sub = V[:, cols]
    return np.diff(sub.tocsr().indptr) > 0


def genes_of_relation(relation: FeatureRelation) -> np.ndarray:
    """Boolean mask (m,) of the genes with at least one edge to another gene."""
    W = relation.matrix.tolil()
    W.setdiag(0)
    W = W.tocsr()
    W.eliminate_zeros()
    return (np.diff(W.indptr) > 0) | (np.diff(W.tocsc().indptr) > 0)


def restrict_relation(relation: FeatureRelation, gene_index: Any) -> FeatureRelation:
    """The relation with only the edges whose two ends are among the selected genes.

    Parameters
    ----------
    relation : FeatureRelation
    gene_index : bool mask (m,), integer positions or gene ids (matched exactly)

    Returns
    -------
    FeatureRelation over the same genes (the others become isolated).
    """
    mask = gene_mask(relation.genes, gene_index, what="restricted relation")
    keep = sp.diags(mask.astype(np.float64))
    W = (keep @ relation.matrix @ keep).tocsr()
    W.eliminate_zeros()
    prov = {**relation.provenance, "restricted_to_genes": int(mask.sum())}
    return FeatureRelation(
        W,
        relation.genes,
        directed=relation.directed,
        name=f"{relation.name}-restricted",
        provenance=prov,
    )


def filtered_similarity(
    expression: Expression,
    gene_index: Any,
    *,
    kind: str = "rbf",
    name: str | None = None,
    what: str = "filtered similarity",
    **params: Any,
) -> SampleSimilarity:
    """Sample similarity built on the expression restricted to some genes (eq. 6.10).

    Parameters
    ----------
    expression : Expression
        n samples x m genes.
    gene_index : bool mask (m,), integer positions or gene ids
        The genes that define the similarity (ids not in the matrix are ignored).
    kind : str
        Any kind of :func:`kofs.knowledge.similarity.sample_similarity` (default ``"rbf"``,
        bandwidth delta^2 = median squared distance / 2 on the filtered data).
    name : str, optional
        Name of the result (default ``"filtered-<kind>"``).
    what : str
        What the genes are, for messages (the source they come from).
    **params
        Passed to the similarity builder (``delta2``, ``k``, ...).

    Returns
    -------
    SampleSimilarity
        Aligned to ``expression.samples``; provenance records the genes kept.

    Raises
    ------
    ParameterError
        Fewer than 2 genes selected, or a bad similarity kind/parameter.
    """
    mask = gene_mask(expression, gene_index, what=what)
    idx = np.flatnonzero(mask)
    if idx.size < 2:
        raise ParameterError(
            f"{what}: {idx.size} gene of the matrix selected, at least 2 needed; "
            "choose more functions/pathways or check the gene identifiers"
        )
    sub = expression.subset_genes(idx)
    if not np.any(np.ptp(sub.values, axis=0) > 0):
        raise ParameterError(
            f"{what}: all {idx.size} selected genes are constant; choose other genes"
        )
    base = sample_similarity(sub, kind, **params)
    log.info("filtered %s similarity on %d of %d genes", kind, idx.size, expression.n_genes)
    prov = {
        **base.provenance,
        "filtered": True,
        "n_genes_kept": int(idx.size),
        "genes_kept": [expression.genes[i] for i in idx[:50]],
    }
    return SampleSimilarity(
        base.matrix, expression.samples, name=name or f"filtered-{kind}", provenance=prov
    )
