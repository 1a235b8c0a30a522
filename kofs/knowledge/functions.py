r"""Term relevance ``r_t^fun`` of a :class:`~kofs.types.FeatureFunctions` (book eq. 6.15).

* :func:`with_relevance` sets expert-given relevance.
* :func:`learn_relevance` uses known relevant genes: ``r_t = M_rel / M_all`` (the book's
  experiment, section 6.4.2: cancer-related genes annotated to t over all genes annotated to t,
  counted among the matrix's genes).
* :func:`learn_relevance_from_data` (ours, no relevant genes needed): the same ratio with the
  "relevant" genes replaced by the genes whose data score lies in the top ``top_fraction``
  (default: variance, top 10 %) -- a term is relevant when it is enriched in highly variable
  genes; or (``statistic="mean"``) the mean percentile of the term's genes' scores.
* :func:`relevant_genes_functions` makes a one-term FeatureFunctions marking the known relevant
  genes (relevance 1), the starting vector of relevance propagation from known genes.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import scipy.sparse as sp

from kofs.errors import CoverageError, ParameterError
from kofs.io.ids import match_gene_ids
from kofs.types import Expression, FeatureFunctions

__all__ = [
    "with_relevance",
    "learn_relevance",
    "learn_relevance_from_data",
    "relevant_genes_functions",
    "term_relevance_ratio",
    "gene_mask",
]

log = logging.getLogger(__name__)


def term_relevance_ratio(V: Any, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``M_rel / M_all`` per term (0 for a term without genes).

    Parameters
    ----------
    V : sparse matrix of shape (m, T), gene x term incidence (non-zero = annotated)
    mask : bool ndarray of shape (m,), the relevant genes

    Returns
    -------
    ratio : ndarray of shape (T,)
    m_all : ndarray of shape (T,), number of genes per term
    """
    B = sp.csr_matrix(V, dtype=np.float64)
    B = B.copy()
    B.data = (B.data != 0).astype(np.float64)
    m_all = np.asarray(B.sum(axis=0)).ravel()
    m_rel = np.asarray(B.T @ mask.astype(np.float64)).ravel()
    ratio = np.zeros_like(m_all)
    ok = m_all > 0
    ratio[ok] = m_rel[ok] / m_all[ok]
    return ratio, m_all


def gene_mask(
    genes: Sequence[str] | Expression, selection: Any, *, what: str = "genes"
) -> np.ndarray:
    """A boolean mask over the matrix's genes from a mask, integer positions or gene ids.

    Parameters
    ----------
    genes : Expression or sequence of str
        With an Expression, gene ids are matched by :func:`kofs.io.ids.match_gene_ids` (matrix
        ids and annotation columns such as symbol/entrez); with plain ids, exactly.
    selection : bool mask (m,), integer positions or gene ids
        Ids not in the matrix are ignored.
    what : str
        Name used in messages.

    Raises
    ------
    ParameterError
        Bad mask length or position; nothing selected.
    CoverageError
        None of the given ids is a gene of the matrix.
    """
    ids = genes.genes if isinstance(genes, Expression) else tuple(genes)
    m = len(ids)
    sel = selection if isinstance(selection, np.ndarray) else np.asarray(list(selection))
    mask = np.zeros(m, dtype=bool)
    if sel.size == 0:
        raise ParameterError(f"{what}: no gene given")
    if sel.dtype == bool:
        if sel.shape != (m,):
            raise ParameterError(f"{what}: a boolean mask needs {m} values, got {sel.size}")
        mask = sel.copy()
    elif np.issubdtype(sel.dtype, np.integer):
        if sel.min() < 0 or sel.max() >= m:
            raise ParameterError(f"{what}: gene positions must lie in [0, {m - 1}]")
        mask[sel] = True
    else:
        if isinstance(genes, Expression):
            hits, _ = match_gene_ids([str(g) for g in sel], genes, source=what, require=False)
            mask[list(hits.values())] = True
        else:
            index = {g: i for i, g in enumerate(ids)}
            mask[[index[str(g)] for g in sel if str(g) in index]] = True
        if not mask.any():
            raise CoverageError(
                f"{what}: none of the {sel.size} given gene ids is in the matrix; "
                "check the identifiers (or give an id map)"
            )
    if not mask.any():
        raise ParameterError(f"{what}: no gene selected")
    return mask


