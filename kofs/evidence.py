"""Per-gene evidence behind the knowledge lists: the most relevant GO terms and pathways of a
gene and its strongest neighbours in the gene graphs (the ``evidence`` column of ranking.tsv).

Each knowledge source says what it contributes (``SourceSpec.evidence``, built from
:func:`top_terms` and :func:`top_neighbours`); :func:`gene_evidence` joins the parts."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from kofs.types import FeatureFunctions, FeatureRelation

TOP = 3


def _id_rank(ids: Sequence[str]) -> np.ndarray:
    """Position of each id in sorted order (a tie-breaking key independent of input order)."""
    key = np.empty(len(ids), dtype=np.int64)
    key[sorted(range(len(ids)), key=ids.__getitem__)] = np.arange(len(ids))
    return key


def top_terms(functions: FeatureFunctions, top: int = TOP) -> list[str]:
    """Per gene, its ``top`` terms of highest relevance (> 0), as "name (id)"."""
    V = sp.csr_matrix(functions.incidence)
    rel = functions.relevance if functions.relevance is not None else np.ones(len(functions.terms))
    key = _id_rank(functions.terms)  # ties by term id, not by the file's term order
    out = []
    for i in range(V.shape[0]):
        cols = V.indices[V.indptr[i] : V.indptr[i + 1]]
        cols = cols[rel[cols] > 0]
        if cols.size == 0:
            out.append("")
            continue
        best = cols[np.lexsort((key[cols], -rel[cols]))][:top]
        out.append(
            "; ".join(
                functions.terms[j]
                if functions.term_names[j] == functions.terms[j]
                else f"{functions.term_names[j]} ({functions.terms[j]})"
                for j in best
            )
        )
    return out


def top_neighbours(relation: FeatureRelation, top: int = TOP) -> list[str]:
    """Per gene, its ``top`` strongest neighbours (ids, comma-separated)."""
    W = sp.csr_matrix(relation.matrix)
    if not relation.directed:
        W = W.maximum(W.T).tocsr()
    key = _id_rank(relation.genes)  # ties by gene id, not by the matrix's gene order
    out = []
    for i in range(W.shape[0]):
        cols = W.indices[W.indptr[i] : W.indptr[i + 1]]
        w = W.data[W.indptr[i] : W.indptr[i + 1]]
        keep = cols != i
        cols, w = cols[keep], w[keep]
        if cols.size == 0:
            out.append("")
            continue
        best = cols[np.lexsort((key[cols], -w))][:top]
        out.append(",".join(relation.genes[j] for j in best))
    return out


def gene_evidence(
    parts: Sequence[tuple[float, str, Sequence[str]]], genes: Sequence[str]
) -> dict[str, str] | None:
    """Evidence strings per gene from ``(order, label, per-gene text)`` parts (None if none)."""
    parts = sorted(parts, key=lambda p: p[0])
    if not parts:
        return None
    out = {}
    for i, g in enumerate(genes):
        text = " | ".join(f"{label}: {vals[i]}" for _, label, vals in parts if vals[i])
        if text:
            out[g] = text
    return out