def with_relevance(
    functions: FeatureFunctions, relevance: np.ndarray | Mapping[str, float]
) -> FeatureFunctions:
    """A copy of ``functions`` with term relevance ``r_t^fun`` set.

    Parameters
    ----------
    functions : FeatureFunctions
    relevance : ndarray of shape (T,) or mapping term id -> value
        Finite values; in a mapping, terms not listed get 0 and terms not in ``functions``
        (e.g. dropped by a size filter) are ignored with a warning; none known is an error.
    """
    if isinstance(relevance, Mapping):
        index = {t: i for i, t in enumerate(functions.terms)}
        unknown = [t for t in relevance if t not in index]
        if len(unknown) == len(relevance):
            raise CoverageError(
                f"term relevance: none of the {len(relevance)} terms is in functions "
                f"{functions.name!r}; check the term ids (e.g. GO:0006915, hsa04110)"
            )
        if unknown:
            log.warning(
                "term relevance: %d of %d terms (e.g. %r) not in functions %r; ignored",
                len(unknown),
                len(relevance),
                unknown[0],
                functions.name,
            )
        r = np.zeros(len(functions.terms))
        for t, v in relevance.items():
            if t in index:
                try:
                    r[index[t]] = float(v)
                except (TypeError, ValueError):
                    raise ParameterError(
                        f"term relevance: value {v!r} of term {t!r} is not a number"
                    ) from None
    else:
        r = np.asarray(relevance, dtype=np.float64)
        if r.shape != (len(functions.terms),):
            raise ParameterError(
                f"term relevance: {r.size} values for {len(functions.terms)} terms of "
                f"functions {functions.name!r}"
            )
    if not np.all(np.isfinite(r)):
        raise ParameterError("term relevance: values must be finite numbers")
    prov = {**functions.provenance, "relevance": "given"}
    return replace(functions, relevance=r, provenance=prov)


def learn_relevance(
    functions: FeatureFunctions, relevant_mask: Any, *, expression: Expression | None = None
) -> FeatureFunctions:
    """Term relevance ``M_rel / M_all`` from known relevant genes (book section 6.4.2).

    Parameters
    ----------
    functions : FeatureFunctions
    relevant_mask : bool mask (m,), integer positions or gene ids of the known relevant genes
    expression : Expression, optional
        The matrix ``functions`` is aligned to; when given, gene ids are also matched through
        its annotation columns (symbol, entrez, ...).

    Returns
    -------
    FeatureFunctions with ``relevance`` set (0 for terms without genes).
    """
    target = functions.genes
    if expression is not None:
        if expression.genes != tuple(functions.genes):
            raise ParameterError(
                f"term relevance: functions {functions.name!r} are not aligned to the matrix"
            )
        target = expression
    mask = gene_mask(target, relevant_mask, what="relevant genes")
    ratio, _ = term_relevance_ratio(functions.incidence, mask)
    prov = {**functions.provenance, "relevance": "M_rel/M_all", "n_relevant": int(mask.sum())}
    return replace(functions, relevance=ratio, provenance=prov)


def _gene_scores(X: np.ndarray, score: str) -> np.ndarray:
    if score == "variance":
        s = np.nanvar(X, axis=0)
    elif score == "mad":
        med = np.nanmedian(X, axis=0)
        s = np.nanmedian(np.abs(X - med), axis=0)
    else:
        raise ParameterError(f"term relevance: score must be 'variance' or 'mad', got {score!r}")
    return np.where(np.isfinite(s), s, -np.inf)


def learn_relevance_from_data(
    functions: FeatureFunctions,
    expression: Expression,
    *,
    score: str = "variance",
    gene_scores: np.ndarray | None = None,
    statistic: str = "enrichment",
    top_fraction: float = 0.1,
) -> FeatureFunctions:
    """Data-driven term relevance when no relevant genes are known (ours).

    Parameters
    ----------
    functions : FeatureFunctions aligned to ``expression``
    expression : Expression
    score : {"variance", "mad"}
        Per-gene data score (higher = more informative); ignored with ``gene_scores``.
    gene_scores : ndarray of shape (m,), optional
        Any per-gene score, higher better (e.g. a SPEC or Laplacian ranking's scores, negated
        when lower is better); NaN counts as lowest.
    statistic : {"enrichment", "mean"}
        ``"enrichment"`` (default): ``M_top / M_all`` where the top genes are the
        ``ceil(top_fraction * m)`` best-scored ones (ties at the cut included) -- the book's
        ratio with "relevant" replaced by "top-scored". ``"mean"``: mean over the term's genes
        of the gene's score percentile in [0, 1] (average ranks).
    top_fraction : float in (0, 1], default 0.1
    """
    if tuple(functions.genes) != expression.genes:
        raise ParameterError(
            f"term relevance: functions {functions.name!r} are not aligned to the matrix"
        )
    m = expression.n_genes
    if gene_scores is None:
        s = _gene_scores(expression.values, score)
    else:
        s = np.asarray(gene_scores, dtype=np.float64)
        if s.shape != (m,):
            raise ParameterError(f"term relevance: gene_scores needs {m} values, got {s.size}")
        s = np.where(np.isfinite(s), s, -np.inf)
    if statistic == "enrichment":
        if not 0.0 < top_fraction <= 1.0:
            raise ParameterError(
                f"term relevance: top_fraction must lie in (0, 1], got {top_fraction!r}"
            )
        k = max(1, int(np.ceil(top_fraction * m)))
        cut = np.sort(s)[::-1][k - 1]
        mask = (s >= cut) & np.isfinite(s)
        r, _ = term_relevance_ratio(functions.incidence, mask)
    elif statistic == "mean":
        from scipy.stats import rankdata

        pct = (rankdata(s) - 1.0) / max(m - 1, 1)
        B = sp.csr_matrix(functions.incidence, dtype=np.float64).copy()
        B.data = (B.data != 0).astype(np.float64)
        cnt = np.asarray(B.sum(axis=0)).ravel()
        tot = np.asarray(B.T @ pct).ravel()
        r = np.where(cnt > 0, tot / np.maximum(cnt, 1), 0.0)
    else:
        raise ParameterError(
            f"term relevance: statistic must be 'enrichment' or 'mean', got {statistic!r}"
        )
    prov = {
        **functions.provenance,
        "relevance": f"data:{statistic}",
        "score": "given" if gene_scores is not None else score,
        "top_fraction": top_fraction,
    }
    return replace(functions, relevance=r, provenance=prov)


def relevant_genes_functions(
    expression: Expression, gene_index: Any, *, name: str = "relevant_genes"
) -> FeatureFunctions:
    """One-term FeatureFunctions marking known relevant genes, relevance 1.

    Parameters
    ----------
    expression : Expression
    gene_index : bool mask (m,), integer positions or gene ids of the relevant genes
    """
    mask = gene_mask(expression, gene_index, what="relevant genes")
    inc = sp.csr_matrix(mask.astype(np.float64)[:, None])
    return FeatureFunctions(
        inc,
        expression.genes,
        ("known_relevant",),
        term_names=("known relevant genes",),
        relevance=np.ones(1),
        name=name,
        provenance={"builder": "relevant_genes", "n_relevant": int(mask.sum())},
    )
